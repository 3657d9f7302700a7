//! Shared test support: a recording device wrapper (counts fsyncs, tracks which bytes a
//! completed fsync covered, optional fsync delay to model a slow disk), an opener that wraps
//! every segment in `Faulty<Recorder<BufferedFile>>` and keeps handles for the test, and
//! helpers to build payloads and read the whole log back.
//!
//! Must never: hide an error of the wrapped device.

#![allow(dead_code)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tierdb_io::{BufferedFile, Device, Faulty};
use tierdb_wal::{format, DeviceOpener, Lsn, Wal, WalConfig};

/// Wraps a device: counts syncs, records the highest written offset and, at each completed
/// sync, the highest offset written before that sync started.
pub struct Recorder<D: Device> {
    inner: D,
    sync_delay: Duration,
    syncs: AtomicU64,
    written_hi: AtomicU64,
    synced_hi: AtomicU64,
}

impl<D: Device> Recorder<D> {
    pub fn new(inner: D, sync_delay: Duration) -> Self {
        Recorder {
            inner,
            sync_delay,
            syncs: AtomicU64::new(0),
            written_hi: AtomicU64::new(0),
            synced_hi: AtomicU64::new(0),
        }
    }
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::SeqCst)
    }
    /// Every byte below this file offset was covered by a completed sync.
    pub fn synced_hi(&self) -> u64 {
        self.synced_hi.load(Ordering::SeqCst)
    }
    pub fn written_hi(&self) -> u64 {
        self.written_hi.load(Ordering::SeqCst)
    }
}

impl<D: Device> Device for Recorder<D> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_at(buf, offset)?;
        self.written_hi
            .fetch_max(offset + buf.len() as u64, Ordering::SeqCst);
        Ok(())
    }
    fn sync(&self) -> io::Result<()> {
        let covered = self.written_hi.load(Ordering::SeqCst);
        if !self.sync_delay.is_zero() {
            std::thread::sleep(self.sync_delay);
        }
        self.inner.sync()?;
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.synced_hi.fetch_max(covered, Ordering::SeqCst);
        Ok(())
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)?;
        // A truncation below what was synced makes the old marks meaningless.
        self.written_hi.fetch_min(len, Ordering::SeqCst);
        self.synced_hi.fetch_min(len, Ordering::SeqCst);
        Ok(())
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
}

pub type TestDev = Faulty<Recorder<BufferedFile>>;

/// Every segment device the opener handed out, with its base LSN.
#[derive(Default)]
pub struct Devices {
    list: Mutex<Vec<(u64, PathBuf, Arc<TestDev>)>>,
    sync_delay: Mutex<Duration>,
}

impl Devices {
    pub fn new() -> Arc<Devices> {
        Arc::new(Devices::default())
    }
    pub fn with_sync_delay(d: Duration) -> Arc<Devices> {
        let devs = Devices::default();
        *devs.sync_delay.lock() = d;
        Arc::new(devs)
    }
    pub fn opener(self: &Arc<Self>) -> DeviceOpener {
        let devs = Arc::clone(self);
        Arc::new(move |path: &Path| {
            let base = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(format::parse_segment_file_name)
                .unwrap_or(u64::MAX);
            let delay = *devs.sync_delay.lock();
            let dev = Arc::new(Faulty::new(Recorder::new(
                BufferedFile::open(path, true)?,
                delay,
            )));
            devs.list
                .lock()
                .push((base, path.to_path_buf(), Arc::clone(&dev)));
            Ok(dev as Arc<dyn Device>)
        })
    }
    /// The most recently opened device (the active segment).
    pub fn last(&self) -> Arc<TestDev> {
        Arc::clone(&self.list.lock().last().expect("a device was opened").2)
    }
    pub fn all(&self) -> Vec<Arc<TestDev>> {
        self.list
            .lock()
            .iter()
            .map(|(_, _, d)| Arc::clone(d))
            .collect()
    }
    pub fn total_syncs(&self) -> u64 {
        self.list
            .lock()
            .iter()
            .map(|(_, _, d)| d.inner().syncs())
            .sum()
    }
    /// The stream LSN below which the opener's devices say bytes were fsynced: the highest
    /// `base + synced_hi` over the devices whose predecessors are all synced in full.
    /// (Simplified: the log uses one segment in the tests that call this.)
    pub fn synced_lsn_single_segment(&self) -> u64 {
        let l = self.list.lock();
        assert_eq!(l.len(), 1, "only meaningful with one segment");
        l[0].0 + l[0].2.inner().synced_hi()
    }
}

pub fn cfg(dir: &Path, segment_size_bytes: u64) -> WalConfig {
    let mut c = WalConfig::new(dir);
    c.segment_size_bytes = segment_size_bytes;
    c
}

/// A deterministic payload for record `i`, `len` bytes (len > 0).
pub fn payload(i: u64, len: usize) -> Vec<u8> {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (len as u64);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Appends `payloads` and returns each record's (start, end).
pub fn append_all(wal: &Wal, payloads: &[Vec<u8>]) -> Vec<(Lsn, Lsn)> {
    payloads
        .iter()
        .map(|p| {
            let mut pos = None;
            let end = wal.append(p, |s, e| pos = Some((s, e))).expect("append");
            let pos = pos.expect("in_lock ran");
            assert_eq!(pos.1, end);
            pos
        })
        .collect()
}

/// All records from `from` to the end of the valid log.
pub fn read_all(wal: &Wal, from: Lsn) -> Vec<(Lsn, Vec<u8>)> {
    wal.read_from(from)
        .expect("read_from")
        .collect::<Result<Vec<_>, _>>()
        .expect("reading records")
}

/// The segment files in `dir`, sorted by base LSN.
pub fn segment_files(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .expect("read_dir")
        .filter_map(|e| {
            let e = e.ok()?;
            let base = format::parse_segment_file_name(e.file_name().to_str()?)?;
            Some((base, e.path()))
        })
        .collect();
    v.sort();
    v
}
