//! Concurrency: many threads move money between a few rows in explicit transactions.
//!
//! `transfers_keep_the_sum`: 24 threads, 64 accounts `(id, bal, tag)` with a secondary index
//! on `bal`. A transfer locks both rows in random order by writing a poison balance to each
//! (so opposite orders deadlock), learns each row's last committed balance from a separate
//! transaction (which sees the before-image of the locked row), writes the final balances
//! tagged with the transfer's id, and commits — or, one time in eight, rolls back with an
//! "aborted" tag on the rows. Deadlock and lock wait timeout: roll back and retry.
//!
//! Checked while it runs: a reader thread doing point gets, full scans and index scans never
//! sees a poison balance or an aborted tag (uncommitted and rolled-back versions are never
//! visible). Every 200 ms a checker pauses new transfers (a gate the transfers hold shared),
//! and then a full scan and a full index scan must show every account exactly once and the
//! exact initial sum. At the end: the sum, the index, and that deadlocks really happened.
//!
//! `read_then_update_loses_no_increment`: the read-modify-write the SQL layer does for
//! `UPDATE t SET v = v + 1` (a plain `get`, then `update` with the computed row) must not
//! lose increments made concurrently by other transactions.

mod common;

use common::*;
use parking_lot::RwLock;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tierdb_engine::{Engine, Error, IndexDef, Row, Table, TableDef, Value};

const ACCOUNTS: i64 = 64;
const THREADS: usize = 24;
const START_BALANCE: i64 = 10_000;
const RUN: Duration = Duration::from_secs(4);
/// A balance no committed row ever has (balances stay far above it).
const POISON: i64 = -1_000_000_000;
/// Set in the tag of rows a transfer writes right before it rolls back.
const ABORTED: i64 = 1 << 40;

fn accounts_table() -> TableDef {
    TableDef {
        name: "acct".into(),
        columns: vec![int_col("id"), int_col("bal"), int_col("tag")],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "bal_idx".into(),
            columns: vec![1],
            unique: false,
        }],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

fn acct(id: i64, bal: i64, tag: i64) -> Row {
    vec![Value::Int(id), Value::Int(bal), Value::Int(tag)]
}

/// Panics when a row shows a version that was never committed.
fn check_row(r: &Row, seen_by: &str) {
    let bal = r[1].as_i64().expect("bal");
    let tag = r[2].as_i64().expect("tag");
    assert!(
        bal != POISON,
        "{seen_by} saw an uncommitted (poison) balance: {r:?}"
    );
    assert!(
        tag & ABORTED == 0,
        "{seen_by} saw a rolled-back version: {r:?}"
    );
}

fn retryable(e: &Error) -> bool {
    matches!(e, Error::Deadlock | Error::LockWaitTimeout)
}

/// One transfer attempt. `Ok(true)`: committed, `Ok(false)`: rolled back on purpose.
fn transfer(e: &Engine, t: &Arc<Table>, rng: &mut Rng, tag: i64) -> tierdb_engine::Result<bool> {
    let a = rng.below(ACCOUNTS as u64) as i64;
    let mut b = rng.below(ACCOUNTS as u64 - 1) as i64;
    if b >= a {
        b += 1;
    }
    let mut tx = e.begin();
    // Lock both rows by writing poison: the order is random, so cycles form.
    assert!(tx.update(t, &key(a), acct(a, POISON, tag))?);
    if rng.below(2) == 0 {
        std::thread::yield_now();
    }
    assert!(tx.update(t, &key(b), acct(b, POISON, tag))?);
    // Another transaction reads the last committed versions (our before-images); nobody can
    // commit a newer one while we hold the locks.
    let mut r = e.begin();
    let committed = |id: i64, r: &mut tierdb_engine::Txn| -> tierdb_engine::Result<i64> {
        let row = r.get(t, &key(id))?.expect("account row vanished");
        check_row(&row, "a transfer's committed read");
        Ok(row[1].as_i64().expect("bal"))
    };
    let (va, vb) = (committed(a, &mut r)?, committed(b, &mut r)?);
    drop(r);
    // Our own reads see our own (poison) writes.
    assert_eq!(tx.get(t, &key(a))?.expect("own row")[1], Value::Int(POISON));
    let amount = 1 + rng.below(50) as i64;
    let abort = rng.below(8) == 0;
    let tag = if abort { tag | ABORTED } else { tag };
    assert!(tx.update(t, &key(a), acct(a, va - amount, tag))?);
    assert!(tx.update(t, &key(b), acct(b, vb + amount, tag))?);
    if abort {
        tx.rollback()?;
        Ok(false)
    } else {
        tx.commit()?;
        Ok(true)
    }
}

