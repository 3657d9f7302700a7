//! Property test of the table layer against a model.
//!
//! A table `(id PK, k, pad, v, KEY(k))` starts with 12 000 rows of about 200 bytes (≈3 MiB
//! of leaves) behind a 1 MiB buffer pool, so nearly every operation evicts and re-reads
//! pages. A random sequence of single-row and run-of-rows inserts, updates (of `v`, of the
//! indexed `k`, and of the primary key), deletes, point gets, primary range scans, secondary
//! index scans, commits and rollbacks runs in one transaction at a time, mirrored on a
//! `BTreeMap` model of the committed rows and of the transaction's own view.
//!
//! Checked: every read of the writing transaction equals its model view; a second
//! transaction ("observer") sees exactly the committed model while the writer has
//! uncommitted changes; after every commit and rollback a full scan and a full index scan
//! (ordered by `(k, id)`) equal the committed model; after a clean shutdown and reopen they
//! still do.
//!
//! One operation row in eleven has a 5–17 KB pad, kept off the row as a long value.
//!
//! A primary-key update onto an existing key fails with DuplicateKey after it has deleted
//! the old row (the engine has no statement rollback; the SQL layer undoes the statement),
//! so the model rolls the whole transaction back there, as a client would.

mod common;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use tierdb_engine::{Engine, Error, Row, Table, Txn, Value};

const PRELOADED: i64 = 12_000;
/// Ids live in `0..ID_SPACE`; the preload takes the even ones.
const ID_SPACE: i64 = 2 * PRELOADED;
const K_SPACE: i64 = 40;
const POOL_BYTES: u64 = 1 << 20;

#[derive(Clone, Debug)]
enum Op {
    Insert {
        id: i64,
        k: i64,
        v: i64,
    },
    /// Inserts ids `start..start + n` that are absent (a run splits leaves).
    InsertRun {
        start: i64,
        n: i64,
        k: i64,
    },
    Update {
        id: i64,
        k: i64,
        v: i64,
    },
    /// Changes `k` of every present row in `start..start + n`.
    UpdateRun {
        start: i64,
        n: i64,
        dk: i64,
    },
    UpdatePk {
        id: i64,
        new_id: i64,
    },
    Delete {
        id: i64,
    },
    /// Deletes every present row in `start..start + n` (a run merges leaves).
    DeleteRun {
        start: i64,
        n: i64,
    },
    Get {
        id: i64,
    },
    Scan {
        lo: Bound<i64>,
        hi: Bound<i64>,
    },
    IndexScan {
        lo: Bound<i64>,
        hi: Bound<i64>,
    },
    ObserverGet {
        id: i64,
    },
    ObserverScan {
        lo: Bound<i64>,
        hi: Bound<i64>,
    },
    ObserverIndexScan {
        lo: Bound<i64>,
        hi: Bound<i64>,
    },
    Commit,
    Rollback,
}

fn id_s() -> impl Strategy<Value = i64> {
    0..ID_SPACE
}

fn bound_s(space: i64) -> impl Strategy<Value = Bound<i64>> {
    prop_oneof![
        1 => Just(Bound::Unbounded),
        3 => (0..space).prop_map(Bound::Included),
        3 => (0..space).prop_map(Bound::Excluded),
    ]
}

/// A range `lo..hi` of moderate width (most of the time) within `0..space`.
fn range_s(space: i64, width: i64) -> impl Strategy<Value = (Bound<i64>, Bound<i64>)> {
    prop_oneof![
        3 => (0..space, 0..width, any::<bool>(), any::<bool>()).prop_map(|(lo, w, li, hi_i)| {
            let hi = lo + w;
            (
                if li { Bound::Included(lo) } else { Bound::Excluded(lo) },
                if hi_i { Bound::Included(hi) } else { Bound::Excluded(hi) },
            )
        }),
        1 => (bound_s(space), bound_s(space)),
    ]
}

