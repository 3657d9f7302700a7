//! Joins against a model: two tables of a few hundred random rows (NULLs included) joined
//! INNER and LEFT, through a primary-key lookup, a secondary-index lookup and with no usable
//! key (the inner table read once), with WHERE on either side, compared with a nested loop
//! written here over the same rows; the plans are the expected ones (EXPLAIN), a prepared
//! join with a parameter gives the same rows, and errors name the problem (1052 ambiguous
//! column, 1054 for an ON clause naming a table joined later, 1235 for a RIGHT JOIN after
//! other joins and for a locking read of a join). A RIGHT JOIN first in FROM matches the model
//! of the LEFT JOIN with the tables swapped; USING / NATURAL joins match the model of the
//! equality of their same-named columns. Anti-joins (LEFT JOIN ... WHERE inner.c IS NULL)
//! stop at the first match when `c` is NOT NULL (EXPLAIN's "Not exists") and match the model
//! either way; a join under LIMIT returns part of the model's rows.

mod common;

use common::*;
use tierdb_engine::Value;

type A = (i64, Option<i64>);
type B = (i64, Option<i64>, i64);

fn setup() -> (Env, Vec<A>, Vec<B>) {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE a (id INT PRIMARY KEY, x INT)");
    exec(
        &mut s,
        "CREATE TABLE b (id INT PRIMARY KEY, a_id INT, y INT NOT NULL, KEY a_id (a_id))",
    );
    let mut seed = 0x9e3779b97f4a7c15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut av = Vec::new();
    for id in 0..200 {
        let x = (next(8) > 0).then(|| next(30) as i64);
        av.push((id, x));
    }
    let mut bv = Vec::new();
    for id in 0..400 {
        // Some rows point at no row of `a` (ids 200..260) or at nothing.
        let a_id = (next(10) > 0).then(|| next(260) as i64);
        bv.push((id, a_id, next(30) as i64));
    }
    let lit = |v: Option<i64>| v.map_or("NULL".to_string(), |x| x.to_string());
    for chunk in av.chunks(50) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|(id, x)| format!("({id}, {})", lit(*x)))
            .collect();
        exec(&mut s, &format!("INSERT INTO a VALUES {}", vals.join(",")));
    }
    for chunk in bv.chunks(50) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|(id, a_id, y)| format!("({id}, {}, {y})", lit(*a_id)))
            .collect();
        exec(&mut s, &format!("INSERT INTO b VALUES {}", vals.join(",")));
    }
    (env, av, bv)
}

fn opt(v: &Value) -> Option<i64> {
    match v {
        Value::Null => None,
        other => Some(int(other)),
    }
}

/// Rows as (a.id, b.id or None), sorted.
fn pairs(rows: Vec<Vec<Value>>) -> Vec<(i64, Option<i64>)> {
    let mut v: Vec<(i64, Option<i64>)> = rows.iter().map(|r| (int(&r[0]), opt(&r[1]))).collect();
    v.sort();
    v
}

