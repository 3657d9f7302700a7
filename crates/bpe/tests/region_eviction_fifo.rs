//! Regions are evicted whole, oldest first: after overfilling the cache the pages of the
//! first regions miss and the newest ones hit.

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};

#[test]
fn region_eviction_fifo() {
    let dir = tempfile::tempdir().expect("tmp");
    // 1 device × 4 regions × 3 slots.
    let mut c = cfg(dir.path(), 1, 4 * REGION_64K, REGION_64K);
    c.reinsert_max_percent = 0;
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    // 8 regions' worth of pages, 3 per region, region by region.
    for r in 0..8u64 {
        for s in 0..3u64 {
            let id = r * 3 + s;
            evict(&bpe, id, 10 + id);
        }
        bpe.flush();
    }
    assert!(wait_until(|| bpe.stats().write_backlog_regions == 0));
    let hits: Vec<bool> = (0..24u64).map(|id| hit_exact(&bpe, id, 10 + id)).collect();
    // The newest regions are cached, the oldest are not; no hole in FIFO order.
    let first_hit = hits.iter().position(|&h| h).expect("something cached");
    assert!(
        hits[first_hit..].iter().all(|&h| h),
        "FIFO keeps a suffix: {hits:?}"
    );
    assert!(first_hit >= 12, "old regions evicted: {hits:?}");
    assert!(24 - first_hit >= 6, "at least two regions cached: {hits:?}");
    let s = bpe.stats();
    assert!(s.evicted_regions >= 4, "{s:?}");
    // Region sequence numbers of written regions are the newest ones.
    let mut seqs: Vec<u64> = bpe
        .regions()
        .iter()
        .filter(|r| r.state == "written")
        .map(|r| r.seq)
        .collect();
    seqs.sort();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "contiguous newest: {seqs:?}"
    );
}
