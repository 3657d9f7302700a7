//! A failed store write is sticky: the pool refuses writes and flushes from then on, while
//! reads (resident pages, and misses that can use clean frames) go on.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use tierdb_buffer::{BufferError, Lsn, PageId};

fn dirty(pool: &tierdb_buffer::BufferPool, id: u64, lsn: u64) {
    let mut g = pool.create(PageId(id)).unwrap();
    format_with_counter(&mut g, PageId(id), id);
    g.mark_dirty(Lsn(lsn));
}

#[test]
fn failed_page_write_poisons_the_pool() {
    let store = TestStore::new();
    store.fill(200, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(32, NO_FLUSHER, &store, &wal);
    for i in 0..4 {
        dirty(&pool, 1000 + i, 10 + i);
    }
    drop(pool.read(PageId(7)).unwrap());
    store.fail_writes.store(true, Ordering::SeqCst);

    match pool.flush_all() {
        Err(BufferError::Io { page, .. }) => assert!(page.0 >= 1000, "{page:?}"),
        other => panic!("expected the write error, got {other:?}"),
    }
    assert!(pool.is_poisoned());
    // Sticky, even once the store is healthy again.
    store.fail_writes.store(false, Ordering::SeqCst);
    assert!(matches!(pool.flush_all(), Err(BufferError::Poisoned(_))));
    assert!(matches!(
        pool.write(PageId(7)),
        Err(BufferError::Poisoned(_))
    ));
    assert!(matches!(
        pool.create(PageId(2000)),
        Err(BufferError::Poisoned(_))
    ));
    assert!(matches!(pool.sync_store(), Err(BufferError::Poisoned(_))));
    // Reads go on: resident pages, and misses served through clean frames.
    assert_eq!(counter(&pool.read(PageId(7)).unwrap()), 7);
    assert_eq!(counter(&pool.read(PageId(1001)).unwrap()), 1001);
    for i in 0..100 {
        assert_eq!(counter(&pool.read(PageId(i)).unwrap()), i);
    }
    // The dirty pages were never evicted (nor written) after the failure.
    for i in 0..4 {
        assert_eq!(store.writes_of(PageId(1000 + i)), 0);
        assert_eq!(counter(&pool.read(PageId(1000 + i)).unwrap()), 1000 + i);
    }
    assert_eq!(pool.stats().pages_dirty, 4);
}

#[test]
fn failed_eviction_write_poisons_the_pool_and_reads_go_on() {
    let store = TestStore::new();
    store.fill(200, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    store.fail_writes.store(true, Ordering::SeqCst);
    // Every frame dirty: the next miss has to evict a dirty page, and that write fails.
    for i in 0..16 {
        dirty(&pool, 1000 + i, 10 + i);
    }
    let r = pool.read(PageId(1));
    assert!(pool.is_poisoned());
    assert!(
        matches!(r, Err(BufferError::Poisoned(_))),
        "no clean frame left: {r:?}"
    );
    assert!(matches!(
        pool.write(PageId(1000)),
        Err(BufferError::Poisoned(_))
    ));
    // Resident pages still read fine.
    for i in 0..16 {
        assert_eq!(counter(&pool.read(PageId(1000 + i)).unwrap()), 1000 + i);
    }
}

#[test]
fn failed_sync_poisons_the_pool() {
    let store = TestStore::new();
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    dirty(&pool, 1, 1);
    store.fail_sync.store(true, Ordering::SeqCst);
    assert!(matches!(pool.flush_all(), Err(BufferError::Sync { .. })));
    assert!(matches!(
        pool.write(PageId(1)),
        Err(BufferError::Poisoned(_))
    ));
}
