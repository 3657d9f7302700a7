//! The one seam between the wire protocol and whatever answers SQL.
//!
//! Owns: the `Backend` trait (one per connection: statements, prepared statements, current
//! database) and the `Service` trait (one per server: who may log in, opening backends,
//! server-wide counters).
//! Must never: mention bytes on the wire — implementations see SQL text, values and results;
//! the protocol module sees only these traits.

use std::net::IpAddr;

pub use tierdb_sql::result::{Column, ColumnKind, PreparedInfo, QueryResult, SqlError, Value};

use super::constants::status;

/// One connection's view of the database.
pub trait Backend {
    /// Runs one statement given as text (COM_QUERY).
    fn query(&mut self, sql: &str) -> Result<QueryResult, SqlError>;
    /// Prepares a statement (COM_STMT_PREPARE). The backend chooses the statement id.
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError>;
    /// Runs a prepared statement with one value per placeholder (COM_STMT_EXECUTE).
    fn execute(&mut self, statement_id: u32, params: &[Value]) -> Result<QueryResult, SqlError>;
    /// Forgets a prepared statement (COM_STMT_CLOSE; no reply).
    fn close_statement(&mut self, statement_id: u32);
    /// Resets a prepared statement's state (COM_STMT_RESET).
    fn reset_statement(&mut self, statement_id: u32);
    /// Switches the current database (COM_INIT_DB, `USE`). Unknown database: error 1049.
    fn init_db(&mut self, db: &str) -> Result<(), SqlError>;
    /// The columns of a table in the current database (COM_FIELD_LIST).
    fn field_list(&mut self, table: &str) -> Result<Vec<Column>, SqlError>;
    /// COM_RESET_CONNECTION: roll back, drop prepared statements, user variables and session
    /// settings; keep the user and the current database.
    fn reset_connection(&mut self) -> Result<(), SqlError>;
    /// Ends the session: rolls back an open transaction, frees statements. Called exactly once,
    /// however the connection ends.
    fn end(&mut self);
    /// SERVER_STATUS_* flags for OK/EOF packets (in transaction, autocommit).
    fn status_flags(&self) -> u16 {
        status::AUTOCOMMIT
    }
    /// Warnings the last statement raised (the count a result set's end carries).
    fn warning_count(&self) -> u16 {
        0
    }
    /// The client's file for a statement that answered `QueryResult::LocalInfile` (LOAD DATA
    /// LOCAL): `data` reads its bytes (None: the client did not agree to send files). The
    /// result is the statement's.
    fn load_local(
        &mut self,
        _data: Option<&mut dyn std::io::Read>,
    ) -> Result<QueryResult, SqlError> {
        Err(SqlError::unsupported("LOAD DATA LOCAL"))
    }
    /// COM_REGISTER_SLAVE: a replica announces itself before its dump.
    fn register_replica(&mut self, _server_id: u32) -> Result<(), SqlError> {
        Err(SqlError::unsupported("replication"))
    }
    /// COM_BINLOG_DUMP: the binary log from `file` / `pos` on (or the replica's GTID position
    /// the session was told), as a stream of events.
    fn binlog_dump(
        &mut self,
        _file: &str,
        _pos: u64,
        _flags: u16,
    ) -> Result<Box<dyn BinlogStream>, SqlError> {
        Err(SqlError::unsupported("replication"))
    }
}

/// Binary-log events for a replica, one at a time.
pub trait BinlogStream {
    /// The next event, waiting for one (heartbeats included); None: the stream is over.
    fn next_event(&mut self) -> Result<Option<Vec<u8>>, SqlError>;
}

/// How a user's password is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// The account has an empty password: the client must send an empty auth response.
    NoPassword,
    /// SHA1(SHA1(password)), as mysql_native_password stores it.
    NativeHash([u8; 20]),
}

/// What the server offers every connection.
pub trait Service: Send + Sync {
    type Backend: Backend;
    /// The credential of `user` when connecting from `peer`; `None` refuses the login
    /// (error 1045 either way, so clients cannot probe for user names).
    fn credential(&self, user: &str, peer: IpAddr) -> Option<Credential>;
    /// Opens a session for an authenticated user, who connected from `peer` (shown as
    /// `host`). `db`: the database named at connect (unknown: error 1049).
    fn open(
        &self,
        conn_id: u32,
        user: &str,
        host: &str,
        peer: IpAddr,
        db: Option<&str>,
    ) -> Result<Self::Backend, SqlError>;
    /// A login was refused (wrong password, unknown account, a database it may not use).
    fn login_refused(&self) {}
    /// The connection `conn_id` ended (its backend's `end` has run).
    fn close(&self, conn_id: u32) {
        let _ = conn_id;
    }
    /// Traffic counters for `SHOW STATUS` (Bytes_received, Bytes_sent).
    fn add_bytes(&self, received: u64, sent: u64) {
        let _ = (received, sent);
    }
    /// The COM_STATISTICS line, e.g. "Uptime: 5  Threads: 1  Questions: 9 ...".
    fn statistics(&self) -> String {
        String::from("Uptime: 0")
    }
    /// Largest packet a client may send (max_allowed_packet), in bytes.
    fn max_packet_bytes(&self) -> u64 {
        64 << 20
    }
    /// The version string announced in the handshake.
    fn server_version(&self) -> String {
        format!("8.0.36-tierdb-{}", env!("CARGO_PKG_VERSION"))
    }
}
