//! Read views (REPEATABLE READ, `START TRANSACTION WITH CONSISTENT SNAPSHOT`):
//!
//! - a view sees neither the changes of transactions running when it opened (even once they
//!   commit) nor those of later ones: updated rows, moved index entries, deleted rows (their
//!   delete-marks and old index entries stay until the view closes) and inserted rows, through
//!   point reads, primary scans and index scans alike; its own transaction's changes it sees,
//!   and its locking reads see the newest versions; once it closes, the deferred purges run
//!   and the index lists exactly the table's rows again;
//! - a view cannot read a table whose trees were made after it opened (1412), as InnoDB;
//! - an index dropped while purges of its entries wait for a view keeps its pages until those
//!   purges ran (they would write into freed pages otherwise), then they are freed;
//! - a deferred purge does not remove an index entry that a running writer's rollback to a
//!   savepoint brings back into use; a purge deferred while the only view expires still runs;
//! - a view left open while writers go on keeps their history only up to
//!   `read_view_history_limit`: past it the view is released (its next read fails with
//!   ReadViewTooOld), the history and deferred purges are let go, and writers never notice;
//! - many writers moving money between accounts (also by deleting an account and inserting
//!   it under a new id, and moving it between buckets of an index), committing or rolling
//!   back at random, while readers sum the accounts several times per view by primary scans,
//!   index scans and point reads: every sum is the constant total and every re-read inside
//!   one view returns the same rows.

mod common;

use common::*;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{Engine, Error, IndexDef, Row, Table, Txn};

fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Table>) {
    let e = Engine::open(small_cfg(dir, 8 << 20)).expect("open");
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create table");
    let t = e.table("d", "t").expect("table");
    (e, t)
}

/// Inserts `kv_row(id, k(id), 0)` for each id, in one committed transaction.
fn insert_rows(
    e: &Engine,
    t: &std::sync::Arc<Table>,
    ids: impl IntoIterator<Item = i64>,
    k: impl Fn(i64) -> i64,
) {
    let mut tx = e.begin();
    for id in ids {
        tx.insert(t, kv_row(id, k(id), 0)).expect("insert");
    }
    tx.commit().expect("commit");
}

/// A transaction whose plain reads go through a read view opened now.
fn with_view(e: &Engine) -> Txn {
    let mut tx = e.begin();
    tx.consistent_reads();
    tx
}

/// `KEY v_idx (v)`.
fn v_idx() -> IndexDef {
    IndexDef {
        name: "v_idx".into(),
        columns: vec![3],
        unique: false,
    }
}

fn v_of(r: &Row) -> i64 {
    match r[3] {
        tierdb_engine::Value::Int(v) => v,
        ref other => panic!("v is {other:?}"),
    }
}

fn id_of(r: &Row) -> i64 {
    match r[0] {
        tierdb_engine::Value::Int(v) => v,
        ref other => panic!("id is {other:?}"),
    }
}

/// id → (k, v) of the rows a scan returned.
fn shape(rows: &[Row]) -> BTreeMap<i64, (i64, i64)> {
    rows.iter()
        .map(|r| {
            let k = match r[1] {
                tierdb_engine::Value::Int(k) => k,
                _ => panic!("k"),
            };
            (id_of(r), (k, v_of(r)))
        })
        .collect()
}

