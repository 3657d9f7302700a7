//! B+tree algorithms. See the crate doc for the latching protocol.
//!
//! Must never: latch a left sibling while holding its right neighbour (merges only pull a
//! right sibling into its left neighbour; scans move left to right, and descending scans
//! descend again from the root for each leaf); modify a page outside
//! the caller's `Mtr`; leave a node over capacity (splits are decided on byte sizes).

use crate::mtr::Mtr;
use crate::node::{self, NODE_CAPACITY};
use crate::{alloc, Error, Result, Store};
use std::ops::Bound;
use tierdb_buffer::{PageRead, PageWrite};
use tierdb_page::{PageId, PageType};

/// What `BTree::modify` should do with the entry, decided from its current value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Modify {
    Keep,
    Put(Vec<u8>),
    Delete,
}

/// A B+tree identified by its root page, which never moves (root splits push the old root's
/// contents down into two new children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BTree {
    pub root: PageId,
}

/// Where a read found a key: the leaf and its page LSN then (`BTree::get_hinted`). A later
/// `modify_hinted` of the same key latches that leaf directly when its LSN is unchanged: a
/// page changes only in an mtr, which stamps a new LSN at commit, so an equal LSN means the
/// same bytes and the same place in the same tree. (An mtr that fails before its commit
/// leaves its pages changed under the old LSN; after such a failure the log is poisoned or
/// the tree is reported corrupt, and the key must still be inside the leaf for the hint to
/// be used.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafHint {
    pub page: PageId,
    pub lsn: tierdb_page::Lsn,
}

fn check_node(p: &[u8], id: PageId) -> Result<()> {
    let t = tierdb_page::page_type_raw(p);
    if t != PageType::BTreeLeaf as u8 && t != PageType::BTreeInternal as u8 {
        return Err(Error::Corrupt(format!(
            "page {id} is not a B+tree node (type {t})"
        )));
    }
    if (t == PageType::BTreeLeaf as u8) != node::is_leaf(p) {
        return Err(Error::Corrupt(format!(
            "page {id}: type and level disagree"
        )));
    }
    Ok(())
}

fn split_index(sizes: impl Iterator<Item = usize>, total: usize, len: usize) -> usize {
    let mut acc = 0;
    for (i, s) in sizes.enumerate() {
        acc += s;
        if acc >= total / 2 {
            return (i + 1).clamp(1, len - 1);
        }
    }
    len / 2
}

impl BTree {
    /// Creates an empty tree (a root leaf) inside `mtr`.
    pub fn create(mtr: &mut Mtr) -> Result<BTree> {
        let s = alloc::allocate(mtr)?;
        let id = mtr.page_id(s);
        node::init(&mut mtr.page_mut(s), id, 0);
        Ok(BTree { root: id })
    }

