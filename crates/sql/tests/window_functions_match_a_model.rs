//! Window functions over random tables agree with a model computed here from the rows
//! themselves: ROW_NUMBER / RANK / DENSE_RANK / NTILE / LAG / LEAD per partition, running
//! sums with the default frame (peers included), `ROWS` frames with offsets on both sides,
//! whole-partition MIN / MAX / COUNT, and FIRST_VALUE / LAST_VALUE — also over a WHERE, in
//! a grouped query, and with the query's own ORDER BY / LIMIT after the windows.

mod common;

use common::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// (id, g, v): g a small partition key, v a value with ties and NULLs.
type Row = (i64, i64, Option<i64>);

fn table() -> impl Strategy<Value = Vec<Row>> {
    proptest::collection::vec((0i64..4, proptest::option::weighted(0.85, 0i64..6)), 1..40).prop_map(
        |v| {
            v.into_iter()
                .enumerate()
                .map(|(i, (g, x))| (i as i64 + 1, g, x))
                .collect()
        },
    )
}

fn load(rows: &[Row]) -> (common::Env, tierdb_sql::Session) {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, v INT)",
    );
    let values: Vec<String> = rows
        .iter()
        .map(|(id, g, v)| {
            format!(
                "({id}, {g}, {})",
                v.map_or("NULL".to_string(), |x| x.to_string())
            )
        })
        .collect();
    exec(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(",")),
    );
    (env, s)
}

/// The partitions: g → rows sorted by (v with NULL first, id).
fn partitions(rows: &[Row]) -> BTreeMap<i64, Vec<Row>> {
    let mut out: BTreeMap<i64, Vec<Row>> = BTreeMap::new();
    for r in rows {
        out.entry(r.1).or_default().push(*r);
    }
    for p in out.values_mut() {
        p.sort_by_key(|r| (r.2, r.0));
    }
    out
}

