//! A SELECT decodes only the columns it refers to (`SelectPlan::read_cols`). Every query here
//! runs twice: as written, and with a WHERE conjunct that is always true but names every
//! column (so the whole row is decoded). Both must return the same rows, for every access
//! path (point, primary range, secondary index, full scan), aggregates with and without
//! GROUP BY, HAVING, ORDER BY on columns not selected, DISTINCT, derived tables, prepared
//! statements, and rows changed by an open transaction (read from the undo version).

mod common;
use common::*;
use tierdb_engine::Value;
use tierdb_sql::Session;

/// Always true, but reads all five columns.
const ALL: &str = "(id IS NULL OR k IS NULL OR c IS NULL OR pad IS NULL OR n IS NULL OR 1 = 1)";

fn setup() -> Env {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(40) NOT NULL, \
         pad VARCHAR(40), n INT)",
    );
    exec(&mut s, "CREATE INDEX k_idx ON t (k)");
    let values: Vec<String> = (1..=300)
        .map(|i| {
            let pad = if i % 5 == 0 {
                "NULL".to_string()
            } else {
                format!("'pad-{i}'")
            };
            let n = if i % 3 == 0 {
                "NULL".to_string()
            } else {
                (i % 11).to_string()
            };
            format!("({i}, {}, 'c-{:03}', {pad}, {n})", i % 17, 300 - i)
        })
        .collect();
    exec(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(",")),
    );
    s.end();
    e
}

const QUERIES: &[&str] = &[
    "SELECT c FROM t WHERE id = 17 AND {W}",
    "SELECT pad, n FROM t WHERE id = 15 AND {W}",
    "SELECT c FROM t WHERE id BETWEEN 20 AND 80 AND {W}",
    "SELECT SUM(k) FROM t WHERE id BETWEEN 20 AND 80 AND {W}",
    "SELECT c FROM t WHERE id BETWEEN 20 AND 80 AND {W} ORDER BY c",
    "SELECT DISTINCT c FROM t WHERE id BETWEEN 20 AND 80 AND {W} ORDER BY c",
    "SELECT id FROM t WHERE k = 5 AND {W}",
    "SELECT c FROM t WHERE k BETWEEN 3 AND 4 AND {W}",
    "SELECT id, pad FROM t WHERE n = 4 AND {W} ORDER BY k, id",
    "SELECT k, COUNT(*), SUM(n), MAX(pad) FROM t WHERE {W} GROUP BY k",
    "SELECT n, COUNT(c) FROM t WHERE {W} GROUP BY n HAVING COUNT(*) > 20",
    "SELECT COUNT(*) FROM t WHERE {W}",
    "SELECT COUNT(pad), COUNT(n), AVG(k) FROM t WHERE {W}",
    "SELECT id FROM t WHERE {W} ORDER BY pad DESC, id LIMIT 7",
    "SELECT id, id + k, CONCAT(c, '-', c) FROM t WHERE id < 30 AND {W}",
    "SELECT c, c FROM t WHERE id IN (3, 9, 27) AND {W}",
    "SELECT UPPER(pad) FROM t WHERE pad LIKE 'pad-1%' AND {W}",
    "SELECT x.c FROM (SELECT c, n FROM t WHERE id > 250 AND {W}) AS x WHERE x.n IS NULL",
    "SELECT id FROM t WHERE {W} HAVING id > 290",
    "SELECT CASE WHEN n IS NULL THEN pad ELSE c END FROM t WHERE id BETWEEN 1 AND 20 AND {W}",
];

fn both(s: &mut Session, sql: &str) -> (Vec<Vec<Value>>, Vec<Vec<Value>>) {
    let few = q(s, &sql.replace("{W}", "1 = 1"));
    let all = q(s, &sql.replace("{W}", ALL));
    (few, all)
}

#[test]
fn every_query_shape_returns_the_same_rows_as_a_full_read() {
    let e = setup();
    let mut s = e.session(2);
    for sql in QUERIES {
        let (few, all) = both(&mut s, sql);
        assert!(!all.is_empty(), "{sql}: the check needs rows");
        assert_eq!(few, all, "{sql}");
    }
    // Spot checks against known values, so both variants being wrong the same way fails.
    assert_eq!(
        q(&mut s, "SELECT c FROM t WHERE id = 17"),
        vec![vec![Value::Bytes(b"c-283".to_vec())]]
    );
    assert_eq!(
        q(&mut s, "SELECT pad, n FROM t WHERE id = 15"),
        vec![vec![Value::Null, Value::Null]]
    );
    assert_eq!(
        int(&q(&mut s, "SELECT SUM(k) FROM t WHERE id BETWEEN 1 AND 17")[0][0]),
        136
    );
}

#[test]
fn prepared_and_in_transaction_reads_match_full_reads() {
    let e = setup();
    let mut w = e.session(3);
    let mut r = e.session(4);
    // An open transaction changes rows: the reader sees the old versions (undo), the writer
    // its own; both through partial decodes.
    exec(&mut w, "BEGIN");
    exec(
        &mut w,
        "UPDATE t SET c = 'changed', pad = NULL WHERE id BETWEEN 40 AND 60",
    );
    exec(&mut w, "DELETE FROM t WHERE id = 45");
    for sql in QUERIES {
        let (few, all) = both(&mut r, sql);
        assert_eq!(few, all, "reader: {sql}");
        let (few, all) = both(&mut w, sql);
        assert_eq!(few, all, "writer: {sql}");
    }
    assert_eq!(
        q(&mut w, "SELECT c FROM t WHERE id = 41"),
        vec![vec![Value::Bytes(b"changed".to_vec())]]
    );
    assert_eq!(
        q(&mut r, "SELECT c FROM t WHERE id = 41"),
        vec![vec![Value::Bytes(b"c-259".to_vec())]]
    );
    exec(&mut w, "COMMIT");

    // The same shapes as prepared statements, re-executed with new parameters.
    let few = r
        .prepare("SELECT c, n FROM t WHERE id BETWEEN ? AND ?")
        .expect("prepare")
        .statement_id;
    let all = r
        .prepare(&format!(
            "SELECT c, n FROM t WHERE id BETWEEN ? AND ? AND {ALL}"
        ))
        .expect("prepare")
        .statement_id;
    for (lo, hi) in [(1, 10), (40, 60), (290, 400)] {
        let p = [Value::Int(lo), Value::Int(hi)];
        let a = rows(r.execute(few, &p).expect("execute"));
        let b = rows(r.execute(all, &p).expect("execute"));
        assert!(!a.is_empty());
        assert_eq!(a, b, "prepared {lo}..{hi}");
    }
}
