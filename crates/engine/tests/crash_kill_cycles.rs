//! Crash test: a child process runs a write workload and reports every acknowledged commit;
//! the parent kills it with SIGKILL at a random moment, reopens the engine (redo + undo) and
//! checks: every acknowledged commit is present, no transaction is partly visible, every page
//! in the data file verifies, and the account sum is unchanged. Repeated many times on the
//! same data directory.

use std::io::{BufRead, BufReader, Write};
use std::ops::Bound;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tierdb_engine::{ColumnDef, ColumnType, Engine, EngineConfig, TableDef, Value};

const ROWS_PER_TXN: i64 = 6;
const ACCOUNTS: i64 = 200;
const START_BALANCE: i64 = 1000;
/// Rows of `doc`, each transaction rewriting one with a long value (kept off the row).
const DOCS: i64 = 8;

/// The long value transaction `n` writes into its `doc` row: 5–35 KB that name `n`.
fn doc_body(n: i64) -> Vec<u8> {
    let len = 5000 + (n * 131).rem_euclid(30_000) as usize;
    (0..len)
        .map(|i| b'a' + ((n as usize).wrapping_mul(31).wrapping_add(i / 1000) % 26) as u8)
        .collect()
}

fn cfg(dir: &std::path::Path) -> EngineConfig {
    let mut c = EngineConfig::under(dir);
    c.buffer_pool_size_bytes = 2 << 20; // 128 frames: plenty of eviction
    c
}

fn col(name: &str) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ColumnType::Int {
            bytes: 8,
            unsigned: false,
        },
        nullable: false,
        auto_increment: false,
        default: None,
        fill: None,
        collation: tierdb_engine::Collation::Binary,
        on_update_now: false,
    }
}

