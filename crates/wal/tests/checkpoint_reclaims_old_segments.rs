//! Scenario: a long log over many small segments is checkpointed at a late LSN. Segment
//! files wholly below the checkpoint are deleted, the checkpoint LSN is persisted in the
//! control file, and after a reopen the log reads back from the checkpoint.

mod common;

use common::*;
use tierdb_wal::{Lsn, Wal, WalError};

const SEG: u64 = 64 * 1024;

#[test]
fn checkpoint_reclaims_old_segments() {
    let dir = tempfile::tempdir().unwrap();
    let payloads: Vec<Vec<u8>> = (0..2000)
        .map(|i| payload(i, 300 + (i as usize % 500)))
        .collect();
    let (pos, ckpt) = {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let pos = append_all(&wal, &payloads);
        wal.flush_to(wal.end_lsn()).unwrap();
        let before = segment_files(dir.path());
        assert!(
            before.len() > 10,
            "expected many segments, got {}",
            before.len()
        );
        assert_eq!(wal.stats().segments, before.len() as u64);

        let ckpt = pos[1500].0; // start of record 1500 = end of record 1499
        wal.checkpoint(ckpt).unwrap();
        assert_eq!(wal.checkpoint_lsn(), ckpt);
        let after = segment_files(dir.path());
        assert!(after.len() < before.len());
        // Exactly the segments wholly below the checkpoint are gone.
        for (base, path) in &before {
            let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            let gone = !path.exists();
            if gone {
                assert!(
                    base + SEG <= ckpt.0,
                    "segment at {base} deleted but reaches past {ckpt}"
                );
            }
            let _ = len;
        }
        assert!(
            after[0].0 <= ckpt.0 && ckpt.0 < after[0].0 + SEG,
            "first kept segment holds the checkpoint"
        );
        assert_eq!(wal.stats().segments, after.len() as u64);
        assert_eq!(
            wal.stats().segments_deleted,
            (before.len() - after.len()) as u64
        );

        // Invalid checkpoints.
        assert!(matches!(
            wal.checkpoint(Lsn(ckpt.0 - 1)),
            Err(WalError::InvalidArgument(_))
        ));
        assert!(matches!(
            wal.checkpoint(Lsn(wal.end_lsn().0 + 1)),
            Err(WalError::InvalidArgument(_))
        ));
        // The reclaimed part cannot be read any more.
        assert!(matches!(
            wal.read_from(Lsn(0)),
            Err(WalError::InvalidArgument(_))
        ));
        (pos, ckpt)
    };

    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert_eq!(wal.checkpoint_lsn(), ckpt, "checkpoint persisted");
    let got = read_all(&wal, wal.checkpoint_lsn());
    assert_eq!(got.len(), 500);
    for (k, (lsn, p)) in got.iter().enumerate() {
        assert_eq!(*lsn, pos[1500 + k].0);
        assert_eq!(p, &payloads[1500 + k]);
    }
}

#[test]
fn checkpoint_at_the_end_keeps_the_active_segment_and_appends_continue() {
    let dir = tempfile::tempdir().unwrap();
    let end = {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let payloads: Vec<Vec<u8>> = (0..400).map(|i| payload(i, 1000)).collect();
        append_all(&wal, &payloads);
        let end = wal.end_lsn();
        wal.checkpoint(end).unwrap();
        assert_eq!(
            segment_files(dir.path()).len(),
            1,
            "only the active segment is left"
        );
        end
    };
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert_eq!(wal.checkpoint_lsn(), end);
    assert_eq!(wal.end_lsn(), end);
    assert!(read_all(&wal, end).is_empty());
    let next = wal.append(b"after checkpoint", |_, _| {}).unwrap();
    wal.close().unwrap();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert_eq!(
        read_all(&wal, end),
        vec![(end, b"after checkpoint".to_vec())]
    );
    assert_eq!(wal.end_lsn(), next);
}

#[test]
fn segments_left_below_the_checkpoint_by_a_crash_are_deleted_at_open() {
    // Model a crash between writing the control file and deleting the old segments: copy an
    // old segment back after the checkpoint deleted it.
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let payloads: Vec<Vec<u8>> = (0..400).map(|i| payload(i, 1000)).collect();
    let pos = append_all(&wal, &payloads);
    wal.flush_to(wal.end_lsn()).unwrap();
    let first = segment_files(dir.path()).remove(0);
    let saved = std::fs::read(&first.1).unwrap();
    wal.checkpoint(pos[300].0).unwrap();
    wal.close().unwrap();
    drop(wal);
    assert!(!first.1.exists());
    std::fs::write(&first.1, saved).unwrap();
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert!(
        !first.1.exists(),
        "stale segment below the checkpoint deleted at open"
    );
    assert_eq!(read_all(&wal, wal.checkpoint_lsn()).len(), 100);
}

#[test]
fn a_missing_segment_under_the_checkpoint_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let payloads: Vec<Vec<u8>> = (0..400).map(|i| payload(i, 1000)).collect();
        let pos = append_all(&wal, &payloads);
        wal.checkpoint(pos[100].0).unwrap();
        wal.close().unwrap();
    }
    // Delete the segment holding the checkpoint.
    let files = segment_files(dir.path());
    std::fs::remove_file(&files[0].1).unwrap();
    match Wal::open(cfg(dir.path(), SEG)) {
        Err(WalError::Corrupt { .. }) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn a_damaged_control_file_is_an_error_not_a_fresh_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let lsn = wal.append(b"x", |_, _| {}).unwrap();
        wal.checkpoint(lsn).unwrap();
    }
    let path = dir.path().join(tierdb_wal::CONTROL_FILE);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[17] ^= 1;
    std::fs::write(&path, bytes).unwrap();
    match Wal::open(cfg(dir.path(), SEG)) {
        Err(WalError::Corrupt { .. }) => {}
        other => panic!("expected Corrupt, got {other:?}"),
    }
}
