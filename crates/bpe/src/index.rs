//! The DRAM index: page id → (region, slot, LSN fingerprint, hit bit), 12 bytes per entry.
//!
//! Owns: 64 shards, each a `Mutex` over its own open-addressing table (Robin Hood linear
//! probing, backward-shift deletion, no tombstones). A shard is rebuilt at 92 % load when its
//! load passes 95 % (grow) or falls below 85 % (shrink), so at steady state it is 85–95 %
//! full: 12 B / 0.85..0.95 ≈ 12.6–14.1 B per cached page (plus ~2 KiB of shard headers),
//! measured by `bytes()` from the actual allocation sizes. Robin Hood keeps probe sequences
//! short at that load: a lookup stops as soon as it meets an entry closer to its home slot.
//!
//! Entry layout (`Entry`, `repr(C)`, 12 bytes, pinned below):
//! - `key: u32` = page id + 1 (0 = empty slot). Pages with id ≥ 2³² − 1 (64 TiB into the data
//!   file) are not cacheable.
//! - `lsn_low: u32` = low 32 bits of the page LSN of the cached copy.
//! - `loc: u32` = region id (20 bits) << 12 | slot (11 bits) << 1 | hit bit.
//!
//! Must never: hold a shard lock while doing I/O or taking any other lock (shard locks are
//! leaves in the crate's lock order); allocate on the lookup path.

use std::mem::size_of;

use parking_lot::Mutex;

/// Number of shards (a power of two).
pub(crate) const SHARDS: usize = 64;
/// Region ids are 20 bits.
pub(crate) const MAX_REGION_IDS: u32 = 1 << 20;
const MIN_CAP: usize = 8;

/// Where a cached copy lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Loc {
    pub rid: u32,
    pub slot: u16,
}

/// One index entry. See the module doc for the bit layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Entry {
    key: u32,
    pub lsn_low: u32,
    loc: u32,
}

const _: () = assert!(size_of::<Entry>() == 12);

impl Entry {
    fn new(key: u32, lsn_low: u32, loc: Loc, hit: bool) -> Entry {
        debug_assert!(loc.rid < MAX_REGION_IDS && loc.slot < 2048);
        Entry {
            key,
            lsn_low,
            loc: (loc.rid << 12) | (u32::from(loc.slot) << 1) | u32::from(hit),
        }
    }
    /// The page id.
    pub fn page_id(&self) -> u64 {
        u64::from(self.key) - 1
    }
    pub fn loc(&self) -> Loc {
        Loc {
            rid: self.loc >> 12,
            slot: ((self.loc >> 1) & 0x7FF) as u16,
        }
    }
    pub fn hit(&self) -> bool {
        self.loc & 1 != 0
    }
}

/// The index key of a page id, or `None` if the page is beyond the cacheable range.
pub(crate) fn key_of(page_id: u64) -> Option<u32> {
    u32::try_from(page_id.checked_add(1)?)
        .ok()
        .filter(|&k| k != u32::MAX)
}

