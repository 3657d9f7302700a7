//! Row and undo encodings (layouts in `docs/format.md`, "Rows" and "Undo").
//!
//! A stored row (the value of a primary-index entry) is:
//! `flags u8 | writer txn u64 | ncols u16 | null bitmap ⌈ncols/8⌉ | values`, where an
//! Int/UInt/Double is 8 bytes LE with a 1-byte tag, and Bytes is tag + u16 length + bytes, or,
//! for a long value kept off the row (`crate::lob`), tag + long-value id u64 + length u32.
//! Flag bit 0 = delete-marked (deleted by `writer`; physically removed after it commits).
//!
//! Must never: panic on bytes read from a page (decoders return `None`).

use crate::types::Value;

pub const FLAG_DELETED: u8 = 1;
pub const ROW_HEADER: usize = 9;

const T_INT: u8 = 1;
const T_DOUBLE: u8 = 2;
const T_BYTES: u8 = 3;
const T_EXTERNAL: u8 = 4;
const T_UINT: u8 = 5;

/// Bytes an external value takes in a row (tag, id, length).
pub const EXTERNAL_BYTES: usize = 13;

/// A column whose value is kept in the table's long-value tree: `id` names its chunks,
/// `len` is its length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct External {
    pub col: usize,
    pub id: u64,
    pub len: u32,
}

#[cfg(test)]
pub fn encode_row(out: &mut Vec<u8>, flags: u8, txn: u64, row: &[Value]) {
    encode_row_ext(out, flags, txn, row, &[]);
}

