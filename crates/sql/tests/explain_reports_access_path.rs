//! EXPLAIN tells the truth about the access path: const / ref / range / index / ALL.

mod common;
use common::*;
use tierdb_sql::{QueryResult, Session};

fn explain(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    match exec(s, &format!("EXPLAIN {sql}")) {
        QueryResult::Rows { columns, rows } => {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(
                names,
                [
                    "id",
                    "select_type",
                    "table",
                    "type",
                    "possible_keys",
                    "key",
                    "key_len",
                    "ref",
                    "rows",
                    "Extra"
                ]
            );
            rows.iter().map(|r| r.iter().map(text).collect()).collect()
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn access_types() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id))");
    exec(&mut s, "CREATE INDEX k_1 ON sbtest1(k)");
    let r = explain(&mut s, "SELECT c FROM sbtest1 WHERE id=5");
    assert_eq!(
        &r[0][1..9],
        ["SIMPLE", "sbtest1", "const", "PRIMARY", "PRIMARY", "4", "const", "1"]
    );
    assert_eq!(r[0][9], "NULL");
    let r = explain(
        &mut s,
        "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 10 ORDER BY c",
    );
    assert_eq!(&r[0][3..6], ["range", "PRIMARY", "PRIMARY"]);
    assert!(r[0][9].contains("Using filesort"));
    let r = explain(
        &mut s,
        "SELECT c FROM sbtest1 WHERE id BETWEEN 1 AND 10 ORDER BY id",
    );
    assert!(!r[0][9].contains("filesort"));
    let r = explain(&mut s, "SELECT * FROM sbtest1 WHERE k = 3");
    assert_eq!(&r[0][3..8], ["ref", "k_1", "k_1", "4", "const"]);
    let r = explain(&mut s, "SELECT * FROM sbtest1 WHERE k IN (1, 2, 3)");
    assert_eq!(&r[0][3..6], ["range", "k_1", "k_1"]);
    let r = explain(
        &mut s,
        "SELECT COUNT(k) FROM sbtest1 WHERE k BETWEEN 1 AND 5 OR k BETWEEN 10 AND 20",
    );
    assert_eq!(&r[0][3..6], ["range", "k_1", "k_1"]);
    let r = explain(&mut s, "SELECT * FROM sbtest1 WHERE c = 'x'");
    assert_eq!(&r[0][3..6], ["ALL", "NULL", "NULL"]);
    assert_eq!(r[0][9], "Using where");
    let r = explain(&mut s, "SELECT * FROM sbtest1 WHERE id IN (1, 5)");
    assert_eq!(r[0][3], "range");
    let r = explain(
        &mut s,
        "SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT 10) t",
    );
    assert_eq!(&r[0][1..4], ["PRIMARY", "<derived2>", "ALL"]);
    assert_eq!(
        &r[1][..6],
        ["2", "DERIVED", "sbtest1", "index", "NULL", "PRIMARY"]
    );
    let r = explain(&mut s, "SELECT * FROM sbtest1 FORCE INDEX (k_1)");
    assert_eq!(&r[0][3..6], ["index", "NULL", "k_1"]);
    let r = explain(
        &mut s,
        "SELECT * FROM sbtest1 IGNORE INDEX (k_1) WHERE k = 3",
    );
    assert_eq!(r[0][3], "ALL");
    let r = explain(&mut s, "UPDATE sbtest1 SET k=k+1 WHERE id=1");
    assert_eq!(r[0][3], "const");
    let r = explain(&mut s, "DELETE FROM sbtest1 WHERE k > 5");
    assert_eq!(&r[0][3..6], ["range", "k_1", "k_1"]);
    let r = explain(&mut s, "SELECT 1");
    assert_eq!(r[0][9], "No tables used");
    // prepared EXPLAIN with a parameter
    let p = s
        .prepare("EXPLAIN SELECT c FROM sbtest1 WHERE id=?")
        .unwrap();
    let r = rows(
        s.execute(p.statement_id, &[tierdb_engine::Value::Int(1)])
            .unwrap(),
    );
    assert_eq!(text(&r[0][3]), "const");
}