fn mix(key: u32) -> u64 {
    // splitmix64 finaliser
    let mut z = u64::from(key).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Capacity for `n` entries at ~92 % load.
fn target_cap(n: usize) -> usize {
    (n + n / 12 + 1).max(MIN_CAP)
}

struct Table {
    slots: Box<[Entry]>,
    len: usize,
}

impl Table {
    fn with_cap(cap: usize) -> Table {
        Table {
            slots: vec![Entry::default(); cap].into_boxed_slice(),
            len: 0,
        }
    }

    fn cap(&self) -> usize {
        self.slots.len()
    }

    fn home(&self, key: u32) -> usize {
        ((u64::from(mix(key) as u32) * self.cap() as u64) >> 32) as usize
    }

    fn dist(&self, idx: usize, key: u32) -> usize {
        let h = self.home(key);
        if idx >= h {
            idx - h
        } else {
            idx + self.cap() - h
        }
    }

    fn next(&self, i: usize) -> usize {
        if i + 1 == self.cap() {
            0
        } else {
            i + 1
        }
    }

    fn find(&self, key: u32) -> Option<usize> {
        let mut i = self.home(key);
        let mut d = 0;
        loop {
            let e = self.slots[i];
            if e.key == 0 {
                return None;
            }
            if e.key == key {
                return Some(i);
            }
            if self.dist(i, e.key) < d || d >= self.cap() {
                return None;
            }
            i = self.next(i);
            d += 1;
        }
    }

    /// Inserts an entry whose key is absent. The table must have a free slot.
    fn insert_new(&mut self, mut e: Entry) {
        debug_assert!(self.len < self.cap());
        let mut i = self.home(e.key);
        let mut d = 0;
        loop {
            let cur = self.slots[i];
            if cur.key == 0 {
                self.slots[i] = e;
                self.len += 1;
                return;
            }
            let cd = self.dist(i, cur.key);
            if cd < d {
                self.slots[i] = e;
                e = cur;
                d = cd;
            }
            i = self.next(i);
            d += 1;
        }
    }

    fn remove_at(&mut self, i: usize) -> Entry {
        let old = self.slots[i];
        let mut j = i;
        loop {
            let n = self.next(j);
            let ne = self.slots[n];
            if ne.key == 0 || self.dist(n, ne.key) == 0 {
                self.slots[j] = Entry::default();
                break;
            }
            self.slots[j] = ne;
            j = n;
        }
        self.len -= 1;
        // Shrink below 85 % load (grow above 95 %, both back to 92 %): under FIFO churn the
        // table stays 85–95 % full, which keeps the index within 16 bytes per cached page
        // with room for the region table and shard headers.
        if self.cap() > MIN_CAP && self.len * 20 < self.cap() * 17 {
            self.rebuild(target_cap(self.len));
        }
        old
    }

    fn rebuild(&mut self, cap: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Entry::default(); cap].into());
        self.len = 0;
        for e in old.iter().filter(|e| e.key != 0) {
            self.insert_new(*e);
        }
    }

    fn upsert(&mut self, e: Entry) -> Option<Entry> {
        if let Some(i) = self.find(e.key) {
            return Some(std::mem::replace(&mut self.slots[i], e));
        }
        if (self.len + 1) * 20 > self.cap() * 19 {
            self.rebuild(target_cap(self.len + 1));
        }
        self.insert_new(e);
        None
    }
}

/// The sharded index.
pub(crate) struct Index {
    shards: Box<[Mutex<Table>]>,
}

