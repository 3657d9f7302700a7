//! A transaction's binary-log changes are encoded while it runs (in batches, into chunks of
//! about 1 MiB), not at its commit. What reaches the file must still be exactly the changes
//! that stayed: megabytes rolled back to a savepoint leave no event behind even when they
//! spanned several chunks, and an update that moves a row to another primary key is one
//! update event (not a delete and an insert) also when it falls on a batch boundary.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::{id_pad_row, id_pad_table, stored_rows};
use tierdb_binlog::decode::{to_value, Decoder, Event, RawValue};
use tierdb_binlog::log::{Binlog, BinlogConfig};
use tierdb_binlog::rows::RowsKind;
use tierdb_engine::{Engine, EngineConfig, Row, Table, TableDef, Value};

fn table() -> TableDef {
    id_pad_table("t")
}

fn row(id: i64, tag: &str) -> Row {
    id_pad_row(id, tag)
}

/// One row change as the file tells it: (kind, before image, after image).
type Change = (RowsKind, Option<Row>, Option<Row>);

/// The row changes of the file, its transactions (Xid events) and its table maps.
fn changes_in(file: &Path, t: &Table) -> (Vec<Change>, usize, usize) {
    let bytes = std::fs::read(file).unwrap();
    let events = Decoder::new()
        .feed(&bytes[4..])
        .expect("decode the binary log");
    let cols = &t.def.columns;
    let value = |raw: &Option<Vec<RawValue>>| -> Option<Row> {
        raw.as_ref().map(|raw| {
            raw.iter()
                .zip(cols)
                .map(|(v, c)| to_value(v, &c.ty).expect("value"))
                .collect()
        })
    };
    let mut out = Vec::new();
    let (mut xids, mut maps) = (0, 0);
    for ev in &events {
        match ev {
            Event::Rows(r) => {
                for (b, a) in &r.rows {
                    out.push((r.kind, value(b), value(a)));
                }
            }
            Event::Xid(_) => xids += 1,
            Event::TableMap(_) => maps += 1,
            _ => {}
        }
    }
    (out, xids, maps)
}

fn engine_with_log(dir: &Path) -> (Arc<Engine>, Arc<Table>) {
    let log = Binlog::open(BinlogConfig::new(dir.join("binlog"))).expect("open log");
    let mut cfg = EngineConfig::under(dir.join("db"));
    cfg.buffer_pool_size_bytes = 64 << 20;
    cfg.binlog = Some(log.clone());
    let e = Engine::open(cfg).expect("open engine");
    log.start().expect("start the log");
    e.create_database("d").expect("create database");
    e.create_table("d", table()).expect("create table");
    let t = e.table("d", "t").expect("table");
    (e, t)
}

#[test]
fn rolled_back_megabytes_and_moved_rows_reach_the_log_as_they_stayed() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = engine_with_log(dir.path());

    let mut want: Vec<Change> = Vec::new();
    let mut tx = e.begin();
    // About 1.5 MB of inserts: more than one chunk before the savepoint.
    for id in 1..=5000 {
        tx.insert(&t, row(id, "ins")).expect("insert");
        want.push((RowsKind::Write, None, Some(row(id, "ins"))));
    }
    let sp = tx.savepoint();
    // About 3 MB of updates and deletes, all rolled back: several chunks are cut.
    for id in 1..=4000 {
        tx.update(&t, &[Value::Int(id)], row(id, "gone"))
            .expect("update");
    }
    for id in 4001..=5000 {
        assert!(tx.delete(&t, &[Value::Int(id)]).expect("delete"));
    }
    tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
    // 600 updates that move their row to another key: one lands on every batch boundary.
    for id in 1..=600 {
        tx.update(&t, &[Value::Int(id)], row(id + 100_000, "moved"))
            .expect("moving update");
        want.push((
            RowsKind::Update,
            Some(row(id, "ins")),
            Some(row(id + 100_000, "moved")),
        ));
    }
    // A savepoint in the middle of pending changes, rolled back at once.
    for id in 601..=700 {
        assert!(tx.delete(&t, &[Value::Int(id)]).expect("delete"));
        want.push((RowsKind::Delete, Some(row(id, "ins")), None));
    }
    let sp = tx.savepoint();
    for id in 701..=800 {
        assert!(tx.delete(&t, &[Value::Int(id)]).expect("delete"));
    }
    tx.rollback_to_savepoint(sp).expect("rollback to savepoint");
    tx.commit().expect("commit");

    let first = dir.path().join("binlog").join("tierdb-bin.000001");
    let (got, xids, _) = changes_in(&first, &t);
    assert_eq!(xids, 1, "one transaction");
    assert_eq!(got.len(), want.len(), "row changes in the log");
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "change {i}: got {g:?}, want {w:?}");
    }

    // And the log's changes applied to an empty table give the table.
    let mut model: BTreeMap<i64, Row> = BTreeMap::new();
    for (_, b, a) in got {
        if let Some(b) = b {
            assert!(model.remove(&b[0].as_i64().unwrap()).is_some());
        }
        if let Some(a) = a {
            model.insert(a[0].as_i64().unwrap(), a);
        }
    }
    let stored = stored_rows(&e, &t);
    assert_eq!(stored.len(), 4900);
    assert!(model == stored, "the log's rows differ from the table's");
}

#[test]
fn a_transaction_rolled_back_whole_logs_nothing_and_the_next_one_logs_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = engine_with_log(dir.path());

    let mut tx = e.begin();
    for id in 1..=3000 {
        tx.insert(&t, row(id, "lost")).expect("insert");
    }
    tx.rollback().expect("rollback");
    let mut tx = e.begin();
    tx.insert(&t, row(1, "kept")).expect("insert");
    tx.commit().expect("commit");

    let first = dir.path().join("binlog").join("tierdb-bin.000001");
    let (got, xids, _) = changes_in(&first, &t);
    assert_eq!(xids, 1);
    assert_eq!(got, vec![(RowsKind::Write, None, Some(row(1, "kept")))]);
}

#[test]
fn rows_written_under_per_row_savepoints_share_their_events() {
    let dir = tempfile::tempdir().unwrap();
    let (e, t) = engine_with_log(dir.path());
    let mut tx = e.begin();
    for id in 1..=2000 {
        tx.insert(&t, row(id, "ins")).expect("insert");
    }
    tx.commit().expect("commit");

    // As UPDATE IGNORE does: a savepoint per row, every seventh row cut back, some rows
    // moved to another key (a delete and an insert, merged into one update).
    let mut want: Vec<Change> = Vec::new();
    let mut tx = e.begin();
    for id in 1..=2000 {
        let sp = tx.row_savepoint();
        let new_id = if id % 5 == 0 { id + 100_000 } else { id };
        tx.update(&t, &[Value::Int(id)], row(new_id, "upd"))
            .expect("update");
        if id % 7 == 0 {
            tx.rollback_to_savepoint(sp).expect("cut the row back");
        } else {
            want.push((
                RowsKind::Update,
                Some(row(id, "ins")),
                Some(row(new_id, "upd")),
            ));
        }
    }
    tx.commit().expect("commit");

    let first = dir.path().join("binlog").join("tierdb-bin.000001");
    let (got, xids, maps) = changes_in(&first, &t);
    assert_eq!(xids, 2);
    let got: Vec<Change> = got.into_iter().skip(2000).collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "change {i}: got {g:?}, want {w:?}");
    }
    // One table map per batch of 256 changes (and per transaction), not one per row.
    assert!(
        maps <= 20,
        "{maps} table maps for two transactions of 2000 rows"
    );
}
