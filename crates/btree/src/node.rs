//! B+tree node layout inside a 16 KiB page (slotted page). Byte layout in `docs/format.md`
//! ("B+tree node").
//!
//! Owns: reading and rewriting the node header, slot array and cells of one page buffer.
//! Must never: touch latches, the log or other pages; trust a cell offset or length read from
//! the page without bounds checks (a corrupt page gives `NodeError`, never a panic).

use crate::pagemut::PageMut;
use tierdb_page::{PageId, PageType, PAGE_HEADER_SIZE, PAGE_SIZE};

/// Node header, right after the common page header.
pub const NODE_HEADER_SIZE: usize = 32;
/// First byte of the slot array.
pub const SLOTS_START: usize = PAGE_HEADER_SIZE + NODE_HEADER_SIZE;
const _: () = assert!(SLOTS_START == 64);

mod off {
    use tierdb_page::PAGE_HEADER_SIZE as H;
    pub const NSLOTS: usize = H; // u16
    pub const FREE_END: usize = H + 2; // u16: start of the cell area (grows down)
    pub const FRAG: usize = H + 4; // u16: bytes of dead cells inside the cell area
    pub const LEVEL: usize = H + 6; // u8: 0 = leaf
    pub const RIGHT: usize = H + 8; // u64: right sibling page id, 0 = none
    pub const LEFTMOST: usize = H + 16; // u64: internal nodes: child for keys < first key
}

/// Largest key accepted (bytes).
pub const MAX_KEY_LEN: usize = 1024;
/// Largest leaf cell (key + value + 4-byte cell header); four fit in a page, so a split
/// always produces halves that fit.
pub const MAX_LEAF_CELL: usize = (PAGE_SIZE - SLOTS_START) / 4 - 2;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("page {page}: malformed B+tree node ({what})")]
pub struct NodeError {
    pub page: u64,
    pub what: &'static str,
}

fn r16(p: &[u8], at: usize) -> usize {
    u16::from_le_bytes([p[at], p[at + 1]]) as usize
}
fn w16(p: &mut PageMut, at: usize, v: usize) {
    p.write(at, &(v as u16).to_le_bytes());
}
fn r64(p: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&p[at..at + 8]);
    u64::from_le_bytes(a)
}
fn w64(p: &mut PageMut, at: usize, v: u64) {
    p.write(at, &v.to_le_bytes());
}

/// Formats `p` as an empty node. Invariant kept by every function here: the gap between the
/// slot array and the cell area is all zero, so full page images in the redo log can omit it.
/// The whole page is rewritten (logged as a full image).
pub fn init(p: &mut PageMut, id: PageId, level: u8) {
    let ty = if level == 0 {
        PageType::BTreeLeaf
    } else {
        PageType::BTreeInternal
    };
    let b = p.rewrite();
    tierdb_page::format(b, id, ty);
    // NSLOTS and FRAG are zero after `format`.
    b[off::FREE_END..off::FREE_END + 2].copy_from_slice(&(PAGE_SIZE as u16).to_le_bytes());
    b[off::LEVEL] = level;
}

pub fn nslots(p: &[u8]) -> usize {
    r16(p, off::NSLOTS)
}
pub fn level(p: &[u8]) -> u8 {
    p[off::LEVEL]
}
pub fn is_leaf(p: &[u8]) -> bool {
    level(p) == 0
}
pub fn right(p: &[u8]) -> Option<PageId> {
    match r64(p, off::RIGHT) {
        0 => None,
        v => Some(PageId(v)),
    }
}
pub fn set_right(p: &mut PageMut, r: Option<PageId>) {
    w64(p, off::RIGHT, r.map_or(0, |x| x.0));
}
pub fn leftmost(p: &[u8]) -> PageId {
    PageId(r64(p, off::LEFTMOST))
}
pub fn set_leftmost(p: &mut PageMut, c: PageId) {
    w64(p, off::LEFTMOST, c.0);
}

