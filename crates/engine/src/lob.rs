//! Long values: a TEXT / BLOB value too big for its row's leaf cell is kept in its table's
//! long-value tree as numbered chunks, and the row holds a reference (id + length, see
//! `rowcodec::External`). Layout in `docs/format.md`, "Long values".
//!
//! A long value is immutable: it is written once, under a fresh id, before the row version
//! that names it, and removed once, by the purge of the transaction that replaced or deleted
//! that version (or by the rollback of the one that wrote it). Its chunks carry no writer or
//! delete-mark: who may see them follows from the row version that names the id. A reader
//! that finds an id's chunks gone read a version that was replaced and purged meanwhile; it
//! reads the row again (`Missing`).
//!
//! Owns: choosing which columns of a row go off the row (`plan`), the chunk keys, reading
//! a long value back, removing one.
//!
//! A value of an index column may go off the row too (an index built over a column after
//! its values went, or a row of many indexed long values): index maintenance and uniqueness
//! checks read those back (`TxnState::with_long_values`, `newest_row`).
//!
//! Must never: reuse an id while a row version may still name it (ids only grow: the
//! table's counter starts past the tree's largest id at open); move a primary key column's
//! value off the row (the row's key is made of it).

use crate::rowcodec::External;
use crate::types::{TableDef, Value};
use crate::Result;
use std::ops::Bound;
use tierdb_btree::{BTree, Modify, Mtr, Store};

/// Bytes of one chunk (the last one of a value may be shorter). Part of the on-disk format.
pub(crate) const CHUNK_BYTES: usize = 4000;

/// Values shorter than this always stay in the row.
const MIN_EXTERNAL: usize = 256;

const _: () = assert!(4 + 12 + CHUNK_BYTES <= tierdb_btree::node::MAX_LEAF_CELL);

/// Key of chunk `seq` of long value `id`: both big-endian, so a value's chunks are adjacent
/// and in order.
pub(crate) fn chunk_key(id: u64, seq: u32) -> [u8; 12] {
    let mut k = [0u8; 12];
    k[..8].copy_from_slice(&id.to_be_bytes());
    k[8..].copy_from_slice(&seq.to_be_bytes());
    k
}

