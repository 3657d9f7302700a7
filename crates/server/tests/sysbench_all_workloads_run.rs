//! All eleven sysbench 1.0.20 workloads (prepare, run, cleanup) run against tierdb with no
//! errors other than ignored deadlocks / lock wait timeouts. Adding a workload is one entry
//! in `ALL_WORKLOADS`.
//!
//! `oltp_read_write --secondary=on` (tables without a primary key: `id` AUTO_INCREMENT is a
//! secondary key) runs the same way, and afterwards every table still has all `table_size`
//! ids (concurrent delete + re-insert of one id may leave it on two rows: READ COMMITTED
//! without gap locks), both indexes listing every row.

mod common;

use common::sysbench::{server_with_sbtest, Sysbench, Workload, ALL_WORKLOADS};
use mysql::prelude::Queryable;
use std::time::Duration;

#[test]
fn sysbench_all_workloads_run() {
    let server = server_with_sbtest();
    let sb = Sysbench {
        server: &server,
        tables: 2,
        table_size: 1000,
    };
    let mut failures = Vec::new();
    for w in ALL_WORKLOADS {
        let name = w.name;
        match sb.workload(w, 8, 2) {
            Ok(run) => {
                let errors = run.error_lines();
                eprintln!(
                    "{name}: {} transactions, {} ignored errors",
                    run.counter("transactions").unwrap_or(0),
                    run.counter("ignored errors").unwrap_or(0)
                );
                if !errors.is_empty() {
                    failures.push(format!("{name} run: {errors:?}"));
                }
            }
            Err((phase, o)) => {
                let first: Vec<String> = o.error_lines().into_iter().take(3).collect();
                eprintln!("{name}: {phase} FAILED: {first:?}");
                failures.push(format!("{name} {phase}: {first:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "failing workloads:\n{}",
        failures.join("\n")
    );
}

#[test]
fn oltp_read_write_runs_on_tables_without_a_primary_key() {
    let server = server_with_sbtest();
    let sb = Sysbench {
        server: &server,
        tables: 2,
        table_size: 1000,
    };
    let w = Workload {
        name: "oltp_read_write",
        tables: None,
    };
    let long = Duration::from_secs(300);
    let args = |extra: &[&str]| -> Vec<String> {
        ["--secondary=on", "--threads=8"]
            .iter()
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    let prep = sb.phase(&w, "prepare", &args(&[]), long);
    assert!(prep.ok, "prepare: {}", prep.describe());
    let run = sb.phase(&w, "run", &args(&["--time=3", "--report-interval=0"]), long);
    assert!(run.ok, "run: {}", run.describe());
    assert!(run.error_lines().is_empty(), "{:?}", run.error_lines());
    assert!(run.counter("transactions").unwrap_or(0) > 0);
    let mut c = mysql::Conn::new(mysql::Opts::from_url(&server.url(Some("sbtest"))).expect("url"))
        .expect("connect");
    for (t, k) in [("sbtest1", "k_1"), ("sbtest2", "k_2")] {
        let ddl: Option<(String, String)> = c
            .query_first(format!("SHOW CREATE TABLE {t}"))
            .expect("show create table");
        let ddl = ddl.expect("a row").1;
        assert!(!ddl.contains("PRIMARY KEY"), "{ddl}");
        // Without a primary key nothing stops two transactions from each deleting and
        // re-inserting the same id (READ COMMITTED, no gap locks): an id may end up on two
        // rows, but none is lost.
        let counts: Option<(u64, u64)> = c
            .query_first(format!("SELECT COUNT(*), COUNT(DISTINCT id) FROM {t}"))
            .expect("count");
        let (rows, ids) = counts.expect("a row");
        assert_eq!(ids, 1000, "{t}: ids lost");
        assert!(rows >= 1000, "{t}: {rows} rows");
        for index in ["xid", k] {
            let n: Option<u64> = c
                .query_first(format!("SELECT COUNT(*) FROM {t} FORCE INDEX ({index})"))
                .expect("count by index");
            assert_eq!(n, Some(rows), "{t} by {index}");
        }
    }
    let cleanup = sb.phase(&w, "cleanup", &args(&[]), long);
    assert!(cleanup.ok, "cleanup: {}", cleanup.describe());
}
