//! `tierdb-lab run`: one command that reproduces the seeds' BPE performance test on this
//! machine, side by side with MariaDB — tiers (slow cloud disk + two fast devices), systems
//! (tierdb BPE off / 1 device / 2 devices, MariaDB), sysbench workloads (cache-resident and
//! I/O-bound), per-second sampling, and a Markdown report with CSV and PNG charts.
//!
//! Owns: the command line, the order of phases, progress bars and the exit status.
//! Must never: leave tiers or servers behind (see `cleanup`), or report a run as clean when
//! sysbench failed.

mod charts;
mod cleanup;
mod fio;
mod report;
mod sampler;
mod servers;
mod sysbench;
mod tiers;
mod util;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use servers::{Ctx, System};
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "tierdb-lab",
    about = "Reproduce the seeds' BPE sysbench test here, side by side with MariaDB"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the tiers, prepare data, run every system × workload, write the report.
    Run(RunArgs),
}

#[derive(clap::Args, Clone, Debug)]
pub struct RunArgs {
    /// CI mode: 2 tables × 2000 rows, 16M pool, 5 s runs, I/O-bound test only.
    #[arg(long)]
    quick: bool,
    /// Output folder (default: <workspace>/bench/runs/<date>-lab).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds per measured I/O-bound run [default 100, quick 5].
    #[arg(long)]
    seconds: Option<u32>,
    /// Seconds per measured cache-resident run [default: --seconds].
    #[arg(long)]
    cache_seconds: Option<u32>,
    /// Seconds of warm-up (same workload) before each measured run [default 20, quick 2].
    #[arg(long)]
    warmup: Option<u32>,
    /// sysbench tables [default 8, quick 2].
    #[arg(long)]
    tables: Option<u32>,
    /// Rows per table of the I/O-bound test [default 1000000, quick 2000].
    #[arg(long)]
    table_size: Option<u64>,
    /// Rows per table of the cache-resident test [default: data ≈ pool / 4].
    #[arg(long)]
    cache_table_size: Option<u64>,
    /// DRAM budget of every system: buffer_pool_size / innodb_buffer_pool_size [default 128M, quick 16M].
    #[arg(long)]
    pool: Option<String>,
    /// sysbench threads.
    #[arg(long, default_value_t = 64)]
    threads: u32,
    /// Systems, comma-separated: tierdb-bpe-off, tierdb-bpe-1dev, tierdb-bpe-2dev, mariadb, mariadb-fastdisk.
    #[arg(long, value_delimiter = ',')]
    systems: Option<Vec<String>>,
    /// Workloads, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "oltp_read_only,oltp_write_only,oltp_read_write"
    )]
    workloads: Vec<String>,
    /// Test types, comma-separated: cache (data fits the pool), io (data ≈ 16× the pool) [default cache,io; quick io].
    #[arg(long, value_delimiter = ',')]
    tests: Option<Vec<String>>,
    /// IOPS cap (read and write each) of the slow "cloud disk".
    #[arg(long, default_value_t = 1000)]
    slow_iops: u32,
    /// IOPS cap (read and write each) of each fast "local SSD".
    #[arg(long, default_value_t = 8000)]
    fast_iops: u32,
    /// tierdb binary (default: `cargo build --release --bin tierdb` in the workspace).
    #[arg(long)]
    tierdb: Option<PathBuf>,
    /// Work folder: tier images and prepared datasets, kept between runs.
    #[arg(long, default_value = "/var/tmp/tierdb-lab")]
    work: PathBuf,
    /// auto (kernel tiers when possible), kernel (fail if impossible), in-process.
    #[arg(long, default_value = "auto")]
    tier_mode: String,
    /// tierdb bpe_size (default: the server's, 4 × pool).
    #[arg(long)]
    bpe_size: Option<String>,
    /// Seconds per fio measurement [default 5, quick 2].
    #[arg(long)]
    fio_seconds: Option<u32>,
    /// In-process fallback only: data_latency_us for tierdb's emulated slow disk.
    #[arg(long, default_value_t = 0)]
    fallback_latency_us: u32,
}

/// Resolved settings.
pub struct Plan {
    pub args: RunArgs,
    pub out: PathBuf,
    pub seconds: u32,
    pub cache_seconds: u32,
    pub warmup: u32,
    pub tables: u32,
    pub io_table_size: u64,
    pub cache_table_size: u64,
    pub pool: u64,
    pub systems: Vec<System>,
    pub tests: Vec<String>,
    pub fio_seconds: u32,
}

impl Plan {
    pub fn table_size(&self, test: &str) -> u64 {
        if test == "io" {
            self.io_table_size
        } else {
            self.cache_table_size
        }
    }
    pub fn run_seconds(&self, test: &str) -> u32 {
        if test == "io" {
            self.seconds
        } else {
            self.cache_seconds
        }
    }
}