fn op_s() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (id_s(), 0..K_SPACE, any::<i32>()).prop_map(|(id, k, v)| Op::Insert { id, k, v: v as i64 }),
        2 => (id_s(), 1..400i64, 0..K_SPACE).prop_map(|(start, n, k)| Op::InsertRun { start, n, k }),
        6 => (id_s(), 0..K_SPACE, any::<i32>()).prop_map(|(id, k, v)| Op::Update { id, k, v: v as i64 }),
        2 => (id_s(), 1..300i64, -3..4i64).prop_map(|(start, n, dk)| Op::UpdateRun { start, n, dk }),
        3 => (id_s(), id_s()).prop_map(|(id, new_id)| Op::UpdatePk { id, new_id }),
        5 => id_s().prop_map(|id| Op::Delete { id }),
        2 => (id_s(), 1..400i64).prop_map(|(start, n)| Op::DeleteRun { start, n }),
        4 => id_s().prop_map(|id| Op::Get { id }),
        3 => range_s(ID_SPACE, 400).prop_map(|(lo, hi)| Op::Scan { lo, hi }),
        3 => range_s(K_SPACE, 3).prop_map(|(lo, hi)| Op::IndexScan { lo, hi }),
        2 => id_s().prop_map(|id| Op::ObserverGet { id }),
        1 => range_s(ID_SPACE, 400).prop_map(|(lo, hi)| Op::ObserverScan { lo, hi }),
        1 => range_s(K_SPACE, 3).prop_map(|(lo, hi)| Op::ObserverIndexScan { lo, hi }),
        3 => Just(Op::Commit),
        2 => Just(Op::Rollback),
    ]
}

/// The committed rows and the writing transaction's view of them.
struct Model {
    committed: BTreeMap<i64, Row>,
    view: BTreeMap<i64, Row>,
}

fn k_of(r: &Row) -> i64 {
    r[1].as_i64().expect("k")
}

fn to_engine_bound(b: Bound<i64>) -> Bound<Vec<Value>> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Included(key(v)),
        Bound::Excluded(v) => Bound::Excluded(key(v)),
    }
}

fn in_range(x: i64, lo: Bound<i64>, hi: Bound<i64>) -> bool {
    (match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => x >= l,
        Bound::Excluded(l) => x > l,
    }) && (match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => x <= h,
        Bound::Excluded(h) => x < h,
    })
}

fn model_scan(m: &BTreeMap<i64, Row>, lo: Bound<i64>, hi: Bound<i64>) -> Vec<Row> {
    m.values()
        .filter(|r| in_range(r[0].as_i64().unwrap_or(0), lo, hi))
        .cloned()
        .collect()
}

fn model_index_scan(m: &BTreeMap<i64, Row>, lo: Bound<i64>, hi: Bound<i64>) -> Vec<Row> {
    let mut v: Vec<&Row> = m.values().filter(|r| in_range(k_of(r), lo, hi)).collect();
    v.sort_by_key(|r| (k_of(r), r[0].as_i64()));
    v.into_iter().cloned().collect()
}

/// Compares two row lists, describing the first difference briefly.
fn same_rows(what: &str, got: &[Row], want: &[Row]) -> Result<(), TestCaseError> {
    if got == want {
        return Ok(());
    }
    let short = |r: Option<&Row>| {
        r.map(|r| format!("(id {}, k {}, v {})", r[0], r[1], r[3]))
            .unwrap_or_else(|| "nothing".into())
    };
    let i = got
        .iter()
        .zip(want)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(want.len()));
    Err(TestCaseError::fail(format!(
        "{what}: {} rows, expected {}; first difference at position {i}: got {}, expected {}",
        got.len(),
        want.len(),
        short(got.get(i)),
        short(want.get(i)),
    )))
}

fn rows(c: tierdb_engine::Result<tierdb_engine::RowCursor>) -> Result<Vec<Row>, TestCaseError> {
    let c = c.map_err(|e| TestCaseError::fail(format!("opening a cursor: {e}")))?;
    c.collect::<Result<Vec<_>, _>>()
        .map_err(|e| TestCaseError::fail(format!("reading a cursor: {e}")))
}

