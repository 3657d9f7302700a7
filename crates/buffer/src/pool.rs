//! The buffer pool: construction, the hit and miss paths, page lifecycle (create, discard),
//! and the read-only views (stats, `min_rec_lsn`).
//!
//! Owns: [`BufferPool`], [`PoolConfig`], the fix protocol (lookup → pin → latch → check) and
//! the load protocol (victim → publish → read with no lock but the frame's X latch).
//!
//! Must never: hold a shard lock while waiting for a frame latch, doing I/O or calling out;
//! hand out a frame whose load failed (waiters re-check `holds` after they get the latch);
//! read a page from the store on `create`.
//!
//! Lock order: see the crate docs. In this file: `table.pin` (shard read lock, leaf) is
//! released before `latch.lock_*`; `table.publish` / `table.unmap` (shard write lock, leaf)
//! are called while holding the frame's X latch; the hooks lock is held only to clone the
//! `Arc`.
//!
//! Hit path, in full: shard read lock → hash probe → `pins += 1` → shard unlock → frame latch
//! (S or X) → check the frame still holds the page and is valid → set REF if clear. No
//! global lock, no global atomic.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::lock_api::{RawRwLock as _, RawRwLockDowngrade as _};
use parking_lot::RwLock;
use tierdb_page::{page_lsn, set_page_lsn, verify, Lsn, PageId, PAGE_SIZE};

use crate::arena::Arena;
use crate::error::BufferError;
use crate::evict::Clock;
use crate::flusher::{Flusher, SyncFloor};
use crate::frame::{
    ExclusiveToken, FrameIdx, FrameMeta, SharedToken, DIRTY, HOT, NO_PAGE, SEALED, VALID,
};
use crate::guard::{PageRead, PageWrite};
use crate::seams::{PageStore, TierHooks, WalGate};
use crate::stats::{bump, drop_one, get, Counters, PoolStats};
use crate::table::{PageTable, Publish};

/// Scratch runs for evicting threads' batch writes (see `BufferPool::batch_scratch`).
const BATCH_SCRATCH_RUNS: usize = 2;

/// Smallest pool, whatever `size_bytes` says.
pub const MIN_FRAMES: u64 = 16;

/// Buffer pool settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// DRAM budget for page frames; frames = `size_bytes / PAGE_SIZE` (at least 16).
    pub size_bytes: u64,
    /// Background flusher period; 0 = no flusher thread (dirty pages leave only through
    /// eviction and `flush_all`: for tests and tools that want determinism).
    pub flusher_interval_ms: u64,
    /// Above this share of dirty frames the flusher writes until half of it is left.
    pub dirty_high_water_pct: u8,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            size_bytes: 128 << 20,
            flusher_interval_ms: 100,
            dirty_high_water_pct: 85,
        }
    }
}

impl PoolConfig {
    /// Defaults with the given budget.
    pub fn with_size_bytes(size_bytes: u64) -> PoolConfig {
        PoolConfig {
            size_bytes,
            ..PoolConfig::default()
        }
    }
}

/// The DRAM buffer pool. `Send + Sync`; shared as `Arc<BufferPool>`.
pub struct BufferPool {
    pub(crate) arena: Arena,
    pub(crate) frames: Box<[FrameMeta]>,
    pub(crate) table: PageTable,
    pub(crate) clock: Clock,
    pub(crate) store: Arc<dyn PageStore>,
    pub(crate) wal: Arc<dyn WalGate>,
    /// Highest LSN the WAL gate has confirmed durable (a cache to skip redundant calls).
    pub(crate) wal_durable: AtomicU64,
    hooks: RwLock<Option<Arc<dyn TierHooks>>>,
    /// Mirrors `hooks.is_some()` so the no-BPE path never touches the hooks lock.
    hooks_on: AtomicBool,
    /// First store write/sync failure; set once, sticky.
    pub(crate) poison: OnceLock<String>,
    pub(crate) counters: Counters,
    pub(crate) flusher: Flusher,
    pub(crate) sync_floor: SyncFloor,
    /// Dirty frames above which the flusher works hard (`dirty_high_water_pct` of frames).
    pub(crate) dirty_high_water: u64,
    /// The flusher writes dirty pages whose rec_lsn is below this (0 = only under pressure).
    pub(crate) flush_below: std::sync::atomic::AtomicU64,
    /// Scratch runs for evicting threads' batch writes (a store that `writes_anywhere`;
    /// empty otherwise). A thread finding all in use waits for one (their holders wait for
    /// nothing but their write).
    pub(crate) batch_scratch: Box<[parking_lot::Mutex<Arena>]>,
    cfg: PoolConfig,
}

