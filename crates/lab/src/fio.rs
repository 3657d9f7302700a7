//! fio measurements: the throttle probe (is the cap on each tier really in force?) and the
//! device check in the spirit of seed 003 (16 KiB random read/write IOPS and latency on one
//! fast device vs both at once).
//!
//! Owns: fio command lines and parsing fio's JSON output.
//! Must never: write outside the tier directories it is given.

use crate::tiers::Tiers;
use crate::util::{describe, run};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

const FILE_SIZE: &str = "128M";

#[derive(Clone, Debug)]
pub struct FioResult {
    pub label: String,
    pub rw: String,
    pub iops: f64,
    pub lat_mean_ms: f64,
    pub lat_p95_ms: f64,
    pub command: String,
}

fn file_on(dir: &Path) -> PathBuf {
    dir.join("lab-fio.dat")
}

/// Lays out the test files (unthrottled) so that measurements are not layout.
pub fn layout(tiers: &Tiers, dirs: &[&Path]) -> Result<()> {
    tiers.set_throttle(false)?;
    for d in dirs {
        let f = file_on(d);
        if f.metadata().map(|m| m.len()).unwrap_or(0) >= 128 << 20 {
            continue;
        }
        run(Command::new("fio")
            .args([
                "--name=layout",
                "--rw=write",
                "--bs=1M",
                "--direct=1",
                "--size",
                FILE_SIZE,
                "--output-format=json",
            ])
            .arg(format!("--filename={}", f.display())))?;
    }
    tiers.set_throttle(true)
}

/// 16 KiB random `rw` (randread|randwrite) on all `dirs` at once, 16 jobs per file, direct I/O,
/// inside the tiers' cgroup; IOPS summed over the files.
pub fn measure(
    tiers: &Tiers,
    label: &str,
    dirs: &[&Path],
    rw: &str,
    seconds: u32,
) -> Result<FioResult> {
    let mut c = tiers.command(Path::new("fio"));
    c.args([
        "--ioengine=psync",
        "--direct=1",
        "--bs=16k",
        "--numjobs=16",
        "--group_reporting",
        "--time_based",
        "--output-format=json",
    ])
    .arg(format!("--rw={rw}"))
    .arg(format!("--runtime={seconds}"))
    .arg(format!("--size={FILE_SIZE}"));
    for (i, d) in dirs.iter().enumerate() {
        c.arg(format!("--name=dev{i}"))
            .arg(format!("--filename={}", file_on(d).display()));
    }
    let command = describe(&c);
    let out = run(&mut c)?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).context("parsing fio JSON")?;
    let dir = if rw.contains("read") { "read" } else { "write" };
    let (mut iops, mut lat_sum, mut p95) = (0.0, 0.0, 0.0f64);
    let jobs = v["jobs"].as_array().cloned().unwrap_or_default();
    for j in &jobs {
        let s = &j[dir];
        let i = s["iops"].as_f64().unwrap_or(0.0);
        iops += i;
        lat_sum += s["clat_ns"]["mean"].as_f64().unwrap_or(0.0) * i;
        p95 = p95.max(
            s["clat_ns"]["percentile"]["95.000000"]
                .as_f64()
                .unwrap_or(0.0),
        );
    }
    Ok(FioResult {
        label: label.to_string(),
        rw: rw.to_string(),
        iops,
        lat_mean_ms: if iops > 0.0 {
            lat_sum / iops / 1e6
        } else {
            0.0
        },
        lat_p95_ms: p95 / 1e6,
        command,
    })
}
