//! `SET autocommit=0` keeps a transaction open across statements; ROLLBACK undoes, COMMIT
//! or `SET autocommit=1` makes the work permanent.

mod common;
use common::*;
use tierdb_engine::Value;

#[test]
fn autocommit_off_keeps_a_transaction_open() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    assert_eq!(q(&mut s, "SELECT @@autocommit"), vec![vec![Value::Int(1)]]);
    exec(&mut s, "SET autocommit=0");
    assert_eq!(q(&mut s, "SELECT @@autocommit"), vec![vec![Value::Int(0)]]);
    exec(&mut s, "INSERT INTO t VALUES (1)");
    assert!(s.in_transaction());
    exec(&mut s, "ROLLBACK");
    assert!(!s.in_transaction());
    assert!(q(&mut s, "SELECT * FROM t").is_empty());
    exec(&mut s, "INSERT INTO t VALUES (2)");
    exec(&mut s, "COMMIT");
    exec(&mut s, "INSERT INTO t VALUES (3)");
    // turning autocommit back on commits the open transaction
    exec(&mut s, "SET autocommit=1");
    assert!(!s.in_transaction());
    exec(&mut s, "INSERT INTO t VALUES (4)");
    assert!(!s.in_transaction());
    let ids: Vec<i64> = q(&mut s, "SELECT id FROM t")
        .iter()
        .map(|r| int(&r[0]))
        .collect();
    assert_eq!(ids, vec![2, 3, 4]);
    exec(&mut s, "SET SESSION autocommit = OFF");
    exec(&mut s, "DELETE FROM t");
    s.end();
    let mut s2 = e.session(2);
    assert_eq!(
        q(&mut s2, "SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(3)]]
    );
}
