//! Page lifecycle: `discard` drops a page without writing it even if dirty; `create` never
//! reads and zeroes a resident page; a created page released without `mark_dirty` is void.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use tierdb_buffer::{BufferError, Lsn, PageId};

#[test]
fn discarded_dirty_page_is_never_written() {
    let store = TestStore::new();
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    {
        let mut g = pool.create(PageId(4)).unwrap();
        format_with_counter(&mut g, PageId(4), 44);
        g.mark_dirty(Lsn(1));
    }
    {
        let mut g = pool.create(PageId(5)).unwrap();
        format_with_counter(&mut g, PageId(5), 55);
        g.mark_dirty(Lsn(2));
    }
    assert_eq!(pool.stats().pages_dirty, 2);
    pool.discard(PageId(4));
    pool.write(PageId(5)).unwrap().discard();
    let s = pool.stats();
    assert_eq!((s.pages_dirty, s.pages_data), (0, 0), "{s:?}");
    assert_eq!(pool.min_rec_lsn(), None);
    pool.flush_all().unwrap();
    assert_eq!(store.writes.load(Ordering::SeqCst), 0);
    // Not in DRAM and never written: a read goes to the store and finds nothing.
    assert!(matches!(pool.read(PageId(4)), Err(BufferError::Io { .. })));
    // Discarding a page that is not resident is harmless.
    pool.discard(PageId(999));
}

#[test]
fn create_zeroes_a_resident_page_without_reading() {
    let store = TestStore::new();
    store.fill(10, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    assert_eq!(counter(&pool.read(PageId(3)).unwrap()), 3);
    {
        let mut g = pool.create(PageId(3)).unwrap();
        assert!(g.iter().all(|&b| b == 0));
        format_with_counter(&mut g, PageId(3), 300);
        g.mark_dirty(Lsn(5));
    }
    assert_eq!(counter(&pool.read(PageId(3)).unwrap()), 300);
    {
        let mut g = pool.create(PageId(8)).unwrap();
        format_with_counter(&mut g, PageId(8), 800);
        g.mark_dirty(Lsn(6));
    }
    assert_eq!(store.reads_of(PageId(8)), 0, "create must not read");
    assert_eq!(counter(&pool.read(PageId(8)).unwrap()), 800);
}

#[test]
fn created_page_released_without_mark_dirty_is_void() {
    let store = TestStore::new();
    store.fill(10, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    {
        let mut g = pool.create(PageId(2)).unwrap();
        format_with_counter(&mut g, PageId(2), 222);
        // no mark_dirty
    }
    assert_eq!(pool.stats().pages_data, 0);
    // The store's version is what a reader sees.
    assert_eq!(counter(&pool.read(PageId(2)).unwrap()), 2);
}
