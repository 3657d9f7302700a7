//! Scenario (property): arbitrary bytes as a segment file — alone, or after valid records —
//! and arbitrary bytes as a control file never panic the log. Whatever records are read back
//! are exactly the bytes in the file at their positions (valid framing and CRC), and valid
//! records in front of the garbage are all returned.

mod common;

use common::*;
use proptest::prelude::*;
use tierdb_wal::format::{encode_header, segment_file_name};
use tierdb_wal::{Lsn, Wal};

fn check(file: &[u8], valid_prefix_records: usize) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(segment_file_name(0)), file).unwrap();
    let wal = Wal::open(cfg(dir.path(), 64 * 1024)).unwrap();
    let got = read_all(&wal, Lsn(0));
    prop_assert!(got.len() >= valid_prefix_records);
    let mut at = 0usize;
    for (lsn, p) in &got {
        prop_assert_eq!(lsn.0 as usize, at);
        let mut rec = encode_header(p).to_vec();
        rec.extend_from_slice(p);
        prop_assert!(file.get(at..at + rec.len()) == Some(&rec[..]));
        at += rec.len();
    }
    prop_assert_eq!(wal.end_lsn(), Lsn(at as u64));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_segment_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..4096)) {
        check(&bytes, 0)?;
    }

    #[test]
    fn garbage_after_valid_records(
        records in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..200), 0..20),
        garbage in proptest::collection::vec(any::<u8>(), 0..1024),
    ) {
        let mut file = Vec::new();
        for r in &records {
            file.extend_from_slice(&encode_header(r));
            file.extend_from_slice(r);
        }
        file.extend_from_slice(&garbage);
        check(&file, records.len())?;
    }

    #[test]
    fn arbitrary_control_file_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(tierdb_wal::CONTROL_FILE), &bytes).unwrap();
        let _ = Wal::open(cfg(dir.path(), 64 * 1024));
    }
}
