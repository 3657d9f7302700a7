//! REPEATABLE READ through the wire, with a real client crate and the real `mariadb-dump`:
//!
//! - a REPEATABLE READ transaction (`START TRANSACTION WITH CONSISTENT SNAPSHOT`, or its
//!   first SELECT) keeps seeing one moment — rows inserted, updated (also moved in an index)
//!   and deleted by others after it stay as they were, through the primary key, an index
//!   range and COUNT(*) — while its locking reads and changes work on the newest versions
//!   and its own changes are visible to it; READ COMMITTED (the default) sees each commit;
//!   a table rebuilt after the view opened answers 1412, as MariaDB;
//! - `mariadb-dump --single-transaction` run while a client keeps moving money between two
//!   tables (and opening new accounts) dumps one consistent moment: loaded into another
//!   database, the money adds up; the writer was never held up by the dump.

mod common;

use common::{run_program, TestServer, MARIADB};
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn conn(server: &TestServer, db: Option<&str>) -> Conn {
    Conn::new(Opts::from_url(&server.url(db)).expect("url")).expect("connect")
}

fn rows(c: &mut Conn, sql: &str) -> Vec<(i64, i64, i64)> {
    c.query(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn one(c: &mut Conn, sql: &str) -> i64 {
    c.query_first::<i64, _>(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .unwrap_or_else(|| panic!("{sql}: no row"))
}

fn exec(c: &mut Conn, sql: &str) {
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn status(c: &mut Conn, name: &str) -> i64 {
    let r: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .expect("show status");
    r.unwrap_or_else(|| panic!("no status {name}"))
        .1
        .parse()
        .expect("number")
}

#[test]
fn repeatable_read_sees_one_moment_and_read_committed_sees_each_commit() {
    let server = TestServer::start();
    let mut b = conn(&server, None);
    exec(&mut b, "CREATE DATABASE snap");
    exec(&mut b, "USE snap");
    exec(
        &mut b,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, v INT NOT NULL, KEY k (k))",
    );
    exec(
        &mut b,
        "INSERT INTO t VALUES (1, 1, 10), (2, 2, 20), (3, 3, 30)",
    );
    let mut a = conn(&server, Some("snap"));
    let level: String = a
        .query_first("SELECT @@transaction_isolation")
        .expect("select")
        .expect("row");
    assert_eq!(level, "READ-COMMITTED", "the default");
    exec(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );
    let level: String = a
        .query_first("SELECT @@tx_isolation")
        .expect("select")
        .expect("row");
    assert_eq!(level, "REPEATABLE-READ");
    exec(&mut a, "START TRANSACTION WITH CONSISTENT SNAPSHOT");

    exec(&mut b, "INSERT INTO t VALUES (4, 4, 40)");
    exec(&mut b, "UPDATE t SET v = v + 1, k = k + 10 WHERE id = 1");
    exec(&mut b, "DELETE FROM t WHERE id = 2");
    let before = vec![(1, 1, 10), (2, 2, 20), (3, 3, 30)];
    assert_eq!(rows(&mut a, "SELECT id, k, v FROM t ORDER BY id"), before);
    assert_eq!(
        rows(
            &mut a,
            "SELECT id, k, v FROM t WHERE k BETWEEN 1 AND 20 ORDER BY k"
        ),
        before,
        "through the k index"
    );
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), 3);
    assert!(status(&mut b, "Innodb_history_list_length") >= 1);
    assert_eq!(status(&mut b, "Tierdb_read_views_open"), 1);

    // Locking reads and changes read the newest versions; own changes are seen.
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 1 FOR UPDATE"), 11);
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 1"), 10);
    let r = a
        .query_iter("UPDATE t SET v = v + 100 WHERE id = 4")
        .expect("update");
    assert_eq!(
        r.affected_rows(),
        1,
        "an UPDATE sees the row inserted after the view"
    );
    drop(r);
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 4"), 140);
    exec(&mut a, "COMMIT");
    assert_eq!(
        rows(&mut a, "SELECT id, k, v FROM t ORDER BY id"),
        vec![(1, 11, 11), (3, 3, 30), (4, 4, 140)]
    );

    // REPEATABLE READ without WITH CONSISTENT SNAPSHOT: the view opens at the first read.
    exec(&mut a, "BEGIN");
    exec(&mut b, "UPDATE t SET v = 32 WHERE id = 3");
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 3"), 32);
    exec(&mut b, "UPDATE t SET v = 33 WHERE id = 3");
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 3"), 32);
    exec(&mut a, "COMMIT");

    // A locking read anywhere in the statement (here a UNION operand) reads current versions.
    exec(&mut a, "BEGIN");
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), 3);
    exec(&mut b, "INSERT INTO t VALUES (9, 9, 90)");
    let got: Vec<i64> = a
        .query("(SELECT id FROM t WHERE id >= 9 FOR UPDATE) UNION ALL (SELECT 0) ORDER BY 1")
        .expect("union");
    assert_eq!(got, vec![0, 9]);
    exec(&mut a, "ROLLBACK");
    exec(&mut b, "DELETE FROM t WHERE id = 9");

    // A level set in the middle of a transaction is for the next one (as MySQL).
    exec(&mut a, "BEGIN");
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 3"), 33);
    exec(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    exec(&mut b, "UPDATE t SET v = 330 WHERE id = 3");
    assert_eq!(
        one(&mut a, "SELECT v FROM t WHERE id = 3"),
        33,
        "still one view"
    );
    exec(&mut a, "COMMIT");
    exec(&mut a, "BEGIN");
    assert_eq!(one(&mut a, "SELECT v FROM t WHERE id = 3"), 330);
    exec(&mut b, "UPDATE t SET v = 33 WHERE id = 3");
    assert_eq!(
        one(&mut a, "SELECT v FROM t WHERE id = 3"),
        33,
        "now READ COMMITTED"
    );
    exec(&mut a, "COMMIT");
    exec(
        &mut a,
        "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );

    // READ COMMITTED sees each commit, also inside a transaction; WITH CONSISTENT SNAPSHOT
    // changes nothing there (as in InnoDB).
    let mut c = conn(&server, Some("snap"));
    exec(&mut c, "START TRANSACTION WITH CONSISTENT SNAPSHOT");
    assert_eq!(one(&mut c, "SELECT v FROM t WHERE id = 3"), 33);
    exec(&mut b, "UPDATE t SET v = 34 WHERE id = 3");
    assert_eq!(one(&mut c, "SELECT v FROM t WHERE id = 3"), 34);
    exec(&mut c, "COMMIT");

    // SET TRANSACTION (no scope word) is for the next transaction only, and refused inside
    // one (1568); SET GLOBAL TRANSACTION is for sessions that start later.
    exec(&mut c, "BEGIN");
    match c.query_drop("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1568, "{e:?}"),
        other => panic!("expected 1568, got {other:?}"),
    }
    exec(&mut c, "COMMIT");
    exec(&mut c, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    exec(&mut c, "BEGIN");
    assert_eq!(one(&mut c, "SELECT v FROM t WHERE id = 3"), 34);
    exec(&mut b, "UPDATE t SET v = 35 WHERE id = 3");
    assert_eq!(
        one(&mut c, "SELECT v FROM t WHERE id = 3"),
        34,
        "the next one is RR"
    );
    exec(&mut c, "COMMIT");
    exec(&mut c, "BEGIN");
    assert_eq!(one(&mut c, "SELECT v FROM t WHERE id = 3"), 35);
    exec(&mut b, "UPDATE t SET v = 36 WHERE id = 3");
    assert_eq!(
        one(&mut c, "SELECT v FROM t WHERE id = 3"),
        36,
        "then RC again"
    );
    exec(&mut c, "COMMIT");
    exec(
        &mut b,
        "SET GLOBAL TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    );
    let mut d = conn(&server, Some("snap"));
    let level: String = d
        .query_first("SELECT @@transaction_isolation")
        .expect("select")
        .expect("row");
    assert_eq!(
        level, "REPEATABLE-READ",
        "a new session gets the global level"
    );
    exec(
        &mut b,
        "SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
    );
    drop(d);

    // A rebuild after the view opened: 1412, as MariaDB.
    exec(
        &mut a,
        "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE",
    );
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), 3);
    exec(&mut b, "ALTER TABLE t DROP COLUMN k");
    match a.query_drop("SELECT * FROM t") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1412, "{e:?}"),
        other => panic!("expected 1412, got {other:?}"),
    }
    exec(&mut a, "ROLLBACK");
    assert_eq!(one(&mut a, "SELECT COUNT(*) FROM t"), 3);
    assert_eq!(status(&mut b, "Tierdb_read_views_open"), 0);
    assert_eq!(status(&mut b, "Innodb_history_list_length"), 0);
    assert_eq!(status(&mut b, "Tierdb_purges_deferred"), 0);
}

