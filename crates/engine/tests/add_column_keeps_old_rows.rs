//! ALTER TABLE ... ADD COLUMN without rewriting rows: rows stored before the column existed
//! read its fill value (also in a table without a primary key, whose hidden row id follows
//! the columns), rows written after carry it; updates of old rows, an index over the new
//! column and secondary-index scans see the completed rows; it all survives a reopen, an
//! ADD COLUMN waits for a transaction writing the table, and a write through a handle taken
//! before the column was added fails with 1412 (retry) instead of writing the old shape.

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{ColumnDef, Engine, IndexDef, Row, TableDef, Value};

fn added(name: &str, fill: Value) -> ColumnDef {
    let mut c = int_col(name);
    c.nullable = true;
    c.fill = Some(fill);
    c
}

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 2 << 20)).expect("open")
}

#[test]
fn old_rows_read_the_fill_value_and_everything_survives_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create t");
    e.create_table(
        "d",
        TableDef {
            name: "h".into(),
            columns: vec![int_col("v")],
            primary_key: vec![],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .expect("create h");
    let (t, h) = (e.table("d", "t").expect("t"), e.table("d", "h").expect("h"));
    let mut tx = e.begin();
    for id in 0..2000 {
        tx.insert(&t, kv_row(id, id % 10, 0)).expect("insert");
    }
    for v in 0..50 {
        tx.insert(&h, vec![Value::Int(v)]).expect("insert h");
    }
    tx.commit().expect("commit");

    e.add_column("d", "t", added("extra", Value::Int(7)))
        .expect("add to t");
    e.add_column("d", "h", added("w", Value::Null))
        .expect("add to h");
    let (t, h) = (e.table("d", "t").expect("t"), e.table("d", "h").expect("h"));
    assert_eq!(t.def.columns.len(), 5);
    let mut tx = e.begin();
    let mut row = kv_row(5000, 3, 0);
    row.push(Value::Int(-1));
    tx.insert(&t, row).expect("insert a new row");
    // An old row updated through the new definition.
    let mut old = tx.get(&t, &key(1)).expect("get").expect("row 1");
    assert_eq!(old[4], Value::Int(7));
    old[4] = Value::Int(100);
    assert!(tx.update(&t, &key(1), old).expect("update"));
    tx.insert(&h, vec![Value::Int(99), Value::Int(1)])
        .expect("insert h");
    tx.commit().expect("commit");
    e.create_index(
        "d",
        "t",
        IndexDef {
            name: "extra".into(),
            columns: vec![4],
            unique: false,
        },
    )
    .expect("index the new column");

    let check = |e: &Engine| {
        let t = e.table("d", "t").expect("t");
        let h = e.table("d", "h").expect("h");
        let mut tx = e.begin();
        let rows = scan_all(&mut tx, &t);
        assert_eq!(rows.len(), 2001);
        let extra = |r: &Row| r[4].as_i64().expect("extra");
        assert_eq!(rows.iter().filter(|r| extra(r) == 7).count(), 1999);
        assert_eq!(
            tx.get(&t, &key(1)).expect("get").expect("1")[4],
            Value::Int(100)
        );
        assert_eq!(
            tx.get(&t, &key(5000)).expect("get").expect("new")[4],
            Value::Int(-1)
        );
        let by_k = index_scan_all(&mut tx, &t, 0);
        assert!(by_k.iter().all(|r| r.len() == 5));
        let sevens = collect(tx.index_scan(&t, 1, incl(7), incl(7)).expect("index scan"));
        assert_eq!(sevens.len(), 1999);
        let hs = scan_all(&mut tx, &h);
        assert_eq!(hs.len(), 51);
        // Columns, then the hidden row id.
        assert!(hs.iter().all(|r| r.len() == 3));
        assert_eq!(hs.iter().filter(|r| r[1] == Value::Null).count(), 50);
        assert!(hs
            .iter()
            .any(|r| r[0] == Value::Int(99) && r[1] == Value::Int(1)));
    };
    check(&e);
    e.shutdown().expect("shutdown");
    drop((t, h, e));
    let e = open(dir.path());
    check(&e);
}

#[test]
fn add_column_waits_for_a_writing_transaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create t");
    let t = e.table("d", "t").expect("t");
    let mut w = e.begin();
    w.insert(&t, kv_row(1, 1, 1)).expect("insert");
    let e2 = e.clone();
    let alter = std::thread::spawn(move || e2.add_column("d", "t", added("x", Value::Int(3))));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!alter.is_finished(), "ADD COLUMN must wait for the writer");
    w.commit().expect("commit");
    alter.join().expect("thread").expect("add column");
    let t = e.table("d", "t").expect("t");
    let mut tx = e.begin();
    assert_eq!(
        tx.get(&t, &key(1)).expect("get").expect("row")[4],
        Value::Int(3)
    );
}

#[test]
fn a_write_through_a_handle_from_before_add_column_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create t");
    let old = e.table("d", "t").expect("t");
    let mut tx = e.begin();
    tx.insert(&old, kv_row(1, 1, 1)).expect("insert");
    tx.commit().expect("commit");
    e.add_column("d", "t", added("x", Value::Int(3)))
        .expect("add column");
    let mut tx = e.begin();
    let r = tx.update(&old, &key(1), kv_row(1, 2, 2));
    assert!(
        matches!(r, Err(tierdb_engine::Error::TableDefinitionChanged)),
        "{r:?}"
    );
    assert_eq!(
        tierdb_engine::Error::TableDefinitionChanged.mysql_code().0,
        1412
    );
    let r = tx.insert(&old, kv_row(2, 2, 2));
    assert!(matches!(
        r,
        Err(tierdb_engine::Error::TableDefinitionChanged)
    ));
    tx.rollback().expect("rollback");
    let t = e.table("d", "t").expect("t");
    let mut tx = e.begin();
    assert_eq!(
        scan_all(&mut tx, &t),
        vec![{
            let mut r = kv_row(1, 1, 1);
            r.push(Value::Int(3));
            r
        }]
    );
}
