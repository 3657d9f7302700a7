//! Test support: a `PageStore` over a real file with knobs (read delay, write failure, a gate
//! that holds one page's write, WAL-rule checking, counters), a recording `WalGate`, and page
//! builders. Every page written through the store is checked: aligned, PAGE_SIZE, sealed,
//! and naming the page it is written to.
#![allow(dead_code)]

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tierdb_buffer::{BufferPool, Lsn, PageId, PageStore, PoolConfig, WalGate, PAGE_SIZE};
use tierdb_page::{format, page_lsn, seal, set_page_lsn, verify, PageType, PAGE_HEADER_SIZE};

/// Offset of the test payload: a u64 counter, then the page id again.
pub const COUNTER_AT: usize = PAGE_HEADER_SIZE;
const ID_AT: usize = PAGE_HEADER_SIZE + 8;

/// Holds the write of one page until opened.
#[derive(Default)]
pub struct Gate {
    state: Mutex<(bool, bool)>, // (entered, open)
    cv: Condvar,
}

impl Gate {
    pub fn wait_entered(&self) {
        let mut s = self.state.lock().unwrap();
        while !s.0 {
            s = self.cv.wait(s).unwrap();
        }
    }
    pub fn open(&self) {
        self.state.lock().unwrap().1 = true;
        self.cv.notify_all();
    }
    fn pass(&self) {
        let mut s = self.state.lock().unwrap();
        s.0 = true;
        self.cv.notify_all();
        while !s.1 {
            s = self.cv.wait(s).unwrap();
        }
    }
}

pub struct TestStore {
    file: File,
    _dir: tempfile::TempDir,
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub syncs: AtomicU64,
    pub read_delay_ms: AtomicU64,
    in_flight: AtomicUsize,
    pub max_reads_in_flight: AtomicUsize,
    pub fail_writes: AtomicBool,
    pub fail_sync: AtomicBool,
    reads_by_page: Mutex<HashMap<u64, u64>>,
    writes_by_page: Mutex<HashMap<u64, u64>>,
    /// When set, every write checks `page_lsn <= wal.flushed`.
    wal: Option<Arc<RecordingWal>>,
    pub wal_violations: AtomicU64,
    /// Writes that were misaligned, the wrong size, unsealed or for another page.
    pub bad_writes: AtomicU64,
    pub bad_reads: AtomicU64,
    gate: Mutex<Option<(PageId, Arc<Gate>)>>,
    /// Claim `writes_anywhere` (pages still land at their own offsets, one batch = one write).
    pub anywhere: AtomicBool,
    /// Pages per `write_batch` call, in order.
    pub batches: Mutex<Vec<usize>>,
}

impl TestStore {
    pub fn new() -> Arc<TestStore> {
        Self::build(None)
    }

    pub fn checking_wal(wal: Arc<RecordingWal>) -> Arc<TestStore> {
        Self::build(Some(wal))
    }

