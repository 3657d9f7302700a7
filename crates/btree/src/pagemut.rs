//! Tracked writes to a page: how an mtr knows what it changed without comparing pages.
//!
//! A [`PageMut`] reads as the page's bytes, and every write goes through one of its methods
//! (`write`, `fill`, `copy_within`, `rewrite`), which also records the write in the page's
//! [`OpLog`] when the mtr logs the page as a diff. The log holds the diff's operations in the
//! redo format itself (`redo`'s literal, move and fill ranges, `docs/format.md`, "Redo
//! records"),
//! with the bytes each literal wrote *at the time of the write*: replaying the operations in
//! order on the page as it was before the mtr reproduces it exactly, whatever the later
//! operations overwrite or move. A log that grows past [`OPLOG_LIMIT`] bytes, or a whole-page
//! rewrite, turns the change into a full page image (always a valid record).
//!
//! Owns: the operation log and its encoding. Must never: give out `&mut` access to part of a
//! tracked page (a write that is not recorded would be missing at recovery).

use std::ops::{Deref, Range};

/// Bytes of recorded operations past which a page's change is logged as a full image
/// (a page rewritten this much costs about as much either way).
pub const OPLOG_LIMIT: usize = 4096;

/// Redo's marker for a move range (high bit of the length field).
const MOVE_FLAG: u16 = 0x8000;
/// Redo's marker for a fill range (both high bits of the length field).
const FILL_FLAG: u16 = 0xC000;
/// Longest move or fill the encoding holds (their lengths keep the high bits clear).
const MAX_RANGE: usize = 0x4000 - 1;
/// Fills shorter than this are recorded as literals (which later writes can extend).
const MIN_FILL: usize = 8;

/// Bytes reserved by an `OpLog`'s first operation.
const OPLOG_FIRST: usize = 256;

/// The recorded operations of one page in one mtr, in redo's diff encoding.
#[derive(Debug, Default)]
pub struct OpLog {
    ops: Vec<u8>,
    count: u16,
    /// The last operation when it is a literal: (position of its bytes in `ops`, page
    /// offset, length). A write inside it or right after it extends it.
    last: Option<(usize, usize, usize)>,
    /// The page was rewritten whole (or the log outgrew `OPLOG_LIMIT`): full image.
    whole: bool,
}

impl OpLog {
    pub fn new() -> OpLog {
        OpLog::default()
    }

    /// True when the change must be logged as a full image.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// Number of operations recorded (0: the page was not changed).
    pub fn count(&self) -> u16 {
        self.count
    }

    /// The operations, encoded as redo's diff ranges (`count` of them).
    pub fn ops(&self) -> &[u8] {
        &self.ops
    }

    fn set_whole(&mut self) {
        self.whole = true;
        self.ops = Vec::new();
        self.count = 0;
        self.last = None;
    }

    /// The first operation takes room for a typical mtr's worth (a row's cell and its slot
    /// shift) at once, not by doubling from a few bytes.
    fn room(&mut self) {
        if self.ops.capacity() == 0 {
            self.ops.reserve(OPLOG_FIRST);
        }
    }

    fn check_limit(&mut self) {
        if self.ops.len() > OPLOG_LIMIT {
            self.set_whole();
        }
    }

    fn literal(&mut self, at: usize, bytes: &[u8]) {
        if self.whole || bytes.is_empty() {
            return;
        }
        let end = at + bytes.len();
        if let Some((pos, o, len)) = self.last {
            if at >= o && end <= o + len {
                // Inside the last literal: nothing ran between, patch its bytes.
                let from = pos + (at - o);
                self.ops[from..from + bytes.len()].copy_from_slice(bytes);
                return;
            }
            if at == o + len && len + bytes.len() < MOVE_FLAG as usize {
                self.ops.extend_from_slice(bytes);
                let new_len = len + bytes.len();
                self.ops[pos - 2..pos].copy_from_slice(&(new_len as u16).to_le_bytes());
                self.last = Some((pos, o, new_len));
                self.check_limit();
                return;
            }
        }
        self.room();
        self.ops.extend_from_slice(&(at as u16).to_le_bytes());
        self.ops
            .extend_from_slice(&(bytes.len() as u16).to_le_bytes());
        let pos = self.ops.len();
        self.ops.extend_from_slice(bytes);
        self.count += 1;
        self.last = Some((pos, at, bytes.len()));
        self.check_limit();
    }

