//! SQL text through the whole SQL layer and storage engine: `tierdb_sql::Session::query`,
//! `prepare` and `execute` on one engine opened once (lazily) in a temp dir.
//!
//! Every run gets a new session on database `fz` and a fresh table
//! `t (id INT PRIMARY KEY, k INT, c CHAR(3))` with a secondary index on `k` and three rows
//! (as in `crates/sql/tests/arbitrary_sql_never_panics.rs`). The input, as lossy UTF-8, is
//! split on '\n' into at most 8 statements; each is run with `query`, then `prepare`d and,
//! when that succeeds, executed with the right number of parameters and with a wrong one.
//!
//! The engine writes a binary log (`log_bin` on), so DDL, row events and BINLOG statements
//! run too.
//!
//! Properties: never panics or hangs; afterwards the session still answers `SELECT 1`.

#![no_main]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tierdb_engine::{Engine, EngineConfig, Value};
use tierdb_sql::{ServerInfo, Session, Shared};

struct Env {
    shared: Arc<Shared>,
}

/// The engine's directory. The static `Env` is never dropped (libFuzzer leaves through
/// `exit`), so an `atexit` hook removes the directory; after a crash (abort) it stays
/// behind as `/dev/shm/tierdb-fuzz-sql*`.
static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();

extern "C" fn remove_dir() {
    if let Some(d) = DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let root = if std::path::Path::new("/dev/shm").is_dir() {
            std::path::PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let dir = tempfile::Builder::new()
            .prefix("tierdb-fuzz-sql")
            .tempdir_in(root)
            .expect("tempdir")
            .keep();
        DIR.set(dir.clone()).expect("engine opened once");
        // SAFETY: registers a plain `extern "C" fn` with no arguments.
        unsafe { libc::atexit(remove_dir) };
        let mut cfg = EngineConfig::under(&dir);
        cfg.buffer_pool_size_bytes = 32 << 20;
        cfg.flush_log_at_trx_commit = 0;
        cfg.lock_wait_timeout = Duration::from_millis(200);
        // With a binary log: DDL and row events are written, BINLOG statements applied.
        let binlog = tierdb_binlog::log::Binlog::open(tierdb_binlog::log::BinlogConfig::new(
            dir.join("binlog"),
        ))
        .expect("binlog");
        cfg.binlog = Some(binlog.clone());
        let engine = Engine::open(cfg).expect("engine");
        binlog.start().expect("binlog start");
        // Server-side files (LOAD DATA INFILE, INTO OUTFILE, LOAD_FILE) stay in the folder.
        let real = dir.canonicalize().expect("canonical folder");
        let info = ServerInfo {
            datadir: format!("{}/", real.display()),
            secure_file_priv: real.display().to_string(),
            ..ServerInfo::default()
        };
        let shared = Shared::new(engine, info).expect("shared");
        shared.set_binlog(binlog);
        Env { shared }
    })
}

fn must(s: &mut Session, sql: &str) {
    if let Err(e) = s.query(sql) {
        panic!("setup statement {sql:?} failed: {e}");
    }
}

fn params(n: usize, salt: usize) -> Vec<Value> {
    const POOL: usize = 8;
    (0..n)
        .map(|i| match (i + salt) % POOL {
            0 => Value::Int(1),
            1 => Value::Null,
            2 => Value::Bytes(b"a".to_vec()),
            3 => Value::Double(2.5),
            4 => Value::Int(i64::MIN),
            5 => Value::Double(f64::NAN),
            6 => Value::UInt(u64::MAX),
            _ => Value::Bytes(vec![0xff, 0, b'\'']),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    static NEXT_CONN: AtomicU32 = AtomicU32::new(1);
    let e = env();
    let conn = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
    let mut s = Session::new(e.shared.clone(), conn, "root", "localhost", None).expect("session");
    must(&mut s, "CREATE DATABASE IF NOT EXISTS fz");
    must(&mut s, "USE fz");
    must(&mut s, "DROP TABLE IF EXISTS t");
    must(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(3))");
    must(&mut s, "CREATE INDEX kk ON t (k)");
    must(&mut s, "INSERT INTO t VALUES (1, 1, 'a'), (2, NULL, 'b'), (3, 3, NULL)");

    // As the server reads statement bytes (raw non-UTF-8 bytes kept, see `rawtext`).
    let text = tierdb_sql::rawtext::statement_text(data);
    for (i, sql) in text.split('\n').take(8).enumerate() {
        let _ = s.query(sql);
        if let Ok(p) = s.prepare(sql) {
            let n = usize::from(p.param_count);
            let _ = s.execute(p.statement_id, &params(n, i));
            let _ = s.execute(p.statement_id, &params(n + 1, i + 3));
            s.close_statement(p.statement_id);
        }
    }
    if let Err(e) = s.query("SELECT 1") {
        panic!("session unusable after the input: {e}");
    }
    s.end();
});
