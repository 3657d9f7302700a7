//! Page guards: a pin plus the frame latch, released on drop.
//!
//! Owns: [`PageRead`] (shared latch) and [`PageWrite`] (exclusive latch, `mark_dirty`,
//! `discard`). Guards borrow the pool, so they cannot outlive it.
//!
//! Must never: expose the bytes without holding the latch in the matching mode; unpin before
//! unlatching is done with the bytes. A created page whose guard drops without `mark_dirty`
//! is dropped from DRAM (its zeroed/unlogged bytes must not reach the store or the BPE).
//!
//! Lock order: a guard holds one frame latch; dropping it takes none, except the void-create
//! case which takes the page's shard write lock (a leaf) while still holding the X latch.
//! Guards are `!Send` (parking_lot's raw latch tokens are), like parking_lot's own guards.

use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};

use parking_lot::lock_api::RawRwLock as _;
use tierdb_page::{page_lsn, Lsn, PageId};

use crate::frame::{ExclusiveToken, FrameIdx, SharedToken, DIRTY};
use crate::pool::BufferPool;

/// A pinned page under a shared latch. Derefs to the page's `PAGE_SIZE` bytes.
pub struct PageRead<'a> {
    pool: &'a BufferPool,
    idx: FrameIdx,
    id: PageId,
    token: ManuallyDrop<SharedToken>,
}

impl<'a> PageRead<'a> {
    pub(crate) fn new(pool: &'a BufferPool, idx: FrameIdx, id: PageId, token: SharedToken) -> Self {
        PageRead {
            pool,
            idx,
            id,
            token: ManuallyDrop::new(token),
        }
    }

    pub fn id(&self) -> PageId {
        self.id
    }

    /// The page LSN from the header.
    pub fn lsn(&self) -> Lsn {
        page_lsn(self)
    }
}

impl Deref for PageRead<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: this guard holds the frame's shared latch.
        unsafe { self.pool.page(self.idx) }
    }
}

impl Drop for PageRead<'_> {
    fn drop(&mut self) {
        let f = self.pool.frame(self.idx);
        // SAFETY: taken once, here; the token is this guard's shared acquisition.
        unsafe {
            let token = ManuallyDrop::take(&mut self.token);
            f.latch.unlock_shared(token);
        }
        f.unpin();
    }
}

impl fmt::Debug for PageRead<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageRead")
            .field("id", &self.id)
            .field("frame", &self.idx)
            .finish()
    }
}

/// A pinned page under an exclusive latch. Derefs (mutably) to the page's bytes. Every
/// modification must be followed by [`PageWrite::mark_dirty`] before the guard drops.
pub struct PageWrite<'a> {
    pool: &'a BufferPool,
    idx: FrameIdx,
    id: PageId,
    token: ManuallyDrop<ExclusiveToken>,
    /// Obtained from `create`: the bytes are not the store's.
    created: bool,
    /// `mark_dirty` was called through this guard.
    marked: bool,
}

impl<'a> PageWrite<'a> {
    pub(crate) fn new(
        pool: &'a BufferPool,
        idx: FrameIdx,
        id: PageId,
        token: ExclusiveToken,
        created: bool,
    ) -> Self {
        PageWrite {
            pool,
            idx,
            id,
            token: ManuallyDrop::new(token),
            created,
            marked: false,
        }
    }

    pub fn id(&self) -> PageId {
        self.id
    }

    /// The page LSN from the header.
    pub fn lsn(&self) -> Lsn {
        page_lsn(self)
    }

    /// True while the DRAM copy is newer than the store's.
    pub fn is_dirty(&self) -> bool {
        self.pool.frame(self.idx).flags() & DIRTY != 0
    }

    /// Sets the page LSN to `lsn`. If the page was clean: it becomes dirty with
    /// `rec_lsn = lsn`, and `TierHooks::on_dirty(id)` is called (its BPE copy is stale).
    pub fn mark_dirty(&mut self, lsn: Lsn) {
        self.mark_dirty_range(lsn, lsn);
    }

    /// Like `mark_dirty` for a redo record spanning `start..end`: the page LSN becomes `end`
    /// (the record's end), and if the page was clean its rec_lsn becomes `start` (where redo
    /// for it must begin).
    pub fn mark_dirty_range(&mut self, start: Lsn, end: Lsn) {
        self.pool.mark_dirty_latched(self.idx, self.id, start, end);
        self.marked = true;
    }

    /// Frees the page: drops it from DRAM without writing it (even if dirty) and calls
    /// `TierHooks::on_discard`. Threads queued on the latch wake up, find the page gone and
    /// look it up again.
    pub fn discard(mut self) {
        let pool = self.pool;
        let id = self.id;
        pool.drop_frame(self.idx, id);
        self.created = false;
        drop(self);
        pool.notify_discard(id);
    }
}

impl Deref for PageWrite<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: this guard holds the frame's exclusive latch.
        unsafe { self.pool.page(self.idx) }
    }
}

impl DerefMut for PageWrite<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: this guard holds the frame's exclusive latch and `&mut self` makes this the
        // only reference.
        unsafe { self.pool.page_mut(self.idx) }
    }
}

impl Drop for PageWrite<'_> {
    fn drop(&mut self) {
        if self.created && !self.marked {
            tracing::warn!(page = %self.id, "created page released without mark_dirty; dropping it");
            self.pool.drop_frame(self.idx, self.id);
        }
        let f = self.pool.frame(self.idx);
        // SAFETY: taken once, here; the token is this guard's exclusive acquisition.
        unsafe {
            let token = ManuallyDrop::take(&mut self.token);
            f.latch.unlock_exclusive(token);
        }
        f.unpin();
    }
}

impl fmt::Debug for PageWrite<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageWrite")
            .field("id", &self.id)
            .field("frame", &self.idx)
            .field("dirty", &self.is_dirty())
            .finish()
    }
}
