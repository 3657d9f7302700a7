//! Writing dirty pages back to the store: the background flusher thread, `flush_all`, the
//! write used by eviction, the WAL rule, and poisoning on failure.
//!
//! Owns: [`Flusher`] (thread handle + wake-up), `ensure_wal`, the write paths
//! (`write_latched_in_place` under an X latch, `write_shared_copy` under an S latch,
//! `write_run`: a page and its dirty neighbours in the data file with one store write; for a
//! store that `writes_anywhere`, `write_gathered`: the next dirty pages of the flusher's
//! order, and `write_victim_batch`: an evicting thread's victim with the dirty cold frames
//! ahead of it — each one `write_batch`), `flush_all`, `sync_store`.
//!
//! Must never: write a page before `WalGate::flush_to(page LSN)` returned Ok; write unsealed
//! bytes; mark a page clean before its write completed; write anything once the pool is
//! poisoned; keep the pool alive (the thread holds only a `Weak`).
//!
//! Lock order: frame latch (S: try-lock in the background, blocking in `flush_all`; X: held
//! by the evicting caller) → WalGate / PageStore calls. The flusher-control mutex is a leaf
//! taken only to sleep, wake or stop; the thread holds no frame latch while it sleeps.
//!
//! Rounds: every `flusher_interval_ms`, write the dirty frames whose `rec_lsn` is below the
//! flush target set by the checkpointer (`set_flush_target`), oldest first; when dirty frames
//! exceed the high-water mark (or an evictor found no clean victim), write until 7/8 of the
//! high-water mark is left, least recently changed (`mod_lsn`) first. Each write takes the
//! dirty pages adjacent to the chosen one along (`write_run`, up to `RUN_MAX` pages), or, for
//! a store that writes anywhere, the next dirty pages of that order (`write_gathered`). Each round
//! that wrote something ends with `PageStore::sync`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::lock_api::RawRwLock as _;
use parking_lot::{Condvar, Mutex};
use tierdb_page::{page_lsn, seal, Lsn, PageId, PAGE_SIZE};

use crate::arena::Arena;
use crate::error::BufferError;
use crate::frame::{FrameIdx, SharedToken, DIRTY, HOT, NO_PAGE, SEALED, VALID};
use crate::pool::BufferPool;
use crate::stats::{bump, drop_one, get};

/// Sort-key bit of pages written for pressure (ordered by last change) rather than for the
/// checkpoint (ordered by rec_lsn); LSNs stay far below 2^63.
const CHANGE_ORDER: u64 = 1 << 63;

/// Most pages the flusher writes with one store write: a dirty page goes out together with
/// the dirty pages adjacent to it in the data file (256 KiB at most), so a disk capped in
/// IOPS takes several page write-backs per I/O.
pub(crate) const RUN_MAX: usize = 16;

/// How far ahead of its victim (in run lengths) an evicting thread looks for dirty cold
/// frames to write with it.
const GATHER_SPAN: usize = 32;

/// The rec_lsns of pages written but not yet covered by a `PageStore::sync`. Without it a
/// checkpoint could drop redo for a page whose write completed but is not durable.
///
/// Lock order: `serial` (held across `PageStore::sync`, serialises syncs) → `floor` (leaf,
/// held for a few instructions; also taken alone by page writes and `min_rec_lsn`).
#[derive(Default)]
pub(crate) struct SyncFloor {
    serial: Mutex<()>,
    floor: Mutex<Floor>,
}

#[derive(Clone, Copy)]
struct Floor {
    /// Min rec_lsn of pages written since the last sync began (`u64::MAX`: none).
    unsynced: u64,
    /// Min rec_lsn of pages the running sync is covering (`u64::MAX`: none).
    syncing: u64,
}

impl Default for Floor {
    fn default() -> Floor {
        Floor {
            unsynced: u64::MAX,
            syncing: u64::MAX,
        }
    }
}

impl SyncFloor {
    fn note(&self, rec_lsn: u64) {
        let mut f = self.floor.lock();
        f.unsynced = f.unsynced.min(rec_lsn);
    }

    /// Called with `serial` held, right before `PageStore::sync`.
    fn begin(&self) {
        let mut f = self.floor.lock();
        f.syncing = f.syncing.min(f.unsynced);
        f.unsynced = u64::MAX;
    }

