//! FLUSH TABLES WITH READ LOCK as backup tools use it: while one connection holds it, other
//! connections' writes (rows, DDL, accounts, commits of transactions that wrote) wait — up to
//! `lock_wait_timeout` (1205), or until KILL QUERY (1317) — and go on once the holder runs
//! UNLOCK TABLES or disconnects; reads go on; the holder's own writes get 1223; TEMPORARY
//! tables stay writable. FTWRL waits for running writes, and a failed one leaves nothing held.

mod common;

use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::TestServer;

fn connect(server: &TestServer) -> Conn {
    Conn::new(Opts::from_url(&server.url(None)).expect("url")).expect("connect")
}

fn code(r: mysql::Result<()>) -> u16 {
    match r {
        Err(mysql::Error::MySqlError(e)) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Runs `sql` on `conn` in a thread; returns a handle yielding (conn, result, when it ended).
fn in_background(
    mut conn: Conn,
    sql: &'static str,
) -> std::thread::JoinHandle<(Conn, mysql::Result<()>, Instant)> {
    std::thread::spawn(move || {
        let r = conn.query_drop(sql);
        (conn, r, Instant::now())
    })
}

/// SHOW PROCESSLIST's (Command, State, Info) of connection `id`.
fn shown(c: &mut Conn, id: u32) -> (String, String, Option<String>) {
    let rows: Vec<(u32, String, String, Option<String>)> = c
        .query_map("SHOW FULL PROCESSLIST", |r: mysql::Row| {
            (
                r.get(0).unwrap(),
                r.get(4).unwrap(),
                r.get(6).unwrap(),
                r.get(7).unwrap(),
            )
        })
        .unwrap();
    let (_, command, state, info) = rows
        .into_iter()
        .find(|r| r.0 == id)
        .unwrap_or_else(|| panic!("connection {id} is not in the list"));
    (command, state, info)
}

fn count(c: &mut Conn) -> i64 {
    c.query_first("SELECT COUNT(*) FROM f.t").unwrap().unwrap()
}

#[test]
fn a_global_read_lock_holds_every_writer_until_it_is_released() {
    let server = TestServer::start();
    let mut holder = connect(&server);
    let mut other = connect(&server);
    holder
        .query_drop("CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, v INT); INSERT INTO f.t VALUES (1, 1)")
        .unwrap();

    holder.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    // Reads go on, for everybody.
    assert_eq!(count(&mut other), 1);
    assert_eq!(count(&mut holder), 1);
    // The holder's own writes are refused at once.
    assert_eq!(
        code(holder.query_drop("INSERT INTO f.t VALUES (2, 2)")),
        1223
    );
    assert_eq!(code(holder.query_drop("CREATE TABLE f.u (id INT)")), 1223);
    // Another connection's writes wait, up to lock_wait_timeout.
    other
        .query_drop("SET SESSION lock_wait_timeout = 1")
        .unwrap();
    for sql in [
        "INSERT INTO f.t VALUES (3, 3)",
        "UPDATE f.t SET v = 9",
        "DELETE FROM f.t",
        "CREATE TABLE f.u (id INT)",
        "DROP TABLE f.t",
        "CREATE USER 'u'@'%'",
    ] {
        let t0 = Instant::now();
        assert_eq!(code(other.query_drop(sql)), 1205, "{sql}");
        assert!(
            t0.elapsed() >= Duration::from_millis(900),
            "{sql} did not wait"
        );
    }
    // TEMPORARY tables are the session's own: writable.
    other
        .query_drop("CREATE TEMPORARY TABLE f.tmp (id INT); INSERT INTO f.tmp VALUES (1)")
        .unwrap();

    // A waiting insert goes on once the holder unlocks.
    other
        .query_drop("SET SESSION lock_wait_timeout = 60")
        .unwrap();
    let other_id = other.connection_id();
    assert_eq!(
        shown(&mut holder, other_id),
        ("Sleep".into(), "".into(), None)
    );
    let waiting = in_background(other, "INSERT INTO f.t VALUES (4, 4)");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(count(&mut holder), 1, "nothing got in under the lock");
    // SHOW PROCESSLIST tells a DBA who waits for what.
    assert_eq!(
        shown(&mut holder, other_id),
        (
            "Query".into(),
            "Waiting for global read lock".into(),
            Some("INSERT INTO f.t VALUES (4, 4)".into())
        )
    );
    let unlocked = Instant::now();
    holder.query_drop("UNLOCK TABLES").unwrap();
    let (mut other, r, ended) = waiting.join().unwrap();
    r.unwrap();
    assert!(ended >= unlocked);
    assert_eq!(count(&mut holder), 2);

    // A transaction that wrote before the lock: FTWRL does not wait for it (it is not
    // running), its COMMIT waits for the lock's end; its rows stay invisible meanwhile.
    other.query_drop("BEGIN").unwrap();
    other.query_drop("INSERT INTO f.t VALUES (5, 5)").unwrap();
    holder.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    let committing = in_background(other, "COMMIT");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(count(&mut holder), 2);
    assert_eq!(
        shown(&mut holder, other_id),
        (
            "Query".into(),
            "Waiting for commit lock".into(),
            Some("COMMIT".into())
        )
    );
    // The holder's disconnect releases the lock.
    drop(holder);
    let (mut other, r, _) = committing.join().unwrap();
    r.unwrap();
    assert_eq!(count(&mut other), 3);

    // KILL QUERY ends a wait for the lock.
    let mut holder = connect(&server);
    holder.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    let id = other.connection_id();
    let waiting = in_background(other, "INSERT INTO f.t VALUES (6, 6)");
    std::thread::sleep(Duration::from_millis(300));
    let mut admin = connect(&server);
    admin.query_drop(format!("KILL QUERY {id}")).unwrap();
    let (mut other, r, _) = waiting.join().unwrap();
    assert_eq!(code(r), 1317);
    holder.query_drop("UNLOCK TABLES").unwrap();
    other.query_drop("INSERT INTO f.t VALUES (6, 6)").unwrap();

    // FTWRL waits for a running write; when that outlasts lock_wait_timeout it fails and
    // holds nothing.
    let slow = connect(&server);
    let running = in_background(slow, "UPDATE f.t SET v = v + SLEEP(2) WHERE id = 1");
    std::thread::sleep(Duration::from_millis(300));
    holder
        .query_drop("SET SESSION lock_wait_timeout = 1")
        .unwrap();
    assert_eq!(code(holder.query_drop("FLUSH TABLES WITH READ LOCK")), 1205);
    other.query_drop("INSERT INTO f.t VALUES (7, 7)").unwrap();
    let (_, r, _) = running.join().unwrap();
    r.unwrap();
    holder
        .query_drop("SET SESSION lock_wait_timeout = 60")
        .unwrap();
    holder.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    // Not while the session holds LOCK TABLES.
    holder.query_drop("UNLOCK TABLES").unwrap();
    holder.query_drop("USE f").unwrap();
    holder.query_drop("LOCK TABLES t READ").unwrap();
    assert_eq!(code(holder.query_drop("FLUSH TABLES WITH READ LOCK")), 1192);
    holder.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(count(&mut other), 5);

    // Two phases, as MariaDB: a statement waiting for the row lock of an open transaction
    // does not keep that transaction from committing while FTWRL drains the statements.
    let mut c = connect(&server);
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO f.t VALUES (8, 8)").unwrap();
    let w = in_background(connect(&server), "INSERT INTO f.t VALUES (8, 80)");
    std::thread::sleep(Duration::from_millis(300));
    let locking = std::thread::spawn(move || {
        let t0 = Instant::now();
        holder
            .query_drop("FLUSH TABLES WITH READ LOCK")
            .map(|()| (holder, t0.elapsed()))
    });
    std::thread::sleep(Duration::from_millis(300));
    let t0 = Instant::now();
    c.query_drop("COMMIT").unwrap();
    assert!(t0.elapsed() < Duration::from_secs(5), "the COMMIT was held");
    let (_, r, _) = w.join().unwrap();
    assert_eq!(code(r), 1062, "the waiting insert saw the commit");
    let (mut holder, took) = locking.join().unwrap().unwrap();
    assert!(took < Duration::from_secs(5), "FTWRL took {took:?}");

    // TEMPORARY tables, also inside transactions and through DDL without TEMPORARY, stay
    // writable by the holder and by others.
    holder
        .query_drop(
            "CREATE TEMPORARY TABLE f.tt (id INT PRIMARY KEY); BEGIN; INSERT INTO f.tt VALUES (1); COMMIT; \
             TRUNCATE TABLE f.tt; ALTER TABLE f.tt ADD COLUMN v INT; DROP TABLE f.tt",
        )
        .unwrap();
    c.query_drop("SET SESSION lock_wait_timeout = 1").unwrap();
    c.query_drop(
        "CREATE TEMPORARY TABLE f.tt (id INT); SET autocommit = 0; INSERT INTO f.tt VALUES (1); COMMIT",
    )
    .unwrap();
    assert_eq!(code(c.query_drop("INSERT INTO f.t VALUES (9, 9)")), 1205);
    holder.query_drop("UNLOCK TABLES").unwrap();
    assert_eq!(count(&mut holder), 6);

    // A transaction that only locked rows (FOR UPDATE) changed nothing: its COMMIT passes.
    c.query_drop("COMMIT").unwrap();
    c.query_drop("SET autocommit = 1").unwrap();
    c.query_drop("BEGIN").unwrap();
    let _: Vec<(i64, i64)> = c
        .query("SELECT id, v FROM f.t WHERE id = 1 FOR UPDATE")
        .unwrap();
    holder.query_drop("FLUSH TABLES WITH READ LOCK").unwrap();
    c.query_drop("COMMIT").unwrap();
    holder.query_drop("UNLOCK TABLES").unwrap();
}
