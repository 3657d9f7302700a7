//! The binary log's files: where each transaction's events go, writing them, rotating,
//! recovering and purging; the engine's [`BinlogSink`].
//!
//! Owns: the order lock (binary-log order = redo order for logged commits: a commit's events
//! get their file, offset and GTID sequence number while the lock is held across the append
//! of its redo record), the sink bytes inside redo records (a list of writes, each a file
//! number, an offset and bytes; layout in `docs/format.md`, "Binary log"), the files
//! `<basename>.NNNNNN` and `<basename>.index` in the configured folder, rotation (past
//! `max_binlog_size`, `FLUSH BINARY LOGS`, each start), purging, listing and the GTID state.
//!
//! Durability comes from the redo log: bytes are written to the files only after their
//! record is durable and synced before a checkpoint lets the record go, so after a crash the
//! files are brought up to date from the redo log (`replay`), and hold exactly the committed
//! transactions, in commit order.
//!
//! Must never: write bytes of a record that is not durable; let a checkpoint pass a record
//! whose bytes are not synced in the files; reuse an offset; delete the file being written
//! or one with writes not yet synced; panic on bytes read from the files or the redo log.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};
use tierdb_engine::binlog::AppendRecord;
use tierdb_engine::{BinlogSink, Capture, Error, Result, RowChange, Table};

use crate::events::{self, QueryEvent};
use crate::rows::{self, RowsKind};

/// Version byte of the sink bytes in a redo record.
const SINK_VERSION: u8 = 1;
/// Sink bytes past this size go in several redo records (a transaction's leading parts, then
/// its commit record); well under the redo log's 16 MiB record limit.
const RECORD_SINK_BYTES: usize = 4 << 20;
/// Largest events of one DDL statement (they must fit one record with a rotation's bytes).
const MAX_STATEMENT_BYTES: usize = RECORD_SINK_BYTES - (64 << 10);
/// Rows of one rows event stop growing past this many bytes (MariaDB's
/// `binlog_row_event_max_size` default).
const ROWS_EVENT_BYTES: usize = 8192;
/// The GTID domain of everything this server logs (`gtid_domain_id`).
pub const DOMAIN: u32 = 0;
/// The server version written in each file's format description.
const SERVER_VERSION: &str = "10.11.99-tierdb-log";

/// Settings of the binary log (`log_bin`, `log_bin_dir`, `max_binlog_size`, `server_id`).
#[derive(Clone, Debug)]
pub struct BinlogConfig {
    /// Folder of the files (on the durable disk, beside the data).
    pub dir: PathBuf,
    /// File names are `<basename>.000001`, ... and `<basename>.index`.
    pub basename: String,
    /// `server_id`, written in every event.
    pub server_id: u32,
    /// A file is closed and the next one started once a transaction would take it past
    /// this many bytes (`max_binlog_size`; one transaction is never split).
    pub max_size: u64,
}

impl BinlogConfig {
    /// Defaults: `tierdb-bin` files in `dir`, server id 1, 1 GiB files.
    pub fn new(dir: impl Into<PathBuf>) -> BinlogConfig {
        BinlogConfig {
            dir: dir.into(),
            basename: "tierdb-bin".into(),
            server_id: 1,
            max_size: 1 << 30,
        }
    }
}

/// One write of placed bytes: `bytes` at `offset` of file number `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Write {
    file: u32,
    offset: u64,
    bytes: Vec<u8>,
}

/// Placed writes waiting for (or in) their write to the files: the start of their first redo
/// record and the end of their last.
struct Pending {
    start_lsn: u64,
    end_lsn: u64,
    writes: Arc<Placed>,
}

/// The writes of one placement, written to the files at most once (a committing thread and a
/// checkpoint may both get to them: the second waits for the first).
struct Placed {
    writes: Vec<Write>,
    written: Mutex<bool>,
}

/// What the order lock guards: where the next events go.
struct Order {
    /// The file being written and the offset of its end (as placed).
    file: u32,
    offset: u64,
    /// Offset where the current file's first transaction starts (its header's end).
    header_end: u64,
    /// The last sequence number per (domain, server id): the GTID state.
    state: BTreeMap<(u32, u32), u64>,
    next_ticket: u64,
    /// `FLUSH BINARY LOGS` asked for a new file with the next placement.
    rotate: bool,
    /// `start` has run (placing before it is an internal error).
    started: bool,
}

/// The files opened for writing, and which have writes not yet synced.
#[derive(Default)]
struct Files {
    open: HashMap<u32, Arc<File>>,
    unsynced: HashSet<u32>,
    dir_unsynced: bool,
}

/// Counters shown by SHOW STATUS.
#[derive(Default)]
pub struct BinlogCounters {
    pub commits: AtomicU64,
    pub statements: AtomicU64,
    pub bytes_written: AtomicU64,
    pub write_errors: AtomicU64,
    pub rotations: AtomicU64,
    pub replayed: AtomicU64,
}

/// A DDL statement between `begin_ddl` and `end_ddl`: each table it names, with the
/// (id, version) of its handle before the statement (None: no such table then).
struct RunningDdl {
    token: u64,
    tables: Vec<DdlTable>,
}

/// A table a DDL statement names: database, name, and its handle's (id, version) before the
/// statement (None: no such table then).
pub type DdlTable = (String, String, Option<(u64, u64)>);

/// The binary-log position a consistent snapshot matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotPos {
    pub file: String,
    pub offset: u64,
    /// The GTID position there (last GTID per domain), as BINLOG_GTID_POS gives it.
    pub gtid: String,
}

