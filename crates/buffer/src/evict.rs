//! Victim selection: a scan-resistant clock with a protected ("hot") region.
//!
//! Owns: the clock hand, the hot-frame count, the sweep, and eviction of one frame (write it
//! first if dirty, hand the clean bytes to the BPE hook, unmap it).
//!
//! # Policy
//!
//! Every mapped frame is either *cold* (probation) or *hot* (protected), plus a REF bit set
//! by hits. A page is loaded cold with REF clear — the load itself is not a reference.
//! The hand sweeps frames in order:
//!
//! - cold, REF clear → victim (if clean; dirty ones are skipped on the first pass);
//! - cold, REF set (hit at least once since it was loaded) → promoted to hot, REF cleared;
//! - hot, REF set → REF cleared (second chance);
//! - hot, REF clear → demoted to cold *only while* the hot region exceeds its share
//!   (`HOT_SHARE` = 5/8 of the frames), else left alone.
//!
//! A one-pass scan touches each page once, so its pages stay cold and only churn the cold
//! region; the hot set (pages hit again after their load) is not evicted by any scan, however
//! long, as long as it fits in 5/8 of the pool. When the workload shifts, the new hot pages
//! get promoted, the region overflows its share, and the old hot pages — not referenced for
//! a revolution — are demoted and then evicted like any cold page (InnoDB's midpoint LRU,
//! done as a clock).
//!
//! Phases of one sweep: `min(2 × frames, STRICT_SCAN_MAX)` steps of the strict policy above
//! (clean victims only); if that finds nothing, the flusher is woken (when dirty frames were
//! skipped) and `2 × frames` more steps take any unpinned frame whose latch is free (dirty —
//! written by this thread — or hot). A sweep that finds nothing is retried until
//! `VICTIM_WAIT` has passed, then the miss fails with `NoFreeFrame` (or `Poisoned` when only
//! dirty frames are left and the pool is poisoned).
//!
//! Must never: wait for a latch (every latch here is a try-lock; the only wait is for a batch
//! scratch, whose holder waits for nothing but its write), evict a pinned frame, or write a
//! dirty victim once the pool is poisoned.
//!
//! Lock order: victim X latch (try) → [WalGate, PageStore, TierHooks calls] → shard write lock
//! (leaf, via `table.unmap`, re-checks `pins == 0`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::lock_api::RawRwLock as _;
use tierdb_page::{seal, PageId};

use crate::error::BufferError;
use crate::frame::{ExclusiveToken, FrameIdx, FrameMeta, DIRTY, HOT, NO_PAGE, REF, SEALED, VALID};
use crate::pool::BufferPool;
use crate::stats::{bump, drop_one};

/// Share of the frames the hot region may hold before hot pages get demoted.
pub(crate) const HOT_SHARE: (u64, u64) = (5, 8);
/// Most frames one strict pass looks at (bounds a miss's CPU cost in a huge pool whose cold
/// region is all dirty or pinned).
pub(crate) const STRICT_SCAN_MAX: u64 = 8192;
/// How long a miss keeps sweeping when every frame is pinned or latched.
pub(crate) const VICTIM_WAIT: Duration = Duration::from_millis(200);

pub(crate) struct Clock {
    hand: AtomicU64,
    hot: AtomicU64,
    hot_limit: u64,
}

impl Clock {
    pub(crate) fn new(frames: u64) -> Clock {
        Clock {
            hand: AtomicU64::new(0),
            hot: AtomicU64::new(0),
            hot_limit: frames * HOT_SHARE.0 / HOT_SHARE.1,
        }
    }

    /// A hot frame was reset.
    pub(crate) fn hot_left(&self) {
        self.hot.fetch_sub(1, Ordering::Relaxed);
    }

    pub(crate) fn hot_frames(&self) -> u64 {
        self.hot.load(Ordering::Relaxed)
    }

