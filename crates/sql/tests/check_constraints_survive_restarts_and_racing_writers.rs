//! CHECK constraints are part of the table: they survive a restart of the engine (as declared,
//! added and dropped), a JSON column keeps refusing text that is not JSON, and a check added
//! while another session keeps writing rows that break it is never bypassed: once ALTER TABLE
//! ADD CHECK has succeeded, no such row is in the table, and every later write of one is 4025.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use tierdb_sql::Session;

#[test]
fn declared_added_and_dropped_checks_survive_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || open_shared(dir.path());
    let shared = open();
    let mut s = Session::new(shared.clone(), 1, "root", "localhost", None).expect("session");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "USE d");
    exec(
        &mut s,
        "CREATE TABLE o (id INT PRIMARY KEY, qty INT CHECK (qty >= 0), doc JSON, \
         CONSTRAINT small CHECK (qty < 1000 OR doc IS NOT NULL), CHECK (id <> 13))",
    );
    exec(
        &mut s,
        "INSERT INTO o VALUES (1, 5, '{\"a\": 1}'), (2, 7, NULL)",
    );
    exec(
        &mut s,
        "ALTER TABLE o ADD CONSTRAINT odd_id CHECK (id % 2 = 1 OR qty > 6)",
    );
    exec(&mut s, "ALTER TABLE o DROP CONSTRAINT CONSTRAINT_1");
    let before = text(&q(&mut s, "SHOW CREATE TABLE o")[0][1]);
    s.end();
    shared.engine().shutdown().expect("shutdown");
    drop(shared);

    let shared = open();
    let mut s = Session::new(shared.clone(), 1, "root", "localhost", Some("d")).expect("session");
    let after = text(&q(&mut s, "SHOW CREATE TABLE o")[0][1]);
    assert_eq!(before, after);
    assert!(after.contains("CHECK (`qty` >= 0)"), "{after}");
    assert!(after.contains("CHECK (json_valid(`doc`))"), "{after}");
    assert!(after.contains("CONSTRAINT `odd_id` CHECK"), "{after}");
    assert!(!after.contains("CONSTRAINT_1"), "{after}");
    for (sql, name) in [
        ("INSERT INTO o VALUES (3, -1, NULL)", "o.qty"),
        ("INSERT INTO o VALUES (5, 2000, NULL)", "small"),
        ("INSERT INTO o VALUES (7, 1, 'not json')", "o.doc"),
        ("INSERT INTO o VALUES (4, 1, NULL)", "odd_id"),
        ("UPDATE o SET qty = -5 WHERE id = 1", "o.qty"),
    ] {
        let e = err(&mut s, sql);
        assert_eq!(e.code, 4025, "{sql}: {e:?}");
        assert_eq!(
            e.message,
            format!("CONSTRAINT `{name}` failed for `d`.`o`"),
            "{sql}"
        );
    }
    // The dropped check no longer holds; NULL passes a check.
    exec(&mut s, "INSERT INTO o VALUES (13, NULL, NULL)");
    let n = q(&mut s, "SELECT COUNT(*) FROM o");
    assert_eq!(int(&n[0][0]), 3);
}

#[test]
fn a_check_added_while_a_session_writes_breaking_rows_is_never_bypassed() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, x INT)",
    );
    exec(&mut s, "INSERT INTO t (x) VALUES (1), (2)");
    let stop = Arc::new(AtomicBool::new(false));
    let refused_after = Arc::new(AtomicU64::new(0));
    let added = Arc::new(AtomicBool::new(false));
    let writer = {
        let mut w = env.session(2);
        let (stop, refused_after, added) = (stop.clone(), refused_after.clone(), added.clone());
        std::thread::spawn(move || {
            // Prepared once, before the check exists: it must be planned again.
            let id = w
                .prepare("INSERT INTO t (x) VALUES (?)")
                .expect("prepare")
                .statement_id;
            let mut i = 0i64;
            while !stop.load(Ordering::Acquire) {
                i += 1;
                let was_added = added.load(Ordering::Acquire);
                let r = if i % 2 == 0 {
                    w.execute(id, &[tierdb_engine::Value::Int(-i)])
                } else {
                    w.query(&format!("INSERT INTO t (x) VALUES ({})", -i))
                };
                // A pause, so that the other session's DELETE then ALTER can find the table
                // without breaking rows now and then.
                std::thread::sleep(std::time::Duration::from_micros(1500));
                match r {
                    Ok(_) => assert!(!was_added, "a breaking row went in after the check"),
                    Err(e) => {
                        assert_eq!(e.code, 4025, "{e:?}");
                        refused_after.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            w.end();
        })
    };
    let mut attempts = 0;
    loop {
        attempts += 1;
        assert!(
            attempts < 10_000,
            "the ALTER never found the table without breaking rows"
        );
        exec(&mut s, "DELETE FROM t WHERE x < 0");
        match s.query("ALTER TABLE t ADD CONSTRAINT nonneg CHECK (x >= 0)") {
            Ok(_) => break,
            Err(e) => assert_eq!(e.code, 4025, "{e:?}"),
        }
    }
    added.store(true, Ordering::Release);
    // Let the writer run against the check for a while.
    let t0 = std::time::Instant::now();
    while refused_after.load(Ordering::Relaxed) < 50 && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stop.store(true, Ordering::Release);
    writer.join().expect("writer");
    assert!(refused_after.load(Ordering::Relaxed) >= 50);
    let bad = q(&mut s, "SELECT COUNT(*) FROM t WHERE x < 0");
    assert_eq!(
        int(&bad[0][0]),
        0,
        "rows breaking the check are in the table"
    );
}
