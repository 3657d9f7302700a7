//! CREATE INDEX on a table that is being written: the build waits for the transactions that
//! write the table, keeps new writers out while it runs, and writers holding a handle made
//! before the index existed switch to the new one — so the finished index holds exactly one
//! entry per row, whatever ran around it. A writer that stays open longer than the lock wait
//! timeout makes the build fail with LockWaitTimeout and leaves the table writable.

mod common;

use common::*;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tierdb_engine::{Engine, Error, IndexDef, Table, TableDef};

/// `kv_table` without its secondary index.
fn bare(name: &str) -> TableDef {
    TableDef {
        indexes: vec![],
        ..kv_table(name)
    }
}

fn v_index() -> IndexDef {
    IndexDef {
        name: "v_idx".into(),
        columns: vec![3],
        unique: false,
    }
}

/// Primary keys by a table scan and by a full scan of secondary index `i`, both sorted.
fn pks_both_ways(e: &Engine, t: &Arc<Table>, i: usize) -> (Vec<i64>, Vec<i64>) {
    let mut tx = e.begin();
    let pk = |r: &tierdb_engine::Row| match r[0] {
        tierdb_engine::Value::Int(v) => v,
        ref other => panic!("pk {other:?}"),
    };
    let mut by_table: Vec<i64> = scan_all(&mut tx, t).iter().map(pk).collect();
    let mut by_index: Vec<i64> = collect(
        tx.index_scan(t, i, Bound::Unbounded, Bound::Unbounded)
            .expect("index scan"),
    )
    .iter()
    .map(pk)
    .collect();
    tx.commit().expect("commit");
    by_table.sort_unstable();
    by_index.sort_unstable();
    (by_table, by_index)
}

