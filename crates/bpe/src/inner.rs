//! The state shared by the hooks, the writer thread and the control plane, and the
//! operations on it that every one of them uses: region allocation (round-robin over
//! devices), appending a page to the open region, sealing, releasing regions, device error
//! accounting, draining, resizing.
//!
//! Owns: `Inner` (index, region table, allocator state, counters, settings) and `Alloc`
//! (everything guarded by the allocator mutex: devices and their free regions, the open
//! region, the queue of sealed regions, the FIFO of written regions, free region ids).
//!
//! # Lock order (the whole crate), outermost first
//!
//! 1. `Bpe::ctl` (control plane: resize, add/remove device, snapshot, shutdown);
//! 2. `Inner::alloc` (allocator mutex);
//! 3. `RegionMeta::mem` (a region's DRAM buffer);
//! 4. leaves: an index shard, the region table `regions`, `spare`, the ghost filter's
//!    rotation lock. A leaf holder takes no other lock.
//!
//! No lock but `mem` (shared, by the writer, for the region being written) is held across
//! device I/O. The hit path takes one shard lock, the region table read lock and the
//! region's `mem` read lock, one after the other, never nested, and never the allocator
//! mutex. The evicting thread takes the allocator mutex for a 16 KiB copy and never waits
//! for I/O.
//!
//! Must never: hand out a region for writing while it holds live index entries from an
//! earlier binding (entries are removed before a region goes back to FREE); recycle a region
//! id before every index entry naming it is gone.

use std::collections::{HashSet, VecDeque};
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use tierdb_io::AlignedBuf;
use tierdb_page::{page_id, page_lsn, PAGE_SIZE};
use tracing::{error, warn};

use crate::admission::GhostFilter;
use crate::config::{AdmissionPolicy, DeviceOpener};
use crate::error::BpeError;
use crate::format::{seal_region_header, write_slot_entry, RegionLayout, SlotEntry};
use crate::index::{Index, Loc, MAX_REGION_IDS};
use crate::region::{DeviceState, RegionMeta, DEAD, FREE, OPEN, SEALED, WRITTEN};
use crate::stats::{bump, Counters};

/// The region being filled.
pub(crate) struct OpenRegion {
    pub meta: Arc<RegionMeta>,
    pub next: u16,
}

/// One device as the allocator sees it.
pub(crate) struct DevAlloc {
    pub dev: Arc<DeviceState>,
    /// Regions by region number; its length is the device's share of `size_bytes`.
    pub regions: Vec<Arc<RegionMeta>>,
    /// Free region numbers.
    pub free: VecDeque<u32>,
}

/// Guarded by `Inner::alloc`.
pub(crate) struct Alloc {
    pub devices: Vec<DevAlloc>,
    /// Next device index for round-robin placement.
    pub rr: usize,
    pub open: Option<OpenRegion>,
    pub sealed: VecDeque<Arc<RegionMeta>>,
    /// Written regions, oldest first (eviction order).
    pub fifo: VecDeque<Arc<RegionMeta>>,
    pub free_rids: Vec<u32>,
    pub next_rid: u32,
    /// The writer thread is working on a job.
    pub busy: bool,
    /// A control operation needs the writer idle: no admissions, no evictions.
    pub draining: bool,
    pub shutdown: bool,
}

/// Settings changeable online.
pub(crate) struct Settings {
    pub size_bytes: AtomicU64,
    pub admission: AtomicU8,
    pub max_backlog: AtomicUsize,
    pub error_threshold: AtomicU32,
    pub reinsert_pct: AtomicU8,
}

pub(crate) struct Inner {
    pub layout: RegionLayout,
    pub opener: DeviceOpener,
    pub settings: Settings,
    pub enabled: AtomicBool,
    pub active: AtomicBool,
    /// Bumped by `clear()`; an admission that started under another epoch is dropped.
    pub epoch: AtomicU64,
    pub index: Index,
    pub regions: RwLock<Vec<Option<Arc<RegionMeta>>>>,
    pub alloc: Mutex<Alloc>,
    /// Wakes the writer.
    pub work: Condvar,
    /// Signalled when the writer goes idle or drops a device.
    pub idle: Condvar,
    pub ghost: GhostFilter,
    pub c: Counters,
    pub sealed_len: AtomicUsize,
    pub next_seq: AtomicU64,
    pub next_device_id: AtomicU32,
    pub spare: Mutex<Vec<AlignedBuf>>,
    pub buffer_bytes: AtomicU64,
    /// Set once `shutdown()` wrote clean manifests; a later invalidation deletes them.
    pub manifests_written: AtomicBool,
}

