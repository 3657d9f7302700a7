//! READ COMMITTED visibility, rollback and row-lock scenarios between two transactions:
//!
//! - an uncommitted insert is invisible to another transaction's get, scan and index scan,
//!   and visible to its own transaction;
//! - an uncommitted update shows the old row (and old index position) to others, the new one
//!   to itself; after commit the other transaction sees the new row;
//! - an uncommitted delete is still visible to others;
//! - rollback of a large mixed transaction (splits, merges, key moves) restores the table;
//! - DuplicateKey (1062) after a committed insert, allowed again after a committed delete,
//!   and for a key another transaction is inserting: wait, then 1062 or success;
//! - a second writer on a row waits for the first and proceeds after its commit;
//! - a lock wait longer than `lock_wait_timeout` fails with LockWaitTimeout (1205);
//! - two transactions locking two rows in opposite orders: one gets Deadlock (1213), the
//!   other completes.

mod common;

use common::*;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use tierdb_engine::{Engine, Error, Row, Table};

fn setup(dir: &std::path::Path, rows: i64) -> (Arc<Engine>, Arc<Table>) {
    let e = Engine::open(small_cfg(dir, 4 << 20)).expect("open");
    e.create_database("v").expect("create database");
    e.create_table("v", kv_table("t")).expect("create table");
    let t = e.table("v", "t").expect("table");
    let mut tx = e.begin();
    for id in 0..rows {
        tx.insert(&t, kv_row(id, id % 10, 0)).expect("insert");
    }
    tx.commit().expect("commit");
    (e, t)
}

fn ids(rows: &[Row]) -> Vec<i64> {
    rows.iter().map(|r| r[0].as_i64().expect("id")).collect()
}

fn index_ids(tx: &mut tierdb_engine::Txn, t: &Arc<Table>, k: i64) -> Vec<i64> {
    ids(&collect(
        tx.index_scan(t, 0, incl(k), incl(k)).expect("index scan"),
    ))
}

#[test]
fn uncommitted_insert_is_invisible_to_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let mut w = e.begin();
    w.insert(&t, kv_row(100, 7, 1)).expect("insert");
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(100)).expect("get"), None);
    assert!(!ids(&scan_all(&mut r, &t)).contains(&100));
    assert_eq!(index_ids(&mut r, &t, 7), vec![7]);
    // The writer sees its own row everywhere.
    assert_eq!(w.get(&t, &key(100)).expect("get"), Some(kv_row(100, 7, 1)));
    assert!(ids(&scan_all(&mut w, &t)).contains(&100));
    assert_eq!(index_ids(&mut w, &t, 7), vec![7, 100]);
    w.rollback().expect("rollback");
    assert_eq!(r.get(&t, &key(100)).expect("get"), None);
    assert_eq!(index_ids(&mut r, &t, 7), vec![7]);
    // Inserted again and committed: now the reader sees it.
    let mut w = e.begin();
    w.insert(&t, kv_row(100, 7, 2)).expect("insert");
    w.commit().expect("commit");
    assert_eq!(r.get(&t, &key(100)).expect("get"), Some(kv_row(100, 7, 2)));
    assert_eq!(index_ids(&mut r, &t, 7), vec![7, 100]);
}