impl Index {
    pub fn new() -> Index {
        Index {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(Table::with_cap(MIN_CAP)))
                .collect(),
        }
    }

    fn shard(&self, key: u32) -> &Mutex<Table> {
        &self.shards[(mix(key) >> 58) as usize % SHARDS]
    }

    pub fn get(&self, key: u32) -> Option<Entry> {
        let t = self.shard(key).lock();
        t.find(key).map(|i| t.slots[i])
    }

    /// Inserts or replaces; returns the previous entry.
    pub fn insert(&self, key: u32, lsn_low: u32, loc: Loc) -> Option<Entry> {
        self.shard(key)
            .lock()
            .upsert(Entry::new(key, lsn_low, loc, false))
    }

    /// Inserts unless an entry exists (used when rebuilding from a manifest).
    pub fn insert_restored(&self, key: u32, lsn_low: u32, loc: Loc, hit: bool) -> bool {
        let mut t = self.shard(key).lock();
        if t.find(key).is_some() {
            return false;
        }
        t.upsert(Entry::new(key, lsn_low, loc, hit));
        true
    }

    pub fn remove(&self, key: u32) -> Option<Entry> {
        let mut t = self.shard(key).lock();
        let i = t.find(key)?;
        Some(t.remove_at(i))
    }

    /// Removes the entry only if it still points at `loc`.
    pub fn remove_if_at(&self, key: u32, loc: Loc) -> bool {
        let mut t = self.shard(key).lock();
        match t.find(key) {
            Some(i) if t.slots[i].loc() == loc => {
                t.remove_at(i);
                true
            }
            _ => false,
        }
    }

    /// Moves the entry from `from` to `to` (clearing the hit bit) only if it still points at
    /// `from` with the same LSN fingerprint.
    pub fn relocate(&self, key: u32, lsn_low: u32, from: Loc, to: Loc) -> bool {
        let mut t = self.shard(key).lock();
        match t.find(key) {
            Some(i) if t.slots[i].loc() == from && t.slots[i].lsn_low == lsn_low => {
                t.slots[i] = Entry::new(key, lsn_low, to, false);
                true
            }
            _ => false,
        }
    }

    /// Sets the hit bit if the entry is still exactly (`loc`, `lsn_low`).
    pub fn mark_hit(&self, key: u32, loc: Loc, lsn_low: u32) -> bool {
        let mut t = self.shard(key).lock();
        match t.find(key) {
            Some(i) if t.slots[i].loc() == loc && t.slots[i].lsn_low == lsn_low => {
                t.slots[i].loc |= 1;
                true
            }
            _ => false,
        }
    }

    /// Keeps only entries for which `keep` returns true; returns how many were removed.
    /// Locks one shard at a time.
    pub fn retain(&self, mut keep: impl FnMut(&Entry) -> bool) -> u64 {
        let mut removed = 0;
        for s in self.shards.iter() {
            let mut t = s.lock();
            let before = t.len;
            let kept: Vec<Entry> = t
                .slots
                .iter()
                .filter(|e| e.key != 0 && keep(e))
                .copied()
                .collect();
            if kept.len() != before {
                removed += (before - kept.len()) as u64;
                *t = Table::with_cap(target_cap(kept.len()));
                for e in kept {
                    t.insert_new(e);
                }
            }
        }
        removed
    }

    /// Calls `f` on every entry (one shard locked at a time).
    pub fn for_each(&self, mut f: impl FnMut(&Entry)) {
        for s in self.shards.iter() {
            let t = s.lock();
            t.slots.iter().filter(|e| e.key != 0).for_each(&mut f);
        }
    }

    pub fn clear(&self) -> u64 {
        let mut removed = 0;
        for s in self.shards.iter() {
            let mut t = s.lock();
            removed += t.len as u64;
            *t = Table::with_cap(MIN_CAP);
        }
        removed
    }

    pub fn len(&self) -> u64 {
        self.shards.iter().map(|s| s.lock().len as u64).sum()
    }

    /// DRAM bytes held by the index: every shard's slot array plus the shard headers.
    pub fn bytes(&self) -> u64 {
        let slots: usize = self
            .shards
            .iter()
            .map(|s| s.lock().cap() * size_of::<Entry>())
            .sum();
        (slots + self.shards.len() * size_of::<Mutex<Table>>() + size_of::<Index>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn matches_a_hashmap_under_random_ops() {
        let idx = Index::new();
        let mut model: HashMap<u32, (u32, Loc)> = HashMap::new();
        let mut x: u64 = 12345;
        for step in 0..200_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = ((x >> 33) % 5000) as u32 + 1;
            let loc = Loc {
                rid: step % 1000,
                slot: (step % 2000) as u16,
            };
            match (x >> 20) % 4 {
                0 | 1 => {
                    let old = idx.insert(key, step, loc).map(|e| (e.lsn_low, e.loc()));
                    assert_eq!(old, model.insert(key, (step, loc)));
                }
                2 => {
                    let old = idx.remove(key).map(|e| (e.lsn_low, e.loc()));
                    assert_eq!(old, model.remove(&key));
                }
                _ => {
                    let got = idx.get(key).map(|e| (e.lsn_low, e.loc()));
                    assert_eq!(got, model.get(&key).copied());
                }
            }
        }
        assert_eq!(idx.len(), model.len() as u64);
        let removed = idx.retain(|e| e.page_id() % 2 == 0);
        model.retain(|k, _| u64::from(*k - 1) % 2 == 0);
        assert_eq!(idx.len(), model.len() as u64);
        assert!(removed > 0);
        for (k, v) in &model {
            let e = idx.get(*k).expect("kept");
            assert_eq!((e.lsn_low, e.loc()), *v);
        }
    }

    #[test]
    fn bytes_per_entry_stays_under_16() {
        let idx = Index::new();
        for k in 1..=100_000u32 {
            idx.insert(k, k, Loc { rid: 1, slot: 1 });
        }
        let per = idx.bytes() as f64 / idx.len() as f64;
        assert!(per <= 16.0, "{per}");
    }

    #[test]
    fn key_range() {
        assert_eq!(key_of(0), Some(1));
        assert_eq!(key_of(u64::from(u32::MAX) - 2), Some(u32::MAX - 1));
        assert_eq!(key_of(u64::from(u32::MAX) - 1), None);
        assert_eq!(key_of(u64::MAX), None);
    }
}
