//! A long one-pass scan (each page touched once) does not push a hot set out of DRAM; a new
//! hot set does replace an old one.

mod common;

use common::*;
use tierdb_buffer::{BufferPool, PageId};

const FRAMES: u64 = 64;

fn read(pool: &BufferPool, id: u64) {
    let g = pool.read(PageId(id)).unwrap();
    assert_eq!(counter(&g), id);
}

/// Store reads (misses) caused by reading `ids` once.
fn misses(pool: &BufferPool, ids: impl Iterator<Item = u64>) -> (u64, u64) {
    let before = pool.stats().reads;
    let mut n = 0;
    for id in ids {
        read(pool, id);
        n += 1;
    }
    (pool.stats().reads - before, n)
}

#[test]
fn scan_does_not_flush_the_hot_set() {
    let store = TestStore::new();
    store.fill(5000, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(FRAMES, NO_FLUSHER, &store, &wal);
    let hot = 0..16u64;
    for _ in 0..3 {
        misses(&pool, hot.clone());
    }
    // A scan 60x the pool.
    let (scan_misses, scanned) = misses(&pool, 1000..5000);
    assert_eq!(scan_misses, scanned, "every scanned page is a miss");
    let (hot_misses, n) = misses(&pool, hot.clone());
    let hit_ratio = 1.0 - hot_misses as f64 / n as f64;
    assert!(
        hit_ratio >= 0.9,
        "hot set hit ratio after the scan: {hit_ratio} ({:?})",
        pool.stats()
    );
    assert!(pool.stats().pages_hot >= 16);
}

#[test]
fn a_new_hot_set_replaces_the_old_one() {
    let store = TestStore::new();
    store.fill(5000, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(FRAMES, NO_FLUSHER, &store, &wal);
    let old_hot = 0..30u64;
    let new_hot = 100..130u64;
    for _ in 0..3 {
        misses(&pool, old_hot.clone());
    }
    misses(&pool, 1000..1500);
    // The workload moves: the new set is read over and over, with scans in between.
    for round in 0..10u64 {
        misses(&pool, new_hot.clone());
        misses(&pool, new_hot.clone());
        misses(&pool, 2000 + round * 100..2000 + round * 100 + 100);
    }
    let (new_misses, n) = misses(&pool, new_hot.clone());
    assert!(
        new_misses * 10 <= n,
        "new hot set misses {new_misses}/{n} ({:?})",
        pool.stats()
    );
    let s = pool.stats();
    assert!(
        s.pages_hot <= FRAMES * 5 / 8 + 1,
        "hot region stays within its share: {s:?}"
    );
}
