//! A BPE device that fails reads, returns corrupt bytes or fails writes: zero errors reach
//! the caller, every failure is a counted miss, the device is dropped online past the error
//! threshold, and the BPE keeps serving from (and admitting to) the other device.

mod common;

use std::path::PathBuf;

use common::*;
use tierdb_bpe::{Bpe, Trust};

const PAGES: u64 = 24;

fn setup(threshold: u32) -> (tempfile::TempDir, std::sync::Arc<Bpe>, FaultMap, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let (opener, faults) = faulty_opener();
    let mut c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    c.device_error_threshold = threshold;
    let dev0 = c.devices[0].clone();
    let bpe = Bpe::open_with_opener(c, Trust::Cold, opener).expect("open");
    for id in 0..PAGES {
        evict(&bpe, id, 3);
    }
    bpe.flush();
    assert!(
        (0..PAGES).all(|id| hit_exact(&bpe, id, 3)),
        "all cached before faults"
    );
    (dir, bpe, faults, dev0)
}

fn assert_survives_on_other_device(bpe: &Bpe, dev0: &PathBuf, before_hits: u64) {
    assert!(
        wait_until(|| bpe.stats().devices.len() == 1),
        "device dropped"
    );
    let s = bpe.stats();
    assert!(bpe.is_active());
    assert_eq!(s.devices_dropped, 1);
    assert_ne!(&PathBuf::from(&s.devices[0].path), dev0);
    // Pages on the surviving device still hit, exactly.
    let hits = (0..PAGES).filter(|&id| hit_exact(bpe, id, 3)).count();
    assert!(
        hits >= (PAGES / 2) as usize - 3,
        "hits on the survivor: {hits}"
    );
    // New admissions land on the survivor and are served.
    for id in 100..106u64 {
        evict(bpe, id, 4);
    }
    bpe.flush();
    assert!((100..106u64).all(|id| hit_exact(bpe, id, 4)));
    assert!(bpe.stats().hits > before_hits);
}

#[test]
fn device_fails_reads_mid_workload() {
    let (_dir, bpe, faults, dev0) = setup(4);
    let before = bpe.stats();
    faults.lock().expect("map")[&dev0].fail_all_reads(true);
    let mut misses = 0;
    for id in 0..PAGES {
        misses += u64::from(!hit_exact(&bpe, id, 3));
    }
    assert!(misses >= 4, "reads of dev0 pages miss: {misses}");
    let s = bpe.stats();
    assert!(s.device_errors >= 4);
    assert_eq!(s.misses - before.misses, misses);
    assert_survives_on_other_device(&bpe, &dev0, s.hits);
}

#[test]
fn device_returns_corrupt_bytes() {
    let (_dir, bpe, faults, dev0) = setup(3);
    let f = faults.lock().expect("map")[&dev0].clone();
    for id in 0..PAGES {
        f.corrupt_nth_read(1);
        // hit_exact panics on wrong bytes: a corrupt read must be a miss.
        hit_exact(&bpe, id, 3);
    }
    let s = bpe.stats();
    assert!(s.validation_failures >= 3, "{s:?}");
    assert_survives_on_other_device(&bpe, &dev0, s.hits);
}

#[test]
fn device_fails_writes() {
    let dir = tempfile::tempdir().expect("tmp");
    let (opener, faults) = faulty_opener();
    let mut c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    c.device_error_threshold = 2;
    let dev0 = c.devices[0].clone();
    let bpe = Bpe::open_with_opener(c, Trust::Cold, opener).expect("open");
    faults.lock().expect("map")[&dev0].fail_all_writes(true);
    for id in 0..PAGES {
        evict(&bpe, id, 3);
        if id % 3 == 2 {
            bpe.flush();
        }
    }
    bpe.flush();
    // Pages whose region failed to reach dev0 are misses, never wrong data.
    let hits = (0..PAGES).filter(|&id| hit_exact(&bpe, id, 3)).count();
    assert!(hits >= 6, "regions on dev1 still hit: {hits}");
    let s = bpe.stats();
    assert!(s.write_errors >= 2, "{s:?}");
    assert_survives_on_other_device(&bpe, &dev0, s.hits);
}

#[test]
fn last_device_failing_deactivates_the_bpe() {
    let dir = tempfile::tempdir().expect("tmp");
    let (opener, faults) = faulty_opener();
    let mut c = cfg(dir.path(), 1, 8 * REGION_64K, REGION_64K);
    c.device_error_threshold = 1;
    let dev0 = c.devices[0].clone();
    let bpe = Bpe::open_with_opener(c, Trust::Cold, opener).expect("open");
    evict(&bpe, 1, 1);
    bpe.flush();
    faults.lock().expect("map")[&dev0].fail_all_reads(true);
    assert!(read(&bpe, 1).is_none());
    assert!(wait_until(|| !bpe.is_active()));
    // Inactive: hooks are harmless no-ops.
    evict(&bpe, 2, 1);
    assert!(read(&bpe, 2).is_none());
    assert_eq!(bpe.stats().devices_dropped, 1);
}
