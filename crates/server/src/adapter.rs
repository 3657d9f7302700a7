//! The glue between the protocol seam and the SQL layer: `Backend` for `tierdb_sql::Session`
//! and `Service` for the server (accounts from the config, sessions from `tierdb_sql::Shared`).
//!
//! Owns: handing the config file's accounts to the SQL layer's account list, the login
//! (which account a client gets, with which credential), the COM_STATISTICS line, and
//! re-creating a session for COM_RESET_CONNECTION.
//! Must never: encode protocol bytes; hold a lock across a call into the SQL layer.
//!
//! Accounts (`tierdb_sql::accounts`): a user listed in the config with a password is
//! `user@%` and logs in from anywhere the server listens; one with an empty password is
//! `user@localhost` and logs in only from a loopback address. Both hold every privilege.
//! Accounts made with CREATE USER / GRANT are stored in the catalog and checked per statement.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tierdb_sql::{Session, Shared};

use crate::config::Config;
use crate::listener::ListenerState;
use crate::protocol::backend::{
    Backend, Column, Credential, PreparedInfo, QueryResult, Service, SqlError, Value,
};
use crate::protocol::constants::status;

/// The server as the protocol sees it.
pub struct TierService {
    shared: Arc<Shared>,
    listener: Arc<ListenerState>,
    questions: Arc<AtomicU64>,
    max_packet_bytes: u64,
}

impl TierService {
    pub fn new(
        shared: Arc<Shared>,
        cfg: &Config,
        listener: Arc<ListenerState>,
    ) -> Result<TierService, String> {
        let mut users = Vec::new();
        for u in &cfg.users {
            users.push((u.name.clone(), u.native_hash()?));
        }
        shared.accounts.set_config_accounts(&users);
        Ok(TierService {
            shared,
            listener,
            questions: Arc::new(AtomicU64::new(0)),
            max_packet_bytes: cfg.max_allowed_packet.bytes(),
        })
    }
}

impl Service for TierService {
    type Backend = SqlBackend;

    fn credential(&self, user: &str, peer: IpAddr) -> Option<Credential> {
        let account = self.shared.accounts.login(user, peer)?;
        Some(match account.auth {
            Some(hash) => Credential::NativeHash(hash),
            None => Credential::NoPassword,
        })
    }

    fn open(
        &self,
        conn_id: u32,
        user: &str,
        host: &str,
        peer: IpAddr,
        db: Option<&str>,
    ) -> Result<SqlBackend, SqlError> {
        let account = self.shared.accounts.login(user, peer).ok_or_else(|| {
            SqlError::new(
                1045,
                "28000",
                format!("Access denied for user '{user}'@'{host}'"),
            )
        })?;
        // Session::login registers the connection (SHOW PROCESSLIST); Session::end
        // unregisters.
        let session = Session::login(self.shared.clone(), conn_id, &account, user, host, db)
            .inspect_err(|e| {
                if e.code == 1044 {
                    self.shared.count_access_denied();
                }
            })?;
        Ok(SqlBackend {
            session,
            account,
            shared: self.shared.clone(),
            conn_id,
            user: user.to_string(),
            host: host.to_string(),
            questions: self.questions.clone(),
        })
    }

    fn login_refused(&self) {
        self.shared.count_access_denied();
    }

    fn close(&self, conn_id: u32) {
        self.shared.unregister_connection(conn_id);
    }

    fn add_bytes(&self, received: u64, sent: u64) {
        self.shared.add_bytes(received, sent);
    }

    fn statistics(&self) -> String {
        let uptime = self.listener.uptime().as_secs();
        let questions = self.questions.load(Ordering::Relaxed);
        let qps = questions as f64 / uptime.max(1) as f64;
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: {qps:.3}",
            self.listener.active()
        )
    }

    fn max_packet_bytes(&self) -> u64 {
        self.max_packet_bytes
    }

    fn server_version(&self) -> String {
        self.shared.info().version.clone()
    }
}

