//! tierdb-engine: the one facade the SQL layer sees.
//!
//! Owns: the catalog (databases, tables, indexes), row and key encoding, transactions as seen
//! by a session (`Txn`), and engine start-up / recovery / shutdown.
//!
//! Must never: be bypassed — the SQL layer talks to storage only through this crate; expose
//! pages, latches or devices to callers; return a row version written by another
//! uncommitted transaction.

pub mod error;
pub mod keys;
pub mod types;
mod memstore;

pub use error::{Error, Result};
pub use types::{ColumnDef, ColumnType, IndexDef, Row, TableDef, Value};

use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Engine settings (the `[engine]` part of tierdb.toml; defaults documented in README).
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Folder of the data file (`tierdb.dat`) and the catalog.
    pub data_dir: PathBuf,
    /// Folder of the redo log segments.
    pub redo_dir: PathBuf,
    /// DRAM buffer pool budget in bytes.
    pub buffer_pool_size_bytes: u64,
    /// Like `innodb_flush_log_at_trx_commit`: 1 = fsync per commit, 2 = write per commit and
    /// fsync once a second, 0 = write and fsync once a second.
    pub flush_log_at_trx_commit: u8,
    /// Like `innodb_lock_wait_timeout`.
    pub lock_wait_timeout: Duration,
}

impl EngineConfig {
    pub fn under(dir: impl Into<PathBuf>) -> EngineConfig {
        let dir = dir.into();
        EngineConfig {
            data_dir: dir.join("data"),
            redo_dir: dir.join("redo"),
            buffer_pool_size_bytes: 128 << 20,
            flush_log_at_trx_commit: 1,
            lock_wait_timeout: Duration::from_secs(50),
        }
    }
}

/// A table as the SQL layer sees it: its definition and an opaque id.
#[derive(Debug)]
pub struct Table {
    pub db: String,
    pub def: TableDef,
    pub(crate) id: u64,
}

impl Table {
    pub fn id(&self) -> u64 {
        self.id
    }
}

/// The storage engine. Cheap to share (`Arc<Engine>`); every method is thread-safe.
pub struct Engine {
    inner: Arc<memstore::Store>,
}

impl Engine {
    /// Opens (creating if needed) the engine under `cfg`, running crash recovery.
    pub fn open(cfg: EngineConfig) -> Result<Arc<Engine>> {
        Ok(Arc::new(Engine { inner: Arc::new(memstore::Store::new(cfg)) }))
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        self.inner.create_database(name)
    }
    pub fn drop_database(&self, name: &str) -> Result<()> {
        self.inner.drop_database(name)
    }
    pub fn database_exists(&self, name: &str) -> bool {
        self.inner.database_exists(name)
    }
    /// Sorted names of all databases.
    pub fn databases(&self) -> Vec<String> {
        self.inner.databases()
    }
    pub fn create_table(&self, db: &str, def: TableDef) -> Result<()> {
        self.inner.create_table(db, def)
    }
    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        self.inner.drop_table(db, name)
    }
    /// Adds a secondary index and fills it from the table's rows.
    pub fn create_index(&self, db: &str, table: &str, index: IndexDef) -> Result<()> {
        self.inner.create_index(db, table, index)
    }
    pub fn drop_index(&self, db: &str, table: &str, index: &str) -> Result<()> {
        self.inner.drop_index(db, table, index)
    }
    /// Looks a table up (names compare case-sensitively, like MySQL on Linux).
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        self.inner.table(db, name)
    }
    /// Sorted table names of `db`.
    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        self.inner.tables(db)
    }
    /// Starts a transaction. Plain reads see the latest committed version (READ COMMITTED).
    pub fn begin(&self) -> Txn {
        Txn { store: self.inner.clone(), undo: Vec::new(), done: false }
    }
    /// Engine counters for `SHOW GLOBAL STATUS`, as (name, value) pairs.
    pub fn status(&self) -> Vec<(String, String)> {
        self.inner.status()
    }
    /// Engine settings for `SHOW VARIABLES`, as (name, value) pairs, e.g.
    /// `innodb_buffer_pool_size`, `innodb_flush_log_at_trx_commit`, `bpe_enabled`.
    pub fn variables(&self) -> Vec<(String, String)> {
        vec![
            ("innodb_buffer_pool_size".into(), self.inner.cfg().buffer_pool_size_bytes.to_string()),
            ("innodb_flush_log_at_trx_commit".into(), self.inner.cfg().flush_log_at_trx_commit.to_string()),
            ("innodb_lock_wait_timeout".into(), self.inner.cfg().lock_wait_timeout.as_secs().to_string()),
        ]
    }
    /// `SET GLOBAL name = value` for an engine setting. `Ok(false)`: not an engine variable
    /// (the SQL layer handles it). Errors: a bad value, or a read-only variable.
    pub fn set_variable(&self, name: &str, value: &Value) -> Result<bool> {
        let _ = (name, value);
        Ok(false)
    }
    /// Flushes everything and writes a checkpoint; the engine stays usable.
    pub fn checkpoint(&self) -> Result<()> {
        Ok(())
    }
    /// Clean shutdown: flush, checkpoint, stop background threads.
    pub fn shutdown(&self) -> Result<()> {
        Ok(())
    }
}

