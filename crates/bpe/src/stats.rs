//! Counters and the snapshot types the engine exposes through SHOW STATUS / SHOW VARIABLES.
//!
//! Owns: `Counters` / `DeviceCounters` (relaxed atomics bumped on the data path), `BpeStats`
//! and `DeviceStats` (plain snapshots), and the `Tierdb_bpe_*` status names.
//!
//! Must never: take a lock on the data path (counters are atomics).

use std::sync::atomic::{AtomicU64, Ordering};

macro_rules! counters {
    ($name:ident { $($field:ident),* $(,)? }) => {
        #[derive(Default)]
        pub(crate) struct $name { $(pub $field: AtomicU64,)* }
    };
}

counters!(Counters {
    lookups,
    hits,
    misses,
    validation_failures,
    admitted,
    rejected_backlog,
    rejected_scan,
    rejected_already_cached,
    rejected_disabled,
    rejected_unsupported,
    invalidations,
    evicted_regions,
    evicted_pages,
    reinserted,
    bytes_read,
    bytes_written,
    regions_written,
    device_errors,
    write_errors,
    devices_dropped,
    hits_from_dram,
});

counters!(DeviceCounters {
    lookups,
    hits,
    validation_failures,
    admitted,
    bytes_read,
    bytes_written,
    regions_written,
    io_errors,
    corrupt_reads,
});

/// Adds one to a counter.
pub(crate) fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Adds `n` to a counter.
pub(crate) fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

/// Per-device counters and state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceStats {
    pub path: String,
    /// `ok`, `failed` or `removing`.
    pub state: &'static str,
    pub lookups: u64,
    pub hits: u64,
    pub validation_failures: u64,
    pub pages_admitted: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub regions_written: u64,
    /// I/O errors plus corrupt reads (what the error threshold counts).
    pub device_errors: u64,
    pub corrupt_reads: u64,
    pub regions: u64,
    pub regions_written_live: u64,
    pub capacity_pages: u64,
}

impl DeviceStats {
    pub(crate) fn from_counters(c: &DeviceCounters) -> DeviceStats {
        DeviceStats {
            lookups: get(&c.lookups),
            hits: get(&c.hits),
            validation_failures: get(&c.validation_failures),
            pages_admitted: get(&c.admitted),
            bytes_read: get(&c.bytes_read),
            bytes_written: get(&c.bytes_written),
            regions_written: get(&c.regions_written),
            device_errors: get(&c.io_errors) + get(&c.corrupt_reads),
            corrupt_reads: get(&c.corrupt_reads),
            ..DeviceStats::default()
        }
    }
}

/// A snapshot of the BPE's counters and sizes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BpeStats {
    /// Has at least one usable device and is not shut down.
    pub active: bool,
    /// The enabled switch.
    pub enabled: bool,
    pub lookups: u64,
    pub hits: u64,
    /// Hits served from a region still in DRAM (open or waiting for the writer).
    pub hits_from_dram: u64,
    pub misses: u64,
    pub validation_failures: u64,
    pub pages_admitted: u64,
    pub rejected_backlog: u64,
    pub rejected_scan: u64,
    pub rejected_already_cached: u64,
    pub rejected_disabled: u64,
    /// Page id beyond the cacheable range or bytes that fail verification.
    pub rejected_unsupported: u64,
    /// Entries dropped by `on_dirty`/`on_discard`/`invalidate`.
    pub invalidations: u64,
    pub evicted_regions: u64,
    pub evicted_pages: u64,
    pub reinserted_pages: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub regions_written: u64,
    pub device_errors: u64,
    pub write_errors: u64,
    pub devices_dropped: u64,
    pub index_bytes: u64,
    pub index_bytes_per_page: f64,
    pub admission_filter_bytes: u64,
    /// DRAM held by open/sealed region buffers and spares.
    pub region_buffer_bytes: u64,
    pub pages_cached: u64,
    pub capacity_pages: u64,
    pub hit_ratio: f64,
    pub write_backlog_regions: u64,
    pub devices: Vec<DeviceStats>,
}

