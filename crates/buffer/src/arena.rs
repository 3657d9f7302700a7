//! The frame arena: `frames × PAGE_SIZE` bytes in one 4096-aligned allocation.
//!
//! Owns: the raw memory the pool's page bytes live in, and its allocation/free. The same type
//! with one frame is the aligned scratch page used to write a sealed copy.
//!
//! Must never: hand out references by itself. It only hands out raw pointers; the pool turns
//! them into `&[u8]` / `&mut [u8]` only while holding the frame's latch in the matching mode
//! (shared → `&[u8]`, exclusive → `&mut [u8]`). That latch discipline is what makes the
//! `Sync` impl below sound: the bytes behave like `UnsafeCell<[u8; PAGE_SIZE]>` per frame,
//! guarded by `FrameMeta::latch`.
//!
//! Lock order: takes no locks.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

use tierdb_page::PAGE_SIZE;

/// Alignment of every frame: O_DIRECT reads land straight in the arena.
pub(crate) const FRAME_ALIGN: usize = tierdb_io::DIRECT_ALIGN;

const _: () = assert!(FRAME_ALIGN.is_power_of_two());
const _: () = assert!(
    PAGE_SIZE.is_multiple_of(FRAME_ALIGN),
    "frames must stay aligned back to back"
);

pub(crate) struct Arena {
    base: NonNull<u8>,
    layout: Layout,
    frames: usize,
}

// SAFETY: the arena is plain memory. Access to frame `i` is only through pointers from
// `frame_ptr(i)`, dereferenced under frame `i`'s latch (shared for reads, exclusive for
// writes) or, for a scratch arena, by its single owner through `&mut`.
unsafe impl Send for Arena {}
// SAFETY: see above.
unsafe impl Sync for Arena {}

impl Arena {
    /// Allocates `frames` zeroed, 4096-aligned pages in one allocation. `None` if the size
    /// overflows or the allocator refuses.
    pub(crate) fn new(frames: usize) -> Option<Arena> {
        let bytes = frames.checked_mul(PAGE_SIZE)?;
        if bytes == 0 {
            return None;
        }
        let layout = Layout::from_size_align(bytes, FRAME_ALIGN).ok()?;
        // SAFETY: `layout` has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let base = NonNull::new(ptr)?;
        Some(Arena {
            base,
            layout,
            frames,
        })
    }

    /// Bytes actually allocated.
    pub(crate) fn bytes(&self) -> usize {
        self.layout.size()
    }

    /// Start of frame `idx`. Panics (a pool bug, not a data error) if `idx` is out of range.
    pub(crate) fn frame_ptr(&self, idx: usize) -> *mut u8 {
        assert!(idx < self.frames, "frame index {idx} out of range");
        // SAFETY: `idx < frames`, so the offset stays inside the allocation.
        unsafe { self.base.as_ptr().add(idx * PAGE_SIZE) }
    }

    /// Every frame as one slice, for a scratch arena owned through `&mut`.
    pub(crate) fn all_mut(&mut self) -> &mut [u8] {
        // SAFETY: `&mut self` proves exclusive access; the allocation holds `frames` pages.
        unsafe { std::slice::from_raw_parts_mut(self.frame_ptr(0), self.frames * PAGE_SIZE) }
    }

    /// Frame 0 as a slice, for a scratch arena owned through `&mut`.
    pub(crate) fn scratch_mut(&mut self) -> &mut [u8] {
        // SAFETY: `&mut self` proves exclusive access; the frame is PAGE_SIZE bytes.
        unsafe { std::slice::from_raw_parts_mut(self.frame_ptr(0), PAGE_SIZE) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_is_aligned_for_direct_io() {
        let a = Arena::new(5).expect("alloc");
        for i in 0..5 {
            assert_eq!(a.frame_ptr(i) as usize % FRAME_ALIGN, 0);
        }
        assert_eq!(a.bytes(), 5 * PAGE_SIZE);
    }
}
