//! DATE, DATETIME and DATETIME(3) columns (each with a key) hold random instants; random
//! comparisons (`=`, `<>`, `<`, `<=`, `>`, `>=`, BETWEEN, IN) against literals written the
//! ways applications write them — canonical text with 0 to 6 fraction digits, unpadded
//! fields, no seconds, a date alone, `YYYYMMDDHHMMSS` and `YYYYMMDD` numbers, text that is no
//! date — must select exactly the rows a model comparing the instants (in microseconds) selects,
//! through the key and with the keys ignored, and as prepared statements with the literal as
//! a parameter. Stored values keep the column's fraction digits (cut, not rounded).

mod common;

use common::*;
use tierdb_engine::Value;

/// Days from 1970-01-01 to y-m-d (proleptic Gregorian).
fn days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// (y, m, d, h, mi, s, micros) of microseconds since the epoch.
fn civil(us: i64) -> (i64, i64, i64, i64, i64, i64, i64) {
    let secs = us.div_euclid(1_000_000);
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let rem = secs.rem_euclid(86_400);
    (
        y,
        m,
        d,
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        us.rem_euclid(1_000_000),
    )
}

fn cut(us: i64, unit: i64) -> i64 {
    us - us.rem_euclid(unit)
}

const DAY: i64 = 86_400_000_000;

fn text(us: i64, digits: usize) -> String {
    let (y, m, d, h, mi, s, f) = civil(us);
    let mut t = format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    if digits > 0 {
        t.push_str(&format!(".{f:06}")[..digits + 1]);
    }
    t
}

