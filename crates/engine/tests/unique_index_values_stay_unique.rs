//! UNIQUE secondary indexes:
//!
//! - a second live row with a unique value fails with DuplicateKey naming the index; NULLs
//!   never collide; a value freed by a committed delete or update is free again at once
//!   (before purge would matter), and the row that freed it may take it back;
//! - a value an uncommitted transaction is leaving (delete, update) is not free: an inserter
//!   waits, and gets DuplicateKey if the leaver rolls back, succeeds if it commits;
//! - a value an uncommitted transaction is taking makes another taker wait, then 1062 / ok;
//! - many threads inserting, moving and deleting rows over a small value set, committing or
//!   rolling back at random: at the end no two live rows share a value and the unique index
//!   lists exactly the table's rows (also after reopening);
//! - CREATE UNIQUE INDEX over duplicate values fails with DuplicateKey and leaves the table
//!   without the index; over distinct values it builds and then enforces.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, Error, IndexDef, Row, Table, TableDef, Value};

/// `(id INT PRIMARY KEY, email VARCHAR(32) NULL, n INT, UNIQUE KEY email (email))`.
fn users() -> TableDef {
    let mut email = bytes_col("email", 32);
    email.nullable = true;
    TableDef {
        name: "users".into(),
        columns: vec![int_col("id"), email, int_col("n")],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "email".into(),
            columns: vec![1],
            unique: true,
        }],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

fn user(id: i64, email: Option<&str>, n: i64) -> Row {
    vec![
        Value::Int(id),
        email.map_or(Value::Null, |e| Value::Bytes(e.as_bytes().to_vec())),
        Value::Int(n),
    ]
}

fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Table>) {
    let e = Engine::open(small_cfg(dir, 4 << 20)).expect("open");
    if !e.database_exists("u") {
        e.create_database("u").expect("create database");
        e.create_table("u", users()).expect("create table");
    }
    let t = e.table("u", "users").expect("table");
    (e, t)
}

fn is_dup(r: &Result<impl std::fmt::Debug, Error>, index: &str) -> bool {
    matches!(r, Err(Error::DuplicateKey { index: i, .. }) if i == index)
}

#[test]
fn a_second_live_row_with_the_value_is_refused_and_nulls_never_collide() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut tx = e.begin();
    tx.insert(&t, user(1, Some("a@x"), 0)).expect("insert");
    tx.insert(&t, user(2, Some("b@x"), 0)).expect("insert");
    tx.insert(&t, user(3, None, 0)).expect("insert");
    tx.insert(&t, user(4, None, 0)).expect("two NULLs");
    tx.commit().expect("commit");

    let mut tx = e.begin();
    let r = tx.insert(&t, user(5, Some("a@x"), 0));
    match &r {
        Err(Error::DuplicateKey { key, index }) => {
            assert_eq!((key.as_str(), index.as_str()), ("a@x", "email"))
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    // The primary key is checked first.
    assert!(is_dup(&tx.insert(&t, user(1, Some("a@x"), 0)), "PRIMARY"));
    assert!(is_dup(
        &tx.update(&t, &key(2), user(2, Some("a@x"), 1)),
        "email"
    ));
    // Updating other columns of a row keeps its own value.
    assert!(tx
        .update(&t, &key(1), user(1, Some("a@x"), 7))
        .expect("update n"));
    // A value freed by an update in the same transaction is free at once, and taken back.
    assert!(tx
        .update(&t, &key(1), user(1, Some("c@x"), 7))
        .expect("move away"));
    tx.insert(&t, user(6, Some("a@x"), 0))
        .expect("take the freed value");
    tx.delete(&t, &key(6)).expect("delete");
    assert!(tx
        .update(&t, &key(1), user(1, Some("a@x"), 8))
        .expect("move back"));
    tx.commit().expect("commit");

    // Freed by a committed delete: free for another row; a primary-key move keeps it.
    let mut tx = e.begin();
    assert!(tx.delete(&t, &key(2)).expect("delete"));
    tx.commit().expect("commit");
    let mut tx = e.begin();
    tx.insert(&t, user(7, Some("b@x"), 0)).expect("reuse");
    assert!(tx
        .update(&t, &key(7), user(8, Some("b@x"), 0))
        .expect("pk move"));
    tx.commit().expect("commit");

    let mut tx = e.begin();
    let by_index: Vec<Row> = index_scan_all(&mut tx, &t, 0);
    let emails: Vec<String> = by_index
        .iter()
        .map(|r| match &r[1] {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            _ => "NULL".into(),
        })
        .collect();
    assert_eq!(emails, ["NULL", "NULL", "a@x", "b@x"]);
}

/// Runs `f` on a thread and returns a receiver for its result.
fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx
}

