//! Explicit transactions: COMMIT keeps, ROLLBACK undoes, DDL commits implicitly, a failed
//! statement inside a transaction is undone alone, and closing the connection rolls back.

mod common;
use common::*;
use tierdb_engine::Value;

#[test]
fn commit_and_rollback() {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL DEFAULT 0)",
    );
    exec(&mut s, "BEGIN");
    assert!(s.in_transaction());
    exec(&mut s, "INSERT INTO t (id) VALUES (1), (2)");
    exec(&mut s, "COMMIT");
    assert!(!s.in_transaction());
    exec(&mut s, "START TRANSACTION");
    exec(&mut s, "INSERT INTO t (id) VALUES (3)");
    exec(&mut s, "UPDATE t SET v = 9 WHERE id = 1");
    exec(&mut s, "DELETE FROM t WHERE id = 2");
    assert_eq!(ids(&mut s), vec![1, 3]);
    exec(&mut s, "ROLLBACK");
    assert_eq!(ids(&mut s), vec![1, 2]);
    assert_eq!(
        q(&mut s, "SELECT v FROM t WHERE id = 1"),
        vec![vec![Value::Int(0)]]
    );
    // prepared BEGIN / COMMIT, as sysbench sends them
    let b = s.prepare("BEGIN").unwrap().statement_id;
    let c = s.prepare("COMMIT").unwrap().statement_id;
    let r = s.prepare("ROLLBACK").unwrap().statement_id;
    s.execute(b, &[]).unwrap();
    exec(&mut s, "INSERT INTO t (id) VALUES (4)");
    s.execute(r, &[]).unwrap();
    s.execute(b, &[]).unwrap();
    exec(&mut s, "INSERT INTO t (id) VALUES (5)");
    s.execute(c, &[]).unwrap();
    assert_eq!(ids(&mut s), vec![1, 2, 5]);
}

#[test]
fn failed_statement_in_transaction_is_undone_alone() {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL DEFAULT 0)",
    );
    exec(&mut s, "INSERT INTO t (id) VALUES (10)");
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t (id) VALUES (1)");
    // rows 2 and 3 go in before 10 collides: the statement must leave nothing behind
    assert_eq!(
        err(&mut s, "INSERT INTO t (id) VALUES (2), (3), (10)").code,
        1062
    );
    assert!(s.in_transaction());
    exec(&mut s, "COMMIT");
    assert_eq!(ids(&mut s), vec![1, 10]);
    // multi-row UPDATE failing half-way (v out of range for row 2 only)
    exec(
        &mut s,
        "CREATE TABLE w (id INT PRIMARY KEY, v TINYINT NOT NULL)",
    );
    exec(&mut s, "INSERT INTO w VALUES (1, 100), (2, 120)");
    exec(&mut s, "BEGIN");
    assert_eq!(err(&mut s, "UPDATE w SET v = v + 10").code, 1264);
    exec(&mut s, "COMMIT");
    assert_eq!(
        q(&mut s, "SELECT v FROM w ORDER BY id"),
        vec![vec![Value::Int(100)], vec![Value::Int(120)]]
    );
}

#[test]
fn ddl_commits_and_end_rolls_back() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (1)");
    exec(&mut s, "CREATE TABLE u (id INT PRIMARY KEY)");
    assert!(!s.in_transaction());
    exec(&mut s, "ROLLBACK");
    assert_eq!(ids(&mut s), vec![1]);
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (2)");
    s.end();
    let mut s2 = e.session(2);
    assert_eq!(ids(&mut s2), vec![1]);
    // BEGIN inside a transaction commits the first one
    exec(&mut s2, "BEGIN");
    exec(&mut s2, "INSERT INTO t VALUES (3)");
    exec(&mut s2, "BEGIN");
    exec(&mut s2, "ROLLBACK");
    assert_eq!(ids(&mut s2), vec![1, 3]);
}