impl Inner {
    pub fn admission(&self) -> AdmissionPolicy {
        if self.settings.admission.load(Ordering::Relaxed) == 1 {
            AdmissionPolicy::SecondTouch
        } else {
            AdmissionPolicy::Always
        }
    }

    pub fn serving(&self) -> bool {
        self.active.load(Ordering::Acquire) && self.enabled.load(Ordering::Acquire)
    }

    pub fn region(&self, rid: u32) -> Option<Arc<RegionMeta>> {
        self.regions.read().get(rid as usize).and_then(Clone::clone)
    }

    /// The writer evicts until this many free regions are ready (besides the open one), so
    /// the evicting threads find a fresh region the moment the open one fills.
    pub const FREE_RESERVE: usize = 2;

    /// True when the writer should evict the oldest region now.
    pub fn needs_evict(a: &Alloc) -> bool {
        !a.draining
            && Self::free_regions(a) < Self::FREE_RESERVE
            && a.fifo
                .iter()
                .any(|m| m.state() == WRITTEN && m.dev.usable())
    }

    /// Waits until the writer is idle with nothing to write or evict.
    pub fn settle(&self) {
        let mut a = self.alloc.lock();
        while a.busy || !a.sealed.is_empty() || Self::needs_evict(&a) {
            self.work.notify_all();
            self.idle.wait_for(&mut a, Duration::from_millis(20));
        }
    }

    pub fn free_regions(a: &Alloc) -> usize {
        a.devices
            .iter()
            .filter(|d| d.dev.usable())
            .map(|d| d.free.len())
            .sum()
    }

    /// Counts an I/O error or corrupt read against `dev`; drops the device past the
    /// threshold (the writer thread then forgets its regions).
    pub fn device_error(&self, dev: &DeviceState, corrupt: bool, what: &dyn Display) {
        bump(&self.c.device_errors);
        bump(if corrupt {
            &dev.c.corrupt_reads
        } else {
            &dev.c.io_errors
        });
        let n = dev.errors.fetch_add(1, Ordering::AcqRel) + 1;
        if n <= 3 {
            warn!(device = %dev.path.display(), errors = n, "BPE device error: {what}");
        }
        let threshold = self.settings.error_threshold.load(Ordering::Relaxed).max(1);
        if n >= threshold && !dev.failed.swap(true, Ordering::AcqRel) {
            error!(
                device = %dev.path.display(),
                errors = n,
                "BPE device dropped after {n} errors; its cached pages are forgotten"
            );
            bump(&self.c.devices_dropped);
            self.work.notify_all();
        }
    }

    /// A zeroed-header region buffer (a spare or a new allocation).
    fn take_buf(&self) -> Option<AlignedBuf> {
        if let Some(mut b) = self.spare.lock().pop() {
            b[..self.layout.header_len].fill(0);
            return Some(b);
        }
        let b = AlignedBuf::new(self.layout.region_size as usize).ok()?;
        self.buffer_bytes
            .fetch_add(self.layout.region_size, Ordering::Relaxed);
        Some(b)
    }

    /// Returns a region buffer to the spare pool (or frees it).
    pub fn recycle(&self, buf: Option<AlignedBuf>) {
        let Some(buf) = buf else { return };
        let mut s = self.spare.lock();
        if s.len() < 2 {
            s.push(buf);
        } else {
            drop(s);
            drop(buf);
            self.buffer_bytes
                .fetch_sub(self.layout.region_size, Ordering::Relaxed);
        }
    }

    /// Opens the next free region, round-robin over usable devices.
    fn open_region_locked(&self, a: &mut Alloc) -> bool {
        let n = a.devices.len();
        for k in 0..n {
            let i = (a.rr + k) % n;
            if !a.devices[i].dev.usable() {
                continue;
            }
            let Some(no) = a.devices[i].free.pop_front() else {
                continue;
            };
            let m = a.devices[i].regions[no as usize].clone();
            let Some(buf) = self.take_buf() else {
                a.devices[i].free.push_front(no);
                return false;
            };
            a.rr = (i + 1) % n;
            *m.mem.write() = Some(buf);
            m.used.store(0, Ordering::SeqCst);
            m.seq.store(
                self.next_seq.fetch_add(1, Ordering::SeqCst),
                Ordering::SeqCst,
            );
            m.set_state(OPEN);
            a.open = Some(OpenRegion { meta: m, next: 0 });
            if Self::free_regions(a) < Self::FREE_RESERVE {
                self.work.notify_one();
            }
            return true;
        }
        self.work.notify_one();
        false
    }