#[test]
fn order_by_limit_and_extremes_read_keys_in_order() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE o (id INT PRIMARY KEY, cust INT NOT NULL, at DATETIME NOT NULL, amount DECIMAL(10,2), note TEXT, KEY by_cust (cust, at), KEY by_at (at), KEY by_amount (amount))");
    // Newest first: the index on `at` read backwards, no sort.
    let r = explain(&mut s, "SELECT id FROM o ORDER BY at DESC LIMIT 10");
    assert_eq!(&r[0][3..6], ["index", "NULL", "by_at"]);
    assert_eq!(r[0][9], "NULL");
    let r = explain(&mut s, "SELECT * FROM o ORDER BY id DESC LIMIT 20");
    assert_eq!(r[0][3], "ALL");
    assert_eq!(r[0][9], "NULL");
    // An equality on the index's first column, then its second column backwards.
    let r = explain(
        &mut s,
        "SELECT * FROM o WHERE cust = 3 ORDER BY at DESC LIMIT 5",
    );
    assert_eq!(&r[0][3..6], ["ref", "by_cust", "by_cust"]);
    assert!(!r[0][9].contains("filesort"), "{r:?}");
    // No LIMIT, a huge LIMIT, mixed directions, a DECIMAL (text keys): sorted.
    for sql in [
        "SELECT id FROM o ORDER BY at",
        "SELECT id FROM o ORDER BY at LIMIT 1000000",
        "SELECT id FROM o ORDER BY cust, at DESC LIMIT 3",
        "SELECT id FROM o ORDER BY amount LIMIT 3",
    ] {
        let r = explain(&mut s, sql);
        assert!(r[0][9].contains("Using filesort"), "{sql}: {r:?}");
    }
    // MIN / MAX of key-leading columns without WHERE: read from the key ends.
    for sql in [
        "SELECT MAX(id), MIN(id) FROM o",
        "SELECT MIN(at), MAX(at), MAX(cust) FROM o",
    ] {
        let r = explain(&mut s, sql);
        assert_eq!(r[0][9], "Select tables optimized away", "{sql}");
    }
    for sql in [
        "SELECT MAX(id), COUNT(*) FROM o",
        "SELECT MAX(id) FROM o WHERE cust = 1",
        "SELECT MAX(note) FROM o",
        "SELECT MAX(amount) FROM o",
        "SELECT cust, MAX(at) FROM o GROUP BY cust",
    ] {
        let r = explain(&mut s, sql);
        assert_ne!(r[0][9], "Select tables optimized away", "{sql}");
    }
}

#[test]
fn in_and_exists_subqueries_drive_key_lookups() {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE o (id INT PRIMARY KEY, cust INT NOT NULL, KEY by_cust (cust))",
    );
    exec(&mut s, "CREATE TABLE i (oid INT NOT NULL, line INT NOT NULL, sku VARCHAR(10), PRIMARY KEY (oid, line), KEY by_sku (sku))");
    for sql in [
        "SELECT COUNT(*) FROM o WHERE id IN (SELECT oid FROM i WHERE sku = 'a')",
        "SELECT COUNT(*) FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.oid = o.id AND i.sku = 'a')",
        "SELECT * FROM o WHERE cust > 0 AND EXISTS (SELECT 1 FROM i WHERE o.id = i.oid LIMIT 1)",
    ] {
        let r = explain(&mut s, sql);
        assert_eq!([&r[0][3], &r[0][5]], ["range", "PRIMARY"], "{sql}");
    }
    let r = explain(&mut s, "SELECT * FROM o WHERE cust IN (SELECT line FROM i)");
    assert_eq!(&r[0][3..6], ["range", "by_cust", "by_cust"]);
    // Left alone: NOT EXISTS, EXISTS under OR, a link that is not an equality.
    for sql in [
        "SELECT * FROM o WHERE NOT EXISTS (SELECT 1 FROM i WHERE i.oid = o.id)",
        "SELECT * FROM o WHERE cust = 1 OR EXISTS (SELECT 1 FROM i WHERE i.oid = o.id)",
        "SELECT * FROM o WHERE EXISTS (SELECT 1 FROM i WHERE i.oid > o.id)",
        "SELECT * FROM o WHERE id NOT IN (SELECT oid FROM i)",
    ] {
        let r = explain(&mut s, sql);
        assert_eq!(r[0][3], "ALL", "{sql}");
    }
}

