//! Scenario (property): records of random sizes (1 byte to 40 KiB, spanning 64 KiB
//! segments) are appended and flushed; then the concatenated segment files are cut at a
//! random byte, as a crash that lost the tail would leave them — the later files deleted,
//! left in place behind the gap, or the cut file followed by garbage (whose first byte differs
//! from the byte it replaces, so it cannot complete the torn record). Reopening yields
//! exactly the records that lay wholly before the cut (a prefix: never garbage, never a
//! record that was not appended), and appends after the reopen read back after that prefix.

mod common;

use std::fs::OpenOptions;
use std::io::Write;

use common::*;
use proptest::prelude::*;
use tierdb_wal::{Lsn, Wal};

const SEG: u64 = 64 * 1024;

#[derive(Debug, Clone, Copy)]
enum After {
    DeleteLaterFiles,
    KeepLaterFiles,
    Garbage,
}

fn after_strategy() -> impl Strategy<Value = After> {
    prop_oneof![
        Just(After::DeleteLaterFiles),
        Just(After::KeepLaterFiles),
        Just(After::Garbage)
    ]
}

fn run(sizes: &[usize], cut_frac: f64, after: After, garbage: &[u8]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let payloads: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| payload(i as u64, n))
        .collect();
    let pos = {
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let pos = append_all(&wal, &payloads);
        wal.close().unwrap();
        pos
    };
    let total = pos.last().map_or(0, |p| p.1 .0);
    let cut = ((total as f64) * cut_frac).floor() as u64;
    let cut = cut.min(total);

    // Cut the concatenated stream at `cut`.
    let files = segment_files(dir.path());
    for (base, path) in &files {
        let len = std::fs::metadata(path).unwrap().len();
        if base + len <= cut {
            continue;
        }
        if *base <= cut {
            // Garbage whose first byte equals the byte it replaces could complete the record
            // the cut tore (one chance in 256 when one byte was cut): that record really is
            // on disk whole then, so the test makes the first byte differ.
            let mut garbage = garbage.to_vec();
            if let Some(&lost) = std::fs::read(path).unwrap().get((cut - base) as usize) {
                if garbage[0] == lost {
                    garbage[0] = !lost;
                }
            }
            let f = OpenOptions::new().write(true).open(path).unwrap();
            f.set_len(cut - base).unwrap();
            if let After::Garbage = after {
                let mut f = OpenOptions::new().append(true).open(path).unwrap();
                f.write_all(&garbage).unwrap();
            }
        } else if let After::DeleteLaterFiles | After::Garbage = after {
            std::fs::remove_file(path).unwrap();
        }
    }

    let expected = pos.iter().take_while(|p| p.1 .0 <= cut).count();
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let got = read_all(&wal, Lsn(0));
    prop_assert_eq!(got.len(), expected, "cut at {} of {}", cut, total);
    for (i, (lsn, p)) in got.iter().enumerate() {
        prop_assert_eq!(*lsn, pos[i].0);
        prop_assert!(p == &payloads[i], "record {} differs", i);
    }
    let valid_end = if expected == 0 {
        Lsn(0)
    } else {
        pos[expected - 1].1
    };
    prop_assert_eq!(wal.end_lsn(), valid_end);

    // Append after the cut; a second reopen sees prefix + new, nothing else.
    let new: Vec<Vec<u8>> = (0..3)
        .map(|i| payload(10_000 + i, 5000 + i as usize))
        .collect();
    let new_pos = append_all(&wal, &new);
    prop_assert_eq!(new_pos[0].0, valid_end);
    wal.close().unwrap();
    drop(wal);
    let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
    let got: Vec<Vec<u8>> = read_all(&wal, Lsn(0)).into_iter().map(|(_, p)| p).collect();
    let mut want: Vec<Vec<u8>> = payloads[..expected].to_vec();
    want.extend(new);
    prop_assert!(
        got == want,
        "after resume: {} records, want {}",
        got.len(),
        want.len()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn crash_cut_yields_a_prefix(
        sizes in proptest::collection::vec(1usize..=40 * 1024, 1..40),
        cut_frac in 0.0f64..=1.0,
        after in after_strategy(),
        garbage in proptest::collection::vec(any::<u8>(), 1..300),
    ) {
        run(&sizes, cut_frac, after, &garbage)?;
    }

    #[test]
    fn crash_cut_with_small_records_yields_a_prefix(
        sizes in proptest::collection::vec(1usize..=64, 1..2000),
        cut_frac in 0.0f64..=1.0,
        after in after_strategy(),
        garbage in proptest::collection::vec(any::<u8>(), 1..300),
    ) {
        run(&sizes, cut_frac, after, &garbage)?;
    }
}
