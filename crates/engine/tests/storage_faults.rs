//! Storage faults injected below the engine through `tierdb_io::Faulty`:
//!
//! (a) one failed data-file write: the engine reports an error, then refuses every later
//!     write (sticky, even though the device works again) instead of pretending; after a
//!     reopen without faults every acknowledged commit is there and nothing else;
//! (b) a failed redo fsync: that commit returns an error and so does every later one (the
//!     log is poisoned); after a reopen every acknowledged commit is present and each failed
//!     transaction is entirely present or entirely absent;
//! (c) corrupt page reads after a restart with a tiny pool: the error names the page id
//!     ("page N"), nothing panics, and the page reads fine once the fault is gone;
//! (d) a torn data-page write followed by a crash: a child process tears one page write
//!     (reported as done, as a disk losing power after the ack would), freezes the data disk
//!     and is killed; recovery rebuilds the page from the full page image in the redo log
//!     and every acknowledged commit is intact.

mod common;

use common::*;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tierdb_engine::{DeviceWrapper, Engine, EngineConfig, Error, Row};
use tierdb_io::{BufferedFile, Device, Faulty};

fn setup_table(e: &Engine) -> Arc<tierdb_engine::Table> {
    e.create_database("f").expect("create database");
    e.create_table("f", kv_table("t")).expect("create table");
    e.table("f", "t").expect("table")
}

/// Reads every row of `f.t` into a map (id → row) through a fresh transaction.
fn table_contents(e: &Engine) -> BTreeMap<i64, Row> {
    let t = e.table("f", "t").expect("table");
    let mut tx = e.begin();
    scan_all(&mut tx, &t)
        .into_iter()
        .map(|r| (r[0].as_i64().expect("id"), r))
        .collect()
}

/// Inserts ids `first..first + n` (row value `tag`) in one transaction and commits.
fn insert_batch(e: &Engine, first: i64, n: i64, tag: i64) -> tierdb_engine::Result<()> {
    let t = e.table("f", "t")?;
    let mut tx = e.begin();
    for id in first..first + n {
        tx.insert(&t, kv_row(id, id % 13, tag))?;
    }
    tx.commit()
}

#[test]
fn failed_data_write_poisons_the_engine_and_loses_nothing_acknowledged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (wrap, slot) = faulty_data_wrapper();
    let mut cfg = small_cfg(dir.path(), 1 << 20);
    cfg.flush_log_at_trx_commit = 1;
    cfg.data_device_wrapper = Some(wrap);
    let e = Engine::open(cfg.clone()).expect("open");
    let f = faulty_of(&slot);
    setup_table(&e);
    const BATCH: i64 = 50;
    let mut acked: Vec<i64> = Vec::new(); // first ids of committed batches
    let mut next = 0i64;
    for _ in 0..10 {
        insert_batch(&e, next, BATCH, 1).expect("insert before the fault");
        acked.push(next);
        next += BATCH;
    }
    // The next data-file write fails; the device works again afterwards.
    let writes_before = f.stats().writes;
    f.fail_nth_write(1);
    let started = Instant::now();
    let first_err = loop {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no error surfaced after a failed data-file write (device writes: {} → {})",
            writes_before,
            f.stats().writes
        );
        match insert_batch(&e, next, BATCH, 2) {
            Ok(()) => acked.push(next),
            Err(err) => break err,
        }
        next += BATCH;
    };
    assert_eq!(f.stats().write_faults, 1, "the injected fault did not fire");
    let failed_batch = next;
    next += BATCH;
    let msg = first_err.to_string();
    assert!(
        matches!(first_err, Error::Io(_) | Error::Poisoned(_)),
        "unexpected error kind: {first_err:?}"
    );
    eprintln!("first error after the failed write: {msg}");
    // Sticky: the device is healthy again, but every write is refused with a clear message.
    assert!(f.plan().fail_write.is_none());
    let t = e.table("f", "t").expect("table");
    for i in 0..20 {
        let mut tx = e.begin();
        let r = match i % 3 {
            0 => tx.insert(&t, kv_row(next + i, 0, 3)).map(|_| ()),
            1 => tx.update(&t, &key(0), kv_row(0, 0, 3)).map(|_| ()),
            _ => tx.delete(&t, &key(1)).map(|_| ()),
        }
        .and_then(|_| tx.commit());
        let err = r.expect_err("a write was accepted after a data-file write failed");
        let m = err.to_string();
        assert!(
            m.contains("poison") || m.contains("refuses") || m.contains("earlier"),
            "the refusal does not say why: {m}"
        );
    }
    // Shutdown cannot flush the dirty pages: it must say so, not pretend.
    assert!(
        e.shutdown().is_err(),
        "shutdown reported success with unwritable pages"
    );
    drop(t);
    drop(e);
    let mut clean = cfg.clone();
    clean.data_device_wrapper = None;
    let e = Engine::open(clean).expect("reopen without faults");
    let got = table_contents(&e);
    let mut want = BTreeMap::new();
    for (i, &first) in acked.iter().enumerate() {
        for id in first..first + BATCH {
            want.insert(id, kv_row(id, id % 13, if i < 10 { 1 } else { 2 }));
        }
    }
    assert!(
        !got.contains_key(&failed_batch),
        "the failed transaction's rows are visible"
    );
    assert_eq!(got.len(), want.len(), "row count after recovery");
    assert!(got == want, "acknowledged rows differ after recovery");
    e.shutdown().expect("clean shutdown");
    drop(e);
    verify_data_file(dir.path()).expect("data file verifies");
}

