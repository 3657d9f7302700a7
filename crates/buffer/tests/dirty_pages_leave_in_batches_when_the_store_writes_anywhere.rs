//! With a store that writes any set of pages with one I/O (`writes_anywhere`, the relocating
//! data file), dirty pages leave DRAM in batches whether or not they are neighbours: the
//! flusher writes its round's pages together, an evicting thread writes its victim together
//! with the dirty cold frames the clock reaches next, and `flush_all` batches too. Every page
//! is written with the WAL rule honoured and its latest bytes survive.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use tierdb_buffer::{Lsn, PageId};

fn anywhere_store(wal: &std::sync::Arc<RecordingWal>, pages: u64) -> std::sync::Arc<TestStore> {
    let store = TestStore::checking_wal(wal.clone());
    store.anywhere.store(true, Ordering::SeqCst);
    store.fill(pages, |i| i);
    store
}

#[test]
fn the_flusher_writes_scattered_dirty_pages_in_batches() {
    let wal = RecordingWal::new();
    let store = anywhere_store(&wal, 200);
    // 1024 frames: batches of up to 16 pages.
    let pool = pool(1024, 5, &store, &wal);
    // 40 dirty pages, no two of them neighbours.
    let ids: Vec<u64> = (0..40).map(|i| i * 5).collect();
    add_to_counters_and_flush(&pool, &ids, 1000);
    let s = pool.stats();
    assert_eq!(s.pages_flushed, 40);
    assert!(s.write_ios <= 3, "40 pages in batches of 16: {s:?}");
    for id in 0..200u64 {
        let written = ids.contains(&id);
        assert_eq!(store.writes_of(PageId(id)), u64::from(written), "page {id}");
        let on_disk = check_payload(&store.get_raw(PageId(id)), PageId(id));
        assert_eq!(on_disk, if written { id + 1000 } else { id }, "page {id}");
    }
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
}

#[test]
fn evicting_threads_write_dirty_victims_in_batches_and_nothing_is_lost() {
    let wal = RecordingWal::new();
    let pages = 3000u64;
    let store = anywhere_store(&wal, pages);
    // No flusher thread: only evictions write.
    let pool = pool(1024, 0, &store, &wal);
    let mut lsn = 100;
    let mut want: Vec<u64> = (0..pages).collect();
    // Dirty every page once, in a scattered order, through a pool a third of their number:
    // most evictions find only dirty victims.
    for step in 0..pages {
        let id = (step * 7) % pages;
        let mut g = pool.write(PageId(id)).unwrap();
        let c = counter(&g);
        set_counter(&mut g, c + 10_000);
        lsn += 1;
        g.mark_dirty(Lsn(lsn));
        want[id as usize] = id + 10_000;
    }
    let s = pool.stats();
    // Nearly every page had to be written to make room (only the last 1024 may stay).
    assert!(s.pages_flushed >= pages - 1024, "{s:?}");
    let batches = store.batches.lock().unwrap().clone();
    let in_batches: usize = batches.iter().sum();
    assert!(
        in_batches as u64 * 10 >= s.pages_flushed * 9,
        "{in_batches} of {} pages went through write_batch",
        s.pages_flushed
    );
    let mean = in_batches as f64 / batches.len() as f64;
    assert!(mean >= 4.0, "pages per batch {mean:.2}: {batches:?}");
    assert!(s.write_ios * 4 <= s.pages_flushed, "{s:?}");
    // Every page reads back with its last change, from DRAM or from the store.
    for id in 0..pages {
        let g = pool.read(PageId(id)).unwrap();
        assert_eq!(counter(&g), want[id as usize], "page {id}");
    }
    pool.flush_all().unwrap();
    for id in 0..pages {
        let on_disk = check_payload(&store.get_raw(PageId(id)), PageId(id));
        assert_eq!(on_disk, want[id as usize], "page {id} on disk");
    }
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
}

#[test]
fn flush_all_writes_in_batches() {
    let wal = RecordingWal::new();
    let store = anywhere_store(&wal, 100);
    let pool = pool(1024, 0, &store, &wal);
    for id in (0..100u64).step_by(2) {
        let mut g = pool.write(PageId(id)).unwrap();
        set_counter(&mut g, id + 7);
        g.mark_dirty(Lsn(200 + id));
    }
    pool.flush_all().unwrap();
    let s = pool.stats();
    assert_eq!(s.pages_dirty, 0);
    assert_eq!(s.pages_flushed, 50);
    assert!(s.write_ios <= 4, "50 pages in batches of 16: {s:?}");
    for id in (0..100u64).step_by(2) {
        assert_eq!(
            check_payload(&store.get_raw(PageId(id)), PageId(id)),
            id + 7
        );
    }
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
}
