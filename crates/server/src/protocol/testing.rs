//! A small in-memory backend for exercising the protocol without the SQL layer.
//!
//! Owns: `EchoService`/`EchoBackend`, whose answers are a pure function of the statement text
//! and parameters, so tests can predict every byte.
//! Must never: be used by the `tierdb` binary; grow SQL semantics.
//!
//! Statements understood by `EchoBackend::query` (case-insensitive prefixes):
//! - `error <code>`: fails with that MySQL error code;
//! - `rows <n>`: a result set of `n` rows over one column of every `ColumnKind`;
//! - `echo <text>`: one row, one text column holding `<text>`;
//! - `show tables`: one table, `t` (whose COM_FIELD_LIST answer is two columns);
//! - `panic`: panics (to test the server's last-resort guard);
//! - anything else: OK with affected_rows = length of the text.
//!
//! Prepared statements: the parameter count is the number of `?`; executing any prepared
//! statement returns one row whose text columns hold each parameter's value as text (`NULL`
//! for NULL), or OK when it has no parameters.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::backend::{
    Backend, Column, ColumnKind, Credential, PreparedInfo, QueryResult, Service, SqlError, Value,
};
use super::handshake::native_hash;

/// A service with users `root` (no password) and `alice` (password `secret`) and databases
/// `test` and `db2`.
#[derive(Default)]
pub struct EchoService {
    pub bytes_received: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub max_packet_bytes: Option<u64>,
}

impl Service for EchoService {
    type Backend = EchoBackend;
    fn credential(&self, user: &str, _peer: IpAddr) -> Option<Credential> {
        match user {
            "root" => Some(Credential::NoPassword),
            "alice" => Some(Credential::NativeHash(native_hash(b"secret"))),
            _ => None,
        }
    }
    fn open(
        &self,
        _conn_id: u32,
        _user: &str,
        _host: &str,
        _peer: IpAddr,
        db: Option<&str>,
    ) -> Result<EchoBackend, SqlError> {
        let mut b = EchoBackend::default();
        if let Some(db) = db {
            b.init_db(db)?;
        }
        Ok(b)
    }
    fn add_bytes(&self, received: u64, sent: u64) {
        self.bytes_received.fetch_add(received, Ordering::Relaxed);
        self.bytes_sent.fetch_add(sent, Ordering::Relaxed);
    }
    fn max_packet_bytes(&self) -> u64 {
        self.max_packet_bytes.unwrap_or(64 << 20)
    }
}

/// One connection of `EchoService`.
#[derive(Default)]
pub struct EchoBackend {
    pub db: Option<String>,
    next_id: u32,
    stmts: HashMap<u32, u16>,
    pub ended: bool,
}

/// Computes a sample column's value for row `i`.
pub type SampleValue = fn(i64) -> Value;

/// One column of every kind, with a value for row `i`.
pub fn sample_columns() -> Vec<(Column, SampleValue)> {
    let col = |name: &str, kind, is_text| Column {
        kind,
        is_text,
        ..Column::text(name)
    };
    vec![
        (col("tiny", ColumnKind::Tiny, false), |i| {
            Value::Int(i % 100)
        }),
        (col("short", ColumnKind::Short, false), |i| Value::Int(-i)),
        (col("int24", ColumnKind::Int24, false), |i| {
            Value::Int(i * 1000)
        }),
        (col("long", ColumnKind::Long, false), |i| {
            Value::Int(i * 100_000)
        }),
        (col("longlong", ColumnKind::LongLong, false), |i| {
            Value::Int(i << 40)
        }),
        (col("float", ColumnKind::Float, false), |i| {
            Value::Double(i as f64 + 0.5)
        }),
        (col("double", ColumnKind::Double, false), |i| {
            Value::Double(i as f64 / 4.0)
        }),
        (
            Column {
                decimals: 2,
                ..col("decimal", ColumnKind::NewDecimal, false)
            },
            |i| Value::Bytes(format!("{i}.25").into_bytes()),
        ),
        (col("char", ColumnKind::String, true), |i| {
            Value::Bytes(format!("c{i}").into_bytes())
        }),
        (col("varchar", ColumnKind::VarString, true), |i| {
            if i % 2 == 1 {
                Value::Null
            } else {
                Value::Bytes(format!("v{i}").into_bytes())
            }
        }),
        (col("blob", ColumnKind::Blob, false), |i| {
            Value::Bytes(vec![0, 1, 2, i as u8])
        }),
        (col("date", ColumnKind::Date, false), |i| {
            Value::Bytes(format!("2024-01-{:02}", i % 28 + 1).into_bytes())
        }),
        (col("datetime", ColumnKind::DateTime, false), |i| {
            Value::Bytes(format!("2024-01-02 03:04:{:02}", i % 60).into_bytes())
        }),
        (col("timestamp", ColumnKind::Timestamp, false), |_| {
            Value::Bytes(b"2024-01-02 03:04:05.250000".to_vec())
        }),
        (col("null", ColumnKind::Null, false), |_| Value::Null),
    ]
}

