//! State shared by every session of one server: the engine, global variables, status
//! counters, the connection registry (for SHOW PROCESSLIST) and the catalog version that
//! tells prepared statements when to re-plan.
//!
//! Lock order: `conns` and `globals` are leaf locks, never held while calling the engine or
//! taking another lock. Must never: hold a lock across a statement's execution.

use crate::status::{Counter, Counters};
use crate::variables;
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tierdb_engine::{Engine, Value};

/// Facts about the server the SQL layer reports (version strings, port, ...).
#[derive(Clone, Debug)]
pub struct ServerInfo {
    /// e.g. "10.11.0-tierdb-0.1.0" (clients parse the leading MySQL/MariaDB version).
    pub version: String,
    pub version_comment: String,
    pub port: u16,
    pub hostname: String,
    pub socket: String,
    pub datadir: String,
    /// The folder server-side `LOAD DATA INFILE` may read from; empty: any file.
    pub secure_file_priv: String,
    /// `@@local_infile` at start: LOAD DATA LOCAL allowed.
    pub local_infile: bool,
}

impl Default for ServerInfo {
    fn default() -> Self {
        ServerInfo {
            version: "10.11.0-tierdb-0.1.0".into(),
            version_comment: "tierdb".into(),
            port: 3306,
            hostname: "localhost".into(),
            socket: String::new(),
            datadir: String::new(),
            secure_file_priv: String::new(),
            local_infile: true,
        }
    }
}

/// One registered connection.
pub struct ConnInfo {
    pub user: String,
    pub host: String,
    pub db: Mutex<Option<String>>,
    /// True while a statement runs.
    pub busy: AtomicBool,
    /// Milliseconds since server start when the current state (busy/idle) began.
    pub since_ms: AtomicU64,
    /// KILL's flag for this connection (`crate::interrupt`).
    pub kill: Arc<std::sync::atomic::AtomicU8>,
    /// The running statement's text (SHOW PROCESSLIST's Info; stale while idle).
    pub info: Mutex<String>,
    /// What the running statement waits for (a `Waiting` as u8; 0 while it works). Shared
    /// with the engine's lock waits (`tierdb_engine::report_lock_waits`).
    pub waiting: Arc<AtomicU8>,
}

/// What a statement waits for, shown as SHOW PROCESSLIST's State (MariaDB's words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Waiting {
    Nothing = 0,
    /// A write statement while FLUSH TABLES WITH READ LOCK is held.
    GlobalReadLock = 1,
    /// A commit while FLUSH TABLES WITH READ LOCK is held.
    CommitLock = 2,
    /// GET_LOCK on a name another connection holds.
    UserLock = 3,
    /// FLUSH TABLES WITH READ LOCK waiting for running writes to finish.
    WritesToFinish = 4,
    /// A row lock another transaction holds (set by the engine's lock manager).
    RowLock = 5,
}

impl Waiting {
    /// SHOW PROCESSLIST's State for a busy connection in this state.
    pub fn state(code: u8) -> &'static str {
        match code {
            1 => "Waiting for global read lock",
            2 => "Waiting for commit lock",
            3 => "User lock",
            4 => "Waiting for all running commits to finish",
            5 => "Waiting for row lock",
            _ => "executing",
        }
    }
}

impl ConnInfo {
    /// Shows `w` as the connection's state until the returned guard is dropped.
    pub fn wait_for(self: &Arc<Self>, w: Waiting) -> WaitingGuard {
        self.waiting.store(w as u8, Ordering::Relaxed);
        WaitingGuard(self.clone())
    }
}

/// Puts the connection's state back to working when dropped.
pub struct WaitingGuard(Arc<ConnInfo>);

impl Drop for WaitingGuard {
    fn drop(&mut self) {
        self.0
            .waiting
            .store(Waiting::Nothing as u8, Ordering::Relaxed);
    }
}

/// CLOCK_MONOTONIC_COARSE in milliseconds (0 if the clock cannot be read).
#[cfg(target_os = "linux")]
fn coarse_clock_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    if r != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1000)
        .saturating_add(ts.tv_nsec as u64 / 1_000_000)
}

/// Milliseconds of the monotonic clock since the first call (no coarse clock here).
#[cfg(not(target_os = "linux"))]
fn coarse_clock_ms() -> u64 {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Write access to the global variables (`Shared::globals_mut`): dropping it, still under
/// the lock, bumps the generation, so a session that read the generation before the change
/// recomputes what it derived from the variables.
pub(crate) struct GlobalsMut<'a> {
    map: parking_lot::RwLockWriteGuard<'a, HashMap<&'static str, Value>>,
    gen: &'a AtomicU64,
}