    /// Called with `serial` held, after `PageStore::sync` returned.
    fn end(&self, ok: bool) {
        let mut f = self.floor.lock();
        if !ok {
            f.unsynced = f.unsynced.min(f.syncing);
        }
        f.syncing = u64::MAX;
    }

    /// Smallest rec_lsn of a written-but-not-yet-durable page.
    pub(crate) fn floor(&self) -> Option<u64> {
        let f = *self.floor.lock();
        let m = f.unsynced.min(f.syncing);
        (m != u64::MAX).then_some(m)
    }
}

struct Ctl {
    stop: AtomicBool,
    /// An urgent round was requested and not yet started (avoids taking the mutex on every
    /// nudge).
    nudged: AtomicBool,
    urgent: Mutex<bool>,
    cv: Condvar,
}

pub(crate) struct Flusher {
    ctl: Arc<Ctl>,
    handle: Mutex<Option<JoinHandle<()>>>,
    /// Pages of the thread's scratch run (0: no thread).
    run_pages: std::sync::atomic::AtomicUsize,
}

impl Flusher {
    pub(crate) fn new() -> Flusher {
        Flusher {
            ctl: Arc::new(Ctl {
                stop: AtomicBool::new(false),
                nudged: AtomicBool::new(false),
                urgent: Mutex::new(false),
                cv: Condvar::new(),
            }),
            handle: Mutex::new(None),
            run_pages: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Starts the thread for a pool of `frames` frames; its write runs are at most
    /// `frames / 64` pages (1..=`RUN_MAX`), so the scratch stays small against the pool.
    pub(crate) fn start(
        &self,
        pool: Weak<BufferPool>,
        interval_ms: u64,
        frames: usize,
    ) -> Result<(), BufferError> {
        if interval_ms == 0 {
            // No background flusher: dirty pages leave only through eviction and `flush_all`.
            return Ok(());
        }
        let ctl = Arc::clone(&self.ctl);
        let interval = Duration::from_millis(interval_ms);
        let run_pages = run_pages(frames);
        self.run_pages.store(run_pages, Ordering::Relaxed);
        let handle = std::thread::Builder::new()
            .name("tierdb-flusher".into())
            .spawn(move || run(pool, ctl, interval, run_pages))
            .map_err(|e| BufferError::Setup(format!("cannot start the flusher thread: {e}")))?;
        *self.handle.lock() = Some(handle);
        Ok(())
    }

    /// Asks for an urgent round (dirty above high water, or no clean victim found). Returns at
    /// once; a no-op without a flusher thread.
    pub(crate) fn nudge(&self) {
        if !self.ctl.nudged.swap(true, Ordering::AcqRel) {
            *self.ctl.urgent.lock() = true;
            self.ctl.cv.notify_one();
        }
    }

    /// Stops the thread and waits for it (unless called from the thread itself, which
    /// happens when the flusher drops the last `Arc` of the pool).
    pub(crate) fn shutdown(&self) {
        self.ctl.stop.store(true, Ordering::Release);
        {
            let _g = self.ctl.urgent.lock();
            self.ctl.cv.notify_all();
        }
        let handle = self.handle.lock().take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() && h.join().is_err() {
                tracing::error!("buffer pool flusher thread panicked");
            }
        }
    }

    /// The thread's scratch run.
    pub(crate) fn bytes(&self) -> usize {
        self.run_pages.load(Ordering::Relaxed) * PAGE_SIZE + std::mem::size_of::<Ctl>()
    }
}

/// Pages of one write run in a pool of `frames` frames: `frames / 64`, 1..=`RUN_MAX`, so the
/// scratch stays small against the pool.
pub(crate) fn run_pages(frames: usize) -> usize {
    (frames / 64).clamp(1, RUN_MAX)
}

fn run(pool: Weak<BufferPool>, ctl: Arc<Ctl>, interval: Duration, run_pages: usize) {
    let Some(mut scratch) = Arena::new(run_pages) else {
        tracing::error!("flusher: cannot allocate its scratch page; background flushing is off");
        return;
    };
    let mut batch: Vec<(u64, FrameIdx)> = Vec::new();
    loop {
        let urgent = {
            let mut urgent = ctl.urgent.lock();
            if !ctl.stop.load(Ordering::Acquire) && !*urgent {
                ctl.cv.wait_for(&mut urgent, interval);
            }
            if ctl.stop.load(Ordering::Acquire) {
                return;
            }
            ctl.nudged.store(false, Ordering::Release);
            std::mem::take(&mut *urgent)
        };
        let Some(pool) = pool.upgrade() else { return };
        pool.flush_round(scratch.all_mut(), &mut batch, urgent, &ctl.stop);
    }
}

/// A page in a batch being written, and how it is latched.
struct Member {
    page: u64,
    idx: FrameIdx,
    held: Held,
}

enum Held {
    /// Shared latch taken by the batch's writer; `true`: pinned by it too.
    Shared(SharedToken, bool),
    /// X latch held by the caller (an evicting thread's victim).
    Caller,
}

impl BufferPool {
    /// Writes every page dirty at the time of the call (WAL rule honoured; in batches when
    /// the store writes anywhere), then syncs the store. Waits for each dirty page's latch (shared), so the calling thread must hold no
    /// page guard.
    pub fn flush_all(&self) -> Result<(), BufferError> {
        self.check_poison()?;
        if self.store.writes_anywhere() {
            // Batches first (latches tried), then whatever was busy, page by page.
            let run_pages = run_pages(self.frames.len());
            let mut run = Arena::new(run_pages)
                .ok_or_else(|| BufferError::Setup("cannot allocate a scratch run".into()))?;
            let order: Vec<(u64, FrameIdx)> = (0..self.frames.len())
                .filter(|&i| self.frames[i].flags() & DIRTY != 0)
                .map(|i| (0, i as FrameIdx))
                .collect();
            let mut at = 0;
            while at < order.len() {
                self.write_gathered(&order, &mut at, run.all_mut())?;
            }
        }
        let mut scratch = Arena::new(1)
            .ok_or_else(|| BufferError::Setup("cannot allocate a scratch page".into()))?;
        for idx in 0..self.frames.len() {
            if self.frames[idx].flags() & DIRTY != 0 {
                self.write_shared_copy(idx as FrameIdx, scratch.scratch_mut(), true)?;
            }
        }
        self.sync_store()
    }

