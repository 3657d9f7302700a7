//! Locking reads: `SELECT ... FOR UPDATE`, `FOR SHARE` and `LOCK IN SHARE MODE` lock every
//! returned row (exclusively for FOR UPDATE, shared for the others) until the transaction
//! ends, and return the newest
//! committed version — not the version the unlocked scan saw — re-checking the WHERE on it.
//!
//! - the forms parse (text and prepared, under EXPLAIN too); derived tables, joins and an
//!   unknown `OF` name are refused;
//! - `NOWAIT` fails with 1205 at once on a row another transaction holds; `SKIP LOCKED`
//!   leaves such rows out (a job queue: two workers each take a different job);
//! - a row locked by FOR UPDATE / FOR SHARE / LOCK IN SHARE MODE makes a writer and a
//!   FOR UPDATE reader wait (1205 after `innodb_lock_wait_timeout`), never a plain reader;
//!   share-mode readers wait only for FOR UPDATE, and share the row with each other;
//! - a share-mode reader that then writes the row upgrades its lock: it waits for the other
//!   share-mode readers, and two of them doing so is a deadlock (1213);
//! - range, index and aggregate locking reads lock exactly the rows that match;
//! - a locking read waiting for a writer returns the writer's committed version, and drops a
//!   row that no longer matches the WHERE;
//! - in autocommit mode the locks end with the statement.

mod common;
use common::*;
use std::time::{Duration, Instant};
use tierdb_engine::Value;
use tierdb_sql::{QueryResult, Session};

fn setup() -> Env {
    env_with_small_table(5)
}

/// Runs `sql` expecting a lock wait timeout, and checks that it waited.
fn times_out(s: &mut Session, sql: &str) {
    let t0 = Instant::now();
    assert_eq!(err(s, sql).code, 1205, "{sql}");
    assert!(
        t0.elapsed() >= Duration::from_millis(900),
        "{sql} did not wait"
    );
}

fn ints(r: Vec<Vec<Value>>) -> Vec<Vec<i64>> {
    r.iter().map(|row| row.iter().map(int).collect()).collect()
}

