//! Property tests: the B+tree against a `BTreeMap` model, with a buffer pool much smaller than
//! the data so that splits, merges and evictions all happen.

mod common;

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use tierdb_btree::{BTree, LeafHint, Modify, Mtr, Store};

#[derive(Debug, Clone)]
enum Op {
    Put(u32, usize),
    Delete(u32),
    DeleteRange(u32, u32),
    /// `get_hinted(k)`: the hint is kept for the hinted ops that follow (it goes stale as
    /// other ops change or split its leaf, and is used for other keys too).
    ReadHint(u32),
    HintedPut(u32, usize),
    HintedDelete(u32),
}

fn key(k: u32) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}
fn val(k: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (k as usize + i) as u8).collect()
}

fn put(s: &Store, t: &BTree, k: &[u8], v: Vec<u8>) -> Option<Vec<u8>> {
    let mut m = Mtr::new(s, 0);
    let old = t.modify(&mut m, k, |_| Modify::Put(v.clone())).unwrap();
    m.commit().unwrap();
    old
}
fn del(s: &Store, t: &BTree, k: &[u8]) -> Option<Vec<u8>> {
    let mut m = Mtr::new(s, 0);
    let old = t.modify(&mut m, k, |_| Modify::Delete).unwrap();
    m.commit().unwrap();
    old
}

fn hinted(s: &Store, t: &BTree, k: &[u8], hint: LeafHint, d: Modify) -> Option<Vec<u8>> {
    let mut m = Mtr::new(s, 0);
    let old = t.modify_hinted(&mut m, k, hint, |_| d.clone()).unwrap();
    m.commit().unwrap();
    old
}

fn all(s: &Store, t: &BTree) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = vec![];
    t.scan(s, Bound::Unbounded, |k, v| {
        out.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    out
}

fn check(s: &Store, t: &BTree, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let got = all(s, t);
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "scan differs from model");
    // The whole tree read backwards is the model reversed.
    let mut back = vec![];
    t.scan_rev(s, Bound::Unbounded, |k, v| {
        back.push((k.to_vec(), v.to_vec()));
        true
    })
    .unwrap();
    back.reverse();
    assert!(back == want, "reverse scan differs from model");
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(
            t.get(s, k, |x| x.map(|x| x.to_vec())).unwrap().as_ref(),
            Some(v)
        );
    }
}

#[test]
fn thousands_of_pages_through_a_small_pool_split_and_merge() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::store(dir.path(), 64);
    let mut m = Mtr::new(&s, 0);
    let t = BTree::create(&mut m).unwrap();
    m.commit().unwrap();
    let mut model = BTreeMap::new();
    // ~40k entries of ~300 bytes = ~800 leaf pages, pool of 64 frames.
    let n = 40_000u32;
    for i in 0..n {
        let k = i.wrapping_mul(2_654_435_761) % 1_000_000;
        let v = val(k, 250 + (k as usize % 100));
        put(&s, &t, &key(k), v.clone());
        model.insert(key(k), v);
    }
    assert!(t.height(&s).unwrap() >= 3);
    let pages_full = t.pages(&s).unwrap().len();
    assert!(pages_full > 500, "only {pages_full} pages");
    check(&s, &t, &model);
    // Delete 90 % of the keys in a scattered order: leaves merge, the tree shrinks.
    // (Merges only pull a right sibling leftwards, so deleting strictly in key order would
    // leave underfull leaves behind; see the crate doc.)
    let mut keys: Vec<_> = model.keys().cloned().collect();
    keys.sort_by_key(|k| u32::from_be_bytes([k[3], k[2], k[1], k[0]]).wrapping_mul(2_246_822_519));
    for (i, k) in keys.iter().enumerate() {
        if i % 10 != 0 {
            assert!(del(&s, &t, k).is_some());
            model.remove(k);
        }
    }
    check(&s, &t, &model);
    let pages_after = t.pages(&s).unwrap().len();
    assert!(
        pages_after * 3 < pages_full,
        "merges did not shrink the tree: {pages_full} -> {pages_after}"
    );
    // Delete everything: the root collapses back to a single leaf.
    for k in model.keys() {
        del(&s, &t, k);
    }
    assert_eq!(all(&s, &t).len(), 0);
    assert_eq!(t.height(&s).unwrap(), 1);
}

