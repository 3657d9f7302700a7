//! `Bpe`: the public face of the tier — the `TierHooks` the buffer pool calls, and the control
//! plane the engine exposes (resize, devices, enable, clear/retain, snapshot, shutdown,
//! stats, variables).
//!
//! Owns: the hook logic (lookup → read → validate on a miss; copy into the open region on a
//! clean eviction; drop the entry on dirty/discard), the writer thread's handle, the `ctl`
//! mutex serialising control operations, manifest files (write at shutdown/snapshot, read and
//! delete at open).
//!
//! Must never: return an error, panic or block on device I/O in `on_evict_clean`/`on_dirty`;
//! serve a page that fails `tierdb_page::verify` or whose LSN fingerprint differs from the
//! index; leave a clean manifest on disk once an entry it lists may have become stale.
//!
//! Lock order: see `inner.rs` (ctl → alloc → region mem → leaves).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use tierdb_buffer::TierHooks;
use tierdb_io::{AlignedBuf, DIRECT_ALIGN};
use tierdb_page::{page_lsn, verify, PageError, PageId, PAGE_SIZE};
use tracing::{info, warn};

use crate::admission::GhostFilter;
use crate::config::{default_opener, AdmissionPolicy, BpeConfig, DeviceOpener, Trust};
use crate::error::BpeError;
use crate::format::{Manifest, ManifestEntry, ManifestRegion, RegionLayout};
use crate::index::{key_of, Index, Loc};
use crate::inner::{Alloc, DevAlloc, Inner, Settings};
use crate::region::{state_name, DeviceState, EVICTING, OPEN, SEALED, WRITTEN};
use crate::stats::{add, bump, BpeStats, Counters, DeviceCounters, DeviceStats};
use crate::writer;

/// What `open` found from the previous run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryInfo {
    /// Device manifests found (and deleted) at open.
    pub manifests_found: u32,
    /// Every manifest used was written by a clean shutdown.
    pub clean: bool,
    /// Smallest tag among the manifests used (`snapshot` / `shutdown_tagged`; 0 from `shutdown`).
    pub tag: Option<u64>,
    pub regions_restored: u64,
    /// Regions listed in a manifest but not found intact on their device (not reused).
    pub regions_rejected: u64,
    pub pages_restored: u64,
}

/// One region, for observability and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub device: PathBuf,
    pub region_no: u32,
    /// Binding sequence number (0 when free).
    pub seq: u64,
    pub state: &'static str,
}

/// The Buffer Pool Extension. Install with `BufferPool::set_hooks(Some(bpe.clone()))`.
pub struct Bpe {
    inner: Arc<Inner>,
    writer: Mutex<Option<JoinHandle<()>>>,
    ctl: Mutex<()>,
    shut: AtomicBool,
    recovery: RecoveryInfo,
}

fn manifest_path(device: &Path) -> PathBuf {
    let mut s = device.as_os_str().to_os_string();
    s.push(".bpe-manifest");
    PathBuf::from(s)
}

fn sync_parent(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(f) = fs::File::open(dir) {
            let _ = f.sync_all();
        }
    }
}

/// Reads and deletes `device`'s manifest; returns it if `trust` allows using it.
fn take_manifest(device: &Path, trust: Trust, region_size: u64) -> (bool, Option<Manifest>) {
    let mp = manifest_path(device);
    let bytes = match fs::read(&mp) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (false, None),
        Err(e) => {
            warn!(manifest = %mp.display(), "BPE: cannot read manifest: {e}");
            return (false, None);
        }
    };
    // Delete before use: if we crash from here on, the next open must not trust it.
    let _ = fs::remove_file(&mp);
    sync_parent(&mp);
    if trust == Trust::Cold {
        return (true, None);
    }
    match Manifest::decode(&bytes) {
        Ok(m) if m.region_size == region_size && (m.clean || trust == Trust::Snapshot) => {
            (true, Some(m))
        }
        Ok(m) => {
            info!(manifest = %mp.display(), clean = m.clean, "BPE: manifest not used; starting cold");
            (true, None)
        }
        Err(e) => {
            warn!(manifest = %mp.display(), "BPE: bad manifest ignored: {e}");
            (true, None)
        }
    }
}