/// An opener for redo segments that wraps each in a `Faulty` and keeps the handles.
type SegmentFaults = Arc<Mutex<Vec<Arc<Faulty<BufferedFile>>>>>;

fn faulty_redo_opener() -> (tierdb_wal::DeviceOpener, SegmentFaults) {
    let segs: SegmentFaults = Arc::new(Mutex::new(Vec::new()));
    let s2 = segs.clone();
    let opener: tierdb_wal::DeviceOpener = Arc::new(move |path: &Path| {
        let f = Arc::new(Faulty::new(BufferedFile::open(path, true)?));
        s2.lock().push(f.clone());
        Ok(f as Arc<dyn Device>)
    });
    (opener, segs)
}

#[test]
fn failed_redo_fsync_fails_that_commit_and_every_later_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (opener, segs) = faulty_redo_opener();
    let mut cfg = small_cfg(dir.path(), 4 << 20);
    cfg.flush_log_at_trx_commit = 1;
    cfg.redo_opener = Some(opener);
    let e = Engine::open(cfg.clone()).expect("open");
    assert!(
        !segs.lock().is_empty(),
        "the engine did not open its redo segments through EngineConfig::redo_opener"
    );
    setup_table(&e);
    const BATCH: i64 = 10;
    let mut acked = Vec::new();
    for b in 0..30 {
        insert_batch(&e, b * BATCH, BATCH, b).expect("commit before the fault");
        acked.push(b);
    }
    let syncs_before: u64 = segs.lock().iter().map(|f| f.stats().syncs).sum();
    assert!(
        syncs_before > 0,
        "commits with flush_log_at_trx_commit=1 did not fsync"
    );
    for f in segs.lock().iter() {
        f.fail_nth_sync(1);
    }
    let first = insert_batch(&e, 30 * BATCH, BATCH, 30);
    let err = first.expect_err("a commit whose redo fsync failed returned Ok");
    eprintln!("commit with a failed fsync: {err}");
    let sync_faults: u64 = segs.lock().iter().map(|f| f.stats().sync_faults).sum();
    assert_eq!(sync_faults, 1);
    // Later commits fail too, although the device has recovered.
    let mut failed = vec![30];
    for b in 31..40 {
        let r = insert_batch(&e, b * BATCH, BATCH, b);
        assert!(r.is_err(), "commit {b} succeeded on a poisoned redo log");
        failed.push(b);
    }
    let _ = e.shutdown();
    drop(e);
    let mut clean = cfg.clone();
    clean.redo_opener = None;
    let e = Engine::open(clean).expect("reopen without faults");
    let got = table_contents(&e);
    for &b in &acked {
        for id in b * BATCH..(b + 1) * BATCH {
            assert_eq!(
                got.get(&id),
                Some(&kv_row(id, id % 13, b)),
                "acknowledged row {id}"
            );
        }
    }
    for &b in &failed {
        let present = (b * BATCH..(b + 1) * BATCH)
            .filter(|id| got.get(id) == Some(&kv_row(*id, *id % 13, b)))
            .count();
        assert!(
            present == 0 || present == BATCH as usize,
            "failed transaction {b} is partly present ({present} of {BATCH} rows)"
        );
        eprintln!(
            "failed transaction {b}: {}",
            if present == 0 { "absent" } else { "present" }
        );
    }
    e.shutdown().expect("clean shutdown");
}

