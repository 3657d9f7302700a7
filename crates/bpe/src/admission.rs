//! The `second_touch` admission filter: a two-generation Bloom filter of page ids seen
//! recently (evicted clean, or dirtied while cached).
//!
//! Owns: two bit arrays of `8 × window` bits each, 3 hash probes; inserts go to the current
//! generation, lookups check both; after `window` inserts the older generation is cleared
//! and becomes current. A page is thus remembered for between one and two windows.
//!
//! Must never: block (bits are atomics; rotation is a try-lock, a lost race only delays it);
//! produce a false negative for a page inserted in the current or previous generation.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

const PROBES: u32 = 3;

pub(crate) struct GhostFilter {
    gens: [Box<[AtomicU64]>; 2],
    bits: u64,
    current: AtomicUsize,
    inserted: AtomicU64,
    window: u64,
    rotate: Mutex<()>,
}

impl GhostFilter {
    /// A filter remembering roughly `window` recent page ids per generation.
    pub fn new(window: u64) -> GhostFilter {
        let window = window.max(1024);
        let words = (window * 8).div_ceil(64) as usize;
        let mk = || (0..words).map(|_| AtomicU64::new(0)).collect::<Box<[_]>>();
        GhostFilter {
            gens: [mk(), mk()],
            bits: words as u64 * 64,
            current: AtomicUsize::new(0),
            inserted: AtomicU64::new(0),
            window,
            rotate: Mutex::new(()),
        }
    }

    fn probes(&self, key: u32) -> impl Iterator<Item = u64> + '_ {
        let h = u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h1 = h ^ (h >> 29);
        let h2 = (h.rotate_left(31) | 1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (0..u64::from(PROBES)).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % self.bits)
    }

    fn contains_in(&self, g: usize, key: u32) -> bool {
        self.probes(key)
            .all(|b| self.gens[g][(b / 64) as usize].load(Ordering::Relaxed) & (1 << (b % 64)) != 0)
    }

    /// Was `key` seen within the window? Records it either way.
    pub fn seen_then_insert(&self, key: u32) -> bool {
        let seen = self.contains_in(0, key) || self.contains_in(1, key);
        self.insert(key);
        seen
    }

    /// Records `key`.
    pub fn insert(&self, key: u32) {
        let g = self.current.load(Ordering::Relaxed) & 1;
        for b in self.probes(key) {
            self.gens[g][(b / 64) as usize].fetch_or(1 << (b % 64), Ordering::Relaxed);
        }
        if self.inserted.fetch_add(1, Ordering::Relaxed) + 1 >= self.window {
            if let Some(_g) = self.rotate.try_lock() {
                if self.inserted.load(Ordering::Relaxed) >= self.window {
                    let old = (self.current.load(Ordering::Relaxed) + 1) & 1;
                    for w in self.gens[old].iter() {
                        w.store(0, Ordering::Relaxed);
                    }
                    self.current.store(old, Ordering::Relaxed);
                    self.inserted.store(0, Ordering::Relaxed);
                }
            }
        }
    }

    /// DRAM bytes held by the filter.
    pub fn bytes(&self) -> u64 {
        self.bits / 8 * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_within_window_and_forgets_after_two() {
        let f = GhostFilter::new(1024);
        assert!(!f.seen_then_insert(7));
        assert!(f.seen_then_insert(7));
        for k in 10_000..11_100 {
            f.insert(k);
        }
        assert!(
            f.seen_then_insert(7),
            "one window later it is still remembered"
        );
        for k in 20_000..22_200 {
            f.insert(k);
        }
        let fresh = (30_000..30_100).filter(|&k| f.seen_then_insert(k)).count();
        assert!(fresh < 10, "false positives {fresh}");
    }
}
