//! Long TEXT / BLOB values: a row too big for a leaf keeps its longest values in the table's
//! long-value tree. Every read path returns them whole, a replaced or deleted value is
//! purged once nobody can see it, rollbacks and crashes bring back exactly the committed
//! values, readers racing a writer never see a torn or vanished value, and indexes built
//! over a column holding such values stay consistent.

mod common;

use common::*;
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tierdb_engine::{
    Collation, ColumnDef, ColumnType, Engine, Error, IndexDef, LobSize, Row, TableDef, Value,
};

fn text_col(name: &str, size: LobSize, ci: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ColumnType::Text(size),
        nullable: true,
        auto_increment: false,
        default: None,
        fill: None,
        collation: if ci {
            Collation::GeneralCi
        } else {
            Collation::Binary
        },
        on_update_now: false,
    }
}

/// `(id BIGINT PRIMARY KEY, k BIGINT, body LONGTEXT, data LONGBLOB, KEY k (k))`.
fn docs_table() -> TableDef {
    let mut data = text_col("data", LobSize::Long, false);
    data.ty = ColumnType::Blob(LobSize::Long);
    TableDef {
        name: "docs".into(),
        columns: vec![
            int_col("id"),
            int_col("k"),
            text_col("body", LobSize::Long, true),
            data,
        ],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "k".into(),
            columns: vec![1],
            unique: false,
        }],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

/// A value of `len` bytes whose content names `seed`: any byte out of place shows.
fn text(seed: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b'a' + ((seed as usize * 7 + i / 997) % 26) as u8)
        .collect()
}

fn doc(id: i64, body_len: usize, data_len: usize, seed: u64) -> Row {
    vec![
        int(id),
        int(id % 5),
        Value::Bytes(text(seed, body_len)),
        Value::Bytes(text(seed + 1, data_len)),
    ]
}

fn open(dir: &Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 4 << 20)).expect("open")
}

fn setup(e: &Engine) -> Arc<tierdb_engine::Table> {
    e.create_database("d").expect("database");
    e.create_table("d", docs_table()).expect("table");
    e.table("d", "docs").expect("handle")
}

const SIZES: [(usize, usize); 6] = [
    (10, 20),
    (3000, 0),
    (5000, 5000),
    (70_000, 10),
    (300_000, 123_457),
    (4000, 4000),
];

#[test]
fn long_values_come_back_whole_through_every_read_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    for (i, &(b, d)) in SIZES.iter().enumerate() {
        tx.insert(&t, doc(i as i64, b, d, i as u64))
            .expect("insert");
    }
    tx.commit().expect("commit");
    let written = status(&e, "Tierdb_long_values_written");
    assert!(written >= 5, "only {written} values went off their rows");

    let expected: Vec<Row> = SIZES
        .iter()
        .enumerate()
        .map(|(i, &(b, d))| doc(i as i64, b, d, i as u64))
        .collect();
    let mut tx = e.begin();
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(
            tx.get(&t, &key(i as i64)).expect("get").as_ref(),
            Some(want)
        );
    }
    assert_eq!(scan_all(&mut tx, &t), expected);
    let mut by_k = index_scan_all(&mut tx, &t, 0);
    by_k.sort_by_key(|r| r[0].as_i64());
    assert_eq!(by_k, expected);
    // A read that does not ask for the long columns does not read them.
    let before = status(&e, "Tierdb_long_values_read");
    let want: tierdb_engine::ColumnMask = Arc::from(vec![true, true, false, false]);
    let got = tx
        .get_columns(&t, &key(4), Some(&want))
        .expect("get columns")
        .expect("row");
    assert_eq!(&got[..2], &expected[4][..2]);
    assert_eq!(status(&e, "Tierdb_long_values_read"), before);
    tx.commit().expect("commit");

    // And after a restart, from the data file.
    e.shutdown().expect("shutdown");
    drop(e);
    let e = open(dir.path());
    let t = e.table("d", "docs").expect("handle");
    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t), expected);
    tx.commit().expect("commit");
    e.shutdown().expect("shutdown");
    verify_data_file(dir.path()).expect("every page verifies");
}