    fn build(wal: Option<Arc<RecordingWal>>) -> Arc<TestStore> {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.path().join("data.tdb"))
            .unwrap();
        Arc::new(TestStore {
            file,
            _dir: dir,
            reads: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            read_delay_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            max_reads_in_flight: AtomicUsize::new(0),
            fail_writes: AtomicBool::new(false),
            fail_sync: AtomicBool::new(false),
            reads_by_page: Mutex::new(HashMap::new()),
            writes_by_page: Mutex::new(HashMap::new()),
            wal,
            wal_violations: AtomicU64::new(0),
            bad_writes: AtomicU64::new(0),
            bad_reads: AtomicU64::new(0),
            gate: Mutex::new(None),
            anywhere: AtomicBool::new(false),
            batches: Mutex::new(Vec::new()),
        })
    }

    /// Writes bytes at page `id`'s offset, bypassing every check and counter.
    pub fn put_raw(&self, id: PageId, bytes: &[u8]) {
        self.file.write_all_at(bytes, id.offset()).unwrap();
    }

    pub fn get_raw(&self, id: PageId) -> Vec<u8> {
        let mut b = vec![0u8; PAGE_SIZE];
        self.file.read_exact_at(&mut b, id.offset()).unwrap();
        b
    }

    /// Fills pages `0..n` with valid pages carrying counter `counter_of(id)`.
    pub fn fill(&self, n: u64, counter_of: impl Fn(u64) -> u64) {
        let mut all = Vec::with_capacity(n as usize * PAGE_SIZE);
        for i in 0..n {
            all.extend_from_slice(&page_bytes(PageId(i), counter_of(i)));
        }
        self.file.write_all_at(&all, 0).unwrap();
    }

    pub fn reads_of(&self, id: PageId) -> u64 {
        self.reads_by_page
            .lock()
            .unwrap()
            .get(&id.0)
            .copied()
            .unwrap_or(0)
    }

    pub fn writes_of(&self, id: PageId) -> u64 {
        self.writes_by_page
            .lock()
            .unwrap()
            .get(&id.0)
            .copied()
            .unwrap_or(0)
    }

    /// The next write of `id` blocks until the returned gate is opened.
    pub fn gate_write(&self, id: PageId) -> Arc<Gate> {
        let g = Arc::new(Gate::default());
        *self.gate.lock().unwrap() = Some((id, Arc::clone(&g)));
        g
    }
}

fn aligned(buf: &[u8]) -> bool {
    (buf.as_ptr() as usize).is_multiple_of(4096) && buf.len() == PAGE_SIZE
}

impl PageStore for TestStore {
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> io::Result<()> {
        if !aligned(buf) {
            self.bad_reads.fetch_add(1, Ordering::SeqCst);
        }
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_reads_in_flight.fetch_max(now, Ordering::SeqCst);
        let delay = self.read_delay_ms.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_millis(delay));
        }
        let r = self.file.read_exact_at(buf, id.offset());
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        self.reads.fetch_add(1, Ordering::SeqCst);
        *self.reads_by_page.lock().unwrap().entry(id.0).or_default() += 1;
        r
    }

    fn write_page(&self, id: PageId, buf: &[u8]) -> io::Result<()> {
        if !aligned(buf) || verify(buf, id).is_err() {
            self.bad_writes.fetch_add(1, Ordering::SeqCst);
        }
        if let Some(wal) = &self.wal {
            if page_lsn(buf).0 > wal.flushed.load(Ordering::SeqCst) {
                self.wal_violations.fetch_add(1, Ordering::SeqCst);
            }
        }
        let gate = {
            let g = self.gate.lock().unwrap();
            match &*g {
                Some((gid, gate)) if *gid == id => Some(Arc::clone(gate)),
                _ => None,
            }
        };
        if let Some(g) = gate {
            g.pass();
        }
        if self.fail_writes.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected write failure"));
        }
        self.file.write_all_at(buf, id.offset())?;
        self.writes.fetch_add(1, Ordering::SeqCst);
        *self.writes_by_page.lock().unwrap().entry(id.0).or_default() += 1;
        Ok(())
    }

    fn write_batch(&self, ids: &[PageId], buf: &[u8]) -> io::Result<()> {
        if !self.anywhere.load(Ordering::SeqCst) {
            return tierdb_buffer::write_adjacent_runs(self, ids, buf);
        }
        let mut seen = std::collections::HashSet::new();
        if !(buf.as_ptr() as usize).is_multiple_of(4096)
            || buf.len() != ids.len() * PAGE_SIZE
            || !ids.iter().all(|id| seen.insert(id.0))
        {
            self.bad_writes.fetch_add(1, Ordering::SeqCst);
        }
        self.batches.lock().unwrap().push(ids.len());
        for (id, page) in ids.iter().zip(buf.chunks_exact(PAGE_SIZE)) {
            self.write_page(*id, page)?;
        }
        Ok(())
    }

    fn writes_anywhere(&self) -> bool {
        self.anywhere.load(Ordering::SeqCst)
    }

    fn sync(&self) -> io::Result<()> {
        if self.fail_sync.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected sync failure"));
        }
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.file.sync_data()
    }
}

