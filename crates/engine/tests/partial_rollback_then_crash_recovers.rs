//! Crash recovery after a rollback to a savepoint (engine API; the statement savepoints the
//! SQL layer takes are these).
//!
//! A child process commits a base table, then runs one transaction: part 1 (updates moving
//! index keys, inserts, deletes), a savepoint, part 2 (thousands of inserts against a 1 MiB
//! pool, so dirty pages reach the data file; part-1 rows changed again; deletes), a rollback
//! to the savepoint, and part 3. Phase "open" leaves that transaction unfinished, phase
//! "committed" commits it. A second transaction then commits one row, making the redo log
//! durable past everything before it, and the child is killed with SIGKILL.
//!
//! After recovery: "open" shows exactly the base rows (plus the one committed row) — the undo
//! entries of the rolled-back part 2 are re-applied harmlessly — and "committed" shows parts 1
//! and 3 without part 2; the secondary index agrees with the rows in both.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::ops::Bound;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, EngineConfig, Row, Table, Txn};

mod common;
use common::{key, kv_row, kv_table, small_cfg, status};

const BASE_ROWS: i64 = 400;
const MARKER_ID: i64 = 900_000;

/// Every commit durable (the crash must not lose the marker commit).
fn cfg(dir: &Path) -> EngineConfig {
    let mut c = small_cfg(dir, 1 << 20);
    c.flush_log_at_trx_commit = 1;
    c
}

type Model = BTreeMap<i64, Row>;

fn base() -> Model {
    (0..BASE_ROWS)
        .map(|id| (id, kv_row(id, id % 13, 0)))
        .collect()
}

enum Op {
    Insert(Row),
    /// Primary key, new row (which may move the key).
    Update(i64, Row),
    Delete(i64),
}

fn apply(tx: &mut Txn, t: &Arc<Table>, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Insert(r) => {
                tx.insert(t, r.clone()).expect("insert");
            }
            Op::Update(id, r) => assert!(tx.update(t, &key(*id), r.clone()).expect("update")),
            Op::Delete(id) => assert!(tx.delete(t, &key(*id)).expect("delete")),
        }
    }
}

fn apply_to_model(m: &mut Model, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Insert(r) => {
                m.insert(r[0].as_i64().expect("id"), r.clone());
            }
            Op::Update(id, r) => {
                m.remove(id);
                m.insert(r[0].as_i64().expect("id"), r.clone());
            }
            Op::Delete(id) => {
                m.remove(id);
            }
        }
    }
}

/// Kept: index keys move, inserts, deletes.
fn part1() -> Vec<Op> {
    let mut ops = Vec::new();
    ops.extend((0..40).map(|id| Op::Update(id, kv_row(id, (id + 3) % 13, 1))));
    ops.extend((10_000..10_060).map(|id| Op::Insert(kv_row(id, id % 13, 1))));
    ops.extend((100..120).map(Op::Delete));
    ops
}

/// Rolled back to the savepoint: thousands of inserts, part-1 rows changed again, deletes
/// (of base and of part-1 rows) and a key move.
fn part2() -> Vec<Op> {
    let mut ops = Vec::new();
    ops.extend((20_000..25_000).map(|id| Op::Insert(kv_row(id, id % 13, 2))));
    ops.extend((0..20).map(|id| Op::Update(id, kv_row(id, (id + 7) % 13, 2))));
    ops.extend((200..260).map(|id| Op::Update(id, kv_row(id, (id + 5) % 13, 2))));
    ops.extend((260..300).map(Op::Delete));
    ops.extend((10_000..10_020).map(Op::Delete));
    ops.push(Op::Update(300, kv_row(30_300, 1, 2)));
    ops
}

/// After the partial rollback: rows part 2 had changed, and a key part 2 had inserted.
fn part3() -> Vec<Op> {
    let mut ops: Vec<Op> = [5, 210, 270]
        .into_iter()
        .map(|id| Op::Update(id, kv_row(id, 12, 3)))
        .collect();
    ops.push(Op::Insert(kv_row(20_000, 4, 3)));
    ops
}

fn say(line: &str) {
    let out = std::io::stdout();
    let mut o = out.lock();
    writeln!(o, "{line}").expect("stdout");
    o.flush().expect("stdout");
}

