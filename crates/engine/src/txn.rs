//! Transactions as a session sees them: reads (point, primary range, secondary range),
//! writes with row locks, undo, commit (group-committed redo) and rollback.
//!
//! Write protocol for one row change: take the row lock (held to the end) → one mtr on the
//! primary tree carrying the undo entry as its logical part → the before-image is recorded in
//! the active-transaction table before the leaf latch is released → one mtr per changed
//! secondary entry. Deletes only delete-mark the row and keep old secondary entries; both are
//! removed physically after the commit record (purge), while the row lock is still held.
//!
//! Must never: change a row without holding its lock; release locks before the commit or
//! rollback record is appended; return a version written by another active transaction.

use crate::inner::Inner;
use crate::keys::{decode_key, encode_key, lower_bound, upper_bound};
use crate::rowcodec::{decode_row, encode_row, header, with_header, Undo, FLAG_DELETED};
use crate::txns::{ActiveTxn, Visible};
use crate::types::{IndexDef, Row, TableDef, Value};
use crate::{Error, Result, Table};
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tierdb_btree::{BTree, Modify, Mtr};
use tierdb_txn::{LockError, LockKey};

enum Purge {
    /// Remove the delete-marked primary entry.
    Row { tree: BTree, key: Vec<u8> },
    /// Remove secondary entry `skey` of index `index` unless the row (primary key `pk`) now
    /// maps to it again.
    Sec {
        table: Arc<Table>,
        index: usize,
        skey: Vec<u8>,
        pk: Vec<u8>,
    },
}

pub(crate) struct TxnState {
    pub inner: Arc<Inner>,
    active: Option<Arc<ActiveTxn>>,
    undo: Vec<Undo>,
    locks: Vec<LockKey>,
    purge: Vec<Purge>,
}

pub(crate) fn index_key(def: &TableDef, idx: &IndexDef, row: &[Value]) -> Vec<u8> {
    let mut vals: Vec<Value> = idx.columns.iter().map(|&c| row[c].clone()).collect();
    vals.extend(def.primary_key.iter().map(|&c| row[c].clone()));
    encode_key(&vals)
}

fn pk_values(def: &TableDef, row: &[Value]) -> Vec<Value> {
    def.primary_key.iter().map(|&c| row[c].clone()).collect()
}

fn corrupt(t: &Table) -> Error {
    Error::Corrupt(format!("undecodable row in table {}.{}", t.db, t.def.name))
}

/// The version of row `key` of `t` that transaction `me` sees.
fn read_row(inner: &Inner, me: u64, t: &Table, key: &[u8]) -> Result<Option<Row>> {
    let r = t.primary.get(&inner.store, key, |v| match v {
        None => Ok(None),
        Some(stored) => visible_row(inner, me, t.primary.root.0, key, stored),
    })?;
    r.map_err(|_| corrupt(t))
}

/// Decodes the version of `stored` visible to `me`.
fn visible_row(
    inner: &Inner,
    me: u64,
    tree: u64,
    key: &[u8],
    stored: &[u8],
) -> std::result::Result<Option<Row>, ()> {
    match inner.active.visible(me, tree, key, stored) {
        Visible::None => Ok(None),
        Visible::Stored(b) => decode_row(b).map(Some).ok_or(()),
        Visible::Owned(b) => decode_row(&b).map(Some).ok_or(()),
        Visible::Corrupt => Err(()),
    }
}

impl TxnState {
    pub fn new(inner: Arc<Inner>) -> TxnState {
        TxnState {
            inner,
            active: None,
            undo: Vec::new(),
            locks: Vec::new(),
            purge: Vec::new(),
        }
    }

    fn id(&self) -> u64 {
        self.active.as_ref().map_or(0, |a| a.id)
    }

    pub fn has_writes(&self) -> bool {
        self.active.is_some()
    }

    fn ensure_active(&mut self) -> Result<Arc<ActiveTxn>> {
        if self.inner.closed.load(Ordering::Relaxed) {
            return Err(Error::Io("the engine is shut down".into()));
        }
        if let Some(a) = &self.active {
            return Ok(a.clone());
        }
        let a = self.inner.active.begin(self.inner.store.wal.end_lsn().0);
        self.active = Some(a.clone());
        Ok(a)
    }

