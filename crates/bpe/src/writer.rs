//! The background thread: writes sealed regions to their devices in one sequential write
//! each, evicts the oldest written region (FIFO) when no free region is left, re-admitting
//! its pages that were hit since they were written (bounded by `reinsert_max_percent`), and
//! forgets the regions of devices that failed or are being removed.
//!
//! Owns: all BPE device writes, all region evictions, device drops. Must never: hold the
//! allocator mutex or an index shard lock across device I/O; block an evicting or reading
//! thread (they never wait for this thread).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use tierdb_io::AlignedBuf;
use tierdb_page::{page_lsn, verify, PageId, PAGE_SIZE};
use tracing::{error, info};

use crate::format::{read_slot_entry, RegionHeader};
use crate::index::{key_of, Loc};
use crate::inner::Inner;
use crate::region::{DeviceState, RegionMeta, DEAD, EVICTING, SEALED, WRITTEN};
use crate::stats::{add, bump};

enum Job {
    Drop(Arc<DeviceState>),
    Write(Arc<RegionMeta>),
    Evict(Arc<RegionMeta>),
}

/// The thread body; returns after `shutdown` once every sealed region is written.
pub(crate) fn run(inner: Arc<Inner>) {
    loop {
        let job = {
            let mut a = inner.alloc.lock();
            loop {
                if let Some(d) = a.devices.iter().find(|d| !d.dev.usable()) {
                    let dev = d.dev.clone();
                    a.busy = true;
                    break Job::Drop(dev);
                }
                if let Some(m) = a.sealed.pop_front() {
                    inner.sealed_len.fetch_sub(1, Ordering::SeqCst);
                    a.busy = true;
                    break Job::Write(m);
                }
                if a.shutdown {
                    a.busy = false;
                    inner.idle.notify_all();
                    return;
                }
                if Inner::needs_evict(&a) {
                    let mut found = None;
                    while let Some(m) = a.fifo.pop_front() {
                        if m.state() == WRITTEN && m.dev.usable() {
                            found = Some(m);
                            break;
                        }
                    }
                    if let Some(m) = found {
                        m.set_state(EVICTING);
                        a.busy = true;
                        break Job::Evict(m);
                    }
                }
                a.busy = false;
                inner.idle.notify_all();
                inner.work.wait_for(&mut a, Duration::from_millis(20));
            }
        };
        match job {
            Job::Drop(dev) => drop_device(&inner, &dev),
            Job::Write(m) => write_region(&inner, &m),
            Job::Evict(m) => evict_region(&inner, &m),
        }
    }
}

fn write_region(inner: &Inner, m: &Arc<RegionMeta>) {
    let used = m.used.load(Ordering::SeqCst);
    let len = inner.layout.written_len(used);
    let res = if !m.dev.usable() || m.state() != SEALED {
        Err(None)
    } else {
        let g = m.mem.read();
        match g.as_ref() {
            Some(b) => m.dev.io.write_at(&b[..len], m.offset).map_err(Some),
            None => Err(None),
        }
    };
    match res {
        Ok(()) => {
            add(&inner.c.bytes_written, len as u64);
            add(&m.dev.c.bytes_written, len as u64);
            bump(&inner.c.regions_written);
            bump(&m.dev.c.regions_written);
            m.set_state(WRITTEN);
            let buf = m.mem.write().take();
            inner.recycle(buf);
            let mut a = inner.alloc.lock();
            if m.state() == WRITTEN {
                a.fifo.push_back(m.clone());
            }
        }
        Err(e) => {
            if let Some(e) = e {
                bump(&inner.c.write_errors);
                inner.device_error(&m.dev, false, &e);
            }
            discard_region(inner, m);
        }
    }
}

/// Forgets a region that never reached its device: removes the entries its buffer lists.
fn discard_region(inner: &Inner, m: &Arc<RegionMeta>) {
    let used = m.used.load(Ordering::SeqCst);
    let mut removed = 0;
    let had_buf = {
        let g = m.mem.read();
        if let Some(b) = g.as_ref() {
            for slot in 0..used as u16 {
                let se = read_slot_entry(b, slot);
                if let Some(key) = key_of(se.page_id) {
                    if inner.index.remove_if_at(key, Inner::loc(m, slot)) {
                        removed += 1;
                    }
                }
            }
            true
        } else {
            false
        }
    };
    if !had_buf {
        removed = inner.index.retain(|e| e.loc().rid != m.rid);
    }
    add(&inner.c.evicted_pages, removed);
    let buf = m.mem.write().take();
    inner.recycle(buf);
    let mut a = inner.alloc.lock();
    inner.release_locked(&mut a, m);
}