const ACCOUNTS: i64 = 3000;

#[test]
fn a_single_transaction_dump_is_one_moment_while_money_moves() {
    assert!(
        common::exists(MARIADB),
        "the mariadb client is not installed"
    );
    let server = TestServer::start();
    let mut c = conn(&server, None);
    exec(&mut c, "CREATE DATABASE bank");
    exec(&mut c, "USE bank");
    exec(
        &mut c,
        "CREATE TABLE accounts (id INT PRIMARY KEY, balance INT NOT NULL, KEY bal (balance))",
    );
    exec(
        &mut c,
        "CREATE TABLE vault (id INT PRIMARY KEY, amount INT NOT NULL)",
    );
    exec(&mut c, "INSERT INTO vault VALUES (1, 0)");
    for chunk in (1..=ACCOUNTS).collect::<Vec<_>>().chunks(500) {
        let values: Vec<String> = chunk.iter().map(|i| format!("({i}, 100)")).collect();
        exec(
            &mut c,
            &format!("INSERT INTO accounts VALUES {}", values.join(",")),
        );
    }
    let total = ACCOUNTS * 100;

    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let writer = {
        let (stop, commits) = (stop.clone(), commits.clone());
        let mut w = conn(&server, Some("bank"));
        std::thread::spawn(move || {
            let mut i = 0i64;
            let mut next_account = ACCOUNTS + 1;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let id = (i * 7919) % ACCOUNTS + 1;
                exec(&mut w, "BEGIN");
                if i % 5 == 0 {
                    // Open an account with money from the vault.
                    exec(&mut w, "UPDATE vault SET amount = amount - 3 WHERE id = 1");
                    exec(
                        &mut w,
                        &format!("INSERT INTO accounts VALUES ({next_account}, 3)"),
                    );
                    next_account += 1;
                } else {
                    exec(
                        &mut w,
                        &format!("UPDATE accounts SET balance = balance - 1 WHERE id = {id}"),
                    );
                    exec(&mut w, "UPDATE vault SET amount = amount + 1 WHERE id = 1");
                }
                exec(&mut w, "COMMIT");
                commits.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    while commits.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let dump_path = server.dir.path().join("bank.sql");
    let at_start = commits.load(Ordering::Relaxed);
    let (ok, out, err) = run_program(
        "/usr/bin/mariadb-dump",
        &[
            "-h127.0.0.1".to_string(),
            format!("-P{}", server.port),
            "-uroot".into(),
            "--single-transaction".into(),
            format!("--result-file={}", dump_path.display()),
            "bank".into(),
        ],
        Duration::from_secs(120),
    );
    let during = commits.load(Ordering::Relaxed) - at_start;
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    assert!(ok, "mariadb-dump --single-transaction failed: {err}\n{out}");
    assert!(during > 0, "the writer was held up by the dump");
    let dump = std::fs::read_to_string(&dump_path).expect("dump");
    assert!(!dump.contains("LOCK TABLES `accounts` READ"), "{dump}");

    exec(&mut c, "CREATE DATABASE bank2");
    let (ok, out, err) = common::mariadb_batch(
        &server,
        &["bank2"],
        &format!("source {}", dump_path.display()),
    );
    assert!(ok, "loading the dump failed: {err}\n{out}");
    let sum = one(
        &mut c,
        "SELECT (SELECT SUM(balance) FROM bank2.accounts) + (SELECT amount FROM bank2.vault)",
    );
    assert_eq!(sum, total, "the dump is one moment");
    let now = one(
        &mut c,
        "SELECT (SELECT SUM(balance) FROM bank.accounts) + (SELECT amount FROM bank.vault)",
    );
    assert_eq!(now, total);
    let dumped = one(&mut c, "SELECT COUNT(*) FROM bank2.accounts");
    assert!(dumped >= ACCOUNTS, "{dumped}");
    assert_eq!(status(&mut c, "Tierdb_read_views_open"), 0);
    eprintln!("{during} transfers committed while the dump ran; {dumped} accounts dumped");
}
