//! A page that fails verification on its way in is an error naming the page — never bytes
//! handed out, never a hang for the threads waiting on the same load, never a leaked frame.

mod common;

use std::sync::atomic::Ordering;
use std::sync::{Arc, Barrier};

use common::*;
use tierdb_buffer::{BufferError, PageId, PAGE_SIZE};
use tierdb_page::PageError;

#[test]
fn corrupt_page_read_is_reported_with_its_page_id() {
    let store = TestStore::new();
    store.fill(64, |i| i);
    // Page 3: a torn write (one flipped bit). Page 5: page 6's bytes at page 5's offset.
    let mut torn = store.get_raw(PageId(3));
    torn[PAGE_SIZE - 100] ^= 0x10;
    store.put_raw(PageId(3), &torn);
    store.put_raw(PageId(5), &store.get_raw(PageId(6)));
    // Page 70: never written, inside the file (zero-filled hole).
    store.put_raw(PageId(71), &page_bytes(PageId(71), 71));
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);

    match pool.read(PageId(3)) {
        Err(BufferError::Corrupt {
            page,
            error: PageError::ChecksumMismatch { .. },
        }) => {
            assert_eq!(page, PageId(3))
        }
        other => panic!("expected a checksum error for page 3, got {other:?}"),
    }
    match pool.write(PageId(5)) {
        Err(BufferError::Corrupt {
            page,
            error:
                PageError::WrongPageId {
                    expected: 5,
                    found: 6,
                },
        }) => {
            assert_eq!(page, PageId(5))
        }
        other => panic!("expected a wrong-page error for page 5, got {other:?}"),
    }
    match pool.read(PageId(70)) {
        Err(BufferError::Corrupt {
            page,
            error: PageError::BadMagic { .. },
        }) => assert_eq!(page, PageId(70)),
        other => panic!("expected a never-written page 70 to be corrupt, got {other:?}"),
    }
    match pool.read(PageId(1000)) {
        Err(BufferError::Io { page, .. }) => assert_eq!(page, PageId(1000)),
        other => panic!("expected an I/O error past the end of the file, got {other:?}"),
    }
    let s = pool.stats();
    assert_eq!(s.verify_failures, 3);
    assert_eq!(s.pages_data, 0, "failed loads leave no mapped frame: {s:?}");
    assert_eq!(s.pages_free, 16);
    // Every frame is still usable.
    for i in 6..60 {
        let g = pool.read(PageId(i)).unwrap();
        assert_eq!(check_payload(&g, PageId(i)), i);
    }
    // A fixed page can be read once it is good again.
    store.put_raw(PageId(3), &page_bytes(PageId(3), 3));
    assert_eq!(counter(&pool.read(PageId(3)).unwrap()), 3);
}

#[test]
fn threads_waiting_on_a_corrupt_load_all_get_the_error() {
    let store = TestStore::new();
    store.fill(8, |i| i);
    let mut torn = store.get_raw(PageId(2));
    torn[200] ^= 1;
    store.put_raw(PageId(2), &torn);
    store.read_delay_ms.store(20, Ordering::SeqCst);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    let barrier = Arc::new(Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let pool = Arc::clone(&pool);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                match pool.read(PageId(2)) {
                    Err(BufferError::Corrupt { page, .. }) => assert_eq!(page, PageId(2)),
                    other => panic!("expected corrupt page 2, got {other:?}"),
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(pool.stats().pages_data, 0);
    assert!(store.reads_of(PageId(2)) >= 1);
}
