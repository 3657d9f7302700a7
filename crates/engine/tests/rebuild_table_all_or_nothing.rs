//! Rebuilding a table into a new definition (what DROP COLUMN, a type change or a new
//! primary key need): every row is rewritten and every index rebuilt under the new keys, the
//! result survives a reopen and the old trees' pages come back; a conversion that fails, a
//! duplicate under the new keys, or a crash while the rows are copied leave the table exactly
//! as it was (and the half-built trees are freed); a writer still running delays the rebuild,
//! which gives up with LockWaitTimeout; a handle of the old definition cannot write.

mod common;

use common::*;
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, Error, IndexDef, LockMode, Row, Table, TableDef, Value};

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 4 << 20)).expect("open")
}

fn rows_of(e: &Engine, t: &Arc<Table>) -> Vec<Row> {
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, t);
    tx.commit().expect("commit");
    rows
}

fn setup(dir: &std::path::Path, n: i64) -> Arc<Engine> {
    let e = open(dir);
    e.create_database("d").expect("db");
    e.create_table("d", kv_table("t")).expect("t");
    let t = e.table("d", "t").expect("t");
    let mut tx = e.begin();
    for id in 1..=n {
        tx.insert(&t, kv_row(id, id % 17, id * 3)).expect("insert");
    }
    tx.commit().expect("commit");
    e
}

/// `kv_table` without `pad` and `k`, with a text column `s` (indexed) first:
/// `(s VARCHAR(20), id, v, KEY s_idx (s), UNIQUE KEY v_idx (v))`.
fn slim_def() -> TableDef {
    TableDef {
        name: "t".into(),
        columns: vec![bytes_col("s", 20), int_col("id"), int_col("v")],
        primary_key: vec![1],
        indexes: vec![
            IndexDef {
                name: "s_idx".into(),
                columns: vec![0],
                unique: false,
            },
            IndexDef {
                name: "v_idx".into(),
                columns: vec![2],
                unique: true,
            },
        ],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

fn slim(old: Vec<Value>) -> tierdb_engine::Result<Vec<Value>> {
    let id = match old[0] {
        Value::Int(i) => i,
        _ => return Err(Error::Internal("id is not an integer".into())),
    };
    Ok(vec![
        Value::Bytes(format!("s{:04}", 1000 - id).into_bytes()),
        old[0].clone(),
        old[3].clone(),
    ])
}

#[test]
fn a_rebuild_rewrites_rows_and_indexes_and_frees_the_old_trees() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = setup(dir.path(), 600);
    let old = e.table("d", "t").expect("t");
    let from = old.def.clone();
    let before: Vec<Row> = rows_of(&e, &old);
    let n = e
        .rebuild_table("d", "t", &from, slim_def(), &mut slim)
        .expect("rebuild");
    assert_eq!(n, 600);
    let t = e.table("d", "t").expect("t");
    assert_eq!(t.def, slim_def());
    let want: Vec<Row> = before.into_iter().map(|r| slim(r).expect("slim")).collect();
    assert_eq!(rows_of(&e, &t), want);
    // The new text index lists every row, in its own order.
    let mut tx = e.begin();
    let by_s = index_scan_all(&mut tx, &t, 0);
    let by_v = index_scan_all(&mut tx, &t, 1);
    tx.commit().expect("commit");
    let mut sorted = want.clone();
    sorted.sort_by(|a, b| a[0].to_string().cmp(&b[0].to_string()));
    assert_eq!(by_s, sorted);
    assert_eq!(by_v.len(), want.len());

    // The old handle cannot write rows of the old shape into the new trees.
    let mut tx = e.begin();
    let r = tx.insert(&old, kv_row(5000, 1, 1));
    assert!(matches!(r, Err(Error::TableDefinitionChanged)), "{r:?}");
    tx.rollback().expect("rollback");
    // The new handle writes; the unique index holds.
    let mut tx = e.begin();
    tx.insert(&t, vec![Value::Bytes(b"new".to_vec()), int(5000), int(-1)])
        .expect("insert");
    let r = tx.insert(&t, vec![Value::Bytes(b"dup".to_vec()), int(5001), int(-1)]);
    assert!(matches!(r, Err(Error::DuplicateKey { .. })), "{r:?}");
    tx.commit().expect("commit");

    // The old trees (with 200-byte pads) are freed once the old handle is gone.
    drop(old);
    let mut freed = 0;
    for _ in 0..50 {
        freed += e.reclaim_dropped(1000).expect("reclaim");
        std::thread::sleep(Duration::from_millis(20));
    }
    // 600 rows of ~200 bytes filled at least 8 leaves.
    assert!(freed >= 8, "only {freed} pages of the old trees were freed");

    e.shutdown().expect("shutdown");
    drop((e, t));
    let e = open(dir.path());
    let t = e.table("d", "t").expect("t");
    assert_eq!(t.def, slim_def());
    let rows = rows_of(&e, &t);
    assert_eq!(rows.len(), 601);
    assert_eq!(&rows[..600], &want[..]);
}

#[test]
fn a_failed_rebuild_or_a_crash_during_it_leaves_the_table_as_it_was() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = setup(dir.path(), 400);
    let t = e.table("d", "t").expect("t");
    let from = t.def.clone();
    let before = rows_of(&e, &t);

    // A conversion error at row 250.
    let fail_at_250 = |e: &Engine| {
        let mut seen = 0;
        let r = e.rebuild_table("d", "t", &from, slim_def(), &mut |old| {
            seen += 1;
            if seen == 250 {
                return Err(Error::Internal("row 250 does not convert".into()));
            }
            slim(old)
        });
        assert!(matches!(r, Err(Error::Internal(_))), "{r:?}");
        for _ in 0..50 {
            e.reclaim_dropped(1000).expect("reclaim");
        }
    };
    fail_at_250(&e);
    // The half-built trees go back: failing again allocates no new pages.
    let pages = e.data_pages_allocated().expect("pages");
    fail_at_250(&e);
    assert_eq!(e.data_pages_allocated().expect("pages"), pages);
    // A duplicate under the new keys (every row gets v = 7 in a UNIQUE index).
    let r = e.rebuild_table("d", "t", &from, slim_def(), &mut |old| {
        let mut r = slim(old)?;
        r[2] = int(7);
        Ok(r)
    });
    assert!(
        matches!(r, Err(Error::DuplicateKey { ref index, .. }) if index == "v_idx"),
        "{r:?}"
    );
    // A definition that changed since it was read: 1412.
    let r = e.rebuild_table("d", "t", &slim_def(), slim_def(), &mut slim);
    assert!(matches!(r, Err(Error::TableDefinitionChanged)), "{r:?}");

    let t = e.table("d", "t").expect("t");
    assert_eq!(t.def, from);
    assert_eq!(rows_of(&e, &t), before);
    let mut tx = e.begin();
    tx.insert(&t, kv_row(9000, 1, 1)).expect("still writable");
    tx.rollback().expect("rollback");

    // A crash image taken while the rows are being copied opens with the old table.
    let crash = tempfile::tempdir().expect("tempdir");
    let mut seen = 0;
    e.rebuild_table("d", "t", &from, slim_def(), &mut |old| {
        seen += 1;
        if seen == 200 {
            copy_engine_dir(dir.path(), crash.path());
        }
        slim(old)
    })
    .expect("rebuild");
    let c = open(crash.path());
    let ct = c.table("d", "t").expect("t");
    assert_eq!(ct.def, from);
    assert_eq!(rows_of(&c, &ct), before);
    let reclaimed = (0..50)
        .map(|_| c.reclaim_dropped(1000).expect("reclaim"))
        .sum::<u64>();
    assert!(reclaimed > 0, "the crashed rebuild's trees were not freed");
    c.shutdown().expect("shutdown");

    // And one taken after it opens with the new table.
    let after = tempfile::tempdir().expect("tempdir");
    copy_engine_dir(dir.path(), after.path());
    let c = open(after.path());
    let ct = c.table("d", "t").expect("t");
    assert_eq!(ct.def, slim_def());
    assert_eq!(rows_of(&c, &ct).len(), 400);
    c.shutdown().expect("shutdown");
    e.shutdown().expect("shutdown");
}

