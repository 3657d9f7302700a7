//! The page table: `PageId → FrameIdx`, split into 64 independently locked shards.
//!
//! Owns: the shards, the shard choice, the in-shard hash, and the pin-under-shard-lock
//! protocol (`pin`, `publish`, `unmap`) that makes eviction safe.
//!
//! Must never: block on anything while a shard lock is held. A shard lock is a leaf lock:
//! inside it we only hash, probe, insert/remove, and touch frame atomics (`pins`, `page`,
//! `flags`). No latch (not even a try-lock), no I/O, no hook.
//!
//! Lock order: shard locks may be taken while the caller holds frame latches (they are
//! leaves); two shard locks are never held at once.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;
use tierdb_page::PageId;

use crate::frame::{FrameIdx, FrameMeta};

/// Number of shards (a power of two).
pub(crate) const SHARDS: usize = 64;
const SHARD_BITS: u32 = SHARDS.trailing_zeros();
const _: () = assert!(SHARDS.is_power_of_two());

/// Fibonacci hashing for the shard choice: the top bits of `id × 2^64/φ`, well spread even
/// for sequential ids or ids with a power-of-two stride.
#[inline]
fn shard_of(id: PageId) -> usize {
    (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SHARD_BITS)) as usize
}

/// In-shard hash: a 64-bit finalizer (mixes every bit into every bit), independent of the
/// shard choice so that the keys of one shard still spread over its buckets.
#[derive(Default, Clone, Copy)]
pub(crate) struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        x ^= x >> 33;
        x
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 ^= v;
    }
}

#[derive(Default, Clone, Copy)]
pub(crate) struct BuildPageIdHasher;

impl BuildHasher for BuildPageIdHasher {
    type Hasher = PageIdHasher;
    fn build_hasher(&self) -> PageIdHasher {
        PageIdHasher(0)
    }
}

type Shard = HashMap<PageId, FrameIdx, BuildPageIdHasher>;

pub(crate) struct PageTable {
    shards: Box<[RwLock<Shard>]>,
    /// Bytes held by the shards' tables, kept current on growth so `stats` takes no lock.
    bytes: AtomicUsize,
}

/// Bytes a std `HashMap<PageId, FrameIdx>` of this capacity holds (SwissTable layout:
/// power-of-two buckets holding 7/8 of capacity; one entry plus one control byte per
/// bucket, plus one 16-byte control group).
fn table_bytes(cap: usize) -> usize {
    if cap == 0 {
        return 0;
    }
    let buckets = if cap < 4 {
        4
    } else if cap < 8 {
        8
    } else {
        (cap * 8 / 7).next_power_of_two()
    };
    buckets * (std::mem::size_of::<(PageId, FrameIdx)>() + 1) + 16
}

pub(crate) enum Publish {
    /// The mapping is in place; the frame is pinned once for the caller.
    Published,
    /// Another thread mapped the page first; nothing changed.
    AlreadyMapped,
}

impl PageTable {
    /// A table sized so that `frames` mappings fit without rehashing (25 % headroom per
    /// shard for uneven spread).
    pub(crate) fn new(frames: usize) -> PageTable {
        let per_shard = frames.div_ceil(SHARDS) * 5 / 4 + 8;
        let shards: Box<[RwLock<Shard>]> = (0..SHARDS)
            .map(|_| {
                RwLock::new(HashMap::with_capacity_and_hasher(
                    per_shard,
                    BuildPageIdHasher,
                ))
            })
            .collect();
        let bytes = std::mem::size_of_val(&*shards)
            + shards
                .iter()
                .map(|s| table_bytes(s.read().capacity()))
                .sum::<usize>();
        PageTable {
            shards,
            bytes: AtomicUsize::new(bytes),
        }
    }

    #[inline]
    fn shard(&self, id: PageId) -> &RwLock<Shard> {
        &self.shards[shard_of(id)]
    }

    /// Hit path: if `id` is mapped, pins its frame (under the shard read lock) and returns it.
    #[inline]
    pub(crate) fn pin(&self, id: PageId, frames: &[FrameMeta]) -> Option<FrameIdx> {
        let shard = self.shard(id).read();
        let idx = *shard.get(&id)?;
        frames[idx as usize].pin();
        drop(shard);
        Some(idx)
    }