/// One system × workload × test type.
pub struct Measurement {
    pub test: String,
    pub system: System,
    pub workload: String,
    pub result: sysbench::RunResult,
    pub rows: Vec<sampler::Row>,
    pub error: Option<String>,
}

impl Measurement {
    pub fn clean(&self) -> bool {
        self.error.is_none() && self.result.clean()
    }
}

/// What the report needs besides the measurements.
pub struct Facts {
    pub command_line: String,
    pub tiers: String,
    pub kernel_tiers: bool,
    pub probe: Vec<fio::FioResult>,
    pub device_check: Vec<fio::FioResult>,
    pub server_commands: Vec<(String, String)>,
    pub datasets: Vec<(String, String, bool, u64)>,
    pub started: Instant,
    pub others_running: String,
    pub tierdb_bin: PathBuf,
    pub notes: Vec<String>,
}

fn main() {
    let cli = Cli::parse();
    let Cmd::Run(args) = cli.cmd;
    let code = match run(args) {
        Ok(true) => 0,
        Ok(false) => {
            eprintln!(
                "tierdb-lab: report written, but some system did not answer every workload cleanly"
            );
            1
        }
        Err(e) => {
            eprintln!("tierdb-lab: error: {e:#}");
            2
        }
    };
    cleanup::run_all();
    std::process::exit(code);
}

fn style_bar() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len}s {msg}")
        .unwrap()
}

/// indicatif draws nothing when stderr is not a terminal (CI logs): then print plain lines.
fn plain(msg: &str) {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        eprintln!("tierdb-lab: {msg}");
    }
}

fn done(pb: &ProgressBar, msg: String) {
    plain(&msg);
    pb.finish_with_message(msg);
}

fn spinner(msg: impl Into<String>) -> ProgressBar {
    let msg = msg.into();
    plain(&msg);
    let pb = ProgressBar::new_spinner();
    pb.set_style(ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}").unwrap());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb.set_message(msg);
    pb
}

/// Runs `f` while a bar fills over `secs` seconds.
fn timed<T>(msg: String, secs: u32, f: impl FnOnce() -> T) -> T {
    plain(&format!("{msg} ({secs} s)"));
    let pb = ProgressBar::new(secs as u64);
    pb.set_style(style_bar());
    pb.set_message(msg.clone());
    pb.enable_steady_tick(Duration::from_millis(250));
    let start = Instant::now();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (pb2, stop2) = (pb.clone(), stop.clone());
    let ticker = std::thread::spawn(move || {
        while !stop2.load(std::sync::atomic::Ordering::SeqCst) {
            pb2.set_position(start.elapsed().as_secs().min(secs as u64));
            std::thread::sleep(Duration::from_millis(250));
        }
    });
    let r = f();
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = ticker.join();
    done(&pb, format!("{msg} done"));
    r
}

fn resolve(args: RunArgs) -> Result<Plan> {
    let q = args.quick;
    let pool = util::parse_size(
        args.pool
            .as_deref()
            .unwrap_or(if q { "16M" } else { "128M" }),
    )?;
    let tables = args.tables.unwrap_or(if q { 2 } else { 8 });
    let io_table_size = args.table_size.unwrap_or(if q { 2000 } else { 1_000_000 });
    // A sysbench row costs about 250 bytes with its secondary index entry.
    let cache_table_size = args
        .cache_table_size
        .unwrap_or(((pool / 4) / 250 / tables as u64).max(1000));
    let seconds = args.seconds.unwrap_or(if q { 5 } else { 100 });
    let systems = match &args.systems {
        Some(v) => v
            .iter()
            .map(|s| System::parse(s))
            .collect::<Result<Vec<_>>>()?,
        None => System::DEFAULT.to_vec(),
    };
    let tests = args.tests.clone().unwrap_or_else(|| {
        if q {
            vec!["io".into()]
        } else {
            vec!["cache".into(), "io".into()]
        }
    });
    for t in &tests {
        if t != "io" && t != "cache" {
            bail!("unknown test type `{t}` (cache, io)");
        }
    }
    let out = args.out.clone().unwrap_or_else(|| {
        util::workspace_root()
            .join("bench/runs")
            .join(format!("{}-lab", util::today()))
    });
    Ok(Plan {
        out,
        seconds,
        cache_seconds: args.cache_seconds.unwrap_or(seconds),
        warmup: args.warmup.unwrap_or(if q { 2 } else { 20 }),
        tables,
        io_table_size,
        cache_table_size,
        pool,
        systems,
        tests,
        fio_seconds: args.fio_seconds.unwrap_or(if q { 2 } else { 5 }),
        args,
    })
}

