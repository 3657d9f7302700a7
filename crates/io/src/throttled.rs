//! `Throttled`: wraps a `Device` to behave like a slow networked cloud disk, in process:
//! separate read and write IOPS caps, an optional cap shared by reads and writes (how most
//! cloud disks sell IOPS), a fixed added latency per I/O and optional uniform jitter.
//!
//! How it works: each I/O takes the scheduler mutex just long enough to claim the next free
//! start slot for its direction and, with a shared cap, the next shared slot (slots are
//! `1 s / iops` apart, no burst credit is saved up while idle; the I/O starts at the later of
//! the two), then releases it and sleeps until `slot + latency + jitter` before issuing
//! the inner I/O. Sleeping happens outside the lock, so concurrent I/Os overlap their
//! latency exactly as queued I/Os on a real disk do; only the IOPS cap serialises them.
//!
//! Accounting: `sync` claims a write slot and pays the latency (counted in `writes` and in
//! `syncs`); `len`, `set_len` and `name` are metadata and pass straight through unthrottled.
//!
//! Must never: hold the scheduler lock while sleeping or doing I/O; change the data or the
//! error of the inner device.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::Device;

/// Shape of the emulated disk. Zero means "no limit" / "no added delay"; `Default` is all
/// zeros (a pass-through).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThrottleConfig {
    /// Read operations per second; 0 = unlimited.
    pub read_iops: u32,
    /// Write operations (including syncs) per second; 0 = unlimited.
    pub write_iops: u32,
    /// Operations per second shared by reads and writes; 0 = no shared cap.
    pub total_iops: u32,
    /// Fixed latency added to every read, write and sync, in microseconds.
    pub latency_us: u32,
    /// Extra latency drawn uniformly from `0..=jitter_us` per I/O, in microseconds.
    pub jitter_us: u32,
}

/// A snapshot of a `Throttled` device's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThrottleStats {
    /// Reads issued.
    pub reads: u64,
    /// Writes issued, syncs included.
    pub writes: u64,
    /// Syncs issued (also counted in `writes`).
    pub syncs: u64,
    /// Bytes of successful reads.
    pub bytes_read: u64,
    /// Bytes of successful writes.
    pub bytes_written: u64,
    /// Total time I/Os spent waiting for their slot and latency, summed over all threads,
    /// in microseconds.
    pub wait_us_total: u64,
}

#[derive(Clone, Copy)]
enum Direction {
    Read,
    Write,
}

struct Schedule {
    config: ThrottleConfig,
    /// Earliest start of the next read / write; never in the past relative to the last
    /// claim.
    next_read: Instant,
    next_write: Instant,
    next_any: Instant,
}

#[derive(Default)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    bytes_read: AtomicU64,
    bytes_written: AtomicU64,
    wait_us_total: AtomicU64,
}

/// A `Device` slowed down to look like a cloud disk. See the module doc.
pub struct Throttled<D: Device> {
    inner: D,
    schedule: Mutex<Schedule>,
    counters: Counters,
    /// State of a splitmix64 sequence for jitter; a data race on it only costs randomness.
    jitter_state: AtomicU64,
}

impl<D: Device> Throttled<D> {
    /// Wraps `inner` with the given limits.
    pub fn new(inner: D, config: ThrottleConfig) -> Self {
        let now = Instant::now();
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9E37_79B9_7F4A_7C15);
        Throttled {
            inner,
            schedule: Mutex::new(Schedule {
                config,
                next_read: now,
                next_write: now,
                next_any: now,
            }),
            counters: Counters::default(),
            jitter_state: AtomicU64::new(seed),
        }
    }

    /// The current limits.
    pub fn config(&self) -> ThrottleConfig {
        self.schedule.lock().config
    }

    /// Changes the limits at runtime; applies to I/Os that claim a slot from now on.
    pub fn set_config(&self, config: ThrottleConfig) {
        self.schedule.lock().config = config;
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> ThrottleStats {
        let c = &self.counters;
        ThrottleStats {
            reads: c.reads.load(Ordering::Relaxed),
            writes: c.writes.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            bytes_read: c.bytes_read.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            wait_us_total: c.wait_us_total.load(Ordering::Relaxed),
        }
    }

    /// The wrapped device.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Unwraps the device.
    pub fn into_inner(self) -> D {
        self.inner
    }

    /// Claims a start slot for one I/O in `dir` and sleeps until it may be issued.
    fn admit(&self, dir: Direction) {
        let arrived = Instant::now();
        let wake = {
            let mut s = self.schedule.lock();
            let iops = match dir {
                Direction::Read => s.config.read_iops,
                Direction::Write => s.config.write_iops,
            };
            let delay = Duration::from_micros(u64::from(s.config.latency_us))
                + Duration::from_micros(self.jitter_us(s.config.jitter_us));
            let total = s.config.total_iops;
            let mut start = arrived;
            if total > 0 {
                start = start.max(s.next_any);
            }
            if iops > 0 {
                let next = match dir {
                    Direction::Read => &mut s.next_read,
                    Direction::Write => &mut s.next_write,
                };
                start = start.max(*next);
                *next = start + Duration::from_nanos(1_000_000_000 / u64::from(iops));
            }
            if total > 0 {
                s.next_any = start + Duration::from_nanos(1_000_000_000 / u64::from(total));
            }
            start + delay
        };
        let now = Instant::now();
        if wake > now {
            std::thread::sleep(wake - now);
        }
        let waited_us = u64::try_from(arrived.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.counters
            .wait_us_total
            .fetch_add(waited_us, Ordering::Relaxed);
    }

    /// A value drawn uniformly from `0..=max` (splitmix64).
    fn jitter_us(&self, max: u32) -> u64 {
        if max == 0 {
            return 0;
        }
        let mut z = self
            .jitter_state
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        z % (u64::from(max) + 1)
    }
}

impl<D: Device> Device for Throttled<D> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        self.admit(Direction::Read);
        self.inner.read_at(buf, offset)?;
        self.counters
            .bytes_read
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.admit(Direction::Write);
        self.inner.write_at(buf, offset)?;
        self.counters
            .bytes_written
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        self.admit(Direction::Write);
        self.inner.sync()
    }

    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
}
