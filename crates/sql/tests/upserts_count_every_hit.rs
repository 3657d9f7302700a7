//! Upserts under concurrency and as prepared statements:
//!
//! - 8 sessions each run 150 prepared `INSERT INTO hits (page, n) VALUES (?, 1) ON DUPLICATE
//!   KEY UPDATE n = n + VALUES(n)` over 5 pages keyed by a UNIQUE column, some inside
//!   explicit transactions that roll back: the counts add up to exactly the committed
//!   statements (no lost update, no second row for a page);
//! - 8 sessions `REPLACE` rows over a small set of unique values: every value is held by at
//!   most one row and the unique index lists exactly the table's rows;
//! - affected rows: 1 inserted, 2 updated, 0 unchanged; an ON DUPLICATE KEY UPDATE that would
//!   move the row onto another row's unique value fails with 1062 and changes nothing.

mod common;

use common::*;
use tierdb_engine::Value;

#[test]
fn concurrent_upserts_count_every_committed_hit() {
    let env = env();
    exec(
        &mut env.session(1),
        "CREATE TABLE hits (id INT PRIMARY KEY AUTO_INCREMENT, page VARCHAR(20) NOT NULL, \
         n INT NOT NULL, UNIQUE KEY page (page))",
    );
    let threads = 8;
    let per = 150;
    let mut handles = Vec::new();
    for th in 0..threads {
        let mut s = env.session(10 + th);
        handles.push(std::thread::spawn(move || {
            let st = s
                .prepare("INSERT INTO hits (page, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + VALUES(n)")
                .expect("prepare")
                .statement_id;
            let mut committed = [0i64; 5];
            let mut i = 0;
            while i < per {
                // Every fourth group of 3 runs in a transaction that rolls back.
                let rollback = (i / 3) % 4 == 3;
                s.query("BEGIN").expect("begin");
                let mut done = Vec::new();
                for _ in 0..3 {
                    let page = (i * 7 + th as usize) % 5;
                    match s.execute(st, &[Value::Bytes(format!("p{page}").into_bytes())]) {
                        Ok(_) => done.push(page),
                        Err(e) if e.code == 1213 => {
                            done.clear();
                            break;
                        }
                        Err(e) => panic!("upsert failed: {e:?}"),
                    }
                    i += 1;
                }
                if rollback || done.is_empty() {
                    let _ = s.query("ROLLBACK");
                } else {
                    s.query("COMMIT").expect("commit");
                    for p in done {
                        committed[p] += 1;
                    }
                }
            }
            committed
        }));
    }
    let mut want = [0i64; 5];
    for h in handles {
        for (w, c) in want.iter_mut().zip(h.join().expect("session thread")) {
            *w += c;
        }
    }
    let got = q(
        &mut env.session(2),
        "SELECT page, n FROM hits ORDER BY page",
    );
    assert_eq!(got.len(), 5, "one row per page: {got:?}");
    for (p, row) in got.iter().enumerate() {
        assert_eq!(text(&row[0]), format!("p{p}"));
        assert_eq!(int(&row[1]), want[p], "page p{p}");
    }
    assert!(want.iter().sum::<i64>() > 500);
}

#[test]
fn concurrent_replaces_keep_every_value_on_one_row() {
    let env = env();
    exec(
        &mut env.session(1),
        "CREATE TABLE r (id INT PRIMARY KEY, a INT, b INT, UNIQUE KEY ua (a), UNIQUE KEY ub (b))",
    );
    let mut handles = Vec::new();
    for th in 0..8u32 {
        let mut s = env.session(10 + th);
        handles.push(std::thread::spawn(move || {
            let mut x = u64::from(th) * 2654435761 + 1;
            for _ in 0..200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let (id, a, b) = (x % 30, (x >> 8) % 10, (x >> 16) % 10);
                let sql = format!("REPLACE INTO r VALUES ({id}, {a}, {b})");
                match s.query(&sql) {
                    Ok(_) => {}
                    Err(e) if e.code == 1213 => {}
                    Err(e) => panic!("{sql}: {e:?}"),
                }
            }
        }));
    }
    for h in handles {
        h.join().expect("session thread");
    }
    let mut s = env.session(2);
    let all = q(&mut s, "SELECT id, a, b FROM r ORDER BY id");
    for col in [1, 2] {
        let mut vals: Vec<i64> = all.iter().map(|r| int(&r[col])).collect();
        let n = vals.len();
        vals.sort();
        vals.dedup();
        assert_eq!(vals.len(), n, "column {col} repeats a value: {all:?}");
    }
    let by_a = q(
        &mut s,
        "SELECT id, a, b FROM r FORCE INDEX (ua) ORDER BY id",
    );
    let by_b = q(
        &mut s,
        "SELECT id, a, b FROM r FORCE INDEX (ub) ORDER BY id",
    );
    assert_eq!(by_a, all);
    assert_eq!(by_b, all);
    assert!(!all.is_empty() && all.len() <= 10);
}

#[test]
fn affected_rows_and_a_conflicting_update() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, u INT NOT NULL, v INT, UNIQUE KEY u (u))",
    );
    exec(&mut s, "INSERT INTO t VALUES (1, 10, 0), (2, 20, 0)");
    let up = "INSERT INTO t VALUES (1, 10, 5) ON DUPLICATE KEY UPDATE v = VALUES(v)";
    assert_eq!(affected(&exec(&mut s, up)), 2);
    assert_eq!(affected(&exec(&mut s, up)), 0);
    assert_eq!(
        affected(&exec(
            &mut s,
            "INSERT INTO t VALUES (3, 30, 0) ON DUPLICATE KEY UPDATE v = 9"
        )),
        1
    );
    // The key that matched is id 1 (PRIMARY first); moving it onto u = 20 is a duplicate.
    let e = err(
        &mut s,
        "INSERT INTO t VALUES (1, 99, 0) ON DUPLICATE KEY UPDATE u = 20",
    );
    assert_eq!(e.code, 1062, "{e:?}");
    assert!(e.message.contains("for key 'u'"), "{}", e.message);
    assert_eq!(
        q(&mut s, "SELECT id, u, v FROM t ORDER BY id"),
        vec![
            vec![int_value(1), int_value(10), int_value(5)],
            vec![int_value(2), int_value(20), int_value(0)],
            vec![int_value(3), int_value(30), int_value(0)],
        ]
    );
    // A unique key hit that is not the primary key updates that row.
    exec(
        &mut s,
        "INSERT INTO t VALUES (7, 30, 1) ON DUPLICATE KEY UPDATE v = v + 100",
    );
    assert_eq!(
        q(&mut s, "SELECT id, v FROM t WHERE u = 30")[0],
        vec![int_value(3), int_value(100)]
    );
}