struct Rng(u64);
impl Rng {
    fn next(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A literal naming about instant `us`, and the instant it names exactly (None: no date,
/// which compares as the zero date).
fn literal(rng: &mut Rng, us: i64) -> (String, Option<i64>) {
    let (y, m, d, h, mi, s, _) = civil(us);
    match rng.next(8) {
        0..=2 => {
            let k = rng.next(7) as usize;
            let unit = 10i64.pow(6 - k as u32);
            (format!("'{}'", text(us, k)), Some(cut(us, unit)))
        }
        3 => (
            format!("'{y}-{m}-{d} {h}:{mi}:{s}'"),
            Some(cut(us, 1_000_000)),
        ),
        4 => (
            format!("'{y:04}-{m:02}-{d:02} {h:02}:{mi:02}'"),
            Some(cut(us, 60_000_000)),
        ),
        5 => (format!("'{y:04}-{m:02}-{d:02}'"), Some(cut(us, DAY))),
        6 => (
            format!("{y:04}{m:02}{d:02}{h:02}{mi:02}{s:02}"),
            Some(cut(us, 1_000_000)),
        ),
        _ => match rng.next(3) {
            0 => (format!("{y:04}{m:02}{d:02}"), Some(cut(us, DAY))),
            1 => ("'not a date'".into(), None),
            _ => (format!("'{y:04}{m:02}{d:02}'"), Some(cut(us, DAY))),
        },
    }
}

/// The zero date: below every stored instant.
const ZERO: i64 = i64::MIN;

#[test]
fn comparisons_with_literals_select_what_instants_select() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, d DATE, dt DATETIME, dt3 DATETIME(3), \
         KEY kd (d), KEY kdt (dt), KEY kdt3 (dt3))",
    );
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let base = days(2020, 1, 1) * DAY;
    // Instants within a few days, many on the same day, second and millisecond.
    let mut rows: Vec<(i64, i64)> = Vec::new();
    for id in 0..300 {
        let us = match rng.next(3) {
            0 => base + rng.next(4) as i64 * DAY,
            1 => base + rng.next(4 * 86_400) as i64 * 1_000_000,
            _ => base + rng.next(4 * DAY as u64) as i64,
        };
        rows.push((id, us));
    }
    for chunk in rows.chunks(50) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|(id, us)| format!("({id}, '{0}', '{0}', '{0}')", text(*us, 6)))
            .collect();
        exec(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    // Stored: DATE cut to the day, DATETIME to the second, DATETIME(3) to the millisecond.
    let stored = |col: &str, us: i64| match col {
        "d" => cut(us, DAY),
        "dt" => cut(us, 1_000_000),
        _ => cut(us, 1_000),
    };
    let shown = q(&mut s, "SELECT d, dt, dt3 FROM t WHERE id = 0");
    let us0 = rows[0].1;
    assert_eq!(
        shown[0],
        [
            Value::Bytes(text(us0, 0).as_bytes()[..10].to_vec()),
            Value::Bytes(text(us0, 0).into_bytes()),
            Value::Bytes(text(us0, 3).into_bytes()),
        ]
    );
    let ops = ["=", "<>", "<", "<=", ">", ">="];
    for case in 0..400 {
        let col = ["d", "dt", "dt3"][rng.next(3) as usize];
        // Near a stored instant most of the time, so equalities hit.
        let pick = rows[rng.next(rows.len() as u64) as usize].1;
        let near = match rng.next(3) {
            0 => pick,
            1 => pick + rng.next(2_000_000) as i64 - 1_000_000,
            _ => base + rng.next(4 * DAY as u64) as i64,
        };
        let (lit, at) = literal(&mut rng, near);
        let at = at.unwrap_or(ZERO);
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
                let later = near + rng.next(DAY as u64) as i64;
                let (lit2, at2) = literal(&mut rng, later);
                let at2 = at2.unwrap_or(ZERO);
                (
                    format!("{col} BETWEEN {lit} AND {lit2}"),
                    Box::new(move |v: i64| at <= v && v <= at2),
                )
            }
            _ => {
                let other = rows[rng.next(rows.len() as u64) as usize].1;
                let (lit2, at2) = literal(&mut rng, other);
                let at2 = at2.unwrap_or(ZERO);
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
        for hint in ["", " IGNORE INDEX (kd, kdt, kdt3)"] {
            let sql = format!("SELECT id FROM t{hint} WHERE {cond} ORDER BY id");
            let got: Vec<i64> = q(&mut s, &sql).iter().map(|r| int(&r[0])).collect();
            assert_eq!(got, want, "case {case}: {sql}");
        }
        // The literal as a parameter (text, or the number), compared alike.
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
fn fractional_seconds_are_kept_cut_and_shown_at_the_column_precision() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE f (id INT PRIMARY KEY, a DATETIME(6), b TIMESTAMP(2) NULL, \
         c DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3))",
    );
    exec(
        &mut s,
        "INSERT INTO f (id, a, b) VALUES (1, '2020-01-01 10:00:00.1234567', '2020-01-01 10:00:00.999'), \
         (2, 20200101100000.5, '2020-01-01 10:00:00'), (3, '2020-01-01 10:00:00', NULL)",
    );
    let got: Vec<Vec<String>> = q(&mut s, "SELECT a, b, MICROSECOND(a) FROM f ORDER BY id")
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| match v {
                    Value::Null => "NULL".into(),
                    other => text_of(other),
                })
                .collect()
        })
        .collect();
    assert_eq!(
        got,
        [
            [
                "2020-01-01 10:00:00.123456",
                "2020-01-01 10:00:00.99",
                "123456"
            ],
            [
                "2020-01-01 10:00:00.500000",
                "2020-01-01 10:00:00.00",
                "500000"
            ],
            ["2020-01-01 10:00:00.000000", "NULL", "0"],
        ]
    );
    // The default and ON UPDATE take the clock at the column's precision.
    let c = text_of(&q(&mut s, "SELECT c FROM f WHERE id = 1")[0][0]);
    assert_eq!(c.len(), 23, "{c}");
    exec(&mut s, "UPDATE f SET a = a WHERE id = 1");
    exec(&mut s, "UPDATE f SET b = NULL WHERE id = 1");
    let c = text_of(&q(&mut s, "SELECT c FROM f WHERE id = 1")[0][0]);
    assert_eq!(c.len(), 23, "{c}");
    assert_eq!(text_of(&q(&mut s, "SELECT LENGTH(NOW(4))")[0][0]), "24");
    let create = text_of(&q(&mut s, "SHOW CREATE TABLE f")[0][1]);
    assert!(create.contains("`a` datetime(6) DEFAULT NULL"), "{create}");
    assert!(
        create.contains("`b` timestamp(2) NULL DEFAULT NULL"),
        "{create}"
    );
    assert!(
        create.contains(
            "`c` datetime(3) NOT NULL DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3)"
        ),
        "{create}"
    );
    assert_eq!(
        err(&mut s, "CREATE TABLE g (x DATETIME(7))").code,
        1426,
        "precision past 6"
    );
    assert_eq!(err(&mut s, "SELECT NOW(7)").code, 1426);
    // A key on a DATETIME(6) column orders and finds by the fraction.
    exec(&mut s, "CREATE INDEX ka ON f (a)");
    let ids: Vec<i64> = q(
        &mut s,
        "SELECT id FROM f WHERE a > '2020-01-01 10:00:00' ORDER BY a DESC",
    )
    .iter()
    .map(|r| int(&r[0]))
    .collect();
    assert_eq!(ids, [2, 1]);
    // The precision survives a restart of the catalog: ALTER to another precision rewrites.
    exec(&mut s, "ALTER TABLE f MODIFY a DATETIME(2)");
    assert_eq!(
        text_of(&q(&mut s, "SELECT a FROM f WHERE id = 1")[0][0]),
        "2020-01-01 10:00:00.12"
    );
    let ids: Vec<i64> = q(&mut s, "SELECT id FROM f WHERE a = '2020-01-01 10:00:00.5'")
        .iter()
        .map(|r| int(&r[0]))
        .collect();
    assert_eq!(ids, [2]);
}

