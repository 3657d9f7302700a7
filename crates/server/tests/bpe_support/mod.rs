//! Support shared by the `bpe_*` integration tests, built on `common` (which starts the real
//! binary): SHOW STATUS / SHOW VARIABLES as maps, a table whose every value the test can
//! recompute, client-side checksums of query results, and restarting the real binary on the
//! folder of a stopped `TestServer` (`TestServer` itself always starts in a fresh folder).
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::{Conn, Opts};

use crate::common::{self, TestServer};

/// A new connection as root to `port`, optionally with a default database.
pub fn connect(port: u16, db: Option<&str>) -> Conn {
    let url = format!("mysql://root@127.0.0.1:{port}/{}", db.unwrap_or(""));
    Conn::new(Opts::from_url(&url).expect("url"))
        .unwrap_or_else(|e| panic!("cannot connect to 127.0.0.1:{port}: {e}"))
}

/// `(Variable_name, Value)` rows of a SHOW statement.
#[derive(Clone, Debug, Default)]
pub struct Vars(pub HashMap<String, String>);

impl Vars {
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
    pub fn text(&self, name: &str) -> &str {
        self.0.get(name).map(String::as_str).unwrap_or_else(|| {
            let mut names: Vec<_> = self.0.keys().collect();
            names.sort();
            panic!("{name} is not listed; got {names:?}")
        })
    }
    pub fn u64(&self, name: &str) -> u64 {
        let t = self.text(name);
        t.parse()
            .unwrap_or_else(|_| panic!("{name} = {t:?} is not an integer"))
    }
    pub fn f64(&self, name: &str) -> f64 {
        let t = self.text(name);
        t.parse()
            .unwrap_or_else(|_| panic!("{name} = {t:?} is not a number"))
    }
    /// The `Tierdb_bpe_*` counters worth printing when an assertion fails.
    pub fn brief(&self) -> String {
        let mut v: Vec<_> = self
            .0
            .iter()
            .filter(|(k, _)| {
                let per_device = k
                    .strip_prefix("Tierdb_bpe_device")
                    .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()));
                !per_device || k.ends_with("_state") || k.ends_with("_device_errors")
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        v.sort();
        v.join(" ")
    }
}

fn show(c: &mut Conn, sql: &str) -> Vars {
    let rows: Vec<(String, String)> = c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    Vars(rows.into_iter().collect())
}

/// `SHOW GLOBAL STATUS LIKE 'Tierdb_bpe%'` plus the buffer pool's counters.
pub fn bpe_status(c: &mut Conn) -> Vars {
    let mut v = show(c, "SHOW GLOBAL STATUS LIKE 'Tierdb_bpe%'");
    v.0.extend(show(c, "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool%'").0);
    v.0.extend(show(c, "SHOW GLOBAL STATUS LIKE 'Tierdb_checkpoints'").0);
    v
}

/// `SHOW VARIABLES LIKE pattern`.
pub fn variables(c: &mut Conn, like: &str) -> Vars {
    show(c, &format!("SHOW VARIABLES LIKE '{like}'"))
}

/// The MySQL error code of a failed statement (panics if it succeeded or failed otherwise).
pub fn error_code(r: Result<(), mysql::Error>, what: &str) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        Err(e) => panic!("{what}: expected a server error, got {e}"),
        Ok(()) => panic!("{what}: expected an error, but it succeeded"),
    }
}

/// A table `db.name (id INT PRIMARY KEY, v BIGINT, k INT, pad VARCHAR)` whose values are a
/// function of `id` (1..=rows), with a secondary index on `k`.
#[derive(Clone, Debug)]
pub struct KnownTable {
    pub db: &'static str,
    pub name: &'static str,
    pub rows: u32,
    pub pad_len: usize,
}

