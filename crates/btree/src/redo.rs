//! Redo log records: what one mini-transaction (mtr) or transaction end writes to the WAL,
//! and how recovery re-applies page changes. Byte layout in `docs/format.md` ("Redo records").
//!
//! Owns: encoding/decoding of log payloads; the page-image rules (full page image on a page's
//! first change after it was last clean, byte-range diffs otherwise); applying a record to a
//! page during recovery, idempotently (skip when the page LSN already covers it).
//! Must never: panic on a malformed payload (the decoder returns `RedoError`); apply a diff to
//! a page whose LSN is at or past the record.

use tierdb_page::{off, PageId, PAGE_SIZE};

pub const KIND_MTR: u8 = 1;
pub const KIND_TXN_END: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed redo record: {0}")]
pub struct RedoError(pub &'static str);

/// One page change inside an mtr record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageChange {
    /// The whole page (CRC and LSN fields are rewritten at redo).
    Image(PageId, Vec<u8>),
    /// Byte ranges to copy into the page, in order.
    Diff(PageId, Vec<DiffOp>),
}

impl PageChange {
    pub fn page(&self) -> PageId {
        match self {
            PageChange::Image(p, _) | PageChange::Diff(p, _) => *p,
        }
    }
}

/// One step of a page diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffOp {
    /// Copy `bytes` to `offset`.
    Literal(u16, Vec<u8>),
    /// `memmove` of `len` bytes from `src` to `dst` (as the page is at this step).
    Move { dst: u16, src: u16, len: u16 },
}

/// A decoded log payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// Atomic group of page changes, with an optional logical part owned by the engine
    /// (transaction id and undo information; opaque here).
    Mtr {
        txn: u64,
        changes: Vec<PageChange>,
        logical: Vec<u8>,
    },
    /// A transaction ended (committed or rolled back).
    /// A transaction's end. `binlog` is empty, or (a commit only) the binary-log writes of
    /// the transaction, opaque here (`tierdb-binlog` encodes and replays them).
    TxnEnd {
        txn: u64,
        committed: bool,
        binlog: Vec<u8>,
    },
}