/// A transaction. Dropping it without `commit` rolls it back.
pub struct Txn {
    store: Arc<memstore::Store>,
    undo: Vec<memstore::Undo>,
    done: bool,
}

/// Rows of a scan, in key order. Owns what it needs; holds no latch between calls.
pub type RowCursor = Box<dyn Iterator<Item = Result<Row>> + Send>;

impl Txn {
    /// Point lookup by full primary key.
    pub fn get(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        self.store.get(t, pk)
    }
    /// Rows whose primary key lies within the bounds. Bounds are on a key prefix: `n` values
    /// compare against the first `n` primary key columns.
    pub fn scan(&mut self, t: &Table, lo: Bound<Vec<Value>>, hi: Bound<Vec<Value>>) -> Result<RowCursor> {
        self.store.scan(t, None, lo, hi)
    }
    /// Rows through secondary index number `index` (position in `TableDef::indexes`), in index
    /// order (ties in primary key order). Bounds as in `scan`, on the index columns.
    pub fn index_scan(&mut self, t: &Table, index: usize, lo: Bound<Vec<Value>>, hi: Bound<Vec<Value>>) -> Result<RowCursor> {
        self.store.scan(t, Some(index), lo, hi)
    }
    /// Inserts a row. An AUTO_INCREMENT column given as NULL (or 0) gets the next value,
    /// which is returned. Errors: DuplicateKey, NotNull, RowTooLarge, Deadlock, LockWaitTimeout.
    pub fn insert(&mut self, t: &Table, row: Row) -> Result<Option<i64>> {
        self.store.insert(t, row, &mut self.undo)
    }
    /// Replaces the row with primary key `pk` by `new_row` (which may change the key).
    /// Returns false when no such row exists.
    pub fn update(&mut self, t: &Table, pk: &[Value], new_row: Row) -> Result<bool> {
        self.store.update(t, pk, new_row, &mut self.undo)
    }
    /// Deletes the row with primary key `pk`; false when absent.
    pub fn delete(&mut self, t: &Table, pk: &[Value]) -> Result<bool> {
        self.store.delete(t, pk, &mut self.undo)
    }
    /// Makes the transaction's changes durable (per `flush_log_at_trx_commit`) and visible.
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        self.undo.clear();
        Ok(())
    }
    /// Undoes every change of the transaction.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.store.rollback(std::mem::take(&mut self.undo))
    }
    /// True when the transaction has written something.
    pub fn has_writes(&self) -> bool {
        !self.undo.is_empty()
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.store.rollback(std::mem::take(&mut self.undo));
        }
    }
}