#[test]
fn a_view_keeps_seeing_the_moment_it_opened_until_it_closes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    insert_rows(&e, &t, 1..=20, |id| id);
    let before = {
        let mut tx = e.begin();
        shape(&scan_all(&mut tx, &t))
    };

    // Running when the view opens: never seen by it, even after it commits.
    let mut running = e.begin();
    running
        .update(&t, &key(1), kv_row(1, 1, 100))
        .expect("update");

    let mut r = with_view(&e);
    assert!(r.has_view());
    assert_eq!(v_of(&r.get(&t, &key(1)).expect("get").expect("row 1")), 0);

    // Later: an update moving an index entry, a delete, an insert, an update then a delete.
    let mut w = e.begin();
    w.update(&t, &key(2), kv_row(2, 1000, 200)).expect("update");
    w.delete(&t, &key(3)).expect("delete");
    w.insert(&t, kv_row(21, 21, 0)).expect("insert");
    w.update(&t, &key(4), kv_row(4, 4, 400)).expect("update");
    w.delete(&t, &key(4)).expect("delete");
    w.commit().expect("commit");
    running.commit().expect("commit");
    // The same key deleted and inserted again by yet another transaction.
    let mut w2 = e.begin();
    w2.delete(&t, &key(5)).expect("delete");
    w2.insert(&t, kv_row(5, 5000, 500)).expect("insert");
    w2.commit().expect("commit");
    assert!(status(&e, "Tierdb_purges_deferred") > 0);
    assert!(status(&e, "Innodb_history_list_length") >= 3);

    assert_eq!(shape(&scan_all(&mut r, &t)), before, "primary scan");
    let by_index = index_scan_all(&mut r, &t, 0);
    assert_eq!(shape(&by_index), before, "index scan");
    let order: Vec<i64> = by_index.iter().map(id_of).collect();
    assert_eq!(order, (1..=20).collect::<Vec<_>>(), "index order (k = id)");
    for id in 1..=21 {
        let got = r.get(&t, &key(id)).expect("get").map(|row| v_of(&row));
        assert_eq!(got, before.get(&id).map(|&(_, v)| v), "row {id}");
    }
    // Somebody else (READ COMMITTED) sees the new state meanwhile.
    {
        let mut rc = e.begin();
        let now = shape(&scan_all(&mut rc, &t));
        assert_eq!(now.get(&1), Some(&(1, 100)));
        assert_eq!(now.get(&2), Some(&(1000, 200)));
        assert_eq!(now.get(&3), None);
        assert_eq!(now.get(&4), None);
        assert_eq!(now.get(&5), Some(&(5000, 500)));
        assert_eq!(now.get(&21), Some(&(21, 0)));
    }

    // Its own changes it sees; locking reads and changes work on the newest versions.
    r.update(&t, &key(6), kv_row(6, 6, 600))
        .expect("own update");
    assert_eq!(v_of(&r.get(&t, &key(6)).expect("get").expect("row 6")), 600);
    assert_eq!(
        v_of(&r.lock_row(&t, &key(2)).expect("lock").expect("row 2")),
        200,
        "a locking read sees the newest committed version"
    );
    assert_eq!(v_of(&r.get(&t, &key(2)).expect("get").expect("row 2")), 0);
    r.current_reads();
    assert_eq!(v_of(&r.get(&t, &key(2)).expect("get").expect("row 2")), 200);
    r.consistent_reads();
    assert_eq!(v_of(&r.get(&t, &key(2)).expect("get").expect("row 2")), 0);
    r.commit().expect("commit");

    // Closed: the deferred purges ran; the index lists exactly the live rows.
    assert_eq!(status(&e, "Tierdb_purges_deferred"), 0);
    assert_eq!(status(&e, "Innodb_history_list_length"), 0);
    assert_eq!(status(&e, "Tierdb_read_views_open"), 0);
    let mut rc = e.begin();
    let table = shape(&scan_all(&mut rc, &t));
    let index = shape(&index_scan_all(&mut rc, &t, 0));
    assert_eq!(index, table);
    assert_eq!(table.len(), 19);
    assert_eq!(table.get(&6), Some(&(6, 600)));
    drop(rc);
    e.shutdown().expect("shutdown");
}

#[test]
fn a_view_cannot_read_a_table_whose_trees_are_newer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut tx = e.begin();
    tx.insert(&t, kv_row(1, 1, 1)).expect("insert");
    tx.commit().expect("commit");

    let mut r = with_view(&e);
    assert_eq!(scan_all(&mut r, &t).len(), 1);
    e.create_index("d", "t", v_idx()).expect("create index");
    let nt = e.table("d", "t").expect("table");
    assert!(matches!(
        r.scan(&nt, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
        Err(Error::TableDefinitionChanged)
    ));
    assert!(matches!(
        r.get(&nt, &key(1)),
        Err(Error::TableDefinitionChanged)
    ));
    // A transaction reading committed versions is not concerned; nor is a view opened later.
    r.current_reads();
    assert_eq!(scan_all(&mut r, &nt).len(), 1);
    r.commit().expect("commit");
    let mut r2 = with_view(&e);
    assert_eq!(index_scan_all(&mut r2, &nt, 1).len(), 1);
    r2.commit().expect("commit");
    e.shutdown().expect("shutdown");
}

