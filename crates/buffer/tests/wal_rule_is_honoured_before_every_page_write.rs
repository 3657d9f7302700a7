//! Before any page with LSN L reaches the store, the WAL gate was asked to make L durable —
//! whichever path writes it (eviction, background flusher, flush_all).

mod common;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use common::*;
use tierdb_buffer::{BufferError, BufferPool, Lsn, PageId};

#[test]
fn wal_rule_is_honoured_before_every_page_write() {
    let wal = RecordingWal::new();
    let store = TestStore::checking_wal(wal.clone());
    // 16 frames and a 1 ms flusher: eviction and the flusher both write pages.
    let pool = pool(16, 1, &store, &wal);
    let mut lsn = 100u64;
    for i in 0..200u64 {
        let mut g = pool.create(PageId(i)).unwrap();
        format_with_counter(&mut g, PageId(i), i);
        lsn += 3;
        g.mark_dirty(Lsn(lsn));
    }
    for round in 0..5u64 {
        for i in (0..200u64).step_by(3) {
            let mut g = pool.write(PageId(i)).unwrap();
            set_counter(&mut g, round);
            lsn += 3;
            g.mark_dirty(Lsn(lsn));
        }
    }
    pool.flush_all().unwrap();
    let s = pool.stats();
    assert!(store.writes.load(Ordering::SeqCst) >= 200, "{s:?}");
    assert!(s.evictions_dirty > 0, "eviction wrote pages: {s:?}");
    assert!(wal.calls.load(Ordering::SeqCst) > 0);
    assert_eq!(
        store.wal_violations.load(Ordering::SeqCst),
        0,
        "a page reached the store before its redo"
    );
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
    assert_eq!(wal.flushed.load(Ordering::SeqCst), lsn);
}

#[test]
fn failed_redo_flush_keeps_the_page_out_of_the_store() {
    let wal = RecordingWal::new();
    let store = TestStore::checking_wal(wal.clone());
    let pool =
        BufferPool::new(config(16, NO_FLUSHER), store.clone(), wal.clone() as Arc<_>).unwrap();
    {
        let mut g = pool.create(PageId(1)).unwrap();
        format_with_counter(&mut g, PageId(1), 1);
        g.mark_dirty(Lsn(50));
    }
    wal.fail.store(true, Ordering::SeqCst);
    match pool.flush_all() {
        Err(BufferError::Wal(_)) => {}
        other => panic!("expected a WAL error, got {other:?}"),
    }
    assert_eq!(store.writes_of(PageId(1)), 0);
    assert_eq!(pool.stats().pages_dirty, 1);
    assert_eq!(pool.min_rec_lsn(), Some(Lsn(50)));
    // Not a store failure: once the log recovers, the page goes out.
    wal.fail.store(false, Ordering::SeqCst);
    pool.flush_all().unwrap();
    assert_eq!(store.writes_of(PageId(1)), 1);
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
}