fn child(dir: &Path, phase: &str) {
    let e = Engine::open(cfg(dir)).expect("child open");
    e.create_database("r").expect("create database");
    e.create_table("r", kv_table("t")).expect("create table");
    let t = e.table("r", "t").expect("table");
    let mut tx = e.begin();
    for (_, r) in base() {
        tx.insert(&t, r).expect("base insert");
    }
    tx.commit().expect("base commit");
    let mut big = e.begin();
    apply(&mut big, &t, &part1());
    let sp = big.savepoint();
    apply(&mut big, &t, &part2());
    big.rollback_to_savepoint(sp)
        .expect("rollback to savepoint");
    apply(&mut big, &t, &part3());
    // Phase "open" keeps the transaction (never dropped: dropping would roll it back).
    let open = if phase == "open" {
        Some(big)
    } else {
        big.commit().expect("commit");
        None
    };
    // One more durable commit: the log is durable past every record before it.
    let mut marker = e.begin();
    marker
        .insert(&t, kv_row(MARKER_ID, 0, 0))
        .expect("marker insert");
    marker.commit().expect("marker commit");
    say("READY");
    std::thread::sleep(Duration::from_secs(120));
    std::mem::forget(open);
}

#[test]
fn partial_rollback_child() {
    if let (Ok(dir), Ok(phase)) = (
        std::env::var("PARTIAL_ROLLBACK_CHILD_DIR"),
        std::env::var("PARTIAL_ROLLBACK_PHASE"),
    ) {
        child(Path::new(&dir), &phase);
    }
}

fn run_child_and_kill(dir: &Path, phase: &str) {
    let exe = std::env::current_exe().expect("current exe");
    let mut c = Command::new(exe)
        .args([
            "--exact",
            "partial_rollback_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PARTIAL_ROLLBACK_CHILD_DIR", dir)
        .env("PARTIAL_ROLLBACK_PHASE", phase)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = c.stdout.take().expect("child stdout");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(line) if line.ends_with("READY") => break,
            Ok(_) => {}
            Err(_) => {
                let _ = c.kill();
                let _ = c.wait();
                panic!("the child did not get ready in phase {phase}");
            }
        }
    }
    c.kill().expect("kill");
    c.wait().expect("wait");
}

/// Reopens `dir` (recovery) and checks the rows, the index and the number of transactions
/// recovery rolled back.
fn verify(dir: &Path, want: &Model, rolled_back: u64) {
    let e = Engine::open(cfg(dir)).expect("recovery");
    assert_eq!(
        status(&e, "Tierdb_recovery_rolled_back_transactions"),
        rolled_back
    );
    let t = e.table("r", "t").expect("table");
    let mut tx = e.begin();
    let rows: Vec<Row> = tx
        .scan(&t, Bound::Unbounded, Bound::Unbounded)
        .expect("scan")
        .map(|r| r.expect("row"))
        .collect();
    let got: Model = rows
        .iter()
        .map(|r| (r[0].as_i64().expect("id"), r.clone()))
        .collect();
    let wrong: Vec<i64> = got
        .keys()
        .chain(want.keys())
        .filter(|id| got.get(id) != want.get(id))
        .copied()
        .collect();
    assert!(
        wrong.is_empty(),
        "{} rows differ after recovery (first {:?})",
        wrong.len(),
        wrong.first()
    );
    let mut by_k = rows;
    by_k.sort_by_key(|r| (r[1].as_i64(), r[0].as_i64()));
    let through_index: Vec<Row> = tx
        .index_scan(&t, 0, Bound::Unbounded, Bound::Unbounded)
        .expect("index scan")
        .map(|r| r.expect("row"))
        .collect();
    assert!(through_index == by_k, "the index disagrees with the rows");
    drop(tx);
    e.shutdown().expect("shutdown");
}

#[test]
fn rollback_to_savepoint_then_kill_recovers() {
    let marker = (MARKER_ID, kv_row(MARKER_ID, 0, 0));
    // Unfinished: everything of the big transaction is rolled back.
    let dir = tempfile::tempdir().expect("tempdir");
    run_child_and_kill(dir.path(), "open");
    let mut want = base();
    want.insert(marker.0, marker.1.clone());
    verify(dir.path(), &want, 1);
    // Committed: parts 1 and 3 survive, part 2 does not.
    let dir = tempfile::tempdir().expect("tempdir");
    run_child_and_kill(dir.path(), "committed");
    let mut want = base();
    apply_to_model(&mut want, &part1());
    apply_to_model(&mut want, &part3());
    want.insert(marker.0, marker.1);
    verify(dir.path(), &want, 0);
}
