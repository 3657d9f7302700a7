//! Relocating writes: dirty pages go to free slots of the data file in batches and the page
//! map (`tierdb.map`) says where each page is.
//!
//! Scenarios:
//! - a data folder written in place (an older tierdb, or `relocating_writes = false`) opens
//!   with relocating writes on, its pages mapped where they are; once relocated it refuses to
//!   open in place (its pages are not where their ids say) with an error naming the map;
//! - under updates through a small pool, pages leave in batches (fewer data-file writes than
//!   pages written), every page the durable map names verifies, and the status counters show
//!   the map;
//! - with a small room (`relocating_free_space = 10`) and rounds of rewrites, the file reaches
//!   its room, the cleaner moves live pages out of the emptiest segments, the file stays
//!   within its room, and every row and mapped page is right, also after a reopen.

mod common;

use common::*;
use std::path::Path;
use tierdb_engine::{Engine, EngineConfig};

/// A 4 MiB pool: 256 frames, batches of up to 4 pages (a pool's runs are frames / 64).
fn cfg(dir: &Path, relocating: bool) -> EngineConfig {
    let mut c = small_cfg(dir, 4 << 20);
    c.relocating_writes = relocating;
    c
}

fn fill(e: &Engine, from: i64, rows: i64, v: i64) {
    let t = e.table("db", "t").expect("table");
    for chunk in (from..from + rows).collect::<Vec<_>>().chunks(500) {
        let mut tx = e.begin();
        for &id in chunk {
            tx.insert(&t, kv_row(id, id % 97, v)).expect("insert");
        }
        tx.commit().expect("commit");
    }
}

fn check(e: &Engine, rows: i64, v_of: impl Fn(i64) -> i64) {
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    let all = scan_all(&mut tx, &t);
    assert_eq!(all.len() as i64, rows);
    for (i, r) in all.iter().enumerate() {
        let id = i as i64;
        assert_eq!(r, &kv_row(id, id % 97, v_of(id)), "row {id}");
    }
    assert_eq!(index_scan_all(&mut tx, &t, 0).len() as i64, rows);
    tx.commit().expect("commit");
}

#[test]
fn an_in_place_data_folder_opens_relocating_and_then_needs_it() {
    let dir = tempfile::tempdir().unwrap();
    {
        let e = Engine::open(cfg(dir.path(), false)).expect("open in place");
        e.create_database("db").expect("db");
        e.create_table("db", kv_table("t")).expect("create");
        fill(&e, 0, 3000, 1);
        e.shutdown().expect("shutdown");
    }
    assert!(!dir.path().join("data/tierdb.map").exists());
    {
        let e = Engine::open(cfg(dir.path(), true)).expect("open relocating");
        assert!(dir.path().join("data/tierdb.map").exists());
        check(&e, 3000, |_| 1);
        fill(&e, 3000, 3000, 2);
        e.shutdown().expect("shutdown");
    }
    let err = Engine::open(cfg(dir.path(), false))
        .err()
        .expect("a relocated folder must not open in place");
    assert!(err.to_string().contains("tierdb.map"), "{err}");
    let e = Engine::open(cfg(dir.path(), true)).expect("reopen relocating");
    check(&e, 6000, |id| if id < 3000 { 1 } else { 2 });
    e.shutdown().expect("shutdown");
    drop(e);
    let pages = verify_data_file(dir.path()).expect("every mapped page verifies");
    assert!(pages > 50, "{pages} pages");
}

#[test]
fn updates_through_a_small_pool_leave_in_batches_and_the_map_stays_true() {
    let dir = tempfile::tempdir().unwrap();
    let e = Engine::open(cfg(dir.path(), true)).expect("open");
    e.create_database("db").expect("db");
    e.create_table("db", kv_table("t")).expect("create");
    let rows = 40_000;
    fill(&e, 0, rows, 0);
    let t = e.table("db", "t").expect("table");
    let (w0, f0) = (
        status(&e, "Innodb_data_writes"),
        status(&e, "Innodb_buffer_pool_pages_flushed"),
    );
    // Scattered updates through a 4 MiB pool (the table is about 10 MiB): nearly every change evicts a dirty page.
    let v_of = |id: i64| if id % 3 == 0 { 5 } else { 0 };
    for chunk in (0..rows)
        .filter(|id| id % 3 == 0)
        .collect::<Vec<_>>()
        .chunks(50)
    {
        let mut tx = e.begin();
        for &id in chunk {
            assert!(tx
                .update(&t, &key(id), kv_row(id, id % 97, 5))
                .expect("update"));
        }
        tx.commit().expect("commit");
    }
    e.checkpoint().expect("checkpoint");
    let writes = status(&e, "Innodb_data_writes") - w0;
    let pages = status(&e, "Innodb_buffer_pool_pages_flushed") - f0;
    assert!(pages > 100, "{pages} pages written");
    assert!(
        writes * 2 <= pages,
        "{writes} data-file writes for {pages} pages: not batched"
    );
    assert!(status(&e, "Tierdb_page_maps_written") >= 2);
    let slots = status(&e, "Tierdb_data_file_slots");
    let mapped = status(&e, "Tierdb_data_file_pages");
    assert!(
        mapped > 50 && slots >= mapped,
        "{slots} slots, {mapped} pages"
    );
    check(&e, rows, v_of);
    e.shutdown().expect("shutdown");
    drop(e);
    verify_data_file(dir.path()).expect("every mapped page verifies");
    let e = Engine::open(cfg(dir.path(), true)).expect("reopen");
    check(&e, rows, v_of);
}

#[test]
fn at_the_room_limit_the_cleaner_moves_pages_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = cfg(dir.path(), true);
    c.relocating_free_space_pct = 10;
    // A room of live pages + 10 % (not the default 16 MiB at least), so this table reaches it.
    c.relocating_min_room_slots = 64;
    let e = Engine::open(c.clone()).expect("open");
    e.create_database("db").expect("db");
    e.create_table("db", kv_table("t")).expect("create");
    let rows = 40_000;
    fill(&e, 0, rows, 0);
    let t = e.table("db", "t").expect("table");
    // Rewrite rows until the file reaches its room and the cleaner has had work (a round
    // relocates most pages; the room is the live pages + 10 % or 1024 slots).
    let mut v = 0;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while status(&e, "Tierdb_data_file_segments_cleaned") < 5 {
        assert!(
            std::time::Instant::now() < deadline,
            "the cleaner never ran: {} slots, {} pages",
            status(&e, "Tierdb_data_file_slots"),
            status(&e, "Tierdb_data_file_pages")
        );
        v += 1;
        for chunk in (0..rows).collect::<Vec<_>>().chunks(500) {
            let mut tx = e.begin();
            for &id in chunk {
                // Every 7th row keeps its version; the rest move on.
                if id % 7 != 0 {
                    tx.update(&t, &key(id), kv_row(id, id % 97, v))
                        .expect("update");
                }
            }
            tx.commit().expect("commit");
        }
        e.checkpoint().expect("checkpoint");
    }
    let v_of = |id: i64| if id % 7 == 0 { 0 } else { v };
    assert!(status(&e, "Tierdb_data_file_pages_moved") > 0);
    let slots = status(&e, "Tierdb_data_file_slots");
    let pages = status(&e, "Tierdb_data_file_pages");
    assert!(
        slots <= pages + pages / 10 + 2048,
        "{slots} slots for {pages} pages"
    );
    check(&e, rows, v_of);
    e.shutdown().expect("shutdown");
    drop(e);
    verify_data_file(dir.path()).expect("every mapped page verifies");
    let e = Engine::open(c).expect("reopen");
    check(&e, rows, v_of);
}
