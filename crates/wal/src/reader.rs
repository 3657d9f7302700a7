//! Sequential reading of the redo stream: `WalReader` yields the records from a start LSN to
//! the end of the valid log, reading the segment files as one concatenated stream.
//!
//! Owns: the read-ahead window, the walk over a snapshot of the segment list, and the
//! "where does the valid log end" rule used both by recovery and by `Wal::read_from`.
//!
//! Must never: return a record whose length or CRC does not check; return any record past
//! the first torn or invalid one (the iterator is fused: after `None` or an error it stays
//! `None`); read beyond the limit it was given; panic or allocate without bound on garbage
//! (a length field is bounded by `MAX_RECORD_BYTES` and by the bytes actually present
//! before anything is read for it).

use std::sync::Arc;

use tierdb_io::Device;
use tierdb_page::Lsn;

use crate::error::WalError;
use crate::format::{check_record, decode_header, RECORD_HEADER_BYTES};

/// Bytes read from the files at a time (more when one record is larger).
const READ_AHEAD_BYTES: usize = 1024 * 1024;

/// A read-only view of one segment: the stream bytes `[base, base + len)`.
#[derive(Clone)]
pub(crate) struct SegmentView {
    pub base: u64,
    pub len: u64,
    pub dev: Arc<dyn Device>,
}

/// Iterator over `(start LSN, payload)` of the records of the redo log.
///
/// Made by `Wal::read_from`; meant for recovery at start-up, before appends begin. It reads
/// a snapshot of the log as it was when it was made (what had been appended by then);
/// records appended later are not seen. Stops (`None`) at the end of the valid log or at the
/// first torn/invalid record; an I/O error is yielded once as `Some(Err(_))`, then `None`.
pub struct WalReader {
    segs: Vec<SegmentView>,
    /// Start of the next record to decode.
    pos: u64,
    /// End of the readable stream (exclusive).
    limit: u64,
    /// Read-ahead window holding stream bytes `[win_start, win_start + win.len())`.
    win: Vec<u8>,
    win_start: u64,
    done: bool,
    /// Why the reader stopped, once it has.
    stop: Option<StopReason>,
}

/// Why a reader stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// Exactly at the end of the readable bytes.
    End,
    /// At a record that is torn, has a bad length or a bad CRC.
    Invalid,
    /// An I/O error.
    Error,
}

impl WalReader {
    pub(crate) fn new(segs: Vec<SegmentView>, from: u64, limit: u64) -> WalReader {
        debug_assert!(segs.windows(2).all(|w| w[0].base + w[0].len == w[1].base));
        WalReader {
            segs,
            pos: from,
            limit,
            win: Vec::new(),
            win_start: from,
            done: false,
            stop: None,
        }
    }

    /// The LSN just past the last record returned: once the iterator has ended, the end of
    /// the valid log.
    pub fn position(&self) -> Lsn {
        Lsn(self.pos)
    }

    /// Why the reader stopped (`None` while it has not).
    pub(crate) fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Reads stream bytes `[at, at + buf.len())` from the segments.
    fn read_stream(&self, at: u64, buf: &mut [u8]) -> Result<(), WalError> {
        let mut done = 0usize;
        while done < buf.len() {
            let lsn = at + done as u64;
            // First segment whose end is past `lsn`.
            let i = self.segs.partition_point(|s| s.base + s.len <= lsn);
            let Some(seg) = self.segs.get(i).filter(|s| s.base <= lsn) else {
                return Err(WalError::Corrupt {
                    context: "reading the redo stream".to_string(),
                    detail: format!("no segment holds LSN {lsn}"),
                });
            };
            let n = ((seg.base + seg.len - lsn) as usize).min(buf.len() - done);
            seg.dev
                .read_at(&mut buf[done..done + n], lsn - seg.base)
                .map_err(|e| WalError::io(format!("reading {} at LSN {lsn}", seg.dev.name()), e))?;
            done += n;
        }
        Ok(())
    }

    /// Makes the window cover `[pos, pos + n)`. `Ok(false)` when the stream ends first.
    fn ensure(&mut self, n: usize) -> Result<bool, WalError> {
        let Some(need_end) = self.pos.checked_add(n as u64) else {
            return Ok(false);
        };
        if need_end > self.limit {
            return Ok(false);
        }
        if self.pos >= self.win_start && need_end <= self.win_start + self.win.len() as u64 {
            return Ok(true);
        }
        // `limit - pos >= n` here, so this fits in usize.
        let avail = self.limit - self.pos;
        let want = (n.max(READ_AHEAD_BYTES) as u64).min(avail) as usize;
        let mut win = std::mem::take(&mut self.win);
        win.resize(want, 0);
        let r = self.read_stream(self.pos, &mut win);
        self.win_start = self.pos;
        if r.is_err() {
            win.clear();
        }
        self.win = win;
        r.map(|()| true)
    }

    fn window(&self, n: usize) -> &[u8] {
        let off = (self.pos - self.win_start) as usize;
        &self.win[off..off + n]
    }

    /// Validates the record at `pos` and returns its framed length, without copying.
    fn next_frame(&mut self) -> Result<Option<usize>, WalError> {
        if self.pos >= self.limit {
            self.stop = Some(StopReason::End);
            return Ok(None);
        }
        if !self.ensure(RECORD_HEADER_BYTES)? {
            self.stop = Some(StopReason::Invalid);
            return Ok(None);
        }
        let Some(h) = decode_header(self.window(RECORD_HEADER_BYTES)) else {
            self.stop = Some(StopReason::Invalid);
            return Ok(None);
        };
        let total = h.framed_len() as usize;
        if !self.ensure(total)? {
            self.stop = Some(StopReason::Invalid);
            return Ok(None);
        }
        if !check_record(h, &self.window(total)[RECORD_HEADER_BYTES..]) {
            self.stop = Some(StopReason::Invalid);
            return Ok(None);
        }
        Ok(Some(total))
    }

    /// Advances over the next valid record without copying its payload: its start LSN and
    /// framed length. Used by recovery to find the end of the log.
    pub(crate) fn skip_record(&mut self) -> Result<Option<(u64, usize)>, WalError> {
        if self.done {
            return Ok(None);
        }
        match self.next_frame() {
            Ok(Some(total)) => {
                let start = self.pos;
                self.pos += total as u64;
                Ok(Some((start, total)))
            }
            Ok(None) => {
                self.done = true;
                Ok(None)
            }
            Err(e) => {
                self.done = true;
                self.stop = Some(StopReason::Error);
                Err(e)
            }
        }
    }
}

impl Iterator for WalReader {
    type Item = Result<(Lsn, Vec<u8>), WalError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.next_frame() {
            Ok(Some(total)) => {
                let payload = self.window(total)[RECORD_HEADER_BYTES..].to_vec();
                let start = Lsn(self.pos);
                self.pos += total as u64;
                Some(Ok((start, payload)))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.stop = Some(StopReason::Error);
                Some(Err(e))
            }
        }
    }
}

impl std::iter::FusedIterator for WalReader {}
