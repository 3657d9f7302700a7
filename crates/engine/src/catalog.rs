//! The persistent catalog: databases and tables, stored as entries of a system B+tree whose
//! root is meta slot `SLOT_CATALOG_ROOT`, changed through logged mtrs (so DDL is crash-safe),
//! and mirrored in memory for lookups. Entry layouts are in `docs/format.md` ("Catalog").
//!
//! Must never: panic on a malformed catalog entry (decoding errors become `Error::Corrupt`).

use crate::collation::Collation;
use crate::keys::encode_key;
use crate::types::{
    CheckDef, ColumnDef, ColumnType, FkAction, ForeignKeyDef, IndexDef, LobSize, TableDef, Value,
    ViewDef,
};
use crate::{Error, Result};
use tierdb_page::PageId;

pub const SLOT_CATALOG_ROOT: usize = 0;
pub const SLOT_NEXT_TABLE_ID: usize = 1;
/// At least the next transaction id, as of the last checkpoint: ids must keep growing across
/// restarts, since rows name their writers and read views compare ids.
pub const SLOT_NEXT_TXN_ID: usize = 2;

pub fn db_key(db: &str) -> Vec<u8> {
    encode_key(&[Value::Bytes(db.as_bytes().to_vec())])
}
pub fn table_key(db: &str, table: &str) -> Vec<u8> {
    encode_key(&[
        Value::Bytes(db.as_bytes().to_vec()),
        Value::Bytes(table.as_bytes().to_vec()),
    ])
}

/// A table's catalog entry: its id, tree roots and definition.
#[derive(Clone, Debug, PartialEq)]
pub struct TableEntry {
    pub id: u64,
    pub primary_root: PageId,
    pub index_roots: Vec<PageId>,
    /// The long-value tree (`crate::lob`); None for a table created before they existed.
    pub lob_root: Option<PageId>,
    pub def: TableDef,
}

struct W(Vec<u8>);
impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v)
    }
    fn u16(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u16).to_le_bytes())
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn str(&mut self, s: &str) {
        self.u16(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct R<'a>(&'a [u8]);
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.0.len() < n {
            return Err(Error::Corrupt("catalog entry truncated".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<usize> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]) as usize)
    }
    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn str(&mut self) -> Result<String> {
        let n = self.u16()?;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| Error::Corrupt("catalog name is not UTF-8".into()))
    }
}

fn put_type(w: &mut W, t: &ColumnType) {
    match t {
        ColumnType::Int { bytes, unsigned } => {
            w.u8(1);
            w.u8(*bytes);
            w.u8(*unsigned as u8);
        }
        ColumnType::Float => w.u8(2),
        ColumnType::Double => w.u8(3),
        ColumnType::Decimal {
            precision,
            scale,
            unsigned,
        } => {
            w.u8(4);
            // UNSIGNED in the precision byte's top bit (precisions stop at 65; catalogs
            // written before it existed read as signed).
            w.u8(*precision | if *unsigned { 0x80 } else { 0 });
            w.u8(*scale);
        }
        ColumnType::Char(n) => {
            w.u8(5);
            w.u32(*n);
        }
        ColumnType::VarChar(n) => {
            w.u8(6);
            w.u32(*n);
        }
        ColumnType::Text(LobSize::Regular) => w.u8(7),
        ColumnType::Blob(LobSize::Regular) => w.u8(8),
        ColumnType::Text(s) => {
            w.u8(13);
            w.u8(lob_size_tag(*s));
        }
        ColumnType::Blob(s) => {
            w.u8(14);
            w.u8(lob_size_tag(*s));
        }
        ColumnType::Binary(n) => {
            w.u8(15);
            w.u32(*n);
        }
        ColumnType::VarBinary(n) => {
            w.u8(16);
            w.u32(*n);
        }
        ColumnType::Date => w.u8(9),
        // Without fractional seconds as before they existed; with them, a tag of their own.
        ColumnType::DateTime(0) => w.u8(10),
        ColumnType::Timestamp(0) => w.u8(11),
        ColumnType::DateTime(fsp) => {
            w.u8(17);
            w.u8(*fsp);
        }
        ColumnType::Timestamp(fsp) => {
            w.u8(18);
            w.u8(*fsp);
        }
        ColumnType::Year => w.u8(19),
        ColumnType::Bit(n) => {
            w.u8(21);
            w.u8(*n);
        }
        ColumnType::Time(fsp) => {
            w.u8(20);
            w.u8(*fsp);
        }
        ColumnType::Set(members) => {
            w.u8(22);
            w.u16(members.len());
            for m in members {
                w.str(m);
            }
        }
        ColumnType::Enum(members) => {
            w.u8(12);
            w.u16(members.len());
            for m in members {
                w.str(m);
            }
        }
    }
}

