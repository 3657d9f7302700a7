//! The background flusher writes a dirty page together with the dirty pages next to it in
//! the data file (one store write per run of up to 16 pages), each page exactly once, with
//! the WAL rule honoured for the whole run.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use tierdb_buffer::PageId;

#[test]
fn flusher_writes_adjacent_dirty_pages_together() {
    let wal = RecordingWal::new();
    let store = TestStore::checking_wal(wal.clone());
    store.fill(32, |i| i);
    // 1024 frames: runs of up to 16 pages (a pool allows runs of frames / 64).
    let pool = pool(1024, 5, &store, &wal);
    // Pages 0..=16 form one adjacent dirty stretch (longer than one run), page 20 stands alone.
    let ids: Vec<u64> = (0..=16).chain([20]).collect();
    add_to_counters_and_flush(&pool, &ids, 1000);
    let s = pool.stats();
    assert_eq!(s.pages_flushed, 18);
    // Oldest first: run 0..=15 (16 pages), then 16 alone (15 is clean by then), then 20.
    assert_eq!(s.write_ios, 3, "{s:?}");
    for id in 0..32u64 {
        let expect_written = id <= 16 || id == 20;
        assert_eq!(
            store.writes_of(PageId(id)),
            u64::from(expect_written),
            "page {id}"
        );
        let on_disk = check_payload(&store.get_raw(PageId(id)), PageId(id));
        assert_eq!(
            on_disk,
            if expect_written { id + 1000 } else { id },
            "page {id}"
        );
    }
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
}
