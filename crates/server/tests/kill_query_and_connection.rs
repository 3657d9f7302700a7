//! KILL as a DBA uses it: `KILL QUERY id` stops the statement a connection is running (a
//! SLEEP, a lock wait, a long join) with error 1317 and leaves the connection usable;
//! a GET_LOCK wait gives NULL; `KILL [CONNECTION] id` ends the connection, rolling back its open transaction; an id no
//! connection has is 1094. The ids are those SHOW PROCESSLIST / CONNECTION_ID() show.

mod common;

use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::TestServer;

fn connect(server: &TestServer) -> Conn {
    Conn::new(Opts::from_url(&server.url(None)).expect("url")).expect("connect")
}

fn code(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Runs `sql` on `conn` in a thread; after `after`, checks SHOW PROCESSLIST shows it (Info)
/// in `state`, kills its query from `admin`; checks the statement ended with 1317 within 10 s
/// and gives the connection back.
fn killed_while_running(
    admin: &mut Conn,
    mut conn: Conn,
    sql: &'static str,
    after: Duration,
    state: &str,
) -> Conn {
    let id = conn.connection_id();
    let runner = std::thread::spawn(move || {
        let t0 = Instant::now();
        let r = conn.query_drop(sql);
        (conn, r, t0.elapsed())
    });
    std::thread::sleep(after);
    let listed: Vec<(u32, String, Option<String>)> = admin
        .query_map("SHOW FULL PROCESSLIST", |r: mysql::Row| {
            (r.get(0).unwrap(), r.get(6).unwrap(), r.get(7).unwrap())
        })
        .expect("processlist");
    let row = listed
        .into_iter()
        .find(|r| r.0 == id)
        .expect("the connection is listed");
    assert_eq!((row.1.as_str(), row.2.as_deref()), (state, Some(sql)));
    // The same through INFORMATION_SCHEMA, where a query can filter it.
    let same: Option<(String, String, Option<String>)> = admin
        .query_first(format!(
            "SELECT COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = {id}"
        ))
        .expect("information_schema.PROCESSLIST");
    assert_eq!(same, Some(("Query".into(), state.into(), Some(sql.into()))));
    admin
        .query_drop(format!("KILL QUERY {id}"))
        .expect("kill query");
    let (conn, r, took) = runner.join().expect("runner");
    assert_eq!(
        code(r.expect_err("the statement was killed")),
        1317,
        "{sql}"
    );
    assert!(took < Duration::from_secs(10), "{sql}: {took:?}");
    conn
}

#[test]
fn kill_stops_statements_and_ends_connections() {
    let server = TestServer::start();
    let mut admin = connect(&server);
    admin
        .query_drop(
            "CREATE DATABASE k; CREATE TABLE k.t (id INT PRIMARY KEY, v INT); \
             INSERT INTO k.t WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s \
             WHERE n < 1000) SELECT n, n FROM s; \
             INSERT INTO k.t SELECT id + 1000, v FROM k.t; INSERT INTO k.t SELECT id + 2000, v FROM k.t",
        )
        .expect("setup");

    // A SLEEP: 1317, at once; the connection goes on.
    let mut a = killed_while_running(
        &mut admin,
        connect(&server),
        "SELECT SLEEP(60)",
        Duration::from_millis(300),
        "executing",
    );
    let one: Option<i64> = a.query_first("SELECT 1").expect("after kill");
    assert_eq!(one, Some(1));

    // A row-lock wait (innodb_lock_wait_timeout is 50 s).
    let mut holder = connect(&server);
    holder.query_drop("BEGIN").expect("begin");
    holder
        .query_drop("UPDATE k.t SET v = -1 WHERE id = 1")
        .expect("lock the row");
    let _w = killed_while_running(
        &mut admin,
        connect(&server),
        "UPDATE k.t SET v = -2 WHERE id = 1",
        Duration::from_millis(300),
        "Waiting for row lock",
    );

    // A join of 4000 x 4000 rows read from memory.
    let _j = killed_while_running(
        &mut admin,
        connect(&server),
        "SELECT COUNT(*) FROM k.t x JOIN k.t y ON x.v + y.v = -7",
        Duration::from_millis(200),
        "executing",
    );

    // A GET_LOCK wait: KILL QUERY makes it NULL, without an error (as MariaDB).
    let mut locker = connect(&server);
    let got: Option<i64> = locker
        .query_first("SELECT GET_LOCK('job', 0)")
        .expect("get_lock");
    assert_eq!(got, Some(1));
    let mut waiter = connect(&server);
    let waiter_id = waiter.connection_id();
    let runner = std::thread::spawn(move || {
        let t0 = Instant::now();
        let r: Result<Option<Option<i64>>, _> = waiter.query_first("SELECT GET_LOCK('job', 30)");
        (r, t0.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    admin
        .query_drop(format!("KILL QUERY {waiter_id}"))
        .expect("kill query");
    let (r, took) = runner.join().expect("waiter");
    assert_eq!(r.expect("no error"), Some(None), "NULL");
    assert!(took < Duration::from_secs(10), "{took:?}");

    // KILL CONNECTION of the holder: its transaction is rolled back and its lock freed.
    let holder_id = holder.connection_id();
    admin
        .query_drop(format!("KILL CONNECTION {holder_id}"))
        .expect("kill connection");
    assert!(
        holder.query_drop("SELECT 1").is_err(),
        "the connection is gone"
    );
    let mut changed: Option<i64> = None;
    for _ in 0..50 {
        // The rollback runs when its thread notices the closed socket.
        changed = admin
            .query_first("SELECT COUNT(*) FROM k.t WHERE v < 0")
            .expect("count");
        if changed == Some(0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(changed, Some(0));
    admin
        .query_drop("UPDATE k.t SET v = 5 WHERE id = 1")
        .expect("the row is free again");

    // Unknown ids; the id may be an expression.
    assert_eq!(code(admin.query_drop("KILL 999999").unwrap_err()), 1094);
    let a_id = a.connection_id();
    admin
        .query_drop(format!("SET @victim = {a_id}"))
        .expect("set");
    admin.query_drop("KILL @victim").expect("kill by variable");
    assert!(a.query_drop("SELECT 1").is_err(), "killed by expression");
    // KILL QUERY of the connection itself: this statement is the one interrupted.
    assert_eq!(
        code(admin.query_drop("KILL QUERY CONNECTION_ID()").unwrap_err()),
        1317
    );
    let two: Option<i64> = admin.query_first("SELECT 2").expect("admin goes on");
    assert_eq!(two, Some(2));
}
