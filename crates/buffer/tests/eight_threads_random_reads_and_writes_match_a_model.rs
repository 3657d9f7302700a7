//! Stress: 8 threads read and write 5000 pages at random through a 64-frame pool (constant
//! eviction, dirty evictions, background flushing). Each page carries a counter; every read
//! sees exactly the model's value, and so does a fresh pool over the file at the end.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use tierdb_buffer::{BufferPool, Lsn, PageId, TierHooks};

const PAGES: u64 = 5000;
const THREADS: u64 = 8;
const OPS: u64 = 6000;

#[test]
fn eight_threads_random_reads_and_writes_match_a_model() {
    run(false);
}

/// The same with a BPE in the loop (serving misses from evicted clean copies, dropping them
/// on `on_dirty`), switched off and on (empty) while the threads run: a stale BPE copy
/// served after a page was dirtied would show as a wrong counter.
#[test]
fn eight_threads_with_a_bpe_switched_on_and_off_match_a_model() {
    run(true);
}

#[derive(Default)]
struct MapBpe {
    copies: Mutex<HashMap<u64, Vec<u8>>>,
}

impl TierHooks for MapBpe {
    fn on_miss(&self, id: PageId, buf: &mut [u8]) -> bool {
        match self.copies.lock().unwrap().get(&id.0) {
            Some(c) => {
                buf.copy_from_slice(c);
                true
            }
            None => false,
        }
    }
    fn on_evict_clean(&self, id: PageId, page: &[u8]) {
        self.copies.lock().unwrap().insert(id.0, page.to_vec());
    }
    fn on_dirty(&self, id: PageId) {
        self.copies.lock().unwrap().remove(&id.0);
    }
}

fn run(with_bpe: bool) {
    let wal = RecordingWal::new();
    let store = TestStore::checking_wal(wal.clone());
    store.fill(PAGES, |_| 0);
    let pool = pool(64, 2, &store, &wal);
    let done = Arc::new(AtomicBool::new(false));
    let toggler = with_bpe.then(|| {
        let pool = Arc::clone(&pool);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut on = 0;
            while !done.load(Ordering::SeqCst) {
                // A re-enabled BPE starts empty: it missed every on_dirty while off.
                pool.set_hooks(Some(Arc::new(MapBpe::default())));
                on += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
                pool.set_hooks(None);
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            pool.set_hooks(Some(Arc::new(MapBpe::default())));
            on
        })
    });
    // The model: page → counter, updated only under the page's X latch.
    let model: Arc<Vec<AtomicU64>> = Arc::new((0..PAGES).map(|_| AtomicU64::new(0)).collect());
    let lsn = Arc::new(AtomicU64::new(1));

    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let pool = Arc::clone(&pool);
            let model = Arc::clone(&model);
            let lsn = Arc::clone(&lsn);
            std::thread::spawn(move || {
                let mut rng = Rng(0x9E37_79B9 ^ ((t + 1) * 0x1234_5678_9ABC));
                for _ in 0..OPS {
                    // Skewed: half the ops on 200 pages, half over all 5000.
                    let p = if rng.below(2) == 0 {
                        rng.below(200)
                    } else {
                        rng.below(PAGES)
                    };
                    let id = PageId(p);
                    if rng.below(3) == 0 {
                        let mut g = pool.write(id).unwrap();
                        let c = check_payload(&g, id);
                        assert_eq!(
                            c,
                            model[p as usize].load(Ordering::SeqCst),
                            "page {p} before write"
                        );
                        set_counter(&mut g, c + 1);
                        g.mark_dirty(Lsn(lsn.fetch_add(1, Ordering::SeqCst)));
                        model[p as usize].store(c + 1, Ordering::SeqCst);
                    } else {
                        let g = pool.read(id).unwrap();
                        let c = check_payload(&g, id);
                        assert_eq!(c, model[p as usize].load(Ordering::SeqCst), "page {p} read");
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    if let Some(t) = toggler {
        assert!(t.join().unwrap() > 1);
        assert!(pool.stats().bpe_hits > 0, "{:?}", pool.stats());
    }
    let s = pool.stats();
    assert!(s.evictions_dirty > 0 && s.pages_flushed > 0, "{s:?}");
    pool.flush_all().unwrap();
    assert_eq!(store.wal_violations.load(Ordering::SeqCst), 0);
    assert_eq!(store.bad_writes.load(Ordering::SeqCst), 0);
    pool.shutdown();
    drop(pool);

    let fresh = BufferPool::new(config(64, NO_FLUSHER), store.clone(), wal.clone()).unwrap();
    let mut total = 0;
    for p in 0..PAGES {
        let g = fresh.read(PageId(p)).unwrap();
        let c = check_payload(&g, PageId(p));
        assert_eq!(
            c,
            model[p as usize].load(Ordering::SeqCst),
            "page {p} in the data file"
        );
        total += c;
    }
    assert!(total > 0);
}
