//! The three seams through which the pool talks to the rest of the engine.
//!
//! Owns: the trait definitions only ([`PageStore`] = the data file, [`WalGate`] = the redo
//! log's durability point, [`TierHooks`] = the BPE tier).
//!
//! Must never: grow implementation logic; anything here is called from inside the pool with
//! one frame latch held (see the crate-level lock order), so implementations must not call
//! back into the `BufferPool` and must not take page latches.
//!
//! Lock order: the pool calls these with at most one pool-taken frame latch held and never a
//! shard, hooks or flusher lock; implementations must take no page latch.

use std::io;

use tierdb_page::{Lsn, PageId, PAGE_SIZE};

/// Where DRAM misses are read from and dirty pages are written to (the data file).
/// Implemented by the engine over a `Device`.
pub trait PageStore: Send + Sync + 'static {
    /// Reads page `id` into `buf` (`PAGE_SIZE` bytes, 4096-aligned). The pool verifies the
    /// bytes afterwards; the store need not.
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> io::Result<()>;
    /// Writes page `id` from `buf` (`PAGE_SIZE` bytes, 4096-aligned, sealed).
    fn write_page(&self, id: PageId, buf: &[u8]) -> io::Result<()>;
    /// Writes the pages `first`, `first + 1`, … from `buf` (a multiple of `PAGE_SIZE`,
    /// 4096-aligned, each page sealed). A store on a disk capped in IOPS should issue one
    /// write; the default writes page by page.
    fn write_pages(&self, first: PageId, buf: &[u8]) -> io::Result<()> {
        for (i, page) in buf.chunks_exact(PAGE_SIZE).enumerate() {
            self.write_page(PageId(first.0 + i as u64), page)?;
        }
        Ok(())
    }
    /// Writes the pages `ids` (distinct, in any order) from `buf` (page `ids[i]` at
    /// `i * PAGE_SIZE`, 4096-aligned, each page sealed). A store that places pages where it
    /// likes ([`PageStore::writes_anywhere`]) writes them with one I/O; the default writes
    /// each run of adjacent ids with one `write_pages`.
    fn write_batch(&self, ids: &[PageId], buf: &[u8]) -> io::Result<()> {
        write_adjacent_runs(self, ids, buf)
    }
    /// True when any set of pages costs one write (`write_batch`), adjacent or not: the pool
    /// then gathers dirty pages into batches rather than runs of neighbours.
    fn writes_anywhere(&self) -> bool {
        false
    }
    /// Makes completed writes durable.
    fn sync(&self) -> io::Result<()>;
}

/// `write_batch` for a store that writes pages in place: one `write_pages` per run of
/// consecutive ids in `ids`' order.
pub fn write_adjacent_runs<S: PageStore + ?Sized>(
    store: &S,
    ids: &[PageId],
    buf: &[u8],
) -> io::Result<()> {
    let mut i = 0;
    while i < ids.len() {
        let mut j = i + 1;
        while j < ids.len() && ids[j].0 == ids[j - 1].0 + 1 {
            j += 1;
        }
        store.write_pages(ids[i], &buf[i * PAGE_SIZE..j * PAGE_SIZE])?;
        i = j;
    }
    Ok(())
}

/// Redo-log gate for the WAL rule: before a page with page LSN `L` is written to the store,
/// the log must be durable up to `L`.
pub trait WalGate: Send + Sync + 'static {
    /// Returns once the redo log is durable up to (at least) `lsn`. May be called with a
    /// frame latch held; must not take page latches.
    fn flush_to(&self, lsn: Lsn) -> Result<(), String>;
}

/// Seams for the BPE tier (another crate, plugged in later). Default: no hooks.
pub trait TierHooks: Send + Sync + 'static {
    /// DRAM miss: try the BPE. Return true if `buf` now holds a verified copy of page `id`.
    /// The pool re-verifies it with `tierdb_page::verify` and falls back to the store if that
    /// fails (counted in `PoolStats::verify_failures`). Called with the frame's X latch held;
    /// the page is already mapped, so no other thread can load or dirty it meanwhile.
    fn on_miss(&self, id: PageId, buf: &mut [u8]) -> bool;
    /// A CLEAN page is leaving DRAM (eviction). `page` is the exact sealed bytes, identical
    /// to the data-file copy. Called with the frame's X latch held and BEFORE the page is
    /// unmapped, so it cannot race with a reload + `on_dirty` of the same page. The eviction
    /// may still be abandoned afterwards (a reader pinned the page meanwhile); the page then
    /// stays in DRAM, clean, and the BPE copy stays valid.
    fn on_evict_clean(&self, id: PageId, page: &[u8]);
    /// Page `id` just went clean → dirty in DRAM: any BPE copy is now stale and must be
    /// dropped. Must be cheap (DRAM only). Called with the page's X latch held.
    fn on_dirty(&self, id: PageId);
    /// Page `id` was freed (no longer part of any structure).
    fn on_discard(&self, id: PageId) {
        let _ = id;
    }
}
