//! Regions are placed round-robin over the devices (consecutive regions alternate), so the
//! hit reads of many threads spread over the devices (with an IOPS-capped device per file,
//! two devices then serve about twice the reads per second of one: see the tier lab).

mod common;

use std::sync::Arc;

use common::*;
use tierdb_bpe::{Bpe, Trust};
use tierdb_io::ThrottleConfig;

#[test]
fn regions_alternate_devices() {
    let dir = tempfile::tempdir().expect("tmp");
    let bpe = Bpe::open(cfg(dir.path(), 2, 8 * REGION_64K, REGION_64K), Trust::Cold).expect("open");
    for id in 0..12u64 {
        evict(&bpe, id, 5);
    }
    bpe.flush();
    let mut regions: Vec<_> = bpe.regions().into_iter().filter(|r| r.seq > 0).collect();
    regions.sort_by_key(|r| r.seq);
    assert_eq!(regions.len(), 4);
    for w in regions.windows(2) {
        assert_ne!(
            w[0].device, w[1].device,
            "consecutive regions alternate: {regions:?}"
        );
    }
    let s = bpe.stats();
    assert!(s.devices.iter().all(|d| d.regions_written == 2), "{s:?}");
}

/// With regions alternating, hit reads spread over both devices: concurrent readers of a
/// spread of pages find about half of them on each device (so two IOPS-capped devices
/// serve about twice the reads per second of one; that speed is measured by the tier lab's
/// benchmark, not timed here).
#[test]
fn hit_reads_spread_over_both_devices() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), 2, 32 * REGION_64K, REGION_64K);
    c.throttle = Some(ThrottleConfig {
        read_iops: 20_000,
        ..ThrottleConfig::default()
    });
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let pages = 48u64;
    for id in 0..pages {
        evict(&bpe, id, 9);
    }
    bpe.flush();
    let bpe = Arc::new(bpe);
    let (reads, threads) = (400u64, 16u64);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let bpe = bpe.clone();
            std::thread::spawn(move || {
                for i in 0..reads / threads {
                    let id = (t * 7 + i * 13) % pages;
                    assert!(hit_exact(&bpe, id, 9), "page {id} cached");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("reader");
    }
    let s = bpe.stats();
    let hits: Vec<u64> = s.devices.iter().map(|d| d.hits).collect();
    assert_eq!(hits.iter().sum::<u64>(), reads, "{s:?}");
    for h in &hits {
        assert!(
            (reads * 35 / 100..=reads * 65 / 100).contains(h),
            "each device serves about half the hits: {hits:?}"
        );
    }
}