fn lob_size_tag(s: LobSize) -> u8 {
    match s {
        LobSize::Tiny => 0,
        LobSize::Regular => 1,
        LobSize::Medium => 2,
        LobSize::Long => 3,
    }
}

fn get_lob_size(r: &mut R) -> Result<LobSize> {
    Ok(match r.u8()? {
        0 => LobSize::Tiny,
        1 => LobSize::Regular,
        2 => LobSize::Medium,
        3 => LobSize::Long,
        t => {
            return Err(Error::Corrupt(format!(
                "unknown TEXT / BLOB size {t} in catalog"
            )))
        }
    })
}

/// Fractional-second digits of a DATETIME / TIMESTAMP (1..=6).
fn fsp(r: &mut R) -> Result<u8> {
    match r.u8()? {
        n @ 1..=6 => Ok(n),
        n => Err(Error::Corrupt(format!(
            "fractional-second precision {n} in catalog"
        ))),
    }
}

fn get_type(r: &mut R) -> Result<ColumnType> {
    Ok(match r.u8()? {
        1 => ColumnType::Int {
            bytes: r.u8()?,
            unsigned: r.u8()? != 0,
        },
        2 => ColumnType::Float,
        3 => ColumnType::Double,
        4 => {
            let p = r.u8()?;
            ColumnType::Decimal {
                precision: p & 0x7F,
                scale: r.u8()?,
                unsigned: p & 0x80 != 0,
            }
        }
        5 => ColumnType::Char(r.u32()?),
        6 => ColumnType::VarChar(r.u32()?),
        7 => ColumnType::Text(LobSize::Regular),
        8 => ColumnType::Blob(LobSize::Regular),
        13 => ColumnType::Text(get_lob_size(r)?),
        14 => ColumnType::Blob(get_lob_size(r)?),
        15 => ColumnType::Binary(r.u32()?),
        16 => ColumnType::VarBinary(r.u32()?),
        9 => ColumnType::Date,
        10 => ColumnType::DateTime(0),
        11 => ColumnType::Timestamp(0),
        17 => ColumnType::DateTime(fsp(r)?),
        18 => ColumnType::Timestamp(fsp(r)?),
        19 => ColumnType::Year,
        22 => {
            let n = r.u16()?;
            if !(1..=64).contains(&n) {
                return Err(Error::Corrupt(format!("SET of {n} members in catalog")));
            }
            ColumnType::Set((0..n).map(|_| r.str()).collect::<Result<Vec<_>>>()?)
        }
        21 => ColumnType::Bit(match r.u8()? {
            n @ 1..=64 => n,
            n => return Err(Error::Corrupt(format!("BIT width {n} in catalog"))),
        }),
        20 => ColumnType::Time(match r.u8()? {
            n @ 0..=6 => n,
            n => {
                return Err(Error::Corrupt(format!(
                    "fractional-second precision {n} in catalog"
                )))
            }
        }),
        12 => {
            let n = r.u16()?;
            ColumnType::Enum((0..n).map(|_| r.str()).collect::<Result<Vec<_>>>()?)
        }
        t => {
            return Err(Error::Corrupt(format!(
                "unknown column type tag {t} in catalog"
            )))
        }
    })
}

fn put_value(w: &mut W, v: &Value) {
    match v {
        Value::Null => w.u8(0),
        Value::Int(i) => {
            w.u8(1);
            w.u64(*i as u64);
        }
        Value::Double(d) => {
            w.u8(2);
            w.u64(d.to_bits());
        }
        Value::UInt(u) => {
            w.u8(4);
            w.u64(*u);
        }
        Value::Bytes(b) => {
            w.u8(3);
            w.u32(b.len() as u32);
            w.0.extend_from_slice(b);
        }
    }
}

fn get_value(r: &mut R) -> Result<Value> {
    Ok(match r.u8()? {
        0 => Value::Null,
        1 => Value::Int(r.u64()? as i64),
        2 => Value::Double(f64::from_bits(r.u64()?)),
        4 => Value::from_u64(r.u64()?),
        3 => {
            let n = r.u32()? as usize;
            Value::Bytes(r.take(n)?.to_vec())
        }
        t => return Err(Error::Corrupt(format!("unknown value tag {t} in catalog"))),
    })
}