/// Checks the header invariants that every other accessor relies on. Called whenever a
/// node is latched for reading or writing.
pub fn check(p: &[u8], id: PageId) -> Result<(), NodeError> {
    let err = |what| Err(NodeError { page: id.0, what });
    let ty = tierdb_page::page_type_raw(p);
    if ty != PageType::BTreeLeaf as u8 && ty != PageType::BTreeInternal as u8 {
        return err("not a B+tree page");
    }
    if (ty == PageType::BTreeLeaf as u8) != is_leaf(p) {
        return err("page type and level disagree");
    }
    let n = nslots(p);
    let fe = r16(p, off::FREE_END);
    let fe = if fe == 0 { PAGE_SIZE } else { fe };
    if SLOTS_START + 2 * n > fe || fe > PAGE_SIZE {
        return err("slot array overlaps cell area");
    }
    for i in 0..n {
        let o = r16(p, SLOTS_START + 2 * i);
        if o < fe || o + 4 > PAGE_SIZE {
            return err("slot points outside the cell area");
        }
        let kl = r16(p, o);
        let rest = if is_leaf(p) { r16(p, o + 2) } else { 8 };
        let hdr = if is_leaf(p) { 4 } else { 10 };
        if o + hdr + kl + rest > PAGE_SIZE || (!is_leaf(p) && o + 10 > PAGE_SIZE) {
            return err("cell runs past the page end");
        }
    }
    Ok(())
}

fn free_end(p: &[u8]) -> usize {
    match r16(p, off::FREE_END) {
        0 => PAGE_SIZE, // PAGE_SIZE does not fit in u16: stored as 0
        v => v,
    }
}
fn set_free_end(p: &mut PageMut, v: usize) {
    w16(p, off::FREE_END, if v == PAGE_SIZE { 0 } else { v });
}
fn slot(p: &[u8], i: usize) -> usize {
    r16(p, SLOTS_START + 2 * i)
}

/// Bytes a cell occupies (without its slot).
pub fn leaf_cell_size(key: &[u8], val: &[u8]) -> usize {
    4 + key.len() + val.len()
}
pub fn internal_cell_size(key: &[u8]) -> usize {
    10 + key.len()
}

fn cell_size_at(p: &[u8], o: usize) -> usize {
    if is_leaf(p) {
        4 + r16(p, o) + r16(p, o + 2)
    } else {
        10 + r16(p, o)
    }
}

pub fn key(p: &[u8], i: usize) -> &[u8] {
    let o = slot(p, i);
    let kl = r16(p, o);
    if is_leaf(p) {
        &p[o + 4..o + 4 + kl]
    } else {
        &p[o + 10..o + 10 + kl]
    }
}
pub fn value(p: &[u8], i: usize) -> &[u8] {
    let o = slot(p, i);
    let (kl, vl) = (r16(p, o), r16(p, o + 2));
    &p[o + 4 + kl..o + 4 + kl + vl]
}
pub fn child(p: &[u8], i: usize) -> PageId {
    PageId(r64(p, slot(p, i) + 2))
}

/// Bytes free for new cells + slots, counting fragmented space (reclaimed by compaction).
pub fn free_space(p: &[u8]) -> usize {
    free_end(p) - (SLOTS_START + 2 * nslots(p)) + r16(p, off::FRAG)
}
/// Bytes used by cells and slots.
pub fn used_space(p: &[u8]) -> usize {
    PAGE_SIZE - SLOTS_START - free_space(p)
}

/// The first 8 bytes of `k` as a big-endian number, zero-padded: for two keys, unequal
/// prefixes order them as the keys do (a key that ends early pads with zeros, the lowest
/// byte, as the shorter key sorts first).
fn prefix8(k: &[u8]) -> u64 {
    match k.first_chunk::<8>() {
        Some(b) => u64::from_be_bytes(*b),
        None => {
            let mut b = [0u8; 8];
            b[..k.len()].copy_from_slice(k);
            u64::from_be_bytes(b)
        }
    }
}

/// Orders `a` and `b` (`ap`, `bp`: their `prefix8`). Equal prefixes with both keys at most
/// 8 bytes long differ only in length (the shorter is the other's prefix).
fn cmp_keys(a: &[u8], ap: u64, b: &[u8], bp: u64) -> std::cmp::Ordering {
    match ap.cmp(&bp) {
        std::cmp::Ordering::Equal if a.len() <= 8 && b.len() <= 8 => a.len().cmp(&b.len()),
        std::cmp::Ordering::Equal => a[8.min(a.len())..].cmp(&b[8.min(b.len())..]),
        unequal => unequal,
    }
}

