//! Engine benchmark program (not a test): throughput of the storage engine alone, without
//! SQL or the wire protocol.
//!
//! ```text
//! cargo run --release -p tierdb-engine --example engine_bench -- [--threads N] [--seconds S]
//!     [--big-data-mib M] [--big-pool-mib P] [--io-threads T] [--dir PATH]
//! ```
//!
//! Phases (each measured for S seconds per thread count):
//! (a) point gets by random primary key on a DRAM-resident table (100 000 rows of ~190 bytes,
//!     sysbench-like `id, k, c CHAR(120), pad CHAR(60)`), 1 and N threads;
//! (b) autocommit single-row inserts with `flush_log_at_trx_commit` = 1 (fsync per commit,
//!     group-committed) and = 0 (background fsync), 1 and N threads;
//! (c) point gets on a table of about M MiB (default 160) behind a P MiB pool (default 16),
//!     the data file on the in-process emulated cloud disk (1000 read IOPS, 1 ms latency),
//!     1 and T threads (default 64), with a per-second table of QPS, buffer pool hit ratio
//!     and data-device reads.
//!
//! Prints the machine (nproc, CPU model, memory, kernel), the exact command and a summary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tierdb_engine::{
    ColumnDef, ColumnType, DeviceWrapper, Engine, EngineConfig, Row, Table, TableDef,
    ThrottleConfig, Value,
};
use tierdb_io::Device;

struct Args {
    threads: usize,
    seconds: f64,
    big_data_mib: u64,
    big_pool_mib: u64,
    io_threads: usize,
    dir: Option<PathBuf>,
}

fn usage() -> ! {
    eprintln!(
        "usage: engine_bench [--threads N] [--seconds S] [--big-data-mib M] [--big-pool-mib P] \
         [--io-threads T] [--dir PATH]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut a = Args {
        threads: nproc,
        seconds: 5.0,
        big_data_mib: 160,
        big_pool_mib: 16,
        io_threads: 64,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--threads" => a.threads = val().parse().unwrap_or_else(|_| usage()),
            "--seconds" => a.seconds = val().parse().unwrap_or_else(|_| usage()),
            "--big-data-mib" => a.big_data_mib = val().parse().unwrap_or_else(|_| usage()),
            "--big-pool-mib" => a.big_pool_mib = val().parse().unwrap_or_else(|_| usage()),
            "--io-threads" => a.io_threads = val().parse().unwrap_or_else(|_| usage()),
            "--dir" => a.dir = Some(PathBuf::from(val())),
            "-h" | "--help" => usage(),
            _ => usage(),
        }
    }
    if a.threads == 0 || a.io_threads == 0 || a.seconds <= 0.0 {
        usage();
    }
    a
}

// ---- machine facts ----

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn mem_total_gib() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / (1024.0 * 1024.0))
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

// ---- table and rows ----

fn col(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable: false,
        auto_increment: false,
        default: None,
        fill: None,
        collation: tierdb_engine::Collation::Binary,
        on_update_now: false,
    }
}

