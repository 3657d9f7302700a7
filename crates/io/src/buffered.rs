//! `BufferedFile`: a normal (page-cached) file with positional reads and writes of any size
//! and alignment, made durable with fdatasync. Used for the redo log and the binlog.
//!
//! Owns: the file descriptor.
//!
//! Must never: report `Ok` from `sync` unless fdatasync succeeded; retry or hide an I/O
//! error.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{pio, Device};

/// A plain file behind the `Device` trait; no alignment requirement.
#[derive(Debug)]
pub struct BufferedFile {
    file: File,
    name: String,
}

impl BufferedFile {
    /// Opens `path` read-write, creating it (mode 0644) when `create`.
    pub fn open(path: &Path, create: bool) -> io::Result<BufferedFile> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(create)
            .mode(0o644)
            .open(path)?;
        Ok(BufferedFile {
            file,
            name: path.display().to_string(),
        })
    }
}

impl Device for BufferedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        pio::read_exact_at(&self.file, &self.name, false, buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        pio::write_all_at(&self.file, &self.name, false, buf, offset)
    }

    fn sync(&self) -> io::Result<()> {
        // `sync_data` is fdatasync(2) on Linux.
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn name(&self) -> &str {
        &self.name
    }
}
