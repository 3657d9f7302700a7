//! ALTER TABLE changes that rewrite every row (DROP COLUMN, ADD COLUMN ... FIRST, several
//! changes at once) while four sessions keep updating and inserting through prepared
//! statements: no writer sees an error (they wait for the copy, and a statement planned
//! against the old shape is planned again and rerun, as MySQL re-prepares), no update is lost,
//! and the indexes match the table afterwards. A failing ALTER (a duplicate under a new
//! UNIQUE key) changes nothing.

mod common;

use common::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tierdb_engine::Value;

#[test]
fn rewriting_alters_run_under_writers_without_errors_or_lost_updates() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE w (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(100), KEY k (k))",
    );
    let vals: Vec<String> = (0..500)
        .map(|i| format!("({i}, {}, '{}')", i % 50, "p".repeat(60 + i % 40)))
        .collect();
    exec(&mut s, &format!("INSERT INTO w VALUES {}", vals.join(",")));
    let k_before: i64 = int(&q(&mut s, "SELECT SUM(k) FROM w")[0][0]);

    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for w in 0..4u32 {
        let shared = env.shared.clone();
        let stop = stop.clone();
        handles.push(std::thread::spawn(move || {
            let mut s =
                tierdb_sql::Session::new(shared, 10 + w, "sbtest", "127.0.0.1", Some("sbtest"))
                    .expect("session");
            let upd = s
                .prepare("UPDATE w SET k = k + 1 WHERE id = ?")
                .expect("prepare update")
                .statement_id;
            let ins = s
                .prepare("INSERT INTO w (id, k) VALUES (?, ?)")
                .expect("prepare insert")
                .statement_id;
            let (mut updates, mut inserts, mut errors) = (0i64, 0i64, Vec::new());
            let mut i = 0i64;
            while !stop.load(Ordering::Relaxed) || i < 50 {
                let id = (i * 7 + i64::from(w) * 131) % 500;
                match s.execute(upd, &[Value::Int(id)]) {
                    Ok(_) => updates += 1,
                    Err(e) => errors.push(format!("update: {e}")),
                }
                if i % 5 == 0 {
                    let new_id = 10_000 + i64::from(w) * 100_000 + i;
                    match s.execute(ins, &[Value::Int(new_id), Value::Int(0)]) {
                        Ok(_) => inserts += 1,
                        Err(e) => errors.push(format!("insert: {e}")),
                    }
                }
                i += 1;
            }
            s.end();
            (updates, inserts, errors)
        }));
    }

    std::thread::sleep(std::time::Duration::from_millis(50));
    exec(&mut s, "ALTER TABLE w DROP COLUMN pad");
    std::thread::sleep(std::time::Duration::from_millis(30));
    exec(
        &mut s,
        "ALTER TABLE w ADD COLUMN note VARCHAR(10) NOT NULL DEFAULT 'n' FIRST",
    );
    std::thread::sleep(std::time::Duration::from_millis(30));
    exec(
        &mut s,
        "ALTER TABLE w MODIFY k BIGINT NOT NULL, ADD INDEX kid (k, id), DROP INDEX k",
    );
    std::thread::sleep(std::time::Duration::from_millis(30));
    stop.store(true, Ordering::Relaxed);

    let (mut updates, mut inserts) = (0, 0);
    for h in handles {
        let (u, n, errors) = h.join().expect("writer");
        assert!(errors.is_empty(), "writer errors: {errors:?}");
        updates += u;
        inserts += n;
    }
    assert!(updates > 0 && inserts > 0);

    let cols: Vec<String> = q(&mut s, "SHOW COLUMNS FROM w")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(cols, vec!["note", "id", "k"]);
    assert_eq!(
        int(&q(&mut s, "SELECT COUNT(*) FROM w")[0][0]),
        500 + inserts
    );
    assert_eq!(
        int(&q(&mut s, "SELECT SUM(k) FROM w")[0][0]),
        k_before + updates,
        "an update was lost"
    );
    assert_eq!(
        int(&q(&mut s, "SELECT COUNT(*) FROM w WHERE note = 'n'")[0][0]),
        500 + inserts
    );
    // The rebuilt index lists exactly the table's rows.
    let by_table = q(&mut s, "SELECT id, k FROM w IGNORE INDEX (kid) ORDER BY id");
    let by_index = q(
        &mut s,
        "SELECT id, k FROM w FORCE INDEX (kid) WHERE k >= 0 ORDER BY id",
    );
    assert_eq!(by_table, by_index);

    // A new UNIQUE key over duplicates fails and changes nothing.
    let e = err(
        &mut s,
        "ALTER TABLE w DROP COLUMN note, ADD UNIQUE KEY uk (k)",
    );
    assert_eq!(e.code, 1062, "{e:?}");
    let cols: Vec<String> = q(&mut s, "SHOW COLUMNS FROM w")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(cols, vec!["note", "id", "k"]);
    assert_eq!(
        int(&q(&mut s, "SELECT COUNT(*) FROM w")[0][0]),
        500 + inserts
    );
}