#[test]
fn uncommitted_update_shows_old_row_to_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let old = kv_row(1, 1, 0);
    let new = kv_row(1, 2, 5);
    let mut w = e.begin();
    assert!(w.update(&t, &key(1), new.clone()).expect("update"));
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(1)).expect("get"), Some(old.clone()));
    assert_eq!(scan_all(&mut r, &t)[1], old);
    assert_eq!(index_ids(&mut r, &t, 1), vec![1]);
    assert_eq!(index_ids(&mut r, &t, 2), vec![2]);
    assert_eq!(w.get(&t, &key(1)).expect("get"), Some(new.clone()));
    assert_eq!(scan_all(&mut w, &t)[1], new);
    assert_eq!(index_ids(&mut w, &t, 1), Vec::<i64>::new());
    assert_eq!(index_ids(&mut w, &t, 2), vec![1, 2]);
    // A primary-key change inside the same transaction: others still see id 1 only.
    let moved = kv_row(50, 2, 6);
    assert!(w.update(&t, &key(1), moved.clone()).expect("update pk"));
    assert_eq!(r.get(&t, &key(1)).expect("get"), Some(old.clone()));
    assert_eq!(r.get(&t, &key(50)).expect("get"), None);
    assert_eq!(w.get(&t, &key(1)).expect("get"), None);
    assert_eq!(w.get(&t, &key(50)).expect("get"), Some(moved.clone()));
    w.commit().expect("commit");
    // The same reader transaction now sees the committed state (READ COMMITTED).
    assert_eq!(r.get(&t, &key(1)).expect("get"), None);
    assert_eq!(r.get(&t, &key(50)).expect("get"), Some(moved));
    assert_eq!(index_ids(&mut r, &t, 1), Vec::<i64>::new());
    assert_eq!(index_ids(&mut r, &t, 2), vec![2, 50]);
}

#[test]
fn uncommitted_delete_is_still_visible_to_others() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let mut w = e.begin();
    assert!(w.delete(&t, &key(3)).expect("delete"));
    assert!(!w.delete(&t, &key(3)).expect("second delete"));
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(3)).expect("get"), Some(kv_row(3, 3, 0)));
    assert!(ids(&scan_all(&mut r, &t)).contains(&3));
    assert_eq!(index_ids(&mut r, &t, 3), vec![3]);
    assert_eq!(w.get(&t, &key(3)).expect("get"), None);
    assert!(!ids(&scan_all(&mut w, &t)).contains(&3));
    assert_eq!(index_ids(&mut w, &t, 3), Vec::<i64>::new());
    w.rollback().expect("rollback");
    assert_eq!(r.get(&t, &key(3)).expect("get"), Some(kv_row(3, 3, 0)));
    let mut w = e.begin();
    assert!(w.delete(&t, &key(3)).expect("delete"));
    w.commit().expect("commit");
    assert_eq!(r.get(&t, &key(3)).expect("get"), None);
    assert_eq!(index_ids(&mut r, &t, 3), Vec::<i64>::new());
    assert_eq!(scan_all(&mut r, &t).len(), 9);
}

#[test]
fn rollback_of_a_large_mixed_transaction_restores_the_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 3000);
    let mut r = e.begin();
    let before = scan_all(&mut r, &t);
    let before_index = index_scan_all(&mut r, &t, 0);
    let mut w = e.begin();
    for id in 3000..6000 {
        w.insert(&t, kv_row(id, id % 7, 1)).expect("insert");
    }
    for id in (0..3000).step_by(3) {
        assert!(w.update(&t, &key(id), kv_row(id, 99, 2)).expect("update"));
    }
    for id in (1..3000).step_by(3) {
        assert!(w.delete(&t, &key(id)).expect("delete"));
    }
    for id in (2..3000).step_by(30) {
        assert!(w
            .update(&t, &key(id), kv_row(id + 10_000, 5, 3))
            .expect("update pk"));
    }
    // Others see none of it meanwhile.
    assert_eq!(scan_all(&mut r, &t), before);
    assert_eq!(index_scan_all(&mut r, &t, 0), before_index);
    w.rollback().expect("rollback");
    assert_eq!(scan_all(&mut r, &t), before);
    assert_eq!(index_scan_all(&mut r, &t, 0), before_index);
    drop(r);
    e.shutdown().expect("shutdown");
    drop((e, t));
    let e = Engine::open(small_cfg(dir.path(), 4 << 20)).expect("reopen");
    let t = e.table("v", "t").expect("table");
    let mut r = e.begin();
    assert_eq!(scan_all(&mut r, &t), before);
    assert_eq!(index_scan_all(&mut r, &t, 0), before_index);
}

