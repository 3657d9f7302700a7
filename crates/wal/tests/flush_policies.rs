//! Scenarios for the commit policies (MySQL's `innodb_flush_log_at_trx_commit`):
//! `Periodic` (0) makes commits durable within about a second with no flush call;
//! `WriteAtCommit` (2) writes at commit without fsync, so a process crash loses nothing;
//! `Periodic` commits do no I/O, so a process crash may lose them; switching to
//! `EveryCommit` (1) fsyncs at the next commit.

mod common;

use std::time::{Duration, Instant};

use common::*;
use tierdb_wal::{FlushPolicy, Lsn, Wal};

#[test]
fn periodic_makes_commits_durable_within_about_a_second() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::Periodic;
    assert_eq!(c.flush_interval, Duration::from_secs(1), "default interval");
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let lsn = wal.append(b"periodic", |_, _| {}).unwrap();
    let t0 = Instant::now();
    wal.commit(lsn).unwrap();
    assert!(wal.durable_lsn() < lsn, "Periodic commit must not fsync");
    while wal.durable_lsn() < lsn {
        assert!(
            t0.elapsed() < Duration::from_millis(2500),
            "not durable after 2.5 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        devs.synced_lsn_single_segment() >= lsn.0,
        "the device saw the fsync"
    );
    eprintln!("durable after {:?}", t0.elapsed());
}

#[test]
fn write_at_commit_writes_without_fsync() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::WriteAtCommit;
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let lsn = wal.append(b"write at commit", |_, _| {}).unwrap();
    assert!(wal.written_lsn() < lsn);
    wal.commit(lsn).unwrap();
    assert_eq!(wal.written_lsn(), lsn, "written at commit");
    assert!(wal.durable_lsn() < lsn, "not fsynced at commit");
    assert_eq!(devs.total_syncs(), 0);
    let files = segment_files(dir.path());
    let bytes = std::fs::read(&files[0].1).unwrap();
    assert!(
        bytes.len() as u64 > lsn.0,
        "the file is zero-filled ahead of the log"
    );
    assert_eq!(
        &bytes[8..lsn.0 as usize],
        b"write at commit",
        "bytes are in the file"
    );
    assert!(
        bytes[lsn.0 as usize..].iter().all(|&b| b == 0),
        "zeros after the log"
    );
    // A process crash (the OS keeps its page cache) loses nothing.
    wal.simulate_crash();
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(
        read_all(&wal, Lsn(0)),
        vec![(Lsn(0), b"write at commit".to_vec())]
    );
}

#[test]
fn write_at_commit_is_fsynced_by_the_background_flusher() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::WriteAtCommit;
    c.flush_interval = Duration::from_millis(50);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let lsn = wal.append(b"x", |_, _| {}).unwrap();
    wal.commit(lsn).unwrap();
    let t0 = Instant::now();
    while wal.durable_lsn() < lsn {
        assert!(t0.elapsed() < Duration::from_secs(2));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(devs.total_syncs() >= 1);
}

#[test]
fn periodic_commit_does_no_io_and_a_crash_may_lose_it() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::Periodic;
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let first = wal.append(b"durable", |_, _| {}).unwrap();
    wal.flush_to(first).unwrap();
    let lsn = wal.append(b"volatile", |_, _| {}).unwrap();
    wal.commit(lsn).unwrap();
    assert_eq!(wal.written_lsn(), first, "Periodic commit wrote nothing");
    wal.simulate_crash();
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(read_all(&wal, Lsn(0)), vec![(Lsn(0), b"durable".to_vec())]);
}

#[test]
fn switching_to_every_commit_fsyncs_at_the_next_commit() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::Periodic;
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let lsn = wal.append(b"a", |_, _| {}).unwrap();
    wal.commit(lsn).unwrap();
    assert!(wal.durable_lsn() < lsn);
    wal.set_policy(FlushPolicy::from_mysql(1).unwrap());
    assert_eq!(wal.policy(), FlushPolicy::EveryCommit);
    let lsn = wal.append(b"b", |_, _| {}).unwrap();
    wal.commit(lsn).unwrap();
    assert_eq!(wal.durable_lsn(), lsn);
    assert!(devs.synced_lsn_single_segment() >= lsn.0);
}

#[test]
fn close_stops_the_flusher_and_refuses_more_work() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let lsn = wal.append(b"a", |_, _| {}).unwrap();
    wal.close().unwrap();
    assert_eq!(wal.durable_lsn(), lsn);
    assert!(matches!(
        wal.append(b"b", |_, _| {}),
        Err(tierdb_wal::WalError::Closed)
    ));
    assert!(matches!(wal.commit(lsn), Err(tierdb_wal::WalError::Closed)));
}