#[test]
fn replaced_and_deleted_values_are_purged_and_unchanged_ones_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 50_000, 50_000, 1)).expect("insert");
    tx.insert(&t, doc(2, 50_000, 10, 2)).expect("insert");
    tx.commit().expect("commit");
    let written = status(&e, "Tierdb_long_values_written");

    // Changing a short column rewrites neither long value.
    let mut row = doc(1, 50_000, 50_000, 1);
    row[1] = int(42);
    let mut tx = e.begin();
    assert!(tx.update(&t, &key(1), row.clone()).expect("update"));
    tx.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_long_values_written"), written);
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 0);

    // Changing one long value writes it anew and purges the old one after the commit.
    row[2] = Value::Bytes(text(9, 60_000));
    let mut tx = e.begin();
    assert!(tx.update(&t, &key(1), row.clone()).expect("update"));
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 0);
    tx.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_long_values_written"), written + 1);
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 1);

    let mut tx = e.begin();
    assert!(tx.delete(&t, &key(2)).expect("delete"));
    tx.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 2);
    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t), vec![row]);
    tx.commit().expect("commit");

    // A row shrinking back into its leaf drops its long values too.
    let mut tx = e.begin();
    assert!(tx.update(&t, &key(1), doc(1, 10, 10, 3)).expect("update"));
    tx.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 4);
}

#[test]
fn rollbacks_bring_back_the_committed_long_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 80_000, 80_000, 1)).expect("insert");
    tx.commit().expect("commit");

    let mut tx = e.begin();
    tx.update(&t, &key(1), doc(1, 90_000, 5, 2))
        .expect("update");
    tx.insert(&t, doc(2, 70_000, 70_000, 3)).expect("insert");
    let sp = tx.savepoint();
    tx.delete(&t, &key(2)).expect("delete");
    tx.update(&t, &key(1), doc(1, 100_000, 100_000, 4))
        .expect("update");
    tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
    assert_eq!(
        scan_all(&mut tx, &t),
        vec![doc(1, 90_000, 5, 2), doc(2, 70_000, 70_000, 3)]
    );
    tx.rollback().expect("rollback");
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 0);

    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t), vec![doc(1, 80_000, 80_000, 1)]);
    tx.commit().expect("commit");
}

#[test]
fn a_read_view_keeps_the_long_value_it_saw_until_it_closes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 40_000, 40_000, 1)).expect("insert");
    tx.commit().expect("commit");

    let mut reader = e.begin();
    reader.consistent_reads();
    assert_eq!(
        reader.get(&t, &key(1)).expect("get"),
        Some(doc(1, 40_000, 40_000, 1))
    );
    let mut w = e.begin();
    w.update(&t, &key(1), doc(1, 45_000, 45_000, 2))
        .expect("update");
    w.commit().expect("commit");
    let mut w = e.begin();
    w.update(&t, &key(1), doc(1, 50_000, 50_000, 3))
        .expect("update");
    w.commit().expect("commit");
    // Both replaced versions' values wait for the view.
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 0);
    assert_eq!(
        reader.get(&t, &key(1)).expect("get"),
        Some(doc(1, 40_000, 40_000, 1))
    );
    assert_eq!(scan_all(&mut reader, &t), vec![doc(1, 40_000, 40_000, 1)]);
    reader.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 4);
    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t), vec![doc(1, 50_000, 50_000, 3)]);
    tx.commit().expect("commit");
}

/// A value of version `v`: its length and content both follow from `v`.
fn versioned(v: u64) -> Vec<u8> {
    text(v, 5000 + (v as usize * 7919) % 40_000)
}

fn check_versioned(b: &[u8]) {
    let v = (0..400)
        .find(|&v| versioned(v) == b)
        .unwrap_or_else(|| panic!("a torn value of {} bytes", b.len()));
    assert!(v < 400);
}