#[test]
fn duplicate_key_after_commit_and_free_again_after_delete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let mut w = e.begin();
    let err = w.insert(&t, kv_row(5, 0, 9)).expect_err("duplicate");
    assert!(matches!(err, Error::DuplicateKey { .. }), "{err:?}");
    assert_eq!(err.mysql_code().0, 1062);
    // The failed insert changed nothing and the transaction goes on.
    assert_eq!(w.get(&t, &key(5)).expect("get"), Some(kv_row(5, 5, 0)));
    w.insert(&t, kv_row(20, 0, 0)).expect("insert");
    let err = w.insert(&t, kv_row(20, 0, 0)).expect_err("own duplicate");
    assert!(matches!(err, Error::DuplicateKey { .. }), "{err:?}");
    // Delete then insert of the same key inside one transaction is allowed.
    assert!(w.delete(&t, &key(6)).expect("delete"));
    w.insert(&t, kv_row(6, 1, 1))
        .expect("re-insert after own delete");
    w.commit().expect("commit");
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(6)).expect("get"), Some(kv_row(6, 1, 1)));
    assert_eq!(index_ids(&mut r, &t, 6), Vec::<i64>::new());
    assert_eq!(index_ids(&mut r, &t, 1), vec![1, 6]);
    // After a committed delete the key is free.
    let mut w = e.begin();
    assert!(w.delete(&t, &key(5)).expect("delete"));
    w.commit().expect("commit");
    let mut w = e.begin();
    w.insert(&t, kv_row(5, 4, 4))
        .expect("insert after committed delete");
    w.commit().expect("commit");
    assert_eq!(r.get(&t, &key(5)).expect("get"), Some(kv_row(5, 4, 4)));
    assert_eq!(index_ids(&mut r, &t, 4), vec![4, 5]);
    assert_eq!(index_ids(&mut r, &t, 5), Vec::<i64>::new());
}

/// Runs `f` on a new thread; the receiver gets its result and when it finished.
fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> mpsc::Receiver<(T, Instant)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let v = f();
        let _ = tx.send((v, Instant::now()));
    });
    rx
}

#[test]
fn concurrent_insert_of_the_same_key_waits_for_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    for commit_first in [false, true] {
        let id = if commit_first { 31 } else { 30 };
        let mut w1 = e.begin();
        w1.insert(&t, kv_row(id, 0, 1)).expect("insert");
        let (e2, t2) = (e.clone(), t.clone());
        let rx = spawn(move || {
            let mut w2 = e2.begin();
            let r = w2.insert(&t2, kv_row(id, 0, 2));
            if r.is_ok() {
                w2.commit().expect("commit");
            }
            r
        });
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "the second insert did not wait"
        );
        let released = Instant::now();
        if commit_first {
            w1.commit().expect("commit");
        } else {
            w1.rollback().expect("rollback");
        }
        let (r, done) = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("second insert");
        assert!(done >= released);
        let mut r2 = e.begin();
        let got = r2.get(&t, &key(id)).expect("get");
        if commit_first {
            assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
            assert_eq!(got, Some(kv_row(id, 0, 1)));
        } else {
            assert!(matches!(r, Ok(None)), "{r:?}");
            assert_eq!(got, Some(kv_row(id, 0, 2)));
        }
    }
}

#[test]
fn second_writer_waits_and_proceeds_after_commit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let mut w1 = e.begin();
    assert!(w1.update(&t, &key(4), kv_row(4, 4, 1)).expect("update"));
    let waits_before = status(&e, "Innodb_row_lock_waits");
    let (e2, t2) = (e.clone(), t.clone());
    let rx = spawn(move || {
        let mut w2 = e2.begin();
        let r = w2.update(&t2, &key(4), kv_row(4, 4, 2));
        w2.commit().expect("commit");
        r
    });
    assert!(
        rx.recv_timeout(Duration::from_millis(300)).is_err(),
        "the second writer did not wait for the row lock"
    );
    assert_eq!(status(&e, "Innodb_row_lock_waits"), waits_before + 1);
    let committed = Instant::now();
    w1.commit().expect("commit");
    let (r, done) = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("second writer");
    assert!(matches!(r, Ok(true)), "{r:?}");
    assert!(done >= committed);
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(4)).expect("get"), Some(kv_row(4, 4, 2)));
}