#[test]
fn ascending_load_fills_pages_densely() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::store(dir.path(), 128);
    let mut m = Mtr::new(&s, 0);
    let t = BTree::create(&mut m).unwrap();
    m.commit().unwrap();
    for i in 0..20_000u32 {
        put(&s, &t, &key(i), vec![7u8; 190]);
    }
    let pages = t.pages(&s).unwrap().len();
    // 20k × (4+4+190+2) bytes ≈ 4 MB ≈ 245 full pages; allow little waste.
    assert!(pages < 270, "{pages} pages for an ascending load");
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            6 => (0u32..3000, 1usize..600).prop_map(|(k, l)| Op::Put(k, l)),
            3 => (0u32..3000).prop_map(Op::Delete),
            1 => (0u32..3000, 0u32..300).prop_map(|(a, n)| Op::DeleteRange(a, a + n)),
            2 => (0u32..3000).prop_map(Op::ReadHint),
            3 => (0u32..3000, 1usize..600).prop_map(|(k, l)| Op::HintedPut(k, l)),
            2 => (0u32..3000).prop_map(Op::HintedDelete),
        ],
        1..1500,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    #[test]
    fn random_operations_match_the_model(ops in ops()) {
        let dir = tempfile::tempdir().unwrap();
        let s = common::store(dir.path(), 32);
        let mut m = Mtr::new(&s, 0);
        let t = BTree::create(&mut m).unwrap();
        m.commit().unwrap();
        let mut model = BTreeMap::new();
        // Before the first read: the meta page (not a leaf), which must be refused.
        let mut hint = LeafHint { page: tierdb_page::PageId(0), lsn: tierdb_page::Lsn(0) };
        for op in ops {
            match op {
                Op::ReadHint(k) => {
                    let (got, at) = t.get_hinted(&s, &key(k), |v| v.map(<[u8]>::to_vec)).unwrap();
                    prop_assert_eq!(got.as_ref(), model.get(&key(k)));
                    hint = at;
                }
                Op::HintedPut(k, l) => {
                    let v = val(k, l);
                    let old = hinted(&s, &t, &key(k), hint, Modify::Put(v.clone()));
                    prop_assert_eq!(old, model.insert(key(k), v));
                }
                Op::HintedDelete(k) => {
                    let old = hinted(&s, &t, &key(k), hint, Modify::Delete);
                    prop_assert_eq!(old, model.remove(&key(k)));
                }
                Op::Put(k, l) => {
                    let v = val(k, l);
                    prop_assert_eq!(put(&s, &t, &key(k), v.clone()), model.insert(key(k), v));
                }
                Op::Delete(k) => prop_assert_eq!(del(&s, &t, &key(k)), model.remove(&key(k))),
                Op::DeleteRange(a, b) => {
                    let ks: Vec<_> = model.range(key(a)..key(b)).map(|(k, _)| k.clone()).collect();
                    for k in ks { prop_assert!(del(&s, &t, &k).is_some()); model.remove(&k); }
                }
            }
        }
        check(&s, &t, &model);
        // Range scans from arbitrary starting points agree too.
        for start in [0u32, 17, 1500, 2999] {
            let mut got = vec![];
            t.scan(&s, Bound::Excluded(&key(start)), |k, _| { got.push(k.to_vec()); got.len() < 50 }).unwrap();
            let want: Vec<_> = model.range((Bound::Excluded(key(start)), Bound::Unbounded)).take(50).map(|(k, _)| k.clone()).collect();
            prop_assert_eq!(got, want);
            // Backwards from the same points, below and at the key.
            let mut got = vec![];
            t.scan_rev(&s, Bound::Excluded(&key(start)), |k, _| { got.push(k.to_vec()); got.len() < 50 }).unwrap();
            let want: Vec<_> = model.range(..key(start)).rev().take(50).map(|(k, _)| k.clone()).collect();
            prop_assert_eq!(got, want);
            let mut got = vec![];
            t.scan_rev(&s, Bound::Included(&key(start)), |k, _| { got.push(k.to_vec()); got.len() < 50 }).unwrap();
            let want: Vec<_> = model.range(..=key(start)).rev().take(50).map(|(k, _)| k.clone()).collect();
            prop_assert_eq!(got, want);
        }
    }
}

