//! One client connection's SQL state: current database, session variables, the open
//! transaction, prepared statements; and the dispatch of every statement.
//!
//! Transactions: with autocommit on and no BEGIN, each statement runs in its own engine
//! `Txn` (begin → run → commit; rollback on error). `BEGIN`/`START TRANSACTION` or
//! `autocommit=0` keep a `Txn` open in the session until COMMIT/ROLLBACK. DDL commits an
//! open transaction first. Inside an open transaction every statement starts at an engine
//! savepoint. A deadlock (1213) or a transaction past `transaction_memory_limit` (1206)
//! rolls the whole transaction back; any other error — a lock
//! wait timeout (1205, like InnoDB with `innodb_rollback_on_timeout=OFF`), a duplicate key
//! (1062) half-way through a multi-row INSERT, a bad value — rolls back only the failed
//! statement's changes, keeps the row locks it took and leaves the transaction open (if that
//! partial rollback itself fails, the whole transaction is rolled back).
//!
//! Must never: hold a shared lock while running a statement, leave a `Txn` open after
//! `end()`, or re-parse a prepared statement.

use crate::exec::{self, WriteResult};
use crate::expr::{Env, EvalCx};
use crate::parse::{parse, Parsed};
use crate::plan::{self, no_db, IsolationScope, Plan, PlanCx, SetItem, SetTarget, Utility};
use crate::result::{Column, PreparedInfo, QueryResult, Raised, SqlError, Warning};
use crate::shared::{ConnInfo, Shared, Waiting};
use crate::show;
use crate::status::Counter;
use crate::variables::{self, VarScope};
use sqlparser::ast::Statement;
use sqlparser::tokenizer::Location;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tierdb_engine::{ColumnType, Error as EngineError, Savepoint, TableLockMode, Txn, Value};

/// Per-session state visible to expression evaluation (`@@vars`, `DATABASE()`, ...).
pub(crate) struct SessionState {
    shared: Arc<Shared>,
    conn_id: u32,
    /// The binary-log position the open transaction's consistent snapshot matches
    /// (`Binlog_snapshot_file` / `_position`, BINLOG_GTID_POS there); None outside one.
    binlog_snapshot: Option<tierdb_binlog::log::SnapshotPos>,
    user: String,
    host: String,
    db: Option<String>,
    autocommit: bool,
    vars: SessionVars,
    /// What the session's variables say for every write (sql_mode, foreign_key_checks),
    /// with the variable generations it was read at (see `SessionState::derived`).
    derived: std::cell::Cell<Option<(u64, u64, Derived)>>,
    user_vars: HashMap<String, Value>,
    last_insert_id: u64,
    /// `ROW_COUNT()` / `FOUND_ROWS()` of the previous statement (see `Session::run`).
    row_count: i64,
    found_rows: u64,
    /// FOUND_ROWS() for the result set being returned when it is not its row count
    /// (SQL_CALC_FOUND_ROWS); taken when the statement ends.
    calc_found_rows: Option<u64>,
    /// Warnings of the last statement that used a table (SHOW WARNINGS): (code, message).
    warnings: Vec<Warning>,
    /// Warnings that statement raised beyond the `MAX_WARNINGS` listed (counted only).
    unlisted_warnings: usize,
    /// `SET TRANSACTION ISOLATION LEVEL` for the next transaction only (cleared when it ends).
    next_isolation: Option<String>,
    /// The session's TEMPORARY tables (dropped when it ends).
    temps: crate::temp::TempTables,
    /// `warnings` were started afresh by the running statement (`Core::run`); a statement
    /// that fails before that replaces them with its error alone (`note_error`).
    warnings_fresh: bool,
    /// The account the session logged in as (user, host pattern); None: a trusted embedded
    /// session, which holds every privilege.
    account: Option<(String, String)>,
    /// The account's privileges as of `grants_version` of `Shared::accounts`; None when no
    /// check can fail (trusted session or superuser). Refreshed when each statement starts.
    grants: Option<Arc<crate::accounts::Account>>,
    grants_version: u64,
}

impl SessionState {
    /// SHOW [FULL] PROCESSLIST as this session may see it: without PROCESS, the connections of
    /// its own account's user only (the account matched: an anonymous one sees just itself).
    fn visible_processlist(&self, full: bool) -> QueryResult {
        let res = show::processlist(&self.shared, self.conn_id, full);
        match &self.grants {
            Some(a) if a.global & crate::accounts::PROCESS == 0 => {
                let me = self.conn_id;
                let user = self.account.as_ref().map_or("", |(u, _)| u.as_str());
                keep_rows(res, |r| {
                    r[0] == Value::Int(i64::from(me))
                        || (!user.is_empty() && text_of(&r[1]) == user)
                })
            }
            _ => res,
        }
    }

    /// A statement failed: SHOW WARNINGS lists its error after the notes and warnings it
    /// raised first (only the error when it failed before running, e.g. a syntax error).
    fn note_error(&mut self, e: &SqlError) {
        if !self.warnings_fresh {
            self.clear_warnings();
        }
        self.warnings
            .push(Warning::error(e.code, e.message.clone()));
    }

    fn clear_warnings(&mut self) {
        self.warnings.clear();
        self.unlisted_warnings = 0;
    }

    /// The warnings of a write (listed and counted).
    fn set_warnings(&mut self, raised: Raised) {
        self.warnings = raised.listed;
        self.unlisted_warnings = raised.unlisted;
    }

    /// An OK for a statement that did nothing but note why (`IF [NOT] EXISTS`).
    fn noted(&mut self, code: u16, msg: String) -> QueryResult {
        self.warnings.push(Warning::note(code, msg));
        let mut res = QueryResult::ok();
        recount_warnings(&mut res, self.warning_total());
        res
    }

    /// Every warning of the last statement, listed or not (`@@warning_count`).
    fn warning_total(&self) -> usize {
        self.warnings.len() + self.unlisted_warnings
    }

    /// The session's isolation level keeps one read view per transaction (REPEATABLE READ;
    /// SERIALIZABLE is served the same way). READ COMMITTED (the default) and READ
    /// UNCOMMITTED read the last committed versions.
    fn repeatable_read(&self) -> bool {
        if let Some(l) = &self.next_isolation {
            return l == "REPEATABLE-READ" || l == "SERIALIZABLE";
        }
        // Every session holds its level from the start (copied from the global one).
        matches!(
            self.vars.get("transaction_isolation"),
            Some(Value::Bytes(b)) if b == b"REPEATABLE-READ" || b == b"SERIALIZABLE"
        )
    }

    fn session_value(&self, name: &str) -> Option<Value> {
        match name {
            "autocommit" => Some(Value::Int(i64::from(self.autocommit))),
            "last_insert_id" | "identity" => Some(Value::Int(self.last_insert_id as i64)),
            "warning_count" => Some(Value::Int(self.warning_total() as i64)),
            "error_count" => Some(Value::Int(
                self.warnings.iter().filter(|w| w.level == "Error").count() as i64,
            )),
            "timestamp" => Some(self.vars.get(name).cloned().unwrap_or(Value::Int(0))),
            _ => self.vars.get(name).cloned(),
        }
    }
}

/// The session's own values of system variables. Every change bumps `gen`, which settings
/// derived from them and cached (`SessionState::derived`) compare.
#[derive(Default)]
struct SessionVars {
    map: HashMap<&'static str, Value>,
    gen: u64,
}

impl SessionVars {
    fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }
    fn insert(&mut self, name: &'static str, v: Value) -> Option<Value> {
        self.gen += 1;
        self.map.insert(name, v)
    }
    fn remove(&mut self, name: &str) -> Option<Value> {
        self.gen += 1;
        self.map.remove(name)
    }
}

fn engine_var(shared: &Shared, name: &str) -> Option<Value> {
    shared
        .engine
        .variables()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| match v.parse::<i64>() {
            Ok(i) => Value::Int(i),
            Err(_) => Value::Bytes(v.into_bytes()),
        })
}

/// Settings every write statement reads from the session's variables.
#[derive(Clone, Copy)]
struct Derived {
    write_mode: crate::expr::WriteMode,
    fk_checks: bool,
}

impl SessionState {
    /// The settings writes read, read again only after a session or global variable changed
    /// (the generations are taken before the values: a change racing the read only costs a
    /// second read).
    fn derived(&self) -> Derived {
        let gens = (self.vars.gen, self.shared.globals_gen());
        if let Some((s, g, d)) = self.derived.get() {
            if (s, g) == gens {
                return d;
            }
        }
        let d = Derived {
            write_mode: crate::expr::read_write_mode(self),
            fk_checks: crate::expr::read_fk_checks(self),
        };
        self.derived.set(Some((gens.0, gens.1, d)));
        d
    }
    /// `sql_log_bin` is on for this session (its changes go to the binary log).
    pub(crate) fn log_bin_on(&self) -> bool {
        !matches!(self.sysvar("sql_log_bin", None), Ok(Value::Int(0)))
    }
}

impl Env for SessionState {
    fn current_db(&self) -> Option<&str> {
        self.db.as_deref()
    }
    fn user(&self) -> String {
        format!("{}@{}", self.user, self.host)
    }
    fn current_user(&self) -> String {
        match &self.account {
            Some((u, h)) => format!("{u}@{h}"),
            None => self.user(),
        }
    }
    fn account(&self) -> Option<&crate::accounts::Account> {
        self.grants.as_deref()
    }
    fn accounts(&self) -> Option<&crate::accounts::Accounts> {
        Some(&self.shared.accounts)
    }
    fn connection_id(&self) -> u32 {
        self.conn_id
    }
    fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }
    fn row_count(&self) -> i64 {
        self.row_count
    }
    fn found_rows(&self) -> u64 {
        self.found_rows
    }
    fn user_lock(
        &self,
        f: crate::user_locks::UserLockFunc,
        args: &[Value],
    ) -> Result<Value, SqlError> {
        let _state = (f == crate::user_locks::UserLockFunc::Get)
            .then(|| self.shared.connection(self.conn_id))
            .flatten()
            .map(|c| c.wait_for(Waiting::UserLock));
        self.shared.user_locks.call(self.conn_id, f, args)
    }
    fn version(&self) -> String {
        self.shared.info.version.clone()
    }
    fn sysvar(&self, name: &str, global: Option<bool>) -> Result<Value, SqlError> {
        let def = variables::lookup(name);
        if global == Some(true) {
            if def.is_some_and(|d| d.scope == VarScope::Session) {
                return Err(SqlError::new(
                    1238,
                    "HY000",
                    format!("Variable '{name}' is a SESSION variable"),
                ));
            }
        } else if let Some(v) = self.session_value(name) {
            if name == "timestamp" && v == Value::Int(0) {
                // Not set: the current time, as MariaDB shows it.
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_micros() as f64 / 1e6)
                    .unwrap_or(0.0);
                return Ok(Value::Double(now));
            }
            return Ok(v);
        }
        if let Some(v) = self.shared.global(name) {
            return Ok(v);
        }
        engine_var(&self.shared, name).ok_or_else(|| variables::unknown(name))
    }
    /// Read once per change of a session or global variable (DML asks for it each time).
    fn write_mode(&self) -> crate::expr::WriteMode {
        self.derived().write_mode
    }
    /// `foreign_key_checks` is on for this session (cached as `write_mode`).
    fn fk_checks(&self) -> bool {
        self.derived().fk_checks
    }
    fn user_var(&self, name: &str) -> Value {
        self.user_vars.get(name).cloned().unwrap_or(Value::Null)
    }
    fn engine(&self) -> Option<&tierdb_engine::Engine> {
        Some(&self.shared.engine)
    }
    fn processlist(&self) -> Vec<tierdb_engine::Row> {
        match self.visible_processlist(true) {
            QueryResult::Rows { rows, .. } => rows
                .into_iter()
                .map(|mut r| {
                    r.truncate(8);
                    r
                })
                .collect(),
            _ => Vec::new(),
        }
    }
    fn load_file(&self, name: &str) -> Value {
        let may = self.grants.as_deref().is_none_or(|a| {
            crate::accounts::check(
                a,
                &self.host,
                &[crate::accounts::Need::Global(crate::accounts::FILE)],
            )
            .is_ok()
        });
        let max = match self.sysvar("max_allowed_packet", Some(true)) {
            Ok(Value::Int(n)) if n > 0 => n as u64,
            _ => 64 << 20,
        };
        let read = || -> Option<Vec<u8>> {
            let path = server_path(self.shared.info(), name).ok()?;
            let meta = std::fs::metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > max {
                return None;
            }
            std::fs::read(&path).ok()
        };
        match may.then(read).flatten() {
            Some(b) => Value::Bytes(b),
            None => Value::Null,
        }
    }
    fn server_values(&self, table: &str) -> Vec<tierdb_engine::Row> {
        let none = crate::plan::ShowFilter::None;
        let listed = match table {
            "GLOBAL_STATUS" | "SESSION_STATUS" => {
                show::status(&self.shared, &none, self, self.binlog_snapshot.as_ref())
            }
            "GLOBAL_VARIABLES" => show::variables(&self.shared, true, &|_| None, &none, self),
            _ => show::variables(&self.shared, false, &|n| self.session_value(n), &none, self),
        };
        match listed {
            Ok(QueryResult::Rows { rows, .. }) => rows
                .into_iter()
                .map(|mut r| {
                    if let Some(Value::Bytes(name)) = r.first_mut() {
                        name.make_ascii_uppercase();
                    }
                    r
                })
                .collect(),
            _ => Vec::new(),
        }
    }
    fn binlog_gtid_pos(&self, file: &str, pos: u64) -> Option<String> {
        let b = self.shared.binlog()?;
        // The session's own snapshot position: known even before its bytes reach the file
        // (flush_log_at_trx_commit 0 / 2 write them within about two seconds).
        if let Some(s) = &self.binlog_snapshot {
            if b.number_of(file).is_some()
                && b.number_of(file) == b.number_of(&s.file)
                && pos == s.offset
            {
                return Some(s.gtid.clone());
            }
        }
        b.gtid_pos_at(file, pos)
    }
}

struct Prepared {
    stmt: Statement,
    placeholders: Vec<Location>,
    item_texts: crate::parse::ItemTexts,
    /// None after a failed re-plan (e.g. the table was dropped): planned again next time.
    plan: Option<Plan>,
    version: u64,
    /// `Shared::accounts`' version when planned: views' rights were checked then, so an
    /// account change plans it again.
    grants_version: u64,
    /// What the statement needs as written (`authorize::statement_needs`), kept while the
    /// catalog version is this one and the session has no TEMPORARY table (which could hide
    /// or uncover a table of the same name).
    needs: Option<(u64, Vec<crate::accounts::Need>)>,
    db: Option<String>,
    /// The text as the client sent it, kept for a DDL statement only (the binary log
    /// records it when the statement runs).
    ddl_text: Option<String>,
    /// The text as prepared (SHOW PROCESSLIST's Info while it runs).
    text: String,
}

/// Everything but the prepared-statement map (so a statement's plan can be borrowed while
/// the core runs it).
struct Core {
    st: SessionState,
    txn: Option<Txn>,
    /// Named savepoints of the open transaction (SQL `SAVEPOINT`), oldest first. Emptied
    /// whenever the transaction ends (`Core::take_txn`), so a name never outlives it.
    savepoints: Vec<(String, Savepoint)>,
    /// The open transaction is REPEATABLE READ: the level when it began (its first
    /// statement, or BEGIN), kept until it ends whatever SET SESSION says meanwhile.
    txn_repeatable: Option<bool>,
    /// The running statement is inside the global read lock's gate (`read_lock`).
    in_write_gate: bool,
    conn: Option<Arc<ConnInfo>>,
    /// SQL text of the running statement, whole (a DDL statement's binary-log event; SHOW
    /// PROCESSLIST reads `ConnInfo::info`).
    current_sql: String,
    /// The text of the prepared statement being executed (for the binary log), taken by the
    /// utility statement it runs.
    prepared_text: Option<String>,
    /// Tables this session holds with `LOCK TABLES` (empty: no table lock; every table may
    /// be used). Released by `UNLOCK TABLES`, `BEGIN`, another `LOCK TABLES`, or the end.
    table_locks: Vec<LockedTable>,
    /// TEMPORARY tables dropped while a transaction was open, as (db, key): that transaction
    /// may have written them (and may still roll those writes back), so the engine drops
    /// them once it has ended (`drop_finished_temporary_tables`).
    dropped_temps: Vec<(String, String)>,
}

struct LockedTable {
    db: String,
    name: String,
    table: Arc<tierdb_engine::Table>,
    mode: TableLockMode,
}

pub struct Session {
    core: Core,
    stmts: HashMap<u32, Prepared>,
    next_stmt_id: u32,
    /// SQL-level prepared statements (`PREPARE name FROM ...`): name (lower case) → id in
    /// `stmts`.
    named: HashMap<String, u32>,
    ended: bool,
    /// What earlier BINLOG statements told this session (format description, table maps).
    binlog_apply: Option<crate::binlog_sql::ApplyState>,
    /// A `LOAD DATA LOCAL` waiting for the client's file (and its text, for PROCESSLIST).
    pending_load: Option<(Plan, String)>,
}

fn counter_for(plan: &Plan) -> Counter {
    match plan {
        Plan::Select(_) => Counter::ComSelect,
        Plan::Insert(p) if matches!(p.on_duplicate, crate::plan::OnDuplicate::Replace) => {
            Counter::ComReplace
        }
        Plan::Insert(_) => Counter::ComInsert,
        Plan::Update(_) => Counter::ComUpdate,
        Plan::Delete(_) => Counter::ComDelete,
        Plan::Explain(_) => Counter::ComExplain,
        Plan::Load(_) => Counter::ComLoad,
        Plan::Utility(u) => utility_counter(u),
    }
}