fn setup(e: &Engine) {
    if e.database_exists("crash") {
        return;
    }
    e.create_database("crash").unwrap();
    e.create_table(
        "crash",
        TableDef {
            name: "t".into(),
            columns: vec![col("id"), col("txn"), col("pad")],
            primary_key: vec![0],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .unwrap();
    e.create_table(
        "crash",
        TableDef {
            name: "acct".into(),
            columns: vec![col("id"), col("bal")],
            primary_key: vec![0],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .unwrap();
    let mut body = col("body");
    body.ty = ColumnType::Text(tierdb_engine::LobSize::Long);
    e.create_table(
        "crash",
        TableDef {
            name: "doc".into(),
            columns: vec![col("id"), col("n"), body],
            primary_key: vec![0],
            indexes: vec![],
            foreign_keys: Vec::new(),
            checks: Vec::new(),
        },
    )
    .unwrap();
    let a = e.table("crash", "acct").unwrap();
    let d = e.table("crash", "doc").unwrap();
    let mut t = e.begin();
    for i in 0..ACCOUNTS {
        t.insert(&a, vec![Value::Int(i), Value::Int(START_BALANCE)])
            .unwrap();
    }
    for i in 0..DOCS {
        t.insert(
            &d,
            vec![Value::Int(i), Value::Int(0), Value::Bytes(doc_body(0))],
        )
        .unwrap();
    }
    t.commit().unwrap();
}

/// The child: commits transactions forever, printing "ACK n" after each commit returns.
fn child(dir: &str) {
    let e = Engine::open(cfg(std::path::Path::new(dir))).unwrap();
    setup(&e);
    let t = e.table("crash", "t").unwrap();
    let a = e.table("crash", "acct").unwrap();
    let d = e.table("crash", "doc").unwrap();
    let mut n: i64 = std::env::var("CRASH_START").unwrap().parse().unwrap();
    let out = std::io::stdout();
    let mut seed = (n as u64).wrapping_mul(6364136223846793005).wrapping_add(1);
    let mut rnd = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as i64
    };
    {
        let mut o = out.lock();
        writeln!(o, "READY").unwrap();
        o.flush().unwrap();
    }
    loop {
        n += 1;
        let mut tx = e.begin();
        for j in 0..ROWS_PER_TXN {
            // Spread keys so that leaves split all over the tree.
            let id =
                ((n * ROWS_PER_TXN + j) * 7919) % 10_000_000 + (n * ROWS_PER_TXN + j) * 10_000_000;
            tx.insert(&t, vec![Value::Int(id), Value::Int(n), Value::Int(rnd())])
                .unwrap();
        }
        // A transfer keeps the sum of balances constant.
        let (x, y) = (rnd() % ACCOUNTS, rnd() % ACCOUNTS);
        if x != y {
            let bx = tx.get(&a, &[Value::Int(x)]).unwrap().unwrap()[1]
                .as_i64()
                .unwrap();
            let by = tx.get(&a, &[Value::Int(y)]).unwrap().unwrap()[1]
                .as_i64()
                .unwrap();
            tx.update(
                &a,
                &[Value::Int(x)],
                vec![Value::Int(x), Value::Int(bx - 7)],
            )
            .unwrap();
            tx.update(
                &a,
                &[Value::Int(y)],
                vec![Value::Int(y), Value::Int(by + 7)],
            )
            .unwrap();
        }
        // Each transaction also replaces one document's long value.
        let slot = n.rem_euclid(DOCS);
        tx.update(
            &d,
            &[Value::Int(slot)],
            vec![Value::Int(slot), Value::Int(n), Value::Bytes(doc_body(n))],
        )
        .unwrap();
        // Some transactions roll back, some delete an earlier transaction's rows.
        if rnd() % 10 == 0 {
            tx.rollback().unwrap();
            continue;
        }
        tx.commit().unwrap();
        let mut o = out.lock();
        writeln!(o, "ACK {n}").unwrap();
        o.flush().unwrap();
    }
}

#[test]
fn crash_child() {
    if let Ok(dir) = std::env::var("CRASH_CHILD_DIR") {
        child(&dir);
    }
}

fn verify(dir: &std::path::Path, acked: &[i64]) -> i64 {
    let e = Engine::open(cfg(dir)).unwrap();
    let t = e.table("crash", "t").unwrap();
    let a = e.table("crash", "acct").unwrap();
    let mut tx = e.begin();
    let mut per_txn = std::collections::BTreeMap::<i64, i64>::new();
    for r in tx.scan(&t, Bound::Unbounded, Bound::Unbounded).unwrap() {
        let r = r.unwrap();
        *per_txn.entry(r[1].as_i64().unwrap()).or_default() += 1;
    }
    for (n, c) in &per_txn {
        assert_eq!(
            *c, ROWS_PER_TXN,
            "transaction {n} is partly visible ({c} rows)"
        );
    }
    for n in acked {
        assert!(
            per_txn.contains_key(n),
            "acknowledged transaction {n} is missing"
        );
    }
    let sum: i64 = tx
        .scan(&a, Bound::Unbounded, Bound::Unbounded)
        .unwrap()
        .map(|r| r.unwrap()[1].as_i64().unwrap())
        .sum();
    assert_eq!(sum, ACCOUNTS * START_BALANCE, "transfers were not atomic");
    for i in (0..ACCOUNTS).step_by(13) {
        assert!(tx.get(&a, &[Value::Int(i)]).unwrap().is_some());
    }
    // Each document holds the whole long value of a visible transaction, at least the last
    // acknowledged one that wrote it.
    let d = e.table("crash", "doc").unwrap();
    let docs: Vec<_> = tx
        .scan(&d, Bound::Unbounded, Bound::Unbounded)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(docs.len(), DOCS as usize);
    for r in docs {
        let (slot, n) = (r[0].as_i64().unwrap(), r[1].as_i64().unwrap());
        assert!(
            r[2] == Value::Bytes(doc_body(n)),
            "document {slot}: not the long value of transaction {n}"
        );
        assert!(
            n == 0 || per_txn.contains_key(&n),
            "document {slot}: transaction {n} is not visible"
        );
        if let Some(last) = acked.iter().filter(|m| m.rem_euclid(DOCS) == slot).max() {
            assert!(
                n >= *last,
                "document {slot}: acknowledged transaction {last} lost"
            );
        }
    }
    drop(tx);
    e.shutdown().unwrap();
    drop(e);
    // Every page in the data file verifies after a clean shutdown.
    let pages = tierdb_engine::pagemap::read_mapped_pages(&dir.join("data")).unwrap();
    for (id, p) in &pages {
        tierdb_page::verify(p, *id).unwrap_or_else(|e| panic!("page {id}: {e}"));
    }
    per_txn.keys().next_back().copied().unwrap_or(0)
}

#[test]
fn killed_at_random_moments_loses_no_acknowledged_commit() {
    let cycles: usize = std::env::var("TIERDB_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut next = 0i64;
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut total_acked = 0usize;
    let started = Instant::now();
    for cycle in 0..cycles {
        let mut child = Command::new(&exe)
            .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
            .env("CRASH_CHILD_DIR", dir.path())
            .env("CRASH_START", next.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let run_ms = 20 + rng % 400;
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("ACK ") {
                    let _ = tx.send(n.parse::<i64>().unwrap());
                } else if line.ends_with("READY") {
                    let _ = tx.send(-1);
                }
            }
        });
        // Wait for the child to be up, then let it run for a random time.
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("child did not start");
        assert_eq!(first, -1);
        std::thread::sleep(Duration::from_millis(run_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        reader.join().unwrap();
        let acked: Vec<i64> = rx.try_iter().filter(|&n| n >= 0).collect();
        total_acked += acked.len();
        next = next.max(verify(dir.path(), &acked));
        let _ = cycle;
    }
    eprintln!(
        "{cycles} kill cycles, {total_acked} acknowledged commits checked, {:?}",
        started.elapsed()
    );
    assert!(total_acked > cycles, "the workload hardly ran");
}
