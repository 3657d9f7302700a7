//! Random WHERE predicates over a small table return exactly the rows a Rust model of
//! MySQL's three-valued logic selects — whichever access path (point, range, index, full
//! scan) the planner picks. Also run as prepared statements with the literals as `?`.
//!
//! ORDER BY ... LIMIT / OFFSET in both directions (served by a key read forwards or
//! backwards, or by a sort) returns the model's sort keys, and MIN / MAX (read from the
//! ends of the keys when nothing filters) the model's extremes, also beside uncommitted
//! changes of another session.

mod common;
use common::*;
use proptest::prelude::*;
use tierdb_engine::Value;

#[derive(Clone, Debug)]
struct Row {
    id: i64,
    a: i64,
    b: Option<i64>,
    c: Option<String>,
}

fn table() -> Vec<Row> {
    (0..30)
        .map(|i| Row {
            id: i * 3 - 20,
            a: (i * 7) % 10 - 3,
            b: if i % 4 == 0 {
                None
            } else {
                Some((i * 11) % 13 - 6)
            },
            c: if i % 5 == 0 {
                None
            } else {
                Some(["ab", "abc", "b", "ba", "", "zz"][(i % 6) as usize].to_string())
            },
        })
        .collect()
}

#[derive(Clone, Copy, Debug)]
enum IntCol {
    Id,
    A,
    B,
}

#[derive(Clone, Debug)]
enum P {
    Cmp(IntCol, &'static str, i64),
    Between(IntCol, i64, i64, bool),
    In(IntCol, Vec<i64>, bool),
    IsNull(IntCol, bool),
    CIsNull(bool),
    Like(String, bool),
    CEq(String),
    Not(Box<P>),
    And(Box<P>, Box<P>),
    Or(Box<P>, Box<P>),
}

fn col_name(c: IntCol) -> &'static str {
    match c {
        IntCol::Id => "id",
        IntCol::A => "a",
        IntCol::B => "b",
    }
}

fn col_val(r: &Row, c: IntCol) -> Option<i64> {
    match c {
        IntCol::Id => Some(r.id),
        IntCol::A => Some(r.a),
        IntCol::B => r.b,
    }
}

/// Renders SQL; with `params`, integer literals become `?` and are pushed in text order.
fn sql(p: &P, params: &mut Option<Vec<Value>>) -> String {
    let mut lit = |v: i64| -> String {
        match params {
            Some(ps) => {
                ps.push(Value::Int(v));
                "?".into()
            }
            None => v.to_string(),
        }
    };
    match p {
        P::Cmp(c, op, v) => format!("{} {op} {}", col_name(*c), lit(*v)),
        P::Between(c, lo, hi, neg) => {
            let l = lit(*lo);
            let h = lit(*hi);
            format!(
                "{} {}BETWEEN {l} AND {h}",
                col_name(*c),
                if *neg { "NOT " } else { "" }
            )
        }
        P::In(c, vs, neg) => {
            let items: Vec<String> = vs.iter().map(|v| lit(*v)).collect();
            format!(
                "{} {}IN ({})",
                col_name(*c),
                if *neg { "NOT " } else { "" },
                items.join(", ")
            )
        }
        P::IsNull(c, neg) => format!("{} IS {}NULL", col_name(*c), if *neg { "NOT " } else { "" }),
        P::CIsNull(neg) => format!("c IS {}NULL", if *neg { "NOT " } else { "" }),
        P::Like(pat, neg) => format!("c {}LIKE '{pat}'", if *neg { "NOT " } else { "" }),
        P::CEq(v) => format!("c = '{v}'"),
        P::Not(x) => format!("NOT ({})", sql(x, params)),
        P::And(x, y) => {
            let l = sql(x, params);
            let r = sql(y, params);
            format!("({l}) AND ({r})")
        }
        P::Or(x, y) => {
            let l = sql(x, params);
            let r = sql(y, params);
            format!("({l}) OR ({r})")
        }
    }
}

