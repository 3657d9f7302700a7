//! `Faulty`: wraps a `Device` and injects faults on command, for tests: fail, corrupt or tear
//! the Nth read/write/sync from now, or fail every read/write/sync until cleared.
//!
//! Counting: "the Nth from now" counts operations of that kind starting with the next one
//! (`n == 1` and `n == 0` both mean the very next one). Each countdown fires once, then
//! disarms. Countdowns of the same kind run independently; if two fire on the same
//! operation, a failure beats a tear or a corruption (which is then spent), and a sticky
//! failure beats everything.
//!
//! Faults:
//! - failed read/write/sync: nothing reaches the inner device; returns
//!   `ErrorKind::Other` with message "injected read fault" / "injected write fault" /
//!   "injected sync fault".
//! - corrupted read: the inner read succeeds, then up to 8 bytes starting at `len / 2` are
//!   inverted (every bit flipped) in the caller's buffer; returns `Ok`.
//! - torn write: only the first half of the buffer reaches the inner device — rounded down
//!   to a multiple of `DIRECT_ALIGN` when the buffer's address and length are aligned (so a
//!   `DirectFile` accepts it; one aligned block thus writes nothing). `TearMode::Silent`
//!   then returns `Ok` as if complete (power lost after the ack); `TearMode::Error` returns
//!   `ErrorKind::Other` "injected torn write".
//!
//! `len`, `set_len`, `name` and `is_direct` pass through and are never faulted.
//!
//! Lock order: the plan mutex is a leaf; it is held only to decide the fate of one
//! operation and is released before the inner device is called.
//!
//! Must never: inject a fault nobody asked for; hold its lock across inner I/O.

use std::io;

use parking_lot::Mutex;

use crate::{Device, DIRECT_ALIGN};

/// What a torn write returns after writing the first half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TearMode {
    /// Returns `Ok` as if the whole buffer were written (power lost after the ack).
    Silent,
    /// Returns an injected error after the partial write.
    Error,
}

/// Which faults are armed. Countdown fields hold how many more operations of that kind to
/// let through, counting the one that fires (`Some(1)` = the next one). Read it back with
/// `Faulty::plan` to see what is still armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Fail the Nth read.
    pub fail_read: Option<u64>,
    /// Fail the Nth write.
    pub fail_write: Option<u64>,
    /// Fail the Nth sync.
    pub fail_sync: Option<u64>,
    /// Corrupt the data returned by the Nth read.
    pub corrupt_read: Option<u64>,
    /// Tear the Nth write.
    pub tear_write: Option<(u64, TearMode)>,
    /// Fail every read until cleared.
    pub fail_all_reads: bool,
    /// Fail every write until cleared.
    pub fail_all_writes: bool,
    /// Fail every sync until cleared.
    pub fail_all_syncs: bool,
}

/// Operations seen and faults injected since the `Faulty` was created (not reset by
/// `clear`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Reads attempted, faulted or not.
    pub reads: u64,
    /// Writes attempted, faulted or not.
    pub writes: u64,
    /// Syncs attempted, faulted or not.
    pub syncs: u64,
    /// Reads failed by injection.
    pub read_faults: u64,
    /// Writes failed by injection (torn writes not included).
    pub write_faults: u64,
    /// Syncs failed by injection.
    pub sync_faults: u64,
    /// Reads whose data was corrupted.
    pub corrupted_reads: u64,
    /// Writes torn (either mode).
    pub torn_writes: u64,
}

impl FaultStats {
    /// All injected faults of every kind.
    pub fn faults_injected(&self) -> u64 {
        self.read_faults
            + self.write_faults
            + self.sync_faults
            + self.corrupted_reads
            + self.torn_writes
    }
}

struct State {
    plan: FaultPlan,
    stats: FaultStats,
}

/// A `Device` that fails on command. See the module doc.
pub struct Faulty<D: Device> {
    inner: D,
    state: Mutex<State>,
}

/// Counts one operation against a countdown; true when it fires.
fn tick(countdown: &mut Option<u64>) -> bool {
    match *countdown {
        None => false,
        Some(n) if n <= 1 => {
            *countdown = None;
            true
        }
        Some(n) => {
            *countdown = Some(n - 1);
            false
        }
    }
}

fn injected(what: &str) -> io::Error {
    io::Error::other(what.to_string())
}

enum WriteFate {
    Pass,
    Fail,
    Tear(TearMode),
}

impl<D: Device> Faulty<D> {
    /// Wraps `inner` with nothing armed.
    pub fn new(inner: D) -> Self {
        Faulty {
            inner,
            state: Mutex::new(State {
                plan: FaultPlan::default(),
                stats: FaultStats::default(),
            }),
        }
    }

    /// The wrapped device (bypasses fault injection).
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Unwraps the device.
    pub fn into_inner(self) -> D {
        self.inner
    }

    /// What is still armed.
    pub fn plan(&self) -> FaultPlan {
        self.state.lock().plan
    }

    /// Replaces the whole plan.
    pub fn set_plan(&self, plan: FaultPlan) {
        self.state.lock().plan = plan;
    }

    /// Disarms everything, sticky failures included. Counters are kept.
    pub fn clear(&self) {
        self.state.lock().plan = FaultPlan::default();
    }

    /// Counters of operations and injected faults.
    pub fn stats(&self) -> FaultStats {
        self.state.lock().stats
    }

    /// Fails the Nth read from now (1 = the next).
    pub fn fail_nth_read(&self, n: u64) {
        self.state.lock().plan.fail_read = Some(n);
    }

