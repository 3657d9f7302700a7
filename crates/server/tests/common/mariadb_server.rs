//! A scratch MariaDB server (Debian's `mariadbd`) in a temporary folder, for tests that
//! compare tierdb with MariaDB or feed MariaDB what tierdb wrote. Stopped when dropped.

use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{exists, free_port, run_program, MARIADB};

pub struct ScratchMariadb {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Option<Child>,
}

impl ScratchMariadb {
    /// Initialises a data folder and starts `mariadbd` on a free loopback port (no grant
    /// tables: any client is root). Panics, naming the fix, when MariaDB is not installed.
    pub fn start() -> ScratchMariadb {
        ScratchMariadb::start_with(&[])
    }

    /// `start` with extra `mariadbd` options (e.g. `--server-id=2`).
    pub fn start_with(extra: &[&str]) -> ScratchMariadb {
        for p in ["/usr/sbin/mariadbd", "/usr/bin/mariadb-install-db", MARIADB] {
            assert!(
                exists(p),
                "{p} is missing: run scripts/setup.sh (it installs mariadb-server and mariadb-client)"
            );
        }
        let dir = tempfile::tempdir().expect("tempdir");
        // mariadbd runs as `mysql`: it must reach and own its folder.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("data dir");
        // Its own temporary folder: bootstraps running at once in /tmp have failed with
        // "Could not remove temporary table" (1051).
        let tmp = dir.path().join("tmp");
        std::fs::create_dir_all(&tmp).expect("tmp dir");
        let (ok, _, err) = run_program(
            "/usr/bin/chown",
            &[
                "-R".into(),
                "mysql:mysql".into(),
                dir.path().display().to_string(),
            ],
            Duration::from_secs(30),
        );
        assert!(ok, "chown: {err}");
        let (ok, out, err) = run_program(
            "/usr/bin/mariadb-install-db",
            &[
                "--no-defaults".into(),
                "--user=mysql".into(),
                format!("--datadir={}", data.display()),
                format!("--tmpdir={}", tmp.display()),
                "--skip-test-db".into(),
                "--auth-root-authentication-method=normal".into(),
            ],
            Duration::from_secs(120),
        );
        assert!(ok, "mariadb-install-db failed: {err}\n{out}");
        let port = free_port();
        let d = dir.path();
        let child = Command::new("/usr/sbin/mariadbd")
            .args([
                "--no-defaults".to_string(),
                "--user=mysql".into(),
                format!("--datadir={}", data.display()),
                format!("--tmpdir={}", tmp.display()),
                format!("--port={port}"),
                "--bind-address=127.0.0.1".into(),
                format!("--socket={}", d.join("sock").display()),
                format!("--pid-file={}", d.join("pid").display()),
                format!("--log-error={}", d.join("err.log").display()),
                "--skip-grant-tables".into(),
                "--innodb-buffer-pool-size=64M".into(),
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start mariadbd");
        let mut m = ScratchMariadb {
            port,
            dir,
            child: Some(child),
        };
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let (ok, _, _) = m.sql("SELECT 1");
            if ok {
                return m;
            }
            if Instant::now() > deadline {
                panic!(
                    "mariadbd did not start within 90 s:\n{}",
                    std::fs::read_to_string(m.dir.path().join("err.log")).unwrap_or_default()
                );
            }
            if let Some(Ok(Some(status))) = m.child.as_mut().map(|c| c.try_wait()) {
                panic!(
                    "mariadbd exited ({status}):\n{}",
                    std::fs::read_to_string(m.dir.path().join("err.log")).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs `sql` with the `mariadb` client in batch mode: (success, stdout, stderr).
    pub fn sql(&self, sql: &str) -> (bool, String, String) {
        run_program(
            MARIADB,
            &[
                "-h127.0.0.1".into(),
                format!("-P{}", self.port),
                "-uroot".into(),
                "--batch".into(),
                "-e".into(),
                sql.into(),
            ],
            Duration::from_secs(60),
        )
    }

    /// Feeds `input` (a file) to the `mariadb` client: (success, stdout, stderr). The client
    /// sends statements up to 1 GiB (a BINLOG statement holds all of a statement's rows).
    pub fn source(&self, input: &std::path::Path) -> (bool, String, String) {
        run_program(
            "/bin/sh",
            &[
                "-c".into(),
                format!(
                    "{MARIADB} -h127.0.0.1 -P{} -uroot --batch --max-allowed-packet=1G < '{}'",
                    self.port,
                    input.display()
                ),
            ],
            Duration::from_secs(120),
        )
    }
}

impl Drop for ScratchMariadb {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
