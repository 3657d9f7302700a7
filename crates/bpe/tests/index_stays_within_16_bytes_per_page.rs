//! With the cache full, the DRAM index (hash table + region table, measured from the actual
//! allocation sizes) stays at or below 16 bytes per cached page.

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};

#[test]
fn index_stays_within_16_bytes_per_page() {
    let dir = tempfile::tempdir().expect("tmp");
    // 128 MiB in 4 MiB regions (255 slots each): 8160 slots.
    let bpe = Bpe::open(cfg(dir.path(), 2, 128 << 20, 4 << 20), Trust::Cold).expect("open");
    for id in 0..12_000u64 {
        evict(&bpe, id, 1);
    }
    bpe.flush();
    let s = bpe.stats();
    assert!(
        s.pages_cached * 10 >= s.capacity_pages * 7,
        "cache is full: {} of {}",
        s.pages_cached,
        s.capacity_pages
    );
    eprintln!(
        "index: {} bytes for {} pages = {:.2} B/page",
        s.index_bytes, s.pages_cached, s.index_bytes_per_page
    );
    assert!(
        s.index_bytes_per_page <= 16.0,
        "{:.2}",
        s.index_bytes_per_page
    );
    assert!(s.index_bytes_per_page >= 12.0, "measured, not assumed");
}
