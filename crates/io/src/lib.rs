//! tierdb-io: every byte tierdb moves to or from a device goes through the `Device` trait.
//!
//! Owns: the `Device` trait; `DirectFile` (O_DIRECT pread/pwrite on aligned buffers +
//! fdatasync); `BufferedFile` (plain file, for the redo log); `Throttled` (an emulated cloud
//! disk: IOPS cap, added latency, jitter); `Faulty` (fault injection for tests: fail, corrupt
//! or tear the Nth I/O); `AlignedBuf`.
//!
//! Must never: know about pages, logs or caches; retry or hide an error (callers decide).

use std::io;

/// Alignment (and length granularity) required for O_DIRECT I/O.
pub const DIRECT_ALIGN: usize = 4096;

/// A block device or file. All methods take `&self` and may be called from many threads at
/// once; positional I/O only.
pub trait Device: Send + Sync + 'static {
    /// Reads exactly `buf.len()` bytes at `offset`. Reading past the end is
    /// `ErrorKind::UnexpectedEof`.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset` (extending the file if needed).
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes completed writes durable (fdatasync).
    fn sync(&self) -> io::Result<()>;
    /// Current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Truncates or extends.
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// A human-readable name (path) for logs and errors.
    fn name(&self) -> &str;
    /// True when the OS page cache is bypassed.
    fn is_direct(&self) -> bool {
        false
    }
}