fn ok<T>(what: &str, r: tierdb_engine::Result<T>) -> Result<T, TestCaseError> {
    r.map_err(|e| TestCaseError::fail(format!("{what}: unexpected error {e}")))
}

/// The same scan read backwards (`scan_columns_dir` with `desc`) gives `want` reversed.
fn same_backwards(
    what: &str,
    tx: &mut Txn,
    t: &Arc<Table>,
    index: Option<usize>,
    bounds: (Bound<Vec<Value>>, Bound<Vec<Value>>),
    want: &[Row],
) -> Result<(), TestCaseError> {
    let got = rows(tx.scan_columns_dir(t, index, bounds, None, true))?;
    let mut rev = want.to_vec();
    rev.reverse();
    same_rows(&format!("{what}, descending"), &got, &rev)
}

/// Full scan and full index scan from a fresh transaction equal the committed model.
fn check_committed(
    e: &Engine,
    t: &Arc<Table>,
    m: &BTreeMap<i64, Row>,
) -> Result<(), TestCaseError> {
    let mut tx = e.begin();
    let want: Vec<Row> = m.values().cloned().collect();
    let got = rows(tx.scan(t, Bound::Unbounded, Bound::Unbounded))?;
    same_rows("full scan", &got, &want)?;
    same_backwards("full scan", &mut tx, t, None, all(), &want)?;
    let got = rows(tx.index_scan(t, 0, Bound::Unbounded, Bound::Unbounded))?;
    let want = model_index_scan(m, Bound::Unbounded, Bound::Unbounded);
    same_rows("full index scan", &got, &want)?;
    same_backwards("full index scan", &mut tx, t, Some(0), all(), &want)?;
    ok("observer commit", tx.commit())
}

fn insert_one(
    tx: &mut Txn,
    t: &std::sync::Arc<Table>,
    m: &mut Model,
    row: Row,
) -> Result<(), TestCaseError> {
    let id = row[0].as_i64().unwrap_or(0);
    let r = tx.insert(t, row.clone());
    match m.view.entry(id) {
        std::collections::btree_map::Entry::Occupied(_) => prop_assert!(
            matches!(r, Err(Error::DuplicateKey { .. })),
            "insert of existing id {id}: expected DuplicateKey, got {r:?}"
        ),
        std::collections::btree_map::Entry::Vacant(v) => {
            prop_assert!(matches!(r, Ok(None)), "insert of id {id}: {r:?}");
            v.insert(row);
        }
    }
    Ok(())
}

fn update_one(
    tx: &mut Txn,
    t: &Arc<Table>,
    m: &mut Model,
    id: i64,
    row: Row,
) -> Result<(), TestCaseError> {
    let r = ok("update", tx.update(t, &key(id), row.clone()))?;
    prop_assert_eq!(r, m.view.contains_key(&id), "update of id {} reported", id);
    if r {
        m.view.insert(id, row);
    }
    Ok(())
}

fn delete_one(tx: &mut Txn, t: &Arc<Table>, m: &mut Model, id: i64) -> Result<(), TestCaseError> {
    let r = ok("delete", tx.delete(t, &key(id)))?;
    prop_assert_eq!(
        r,
        m.view.remove(&id).is_some(),
        "delete of id {} reported",
        id
    );
    Ok(())
}