fn write_file_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    sync_parent(path);
    Ok(())
}

impl Bpe {
    /// Opens (creating/extending) the configured devices and starts the writer thread.
    pub fn open(cfg: BpeConfig, trust: Trust) -> Result<Arc<Bpe>, BpeError> {
        let opener = default_opener(cfg.throttle);
        Self::open_with_opener(cfg, trust, opener)
    }

    /// `open` with a custom device opener (tests wrap devices in `Faulty`).
    pub fn open_with_opener(
        cfg: BpeConfig,
        trust: Trust,
        opener: DeviceOpener,
    ) -> Result<Arc<Bpe>, BpeError> {
        let layout = RegionLayout::new(cfg.region_size_bytes)?;
        if cfg.device_error_threshold == 0 {
            return Err(BpeError::Config(
                "device_error_threshold must be ≥ 1".into(),
            ));
        }
        if cfg.max_write_backlog_regions == 0 {
            return Err(BpeError::Config(
                "max_write_backlog_regions must be ≥ 1".into(),
            ));
        }
        for (i, p) in cfg.devices.iter().enumerate() {
            if cfg.devices[..i].contains(p) {
                return Err(BpeError::DuplicateDevice(p.display().to_string()));
            }
        }
        let window = (cfg.size_bytes / layout.region_size) * u64::from(layout.slots);
        let inner = Arc::new(Inner {
            layout,
            opener: opener.clone(),
            settings: Settings {
                size_bytes: AtomicU64::new(cfg.size_bytes),
                admission: AtomicU8::new(u8::from(cfg.admission == AdmissionPolicy::SecondTouch)),
                max_backlog: AtomicUsize::new(cfg.max_write_backlog_regions),
                error_threshold: AtomicU32::new(cfg.device_error_threshold),
                reinsert_pct: AtomicU8::new(cfg.reinsert_max_percent.min(100)),
            },
            enabled: AtomicBool::new(cfg.enabled),
            active: AtomicBool::new(false),
            epoch: AtomicU64::new(0),
            index: Index::new(),
            regions: RwLock::new(Vec::new()),
            alloc: Mutex::new(Alloc {
                devices: Vec::new(),
                rr: 0,
                open: None,
                sealed: Default::default(),
                fifo: Default::default(),
                free_rids: Vec::new(),
                next_rid: 0,
                busy: false,
                draining: false,
                shutdown: false,
            }),
            work: Condvar::new(),
            idle: Condvar::new(),
            ghost: GhostFilter::new(window),
            c: Counters::default(),
            sealed_len: AtomicUsize::new(0),
            next_seq: AtomicU64::new(1),
            next_device_id: AtomicU32::new(0),
            spare: Mutex::new(Vec::new()),
            buffer_bytes: AtomicU64::new(0),
            manifests_written: AtomicBool::new(false),
        });
        let mut manifests = Vec::new();
        let mut recovery = RecoveryInfo {
            clean: true,
            ..RecoveryInfo::default()
        };
        for path in &cfg.devices {
            let io = opener(path).map_err(|source| BpeError::Device {
                path: path.display().to_string(),
                source,
            })?;
            let dev = Arc::new(DeviceState {
                id: inner.next_device_id.fetch_add(1, Ordering::Relaxed),
                path: path.clone(),
                io,
                errors: AtomicU32::new(0),
                failed: AtomicBool::new(false),
                removed: AtomicBool::new(false),
                c: DeviceCounters::default(),
            });
            let (found, m) = take_manifest(path, trust, layout.region_size);
            recovery.manifests_found += u32::from(found);
            inner.alloc.lock().devices.push(DevAlloc {
                dev,
                regions: Vec::new(),
                free: Default::default(),
            });
            manifests.push(m);
        }
        inner.apply_size(cfg.size_bytes)?;
        Self::restore(&inner, &manifests, &mut recovery);
        if recovery.regions_restored == 0 {
            recovery.clean = recovery.manifests_found > 0 && recovery.clean;
        }
        inner
            .active
            .store(!cfg.devices.is_empty(), Ordering::Release);
        let thread_inner = inner.clone();
        let handle = std::thread::Builder::new()
            .name("bpe-writer".into())
            .spawn(move || writer::run(thread_inner))
            .map_err(|source| BpeError::Device {
                path: "bpe-writer thread".into(),
                source,
            })?;
        Ok(Arc::new(Bpe {
            inner,
            writer: Mutex::new(Some(handle)),
            ctl: Mutex::new(()),
            shut: AtomicBool::new(false),
            recovery,
        }))
    }

