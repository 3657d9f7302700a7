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

/// The data file (`<data_dir>/tierdb.dat`): page `n` lives at byte `n * PAGE_SIZE`.
pub struct DataFile {
    dev: Arc<dyn Device>,
}

impl DataFile {
    pub fn open(
        path: &Path,
        throttle: Option<ThrottleConfig>,
        wrap: Option<&crate::DeviceWrapper>,
    ) -> io::Result<DataFile> {
        let f = DirectFile::open(path, true)?;
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
        Ok(DataFile { dev })
    }

    pub fn len(&self) -> io::Result<u64> {
        self.dev.len()
    }
}

impl PageStore for DataFile {
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len(), PAGE_SIZE);
        self.dev.read_at(buf, id.offset())
    }
    fn write_page(&self, id: PageId, buf: &[u8]) -> io::Result<()> {
        self.dev.write_at(buf, id.offset())
    }
    fn write_pages(&self, first: PageId, buf: &[u8]) -> io::Result<()> {
        debug_assert_eq!(buf.len() % PAGE_SIZE, 0);
        self.dev.write_at(buf, first.offset())
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
