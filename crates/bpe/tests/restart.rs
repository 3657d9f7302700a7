//! Warm restart after a clean shutdown (most pages hit right after reopening), and a crash
//! restart: cold by default, or validated reuse of a snapshot when the engine vouches for it
//! with `retain`.

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};
use tierdb_buffer::TierHooks;
use tierdb_page::PageId;

const PAGES: u64 = 30;

fn fill(bpe: &Bpe) {
    for id in 0..PAGES {
        evict(bpe, id, 40 + id);
    }
    bpe.flush();
}

#[test]
fn warm_restart_after_clean_shutdown() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    {
        let bpe = Bpe::open(c.clone(), Trust::CleanShutdownOnly).expect("open");
        fill(&bpe);
        bpe.on_dirty(PageId(5)); // invalidated before shutdown: must stay invalid
        bpe.shutdown().expect("shutdown");
    }
    let bpe = Bpe::open(c.clone(), Trust::CleanShutdownOnly).expect("reopen");
    let r = bpe.recovery().clone();
    assert!(r.clean, "{r:?}");
    assert_eq!(r.pages_restored, PAGES - 1);
    let hits = (0..PAGES)
        .filter(|&id| hit_exact(&bpe, id, 40 + id))
        .count() as u64;
    assert_eq!(hits, PAGES - 1, "every page but the invalidated one hits");
    assert!(read(&bpe, 5).is_none());
    // New admissions continue after the restored regions, never overwriting them first.
    for id in 100..106u64 {
        evict(&bpe, id, 1);
    }
    bpe.flush();
    assert!((100..106u64).all(|id| hit_exact(&bpe, id, 1)));
    // The manifest was consumed at open: a crash now must start cold.
    drop(bpe);
    let again = Bpe::open(c, Trust::CleanShutdownOnly).expect("reopen after crash");
    assert_eq!(again.recovery().pages_restored, 0);
    assert_eq!(again.stats().pages_cached, 0);
}

#[test]
fn crash_restart_starts_empty_or_validated() {
    let dir = tempfile::tempdir().expect("tmp");
    let c = cfg(dir.path(), 2, 16 * REGION_64K, REGION_64K);
    {
        let bpe = Bpe::open(c.clone(), Trust::CleanShutdownOnly).expect("open");
        fill(&bpe);
        drop(bpe); // crash: no shutdown
    }
    {
        let bpe = Bpe::open(c.clone(), Trust::CleanShutdownOnly).expect("reopen");
        assert_eq!(bpe.recovery().pages_restored, 0);
        assert!(
            (0..PAGES).all(|id| read(&bpe, id).is_none()),
            "starts empty"
        );
        // Validated reuse: snapshot during the run, then crash.
        fill(&bpe);
        bpe.snapshot(777).expect("snapshot");
        drop(bpe);
    }
    {
        // Without Trust::Snapshot an unclean manifest is not used.
        let bpe = Bpe::open(c.clone(), Trust::CleanShutdownOnly).expect("reopen");
        assert_eq!(bpe.recovery().pages_restored, 0);
        assert_eq!(bpe.recovery().manifests_found, 2);
        fill(&bpe);
        bpe.snapshot(778).expect("snapshot");
    }
    let bpe = Bpe::open(c, Trust::Snapshot).expect("reopen");
    let r = bpe.recovery().clone();
    assert!(!r.clean);
    assert_eq!(r.tag, Some(778));
    assert_eq!(r.pages_restored, PAGES);
    // The engine drops the pages redo says changed after the snapshot (here: even ids).
    let dropped = bpe.retain(|id, _lsn_low| id.0 % 2 == 1);
    assert_eq!(dropped, PAGES / 2);
    for id in 0..PAGES {
        assert_eq!(hit_exact(&bpe, id, 40 + id), id % 2 == 1, "page {id}");
    }
}
