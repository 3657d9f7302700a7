//! Counters of the redo log, for the per-second tables and for tests.
//!
//! Owns: `WalStats` (a snapshot) and the relaxed atomic counters behind it.
//!
//! Must never: take a lock on the append path (counters are relaxed atomics).

use std::sync::atomic::{AtomicU64, Ordering};

use tierdb_page::Lsn;

/// A snapshot of the redo log's counters since open.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WalStats {
    /// Records appended.
    pub appends: u64,
    /// Framed bytes appended (header + payload).
    pub appended_bytes: u64,
    /// Write-outs forced by a full log buffer (done by the appender, outside the lock).
    pub buffer_full_writes: u64,
    /// Write-outs of the log buffer to the segment files (each one or more `write_at`).
    pub writes: u64,
    /// Bytes written to the segment files.
    pub written_bytes: u64,
    /// Group-commit sync rounds (each fsyncs every segment written since the last one).
    pub fsyncs: u64,
    /// `commit` calls.
    pub commits: u64,
    /// `flush_to` calls (commits under `EveryCommit` included) that had to wait for an
    /// fsync because their LSN was not yet durable.
    pub flush_waits: u64,
    /// Segment files currently making up the log.
    pub segments: u64,
    /// Segment files deleted by checkpoints.
    pub segments_deleted: u64,
    /// Segments started from the spare the prefill thread wrote (the others were created
    /// empty and zero-filled by the writer).
    pub segments_from_spare: u64,
    /// Bytes held by the segment files.
    pub bytes_on_disk: u64,
    pub end_lsn: Lsn,
    pub durable_lsn: Lsn,
    pub checkpoint_lsn: Lsn,
}

impl WalStats {
    /// Average group-commit size: flush waits served per fsync (0 when nothing was synced).
    pub fn avg_commits_per_fsync(&self) -> f64 {
        if self.fsyncs == 0 {
            0.0
        } else {
            self.flush_waits as f64 / self.fsyncs as f64
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters {
    pub appends: AtomicU64,
    pub appended_bytes: AtomicU64,
    pub buffer_full_writes: AtomicU64,
    pub writes: AtomicU64,
    pub written_bytes: AtomicU64,
    pub fsyncs: AtomicU64,
    pub commits: AtomicU64,
    pub flush_waits: AtomicU64,
    pub segments_deleted: AtomicU64,
}

impl Counters {
    pub fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}