    /// Reads region `region_no`'s header from `dev` and checks it is the region with
    /// sequence number `seq` (an unreadable, zeroed or different header is a no).
    fn region_on_device(inner: &Inner, dev: &DeviceState, region_no: u32, seq: u64) -> bool {
        let len = inner.layout.header_len;
        let Ok(mut buf) = AlignedBuf::new(len) else {
            return false;
        };
        let off = u64::from(region_no) * inner.layout.region_size;
        if dev.io.read_at(&mut buf, off).is_err() {
            return false;
        }
        matches!(crate::format::RegionHeader::decode(&buf), Ok(h) if h.seq == seq && h.region_no == region_no)
    }

    fn restore(inner: &Inner, manifests: &[Option<Manifest>], rec: &mut RecoveryInfo) {
        let mut restored = Vec::new();
        let mut a = inner.alloc.lock();
        for (pos, m) in manifests.iter().enumerate() {
            let Some(m) = m else { continue };
            rec.clean &= m.clean;
            rec.tag = Some(rec.tag.map_or(m.tag, |t: u64| t.min(m.tag)));
            let mut by_no = HashMap::new();
            let dev = a.devices[pos].dev.clone();
            for r in &m.regions {
                // The device file must still hold the region the manifest describes (it may
                // have been deleted and recreated, truncated, or overwritten since).
                if !Self::region_on_device(inner, &dev, r.region_no, r.seq) {
                    rec.regions_rejected += 1;
                    continue;
                }
                if let Some(meta) = Inner::restore_region_locked(&mut a, pos, r.region_no, r.seq) {
                    by_no.insert(r.region_no, meta.clone());
                    restored.push(meta);
                }
            }
            for e in &m.entries {
                let (Some(meta), Some(key)) = (by_no.get(&e.region_no), key_of(e.page_id)) else {
                    continue;
                };
                if u32::from(e.slot) >= inner.layout.slots {
                    continue;
                }
                let loc = Loc {
                    rid: meta.rid,
                    slot: e.slot,
                };
                if inner.index.insert_restored(key, e.lsn_low, loc, e.hit) {
                    rec.pages_restored += 1;
                }
            }
        }
        restored.sort_by_key(|m| m.seq.load(Ordering::SeqCst));
        if let Some(last) = restored.last() {
            let next = last.seq.load(Ordering::SeqCst) + 1;
            inner.next_seq.fetch_max(next, Ordering::SeqCst);
        }
        rec.regions_restored = restored.len() as u64;
        a.fifo.extend(restored);
    }

    /// What `open` reused from the previous run.
    pub fn recovery(&self) -> &RecoveryInfo {
        &self.recovery
    }

    /// True while the BPE has a usable device and is not shut down.
    pub fn is_active(&self) -> bool {
        self.inner.active.load(Ordering::Acquire)
    }

