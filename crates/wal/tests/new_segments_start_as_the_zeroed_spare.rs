//! Once the active segment is half full, a background thread writes the next segment's file
//! (all zeros, fsynced) as the spare; the writer starts the next segment by renaming it, so
//! no zeros are written in a commit. Scenarios: segments started from the spare get no zero
//! writes from the writer; a clean close deletes the spare; a kill with the spare in use
//! (zeros after the log end) and a garbage spare file left in the directory reopen at the
//! exact log end with every record.

mod common;

use std::time::{Duration, Instant};

use common::*;
use tierdb_wal::{Lsn, Wal, SPARE_FILE};

const SEG: u64 = 256 << 10;

/// Appends 1 KiB records, committing each, until `n` segments were started from the spare.
fn append_until_spares_used(wal: &Wal, n: u64, all: &mut Vec<Vec<u8>>) -> Lsn {
    let t0 = Instant::now();
    let mut end = wal.end_lsn();
    while wal.stats().segments_from_spare < n {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no segment was started from the spare: {:?}",
            wal.stats()
        );
        let p = payload(all.len() as u64, 1024);
        end = wal.append(&p, |_, _| {}).unwrap();
        wal.commit(end).unwrap();
        all.push(p);
        if wal.stats().segments_from_spare < n && all.len().is_multiple_of(64) {
            // Give the prefill thread time to finish the spare before the switch.
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    end
}

#[test]
fn segments_started_from_the_spare_get_no_zero_writes() {
    let dir = tempfile::tempdir().unwrap();
    let devs = Devices::new();
    let wal = Wal::open_with(cfg(dir.path(), SEG), devs.opener()).unwrap();
    let mut all = Vec::new();
    let end = append_until_spares_used(&wal, 2, &mut all);
    // The active segment was the spare: the writer wrote only the log into it.
    let files = segment_files(dir.path());
    let (base, path) = files.last().unwrap().clone();
    let active = devs.last();
    assert_eq!(
        active.inner().written_hi(),
        end.0 - base,
        "the writer wrote zeros into a segment started from the spare"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        SEG,
        "the spare is a whole segment of zeros"
    );
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got, all);
    // Let a spare be ready again (the active segment is past half), then close cleanly: the
    // directory then holds exactly the log.
    let t0 = Instant::now();
    while !dir.path().join(SPARE_FILE).exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no spare was written"
        );
        let p = payload(all.len() as u64, 1024);
        let end = wal.append(&p, |_, _| {}).unwrap();
        wal.commit(end).unwrap();
        all.push(p);
        std::thread::sleep(Duration::from_millis(2));
    }
    wal.close().unwrap();
    assert!(
        !dir.path().join(SPARE_FILE).exists(),
        "a clean close leaves no spare"
    );
}

#[test]
fn a_kill_with_the_spare_in_use_reopens_at_the_log_end() {
    let dir = tempfile::tempdir().unwrap();
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let mut all = Vec::new();
    let end = append_until_spares_used(&wal, 1, &mut all);
    wal.simulate_crash();
    // A leftover spare of the next run is garbage to recovery: it is not a segment.
    std::fs::write(dir.path().join(SPARE_FILE), vec![0xA5u8; 5000]).unwrap();

    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    assert_eq!(
        wal.end_lsn(),
        end,
        "the log ends where the last record ends"
    );
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got, all);
    // Appends resume at the end and use spares again.
    let more_from = all.len();
    append_until_spares_used(&wal, 1, &mut all);
    wal.close().unwrap();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|r| r.1).collect();
    assert_eq!(got.len(), all.len());
    assert_eq!(got[more_from..], all[more_from..]);
    assert_eq!(got, all);
}
