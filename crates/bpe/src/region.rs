//! Per-region and per-device runtime state shared between the hooks, the writer thread and
//! the control plane.
//!
//! Owns: `RegionMeta` (state machine, binding sequence number, the in-DRAM buffer while the
//! region is open or waiting to be written) and `DeviceState` (the device handle, error
//! count, failed/removed flags, per-device counters).
//!
//! Region states: `FREE → OPEN` (allocator, `seq` set) `→ SEALED` (full, queued) `→ WRITTEN`
//! (writer) `→ EVICTING` (writer) `→ FREE` (`seq` = 0); any state `→ DEAD` when the region
//! leaves the cache (shrink, device removed or failed). A reader samples `seq` before and
//! after its read; a change means the region was recycled under it and the read is a miss.
//!
//! Lock order: `mem` is taken after the allocator mutex and before an index shard lock;
//! nobody takes the allocator mutex while holding `mem`. The writer holds `mem` shared
//! across the region's device write (readers also take it shared, so they never wait).
//!
//! Must never: let `mem` be `None` while the region is `OPEN` or `SEALED`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;
use tierdb_io::{AlignedBuf, Device};

use crate::stats::DeviceCounters;

pub(crate) const FREE: u8 = 0;
pub(crate) const OPEN: u8 = 1;
pub(crate) const SEALED: u8 = 2;
pub(crate) const WRITTEN: u8 = 3;
pub(crate) const EVICTING: u8 = 4;
pub(crate) const DEAD: u8 = 5;

pub(crate) fn state_name(s: u8) -> &'static str {
    match s {
        FREE => "free",
        OPEN => "open",
        SEALED => "sealed",
        WRITTEN => "written",
        EVICTING => "evicting",
        _ => "dead",
    }
}

/// One BPE device (a file).
pub(crate) struct DeviceState {
    /// Runtime id (unique within this process), written into region headers.
    pub id: u32,
    pub path: PathBuf,
    pub io: Arc<dyn Device>,
    pub errors: AtomicU32,
    /// Past the error threshold: no more I/O; the writer thread forgets its regions.
    pub failed: AtomicBool,
    /// Being removed by `remove_device`.
    pub removed: AtomicBool,
    pub c: DeviceCounters,
}

impl DeviceState {
    pub fn usable(&self) -> bool {
        !self.failed.load(Ordering::Acquire) && !self.removed.load(Ordering::Acquire)
    }
}

/// One region of one device.
pub(crate) struct RegionMeta {
    pub rid: u32,
    pub dev: Arc<DeviceState>,
    pub region_no: u32,
    /// Byte offset of the region in the device file.
    pub offset: u64,
    pub state: AtomicU8,
    /// Binding sequence number (global, increasing); 0 while free.
    pub seq: AtomicU64,
    /// Slots filled (open/sealed/written).
    pub used: AtomicU32,
    /// The region's bytes while OPEN/SEALED (and during the write).
    pub mem: RwLock<Option<AlignedBuf>>,
}

impl RegionMeta {
    pub fn new(rid: u32, dev: Arc<DeviceState>, region_no: u32, region_size: u64) -> Self {
        RegionMeta {
            rid,
            dev,
            region_no,
            offset: u64::from(region_no) * region_size,
            state: AtomicU8::new(FREE),
            seq: AtomicU64::new(0),
            used: AtomicU32::new(0),
            mem: RwLock::new(None),
        }
    }

    pub fn state(&self) -> u8 {
        self.state.load(Ordering::SeqCst)
    }

    pub fn set_state(&self, s: u8) {
        self.state.store(s, Ordering::SeqCst);
    }
}
