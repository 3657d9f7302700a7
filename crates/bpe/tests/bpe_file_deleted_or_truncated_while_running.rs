//! The BPE file is truncated (or unlinked and truncated) behind the BPE's back: reads come
//! back short → misses, counted as device errors; the device is dropped; no wrong data, no
//! error to the caller.

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};

#[test]
fn bpe_file_deleted_or_truncated_while_running() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    c.device_error_threshold = 3;
    let dev0 = c.devices[0].clone();
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    for id in 0..24u64 {
        evict(&bpe, id, 2);
    }
    bpe.flush();
    // Truncate through another handle, then unlink the file too.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&dev0)
        .expect("open file")
        .set_len(0)
        .expect("truncate");
    std::fs::remove_file(&dev0).expect("unlink");
    let hits = (0..24u64).filter(|&id| hit_exact(&bpe, id, 2)).count();
    assert!((9..=15).contains(&hits), "about half still hit: {hits}");
    assert!(wait_until(|| bpe.stats().devices_dropped == 1));
    let s = bpe.stats();
    assert!(s.device_errors >= 3);
    assert!(bpe.is_active());
    assert_eq!(s.devices.len(), 1);
    // Keeps working on the other file.
    for id in 50..56u64 {
        evict(&bpe, id, 2);
    }
    bpe.flush();
    assert!((50..56u64).all(|id| hit_exact(&bpe, id, 2)));
}
