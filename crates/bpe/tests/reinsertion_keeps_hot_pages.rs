//! When a region is evicted, its pages that were hit since being written are re-admitted:
//! a small hot set survives a long stream of cold admissions. Without reinsertion it does
//! not (the same workload with `reinsert_max_percent = 0`).

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};

fn hot_survivors(reinsert_pct: u8) -> (usize, u64) {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), 1, 6 * REGION_64K, REGION_64K);
    c.reinsert_max_percent = reinsert_pct;
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let hot = [1u64, 2];
    for &h in &hot {
        evict(&bpe, h, h + 1000);
    }
    bpe.flush();
    let mut cold = 100u64;
    for _round in 0..10 {
        // Hot pages are read (sets their hit bit) ...
        for &h in &hot {
            hit_exact(&bpe, h, h + 1000);
        }
        // ... then a region's worth of cold pages streams through.
        for _ in 0..3 {
            evict(&bpe, cold, 7);
            cold += 1;
        }
        bpe.flush();
        assert!(wait_until(|| bpe.stats().write_backlog_regions == 0));
    }
    let survivors = hot
        .iter()
        .filter(|&&h| hit_exact(&bpe, h, h + 1000))
        .count();
    (survivors, bpe.stats().reinserted_pages)
}

#[test]
fn reinsertion_keeps_hot_pages() {
    let (with, reinserted) = hot_survivors(100);
    assert_eq!(with, 2, "hot pages survive with reinsertion");
    assert!(reinserted > 0);
    let (without, none) = hot_survivors(0);
    assert_eq!(
        without, 0,
        "without reinsertion the hot pages are evicted FIFO"
    );
    assert_eq!(none, 0);
}