    /// Miss path: maps `id → idx` unless `id` is already mapped. On success the frame's page
    /// id is set, its flags cleared and one pin added, all before the shard lock is released,
    /// so a concurrent misser of `id` finds the frame and waits on its latch (which the
    /// caller holds exclusively).
    pub(crate) fn publish(&self, id: PageId, idx: FrameIdx, frames: &[FrameMeta]) -> Publish {
        let f = &frames[idx as usize];
        let mut shard = self.shard(id).write();
        if shard.contains_key(&id) {
            return Publish::AlreadyMapped;
        }
        f.flags.store(0, Ordering::Release);
        f.page.store(id.0, Ordering::Release);
        f.pin();
        let before = shard.capacity();
        shard.insert(id, idx);
        let after = shard.capacity();
        if after != before {
            self.bytes.fetch_add(table_bytes(after), Ordering::Relaxed);
            self.bytes.fetch_sub(table_bytes(before), Ordering::Relaxed);
        }
        Publish::Published
    }

    /// Removes `id → idx` if present. With `only_if_unpinned`, refuses (returns false) when
    /// the frame has a pin; since pins are only added under this shard's lock, the answer is
    /// final until the lock is released. Returns true if the mapping was removed.
    pub(crate) fn unmap(
        &self,
        id: PageId,
        idx: FrameIdx,
        frames: &[FrameMeta],
        only_if_unpinned: bool,
    ) -> bool {
        let mut shard = self.shard(id).write();
        if shard.get(&id) != Some(&idx) {
            return false;
        }
        if only_if_unpinned && frames[idx as usize].pins() != 0 {
            return false;
        }
        shard.remove(&id);
        true
    }

    /// Bytes held by the shards' hash tables (no lock taken).
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_and_strided_ids_spread_over_all_shards() {
        for stride in [1u64, 64, 4096] {
            let mut counts = [0usize; SHARDS];
            for i in 0..SHARDS as u64 * 100 {
                counts[shard_of(PageId(i * stride))] += 1;
            }
            let max = *counts.iter().max().unwrap_or(&0);
            let min = *counts.iter().min().unwrap_or(&0);
            assert!(
                min >= 50 && max <= 150,
                "stride {stride}: shard counts {min}..{max}"
            );
        }
    }

    #[test]
    fn table_memory_is_accounted_from_capacity() {
        let t = PageTable::new(4096);
        let b = t.bytes();
        let recount = std::mem::size_of_val(&*t.shards)
            + t.shards
                .iter()
                .map(|s| table_bytes(s.read().capacity()))
                .sum::<usize>();
        assert_eq!(b, recount);
        // 4096 mappings: at least 12 bytes each, at most ~64.
        assert!((4096 * 12..=4096 * 64).contains(&b), "{b}");
    }

    #[test]
    fn table_growth_is_accounted() {
        let frames: Vec<FrameMeta> = (0..3000).map(|_| FrameMeta::new()).collect();
        let t = PageTable::new(16);
        let small = t.bytes();
        for i in 0..3000u32 {
            assert!(matches!(
                t.publish(PageId(u64::from(i) * 7), i, &frames),
                Publish::Published
            ));
        }
        // Drop the pins `publish` handed out.
        frames.iter().for_each(FrameMeta::unpin);
        let recount = std::mem::size_of_val(&*t.shards)
            + t.shards
                .iter()
                .map(|s| table_bytes(s.read().capacity()))
                .sum::<usize>();
        assert_eq!(t.bytes(), recount);
        assert!(t.bytes() > small + 3000 * 12);
        assert_eq!(t.pin(PageId(21), &frames), Some(3));
        assert!(
            !t.unmap(PageId(21), 3, &frames, true),
            "pinned: not unmapped"
        );
        frames[3].unpin();
        assert!(t.unmap(PageId(21), 3, &frames, true));
        assert_eq!(t.pin(PageId(21), &frames), None);
    }
}