    fn fill(&mut self, at: usize, len: usize, v: u8) {
        if self.whole || len == 0 {
            return;
        }
        // Same as a literal of `len` copies of `v`, without building it first.
        if let Some((pos, o, l)) = self.last {
            if at >= o && at + len <= o + l {
                let from = pos + (at - o);
                self.ops[from..from + len].fill(v);
                return;
            }
        }
        if len < MIN_FILL {
            self.literal(at, &[v; MIN_FILL][..len]);
            return;
        }
        if len > MAX_RANGE {
            self.set_whole();
            return;
        }
        self.room();
        self.ops.extend_from_slice(&(at as u16).to_le_bytes());
        self.ops
            .extend_from_slice(&(len as u16 | FILL_FLAG).to_le_bytes());
        self.ops.push(v);
        self.count += 1;
        self.last = None;
        self.check_limit();
    }

    fn moved(&mut self, dst: usize, src: usize, len: usize) {
        if self.whole || len == 0 || dst == src {
            return;
        }
        if len > MAX_RANGE {
            self.set_whole();
            return;
        }
        self.room();
        self.ops.extend_from_slice(&(dst as u16).to_le_bytes());
        self.ops
            .extend_from_slice(&(len as u16 | MOVE_FLAG).to_le_bytes());
        self.ops.extend_from_slice(&(src as u16).to_le_bytes());
        self.count += 1;
        self.last = None;
        self.check_limit();
    }
}

impl OpLog {
    /// `before` with the recorded operations applied, through the redo record's encoder,
    /// decoder and applier (what recovery would make of them). For checks (`verify-redo`).
    #[cfg(any(test, feature = "verify-redo"))]
    pub fn replay_on(&self, id: tierdb_page::PageId, before: &[u8]) -> Vec<u8> {
        use crate::redo;
        let mut rec = Vec::new();
        redo::begin_mtr(&mut rec, 0, 1);
        redo::encode_ops(&mut rec, id, self);
        redo::finish_mtr(&mut rec, &[]);
        let changes = match redo::decode(&rec) {
            Ok(redo::Record::Mtr { changes, .. }) => changes,
            other => panic!("page {id}: recorded writes do not decode: {other:?}"),
        };
        let mut page = before.to_vec();
        redo::apply(&mut page, &changes[0]);
        page
    }
}

/// Write access to one page. Reads see the page; writes go through the methods.
pub struct PageMut<'p> {
    bytes: &'p mut [u8],
    log: Option<&'p mut OpLog>,
}

impl<'p> PageMut<'p> {
    /// Writes recorded in `log` (None: nothing to record, e.g. the page is logged whole).
    pub fn new(bytes: &'p mut [u8], log: Option<&'p mut OpLog>) -> PageMut<'p> {
        PageMut { bytes, log }
    }

    /// A page buffer outside any mtr (tests, scratch pages): writes are not recorded.
    pub fn untracked(bytes: &'p mut [u8]) -> PageMut<'p> {
        PageMut { bytes, log: None }
    }

    /// Copies `src` to `at`.
    pub fn write(&mut self, at: usize, src: &[u8]) {
        self.bytes[at..at + src.len()].copy_from_slice(src);
        if let Some(l) = self.log.as_deref_mut() {
            l.literal(at, src);
        }
    }

    /// Sets the bytes of `range` to `v`.
    pub fn fill(&mut self, range: Range<usize>, v: u8) {
        let (at, len) = (range.start, range.len());
        self.bytes[range].fill(v);
        if let Some(l) = self.log.as_deref_mut() {
            l.fill(at, len, v);
        }
    }

    /// `memmove` of `src` to `dst` inside the page.
    pub fn copy_within(&mut self, src: Range<usize>, dst: usize) {
        let (from, len) = (src.start, src.len());
        self.bytes.copy_within(src, dst);
        if let Some(l) = self.log.as_deref_mut() {
            l.moved(dst, from, len);
        }
    }

    /// The whole page for a rewrite (formatting, rebuilding): the change is logged as a full
    /// image.
    pub fn rewrite(&mut self) -> &mut [u8] {
        if let Some(l) = self.log.as_deref_mut() {
            l.set_whole();
        }
        self.bytes
    }
}

