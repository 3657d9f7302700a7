//! tierdb-engine: the one facade the SQL layer sees.
//!
//! Owns: the catalog (databases, tables, indexes), row and key encoding (keys under each
//! column's collation, `collation`), transactions as seen
//! by a session (`Txn`), and engine start-up / recovery / shutdown.
//!
//! Must never: be bypassed — the SQL layer talks to storage only through this crate; expose
//! pages, latches or devices to callers; return a row version written by another
//! uncommitted transaction.

pub mod binlog;
mod catalog;
pub mod error;
mod gate;
pub use gate::TableLockMode;
pub mod collation;
mod inner;
pub mod keys;
mod lob;
pub mod pagemap;
mod rowcodec;
mod storage;
mod txn;
mod txns;
pub mod types;

pub use binlog::{BinlogSink, Capture, RowChange};
pub use collation::Collation;
pub use error::{Error, Result};
pub use keys::time_micros;
pub use tierdb_txn::{report_lock_waits, watch_interrupt, LockMode};
pub use txn::Savepoint;
pub use types::{
    CheckDef, ColumnDef, ColumnType, FkAction, ForeignKeyDef, IndexDef, LobSize, Row, TableDef,
    Value, ViewDef,
};

use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tierdb_btree::BTree;

pub use tierdb_bpe::{AdmissionPolicy as BpeAdmission, BpeConfig};
pub use tierdb_io::ThrottleConfig;

/// One change of an account entry: its key parts and new value (None: delete).
pub type AccountChange = (Vec<Vec<u8>>, Option<Vec<u8>>);

/// Engine settings (the `[engine]` part of tierdb.toml; defaults documented in README).
#[derive(Clone)]
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
    /// Most bytes of row history (before-images of ended transactions) kept for open
    /// REPEATABLE READ views; past it the oldest views are released and their next read fails
    /// (`Error::ReadViewTooOld`). 0 = no limit.
    pub read_view_history_limit: u64,
    /// Most bytes all running transactions may hold in memory (row locks, undo entries,
    /// before-images, binary-log changes); past it the transaction adding to it, if it
    /// holds a sixteenth of the limit or more, fails with `Error::TransactionMemoryFull`
    /// (MySQL 1206) and is rolled back, instead of the server running out of memory. A soft
    /// limit: smaller transactions go on past it, and one that stopped growing is not
    /// refused. 0 = automatic (`auto_transaction_memory_limit`); at least
    /// `MIN_TRANSACTION_MEMORY_LIMIT`.
    pub transaction_memory_limit: u64,
    /// Relocating page writes: dirty pages are written in batches to adjacent free slots of
    /// the data file (one I/O per batch) and a page map, made durable by each checkpoint,
    /// says where each page is. Off: each page is written in place (page `n` at byte
    /// `n * 16384`), one I/O per page or per run of neighbours. A data file once written
    /// with it on keeps needing it (its map file says where the pages are).
    pub relocating_writes: bool,
    /// With relocating writes: free slots the data file may hold beyond its live pages, in
    /// percent of them (10..=400), before batches settle for short runs of free slots (more
    /// write I/Os). Once the file has used up that room the cleaners keep long runs free.
    pub relocating_free_space_pct: u64,
    /// The data file's room is at least this many slots (1024 = 16 MiB; not in tierdb.toml,
    /// tests make it small so that a small table reaches its room).
    pub relocating_min_room_slots: u64,
    /// In-process emulation of a slow cloud disk for the data file (IOPS cap, latency), for
    /// machines where kernel throttling is unavailable. None = the device as it is.
    pub data_throttle: Option<ThrottleConfig>,
    /// The Buffer Pool Extension (clean-page cache on fast devices). None = no BPE at all;
    /// `Some` with `enabled = false` = present but off (it can be switched on online).
    pub bpe: Option<tierdb_bpe::BpeConfig>,
    /// Test seam: opens BPE device files (e.g. wrapped in `tierdb_io::Faulty`).
    pub bpe_opener: Option<tierdb_bpe::DeviceOpener>,
    /// Test seam: wraps the data file device (e.g. in `tierdb_io::Faulty`).
    pub data_device_wrapper: Option<DeviceWrapper>,
    /// Test seam: opens redo segment files (e.g. wrapped in `tierdb_io::Faulty`).
    pub redo_opener: Option<tierdb_wal::DeviceOpener>,
    /// The binary log: committed changes of non-TEMPORARY tables go to it, inside their
    /// commit records (see `binlog`). None = no binary log (`log_bin = OFF`).
    pub binlog: Option<Arc<dyn BinlogSink>>,
    /// Bytes of keys CREATE INDEX sorts and inserts at a time (64 MiB; not in tierdb.toml,
    /// tests make it small to build in several batches).
    pub index_build_batch_bytes: usize,
}

/// Smallest `transaction_memory_limit` in force (a smaller setting is raised to it): below
/// it, transactions of a few rows would be refused.
pub const MIN_TRANSACTION_MEMORY_LIMIT: u64 = 1 << 20;

/// The `transaction_memory_limit` in force for a setting of `bytes` (0: automatic).
pub fn transaction_memory_limit(bytes: u64, buffer_pool_bytes: u64) -> u64 {
    match bytes {
        0 => auto_transaction_memory_limit(buffer_pool_bytes),
        b => b.max(MIN_TRANSACTION_MEMORY_LIMIT),
    }
}

/// The automatic `transaction_memory_limit`: half of the memory the machine (or the
/// cgroup the server runs in) has beyond the buffer pool, at least 256 MiB (1 GiB when the
/// machine's memory cannot be read).
pub fn auto_transaction_memory_limit(buffer_pool_bytes: u64) -> u64 {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut total: Option<u64> = read("/proc/meminfo").and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
    });
    for cg in [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ] {
        if let Some(limit) = read(cg).and_then(|v| v.trim().parse::<u64>().ok()) {
            total = Some(total.map_or(limit, |t| t.min(limit)));
        }
    }
    match total {
        Some(t) => (t.saturating_sub(buffer_pool_bytes) / 2).max(256 << 20),
        None => 1 << 30,
    }
}

