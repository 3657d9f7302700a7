//! Subqueries beyond what the MariaDB script covers: a prepared statement whose subquery
//! takes a parameter gives each execution's own answer; a subquery sees the statement's own
//! transaction; under LOCK TABLES a subquery's table must be locked too (1100); a correlated
//! subquery in the WHERE of a locking read is refused with 1235 naming it; subqueries where
//! tierdb does not run them (SET, INSERT values) are 1235 too, never a panic.

mod common;

use common::*;
use tierdb_engine::Value;

#[test]
fn subqueries_with_parameters_transactions_and_table_locks() {
    let env = env_with_small_table(20);
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE big (id INT PRIMARY KEY, k INT)");
    exec(&mut s, "INSERT INTO big VALUES (1, 5), (2, 15), (3, 25)");
    let st = s
        .prepare("SELECT COUNT(*) FROM t WHERE id IN (SELECT k FROM big WHERE k > ?)")
        .expect("prepare")
        .statement_id;
    let count = |s: &mut tierdb_sql::Session, p: i64| -> i64 {
        match s.execute(st, &[Value::Int(p)]).expect("execute") {
            tierdb_sql::QueryResult::Rows { rows, .. } => int(&rows[0][0]),
            other => panic!("{other:?}"),
        }
    };
    // t has ids 0..19: k = 5 and 15 are ids there, 25 is not.
    assert_eq!(count(&mut s, 0), 2);
    assert_eq!(count(&mut s, 10), 1);
    assert_eq!(count(&mut s, 20), 0);
    // Inside a transaction the subquery sees its uncommitted rows.
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO big VALUES (4, 7)");
    assert_eq!(count(&mut s, 0), 3);
    exec(&mut s, "ROLLBACK");
    assert_eq!(count(&mut s, 0), 2);

    exec(&mut s, "LOCK TABLES t READ");
    assert_eq!(
        err(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE id IN (SELECT k FROM big)"
        )
        .code,
        1100
    );
    exec(&mut s, "UNLOCK TABLES");

    // A correlated subquery in the WHERE of a locking read is refused, naming it (the
    // locked rows are re-checked while the scan holds the transaction).
    let e = err(
        &mut s,
        "SELECT id FROM t WHERE k = (SELECT k FROM big WHERE big.id = t.id) FOR UPDATE",
    );
    assert_eq!(e.code, 1235, "{e:?}");
    assert!(e.message.contains("correlated"), "{}", e.message);
    assert_eq!(err(&mut s, "SET @x = (SELECT 1)").code, 1235);
    assert_eq!(
        err(&mut s, "INSERT INTO big VALUES ((SELECT 9), 1)").code,
        1235
    );
}
