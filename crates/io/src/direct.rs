//! `DirectFile`: a file opened with `O_DIRECT` (bypassing the OS page cache), read and
//! written with pread/pwrite on `DIRECT_ALIGN`-aligned buffers, made durable with fdatasync.
//! Used for data files and BPE devices.
//!
//! Owns: the file descriptor, the alignment check, the fallback to a normal open when the
//! filesystem refuses `O_DIRECT` (reported through `is_direct() == false`, nothing logged).
//!
//! Must never: pass an unaligned buffer, length or offset to the kernel (refused with
//! `ErrorKind::InvalidInput` before any syscall, in fallback mode too, so behaviour does not
//! depend on the filesystem); retry or hide an I/O error.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::{pio, Device, DIRECT_ALIGN};

/// A file read and written with `O_DIRECT`. Every buffer address, length and offset must be
/// a multiple of `DIRECT_ALIGN` (use `AlignedBuf`).
#[derive(Debug)]
pub struct DirectFile {
    file: File,
    name: String,
    direct: bool,
}

impl DirectFile {
    /// Opens `path` read-write with `O_DIRECT`, creating it (mode 0644) when `create`.
    ///
    /// If the filesystem refuses `O_DIRECT` (`EINVAL` at open), the file is opened normally
    /// instead and `is_direct()` returns false; the alignment contract still applies.
    pub fn open(path: &Path, create: bool) -> io::Result<DirectFile> {
        Self::open_inner(path, create, true)
    }

    fn open_inner(path: &Path, create: bool, try_direct: bool) -> io::Result<DirectFile> {
        let name = path.display().to_string();
        let open = |flags: libc::c_int| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(create)
                .mode(0o644)
                .custom_flags(flags)
                .open(path)
        };
        if try_direct {
            match open(libc::O_DIRECT) {
                Ok(file) => {
                    return Ok(DirectFile {
                        file,
                        name,
                        direct: true,
                    })
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
                Err(e) => return Err(e),
            }
        }
        let file = open(0)?;
        Ok(DirectFile {
            file,
            name,
            direct: false,
        })
    }

    fn check_aligned(&self, what: &str, addr: usize, len: usize, offset: u64) -> io::Result<()> {
        let align = DIRECT_ALIGN as u64;
        if addr.is_multiple_of(DIRECT_ALIGN)
            && len.is_multiple_of(DIRECT_ALIGN)
            && offset.is_multiple_of(align)
        {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: {what} needs buffer address, length and offset aligned to {DIRECT_ALIGN} \
                 bytes (use AlignedBuf); got address {addr:#x}, length {len}, offset {offset}",
                self.name
            ),
        ))
    }
}

impl Device for DirectFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.check_aligned("read", buf.as_ptr() as usize, buf.len(), offset)?;
        pio::read_exact_at(&self.file, &self.name, self.direct, buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.check_aligned("write", buf.as_ptr() as usize, buf.len(), offset)?;
        pio::write_all_at(&self.file, &self.name, self.direct, buf, offset)
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

    fn is_direct(&self) -> bool {
        self.direct
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AlignedBuf;

    /// The fallback path cannot be provoked on a filesystem that accepts O_DIRECT, so open it
    /// directly: it must report `is_direct() == false` and still enforce alignment.
    #[test]
    fn fallback_open_reports_not_direct_and_keeps_alignment_contract() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = DirectFile::open_inner(&dir.path().join("f"), true, false).expect("open");
        assert!(!file.is_direct());
        let page = AlignedBuf::copy_from(&[9u8; DIRECT_ALIGN]);
        file.write_at(&page, 0).expect("aligned write");
        let mut back = AlignedBuf::new(DIRECT_ALIGN).expect("buf");
        file.read_at(&mut back, 0).expect("aligned read");
        assert_eq!(back, page);
        let err = file.write_at(&[1u8; 10], 0).expect_err("unaligned");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