/// Wraps a device; used by tests to inject faults below the engine.
#[derive(Clone)]
pub struct DeviceWrapper(pub Arc<WrapFn>);

/// The function inside a `DeviceWrapper`.
pub type WrapFn = dyn Fn(Arc<dyn tierdb_io::Device>) -> Arc<dyn tierdb_io::Device> + Send + Sync;

impl std::fmt::Debug for DeviceWrapper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceWrapper")
    }
}

impl std::fmt::Debug for EngineConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineConfig")
            .field("data_dir", &self.data_dir)
            .field("redo_dir", &self.redo_dir)
            .field("buffer_pool_size_bytes", &self.buffer_pool_size_bytes)
            .field("flush_log_at_trx_commit", &self.flush_log_at_trx_commit)
            .field("lock_wait_timeout", &self.lock_wait_timeout)
            .field("read_view_history_limit", &self.read_view_history_limit)
            .field("transaction_memory_limit", &self.transaction_memory_limit)
            .field("relocating_writes", &self.relocating_writes)
            .field("relocating_free_space_pct", &self.relocating_free_space_pct)
            .field("data_throttle", &self.data_throttle)
            .field("bpe", &self.bpe)
            .field("binlog", &self.binlog.is_some())
            .finish()
    }
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
            read_view_history_limit: 1 << 30,
            transaction_memory_limit: 0,
            relocating_writes: true,
            relocating_free_space_pct: pagemap::DEFAULT_FREE_PCT,
            relocating_min_room_slots: 1024,
            data_throttle: None,
            data_device_wrapper: None,
            redo_opener: None,
            bpe: None,
            bpe_opener: None,
            binlog: None,
            index_build_batch_bytes: 64 << 20,
        }
    }
}

/// The start of every TEMPORARY table's key; no SQL identifier holds a NUL.
pub(crate) const TEMP_KEY_PREFIX: &str = "\0tmp\0";

pub(crate) fn is_temporary_key(key: &str) -> bool {
    key.starts_with(TEMP_KEY_PREFIX)
}

/// A table as the SQL layer sees it: its definition and an opaque id.
#[derive(Debug)]
pub struct Table {
    pub db: String,
    pub def: TableDef,
    /// The name the table is filed under in its database (the catalog key and the lookup
    /// name): `def.name` for a table, an unspeakable `\0tmp\0<id>` for a session's
    /// TEMPORARY table, so it never collides with or shows among the database's tables.
    pub(crate) key: String,
    pub(crate) id: u64,
    pub(crate) primary: BTree,
    pub(crate) secondary: Vec<BTree>,
    /// Long values kept off the rows (`lob`); None for a table created before they existed
    /// (its rows must fit a leaf, as then).
    pub(crate) lob: Option<BTree>,
    /// The last long-value id handed out; shared by every handle of the same trees.
    pub(crate) lob_ids: Arc<std::sync::atomic::AtomicU64>,
    /// Shared by every handle of the table (a new handle is made when an index is added).
    pub(crate) auto_inc: Arc<AtomicI64>,
    /// The last hidden row id handed out (tables without a primary key); shared by handles.
    pub(crate) row_id: Arc<AtomicI64>,
    /// Shared by every handle of the table: writers and index builds keep apart through it.
    pub(crate) gate: Arc<gate::TableGate>,
    /// The gate version this handle was made under (older than the gate's: stale handle).
    pub(crate) version: u64,
    /// When this handle's trees were made (`ActiveTxns::stamp`): read views opened before
    /// cannot read through it (1412, as InnoDB).
    pub(crate) since: u64,
}

impl Table {
    /// Root pages of the table's trees: the primary tree, then each secondary index.
    pub(crate) fn roots(&self) -> impl Iterator<Item = tierdb_page::PageId> + '_ {
        std::iter::once(self.primary.root)
            .chain(self.secondary.iter().map(|s| s.root))
            .chain(self.lob.map(|l| l.root))
    }
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The definition version this handle was made under (a handle made after an ALTER,
    /// CREATE INDEX or TRUNCATE differs in id or version from one made before).
    pub fn handle_version(&self) -> u64 {
        self.version
    }
    /// A session's TEMPORARY table (`Engine::create_temporary_table`).
    pub fn is_temporary(&self) -> bool {
        is_temporary_key(&self.key)
    }
    /// The table has a UNIQUE secondary index (its writes then take unique-value locks).
    pub(crate) fn has_unique(&self) -> bool {
        self.def.indexes.iter().any(|i| i.unique)
    }
    /// The engine error for a gate that could not be passed.
    pub(crate) fn gate_error(&self, e: gate::GateError) -> Error {
        match e {
            gate::GateError::Timeout => Error::LockWaitTimeout,
            gate::GateError::Dropped => Error::NoSuchTable {
                db: self.db.clone(),
                table: self.def.name.clone(),
            },
        }
    }
    /// The value the next AUTO_INCREMENT insert would get (SHOW TABLE STATUS,
    /// INFORMATION_SCHEMA.TABLES).
    pub fn next_auto_increment(&self) -> u64 {
        (self.auto_inc.load(Ordering::Relaxed).max(0) as u64) + 1
    }
}

