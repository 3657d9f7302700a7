//! The engine's shared state: storage wiring, the catalog in memory, transactions, locks,
//! start-up (redo, then undo of unfinished transactions), checkpoints and shutdown.
//!
//! Lock order: `ddl` → `catalog` (the in-memory map) → page latches. Must never: hold the
//! `catalog` lock across I/O other than the catalog tree itself; open for writes before
//! recovery has rolled back every unfinished transaction.

use crate::catalog::{self, TableEntry, SLOT_CATALOG_ROOT, SLOT_NEXT_TABLE_ID, SLOT_NEXT_TXN_ID};
use crate::rowcodec::{Undo, UndoLog};
use crate::storage::{DataFile, LogGate};
use crate::txns::ActiveTxns;
use crate::{ColumnDef, EngineConfig, Error, IndexDef, Result, Table, TableDef, ViewDef};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use tierdb_bpe::{Bpe, Trust};
use tierdb_btree::redo::{self, PageChange, Record};
use tierdb_btree::{alloc, BTree, Modify, Mtr, Store};
use tierdb_buffer::{BufferPool, PoolConfig, TierHooks};
use tierdb_page::{Lsn, PageId};
use tierdb_txn::LockManager;
use tierdb_wal::{FlushPolicy, Wal, WalConfig};

pub(crate) const KIND_CHECKPOINT: u8 = 3;

#[derive(Default)]
pub(crate) struct Counters {
    pub rows_read: AtomicU64,
    pub rows_inserted: AtomicU64,
    pub rows_updated: AtomicU64,
    pub rows_deleted: AtomicU64,
    pub commits: AtomicU64,
    pub rollbacks: AtomicU64,
    pub checkpoints: AtomicU64,
    pub recovered_redo_records: AtomicU64,
    pub recovered_rolled_back_txns: AtomicU64,
    pub pages_reclaimed: AtomicU64,
    /// Long values written off their rows / read back / removed by purges (`lob`).
    pub long_values_written: AtomicU64,
    pub long_values_read: AtomicU64,
    pub long_values_purged: AtomicU64,
    /// Transactions refused for passing `transaction_memory_limit`.
    pub txn_memory_refusals: AtomicU64,
}

/// What keeps a dropped tree reachable.
pub(crate) enum Holder {
    /// A dropped table: its gate, shared by every handle of the table (whatever its version:
    /// cached plans, open cursors, LOCK TABLES) and held by every transaction writing it.
    Table(Weak<crate::gate::TableGate>),
    /// A dropped index: the handle that still listed it (older handles are re-planned
    /// before they are used again).
    Handle(Weak<Table>),
    /// Nobody (found at start-up, or an index build that failed).
    Nobody,
}

impl Holder {
    fn in_use(&self) -> bool {
        match self {
            Holder::Table(w) => w.strong_count() > 0,
            Holder::Handle(w) => w.strong_count() > 0,
            Holder::Nobody => false,
        }
    }
}

/// A tree of a dropped table or index whose pages are not freed yet. Its catalog entry
/// (`catalog::dropped_key`) is written before the table's entry is removed, and deleted in
/// the same mtr that frees the tree's last page.
pub(crate) struct Dropped {
    pub root: PageId,
    /// Who may still reach the tree: nothing is freed while it is in use.
    pub holder: Holder,
    /// Set when no handle is left: every transaction with a smaller id must have ended (one
    /// of them may still roll a change back into the tree).
    pub horizon: Option<u64>,
}

pub(crate) struct Inner {
    pub cfg: EngineConfig,
    pub store: Store,
    /// The data file under the pool (its page map is made durable by each checkpoint).
    pub data: Arc<DataFile>,
    /// The SSD tier, when configured (installed as the pool's `TierHooks`).
    pub bpe: Option<Arc<Bpe>>,
    pub catalog_tree: BTree,
    /// db → table → handle.
    pub catalog: RwLock<BTreeMap<String, BTreeMap<String, Arc<Table>>>>,
    /// db → view → definition. Views and tables share one namespace per database.
    pub views: RwLock<BTreeMap<String, BTreeMap<String, Arc<ViewDef>>>>,
    /// The SQL layer's account entries (catalog namespace 02): key parts → value, both
    /// opaque here (see `Engine::account_entries`).
    pub accounts: RwLock<AccountEntries>,
    /// Some table has (or had, since start-up) a FOREIGN KEY: until then `referencing` answers
    /// without looking at the catalog, so tables without any cost nothing.
    pub any_foreign_keys: AtomicBool,
    /// The highest redo end of a commit that left its binary-log bytes for later (its record
    /// was not durable yet; 0: none): a commit that finds it durable writes every durable
    /// placement, not only its own.
    pub binlog_deferred: AtomicU64,
    pub ddl: Mutex<()>,
    pub locks: LockManager,
    pub active: ActiveTxns,
    pub counters: Counters,
    pub lock_wait_timeout_ms: AtomicU64,
    /// `transaction_memory_limit` in bytes (resolved: never 0).
    pub txn_memory_limit: AtomicU64,
    /// Bytes the running transactions hold in memory (their estimates, see `txn::TxnState`).
    pub txn_memory: AtomicU64,
    stop: Mutex<bool>,
    stop_cv: Condvar,
    checkpoint_lock: Mutex<()>,
    pub closed: AtomicBool,
    /// Trees waiting to be freed (see `reclaim_dropped`).
    pub dropped: Mutex<Vec<Dropped>>,
    /// One reclaimer at a time (the checkpointer, or a test).
    reclaim_lock: Mutex<()>,
    /// Held (shared) by the data-file cleaners through each turn; shutdown waits for them.
    cleaner_lock: RwLock<()>,
    /// Purges of transactions that ended while a read view was open, with the clock value
    /// they are retained under (see `txns`): run once no view opened before is open.
    pub deferred: Mutex<BTreeMap<u64, Vec<crate::txn::Deferred>>>,
    /// Deferred purges taken out of `deferred` and still running (raised under its lock).
    pub deferred_running: AtomicU64,
}

/// Data-file cleaner threads (relocating writes).
pub(crate) const CLEANER_THREADS: usize = 4;

fn err_b(e: tierdb_btree::Error) -> Error {
    match e {
        tierdb_btree::Error::Buffer(b) => Error::from(b),
        tierdb_btree::Error::Wal(w) => Error::Io(w.to_string()),
        tierdb_btree::Error::EntryTooLarge(n) => Error::RowTooLarge {
            size: n,
            max: tierdb_btree::node::MAX_LEAF_CELL,
        },
        tierdb_btree::Error::KeyTooLong(n) => Error::NotSupported(format!(
            "keys longer than {} bytes (got {n})",
            tierdb_btree::node::MAX_KEY_LEN
        )),
        other => Error::Corrupt(other.to_string()),
    }
}

impl From<tierdb_btree::Error> for Error {
    fn from(e: tierdb_btree::Error) -> Error {
        err_b(e)
    }
}
impl From<tierdb_wal::WalError> for Error {
    fn from(e: tierdb_wal::WalError) -> Error {
        Error::Io(e.to_string())
    }
}
impl From<tierdb_buffer::BufferError> for Error {
    fn from(e: tierdb_buffer::BufferError) -> Error {
        use tierdb_buffer::BufferError as B;
        match e {
            B::Corrupt { .. } => Error::Corrupt(e.to_string()),
            B::Poisoned(m) => Error::Poisoned(m),
            other => Error::Io(other.to_string()),
        }
    }
}

/// Catalog entries to change in one mtr: key → new value (None: delete). A key set after
/// it was unset (a view replaced or renamed onto a name) keeps only the last change.
type CatalogChanges = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Account entries by key parts (see `Engine::account_entries`).
pub(crate) type AccountEntries = BTreeMap<Vec<Vec<u8>>, Vec<u8>>;

/// Deletes every entry of view `v` of `db` (its pieces too).
fn unset_view(changes: &mut CatalogChanges, db: &str, v: &ViewDef) {
    for (k, _) in catalog::view_entries(db, v) {
        changes.insert(k, None);
    }
}

/// Writes every entry of view `v` of `db`.
fn set_view(changes: &mut CatalogChanges, db: &str, v: &ViewDef) {
    for (k, val) in catalog::view_entries(db, v) {
        changes.insert(k, Some(val));
    }
}

/// Applies one redo change during recovery (idempotent: skipped when the page is newer).
/// A diff for a page that cannot be read (torn by a crash during its write) is skipped and
/// the page noted: a later full image in the log must rebuild it, or recovery fails.
fn redo_change(
    pool: &BufferPool,
    c: &PageChange,
    start: Lsn,
    end: Lsn,
    awaiting_image: &mut HashMap<PageId, String>,
) -> Result<()> {
    let id = c.page();
    if let PageChange::Diff(..) = c {
        if awaiting_image.contains_key(&id) {
            return Ok(());
        }
    }
    match pool.write(id) {
        Ok(mut g) => {
            if tierdb_page::page_lsn(&g) < end {
                redo::apply(&mut g, c);
                g.mark_dirty_range(start, end);
            }
        }
        Err(e) => match c {
            PageChange::Image(..) => {
                let mut g = pool.create(id)?;
                redo::apply(&mut g, c);
                g.mark_dirty_range(start, end);
                awaiting_image.remove(&id);
            }
            PageChange::Diff(..) => {
                awaiting_image.insert(id, e.to_string());
            }
        },
    }
    Ok(())
}

impl Inner {
    /// `innodb_lock_wait_timeout` now.
    pub fn lock_wait(&self) -> Duration {
        Duration::from_millis(self.lock_wait_timeout_ms.load(Ordering::Relaxed))
    }