#[test]
fn a_value_an_open_transaction_leaves_or_takes_is_not_free_until_it_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut tx = e.begin();
    tx.insert(&t, user(1, Some("a@x"), 0)).expect("insert");
    tx.commit().expect("commit");

    for (leave_by_delete, commit) in [(true, false), (true, true), (false, false), (false, true)] {
        let mut leaver = e.begin();
        if leave_by_delete {
            assert!(leaver.delete(&t, &key(1)).expect("delete"));
        } else {
            assert!(leaver
                .update(&t, &key(1), user(1, Some("z@x"), 0))
                .expect("update"));
        }
        let (e2, t2) = (e.clone(), t.clone());
        let taker = spawn(move || {
            let mut tx = e2.begin();
            let r = tx.insert(&t2, user(2, Some("a@x"), 0));
            if r.is_ok() {
                tx.commit().expect("commit");
            }
            r
        });
        assert!(
            taker.recv_timeout(Duration::from_millis(300)).is_err(),
            "the taker must wait for the leaver"
        );
        if commit {
            leaver.commit().expect("commit");
        } else {
            leaver.rollback().expect("rollback");
        }
        let r = taker
            .recv_timeout(Duration::from_secs(10))
            .expect("taker ends");
        if commit {
            r.expect("the value was freed");
        } else {
            assert!(is_dup(&r, "email"), "rolled back: still taken, got {r:?}");
        }
        // Back to one row (1, a@x) for the next round.
        let mut tx = e.begin();
        let _ = tx.delete(&t, &key(1));
        let _ = tx.delete(&t, &key(2));
        tx.commit().expect("commit");
        let mut tx = e.begin();
        tx.insert(&t, user(1, Some("a@x"), 0)).expect("insert");
        tx.commit().expect("commit");
    }

    // Two takers of a new value: the second waits, then 1062 or (first rolled back) ok.
    for first_commits in [true, false] {
        let mut first = e.begin();
        first.insert(&t, user(10, Some("n@x"), 0)).expect("insert");
        let (e2, t2) = (e.clone(), t.clone());
        let second = spawn(move || {
            let mut tx = e2.begin();
            let r = tx.insert(&t2, user(11, Some("n@x"), 0));
            if r.is_ok() {
                tx.rollback().expect("rollback");
            }
            r
        });
        assert!(second.recv_timeout(Duration::from_millis(300)).is_err());
        if first_commits {
            first.commit().expect("commit");
        } else {
            first.rollback().expect("rollback");
        }
        let r = second.recv_timeout(Duration::from_secs(10)).expect("ends");
        assert_eq!(is_dup(&r, "email"), first_commits, "{r:?}");
        let mut tx = e.begin();
        let _ = tx.delete(&t, &key(10));
        tx.commit().expect("commit");
    }
}

fn check_unique_and_consistent(e: &Engine, t: &Arc<Table>) -> usize {
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, t);
    let mut seen = BTreeSet::new();
    for r in &rows {
        if let Value::Bytes(b) = &r[1] {
            assert!(seen.insert(b.clone()), "value {:?} held by two rows", r[1]);
        }
    }
    let mut by_index = index_scan_all(&mut tx, t, 0);
    let mut by_table = rows.clone();
    by_index.sort_by(|a, b| a[0].key_cmp(&b[0]));
    by_table.sort_by(|a, b| a[0].key_cmp(&b[0]));
    assert_eq!(by_index, by_table, "index scan and table scan differ");
    rows.len()
}

