//! Transactions as a session sees them: reads (point, primary range, secondary range),
//! locking reads, writes with row locks, undo, savepoints (statement-level rollback), commit
//! (group-committed redo) and rollback.
//!
//! Write protocol for one row change: take the row lock (held to the end) → for a table with
//! UNIQUE indexes, the locks of the unique values the row leaves or enters, and the check that
//! no other live row holds an entered one (see `claim_unique`) → one mtr on the
//! primary tree carrying the undo entry as its logical part → the before-image is recorded in
//! the active-transaction table before the leaf latch is released → one mtr per changed
//! secondary entry. Deletes only delete-mark the row and keep old secondary entries; both are
//! removed physically after the commit record (purge), while the row lock is still held.
//!
//! Savepoints: a `Savepoint` is the length of the undo list and of the purge list, the
//! binary-log capture's place and the memory held then. Rolling back to it restores the
//! newer undo entries' before-images newest first (primary and secondary entries alike, so
//! indexes stay consistent), forgets the newer purge entries and captured changes and the
//! memory they held, and keeps every row lock (as InnoDB does). The active-transaction table
//! keeps the first before-image of every primary key the transaction touched: for a key
//! first touched after the savepoint that image is now the stored version again, which
//! readers get either way.
//! Crash recovery needs nothing new: the undo entries of the rolled-back part stay in the
//! redo log, and re-applying all of a loser's entries newest first still ends at each key's
//! first before-image.
//!
//! A transaction that only took locks (locking reads) and never logged a change writes no
//! commit or rollback record.
//!
//! Must never: change a row without holding its lock; release locks before the commit or
//! rollback record is appended (when the transaction logged anything); return a version
//! written by another active transaction.

use crate::binlog::{Capture, CaptureMark, RowChange};
use crate::inner::Inner;
use crate::keys::{
    decode_key, encode_column_value, encode_key, encode_key_of, lower_bound, upper_bound,
};
use crate::lob;
use crate::rowcodec::{
    decode_row_ext, encode_row_ext, header, with_header, External, Undo, UndoLog, FLAG_DELETED,
};
use crate::txns::{ActiveTxn, ReadAs, ReadView, Visible};
use crate::types::{IndexDef, Row, TableDef, Value};
use crate::{Error, Result, Table};
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tierdb_btree::{BTree, LeafHint, Modify, Mtr};
use tierdb_page::PageId;
use tierdb_txn::{LockError, LockKey, LockMode};
use tierdb_wal::Lsn;

pub(crate) enum Purge {
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
    /// Remove long value `id` (`len` bytes) from long-value tree `tree`: the row version
    /// naming it was replaced or deleted.
    Lob { tree: BTree, id: u64, len: u32 },
}

/// The purge of a transaction that ended while a read view was open (see `txns`), kept in
/// `Inner::deferred` under the clock value the transaction is retained under.
pub(crate) struct Deferred {
    /// Its id (a delete-mark is purged only while it still carries this writer).
    txn: u64,
    items: Vec<Purge>,
}

impl Deferred {
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }
}

pub(crate) struct TxnState {
    pub inner: Arc<Inner>,
    active: Option<Arc<ActiveTxn>>,
    undo: UndoLog,
    locks: Vec<LockKey>,
    purge: Vec<Purge>,
    /// Gates of the tables this transaction writes, held until it ends (see `gate`).
    gates: Vec<Arc<crate::gate::TableGate>>,
    /// Gates of the tables it holds row locks of without writing (locking reads).
    lock_gates: Vec<Arc<crate::gate::TableGate>>,
    /// The session this transaction belongs to, for table locks (0 = none).
    pub owner: u64,
    /// Some change was written to the redo log (then commit and rollback append an end
    /// record; stays true after a rollback to a savepoint).
    logged: bool,
    /// The read view of a REPEATABLE READ transaction, opened by its first consistent read.
    view: Option<Arc<ReadView>>,
    /// Row changes for the binary log (see `binlog`), in the order they were made.
    binlog: Capture,
    /// Changes are not captured for the binary log (`sql_log_bin = 0`, and the rows a
    /// foreign key's cascade changes: a replica's engine cascades by itself).
    pub binlog_off: bool,
    /// The changes are made with `foreign_key_checks = 0` (marked so in the binary log).
    pub binlog_no_fk_checks: bool,
    /// The binary log's ticket of the commit under way (`BinlogSink::finished` once visible).
    binlog_ticket: Option<u64>,
    /// A table that is not TEMPORARY was changed (FLUSH TABLES WITH READ LOCK holds such a
    /// transaction's commit).
    table_writes: bool,
    /// Plain reads go through `view` (else they read the last committed versions: the
    /// current reads of UPDATE, DELETE and locking SELECTs, and READ COMMITTED).
    consistent: bool,
    /// Bytes of memory this transaction holds (an estimate: undo entries, before-images,
    /// row locks, purges, captured changes), also counted in `Inner::txn_memory` until it ends.
    mem: u64,
    /// The part of `mem` a savepoint rollback does not give back (row locks, before-images).
    mem_kept: u64,
    /// One bit per hash of each old index entry listed to purge (`Purge::Sec`), and whether
    /// this transaction put an entry back whose hash has its bit set: only then may a row it
    /// holds locked map to a listed entry again, and only then does the purge at commit read
    /// the row to check (see `purge_one`). Never cleared by a savepoint rollback (a stale
    /// bit only costs that read).
    sec_listed: [u64; 4],
    sec_revived: bool,
    /// Where the last locking read (`lock_row_within`) found its row: tree root, key and leaf.
    /// The next change of that same entry starts at that leaf (`BTree::modify_hinted`); any
    /// change takes it.
    hint: Option<(PageId, LeafHint)>,
    hint_key: Vec<u8>,
}

/// The word and bit of `sec_listed` for index entry `skey`.
fn sec_bit(skey: &[u8]) -> (usize, u64) {
    let h = crc32c::crc32c(skey);
    ((h as usize >> 6) % 4, 1u64 << (h % 64))
}

/// Estimated bytes held per item beyond its keys' and values' bytes (allocation headers,
/// hash-table slots, vectors' slack).
const MEM_UNDO: u64 = 16;
const MEM_BEFORE: u64 = 96;
const MEM_LOCK: u64 = 160;
const MEM_PURGE: u64 = 80;
const MEM_VALUE: u64 = 16;

/// A point inside a transaction that `Txn::rollback_to_savepoint` returns to: the changes
/// made after it are undone, the earlier ones and every row lock are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Savepoint {
    undo: usize,
    purge: usize,
    binlog: CaptureMark,
    /// `mem - mem_kept` then.
    mem: u64,
}

/// Why a commit record could not be appended.
enum CommitFailure {
    /// Before anything was appended (the binary log could not encode or place the events).
    Encode(Error),
    /// The redo log failed (and is poisoned).
    Log(Error),
}

pub(crate) fn index_key(def: &TableDef, idx: &IndexDef, row: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32);
    encode_row_columns(&mut out, def, &idx.columns, row);
    encode_row_columns(&mut out, def, &def.key_columns(), row);
    out
}

/// Appends the key encoding of `row`'s columns `cols` (each under its collation) without
/// copying the values.
fn encode_row_columns(out: &mut Vec<u8>, def: &TableDef, cols: &[usize], row: &[Value]) {
    for &c in cols {
        let v = row.get(c).unwrap_or(&Value::Null);
        encode_column_value(out, v, def.columns.get(c));
    }
}

/// Column positions of a secondary index's keys: its columns, then the primary key's.
fn index_key_columns(def: &TableDef, idx: &IndexDef) -> Vec<usize> {
    let mut cols = idx.columns.clone();
    cols.extend(def.key_columns().iter());
    cols
}

/// True when secondary-index key `sk` is `row`'s entry in `idx` as far as the index columns
/// go (encoded values are self-delimiting, so a prefix match is an exact match of them).
fn index_entry_matches(def: &TableDef, idx: &IndexDef, row: &[Value], sk: &[u8]) -> bool {
    let mut part = Vec::with_capacity(sk.len());
    encode_row_columns(&mut part, def, &idx.columns, row);
    sk.starts_with(&part)
}

pub(crate) fn pk_values(def: &TableDef, row: &[Value]) -> Vec<Value> {
    def.key_columns().iter().map(|&c| row[c].clone()).collect()
}

/// The primary-tree key of primary key values `pk` (under the key columns' collations).
pub(crate) fn pk_key(def: &TableDef, pk: &[Value]) -> Vec<u8> {
    encode_key_of(def, &def.key_columns(), pk)
}

/// Gives the AUTO_INCREMENT column of `row` the next value when it is NULL or 0 (returned),
/// or moves the table's counter past an explicit value.
pub(crate) fn assign_auto_increment(t: &Table, row: &mut [Value]) -> Option<i64> {
    let mut assigned = None;
    for (i, c) in t.def.columns.iter().enumerate() {
        if c.auto_increment {
            match row.get(i) {
                Some(Value::Null | Value::Int(0)) => {
                    let next = t
                        .auto_inc
                        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| c.checked_add(1));
                    match next {
                        Ok(prev) => {
                            row[i] = Value::Int(prev + 1);
                            assigned = Some(prev + 1);
                        }
                        // The counter is used up (it reached i64::MAX): no value, so the
                        // insert fails (1467) instead of wrapping.
                        Err(_) => row[i] = Value::Null,
                    }
                }
                Some(Value::Int(v)) => {
                    t.auto_inc.fetch_max(*v, Ordering::Relaxed);
                }
                Some(Value::UInt(_)) => {
                    t.auto_inc.fetch_max(i64::MAX, Ordering::Relaxed);
                }
                _ => {}
            }
        }
    }
    assigned
}

/// The unique value of row `row` in unique index `idx` (its columns encoded without the primary
/// key), or None when one of them is NULL: NULLs never collide, as in MySQL.
pub(crate) fn unique_value(def: &TableDef, idx: &IndexDef, row: &[Value]) -> Option<Vec<u8>> {
    if idx
        .columns
        .iter()
        .any(|&c| row.get(c).is_none_or(Value::is_null))
    {
        return None;
    }
    let mut out = Vec::with_capacity(16);
    encode_row_columns(&mut out, def, &idx.columns, row);
    Some(out)
}

/// The lock that serialises every change to or from one value of unique index `index` of
/// table `t`. Its `table` field is outside the table-id space (ids are small counters), so it
/// never meets a row lock.
fn unique_lock(t: &Table, index: usize, value: Vec<u8>) -> LockKey {
    LockKey {
        table: t.id | ((index as u64 + 1) << 48),
        key: value,
    }
}