#[test]
fn every_form_parses_and_unsupported_shapes_are_refused() {
    let e = setup();
    let mut s = e.session(2);
    for sql in [
        "SELECT v FROM t WHERE id = 1 FOR UPDATE",
        "SELECT v FROM t WHERE id = 1 FOR SHARE",
        "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE",
        "select v from t where id = 1 lock   in share\nmode ;",
        "SELECT v FROM t AS a WHERE id = 1 FOR UPDATE OF a",
        "SELECT v FROM t WHERE id = 1 FOR UPDATE OF t",
        "(SELECT v FROM t WHERE id = 1) FOR UPDATE",
    ] {
        assert_eq!(ints(q(&mut s, sql)), vec![vec![0]], "{sql}");
    }
    // EXPLAIN shows the access path of a locking read like any other.
    for sql in [
        "EXPLAIN SELECT v FROM t WHERE id = 1 FOR UPDATE",
        "EXPLAIN SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE",
    ] {
        let r = q(&mut s, sql);
        assert_eq!(text(&r[0][3]), "const", "{sql}");
    }
    // Ordered through a secondary index, a locking read sorts again: a row's order column
    // may have moved between the scan and the re-read after its lock.
    let plain = q(
        &mut s,
        "EXPLAIN SELECT id FROM t WHERE k BETWEEN 10 AND 30 ORDER BY k",
    );
    assert_eq!(text(&plain[0][5]), "k_idx");
    assert!(!text(&plain[0][9]).contains("filesort"));
    let locking = q(
        &mut s,
        "EXPLAIN SELECT id FROM t WHERE k BETWEEN 10 AND 30 ORDER BY k FOR UPDATE",
    );
    assert!(text(&locking[0][9]).contains("filesort"));
    assert_eq!(
        ints(q(
            &mut s,
            "SELECT id FROM t WHERE k BETWEEN 10 AND 30 ORDER BY k DESC FOR UPDATE"
        )),
        vec![vec![3], vec![2], vec![1]]
    );
    // Prepared, with a parameter.
    let id = s
        .prepare("SELECT v FROM t WHERE id = ? LOCK IN SHARE MODE")
        .expect("prepare")
        .statement_id;
    let r = rows(s.execute(id, &[Value::Int(2)]).expect("execute"));
    assert_eq!(ints(r), vec![vec![0]]);
    for (sql, code) in [
        ("SELECT * FROM (SELECT v FROM t) d FOR UPDATE", 1235),
        ("SELECT * FROM t a JOIN t b ON a.id = b.id FOR UPDATE", 1235),
        ("SELECT * FROM (SELECT v FROM t LOCK IN SHARE MODE) d", 1235),
        ("SELECT v FROM t FOR UPDATE OF nosuch", 3568),
        ("SELECT v FROM t AS a FOR UPDATE OF t", 3568),
        ("INSERT INTO t VALUES (9, 9, 9) LOCK IN SHARE MODE", 1064),
        ("LOCK IN SHARE MODE", 1064),
        ("SELECT v FROM t LOCK IN SHARE MODE LIMIT 1", 1235),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
}

#[test]
fn a_locked_row_blocks_writers_and_locking_readers_not_plain_readers() {
    let e = setup();
    let mut b = e.session(3);
    for lock in ["FOR UPDATE", "FOR SHARE", "LOCK IN SHARE MODE"] {
        let mut a = e.session(2);
        exec(&mut a, "BEGIN");
        assert_eq!(
            ints(q(&mut a, &format!("SELECT v FROM t WHERE id = 1 {lock}"))),
            vec![vec![0]]
        );
        times_out(&mut b, "UPDATE t SET v = v + 1 WHERE id = 1");
        times_out(&mut b, "DELETE FROM t WHERE id = 1");
        times_out(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE");
        for share in ["FOR SHARE", "LOCK IN SHARE MODE"] {
            let sql = format!("SELECT v FROM t WHERE id = 1 {share}");
            if lock == "FOR UPDATE" {
                times_out(&mut b, &sql);
            } else {
                // Shared with shared: no wait.
                assert_eq!(ints(q(&mut b, &sql)), vec![vec![0]], "{lock} then {share}");
            }
        }
        // Plain reads never wait; other rows are free.
        assert_eq!(
            ints(q(&mut b, "SELECT v FROM t WHERE id = 1")),
            vec![vec![0]]
        );
        assert_eq!(
            affected(&exec(&mut b, "UPDATE t SET v = 7 WHERE id = 2")),
            1
        );
        exec(&mut a, "COMMIT");
        assert_eq!(
            affected(&exec(&mut b, "UPDATE t SET v = 0 WHERE id = 2")),
            1
        );
        assert_eq!(
            ints(q(&mut b, "SELECT v FROM t WHERE id = 1 FOR UPDATE")),
            vec![vec![0]]
        );
    }
    // A locking read of an absent key locks the key: an insert of it waits.
    let mut a = e.session(2);
    exec(&mut a, "BEGIN");
    assert!(q(&mut a, "SELECT v FROM t WHERE id = 9 FOR UPDATE").is_empty());
    times_out(&mut b, "INSERT INTO t VALUES (9, 90, 0)");
    exec(&mut a, "ROLLBACK");
    exec(&mut b, "INSERT INTO t VALUES (9, 90, 0)");
}

#[test]
fn range_index_and_aggregate_locking_reads_lock_the_matching_rows() {
    let e = setup();
    let mut a = e.session(2);
    let mut b = e.session(3);
    exec(&mut a, "BEGIN");
    assert_eq!(
        ints(q(
            &mut a,
            "SELECT id FROM t WHERE id BETWEEN 2 AND 3 ORDER BY id FOR UPDATE"
        )),
        vec![vec![2], vec![3]]
    );
    assert_eq!(
        ints(q(&mut a, "SELECT id FROM t WHERE k = 50 FOR UPDATE")),
        vec![vec![5]]
    );
    times_out(&mut b, "UPDATE t SET v = 1 WHERE id = 2");
    times_out(&mut b, "UPDATE t SET v = 1 WHERE id = 3");
    times_out(&mut b, "UPDATE t SET v = 1 WHERE id = 5");
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 1 WHERE id = 1")),
        1
    );
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 1 WHERE id = 4")),
        1
    );
    exec(&mut a, "COMMIT");
    // An aggregate over a full scan locks every row it counts (v = 1: rows 1 and 4).
    exec(&mut a, "BEGIN");
    assert_eq!(
        ints(q(&mut a, "SELECT COUNT(*) FROM t WHERE v = 1 FOR UPDATE")),
        vec![vec![2]]
    );
    times_out(&mut b, "UPDATE t SET v = 2 WHERE id = 4");
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 2 WHERE id = 3")),
        1
    );
    exec(&mut a, "COMMIT");
    // LIMIT stops the scan: only the first matching row is locked.
    exec(&mut a, "BEGIN");
    assert_eq!(
        ints(q(&mut a, "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE")),
        vec![vec![1]]
    );
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 3 WHERE id = 2")),
        1
    );
    times_out(&mut b, "UPDATE t SET v = 3 WHERE id = 1");
    exec(&mut a, "COMMIT");
}