fn opt(v: &tierdb_engine::Value) -> Option<i64> {
    match v {
        tierdb_engine::Value::Null => None,
        other => Some(int(other)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ranking_and_offsets_match_the_model(rows in table()) {
        let (_env, mut s) = load(&rows);
        let got = q(&mut s, "SELECT id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v, id), \
            RANK() OVER (PARTITION BY g ORDER BY v), DENSE_RANK() OVER (PARTITION BY g ORDER BY v), \
            NTILE(3) OVER (PARTITION BY g ORDER BY v, id), LAG(v) OVER (PARTITION BY g ORDER BY v, id), \
            LEAD(id, 2) OVER (PARTITION BY g ORDER BY v, id) FROM t ORDER BY id");
        let mut want: BTreeMap<i64, Vec<Option<i64>>> = BTreeMap::new();
        for p in partitions(&rows).values() {
            let m = p.len();
            for (k, r) in p.iter().enumerate() {
                let rank = p.iter().take_while(|x| x.2 < r.2).count() + 1;
                let mut distinct: Vec<Option<i64>> = p[..=k].iter().map(|x| x.2).collect();
                distinct.dedup();
                let (q3, r3) = (m / 3, m % 3);
                let tile = if k < r3 * (q3 + 1) { k / (q3 + 1) + 1 } else { (k - r3 * (q3 + 1)) / q3.max(1) + r3 + 1 };
                want.insert(r.0, vec![
                    Some(k as i64 + 1),
                    Some(rank as i64),
                    Some(distinct.len() as i64),
                    Some(tile as i64),
                    if k > 0 { p[k - 1].2 } else { None },
                    p.get(k + 2).map(|x| x.0),
                ]);
            }
        }
        prop_assert_eq!(got.len(), rows.len());
        for r in &got {
            let id = int(&r[0]);
            let have: Vec<Option<i64>> = r[1..].iter().map(opt).collect();
            prop_assert_eq!(&have, &want[&id], "row {}", id);
        }
    }

    #[test]
    fn frames_match_the_model(rows in table()) {
        let (_env, mut s) = load(&rows);
        let got = q(&mut s, "SELECT id, SUM(v) OVER (PARTITION BY g ORDER BY v), \
            SUM(v) OVER (PARTITION BY g ORDER BY v, id ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING), \
            COUNT(v) OVER (PARTITION BY g ORDER BY v, id ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING), \
            MIN(v) OVER (PARTITION BY g), MAX(v) OVER (PARTITION BY g), COUNT(*) OVER (PARTITION BY g), \
            FIRST_VALUE(id) OVER (PARTITION BY g ORDER BY v, id), \
            LAST_VALUE(id) OVER (PARTITION BY g ORDER BY v) FROM t ORDER BY id");
        let sum = |xs: &[Row]| -> Option<i64> {
            let vals: Vec<i64> = xs.iter().filter_map(|x| x.2).collect();
            (!vals.is_empty()).then(|| vals.iter().sum())
        };
        let mut want: BTreeMap<i64, Vec<Option<i64>>> = BTreeMap::new();
        for p in partitions(&rows).values() {
            let m = p.len();
            for (k, r) in p.iter().enumerate() {
                // Default frame with ORDER BY v: up to the last peer of this row.
                let peers_end = p.iter().rposition(|x| x.2 == r.2).unwrap() + 1;
                let lo = k.saturating_sub(2);
                let hi = (k + 2).min(m);
                let after = if k + 1 < m { &p[k + 1..] } else { &[][..] };
                want.insert(r.0, vec![
                    sum(&p[..peers_end]),
                    sum(&p[lo..hi]),
                    Some(after.iter().filter(|x| x.2.is_some()).count() as i64),
                    p.iter().filter_map(|x| x.2).min(),
                    p.iter().filter_map(|x| x.2).max(),
                    Some(m as i64),
                    Some(p[0].0),
                    Some(p[peers_end - 1].0),
                ]);
            }
        }
        for r in &got {
            let id = int(&r[0]);
            let have: Vec<Option<i64>> = r[1..].iter().map(opt).collect();
            prop_assert_eq!(&have, &want[&id], "row {}", id);
        }
    }

    #[test]
    fn windows_see_the_filtered_and_grouped_rows_and_order_by_limit_come_after(rows in table()) {
        let (_env, mut s) = load(&rows);
        // Over WHERE: numbering only the rows that pass.
        let got = q(&mut s, "SELECT id, ROW_NUMBER() OVER (ORDER BY id) FROM t WHERE v >= 2 ORDER BY id");
        let kept: Vec<i64> = rows.iter().filter(|r| r.2.is_some_and(|v| v >= 2)).map(|r| r.0).collect();
        let have: Vec<(i64, i64)> = got.iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
        let want: Vec<(i64, i64)> = kept.iter().enumerate().map(|(i, id)| (*id, i as i64 + 1)).collect();
        prop_assert_eq!(have, want);

        // Over groups: the share of each group's row count in the whole.
        let got = q(&mut s, "SELECT g, COUNT(*), SUM(COUNT(*)) OVER (), RANK() OVER (ORDER BY COUNT(*) DESC) FROM t GROUP BY g ORDER BY g");
        let parts = partitions(&rows);
        prop_assert_eq!(got.len(), parts.len());
        for r in &got {
            let g = int(&r[0]);
            let n = parts[&g].len() as i64;
            prop_assert_eq!(int(&r[1]), n);
            prop_assert_eq!(int(&r[2]), rows.len() as i64);
            let bigger = parts.values().filter(|p| p.len() as i64 > n).count() as i64;
            prop_assert_eq!(int(&r[3]), bigger + 1);
        }

        // The query's ORDER BY / LIMIT apply to the numbered rows, not before numbering.
        let got = q(&mut s, "SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM t ORDER BY rn DESC LIMIT 2");
        let n = rows.len() as i64;
        let have: Vec<(i64, i64)> = got.iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
        let want: Vec<(i64, i64)> = (0..n.min(2)).map(|i| (n - i, n - i)).collect();
        prop_assert_eq!(have, want);
    }
}

#[test]
fn window_functions_outside_the_select_list_and_order_by_are_refused() {
    let (_env, mut s) = load(&[(1, 1, Some(1)), (2, 1, Some(2))]);
    for (sql, code) in [
        ("SELECT id FROM t WHERE ROW_NUMBER() OVER () > 1", 4015),
        ("SELECT g FROM t GROUP BY g HAVING RANK() OVER () = 1", 4015),
        ("SELECT g FROM t GROUP BY ROW_NUMBER() OVER ()", 4015),
        ("SELECT SUM(ROW_NUMBER() OVER ()) FROM t", 4074),
        ("SELECT NTILE(0) OVER () FROM t", 4024),
        ("SELECT ROW_NUMBER() OVER w FROM t", 4009),
        (
            "SELECT ROW_NUMBER() OVER w FROM t WINDOW w AS (), w AS ()",
            4010,
        ),
        (
            "SELECT SUM(v) OVER (ORDER BY v RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t",
            1235,
        ),
        ("SELECT MEDIAN(v) OVER () FROM t", 1235),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
    // ... and named windows, also extended by a call, work.
    let got = q(
        &mut s,
        "SELECT id, SUM(v) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW), RANK() OVER w FROM t WINDOW w AS (ORDER BY v DESC) ORDER BY id",
    );
    let have: Vec<Vec<i64>> = got.iter().map(|r| r.iter().map(int).collect()).collect();
    assert_eq!(have, vec![vec![1, 3, 2], vec![2, 2, 1]]);
}
