//! The active segment is zero-filled ahead of the log end (so commits overwrite existing
//! blocks instead of growing the file). Scenarios: a kill leaves the zeros, and the next
//! open cuts them and resumes appends exactly at the log end; a clean close trims them; with
//! small segments every full segment still ends exactly at the segment size and records
//! that span segments read back.

mod common;

use common::*;
use tierdb_wal::{Lsn, Wal};

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn killed_log_with_a_zeroed_tail_reopens_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let payloads: Vec<Vec<u8>> = (0..50).map(|i| payload(i, 100 + i as usize)).collect();
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let pos = append_all(&wal, &payloads);
    let end = pos.last().unwrap().1;
    wal.commit(end).unwrap();
    let files = segment_files(dir.path());
    assert_eq!(files.len(), 1);
    assert!(file_len(&files[0].1) > end.0, "zeros were written ahead");
    wal.simulate_crash();

    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    assert_eq!(
        wal.end_lsn(),
        end,
        "the log ends where the last record ends"
    );
    assert_eq!(file_len(&files[0].1), end.0, "the zeros were cut at open");
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got, payloads);
    // Appends resume at the end, and the file is zero-filled ahead again.
    let more: Vec<Vec<u8>> = (50..60).map(|i| payload(i, 300)).collect();
    let pos2 = append_all(&wal, &more);
    assert_eq!(pos2[0].0, end);
    let end2 = pos2.last().unwrap().1;
    wal.commit(end2).unwrap();
    assert!(file_len(&files[0].1) > end2.0);

    // A clean close leaves exactly the log in the file.
    wal.close().unwrap();
    assert_eq!(file_len(&files[0].1), end2.0, "close trims the zeros");
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), 1 << 20)).unwrap();
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got, [payloads, more].concat());
}

#[test]
fn full_segments_end_exactly_at_the_segment_size() {
    let dir = tempfile::tempdir().unwrap();
    let seg = 8192u64;
    let payloads: Vec<Vec<u8>> = (0..40).map(|i| payload(i, 700 + 37 * i as usize)).collect();
    let wal = Wal::open(cfg(dir.path(), seg)).unwrap();
    let pos = append_all(&wal, &payloads);
    let end = pos.last().unwrap().1;
    wal.commit(end).unwrap();
    let files = segment_files(dir.path());
    assert!(files.len() > 3, "records span several segments");
    for w in files.windows(2) {
        assert_eq!(w[1].0 - w[0].0, seg);
        assert_eq!(
            file_len(&w[0].1),
            seg,
            "a full segment is exactly the segment size"
        );
    }
    let last = files.last().unwrap();
    assert!(
        file_len(&last.1) <= seg,
        "the zeros never pass the segment size"
    );
    wal.simulate_crash();
    let wal = Wal::open(cfg(dir.path(), seg)).unwrap();
    assert_eq!(wal.end_lsn(), end);
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got, payloads);
}
