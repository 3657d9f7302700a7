//! Per-frame metadata: 40 bytes of atomics and a latch per 16 KiB frame.
//!
//! Owns: [`FrameMeta`] (latch, page id, rec_lsn, mod_lsn, pin count, flag bits) and the meaning of
//! each flag bit. The page bytes themselves live in the arena.
//!
//! Must never: take a lock (the latch is *stored* here, taken by the pool). Flag bits are
//! only changed with `fetch_or` / `fetch_and` / `swap`, never by load-modify-store, so
//! concurrent updates of different bits never clobber each other.
//!
//! Who may change what:
//! - `page`: only a thread holding the frame's X latch (publish, evict, invalidate); for a
//!   mapped frame, additionally only while the page's shard write lock is held when the
//!   mapping changes.
//! - `pins`: +1 only under the shard lock of the mapped page (see the crate docs); −1 by the
//!   guard that owns the pin, any time.
//! - `DIRTY`: set under the X latch (`mark_dirty`); cleared under the S or X latch after a
//!   completed store write (writers are excluded either way), or under X when the frame is
//!   dropped.
//! - `rec_lsn`: written under the X latch right before `DIRTY` is set (Release), read after
//!   `DIRTY` is seen (Acquire).
//! - `mod_lsn`: the LSN of the page's last change, written under the X latch by every
//!   `mark_dirty`; read without a latch as a hint (the flusher's write-back order).
//! - `REF`: set by any hit, no latch; cleared by the clock hand.
//! - `HOT`: set/cleared by the clock hand (and cleared when a frame is dropped); each
//!   transition is detected from the `fetch_*` result so `hot_count` stays exact.
//! - `VALID`, `SEALED`: under the X latch.
//!
//! Lock order: none taken here; see the crate docs for the latch's place in it.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use parking_lot::lock_api::RawRwLock as _;
use parking_lot::RawRwLock;

/// Index of a frame in the arena / metadata array.
pub(crate) type FrameIdx = u32;

/// `page` value of a frame that holds no page.
pub(crate) const NO_PAGE: u64 = u64::MAX;

/// The frame holds the verified (or freshly created) bytes of `page`.
pub(crate) const VALID: u32 = 1 << 0;
/// DRAM copy is newer than the store's; counts until the store write has completed.
pub(crate) const DIRTY: u32 = 1 << 1;
/// Referenced since the clock hand last passed.
pub(crate) const REF: u32 = 1 << 2;
/// In the protected ("hot") part of the pool: re-referenced after it was loaded.
pub(crate) const HOT: u32 = 1 << 3;
/// The frame's CRC field matches its bytes (loaded, or sealed in place since the last
/// `mark_dirty`), so it can be handed to `on_evict_clean` without re-sealing.
pub(crate) const SEALED: u32 = 1 << 4;

pub(crate) type SharedToken = <RawRwLock as parking_lot::lock_api::RawRwLock>::SharedGuard;
pub(crate) type ExclusiveToken = <RawRwLock as parking_lot::lock_api::RawRwLock>::ExclusiveGuard;

#[repr(C)]
pub(crate) struct FrameMeta {
    /// The page latch (shared = readers, exclusive = writer / loader / evictor).
    pub(crate) latch: RawRwLock,
    /// Page held (`NO_PAGE` if none).
    pub(crate) page: AtomicU64,
    /// LSN at which the page went clean → dirty (valid while `DIRTY`).
    pub(crate) rec_lsn: AtomicU64,
    /// LSN of the last change (valid while `DIRTY`): the flusher writes the least recently
    /// changed pages first, so pages still being changed keep absorbing changes.
    pub(crate) mod_lsn: AtomicU64,
    /// Threads holding (or about to hold) this frame.
    pub(crate) pins: AtomicU32,
    /// `VALID | DIRTY | REF | HOT | SEALED`.
    pub(crate) flags: AtomicU32,
}

// 40 bytes per 16 KiB frame = 0.25 % of the budget.
const _: () = assert!(std::mem::size_of::<FrameMeta>() == 40);
const _: () = assert!(std::mem::size_of::<RawRwLock>() == 8);

impl FrameMeta {
    pub(crate) const fn new() -> FrameMeta {
        FrameMeta {
            latch: RawRwLock::INIT,
            page: AtomicU64::new(NO_PAGE),
            rec_lsn: AtomicU64::new(0),
            mod_lsn: AtomicU64::new(0),
            pins: AtomicU32::new(0),
            flags: AtomicU32::new(0),
        }
    }

    #[inline]
    pub(crate) fn pins(&self) -> u32 {
        self.pins.load(Ordering::Acquire)
    }

    #[inline]
    pub(crate) fn pin(&self) {
        self.pins.fetch_add(1, Ordering::AcqRel);
    }

    #[inline]
    pub(crate) fn unpin(&self) {
        let prev = self.pins.fetch_sub(1, Ordering::AcqRel);
        debug_assert!(prev > 0, "unpin of an unpinned frame");
    }

    #[inline]
    pub(crate) fn flags(&self) -> u32 {
        self.flags.load(Ordering::Acquire)
    }

    /// True if the frame (latched by the caller) holds a usable copy of `page`.
    #[inline]
    pub(crate) fn holds(&self, page: u64) -> bool {
        self.page.load(Ordering::Acquire) == page && self.flags() & VALID != 0
    }

    /// Records a reference (hit). Avoids writing the cache line when the bit is already set.
    #[inline]
    pub(crate) fn touch(&self) {
        if self.flags.load(Ordering::Relaxed) & REF == 0 {
            self.flags.fetch_or(REF, Ordering::Relaxed);
        }
    }
}
