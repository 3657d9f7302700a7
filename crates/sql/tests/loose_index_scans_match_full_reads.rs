//! Loose index scans (`SELECT DISTINCT c`, `COUNT / SUM / AVG (DISTINCT c)`, MIN / MAX of
//! `c`, `GROUP BY c` alone, on a column leading a key) return what reading every row returns
//! (the same statements with the keys ignored), for runs of one value from 1 row to
//! hundreds, NULLs, case variants under a case-insensitive collation, a key led by the
//! primary key's first column, and rows another transaction deleted or inserted without
//! committing (a reader does not see them; the writer sees its own). EXPLAIN says "Using
//! index for group-by" where a loose scan is used, and a locking read or a WHERE does not
//! use one.

mod common;

use common::*;
use tierdb_engine::Value;

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
    rows
}

/// The statements checked, each with `{h}` where the index hint goes.
const QUERIES: &[&str] = &[
    "SELECT DISTINCT a FROM t{h}",
    "SELECT DISTINCT a FROM t{h} ORDER BY a DESC",
    "SELECT DISTINCT a FROM t{h} ORDER BY a LIMIT 3",
    "SELECT DISTINCT a FROM t{h} ORDER BY a DESC LIMIT 3",
    "SELECT DISTINCT g FROM t{h} ORDER BY g DESC",
    "SELECT COUNT(DISTINCT a) FROM t{h}",
    "SELECT COUNT(DISTINCT a), SUM(DISTINCT a), AVG(DISTINCT a), MIN(a), MAX(a) FROM t{h}",
    "SELECT a FROM t{h} GROUP BY a",
    "SELECT a, MAX(a) FROM t{h} GROUP BY a HAVING a > 3",
    "SELECT DISTINCT name FROM t{h}",
    "SELECT COUNT(DISTINCT name) FROM t{h}",
    "SELECT DISTINCT g FROM t{h}",
    "SELECT COUNT(DISTINCT g), MAX(g) FROM t{h}",
    // Not loose (every row counts): they must still match.
    "SELECT a, COUNT(*) FROM t{h} GROUP BY a",
    "SELECT COUNT(a), SUM(a) FROM t{h}",
];

const IGNORE: &str = " IGNORE INDEX (PRIMARY, ka, kname)";

fn check_all(s: &mut tierdb_sql::Session, what: &str) {
    for sql in QUERIES {
        let loose = sql.replace("{h}", "");
        let full = sql.replace("{h}", IGNORE);
        let (a, b) = (q(s, &loose), q(s, &full));
        if loose.contains("ORDER BY") {
            assert_eq!(a, b, "{what}: {loose}");
        } else {
            assert_eq!(sorted(a), sorted(b), "{what}: {loose}");
        }
    }
}

#[test]
fn loose_scans_return_what_full_reads_return() {
    let env = env();
    let mut s = env.session(1);
    // (g, id) primary key: g leads it with many rows per value.
    exec(
        &mut s,
        "CREATE TABLE t (g INT NOT NULL, id INT NOT NULL, a INT, \
         name VARCHAR(20) COLLATE utf8mb4_general_ci, PRIMARY KEY (g, id), \
         KEY ka (a), KEY kname (name))",
    );
    let mut seed = 0x853c_49e6_748f_ea9bu64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let names = ["x", "X", "y", "Y ", "z", "Zz", "zz"];
    let mut vals = Vec::new();
    for id in 0..2000 {
        // Runs of every length: value v repeats about v*v times.
        let a = match next(20) {
            0 => "NULL".to_string(),
            _ => {
                let v = (next(400) as f64).sqrt() as i64;
                v.to_string()
            }
        };
        let name = names[next(names.len() as u64) as usize];
        vals.push(format!("({}, {id}, {a}, '{name}')", next(7)));
    }
    for chunk in vals.chunks(200) {
        exec(&mut s, &format!("INSERT INTO t VALUES {}", chunk.join(",")));
    }
    check_all(&mut s, "committed rows");

    // Another transaction deletes every row of a = 5 and adds a value 999 without
    // committing: this session still sees 5 and not 999; the writer sees its own changes.
    let mut w = env.session(2);
    exec(&mut w, "BEGIN");
    exec(&mut w, "DELETE FROM t WHERE a = 5");
    exec(&mut w, "INSERT INTO t VALUES (3, 5000, 999, 'new')");
    check_all(&mut s, "a reader beside an uncommitted writer");
    let seen: Vec<i64> = q(&mut s, "SELECT DISTINCT a FROM t ORDER BY a")
        .iter()
        .filter(|r| r[0] != Value::Null)
        .map(|r| int(&r[0]))
        .collect();
    assert!(seen.contains(&5) && !seen.contains(&999), "{seen:?}");
    check_all(&mut w, "the writer itself");
    let theirs: Vec<i64> = q(&mut w, "SELECT DISTINCT a FROM t ORDER BY a")
        .iter()
        .filter(|r| r[0] != Value::Null)
        .map(|r| int(&r[0]))
        .collect();
    assert!(!theirs.contains(&5) && theirs.contains(&999), "{theirs:?}");
    exec(&mut w, "COMMIT");
    check_all(&mut s, "after the commit");
}

#[test]
fn explain_shows_loose_scans_where_they_are_used() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (g INT NOT NULL, id INT NOT NULL, a INT, b INT, \
         PRIMARY KEY (g, id), KEY ka (a))",
    );
    exec(
        &mut s,
        "INSERT INTO t VALUES (1, 1, 1, 1), (1, 2, 1, 2), (2, 3, 2, 2)",
    );
    let extra = |s: &mut tierdb_sql::Session, sql: &str| -> (Value, Value) {
        let r = q(s, &format!("EXPLAIN {sql}"));
        (r[0][5].clone(), r[0][9].clone())
    };
    let loose = |key: &str| {
        (
            Value::Bytes(key.as_bytes().to_vec()),
            Value::Bytes(b"Using index for group-by".to_vec()),
        )
    };
    assert_eq!(extra(&mut s, "SELECT DISTINCT a FROM t"), loose("ka"));
    assert_eq!(
        extra(&mut s, "SELECT COUNT(DISTINCT a) FROM t"),
        loose("ka")
    );
    assert_eq!(
        extra(&mut s, "SELECT COUNT(DISTINCT g) FROM t"),
        loose("PRIMARY")
    );
    // Not loose: a WHERE, another column's aggregate, COUNT(*), a locking read, a hint.
    for sql in [
        "SELECT DISTINCT a FROM t WHERE b = 2",
        "SELECT COUNT(DISTINCT a), MAX(b) FROM t",
        "SELECT a, COUNT(*) FROM t GROUP BY a",
        "SELECT DISTINCT a FROM t FOR UPDATE",
        "SELECT DISTINCT a FROM t IGNORE INDEX (ka)",
        "SELECT DISTINCT b FROM t",
    ] {
        let (_, e) = extra(&mut s, sql);
        assert_ne!(
            e,
            Value::Bytes(b"Using index for group-by".to_vec()),
            "{sql}"
        );
    }
    // The locking read still returns every value.
    let locked = q(&mut s, "SELECT DISTINCT a FROM t ORDER BY a FOR UPDATE");
    assert_eq!(locked.len(), 2);
}