fn like(t: &str, p: &str) -> bool {
    let (t, p): (Vec<char>, Vec<char>) = (t.chars().collect(), p.chars().collect());
    fn go(t: &[char], p: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some('%') => (0..=t.len()).any(|i| go(&t[i..], &p[1..])),
            Some('_') => !t.is_empty() && go(&t[1..], &p[1..]),
            Some(c) => t.first() == Some(c) && go(&t[1..], &p[1..]),
        }
    }
    go(&t, &p)
}

fn eval(p: &P, r: &Row) -> Option<bool> {
    match p {
        P::Cmp(c, op, v) => {
            let x = col_val(r, *c)?;
            Some(match *op {
                "=" => x == *v,
                "<>" => x != *v,
                "<" => x < *v,
                "<=" => x <= *v,
                ">" => x > *v,
                _ => x >= *v,
            })
        }
        P::Between(c, lo, hi, neg) => col_val(r, *c).map(|x| (x >= *lo && x <= *hi) != *neg),
        P::In(c, vs, neg) => col_val(r, *c).map(|x| vs.contains(&x) != *neg),
        P::IsNull(c, neg) => Some(col_val(r, *c).is_none() != *neg),
        P::CIsNull(neg) => Some(r.c.is_none() != *neg),
        P::Like(pat, neg) => r.c.as_ref().map(|c| like(c, pat) != *neg),
        P::CEq(v) => r.c.as_ref().map(|c| c == v),
        P::Not(x) => eval(x, r).map(|b| !b),
        P::And(x, y) => match (eval(x, r), eval(y, r)) {
            (Some(false), _) | (_, Some(false)) => Some(false),
            (Some(true), Some(true)) => Some(true),
            _ => None,
        },
        P::Or(x, y) => match (eval(x, r), eval(y, r)) {
            (Some(true), _) | (_, Some(true)) => Some(true),
            (Some(false), Some(false)) => Some(false),
            _ => None,
        },
    }
}

fn leaf() -> impl Strategy<Value = P> {
    let col = prop_oneof![Just(IntCol::Id), Just(IntCol::A), Just(IntCol::B)];
    let v = -25i64..70;
    prop_oneof![
        (
            col.clone(),
            proptest::sample::select(vec!["=", "<>", "<", "<=", ">", ">="]),
            v.clone()
        )
            .prop_map(|(c, o, v)| P::Cmp(c, o, v)),
        (col.clone(), v.clone(), v.clone(), any::<bool>())
            .prop_map(|(c, l, h, n)| P::Between(c, l, h, n)),
        (
            col.clone(),
            proptest::collection::vec(v, 1..5),
            any::<bool>()
        )
            .prop_map(|(c, vs, n)| P::In(c, vs, n)),
        (col, any::<bool>()).prop_map(|(c, n)| P::IsNull(c, n)),
        any::<bool>().prop_map(P::CIsNull),
        ("[ab%_z]{0,4}", any::<bool>()).prop_map(|(p, n)| P::Like(p, n)),
        "[abz]{0,3}".prop_map(P::CEq),
    ]
}

fn pred() -> impl Strategy<Value = P> {
    leaf().prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|x| P::Not(Box::new(x))),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| P::And(Box::new(x), Box::new(y))),
            (inner.clone(), inner).prop_map(|(x, y)| P::Or(Box::new(x), Box::new(y))),
        ]
    })
}

/// `INSERT INTO m VALUES ...` of `rows`.
fn insert_sql(rows: &[Row]) -> String {
    let vals: Vec<String> = rows
        .iter()
        .map(|r| {
            let b = r.b.map(|x| x.to_string()).unwrap_or("NULL".into());
            let c =
                r.c.as_ref()
                    .map(|x| format!("'{x}'"))
                    .unwrap_or("NULL".into());
            format!("({}, {}, {b}, {c})", r.id, r.a)
        })
        .collect();
    format!("INSERT INTO m VALUES {}", vals.join(","))
}

