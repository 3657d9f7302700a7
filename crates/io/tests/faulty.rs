//! Scenarios for `Faulty`: fail, tear or corrupt the Nth I/O, sticky failures, clearing.

use std::io::ErrorKind;
use std::sync::Arc;

use tierdb_io::{
    AlignedBuf, BufferedFile, Device, DirectFile, FaultPlan, Faulty, TearMode, DIRECT_ALIGN,
};

fn buffered(dir: &tempfile::TempDir) -> Faulty<BufferedFile> {
    Faulty::new(BufferedFile::open(&dir.path().join("disk"), true).expect("open"))
}

fn read_vec(dev: &(impl Device + ?Sized), len: usize, offset: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    dev.read_at(&mut buf, offset).expect("read");
    buf
}

#[test]
fn faulty_device_fails_the_nth_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    dev.fail_nth_write(3);
    dev.write_at(b"one", 0).expect("1st write");
    dev.write_at(b"two", 3).expect("2nd write");
    let err = dev.write_at(b"three", 6).expect_err("3rd write fails");
    assert_eq!(err.kind(), ErrorKind::Other);
    assert_eq!(err.to_string(), "injected write fault");
    // The failed write reached nothing; the 4th goes through (the fault fires once).
    assert_eq!(dev.len().expect("len"), 6);
    dev.write_at(b"four", 6).expect("4th write");
    let stats = dev.stats();
    assert_eq!(stats.writes, 4);
    assert_eq!(stats.write_faults, 1);
    assert_eq!(stats.faults_injected(), 1);
    assert_eq!(dev.plan(), FaultPlan::default());
}

#[test]
fn faulty_device_fails_the_nth_read_and_sync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    dev.write_at(b"data", 0).expect("write");
    dev.fail_nth_read(1);
    dev.fail_nth_sync(2);
    let mut buf = [0u8; 4];
    let err = dev.read_at(&mut buf, 0).expect_err("next read fails");
    assert_eq!(err.to_string(), "injected read fault");
    dev.read_at(&mut buf, 0).expect("following read");
    dev.sync().expect("1st sync");
    let err = dev.sync().expect_err("2nd sync fails");
    assert_eq!(err.to_string(), "injected sync fault");
    dev.sync().expect("3rd sync");
    let stats = dev.stats();
    assert_eq!((stats.read_faults, stats.sync_faults), (1, 1));
    assert_eq!((stats.reads, stats.syncs), (2, 3));
}

#[test]
fn faulty_device_tears_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    dev.write_at(&[0xAA; 100], 0).expect("old contents");
    dev.tear_nth_write(1);
    dev.write_at(&[0x55; 100], 0)
        .expect("torn write reports success");
    let back = read_vec(&dev, 100, 0);
    assert!(back[..50].iter().all(|&b| b == 0x55), "first half new");
    assert!(back[50..].iter().all(|&b| b == 0xAA), "second half old");
    assert_eq!(dev.stats().torn_writes, 1);
}

#[test]
fn faulty_device_tears_a_write_then_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    dev.tear_nth_write_then_fail(2);
    dev.write_at(&[1; 10], 0).expect("1st write");
    let err = dev.write_at(&[2; 10], 10).expect_err("torn with error");
    assert_eq!(err.to_string(), "injected torn write");
    assert_eq!(dev.len().expect("len"), 15, "half of the torn write landed");
}

#[test]
fn faulty_tear_on_direct_file_keeps_alignment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = Faulty::new(DirectFile::open(&dir.path().join("data"), true).expect("open"));
    let old = AlignedBuf::copy_from(&[0xAA; 4 * DIRECT_ALIGN]);
    dev.write_at(&old, 0).expect("old contents");
    dev.set_plan(FaultPlan {
        tear_write: Some((1, TearMode::Silent)),
        ..FaultPlan::default()
    });
    // 3 blocks: half is 1.5 blocks, rounded down to 1 so the prefix stays aligned.
    let new = AlignedBuf::copy_from(&[0x55; 3 * DIRECT_ALIGN]);
    dev.write_at(&new, 0).expect("torn write");
    let mut back = AlignedBuf::new(4 * DIRECT_ALIGN).expect("buf");
    dev.read_at(&mut back, 0).expect("read");
    assert!(back[..DIRECT_ALIGN].iter().all(|&b| b == 0x55));
    assert!(back[DIRECT_ALIGN..].iter().all(|&b| b == 0xAA));
}

#[test]
fn faulty_device_corrupts_a_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    let data = vec![0x5Au8; 4096];
    dev.write_at(&data, 0).expect("write");
    dev.corrupt_nth_read(2);
    assert_eq!(read_vec(&dev, 4096, 0), data, "1st read clean");
    let bad = read_vec(&dev, 4096, 0);
    assert_ne!(bad, data, "2nd read corrupted");
    let flipped = bad.iter().zip(&data).filter(|(a, b)| a != b).count();
    assert!((1..=8).contains(&flipped), "{flipped} bytes flipped");
    assert_eq!(
        read_vec(&dev, 4096, 0),
        data,
        "3rd read clean; disk untouched"
    );
    assert_eq!(dev.stats().corrupted_reads, 1);
}

#[test]
fn sticky_failures_persist_until_cleared() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = buffered(&dir);
    dev.write_at(b"abcd", 0).expect("write");
    dev.fail_all_reads(true);
    dev.fail_all_writes(true);
    dev.fail_all_syncs(true);
    let mut buf = [0u8; 4];
    for _ in 0..3 {
        assert!(dev.read_at(&mut buf, 0).is_err());
        assert!(dev.write_at(b"x", 0).is_err());
        assert!(dev.sync().is_err());
    }
    // Metadata is never faulted.
    assert_eq!(dev.len().expect("len"), 4);
    let stats = dev.stats();
    assert_eq!(
        stats.read_faults + stats.write_faults + stats.sync_faults,
        9
    );

    dev.fail_all_writes(false);
    dev.write_at(b"z", 0).expect("writes re-enabled");
    assert!(dev.read_at(&mut buf, 0).is_err(), "reads still failing");

    dev.clear();
    dev.read_at(&mut buf, 0).expect("read after clear");
    assert_eq!(&buf, b"zbcd");
    dev.sync().expect("sync after clear");
}

#[test]
fn faulty_wraps_a_shared_device_and_inner_bypasses_faults() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shared: Arc<dyn Device> =
        Arc::new(BufferedFile::open(&dir.path().join("disk"), true).expect("open"));
    let dev = Faulty::new(Arc::clone(&shared));
    dev.fail_all_writes(true);
    assert!(dev.write_at(b"no", 0).is_err());
    dev.inner()
        .write_at(b"yes", 0)
        .expect("inner bypasses faults");
    assert_eq!(read_vec(&*shared, 3, 0), b"yes");
    assert_eq!(dev.name(), shared.name());
}