/// Binary search: Ok(i) if key i equals `k`, Err(i) = insertion point.
///
/// Every key of a node lies between its first and last key, so it starts with the bytes
/// those two share (in a leaf of integer keys, all but the last byte or two). The search
/// compares only what follows that shared part, 8 bytes at a time as one integer.
pub fn search(p: &[u8], k: &[u8]) -> Result<usize, usize> {
    let n = nslots(p);
    if n == 0 {
        return Err(0);
    }
    let hdr = if is_leaf(p) { 4 } else { 10 };
    let key_at = |i: usize| {
        let o = slot(p, i);
        &p[o + hdr..o + hdr + r16(p, o)]
    };
    let (first, last) = (key_at(0), key_at(n - 1));
    let shared = first.iter().zip(last).take_while(|(a, b)| a == b).count();
    // `k` outside the shared part sorts before or after every key of the node.
    let kshared = &k[..shared.min(k.len())];
    match kshared.cmp(&first[..shared]) {
        std::cmp::Ordering::Less => return Err(0),
        std::cmp::Ordering::Greater => return Err(n),
        std::cmp::Ordering::Equal => {}
    }
    let krest = &k[shared..];
    let kp = prefix8(krest);
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        let mk = key_at(mid);
        // Sorted keys all hold the shared part; a corrupt (unsorted) node gets an answer
        // that may be wrong, not a panic.
        let ord = match mk.get(shared..) {
            Some(mrest) => cmp_keys(mrest, prefix8(mrest), krest, kp),
            None => mk.cmp(k),
        };
        match ord {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => return Ok(mid),
        }
    }
    Err(lo)
}

/// Internal node: the child to descend into for key `k`, and its position (-1 = leftmost).
pub fn child_for(p: &[u8], k: &[u8]) -> (PageId, isize) {
    let i = match search(p, k) {
        Ok(i) => i as isize,
        Err(i) => i as isize - 1,
    };
    if i < 0 {
        (leftmost(p), -1)
    } else {
        (child(p, i as usize), i)
    }
}

/// Child at position `i` (-1 = leftmost).
pub fn child_at(p: &[u8], i: isize) -> PageId {
    if i < 0 {
        leftmost(p)
    } else {
        child(p, i as usize)
    }
}

/// Packs the cells against the page end, without holes. False (page unchanged) when the
/// cells overlap or do not fit (a malformed page: nothing is moved).
pub fn compact(p: &mut PageMut) -> bool {
    // In place, by moves the redo log records as such (a few bytes per run of cells, not a
    // full page image): cells are taken from the highest offset down and packed against the
    // page end, so each one moves up (or stays) and never onto a cell not moved yet. Cells
    // already adjacent move together, as one run. Everything is checked before the first
    // move.
    let n = nslots(p);
    let slots_end = SLOTS_START + 2 * n;
    let mut order: Vec<(usize, usize, usize)> = (0..n)
        .map(|i| {
            let o = slot(p, i);
            (o, cell_size_at(p, o), i)
        })
        .collect();
    order.sort_unstable_by_key(|&(o, _, _)| std::cmp::Reverse(o));
    let (mut above, mut end) = (PAGE_SIZE, PAGE_SIZE);
    for &(o, size, _) in &order {
        match end.checked_sub(size) {
            Some(e) if o + size <= above && o >= slots_end && e >= o => {
                (above, end) = (o, e);
            }
            _ => return false,
        }
    }
    let mut slots = vec![0u8; 2 * n];
    end = PAGE_SIZE;
    // The run being gathered: source start and end, and how far up it moves.
    let mut run: Option<(usize, usize, usize)> = None;
    for (o, size, i) in order {
        end -= size;
        let up = end - o;
        run = match run {
            // Adjacent cells pack with the same distance up: one run.
            Some((s, e, d)) if o + size == s => Some((o, e, d)),
            other => {
                if let Some((s, e, d)) = other {
                    if d > 0 {
                        p.copy_within(s..e, s + d);
                    }
                }
                Some((o, o + size, up))
            }
        };
        slots[2 * i..2 * i + 2].copy_from_slice(&(end as u16).to_le_bytes());
    }
    if let Some((s, e, d)) = run {
        if d > 0 {
            p.copy_within(s..e, s + d);
        }
    }
    if n > 0 {
        p.write(SLOTS_START, &slots);
    }
    p.fill(slots_end..end, 0);
    set_free_end(p, end);
    w16(p, off::FRAG, 0);
    true
}