fn session() -> tierdb_sql::Session {
    static ENV: std::sync::OnceLock<Env> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    // The table is made inside the initialisation: tests running in parallel wait for it.
    let e = ENV.get_or_init(|| {
        let e = env();
        let mut s = e.session(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        exec(
            &mut s,
            "CREATE TABLE m (id INT PRIMARY KEY, a INT NOT NULL, b INT, c VARCHAR(5))",
        );
        exec(&mut s, "CREATE INDEX ma ON m (a)");
        exec(&mut s, "CREATE INDEX mb ON m (b)");
        exec(&mut s, "CREATE INDEX mc ON m (c)");
        exec(&mut s, "CREATE INDEX mba ON m (b, a)");
        exec(&mut s, &insert_sql(&table()));
        e
    });
    e.session(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn where_matches_model(p in pred()) {
        let mut s = session();
        let mut want: Vec<i64> = table().iter().filter(|r| eval(&p, r) == Some(true)).map(|r| r.id).collect();
        want.sort();
        let text_sql = format!("SELECT id FROM m WHERE {} ORDER BY id", sql(&p, &mut None));
        let got: Vec<i64> = q(&mut s, &text_sql).iter().map(|r| int(&r[0])).collect();
        prop_assert_eq!(&got, &want, "{}", text_sql);
        let mut params = Some(Vec::new());
        let prep_sql = format!("SELECT id FROM m WHERE {}", sql(&p, &mut params));
        let st = s.prepare(&prep_sql).unwrap();
        let mut got: Vec<i64> = rows(s.execute(st.statement_id, &params.unwrap_or_default()).unwrap()).iter().map(|r| int(&r[0])).collect();
        got.sort();
        prop_assert_eq!(&got, &want, "{}", prep_sql);
        let cnt = q(&mut s, &format!("SELECT COUNT(*) FROM m WHERE {}", sql(&p, &mut None)));
        prop_assert_eq!(int(&cnt[0][0]), want.len() as i64);
    }
}

/// The ORDER BY keys the test sorts by: (SQL column, model value).
#[derive(Clone, Copy, Debug)]
enum OrderCol {
    Int(IntCol),
    C,
}

fn order_val(r: &Row, c: OrderCol) -> Option<String> {
    match c {
        // Zero-padded after an offset: text order is number order.
        OrderCol::Int(c) => col_val(r, c).map(|v| format!("{:06}", v + 1000)),
        OrderCol::C => r.c.clone(),
    }
}

fn order_name(c: OrderCol) -> &'static str {
    match c {
        OrderCol::Int(c) => col_name(c),
        OrderCol::C => "c",
    }
}

fn order_keys() -> impl Strategy<Value = Vec<OrderCol>> {
    let one = prop_oneof![
        Just(OrderCol::Int(IntCol::Id)),
        Just(OrderCol::Int(IntCol::A)),
        Just(OrderCol::Int(IntCol::B)),
        Just(OrderCol::C),
    ];
    prop_oneof![
        one.prop_map(|c| vec![c]),
        Just(vec![OrderCol::Int(IntCol::B), OrderCol::Int(IntCol::A)]),
        Just(vec![OrderCol::Int(IntCol::A), OrderCol::Int(IntCol::Id)]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn ordered_limits_match_model(
        p in proptest::option::of(pred()),
        keys in order_keys(),
        desc in any::<bool>(),
        limit in 0usize..40,
        offset in proptest::option::of(0usize..10),
    ) {
        let mut s = session();
        let mut want: Vec<Vec<Option<String>>> = table()
            .iter()
            .filter(|r| p.as_ref().is_none_or(|p| eval(p, r) == Some(true)))
            .map(|r| keys.iter().map(|&k| order_val(r, k)).collect())
            .collect();
        // NULL first going up, last going down (Option's order), as MySQL sorts.
        want.sort();
        if desc {
            want.reverse();
        }
        let want: Vec<_> = want.into_iter().skip(offset.unwrap_or(0)).take(limit).collect();
        let dir = if desc { " DESC" } else { "" };
        let cols: Vec<&str> = keys.iter().map(|&k| order_name(k)).collect();
        let order: Vec<String> = cols.iter().map(|c| format!("{c}{dir}")).collect();
        let sql = format!(
            "SELECT {} FROM m{} ORDER BY {} LIMIT {limit}{}",
            cols.join(", "),
            p.as_ref().map(|p| format!(" WHERE {}", sql(p, &mut None))).unwrap_or_default(),
            order.join(", "),
            offset.map(|o| format!(" OFFSET {o}")).unwrap_or_default(),
        );
        let got: Vec<Vec<Option<String>>> = q(&mut s, &sql)
            .iter()
            .map(|r| {
                r.iter()
                    .zip(&keys)
                    .map(|(v, k)| match (v, k) {
                        (Value::Null, _) => None,
                        (v, OrderCol::Int(_)) => Some(format!("{:06}", int(v) + 1000)),
                        (v, OrderCol::C) => Some(text(v)),
                    })
                    .collect()
            })
            .collect();
        prop_assert_eq!(&got, &want, "{}", sql);
    }
}

/// The model's MIN and MAX of every column (NULLs ignored), in the SELECT's order.
fn model_extremes(rows: &[Row]) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for c in [
        OrderCol::Int(IntCol::Id),
        OrderCol::Int(IntCol::A),
        OrderCol::Int(IntCol::B),
        OrderCol::C,
    ] {
        let vals: Vec<String> = rows.iter().filter_map(|r| order_val(r, c)).collect();
        out.push(vals.iter().min().cloned());
        out.push(vals.iter().max().cloned());
    }
    out
}

const EXTREMES: &str =
    "SELECT MIN(id), MAX(id), MIN(a), MAX(a), MIN(b), MAX(b), MIN(c), MAX(c) FROM m";

fn got_extremes(s: &mut tierdb_sql::Session, sql: &str) -> Vec<Option<String>> {
    q(s, sql)[0]
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Null => None,
            v if i < 6 => Some(format!("{:06}", int(v) + 1000)),
            v => Some(text(v)),
        })
        .collect()
}