struct Rd<'a>(&'a [u8]);
impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], RedoError> {
        if self.0.len() < n {
            return Err(RedoError("truncated"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, RedoError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, RedoError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, RedoError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, RedoError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
}

/// High bit of a diff range's length: the range is a move inside the page (`src u16`
/// follows) instead of literal bytes. Inserting or removing a slot shifts the slot array by
/// two bytes; a move logs that in 6 bytes instead of the whole tail of the array.
const MOVE_FLAG: u16 = 0x8000;

fn put_literal(out: &mut Vec<u8>, n: &mut u16, at: usize, bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    out.extend_from_slice(&(at as u16).to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
    out.extend_from_slice(bytes);
    *n += 1;
}

/// The longest run of zero bytes in `p` as `(start, end)`, found in 64-byte steps.
fn longest_zero_run(p: &[u8]) -> (usize, usize) {
    const STEP: usize = 64;
    let zero = [0u8; STEP];
    let (mut best, mut cur) = ((0, 0), None::<usize>);
    let mut i = 0;
    while i + STEP <= p.len() {
        if p[i..i + STEP] == zero {
            let s = *cur.get_or_insert(i);
            if i + STEP - s > best.1 - best.0 {
                best = (s, i + STEP);
            }
        } else {
            cur = None;
        }
        i += STEP;
    }
    best
}

/// The 8 bytes of `p` at `at` (any alignment) as one number, first byte lowest.
#[inline(always)]
fn word(p: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether two 64-byte blocks are equal (eight word compares, no call).
#[inline(always)]
fn same_block(a: &[u8], b: &[u8]) -> bool {
    (0..8).fold(0u64, |acc, k| acc | (word(a, 8 * k) ^ word(b, 8 * k))) == 0
}

/// Encodes the changed run `after[start..end]`, as a literal, or as literal + move + literal
/// when most of it is the old bytes shifted by a slot (2 bytes) either way.
fn encode_run(
    out: &mut Vec<u8>,
    n: &mut u16,
    before: &[u8],
    after: &[u8],
    start: usize,
    end: usize,
) {
    if end - start >= 24 {
        for shift in [2isize, -2] {
            // Longest stretch inside the run where after[j] == before[j - shift].
            let (mut best, mut cur_start, mut best_start) = (0usize, start, start);
            let mut j = start;
            while j < end {
                let src = j as isize - shift;
                // Eight equal bytes at once (the stretch's length is then updated as the
                // byte-by-byte walk would have).
                if src >= 0
                    && src as usize + 8 <= PAGE_SIZE
                    && j + 8 <= end
                    && word(after, j) == word(before, src as usize)
                {
                    j += 8;
                    if j - cur_start > best {
                        best = j - cur_start;
                        best_start = cur_start;
                    }
                    continue;
                }
                let same =
                    src >= 0 && (src as usize) < PAGE_SIZE && after[j] == before[src as usize];
                if !same {
                    cur_start = j + 1;
                } else if j + 1 - cur_start > best {
                    best = j + 1 - cur_start;
                    best_start = cur_start;
                }
                j += 1;
            }
            if best >= 16 {
                // The move first: it reads bytes that the literals around it overwrite.
                out.extend_from_slice(&(best_start as u16).to_le_bytes());
                out.extend_from_slice(&(best as u16 | MOVE_FLAG).to_le_bytes());
                out.extend_from_slice(&((best_start as isize - shift) as u16).to_le_bytes());
                *n += 1;
                put_literal(out, n, start, &after[start..best_start]);
                put_literal(out, n, best_start + best, &after[best_start + best..end]);
                return;
            }
        }
    }
    put_literal(out, n, start, &after[start..end]);
}

/// Encodes page `after` relative to `before` (None → full image) into `out`. `before` is
/// scratch: its CRC and LSN fields are overwritten (they are never logged; redo stamps the
/// LSN and the pool seals the CRC). Returns false when the diff is empty (the page is
/// unchanged apart from those fields): the caller then drops the bytes it appended.
pub fn encode_change(
    out: &mut Vec<u8>,
    id: PageId,
    before: Option<&mut [u8]>,
    after: &[u8],
) -> bool {
    out.extend_from_slice(&id.0.to_le_bytes());
    let Some(b) = before else {
        // Full image, minus its longest run of zero bytes (a node's free gap).
        let (zs, ze) = longest_zero_run(after);
        out.push(0);
        out.extend_from_slice(&(zs as u16).to_le_bytes());
        out.extend_from_slice(&((ze - zs) as u16).to_le_bytes());
        out.extend_from_slice(&after[..zs]);
        out.extend_from_slice(&after[ze..]);
        return true;
    };
    b[off::CRC..off::CRC + 4].copy_from_slice(&after[off::CRC..off::CRC + 4]);
    b[off::LSN..off::LSN + 8].copy_from_slice(&after[off::LSN..off::LSN + 8]);
    let b: &[u8] = b;
    out.push(1);
    let count_at = out.len();
    out.extend_from_slice(&0u16.to_le_bytes());
    let mut n = 0u16;
    const BLOCK: usize = 64;
    let mut i = 0;
    while i < PAGE_SIZE {
        // Skip equal blocks, then equal words, with compares the compiler keeps inline.
        if i % BLOCK == 0 && same_block(&b[i..i + BLOCK], &after[i..i + BLOCK]) {
            i += BLOCK;
            continue;
        }
        if i % 8 == 0 && word(b, i) == word(after, i) {
            i += 8;
            continue;
        }
        if b[i] == after[i] {
            i += 1;
            continue;
        }
        // A changed run; bridge gaps of up to 8 equal bytes to keep ranges few. Aligned
        // words are looked at whole: the run ends where the byte-by-byte walk would end it.
        let start = i;
        let mut end = i + 1;
        let mut j = end;
        while j < PAGE_SIZE && j - end <= 8 {
            if j % 8 == 0 {
                let x = word(b, j) ^ word(after, j);
                if x == 0 {
                    j += 8;
                    continue;
                }
                // Little-endian: the lowest set byte is the first differing byte.
                let (lo, hi) = (
                    (x.trailing_zeros() / 8) as usize,
                    (7 - x.leading_zeros() / 8) as usize,
                );
                if j + lo - end > 8 {
                    break;
                }
                end = j + hi + 1;
                j += 8;
                continue;
            }
            if b[j] != after[j] {
                end = j + 1;
            }
            j += 1;
        }
        encode_run(out, &mut n, b, after, start, end);
        i = end;
    }
    out[count_at..count_at + 2].copy_from_slice(&n.to_le_bytes());
    n > 0
}

/// Starts an mtr payload; append `n_changes` changes with `encode_change`, then `finish_mtr`.
pub fn begin_mtr(out: &mut Vec<u8>, txn: u64, n_changes: u16) {
    out.push(KIND_MTR);
    out.extend_from_slice(&txn.to_le_bytes());
    out.extend_from_slice(&n_changes.to_le_bytes());
}
/// Rewrites the change count of an mtr payload started with `begin_mtr` at the start of `out`.
pub fn set_mtr_change_count(out: &mut [u8], n_changes: u16) {
    debug_assert_eq!(out[0], KIND_MTR);
    out[9..11].copy_from_slice(&n_changes.to_le_bytes());
}
pub fn finish_mtr(out: &mut Vec<u8>, logical: &[u8]) {
    out.extend_from_slice(&(logical.len() as u32).to_le_bytes());
    out.extend_from_slice(logical);
}

pub fn encode_txn_end(txn: u64, committed: bool) -> Vec<u8> {
    encode_txn_end_with(txn, committed, &[])
}

/// A transaction end carrying `binlog` (the commit's binary-log writes) after its fixed part.
pub fn encode_txn_end_with(txn: u64, committed: bool, binlog: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(10 + binlog.len());
    v.push(KIND_TXN_END);
    v.extend_from_slice(&txn.to_le_bytes());
    v.push(committed as u8);
    v.extend_from_slice(binlog);
    v
}

pub fn decode(payload: &[u8]) -> Result<Record, RedoError> {
    let mut r = Rd(payload);
    match r.u8()? {
        KIND_MTR => {
            let txn = r.u64()?;
            let n = r.u16()?;
            let mut changes = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let id = PageId(r.u64()?);
                match r.u8()? {
                    0 => {
                        let zs = r.u16()? as usize;
                        let zl = r.u16()? as usize;
                        if zs + zl > PAGE_SIZE {
                            return Err(RedoError("image gap past page end"));
                        }
                        let mut img = vec![0u8; PAGE_SIZE];
                        img[..zs].copy_from_slice(r.take(zs)?);
                        img[zs + zl..].copy_from_slice(r.take(PAGE_SIZE - zs - zl)?);
                        changes.push(PageChange::Image(id, img));
                    }
                    1 => {
                        let k = r.u16()?;
                        let mut ranges = Vec::with_capacity(k as usize);
                        for _ in 0..k {
                            let o = r.u16()?;
                            let l = r.u16()?;
                            if l & MOVE_FLAG != 0 {
                                let len = l & !MOVE_FLAG;
                                let src = r.u16()?;
                                if o as usize + len as usize > PAGE_SIZE
                                    || src as usize + len as usize > PAGE_SIZE
                                {
                                    return Err(RedoError("diff move past page end"));
                                }
                                ranges.push(DiffOp::Move { dst: o, src, len });
                            } else {
                                if o as usize + l as usize > PAGE_SIZE {
                                    return Err(RedoError("diff range past page end"));
                                }
                                ranges.push(DiffOp::Literal(o, r.take(l as usize)?.to_vec()));
                            }
                        }
                        changes.push(PageChange::Diff(id, ranges));
                    }
                    _ => return Err(RedoError("unknown page change kind")),
                }
            }
            let ll = r.u32()? as usize;
            let logical = r.take(ll)?.to_vec();
            if !r.0.is_empty() {
                return Err(RedoError("trailing bytes"));
            }
            Ok(Record::Mtr {
                txn,
                changes,
                logical,
            })
        }
        KIND_TXN_END => {
            let txn = r.u64()?;
            let c = r.u8()?;
            if c > 1 || (c == 0 && !r.0.is_empty()) {
                return Err(RedoError("bad txn end"));
            }
            Ok(Record::TxnEnd {
                txn,
                committed: c == 1,
                binlog: r.0.to_vec(),
            })
        }
        _ => Err(RedoError("unknown record kind")),
    }
}

/// Applies one change to `page` (the caller checked the page LSN is older than the record).
pub fn apply(page: &mut [u8], change: &PageChange) {
    match change {
        PageChange::Image(_, img) => page.copy_from_slice(img),
        PageChange::Diff(_, ranges) => {
            for op in ranges {
                match op {
                    DiffOp::Literal(o, b) => {
                        let o = *o as usize;
                        page[o..o + b.len()].copy_from_slice(b);
                    }
                    DiffOp::Move { dst, src, len } => {
                        let (s, l) = (*src as usize, *len as usize);
                        page.copy_within(s..s + l, *dst as usize);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn diff_reproduces_the_after_image(edits in proptest::collection::vec((0usize..PAGE_SIZE, any::<u8>()), 0..50)) {
            let mut before = vec![0u8; PAGE_SIZE];
            tierdb_page::format(&mut before, PageId(4), tierdb_page::PageType::BTreeLeaf);
            let mut after = before.clone();
            for (i, b) in edits { if !(4..8).contains(&i) && !(16..24).contains(&i) { after[i] = b; } }
            let mut out = Vec::new();
            begin_mtr(&mut out, 7, 1);
            encode_change(&mut out, PageId(4), Some(&mut before.clone()), &after);
            finish_mtr(&mut out, b"undo");
            let Record::Mtr { txn, changes, logical } = decode(&out).unwrap() else { panic!() };
            prop_assert_eq!(txn, 7);
            prop_assert_eq!(logical, b"undo".to_vec());
            let mut page = before.clone();
            apply(&mut page, &changes[0]);
            prop_assert_eq!(page, after);
        }

        #[test]
        fn shifted_slot_arrays_are_logged_as_moves(n in 20usize..400, at in 0usize..400, ins in any::<bool>()) {
            let at = at % n;
            let mut before = vec![0u8; PAGE_SIZE];
            tierdb_page::format(&mut before, PageId(4), tierdb_page::PageType::BTreeLeaf);
            for i in 0..n { before[64 + 2 * i..66 + 2 * i].copy_from_slice(&((i * 7919) as u16).to_le_bytes()); }
            let mut after = before.clone();
            if ins {
                after.copy_within(64 + 2 * at..64 + 2 * n, 66 + 2 * at);
                after[64 + 2 * at..66 + 2 * at].copy_from_slice(&[0xAB, 0xCD]);
            } else {
                after.copy_within(66 + 2 * at..64 + 2 * n, 64 + 2 * at);
            }
            let mut out = Vec::new();
            begin_mtr(&mut out, 1, 1);
            encode_change(&mut out, PageId(4), Some(&mut before.clone()), &after);
            finish_mtr(&mut out, &[]);
            let Record::Mtr { changes, .. } = decode(&out).unwrap() else { panic!() };
            let mut page = before.clone();
            apply(&mut page, &changes[0]);
            prop_assert_eq!(&page, &after);
            prop_assert!(out.len() < 80, "{} bytes for a slot shift of {} slots", out.len(), n - at);
        }

        #[test]
        fn full_images_round_trip_without_their_gap(fill in 0usize..PAGE_SIZE, seed in any::<u8>()) {
            let mut page = vec![0u8; PAGE_SIZE];
            for (i, b) in page.iter_mut().enumerate() { if i < fill || i > fill + 5000 { *b = (i as u8).wrapping_mul(seed) | 1; } }
            let mut out = Vec::new();
            begin_mtr(&mut out, 1, 1);
            encode_change(&mut out, PageId(4), None, &page);
            finish_mtr(&mut out, &[]);
            let Record::Mtr { changes, .. } = decode(&out).unwrap() else { panic!() };
            let mut got = vec![0xEEu8; PAGE_SIZE];
            apply(&mut got, &changes[0]);
            prop_assert_eq!(got, page);
        }

        /// The word-at-a-time diff writes exactly what the byte-by-byte walk it replaced
        /// wrote, for pages with clusters of edits and shifted stretches.
        #[test]
        fn word_diff_matches_the_byte_walk(
            clusters in proptest::collection::vec((64usize..PAGE_SIZE, 1usize..200, 1usize..12), 0..12),
            shifts in proptest::collection::vec((64usize..PAGE_SIZE - 600, 20usize..500, any::<bool>()), 0..3),
            seed in any::<u8>(),
        ) {
            let mut before = vec![0u8; PAGE_SIZE];
            tierdb_page::format(&mut before, PageId(4), tierdb_page::PageType::BTreeLeaf);
            for (i, b) in before.iter_mut().enumerate().skip(64) { *b = (i as u8).wrapping_mul(seed) ^ (i >> 8) as u8; }
            let mut after = before.clone();
            // Every `stride`-th byte changed: gaps of stride - 1 equal bytes, around the
            // 8-byte bridging limit, at any alignment.
            for (at, len, stride) in clusters {
                for (k, b) in after.iter_mut().skip(at).take(len).enumerate() {
                    if k % stride == 0 { *b = b.wrapping_add(1); }
                }
            }
            for (at, len, right) in shifts {
                match right {
                    true => after.copy_within(at..at + len, at + 2),
                    false => after.copy_within(at + 2..at + len + 2, at),
                }
            }
            let mut out = Vec::new();
            encode_change(&mut out, PageId(4), Some(&mut before.clone()), &after);
            let mut want = Vec::new();
            byte_walk_encode(&mut want, PageId(4), &mut before.clone(), &after);
            prop_assert_eq!(out, want);
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode(&bytes);
        }
    }

    /// The diff as first written: byte by byte (the reference for the word-at-a-time one).
    fn byte_walk_encode(out: &mut Vec<u8>, id: PageId, b: &mut [u8], after: &[u8]) {
        out.extend_from_slice(&id.0.to_le_bytes());
        b[off::CRC..off::CRC + 4].copy_from_slice(&after[off::CRC..off::CRC + 4]);
        b[off::LSN..off::LSN + 8].copy_from_slice(&after[off::LSN..off::LSN + 8]);
        let b: &[u8] = b;
        out.push(1);
        let count_at = out.len();
        out.extend_from_slice(&0u16.to_le_bytes());
        let mut n = 0u16;
        let mut i = 0;
        while i < PAGE_SIZE {
            if i % 64 == 0 && b[i..i + 64] == after[i..i + 64] {
                i += 64;
                continue;
            }
            if b[i] == after[i] {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i + 1;
            let mut j = end;
            while j < PAGE_SIZE && j - end <= 8 {
                if b[j] != after[j] {
                    end = j + 1;
                }
                j += 1;
            }
            byte_walk_run(out, &mut n, b, after, start, end);
            i = end;
        }
        out[count_at..count_at + 2].copy_from_slice(&n.to_le_bytes());
    }

    fn byte_walk_run(
        out: &mut Vec<u8>,
        n: &mut u16,
        before: &[u8],
        after: &[u8],
        start: usize,
        end: usize,
    ) {
        if end - start >= 24 {
            for shift in [2isize, -2] {
                let (mut best, mut cur_start, mut best_start) = (0usize, start, start);
                for (j, &a) in after.iter().enumerate().take(end).skip(start) {
                    let src = j as isize - shift;
                    let same = src >= 0 && (src as usize) < PAGE_SIZE && a == before[src as usize];
                    if !same {
                        cur_start = j + 1;
                    } else if j + 1 - cur_start > best {
                        best = j + 1 - cur_start;
                        best_start = cur_start;
                    }
                }
                if best >= 16 {
                    out.extend_from_slice(&(best_start as u16).to_le_bytes());
                    out.extend_from_slice(&(best as u16 | MOVE_FLAG).to_le_bytes());
                    out.extend_from_slice(&((best_start as isize - shift) as u16).to_le_bytes());
                    *n += 1;
                    put_literal(out, n, start, &after[start..best_start]);
                    put_literal(out, n, best_start + best, &after[best_start + best..end]);
                    return;
                }
            }
        }
        put_literal(out, n, start, &after[start..end]);
    }
}