impl KnownTable {
    pub fn v(id: u32) -> i64 {
        (u64::from(id).wrapping_mul(2_654_435_761) % 1_000_000_007) as i64
    }
    pub fn k(id: u32) -> i64 {
        i64::from(id % 1000)
    }
    pub fn pad(&self, id: u32) -> String {
        let unit = format!("{id:07}-");
        unit.repeat(self.pad_len / unit.len() + 1)[..self.pad_len].to_string()
    }
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }

    /// Creates the database (if missing), the table and its index, and inserts every row.
    pub fn create_and_load(&self, c: &mut Conn) {
        c.query_drop(format!("CREATE DATABASE IF NOT EXISTS {}", self.db))
            .expect("create database");
        c.query_drop(format!(
            "CREATE TABLE {} (id INT NOT NULL PRIMARY KEY, v BIGINT NOT NULL, k INT NOT NULL, \
             pad VARCHAR({}) NOT NULL)",
            self.qualified(),
            self.pad_len.max(1)
        ))
        .expect("create table");
        c.query_drop(format!(
            "CREATE INDEX k_{0} ON {1} (k)",
            self.name,
            self.qualified()
        ))
        .expect("create index");
        let per_stmt = (256 * 1024 / (self.pad_len + 40)).clamp(1, 500) as u32;
        let mut id = 1;
        while id <= self.rows {
            let end = (id + per_stmt - 1).min(self.rows);
            let values: Vec<String> = (id..=end)
                .map(|i| format!("({i},{},{},'{}')", Self::v(i), Self::k(i), self.pad(i)))
                .collect();
            c.query_drop(format!(
                "INSERT INTO {} (id, v, k, pad) VALUES {}",
                self.qualified(),
                values.join(",")
            ))
            .unwrap_or_else(|e| panic!("insert rows {id}..={end}: {e}"));
            id = end + 1;
        }
    }

    /// Checks one row read back as `(v, pad)` against the values it was loaded with, plus
    /// `v_delta` (what later updates added).
    pub fn check(&self, id: u32, got: Option<(i64, String)>, v_delta: i64) -> Result<(), String> {
        match got {
            None => Err(format!("{}: row {id} is missing", self.name)),
            Some((v, pad)) => {
                if v != Self::v(id) + v_delta {
                    return Err(format!(
                        "{}: row {id} has v = {v}, expected {}",
                        self.name,
                        Self::v(id) + v_delta
                    ));
                }
                if pad != self.pad(id) {
                    return Err(format!("{}: row {id} has a wrong pad", self.name));
                }
                Ok(())
            }
        }
    }
}

/// FNV-1a over every value of every row `sql` returns (in the order returned), and the row
/// count: a checksum computed the same way before and after an event.
pub fn checksum(c: &mut Conn, sql: &str) -> (u64, u64) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for x in b {
            h ^= u64::from(*x);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    let mut n = 0;
    let result = c.query_iter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    for row in result {
        let row = row.unwrap_or_else(|e| panic!("{sql}: {e}"));
        n += 1;
        for v in row.unwrap() {
            match v {
                mysql::Value::NULL => eat(b"\xffNULL"),
                mysql::Value::Bytes(b) => eat(&b),
                other => eat(other.as_sql(true).as_bytes()),
            }
            eat(b"\x00");
        }
        eat(b"\n");
    }
    (n, h)
}

/// Takes the folder (data, redo, default BPE file, logs) out of a `TestServer`, so that
/// dropping it (which SIGKILLs a still-running process) does not delete the folder.
pub fn take_dir(server: &mut TestServer) -> tempfile::TempDir {
    std::mem::replace(&mut server.dir, tempfile::tempdir().expect("tempdir"))
}

/// `tierdb serve` started again on an existing folder laid out as `TestServer` lays it out
/// (`data/`, `redo/`, and the default BPE file `bpe/bpe0.cache`), on a new free port.
pub struct Restarted {
    pub port: u16,
    pub dir: tempfile::TempDir,
    log: PathBuf,
    child: Option<Child>,
}

impl Restarted {
    /// Starts the real binary with `extra` arguments and waits until it sends a greeting.
    pub fn start_in(dir: tempfile::TempDir, extra: &[&str]) -> Restarted {
        let mut n = 1;
        while dir.path().join(format!("restart{n}.log")).exists() {
            n += 1;
        }
        let log = dir.path().join(format!("restart{n}.log"));
        for attempt in 0..5 {
            let port = common::free_port();
            let file = std::fs::File::create(&log).expect("log file");
            let mut child = Command::new(common::BIN)
                .arg("serve")
                .arg("--port")
                .arg(port.to_string())
                .arg("--data-dir")
                .arg(dir.path().join("data"))
                .arg("--redo-dir")
                .arg(dir.path().join("redo"))
                .args(extra)
                .env("RUST_LOG", "info")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(file)
                .spawn()
                .expect("cannot start tierdb");
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                if let Ok(Some(status)) = child.try_wait() {
                    let text = std::fs::read_to_string(&log).unwrap_or_default();
                    if text.contains("cannot listen") && attempt < 4 {
                        break;
                    }
                    panic!("restarted tierdb exited early ({status}):\n{text}");
                }
                if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut b = [0u8; 5];
                    if s.read_exact(&mut b).is_ok() && b[4] == 10 {
                        return Restarted {
                            port,
                            dir,
                            log,
                            child: Some(child),
                        };
                    }
                }
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "restarted tierdb did not accept connections within 60 s:\n{}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("could not find a free port for tierdb");
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM and wait (up to `timeout`) for the exit status.
    pub fn stop(&mut self, timeout: Duration) -> Option<ExitStatus> {
        common::stop_child(self.child.take()?, timeout)
    }
}

impl Drop for Restarted {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- restarted tierdb log ---\n{}", self.log());
        }
    }
}

/// Milliseconds since `t`, for progress lines.
pub fn ms(t: Instant) -> u128 {
    t.elapsed().as_millis()
}