impl std::ops::Deref for GlobalsMut<'_> {
    type Target = HashMap<&'static str, Value>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl std::ops::DerefMut for GlobalsMut<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.map
    }
}

impl Drop for GlobalsMut<'_> {
    fn drop(&mut self) {
        self.gen.fetch_add(1, Ordering::AcqRel);
    }
}

/// Ends a connection's socket (KILL CONNECTION), given its id; false when it is gone.
pub type ConnectionCloser = Box<dyn Fn(u32) -> bool + Send + Sync>;

pub struct Shared {
    pub(crate) engine: Arc<Engine>,
    pub(crate) info: ServerInfo,
    /// Written only through `globals_mut` (which bumps `globals_gen`).
    globals: RwLock<HashMap<&'static str, Value>>,
    /// Bumped by every change of a global variable (sessions compare it to reuse settings
    /// derived from the variables).
    globals_gen: AtomicU64,
    pub(crate) counters: Counters,
    pub(crate) conns: Mutex<BTreeMap<u32, Arc<ConnInfo>>>,
    pub(crate) started: Instant,
    /// `coarse_clock_ms()` at start (`now_ms` counts from it).
    started_coarse_ms: u64,
    catalog_version: AtomicU64,
    /// GET_LOCK and friends.
    pub(crate) user_locks: crate::user_locks::UserLocks,
    /// FLUSH TABLES WITH READ LOCK.
    pub(crate) read_lock: crate::read_lock::GlobalReadLock,
    /// How KILL CONNECTION ends another connection's socket (set by the server).
    closer: RwLock<Option<ConnectionCloser>>,
    /// Who may log in and what each account may do.
    pub accounts: crate::accounts::Accounts,
    /// Held by a statement that changes accounts (one at a time, so each sees the last).
    pub(crate) account_ddl: Mutex<()>,
    /// The binary log, when `log_bin` is on (set once by the server, `set_binlog`).
    binlog: std::sync::OnceLock<Arc<tierdb_binlog::log::Binlog>>,
}

impl Shared {
    /// The SQL layer over `engine`; Err when the stored accounts cannot be read.
    pub fn new(engine: Arc<Engine>, settings: ServerInfo) -> Result<Arc<Shared>, String> {
        let accounts = crate::accounts::Accounts::load(&engine)
            .map_err(|e| format!("cannot read the stored accounts: {e}"))?;
        let mut globals = variables::defaults(
            &settings.version,
            &settings.version_comment,
            settings.port,
            &settings.hostname,
            &settings.datadir,
        );
        if !settings.secure_file_priv.is_empty() {
            globals.insert(
                "secure_file_priv",
                Value::Bytes(settings.secure_file_priv.clone().into_bytes()),
            );
        }
        globals.insert("local_infile", Value::Int(settings.local_infile as i64));
        Ok(Arc::new(Shared {
            accounts,
            account_ddl: Mutex::new(()),
            engine,
            info: settings,
            globals: RwLock::new(globals),
            globals_gen: AtomicU64::new(0),
            counters: Counters::default(),
            conns: Mutex::new(BTreeMap::new()),
            started: Instant::now(),
            started_coarse_ms: coarse_clock_ms(),
            catalog_version: AtomicU64::new(1),
            user_locks: Default::default(),
            read_lock: Default::default(),
            closer: RwLock::new(None),
            binlog: std::sync::OnceLock::new(),
        }))
    }

    /// Attaches the binary log (the one the engine writes through) and shows its settings
    /// in the variables. Called once, before the first session.
    pub fn set_binlog(&self, b: Arc<tierdb_binlog::log::Binlog>) {
        let c = b.config();
        let base = c.dir.join(&c.basename);
        let s = |x: String| Value::Bytes(x.into_bytes());
        {
            let mut g = self.globals_mut();
            g.insert("log_bin", Value::Int(1));
            g.insert("log_bin_basename", s(base.display().to_string()));
            g.insert("log_bin_index", s(format!("{}.index", base.display())));
            g.insert("max_binlog_size", Value::Int(c.max_size as i64));
            g.insert("server_id", Value::Int(i64::from(c.server_id)));
        }
        let _ = self.binlog.set(b);
    }

    /// The binary log, when on.
    pub(crate) fn binlog(&self) -> Option<&Arc<tierdb_binlog::log::Binlog>> {
        self.binlog.get()
    }

    /// A login refused (Access_denied_errors).
    pub fn count_access_denied(&self) {
        self.counters.inc(crate::status::Counter::AccessDenied);
    }

    /// How KILL CONNECTION ends a connection's socket (the server knows the sockets).
    pub fn set_connection_closer(&self, closer: ConnectionCloser) {
        *self.closer.write() = Some(closer);
    }

