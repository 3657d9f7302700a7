//! The run's outputs: `report.md` (commands, machine, throttling, settings, results, ratios
//! next to the seeds' published gains, charts), `results.csv` (one row per test × system ×
//! workload), `samples.csv` (one row per second of every measured run), `fio.csv`, PNGs.
//!
//! Owns: the report's wording and the CSV formats.
//! Must never: hide a failed or fallback run (both are stated at the top).

use crate::servers::System;
use crate::{charts, Facts, Measurement, Plan};
use anyhow::Result;
use std::fmt::Write as _;
use std::fs;

/// The seed's published BPE gains (BPE on ÷ off, QPS) at 8 vCPU / 16 GB.
fn seed_gain(workload: &str) -> Option<f64> {
    match workload {
        "oltp_read_only" => Some(0.80),
        "oltp_write_only" => Some(0.33),
        "oltp_read_write" => Some(1.03),
        _ => None,
    }
}

fn sh(cmd: &str) -> String {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.1} %", x * 100.0))
        .unwrap_or_else(|| "–".into())
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = it.collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub fn write(plan: &Plan, f: &Facts, ms: &[Measurement]) -> Result<()> {
    let out = &plan.out;
    // CSVs.
    let mut csv =
        String::from("test,system,workload,tps,qps,p95_ms,avg_ms,ignored_errors,clean,error\n");
    for m in ms {
        let r = &m.result;
        let _ = writeln!(
            csv,
            "{},{},{},{:.2},{:.2},{:.2},{:.2},{},{},\"{}\"",
            m.test,
            m.system.name(),
            m.workload,
            r.tps,
            r.qps,
            r.p95_ms,
            r.avg_ms,
            r.ignored_errors,
            m.clean(),
            m.error.clone().unwrap_or_default().replace('"', "'")
        );
    }
    fs::write(out.join("results.csv"), csv)?;
    let mut s = String::from("test,system,workload,sec,qps,dram_hit,bpe_hit,slow_read_iops,slow_write_iops,fast0_read_iops,fast0_write_iops,fast1_read_iops,fast1_write_iops\n");
    for m in ms {
        for r in &m.rows {
            let c = |v: Option<f64>, d: usize| v.map(|x| format!("{x:.d$}")).unwrap_or_default();
            let _ = write!(
                s,
                "{},{},{},{:.1},{:.1},{},{}",
                m.test,
                m.system.name(),
                m.workload,
                r.sec,
                r.qps,
                c(r.dram_hit, 4),
                c(r.bpe_hit, 4)
            );
            for i in 0..3 {
                let d = r.dev_iops.get(i);
                let _ = write!(s, ",{},{}", c(d.map(|x| x.0), 0), c(d.map(|x| x.1), 0));
            }
            s.push('\n');
        }
    }
    fs::write(out.join("samples.csv"), s)?;
    let mut fcsv = String::from("purpose,target,rw,iops,lat_mean_ms,lat_p95_ms\n");
    for (p, v) in [("probe", &f.probe), ("device_check", &f.device_check)] {
        for r in v {
            let _ = writeln!(
                fcsv,
                "{p},{},{},{:.0},{:.3},{:.3}",
                r.label, r.rw, r.iops, r.lat_mean_ms, r.lat_p95_ms
            );
        }
    }
    fs::write(out.join("fio.csv"), fcsv)?;

    // Charts.
    let systems: Vec<&str> = plan.systems.iter().map(|s| s.name()).collect();
    let mut charts_md = String::new();
    for test in &plan.tests {
        let tm: Vec<&Measurement> = ms.iter().filter(|m| &m.test == test).collect();
        let name = format!("qps_{test}.png");
        match charts::qps_bars(
            &out.join(&name),
            &format!(
                "QPS, {} test, {} threads",
                test_name(test),
                plan.args.threads
            ),
            &plan.args.workloads,
            &systems,
            &tm,
        ) {
            Ok(()) => {
                let _ = writeln!(charts_md, "![QPS {test}]({name})\n");
            }
            Err(e) => {
                let _ = writeln!(charts_md, "(chart {name} failed: {e:#})\n");
            }
        }
        for w in &plan.args.workloads {
            let wm: Vec<&Measurement> = tm.iter().copied().filter(|m| &m.workload == w).collect();
            let name = format!("timeline_{test}_{w}.png");
            match charts::timeline(
                &out.join(&name),
                &format!(
                    "{w}, {} test: per-second QPS and hit ratios",
                    test_name(test)
                ),
                &wm,
            ) {
                Ok(()) => {
                    let _ = writeln!(charts_md, "![{test} {w}]({name})\n");
                }
                Err(e) => {
                    let _ = writeln!(charts_md, "(chart {name} failed: {e:#})\n");
                }
            }
        }
    }

    // Markdown.
    let mut r = String::new();
    let all_clean = ms.iter().all(Measurement::clean);
    let _ = writeln!(
        r,
        "# tierdb lab: the seeds' BPE sysbench test, tierdb vs MariaDB ({})\n",
        crate::util::today()
    );
    if !f.kernel_tiers {
        let _ = writeln!(r, "> **Throttling: in-process fallback.** {}\n", f.tiers);
    }
    if !all_clean {
        let _ = writeln!(
            r,
            "> **Not every system answered every workload cleanly** — see the `status` column.\n"
        );
    }
    if plan.args.quick {
        let _ = writeln!(
            r,
            "> `--quick` run: tiny data for CI; the numbers say nothing about performance.\n"
        );
    }
    let _ = writeln!(r, "## Command\n\n```\n{}\n```\n", f.command_line);
    let _ = writeln!(
        r,
        "Total wall time: {:.1} min. tierdb binary: `{}`.\n",
        f.started.elapsed().as_secs_f64() / 60.0,
        f.tierdb_bin.display()
    );
    let _ = writeln!(r, "## Machine\n");
    let _ = writeln!(
        r,
        "- CPUs: {} × {}",
        sh("nproc"),
        sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2")
    );
    let _ = writeln!(r, "- RAM: {}", sh("free -h | awk '/Mem/{print $2}'"));
    let _ = writeln!(r, "- kernel: {}", sh("uname -sr"));
    let _ = writeln!(
        r,
        "- load average at the end: {}",
        sh("cut -d' ' -f1-3 /proc/loadavg")
    );
    let _ = writeln!(
        r,
        "- sysbench: {}; MariaDB: {}; fio: {}",
        sh("sysbench --version"),
        sh("mariadbd --version"),
        sh("fio --version")
    );
    let others = f.others_running.trim();
    let _ = writeln!(
        r,
        "- other database servers running when the lab started: {}\n",
        if others.is_empty() {
            "none".to_string()
        } else {
            format!("**yes** (noise): `{}`", others.replace('\n', "; "))
        }
    );
    let _ = writeln!(r, "## Tiers and throttling\n\n{}\n", f.tiers);
    if f.kernel_tiers {
        let _ = writeln!(r, "Each tier is a sparse image under `{}` on a loop device with direct I/O, ext4 (`noatime`), and the servers, sysbench's target and the fio probes run inside the blkio cgroup (started by `sh -c 'echo $$ > CG/cgroup.procs; exec …'`). sysbench itself runs outside it. Datasets are **prepared with the throttle lifted**, then the caps are applied for warm-up and measured runs.\n", plan.args.work.display());
        let _ = writeln!(
            r,
            "Throttle probe (fio, 16 KiB, direct I/O, 16 jobs, {} s each):\n",
            plan.fio_seconds
        );
        let _ = writeln!(r, "| target | rw | IOPS measured | cap | mean latency ms | p95 ms |\n|---|---|---:|---:|---:|---:|");
        for p in &f.probe {
            let _ = writeln!(
                r,
                "| {} | {} | {:.0} | {} | {:.2} | {:.2} |",
                p.label, p.rw, p.iops, plan.args.slow_iops, p.lat_mean_ms, p.lat_p95_ms
            );
        }
        r.push('\n');
    }
    let _ = writeln!(
        r,
        "### Device check (seed 003's question: do two devices beat one?)\n"
    );
    let _ = writeln!(r, "fio, 16 KiB random I/O, direct, 16 jobs per file, {} s; two devices = one file on each, concurrently, IOPS summed.{}\n", plan.fio_seconds, if f.kernel_tiers { format!(" Cap per fast device: {} IOPS.", plan.args.fast_iops) } else { " **Unthrottled host disk (fallback mode)**.".into() });
    let _ = writeln!(
        r,
        "| devices | rw | IOPS | mean latency ms | p95 ms |\n|---|---|---:|---:|---:|"
    );
    for p in &f.device_check {
        let _ = writeln!(
            r,
            "| {} | {} | {:.0} | {:.2} | {:.2} |",
            p.label, p.rw, p.iops, p.lat_mean_ms, p.lat_p95_ms
        );
    }
    if let Some(c) = f.device_check.first().map(|c| c.command.clone()) {
        let _ = writeln!(r, "\nfirst fio command: `{c}`");
    }
    r.push('\n');

    let _ = writeln!(r, "## Settings\n");
    let _ = writeln!(
        r,
        "- DRAM budget (tierdb `buffer_pool_size`, MariaDB `innodb_buffer_pool_size`): {}",
        crate::util::fmt_size(plan.pool)
    );
    let _ = writeln!(
        r,
        "- tierdb BPE size: {}",
        plan.args.bpe_size.clone().unwrap_or_else(|| format!(
            "server default (4 × pool = {})",
            crate::util::fmt_size(plan.pool * 4)
        ))
    );
    let _ = writeln!(
        r,
        "- sysbench: `--threads={} --rand-type=special --rand-spec-pct=15`, {} tables",
        plan.args.threads, plan.tables
    );
    for t in &plan.tests {
        let _ = writeln!(r, "- {} test: {} rows per table (≈ {} of row data, ≈ {:.1}× the pool); warm-up {} s with the same workload, then {} s measured", test_name(t), plan.table_size(t), crate::util::fmt_size(plan.table_size(t) * plan.tables as u64 * 250), (plan.table_size(t) * plan.tables as u64 * 250) as f64 / plan.pool as f64, plan.warmup, plan.run_seconds(t));
    }
    let _ = writeln!(r, "- durability on both: every commit fsynced (tierdb `flush_log_at_trx_commit=1`; MariaDB `innodb_flush_log_at_trx_commit=1`, `log_bin` + `sync_binlog=1`), O_DIRECT data I/O");
    let _ = writeln!(
        r,
        "- systems, run one after another on the same tiers (a cold BPE at each start):"
    );
    for s in &plan.systems {
        let _ = writeln!(r, "  - `{}`: {}", s.name(), s.describe());
    }
    let _ = writeln!(r, "\nDatasets (on the slow disk unless named fastdisk; reused when their marker matched):\n\n| test | folder | reused | size on disk |\n|---|---|---|---:|");
    for (t, d, reused, b) in &f.datasets {
        let _ = writeln!(
            r,
            "| {t} | `{d}` | {} | {} MiB |",
            if *reused { "yes" } else { "no, loaded now" },
            b >> 20
        );
    }
    let _ = writeln!(r, "\nServer commands:\n");
    for (k, c) in &f.server_commands {
        let _ = writeln!(r, "- {k}: `{c}`");
    }
    if let Some(m) = ms.iter().find(|m| !m.result.command.is_empty()) {
        let _ = writeln!(
            r,
            "\nA sysbench command (port differs per server): `{}`\n",
            m.result.command
        );
    }

    let _ = writeln!(r, "## Results\n");
    let _ = writeln!(r, "QPS/TPS/p95 from sysbench's summary; hit ratios and device IOPS are means of the per-second samples (`samples.csv`); device IOPS are completed I/Os of the loop devices (slow / fast0 / fast1).\n");
    let _ = writeln!(r, "| test | workload | system | QPS | TPS | p95 ms | DRAM hit | BPE hit | slow r/w IOPS | fast r/w IOPS | ignored errs | status |\n|---|---|---|---:|---:|---:|---:|---:|---|---|---:|---|");
    for m in ms {
        let rows = &m.rows;
        let dev = |i: usize| {
            let rd = mean(rows.iter().filter_map(|x| x.dev_iops.get(i).map(|d| d.0)));
            let wr = mean(rows.iter().filter_map(|x| x.dev_iops.get(i).map(|d| d.1)));
            (rd, wr)
        };
        let (sr, sw) = dev(0);
        let (f0r, f0w) = dev(1);
        let (f1r, f1w) = dev(2);
        let fast = match (f0r, f1r) {
            (Some(a), Some(b)) => format!(
                "{:.0}/{:.0}",
                a + b,
                f0w.unwrap_or(0.0) + f1w.unwrap_or(0.0)
            ),
            _ => "–".into(),
        };
        let _ = writeln!(
            r,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {} | {} | {} | {} | {} | {} |",
            m.test,
            m.workload,
            m.system.name(),
            m.result.qps,
            m.result.tps,
            m.result.p95_ms,
            pct(mean(rows.iter().filter_map(|x| x.dram_hit))),
            if m.system.is_tierdb() {
                pct(mean(rows.iter().filter_map(|x| x.bpe_hit)))
            } else {
                "–".into()
            },
            match (sr, sw) {
                (Some(a), Some(b)) => format!("{a:.0}/{b:.0}"),
                _ => "–".into(),
            },
            fast,
            m.result.ignored_errors,
            if m.clean() {
                "ok".to_string()
            } else {
                format!(
                    "**FAILED**: {}",
                    m.error.clone().unwrap_or_default().replace('|', "/")
                )
            }
        );
    }
    r.push('\n');

    let _ = writeln!(r, "## Ratios (QPS)\n");
    let _ = writeln!(r, "The seed's published BPE gains are for MySQL 8.0 on 8 vCPU / 16 GB, 30 × 40 M rows, 100 s runs (on ÷ off); 4 vCPU / 8 GB gave read ≈ +0 %, write +30 %, read-write +26 %.\n");
    let _ = writeln!(r, "| test | workload | BPE 1 dev ÷ off | BPE 2 dev ÷ off | seed's BPE on ÷ off | 2 dev ÷ 1 dev | tierdb BPE off ÷ MariaDB | best tierdb ÷ MariaDB |\n|---|---|---:|---:|---:|---:|---:|---:|");
    for t in &plan.tests {
        for w in &plan.args.workloads {
            let q = |s: System| {
                ms.iter()
                    .find(|m| &m.test == t && &m.workload == w && m.system == s && m.clean())
                    .map(|m| m.result.qps)
                    .filter(|q| *q > 0.0)
            };
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => format!("{:.2}× ({:+.0} %)", a / b, (a / b - 1.0) * 100.0),
                _ => "–".into(),
            };
            let best = [System::TierdbOff, System::TierdbBpe1, System::TierdbBpe2]
                .into_iter()
                .filter_map(q)
                .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
            let _ = writeln!(
                r,
                "| {t} | {w} | {} | {} | {} | {} | {} | {} |",
                ratio(q(System::TierdbBpe1), q(System::TierdbOff)),
                ratio(q(System::TierdbBpe2), q(System::TierdbOff)),
                if t == "io" {
                    seed_gain(w)
                        .map(|g| format!("{:.2}× (+{:.0} %)", 1.0 + g, g * 100.0))
                        .unwrap_or_else(|| "–".into())
                } else {
                    "(cache test: n/a)".into()
                },
                ratio(q(System::TierdbBpe2), q(System::TierdbBpe1)),
                ratio(q(System::TierdbOff), q(System::Mariadb)),
                ratio(best, q(System::Mariadb)),
            );
        }
    }
    r.push('\n');
    let _ = writeln!(r, "## Charts\n\n{charts_md}");
    let _ = writeln!(r, "## Caveats (generated)\n");
    let mut cav = vec![
        "Datasets are prepared once and reused across runs and systems of the same engine (the three tierdb variants share one); write workloads change rows but not the data size.".to_string(),
        "sysbench and the servers share the machine's CPUs; with few cores, CPU, not I/O, may bound the cache-resident numbers.".to_string(),
        "tierdb has no binlog; MariaDB writes and fsyncs one (sync_binlog=1), as the seed's setup did.".to_string(),
    ];
    if f.kernel_tiers {
        cav.push("ext4 journal writes are issued by the kernel's jbd2 thread, outside the cgroup, so they are not capped; buffered writeback is not charged to cgroup v1 either (both servers use O_DIRECT for data).".into());
    }
    cav.extend(f.notes.iter().cloned());
    for c in cav {
        let _ = writeln!(r, "- {c}");
    }
    let _ = writeln!(r, "\nRaw data: `results.csv`, `samples.csv`, `fio.csv`, server and sysbench logs under `logs/`.");
    fs::write(out.join("report.md"), r)?;
    Ok(())
}

fn test_name(t: &str) -> &'static str {
    if t == "io" {
        "I/O-bound"
    } else {
        "cache-resident"
    }
}
