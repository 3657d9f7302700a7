//! tierdb-io: every byte tierdb moves to or from a device goes through the `Device` trait.
//!
//! Owns: the `Device` trait; `DirectFile` (O_DIRECT pread/pwrite on aligned buffers +
//! fdatasync); `BufferedFile` (plain file, for the redo log); `Throttled` (an emulated cloud
//! disk: IOPS cap, added latency, jitter); `Faulty` (fault injection for tests: fail, corrupt
//! or tear the Nth I/O); `AlignedBuf`.
//!
//! Must never: know about pages, logs or caches; retry or hide an error (callers decide).
//!
//! Wrappers compose: `Faulty<Throttled<DirectFile>>` is a slow, failing cloud disk. `Device`
//! is also implemented for `Arc<D>` and `Box<D>` (including `dyn Device`), so a test can keep
//! a handle on the inner device while a wrapper owns a clone.

use std::io;
use std::sync::Arc;

mod aligned;
mod buffered;
mod direct;
mod faulty;
mod pio;
mod throttled;

pub use aligned::AlignedBuf;
pub use buffered::BufferedFile;
pub use direct::DirectFile;
pub use faulty::{FaultPlan, FaultStats, Faulty, TearMode};
pub use throttled::{ThrottleConfig, ThrottleStats, Throttled};

/// Alignment (and length granularity) required for O_DIRECT I/O.
pub const DIRECT_ALIGN: usize = 4096;

/// A block device or file. All methods take `&self` and may be called from many threads at
/// once; positional I/O only.
#[allow(
    clippy::len_without_is_empty,
    reason = "a device's length is a size query that can fail, not a collection length"
)]
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

macro_rules! forward_device {
    ($ptr:ident) => {
        impl<D: Device + ?Sized> Device for $ptr<D> {
            fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
                (**self).read_at(buf, offset)
            }
            fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
                (**self).write_at(buf, offset)
            }
            fn sync(&self) -> io::Result<()> {
                (**self).sync()
            }
            fn len(&self) -> io::Result<u64> {
                (**self).len()
            }
            fn set_len(&self, len: u64) -> io::Result<()> {
                (**self).set_len(len)
            }
            fn name(&self) -> &str {
                (**self).name()
            }
            fn is_direct(&self) -> bool {
                (**self).is_direct()
            }
        }
    };
}

forward_device!(Arc);
forward_device!(Box);