#[test]
fn a_dropped_index_keeps_its_pages_until_the_purges_waiting_for_a_view_ran() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    insert_rows(&e, &t, 1..=300, |id| id);
    let mut r = with_view(&e);
    assert_eq!(scan_all(&mut r, &t).len(), 300);
    let mut w = e.begin();
    for id in 1..=300 {
        if id % 2 == 0 {
            w.delete(&t, &key(id)).expect("delete");
        } else {
            w.update(&t, &key(id), kv_row(id, id + 1000, 1))
                .expect("update");
        }
    }
    w.commit().expect("commit");
    assert!(status(&e, "Tierdb_purges_deferred") >= 300);
    // The purges hold the handle from before this index; the dropped k_idx tree's holder
    // watches the newer handle, which nobody holds.
    e.create_index("d", "t", v_idx()).expect("create index");
    drop(t);
    e.drop_index("d", "t", "k_idx").expect("drop index");
    assert_eq!(status(&e, "Tierdb_dropped_trees_pending"), 1);
    assert_eq!(
        e.reclaim_dropped(1000).expect("reclaim"),
        0,
        "purges still wait"
    );
    assert_eq!(status(&e, "Tierdb_dropped_trees_pending"), 1);
    r.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_purges_deferred"), 0);
    assert!(e.reclaim_dropped(1000).expect("reclaim") > 0);
    assert_eq!(status(&e, "Tierdb_dropped_trees_pending"), 0);
    let t = e.table("d", "t").expect("table");
    let mut rc = e.begin();
    let table = shape(&scan_all(&mut rc, &t));
    assert_eq!(table.len(), 150);
    assert_eq!(
        shape(&index_scan_all(&mut rc, &t, 0)),
        table,
        "v_idx == table"
    );
    drop(rc);
    e.shutdown().expect("shutdown");
    verify_data_file(dir.path()).expect("every page verifies");
}

#[test]
fn a_view_left_open_is_released_when_its_history_outgrows_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = small_cfg(dir.path(), 8 << 20);
    cfg.read_view_history_limit = 256 << 10;
    let e = Engine::open(cfg).expect("open");
    e.create_database("d").expect("create database");
    e.create_table("d", kv_table("t")).expect("create table");
    let t = e.table("d", "t").expect("table");
    insert_rows(&e, &t, 1..=50, |id| id);

    let mut forgotten = with_view(&e);
    assert_eq!(scan_all(&mut forgotten, &t).len(), 50);
    let mut fresh_seen = false;
    // Each transaction retains about 50 before-images of ~250 bytes: the limit is passed
    // after about 20 of them.
    for round in 1..=60 {
        let mut w = e.begin();
        for id in 1..=50 {
            w.update(&t, &key(id), kv_row(id, id + round, round))
                .expect("a writer never notices the limit");
        }
        w.delete(&t, &key(1000 + round - 1)).expect("delete");
        w.insert(&t, kv_row(1000 + round, 0, 0)).expect("insert");
        w.commit().expect("commit");
        if round == 30 {
            // A view opened later is not released along with the old one.
            let mut fresh = e.begin();
            fresh.consistent_reads();
            assert_eq!(scan_all(&mut fresh, &t).len(), 51);
            fresh.commit().expect("commit");
            fresh_seen = true;
        }
        assert!(
            status(&e, "Tierdb_history_bytes") <= 256 << 10,
            "round {round}"
        );
    }
    assert!(fresh_seen);
    assert_eq!(status(&e, "Tierdb_read_views_expired"), 1);
    assert!(matches!(
        forgotten.get(&t, &key(1)),
        Err(Error::ReadViewTooOld)
    ));
    assert!(matches!(
        forgotten.scan(&t, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
        Err(Error::ReadViewTooOld)
    ));
    forgotten
        .commit()
        .expect("the released transaction still ends");
    assert_eq!(status(&e, "Tierdb_read_views_open"), 0);
    assert_eq!(status(&e, "Innodb_history_list_length"), 0);
    assert_eq!(status(&e, "Tierdb_purges_deferred"), 0);
    let mut rc = e.begin();
    let table = shape(&scan_all(&mut rc, &t));
    assert_eq!(table.len(), 51);
    assert_eq!(
        shape(&index_scan_all(&mut rc, &t, 0)),
        table,
        "index == table"
    );
    drop(rc);
    e.shutdown().expect("shutdown");
}

#[test]
fn a_deferred_purge_keeps_an_entry_a_savepoint_rollback_brings_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut tx = e.begin();
    tx.insert(&t, kv_row(1, 10, 0)).expect("insert");
    tx.commit().expect("commit");
    let mut view = with_view(&e);
    assert!(view.get(&t, &key(1)).expect("get").is_some());
    // k 10 -> 20, committed while the view is open: the purge of entry 10 waits.
    let mut t1 = e.begin();
    t1.update(&t, &key(1), kv_row(1, 20, 0)).expect("update");
    t1.commit().expect("commit");
    // k 20 -> 10, savepoint, 10 -> 30; the purge of entry 10 runs when the view closes.
    let mut t2 = e.begin();
    t2.update(&t, &key(1), kv_row(1, 10, 0)).expect("update");
    let sp = t2.savepoint();
    t2.update(&t, &key(1), kv_row(1, 30, 0)).expect("update");
    view.commit().expect("commit");
    // Back to k = 10: its entry must still be there.
    t2.rollback_to_savepoint(sp).expect("rollback to savepoint");
    t2.commit().expect("commit");
    let mut rc = e.begin();
    let table = shape(&scan_all(&mut rc, &t));
    assert_eq!(table.get(&1), Some(&(10, 0)));
    assert_eq!(
        shape(&index_scan_all(&mut rc, &t, 0)),
        table,
        "index == table"
    );
    drop(rc);
    e.shutdown().expect("shutdown");
}

