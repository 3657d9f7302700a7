//! Helpers shared by the integration tests that run the real MariaDB 10.11 tools: finding a
//! tool ([`tool`]), running a command that must succeed ([`run`]), building columns and
//! values ([`col`], [`b`], [`big_blob`], [`hex_upper`]), the `(id BIGINT, pad VARCHAR(400))`
//! table of the engine-level tests ([`id_pad_table`], [`id_pad_row`], [`stored_rows`]), and a
//! scratch
//! `mariadbd` ([`Server`]), killed when dropped.

#![allow(dead_code)]

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tierdb_engine::{Collation, ColumnDef, ColumnType, Engine, Row, Table, TableDef, Value};

/// The path of an installed MariaDB tool; panics (the test fails, it is not skipped) when
/// it is missing.
pub fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("`{name}` is not installed: run scripts/setup.sh (installs MariaDB 10.11)");
}

/// A plain column: no default, not auto-increment, `utf8mb4_general_ci`.
pub fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable,
        auto_increment: false,
        default: None,
        fill: None,
        collation: Collation::GeneralCi,
        on_update_now: false,
    }
}

/// `name (id BIGINT NOT NULL PRIMARY KEY, pad VARCHAR(400) NOT NULL)`.
pub fn id_pad_table(name: &str) -> TableDef {
    let int = ColumnType::Int {
        bytes: 8,
        unsigned: false,
    };
    TableDef {
        name: name.into(),
        columns: vec![
            col("id", int, false),
            col("pad", ColumnType::VarChar(400), false),
        ],
        primary_key: vec![0],
        indexes: Vec::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

/// A row of `id_pad_table`: a 300-byte pad starting with `tag` and the id.
pub fn id_pad_row(id: i64, tag: &str) -> Row {
    let mut pad = format!("{tag}-{id}-").into_bytes();
    pad.resize(300, b'a' + id.rem_euclid(26) as u8);
    vec![Value::Int(id), Value::Bytes(pad)]
}

/// Every row of an `id_pad_table`, by id, read in a new transaction.
pub fn stored_rows(e: &Engine, t: &std::sync::Arc<Table>) -> std::collections::BTreeMap<i64, Row> {
    let mut tx = e.begin();
    tx.scan(t, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
        .expect("scan")
        .map(|r| {
            let r = r.expect("row");
            (r[0].as_i64().expect("integer id"), r)
        })
        .collect()
}

/// A string value as tierdb stores it (its UTF-8 bytes).
pub fn b(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// 70 000 bytes (more than a BLOB holds): 0, 1, ..., 250, 0, 1, ...
pub fn big_blob() -> Vec<u8> {
    (0..70_000u32).map(|i| (i % 251) as u8).collect()
}

/// `bytes` as upper-case hex digits, as SQL's `HEX()` prints them.
pub fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|c| format!("{c:02X}")).collect()
}

/// Runs `cmd` and returns its output; panics with its stdout and stderr unless it exits 0.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
            .chars()
            .take(4000)
            .collect::<String>(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A scratch `mariadbd` (server id 99, UTC, utf8mb4) in a directory of its own, killed when
/// dropped (also on panic).
pub struct Server {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// A server without a binary log, in `dir` (its data in `dir/data`).
    pub fn start(dir: &Path) -> Server {
        Server::launch(dir, false)
    }

    /// A server writing a row-based binary log, `dir/data/mysql-bin.NNNNNN`.
    pub fn start_with_binlog(dir: &Path) -> Server {
        Server::launch(dir, true)
    }

    fn launch(dir: &Path, binlog: bool) -> Server {
        let data = dir.join("data");
        // Its own temporary folder (bootstraps sharing /tmp have failed with 1051).
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp dir");
        let chown = |p: &Path| run(Command::new("chown").arg("-R").arg("mysql:mysql").arg(p));
        chown(dir);
        run(Command::new(tool("mariadb-install-db"))
            .arg("--no-defaults")
            .arg("--user=mysql")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db"));
        chown(dir);
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port");
        let socket = dir.join("mysqld.sock");
        let log = dir.join("error.log");
        let mut cmd = Command::new(tool("mariadbd"));
        cmd.arg("--no-defaults")
            .arg("--user=mysql")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", log.display()))
            .arg("--server-id=99");
        if binlog {
            cmd.arg(format!("--log-bin={}", data.join("mysql-bin").display()))
                .arg("--binlog-format=ROW");
        }
        let child = cmd
            .arg("--default-time-zone=+00:00")
            .arg("--character-set-server=utf8mb4")
            .arg("--innodb-buffer-pool-size=64M")
            .arg("--max-allowed-packet=64M")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mariadbd");
        let server = Server { child, socket, log };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = server.client().arg("-e").arg("SELECT 1").output();
            if matches!(&ok, Ok(o) if o.status.success()) {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "mariadbd did not start; its log:\n{}",
                std::fs::read_to_string(&server.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// A `mariadb` client command connected as root (add `-e SQL` or stdin).
    pub fn client(&self) -> Command {
        let mut c = Command::new(tool("mariadb"));
        c.arg("--no-defaults")
            .arg(format!("--socket={}", self.socket.display()))
            .arg("-uroot")
            .arg("--default-character-set=utf8mb4");
        c
    }

    /// Runs the statements `sql` (fed on stdin, binary-safe); panics if the server refuses
    /// one.
    pub fn exec(&self, sql: &str) {
        let mut c = self.client();
        c.arg("--binary-mode")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("start mariadb client");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(sql.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "the server refused {}...: {}",
            sql.chars().take(300).collect::<String>(),
            String::from_utf8_lossy(&out.stderr)
                .chars()
                .rev()
                .take(2000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<String>()
        );
    }

    /// Result rows of `sql` as tab-separated lines (NULL as `NULL`).
    pub fn query(&self, sql: &str) -> Vec<String> {
        let out = run(self.client().arg("-N").arg("-B").arg("-e").arg(sql));
        String::from_utf8(out.stdout)
            .expect("utf-8 result")
            .lines()
            .map(str::to_owned)
            .collect()
    }
}
