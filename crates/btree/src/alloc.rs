//! Page allocation: the meta page (page 0) and the free list.
//!
//! Meta page body (after the common header), all little-endian u64:
//! 32: next never-used page id; 40: free-list head (0 = empty); 48..: engine slots
//! (`META_SLOTS` u64 values the engine uses for its own roots and counters).
//! A free page is a page of type Free whose bytes 32..40 hold the next free page id.
//!
//! Must never: hand out a page that is still linked into a tree; change the meta page
//! outside an mtr.

use crate::mtr::Mtr;
use crate::pagemut::PageMut;
use crate::{Error, Result};
use tierdb_page::{PageId, PageType};

pub const META_PAGE: PageId = PageId(0);
const NEXT_PAGE: usize = 32;
const FREE_HEAD: usize = 40;
const SLOTS: usize = 48;
/// Number of u64 slots in the meta page reserved for the engine.
pub const META_SLOTS: usize = 64;

fn r64(p: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(a)
}
fn w64(p: &mut PageMut, at: usize, v: u64) {
    p.write(at, &v.to_le_bytes());
}

/// Formats the meta page of a new data file (inside `mtr`).
pub fn format_meta(mtr: &mut Mtr) -> Result<()> {
    let i = mtr.create(META_PAGE)?;
    let mut p = mtr.page_mut(i);
    tierdb_page::format(p.rewrite(), META_PAGE, PageType::Meta);
    w64(&mut p, NEXT_PAGE, 1);
    w64(&mut p, FREE_HEAD, 0);
    Ok(())
}

/// Allocates a page and returns its slot in `mtr` (created, unformatted: the caller formats).
pub fn allocate(mtr: &mut Mtr) -> Result<usize> {
    let m = mtr.latch(META_PAGE)?;
    let head = r64(mtr.page(m), FREE_HEAD);
    if head != 0 {
        let f = mtr.latch(PageId(head))?;
        if tierdb_page::page_type_raw(mtr.page(f)) != PageType::Free as u8 {
            return Err(Error::Corrupt(format!(
                "free-list page {head} is not a free page"
            )));
        }
        let next = r64(mtr.page(f), 32);
        w64(&mut mtr.page_mut(m), FREE_HEAD, next);
        return Ok(f);
    }
    let id = r64(mtr.page(m), NEXT_PAGE);
    w64(&mut mtr.page_mut(m), NEXT_PAGE, id + 1);
    mtr.create(PageId(id))
}

/// Puts a page (latched in `mtr`, no longer referenced) on the free list.
pub fn free(mtr: &mut Mtr, slot: usize) -> Result<()> {
    let id = mtr.page_id(slot);
    let m = mtr.latch(META_PAGE)?;
    let head = r64(mtr.page(m), FREE_HEAD);
    w64(&mut mtr.page_mut(m), FREE_HEAD, id.0);
    let mut p = mtr.page_mut(slot);
    tierdb_page::format(p.rewrite(), id, PageType::Free);
    w64(&mut p, 32, head);
    Ok(())
}

/// Reads engine slot `i` of the meta page.
pub fn meta_slot(store: &crate::Store, i: usize) -> Result<u64> {
    assert!(i < META_SLOTS);
    let g = store.pool.read(META_PAGE)?;
    Ok(r64(&g, SLOTS + 8 * i))
}

/// Writes engine slot `i` of the meta page (inside `mtr`).
pub fn set_meta_slot(mtr: &mut Mtr, i: usize, v: u64) -> Result<()> {
    assert!(i < META_SLOTS);
    let m = mtr.latch(META_PAGE)?;
    w64(&mut mtr.page_mut(m), SLOTS + 8 * i, v);
    Ok(())
}

/// Number of pages ever allocated (the data file's high-water mark).
pub fn pages_allocated(store: &crate::Store) -> Result<u64> {
    let g = store.pool.read(META_PAGE)?;
    Ok(r64(&g, NEXT_PAGE))
}
