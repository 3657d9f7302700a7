//! ORDER BY / LIMIT / DISTINCT / GROUP BY / aggregates checked against a Rust model of a
//! small table.

mod common;
use common::*;
use tierdb_engine::Value;

struct R {
    id: i64,
    g: i64,
    v: Option<i64>,
    s: String,
}

fn model() -> Vec<R> {
    (1..=40)
        .map(|i| R {
            id: i,
            g: i % 4,
            v: if i % 7 == 0 {
                None
            } else {
                Some((i * 13) % 11)
            },
            s: format!("s{:02}", (i * 5) % 9),
        })
        .collect()
}

fn setup() -> (Env, tierdb_sql::Session) {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE m (id INT PRIMARY KEY, g INT NOT NULL, v INT, s VARCHAR(10) NOT NULL)",
    );
    exec(&mut s, "CREATE INDEX mg ON m (g)");
    let vals: Vec<String> = model()
        .iter()
        .map(|r| {
            format!(
                "({}, {}, {}, '{}')",
                r.id,
                r.g,
                r.v.map(|x| x.to_string()).unwrap_or("NULL".into()),
                r.s
            )
        })
        .collect();
    exec(&mut s, &format!("INSERT INTO m VALUES {}", vals.join(",")));
    (e, s)
}

fn ints(r: &[Vec<Value>], col: usize) -> Vec<i64> {
    r.iter().map(|x| int(&x[col])).collect()
}

#[test]
fn order_limit_distinct() {
    let (_e, mut s) = setup();
    let m = model();
    // ORDER BY v DESC, id LIMIT 5 OFFSET 3
    let mut exp: Vec<&R> = m.iter().collect();
    exp.sort_by(|a, b| b.v.cmp(&a.v).then(a.id.cmp(&b.id)));
    let want: Vec<i64> = exp.iter().skip(3).take(5).map(|r| r.id).collect();
    assert_eq!(
        ints(
            &q(
                &mut s,
                "SELECT id FROM m ORDER BY v DESC, id LIMIT 5 OFFSET 3"
            ),
            0
        ),
        want
    );
    assert_eq!(
        ints(
            &q(&mut s, "SELECT id FROM m ORDER BY v DESC, id LIMIT 3, 5"),
            0
        ),
        want
    );
    // NULLs sort first ascending
    let r = q(&mut s, "SELECT v FROM m ORDER BY v LIMIT 1");
    assert_eq!(r[0][0], Value::Null);
    // ORDER BY a column not selected, by alias, by position
    let mut exp: Vec<&R> = m.iter().collect();
    exp.sort_by(|a, b| a.s.cmp(&b.s).then(b.id.cmp(&a.id)));
    let want: Vec<i64> = exp.iter().map(|r| r.id).collect();
    assert_eq!(
        ints(&q(&mut s, "SELECT id FROM m ORDER BY s, id DESC"), 0),
        want
    );
    assert_eq!(
        ints(
            &q(&mut s, "SELECT id AS x, s AS y FROM m ORDER BY y, x DESC"),
            0
        ),
        want
    );
    assert_eq!(
        ints(&q(&mut s, "SELECT id, s FROM m ORDER BY 2, 1 DESC"), 0),
        want
    );
    // DISTINCT with and without ORDER BY
    let mut ds: Vec<String> = m.iter().map(|r| r.s.clone()).collect();
    ds.sort();
    ds.dedup();
    let got: Vec<String> = q(&mut s, "SELECT DISTINCT s FROM m ORDER BY s")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(got, ds);
    let mut got: Vec<String> = q(&mut s, "SELECT DISTINCT s FROM m")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    got.sort();
    assert_eq!(got, ds);
    assert_eq!(q(&mut s, "SELECT DISTINCT s FROM m LIMIT 2").len(), 2);
    // LIMIT without ORDER BY stops early in key order
    assert_eq!(
        ints(&q(&mut s, "SELECT id FROM m LIMIT 3"), 0),
        vec![1, 2, 3]
    );
    assert_eq!(
        ints(
            &q(&mut s, "SELECT id FROM m WHERE g = 1 ORDER BY id LIMIT 3"),
            0
        ),
        vec![1, 5, 9]
    );
    assert!(q(&mut s, "SELECT id FROM m LIMIT 0").is_empty());
}

