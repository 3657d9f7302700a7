//! Scenarios for `DirectFile`: aligned round trips, the alignment contract, EOF, and an
//! honest report of whether O_DIRECT is in effect on the temp filesystem.

use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;

use tierdb_io::{AlignedBuf, Device, DirectFile, DIRECT_ALIGN};

fn page(fill: u8, pages: usize) -> AlignedBuf {
    let mut buf = AlignedBuf::new(pages * DIRECT_ALIGN).expect("aligned length");
    for (i, b) in buf.iter_mut().enumerate() {
        *b = fill.wrapping_add(i as u8);
    }
    buf
}

#[test]
fn direct_file_round_trips_aligned_pages() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = DirectFile::open(&dir.path().join("data"), true).expect("open");
    let a = page(1, 4);
    let b = page(200, 1);
    file.write_at(&a, 0).expect("write a");
    file.write_at(&b, 8 * DIRECT_ALIGN as u64)
        .expect("write b past the end");
    file.sync().expect("sync");
    assert_eq!(file.len().expect("len"), 9 * DIRECT_ALIGN as u64);

    let mut back = AlignedBuf::new(4 * DIRECT_ALIGN).expect("buf");
    file.read_at(&mut back, 0).expect("read a");
    assert_eq!(back, a);
    let mut back = AlignedBuf::new(DIRECT_ALIGN).expect("buf");
    file.read_at(&mut back, 8 * DIRECT_ALIGN as u64)
        .expect("read b");
    assert_eq!(back, b);
    // The hole between them reads as zeros.
    file.read_at(&mut back, 5 * DIRECT_ALIGN as u64)
        .expect("read hole");
    assert!(back.iter().all(|&x| x == 0));

    drop(file);
    let reopened = DirectFile::open(&dir.path().join("data"), false).expect("reopen");
    let mut back = AlignedBuf::new(4 * DIRECT_ALIGN).expect("buf");
    reopened.read_at(&mut back, 0).expect("read after reopen");
    assert_eq!(back, a);
}

#[test]
fn direct_file_reports_o_direct_honestly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("probe");
    let probe = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_DIRECT)
        .open(&path);
    let os_accepts_direct = match &probe {
        Ok(_) => true,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => false,
        Err(e) => panic!("probe open failed: {e}"),
    };
    drop(probe);
    let file = DirectFile::open(&path, true).expect("open");
    assert_eq!(
        file.is_direct(),
        os_accepts_direct,
        "is_direct must say whether O_DIRECT is in effect on {}",
        dir.path().display()
    );
}

#[test]
fn unaligned_buffer_is_refused_not_ub() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = DirectFile::open(&dir.path().join("data"), true).expect("open");
    let mut big = AlignedBuf::new(2 * DIRECT_ALIGN).expect("buf");

    // Misaligned address, aligned length.
    let err = file
        .write_at(&big[1..DIRECT_ALIGN + 1], 0)
        .expect_err("unaligned address");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("aligned"), "{err}");
    let err = file
        .read_at(&mut big[1..DIRECT_ALIGN + 1], 0)
        .expect_err("unaligned address");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    // Aligned address, unaligned length.
    let err = file.write_at(&big[..100], 0).expect_err("unaligned length");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    // Aligned buffer, unaligned offset.
    let err = file
        .write_at(&big[..DIRECT_ALIGN], 512)
        .expect_err("unaligned offset");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    let err = file
        .read_at(&mut big[..DIRECT_ALIGN], 7)
        .expect_err("unaligned offset");
    assert_eq!(err.kind(), ErrorKind::InvalidInput);

    // Nothing reached the file.
    assert_eq!(file.len().expect("len"), 0);
}

#[test]
fn read_past_end_is_unexpected_eof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = DirectFile::open(&dir.path().join("data"), true).expect("open");
    file.write_at(&page(3, 1), 0).expect("write");
    // Entirely past the end.
    let mut buf = AlignedBuf::new(DIRECT_ALIGN).expect("buf");
    let err = file
        .read_at(&mut buf, DIRECT_ALIGN as u64)
        .expect_err("past end");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
    // Straddling the end: the first page exists, the second does not.
    let mut buf = AlignedBuf::new(2 * DIRECT_ALIGN).expect("buf");
    let err = file.read_at(&mut buf, 0).expect_err("straddles end");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
}

#[test]
fn unaligned_file_tail_is_unexpected_eof_not_einval() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = DirectFile::open(&dir.path().join("data"), true).expect("open");
    file.write_at(&page(3, 2), 0).expect("write");
    file.set_len(DIRECT_ALIGN as u64 + 100).expect("truncate");
    let mut buf = AlignedBuf::new(2 * DIRECT_ALIGN).expect("buf");
    let err = file.read_at(&mut buf, 0).expect_err("short tail");
    assert_eq!(err.kind(), ErrorKind::UnexpectedEof);
}

#[test]
fn direct_file_set_len_truncates_and_extends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = DirectFile::open(&dir.path().join("data"), true).expect("open");
    file.set_len(16 * DIRECT_ALIGN as u64).expect("extend");
    assert_eq!(file.len().expect("len"), 16 * DIRECT_ALIGN as u64);
    file.set_len(DIRECT_ALIGN as u64).expect("truncate");
    assert_eq!(file.len().expect("len"), DIRECT_ALIGN as u64);
    assert!(file.name().ends_with("data"));
}

#[test]
fn opening_a_missing_file_without_create_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = DirectFile::open(&dir.path().join("missing"), false).expect_err("missing");
    assert_eq!(err.kind(), ErrorKind::NotFound);
}

#[test]
fn concurrent_writers_on_disjoint_pages_do_not_interfere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = Arc::new(DirectFile::open(&dir.path().join("data"), true).expect("open"));
    let threads: Vec<_> = (0..8u8)
        .map(|t| {
            let file = Arc::clone(&file);
            std::thread::spawn(move || {
                for i in 0..16u64 {
                    let slot = u64::from(t) * 16 + i;
                    let buf = page(t.wrapping_mul(31).wrapping_add(i as u8), 1);
                    file.write_at(&buf, slot * DIRECT_ALIGN as u64)
                        .expect("write");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer thread");
    }
    let mut buf = AlignedBuf::new(DIRECT_ALIGN).expect("buf");
    for t in 0..8u8 {
        for i in 0..16u64 {
            let slot = u64::from(t) * 16 + i;
            file.read_at(&mut buf, slot * DIRECT_ALIGN as u64)
                .expect("read");
            assert_eq!(buf, page(t.wrapping_mul(31).wrapping_add(i as u8), 1));
        }
    }
}
