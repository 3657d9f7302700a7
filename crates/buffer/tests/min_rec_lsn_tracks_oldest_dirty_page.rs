//! `min_rec_lsn` is the LSN at which the oldest still-dirty page first went dirty, and a page
//! stays counted until its write has completed (not merely started).

mod common;

use std::sync::Arc;

use common::*;
use tierdb_buffer::{BufferPool, Lsn, PageId};

fn modify(pool: &BufferPool, id: u64, lsn: u64) {
    let mut g = pool.write(PageId(id)).unwrap();
    let c = counter(&g);
    set_counter(&mut g, c + 1);
    g.mark_dirty(Lsn(lsn));
}

#[test]
fn min_rec_lsn_tracks_oldest_dirty_page() {
    let store = TestStore::new();
    store.fill(10, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    assert_eq!(pool.min_rec_lsn(), None);

    modify(&pool, 1, 10);
    modify(&pool, 2, 20);
    modify(&pool, 3, 30);
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(10)));
    // Dirtying an already-dirty page keeps its first LSN.
    modify(&pool, 1, 40);
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(10)));
    assert_eq!(pool.read(PageId(1)).unwrap().lsn(), Lsn(40));

    // While page 1's write is in progress, it still counts.
    let gate = store.gate_write(PageId(1));
    let flusher = {
        let pool = Arc::clone(&pool);
        std::thread::spawn(move || pool.flush_all())
    };
    gate.wait_entered();
    assert_eq!(
        pool.min_rec_lsn(),
        Some(Lsn(10)),
        "page 1 is being written, not written"
    );
    // Readers are not blocked by the write (the flusher holds the latch shared).
    assert_eq!(counter(&pool.read(PageId(1)).unwrap()), 3);
    gate.open();
    flusher.join().unwrap().unwrap();
    assert_eq!(pool.min_rec_lsn(), None);
    assert_eq!(pool.stats().pages_dirty, 0);

    // Clean → dirty again starts a new rec_lsn.
    modify(&pool, 3, 50);
    modify(&pool, 2, 60);
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(50)));
}

#[test]
fn rec_lsn_is_the_start_of_the_first_record() {
    let store = TestStore::new();
    store.fill(4, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    {
        let mut g = pool.write(PageId(2)).unwrap();
        set_counter(&mut g, 9);
        g.mark_dirty_range(Lsn(100), Lsn(180));
        assert_eq!(g.lsn(), Lsn(180));
    }
    {
        let mut g = pool.write(PageId(2)).unwrap();
        set_counter(&mut g, 10);
        g.mark_dirty_range(Lsn(200), Lsn(260));
    }
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(100)));
    pool.flush_all().unwrap();
    assert_eq!(tierdb_page::page_lsn(&store.get_raw(PageId(2))), Lsn(260));
    assert!(wal.flushed.load(std::sync::atomic::Ordering::SeqCst) >= 260);
    assert_eq!(pool.min_rec_lsn(), None);
}

/// Eviction writes are not synced one by one: the page leaves `min_rec_lsn` only once a
/// store sync covers its write.
#[test]
fn evicted_dirty_page_leaves_min_rec_lsn() {
    let store = TestStore::new();
    store.fill(100, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    modify(&pool, 0, 5);
    modify(&pool, 1, 7);
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(5)));
    // Push both out through eviction: pin every other frame so the only victims are the
    // two dirty pages (with clean frames available they would be skipped).
    let mut held: Vec<_> = (10..24).map(|i| pool.read(PageId(i)).unwrap()).collect();
    held.push(pool.read(PageId(50)).unwrap());
    held.push(pool.read(PageId(51)).unwrap());
    assert_eq!(pool.stats().pages_dirty, 0);
    assert!(store.writes_of(PageId(0)) == 1 && store.writes_of(PageId(1)) == 1);
    // Written but not yet synced: the redo is still needed.
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(5)));
    pool.sync_store().unwrap();
    assert_eq!(pool.min_rec_lsn(), None);
    drop(held);
    assert_eq!(counter(&pool.read(PageId(0)).unwrap()), 1);
}