fn utility_counter(u: &Utility) -> Counter {
    match u {
        Utility::Noted { then, .. } => utility_counter(then),
        Utility::Begin { .. } => Counter::ComBegin,
        Utility::Commit => Counter::ComCommit,
        Utility::Rollback => Counter::ComRollback,
        Utility::Savepoint(_) => Counter::ComSavepoint,
        Utility::RollbackToSavepoint(_) => Counter::ComRollbackToSavepoint,
        Utility::ReleaseSavepoint(_) => Counter::ComReleaseSavepoint,
        Utility::Use(_) => Counter::ComChangeDb,
        Utility::Set(_) => Counter::ComSet,
        Utility::CreateDatabase { .. } => Counter::ComCreateDb,
        Utility::DropDatabase { .. } => Counter::ComDropDb,
        Utility::CreateTable { .. } | Utility::CreateTableAs { .. } => Counter::ComCreateTable,
        Utility::DropTable { .. } => Counter::ComDropTable,
        Utility::CreateView { .. } => Counter::ComCreateView,
        Utility::DropView { .. } => Counter::ComDropView,
        Utility::CreateIndex { .. } => Counter::ComCreateIndex,
        Utility::DropIndex { .. } => Counter::ComDropIndex,
        Utility::Truncate { .. } => Counter::ComTruncate,
        Utility::Analyze { .. } => Counter::ComAnalyze,
        Utility::Optimize { .. } => Counter::ComOptimize,
        Utility::Check { .. } => Counter::ComCheck,
        Utility::Repair { .. } => Counter::ComRepair,
        Utility::SelectIntoFile { .. } => Counter::ComSelect,
        Utility::AlterNoop { .. }
        | Utility::AddColumn { .. }
        | Utility::AlterColumn { .. }
        | Utility::SetChecks { .. }
        | Utility::RebuildTable { .. }
        | Utility::RenameTables { alter: true, .. } => Counter::ComAlterTable,
        Utility::RenameTables { alter: false, .. } => Counter::ComRenameTable,
        Utility::LockTables { .. } => Counter::ComLockTables,
        Utility::UnlockTables => Counter::ComUnlockTables,
        Utility::Flush | Utility::FlushReadLock => Counter::ComFlush,
        _ => Counter::ComShow,
    }
}

/// The OK of an index change, with the info line MariaDB sends for ALTER TABLE.
fn alter_ok(warnings: usize) -> QueryResult {
    QueryResult::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: warnings.min(usize::from(u16::MAX)) as u16,
        info: format!("Records: 0  Duplicates: 0  Warnings: {warnings}"),
    }
}

/// An OK announcing `n` warnings, also in its info line (`... Warnings: n`) when it has one.
fn recount_warnings(res: &mut QueryResult, n: usize) {
    if let QueryResult::Ok { warnings, info, .. } = res {
        *warnings = n.min(usize::from(u16::MAX)) as u16;
        if let Some(at) = info.rfind("Warnings: ") {
            info.truncate(at);
            info.push_str(&format!("Warnings: {n}"));
        }
    }
}

fn ok(affected: u64, last_insert_id: u64, info: String) -> QueryResult {
    QueryResult::Ok {
        affected_rows: affected,
        last_insert_id,
        warnings: 0,
        info,
    }
}

impl Session {
    pub fn new(
        shared: Arc<Shared>,
        conn_id: u32,
        user: &str,
        host: &str,
        db: Option<&str>,
    ) -> Result<Session, SqlError> {
        if let Some(d) = db {
            if !shared.engine.database_exists(d) {
                return Err(SqlError::new(
                    1049,
                    "42000",
                    format!("Unknown database '{d}'"),
                ));
            }
        }
        shared.register_connection(conn_id, user, host);
        let conn = shared.conn(conn_id);
        if let Some(c) = &conn {
            *c.db.lock() = db.map(str::to_string);
        }
        let autocommit = shared
            .global("autocommit")
            .and_then(|v| v.as_i64())
            .unwrap_or(1)
            != 0;
        // A session starts with the global isolation level and keeps it through later SET
        // GLOBAL changes (as MySQL).
        let mut vars = SessionVars::default();
        if let Some(v) = shared.global("transaction_isolation") {
            vars.insert("transaction_isolation", v.clone());
            vars.insert("tx_isolation", v);
        }
        Ok(Session {
            core: Core {
                st: SessionState {
                    binlog_snapshot: None,
                    shared,
                    conn_id,
                    user: user.to_string(),
                    host: host.to_string(),
                    db: db.map(str::to_string),
                    autocommit,
                    vars,
                    derived: std::cell::Cell::new(None),
                    user_vars: HashMap::new(),
                    last_insert_id: 0,
                    row_count: -1,
                    found_rows: 0,
                    calc_found_rows: None,
                    warnings: Vec::new(),
                    unlisted_warnings: 0,
                    next_isolation: None,
                    temps: Default::default(),
                    warnings_fresh: false,
                    account: None,
                    grants: None,
                    grants_version: 0,
                },
                txn: None,
                savepoints: Vec::new(),
                txn_repeatable: None,
                in_write_gate: false,
                conn,
                current_sql: String::new(),
                prepared_text: None,
                table_locks: Vec::new(),
                dropped_temps: Vec::new(),
            },
            stmts: HashMap::new(),
            next_stmt_id: 1,
            named: HashMap::new(),
            ended: false,
            binlog_apply: None,
            pending_load: None,
        })
    }

    /// A session of a client that logged in as `account` (from `Shared::accounts`): its
    /// statements are checked against the account's privileges. `user` / `host`: the client
    /// as USER() shows it. 1044 when `db` is a database the account may not use.
    pub fn login(
        shared: Arc<Shared>,
        conn_id: u32,
        account: &crate::accounts::Account,
        user: &str,
        host: &str,
        db: Option<&str>,
    ) -> Result<Session, SqlError> {
        if let Some(d) = db {
            let a = shared.accounts.get(&account.user, &account.host);
            let a = a.as_deref().unwrap_or(account);
            if !crate::infoschema::is_schema(d) {
                crate::accounts::check(a, host, &[crate::accounts::Need::AnyInDb(d.to_string())])?;
            }
        }
        let mut s = Session::new(shared, conn_id, user, host, db)?;
        s.core.st.account = Some((account.user.clone(), account.host.clone()));
        s.core.refresh_grants();
        Ok(s)
    }

    /// CREATE / ALTER / DROP / RENAME USER, SET PASSWORD, GRANT, REVOKE, SHOW GRANTS, SHOW
    /// CREATE USER (`crate::account_sql`). The changing ones end the open transaction first,
    /// as MariaDB's do.
    fn account_statement(
        &mut self,
        stmt: crate::account_sql::AccountStmt,
    ) -> Result<QueryResult, SqlError> {
        use crate::account_sql::AccountStmt;
        let shows = matches!(
            stmt,
            AccountStmt::ShowGrants(_) | AccountStmt::ShowCreateUser(_)
        );
        self.core.st.shared.counters.inc(match &stmt {
            AccountStmt::CreateUser { .. } => Counter::ComCreateUser,
            AccountStmt::AlterUser { .. } => Counter::ComAlterUser,
            AccountStmt::DropUser { .. } => Counter::ComDropUser,
            AccountStmt::RenameUser { .. } => Counter::ComRenameUser,
            AccountStmt::SetPassword { .. } => Counter::ComSet,
            AccountStmt::Grant { .. } => Counter::ComGrant,
            AccountStmt::Revoke { .. } => Counter::ComRevoke,
            AccountStmt::RevokeAll { .. } => Counter::ComRevokeAll,
            AccountStmt::ShowGrants(_) => Counter::ComShowGrants,
            AccountStmt::ShowCreateUser(_) => Counter::ComShowCreateUser,
        });
        if !shows {
            self.core.commit_open()?;
        }
        // An account change waits while FLUSH TABLES WITH READ LOCK is held.
        let shared = self.core.st.shared.clone();
        let _writing = match shows {
            true => None,
            false => Some(self.core.enter_gate(&shared, false)?),
        };
        let me =
            match self.core.st.account.clone() {
                None => None,
                Some((u, h)) => {
                    self.core.refresh_grants();
                    Some(
                        self.core.st.shared.accounts.get(&u, &h).unwrap_or_else(|| {
                            Arc::new(crate::accounts::Account::new(&u, &h, None))
                        }),
                    )
                }
            };
        let current = match &self.core.st.account {
            Some(id) => id.clone(),
            None => (self.core.st.user.clone(), self.core.st.host.clone()),
        };
        let shared = self.core.st.shared.clone();
        let runner = crate::account_sql::Runner {
            shared: &shared,
            me,
            current,
            client_host: &self.core.st.host,
            db: self.core.st.db.as_deref(),
        };
        let (res, notes) = runner.run(stmt)?;
        self.core.st.clear_warnings();
        self.core.st.warnings_fresh = true;
        self.core.st.row_count = if shows { -1 } else { 0 };
        Ok(match res {
            QueryResult::Ok { .. } if !notes.is_empty() => {
                let mut last = QueryResult::ok();
                for n in notes {
                    last = self.core.ok_with(n);
                }
                last
            }
            other => other,
        })
    }

    /// `KILL ...` after its keyword: raises the target connection's kill flag (see
    /// `crate::interrupt`); 1094 for an id no connection has.
    fn kill(&mut self, rest: &str) -> Result<QueryResult, SqlError> {
        let mut rest = rest.trim_start();
        // (`get`: the text may hold multi-byte characters where a keyword would end.)
        let mut word = |w: &str| {
            let hit = rest
                .get(..w.len())
                .is_some_and(|x| x.eq_ignore_ascii_case(w))
                && rest
                    .as_bytes()
                    .get(w.len())
                    .is_some_and(u8::is_ascii_whitespace);
            if hit {
                rest = rest[w.len()..].trim_start();
            }
            hit
        };
        let _ = word("HARD") || word("SOFT");
        let connection = if word("QUERY") {
            // `KILL QUERY ID n` names a query id, which tierdb does not have.
            if word("ID") {
                return Err(SqlError::unsupported("KILL QUERY ID"));
            }
            false
        } else {
            let _ = word("CONNECTION");
            true
        };
        let target = match self.query_inner(&plain_select(rest)?)? {
            QueryResult::Rows { rows, .. } => {
                rows.into_iter().next().and_then(|r| r.into_iter().next())
            }
            _ => None,
        };
        let id = target
            .as_ref()
            .and_then(crate::coerce::to_i64)
            .unwrap_or(-1);
        let own = i64::from(self.core.st.conn_id) == id;
        let shared = self.core.st.shared.clone();
        // Another user's connection needs SUPER or CONNECTION ADMIN (1095, as MariaDB).
        if let (Some(a), Ok(i)) = (self.core.refresh_grants(), u32::try_from(id)) {
            let others = shared.conn(i).is_some_and(|c| c.user != self.core.st.user);
            let may = a.global & (crate::accounts::SUPER | crate::accounts::CONNECTION_ADMIN) != 0;
            if others && !may {
                return Err(SqlError::new(
                    1095,
                    "HY000",
                    format!("You are not owner of thread {id}"),
                ));
            }
        }
        if !u32::try_from(id).is_ok_and(|i| shared.kill(i, connection)) {
            // The id as a number (NULL and text that is none are 0, as MariaDB shows them).
            let shown = target.as_ref().and_then(crate::coerce::to_i64).unwrap_or(0);
            return Err(SqlError::new(
                1094,
                "HY000",
                format!("Unknown thread id: {shown}"),
            ));
        }
        if own {
            // This very statement was killed (as MariaDB reports it).
            return Err(if connection {
                SqlError::new(1927, "70100", "Connection was killed")
            } else {
                crate::interrupt::interrupted()
            });
        }
        Ok(QueryResult::ok())
    }

    /// COM_QUERY: one statement (a trailing ';' is fine).
    pub fn query(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        self.core.prepared_text = None;
        let shared = self.core.st.shared.clone();
        shared.counters.inc(Counter::Questions);
        shared.counters.inc(Counter::Queries);
        self.core.st.warnings_fresh = false;
        self.as_statement(sql, |s| s.query_inner(sql))
    }

    /// Runs `f` as the connection's statement `sql`: shown busy in PROCESSLIST, KILL-able,
    /// and its error (also one before it ran: syntax, unknown table) noted for SHOW WARNINGS,
    /// ROW_COUNT() and the refusal counters.
    fn as_statement(
        &mut self,
        sql: &str,
        f: impl FnOnce(&mut Session) -> Result<QueryResult, SqlError>,
    ) -> Result<QueryResult, SqlError> {
        let shared = self.core.st.shared.clone();
        self.core.begin_busy(sql);
        let watch = self
            .core
            .conn
            .as_ref()
            .map(|c| crate::interrupt::watch(&c.kill, &c.waiting));
        let r = f(self);
        drop(watch);
        if let Err(e) = &r {
            self.core.st.row_count = -1;
            self.core.st.note_error(e);
            count_denied(&shared, e);
        }
        self.core.end_busy();
        r
    }

    fn query_inner(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        // PREPARE / EXECUTE / DEALLOCATE PREPARE: a cheap look at the first word first.
        let head: String = sql.trim_start().chars().take(10).collect();
        let first = |w: &str| {
            head.get(..w.len())
                .is_some_and(|h| h.eq_ignore_ascii_case(w))
        };
        if ["PREPARE", "EXECUTE", "DEALLOCATE", "DROP", "/*", "--", "#"]
            .iter()
            .any(|w| first(w))
        {
            if let Some(p) = crate::parse::sql_prepared(sql)? {
                return self.sql_prepared(p);
            }
        }
        // OPTIMIZE / CHECK / REPAIR TABLE, which sqlparser does not read, and ANALYZE TABLE
        // of several tables, which it reads only one at a time.
        if ["OPTIMIZE", "ANALYZE", "CHECK", "REPAIR", "/*", "--", "#"]
            .iter()
            .any(|w| first(w))
        {
            if let Some(m) = crate::parse::table_maintenance(sql)? {
                let cx = PlanCx::new(&self.core.st.shared.engine, self.core.st.db.as_deref(), &[])
                    .with_temps(&self.core.st.temps);
                let plan = plan::maintenance(&m, &cx)?;
                self.core.refresh_grants();
                self.core.authorize_plan(&plan)?;
                self.core.st.shared.counters.inc(counter_for(&plan));
                return self.core.run(&plan, &[]);
            }
        }
        // KILL [HARD | SOFT] [CONNECTION | QUERY] id (the id may be an expression, as in
        // MariaDB: `KILL QUERY @id`).
        if first("KILL") && head.as_bytes().get(4).is_some_and(u8::is_ascii_whitespace) {
            return self.kill(&sql.trim_start()[4..]);
        }
        // DO expr [, expr ...]: the expressions evaluated (errors and warnings kept), nothing
        // returned (ORMs and scripts use `DO 1`, `DO SLEEP(n)`, `DO RELEASE_LOCK(..)`).
        if first("DO") && head.as_bytes().get(2).is_some_and(u8::is_ascii_whitespace) {
            let rest = sql.trim_start()[2..].to_string();
            return match self.query_inner(&plain_select(&rest)?)? {
                QueryResult::Rows { .. } => {
                    let mut res = ok(0, 0, String::new());
                    recount_warnings(&mut res, self.core.st.warning_total());
                    Ok(res)
                }
                other => Ok(other),
            };
        }
        if ["LOAD", "/*", "--", "#"].iter().any(|w| first(w)) {
            if let Some(s) = crate::load::parse(sql)? {
                return self.load_statement(s, sql);
            }
        }
        if let Some(stmt) = crate::binlog_sql::parse(sql)? {
            return self.binlog_statement(stmt);
        }
        // `/*!*/` alone (mariadb-binlog's delimiter after a client command): nothing to run,
        // and not an empty query for MariaDB.
        if crate::binlog_sql::is_empty_versioned_comment(sql) {
            self.core.st.row_count = 0;
            return Ok(QueryResult::ok());
        }
        if crate::account_sql::may_be_account_statement(sql) {
            if let Some(stmt) = crate::account_sql::parse(sql)? {
                return self.account_statement(stmt);
            }
        }
        let Parsed {
            stmt,
            placeholders,
            item_texts,
            into_file,
        } = parse(sql)?;
        if !placeholders.is_empty() {
            return Err(SqlError::syntax(
                "'?' parameter markers are only allowed in prepared statements",
            ));
        }
        if self.core.refresh_grants().is_some() {
            let db = self.core.st.db.clone();
            self.core.authorize(&stmt, db.as_deref())?;
        }
        let plan_now = |core: &Core| {
            let cx = PlanCx::new(&core.st.shared.engine, core.st.db.as_deref(), &[])
                .with_temps(&core.st.temps)
                .with_item_texts(&item_texts)
                .with_rights(core.view_rights());
            let plan = plan::build(&stmt, &cx)?;
            match &into_file {
                Some(f) => plan::into_file(plan, f.clone()),
                None => Ok(plan),
            }
        };
        let plan = plan_now(&self.core)?;
        self.core.authorize_plan(&plan)?;
        self.core.st.shared.counters.inc(counter_for(&plan));
        let had_txn = self.core.txn.is_some();
        match self.core.run(&plan, &[]) {
            // See `execute`: a table changed shape under the plan; plan again once.
            Err(e) if e.code == 1412 && (!had_txn || self.core.txn.is_some()) => {
                drop(plan);
                let plan = plan_now(&self.core)?;
                self.core.run(&plan, &[])
            }
            r => r,
        }
    }

