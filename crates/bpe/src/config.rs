//! Configuration of the BPE: what the operator sets (`BpeConfig`), the admission policy, how
//! much to trust a manifest found at open (`Trust`), and how device files are opened
//! (`DeviceOpener`, replaceable so tests can wrap devices in `Faulty`).
//!
//! Owns: defaults and validation of settings. Must never: do I/O (except through the opener
//! it hands out) or know about the index.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use tierdb_io::{Device, DirectFile, ThrottleConfig, Throttled};

/// Which clean evictions are written to the BPE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdmissionPolicy {
    /// Admit every clean eviction (a pure victim cache).
    #[default]
    Always,
    /// Admit a page only if it was evicted clean (or dirtied while cached) before, within a
    /// recent window (a two-generation Bloom filter of page ids): one-off scans are kept out.
    SecondTouch,
}

impl AdmissionPolicy {
    /// The name used in settings (`always`, `second_touch`).
    pub fn as_str(self) -> &'static str {
        match self {
            AdmissionPolicy::Always => "always",
            AdmissionPolicy::SecondTouch => "second_touch",
        }
    }
}

impl fmt::Display for AdmissionPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AdmissionPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "always" => Ok(AdmissionPolicy::Always),
            "second_touch" | "second-touch" => Ok(AdmissionPolicy::SecondTouch),
            other => Err(format!(
                "unknown BPE admission policy '{other}' (expected always or second_touch)"
            )),
        }
    }
}

/// How much of a previous run's BPE contents `Bpe::open` may reuse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Trust {
    /// Rebuild the index only from manifests written by a clean `shutdown()`; otherwise start
    /// empty. Safe without any help from the engine (see docs/format.md, "Staleness rule").
    #[default]
    CleanShutdownOnly,
    /// Also accept manifests written by `snapshot(tag)` during a run that then crashed. The
    /// engine MUST call `retain` to drop every page that may have changed since the snapshot
    /// (see `RecoveryInfo::tag`) before installing the hooks.
    Snapshot,
    /// Ignore and delete any manifest; start empty.
    Cold,
}

/// Opens one BPE device file. The default opens `DirectFile` (created if missing), wrapped in
/// `Throttled` when `BpeConfig::throttle` is set.
pub type DeviceOpener = Arc<dyn Fn(&Path) -> io::Result<Arc<dyn Device>> + Send + Sync>;

/// The default opener: O_DIRECT file, optionally throttled to emulate a fast SSD.
pub fn default_opener(throttle: Option<ThrottleConfig>) -> DeviceOpener {
    Arc::new(move |path: &Path| -> io::Result<Arc<dyn Device>> {
        let file = DirectFile::open(path, true)?;
        Ok(match throttle {
            Some(t) => Arc::new(Throttled::new(file, t)),
            None => Arc::new(file),
        })
    })
}

/// Operator settings. Sizes are bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BpeConfig {
    /// Initial value of the enabled switch (`Bpe::set_enabled`). A disabled BPE serves no
    /// reads and admits nothing but still honours `on_dirty`, so re-enabling is safe.
    pub enabled: bool,
    /// Total size across all devices; split evenly, rounded down to whole regions.
    pub size_bytes: u64,
    /// Device files (created or extended as needed).
    pub devices: Vec<PathBuf>,
    /// Region size: a multiple of 16 KiB, 32 KiB ..= 32 MiB (at most 2047 page slots).
    pub region_size_bytes: u64,
    /// Admission policy.
    pub admission: AdmissionPolicy,
    /// Admissions are rejected ("backlog") while this many full regions wait for the writer.
    pub max_write_backlog_regions: usize,
    /// A device is dropped after this many I/O errors / corrupt reads.
    pub device_error_threshold: u32,
    /// At most this percentage of a region's slots is re-admitted when it is evicted.
    pub reinsert_max_percent: u8,
    /// In-process emulation of a fast SSD's IOPS (lab only).
    pub throttle: Option<ThrottleConfig>,
}

/// Default region size: 16 MiB.
pub const DEFAULT_REGION_SIZE_BYTES: u64 = 16 << 20;

impl Default for BpeConfig {
    fn default() -> Self {
        BpeConfig {
            enabled: true,
            size_bytes: 1 << 30,
            devices: Vec::new(),
            region_size_bytes: DEFAULT_REGION_SIZE_BYTES,
            admission: AdmissionPolicy::Always,
            max_write_backlog_regions: 2,
            device_error_threshold: 8,
            reinsert_max_percent: 50,
            throttle: None,
        }
    }
}
