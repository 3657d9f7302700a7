//! Scenario: a write of the log buffer to the segment file fails (or is torn with an
//! error). The caller gets the error, the log is poisoned for good, and after a reopen the
//! log holds exactly the records that were durable before, never a partial record.

mod common;

use std::time::Duration;

use common::*;
use tierdb_wal::{FlushPolicy, Lsn, Wal, WalError};

#[test]
fn failed_write_poisons_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let ok = wal.append(b"durable", |_, _| {}).unwrap();
    wal.commit(ok).unwrap();

    devs.last().fail_nth_write(1);
    let lsn = wal.append(b"lost", |_, _| {}).unwrap();
    let err = wal.commit(lsn).unwrap_err();
    assert!(err.to_string().contains("injected write fault"), "{err}");
    for r in [
        wal.append(b"more", |_, _| {}).map(|_| ()),
        wal.flush_to(lsn),
        wal.commit(ok),
        wal.checkpoint(ok),
    ] {
        match r {
            Err(WalError::Poisoned(msg)) => assert!(msg.contains("injected write fault"), "{msg}"),
            other => panic!("expected Poisoned, got {other:?}"),
        }
    }
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got, vec![(Lsn(0), b"durable".to_vec())]);
}

#[test]
fn torn_write_with_error_poisons_and_the_torn_bytes_are_cut_at_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.flush_interval = Duration::from_secs(3600);
    c.policy = FlushPolicy::WriteAtCommit;
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    let ok = wal.append(b"durable", |_, _| {}).unwrap();
    wal.flush_to(ok).unwrap();
    devs.last().tear_nth_write_then_fail(1);
    let lsn = wal.append(&payload(7, 1000), |_, _| {}).unwrap();
    assert!(wal.commit(lsn).is_err());
    assert!(matches!(
        wal.append(b"x", |_, _| {}),
        Err(WalError::Poisoned(_))
    ));
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(read_all(&wal, Lsn(0)), vec![(Lsn(0), b"durable".to_vec())]);
    assert_eq!(wal.end_lsn(), ok);
}

#[test]
fn failed_write_when_the_buffer_is_full_fails_the_append() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let mut c = cfg(dir.path(), 1 << 20);
    c.flush_interval = Duration::from_secs(3600);
    c.buffer_size_bytes = 4096;
    let wal = Wal::open_with(c, devs.opener()).unwrap();
    devs.last().fail_all_writes(true);
    let mut failed = None;
    for i in 0..100 {
        if let Err(e) = wal.append(&payload(i, 1000), |_, _| {}) {
            failed = Some(e);
            break;
        }
    }
    let e = failed.expect("an append had to write out the full buffer and failed");
    assert!(matches!(e, WalError::Io { .. }), "{e:?}");
    devs.last().fail_all_writes(false);
    assert!(matches!(
        wal.append(b"x", |_, _| {}),
        Err(WalError::Poisoned(_))
    ));
}
