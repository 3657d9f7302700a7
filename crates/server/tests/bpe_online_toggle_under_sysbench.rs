//! The BPE is reconfigured online while the real sysbench 1.0.20 runs `oltp_read_write`
//! with 64 threads on a data set several times larger than the buffer pool: switched off and
//! on, shrunk, grown, a second device added and removed. No sysbench query may fail (only
//! deadlocks, which sysbench retries, are allowed), every SET GLOBAL succeeds promptly, the
//! BPE serves hits during the run, and afterwards every table still has all its rows and its
//! secondary index agrees with the primary key.

mod bpe_support;
mod common;

use std::time::{Duration, Instant};

use mysql::prelude::*;

use bpe_support::{bpe_status, checksum, connect, variables};
use common::sysbench::{create_sbtest, Sysbench, Workload, SYSBENCH};
use common::TestServer;

const TABLES: u32 = 4;
const TABLE_SIZE: u32 = 40_000;
const RUN_SECONDS: u64 = 30;

/// One control action and how long its statement took.
struct Step {
    at: Duration,
    sql: String,
    took: Duration,
}

#[test]
fn bpe_online_toggle_under_sysbench() {
    assert!(
        common::exists(SYSBENCH),
        "sysbench is not installed at {SYSBENCH}"
    );
    let t0 = Instant::now();
    // 8 MiB of DRAM for ~35 MiB of data; BPE 32 MiB in 1 MiB regions.
    let server = TestServer::start_with(&[
        "--buffer-pool-size",
        "8M",
        "--bpe-size",
        "32M",
        "--bpe-region-size",
        "1M",
    ]);
    create_sbtest(&server);
    let sb = Sysbench {
        server: &server,
        tables: TABLES,
        table_size: TABLE_SIZE,
    };
    let rw = Workload {
        name: "oltp_read_write",
        tables: None,
    };
    let prep = sb.phase(
        &rw,
        "prepare",
        &["--threads=4".into()],
        Duration::from_secs(120),
    );
    assert!(prep.ok, "prepare failed:\n{}", prep.describe());
    eprintln!(
        "prepared {TABLES} x {TABLE_SIZE} rows in {:?}",
        t0.elapsed()
    );

    let extra_device = server.dir.path().join("bpe1.cache");
    let extra = extra_device.display().to_string();
    let mut ctl = connect(server.port, None);
    let before = bpe_status(&mut ctl);
    assert!(
        before.u64("Innodb_buffer_pool_pages_total") * 16384 <= 8 << 20,
        "{}",
        before.brief()
    );

    let (run, steps, checks) = std::thread::scope(|s| {
        let bench = s.spawn(|| {
            sb.phase(
                &rw,
                "run",
                &[
                    "--threads=64".into(),
                    format!("--time={RUN_SECONDS}"),
                    "--rand-type=uniform".into(),
                    "--report-interval=1".into(),
                ],
                Duration::from_secs(RUN_SECONDS + 60),
            )
        });
        let start = Instant::now();
        let mut steps = Vec::new();
        let mut checks: Vec<String> = Vec::new();
        let at = |secs: u64| {
            let when = Duration::from_secs(secs);
            if let Some(d) = when.checked_sub(start.elapsed()) {
                std::thread::sleep(d);
            }
        };
        let set = |c: &mut mysql::Conn, steps: &mut Vec<Step>, sql: String| {
            let t = Instant::now();
            c.query_drop(&sql)
                .unwrap_or_else(|e| panic!("{sql} failed under load: {e}"));
            steps.push(Step {
                at: start.elapsed(),
                sql,
                took: t.elapsed(),
            });
        };

        at(4);
        let h_on = bpe_status(&mut ctl);
        set(&mut ctl, &mut steps, "SET GLOBAL bpe_enabled = OFF".into());
        let off = bpe_status(&mut ctl);
        assert_eq!(
            variables(&mut ctl, "bpe_enabled").text("bpe_enabled"),
            "OFF"
        );
        at(7);
        let still_off = bpe_status(&mut ctl);
        // While off no lookup is served; at most the lookups already in flight finish.
        let served_while_off = still_off.u64("Tierdb_bpe_hits") - off.u64("Tierdb_bpe_hits");
        checks.push(format!(
            "hits before off {} / while off +{served_while_off}",
            h_on.u64("Tierdb_bpe_hits")
        ));
        assert!(
            served_while_off <= 64,
            "{served_while_off} BPE hits while bpe_enabled = OFF"
        );
        set(&mut ctl, &mut steps, "SET GLOBAL bpe_enabled = ON".into());
        assert_eq!(variables(&mut ctl, "bpe_enabled").text("bpe_enabled"), "ON");

        at(10);
        set(&mut ctl, &mut steps, "SET GLOBAL bpe_size = '16M'".into());
        let shrunk = bpe_status(&mut ctl);
        assert_eq!(variables(&mut ctl, "bpe_size").u64("bpe_size"), 16 << 20);
        assert!(
            shrunk.u64("Tierdb_bpe_capacity_pages") <= 1024,
            "after shrinking to 16M: {}",
            shrunk.brief()
        );
        at(13);
        set(&mut ctl, &mut steps, "SET GLOBAL bpe_size = '48M'".into());
        let grown = bpe_status(&mut ctl);
        assert_eq!(variables(&mut ctl, "bpe_size").u64("bpe_size"), 48 << 20);
        assert!(
            grown.u64("Tierdb_bpe_capacity_pages") > shrunk.u64("Tierdb_bpe_capacity_pages"),
            "growing to 48M: {} -> {}",
            shrunk.brief(),
            grown.brief()
        );

        at(16);
        set(
            &mut ctl,
            &mut steps,
            format!("SET GLOBAL bpe_add_device = '{extra}'"),
        );
        let two = bpe_status(&mut ctl);
        assert_eq!(two.u64("Tierdb_bpe_devices"), 2, "{}", two.brief());
        let devs = variables(&mut ctl, "bpe_devices");
        assert!(
            devs.text("bpe_devices").contains(&extra),
            "bpe_devices = {}",
            devs.text("bpe_devices")
        );
        at(20);
        let two_later = bpe_status(&mut ctl);
        checks.push(format!(
            "second device admitted {} pages, {} hits",
            two_later.u64("Tierdb_bpe_device1_pages_admitted"),
            two_later.u64("Tierdb_bpe_device1_hits")
        ));
        set(
            &mut ctl,
            &mut steps,
            format!("SET GLOBAL bpe_remove_device = '{extra}'"),
        );
        let one = bpe_status(&mut ctl);
        assert_eq!(one.u64("Tierdb_bpe_devices"), 1, "{}", one.brief());
        assert!(
            !variables(&mut ctl, "bpe_devices")
                .text("bpe_devices")
                .contains(&extra),
            "the removed device is still listed"
        );

        at(23);
        let after_changes = bpe_status(&mut ctl);
        at(27);
        let end = bpe_status(&mut ctl);
        checks.push(format!(
            "hits 23s..27s: +{}",
            end.u64("Tierdb_bpe_hits") - after_changes.u64("Tierdb_bpe_hits")
        ));
        assert!(
            end.u64("Tierdb_bpe_hits") > after_changes.u64("Tierdb_bpe_hits"),
            "no BPE hit after the reconfigurations:\n{}\n{}",
            after_changes.brief(),
            end.brief()
        );
        (bench.join().expect("sysbench thread"), steps, checks)
    });

    for st in &steps {
        eprintln!(
            "{:>6.1}s  {:<60} {:?}",
            st.at.as_secs_f64(),
            st.sql,
            st.took
        );
    }
    for c in &checks {
        eprintln!("{c}");
    }
    eprintln!(
        "{}",
        run.stdout
            .lines()
            .filter(|l| l.contains("transactions:") || l.contains("ignored errors:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(run.ok, "sysbench run failed:\n{}", run.describe());
    assert!(
        run.error_lines().is_empty(),
        "sysbench reported errors: {:?}\n{}",
        run.error_lines(),
        run.describe()
    );
    let tx = run.counter("transactions").unwrap_or(0);
    assert!(tx > 0, "no transaction completed:\n{}", run.describe());
    for st in &steps {
        assert!(
            st.took < Duration::from_secs(10),
            "{} took {:?} under load",
            st.sql,
            st.took
        );
    }
    // Per-second reports: the service must not stop while the BPE is reconfigured.
    let stalls: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with('[') && l.contains(" tps: 0.00 "))
        .collect();
    assert!(
        stalls.len() <= 1,
        "seconds without a committed transaction: {stalls:?}"
    );

    let fin = bpe_status(&mut ctl);
    eprintln!("final: {}", fin.brief());
    assert!(
        fin.u64("Tierdb_bpe_hits") > before.u64("Tierdb_bpe_hits"),
        "no BPE hit during the run: {}",
        fin.brief()
    );
    assert_eq!(fin.u64("Tierdb_bpe_device_errors"), 0, "{}", fin.brief());

    check_consistency(&mut ctl);
    check_bpe_serves_current_pages(&mut ctl);
    eprintln!("total {:?}", t0.elapsed());
}

/// Every row read with the BPE on (pages missing from DRAM come from the BPE) equals the
/// row read with it off (they come from the data file): no stale copy survived the run.
/// The tables are 4x the pool, so the second pass reloads what the first one loaded.
fn check_bpe_serves_current_pages(c: &mut mysql::Conn) {
    let scan = |c: &mut mysql::Conn| -> Vec<(u64, u64)> {
        (1..=TABLES)
            .map(|n| checksum(c, &format!("SELECT id, k, c, pad FROM sbtest.sbtest{n}")))
            .collect()
    };
    let s0 = bpe_status(c);
    let on = scan(c);
    let s1 = bpe_status(c);
    c.query_drop("SET GLOBAL bpe_enabled = OFF").unwrap();
    let off = scan(c);
    let s2 = bpe_status(c);
    c.query_drop("SET GLOBAL bpe_enabled = ON").unwrap();
    let hits_on = s1.u64("Tierdb_bpe_hits") - s0.u64("Tierdb_bpe_hits");
    eprintln!(
        "scan with BPE on: {hits_on} BPE hits; with BPE off: {} data-file reads",
        s2.u64("Innodb_buffer_pool_reads") - s1.u64("Innodb_buffer_pool_reads")
    );
    assert!(hits_on > 100, "the BPE served little: {}", s1.brief());
    assert_eq!(
        on, off,
        "rows read through the BPE differ from the data file's"
    );
}

/// Every table keeps `TABLE_SIZE` rows (oltp_read_write deletes and re-inserts the same id
/// in one transaction), and a scan of secondary index `k_N` finds exactly the rows of the
/// primary key, with the same ids and k values.
fn check_consistency(c: &mut mysql::Conn) {
    c.query_drop("USE sbtest").unwrap();
    for n in 1..=TABLES {
        let t = format!("sbtest{n}");
        let plan: Vec<mysql::Row> = c
            .query(format!(
                "EXPLAIN SELECT COUNT(*) FROM {t} FORCE INDEX (k_{n}) WHERE k >= 0"
            ))
            .unwrap();
        let key: Option<String> = plan[0].get("key").flatten();
        assert_eq!(
            key.as_deref(),
            Some(format!("k_{n}").as_str()),
            "EXPLAIN does not use k_{n}"
        );
        let (pk_n, pk_ids, pk_ks): (u64, i64, i64) = c
            .query_first(format!(
                "SELECT COUNT(*), SUM(id), SUM(k) FROM {t} FORCE INDEX (PRIMARY)"
            ))
            .unwrap()
            .unwrap();
        let (ix_n, ix_ids, ix_ks): (u64, i64, i64) = c
            .query_first(format!(
                "SELECT COUNT(*), SUM(id), SUM(k) FROM {t} FORCE INDEX (k_{n}) WHERE k >= 0"
            ))
            .unwrap()
            .unwrap();
        let plain: u64 = c
            .query_first(format!("SELECT COUNT(*) FROM {t}"))
            .unwrap()
            .unwrap();
        eprintln!(
            "{t}: {plain} rows; pk ({pk_n}, {pk_ids}, {pk_ks}) index ({ix_n}, {ix_ids}, {ix_ks})"
        );
        assert_eq!(plain, u64::from(TABLE_SIZE), "{t} lost or gained rows");
        assert_eq!(pk_n, plain, "{t}: primary key scan count");
        assert_eq!(
            (ix_n, ix_ids, ix_ks),
            (pk_n, pk_ids, pk_ks),
            "{t}: index k_{n} disagrees with the primary key"
        );
    }
}