/// Key of a dropped tree waiting for its pages to be freed: a first component no database
/// name can have (identifiers cannot contain NUL), then the root page id.
pub fn dropped_key(root: PageId) -> Vec<u8> {
    encode_key(&[
        Value::Bytes(vec![0]),
        Value::Bytes(root.0.to_be_bytes().to_vec()),
    ])
}

/// Value of a dropped tree's entry: `G` + root page id (u64 LE).
pub fn encode_dropped(root: PageId) -> Vec<u8> {
    let mut w = W(vec![b'G']);
    w.u64(root.0);
    w.0
}

pub fn decode_dropped(b: &[u8]) -> Result<PageId> {
    let mut r = R(b);
    if r.u8()? != b'G' {
        return Err(Error::Corrupt("dropped-tree entry kind".into()));
    }
    Ok(PageId(r.u64()?))
}

/// Bytes of a view's value per catalog entry: the first piece is the value of the view's
/// `table_key` entry, the others go to `view_part_key` entries (a long query does not fit one
/// B+tree cell).
pub const VIEW_PIECE: usize = 3000;

/// Key of piece `i` (1, 2, ...) of view `db`.`name`'s value: a first component no database
/// name can have (byte 01), then the names and the piece number.
pub fn view_part_key(db: &str, name: &str, i: usize) -> Vec<u8> {
    encode_key(&[
        Value::Bytes(vec![1]),
        Value::Bytes(db.as_bytes().to_vec()),
        Value::Bytes(name.as_bytes().to_vec()),
        Value::Bytes((i as u16).to_be_bytes().to_vec()),
    ])
}

/// A view's catalog entries: (key, value) for its `table_key` entry and each further piece
/// (`"P"` + the next `VIEW_PIECE` bytes of the value).
pub fn view_entries(db: &str, v: &ViewDef) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut w = W(vec![b'V']);
    w.str(&v.name);
    w.u32(v.query.len() as u32);
    w.0.extend_from_slice(v.query.as_bytes());
    for s in [
        &v.algorithm,
        &v.definer,
        &v.security,
        &v.check_option,
        &v.charset_client,
        &v.collation_connection,
    ] {
        w.str(s);
    }
    w.0.chunks(VIEW_PIECE)
        .enumerate()
        .map(|(i, piece)| {
            if i == 0 {
                (table_key(db, &v.name), piece.to_vec())
            } else {
                let mut val = vec![b'P'];
                val.extend_from_slice(piece);
                (view_part_key(db, &v.name, i), val)
            }
        })
        .collect()
}

/// The view whose value is `first` (its `table_key` entry, starting with `"V"`) followed by
/// `rest` (its pieces' values, in order, each starting with `"P"`).
pub fn decode_view(first: &[u8], rest: &[&[u8]]) -> Result<ViewDef> {
    let mut b = first.to_vec();
    for p in rest {
        match p.split_first() {
            Some((b'P', piece)) => b.extend_from_slice(piece),
            _ => return Err(Error::Corrupt("view piece entry kind".into())),
        }
    }
    let mut r = R(&b);
    if r.u8()? != b'V' {
        return Err(Error::Corrupt("catalog entry is not a view".into()));
    }
    let name = r.str()?;
    let n = r.u32()? as usize;
    let query = String::from_utf8(r.take(n)?.to_vec())
        .map_err(|_| Error::Corrupt("view query is not UTF-8".into()))?;
    let v = ViewDef {
        name,
        query,
        algorithm: r.str()?,
        definer: r.str()?,
        security: r.str()?,
        check_option: r.str()?,
        charset_client: r.str()?,
        collation_connection: r.str()?,
    };
    if !r.0.is_empty() {
        return Err(Error::Corrupt("trailing bytes after a view entry".into()));
    }
    Ok(v)
}