impl fmt::Debug for BufferPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferPool")
            .field("frames", &self.frames.len())
            .field("poisoned", &self.poison.get())
            .finish_non_exhaustive()
    }
}

impl BufferPool {
    /// Allocates the frames (one aligned allocation), the page table, and starts the
    /// background flusher thread.
    pub fn new(
        cfg: PoolConfig,
        store: Arc<dyn PageStore>,
        wal: Arc<dyn WalGate>,
    ) -> Result<Arc<BufferPool>, BufferError> {
        let frames = (cfg.size_bytes / PAGE_SIZE as u64).max(MIN_FRAMES);
        if frames > u64::from(FrameIdx::MAX) {
            return Err(BufferError::Setup(format!(
                "{frames} frames is more than supported"
            )));
        }
        let n = usize::try_from(frames)
            .map_err(|_| BufferError::Setup(format!("{frames} frames do not fit in memory")))?;
        let arena = Arena::new(n).ok_or_else(|| {
            BufferError::Setup(format!(
                "cannot allocate {} bytes of frames",
                frames * PAGE_SIZE as u64
            ))
        })?;
        let metas: Box<[FrameMeta]> = (0..n).map(|_| FrameMeta::new()).collect();
        let pct = u64::from(cfg.dirty_high_water_pct.clamp(1, 100));
        let batch_scratch: Box<[parking_lot::Mutex<Arena>]> = if store.writes_anywhere() {
            let pages = crate::flusher::run_pages(n);
            (0..BATCH_SCRATCH_RUNS)
                .filter_map(|_| Arena::new(pages).map(parking_lot::Mutex::new))
                .collect()
        } else {
            Box::new([])
        };
        let pool = Arc::new(BufferPool {
            arena,
            frames: metas,
            table: PageTable::new(n),
            clock: Clock::new(frames),
            store,
            wal,
            wal_durable: AtomicU64::new(0),
            hooks: RwLock::new(None),
            hooks_on: AtomicBool::new(false),
            poison: OnceLock::new(),
            counters: Counters::default(),
            flusher: Flusher::new(),
            sync_floor: SyncFloor::default(),
            flush_below: std::sync::atomic::AtomicU64::new(0),
            dirty_high_water: (frames * pct / 100).max(1),
            batch_scratch,
            cfg,
        });
        pool.flusher.start(
            Arc::downgrade(&pool),
            cfg.flusher_interval_ms,
            frames as usize,
        )?;
        Ok(pool)
    }

    /// Installs or removes the BPE hooks; safe while running. Calls already in flight finish
    /// on the hooks they started with.
    pub fn set_hooks(&self, hooks: Option<Arc<dyn TierHooks>>) {
        let mut h = self.hooks.write();
        self.hooks_on.store(hooks.is_some(), Ordering::Release);
        *h = hooks;
    }

    /// The current hooks (miss / evict / dirty paths only, never the hit path).
    #[inline]
    pub(crate) fn hooks(&self) -> Option<Arc<dyn TierHooks>> {
        if !self.hooks_on.load(Ordering::Acquire) {
            return None;
        }
        self.hooks.read().clone()
    }

