//! The BPE seams: `on_dirty` fires on clean → dirty only, `on_evict_clean` gets exactly the
//! store's bytes, `on_miss` hits count as BPE hits, and bad BPE bytes fall back to the store.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use tierdb_buffer::{Lsn, PageId, TierHooks};

#[derive(Default)]
struct RecordingBpe {
    copies: Mutex<HashMap<u64, Vec<u8>>>,
    dirtied: Mutex<Vec<u64>>,
    evicted: Mutex<Vec<u64>>,
    discarded: Mutex<Vec<u64>>,
    misses: AtomicU64,
    corrupt_next_hit: AtomicBool,
}

impl TierHooks for RecordingBpe {
    fn on_miss(&self, id: PageId, buf: &mut [u8]) -> bool {
        self.misses.fetch_add(1, Ordering::SeqCst);
        match self.copies.lock().unwrap().get(&id.0) {
            Some(c) => {
                buf.copy_from_slice(c);
                if self.corrupt_next_hit.swap(false, Ordering::SeqCst) {
                    buf[5000] ^= 0xff;
                }
                true
            }
            None => false,
        }
    }
    fn on_evict_clean(&self, id: PageId, page: &[u8]) {
        self.evicted.lock().unwrap().push(id.0);
        self.copies.lock().unwrap().insert(id.0, page.to_vec());
    }
    fn on_dirty(&self, id: PageId) {
        self.dirtied.lock().unwrap().push(id.0);
        self.copies.lock().unwrap().remove(&id.0);
    }
    fn on_discard(&self, id: PageId) {
        self.discarded.lock().unwrap().push(id.0);
        self.copies.lock().unwrap().remove(&id.0);
    }
}

#[test]
fn hooks_see_dirty_evict_and_miss() {
    let store = TestStore::new();
    store.fill(200, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    let bpe = Arc::new(RecordingBpe::default());
    pool.set_hooks(Some(bpe.clone()));

    // on_dirty: once for clean → dirty, not again while dirty.
    for lsn in [10, 11, 12] {
        let mut g = pool.write(PageId(1)).unwrap();
        set_counter(&mut g, 100 + lsn);
        g.mark_dirty(Lsn(lsn));
    }
    assert_eq!(*bpe.dirtied.lock().unwrap(), vec![1]);
    // Clean it; dirty it again: one more on_dirty.
    pool.flush_all().unwrap();
    {
        let mut g = pool.write(PageId(1)).unwrap();
        set_counter(&mut g, 200);
        g.mark_dirty(Lsn(20));
    }
    assert_eq!(*bpe.dirtied.lock().unwrap(), vec![1, 1]);

    // Fill every frame with dirty pages, then miss: a dirty victim is written first and
    // handed over clean, with the bytes now in the data file.
    for i in 300..316u64 {
        let mut g = pool.create(PageId(i)).unwrap();
        format_with_counter(&mut g, PageId(i), i);
        g.mark_dirty(Lsn(i));
    }
    drop(pool.read(PageId(150)).unwrap());
    assert!(pool.stats().evictions_dirty >= 1, "{:?}", pool.stats());
    // And a scan pushes out the clean ones.
    for i in 100..140 {
        drop(pool.read(PageId(i)).unwrap());
    }
    let evicted = bpe.evicted.lock().unwrap().clone();
    assert!(
        evicted.iter().any(|&e| (300..316).contains(&e)),
        "{evicted:?}"
    );
    assert!(
        evicted.iter().any(|&e| (100..140).contains(&e)),
        "{evicted:?}"
    );
    for (id, bytes) in bpe.copies.lock().unwrap().iter() {
        assert_eq!(
            bytes,
            &store.get_raw(PageId(*id)),
            "BPE copy of page {id} differs from the data file"
        );
    }

    // A miss on an evicted page is served by the BPE.
    let e = *evicted.iter().find(|&&e| (300..316).contains(&e)).unwrap();
    let before = pool.stats();
    {
        let g = pool.read(PageId(e)).unwrap();
        assert_eq!(check_payload(&g, PageId(e)), e);
    }
    let after = pool.stats();
    assert_eq!(after.bpe_hits, before.bpe_hits + 1);
    assert_eq!(after.reads, before.reads, "no store read for a BPE hit");

    // Bad bytes from the BPE: counted, and the store serves the page.
    let victim = *bpe
        .copies
        .lock()
        .unwrap()
        .keys()
        // Page 1's counter was rewritten above (200): any other page carries its own id.
        .find(|&&k| k != e && k != 1)
        .unwrap();
    bpe.corrupt_next_hit.store(true, Ordering::SeqCst);
    let before = pool.stats();
    {
        let g = pool.read(PageId(victim)).unwrap();
        assert_eq!(check_payload(&g, PageId(victim)), victim);
    }
    let after = pool.stats();
    assert_eq!(after.verify_failures, before.verify_failures + 1);
    assert_eq!(after.reads, before.reads + 1);
    assert_eq!(after.bpe_hits, before.bpe_hits);

    // Discard reaches the hooks.
    pool.discard(PageId(victim));
    assert_eq!(*bpe.discarded.lock().unwrap(), vec![victim]);

    // Hooks off: misses go to the store, evictions are not reported.
    pool.set_hooks(None);
    let n_evicted = bpe.evicted.lock().unwrap().len();
    let n_misses = bpe.misses.load(Ordering::SeqCst);
    for i in 150..200 {
        drop(pool.read(PageId(i)).unwrap());
    }
    assert_eq!(bpe.evicted.lock().unwrap().len(), n_evicted);
    assert_eq!(bpe.misses.load(Ordering::SeqCst), n_misses);
}

#[test]
fn evicted_clean_page_after_a_background_write_is_sealed() {
    // Written by the flusher (a sealed copy), then evicted: the frame's own CRC was stale,
    // the BPE must still get the exact sealed bytes.
    let store = TestStore::new();
    store.fill(100, |i| i);
    let wal = RecordingWal::new();
    let pool = pool(16, NO_FLUSHER, &store, &wal);
    let bpe = Arc::new(RecordingBpe::default());
    pool.set_hooks(Some(bpe.clone()));
    {
        let mut g = pool.write(PageId(3)).unwrap();
        set_counter(&mut g, 333);
        g.mark_dirty(Lsn(9));
    }
    pool.flush_all().unwrap();
    for i in 50..100 {
        drop(pool.read(PageId(i)).unwrap());
    }
    let copy = bpe
        .copies
        .lock()
        .unwrap()
        .get(&3)
        .cloned()
        .expect("page 3 evicted to the BPE");
    tierdb_page::verify(&copy, PageId(3)).unwrap();
    assert_eq!(copy, store.get_raw(PageId(3)));
    assert_eq!(counter(&copy), 333);
}