impl BpeStats {
    pub(crate) fn fill_counters(&mut self, c: &Counters) {
        self.lookups = get(&c.lookups);
        self.hits = get(&c.hits);
        self.hits_from_dram = get(&c.hits_from_dram);
        self.misses = get(&c.misses);
        self.validation_failures = get(&c.validation_failures);
        self.pages_admitted = get(&c.admitted);
        self.rejected_backlog = get(&c.rejected_backlog);
        self.rejected_scan = get(&c.rejected_scan);
        self.rejected_already_cached = get(&c.rejected_already_cached);
        self.rejected_disabled = get(&c.rejected_disabled);
        self.rejected_unsupported = get(&c.rejected_unsupported);
        self.invalidations = get(&c.invalidations);
        self.evicted_regions = get(&c.evicted_regions);
        self.evicted_pages = get(&c.evicted_pages);
        self.reinserted_pages = get(&c.reinserted);
        self.bytes_read = get(&c.bytes_read);
        self.bytes_written = get(&c.bytes_written);
        self.regions_written = get(&c.regions_written);
        self.device_errors = get(&c.device_errors);
        self.write_errors = get(&c.write_errors);
        self.devices_dropped = get(&c.devices_dropped);
        self.hit_ratio = if self.lookups == 0 {
            0.0
        } else {
            self.hits as f64 / self.lookups as f64
        };
    }

    /// `(name, value)` pairs for SHOW STATUS: `Tierdb_bpe_<field>` for the totals and
    /// `Tierdb_bpe_device<i>_<field>` per device (i in the order of `devices`).
    pub fn status_vars(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, val: String| v.push((format!("Tierdb_bpe_{k}"), val));
        put("active", on_off(self.active));
        put("enabled", on_off(self.enabled));
        for (k, n) in [
            ("lookups", self.lookups),
            ("hits", self.hits),
            ("hits_from_dram", self.hits_from_dram),
            ("misses", self.misses),
            ("validation_failures", self.validation_failures),
            ("pages_admitted", self.pages_admitted),
            ("rejected_backlog", self.rejected_backlog),
            ("rejected_scan", self.rejected_scan),
            ("rejected_already_cached", self.rejected_already_cached),
            ("rejected_disabled", self.rejected_disabled),
            ("rejected_unsupported", self.rejected_unsupported),
            ("invalidations", self.invalidations),
            ("evicted_regions", self.evicted_regions),
            ("evicted_pages", self.evicted_pages),
            ("reinserted_pages", self.reinserted_pages),
            ("bytes_read", self.bytes_read),
            ("bytes_written", self.bytes_written),
            ("regions_written", self.regions_written),
            ("device_errors", self.device_errors),
            ("write_errors", self.write_errors),
            ("devices_dropped", self.devices_dropped),
            ("index_bytes", self.index_bytes),
            ("admission_filter_bytes", self.admission_filter_bytes),
            ("region_buffer_bytes", self.region_buffer_bytes),
            ("pages_cached", self.pages_cached),
            ("capacity_pages", self.capacity_pages),
            ("write_backlog_regions", self.write_backlog_regions),
            ("devices", self.devices.len() as u64),
        ] {
            put(k, n.to_string());
        }
        put(
            "index_bytes_per_page",
            format!("{:.2}", self.index_bytes_per_page),
        );
        put("hit_ratio", format!("{:.4}", self.hit_ratio));
        for (i, d) in self.devices.iter().enumerate() {
            let mut dp = |k: &str, val: String| v.push((format!("Tierdb_bpe_device{i}_{k}"), val));
            dp("path", d.path.clone());
            dp("state", d.state.to_string());
            for (k, n) in [
                ("lookups", d.lookups),
                ("hits", d.hits),
                ("validation_failures", d.validation_failures),
                ("pages_admitted", d.pages_admitted),
                ("bytes_read", d.bytes_read),
                ("bytes_written", d.bytes_written),
                ("regions_written", d.regions_written),
                ("device_errors", d.device_errors),
                ("regions", d.regions),
                ("capacity_pages", d.capacity_pages),
            ] {
                dp(k, n.to_string());
            }
        }
        v
    }
}

fn on_off(b: bool) -> String {
    if b { "ON" } else { "OFF" }.to_string()
}