/// The last GTID per domain (the highest sequence number) of `gtids` (domain, server id,
/// sequence number), as `0-1-42,1-2-7`.
fn per_domain(gtids: impl Iterator<Item = (u32, u32, u64)>) -> String {
    let mut last: BTreeMap<u32, (u32, u64)> = BTreeMap::new();
    for (d, sid, q) in gtids {
        let e = last.entry(d).or_insert((sid, q));
        if q >= e.1 {
            *e = (sid, q);
        }
    }
    last.iter()
        .map(|(d, (sid, q))| format!("{d}-{sid}-{q}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// One file as listed by SHOW BINARY LOGS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFile {
    pub name: String,
    pub size: u64,
}

/// The binary log (one per server).
pub struct Binlog {
    cfg: BinlogConfig,
    order: Mutex<Order>,
    pending: Mutex<BTreeMap<u64, Pending>>,
    files: Mutex<Files>,
    next_xid: AtomicU64,
    /// The oldest file in the folder when it was opened (recovery writes nothing older).
    oldest_at_open: Option<u32>,
    /// Bumped after every write to the files; replicas' dumps wait on `written_cv` for it.
    written: Mutex<u64>,
    written_cv: Condvar,
    /// The server is stopping: dumps end.
    dumps_stopped: std::sync::atomic::AtomicBool,
    /// DDL statements running now (`begin_ddl`): their tables as they were before.
    ddl: Mutex<Vec<RunningDdl>>,
    ddl_cv: Condvar,
    ddl_running: std::sync::atomic::AtomicUsize,
    /// Placements whose changes the engine has not yet made visible (`finished`): a
    /// consistent snapshot waits for none to be left.
    unfinished: Mutex<u64>,
    unfinished_cv: Condvar,
    pub counters: BinlogCounters,
}

fn now_secs() -> u32 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

fn io_err(what: impl std::fmt::Display, e: io::Error) -> Error {
    Error::Io(format!("binary log: {what}: {e}"))
}

fn format_err(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("binary log: {e}"))
}

impl Binlog {
    /// Opens the binary log folder (created if missing). Writing starts with `start`, after
    /// the engine's recovery has replayed the redo log into the files.
    pub fn open(cfg: BinlogConfig) -> Result<Arc<Binlog>> {
        if cfg.basename.is_empty() || cfg.basename.contains('/') {
            return Err(Error::BadValue {
                name: "log_bin_basename".into(),
                value: cfg.basename.clone(),
                why: "a file name without '/' is needed".into(),
            });
        }
        std::fs::create_dir_all(&cfg.dir)
            .map_err(|e| io_err(format!("creating {}", cfg.dir.display()), e))?;
        let oldest_at_open = list_numbers(&cfg)?.first().copied();
        Ok(Arc::new(Binlog {
            oldest_at_open,
            written: Mutex::new(0),
            written_cv: Condvar::new(),
            dumps_stopped: std::sync::atomic::AtomicBool::new(false),
            ddl: Mutex::new(Vec::new()),
            ddl_cv: Condvar::new(),
            ddl_running: std::sync::atomic::AtomicUsize::new(0),
            unfinished: Mutex::new(0),
            unfinished_cv: Condvar::new(),
            order: Mutex::new(Order {
                file: 0,
                offset: 0,
                header_end: 0,
                state: BTreeMap::new(),
                next_ticket: 1,
                rotate: false,
                started: false,
            }),
            pending: Mutex::new(BTreeMap::new()),
            files: Mutex::new(Files::default()),
            next_xid: AtomicU64::new(1),
            counters: BinlogCounters::default(),
            cfg,
        }))
    }

    pub fn config(&self) -> &BinlogConfig {
        &self.cfg
    }

    /// The file name of number `n` (`tierdb-bin.000007`).
    pub fn file_name(&self, n: u32) -> String {
        format!("{}.{:06}", self.cfg.basename, n)
    }

    /// The path of file number `n`.
    pub fn path(&self, n: u32) -> PathBuf {
        self.cfg.dir.join(self.file_name(n))
    }

    /// The numbers of the files in the folder, ascending.
    pub fn numbers(&self) -> Result<Vec<u32>> {
        list_numbers(&self.cfg)
    }

    /// Whether file `n` is complete: the log has moved past it and no placed write into it
    /// is still waiting to reach it.
    pub fn file_finished(&self, n: u32) -> bool {
        if n >= self.order.lock().file {
            return false;
        }
        let pending: Vec<Arc<Placed>> = self
            .pending
            .lock()
            .values()
            .filter(|p| p.writes.writes.iter().any(|w| w.file == n))
            .map(|p| p.writes.clone())
            .collect();
        pending.iter().all(|p| *p.written.lock())
    }

    /// The last GTID sequence number logged in domain 0.
    pub fn last_seq(&self) -> u64 {
        domain_seq(self.order.lock().state.iter().map(|(&(d, _), &q)| (d, q)))
    }

    /// The last domain-0 sequence number before file `n` (its Gtid_list; 0 when it lists
    /// none). None while the file's header is not (all) there: a rotation still landing.
    pub fn state_before(&self, n: u32) -> Result<Option<u64>> {
        let path = self.path(n);
        let f = File::open(&path).map_err(|e| io_err(format!("opening {}", path.display()), e))?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0).min(64 << 10);
        let mut b = vec![0u8; len as usize];
        f.read_exact_at(&mut b, 0)
            .map_err(|e| io_err(format!("reading {}", path.display()), e))?;
        if b.len() < 4 || b[..4] != events::MAGIC {
            return Ok(None);
        }
        let (evs, _) = events::scan(&b[4..]);
        for e in evs.iter().take(3) {
            let ev = &b[4 + e.offset..4 + e.offset + e.len];
            if let Some(list) = events::gtid_list_entries(ev) {
                return Ok(Some(domain_seq(list.iter().map(|&(d, _, q)| (d, q)))));
            }
        }
        Ok(None)
    }

    /// How many times the files were written to (for `wait_for_write`).
    pub fn generation(&self) -> u64 {
        *self.written.lock()
    }

    /// Waits until the files were written to after `generation` was read, at most `max`.
    pub fn wait_for_write(&self, generation: u64, max: std::time::Duration) {
        let mut g = self.written.lock();
        if *g == generation && !self.dumps_stopped() {
            self.written_cv.wait_for(&mut g, max);
        }
    }

    /// Ends every replica's dump (the server is stopping).
    pub fn stop_dumps(&self) {
        self.dumps_stopped.store(true, Ordering::Release);
        let _g = self.written.lock();
        self.written_cv.notify_all();
    }

    pub fn dumps_stopped(&self) -> bool {
        self.dumps_stopped.load(Ordering::Acquire)
    }

    fn wrote(&self) {
        *self.written.lock() += 1;
        self.written_cv.notify_all();
    }

    /// After recovery: finds the GTID state in the files, cuts a torn tail off the last one,
    /// and starts a new file (as MariaDB does at every start).
    pub fn start(&self) -> Result<()> {
        let nums = self.numbers()?;
        let mut state = BTreeMap::new();
        if let Some(&last) = nums.last() {
            let path = self.path(last);
            let bytes = std::fs::read(&path)
                .map_err(|e| io_err(format!("reading {}", path.display()), e))?;
            let valid = if bytes.len() >= 4 && bytes[..4] == events::MAGIC {
                let (evs, n) = events::scan(&bytes[4..]);
                // A transaction is whole only up to its last event; a cut one ends early.
                // A group is whole at its XID (a transaction) or at the event after its GTID
                // (a standalone DDL group); the state counts only whole groups.
                let mut whole = 0;
                let mut whole_state = state.clone();
                let mut open: Option<bool> = None;
                for e in &evs {
                    let ev = &bytes[4 + e.offset..4 + e.offset + e.len];
                    let closes = match (e.type_code, open) {
                        (events::GTID_EVENT, _) => {
                            if let Some((q, d, s)) = events::gtid_seq(ev) {
                                state.insert((d, s), q);
                            }
                            open = Some(events::gtid_is_standalone(ev));
                            false
                        }
                        (events::XID_EVENT, Some(_)) | (_, Some(true)) => true,
                        (events::GTID_LIST_EVENT, None) => {
                            if let Some(list) = events::gtid_list_entries(ev) {
                                for (d, s, q) in list {
                                    state.insert((d, s), q);
                                }
                            }
                            false
                        }
                        _ => false,
                    };
                    if closes {
                        open = None;
                    }
                    if open.is_none() {
                        whole = e.offset + e.len;
                        whole_state = state.clone();
                    }
                }
                state = whole_state;
                let _ = n;
                4 + whole
            } else {
                0
            };
            if valid < bytes.len() {
                tracing::warn!(
                    file = %path.display(),
                    valid,
                    len = bytes.len(),
                    "binary log file ends in a torn or unfinished event group; cutting it"
                );
                let f = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| io_err(format!("opening {}", path.display()), e))?;
                f.set_len(valid as u64)
                    .and_then(|_| f.sync_all())
                    .map_err(|e| io_err(format!("cutting {}", path.display()), e))?;
            }
        }
        let next = nums.last().map_or(1, |n| n + 1);
        let header = self.file_header(next, &state, true)?;
        let path = self.path(next);
        let f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_err(format!("creating {}", path.display()), e))?;
        f.write_all_at(&header, 0)
            .and_then(|_| f.sync_all())
            .map_err(|e| io_err(format!("writing {}", path.display()), e))?;
        sync_dir(&self.cfg.dir)?;
        self.files.lock().open.insert(next, Arc::new(f));
        let seq_hint = state.values().copied().max().unwrap_or(0);
        {
            let mut o = self.order.lock();
            o.file = next;
            o.offset = header.len() as u64;
            o.header_end = o.offset;
            o.state = state;
            o.started = true;
        }
        self.next_xid.store(seq_hint + 1, Ordering::Relaxed);
        self.write_index()?;
        tracing::info!(file = %self.file_name(next), gtid = %self.gtid_binlog_pos(), "binary log started");
        Ok(())
    }

    /// Magic, format description, GTID list (the state before the file) and binlog
    /// checkpoint of file `n`, positions set. `at_start`: the first file of this run (its
    /// format description says the server started, so readers drop temporary tables).
    fn file_header(
        &self,
        n: u32,
        state: &BTreeMap<(u32, u32), u64>,
        at_start: bool,
    ) -> Result<Vec<u8>> {
        let ts = now_secs();
        let sid = self.cfg.server_id;
        let mut b = events::MAGIC.to_vec();
        let mut ev = Vec::new();
        let created = if at_start { ts } else { 0 };
        events::format_description_with_created(&mut ev, ts, sid, SERVER_VERSION, created)
            .map_err(format_err)?;
        let list: Vec<(u32, u32, u64)> = state.iter().map(|(&(d, s), &q)| (d, s, q)).collect();
        events::gtid_list(&mut ev, ts, sid, &list);
        events::binlog_checkpoint(&mut ev, ts, sid, &self.file_name(n)).map_err(format_err)?;
        events::set_positions(&mut ev, 4).map_err(format_err)?;
        b.extend_from_slice(&ev);
        Ok(b)
    }

    /// Rewrites `<basename>.index` (one file path per line, as MariaDB keeps it).
    fn write_index(&self) -> Result<()> {
        let mut text = String::new();
        for n in self.numbers()? {
            text.push_str(&format!("./{}\n", self.file_name(n)));
        }
        let path = self.cfg.dir.join(format!("{}.index", self.cfg.basename));
        let tmp = path.with_extension("index~");
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| io_err(format!("writing {}", path.display()), e))
    }

    /// `gtid_binlog_pos`: the last GTID per domain and server, `0-1-42`, comma-separated.
    pub fn gtid_binlog_pos(&self) -> String {
        let o = self.order.lock();
        o.state
            .iter()
            .map(|(&(d, s), &q)| format!("{d}-{s}-{q}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `START TRANSACTION WITH CONSISTENT SNAPSHOT`: runs `open` (which opens the read view)
    /// at a moment when the view sees exactly the transactions placed before the position it
    /// returns: no placement happens meanwhile (the order lock is held) and every placed
    /// transaction is visible first (waiting for those between their commit record and their
    /// end: an fsync). Returns `open`'s result and the position: file name, offset and the GTID
    /// position there (the bytes may reach the file only later, with flush_log_at_trx_commit
    /// 0 / 2). Gives up with an error after 30 s rather than return a position the view does
    /// not match.
    pub fn consistent_snapshot<R>(&self, open: impl FnOnce() -> R) -> Result<(R, SnapshotPos)> {
        let o = self.order.lock();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut n = self.unfinished.lock();
        while *n > 0 {
            if self.unfinished_cv.wait_until(&mut n, deadline).timed_out() {
                return Err(Error::LockWaitTimeout);
            }
        }
        drop(n);
        let r = open();
        let pos = SnapshotPos {
            file: self.file_name(o.file),
            offset: o.offset,
            gtid: per_domain(o.state.iter().map(|(&(d, sid), &q)| (d, sid, q))),
        };
        Ok((r, pos))
    }

    /// `BINLOG_GTID_POS(file, pos)`: the GTID position (last GTID per domain) after the event
    /// ending at `pos` of `name` (at 4: the state before the file, its Gtid_list); None when
    /// the file is not in the log or `pos` is not the end of an event in it. Reads event
    /// headers, and whole events only for GTIDs.
    pub fn gtid_pos_at(&self, name: &str, pos: u64) -> Option<String> {
        let f = File::open(self.path(self.number_of(name)?)).ok()?;
        if pos < 4 || pos > f.metadata().ok()?.len() {
            return None;
        }
        let mut magic = [0u8; 4];
        f.read_exact_at(&mut magic, 0).ok()?;
        if magic != events::MAGIC {
            return None;
        }
        let mut seen: Vec<(u32, u32, u64)> = Vec::new();
        let mut got_list = false;
        let mut at = 4u64;
        let mut header = [0u8; events::HEADER_LEN];
        // Every event before `pos` (which must be an event's end), then, if the file's
        // Gtid_list was not among them (`pos` 4: the state before the file), the header's.
        loop {
            if at >= pos && got_list {
                break;
            }
            if f.read_exact_at(&mut header, at).is_err() {
                if at >= pos {
                    break;
                }
                return None;
            }
            let len = u64::from(u32::from_le_bytes(header[9..13].try_into().ok()?));
            if len < events::HEADER_LEN as u64 || (at < pos && at + len > pos) {
                return None;
            }
            let ty = header[4];
            if ty == events::GTID_LIST_EVENT || (at < pos && ty == events::GTID_EVENT) {
                let mut ev = vec![0u8; len as usize];
                f.read_exact_at(&mut ev, at).ok()?;
                if let Some(list) = events::gtid_list_entries(&ev) {
                    seen.extend(list);
                    got_list = true;
                } else if let Some((q, d, sid)) = events::gtid_seq(&ev) {
                    seen.push((d, sid, q));
                }
            } else if at >= pos && ty != events::FORMAT_DESCRIPTION_EVENT {
                break; // past the header: no Gtid_list in this file
            }
            at += len;
        }
        Some(per_domain(seen.into_iter()))
    }

    /// SHOW GLOBAL STATUS rows: MariaDB's `Binlog_commits` / `Binlog_bytes_written`, and
    /// tierdb's own counters. `Binlog_snapshot_file` / `_position` are the current position
    /// here (a session inside a consistent snapshot shows its own).
    pub fn status(&self) -> Vec<(String, String)> {
        let c = &self.counters;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
        let (file, pos) = self.position();
        vec![
            ("Binlog_snapshot_file".into(), file),
            ("Binlog_snapshot_position".into(), pos.to_string()),
            ("Binlog_commits".into(), g(&c.commits)),
            ("Binlog_bytes_written".into(), g(&c.bytes_written)),
            ("Tierdb_binlog_statements".into(), g(&c.statements)),
            ("Tierdb_binlog_rotations".into(), g(&c.rotations)),
            ("Tierdb_binlog_write_errors".into(), g(&c.write_errors)),
            ("Tierdb_binlog_recovered_writes".into(), g(&c.replayed)),
        ]
    }

    /// SHOW MASTER STATUS: the file being written and the offset after the last event.
    pub fn position(&self) -> (String, u64) {
        let o = self.order.lock();
        (self.file_name(o.file), o.offset)
    }

    /// SHOW BINARY LOGS: every file, oldest first (the current one at its placed size).
    pub fn list(&self) -> Result<Vec<LogFile>> {
        let (cur, cur_end) = {
            let o = self.order.lock();
            (o.file, o.offset)
        };
        let mut out = Vec::new();
        for n in self.numbers()? {
            let size = std::fs::metadata(self.path(n))
                .map(|m| m.len())
                .unwrap_or(0);
            out.push(LogFile {
                name: self.file_name(n),
                size: if n == cur { size.max(cur_end) } else { size },
            });
        }
        Ok(out)
    }

    /// Reads file `name` (one listed by `list`), for SHOW BINLOG EVENTS.
    pub fn read_file(&self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(n) = self.number_of(name) else {
            return Ok(None);
        };
        match std::fs::read(self.path(n)) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(format!("reading {name}"), e)),
        }
    }

    /// The number of file `name` (a name this log would give), if it is one.
    pub fn number_of(&self, name: &str) -> Option<u32> {
        let name = name.rsplit('/').next().unwrap_or(name);
        let num = name.strip_prefix(&format!("{}.", self.cfg.basename))?;
        if num.len() < 6 || !num.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        num.parse().ok()
    }

    /// `FLUSH BINARY LOGS`: the next placement starts a new file; placed now through the
    /// engine so that the rotation is in redo order too.
    pub fn flush_logs(&self, engine: &tierdb_engine::Engine) -> Result<()> {
        self.order.lock().rotate = true;
        engine.log_binlog_events(Vec::new())
    }

    /// `PURGE BINARY LOGS TO 'name'`: deletes the files before `name` (not the current one,
    /// nor one with writes not yet synced). Returns how many were deleted; None when `name`
    /// is not a file of the log.
    pub fn purge_to(&self, name: &str) -> Result<Option<usize>> {
        let Some(to) = self.number_of(name) else {
            return Ok(None);
        };
        if !self.numbers()?.contains(&to) {
            return Ok(None);
        }
        self.purge_where(|n, _| n < to).map(Some)
    }

    /// `PURGE BINARY LOGS BEFORE t`: deletes the files last modified before `t` (unix
    /// seconds), never the current one.
    pub fn purge_before(&self, t: u64) -> Result<usize> {
        self.purge_where(|_, mtime| mtime < t)
    }

    fn purge_where(&self, doomed: impl Fn(u32, u64) -> bool) -> Result<usize> {
        let cur = self.order.lock().file;
        let busy: HashSet<u32> = {
            let p = self.pending.lock();
            p.values()
                .flat_map(|x| x.writes.writes.iter().map(|w| w.file))
                .collect()
        };
        let mut n_deleted = 0;
        for n in self.numbers()? {
            if n >= cur || busy.contains(&n) {
                break;
            }
            let path = self.path(n);
            let mtime = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            if !doomed(n, mtime) {
                break;
            }
            {
                let mut fs = self.files.lock();
                fs.open.remove(&n);
                fs.unsynced.remove(&n);
            }
            std::fs::remove_file(&path)
                .map_err(|e| io_err(format!("deleting {}", path.display()), e))?;
            n_deleted += 1;
        }
        if n_deleted > 0 {
            self.write_index()?;
        }
        Ok(n_deleted)
    }

    /// A DDL statement's events: a standalone GTID, then the query.
    pub fn statement_events(&self, q: &QueryEvent<'_>) -> Result<Vec<u8>> {
        let ts = now_secs();
        let mut out = Vec::with_capacity(128 + q.sql.len());
        events::gtid(&mut out, ts, self.cfg.server_id, 0, DOMAIN, true);
        events::query(&mut out, ts, self.cfg.server_id, q).map_err(format_err)?;
        if out.len() > MAX_STATEMENT_BYTES {
            return Err(Error::BinlogCacheFull);
        }
        Ok(out)
    }

    /// A DDL statement on `tables` (database, name, handle identity before) starts. Until
    /// `end_ddl`, a transaction that changed one of them through a handle made after the
    /// statement's change (it saw the new table) waits before its events are placed, so that
    /// the statement's event comes first in the log, as its effect came first.
    pub fn begin_ddl(&self, tables: Vec<DdlTable>) -> u64 {
        static TOKENS: AtomicU64 = AtomicU64::new(1);
        let token = TOKENS.fetch_add(1, Ordering::Relaxed);
        self.ddl.lock().push(RunningDdl { token, tables });
        self.ddl_running.fetch_add(1, Ordering::AcqRel);
        token
    }

    /// The DDL statement of `token` is logged (or failed).
    pub fn end_ddl(&self, token: u64) {
        let mut d = self.ddl.lock();
        if let Some(i) = d.iter().position(|r| r.token == token) {
            d.remove(i);
            self.ddl_running.fetch_sub(1, Ordering::AcqRel);
        }
        self.ddl_cv.notify_all();
    }

    /// Waits while a running DDL statement changed one of `tables` (a transaction's) after
    /// the transaction saw it.
    fn wait_for_ddl(&self, tables: &[Arc<Table>]) {
        if self.ddl_running.load(Ordering::Acquire) == 0 {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let mut d = self.ddl.lock();
        loop {
            let blocked = d.iter().any(|r| {
                r.tables.iter().any(|(db, name, before)| {
                    tables.iter().any(|t| {
                        t.db == *db
                            && t.def.name.eq_ignore_ascii_case(name)
                            && *before != Some((t.id(), t.handle_version()))
                    })
                })
            });
            if !blocked {
                return;
            }
            if self.ddl_cv.wait_until(&mut d, deadline).timed_out() {
                tracing::warn!("a transaction waited 60 s for a DDL statement's binary-log event; logging it anyway");
                return;
            }
        }
    }

    /// Writes a DDL statement to the log through the engine (durable as a commit is).
    pub fn log_statement(&self, engine: &tierdb_engine::Engine, q: &QueryEvent<'_>) -> Result<()> {
        engine.log_binlog_events(self.statement_events(q)?)?;
        self.counters.statements.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Opens (creating) file `n` for writing.
    fn file(&self, n: u32) -> Result<Arc<File>> {
        let mut fs = self.files.lock();
        if let Some(f) = fs.open.get(&n) {
            return Ok(f.clone());
        }
        let path = self.path(n);
        let existed = path.exists();
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| io_err(format!("opening {}", path.display()), e))?;
        let f = Arc::new(f);
        fs.open.insert(n, f.clone());
        if !existed {
            fs.dir_unsynced = true;
        }
        Ok(f)
    }

    /// Writes `writes` to the files (idempotent: the same bytes at the same offsets).
    fn apply(&self, writes: &[Write]) -> Result<()> {
        for w in writes {
            let f = self.file(w.file)?;
            f.write_all_at(&w.bytes, w.offset)
                .map_err(|e| io_err(format!("writing {}", self.file_name(w.file)), e))?;
            self.files.lock().unsynced.insert(w.file);
            self.counters
                .bytes_written
                .fetch_add(w.bytes.len() as u64, Ordering::Relaxed);
        }
        if !writes.is_empty() {
            self.wrote();
        }
        Ok(())
    }

    /// Writes a placement's bytes unless they were written already (waiting for a write of
    /// them in progress); a rotation's also rewrites the index (a failure there is only
    /// logged: the next rotation rewrites it again).
    fn write_once(&self, p: &Placed) -> Result<()> {
        let mut done = p.written.lock();
        if !*done {
            self.apply(&p.writes)?;
            *done = true;
            if p.writes.iter().any(|x| x.offset == 0) {
                if let Err(e) = self.write_index() {
                    tracing::warn!(error = %e, "binary log index not rewritten");
                }
            }
        }
        Ok(())
    }

    /// Syncs every file written since the last sync (and the folder after a new file).
    fn sync(&self) -> Result<()> {
        let (files, dir) = {
            let mut fs = self.files.lock();
            let list: Vec<(u32, Arc<File>)> = fs
                .unsynced
                .iter()
                .filter_map(|n| fs.open.get(n).map(|f| (*n, f.clone())))
                .collect();
            fs.unsynced.clear();
            (list, std::mem::take(&mut fs.dir_unsynced))
        };
        let mut result = Ok(());
        for (n, f) in &files {
            if let Err(e) = f.sync_data() {
                result = Err(io_err(format!("syncing {}", self.file_name(*n)), e));
                self.files.lock().unsynced.insert(*n);
            }
        }
        if dir {
            if let Err(e) = sync_dir(&self.cfg.dir) {
                self.files.lock().dir_unsynced = true;
                result = Err(e);
            }
        }
        result
    }

    /// Clean shutdown: every placed write in the files, a stop event after the last, synced.
    pub fn close(&self) -> Result<()> {
        let all: Vec<Arc<Placed>> = self
            .pending
            .lock()
            .values()
            .map(|p| p.writes.clone())
            .collect();
        for w in all {
            self.write_once(&w)?;
        }
        self.pending.lock().clear();
        let (file, offset) = {
            let o = self.order.lock();
            if !o.started {
                return Ok(());
            }
            (o.file, o.offset)
        };
        let mut ev = Vec::new();
        events::stop(&mut ev, now_secs(), self.cfg.server_id);
        events::set_positions(&mut ev, offset).map_err(format_err)?;
        self.apply(&[Write {
            file,
            offset,
            bytes: ev,
        }])?;
        self.sync()
    }

    /// Encodes one run of same-kind changes of one table: a table map, then rows events of
    /// at most about `ROWS_EVENT_BYTES` each, the last one ending the statement.
    fn encode_run(&self, out: &mut Vec<u8>, ts: u32, run: &[RowChange]) -> Result<()> {
        let t = &run[0].table;
        let sid = self.cfg.server_id;
        let kind = kind_of(&run[0]);
        events::table_map(out, ts, sid, t.id(), &t.db, &t.def.name, &t.def.columns)
            .map_err(format_err)?;
        let cols = &t.def.columns;
        let mut start = 0;
        while start < run.len() {
            let mut end = start;
            let mut size = 0;
            while end < run.len() && (end == start || size < ROWS_EVENT_BYTES) {
                let c = &run[end];
                for r in [&c.before, &c.after].into_iter().flatten() {
                    size += rows::row_image_len(cols, r).map_err(format_err)?;
                }
                end += 1;
            }
            let images: Vec<rows::RowImages<'_>> = run[start..end]
                .iter()
                .map(|c| (c.before.as_deref(), c.after.as_deref()))
                .collect();
            rows::rows_event(out, ts, sid, kind, t.id(), cols, &images, end == run.len())
                .map_err(format_err)?;
            start = end;
        }
        Ok(())
    }

    /// Appends `writes` as sink bytes of at most about `RECORD_SINK_BYTES` per record (a
    /// write longer than that is cut at byte boundaries: each piece is a write of its own, at
    /// its own offset); the last record is the completing one. Returns the first record's start
    /// and the last one's end. One record's bytes are built at a time.
    fn append_split(writes: &[Write], append: &mut AppendRecord<'_>) -> Result<(u64, u64)> {
        // The pieces of each record: (file, offset, bytes).
        let mut records: Vec<Vec<(u32, u64, &[u8])>> = vec![Vec::new()];
        let mut size = 0;
        for w in writes {
            let mut at = 0;
            loop {
                let room = RECORD_SINK_BYTES.saturating_sub(size);
                if room == 0 {
                    records.push(Vec::new());
                    size = 0;
                    continue;
                }
                let n = room.min(w.bytes.len() - at);
                if let Some(r) = records.last_mut() {
                    r.push((w.file, w.offset + at as u64, &w.bytes[at..at + n]));
                }
                size += n;
                at += n;
                if at == w.bytes.len() {
                    break;
                }
            }
        }
        let mut first = None;
        let mut end = 0;
        let last = records.len() - 1;
        for (i, r) in records.iter().enumerate() {
            let (s, e) = append(&Self::encode_writes(r), i == last)?;
            first.get_or_insert(s);
            end = e;
        }
        Ok((first.unwrap_or(end), end))
    }

    /// The sink bytes of `writes` (file, offset, bytes; see the module doc).
    fn encode_writes(writes: &[(u32, u64, &[u8])]) -> Vec<u8> {
        let n: usize = writes.iter().map(|w| 16 + w.2.len()).sum();
        let mut b = Vec::with_capacity(3 + n);
        b.push(SINK_VERSION);
        b.extend_from_slice(&(writes.len() as u16).to_le_bytes());
        for &(file, offset, bytes) in writes {
            b.extend_from_slice(&file.to_le_bytes());
            b.extend_from_slice(&offset.to_le_bytes());
            b.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            b.extend_from_slice(bytes);
        }
        b
    }

    fn decode_writes(b: &[u8]) -> std::result::Result<Vec<Write>, String> {
        let take = |b: &mut &[u8], n: usize| -> std::result::Result<Vec<u8>, String> {
            if b.len() < n {
                return Err("truncated".into());
            }
            let (h, t) = b.split_at(n);
            *b = t;
            Ok(h.to_vec())
        };
        let mut r = b;
        let v = take(&mut r, 1)?;
        if v[0] != SINK_VERSION {
            return Err(format!("unknown version {}", v[0]));
        }
        let n = u16::from_le_bytes(take(&mut r, 2)?.try_into().unwrap_or([0; 2]));
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let file = u32::from_le_bytes(take(&mut r, 4)?.try_into().unwrap_or([0; 4]));
            let offset = u64::from_le_bytes(take(&mut r, 8)?.try_into().unwrap_or([0; 8]));
            let len = u32::from_le_bytes(take(&mut r, 4)?.try_into().unwrap_or([0; 4]));
            let bytes = take(&mut r, len as usize)?;
            out.push(Write {
                file,
                offset,
                bytes,
            });
        }
        if !r.is_empty() {
            return Err("trailing bytes".into());
        }
        Ok(out)
    }
}

