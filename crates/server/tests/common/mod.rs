//! Test support: start the real `tierdb` binary on a free loopback port with a temporary data
//! folder, wait until it accepts, and stop it when dropped.
#![allow(dead_code)]

pub mod mariadb_server;
pub mod sysbench;

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_tierdb");

/// A running `tierdb serve`.
pub struct TestServer {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Option<Child>,
    /// The extra `serve` arguments it was started with (a restart uses them again).
    extra: Vec<String>,
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port")
}

impl TestServer {
    pub fn start() -> TestServer {
        TestServer::start_with(&[])
    }

    /// Starts the server with extra `serve` arguments.
    pub fn start_with(extra: &[&str]) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let (port, child) = launch(dir.path(), &extra);
        TestServer {
            port,
            dir,
            child: Some(child),
            extra,
        }
    }

    /// Stops the server (SIGTERM, or SIGKILL when `crash`) and starts it again on the same
    /// folders and arguments (on a new port).
    pub fn restart(&mut self, crash: bool) {
        if let Some(mut child) = self.child.take() {
            if crash {
                let _ = child.kill();
                let _ = child.wait();
            } else {
                stop_child(child, Duration::from_secs(30)).expect("clean stop");
            }
        }
        let (port, child) = launch(self.dir.path(), &self.extra);
        self.port = port;
        self.child = Some(child);
    }

    pub fn url(&self, db: Option<&str>) -> String {
        format!("mysql://root@127.0.0.1:{}/{}", self.port, db.unwrap_or(""))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn is_running(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)))
    }

    /// SIGTERM, then waits up to `timeout` for a clean exit; returns the exit status.
    pub fn stop(&mut self, timeout: Duration) -> Option<ExitStatus> {
        stop_child(self.child.take()?, timeout)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("--- tierdb server log ---\n{}", self.log());
        }
    }
}

