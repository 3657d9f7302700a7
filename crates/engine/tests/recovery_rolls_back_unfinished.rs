//! Crash recovery rolls back a transaction that never finished.
//!
//! A child process commits a base table, then opens one big transaction — 12 000 inserts,
//! updates of every third base row (moving its index key), deletes of every seventh and a
//! few primary-key changes, about 3 MiB of rows against a 1 MiB pool, so many of its dirty
//! pages are evicted to the data file — while a second thread keeps committing small
//! transactions on other rows (reporting "ACK n"). Then the child either checkpoints, prints
//! READY and waits (phase "parked"), or is killed at a random moment in the middle of the
//! big transaction (phase "mid").
//!
//! After `kill -9` the parent reopens the engine and checks: none of the big transaction's
//! changes is visible, the base rows are intact, every acknowledged small transaction is
//! present and an unacknowledged one is all-or-nothing, the secondary index agrees with the
//! rows, `Tierdb_recovery_rolled_back_transactions` ≥ 1 (when the big transaction had
//! started), and after a clean shutdown every page verifies. Both phases run twice on the
//! same directory.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, EngineConfig, Row};

const BASE_ROWS: i64 = 2000;
const BIG_INSERTS: i64 = 12_000;
const BIG_FIRST_ID: i64 = 1_000_000;
/// Small transactions of cycle `c` use ids from `SMALL_FIRST_ID + c * 100_000`.
const SMALL_FIRST_ID: i64 = 10_000_000;
const SMALL_ROWS: i64 = 5;

fn cfg(dir: &Path) -> EngineConfig {
    let mut c = small_cfg(dir, 1 << 20);
    c.flush_log_at_trx_commit = 1;
    c
}

fn base_row(id: i64) -> Row {
    kv_row(id, id % 17, 1)
}

fn small_ids(cycle: i64, n: i64) -> std::ops::Range<i64> {
    let first = SMALL_FIRST_ID + cycle * 100_000 + n * SMALL_ROWS;
    first..first + SMALL_ROWS
}

fn say(line: &str) {
    let out = std::io::stdout();
    let mut o = out.lock();
    writeln!(o, "{line}").expect("stdout");
    o.flush().expect("stdout");
}