/// The numbers of the binary log files in `cfg.dir`, ascending.
fn list_numbers(cfg: &BinlogConfig) -> Result<Vec<u32>> {
    let prefix = format!("{}.", cfg.basename);
    let mut out = Vec::new();
    let rd = std::fs::read_dir(&cfg.dir)
        .map_err(|e| io_err(format!("listing {}", cfg.dir.display()), e))?;
    for ent in rd {
        let ent = ent.map_err(|e| io_err("listing the folder", e))?;
        let name = ent.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(num) = name.strip_prefix(&prefix) else {
            continue;
        };
        if num.len() >= 6 && num.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(n) = num.parse::<u32>() {
                out.push(n);
            }
        }
    }
    out.sort_unstable();
    Ok(out)
}

fn kind_of(c: &RowChange) -> RowsKind {
    match (&c.before, &c.after) {
        (None, _) => RowsKind::Write,
        (Some(_), Some(_)) => RowsKind::Update,
        (Some(_), None) => RowsKind::Delete,
    }
}

/// Sets NO_FOREIGN_KEY_CHECKS_F in the flags of the rows events in `buf` (whole events;
/// their checksums are redone by `events::set_positions` when they are placed).
fn mark_no_fk_checks(buf: &mut [u8]) {
    let (evs, _) = events::scan(buf);
    for e in evs {
        if matches!(
            e.type_code,
            events::WRITE_ROWS_EVENT_V1
                | events::UPDATE_ROWS_EVENT_V1
                | events::DELETE_ROWS_EVENT_V1
        ) {
            // Post-header: table id (6 bytes), then the flags (2 bytes, little-endian).
            let at = e.offset + events::HEADER_LEN + 6;
            if let Some(f) = buf.get_mut(at) {
                *f |= 0x02;
            }
        }
    }
}