    /// Closes `t`'s gate for the DDL `what` (waiting up to the lock wait timeout for the
    /// transactions writing it and LOCK TABLES holders), logging when it gives up.
    fn close_gate<'t>(&self, t: &'t Table, what: &str) -> Result<crate::gate::BuildGuard<'t>> {
        t.gate.close(self.lock_wait()).map_err(|e| {
            tracing::info!(db = %t.db, table = %t.def.name, "{what} gave up waiting for the table's writers");
            t.gate_error(e)
        })
    }

    pub fn open(cfg: EngineConfig) -> Result<Arc<Inner>> {
        for d in [&cfg.data_dir, &cfg.redo_dir] {
            std::fs::create_dir_all(d)
                .map_err(|e| Error::Io(format!("cannot create {}: {e}", d.display())))?;
        }
        let data_path = cfg.data_dir.join(crate::storage::DATA_FILE);
        let data = Arc::new(
            DataFile::open(
                &cfg.data_dir,
                cfg.relocating_writes,
                cfg.data_throttle,
                cfg.data_device_wrapper.as_ref(),
            )
            .map_err(|e| Error::Io(format!("{}: {e}", data_path.display())))?,
        );
        if let Some(m) = data.map() {
            m.set_free_space_pct(cfg.relocating_free_space_pct);
            m.set_min_room(cfg.relocating_min_room_slots);
        }
        let policy = FlushPolicy::from_mysql(cfg.flush_log_at_trx_commit)
            .unwrap_or(FlushPolicy::EveryCommit);
        let wcfg = WalConfig {
            policy,
            ..WalConfig::new(cfg.redo_dir.clone())
        };
        let wal = Arc::new(match &cfg.redo_opener {
            Some(o) => Wal::open_with(wcfg, o.clone())?,
            None => Wal::open(wcfg)?,
        });
        let pool = BufferPool::new(
            PoolConfig {
                size_bytes: cfg.buffer_pool_size_bytes,
                ..PoolConfig::default()
            },
            data.clone(),
            Arc::new(LogGate(wal.clone())),
        )?;
        let store = Store { pool, wal };

        // The BPE comes up before redo: every page a replayed record touches is dropped from it.
        // A persisted BPE index is trusted only if its tag (the redo LSN when it was written)
        // is at or past the redo start, so every later page change is in the log we replay.
        let bpe = match &cfg.bpe {
            None => None,
            Some(bc) => {
                for d in &bc.devices {
                    if let Some(parent) = d.parent() {
                        let _ = std::fs::create_dir_all(parent);
                    }
                }
                let opened = match &cfg.bpe_opener {
                    Some(o) => Bpe::open_with_opener(bc.clone(), Trust::Snapshot, o.clone()),
                    None => Bpe::open(bc.clone(), Trust::Snapshot),
                };
                match opened {
                    Ok(b) => {
                        let r = b.recovery();
                        let ckpt = store.wal.checkpoint_lsn().0;
                        if r.pages_restored > 0 && r.tag.is_none_or(|t| t < ckpt) {
                            let n = b.clear();
                            tracing::info!(pages = n, tag = ?r.tag, checkpoint = ckpt, "BPE contents cannot be proven current; starting cold");
                        } else if r.pages_restored > 0 {
                            tracing::info!(
                                pages = r.pages_restored,
                                clean = r.clean,
                                "BPE contents reused (warm restart)"
                            );
                        }
                        store.pool.set_hooks(Some(b.clone() as Arc<dyn TierHooks>));
                        Some(b)
                    }
                    Err(e) => {
                        // The cache is optional: a broken BPE must not stop the database.
                        tracing::error!(error = %e, "BPE unavailable; running without it");
                        None
                    }
                }
            }
        };

        // Redo from the checkpoint; collect undo of transactions without an end record.
        let t0 = Instant::now();
        // The undo entries of each transaction without an end record yet, kept encoded.
        let mut pending: HashMap<u64, UndoLog> = HashMap::new();
        let mut max_txn = 0u64;
        let mut n_records = 0u64;
        let from = store.wal.checkpoint_lsn();
        let mut prev_end = from;
        let mut awaiting_image: HashMap<PageId, String> = HashMap::new();
        let mut binlog_skipped = 0u64;
        // Leading parts of transactions' binary-log writes, until their commit record.
        let mut binlog_parts: HashMap<u64, Vec<(Lsn, Vec<u8>)>> = HashMap::new();
        for rec in store.wal.read_from(from)? {
            let (start, payload) = rec?;
            let end = Lsn(start.0 + tierdb_wal::RECORD_HEADER_BYTES as u64 + payload.len() as u64);
            debug_assert!(start >= prev_end);
            prev_end = end;
            n_records += 1;
            if payload.first() == Some(&KIND_CHECKPOINT) {
                continue;
            }
            if payload.first() == Some(&crate::binlog::KIND_BINLOG) {
                replay_binlog(&cfg, start, &payload[1..], &mut binlog_skipped)?;
                continue;
            }
            if payload.first() == Some(&crate::binlog::KIND_BINLOG_PART) {
                let (txn, bytes) = crate::binlog::decode_part(&payload).ok_or_else(|| {
                    Error::Corrupt(format!("binary-log part record at {start} is too short"))
                })?;
                binlog_parts
                    .entry(txn)
                    .or_default()
                    .push((start, bytes.to_vec()));
                continue;
            }
            match redo::decode(&payload)
                .map_err(|e| Error::Corrupt(format!("redo record at {start}: {e}")))?
            {
                Record::Mtr {
                    txn,
                    changes,
                    logical,
                } => {
                    for c in &changes {
                        redo_change(&store.pool, c, start, end, &mut awaiting_image)?;
                    }
                    if txn != 0 {
                        max_txn = max_txn.max(txn);
                        if !logical.is_empty() {
                            if Undo::decode(&logical).is_none() {
                                return Err(Error::Corrupt(format!(
                                    "undo record at {start} is malformed"
                                )));
                            }
                            pending.entry(txn).or_default().push(&logical);
                        }
                    }
                }
                Record::TxnEnd {
                    txn,
                    committed,
                    binlog,
                } => {
                    max_txn = max_txn.max(txn);
                    pending.remove(&txn);
                    // Parts before the checkpoint were written and synced by it.
                    let parts = binlog_parts.remove(&txn).unwrap_or_default();
                    if committed && !binlog.is_empty() {
                        for (at, bytes) in &parts {
                            replay_binlog(&cfg, *at, bytes, &mut binlog_skipped)?;
                        }
                        replay_binlog(&cfg, start, &binlog, &mut binlog_skipped)?;
                    }
                }
            }
        }
        if binlog_skipped > 0 {
            tracing::warn!(
                records = binlog_skipped,
                "the redo log holds binary-log events but no binary log is configured now; they are not written"
            );
        }
        if let Some((id, e)) = awaiting_image.iter().next() {
            return Err(Error::Corrupt(format!(
                "page {id} is unreadable ({e}) and the redo log holds no full image of it"
            )));
        }
        if n_records > 0 {
            tracing::info!(
                records = n_records,
                from = from.0,
                to = prev_end.0,
                ms = t0.elapsed().as_millis() as u64,
                "redo applied"
            );
        }

        // A brand-new data file: format the meta page and the catalog tree.
        let fresh = data.len().map_err(|e| Error::Io(e.to_string()))? == 0
            && alloc::pages_allocated(&store).is_err();
        let catalog_tree = if fresh {
            let mut m = Mtr::new(&store, 0);
            alloc::format_meta(&mut m)?;
            let t = BTree::create(&mut m)?;
            alloc::set_meta_slot(&mut m, SLOT_CATALOG_ROOT, t.root.0)?;
            alloc::set_meta_slot(&mut m, SLOT_NEXT_TABLE_ID, 1)?;
            if let Some(end) = m.commit()? {
                store.wal.flush_to(end)?;
            }
            tracing::info!(path = %data_path.display(), "created a new data file");
            t
        } else {
            BTree {
                root: PageId(alloc::meta_slot(&store, SLOT_CATALOG_ROOT)?),
            }
        };
        // A data file from before this slot existed (0): its rows may name ids up to what
        // one run of that version handed out, each run starting at 1 again; 2^40 is above
        // that (a trillion transactions in one run).
        let next_txn_persisted = match alloc::meta_slot(&store, SLOT_NEXT_TXN_ID)? {
            0 if !fresh => 1 << 40,
            v => v,
        };

        let inner = Arc::new(Inner {
            lock_wait_timeout_ms: AtomicU64::new(cfg.lock_wait_timeout.as_millis() as u64),
            txn_memory_limit: AtomicU64::new(crate::transaction_memory_limit(
                cfg.transaction_memory_limit,
                cfg.buffer_pool_size_bytes,
            )),
            txn_memory: AtomicU64::new(0),
            cfg,
            store,
            data,
            bpe,
            catalog_tree,
            catalog: RwLock::new(BTreeMap::new()),
            views: RwLock::new(BTreeMap::new()),
            accounts: RwLock::new(BTreeMap::new()),
            any_foreign_keys: AtomicBool::new(false),
            binlog_deferred: AtomicU64::new(0),
            ddl: Mutex::new(()),
            locks: LockManager::new(),
            // Past every id in the replayed redo and every id handed out before the last
            // checkpoint (rows written before it name them; read views compare ids).
            active: ActiveTxns::new((max_txn + 1).max(next_txn_persisted)),
            counters: Counters::default(),
            stop: Mutex::new(false),
            stop_cv: Condvar::new(),
            checkpoint_lock: Mutex::new(()),
            closed: AtomicBool::new(false),
            dropped: Mutex::new(Vec::new()),
            reclaim_lock: Mutex::new(()),
            cleaner_lock: RwLock::new(()),
            deferred: Mutex::new(BTreeMap::new()),
            deferred_running: AtomicU64::new(0),
        });
        inner
            .active
            .set_history_limit(inner.cfg.read_view_history_limit);
        inner
            .counters
            .recovered_redo_records
            .store(n_records, Ordering::Relaxed);

        // Undo unfinished transactions, newest change first.
        if !pending.is_empty() {
            let mut losers: Vec<_> = pending.into_iter().collect();
            losers.sort_by_key(|(t, _)| std::cmp::Reverse(*t));
            for (txn, undo) in &losers {
                inner.apply_undo(*txn, undo.newest_first_from(0))?;
                let payload = redo::encode_txn_end(*txn, false);
                inner.store.wal.append(&payload, |_, _| {})?;
            }
            inner.store.wal.flush_to(inner.store.wal.end_lsn())?;
            inner
                .counters
                .recovered_rolled_back_txns
                .store(losers.len() as u64, Ordering::Relaxed);
            tracing::info!(
                transactions = losers.len(),
                "rolled back unfinished transactions"
            );
        }
        inner.load_catalog()?;
        inner.checkpoint()?;
        Ok(inner)
    }

    /// Writes a binary-log entry that is no transaction's (a DDL statement's events) through
    /// the sink: placed, appended as its own record, made durable as a commit is, written.
    pub fn log_binlog_events(&self, events: Vec<u8>) -> Result<()> {
        let Some(sink) = &self.cfg.binlog else {
            return Ok(());
        };
        let wal = &self.store.wal;
        let mut append = |bytes: &[u8], last: bool| -> Result<(u64, u64)> {
            if !last {
                // Outside a transaction nothing would keep the parts from a checkpoint.
                return Err(Error::Internal(
                    "a statement's binary-log events do not fit one redo record".into(),
                ));
            }
            let mut p = Vec::with_capacity(1 + bytes.len());
            p.push(crate::binlog::KIND_BINLOG);
            p.extend_from_slice(bytes);
            let mut start = 0;
            let end = wal.append(&p, |s, _| start = s.0)?.0;
            Ok((start, end))
        };
        let (ticket, end) = sink.place(vec![events], &mut append)?;
        let r = match wal.commit(Lsn(end)) {
            Ok(()) => {
                self.write_binlog(sink.as_ref(), ticket, end);
                Ok(())
            }
            Err(e) => {
                sink.abandon(ticket);
                Err(e.into())
            }
        };
        sink.finished(ticket);
        r
    }

    /// After the record of `ticket` (ending at `end`) was committed to the redo log: its
    /// binary-log bytes go to the files once the record is durable. Not durable yet
    /// (`flush_log_at_trx_commit` 0 / 2): left to the checkpointer's round each second, or to
    /// the next commit that is durable, which then writes every durable placement (so that a
    /// synced commit finds the log complete up to it, as a reader of the files expects).
    pub fn write_binlog(&self, sink: &dyn crate::binlog::BinlogSink, ticket: u64, end: u64) {
        let durable = self.store.wal.durable_lsn().0;
        if durable < end {
            self.binlog_deferred.fetch_max(end, Ordering::AcqRel);
            return;
        }
        let deferred = self.binlog_deferred.load(Ordering::Acquire);
        if deferred == 0 {
            sink.write(ticket);
            return;
        }
        sink.write_durable(durable);
        if deferred <= durable {
            // Every deferred placement up to `deferred` is written; a later one keeps it set.
            let _ = self.binlog_deferred.compare_exchange(
                deferred,
                0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
    }

    /// Restores before-images in reverse order (idempotent).
    pub fn apply_undo(
        &self,
        txn: u64,
        newest_first: impl IntoIterator<Item = Result<Undo>>,
    ) -> Result<()> {
        for u in newest_first {
            let u = u?;
            let tree = BTree {
                root: PageId(u.tree),
            };
            let mut m = Mtr::new(&self.store, txn);
            tree.modify(&mut m, &u.key, |_| match &u.before {
                Some(b) => Modify::Put(b.clone()),
                None => Modify::Delete,
            })?;
            m.commit()?;
        }
        Ok(())
    }

    fn load_catalog(&self) -> Result<()> {
        let mut dbs: BTreeMap<String, BTreeMap<String, Arc<Table>>> = BTreeMap::new();
        let mut dropped: Vec<PageId> = Vec::new();
        let mut views: BTreeMap<String, BTreeMap<String, Arc<ViewDef>>> = BTreeMap::new();
        let mut accounts = AccountEntries::new();
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        self.catalog_tree
            .scan(&self.store, std::ops::Bound::Unbounded, |k, v| {
                entries.push((k.to_vec(), v.to_vec()));
                true
            })?;
        // The further pieces of long views' entries, by key.
        let pieces: std::collections::HashMap<Vec<u8>, Vec<u8>> = entries
            .iter()
            .filter(|(_, v)| v.first() == Some(&b'P'))
            .cloned()
            .collect();
        for (k, v) in &entries {
            let (k, v) = (k.as_slice(), v.as_slice());
            let parts =
                crate::keys::decode_key(k).ok_or_else(|| Error::Corrupt("catalog key".into()))?;
            let name = |i: usize| match parts.get(i) {
                Some(crate::Value::Bytes(b)) => {
                    String::from_utf8(b.clone()).map_err(|_| Error::Corrupt("catalog name".into()))
                }
                _ => Err(Error::Corrupt("catalog key".into())),
            };
            match v.first() {
                Some(b'D') => {
                    dbs.entry(name(0)?).or_default();
                }
                Some(b'T' | b'L') => {
                    let e = catalog::decode_table(v)?;
                    let (db, key) = (name(0)?, name(1)?);
                    let t = self.table_from_entry(&db, key, e)?;
                    dbs.entry(db).or_default().insert(t.key.clone(), t);
                }
                Some(b'G') => dropped.push(catalog::decode_dropped(v)?),
                Some(b'V') => {
                    let (db, view) = (name(0)?, name(1)?);
                    let mut rest = Vec::new();
                    for i in 1.. {
                        let key = catalog::view_part_key(&db, &view, i);
                        match pieces.get(&key) {
                            Some(p) => rest.push(p.as_slice()),
                            None => break,
                        }
                    }
                    let def = catalog::decode_view(v, &rest)?;
                    views.entry(db).or_default().insert(view, Arc::new(def));
                }
                Some(b'P') => {}
                Some(b'A') => {
                    let (key, value) = catalog::decode_account(&parts, v)?;
                    accounts.insert(key, value);
                }
                _ => return Err(Error::Corrupt("catalog entry kind".into())),
            }
        }
        // A dropped-tree entry whose tree still belongs to a table: the DROP was cut short by
        // a crash after the entry was written and before the table's entry was removed, so
        // the table is still there and the entry is void.
        let live: std::collections::HashSet<PageId> = dbs
            .values()
            .flat_map(|t| t.values())
            .flat_map(|t| t.roots())
            .collect();
        let mut pending = Vec::new();
        for root in dropped {
            if live.contains(&root) {
                self.catalog_put(&catalog::dropped_key(root), None)?;
            } else {
                pending.push(Dropped {
                    root,
                    holder: Holder::Nobody,
                    horizon: Some(0),
                });
            }
        }
        if !pending.is_empty() {
            tracing::info!(trees = pending.len(), "dropped trees still to be freed");
        }
        *self.dropped.lock() = pending;
        // TEMPORARY tables belonged to sessions of an earlier run: dropped (their trees freed
        // like any dropped table's).
        let leftovers: Vec<Arc<Table>> = dbs
            .values()
            .flat_map(|ts| ts.values())
            .filter(|t| t.is_temporary())
            .cloned()
            .collect();
        *self.catalog.write() = dbs;
        *self.views.write() = views;
        *self.accounts.write() = accounts;
        for t in &leftovers {
            self.drop_table_entry(&t.db, t)?;
            self.catalog
                .write()
                .get_mut(&t.db)
                .map(|ts| ts.remove(&t.key));
        }
        if !leftovers.is_empty() {
            tracing::info!(
                tables = leftovers.len(),
                "dropped TEMPORARY tables left by the last run"
            );
        }
        Ok(())
    }

    /// The handle of catalog entry `e`, filed under `key` in `db`.
    fn table_from_entry(&self, db: &str, key: String, e: TableEntry) -> Result<Arc<Table>> {
        let primary = BTree {
            root: e.primary_root,
        };
        let secondary: Vec<BTree> = e.index_roots.iter().map(|&r| BTree { root: r }).collect();
        let auto_inc = self.max_auto_inc(&e.def, &primary, &secondary)?;
        let row_id = if e.def.has_hidden_key() {
            self.max_leading_key(&primary)?
        } else {
            0
        };
        let lob = e.lob_root.map(|root| BTree { root });
        let lob_id = match &lob {
            Some(l) => l
                .largest_key(&self.store)?
                .and_then(|k| crate::lob::id_of(&k))
                .unwrap_or(0),
            None => 0,
        };
        self.note_foreign_keys(&e.def);
        Ok(Arc::new(Table {
            db: db.to_string(),
            def: e.def,
            key,
            id: e.id,
            primary,
            secondary,
            lob,
            lob_ids: Arc::new(AtomicU64::new(lob_id)),
            auto_inc: Arc::new(AtomicI64::new(auto_inc)),
            row_id: Arc::new(AtomicI64::new(row_id)),
            gate: Arc::default(),
            version: 0,
            since: self.active.stamp(),
        }))
    }

    /// Largest value of the AUTO_INCREMENT column, from the primary key or the secondary
    /// index it leads (the SQL layer requires one of them).
    fn max_auto_inc(&self, def: &TableDef, primary: &BTree, secondary: &[BTree]) -> Result<i64> {
        let Some(ai) = def.columns.iter().position(|c| c.auto_increment) else {
            return Ok(0);
        };
        if def.primary_key.first() == Some(&ai) {
            return self.max_leading_key(primary);
        }
        match def
            .indexes
            .iter()
            .position(|i| i.columns.first() == Some(&ai))
            .and_then(|i| secondary.get(i))
        {
            Some(tree) => self.max_leading_key(tree),
            None => Ok(0),
        }
    }

    /// Largest integer leading a key of `tree` (0 when none): from the rightmost leaf, or a
    /// scan when that leaf is empty.
    fn max_leading_key(&self, tree: &BTree) -> Result<i64> {
        // (An integer above i64::MAX counts as i64::MAX: the counter is then used up.)
        let first = |k: &[u8]| {
            crate::keys::decode_key(k).and_then(|v| {
                v.first()
                    .and_then(|x| x.as_i128())
                    .map(|i| i.min(i128::from(i64::MAX)) as i64)
            })
        };
        if let Some(k) = tree.rightmost_key(&self.store)? {
            return Ok(first(&k).unwrap_or(0).max(0));
        }
        let mut max = 0i64;
        tree.scan(&self.store, std::ops::Bound::Unbounded, |k, _| {
            if let Some(v) = first(k) {
                max = max.max(v);
            }
            true
        })?;
        Ok(max)
    }

    fn catalog_put(&self, key: &[u8], val: Option<Vec<u8>>) -> Result<()> {
        let mut m = Mtr::new(&self.store, 0);
        self.catalog_tree.modify(&mut m, key, |_| match &val {
            Some(v) => Modify::Put(v.clone()),
            None => Modify::Delete,
        })?;
        if let Some(end) = m.commit()? {
            self.store.wal.flush_to(end)?;
        }
        Ok(())
    }

    /// Several catalog changes (key → new value, None = delete) in one mtr: all or none
    /// after a crash. It runs alone like RENAME's: freeing dropped trees latches the catalog
    /// in another order.
    fn catalog_apply(&self, changes: CatalogChanges) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let _reclaim = self.reclaim_lock.lock();
        let mut m = Mtr::new(&self.store, 0);
        for (key, val) in changes {
            self.catalog_tree
                .modify_exclusive(&mut m, &key, |_| match &val {
                    Some(v) => Modify::Put(v.clone()),
                    None => Modify::Delete,
                })?;
        }
        if let Some(end) = m.commit()? {
            self.store.wal.flush_to(end)?;
        }
        Ok(())
    }

    pub fn view(&self, db: &str, name: &str) -> Option<Arc<ViewDef>> {
        self.views.read().get(db)?.get(name).cloned()
    }

    /// The views of database `db`, by name.
    pub fn views(&self, db: &str) -> Vec<Arc<ViewDef>> {
        self.views
            .read()
            .get(db)
            .map(|vs| vs.values().cloned().collect())
            .unwrap_or_default()
    }

    /// `CREATE [OR REPLACE] VIEW`: TableExists when a table has the name, or a view and not
    /// `replace`. The entries (and the old view's, replaced) change in one mtr.
    pub fn create_view(&self, db: &str, def: ViewDef, replace: bool) -> Result<()> {
        let _g = self.ddl.lock();
        if !self.catalog.read().contains_key(db) {
            return Err(Error::NoSuchDatabase(db.into()));
        }
        if self.table(db, &def.name).is_ok() {
            return Err(Error::TableExists(def.name.clone()));
        }
        let old = self.view(db, &def.name);
        if old.is_some() && !replace {
            return Err(Error::TableExists(def.name.clone()));
        }
        let mut changes = CatalogChanges::new();
        if let Some(o) = &old {
            unset_view(&mut changes, db, o);
        }
        set_view(&mut changes, db, &def);
        self.catalog_apply(changes)?;
        self.views
            .write()
            .entry(db.to_string())
            .or_default()
            .insert(def.name.clone(), Arc::new(def));
        Ok(())
    }

    /// Changes account entries in one catalog write (all or none after a crash), then in
    /// memory.
    pub fn change_accounts(&self, changes: Vec<crate::AccountChange>) -> Result<()> {
        let _g = self.ddl.lock();
        let mut catalog_changes = CatalogChanges::new();
        for (key, value) in &changes {
            let (k, v) = catalog::account_entry(key, value.as_deref())?;
            catalog_changes.insert(k, v);
        }
        self.catalog_apply(catalog_changes)?;
        let mut mem = self.accounts.write();
        for (key, value) in changes {
            match value {
                Some(v) => mem.insert(key, v),
                None => mem.remove(&key),
            };
        }
        Ok(())
    }

    /// `DROP VIEW`: NoSuchTable when `db`.`name` is not a view.
    pub fn drop_view(&self, db: &str, name: &str) -> Result<()> {
        let _g = self.ddl.lock();
        let Some(v) = self.view(db, name) else {
            return Err(Error::NoSuchTable {
                db: db.into(),
                table: name.into(),
            });
        };
        let mut gone = CatalogChanges::new();
        unset_view(&mut gone, db, &v);
        self.catalog_apply(gone)?;
        if let Some(vs) = self.views.write().get_mut(db) {
            vs.remove(name);
        }
        Ok(())
    }

    /// `RENAME TABLE` of views within their database (`(db, from, to)` each), all or none:
    /// NoSuchTable when a source is not a view (after the earlier pairs), TableExists when
    /// a target name is taken.
    pub fn rename_views(&self, pairs: &[(String, String, String)]) -> Result<()> {
        let _g = self.ddl.lock();
        let mut now: BTreeMap<(String, String), Option<Arc<ViewDef>>> = BTreeMap::new();
        let current =
            |now: &BTreeMap<(String, String), Option<Arc<ViewDef>>>, db: &str, n: &str| match now
                .get(&(db.to_string(), n.to_string()))
            {
                Some(x) => x.clone(),
                None => self.view(db, n),
            };
        let mut changes = CatalogChanges::new();
        for (db, from, to) in pairs {
            let v = current(&now, db, from).ok_or_else(|| Error::NoSuchTable {
                db: db.clone(),
                table: from.clone(),
            })?;
            if current(&now, db, to).is_some() || self.table(db, to).is_ok() {
                return Err(Error::TableExists(to.clone()));
            }
            let moved = ViewDef {
                name: to.clone(),
                ..(*v).clone()
            };
            unset_view(&mut changes, db, &v);
            set_view(&mut changes, db, &moved);
            now.insert((db.clone(), from.clone()), None);
            now.insert((db.clone(), to.clone()), Some(Arc::new(moved)));
        }
        self.catalog_apply(changes)?;
        let mut vs = self.views.write();
        for ((db, name), v) in now {
            let m = vs.entry(db).or_default();
            match v {
                Some(v) => m.insert(name, v),
                None => m.remove(&name),
            };
        }
        Ok(())
    }

    pub fn create_database(&self, name: &str) -> Result<()> {
        let _g = self.ddl.lock();
        if self.catalog.read().contains_key(name) {
            return Err(Error::DatabaseExists(name.into()));
        }
        self.catalog_put(&catalog::db_key(name), Some(catalog::encode_db()))?;
        self.catalog
            .write()
            .insert(name.to_string(), BTreeMap::new());
        Ok(())
    }

    pub fn drop_database(&self, name: &str) -> Result<()> {
        let _g = self.ddl.lock();
        let tables: Vec<String> = self
            .catalog
            .read()
            .get(name)
            .ok_or_else(|| Error::NoSuchDatabase(name.into()))?
            .keys()
            .cloned()
            .collect();
        for t in tables {
            let handle = self.table(name, &t)?;
            self.drop_table_entry(name, &handle)?;
        }
        let mut views = CatalogChanges::new();
        for v in self.views(name) {
            unset_view(&mut views, name, &v);
        }
        self.catalog_apply(views)?;
        self.catalog_put(&catalog::db_key(name), None)?;
        self.catalog.write().remove(name);
        self.views.write().remove(name);
        Ok(())
    }

    pub fn create_table(&self, db: &str, def: TableDef) -> Result<()> {
        self.create_table_filed(db, def, false).map(|_| ())
    }

    /// Creates a table in `db`: filed under its name, or, `temporary`, under a key of its
    /// own that no other table or view can hold (`Engine::create_temporary_table`).
    pub fn create_table_filed(
        &self,
        db: &str,
        def: TableDef,
        temporary: bool,
    ) -> Result<Arc<Table>> {
        let _g = self.ddl.lock();
        {
            let c = self.catalog.read();
            let tabs = c.get(db).ok_or_else(|| Error::NoSuchDatabase(db.into()))?;
            if !temporary && (tabs.contains_key(&def.name) || self.view(db, &def.name).is_some()) {
                return Err(Error::TableExists(def.name.clone()));
            }
        }
        let id = alloc::meta_slot(&self.store, SLOT_NEXT_TABLE_ID)?;
        let key = if temporary {
            format!("{}{id}", crate::TEMP_KEY_PREFIX)
        } else {
            def.name.clone()
        };
        let mut m = Mtr::new(&self.store, 0);
        let primary = BTree::create(&mut m)?;
        let mut index_roots = vec![];
        for _ in &def.indexes {
            index_roots.push(BTree::create(&mut m)?.root);
        }
        let lob = BTree::create(&mut m)?;
        alloc::set_meta_slot(&mut m, SLOT_NEXT_TABLE_ID, id + 1)?;
        m.commit()?;
        let e = TableEntry {
            id,
            primary_root: primary.root,
            index_roots,
            lob_root: Some(lob.root),
            def,
        };
        self.catalog_put(
            &catalog::table_key(db, &key),
            Some(catalog::encode_table(&e)),
        )?;
        let t = self.table_from_entry(db, key, e)?;
        self.catalog
            .write()
            .entry(db.to_string())
            .or_default()
            .insert(t.key.clone(), t.clone());
        Ok(t)
    }

    /// A TEMPORARY table's new name: its definition changes, its key stays.
    pub fn rename_temporary_table(&self, db: &str, key: &str, to: &str) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, key)?;
        if !t.is_temporary() {
            return Err(Error::Internal(format!(
                "{db}.{key} is not a TEMPORARY table"
            )));
        }
        let mut def = t.def.clone();
        def.name = to.to_string();
        let roots = t.secondary.iter().map(|s| s.root).collect();
        self.replace_table(db, key, &t, def, roots)
    }

    /// `RENAME TABLE a TO b, c TO d, ...` (each `(db, from, to_db, to)`), all or nothing:
    /// every name is checked first (a later pair may use a name an earlier one freed), the
    /// tables' writers and LOCK TABLES holders are waited for like DROP does, then one mtr
    /// deletes the old catalog entries and writes the new ones, so a crash leaves either all
    /// the old names or all the new. Rows, trees and the table id (row locks) stay; handles
    /// taken before fail their next write with NoSuchTable (their name is gone).
    pub fn rename_tables(&self, pairs: &[(String, String, String, String)]) -> Result<()> {
        let _g = self.ddl.lock();
        // The names as they will be after each pair, to check the next against.
        let mut names: BTreeMap<(String, String), Option<Arc<Table>>> = BTreeMap::new();
        let mut moves: Vec<(Arc<Table>, String, String)> = Vec::with_capacity(pairs.len());
        {
            let c = self.catalog.read();
            let lookup = |names: &BTreeMap<(String, String), Option<Arc<Table>>>,
                          db: &str,
                          t: &str|
             -> Option<Arc<Table>> {
                match names.get(&(db.to_string(), t.to_string())) {
                    Some(x) => x.clone(),
                    None => c.get(db).and_then(|ts| ts.get(t)).cloned(),
                }
            };
            for (db, from, to_db, to) in pairs {
                let t = lookup(&names, db, from).ok_or_else(|| Error::NoSuchTable {
                    db: db.clone(),
                    table: from.clone(),
                })?;
                if t.is_temporary() {
                    return Err(Error::NotSupported(
                        "RENAME TABLE of a TEMPORARY table together with other tables".into(),
                    ));
                }
                if !c.contains_key(to_db) {
                    return Err(Error::NoSuchDatabase(to_db.clone()));
                }
                if lookup(&names, to_db, to).is_some() || self.view(to_db, to).is_some() {
                    return Err(Error::TableExists(to.clone()));
                }
                names.insert((db.clone(), from.clone()), None);
                names.insert((to_db.clone(), to.clone()), Some(t.clone()));
                moves.push((t, to_db.clone(), to.clone()));
            }
        }
        let timeout = self.lock_wait();
        // Each table once (one may be renamed twice in a statement), closed like DROP does.
        let mut tables: Vec<&Arc<Table>> = Vec::with_capacity(moves.len());
        for (t, _, _) in &moves {
            if !tables.iter().any(|x| Arc::ptr_eq(&x.gate, &t.gate)) {
                tables.push(t);
            }
        }
        let guards = tables
            .iter()
            .map(|t| t.gate.close(timeout).map_err(|e| t.gate_error(e)))
            .collect::<Result<Vec<_>>>()?;
        // The final entry of every table touched: a table renamed twice keeps its last name.
        let mut finals: Vec<(Arc<Table>, String, String)> = Vec::new();
        for (t, to_db, to) in &moves {
            finals.retain(|(f, _, _)| !Arc::ptr_eq(f, t));
            finals.push((t.clone(), to_db.clone(), to.clone()));
        }
        // Foreign keys follow a renamed parent (as InnoDB): the new name of each renamed table,
        // applied to every foreign key, also of tables that are not renamed themselves.
        let follow = |def: &mut TableDef| {
            for f in &mut def.foreign_keys {
                for (db, from, to_db, to) in pairs {
                    if f.references(db, from) {
                        f.parent_db = to_db.clone();
                        f.parent_table = to.clone();
                    }
                }
            }
        };
        let followers: Vec<(Arc<Table>, TableDef)> = self
            .catalog
            .read()
            .values()
            .flat_map(|ts| ts.values())
            .filter(|t| !finals.iter().any(|(f, _, _)| Arc::ptr_eq(f, t)))
            .filter_map(|t| {
                let mut def = t.def.clone();
                follow(&mut def);
                (def != t.def).then(|| (t.clone(), def))
            })
            .collect();
        // Every new entry must fit a leaf before the mtr changes anything: an mtr cannot be
        // abandoned halfway (its changed pages would stay in the pool without redo).
        let entries = || {
            finals
                .iter()
                .map(|(t, to_db, to)| {
                    let mut def = t.def.clone();
                    def.name = to.clone();
                    follow(&mut def);
                    (t, to_db.clone(), def)
                })
                .chain(
                    followers
                        .iter()
                        .map(|(t, def)| (t, t.db.clone(), def.clone())),
                )
        };
        for (t, to_db, def) in entries() {
            let to = def.name.clone();
            let key = catalog::table_key(&to_db, &to);
            let v = catalog::encode_table(&TableEntry {
                id: t.id,
                primary_root: t.primary.root,
                index_roots: t.secondary.iter().map(|s| s.root).collect(),
                lob_root: t.lob.map(|l| l.root),
                def,
            });
            if key.len() > tierdb_btree::node::MAX_KEY_LEN
                || tierdb_btree::node::leaf_cell_size(&key, &v) > tierdb_btree::node::MAX_LEAF_CELL
            {
                return Err(Error::NotSupported(format!(
                    "renaming '{}' to '{to}': the table's catalog entry would not fit a page",
                    t.def.name
                )));
            }
        }
        // Freeing dropped trees changes the catalog too, latching the meta page after a
        // catalog leaf; this mtr may latch them the other way round (a split), so it runs
        // alone.
        let _reclaim = self.reclaim_lock.lock();
        let mut m = Mtr::new(&self.store, 0);
        for (t, _, _) in &finals {
            self.catalog_tree.modify_exclusive(
                &mut m,
                &catalog::table_key(&t.db, &t.def.name),
                |_| Modify::Delete,
            )?;
        }
        let mut renamed = Vec::with_capacity(finals.len() + followers.len());
        for (t, to_db, def) in entries() {
            let to = def.name.clone();
            let to_db = &to_db;
            let e = TableEntry {
                id: t.id,
                primary_root: t.primary.root,
                index_roots: t.secondary.iter().map(|s| s.root).collect(),
                lob_root: t.lob.map(|l| l.root),
                def,
            };
            let v = catalog::encode_table(&e);
            self.catalog_tree
                .modify_exclusive(&mut m, &catalog::table_key(to_db, &to), |_| {
                    Modify::Put(v.clone())
                })?;
            renamed.push((t.clone(), to_db.clone(), e));
        }
        if let Some(end) = m.commit()? {
            self.store.wal.flush_to(end)?;
        }
        let mut c = self.catalog.write();
        for (t, _, _) in &finals {
            if let Some(ts) = c.get_mut(&t.db) {
                ts.remove(&t.def.name);
            }
        }
        for (t, _) in &followers {
            if let Some(ts) = c.get_mut(&t.db) {
                ts.remove(&t.def.name);
            }
        }
        for (t, to_db, e) in renamed {
            t.gate.bump_version();
            let nt = Arc::new(Table {
                db: to_db.clone(),
                key: e.def.name.clone(),
                def: e.def,
                id: t.id,
                primary: t.primary,
                secondary: t.secondary.clone(),
                lob: t.lob,
                lob_ids: t.lob_ids.clone(),
                auto_inc: t.auto_inc.clone(),
                row_id: t.row_id.clone(),
                gate: t.gate.clone(),
                version: t.gate.version(),
                since: t.since,
            });
            c.entry(to_db).or_default().insert(nt.def.name.clone(), nt);
        }
        drop(c);
        drop(guards);
        for (t, to_db, to) in &finals {
            tracing::info!(db = %t.db, table = %t.def.name, %to_db, %to, "table renamed");
        }
        Ok(())
    }

    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, name)?;
        self.drop_table_entry(db, &t)?;
        self.catalog.write().get_mut(db).map(|ts| ts.remove(name));
        Ok(())
    }

    /// Removes table `t`'s catalog entry and queues its trees for `reclaim_dropped`, after the
    /// transactions writing it and its LOCK TABLES holders are gone (LockWaitTimeout after
    /// `innodb_lock_wait_timeout`). The dropped-tree entries are written first: a crash in
    /// between leaves the table in place and `load_catalog` voids them.
    fn drop_table_entry(&self, db: &str, t: &Arc<Table>) -> Result<()> {
        // Like MySQL's metadata lock: wait for the transactions writing the table and for
        // LOCK TABLES holders; afterwards the gate turns every older handle away.
        let closed = self.close_gate(t, "DROP")?;
        for root in t.roots() {
            self.queue_dropped_tree(root, Holder::Table(Arc::downgrade(&t.gate)))?;
        }
        self.catalog_put(&catalog::table_key(db, &t.key), None)?;
        closed.mark_dropped();
        Ok(())
    }

    /// Persists a dropped-tree entry for `root` and queues it; `holder` tells who must be
    /// gone before the pages are freed.
    fn queue_dropped_tree(&self, root: PageId, holder: Holder) -> Result<()> {
        self.catalog_put(
            &catalog::dropped_key(root),
            Some(catalog::encode_dropped(root)),
        )?;
        self.dropped.lock().push(Dropped {
            root,
            holder,
            horizon: None,
        });
        Ok(())
    }

    /// Frees the pages of dropped tables and indexes whose trees nobody can reach any more:
    /// no handle is left (no cached plan, no open cursor) and every transaction that was
    /// running when the last handle went has ended. At most `max_steps` mtrs of up to 64
    /// pages each; returns the pages freed. Run by the checkpointer every second.
    pub fn reclaim_dropped(&self, max_steps: usize) -> Result<u64> {
        let _g = self.reclaim_lock.lock();
        if self.closed.load(Ordering::Acquire) {
            return Ok(0);
        }
        // A deferred purge holds a handle that may be older than the one a dropped tree's
        // holder watches: no tree is freed while any deferred purge is pending or running.
        // (Its writer pushed it before leaving the table's gate, so before any DROP.)
        {
            let d = self.deferred.lock();
            if !d.is_empty() || self.deferred_running.load(Ordering::Acquire) > 0 {
                return Ok(0);
            }
        }
        let ready: Vec<PageId> = {
            let mut d = self.dropped.lock();
            if d.is_empty() {
                return Ok(0);
            }
            let next = self.active.next_id();
            let oldest = self.active.oldest_active();
            d.iter_mut()
                .filter_map(|e| {
                    if e.holder.in_use() {
                        return None;
                    }
                    let h = *e.horizon.get_or_insert(next);
                    (oldest >= h).then_some(e.root)
                })
                .collect()
        };
        let batch = (self.store.pool.frames() / 8).clamp(1, 64);
        let mut steps = 0;
        let mut freed = 0u64;
        for root in ready {
            let tree = BTree { root };
            loop {
                if steps >= max_steps {
                    return Ok(freed);
                }
                steps += 1;
                if let Some(n) = tree.reclaim_step(&self.store, batch)? {
                    freed += n;
                    continue;
                }
                let mut m = Mtr::new(&self.store, 0);
                self.catalog_tree
                    .modify(&mut m, &catalog::dropped_key(root), |_| Modify::Delete)?;
                tree.free_root(&mut m)?;
                m.commit()?;
                freed += 1;
                self.dropped.lock().retain(|e| e.root != root);
                tracing::debug!(root = root.0, "dropped tree freed");
                break;
            }
        }
        self.counters
            .pages_reclaimed
            .fetch_add(freed, Ordering::Relaxed);
        Ok(freed)
    }

    pub fn create_index(self: &Arc<Self>, db: &str, table: &str, index: IndexDef) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        if t.def
            .indexes
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(&index.name))
        {
            return Err(Error::IndexExists(index.name));
        }
        if index.columns.iter().any(|&c| c >= t.def.columns.len()) {
            return Err(Error::Internal("index column out of range".into()));
        }
        // No writer of the table may run while the index is built (their changes would miss
        // it): wait for those inside to end, keep new ones out until the new handle is there.
        let _closed = self.close_gate(&t, "CREATE INDEX")?;
        let [tree] = self.create_unlisted_trees(1)?[..] else {
            return Err(Error::Internal("one tree asked, another count made".into()));
        };
        // Fill from the committed rows. If that fails, the half-built tree is freed later.
        let fill = || -> Result<u64> {
            let mut cur = self.committed_rows(&t);
            let mut batch = SortedKeys::default();
            let (mut n, mut batches) = (0u64, 0usize);
            let mut more = true;
            while more {
                more = false;
                while let Some(row) = cur.next_row()? {
                    let k = crate::txn::index_key(&t.def, &index, &row);
                    // The length of the unique value the key starts with (0: no constraint,
                    // as for a NULL in a unique column).
                    let unique = index
                        .unique
                        .then(|| crate::txn::unique_value(&t.def, &index, &row))
                        .flatten()
                        .map_or(0, |v| v.len());
                    batch.push(&k, unique);
                    if batch.bytes() >= self.cfg.index_build_batch_bytes {
                        more = true;
                        break;
                    }
                }
                n += self.insert_sorted(&t, &index, tree, &mut batch, batches > 0)?;
                batches += 1;
            }
            Ok(n)
        };
        let abandon = |e: Error| -> Error {
            self.dropped.lock().push(Dropped {
                root: tree.root,
                holder: Holder::Nobody,
                horizon: None,
            });
            e
        };
        let n = fill().map_err(abandon)?;
        let mut def = t.def.clone();
        def.indexes.push(index);
        let mut index_roots: Vec<PageId> = t.secondary.iter().map(|s| s.root).collect();
        index_roots.push(tree.root);
        // Not `abandon` on a failure here: the entry may be durable while its flush failed;
        // the next open sorts the dropped-tree entries out.
        self.replace_table_built(db, table, &t, def, index_roots, &[tree.root])?;
        tracing::info!(db, table, entries = n, "index built");
        Ok(())
    }

    /// Inserts `batch` (keys of an index being built behind a closed gate) into `tree` in key
    /// order, a leaf's worth per mtr (`BTree::put_sorted_run`), and empties it. In order, every
    /// key of a tree built from one batch lands at the end of the rightmost leaf (full leaves,
    /// one leaf hot at a time); later batches interleave with what the first ones left. A
    /// duplicate unique value is the next key's neighbour in the batch, or (`earlier`:
    /// batches went in before) already in the tree.
    fn insert_sorted(
        self: &Arc<Self>,
        t: &Arc<Table>,
        index: &IndexDef,
        tree: BTree,
        batch: &mut SortedKeys,
        earlier: bool,
    ) -> Result<u64> {
        batch.sort();
        // Unique values first: the tree holds only earlier batches' keys until this one goes in.
        let mut prev: Option<&[u8]> = None;
        for (k, unique) in batch.iter() {
            if unique > 0 {
                let v = &k[..unique];
                let dup = prev.is_some_and(|p| p.starts_with(v))
                    || (earlier && crate::txn::has_key_prefix(&self.store, tree, v)?);
                if dup {
                    return Err(self.duplicate_in_build(t, index, v));
                }
            }
            prev = Some(k);
        }
        // Then leaf by leaf: each mtr fills one leaf with the keys that belong to it.
        let mut run: Vec<(&[u8], &[u8])> = Vec::with_capacity(1024);
        let mut keys = batch.iter().map(|(k, _)| k).peekable();
        let mut n = 0u64;
        while keys.peek().is_some() || !run.is_empty() {
            while run.len() < 1024 {
                match keys.next() {
                    Some(k) => run.push((k, &[][..])),
                    None => break,
                }
            }
            let mut m = Mtr::new(&self.store, 0);
            let mut put = tree.put_sorted_run(&mut m, &run)?;
            m.commit()?;
            if put == 0 {
                // The leaf is full: this key splits it (in an mtr of its own: the one above
                // held the leaf).
                let mut m = Mtr::new(&self.store, 0);
                tree.modify(&mut m, run[0].0, |_| Modify::Put(Vec::new()))?;
                m.commit()?;
                put = 1;
            }
            run.drain(..put);
            n += put as u64;
        }
        drop(run);
        drop(keys);
        batch.clear();
        Ok(n)
    }

    /// The duplicate-key error of an index build that met unique value `value` twice, naming
    /// a row that holds it (found by a scan: this is the failing path only).
    fn duplicate_in_build(
        self: &Arc<Self>,
        t: &Arc<Table>,
        index: &IndexDef,
        value: &[u8],
    ) -> Error {
        let mut cur = self.committed_rows(t);
        loop {
            match cur.next_row() {
                Ok(Some(row)) => {
                    if crate::txn::unique_value(&t.def, index, &row).as_deref() == Some(value) {
                        return Error::DuplicateKey {
                            key: crate::txn::shown(&t.def, &index.columns, &row),
                            index: index.name.clone(),
                        };
                    }
                }
                // The read failed: that error, not a duplicate without its value.
                Err(e) => return e,
                Ok(None) => {
                    return Error::Internal(format!(
                        "index build met a duplicate value of '{}' but no row holds it",
                        index.name
                    ))
                }
            }
        }
    }

    /// Persists a new definition / index list for table `t` and swaps its in-memory handle
    /// (sessions holding the old handle keep using it until their next statement).
    fn replace_table(
        &self,
        db: &str,
        table: &str,
        t: &Table,
        def: TableDef,
        index_roots: Vec<PageId>,
    ) -> Result<()> {
        self.replace_table_built(db, table, t, def, index_roots, &[])
    }

    /// `replace_table` for a definition that lists `built`, trees filled behind the closed
    /// gate: their dropped-tree entries go in the mtr that writes the table's entry.
    fn replace_table_built(
        &self,
        db: &str,
        table: &str,
        t: &Table,
        def: TableDef,
        index_roots: Vec<PageId>,
        built: &[PageId],
    ) -> Result<()> {
        let e = TableEntry {
            id: t.id,
            primary_root: t.primary.root,
            index_roots,
            lob_root: t.lob.map(|l| l.root),
            def,
        };
        let key = catalog::table_key(db, table);
        let v = catalog::encode_table(&e);
        if built.is_empty() {
            self.catalog_put(&key, Some(v))?;
        } else {
            self.put_dropped_entries(&[], built, Some((&key, &v)))?;
        }
        // Writers holding an older handle move to this one at their next change.
        t.gate.bump_version();
        self.note_foreign_keys(&e.def);
        let nt = Arc::new(Table {
            db: db.into(),
            def: e.def,
            key: table.to_string(),
            id: t.id,
            primary: t.primary,
            secondary: e.index_roots.iter().map(|&r| BTree { root: r }).collect(),
            lob: t.lob,
            lob_ids: t.lob_ids.clone(),
            auto_inc: t.auto_inc.clone(),
            row_id: t.row_id.clone(),
            gate: t.gate.clone(),
            version: t.gate.version(),
            // New trees (an index build): read views opened before cannot use this handle.
            since: if built.is_empty() {
                t.since
            } else {
                self.active.stamp()
            },
        });
        self.catalog
            .write()
            .entry(db.to_string())
            .or_default()
            .insert(table.to_string(), nt);
        Ok(())
    }

    /// ALTER TABLE ... ADD COLUMN at the end, without touching a row: rows stored before keep
    /// their shorter form and read the column as `col.fill` (see `txn::complete_row`). Waits
    /// for the table's writers like an index build, so no change is made through the old
    /// definition afterwards.
    pub fn add_column(
        &self,
        db: &str,
        table: &str,
        col: ColumnDef,
        checks: Option<Vec<crate::types::CheckDef>>,
    ) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        if t.def
            .columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&col.name))
        {
            return Err(Error::Internal(format!("column '{}' exists", col.name)));
        }
        if col.auto_increment || col.fill.is_none() {
            return Err(Error::Internal(
                "an added column needs a fill value and cannot be AUTO_INCREMENT".into(),
            ));
        }
        let _closed = self.close_gate(&t, "ALTER TABLE")?;
        let mut def = t.def.clone();
        def.columns.push(col);
        if let Some(checks) = checks {
            def.checks = checks;
        }
        let roots: Vec<PageId> = t.secondary.iter().map(|s| s.root).collect();
        self.replace_table(db, table, &t, def, roots)?;
        tracing::info!(db, table, "column added");
        Ok(())
    }

    /// ALTER TABLE ... MODIFY / CHANGE / RENAME COLUMN / ALTER COLUMN ... DEFAULT: column
    /// `pos` gets definition `col` without touching a row, which needs the stored values to
    /// keep their form (`storage_compatible`). With `check`, every committed row's value is
    /// offered to it first (in primary key order, writers shut out by the gate) and the first
    /// it refuses fails the change with DataTruncated naming its row number.
    pub fn alter_column(
        self: &Arc<Self>,
        db: &str,
        table: &str,
        pos: usize,
        mut col: ColumnDef,
        check: Option<&mut dyn FnMut(&crate::Value) -> bool>,
    ) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        let Some(old) = t.def.columns.get(pos) else {
            return Err(Error::Internal(format!("no column {pos} in {table}")));
        };
        let keyed = t.def.key_columns().contains(&pos)
            || t.def.indexes.iter().any(|i| i.columns.contains(&pos));
        storage_compatible(old, &col, keyed)?;
        if t.def
            .columns
            .iter()
            .enumerate()
            .any(|(i, c)| i != pos && c.name.eq_ignore_ascii_case(&col.name))
        {
            return Err(Error::Internal(format!("column '{}' exists", col.name)));
        }
        col.fill = old.fill.clone();
        let _closed = self.close_gate(&t, "ALTER TABLE")?;
        if let Some(check) = check {
            let mut cur = self.committed_rows(&t);
            let mut row_no = 0u64;
            while let Some(row) = cur.next_row()? {
                row_no += 1;
                if !check(row.get(pos).unwrap_or(&crate::Value::Null)) {
                    return Err(Error::DataTruncated {
                        column: col.name.clone(),
                        row: row_no,
                    });
                }
            }
        }
        let mut def = t.def.clone();
        def.columns[pos] = col;
        let roots: Vec<PageId> = t.secondary.iter().map(|s| s.root).collect();
        self.replace_table(db, table, &t, def, roots)?;
        tracing::info!(db, table, column = pos, "column changed");
        Ok(())
    }

    /// Replaces the table's CHECK constraints (ALTER TABLE ADD / DROP CONSTRAINT). With
    /// `verify`, every committed row is passed to it first (behind the closed gate, so no
    /// writer adds a row meanwhile); its error stops the change.
    pub fn set_checks(
        self: &Arc<Self>,
        db: &str,
        table: &str,
        checks: Vec<crate::CheckDef>,
        verify: Option<&mut crate::RowVerifier<'_>>,
    ) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        let _closed = self.close_gate(&t, "ALTER TABLE")?;
        if let Some(verify) = verify {
            let mut cur = self.committed_rows(&t);
            while let Some(row) = cur.next_row()? {
                verify(&row)?;
            }
        }
        let mut def = t.def.clone();
        def.checks = checks;
        let roots: Vec<PageId> = t.secondary.iter().map(|s| s.root).collect();
        self.replace_table(db, table, &t, def, roots)?;
        tracing::info!(db, table, "CHECK constraints changed");
        Ok(())
    }

    /// ALTER TABLE that changes how rows are stored (DROP COLUMN, a column's type or place,
    /// the primary key): every committed row of the table (whose definition must still be
    /// `from`) is passed through `map` (old columns → columns of `def`) into new trees, behind the closed gate (writers wait, plain
    /// reads go on in the old trees), then one mtr swaps the table's catalog entry to the new
    /// trees. The new trees carry dropped-tree entries while they are filled, so a crash or a
    /// failure (a `map` error, a duplicate key under the new keys) leaves the table as it was
    /// and frees them; the swap replaces those entries with the old trees'. The table keeps its
    /// id (row locks) and name. Returns the rows copied.
    pub fn rebuild_table(
        self: &Arc<Self>,
        db: &str,
        table: &str,
        from: &TableDef,
        def: TableDef,
        map: &mut dyn FnMut(Vec<crate::Value>) -> Result<Vec<crate::Value>>,
    ) -> Result<u64> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        if t.def != *from {
            // Another DDL changed the table since `def` was derived from `from`.
            return Err(Error::TableDefinitionChanged);
        }
        if def.name != t.def.name {
            return Err(Error::Internal("a rebuild keeps the table's name".into()));
        }
        let width = def.columns.len();
        if def.primary_key.iter().any(|&c| c >= width)
            || def
                .indexes
                .iter()
                .any(|i| i.columns.iter().any(|&c| c >= width))
        {
            return Err(Error::Internal("key column out of range".into()));
        }
        let closed = self.close_gate(&t, "ALTER TABLE")?;
        // The primary tree, one per index, the long-value tree last.
        let mut trees = self.create_unlisted_trees(2 + def.indexes.len())?;
        let lob = trees
            .pop()
            .ok_or_else(|| Error::Internal("no long-value tree".into()))?;
        let secondary = trees.split_off(1);
        let primary = trees[0];
        let new_roots: Vec<PageId> = std::iter::once(primary.root)
            .chain(secondary.iter().map(|s| s.root))
            .chain(std::iter::once(lob.root))
            .collect();
        let mut lob_id = 0u64;
        let abandon = |e: Error| -> Error {
            let mut d = self.dropped.lock();
            for &root in &new_roots {
                d.push(Dropped {
                    root,
                    holder: Holder::Nobody,
                    horizon: None,
                });
            }
            e
        };
        let auto_col = def.columns.iter().position(|c| c.auto_increment);
        let mut max_auto = 0i64;
        let mut row_id = 0i64;
        let mut copy = || -> Result<u64> {
            let mut cur = self.committed_rows(&t);
            let mut n = 0u64;
            let old_width = t.def.columns.len();
            while let Some(mut row) = cur.next_row()? {
                row.truncate(old_width);
                let mut row = map(row)?;
                if row.len() != width {
                    return Err(Error::Internal(format!(
                        "a rebuilt row has {} values for {width} columns",
                        row.len()
                    )));
                }
                for (i, c) in def.columns.iter().enumerate() {
                    if row[i].is_null() && !c.nullable {
                        return Err(Error::NotNull(c.name.clone()));
                    }
                }
                match auto_col.and_then(|a| row.get(a)) {
                    Some(crate::Value::Int(v)) => max_auto = max_auto.max(*v),
                    Some(crate::Value::UInt(_)) => max_auto = i64::MAX,
                    _ => {}
                }
                if def.has_hidden_key() {
                    row_id += 1;
                    row.push(crate::Value::Int(row_id));
                }
                let pk = crate::txn::pk_values(&def, &row);
                let key = crate::txn::pk_key(&def, &pk);
                let mut ext = Vec::new();
                for c in crate::lob::plan(&def, key.len(), &row)? {
                    if let crate::Value::Bytes(b) = &row[c] {
                        lob_id += 1;
                        crate::lob::write_unlogged(&self.store, lob, lob_id, b)?;
                        ext.push(crate::rowcodec::External {
                            col: c,
                            id: lob_id,
                            len: crate::lob::length_of(b)?,
                        });
                    }
                }
                let mut enc = Vec::with_capacity(64);
                crate::rowcodec::encode_row_ext(&mut enc, 0, 0, &row, &ext);
                let mut dup = false;
                let mut m = Mtr::new(&self.store, 0);
                primary.modify(&mut m, &key, |cur| {
                    dup = cur.is_some();
                    if dup {
                        Modify::Keep
                    } else {
                        Modify::Put(enc.clone())
                    }
                })?;
                m.commit()?;
                if dup {
                    return Err(Error::DuplicateKey {
                        key: crate::txn::shown(&def, &def.primary_key, &row),
                        index: "PRIMARY".into(),
                    });
                }
                for (idx, tree) in def.indexes.iter().zip(&secondary) {
                    if idx.unique {
                        if let Some(v) = crate::txn::unique_value(&def, idx, &row) {
                            if crate::txn::has_key_prefix(&self.store, *tree, &v)? {
                                return Err(Error::DuplicateKey {
                                    key: crate::txn::shown(&def, &idx.columns, &row),
                                    index: idx.name.clone(),
                                });
                            }
                        }
                    }
                    let k = crate::txn::index_key(&def, idx, &row);
                    let mut m = Mtr::new(&self.store, 0);
                    tree.modify(&mut m, &k, |_| Modify::Put(Vec::new()))?;
                    m.commit()?;
                }
                n += 1;
                if n.is_multiple_of(100_000) {
                    tracing::info!(db, table, rows = n, "ALTER TABLE copying rows");
                }
            }
            Ok(n)
        };
        let n = copy().map_err(abandon)?;
        // The swap: the new trees lose their dropped-tree entries, the old ones get theirs,
        // and the table's entry names the new trees, in one mtr.
        let old_roots: Vec<PageId> = t.roots().collect();
        let e = TableEntry {
            id: t.id,
            primary_root: primary.root,
            index_roots: secondary.iter().map(|s| s.root).collect(),
            lob_root: Some(lob.root),
            def,
        };
        let key = catalog::table_key(db, table);
        let v = catalog::encode_table(&e);
        if key.len() > tierdb_btree::node::MAX_KEY_LEN
            || tierdb_btree::node::leaf_cell_size(&key, &v) > tierdb_btree::node::MAX_LEAF_CELL
        {
            return Err(abandon(Error::NotSupported(format!(
                "altering '{table}': the table's catalog entry would not fit a page"
            ))));
        }
        // Not `abandon` on a failure here: the swap may be durable while its flush failed;
        // the next open sorts the entries out (one whose tree a table lists is void).
        self.put_dropped_entries(&old_roots, &new_roots, Some((&key, &v)))?;
        // Readers of the old trees hold the old handle (or an older one, re-planned before
        // its next use): the old trees are freed once it is gone.
        {
            let mut d = self.dropped.lock();
            for root in old_roots {
                d.push(Dropped {
                    root,
                    holder: Holder::Handle(Arc::downgrade(&t)),
                    horizon: None,
                });
            }
        }
        t.auto_inc.fetch_max(max_auto, Ordering::Relaxed);
        t.gate.bump_version();
        self.note_foreign_keys(&e.def);
        let nt = Arc::new(Table {
            db: db.into(),
            def: e.def,
            key: table.to_string(),
            id: t.id,
            primary,
            secondary,
            lob: Some(lob),
            lob_ids: Arc::new(AtomicU64::new(lob_id)),
            auto_inc: t.auto_inc.clone(),
            row_id: Arc::new(AtomicI64::new(row_id)),
            gate: t.gate.clone(),
            version: t.gate.version(),
            since: self.active.stamp(),
        });
        self.catalog
            .write()
            .entry(db.to_string())
            .or_default()
            .insert(table.to_string(), nt);
        drop(closed);
        tracing::info!(db, table, rows = n, "table rebuilt");
        Ok(n)
    }

    /// `n` new empty trees carrying dropped-tree entries, made in one mtr: until a table's
    /// entry lists them (`put_dropped_entries` with them in `remove`), a crash frees them at
    /// the next open.
    fn create_unlisted_trees(&self, n: usize) -> Result<Vec<BTree>> {
        // Allocation latches the meta page before the catalog leaves here, the other way
        // round from freeing: no reclaim meanwhile (and other DDL waits for the ddl lock).
        let _reclaim = self.reclaim_lock.lock();
        let mut m = Mtr::new(&self.store, 0);
        let mut trees = Vec::with_capacity(n);
        for _ in 0..n {
            trees.push(BTree::create(&mut m)?);
        }
        for t in &trees {
            self.catalog_tree
                .modify_exclusive(&mut m, &catalog::dropped_key(t.root), |_| {
                    Modify::Put(catalog::encode_dropped(t.root))
                })?;
        }
        if let Some(end) = m.commit()? {
            self.store.wal.flush_to(end)?;
        }
        Ok(trees)
    }

    /// Writes dropped-tree entries for `add`, deletes those of `remove` and puts catalog
    /// entry `table` (key, value), in one mtr.
    fn put_dropped_entries(
        &self,
        add: &[PageId],
        remove: &[PageId],
        table: Option<(&[u8], &[u8])>,
    ) -> Result<()> {
        // Freeing dropped trees latches the meta page after a catalog leaf; a split here may
        // latch them the other way round, so this mtr runs alone.
        let _reclaim = self.reclaim_lock.lock();
        let mut m = Mtr::new(&self.store, 0);
        for &root in add {
            self.catalog_tree
                .modify_exclusive(&mut m, &catalog::dropped_key(root), |_| {
                    Modify::Put(catalog::encode_dropped(root))
                })?;
        }
        for &root in remove {
            self.catalog_tree
                .modify_exclusive(&mut m, &catalog::dropped_key(root), |_| Modify::Delete)?;
        }
        if let Some((key, v)) = table {
            self.catalog_tree
                .modify_exclusive(&mut m, key, |_| Modify::Put(v.to_vec()))?;
        }
        if let Some(end) = m.commit()? {
            self.store.wal.flush_to(end)?;
        }
        Ok(())
    }

    /// A cursor over every committed row of `t` in primary key order, for DDL that has shut
    /// the table's writers out (index builds, column checks).
    fn committed_rows(self: &Arc<Self>, t: &Arc<Table>) -> crate::txn::Cursor {
        crate::txn::Cursor::new_primary(
            self.clone(),
            t.clone(),
            Default::default(),
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            None,
        )
    }

    pub fn drop_index(&self, db: &str, table: &str, index: &str) -> Result<()> {
        let _g = self.ddl.lock();
        let t = self.table(db, table)?;
        let Some(pos) = t
            .def
            .indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(index))
        else {
            return Err(Error::NotSupported(format!(
                "dropping unknown index '{index}'"
            )));
        };
        let mut def = t.def.clone();
        def.indexes.remove(pos);
        let mut index_roots: Vec<PageId> = t.secondary.iter().map(|s| s.root).collect();
        let gone = index_roots.remove(pos);
        self.queue_dropped_tree(gone, Holder::Handle(Arc::downgrade(&t)))?;
        self.replace_table(db, table, &t, def, index_roots)?;
        Ok(())
    }

    fn note_foreign_keys(&self, def: &TableDef) {
        if !def.foreign_keys.is_empty() {
            self.any_foreign_keys.store(true, Ordering::Release);
        }
    }

    /// Every (child table, position of its foreign key) whose FOREIGN KEY references
    /// `db`.`table` (the table itself included, for a self-reference), in catalog order.
    pub fn referencing(&self, db: &str, table: &str) -> Vec<(Arc<Table>, usize)> {
        if !self.any_foreign_keys.load(Ordering::Acquire) {
            return Vec::new();
        }
        let c = self.catalog.read();
        let mut out = Vec::new();
        for t in c.values().flat_map(|ts| ts.values()) {
            for (i, f) in t.def.foreign_keys.iter().enumerate() {
                if f.references(db, table) {
                    out.push((t.clone(), i));
                }
            }
        }
        out
    }

    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        let c = self.catalog.read();
        let tabs = c.get(db).ok_or_else(|| Error::NoSuchDatabase(db.into()))?;
        tabs.get(name).cloned().ok_or_else(|| Error::NoSuchTable {
            db: db.into(),
            table: name.into(),
        })
    }

    /// Fuzzy checkpoint: the redo start moves to the oldest of (log end, oldest dirty page,
    /// oldest active transaction's first record); older segments are deleted.
    pub fn checkpoint(&self) -> Result<Lsn> {
        let _g = self.checkpoint_lock.lock();
        // The next transaction id goes into the meta page first, so that after a restart ids
        // continue past those in rows whose redo this checkpoint lets go.
        let next_txn = self.active.next_id();
        if alloc::meta_slot(&self.store, SLOT_NEXT_TXN_ID)? < next_txn {
            let mut m = Mtr::new(&self.store, 0);
            alloc::set_meta_slot(&mut m, SLOT_NEXT_TXN_ID, next_txn)?;
            m.commit()?;
        }
        let mut l0 = Lsn(0);
        // Every record before this one has stamped and dirtied its pages (in_lock order).
        self.store
            .wal
            .append(&[KIND_CHECKPOINT], |start, _| l0 = start)?;
        let mut c = l0;
        if let Some(r) = self.store.pool.min_rec_lsn() {
            c = c.min(r);
        }
        if let Some(t) = self.active.min_first_lsn() {
            c = c.min(Lsn(t));
        }
        self.store.wal.flush_to(self.store.wal.end_lsn())?;
        if c > self.store.wal.checkpoint_lsn() {
            // The binary log's bytes in the records about to be let go must be in its files.
            if let Some(sink) = &self.cfg.binlog {
                sink.before_checkpoint(c.0, self.store.wal.durable_lsn().0)?;
            }
            // Every page write the new redo start relies on must be named by the durable page
            // map (the map names slots whose writes completed before this call).
            self.data
                .persist_map()
                .map_err(|e| Error::Io(format!("persisting the page map: {e}")))?;
            // The BPE index is persisted first, tagged with the new redo start: after a crash
            // it is reused only together with a log that still holds every later change.
            if let Some(b) = &self.bpe {
                if let Err(e) = b.snapshot(c.0) {
                    tracing::warn!(error = %e, "BPE snapshot failed; it will start cold after a crash");
                }
            }
            self.store.wal.checkpoint(c)?;
        }
        self.counters.checkpoints.fetch_add(1, Ordering::Relaxed);
        Ok(c)
    }

    /// Background checkpointer. Every second it frees some pages of dropped trees
    /// (`reclaim_dropped`, at most 16 steps of up to 64 pages) and looks at the redo age (log written since the
    /// checkpoint): past half of `REDO_AGE_MAX` it asks the pool's flusher to write the pages
    /// dirtied in the oldest part of the log, and checkpoints; otherwise it checkpoints every
    /// 30 s. Pages stay dirty in DRAM in between, absorbing many changes per write.
    pub fn run_checkpointer(self: Arc<Self>) {
        const RECLAIM_STEPS_PER_TICK: usize = 16;
        const REDO_AGE_MAX: u64 = 1 << 30;
        let mut last = Instant::now();
        loop {
            {
                let mut s = self.stop.lock();
                if *s {
                    return;
                }
                self.stop_cv.wait_for(&mut s, Duration::from_secs(1));
                if *s {
                    return;
                }
            }
            if let Some(sink) = &self.cfg.binlog {
                sink.write_durable(self.store.wal.durable_lsn().0);
            }
            let end = self.store.wal.end_lsn().0;
            let age = end.saturating_sub(self.store.wal.checkpoint_lsn().0);
            if age > REDO_AGE_MAX / 4 {
                self.store
                    .pool
                    .set_flush_target(Lsn(end - REDO_AGE_MAX / 4));
            }
            // Slots that pages left are reusable once a map naming their new slots is durable.
            if let Err(e) = self.data.persist_map_if_held() {
                tracing::error!(error = %e, "persisting the page map failed; will retry");
            }
            // Freed pages are written back like any other change: a bounded number of pages
            // per second keeps a large DROP from eating a slow disk's IOPS.
            if let Err(e) = self.reclaim_dropped(RECLAIM_STEPS_PER_TICK) {
                tracing::error!(error = %e, "freeing a dropped table's pages failed; will retry");
            }
            if age > REDO_AGE_MAX / 2 || (last.elapsed() > Duration::from_secs(30) && age > 0) {
                if let Err(e) = self.checkpoint() {
                    tracing::error!(error = %e, "checkpoint failed");
                }
                last = Instant::now();
            }
        }
    }

    /// Background cleaner of a relocating data file (`CLEANER_THREADS` of them): every 20 ms, while few segments are
    /// wholly free, it moves the live pages of the emptiest segments (`DataFile::clean_step`,
    /// at most 64 segments per turn), then persists the page map if many slots wait for it.
    /// An I/O error is logged and the cleaner pauses a second (nothing it wrote is named by
    /// any map until its write completed).
    pub fn run_cleaner(self: Arc<Self>) {
        const STEPS_PER_TURN: usize = 64;
        loop {
            let pause = {
                let mut s = self.stop.lock();
                if *s {
                    return;
                }
                self.stop_cv.wait_for(&mut s, Duration::from_millis(20));
                if *s {
                    return;
                }
                let _g = self.cleaner_lock.read();
                if self.closed.load(Ordering::SeqCst) || self.store.pool.is_poisoned() {
                    return;
                }
                drop(s);
                let mut pause = false;
                for _ in 0..STEPS_PER_TURN {
                    match self.data.clean_step() {
                        Ok(Some(_)) => {}
                        Ok(None) => break,
                        Err(e) => {
                            tracing::warn!(error = %e, "data file cleaner: step failed; pausing");
                            pause = true;
                            break;
                        }
                    }
                }
                if let Err(e) = self.data.persist_map_if_held() {
                    tracing::warn!(error = %e, "data file cleaner: persisting the page map failed");
                    pause = true;
                }
                pause
            };
            if pause {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }

    pub fn shutdown(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        *self.stop.lock() = true;
        self.stop_cv.notify_all();
        // A cleaner step in progress finishes first; none starts after (`closed` is set).
        drop(self.cleaner_lock.write());
        // A reclaim step in progress finishes first; none starts after (`closed` is set).
        let _reclaim = self.reclaim_lock.lock();
        self.store.pool.flush_all()?;
        self.checkpoint()?;
        let end = self.store.wal.end_lsn();
        self.store.wal.close()?;
        self.store.pool.set_hooks(None);
        if let Some(b) = &self.bpe {
            // Tagged with the final log end: the next start reuses it only if nothing changed.
            if let Err(e) = b.shutdown_tagged(end.0) {
                tracing::warn!(error = %e, "BPE shutdown failed; it will start cold");
            }
        }
        self.store.pool.shutdown();
        Ok(())
    }

    /// `SET GLOBAL bpe_*`: online BPE control.
    pub fn set_bpe_variable(&self, key: &str, value: &crate::Value) -> Result<()> {
        let Some(b) = &self.bpe else {
            return Err(Error::NotSupported(format!(
                "SET {key}: the server runs without a BPE (no bpe_devices)"
            )));
        };
        let text = match value {
            crate::Value::Bytes(v) => String::from_utf8_lossy(v).trim().to_string(),
            other => other.to_string(),
        };
        let bad = |why: String| Error::BadValue {
            name: key.to_string(),
            value: text.clone(),
            why,
        };
        match key {
            "bpe_enabled" => {
                let on = match text.to_ascii_lowercase().as_str() {
                    "1" | "on" | "true" => true,
                    "0" | "off" | "false" => false,
                    _ => return Err(bad("expected ON or OFF".into())),
                };
                b.set_enabled(on);
                tracing::info!(enabled = on, "BPE switched online");
            }
            "bpe_size" => {
                let bytes =
                    parse_size(&text).ok_or_else(|| bad("expected a size such as 4G".into()))?;
                b.set_size(bytes).map_err(|e| bad(e.to_string()))?;
                tracing::info!(bytes, "BPE resized online");
            }
            "bpe_admission" => {
                let p = text.parse().map_err(bad)?;
                b.set_admission(p);
            }
            "bpe_add_device" => {
                b.add_device(std::path::Path::new(&text))
                    .map_err(|e| bad(e.to_string()))?;
                tracing::info!(device = %text, "BPE device added online");
            }
            "bpe_remove_device" => {
                b.remove_device(std::path::Path::new(&text))
                    .map_err(|e| bad(e.to_string()))?;
                tracing::info!(device = %text, "BPE device removed online");
            }
            _ => return Err(Error::NotSupported(format!("SET GLOBAL {key}"))),
        }
        Ok(())
    }

    pub fn set_flush_policy(&self, v: u8) -> Option<()> {
        self.store.wal.set_policy(FlushPolicy::from_mysql(v)?);
        Some(())
    }
}

/// Parses `4G`, `512M`, `1048576`, `16K` (binary units).
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mul)
}