    /// `PageStore::sync`; a failure poisons the pool.
    /// Pages whose writes completed before this call are durable once it returns Ok, and
    /// stop holding back `min_rec_lsn`.
    pub fn sync_store(&self) -> Result<(), BufferError> {
        self.check_poison()?;
        let _serial = self.sync_floor.serial.lock();
        self.sync_floor.begin();
        match self.store.sync() {
            Ok(()) => {
                self.sync_floor.end(true);
                Ok(())
            }
            Err(source) => {
                self.sync_floor.end(false);
                self.poison_with(format!("data file sync failed: {source}"));
                Err(BufferError::Sync { source })
            }
        }
    }

    fn poison_with(&self, msg: String) {
        tracing::error!(%msg, "buffer pool poisoned: no further page writes");
        let _ = self.poison.set(msg);
    }

    fn write_failed(&self, id: PageId, source: std::io::Error) -> BufferError {
        self.poison_with(format!("write of page {id} failed: {source}"));
        BufferError::Io { page: id, source }
    }

    /// The WAL rule: the log is durable up to `lsn` before a page with that LSN is written.
    pub(crate) fn ensure_wal(&self, lsn: Lsn) -> Result<(), BufferError> {
        if lsn.0 <= self.wal_durable.load(Ordering::Acquire) {
            return Ok(());
        }
        self.wal.flush_to(lsn).map_err(BufferError::Wal)?;
        self.wal_durable.fetch_max(lsn.0, Ordering::AcqRel);
        Ok(())
    }

    /// A store write of frame `idx` (latched S or X, dirty) completed: until a sync covers
    /// it, its rec_lsn moves to the sync floor (recorded BEFORE `DIRTY` is cleared, so
    /// `min_rec_lsn` always finds it in one place or the other); then the frame is clean.
    fn page_written(&self, idx: FrameIdx) {
        let f = self.frame(idx);
        self.sync_floor.note(f.rec_lsn.load(Ordering::Relaxed));
        if f.flags.fetch_and(!DIRTY, Ordering::AcqRel) & DIRTY != 0 {
            drop_one(&self.counters.dirty);
        }
        bump(&self.counters.pages_flushed);
    }

