//! Errors of the BPE's control plane (open, resize, add/remove device, shutdown) and of its
//! on-disk decoders. The data path (`TierHooks`) never returns an error: every failure there
//! is a miss or a rejected admission, counted in `BpeStats`.
//!
//! Owns: `BpeError`, `FormatError`. Must never: be produced by `on_miss`/`on_evict_clean`.

use std::io;

/// A control-plane failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BpeError {
    #[error("invalid BPE configuration: {0}")]
    Config(String),
    #[error("BPE device {path}: {source}")]
    Device {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("BPE device {0} is already configured")]
    DuplicateDevice(String),
    #[error("BPE device {0} is not configured")]
    UnknownDevice(String),
    #[error("BPE manifest {path}: {source}")]
    Manifest {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("BPE has been shut down")]
    ShutDown,
}

/// Why bytes read back as a region header or manifest were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    #[error("too short: need {need} bytes, got {got}")]
    TooShort { need: usize, got: usize },
    #[error("bad magic")]
    BadMagic,
    #[error("unsupported version {0}")]
    BadVersion(u32),
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("inconsistent field: {0}")]
    Inconsistent(&'static str),
}
