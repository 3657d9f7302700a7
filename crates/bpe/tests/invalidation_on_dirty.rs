//! `on_dirty` drops the entry at once (the next miss goes to the data file), and once the
//! page is flushed and evicted clean again the new version is admitted and served.

mod common;

use common::*;
use tierdb_bpe::{Bpe, Trust};
use tierdb_buffer::TierHooks;
use tierdb_page::PageId;

#[test]
fn invalidation_on_dirty() {
    let dir = tempfile::tempdir().expect("tmp");
    let bpe = Bpe::open(cfg(dir.path(), 1, 1 << 20, REGION_64K), Trust::Cold).expect("open");
    evict(&bpe, 7, 100);
    assert!(
        hit_exact(&bpe, 7, 100),
        "served from the open region in DRAM"
    );
    bpe.flush();
    assert!(hit_exact(&bpe, 7, 100), "served from the device");

    bpe.on_dirty(PageId(7));
    assert!(read(&bpe, 7).is_none(), "dirty page must not be served");
    assert_eq!(bpe.stats().invalidations, 1);

    // Flushed at LSN 200 and evicted clean again: admitted again, new bytes served.
    evict(&bpe, 7, 200);
    bpe.flush();
    assert!(hit_exact(&bpe, 7, 200));
    // Same LSN evicted again: not rewritten.
    evict(&bpe, 7, 200);
    let s = bpe.stats();
    assert_eq!(s.rejected_already_cached, 1);
    assert_eq!(s.pages_admitted, 2);

    bpe.on_discard(PageId(7));
    assert!(read(&bpe, 7).is_none());

    // Disabled: nothing served or admitted, but on_dirty still honoured.
    evict(&bpe, 8, 1);
    bpe.flush();
    bpe.set_enabled(false);
    assert!(read(&bpe, 8).is_none());
    bpe.on_dirty(PageId(8));
    bpe.set_enabled(true);
    assert!(
        read(&bpe, 8).is_none(),
        "invalidation while disabled was honoured"
    );
}
