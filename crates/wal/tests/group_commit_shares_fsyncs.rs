//! Scenario: many threads commit at once under `EveryCommit` on a disk whose fsync is slow.
//! Every commit is durable when it returns (checked against what the device itself saw
//! fsynced, not only the log's own counter), and concurrent commits share fsyncs.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tierdb_wal::{FlushPolicy, Lsn, Wal};

const THREADS: u64 = 32;
const COMMITS_PER_THREAD: u64 = 50;

#[test]
fn group_commit_shares_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::with_sync_delay(Duration::from_millis(2));
    let mut c = cfg(dir.path(), 64 << 20);
    c.policy = FlushPolicy::EveryCommit;
    c.flush_interval = Duration::from_secs(3600);
    let wal = Arc::new(Wal::open_with(c, devs.opener()).unwrap());

    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let wal = Arc::clone(&wal);
            let devs = Arc::clone(&devs);
            std::thread::spawn(move || {
                for i in 0..COMMITS_PER_THREAD {
                    let p = payload(t * 1000 + i, 100 + (i as usize % 7) * 10);
                    let lsn = wal.append(&p, |_, _| {}).unwrap();
                    wal.commit(lsn).unwrap();
                    assert!(wal.durable_lsn() >= lsn, "commit returned before durable");
                    assert!(
                        devs.synced_lsn_single_segment() >= lsn.0,
                        "the device has not fsynced the committed record"
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }

    let commits = THREADS * COMMITS_PER_THREAD;
    let device_syncs = devs.total_syncs();
    let stats = wal.stats();
    eprintln!(
        "commits={commits} device fsyncs={device_syncs} wal fsync rounds={} avg group={:.1}",
        stats.fsyncs,
        stats.avg_commits_per_fsync()
    );
    assert_eq!(stats.commits, commits);
    assert_eq!(
        stats.fsyncs, device_syncs,
        "one device fsync per round with one segment"
    );
    assert!(
        device_syncs < commits,
        "no sharing at all: {device_syncs} fsyncs for {commits} commits"
    );
    assert!(
        device_syncs * 4 <= commits,
        "too little sharing: {device_syncs} fsyncs for {commits} commits"
    );
    assert!(stats.avg_commits_per_fsync() > 1.0);

    // Everything committed is in the log.
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len() as u64, commits);
}

#[test]
fn flush_to_an_already_durable_lsn_does_no_io() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 64 << 20);
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let lsn = wal.append(b"one", |_, _| {}).unwrap();
    wal.flush_to(lsn).unwrap();
    let syncs = devs.total_syncs();
    for _ in 0..10 {
        wal.flush_to(lsn).unwrap();
        wal.commit(lsn).unwrap();
    }
    assert_eq!(devs.total_syncs(), syncs);
}