/// A key as MySQL shows it in "Duplicate entry": the values of columns `cols` of `row`
/// joined by '-'. A byte string (BLOB, BINARY, VARBINARY) shows its bytes outside printable
/// ASCII as `\xHH`, and a BINARY value without its padding zero bytes, as MariaDB does.
pub(crate) fn shown(def: &TableDef, cols: &[usize], row: &[Value]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (i, &c) in cols.iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        let ty = def.columns.get(c).map(|col| &col.ty);
        match (row.get(c), ty) {
            (Some(Value::Bytes(b)), Some(ty)) if ty.is_binary_string() => {
                let mut b = &b[..];
                if matches!(ty, crate::ColumnType::Binary(_)) {
                    while let [rest @ .., 0] = b {
                        b = rest;
                    }
                }
                for &byte in b {
                    if (0x20..0x7f).contains(&byte) {
                        out.push(byte as char);
                    } else {
                        let _ = write!(out, "\\x{byte:02X}");
                    }
                }
            }
            (Some(v), _) => {
                let _ = write!(out, "{v}");
            }
            (None, _) => {}
        }
    }
    out
}

/// Whether `tree` holds a key starting with `prefix`.
pub(crate) fn has_key_prefix(
    store: &tierdb_btree::Store,
    tree: BTree,
    prefix: &[u8],
) -> Result<bool> {
    let mut found = false;
    tree.scan(store, Bound::Included(prefix), |k, _| {
        found = k.starts_with(prefix);
        false
    })?;
    Ok(found)
}

/// A stored row as the table's current definition sees it: a row written before columns
/// were added (ALTER TABLE ... ADD COLUMN) has fewer values; the added columns get their
/// fill values (before the hidden row id of a table without a primary key).
pub(crate) fn complete_row(def: &TableDef, mut row: Row) -> Row {
    let width = def.stored_width();
    if row.len() >= width {
        return row;
    }
    let hidden = def.has_hidden_key().then(|| row.pop()).flatten();
    let have = row.len();
    row.extend(
        def.columns[have.min(def.columns.len())..]
            .iter()
            .map(|c| c.fill.clone().unwrap_or(Value::Null)),
    );
    row.extend(hidden);
    row
}

/// After a read through a view: the view was not expired meanwhile (an expired view's
/// history may be gone, so what the read returned cannot be trusted).
fn still_valid(inner: &Inner, r: &ReadAs) -> Result<()> {
    match &r.view {
        Some(v) if inner.active.view_expired(v) => Err(Error::ReadViewTooOld),
        _ => Ok(()),
    }
}

fn corrupt(t: &Table) -> Error {
    Error::Corrupt(format!("undecodable row in table {}.{}", t.db, t.def.name))
}

/// How often a read starts again after finding the long values of the version it read
/// already purged (each time a newer version was committed meanwhile) before giving up.
const LOB_RETRIES: usize = 64;

/// Reads the long values `ext` of `row` (those `want` marks) into their columns. False when
/// one is gone: the version was replaced and purged meanwhile, and the caller reads the
/// row again.
fn resolve_row(
    inner: &Inner,
    t: &Table,
    row: &mut Row,
    ext: &[External],
    want: Option<&[bool]>,
) -> Result<bool> {
    for e in ext {
        if !want.is_none_or(|w| w.get(e.col).copied().unwrap_or(true)) {
            continue;
        }
        let Some(tree) = t.lob else {
            return Err(corrupt(t));
        };
        match lob::read(&inner.store, tree, e)? {
            lob::Read::Found(v) => {
                inner
                    .counters
                    .long_values_read
                    .fetch_add(1, Ordering::Relaxed);
                match row.get_mut(e.col) {
                    Some(slot) => *slot = Value::Bytes(v),
                    None => return Err(corrupt(t)),
                }
            }
            lob::Read::Missing => return Ok(false),
        }
    }
    Ok(true)
}

/// The version of row `key` of `t` that transaction `me` sees (only the `want` columns
/// materialised; see `decode_row_cols`), long values included.
fn read_row(
    inner: &Inner,
    r: &ReadAs,
    t: &Table,
    key: &[u8],
    want: Option<&[bool]>,
) -> Result<Option<Row>> {
    read_row_hinted(inner, r, t, key, want, &mut None)
}

/// `read_row`, also setting `hint` to where the row's entry was looked up.
fn read_row_hinted(
    inner: &Inner,
    r: &ReadAs,
    t: &Table,
    key: &[u8],
    want: Option<&[bool]>,
    hint: &mut Option<LeafHint>,
) -> Result<Option<Row>> {
    for _ in 0..LOB_RETRIES {
        let (got, at) = t.primary.get_hinted(&inner.store, key, |v| match v {
            None => Ok(None),
            Some(stored) => visible_row(inner, r, &t.def, t.primary.root.0, key, stored, want),
        })?;
        *hint = Some(at);
        match got.map_err(|_| corrupt(t))? {
            None => return Ok(None),
            Some((mut row, ext)) => {
                if ext.is_empty() || resolve_row(inner, t, &mut row, &ext, want)? {
                    return Ok(Some(row));
                }
                still_valid(inner, r)?;
            }
        }
    }
    Err(vanishing(t))
}

/// The error of a read that kept finding the long values of the version it read purged.
fn vanishing(t: &Table) -> Error {
    Error::Corrupt(format!(
        "long values of a row in table {}.{} keep vanishing",
        t.db, t.def.name
    ))
}

/// Decodes the version of `stored` visible to `me`; its long values are listed, not read.
fn visible_row(
    inner: &Inner,
    r: &ReadAs,
    def: &TableDef,
    tree: u64,
    key: &[u8],
    stored: &[u8],
    want: Option<&[bool]>,
) -> std::result::Result<Option<(Row, Vec<External>)>, ()> {
    let mut ext = Vec::new();
    let row = match inner.active.visible(r, tree, key, stored) {
        Visible::None => return Ok(None),
        Visible::Stored(b) => decode_row_ext(b, want, &mut ext),
        Visible::Owned(b) => decode_row_ext(&b, want, &mut ext),
        Visible::Corrupt => return Err(()),
    };
    row.map(|r| Some((complete_row(def, r), ext))).ok_or(())
}

impl TxnState {
    pub fn new(inner: Arc<Inner>) -> TxnState {
        TxnState {
            inner,
            active: None,
            undo: UndoLog::default(),
            locks: Vec::new(),
            purge: Vec::new(),
            gates: Vec::new(),
            lock_gates: Vec::new(),
            owner: 0,
            logged: false,
            view: None,
            consistent: false,
            binlog: Capture::default(),
            binlog_off: false,
            binlog_no_fk_checks: false,
            binlog_ticket: None,
            mem: 0,
            mem_kept: 0,
            table_writes: false,
            sec_listed: [0; 4],
            sec_revived: false,
            hint: None,
            hint_key: Vec::new(),
        }
    }

    /// True when the changes of table `t` go to the binary log.
    fn capturing(&self, t: &Table) -> bool {
        self.inner.cfg.binlog.is_some() && !self.binlog_off && !t.is_temporary()
    }

    /// Plain reads from now on see the database as of one moment (REPEATABLE READ): the
    /// read view is opened now unless this transaction has one. Changes and locking reads
    /// still work on the newest committed versions.
    pub fn consistent_reads(&mut self) {
        if self.view.is_none() {
            self.view = Some(self.inner.active.open_view());
        }
        self.consistent = true;
    }

    /// Plain reads read the newest committed versions (READ COMMITTED, and the current reads
    /// of writing statements); an open view stays for later `consistent_reads`.
    pub fn current_reads(&mut self) {
        self.consistent = false;
    }

    pub fn has_view(&self) -> bool {
        self.view.is_some()
    }

    /// How plain reads choose versions now.
    fn reader(&self) -> ReadAs {
        ReadAs {
            me: self.id(),
            view: if self.consistent {
                self.view.clone()
            } else {
                None
            },
        }
    }

    /// A plain read of `t` through a view opened before `t`'s trees were made cannot be
    /// answered (the versions it needs were never in them): 1412, as InnoDB.
    fn check_view(&self, t: &Table, r: &ReadAs) -> Result<()> {
        match &r.view {
            Some(v) if v.predates(t.since) => Err(Error::TableDefinitionChanged),
            _ => still_valid(&self.inner, r),
        }
    }

    /// Before a change to `t`: passes the table's gate once per transaction (waiting while an
    /// index is built) and, when `t` is a stale handle (an index was added or dropped since
    /// it was made), returns the current one, through which the change must be made.
    fn enter(&mut self, t: &Table) -> Result<Option<Arc<Table>>> {
        self.table_writes |= !t.is_temporary();
        self.pass_gate(t)
    }

    /// `enter` for a lock taken to write (FOR UPDATE) that changes nothing by itself: the
    /// transaction does not count as one that changed a table.
    fn pass_gate(&mut self, t: &Table) -> Result<Option<Arc<Table>>> {
        let id = self.ensure_active()?.id;
        if !self.gates.iter().any(|g| Arc::ptr_eq(g, &t.gate)) {
            let timeout = self.inner.lock_wait();
            t.gate
                .enter(id, self.owner, timeout)
                .map_err(|e| t.gate_error(e))?;
            self.gates.push(t.gate.clone());
        }
        self.current_handle(t)
    }

    /// None when `t` is current; else the current handle, when changes made through it mean
    /// what they meant through `t` (only indexes were added or dropped).
    fn current_handle(&self, t: &Table) -> Result<Option<Arc<Table>>> {
        if t.version == t.gate.version() {
            return Ok(None);
        }
        let current = self.inner.table(&t.db, &t.key)?;
        if current.id != t.id {
            // The name now belongs to another table (RENAME TABLE a TO old, b TO a): this
            // handle's table goes by another name or is gone.
            return Err(Error::TableDefinitionChanged);
        }
        if current.def.columns != t.def.columns
            || current.def.primary_key != t.def.primary_key
            || current.def.checks != t.def.checks
            || current.primary.root != t.primary.root
        {
            // Columns were added or changed since the statement was planned (its rows have
            // the old shape or rules), its CHECK constraints changed (the statement checks
            // rows against the old ones), or the table was rebuilt (its keys were read from
            // the old trees, maybe under another primary key). MySQL's answer: the statement
            // is retried (the SQL layer plans it again).
            return Err(Error::TableDefinitionChanged);
        }
        Ok(Some(current))
    }

    /// Before taking shared row locks of `t` (FOR SHARE / LOCK IN SHARE MODE): keeps table
    /// rebuilds and index builds out until the transaction ends (they may change the key
    /// bytes the locks are on), without counting as a writer for LOCK TABLES; returns the
    /// current handle like `enter` when `t` is stale.
    fn enter_to_lock(&mut self, t: &Table) -> Result<Option<Arc<Table>>> {
        let inside =
            |gates: &[Arc<crate::gate::TableGate>]| gates.iter().any(|g| Arc::ptr_eq(g, &t.gate));
        if !inside(&self.gates) && !inside(&self.lock_gates) {
            let id = self.ensure_active()?.id;
            let timeout = self.inner.lock_wait();
            t.gate
                .enter_locker(id, timeout)
                .map_err(|e| t.gate_error(e))?;
            self.lock_gates.push(t.gate.clone());
        }
        self.current_handle(t)
    }

