//! Scenarios for `Throttled`: the IOPS cap holds, concurrent latency overlaps, read and
//! write caps are separate, sync counts as a write. Timing bounds are generous: these check
//! the mechanism, they are not benchmarks.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tierdb_io::{BufferedFile, Device, ThrottleConfig, Throttled};

fn small_file(dir: &tempfile::TempDir) -> BufferedFile {
    let file = BufferedFile::open(&dir.path().join("disk"), true).expect("open");
    file.write_at(&[0u8; 4096], 0).expect("fill");
    file
}

fn run_reads(dev: &Arc<Throttled<BufferedFile>>, threads: usize, per_thread: usize) -> Duration {
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let dev = Arc::clone(dev);
            thread::spawn(move || {
                let mut buf = [0u8; 512];
                for _ in 0..per_thread {
                    dev.read_at(&mut buf, 0).expect("read");
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("reader thread");
    }
    start.elapsed()
}

#[test]
fn throttled_device_caps_iops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ThrottleConfig {
        read_iops: 1000,
        ..ThrottleConfig::default()
    };
    let dev = Arc::new(Throttled::new(small_file(&dir), config));
    // 400 reads at 1000 IOPS: slots 1 ms apart, the last starts ≥ 399 ms after the first.
    let elapsed = run_reads(&dev, 8, 50);
    assert!(
        elapsed >= Duration::from_millis(390),
        "too fast: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_millis(1500),
        "too slow: {elapsed:?}"
    );
    let stats = dev.stats();
    assert_eq!(stats.reads, 400);
    assert_eq!(stats.bytes_read, 400 * 512);
    assert_eq!(stats.writes, 0);
}

#[test]
fn throttled_device_overlaps_concurrent_latency() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ThrottleConfig {
        latency_us: 20_000,
        ..ThrottleConfig::default()
    };
    let dev = Arc::new(Throttled::new(small_file(&dir), config));
    // Serialised, 32 I/Os × 20 ms would take 640 ms.
    let elapsed = run_reads(&dev, 32, 1);
    assert!(
        elapsed >= Duration::from_millis(20),
        "latency not applied: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_millis(300),
        "latency serialised: {elapsed:?}"
    );
    // Each I/O waited about 20 ms.
    assert!(dev.stats().wait_us_total >= 32 * 20_000);
}

#[test]
fn throttled_read_and_write_caps_are_independent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ThrottleConfig {
        read_iops: 0,
        write_iops: 10,
        ..ThrottleConfig::default()
    };
    let dev = Arc::new(Throttled::new(small_file(&dir), config));
    // Reads are unlimited even though writes are capped at 10/s.
    let elapsed = run_reads(&dev, 4, 100);
    assert!(
        elapsed < Duration::from_millis(500),
        "reads throttled: {elapsed:?}"
    );
    // Three writes at 10/s: the third starts ≥ 200 ms after the first.
    let start = Instant::now();
    for i in 0..3u64 {
        dev.write_at(b"x", i).expect("write");
    }
    let elapsed = start.elapsed();
    assert!(
        elapsed >= Duration::from_millis(190),
        "writes not capped: {elapsed:?}"
    );
    assert!(
        elapsed < Duration::from_millis(1000),
        "too slow: {elapsed:?}"
    );
}

#[test]
fn throttled_sync_counts_as_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = Throttled::new(small_file(&dir), ThrottleConfig::default());
    dev.write_at(b"abc", 0).expect("write");
    dev.sync().expect("sync");
    let stats = dev.stats();
    assert_eq!(stats.writes, 2);
    assert_eq!(stats.syncs, 1);
    assert_eq!(stats.bytes_written, 3);
    assert_eq!(dev.name(), dev.inner().name());
}

#[test]
fn throttled_jitter_stays_within_bounds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = ThrottleConfig {
        jitter_us: 2_000,
        ..ThrottleConfig::default()
    };
    let dev = Throttled::new(small_file(&dir), config);
    let mut buf = [0u8; 16];
    let n = 50;
    let start = Instant::now();
    for _ in 0..n {
        dev.read_at(&mut buf, 0).expect("read");
    }
    let elapsed = start.elapsed();
    // Mean jitter is 1 ms; all-zero or all-maximal draws would be astronomically unlikely.
    let mean_us = dev.stats().wait_us_total / n;
    assert!((200..5_000).contains(&mean_us), "mean wait {mean_us} us");
    assert!(elapsed < Duration::from_millis(n * 2 + 500), "{elapsed:?}");
}

#[test]
fn throttled_config_can_change_at_runtime() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = Throttled::new(
        small_file(&dir),
        ThrottleConfig {
            latency_us: 1_000_000,
            ..ThrottleConfig::default()
        },
    );
    dev.set_config(ThrottleConfig::default());
    assert_eq!(dev.config(), ThrottleConfig::default());
    let start = Instant::now();
    let mut buf = [0u8; 16];
    dev.read_at(&mut buf, 0).expect("read");
    assert!(start.elapsed() < Duration::from_millis(500));
}

#[test]
fn throttled_shared_cap_is_spent_by_reads_and_writes_together() {
    let dir = tempfile::tempdir().expect("tempdir");
    let separate = ThrottleConfig {
        read_iops: 20,
        write_iops: 20,
        ..ThrottleConfig::default()
    };
    let shared = ThrottleConfig {
        total_iops: 20,
        ..ThrottleConfig::default()
    };
    // 5 reads and 5 writes interleaved: with separate caps of 20/s each direction's fifth
    // I/O starts 200 ms after its first; with one shared cap of 20/s the tenth I/O starts
    // 450 ms after the first.
    let run = |config: ThrottleConfig| {
        let dev = Throttled::new(small_file(&dir), config);
        let mut buf = [0u8; 16];
        let start = Instant::now();
        for i in 0..5u64 {
            dev.read_at(&mut buf, 0).expect("read");
            dev.write_at(b"y", i).expect("write");
        }
        start.elapsed()
    };
    let apart = run(separate);
    let together = run(shared);
    assert!(
        apart >= Duration::from_millis(190) && apart < Duration::from_millis(400),
        "separate caps: {apart:?}"
    );
    assert!(
        together >= Duration::from_millis(440),
        "shared cap not applied: {together:?}"
    );
    assert!(
        together < Duration::from_millis(2000),
        "too slow: {together:?}"
    );
}
