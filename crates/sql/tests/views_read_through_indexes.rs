//! A view over one table is read through the table's indexes: the outer WHERE's conditions
//! on its plain columns (`=`, `IN`, `BETWEEN`, ranges, IS NULL, also `?` parameters and
//! through a view over a view) reach the derived table's access path (EXPLAIN shows a key
//! lookup, not a scan), and every such query returns exactly what the same query on the
//! table returns — also for conditions that cannot be pushed (expressions, ORDER BY
//! views, grouped views), which are only filtered outside.

mod common;

use common::*;
use tierdb_engine::Value;

fn explain(s: &mut tierdb_sql::Session, sql: &str) -> Vec<Vec<String>> {
    q(s, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| r.iter().map(text).collect())
        .collect()
}

#[test]
fn point_and_range_reads_through_views_use_the_index_and_match_the_table() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, q INT, pad VARCHAR(20), KEY kq (q))",
    );
    for chunk in 0..4 {
        let values: Vec<String> = (chunk * 500..(chunk + 1) * 500)
            .map(|i| {
                let q = if i % 97 == 0 {
                    "NULL".to_string()
                } else {
                    (i % 50).to_string()
                };
                format!("({i}, {q}, 'p{}')", i % 7)
            })
            .collect();
        exec(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    exec(&mut s, "CREATE VIEW v AS SELECT id, q, pad FROM t");
    exec(
        &mut s,
        "CREATE VIEW w AS SELECT id AS k, q, pad FROM v WHERE id >= 0",
    );
    exec(
        &mut s,
        "CREATE VIEW o AS SELECT id, q, pad FROM t ORDER BY q DESC",
    );
    exec(
        &mut s,
        "CREATE VIEW g AS SELECT q, COUNT(*) AS n FROM t GROUP BY q",
    );

    // The derived table's line of EXPLAIN: a key, not a scan of all rows.
    for (sql, key) in [
        ("SELECT q FROM v WHERE id = 1234", "PRIMARY"),
        ("SELECT q FROM w WHERE k = 1234", "PRIMARY"),
        ("SELECT id FROM v WHERE q = 7", "kq"),
        ("SELECT id FROM v WHERE id BETWEEN 10 AND 20", "PRIMARY"),
    ] {
        let plan = explain(&mut s, sql);
        let derived = plan.last().expect("plan rows");
        assert_eq!(derived[1], "DERIVED", "{sql}: {plan:?}");
        assert_eq!(derived[5], key, "{sql}: {plan:?}");
        assert_ne!(derived[3], "ALL", "{sql}: {plan:?}");
    }

    // Same rows as the table, for pushable and unpushable conditions alike.
    let conditions = [
        "id = 1234",
        "1234 = id",
        "id IN (3, 99, 1999, 5000)",
        "id BETWEEN 100 AND 140 AND q > 30",
        "id < 30 OR id > 1990",
        "q IS NULL",
        "q IS NOT NULL AND id < 60",
        "q + 1 = 8 AND id < 400",
        "pad = 'p3' AND id >= 1980",
        "id <=> 42",
        "q = 7 AND pad LIKE 'p%'",
    ];
    for c in conditions {
        let base = q(
            &mut s,
            &format!("SELECT id, q, pad FROM t WHERE {c} ORDER BY id"),
        );
        let through = q(
            &mut s,
            &format!("SELECT id, q, pad FROM v WHERE {c} ORDER BY id"),
        );
        assert_eq!(through, base, "{c}");
        let renamed = c.replace("id", "k");
        let nested = q(
            &mut s,
            &format!("SELECT k, q, pad FROM w WHERE {renamed} ORDER BY k"),
        );
        assert_eq!(nested, base, "{c}");
        let ordered = q(
            &mut s,
            &format!("SELECT id, q, pad FROM o WHERE {c} ORDER BY id"),
        );
        assert_eq!(ordered, base, "{c}");
    }
    // A grouped view is not narrowed: its counts stay whole.
    assert_eq!(
        q(&mut s, "SELECT n FROM g WHERE q = 7"),
        q(&mut s, "SELECT COUNT(*) FROM t WHERE q = 7")
    );

    // Prepared statements: the parameters reach the view's table too.
    let id = s
        .prepare("SELECT k, q FROM w WHERE k = ? OR k IN (?, 5)")
        .expect("prepare")
        .statement_id;
    for (a, b) in [(1, 2), (1999, 7), (4000, 4001)] {
        let got = rows(
            s.execute(id, &[Value::Int(a), Value::Int(b)])
                .expect("execute"),
        );
        let want = q(
            &mut s,
            &format!("SELECT id, q FROM t WHERE id IN ({a}, {b}, 5) ORDER BY id"),
        );
        let mut got = got;
        got.sort_by_key(|r| int(&r[0]));
        assert_eq!(got, want, "{a} {b}");
    }
}
