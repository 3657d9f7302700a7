//! The redo log's error type.
//!
//! Owns: `WalError`, the one error every public `Wal` call returns.
//!
//! Must never: lose the original I/O error text (a `Poisoned` error carries the text of the
//! failure that poisoned the log, so an operator sees the root cause on every later call).

use std::io;

/// Why a redo log operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WalError {
    /// A read, write, fsync, create, rename or delete failed.
    #[error("redo log I/O error while {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// Bytes on disk that cannot be a valid redo log (control file, missing segments).
    /// A torn tail is *not* this error: it is cut off at open.
    #[error("redo log corrupt: {context}: {detail}")]
    Corrupt { context: String, detail: String },
    /// An earlier write or fsync failed; the log refuses all further work until reopened.
    /// Carries the text of the original failure.
    #[error("redo log unusable after an earlier I/O failure: {0}")]
    Poisoned(String),
    /// The payload is empty or longer than `MAX_RECORD_BYTES`.
    #[error("redo record payload of {len} bytes is invalid (must be 1..={max})")]
    InvalidRecord { len: usize, max: usize },
    /// A caller passed an LSN or setting this log cannot honour.
    #[error("invalid redo log request: {0}")]
    InvalidArgument(String),
    /// `close` was called; the log accepts no more work.
    #[error("redo log is closed")]
    Closed,
}

impl WalError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> WalError {
        WalError::Io {
            context: context.into(),
            source,
        }
    }
}