/// Account entries (the SQL layer's accounts and grants, opaque here): key
/// `enc([bytes 02, part, ...])` — no database name starts with byte 02 —, value `"A"` + the
/// layer's bytes. Parts and value are limited so that an entry fits a B+tree cell.
pub fn account_entry(
    parts: &[Vec<u8>],
    value: Option<&[u8]>,
) -> Result<(Vec<u8>, Option<Vec<u8>>)> {
    let size: usize =
        parts.iter().map(|p| p.len() + 2).sum::<usize>() + value.map_or(0, <[u8]>::len);
    if parts.is_empty() || size > ACCOUNT_ENTRY_MAX {
        return Err(Error::Internal(format!(
            "account entry of {size} bytes (at most {ACCOUNT_ENTRY_MAX})"
        )));
    }
    let mut key = vec![Value::Bytes(vec![2])];
    key.extend(parts.iter().map(|p| Value::Bytes(p.clone())));
    let value = value.map(|v| {
        let mut out = vec![b'A'];
        out.extend_from_slice(v);
        out
    });
    Ok((encode_key(&key), value))
}

/// Bytes of an account entry's key parts and value together, at most.
pub const ACCOUNT_ENTRY_MAX: usize = 2000;

/// The key parts (after the leading 02) and value (after `"A"`) of an account entry whose
/// decoded key is `parts`.
pub fn decode_account(parts: &[Value], value: &[u8]) -> Result<(Vec<Vec<u8>>, Vec<u8>)> {
    let bad = || Error::Corrupt("account entry key".into());
    let (first, rest) = parts.split_first().ok_or_else(bad)?;
    if *first != Value::Bytes(vec![2]) || rest.is_empty() {
        return Err(bad());
    }
    let key = rest
        .iter()
        .map(|p| match p {
            Value::Bytes(b) => Ok(b.clone()),
            _ => Err(bad()),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((key, value[1..].to_vec()))
}

pub fn encode_db() -> Vec<u8> {
    vec![b'D']
}

pub fn encode_table(e: &TableEntry) -> Vec<u8> {
    // 'L': a table with a long-value tree, whose root follows the primary root; 'T': one
    // without (written before long values existed).
    let mut w = W(vec![if e.lob_root.is_some() { b'L' } else { b'T' }]);
    w.u64(e.id);
    w.u64(e.primary_root.0);
    if let Some(l) = e.lob_root {
        w.u64(l.0);
    }
    w.u16(e.index_roots.len());
    for r in &e.index_roots {
        w.u64(r.0);
    }
    let d = &e.def;
    w.str(&d.name);
    w.u16(d.columns.len());
    for c in &d.columns {
        w.str(&c.name);
        put_type(&mut w, &c.ty);
        w.u8(c.nullable as u8
            | (c.auto_increment as u8) << 1
            | (c.fill.is_some() as u8) << 2
            | ((c.collation == Collation::GeneralCi) as u8) << 3
            | (c.on_update_now as u8) << 4);
        match &c.default {
            None => w.u8(0),
            Some(v) => {
                w.u8(1);
                put_value(&mut w, v);
            }
        }
        if let Some(f) = &c.fill {
            put_value(&mut w, f);
        }
    }
    w.u16(d.primary_key.len());
    for &p in &d.primary_key {
        w.u16(p);
    }
    w.u16(d.indexes.len());
    for i in &d.indexes {
        w.str(&i.name);
        w.u8(i.unique as u8);
        w.u16(i.columns.len());
        for &c in &i.columns {
            w.u16(c);
        }
    }
    // Foreign keys, then CHECK constraints: trailing sections (entries written before they
    // existed end here; an entry with checks but no foreign key has a zero count before them).
    if !d.foreign_keys.is_empty() || !d.checks.is_empty() {
        w.u16(d.foreign_keys.len());
        for f in &d.foreign_keys {
            w.str(&f.name);
            w.u16(f.columns.len());
            for &c in &f.columns {
                w.u16(c);
            }
            w.str(&f.parent_db);
            w.str(&f.parent_table);
            w.u16(f.parent_columns.len());
            for c in &f.parent_columns {
                w.str(c);
            }
            w.u8(action_tag(f.on_delete));
            w.u8(action_tag(f.on_update));
        }
    }
    if !d.checks.is_empty() {
        w.u16(d.checks.len());
        for c in &d.checks {
            w.str(&c.name);
            w.u8(c.column_level as u8);
            w.str(&c.expr);
        }
    }
    w.0
}

fn action_tag(a: FkAction) -> u8 {
    match a {
        FkAction::Restrict => 0,
        FkAction::NoAction => 1,
        FkAction::Cascade => 2,
        FkAction::SetNull => 3,
    }
}

fn get_action(r: &mut R) -> Result<FkAction> {
    Ok(match r.u8()? {
        0 => FkAction::Restrict,
        1 => FkAction::NoAction,
        2 => FkAction::Cascade,
        3 => FkAction::SetNull,
        t => {
            return Err(Error::Corrupt(format!(
                "unknown foreign key action {t} in catalog"
            )))
        }
    })
}

fn get_foreign_key(r: &mut R) -> Result<ForeignKeyDef> {
    let name = r.str()?;
    let n = r.u16()?;
    let columns = (0..n).map(|_| r.u16()).collect::<Result<Vec<_>>>()?;
    let parent_db = r.str()?;
    let parent_table = r.str()?;
    let n = r.u16()?;
    let parent_columns = (0..n).map(|_| r.str()).collect::<Result<Vec<_>>>()?;
    Ok(ForeignKeyDef {
        name,
        columns,
        parent_db,
        parent_table,
        parent_columns,
        on_delete: get_action(r)?,
        on_update: get_action(r)?,
    })
}

pub fn decode_table(b: &[u8]) -> Result<TableEntry> {
    let mut r = R(b);
    let tag = r.u8()?;
    if tag != b'T' && tag != b'L' {
        return Err(Error::Corrupt("catalog entry is not a table".into()));
    }
    let id = r.u64()?;
    let primary_root = PageId(r.u64()?);
    let lob_root = if tag == b'L' {
        Some(PageId(r.u64()?))
    } else {
        None
    };
    let n = r.u16()?;
    let index_roots = (0..n)
        .map(|_| r.u64().map(PageId))
        .collect::<Result<Vec<_>>>()?;
    let name = r.str()?;
    let nc = r.u16()?;
    let mut columns = Vec::with_capacity(nc);
    for _ in 0..nc {
        let cname = r.str()?;
        let ty = get_type(&mut r)?;
        let fl = r.u8()?;
        let default = match r.u8()? {
            0 => None,
            _ => Some(get_value(&mut r)?),
        };
        let fill = if fl & 4 != 0 {
            Some(get_value(&mut r)?)
        } else {
            None
        };
        columns.push(ColumnDef {
            name: cname,
            ty,
            nullable: fl & 1 != 0,
            auto_increment: fl & 2 != 0,
            default,
            fill,
            collation: if fl & 8 != 0 {
                Collation::GeneralCi
            } else {
                Collation::Binary
            },
            on_update_now: fl & 16 != 0,
        });
    }
    let np = r.u16()?;
    let primary_key = (0..np).map(|_| r.u16()).collect::<Result<Vec<_>>>()?;
    let ni = r.u16()?;
    let mut indexes = Vec::with_capacity(ni);
    for _ in 0..ni {
        let iname = r.str()?;
        let unique = r.u8()? != 0;
        let k = r.u16()?;
        let cols = (0..k).map(|_| r.u16()).collect::<Result<Vec<_>>>()?;
        indexes.push(IndexDef {
            name: iname,
            columns: cols,
            unique,
        });
    }
    let mut foreign_keys = Vec::new();
    let mut checks_follow = false;
    if !r.0.is_empty() {
        let n = r.u16()?;
        for _ in 0..n {
            foreign_keys.push(get_foreign_key(&mut r)?);
        }
        // A zero count is only written in front of checks.
        checks_follow = n == 0;
    }
    if checks_follow && r.0.is_empty() {
        return Err(Error::Corrupt(format!(
            "catalog entry of table {name} ends before its CHECK constraints"
        )));
    }
    let mut checks = Vec::new();
    if !r.0.is_empty() {
        let n = r.u16()?;
        for _ in 0..n {
            let name = r.str()?;
            let column_level = r.u8()? != 0;
            let expr = r.str()?;
            checks.push(CheckDef {
                name,
                column_level,
                expr,
            });
        }
    }
    let def = TableDef {
        name,
        columns,
        primary_key,
        indexes,
        foreign_keys,
        checks,
    };
    if def
        .primary_key
        .iter()
        .chain(def.indexes.iter().flat_map(|i| i.columns.iter()))
        .chain(def.foreign_keys.iter().flat_map(|f| f.columns.iter()))
        .any(|&c| c >= def.columns.len())
        || def.indexes.len() != index_roots.len()
        || def
            .foreign_keys
            .iter()
            .any(|f| f.columns.is_empty() || f.columns.len() != f.parent_columns.len())
        || !r.0.is_empty()
    {
        return Err(Error::Corrupt(format!(
            "catalog entry of table {} is inconsistent",
            def.name
        )));
    }
    Ok(TableEntry {
        id,
        primary_root,
        index_roots,
        lob_root,
        def,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_entry_round_trips() {
        let def = TableDef {
            name: "sbtest1".into(),
            columns: vec![
                ColumnDef {
                    name: "id".into(),
                    ty: ColumnType::Int {
                        bytes: 4,
                        unsigned: false,
                    },
                    nullable: false,
                    auto_increment: true,
                    default: None,
                    fill: None,
                    collation: Collation::Binary,
                    on_update_now: false,
                },
                ColumnDef {
                    name: "c".into(),
                    ty: ColumnType::Char(120),
                    nullable: false,
                    auto_increment: false,
                    default: Some(Value::Bytes(vec![])),
                    fill: None,
                    collation: Collation::Binary,
                    on_update_now: false,
                },
                ColumnDef {
                    name: "size".into(),
                    ty: ColumnType::Enum(vec!["small".into(), "large".into()]),
                    nullable: false,
                    auto_increment: false,
                    default: Some(Value::Bytes(b"small".to_vec())),
                    fill: None,
                    collation: Collation::GeneralCi,
                    on_update_now: false,
                },
                ColumnDef {
                    name: "changed_at".into(),
                    ty: ColumnType::Timestamp(0),
                    nullable: true,
                    auto_increment: false,
                    default: None,
                    fill: None,
                    collation: Collation::Binary,
                    on_update_now: true,
                },
            ],
            primary_key: vec![0],
            indexes: vec![IndexDef {
                name: "k_1".into(),
                columns: vec![1],
                unique: false,
            }],
            foreign_keys: vec![ForeignKeyDef {
                name: "sbtest1_ibfk_1".into(),
                columns: vec![1],
                parent_db: "sbtest".into(),
                parent_table: "codes".into(),
                parent_columns: vec!["code".into()],
                on_delete: FkAction::Cascade,
                on_update: FkAction::SetNull,
            }],
            checks: Vec::new(),
        };
        let e = TableEntry {
            id: 7,
            primary_root: PageId(3),
            index_roots: vec![PageId(9)],
            lob_root: None,
            def,
        };
        assert_eq!(decode_table(&encode_table(&e)).unwrap(), e);
        // With a long-value tree: tagged 'L', its root after the primary root.
        let mut with_lob = e.clone();
        with_lob.lob_root = Some(PageId(11));
        let b = encode_table(&with_lob);
        assert_eq!(b[0], b'L');
        assert_eq!(decode_table(&b).unwrap(), with_lob);
        // An entry written before foreign keys existed ends after the indexes: still valid.
        let mut old = e.clone();
        old.def.foreign_keys.clear();
        let old_len = encode_table(&old).len();
        for cut in 0..encode_table(&e).len() {
            match decode_table(&encode_table(&e)[..cut]) {
                Ok(d) => assert!(cut == old_len && d == old, "cut {cut} decoded"),
                Err(_) => assert_ne!(cut, old_len),
            }
        }
    }

    #[test]
    fn every_column_type_round_trips() {
        let types = vec![
            ColumnType::Int {
                bytes: 3,
                unsigned: true,
            },
            ColumnType::Float,
            ColumnType::Double,
            ColumnType::Decimal {
                precision: 12,
                scale: 4,
                unsigned: false,
            },
            ColumnType::Decimal {
                precision: 65,
                scale: 30,
                unsigned: true,
            },
            ColumnType::Char(3),
            ColumnType::VarChar(16383),
            ColumnType::Text(LobSize::Tiny),
            ColumnType::Text(LobSize::Regular),
            ColumnType::Text(LobSize::Long),
            ColumnType::Blob(LobSize::Regular),
            ColumnType::Blob(LobSize::Medium),
            ColumnType::Binary(16),
            ColumnType::Binary(0),
            ColumnType::VarBinary(65_532),
            ColumnType::Date,
            ColumnType::DateTime(0),
            ColumnType::Timestamp(0),
            ColumnType::DateTime(6),
            ColumnType::Timestamp(3),
            ColumnType::Year,
            ColumnType::Time(0),
            ColumnType::Time(6),
            ColumnType::Bit(1),
            ColumnType::Bit(64),
            ColumnType::Set(vec!["x".into(), "y".into()]),
            ColumnType::Enum(vec!["a".into(), "b".into()]),
        ];
        let columns = types
            .into_iter()
            .enumerate()
            .map(|(i, ty)| ColumnDef {
                name: format!("c{i}"),
                ty,
                nullable: i > 0,
                auto_increment: false,
                default: None,
                fill: None,
                collation: Collation::Binary,
                on_update_now: false,
            })
            .collect();
        let e = TableEntry {
            id: 3,
            primary_root: PageId(4),
            index_roots: vec![],
            lob_root: Some(PageId(5)),
            def: TableDef {
                name: "all_types".into(),
                columns,
                primary_key: vec![0],
                indexes: vec![],
                foreign_keys: Vec::new(),
                checks: Vec::new(),
            },
        };
        assert_eq!(decode_table(&encode_table(&e)).unwrap(), e);
    }

    #[test]
    fn check_constraints_round_trip_with_and_without_foreign_keys() {
        let def = TableDef {
            name: "o".into(),
            columns: vec![ColumnDef {
                name: "qty".into(),
                ty: ColumnType::Int {
                    bytes: 4,
                    unsigned: false,
                },
                nullable: true,
                auto_increment: false,
                default: None,
                fill: None,
                collation: Collation::Binary,
                on_update_now: false,
            }],
            primary_key: Vec::new(),
            indexes: Vec::new(),
            foreign_keys: Vec::new(),
            checks: vec![
                CheckDef {
                    name: "qty".into(),
                    column_level: true,
                    expr: "`qty` >= 0".into(),
                },
                CheckDef {
                    name: "CONSTRAINT_1".into(),
                    column_level: false,
                    expr: "`qty` < 1000 or `qty` is null".into(),
                },
            ],
        };
        let e = TableEntry {
            id: 3,
            primary_root: PageId(5),
            index_roots: Vec::new(),
            lob_root: None,
            def,
        };
        // No foreign key: a zero count comes before the checks.
        assert_eq!(decode_table(&encode_table(&e)).unwrap(), e);
        let mut with_fk = e.clone();
        with_fk.def.foreign_keys.push(ForeignKeyDef {
            name: "o_ibfk_1".into(),
            columns: vec![0],
            parent_db: "shop".into(),
            parent_table: "p".into(),
            parent_columns: vec!["id".into()],
            on_delete: FkAction::Restrict,
            on_update: FkAction::Restrict,
        });
        assert_eq!(decode_table(&encode_table(&with_fk)).unwrap(), with_fk);
        // A cut inside the checks is corruption, never fewer checks.
        let full = encode_table(&e);
        let mut bare = e.clone();
        bare.def.checks.clear();
        let bare_len = encode_table(&bare).len();
        for cut in bare_len + 1..full.len() {
            assert!(decode_table(&full[..cut]).is_err(), "cut {cut} decoded");
        }
    }

    #[test]
    fn long_view_entry_splits_into_pieces_and_round_trips() {
        let v = ViewDef {
            name: "report".into(),
            query: format!(
                "SELECT {} FROM t",
                "a + 1 AS `x`, ".repeat(700) + "b AS `y`"
            ),
            algorithm: "UNDEFINED".into(),
            definer: "root@localhost".into(),
            security: "DEFINER".into(),
            check_option: "NONE".into(),
            charset_client: "utf8mb4".into(),
            collation_connection: "utf8mb4_general_ci".into(),
        };
        let entries = view_entries("shop", &v);
        assert!(entries.len() >= 4, "{} entries", entries.len());
        assert_eq!(entries[0].0, table_key("shop", "report"));
        for (k, val) in &entries {
            assert!(k.len() <= 1024 && val.len() <= VIEW_PIECE + 1);
        }
        let rest: Vec<&[u8]> = entries[1..].iter().map(|(_, v)| v.as_slice()).collect();
        assert_eq!(decode_view(&entries[0].1, &rest).unwrap(), v);
        // A missing piece is corruption, never a shorter view.
        assert!(decode_view(&entries[0].1, &rest[..rest.len() - 1]).is_err());
        // A short view is one entry.
        let short = ViewDef {
            query: "SELECT 1 AS `1`".into(),
            ..v
        };
        let one = view_entries("shop", &short);
        assert_eq!(one.len(), 1);
        assert_eq!(decode_view(&one[0].1, &[]).unwrap(), short);
    }
}