/// One connection's SQL session.
pub struct SqlBackend {
    session: Session,
    /// The account the client logged in as (kept for COM_RESET_CONNECTION).
    account: Arc<tierdb_sql::accounts::Account>,
    shared: Arc<Shared>,
    conn_id: u32,
    user: String,
    host: String,
    questions: Arc<AtomicU64>,
}

impl SqlBackend {
    fn count(&self) {
        self.questions.fetch_add(1, Ordering::Relaxed);
    }
}

impl Backend for SqlBackend {
    fn query(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        self.count();
        self.session.query(sql)
    }
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        self.session.prepare(sql)
    }
    fn execute(&mut self, statement_id: u32, params: &[Value]) -> Result<QueryResult, SqlError> {
        self.count();
        self.session.execute(statement_id, params)
    }
    fn close_statement(&mut self, statement_id: u32) {
        self.session.close_statement(statement_id);
    }
    fn reset_statement(&mut self, statement_id: u32) {
        self.session.reset_statement(statement_id);
    }
    fn init_db(&mut self, db: &str) -> Result<(), SqlError> {
        self.session.init_db(db)
    }
    fn field_list(&mut self, table: &str) -> Result<Vec<Column>, SqlError> {
        self.session.field_list(table)
    }
    fn reset_connection(&mut self) -> Result<(), SqlError> {
        // Keep the current database; everything else starts afresh. The old session ends
        // first (it unregisters the connection id the new one registers again).
        let db = self.session.current_db().map(str::to_string);
        self.session.end();
        let fresh = Session::login(
            self.shared.clone(),
            self.conn_id,
            &self.account,
            &self.user,
            &self.host,
            db.as_deref(),
        )
        .or_else(|_| {
            Session::login(
                self.shared.clone(),
                self.conn_id,
                &self.account,
                &self.user,
                &self.host,
                None,
            )
        })?;
        self.session = fresh;
        Ok(())
    }
    fn status_flags(&self) -> u16 {
        let mut flags = 0;
        if self.session.autocommit() {
            flags |= status::AUTOCOMMIT;
        }
        if self.session.in_transaction() {
            flags |= status::IN_TRANS;
        }
        flags
    }
    fn warning_count(&self) -> u16 {
        self.session.warning_count()
    }
    fn load_local(
        &mut self,
        data: Option<&mut dyn std::io::Read>,
    ) -> Result<QueryResult, SqlError> {
        self.session.load_local(data)
    }
    fn register_replica(&mut self, server_id: u32) -> Result<(), SqlError> {
        self.session.register_replica(server_id)
    }
    fn binlog_dump(
        &mut self,
        file: &str,
        pos: u64,
        flags: u16,
    ) -> Result<Box<dyn crate::protocol::backend::BinlogStream>, SqlError> {
        let d = self.session.binlog_dump(file, pos, flags)?;
        Ok(Box::new(DumpStream(d)))
    }
    fn end(&mut self) {
        self.session.end();
    }
}

/// A replica's binary-log stream (errors are MariaDB's 1236).
struct DumpStream(tierdb_binlog::dump::Dump);

impl crate::protocol::backend::BinlogStream for DumpStream {
    fn next_event(&mut self) -> Result<Option<Vec<u8>>, SqlError> {
        self.0
            .next_event()
            .map_err(|e| SqlError::new(1236, "HY000", e.0))
    }
}

/// What the SQL layer reports about this server (`@@port`, `@@datadir`, version...).
pub fn server_info(cfg: &Config) -> tierdb_sql::ServerInfo {
    let datadir = std::fs::canonicalize(&cfg.data_dir).unwrap_or_else(|_| cfg.data_dir.clone());
    let mut datadir = datadir.display().to_string();
    if !datadir.ends_with('/') {
        datadir.push('/');
    }
    tierdb_sql::ServerInfo {
        port: cfg.port,
        hostname: hostname(),
        socket: String::new(),
        datadir,
        secure_file_priv: match cfg.secure_file_priv.as_os_str().is_empty() {
            true => String::new(),
            false => std::fs::canonicalize(&cfg.secure_file_priv)
                .unwrap_or_else(|_| cfg.secure_file_priv.clone())
                .display()
                .to_string(),
        },
        local_infile: cfg.local_infile,
        ..Default::default()
    }
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