/// Runs one op sequence on a copy of the preloaded template.
fn run_case(template: &Path, ops: &[Op]) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_engine_dir(template, dir.path());
    let cfg = small_cfg(dir.path(), POOL_BYTES);
    let e = ok("open", Engine::open(cfg.clone()))?;
    let t = ok("table", e.table("m", "t"))?;
    let start: BTreeMap<i64, Row> = (0..PRELOADED)
        .map(|i| (2 * i, initial_row(2 * i)))
        .collect();
    let mut m = Model {
        committed: start.clone(),
        view: start,
    };
    let mut tx = e.begin();
    for op in ops {
        match op.clone() {
            Op::Insert { id, k, v } => insert_one(&mut tx, &t, &mut m, op_row(id, k, v))?,
            Op::InsertRun { start, n, k } => {
                for id in start..(start + n).min(ID_SPACE) {
                    if !m.view.contains_key(&id) {
                        insert_one(&mut tx, &t, &mut m, op_row(id, k, id ^ start))?;
                    }
                }
            }
            Op::Update { id, k, v } => update_one(&mut tx, &t, &mut m, id, op_row(id, k, v))?,
            Op::UpdateRun { start, n, dk } => {
                let ids: Vec<i64> = m.view.range(start..start + n).map(|(&i, _)| i).collect();
                for id in ids {
                    let old = &m.view[&id];
                    let k = (k_of(old) + dk).rem_euclid(K_SPACE);
                    let v = old[3].as_i64().unwrap_or(0) + 1;
                    update_one(&mut tx, &t, &mut m, id, op_row(id, k, v))?;
                }
            }
            Op::UpdatePk { id, new_id } => {
                let Some(old) = m.view.get(&id).cloned() else {
                    let r = ok(
                        "update of a missing row",
                        tx.update(&t, &key(id), kv_row(new_id, 0, 0)),
                    )?;
                    prop_assert!(!r, "update of missing id {} reported a change", id);
                    continue;
                };
                let mut new = old.clone();
                new[0] = int(new_id);
                let r = tx.update(&t, &key(id), new.clone());
                if new_id != id && m.view.contains_key(&new_id) {
                    prop_assert!(
                        matches!(r, Err(Error::DuplicateKey { .. })),
                        "moving id {id} onto existing id {new_id}: {r:?}"
                    );
                    ok("rollback after a failed statement", tx.rollback())?;
                    m.view = m.committed.clone();
                    check_committed(&e, &t, &m.committed)?;
                    tx = e.begin();
                } else {
                    prop_assert!(matches!(r, Ok(true)), "moving id {id} to {new_id}: {r:?}");
                    m.view.remove(&id);
                    m.view.insert(new_id, new);
                }
            }
            Op::Delete { id } => delete_one(&mut tx, &t, &mut m, id)?,
            Op::DeleteRun { start, n } => {
                let ids: Vec<i64> = m.view.range(start..start + n).map(|(&i, _)| i).collect();
                for id in ids {
                    delete_one(&mut tx, &t, &mut m, id)?;
                }
            }
            Op::Get { id } => {
                let r = ok("get", tx.get(&t, &key(id)))?;
                prop_assert_eq!(
                    r.as_ref(),
                    m.view.get(&id),
                    "get of id {} in the writer",
                    id
                );
            }
            Op::Scan { lo, hi } => {
                let got = rows(tx.scan(&t, to_engine_bound(lo), to_engine_bound(hi)))?;
                let what = format!("writer scan {lo:?}..{hi:?}");
                let want = model_scan(&m.view, lo, hi);
                same_rows(&what, &got, &want)?;
                let bounds = (to_engine_bound(lo), to_engine_bound(hi));
                same_backwards(&what, &mut tx, &t, None, bounds, &want)?;
            }
            Op::IndexScan { lo, hi } => {
                let got = rows(tx.index_scan(&t, 0, to_engine_bound(lo), to_engine_bound(hi)))?;
                let what = format!("writer index scan {lo:?}..{hi:?}");
                let want = model_index_scan(&m.view, lo, hi);
                same_rows(&what, &got, &want)?;
                let bounds = (to_engine_bound(lo), to_engine_bound(hi));
                same_backwards(&what, &mut tx, &t, Some(0), bounds, &want)?;
            }
            Op::ObserverGet { id } => {
                let mut o = e.begin();
                let r = ok("observer get", o.get(&t, &key(id)))?;
                prop_assert_eq!(
                    r.as_ref(),
                    m.committed.get(&id),
                    "observer get of id {}",
                    id
                );
            }
            Op::ObserverScan { lo, hi } => {
                let mut o = e.begin();
                let got = rows(o.scan(&t, to_engine_bound(lo), to_engine_bound(hi)))?;
                let what = format!("observer scan {lo:?}..{hi:?}");
                let want = model_scan(&m.committed, lo, hi);
                same_rows(&what, &got, &want)?;
                let bounds = (to_engine_bound(lo), to_engine_bound(hi));
                same_backwards(&what, &mut o, &t, None, bounds, &want)?;
            }
            Op::ObserverIndexScan { lo, hi } => {
                let mut o = e.begin();
                let got = rows(o.index_scan(&t, 0, to_engine_bound(lo), to_engine_bound(hi)))?;
                let what = format!("observer index scan {lo:?}..{hi:?}");
                let want = model_index_scan(&m.committed, lo, hi);
                same_rows(&what, &got, &want)?;
                let bounds = (to_engine_bound(lo), to_engine_bound(hi));
                same_backwards(&what, &mut o, &t, Some(0), bounds, &want)?;
            }
            Op::Commit => {
                ok("commit", tx.commit())?;
                m.committed = m.view.clone();
                check_committed(&e, &t, &m.committed)?;
                tx = e.begin();
            }
            Op::Rollback => {
                ok("rollback", tx.rollback())?;
                m.view = m.committed.clone();
                check_committed(&e, &t, &m.committed)?;
                tx = e.begin();
            }
        }
    }
    // Leave the last transaction open at shutdown's door: dropping it rolls it back.
    drop(tx);
    check_committed(&e, &t, &m.committed)?;
    // The data is three times the pool: pages were evicted and read back.
    prop_assert!(
        status(&e, "Innodb_buffer_pool_evictions") > 0,
        "nothing was evicted"
    );
    prop_assert!(
        status(&e, "Innodb_buffer_pool_reads") > 100,
        "hardly any page was read"
    );
    ok("shutdown", e.shutdown())?;
    drop(t);
    drop(e);
    let e = ok("reopen", Engine::open(cfg))?;
    let t = ok("table after reopen", e.table("m", "t"))?;
    check_committed(&e, &t, &m.committed)?;
    ok("second shutdown", e.shutdown())?;
    Ok(())
}

