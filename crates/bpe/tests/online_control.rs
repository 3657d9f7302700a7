//! Resize and add/remove devices online while reader threads call `on_miss` (checking every
//! hit byte for byte) and writer threads call `on_evict_clean`: no panic, no wrong data,
//! and the cache follows its new shape.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use common::*;
use tierdb_bpe::{Bpe, Trust};

const PAGES: u64 = 200;

/// Page `id` always has LSN `id + 1` here; staleness is the property test's job.
fn traffic(bpe: &Arc<Bpe>, stop: &Arc<AtomicBool>, hits: &Arc<AtomicU64>) -> Vec<JoinHandle<()>> {
    let mut hs = Vec::new();
    for t in 0..2u64 {
        let (bpe, stop) = (bpe.clone(), stop.clone());
        hs.push(std::thread::spawn(move || {
            let mut i = t;
            while !stop.load(Ordering::Relaxed) {
                let id = (i * 7919) % PAGES;
                evict(&bpe, id, id + 1);
                i += 1;
            }
        }));
    }
    for t in 0..2u64 {
        let (bpe, stop, hits) = (bpe.clone(), stop.clone(), hits.clone());
        hs.push(std::thread::spawn(move || {
            let mut i = t;
            while !stop.load(Ordering::Relaxed) {
                let id = (i * 104_729) % PAGES;
                if hit_exact(&bpe, id, id + 1) {
                    hits.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
        }));
    }
    hs
}

fn pause() {
    std::thread::sleep(std::time::Duration::from_millis(60));
}

#[test]
fn online_resize_grow_and_shrink() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    let dev0 = c.devices[0].clone();
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let (stop, hits) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let hs = traffic(&bpe, &stop, &hits);
    pause();
    for size in [
        4 * REGION_64K,
        64 * REGION_64K,
        6 * REGION_64K,
        32 * REGION_64K,
    ] {
        bpe.set_size(size).expect("resize");
        let s = bpe.stats();
        assert_eq!(s.capacity_pages, size / REGION_64K * 3, "{s:?}");
        let len = std::fs::metadata(&dev0).expect("stat").len();
        assert_eq!(len, size / 2, "device file follows its share");
        pause();
    }
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().expect("no panic in traffic");
    }
    let s = bpe.stats();
    assert!(hits.load(Ordering::Relaxed) > 0);
    assert_eq!(s.device_errors, 0, "shrinking is not a device error: {s:?}");
    assert!(bpe.is_active());
}

#[test]
fn add_and_remove_device_online() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = cfg(dir.path(), 1, 16 * REGION_64K, REGION_64K);
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let (stop, hits) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let hs = traffic(&bpe, &stop, &hits);
    pause();
    let extra = dir.path().join("extra.dat");
    bpe.add_device(&extra).expect("add");
    assert!(bpe.add_device(&extra).is_err(), "duplicate refused");
    pause();
    let s = bpe.stats();
    assert_eq!(s.devices.len(), 2);
    assert!(s.devices.iter().all(|d| d.regions == 8), "{s:?}");
    assert!(wait_until(|| bpe
        .stats()
        .devices
        .iter()
        .all(|d| d.regions_written > 0)));
    let first = dir.path().join("bpe0.dat");
    bpe.remove_device(&first).expect("remove");
    pause();
    let s = bpe.stats();
    assert_eq!(s.devices.len(), 1);
    assert_eq!(
        s.devices[0].regions, 16,
        "the survivor takes the whole size"
    );
    assert!(bpe.remove_device(&first).is_err());
    bpe.remove_device(&extra).expect("remove last");
    assert!(!bpe.is_active());
    bpe.add_device(&first).expect("re-add");
    assert!(bpe.is_active());
    pause();
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        h.join().expect("no panic in traffic");
    }
    let s = bpe.stats();
    assert_eq!(s.device_errors, 0, "{s:?}");
    assert_eq!(s.devices_dropped, 0);
    assert!(hits.load(Ordering::Relaxed) > 0);
    assert!(s.pages_cached > 0);
}