    /// Copies `page` into the next slot of the open region (opening one if needed).
    pub fn append_locked(&self, a: &mut Alloc, page: &[u8]) -> Option<(Arc<RegionMeta>, u16)> {
        if a.open.is_none() && !self.open_region_locked(a) {
            return None;
        }
        let o = a.open.as_mut()?;
        let slot = o.next;
        {
            let mut g = o.meta.mem.write();
            let b = g.as_mut()?;
            let at = self.layout.slot_offset(slot);
            b[at..at + PAGE_SIZE].copy_from_slice(page);
            let crc = u32::from_le_bytes([page[4], page[5], page[6], page[7]]);
            write_slot_entry(
                b,
                slot,
                &SlotEntry {
                    page_id: page_id(page).0,
                    page_lsn: page_lsn(page).0,
                    page_crc: crc,
                },
            );
        }
        o.next += 1;
        o.meta.used.store(u32::from(o.next), Ordering::SeqCst);
        Some((o.meta.clone(), slot))
    }

    pub fn seal_if_full(&self, a: &mut Alloc) {
        if a.open
            .as_ref()
            .is_some_and(|o| u32::from(o.next) >= self.layout.slots)
        {
            self.seal_locked(a);
        }
    }

    /// Closes the open region: queues it for the writer (or frees it if empty).
    pub fn seal_locked(&self, a: &mut Alloc) {
        let Some(o) = a.open.take() else { return };
        let m = o.meta;
        if o.next == 0 {
            let buf = m.mem.write().take();
            self.recycle(buf);
            self.release_locked(a, &m);
            return;
        }
        if let Some(b) = m.mem.write().as_mut() {
            seal_region_header(
                b,
                &self.layout,
                m.seq.load(Ordering::SeqCst),
                m.dev.id,
                m.region_no,
                u32::from(o.next),
            );
        }
        m.set_state(SEALED);
        a.sealed.push_back(m);
        self.sealed_len.fetch_add(1, Ordering::SeqCst);
        self.work.notify_one();
    }

    /// A region's contents are gone (its entries already removed): back to its device's
    /// free list, or DEAD if it no longer belongs to a usable device's share.
    pub fn release_locked(&self, a: &mut Alloc, m: &Arc<RegionMeta>) {
        m.seq.store(0, Ordering::SeqCst);
        m.used.store(0, Ordering::SeqCst);
        if m.state() == DEAD {
            return;
        }
        let home = a.devices.iter_mut().find(|d| {
            d.dev.usable()
                && d.regions
                    .get(m.region_no as usize)
                    .is_some_and(|r| Arc::ptr_eq(r, m))
        });
        match home {
            Some(d) => {
                m.set_state(FREE);
                d.free.push_back(m.region_no);
            }
            None => m.set_state(DEAD),
        }
    }

    /// Registers a new region id for (`dev`, `region_no`).
    fn new_region_locked(
        &self,
        a: &mut Alloc,
        dev: &Arc<DeviceState>,
        region_no: u32,
    ) -> Option<Arc<RegionMeta>> {
        let rid = match a.free_rids.pop() {
            Some(r) => r,
            None if a.next_rid < MAX_REGION_IDS => {
                a.next_rid += 1;
                a.next_rid - 1
            }
            None => return None,
        };
        let m = Arc::new(RegionMeta::new(
            rid,
            dev.clone(),
            region_no,
            self.layout.region_size,
        ));
        let mut t = self.regions.write();
        if t.len() <= rid as usize {
            t.resize(rid as usize + 1, None);
        }
        t[rid as usize] = Some(m.clone());
        Some(m)
    }

    /// Removes every index entry naming one of `dead` (DEAD regions), then recycles their ids.
    pub fn forget_regions(&self, dead: &[Arc<RegionMeta>]) -> u64 {
        if dead.is_empty() {
            return 0;
        }
        for m in dead {
            let buf = m.mem.write().take();
            self.recycle(buf);
        }
        let set: HashSet<u32> = dead.iter().map(|m| m.rid).collect();
        let removed = self.index.retain(|e| !set.contains(&e.loc().rid));
        {
            let mut t = self.regions.write();
            for &rid in &set {
                if let Some(slot) = t.get_mut(rid as usize) {
                    *slot = None;
                }
            }
        }
        self.alloc.lock().free_rids.extend(set);
        crate::stats::add(&self.c.evicted_pages, removed);
        removed
    }

