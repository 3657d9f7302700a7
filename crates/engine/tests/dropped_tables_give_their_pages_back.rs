//! DROP TABLE / DROP INDEX give the trees' pages back to the free list, but only once nobody
//! can reach them: no handle left (cached plans, cursors) and no transaction left that was
//! running when the last handle went. Freeing is done in small logged steps that keep the
//! tree well-formed, so a crash in the middle resumes after restart without losing or
//! double-freeing a page.
//!
//! Scenarios:
//! - a dropped table's pages are reused by the next table (the data file does not grow);
//! - a held handle (of any version) delays the freeing; DROP waits for the table's writing
//!   transactions (LockWaitTimeout) and afterwards turns stale handles away (NoSuchTable);
//!   an open transaction that wrote a dropped index delays that index's freeing and can still
//!   roll back into it;
//! - DROP INDEX frees the index tree only;
//! - a child process is killed at a random point while freeing; after restart the rest is
//!   freed, the other table is intact, a refill reuses the pages, and every page verifies.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tierdb_engine::{Engine, EngineConfig};

const ROWS: i64 = 6000;

fn cfg(dir: &Path) -> EngineConfig {
    small_cfg(dir, 1 << 20)
}

fn fill(e: &Engine, table: &str, rows: i64) {
    e.create_table("db", kv_table(table)).expect("create table");
    let t = e.table("db", table).expect("table");
    for chunk in (0..rows).collect::<Vec<_>>().chunks(200) {
        let mut tx = e.begin();
        for &id in chunk {
            tx.insert(&t, kv_row(id, id % 97, id)).expect("insert");
        }
        tx.commit().expect("commit");
    }
}

fn check_rows(e: &Engine, table: &str, rows: i64) {
    let t = e.table("db", table).expect("table");
    let mut tx = e.begin();
    let all = scan_all(&mut tx, &t);
    assert_eq!(all.len() as i64, rows, "rows of {table}");
    for (i, r) in all.iter().enumerate() {
        assert_eq!(
            r,
            &kv_row(i as i64, i as i64 % 97, i as i64),
            "row {i} of {table}"
        );
    }
    tx.commit().expect("commit");
}

fn pending(e: &Engine) -> u64 {
    status(e, "Tierdb_dropped_trees_pending")
}

#[test]
fn a_dropped_tables_pages_are_reused_by_the_next_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(cfg(dir.path())).expect("open");
    e.create_database("db").expect("db");
    fill(&e, "first", ROWS);
    let high_water = e.data_pages_allocated().expect("pages");
    e.drop_table("db", "first").expect("drop");
    assert_eq!(
        pending(&e),
        3,
        "primary tree, k_idx and the long-value tree are queued"
    );
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 50, "only {freed} pages freed");
    assert_eq!(pending(&e), 0);
    assert_eq!(status(&e, "Tierdb_pages_reclaimed"), freed);
    fill(&e, "second", ROWS);
    let after = e.data_pages_allocated().expect("pages");
    assert!(
        after <= high_water + 4,
        "the data file grew from {high_water} to {after} pages although {freed} were freed"
    );
    check_rows(&e, "second", ROWS);
    e.shutdown().expect("shutdown");
    drop(e);
    verify_data_file(dir.path()).expect("every page verifies");
    let e = Engine::open(cfg(dir.path())).expect("reopen");
    check_rows(&e, "second", ROWS);
    assert_eq!(pending(&e), 0);
}

#[test]
fn a_held_handle_delays_the_freeing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(cfg(dir.path())).expect("open");
    e.create_database("db").expect("db");
    fill(&e, "t", 2000);
    // Like a prepared statement's cached plan or an open cursor, made before an index was
    // added (so it is not the handle the catalog held at the DROP).
    let handle = e.table("db", "t").expect("handle");
    e.create_index(
        "db",
        "t",
        tierdb_engine::IndexDef {
            name: "v_idx".into(),
            columns: vec![3],
            unique: false,
        },
    )
    .expect("create index");
    e.drop_table("db", "t").expect("drop");
    assert_eq!(
        e.reclaim_dropped(usize::MAX).expect("reclaim"),
        0,
        "freed while a handle was held"
    );
    assert_eq!(pending(&e), 4, "primary, k_idx, v_idx, long values");
    drop(handle);
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 10, "only {freed} pages freed");
    assert_eq!(pending(&e), 0);
    fill(&e, "u", 2000);
    check_rows(&e, "u", 2000);
}

#[test]
fn drop_waits_for_the_tables_writers_and_turns_stale_handles_away() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut c = cfg(dir.path());
    c.lock_wait_timeout = Duration::from_millis(500);
    let e = Engine::open(c).expect("open");
    e.create_database("db").expect("db");
    fill(&e, "t", 2000);
    let t = e.table("db", "t").expect("table");
    let mut writer = e.begin();
    for id in 5000..5100 {
        writer.insert(&t, kv_row(id, 1, id)).expect("insert");
    }
    let t0 = std::time::Instant::now();
    match e.drop_table("db", "t") {
        Err(tierdb_engine::Error::LockWaitTimeout) => {}
        other => panic!("DROP did not wait for the open writer: {other:?}"),
    }
    assert!(t0.elapsed() >= Duration::from_millis(500));
    assert_eq!(pending(&e), 0, "a DROP that timed out queued nothing");
    writer.commit().expect("the writer is unaffected");
    e.drop_table("db", "t")
        .expect("drop once the writer is done");
    // A stale handle can no longer write the dropped table.
    let mut late = e.begin();
    match late.insert(&t, kv_row(9999, 1, 1)) {
        Err(tierdb_engine::Error::NoSuchTable { .. }) => {}
        other => panic!("write through a dropped table's handle: {other:?}"),
    }
    late.rollback().expect("rollback");
    drop(t);
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 10, "only {freed} pages freed");
    assert_eq!(pending(&e), 0);
}