fn text_of(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::Bytes(b) => Value::Bytes(b.clone()),
        other => Value::Bytes(other.to_string().into_bytes()),
    }
}

impl Backend for EchoBackend {
    fn query(&mut self, sql: &str) -> Result<QueryResult, SqlError> {
        let lower = sql.trim().to_ascii_lowercase();
        if let Some(code) = lower.strip_prefix("error ") {
            let code = code.trim().parse().unwrap_or(1064);
            return Err(SqlError::new(
                code,
                "HY000",
                format!("error {code} as asked"),
            ));
        }
        if let Some(n) = lower.strip_prefix("rows ") {
            let n: i64 = n.trim().parse().map_err(|_| SqlError::syntax("rows <n>"))?;
            let cols = sample_columns();
            let rows = (0..n)
                .map(|i| cols.iter().map(|(_, f)| f(i)).collect())
                .collect();
            return Ok(QueryResult::Rows {
                columns: cols.into_iter().map(|(c, _)| c).collect(),
                rows,
            });
        }
        if lower.starts_with("echo ") {
            let text = sql.trim().as_bytes()[5..].to_vec();
            return Ok(QueryResult::Rows {
                columns: vec![Column::text("echo")],
                rows: vec![vec![Value::Bytes(text)]],
            });
        }
        if lower.starts_with("show tables") {
            let rows = vec![vec![Value::Bytes(b"t".to_vec())]];
            return Ok(QueryResult::Rows {
                columns: vec![Column::text("Tables_in_test")],
                rows,
            });
        }
        if lower == "panic" {
            panic!("EchoBackend asked to panic");
        }
        Ok(QueryResult::Ok {
            affected_rows: sql.len() as u64,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        })
    }
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        if sql.trim().to_ascii_lowercase().starts_with("error") {
            return Err(SqlError::syntax("prepare error as asked"));
        }
        let n = sql.matches('?').count();
        let param_count =
            u16::try_from(n).map_err(|_| SqlError::syntax("too many placeholders"))?;
        self.next_id += 1;
        self.stmts.insert(self.next_id, param_count);
        let columns = (0..param_count)
            .map(|i| Column::text(format!("p{i}")))
            .collect();
        Ok(PreparedInfo {
            statement_id: self.next_id,
            param_count,
            columns,
        })
    }
    fn execute(&mut self, id: u32, params: &[Value]) -> Result<QueryResult, SqlError> {
        let n = *self
            .stmts
            .get(&id)
            .ok_or_else(|| SqlError::new(1243, "HY000", "unknown statement"))?;
        if usize::from(n) != params.len() {
            return Err(SqlError::new(1210, "HY000", "wrong parameter count"));
        }
        if params.is_empty() {
            return Ok(QueryResult::ok());
        }
        let columns = (0..n).map(|i| Column::text(format!("p{i}"))).collect();
        Ok(QueryResult::Rows {
            columns,
            rows: vec![params.iter().map(text_of).collect()],
        })
    }
    fn close_statement(&mut self, id: u32) {
        self.stmts.remove(&id);
    }
    fn reset_statement(&mut self, _id: u32) {}
    fn init_db(&mut self, db: &str) -> Result<(), SqlError> {
        match db {
            "test" | "db2" => {
                self.db = Some(db.to_string());
                Ok(())
            }
            _ => Err(SqlError::new(
                1049,
                "42000",
                format!("Unknown database '{db}'"),
            )),
        }
    }
    fn field_list(&mut self, table: &str) -> Result<Vec<Column>, SqlError> {
        if table == "t" {
            Ok(vec![
                Column {
                    primary_key: true,
                    not_null: true,
                    ..Column::bigint("id")
                },
                Column::text("name"),
            ])
        } else {
            Err(SqlError::new(
                1146,
                "42S02",
                format!("Table '{table}' doesn't exist"),
            ))
        }
    }
    fn reset_connection(&mut self) -> Result<(), SqlError> {
        self.stmts.clear();
        Ok(())
    }
    fn end(&mut self) {
        self.ended = true;
    }
}
