//! Shared test setup: an engine under a temp dir, one Shared, sessions on database `sbtest`.
#![allow(dead_code)]

use std::sync::Arc;
use tierdb_engine::{Engine, EngineConfig, Value};
use tierdb_sql::{QueryResult, ServerInfo, Session, Shared, SqlError};

pub struct Env {
    pub _dir: tempfile::TempDir,
    pub shared: Arc<Shared>,
}

/// An engine (and its Shared) over `dir`, which may hold one from an earlier open.
pub fn open_shared(dir: &std::path::Path) -> Arc<Shared> {
    let engine = Engine::open(EngineConfig::under(dir)).expect("engine");
    Shared::new(engine, ServerInfo::default()).unwrap()
}

pub fn env() -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(EngineConfig::under(dir.path())).expect("engine");
    let shared = Shared::new(engine, ServerInfo::default()).unwrap();
    let mut s = Session::new(shared.clone(), 999, "root", "localhost", None).expect("session");
    s.query("CREATE DATABASE sbtest").expect("create db");
    s.end();
    Env { _dir: dir, shared }
}

impl Env {
    pub fn session(&self, id: u32) -> Session {
        Session::new(
            self.shared.clone(),
            id,
            "sbtest",
            "127.0.0.1",
            Some("sbtest"),
        )
        .expect("session")
    }
}

pub fn rows(r: QueryResult) -> Vec<Vec<Value>> {
    match r {
        QueryResult::Rows { rows, .. } => rows,
        other => panic!("expected rows, got {other:?}"),
    }
}

pub fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    rows(s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}")))
}

/// The ids of table `t`, ascending.
pub fn ids(s: &mut Session) -> Vec<i64> {
    q(s, "SELECT id FROM t ORDER BY id")
        .iter()
        .map(|r| int(&r[0]))
        .collect()
}

pub fn exec(s: &mut Session, sql: &str) -> QueryResult {
    s.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub fn err(s: &mut Session, sql: &str) -> SqlError {
    match s.query(sql) {
        Ok(r) => panic!("{sql}: expected an error, got {r:?}"),
        Err(e) => e,
    }
}

pub fn affected(r: &QueryResult) -> u64 {
    match r {
        QueryResult::Ok { affected_rows, .. } => *affected_rows,
        other => panic!("expected OK, got {other:?}"),
    }
}

pub fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Bytes(b) => String::from_utf8_lossy(b)
            .parse()
            .unwrap_or_else(|_| panic!("not an int: {v:?}")),
        other => panic!("not an int: {other:?}"),
    }
}

pub fn text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// An env with `t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL)`, index `k_idx` on
/// `k`, rows `(i, 10 * i, 0)` for `i` in `1..=rows`, and a 1 s lock wait timeout.
pub fn env_with_small_table(rows: i64) -> Env {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL)",
    );
    exec(&mut s, "CREATE INDEX k_idx ON t (k)");
    let values: Vec<String> = (1..=rows)
        .map(|i| format!("({i}, {}, 0)", 10 * i))
        .collect();
    exec(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(", ")),
    );
    exec(&mut s, "SET GLOBAL innodb_lock_wait_timeout = 1");
    e
}

pub fn int_value(v: i64) -> Value {
    Value::Int(v)
}
