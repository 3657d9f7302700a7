//! Scenario: many threads append at once, with a log buffer small enough that appenders
//! keep having to write it out. The `in_lock` callbacks run in log order with contiguous
//! positions (what the B+tree relies on to stamp page LSNs), and every record reads back.

mod common;

use std::sync::Arc;

use common::*;
use parking_lot::Mutex;
use tierdb_wal::{Lsn, Wal};

#[test]
fn appends_are_stamped_in_log_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(dir.path(), 64 * 1024);
    c.buffer_size_bytes = 4096;
    let wal = Arc::new(Wal::open(c).unwrap());
    let order: Arc<Mutex<Vec<(Lsn, Lsn, u64)>>> = Arc::default();
    let handles: Vec<_> = (0..8u64)
        .map(|t| {
            let wal = Arc::clone(&wal);
            let order = Arc::clone(&order);
            std::thread::spawn(move || {
                for i in 0..400u64 {
                    let id = t * 1_000_000 + i;
                    let p = payload(id, 1 + (i as usize * 131) % 1500);
                    let end = wal
                        .append(&p, |s, e| order.lock().push((s, e, id)))
                        .unwrap();
                    if i % 50 == 0 {
                        wal.commit(end).unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let order = order.lock().clone();
    assert_eq!(order.len(), 3200);
    assert_eq!(order[0].0, Lsn(0));
    for w in order.windows(2) {
        assert_eq!(
            w[0].1, w[1].0,
            "in_lock calls are in log order and contiguous"
        );
    }
    assert!(
        wal.stats().buffer_full_writes > 0,
        "the buffer-full path was exercised"
    );
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len(), order.len());
    for ((lsn, p), (s, e, id)) in got.iter().zip(&order) {
        assert_eq!(lsn, s);
        assert_eq!(p.len() as u64 + 8, e.0 - s.0);
        assert_eq!(p, &payload(*id, p.len()));
    }
}