    /// Fails the Nth write from now (1 = the next).
    pub fn fail_nth_write(&self, n: u64) {
        self.state.lock().plan.fail_write = Some(n);
    }

    /// Fails the Nth sync from now (1 = the next).
    pub fn fail_nth_sync(&self, n: u64) {
        self.state.lock().plan.fail_sync = Some(n);
    }

    /// Corrupts the data of the Nth read from now (1 = the next).
    pub fn corrupt_nth_read(&self, n: u64) {
        self.state.lock().plan.corrupt_read = Some(n);
    }

    /// Tears the Nth write from now and reports success (`TearMode::Silent`).
    pub fn tear_nth_write(&self, n: u64) {
        self.state.lock().plan.tear_write = Some((n, TearMode::Silent));
    }

    /// Tears the Nth write from now and reports an error (`TearMode::Error`).
    pub fn tear_nth_write_then_fail(&self, n: u64) {
        self.state.lock().plan.tear_write = Some((n, TearMode::Error));
    }

    /// Sticky: every read fails while `on`.
    pub fn fail_all_reads(&self, on: bool) {
        self.state.lock().plan.fail_all_reads = on;
    }

    /// Sticky: every write fails while `on`.
    pub fn fail_all_writes(&self, on: bool) {
        self.state.lock().plan.fail_all_writes = on;
    }

    /// Sticky: every sync fails while `on`.
    pub fn fail_all_syncs(&self, on: bool) {
        self.state.lock().plan.fail_all_syncs = on;
    }

    /// Decides the fate of one write and records it.
    fn write_fate(&self) -> WriteFate {
        let mut s = self.state.lock();
        let State { plan, stats } = &mut *s;
        stats.writes += 1;
        let fail = tick(&mut plan.fail_write);
        let tear = match plan.tear_write {
            Some((n, mode)) => {
                let mut countdown = Some(n);
                let fired = tick(&mut countdown);
                plan.tear_write = countdown.map(|n| (n, mode));
                fired.then_some(mode)
            }
            None => None,
        };
        if plan.fail_all_writes || fail {
            stats.write_faults += 1;
            return WriteFate::Fail;
        }
        match tear {
            Some(mode) => {
                stats.torn_writes += 1;
                WriteFate::Tear(mode)
            }
            None => WriteFate::Pass,
        }
    }
}

/// How many bytes of `buf` a torn write lets through: half, rounded down to a multiple of
/// `DIRECT_ALIGN` when the buffer is aligned (so an O_DIRECT device accepts the prefix).
fn torn_prefix_len(buf: &[u8]) -> usize {
    let half = buf.len() / 2;
    let aligned = (buf.as_ptr() as usize).is_multiple_of(DIRECT_ALIGN)
        && buf.len().is_multiple_of(DIRECT_ALIGN);
    if aligned {
        half - half % DIRECT_ALIGN
    } else {
        half
    }
}

/// Inverts up to 8 bytes starting at the middle of `buf`.
fn corrupt(buf: &mut [u8]) {
    let start = buf.len() / 2;
    let end = (start + 8).min(buf.len());
    for b in &mut buf[start..end] {
        *b = !*b;
    }
}

impl<D: Device> Device for Faulty<D> {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let corrupt_this = {
            let mut s = self.state.lock();
            let State { plan, stats } = &mut *s;
            stats.reads += 1;
            let fail = tick(&mut plan.fail_read);
            let corrupt_this = tick(&mut plan.corrupt_read);
            if plan.fail_all_reads || fail {
                stats.read_faults += 1;
                return Err(injected("injected read fault"));
            }
            corrupt_this && !buf.is_empty()
        };
        self.inner.read_at(buf, offset)?;
        if corrupt_this {
            corrupt(buf);
            self.state.lock().stats.corrupted_reads += 1;
        }
        Ok(())
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        match self.write_fate() {
            WriteFate::Pass => self.inner.write_at(buf, offset),
            WriteFate::Fail => Err(injected("injected write fault")),
            WriteFate::Tear(mode) => {
                let keep = torn_prefix_len(buf);
                if keep > 0 {
                    self.inner.write_at(&buf[..keep], offset)?;
                }
                match mode {
                    TearMode::Silent => Ok(()),
                    TearMode::Error => Err(injected("injected torn write")),
                }
            }
        }
    }

    fn sync(&self) -> io::Result<()> {
        {
            let mut s = self.state.lock();
            let State { plan, stats } = &mut *s;
            stats.syncs += 1;
            let fail = tick(&mut plan.fail_sync);
            if plan.fail_all_syncs || fail {
                stats.sync_faults += 1;
                return Err(injected("injected sync fault"));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_fires_once_on_the_nth_tick() {
        let mut c = Some(3);
        assert!(!tick(&mut c));
        assert!(!tick(&mut c));
        assert!(tick(&mut c));
        assert_eq!(c, None);
        assert!(!tick(&mut c));
        let mut zero = Some(0);
        assert!(tick(&mut zero));
    }

    #[test]
    fn torn_prefix_is_aligned_for_aligned_buffers_only() {
        let aligned = crate::AlignedBuf::new(3 * DIRECT_ALIGN).expect("buf");
        assert_eq!(torn_prefix_len(&aligned), DIRECT_ALIGN);
        assert_eq!(torn_prefix_len(&[0u8; 100]), 50);
    }

    #[test]
    fn corrupt_changes_a_one_byte_buffer() {
        let mut b = [0x55u8];
        corrupt(&mut b);
        assert_eq!(b, [0xAA]);
    }
}
