//! Statement-level rollback inside an explicit transaction (InnoDB with
//! `innodb_rollback_on_timeout=OFF`):
//!
//! - a lock wait timeout (1205) undoes only the failing statement — including the rows it
//!   changed before it waited — keeps the transaction open with its earlier changes, and
//!   COMMIT keeps them; the secondary index agrees with the rows afterwards;
//! - the rows the failed statement locked stay locked until the transaction ends;
//! - a duplicate key (1062) in a multi-row INSERT, or in an UPDATE that moves a primary key
//!   onto an existing one, undoes that statement only;
//! - a deadlock (1213) rolls the whole transaction back.

mod common;
use common::*;
use std::time::Duration;
use tierdb_engine::Value;
use tierdb_sql::Session;

fn setup() -> Env {
    env_with_small_table(4)
}

fn table(s: &mut Session) -> Vec<(i64, i64, i64)> {
    q(s, "SELECT id, k, v FROM t ORDER BY id")
        .iter()
        .map(|r| (int(&r[0]), int(&r[1]), int(&r[2])))
        .collect()
}

/// Every row found through the index on `k` is the row itself, and every row is found.
fn assert_index_agrees(s: &mut Session) {
    let rows = table(s);
    let mut by_k = rows.clone();
    by_k.sort_by_key(|r| (r.1, r.0));
    let through_index: Vec<(i64, i64, i64)> = q(
        s,
        "SELECT id, k, v FROM t FORCE INDEX (k_idx) WHERE k > -1000000 ORDER BY k, id",
    )
    .iter()
    .map(|r| (int(&r[0]), int(&r[1]), int(&r[2])))
    .collect();
    assert_eq!(through_index, by_k);
    for (id, k, v) in rows {
        assert_eq!(
            q(s, &format!("SELECT id, v FROM t WHERE k = {k}")),
            vec![vec![Value::Int(id), Value::Int(v)]]
        );
    }
}

#[test]
fn lock_wait_timeout_undoes_the_statement_and_keeps_the_transaction() {
    let e = setup();
    let mut holder = e.session(2);
    let mut s = e.session(3);
    let mut other = e.session(4);
    exec(&mut holder, "BEGIN");
    exec(&mut holder, "SELECT v FROM t WHERE id = 3 FOR UPDATE");
    exec(&mut s, "BEGIN");
    exec(&mut s, "UPDATE t SET v = 1 WHERE id = 1");
    exec(&mut s, "INSERT INTO t VALUES (5, 50, 1)");
    // Row 2 changes (index key included), then row 3 is locked: row 2 must come back.
    assert_eq!(
        err(
            &mut s,
            "UPDATE t SET k = k + 1000, v = 9 WHERE id IN (2, 3)"
        )
        .code,
        1205
    );
    assert!(s.in_transaction());
    // Row 6 goes in, then row 3 is locked.
    assert_eq!(
        err(&mut s, "INSERT INTO t VALUES (6, 60, 1), (3, 31, 1)").code,
        1205
    );
    // Row 2 is delete-marked, then row 3 is locked.
    assert_eq!(err(&mut s, "DELETE FROM t WHERE id IN (2, 3)").code, 1205);
    assert!(s.in_transaction());
    assert_eq!(
        table(&mut s),
        vec![(1, 10, 1), (2, 20, 0), (3, 30, 0), (4, 40, 0), (5, 50, 1)]
    );
    assert_index_agrees(&mut s);
    // The failed statements' locks (row 2) are kept until the transaction ends.
    assert_eq!(
        err(&mut other, "UPDATE t SET v = 5 WHERE id = 2").code,
        1205
    );
    exec(&mut s, "UPDATE t SET v = 2 WHERE id = 4");
    exec(&mut s, "COMMIT");
    exec(&mut holder, "COMMIT");
    assert_eq!(
        affected(&exec(&mut other, "UPDATE t SET v = 5 WHERE id = 2")),
        1
    );
    assert_eq!(
        table(&mut other),
        vec![(1, 10, 1), (2, 20, 5), (3, 30, 0), (4, 40, 2), (5, 50, 1)]
    );
    assert_index_agrees(&mut other);
}

#[test]
fn innodb_rollback_on_timeout_is_off_and_read_only() {
    let e = setup();
    let mut s = e.session(2);
    assert_eq!(
        q(&mut s, "SELECT @@innodb_rollback_on_timeout"),
        vec![vec![Value::Bytes(b"OFF".to_vec())]]
    );
    assert_eq!(
        err(&mut s, "SET GLOBAL innodb_rollback_on_timeout = ON").code,
        1238
    );
}

#[test]
fn duplicate_key_undoes_the_statement_only() {
    let e = setup();
    let mut s = e.session(2);
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (5, 50, 0)");
    assert_eq!(
        err(
            &mut s,
            "INSERT INTO t VALUES (6, 60, 0), (7, 70, 0), (1, 11, 1)"
        )
        .code,
        1062
    );
    assert!(s.in_transaction());
    // A primary key moved onto an existing one: the delete of row 1 is undone.
    assert_eq!(err(&mut s, "UPDATE t SET id = 2 WHERE id = 1").code, 1062);
    assert_eq!(
        err(&mut s, "UPDATE t SET id = id + 1, k = k + 1 WHERE id >= 3").code,
        1062
    );
    assert!(s.in_transaction());
    exec(&mut s, "UPDATE t SET k = 21 WHERE id = 2");
    exec(&mut s, "COMMIT");
    assert_eq!(
        table(&mut s),
        vec![(1, 10, 0), (2, 21, 0), (3, 30, 0), (4, 40, 0), (5, 50, 0)]
    );
    assert_index_agrees(&mut s);
}

#[test]
fn deadlock_rolls_back_the_whole_transaction() {
    let e = setup();
    exec(
        &mut e.session(9),
        "SET GLOBAL innodb_lock_wait_timeout = 20",
    );
    let mut a = e.session(2);
    let mut b = e.session(3);
    exec(&mut a, "BEGIN");
    exec(&mut a, "UPDATE t SET v = 1 WHERE id = 1");
    exec(&mut b, "BEGIN");
    exec(&mut b, "UPDATE t SET v = 2 WHERE id = 2");
    exec(&mut b, "INSERT INTO t VALUES (5, 50, 2)");
    let waiter = std::thread::spawn(move || {
        exec(&mut a, "UPDATE t SET v = 1 WHERE id = 2");
        exec(&mut a, "COMMIT");
        a
    });
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(err(&mut b, "UPDATE t SET v = 2 WHERE id = 1").code, 1213);
    assert!(!b.in_transaction());
    let mut a = waiter.join().expect("waiter");
    assert_eq!(
        table(&mut a),
        vec![(1, 10, 1), (2, 20, 1), (3, 30, 0), (4, 40, 0)]
    );
    assert_index_agrees(&mut a);
}
