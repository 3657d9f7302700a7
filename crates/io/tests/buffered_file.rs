//! Scenarios for `BufferedFile`: any size, any alignment, exact reads.

use std::io::ErrorKind;

use tierdb_io::{BufferedFile, Device};

#[test]
fn buffered_file_round_trips_unaligned_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("redo");
    let file = BufferedFile::open(&path, true).expect("open");
    assert!(!file.is_direct());
    file.write_at(b"hello", 0).expect("write");
    file.write_at(b", world", 5).expect("append");
    file.sync().expect("sync");
    assert_eq!(file.len().expect("len"), 12);
    let mut back = [0u8; 7];
    file.read_at(&mut back, 5).expect("read");
    assert_eq!(&back, b", world");
    drop(file);
    let reopened = BufferedFile::open(&path, false).expect("reopen");
    let mut all = [0u8; 12];
    reopened.read_at(&mut all, 0).expect("read all");
    assert_eq!(&all, b"hello, world");
}

#[test]
fn buffered_read_past_end_is_unexpected_eof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = BufferedFile::open(&dir.path().join("redo"), true).expect("open");
    file.write_at(&[1u8; 10], 0).expect("write");
    let mut buf = [0u8; 20];
    let err = file.read_at(&mut buf, 0).expect_err("straddles end");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    let err = file.read_at(&mut buf[..1], 10).expect_err("at end");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    // An empty read at the end is fine.
    file.read_at(&mut [], 10).expect("empty read");
}

#[test]
fn buffered_set_len_truncates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = BufferedFile::open(&dir.path().join("redo"), true).expect("open");
    file.write_at(&[7u8; 100], 0).expect("write");
    file.set_len(30).expect("truncate");
    assert_eq!(file.len().expect("len"), 30);
}