#[test]
fn min_and_max_read_from_the_key_ends_see_only_committed_rows() {
    let e = env();
    let mut w = e.session(1);
    let mut r = e.session(2);
    exec(
        &mut w,
        "CREATE TABLE m (id INT PRIMARY KEY, a INT NOT NULL, b INT, c VARCHAR(5))",
    );
    exec(&mut w, "CREATE INDEX ma ON m (a)");
    exec(&mut w, "CREATE INDEX mba ON m (b, a)");
    exec(&mut w, "CREATE INDEX mc ON m (c)");
    // Empty: every extreme is NULL.
    assert_eq!(got_extremes(&mut r, EXTREMES), vec![None; 8]);
    let mut rows = table();
    // One row per statement: the writes go through the single-row path too.
    for x in &rows {
        exec(&mut w, &insert_sql(std::slice::from_ref(x)));
    }
    assert_eq!(got_extremes(&mut r, EXTREMES), model_extremes(&rows));
    // The same through the plain aggregate path (a WHERE that keeps every row).
    let filtered = format!("{EXTREMES} WHERE id > -1000");
    assert_eq!(got_extremes(&mut r, &filtered), model_extremes(&rows));
    // Uncommitted: the writer removes the extremes and adds new ones; the reader still
    // sees the committed ones, the writer its own.
    exec(&mut w, "BEGIN");
    exec(
        &mut w,
        "DELETE FROM m WHERE id = (SELECT * FROM (SELECT MAX(id) FROM m) x)",
    );
    exec(&mut w, "UPDATE m SET b = NULL");
    exec(&mut w, "INSERT INTO m VALUES (-500, -77, NULL, 'zzzzz')");
    assert_eq!(got_extremes(&mut r, EXTREMES), model_extremes(&rows));
    let max_id = rows.iter().map(|x| x.id).max().unwrap();
    rows.retain(|x| x.id != max_id);
    for x in &mut rows {
        x.b = None;
    }
    rows.push(Row {
        id: -500,
        a: -77,
        b: None,
        c: Some("zzzzz".into()),
    });
    assert_eq!(got_extremes(&mut w, EXTREMES), model_extremes(&rows));
    exec(&mut w, "COMMIT");
    assert_eq!(got_extremes(&mut r, EXTREMES), model_extremes(&rows));
    assert_eq!(got_extremes(&mut r, &filtered), model_extremes(&rows));
}
