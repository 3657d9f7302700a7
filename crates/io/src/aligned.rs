//! `AlignedBuf`: a zero-initialised heap buffer whose address and length are multiples of
//! `DIRECT_ALIGN`, the only kind of buffer `DirectFile` accepts.
//!
//! Owns: one allocation made with `std::alloc` and the `Layout` it was made with; frees it on
//! drop.
//!
//! Must never: hand out a buffer whose address or length is not a multiple of
//! `DIRECT_ALIGN`; expose uninitialised memory; free with a layout other than the one it
//! allocated with.

use std::alloc::{self, Layout};
use std::fmt;
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::DIRECT_ALIGN;

/// A heap buffer aligned to `DIRECT_ALIGN`, length a multiple of `DIRECT_ALIGN`, always
/// zero-initialised. Derefs to `[u8]`.
///
/// Lengths: `new` refuses a length that is not a multiple of `DIRECT_ALIGN`
/// (`ErrorKind::InvalidInput`); `zeroed_rounded_up` and `copy_from` round the length up and
/// zero-fill the tail. A zero-length buffer is allowed and allocates nothing.
pub struct AlignedBuf {
    /// Start of the allocation; aligned to `DIRECT_ALIGN` (a dangling aligned pointer when
    /// `len == 0`).
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: `AlignedBuf` uniquely owns its allocation, exactly like `Box<[u8]>`; no interior
// mutability, so sharing `&AlignedBuf` across threads only permits reads.
unsafe impl Send for AlignedBuf {}
// SAFETY: see `Send` above.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of exactly `len` bytes. `len` must be a multiple of `DIRECT_ALIGN`.
    pub fn new(len: usize) -> io::Result<Self> {
        if !len.is_multiple_of(DIRECT_ALIGN) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("AlignedBuf length {len} is not a multiple of {DIRECT_ALIGN}"),
            ));
        }
        Ok(Self::alloc_zeroed(len))
    }

    /// A zeroed buffer of `len` rounded up to the next multiple of `DIRECT_ALIGN`.
    pub fn zeroed_rounded_up(len: usize) -> Self {
        Self::alloc_zeroed(round_up(len))
    }

    /// A buffer holding a copy of `data`, length rounded up to a multiple of `DIRECT_ALIGN`;
    /// the bytes after `data.len()` are zero.
    pub fn copy_from(data: &[u8]) -> Self {
        let mut buf = Self::zeroed_rounded_up(data.len());
        buf[..data.len()].copy_from_slice(data);
        buf
    }

    /// Length in bytes (always a multiple of `DIRECT_ALIGN`).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        self
    }

    fn alloc_zeroed(len: usize) -> Self {
        debug_assert!(len.is_multiple_of(DIRECT_ALIGN));
        if len == 0 {
            // A non-null, aligned pointer that is never dereferenced for more than 0 bytes.
            let ptr = NonNull::new(std::ptr::without_provenance_mut(DIRECT_ALIGN))
                .expect("DIRECT_ALIGN is non-zero");
            return Self { ptr, len };
        }
        let layout = layout(len);
        // SAFETY: `layout` has a non-zero size (checked above) and a valid power-of-two
        // alignment (checked by `Layout::from_size_align`).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        Self { ptr, len }
    }
}

/// The layout every non-empty `AlignedBuf` of `len` bytes is allocated and freed with.
fn layout(len: usize) -> Layout {
    // Fails only when `len` exceeds `isize::MAX` rounded to the alignment; that is the same
    // capacity overflow `Vec` panics on.
    Layout::from_size_align(len, DIRECT_ALIGN).expect("AlignedBuf capacity overflow")
}

fn round_up(len: usize) -> usize {
    len.checked_next_multiple_of(DIRECT_ALIGN)
        .expect("AlignedBuf capacity overflow")
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: `ptr` came from `alloc_zeroed` with exactly `layout(self.len)`, and
            // `len` never changes after allocation.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout(self.len)) }
        }
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised (zeroed or written) bytes owned by
        // `self` (or `len == 0` with a non-null aligned pointer); the borrow of `self`
        // prevents concurrent mutation.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for AlignedBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for AlignedBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> Self {
        Self::copy_from(self)
    }
}

impl PartialEq for AlignedBuf {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for AlignedBuf {}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_is_zeroed_and_aligned() {
        let buf = AlignedBuf::new(3 * DIRECT_ALIGN).expect("aligned length");
        assert_eq!(buf.len(), 3 * DIRECT_ALIGN);
        assert_eq!(buf.as_ptr() as usize % DIRECT_ALIGN, 0);
        assert!(buf.iter().all(|&b| b == 0));
    }

    #[test]
    fn new_refuses_unaligned_length() {
        let err = AlignedBuf::new(100).expect_err("unaligned length");
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn copy_from_rounds_up_and_zero_pads() {
        let buf = AlignedBuf::copy_from(&[7u8; 5000]);
        assert_eq!(buf.len(), 2 * DIRECT_ALIGN);
        assert!(buf[..5000].iter().all(|&b| b == 7));
        assert!(buf[5000..].iter().all(|&b| b == 0));
        assert_eq!(buf.as_ptr() as usize % DIRECT_ALIGN, 0);
    }

    #[test]
    fn empty_buffer_allocates_nothing_and_is_aligned() {
        let buf = AlignedBuf::new(0).expect("zero is a multiple");
        assert!(buf.is_empty());
        assert_eq!(buf.as_ptr() as usize % DIRECT_ALIGN, 0);
        let copy = AlignedBuf::copy_from(&[]);
        assert!(copy.is_empty());
    }

    #[test]
    fn clone_and_mutation_are_independent() {
        let mut a = AlignedBuf::copy_from(b"hello");
        let b = a.clone();
        a[0] = b'j';
        assert_eq!(&b[..5], b"hello");
        assert_eq!(&a[..5], b"jello");
        assert_ne!(a, b);
    }
}