fn evict_region(inner: &Inner, m: &Arc<RegionMeta>) {
    let layout = inner.layout;
    let seq = m.seq.load(Ordering::SeqCst);
    let header = match AlignedBuf::new(layout.header_len) {
        Ok(mut hdr) => match m.dev.io.read_at(&mut hdr, m.offset) {
            Ok(()) => {
                add(&inner.c.bytes_read, layout.header_len as u64);
                RegionHeader::decode(&hdr)
                    .ok()
                    .filter(|h| h.seq == seq && h.region_no == m.region_no)
            }
            Err(e) => {
                inner.device_error(&m.dev, false, &e);
                None
            }
        },
        Err(_) => None,
    };
    let mut removed = 0;
    match header {
        Some(h) => {
            let pct = u64::from(inner.settings.reinsert_pct.load(Ordering::Relaxed).min(100));
            let max = u64::from(layout.slots) * pct / 100;
            let mut reinserted = 0;
            let mut page = AlignedBuf::new(PAGE_SIZE).ok();
            for (i, s) in h.slots.iter().enumerate() {
                let Some(key) = key_of(s.page_id) else {
                    continue;
                };
                let loc = Inner::loc(m, i as u16);
                let Some(e) = inner.index.get(key) else {
                    continue;
                };
                if e.loc() != loc {
                    continue;
                }
                if e.hit() && reinserted < max && m.dev.usable() {
                    if let Some(p) = page.as_mut() {
                        if reinsert(inner, m, key, loc, e.lsn_low, p) {
                            reinserted += 1;
                            continue;
                        }
                    }
                }
                if inner.index.remove_if_at(key, loc) {
                    removed += 1;
                }
            }
        }
        None => removed = inner.index.retain(|e| e.loc().rid != m.rid),
    }
    add(&inner.c.evicted_pages, removed);
    bump(&inner.c.evicted_regions);
    let mut a = inner.alloc.lock();
    inner.release_locked(&mut a, m);
}

/// Re-admits a hit page of the region being evicted into the open region.
fn reinsert(
    inner: &Inner,
    m: &RegionMeta,
    key: u32,
    from: Loc,
    lsn_low: u32,
    page: &mut AlignedBuf,
) -> bool {
    let off = m.offset + inner.layout.slot_offset(from.slot) as u64;
    if let Err(e) = m.dev.io.read_at(page, off) {
        inner.device_error(&m.dev, false, &e);
        return false;
    }
    add(&inner.c.bytes_read, PAGE_SIZE as u64);
    let id = PageId(u64::from(key) - 1);
    if verify(page, id).is_err() || page_lsn(page).0 as u32 != lsn_low {
        bump(&inner.c.validation_failures);
        return false;
    }
    let mut a = inner.alloc.lock();
    // Draining does not stop a reinsertion: the eviction is already under way and the
    // drain waits for it (and for any region it seals) anyway.
    if a.shutdown {
        return false;
    }
    let Some((nm, slot)) = inner.append_locked(&mut a, page) else {
        return false;
    };
    let moved = inner
        .index
        .relocate(key, lsn_low, from, Inner::loc(&nm, slot));
    if moved {
        bump(&inner.c.reinserted);
    }
    inner.seal_if_full(&mut a);
    moved
}

/// Forgets every region of a failed or removed device.
fn drop_device(inner: &Inner, dev: &Arc<DeviceState>) {
    let (dead, none_left) = {
        let mut a = inner.alloc.lock();
        let Some(pos) = a.devices.iter().position(|d| Arc::ptr_eq(&d.dev, dev)) else {
            return;
        };
        let d = a.devices.remove(pos);
        if a.rr > pos {
            a.rr -= 1;
        }
        if a.rr >= a.devices.len() {
            a.rr = 0;
        }
        if a.open
            .as_ref()
            .is_some_and(|o| Arc::ptr_eq(&o.meta.dev, dev))
        {
            a.open = None;
        }
        let before = a.sealed.len();
        a.sealed.retain(|m| !Arc::ptr_eq(&m.dev, dev));
        inner
            .sealed_len
            .fetch_sub(before - a.sealed.len(), Ordering::SeqCst);
        a.fifo.retain(|m| !Arc::ptr_eq(&m.dev, dev));
        for m in &d.regions {
            m.set_state(DEAD);
            m.seq.store(0, Ordering::SeqCst);
        }
        (d.regions, a.devices.iter().all(|d| !d.dev.usable()))
    };
    let removed = inner.forget_regions(&dead);
    if dev.removed.load(Ordering::Acquire) {
        info!(device = %dev.path.display(), pages = removed, "BPE device removed");
    } else {
        error!(device = %dev.path.display(), pages = removed, "BPE device dropped: regions forgotten");
    }
    if none_left && inner.active.swap(false, Ordering::AcqRel) {
        error!("BPE has no usable device left; it is now inactive (misses go to the data file)");
    }
    inner.idle.notify_all();
}
