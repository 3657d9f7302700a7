//! Tables without a primary key (rows keyed by a hidden row id) and AUTO_INCREMENT counters
//! across restarts:
//!
//! - identical rows are kept apart; each row comes back with its row id after the columns,
//!   through which it is updated and deleted; a secondary index over such a table lists
//!   exactly its rows (index entries end with the row id);
//! - after a reopen new rows get row ids above every existing one (none collides), also
//!   after the rows with the highest ids were deleted and purged;
//! - an AUTO_INCREMENT column that leads only a secondary index continues after its largest
//!   value when the table is reopened (sysbench `--secondary`);
//! - an AUTO_INCREMENT primary key whose top rows were deleted continues after the largest
//!   remaining value, as MariaDB 10.11 does at start-up.

mod common;

use common::*;
use std::sync::Arc;
use tierdb_engine::{Engine, IndexDef, Row, Table, TableDef, Value};

/// `(at INT, msg VARCHAR(40), KEY at (at))`, no primary key.
fn log_table() -> TableDef {
    TableDef {
        name: "log".into(),
        columns: vec![int_col("at"), bytes_col("msg", 40)],
        primary_key: vec![],
        indexes: vec![IndexDef {
            name: "at".into(),
            columns: vec![0],
            unique: false,
        }],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

fn entry(at: i64, msg: &str) -> Row {
    vec![Value::Int(at), Value::Bytes(msg.as_bytes().to_vec())]
}

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 2 << 20)).expect("open")
}

fn row_ids(rows: &[Row]) -> Vec<i64> {
    rows.iter()
        .map(|r| r.get(2).and_then(|v| v.as_i64()).expect("hidden row id"))
        .collect()
}

fn table(e: &Engine, name: &str) -> Arc<Table> {
    e.table("d", name).expect("table")
}

#[test]
fn rows_are_kept_apart_by_a_hidden_row_id_and_survive_reopening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("create database");
    e.create_table("d", log_table()).expect("create table");
    let t = table(&e, "log");
    let mut tx = e.begin();
    for i in 0..3000 {
        tx.insert(&t, entry(i % 10, "same text")).expect("insert");
    }
    tx.commit().expect("commit");
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, &t);
    assert_eq!(rows.len(), 3000);
    assert!(rows.iter().all(|r| r.len() == 3));
    let ids = row_ids(&rows);
    assert_eq!(ids, (1..=3000).collect::<Vec<_>>(), "rows in row-id order");
    // Update and delete through the row id.
    let first = rows[0].clone();
    let mut changed = first.clone();
    changed[1] = Value::Bytes(b"changed".to_vec());
    changed[0] = Value::Int(42);
    assert!(tx
        .update(&t, &[first[2].clone()], changed.clone())
        .expect("update"));
    assert!(tx.delete(&t, &[rows[1][2].clone()]).expect("delete"));
    tx.commit().expect("commit");
    let mut tx = e.begin();
    assert_eq!(tx.get(&t, &key(1)).expect("get"), Some(changed));
    assert_eq!(tx.get(&t, &key(2)).expect("get"), None);
    let by_index = index_scan_all(&mut tx, &t, 0);
    let mut by_table = scan_all(&mut tx, &t);
    assert_eq!(by_index.len(), 2999);
    let mut sorted = by_index.clone();
    sorted.sort_by(|a, b| a[2].key_cmp(&b[2]));
    by_table.sort_by(|a, b| a[2].key_cmp(&b[2]));
    assert_eq!(sorted, by_table);
    // The highest row ids go (committed, purged) before the reopen.
    for id in 2501..=3000 {
        assert!(tx.delete(&t, &key(id)).expect("delete"));
    }
    tx.commit().expect("commit");
    e.shutdown().expect("shutdown");
    drop((t, e));

    let e = open(dir.path());
    let t = table(&e, "log");
    let mut tx = e.begin();
    for i in 0..500 {
        tx.insert(&t, entry(i, "after reopen"))
            .expect("insert after reopen");
    }
    tx.commit().expect("commit");
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, &t);
    assert_eq!(rows.len(), 2499 + 500);
    let ids = row_ids(&rows);
    let mut dedup = ids.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), ids.len(), "a row id was handed out twice");
    assert!(ids.iter().filter(|&&i| i > 2500).count() == 500);
    assert_eq!(index_scan_all(&mut tx, &t, 0).len(), rows.len());
}

#[test]
fn auto_increment_counters_continue_after_reopening() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("create database");
    // sysbench --secondary: `id` AUTO_INCREMENT, only a secondary key, no primary key.
    let mut id = int_col("id");
    id.auto_increment = true;
    e.create_table(
        "d",
        TableDef {
            name: "sb".into(),
            columns: vec![id.clone(), int_col("k")],
            primary_key: vec![],
            indexes: vec![IndexDef {
                name: "xid".into(),
                columns: vec![0],
                unique: false,
            }],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .expect("create sb");
    e.create_table(
        "d",
        TableDef {
            name: "pk".into(),
            columns: vec![id, int_col("k")],
            primary_key: vec![0],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .expect("create pk");
    let (sb, pk) = (table(&e, "sb"), table(&e, "pk"));
    let mut tx = e.begin();
    for k in 0..2000 {
        tx.insert(&sb, vec![Value::Null, Value::Int(k)])
            .expect("insert");
        tx.insert(&pk, vec![Value::Null, Value::Int(k)])
            .expect("insert");
    }
    tx.commit().expect("commit");
    let mut tx = e.begin();
    for id in 1501..=2000 {
        assert!(tx.delete(&pk, &key(id)).expect("delete"));
    }
    tx.commit().expect("commit");
    e.shutdown().expect("shutdown");
    drop((sb, pk, e));

    let e = open(dir.path());
    let (sb, pk) = (table(&e, "sb"), table(&e, "pk"));
    let mut tx = e.begin();
    let a = tx
        .insert(&sb, vec![Value::Null, Value::Int(0)])
        .expect("insert");
    let b = tx
        .insert(&pk, vec![Value::Null, Value::Int(0)])
        .expect("insert");
    tx.commit().expect("commit");
    assert_eq!(a, Some(2001), "secondary-key auto column continues");
    assert_eq!(b, Some(1501), "continues after the largest remaining key");
}
