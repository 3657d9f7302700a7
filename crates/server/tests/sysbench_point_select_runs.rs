//! The real sysbench 1.0.20 runs oltp_point_select against tierdb with 16 threads and no
//! errors.

mod common;

use common::sysbench::{server_with_sbtest, Sysbench, Workload};

#[test]
fn sysbench_point_select_runs() {
    let server = server_with_sbtest();
    let sb = Sysbench {
        server: &server,
        tables: 2,
        table_size: 1000,
    };
    let run = sb
        .workload(
            &Workload {
                name: "oltp_point_select",
                tables: None,
            },
            16,
            3,
        )
        .unwrap_or_else(|(phase, o)| panic!("{phase} failed:\n{}", o.describe()));
    assert!(run.error_lines().is_empty(), "{}", run.describe());
    assert_eq!(run.counter("ignored errors"), Some(0), "{}", run.describe());
    let tx = run.counter("transactions").unwrap_or(0);
    assert!(tx > 100, "only {tx} transactions:\n{}", run.describe());
    eprintln!("oltp_point_select: {tx} transactions in 3 s with 16 threads");
}