#[test]
fn an_index_built_under_running_writers_has_one_entry_per_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(small_cfg(dir.path(), 4 << 20)).expect("open");
    e.create_database("db").expect("db");
    e.create_table("db", bare("t")).expect("table");
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    for id in 0..3000 {
        tx.insert(&t, kv_row(id, id % 13, id)).expect("insert");
    }
    tx.commit().expect("commit");

    // One writer is inside a transaction when the build starts and ends it 300 ms later.
    let mut early = e.begin();
    early
        .update(&t, &key(1), kv_row(1, 1, 777_777))
        .expect("early update");

    let stop = Arc::new(AtomicBool::new(false));
    let commits = Arc::new(AtomicU64::new(0));
    let mut writers = vec![];
    for w in 0..4i64 {
        let (e, stop, commits) = (e.clone(), stop.clone(), commits.clone());
        // Each writer keeps the handle it took before the index existed.
        let t = e.table("db", "t").expect("handle");
        writers.push(std::thread::spawn(move || {
            let mut n = 0i64;
            while !stop.load(Ordering::Relaxed) {
                let mut tx = e.begin();
                let base = 10 + w * 700 + (n % 700);
                let r = (|| -> tierdb_engine::Result<()> {
                    tx.update(&t, &key(base), kv_row(base, n % 5, n * 7 + w))?;
                    tx.delete(&t, &key(base + 1))?;
                    tx.insert(&t, kv_row(100_000 + w * 1_000_000 + n, 3, n))?;
                    Ok(())
                })();
                match r {
                    Ok(()) => {
                        tx.commit().expect("commit");
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(Error::LockWaitTimeout | Error::Deadlock) => {
                        tx.rollback().expect("rollback")
                    }
                    Err(other) => panic!("writer {w}: {other}"),
                }
                n += 1;
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(100));
    let e2 = e.clone();
    let builder = std::thread::spawn(move || {
        let t0 = Instant::now();
        e2.create_index("db", "t", v_index()).expect("create index");
        t0.elapsed()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !builder.is_finished(),
        "the build finished while a transaction that wrote the table was open"
    );
    early.commit().expect("early commit");
    let took = builder.join().expect("builder");
    let before = commits.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().expect("writer");
    }
    assert!(
        commits.load(Ordering::Relaxed) > before,
        "writers made no progress after the build ({took:?})"
    );
    let t = e.table("db", "t").expect("new handle");
    assert_eq!(t.def.indexes.len(), 1);
    let (by_table, by_index) = pks_both_ways(&e, &t, 0);
    assert!(by_table.len() > 2000);
    assert!(
        by_table == by_index,
        "index and rows differ: {} rows, {} index entries",
        by_table.len(),
        by_index.len()
    );
}

#[test]
fn a_writer_open_past_the_timeout_makes_the_build_fail_and_the_table_stays_writable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.lock_wait_timeout = Duration::from_millis(400);
    let e = Engine::open(cfg).expect("open");
    e.create_database("db").expect("db");
    e.create_table("db", bare("t")).expect("table");
    let t = e.table("db", "t").expect("table");
    let mut idle = e.begin();
    idle.insert(&t, kv_row(1, 1, 1)).expect("insert");
    let t0 = Instant::now();
    match e.create_index("db", "t", v_index()) {
        Err(Error::LockWaitTimeout) => {}
        other => panic!("expected LockWaitTimeout, got {other:?}"),
    }
    assert!(t0.elapsed() >= Duration::from_millis(400));
    assert_eq!(e.table("db", "t").expect("table").def.indexes.len(), 0);
    // Another writer is not kept out by the failed build.
    let mut other = e.begin();
    other
        .insert(&t, kv_row(2, 1, 2))
        .expect("insert after the failed build");
    other.commit().expect("commit");
    idle.commit().expect("commit");
    e.create_index("db", "t", v_index())
        .expect("build once the writers are done");
    let t = e.table("db", "t").expect("table");
    let (by_table, by_index) = pks_both_ways(&e, &t, 0);
    assert_eq!(by_table, vec![1, 2]);
    assert_eq!(by_index, by_table);
}

/// `bare` plus a nullable `u` column for unique-index builds.
fn with_u(name: &str) -> TableDef {
    let mut def = bare(name);
    let mut u = common::int_col("u");
    u.nullable = true;
    def.columns.push(u);
    def
}

fn u_row(id: i64, u: Option<i64>) -> tierdb_engine::Row {
    let mut r = kv_row(id, id % 7, 5000 - id);
    r.push(u.map_or(tierdb_engine::Value::Null, tierdb_engine::Value::Int));
    r
}

#[test]
fn an_index_built_in_small_sorted_batches_matches_the_table_and_finds_duplicates_across_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    // About 400 keys per batch: 5000 rows go in 13 sorted batches.
    cfg.index_build_batch_bytes = 12 << 10;
    let e = Engine::open(cfg).expect("open");
    e.create_database("db").expect("db");
    e.create_table("db", with_u("t")).expect("table");
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    for id in 0..5000 {
        // Unique values, except NULLs (any number allowed) every 10th row.
        let u = (id % 10 != 0).then_some(10_000 - id);
        tx.insert(&t, u_row(id, u)).expect("insert");
    }
    tx.commit().expect("commit");

    // A non-unique index over values in reverse row order: every batch spans the key space.
    e.create_index("db", "t", v_index()).expect("v index");
    let t = e.table("db", "t").expect("table");
    let (by_table, by_index) = pks_both_ways(&e, &t, 0);
    assert_eq!(by_table.len(), 5000);
    assert_eq!(by_table, by_index);
    let mut tx = e.begin();
    let rows = index_scan_all(&mut tx, &t, 0);
    tx.commit().expect("commit");
    let vs: Vec<i64> = rows
        .iter()
        .map(|r| match r[3] {
            tierdb_engine::Value::Int(v) => v,
            ref o => panic!("v {o:?}"),
        })
        .collect();
    assert!(vs.windows(2).all(|w| w[0] <= w[1]), "index order");

    // Unique over distinct values and many NULLs: builds.
    let unique = |name: &str| IndexDef {
        name: name.into(),
        columns: vec![4],
        unique: true,
    };
    e.create_index("db", "t", unique("u_ok"))
        .expect("unique index");

    // The same value in the first row and the last row scanned (different batches): refused,
    // naming the value, and the table keeps working without the index.
    e.drop_index("db", "t", "u_ok").expect("drop");
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    tx.update(&t, &key(4999), u_row(4999, Some(10_000 - 1)))
        .expect("update");
    tx.commit().expect("commit");
    match e.create_index("db", "t", unique("u_dup")) {
        Err(Error::DuplicateKey { key, index }) => {
            assert_eq!((key.as_str(), index.as_str()), ("9999", "u_dup"));
        }
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    // Within one batch (neighbouring rows).
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    tx.update(&t, &key(4999), u_row(4999, Some(7)))
        .expect("update");
    tx.update(&t, &key(2001), u_row(2001, Some(7)))
        .expect("update");
    tx.update(&t, &key(2002), u_row(2002, Some(7)))
        .expect("update");
    tx.commit().expect("commit");
    match e.create_index("db", "t", unique("u_dup2")) {
        Err(Error::DuplicateKey { key, .. }) => assert_eq!(key, "7"),
        other => panic!("expected a duplicate key, got {other:?}"),
    }
    let t = e.table("db", "t").expect("table");
    assert_eq!(t.def.indexes.len(), 1);
    let mut tx = e.begin();
    tx.insert(&t, u_row(9_000, Some(7))).expect("insert after");
    tx.commit().expect("commit");
}
