//! Mini-transactions: the only way a page is changed.
//!
//! An `Mtr` X-latches the pages it changes, and at `commit` writes ONE redo record holding
//! every changed page (a full image when the page was clean before the mtr, byte-range diffs
//! otherwise) plus an optional logical part (the engine's undo information), then stamps the
//! page LSNs and marks the pages dirty inside the WAL append lock — so a checkpoint that reads
//! the log end under the same lock never misses a dirty page.
//!
//! Lock order: tree pages top-down, then the meta page (allocation), then new/free pages.
//! Must never: release a latch on a changed page before the redo record is appended; log a
//! page it did not change.

use crate::redo;
use crate::Store;
use tierdb_buffer::PageWrite;
use tierdb_page::{Lsn, PageId, PAGE_SIZE};

struct Entry<'a> {
    guard: PageWrite<'a>,
    /// Copy of the page before the mtr when it was already dirty (diff logging); None when
    /// it was clean or is new (full image logging).
    before: Option<Box<[u8]>>,
    modified: bool,
}

pub struct Mtr<'a> {
    store: &'a Store,
    txn: u64,
    pages: Vec<Entry<'a>>,
    logical: Vec<u8>,
}

impl<'a> Mtr<'a> {
    pub fn new(store: &'a Store, txn: u64) -> Mtr<'a> {
        Mtr {
            store,
            txn,
            pages: Vec::new(),
            logical: Vec::new(),
        }
    }

    pub fn store(&self) -> &'a Store {
        self.store
    }

    fn push(&mut self, guard: PageWrite<'a>, new: bool) -> usize {
        let before = if !new && guard.is_dirty() {
            Some(Box::<[u8]>::from(&guard[..]))
        } else {
            None
        };
        self.pages.push(Entry {
            guard,
            before,
            modified: new,
        });
        self.pages.len() - 1
    }

    /// Position of `id` if this mtr already holds it.
    pub fn find(&self, id: PageId) -> Option<usize> {
        self.pages.iter().position(|e| e.guard.id() == id)
    }

    /// X-latches `id` (reading it if needed) and returns its slot in this mtr.
    pub fn latch(&mut self, id: PageId) -> crate::Result<usize> {
        if let Some(i) = self.find(id) {
            return Ok(i);
        }
        let g = self.store.pool.write(id)?;
        Ok(self.push(g, false))
    }

    /// Takes over an X latch acquired by the caller.
    pub fn adopt(&mut self, guard: PageWrite<'a>) -> usize {
        self.push(guard, false)
    }

    /// A frame for a page being created (no read); the caller formats it.
    pub fn create(&mut self, id: PageId) -> crate::Result<usize> {
        let g = self.store.pool.create(id)?;
        Ok(self.push(g, true))
    }

    pub fn page(&self, i: usize) -> &[u8] {
        &self.pages[i].guard[..]
    }

    /// Mutable access; marks the page as changed by this mtr.
    pub fn page_mut(&mut self, i: usize) -> &mut [u8] {
        let e = &mut self.pages[i];
        e.modified = true;
        &mut e.guard[..]
    }

    pub fn page_id(&self, i: usize) -> PageId {
        self.pages[i].guard.id()
    }

    /// Sets the logical (engine) part of the record.
    pub fn set_logical(&mut self, bytes: Vec<u8>) {
        self.logical = bytes;
    }

    /// True when nothing was changed.
    pub fn is_empty(&self) -> bool {
        self.logical.is_empty() && !self.pages.iter().any(|e| e.modified)
    }

    /// Appends the redo record and stamps the changed pages; releases every latch.
    /// Returns the end LSN of the record (None when nothing changed).
    pub fn commit(mut self) -> crate::Result<Option<Lsn>> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut payload = Vec::with_capacity(256);
        // The count is patched in below: a page latched for change whose bytes came out the
        // same (an empty diff) is not logged, and its bytes are taken back out.
        redo::begin_mtr(&mut payload, self.txn, 0);
        let mut changed: Vec<usize> = Vec::with_capacity(self.pages.len());
        for i in 0..self.pages.len() {
            let e = &mut self.pages[i];
            if !e.modified {
                continue;
            }
            debug_assert_eq!(e.guard.len(), PAGE_SIZE);
            let mark = payload.len();
            if redo::encode_change(
                &mut payload,
                e.guard.id(),
                e.before.as_deref_mut(),
                &e.guard[..],
            ) {
                changed.push(i);
            } else {
                payload.truncate(mark);
            }
        }
        redo::set_mtr_change_count(&mut payload, changed.len() as u16);
        redo::finish_mtr(&mut payload, &self.logical);
        let pages = &mut self.pages;
        let end = self.store.wal.append(&payload, |start, end| {
            for &i in &changed {
                pages[i].guard.mark_dirty_range(start, end);
            }
        })?;
        Ok(Some(end))
    }
}