    /// Eviction's write: the caller holds frame `idx`'s X latch and the frame is dirty.
    pub(crate) fn write_latched_in_place(
        &self,
        idx: FrameIdx,
        id: PageId,
    ) -> Result<(), BufferError> {
        self.check_poison()?;
        // SAFETY: X latch held by the caller.
        let buf = unsafe { self.page_mut(idx) };
        self.ensure_wal(page_lsn(buf))?;
        seal(buf);
        self.frame(idx).flags.fetch_or(SEALED, Ordering::AcqRel);
        self.store
            .write_page(id, buf)
            .map_err(|e| self.write_failed(id, e))?;
        bump(&self.counters.write_ios);
        self.page_written(idx);
        Ok(())
    }

    /// The flusher's write: latch frame `idx` shared (blocking if `wait`, else try), copy,
    /// seal the copy, WAL rule, write, mark clean. Readers go on meanwhile; writers wait.
    /// `Ok(false)`: nothing written (latch busy, or the page is not dirty any more).
    pub(crate) fn write_shared_copy(
        &self,
        idx: FrameIdx,
        scratch: &mut [u8],
        wait: bool,
    ) -> Result<bool, BufferError> {
        let f = self.frame(idx);
        let s = if wait {
            f.latch.lock_shared()
        } else {
            match f.latch.try_lock_shared() {
                Some(s) => s,
                None => return Ok(false),
            }
        };
        let r = self.write_shared_copy_latched(idx, scratch);
        // SAFETY: `s` is this thread's shared acquisition.
        unsafe { f.latch.unlock_shared(s) };
        r
    }

    fn write_shared_copy_latched(
        &self,
        idx: FrameIdx,
        scratch: &mut [u8],
    ) -> Result<bool, BufferError> {
        self.check_poison()?;
        let f = self.frame(idx);
        let page = f.page.load(Ordering::Acquire);
        if page == NO_PAGE || f.flags() & (VALID | DIRTY) != (VALID | DIRTY) {
            return Ok(false);
        }
        let id = PageId(page);
        // SAFETY: S latch held.
        scratch.copy_from_slice(unsafe { self.page(idx) });
        seal(scratch);
        self.ensure_wal(page_lsn(scratch))?;
        self.store
            .write_page(id, scratch)
            .map_err(|e| self.write_failed(id, e))?;
        bump(&self.counters.write_ios);
        self.page_written(idx);
        Ok(true)
    }

    /// The flusher's write: frame `idx` (try-latched shared; skipped if busy or not dirty)
    /// together with the dirty pages next to it in the data file — each pinned and
    /// try-latched shared, the run stopping at the first page that is not resident, not
    /// dirty or busy — copied into `run` (`RUN_MAX` pages), sealed, and written with one
    /// store write once the log is durable up to the run's highest page LSN. Returns the
    /// pages written. Latches are only tried, so holding several cannot deadlock.
    pub(crate) fn write_run(&self, idx: FrameIdx, run: &mut [u8]) -> Result<u64, BufferError> {
        let f = self.frame(idx);
        let Some(s) = f.latch.try_lock_shared() else {
            return Ok(0);
        };
        let page = f.page.load(Ordering::Acquire);
        if page == NO_PAGE || f.flags() & (VALID | DIRTY) != (VALID | DIRTY) {
            // SAFETY: `s` is this thread's shared acquisition.
            unsafe { f.latch.unlock_shared(s) };
            return Ok(0);
        }
        let max = (run.len() / PAGE_SIZE).max(1);
        let mut members: Vec<Member> = Vec::with_capacity(max);
        members.push(Member {
            page,
            idx,
            held: Held::Shared(s, false),
        });
        for dir in [1i64, -1] {
            let mut next = page;
            while members.len() < max {
                next = match next.checked_add_signed(dir) {
                    Some(n) if n != NO_PAGE => n,
                    _ => break,
                };
                match self.latch_dirty_neighbour(PageId(next)) {
                    Some((nidx, token)) => members.push(Member {
                        page: next,
                        idx: nidx,
                        held: Held::Shared(token, true),
                    }),
                    None => break,
                }
            }
        }
        members.sort_unstable_by_key(|m| m.page);
        self.write_members(members, run)
    }