/// Full scan and index scan when no transfer is in flight: every account once, exact sum.
fn check_quiet(e: &Engine, t: &Arc<Table>) {
    let mut r = e.begin();
    let rows = scan_all(&mut r, t);
    assert_eq!(
        rows.len() as i64,
        ACCOUNTS,
        "accounts missing from a full scan"
    );
    let sum: i64 = rows.iter().map(|r| r[1].as_i64().expect("bal")).sum();
    assert_eq!(sum, ACCOUNTS * START_BALANCE, "the sum changed (scan)");
    let by_bal = index_scan_all(&mut r, t, 0);
    let mut ids: Vec<i64> = by_bal.iter().map(|r| r[0].as_i64().expect("id")).collect();
    let bals: Vec<i64> = by_bal.iter().map(|r| r[1].as_i64().expect("bal")).collect();
    assert!(
        bals.windows(2).all(|w| w[0] <= w[1]),
        "index scan out of order"
    );
    ids.sort();
    assert_eq!(
        ids,
        (0..ACCOUNTS).collect::<Vec<_>>(),
        "index scan lost or repeated rows"
    );
    assert_eq!(
        bals.iter().sum::<i64>(),
        ACCOUNTS * START_BALANCE,
        "the sum changed (index)"
    );
}

#[test]
fn transfers_keep_the_sum() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.lock_wait_timeout = Duration::from_secs(2);
    let e = Engine::open(cfg.clone()).expect("open");
    e.create_database("bank").expect("create database");
    e.create_table("bank", accounts_table())
        .expect("create table");
    let t = e.table("bank", "acct").expect("table");
    let mut tx = e.begin();
    for id in 0..ACCOUNTS {
        tx.insert(&t, acct(id, START_BALANCE, 0)).expect("insert");
    }
    tx.commit().expect("commit");

    let gate = Arc::new(RwLock::new(()));
    let stop = Arc::new(AtomicBool::new(false));
    let committed = Arc::new(AtomicU64::new(0));
    let aborted = Arc::new(AtomicU64::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let mut handles = Vec::new();
    for th in 0..THREADS {
        let (e, t, gate, stop) = (e.clone(), t.clone(), gate.clone(), stop.clone());
        let (committed, aborted, retries) = (committed.clone(), aborted.clone(), retries.clone());
        handles.push(std::thread::spawn(move || {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((th as u64 + 1) * 0x1234_5678_9abc));
            let mut seq = 0i64;
            while !stop.load(Ordering::Relaxed) {
                seq += 1;
                let tag = ((th as i64) << 24) | seq;
                let _g = gate.read();
                loop {
                    match transfer(&e, &t, &mut rng, tag) {
                        Ok(true) => {
                            committed.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        Ok(false) => {
                            aborted.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                        Err(err) if retryable(&err) => {
                            retries.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(err) => panic!("transfer failed: {err}"),
                    }
                }
            }
        }));
    }
    // Reader: never a poison balance nor a rolled-back tag, whatever it reads.
    let reader = {
        let (e, t, stop) = (e.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut rng = Rng(7);
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut r = e.begin();
                for _ in 0..20 {
                    let id = rng.below(ACCOUNTS as u64) as i64;
                    let row = r.get(&t, &key(id)).expect("get").expect("account row");
                    check_row(&row, "a point get");
                    reads += 1;
                }
                for row in scan_all(&mut r, &t) {
                    check_row(&row, "a scan");
                    reads += 1;
                }
                let lo = rng.below(2 * START_BALANCE as u64) as i64;
                for row in collect(
                    r.index_scan(&t, 0, incl(lo), Bound::Unbounded)
                        .expect("index scan"),
                ) {
                    check_row(&row, "an index scan");
                    assert!(row[1].as_i64().expect("bal") >= lo, "index bound ignored");
                    reads += 1;
                }
            }
            reads
        })
    };
    let started = Instant::now();
    let mut quiet_checks = 0;
    while started.elapsed() < RUN {
        std::thread::sleep(Duration::from_millis(200));
        let _g = gate.write();
        check_quiet(&e, &t);
        quiet_checks += 1;
    }
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("transfer thread panicked");
    }
    let reads = reader.join().expect("reader panicked");
    check_quiet(&e, &t);
    let deadlocks = status(&e, "Innodb_deadlocks");
    let (c, a, rt) = (
        committed.load(Ordering::Relaxed),
        aborted.load(Ordering::Relaxed),
        retries.load(Ordering::Relaxed),
    );
    eprintln!(
        "{c} transfers committed, {a} rolled back, {rt} retries, {deadlocks} deadlocks, \
         {} lock waits, {reads} rows read concurrently, {quiet_checks} paused checks",
        status(&e, "Innodb_row_lock_waits")
    );
    assert!(c > 100, "too few transfers committed: {c}");
    assert!(a > 0, "no transfer rolled back");
    assert!(deadlocks > 0, "no deadlock was detected");
    assert!(rt >= deadlocks.min(1), "deadlocks were not retried");
    assert!(reads > 1000, "the reader hardly ran");
    assert_eq!(status(&e, "Tierdb_active_write_transactions"), 0);
    // Durable too: reopen and check again.
    e.shutdown().expect("shutdown");
    drop((e, t));
    let e = Engine::open(cfg).expect("reopen");
    let t = e.table("bank", "acct").expect("table");
    check_quiet(&e, &t);
}

