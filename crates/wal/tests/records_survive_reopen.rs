//! Scenario: records appended and flushed survive closing and reopening the log, byte for
//! byte and at the same LSNs, and appends after the reopen continue the stream.

mod common;

use common::*;
use tierdb_wal::{Lsn, Wal, RECORD_HEADER_BYTES};

#[test]
fn records_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let payloads: Vec<Vec<u8>> = (0..500)
        .map(|i| payload(i, 1 + (i as usize * 37) % 3000))
        .collect();
    let (positions, end) = {
        let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
        assert_eq!(wal.end_lsn(), Lsn(0));
        let positions = append_all(&wal, &payloads);
        let end = wal.end_lsn();
        let expected_end: usize = payloads.iter().map(|p| p.len() + RECORD_HEADER_BYTES).sum();
        assert_eq!(end, Lsn(expected_end as u64));
        wal.flush_to(end).unwrap();
        assert_eq!(wal.durable_lsn(), end);
        (positions, end)
    };

    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(wal.end_lsn(), end);
    assert_eq!(wal.durable_lsn(), end);
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len(), payloads.len());
    for (i, (lsn, p)) in got.iter().enumerate() {
        assert_eq!(*lsn, positions[i].0, "record {i} start");
        assert_eq!(p, &payloads[i], "record {i} payload");
    }

    // Appends resume at the end; a third open sees old + new.
    let more: Vec<Vec<u8>> = (500..520).map(|i| payload(i, 100)).collect();
    let pos2 = append_all(&wal, &more);
    assert_eq!(pos2[0].0, end);
    wal.close().unwrap();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len(), 520);
    assert_eq!(got[519].1, more[19]);
}

#[test]
fn drop_without_close_flushes_what_was_appended() {
    let dir = tempfile::tempdir().unwrap();
    {
        let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
        append_all(&wal, &[payload(1, 10), payload(2, 20)]);
    }
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(read_all(&wal, Lsn(0)).len(), 2);
}

#[test]
fn invalid_payloads_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert!(matches!(
        wal.append(&[], |_, _| {}),
        Err(tierdb_wal::WalError::InvalidRecord { .. })
    ));
    let big = vec![0u8; tierdb_wal::MAX_RECORD_BYTES + 1];
    assert!(matches!(
        wal.append(&big, |_, _| {}),
        Err(tierdb_wal::WalError::InvalidRecord { .. })
    ));
    // The log is still usable.
    wal.append(b"ok", |_, _| {}).unwrap();
}