    /// Pins page `id` and takes its latch shared. A miss loads the page (BPE hook first,
    /// then the store), verified.
    pub fn read(&self, id: PageId) -> Result<PageRead<'_>, BufferError> {
        bump(&self.counters.read_requests);
        let (idx, token) = self.fix_shared(id)?;
        Ok(PageRead::new(self, idx, id, token))
    }

    /// Pins page `id` and takes its latch exclusive. A miss loads the page, verified.
    pub fn write(&self, id: PageId) -> Result<PageWrite<'_>, BufferError> {
        self.check_poison()?;
        bump(&self.counters.read_requests);
        let (idx, token) = self.fix_exclusive(id, false)?;
        Ok(PageWrite::new(self, idx, id, token, false))
    }

    /// A frame for page `id` being (re)created: no disk read, the frame is zero-filled (also
    /// when the page was resident). The caller formats it and must call `mark_dirty` before
    /// dropping the guard; if it does not, the creation is void and the frame is dropped.
    pub fn create(&self, id: PageId) -> Result<PageWrite<'_>, BufferError> {
        self.check_poison()?;
        let (idx, token) = self.fix_exclusive(id, true)?;
        Ok(PageWrite::new(self, idx, id, token, true))
    }

    /// Page `id` was freed: drop it from DRAM without writing it, even if dirty, and tell the
    /// hooks. The caller guarantees nobody uses the page and holds no guard on it (this waits
    /// for the page's latch).
    pub fn discard(&self, id: PageId) {
        if let Some(idx) = self.table.pin(id, &self.frames) {
            let f = self.frame(idx);
            let x = f.latch.lock_exclusive();
            if f.holds(id.0) {
                self.drop_frame(idx, id);
            }
            // SAFETY: `x` is this thread's exclusive acquisition of `f.latch`.
            unsafe { f.latch.unlock_exclusive(x) };
            f.unpin();
        }
        self.notify_discard(id);
    }

    pub(crate) fn notify_discard(&self, id: PageId) {
        if let Some(h) = self.hooks() {
            h.on_discard(id);
        }
    }

    /// Smallest rec_lsn among dirty pages (`None` if none): redo below it is no longer needed
    /// for any page. A page counts as dirty until its store write has completed AND a
    /// `PageStore::sync` started after that write has returned (the background flusher syncs
    /// after each round, `flush_all` at its end), so a checkpoint may trust this value as is.
    pub fn min_rec_lsn(&self) -> Option<Lsn> {
        let mut min: Option<u64> = None;
        for f in self.frames.iter() {
            if f.flags() & DIRTY != 0 {
                let l = f.rec_lsn.load(Ordering::Relaxed);
                min = Some(min.map_or(l, |m| m.min(l)));
            }
        }
        // Read after the scan: a page written meanwhile was noted here before it went clean.
        if let Some(l) = self.sync_floor.floor() {
            min = Some(min.map_or(l, |m| m.min(l)));
        }
        min.map(Lsn)
    }

    /// Counters and occupancy; lock-free (atomics only).
    pub fn stats(&self) -> PoolStats {
        let c = &self.counters;
        let total = self.frames.len() as u64;
        let mapped = get(&c.mapped);
        PoolStats {
            read_requests: get(&c.read_requests),
            reads: get(&c.reads),
            bpe_hits: get(&c.bpe_hits),
            verify_failures: get(&c.verify_failures),
            pages_total: total,
            pages_data: mapped,
            pages_dirty: get(&c.dirty),
            pages_free: total.saturating_sub(mapped),
            pages_hot: self.clock.hot_frames(),
            pages_flushed: get(&c.pages_flushed),
            write_ios: get(&c.write_ios),
            evictions: get(&c.evictions),
            evictions_dirty: get(&c.evictions_dirty),
            resident_bytes: self.resident_bytes() as u64,
        }
    }

    /// Frames + frame metadata + page table + this struct + the flusher's scratch page.
    fn resident_bytes(&self) -> usize {
        self.arena.bytes()
            + std::mem::size_of_val(&*self.frames)
            + self.table.bytes()
            + std::mem::size_of::<BufferPool>()
            + self.flusher.bytes()
            + self.batch_scratch.len() * crate::flusher::run_pages(self.frames.len()) * PAGE_SIZE
    }

    /// Stops the background flusher (does not flush; call `flush_all` first).
    pub fn shutdown(&self) {
        self.flusher.shutdown();
    }

    /// Number of frames.
    /// Asks the background flusher to write every dirty page whose `rec_lsn` is below
    /// `lsn` (the checkpointer moves this forward to bound recovery time).
    pub fn set_flush_target(&self, lsn: Lsn) {
        self.flush_below.fetch_max(lsn.0, Ordering::AcqRel);
    }

    pub fn frames(&self) -> usize {
        self.frames.len()
    }

    /// The configuration the pool was built with.
    pub fn config(&self) -> PoolConfig {
        self.cfg
    }

    /// True after a store write or sync failed.
    pub fn is_poisoned(&self) -> bool {
        self.poison.get().is_some()
    }

    pub(crate) fn check_poison(&self) -> Result<(), BufferError> {
        match self.poison.get() {
            Some(msg) => Err(BufferError::Poisoned(msg.clone())),
            None => Ok(()),
        }
    }

    #[inline]
    pub(crate) fn frame(&self, idx: FrameIdx) -> &FrameMeta {
        &self.frames[idx as usize]
    }

    /// The bytes of frame `idx`.
    ///
    /// # Safety
    /// The caller holds the frame's latch (shared or exclusive) for the returned lifetime.
    #[inline]
    pub(crate) unsafe fn page(&self, idx: FrameIdx) -> &[u8] {
        // SAFETY: the pointer covers PAGE_SIZE bytes of the arena; the latch excludes writers.
        unsafe { std::slice::from_raw_parts(self.arena.frame_ptr(idx as usize), PAGE_SIZE) }
    }

    /// The bytes of frame `idx`, mutable.
    ///
    /// # Safety
    /// The caller holds the frame's latch exclusively for the returned lifetime and creates
    /// no other reference to these bytes meanwhile.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn page_mut(&self, idx: FrameIdx) -> &mut [u8] {
        // SAFETY: the pointer covers PAGE_SIZE bytes; the X latch makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(self.arena.frame_ptr(idx as usize), PAGE_SIZE) }
    }

    /// Returns frame `idx` pinned and latched shared, holding a verified copy of `id`.
    fn fix_shared(&self, id: PageId) -> Result<(FrameIdx, SharedToken), BufferError> {
        loop {
            if let Some(idx) = self.table.pin(id, &self.frames) {
                let f = self.frame(idx);
                let s = f.latch.lock_shared();
                if f.holds(id.0) {
                    f.touch();
                    return Ok((idx, s));
                }
                // The load we waited for failed (or the page was discarded): start over.
                // SAFETY: `s` is this thread's shared acquisition.
                unsafe { f.latch.unlock_shared(s) };
                f.unpin();
                continue;
            }
            if let Some((idx, x)) = self.miss(id, false)? {
                // SAFETY: `x` is this thread's exclusive acquisition. Downgrading lets the
                // threads that queued behind the load read alongside us.
                let s = unsafe { self.frame(idx).latch.downgrade(x) };
                return Ok((idx, s));
            }
        }
    }

    /// Returns frame `idx` pinned and latched exclusive, holding `id` (zeroed if `create`).
    fn fix_exclusive(
        &self,
        id: PageId,
        create: bool,
    ) -> Result<(FrameIdx, ExclusiveToken), BufferError> {
        loop {
            if let Some(idx) = self.table.pin(id, &self.frames) {
                let f = self.frame(idx);
                let x = f.latch.lock_exclusive();
                if f.holds(id.0) {
                    f.touch();
                    if create {
                        // SAFETY: X latch held.
                        unsafe { self.page_mut(idx) }.fill(0);
                        f.flags.fetch_and(!SEALED, Ordering::AcqRel);
                    }
                    return Ok((idx, x));
                }
                // SAFETY: `x` is this thread's exclusive acquisition.
                unsafe { f.latch.unlock_exclusive(x) };
                f.unpin();
                continue;
            }
            if let Some(r) = self.miss(id, create)? {
                return Ok(r);
            }
        }
    }

    /// Miss path. Takes a victim frame (X-latched, unmapped), publishes `id → frame` so that
    /// concurrent missers of `id` wait on our latch, then — holding no lock but that latch —
    /// fills it (zeroes for `create`, else BPE hook, else store) and verifies it.
    /// `Ok(None)`: another thread mapped `id` first; the caller retries the lookup.
    fn miss(
        &self,
        id: PageId,
        create: bool,
    ) -> Result<Option<(FrameIdx, ExclusiveToken)>, BufferError> {
        let (idx, x) = self.acquire_victim()?;
        let f = self.frame(idx);
        // The frame is unmapped and X-latched: reset what the last owner (or a late clock
        // hand) left in the flags, keeping `hot` exact.
        self.reset_flags(f);
        match self.table.publish(id, idx, &self.frames) {
            Publish::Published => bump(&self.counters.mapped),
            Publish::AlreadyMapped => {
                f.page.store(NO_PAGE, Ordering::Release);
                // SAFETY: `x` is this thread's exclusive acquisition.
                unsafe { f.latch.unlock_exclusive(x) };
                return Ok(None);
            }
        }
        // SAFETY: X latch held, page published: we are the only one touching these bytes.
        let buf = unsafe { self.page_mut(idx) };
        if create {
            buf.fill(0);
            f.flags.fetch_or(VALID, Ordering::AcqRel);
            return Ok(Some((idx, x)));
        }
        match self.load_into(id, buf) {
            Ok(()) => {
                f.flags.fetch_or(VALID | SEALED, Ordering::AcqRel);
                Ok(Some((idx, x)))
            }
            Err(e) => {
                self.drop_frame(idx, id);
                // SAFETY: `x` is this thread's exclusive acquisition. Waiters wake, see the
                // frame no longer holds `id`, and retry the lookup.
                unsafe { f.latch.unlock_exclusive(x) };
                f.unpin();
                Err(e)
            }
        }
    }

    /// Fills `buf` with a verified copy of `id`: the BPE first (re-verified here), the store
    /// otherwise. An all-zero store page (never written) fails `verify` → `Corrupt`.
    fn load_into(&self, id: PageId, buf: &mut [u8]) -> Result<(), BufferError> {
        if let Some(h) = self.hooks() {
            if h.on_miss(id, buf) {
                match verify(buf, id) {
                    Ok(()) => {
                        bump(&self.counters.bpe_hits);
                        return Ok(());
                    }
                    Err(error) => {
                        bump(&self.counters.verify_failures);
                        tracing::warn!(page = %id, %error, "BPE copy failed verification; reading the data file");
                    }
                }
            }
        }
        self.store
            .read_page(id, buf)
            .map_err(|source| BufferError::Io { page: id, source })?;
        bump(&self.counters.reads);
        verify(buf, id).map_err(|error| {
            bump(&self.counters.verify_failures);
            tracing::error!(page = %id, %error, "page read from the data file failed verification");
            BufferError::Corrupt { page: id, error }
        })
    }

    /// Clears the flags of an unmapped frame this thread holds X-latched.
    pub(crate) fn reset_flags(&self, f: &FrameMeta) {
        let prev = f.flags.swap(0, Ordering::AcqRel);
        if prev & HOT != 0 {
            self.clock.hot_left();
        }
        if prev & DIRTY != 0 {
            drop_one(&self.counters.dirty);
        }
    }

    /// Drops page `id` from frame `idx` without writing it (failed load, discard, void
    /// create). The caller holds the frame's X latch; pins are left to their owners.
    pub(crate) fn drop_frame(&self, idx: FrameIdx, id: PageId) {
        let f = self.frame(idx);
        if self.table.unmap(id, idx, &self.frames, false) {
            drop_one(&self.counters.mapped);
        }
        self.reset_flags(f);
        f.page.store(NO_PAGE, Ordering::Release);
    }

    /// `PageWrite::mark_dirty_range`: the caller holds frame `idx`'s X latch. Page LSN :=
    /// `end`; if the page was clean, rec_lsn := `start`.
    pub(crate) fn mark_dirty_latched(&self, idx: FrameIdx, id: PageId, start: Lsn, end: Lsn) {
        let f = self.frame(idx);
        // SAFETY: X latch held by the calling guard.
        let buf = unsafe { self.page_mut(idx) };
        debug_assert!(
            start <= end,
            "page {id}: record {start}..{end} ends before it starts"
        );
        debug_assert!(
            end >= page_lsn(buf),
            "page {id}: LSN going backwards ({} -> {end})",
            page_lsn(buf)
        );
        set_page_lsn(buf, end);
        f.mod_lsn.store(end.0, Ordering::Relaxed);
        let prev = f.flags.fetch_and(!SEALED, Ordering::AcqRel);
        if prev & DIRTY == 0 {
            // rec_lsn first, then DIRTY (Release): `min_rec_lsn` reads them the other way.
            f.rec_lsn.store(start.0, Ordering::Relaxed);
            f.flags.fetch_or(DIRTY, Ordering::Release);
            let dirty = self.counters.dirty.fetch_add(1, Ordering::Relaxed) + 1;
            if dirty > self.dirty_high_water {
                self.flusher.nudge();
            }
            if let Some(h) = self.hooks() {
                h.on_dirty(id);
            }
        }
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.flusher.shutdown();
    }
}