    /// The enabled switch: while off, no reads are served and nothing is admitted, but
    /// `on_dirty` still drops entries, so switching back on needs no `clear()`. Prefer this
    /// over removing the hooks from the pool.
    pub fn set_enabled(&self, on: bool) {
        self.inner.enabled.store(on, Ordering::Release);
    }

    pub fn is_enabled(&self) -> bool {
        self.inner.enabled.load(Ordering::Acquire)
    }

    pub fn set_admission(&self, p: AdmissionPolicy) {
        self.inner.settings.admission.store(
            u8::from(p == AdmissionPolicy::SecondTouch),
            Ordering::Relaxed,
        );
    }

    pub fn set_max_write_backlog_regions(&self, n: usize) {
        self.inner
            .settings
            .max_backlog
            .store(n.max(1), Ordering::Relaxed);
    }

    pub fn set_device_error_threshold(&self, n: u32) {
        self.inner
            .settings
            .error_threshold
            .store(n.max(1), Ordering::Relaxed);
    }

    pub fn set_reinsert_max_percent(&self, pct: u8) {
        self.inner
            .settings
            .reinsert_pct
            .store(pct.min(100), Ordering::Relaxed);
    }

    /// Drops every index entry (the region contents become garbage, reclaimed FIFO). Call
    /// it before re-installing hooks that were removed from the pool, since `on_dirty` calls
    /// were missed meanwhile. Admissions that started before the call are discarded.
    pub fn clear(&self) -> u64 {
        {
            let _a = self.inner.alloc.lock();
            self.inner.epoch.fetch_add(1, Ordering::SeqCst);
        }
        let n = self.inner.index.clear();
        add(&self.inner.c.invalidations, n);
        self.invalidate_manifests();
        n
    }

    /// Keeps only the entries for which `keep(page_id, lsn_low32)` is true (e.g. after a
    /// crash, drop every page redo touched since the snapshot). Returns how many were removed.
    pub fn retain(&self, mut keep: impl FnMut(PageId, u32) -> bool) -> u64 {
        let n = self
            .inner
            .index
            .retain(|e| keep(PageId(e.page_id()), e.lsn_low));
        add(&self.inner.c.invalidations, n);
        if n > 0 {
            self.invalidate_manifests();
        }
        n
    }

    /// Drops page `id`'s entry, if any.
    pub fn invalidate(&self, id: PageId) -> bool {
        let Some(key) = key_of(id.0) else {
            return false;
        };
        let hit = self.inner.index.remove(key).is_some();
        if hit {
            bump(&self.inner.c.invalidations);
            self.invalidate_manifests();
        }
        hit
    }

    fn invalidate_manifests(&self) {
        if self.inner.manifests_written.swap(false, Ordering::AcqRel) {
            let paths: Vec<PathBuf> = self
                .inner
                .alloc
                .lock()
                .devices
                .iter()
                .map(|d| d.dev.path.clone())
                .collect();
            for p in paths {
                let mp = manifest_path(&p);
                let _ = fs::remove_file(&mp);
                sync_parent(&mp);
            }
            warn!("BPE: an entry was invalidated after shutdown; manifests deleted");
        }
    }

    /// Changes the total size online (shrink forgets the regions past each device's share).
    pub fn set_size(&self, size_bytes: u64) -> Result<(), BpeError> {
        let _c = self.ctl.lock();
        if self.shut.load(Ordering::Acquire) {
            return Err(BpeError::ShutDown);
        }
        self.inner
            .settings
            .size_bytes
            .store(size_bytes, Ordering::Relaxed);
        self.inner.drain();
        let r = self.inner.apply_size(size_bytes);
        self.inner.undrain();
        r
    }