/// Whether column `old` may become `new` without rewriting a row: the values keep their
/// stored form (integers stay integers, text and BLOBs stay bytes, doubles stay doubles,
/// DECIMAL keeps its scale, dates their kind), and a column in a key keeps its collation (its
/// key bytes depend on it). NotSupported naming what would need a table rewrite otherwise.
pub(crate) fn storage_compatible(old: &ColumnDef, new: &ColumnDef, keyed: bool) -> Result<()> {
    use crate::types::ColumnType as T;
    let bytes = |t: &T| {
        matches!(
            t,
            T::Char(_) | T::VarChar(_) | T::Text(_) | T::Blob(_) | T::Binary(_) | T::VarBinary(_)
        )
    };
    let same_form = match (&old.ty, &new.ty) {
        (T::Int { .. }, T::Int { .. }) => true,
        // BINARY(n) values are padded to n bytes: a change to or from another type or length
        // copies the rows (padding or cutting anew), as MariaDB does.
        (T::Binary(a), T::Binary(b)) => a == b,
        (T::Binary(_), _) | (_, T::Binary(_)) => false,
        // An ENUM is stored as its member's text: members appended keep every stored value
        // (in place, as MariaDB); another member list or type is a copy converting each value.
        (T::Enum(a), T::Enum(b)) | (T::Set(a), T::Set(b)) => b.starts_with(a),
        (a, b) if bytes(a) && bytes(b) => true,
        (T::Float | T::Double, T::Float | T::Double) => true,
        (T::Decimal { scale: a, .. }, T::Decimal { scale: b, .. }) => a == b,
        (T::Date, T::Date) | (T::Year, T::Year) => true,
        (T::Time(a), T::Time(b)) => a == b,
        // Integers either way; a narrower width is checked by the copy.
        (T::Bit(a), T::Bit(b)) => a <= b,
        // The fraction's width is part of the stored text.
        (T::DateTime(a) | T::Timestamp(a), T::DateTime(b) | T::Timestamp(b)) => a == b,
        _ => false,
    };
    if !same_form {
        return Err(Error::NotSupported(format!(
            "changing column '{}' from {:?} to {:?} (it would rewrite every row)",
            old.name, old.ty, new.ty
        )));
    }
    if keyed && old.collation != new.collation && bytes(&new.ty) {
        return Err(Error::NotSupported(format!(
            "changing the collation of column '{}', which is part of a key",
            old.name
        )));
    }
    if old.auto_increment != new.auto_increment {
        return Err(Error::NotSupported(format!(
            "adding or removing AUTO_INCREMENT on column '{}'",
            old.name
        )));
    }
    Ok(())
}

