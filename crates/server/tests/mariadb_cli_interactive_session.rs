//! The interactive `mariadb` client under a pseudo-terminal (tmux): connecting with a
//! database that has tables makes the client read table information with COM_FIELD_LIST —
//! a wrong terminator there hangs it at "Reading table information". Then a query, its
//! output, and `quit`.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::TestServer;

/// A private tmux server (own socket) holding one session; killed on drop.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn available() -> bool {
        if Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return true;
        }
        // Try to install it (Debian); the test skips loudly only if that fails too.
        let _ = Command::new("apt-get")
            .args(["install", "-y", "-q", "tmux"])
            .output();
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn start(command: &str) -> Tmux {
        let socket = format!("tierdb-test-{}", std::process::id());
        let st = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "new-session",
                "-d",
                "-s",
                "cli",
                "-x",
                "160",
                "-y",
                "50",
                command,
            ])
            .env("TERM", "xterm")
            .status()
            .expect("tmux");
        assert!(st.success(), "tmux new-session failed");
        Tmux { socket }
    }

    fn screen(&self) -> String {
        let o = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "capture-pane",
                "-p",
                "-t",
                "cli",
                "-S",
                "-200",
            ])
            .output();
        o.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// Types `keys` and Enter. A trailing `;` is sent as a hex key: tmux would take it for a
    /// command separator.
    fn send(&self, keys: &str) {
        let (text, semicolon) = match keys.strip_suffix(';') {
            Some(t) => (t, true),
            None => (keys, false),
        };
        let tmux = |args: &[&str]| {
            let st = Command::new("tmux")
                .args(["-L", &self.socket, "send-keys", "-t", "cli"])
                .args(args)
                .status()
                .expect("tmux");
            assert!(st.success(), "tmux send-keys {args:?}");
        };
        tmux(&["-l", text]);
        if semicolon {
            tmux(&["-H", "3b"]);
        }
        tmux(&["Enter"]);
    }

    fn alive(&self) -> bool {
        Command::new("tmux")
            .args(["-L", &self.socket, "has-session", "-t", "cli"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Waits until the screen contains `text`; panics with the screen after `timeout`.
    fn wait_for(&self, text: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("waited {timeout:?} for {text:?}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

#[test]
fn mariadb_cli_interactive_session() {
    if !Tmux::available() {
        eprintln!("\n!!!!! SKIPPED mariadb_cli_interactive_session: tmux is not installed and could not be installed !!!!!\n");
        return;
    }
    let server = TestServer::start();
    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    c.query_drop("CREATE DATABASE shop").unwrap();
    c.query_drop("USE shop").unwrap();
    c.query_drop(
        "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), price DECIMAL(6,2))",
    )
    .unwrap();
    c.query_drop("CREATE TABLE orders (id INT NOT NULL PRIMARY KEY, item_id INT, qty INT)")
        .unwrap();
    c.query_drop("INSERT INTO items VALUES (1, 'apple', 1.50), (2, 'pear', NULL)")
        .unwrap();

    let tmux = Tmux::start(&format!(
        "/usr/bin/mariadb -h127.0.0.1 -P{} -uroot shop",
        server.port
    ));
    // The prompt appears only after the table information was read (COM_FIELD_LIST per table).
    let screen = tmux.wait_for("[shop]>", Duration::from_secs(20));
    assert!(screen.contains("Reading table information"), "{screen}");
    tmux.send("SELECT id, name, price FROM items ORDER BY id;");
    let screen = tmux.wait_for("2 rows in set", Duration::from_secs(20));
    for line in [
        "+----+-------+-------+",
        "| id | name  | price |",
        "|  1 | apple |  1.50 |",
        "|  2 | pear  |  NULL |",
    ] {
        assert!(screen.contains(line), "missing {line:?} in:\n{screen}");
    }
    tmux.send("SELECT * FROM nope;");
    let screen = tmux.wait_for("ERROR 1146 (42S02)", Duration::from_secs(20));
    assert!(
        screen.contains("Table 'shop.nope' doesn't exist"),
        "{screen}"
    );
    tmux.send("quit");
    let deadline = Instant::now() + Duration::from_secs(10);
    while tmux.alive() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        !tmux.alive(),
        "the client did not exit on quit:\n{}",
        tmux.screen()
    );
}