impl Deref for PageMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tierdb_page::{PageId, PAGE_SIZE};

    #[derive(Debug, Clone)]
    enum Op {
        Write(usize, Vec<u8>),
        Fill(usize, usize, u8),
        Move(usize, usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (
                64usize..PAGE_SIZE - 64,
                proptest::collection::vec(any::<u8>(), 1..40)
            )
                .prop_map(|(a, b)| Op::Write(a, b)),
            (64usize..PAGE_SIZE - 300, 1usize..300, any::<u8>())
                .prop_map(|(a, n, v)| Op::Fill(a, n, v)),
            (
                64usize..PAGE_SIZE - 600,
                64usize..PAGE_SIZE - 600,
                1usize..600
            )
                .prop_map(|(d, s, n)| Op::Move(d, s, n)),
            // Writes next to each other, as a node writes a cell's fields one after another.
            (64usize..PAGE_SIZE - 64, 1usize..8).prop_map(|(a, n)| Op::Write(a, vec![0xA5; n])),
        ]
    }

    proptest! {
        #[test]
        fn replaying_the_recorded_writes_rebuilds_the_page(
            seed in any::<u8>(),
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            let before: Vec<u8> = (0..PAGE_SIZE).map(|i| (i as u8).wrapping_mul(seed | 1)).collect();
            let mut page = before.clone();
            let mut log = OpLog::new();
            {
                let mut p = PageMut::new(&mut page, Some(&mut log));
                for o in &ops {
                    match o {
                        Op::Write(a, b) => p.write(*a, b),
                        Op::Fill(a, n, v) => p.fill(*a..*a + *n, *v),
                        Op::Move(d, s, n) => p.copy_within(*s..*s + *n, *d),
                    }
                }
            }
            if log.is_whole() {
                // Outgrew the limit: the full image is logged, nothing to replay.
                prop_assert!(log.ops().is_empty());
            } else {
                prop_assert_eq!(log.replay_on(PageId(3), &before), page);
            }
        }
    }

    #[test]
    fn adjacent_writes_merge_into_one_literal() {
        let mut page = vec![0u8; PAGE_SIZE];
        let mut log = OpLog::new();
        let mut p = PageMut::new(&mut page, Some(&mut log));
        p.write(1000, &[1, 2]);
        p.write(1002, &[3, 4]);
        p.write(1004, b"key");
        p.write(1001, &[9]);
        assert_eq!(log.count(), 1);
        assert_eq!(&log.ops()[..4], &[0xE8, 0x03, 7, 0]);
        assert_eq!(&log.ops()[4..], &[1, 9, 3, 4, b'k', b'e', b'y']);
    }

    #[test]
    fn a_rewrite_or_a_long_log_becomes_a_full_image() {
        let mut page = vec![0u8; PAGE_SIZE];
        let mut log = OpLog::new();
        PageMut::new(&mut page, Some(&mut log)).rewrite()[100] = 1;
        assert!(log.is_whole());
        let mut log = OpLog::new();
        let mut p = PageMut::new(&mut page, Some(&mut log));
        for i in 0..2000 {
            p.write(64 + 8 * i, &[1]);
        }
        assert!(log.is_whole());
    }
}