    /// Adds a device online; the total size is re-split over all devices.
    pub fn add_device(&self, path: &Path) -> Result<(), BpeError> {
        let _c = self.ctl.lock();
        if self.shut.load(Ordering::Acquire) {
            return Err(BpeError::ShutDown);
        }
        if self
            .inner
            .alloc
            .lock()
            .devices
            .iter()
            .any(|d| d.dev.path == path)
        {
            return Err(BpeError::DuplicateDevice(path.display().to_string()));
        }
        let io = (self.inner.opener)(path).map_err(|source| BpeError::Device {
            path: path.display().to_string(),
            source,
        })?;
        let mp = manifest_path(path);
        let _ = fs::remove_file(&mp);
        let dev = Arc::new(DeviceState {
            id: self.inner.next_device_id.fetch_add(1, Ordering::Relaxed),
            path: path.to_path_buf(),
            io,
            errors: AtomicU32::new(0),
            failed: AtomicBool::new(false),
            removed: AtomicBool::new(false),
            c: DeviceCounters::default(),
        });
        self.inner.drain();
        self.inner.alloc.lock().devices.push(DevAlloc {
            dev,
            regions: Vec::new(),
            free: Default::default(),
        });
        let r = self
            .inner
            .apply_size(self.inner.settings.size_bytes.load(Ordering::Relaxed));
        self.inner.active.store(true, Ordering::Release);
        self.inner.undrain();
        r
    }

    /// Removes a device online: its regions are forgotten (reads of them become misses),
    /// the total size is re-split over the remaining devices. The file is left in place.
    pub fn remove_device(&self, path: &Path) -> Result<(), BpeError> {
        let _c = self.ctl.lock();
        if self.shut.load(Ordering::Acquire) {
            return Err(BpeError::ShutDown);
        }
        let dev = {
            let a = self.inner.alloc.lock();
            a.devices
                .iter()
                .find(|d| d.dev.path == path)
                .map(|d| d.dev.clone())
        };
        let Some(dev) = dev else {
            return Err(BpeError::UnknownDevice(path.display().to_string()));
        };
        dev.removed.store(true, Ordering::Release);
        {
            let mut a = self.inner.alloc.lock();
            while a.devices.iter().any(|d| Arc::ptr_eq(&d.dev, &dev)) {
                self.inner.work.notify_all();
                self.inner.idle.wait_for(&mut a, Duration::from_millis(20));
            }
        }
        let mp = manifest_path(path);
        let _ = fs::remove_file(&mp);
        self.inner.drain();
        let r = self
            .inner
            .apply_size(self.inner.settings.size_bytes.load(Ordering::Relaxed));
        self.inner.undrain();
        r
    }

    /// Seals the open region and waits until every sealed region is written and the writer
    /// has evicted what it needs to (tests, and before a planned snapshot). Admissions are
    /// rejected while it waits for the writes.
    pub fn flush(&self) {
        let _c = self.ctl.lock();
        if self.shut.load(Ordering::Acquire) {
            return;
        }
        {
            let mut a = self.inner.alloc.lock();
            self.inner.seal_locked(&mut a);
        }
        self.inner.drain();
        self.inner.undrain();
        self.inner.settle();
    }

    /// Persists per-device manifests listing the written regions and the live entries in
    /// them, marked NOT clean, with `tag` (e.g. the redo end LSN now). After a crash,
    /// `open(.., Trust::Snapshot)` reloads them and reports the tag in `recovery()`; the
    /// engine must then `retain` away every page changed after the tag.
    pub fn snapshot(&self, tag: u64) -> Result<(), BpeError> {
        let _c = self.ctl.lock();
        if self.shut.load(Ordering::Acquire) {
            return Err(BpeError::ShutDown);
        }
        self.write_manifests(false, tag)
    }

