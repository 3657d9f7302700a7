//! The systems under test and their servers: tierdb with the BPE off / on one fast device /
//! on two, MariaDB 10.11 (InnoDB) with its data on the slow tier, and optionally MariaDB with
//! its data on a fast tier (a reference). Starts each server inside the tiers' cgroup with the
//! same DRAM budget, stops it cleanly, and keeps one prepared dataset per engine and test type
//! on the slow tier, reused when a marker file says its parameters match.
//!
//! Owns: server command lines, dataset directories and their markers.
//! Must never: share a dataset between engines, or start a server outside the tiers.

use crate::cleanup::{self, Guard};
use crate::tiers::Tiers;
use crate::util::{describe, free_port, run, run_text, wait_sql};
use anyhow::{bail, Context, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum System {
    TierdbOff,
    TierdbBpe1,
    TierdbBpe2,
    Mariadb,
    MariadbFast,
}

impl System {
    pub const DEFAULT: &[System] = &[
        System::TierdbOff,
        System::TierdbBpe1,
        System::TierdbBpe2,
        System::Mariadb,
    ];
    pub const ALL: &[System] = &[
        System::TierdbOff,
        System::TierdbBpe1,
        System::TierdbBpe2,
        System::Mariadb,
        System::MariadbFast,
    ];

    pub fn name(self) -> &'static str {
        match self {
            System::TierdbOff => "tierdb-bpe-off",
            System::TierdbBpe1 => "tierdb-bpe-1dev",
            System::TierdbBpe2 => "tierdb-bpe-2dev",
            System::Mariadb => "mariadb",
            System::MariadbFast => "mariadb-fastdisk",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            System::TierdbOff => "tierdb, bpe_enabled=false, data + redo on the slow disk",
            System::TierdbBpe1 => "tierdb, BPE on 1 fast device, data + redo on the slow disk",
            System::TierdbBpe2 => "tierdb, BPE striped over 2 fast devices, data + redo on the slow disk",
            System::Mariadb => "MariaDB (InnoDB), data + redo + binlog on the slow disk",
            System::MariadbFast => "MariaDB (InnoDB), data + redo + binlog on fast device 0 (reference, not durable-disk)",
        }
    }

    pub fn parse(s: &str) -> Result<System> {
        System::ALL
            .iter()
            .copied()
            .find(|x| x.name() == s)
            .with_context(|| {
                format!(
                    "unknown system `{s}`; known: {}",
                    System::ALL
                        .iter()
                        .map(|x| x.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }

    pub fn is_tierdb(self) -> bool {
        matches!(
            self,
            System::TierdbOff | System::TierdbBpe1 | System::TierdbBpe2
        )
    }

    /// The dataset this system uses: the three tierdb variants share one (the BPE is a cache).
    fn dataset_key(self) -> &'static str {
        match self {
            s if s.is_tierdb() => "tierdb",
            System::MariadbFast => "mariadb-fastdisk",
            _ => "mariadb",
        }
    }
}

/// What every server start needs.
pub struct Ctx<'a> {
    pub tiers: &'a Tiers,
    pub tierdb_bin: PathBuf,
    pub pool: u64,
    pub bpe_size: Option<String>,
    pub logs: PathBuf,
    pub fallback_latency_us: u32,
}

pub struct Server {
    pub system: System,
    pub port: u16,
    pub command: String,
    child: Child,
    guard: Option<Guard>,
}

impl Server {
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, wait for a clean shutdown (SIGKILL after `timeout`).
    pub fn stop(mut self, timeout: Duration) -> Result<()> {
        let clean = terminate(&mut self.child, timeout);
        if let Some(g) = self.guard.take() {
            g.disarm();
        }
        if !clean {
            bail!(
                "{} did not shut down within {timeout:?} and was killed",
                self.system.name()
            );
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.guard.take().is_some() {
            // Dropped without stop(): error path. (The guard's own action would do the same.)
            terminate(&mut self.child, Duration::from_secs(60));
        }
    }
}

fn terminate(child: &mut Child, timeout: Duration) -> bool {
    if let Ok(Some(_)) = child.try_wait() {
        return true;
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let start = Instant::now();
    while start.elapsed() < timeout {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

pub fn dataset_dir(tiers: &Tiers, sys: System, test: &str) -> PathBuf {
    let base = if sys == System::MariadbFast {
        &tiers.fast[0]
    } else {
        &tiers.slow
    };
    base.join(format!("{}-{test}", sys.dataset_key()))
}

fn marker_text(ctx: &Ctx, sys: System, tables: u32, table_size: u64) -> Result<String> {
    let engine = if sys.is_tierdb() {
        let m = fs::metadata(&ctx.tierdb_bin)?;
        let mtime = m
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)?
            .as_secs();
        format!(
            "tierdb binary {} size {} mtime {}",
            ctx.tierdb_bin.display(),
            m.len(),
            mtime
        )
    } else {
        run_text(Command::new("mariadbd").arg("--version"))?
    };
    Ok(format!(
        "lab_dataset_format = 1\nengine = {engine}\ntables = {tables}\ntable_size = {table_size}\n"
    ))
}

const MARKER: &str = "lab-dataset.txt";

/// Makes sure `sys`'s dataset for `test` exists with these parameters; prepares it (with the
/// throttle lifted) when not. Returns true when an existing dataset was reused.
pub fn ensure_dataset(
    ctx: &Ctx,
    sys: System,
    test: &str,
    tables: u32,
    table_size: u64,
    on_progress: &dyn Fn(&str),
) -> Result<bool> {
    let dir = dataset_dir(ctx.tiers, sys, test);
    let want = marker_text(ctx, sys, tables, table_size)?;
    if fs::read_to_string(dir.join(MARKER)).ok().as_deref() == Some(want.as_str()) {
        return Ok(true);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir)
            .with_context(|| format!("removing stale dataset {}", dir.display()))?;
    }
    fs::create_dir_all(&dir)?;
    ctx.tiers.set_throttle(false)?;
    let result = (|| -> Result<()> {
        let mut server = start(ctx, sys, test, "prepare", false)?;
        {
            use mysql::prelude::Queryable;
            let mut c = crate::util::connect(server.port, None)?;
            c.query_drop("DROP DATABASE IF EXISTS sbtest")?;
            c.query_drop("CREATE DATABASE sbtest")?;
        }
        on_progress(&format!(
            "{}: loading {tables} x {table_size} rows",
            sys.dataset_key()
        ));
        let threads = tables.clamp(1, 4);
        let mut cmd =
            crate::sysbench::command("oltp_read_write", server.port, tables, table_size, threads);
        cmd.arg("prepare");
        let log = ctx
            .logs
            .join(format!("{}-{test}-prepare-sysbench.log", sys.dataset_key()));
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .context("starting sysbench prepare")?;
        fs::write(&log, [&out.stdout[..], &out.stderr[..]].concat())?;
        if !out.status.success() || !server.alive() {
            bail!(
                "sysbench prepare failed for {} (see {})",
                sys.name(),
                log.display()
            );
        }
        on_progress(&format!("{}: clean shutdown", sys.dataset_key()));
        server.stop(Duration::from_secs(600))?;
        Ok(())
    })();
    ctx.tiers.set_throttle(true)?;
    result?;
    fs::write(dir.join(MARKER), want)?;
    Ok(false)
}

/// Starts `sys` on its dataset for `test`. `throttled` adds the in-process throttle flags in
/// fallback mode (kernel throttles are set on the cgroup by the caller).
pub fn start(ctx: &Ctx, sys: System, test: &str, phase: &str, throttled: bool) -> Result<Server> {
    let dir = dataset_dir(ctx.tiers, sys, test);
    fs::create_dir_all(&dir)?;
    let port = free_port()?;
    let log_path = ctx.logs.join(format!("{}-{test}-{phase}.log", sys.name()));
    let log = fs::File::create(&log_path)?;
    let mut cmd;
    if sys.is_tierdb() {
        cmd = ctx.tiers.command(&ctx.tierdb_bin);
        let mut devices = Vec::new();
        let ndev = match sys {
            System::TierdbBpe2 => 2,
            _ => 1,
        };
        for f in &ctx.tiers.fast[..ndev] {
            let d = f.join("tierdb-bpe");
            // Cold BPE at every start, like the seed's measurements.
            let _ = fs::remove_dir_all(&d);
            fs::create_dir_all(&d)?;
            devices.push(d.join("bpe.cache").display().to_string());
        }
        cmd.current_dir(&dir)
            .arg("serve")
            .args(["--bind", "127.0.0.1", "--port"])
            .arg(port.to_string());
        cmd.arg("--data-dir")
            .arg(dir.join("data"))
            .arg("--redo-dir")
            .arg(dir.join("redo"));
        cmd.args([
            "--buffer-pool-size",
            &ctx.pool.to_string(),
            "--flush-log-at-trx-commit",
            "1",
            "--max-connections",
            "1024",
        ]);
        cmd.args([
            "--bpe-enabled",
            if sys == System::TierdbOff {
                "false"
            } else {
                "true"
            },
        ]);
        cmd.arg("--bpe-devices").arg(devices.join(","));
        if let Some(s) = &ctx.bpe_size {
            cmd.args(["--bpe-size", s]);
        }
        if throttled {
            cmd.args(ctx.tiers.tierdb_throttle_flags(ctx.fallback_latency_us));
        }
    } else {
        let data = dir.join("data");
        if !data.join("mysql").exists() {
            let _ = fs::remove_dir_all(&data);
            fs::create_dir_all(&data)?;
            run(Command::new("mariadb-install-db")
                .arg("--no-defaults")
                .arg("--user=root")
                .arg(format!("--datadir={}", data.display()))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db"))
            .context("mariadb-install-db")?;
        }
        fs::create_dir_all(dir.join("binlog"))?;
        cmd = ctx.tiers.command(Path::new("mariadbd"));
        cmd.arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket=/tmp/tierdb-lab-{port}.sock"))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!(
                "--log-error={}",
                log_path.with_extension("err").display()
            ))
            .arg("--skip-grant-tables")
            .arg("--skip-name-resolve")
            .arg("--max-connections=1000")
            .arg(format!("--innodb-buffer-pool-size={}", ctx.pool))
            .arg("--innodb-flush-method=O_DIRECT")
            .arg("--innodb-flush-log-at-trx-commit=1")
            .arg(format!(
                "--log-bin={}",
                dir.join("binlog/mariadb-bin").display()
            ))
            .arg("--server-id=1")
            .arg("--sync-binlog=1");
    }
    let command = describe(&cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .spawn()
        .with_context(|| format!("starting {command}"))?;
    let pid = child.id() as i32;
    let guard = cleanup::register(format!("stop {} (pid {pid})", sys.name()), move || {
        unsafe { libc::kill(pid, libc::SIGTERM) };
        for _ in 0..600 {
            if unsafe { libc::kill(pid, 0) } != 0 {
                return;
            }
            let mut st = 0;
            if unsafe { libc::waitpid(pid, &mut st, libc::WNOHANG) } == pid {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let r = wait_sql(port, Duration::from_secs(300), || {
        matches!(child.try_wait(), Ok(None))
    });
    let server = Server {
        system: sys,
        port,
        command,
        child,
        guard: Some(guard),
    };
    if let Err(e) = r {
        drop(server);
        bail!("{e:#} (log: {})", log_path.display());
    }
    Ok(server)
}
