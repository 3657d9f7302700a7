//! Property: driving the hooks exactly as the buffer pool does (load → dirty → flush →
//! evict clean → reload ...), every `on_miss` hit returns exactly the page's current
//! version, while the writer thread concurrently writes, evicts and reinserts regions in a
//! cache far smaller than the page set. LSN steps include exact multiples of 2³² so a
//! stale copy with the same 32-bit fingerprint would be caught if an invalidation were lost.

mod common;

use common::*;
use proptest::prelude::*;
use tierdb_bpe::{AdmissionPolicy, Bpe, Trust};
use tierdb_buffer::TierHooks;
use tierdb_page::PageId;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Where {
    Out,
    Clean,
    Dirty,
}

#[derive(Clone, Debug)]
enum Op {
    Touch(u64),
    Dirty(u64, u64),
    Flush(u64),
    Evict(u64),
    Discard(u64),
    FlushBpe,
    Clear,
}

const PAGES: u64 = 40;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..PAGES).prop_map(Op::Touch),
        3 => (0..PAGES, prop_oneof![1u64..5, Just(1u64 << 32)]).prop_map(|(p, d)| Op::Dirty(p, d)),
        2 => (0..PAGES).prop_map(Op::Flush),
        6 => (0..PAGES).prop_map(Op::Evict),
        1 => (0..PAGES).prop_map(Op::Discard),
        1 => Just(Op::FlushBpe),
        1 => Just(Op::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn never_serves_a_stale_page(ops in prop::collection::vec(op(), 50..400), second in any::<bool>()) {
        let dir = tempfile::tempdir().expect("tmp");
        // 2 devices × 3 regions × 3 slots: 18 slots for 40 pages, constant eviction.
        let mut c = cfg(dir.path(), 2, 6 * REGION_64K, REGION_64K);
        if second {
            c.admission = AdmissionPolicy::SecondTouch;
        }
        let bpe = Bpe::open(c, Trust::Cold).expect("open");
        // The data file's version of each page, and where the pool has it.
        let mut lsn = vec![1u64; PAGES as usize];
        let mut at = vec![Where::Out; PAGES as usize];
        let mut hits = 0;
        for op in ops {
            match op {
                Op::Touch(p) => {
                    let i = p as usize;
                    if at[i] == Where::Out {
                        if hit_exact(&bpe, p, lsn[i]) {
                            hits += 1;
                        }
                        at[i] = Where::Clean;
                    }
                }
                Op::Dirty(p, d) => {
                    let i = p as usize;
                    match at[i] {
                        Where::Out => {
                            if hit_exact(&bpe, p, lsn[i]) {
                                hits += 1;
                            }
                            bpe.on_dirty(PageId(p));
                        }
                        Where::Clean => bpe.on_dirty(PageId(p)),
                        Where::Dirty => {}
                    }
                    at[i] = Where::Dirty;
                    // The new version reaches the data file at flush time.
                    lsn[i] += d;
                }
                Op::Flush(p) => {
                    if at[p as usize] == Where::Dirty {
                        at[p as usize] = Where::Clean;
                    }
                }
                Op::Evict(p) => {
                    let i = p as usize;
                    if at[i] != Where::Out {
                        // A dirty victim is written first, then handed over clean.
                        evict(&bpe, p, lsn[i]);
                        at[i] = Where::Out;
                    }
                }
                Op::Discard(p) => {
                    let i = p as usize;
                    bpe.on_discard(PageId(p));
                    // Freed and later reused: a new version.
                    lsn[i] += 1;
                    at[i] = Where::Clean;
                }
                Op::FlushBpe => bpe.flush(),
                Op::Clear => {
                    bpe.clear();
                }
            }
        }
        bpe.flush();
        for p in 0..PAGES {
            if at[p as usize] == Where::Out && hit_exact(&bpe, p, lsn[p as usize]) {
                hits += 1;
            }
        }
        let s = bpe.stats();
        prop_assert_eq!(s.device_errors, 0);
        prop_assert_eq!(s.hits, hits);
    }
}

/// The property above is not vacuous: the same kind of workload produces plenty of hits,
/// from DRAM and from the devices.
#[test]
fn the_model_workload_hits() {
    let dir = tempfile::tempdir().expect("tmp");
    let bpe = Bpe::open(cfg(dir.path(), 2, 6 * REGION_64K, REGION_64K), Trust::Cold).expect("open");
    let mut hits = 0;
    for round in 0..20u64 {
        for p in 0..10u64 {
            evict(&bpe, p, round + 1);
        }
        bpe.flush();
        for p in 0..10u64 {
            hits += u64::from(hit_exact(&bpe, p, round + 1));
            bpe.on_dirty(PageId(p));
        }
    }
    let s = bpe.stats();
    assert!(hits > 100, "{hits} {s:?}");
    assert!(s.hits - s.hits_from_dram > 50, "{s:?}");
}
