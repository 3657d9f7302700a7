//! The write side of the segment files: puts a run of stream bytes into the active segment,
//! rolling over to a new segment file when the active one is full.
//!
//! Owns: the segment list (`Writer::segs`, last = active), the position up to which the
//! stream is in the files (`written`), the set of devices written since their last fsync
//! and whether a new directory entry awaits a directory fsync.
//!
//! Records may span segments: a segment is filled to exactly `segment_size_bytes` and the
//! rest of a record continues in the next file (the reader reads the concatenated stream).
//!
//! Zeroed tail: when a write goes past the zero bytes already in the active file, up to
//! `PREALLOC_BYTES` more zeros are written after it (never past the segment size). Later
//! commits then overwrite blocks that exist, so their fdatasync does not also commit a file
//! size change (an ext4 journal commit: measured 196 µs vs 109 µs per 4 KiB synced write on
//! this machine's disk). A zero length field is not a record, so readers and recovery stop
//! there; recovery cuts the zeros off like any other tail. A new segment normally starts as
//! the spare the prefill thread wrote (all zeros, fsynced: see `prefill`), so the zeros are
//! written here only for a segment that started without one (the first after open, or when
//! the spare was not ready in time).
//!
//! Must never: write anywhere but at `written` (the stream is append-only; bytes below it
//! are never rewritten); forget a written device before it is fsynced (a device leaves
//! `unsynced` only when a sync leader takes it to fsync it); fsync anything itself — that
//! is the group-commit leader's job, outside this lock.

use std::path::PathBuf;
use std::sync::Arc;

use tierdb_io::Device;

use crate::error::WalError;
use crate::prefill::Prefill;
use crate::reader::SegmentView;
use crate::segment::Segment;
use crate::DeviceOpener;

/// How far ahead of the log end the active segment is zero-filled.
pub(crate) const PREALLOC_BYTES: u64 = 4 << 20;

/// Writes zeros to `[from, to)` of `dev`.
fn write_zeros(dev: &dyn Device, from: u64, to: u64) -> std::io::Result<()> {
    static ZEROS: [u8; 64 << 10] = [0; 64 << 10];
    let mut at = from;
    while at < to {
        let n = (to - at).min(ZEROS.len() as u64) as usize;
        dev.write_at(&ZEROS[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

pub(crate) struct Writer {
    pub dir: PathBuf,
    pub opener: DeviceOpener,
    pub segment_size_bytes: u64,
    /// Contiguous segments, ascending; never empty after open; the last one is active.
    pub segs: Vec<Segment>,
    /// Stream position up to which bytes have been handed to the files.
    pub written: u64,
    /// Empty buffer swapped with the append buffer on each write-out (keeps its capacity).
    pub spare: Vec<u8>,
    /// Devices written since they were last handed to a sync leader.
    pub unsynced: Vec<Arc<dyn Device>>,
    /// A segment file was created since the last directory fsync.
    pub dir_dirty: bool,
    /// The spare segment filled in the background.
    pub prefill: Arc<Prefill>,
    /// Segments started from the spare since open.
    pub from_spare: u64,
}

impl Writer {
    /// Writes `data`, the stream bytes starting at `self.written`, into the segment files.
    /// On error the log must be poisoned by the caller: some prefix may have been written.
    pub fn write_stream(&mut self, data: &[u8]) -> Result<(), WalError> {
        let mut off = 0usize;
        while off < data.len() {
            let pos = self.written;
            let needs_new = match self.segs.last() {
                None => true,
                Some(seg) => {
                    debug_assert_eq!(seg.end(), pos, "stream is append-only");
                    seg.len >= self.segment_size_bytes
                }
            };
            if needs_new {
                let seg = self.new_segment(pos)?;
                tracing::debug!(base = pos, path = %seg.path.display(), zeroed = seg.file_len,
                    "redo segment created");
                self.segs.push(seg);
                self.dir_dirty = true;
                continue;
            }
            let seg_size = self.segment_size_bytes;
            let Some(seg) = self.segs.last_mut() else {
                continue;
            };
            let room = seg_size.saturating_sub(seg.len);
            let n = (room.min((data.len() - off) as u64)) as usize;
            seg.dev
                .write_at(&data[off..off + n], seg.len)
                .map_err(|e| {
                    WalError::io(
                        format!("writing {} bytes to {} at LSN {pos}", n, seg.dev.name()),
                        e,
                    )
                })?;
            seg.len += n as u64;
            if seg.len.saturating_mul(2) >= seg_size {
                self.prefill.want();
            }
            if seg.len > seg.file_len {
                let to = (seg.len + PREALLOC_BYTES).min(seg_size).max(seg.len);
                write_zeros(&*seg.dev, seg.len, to).map_err(|e| {
                    WalError::io(
                        format!("zero-filling {} ahead of LSN {}", seg.dev.name(), pos),
                        e,
                    )
                })?;
                seg.file_len = to;
            }
            let dev = Arc::clone(&seg.dev);
            if !self.unsynced.iter().any(|d| Arc::ptr_eq(d, &dev)) {
                self.unsynced.push(dev);
            }
            self.written += n as u64;
            off += n;
        }
        Ok(())
    }

    /// The segment starting at `base`: the spare renamed when one is ready, else a new empty
    /// file.
    fn new_segment(&mut self, base: u64) -> Result<Segment, WalError> {
        let path = self.dir.join(crate::format::segment_file_name(base));
        match self.prefill.take(&path) {
            Some(zeroed) => {
                self.from_spare += 1;
                Segment::adopt_zeroed(&self.opener, base, path, zeroed)
            }
            None => Segment::create(&self.opener, &self.dir, base),
        }
    }

    /// A read-only snapshot of the segments for a reader.
    pub fn views(&self) -> Vec<SegmentView> {
        self.segs
            .iter()
            .map(|s| SegmentView {
                base: s.base,
                len: s.len,
                dev: Arc::clone(&s.dev),
            })
            .collect()
    }

    /// Bytes held by the segment files (the zeroed tail included).
    pub fn bytes_on_disk(&self) -> u64 {
        self.segs.iter().map(|s| s.file_len).sum()
    }

    /// Cuts the zeroed tail off the active segment (at a clean close, so the files hold
    /// exactly the log). The caller fsyncs.
    pub fn trim_tail(&mut self) -> Result<(), WalError> {
        if let Some(seg) = self.segs.last_mut() {
            if seg.file_len > seg.len {
                seg.dev
                    .set_len(seg.len)
                    .map_err(|e| WalError::io(format!("trimming {}", seg.dev.name()), e))?;
                seg.file_len = seg.len;
                let dev = Arc::clone(&seg.dev);
                if !self.unsynced.iter().any(|d| Arc::ptr_eq(d, &dev)) {
                    self.unsynced.push(dev);
                }
            }
        }
        Ok(())
    }
}