#[test]
fn concurrent_writers_over_a_small_value_set_never_share_a_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let threads = 8;
    let mut handles = Vec::new();
    for th in 0..threads {
        let (e, t) = (e.clone(), t.clone());
        handles.push(std::thread::spawn(move || {
            let mut rng = Rng(th * 7919 + 1);
            let (mut ok, mut dups) = (0u64, 0u64);
            for _ in 0..400 {
                let mut tx = e.begin();
                let mut failed = false;
                for _ in 0..1 + rng.below(3) {
                    let id = rng.below(40) as i64;
                    let email = format!("v{}", rng.below(12));
                    let email = (rng.below(10) > 0).then_some(email.as_str());
                    let r = match rng.below(3) {
                        0 => tx.insert(&t, user(id, email, th as i64)).map(|_| ()),
                        1 => tx
                            .update(&t, &key(id), user(id, email, th as i64))
                            .map(|_| ()),
                        _ => tx.delete(&t, &key(id)).map(|_| ()),
                    };
                    match r {
                        Ok(()) => {}
                        Err(Error::DuplicateKey { .. }) => dups += 1,
                        Err(Error::Deadlock | Error::LockWaitTimeout) => {
                            failed = true;
                            break;
                        }
                        Err(other) => panic!("unexpected error {other:?}"),
                    }
                }
                if failed || rng.below(4) == 0 {
                    tx.rollback().expect("rollback");
                } else {
                    tx.commit().expect("commit");
                    ok += 1;
                }
            }
            (ok, dups)
        }));
    }
    let (mut ok, mut dups) = (0, 0);
    for h in handles {
        let (o, d) = h.join().expect("writer thread");
        ok += o;
        dups += d;
    }
    assert!(
        ok > 500 && dups > 100,
        "too little contention: {ok} commits, {dups} duplicates"
    );
    // (How many rows are left depends on how the threads interleave: inserts, updates and
    // deletes are equally likely, so any count from 0 up is a valid end state.)
    let rows = check_unique_and_consistent(&e, &t);
    e.shutdown().expect("shutdown");
    drop((e, t));
    let (e, t) = open(dir.path());
    assert_eq!(check_unique_and_consistent(&e, &t), rows);
    assert!(e.table("u", "users").expect("table").def.indexes[0].unique);
}

#[test]
fn create_unique_index_refuses_duplicates_and_then_enforces() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(small_cfg(dir.path(), 4 << 20)).expect("open");
    e.create_database("v").expect("create database");
    e.create_table("v", kv_table("t")).expect("create table");
    let t = e.table("v", "t").expect("table");
    let mut tx = e.begin();
    for id in 0..3000 {
        // v is unique except for one pair far apart in the scan.
        let v = if id == 2900 { 17 } else { id };
        tx.insert(&t, kv_row(id, id % 7, v)).expect("insert");
    }
    tx.commit().expect("commit");
    let by_v = |name: &str| IndexDef {
        name: name.into(),
        columns: vec![3],
        unique: true,
    };
    let r = e.create_index("v", "t", by_v("v_u"));
    match &r {
        Err(Error::DuplicateKey { key, index }) => {
            assert_eq!((key.as_str(), index.as_str()), ("17", "v_u"))
        }
        other => panic!("expected DuplicateKey, got {other:?}"),
    }
    assert_eq!(e.table("v", "t").expect("table").def.indexes.len(), 1);
    let mut tx = e.begin();
    assert!(tx
        .delete(&e.table("v", "t").expect("t"), &key(2900))
        .expect("delete"));
    tx.commit().expect("commit");
    e.create_index("v", "t", by_v("v_u")).expect("distinct now");
    let t = e.table("v", "t").expect("table");
    let mut tx = e.begin();
    assert!(is_dup(&tx.insert(&t, kv_row(5000, 0, 42)), "v_u"));
    tx.insert(&t, kv_row(5001, 0, 4242)).expect("new value");
    tx.commit().expect("commit");
    let mut tx = e.begin();
    assert_eq!(index_scan_all(&mut tx, &t, 1).len(), 3000);
}