/// The storage engine. Cheap to share (`Arc<Engine>`); every method is thread-safe.
pub struct Engine {
    inner: Arc<inner::Inner>,
    checkpointer: parking_lot::Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Engine {
    /// About how many entries key `index` (None: the primary key) of `t` holds between the
    /// bounds (value prefixes, as `Txn::scan_columns` takes them), counting at most `cap`.
    /// An estimate for choosing among keys: it takes no transaction and counts entries of
    /// uncommitted and deleted rows too.
    pub fn estimate_range(
        &self,
        t: &Table,
        index: Option<usize>,
        lo: &Bound<Vec<Value>>,
        hi: &Bound<Vec<Value>>,
        cap: u64,
    ) -> Result<u64> {
        txn::estimate_range(&self.inner, t, index, lo, hi, cap)
    }
    /// Opens (creating if needed) the engine under `cfg`, running crash recovery.
    pub fn open(cfg: EngineConfig) -> Result<Arc<Engine>> {
        let inner = inner::Inner::open(cfg)?;
        let i2 = inner.clone();
        let h = std::thread::Builder::new()
            .name("tierdb-checkpointer".into())
            .spawn(move || i2.run_checkpointer())
            .map_err(|e| Error::Internal(format!("cannot start the checkpointer: {e}")))?;
        if inner.cfg.relocating_writes {
            // Several cleaners: each waits on its own I/Os, which queue behind the sessions'
            // on an IOPS-capped disk.
            for n in 0..inner::CLEANER_THREADS {
                let i3 = inner.clone();
                std::thread::Builder::new()
                    .name(format!("tierdb-cleaner-{n}"))
                    .spawn(move || i3.run_cleaner())
                    .map_err(|e| {
                        Error::Internal(format!("cannot start the data file cleaner: {e}"))
                    })?;
            }
        }
        Ok(Arc::new(Engine {
            inner,
            checkpointer: parking_lot::Mutex::new(Some(h)),
        }))
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        self.inner.create_database(name)
    }
    pub fn drop_database(&self, name: &str) -> Result<()> {
        self.inner.drop_database(name)
    }
    pub fn database_exists(&self, name: &str) -> bool {
        self.inner.catalog.read().contains_key(name)
    }
    /// Sorted names of all databases.
    pub fn databases(&self) -> Vec<String> {
        self.inner.catalog.read().keys().cloned().collect()
    }
    pub fn create_table(&self, db: &str, def: TableDef) -> Result<()> {
        self.inner.create_table(db, def)
    }
    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        self.inner.drop_table(db, name)
    }
    /// Renames tables, all or none (`(db, from, to_db, to)` per table, applied in order, so
    /// `a TO tmp, b TO a, tmp TO b` swaps two tables). NoSuchTable, NoSuchDatabase,
    /// TableExists, or LockWaitTimeout while a writer or LOCK TABLES holder keeps one open.
    pub fn rename_tables(&self, pairs: &[(String, String, String, String)]) -> Result<()> {
        self.inner.rename_tables(pairs)
    }
    /// `CREATE [OR REPLACE] VIEW`: TableExists when a table (or, without `replace`, a view)
    /// has the name; NoSuchDatabase.
    pub fn create_view(&self, db: &str, def: ViewDef, replace: bool) -> Result<()> {
        self.inner.create_view(db, def, replace)
    }
    /// `DROP VIEW`: NoSuchTable when it is not a view.
    pub fn drop_view(&self, db: &str, name: &str) -> Result<()> {
        self.inner.drop_view(db, name)
    }
    /// Renames views within their database (`(db, from, to)`), all or none.
    pub fn rename_views(&self, pairs: &[(String, String, String)]) -> Result<()> {
        self.inner.rename_views(pairs)
    }
    /// The account entries the SQL layer stored (`change_accounts`), in key order: key parts
    /// and value, both opaque to the engine.
    pub fn account_entries(&self) -> Vec<(Vec<Vec<u8>>, Vec<u8>)> {
        let m = self.inner.accounts.read();
        m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
    /// Sets (Some) or deletes (None) account entries in one durable catalog write: all or
    /// none after a crash. Invalid for an empty key or an entry over
    /// `catalog::ACCOUNT_ENTRY_MAX` bytes.
    pub fn change_accounts(&self, changes: Vec<crate::AccountChange>) -> Result<()> {
        self.inner.change_accounts(changes)
    }
    /// The view `db`.`name`, if there is one (names compare like table names).
    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.inner.view(db, name)
    }
    /// The views of `db`, sorted by name.
    pub fn views(&self, db: &str) -> Vec<Arc<ViewDef>> {
        self.inner.views(db)
    }
    /// Adds a secondary index and fills it from the table's committed rows.
    pub fn create_index(&self, db: &str, table: &str, index: IndexDef) -> Result<()> {
        self.inner.create_index(db, table, index)
    }
    /// Adds `col` after the last column; `col.fill` is what existing rows read.
    pub fn add_column(&self, db: &str, table: &str, col: ColumnDef) -> Result<()> {
        self.inner.add_column(db, table, col, None)
    }
    /// `add_column`, the table's CHECK constraints becoming `checks` in the same catalog
    /// write (a check declared with the column; the stored rows are not read through it).
    pub fn add_column_with_checks(
        &self,
        db: &str,
        table: &str,
        col: ColumnDef,
        checks: Option<Vec<CheckDef>>,
    ) -> Result<()> {
        self.inner.add_column(db, table, col, checks)
    }
    pub fn drop_index(&self, db: &str, table: &str, index: &str) -> Result<()> {
        self.inner.drop_index(db, table, index)
    }
    /// Gives column `pos` definition `col` (MODIFY / CHANGE / RENAME COLUMN, SET / DROP
    /// DEFAULT) without rewriting rows: the stored form must not change (NotSupported
    /// otherwise). With `check`, every row's value must pass it first (DataTruncated at the
    /// first that does not). Waits for the table's writers like an index build.
    pub fn alter_column(
        &self,
        db: &str,
        table: &str,
        pos: usize,
        col: ColumnDef,
        check: Option<&mut dyn FnMut(&Value) -> bool>,
    ) -> Result<()> {
        self.inner.alter_column(db, table, pos, col, check)
    }
    /// Replaces the table's CHECK constraints (the SQL layer checks them); with `verify`,
    /// every committed row must pass it first (its error stops the change). Waits for the
    /// table's writers like an index build.
    pub fn set_checks(
        &self,
        db: &str,
        table: &str,
        checks: Vec<CheckDef>,
        verify: Option<&mut RowVerifier<'_>>,
    ) -> Result<()> {
        self.inner.set_checks(db, table, checks, verify)
    }
    /// Rewrites every row of the table into definition `def` (same name) through `map`
    /// (old columns → new columns): DROP COLUMN, type changes, column order, a new primary
    /// key. The table must still have definition `from` (else TableDefinitionChanged).
    /// Writers wait meanwhile; a failure or a crash leaves the table as it was. Returns the
    /// rows copied.
    pub fn rebuild_table(
        &self,
        db: &str,
        table: &str,
        from: &TableDef,
        def: TableDef,
        map: &mut dyn FnMut(Vec<Value>) -> Result<Vec<Value>>,
    ) -> Result<u64> {
        self.inner.rebuild_table(db, table, from, def, map)
    }