    fn write_manifests(&self, clean: bool, tag: u64) -> Result<(), BpeError> {
        let inner = &self.inner;
        let mut per_dev: Vec<(Arc<DeviceState>, Manifest)> = Vec::new();
        let mut by_rid: HashMap<u32, (usize, u32)> = HashMap::new();
        {
            let a = inner.alloc.lock();
            for d in a.devices.iter().filter(|d| d.dev.usable()) {
                let mut m = Manifest {
                    clean,
                    region_size: inner.layout.region_size,
                    tag,
                    ..Manifest::default()
                };
                for r in &d.regions {
                    if r.state() == WRITTEN {
                        by_rid.insert(r.rid, (per_dev.len(), r.region_no));
                        m.regions.push(ManifestRegion {
                            region_no: r.region_no,
                            seq: r.seq.load(Ordering::SeqCst),
                        });
                    }
                }
                per_dev.push((d.dev.clone(), m));
            }
        }
        inner.index.for_each(|e| {
            let loc = e.loc();
            if let Some(&(di, no)) = by_rid.get(&loc.rid) {
                per_dev[di].1.entries.push(ManifestEntry {
                    page_id: e.page_id(),
                    lsn_low: e.lsn_low,
                    region_no: no,
                    slot: loc.slot,
                    hit: e.hit(),
                });
            }
        });
        for (dev, m) in per_dev {
            let mp = manifest_path(&dev.path);
            dev.io
                .sync()
                .and_then(|()| write_file_atomic(&mp, &m.encode()))
                .map_err(|source| BpeError::Manifest {
                    path: mp.display().to_string(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Stops admissions, writes the open region and the backlog, stops the writer and
    /// persists clean manifests so the next `open` is warm. Call it after the pool has
    /// flushed every dirty page and no hook call can follow (an `on_dirty` that still removes
    /// an entry deletes the manifests again).
    pub fn shutdown(&self) -> Result<(), BpeError> {
        self.shutdown_tagged(0)
    }

    /// `shutdown`, recording `tag` in the clean manifests (the engine passes its redo end
    /// LSN, so a later open can tell whether the data changed since).
    pub fn shutdown_tagged(&self, tag: u64) -> Result<(), BpeError> {
        let _c = self.ctl.lock();
        if self.shut.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        {
            let mut a = self.inner.alloc.lock();
            self.inner.seal_locked(&mut a);
            a.shutdown = true;
            self.inner.work.notify_all();
        }
        if let Some(h) = self.writer.lock().take() {
            let _ = h.join();
        }
        self.inner.active.store(false, Ordering::Release);
        let r = self.write_manifests(true, tag);
        if r.is_ok() {
            self.inner.manifests_written.store(true, Ordering::Release);
        }
        r
    }

    /// Regions of every device, for observability and tests.
    pub fn regions(&self) -> Vec<RegionInfo> {
        let a = self.inner.alloc.lock();
        a.devices
            .iter()
            .flat_map(|d| {
                d.regions.iter().map(|r| RegionInfo {
                    device: d.dev.path.clone(),
                    region_no: r.region_no,
                    seq: r.seq.load(Ordering::SeqCst),
                    state: state_name(r.state()),
                })
            })
            .collect()
    }

    /// Counters and sizes.
    pub fn stats(&self) -> BpeStats {
        let inner = &self.inner;
        let mut s = BpeStats {
            active: self.is_active(),
            enabled: self.is_enabled(),
            ..BpeStats::default()
        };
        s.fill_counters(&inner.c);
        {
            let a = inner.alloc.lock();
            for d in &a.devices {
                let mut ds = DeviceStats::from_counters(&d.dev.c);
                ds.path = d.dev.path.display().to_string();
                ds.state = if d.dev.failed.load(Ordering::Acquire) {
                    "failed"
                } else if d.dev.removed.load(Ordering::Acquire) {
                    "removing"
                } else {
                    "ok"
                };
                ds.regions = d.regions.len() as u64;
                ds.regions_written_live =
                    d.regions.iter().filter(|r| r.state() == WRITTEN).count() as u64;
                ds.capacity_pages = ds.regions * u64::from(inner.layout.slots);
                if d.dev.usable() {
                    s.capacity_pages += ds.capacity_pages;
                }
                s.devices.push(ds);
            }
            s.write_backlog_regions = a.sealed.len() as u64;
        }
        s.pages_cached = inner.index.len();
        s.index_bytes = inner.index.bytes() + inner.region_table_bytes();
        s.index_bytes_per_page = s.index_bytes as f64 / s.pages_cached.max(1) as f64;
        s.admission_filter_bytes = inner.ghost.bytes();
        s.region_buffer_bytes = inner.buffer_bytes.load(Ordering::Relaxed);
        s
    }

    /// `(name, value)` settings for SHOW VARIABLES.
    pub fn variables(&self) -> Vec<(&'static str, String)> {
        let st = &self.inner.settings;
        let devices: Vec<String> = self
            .inner
            .alloc
            .lock()
            .devices
            .iter()
            .map(|d| d.dev.path.display().to_string())
            .collect();
        vec![
            (
                "tierdb_bpe_enabled",
                if self.is_enabled() { "ON" } else { "OFF" }.into(),
            ),
            (
                "tierdb_bpe_size",
                st.size_bytes.load(Ordering::Relaxed).to_string(),
            ),
            ("tierdb_bpe_devices", devices.join(",")),
            (
                "tierdb_bpe_region_size",
                self.inner.layout.region_size.to_string(),
            ),
            ("tierdb_bpe_admission", self.inner.admission().to_string()),
            (
                "tierdb_bpe_max_write_backlog_regions",
                st.max_backlog.load(Ordering::Relaxed).to_string(),
            ),
            (
                "tierdb_bpe_device_error_threshold",
                st.error_threshold.load(Ordering::Relaxed).to_string(),
            ),
            (
                "tierdb_bpe_reinsert_max_percent",
                st.reinsert_pct.load(Ordering::Relaxed).to_string(),
            ),
        ]
    }

    /// Reads into an aligned `buf` (bouncing through an aligned buffer if needed).
    fn read_slot(dev: &DeviceState, buf: &mut [u8], off: u64) -> io::Result<()> {
        if (buf.as_ptr() as usize).is_multiple_of(DIRECT_ALIGN) {
            return dev.io.read_at(buf, off);
        }
        let mut b = AlignedBuf::new(PAGE_SIZE)?;
        dev.io.read_at(&mut b, off)?;
        buf.copy_from_slice(&b);
        Ok(())
    }

    fn lookup(&self, id: PageId, buf: &mut [u8]) -> bool {
        let inner = &self.inner;
        let Some(key) = key_of(id.0) else {
            return false;
        };
        let Some(e) = inner.index.get(key) else {
            return false;
        };
        let loc = e.loc();
        let Some(m) = inner.region(loc.rid) else {
            return false;
        };
        let seq = m.seq.load(Ordering::SeqCst);
        let st = m.state();
        if seq == 0 || !matches!(st, OPEN | SEALED | WRITTEN | EVICTING) || !m.dev.usable() {
            return false;
        }
        bump(&m.dev.c.lookups);
        let at = inner.layout.slot_offset(loc.slot);
        let from_mem = {
            let g = m.mem.read();
            match g.as_ref() {
                Some(b) => {
                    buf.copy_from_slice(&b[at..at + PAGE_SIZE]);
                    true
                }
                None => false,
            }
        };
        let still =
            |m: &crate::region::RegionMeta| m.seq.load(Ordering::SeqCst) == seq && m.dev.usable();
        if !from_mem {
            if !matches!(m.state(), WRITTEN | EVICTING) {
                return false;
            }
            if let Err(err) = Self::read_slot(&m.dev, buf, m.offset + at as u64) {
                if still(&m) {
                    inner.device_error(&m.dev, false, &err);
                }
                return false;
            }
            add(&inner.c.bytes_read, PAGE_SIZE as u64);
            add(&m.dev.c.bytes_read, PAGE_SIZE as u64);
        }
        let bad = match verify(buf, id) {
            Ok(()) => (page_lsn(buf).0 as u32 != e.lsn_low).then_some(false),
            Err(PageError::WrongPageId { .. }) => Some(false),
            Err(_) => Some(true),
        };
        if let Some(corrupt) = bad {
            bump(&inner.c.validation_failures);
            bump(&m.dev.c.validation_failures);
            if still(&m) {
                if corrupt && !from_mem {
                    inner.device_error(&m.dev, true, &"corrupt page read back");
                }
                inner.index.remove_if_at(key, loc);
            }
            return false;
        }
        if !still(&m) || !inner.index.mark_hit(key, loc, e.lsn_low) {
            return false;
        }
        if from_mem {
            bump(&inner.c.hits_from_dram);
        }
        bump(&m.dev.c.hits);
        true
    }
}

impl TierHooks for Bpe {
    fn on_miss(&self, id: PageId, buf: &mut [u8]) -> bool {
        let inner = &self.inner;
        if !inner.serving() || buf.len() != PAGE_SIZE {
            return false;
        }
        bump(&inner.c.lookups);
        let hit = self.lookup(id, buf);
        bump(if hit { &inner.c.hits } else { &inner.c.misses });
        hit
    }

    fn on_evict_clean(&self, id: PageId, page: &[u8]) {
        let inner = &self.inner;
        if !inner.serving() {
            bump(&inner.c.rejected_disabled);
            return;
        }
        let epoch = inner.epoch.load(Ordering::SeqCst);
        let Some(key) = key_of(id.0) else {
            bump(&inner.c.rejected_unsupported);
            return;
        };
        if verify(page, id).is_err() {
            bump(&inner.c.rejected_unsupported);
            return;
        }
        let lsn_low = page_lsn(page).0 as u32;
        if inner.index.get(key).is_some_and(|e| e.lsn_low == lsn_low) {
            bump(&inner.c.rejected_already_cached);
            return;
        }
        if inner.admission() == AdmissionPolicy::SecondTouch && !inner.ghost.seen_then_insert(key) {
            bump(&inner.c.rejected_scan);
            return;
        }
        if inner.sealed_len.load(Ordering::SeqCst)
            >= inner.settings.max_backlog.load(Ordering::Relaxed)
        {
            bump(&inner.c.rejected_backlog);
            return;
        }
        let mut a = inner.alloc.lock();
        if a.draining || a.shutdown || inner.epoch.load(Ordering::SeqCst) != epoch {
            bump(&inner.c.rejected_disabled);
            return;
        }
        let Some((m, slot)) = inner.append_locked(&mut a, page) else {
            bump(&inner.c.rejected_backlog);
            return;
        };
        inner.index.insert(key, lsn_low, Inner::loc(&m, slot));
        bump(&inner.c.admitted);
        bump(&m.dev.c.admitted);
        inner.seal_if_full(&mut a);
    }

    fn on_dirty(&self, id: PageId) {
        let inner = &self.inner;
        let Some(key) = key_of(id.0) else { return };
        if inner.index.remove(key).is_some() {
            bump(&inner.c.invalidations);
            if inner.admission() == AdmissionPolicy::SecondTouch {
                inner.ghost.insert(key);
            }
            self.invalidate_manifests();
        }
    }

    fn on_discard(&self, id: PageId) {
        let Some(key) = key_of(id.0) else { return };
        if self.inner.index.remove(key).is_some() {
            bump(&self.inner.c.invalidations);
            self.invalidate_manifests();
        }
    }
}

impl Drop for Bpe {
    fn drop(&mut self) {
        {
            let mut a = self.inner.alloc.lock();
            a.shutdown = true;
            self.inner.work.notify_all();
        }
        if let Some(h) = self.writer.lock().take() {
            let _ = h.join();
        }
    }
}
