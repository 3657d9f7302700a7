//! FOREIGN KEY constraints with several clients at once (a real client crate, the real
//! server):
//!
//! - a child row inserted in an open transaction keeps its parent from being deleted until
//!   that transaction ends (the delete waits, then fails with 1451), and a child insert
//!   waits for a transaction deleting its parent (then fails with 1452) — the shared parent
//!   lock against the parent writer's exclusive one, as InnoDB;
//! - clients inserting and re-keying children while others delete and re-insert parents
//!   (RESTRICT and CASCADE keys) never leave a child row without its parent;
//! - multi-table UPDATEs incrementing rows through a join from several clients lose no
//!   increment (each target row is locked before the values it gets are read).

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn conn(server: &TestServer, db: Option<&str>) -> Conn {
    Conn::new(Opts::from_url(&server.url(db)).expect("url")).expect("connect")
}

fn exec(c: &mut Conn, sql: &str) {
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn code(r: Result<(), mysql::Error>) -> u16 {
    match r {
        Ok(()) => 0,
        Err(mysql::Error::MySqlError(e)) => e.code,
        Err(e) => panic!("not a server error: {e}"),
    }
}

fn count(c: &mut Conn, sql: &str) -> i64 {
    c.query_first::<i64, _>(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .expect("a row")
}

#[test]
fn a_child_insert_and_its_parents_delete_wait_for_each_other() {
    let server = TestServer::start();
    let mut a = conn(&server, None);
    exec(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 20");
    exec(&mut a, "CREATE DATABASE fkc");
    exec(&mut a, "USE fkc");
    exec(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    exec(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    );
    exec(&mut a, "INSERT INTO p VALUES (1), (2)");

    // A child in an open transaction holds its parent: the delete waits, then is refused.
    exec(&mut a, "BEGIN");
    exec(&mut a, "INSERT INTO c VALUES (1, 1)");
    let url = server.url(Some("fkc"));
    let (tx, rx) = mpsc::channel();
    let deleter = std::thread::spawn(move || {
        let mut b = Conn::new(Opts::from_url(&url).expect("url")).expect("connect");
        let t0 = Instant::now();
        let r = code(b.query_drop("DELETE FROM p WHERE id = 1"));
        tx.send((r, t0.elapsed())).expect("send");
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "the parent's delete must wait for the transaction holding a child"
    );
    exec(&mut a, "COMMIT");
    let (r, _) = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("delete ends");
    deleter.join().expect("deleter");
    assert_eq!(r, 1451, "the committed child keeps its parent");
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM p WHERE id = 1"), 1);

    // A transaction deleting a parent holds it: a child insert waits, then is refused.
    let mut b = conn(&server, Some("fkc"));
    exec(&mut b, "BEGIN");
    exec(&mut b, "DELETE FROM p WHERE id = 2");
    let url = server.url(Some("fkc"));
    let (tx, rx) = mpsc::channel();
    let inserter = std::thread::spawn(move || {
        let mut c = Conn::new(Opts::from_url(&url).expect("url")).expect("connect");
        let r = code(c.query_drop("INSERT INTO c VALUES (2, 2)"));
        tx.send(r).expect("send");
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(500)).is_err(),
        "the child insert must wait for the transaction deleting its parent"
    );
    exec(&mut b, "COMMIT");
    let r = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("insert ends");
    inserter.join().expect("inserter");
    assert_eq!(r, 1452, "the parent is gone");
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM c"), 1);
}

#[test]
fn concurrent_children_and_parent_deletes_never_leave_an_orphan() {
    let server = TestServer::start();
    let mut a = conn(&server, None);
    exec(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 5");
    exec(&mut a, "CREATE DATABASE fko");
    exec(&mut a, "USE fko");
    exec(&mut a, "CREATE TABLE p (id INT PRIMARY KEY, v INT)");
    exec(
        &mut a,
        "CREATE TABLE r (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    );
    exec(
        &mut a,
        "CREATE TABLE k (id INT PRIMARY KEY, pid INT, \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    );
    const PARENTS: i64 = 12;
    let values: Vec<String> = (0..PARENTS).map(|i| format!("({i}, 0)")).collect();
    exec(
        &mut a,
        &format!("INSERT INTO p VALUES {}", values.join(",")),
    );

    let deadline = Instant::now() + Duration::from_secs(4);
    let mut workers = Vec::new();
    for w in 0..4u64 {
        let url = server.url(Some("fko"));
        workers.push(std::thread::spawn(move || {
            let mut c = Conn::new(Opts::from_url(&url).expect("url")).expect("connect");
            let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ (w + 1);
            let mut next = |n: i64| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % n as u64) as i64
            };
            let (mut ok, mut refused) = (0u64, 0u64);
            while Instant::now() < deadline {
                let pid = next(PARENTS);
                let id = next(400);
                let sql = match next(7) {
                    0 | 1 => format!(
                        "INSERT INTO r VALUES ({id}, {pid}) ON DUPLICATE KEY UPDATE pid = {pid}"
                    ),
                    2 => format!(
                        "INSERT INTO k VALUES ({id}, {pid}) ON DUPLICATE KEY UPDATE pid = {pid}"
                    ),
                    3 => format!("DELETE FROM p WHERE id = {pid}"),
                    4 => format!("INSERT IGNORE INTO p VALUES ({pid}, 1)"),
                    5 => format!("DELETE FROM r WHERE id = {id}"),
                    _ => {
                        // Several statements in one transaction, some of which may fail.
                        let _ = c.query_drop("BEGIN");
                        let _ = c.query_drop(format!("INSERT INTO r VALUES ({id}, {pid})"));
                        let _ = c.query_drop(format!("UPDATE p SET v = v + 1 WHERE id = {pid}"));
                        "COMMIT".to_string()
                    }
                };
                match code(c.query_drop(&sql)) {
                    0 => ok += 1,
                    1451 | 1452 | 1062 | 1213 | 1205 => refused += 1,
                    other => panic!("{sql}: unexpected error {other}"),
                }
            }
            (ok, refused)
        }));
    }
    let mut total = (0, 0);
    for w in workers {
        let (ok, refused) = w.join().expect("worker");
        total.0 += ok;
        total.1 += refused;
    }
    assert!(total.0 > 100, "too little work done: {total:?}");
    assert!(total.1 > 0, "the keys never refused anything: {total:?}");
    for t in ["r", "k"] {
        let orphans = count(
            &mut a,
            &format!(
                "SELECT COUNT(*) FROM {t} LEFT JOIN p ON {t}.pid = p.id \
                 WHERE {t}.pid IS NOT NULL AND p.id IS NULL"
            ),
        );
        assert_eq!(orphans, 0, "rows of {t} without their parent");
    }
}

#[test]
fn concurrent_multi_table_updates_lose_no_increment() {
    let server = TestServer::start();
    let mut a = conn(&server, None);
    exec(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 20");
    exec(&mut a, "CREATE DATABASE fkm");
    exec(&mut a, "USE fkm");
    exec(
        &mut a,
        "CREATE TABLE acct (id INT PRIMARY KEY, n INT NOT NULL)",
    );
    exec(
        &mut a,
        "CREATE TABLE pick (id INT PRIMARY KEY, acct INT NOT NULL, KEY (acct))",
    );
    exec(&mut a, "INSERT INTO acct VALUES (1, 0), (2, 0), (3, 0)");
    exec(&mut a, "INSERT INTO pick VALUES (1, 1), (2, 2), (3, 3)");
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut workers = Vec::new();
    for w in 0..4i64 {
        let url = server.url(Some("fkm"));
        workers.push(std::thread::spawn(move || {
            let mut c = Conn::new(Opts::from_url(&url).expect("url")).expect("connect");
            let mut done = 0i64;
            let mut i = w;
            while Instant::now() < deadline {
                i += 1;
                // Both join forms; each statement adds 1 to one account through the join.
                let sql = if i % 2 == 0 {
                    format!(
                        "UPDATE acct JOIN pick ON pick.acct = acct.id SET acct.n = acct.n + 1 WHERE pick.id = {}",
                        i % 3 + 1
                    )
                } else {
                    format!(
                        "UPDATE acct, pick SET acct.n = acct.n + 1 WHERE pick.acct = acct.id AND pick.id = {}",
                        i % 3 + 1
                    )
                };
                match code(c.query_drop(&sql)) {
                    0 => done += 1,
                    1213 | 1205 => {}
                    other => panic!("{sql}: unexpected error {other}"),
                }
            }
            done
        }));
    }
    let done: i64 = workers.into_iter().map(|w| w.join().expect("worker")).sum();
    assert!(done > 50, "too few updates: {done}");
    assert_eq!(
        count(&mut a, "SELECT SUM(n) FROM acct"),
        done,
        "every committed increment is in the sum"
    );
}
