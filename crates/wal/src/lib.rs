//! tierdb-wal: the redo log.
//!
//! The log is a logical byte stream and an LSN is a byte position in it. Payloads are opaque
//! bytes to this crate (the B+tree layer encodes page diffs and transaction records into
//! them). The stream lives in a directory as segment files named by the LSN of their first
//! byte; records are framed `[u32 length][u32 CRC32C][payload]` and may span segment files.
//! A `control` file holds the checkpoint LSN. The exact bytes are in `docs/format.md`.
//!
//! Owns: appending records in log order (`Wal::append`), making them durable with group
//! commit (`Wal::flush_to`, `Wal::commit` under a `FlushPolicy`), checkpoints and log space
//! reclamation (`Wal::checkpoint`), finding and cutting the torn tail at open, reading the
//! log back for recovery (`Wal::read_from`).
//!
//! Must never: acknowledge a commit whose bytes are not fsynced under `EveryCommit`; return
//! a record past a torn or invalid one; leave stale bytes past the valid end where a later
//! append could make them readable; keep working after a failed write or fsync (the log is
//! poisoned, every later call returns `WalError::Poisoned` with the original error); panic
//! on bytes read from disk.
//!
//! Modules: `format` (framing, names), `control` (checkpoint file), `segment` (segment
//! files), `writer` (bytes → files), `reader` (files → records), `recovery` (open),
//! `wal` (the handle, group commit, policies), `flusher` (background thread), `prefill` (the
//! spare segment and its thread), `stats`.

use std::path::Path;
use std::sync::Arc;

mod config;
mod control;
mod error;
mod flusher;
pub mod format;
mod prefill;
mod reader;
mod recovery;
mod segment;
mod stats;
mod wal;
mod writer;

pub use config::{
    FlushPolicy, WalConfig, DEFAULT_BUFFER_SIZE_BYTES, DEFAULT_FLUSH_INTERVAL,
    DEFAULT_SEGMENT_SIZE_BYTES, MIN_SEGMENT_SIZE_BYTES,
};
pub use control::{CONTROL_FILE, WAL_FORMAT_VERSION};
pub use error::WalError;
pub use format::{MAX_RECORD_BYTES, RECORD_HEADER_BYTES};
pub use prefill::SPARE_FILE;
pub use reader::WalReader;
pub use stats::WalStats;
pub use tierdb_page::Lsn;
pub use wal::Wal;

/// Opens (creating if missing) the segment file at a path. The default is
/// `tierdb_io::BufferedFile`; tests wrap it (e.g. in `tierdb_io::Faulty`).
pub type DeviceOpener =
    Arc<dyn Fn(&Path) -> std::io::Result<Arc<dyn tierdb_io::Device>> + Send + Sync>;

/// The default `DeviceOpener`: a `tierdb_io::BufferedFile`, created if missing.
pub fn default_opener() -> DeviceOpener {
    Arc::new(|path: &Path| {
        let f = tierdb_io::BufferedFile::open(path, true)?;
        Ok(Arc::new(f) as Arc<dyn tierdb_io::Device>)
    })
}