#[test]
fn an_open_transaction_that_wrote_a_dropped_index_delays_its_freeing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(cfg(dir.path())).expect("open");
    e.create_database("db").expect("db");
    fill(&e, "t", 2000);
    let t = e.table("db", "t").expect("table");
    // The transaction's undo names the index tree by its root only; it holds no handle.
    let mut writer = e.begin();
    for id in 5000..5400 {
        writer.insert(&t, kv_row(id, 1, id)).expect("insert");
    }
    drop(t);
    e.drop_index("db", "t", "k_idx").expect("drop index");
    assert_eq!(
        e.reclaim_dropped(usize::MAX).expect("reclaim"),
        0,
        "freed while a transaction that wrote the index was open"
    );
    assert_eq!(pending(&e), 1);
    writer.rollback().expect("rollback into the dropped index");
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 5, "only {freed} pages freed");
    assert_eq!(pending(&e), 0);
    check_rows(&e, "t", 2000);
}

#[test]
fn drop_index_frees_only_the_index_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = Engine::open(cfg(dir.path())).expect("open");
    e.create_database("db").expect("db");
    fill(&e, "t", ROWS);
    e.drop_index("db", "t", "k_idx").expect("drop index");
    assert_eq!(pending(&e), 1);
    let freed = e.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 5, "only {freed} pages freed");
    assert_eq!(pending(&e), 0);
    check_rows(&e, "t", ROWS);
    let t = e.table("db", "t").expect("table");
    let mut tx = e.begin();
    for id in ROWS..ROWS + 500 {
        tx.insert(&t, kv_row(id, id % 97, id)).expect("insert");
    }
    tx.commit().expect("commit");
    let mut tx = e.begin();
    assert_eq!(scan_all(&mut tx, &t).len() as i64, ROWS + 500);
    tx.commit().expect("commit");
}

/// Child: fills `gone` and `kept`, drops `gone`, then frees it one step at a time, with a
/// small committed change to `kept` after each step (printing "STEP n"), and parks.
#[test]
fn reclaim_child() {
    let Ok(dir) = std::env::var("RECLAIM_CHILD_DIR") else {
        return;
    };
    let e = Engine::open(cfg(Path::new(&dir))).expect("child open");
    e.create_database("db").expect("db");
    fill(&e, "kept", 300);
    fill(&e, "gone", ROWS);
    let say = |s: &str| {
        let out = std::io::stdout();
        let mut o = out.lock();
        writeln!(o, "{s}").expect("stdout");
        o.flush().expect("stdout");
    };
    say(&format!(
        "HIGH {}",
        e.data_pages_allocated().expect("pages")
    ));
    e.drop_table("db", "gone").expect("drop");
    say("DROPPED");
    let kept = e.table("db", "kept").expect("kept");
    let mut n = 0;
    while pending(&e) > 0 {
        e.reclaim_dropped(1).expect("reclaim step");
        let mut tx = e.begin();
        tx.update(
            &kept,
            &key(n % 300),
            kv_row(n % 300, (n % 300) % 97, n % 300),
        )
        .expect("touch kept");
        tx.commit().expect("commit");
        n += 1;
        say(&format!("STEP {n}"));
    }
    say("DONE");
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_crash_while_freeing_resumes_after_restart() {
    let exe = std::env::current_exe().expect("current exe");
    for (cycle, kill_after) in [(0, 1u32), (1, 7), (2, 25)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                "reclaim_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("RECLAIM_CHILD_DIR", dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn child");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut high = None;
        let mut steps = 0;
        for line in out.lines() {
            let line = line.expect("child line");
            if let Some((_, n)) = line.split_once("HIGH ") {
                high = Some(n.trim().parse::<u64>().expect("high"));
            } else if line.contains("STEP ") {
                steps += 1;
                if steps >= kill_after {
                    break;
                }
            } else if line.ends_with("DONE") {
                break;
            }
        }
        child.kill().expect("kill");
        child.wait().expect("wait");
        let high = high.expect("child reported its high-water mark");
        assert!(steps >= 1, "cycle {cycle}: the child never freed anything");

        let e = Engine::open(cfg(dir.path())).expect("reopen after kill");
        assert!(
            e.table("db", "gone").is_err(),
            "cycle {cycle}: dropped table is back"
        );
        assert!(pending(&e) <= 3, "cycle {cycle}");
        e.reclaim_dropped(usize::MAX).expect("finish freeing");
        assert_eq!(pending(&e), 0, "cycle {cycle}");
        let kept = e.table("db", "kept").expect("kept");
        let mut tx = e.begin();
        assert_eq!(scan_all(&mut tx, &kept).len(), 300, "cycle {cycle}");
        tx.commit().expect("commit");
        fill(&e, "again", ROWS);
        check_rows(&e, "again", ROWS);
        let after = e.data_pages_allocated().expect("pages");
        assert!(
            after <= high + 8,
            "cycle {cycle}: data file grew from {high} to {after} pages: pages were lost"
        );
        e.shutdown().expect("shutdown");
        drop(e);
        verify_data_file(dir.path()).unwrap_or_else(|err| panic!("cycle {cycle}: {err}"));
        let e = Engine::open(cfg(dir.path())).expect("reopen");
        check_rows(&e, "again", ROWS);
    }
}