fn build_tierdb(plan: &Plan) -> Result<PathBuf> {
    if let Some(p) = &plan.args.tierdb {
        if !p.is_file() {
            bail!("--tierdb {}: no such file", p.display());
        }
        return Ok(p.canonicalize()?);
    }
    let ws = util::workspace_root();
    let pb = spinner("building tierdb (cargo build --release --bin tierdb)");
    let out = std::process::Command::new("cargo")
        .current_dir(&ws)
        .args(["build", "--release", "--bin", "tierdb"])
        .output()
        .context("running cargo (pass --tierdb PATH to skip the build)")?;
    pb.finish_and_clear();
    if !out.status.success() {
        bail!(
            "cargo build --release --bin tierdb failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| ws.join("target"));
    Ok(target.join("release/tierdb"))
}

fn run(args: RunArgs) -> Result<bool> {
    let started = Instant::now();
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let plan = resolve(args)?;
    let needs_mariadb = plan.systems.iter().any(|s| !s.is_tierdb());
    let tools: Vec<(&str, &str)> = util::TOOLS
        .iter()
        .copied()
        .filter(|(t, _)| needs_mariadb || !t.starts_with("mariadb"))
        .collect();
    util::check_tools(&tools, true)?;
    if plan.args.tier_mode != "auto"
        && plan.args.tier_mode != "kernel"
        && plan.args.tier_mode != "in-process"
    {
        bail!("--tier-mode must be auto, kernel or in-process");
    }
    std::fs::create_dir_all(plan.out.join("logs"))?;
    let others_running = util::run_text(
        std::process::Command::new("sh")
            .arg("-c")
            .arg("pgrep -a tierdb | grep -v tierdb-lab; pgrep -a mariadbd; true"),
    )
    .unwrap_or_default();
    let tierdb_bin = build_tierdb(&plan)?;
    cleanup::install_signal_handler()?;

    // 1. Tiers.
    let pb = spinner("tiers: building loop devices, ext4, blkio cgroup");
    let tiers = tiers::Tiers::build(
        &plan.args.work,
        plan.args.slow_iops,
        plan.args.fast_iops,
        plan.args.tier_mode == "in-process",
    )?;
    done(&pb, format!("tiers: {}", tiers.describe()));
    if plan.args.tier_mode == "kernel" && !tiers.is_kernel() {
        bail!("--tier-mode kernel: {}", tiers.describe());
    }

    // 2. Throttle probe and device check.
    let mut probe = Vec::new();
    let mut device_check = Vec::new();
    let fs_ = plan.fio_seconds;
    {
        let f0 = tiers.fast[0].clone();
        let f1 = tiers.fast[1].clone();
        let slow = tiers.slow.clone();
        fio::layout(&tiers, &[&slow, &f0, &f1])?;
        let n = if tiers.is_kernel() { 4 + 2 } else { 4 };
        timed(
            "fio: throttle probe + device check".into(),
            fs_ * n,
            || -> Result<()> {
                if tiers.is_kernel() {
                    probe.push(fio::measure(
                        &tiers,
                        "slow disk",
                        &[&slow],
                        "randread",
                        fs_,
                    )?);
                    probe.push(fio::measure(
                        &tiers,
                        "slow disk",
                        &[&slow],
                        "randwrite",
                        fs_,
                    )?);
                }
                for rw in ["randread", "randwrite"] {
                    device_check.push(fio::measure(&tiers, "1 fast device", &[&f0], rw, fs_)?);
                    device_check.push(fio::measure(
                        &tiers,
                        "2 fast devices",
                        &[&f0, &f1],
                        rw,
                        fs_,
                    )?);
                }
                Ok(())
            },
        )?;
    }

    let ctx = Ctx {
        tiers: &tiers,
        tierdb_bin: tierdb_bin.clone(),
        pool: plan.pool,
        bpe_size: plan.args.bpe_size.clone(),
        logs: plan.out.join("logs"),
        fallback_latency_us: plan.args.fallback_latency_us,
    };
    let mut measurements: Vec<Measurement> = Vec::new();
    let mut server_commands = Vec::new();
    let mut datasets = Vec::new();
    let mut notes = Vec::new();

    // 3. Per test type, per system: dataset, server, warm-up + measured run per workload.
    for test in &plan.tests {
        let size = plan.table_size(test);
        for &sys in &plan.systems {
            let fail_all = |ms: &mut Vec<Measurement>, err: String| {
                for w in &plan.args.workloads {
                    ms.push(Measurement {
                        test: test.clone(),
                        system: sys,
                        workload: w.clone(),
                        result: Default::default(),
                        rows: Vec::new(),
                        error: Some(err.clone()),
                    });
                }
            };
            let pb = spinner(format!(
                "prepare {test}: {} ({} tables × {size} rows)",
                sys.name(),
                plan.tables
            ));
            let pb2 = pb.clone();
            let prep_start = Instant::now();
            let reused = servers::ensure_dataset(&ctx, sys, test, plan.tables, size, &|m| {
                pb2.set_message(format!("prepare {test}: {m}"))
            });
            done(
                &pb,
                format!(
                    "prepare {test}: {} {}",
                    sys.name(),
                    match &reused {
                        Ok(true) => "reused".to_string(),
                        Ok(false) =>
                            format!("loaded in {:.0}s", prep_start.elapsed().as_secs_f64()),
                        Err(e) => format!("FAILED: {e:#}"),
                    }
                ),
            );
            let reused = match reused {
                Ok(r) => r,
                Err(e) => {
                    fail_all(&mut measurements, format!("prepare: {e:#}"));
                    continue;
                }
            };
            let ds = servers::dataset_dir(&tiers, sys, test);
            let bytes = util::run_text(std::process::Command::new("du").arg("-sb").arg(&ds))
                .ok()
                .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
                .unwrap_or(0);
            if !datasets
                .iter()
                .any(|(t, d, _, _): &(String, String, bool, u64)| {
                    t == test && *d == ds.display().to_string()
                })
            {
                datasets.push((test.clone(), ds.display().to_string(), reused, bytes));
            }
            tiers.set_throttle(true)?;
            let mut server = match servers::start(&ctx, sys, test, "run", true) {
                Ok(s) => s,
                Err(e) => {
                    fail_all(&mut measurements, format!("start: {e:#}"));
                    continue;
                }
            };
            server_commands.push((format!("{test} {}", sys.name()), server.command.clone()));
            for w in &plan.args.workloads {
                let tag = format!("{test} {} {w}", sys.name());
                let wl = plan
                    .out
                    .join("logs")
                    .join(format!("{}-{test}-{w}-warmup.sysbench.log", sys.name()));
                let warm = timed(format!("warm-up {tag}"), plan.warmup, || {
                    sysbench::run(
                        w,
                        server.port,
                        plan.tables,
                        size,
                        plan.args.threads,
                        plan.warmup,
                        &wl,
                    )
                });
                if let Ok(r) = &warm {
                    if !r.clean() {
                        notes.push(format!("warm-up of {tag} was not clean: {:?}", r.fatal));
                    }
                }
                let secs = plan.run_seconds(test);
                let log = plan
                    .out
                    .join("logs")
                    .join(format!("{}-{test}-{w}.sysbench.log", sys.name()));
                let smp = sampler::start(server.port, tiers.loop_names());
                let r = timed(format!("run {tag}"), secs, || {
                    sysbench::run(
                        w,
                        server.port,
                        plan.tables,
                        size,
                        plan.args.threads,
                        secs,
                        &log,
                    )
                });
                let mut rows = smp.finish();
                rows.pop(); // the last second spans the end of the run
                let (result, error) = match r {
                    Ok(r) => {
                        let err = if r.clean() {
                            None
                        } else {
                            Some(format!(
                                "sysbench {}: {}",
                                if r.exit_ok {
                                    "reported errors"
                                } else {
                                    "failed"
                                },
                                r.fatal.join(" | ")
                            ))
                        };
                        (r, err)
                    }
                    Err(e) => (Default::default(), Some(format!("{e:#}"))),
                };
                if !server.alive() {
                    notes.push(format!("{} died during {test} {w}", sys.name()));
                }
                eprintln!(
                    "  {tag}: qps {:.0} tps {:.1} p95 {:.1} ms ignored errors {}{}",
                    result.qps,
                    result.tps,
                    result.p95_ms,
                    result.ignored_errors,
                    error
                        .as_deref()
                        .map(|e| format!("  ERROR {e}"))
                        .unwrap_or_default()
                );
                measurements.push(Measurement {
                    test: test.clone(),
                    system: sys,
                    workload: w.clone(),
                    result,
                    rows,
                    error,
                });
            }
            let pb = spinner(format!("stopping {}", sys.name()));
            if let Err(e) = server.stop(Duration::from_secs(300)) {
                notes.push(format!("{e:#}"));
            }
            pb.finish_and_clear();
        }
    }

    // 4. Report.
    let facts = Facts {
        command_line,
        tiers: tiers.describe(),
        kernel_tiers: tiers.is_kernel(),
        probe,
        device_check,
        server_commands,
        datasets,
        started,
        others_running,
        tierdb_bin,
        notes,
    };
    drop(tiers);
    let pb = spinner("writing report, CSV and charts");
    report::write(&plan, &facts, &measurements)?;
    done(
        &pb,
        format!("report: {}", plan.out.join("report.md").display()),
    );
    let expected = plan.tests.len() * plan.systems.len() * plan.args.workloads.len();
    Ok(measurements.len() == expected
        && measurements.iter().all(Measurement::clean)
        && plan.out.join("report.md").is_file())
}
