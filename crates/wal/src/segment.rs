//! Segment files: the redo stream cut into files named by the LSN of their first byte.
//!
//! Owns: `Segment` (base LSN, length, device, path), listing the segment files of a redo
//! directory, opening and creating them through the `DeviceOpener`.
//!
//! Must never: treat a file whose name is not exactly 20 digits + ".log" as a segment;
//! reuse a stale file's bytes when creating a segment (a new segment is truncated to 0, or
//! is the spare, which holds only zeros).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tierdb_io::Device;

use crate::error::WalError;
use crate::format::{parse_segment_file_name, segment_file_name};
use crate::DeviceOpener;

/// One segment file: the stream bytes `[base, base + len)`, followed in the active segment
/// by zero bytes up to `file_len` (written ahead so that a commit's fdatasync overwrites
/// allocated blocks instead of growing the file, which on ext4 also commits the journal).
#[derive(Clone)]
pub(crate) struct Segment {
    pub base: u64,
    pub len: u64,
    /// Bytes in the file: `len` plus the zeroed tail written ahead (never past the segment
    /// size, so every segment but the last still ends exactly where the next begins).
    pub file_len: u64,
    pub dev: Arc<dyn Device>,
    pub path: PathBuf,
}

impl Segment {
    /// LSN just past the segment's last byte.
    pub fn end(&self) -> u64 {
        self.base + self.len
    }

    /// Opens the existing segment file at `path` and reads its length.
    pub fn open(opener: &DeviceOpener, base: u64, path: PathBuf) -> Result<Segment, WalError> {
        let dev = opener(&path)
            .map_err(|e| WalError::io(format!("opening segment {}", path.display()), e))?;
        let len = dev
            .len()
            .map_err(|e| WalError::io(format!("reading length of {}", path.display()), e))?;
        if base.checked_add(len).is_none() {
            return Err(WalError::Corrupt {
                context: path.display().to_string(),
                detail: format!("segment at LSN {base} with {len} bytes overflows the LSN space"),
            });
        }
        Ok(Segment {
            base,
            len,
            file_len: len,
            dev,
            path,
        })
    }

    /// Opens the file at `path` (a spare just renamed there: `zeroed` bytes, all zero) as the
    /// empty segment starting at `base`.
    pub fn adopt_zeroed(
        opener: &DeviceOpener,
        base: u64,
        path: PathBuf,
        zeroed: u64,
    ) -> Result<Segment, WalError> {
        let dev = opener(&path)
            .map_err(|e| WalError::io(format!("opening segment {}", path.display()), e))?;
        Ok(Segment {
            base,
            len: 0,
            file_len: zeroed,
            dev,
            path,
        })
    }

    /// Creates (or empties) the segment file for `base` in `dir`. The caller makes the
    /// directory entry durable (fsync of the directory) before relying on it.
    pub fn create(opener: &DeviceOpener, dir: &Path, base: u64) -> Result<Segment, WalError> {
        let path = dir.join(segment_file_name(base));
        let dev = opener(&path)
            .map_err(|e| WalError::io(format!("creating segment {}", path.display()), e))?;
        dev.set_len(0)
            .map_err(|e| WalError::io(format!("emptying new segment {}", path.display()), e))?;
        Ok(Segment {
            base,
            len: 0,
            file_len: 0,
            dev,
            path,
        })
    }
}

/// The segment files in `dir`, sorted by base LSN. Other files are ignored.
pub(crate) fn list_segment_files(dir: &Path) -> Result<Vec<(u64, PathBuf)>, WalError> {
    let ctx = || format!("listing {}", dir.display());
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| WalError::io(ctx(), e))? {
        let entry = entry.map_err(|e| WalError::io(ctx(), e))?;
        let name = entry.file_name();
        let Some(base) = name.to_str().and_then(parse_segment_file_name) else {
            continue;
        };
        out.push((base, entry.path()));
    }
    out.sort_by_key(|(base, _)| *base);
    Ok(out)
}

/// Deletes a segment file; a file that is already gone is not an error.
pub(crate) fn remove_segment_file(path: &Path) -> Result<(), WalError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(WalError::io(format!("deleting {}", path.display()), e)),
    }
}
