//! Scenario: records larger than what is left in a segment continue in the next segment
//! file (segments are filled to exactly `segment_size_bytes`); the reader returns them
//! whole, across reopen, and the segment files are named by the LSN of their first byte.

mod common;

use common::*;
use tierdb_wal::{Lsn, Wal};

const SEG: u64 = 64 * 1024;

#[test]
fn records_spanning_segments_read_back() {
    let dir = tempfile::tempdir().unwrap();
    // 40 KiB records: most of them straddle a boundary; one record spans 3 segments.
    let mut payloads: Vec<Vec<u8>> = (0..20).map(|i| payload(i, 40 * 1024 - 7)).collect();
    payloads.push(payload(99, 150 * 1024));
    payloads.push(payload(100, 10));
    let pos = {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let pos = append_all(&wal, &payloads);
        assert_eq!(
            read_all(&wal, Lsn(0)).len(),
            payloads.len(),
            "readable before reopen"
        );
        wal.close().unwrap();
        pos
    };
    let end = pos.last().unwrap().1 .0;
    let files = segment_files(dir.path());
    assert_eq!(files.len() as u64, end.div_ceil(SEG));
    for (i, (base, path)) in files.iter().enumerate() {
        assert_eq!(
            *base,
            i as u64 * SEG,
            "segment named by its first byte's LSN"
        );
        let len = std::fs::metadata(path).unwrap().len();
        if i + 1 < files.len() {
            assert_eq!(len, SEG, "non-last segments are full");
        } else {
            assert_eq!(base + len, end);
        }
    }
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let got = read_all(&wal, Lsn(0));
    assert_eq!(got.len(), payloads.len());
    for (i, (lsn, p)) in got.iter().enumerate() {
        assert_eq!(*lsn, pos[i].0);
        assert_eq!(p, &payloads[i]);
    }
    // Reading from a record boundary in the middle works too.
    let mid = read_all(&wal, pos[7].0);
    assert_eq!(mid.len(), payloads.len() - 7);
    assert_eq!(mid[0].1, payloads[7]);
}

#[test]
fn a_record_torn_across_a_segment_boundary_is_cut_with_the_later_segment() {
    let dir = tempfile::tempdir().unwrap();
    let payloads: Vec<Vec<u8>> = (0..5).map(|i| payload(i, 30 * 1024)).collect();
    let pos = {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let pos = append_all(&wal, &payloads);
        wal.close().unwrap();
        pos
    };
    // Record 2 starts in segment 0 and ends in segment 1. Lose segment 1.
    assert!(pos[2].0 .0 < SEG && pos[2].1 .0 > SEG);
    let files = segment_files(dir.path());
    assert_eq!(files.len(), 3);
    std::fs::remove_file(&files[1].1).unwrap();
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert_eq!(wal.end_lsn(), pos[2].0);
    assert_eq!(read_all(&wal, Lsn(0)).len(), 2);
    // Segment 2 (after the gap) was deleted, segment 0 truncated to the valid end.
    let files = segment_files(dir.path());
    assert_eq!(files.len(), 1);
    assert_eq!(std::fs::metadata(&files[0].1).unwrap().len(), pos[2].0 .0);
    // Appends refill segment 0 and roll over at the boundary again.
    append_all(&wal, &payloads[2..]);
    wal.close().unwrap();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, payloads);
}
