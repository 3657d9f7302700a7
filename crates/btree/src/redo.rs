//! Redo log records: what one mini-transaction (mtr) or transaction end writes to the WAL,
//! and how recovery re-applies page changes. Byte layout in `docs/format.md` ("Redo records").
//!
//! Owns: encoding/decoding of log payloads; the page-image rules (full page image on a page's
//! first change after it was last clean, otherwise the literal, move and fill ranges the mtr
//! recorded as it wrote, see `pagemut`); applying a record to a
//! page during recovery, idempotently (skip when the page LSN already covers it).
//! Must never: panic on a malformed payload (the decoder returns `RedoError`); apply a diff to
//! a page whose LSN is at or past the record.

use tierdb_page::{PageId, PAGE_SIZE};

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
    /// `len` copies of `byte` from `dst` on.
    Fill { dst: u16, len: u16, byte: u8 },
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
/// Marker for a fill range (both high bits of the length field; moves and literals are
/// shorter than 0x4000 bytes).
const FILL_FLAG: u16 = 0xC000;

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

/// Encodes the full image of `page` (minus its longest run of zero bytes, a node's free gap)
/// as one change of an mtr record.
pub fn encode_image(out: &mut Vec<u8>, id: PageId, page: &[u8]) {
    out.extend_from_slice(&id.0.to_le_bytes());
    let (zs, ze) = longest_zero_run(page);
    out.push(0);
    out.extend_from_slice(&(zs as u16).to_le_bytes());
    out.extend_from_slice(&((ze - zs) as u16).to_le_bytes());
    out.extend_from_slice(&page[..zs]);
    out.extend_from_slice(&page[ze..]);
}

/// Encodes the writes recorded in `log` (`pagemut`: literal, move and fill ranges, in order) as one
/// change of an mtr record. The caller logs a full image instead when `log.is_whole()`.
pub fn encode_ops(out: &mut Vec<u8>, id: PageId, log: &crate::pagemut::OpLog) {
    debug_assert!(!log.is_whole());
    out.extend_from_slice(&id.0.to_le_bytes());
    out.push(1);
    out.extend_from_slice(&log.count().to_le_bytes());
    out.extend_from_slice(log.ops());
}

/// Starts an mtr payload; append `n_changes` changes with `encode_image` / `encode_ops`,
/// then `finish_mtr`.
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
                            if l & FILL_FLAG == FILL_FLAG {
                                let len = l & !FILL_FLAG;
                                let byte = r.u8()?;
                                if o as usize + len as usize > PAGE_SIZE {
                                    return Err(RedoError("diff fill past page end"));
                                }
                                ranges.push(DiffOp::Fill { dst: o, len, byte });
                            } else if l & MOVE_FLAG != 0 {
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
                    DiffOp::Fill { dst, len, byte } => {
                        let d = *dst as usize;
                        page[d..d + *len as usize].fill(*byte);
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
        fn full_images_round_trip_without_their_gap(fill in 0usize..PAGE_SIZE, seed in any::<u8>()) {
            let mut page = vec![0u8; PAGE_SIZE];
            for (i, b) in page.iter_mut().enumerate() { if i < fill || i > fill + 5000 { *b = (i as u8).wrapping_mul(seed) | 1; } }
            let mut out = Vec::new();
            begin_mtr(&mut out, 1, 1);
            encode_image(&mut out, PageId(4), &page);
            finish_mtr(&mut out, &[]);
            let Record::Mtr { changes, .. } = decode(&out).unwrap() else { panic!() };
            let mut got = vec![0xEEu8; PAGE_SIZE];
            apply(&mut got, &changes[0]);
            prop_assert_eq!(got, page);
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode(&bytes);
        }
    }
}