fn sbtest(name: &str) -> TableDef {
    let int = ColumnType::Int {
        bytes: 4,
        unsigned: false,
    };
    TableDef {
        name: name.into(),
        columns: vec![
            col("id", int.clone()),
            col("k", int),
            col("c", ColumnType::Char(120)),
            col("pad", ColumnType::Char(60)),
        ],
        primary_key: vec![0],
        indexes: vec![],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

/// A sysbench-like row: about 190 bytes of values (8 + 8 + 120 + 60) plus the row header.
fn row(id: i64) -> Row {
    let mut c = Vec::with_capacity(120);
    let mut x = id as u64 ^ 0x5851_f42d_4c95_7f2d;
    while c.len() < 120 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        c.push(b'0' + ((x >> 59) % 10) as u8);
        if c.len() % 12 == 11 && c.len() < 119 {
            c.push(b'-');
        }
    }
    let pad: Vec<u8> = c[..60].to_vec();
    vec![
        Value::Int(id),
        Value::Int(id.wrapping_mul(7) % 100_000),
        Value::Bytes(c),
        Value::Bytes(pad),
    ]
}

/// One benchmark operation: (thread number, the thread's random numbers).
type Op = Arc<dyn Fn(usize, &mut Rng) + Send + Sync>;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

// ---- counting wrapper for the data device ----

/// Counts reads reaching the data device (outside the throttle).
struct CountReads {
    inner: Arc<dyn Device>,
    reads: Arc<AtomicU64>,
}

impl Device for CountReads {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
}

fn counting_wrapper(reads: Arc<AtomicU64>) -> DeviceWrapper {
    DeviceWrapper(Arc::new(move |dev: Arc<dyn Device>| {
        Arc::new(CountReads {
            inner: dev,
            reads: reads.clone(),
        }) as Arc<dyn Device>
    }))
}

// ---- status ----

fn status(e: &Engine, name: &str) -> u64 {
    e.status()
        .into_iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

#[derive(Clone, Copy)]
struct Snap {
    at: Instant,
    ops: u64,
    requests: u64,
    misses: u64,
    dev_reads: u64,
    fsyncs: u64,
    commits: u64,
}

fn snap(e: &Engine, ops: u64, dev_reads: &AtomicU64) -> Snap {
    Snap {
        at: Instant::now(),
        ops,
        requests: status(e, "Innodb_buffer_pool_read_requests"),
        misses: status(e, "Innodb_buffer_pool_reads"),
        dev_reads: dev_reads.load(Ordering::Relaxed),
        fsyncs: status(e, "Innodb_os_log_fsyncs"),
        commits: status(e, "Tierdb_commits"),
    }
}

/// Deltas between two snapshots.
struct Window {
    secs: f64,
    ops: u64,
    requests: u64,
    misses: u64,
    dev_reads: u64,
    fsyncs: u64,
    commits: u64,
}

impl Window {
    fn between(a: &Snap, b: &Snap) -> Window {
        Window {
            secs: (b.at - a.at).as_secs_f64(),
            ops: b.ops - a.ops,
            requests: b.requests - a.requests,
            misses: b.misses - a.misses,
            dev_reads: b.dev_reads - a.dev_reads,
            fsyncs: b.fsyncs - a.fsyncs,
            commits: b.commits - a.commits,
        }
    }
    fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.secs
    }
    fn hit_pct(&self) -> f64 {
        if self.requests == 0 {
            return 100.0;
        }
        100.0 * (1.0 - self.misses as f64 / self.requests as f64)
    }
    fn dev_reads_per_s(&self) -> f64 {
        self.dev_reads as f64 / self.secs
    }
}

/// A per-thread operation counter on its own cache line: only its thread writes it.
#[repr(align(128))]
#[derive(Default)]
struct Slot(AtomicU64);

fn total(slots: &[Slot]) -> u64 {
    slots.iter().map(|s| s.0.load(Ordering::Relaxed)).sum()
}

/// Runs `op` on `threads` threads for `dur`; returns the whole-run window. With
/// `per_second`, prints one line of counters per second.
fn timed(
    e: &Arc<Engine>,
    threads: usize,
    dur: Duration,
    dev_reads: &AtomicU64,
    per_second: bool,
    op: Op,
) -> Window {
    let stop = Arc::new(AtomicBool::new(false));
    let slots: Arc<Vec<Slot>> = Arc::new((0..threads).map(|_| Slot::default()).collect());
    let start = snap(e, 0, dev_reads);
    let handles: Vec<_> = (0..threads)
        .map(|th| {
            let (stop, slots, op) = (stop.clone(), slots.clone(), op.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(0x2545_f491_4f6c_dd1d ^ ((th as u64 + 1) << 17));
                let mut done = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    op(th, &mut rng);
                    done += 1;
                    slots[th].0.store(done, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut last = start;
    let end = start.at + dur;
    let mut second = 0;
    while Instant::now() < end {
        let next = (last.at + Duration::from_secs(1)).min(end);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        let now = snap(e, total(&slots), dev_reads);
        if per_second {
            second += 1;
            let w = Window::between(&last, &now);
            println!(
                "    {:>4}  {:>10.0}  {:>7.1} %  {:>9.0}",
                second,
                w.ops_per_s(),
                w.hit_pct(),
                w.dev_reads_per_s()
            );
        }
        last = now;
    }
    // The window ends here; operations still in flight are not counted.
    let fin = snap(e, total(&slots), dev_reads);
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        h.join().expect("benchmark thread panicked");
    }
    Window::between(&start, &fin)
}

/// Loads rows `0..n` in ascending order, in transactions of 5 000 rows.
fn load(e: &Engine, t: &std::sync::Arc<Table>, n: i64) -> f64 {
    let started = Instant::now();
    let mut id = 0;
    while id < n {
        let mut tx = e.begin();
        let end = (id + 5000).min(n);
        while id < end {
            tx.insert(t, row(id)).expect("load insert");
            id += 1;
        }
        tx.commit().expect("load commit");
    }
    n as f64 / started.elapsed().as_secs_f64()
}

struct Line {
    phase: String,
    threads: usize,
    ops_per_s: f64,
    notes: String,
}

fn engine_cfg(dir: &Path, pool_bytes: u64, flush: u8) -> EngineConfig {
    let mut c = EngineConfig::under(dir);
    c.buffer_pool_size_bytes = pool_bytes;
    c.flush_log_at_trx_commit = flush;
    c
}

fn main() {
    let args = parse_args();
    let dur = Duration::from_secs_f64(args.seconds);
    let tmp;
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("tierdb-engine-bench-")
                .tempdir()
                .expect("tempdir");
            tmp.path().to_path_buf()
        }
    };
    let nproc = std::thread::available_parallelism().map_or(1, |n| n.get());
    let command: Vec<String> = std::env::args().collect();
    println!("# tierdb engine benchmark");
    println!(
        "machine: nproc {nproc}, CPU \"{}\", {:.1} GiB RAM, Linux {}",
        cpu_model(),
        mem_total_gib(),
        kernel()
    );
    println!("load average at start (1/5/15 min): {}", load_average());
    println!("commit:  {}", git_commit());
    println!("command: {}", command.join(" "));
    println!("data:    {}", root.display());
    println!();
    let _ = std::io::stdout().flush();
    let mut lines: Vec<Line> = Vec::new();
    let none = AtomicU64::new(0);

    // (a) DRAM-resident point gets.
    const SMALL_ROWS: i64 = 100_000;
    let dir_a = root.join("a");
    let e = Engine::open(engine_cfg(&dir_a, 256 << 20, 0)).expect("open (a)");
    e.create_database("bench").expect("create database");
    e.create_table("bench", sbtest("sbtest1"))
        .expect("create table");
    let t = e.table("bench", "sbtest1").expect("table");
    let rate = load(&e, &t, SMALL_ROWS);
    println!("(a) loaded {SMALL_ROWS} rows: {rate:.0} rows/s (one thread, 5 000-row transactions)");
    let get_op = |e: &Arc<Engine>, t: &Arc<Table>, rows: i64| -> Op {
        let (e, t) = (e.clone(), t.clone());
        Arc::new(move |_, rng: &mut Rng| {
            let id = (rng.next() % rows as u64) as i64;
            let mut tx = e.begin();
            let r = tx.get(&t, &[Value::Int(id)]).expect("get");
            assert!(r.is_some(), "row {id} missing");
        })
    };
    // A short warm-up touches every page once.
    timed(
        &e,
        args.threads,
        Duration::from_millis(500),
        &none,
        false,
        get_op(&e, &t, SMALL_ROWS),
    );
    for th in [1, args.threads] {
        let w = timed(&e, th, dur, &none, false, get_op(&e, &t, SMALL_ROWS));
        println!(
            "(a) point get, DRAM-resident, {th} thread(s): {:.0} ops/s, hit {:.2} %",
            w.ops_per_s(),
            w.hit_pct()
        );
        lines.push(Line {
            phase: "point get, 100k rows in DRAM".into(),
            threads: th,
            ops_per_s: w.ops_per_s(),
            notes: format!("hit ratio {:.2} %", w.hit_pct()),
        });
    }

    // (b) autocommit inserts into a second table, flush policy 1 then 0.
    e.create_table("bench", sbtest("ins"))
        .expect("create table");
    let ti = e.table("bench", "ins").expect("table");
    let next_ids: Arc<Vec<AtomicU64>> = Arc::new(
        (0..args.threads.max(1))
            .map(|_| AtomicU64::new(0))
            .collect(),
    );
    for flush in [1u8, 0] {
        e.set_variable("innodb_flush_log_at_trx_commit", &Value::Int(flush as i64))
            .expect("set flush policy");
        for th in [1, args.threads] {
            let (e2, t2, ids) = (e.clone(), ti.clone(), next_ids.clone());
            let op: Op = Arc::new(move |thread, _| {
                let n = ids[thread].fetch_add(1, Ordering::Relaxed) as i64;
                let id = thread as i64 * 1_000_000_000 + n;
                let mut tx = e2.begin();
                tx.insert(&t2, row(id)).expect("insert");
                tx.commit().expect("commit");
            });
            let w = timed(&e, th, dur, &none, false, op);
            let per_commit = if w.commits > 0 {
                w.fsyncs as f64 / w.commits as f64
            } else {
                0.0
            };
            println!(
                "(b) autocommit insert, flush_log_at_trx_commit={flush}, {th} thread(s): {:.0} ops/s, {:.3} log fsyncs per commit",
                w.ops_per_s(),
                per_commit
            );
            lines.push(Line {
                phase: format!("autocommit insert, flush_log_at_trx_commit={flush}"),
                threads: th,
                ops_per_s: w.ops_per_s(),
                notes: format!(
                    "{:.3} log fsyncs/commit, {:.0} fsyncs/s",
                    per_commit,
                    w.fsyncs as f64 / w.secs
                ),
            });
        }
    }
    e.shutdown().expect("shutdown (a)");
    drop((t, ti, e));

    // (c) data ≈ 10× the pool on the emulated cloud disk.
    let dir_c = root.join("c");
    let big_rows = (args.big_data_mib << 20) as i64 / 190;
    {
        let e = Engine::open(engine_cfg(&dir_c, 512 << 20, 0)).expect("open (c) load");
        e.create_database("bench").expect("create database");
        e.create_table("bench", sbtest("sbtest1"))
            .expect("create table");
        let t = e.table("bench", "sbtest1").expect("table");
        let rate = load(&e, &t, big_rows);
        e.shutdown().expect("shutdown after load");
        let bytes = std::fs::metadata(dir_c.join("data").join("tierdb.dat")).map_or(0, |m| m.len());
        println!(
            "(c) loaded {big_rows} rows ({:.0} MiB data file) at {rate:.0} rows/s, unthrottled",
            bytes as f64 / (1 << 20) as f64
        );
    }
    let throttle = ThrottleConfig {
        read_iops: 1000,
        write_iops: 1000,
        latency_us: 1000,
        ..ThrottleConfig::default()
    };
    let dev_reads = Arc::new(AtomicU64::new(0));
    let mut cfg = engine_cfg(&dir_c, args.big_pool_mib << 20, 1);
    cfg.data_throttle = Some(throttle);
    cfg.data_device_wrapper = Some(counting_wrapper(dev_reads.clone()));
    let e = Engine::open(cfg).expect("open (c)");
    let t = e.table("bench", "sbtest1").expect("table");
    println!(
        "(c) pool {} MiB, data device throttled to {} read IOPS, {} µs latency",
        args.big_pool_mib, throttle.read_iops, throttle.latency_us
    );
    let warm = Duration::from_secs_f64((args.seconds / 2.0).max(1.0));
    println!(
        "    warm-up {:.1} s at {} threads",
        warm.as_secs_f64(),
        args.io_threads
    );
    timed(
        &e,
        args.io_threads,
        warm,
        &dev_reads,
        false,
        get_op(&e, &t, big_rows),
    );
    for th in [1, args.io_threads] {
        println!("    point get, {th} thread(s), per second:");
        println!(
            "    {:>4}  {:>10}  {:>9}  {:>9}",
            "s", "ops/s", "hit", "reads/s"
        );
        let w = timed(&e, th, dur, &dev_reads, true, get_op(&e, &t, big_rows));
        println!(
            "(c) point get, data ≈ {}× pool, throttled disk, {th} thread(s): {:.0} ops/s, hit {:.1} %, {:.0} device reads/s",
            args.big_data_mib / args.big_pool_mib.max(1),
            w.ops_per_s(),
            w.hit_pct(),
            w.dev_reads_per_s()
        );
        lines.push(Line {
            phase: format!(
                "point get, {} MiB data / {} MiB pool, 1000 IOPS 1 ms disk",
                args.big_data_mib, args.big_pool_mib
            ),
            threads: th,
            ops_per_s: w.ops_per_s(),
            notes: format!(
                "hit ratio {:.1} %, {:.0} device reads/s, {:.2} reads/get",
                w.hit_pct(),
                w.dev_reads_per_s(),
                w.dev_reads as f64 / w.ops.max(1) as f64
            ),
        });
    }
    e.shutdown().expect("shutdown (c)");
    drop((t, e));

    println!();
    println!("load average at end (1/5/15 min): {}", load_average());
    println!("## summary ({:.0} s per measurement)", args.seconds);
    println!();
    println!("| phase | threads | ops/s | notes |");
    println!("|---|---:|---:|---|");
    for l in &lines {
        println!(
            "| {} | {} | {:.0} | {} |",
            l.phase, l.threads, l.ops_per_s, l.notes
        );
    }
}
