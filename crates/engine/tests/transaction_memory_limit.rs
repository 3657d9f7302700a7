//! `transaction_memory_limit`: a transaction that keeps growing past what the running
//! transactions may hold in memory (row locks, undo, before-images) is refused with error
//! 1206 and rolled back, instead of the server running out of memory; small transactions
//! running beside it go on, the memory is given back when transactions end, and the limit
//! can be changed online.

mod common;

use common::*;
use tierdb_engine::{Engine, Error, Value};

const LIMIT: u64 = 4 << 20;

fn open(dir: &std::path::Path) -> std::sync::Arc<Engine> {
    let mut cfg = small_cfg(dir, 16 << 20);
    cfg.transaction_memory_limit = LIMIT;
    let e = Engine::open(cfg).expect("open");
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create table");
    e
}

#[test]
fn a_transaction_past_the_limit_is_refused_and_small_ones_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = e.table("d", "t").unwrap();
    assert_eq!(status(&e, "Tierdb_transaction_memory"), 0);

    // A big transaction grows until it is refused.
    let mut big = e.begin();
    let mut inserted = 0;
    let refused = loop {
        match big.insert(&t, kv_row(inserted, inserted, 0)) {
            Ok(_) => inserted += 1,
            Err(e) => break e,
        }
        assert!(inserted < 1_000_000, "never refused");
    };
    let (code, _) = refused.mysql_code();
    assert_eq!(code, 1206, "{refused}");
    assert!(
        matches!(refused, Error::TransactionMemoryFull { limit: LIMIT, .. }),
        "{refused:?}"
    );
    // About 4 MiB of 200-byte rows with a secondary index: thousands, not a handful.
    assert!(
        (2_000..40_000).contains(&inserted),
        "{inserted} rows before the refusal"
    );
    let held = status(&e, "Tierdb_transaction_memory");
    assert!(held > LIMIT, "{held} bytes held");
    assert_eq!(status(&e, "Tierdb_transaction_memory_refusals"), 1);

    // A small transaction beside it passes (it holds far less than a sixteenth).
    let mut small = e.begin();
    for id in 0..20 {
        small
            .insert(&t, kv_row(10_000_000 + id, id, 1))
            .expect("a small transaction is not refused");
    }
    small.commit().expect("commit the small transaction");

    // The refused one is rolled back and gives its memory back.
    big.rollback().expect("rollback");
    assert_eq!(status(&e, "Tierdb_transaction_memory"), 0);
    let mut r = e.begin();
    let rows = collect(
        r.scan(&t, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
            .expect("scan"),
    );
    assert_eq!(rows.len(), 20, "only the small transaction's rows");
    r.commit().unwrap();

    // The same work in transactions of 1000 rows goes through.
    for chunk in 0..(inserted + 999) / 1000 {
        let mut tx = e.begin();
        for id in chunk * 1000..((chunk + 1) * 1000).min(inserted) {
            tx.insert(&t, kv_row(id, id, 0)).expect("insert");
        }
        tx.commit().expect("commit");
    }
    assert_eq!(status(&e, "Tierdb_transaction_memory"), 0);
}

#[test]
fn updates_and_deletes_count_too_and_the_limit_changes_online() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = e.table("d", "t").unwrap();
    for chunk in 0..10 {
        let mut tx = e.begin();
        for id in chunk * 1000..(chunk + 1) * 1000 {
            tx.insert(&t, kv_row(id, id, 0)).expect("insert");
        }
        tx.commit().expect("commit");
    }

    // Updates that move every row's index entry: refused before the end.
    let mut tx = e.begin();
    let mut refused = None;
    for id in 0..10_000 {
        if let Err(err) = tx.update(&t, &key(id), kv_row(id, id + 1, 1)) {
            refused = Some(err);
            break;
        }
    }
    assert!(
        matches!(refused, Some(Error::TransactionMemoryFull { .. })),
        "{refused:?}"
    );
    tx.rollback().expect("rollback");

    // Raised online: the same updates, and deletes of every row, pass.
    assert!(e
        .set_variable("tierdb_transaction_memory_limit", &Value::Int(256 << 20))
        .expect("set"));
    let shown = |e: &Engine| {
        e.variables()
            .into_iter()
            .find(|(n, _)| n == "tierdb_transaction_memory_limit")
            .map(|(_, v)| v)
    };
    assert_eq!(shown(&e).as_deref(), Some("268435456"));
    let mut tx = e.begin();
    for id in 0..10_000 {
        assert!(tx
            .update(&t, &key(id), kv_row(id, id + 1, 1))
            .expect("update"));
    }
    for id in 0..10_000 {
        assert!(tx.delete(&t, &key(id)).expect("delete"));
    }
    let held = status(&e, "Tierdb_transaction_memory");
    assert!(
        held > 10_000 * 400,
        "{held} bytes for 10 000 updated and deleted rows"
    );
    tx.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_transaction_memory"), 0);

    // 0 = automatic again: at least 256 MiB.
    assert!(e
        .set_variable("tierdb_transaction_memory_limit", &Value::Int(0))
        .expect("set"));
    let auto: u64 = shown(&e).unwrap().parse().unwrap();
    assert!(auto >= 256 << 20, "automatic limit {auto}");
    assert!(e
        .set_variable("tierdb_transaction_memory_limit", &Value::Int(-1))
        .is_err());
}

#[test]
fn a_savepoint_rollback_gives_back_what_the_undone_part_held() {
    let dir = tempfile::tempdir().unwrap();
    let e = open(dir.path());
    let t = e.table("d", "t").unwrap();
    let held = |e: &Engine| status(e, "Tierdb_transaction_memory");

    let mut tx = e.begin();
    for id in 0..100 {
        tx.insert(&t, kv_row(id, id, 0)).expect("insert");
    }
    let at_savepoint = held(&e);
    assert!(
        at_savepoint > 100 * 200,
        "{at_savepoint} bytes for 100 rows"
    );
    // Many statements that fail and roll back: what they held goes back each time, except
    // their row locks and before-images (kept to the end, like the locks themselves).
    for round in 0..50 {
        let sp = tx.savepoint();
        for id in 0..100 {
            tx.update(&t, &key(id), kv_row(id, id + round + 1, round))
                .expect("update");
        }
        let during = held(&e);
        assert!(
            during > at_savepoint + 100 * 200,
            "{during} during round {round}"
        );
        tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
    }
    let after = held(&e);
    assert!(
        after < at_savepoint + 100 * 600,
        "{after} bytes after 50 rolled-back rounds (at the savepoint: {at_savepoint})"
    );
    tx.commit().expect("commit");
    assert_eq!(held(&e), 0);
}