#[test]
fn like_with_a_literal_prefix_reads_a_key_range() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE u (id INT PRIMARY KEY, email VARCHAR(40), code VARBINARY(8), bio TEXT, KEY (email), KEY (code))");
    for (sql, key) in [
        ("SELECT * FROM u WHERE email LIKE 'c77%'", "email"),
        ("SELECT * FROM u WHERE email LIKE 'C77_x%'", "email"),
        ("SELECT * FROM u WHERE code LIKE 'ab%'", "code"),
        (
            "SELECT * FROM u WHERE email LIKE 'x|%%' ESCAPE '|'",
            "email",
        ),
    ] {
        let r = explain(&mut s, sql);
        assert_eq!([&r[0][3], &r[0][5]], ["range", key], "{sql}");
    }
    for sql in [
        "SELECT * FROM u WHERE email LIKE '%c77'",
        "SELECT * FROM u WHERE email LIKE '_c77%'",
        "SELECT * FROM u WHERE email NOT LIKE 'c77%'",
        "SELECT * FROM u WHERE bio LIKE 'c77%'",
    ] {
        let r = explain(&mut s, sql);
        assert_eq!(r[0][3], "ALL", "{sql}");
    }
}

/// Among keys that can serve a WHERE of literals, the one whose ranges hold the fewest
/// entries now is read, whichever is declared first; a parameter keeps the static choice
/// (most equalities), and every choice returns the same rows.
#[test]
fn the_narrowest_key_is_read_when_the_values_are_literals() {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE o (id INT PRIMARY KEY, cust INT NOT NULL, status VARCHAR(10) NOT NULL, \
         at INT NOT NULL, KEY k_status (status), KEY k_cust (cust), KEY k_at (at))",
    );
    // 'new' holds half the rows, each customer 10, `at` counts up.
    let rows: Vec<String> = (0..2000)
        .map(|i| {
            let status = if i % 2 == 0 {
                "new"
            } else {
                ["paid", "sent", "gone"][i % 3]
            };
            format!("({i}, {}, '{status}', {i})", i / 10)
        })
        .collect();
    for chunk in rows.chunks(500) {
        exec(&mut s, &format!("INSERT INTO o VALUES {}", chunk.join(",")));
    }
    let key = |s: &mut Session, sql: &str| explain(s, sql)[0][5].clone();
    // An equality with 1000 rows against an equality with 10, in either order.
    assert_eq!(
        key(&mut s, "SELECT * FROM o WHERE status = 'new' AND cust = 42"),
        "k_cust"
    );
    assert_eq!(
        key(&mut s, "SELECT * FROM o WHERE cust = 42 AND status = 'new'"),
        "k_cust"
    );
    // An equality with 1000 rows against a narrow range (and a wide one).
    assert_eq!(
        key(&mut s, "SELECT * FROM o WHERE status = 'new' AND at > 1990"),
        "k_at"
    );
    assert_eq!(
        key(&mut s, "SELECT * FROM o WHERE status = 'gone' AND at > 10"),
        "k_status"
    );
    // The primary key's range against a secondary equality.
    assert_eq!(
        key(
            &mut s,
            "SELECT * FROM o WHERE id BETWEEN 5 AND 7 AND status = 'new'"
        ),
        "PRIMARY"
    );
    // A parameter: not counted, the static preference stays.
    let st = s
        .prepare("EXPLAIN SELECT * FROM o WHERE status = ? AND at > 1990")
        .expect("prepare")
        .statement_id;
    let r = match s
        .execute(st, &[tierdb_engine::Value::Bytes(b"new".to_vec())])
        .expect("execute")
    {
        QueryResult::Rows { rows, .. } => text(&rows[0][5]),
        other => panic!("{other:?}"),
    };
    assert_eq!(r, "k_status");
    // The same rows whichever key is read.
    for (a, b) in [
        (
            "SELECT id FROM o WHERE status = 'new' AND at > 1990 ORDER BY id",
            "SELECT id FROM o IGNORE INDEX (k_at) WHERE status = 'new' AND at > 1990 ORDER BY id",
        ),
        (
            "SELECT id FROM o WHERE status = 'new' AND cust = 42 ORDER BY id",
            "SELECT id FROM o IGNORE INDEX (k_cust) WHERE status = 'new' AND cust = 42 ORDER BY id",
        ),
    ] {
        assert_eq!(q(&mut s, a), q(&mut s, b), "{a}");
    }
    // UPDATE and DELETE choose alike (and change the right rows).
    exec(
        &mut s,
        "UPDATE o SET at = at + 10000 WHERE status = 'new' AND cust = 3",
    );
    assert_eq!(
        q(&mut s, "SELECT COUNT(*) FROM o WHERE at >= 10000")[0][0],
        tierdb_engine::Value::Int(5)
    );
    exec(&mut s, "DELETE FROM o WHERE status = 'new' AND at >= 10000");
    assert_eq!(
        q(&mut s, "SELECT COUNT(*) FROM o")[0][0],
        tierdb_engine::Value::Int(1995)
    );
}
