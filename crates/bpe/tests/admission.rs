//! Admission: `second_touch` keeps a one-off scan out while re-evicted pages get in; a slow
//! device never blocks the evicting thread — admissions are rejected as "backlog" instead.

mod common;

use std::time::Instant;

use common::*;
use tierdb_bpe::{AdmissionPolicy, Bpe, Trust};
use tierdb_io::ThrottleConfig;

#[test]
fn second_touch_keeps_a_scan_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), 1, 16 * REGION_64K, REGION_64K);
    c.admission = AdmissionPolicy::SecondTouch;
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    // A scan: each page evicted once.
    for id in 1000..1200u64 {
        evict(&bpe, id, 1);
    }
    let s = bpe.stats();
    assert!(s.rejected_scan >= 195, "{s:?}");
    assert!(s.pages_admitted <= 5, "{s:?}");
    // A hot page evicted twice is admitted the second time.
    evict(&bpe, 7, 1);
    evict(&bpe, 7, 1);
    bpe.flush();
    assert!(hit_exact(&bpe, 7, 1));
    // Switch online to `always`: admitted on first eviction.
    bpe.set_admission(AdmissionPolicy::Always);
    evict(&bpe, 8, 1);
    bpe.flush();
    assert!(hit_exact(&bpe, 8, 1));
    assert!(bpe
        .variables()
        .iter()
        .any(|(k, v)| *k == "tierdb_bpe_admission" && v == "always"));
}

#[test]
fn slow_device_rejects_as_backlog_without_blocking_evictions() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut c = cfg(dir.path(), 1, 32 * REGION_64K, REGION_64K);
    c.max_write_backlog_regions = 1;
    c.throttle = Some(ThrottleConfig {
        write_iops: 4,
        latency_us: 100_000,
        ..ThrottleConfig::default()
    });
    let bpe = Bpe::open(c, Trust::Cold).expect("open");
    let start = Instant::now();
    for id in 0..300u64 {
        evict(&bpe, id, 1);
    }
    let took = start.elapsed();
    let s = bpe.stats();
    // One wait for the device would be a write (at 4 per second) plus 100 ms latency; the
    // bound leaves room for a busy machine.
    assert!(
        took.as_millis() < 200,
        "evictions never wait for the device: {took:?}"
    );
    assert!(s.rejected_backlog > 250, "{s:?}");
    assert_eq!(s.pages_admitted + s.rejected_backlog, 300);
    let names: Vec<String> = s.status_vars().into_iter().map(|(k, _)| k).collect();
    assert!(names.contains(&"Tierdb_bpe_rejected_backlog".to_string()));
    assert!(names.contains(&"Tierdb_bpe_device0_hits".to_string()));
}
