//! Threads that miss on the same page at once wait on the loading frame's latch instead of
//! reading the page again.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use common::*;
use tierdb_buffer::{Lsn, PageId};

#[test]
fn concurrent_misses_on_the_same_page_read_it_once() {
    let store = TestStore::new();
    store.fill(16, |i| i * 10);
    store.read_delay_ms.store(50, Ordering::SeqCst);
    let wal = RecordingWal::new();
    let pool = pool(32, NO_FLUSHER, &store, &wal);

    let barrier = Arc::new(Barrier::new(32));
    let lsn = Arc::new(AtomicU64::new(1));
    let handles: Vec<_> = (0..32u64)
        .map(|t| {
            let pool = Arc::clone(&pool);
            let barrier = Arc::clone(&barrier);
            let lsn = Arc::clone(&lsn);
            std::thread::spawn(move || {
                barrier.wait();
                if t % 4 == 0 {
                    let mut g = pool.write(PageId(5)).unwrap();
                    let c = check_payload(&g, PageId(5));
                    set_counter(&mut g, c + 1);
                    g.mark_dirty(Lsn(lsn.fetch_add(1, Ordering::SeqCst)));
                } else {
                    let g = pool.read(PageId(5)).unwrap();
                    check_payload(&g, PageId(5));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        store.reads_of(PageId(5)),
        1,
        "page 5 was read more than once"
    );
    let g = pool.read(PageId(5)).unwrap();
    assert_eq!(
        check_payload(&g, PageId(5)),
        50 + 8,
        "8 writers each added one"
    );
    assert_eq!(pool.stats().reads, 1);
    assert_eq!(pool.stats().pages_data, 1);
}
