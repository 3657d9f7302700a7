//! Pool counters.
//!
//! Owns: the atomic event counters ([`Counters`]) and the snapshot handed to callers
//! ([`PoolStats`]). Must never: take a lock; every counter is a relaxed atomic.
//!
//! Lock order: none; no locks here.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the pool's counters and occupancy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// `read()` + `write()` calls.
    pub read_requests: u64,
    /// Misses served from the store.
    pub reads: u64,
    /// Misses served by `TierHooks::on_miss` (the BPE).
    pub bpe_hits: u64,
    /// Pages that failed `tierdb_page::verify` (from the hooks or from the store).
    pub verify_failures: u64,
    /// Frames in the pool.
    pub pages_total: u64,
    /// Frames holding a page (mapped).
    pub pages_data: u64,
    /// Frames holding a dirty page (until its write completes).
    pub pages_dirty: u64,
    /// Frames holding no page.
    pub pages_free: u64,
    /// Frames in the protected ("hot") region of the clock (see `evict`).
    pub pages_hot: u64,
    /// Page writes to the store that completed (flusher, eviction, `flush_all`).
    pub pages_flushed: u64,
    /// Store writes issued for them (a flusher write carries up to `RUN_MAX` adjacent pages).
    pub write_ios: u64,
    /// Pages evicted to make room.
    pub evictions: u64,
    /// Of those, pages that had to be written first.
    pub evictions_dirty: u64,
    /// Bytes the pool holds: frames + frame metadata + page table + fixed structs,
    /// computed from actual allocation sizes and capacities.
    pub resident_bytes: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) read_requests: AtomicU64,
    pub(crate) reads: AtomicU64,
    pub(crate) bpe_hits: AtomicU64,
    pub(crate) verify_failures: AtomicU64,
    pub(crate) pages_flushed: AtomicU64,
    pub(crate) write_ios: AtomicU64,
    pub(crate) evictions: AtomicU64,
    pub(crate) evictions_dirty: AtomicU64,
    /// Mapped frames.
    pub(crate) mapped: AtomicU64,
    /// Frames with `DIRTY` set.
    pub(crate) dirty: AtomicU64,
}

#[inline]
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

#[inline]
pub(crate) fn drop_one(c: &AtomicU64) {
    c.fetch_sub(1, Ordering::Relaxed);
}

#[inline]
pub(crate) fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}