/// Starts `tierdb serve` over `dir` on a free port and waits for its greeting.
fn launch(dir: &Path, extra: &[String]) -> (u16, Child) {
    for attempt in 0..5 {
        let port = free_port();
        let log = std::fs::File::options()
            .create(true)
            .append(true)
            .open(dir.join("server.log"))
            .expect("log file");
        let mut cmd = Command::new(BIN);
        cmd.arg("serve")
            .arg("--port")
            .arg(port.to_string())
            .arg("--data-dir")
            .arg(dir.join("data"))
            .arg("--redo-dir")
            .arg(dir.join("redo"))
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        let mut child = cmd.spawn().expect("cannot start tierdb");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(dir.join("server.log")).unwrap_or_default();
                if log.contains("cannot listen") && attempt < 4 {
                    break; // port taken between probe and bind: try another
                }
                panic!("tierdb exited early ({status}):\n{log}");
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                // Wait for the greeting, proving the accept loop runs.
                let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                let mut b = [0u8; 5];
                if s.read_exact(&mut b).is_ok() && b[4] == 10 {
                    return (port, child);
                }
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "tierdb did not accept connections within 30 s:\n{}",
                    std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("could not find a free port for tierdb");
}

/// SIGTERM to a server process, then waits up to `timeout` for its exit status (killing it
/// when it does not exit in time: None).
pub fn stop_child(mut child: std::process::Child, timeout: Duration) -> Option<ExitStatus> {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The real `mariadb` client.
pub const MARIADB: &str = "/usr/bin/mariadb";

/// Runs the `mariadb` client in batch mode against `server` with extra `args` and `-e sql`:
/// (exit success, stdout, stderr).
pub fn mariadb_batch(server: &TestServer, args: &[&str], sql: &str) -> (bool, String, String) {
    let mut all = vec![
        "-h127.0.0.1".to_string(),
        format!("-P{}", server.port),
        "-uroot".into(),
        "--batch".into(),
    ];
    all.extend(args.iter().map(|s| s.to_string()));
    all.push("-e".into());
    all.push(sql.into());
    run_program(MARIADB, &all, Duration::from_secs(60))
}

/// Runs a program, returning (exit success, stdout, stderr); panics if it cannot start or
/// runs past `timeout`.
pub fn run_program(program: &str, args: &[String], timeout: Duration) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{program} {args:?} ran past {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (
        status.success(),
        t_out.join().unwrap_or_default(),
        t_err.join().unwrap_or_default(),
    )
}

pub fn exists(program: &str) -> bool {
    Path::new(program).exists()
}

/// Hand-made protocol packets, for tests that must misbehave on purpose.
pub mod raw {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    /// Writes one logical packet, split into 16 MiB - 1 chunks as the protocol requires.
    pub fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) -> std::io::Result<()> {
        const CHUNK: usize = 0xFF_FFFF;
        let mut seq = seq;
        let mut rest = payload;
        loop {
            let n = rest.len().min(CHUNK);
            let mut h = (n as u32).to_le_bytes();
            h[3] = seq;
            s.write_all(&h)?;
            s.write_all(&rest[..n])?;
            rest = &rest[n..];
            seq = seq.wrapping_add(1);
            if n < CHUNK {
                return Ok(());
            }
        }
    }

    pub fn read_packet(s: &mut TcpStream) -> std::io::Result<(Vec<u8>, u8)> {
        let mut h = [0u8; 4];
        s.read_exact(&mut h)?;
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let mut p = vec![0; len];
        s.read_exact(&mut p)?;
        Ok((p, h[3]))
    }

    /// Connects and logs in as `root` without a password (no CLIENT_DEPRECATE_EOF).
    pub fn login(port: u16, db: Option<&str>) -> TcpStream {
        login_with_caps(port, db, 0)
    }

    /// `login`, also offering the capability flags `extra` (e.g. CLIENT_LOCAL_FILES, 128).
    pub fn login_with_caps(port: u16, db: Option<&str>, extra: u32) -> TcpStream {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let (greeting, _) = read_packet(&mut s).expect("greeting");
        assert_eq!(greeting[0], 10, "greeting {greeting:?}");
        let mut caps: u32 = 1 | 4 | 512 | 8192 | 32768 | (1 << 19) | extra;
        if db.is_some() {
            caps |= 8;
        }
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(b"root\0\0");
        if let Some(db) = db {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(b"mysql_native_password\0");
        write_packet(&mut s, 1, &p).expect("login");
        let (ok, _) = read_packet(&mut s).expect("login reply");
        assert_eq!(ok[0], 0, "login refused: {}", String::from_utf8_lossy(&ok));
        s
    }

    /// Sends COM_QUERY and returns the first reply packet (OK, ERR or column count), skipping
    /// the rest of a result set.
    pub fn query(s: &mut TcpStream, sql: &str) -> Vec<u8> {
        let mut p = vec![3u8];
        p.extend_from_slice(sql.as_bytes());
        write_packet(s, 0, &p).expect("send query");
        let (first, _) = read_packet(s).expect("reply");
        if first[0] != 0 && first[0] != 0xFF {
            // Result set: column definitions, EOF, rows, EOF.
            let mut eofs = 0;
            while eofs < 2 {
                let (p, _) = read_packet(s).expect("result set");
                if p[0] == 0xFE && p.len() < 9 {
                    eofs += 1;
                }
            }
        }
        first
    }
}

/// Dumps database `db` from `server` with the real `mariadb-dump` into `file` (in the
/// server's folder); returns the dump's path.
pub fn dump_from_tierdb(server: &TestServer, db: &str, file: &str) -> std::path::PathBuf {
    let dump_path = server.dir.path().join(file);
    let (ok, out, err) = run_program(
        "/usr/bin/mariadb-dump",
        &[
            "-h127.0.0.1".to_string(),
            format!("-P{}", server.port),
            "-uroot".into(),
            format!("--result-file={}", dump_path.display()),
            db.into(),
        ],
        Duration::from_secs(60),
    );
    assert!(ok, "mariadb-dump failed: {err}\n{out}");
    dump_path
}
