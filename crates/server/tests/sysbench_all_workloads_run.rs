//! All eleven sysbench 1.0.20 workloads (prepare, run, cleanup) run against tierdb with no
//! errors other than ignored deadlocks / lock wait timeouts. Adding a workload is one entry
//! in `ALL_WORKLOADS`.

mod common;

use common::sysbench::{create_sbtest, Sysbench, ALL_WORKLOADS, SYSBENCH};
use common::TestServer;

#[test]
fn sysbench_all_workloads_run() {
    assert!(
        common::exists(SYSBENCH),
        "sysbench is not installed at {SYSBENCH}"
    );
    let server = TestServer::start();
    create_sbtest(&server);
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
