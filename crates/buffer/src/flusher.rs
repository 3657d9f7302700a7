//! Writing dirty pages back to the store: the background flusher thread, `flush_all`, the
//! write used by eviction, the WAL rule, and poisoning on failure.
//!
//! Owns: [`Flusher`] (thread handle + wake-up), `ensure_wal`, the two write paths
//! (`write_latched_in_place` under an X latch, `write_shared_copy` under an S latch),
//! `flush_all`, `sync_store`.
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
//! high-water mark is left. Each round
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
use crate::frame::{FrameIdx, DIRTY, NO_PAGE, SEALED, VALID};
use crate::pool::BufferPool;
use crate::stats::{bump, drop_one, get};

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
        }
    }

    pub(crate) fn start(
        &self,
        pool: Weak<BufferPool>,
        interval_ms: u64,
    ) -> Result<(), BufferError> {
        if interval_ms == 0 {
            // No background flusher: dirty pages leave only through eviction and `flush_all`.
            return Ok(());
        }
        let ctl = Arc::clone(&self.ctl);
        let interval = Duration::from_millis(interval_ms);
        let handle = std::thread::Builder::new()
            .name("tierdb-flusher".into())
            .spawn(move || run(pool, ctl, interval))
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

    /// The thread's scratch page.
    pub(crate) fn bytes(&self) -> usize {
        PAGE_SIZE + std::mem::size_of::<Ctl>()
    }
}

fn run(pool: Weak<BufferPool>, ctl: Arc<Ctl>, interval: Duration) {
    let Some(mut scratch) = Arena::new(1) else {
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
        pool.flush_round(scratch.scratch_mut(), &mut batch, urgent, &ctl.stop);
    }
}

impl BufferPool {
    /// Writes every page dirty at the time of the call (WAL rule honoured), then syncs the
    /// store. Waits for each dirty page's latch (shared), so the calling thread must hold no
    /// page guard.
    pub fn flush_all(&self) -> Result<(), BufferError> {
        self.check_poison()?;
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
        self.page_written(idx);
        Ok(true)
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
        batch.clear();
        for (i, f) in self.frames.iter().enumerate() {
            if f.flags() & DIRTY != 0 {
                let rec = f.rec_lsn.load(Ordering::Relaxed);
                if pressed || rec < below {
                    batch.push((rec, i as FrameIdx));
                }
            }
        }
        batch.sort_unstable();
        let mut wrote = 0u64;
        for &(rec, idx) in batch.iter() {
            if stop.load(Ordering::Acquire) {
                break;
            }
            if get(&self.counters.dirty) <= target && rec >= below {
                break;
            }
            match self.write_shared_copy(idx, scratch, false) {
                Ok(true) => wrote += 1,
                Ok(false) => {}
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