fn child(dir: &str, cycle: i64, phase: &str) {
    let e = Engine::open(cfg(Path::new(dir))).expect("child open");
    if !e.database_exists("r") {
        e.create_database("r").expect("create database");
        e.create_table("r", kv_table("t")).expect("create table");
        let t = e.table("r", "t").expect("table");
        for b in 0..BASE_ROWS / 500 {
            let mut tx = e.begin();
            for id in b * 500..(b + 1) * 500 {
                tx.insert(&t, base_row(id)).expect("base insert");
            }
            tx.commit().expect("base commit");
        }
    }
    let t = e.table("r", "t").expect("table");
    say("BASE");
    // Small committed transactions on other rows, concurrently with the big one.
    let stop = Arc::new(AtomicBool::new(false));
    let small = {
        let (e, t, stop) = (e.clone(), t.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let mut tx = e.begin();
                for id in small_ids(cycle, n) {
                    tx.insert(&t, kv_row(id, id % 17, n)).expect("small insert");
                }
                tx.commit().expect("small commit");
                say(&format!("ACK {n}"));
                n += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let flushed_before = status(&e, "Innodb_buffer_pool_pages_flushed");
    let mut big = e.begin();
    say("BIG");
    for i in 0..BIG_INSERTS {
        let id = BIG_FIRST_ID + i;
        big.insert(&t, kv_row(id, i % 17, 999)).expect("big insert");
        if i % 6 == 0 {
            let b = (i / 6) % BASE_ROWS;
            if b % 3 == 0 {
                assert!(big
                    .update(&t, &key(b), kv_row(b, (b + 5) % 17, 999))
                    .expect("big update"));
            } else if b % 7 == 0 {
                assert!(big.delete(&t, &key(b)).expect("big delete"));
            } else if b % 101 == 1 {
                assert!(big
                    .update(&t, &key(b), kv_row(b + 5_000_000, b % 17, 999))
                    .expect("big key move"));
            }
        }
    }
    if phase == "parked" {
        stop.store(true, Ordering::Relaxed);
        small.join().expect("small thread");
        e.checkpoint().expect("checkpoint");
        // Pages written to the data file while the big transaction was open.
        say(&format!(
            "FLUSHED {}",
            status(&e, "Innodb_buffer_pool_pages_flushed") - flushed_before
        ));
        say("READY");
        std::thread::sleep(Duration::from_secs(120));
    }
    // Phase "mid": the parent kills us before we get here; if not, keep the txn open.
    say("DONE");
    std::thread::sleep(Duration::from_secs(120));
    drop(big);
}

#[test]
fn recovery_child() {
    if let Ok(dir) = std::env::var("RECOVERY_CHILD_DIR") {
        let cycle = std::env::var("RECOVERY_CYCLE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let phase = std::env::var("RECOVERY_PHASE").unwrap_or_default();
        child(&dir, cycle, &phase);
    }
}

struct Seen {
    acked: Vec<i64>,
    big_started: bool,
    flushed: Option<u64>,
}

/// Runs one child and kills it: "parked" after READY, "mid" `mid_ms` after the big
/// transaction started.
fn run_child(dir: &Path, cycle: i64, phase: &str, mid_ms: u64) -> Seen {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "recovery_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("RECOVERY_CHILD_DIR", dir)
        .env("RECOVERY_CYCLE", cycle.to_string())
        .env("RECOVERY_PHASE", phase)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut seen = Seen {
        acked: Vec::new(),
        big_started: false,
        flushed: None,
    };
    let mut kill_at: Option<std::time::Instant> = None;
    loop {
        let wait = match kill_at {
            Some(t) => t.saturating_duration_since(std::time::Instant::now()),
            None => Duration::from_secs(60),
        };
        match rx.recv_timeout(wait) {
            Ok(line) => {
                // The harness prints "test recovery_child ... " before the first line.
                if let Some((_, n)) = line.split_once("ACK ") {
                    seen.acked.push(n.trim().parse().expect("ack"));
                } else if line.ends_with("BIG") {
                    seen.big_started = true;
                    if phase == "mid" {
                        kill_at = Some(std::time::Instant::now() + Duration::from_millis(mid_ms));
                    }
                } else if let Some((_, n)) = line.split_once("FLUSHED ") {
                    seen.flushed = Some(n.trim().parse().expect("flushed"));
                } else if line.ends_with("READY") || line.ends_with("DONE") {
                    break;
                }
            }
            Err(_) if kill_at.is_some() => break,
            Err(_) => {
                let _ = child.kill();
                panic!("the child stalled in phase {phase}");
            }
        }
    }
    child.kill().expect("kill");
    child.wait().expect("wait");
    // Acks printed between our last read and the kill still count.
    reader.join().expect("reader");
    for line in rx.try_iter() {
        if let Some((_, n)) = line.split_once("ACK ") {
            seen.acked.push(n.trim().parse().expect("ack"));
        }
    }
    seen
}

/// The rows recovery must produce: the base, every earlier cycle's small transactions
/// (`committed`), and this cycle's acknowledged ones; an unacknowledged small transaction
/// of this cycle may be present as a whole.
fn verify(dir: &Path, cycle: i64, seen: &Seen, committed: &mut BTreeMap<i64, Row>) {
    let e = Engine::open(cfg(dir)).expect("recovery");
    let rolled_back = status(&e, "Tierdb_recovery_rolled_back_transactions");
    if seen.big_started {
        assert!(
            rolled_back >= 1,
            "cycle {cycle}: no transaction was rolled back"
        );
    }
    let t = e.table("r", "t").expect("table");
    let mut tx = e.begin();
    let rows = scan_all(&mut tx, &t);
    let got: BTreeMap<i64, Row> = rows
        .iter()
        .map(|r| (r[0].as_i64().expect("id"), r.clone()))
        .collect();
    for &n in &seen.acked {
        for id in small_ids(cycle, n) {
            committed.insert(id, kv_row(id, id % 17, n));
        }
    }
    // One more small transaction may have committed without its ack being read.
    let next = seen.acked.iter().max().map_or(0, |m| m + 1);
    let extra: Vec<i64> = small_ids(cycle, next)
        .filter(|id| got.contains_key(id))
        .collect();
    assert!(
        extra.is_empty() || extra.len() as i64 == SMALL_ROWS,
        "cycle {cycle}: small transaction {next} is partly present"
    );
    if !extra.is_empty() {
        for id in small_ids(cycle, next) {
            committed.insert(id, kv_row(id, id % 17, next));
        }
    }
    let big: Vec<&i64> = got
        .keys()
        .filter(|&&id| (BIG_FIRST_ID..SMALL_FIRST_ID).contains(&id))
        .collect();
    assert!(
        big.is_empty(),
        "cycle {cycle}: rows of the unfinished transaction survived: {} (first {:?})",
        big.len(),
        big.first()
    );
    for (id, row) in &got {
        if *id < BASE_ROWS {
            assert_eq!(row, &base_row(*id), "cycle {cycle}: base row {id} changed");
        }
    }
    assert!(
        got == *committed,
        "cycle {cycle}: {} rows after recovery, expected {}",
        got.len(),
        committed.len()
    );
    // The secondary index agrees with the rows.
    let mut by_k: Vec<Row> = rows.clone();
    by_k.sort_by_key(|r| (r[1].as_i64(), r[0].as_i64()));
    assert!(
        index_scan_all(&mut tx, &t, 0) == by_k,
        "cycle {cycle}: the index disagrees with the rows"
    );
    drop(tx);
    eprintln!(
        "cycle {cycle}: {} small commits acked, pages flushed before the kill {:?}, \
         {rolled_back} transaction(s) rolled back, redo records replayed {}",
        seen.acked.len(),
        seen.flushed,
        status(&e, "Tierdb_recovery_redo_records")
    );
    e.shutdown().expect("shutdown");
    drop(e);
    verify_data_file(dir).unwrap_or_else(|err| panic!("cycle {cycle}: {err}"));
}

#[test]
fn unfinished_transaction_is_rolled_back_after_kill() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut committed: BTreeMap<i64, Row> = (0..BASE_ROWS).map(|id| (id, base_row(id))).collect();
    for (cycle, (phase, mid_ms)) in [("parked", 0), ("mid", 150), ("parked", 0), ("mid", 600)]
        .into_iter()
        .enumerate()
    {
        let cycle = cycle as i64;
        let seen = run_child(dir.path(), cycle, phase, mid_ms);
        if phase == "parked" {
            let flushed = seen.flushed.expect("the child reported no flush count");
            assert!(
                flushed > 0,
                "no dirty page of the big transaction reached the data file"
            );
        }
        verify(dir.path(), cycle, &seen, &mut committed);
    }
}