    fn lock(&mut self, t: &Table, key: &[u8]) -> Result<()> {
        let id = self.ensure_active()?.id;
        let lk = LockKey {
            table: t.id,
            key: key.to_vec(),
        };
        let timeout =
            Duration::from_millis(self.inner.lock_wait_timeout_ms.load(Ordering::Relaxed));
        match self.inner.locks.lock(id, &lk, timeout) {
            Ok(true) => {
                self.locks.push(lk);
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(LockError::Deadlock) => Err(Error::Deadlock),
            Err(_) => Err(Error::LockWaitTimeout),
        }
    }

    /// One logged change of one entry; records undo and the before-image.
    fn change(
        &mut self,
        tree: BTree,
        key: &[u8],
        decide: impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Vec<u8>>> {
        let a = self.ensure_active()?;
        let mut m = Mtr::new(&self.inner.store, a.id);
        let mut decide = decide;
        let mut changed = false;
        let old = tree.modify(&mut m, key, |cur| {
            let d = decide(cur);
            changed = d != Modify::Keep;
            d
        })?;
        if changed {
            let u = Undo {
                tree: tree.root.0,
                key: key.to_vec(),
                before: old.clone(),
            };
            m.set_logical(u.encode());
            a.record_before(tree.root.0, key, old.as_deref());
            self.undo.push(u);
        }
        m.commit()?;
        Ok(old)
    }

    pub fn get(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        let key = encode_key(pk);
        self.get_key(t, &key)
    }

    /// Locking read: takes the row lock (held to the end of the transaction), then reads the
    /// newest version — committed or this transaction's own. The base of read-modify-write.
    pub fn lock_row(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        let key = encode_key(pk);
        self.lock(t, &key)?;
        self.get_key(t, &key)
    }

    fn get_key(&self, t: &Table, key: &[u8]) -> Result<Option<Row>> {
        self.inner
            .counters
            .rows_read
            .fetch_add(1, Ordering::Relaxed);
        read_row(&self.inner, self.id(), t, key)
    }

    pub fn insert(&mut self, t: &Table, mut row: Row) -> Result<Option<i64>> {
        if row.len() != t.def.columns.len() {
            return Err(Error::Internal(format!(
                "insert of {} values into {} columns",
                row.len(),
                t.def.columns.len()
            )));
        }
        let mut assigned = None;
        for (i, c) in t.def.columns.iter().enumerate() {
            if c.auto_increment {
                match row[i] {
                    Value::Null | Value::Int(0) => {
                        let v = t.auto_inc.fetch_add(1, Ordering::Relaxed) + 1;
                        row[i] = Value::Int(v);
                        assigned = Some(v);
                    }
                    Value::Int(v) => {
                        t.auto_inc.fetch_max(v, Ordering::Relaxed);
                    }
                    _ => {}
                }
            }
            if row[i].is_null() && !c.nullable {
                return Err(Error::NotNull(c.name.clone()));
            }
        }
        let pk = pk_values(&t.def, &row);
        let key = encode_key(&pk);
        self.lock(t, &key)?;
        let id = self.id();
        let mut enc = Vec::with_capacity(64);
        encode_row(&mut enc, 0, id, &row);
        let mut dup = false;
        self.change(t.primary, &key, |cur| match cur.and_then(header) {
            Some((f, _)) if f & FLAG_DELETED == 0 => {
                dup = true;
                Modify::Keep
            }
            _ => {
                dup = false;
                Modify::Put(enc.clone())
            }
        })?;
        if dup {
            let shown: Vec<String> = pk.iter().map(|v| v.to_string()).collect();
            return Err(Error::DuplicateKey {
                key: shown.join("-"),
                index: "PRIMARY".into(),
            });
        }
        for (i, idx) in t.def.indexes.iter().enumerate() {
            let sk = index_key(&t.def, idx, &row);
            self.change(t.secondary[i], &sk, |_| Modify::Put(Vec::new()))?;
        }
        self.inner
            .counters
            .rows_inserted
            .fetch_add(1, Ordering::Relaxed);
        Ok(assigned)
    }

    pub fn update(&mut self, t: &Arc<Table>, pk: &[Value], new_row: Row) -> Result<bool> {
        if new_row.len() != t.def.columns.len() {
            return Err(Error::Internal(
                "update with a wrong number of values".into(),
            ));
        }
        if let Some((i, c)) = t
            .def
            .columns
            .iter()
            .enumerate()
            .find(|(i, c)| new_row[*i].is_null() && !c.nullable)
        {
            let _ = i;
            return Err(Error::NotNull(c.name.clone()));
        }
        let new_pk = pk_values(&t.def, &new_row);
        if new_pk.iter().zip(pk).any(|(a, b)| a != b) {
            if !self.delete(t, pk)? {
                return Ok(false);
            }
            self.insert(t, new_row)?;
            return Ok(true);
        }
        let key = encode_key(pk);
        self.lock(t, &key)?;
        let id = self.id();
        let mut enc = Vec::with_capacity(64);
        encode_row(&mut enc, 0, id, &new_row);
        let old = self.change(t.primary, &key, |cur| match cur.and_then(header) {
            Some((f, _)) if f & FLAG_DELETED == 0 => Modify::Put(enc.clone()),
            _ => Modify::Keep,
        })?;
        let Some(old) = old.filter(|o| header(o).is_some_and(|(f, _)| f & FLAG_DELETED == 0))
        else {
            return Ok(false);
        };
        let old_row = decode_row(&old).ok_or_else(|| corrupt(t))?;
        for (i, idx) in t.def.indexes.iter().enumerate() {
            if idx.columns.iter().any(|&c| old_row[c] != new_row[c]) {
                let nk = index_key(&t.def, idx, &new_row);
                self.change(t.secondary[i], &nk, |_| Modify::Put(Vec::new()))?;
                let ok = index_key(&t.def, idx, &old_row);
                self.purge.push(Purge::Sec {
                    table: t.clone(),
                    index: i,
                    skey: ok,
                    pk: key.clone(),
                });
            }
        }
        self.inner
            .counters
            .rows_updated
            .fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    pub fn delete(&mut self, t: &Arc<Table>, pk: &[Value]) -> Result<bool> {
        let key = encode_key(pk);
        self.lock(t, &key)?;
        let id = self.id();
        let old = self.change(t.primary, &key, |cur| {
            match cur.and_then(|c| header(c).map(|h| (h, c))) {
                Some(((f, _), c)) if f & FLAG_DELETED == 0 => {
                    Modify::Put(with_header(c, FLAG_DELETED, id))
                }
                _ => Modify::Keep,
            }
        })?;
        let Some(old) = old.filter(|o| header(o).is_some_and(|(f, _)| f & FLAG_DELETED == 0))
        else {
            return Ok(false);
        };
        let old_row = decode_row(&old).ok_or_else(|| corrupt(t))?;
        self.purge.push(Purge::Row {
            tree: t.primary,
            key: key.clone(),
        });
        for (i, idx) in t.def.indexes.iter().enumerate() {
            let sk = index_key(&t.def, idx, &old_row);
            self.purge.push(Purge::Sec {
                table: t.clone(),
                index: i,
                skey: sk,
                pk: key.clone(),
            });
        }
        self.inner
            .counters
            .rows_deleted
            .fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    fn finish(&mut self) {
        if let Some(a) = self.active.take() {
            self.inner.active.end(a.id);
            self.inner.locks.release(a.id, self.locks.iter());
        }
        self.locks.clear();
        self.undo.clear();
        self.purge.clear();
    }

    pub fn commit(&mut self) -> Result<()> {
        let Some(a) = self.active.clone() else {
            return Ok(());
        };
        let payload = tierdb_btree::redo::encode_txn_end(a.id, true);
        let end = match self.inner.store.wal.append(&payload, |_, _| {}) {
            Ok(e) => e,
            Err(e) => {
                // The log is poisoned: nothing more can be written, not even the rollback.
                self.finish();
                return Err(e.into());
            }
        };
        let durable = self.inner.store.wal.commit(end);
        // Purge while the row locks are still held. Failures leave harmless garbage.
        let purge = std::mem::take(&mut self.purge);
        for p in purge {
            if let Err(e) = self.purge_one(a.id, p) {
                tracing::warn!(error = %e, "purge after commit failed");
            }
        }
        self.inner.counters.commits.fetch_add(1, Ordering::Relaxed);
        self.finish();
        durable.map_err(Error::from)
    }

    fn purge_one(&self, me: u64, p: Purge) -> Result<()> {
        match p {
            Purge::Row { tree, key } => {
                let mut m = Mtr::new(&self.inner.store, 0);
                tree.modify(&mut m, &key, |cur| match cur.and_then(header) {
                    Some((f, w)) if f & FLAG_DELETED != 0 && w == me => Modify::Delete,
                    _ => Modify::Keep,
                })?;
                m.commit()?;
            }
            Purge::Sec {
                table,
                index,
                skey,
                pk,
            } => {
                if let Some(row) = self.get_key(&table, &pk)? {
                    if index_key(&table.def, &table.def.indexes[index], &row) == skey {
                        return Ok(());
                    }
                }
                let mut m = Mtr::new(&self.inner.store, 0);
                table.secondary[index].modify(&mut m, &skey, |cur| {
                    if cur.is_some() {
                        Modify::Delete
                    } else {
                        Modify::Keep
                    }
                })?;
                m.commit()?;
            }
        }
        Ok(())
    }

    pub fn rollback(&mut self) -> Result<()> {
        let Some(a) = self.active.clone() else {
            return Ok(());
        };
        let undo = std::mem::take(&mut self.undo);
        let r = self.inner.apply_undo(a.id, &undo).and_then(|_| {
            let payload = tierdb_btree::redo::encode_txn_end(a.id, false);
            self.inner
                .store
                .wal
                .append(&payload, |_, _| {})
                .map(|_| ())
                .map_err(Error::from)
        });
        self.inner
            .counters
            .rollbacks
            .fetch_add(1, Ordering::Relaxed);
        self.finish();
        r
    }
}

enum Source {
    Primary,
    Secondary { index: usize },
}

/// A scan that copies batches of visible rows out of the leaves and re-descends for the next
/// batch, so no latch is held between calls.
pub(crate) struct Cursor {
    inner: Arc<Inner>,
    table: Arc<Table>,
    me: u64,
    source: Source,
    next: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    buf: VecDeque<Row>,
    done: bool,
}

const BATCH: usize = 128;

impl Cursor {
    pub fn new_primary(
        inner: Arc<Inner>,
        table: Arc<Table>,
        me: u64,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
    ) -> Cursor {
        Cursor {
            inner,
            table,
            me,
            source: Source::Primary,
            next: lower_bound(&lo),
            hi: upper_bound(&hi),
            buf: VecDeque::new(),
            done: false,
        }
    }

    pub fn new_secondary(
        inner: Arc<Inner>,
        table: Arc<Table>,
        me: u64,
        index: usize,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
    ) -> Cursor {
        Cursor {
            inner,
            table,
            me,
            source: Source::Secondary { index },
            next: lower_bound(&lo),
            hi: upper_bound(&hi),
            buf: VecDeque::new(),
            done: false,
        }
    }

    fn fill(&mut self) -> Result<()> {
        let from = match &self.next {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        };
        let mut last: Option<Vec<u8>> = None;
        let mut n = 0usize;
        let mut hit_end = true;
        let mut bad = false;
        let (inner, me, table) = (&self.inner, self.me, &self.table);
        let mut rows: Vec<Row> = Vec::new();
        let mut skeys: Vec<Vec<u8>> = Vec::new();
        let hi = &self.hi;
        let below = |k: &[u8]| match hi {
            Bound::Unbounded => true,
            Bound::Included(h) => k <= h.as_slice(),
            Bound::Excluded(h) => k < h.as_slice(),
        };
        let tree = match self.source {
            Source::Primary => table.primary,
            Source::Secondary { index } => table.secondary[index],
        };
        tree.scan(&inner.store, from, |k, v| {
            if !below(k) {
                return false;
            }
            if n == BATCH {
                hit_end = false;
                return false;
            }
            n += 1;
            last = Some(k.to_vec());
            match self.source {
                Source::Primary => match visible_row(inner, me, tree.root.0, k, v) {
                    Ok(Some(r)) => rows.push(r),
                    Ok(None) => {}
                    Err(()) => {
                        bad = true;
                        return false;
                    }
                },
                Source::Secondary { .. } => skeys.push(k.to_vec()),
            }
            true
        })?;
        if bad {
            return Err(corrupt(table));
        }
        if let Source::Secondary { index } = self.source {
            let idx = &table.def.indexes[index];
            let npk = table.def.primary_key.len();
            for sk in skeys {
                let vals = decode_key(&sk).ok_or_else(|| corrupt(table))?;
                if vals.len() != idx.columns.len() + npk {
                    return Err(corrupt(table));
                }
                let pk = encode_key(&vals[idx.columns.len()..]);
                if let Some(row) = read_row(inner, me, table, &pk)? {
                    if idx.columns.iter().zip(&vals).all(|(&c, v)| &row[c] == v) {
                        rows.push(row);
                    }
                }
            }
        }
        inner
            .counters
            .rows_read
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        self.buf.extend(rows);
        match last {
            Some(k) if !hit_end => self.next = Bound::Excluded(k),
            _ => self.done = true,
        }
        Ok(())
    }

    pub fn next_row(&mut self) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.buf.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            self.fill()?;
        }
    }
}

impl Iterator for Cursor {
    type Item = Result<Row>;
    fn next(&mut self) -> Option<Result<Row>> {
        match self.next_row() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                self.buf.clear();
                Some(Err(e))
            }
        }
    }
}

impl TxnState {
    pub fn cursor(
        &self,
        t: &Arc<Table>,
        index: Option<usize>,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
    ) -> Result<Cursor> {
        Ok(match index {
            None => Cursor::new_primary(self.inner.clone(), t.clone(), self.id(), lo, hi),
            Some(i) => {
                if i >= t.secondary.len() {
                    return Err(Error::Internal(format!("index {i} out of range")));
                }
                Cursor::new_secondary(self.inner.clone(), t.clone(), self.id(), i, lo, hi)
            }
        })
    }
}