#[test]
fn readers_racing_a_writer_never_see_a_torn_or_vanished_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    for id in 0..4 {
        let mut r = doc(id, 10, 10, 0);
        r[2] = Value::Bytes(versioned(0));
        tx.insert(&t, r).expect("insert");
    }
    tx.commit().expect("commit");
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|n| {
            let (e, t, stop) = (e.clone(), t.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut tx = e.begin();
                    if n == 0 {
                        for id in 0..4 {
                            let r = tx.get(&t, &key(id)).expect("get").expect("row");
                            let Value::Bytes(b) = &r[2] else {
                                panic!("body is not bytes")
                            };
                            check_versioned(b);
                            reads += 1;
                        }
                    } else {
                        let rows = scan_all(&mut tx, &t);
                        assert_eq!(rows.len(), 4, "a row dropped out of a scan");
                        for r in rows {
                            let Value::Bytes(b) = &r[2] else {
                                panic!("body is not bytes")
                            };
                            check_versioned(b);
                            reads += 1;
                        }
                    }
                    tx.commit().expect("commit");
                }
                reads
            })
        })
        .collect();
    for v in 1..400u64 {
        let id = (v % 4) as i64;
        let mut r = doc(id, 10, 10, 0);
        r[2] = Value::Bytes(versioned(v));
        let mut tx = e.begin();
        tx.update(&t, &key(id), r).expect("update");
        tx.commit().expect("commit");
    }
    stop.store(true, Ordering::Relaxed);
    let reads: u64 = readers.into_iter().map(|h| h.join().expect("reader")).sum();
    assert!(reads > 0);
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 399);
}

#[test]
fn a_crash_keeps_committed_long_values_and_rolls_back_unfinished_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.flush_log_at_trx_commit = 1;
    let e = Engine::open(cfg).expect("open");
    let t = setup(&e);
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 200_000, 1000, 1)).expect("insert");
    tx.insert(&t, doc(2, 30_000, 30_000, 2)).expect("insert");
    tx.commit().expect("commit");
    // Unfinished at the crash: a new row, a changed value and a deleted row.
    let mut open_tx = e.begin();
    open_tx
        .insert(&t, doc(3, 90_000, 90_000, 3))
        .expect("insert");
    open_tx
        .update(&t, &key(1), doc(1, 10_000, 10_000, 4))
        .expect("update");
    open_tx.delete(&t, &key(2)).expect("delete");
    // Another session's commit makes the unfinished changes' redo durable too.
    let mut other = e.begin();
    other.insert(&t, doc(9, 10, 10, 9)).expect("insert");
    other.commit().expect("commit");

    let crash = tempfile::tempdir().expect("tempdir");
    copy_engine_dir(dir.path(), crash.path());
    open_tx.rollback().expect("rollback");
    drop(e);

    let c = open(crash.path());
    let t = c.table("d", "docs").expect("handle");
    let mut tx = c.begin();
    assert_eq!(
        scan_all(&mut tx, &t),
        vec![
            doc(1, 200_000, 1000, 1),
            doc(2, 30_000, 30_000, 2),
            doc(9, 10, 10, 9)
        ]
    );
    // New long values after the restart take fresh ids: nothing collides.
    tx.insert(&t, doc(4, 120_000, 5, 5)).expect("insert");
    tx.update(&t, &key(2), doc(2, 33_000, 33_000, 6))
        .expect("update");
    tx.commit().expect("commit");
    let mut tx = c.begin();
    assert_eq!(
        scan_all(&mut tx, &t),
        vec![
            doc(1, 200_000, 1000, 1),
            doc(2, 33_000, 33_000, 6),
            doc(4, 120_000, 5, 5),
            doc(9, 10, 10, 9)
        ]
    );
    tx.commit().expect("commit");
    c.shutdown().expect("shutdown");
    verify_data_file(crash.path()).expect("every page verifies");
}

