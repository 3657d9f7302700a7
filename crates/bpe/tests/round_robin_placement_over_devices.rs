//! Regions are placed round-robin over the devices (consecutive regions alternate), so with
//! an IOPS-capped device per file, two devices serve about twice the hit reads per second
//! of one when many threads miss at once.

mod common;

use std::sync::Arc;
use std::time::Instant;

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

/// Seconds for `threads` readers to hit `reads` pages on `devices` devices capped at
/// `iops` reads per second each.
fn read_time(devices: usize, iops: u32, reads: u64, threads: u64) -> f64 {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), devices, 32 * REGION_64K, REGION_64K);
    c.throttle = Some(ThrottleConfig {
        read_iops: iops,
        ..ThrottleConfig::default()
    });
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let pages = 48u64;
    for id in 0..pages {
        evict(&bpe, id, 9);
    }
    bpe.flush();
    let bpe = Arc::new(bpe);
    let start = Instant::now();
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
    start.elapsed().as_secs_f64()
}

#[test]
fn two_devices_read_about_twice_as_fast() {
    let one = read_time(1, 2000, 400, 16);
    let two = read_time(2, 2000, 400, 16);
    assert!(one > 0.15, "one device is IOPS-bound: {one}");
    assert!(one / two > 1.5, "2 devices {two:.3}s vs 1 device {one:.3}s");
}