/// Nested loop: for each a, the b rows with `on(a, b)`; LEFT keeps unmatched a with None.
fn model(
    av: &[A],
    bv: &[B],
    left: bool,
    on: impl Fn(&A, &B) -> bool,
    keep: impl Fn(&A, Option<&B>) -> bool,
) -> Vec<(i64, Option<i64>)> {
    let mut out = Vec::new();
    for a in av {
        let matched: Vec<&B> = bv.iter().filter(|b| on(a, b)).collect();
        if matched.is_empty() && left && keep(a, None) {
            out.push((a.0, None));
        }
        for b in matched {
            if keep(a, Some(b)) {
                out.push((a.0, Some(b.0)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn joins_return_what_a_nested_loop_returns() {
    let (env, av, bv) = setup();
    let mut s = env.session(2);
    let by_a_id = |a: &A, b: &B| b.1 == Some(a.0);
    let by_x = |a: &A, b: &B| a.1 == Some(b.2);
    let all = |_: &A, _: Option<&B>| true;

    let got = q(&mut s, "SELECT a.id, b.id FROM a JOIN b ON b.a_id = a.id");
    assert_eq!(pairs(got), model(&av, &bv, false, by_a_id, all));
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id",
    );
    assert_eq!(pairs(got), model(&av, &bv, true, by_a_id, all));
    // Reversed roles: b outer, a looked up by primary key.
    let got = q(&mut s, "SELECT a.id, b.id FROM b JOIN a ON a.id = b.a_id");
    assert_eq!(pairs(got), model(&av, &bv, false, by_a_id, all));
    // No usable key: x = y.
    let got = q(&mut s, "SELECT a.id, b.id FROM a JOIN b ON b.y = a.x");
    assert_eq!(pairs(got), model(&av, &bv, false, by_x, all));
    let got = q(&mut s, "SELECT a.id, b.id FROM a LEFT JOIN b ON b.y = a.x");
    assert_eq!(pairs(got), model(&av, &bv, true, by_x, all));
    // RIGHT JOIN: the right table preserved, the left one looked up (and `*` lists the
    // left table's columns first).
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM b RIGHT JOIN a ON b.a_id = a.id",
    );
    assert_eq!(pairs(got), model(&av, &bv, true, by_a_id, all));
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM b RIGHT OUTER JOIN a ON b.y = a.x",
    );
    assert_eq!(pairs(got), model(&av, &bv, true, by_x, all));
    let star = q(
        &mut s,
        "SELECT * FROM b RIGHT JOIN a ON b.a_id = a.id LIMIT 1",
    );
    let b_width = q(&mut s, "SELECT * FROM b LIMIT 1")[0].len();
    let a_width = q(&mut s, "SELECT * FROM a LIMIT 1")[0].len();
    assert_eq!(star[0].len(), a_width + b_width);
    // USING / NATURAL: the same-named columns (here `id`) equal; a bare `id` is the left
    // one (the preserved side's for a RIGHT JOIN), `*` lists it once.
    let by_id = |a: &A, b: &B| a.0 == b.0;
    let got = q(&mut s, "SELECT id, b.id FROM a JOIN b USING (id)");
    assert_eq!(pairs(got), model(&av, &bv, false, by_id, all));
    let got = q(&mut s, "SELECT a.id, b.id FROM a NATURAL LEFT JOIN b");
    assert_eq!(pairs(got), model(&av, &bv, true, by_id, all));
    let got = q(&mut s, "SELECT id, b.id FROM b NATURAL RIGHT JOIN a");
    assert_eq!(pairs(got), model(&av, &bv, true, by_id, all));
    let star = q(&mut s, "SELECT * FROM a JOIN b USING (id) LIMIT 1");
    assert_eq!(star[0].len(), a_width + b_width - 1);
    // WHERE on both sides; for LEFT JOIN it filters after the NULL rows are made.
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM a, b WHERE b.a_id = a.id AND a.x < 10 AND b.y >= 5",
    );
    let w = |a: &A, b: Option<&B>| a.1.is_some_and(|x| x < 10) && b.is_some_and(|b| b.2 >= 5);
    assert_eq!(pairs(got), model(&av, &bv, false, by_a_id, w));
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id AND b.y > 20 WHERE b.id IS NULL",
    );
    let on = |a: &A, b: &B| b.1 == Some(a.0) && b.2 > 20;
    let none = |_: &A, b: Option<&B>| b.is_none();
    assert_eq!(pairs(got), model(&av, &bv, true, on, none));
    // Anti-joins: WHERE keeps only the NULL-extended rows. On a NOT NULL column of the
    // inner table (its primary key, `y`) the read stops at the first match ("Not exists");
    // on a nullable one (`a_id`) it does not; with no usable key the rows read once are
    // walked to the first match.
    for sql in [
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.id IS NULL",
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.y IS NULL",
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.a_id IS NULL",
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.y IS NULL AND a.x > 3",
    ] {
        let w = |a: &A, b: Option<&B>| {
            b.is_none() && (!sql.contains("a.x > 3") || a.1.is_some_and(|x| x > 3))
        };
        assert_eq!(
            pairs(q(&mut s, sql)),
            model(&av, &bv, true, by_a_id, w),
            "{sql}"
        );
    }
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.y = a.x WHERE b.id IS NULL",
    );
    assert_eq!(pairs(got), model(&av, &bv, true, by_x, none));
    // The NOT NULL column of an earlier table, or an IS NOT NULL, is no anti-join.
    let got = q(
        &mut s,
        "SELECT a.id, b.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.id IS NOT NULL",
    );
    let some = |_: &A, b: Option<&B>| b.is_some();
    assert_eq!(pairs(got), model(&av, &bv, true, by_a_id, some));
    // A LIMIT stops the join early: the rows are a part of the join's.
    let got = pairs(q(
        &mut s,
        "SELECT a.id, b.id FROM a JOIN b ON b.a_id = a.id LIMIT 7",
    ));
    let whole = model(&av, &bv, false, by_a_id, all);
    assert_eq!(got.len(), 7);
    assert!(got.iter().all(|p| whole.contains(p)), "{got:?}");
    // Aggregates over a join.
    let got = q(
        &mut s,
        "SELECT COUNT(*), COUNT(b.id), SUM(b.y) FROM a LEFT JOIN b ON b.a_id = a.id",
    );
    let m = model(&av, &bv, true, by_a_id, all);
    let sum: i64 = m
        .iter()
        .filter_map(|(_, b)| b.map(|b| bv[b as usize].2))
        .sum();
    assert_eq!(int(&got[0][0]), m.len() as i64);
    assert_eq!(
        int(&got[0][1]),
        m.iter().filter(|p| p.1.is_some()).count() as i64
    );
    assert_eq!(int(&got[0][2]), sum);
    // A prepared join with a parameter.
    let st = s
        .prepare("SELECT a.id, b.id FROM a JOIN b ON b.a_id = a.id WHERE a.x = ?")
        .expect("prepare")
        .statement_id;
    for x in [0i64, 7, 29] {
        let got = match s.execute(st, &[Value::Int(x)]).expect("execute") {
            tierdb_sql::QueryResult::Rows { rows, .. } => rows,
            other => panic!("{other:?}"),
        };
        let w = move |a: &A, _: Option<&B>| a.1 == Some(x);
        assert_eq!(pairs(got), model(&av, &bv, false, by_a_id, w), "x = {x}");
    }
}