#[test]
fn lock_wait_times_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.lock_wait_timeout = Duration::from_millis(300);
    let e = Engine::open(cfg).expect("open");
    e.create_database("v").expect("create database");
    e.create_table("v", kv_table("t")).expect("create table");
    let t = e.table("v", "t").expect("table");
    let mut w = e.begin();
    w.insert(&t, kv_row(1, 1, 1)).expect("insert");
    w.commit().expect("commit");
    let mut w1 = e.begin();
    assert!(w1.update(&t, &key(1), kv_row(1, 1, 2)).expect("update"));
    let (e2, t2) = (e.clone(), t.clone());
    let started = Instant::now();
    let rx = spawn(move || {
        let mut w2 = e2.begin();
        let r = w2.delete(&t2, &key(1));
        // A lock wait timeout leaves the transaction usable.
        w2.insert(&t2, kv_row(2, 2, 2))
            .expect("insert after timeout");
        w2.commit().expect("commit");
        r
    });
    let (r, done) = rx.recv_timeout(Duration::from_secs(10)).expect("waiter");
    let waited = done - started;
    let err = r.expect_err("expected a lock wait timeout");
    assert!(matches!(err, Error::LockWaitTimeout), "{err:?}");
    assert_eq!(err.mysql_code().0, 1205);
    assert!(
        waited >= Duration::from_millis(290),
        "gave up after {waited:?}"
    );
    assert!(waited < Duration::from_secs(5), "waited {waited:?}");
    assert!(status(&e, "Innodb_row_lock_timeouts") >= 1);
    w1.commit().expect("commit");
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(1)).expect("get"), Some(kv_row(1, 1, 2)));
    assert_eq!(r.get(&t, &key(2)).expect("get"), Some(kv_row(2, 2, 2)));
}

#[test]
fn opposite_lock_orders_deadlock_and_one_side_wins() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = setup(dir.path(), 10);
    let barrier = Arc::new(Barrier::new(2));
    let side = |first: i64, second: i64, tag: i64| {
        let (e, t, barrier) = (e.clone(), t.clone(), barrier.clone());
        spawn(move || {
            let mut w = e.begin();
            assert!(w
                .update(&t, &key(first), kv_row(first, first, tag))
                .expect("first lock"));
            barrier.wait();
            match w.update(&t, &key(second), kv_row(second, second, tag)) {
                Ok(changed) => {
                    assert!(changed);
                    w.commit().expect("commit");
                    Ok(())
                }
                Err(err) => {
                    w.rollback().expect("rollback");
                    Err(err)
                }
            }
        })
    };
    let started = Instant::now();
    let a = side(1, 2, 100);
    let b = side(2, 1, 200);
    let (ra, _) = a.recv_timeout(Duration::from_secs(8)).expect("side a");
    let (rb, _) = b.recv_timeout(Duration::from_secs(8)).expect("side b");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the deadlock was not detected; it ran into the lock wait timeout"
    );
    let (winner, loser) = match (ra, rb) {
        (Ok(()), Err(e)) => (100, e),
        (Err(e), Ok(())) => (200, e),
        other => panic!("expected exactly one deadlock victim, got {other:?}"),
    };
    assert!(matches!(loser, Error::Deadlock), "{loser:?}");
    assert_eq!(loser.mysql_code().0, 1213);
    assert!(status(&e, "Innodb_deadlocks") >= 1);
    let mut r = e.begin();
    assert_eq!(r.get(&t, &key(1)).expect("get"), Some(kv_row(1, 1, winner)));
    assert_eq!(r.get(&t, &key(2)).expect("get"), Some(kv_row(2, 2, winner)));
}