/// `encode_row` writing the columns listed in `ext` as references to their long values
/// (their `row` values are not written). Every inline Bytes value must be at most 65535
/// bytes (`inline_len_ok`).
pub fn encode_row_ext(out: &mut Vec<u8>, flags: u8, txn: u64, row: &[Value], ext: &[External]) {
    out.push(flags);
    out.extend_from_slice(&txn.to_le_bytes());
    out.extend_from_slice(&(row.len() as u16).to_le_bytes());
    let bm_at = out.len();
    out.resize(bm_at + row.len().div_ceil(8), 0);
    for (i, v) in row.iter().enumerate() {
        match v {
            Value::Null => out[bm_at + i / 8] |= 1 << (i % 8),
            Value::Bytes(_) if ext.iter().any(|e| e.col == i) => {
                if let Some(e) = ext.iter().find(|e| e.col == i) {
                    out.push(T_EXTERNAL);
                    out.extend_from_slice(&e.id.to_le_bytes());
                    out.extend_from_slice(&e.len.to_le_bytes());
                }
            }
            Value::Int(x) => {
                out.push(T_INT);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::UInt(x) => {
                out.push(T_UINT);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Double(x) => {
                out.push(T_DOUBLE);
                out.extend_from_slice(&x.to_le_bytes());
            }
            Value::Bytes(b) => {
                out.push(T_BYTES);
                out.extend_from_slice(&(b.len() as u16).to_le_bytes());
                out.extend_from_slice(b);
            }
        }
    }
}

/// Header of a stored row: (flags, writer txn).
pub fn header(b: &[u8]) -> Option<(u8, u64)> {
    if b.len() < ROW_HEADER {
        return None;
    }
    let mut t = [0u8; 8];
    t.copy_from_slice(&b[1..9]);
    Some((b[0], u64::from_le_bytes(t)))
}

/// Rewrites the header of an encoded row.
pub fn with_header(b: &[u8], flags: u8, txn: u64) -> Vec<u8> {
    let mut v = b.to_vec();
    if v.len() >= ROW_HEADER {
        v[0] = flags;
        v[1..9].copy_from_slice(&txn.to_le_bytes());
    }
    v
}

/// True when every Bytes value of `row` fits an inline value's u16 length, except the
/// columns in `ext`.
pub fn inline_len_ok(row: &[Value], ext: &[External]) -> bool {
    row.iter().enumerate().all(|(i, v)| match v {
        Value::Bytes(b) => b.len() <= u16::MAX as usize || ext.iter().any(|e| e.col == i),
        _ => true,
    })
}

/// Decodes a stored row; external values come back as NULL (see `decode_row_ext`).
#[cfg(test)]
pub fn decode_row(b: &[u8]) -> Option<Vec<Value>> {
    decode_row_cols(b, None)
}

/// Decodes a stored row, materialising only the columns `want` marks (all when `None`;
/// columns past the end of `want` are materialised too). Skipped columns come back as
/// `Value::Null`, so a caller must only look at the columns it asked for. The whole row is
/// still parsed, so corrupt bytes are detected whatever the mask.
#[cfg(test)]
pub fn decode_row_cols(b: &[u8], want: Option<&[bool]>) -> Option<Vec<Value>> {
    decode_row_ext(b, want, &mut Vec::new())
}

/// `decode_row_cols` that also lists the row's external values in `ext` (all of them,
/// wanted or not); their columns come back as NULL until `crate::lob` reads them.
pub fn decode_row_ext(
    b: &[u8],
    want: Option<&[bool]>,
    ext: &mut Vec<External>,
) -> Option<Vec<Value>> {
    ext.clear();
    let n = u16::from_le_bytes([*b.get(9)?, *b.get(10)?]) as usize;
    let bm = b.get(11..11 + n.div_ceil(8))?;
    let mut p = 11 + n.div_ceil(8);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        if bm[i / 8] & (1 << (i % 8)) != 0 {
            out.push(Value::Null);
            continue;
        }
        let keep = want.is_none_or(|w| w.get(i).copied().unwrap_or(true));
        let tag = *b.get(p)?;
        p += 1;
        match tag {
            T_INT | T_DOUBLE | T_UINT => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b.get(p..p + 8)?);
                p += 8;
                // Only integers above i64::MAX take the UInt tag.
                if tag == T_UINT && i64::try_from(u64::from_le_bytes(a)).is_ok() {
                    return None;
                }
                out.push(if !keep {
                    Value::Null
                } else if tag == T_INT {
                    Value::Int(i64::from_le_bytes(a))
                } else if tag == T_UINT {
                    Value::UInt(u64::from_le_bytes(a))
                } else {
                    Value::Double(f64::from_le_bytes(a))
                });
            }
            T_BYTES => {
                let l = u16::from_le_bytes([*b.get(p)?, *b.get(p + 1)?]) as usize;
                p += 2;
                let bytes = b.get(p..p + l)?;
                out.push(if keep {
                    Value::Bytes(bytes.to_vec())
                } else {
                    Value::Null
                });
                p += l;
            }
            T_EXTERNAL => {
                let mut id = [0u8; 8];
                id.copy_from_slice(b.get(p..p + 8)?);
                let mut len = [0u8; 4];
                len.copy_from_slice(b.get(p + 8..p + 12)?);
                p += 12;
                ext.push(External {
                    col: i,
                    id: u64::from_le_bytes(id),
                    len: u32::from_le_bytes(len),
                });
                out.push(Value::Null);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// One undo entry: to undo, set `key` in the tree rooted at `tree` back to `before`
/// (`None` = remove the entry). Restoring is idempotent, so recovery may repeat it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undo {
    pub tree: u64,
    pub key: Vec<u8>,
    pub before: Option<Vec<u8>>,
}

impl Undo {
    #[cfg(test)]
    pub fn encode(&self) -> Vec<u8> {
        Undo::encode_parts(self.tree, &self.key, self.before.as_deref())
    }
    /// The encoding of the entry (`tree`, `key`, `before`) without building it first.
    pub fn encode_parts(tree: u64, key: &[u8], before: Option<&[u8]>) -> Vec<u8> {
        let mut v = Vec::with_capacity(16 + key.len() + before.map_or(0, |b| b.len()));
        v.extend_from_slice(&tree.to_le_bytes());
        v.extend_from_slice(&(key.len() as u16).to_le_bytes());
        v.extend_from_slice(key);
        match before {
            None => v.push(0),
            Some(b) => {
                v.push(1);
                v.extend_from_slice(&(b.len() as u32).to_le_bytes());
                v.extend_from_slice(b);
            }
        }
        v
    }
    pub fn decode(b: &[u8]) -> Option<Undo> {
        let mut t = [0u8; 8];
        t.copy_from_slice(b.get(0..8)?);
        let kl = u16::from_le_bytes([*b.get(8)?, *b.get(9)?]) as usize;
        let key = b.get(10..10 + kl)?.to_vec();
        let p = 10 + kl;
        let before = match *b.get(p)? {
            0 => {
                if b.len() != p + 1 {
                    return None;
                }
                None
            }
            1 => {
                let mut l = [0u8; 4];
                l.copy_from_slice(b.get(p + 1..p + 5)?);
                let l = u32::from_le_bytes(l) as usize;
                let v = b.get(p + 5..p + 5 + l)?.to_vec();
                if b.len() != p + 5 + l {
                    return None;
                }
                Some(v)
            }
            _ => return None,
        };
        Some(Undo {
            tree: u64::from_le_bytes(t),
            key,
            before,
        })
    }
}

/// Bytes of one chunk of an [`UndoLog`] (an entry larger than this gets a chunk of its own).
const UNDO_CHUNK: usize = 1 << 20;

/// A running transaction's undo entries, oldest first, kept encoded (`Undo::encode`) and
/// packed into chunks of about 1 MiB: no allocation per entry, and no buffer of the whole
/// log's size that doubles as it grows.
#[derive(Default)]
pub(crate) struct UndoLog {
    chunks: Vec<Vec<u8>>,
    /// Where each entry starts: its chunk's index in the high 32 bits, the offset in it in
    /// the low ones. An entry ends where the next one in its chunk starts, or at the chunk's
    /// end.
    starts: Vec<u64>,
}

impl UndoLog {
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn push(&mut self, entry: &[u8]) {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.len() + entry.len() <= UNDO_CHUNK);
        if !fits {
            // Small to start (most transactions change a few rows); it doubles up to the
            // chunk size at most, as an entry that would pass it starts the next chunk.
            self.chunks.push(Vec::with_capacity(entry.len().max(4096)));
        }
        let ci = self.chunks.len() - 1;
        let c = &mut self.chunks[ci];
        self.starts.push(((ci as u64) << 32) | c.len() as u64);
        c.extend_from_slice(entry);
    }

    /// Forgets the entries from the `n`-th on.
    pub fn truncate(&mut self, n: usize) {
        let Some(&start) = self.starts.get(n) else {
            return;
        };
        let (ci, off) = ((start >> 32) as usize, (start & 0xffff_ffff) as usize);
        self.chunks.truncate(ci + 1);
        self.chunks[ci].truncate(off);
        if off == 0 {
            self.chunks.pop();
        }
        self.starts.truncate(n);
    }

    pub fn clear(&mut self) {
        *self = UndoLog::default();
    }

    /// The encoded entry `i`.
    fn entry(&self, i: usize) -> &[u8] {
        let start = self.starts[i];
        let (ci, off) = ((start >> 32) as usize, (start & 0xffff_ffff) as usize);
        let end = match self.starts.get(i + 1) {
            Some(&next) if (next >> 32) as usize == ci => (next & 0xffff_ffff) as usize,
            _ => self.chunks[ci].len(),
        };
        &self.chunks[ci][off..end]
    }

    /// The entries from the `n`-th on, newest first, decoded (a malformed one is an error).
    pub fn newest_first_from(&self, n: usize) -> impl Iterator<Item = crate::Result<Undo>> + '_ {
        (n.min(self.len())..self.len()).rev().map(|i| {
            Undo::decode(self.entry(i)).ok_or_else(|| {
                crate::Error::Internal("a transaction's undo entry is unreadable".into())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn val() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            (i64::MAX as u64..=u64::MAX).prop_map(Value::from_u64),
            any::<f64>()
                .prop_filter("nan", |d| !d.is_nan())
                .prop_map(Value::Double),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Value::Bytes),
        ]
    }

    proptest! {
        #[test]
        fn rows_round_trip(row in proptest::collection::vec(val(), 0..20), txn in any::<u64>()) {
            let mut b = Vec::new();
            encode_row(&mut b, FLAG_DELETED, txn, &row);
            prop_assert_eq!(header(&b), Some((FLAG_DELETED, txn)));
            prop_assert_eq!(decode_row(&b), Some(row));
        }

        #[test]
        fn masked_decode_keeps_exactly_the_wanted_columns(
            row in proptest::collection::vec(val(), 0..20),
            want in proptest::collection::vec(any::<bool>(), 0..24),
        ) {
            let mut b = Vec::new();
            encode_row(&mut b, 0, 7, &row);
            let got = decode_row_cols(&b, Some(&want)).unwrap();
            prop_assert_eq!(got.len(), row.len());
            for (i, (g, r)) in got.iter().zip(&row).enumerate() {
                if want.get(i).copied().unwrap_or(true) {
                    prop_assert_eq!(g, r);
                } else {
                    prop_assert_eq!(g, &Value::Null);
                }
            }
            // A truncated row fails whatever the mask.
            if b.len() > 11 {
                let cut = &b[..b.len() - 1];
                prop_assert_eq!(decode_row_cols(cut, Some(&want)).is_none(), decode_row(cut).is_none());
            }
        }

        #[test]
        fn row_and_undo_decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = decode_row(&bytes);
            let _ = decode_row_cols(&bytes, Some(&[false, true, false]));
            let _ = decode_row_ext(&bytes, None, &mut Vec::new());
            let _ = Undo::decode(&bytes);
        }

        #[test]
        fn external_values_round_trip_as_references(
            row in proptest::collection::vec(val(), 1..12),
            pick in any::<u16>(),
            id in any::<u64>(),
            len in any::<u32>(),
        ) {
            let ext: Vec<External> = row
                .iter()
                .enumerate()
                .filter(|(i, v)| matches!(v, Value::Bytes(_)) && pick & (1 << (i % 16)) != 0)
                .map(|(i, _)| External { col: i, id: id ^ i as u64, len })
                .collect();
            let mut b = Vec::new();
            encode_row_ext(&mut b, 0, 3, &row, &ext);
            let mut got_ext = Vec::new();
            let got = decode_row_ext(&b, None, &mut got_ext).unwrap();
            prop_assert_eq!(&got_ext, &ext);
            for (i, (g, r)) in got.iter().zip(&row).enumerate() {
                if ext.iter().any(|e| e.col == i) {
                    prop_assert_eq!(g, &Value::Null);
                } else {
                    prop_assert_eq!(g, r);
                }
            }
        }
    }

    #[test]
    fn undo_round_trips() {
        for before in [None, Some(vec![1, 2, 3])] {
            let u = Undo {
                tree: 9,
                key: b"key".to_vec(),
                before,
            };
            assert_eq!(Undo::decode(&u.encode()), Some(u));
        }
    }
    #[derive(Clone, Debug)]
    enum LogOp {
        Push(usize, u8),
        Truncate(usize),
    }

    fn log_op() -> impl Strategy<Value = LogOp> {
        prop_oneof![
            8 => (prop_oneof![0usize..200, 300_000usize..1_200_000], any::<u8>())
                .prop_map(|(n, b)| LogOp::Push(n, b)),
            1 => (0usize..64).prop_map(LogOp::Truncate),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Pushes of small and chunk-sized entries and cuts back to any entry give the same
        /// entries, newest first, as a plain list of them.
        #[test]
        fn the_undo_log_keeps_what_a_list_would(ops in proptest::collection::vec(log_op(), 1..40)) {
            let mut log = UndoLog::default();
            let mut model: Vec<Undo> = Vec::new();
            for op in ops {
                match op {
                    LogOp::Push(n, b) => {
                        let u = Undo {
                            tree: n as u64,
                            key: vec![b; n % 7],
                            before: (n % 3 != 0).then(|| vec![b; n]),
                        };
                        log.push(&u.encode());
                        model.push(u);
                    }
                    LogOp::Truncate(k) => {
                        let n = model.len().saturating_sub(k);
                        log.truncate(n);
                        model.truncate(n);
                    }
                }
                prop_assert_eq!(log.len(), model.len());
            }
            let n = model.len();
            for from in [0, 1.min(n), n / 3, n / 2, n.saturating_sub(1), n] {
                let got: Vec<Undo> = log.newest_first_from(from).map(|u| u.unwrap()).collect();
                let want: Vec<Undo> = model[from..].iter().rev().cloned().collect();
                prop_assert!(got == want, "entries from {} differ", from);
            }
        }
    }
}