/// `BTree::put_sorted_run` then `modify` for the key a full leaf refuses, as a bulk build
/// does it, over sorted runs of keys that interleave with entries already in the tree.
fn put_sorted(s: &Store, t: &BTree, entries: &[(Vec<u8>, Vec<u8>)]) {
    let run: Vec<(&[u8], &[u8])> = entries
        .iter()
        .map(|(k, v)| (k.as_slice(), v.as_slice()))
        .collect();
    let mut at = 0;
    while at < run.len() {
        let mut m = Mtr::new(s, 0);
        let n = t.put_sorted_run(&mut m, &run[at..]).unwrap();
        m.commit().unwrap();
        if n == 0 {
            put(s, t, run[at].0, run[at].1.to_vec());
            at += 1;
        } else {
            at += n;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn sorted_runs_put_like_single_puts(
        batches in proptest::collection::vec(
            proptest::collection::btree_map(0u32..20_000, 0usize..300, 1..2500),
            1..4,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let s = common::store(dir.path(), 48);
        let mut m = Mtr::new(&s, 0);
        let t = BTree::create(&mut m).unwrap();
        m.commit().unwrap();
        let mut model = BTreeMap::new();
        for batch in batches {
            let entries: Vec<(Vec<u8>, Vec<u8>)> =
                batch.iter().map(|(&k, &l)| (key(k), val(k ^ l as u32, l))).collect();
            put_sorted(&s, &t, &entries);
            model.extend(entries);
        }
        check(&s, &t, &model);
    }
}

#[test]
fn a_sorted_build_into_an_empty_tree_fills_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::store(dir.path(), 128);
    let mut m = Mtr::new(&s, 0);
    let t = BTree::create(&mut m).unwrap();
    m.commit().unwrap();
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        (0..20_000u32).map(|i| (key(i), vec![7u8; 190])).collect();
    put_sorted(&s, &t, &entries);
    let pages = t.pages(&s).unwrap().len();
    assert!(pages < 270, "{pages} pages for a sorted build");
    assert_eq!(all(&s, &t).len(), 20_000);
}

/// A change with the hint of a read of the same key latches just that leaf (one page fixed,
/// not a descent); a hint gone stale (its leaf changed since) or one for a key outside its
/// leaf still puts the entry where a descent would.
#[test]
fn hinted_changes_start_at_the_leaf_only_while_it_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let s = common::store(dir.path(), 256);
    let mut m = Mtr::new(&s, 0);
    let t = BTree::create(&mut m).unwrap();
    m.commit().unwrap();
    let mut model = BTreeMap::new();
    for i in 0..20_000u32 {
        put(&s, &t, &key(i * 2), val(i, 100));
        model.insert(key(i * 2), val(i, 100));
    }
    let fixes = |f: &dyn Fn()| {
        let before = s.pool.stats().read_requests;
        f();
        s.pool.stats().read_requests - before
    };
    // Fresh hint, same key: one page.
    let (_, at) = t.get_hinted(&s, &key(5000), |_| ()).unwrap();
    let n = fixes(&|| {
        hinted(&s, &t, &key(5000), at, Modify::Put(val(1, 90)));
    });
    assert_eq!(n, 1, "a fresh hint latches only its leaf");
    model.insert(key(5000), val(1, 90));
    // The same hint again: the leaf changed (new LSN), so it descends.
    let n = fixes(&|| {
        hinted(&s, &t, &key(5000), at, Modify::Put(val(2, 90)));
    });
    assert!(n > 2, "a stale hint must not be used ({n} fixes)");
    model.insert(key(5000), val(2, 90));
    // A fresh hint, but for a key far outside its leaf: it descends and puts it in place.
    let (_, at) = t.get_hinted(&s, &key(100), |_| ()).unwrap();
    let n = fixes(&|| {
        hinted(&s, &t, &key(30_001), at, Modify::Put(val(3, 50)));
    });
    assert!(
        n > 2,
        "a hint for another leaf's key must not be used ({n} fixes)"
    );
    model.insert(key(30_001), val(3, 50));
    // A fresh hint, absent key between two keys of the leaf (which has room: the ascending
    // load filled it, so one of its entries is deleted first): one page.
    let mut k = 7000;
    loop {
        let (_, a) = t.get_hinted(&s, &key(k), |_| ()).unwrap();
        let (_, b) = t.get_hinted(&s, &key(k + 4), |_| ()).unwrap();
        if a.page == b.page {
            break;
        }
        k += 2;
    }
    del(&s, &t, &key(k + 2));
    model.remove(&key(k + 2));
    let (_, at) = t.get_hinted(&s, &key(k), |_| ()).unwrap();
    let n = fixes(&|| {
        hinted(&s, &t, &key(k + 1), at, Modify::Put(val(4, 50)));
    });
    assert_eq!(n, 1, "a key inside the hinted leaf goes there");
    model.insert(key(k + 1), val(4, 50));
    check(&s, &t, &model);
}