    /// Asks the writer to go idle and blocks new admissions/evictions until `undrain`.
    pub fn drain(&self) {
        let mut a = self.alloc.lock();
        a.draining = true;
        while !a.sealed.is_empty() || a.busy {
            self.work.notify_all();
            self.idle.wait_for(&mut a, Duration::from_millis(20));
        }
    }

    pub fn undrain(&self) {
        self.alloc.lock().draining = false;
        self.work.notify_all();
    }

    /// Re-splits `size` over the usable devices: shrinks (forgetting regions past each
    /// device's share, truncating the file) or grows (extending the file). The caller has
    /// drained the writer.
    pub fn apply_size(&self, size: u64) -> Result<(), BpeError> {
        let region = self.layout.region_size;
        let (plan, dead) = {
            let mut a = self.alloc.lock();
            let n = a.devices.iter().filter(|d| d.dev.usable()).count() as u64;
            let per_dev = size.checked_div(n).unwrap_or(0) / region;
            let per_dev = per_dev.min(u64::from(MAX_REGION_IDS) / n.max(1)) as usize;
            let mut dead = Vec::new();
            let mut plan = Vec::new();
            let Alloc {
                devices,
                open,
                fifo,
                ..
            } = &mut *a;
            for d in devices.iter_mut().filter(|d| d.dev.usable()) {
                let old = d.regions.len();
                if per_dev < old {
                    for m in d.regions.drain(per_dev..) {
                        if open.as_ref().is_some_and(|o| Arc::ptr_eq(&o.meta, &m)) {
                            *open = None;
                        }
                        m.set_state(DEAD);
                        m.seq.store(0, Ordering::SeqCst);
                        dead.push(m);
                    }
                    fifo.retain(|m| m.state() != DEAD);
                    d.free.retain(|&no| (no as usize) < per_dev);
                }
                plan.push((d.dev.clone(), old.min(per_dev), per_dev));
            }
            (plan, dead)
        };
        let removed_regions = dead.len() as u64;
        self.forget_regions(&dead);
        crate::stats::add(&self.c.evicted_regions, removed_regions);
        let mut first_err = None;
        for (dev, old, want) in plan {
            let want_len = want as u64 * region;
            let ok = match dev.io.len() {
                Ok(l) if l == want_len => true,
                _ => match dev.io.set_len(want_len) {
                    Ok(()) => true,
                    Err(e) => {
                        error!(device = %dev.path.display(), "BPE: cannot resize device file: {e}");
                        first_err.get_or_insert(BpeError::Device {
                            path: dev.path.display().to_string(),
                            source: e,
                        });
                        false
                    }
                },
            };
            if !ok || want <= old {
                continue;
            }
            let mut a = self.alloc.lock();
            let Some(pos) = a.devices.iter().position(|d| Arc::ptr_eq(&d.dev, &dev)) else {
                continue;
            };
            for no in old..want {
                let Some(m) = self.new_region_locked(&mut a, &dev, no as u32) else {
                    break;
                };
                a.devices[pos].regions.push(m);
                a.devices[pos].free.push_back(no as u32);
            }
        }
        self.work.notify_all();
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Marks a freshly restored region as written with sequence `seq`.
    pub fn restore_region_locked(
        a: &mut Alloc,
        dev_pos: usize,
        region_no: u32,
        seq: u64,
    ) -> Option<Arc<RegionMeta>> {
        let d = &mut a.devices[dev_pos];
        let m = d.regions.get(region_no as usize)?.clone();
        if m.state() != FREE || seq == 0 {
            return None;
        }
        d.free.retain(|&no| no != region_no);
        m.seq.store(seq, Ordering::SeqCst);
        m.used.store(0, Ordering::SeqCst);
        m.set_state(WRITTEN);
        Some(m)
    }

    /// Region-table and region-metadata bytes (counted into `index_bytes`).
    pub fn region_table_bytes(&self) -> u64 {
        let t = self.regions.read();
        let live = t.iter().filter(|r| r.is_some()).count();
        (t.capacity() * std::mem::size_of::<Option<Arc<RegionMeta>>>()
            + live * (std::mem::size_of::<RegionMeta>() + 2 * std::mem::size_of::<usize>()))
            as u64
    }

    /// The index location of `slot` in region `m`.
    pub fn loc(m: &RegionMeta, slot: u16) -> Loc {
        Loc { rid: m.rid, slot }
    }
}
