//! Positional I/O loops shared by `DirectFile` and `BufferedFile`: repeat pread/pwrite until
//! the whole buffer is done, retrying `EINTR` and continuing after short transfers.
//!
//! Owns: the loop and the errors it makes up (`UnexpectedEof`, `WriteZero`, unaligned short
//! transfer). Errors from the OS are returned unchanged so `raw_os_error()` survives.
//!
//! Must never: retry anything but `EINTR`; return `Ok` before every byte is transferred.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::DIRECT_ALIGN;

/// Reads exactly `buf.len()` bytes at `offset`. `direct` means the file is open with
/// O_DIRECT, where a short read ending off an alignment boundary can only mean end of file.
pub(crate) fn read_exact_at(
    file: &File,
    name: &str,
    direct: bool,
    buf: &mut [u8],
    offset: u64,
) -> io::Result<()> {
    let len = buf.len();
    let mut done = 0usize;
    while done < len {
        let at = position(name, offset, done)?;
        match file.read_at(&mut buf[done..], at) {
            Ok(0) => return Err(eof(name, offset, len, done)),
            Ok(n) => {
                done += n;
                if direct && done < len && !done.is_multiple_of(DIRECT_ALIGN) {
                    // O_DIRECT reads are only short at end of file, and the rest could not
                    // be requested at an unaligned position anyway.
                    return Err(eof(name, offset, len, done));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes all of `buf` at `offset`.
pub(crate) fn write_all_at(
    file: &File,
    name: &str,
    direct: bool,
    buf: &[u8],
    offset: u64,
) -> io::Result<()> {
    let len = buf.len();
    let mut done = 0usize;
    while done < len {
        let at = position(name, offset, done)?;
        match file.write_at(&buf[done..], at) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    format!(
                    "{name}: write of {len} bytes at offset {offset} stopped after {done} bytes"
                ),
                ))
            }
            Ok(n) => {
                done += n;
                if direct && done < len && !done.is_multiple_of(DIRECT_ALIGN) {
                    return Err(io::Error::other(format!(
                        "{name}: short O_DIRECT write at offset {offset}: {done} of {len} bytes \
                         written, the rest cannot be written at an unaligned position"
                    )));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn position(name: &str, offset: u64, done: usize) -> io::Result<u64> {
    u64::try_from(done)
        .ok()
        .and_then(|d| offset.checked_add(d))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{name}: offset {offset} + {done} overflows u64"),
            )
        })
}

fn eof(name: &str, offset: u64, len: usize, done: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "{name}: read of {len} bytes at offset {offset} hit end of file after {done} bytes"
        ),
    )
}
