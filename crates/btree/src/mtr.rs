//! Mini-transactions: the only way a page is changed.
//!
//! An `Mtr` X-latches the pages it changes, and at `commit` writes ONE redo record holding
//! every changed page (a full image when the page was clean before the mtr, the writes it
//! recorded otherwise, see `pagemut`) plus an optional logical part (the engine's undo
//! information), then stamps the page LSNs and marks the pages dirty inside the WAL append
//! lock — so a checkpoint that reads the log end under the same lock never misses a dirty page.
//!
//! With the `verify-redo` feature (on in the tests of this crate and the engine), every
//! recorded change is replayed on a copy of the page as it was before the mtr and compared
//! with the page after it: a write that bypassed the record panics there instead of going
//! missing at recovery.
//!
//! Lock order: tree pages top-down, then the meta page (allocation), then new/free pages.
//! Must never: release a latch on a changed page before the redo record is appended; log a
//! page it did not change.

use crate::pagemut::{OpLog, PageMut};
use crate::redo;
use crate::Store;
use tierdb_buffer::PageWrite;
use tierdb_page::{Lsn, PageId};

struct Entry<'a> {
    guard: PageWrite<'a>,
    /// The page's writes, when it was already dirty before the mtr (logged as those writes);
    /// None when it was clean or is new (logged as a full image).
    log: Option<OpLog>,
    /// The page before the mtr, to check the recorded writes against (`verify-redo`).
    #[cfg(any(test, feature = "verify-redo"))]
    before: Option<Box<[u8]>>,
    modified: bool,
    /// Carried in the record being built by `commit`.
    logged: bool,
}

thread_local! {
    /// The buffer `commit` builds its record in, kept per thread between mtrs (a write
    /// statement runs several) instead of allocated for each.
    static RECORD: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A record buffer larger than this is not kept for the next mtr (a split's full images).
const RECORD_KEEP: usize = 64 << 10;

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
        let diff = !new && guard.is_dirty();
        self.pages.push(Entry {
            #[cfg(any(test, feature = "verify-redo"))]
            before: diff.then(|| Box::<[u8]>::from(&guard[..])),
            guard,
            log: diff.then(OpLog::new),
            modified: new,
            logged: false,
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

    /// Write access; marks the page as changed by this mtr.
    pub fn page_mut(&mut self, i: usize) -> PageMut<'_> {
        let e = &mut self.pages[i];
        e.modified = true;
        PageMut::new(&mut e.guard[..], e.log.as_mut())
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
        let mut payload = RECORD.take();
        payload.clear();
        payload.reserve(512);
        let r = self.commit_into(&mut payload);
        if payload.capacity() <= RECORD_KEEP {
            RECORD.set(payload);
        }
        r
    }

    fn commit_into(&mut self, payload: &mut Vec<u8>) -> crate::Result<Option<Lsn>> {
        // The count is patched in below: a page latched for change with no write recorded
        // is not logged.
        redo::begin_mtr(payload, self.txn, 0);
        let mut changed = 0u16;
        for e in self.pages.iter_mut() {
            if !e.modified {
                continue;
            }
            let id = e.guard.id();
            match &e.log {
                Some(log) if log.is_whole() => redo::encode_image(payload, id, &e.guard),
                Some(log) if log.count() == 0 => continue,
                Some(log) => {
                    #[cfg(any(test, feature = "verify-redo"))]
                    verify(id, e.before.as_deref(), log, &e.guard);
                    redo::encode_ops(payload, id, log);
                }
                None => redo::encode_image(payload, id, &e.guard),
            }
            e.logged = true;
            changed += 1;
        }
        if changed == 0 && self.logical.is_empty() {
            return Ok(None);
        }
        redo::set_mtr_change_count(payload, changed);
        redo::finish_mtr(payload, &self.logical);
        let pages = &mut self.pages;
        let end = self.store.wal.append(payload, |start, end| {
            for e in pages.iter_mut().filter(|e| e.logged) {
                e.guard.mark_dirty_range(start, end);
            }
        })?;
        Ok(Some(end))
    }
}

/// Replays `log` on the page as it was before the mtr and checks it gives the page now
/// (apart from the LSN and checksum fields, which redo stamps and the pool seals).
#[cfg(any(test, feature = "verify-redo"))]
fn verify(id: PageId, before: Option<&[u8]>, log: &OpLog, after: &[u8]) {
    use tierdb_page::off;
    let Some(before) = before else { return };
    let mut page = log.replay_on(id, before);
    let fields = [off::CRC..off::CRC + 4, off::LSN..off::LSN + 8];
    for r in fields {
        page[r.clone()].copy_from_slice(&after[r]);
    }
    if let Some(at) = (0..page.len()).find(|&k| page[k] != after[k]) {
        panic!("page {id}: a write was not recorded (first difference at byte {at})");
    }
}
