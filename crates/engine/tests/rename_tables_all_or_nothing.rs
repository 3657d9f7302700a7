//! RENAME TABLE in the engine: renames are all or nothing and survive a crash; the rows,
//! indexes and AUTO_INCREMENT counter go with the table; a handle taken before the rename
//! cannot write under the old name; a writer still running delays the rename, which gives up
//! with LockWaitTimeout rather than renaming under it.

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, Error, Row, Table, TableDef};

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 4 << 20)).expect("open")
}

fn pair(db: &str, from: &str, to_db: &str, to: &str) -> (String, String, String, String) {
    (db.into(), from.into(), to_db.into(), to.into())
}

fn rows_of(e: &Engine, t: &Arc<Table>) -> Vec<Row> {
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, t);
    tx.commit().expect("commit");
    rows
}

fn fill(e: &Engine, db: &str, name: &str, ids: std::ops::Range<i64>) {
    let t = e.table(db, name).expect("table");
    let mut tx = e.begin();
    for id in ids {
        tx.insert(&t, kv_row(id, id * 10, id)).expect("insert");
    }
    tx.commit().expect("commit");
}

#[test]
fn a_swap_is_atomic_and_survives_a_crash_image() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("db");
    e.create_database("x").expect("db");
    e.create_table("d", kv_table("a")).expect("a");
    e.create_table("d", kv_table("b")).expect("b");
    fill(&e, "d", "a", 1..40);
    fill(&e, "d", "b", 100..105);
    let a_rows = rows_of(&e, &e.table("d", "a").expect("a"));
    let b_rows = rows_of(&e, &e.table("d", "b").expect("b"));

    // A failing pair renames nothing.
    let r = e.rename_tables(&[pair("d", "a", "d", "c"), pair("d", "zz", "d", "y")]);
    assert!(matches!(r, Err(Error::NoSuchTable { .. })), "{r:?}");
    let r = e.rename_tables(&[pair("d", "a", "d", "b")]);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    let r = e.rename_tables(&[pair("d", "a", "nodb", "a")]);
    assert!(matches!(r, Err(Error::NoSuchDatabase(_))), "{r:?}");
    assert_eq!(e.tables("d").expect("tables"), vec!["a", "b"]);

    let old_a = e.table("d", "a").expect("a");
    // Swap through a temporary name, and move a third table to another database.
    e.create_table("d", kv_table("m")).expect("m");
    fill(&e, "d", "m", 7..9);
    e.rename_tables(&[
        pair("d", "a", "d", "tmp"),
        pair("d", "b", "d", "a"),
        pair("d", "tmp", "d", "b"),
        pair("d", "m", "x", "moved"),
    ])
    .expect("swap");
    assert_eq!(e.tables("d").expect("tables"), vec!["a", "b"]);
    assert_eq!(e.tables("x").expect("tables"), vec!["moved"]);
    let (a, b) = (e.table("d", "a").expect("a"), e.table("d", "b").expect("b"));
    assert_eq!(rows_of(&e, &a), b_rows);
    assert_eq!(rows_of(&e, &b), a_rows);
    // A handle taken before the swap now names the other table: its write is refused
    // (1412) instead of going into the table that took its name.
    let mut tx = e.begin();
    let r = tx.insert(&old_a, kv_row(500, 1, 1));
    assert!(matches!(r, Err(Error::TableDefinitionChanged)), "{r:?}");
    tx.rollback().expect("rollback");
    // Secondary index scans follow the table.
    let mut tx = e.begin();
    assert_eq!(index_scan_all(&mut tx, &b, 0).len(), a_rows.len());
    tx.commit().expect("commit");

    // A crash image taken now (no shutdown) opens with the new names.
    let crash = tempfile::tempdir().expect("tempdir");
    copy_engine_dir(dir.path(), crash.path());
    let c = open(crash.path());
    assert_eq!(c.tables("d").expect("tables"), vec!["a", "b"]);
    assert_eq!(rows_of(&c, &c.table("d", "a").expect("a")), b_rows);
    assert_eq!(rows_of(&c, &c.table("d", "b").expect("b")), a_rows);
    assert_eq!(rows_of(&c, &c.table("x", "moved").expect("moved")).len(), 2);
    c.shutdown().expect("shutdown");
    e.shutdown().expect("shutdown");
}

#[test]
fn old_handles_cannot_write_and_the_counter_moves_with_the_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("db");
    let mut def: TableDef = kv_table("t");
    def.columns[0].auto_increment = true;
    e.create_table("d", def).expect("t");
    let old = e.table("d", "t").expect("t");
    let mut tx = e.begin();
    for _ in 0..3 {
        tx.insert(&old, kv_row(0, 1, 1)).expect("insert");
    }
    tx.commit().expect("commit");
    e.rename_tables(&[pair("d", "t", "d", "u")])
        .expect("rename");

    let mut tx = e.begin();
    let r = tx.insert(&old, kv_row(0, 1, 1));
    assert!(
        matches!(r, Err(Error::NoSuchTable { ref table, .. }) if table == "t"),
        "a write through the old handle: {r:?}"
    );
    tx.rollback().expect("rollback");

    let new = e.table("d", "u").expect("u");
    let mut tx = e.begin();
    let id = tx.insert(&new, kv_row(0, 1, 1)).expect("insert");
    assert_eq!(id, Some(4), "the AUTO_INCREMENT counter continues");
    tx.commit().expect("commit");
    e.shutdown().expect("shutdown");
    drop((e, old, new));
    let e = open(dir.path());
    assert_eq!(e.tables("d").expect("tables"), vec!["u"]);
    assert_eq!(rows_of(&e, &e.table("d", "u").expect("u")).len(), 4);
}

#[test]
fn a_running_writer_delays_the_rename_which_times_out_without_renaming() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.lock_wait_timeout = Duration::from_millis(300);
    let e = Engine::open(cfg).expect("open");
    e.create_database("d").expect("db");
    e.create_table("d", kv_table("t")).expect("t");
    let t = e.table("d", "t").expect("t");
    let mut writer = e.begin();
    writer.insert(&t, kv_row(1, 1, 1)).expect("insert");
    let r = e.rename_tables(&[pair("d", "t", "d", "u")]);
    assert!(matches!(r, Err(Error::LockWaitTimeout)), "{r:?}");
    assert_eq!(e.tables("d").expect("tables"), vec!["t"]);
    writer.commit().expect("commit");
    e.rename_tables(&[pair("d", "t", "d", "u")])
        .expect("rename after the writer");
    let u = e.table("d", "u").expect("u");
    assert_eq!(rows_of(&e, &u), vec![kv_row(1, 1, 1)]);
    assert!(matches!(e.table("d", "t"), Err(Error::NoSuchTable { .. })));
}