#[test]
fn a_rebuild_carries_long_values_into_the_new_trees() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let from = {
        let t = setup(&e);
        let mut tx = e.begin();
        for (i, &(b, d)) in SIZES.iter().enumerate() {
            tx.insert(&t, doc(i as i64, b, d, i as u64))
                .expect("insert");
        }
        tx.commit().expect("commit");
        t.def.clone()
    };
    // Drop column k (and its index): every row is rewritten.
    let mut def = from.clone();
    def.columns.remove(1);
    def.indexes.clear();
    let n = e
        .rebuild_table("d", "docs", &from, def, &mut |mut r: Vec<Value>| {
            r.remove(1);
            Ok(r)
        })
        .expect("rebuild");
    assert_eq!(n, SIZES.len() as u64);
    let t = e.table("d", "docs").expect("handle");
    let mut tx = e.begin();
    let want: Vec<Row> = SIZES
        .iter()
        .enumerate()
        .map(|(i, &(b, d))| {
            let mut r = doc(i as i64, b, d, i as u64);
            r.remove(1);
            r
        })
        .collect();
    assert_eq!(scan_all(&mut tx, &t), want);
    tx.commit().expect("commit");
    // The old trees go back to the free list: ~520 KB of long values, four chunks a page.
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 30, "only {freed} pages freed");
    assert_eq!(status(&e, "Tierdb_dropped_trees_pending"), 0);
}

#[test]
fn a_duplicate_insert_leaves_no_long_value_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 10, 10, 1)).expect("insert");
    tx.commit().expect("commit");
    e.checkpoint().expect("checkpoint");
    let before = e.data_pages_allocated().expect("pages");
    let mut tx = e.begin();
    for _ in 0..40 {
        match tx.insert(&t, doc(1, 100_000, 100_000, 2)) {
            Err(Error::DuplicateKey { .. }) => {}
            other => panic!("expected a duplicate key, got {other:?}"),
        }
    }
    tx.commit().expect("commit");
    // 40 × 200 KB would be ~500 pages; what a removed value's emptied leaves keep is far less.
    let grew = e.data_pages_allocated().expect("pages") - before;
    assert!(
        grew < 120,
        "{grew} pages kept by values of rows never stored"
    );
    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t), vec![doc(1, 10, 10, 1)]);
    tx.commit().expect("commit");
}