    /// `PREPARE name FROM ...`, `EXECUTE name [USING @a, ...]`, `DEALLOCATE PREPARE name`:
    /// the statements of the binary protocol, named and driven from SQL text.
    fn sql_prepared(&mut self, p: crate::parse::SqlPrepared) -> Result<QueryResult, SqlError> {
        use crate::parse::{PrepareFrom, SqlPrepared};
        let shared = self.core.st.shared.clone();
        let counters = &shared.counters;
        let unknown = |name: &str, what: &str| {
            SqlError::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({name}) given to {what}"),
            )
        };
        match p {
            SqlPrepared::Prepare { name, from } => {
                counters.inc(Counter::ComPrepareSql);
                let text = match from {
                    PrepareFrom::Text(s) => s,
                    PrepareFrom::UserVar(v) => match self.core.st.user_var(&v) {
                        Value::Null => {
                            return Err(SqlError::syntax(
                                "PREPARE ... FROM a variable that is NULL",
                            ))
                        }
                        Value::Bytes(b) => crate::rawtext::statement_text(&b).into_owned(),
                        other => other.to_string(),
                    },
                };
                // A statement of that name goes first, also when the new one fails (MySQL).
                if let Some(old) = self.named.remove(&name) {
                    self.stmts.remove(&old);
                }
                let info = self.prepare_inner(&text)?;
                self.named.insert(name, info.statement_id);
                self.core.st.row_count = 0;
                Ok(QueryResult::Ok {
                    affected_rows: 0,
                    last_insert_id: 0,
                    warnings: 0,
                    info: "Statement prepared".into(),
                })
            }
            SqlPrepared::Execute { name, using } => {
                counters.inc(Counter::ComExecuteSql);
                let id = *self
                    .named
                    .get(&name)
                    .ok_or_else(|| unknown(&name, "EXECUTE"))?;
                let params: Vec<Value> = using.iter().map(|v| self.core.st.user_var(v)).collect();
                if self
                    .stmts
                    .get(&id)
                    .is_some_and(|p| p.placeholders.len() != params.len())
                {
                    return Err(SqlError::new(
                        1210,
                        "HY000",
                        "Incorrect arguments to EXECUTE",
                    ));
                }
                self.execute_inner(id, &params)
            }
            SqlPrepared::Deallocate { name } => {
                counters.inc(Counter::ComDeallocSql);
                let id = self
                    .named
                    .remove(&name)
                    .ok_or_else(|| unknown(&name, "DEALLOCATE PREPARE"))?;
                self.stmts.remove(&id);
                self.core.st.row_count = 0;
                Ok(QueryResult::ok())
            }
        }
    }

    /// SHOW BINARY LOGS, SHOW MASTER STATUS, FLUSH BINARY LOGS, PURGE BINARY LOGS.
    fn binlog_statement(
        &mut self,
        stmt: crate::binlog_sql::BinlogStmt,
    ) -> Result<QueryResult, SqlError> {
        use crate::accounts as a;
        use crate::binlog_sql::{self as bs, BinlogStmt};
        let shared = self.core.st.shared.clone();
        let need = match &stmt {
            BinlogStmt::ShowLogs | BinlogStmt::ShowStatus | BinlogStmt::ShowEvents { .. } => {
                a::BINLOG_MONITOR
            }
            BinlogStmt::Apply(_) => a::BINLOG_REPLAY,
            BinlogStmt::Flush => a::RELOAD,
            BinlogStmt::PurgeTo(_) | BinlogStmt::PurgeBefore(_) => a::BINLOG_ADMIN,
        };
        if let Some(acc) = self.core.refresh_grants() {
            a::check(&acc, &self.core.st.host, &[a::Need::Global(need)])?;
        }
        self.core.st.row_count = 0;
        let b = shared.binlog().cloned();
        match stmt {
            BinlogStmt::Apply(source) => self.binlog_apply(source),
            BinlogStmt::ShowLogs => match b {
                Some(b) => bs::show_logs(&b),
                None => Err(bs::not_logging()),
            },
            BinlogStmt::ShowStatus => Ok(bs::show_status(b.as_deref())),
            BinlogStmt::ShowEvents {
                file,
                from,
                offset,
                limit,
            } => bs::show_events(b.as_deref(), file.as_deref(), from, offset, limit),
            BinlogStmt::Flush => {
                shared.counters.inc(Counter::ComFlush);
                if let Some(b) = b {
                    b.flush_logs(&shared.engine)?;
                }
                Ok(QueryResult::ok())
            }
            BinlogStmt::PurgeTo(name) => {
                let Some(b) = b else {
                    return Ok(QueryResult::ok());
                };
                match b.purge_to(&name)? {
                    Some(_) => Ok(QueryResult::ok()),
                    None => Err(SqlError::new(
                        1373,
                        "HY000",
                        "Target log not found in binlog index",
                    )),
                }
            }
            BinlogStmt::PurgeBefore(expr) => {
                // The moment, as the server's own SQL reads it (a literal or any expression).
                let at = match self.query_inner(&format!("SELECT UNIX_TIMESTAMP({expr})"))? {
                    QueryResult::Rows { rows, .. } => rows
                        .into_iter()
                        .next()
                        .and_then(|r| r.into_iter().next())
                        .unwrap_or(Value::Null),
                    _ => Value::Null,
                };
                let secs = match at {
                    Value::Int(i) => i as f64,
                    Value::Double(d) => d,
                    Value::Bytes(b) => String::from_utf8_lossy(&b).parse().unwrap_or(f64::NAN),
                    _ => f64::NAN,
                };
                if !secs.is_finite() || secs < 0.0 {
                    return Err(SqlError::new(
                        1210,
                        "HY000",
                        format!("Incorrect arguments to PURGE LOGS BEFORE: '{expr}' is not a time"),
                    ));
                }
                if let Some(b) = b {
                    b.purge_before(secs as u64)?;
                }
                Ok(QueryResult::ok())
            }
        }
    }

    /// BINLOG '...': decodes the events and applies their rows through ordinary INSERT /
    /// UPDATE / DELETE statements (so checks, foreign keys, privileges and this server's own
    /// binary log see them), as a replica applies a primary's rows. One statement's rows are
    /// one transaction unless a transaction is open.
    fn binlog_apply(
        &mut self,
        source: crate::binlog_sql::ApplySource,
    ) -> Result<QueryResult, SqlError> {
        use crate::binlog_sql::{self as bs, ApplySource};
        let text = match source {
            ApplySource::Literal(t) => t,
            ApplySource::Vars(vs) => vs
                .iter()
                .map(|v| match self.core.st.user_var(v) {
                    Value::Bytes(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
                    Value::Null => Err(SqlError::new(
                        1210,
                        "HY000",
                        format!("Incorrect arguments to BINLOG: @{v} is NULL"),
                    )),
                    other => Ok(other.to_string()),
                })
                .collect::<Result<String, SqlError>>()?,
        };
        let bytes = bs::base64_events(&text)?;
        let state = self.binlog_apply.get_or_insert_with(bs::ApplyState::new);
        let work = state.feed(&bytes, &self.core.st.shared.engine)?;
        if work.is_empty() {
            return Ok(QueryResult::ok());
        }
        let implicit = self.core.txn.is_none() && self.core.st.autocommit;
        if implicit {
            self.query_inner("BEGIN")?;
        }
        let saved: Vec<(&'static str, Option<Value>)> = ["foreign_key_checks", "time_zone"]
            .into_iter()
            .map(|n| (n, self.core.st.vars.get(n).cloned()))
            .collect();
        // TIMESTAMP values in row events are UTC.
        self.core
            .st
            .vars
            .insert("time_zone", Value::Bytes(b"+00:00".to_vec()));
        let mut prepared: HashMap<String, u32> = HashMap::new();
        let mut r = Ok(());
        for step in &work {
            self.core
                .st
                .vars
                .insert("foreign_key_checks", Value::Int(i64::from(step.fk_checks)));
            let id = match prepared.get(&step.sql) {
                Some(id) => *id,
                None => match self.prepare_inner(&step.sql) {
                    Ok(p) => {
                        prepared.insert(step.sql.clone(), p.statement_id);
                        p.statement_id
                    }
                    Err(e) => {
                        r = Err(e);
                        break;
                    }
                },
            };
            match self.execute_inner(id, &step.params) {
                Ok(QueryResult::Ok { affected_rows, .. })
                    if affected_rows == 0 && step.must_change =>
                {
                    r = Err(step.not_found());
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    r = Err(e);
                    break;
                }
            }
        }
        for id in prepared.into_values() {
            self.stmts.remove(&id);
        }
        for (n, v) in saved {
            match v {
                Some(v) => self.core.st.vars.insert(n, v),
                None => self.core.st.vars.remove(n),
            };
        }
        match (r, implicit) {
            (Ok(()), true) => {
                self.query_inner("COMMIT")?;
                Ok(QueryResult::ok())
            }
            (Ok(()), false) => Ok(QueryResult::ok()),
            (Err(e), true) => {
                let _ = self.query_inner("ROLLBACK");
                Err(e)
            }
            (Err(e), false) => Err(e),
        }
    }

    /// COM_REGISTER_SLAVE: the account must hold REPLICATION SLAVE.
    pub fn register_replica(&mut self, _server_id: u32) -> Result<(), SqlError> {
        if let Some(acc) = self.core.refresh_grants() {
            crate::accounts::check(
                &acc,
                &self.core.st.host,
                &[crate::accounts::Need::Global(
                    crate::accounts::REPLICATION_SLAVE,
                )],
            )?;
        }
        Ok(())
    }

    /// COM_BINLOG_DUMP: the stream of the binary log for a replica, from `file` / `pos` or
    /// from the GTID position the replica set in `@slave_connect_state`; heartbeats every
    /// `@master_heartbeat_period` nanoseconds. Errors are 1236, as MariaDB's.
    pub fn binlog_dump(
        &mut self,
        file: &str,
        pos: u64,
        flags: u16,
    ) -> Result<tierdb_binlog::dump::Dump, SqlError> {
        self.register_replica(0)?;
        let shared = self.core.st.shared.clone();
        let Some(b) = shared.binlog() else {
            return Err(SqlError::new(1236, "HY000", "Binary log is not open"));
        };
        let var = |n: &str| self.core.st.user_var(n);
        let text = |v: Value| match v {
            Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
            _ => None,
        };
        let heartbeat = match var("master_heartbeat_period") {
            Value::Int(ns) if ns > 0 => Some(std::time::Duration::from_nanos(ns as u64)),
            Value::UInt(ns) => Some(std::time::Duration::from_nanos(ns)),
            Value::Double(ns) if ns > 0.0 => Some(std::time::Duration::from_nanos(ns as u64)),
            Value::Bytes(b) => String::from_utf8_lossy(&b)
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|ns| *ns > 0)
                .map(std::time::Duration::from_nanos),
            _ => None,
        };
        let req = tierdb_binlog::dump::DumpRequest {
            file: file.to_string(),
            pos,
            nonblock: flags & 1 != 0,
            gtid_state: text(var("slave_connect_state")),
            heartbeat,
            checksums: text(var("master_binlog_checksum"))
                .is_some_and(|c| c.eq_ignore_ascii_case("CRC32")),
        };
        tierdb_binlog::dump::Dump::start(b.clone(), &req)
            .map_err(|e| SqlError::new(1236, "HY000", e.0))
    }

    /// LOAD DATA: a server-side file is read now; for LOCAL the plan waits for the client's
    /// file (`load_local`), which the protocol asks for on seeing `QueryResult::LocalInfile`.
    fn load_statement(
        &mut self,
        s: crate::load::LoadStmt,
        sql: &str,
    ) -> Result<QueryResult, SqlError> {
        let plan = {
            let core = &self.core;
            let cx = PlanCx::new(&core.st.shared.engine, core.st.db.as_deref(), &[])
                .with_temps(&core.st.temps);
            Plan::Load(Box::new(crate::load::plan(&s, &cx)?))
        };
        self.core.refresh_grants();
        self.core.authorize_plan(&plan)?;
        self.core.st.shared.counters.inc(Counter::ComLoad);
        if s.local {
            if self.core.st.sysvar("local_infile", Some(true))? != Value::Int(1) {
                return Err(local_refused());
            }
            self.pending_load = Some((plan, sql.to_string()));
            return Ok(QueryResult::LocalInfile { file: s.file });
        }
        let mut file = self.core.open_server_file(&s.file)?;
        self.core.run_with(&plan, &[], Some(&mut file))
    }

    /// The client's answer to `QueryResult::LocalInfile`: `data` streams its file (None: the
    /// client does not allow LOCAL, error 4166). The result is the LOAD statement's.
    pub fn load_local(
        &mut self,
        data: Option<&mut dyn std::io::Read>,
    ) -> Result<QueryResult, SqlError> {
        let Some((plan, sql)) = self.pending_load.take() else {
            return Err(SqlError::new(
                1105,
                "HY000",
                "internal: no LOAD DATA LOCAL waits for a file",
            ));
        };
        self.as_statement(&sql, |s| match data {
            Some(d) => s.core.run_with(&plan, &[], Some(d)),
            None => Err(local_refused()),
        })
    }

    /// COM_STMT_PREPARE.
    pub fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        self.core.st.shared.counters.inc(Counter::ComStmtPrepare);
        self.core.st.warnings_fresh = false;
        let r = self.prepare_inner(sql);
        if let Err(e) = &r {
            self.core.st.note_error(e);
        }
        r
    }

    fn prepare_inner(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        let shared = self.core.st.shared.clone();
        if (crate::account_sql::may_be_account_statement(sql)
            && crate::account_sql::parse(sql)?.is_some())
            || (crate::load::may_be_load(sql) && crate::load::parse(sql)?.is_some())
        {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let Parsed {
            stmt,
            placeholders,
            item_texts,
            into_file,
        } = parse(sql)?;
        if into_file.is_some() {
            return Err(SqlError::new(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        if self.core.refresh_grants().is_some() {
            let db = self.core.st.db.clone();
            self.core.authorize(&stmt, db.as_deref())?;
        }
        let version = shared.catalog_version();
        let grants_version = shared.accounts.version();
        let plan = {
            let cx = PlanCx::new(&shared.engine, self.core.st.db.as_deref(), &placeholders)
                .with_temps(&self.core.st.temps)
                .with_item_texts(&item_texts)
                .with_rights(self.core.view_rights());
            plan::build(&stmt, &cx)?
        };
        if placeholders.len() > usize::from(u16::MAX) {
            return Err(SqlError::new(
                1390,
                "HY000",
                "Prepared statement contains too many placeholders",
            ));
        }
        let ddl_text = matches!(&plan, Plan::Utility(u) if u.is_ddl()).then(|| sql.to_string());
        let id = self.next_stmt_id;
        self.next_stmt_id = self.next_stmt_id.wrapping_add(1).max(1);
        let info = PreparedInfo {
            statement_id: id,
            param_count: placeholders.len() as u16,
            columns: plan.columns(),
        };
        self.stmts.insert(
            id,
            Prepared {
                stmt,
                placeholders,
                item_texts,
                plan: Some(plan),
                version,
                grants_version,
                needs: None,
                db: self.core.st.db.clone(),
                ddl_text,
                text: sql.to_string(),
            },
        );
        Ok(info)
    }

    /// COM_STMT_EXECUTE with decoded parameter values.
    pub fn execute(&mut self, stmt_id: u32, params: &[Value]) -> Result<QueryResult, SqlError> {
        self.core.prepared_text = None;
        let shared = self.core.st.shared.clone();
        shared.counters.inc(Counter::Questions);
        shared.counters.inc(Counter::ComStmtExecute);
        self.core.st.warnings_fresh = false;
        let watch = self
            .core
            .conn
            .as_ref()
            .map(|c| crate::interrupt::watch(&c.kill, &c.waiting));
        let r = self.execute_inner(stmt_id, params);
        drop(watch);
        if let Err(e) = &r {
            self.core.st.row_count = -1;
            self.core.st.note_error(e);
            count_denied(&shared, e);
        }
        r
    }

    fn execute_inner(&mut self, stmt_id: u32, params: &[Value]) -> Result<QueryResult, SqlError> {
        let shared = self.core.st.shared.clone();
        let Some(p) = self.stmts.get_mut(&stmt_id) else {
            return Err(SqlError::new(
                1243,
                "HY000",
                format!(
                    "Unknown prepared statement handler ({stmt_id}) given to mysqld_stmt_execute"
                ),
            ));
        };
        if params.len() != p.placeholders.len() {
            return Err(SqlError::new(
                1210,
                "HY000",
                "Incorrect arguments to mysqld_stmt_execute",
            ));
        }
        if let Some(c) = self.core.conn.as_ref() {
            set_info(c, &p.text);
            c.busy.store(true, Ordering::Relaxed);
            c.since_ms.store(shared.now_ms(), Ordering::Relaxed);
        }
        // A DDL statement run from here goes to the binary log as prepared (not `EXECUTE s`).
        self.core.prepared_text = match &p.ddl_text {
            Some(t) if shared.binlog().is_some() => Some(t.clone()),
            _ => None,
        };
        if let Some(a) = self.core.refresh_grants() {
            let version = shared.catalog_version();
            let cacheable = self.core.st.temps.is_empty();
            let cached = p
                .needs
                .as_ref()
                .filter(|(v, _)| cacheable && *v == version)
                .map(|(_, n)| n);
            let fresh;
            let needs = match cached {
                Some(n) => n,
                None => {
                    let names = crate::authorize::Names {
                        engine: &shared.engine,
                        db: p.db.as_deref(),
                        temps: &self.core.st.temps,
                    };
                    fresh = crate::authorize::statement_needs(&p.stmt, &names);
                    &fresh
                }
            };
            if let Err(e) = crate::accounts::check(&a, &self.core.st.host, needs) {
                self.core.end_busy();
                return Err(e);
            }
            if cached.is_none() && cacheable {
                p.needs = Some((version, needs.clone()));
            }
        }
        let mut replanned = false;
        let r = loop {
            let version = shared.catalog_version();
            let grants_version = shared.accounts.version();
            let rights_moved = self.core.st.account.is_some() && grants_version != p.grants_version;
            if version != p.version || p.plan.is_none() || rights_moved {
                // The old plan goes first: its table handles keep a dropped table's pages
                // from being freed, also when the table is gone and re-planning fails.
                p.plan = None;
                let cx = PlanCx::new(&shared.engine, p.db.as_deref(), &p.placeholders)
                    .with_temps(&self.core.st.temps)
                    .with_item_texts(&p.item_texts)
                    .with_rights(self.core.view_rights());
                match plan::build(&p.stmt, &cx) {
                    Ok(plan) => p.plan = Some(plan),
                    Err(e) => break Err(e),
                }
                p.grants_version = grants_version;
                p.version = version;
            }
            let Some(plan) = p.plan.as_ref() else {
                break Err(SqlError::new(
                    1105,
                    "HY000",
                    "prepared statement without a plan",
                ));
            };
            if let Err(e) = self.core.authorize_plan(plan) {
                break Err(e);
            }
            if !replanned {
                shared.counters.inc(counter_for(plan));
            }
            let had_txn = self.core.txn.is_some();
            match self.core.run(plan, params) {
                // A table changed shape between planning and running (ALTER TABLE): the
                // statement's changes were undone; plan it again and run it once more, as
                // MySQL re-prepares — unless that ended the transaction it ran in (a rerun
                // would hide the loss of its earlier statements).
                Err(e) if e.code == 1412 && !replanned && (!had_txn || self.core.txn.is_some()) => {
                    replanned = true;
                    p.plan = None;
                }
                r => break r,
            }
        };
        self.core.end_busy();
        r
    }

    pub fn close_statement(&mut self, stmt_id: u32) {
        self.core.st.shared.counters.inc(Counter::ComStmtClose);
        self.stmts.remove(&stmt_id);
    }

    pub fn reset_statement(&mut self, stmt_id: u32) {
        self.core.st.shared.counters.inc(Counter::ComStmtReset);
        let _ = stmt_id;
    }

    /// COM_INIT_DB / USE.
    pub fn init_db(&mut self, db: &str) -> Result<(), SqlError> {
        let r = self.core.init_db(db);
        if let Err(e) = &r {
            count_denied(&self.core.st.shared, e);
        }
        r
    }

    /// COM_FIELD_LIST.
    pub fn field_list(&mut self, table: &str) -> Result<Vec<Column>, SqlError> {
        let db = self.core.st.db.clone().ok_or_else(no_db)?;
        if let Some(a) = self.core.refresh_grants() {
            if self.core.st.temps.key(&db, table).is_none() {
                crate::accounts::check(
                    &a,
                    &self.core.st.host,
                    &[crate::accounts::Need::AnyOnTable {
                        db: db.clone(),
                        name: table.to_string(),
                    }],
                )?;
            }
        }
        let name = self.core.st.temps.key(&db, table).unwrap_or(table);
        let t = self.core.st.shared.engine.table(&db, name)?;
        Ok(show::field_list(&t))
    }

    pub fn current_db(&self) -> Option<&str> {
        self.core.st.db.as_deref()
    }

    pub fn in_transaction(&self) -> bool {
        self.core.txn.is_some()
    }

    /// The session's `autocommit` (its OK packets say so: drivers such as PyMySQL send
    /// `SET autocommit = 1` only when the last packet says it is off).
    pub fn autocommit(&self) -> bool {
        self.core.st.autocommit
    }

    /// The warnings (notes and errors too) the last statement raised, for the count its
    /// result set ends with: 0 when it kept an earlier statement's list (SHOW WARNINGS, a
    /// statement using no table that raised none).
    pub fn warning_count(&self) -> u16 {
        if !self.core.st.warnings_fresh {
            return 0;
        }
        self.core.st.warning_total().min(usize::from(u16::MAX)) as u16
    }

    /// Connection closed: roll back an open transaction and unregister.
    pub fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(t) = self.core.take_txn() {
            let _ = t.rollback();
        }
        self.core.release_table_locks();
        self.core
            .st
            .shared
            .user_locks
            .release_all(self.core.st.conn_id);
        self.core.st.shared.read_lock.release(self.core.st.conn_id);
        self.stmts.clear();
        self.core.drop_temporary_tables();
        self.core
            .st
            .shared
            .unregister_connection(self.core.st.conn_id);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end();
    }
}

/// Errors after which MySQL rolls back the whole transaction, not just the statement.
/// Access_denied_errors: a statement refused for lack of a privilege.
fn count_denied(shared: &Shared, e: &SqlError) {
    if matches!(e.code, 1044 | 1045 | 1095 | 1142 | 1227 | 1356) {
        shared.counters.inc(Counter::AccessDenied);
    }
}

/// `res` with only the rows `keep` takes.
fn keep_rows(res: QueryResult, keep: impl Fn(&[Value]) -> bool) -> QueryResult {
    match res {
        QueryResult::Rows { columns, mut rows } => {
            rows.retain(|r| keep(r));
            QueryResult::Rows { columns, rows }
        }
        other => other,
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// SHOW PROCESSLIST's Info of connection `c`: the statement's text, at most 64 KiB of it
/// (its buffer is reused from statement to statement).
fn set_info(c: &ConnInfo, sql: &str) {
    let mut end = sql.len().min(64 << 10);
    while !sql.is_char_boundary(end) {
        end -= 1;
    }
    let mut info = c.info.lock();
    info.clear();
    info.push_str(&sql[..end]);
}

/// A deadlock (1213), and a transaction past `transaction_memory_limit` (1206, as InnoDB
/// rolls back on a full lock table).
fn is_txn_abort(e: &SqlError) -> bool {
    e.code == 1213 || e.code == 1206
}

impl Core {
    fn begin_busy(&mut self, sql: &str) {
        if let Some(c) = &self.conn {
            set_info(c, sql);
            c.busy.store(true, Ordering::Relaxed);
            c.since_ms.store(self.st.shared.now_ms(), Ordering::Relaxed);
        }
        self.current_sql.clear();
        self.current_sql.push_str(sql);
    }

    fn end_busy(&mut self) {
        if let Some(c) = &self.conn {
            c.busy.store(false, Ordering::Relaxed);
            c.since_ms.store(self.st.shared.now_ms(), Ordering::Relaxed);
        }
    }

    /// The session's privileges, re-read when accounts changed; None when no check can fail
    /// (a trusted session, or an account holding every global privilege).
    fn refresh_grants(&mut self) -> Option<Arc<crate::accounts::Account>> {
        let (u, h) = self.st.account.as_ref()?;
        let accounts = &self.st.shared.accounts;
        let version = accounts.version();
        if version != self.st.grants_version {
            // A dropped account keeps its sessions, with no privilege left (as MariaDB).
            let a = accounts
                .get(u, h)
                .unwrap_or_else(|| Arc::new(crate::accounts::Account::new(u, h, None)));
            self.st.grants = (!a.is_superuser()).then_some(a);
            self.st.grants_version = version;
        }
        self.st.grants.clone()
    }

    /// Whose rights views are checked against while planning (None: an embedded session).
    fn view_rights(&self) -> Option<crate::plan::ViewRights<'_>> {
        self.st.account.as_ref()?;
        Some(crate::plan::ViewRights {
            accounts: &self.st.shared.accounts,
            invoker: self.st.grants.clone(),
            client_host: &self.st.host,
        })
    }

    /// Checks what `stmt` needs as written (before planning), names resolving in `db`.
    fn authorize(&mut self, stmt: &Statement, db: Option<&str>) -> Result<(), SqlError> {
        let Some(a) = self.refresh_grants() else {
            return Ok(());
        };
        let names = crate::authorize::Names {
            engine: &self.st.shared.engine,
            db,
            temps: &self.st.temps,
        };
        crate::accounts::check(
            &a,
            &self.st.host,
            &crate::authorize::statement_needs(stmt, &names),
        )
    }

    /// Checks what a planned statement needs beyond `authorize` (utility statements).
    fn authorize_plan(&self, plan: &Plan) -> Result<(), SqlError> {
        match &self.st.grants {
            Some(a) => crate::accounts::check(
                a,
                &self.st.host,
                &crate::authorize::plan_needs(plan, &self.st.shared.engine),
            ),
            None => Ok(()),
        }
    }

    fn init_db(&mut self, db: &str) -> Result<(), SqlError> {
        // COM_INIT_DB changes no row: ROW_COUNT() after it is 0 (as MariaDB).
        self.st.row_count = 0;
        if let Some(a) = self.refresh_grants() {
            if !crate::infoschema::is_schema(db) {
                crate::accounts::check(
                    &a,
                    &self.st.host,
                    &[crate::accounts::Need::AnyInDb(db.to_string())],
                )?;
            }
        }
        let db = if crate::infoschema::is_schema(db) {
            crate::infoschema::SCHEMA
        } else {
            db
        };
        if db != crate::infoschema::SCHEMA && !self.st.shared.engine.database_exists(db) {
            return Err(SqlError::new(
                1049,
                "42000",
                format!("Unknown database '{db}'"),
            ));
        }
        self.st.db = Some(db.to_string());
        if let Some(c) = &self.conn {
            *c.db.lock() = Some(db.to_string());
        }
        Ok(())
    }

    /// Index of savepoint `name` (case-insensitive, as MySQL) or error 1305.
    fn savepoint_position(&self, name: &str) -> Result<usize, SqlError> {
        self.savepoints
            .iter()
            .rposition(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| no_savepoint(name))
    }

    /// Ends the session's hold on its transaction (the caller commits or rolls it back);
    /// its savepoints go with it.
    fn take_txn(&mut self) -> Option<Txn> {
        self.savepoints.clear();
        self.txn_repeatable = None;
        self.st.binlog_snapshot = None;
        let t = self.txn.take();
        if t.is_some() {
            self.st.next_isolation = None;
        }
        t
    }

    fn commit_open(&mut self) -> Result<(), SqlError> {
        // A commit of changes waits while FLUSH TABLES WITH READ LOCK is held (unless the
        // statement committing is inside the gate already).
        // (The Arc is cloned only when needed: every session touching its count on every
        // statement makes that cache line bounce between cores.)
        let shared: Arc<Shared>;
        let _writing =
            match !self.in_write_gate && self.txn.as_ref().is_some_and(|t| t.writes_tables()) {
                true => {
                    shared = self.st.shared.clone();
                    Some(self.enter_gate(&shared, true)?)
                }
                false => None,
            };
        if let Some(t) = self.take_txn() {
            self.st.shared.counters.inc(Counter::HandlerCommit);
            t.commit()?;
        }
        Ok(())
    }

    /// This session as the owner of table locks (never 0).
    fn owner(&self) -> u64 {
        u64::from(self.st.conn_id) + 1
    }

    fn release_table_locks(&mut self) {
        let owner = self.owner();
        for l in self.table_locks.drain(..) {
            self.st.shared.engine.unlock_table(&l.table, owner);
        }
    }

    /// Under `LOCK TABLES` a statement may use only the locked tables, and write only the
    /// WRITE-locked ones (MySQL errors 1100 and 1099).
    /// Does `plan` change anything the global read lock protects: rows of a table that is not
    /// TEMPORARY, or the catalog (DDL)? (Commits of transactions that wrote pass the gate in
    /// `commit_open`.)
    fn writes(&self, plan: &Plan) -> bool {
        match plan {
            // TEMPORARY tables are the session's own: created and dropped freely.
            Plan::Utility(u) => match &**u {
                Utility::CreateTable { temporary, .. }
                | Utility::CreateTableAs { temporary, .. }
                | Utility::DropTable { temporary, .. }
                    if *temporary =>
                {
                    false
                }
                u if u.is_ddl() => {
                    let engine = &self.st.shared.engine;
                    let targets = u.ddl_targets();
                    targets.is_empty()
                        || !targets.iter().all(|(d, t)| engine.is_temporary_table(d, t))
                }
                _ => false,
            },
            Plan::Explain(_) => false,
            p if p.is_plain_read() => false,
            p => p.tables().iter().any(|(t, w)| *w && !t.is_temporary()),
        }
    }

    /// The server-side file a LOAD DATA INFILE reads (see `server_path`).
    fn open_server_file(&self, name: &str) -> Result<std::fs::File, SqlError> {
        let path = server_path(self.st.shared.info(), name)?;
        let meta = std::fs::metadata(&path).map_err(|e| {
            SqlError::new(
                13,
                "HY000",
                format!(
                    "Can't get stat of '{}' (Errcode: {} \"{}\")",
                    path.display(),
                    errno(&e),
                    os_text(&e)
                ),
            )
        })?;
        if meta.is_dir() {
            return Err(SqlError::new(
                29,
                "HY000",
                format!(
                    "File '{}' not found (Errcode: 21 \"Is a directory\")",
                    path.display()
                ),
            ));
        }
        std::fs::File::open(&path).map_err(|e| {
            SqlError::new(
                29,
                "HY000",
                format!(
                    "File '{}' not found (Errcode: {} \"{}\")",
                    path.display(),
                    errno(&e),
                    os_text(&e)
                ),
            )
        })
    }

    /// `SELECT ... INTO OUTFILE | DUMPFILE`: a new file on the server (1086 if one is there)
    /// holding the query's rows; the result counts them.
    fn select_into_file(
        &mut self,
        select: &crate::plan::SelectPlan,
        into: &crate::load::IntoFile,
        params: &[Value],
    ) -> Result<QueryResult, SqlError> {
        let path = server_path(self.st.shared.info(), &into.file)?;
        let cant = |e: &std::io::Error| {
            SqlError::new(
                1,
                "HY000",
                format!(
                    "Can't create/write to file '{}' (Errcode: {} \"{}\")",
                    path.display(),
                    errno(e),
                    os_text(e)
                ),
            )
        };
        // Made first (as MariaDB does), so that a file already there fails before the query.
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => SqlError::new(
                    1086,
                    "HY000",
                    format!("File '{}' already exists", into.file),
                ),
                _ => cant(&e),
            })?;
        // The rows go to the file as the query yields them (a sorted or grouped query
        // gathers its rows first, as for any client).
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        let plan = Plan::Select(Box::new(select.clone()));
        let mut n = 0u64;
        let mut too_many = false;
        let r = self.in_statement(&plan, params, |txn, cx| {
            with_subqueries(&plan, txn, cx, |txn, cx| {
                exec::select_into(select, txn, cx, &mut |row| {
                    n += 1;
                    // DUMPFILE takes one row; past it MariaDB still writes the second row
                    // before its error 1172, and so does this (the same file either way).
                    if into.dump && n > 2 {
                        too_many = true;
                        return Ok(false);
                    }
                    crate::load::write_rows(&mut out, into, &select.columns, &[row])
                        .map_err(|e| cant(&e))?;
                    Ok(true)
                })
            })?;
            Ok((QueryResult::ok(), None, Raised::default(), None))
        });
        let flushed = std::io::Write::flush(&mut out).map_err(|e| cant(&e));
        drop(out);
        if let Err(e) = r.and(flushed) {
            // No half-written file is left behind (the statement can be run again).
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        if too_many {
            return Err(SqlError::new(
                1172,
                "42000",
                "Result consisted of more than one row",
            ));
        }
        if into.after_from {
            self.st.warnings.push(Warning::warn(1287, DEPRECATED_INTO));
        }
        let mut res = ok(n, 0, String::new());
        recount_warnings(&mut res, self.st.warning_total());
        Ok(res)
    }

    /// The session's `lock_wait_timeout` (MariaDB's metadata-lock wait, 1 year at most).
    fn lock_wait(&self) -> std::time::Duration {
        let secs = match self.st.sysvar("lock_wait_timeout", None) {
            Ok(Value::Int(s)) => s.clamp(0, 31_536_000) as u64,
            _ => 86_400,
        };
        std::time::Duration::from_secs(secs)
    }

    /// Shows `w` as this connection's state (when `cond`) until the guard is dropped.
    fn waiting_if(&self, cond: bool, w: Waiting) -> Option<crate::shared::WaitingGuard> {
        match (&self.conn, cond) {
            (Some(c), true) => Some(c.wait_for(w)),
            _ => None,
        }
    }

    /// Enters one of the global read lock's gates (waits while it is held): the statement
    /// gate for a write statement's run, or (`commit`) the commit gate for a commit of changes.
    fn enter_gate<'a>(
        &self,
        shared: &'a Shared,
        commit: bool,
    ) -> Result<crate::read_lock::WriteGuard<'a>, SqlError> {
        let shown = match commit {
            false => Waiting::GlobalReadLock,
            true => Waiting::CommitLock,
        };
        let _state = self.waiting_if(shared.read_lock.is_closed(), shown);
        let killed = || crate::interrupt::check().is_err();
        let (id, wait) = (self.st.conn_id, || self.lock_wait());
        match commit {
            false => shared.read_lock.enter_write(id, &wait, &killed),
            true => shared.read_lock.enter_commit(id, &wait, &killed),
        }
    }

    fn check_table_locks(&self, plan: &Plan) -> Result<(), SqlError> {
        if self.table_locks.is_empty() {
            return Ok(());
        }
        // TEMPORARY tables need no lock (as MySQL).
        for (t, writes) in plan.tables().into_iter().filter(|(t, _)| !t.is_temporary()) {
            let Some(l) = self
                .table_locks
                .iter()
                .find(|l| l.db == t.db && l.name == t.def.name)
            else {
                return Err(SqlError::new(
                    1100,
                    "HY000",
                    format!("Table '{}' was not locked with LOCK TABLES", t.def.name),
                ));
            };
            if writes && l.mode == TableLockMode::Read {
                return Err(SqlError::new(
                    1099,
                    "HY000",
                    format!(
                        "Table '{}' was locked with a READ lock and can't be updated",
                        t.def.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn run(&mut self, plan: &Plan, params: &[Value]) -> Result<QueryResult, SqlError> {
        self.run_with(plan, params, None)
    }

    /// Runs a statement; `src` is the file a LOAD DATA reads.
    fn run_with(
        &mut self,
        plan: &Plan,
        params: &[Value],
        src: Option<&mut dyn std::io::Read>,
    ) -> Result<QueryResult, SqlError> {
        // As in MySQL, a statement that uses a table starts a new warning list (so SHOW
        // WARNINGS and `SELECT @@warning_count` still see the previous statement's).
        let keeps_warnings = match plan {
            Plan::Utility(u) => matches!(
                **u,
                Utility::ShowWarnings { .. }
                    | Utility::ShowErrors { .. }
                    | Utility::ShowWarningCount { .. }
            ),
            other => uses_no_table(other),
        };
        if !keeps_warnings {
            self.st.clear_warnings();
            self.st.warnings_fresh = true;
        }
        self.st.calc_found_rows = None;
        // Warnings of expressions (a division by zero) start with the statement; planning
        // (which evaluates nothing) may have left some of an earlier one.
        crate::expr::take_warnings();
        // FLUSH TABLES WITH READ LOCK keeps writes out (they wait for it).
        let shared: Arc<Shared>;
        let writing = match !self.in_write_gate && self.writes(plan) {
            true => {
                shared = self.st.shared.clone();
                Some(self.enter_gate(&shared, false)?)
            }
            false => None,
        };
        let was_inside = self.in_write_gate;
        self.in_write_gate |= writing.is_some();
        let r = self.check_table_locks(plan).and_then(|()| match plan {
            Plan::Utility(u) => self.utility(u, params),
            Plan::Explain(inner) => Ok(show::explain(inner)),
            Plan::Load(p) => self.load(plan, p, src),
            _ => self.dml(plan, params),
        });
        self.in_write_gate = was_inside;
        drop(writing);
        let raised = crate::expr::statement_warnings(&self.st);
        let mut r = r;
        if !raised.is_empty() {
            if keeps_warnings {
                // A statement using no table starts a new list when it raises warnings.
                self.st.clear_warnings();
                self.st.warnings_fresh = true;
            }
            for (code, msg) in raised {
                if self.st.warnings.len() < crate::expr::MAX_WARNINGS {
                    self.st
                        .warnings
                        .push(if msg == crate::expr::CAST_NEGATIVE_NOTE {
                            Warning::note(code, msg)
                        } else {
                            Warning::warn(code, msg)
                        });
                } else {
                    self.st.unlisted_warnings += 1;
                }
            }
            if let Ok(res) = &mut r {
                recount_warnings(res, self.st.warning_total());
            }
        }
        // What ROW_COUNT() and FOUND_ROWS() of the next statement see, as MariaDB: the rows
        // a write changed (0 for other statements), -1 after a result set (SELECT, SHOW) or
        // an error; the rows the last result set had.
        self.st.row_count = match &r {
            Ok(QueryResult::Ok { affected_rows, .. }) => *affected_rows as i64,
            Ok(QueryResult::Rows { rows, .. }) => {
                self.st.found_rows = self.st.calc_found_rows.take().unwrap_or(rows.len() as u64);
                -1
            }
            Ok(QueryResult::LocalInfile { .. }) | Err(_) => -1,
        };
        self.drop_finished_temporary_tables();
        r
    }

    /// The TEMPORARY tables dropped under a transaction that has ended since, dropped in
    /// the engine.
    fn drop_finished_temporary_tables(&mut self) {
        if self.dropped_temps.is_empty() || self.txn.is_some() {
            return;
        }
        let dropped = std::mem::take(&mut self.dropped_temps);
        self.drop_in_engine(dropped);
    }

    fn dml(&mut self, plan: &Plan, params: &[Value]) -> Result<QueryResult, SqlError> {
        self.in_statement(plan, params, |txn, cx| run_dml(plan, txn, cx))
    }

    /// LOAD DATA: the rows of `src` into the table, as one statement (all or none).
    fn load(
        &mut self,
        plan: &Plan,
        p: &crate::load::LoadPlan,
        src: Option<&mut dyn std::io::Read>,
    ) -> Result<QueryResult, SqlError> {
        let Some(src) = src else {
            return Err(SqlError::new(
                1105,
                "HY000",
                "internal: LOAD DATA without its file",
            ));
        };
        let mut vars = Vec::new();
        let r = self.in_statement(plan, &[], |txn, cx| {
            let l = crate::load::run(p, src, txn, cx)?;
            vars = l.vars;
            let info = format!(
                "Records: {}  Deleted: {}  Skipped: {}  Warnings: 0",
                l.records, l.deleted, l.skipped
            );
            let mut res = ok(l.affected, l.first_auto_id.unwrap_or(0).max(0) as u64, info);
            recount_warnings(&mut res, l.warnings.count());
            Ok((res, l.first_auto_id, l.warnings, None))
        });
        // The field list's @variables keep the last row's values, as in MariaDB.
        for (name, v) in vars {
            self.st.user_vars.insert(name, v);
        }
        r
    }

    /// Runs `f` as one statement: in the open transaction (rolled back to before it on an
    /// error), or in a transaction of its own under autocommit.
    fn in_statement(
        &mut self,
        plan: &Plan,
        params: &[Value],
        f: impl FnOnce(&mut Txn, &EvalCx) -> Result<DmlOutcome, SqlError>,
    ) -> Result<QueryResult, SqlError> {
        let shared = self.st.shared.clone();
        let keep_open = self.txn.is_some() || !self.st.autocommit;
        let repeatable = if keep_open {
            *self
                .txn_repeatable
                .get_or_insert_with(|| self.st.repeatable_read())
        } else {
            self.st.repeatable_read()
        };
        let consistent = reads_consistently(plan) && repeatable;
        if !keep_open {
            let mut txn = shared.engine.begin_as(self.owner());
            if consistent {
                txn.consistent_reads();
            }
            // This statement is the next transaction `SET TRANSACTION` was for (one that
            // reads no table starts none).
            if !uses_no_table(plan) {
                self.st.next_isolation = None;
            }
            self.binlog_settings(&mut txn);
            let cx = EvalCx::new(params, &self.st);
            let r = f(&mut txn, &cx);
            return match r {
                Ok((res, auto, warnings, found)) => {
                    txn.commit()?;
                    self.st.calc_found_rows = found;
                    if let Some(id) = auto {
                        self.st.last_insert_id = id as u64;
                    }
                    if !uses_no_table(plan) {
                        self.st.set_warnings(warnings);
                    }
                    Ok(res)
                }
                Err(e) => {
                    let _ = txn.rollback();
                    count_abort(&shared, &e);
                    Err(e)
                }
            };
        }
        let owner = self.owner();
        let txn = self
            .txn
            .get_or_insert_with(|| shared.engine.begin_as(owner));
        // Plain SELECTs read through the transaction's view under REPEATABLE READ; writes and
        // locking reads read the newest committed versions (InnoDB's current reads).
        if consistent {
            txn.consistent_reads();
        } else {
            txn.current_reads();
        }
        if self.st.shared.binlog().is_some() {
            txn.set_binlog(self.st.log_bin_on());
            txn.set_binlog_fk_checks(self.st.fk_checks());
        }
        let cx = EvalCx::new(params, &self.st);
        let sp = txn.savepoint();
        let r = f(txn, &cx);
        match r {
            Ok((res, auto, warnings, found)) => {
                self.st.calc_found_rows = found;
                if let Some(id) = auto {
                    self.st.last_insert_id = id as u64;
                }
                if !uses_no_table(plan) {
                    self.st.set_warnings(warnings);
                }
                Ok(res)
            }
            Err(e) => {
                count_abort(&shared, &e);
                let whole = is_txn_abort(&e) || txn.rollback_to_savepoint(sp).is_err();
                if whole {
                    // See the module doc: the transaction ends here.
                    if let Some(t) = self.take_txn() {
                        let _ = t.rollback();
                    }
                }
                Err(e)
            }
        }
    }

    /// Every table name a DDL statement may create, change or drop (for the binary log's order).
    fn ddl_tables(u: &Utility) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = u
            .ddl_targets()
            .into_iter()
            .map(|(d, t)| (d.to_string(), t.to_string()))
            .collect();
        match u {
            Utility::Noted { then, .. } => return Self::ddl_tables(then),
            Utility::CreateTable { db, def, .. } | Utility::CreateTableAs { db, def, .. } => {
                out.push((db.clone(), def.name.clone()))
            }
            Utility::RenameTables { pairs, .. } => {
                out.extend(pairs.iter().map(|(_, _, d, t)| (d.clone(), t.clone())))
            }
            _ => {}
        }
        out
    }

    /// Tells `txn` whether this session's changes go to the binary log (`sql_log_bin`) and
    /// with which `foreign_key_checks` (nothing to do without a binary log).
    fn binlog_settings(&self, txn: &mut Txn) {
        if self.st.shared.binlog().is_some() {
            txn.set_binlog(self.st.log_bin_on());
            txn.set_binlog_fk_checks(self.st.fk_checks());
        }
    }

    /// Runs a utility statement; a DDL statement that changed a non-TEMPORARY object goes
    /// to the binary log after it succeeded.
    fn utility(&mut self, u: &Utility, params: &[Value]) -> Result<QueryResult, SqlError> {
        let log = self.ddl_goes_to_binlog(u);
        let text = self.prepared_text.take();
        // Transactions that see this statement's change are placed in the log after it.
        struct DdlOrder(Option<(Arc<tierdb_binlog::log::Binlog>, u64)>);
        impl Drop for DdlOrder {
            fn drop(&mut self) {
                if let Some((b, t)) = self.0.take() {
                    b.end_ddl(t);
                }
            }
        }
        // (Not CREATE TABLE ... SELECT: its own rows would wait for it; it logs the table's
        // definition as soon as the table exists.)
        let ctas = matches!(u, Utility::CreateTableAs { .. })
            || matches!(u, Utility::Noted { then, .. } if matches!(then.as_ref(), Utility::CreateTableAs { .. }));
        let _order = DdlOrder(match self.st.shared.binlog() {
            Some(b) if u.is_ddl() && !ctas => {
                let engine = &self.st.shared.engine;
                let tables = Self::ddl_tables(u)
                    .into_iter()
                    .map(|(d, t)| {
                        let before = engine
                            .table(&d, &t)
                            .ok()
                            .filter(|h| !h.is_temporary())
                            .map(|h| (h.id(), h.handle_version()));
                        (d, t, before)
                    })
                    .collect();
                Some((b.clone(), b.begin_ddl(tables)))
            }
            _ => None,
        });
        // A DROP TABLE list naming TEMPORARY tables too is logged without them.
        let inner = match u {
            Utility::Noted { then, .. } => then.as_ref(),
            other => other,
        };
        let text = match inner {
            Utility::DropTable {
                tables,
                if_exists,
                temporary: false,
            } if log => {
                let engine = &self.st.shared.engine;
                let real: Vec<String> = tables
                    .iter()
                    .filter(|(d, t)| !engine.is_temporary_table(d, t))
                    .map(|(d, t)| crate::binlog_sql::quote_table(d, t))
                    .collect();
                if real.len() < tables.len() {
                    let ie = if *if_exists { "IF EXISTS " } else { "" };
                    Some(format!("DROP TABLE {ie}{}", real.join(", ")))
                } else {
                    text
                }
            }
            _ => text,
        };
        // Tables a DROP TABLE list may drop before it fails on a later one.
        let existed: Vec<(String, String)> = match u {
            Utility::DropTable { tables, .. } if log => tables
                .iter()
                .filter(|(d, t)| self.st.shared.engine.table(d, t).is_ok())
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let r = match self.utility_run(u, params) {
            Ok(r) => r,
            Err(e) => {
                // What the failed list did drop goes to the log as MariaDB logs it.
                let gone: Vec<String> = existed
                    .iter()
                    .filter(|(d, t)| self.st.shared.engine.table(d, t).is_err())
                    .map(|(d, t)| crate::binlog_sql::quote_table(d, t))
                    .collect();
                if !gone.is_empty() {
                    self.log_statement(None, &format!("DROP TABLE IF EXISTS {}", gone.join(", ")))?;
                }
                return Err(e);
            }
        };
        if log {
            let sql = text.unwrap_or_else(|| self.current_sql.clone());
            self.log_statement(None, &sql)?;
        }
        Ok(r)
    }

    /// `u` is DDL the binary log records as a statement: a binary log, `sql_log_bin` on, and
    /// not (only) about TEMPORARY tables. CREATE TABLE ... SELECT logs itself (its table's
    /// definition, then its rows).
    fn ddl_goes_to_binlog(&self, u: &Utility) -> bool {
        let shared = &self.st.shared;
        if shared.binlog().is_none() || !u.is_ddl() || !self.st.log_bin_on() {
            return false;
        }
        let inner = match u {
            Utility::Noted { then, .. } => then.as_ref(),
            other => other,
        };
        if matches!(
            inner,
            Utility::CreateTableAs { .. }
                | Utility::CreateTable {
                    temporary: true,
                    ..
                }
                | Utility::DropTable {
                    temporary: true,
                    ..
                }
        ) {
            return false;
        }
        let targets = u.ddl_targets();
        targets.is_empty()
            || !targets
                .iter()
                .all(|(d, t)| shared.engine.is_temporary_table(d, t))
    }

    /// Writes a statement (DDL) to the binary log as a query event of this session.
    fn log_statement(&self, db: Option<&str>, sql: &str) -> Result<(), SqlError> {
        let shared = &self.st.shared;
        let Some(b) = shared.binlog() else {
            return Ok(());
        };
        let text = |name: &str| match self.st.sysvar(name, None) {
            Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
            _ => String::new(),
        };
        let num = |name: &str| match self.st.sysvar(name, None) {
            Ok(Value::Int(i)) => i,
            _ => 1,
        };
        let tz = text("time_zone");
        // explicit_defaults_for_timestamp is always on here (MariaDB 10.11's default).
        let mut flags2 = tierdb_binlog::events::OPTION_EXPLICIT_DEF_TIMESTAMP;
        if !self.st.fk_checks() {
            flags2 |= tierdb_binlog::events::OPTION_NO_FOREIGN_KEY_CHECKS;
        }
        let q = tierdb_binlog::events::QueryEvent {
            thread_id: self.st.conn_id,
            exec_time: 0,
            error_code: 0,
            db: db.or(self.st.db.as_deref()).unwrap_or(""),
            sql: sql.as_bytes(),
            sql_mode: crate::binlog_sql::sql_mode_bits(&text("sql_mode")),
            auto_increment_increment: num("auto_increment_increment").clamp(1, 65535) as u16,
            auto_increment_offset: num("auto_increment_offset").clamp(1, 65535) as u16,
            charset_client: 45,
            collation_connection: 45,
            collation_server: 45,
            time_zone: (!tz.eq_ignore_ascii_case("SYSTEM")).then_some(tz.as_str()),
            flags2,
        };
        b.log_statement(&shared.engine, &q)?;
        Ok(())
    }

    fn utility_run(&mut self, u: &Utility, params: &[Value]) -> Result<QueryResult, SqlError> {
        let shared = self.st.shared.clone();
        let engine = &shared.engine;
        let plan_is_ddl = u.is_ddl();
        // DDL of TEMPORARY tables only may run under LOCK TABLES (as MariaDB).
        let only_temporary = || {
            let targets = u.ddl_targets();
            !targets.is_empty() && targets.iter().all(|(d, t)| engine.is_temporary_table(d, t))
        };
        if u.commits_first() && !self.table_locks.is_empty() && !only_temporary() {
            return Err(SqlError::new(
                1192,
                "HY000",
                "Can't execute the given command because you have active locked tables or an active transaction",
            ));
        }
        if plan_is_ddl || matches!(u, Utility::Commit | Utility::Rollback) {
            // DDL, COMMIT and ROLLBACK end the transaction a pending level was for, open or
            // not (as MariaDB).
            self.st.next_isolation = None;
        }
        if u.commits_first() {
            self.commit_open()?;
        }
        // However the DDL ends (also with an error after changing part of what it names),
        // cached plans re-resolve their tables and views.
        struct CatalogChanged<'a>(&'a Shared, bool);
        impl Drop for CatalogChanged<'_> {
            fn drop(&mut self) {
                if self.1 {
                    self.0.catalog_changed();
                }
            }
        }
        let _changed = CatalogChanged(&shared, plan_is_ddl);
        let r = match u {
            Utility::Begin { snapshot } => {
                self.commit_open()?;
                // As in MySQL, starting a transaction releases the session's table locks.
                self.release_table_locks();
                let mut txn = engine.begin_as(self.owner());
                let repeatable = self.st.repeatable_read();
                self.txn_repeatable = Some(repeatable);
                // WITH CONSISTENT SNAPSHOT opens the read view now (under READ COMMITTED it
                // has no effect, as in InnoDB).
                if *snapshot && repeatable {
                    // With a binary log the view and a log position are taken together
                    // (mariadb-dump --single-transaction --master-data reads it).
                    match shared.binlog() {
                        Some(b) => {
                            let ((), pos) = b.consistent_snapshot(|| txn.consistent_reads())?;
                            self.st.binlog_snapshot = Some(pos);
                        }
                        None => txn.consistent_reads(),
                    }
                }
                self.txn = Some(txn);
                Ok(QueryResult::ok())
            }
            Utility::Commit => {
                self.commit_open()?;
                Ok(QueryResult::ok())
            }
            Utility::Rollback => {
                if let Some(t) = self.take_txn() {
                    shared.counters.inc(Counter::HandlerRollback);
                    t.rollback()?;
                }
                Ok(QueryResult::ok())
            }
            Utility::Savepoint(name) => {
                // With autocommit on and no transaction open, MySQL accepts the statement
                // and the savepoint ends with the (empty) implicit transaction at once.
                if self.txn.is_none() && self.st.autocommit {
                    return Ok(QueryResult::ok());
                }
                let owner = self.owner();
                let txn = self.txn.get_or_insert_with(|| engine.begin_as(owner));
                let sp = txn.savepoint();
                shared.counters.inc(Counter::HandlerSavepoint);
                // A savepoint of the same name is replaced (MySQL semantics).
                self.savepoints
                    .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
                self.savepoints.push((name.clone(), sp));
                Ok(QueryResult::ok())
            }
            Utility::RollbackToSavepoint(name) => {
                let at = self.savepoint_position(name)?;
                let sp = self.savepoints[at].1;
                // Later savepoints are gone; this one stays (it can be rolled back to again).
                self.savepoints.truncate(at + 1);
                let Some(txn) = self.txn.as_mut() else {
                    return Err(no_savepoint(name));
                };
                shared.counters.inc(Counter::HandlerSavepointRollback);
                if let Err(e) = txn.rollback_to_savepoint(sp) {
                    // The engine's contract: after a failed partial rollback the whole
                    // transaction must be rolled back.
                    if let Some(t) = self.take_txn() {
                        let _ = t.rollback();
                    }
                    return Err(e.into());
                }
                Ok(QueryResult::ok())
            }
            Utility::ReleaseSavepoint(name) => {
                let at = self.savepoint_position(name)?;
                self.savepoints.truncate(at);
                Ok(QueryResult::ok())
            }
            Utility::Use(db) => {
                self.init_db(db)?;
                Ok(QueryResult::ok())
            }
            Utility::Set(items) => {
                for it in items {
                    self.set(it, params)?;
                }
                Ok(QueryResult::ok())
            }
            // (SHOW DATABASES / TABLES / TABLE STATUS list only what the account may use.)
            Utility::ShowDatabases(f) => show::databases(engine, f, &self.st),
            Utility::ShowTables { db, full, filter } => {
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.st.db.clone().ok_or_else(no_db)?,
                };
                show::tables(engine, &db, *full, filter, &self.st)
            }
            Utility::ShowColumns {
                db,
                table,
                full,
                filter,
            } => match engine.view(db, table) {
                Some(_) => {
                    let def = crate::view::shape(engine, db, table)?;
                    show::columns(&def, *full, filter, &self.st)
                }
                _ => show::columns(&engine.table(db, table)?.def, *full, filter, &self.st),
            },
            Utility::ShowIndex { db, table } => match engine.view(db, table) {
                Some(_) => Ok(show::index(&crate::view::shape(engine, db, table)?)),
                _ => Ok(show::index(&engine.table(db, table)?.def)),
            },
            Utility::ShowCreateTable { db, table } => match engine.view(db, table) {
                Some(v) => Ok(show::create_view(&v)),
                _ => Ok(show::create_table(&*engine.table(db, table)?)),
            },
            Utility::ShowCreateView { db, view } => match engine.view(db, view) {
                Some(v) => Ok(show::create_view(&v)),
                None if engine.table(db, view).is_ok() => Err(crate::view::not_a_view(db, view)),
                None => Err(EngineError::NoSuchTable {
                    db: db.clone(),
                    table: view.clone(),
                }
                .into()),
            },
            Utility::ShowCreateDatabase {
                name,
                if_not_exists,
            } => show::create_database(engine, name, *if_not_exists),
            Utility::ShowVariables { global, filter } => {
                let st = &self.st;
                show::variables(&shared, *global, &|n| st.session_value(n), filter, st)
            }
            Utility::ShowStatus { filter, .. } => {
                show::status(&shared, filter, &self.st, self.st.binlog_snapshot.as_ref())
            }
            Utility::ShowProcessList { full } => Ok(self.st.visible_processlist(*full)),
            Utility::ShowWarnings { limit } => Ok(show::warnings(self.st.warnings.iter(), *limit)),
            Utility::ShowErrors { limit } => {
                let errors = self.st.warnings.iter().filter(|w| w.level == "Error");
                Ok(show::warnings(errors, *limit))
            }
            Utility::ShowWarningCount { errors } => {
                let (name, n) = if *errors {
                    let n = self.st.warnings.iter().filter(|w| w.level == "Error");
                    ("@@session.error_count", n.count())
                } else {
                    ("@@session.warning_count", self.st.warning_total())
                };
                Ok(QueryResult::Rows {
                    columns: vec![Column::bigint(name)],
                    rows: vec![vec![Value::Int(n as i64)]],
                })
            }
            Utility::ShowEngines => Ok(show::engines()),
            Utility::ShowNone(of) => Ok(show::none_of(*of)),
            Utility::ShowCharset { filter } => show::charsets(filter, &self.st),
            Utility::ShowCollation { filter } => show::collations(filter, &self.st),
            Utility::ShowTableStatus { db, filter } => {
                let db = match db {
                    Some(d) => d.clone(),
                    None => self.st.db.clone().ok_or_else(no_db)?,
                };
                show::table_status(engine, &db, filter, &self.st)
            }
            Utility::Analyze { tables } => Ok(show::analyze(engine, tables, &self.st.temps)),
            Utility::Optimize { tables } => Ok(crate::maintain::optimize(engine, tables)),
            Utility::Check { tables } => Ok(crate::maintain::check(engine, tables)),
            Utility::Repair { tables } => Ok(crate::maintain::repair(engine, tables)),
            Utility::CreateDatabase { name, .. } | Utility::DropDatabase { name, .. }
                if crate::infoschema::is_schema(name) =>
            {
                Err(crate::infoschema::read_only(&self.st.user))
            }
            Utility::CreateDatabase {
                name,
                if_not_exists,
            } => match engine.create_database(name) {
                Ok(()) => Ok(ok(1, 0, String::new())),
                Err(EngineError::DatabaseExists(_)) if *if_not_exists => {
                    let msg = format!("Can't create database '{name}'; database exists");
                    Ok(self.st.noted(1007, msg))
                }
                Err(e) => Err(e.into()),
            },
            Utility::DropDatabase { name, if_exists } => {
                // A table another database's foreign key references stays (as MariaDB).
                if self.st.fk_checks() {
                    for t in engine.tables(name).unwrap_or_default() {
                        if engine
                            .referencing(name, &t)
                            .iter()
                            .any(|(c, _)| c.db != *name)
                        {
                            return Err(crate::fk::parent_in_use());
                        }
                    }
                }
                let n =
                    engine.tables(name).map(|t| t.len()).unwrap_or(0) + engine.views(name).len();
                let dropped = engine.drop_database(name);
                if dropped.is_ok() {
                    // Its TEMPORARY tables went with it.
                    self.st.temps.forget_database(name);
                }
                match dropped {
                    Ok(()) => {
                        if self.st.db.as_deref() == Some(name.as_str()) {
                            self.st.db = None;
                            if let Some(c) = &self.conn {
                                *c.db.lock() = None;
                            }
                        }
                        Ok(ok(n as u64, 0, String::new()))
                    }
                    Err(EngineError::NoSuchDatabase(_)) if *if_exists => {
                        let msg = format!("Can't drop database '{name}'; database doesn't exist");
                        Ok(self.st.noted(1008, msg))
                    }
                    Err(EngineError::NoSuchDatabase(_)) => Err(SqlError::new(
                        1008,
                        "HY000",
                        format!("Can't drop database '{name}'; database doesn't exist"),
                    )),
                    Err(e) => Err(e.into()),
                }
            }
            Utility::CreateTableAs { .. } => self.create_table_as(u, params),
            Utility::CreateTable {
                db,
                def,
                if_not_exists,
                temporary: true,
                or_replace,
            } => {
                if *or_replace {
                    self.replace_table(db, &def.name, true)?;
                }
                self.create_temporary_table(db, def, *if_not_exists)
            }
            Utility::CreateTable {
                db,
                def,
                if_not_exists,
                temporary: false,
                or_replace,
            } => match self.checked_foreign_keys(db, def, &def.foreign_keys) {
                Err(e) => Err(e),
                Ok(()) if *or_replace => {
                    self.replace_table(db, &def.name, false)?;
                    engine.create_table(db, def.clone())?;
                    Ok(QueryResult::ok())
                }
                Ok(()) => match engine.create_table(db, def.clone()) {
                    Ok(()) => Ok(QueryResult::ok()),
                    Err(EngineError::TableExists(name)) if *if_not_exists => {
                        Ok(self.already_exists_note(&name))
                    }
                    Err(e) => Err(e.into()),
                },
            },
            Utility::DropTable {
                tables,
                if_exists,
                temporary: true,
            } => {
                // Only the session's TEMPORARY tables (their names were resolved to keys).
                // The ones there go even when others are not (1051 after, as MariaDB).
                let (mine, missing): (Vec<_>, Vec<_>) = tables
                    .iter()
                    .partition(|(d, t)| engine.is_temporary_table(d, t));
                for (d, key) in mine {
                    self.drop_temporary_table(d, key)?;
                }
                if !missing.is_empty() {
                    let names: Vec<String> =
                        missing.iter().map(|(d, t)| format!("{d}.{t}")).collect();
                    let msg = format!("Unknown table '{}'", names.join(","));
                    if !*if_exists {
                        return Err(SqlError::new(1051, "42S02", msg));
                    }
                    self.st.warnings.push(Warning::note(1051, msg));
                }
                Ok(QueryResult::Ok {
                    affected_rows: 0,
                    last_insert_id: 0,
                    warnings: self.st.warnings.len().min(usize::from(u16::MAX)) as u16,
                    info: String::new(),
                })
            }
            Utility::DropTable {
                tables,
                if_exists,
                temporary: false,
            } => {
                // The tables there go even when a name is a view (which stays: 1965) or names
                // nothing (1051); the error comes after, a note with IF EXISTS (as MariaDB).
                let is_view = |d: &str, t: &str| engine.view(d, t).is_some();
                let mut refused: Option<SqlError> = None;
                for (d, t) in tables.iter().filter(|(d, t)| is_view(d, t)) {
                    let msg = format!("'{d}.{t}' is a view");
                    if !*if_exists {
                        refused.get_or_insert(SqlError::new(1965, "42S02", msg));
                        continue;
                    }
                    self.st.warnings.push(Warning::note(1965, msg));
                }
                let tables: Vec<&(String, String)> =
                    tables.iter().filter(|(d, t)| !is_view(d, t)).collect();
                let missing: Vec<String> = tables
                    .iter()
                    .filter(|(d, t)| engine.table(d, t).is_err())
                    .map(|(d, t)| format!("{d}.{t}"))
                    .collect();
                if !missing.is_empty() {
                    let msg = format!("Unknown table '{}'", missing.join(","));
                    if *if_exists {
                        self.st.warnings.push(Warning::note(1051, msg));
                    } else {
                        refused.get_or_insert(SqlError::new(1051, "42S02", msg));
                    }
                }
                // In statement order, as MariaDB: a table another table's foreign key still
                // references stays (1451 once the others are dropped).
                let mut referenced = false;
                for (d, t) in tables {
                    if engine.is_temporary_table(d, t) {
                        self.drop_temporary_table(d, t)?;
                        continue;
                    }
                    if self.st.fk_checks() && crate::fk::referenced_by_other(engine, d, t).is_some()
                    {
                        referenced = true;
                        continue;
                    }
                    match engine.drop_table(d, t) {
                        Ok(())
                        | Err(EngineError::NoSuchTable { .. })
                        | Err(EngineError::NoSuchDatabase(_)) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                if let Some(e) = refused {
                    return Err(e);
                }
                if referenced {
                    return Err(crate::fk::parent_in_use());
                }
                Ok(QueryResult::Ok {
                    affected_rows: 0,
                    last_insert_id: 0,
                    warnings: self.st.warnings.len().min(usize::from(u16::MAX)) as u16,
                    info: String::new(),
                })
            }
            Utility::CreateIndex {
                db,
                table,
                name,
                columns,
                unique,
            } => {
                let t = crate::view::base_table(engine, db, table)?;
                let cols = columns
                    .iter()
                    .map(|c| {
                        t.def.column_index(c).ok_or_else(|| {
                            SqlError::new(
                                1072,
                                "42000",
                                format!("Key column '{c}' doesn't exist in table"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                // MariaDB notes an index of the same kind over the same columns as an existing one.
                let same = t
                    .def
                    .indexes
                    .iter()
                    .any(|i| i.columns == cols && i.unique == *unique);
                engine.create_index(
                    db,
                    table,
                    tierdb_engine::IndexDef {
                        name: name.clone(),
                        columns: cols,
                        unique: *unique,
                    },
                )?;
                if same {
                    self.st.warnings.push(Warning::note(
                        1831,
                        format!("Duplicate index `{name}`. This is deprecated and will be disallowed in a future release"),
                    ));
                }
                Ok(alter_ok(self.st.warnings.len()))
            }
            Utility::DropIndex { db, table, name } => {
                let t = crate::view::base_table(engine, db, table)?;
                if !t.def.indexes.iter().any(|i| i.name == *name) {
                    return Err(crate::alter::not_there("INDEX", name));
                }
                // The AUTO_INCREMENT column must keep leading some key.
                let mut after = t.def.clone();
                after.indexes.retain(|i| i.name != *name);
                crate::fk::parent_side_kept(engine, db, table, &t.def, &after)?;
                if let Some(ai) = after.columns.iter().position(|c| c.auto_increment) {
                    if after.primary_key.first() != Some(&ai)
                        && !after.indexes.iter().any(|i| i.columns.first() == Some(&ai))
                    {
                        return Err(SqlError::new(1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key"));
                    }
                }
                engine.drop_index(db, table, name)?;
                Ok(alter_ok(0))
            }
            Utility::AddColumn {
                db,
                table,
                column,
                checks,
            } => {
                engine.add_column_with_checks(db, table, column.clone(), checks.clone())?;
                Ok(alter_ok(0))
            }
            Utility::AlterColumn {
                db,
                table,
                pos,
                column,
                check,
            } => {
                // A stored value fits the new definition when storing it there keeps it as
                // it is (strict mode: no truncation, no NULL in a NOT NULL column).
                let mut refused_null = false;
                let mut fits = |v: &Value| match v {
                    Value::Null => {
                        refused_null = !column.nullable;
                        column.nullable
                    }
                    v => {
                        crate::coerce::coerce_to_column(v.clone(), column, 1).is_ok_and(|c| &c == v)
                    }
                };
                let check: Option<&mut dyn FnMut(&Value) -> bool> =
                    if *check { Some(&mut fits) } else { None };
                let from = crate::view::base_table(engine, db, table)?.def.clone();
                let mut to = from.clone();
                if let Some(c) = to.columns.get_mut(*pos) {
                    *c = column.clone();
                }
                crate::fk::parent_side_kept(engine, db, table, &from, &to)?;
                // A value too long for the new type is "Data too long" (1406) as MariaDB
                // says it, except for a VARCHAR or VARBINARY made shorter ("Data
                // truncated", 1265).
                let varchar_shrink = matches!(
                    (from.columns.get(*pos).map(|c| &c.ty), &column.ty),
                    (Some(ColumnType::VarChar(_)), ColumnType::VarChar(_))
                        | (Some(ColumnType::VarBinary(_)), ColumnType::VarBinary(_))
                );
                let r = engine.alter_column(db, table, *pos, column.clone(), check);
                match r {
                    Err(EngineError::DataTruncated { column: c, row })
                        if !varchar_shrink
                            && !refused_null
                            && matches!(
                                column.ty,
                                ColumnType::Char(_)
                                    | ColumnType::VarChar(_)
                                    | ColumnType::Text(_)
                                    | ColumnType::Blob(_)
                                    | ColumnType::VarBinary(_)
                            ) =>
                    {
                        return Err(SqlError::new(
                            1406,
                            "22001",
                            format!("Data too long for column '{c}' at row {row}"),
                        ));
                    }
                    r => r?,
                }
                Ok(alter_ok(0))
            }
            Utility::SetChecks {
                db,
                table,
                checks,
                added,
                missing,
            } => {
                let t = crate::view::base_table(engine, db, table)?;
                if let Some(m) = missing {
                    self.st.warnings.push(Warning::note(1091, m.clone()));
                    return Ok(alter_ok(self.st.warnings.len()));
                }
                let Some(i) = *added else {
                    engine.set_checks(db, table, checks.clone(), None)?;
                    return Ok(alter_ok(0));
                };
                // Every stored row must pass the new check (4025 at the first that fails).
                let mut probe_def = t.def.clone();
                probe_def.checks = checks.get(i).cloned().into_iter().collect();
                let probe = crate::check::RowChecks::for_def(&probe_def, db)?;
                let cx = EvalCx::new(&[], &self.st);
                let mut failed: Option<SqlError> = None;
                let mut rows = 0u64;
                let mut verify = |row: &[Value]| -> Result<(), EngineError> {
                    rows += 1;
                    crate::check::check_row(&probe, row, &cx).map_err(|e| {
                        failed = Some(e);
                        EngineError::Internal("a stored row fails the new CHECK".into())
                    })
                };
                let r = engine.set_checks(db, table, checks.clone(), Some(&mut verify));
                if let Some(e) = failed {
                    return Err(e);
                }
                r?;
                Ok(ok(
                    rows,
                    0,
                    format!("Records: {rows}  Duplicates: 0  Warnings: 0"),
                ))
            }
            Utility::RebuildTable { db, table, rebuild } => {
                let added: Vec<String> = rebuild
                    .def
                    .foreign_keys
                    .iter()
                    .filter(|f| !rebuild.from.foreign_keys.iter().any(|g| g.name == f.name))
                    .map(|f| f.name.clone())
                    .collect();
                // A TEMPORARY table takes no foreign key (1005, as InnoDB).
                if !added.is_empty() && engine.is_temporary_table(db, table) {
                    return Err(crate::fk::cant_create(db, &rebuild.def.name, 150));
                }
                let fk_checks = self.st.fk_checks();
                crate::fk::validate(engine, db, &rebuild.def, &added, fk_checks)?;
                crate::fk::parent_side_kept(engine, db, table, &rebuild.from, &rebuild.def)?;
                // Rows already in the table must have their parents for a key added now.
                let mut parents_txn = (fk_checks && !added.is_empty()).then(|| engine.begin());
                for (code, msg) in &rebuild.notes {
                    self.st.warnings.push(Warning::note(*code, msg.clone()));
                }
                let warnings = self.st.warnings.len();
                if rebuild.is_noop() {
                    return Ok(alter_ok(warnings));
                }
                // A row that does not convert stops the copy; its error is the statement's.
                let mut failed: Option<SqlError> = None;
                let mut notes = Vec::new();
                let mut row = 0u64;
                let mut map = |old: Vec<Value>| {
                    row += 1;
                    rebuild
                        .convert(&old, row, &mut notes)
                        .and_then(|new| match &mut parents_txn {
                            Some(txn) => crate::fk::parents_exist(
                                engine,
                                txn,
                                db,
                                &rebuild.def,
                                &added,
                                &new,
                            )
                            .map(|()| new),
                            None => Ok(new),
                        })
                        .map_err(|e| {
                            failed = Some(e);
                            tierdb_engine::Error::Internal("a row did not convert".into())
                        })
                };
                let copied =
                    engine.rebuild_table(db, table, &rebuild.from, rebuild.def.clone(), &mut map);
                if let Some(e) = failed {
                    return Err(e);
                }
                for (code, msg) in notes {
                    self.st.warnings.push(Warning::note(code, msg));
                }
                let warnings = self.st.warnings.len();
                let shown = if rebuild.copies {
                    copied?
                } else {
                    copied.map(|_| 0)?
                };
                Ok(QueryResult::Ok {
                    affected_rows: shown,
                    last_insert_id: 0,
                    warnings: warnings.min(usize::from(u16::MAX)) as u16,
                    info: format!("Records: {shown}  Duplicates: 0  Warnings: {warnings}"),
                })
            }
            Utility::RenameTables { pairs, .. }
                if pairs
                    .iter()
                    .any(|(d, f, ..)| engine.is_temporary_table(d, f)) =>
            {
                self.rename_temporary_tables(pairs)
            }
            Utility::RenameTables { pairs, .. } => {
                // Which pairs move a view, following the names earlier pairs free or take
                // (`a TO tmp, b TO a, tmp TO b` swaps two views).
                let mut moved: Vec<((String, String), bool)> = Vec::new();
                let mut views = 0;
                for (d, f, to_db, to) in pairs {
                    let key = (d.clone(), f.clone());
                    let is_view = match moved.iter().rposition(|(k, _)| *k == key) {
                        Some(i) => moved[i].1,
                        None => engine.view(d, f).is_some(),
                    };
                    views += usize::from(is_view);
                    moved.push((key, false));
                    moved.push(((to_db.clone(), to.clone()), is_view));
                }
                if views == 0 {
                    engine.rename_tables(pairs)?;
                } else if views < pairs.len() {
                    return Err(SqlError::unsupported(
                        "RENAME TABLE of views and tables in one statement (rename them in two)",
                    ));
                } else {
                    let mut same_db = Vec::with_capacity(pairs.len());
                    for (d, f, to_db, to) in pairs {
                        if d != to_db {
                            return Err(SqlError::new(
                                1450,
                                "HY000",
                                format!("Changing schema from '{d}' to '{to_db}' is not allowed"),
                            ));
                        }
                        same_db.push((d.clone(), f.clone(), to.clone()));
                    }
                    engine.rename_views(&same_db)?;
                }
                Ok(QueryResult::ok())
            }
            Utility::CreateView {
                db,
                def,
                replace,
                alter,
                if_not_exists,
            } => {
                if crate::infoschema::is_schema(db) {
                    return Err(crate::infoschema::read_only(&self.st.user));
                }
                let old = engine.view(db, &def.name);
                let table = engine.table(db, &def.name).is_ok();
                if table && (*replace || *alter) {
                    return Err(crate::view::not_a_view(db, &def.name));
                }
                if *alter && old.is_none() {
                    return Err(EngineError::NoSuchTable {
                        db: db.clone(),
                        table: def.name.clone(),
                    }
                    .into());
                }
                if *if_not_exists && (table || old.is_some()) {
                    return Ok(self.already_exists_note(&def.name));
                }
                let mut def = def.clone();
                if def.algorithm.is_empty() {
                    def.algorithm = match (&old, *alter) {
                        (Some(o), true) => o.algorithm.clone(),
                        _ => "UNDEFINED".into(),
                    };
                }
                // Naming another account as the definer hands the view its rights: SUPER or
                // SET USER (as MariaDB).
                if let (Some(a), false) = (&self.st.grants, def.definer.is_empty()) {
                    let me = format!("{}@{}", a.user, a.host);
                    let may = crate::accounts::SUPER | crate::accounts::SET_USER;
                    if def.definer != me && a.global & may == 0 {
                        return Err(crate::accounts::global_denied(may));
                    }
                }
                if def.definer.is_empty() {
                    // CURRENT_USER: the account; an embedded session is named as MariaDB
                    // names a loopback client's account.
                    def.definer = match &self.st.account {
                        Some((u, h)) => format!("{u}@{h}"),
                        None => {
                            let host = match self.st.host.as_str() {
                                "127.0.0.1" | "::1" => "localhost",
                                h => h,
                            };
                            format!("{}@{host}", self.st.user)
                        }
                    };
                }
                let text = |v: Result<Value, SqlError>, dflt: &str| match v {
                    Ok(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
                    _ => dflt.to_string(),
                };
                def.charset_client = text(self.st.sysvar("character_set_client", None), "utf8mb4");
                def.collation_connection = text(
                    self.st.sysvar("collation_connection", None),
                    "utf8mb4_general_ci",
                );
                engine.create_view(db, def, *replace || *alter)?;
                Ok(QueryResult::ok())
            }
            Utility::DropView { views, if_exists } => {
                let mut missing = Vec::new();
                for (d, v) in views {
                    match engine.drop_view(d, v) {
                        Ok(()) => {}
                        Err(EngineError::NoSuchTable { .. }) => missing.push(format!("{d}.{v}")),
                        Err(e) => return Err(e.into()),
                    }
                }
                if missing.is_empty() {
                    return Ok(QueryResult::ok());
                }
                let msg = format!("Unknown VIEW: '{}'", missing.join(","));
                if !*if_exists {
                    return Err(SqlError::new(4092, "42S02", msg));
                }
                Ok(self.ok_with_note(4092, msg))
            }
            Utility::SelectIntoFile { select, into } => self.select_into_file(select, into, params),
            Utility::SelectInto {
                select,
                vars,
                deprecated,
            } => {
                let rows = match self.dml(&Plan::Select(select.clone()), params)? {
                    QueryResult::Rows { rows, .. } => rows,
                    _ => return Err(SqlError::syntax("internal: the query returned no rows")),
                };
                if *deprecated {
                    self.st.warnings.push(Warning::warn(1287, DEPRECATED_INTO));
                }
                match rows.as_slice() {
                    [] => Ok(self.ok_with_warning(
                        1329,
                        "No data - zero rows fetched, selected, or processed".into(),
                    )),
                    [row] => {
                        for (name, v) in vars.iter().zip(row) {
                            self.st.user_vars.insert(name.clone(), v.clone());
                        }
                        Ok(QueryResult::Ok {
                            affected_rows: 1,
                            last_insert_id: 0,
                            warnings: self.st.warnings.len().min(usize::from(u16::MAX)) as u16,
                            info: String::new(),
                        })
                    }
                    [first, ..] => {
                        // The first row is assigned before the error, as MariaDB does.
                        for (name, v) in vars.iter().zip(first) {
                            self.st.user_vars.insert(name.clone(), v.clone());
                        }
                        Err(SqlError::new(
                            1172,
                            "42000",
                            "Result consisted of more than one row",
                        ))
                    }
                }
            }
            Utility::Noted { notes, then } => {
                for (code, msg) in notes {
                    self.st.warnings.push(Warning::note(*code, msg.clone()));
                }
                let mut r = self.utility(then, params)?;
                // The inner statement counted its own warnings only.
                if let QueryResult::Ok { info, .. } = &mut r {
                    if !info.contains("Warnings: ") {
                        *info = "Records: 0  Duplicates: 0  Warnings: 0".into();
                    }
                }
                recount_warnings(&mut r, self.st.warnings.len());
                Ok(r)
            }
            Utility::AlterNoop { db, table } => {
                self.commit_open()?;
                let t = crate::view::base_table(engine, db, table)?;
                if !self.table_locks.is_empty()
                    && !self
                        .table_locks
                        .iter()
                        .any(|l| l.db == t.db && l.name == t.def.name)
                {
                    return Err(SqlError::new(
                        1100,
                        "HY000",
                        format!("Table '{table}' was not locked with LOCK TABLES"),
                    ));
                }
                Ok(QueryResult::ok())
            }
            Utility::LockTables { tables } => {
                self.commit_open()?;
                self.release_table_locks();
                let owner = self.owner();
                let mut held = Vec::with_capacity(tables.len());
                let mut failed = None;
                for (db, name, mode) in tables {
                    // A TEMPORARY table is the session's alone: nothing to lock (as MariaDB).
                    if engine.is_temporary_table(db, name) {
                        continue;
                    }
                    let got = engine
                        .table(db, name)
                        .and_then(|t| engine.lock_table(&t, owner, *mode).map(|()| t));
                    match got {
                        Ok(table) => held.push(LockedTable {
                            db: db.clone(),
                            name: name.clone(),
                            table,
                            mode: *mode,
                        }),
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                self.table_locks = held;
                if let Some(e) = failed {
                    // All or nothing.
                    self.release_table_locks();
                    return Err(e.into());
                }
                Ok(QueryResult::ok())
            }
            Utility::Flush => {
                self.commit_open()?;
                Ok(QueryResult::ok())
            }
            Utility::FlushReadLock => {
                if !self.table_locks.is_empty() {
                    return Err(SqlError::new(
                        1192,
                        "HY000",
                        "Can't execute the given command because you have active locked tables or an active transaction",
                    ));
                }
                self.commit_open()?;
                let wait = self.lock_wait();
                {
                    let _state = self.waiting_if(true, Waiting::WritesToFinish);
                    shared.read_lock.acquire(self.st.conn_id, wait, &|| {
                        crate::interrupt::check().is_err()
                    })?;
                }
                // Commits are held now: the binary log's files get every commit before the
                // lock (with flush_log_at_trx_commit 0 / 2 some were still to be written),
                // so the position SHOW MASTER STATUS gives is one BINLOG_GTID_POS can read.
                if let Err(e) = engine.write_binlog_now() {
                    shared.read_lock.release(self.st.conn_id);
                    return Err(e.into());
                }
                Ok(QueryResult::ok())
            }
            Utility::UnlockTables => {
                if !self.table_locks.is_empty() {
                    self.commit_open()?;
                    self.release_table_locks();
                }
                shared.read_lock.release(self.st.conn_id);
                Ok(QueryResult::ok())
            }
            Utility::Truncate { db, table } => {
                // TRUNCATE of a view: 1146, as MariaDB.
                let t = engine.table(db, table)?;
                if self.st.fk_checks() {
                    if let Some((child, i)) = crate::fk::referenced_by_other(engine, db, table) {
                        return Err(SqlError::new(
                            1701,
                            "42000",
                            format!(
                                "Cannot truncate a table referenced in a foreign key constraint (`{}`.`{}`, {})",
                                child.db,
                                child.def.name,
                                crate::fk::clause_without_actions(&child.db, &child.def, &child.def.foreign_keys[i])
                            ),
                        ));
                    }
                }
                let def = t.def.clone();
                if t.is_temporary() {
                    self.drop_temporary_table(db, table)?;
                    self.create_temporary_table(db, &def, false)?;
                    return Ok(QueryResult::ok());
                }
                engine.drop_table(db, table)?;
                engine.create_table(db, def)?;
                Ok(QueryResult::ok())
            }
        };
        r
    }

    /// The foreign keys `fks` of table `def` (about to be created in `db`) are valid
    /// (`fk::validate`), and so is `def` as the parent of keys other tables declared for its
    /// name while checks were off; a table that exists already is left to the engine's 1050.
    fn checked_foreign_keys(
        &self,
        db: &str,
        def: &tierdb_engine::TableDef,
        fks: &[tierdb_engine::ForeignKeyDef],
    ) -> Result<(), SqlError> {
        let engine = &self.st.shared.engine;
        if engine.table(db, &def.name).is_ok() {
            return Ok(());
        }
        if self.st.fk_checks() {
            crate::fk::validate_as_parent(engine, db, def)?;
        }
        if fks.is_empty() {
            return Ok(());
        }
        let added: Vec<String> = fks.iter().map(|f| f.name.clone()).collect();
        crate::fk::validate(engine, db, def, &added, self.st.fk_checks())
    }

    /// `CREATE ... IF NOT EXISTS` of a name a table or view has: OK with note 1050.
    fn already_exists_note(&mut self, name: &str) -> QueryResult {
        self.ok_with_note(1050, format!("Table '{name}' already exists"))
    }

    /// A CREATE of table name `name`, which is taken: OK with note 1050 with IF NOT EXISTS,
    /// else error 1050.
    fn name_taken(&mut self, name: &str, if_not_exists: bool) -> Result<QueryResult, SqlError> {
        if if_not_exists {
            return Ok(self.already_exists_note(name));
        }
        Err(SqlError::new(
            1050,
            "42S01",
            format!("Table '{name}' already exists"),
        ))
    }

    /// An OK carrying note `code` (and the statement's other warnings).
    fn ok_with_note(&mut self, code: u16, msg: String) -> QueryResult {
        self.ok_with(Warning::note(code, msg))
    }

    fn ok_with_warning(&mut self, code: u16, msg: String) -> QueryResult {
        self.ok_with(Warning::warn(code, msg))
    }

    fn ok_with(&mut self, w: Warning) -> QueryResult {
        self.st.warnings.push(w);
        QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: self.st.warnings.len().min(usize::from(u16::MAX)) as u16,
            info: String::new(),
        }
    }

    /// `CREATE TEMPORARY TABLE` (not `... SELECT`): 1050 when the session has one of that
    /// name (a table of the database may have it: the TEMPORARY one hides it). Foreign keys
    /// are refused as InnoDB does (1005, errno 150).
    fn create_temporary_table(
        &mut self,
        db: &str,
        def: &tierdb_engine::TableDef,
        if_not_exists: bool,
    ) -> Result<QueryResult, SqlError> {
        if self.live_temp_key(db, &def.name).is_some() {
            return self.name_taken(&def.name, if_not_exists);
        }
        if !def.foreign_keys.is_empty() {
            return Err(crate::fk::cant_create(db, &def.name, 150));
        }
        let key = self
            .st
            .shared
            .engine
            .create_temporary_table(db, def.clone())?;
        self.st.temps.insert(db, &def.name, key);
        Ok(QueryResult::ok())
    }

    /// Drops the session's TEMPORARY table filed under `key` in `db`: its name goes now; the
    /// table itself once the open transaction, which may have written it, has ended.
    fn drop_temporary_table(&mut self, db: &str, key: &str) -> Result<(), SqlError> {
        if self.txn.is_some() {
            self.st.temps.forget_key(db, key);
            self.dropped_temps.push((db.to_string(), key.to_string()));
            return Ok(());
        }
        match self.st.shared.engine.drop_table(db, key) {
            Ok(()) | Err(EngineError::NoSuchTable { .. }) | Err(EngineError::NoSuchDatabase(_)) => {
                self.st.temps.forget_key(db, key);
                Ok(())
            }
            // Still there: it keeps its name (and is dropped with the session).
            Err(e) => Err(e.into()),
        }
    }

    /// Every TEMPORARY table of the session, dropped (the session ends; its transaction has
    /// been rolled back).
    fn drop_temporary_tables(&mut self) {
        let mut all = self.st.temps.take_all();
        all.append(&mut self.dropped_temps);
        self.drop_in_engine(all);
    }

    /// Drops TEMPORARY tables (db, key) the session no longer names; one gone with its
    /// database is fine, one that cannot be dropped now is dropped when the engine next opens.
    fn drop_in_engine(&self, tables: Vec<(String, String)>) {
        for (db, key) in tables {
            match self.st.shared.engine.drop_table(&db, &key) {
                Ok(()) | Err(EngineError::NoSuchTable { .. } | EngineError::NoSuchDatabase(_)) => {}
                Err(e) => tracing::warn!(%e, db, "could not drop a TEMPORARY table"),
            }
        }
    }

    /// RENAME TABLE / ALTER TABLE ... RENAME of the session's TEMPORARY tables: each pair names
    /// its table as the names stand after the pairs before it (`a TO c, c TO d`, a swap
    /// through a spare name), all checked before any is renamed; each keeps its database; a
    /// name the session's TEMPORARY tables hold is 1050.
    fn rename_temporary_tables(
        &mut self,
        pairs: &[(String, String, String, String)],
    ) -> Result<QueryResult, SqlError> {
        let engine = self.st.shared.engine.clone();
        let mut names = self.st.temps.clone();
        let mut moves: Vec<(String, String, String)> = Vec::with_capacity(pairs.len());
        for (d, from, to_db, to) in pairs {
            // `from` is a key when the name was a TEMPORARY table's as the statement was
            // planned, and it still is only if no earlier pair renamed that table.
            let handle = engine.table(d, from).ok();
            let planned = handle
                .as_ref()
                .filter(|t| t.is_temporary())
                .and_then(|t| names.key(d, &t.def.name).map(str::to_string))
                .filter(|k| k == from);
            let key = match (planned.or_else(|| names.key(d, from).map(str::to_string)), handle) {
                (Some(key), _) => key,
                (None, Some(t)) if !t.is_temporary() => {
                    return Err(SqlError::unsupported(
                        "RENAME TABLE of TEMPORARY and other tables in one statement (rename them in two)",
                    ))
                }
                (None, t) => {
                    return Err(EngineError::NoSuchTable {
                        db: d.clone(),
                        table: t.map_or_else(|| from.clone(), |t| t.def.name.clone()),
                    }
                    .into())
                }
            };
            if d != to_db {
                return Err(SqlError::unsupported(
                    "moving a TEMPORARY table to another database",
                ));
            }
            if names.key(d, to).is_some() {
                return self.name_taken(to, false);
            }
            names.rename(d, &key, to);
            moves.push((d.clone(), key, to.clone()));
        }
        for (d, key, to) in moves {
            engine.rename_temporary_table(&d, &key, &to)?;
            self.st.temps.rename(&d, &key, &to);
        }
        Ok(QueryResult::ok())
    }

    /// The key of the session's TEMPORARY table `db`.`name`, forgetting it when the engine no
    /// longer has the table (its database was dropped).
    /// `CREATE OR REPLACE [TEMPORARY] TABLE`: drops the table `name` names (a TEMPORARY one
    /// of the session's when `temporary`), if there is one, as `DROP TABLE IF EXISTS` does
    /// but without its notes. A view of that name is 1965 (and stays, as in MariaDB).
    fn replace_table(&mut self, db: &str, name: &str, temporary: bool) -> Result<(), SqlError> {
        let engine = self.st.shared.engine.clone();
        let target = if temporary {
            self.live_temp_key(db, name)
        } else if engine.view(db, name).is_some() {
            return Err(SqlError::new(
                1965,
                "42S02",
                format!("'{db}.{name}' is a view"),
            ));
        } else {
            engine.table(db, name).is_ok().then(|| name.to_string())
        };
        let Some(target) = target else {
            return Ok(());
        };
        let notes = self.st.warnings.len();
        let drop = Utility::DropTable {
            tables: vec![(db.to_string(), target)],
            if_exists: true,
            temporary,
        };
        let r = self.utility(&drop, &[]);
        self.st.warnings.truncate(notes);
        r.map(|_| ())
    }

    fn live_temp_key(&mut self, db: &str, name: &str) -> Option<String> {
        let key = self.st.temps.key(db, name)?.to_string();
        if self.st.shared.engine.is_temporary_table(db, &key) {
            return Some(key);
        }
        self.st.temps.forget_key(db, &key);
        None
    }

    /// `CREATE [TEMPORARY] TABLE ... AS SELECT` (`Utility::CreateTableAs`): the query's rows
    /// are read first (its own statement), then the table is created and filled in one
    /// transaction; if the fill fails (a duplicate key, a NULL in a NOT NULL column), the
    /// table is dropped again, so the statement leaves nothing behind.
    fn create_table_as(&mut self, u: &Utility, params: &[Value]) -> Result<QueryResult, SqlError> {
        let Utility::CreateTableAs {
            db,
            def,
            select,
            sources,
            if_not_exists,
            temporary,
            or_replace,
        } = u
        else {
            return Err(SqlError::syntax("internal: not CREATE TABLE ... AS SELECT"));
        };
        let (if_not_exists, temporary) = (*if_not_exists, *temporary);
        let engine = self.st.shared.engine.clone();
        let existing = if temporary {
            self.live_temp_key(db, &def.name)
                .and_then(|k| engine.table(db, &k).ok())
        } else {
            engine.table(db, &def.name).ok()
        };
        if *or_replace {
            // The query may not read the table it replaces (as MariaDB).
            let plan = Plan::Select(select.clone());
            if let Some(old) = &existing {
                if plan.tables().iter().any(|(t, _)| t.id() == old.id()) {
                    return Err(SqlError::new(
                        1093,
                        "HY000",
                        format!(
                            "Table '{}' is specified twice, both as a target for 'CREATE' and as a separate source for data",
                            def.name
                        ),
                    ));
                }
            }
        } else if existing.is_some() || (!temporary && engine.view(db, &def.name).is_some()) {
            return self.name_taken(&def.name, if_not_exists);
        }
        let rows = match self.dml(&Plan::Select(select.clone()), params)? {
            QueryResult::Rows { rows, .. } => rows,
            _ => return Err(SqlError::syntax("internal: the query returned no rows")),
        };
        // CREATE TEMPORARY TABLE ... SELECT leaves the open transaction open (it goes on
        // after the statement); CREATE TABLE ... SELECT commits it.
        let parked = if temporary {
            Some((
                self.txn.take(),
                std::mem::take(&mut self.savepoints),
                self.txn_repeatable.take(),
            ))
        } else {
            self.commit_open()?;
            None
        };
        if *or_replace {
            let replaced = existing.is_some();
            let r = self.replace_table(db, &def.name, temporary);
            if r.is_ok() && replaced && !temporary && self.st.log_bin_on() {
                self.log_statement(
                    Some(db),
                    &format!(
                        "DROP TABLE IF EXISTS {}",
                        crate::binlog_sql::quote_table(db, &def.name)
                    ),
                )?;
            }
            if let Err(e) = r {
                if let Some((txn, savepoints, repeatable)) = parked {
                    self.txn = txn;
                    self.savepoints = savepoints;
                    self.txn_repeatable = repeatable;
                }
                return Err(e);
            }
        }
        let r = self.fill_created_table(db, def, select, sources, temporary, rows);
        if let Some((txn, savepoints, repeatable)) = parked {
            self.txn = txn;
            self.savepoints = savepoints;
            self.txn_repeatable = repeatable;
        }
        r
    }

    /// The rest of `create_table_as`, after the query ran: creates the table and fills it
    /// in a transaction of its own (so the rows stay whatever a transaction open around the
    /// statement does, as in MariaDB); a failed fill drops the table again.
    fn fill_created_table(
        &mut self,
        db: &str,
        def: &tierdb_engine::TableDef,
        select: &crate::plan::SelectPlan,
        sources: &[Option<tierdb_engine::ColumnDef>],
        temporary: bool,
        rows: Vec<Vec<Value>>,
    ) -> Result<QueryResult, SqlError> {
        let engine = self.st.shared.engine.clone();
        // Columns: the statement's own that the query does not name, then the query's.
        let named = |n: &str| {
            select
                .columns
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(n))
        };
        let mut out = def.clone();
        out.columns = def
            .columns
            .iter()
            .filter(|c| !named(&c.name))
            .cloned()
            .collect();
        let own_first = out.columns.len();
        for (i, meta) in select.columns.iter().enumerate() {
            let own = def
                .columns
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(&meta.name));
            let col = match (own, sources.get(i).cloned().flatten()) {
                (Some(c), _) => c.clone(),
                (None, Some(c)) => c,
                (None, None) => {
                    crate::ddl::column_for_values(meta, rows.iter().filter_map(|r| r.get(i)))
                }
            };
            out.columns.push(col);
        }
        // The statement's keys name its columns by position: move them to where they went.
        let moved = |p: usize| -> usize {
            let name = &def.columns[p].name;
            out.columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(name))
                .unwrap_or(p)
        };
        out.primary_key = def.primary_key.iter().map(|&p| moved(p)).collect();
        for ix in &mut out.indexes {
            ix.columns = ix.columns.iter().map(|&p| moved(p)).collect();
        }
        for &p in &out.primary_key {
            if let Some(c) = out.columns.get_mut(p) {
                c.nullable = false;
            }
        }
        // The binary log gets the created table's definition, then its rows (as MariaDB
        // logs CREATE ... SELECT in row format): a replica must not run the query again.
        let logging = !temporary && self.st.shared.binlog().is_some() && self.st.log_bin_on();
        let quoted = crate::binlog_sql::quote_table(db, &out.name);
        let filed = if temporary {
            engine.create_temporary_table(db, out.clone())?
        } else {
            engine.create_table(db, out.clone())?;
            if logging {
                self.log_statement(Some(db), &crate::ddl::render_create_table(db, &out, None))?;
            }
            out.name.clone()
        };
        let table = engine.table(db, &filed)?;
        let checks = crate::check::RowChecks::of(&table)?;
        let col_map: Vec<Option<usize>> = (0..out.columns.len())
            .map(|c: usize| c.checked_sub(own_first))
            .collect();
        let n = rows.len();
        let insert = crate::plan::InsertPlan {
            table,
            rows: rows
                .into_iter()
                .map(|r| {
                    r.into_iter()
                        .map(|v| Some(crate::expr::Expr::Const(v)))
                        .collect()
                })
                .collect(),
            col_map,
            on_duplicate: crate::plan::OnDuplicate::Fail,
            select: None,
            check: None,
            checks,
        };
        let filled = self
            .dml(&Plan::Insert(Box::new(insert)), &[])
            .and_then(|_| self.commit_open());
        if let Err(e) = filled {
            if let Some(t) = self.take_txn() {
                let _ = t.rollback();
            }
            if let Err(drop) = engine.drop_table(db, &filed) {
                tracing::warn!(%drop, table = %out.name, "could not drop the table of a failed CREATE TABLE ... AS SELECT");
            } else if logging {
                self.log_statement(Some(db), &format!("DROP TABLE IF EXISTS {quoted}"))?;
            }
            return Err(e);
        }
        if temporary {
            self.st.temps.insert(db, &out.name, filed);
        }
        // The fill's warnings (values cut to fit outside strict mode) are the statement's.
        let mut res = ok(
            n as u64,
            0,
            format!("Records: {n}  Duplicates: 0  Warnings: 0"),
        );
        recount_warnings(&mut res, self.st.warning_total());
        Ok(res)
    }

    fn set(&mut self, it: &SetItem, params: &[Value]) -> Result<(), SqlError> {
        let shared = self.st.shared.clone();
        let value = match &it.value {
            Some(e) => {
                let cx = EvalCx::new(params, &self.st);
                Some(e.eval(&[], &cx)?.into_owned())
            }
            None => None,
        };
        match &it.target {
            SetTarget::User(name) => {
                self.st
                    .user_vars
                    .insert(name.clone(), value.unwrap_or(Value::Null));
                Ok(())
            }
            SetTarget::Names { charset } => {
                let cs = charset.to_ascii_lowercase();
                if !["utf8mb4", "utf8", "utf8mb3", "latin1", "binary", "ascii"]
                    .contains(&cs.as_str())
                {
                    return Err(SqlError::new(
                        1115,
                        "42000",
                        format!("Unknown character set: '{charset}'"),
                    ));
                }
                for n in [
                    "character_set_client",
                    "character_set_connection",
                    "character_set_results",
                ] {
                    self.st
                        .vars
                        .insert(n, Value::Bytes(cs.clone().into_bytes()));
                }
                Ok(())
            }
            SetTarget::Isolation { level, scope } => {
                let v = Value::Bytes(level.clone().into_bytes());
                match scope {
                    IsolationScope::Global => {
                        let mut g = shared.globals_mut();
                        g.insert("transaction_isolation", v.clone());
                        g.insert("tx_isolation", v);
                    }
                    IsolationScope::Session => {
                        self.st.vars.insert("transaction_isolation", v.clone());
                        self.st.vars.insert("tx_isolation", v);
                        // A pending next-transaction level gives way (as MariaDB).
                        self.st.next_isolation = None;
                    }
                    IsolationScope::Next => {
                        if self.txn.is_some() {
                            return Err(SqlError::new(
                                1568,
                                "25001",
                                "Transaction characteristics can't be changed while a transaction is in progress",
                            ));
                        }
                        self.st.next_isolation = Some(level.clone());
                    }
                }
                Ok(())
            }
            SetTarget::System { name, global } => self.set_system(name, *global, value),
        }
    }

    fn set_system(
        &mut self,
        name: &str,
        global: Option<bool>,
        value: Option<Value>,
    ) -> Result<(), SqlError> {
        let shared = self.st.shared.clone();
        let def = variables::lookup(name);
        let is_engine_var = || shared.engine.variables().iter().any(|(n, _)| n == name);
        if def.is_some_and(|d| d.name == "sql_log_bin") && global != Some(true) {
            // Leaving changes out of the binary log is an administrator's decision, and one
            // for a whole transaction (as MariaDB).
            if let Some(a) = self.refresh_grants() {
                crate::accounts::check(
                    &a,
                    &self.st.host,
                    &[crate::accounts::Need::Global(
                        crate::accounts::SUPER | crate::accounts::BINLOG_ADMIN,
                    )],
                )?;
            }
            if self.txn.is_some() {
                return Err(SqlError::new(
                    1694,
                    "HY000",
                    "Cannot modify @@session.sql_log_bin inside a transaction",
                ));
            }
        }
        if global == Some(true) {
            if let Some(v) = &value {
                if shared.engine.set_variable(name, v)? {
                    return Ok(());
                }
            }
            let Some(def) = def else {
                if is_engine_var() {
                    return Err(SqlError::new(
                        1238,
                        "HY000",
                        format!("Variable '{name}' is a read only variable"),
                    ));
                }
                return Err(variables::unknown(name));
            };
            // Fixed by the config file: the binary log is written with them.
            if matches!(def.name, "server_id" | "gtid_domain_id") {
                return Err(SqlError::new(
                    1238,
                    "HY000",
                    format!("Variable '{name}' is a read only variable"),
                ));
            }
            if def.scope == VarScope::Session {
                return Err(SqlError::new(
                    1228,
                    "HY000",
                    format!(
                        "Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL"
                    ),
                ));
            }
            let v = match value {
                Some(v) => variables::validate(def, &v)?,
                None => {
                    let i = &shared.info;
                    variables::defaults(
                        &i.version,
                        &i.version_comment,
                        i.port,
                        &i.hostname,
                        &i.datadir,
                    )
                    .remove(def.name)
                    .unwrap_or(Value::Null)
                }
            };
            if def.name == "check_constraint_checks" && v == Value::Bytes(b"OFF".to_vec()) {
                return Err(SqlError::unsupported("check_constraint_checks = OFF"));
            }
            let mut g = shared.globals_mut();
            if matches!(def.name, "transaction_isolation" | "tx_isolation") {
                g.insert("transaction_isolation", v.clone());
                g.insert("tx_isolation", v);
            } else {
                g.insert(def.name, v);
            }
            return Ok(());
        }
        let Some(def) = def else {
            if is_engine_var() {
                return Err(SqlError::new(
                    1229,
                    "HY000",
                    format!(
                        "Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"
                    ),
                ));
            }
            return Err(variables::unknown(name));
        };
        if def.scope == VarScope::Global {
            return Err(SqlError::new(
                1229,
                "HY000",
                format!("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"),
            ));
        }
        let v = match value {
            Some(v) => variables::validate(def, &v)?,
            None => shared.global(def.name).unwrap_or(Value::Null),
        };
        match def.name {
            "autocommit" => {
                let on = v.as_i64().unwrap_or(1) != 0;
                if on && !self.st.autocommit {
                    self.commit_open()?;
                }
                self.st.autocommit = on;
            }
            "last_insert_id" | "identity" => {
                self.st.last_insert_id = v.as_i64().unwrap_or(0).max(0) as u64
            }
            "transaction_isolation" | "tx_isolation" => {
                self.st.vars.insert("transaction_isolation", v.clone());
                self.st.vars.insert("tx_isolation", v);
            }
            "check_constraint_checks" if v == Value::Bytes(b"OFF".to_vec()) => {
                return Err(SqlError::unsupported("check_constraint_checks = OFF"));
            }
            n => {
                self.st.vars.insert(n, v);
            }
        }
        Ok(())
    }
}

/// A server-side file of LOAD DATA INFILE, SELECT ... INTO OUTFILE or LOAD_FILE: a relative
/// path is taken from the data directory; with `secure_file_priv` set, only a path under that
/// folder (1290; for a file yet to be made, its folder decides).
fn server_path(
    info: &crate::shared::ServerInfo,
    name: &str,
) -> Result<std::path::PathBuf, SqlError> {
    let path = std::path::Path::new(&info.datadir).join(name);
    if !info.secure_file_priv.is_empty() {
        let real = match (
            std::fs::canonicalize(&path),
            path.parent(),
            path.file_name(),
        ) {
            (Ok(r), _, _) => r,
            (Err(_), Some(dir), Some(f)) => std::fs::canonicalize(dir)
                .map(|d| d.join(f))
                .unwrap_or_else(|_| path.clone()),
            _ => path.clone(),
        };
        if !real.starts_with(&info.secure_file_priv) {
            return Err(SqlError::new(
                1290,
                "HY000",
                "The MariaDB server is running with the --secure-file-priv option so it cannot execute this statement",
            ));
        }
    }
    Ok(path)
}

/// `SELECT rest`, for DO and KILL's expressions: an INTO clause there is a syntax error (as
/// in MariaDB), never a file written.
fn plain_select(rest: &str) -> Result<String, SqlError> {
    let sql = format!("SELECT {rest}");
    let into = crate::parse::parse(&sql).map(|p| p.into_file.is_some());
    if matches!(into, Ok(true)) {
        return Err(SqlError::syntax(
            "INTO OUTFILE / DUMPFILE belongs to a SELECT",
        ));
    }
    Ok(sql)
}

/// Warning 1287: `SELECT ... FROM ... INTO ...`.
const DEPRECATED_INTO: &str = "'<select expression> INTO <destination>;' is deprecated and will be removed in a future release. Please use 'SELECT <select list> INTO <destination> FROM...' instead";

fn errno(e: &std::io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// The system's message alone (Rust adds " (os error N)"), as MariaDB prints it.
fn os_text(e: &std::io::Error) -> String {
    let t = e.to_string();
    match t.rfind(" (os error ") {
        Some(at) => t[..at].to_string(),
        None => t,
    }
}

/// Error 4166: LOAD DATA LOCAL refused (`local_infile` off here, or the client did not
/// agree to send files).
fn local_refused() -> SqlError {
    SqlError::new(
        4166,
        "HY000",
        "The used command is not allowed because the MariaDB server or client has disabled the local infile capability",
    )
}

fn count_abort(shared: &Shared, e: &SqlError) {
    match e.code {
        1213 => shared.counters.inc(Counter::Deadlocks),
        1205 => shared.counters.inc(Counter::LockWaitTimeouts),
        _ => {}
    }
}

/// A SELECT without FROM (and without subqueries): it keeps the warning list.
fn uses_no_table(plan: &Plan) -> bool {
    matches!(plan, Plan::Select(p) if matches!(p.source, crate::plan::Source::Dual) && p.subqueries.is_empty())
}

/// A DML statement's result, the AUTO_INCREMENT value it generated first, and its warnings.
/// A statement's result, its first AUTO_INCREMENT value, its warnings, and FOUND_ROWS()
/// when that is not the result's row count (SQL_CALC_FOUND_ROWS).
type DmlOutcome = (QueryResult, Option<i64>, Raised, Option<u64>);

fn run_dml(plan: &Plan, txn: &mut Txn, cx: &EvalCx) -> Result<DmlOutcome, SqlError> {
    with_subqueries(plan, txn, cx, |txn, cx| run_dml_plan(plan, txn, cx))
}

/// Runs `f` once the statement's uncorrelated subqueries have their rows (in the context it
/// is given).
fn with_subqueries<T>(
    plan: &Plan,
    txn: &mut Txn,
    cx: &EvalCx,
    f: impl FnOnce(&mut Txn, &EvalCx) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    // The statement's subqueries first, in order (a later one may use an earlier one's rows).
    let subplans: &[crate::plan::SelectPlan] = match plan {
        Plan::Select(p) => &p.subqueries,
        Plan::Update(p) => &p.subqueries,
        Plan::Delete(p) => &p.subqueries,
        Plan::Insert(p) => p.select.as_ref().map_or(&[], |q| &q.subqueries),
        _ => &[],
    };
    // Correlated ones run later, for each row of the query naming them. Those of an INSERT
    // or UPDATE may compute the values written: division by zero is an error there too.
    // (The sql_mode is looked at only when there are subqueries to run.)
    let strict = !subplans.is_empty()
        && match plan {
            Plan::Insert(p) => !matches!(p.on_duplicate, crate::plan::OnDuplicate::Ignore),
            Plan::Update(_) => true,
            _ => false,
        }
        && crate::expr::strict_division(cx.env);
    let _writing = strict.then(|| crate::expr::WrittenValues::begin(true));
    let mut subq: Vec<crate::expr::SubValues> = Vec::with_capacity(subplans.len());
    for sp in subplans {
        if sp.outer_params > 0 {
            subq.push(Default::default());
            continue;
        }
        let rows = {
            let scx = EvalCx {
                params: cx.params,
                env: cx.env,
                subq: &subq,
                subplans,
                runner: None,
            };
            exec::run_select(sp, txn, &scx)?
        };
        subq.push(crate::expr::SubValues::new(
            rows.into_iter()
                .map(|r| r.into_iter().next().unwrap_or(Value::Null))
                .collect(),
        ));
    }
    drop(_writing);
    let cx = &EvalCx {
        params: cx.params,
        env: cx.env,
        subq: &subq,
        subplans,
        runner: None,
    };
    f(txn, cx)
}

fn run_dml_plan(plan: &Plan, txn: &mut Txn, cx: &EvalCx) -> Result<DmlOutcome, SqlError> {
    match plan {
        Plan::Select(p) => {
            let (rows, found) = exec::run_select_counting(p, txn, cx)?;
            Ok((
                QueryResult::Rows {
                    columns: p.columns.clone(),
                    rows,
                },
                None,
                Raised::default(),
                p.calc_found_rows.then_some(found),
            ))
        }
        Plan::Insert(p) => {
            let WriteResult {
                affected,
                matched: records,
                first_auto_id,
                duplicates,
                warnings,
            } = exec::run_insert(p, txn, cx)?;
            let info = if p.rows.len() > 1 || p.select.is_some() {
                format!("Records: {records}  Duplicates: {duplicates}  Warnings: 0")
            } else {
                String::new()
            };
            let mut res = ok(affected, first_auto_id.unwrap_or(0).max(0) as u64, info);
            recount_warnings(&mut res, warnings.count());
            Ok((res, first_auto_id, warnings, None))
        }
        Plan::Update(p) => {
            let WriteResult {
                affected,
                matched,
                warnings,
                ..
            } = exec::run_update(p, txn, cx)?;
            let mut res = ok(
                affected,
                0,
                format!("Rows matched: {matched}  Changed: {affected}  Warnings: 0"),
            );
            recount_warnings(&mut res, warnings.count());
            Ok((res, None, warnings, None))
        }
        Plan::Delete(p) => {
            let WriteResult {
                affected, warnings, ..
            } = exec::run_delete(p, txn, cx)?;
            let mut res = ok(affected, 0, String::new());
            recount_warnings(&mut res, warnings.count());
            Ok((res, None, warnings, None))
        }
        _ => Err(SqlError::syntax("internal: not a DML plan")),
    }
}

/// MySQL error 1305 for a savepoint name the transaction does not have.
fn no_savepoint(name: &str) -> SqlError {
    SqlError::new(1305, "42000", format!("SAVEPOINT {name} does not exist"))
}

/// A statement whose reads may come from a read view: a SELECT that locks no rows anywhere
/// (a locking read in a UNION operand, a derived table or a subquery makes the whole
/// statement read current versions, or the rows it locks would be found through the view).
fn reads_consistently(plan: &Plan) -> bool {
    fn locks(s: &crate::plan::SelectPlan) -> bool {
        s.lock.is_some()
            || s.subqueries.iter().any(locks)
            || match &s.source {
                crate::plan::Source::Derived { plan, .. } => locks(plan),
                crate::plan::Source::SetOperation { left, right, .. } => {
                    locks(left) || locks(right)
                }
                crate::plan::Source::Join(j) => j.inputs().any(
                    |i| matches!(i, crate::join::JoinInput::Derived { plan, .. } if locks(plan)),
                ),
                _ => false,
            }
    }
    matches!(plan, Plan::Select(s) if !locks(s))
}