#[test]
fn read_then_update_loses_no_increment() {
    const COUNTERS: i64 = 4;
    const WORKERS: usize = 8;
    const PER_WORKER: u64 = 300;
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(small_cfg(dir.path(), 4 << 20)).expect("open");
    e.create_database("c").expect("create database");
    let mut def = accounts_table();
    def.indexes.clear();
    e.create_table("c", def).expect("create table");
    let t = e.table("c", "acct").expect("table");
    let mut tx = e.begin();
    for id in 0..COUNTERS {
        tx.insert(&t, acct(id, 0, 0)).expect("insert");
    }
    tx.commit().expect("commit");
    let done = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (e, t, done) = (e.clone(), t.clone(), done.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(w as u64 * 7919 + 13);
                let mut n = 0;
                while n < PER_WORKER {
                    let id = rng.below(COUNTERS as u64) as i64;
                    let mut tx = e.begin();
                    // What `UPDATE acct SET bal = bal + 1 WHERE id = ?` does in the SQL layer:
                    // a locking read, then the update.
                    let r = tx
                        .lock_row(&t, &key(id))
                        .and_then(|row| {
                            let row = row.expect("counter row");
                            let v = row[1].as_i64().expect("bal");
                            tx.update(&t, &key(id), acct(id, v + 1, 0))
                        })
                        .and_then(|_| tx.commit());
                    match r {
                        Ok(()) => n += 1,
                        Err(err) if retryable(&err) => {}
                        Err(err) => panic!("increment failed: {err}"),
                    }
                }
                done.fetch_add(n, Ordering::Relaxed);
            })
        })
        .collect();
    for h in handles {
        h.join().expect("worker panicked");
    }
    let mut r = e.begin();
    let total: i64 = scan_all(&mut r, &t)
        .iter()
        .map(|r| r[1].as_i64().expect("bal"))
        .sum();
    assert_eq!(
        total as u64,
        done.load(Ordering::Relaxed),
        "committed increments were lost (a plain read does not see the row lock holder's \
         pending change, and update writes the stale row)"
    );
}
