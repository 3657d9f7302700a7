//! sysbench 1.0.20: the command line the seeds used (`--rand-type=special
//! --rand-spec-pct=15`), one run with its output saved, and the numbers parsed from it.
//!
//! Owns: sysbench arguments and output parsing.
//! Must never: decide what an error means for the lab's exit status (the caller does).

use crate::util::describe;
use anyhow::{Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};

/// The common part of every sysbench command: workload, connection, data size, distribution.
pub fn command(workload: &str, port: u16, tables: u32, table_size: u64, threads: u32) -> Command {
    let mut c = Command::new("sysbench");
    c.arg(workload)
        .args([
            "--db-driver=mysql",
            "--mysql-host=127.0.0.1",
            "--mysql-user=root",
            "--mysql-db=sbtest",
        ])
        .arg(format!("--mysql-port={port}"))
        .arg(format!("--tables={tables}"))
        .arg(format!("--table-size={table_size}"))
        .arg(format!("--threads={threads}"))
        .args(["--rand-type=special", "--rand-spec-pct=15"]);
    c
}

#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub tps: f64,
    pub qps: f64,
    pub p95_ms: f64,
    pub avg_ms: f64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub exit_ok: bool,
    pub fatal: Vec<String>,
    pub command: String,
}

impl RunResult {
    /// True when sysbench ran to the end with no error but ignored deadlocks/lock waits.
    pub fn clean(&self) -> bool {
        self.exit_ok && self.fatal.is_empty() && self.qps > 0.0
    }
}

/// Runs `sysbench <workload> run` for `seconds`, saving its output to `log`.
pub fn run(
    workload: &str,
    port: u16,
    tables: u32,
    table_size: u64,
    threads: u32,
    seconds: u32,
    log: &Path,
) -> Result<RunResult> {
    let mut c = command(workload, port, tables, table_size, threads);
    c.arg(format!("--time={seconds}"))
        .args(["--report-interval=1", "--percentile=95"])
        .arg("run");
    let cmd = describe(&c);
    let out = c
        .stdin(Stdio::null())
        .output()
        .context("starting sysbench")?;
    let text = format!(
        "$ {cmd}\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(log, &text)?;
    let mut r = parse(&text);
    r.exit_ok = out.status.success();
    r.command = cmd;
    Ok(r)
}

/// Number in parentheses after `key:` e.g. `queries: 123 (456.78 per sec.)`.
fn per_sec(text: &str, key: &str) -> f64 {
    text.lines()
        .find(|l| l.trim_start().starts_with(key))
        .and_then(|l| l.split('(').nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

fn value(text: &str, key: &str) -> f64 {
    text.lines()
        .find(|l| l.trim_start().starts_with(key))
        .and_then(|l| l.split(':').nth(1))
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0)
}

pub fn parse(text: &str) -> RunResult {
    RunResult {
        tps: per_sec(text, "transactions:"),
        qps: per_sec(text, "queries:"),
        p95_ms: value(text, "95th percentile:"),
        avg_ms: value(text, "avg:"),
        ignored_errors: per_sec_count(text, "ignored errors:"),
        reconnects: per_sec_count(text, "reconnects:"),
        exit_ok: false,
        fatal: text
            .lines()
            .filter(|l| l.contains("FATAL") || l.contains("error 2013") || l.starts_with("Error"))
            .map(|l| l.trim().to_string())
            .take(5)
            .collect(),
        command: String::new(),
    }
}

fn per_sec_count(text: &str, key: &str) -> u64 {
    value(text, key) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_sysbench_summary() {
        let t = "SQL statistics:\n    queries performed:\n        read:                            1400\n    transactions:                        100    (19.95 per sec.)\n    queries:                             2000   (399.00 per sec.)\n    ignored errors:                      3      (0.60 per sec.)\n    reconnects:                          0      (0.00 per sec.)\nLatency (ms):\n         min:                                    1.00\n         avg:                                   50.12\n         max:                                  200.00\n         95th percentile:                       99.33\n";
        let r = parse(t);
        assert_eq!(r.tps, 19.95);
        assert_eq!(r.qps, 399.0);
        assert_eq!(r.p95_ms, 99.33);
        assert_eq!(r.avg_ms, 50.12);
        assert_eq!(r.ignored_errors, 3);
    }
}