#[test]
fn a_purge_deferred_while_the_only_view_expires_still_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    insert_rows(&e, &t, 1..=3, |id| id);
    e.set_variable(
        "tierdb_read_view_history_limit",
        &tierdb_engine::Value::Int(1),
    )
    .expect("set");
    let mut view = with_view(&e);
    assert!(view.get(&t, &key(1)).expect("get").is_some());
    // This commit is retained for the view, then its own history trim expires the view.
    let mut w = e.begin();
    w.delete(&t, &key(3)).expect("delete");
    w.commit().expect("commit");
    assert_eq!(status(&e, "Tierdb_read_views_expired"), 1);
    assert_eq!(
        status(&e, "Tierdb_purges_deferred"),
        0,
        "no purge left behind"
    );
    assert_eq!(status(&e, "Innodb_history_list_length"), 0);
    assert!(matches!(view.get(&t, &key(1)), Err(Error::ReadViewTooOld)));
    drop(view);
    e.shutdown().expect("shutdown");
}

const ACCOUNTS: i64 = 120;
const START: i64 = 100;

/// Moves money between two accounts; sometimes re-keys one (delete + insert under a new id)
/// or moves it to another bucket (index key `k`). Rolls back one in eight.
fn one_transfer(
    e: &Engine,
    t: &Arc<Table>,
    live: &Mutex<Vec<i64>>,
    next_id: &AtomicI64,
    seed: &mut u64,
) -> Result<(), Error> {
    let mut rnd = || {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    };
    let (a, b) = {
        let l = live.lock();
        let n = l.len() as u64;
        (l[(rnd() % n) as usize], l[(rnd() % n) as usize])
    };
    if a == b {
        return Ok(());
    }
    let mut tx: Txn = e.begin();
    let (Some(ra), Some(rb)) = (tx.lock_row(t, &key(a))?, tx.lock_row(t, &key(b))?) else {
        return Ok(()); // re-keyed meanwhile
    };
    let amount = (rnd() % 20) as i64;
    let (va, vb) = (v_of(&ra) - amount, v_of(&rb) + amount);
    let bucket = |r: &Row| match r[1] {
        tierdb_engine::Value::Int(k) => k,
        _ => 0,
    };
    tx.update(t, &key(b), kv_row(b, bucket(&rb), vb))?;
    let mut rekeyed = None;
    match rnd() % 4 {
        0 => {
            let na = next_id.fetch_add(1, Ordering::Relaxed);
            tx.delete(t, &key(a))?;
            tx.insert(t, kv_row(na, bucket(&ra), va))?;
            rekeyed = Some(na);
        }
        1 => {
            tx.update(t, &key(a), kv_row(a, (rnd() % 10) as i64, va))?;
        }
        _ => {
            tx.update(t, &key(a), kv_row(a, bucket(&ra), va))?;
        }
    }
    if rnd() % 8 == 0 {
        return tx.rollback();
    }
    // The live list is updated under its lock before the commit is visible to other writers'
    // picks; a pick of an id gone meanwhile finds no row and does nothing.
    tx.commit()?;
    if let Some(na) = rekeyed {
        let mut l = live.lock();
        if let Some(p) = l.iter().position(|&x| x == a) {
            l[p] = na;
        }
    }
    Ok(())
}