    /// KILL [QUERY | CONNECTION] `id`: raises the connection's kill flag (its running
    /// statement stops at its next check point with 1317) and, for CONNECTION, ends its
    /// socket so an idle connection goes too. False when no such connection is registered.
    pub(crate) fn kill(&self, id: u32, connection: bool) -> bool {
        let Some(c) = self.conn(id) else {
            return false;
        };
        let flag = if connection {
            crate::interrupt::CONNECTION
        } else {
            crate::interrupt::QUERY
        };
        c.kill.fetch_max(flag, Ordering::AcqRel);
        if connection {
            if let Some(close) = self.closer.read().as_ref() {
                close(id);
            }
        }
        true
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn info(&self) -> &ServerInfo {
        &self.info
    }

    /// Registers a connection (idempotent: a second call only updates user/host).
    pub fn register_connection(&self, id: u32, user: &str, host: &str) {
        let mut conns = self.conns.lock();
        let db = conns.get(&id).and_then(|c| c.db.lock().clone());
        let kill = conns
            .get(&id)
            .map_or_else(Default::default, |c| c.kill.clone());
        let fresh = !conns.contains_key(&id);
        conns.insert(
            id,
            Arc::new(ConnInfo {
                user: user.to_string(),
                host: host.to_string(),
                db: Mutex::new(db),
                busy: AtomicBool::new(false),
                since_ms: AtomicU64::new(self.now_ms()),
                kill,
                info: Mutex::new(String::new()),
                waiting: Arc::new(AtomicU8::new(0)),
            }),
        );
        let n = conns.len() as u64;
        drop(conns);
        if fresh {
            self.counters.inc(Counter::Connections);
        }
        self.counters.raise_to(Counter::MaxUsedConnections, n);
    }

    /// Connection `id`'s entry, when registered.
    pub fn connection(&self, id: u32) -> Option<Arc<ConnInfo>> {
        self.conns.lock().get(&id).cloned()
    }

    pub fn unregister_connection(&self, id: u32) {
        self.conns.lock().remove(&id);
    }

    pub(crate) fn conn(&self, id: u32) -> Option<Arc<ConnInfo>> {
        self.conns.lock().get(&id).cloned()
    }

    /// Adds wire traffic for Bytes_received / Bytes_sent (called by the protocol).
    pub fn add_bytes(&self, rx: u64, tx: u64) {
        self.counters.add(Counter::BytesReceived, rx);
        self.counters.add(Counter::BytesSent, tx);
    }

    /// Milliseconds since the server started, from the coarse clock (a few ms of resolution,
    /// read twice per statement for SHOW PROCESSLIST's times: no hardware clock read).
    pub(crate) fn now_ms(&self) -> u64 {
        coarse_clock_ms().saturating_sub(self.started_coarse_ms)
    }

    pub(crate) fn catalog_version(&self) -> u64 {
        self.catalog_version.load(Ordering::Acquire)
    }

    /// Called after every DDL so cached plans re-resolve their tables.
    pub(crate) fn catalog_changed(&self) {
        self.catalog_version.fetch_add(1, Ordering::AcqRel);
    }

    /// The global variables, to change them (the generation moves on when the guard drops).
    pub(crate) fn globals_mut(&self) -> GlobalsMut<'_> {
        GlobalsMut {
            map: self.globals.write(),
            gen: &self.globals_gen,
        }
    }

    /// Changes with every change of a global variable.
    pub(crate) fn globals_gen(&self) -> u64 {
        self.globals_gen.load(Ordering::Acquire)
    }

    pub(crate) fn global(&self, name: &str) -> Option<Value> {
        if matches!(name, "gtid_binlog_pos" | "gtid_current_pos") {
            let pos = self
                .binlog()
                .map(|b| b.gtid_binlog_pos())
                .unwrap_or_default();
            return Some(Value::Bytes(pos.into_bytes()));
        }
        self.globals.read().get(name).cloned()
    }

    /// Everything SHOW GLOBAL STATUS shows, sorted by name.
    pub fn status(&self) -> Vec<(String, String)> {
        let mut out = self.counters.snapshot();
        let (connected, running) = {
            let c = self.conns.lock();
            (
                c.len(),
                c.values()
                    .filter(|x| x.busy.load(Ordering::Relaxed))
                    .count(),
            )
        };
        let uptime = self.started.elapsed().as_secs().to_string();
        out.push(("Threads_connected".into(), connected.to_string()));
        out.push(("Threads_running".into(), running.max(1).to_string()));
        out.push(("Uptime".into(), uptime.clone()));
        out.push(("Uptime_since_flush_status".into(), uptime));
        out.extend(self.engine.status());
        if let Some(b) = self.binlog() {
            out.extend(b.status());
        }
        out.sort_by_key(|a| a.0.to_ascii_lowercase());
        out
    }
}
