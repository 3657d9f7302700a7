//! `tierdb-lab run --quick` end to end: it builds tiers (or falls back to in-process
//! throttles when it cannot), prepares tiny datasets, runs every default system × workload,
//! and leaves a report, a results CSV with one row per system × workload, and per-second
//! samples — and exits 0 only when every run was clean.

use std::process::Command;

const SYSTEMS: &[&str] = &[
    "tierdb-bpe-off",
    "tierdb-bpe-1dev",
    "tierdb-bpe-2dev",
    "mariadb",
];
const WORKLOADS: &[&str] = &["oltp_read_only", "oltp_write_only", "oltp_read_write"];

#[test]
fn lab_quick_produces_a_report() {
    let out = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir_in("/var/tmp").unwrap();
    // The server binary comes from the same `cargo test --release --workspace` build (the
    // server crate's tests need it). No nested cargo: it would wait on this build's lock.
    let ws = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| ws.join("target"));
    let tierdb = target.join("release/tierdb");
    assert!(
        tierdb.exists(),
        "{} is missing: run `cargo build --release --bin tierdb` (or the workspace tests) first",
        tierdb.display()
    );
    let start = std::time::Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_tierdb-lab"))
        .args(["run", "--quick", "--out"])
        .arg(out.path())
        .arg("--tierdb")
        .arg(&tierdb)
        .arg("--work")
        .arg(work.path())
        .status()
        .expect("tierdb-lab runs");
    let took = start.elapsed();
    assert!(
        status.success(),
        "tierdb-lab run --quick exited with {status}"
    );
    assert!(
        took.as_secs() < 300,
        "--quick took {took:?}, more than 5 minutes"
    );

    let report = std::fs::read_to_string(out.path().join("report.md")).expect("report.md");
    assert!(
        report.contains("## Results"),
        "report has a results section"
    );
    assert!(
        report.contains("Tiers and throttling"),
        "report says which throttling was used"
    );
    let csv = std::fs::read_to_string(out.path().join("results.csv")).expect("results.csv");
    for s in SYSTEMS {
        for w in WORKLOADS {
            let row = csv
                .lines()
                .find(|l| l.starts_with(&format!("io,{s},{w},")))
                .unwrap_or_else(|| panic!("no results.csv row for {s} × {w}:\n{csv}"));
            assert!(row.contains(",true,"), "{s} × {w} was not clean: {row}");
            assert!(
                report.contains(&format!("| {w} | {s} |")),
                "report row for {s} × {w}"
            );
        }
    }
    let samples = std::fs::read_to_string(out.path().join("samples.csv")).expect("samples.csv");
    assert!(
        samples.lines().count() > SYSTEMS.len() * WORKLOADS.len(),
        "per-second samples were taken"
    );
    assert!(out.path().join("qps_io.png").is_file(), "QPS chart");
}