fn alloc_cell(p: &mut PageMut, size: usize) -> Option<usize> {
    let n = nslots(p);
    if free_end(p) < SLOTS_START + 2 * (n + 1) + size {
        if free_space(p) < size + 2 || !compact(p) {
            return None;
        }
        if free_end(p) < SLOTS_START + 2 * (n + 1) + size {
            return None;
        }
    }
    let o = free_end(p) - size;
    set_free_end(p, o);
    Some(o)
}

fn insert_slot(p: &mut PageMut, i: usize, o: usize) {
    let n = nslots(p);
    let s = SLOTS_START + 2 * i;
    p.copy_within(s..SLOTS_START + 2 * n, s + 2);
    w16(p, s, o);
    w16(p, off::NSLOTS, n + 1);
}

/// Inserts a leaf cell at position `i`. False when it does not fit.
pub fn leaf_insert_at(p: &mut PageMut, i: usize, k: &[u8], v: &[u8]) -> bool {
    let size = leaf_cell_size(k, v);
    let Some(o) = alloc_cell(p, size) else {
        return false;
    };
    w16(p, o, k.len());
    w16(p, o + 2, v.len());
    p.write(o + 4, k);
    p.write(o + 4 + k.len(), v);
    insert_slot(p, i, o);
    true
}

/// Inserts an internal cell (separator `k`, right child `c`) at position `i`.
pub fn internal_insert_at(p: &mut PageMut, i: usize, k: &[u8], c: PageId) -> bool {
    let size = internal_cell_size(k);
    let Some(o) = alloc_cell(p, size) else {
        return false;
    };
    w16(p, o, k.len());
    w64(p, o + 2, c.0);
    p.write(o + 10, k);
    insert_slot(p, i, o);
    true
}

/// Removes slot `i` (its cell becomes fragmented space).
pub fn remove_at(p: &mut PageMut, i: usize) {
    let n = nslots(p);
    let o = slot(p, i);
    let sz = cell_size_at(p, o);
    let s = SLOTS_START + 2 * i;
    p.copy_within(s + 2..SLOTS_START + 2 * n, s);
    // Keep the gap between the slot array and the cells zeroed (full page images skip it).
    p.fill(SLOTS_START + 2 * (n - 1)..SLOTS_START + 2 * n, 0);
    w16(p, off::NSLOTS, n - 1);
    if o == free_end(p) {
        p.fill(o..o + sz, 0);
        set_free_end(p, o + sz);
    } else {
        let f = r16(p, off::FRAG) + sz;
        w16(p, off::FRAG, f);
    }
}

/// Replaces the value of leaf slot `i`; in place when it is no longer than the old one.
/// False when the new value does not fit (the old cell is kept).
pub fn leaf_set_value(p: &mut PageMut, i: usize, v: &[u8]) -> bool {
    let o = slot(p, i);
    let old_len = r16(p, o + 2);
    if old_len >= v.len() {
        // In place; a shorter value leaves its cell's tail as fragmented space.
        let kl = r16(p, o);
        if old_len > v.len() {
            w16(p, o + 2, v.len());
            let f = r16(p, off::FRAG) + (old_len - v.len());
            w16(p, off::FRAG, f);
        }
        p.write(o + 4 + kl, v);
        return true;
    }
    let k = key(p, i).to_vec();
    let old = cell_size_at(p, o);
    if free_space(p) + old < leaf_cell_size(&k, v) {
        return false;
    }
    remove_at(p, i);
    leaf_insert_at(p, i, &k, v)
}

/// All cells of a node as owned (key, value-or-child) pairs, for splits and merges.
pub enum Cells {
    Leaf(Vec<(Vec<u8>, Vec<u8>)>),
    Internal(Vec<(Vec<u8>, PageId)>),
}

