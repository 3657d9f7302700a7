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
    /// Byte ranges (offset, bytes) to copy into the page.
    Diff(PageId, Vec<(u16, Vec<u8>)>),
}

impl PageChange {
    pub fn page(&self) -> PageId {
        match self {
            PageChange::Image(p, _) | PageChange::Diff(p, _) => *p,
        }
    }
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
    TxnEnd { txn: u64, committed: bool },
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

/// Encodes page `after` relative to `before` (None → full image) into `out`.
pub fn encode_change(out: &mut Vec<u8>, id: PageId, before: Option<&[u8]>, after: &[u8]) {
    out.extend_from_slice(&id.0.to_le_bytes());
    match before {
        None => {
            out.push(0);
            out.extend_from_slice(after);
        }
        Some(b) => {
            out.push(1);
            let count_at = out.len();
            out.extend_from_slice(&0u16.to_le_bytes());
            let mut n = 0u16;
            let mut i = 0;
            // The CRC and LSN fields are never logged: redo stamps the LSN, sealing the CRC.
            let skip = |i: usize| {
                (off::CRC..off::CRC + 4).contains(&i) || (off::LSN..off::LSN + 8).contains(&i)
            };
            while i < PAGE_SIZE {
                if b[i] == after[i] || skip(i) {
                    i += 1;
                    continue;
                }
                let start = i;
                // Extend the run; bridge gaps of up to 8 equal bytes to keep ranges few.
                let mut end = i + 1;
                let mut j = end;
                while j < PAGE_SIZE && j - end <= 8 {
                    if b[j] != after[j] && !skip(j) {
                        end = j + 1;
                    }
                    j += 1;
                }
                out.extend_from_slice(&(start as u16).to_le_bytes());
                out.extend_from_slice(&((end - start) as u16).to_le_bytes());
                out.extend_from_slice(&after[start..end]);
                n += 1;
                i = end;
            }
            out[count_at..count_at + 2].copy_from_slice(&n.to_le_bytes());
        }
    }
}

/// Starts an mtr payload; append `n_changes` changes with `encode_change`, then `finish_mtr`.
pub fn begin_mtr(out: &mut Vec<u8>, txn: u64, n_changes: u16) {
    out.push(KIND_MTR);
    out.extend_from_slice(&txn.to_le_bytes());
    out.extend_from_slice(&n_changes.to_le_bytes());
}
pub fn finish_mtr(out: &mut Vec<u8>, logical: &[u8]) {
    out.extend_from_slice(&(logical.len() as u32).to_le_bytes());
    out.extend_from_slice(logical);
}

pub fn encode_txn_end(txn: u64, committed: bool) -> Vec<u8> {
    let mut v = vec![KIND_TXN_END];
    v.extend_from_slice(&txn.to_le_bytes());
    v.push(committed as u8);
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
                    0 => changes.push(PageChange::Image(id, r.take(PAGE_SIZE)?.to_vec())),
                    1 => {
                        let k = r.u16()?;
                        let mut ranges = Vec::with_capacity(k as usize);
                        for _ in 0..k {
                            let o = r.u16()?;
                            let l = r.u16()?;
                            if o as usize + l as usize > PAGE_SIZE {
                                return Err(RedoError("diff range past page end"));
                            }
                            ranges.push((o, r.take(l as usize)?.to_vec()));
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
            if c > 1 || !r.0.is_empty() {
                return Err(RedoError("bad txn end"));
            }
            Ok(Record::TxnEnd {
                txn,
                committed: c == 1,
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
            for (o, b) in ranges {
                let o = *o as usize;
                page[o..o + b.len()].copy_from_slice(b);
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
            encode_change(&mut out, PageId(4), Some(&before), &after);
            finish_mtr(&mut out, b"undo");
            let Record::Mtr { txn, changes, logical } = decode(&out).unwrap() else { panic!() };
            prop_assert_eq!(txn, 7);
            prop_assert_eq!(logical, b"undo".to_vec());
            let mut page = before.clone();
            apply(&mut page, &changes[0]);
            prop_assert_eq!(page, after);
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode(&bytes);
        }
    }
}