/// A row written by an operation: mostly `kv_row`, but one in eleven carries a pad of 5–17
/// KB, which the engine keeps off the row (a long value), so long values are written,
/// replaced, moved with their row's key, deleted and rolled back under the same model.
fn op_row(id: i64, k: i64, v: i64) -> Row {
    let mut r = kv_row(id, k, v);
    if v.rem_euclid(11) == 3 {
        let byte = b'A' + ((id + v).rem_euclid(26)) as u8;
        r[2] = Value::Bytes(vec![byte; 5000 + (v.rem_euclid(5) as usize) * 3000]);
    }
    r
}

/// Preloaded rows: `k` rises with `id`, so an index scan over the preload walks leaves in
/// order; updates then scatter some rows.
fn initial_row(id: i64) -> Row {
    kv_row(id, id * K_SPACE / ID_SPACE, id)
}

fn make_template(dir: &Path) {
    let e = Engine::open(small_cfg(dir, 8 << 20)).expect("open template");
    e.create_database("m").expect("create database");
    e.create_table("m", kv_table("t")).expect("create table");
    let t = e.table("m", "t").expect("table");
    let mut tx = e.begin();
    for i in 0..PRELOADED {
        tx.insert(&t, initial_row(2 * i)).expect("preload insert");
    }
    tx.commit().expect("preload commit");
    e.shutdown().expect("template shutdown");
}

#[test]
fn random_operations_match_a_btreemap_model() {
    let template = tempfile::tempdir().expect("tempdir");
    make_template(template.path());
    let cases = std::env::var("TIERDB_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let mut runner = TestRunner::new(Config {
        cases,
        max_shrink_iters: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let started = std::time::Instant::now();
    let r = runner.run(&proptest::collection::vec(op_s(), 1..100), |ops| {
        run_case(template.path(), &ops)
    });
    eprintln!("{cases} cases in {:?}", started.elapsed());
    if let Err(e) = r {
        panic!("{e}");
    }
}