/// The highest sequence number of domain 0 among (domain, sequence number) pairs.
fn domain_seq(gtids: impl Iterator<Item = (u32, u64)>) -> u64 {
    gtids
        .filter(|(d, _)| *d == DOMAIN)
        .map(|(_, q)| q)
        .max()
        .unwrap_or(0)
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err(format!("syncing folder {}", dir.display()), e))
}

impl BinlogSink for Binlog {
    fn encode_changes(&self, changes: &[RowChange], out: &mut Vec<u8>) -> Result<()> {
        let ts = now_secs();
        let mut i = 0;
        while i < changes.len() {
            let (t, k) = (&changes[i].table, kind_of(&changes[i]));
            let mut j = i + 1;
            let no_fk = changes[i].no_fk_checks;
            while j < changes.len()
                && Arc::ptr_eq(&changes[j].table, t)
                && kind_of(&changes[j]) == k
                && changes[j].no_fk_checks == no_fk
            {
                j += 1;
            }
            let from = out.len();
            if let Err(e) = self.encode_run(out, ts, &changes[i..j]) {
                out.truncate(from);
                return Err(e);
            }
            if no_fk {
                mark_no_fk_checks(&mut out[from..]);
            }
            i = j;
        }
        Ok(())
    }

    fn encode_transaction(&self, capture: Capture) -> Result<Vec<Vec<u8>>> {
        self.wait_for_ddl(&capture.tables);
        let ts = now_secs();
        let sid = self.cfg.server_id;
        let mut first = Vec::with_capacity(64);
        events::gtid(&mut first, ts, sid, 0, DOMAIN, false);
        let mut chunks = Vec::with_capacity(capture.chunks.len() + 2);
        chunks.push(first);
        chunks.extend(capture.chunks);
        let mut rest = Vec::new();
        self.encode_changes(&capture.pending, &mut rest)?;
        let xid = self.next_xid.fetch_add(1, Ordering::Relaxed);
        events::xid(&mut rest, ts, sid, xid);
        chunks.push(rest);
        Ok(chunks)
    }