/// Recovery: hands a durable record's binary-log bytes to the sink (counted and skipped when
/// no binary log is configured now).
fn replay_binlog(cfg: &EngineConfig, at: Lsn, bytes: &[u8], skipped: &mut u64) -> Result<()> {
    match &cfg.binlog {
        Some(sink) => sink
            .replay(bytes)
            .map_err(|e| Error::Corrupt(format!("binary-log record at {at}: {e}"))),
        None => {
            *skipped += 1;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ColumnDef, ColumnType, TableDef};

    fn def() -> TableDef {
        TableDef {
            name: "t".into(),
            columns: vec![ColumnDef {
                name: "id".into(),
                ty: ColumnType::Int {
                    bytes: 8,
                    unsigned: false,
                },
                nullable: false,
                auto_increment: false,
                default: None,
                fill: None,
                collation: crate::Collation::Binary,
                on_update_now: false,
            }],
            primary_key: vec![0],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        }
    }

    /// A crash after DROP TABLE wrote the dropped-tree entry but before it removed the
    /// table's entry: the table is still there, so the entry must be voided at open, not
    /// acted on (freeing a live table's pages).
    #[test]
    fn a_dropped_tree_entry_for_a_live_table_is_voided_at_open() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cfg = || {
            let mut c = EngineConfig::under(dir.path());
            c.buffer_pool_size_bytes = 1 << 20;
            c
        };
        let root = {
            let i = Inner::open(cfg()).expect("open");
            i.create_database("db").expect("db");
            i.create_table("db", def()).expect("table");
            let t = i.table("db", "t").expect("handle");
            let root = t.primary.root;
            // The first half of drop_table only.
            i.queue_dropped_tree(root, Holder::Nobody).expect("queue");
            i.shutdown().expect("shutdown");
            root
        };
        let i = Inner::open(cfg()).expect("reopen");
        assert!(i.dropped.lock().is_empty(), "entry for a live tree kept");
        assert_eq!(i.reclaim_dropped(usize::MAX).expect("reclaim"), 0);
        let t = i.table("db", "t").expect("table survives");
        assert_eq!(t.primary.root, root);
        let mut found = false;
        i.catalog_tree
            .scan(&i.store, std::ops::Bound::Unbounded, |_, v| {
                found |= v.first() == Some(&b'G');
                true
            })
            .expect("scan catalog");
        assert!(!found, "the void entry is still in the catalog");
        i.shutdown().expect("shutdown");
    }
}

/// Keys of an index build, kept in one buffer and sorted by reference.
#[derive(Default)]
struct SortedKeys {
    bytes: Vec<u8>,
    /// (start in `bytes`, length, length of the unique value it starts with, 0 = none).
    keys: Vec<(usize, u32, u32)>,
}

impl SortedKeys {
    fn push(&mut self, key: &[u8], unique: usize) {
        self.keys
            .push((self.bytes.len(), key.len() as u32, unique as u32));
        self.bytes.extend_from_slice(key);
    }

    fn bytes(&self) -> usize {
        self.bytes.len() + self.keys.len() * std::mem::size_of::<(usize, u32, u32)>()
    }

    fn key(&self, e: &(usize, u32, u32)) -> &[u8] {
        &self.bytes[e.0..e.0 + e.1 as usize]
    }

    fn sort(&mut self) {
        let mut keys = std::mem::take(&mut self.keys);
        keys.sort_unstable_by(|a, b| self.key(a).cmp(self.key(b)));
        self.keys = keys;
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], usize)> {
        self.keys.iter().map(|e| (self.key(e), e.2 as usize))
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.keys.clear();
    }
}