#[test]
fn a_running_writer_delays_the_rebuild_which_times_out_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.lock_wait_timeout = Duration::from_millis(300);
    let e = Engine::open(cfg).expect("open");
    e.create_database("d").expect("db");
    e.create_table("d", kv_table("t")).expect("t");
    let t = e.table("d", "t").expect("t");
    let from = t.def.clone();
    let mut writer = e.begin();
    writer.insert(&t, kv_row(1, 1, 1)).expect("insert");
    let r = e.rebuild_table("d", "t", &from, slim_def(), &mut slim);
    assert!(matches!(r, Err(Error::LockWaitTimeout)), "{r:?}");
    writer.commit().expect("commit");
    // Locking reads hold the table's key bytes too: the rebuild waits for them (shared and
    // exclusive).
    for mode in [LockMode::Shared, LockMode::Exclusive] {
        let mut locker = e.begin();
        assert!(locker
            .lock_row_mode(&t, &key(1), mode)
            .expect("lock")
            .is_some());
        let r = e.rebuild_table("d", "t", &from, slim_def(), &mut slim);
        assert!(matches!(r, Err(Error::LockWaitTimeout)), "{mode:?}: {r:?}");
        locker.commit().expect("commit");
    }
    e.rebuild_table("d", "t", &from, slim_def(), &mut slim)
        .expect("rebuild after the writer and the locker");
    let t = e.table("d", "t").expect("t");
    assert_eq!(rows_of(&e, &t), vec![slim(kv_row(1, 1, 1)).expect("slim")]);
}

#[test]
fn a_handle_from_before_a_key_change_cannot_write_or_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = setup(dir.path(), 50);
    let old = e.table("d", "t").expect("t");
    let from = old.def.clone();
    // Same columns, another primary key (k, id): only the keys change.
    let mut def = from.clone();
    def.primary_key = vec![1, 0];
    e.rebuild_table("d", "t", &from, def, &mut Ok)
        .expect("rebuild");
    let mut tx = e.begin();
    let r = tx.delete(&old, &key(1));
    assert!(matches!(r, Err(Error::TableDefinitionChanged)), "{r:?}");
    let r = tx.lock_row(&old, &key(2));
    assert!(matches!(r, Err(Error::TableDefinitionChanged)), "{r:?}");
    tx.rollback().expect("rollback");
    let t = e.table("d", "t").expect("t");
    assert_eq!(rows_of(&e, &t).len(), 50);
}