fn text_of(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// Values whose fraction width is not their column's — a derived table's MAX, a UNION of
/// two precisions, NOW(3) — and a DATE beside a DATETIME column compare as points in time
/// too; a text column may default to the text 'CURRENT_TIMESTAMP'; CREATE TABLE ... AS
/// SELECT NOW(3) keeps the milliseconds.
#[test]
fn computed_and_mixed_temporal_values_compare_as_points_in_time() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE g (id INT PRIMARY KEY, d DATE, d0 DATETIME, d3 DATETIME(3), \
         s VARCHAR(30) DEFAULT 'CURRENT_TIMESTAMP')",
    );
    exec(
        &mut s,
        "INSERT INTO g (id, d, d0, d3) VALUES (1, '2024-01-01', '2024-01-01 00:00:00', '2024-01-01 00:00:00'), \
         (2, '2024-01-02', '2024-01-01 10:00:00', '2024-01-01 10:00:00.500')",
    );
    let count = |s: &mut tierdb_sql::Session, sql: &str| int(&q(s, sql)[0][0]);
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT MAX(d0) m FROM g) x WHERE m = '2024-01-01 10:00'"
        ),
        1
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT MIN(d3) m FROM g) x WHERE m = '2024-01-01'"
        ),
        1
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT d0 AS x FROM g UNION ALL SELECT d3 FROM g) u \
             WHERE x = '2024-01-01 00:00:00'"
        ),
        2
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT COUNT(*) FROM (SELECT d0 AS x FROM g UNION ALL SELECT d3 FROM g) u \
             WHERE x > '2024-01-01 10:00:00'"
        ),
        1
    );
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM g WHERE d = d0"), 1);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM g WHERE d3 > d0"), 1);
    // The text default of a text column is kept.
    assert_eq!(
        q(&mut s, "SELECT s FROM g WHERE id = 1")[0][0],
        Value::Bytes(b"CURRENT_TIMESTAMP".to_vec())
    );
    exec(&mut s, "CREATE TABLE c AS SELECT NOW(3) AS n, NOW() AS w");
    let create = text_of(&q(&mut s, "SHOW CREATE TABLE c")[0][1]);
    assert!(create.contains("`n` datetime(3)"), "{create}");
    assert!(create.contains("`w` datetime "), "{create}");
}
