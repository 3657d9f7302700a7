//! Scenario: an fsync of the redo log fails. The commit that needed it returns the error;
//! from then on every append, flush, commit and checkpoint returns `Poisoned` with the
//! original error text, even after the device recovers (an fsync is never retried).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tierdb_wal::{FlushPolicy, Lsn, Wal, WalError};

fn assert_poisoned(r: Result<impl std::fmt::Debug, WalError>, needle: &str) {
    match r {
        Err(WalError::Poisoned(msg)) => {
            assert!(
                msg.contains(needle),
                "poison message {msg:?} lacks {needle:?}"
            )
        }
        other => panic!("expected Poisoned, got {other:?}"),
    }
}

#[test]
fn failed_fsync_poisons_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let ok = wal.append(b"before", |_, _| {}).unwrap();
    wal.commit(ok).unwrap();

    devs.last().fail_nth_sync(1);
    let lsn = wal.append(b"doomed", |_, _| {}).unwrap();
    let err = wal.commit(lsn).unwrap_err();
    assert!(
        matches!(err, WalError::Io { .. }),
        "first error is the I/O error: {err:?}"
    );
    assert!(err.to_string().contains("injected sync fault"), "{err}");
    assert!(
        wal.durable_lsn() < lsn,
        "durable must not advance past a failed fsync"
    );

    // The device works again, but the log must not pretend.
    assert_eq!(devs.last().plan(), Default::default());
    assert_poisoned(wal.append(b"after", |_, _| {}), "injected sync fault");
    assert_poisoned(wal.flush_to(lsn), "injected sync fault");
    assert_poisoned(wal.commit(lsn), "injected sync fault");
    assert_poisoned(wal.checkpoint(ok), "injected sync fault");
    wal.set_policy(FlushPolicy::Periodic);
    assert_poisoned(wal.commit(lsn), "injected sync fault");
    assert_poisoned(wal.close(), "injected sync fault");
    let syncs = devs.total_syncs();
    drop(wal);
    assert_eq!(
        devs.total_syncs(),
        syncs,
        "no fsync retried after the failure"
    );

    // Reopen: the record before the failure is there (it was fsynced).
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let got = read_all(&wal, Lsn(0));
    assert!(!got.is_empty() && got[0].1 == b"before");
}

#[test]
fn waiters_of_a_failed_group_commit_all_fail() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::with_sync_delay(Duration::from_millis(5));
    let mut c = cfg(dir.path(), 1 << 20);
    c.flush_interval = Duration::from_secs(3600);
    let wal = Arc::new(Wal::open_with(c, devs.opener()).unwrap());
    wal.append(b"x", |_, _| {}).unwrap();
    devs.last().fail_all_syncs(true);
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let wal = Arc::clone(&wal);
            std::thread::spawn(move || {
                let lsn = wal.append(format!("r{i}").as_bytes(), |_, _| {});
                match lsn {
                    Ok(lsn) => wal.commit(lsn).is_err(),
                    Err(_) => true,
                }
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap(), "every committer sees the failure");
    }
    assert!(matches!(wal.flush_to(Lsn(1)), Err(WalError::Poisoned(_))));
}

#[test]
fn background_flusher_failure_poisons_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.policy = FlushPolicy::Periodic;
    c.flush_interval = Duration::from_millis(20);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    devs.last().fail_nth_sync(1);
    let lsn = wal.append(b"x", |_, _| {}).unwrap();
    wal.commit(lsn).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while wal.append(b"y", |_, _| {}).is_ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "flusher failure never surfaced"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_poisoned(wal.commit(lsn), "injected sync fault");
}
