//! Wiring of the tiers below the engine: the data file on the durable disk (a `PageStore`
//! for the buffer pool, optionally behind the in-process throttle that emulates a cloud
//! disk), and the redo log as the pool's WAL gate.
//!
//! Must never: write a page whose checksum was not sealed by the pool; hide an I/O error.

use std::io;
use std::path::Path;
use std::sync::Arc;
use tierdb_buffer::{PageStore, WalGate};
use tierdb_io::{Device, DirectFile, ThrottleConfig, Throttled};
use tierdb_page::{Lsn, PageId, PAGE_SIZE};
use tierdb_wal::Wal;

use crate::pagemap::{MapStats, PageMap};

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
        Ok(DataFile { dev, map })
    }

    pub fn len(&self) -> io::Result<u64> {
        self.dev.len()
    }

    /// Makes the page map durable (a no-op without one): the data file is synced first, so
    /// every slot the map names holds its page durably. Called by each checkpoint before the
    /// redo start moves.
    pub fn persist_map(&self) -> io::Result<()> {
        match &self.map {
            Some(m) => m.persist(|| self.dev.sync()),
            None => Ok(()),
        }
    }

    pub fn map_stats(&self) -> Option<MapStats> {
        self.map.as_ref().map(PageMap::stats)
    }
}

impl PageStore for DataFile {
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len(), PAGE_SIZE);
        let at = match &self.map {
            None => id.offset(),
            Some(m) => match m.slot(id) {
                Some(slot) => slot * PAGE_SIZE as u64,
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("page {id} was never written to the data file"),
                    ))
                }
            },
        };
        self.dev.read_at(buf, at)
    }
    fn write_page(&self, id: PageId, buf: &[u8]) -> io::Result<()> {
        match &self.map {
            None => self.dev.write_at(buf, id.offset()),
            Some(_) => self.write_batch(&[id], buf),
        }
    }
    fn write_pages(&self, first: PageId, buf: &[u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len() % PAGE_SIZE, 0);
        match &self.map {
            None => self.dev.write_at(buf, first.offset()),
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
        let runs = m.allocate(ids.len() as u64)?;
        let mut at = 0usize;
        for r in &runs {
            let bytes = r.len as usize * PAGE_SIZE;
            if let Err(e) = self
                .dev
                .write_at(&buf[at..at + bytes], r.slot * PAGE_SIZE as u64)
            {
                m.unallocate(&runs);
                return Err(e);
            }
            at += bytes;
        }
        m.commit(ids, &runs);
        Ok(())
    }
    fn writes_anywhere(&self) -> bool {
        self.map.is_some()
    }
    fn sync(&self) -> io::Result<()> {
        self.dev.sync()
    }
}

/// The WAL rule for the pool: a page may be written once the log is durable up to its LSN.
pub struct LogGate(pub Arc<Wal>);

impl WalGate for LogGate {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.0.flush_to(lsn).map_err(|e| e.to_string())
    }
}
