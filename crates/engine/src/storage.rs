//! Wiring of the tiers below the engine: the data file on the durable disk (a `PageStore`
//! for the buffer pool, optionally behind the in-process throttle that emulates a cloud
//! disk), and the redo log as the pool's WAL gate.
//!
//! Must never: write a page whose checksum was not sealed by the pool; hide an I/O error.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use tierdb_buffer::{PageStore, WalGate};
use tierdb_io::{Device, DirectFile, ThrottleConfig, Throttled};
use tierdb_page::{Lsn, PageId, PAGE_SIZE};
use tierdb_wal::Wal;

use crate::pagemap::{Clean, MapStats, PageMap, Run, SEGMENT};
use tierdb_io::AlignedBuf;

/// The data file's name in `data_dir`.
pub const DATA_FILE: &str = "tierdb.dat";
/// The page map's name in `data_dir`.
pub const MAP_FILE: &str = "tierdb.map";

/// The data file (`<data_dir>/tierdb.dat`). With relocating writes (the default) a page lives
/// in the slot the page map names and each write goes to free slots, a batch of pages to
/// adjacent ones (one I/O); without, page `n` lives at byte `n * PAGE_SIZE`.
pub struct DataFile {
    dev: Arc<dyn Device>,
    map: Option<PageMap>,
    /// Device reads and writes issued (syncs not counted), and their bytes.
    io: [AtomicU64; 4],
    /// Segments cleaned, pages the cleaner moved.
    cleaned: [AtomicU64; 2],
    /// A data-file sync failed (the pool's or a map persist's; sticky).
    sync_failed: AtomicBool,
}

/// Pages the cleaner writes with one I/O (as the pool's batches: 256 KiB).
const CLEAN_BATCH: usize = 16;

/// Indexes into `DataFile::io`.
const READS: usize = 0;
const WRITES: usize = 1;
const BYTES_READ: usize = 2;
const BYTES_WRITTEN: usize = 3;