#[test]
fn an_index_built_over_a_column_holding_long_values_stays_consistent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("database");
    // Five 900-byte values do not fit one leaf cell: the first ones go off the row, yet
    // each is short enough to be indexed (case-insensitively) afterwards.
    let cols: Vec<ColumnDef> = std::iter::once(int_col("id"))
        .chain((0..5).map(|i| text_col(&format!("c{i}"), LobSize::Regular, true)))
        .collect();
    e.create_table(
        "d",
        TableDef {
            name: "wide".into(),
            columns: cols,
            primary_key: vec![0],
            indexes: Vec::new(),
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .expect("table");
    let t = e.table("d", "wide").expect("handle");
    let row = |id: i64, v: u64| -> Row {
        std::iter::once(int(id))
            .chain((0..5).map(|c| {
                let mut b = text(v * 10 + c, 900);
                b[..8].copy_from_slice(format!("{id:08}").as_bytes());
                Value::Bytes(b)
            }))
            .collect()
    };
    let mut tx = e.begin();
    for id in 0..30 {
        tx.insert(&t, row(id, 0)).expect("insert");
    }
    tx.commit().expect("commit");
    assert!(status(&e, "Tierdb_long_values_written") >= 30);
    e.create_index(
        "d",
        "wide",
        IndexDef {
            name: "c0".into(),
            columns: vec![1],
            unique: false,
        },
    )
    .expect("index over a column with long values");
    let t = e.table("d", "wide").expect("handle");
    let mut tx = e.begin();
    for id in (0..30).step_by(3) {
        tx.update(&t, &key(id), row(id, 1)).expect("update");
    }
    for id in (1..30).step_by(5) {
        tx.delete(&t, &key(id)).expect("delete");
    }
    tx.commit().expect("commit");
    let mut tx = e.begin();
    let table = scan_all(&mut tx, &t);
    let mut by_index = index_scan_all(&mut tx, &t, 0);
    by_index.sort_by_key(|r| r[0].as_i64());
    assert_eq!(by_index, table);
    // Each updated row is found under its new value only.
    for id in (0..30).step_by(3).filter(|id| id % 5 != 1) {
        let new = row(id, 1)[1].clone();
        let old = row(id, 0)[1].clone();
        let hits = |v: Value, tx: &mut tierdb_engine::Txn| {
            collect(
                tx.index_scan(
                    &t,
                    0,
                    Bound::Included(vec![v.clone()]),
                    Bound::Included(vec![v]),
                )
                .expect("index scan"),
            )
        };
        assert_eq!(hits(new, &mut tx).len(), 1, "row {id} under its new value");
        assert!(
            hits(old, &mut tx).is_empty(),
            "row {id} under its old value"
        );
    }
    tx.commit().expect("commit");
    // Every column indexed: the values still go off the row (an index entry holds its own
    // copy), and rows can still be changed and added.
    for c in 2..=5 {
        e.create_index(
            "d",
            "wide",
            IndexDef {
                name: format!("c{}", c - 1),
                columns: vec![c],
                unique: false,
            },
        )
        .expect("index");
    }
    let t = e.table("d", "wide").expect("handle");
    let mut tx = e.begin();
    for id in [0, 2, 4] {
        let mut r = row(id, 2);
        r[5] = Value::Bytes(text(99, 950));
        tx.update(&t, &key(id), r)
            .expect("update with every column indexed");
    }
    tx.insert(&t, row(100, 3))
        .expect("insert with every column indexed");
    tx.commit().expect("commit");
    let mut tx = e.begin();
    let table = scan_all(&mut tx, &t);
    for i in 0..5 {
        let mut by_index = index_scan_all(&mut tx, &t, i);
        by_index.sort_by_key(|r| r[0].as_i64());
        assert_eq!(by_index, table, "index {i}");
    }
    tx.commit().expect("commit");
}

#[test]
fn read_committed_readers_never_fail_while_a_big_value_is_replaced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    let t = setup(&e);
    // 4 MB values: a purge of ~1000 chunks, a window a reader does hit.
    let values: Arc<Vec<Vec<u8>>> = Arc::new((0..12).map(|v| text(v, 4_000_000)).collect());
    let big = |v: usize| -> Row {
        let mut r = doc(1, 10, 10, 0);
        r[2] = Value::Bytes(values[v].clone());
        r
    };
    let mut tx = e.begin();
    tx.insert(&t, big(0)).expect("insert");
    tx.commit().expect("commit");
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (e, t, stop, values) = (e.clone(), t.clone(), stop.clone(), values.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut tx = e.begin();
                    let r = tx.get(&t, &key(1)).expect("a read during the updates");
                    let Some(Value::Bytes(b)) = r.map(|r| r[2].clone()) else {
                        panic!("the row or its body is gone")
                    };
                    assert!(values.contains(&b), "a torn value");
                    tx.commit().expect("commit");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for v in 1..30 {
        let mut tx = e.begin();
        tx.update(&t, &key(1), big(v % values.len()))
            .expect("update");
        tx.commit().expect("commit");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().expect("reader") > 0);
    }
    assert_eq!(status(&e, "Tierdb_long_values_purged"), 29);
}

#[test]
fn a_unique_check_against_a_row_whose_big_value_changes_is_a_duplicate_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("database");
    let mut def = docs_table();
    def.name = "uq".into();
    def.indexes[0].unique = true;
    e.create_table("d", def).expect("table");
    let t = e.table("d", "uq").expect("handle");
    let mut tx = e.begin();
    tx.insert(&t, doc(1, 800_000, 10, 0)).expect("insert");
    tx.commit().expect("commit");
    let stop = Arc::new(AtomicBool::new(false));
    let inserter = {
        let (e, t, stop) = (e.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut tries = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut tx = e.begin();
                // k = 1, as row 1's (1 % 5).
                let mut r = doc(6, 10, 10, 0);
                r[1] = int(1);
                match tx.insert(&t, r) {
                    Err(Error::DuplicateKey { .. }) => {}
                    other => panic!("expected a duplicate key, got {other:?}"),
                }
                tx.rollback().expect("rollback");
                tries += 1;
            }
            tries
        })
    };
    for v in 1..25 {
        let mut tx = e.begin();
        tx.update(&t, &key(1), doc(1, 800_000, 10, v))
            .expect("update");
        tx.commit().expect("commit");
    }
    stop.store(true, Ordering::Relaxed);
    assert!(inserter.join().expect("inserter") > 0);
}