#[test]
fn join_plans_and_errors() {
    let (env, _, _) = setup();
    let mut s = env.session(2);
    let plan = q(
        &mut s,
        "EXPLAIN SELECT * FROM a JOIN b ON b.a_id = a.id JOIN a AS a2 ON a2.id = b.a_id",
    );
    let kinds: Vec<(String, String)> = plan
        .iter()
        .map(|r| (text(&r[3]), r[5].clone()))
        .map(|(t, k)| {
            (
                t,
                if k == Value::Null {
                    "-".into()
                } else {
                    text(&k)
                },
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("ALL".to_string(), "-".to_string()),
            ("ref".into(), "a_id".into()),
            ("eq_ref".into(), "PRIMARY".into())
        ]
    );
    let extra = |s: &mut tierdb_sql::Session, sql: &str| -> Vec<Value> {
        q(s, sql).into_iter().map(|r| r[9].clone()).collect()
    };
    assert_eq!(
        extra(
            &mut s,
            "EXPLAIN SELECT a.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.id IS NULL"
        ),
        [
            Value::Null,
            Value::Bytes(b"Using where; Not exists".to_vec())
        ]
    );
    assert_eq!(
        extra(
            &mut s,
            "EXPLAIN SELECT a.id FROM a LEFT JOIN b ON b.a_id = a.id WHERE b.a_id IS NULL"
        ),
        [Value::Null, Value::Bytes(b"Using where".to_vec())]
    );
    assert_eq!(
        err(&mut s, "SELECT id FROM a JOIN b ON b.a_id = a.id").code,
        1052
    );
    let e = err(
        &mut s,
        "SELECT 1 FROM a JOIN b ON b.a_id = c.id JOIN a c ON c.id = 1",
    );
    assert_eq!(e.code, 1054, "{e:?}");
    assert_eq!(
        err(
            &mut s,
            "SELECT 1 FROM a JOIN b ON b.a_id = a.id RIGHT JOIN a AS c ON c.id = a.id"
        )
        .code,
        1235
    );
    assert_eq!(
        err(&mut s, "SELECT 1 FROM a JOIN b ON b.a_id = a.id FOR UPDATE").code,
        1235
    );
    assert_eq!(err(&mut s, "SELECT 1 FROM a JOIN a ON 1 = 1").code, 1066);
}