pub fn leaf_cells(p: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..nslots(p))
        .map(|i| (key(p, i).to_vec(), value(p, i).to_vec()))
        .collect()
}
pub fn internal_cells(p: &[u8]) -> Vec<(Vec<u8>, PageId)> {
    (0..nslots(p))
        .map(|i| (key(p, i).to_vec(), child(p, i)))
        .collect()
}

/// Rebuilds node `p` (keeping id, level, right link, leftmost) with exactly `cells`.
pub fn rebuild_leaf(p: &mut PageMut, cells: &[(Vec<u8>, Vec<u8>)]) {
    let (id, lvl, r) = (tierdb_page::page_id(p), level(p), right(p));
    init(p, id, lvl);
    set_right(p, r);
    for (i, (k, v)) in cells.iter().enumerate() {
        let ok = leaf_insert_at(p, i, k, v);
        debug_assert!(ok, "rebuild_leaf: cells must fit");
    }
}
pub fn rebuild_internal(p: &mut PageMut, leftmost_child: PageId, cells: &[(Vec<u8>, PageId)]) {
    let (id, lvl, r) = (tierdb_page::page_id(p), level(p), right(p));
    init(p, id, lvl);
    set_right(p, r);
    set_leftmost(p, leftmost_child);
    for (i, (k, c)) in cells.iter().enumerate() {
        let ok = internal_insert_at(p, i, k, *c);
        debug_assert!(ok, "rebuild_internal: cells must fit");
    }
}

