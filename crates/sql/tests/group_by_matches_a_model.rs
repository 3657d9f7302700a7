//! GROUP BY over many groups (found by hash past 64 of them) returns the groups a model
//! computes, in key order: integer keys, BIGINT UNSIGNED keys above 2⁶³, text keys under a
//! case-insensitive collation (`'Apple'` and `'apple '` one group), two-column keys, a key
//! that turns into doubles after hashing started (the groups go back into key order), and
//! WITH ROLLUP.

mod common;

use common::*;
use std::collections::BTreeMap;
use tierdb_engine::Value;

struct Row {
    g: i64,
    u: u64,
    s: String,
    v: i64,
}

fn rows() -> Vec<Row> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let words = ["apple", "Apple", "APPLE ", "pear", "Pear", "plum", "kiwi"];
    (0..3000)
        .map(|_| {
            let g = next(300) as i64;
            let w = words[next(words.len() as u64) as usize];
            Row {
                g,
                u: u64::MAX - (g as u64 % 100),
                s: format!("{w}{}", next(40)),
                v: next(1000) as i64,
            }
        })
        .collect()
}

fn setup() -> (Env, tierdb_sql::Session, Vec<Row>) {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, u BIGINT UNSIGNED NOT NULL, \
         s VARCHAR(20) NOT NULL, v INT NOT NULL)",
    );
    let rs = rows();
    let vals: Vec<String> = rs
        .iter()
        .enumerate()
        .map(|(i, r)| format!("({i}, {}, {}, '{}', {})", r.g, r.u, r.s, r.v))
        .collect();
    for chunk in vals.chunks(500) {
        exec(&mut s, &format!("INSERT INTO t VALUES {}", chunk.join(",")));
    }
    (env, s, rs)
}

fn as_u64(v: &Value) -> u64 {
    match v {
        Value::UInt(u) => *u,
        Value::Int(i) => *i as u64,
        Value::Bytes(b) => String::from_utf8_lossy(b).parse().expect("number"),
        other => panic!("{other:?}"),
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// The case-insensitive, trailing-space-blind group of a text.
fn ci(s: &str) -> String {
    s.trim_end_matches(' ').to_lowercase()
}

#[test]
fn many_groups_match_the_model_in_key_order() {
    let (_env, mut s, rs) = setup();

    // Integer keys: counts and sums, in key order.
    let mut m: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for r in &rs {
        let e = m.entry(r.g).or_default();
        e.0 += 1;
        e.1 += r.v;
    }
    let got: Vec<(i64, i64, i64)> = q(&mut s, "SELECT g, COUNT(*), SUM(v) FROM t GROUP BY g")
        .iter()
        .map(|r| (int(&r[0]), int(&r[1]), int(&r[2])))
        .collect();
    let want: Vec<(i64, i64, i64)> = m.iter().map(|(g, (c, v))| (*g, *c, *v)).collect();
    assert!(want.len() > 64, "enough groups to hash");
    assert_eq!(got, want);

    // Unsigned keys above i64::MAX.
    let mut mu: BTreeMap<u64, i64> = BTreeMap::new();
    for r in &rs {
        *mu.entry(r.u).or_default() += 1;
    }
    let got: Vec<(u64, i64)> = q(&mut s, "SELECT u, COUNT(*) FROM t GROUP BY u")
        .iter()
        .map(|r| (as_u64(&r[0]), int(&r[1])))
        .collect();
    assert_eq!(got, mu.into_iter().collect::<Vec<_>>());

    // Case-insensitive text: one group per folded value, in folded order.
    let mut ms: BTreeMap<String, i64> = BTreeMap::new();
    for r in &rs {
        *ms.entry(ci(&r.s)).or_default() += 1;
    }
    let got: Vec<(String, i64)> = q(&mut s, "SELECT s, COUNT(*) FROM t GROUP BY s")
        .iter()
        .map(|r| (ci(&as_text(&r[0])), int(&r[1])))
        .collect();
    assert!(ms.len() > 64, "enough text groups to hash");
    assert_eq!(got, ms.into_iter().collect::<Vec<_>>());

    // Two-column keys.
    let mut m2: BTreeMap<(i64, String), i64> = BTreeMap::new();
    for r in &rs {
        *m2.entry((r.g % 7, ci(&r.s))).or_default() += r.v;
    }
    let got: Vec<((i64, String), i64)> =
        q(&mut s, "SELECT g % 7, s, SUM(v) FROM t GROUP BY g % 7, s")
            .iter()
            .map(|r| ((int(&r[0]), ci(&as_text(&r[1]))), int(&r[2])))
            .collect();
    assert_eq!(got, m2.into_iter().collect::<Vec<_>>());

    // Keys that are integers below 200 and doubles from there: the doubles come after
    // hashing started, and the groups go back into key order.
    let key = |g: i64| if g < 200 { g as f64 } else { g as f64 + 0.5 };
    let mut md: Vec<(f64, i64)> = Vec::new();
    for g in m.keys() {
        md.push((key(*g), m[g].0));
    }
    let got: Vec<(f64, i64)> = q(
        &mut s,
        "SELECT IF(g < 200, g, g + 0.5) AS k, COUNT(*) FROM t GROUP BY k",
    )
    .iter()
    .map(|r| {
        let k = match &r[0] {
            Value::Int(i) => *i as f64,
            Value::Double(d) => *d,
            Value::Bytes(b) => String::from_utf8_lossy(b).parse().expect("number"),
            other => panic!("{other:?}"),
        };
        (k, int(&r[1]))
    })
    .collect();
    assert_eq!(got, md);

    // WITH ROLLUP keeps the groups in order and ends with the grand total.
    let got = q(&mut s, "SELECT g, COUNT(*) FROM t GROUP BY g WITH ROLLUP");
    assert_eq!(got.len(), m.len() + 1);
    assert_eq!(got.last().map(|r| r[0].clone()), Some(Value::Null));
    assert_eq!(int(&got.last().expect("total")[1]), rs.len() as i64);
    let keys: Vec<i64> = got[..m.len()].iter().map(|r| int(&r[0])).collect();
    assert_eq!(keys, m.keys().copied().collect::<Vec<_>>());
}