#[test]
fn a_waiting_locking_read_returns_the_committed_version_and_rechecks_the_where() {
    let e = setup();
    exec(
        &mut e.session(9),
        "SET GLOBAL innodb_lock_wait_timeout = 20",
    );
    let mut w = e.session(2);
    exec(&mut w, "BEGIN");
    exec(&mut w, "UPDATE t SET v = 100 WHERE id = 1");
    exec(&mut w, "UPDATE t SET v = 5 WHERE id = 2");
    let mut r = e.session(3);
    let reader = std::thread::spawn(move || {
        exec(&mut r, "BEGIN");
        // A plain read sees the committed (snapshot) version.
        assert_eq!(
            ints(q(&mut r, "SELECT v FROM t WHERE id = 2")),
            vec![vec![0]]
        );
        let point = ints(q(&mut r, "SELECT v FROM t WHERE id = 2 FOR UPDATE"));
        let range = ints(q(
            &mut r,
            "SELECT id, v FROM t WHERE v < 50 ORDER BY id FOR UPDATE",
        ));
        exec(&mut r, "COMMIT");
        (point, range)
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!reader.is_finished(), "the locking read did not wait");
    exec(&mut w, "COMMIT");
    let (point, range) = reader.join().expect("reader");
    assert_eq!(point, vec![vec![5]]);
    // Row 1 matched on the unlocked scan (v = 0) but not after the wait (v = 100).
    assert_eq!(range, vec![vec![2, 5], vec![3, 0], vec![4, 0], vec![5, 0]]);
}

#[test]
fn autocommit_locking_reads_release_their_locks_at_once() {
    let e = setup();
    let mut a = e.session(2);
    let mut b = e.session(3);
    assert_eq!(
        ints(q(&mut a, "SELECT v FROM t WHERE id = 1 FOR UPDATE")),
        vec![vec![0]]
    );
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 1 WHERE id = 1")),
        1
    );
    // With autocommit off the lock stays until COMMIT.
    exec(&mut a, "SET autocommit = 0");
    assert_eq!(
        ints(q(&mut a, "SELECT v FROM t WHERE id = 1 FOR UPDATE")),
        vec![vec![1]]
    );
    times_out(&mut b, "UPDATE t SET v = 2 WHERE id = 1");
    exec(&mut a, "COMMIT");
    assert_eq!(
        affected(&exec(&mut b, "UPDATE t SET v = 2 WHERE id = 1")),
        1
    );
    match a.query("SELECT v FROM t WHERE id = 1 FOR UPDATE") {
        Ok(QueryResult::Rows { rows, .. }) => assert_eq!(ints(rows), vec![vec![2]]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn nowait_fails_at_once_and_skip_locked_leaves_locked_rows_out() {
    let e = setup();
    let mut a = e.session(2);
    let mut b = e.session(3);
    exec(&mut a, "SET GLOBAL innodb_lock_wait_timeout = 30");
    exec(&mut a, "BEGIN");
    // Worker A takes the first open job.
    let job = "SELECT id FROM t WHERE v = 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
    assert_eq!(ints(q(&mut a, job)), vec![vec![1]]);
    // Worker B skips it and gets the next; its plain and share-mode variants agree.
    exec(&mut b, "BEGIN");
    assert_eq!(ints(q(&mut b, job)), vec![vec![2]]);
    assert_eq!(
        ints(q(
            &mut b,
            "SELECT id FROM t WHERE id <= 3 FOR SHARE SKIP LOCKED"
        )),
        vec![vec![2], vec![3]],
        "rows A holds are left out, B's own are kept"
    );
    // NOWAIT on a row A holds: 1205 at once (the timeout is 30 s), the transaction goes on.
    for sql in [
        "SELECT v FROM t WHERE id = 1 FOR UPDATE NOWAIT",
        "SELECT v FROM t WHERE id = 1 FOR SHARE NOWAIT",
        "SELECT v FROM t WHERE id BETWEEN 1 AND 2 LOCK IN SHARE MODE NOWAIT",
    ] {
        let t0 = Instant::now();
        assert_eq!(err(&mut b, sql).code, 1205, "{sql}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{sql} waited");
    }
    assert_eq!(
        ints(q(&mut b, "SELECT v FROM t WHERE id = 2 FOR UPDATE NOWAIT")),
        vec![vec![0]],
        "a row B holds itself is no conflict"
    );
    // Prepared, as a worker would run it.
    let id = b.prepare(job).expect("prepare").statement_id;
    assert_eq!(
        ints(rows(b.execute(id, &[]).expect("execute"))),
        vec![vec![2]],
        "1 is A's and skipped; 2 is B's own lock, so not skipped"
    );
    exec(&mut a, "UPDATE t SET v = 1 WHERE id = 1");
    exec(&mut a, "COMMIT");
    exec(&mut b, "COMMIT");
    let mut c = e.session(4);
    assert_eq!(
        ints(q(&mut c, job)),
        vec![vec![2]],
        "job 1 is done, 2 is free again"
    );
    exec(&mut c, "SET GLOBAL innodb_lock_wait_timeout = 1");
}

#[test]
fn share_mode_readers_share_and_an_upgrade_waits_for_the_others() {
    let e = setup();
    let mut a = e.session(2);
    let mut b = e.session(3);
    exec(&mut a, "BEGIN");
    exec(&mut b, "BEGIN");
    assert_eq!(
        ints(q(&mut a, "SELECT v FROM t WHERE id = 1 FOR SHARE")),
        vec![vec![0]]
    );
    assert_eq!(
        ints(q(&mut b, "SELECT v FROM t WHERE id = 1 LOCK IN SHARE MODE")),
        vec![vec![0]]
    );
    // A writes the row it read: it must wait for B's shared lock (statement rollback only).
    times_out(&mut a, "UPDATE t SET v = 5 WHERE id = 1");
    exec(&mut b, "COMMIT");
    assert_eq!(
        affected(&exec(&mut a, "UPDATE t SET v = 5 WHERE id = 1")),
        1
    );
    // Now A holds it exclusively: share-mode readers wait.
    times_out(&mut b, "SELECT v FROM t WHERE id = 1 FOR SHARE");
    exec(&mut a, "COMMIT");
    assert_eq!(
        ints(q(&mut b, "SELECT v FROM t WHERE id = 1 FOR SHARE")),
        vec![vec![5]]
    );
    exec(&mut b, "COMMIT");

    // Two share-mode readers that both write the row: the second to wait closes the cycle
    // and gets 1213 (its transaction is rolled back), the first then goes through.
    // (A's wait lasts at most the 1 s lock wait timeout: B closes the cycle after 200 ms.)
    exec(&mut a, "BEGIN");
    exec(&mut b, "BEGIN");
    q(&mut a, "SELECT v FROM t WHERE id = 2 FOR SHARE");
    q(&mut b, "SELECT v FROM t WHERE id = 2 FOR SHARE");
    let waiter = std::thread::spawn(move || {
        let r = a
            .query("UPDATE t SET v = 1 WHERE id = 2")
            .map(|r| affected(&r));
        let c = a.query("COMMIT").map(|_| ());
        (r.map_err(|e| e.code), c.map_err(|e| e.code))
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(err(&mut b, "UPDATE t SET v = 2 WHERE id = 2").code, 1213);
    assert!(!b.in_transaction(), "a deadlock ends the whole transaction");
    assert_eq!(waiter.join().unwrap(), (Ok(1), Ok(())));
    assert_eq!(
        ints(q(&mut b, "SELECT v FROM t WHERE id = 2")),
        vec![vec![1]]
    );
}