    /// Try-latches (shared) frame `idx` if it holds a valid dirty page (no pin: the latch
    /// alone keeps the page from being evicted).
    fn latch_dirty_frame(&self, idx: FrameIdx) -> Option<Member> {
        let f = self.frame(idx);
        if f.flags() & (VALID | DIRTY) != (VALID | DIRTY) {
            return None;
        }
        let token = f.latch.try_lock_shared()?;
        let page = f.page.load(Ordering::Acquire);
        if page != NO_PAGE && f.flags() & (VALID | DIRTY) == (VALID | DIRTY) {
            return Some(Member {
                page,
                idx,
                held: Held::Shared(token, false),
            });
        }
        // SAFETY: `token` is this thread's shared acquisition.
        unsafe { f.latch.unlock_shared(token) };
        None
    }

    /// The flusher's write for a store that writes any pages together: the dirty frames of
    /// `order` (the round's order) from `*at` on, try-latched shared, up to a run's worth,
    /// written with one `write_batch`. Advances `*at` past the frames it looked at.
    fn write_gathered(
        &self,
        order: &[(u64, FrameIdx)],
        at: &mut usize,
        run: &mut [u8],
    ) -> Result<u64, BufferError> {
        let max = (run.len() / PAGE_SIZE).max(1);
        let mut members: Vec<Member> = Vec::with_capacity(max);
        while *at < order.len() && members.len() < max {
            if let Some(m) = self.latch_dirty_frame(order[*at].1) {
                members.push(m);
            }
            *at += 1;
        }
        if members.is_empty() {
            return Ok(0);
        }
        self.write_members(members, run)
    }

    /// Eviction's write for a store that writes any pages together: the victim `idx` (X
    /// latched by the caller, dirty) and the dirty cold frames the clock hand reaches next
    /// (try-latched shared; they become clean victims for the next misses), with one
    /// `write_batch`. Waits for a batch scratch when all are in use (never single writes:
    /// on an IOPS-capped disk they would crowd out the batches).
    pub(crate) fn write_victim_batch(&self, idx: FrameIdx, id: PageId) -> Result<(), BufferError> {
        if self.batch_scratch.is_empty() {
            return self.write_latched_in_place(idx, id);
        }
        // All busy: wait for one. Its holder only writes (no latch wait), and writing the
        // victim alone would queue one more I/O behind its batch anyway.
        let mut scratch = match self.batch_scratch.iter().find_map(|m| m.try_lock()) {
            Some(s) => s,
            None => self.batch_scratch[idx as usize % self.batch_scratch.len()].lock(),
        };
        let run = scratch.all_mut();
        let max = (run.len() / PAGE_SIZE).max(1);
        let n = self.frames.len();
        let mut members: Vec<Member> = Vec::with_capacity(max);
        members.push(Member {
            page: id.0,
            idx,
            held: Held::Caller,
        });
        for step in 1..(GATHER_SPAN * max).min(n) {
            if members.len() >= max {
                break;
            }
            let j = ((idx as usize + step) % n) as FrameIdx;
            if self.frame(j).flags() & HOT != 0 {
                continue;
            }
            if let Some(m) = self.latch_dirty_frame(j) {
                members.push(m);
            }
        }
        self.write_members(members, run).map(|_| ())
    }