#[test]
fn a_rewriting_alter_waits_for_a_locking_read_and_statements_from_before_are_replanned() {
    let env = env();
    let mut s = env.session(1);
    let mut other = env.session(2);
    exec(&mut s, "SET GLOBAL innodb_lock_wait_timeout = 1");
    exec(&mut s, "CREATE TABLE p (a INT PRIMARY KEY, b INT NOT NULL)");
    exec(&mut s, "INSERT INTO p VALUES (1, 3), (2, 2), (3, 1)");
    // A row locked by a locking read keeps a rewrite of the keys out until its transaction
    // ends (the lock is on the old key bytes).
    exec(&mut other, "BEGIN");
    assert_eq!(
        q(&mut other, "SELECT b FROM p WHERE a = 1 FOR UPDATE")[0][0],
        Value::Int(3)
    );
    let e = err(
        &mut s,
        "ALTER TABLE p DROP PRIMARY KEY, ADD PRIMARY KEY (b)",
    );
    assert_eq!(e.code, 1205, "{e:?}");
    exec(&mut other, "COMMIT");
    // So does a shared one.
    exec(&mut other, "BEGIN");
    q(&mut other, "SELECT b FROM p WHERE a = 2 LOCK IN SHARE MODE");
    let e = err(
        &mut s,
        "ALTER TABLE p DROP PRIMARY KEY, ADD PRIMARY KEY (b)",
    );
    assert_eq!(e.code, 1205, "{e:?}");
    exec(&mut other, "COMMIT");
    // FOR UPDATE under a READ table lock is a write (1099, as MariaDB); sharing is not.
    exec(&mut other, "LOCK TABLES p READ");
    assert_eq!(
        err(&mut other, "SELECT b FROM p WHERE a = 1 FOR UPDATE").code,
        1099
    );
    q(&mut other, "SELECT b FROM p WHERE a = 1 LOCK IN SHARE MODE");
    exec(&mut other, "UNLOCK TABLES");
    // A statement prepared before the key change deletes the row it names afterwards.
    let del = other
        .prepare("DELETE FROM p WHERE a = ?")
        .expect("prepare")
        .statement_id;
    exec(
        &mut s,
        "ALTER TABLE p DROP PRIMARY KEY, ADD PRIMARY KEY (b)",
    );
    let r = other.execute(del, &[Value::Int(1)]).expect("delete");
    assert_eq!(affected(&r), 1);
    let left: Vec<(i64, i64)> = q(&mut s, "SELECT a, b FROM p ORDER BY a")
        .iter()
        .map(|r| (int(&r[0]), int(&r[1])))
        .collect();
    assert_eq!(left, vec![(2, 2), (3, 1)]);
}
