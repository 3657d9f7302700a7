//! Per-second sampling during a measured run: `SHOW GLOBAL STATUS` (Questions, buffer pool
//! requests/reads, BPE hits/lookups) over one connection, plus completed reads/writes of each
//! kernel tier device from /sys/block/<loop>/stat; turned into per-second deltas.
//!
//! Owns: the sampling thread and the delta arithmetic.
//! Must never: fail a run because a sample was missed (a missing sample is a gap).

use crate::tiers::read_dev_stats;
use mysql::prelude::Queryable;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const KEYS: &[&str] = &[
    "Questions",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_reads",
    "Tierdb_bpe_hits",
    "Tierdb_bpe_lookups",
];

struct Sample {
    t: f64,
    status: HashMap<String, u64>,
    dev: Vec<(u64, u64)>,
}

/// One second of a run.
#[derive(Clone, Debug)]
pub struct Row {
    pub sec: f64,
    pub qps: f64,
    /// 1 − pool reads / pool read requests in this second.
    pub dram_hit: Option<f64>,
    /// BPE hits / BPE lookups in this second (tierdb only).
    pub bpe_hit: Option<f64>,
    /// (read IOPS, write IOPS) per kernel device: slow, fast0, fast1.
    pub dev_iops: Vec<(f64, f64)>,
}

pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Vec<Sample>>,
}

pub fn start(port: u16, loop_names: Vec<String>) -> Sampler {
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut conn = crate::util::connect(port, None).ok();
        let t0 = Instant::now();
        let mut out = Vec::new();
        let mut k = 0u32;
        while !s2.load(Ordering::SeqCst) {
            let t = t0.elapsed().as_secs_f64();
            let dev = read_dev_stats(&loop_names);
            let mut status = HashMap::new();
            if conn.is_none() {
                conn = crate::util::connect(port, None).ok();
            }
            if let Some(c) = conn.as_mut() {
                match c.query::<(String, String), _>("SHOW GLOBAL STATUS") {
                    Ok(rows) => {
                        for (n, v) in rows {
                            if KEYS.iter().any(|k| k.eq_ignore_ascii_case(&n)) {
                                if let Ok(v) = v.parse() {
                                    status.insert(n, v);
                                }
                            }
                        }
                    }
                    Err(_) => conn = None,
                }
            }
            if !status.is_empty() {
                out.push(Sample { t, status, dev });
            }
            k += 1;
            let next = t0 + Duration::from_secs(k as u64);
            while Instant::now() < next && !s2.load(Ordering::SeqCst) {
                std::thread::sleep(
                    Duration::from_millis(20).min(next.saturating_duration_since(Instant::now())),
                );
            }
        }
        out
    });
    Sampler { stop, handle }
}

impl Sampler {
    pub fn finish(self) -> Vec<Row> {
        self.stop.store(true, Ordering::SeqCst);
        let samples = self.handle.join().unwrap_or_default();
        deltas(&samples)
    }
}

fn deltas(s: &[Sample]) -> Vec<Row> {
    let g = |x: &Sample, k: &str| x.status.get(k).copied();
    s.windows(2)
        .map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let dt = (b.t - a.t).max(1e-3);
            let d = |k: &str| match (g(a, k), g(b, k)) {
                (Some(x), Some(y)) => Some(y.saturating_sub(x) as f64),
                _ => None,
            };
            let ratio = |num: Option<f64>, den: Option<f64>| match (num, den) {
                (Some(n), Some(d)) if d > 0.0 => Some(n / d),
                _ => None,
            };
            let misses = d("Innodb_buffer_pool_reads");
            let reqs = d("Innodb_buffer_pool_read_requests");
            Row {
                sec: b.t,
                qps: d("Questions").unwrap_or(0.0) / dt,
                dram_hit: ratio(misses, reqs).map(|m| 1.0 - m),
                bpe_hit: ratio(d("Tierdb_bpe_hits"), d("Tierdb_bpe_lookups")),
                dev_iops: a
                    .dev
                    .iter()
                    .zip(&b.dev)
                    .map(|(x, y)| {
                        (
                            (y.0.saturating_sub(x.0)) as f64 / dt,
                            (y.1.saturating_sub(x.1)) as f64 / dt,
                        )
                    })
                    .collect(),
            }
        })
        .collect()
}