    /// The hand passes a mapped, unpinned frame with `flags` (a snapshot). Applies the
    /// policy's flag transitions with a CAS from the snapshot (a frame that changed meanwhile
    /// is left alone). Returns true if the frame is a candidate victim.
    fn pass(&self, f: &FrameMeta, flags: u32) -> bool {
        if flags & HOT != 0 {
            if flags & REF != 0 {
                let _ = f.flags.compare_exchange(
                    flags,
                    flags & !REF,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            } else if self.hot.load(Ordering::Relaxed) > self.hot_limit
                && f.flags
                    .compare_exchange(flags, flags & !HOT, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
            {
                self.hot.fetch_sub(1, Ordering::Relaxed);
            }
            return false;
        }
        if flags & REF != 0 {
            if f.flags
                .compare_exchange(
                    flags,
                    (flags & !REF) | HOT,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                self.hot.fetch_add(1, Ordering::Relaxed);
            }
            return false;
        }
        true
    }
}

impl BufferPool {
    /// Returns an unmapped, unpinned frame with its X latch held by the caller.
    pub(crate) fn acquire_victim(&self) -> Result<(FrameIdx, ExclusiveToken), BufferError> {
        let n = self.frames.len() as u64;
        let mut deadline: Option<Instant> = None;
        let mut last_err: Option<BufferError> = None;
        let mut round = 0u32;
        loop {
            let mut saw_dirty = false;
            let strict_steps = (2 * n).min(STRICT_SCAN_MAX);
            for step in 0..strict_steps + 2 * n {
                let strict = step < strict_steps;
                if step == strict_steps && saw_dirty {
                    // No clean victim: get the flusher cleaning while we write one ourselves.
                    self.flusher.nudge();
                }
                let idx = (self.clock.hand.fetch_add(1, Ordering::Relaxed) % n) as FrameIdx;
                match self.try_victim(idx, strict, &mut saw_dirty) {
                    Ok(Some(x)) => return Ok((idx, x)),
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(%error, frame = idx, "eviction failed; trying another frame");
                        last_err = Some(error);
                    }
                }
            }
            if saw_dirty {
                self.flusher.nudge();
            }
            let now = Instant::now();
            let deadline = *deadline.get_or_insert(now + VICTIM_WAIT);
            if now >= deadline {
                self.check_poison()?;
                return Err(last_err.unwrap_or(BufferError::NoFreeFrame));
            }
            round += 1;
            if round < 4 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// One step of the hand at frame `idx`. `Ok(Some)`: the frame is ours (X latched, free).
    fn try_victim(
        &self,
        idx: FrameIdx,
        strict: bool,
        saw_dirty: &mut bool,
    ) -> Result<Option<ExclusiveToken>, BufferError> {
        let f = self.frame(idx);
        if f.pins() != 0 {
            return Ok(None);
        }
        if f.page.load(Ordering::Acquire) == NO_PAGE {
            let Some(x) = f.latch.try_lock_exclusive() else {
                return Ok(None);
            };
            // Unmapped frames gain no pins, so this re-check under the latch is final.
            if f.pins() == 0 && f.page.load(Ordering::Acquire) == NO_PAGE {
                return Ok(Some(x));
            }
            // SAFETY: `x` is this thread's exclusive acquisition.
            unsafe { f.latch.unlock_exclusive(x) };
            return Ok(None);
        }
        let flags = f.flags();
        if strict && !self.clock.pass(f, flags) {
            return Ok(None);
        }
        if flags & DIRTY != 0 {
            *saw_dirty = true;
            if strict || self.is_poisoned() {
                return Ok(None);
            }
        }
        let Some(x) = f.latch.try_lock_exclusive() else {
            return Ok(None);
        };
        match self.evict_latched(idx) {
            Ok(true) => Ok(Some(x)),
            Ok(false) => {
                // SAFETY: `x` is this thread's exclusive acquisition.
                unsafe { f.latch.unlock_exclusive(x) };
                Ok(None)
            }
            Err(e) => {
                // SAFETY: as above.
                unsafe { f.latch.unlock_exclusive(x) };
                Err(e)
            }
        }
    }

    /// Evicts whatever frame `idx` holds; the caller holds its X latch. Dirty → written
    /// first (WAL rule, sealed in place: the X latch excludes every reader, so no copy is
    /// needed). Clean bytes go to `on_evict_clean` while the page is still mapped. `Ok(false)`
    /// if the frame turned out to be in use (pinned) and was left as it is.
    fn evict_latched(&self, idx: FrameIdx) -> Result<bool, BufferError> {
        let f = self.frame(idx);
        if f.pins() != 0 {
            return Ok(false);
        }
        let page = f.page.load(Ordering::Acquire);
        if page == NO_PAGE {
            return Ok(true);
        }
        let id = PageId(page);
        let flags = f.flags();
        if flags & VALID == 0 {
            // Mapped but not valid is only seen under a loader's X latch, never here.
            debug_assert!(false, "frame {idx} maps page {id} but is not valid");
            return Ok(false);
        }
        if flags & DIRTY != 0 {
            if self.is_poisoned() {
                return Ok(false);
            }
            if self.store.writes_anywhere() {
                self.write_victim_batch(idx, id)?;
            } else {
                self.write_latched_in_place(idx, id)?;
            }
            bump(&self.counters.evictions_dirty);
        }
        if let Some(h) = self.hooks() {
            // SAFETY: X latch held.
            let buf = unsafe { self.page_mut(idx) };
            if f.flags() & SEALED == 0 {
                seal(buf);
                f.flags.fetch_or(SEALED, Ordering::AcqRel);
            }
            h.on_evict_clean(id, buf);
        }
        if !self.table.unmap(id, idx, &self.frames, true) {
            return Ok(false);
        }
        drop_one(&self.counters.mapped);
        bump(&self.counters.evictions);
        self.reset_flags(f);
        f.page.store(NO_PAGE, Ordering::Release);
        Ok(true)
    }
}