    fn place(&self, mut events: Vec<Vec<u8>>, append: &mut AppendRecord<'_>) -> Result<(u64, u64)> {
        let sid = self.cfg.server_id;
        let mut o = self.order.lock();
        if !o.started {
            return Err(Error::Internal(
                "binary log used before it was started".into(),
            ));
        }
        let mut writes = Vec::new();
        // Where the events go; the order's state changes only once the record is appended.
        let (mut file, mut offset, mut header_end) = (o.file, o.offset, o.header_end);
        let has_txn = offset > header_end;
        events.retain(|c| !c.is_empty());
        let total: u64 = events.iter().map(|c| c.len() as u64).sum();
        let rotating = o.rotate || (has_txn && offset + total > self.cfg.max_size);
        if rotating {
            let next = file + 1;
            let ts = now_secs();
            let mut rot = Vec::new();
            events::rotate(&mut rot, ts, sid, &self.file_name(next), 4).map_err(format_err)?;
            events::set_positions(&mut rot, offset).map_err(format_err)?;
            // The next file first: a dump that reads the Rotate opens it at once.
            let header = self.file_header(next, &o.state, false)?;
            let len = header.len() as u64;
            writes.push(Write {
                file: next,
                offset: 0,
                bytes: header,
            });
            writes.push(Write {
                file,
                offset,
                bytes: rot,
            });
            (file, offset, header_end) = (next, len, len);
        }
        let mut seq = None;
        if let Some(head) = events.first_mut() {
            // Sequence numbers grow per domain, whatever server ids logged before (as MariaDB).
            let s = domain_seq(o.state.iter().map(|(&(d, _), &q)| (d, q))) + 1;
            events::set_gtid_seq(head, s).map_err(format_err)?;
            seq = Some(s);
            for mut chunk in events {
                events::set_positions(&mut chunk, offset).map_err(format_err)?;
                let len = chunk.len() as u64;
                writes.push(Write {
                    file,
                    offset,
                    bytes: chunk,
                });
                offset += len;
            }
        }
        let (start, end) = Self::append_split(&writes, append)?;
        // Placed: from here on the offsets and the sequence number are taken.
        (o.file, o.offset, o.header_end) = (file, offset, header_end);
        if rotating {
            o.rotate = false;
            self.counters.rotations.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(s) = seq {
            o.state.insert((DOMAIN, sid), s);
            self.counters.commits.fetch_add(1, Ordering::Relaxed);
        }
        let ticket = o.next_ticket;
        o.next_ticket += 1;
        *self.unfinished.lock() += 1;
        self.pending.lock().insert(
            ticket,
            Pending {
                start_lsn: start,
                end_lsn: end,
                writes: Arc::new(Placed {
                    writes,
                    written: Mutex::new(false),
                }),
            },
        );
        Ok((ticket, end))
    }

    fn write(&self, ticket: u64) {
        let Some(w) = self.pending.lock().get(&ticket).map(|p| p.writes.clone()) else {
            return;
        };
        match self.write_once(&w) {
            Ok(()) => {
                self.pending.lock().remove(&ticket);
            }
            Err(e) => {
                // Kept: the next checkpoint writes it again (and fails until it can).
                self.counters.write_errors.fetch_add(1, Ordering::Relaxed);
                tracing::error!(error = %e, "binary log write failed; retried at the next checkpoint");
            }
        }
    }

    fn write_durable(&self, durable: u64) {
        let due: Vec<u64> = self
            .pending
            .lock()
            .iter()
            .filter(|(_, p)| p.end_lsn <= durable)
            .map(|(t, _)| *t)
            .collect();
        for t in due {
            self.write(t);
        }
    }

    fn abandon(&self, ticket: u64) {
        self.pending.lock().remove(&ticket);
    }

    fn finished(&self, _ticket: u64) {
        let mut n = self.unfinished.lock();
        *n = n.saturating_sub(1);
        if *n == 0 {
            self.unfinished_cv.notify_all();
        }
    }

    fn replay(&self, bytes: &[u8]) -> Result<()> {
        let writes = Self::decode_writes(bytes)
            .map_err(|e| Error::Corrupt(format!("binary-log writes: {e}")))?;
        // Files purged since are not brought back: a purge never takes the newest file on
        // disk, so a write below the oldest one left is to a purged file.
        let writes: Vec<Write> = writes
            .into_iter()
            .filter(|w| self.oldest_at_open.is_none_or(|o| w.file >= o))
            .collect();
        self.apply(&writes)?;
        self.counters.replayed.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn before_checkpoint(&self, lsn: u64, durable: u64) -> Result<()> {
        // A placement in progress holds the order lock from its append until its pending
        // entry exists: wait for it, so no record before `lsn` is missed.
        drop(self.order.lock());
        let due: Vec<(u64, u64, Arc<Placed>)> = self
            .pending
            .lock()
            .iter()
            .filter(|(_, p)| p.start_lsn < lsn)
            .map(|(t, p)| (*t, p.end_lsn, p.writes.clone()))
            .collect();
        for (t, end, w) in due {
            // A transaction in progress keeps the checkpoint before its records, so a placement
            // that starts before `lsn` has its last record durable; if not, this checkpoint waits.
            if end > durable {
                return Err(Error::Internal(format!(
                    "binary-log records from before redo position {lsn} end past the durable end {durable}; checkpoint deferred"
                )));
            }
            self.write_once(&w)?;
            self.pending.lock().remove(&t);
        }
        self.sync()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A redo log stand-in: every appended record's sink bytes, with fake LSNs.
    #[derive(Default)]
    struct Redo {
        records: Vec<Vec<u8>>,
        /// Whether each record was the completing one of its placement.
        last: Vec<bool>,
    }

    impl Redo {
        fn append(&mut self) -> impl FnMut(&[u8], bool) -> Result<(u64, u64)> + '_ {
            move |b: &[u8], last: bool| {
                self.records.push(b.to_vec());
                self.last.push(last);
                let end = self.records.len() as u64 * 100;
                Ok((end - 90, end))
            }
        }
    }

    fn query<'a>(sql: &'a str) -> QueryEvent<'a> {
        QueryEvent {
            thread_id: 1,
            exec_time: 0,
            error_code: 0,
            db: "d",
            sql: sql.as_bytes(),
            sql_mode: 0,
            auto_increment_increment: 1,
            auto_increment_offset: 1,
            charset_client: 45,
            collation_connection: 45,
            collation_server: 45,
            time_zone: None,
            flags2: 0,
        }
    }

