//! Locking reads and lock wait timeouts through the real `tierdb` binary and the `mysql`
//! client crate:
//!
//! - session A's `SELECT ... FOR UPDATE` inside BEGIN makes session B's UPDATE of that row
//!   wait and fail with 1205 (short `innodb_lock_wait_timeout`); after A commits it succeeds.
//!   `FOR SHARE` and `LOCK IN SHARE MODE` (shared locks) keep the writer out the same way;
//! - N threads each run BEGIN; `SELECT v ... FOR UPDATE`; `UPDATE t SET v = ?`; COMMIT in a
//!   loop (prepared statements): no increment is lost;
//! - a lock wait timeout rolls back only the statement: in a transaction, update row 1, then
//!   an update of row 2 (locked by another session) fails with 1205; COMMIT keeps row 1's
//!   change and row 2 is unchanged.

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::time::{Duration, Instant};

fn code_of(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn connect(server: &TestServer) -> Conn {
    Conn::new(Opts::from_url(&server.url(Some("locks"))).expect("url")).expect("connect")
}

fn value_of(c: &mut Conn, id: i64) -> i64 {
    c.exec_first("SELECT v FROM t WHERE id = ?", (id,))
        .expect("select")
        .expect("row")
}

/// Runs `sql` on `c`, expecting 1205 after a wait of about `innodb_lock_wait_timeout`.
fn times_out(c: &mut Conn, sql: &str) {
    let t0 = Instant::now();
    let e = c.query_drop(sql).expect_err(sql);
    assert_eq!(code_of(e), 1205, "{sql}");
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "{sql} failed without waiting"
    );
}

fn setup(server: &TestServer) -> Conn {
    let mut c = Conn::new(Opts::from_url(&server.url(None)).expect("url")).expect("connect");
    c.query_drop("CREATE DATABASE locks")
        .expect("create database");
    c.query_drop("USE locks").expect("use");
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
        .expect("create table");
    c.query_drop("INSERT INTO t VALUES (1, 0), (2, 0), (3, 0)")
        .expect("insert");
    c
}

#[test]
fn locking_reads_and_statement_rollback_on_timeout() {
    let server = TestServer::start();
    let mut admin = setup(&server);
    admin
        .query_drop("SET GLOBAL innodb_lock_wait_timeout = 1")
        .expect("set timeout");

    // A's locking read blocks B's write until A commits.
    for lock in ["FOR UPDATE", "FOR SHARE", "LOCK IN SHARE MODE"] {
        let mut a = connect(&server);
        let mut b = connect(&server);
        a.query_drop("BEGIN").expect("begin");
        let v: Option<i64> = a
            .query_first(format!("SELECT v FROM t WHERE id = 1 {lock}"))
            .expect("locking read");
        assert_eq!(v, Some(0), "{lock}");
        times_out(&mut b, "UPDATE t SET v = v + 1 WHERE id = 1");
        // The timeout left B usable, and a plain read does not wait.
        assert_eq!(value_of(&mut b, 1), 0);
        a.query_drop("COMMIT").expect("commit");
        b.query_drop("UPDATE t SET v = v + 1 WHERE id = 1")
            .expect("update after the commit");
        b.query_drop("UPDATE t SET v = v - 1 WHERE id = 1")
            .expect("update back");
    }

    // Statement-level rollback on a lock wait timeout.
    let mut holder = connect(&server);
    let mut s = connect(&server);
    holder.query_drop("BEGIN").expect("begin");
    holder
        .query_drop("SELECT v FROM t WHERE id = 2 FOR UPDATE")
        .expect("lock row 2");
    s.query_drop("BEGIN").expect("begin");
    s.query_drop("UPDATE t SET v = 10 WHERE id = 1")
        .expect("update row 1");
    times_out(&mut s, "UPDATE t SET v = 20 WHERE id = 2");
    // Still inside the transaction: its own change is visible to it, not to others.
    assert_eq!(value_of(&mut s, 1), 10);
    assert_eq!(value_of(&mut admin, 1), 0);
    s.query_drop("COMMIT").expect("commit after the timeout");
    holder.query_drop("COMMIT").expect("holder commit");
    assert_eq!(value_of(&mut admin, 1), 10);
    assert_eq!(value_of(&mut admin, 2), 0);

    // A deadlock still rolls back the whole transaction.
    admin
        .query_drop("SET GLOBAL innodb_lock_wait_timeout = 20")
        .expect("set timeout");
    let mut a = connect(&server);
    let mut b = connect(&server);
    a.query_drop("BEGIN").expect("begin");
    a.query_drop("UPDATE t SET v = 31 WHERE id = 3")
        .expect("a row 3");
    b.query_drop("BEGIN").expect("begin");
    b.query_drop("UPDATE t SET v = 22 WHERE id = 2")
        .expect("b row 2");
    let waiter = std::thread::spawn(move || {
        a.query_drop("SELECT v FROM t WHERE id = 2 FOR UPDATE")
            .expect("a waits for row 2");
        a.query_drop("COMMIT").expect("a commit");
    });
    std::thread::sleep(Duration::from_millis(300));
    let e = b
        .query_drop("SELECT v FROM t WHERE id = 3 FOR UPDATE")
        .expect_err("deadlock");
    assert_eq!(code_of(e), 1213);
    waiter.join().expect("waiter");
    b.query_drop("COMMIT").expect("commit of nothing");
    assert_eq!(value_of(&mut admin, 2), 0, "b's change was rolled back");
    assert_eq!(value_of(&mut admin, 3), 31);
}

#[test]
fn read_modify_write_with_for_update_loses_no_increment() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 40;
    let server = TestServer::start();
    let mut admin = setup(&server);
    let url = server.url(Some("locks"));
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut c = Conn::new(Opts::from_url(&url).expect("url")).expect("connect");
                let read = c
                    .prep("SELECT v FROM t WHERE id = 1 FOR UPDATE")
                    .expect("prepare read");
                let write = c.prep("UPDATE t SET v = ? WHERE id = 1").expect("prepare");
                for _ in 0..ROUNDS {
                    c.query_drop("BEGIN").expect("begin");
                    let v: i64 = c.exec_first(&read, ()).expect("read").expect("row");
                    c.exec_drop(&write, (v + 1,)).expect("write");
                    c.query_drop("COMMIT").expect("commit");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    assert_eq!(value_of(&mut admin, 1), (THREADS * ROUNDS) as i64);
}