/// Records the offset of every read, outermost around a `Faulty`.
struct ReadLog {
    inner: Arc<dyn Device>,
    offsets: Mutex<Vec<u64>>,
}

impl Device for ReadLog {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.offsets.lock().push(offset);
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
}

type Handles = Arc<Mutex<Option<(Arc<FaultyDev>, Arc<ReadLog>)>>>;

fn logged_faulty_wrapper() -> (DeviceWrapper, Handles) {
    let slot: Handles = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    let w = DeviceWrapper(Arc::new(move |dev: Arc<dyn Device>| {
        let f = Arc::new(Faulty::new(dev));
        let log = Arc::new(ReadLog {
            inner: f.clone(),
            offsets: Mutex::new(Vec::new()),
        });
        *s2.lock() = Some((f, log.clone()));
        log as Arc<dyn Device>
    }));
    (w, slot)
}

/// True when `msg` names page `id` ("page 12", not "page 123").
fn names_page(msg: &str, id: u64) -> bool {
    let pat = format!("page {id}");
    msg.match_indices(&pat).any(|(i, _)| {
        !msg[i + pat.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

#[test]
fn corrupt_page_read_names_the_page_and_does_not_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = 3000i64;
    {
        let e = Engine::open(small_cfg(dir.path(), 8 << 20)).expect("open");
        setup_table(&e);
        for b in 0..rows / 500 {
            insert_batch(&e, b * 500, 500, 7).expect("load");
        }
        e.shutdown().expect("shutdown");
    }
    let (wrap, slot) = logged_faulty_wrapper();
    let mut cfg = small_cfg(dir.path(), 256 << 10); // the 16-frame minimum
    cfg.data_device_wrapper = Some(wrap);
    let e = Engine::open(cfg).expect("reopen with a tiny pool");
    let (f, log) = slot.lock().clone().expect("wrapper used");
    let t = e.table("f", "t").expect("table");
    let mut hits = 0;
    let mut probe = 0i64;
    // Point gets, scans and index scans, each meeting a corrupt page once.
    for round in 0..9 {
        let reads_before = log.offsets.lock().len();
        let corrupted_before = f.stats().corrupted_reads;
        f.corrupt_nth_read(1);
        let mut tx = e.begin();
        let mut result: Result<(), Error> = Ok(());
        // Keep reading pages until the armed corruption fires.
        for _ in 0..200 {
            probe = (probe + 677) % rows;
            result = match round % 3 {
                0 => tx.get(&t, &key(probe)).map(|r| {
                    assert_eq!(r, Some(kv_row(probe, probe % 13, 7)));
                }),
                1 => tx
                    .scan(&t, incl(probe), incl(probe + 40))
                    .and_then(|c| c.collect::<Result<Vec<_>, _>>())
                    .map(|_| ()),
                _ => tx
                    .index_scan(&t, 0, incl(probe % 13), incl(probe % 13))
                    .and_then(|c| c.collect::<Result<Vec<_>, _>>())
                    .map(|_| ()),
            };
            if f.stats().corrupted_reads > corrupted_before {
                break;
            }
            result.as_ref().expect("a read failed without a fault");
        }
        assert!(
            f.stats().corrupted_reads > corrupted_before,
            "no page was read"
        );
        let bad_page = log.offsets.lock()[reads_before] / tierdb_page::PAGE_SIZE as u64;
        let err = result.expect_err("a corrupt page was returned as good data");
        let msg = err.to_string();
        assert!(
            names_page(&msg, bad_page),
            "the error does not name page {bad_page}: {msg}"
        );
        if hits == 0 {
            eprintln!("corrupt read of page {bad_page}: {err:?}");
        }
        hits += 1;
        // Not cached: the same read succeeds once the disk returns good bytes.
        let mut tx = e.begin();
        for id in [probe, (probe + 1) % rows] {
            assert_eq!(
                tx.get(&t, &key(id)).expect("read after the fault"),
                Some(kv_row(id, id % 13, 7))
            );
        }
        assert_eq!(scan_all(&mut tx, &t).len() as i64, rows);
    }
    assert_eq!(hits, 9);
    e.shutdown().expect("shutdown");
}

// ---- (d) torn write + crash, in a child process ----

/// About 100 leaf pages of rows, more than the 64-frame pool: updates spread over the
/// table make the pool write pages back (flusher under pressure, or eviction).
const TORN_ROWS: i64 = 6000;

/// In place (the torn page is repaired from the redo log's full images) or relocating (the
/// torn write hits a slot no durable page map names).
fn torn_cfg(dir: &Path, relocating: bool) -> EngineConfig {
    let mut c = small_cfg(dir, 1 << 20);
    c.flush_log_at_trx_commit = 1;
    c.relocating_writes = relocating;
    c
}

/// Rows changed by update transaction `j` (20 rows spread over the table).
fn torn_txn_rows(j: i64) -> impl Iterator<Item = i64> {
    (0..20).map(move |i| (j * 37 + i * 151) % TORN_ROWS)
}

/// The child: load, arm a silent tear of the Nth data write, commit updates (printing
/// "ACK j") until a write was torn, freeze the data disk, print READY and wait to be killed.
fn run_torn_child(dir: &str, nth: u64, relocating: bool) {
    let (wrap, slot) = faulty_data_wrapper();
    let mut cfg = torn_cfg(Path::new(dir), relocating);
    cfg.data_device_wrapper = Some(wrap);
    let e = Engine::open(cfg).expect("child open");
    let f = faulty_of(&slot);
    let t = setup_table(&e);
    for b in 0..TORN_ROWS / 500 {
        insert_batch(&e, b * 500, 500, 0).expect("load");
    }
    let out = std::io::stdout();
    f.tear_nth_write(nth);
    let started = Instant::now();
    let mut j = 0i64;
    while f.stats().torn_writes == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no write was torn"
        );
        j += 1;
        let mut tx = e.begin();
        let r = torn_txn_rows(j)
            .try_for_each(|id| {
                // A new pad length moves the cell: most of the page changes.
                tx.update(&t, &key(id), kv_row(id, id % 13, j))
                    .map(|changed| assert!(changed))
            })
            .and_then(|_| tx.commit());
        match r {
            Ok(()) => {
                let mut o = out.lock();
                writeln!(o, "ACK {j}").expect("stdout");
                o.flush().expect("stdout");
            }
            // The torn page was evicted and read back here: the disk lied, stop.
            Err(err) if f.stats().torn_writes > 0 => {
                let mut o = out.lock();
                writeln!(o, "STOPPED {j}: {err}").expect("stdout");
                break;
            }
            Err(err) => panic!("update transaction {j} failed: {err}"),
        }
    }
    // Power lost: nothing more reaches the data file.
    f.fail_all_writes(true);
    {
        let mut o = out.lock();
        writeln!(o, "READY").expect("stdout");
        o.flush().expect("stdout");
    }
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn torn_child() {
    if let Ok(dir) = std::env::var("TORN_CHILD_DIR") {
        let nth = std::env::var("TORN_NTH")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let relocating = std::env::var("TORN_RELOCATING").is_ok_and(|v| v == "1");
        run_torn_child(&dir, nth, relocating);
    }
}

/// Pages of a data file that fail verification (not counting all-zero pages): at their
/// place in an in-place file, at the slot the page map names in a relocating one.
fn bad_pages(dir: &Path, relocating: bool) -> Vec<u64> {
    if relocating {
        return tierdb_engine::pagemap::read_mapped_pages(&dir.join("data"))
            .expect("read the mapped pages")
            .into_iter()
            .filter(|(id, p)| !tierdb_page::is_zeroed(p) && tierdb_page::verify(p, *id).is_err())
            .map(|(id, _)| id.0)
            .collect();
    }
    let data = std::fs::read(dir.join("data").join("tierdb.dat")).expect("read data file");
    data.chunks(tierdb_page::PAGE_SIZE)
        .enumerate()
        .filter(|(i, p)| {
            !tierdb_page::is_zeroed(p)
                && tierdb_page::verify(p, tierdb_page::PageId(*i as u64)).is_err()
        })
        .map(|(i, _)| i as u64)
        .collect()
}

#[test]
fn torn_page_write_then_crash_is_repaired_from_the_redo_log() {
    let torn_seen = torn_write_then_crash(false);
    assert!(torn_seen > 0, "no torn page ever reached the data file");
}

#[test]
fn a_torn_relocated_write_never_reaches_a_page_the_map_names() {
    let torn_seen = torn_write_then_crash(true);
    assert_eq!(torn_seen, 0, "a torn slot is named by the durable page map");
}

/// Tears the Nth data write of a child under update load, kills it, and recovers: every
/// acknowledged update is there. Returns how many torn pages recovery found in place.
fn torn_write_then_crash(relocating: bool) -> usize {
    let exe = std::env::current_exe().expect("current exe");
    let mut torn_seen = 0;
    for nth in [1u64, 4, 16, 40, 80] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(&exe)
            .args(["--exact", "torn_child", "--nocapture", "--test-threads=1"])
            .env("TORN_CHILD_DIR", dir.path())
            .env("TORN_NTH", nth.to_string())
            .env("TORN_RELOCATING", if relocating { "1" } else { "0" })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let stdout = child.stdout.take().expect("child stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // The harness prints "test torn_child ... " before the first line.
                if let Some((_, n)) = line.split_once("ACK ") {
                    let _ = tx.send(n.trim().parse::<i64>().expect("ack number"));
                } else if line.ends_with("READY") {
                    let _ = tx.send(-1);
                }
            }
        });
        let mut acked = Vec::new();
        loop {
            match rx.recv_timeout(Duration::from_secs(60)) {
                Ok(-1) => break,
                Ok(j) => acked.push(j),
                Err(_) => {
                    let _ = child.kill();
                    panic!("child (nth {nth}) never reported READY");
                }
            }
        }
        child.kill().expect("kill");
        child.wait().expect("wait");
        reader.join().expect("reader");
        let bad = bad_pages(dir.path(), relocating);
        torn_seen += bad.len();
        // Recovery: redo from the checkpoint, full images repair the torn page.
        let e = Engine::open(torn_cfg(dir.path(), relocating)).expect("recovery");
        let mut want: BTreeMap<i64, Row> = (0..TORN_ROWS)
            .map(|id| (id, kv_row(id, id % 13, 0)))
            .collect();
        for &j in &acked {
            for id in torn_txn_rows(j) {
                want.insert(id, kv_row(id, id % 13, j));
            }
        }
        let got = table_contents(&e);
        let diff: Vec<String> = want
            .iter()
            .filter(|(id, w)| got.get(id) != Some(w))
            .take(5)
            .map(|(id, w)| {
                let g = got.get(id).map(|g| format!("v {}", g[3]));
                format!("id {id}: got {g:?}, want v {}", w[3])
            })
            .collect();
        assert!(
            got == want,
            "nth {nth}: acked {} update transactions; first differences: {diff:?}",
            acked.len()
        );
        assert!(
            got == want,
            "nth {nth}: data differs after recovery ({} rows, expected {}; torn pages {bad:?})",
            got.len(),
            want.len()
        );
        let t = e.table("f", "t").expect("table");
        let mut tx = e.begin();
        assert_eq!(index_scan_all(&mut tx, &t, 0).len() as i64, TORN_ROWS);
        drop(tx);
        e.shutdown().expect("shutdown");
        drop(e);
        verify_data_file(dir.path()).unwrap_or_else(|err| panic!("nth {nth}: {err}"));
        eprintln!(
            "nth {nth}: {} acked updates, torn pages on disk before recovery: {bad:?}",
            acked.len()
        );
    }
    torn_seen
}