/// The id a chunk key belongs to.
pub(crate) fn id_of(key: &[u8]) -> Option<u64> {
    let b: [u8; 8] = key.get(..8)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// The chunks of `value`, with their sequence numbers.
pub(crate) fn chunks(value: &[u8]) -> impl Iterator<Item = (u32, &[u8])> {
    value
        .chunks(CHUNK_BYTES)
        .enumerate()
        .map(|(i, c)| (i as u32, c))
}

/// Bytes value `v` takes inline in a stored row (NULLs only take their bitmap bit).
pub(crate) fn value_len(v: &Value) -> usize {
    match v {
        Value::Null => 0,
        Value::Int(_) | Value::UInt(_) | Value::Double(_) => 9,
        Value::Bytes(b) => 3 + b.len(),
    }
}

/// The columns of `row` to keep off the row so that its primary-tree cell (key of
/// `key_len` bytes) fits a leaf and every inline value fits its u16 length: the longest
/// eligible values first (Bytes of at least `MIN_EXTERNAL` bytes, not of the primary key).
/// Empty when the row fits as it is; RowTooLarge (its size with every eligible value off the
/// row) when it cannot be made to fit.
pub(crate) fn plan(def: &TableDef, key_len: usize, row: &[Value]) -> Result<Vec<usize>> {
    let width = 11 + row.len().div_ceil(8);
    let mut size: usize = width + row.iter().map(value_len).sum::<usize>();
    let fits = |size: usize| 4 + key_len + size <= tierdb_btree::node::MAX_LEAF_CELL;
    let too_long = |v: &Value| matches!(v, Value::Bytes(b) if b.len() > u16::MAX as usize);
    if fits(size) && !row.iter().any(too_long) {
        return Ok(Vec::new());
    }
    let keyed = |c: usize| def.primary_key.contains(&c);
    let mut cands: Vec<(usize, usize)> = row
        .iter()
        .enumerate()
        .take(def.columns.len())
        .filter_map(|(c, v)| match v {
            Value::Bytes(b) if b.len() >= MIN_EXTERNAL && !keyed(c) => Some((c, b.len())),
            _ => None,
        })
        .collect();
    cands.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut out = Vec::new();
    for (c, len) in cands {
        if fits(size) && len <= u16::MAX as usize {
            break;
        }
        size = size - (3 + len) + crate::rowcodec::EXTERNAL_BYTES;
        out.push(c);
    }
    if !fits(size) || !crate::rowcodec::inline_len_ok(row, &ext_cols(&out)) {
        return Err(too_large(size));
    }
    Ok(out)
}

/// The error for a row of `size` bytes that cannot be stored.
pub(crate) fn too_large(size: usize) -> crate::Error {
    crate::Error::RowTooLarge {
        size,
        max: tierdb_btree::node::MAX_LEAF_CELL,
    }
}

/// The length a reference to long value `b` records (at most 4 GiB - 1, LONGBLOB's limit).
pub(crate) fn length_of(b: &[u8]) -> Result<u32> {
    u32::try_from(b.len()).map_err(|_| crate::Error::RowTooLarge {
        size: b.len(),
        max: u32::MAX as usize,
    })
}

/// Placeholder references for columns `cols` (for length checks before ids exist).
fn ext_cols(cols: &[usize]) -> Vec<External> {
    cols.iter()
        .map(|&col| External { col, id: 0, len: 0 })
        .collect()
}

/// What reading a long value found.
pub(crate) enum Read {
    Found(Vec<u8>),
    /// Its chunks are gone or incomplete: the row version naming it was replaced and purged.
    Missing,
}

/// Reads long value `e` from tree `lob`.
pub(crate) fn read(store: &Store, lob: BTree, e: &External) -> Result<Read> {
    let want = e.len as usize;
    // Grown as chunks arrive beyond the first MiB: a corrupt length must not allocate GiBs.
    let mut out: Vec<u8> = Vec::with_capacity(want.min(1 << 20));
    let mut next_seq = 0u32;
    let mut ok = true;
    let from = chunk_key(e.id, 0);
    lob.scan(store, Bound::Included(&from[..]), |k, v| {
        if id_of(k) != Some(e.id) || k.len() != 12 || k[8..] != next_seq.to_be_bytes() {
            ok = false;
            return false;
        }
        if out.len() + v.len() > want || (v.len() != CHUNK_BYTES && out.len() + v.len() < want) {
            ok = false;
            return false;
        }
        out.extend_from_slice(v);
        next_seq += 1;
        out.len() < want
    })?;
    Ok(if ok && out.len() == want {
        Read::Found(out)
    } else {
        Read::Missing
    })
}

/// The keys of the chunks of long value `id` of `len` bytes.
pub(crate) fn chunk_keys(id: u64, len: u32) -> impl Iterator<Item = [u8; 12]> {
    (0..(len as usize).div_ceil(CHUNK_BYTES) as u32).map(move |seq| chunk_key(id, seq))
}

/// The change that removes a chunk if it is there.
pub(crate) fn delete_present(cur: Option<&[u8]>) -> Modify {
    if cur.is_some() {
        Modify::Delete
    } else {
        Modify::Keep
    }
}

/// Removes the chunks of long value `id` (`len` bytes) from `lob`, one mtr per chunk;
/// chunks already gone are skipped.
pub(crate) fn remove(store: &Store, lob: BTree, id: u64, len: u32) -> Result<()> {
    for k in chunk_keys(id, len) {
        let mut m = Mtr::new(store, 0);
        lob.modify(&mut m, &k, delete_present)?;
        m.commit()?;
    }
    Ok(())
}

/// Writes long value `value` under `id` into `lob` without undo (a tree being filled behind
/// a closed gate, which a failure drops whole).
pub(crate) fn write_unlogged(store: &Store, lob: BTree, id: u64, value: &[u8]) -> Result<()> {
    for (seq, c) in chunks(value) {
        let mut m = Mtr::new(store, 0);
        lob.modify(&mut m, &chunk_key(id, seq), |_| Modify::Put(c.to_vec()))?;
        m.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{ColumnDef, ColumnType, IndexDef};

    fn def() -> TableDef {
        let col = |name: &str, ty: ColumnType| ColumnDef {
            name: name.into(),
            ty,
            nullable: true,
            auto_increment: false,
            default: None,
            fill: None,
            collation: crate::Collation::Binary,
            on_update_now: false,
        };
        TableDef {
            name: "t".into(),
            columns: vec![
                col(
                    "id",
                    ColumnType::Int {
                        bytes: 4,
                        unsigned: false,
                    },
                ),
                col("a", ColumnType::Text(crate::types::LobSize::Long)),
                col("b", ColumnType::Text(crate::types::LobSize::Long)),
                col("c", ColumnType::Text(crate::types::LobSize::Long)),
            ],
            primary_key: vec![0],
            indexes: vec![IndexDef {
                name: "c".into(),
                columns: vec![3],
                unique: false,
            }],
            foreign_keys: vec![],
            checks: vec![],
        }
    }

    #[test]
    fn a_row_that_fits_keeps_every_value() {
        let row = vec![
            Value::Int(1),
            Value::Bytes(vec![1; 3000]),
            Value::Null,
            Value::Null,
        ];
        assert_eq!(plan(&def(), 9, &row).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn the_longest_unindexed_values_go_first_until_the_row_fits() {
        let row = vec![
            Value::Int(1),
            Value::Bytes(vec![1; 3000]),
            Value::Bytes(vec![2; 2000]),
            Value::Bytes(vec![3; 900]),
        ];
        assert_eq!(plan(&def(), 9, &row).unwrap(), vec![1]);
        let row = vec![
            Value::Int(1),
            Value::Bytes(vec![1; 70_000]),
            Value::Bytes(vec![2; 100]),
            Value::Null,
        ];
        assert_eq!(plan(&def(), 9, &row).unwrap(), vec![1]);
    }

    #[test]
    fn short_and_primary_key_values_stay_in_the_row() {
        let row = vec![
            Value::Int(1),
            Value::Bytes(vec![1; 200]),
            Value::Null,
            Value::Bytes(vec![3; 900]),
        ];
        assert_eq!(plan(&def(), 9, &row).unwrap(), Vec::<usize>::new());
        // An indexed value goes off the row when it must.
        let row = vec![
            Value::Int(1),
            Value::Bytes(vec![1; 200]),
            Value::Null,
            Value::Bytes(vec![3; 5000]),
        ];
        assert_eq!(plan(&def(), 9, &row).unwrap(), vec![3]);
        // A primary key column never does: this row cannot be made to fit.
        let mut d = def();
        d.primary_key = vec![3];
        assert!(plan(&d, 9, &row).is_err());
    }

    #[test]
    fn chunk_keys_sort_by_id_then_sequence() {
        assert!(chunk_key(1, 300) < chunk_key(2, 0));
        assert!(chunk_key(7, 1) < chunk_key(7, 256));
        assert_eq!(id_of(&chunk_key(42, 3)), Some(42));
    }
}
