//! 1000 pages with distinct content through a 32-frame pool: every page is evicted (written,
//! read back) at least once, and every byte survives.

mod common;

use std::sync::atomic::Ordering;

use common::*;
use tierdb_buffer::{BufferPool, Lsn, PageId};

#[test]
fn pages_survive_eviction_through_the_store() {
    let store = TestStore::new();
    let wal = RecordingWal::new();
    let pool = pool(32, 5, &store, &wal);
    let mut lsn = 0u64;

    for i in 0..1000u64 {
        let id = PageId(i);
        let mut g = pool.create(id).unwrap();
        assert!(
            g.iter().all(|&b| b == 0),
            "created frame must be zero-filled"
        );
        format_with_counter(&mut g, id, i * 7 + 1);
        lsn += 1;
        g.mark_dirty(Lsn(lsn));
    }
    let s = pool.stats();
    assert!(s.evictions >= 1000 - 32, "{s:?}");
    assert!(s.pages_flushed >= 1000 - 32, "{s:?}");

    // Second pass: modify every page in place through write().
    for i in 0..1000u64 {
        let mut g = pool.write(PageId(i)).unwrap();
        assert_eq!(check_payload(&g, PageId(i)), i * 7 + 1);
        set_counter(&mut g, i * 7 + 2);
        lsn += 1;
        g.mark_dirty(Lsn(lsn));
    }
    for i in (0..1000u64).rev() {
        let g = pool.read(PageId(i)).unwrap();
        assert_eq!(check_payload(&g, PageId(i)), i * 7 + 2);
    }
    pool.flush_all().unwrap();
    assert_eq!(pool.stats().pages_dirty, 0);
    assert_eq!(pool.min_rec_lsn(), None);
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
    assert_eq!(store.bad_reads.load(Ordering::SeqCst), 0);
    pool.shutdown();
    drop(pool);

    // A fresh pool over the same file sees the same pages.
    let pool2 = BufferPool::new(config(16, NO_FLUSHER), store.clone(), wal.clone()).unwrap();
    for i in 0..1000u64 {
        let g = pool2.read(PageId(i)).unwrap();
        assert_eq!(check_payload(&g, PageId(i)), i * 7 + 2);
        assert!(g.lsn().0 > 1000, "the second version was written");
    }
}