/// A WAL gate that records the highest LSN it was asked to make durable.
#[derive(Default)]
pub struct RecordingWal {
    pub flushed: AtomicU64,
    pub calls: AtomicU64,
    pub fail: AtomicBool,
}

impl RecordingWal {
    pub fn new() -> Arc<RecordingWal> {
        Arc::new(RecordingWal::default())
    }
}

impl WalGate for RecordingWal {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        if self.fail.load(Ordering::SeqCst) {
            return Err("injected redo flush failure".into());
        }
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.flushed.fetch_max(lsn.0, Ordering::SeqCst);
        Ok(())
    }
}

/// A sealed leaf page for `id` carrying `counter`.
pub fn page_bytes(id: PageId, counter: u64) -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    format_with_counter(&mut p, id, counter);
    seal(&mut p);
    p
}

/// Formats `page` (in place) as a leaf of `id` carrying `counter` (not sealed).
pub fn format_with_counter(page: &mut [u8], id: PageId, counter: u64) {
    format(page, id, PageType::BTreeLeaf);
    set_counter(page, counter);
    page[ID_AT..ID_AT + 8].copy_from_slice(&id.0.to_le_bytes());
    // Some id-dependent bytes all over the page, so a mix-up of two pages shows.
    for (i, b) in page[ID_AT + 8..].iter_mut().enumerate().step_by(97) {
        *b = (id.0 as usize).wrapping_mul(31).wrapping_add(i) as u8;
    }
}

pub fn counter(page: &[u8]) -> u64 {
    u64::from_le_bytes(page[COUNTER_AT..COUNTER_AT + 8].try_into().unwrap())
}

pub fn set_counter(page: &mut [u8], v: u64) {
    page[COUNTER_AT..COUNTER_AT + 8].copy_from_slice(&v.to_le_bytes());
}

/// Checks that `page` is what `format_with_counter(id, c)` wrote, for some counter; returns it.
pub fn check_payload(page: &[u8], id: PageId) -> u64 {
    let c = counter(page);
    let mut expect = vec![0u8; PAGE_SIZE];
    format_with_counter(&mut expect, id, c);
    // Header fields the pool owns (CRC, LSN) may differ.
    set_page_lsn(&mut expect, page_lsn(page));
    assert_eq!(
        &expect[PAGE_HEADER_SIZE..],
        &page[PAGE_HEADER_SIZE..],
        "payload of {id:?}"
    );
    assert_eq!(tierdb_page::page_id(page), id);
    c
}

pub fn config(frames: u64, flusher_interval_ms: u64) -> PoolConfig {
    PoolConfig {
        size_bytes: frames * PAGE_SIZE as u64,
        flusher_interval_ms,
        dirty_high_water_pct: 50,
    }
}

pub fn pool(
    frames: u64,
    flusher_interval_ms: u64,
    store: &Arc<TestStore>,
    wal: &Arc<RecordingWal>,
) -> Arc<BufferPool> {
    BufferPool::new(
        config(frames, flusher_interval_ms),
        store.clone(),
        wal.clone(),
    )
    .unwrap()
}

/// No background flusher thread: the test controls every page write.
pub const NO_FLUSHER: u64 = 0;

/// A tiny deterministic PRNG (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Adds `delta` to the counter of each page of `ids` (dirtied in that order, LSNs 110, 120,
/// …), sets the flush target past them and waits (10 s at most) for the flusher to clean
/// them all.
pub fn add_to_counters_and_flush(pool: &BufferPool, ids: &[u64], delta: u64) {
    let mut lsn = 100;
    for &id in ids {
        let mut g = pool.write(PageId(id)).unwrap();
        let c = counter(&g);
        set_counter(&mut g, c + delta);
        lsn += 10;
        g.mark_dirty(Lsn(lsn));
    }
    assert_eq!(pool.stats().pages_dirty, ids.len() as u64);
    pool.set_flush_target(Lsn(lsn + 1));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pool.stats().pages_dirty > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the flusher did not clean the pages"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