/// What `SHOW STATUS` shows of the data file's I/O (InnoDB's `Innodb_data_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataIo {
    pub reads: u64,
    pub writes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl DataFile {
    /// Opens `<data_dir>/tierdb.dat`; with `relocate`, also its page map (created — naming
    /// every page where it is — if missing). A data file that has a page map must be opened
    /// with `relocate`: its pages are not where their ids say.
    pub fn open(
        data_dir: &Path,
        relocate: bool,
        throttle: Option<ThrottleConfig>,
        wrap: Option<&crate::DeviceWrapper>,
    ) -> io::Result<DataFile> {
        let path = data_dir.join(DATA_FILE);
        let map_path = data_dir.join(MAP_FILE);
        if !relocate && map_path.exists() {
            return Err(io::Error::other(format!(
                "{} exists: this data file's pages were relocated, so it must be opened with relocating writes on",
                map_path.display()
            )));
        }
        let f = DirectFile::open(&path, true)?;
        if !f.is_direct() {
            tracing::warn!(path = %path.display(), "O_DIRECT refused by the file system; the OS page cache is in the data path");
        }
        let dev: Arc<dyn Device> = match throttle {
            Some(t) => Arc::new(Throttled::new(f, t)),
            None => Arc::new(f),
        };
        let dev = match wrap {
            Some(w) => (w.0)(dev),
            None => dev,
        };
        let map = if relocate {
            Some(PageMap::open(&map_path, dev.len()?)?)
        } else {
            None
        };
        Ok(DataFile {
            dev,
            map,
            io: Default::default(),
            cleaned: Default::default(),
            sync_failed: AtomicBool::new(false),
        })
    }

    pub fn len(&self) -> io::Result<u64> {
        self.dev.len()
    }

    /// Makes the page map durable (a no-op without one): the data file is synced first, so
    /// every slot the map names holds its page durably. Called by each checkpoint before the
    /// redo start moves.
    pub fn persist_map(&self) -> io::Result<()> {
        match &self.map {
            Some(m) => m.persist(|| self.sync_for_map()),
            None => Ok(()),
        }
    }

    /// One step of the cleaner (relocating writes): when few segments of the data file are
    /// wholly free, reads the segment with the fewest live pages (one I/O), copies its live
    /// pages to free slots in batches (one write each) and names the copies in the map — so
    /// batches keep finding long runs of free slots without the file growing. A slot that
    /// does not hold the page its header names, or whose page the map no longer puts there,
    /// is left alone. Returns the pages moved (`None`: nothing to clean).
    pub fn clean_step(&self) -> io::Result<Option<u64>> {
        let Some(m) = &self.map else { return Ok(None) };
        let Some(c) = m.begin_clean() else {
            return Ok(None);
        };
        let r = self.clean_segment(m, &c);
        m.end_clean(c, *r.as_ref().unwrap_or(&0));
        if let Ok(n) = &r {
            self.cleaned[0].fetch_add(1, Ordering::Relaxed);
            self.cleaned[1].fetch_add(*n, Ordering::Relaxed);
        }
        r.map(Some)
    }

    fn clean_segment(&self, m: &PageMap, c: &Clean) -> io::Result<u64> {
        // Only what the file holds (a write that grows it may still be under way, or failed).
        let start = c.first * PAGE_SIZE as u64;
        let held = self.dev.len()?.saturating_sub(start) / PAGE_SIZE as u64;
        let slots = SEGMENT.min(held) as usize;
        if slots == 0 {
            return Ok(0);
        }
        let mut seg = AlignedBuf::new(slots * PAGE_SIZE)?;
        self.read_at(seg.as_mut_slice(), start)?;
        let mut live: Vec<(PageId, u64, usize)> = Vec::new();
        for (i, page) in seg.as_slice().chunks_exact(PAGE_SIZE).enumerate() {
            let slot = c.first + i as u64;
            if tierdb_page::is_zeroed(page) || c.skip.contains(&slot) {
                continue;
            }
            let id = tierdb_page::page_id(page);
            if m.slot(id) == Some(slot) && tierdb_page::verify(page, id).is_ok() {
                live.push((id, slot, i));
            }
        }
        let mut moved = 0;
        let mut batch = AlignedBuf::new(CLEAN_BATCH * PAGE_SIZE)?;
        for chunk in live.chunks(CLEAN_BATCH) {
            for (j, &(_, _, i)) in chunk.iter().enumerate() {
                batch.as_mut_slice()[j * PAGE_SIZE..(j + 1) * PAGE_SIZE]
                    .copy_from_slice(&seg.as_slice()[i * PAGE_SIZE..(i + 1) * PAGE_SIZE]);
            }
            let runs = self.write_to_free_slots(m, &batch.as_slice()[..chunk.len() * PAGE_SIZE])?;
            let moves: Vec<(PageId, u64)> = chunk.iter().map(|&(id, slot, _)| (id, slot)).collect();
            moved += m.commit_moves(&moves, &runs);
        }
        Ok(moved)
    }

    /// Writes the pages of `buf` (whole pages, in order) to free slots: one write per run the
    /// map hands out. On an error the slots go back (no map names them). The caller commits.
    fn write_to_free_slots(&self, m: &PageMap, buf: &[u8]) -> io::Result<Vec<Run>> {
        let runs = m.allocate((buf.len() / PAGE_SIZE) as u64)?;
        let mut at = 0usize;
        for r in &runs {
            let bytes = r.len as usize * PAGE_SIZE;
            if let Err(e) = self.write_at(&buf[at..at + bytes], r.slot * PAGE_SIZE as u64) {
                m.unallocate(&runs);
                return Err(e);
            }
            at += bytes;
        }
        Ok(runs)
    }

    /// Segments cleaned and pages the cleaner moved.
    pub fn cleaner_stats(&self) -> (u64, u64) {
        (
            self.cleaned[0].load(Ordering::Relaxed),
            self.cleaned[1].load(Ordering::Relaxed),
        )
    }

    /// Persists the page map if many slots wait for it (see `PageMap::wants_persist`).
    pub fn persist_map_if_held(&self) -> io::Result<()> {
        match &self.map {
            Some(m) if m.wants_persist() => m.persist(|| self.sync_for_map()),
            _ => Ok(()),
        }
    }

    /// The page map (relocating writes), if any.
    pub fn map(&self) -> Option<&PageMap> {
        self.map.as_ref()
    }

    pub fn map_stats(&self) -> Option<MapStats> {
        self.map.as_ref().map(PageMap::stats)
    }

    pub fn io_stats(&self) -> DataIo {
        let g = |i: usize| self.io[i].load(Ordering::Relaxed);
        DataIo {
            reads: g(READS),
            writes: g(WRITES),
            bytes_read: g(BYTES_READ),
            bytes_written: g(BYTES_WRITTEN),
        }
    }

    fn read_at(&self, buf: &mut [u8], at: u64) -> io::Result<()> {
        self.io[READS].fetch_add(1, Ordering::Relaxed);
        self.dev.read_at(buf, at)?;
        self.io[BYTES_READ].fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// A data-file sync under `persist` failed: nothing written since can be trusted to be
    /// durable (an fsync error is not retried), so every later write and map fails too.
    fn check_failed(&self) -> io::Result<()> {
        if self.sync_failed.load(Ordering::Acquire) {
            return Err(io::Error::other(
                "an earlier data file sync failed; restart the server (recovery replays the redo log)",
            ));
        }
        Ok(())
    }

    /// `dev.sync` (the pool's and a map persist's); a failure is sticky (see
    /// `check_failed`): a later sync that succeeds proves nothing about the writes before it.
    fn sync_for_map(&self) -> io::Result<()> {
        self.check_failed()?;
        self.dev.sync().inspect_err(|_| {
            self.sync_failed.store(true, Ordering::Release);
        })
    }

    fn write_at(&self, buf: &[u8], at: u64) -> io::Result<()> {
        self.check_failed()?;
        self.io[WRITES].fetch_add(1, Ordering::Relaxed);
        self.dev.write_at(buf, at)?;
        self.io[BYTES_WRITTEN].fetch_add(buf.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

impl PageStore for DataFile {
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len(), PAGE_SIZE);
        let Some(m) = &self.map else {
            return self.read_at(buf, id.offset());
        };
        let Some(slot) = m.begin_read(id) else {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("page {id} was never written to the data file"),
            ));
        };
        let r = self.read_at(buf, slot * PAGE_SIZE as u64);
        m.end_read(slot);
        r
    }
    fn write_page(&self, id: PageId, buf: &[u8]) -> io::Result<()> {
        match &self.map {
            None => self.write_at(buf, id.offset()),
            Some(_) => self.write_batch(&[id], buf),
        }
    }
    fn write_pages(&self, first: PageId, buf: &[u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len() % PAGE_SIZE, 0);
        match &self.map {
            None => self.write_at(buf, first.offset()),
            Some(_) => {
                let n = (buf.len() / PAGE_SIZE) as u64;
                let ids: Vec<PageId> = (first.0..first.0 + n).map(PageId).collect();
                self.write_batch(&ids, buf)
            }
        }
    }
    fn write_batch(&self, ids: &[PageId], buf: &[u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len(), ids.len() * PAGE_SIZE);
        let Some(m) = &self.map else {
            return tierdb_buffer::write_adjacent_runs(self, ids, buf);
        };
        let runs = self.write_to_free_slots(m, buf)?;
        m.commit(ids, &runs);
        Ok(())
    }
    fn writes_anywhere(&self) -> bool {
        self.map.is_some()
    }
    fn sync(&self) -> io::Result<()> {
        self.sync_for_map()
    }
}

/// The WAL rule for the pool: a page may be written once the log is durable up to its LSN.
pub struct LogGate(pub Arc<Wal>);

impl WalGate for LogGate {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.0.flush_to(lsn).map_err(|e| e.to_string())
    }
}
