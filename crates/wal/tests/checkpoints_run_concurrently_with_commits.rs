//! Scenario: threads append and commit while another thread checkpoints at LSNs the
//! appenders returned, over small segments. Nothing deadlocks, old segments are reclaimed
//! while the log grows, and after a reopen the log reads back from the last checkpoint with
//! every record after it.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use tierdb_wal::{Lsn, Wal};

#[test]
fn checkpoints_run_concurrently_with_commits() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Arc::new(Wal::open(cfg(dir.path(), 16 * 1024)).unwrap());
    let latest = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let (wal, latest) = (Arc::clone(&wal), Arc::clone(&latest));
            std::thread::spawn(move || {
                for i in 0..600u64 {
                    let end = wal.append(&payload(t << 32 | i, 200), |_, _| {}).unwrap();
                    wal.commit(end).unwrap();
                    latest.fetch_max(end.0, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let ckpt = {
        let (wal, latest, stop) = (Arc::clone(&wal), Arc::clone(&latest), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let lsn = Lsn(latest.load(Ordering::SeqCst));
                if lsn > wal.checkpoint_lsn() {
                    wal.checkpoint(lsn).unwrap();
                    n += 1;
                }
                std::thread::yield_now();
            }
            n
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let checkpoints = ckpt.join().unwrap();
    assert!(checkpoints > 0);
    let stats = wal.stats();
    assert!(
        stats.segments_deleted > 0,
        "segments were reclaimed while the log grew"
    );
    let last_ckpt = wal.checkpoint_lsn();
    let after: Vec<_> = read_all(&wal, last_ckpt);
    let end = wal.end_lsn();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), 16 * 1024)).unwrap();
    assert_eq!(wal.checkpoint_lsn(), last_ckpt);
    assert_eq!(wal.end_lsn(), end);
    assert_eq!(read_all(&wal, last_ckpt), after);
    // Every record after the checkpoint is one a writer appended.
    for (_, p) in &after {
        assert_eq!(p.len(), 200);
    }
}