    fn open(dir: &Path, max: u64) -> Arc<Binlog> {
        let mut c = BinlogConfig::new(dir);
        c.max_size = max;
        c.server_id = 7;
        Binlog::open(c).unwrap()
    }

    /// A started log in a new folder (files past `max` bytes rotate) and an empty redo log.
    fn started(max: u64) -> (tempfile::TempDir, Arc<Binlog>, Redo) {
        let dir = tempfile::tempdir().unwrap();
        let b = open(dir.path(), max);
        b.start().unwrap();
        (dir, b, Redo::default())
    }

    /// Places one DDL statement; returns its ticket.
    fn place(b: &Binlog, redo: &mut Redo, sql: &str) -> u64 {
        let ev = b.statement_events(&query(sql)).unwrap();
        b.place(vec![ev], &mut redo.append()).unwrap().0
    }

    /// (file name, GTID sequence numbers, SQL texts) of every complete file.
    fn contents(dir: &Path) -> Vec<(String, Vec<u64>, Vec<String>)> {
        let mut out = Vec::new();
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| !n.ends_with(".index"))
            .collect();
        names.sort();
        for n in names {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            assert_eq!(bytes[..4], events::MAGIC, "{n}");
            let (evs, valid) = events::scan(&bytes[4..]);
            assert_eq!(valid + 4, bytes.len(), "{n} has bytes that are no event");
            let mut seqs = Vec::new();
            let mut sqls = Vec::new();
            for e in &evs {
                let ev = &bytes[4 + e.offset..4 + e.offset + e.len];
                // Each event's end position is where it ends in its file.
                assert_eq!(e.log_pos as usize, 4 + e.offset + e.len, "{n}");
                if let Some((q, _, _)) = events::gtid_seq(ev) {
                    seqs.push(q);
                }
                if e.type_code == events::QUERY_EVENT {
                    let body = &ev[events::HEADER_LEN..ev.len() - events::CHECKSUM_LEN];
                    sqls.push(String::from_utf8_lossy(&body[body.len() - 8..]).into_owned());
                }
            }
            out.push((n, seqs, sqls));
        }
        out
    }

    #[test]
    fn statements_land_in_placement_order_with_positions_and_sequence_numbers() {
        let (dir, b, mut redo) = started(1 << 20);
        let t: Vec<u64> = ["CREATE 1", "CREATE 2", "CREATE 3"]
            .iter()
            .map(|q| place(&b, &mut redo, &format!("{q:>8}")))
            .collect();
        // Written out of order (three committers finishing their fsync waits): each lands at
        // its own offset.
        for i in [2, 0, 1] {
            b.write(t[i]);
        }
        let c = contents(dir.path());
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].1, vec![1, 2, 3]);
        assert_eq!(c[0].2, vec!["CREATE 1", "CREATE 2", "CREATE 3"]);
        assert_eq!(b.gtid_binlog_pos(), "0-7-3");
        let (file, pos) = b.position();
        assert_eq!(file, "tierdb-bin.000001");
        assert_eq!(
            pos,
            std::fs::metadata(dir.path().join(&file)).unwrap().len()
        );
    }

    #[test]
    fn files_rotate_past_max_size_and_on_flush_with_a_rotate_event() {
        let (dir, b, mut redo) = started(4096);
        for i in 0..100 {
            let t = place(&b, &mut redo, &format!("{:>8}", format!("Q {i}")));
            b.write(t);
        }
        let c = contents(dir.path());
        assert!(c.len() >= 3, "{} files", c.len());
        let seqs: Vec<u64> = c.iter().flat_map(|f| f.1.clone()).collect();
        assert_eq!(
            seqs,
            (1..=100).collect::<Vec<_>>(),
            "every transaction once, in order"
        );
        for f in &c[..c.len() - 1] {
            let size = std::fs::metadata(dir.path().join(&f.0)).unwrap().len();
            assert!(size <= 4096 + 200, "{} is {size} bytes", f.0);
        }
        let before = b.list().unwrap().len();
        // FLUSH BINARY LOGS without an engine: the rotation placed like any record.
        b.order.lock().rotate = true;
        let t = b.place(vec![Vec::new()], &mut redo.append()).unwrap().0;
        b.write(t);
        assert_eq!(b.list().unwrap().len(), before + 1);
        let index = std::fs::read_to_string(dir.path().join("tierdb-bin.index")).unwrap();
        assert_eq!(index.lines().count(), before + 1, "{index}");
    }

    /// GTID sequence numbers and Rotate targets a non-blocking dump sends until it catches up.
    fn drain(d: &mut crate::dump::Dump) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(ev) = d.next_event().unwrap() {
            if let Some((q, _, _)) = events::gtid_seq(&ev) {
                out.push(format!("gtid {q}"));
            } else if ev[4] == events::ROTATE_EVENT {
                let name = &ev[events::HEADER_LEN + 8..ev.len() - events::CHECKSUM_LEN];
                out.push(format!("rotate {}", String::from_utf8_lossy(name)));
            }
        }
        out
    }

    #[test]
    fn a_dump_waits_for_a_commit_still_landing_before_a_rotation_it_can_already_see() {
        let (_dir, b, mut redo) = started(1 << 20);
        let a = place(&b, &mut redo, "CREATE 1");
        // FLUSH BINARY LOGS placed after `a`, written before it (its committer was faster).
        b.order.lock().rotate = true;
        let r = place(&b, &mut redo, "CREATE 2");
        let req = crate::dump::DumpRequest {
            nonblock: true,
            checksums: true,
            ..Default::default()
        };
        let mut d = crate::dump::Dump::start(b.clone(), &req).unwrap();
        // Between the two writes of `r`: file 2 exists, file 1 ends where `a` goes.
        let rw = b.pending.lock().get(&r).unwrap().writes.clone();
        assert_eq!(
            rw.writes[0].file, 2,
            "the next file is written before the Rotate"
        );
        b.apply(&rw.writes[..1]).unwrap();
        assert!(!b.file_finished(1), "`a` is still on its way into file 1");
        // Up to the gap `a` leaves, and no further: not into file 2 past `a`.
        assert_eq!(drain(&mut d), vec!["rotate tierdb-bin.000001"]);
        // The Rotate lands (still before `a`): a dump cannot read past the gap either.
        b.write(r);
        assert_eq!(drain(&mut d), Vec::<String>::new());
        b.write(a);
        assert!(b.file_finished(1));
        assert_eq!(
            drain(&mut d),
            vec!["gtid 1", "rotate tierdb-bin.000002", "gtid 2"],
            "every group once, in order, through the rotation"
        );
    }

    #[test]
    fn a_gtid_replica_starts_before_a_file_whose_header_has_not_landed() {
        let (_dir, b, mut redo) = started(1 << 20);
        for q in ["CREATE 1", "CREATE 2"] {
            let t = place(&b, &mut redo, q);
            b.write(t);
        }
        b.order.lock().rotate = true;
        let r = place(&b, &mut redo, "CREATE 3");
        // Only the rotation's events in file 2 have landed: its header is still a hole.
        let rw = b.pending.lock().get(&r).unwrap().writes.clone();
        assert_eq!((rw.writes[2].file, rw.writes[2].offset > 0), (2, true));
        b.apply(&rw.writes[2..]).unwrap();
        assert_eq!(b.state_before(2).unwrap(), None);
        // A replica that has 1: group 2 is in file 1, so the stream starts there.
        let req = crate::dump::DumpRequest {
            nonblock: true,
            checksums: true,
            gtid_state: Some("0-7-1".into()),
            ..Default::default()
        };
        let mut d = crate::dump::Dump::start(b.clone(), &req).unwrap();
        assert_eq!(drain(&mut d), vec!["rotate tierdb-bin.000001", "gtid 2"]);
        b.write(r);
        assert_eq!(b.state_before(2).unwrap(), Some(2));
        assert_eq!(drain(&mut d), vec!["rotate tierdb-bin.000002", "gtid 3"]);
    }

    #[test]
    fn recovery_writes_what_a_crash_lost_and_leaves_purged_files_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut redo = Redo::default();
        {
            let b = open(dir.path(), 4096);
            b.start().unwrap();
            for i in 0..100 {
                let t = place(&b, &mut redo, &format!("{:>8}", format!("Q {i}")));
                // The last five were durable in the redo log but never reached the files.
                if i < 95 {
                    b.write(t);
                }
            }
            // The oldest file is purged after its records were written.
            let first = b.list().unwrap()[0].name.clone();
            b.sync().unwrap();
            assert_eq!(b.purge_to(&b.list().unwrap()[1].name).unwrap(), Some(1));
            assert!(!dir.path().join(&first).exists());
        }
        // Restart: recovery hands every record after the checkpoint (here: all) back.
        let b = open(dir.path(), 4096);
        for r in &redo.records {
            b.replay(r).unwrap();
        }
        b.start().unwrap();
        let c = contents(dir.path());
        assert!(
            !c.iter().any(|f| f.0 == "tierdb-bin.000001"),
            "a purged file came back"
        );
        let seqs: Vec<u64> = c.iter().flat_map(|f| f.1.clone()).collect();
        assert_eq!(
            seqs.last(),
            Some(&100),
            "the lost writes are back: {seqs:?}"
        );
        assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");
        assert_eq!(b.gtid_binlog_pos(), "0-7-100");
        // The new run's first statement continues the sequence, in a new file.
        let t = place(&b, &mut redo, "CREATE 31");
        b.write(t);
        assert_eq!(b.gtid_binlog_pos(), "0-7-101");
        assert_eq!(contents(dir.path()).last().unwrap().1, vec![101]);
    }

    #[test]
    fn a_torn_tail_is_cut_and_a_new_file_started() {
        let dir = tempfile::tempdir().unwrap();
        {
            let b = open(dir.path(), 1 << 20);
            b.start().unwrap();
            let mut redo = Redo::default();
            for q in ["CREATE 1", "CREATE 2"] {
                let t = place(&b, &mut redo, q);
                b.write(t);
            }
        }
        let path = dir.path().join("tierdb-bin.000001");
        let good = std::fs::metadata(&path).unwrap().len();
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(&mut f, &[0x11; 37]).unwrap();
        drop(f);
        let b = open(dir.path(), 1 << 20);
        b.start().unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), good);
        assert_eq!(b.gtid_binlog_pos(), "0-7-2");
        assert_eq!(b.position().0, "tierdb-bin.000002");
    }

    #[test]
    fn a_new_server_id_continues_the_domain_s_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let mut redo = Redo::default();
        {
            let b = open(dir.path(), 1 << 20);
            b.start().unwrap();
            for q in ["CREATE 1", "CREATE 2"] {
                let t = place(&b, &mut redo, q);
                b.write(t);
            }
        }
        let mut c = BinlogConfig::new(dir.path());
        c.server_id = 9;
        let b = Binlog::open(c).unwrap();
        b.start().unwrap();
        let t = place(&b, &mut redo, "CREATE 3");
        b.write(t);
        assert_eq!(b.gtid_binlog_pos(), "0-7-2,0-9-3");
        assert_eq!(b.last_seq(), 3);
    }

    #[test]
    fn a_dump_refuses_a_position_inside_an_event_and_streams_from_a_good_one() {
        let (_dir, b, mut redo) = started(1 << 20);
        for q in ["CREATE 1", "CREATE 2"] {
            let t = place(&b, &mut redo, q);
            b.write(t);
        }
        let req = |file: &str, pos: u64| crate::dump::DumpRequest {
            file: file.into(),
            pos,
            nonblock: true,
            checksums: true,
            ..Default::default()
        };
        let bad = crate::dump::Dump::start(b.clone(), &req("tierdb-bin.000001", 5));
        assert!(bad.is_err(), "a position inside the format description");
        // From the start: the artificial rotate, then every event of the file, then the end.
        let mut d = crate::dump::Dump::start(b.clone(), &req("tierdb-bin.000001", 4)).unwrap();
        let mut types = Vec::new();
        while let Some(ev) = d.next_event().unwrap() {
            types.push(ev[4]);
        }
        assert_eq!(types[0], events::ROTATE_EVENT);
        assert_eq!(types[1], events::FORMAT_DESCRIPTION_EVENT);
        assert_eq!(
            types.iter().filter(|t| **t == events::QUERY_EVENT).count(),
            2
        );
        // A GTID replica that has the first statement gets only the second.
        let mut g = req("", 4);
        g.gtid_state = Some("0-7-1".into());
        let mut d = crate::dump::Dump::start(b.clone(), &g).unwrap();
        let mut seqs = Vec::new();
        while let Some(ev) = d.next_event().unwrap() {
            if let Some((q, _, _)) = events::gtid_seq(&ev) {
                seqs.push(q);
            }
        }
        assert_eq!(seqs, vec![2]);
        let mut ahead = req("", 4);
        ahead.gtid_state = Some("0-7-9".into());
        assert!(
            crate::dump::Dump::start(b, &ahead).is_err(),
            "a replica ahead of the log"
        );
    }

    #[test]
    fn a_checkpoint_writes_and_syncs_what_is_still_pending() {
        let (dir, b, mut redo) = started(1 << 20);
        place(&b, &mut redo, "CREATE 1"); // record 10..100
        place(&b, &mut redo, "CREATE 2"); // record 110..200
        b.before_checkpoint(110, 200).unwrap();
        assert_eq!(
            contents(dir.path())[0].1,
            vec![1],
            "only what the checkpoint lets go"
        );
        assert_eq!(b.pending.lock().len(), 1);
        b.before_checkpoint(200, 200).unwrap();
        assert_eq!(contents(dir.path())[0].1, vec![1, 2]);
        assert!(b.pending.lock().is_empty() && b.files.lock().unsynced.is_empty());
    }

    #[test]
    fn a_transaction_too_big_for_one_record_rides_in_parts_and_replays_whole() {
        let dir = tempfile::tempdir().unwrap();
        let b = open(dir.path(), 1 << 30);
        b.start().unwrap();
        // One transaction of about 9 MiB of events: a GTID, 300 30 KiB queries, an XID.
        let mut ev = Vec::new();
        events::gtid(&mut ev, 1, 7, 0, DOMAIN, false);
        let sql = "x".repeat(30 << 10);
        for _ in 0..300 {
            events::query(&mut ev, 1, 7, &query(&sql)).unwrap();
        }
        events::xid(&mut ev, 1, 7, 9);
        let total = ev.len();
        let mut redo = Redo::default();
        let (_, end) = b.place(vec![ev], &mut redo.append()).unwrap();
        assert_eq!(redo.records.len(), 3, "three records of at most 4 MiB");
        assert_eq!(redo.last, vec![false, false, true]);
        assert_eq!(end, 300);
        let mut pieces = 0;
        for r in &redo.records {
            let w = Binlog::decode_writes(r).unwrap();
            assert!(w.iter().map(|w| w.bytes.len()).sum::<usize>() <= RECORD_SINK_BYTES);
            pieces += w.iter().map(|w| w.bytes.len()).sum::<usize>();
        }
        assert_eq!(pieces, total);
        // A checkpoint after the first part must write the whole transaction (its last record
        // is durable: the transaction had ended before the checkpoint looked).
        assert!(
            b.before_checkpoint(110, 200).is_err(),
            "not before its last record is durable"
        );
        b.before_checkpoint(110, 300).unwrap();
        assert!(b.pending.lock().is_empty());
        let written = std::fs::read(dir.path().join("tierdb-bin.000001")).unwrap();
        // Recovery from the records alone (into a second folder) writes the same bytes.
        let dir2 = tempfile::tempdir().unwrap();
        let b2 = open(dir2.path(), 1 << 30);
        std::fs::copy(
            dir.path().join("tierdb-bin.000001"),
            dir2.path().join("tierdb-bin.000001"),
        )
        .unwrap();
        let header = written.len() - total;
        let f = OpenOptions::new()
            .write(true)
            .open(dir2.path().join("tierdb-bin.000001"))
            .unwrap();
        f.set_len(header as u64).unwrap();
        for r in &redo.records {
            b2.replay(r).unwrap();
        }
        assert_eq!(
            std::fs::read(dir2.path().join("tierdb-bin.000001")).unwrap(),
            written
        );
        assert_eq!(contents(dir.path())[0].1, vec![1]);
    }

    #[test]
    fn gtid_positions_at_event_ends_and_nowhere_else() {
        let (dir, b, mut redo) = started(1 << 20);
        let name = "tierdb-bin.000001";
        let start = std::fs::metadata(dir.path().join(name)).unwrap().len();
        assert_eq!(b.gtid_pos_at(name, 4).as_deref(), Some(""));
        assert_eq!(b.gtid_pos_at(name, start).as_deref(), Some(""));
        let mut ends = Vec::new();
        for q in ["CREATE 1", "CREATE 2"] {
            let t = place(&b, &mut redo, q);
            b.write(t);
            b.finished(t);
            ends.push(std::fs::metadata(dir.path().join(name)).unwrap().len());
        }
        assert_eq!(b.gtid_pos_at(name, ends[0]).as_deref(), Some("0-7-1"));
        assert_eq!(b.gtid_pos_at(name, ends[1]).as_deref(), Some("0-7-2"));
        assert_eq!(b.gtid_pos_at(name, ends[1] - 1), None, "inside an event");
        assert_eq!(b.gtid_pos_at(name, ends[1] + 1), None, "past the end");
        assert_eq!(b.gtid_pos_at("tierdb-bin.000009", 4), None);
        assert_eq!(
            b.gtid_pos_at("../tierdb-bin.000001", 4).as_deref(),
            Some("")
        );
        // The next file's header carries the state.
        b.order.lock().rotate = true;
        let t = b.place(vec![Vec::new()], &mut redo.append()).unwrap().0;
        b.write(t);
        b.finished(t);
        assert_eq!(
            b.gtid_pos_at("tierdb-bin.000002", 4).as_deref(),
            Some("0-7-2")
        );
        let (_, pos) = b.consistent_snapshot(|| ()).unwrap();
        assert_eq!(pos.file, "tierdb-bin.000002");
        assert_eq!(b.gtid_pos_at(&pos.file, pos.offset), Some(pos.gtid));
    }

    #[test]
    fn sink_bytes_round_trip_and_refuse_damage() {
        let w = vec![
            Write {
                file: 3,
                offset: 1234,
                bytes: vec![1, 2, 3],
            },
            Write {
                file: 4,
                offset: 0,
                bytes: vec![],
            },
        ];
        let pieces: Vec<(u32, u64, &[u8])> =
            w.iter().map(|w| (w.file, w.offset, &w.bytes[..])).collect();
        let b = Binlog::encode_writes(&pieces);
        assert_eq!(Binlog::decode_writes(&b).unwrap(), w);
        for cut in 0..b.len() {
            assert!(Binlog::decode_writes(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = b.clone();
        extra.push(0);
        assert!(Binlog::decode_writes(&extra).is_err());
    }
}