#[test]
fn views_over_concurrent_transfers_always_sum_to_the_same_total() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut tx = e.begin();
    for id in 1..=ACCOUNTS {
        tx.insert(&t, kv_row(id, id % 10, START)).expect("insert");
    }
    tx.commit().expect("commit");
    let live = Arc::new(Mutex::new((1..=ACCOUNTS).collect::<Vec<i64>>()));
    let next_id = Arc::new(AtomicI64::new(ACCOUNTS + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let total = ACCOUNTS * START;

    let mut writers = Vec::new();
    for w in 0..4u64 {
        let (e, t, live, next_id, stop) = (
            e.clone(),
            t.clone(),
            live.clone(),
            next_id.clone(),
            stop.clone(),
        );
        writers.push(std::thread::spawn(move || {
            let mut seed = 0x9E37_79B9_7F4A_7C15 ^ (w + 1);
            let mut done = 0u64;
            while !stop.load(Ordering::Relaxed) {
                match one_transfer(&e, &t, &live, &next_id, &mut seed) {
                    Ok(()) => done += 1,
                    Err(Error::Deadlock) | Err(Error::LockWaitTimeout) => {}
                    Err(other) => panic!("writer {w}: {other:?}"),
                }
            }
            done
        }));
    }
    let mut readers = Vec::new();
    for _ in 0..2 {
        let (e, t, stop) = (e.clone(), t.clone(), stop.clone());
        readers.push(std::thread::spawn(move || {
            let mut views = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut r = e.begin();
                r.consistent_reads();
                let first = shape(&scan_all(&mut r, &t));
                let sum: i64 = first.values().map(|&(_, v)| v).sum();
                assert_eq!(sum, total, "primary scan of one view");
                assert_eq!(first.len() as i64, ACCOUNTS, "accounts in one view");
                std::thread::sleep(Duration::from_millis(3));
                let by_index = shape(&index_scan_all(&mut r, &t, 0));
                assert_eq!(by_index, first, "index scan in the same view");
                for (&id, &(k, v)) in first.iter().step_by(7) {
                    let row = r.get(&t, &key(id)).expect("get").expect("row in view");
                    assert_eq!(shape(&[row]).get(&id), Some(&(k, v)), "point read of {id}");
                }
                std::thread::sleep(Duration::from_millis(3));
                assert_eq!(
                    shape(&scan_all(&mut r, &t)),
                    first,
                    "re-read in the same view"
                );
                r.commit().expect("commit");
                views += 1;
            }
            views
        }));
    }
    std::thread::sleep(Duration::from_secs(4));
    stop.store(true, Ordering::Relaxed);
    let done: u64 = writers.into_iter().map(|h| h.join().expect("writer")).sum();
    let views: u64 = readers.into_iter().map(|h| h.join().expect("reader")).sum();
    assert!(done > 100, "only {done} transfers");
    assert!(views > 10, "only {views} views");

    assert_eq!(status(&e, "Tierdb_read_views_open"), 0);
    assert_eq!(status(&e, "Tierdb_purges_deferred"), 0);
    assert_eq!(status(&e, "Innodb_history_list_length"), 0);
    let mut rc = e.begin();
    let table = shape(&scan_all(&mut rc, &t));
    assert_eq!(table.values().map(|&(_, v)| v).sum::<i64>(), total);
    assert_eq!(
        shape(&index_scan_all(&mut rc, &t, 0)),
        table,
        "index == table"
    );
    drop(rc);
    e.shutdown().expect("shutdown");
    eprintln!("{done} transfers, {views} views");
}

/// Transaction ids keep growing across restarts (clean or not): a view opened after a
/// restart sees the rows committed before it. (They restarted at 1 after a clean shutdown,
/// so such a view took every older row's writer for one it must not see.)
#[test]
fn a_view_opened_after_a_restart_sees_the_rows_committed_before_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    for chunk in 0..20 {
        insert_rows(&e, &t, chunk * 10..chunk * 10 + 10, |id| id % 7);
    }
    let want = {
        let mut tx = e.begin();
        let rows = scan_all(&mut tx, &t);
        tx.commit().expect("commit");
        rows
    };
    assert_eq!(want.len(), 200);
    // A crash image taken now (after a checkpoint: the redo no longer names the writers).
    e.checkpoint().expect("checkpoint");
    let crash = tempfile::tempdir().expect("tempdir");
    copy_engine_dir(dir.path(), crash.path());
    e.shutdown().expect("shutdown");
    drop(t);
    drop(e);
    for d in [dir.path(), crash.path()] {
        let e = Engine::open(small_cfg(d, 8 << 20)).expect("reopen");
        let t = e.table("d", "t").expect("table");
        // A new writer after the restart, then a view: both old and new rows are seen.
        insert_rows(&e, &t, [1000], |_| 1);
        let mut v = with_view(&e);
        let got = scan_all(&mut v, &t);
        assert_eq!(got.len(), 201, "{}", d.display());
        assert_eq!(&got[..200], &want[..]);
        assert_eq!(index_scan_all(&mut v, &t, 0).len(), 201);
        v.commit().expect("commit");
        e.shutdown().expect("shutdown");
    }
}
