//! No lock but the frame's own latch is held across a disk read: 64 threads missing on 64
//! different pages of a 50 ms/read store have their reads in flight at the same time.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::*;
use tierdb_buffer::PageId;

const THREADS: u64 = 64;
const DELAY_MS: u64 = 50;

fn run_misses(pool: &Arc<tierdb_buffer::BufferPool>, first: u64) -> Duration {
    let barrier = Arc::new(Barrier::new(THREADS as usize));
    let start = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let pool = Arc::clone(pool);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let id = PageId(first + t);
                let g = pool.read(id).unwrap();
                assert_eq!(check_payload(&g, id), id.0 + 1000);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    start.elapsed()
}

#[test]
fn concurrent_misses_on_a_slow_disk_overlap() {
    let store = TestStore::new();
    store.fill(256, |i| i + 1000);
    store.read_delay_ms.store(DELAY_MS, Ordering::SeqCst);
    let wal = RecordingWal::new();
    let pool = pool(128, NO_FLUSHER, &store, &wal);

    let took = run_misses(&pool, 0);
    let serial = Duration::from_millis(THREADS * DELAY_MS);
    assert!(
        took < serial / 4,
        "64 misses took {took:?}; serial would be {serial:?}"
    );
    assert!(
        store.max_reads_in_flight.load(Ordering::SeqCst) >= 32,
        "only {} reads in flight at once",
        store.max_reads_in_flight.load(Ordering::SeqCst)
    );
    assert_eq!(pool.stats().reads, THREADS);
}

#[test]
fn concurrent_misses_that_must_evict_still_overlap() {
    let store = TestStore::new();
    store.fill(256, |i| i + 1000);
    let wal = RecordingWal::new();
    let pool = pool(64, NO_FLUSHER, &store, &wal);
    // Fill every frame with other (clean) pages first: each miss below must evict.
    for i in 128..192 {
        drop(pool.read(PageId(i)).unwrap());
    }
    assert_eq!(pool.stats().pages_free, 0);
    store.read_delay_ms.store(DELAY_MS, Ordering::SeqCst);
    let took = run_misses(&pool, 0);
    let serial = Duration::from_millis(THREADS * DELAY_MS);
    assert!(
        took < serial / 4,
        "64 evicting misses took {took:?}; serial would be {serial:?}"
    );
    assert!(store.max_reads_in_flight.load(Ordering::SeqCst) >= 32);
    assert!(pool.stats().evictions >= THREADS);
}
