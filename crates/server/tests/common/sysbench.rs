//! Runs the real sysbench 1.0 against a test server: prepare, run, cleanup, and what the run
//! printed.
#![allow(dead_code)]

use std::time::Duration;

use super::{run_program, TestServer};

/// A sysbench workload and the options it needs beyond the common ones.
pub struct Workload {
    pub name: &'static str,
    /// Overrides the table count (the select_random_* scripts only support one table).
    pub tables: Option<u32>,
}

const fn w(name: &'static str) -> Workload {
    Workload { name, tables: None }
}

/// sysbench 1.0.20's eleven bundled workloads.
pub const ALL_WORKLOADS: &[Workload] = &[
    w("oltp_point_select"),
    w("oltp_read_only"),
    w("oltp_read_write"),
    w("oltp_write_only"),
    w("oltp_update_index"),
    w("oltp_update_non_index"),
    w("oltp_delete"),
    w("oltp_insert"),
    Workload {
        name: "select_random_points",
        tables: Some(1),
    },
    Workload {
        name: "select_random_ranges",
        tables: Some(1),
    },
    // bulk_insert's prepare makes one table per thread: every phase gets --threads.
    w("bulk_insert"),
];

pub const SYSBENCH: &str = "/usr/bin/sysbench";

/// One sysbench invocation's outcome.
#[derive(Debug)]
pub struct Outcome {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// The number after `label:` in the run summary (e.g. "ignored errors", "transactions").
    pub fn counter(&self, label: &str) -> Option<u64> {
        self.stdout.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix(label)?.trim_start().strip_prefix(':')?;
            rest.split_whitespace().next()?.parse().ok()
        })
    }
    /// Lines that report a failure (FATAL, errors from the driver), cut to 300 characters.
    pub fn error_lines(&self) -> Vec<String> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|l| l.contains("FATAL") || l.contains("error ") || l.contains("ERROR"))
            .map(|l| l.chars().take(300).collect())
            .collect()
    }
    pub fn describe(&self) -> String {
        format!(
            "exit ok: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.ok, self.stdout, self.stderr
        )
    }
}

pub struct Sysbench<'a> {
    pub server: &'a TestServer,
    pub tables: u32,
    pub table_size: u32,
}

impl Sysbench<'_> {
    fn args(&self, workload: &Workload, phase: &str, extra: &[String]) -> Vec<String> {
        let mut a = vec![
            workload.name.to_string(),
            "--db-driver=mysql".into(),
            "--mysql-host=127.0.0.1".into(),
            format!("--mysql-port={}", self.server.port),
            "--mysql-user=root".into(),
            "--mysql-password=".into(),
            "--mysql-db=sbtest".into(),
            format!("--tables={}", workload.tables.unwrap_or(self.tables)),
            format!("--table-size={}", self.table_size),
        ];
        a.extend(extra.iter().cloned());
        a.push(phase.to_string());
        a
    }

    pub fn phase(
        &self,
        workload: &Workload,
        phase: &str,
        extra: &[String],
        timeout: Duration,
    ) -> Outcome {
        let (ok, stdout, stderr) =
            run_program(SYSBENCH, &self.args(workload, phase, extra), timeout);
        Outcome { ok, stdout, stderr }
    }

    /// prepare, run (`threads` for `seconds`), cleanup — all with `--threads=threads`.
    /// Returns the run's outcome, or the first failing phase's.
    pub fn workload(
        &self,
        workload: &Workload,
        threads: u32,
        seconds: u32,
    ) -> Result<Outcome, (String, Outcome)> {
        let long = Duration::from_secs(300);
        let t = vec![format!("--threads={threads}")];
        let prep = self.phase(workload, "prepare", &t, long);
        if !prep.ok {
            let _ = self.phase(workload, "cleanup", &t, long);
            return Err(("prepare".into(), prep));
        }
        let mut run_args = t.clone();
        run_args.extend([format!("--time={seconds}"), "--report-interval=0".into()]);
        let run = self.phase(
            workload,
            "run",
            &run_args,
            Duration::from_secs(u64::from(seconds) + 120),
        );
        let cleanup = self.phase(workload, "cleanup", &t, long);
        if !run.ok {
            return Err(("run".into(), run));
        }
        if !cleanup.ok {
            return Err(("cleanup".into(), cleanup));
        }
        Ok(run)
    }
}

/// Creates the `sbtest` database with the mysql client crate.
pub fn create_sbtest(server: &TestServer) {
    use mysql::prelude::Queryable;
    let mut c =
        mysql::Conn::new(mysql::Opts::from_url(&server.url(None)).expect("url")).expect("connect");
    c.query_drop("CREATE DATABASE sbtest")
        .expect("create database sbtest");
}

/// A started server with an empty `sbtest` database, after checking sysbench is installed.
pub fn server_with_sbtest() -> TestServer {
    assert!(
        super::exists(SYSBENCH),
        "sysbench is not installed at {SYSBENCH}"
    );
    let server = TestServer::start();
    create_sbtest(&server);
    server
}
