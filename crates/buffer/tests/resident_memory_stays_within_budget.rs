//! The pool's resident memory (frames + metadata + page table) stays within its byte budget
//! plus a small overhead, measured from the actual allocations.

mod common;

use common::*;
use tierdb_buffer::{BufferPool, PageId, PAGE_SIZE};

fn check(size_bytes: u64) {
    let store = TestStore::new();
    let wal = RecordingWal::new();
    let pool = BufferPool::new(
        tierdb_buffer::PoolConfig {
            size_bytes,
            flusher_interval_ms: NO_FLUSHER,
            dirty_high_water_pct: 50,
        },
        store.clone(),
        wal.clone(),
    )
    .unwrap();
    let frames = pool.frames() as u64;
    assert_eq!(frames, (size_bytes / PAGE_SIZE as u64).max(16));
    let budget = frames * PAGE_SIZE as u64;
    // Fill every frame, so the page table holds one entry per frame.
    store.fill(frames * 2, |i| i);
    for i in 0..frames * 2 {
        drop(pool.read(PageId(i)).unwrap());
    }
    let s = pool.stats();
    assert_eq!(s.pages_data, frames);
    assert!(
        s.resident_bytes >= budget,
        "frames alone are the budget: {s:?}"
    );
    let overhead = s.resident_bytes - budget;
    // 1 % of the budget, plus 64 KiB of fixed structures (struct, 64 shard headers, scratch).
    let allowed = budget / 100 + 64 * 1024;
    assert!(
        overhead <= allowed,
        "{size_bytes} B pool: overhead {overhead} B > allowed {allowed} B"
    );
    // Per-frame metadata (frame state + page table) is small.
    let per_frame = (overhead.saturating_sub(64 * 1024)) / frames;
    assert!(per_frame <= 96, "{per_frame} B of metadata per frame");
}

#[test]
fn resident_memory_stays_within_budget() {
    check(0); // the 16-frame minimum
    check(1 << 20);
    check(64 << 20);
}
