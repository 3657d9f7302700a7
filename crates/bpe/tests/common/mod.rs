//! Shared helpers for the BPE scenario tests: page images with a known (id, LSN), configs on
//! temp files, and a device opener that wraps every file in `Faulty`.

#![allow(dead_code, reason = "each test binary uses a different subset")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tierdb_bpe::{Bpe, BpeConfig, DeviceOpener};
use tierdb_buffer::TierHooks;
use tierdb_io::{AlignedBuf, Device, DirectFile, Faulty};
use tierdb_page::{format, seal, set_page_lsn, Lsn, PageId, PageType, PAGE_SIZE};

pub const REGION_64K: u64 = 64 << 10; // 3 slots per region

/// A sealed page whose body is a function of (id, lsn).
pub fn page(id: u64, lsn: u64) -> AlignedBuf {
    let mut p = AlignedBuf::new(PAGE_SIZE).expect("buf");
    format(&mut p, PageId(id), PageType::BTreeLeaf);
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ lsn;
    for chunk in p[64..].chunks_mut(8) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        chunk.copy_from_slice(&x.to_le_bytes()[..chunk.len()]);
    }
    set_page_lsn(&mut p, Lsn(lsn));
    seal(&mut p);
    p
}

pub fn cfg(dir: &Path, devices: usize, size_bytes: u64, region_size_bytes: u64) -> BpeConfig {
    BpeConfig {
        size_bytes,
        devices: (0..devices)
            .map(|i| dir.join(format!("bpe{i}.dat")))
            .collect(),
        region_size_bytes,
        // Tests admit far faster than a real pool evicts; let the writer queue up.
        max_write_backlog_regions: 64,
        ..BpeConfig::default()
    }
}

pub type FaultMap = Arc<Mutex<HashMap<PathBuf, Arc<Faulty<DirectFile>>>>>;

/// An opener wrapping each file in `Faulty`; the map gives the test a handle per path.
pub fn faulty_opener() -> (DeviceOpener, FaultMap) {
    let map: FaultMap = Arc::default();
    let m = map.clone();
    let opener: DeviceOpener = Arc::new(move |p: &Path| {
        let f = Arc::new(Faulty::new(DirectFile::open(p, true)?));
        m.lock().expect("map").insert(p.to_path_buf(), f.clone());
        Ok(f as Arc<dyn Device>)
    });
    (opener, map)
}

/// `on_miss` into an aligned buffer; returns the bytes on a hit.
pub fn read(bpe: &Bpe, id: u64) -> Option<AlignedBuf> {
    let mut b = AlignedBuf::new(PAGE_SIZE).expect("buf");
    bpe.on_miss(PageId(id), &mut b).then_some(b)
}

/// Asserts that a hit returns exactly `page(id, lsn)`; returns whether it hit.
pub fn hit_exact(bpe: &Bpe, id: u64, lsn: u64) -> bool {
    match read(bpe, id) {
        Some(b) => {
            assert!(b == page(id, lsn), "page {id}: BPE served wrong bytes");
            true
        }
        None => false,
    }
}

pub fn evict(bpe: &Bpe, id: u64, lsn: u64) {
    bpe.on_evict_clean(PageId(id), &page(id, lsn));
}

/// Polls `cond` for up to 5 s.
pub fn wait_until(mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}