    /// True when column definition `old` can become `new` without rewriting rows (same
    /// stored form; a key column keeps its collation; AUTO_INCREMENT stays as it is).
    pub fn changes_in_place(old: &ColumnDef, new: &ColumnDef, keyed: bool) -> bool {
        inner::storage_compatible(old, new, keyed).is_ok()
    }
    /// Looks a table up (names compare case-sensitively, like MySQL on Linux). A TEMPORARY
    /// table is found by its key only (`create_temporary_table`).
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        self.inner.table(db, name)
    }
    /// `CREATE TEMPORARY TABLE`: a table in `db` that no name finds (nor `tables` lists) but
    /// the returned key, which its session keeps; the SQL layer gives it no foreign keys. It is stored and logged
    /// like any table (so a transaction's changes to it roll back), dropped with
    /// `drop_table(db, key)`, and any left behind by a crash or a shutdown is dropped when the
    /// engine opens. NoSuchDatabase when `db` does not exist.
    pub fn create_temporary_table(&self, db: &str, def: TableDef) -> Result<String> {
        self.inner
            .create_table_filed(db, def, true)
            .map(|t| t.key.clone())
    }
    /// `name` in `db` is the key of a TEMPORARY table that exists.
    pub fn is_temporary_table(&self, db: &str, name: &str) -> bool {
        is_temporary_key(name) && self.inner.table(db, name).is_ok()
    }
    /// Renames the TEMPORARY table filed under `key` (its definition's name; the key stays).
    pub fn rename_temporary_table(&self, db: &str, key: &str, to: &str) -> Result<()> {
        self.inner.rename_temporary_table(db, key, to)
    }
    /// The tables whose FOREIGN KEYs reference `db`.`table`: (child, position of the key in
    /// its `foreign_keys`), the table itself included when it references itself. Free while
    /// no table has a foreign key.
    pub fn referencing(&self, db: &str, table: &str) -> Vec<(Arc<Table>, usize)> {
        self.inner.referencing(db, table)
    }
    /// False while no table has ever had a FOREIGN KEY (then no row is referenced).
    pub fn any_foreign_keys(&self) -> bool {
        self.inner
            .any_foreign_keys
            .load(std::sync::atomic::Ordering::Acquire)
    }
    /// Sorted table names of `db` (TEMPORARY tables are not listed).
    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        let c = self.inner.catalog.read();
        Ok(c.get(db)
            .ok_or_else(|| Error::NoSuchDatabase(db.into()))?
            .keys()
            .filter(|k| !is_temporary_key(k))
            .cloned()
            .collect())
    }
    /// Starts a transaction. Plain reads see the latest committed version (READ COMMITTED)
    /// until `Txn::consistent_reads` gives it a read view (REPEATABLE READ).
    /// A transaction costs nothing until its first write.
    pub fn begin(&self) -> Txn {
        Txn {
            st: txn::TxnState::new(self.inner.clone()),
            done: false,
        }
    }
    /// A transaction of session `owner` (non-zero): it may write tables that session holds
    /// WRITE-locked (`lock_table`).
    pub fn begin_as(&self, owner: u64) -> Txn {
        let mut t = self.begin();
        t.st.owner = owner;
        t
    }
    /// `LOCK TABLES`: session `owner` (non-zero) takes a `mode` lock on `t`, waiting up to
    /// `innodb_lock_wait_timeout` for other sessions' writing transactions and conflicting
    /// locks. READ: nobody writes the table; WRITE: only `owner`'s transactions write it.
    /// Plain reads are never blocked. Errors: LockWaitTimeout.
    pub fn lock_table(&self, t: &Table, owner: u64, mode: TableLockMode) -> Result<()> {
        let timeout = self.inner.lock_wait();
        t.gate
            .lock(owner, mode, timeout)
            .map_err(|e| t.gate_error(e))
    }
    /// `UNLOCK TABLES` for `t` (no effect when `owner` holds no lock on it).
    pub fn unlock_table(&self, t: &Table, owner: u64) {
        t.gate.unlock(owner);
    }
    /// Engine counters for `SHOW GLOBAL STATUS`, as (name, value) pairs.
    pub fn status(&self) -> Vec<(String, String)> {
        let i = &self.inner;
        let p = i.store.pool.stats();
        let w = i.store.wal.stats();
        let c = &i.counters;
        let l = i.locks.stats();
        let ld = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed).to_string();
        let mut v: Vec<(String, String)> = vec![
            (
                "Innodb_buffer_pool_read_requests".into(),
                p.read_requests.to_string(),
            ),
            ("Innodb_buffer_pool_reads".into(), p.reads.to_string()),
            (
                "Innodb_buffer_pool_pages_total".into(),
                p.pages_total.to_string(),
            ),
            (
                "Innodb_buffer_pool_pages_data".into(),
                p.pages_data.to_string(),
            ),
            (
                "Innodb_buffer_pool_pages_dirty".into(),
                p.pages_dirty.to_string(),
            ),
            (
                "Innodb_buffer_pool_pages_free".into(),
                p.pages_free.to_string(),
            ),
            (
                "Innodb_buffer_pool_pages_flushed".into(),
                p.pages_flushed.to_string(),
            ),
            ("Tierdb_data_page_write_ios".into(), p.write_ios.to_string()),
            (
                "Tierdb_buffer_pool_evictions_dirty".into(),
                p.evictions_dirty.to_string(),
            ),
            (
                "Innodb_buffer_pool_bytes_data".into(),
                (p.pages_data * tierdb_page::PAGE_SIZE as u64).to_string(),
            ),
            (
                "Innodb_buffer_pool_resident_bytes".into(),
                p.resident_bytes.to_string(),
            ),
            (
                "Innodb_buffer_pool_evictions".into(),
                p.evictions.to_string(),
            ),
            ("Innodb_rows_read".into(), ld(&c.rows_read)),
            ("Innodb_rows_inserted".into(), ld(&c.rows_inserted)),
            ("Innodb_rows_updated".into(), ld(&c.rows_updated)),
            ("Innodb_rows_deleted".into(), ld(&c.rows_deleted)),
            ("Innodb_row_lock_waits".into(), ld(&l.waits)),
            ("Innodb_deadlocks".into(), ld(&l.deadlocks)),
            ("Innodb_row_lock_timeouts".into(), ld(&l.timeouts)),
            ("Innodb_os_log_fsyncs".into(), w.fsyncs.to_string()),
            ("Innodb_log_writes".into(), w.appends.to_string()),
            ("Innodb_os_log_written".into(), w.appended_bytes.to_string()),
            (
                "Tierdb_redo_segments_from_spare".into(),
                w.segments_from_spare.to_string(),
            ),
            ("Tierdb_commits".into(), ld(&c.commits)),
            (
                "Tierdb_long_values_written".into(),
                ld(&c.long_values_written),
            ),
            ("Tierdb_long_values_read".into(), ld(&c.long_values_read)),
            (
                "Tierdb_long_values_purged".into(),
                ld(&c.long_values_purged),
            ),
            ("Tierdb_pages_reclaimed".into(), ld(&c.pages_reclaimed)),
            (
                "Tierdb_dropped_trees_pending".into(),
                i.dropped.lock().len().to_string(),
            ),
            ("Tierdb_rollbacks".into(), ld(&c.rollbacks)),
            ("Tierdb_checkpoints".into(), ld(&c.checkpoints)),
            (
                "Tierdb_checkpoint_lsn".into(),
                i.store.wal.checkpoint_lsn().0.to_string(),
            ),
            (
                "Tierdb_log_end_lsn".into(),
                i.store.wal.end_lsn().0.to_string(),
            ),
            (
                "Tierdb_active_write_transactions".into(),
                i.active.count().to_string(),
            ),
            (
                "Tierdb_read_views_open".into(),
                i.active.open_views().to_string(),
            ),
            (
                "Tierdb_read_views_expired".into(),
                i.active.expired_views().to_string(),
            ),
            // Ended transactions whose before-images open read views may still need (what
            // InnoDB calls its history list), their bytes, and purges waiting for those views.
            (
                "Innodb_history_list_length".into(),
                i.active.history().0.to_string(),
            ),
            (
                "Tierdb_history_bytes".into(),
                i.active.history().1.to_string(),
            ),
            (
                "Tierdb_purges_deferred".into(),
                i.deferred
                    .lock()
                    .values()
                    .flatten()
                    .map(|d| d.len() as u64)
                    .sum::<u64>()
                    .to_string(),
            ),
            ("Tierdb_transaction_memory".into(), ld(&i.txn_memory)),
            (
                "Tierdb_transaction_memory_refusals".into(),
                ld(&c.txn_memory_refusals),
            ),
            (
                "Tierdb_recovery_redo_records".into(),
                ld(&c.recovered_redo_records),
            ),
            (
                "Tierdb_recovery_rolled_back_transactions".into(),
                ld(&c.recovered_rolled_back_txns),
            ),
        ];
        let d = i.data.io_stats();
        v.extend([
            ("Innodb_data_reads".into(), d.reads.to_string()),
            ("Innodb_data_writes".into(), d.writes.to_string()),
            ("Innodb_data_read".into(), d.bytes_read.to_string()),
            ("Innodb_data_written".into(), d.bytes_written.to_string()),
        ]);
        if let Some(m) = i.data.map_stats() {
            v.extend([
                ("Tierdb_data_file_slots".into(), m.slots.to_string()),
                ("Tierdb_data_file_pages".into(), m.pages.to_string()),
                ("Tierdb_data_file_slots_held".into(), m.held.to_string()),
                ("Tierdb_page_maps_written".into(), m.persisted.to_string()),
                (
                    "Tierdb_data_file_segments_cleaned".into(),
                    i.data.cleaner_stats().0.to_string(),
                ),
                (
                    "Tierdb_data_file_pages_moved".into(),
                    i.data.cleaner_stats().1.to_string(),
                ),
            ]);
        }
        if let Some(b) = &i.bpe {
            v.extend(b.stats().status_vars());
        }
        v.sort();
        v
    }
    /// Engine settings for `SHOW VARIABLES`, as (name, value) pairs.
    pub fn variables(&self) -> Vec<(String, String)> {
        let cfg = &self.inner.cfg;
        let policy = match self.inner.store.wal.policy() {
            tierdb_wal::FlushPolicy::EveryCommit => 1,
            tierdb_wal::FlushPolicy::WriteAtCommit => 2,
            tierdb_wal::FlushPolicy::Periodic => 0,
        };
        vec![
            (
                "innodb_buffer_pool_size".into(),
                cfg.buffer_pool_size_bytes.to_string(),
            ),
            ("innodb_flush_log_at_trx_commit".into(), policy.to_string()),
            (
                "innodb_lock_wait_timeout".into(),
                (self.inner.lock_wait_timeout_ms.load(Ordering::Relaxed) / 1000).to_string(),
            ),
            (
                "tierdb_read_view_history_limit".into(),
                self.inner.active.history_limit().to_string(),
            ),
            (
                "tierdb_transaction_memory_limit".into(),
                self.inner
                    .txn_memory_limit
                    .load(Ordering::Relaxed)
                    .to_string(),
            ),
            (
                "innodb_page_size".into(),
                tierdb_page::PAGE_SIZE.to_string(),
            ),
            ("innodb_flush_method".into(), "O_DIRECT".into()),
            (
                "tierdb_relocating_writes".into(),
                if cfg.relocating_writes { "ON" } else { "OFF" }.into(),
            ),
            (
                "tierdb_relocating_free_space".into(),
                self.inner
                    .data
                    .map()
                    .map_or(cfg.relocating_free_space_pct, |m| m.free_space_pct())
                    .to_string(),
            ),
            ("tierdb_data_dir".into(), cfg.data_dir.display().to_string()),
            ("tierdb_redo_dir".into(), cfg.redo_dir.display().to_string()),
        ]
        .into_iter()
        .chain(throttle_vars("data", cfg.data_throttle.as_ref()))
        .chain(throttle_vars(
            "bpe",
            cfg.bpe.as_ref().and_then(|b| b.throttle.as_ref()),
        ))
        .chain(self.inner.bpe.iter().flat_map(|b| {
            b.variables()
                .into_iter()
                .map(|(k, v)| (k.trim_start_matches("tierdb_").to_string(), v))
        }))
        .collect()
    }
    /// `SET GLOBAL name = value` for an engine setting. `Ok(false)`: not an engine variable
    /// (the SQL layer handles it). Errors: a bad value, or a read-only variable.
    pub fn set_variable(&self, name: &str, value: &Value) -> Result<bool> {
        let bad = || Error::NotSupported(format!("value {value} for {name}"));
        match name.to_ascii_lowercase().as_str() {
            "innodb_flush_log_at_trx_commit" => {
                let v = value
                    .as_i64()
                    .filter(|v| (0..=2).contains(v))
                    .ok_or_else(bad)?;
                self.inner.set_flush_policy(v as u8).ok_or_else(bad)?;
                Ok(true)
            }
            "tierdb_relocating_free_space" => {
                let Some(m) = self.inner.data.map() else {
                    return Err(Error::NotSupported(format!(
                        "SET {name}: relocating writes are off"
                    )));
                };
                let v = value
                    .as_i64()
                    .and_then(|v| u64::try_from(v).ok())
                    .filter(|v| pagemap::FREE_PCT_RANGE.contains(v))
                    .ok_or_else(bad)?;
                m.set_free_space_pct(v);
                Ok(true)
            }
            "innodb_lock_wait_timeout" => {
                let v = value
                    .as_i64()
                    .filter(|v| (1..=1_073_741_824).contains(v))
                    .ok_or_else(bad)?;
                self.inner
                    .lock_wait_timeout_ms
                    .store(v as u64 * 1000, Ordering::Relaxed);
                Ok(true)
            }
            "tierdb_read_view_history_limit" | "read_view_history_limit" => {
                let v = value.as_i64().filter(|v| *v >= 0).ok_or_else(bad)?;
                self.inner.active.set_history_limit(v as u64);
                if let Some(h) = self.inner.active.trim_history() {
                    txn::run_deferred(&self.inner, h);
                }
                Ok(true)
            }
            "tierdb_transaction_memory_limit" | "transaction_memory_limit" => {
                let v = value.as_i64().filter(|v| *v >= 0).ok_or_else(bad)?;
                let v = transaction_memory_limit(v as u64, self.inner.cfg.buffer_pool_size_bytes);
                self.inner.txn_memory_limit.store(v, Ordering::Relaxed);
                Ok(true)
            }
            "innodb_buffer_pool_size" => Err(Error::NotSupported(
                "changing innodb_buffer_pool_size at runtime".into(),
            )),
            n if n.starts_with("bpe_") || n.starts_with("tierdb_bpe_") => {
                self.inner
                    .set_bpe_variable(n.trim_start_matches("tierdb_"), value)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
    /// Frees pages of dropped tables and indexes that nobody can reach any more (the
    /// checkpointer does this every second); at most `max_steps` steps of up to 64 pages.
    /// Returns the number of pages freed.
    pub fn reclaim_dropped(&self, max_steps: usize) -> Result<u64> {
        self.inner.reclaim_dropped(max_steps)
    }
    /// Pages ever allocated in the data file (its high-water mark, including freed pages).
    pub fn data_pages_allocated(&self) -> Result<u64> {
        Ok(tierdb_btree::alloc::pages_allocated(&self.inner.store)?)
    }
    /// Writes a DDL statement's binary-log events (built by the sink's owner) in binary-log
    /// order, durable as a commit is. Nothing happens without a binary log.
    pub fn log_binlog_events(&self, events: Vec<u8>) -> Result<()> {
        self.inner.log_binlog_events(events)
    }
    /// A binary log is configured.
    pub fn binlog_enabled(&self) -> bool {
        self.inner.cfg.binlog.is_some()
    }
    /// Makes every commit so far durable and writes its binary-log bytes to the files (those
    /// left pending under `flush_log_at_trx_commit` 0 / 2 included): after it the files hold
    /// every transaction committed before the call. Nothing happens without a binary log.
    pub fn write_binlog_now(&self) -> Result<()> {
        let Some(sink) = &self.inner.cfg.binlog else {
            return Ok(());
        };
        let wal = &self.inner.store.wal;
        wal.flush_to(wal.end_lsn())?;
        sink.write_durable(wal.durable_lsn().0);
        Ok(())
    }
    /// Writes a checkpoint (dirty pages stay in DRAM; the redo start moves forward).
    pub fn checkpoint(&self) -> Result<()> {
        self.inner.checkpoint().map(|_| ())
    }
    /// Clean shutdown: flush every dirty page, checkpoint, close the log.
    pub fn shutdown(&self) -> Result<()> {
        let r = self.inner.shutdown();
        if let Some(h) = self.checkpointer.lock().take() {
            let _ = h.join();
        }
        r
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!(error = %e, "shutdown on drop failed");
        }
    }
}

/// The in-process device emulation settings, as `SHOW VARIABLES` rows (0 = none).
fn throttle_vars(prefix: &str, t: Option<&ThrottleConfig>) -> Vec<(String, String)> {
    let (r, w, total, l) = t.map_or((0, 0, 0, 0), |t| {
        (t.read_iops, t.write_iops, t.total_iops, t.latency_us)
    });
    let mut v = vec![
        (format!("{prefix}_read_iops"), r.to_string()),
        (format!("{prefix}_write_iops"), w.to_string()),
    ];
    if prefix == "data" {
        v.push((format!("{prefix}_iops"), total.to_string()));
        v.push((format!("{prefix}_latency_us"), l.to_string()));
    }
    v
}

/// Called with every committed row of a table before a change that needs them all to pass
/// (`Engine::set_checks`); an error stops the change.
pub type RowVerifier<'a> = dyn FnMut(&[Value]) -> Result<()> + 'a;

/// A transaction. Dropping it without `commit` rolls it back.
pub struct Txn {
    st: txn::TxnState,
    done: bool,
}

/// Rows of a scan, in key order. Owns what it needs; holds no latch between calls.
/// Which columns of a row a reader needs, by column position (`true` = materialise).
/// Unmarked columns are returned as NULL, columns past the mask's end are materialised; the
/// row is still fully parsed (corruption is detected the same way).
pub type ColumnMask = Arc<[bool]>;

pub type RowCursor = Box<dyn Iterator<Item = Result<Row>> + Send>;

impl Txn {
    /// Point lookup by full primary key.
    pub fn get(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        self.st.get(t, pk)
    }
    /// `get` that materialises only the columns `want` marks: the others come back as
    /// NULL (cheaper when a query reads a few columns of wide rows; see `ColumnMask`).
    pub fn get_columns(
        &mut self,
        t: &Table,
        pk: &[Value],
        want: Option<&ColumnMask>,
    ) -> Result<Option<Row>> {
        self.st.get_columns(t, pk, want.map(|w| &w[..]))
    }
    /// Locking read by full primary key: waits for the row lock (kept until commit or
    /// rollback; errors Deadlock / LockWaitTimeout), then returns the newest committed (or own)
    /// version. UPDATE, DELETE and `SELECT ... FOR UPDATE` read their rows this way so
    /// concurrent changes are not lost. The key is locked even when no row has it.
    pub fn lock_row(&mut self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        self.st.lock_row(t, pk)
    }
    /// `lock_row` in `mode`: `Shared` (`SELECT ... FOR SHARE`) lets other shared lockers in
    /// and keeps writers out until this transaction ends; a later write by this transaction
    /// upgrades it to exclusive (waiting for the other shared holders).
    pub fn lock_row_mode(
        &mut self,
        t: &Table,
        pk: &[Value],
        mode: LockMode,
    ) -> Result<Option<Row>> {
        self.st.lock_row_mode(t, pk, mode)
    }
    /// `lock_row_mode` without waiting: LockWaitTimeout at once if another transaction
    /// holds a conflicting lock (`FOR UPDATE NOWAIT`, `SKIP LOCKED`).
    pub fn lock_row_nowait(
        &mut self,
        t: &Table,
        pk: &[Value],
        mode: LockMode,
    ) -> Result<Option<Row>> {
        self.st.lock_row_nowait(t, pk, mode)
    }
    /// Rows whose primary key lies within the bounds. Bounds are on a key prefix: `n` values
    /// compare against the first `n` primary key columns.
    pub fn scan(
        &mut self,
        t: &Arc<Table>,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
    ) -> Result<RowCursor> {
        self.scan_columns(t, None, lo, hi, None)
    }
    /// `scan` (index `None`) or `index_scan` (index `Some(i)`) materialising only the
    /// columns `want` marks; the others come back as NULL.
    pub fn scan_columns(
        &mut self,
        t: &Arc<Table>,
        index: Option<usize>,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
        want: Option<&ColumnMask>,
    ) -> Result<RowCursor> {
        self.scan_columns_dir(t, index, (lo, hi), want, false)
    }
    /// `scan_columns`, in descending key order when `desc` (for a secondary index, ties in
    /// descending primary key order): the same rows, last first.
    pub fn scan_columns_dir(
        &mut self,
        t: &Arc<Table>,
        index: Option<usize>,
        (lo, hi): (Bound<Vec<Value>>, Bound<Vec<Value>>),
        want: Option<&ColumnMask>,
        desc: bool,
    ) -> Result<RowCursor> {
        let want = want.cloned();
        Ok(Box::new(self.st.cursor(t, index, lo, hi, want, desc)?))
    }
    /// Rows through secondary index number `index` (position in `TableDef::indexes`), in index
    /// order (ties in primary key order). Bounds as in `scan`, on the index columns.
    pub fn index_scan(
        &mut self,
        t: &Arc<Table>,
        index: usize,
        lo: Bound<Vec<Value>>,
        hi: Bound<Vec<Value>>,
    ) -> Result<RowCursor> {
        self.scan_columns(t, Some(index), lo, hi, None)
    }
    /// Inserts a row. An AUTO_INCREMENT column given as NULL (or 0) gets the next value,
    /// which is returned. Errors: DuplicateKey, NotNull, RowTooLarge, Deadlock, LockWaitTimeout.
    pub fn insert(&mut self, t: &Arc<Table>, row: Row) -> Result<Option<i64>> {
        self.st.insert(t, row)
    }
    /// Whether this transaction's changes go to the binary log from now on (true unless
    /// `sql_log_bin = 0`; the SQL layer turns it off around a foreign key's cascades).
    /// Returns the previous setting.
    pub fn set_binlog(&mut self, on: bool) -> bool {
        !std::mem::replace(&mut self.st.binlog_off, !on)
    }
    /// The next changes are made with `foreign_key_checks` `on` or off (the binary log
    /// marks changes made without them, so a replica applies them the same way).
    pub fn set_binlog_fk_checks(&mut self, on: bool) {
        self.st.binlog_no_fk_checks = !on;
    }
    /// Fills the AUTO_INCREMENT column of `row` now when it is NULL or 0 (returning the
    /// value), so a statement that may retry the insert (REPLACE, upserts) keeps one value.
    pub fn assign_auto_increment(&mut self, t: &Table, row: &mut [Value]) -> Option<i64> {
        txn::assign_auto_increment(t, row)
    }
    /// Gives back value `v` from `assign_auto_increment` when nothing used it (INSERT IGNORE
    /// skipped the row) and no later value was handed out, as MariaDB does.
    pub fn give_back_auto_increment(&mut self, t: &Table, v: i64) {
        let _ = t
            .auto_inc
            .compare_exchange(v, v - 1, Ordering::Relaxed, Ordering::Relaxed);
    }
    /// After `insert(row)` failed with `Error::DuplicateKey { index, .. }`: locks and returns
    /// the live row holding that key (None when it is gone since; then retry the insert).
    pub fn locked_duplicate(
        &mut self,
        t: &Table,
        row: &[Value],
        index: &str,
    ) -> Result<Option<Row>> {
        self.st.locked_duplicate(t, row, index)
    }
    /// Replaces the row with primary key `pk` by `new_row` (which may change the key).
    /// Returns false when no such row exists. An error may leave a key change half done (the
    /// old row deleted): roll back to a savepoint, or the whole transaction after
    /// `TransactionMemoryFull`.
    pub fn update(&mut self, t: &Arc<Table>, pk: &[Value], new_row: Row) -> Result<bool> {
        self.st.update(t, pk, new_row)
    }
    /// Deletes the row with primary key `pk`; false when absent.
    pub fn delete(&mut self, t: &Arc<Table>, pk: &[Value]) -> Result<bool> {
        self.st.delete(t, pk)
    }
    /// Makes the transaction's changes durable (per `flush_log_at_trx_commit`) and visible.
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        self.st.commit()
    }
    /// Undoes every change of the transaction.
    pub fn rollback(mut self) -> Result<()> {
        self.done = true;
        self.st.rollback()
    }
    /// Marks the current point of the transaction (a few lengths; binary-log changes still
    /// pending are encoded first). The SQL layer takes one before every statement of an
    /// explicit transaction.
    pub fn savepoint(&mut self) -> Savepoint {
        self.st.savepoint(false)
    }
    /// A savepoint for one row's write (UPDATE / DELETE IGNORE undo a refused row's foreign
    /// key effects): binary-log changes stay pending, so rows keep sharing events. Only the
    /// row's own write may come between it and its rollback (a few captured changes);
    /// otherwise the rollback fails and the transaction must be rolled back whole.
    pub fn row_savepoint(&mut self) -> Savepoint {
        self.st.savepoint(true)
    }
    /// Undoes the changes made after `sp` (newest first, secondary index entries included)
    /// and keeps the earlier ones and every row lock; the transaction stays open. Rolling
    /// back to a savepoint forgets the savepoints taken after it. On an error the
    /// transaction must be rolled back entirely.
    pub fn rollback_to_savepoint(&mut self, sp: Savepoint) -> Result<()> {
        self.st.rollback_to(sp)
    }
    /// True when the transaction has written something to the redo log (locks taken by
    /// locking reads alone do not count).
    pub fn has_writes(&self) -> bool {
        self.st.has_writes()
    }
    /// True when the transaction changed a table that is not TEMPORARY.
    pub fn writes_tables(&self) -> bool {
        self.st.writes_tables()
    }
    /// REPEATABLE READ: plain reads (`get`, scans) from now on see the database as of one
    /// moment — the read view opened by the first call in this transaction (`START
    /// TRANSACTION WITH CONSISTENT SNAPSHOT`, or the first plain read) — plus this
    /// transaction's own changes. Locking reads and changes still work on the newest
    /// committed versions, as in InnoDB. A table whose trees were made after the view opened
    /// (rebuilt, indexed, created) cannot be read through it: `TableDefinitionChanged`.
    pub fn consistent_reads(&mut self) {
        self.st.consistent_reads()
    }
    /// Plain reads see the newest committed versions again (READ COMMITTED, and the current
    /// reads of UPDATE / DELETE); an open view is kept for a later `consistent_reads`.
    pub fn current_reads(&mut self) {
        self.st.current_reads()
    }
    /// A read view is open in this transaction.
    pub fn has_view(&self) -> bool {
        self.st.has_view()
    }
}

impl Drop for Txn {
    fn drop(&mut self) {
        if !self.done {
            if let Err(e) = self.st.rollback() {
                tracing::error!(error = %e, "rollback of a dropped transaction failed");
            }
        }
    }
}
