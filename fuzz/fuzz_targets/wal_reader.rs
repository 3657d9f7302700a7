//! The redo log reader: the fuzz input becomes the segment file(s) of a redo directory,
//! which `tierdb_wal::Wal::open` recovers (finds the valid end, cuts the torn tail) and
//! `read_from(Lsn(0))` iterates to the end.
//!
//! Input layout: if byte 0 is odd, bytes 1..3 (u16 LE) give a split point and the rest is
//! written as two contiguous segments (`0` and `split`), so records can span files; else the
//! rest is one segment starting at LSN 0.
//!
//! Properties: never panics, never hangs; the records read back are exactly the maximal
//! prefix of valid records in the concatenated bytes (as `format::decode_record` sees
//! them), at their byte positions, and the log's end LSN is just past the last of them.

#![no_main]

use std::path::PathBuf;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tierdb_wal::format::{decode_record, segment_file_name};
use tierdb_wal::{FlushPolicy, Lsn, Wal, WalConfig};

fn scratch_root() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (split, stream) = if mode & 1 == 1 && rest.len() >= 2 {
        let s = usize::from(u16::from_le_bytes([rest[0], rest[1]]));
        let stream = &rest[2..];
        (Some(s.min(stream.len())), stream)
    } else {
        (None, rest)
    };

    let dir = tempfile::Builder::new()
        .prefix("tierdb-fuzz-wal")
        .tempdir_in(scratch_root())
        .expect("tempdir");
    match split {
        Some(s) if s > 0 && s < stream.len() => {
            std::fs::write(dir.path().join(segment_file_name(0)), &stream[..s]).unwrap();
            std::fs::write(dir.path().join(segment_file_name(s as u64)), &stream[s..]).unwrap();
        }
        _ => std::fs::write(dir.path().join(segment_file_name(0)), stream).unwrap(),
    }

    // Expected: the maximal prefix of valid records.
    let mut expected = Vec::new();
    let mut at = 0usize;
    while let Some((payload, framed)) = decode_record(&stream[at..]) {
        expected.push((at as u64, payload.to_vec()));
        at += framed;
    }

    let mut cfg = WalConfig::new(dir.path());
    cfg.segment_size_bytes = 64 * 1024;
    cfg.buffer_size_bytes = 64 * 1024;
    cfg.policy = FlushPolicy::Periodic;
    cfg.flush_interval = Duration::from_secs(3600);
    let wal = Wal::open(cfg).expect("open a redo dir holding garbage segment bytes");
    let mut got = Vec::new();
    for r in wal.read_from(Lsn(0)).expect("read_from(0)") {
        let (lsn, payload) = r.expect("reading records");
        got.push((lsn.0, payload));
    }
    assert_eq!(got.len(), expected.len(), "record count");
    assert!(got == expected, "records read back differ from the valid prefix");
    assert_eq!(wal.end_lsn(), Lsn(at as u64));
    wal.close().expect("close");
});
