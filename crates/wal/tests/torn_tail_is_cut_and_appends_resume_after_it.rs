//! Scenario: the last record on disk is torn (a flipped byte, or the file cut short). The
//! reopened log ends before it, the stale bytes are removed from the file, appends resume
//! there, and a second reopen sees exactly the valid old records plus the new ones.

mod common;

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};

use common::*;
use tierdb_wal::{Lsn, Wal};

fn write_records(dir: &std::path::Path, n: u64) -> (Vec<Vec<u8>>, Vec<(Lsn, Lsn)>) {
    let wal = Wal::open(cfg(dir, 1 << 20)).unwrap();
    let payloads: Vec<Vec<u8>> = (0..n).map(|i| payload(i, 200 + i as usize)).collect();
    let pos = append_all(&wal, &payloads);
    wal.close().unwrap();
    (payloads, pos)
}

fn check_cut_and_resume(dir: &std::path::Path, payloads: &[Vec<u8>], pos: &[(Lsn, Lsn)]) {
    let n = payloads.len();
    let last_start = pos[n - 1].0;
    {
        let wal = Wal::open(cfg(dir, 1 << 20)).unwrap();
        assert_eq!(wal.end_lsn(), last_start, "log ends before the torn record");
        let got = read_all(&wal, Lsn(0));
        assert_eq!(got.len(), n - 1);
        for (i, (lsn, p)) in got.iter().enumerate() {
            assert_eq!((*lsn, p), (pos[i].0, &payloads[i]));
        }
        // The stale bytes are gone from the file.
        let files = segment_files(dir);
        assert_eq!(files.len(), 1);
        assert_eq!(std::fs::metadata(&files[0].1).unwrap().len(), last_start.0);
        // Appends resume right there.
        let new: Vec<Vec<u8>> = (1000..1005).map(|i| payload(i, 50)).collect();
        let new_pos = append_all(&wal, &new);
        assert_eq!(new_pos[0].0, last_start);
        wal.close().unwrap();
    }
    let wal = Wal::open(cfg(dir, 1 << 20)).unwrap();
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len(), n - 1 + 5);
    for (i, (_, p)) in got.iter().enumerate().take(n - 1) {
        assert_eq!(p, &payloads[i]);
    }
    for (k, (_, p)) in got.iter().skip(n - 1).enumerate() {
        assert_eq!(p, &payload(1000 + k as u64, 50));
    }
}

#[test]
fn torn_tail_is_cut_and_appends_resume_after_it() {
    // A flipped byte in the middle of the last record's payload.
    let dir = tempfile::tempdir().unwrap();
    let (payloads, pos) = write_records(dir.path(), 20);
    let (_, path) = segment_files(dir.path()).remove(0);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let victim = pos[19].0 .0 + 8 + 50;
    f.seek(SeekFrom::Start(victim)).unwrap();
    f.write_all(&[0xEE]).unwrap();
    drop(f);
    check_cut_and_resume(dir.path(), &payloads, &pos);
}

#[test]
fn truncated_last_record_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (payloads, pos) = write_records(dir.path(), 20);
    let (_, path) = segment_files(dir.path()).remove(0);
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(pos[19].1 .0 - 3).unwrap();
    drop(f);
    check_cut_and_resume(dir.path(), &payloads, &pos);
}

#[test]
fn zeroed_tail_after_last_record_is_cut() {
    // A crash can leave a file extended with zeros (the size reached disk, the data not).
    let dir = tempfile::tempdir().unwrap();
    let (payloads, pos) = write_records(dir.path(), 10);
    let (_, path) = segment_files(dir.path()).remove(0);
    let f = OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(pos[9].1 .0 + 4096).unwrap();
    drop(f);
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(wal.end_lsn(), pos[9].1);
    assert_eq!(read_all(&wal, Lsn(0)).len(), payloads.len());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), pos[9].1 .0);
}

#[test]
fn corrupt_header_length_is_cut() {
    // A garbage length field (huge) must not be trusted.
    let dir = tempfile::tempdir().unwrap();
    let (payloads, pos) = write_records(dir.path(), 20);
    let (_, path) = segment_files(dir.path()).remove(0);
    let mut f = OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(pos[19].0 .0)).unwrap();
    f.write_all(&u32::MAX.to_le_bytes()).unwrap();
    drop(f);
    check_cut_and_resume(dir.path(), &payloads, &pos);
}
