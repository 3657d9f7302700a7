//! TIME and TIME(3) columns (each with a key) hold random durations, negative ones and ones
//! past 99 hours among them, whose text order is not their time order. Random comparisons
//! (`=`, `<>`, `<`, `<=`, `>`, `>=`, BETWEEN, IN) against literals written the ways users
//! write times must select exactly the rows a model comparing microseconds selects — through
//! the key, with the keys ignored, and prepared with the literal as a parameter — and ORDER
//! BY, GROUP BY, MIN / MAX and `t + 0` must follow time order.

mod common;

use common::*;
use tierdb_engine::Value;
use tierdb_sql::Session;

const S: i64 = 1_000_000;
const H: i64 = 3600 * S;
const MAX: i64 = 838 * H + 59 * 60 * S + 59 * S + 999_999;

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Cut toward zero to a multiple of `unit`, as a column of that precision stores it.
fn cut(us: i64, unit: i64) -> i64 {
    us / unit * unit
}

/// Canonical text with `digits` fraction digits.
fn text(us: i64, digits: usize) -> String {
    let a = us.abs();
    let secs = a / S;
    let mut t = format!(
        "{}{:02}:{:02}:{:02}",
        if us < 0 && cut(a, 10i64.pow(6 - digits as u32)) != 0 {
            "-"
        } else {
            ""
        },
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    if digits > 0 {
        t.push_str(&format!(".{:06}", a % S)[..digits + 1]);
    }
    t
}

/// A literal naming about `us`, and the microseconds it names exactly.
fn literal(rng: &mut Rng, us: i64) -> (String, i64) {
    let a = us.abs();
    let sign = if us < 0 { "-" } else { "" };
    let secs = a / S;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let neg = |x: i64| if us < 0 { -x } else { x };
    match rng.next(6) {
        0 | 1 => {
            let k = rng.next(7) as usize;
            let exact = neg(cut(a, 10i64.pow(6 - k as u32)));
            (format!("'{}'", text(exact, k)), exact)
        }
        2 => (format!("'{sign}{h}:{m}:{s}'"), neg(cut(a, S))),
        3 => (format!("'{sign}{h:02}:{m:02}'"), neg(cut(a, 60 * S))),
        4 if h < 24 * 30 => (
            format!("'{sign}{} {:02}:{m:02}:{s:02}'", h / 24, h % 24),
            neg(cut(a, S)),
        ),
        _ => (format!("{sign}{h}{m:02}{s:02}"), neg(cut(a, S))),
    }
}

fn durations(rng: &mut Rng, n: usize) -> Vec<i64> {
    (0..n)
        .map(|_| match rng.next(4) {
            // Around zero, both signs.
            0 => rng.next(7200 * S as u64) as i64 - 3600 * S,
            // Past 99 hours.
            1 => 99 * H + rng.next(700 * H as u64) as i64,
            // Anywhere in range.
            2 => rng.next(2 * MAX as u64) as i64 - MAX,
            // Whole seconds of a day.
            _ => rng.next(86_400) as i64 * S,
        })
        .collect()
}

#[test]
fn comparisons_with_literals_select_what_microseconds_select() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a TIME, b TIME(3), KEY ka (a), KEY kb (b))",
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let rows: Vec<(i64, i64)> = durations(&mut rng, 300)
        .into_iter()
        .enumerate()
        .map(|(i, us)| (i as i64, us))
        .collect();
    for chunk in rows.chunks(50) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|(id, us)| format!("({id}, '{0}', '{0}')", text(*us, 6)))
            .collect();
        exec(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    let stored = |col: &str, us: i64| match col {
        "a" => cut(us, S),
        _ => cut(us, 1_000),
    };
    for (id, us) in rows.iter().take(40) {
        let got = q(&mut s, &format!("SELECT a, b FROM t WHERE id = {id}"));
        assert_eq!(
            got[0],
            [
                Value::Bytes(text(*us, 0).into_bytes()),
                Value::Bytes(text(*us, 3).into_bytes())
            ],
            "stored {us}"
        );
    }
    let ops = ["=", "<>", "<", "<=", ">", ">="];
    for case in 0..400 {
        let col = ["a", "b"][rng.next(2) as usize];
        let pick = rows[rng.next(rows.len() as u64) as usize].1;
        let near = match rng.next(3) {
            0 => pick,
            1 => (pick + rng.next(2 * S as u64) as i64 - S).clamp(-MAX, MAX),
            _ => durations(&mut rng, 1)[0],
        };
        let (lit, at) = literal(&mut rng, near);
        let form = rng.next(8);
        let (cond, model): (String, Box<dyn Fn(i64) -> bool>) = match form {
            0..=5 => {
                let op = ops[form as usize];
                (
                    format!("{col} {op} {lit}"),
                    Box::new(move |v: i64| match op {
                        "=" => v == at,
                        "<>" => v != at,
                        "<" => v < at,
                        "<=" => v <= at,
                        ">" => v > at,
                        _ => v >= at,
                    }),
                )
            }
            6 => {
                let later = (near + rng.next(200 * H as u64) as i64).min(MAX);
                let (lit2, at2) = literal(&mut rng, later);
                (
                    format!("{col} BETWEEN {lit} AND {lit2}"),
                    Box::new(move |v: i64| at <= v && v <= at2),
                )
            }
            _ => {
                let other = rows[rng.next(rows.len() as u64) as usize].1;
                let (lit2, at2) = literal(&mut rng, other);
                (
                    format!("{col} IN ({lit}, {lit2})"),
                    Box::new(move |v: i64| v == at || v == at2),
                )
            }
        };
        let want: Vec<i64> = rows
            .iter()
            .filter(|(_, us)| model(stored(col, *us)))
            .map(|(id, _)| *id)
            .collect();
        for hint in ["", " IGNORE INDEX (ka, kb)"] {
            let sql = format!("SELECT id FROM t{hint} WHERE {cond} ORDER BY id");
            let got: Vec<i64> = q(&mut s, &sql).iter().map(|r| int(&r[0])).collect();
            assert_eq!(got, want, "case {case}: {sql}");
        }
        if form <= 5 {
            let op = ops[form as usize];
            let sql = format!("SELECT id FROM t WHERE {col} {op} ? ORDER BY id");
            let param = match lit.strip_prefix('\'') {
                Some(t) => Value::Bytes(t.trim_end_matches('\'').as_bytes().to_vec()),
                None => Value::Int(lit.parse().expect("number")),
            };
            let st = s.prepare(&sql).expect("prepare").statement_id;
            let got: Vec<i64> = match s.execute(st, &[param]).expect("execute") {
                tierdb_sql::QueryResult::Rows { rows, .. } => {
                    rows.iter().map(|r| int(&r[0])).collect()
                }
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "case {case}: {sql} with {lit}");
        }
    }
}