/// Size of a set of leaf cells including slots.
pub fn leaf_cells_bytes(cells: &[(Vec<u8>, Vec<u8>)]) -> usize {
    cells.iter().map(|(k, v)| leaf_cell_size(k, v) + 2).sum()
}
pub fn internal_cells_bytes(cells: &[(Vec<u8>, PageId)]) -> usize {
    cells.iter().map(|(k, _)| internal_cell_size(k) + 2).sum()
}
/// Bytes available for cells + slots in an empty node.
pub const NODE_CAPACITY: usize = PAGE_SIZE - SLOTS_START;

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys that stress the 8-byte prefix shortcut: short keys, zero bytes, long shared
    /// prefixes differing only past byte 8.
    fn tricky_key() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(255u8)], 0..12),
            proptest::collection::vec(any::<u8>(), 0..20),
            proptest::collection::vec(prop_oneof![Just(0u8), Just(7u8)], 0..3).prop_map(|t| [
                b"samepref".as_slice(),
                &t
            ]
            .concat()),
        ]
    }

    proptest::proptest! {
        #[test]
        fn search_agrees_with_a_sorted_list(
            keys in proptest::collection::btree_set(tricky_key(), 0..60),
            probes in proptest::collection::vec(tricky_key(), 1..40),
            leaf in proptest::bool::ANY,
        ) {
            let mut buf = vec![0u8; PAGE_SIZE];
            let mut p = PageMut::untracked(&mut buf);
            init(&mut p, PageId(9), if leaf { 0 } else { 1 });
            let sorted: Vec<Vec<u8>> = keys.into_iter().collect();
            for (i, k) in sorted.iter().enumerate() {
                let ok = if leaf {
                    leaf_insert_at(&mut p, i, k, b"v")
                } else {
                    internal_insert_at(&mut p, i, k, PageId(100 + i as u64))
                };
                proptest::prop_assert!(ok);
            }
            for k in sorted.iter().chain(probes.iter()) {
                let want = sorted.binary_search(k);
                proptest::prop_assert_eq!(search(&p, k), want, "key {:?}", k);
            }
        }
    }

    #[test]
    fn leaf_insert_search_remove_round_trip() {
        let mut buf = vec![0u8; PAGE_SIZE];
        let mut p = PageMut::untracked(&mut buf);
        init(&mut p, PageId(3), 0);
        for i in (0..200u32).rev() {
            let k = i.to_be_bytes();
            let pos = search(&p, &k).unwrap_err();
            assert!(leaf_insert_at(&mut p, pos, &k, &[i as u8; 20]));
        }
        check(&p, PageId(3)).unwrap();
        assert_eq!(nslots(&p), 200);
        for i in 0..200u32 {
            let pos = search(&p, &i.to_be_bytes()).unwrap();
            assert_eq!(value(&p, pos), &[i as u8; 20]);
        }
        for i in (0..200u32).step_by(2) {
            let pos = search(&p, &i.to_be_bytes()).unwrap();
            remove_at(&mut p, pos);
        }
        assert_eq!(nslots(&p), 100);
        // Space from removed cells is reusable after compaction.
        let before = free_space(&p);
        assert!(leaf_set_value(&mut p, 0, &[9u8; 500]));
        assert_eq!(free_space(&p), before - 480);
        check(&p, PageId(3)).unwrap();
    }

    /// A leaf full of rows whose values change size (an UPDATE making rows shorter, then
    /// longer): shrinking stays in place, growing compacts; each change's recorded writes
    /// replay to the page and stay far below a full 16 KiB image.
    #[test]
    fn value_changes_and_compaction_log_moves_not_images() {
        use crate::pagemut::OpLog;
        let mut buf = vec![0u8; PAGE_SIZE];
        init(&mut PageMut::untracked(&mut buf), PageId(5), 0);
        let mut n = 0u32;
        while leaf_insert_at(
            &mut PageMut::untracked(&mut buf),
            n as usize,
            &n.to_be_bytes(),
            &[n as u8; 200],
        ) {
            n += 1;
        }
        let mut largest = 0;
        for (round, len) in [(0, 150usize), (1, 199), (2, 120), (3, 200)] {
            for i in 0..n as usize {
                let before = buf.clone();
                let mut log = OpLog::new();
                let ok = leaf_set_value(
                    &mut PageMut::new(&mut buf, Some(&mut log)),
                    i,
                    &[(i + round) as u8; 256][..len],
                );
                assert!(ok, "round {round}, slot {i}");
                assert!(
                    !log.is_whole(),
                    "round {round}, slot {i}: logged as a full image"
                );
                largest = largest.max(log.ops().len());
                assert_eq!(
                    log.replay_on(PageId(5), &before),
                    buf,
                    "round {round}, slot {i}"
                );
                check(&buf, PageId(5)).unwrap();
            }
        }
        for i in 0..n as usize {
            assert_eq!(value(&buf, i), &[(i + 3) as u8; 200][..]);
            assert_eq!(key(&buf, i), &(i as u32).to_be_bytes());
        }
        assert!(largest < 2048, "largest recorded change: {largest} bytes");
    }

    /// Two slots naming one cell (a page no code writes, that passes `check`): compaction
    /// refuses it whole instead of moving cells onto each other, and inserts report no room.
    #[test]
    fn a_page_with_overlapping_cells_is_not_compacted() {
        let mut buf = vec![0u8; PAGE_SIZE];
        let mut p = PageMut::untracked(&mut buf);
        init(&mut p, PageId(7), 0);
        for i in 0..60u32 {
            assert!(leaf_insert_at(
                &mut p,
                i as usize,
                &i.to_be_bytes(),
                &[i as u8; 240]
            ));
        }
        let first = slot(&p, 0);
        w16(&mut p, SLOTS_START + 2, first);
        w16(&mut p, off::FRAG, 4000);
        check(&p, PageId(7)).unwrap();
        let before = p.to_vec();
        assert!(!compact(&mut p));
        assert_eq!(&p[..], &before[..], "nothing moved");
        assert!(free_space(&p) > 1600, "room counting the fragments");
        assert!(!leaf_insert_at(&mut p, 60, &[0xff; 4], &[1; 1500]));
    }

    #[test]
    fn full_leaf_refuses_insert() {
        let mut buf = vec![0u8; PAGE_SIZE];
        let mut p = PageMut::untracked(&mut buf);
        init(&mut p, PageId(1), 0);
        let mut i = 0u32;
        loop {
            let n = nslots(&p);
            if !leaf_insert_at(&mut p, n, &i.to_be_bytes(), &[0u8; 100]) {
                break;
            }
            i += 1;
        }
        assert!(i > 100 && i < 160);
        check(&p, PageId(1)).unwrap();
    }
}