    /// Writes `members` (each latched: shared by this call's caller or X by the evicting
    /// thread) with one `write_batch` once the log is durable up to their highest page LSN,
    /// marks them clean, and releases the shared latches and pins it took. Returns the pages
    /// written.
    fn write_members(&self, members: Vec<Member>, run: &mut [u8]) -> Result<u64, BufferError> {
        let n = members.len();
        let mut max_lsn = Lsn(0);
        let mut ids = Vec::with_capacity(n);
        for (i, m) in members.iter().enumerate() {
            let dst = &mut run[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
            // SAFETY: every member is latched (S or X) by this thread.
            dst.copy_from_slice(unsafe { self.page(m.idx) });
            seal(dst);
            max_lsn = max_lsn.max(page_lsn(dst));
            ids.push(PageId(m.page));
        }
        let r = self.check_poison().and_then(|()| {
            self.ensure_wal(max_lsn)?;
            self.store
                .write_batch(&ids, &run[..n * PAGE_SIZE])
                .map_err(|e| self.write_failed(ids[0], e))
        });
        if r.is_ok() {
            bump(&self.counters.write_ios);
        }
        for m in members {
            let mf = self.frame(m.idx);
            if r.is_ok() {
                self.page_written(m.idx);
            }
            if let Held::Shared(token, pinned) = m.held {
                // SAFETY: `token` is this thread's shared acquisition of `m.idx`.
                unsafe { mf.latch.unlock_shared(token) };
                if pinned {
                    mf.unpin();
                }
            }
        }
        r.map(|()| n as u64)
    }

    /// Pins and try-latches (shared) page `id` if it is resident, valid and dirty.
    fn latch_dirty_neighbour(&self, id: PageId) -> Option<(FrameIdx, SharedToken)> {
        let idx = self.table.pin(id, &self.frames)?;
        let f = self.frame(idx);
        if f.flags() & (VALID | DIRTY) == (VALID | DIRTY) {
            if let Some(token) = f.latch.try_lock_shared() {
                if f.holds(id.0) && f.flags() & DIRTY != 0 {
                    return Some((idx, token));
                }
                // SAFETY: `token` is this thread's shared acquisition.
                unsafe { f.latch.unlock_shared(token) };
            }
        }
        f.unpin();
        None
    }

    fn flush_round(
        &self,
        scratch: &mut [u8],
        batch: &mut Vec<(u64, FrameIdx)>,
        urgent: bool,
        stop: &AtomicBool,
    ) {
        if self.is_poisoned() {
            return;
        }
        let dirty = get(&self.counters.dirty);
        if dirty == 0 {
            // Eviction writes are not synced one by one; cover them so checkpoints advance.
            if self.sync_floor.floor().is_some() {
                if let Err(error) = self.sync_store() {
                    tracing::warn!(%error, "flusher: sync failed");
                }
            }
            return;
        }
        let high = self.dirty_high_water;
        let pressed = urgent || dirty > high;
        // Without pressure, only pages older than the checkpoint target are written: a page
        // kept dirty absorbs many changes with one write and one full-page redo image.
        let below = self.flush_below.load(Ordering::Acquire);
        if !pressed && below == 0 {
            return;
        }
        // Under pressure, write just below the mark: pages kept dirty absorb more changes.
        let target = if pressed { high - high / 8 } else { 0 };
        // Order: pages the checkpoint waits for (rec_lsn below the target) first, oldest
        // first; then, under pressure, the least recently *changed* pages — a page still
        // being changed would be dirty again right after its write, so it goes last.
        batch.clear();
        for (i, f) in self.frames.iter().enumerate() {
            if f.flags() & DIRTY != 0 {
                let rec = f.rec_lsn.load(Ordering::Relaxed);
                if rec < below {
                    batch.push((rec, i as FrameIdx));
                } else if pressed {
                    let changed = f.mod_lsn.load(Ordering::Relaxed);
                    batch.push((changed | CHANGE_ORDER, i as FrameIdx));
                }
            }
        }
        batch.sort_unstable();
        let anywhere = self.store.writes_anywhere();
        let mut wrote = 0u64;
        let mut at = 0;
        while at < batch.len() {
            let (key, idx) = batch[at];
            if stop.load(Ordering::Acquire) {
                break;
            }
            if get(&self.counters.dirty) <= target && key & CHANGE_ORDER != 0 {
                break;
            }
            let r = if anywhere {
                self.write_gathered(batch, &mut at, scratch)
            } else {
                at += 1;
                self.write_run(idx, scratch)
            };
            match r {
                Ok(n) => wrote += n,
                Err(error) => {
                    tracing::warn!(%error, "flusher: page write failed");
                    break;
                }
            }
        }
        if wrote > 0 {
            if let Err(error) = self.sync_store() {
                tracing::warn!(%error, "flusher: sync failed");
            }
        }
    }
}
