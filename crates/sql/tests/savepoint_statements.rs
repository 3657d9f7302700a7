//! SQL savepoints: `SAVEPOINT`, `ROLLBACK TO [SAVEPOINT]`, `RELEASE SAVEPOINT`, with MySQL's
//! rules — rolling back keeps the named savepoint and forgets later ones, a reused name
//! moves, names end with the transaction, unknown names are error 1305 (the transaction
//! stays open), row locks survive a rollback to a savepoint, and index entries are restored.

mod common;
use common::*;

#[test]
fn rollback_to_savepoint_undoes_only_later_changes() {
    let e = env_with_small_table(3);
    let mut s = e.session(1);
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (10, 100, 0)");
    exec(&mut s, "SAVEPOINT a");
    exec(&mut s, "INSERT INTO t VALUES (11, 110, 0)");
    exec(&mut s, "SAVEPOINT b");
    exec(&mut s, "INSERT INTO t VALUES (12, 120, 0)");
    exec(&mut s, "DELETE FROM t WHERE id = 1");
    assert_eq!(ids(&mut s), vec![2, 3, 10, 11, 12]);
    exec(&mut s, "ROLLBACK TO b");
    assert_eq!(ids(&mut s), vec![1, 2, 3, 10, 11]);
    exec(&mut s, "ROLLBACK TO SAVEPOINT a");
    assert_eq!(ids(&mut s), vec![1, 2, 3, 10]);
    // b was after a: gone. a stays and can be used again.
    assert_eq!(err(&mut s, "ROLLBACK TO b").code, 1305);
    exec(&mut s, "INSERT INTO t VALUES (13, 130, 0)");
    exec(&mut s, "ROLLBACK WORK TO SAVEPOINT a");
    assert_eq!(ids(&mut s), vec![1, 2, 3, 10]);
    exec(&mut s, "RELEASE SAVEPOINT a");
    let e1305 = err(&mut s, "ROLLBACK TO a");
    assert_eq!(
        (e1305.code, e1305.message.as_str()),
        (1305, "SAVEPOINT a does not exist")
    );
    // The error did not end the transaction.
    assert!(s.in_transaction());
    exec(&mut s, "COMMIT");
    let mut other = e.session(2);
    assert_eq!(ids(&mut other), vec![1, 2, 3, 10]);
}

#[test]
fn savepoint_names_end_with_the_transaction_and_a_reused_name_moves() {
    let e = env_with_small_table(2);
    let mut s = e.session(1);
    exec(&mut s, "BEGIN");
    exec(&mut s, "SAVEPOINT x");
    exec(&mut s, "COMMIT");
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO t VALUES (5, 50, 0)");
    assert_eq!(
        err(&mut s, "ROLLBACK TO x").code,
        1305,
        "x ended with its transaction"
    );
    assert_eq!(
        ids(&mut s),
        vec![1, 2, 5],
        "the failed ROLLBACK TO changed nothing"
    );
    exec(&mut s, "SAVEPOINT p");
    exec(&mut s, "INSERT INTO t VALUES (6, 60, 0)");
    exec(&mut s, "SAVEPOINT P"); // names are case-insensitive: p moves here
    exec(&mut s, "INSERT INTO t VALUES (7, 70, 0)");
    exec(&mut s, "ROLLBACK TO p");
    assert_eq!(ids(&mut s), vec![1, 2, 5, 6]);
    exec(&mut s, "ROLLBACK");
    assert_eq!(ids(&mut s), vec![1, 2]);
    assert_eq!(err(&mut s, "RELEASE SAVEPOINT p").code, 1305);

    // Autocommit without a transaction: accepted, and gone at once (as in MySQL).
    exec(&mut s, "SAVEPOINT auto");
    assert!(!s.in_transaction());
    assert_eq!(err(&mut s, "ROLLBACK TO auto").code, 1305);

    // With autocommit off, SAVEPOINT opens the transaction.
    exec(&mut s, "SET autocommit = 0");
    exec(&mut s, "SAVEPOINT first");
    exec(&mut s, "INSERT INTO t VALUES (8, 80, 0)");
    exec(&mut s, "ROLLBACK TO first");
    exec(&mut s, "COMMIT");
    assert_eq!(ids(&mut s), vec![1, 2]);
}

#[test]
fn rollback_to_savepoint_restores_index_entries_and_keeps_row_locks() {
    let e = env_with_small_table(20);
    let mut s = e.session(1);
    exec(&mut s, "BEGIN");
    exec(&mut s, "SAVEPOINT before_update");
    exec(&mut s, "UPDATE t SET k = k + 1 WHERE id BETWEEN 5 AND 9");
    assert_eq!(q(&mut s, "SELECT id FROM t WHERE k = 51").len(), 1);
    exec(&mut s, "ROLLBACK TO before_update");
    // The k index holds the old keys again, and only them.
    assert!(q(&mut s, "SELECT id FROM t WHERE k = 51").is_empty());
    assert_eq!(int(&q(&mut s, "SELECT id FROM t WHERE k = 50")[0][0]), 5);
    let by_index = q(
        &mut s,
        "SELECT id, k FROM t FORCE INDEX (k_idx) WHERE k BETWEEN 0 AND 1000",
    );
    let by_scan = q(
        &mut s,
        "SELECT id, k FROM t IGNORE INDEX (k_idx) WHERE k BETWEEN 0 AND 1000 ORDER BY k",
    );
    assert_eq!(by_index, by_scan);
    assert_eq!(by_index.len(), 20);
    // The rows updated after the savepoint stay locked until the transaction ends.
    let mut other = e.session(2);
    assert_eq!(
        err(&mut other, "UPDATE t SET v = 1 WHERE id = 7").code,
        1205
    );
    exec(&mut s, "COMMIT");
    assert_eq!(
        affected(&exec(&mut other, "UPDATE t SET v = 1 WHERE id = 7")),
        1
    );
}
