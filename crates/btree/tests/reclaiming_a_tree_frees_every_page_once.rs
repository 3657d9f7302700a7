//! Property test: `reclaim_step` + `free_root` put every page of a tree on the free list
//! exactly once, whatever the tree's shape (one leaf up to three levels, after deletes that
//! merged nodes) and the step size, and leave a second tree untouched; allocating that many
//! pages afterwards hands back exactly those pages without growing the file.

mod common;

use proptest::prelude::*;
use std::collections::BTreeSet;
use std::ops::Bound;
use tierdb_btree::{alloc, BTree, Modify, Mtr, Store};
use tierdb_page::PageId;

/// Key `k` padded to `pad` more bytes: long keys make internal nodes narrow, so a few
/// thousand entries already give a tree of three levels.
fn key(k: u32, pad: usize) -> Vec<u8> {
    let mut v = k.to_be_bytes().to_vec();
    v.resize(4 + pad, b'.');
    v
}

fn put(s: &Store, t: &BTree, k: &[u8], len: usize) {
    let mut m = Mtr::new(s, 0);
    t.modify(&mut m, k, |_| Modify::Put(vec![k[3]; len]))
        .unwrap();
    m.commit().unwrap();
}

fn count(s: &Store, t: &BTree) -> usize {
    let mut n = 0;
    t.scan(s, Bound::Unbounded, |_, _| {
        n += 1;
        true
    })
    .unwrap();
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    #[test]
    fn every_page_of_a_reclaimed_tree_is_freed_once(
        n in 0u32..5000,
        len in 8usize..300,
        pad in 0usize..900,
        delete_every in 2u32..9,
        step in 1usize..40,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let s = common::store(dir.path(), 48);
        let (doomed, kept) = {
            let mut m = Mtr::new(&s, 0);
            let a = BTree::create(&mut m).unwrap();
            let b = BTree::create(&mut m).unwrap();
            m.commit().unwrap();
            (a, b)
        };
        for k in 0..n {
            put(&s, &doomed, &key(k, pad), len);
            if k % 3 == 0 {
                put(&s, &kept, &key(k, 0), 50);
            }
        }
        for k in (0..n).filter(|k| k % delete_every == 0) {
            let mut m = Mtr::new(&s, 0);
            doomed.modify(&mut m, &key(k, pad), |_| Modify::Delete).unwrap();
            m.commit().unwrap();
        }
        let pages: BTreeSet<PageId> = doomed.pages(&s).unwrap().into_iter().collect();
        let kept_rows = count(&s, &kept);
        let high = alloc::pages_allocated(&s).unwrap();

        let mut freed = 0u64;
        while let Some(f) = doomed.reclaim_step(&s, step).unwrap() {
            prop_assert!(f >= 1, "a step freed nothing");
            freed += f;
        }
        let mut m = Mtr::new(&s, 0);
        doomed.free_root(&mut m).unwrap();
        m.commit().unwrap();
        freed += 1;
        prop_assert_eq!(freed as usize, pages.len());
        prop_assert_eq!(count(&s, &kept), kept_rows);

        // The free list holds exactly the tree's pages: allocating that many gives them back
        // and the file does not grow.
        let mut got = BTreeSet::new();
        for _ in 0..pages.len() {
            let mut m = Mtr::new(&s, 0);
            let i = alloc::allocate(&mut m).unwrap();
            let id = m.page_id(i);
            tierdb_page::format(m.page_mut(i).rewrite(), id, tierdb_page::PageType::BTreeLeaf);
            m.commit().unwrap();
            prop_assert!(got.insert(id), "page {} handed out twice", id);
        }
        prop_assert_eq!(&got, &pages);
        prop_assert_eq!(alloc::pages_allocated(&s).unwrap(), high);
    }
}
