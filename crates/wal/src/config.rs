//! Configuration of the redo log: directory, segment size, buffer size and commit policy.
//!
//! Owns: `WalConfig`, `FlushPolicy` and its mapping from MySQL's
//! `innodb_flush_log_at_trx_commit` values.
//!
//! Must never: hold state; it is plain data copied into the `Wal` at open.

use std::path::PathBuf;
use std::time::Duration;

/// What a commit waits for (MySQL's `innodb_flush_log_at_trx_commit`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FlushPolicy {
    /// `1`: every commit is written and fsynced before it is acknowledged (group commit
    /// shares fsyncs between concurrent committers).
    EveryCommit,
    /// `2`: every commit is written to the OS at commit; a background thread fsyncs about
    /// once per `flush_interval`. An OS crash may lose up to that much; a process crash none.
    WriteAtCommit,
    /// `0`: commits do no I/O; a background thread writes and fsyncs about once per
    /// `flush_interval`. A process crash may lose up to that much.
    Periodic,
}

impl FlushPolicy {
    /// Maps `innodb_flush_log_at_trx_commit` (0, 1, 2) to a policy.
    pub fn from_mysql(v: u8) -> Option<FlushPolicy> {
        match v {
            0 => Some(FlushPolicy::Periodic),
            1 => Some(FlushPolicy::EveryCommit),
            2 => Some(FlushPolicy::WriteAtCommit),
            _ => None,
        }
    }

    /// The `innodb_flush_log_at_trx_commit` value of this policy.
    pub fn to_mysql(self) -> u8 {
        match self {
            FlushPolicy::Periodic => 0,
            FlushPolicy::EveryCommit => 1,
            FlushPolicy::WriteAtCommit => 2,
        }
    }

    pub(crate) fn from_u8(v: u8) -> FlushPolicy {
        FlushPolicy::from_mysql(v).unwrap_or(FlushPolicy::EveryCommit)
    }
}

/// Default segment size: 64 MiB.
pub const DEFAULT_SEGMENT_SIZE_BYTES: u64 = 64 * 1024 * 1024;
/// Default in-memory log buffer: 8 MiB.
pub const DEFAULT_BUFFER_SIZE_BYTES: usize = 8 * 1024 * 1024;
/// Default interval of the background flusher.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_secs(1);
/// Smallest accepted segment size.
pub const MIN_SEGMENT_SIZE_BYTES: u64 = 4096;

/// How to open a redo log.
#[derive(Clone, Debug)]
pub struct WalConfig {
    /// The redo directory (`redo_dir`); created if missing.
    pub dir: PathBuf,
    /// A segment file holds at most this many bytes of the log stream.
    pub segment_size_bytes: u64,
    /// Commit durability policy; changeable later with `Wal::set_policy`.
    pub policy: FlushPolicy,
    /// In-memory log buffer; when an append would overflow it, the appender writes the
    /// buffer out first (outside the append lock). A larger record is still accepted.
    pub buffer_size_bytes: usize,
    /// How often the background flusher writes and fsyncs what is not yet durable.
    pub flush_interval: Duration,
}

impl WalConfig {
    /// A config with the defaults: 64 MiB segments, `EveryCommit`, 8 MiB buffer, 1 s flusher.
    pub fn new(dir: impl Into<PathBuf>) -> WalConfig {
        WalConfig {
            dir: dir.into(),
            segment_size_bytes: DEFAULT_SEGMENT_SIZE_BYTES,
            policy: FlushPolicy::EveryCommit,
            buffer_size_bytes: DEFAULT_BUFFER_SIZE_BYTES,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mysql_values_round_trip() {
        for v in 0..=2u8 {
            assert_eq!(
                FlushPolicy::from_mysql(v).map(FlushPolicy::to_mysql),
                Some(v)
            );
        }
        assert_eq!(FlushPolicy::from_mysql(3), None);
        assert_eq!(FlushPolicy::from_mysql(1), Some(FlushPolicy::EveryCommit));
    }
}