    fn descend_read<'a>(&self, store: &'a Store, key: &[u8]) -> Result<PageRead<'a>> {
        let mut g = store.pool.read(self.root)?;
        loop {
            check_node(&g, g.id())?;
            if node::is_leaf(&g) {
                return Ok(g);
            }
            let (c, _) = node::child_for(&g, key);
            let next = store.pool.read(c)?;
            g = next;
        }
    }

    /// The last key of the rightmost leaf (down the rightmost child of every level). None when
    /// that leaf is empty, which an emptied right end of a non-empty tree can be: a caller
    /// needing the largest key must then scan.
    pub fn rightmost_key(&self, store: &Store) -> Result<Option<Vec<u8>>> {
        let mut g = store.pool.read(self.root)?;
        loop {
            check_node(&g, g.id())?;
            let n = node::nslots(&g);
            if node::is_leaf(&g) {
                return Ok(n.checked_sub(1).map(|i| node::key(&g, i).to_vec()));
            }
            let next = store.pool.read(node::child_at(&g, n as isize - 1))?;
            g = next;
        }
    }

    /// The largest key in the tree, also when the rightmost leaf is empty: children are
    /// tried right to left, so only the empty leaves at the right end are read on the way.
    /// For start-up (no latch is held across the levels).
    pub fn largest_key(&self, store: &Store) -> Result<Option<Vec<u8>>> {
        self.largest_below(store, self.root)
    }

    fn largest_below(&self, store: &Store, page: PageId) -> Result<Option<Vec<u8>>> {
        let children: Vec<PageId> = {
            let g = store.pool.read(page)?;
            check_node(&g, g.id())?;
            let n = node::nslots(&g);
            if node::is_leaf(&g) {
                return Ok(n.checked_sub(1).map(|i| node::key(&g, i).to_vec()));
            }
            (-1..n as isize)
                .rev()
                .map(|i| node::child_at(&g, i))
                .collect()
        };
        for c in children {
            if let Some(k) = self.largest_below(store, c)? {
                return Ok(Some(k));
            }
        }
        Ok(None)
    }

    /// Point lookup; `f` sees the value while the leaf is share-latched.
    pub fn get<R>(
        &self,
        store: &Store,
        key: &[u8],
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<R> {
        Ok(self.get_hinted(store, key, f)?.0)
    }

    /// `get`, also returning where the key was looked up (for `modify_hinted`).
    pub fn get_hinted<R>(
        &self,
        store: &Store,
        key: &[u8],
        f: impl FnOnce(Option<&[u8]>) -> R,
    ) -> Result<(R, LeafHint)> {
        let leaf = self.descend_read(store, key)?;
        let hint = LeafHint {
            page: leaf.id(),
            lsn: tierdb_page::page_lsn(&leaf),
        };
        let r = match node::search(&leaf, key) {
            Ok(i) => f(Some(node::value(&leaf, i))),
            Err(_) => f(None),
        };
        Ok((r, hint))
    }

    /// Calls `f(key, value)` for entries from `from` on, in key order, until `f` returns
    /// false or the tree ends. Runs under shared latches (leaf to right sibling, coupled);
    /// `f` must be quick and must not touch the pool.
    pub fn scan(
        &self,
        store: &Store,
        from: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let k: &[u8] = match from {
            Bound::Unbounded => &[],
            Bound::Included(k) | Bound::Excluded(k) => k,
        };
        let mut g = self.descend_read(store, k)?;
        let mut i = match from {
            Bound::Unbounded => 0,
            Bound::Included(k) => node::search(&g, k).unwrap_or_else(|i| i),
            Bound::Excluded(k) => match node::search(&g, k) {
                Ok(i) => i + 1,
                Err(i) => i,
            },
        };
        loop {
            let n = node::nslots(&g);
            while i < n {
                if !f(node::key(&g, i), node::value(&g, i)) {
                    return Ok(());
                }
                i += 1;
            }
            match node::right(&g) {
                None => return Ok(()),
                Some(r) => {
                    let next = store.pool.read(r)?;
                    check_node(&next, r)?;
                    g = next;
                    i = 0;
                }
            }
        }
    }

    /// Calls `f(key, value)` for entries below `upto` (all when unbounded), in descending key
    /// order, until `f` returns false or the tree's start is passed. Leaves have no left
    /// links, so each leaf is reached by its own descent from the root: the descent picks
    /// the child holding the largest keys below the bound and remembers the separator that
    /// starts that child (the leaf's low fence); once the leaf's entries are given, the next
    /// descent looks below that fence. Fences strictly decrease, so it ends. Runs under
    /// shared latches, one leaf at a time; `f` must be quick and must not touch the pool.
    pub fn scan_rev(
        &self,
        store: &Store,
        upto: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        let mut upper: Bound<Vec<u8>> = match upto {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        };
        loop {
            let mut fence: Option<Vec<u8>> = None;
            let mut g = store.pool.read(self.root)?;
            loop {
                check_node(&g, g.id())?;
                if node::is_leaf(&g) {
                    break;
                }
                let n = node::nslots(&g);
                // Position of the child holding the largest keys below `upper` (-1 = leftmost).
                let j = match &upper {
                    Bound::Unbounded => n as isize - 1,
                    Bound::Included(k) => node::child_for(&g, k).1,
                    Bound::Excluded(k) => match node::search(&g, k) {
                        Ok(i) | Err(i) => i as isize - 1,
                    },
                };
                if j >= 0 {
                    fence = Some(node::key(&g, j as usize).to_vec());
                }
                let next = store.pool.read(node::child_at(&g, j))?;
                g = next;
            }
            let n = node::nslots(&g);
            let mut i = match &upper {
                Bound::Unbounded => n,
                Bound::Included(k) => match node::search(&g, k) {
                    Ok(i) => i + 1,
                    Err(i) => i,
                },
                Bound::Excluded(k) => node::search(&g, k).unwrap_or_else(|i| i),
            };
            while i > 0 {
                i -= 1;
                if !f(node::key(&g, i), node::value(&g, i)) {
                    return Ok(());
                }
            }
            match fence {
                None => return Ok(()),
                Some(k) => upper = Bound::Excluded(k),
            }
        }
    }

    /// Reads the entry for `key`, lets `f` decide, and applies the decision inside `mtr`.
    /// Returns the previous value. `f` may be called twice (optimistic attempt, then the
    /// structure-modifying retry) and must decide the same way both times. One `modify` per
    /// mtr: the mtr keeps the leaf latched until it commits.
    pub fn modify<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        key: &[u8],
        mut f: impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Vec<u8>>> {
        if key.len() > node::MAX_KEY_LEN {
            return Err(Error::KeyTooLong(key.len()));
        }
        if let Some(old) = self.modify_optimistic(mtr, key, &mut f)? {
            return Ok(old);
        }
        self.modify_pessimistic(mtr, key, &mut f)
    }

    /// `modify`, first trying the leaf `hint` names (a read of `key` in this tree found it
    /// there): when its LSN is unchanged and it holds `key`, or `key` falls between two of
    /// its keys, the change is made there without a descent from the root. Otherwise (the
    /// leaf changed, or the change needs a split or a merge) as `modify`. Like `modify`, the
    /// mtr must hold no latch yet.
    pub fn modify_hinted<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        key: &[u8],
        hint: LeafHint,
        mut f: impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Vec<u8>>> {
        if key.len() > node::MAX_KEY_LEN {
            return Err(Error::KeyTooLong(key.len()));
        }
        // An error fixing the hinted page is left to the descent to meet (or not).
        if let Ok(w) = mtr.store().pool.write(hint.page) {
            let same = tierdb_page::page_lsn(&w) == hint.lsn
                && tierdb_page::page_type_raw(&w) == PageType::BTreeLeaf as u8
                && node::is_leaf(&w);
            let inside = same
                && match node::search(&w, key) {
                    Ok(_) => true,
                    Err(i) => i > 0 && i < node::nslots(&w),
                };
            if inside {
                if let Some(old) = self.change_leaf(mtr, w, key, &mut f)? {
                    return Ok(old);
                }
                return self.modify_pessimistic(mtr, key, &mut f);
            }
        }
        self.modify(mtr, key, f)
    }

    /// Puts `(key, value)` entries of `run` (sorted ascending, no key twice) that belong to one
    /// leaf into it, in one mtr of the caller's: the leaf of `run[0]`, as many entries as fit
    /// it and lie below its upper fence (the separator to its right). Returns how many went
    /// in; 0 when the first does not fit: its `modify` then splits, in ANOTHER mtr (this one
    /// holds the leaf's X latch until it commits, and `modify` would wait for it). Bulk builds
    /// (an index over sorted keys) use it to change a leaf once per run instead of per entry.
    pub fn put_sorted_run<'a>(&self, mtr: &mut Mtr<'a>, run: &[(&[u8], &[u8])]) -> Result<usize> {
        let Some(&(first, _)) = run.first() else {
            return Ok(0);
        };
        // The upper fence: the nearest separator right of the path, read under the parents'
        // latches. Only a change of this leaf (X-latched below) could move it.
        let mut fence: Option<Vec<u8>> = None;
        let Some(w) = self.leaf_for_write(mtr.store(), first, Some(&mut fence))? else {
            return Ok(0);
        };
        let s = mtr.adopt(w);
        let mut n = 0;
        for &(k, v) in run {
            // Too long or too large: `modify` gives the error.
            if k.len() > node::MAX_KEY_LEN || node::leaf_cell_size(k, v) > node::MAX_LEAF_CELL {
                break;
            }
            if fence.as_deref().is_some_and(|f| k >= f) {
                break;
            }
            let p = mtr.page(s);
            let pos = node::search(p, k);
            let have = node::free_space(p)
                + pos.map_or(0, |i| node::leaf_cell_size(k, node::value(p, i)) + 2);
            if node::leaf_cell_size(k, v) + 2 > have {
                break;
            }
            let p = &mut mtr.page_mut(s);
            let ok = match pos {
                Ok(i) => node::leaf_set_value(p, i, v),
                Err(i) => node::leaf_insert_at(p, i, k, v),
            };
            if !ok {
                return Err(Error::Corrupt("leaf space accounting disagrees".into()));
            }
            n += 1;
        }
        Ok(n)
    }

    /// The leaf for `key`, X-latched after an optimistic descent (shared latches coupled down
    /// to level 1). None when the root was a leaf and split before its X latch came. With
    /// `fence`, also the leaf's upper fence: the nearest separator right of the path.
    fn leaf_for_write<'a>(
        &self,
        store: &'a Store,
        key: &[u8],
        mut fence: Option<&mut Option<Vec<u8>>>,
    ) -> Result<Option<PageWrite<'a>>> {
        let mut g = store.pool.read(self.root)?;
        check_node(&g, self.root)?;
        let w = if node::is_leaf(&g) {
            drop(g);
            let w = store.pool.write(self.root)?;
            if !node::is_leaf(&w) {
                return Ok(None);
            }
            w
        } else {
            loop {
                let (c, pos) = node::child_for(&g, key);
                if let Some(f) = fence.as_deref_mut() {
                    let next = (pos + 1) as usize;
                    if next < node::nslots(&g) {
                        *f = Some(node::key(&g, next).to_vec());
                    }
                }
                if node::level(&g) == 1 {
                    let w = store.pool.write(c)?;
                    drop(g);
                    break w;
                }
                let next = store.pool.read(c)?;
                check_node(&next, c)?;
                g = next;
            }
        };
        check_node(&w, w.id())?;
        if !node::is_leaf(&w) {
            return Err(Error::Corrupt(format!("page {} should be a leaf", w.id())));
        }
        Ok(Some(w))
    }

    /// `modify` that X-latches the path from the root down (held, like every latch of the
    /// mtr, until it commits), so one mtr may call it several times on this tree to change
    /// several keys atomically. Other threads cannot read or change the tree until then:
    /// for rare multi-key changes of a small tree (the catalog). The mtr must not also hold
    /// pages of this tree from `modify`, whose leaf-first latching would invert the order.
    pub fn modify_exclusive<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        key: &[u8],
        mut f: impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Vec<u8>>> {
        if key.len() > node::MAX_KEY_LEN {
            return Err(Error::KeyTooLong(key.len()));
        }
        self.modify_pessimistic(mtr, key, &mut f)
    }

    /// Ok(None): needs a structure change; nothing was done.
    #[allow(clippy::type_complexity)]
    fn modify_optimistic<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        key: &[u8],
        f: &mut impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Option<Vec<u8>>>> {
        let Some(w) = self.leaf_for_write(mtr.store(), key, None)? else {
            return Ok(None);
        };
        self.change_leaf(mtr, w, key, f)
    }

    /// Applies `f`'s decision for `key` in leaf `w` (the leaf `key` belongs in, X-latched).
    /// Ok(None): needs a structure change; nothing was done.
    #[allow(clippy::type_complexity)]
    fn change_leaf<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        w: PageWrite<'a>,
        key: &[u8],
        f: &mut impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Option<Vec<u8>>>> {
        let pos = node::search(&w, key);
        let old = pos.ok().map(|i| node::value(&w, i).to_vec());
        let is_root = w.id() == self.root;
        match f(old.as_deref()) {
            Modify::Keep => Ok(Some(old)),
            Modify::Put(v) => {
                let need = node::leaf_cell_size(key, &v);
                if need > node::MAX_LEAF_CELL {
                    return Err(Error::EntryTooLarge(need));
                }
                let have = node::free_space(&w)
                    + old.as_ref().map_or(0, |o| node::leaf_cell_size(key, o) + 2);
                if need + 2 > have {
                    return Ok(None);
                }
                let s = mtr.adopt(w);
                let p = &mut mtr.page_mut(s);
                let ok = match pos {
                    Ok(i) => node::leaf_set_value(p, i, &v),
                    Err(i) => node::leaf_insert_at(p, i, key, &v),
                };
                if !ok {
                    return Err(Error::Corrupt("leaf space accounting disagrees".into()));
                }
                Ok(Some(old))
            }
            Modify::Delete => {
                let Ok(i) = pos else { return Ok(Some(old)) };
                let cell = node::leaf_cell_size(key, old.as_deref().unwrap_or_default()) + 2;
                if !is_root && node::used_space(&w).saturating_sub(cell) < NODE_CAPACITY / 8 {
                    return Ok(None);
                }
                let s = mtr.adopt(w);
                node::remove_at(&mut mtr.page_mut(s), i);
                Ok(Some(old))
            }
        }
    }

    fn modify_pessimistic<'a>(
        &self,
        mtr: &mut Mtr<'a>,
        key: &[u8],
        f: &mut impl FnMut(Option<&[u8]>) -> Modify,
    ) -> Result<Option<Vec<u8>>> {
        let mut path: Vec<(usize, isize)> = Vec::new();
        let mut cur = self.root;
        let leaf = loop {
            let s = mtr.latch(cur)?;
            check_node(mtr.page(s), cur)?;
            if node::is_leaf(mtr.page(s)) {
                break s;
            }
            let (c, pos) = node::child_for(mtr.page(s), key);
            path.push((s, pos));
            cur = c;
        };
        let pos = node::search(mtr.page(leaf), key);
        let old = pos.ok().map(|i| node::value(mtr.page(leaf), i).to_vec());
        match f(old.as_deref()) {
            Modify::Keep => {}
            Modify::Put(v) => {
                let need = node::leaf_cell_size(key, &v);
                if need > node::MAX_LEAF_CELL {
                    return Err(Error::EntryTooLarge(need));
                }
                let fitted = match pos {
                    Ok(i) => {
                        let ok = node::leaf_set_value(&mut mtr.page_mut(leaf), i, &v);
                        if !ok {
                            node::remove_at(&mut mtr.page_mut(leaf), i);
                        }
                        ok
                    }
                    Err(_) => false,
                };
                if !fitted {
                    self.insert_split(mtr, &path, leaf, key, &v)?;
                }
            }
            Modify::Delete => {
                if let Ok(i) = pos {
                    node::remove_at(&mut mtr.page_mut(leaf), i);
                    self.rebalance(mtr, &path, leaf)?;
                }
            }
        }
        Ok(old)
    }

    fn insert_split(
        &self,
        mtr: &mut Mtr,
        path: &[(usize, isize)],
        leaf: usize,
        key: &[u8],
        v: &[u8],
    ) -> Result<()> {
        let mut cells = node::leaf_cells(mtr.page(leaf));
        let ins = cells
            .binary_search_by(|(k, _)| k.as_slice().cmp(key))
            .unwrap_or_else(|i| i);
        cells.insert(ins, (key.to_vec(), v.to_vec()));
        let total = node::leaf_cells_bytes(&cells);
        if total <= NODE_CAPACITY {
            node::rebuild_leaf(&mut mtr.page_mut(leaf), &cells);
            return Ok(());
        }
        // Appending at the end of the rightmost leaf (ascending loads): keep the left page full.
        let at = if ins == cells.len() - 1 && node::right(mtr.page(leaf)).is_none() {
            cells.len() - 1
        } else {
            split_index(
                cells.iter().map(|(k, v)| node::leaf_cell_size(k, v) + 2),
                total,
                cells.len(),
            )
        };
        let right_cells = cells.split_off(at);
        let sep = right_cells[0].0.clone();
        if path.is_empty() {
            // Root leaf: move both halves down, root becomes a level-1 internal node.
            let l = alloc::allocate(mtr)?;
            let r = alloc::allocate(mtr)?;
            let (lid, rid) = (mtr.page_id(l), mtr.page_id(r));
            node::init(&mut mtr.page_mut(l), lid, 0);
            node::rebuild_leaf(&mut mtr.page_mut(l), &cells);
            node::set_right(&mut mtr.page_mut(l), Some(rid));
            node::init(&mut mtr.page_mut(r), rid, 0);
            node::rebuild_leaf(&mut mtr.page_mut(r), &right_cells);
            let root = &mut mtr.page_mut(leaf);
            node::init(root, self.root, 1);
            node::set_leftmost(root, lid);
            node::internal_insert_at(root, 0, &sep, rid);
            return Ok(());
        }
        let n = alloc::allocate(mtr)?;
        let nid = mtr.page_id(n);
        let old_right = node::right(mtr.page(leaf));
        node::init(&mut mtr.page_mut(n), nid, 0);
        node::rebuild_leaf(&mut mtr.page_mut(n), &right_cells);
        node::set_right(&mut mtr.page_mut(n), old_right);
        // The new entry alone on the new page (an append): the leaf keeps the cells it has.
        if !(at == ins && right_cells.len() == 1) {
            node::rebuild_leaf(&mut mtr.page_mut(leaf), &cells);
        }
        node::set_right(&mut mtr.page_mut(leaf), Some(nid));
        self.insert_internal(mtr, path, path.len() - 1, sep, nid)
    }

    fn insert_internal(
        &self,
        mtr: &mut Mtr,
        path: &[(usize, isize)],
        depth: usize,
        sep: Vec<u8>,
        child: PageId,
    ) -> Result<()> {
        let (s, pos) = path[depth];
        let at = (pos + 1) as usize;
        if node::internal_insert_at(&mut mtr.page_mut(s), at, &sep, child) {
            return Ok(());
        }
        let p = mtr.page(s);
        let (lm, lvl, old_right) = (node::leftmost(p), node::level(p), node::right(p));
        let mut cells = node::internal_cells(p);
        cells.insert(at, (sep, child));
        let m = if at == cells.len() - 1 && old_right.is_none() {
            cells.len() - 1
        } else {
            cells.len() / 2
        };
        let right_cells = cells.split_off(m + 1);
        let Some((pk, pc)) = cells.pop() else {
            return Err(Error::Corrupt("internal split of an empty node".into()));
        };
        if depth == 0 {
            let l = alloc::allocate(mtr)?;
            let r = alloc::allocate(mtr)?;
            let (lid, rid) = (mtr.page_id(l), mtr.page_id(r));
            node::init(&mut mtr.page_mut(l), lid, lvl);
            node::rebuild_internal(&mut mtr.page_mut(l), lm, &cells);
            node::set_right(&mut mtr.page_mut(l), Some(rid));
            node::init(&mut mtr.page_mut(r), rid, lvl);
            node::rebuild_internal(&mut mtr.page_mut(r), pc, &right_cells);
            let root = &mut mtr.page_mut(s);
            node::init(root, self.root, lvl + 1);
            node::set_leftmost(root, lid);
            node::internal_insert_at(root, 0, &pk, rid);
            return Ok(());
        }
        let n = alloc::allocate(mtr)?;
        let nid = mtr.page_id(n);
        node::init(&mut mtr.page_mut(n), nid, lvl);
        node::rebuild_internal(&mut mtr.page_mut(n), pc, &right_cells);
        node::set_right(&mut mtr.page_mut(n), old_right);
        node::rebuild_internal(&mut mtr.page_mut(s), lm, &cells);
        node::set_right(&mut mtr.page_mut(s), Some(nid));
        self.insert_internal(mtr, path, depth - 1, pk, nid)
    }

    /// After a delete: merge an underfull node with its right sibling (same parent) when the
    /// two fit in one page, up the path; collapse a root left with a single child.
    fn rebalance(&self, mtr: &mut Mtr, path: &[(usize, isize)], leaf: usize) -> Result<()> {
        let mut cur = leaf;
        let mut depth = path.len();
        while depth > 0 {
            let (ps, pos) = path[depth - 1];
            let p = mtr.page(cur);
            let leafy = node::is_leaf(p);
            let under = if leafy {
                node::used_space(p) < NODE_CAPACITY / 4
            } else {
                node::nslots(p) == 0
            };
            if !under {
                return Ok(());
            }
            let rpos = (pos + 1) as usize;
            if rpos >= node::nslots(mtr.page(ps)) {
                return Ok(()); // last child: never latch leftwards
            }
            let rid = node::child(mtr.page(ps), rpos);
            let rs = mtr.latch(rid)?;
            check_node(mtr.page(rs), rid)?;
            let rr = node::right(mtr.page(rs));
            if leafy {
                let mut cells = node::leaf_cells(mtr.page(cur));
                cells.extend(node::leaf_cells(mtr.page(rs)));
                if node::leaf_cells_bytes(&cells) > NODE_CAPACITY {
                    return Ok(());
                }
                node::rebuild_leaf(&mut mtr.page_mut(cur), &cells);
            } else {
                let sep = node::key(mtr.page(ps), rpos).to_vec();
                let mut cells = node::internal_cells(mtr.page(cur));
                cells.push((sep, node::leftmost(mtr.page(rs))));
                cells.extend(node::internal_cells(mtr.page(rs)));
                if node::internal_cells_bytes(&cells) > NODE_CAPACITY {
                    return Ok(());
                }
                let lm = node::leftmost(mtr.page(cur));
                node::rebuild_internal(&mut mtr.page_mut(cur), lm, &cells);
            }
            node::set_right(&mut mtr.page_mut(cur), rr);
            node::remove_at(&mut mtr.page_mut(ps), rpos);
            alloc::free(mtr, rs)?;
            cur = ps;
            depth -= 1;
        }
        // `cur` is the root.
        while !node::is_leaf(mtr.page(cur)) && node::nslots(mtr.page(cur)) == 0 {
            let c = node::leftmost(mtr.page(cur));
            let cs = mtr.latch(c)?;
            check_node(mtr.page(cs), c)?;
            let bytes = mtr.page(cs).to_vec();
            let mut root = mtr.page_mut(cur);
            let root = root.rewrite();
            root.copy_from_slice(&bytes);
            root[tierdb_page::off::PAGE_ID..tierdb_page::off::PAGE_ID + 8]
                .copy_from_slice(&self.root.0.to_le_bytes());
            alloc::free(mtr, cs)?;
        }
        Ok(())
    }

    /// Every page of the tree, for dropping it (the caller frees them).
    pub fn pages(&self, store: &Store) -> Result<Vec<PageId>> {
        let mut out = vec![];
        let mut level = vec![self.root];
        while !level.is_empty() {
            let mut next = vec![];
            for id in level {
                let g = store.pool.read(id)?;
                check_node(&g, id)?;
                out.push(id);
                if !node::is_leaf(&g) {
                    next.push(node::leftmost(&g));
                    next.extend((0..node::nslots(&g)).map(|i| node::child(&g, i)));
                }
            }
            level = next;
        }
        Ok(out)
    }

    /// Frees up to `max_leaves` leaves of a tree that nobody uses any more (a dropped table or
    /// index), taking them from the right end, in one mtr; internal nodes left without a child
    /// are freed as well, and a root left without children becomes an empty leaf. Leaves are
    /// freed without being read. After every step the tree is still a well-formed (smaller)
    /// tree, so a crash between steps leaves less to do, never a dangling pointer. Returns
    /// the number of pages freed, or None when the root is a leaf: the tree is then one page,
    /// freed by `free_root`.
    pub fn reclaim_step(&self, store: &Store, max_leaves: usize) -> Result<Option<u64>> {
        let mut m = Mtr::new(store, 0);
        let root = m.latch(self.root)?;
        check_node(m.page(root), self.root)?;
        if node::is_leaf(m.page(root)) {
            m.commit()?;
            return Ok(None);
        }
        // The rightmost path down to the level-1 node whose children are leaves.
        let mut path = vec![root];
        loop {
            let top = m.page(*path.last().expect("path starts with the root"));
            if node::level(top) == 1 {
                break;
            }
            let n = node::nslots(top);
            let c = if n > 0 {
                node::child(top, n - 1)
            } else {
                node::leftmost(top)
            };
            let s = m.latch(c)?;
            check_node(m.page(s), c)?;
            if node::is_leaf(m.page(s)) {
                return Err(Error::Corrupt(format!(
                    "page {c}: a leaf above level 1 of tree {}",
                    self.root
                )));
            }
            path.push(s);
        }
        let l1 = *path.last().expect("path is not empty");
        let max = max_leaves.max(1) as u64;
        let mut freed = 0u64;
        while freed < max {
            let n = node::nslots(m.page(l1));
            if n == 0 {
                break;
            }
            let c = node::child(m.page(l1), n - 1);
            node::remove_at(&mut m.page_mut(l1), n - 1);
            let s = m.create(c)?;
            alloc::free(&mut m, s)?;
            freed += 1;
        }
        if freed < max {
            // Only the leftmost child is left: free it, then every node on the path that has
            // no child left, bottom-up.
            let c = node::leftmost(m.page(l1));
            let s = m.create(c)?;
            alloc::free(&mut m, s)?;
            freed += 1;
            let mut i = path.len() - 1;
            loop {
                if i == 0 {
                    node::init(&mut m.page_mut(path[0]), self.root, 0);
                    break;
                }
                let parent = path[i - 1];
                alloc::free(&mut m, path[i])?;
                freed += 1;
                let pn = node::nslots(m.page(parent));
                if pn > 0 {
                    node::remove_at(&mut m.page_mut(parent), pn - 1);
                    break;
                }
                i -= 1;
            }
        }
        m.commit()?;
        Ok(Some(freed))
    }

    /// Frees the root of a tree reduced to one page by `reclaim_step`, inside the caller's
    /// mtr (so the caller can forget the tree in the same atomic change).
    pub fn free_root(&self, mtr: &mut Mtr) -> Result<()> {
        let s = mtr.latch(self.root)?;
        check_node(mtr.page(s), self.root)?;
        if !node::is_leaf(mtr.page(s)) {
            return Err(Error::Corrupt(format!(
                "tree {}: freeing a root that still has children",
                self.root
            )));
        }
        alloc::free(mtr, s)
    }

    /// Depth and node counts, for tests and `SHOW` output.
    pub fn height(&self, store: &Store) -> Result<u8> {
        let g = store.pool.read(self.root)?;
        Ok(node::level(&g) + 1)
    }
}