    fn id(&self) -> u64 {
        self.active.as_ref().map_or(0, |a| a.id)
    }

    pub fn has_writes(&self) -> bool {
        self.logged
    }

    /// Changed a table that is not TEMPORARY (at least tried to: set before the change).
    pub fn writes_tables(&self) -> bool {
        self.table_writes
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

    /// Counts `bytes` more held by this transaction (`kept`: until it ends, whatever
    /// savepoint it rolls back to).
    fn account(&mut self, bytes: u64, kept: bool) {
        self.mem += bytes;
        if kept {
            self.mem_kept += bytes;
        }
        self.inner.txn_memory.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Gives back what the changes after `sp` held (a savepoint rollback).
    fn release_to(&mut self, sp: &Savepoint) {
        let now = self.mem - self.mem_kept;
        let freed = now.saturating_sub(sp.mem);
        self.mem -= freed;
        self.inner.txn_memory.fetch_sub(freed, Ordering::Relaxed);
    }

    /// Before a change or a row lock: refuses to go on when the running transactions hold
    /// more than `transaction_memory_limit` and this one a sixteenth of it or more (smaller
    /// transactions pass: the big one growing is refused first).
    fn check_memory(&self) -> Result<()> {
        let limit = self.inner.txn_memory_limit.load(Ordering::Relaxed);
        let total = self.inner.txn_memory.load(Ordering::Relaxed);
        if limit == 0 || total <= limit || self.mem < limit / 16 {
            return Ok(());
        }
        self.inner
            .counters
            .txn_memory_refusals
            .fetch_add(1, Ordering::Relaxed);
        Err(Error::TransactionMemoryFull {
            held: self.mem,
            total,
            limit,
        })
    }

    /// Captures `c` for the binary log (callers check `capturing` first).
    fn capture(&mut self, c: RowChange) {
        let values = c.before.iter().chain(c.after.iter()).flatten();
        let bytes: u64 = values
            .map(|v| {
                MEM_VALUE
                    + match v {
                        Value::Bytes(b) => b.len() as u64,
                        _ => 8,
                    }
            })
            .sum();
        self.account(bytes, false);
        if let Some(sink) = &self.inner.cfg.binlog {
            self.binlog.push(sink.as_ref(), c);
        }
    }

    fn lock(&mut self, t: &Table, key: &[u8]) -> Result<()> {
        self.lock_mode(t, key, LockMode::Exclusive)
    }

    fn lock_mode(&mut self, t: &Table, key: &[u8], mode: LockMode) -> Result<()> {
        let lk = LockKey {
            table: t.id,
            key: key.to_vec(),
        };
        self.lock_key(lk, mode)
    }

    fn lock_key(&mut self, lk: LockKey, mode: LockMode) -> Result<()> {
        // At least 1 ms: a zero timeout means "do not wait" (NOWAIT), which also skips
        // deadlock detection, and a configured 0 must not turn deadlocks into timeouts.
        let timeout = Duration::from_millis(
            self.inner
                .lock_wait_timeout_ms
                .load(Ordering::Relaxed)
                .max(1),
        );
        self.lock_key_within(lk, mode, timeout)
    }

    fn lock_key_within(&mut self, lk: LockKey, mode: LockMode, timeout: Duration) -> Result<()> {
        self.check_memory()?;
        let id = self.ensure_active()?.id;
        match self.inner.locks.lock_mode(id, &lk, mode, timeout) {
            Ok(true) => {
                self.account(2 * lk.key.len() as u64 + MEM_LOCK, true);
                self.locks.push(lk);
                Ok(())
            }
            Ok(false) => Ok(()),
            Err(LockError::Deadlock) => Err(Error::Deadlock),
            Err(LockError::Interrupted) => Err(Error::Interrupted),
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
        self.change_entry(tree, key, decide, true)
    }

    /// `change`, recording the before-image for readers only with `seen`: readers walk
    /// versions of primary entries only (a secondary entry is a key with an empty value,
    /// checked against its row; a long-value tree's entries are read through their row), so
    /// the other trees' before-images are not kept.
    fn change_entry(
        &mut self,
        tree: BTree,
        key: &[u8],
        decide: impl FnMut(Option<&[u8]>) -> Modify,
        seen: bool,
    ) -> Result<Option<Vec<u8>>> {
        let a = self.ensure_active()?;
        let mut m = Mtr::new(&self.inner.store, a.id);
        let mut decide = decide;
        let mut changed = false;
        let (mut held, mut kept) = (0, 0);
        let decide = |cur: Option<&[u8]>| {
            let d = decide(cur);
            changed = d != Modify::Keep;
            d
        };
        let old = match self.hint.take() {
            Some((root, at)) if root == tree.root && self.hint_key == key => {
                tree.modify_hinted(&mut m, key, at, decide)?
            }
            _ => tree.modify(&mut m, key, decide)?,
        };
        if changed {
            let u = Undo::encode_parts(tree.root.0, key, old.as_deref());
            self.undo.push(&u);
            held = u.len() as u64 + MEM_UNDO;
            m.set_logical(u);
            if seen && a.record_before(tree.root.0, key, old.as_deref()) {
                kept = (key.len() + old.as_ref().map_or(0, |o| o.len())) as u64 + MEM_BEFORE;
            }
            self.logged = true;
        }
        let done = m.commit();
        self.account(held, false);
        self.account(kept, true);
        done?;
        Ok(old)
    }

    /// The newest stored version of row `key` (committed or written by a transaction that
    /// holds its lock), None when absent or delete-marked. Only for callers holding the lock
    /// that keeps the part they look at stable.
    ///
    /// Long values are read for every column with `full`, else only for index columns (what
    /// key and uniqueness checks look at; the other columns then hold NULL). A row whose lock
    /// the caller does not hold may be replaced meanwhile and its long values purged: it is
    /// read again.
    fn newest_row(&self, t: &Table, key: &[u8], full: bool) -> Result<Option<Row>> {
        for _ in 0..LOB_RETRIES {
            let r = t.primary.get(&self.inner.store, key, |v| {
                match v.map(|s| (header(s), s)) {
                    None => Ok(None),
                    Some((Some((f, _)), _)) if f & FLAG_DELETED != 0 => Ok(None),
                    Some((Some(_), s)) => {
                        let mut ext = Vec::new();
                        decode_row_ext(s, None, &mut ext)
                            .map(|r| Some((complete_row(&t.def, r), ext)))
                            .ok_or(())
                    }
                    Some((None, _)) => Err(()),
                }
            })?;
            let Some((mut row, mut ext)) = r.map_err(|_| corrupt(t))? else {
                return Ok(None);
            };
            if !full {
                ext.retain(|e| t.def.indexes.iter().any(|i| i.columns.contains(&e.col)));
            }
            if ext.is_empty() || resolve_row(&self.inner, t, &mut row, &ext, None)? {
                return Ok(Some(row));
            }
        }
        Err(vanishing(t))
    }

    /// The newest stored version of row `key` as bytes (None when absent), for a holder of
    /// its lock.
    fn newest_stored(&self, t: &Table, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(t.primary
            .get(&self.inner.store, key, |v| v.map(<[u8]>::to_vec))?)
    }

    /// Writes the values of `row`'s columns `cols` (from `lob::plan`) off the row under new
    /// ids, as logged changes of this transaction, and returns their references. A value
    /// equal to one `old` (the version being replaced) keeps off the row is not written
    /// again: its reference is reused and listed in `reused`.
    fn store_long_values(
        &mut self,
        t: &Table,
        cols: Vec<usize>,
        row: &[Value],
        old: Option<&[u8]>,
        reused: &mut Vec<External>,
    ) -> Result<Vec<External>> {
        if cols.is_empty() {
            return Ok(Vec::new());
        }
        let Some(tree) = t.lob else {
            // A table created before long values existed: its rows must fit, as then.
            return Err(lob::too_large(row.iter().map(lob::value_len).sum()));
        };
        let mut old_ext = Vec::new();
        if let Some(o) = old {
            decode_row_ext(o, None, &mut old_ext);
        }
        let mut out = Vec::with_capacity(cols.len());
        for c in cols {
            let Value::Bytes(b) = &row[c] else {
                continue;
            };
            let len = lob::length_of(b)?;
            if let Some(e) = old_ext.iter().find(|e| e.col == c && e.len == len) {
                if let lob::Read::Found(v) = lob::read(&self.inner.store, tree, e)? {
                    if v == *b {
                        reused.push(*e);
                        out.push(*e);
                        continue;
                    }
                }
            }
            let id = t.lob_ids.fetch_add(1, Ordering::Relaxed) + 1;
            for (seq, chunk) in lob::chunks(b) {
                let k = lob::chunk_key(id, seq);
                self.change_entry(tree, &k, |_| Modify::Put(chunk.to_vec()), false)?;
            }
            self.inner
                .counters
                .long_values_written
                .fetch_add(1, Ordering::Relaxed);
            out.push(External { col: c, id, len });
        }
        Ok(out)
    }

    /// Removes long values this transaction wrote for a row version that was never stored
    /// (its insert found a duplicate key), as logged changes.
    fn unstore_long_values(&mut self, t: &Table, ext: &[External]) -> Result<()> {
        let Some(tree) = t.lob else {
            return Ok(());
        };
        for e in ext {
            for k in lob::chunk_keys(e.id, e.len) {
                self.change_entry(tree, &k, lob::delete_present, false)?;
            }
        }
        Ok(())
    }

    /// `row` (a version this transaction just replaced, decoded with long values `ext` not
    /// read) with the long values of indexed columns read: an index built after a value went
    /// off the row may cover its column, and the old index entries are found by value.
    /// `row` with its long values read back: those of indexed columns, or all of them
    /// (`all`: the binary log wants whole before-images).
    fn with_long_values(
        &self,
        t: &Table,
        mut row: Row,
        ext: &[External],
        all: bool,
    ) -> Result<Row> {
        let keyed: Vec<External> = ext
            .iter()
            .filter(|e| all || t.def.indexes.iter().any(|i| i.columns.contains(&e.col)))
            .copied()
            .collect();
        if !keyed.is_empty() && !resolve_row(&self.inner, t, &mut row, &keyed, None)? {
            return Err(corrupt(t));
        }
        Ok(row)
    }

    /// Queues the removal of the long values `ext` of a replaced or deleted version
    /// (after the commit; forgotten by a rollback), except those in `keep`.
    fn purge_long_values(&mut self, t: &Table, ext: &[External], keep: &[External]) {
        let Some(tree) = t.lob else {
            return;
        };
        for e in ext {
            if keep.iter().any(|k| k.id == e.id) {
                continue;
            }
            self.purge.push(Purge::Lob {
                tree,
                id: e.id,
                len: e.len,
            });
            self.account(MEM_PURGE, false);
        }
    }

    /// The primary key of another live row holding `value` in unique index `index`. The
    /// caller holds that value's unique lock, so no other transaction is moving a row to or
    /// from it: the entries' newest row versions are the truth (stale entries — rows since
    /// changed or deleted, not yet purged — are skipped).
    fn unique_holder(
        &self,
        t: &Table,
        index: usize,
        value: &[u8],
        own_pk: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        let mut pks: Vec<Vec<u8>> = Vec::new();
        t.secondary[index].scan(&self.inner.store, Bound::Included(value), |k, _| {
            if !k.starts_with(value) {
                return false;
            }
            pks.push(k[value.len()..].to_vec());
            true
        })?;
        let idx = &t.def.indexes[index];
        for pk in pks {
            if pk == own_pk {
                continue;
            }
            if let Some(row) = self.newest_row(t, &pk, false)? {
                if unique_value(&t.def, idx, &row).as_deref() == Some(value) {
                    return Ok(Some(pk));
                }
            }
        }
        Ok(None)
    }

    /// Before row `pk` (primary key `key`) changes from `old` to `new` (either may be absent):
    /// takes the unique lock of every unique value the row leaves or enters — a value left
    /// stays locked so nobody takes it while this change may still roll back — and refuses a
    /// value another live row holds (DuplicateKey naming the index).
    fn claim_unique(
        &mut self,
        t: &Table,
        key: &[u8],
        old: Option<&[Value]>,
        new: Option<&[Value]>,
    ) -> Result<()> {
        for (i, idx) in t.def.indexes.iter().enumerate() {
            if !idx.unique {
                continue;
            }
            let ov = old.and_then(|r| unique_value(&t.def, idx, r));
            let nv = new.and_then(|r| unique_value(&t.def, idx, r));
            if ov == nv {
                continue;
            }
            if let Some(ov) = ov {
                self.lock_key(unique_lock(t, i, ov), LockMode::Exclusive)?;
            }
            if let Some(nv) = nv {
                self.lock_key(unique_lock(t, i, nv.clone()), LockMode::Exclusive)?;
                if self.unique_holder(t, i, &nv, key)?.is_some() {
                    return Err(Error::DuplicateKey {
                        key: shown(&t.def, &idx.columns, new.unwrap_or_default()),
                        index: idx.name.clone(),
                    });
                }
            }
        }
        Ok(())
    }

    /// After `insert` of `row` failed with DuplicateKey on `index` ("PRIMARY" or a unique
    /// index's name): locks and returns the live row holding that key (the base of INSERT
    /// ... ON DUPLICATE KEY UPDATE, REPLACE and INSERT IGNORE). None when it has gone since.
    pub fn locked_duplicate(
        &mut self,
        t: &Table,
        row: &[Value],
        index: &str,
    ) -> Result<Option<Row>> {
        let current = self.enter(t)?;
        let t = current.as_deref().unwrap_or(t);
        if row.len() != t.def.columns.len() {
            return Err(Error::Internal(
                "duplicate lookup with a wrong number of values".into(),
            ));
        }
        let key = if index == "PRIMARY" {
            pk_key(&t.def, &pk_values(&t.def, row))
        } else {
            let Some(i) = t
                .def
                .indexes
                .iter()
                .position(|x| x.unique && x.name == index)
            else {
                return Ok(None);
            };
            let Some(v) = unique_value(&t.def, &t.def.indexes[i], row) else {
                return Ok(None);
            };
            // Held already by the failed insert; taken again in case the caller did not insert.
            self.lock_key(unique_lock(t, i, v.clone()), LockMode::Exclusive)?;
            match self.unique_holder(t, i, &v, &[])? {
                Some(pk) => pk,
                None => return Ok(None),
            }
        };
        self.lock(t, &key)?;
        self.newest_row(t, &key, true)
    }

    pub fn get(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        self.get_columns(t, pk, None)
    }

    /// `get` materialising only the `want` columns (others come back as NULL).
    pub fn get_columns(
        &mut self,
        t: &Table,
        pk: &[Value],
        want: Option<&[bool]>,
    ) -> Result<Option<Row>> {
        let key = pk_key(&t.def, pk);
        self.get_key(t, &key, want)
    }

    /// Locking read: takes the row lock (held to the end of the transaction), then reads the
    /// newest version — committed or this transaction's own. The base of read-modify-write.
    pub fn lock_row(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        self.lock_row_mode(t, pk, LockMode::Exclusive)
    }

    /// `lock_row` taking the lock in `mode` (shared: other shared readers may hold the row
    /// too; writers wait for all of them).
    pub fn lock_row_mode(
        &mut self,
        t: &Table,
        pk: &[Value],
        mode: LockMode,
    ) -> Result<Option<Row>> {
        self.lock_row_within(t, pk, mode, None)
    }

    /// `lock_row_mode` that does not wait: LockWaitTimeout at once when another transaction
    /// holds a conflicting lock (NOWAIT / SKIP LOCKED).
    pub fn lock_row_nowait(
        &mut self,
        t: &Table,
        pk: &[Value],
        mode: LockMode,
    ) -> Result<Option<Row>> {
        self.lock_row_within(t, pk, mode, Some(Duration::ZERO))
    }

    /// Locks row `pk` waiting up to `timeout` (None: `innodb_lock_wait_timeout`), then reads
    /// its newest version.
    fn lock_row_within(
        &mut self,
        t: &Table,
        pk: &[Value],
        mode: LockMode,
        timeout: Option<Duration>,
    ) -> Result<Option<Row>> {
        // An exclusive lock is taken to write (UPDATE, DELETE, FOR UPDATE): enter the gate as
        // a writer at once, as InnoDB's intention-exclusive table lock would.
        let current = match mode {
            LockMode::Exclusive => self.pass_gate(t)?,
            LockMode::Shared => self.enter_to_lock(t)?,
        };
        let t = current.as_deref().unwrap_or(t);
        let key = pk_key(&t.def, pk);
        let lk = LockKey {
            table: t.id,
            key: key.clone(),
        };
        match timeout {
            None => self.lock_key(lk, mode)?,
            Some(d) => self.lock_key_within(lk, mode, d)?,
        }
        // A change of the row usually follows: it starts at the leaf the read found.
        let mut at = None;
        let row = self.get_key_current_at(t, &key, &mut at);
        self.hint = at.map(|h| (t.primary.root, h));
        self.hint_key.clear();
        self.hint_key.extend_from_slice(&key);
        row
    }

    /// A plain read of row `key` (through the view when reads are consistent).
    fn get_key(&self, t: &Table, key: &[u8], want: Option<&[bool]>) -> Result<Option<Row>> {
        let r = self.reader();
        self.check_view(t, &r)?;
        self.count_read();
        let row = read_row(&self.inner, &r, t, key, want);
        still_valid(&self.inner, &r)?;
        row
    }

    /// Records that old index entry `skey` is listed to purge (see `sec_listed`).
    fn list_entry(&mut self, skey: &[u8]) {
        let (w, b) = sec_bit(skey);
        self.sec_listed[w] |= b;
    }

    /// Records that this transaction put index entry `skey` (see `sec_listed`).
    fn note_entry_put(&mut self, skey: &[u8]) {
        let (w, b) = sec_bit(skey);
        if self.sec_listed[w] & b != 0 {
            self.sec_revived = true;
        }
    }

    /// The last committed (or own) version of row `key`, whatever the view.
    fn get_key_current(&self, t: &Table, key: &[u8]) -> Result<Option<Row>> {
        self.get_key_current_at(t, key, &mut None)
    }

    /// `get_key_current`, also setting `at` to where the row's entry was looked up.
    fn get_key_current_at(
        &self,
        t: &Table,
        key: &[u8],
        at: &mut Option<LeafHint>,
    ) -> Result<Option<Row>> {
        self.count_read();
        let r = ReadAs {
            me: self.id(),
            view: None,
        };
        read_row_hinted(&self.inner, &r, t, key, None, at)
    }

    fn count_read(&self) {
        self.inner
            .counters
            .rows_read
            .fetch_add(1, Ordering::Relaxed);
    }

    pub fn insert(&mut self, t: &Arc<Table>, mut row: Row) -> Result<Option<i64>> {
        self.check_memory()?;
        let current = self.enter(t)?;
        let t = current.as_ref().unwrap_or(t);
        if row.len() != t.def.columns.len() {
            return Err(Error::Internal(format!(
                "insert of {} values into {} columns",
                row.len(),
                t.def.columns.len()
            )));
        }
        if t.def.has_hidden_key() {
            row.push(Value::Int(t.row_id.fetch_add(1, Ordering::Relaxed) + 1));
        }
        let assigned = assign_auto_increment(t, &mut row);
        for (i, c) in t.def.columns.iter().enumerate() {
            if row[i].is_null() && !c.nullable {
                // An AUTO_INCREMENT column is left NULL only when its counter is used up.
                return Err(if c.auto_increment {
                    Error::AutoIncrementExhausted
                } else {
                    Error::NotNull(c.name.clone())
                });
            }
        }
        let pk = pk_values(&t.def, &row);
        let key = pk_key(&t.def, &pk);
        self.lock(t, &key)?;
        if t.has_unique() {
            // The primary key is checked first (as InnoDB does), then the unique values.
            if self.newest_row(t, &key, false)?.is_some() {
                return Err(Error::DuplicateKey {
                    key: shown(&t.def, &t.def.primary_key, &row),
                    index: "PRIMARY".into(),
                });
            }
            self.claim_unique(t, &key, None, Some(&row))?;
        }
        let id = self.id();
        let cols = lob::plan(&t.def, key.len(), &row)?;
        let ext = self.store_long_values(t, cols, &row, None, &mut Vec::new())?;
        let mut enc = Vec::with_capacity(64);
        encode_row_ext(&mut enc, 0, id, &row, &ext);
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
            // INSERT IGNORE and ON DUPLICATE KEY UPDATE go on in the same statement.
            self.unstore_long_values(t, &ext)?;
            return Err(Error::DuplicateKey {
                key: shown(&t.def, &t.def.primary_key, &row),
                index: "PRIMARY".into(),
            });
        }
        for (i, idx) in t.def.indexes.iter().enumerate() {
            let sk = index_key(&t.def, idx, &row);
            self.change_entry(t.secondary[i], &sk, |_| Modify::Put(Vec::new()), false)?;
            self.note_entry_put(&sk);
        }
        if self.capturing(t) {
            self.capture(RowChange {
                table: t.clone(),
                before: None,
                after: Some(row),
                no_fk_checks: self.binlog_no_fk_checks,
            });
        }
        self.inner
            .counters
            .rows_inserted
            .fetch_add(1, Ordering::Relaxed);
        Ok(assigned)
    }

    pub fn update(&mut self, t: &Arc<Table>, pk: &[Value], new_row: Row) -> Result<bool> {
        self.check_memory()?;
        let current = self.enter(t)?;
        let t = current.as_ref().unwrap_or(t);
        // A row of a table without a primary key carries its hidden row id at the end.
        if new_row.len() != t.def.stored_width() {
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
        let key = pk_key(&t.def, pk);
        // A key that changes only in ways its collation ignores ('abc' -> 'ABC') stays in place.
        if pk_key(&t.def, &pk_values(&t.def, &new_row)) != key {
            if let Some(sink) = &self.inner.cfg.binlog {
                self.binlog.make_room(sink.as_ref(), 2);
            }
            let mark = self.binlog.pending.len();
            if !self.delete(t, pk)? {
                return Ok(false);
            }
            self.insert(t, new_row)?;
            // One update for the binary log, not a delete and an insert: a replica's foreign
            // keys must see the key change (ON UPDATE, not ON DELETE).
            if self.binlog.pending.len() == mark + 2 {
                let ins = self.binlog.pending.pop();
                let del = self.binlog.pending.pop();
                if let (Some(del), Some(ins)) = (del, ins) {
                    self.binlog.pending.push(RowChange {
                        table: ins.table,
                        before: del.before,
                        after: ins.after,
                        no_fk_checks: ins.no_fk_checks,
                    });
                }
            }
            return Ok(true);
        }
        self.lock(t, &key)?;
        if t.has_unique() {
            let Some(cur) = self.newest_row(t, &key, false)? else {
                return Ok(false);
            };
            self.claim_unique(t, &key, Some(&cur), Some(&new_row))?;
        }
        let id = self.id();
        // Long values: the stored version is read first only when the new one keeps some
        // off the row (an unchanged one is then not written again).
        let mut reused = Vec::new();
        let cols = lob::plan(&t.def, key.len(), &new_row)?;
        let ext = if cols.is_empty() {
            Vec::new()
        } else {
            let stored = self.newest_stored(t, &key)?;
            self.store_long_values(t, cols, &new_row, stored.as_deref(), &mut reused)?
        };
        let mut enc = Vec::with_capacity(64);
        encode_row_ext(&mut enc, 0, id, &new_row, &ext);
        let old = self.change(t.primary, &key, |cur| match cur.and_then(header) {
            Some((f, _)) if f & FLAG_DELETED == 0 => Modify::Put(enc.clone()),
            _ => Modify::Keep,
        })?;
        let Some(old) = old.filter(|o| header(o).is_some_and(|(f, _)| f & FLAG_DELETED == 0))
        else {
            // No row to update after all: the values written for it go again.
            let fresh: Vec<External> = ext
                .iter()
                .filter(|e| !reused.iter().any(|r| r.id == e.id))
                .copied()
                .collect();
            self.unstore_long_values(t, &fresh)?;
            return Ok(false);
        };
        let mut old_ext = Vec::new();
        let old_row = decode_row_ext(&old, None, &mut old_ext).ok_or_else(|| corrupt(t))?;
        let capture = self.capturing(t);
        let old_row = self.with_long_values(t, complete_row(&t.def, old_row), &old_ext, capture)?;
        self.purge_long_values(t, &old_ext, &reused);
        for (i, idx) in t.def.indexes.iter().enumerate() {
            if idx.columns.iter().any(|&c| old_row[c] != new_row[c]) {
                let nk = index_key(&t.def, idx, &new_row);
                let ok = index_key(&t.def, idx, &old_row);
                // A change its collation ignores ('abc' -> 'ABC'): the entry stays as it is.
                if nk == ok {
                    continue;
                }
                self.change_entry(t.secondary[i], &nk, |_| Modify::Put(Vec::new()), false)?;
                self.account((ok.len() + key.len()) as u64 + MEM_PURGE, false);
                self.list_entry(&ok);
                self.note_entry_put(&nk);
                self.purge.push(Purge::Sec {
                    table: t.clone(),
                    index: i,
                    skey: ok,
                    pk: key.clone(),
                });
            }
        }
        if capture {
            self.capture(RowChange {
                table: t.clone(),
                before: Some(old_row),
                after: Some(new_row),
                no_fk_checks: self.binlog_no_fk_checks,
            });
        }
        self.inner
            .counters
            .rows_updated
            .fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    pub fn delete(&mut self, t: &Arc<Table>, pk: &[Value]) -> Result<bool> {
        self.check_memory()?;
        let current = self.enter(t)?;
        let t = current.as_ref().unwrap_or(t);
        let key = pk_key(&t.def, pk);
        self.lock(t, &key)?;
        if t.has_unique() {
            let Some(cur) = self.newest_row(t, &key, false)? else {
                return Ok(false);
            };
            self.claim_unique(t, &key, Some(&cur), None)?;
        }
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
        let mut old_ext = Vec::new();
        let old_row = decode_row_ext(&old, None, &mut old_ext).ok_or_else(|| corrupt(t))?;
        let capture = self.capturing(t);
        let old_row = self.with_long_values(t, complete_row(&t.def, old_row), &old_ext, capture)?;
        self.purge_long_values(t, &old_ext, &[]);
        self.account(key.len() as u64 + MEM_PURGE, false);
        self.purge.push(Purge::Row {
            tree: t.primary,
            key: key.clone(),
        });
        for (i, idx) in t.def.indexes.iter().enumerate() {
            let sk = index_key(&t.def, idx, &old_row);
            self.account((sk.len() + key.len()) as u64 + MEM_PURGE, false);
            self.list_entry(&sk);
            self.purge.push(Purge::Sec {
                table: t.clone(),
                index: i,
                skey: sk,
                pk: key.clone(),
            });
        }
        if capture {
            self.capture(RowChange {
                table: t.clone(),
                before: Some(old_row),
                after: None,
                no_fk_checks: self.binlog_no_fk_checks,
            });
        }
        self.inner
            .counters
            .rows_deleted
            .fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }

    /// Ends the transaction (`committed`: its changes stay). Purges still listed (a commit
    /// that an open view does not see) are deferred while the transaction is retained for
    /// such views, else run now, under the row locks. Closes the read view last.
    fn finish(&mut self, committed: bool) {
        if let Some(a) = self.active.take() {
            let retained = self.inner.active.end(a.id, committed && self.logged);
            // Visible now: a consistent snapshot waiting for placed commits may go on (before
            // the purges below, which may take long).
            if let (Some(sink), Some(t)) = (&self.inner.cfg.binlog, self.binlog_ticket.take()) {
                sink.finished(t);
            }
            let purge = std::mem::take(&mut self.purge);
            if committed && !purge.is_empty() {
                match retained {
                    Some(clock) => {
                        self.inner
                            .deferred
                            .lock()
                            .entry(clock)
                            .or_default()
                            .push(Deferred {
                                txn: a.id,
                                items: purge,
                            })
                    }
                    None => {
                        for p in purge {
                            if let Err(e) = self.purge_one(a.id, p) {
                                tracing::warn!(error = %e, "purge after commit failed");
                            }
                        }
                    }
                }
            }
            if retained.is_some() {
                if let Some(horizon) = self.inner.active.trim_history() {
                    run_deferred(&self.inner, horizon);
                }
                // The views this transaction was retained for may have closed between its
                // `end` and the push above: their closers did not see its purges.
                run_deferred(&self.inner, self.inner.active.horizon());
            }
            self.inner.locks.release(a.id, self.locks.iter());
            for g in self.gates.drain(..).chain(self.lock_gates.drain(..)) {
                g.leave(a.id);
            }
        }
        self.locks.clear();
        self.undo.clear();
        self.purge.clear();
        self.binlog.clear();
        self.inner
            .txn_memory
            .fetch_sub(std::mem::take(&mut self.mem), Ordering::Relaxed);
        self.mem_kept = 0;
        self.sec_listed = [0; 4];
        self.sec_revived = false;
        self.hint = None;
        self.logged = false;
        self.consistent = false;
        if let Some(v) = self.view.take() {
            let horizon = self.inner.active.close_view(&v);
            run_deferred(&self.inner, horizon);
        }
    }

    /// A savepoint here; `row`: for one row's write (see `Capture::mark`).
    pub fn savepoint(&mut self, row: bool) -> Savepoint {
        let sink = self.inner.cfg.binlog.clone();
        Savepoint {
            undo: self.undo.len(),
            purge: self.purge.len(),
            binlog: self.binlog.mark(sink.as_deref(), row),
            mem: self.mem - self.mem_kept,
        }
    }

    /// Undoes the changes made after `sp`, newest first, keeping the row locks. On an error
    /// the transaction's state is unknown and the caller must roll it back entirely (which
    /// re-applies every undo entry, the restored ones included: restoring is idempotent).
    pub fn rollback_to(&mut self, sp: Savepoint) -> Result<()> {
        if sp.undo > self.undo.len() || sp.purge > self.purge.len() || !self.binlog.has(sp.binlog) {
            return Err(Error::Internal(
                "rollback to a savepoint this transaction no longer has".into(),
            ));
        }
        let Some(a) = self.active.clone() else {
            return Ok(());
        };
        self.inner
            .apply_undo(a.id, self.undo.newest_first_from(sp.undo))?;
        self.undo.truncate(sp.undo);
        self.purge.truncate(sp.purge);
        self.binlog.cut(sp.binlog);
        self.release_to(&sp);
        Ok(())
    }

    pub fn commit(&mut self) -> Result<()> {
        let Some(a) = self.active.clone() else {
            self.finish(true);
            return Ok(());
        };
        if !self.logged {
            // Only locks were taken (locking reads): nothing to make durable.
            self.inner.counters.commits.fetch_add(1, Ordering::Relaxed);
            self.finish(true);
            return Ok(());
        }
        let (end, ticket) = match self.append_commit(a.id) {
            Ok(e) => e,
            Err(CommitFailure::Encode(e)) => {
                // Nothing was appended: the transaction rolls back like any other.
                self.rollback()?;
                return Err(e);
            }
            Err(CommitFailure::Log(e)) => {
                // The log is poisoned: nothing more can be written, not even the rollback.
                self.purge.clear();
                self.finish(false);
                return Err(e);
            }
        };
        let durable = self.inner.store.wal.commit(end);
        if let (Some(sink), Some(t)) = (&self.inner.cfg.binlog, ticket) {
            match &durable {
                Ok(()) => self.inner.write_binlog(sink.as_ref(), t, end.0),
                Err(_) => sink.abandon(t),
            }
        }
        // Purge while the row locks are still held, unless a read view that does not see
        // this transaction is open: then its delete-marks and old index entries stay until
        // such views are closed (`finish` defers them). Failures leave harmless garbage.
        // Long values wait for `finish`, after the transaction has left the active table:
        // until then a reader without a view may still be handed a before-image naming them.
        if self.inner.active.committed_unseen_by_none(&a) {
            let (later, now): (Vec<Purge>, Vec<Purge>) = std::mem::take(&mut self.purge)
                .into_iter()
                .partition(|p| matches!(p, Purge::Lob { .. }));
            self.purge = later;
            for p in now {
                if let Err(e) = self.purge_one(a.id, p) {
                    tracing::warn!(error = %e, "purge after commit failed");
                }
            }
        }
        self.inner.counters.commits.fetch_add(1, Ordering::Relaxed);
        self.binlog_ticket = ticket;
        self.finish(true);
        durable.map_err(Error::from)
    }

    /// Appends the commit record: a plain end, or one carrying the transaction's binary-log
    /// events, placed by the sink. Returns its end and the sink's ticket.
    fn append_commit(&mut self, id: u64) -> std::result::Result<(Lsn, Option<u64>), CommitFailure> {
        let wal = &self.inner.store.wal;
        let sink = match &self.inner.cfg.binlog {
            Some(s) if !self.binlog.is_empty() => s.clone(),
            _ => {
                let payload = tierdb_btree::redo::encode_txn_end(id, true);
                return match wal.append(&payload, |_, _| {}) {
                    Ok(end) => Ok((end, None)),
                    Err(e) => Err(CommitFailure::Log(e.into())),
                };
            }
        };
        let events = sink
            .encode_transaction(std::mem::take(&mut self.binlog))
            .map_err(CommitFailure::Encode)?;
        let mut failed = None;
        let mut append = |bytes: &[u8], last: bool| -> Result<(u64, u64)> {
            let payload = if last {
                tierdb_btree::redo::encode_txn_end_with(id, true, bytes)
            } else {
                crate::binlog::encode_part(id, bytes)
            };
            let mut start = 0;
            wal.append(&payload, |s, _| start = s.0)
                .map(|l| (start, l.0))
                .map_err(|e| {
                    let e: Error = e.into();
                    failed = Some(e.to_string());
                    e
                })
        };
        match sink.place(events, &mut append) {
            Ok((ticket, end)) => Ok((Lsn(end), Some(ticket))),
            // A failure of the log itself poisons it; any other failure came before the append.
            Err(e) if failed.is_some() => Err(CommitFailure::Log(e)),
            Err(e) => Err(CommitFailure::Encode(e)),
        }
    }

    fn purge_one(&self, me: u64, p: Purge) -> Result<()> {
        match p {
            Purge::Row { tree, key } => purge_row(&self.inner, me, tree, &key)?,
            Purge::Lob { tree, id, len } => purge_long_value(&self.inner, tree, id, len)?,
            Purge::Sec {
                table,
                index,
                skey,
                pk,
            } => {
                // The row is still locked: only this transaction can have made it map to
                // `skey` again, by putting that entry back (`note_entry_put`).
                if self.sec_revived {
                    if let Some(row) = self.get_key_current(&table, &pk)? {
                        if index_key(&table.def, &table.def.indexes[index], &row) == skey {
                            return Ok(());
                        }
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
        self.purge.clear();
        let Some(a) = self.active.clone() else {
            self.finish(false);
            return Ok(());
        };
        if !self.logged {
            self.inner
                .counters
                .rollbacks
                .fetch_add(1, Ordering::Relaxed);
            self.finish(false);
            return Ok(());
        }
        let undo = std::mem::take(&mut self.undo);
        let r = self
            .inner
            .apply_undo(a.id, undo.newest_first_from(0))
            .and_then(|_| {
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
        self.finish(false);
        r
    }
}

/// Removes the delete-marked entry `key` if `writer` is still the one that marked it (a
/// later insert of the key has replaced the mark otherwise).
/// Removes long value `id` of a replaced or deleted version (counted).
fn purge_long_value(inner: &Inner, tree: BTree, id: u64, len: u32) -> Result<()> {
    lob::remove(&inner.store, tree, id, len)?;
    inner
        .counters
        .long_values_purged
        .fetch_add(1, Ordering::Relaxed);
    Ok(())
}

fn purge_row(inner: &Inner, writer: u64, tree: BTree, key: &[u8]) -> Result<()> {
    let mut m = Mtr::new(&inner.store, 0);
    tree.modify(&mut m, key, |cur| match cur.and_then(header) {
        Some((f, w)) if f & FLAG_DELETED != 0 && w == writer => Modify::Delete,
        _ => Modify::Keep,
    })?;
    m.commit()?;
    Ok(())
}

/// Runs the deferred purges of transactions retained under clock values below `horizon`
/// (no open view was opened before they ended).
pub(crate) fn run_deferred(inner: &Inner, horizon: u64) {
    let ready: Vec<Deferred> = {
        let mut d = inner.deferred.lock();
        if d.first_key_value().is_none_or(|(&c, _)| c >= horizon) {
            return;
        }
        let later = d.split_off(&horizon);
        let ready = std::mem::replace(&mut *d, later);
        // Raised under the lock: `reclaim_dropped` sees a purge either listed or running.
        inner.deferred_running.fetch_add(1, Ordering::AcqRel);
        ready.into_values().flatten().collect()
    };
    for d in ready {
        for p in d.items {
            if let Err(e) = purge_deferred(inner, d.txn, p) {
                tracing::warn!(error = %e, "deferred purge failed");
            }
        }
    }
    inner.deferred_running.fetch_sub(1, Ordering::AcqRel);
}

/// One deferred purge, run without the row lock. A delete-mark goes only while `writer`'s
/// mark is still there. An index entry is checked and removed under its leaf's exclusive
/// latch, so a writer moving the row back to it (which must put the entry under that latch
/// after changing the row) cannot slip in between: it stays while any version of the row a
/// reader may still get (the stored one, or a running or retained writer's before-image)
/// maps to it — the transaction that later moved the row away purges it then — and while the
/// row's writer is still running (it may roll back to a savepoint, to a version that maps to
/// it).
fn purge_deferred(inner: &Inner, writer: u64, p: Purge) -> Result<()> {
    match p {
        Purge::Row { tree, key } => purge_row(inner, writer, tree, &key),
        Purge::Lob { tree, id, len } => purge_long_value(inner, tree, id, len),
        Purge::Sec {
            table,
            index,
            skey,
            pk,
        } => {
            let idx = &table.def.indexes[index];
            let maps = |b: &[u8]| -> bool {
                match header(b) {
                    Some((f, _)) if f & FLAG_DELETED == 0 => {
                        let mut ext = Vec::new();
                        match decode_row_ext(b, None, &mut ext) {
                            // A long value of an index column is not read under these
                            // latches: the entry is kept (garbage at worst, which readers skip).
                            Some(_) if ext.iter().any(|e| idx.columns.contains(&e.col)) => true,
                            Some(r) => {
                                index_key(&table.def, idx, &complete_row(&table.def, r)) == skey
                            }
                            None => true,
                        }
                    }
                    Some(_) => false,
                    None => true,
                }
            };
            let root = table.primary.root.0;
            let mut m = Mtr::new(&inner.store, 0);
            table.secondary[index].modify(&mut m, &skey, |cur| {
                if cur.is_none() {
                    return Modify::Keep;
                }
                let needed = table.primary.get(&inner.store, &pk, |v| match v {
                    None => false,
                    // A running writer of the row may roll back to a version between its
                    // first before-image and the stored one (a savepoint): keep the entry;
                    // that writer's own purge list covers it if it moves the row away.
                    Some(stored) => {
                        header(stored).is_none_or(|(_, w)| inner.active.may_roll_back(w))
                            || inner.active.any_version(root, &pk, stored, maps)
                    }
                });
                match needed {
                    Ok(false) => Modify::Delete,
                    _ => Modify::Keep,
                }
            })?;
            m.commit()?;
            Ok(())
        }
    }
}

/// How many entries key `index` (None: the primary key) of `t` holds within the bounds
/// (value prefixes, as a cursor takes them), counting at most `cap`: the planner's estimate.
/// It reads the tree as it is — entries of uncommitted rows and stale ones not yet purged
/// count too — with no transaction and no row lookups.
pub(crate) fn estimate_range(
    inner: &Inner,
    t: &Table,
    index: Option<usize>,
    lo: &Bound<Vec<Value>>,
    hi: &Bound<Vec<Value>>,
    cap: u64,
) -> Result<u64> {
    let (tree, lo, hi) = match index {
        None => {
            let enc = |p: &[Value]| pk_key(&t.def, p);
            (t.primary, lower_bound(lo, enc), upper_bound(hi, enc))
        }
        Some(i) => {
            let ix = t
                .def
                .indexes
                .get(i)
                .ok_or_else(|| Error::Internal(format!("index {i} out of range")))?;
            let cols = index_key_columns(&t.def, ix);
            let enc = |p: &[Value]| encode_key_of(&t.def, &cols, p);
            let tree = *t
                .secondary
                .get(i)
                .ok_or_else(|| Error::Internal(format!("index {i} out of range")))?;
            (tree, lower_bound(lo, enc), upper_bound(hi, enc))
        }
    };
    let from = match &lo {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
    };
    let mut n = 0u64;
    tree.scan(&inner.store, from, |k, _| {
        let within = match &hi {
            Bound::Unbounded => true,
            Bound::Included(h) => k <= h.as_slice(),
            Bound::Excluded(h) => k < h.as_slice(),
        };
        if within {
            n += 1;
        }
        within && n < cap
    })?;
    Ok(n)
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
    reader: ReadAs,
    source: Source,
    /// Where the next batch starts: the low bound going up, the high bound going down.
    next: Bound<Vec<u8>>,
    /// The far end: the high bound going up, the low bound going down.
    end: Bound<Vec<u8>>,
    /// Descending key order (`BTree::scan_rev`).
    desc: bool,
    /// Columns to materialise (None = all); for a secondary scan it includes the index
    /// columns, which the cursor compares against the index entry.
    want: Option<Arc<[bool]>>,
    buf: VecDeque<Row>,
    /// Secondary-index entries copied out of the leaf whose rows are not read yet: each is
    /// looked up when the caller asks for its row, so a reader that stops early (EXISTS,
    /// LIMIT) pays no lookups for the entries it never takes.
    pending: VecDeque<Vec<u8>>,
    /// Entries the next batch copies out, doubling to `BATCH` (see `first_batch`), so a
    /// reader wanting one row of a whole key does not decode a hundred.
    batch: usize,
    done: bool,
}

const BATCH: usize = 128;
const FIRST_BATCH: usize = 16;

impl Cursor {
    pub fn new_primary(
        inner: Arc<Inner>,
        table: Arc<Table>,
        reader: ReadAs,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
        want: Option<Arc<[bool]>>,
    ) -> Cursor {
        let lo = lower_bound(&lo, |p| pk_key(&table.def, p));
        let hi = upper_bound(&hi, |p| pk_key(&table.def, p));
        Cursor {
            inner,
            table,
            reader,
            source: Source::Primary,
            next: lo,
            end: hi,
            desc: false,
            want,
            buf: VecDeque::new(),
            pending: VecDeque::new(),
            batch: BATCH,
            done: false,
        }
        .first_batch()
    }

    pub fn new_secondary(
        inner: Arc<Inner>,
        table: Arc<Table>,
        reader: ReadAs,
        index: usize,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
        want: Option<Arc<[bool]>>,
    ) -> Cursor {
        let want = want.map(|w| {
            let mut w = w.to_vec();
            for &c in &table.def.indexes[index].columns {
                if let Some(x) = w.get_mut(c) {
                    *x = true;
                }
            }
            Arc::from(w)
        });
        let cols = index_key_columns(&table.def, &table.def.indexes[index]);
        let enc = |p: &[Value]| encode_key_of(&table.def, &cols, p);
        let (lo, hi) = (lower_bound(&lo, enc), upper_bound(&hi, enc));
        Cursor {
            inner,
            table,
            reader,
            source: Source::Secondary { index },
            next: lo,
            end: hi,
            desc: false,
            want,
            buf: VecDeque::new(),
            pending: VecDeque::new(),
            batch: BATCH,
            done: false,
        }
        .first_batch()
    }

    /// Turns a fresh cursor around: the same rows, in descending key order.
    fn descending(mut self) -> Cursor {
        std::mem::swap(&mut self.next, &mut self.end);
        self.desc = true;
        self.first_batch()
    }

    /// The first batch's size: small when the scan has no far end (a whole key read in
    /// order, which ORDER BY ... LIMIT and MIN / MAX stop early), whole otherwise (a bounded
    /// range is usually read to its end: one batch of 128, not 16 + 32 + 64).
    fn first_batch(mut self) -> Cursor {
        self.batch = if matches!(self.end, Bound::Unbounded) {
            FIRST_BATCH
        } else {
            BATCH
        };
        self
    }

    fn fill(&mut self) -> Result<()> {
        let from = match &self.next {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(k.as_slice()),
            Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        };
        // The last key seen, copied into one reused buffer (not one allocation per row).
        let mut last: Vec<u8> = Vec::new();
        let mut n = 0usize;
        let mut hit_end = true;
        let mut bad = false;
        let (inner, reader, table) = (&self.inner, &self.reader, &self.table);
        let want = self.want.as_deref();
        let batch = self.batch;
        let mut rows: Vec<Row> = Vec::new();
        let mut skeys: Vec<Vec<u8>> = Vec::new();
        // Rows of the batch with long values: (position in `rows`, key, references).
        let mut long: Vec<(usize, Vec<u8>, Vec<External>)> = Vec::new();
        let (end, desc) = (&self.end, self.desc);
        let within = |k: &[u8]| match end {
            Bound::Unbounded => true,
            Bound::Included(h) if desc => k >= h.as_slice(),
            Bound::Excluded(h) if desc => k > h.as_slice(),
            Bound::Included(h) => k <= h.as_slice(),
            Bound::Excluded(h) => k < h.as_slice(),
        };
        let tree = match self.source {
            Source::Primary => table.primary,
            Source::Secondary { index } => table.secondary[index],
        };
        let visit = |k: &[u8], v: &[u8]| {
            if !within(k) {
                return false;
            }
            if n == batch {
                hit_end = false;
                return false;
            }
            n += 1;
            last.clear();
            last.extend_from_slice(k);
            match self.source {
                Source::Primary => {
                    match visible_row(inner, reader, &table.def, tree.root.0, k, v, want) {
                        Ok(Some((r, ext))) if ext.is_empty() => rows.push(r),
                        Ok(Some((r, ext))) => {
                            // Read after the scan, outside the leaf latch.
                            long.push((rows.len(), k.to_vec(), ext));
                            rows.push(r);
                        }
                        Ok(None) => {}
                        Err(()) => {
                            bad = true;
                            return false;
                        }
                    }
                }
                Source::Secondary { .. } => skeys.push(k.to_vec()),
            }
            true
        };
        if desc {
            tree.scan_rev(&inner.store, from, visit)?;
        } else {
            tree.scan(&inner.store, from, visit)?;
        }
        still_valid(inner, reader)?;
        if bad {
            return Err(corrupt(table));
        }
        // Long values of the batch. One found gone means the version was replaced and
        // purged since the scan: the row is read again (a deleted one drops out).
        let mut gone: Vec<usize> = Vec::new();
        for (i, key, ext) in long {
            if !resolve_row(inner, table, &mut rows[i], &ext, want)? {
                match read_row(inner, reader, table, &key, want)? {
                    Some(r) => rows[i] = r,
                    None => gone.push(i),
                }
            }
        }
        for i in gone.into_iter().rev() {
            rows.remove(i);
        }
        self.pending.extend(skeys);
        inner
            .counters
            .rows_read
            .fetch_add(rows.len() as u64, Ordering::Relaxed);
        self.buf.extend(rows);
        self.batch = (batch * 2).min(BATCH);
        if !hit_end {
            self.next = Bound::Excluded(last);
        } else {
            self.done = true;
        }
        Ok(())
    }

    /// The row of secondary-index entry `sk`, when it is visible and still has the entry's
    /// values (None: the entry is stale for this reader).
    fn row_of_entry(&self, index: usize, sk: &[u8]) -> Result<Option<Row>> {
        let (inner, reader, table) = (&self.inner, &self.reader, &self.table);
        let idx = &table.def.indexes[index];
        let npk = table.def.key_columns().len();
        let vals = decode_key(sk).ok_or_else(|| corrupt(table))?;
        if vals.len() != idx.columns.len() + npk {
            return Err(corrupt(table));
        }
        // The key parts are re-encoded as they were stored (a case-insensitive part
        // decodes to its weights, which encode back to the same bytes).
        let pk = encode_key(&vals[idx.columns.len()..]);
        let row = match read_row(inner, reader, table, &pk, self.want.as_deref()) {
            Ok(row) => row,
            Err(e) => {
                still_valid(inner, reader)?;
                return Err(e);
            }
        };
        still_valid(inner, reader)?;
        let row = row.filter(|row| index_entry_matches(&table.def, idx, row, sk));
        if row.is_some() {
            inner.counters.rows_read.fetch_add(1, Ordering::Relaxed);
        }
        Ok(row)
    }

    pub fn next_row(&mut self) -> Result<Option<Row>> {
        loop {
            if let Some(r) = self.buf.pop_front() {
                return Ok(Some(r));
            }
            if let (Some(sk), Source::Secondary { index }) =
                (self.pending.pop_front(), &self.source)
            {
                if let Some(r) = self.row_of_entry(*index, &sk)? {
                    return Ok(Some(r));
                }
                continue;
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
                self.pending.clear();
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
        want: Option<Arc<[bool]>>,
        desc: bool,
    ) -> Result<Cursor> {
        let r = self.reader();
        self.check_view(t, &r)?;
        let c = match index {
            None => Cursor::new_primary(self.inner.clone(), t.clone(), r, lo, hi, want),
            Some(i) => {
                if i >= t.secondary.len() {
                    return Err(Error::Internal(format!("index {i} out of range")));
                }
                Cursor::new_secondary(self.inner.clone(), t.clone(), r, i, lo, hi, want)
            }
        };
        Ok(if desc { c.descending() } else { c })
    }
}

#[cfg(test)]
mod tests {
    //! Savepoints: a rollback to a savepoint undoes exactly the later changes (rows, index
    //! entries, delete-marks, key moves), keeps the row locks, nests, and a transaction that
    //! only locked rows writes nothing to the redo log.

    use super::*;
    use crate::{ColumnDef, ColumnType, Engine, EngineConfig, IndexDef, TableDef, Txn};
    use std::collections::{BTreeMap, BTreeSet};

    fn col(name: &str, ty: ColumnType) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable: false,
            auto_increment: false,
            default: None,
            fill: None,
            collation: crate::Collation::Binary,
            on_update_now: false,
        }
    }

    /// `(id INT PRIMARY KEY, k INT, pad VARCHAR(200), v INT, KEY k_idx (k))`.
    fn table_def() -> TableDef {
        let int = ColumnType::Int {
            bytes: 8,
            unsigned: false,
        };
        TableDef {
            name: "t".into(),
            columns: vec![
                col("id", int.clone()),
                col("k", int.clone()),
                col("pad", ColumnType::VarChar(200)),
                col("v", int),
            ],
            primary_key: vec![0],
            indexes: vec![IndexDef {
                name: "k_idx".into(),
                columns: vec![1],
                unique: false,
            }],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        }
    }

    fn row(id: i64, k: i64, v: i64) -> Row {
        let pad = vec![b'a' + (id + v).rem_euclid(26) as u8; 120 + v.rem_euclid(60) as usize];
        vec![
            Value::Int(id),
            Value::Int(k),
            Value::Bytes(pad),
            Value::Int(v),
        ]
    }

    fn pk(id: i64) -> Vec<Value> {
        vec![Value::Int(id)]
    }

    fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Table>) {
        let mut cfg = EngineConfig::under(dir);
        cfg.buffer_pool_size_bytes = 2 << 20;
        cfg.flush_log_at_trx_commit = 2;
        cfg.lock_wait_timeout = Duration::from_millis(200);
        let e = Engine::open(cfg).expect("open");
        e.create_database("d").expect("database");
        e.create_table("d", table_def()).expect("table");
        let t = e.table("d", "t").expect("table");
        (e, t)
    }

    type Model = BTreeMap<i64, Row>;

    fn put(tx: &mut Txn, t: &Arc<Table>, m: &mut Model, r: Row) {
        let id = r[0].as_i64().expect("id");
        tx.insert(t, r.clone()).expect("insert");
        m.insert(id, r);
    }

    fn upd(tx: &mut Txn, t: &Arc<Table>, m: &mut Model, id: i64, r: Row) {
        assert!(tx.update(t, &pk(id), r.clone()).expect("update"));
        m.remove(&id);
        m.insert(r[0].as_i64().expect("id"), r);
    }

    fn del(tx: &mut Txn, t: &Arc<Table>, m: &mut Model, id: i64) {
        assert!(tx.delete(t, &pk(id)).expect("delete"));
        m.remove(&id);
    }

    fn scan(tx: &mut Txn, t: &Arc<Table>) -> Model {
        tx.scan(t, Bound::Unbounded, Bound::Unbounded)
            .expect("scan")
            .map(|r| {
                let r = r.expect("row");
                (r[0].as_i64().expect("id"), r)
            })
            .collect()
    }

    /// After commit (purge done): the rows equal the model, the primary tree holds no
    /// delete-marked entry, the secondary tree holds exactly one entry per row, and index
    /// scans agree with the rows.
    fn assert_consistent(e: &Engine, t: &Arc<Table>, m: &Model) {
        let mut tx = e.begin();
        assert!(scan(&mut tx, t) == *m, "the rows differ from the model");
        let store = &e.inner.store;
        let mut primary = 0usize;
        t.primary
            .scan(store, Bound::Unbounded, |_, v| {
                assert!(header(v).is_some_and(|(f, _)| f & FLAG_DELETED == 0));
                primary += 1;
                true
            })
            .expect("primary scan");
        assert_eq!(primary, m.len(), "primary entries");
        let mut stored: BTreeSet<Vec<u8>> = BTreeSet::new();
        t.secondary[0]
            .scan(store, Bound::Unbounded, |k, _| {
                stored.insert(k.to_vec());
                true
            })
            .expect("secondary scan");
        let want: BTreeSet<Vec<u8>> = m
            .values()
            .map(|r| index_key(&t.def, &t.def.indexes[0], r))
            .collect();
        assert!(stored == want, "the secondary index differs from the rows");
        for k in 0..10 {
            let got: Vec<Row> = tx
                .index_scan(
                    t,
                    0,
                    Bound::Included(vec![Value::Int(k)]),
                    Bound::Included(vec![Value::Int(k)]),
                )
                .expect("index scan")
                .map(|r| r.expect("row"))
                .collect();
            let want: Vec<Row> = m
                .values()
                .filter(|r| r[1] == Value::Int(k))
                .cloned()
                .collect();
            assert!(got == want, "index scan of k = {k}");
        }
        tx.commit().expect("commit");
    }

    fn base(e: &Engine, t: &Arc<Table>, n: i64) -> Model {
        let mut m = Model::new();
        let mut tx = e.begin();
        for id in 0..n {
            put(&mut tx, t, &mut m, row(id, id % 10, 0));
        }
        tx.commit().expect("base commit");
        m
    }

    #[test]
    fn rollback_to_savepoint_keeps_exactly_the_first_part() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        let committed = base(&e, &t, 300);
        let mut m = committed.clone();
        let mut tx = e.begin();
        // Part 1: kept.
        for id in 1000..1050 {
            put(&mut tx, &t, &mut m, row(id, id % 10, 1));
        }
        for id in 0..30 {
            upd(&mut tx, &t, &mut m, id, row(id, (id + 1) % 10, 1));
        }
        for id in 50..60 {
            del(&mut tx, &t, &mut m, id);
        }
        upd(&mut tx, &t, &mut m, 60, row(2060, 3, 1));
        let kept = m.clone();
        let sp = tx.savepoint();
        // Part 2: undone. Enough inserts to split leaves; rows of part 1 changed again.
        for id in 3000..3400 {
            put(&mut tx, &t, &mut m, row(id, id % 10, 2));
        }
        for id in 0..10 {
            upd(&mut tx, &t, &mut m, id, row(id, (id + 2) % 10, 2));
        }
        for id in 100..150 {
            upd(&mut tx, &t, &mut m, id, row(id, (id + 5) % 10, 2));
        }
        for id in 150..200 {
            del(&mut tx, &t, &mut m, id);
        }
        for id in 1000..1010 {
            del(&mut tx, &t, &mut m, id);
        }
        upd(&mut tx, &t, &mut m, 2060, row(4060, 4, 2));
        upd(&mut tx, &t, &mut m, 200, row(5200, 5, 2));
        put(&mut tx, &t, &mut m, row(50, 7, 2)); // deleted in part 1
        assert!(scan(&mut tx, &t) == m, "the transaction sees part 2");
        tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
        let mut m = kept;
        assert!(scan(&mut tx, &t) == m, "only part 1 is left");
        {
            let mut other = e.begin();
            assert!(
                scan(&mut other, &t) == committed,
                "others see the committed rows"
            );
        }
        // Part 3: the transaction goes on after the partial rollback.
        upd(&mut tx, &t, &mut m, 0, row(0, 9, 3));
        upd(&mut tx, &t, &mut m, 120, row(120, 8, 3));
        put(&mut tx, &t, &mut m, row(3000, 1, 3));
        tx.commit().expect("commit");
        assert_consistent(&e, &t, &m);
    }

    #[test]
    fn index_entries_a_transaction_moved_back_to_survive_its_commit_purge() {
        // The purge at commit reads a row only when the transaction put an index entry back
        // whose hash it had listed (`sec_revived`): every other old entry goes unread. Both
        // kinds, with savepoints between, must end with exactly one entry per row.
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        let mut m = base(&e, &t, 50);
        let mut tx = e.begin();
        upd(&mut tx, &t, &mut m, 1, row(1, 5, 1)); // 1 -> 5 -> 1: entry (1, 1) back
        upd(&mut tx, &t, &mut m, 1, row(1, 1, 2));
        upd(&mut tx, &t, &mut m, 2, row(2, 7, 1)); // moved away for good
        del(&mut tx, &t, &mut m, 3); // deleted, then inserted again with the same k
        put(&mut tx, &t, &mut m, row(3, 3, 9));
        del(&mut tx, &t, &mut m, 4); // deleted for good
        upd(&mut tx, &t, &mut m, 7, row(7, 9, 1)); // 7 -> 9, back to 7 undone below
        let kept = m.clone();
        let sp = tx.savepoint();
        upd(&mut tx, &t, &mut m, 7, row(7, 7, 2));
        upd(&mut tx, &t, &mut m, 8, row(8, 0, 2));
        tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
        let m = kept;
        tx.commit().expect("commit");
        assert_consistent(&e, &t, &m);
        // A transaction that only moves entries away purges them all without reading.
        let mut m = m;
        let mut tx = e.begin();
        for id in 10..12 {
            upd(&mut tx, &t, &mut m, id, row(id, (id + 3) % 10, 3));
        }
        assert!(!tx.st.sec_revived, "no entry was put back");
        tx.commit().expect("commit");
        assert_consistent(&e, &t, &m);
    }

    #[test]
    fn savepoints_nest_and_a_full_rollback_still_restores_everything() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        let committed = base(&e, &t, 50);
        let mut m = committed.clone();
        let mut tx = e.begin();
        let sp1 = tx.savepoint();
        upd(&mut tx, &t, &mut m, 1, row(1, 5, 1));
        put(&mut tx, &t, &mut m, row(100, 5, 1));
        let after_first = m.clone();
        let sp2 = tx.savepoint();
        del(&mut tx, &t, &mut m, 2);
        upd(&mut tx, &t, &mut m, 1, row(1, 6, 2));
        tx.rollback_to_savepoint(sp2).expect("to sp2");
        assert!(scan(&mut tx, &t) == after_first);
        // Rolling back to the same savepoint twice is fine.
        tx.rollback_to_savepoint(sp2).expect("to sp2 again");
        tx.rollback_to_savepoint(sp1).expect("to sp1");
        assert!(scan(&mut tx, &t) == committed);
        // sp2 lies past the end now.
        assert!(matches!(
            tx.rollback_to_savepoint(sp2),
            Err(Error::Internal(_))
        ));
        let mut m = committed.clone();
        upd(&mut tx, &t, &mut m, 3, row(3, 1, 3));
        del(&mut tx, &t, &mut m, 4);
        let sp3 = tx.savepoint();
        put(&mut tx, &t, &mut m, row(4, 2, 3));
        tx.rollback_to_savepoint(sp3).expect("to sp3");
        // A full rollback after partial ones restores the committed rows.
        tx.rollback().expect("rollback");
        assert_consistent(&e, &t, &committed);
    }

    #[test]
    fn rollback_to_savepoint_keeps_the_row_locks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        base(&e, &t, 10);
        let mut a = e.begin();
        let sp = a.savepoint();
        assert!(a.update(&t, &pk(1), row(1, 1, 5)).expect("update"));
        a.rollback_to_savepoint(sp).expect("rollback to savepoint");
        assert_eq!(a.get(&t, &pk(1)).expect("get"), Some(row(1, 1, 0)));
        let mut b = e.begin();
        assert!(matches!(
            b.update(&t, &pk(1), row(1, 1, 7)),
            Err(Error::LockWaitTimeout)
        ));
        // A failed lock wait leaves b usable; after a's commit the row is free.
        a.commit().expect("commit a");
        assert!(b.update(&t, &pk(1), row(1, 1, 7)).expect("update b"));
        b.commit().expect("commit b");
        assert_eq!(e.begin().get(&t, &pk(1)).expect("get"), Some(row(1, 1, 7)));
    }

    #[test]
    fn a_locking_read_only_transaction_logs_nothing_and_releases_its_locks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        base(&e, &t, 10);
        let end = e.inner.store.wal.end_lsn();
        let mut a = e.begin();
        assert_eq!(a.lock_row(&t, &pk(3)).expect("lock"), Some(row(3, 3, 0)));
        assert_eq!(a.lock_row(&t, &pk(99)).expect("lock absent"), None);
        assert!(!a.has_writes());
        let mut b = e.begin();
        assert!(matches!(
            b.lock_row(&t, &pk(3)),
            Err(Error::LockWaitTimeout)
        ));
        assert!(matches!(
            b.insert(&t, row(99, 9, 0)),
            Err(Error::LockWaitTimeout)
        ));
        a.commit().expect("commit");
        assert_eq!(
            e.inner.store.wal.end_lsn(),
            end,
            "no redo for a locking read"
        );
        assert_eq!(b.lock_row(&t, &pk(3)).expect("lock"), Some(row(3, 3, 0)));
        b.rollback().expect("rollback");
        assert_eq!(e.inner.store.wal.end_lsn(), end);
        assert_eq!(e.inner.locks.held(), 0);
    }

    #[test]
    fn a_locking_read_returns_the_version_committed_while_it_waited() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (e, t) = open(dir.path());
        base(&e, &t, 10);
        let mut w = e.begin();
        assert!(w.update(&t, &pk(2), row(2, 4, 9)).expect("update"));
        let (e2, t2) = (e.clone(), t.clone());
        let reader = std::thread::spawn(move || {
            let mut r = e2.begin();
            // A plain read sees the committed version; the locking read waits for w.
            assert_eq!(r.get(&t2, &pk(2)).expect("get"), Some(row(2, 2, 0)));
            let mut res = r.lock_row(&t2, &pk(2));
            for _ in 0..20 {
                if !matches!(res, Err(Error::LockWaitTimeout)) {
                    break;
                }
                res = r.lock_row(&t2, &pk(2));
            }
            let got = res.expect("locking read");
            r.commit().expect("commit");
            got
        });
        std::thread::sleep(Duration::from_millis(100));
        w.commit().expect("commit");
        assert_eq!(reader.join().expect("reader"), Some(row(2, 4, 9)));
    }
}