#[test]
fn order_group_min_max_and_numbers_follow_time_order() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a TIME, b TIME(3), KEY ka (a))",
    );
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut rows: Vec<(i64, i64)> = durations(&mut rng, 120)
        .into_iter()
        .enumerate()
        .map(|(i, us)| (i as i64, cut(us, S)))
        .collect();
    // Repeats, so that groups hold several rows.
    for i in 0..30 {
        rows.push((1000 + i, rows[i as usize * 3].1));
    }
    let vals: Vec<String> = rows
        .iter()
        .map(|(id, us)| format!("({id}, '{0}', '{0}')", text(*us, 0)))
        .collect();
    exec(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));

    let mut by_time = rows.clone();
    by_time.sort_by_key(|&(id, us)| (us, id));
    for hint in ["", " IGNORE INDEX (ka)"] {
        let got: Vec<i64> = q(&mut s, &format!("SELECT id FROM t{hint} ORDER BY a, id"))
            .iter()
            .map(|r| int(&r[0]))
            .collect();
        assert_eq!(
            got,
            by_time.iter().map(|r| r.0).collect::<Vec<_>>(),
            "{hint}"
        );
        let got: Vec<i64> = q(
            &mut s,
            &format!("SELECT id FROM t{hint} ORDER BY b DESC, id"),
        )
        .iter()
        .map(|r| int(&r[0]))
        .collect();
        let mut want = rows.clone();
        want.sort_by_key(|&(id, us)| (-us, id));
        assert_eq!(got, want.iter().map(|r| r.0).collect::<Vec<_>>(), "{hint}");
    }

    // The key (microseconds) is read in order for ORDER BY ... LIMIT and for a range, with
    // the same rows as above.
    let plan = |s: &mut Session, sql: &str| -> Vec<String> {
        q(s, &format!("EXPLAIN {sql}"))[0]
            .iter()
            .map(text_of)
            .collect()
    };
    let p = plan(&mut s, "SELECT id FROM t ORDER BY a LIMIT 5");
    assert_eq!((p[3].as_str(), p[5].as_str()), ("index", "ka"), "{p:?}");
    assert!(!p[9].contains("filesort"), "{p:?}");
    let got: Vec<i64> = q(&mut s, "SELECT id FROM t ORDER BY a LIMIT 5")
        .iter()
        .map(|r| int(&r[0]))
        .collect();
    assert_eq!(got, by_time.iter().take(5).map(|r| r.0).collect::<Vec<_>>());
    let got: Vec<i64> = q(&mut s, "SELECT id FROM t ORDER BY a DESC LIMIT 5")
        .iter()
        .map(|r| int(&r[0]))
        .collect();
    let mut desc = by_time.clone();
    desc.sort_by_key(|&(id, us)| (std::cmp::Reverse(us), std::cmp::Reverse(id)));
    assert_eq!(got, desc.iter().take(5).map(|r| r.0).collect::<Vec<_>>());
    let p = plan(
        &mut s,
        "SELECT id FROM t WHERE a BETWEEN '-01:00' AND '100:00:00'",
    );
    assert_eq!((p[3].as_str(), p[5].as_str()), ("range", "ka"), "{p:?}");

    // GROUP BY: one group per distinct time, in time order, with its count.
    let mut groups: Vec<(i64, i64)> = Vec::new();
    for &(_, us) in &by_time {
        match groups.last_mut() {
            Some((t, n)) if *t == us => *n += 1,
            _ => groups.push((us, 1)),
        }
    }
    let got: Vec<(String, i64)> = q(&mut s, "SELECT a, COUNT(*) FROM t GROUP BY a")
        .iter()
        .map(|r| (text_of(&r[0]), int(&r[1])))
        .collect();
    let want: Vec<(String, i64)> = groups.iter().map(|&(us, n)| (text(us, 0), n)).collect();
    assert_eq!(got, want);

    let lo = by_time.first().expect("rows").1;
    let hi = by_time.last().expect("rows").1;
    let got = q(&mut s, "SELECT MIN(a), MAX(a), MIN(b), MAX(b) FROM t");
    assert_eq!(
        got[0],
        [
            Value::Bytes(text(lo, 0).into_bytes()),
            Value::Bytes(text(hi, 0).into_bytes()),
            Value::Bytes(text(lo, 3).into_bytes()),
            Value::Bytes(text(hi, 3).into_bytes()),
        ]
    );

    // t + 0 is [-]HHMMSS.
    for (id, us) in rows.iter().take(30) {
        let secs = us.abs() / S;
        let n = secs / 3600 * 10_000 + secs / 60 % 60 * 100 + secs % 60;
        let n = if *us < 0 { -n } else { n };
        let got = q(&mut s, &format!("SELECT a + 0 FROM t WHERE id = {id}"));
        assert_eq!(int(&got[0][0]), n, "{}", text(*us, 0));
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn out_of_range_and_bad_times_are_refused_or_clipped_as_mariadb_does() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, a TIME)");
    for bad in ["'839:00:00'", "'-839:00:00'", "'abc'", "'10:60:00'"] {
        let e = err(&mut s, &format!("INSERT INTO t VALUES (1, {bad})"));
        assert_eq!(e.code, 1292, "{bad}: {e:?}");
    }
    exec(&mut s, "SET sql_mode = ''");
    exec(
        &mut s,
        "INSERT INTO t VALUES (1, '839:00:00'), (2, '-900:00:00'), (3, 'abc')",
    );
    let got: Vec<String> = q(&mut s, "SELECT a FROM t ORDER BY id")
        .iter()
        .map(|r| text_of(&r[0]))
        .collect();
    assert_eq!(got, ["838:59:59", "-838:59:59", "00:00:00"]);
    // Arithmetic past any range: clipped or NULL, never an overflow.
    exec(&mut s, "SET sql_mode = DEFAULT");
    exec(&mut s, "CREATE INDEX ka ON t (a)");
    let got = q(
        &mut s,
        "SELECT TIMEDIFF('2562047788:00:00', '-01:00:00'), ADDTIME('2562047788:00:00', '01:00:00'), \
         ADDTIME('2020-01-01 00:00:00', '2562047788:00:00'), SUBTIME('-2562047788:00:00', '2562047788:00:00')",
    );
    assert_eq!(
        got[0].iter().map(text_of).collect::<Vec<_>>(),
        ["838:59:59", "838:59:59", "Null", "-838:59:59"]
    );
    // A number that is no time reads as 00:00:00 (row 3); through the key, from a subquery
    // too, without overflowing. (IN (SELECT ...) compares without reading times: no row.)
    let ids =
        |s: &mut Session, sql: &str| -> Vec<i64> { q(s, sql).iter().map(|r| int(&r[0])).collect() };
    assert_eq!(
        ids(
            &mut s,
            "SELECT id FROM t WHERE a = -9223372036854775808 ORDER BY id"
        ),
        [3]
    );
    assert_eq!(
        ids(
            &mut s,
            "SELECT id FROM t WHERE a IN (SELECT -9223372036854775808) ORDER BY id"
        ),
        Vec::<i64>::new()
    );
}