#[test]
fn aggregates_and_group_by() {
    let (_e, mut s) = setup();
    let m = model();
    let vs: Vec<i64> = m.iter().filter_map(|r| r.v).collect();
    let r = q(
        &mut s,
        "SELECT COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), MIN(s), MAX(id) FROM m",
    );
    assert_eq!(int(&r[0][0]), 40);
    assert_eq!(int(&r[0][1]), vs.len() as i64);
    assert_eq!(int(&r[0][2]), vs.iter().sum::<i64>());
    assert_eq!(r[0][3], Value::Int(*vs.iter().min().unwrap()));
    assert_eq!(r[0][4], Value::Int(*vs.iter().max().unwrap()));
    assert_eq!(text(&r[0][5]), m.iter().map(|r| r.s.clone()).min().unwrap());
    assert_eq!(r[0][6], Value::Int(40));
    let avg = vs.iter().sum::<i64>() as f64 / vs.len() as f64;
    let r = q(&mut s, "SELECT AVG(v) FROM m");
    assert_eq!(text(&r[0][0]), format!("{avg:.4}"));
    // empty input: COUNT 0, SUM NULL
    let r = q(
        &mut s,
        "SELECT COUNT(*), SUM(v), MAX(v) FROM m WHERE id > 1000",
    );
    assert_eq!(r, vec![vec![Value::Int(0), Value::Null, Value::Null]]);
    // GROUP BY with HAVING and ORDER BY an aggregate
    let mut want: Vec<(i64, i64, i64)> = (0..4)
        .map(|g| {
            let rows: Vec<&R> = m.iter().filter(|r| r.g == g).collect();
            (g, rows.len() as i64, rows.iter().filter_map(|r| r.v).sum())
        })
        .filter(|x| x.2 > 40)
        .collect();
    want.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    let r = q(&mut s, "SELECT g, COUNT(*) AS n, SUM(v) AS t FROM m GROUP BY g HAVING t > 40 ORDER BY SUM(v) DESC, g");
    let got: Vec<(i64, i64, i64)> = r
        .iter()
        .map(|x| (int(&x[0]), int(&x[1]), int(&x[2])))
        .collect();
    assert_eq!(got, want);
    // COUNT(DISTINCT), GROUP BY position, expression over aggregates
    let mut dv = vs.clone();
    dv.sort();
    dv.dedup();
    assert_eq!(
        int(&q(&mut s, "SELECT COUNT(DISTINCT v) FROM m")[0][0]),
        dv.len() as i64
    );
    let r = q(&mut s, "SELECT g, MAX(id) - MIN(id) FROM m GROUP BY 1");
    assert_eq!(r.len(), 4);
    assert_eq!(int(&r[0][0]), 0);
    // aggregates over a derived table
    let r = q(
        &mut s,
        "SELECT COUNT(*), MAX(id) FROM (SELECT * FROM m WHERE g = 2 ORDER BY id DESC LIMIT 3) x",
    );
    assert_eq!(int(&r[0][0]), 3);
    assert_eq!(int(&r[0][1]), 38);
    // expressions and functions
    let r = q(&mut s, "SELECT CONCAT(s, '-', id), id * 2 + 1, id / 4, id DIV 3, -id, COALESCE(v, -1) FROM m WHERE id = 7");
    assert_eq!(
        r[0],
        vec![
            Value::Bytes(b"s08-7".to_vec()),
            Value::Int(15),
            // Typed DECIMAL(4) (the protocol prints 1.7500, as MariaDB), kept a double.
            Value::Double(1.75),
            Value::Int(2),
            Value::Int(-7),
            Value::Int(-1)
        ]
    );
}
