//! The real `tierdb` binary driven by the `mysql` client crate: every supported column type
//! written with text and prepared statements (NULLs included) and read back with both
//! protocols; MySQL error codes for the common mistakes.

mod common;

use mysql::prelude::*;
use mysql::{Conn, Opts, OptsBuilder, Row, Value};

use common::TestServer;

fn code_of(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

const CREATE: &str = "CREATE TABLE all_types (
    id INT NOT NULL PRIMARY KEY,
    t TINYINT, s SMALLINT, m MEDIUMINT, i INT, b BIGINT,
    ut TINYINT UNSIGNED, ui INT UNSIGNED, ub BIGINT UNSIGNED,
    f FLOAT, d DOUBLE, de DECIMAL(10,2),
    c CHAR(10), v VARCHAR(100), tx TEXT, bl BLOB,
    dt DATE, dtt DATETIME, ts TIMESTAMP NULL,
    bn BINARY(4), vb VARBINARY(8),
    d6 DATETIME(6), t3 TIMESTAMP(3) NULL,
    tm TIME(3), y YEAR
)";

const COLUMNS: usize = 26;

/// Row 1 as SQL literals.
const TEXT_ROW: &str = "(1, -128, -32768, -8388608, -2147483648, -9223372036854775807, 255, 4294967295, 18446744073709551615, \
    1.5, -2.25, 12345678.91, 'abc', 'héllo wörld', 'a longer text', X'00FF10', '2024-02-29', '2024-02-29 13:05:09', '2023-12-31 23:59:59', X'0A0B', 'xyz', '2024-02-29 13:05:09.123456', '2023-12-31 23:59:59.5', '-100:02:03.456', 2024)";

/// The same row as values the prepared path binds.
fn typed_row(id: i64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(-128),
        Value::Int(-32768),
        Value::Int(-8388608),
        Value::Int(-2147483648),
        Value::Int(-9223372036854775807),
        Value::UInt(255),
        Value::UInt(4294967295),
        Value::UInt(u64::MAX),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Bytes(b"12345678.91".to_vec()),
        Value::Bytes(b"abc".to_vec()),
        Value::Bytes("héllo wörld".as_bytes().to_vec()),
        Value::Bytes(b"a longer text".to_vec()),
        Value::Bytes(vec![0, 0xFF, 0x10]),
        Value::Date(2024, 2, 29, 0, 0, 0, 0),
        Value::Date(2024, 2, 29, 13, 5, 9, 0),
        Value::Date(2023, 12, 31, 23, 59, 59, 0),
        Value::Bytes(vec![0x0A, 0x0B]),
        Value::Bytes(b"xyz".to_vec()),
        Value::Date(2024, 2, 29, 13, 5, 9, 123_456),
        Value::Date(2023, 12, 31, 23, 59, 59, 500_000),
        // -100:02:03.456: 4 days and 4 hours.
        Value::Time(true, 4, 4, 2, 3, 456_000),
        Value::Int(2024),
    ]
}

/// What every column of row 1 reads back as, normalised to text (None = NULL).
fn expected_row(id: i64) -> Vec<Option<String>> {
    let mut v: Vec<Option<String>> = [
        "-128",
        "-32768",
        "-8388608",
        "-2147483648",
        "-9223372036854775807",
        "255",
        "4294967295",
        "18446744073709551615",
        "1.5",
        "-2.25",
        "12345678.91",
        "abc",
        "héllo wörld",
        "a longer text",
        "\u{0}\u{FFFD}\u{10}",
        "2024-02-29",
        "2024-02-29 13:05:09",
        "2023-12-31 23:59:59",
        // BINARY(4) comes back padded with zero bytes.
        "\n\u{B}\u{0}\u{0}",
        "xyz",
        // Fractional seconds at the column's precision.
        "2024-02-29 13:05:09.123456",
        "2023-12-31 23:59:59.500",
        // TIME(3): negative, past 99 hours; YEAR.
        "-100:02:03.456",
        "2024",
    ]
    .iter()
    .map(|s| Some(s.to_string()))
    .collect();
    v.insert(0, Some(id.to_string()));
    v
}

/// A value from either protocol as text: binary temporal values are formatted like their
/// text form (with the column's `decimals` fraction digits); floats print shortest.
fn norm(v: &Value, date_only: bool, decimals: usize) -> Option<String> {
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Double(d) => Some(d.to_string()),
        Value::Date(y, m, d, h, mi, s, us) => Some(if date_only {
            format!("{y:04}-{m:02}-{d:02}")
        } else if decimals == 0 {
            format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}")
        } else {
            let frac = format!("{us:06}");
            format!(
                "{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{}",
                &frac[..decimals.min(6)]
            )
        }),
        Value::Time(neg, d, h, m, s, us) => {
            let mut t = format!(
                "{}{:02}:{m:02}:{s:02}",
                if *neg { "-" } else { "" },
                d * 24 + u32::from(*h)
            );
            if decimals > 0 {
                t.push_str(&format!(".{us:06}")[..decimals.min(6) + 1]);
            }
            Some(t)
        }
    }
}

fn norm_row(r: &Row) -> Vec<Option<String>> {
    (0..r.len())
        .map(|i| {
            let col = &r.columns_ref()[i];
            let date_only = col.column_type() == mysql::consts::ColumnType::MYSQL_TYPE_DATE;
            let decimals = usize::from(col.decimals());
            norm(
                &r.as_ref(i).cloned().unwrap_or(Value::NULL),
                date_only,
                decimals,
            )
        })
        .collect()
}

#[test]
fn rust_client_text_and_binary_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("tierdb.toml");
    std::fs::write(&cfg, "[[users]]\nname = \"root\"\npassword = \"\"\n\n[[users]]\nname = \"app\"\npassword = \"app-pw\"\n").unwrap();
    let server = TestServer::start_with(&["--config", cfg.to_str().unwrap()]);

    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    c.query_drop("CREATE DATABASE protocol_test").unwrap();
    c.query_drop("USE protocol_test").unwrap();
    c.query_drop(CREATE).unwrap();

    // Text protocol: a full row and a row of NULLs.
    c.query_drop(format!("INSERT INTO all_types VALUES {TEXT_ROW}"))
        .unwrap();
    c.query_drop("INSERT INTO all_types (id) VALUES (2)")
        .unwrap();
    // Binary protocol: the same full row, then a row of NULL parameters.
    let marks = vec!["?"; COLUMNS - 1].join(", ");
    let ins = c
        .prep(format!("INSERT INTO all_types VALUES ({marks})"))
        .unwrap();
    c.exec_drop(&ins, typed_row(3)).unwrap();
    let mut nulls = vec![Value::NULL; COLUMNS - 1];
    nulls[0] = Value::Int(4);
    c.exec_drop(&ins, nulls).unwrap();
    assert_eq!(c.affected_rows(), 1);

    let all_null = |id: i64| {
        let mut v = vec![None; COLUMNS - 1];
        v[0] = Some(id.to_string());
        v
    };
    let want = vec![expected_row(1), all_null(2), expected_row(3), all_null(4)];

    let text_rows: Vec<Row> = c.query("SELECT * FROM all_types ORDER BY id").unwrap();
    let got: Vec<_> = text_rows.iter().map(norm_row).collect();
    assert_eq!(got, want, "text protocol");

    let sel = c
        .prep("SELECT * FROM all_types WHERE id >= ? ORDER BY id")
        .unwrap();
    let bin_rows: Vec<Row> = c.exec(&sel, (0,)).unwrap();
    let got: Vec<_> = bin_rows.iter().map(norm_row).collect();
    assert_eq!(got, want, "binary protocol");

    // Typed reads through the binary protocol.
    let r = &bin_rows[0];
    assert_eq!(r.get::<i8, _>("t"), Some(-128));
    assert_eq!(r.get::<u64, _>("ub"), Some(u64::MAX));
    // A BIGINT UNSIGNED parameter above i64::MAX finds its rows, and arithmetic that
    // leaves the type's range is 1690.
    let by_ub: Vec<i64> = c
        .exec_map(
            "SELECT id FROM all_types WHERE ub = ? ORDER BY id",
            (u64::MAX,),
            |id: i64| id,
        )
        .unwrap();
    assert_eq!(by_ub, vec![1, 3]);
    let next = c.exec_drop("SELECT ub + 1 FROM all_types WHERE id = ?", (1,));
    assert_eq!(code_of(next.unwrap_err()), 1690);
    // Arithmetic with an unsigned column is unsigned: below zero is 1690 too.
    let below = c.exec_drop("SELECT ui - 4294967296 FROM all_types WHERE id = ?", (1,));
    assert_eq!(code_of(below.unwrap_err()), 1690);
    // Computed values above i64::MAX read back unsigned through both protocols.
    let computed = "SELECT ~0, CAST(-2 AS UNSIGNED), ub - 1 FROM all_types WHERE id = 1";
    let want = (u64::MAX, u64::MAX - 1, u64::MAX - 1);
    assert_eq!(
        c.query_first::<(u64, u64, u64), _>(computed).unwrap(),
        Some(want)
    );
    assert_eq!(
        c.exec_first::<(u64, u64, u64), _, _>(computed, ()).unwrap(),
        Some(want)
    );
    assert_eq!(r.get::<f32, _>("f"), Some(1.5));
    assert_eq!(r.get::<f64, _>("d"), Some(-2.25));
    assert_eq!(r.get::<Vec<u8>, _>("bl"), Some(vec![0, 0xFF, 0x10]));
    assert_eq!(r.get::<Vec<u8>, _>("bn"), Some(vec![0x0A, 0x0B, 0, 0]));
    let kinds: Vec<_> = r.columns_ref()[19..21]
        .iter()
        .map(|c| (c.column_type(), c.column_length(), c.character_set()))
        .collect();
    use mysql::consts::ColumnType as K;
    assert_eq!(
        kinds,
        [
            (K::MYSQL_TYPE_STRING, 4, 63),
            (K::MYSQL_TYPE_VAR_STRING, 8, 63)
        ],
        "BINARY / VARBINARY metadata: byte lengths, the binary character set"
    );
    // Too long for VARBINARY(8): 1406; BINARY values are compared with their padding.
    assert_eq!(
        code_of(
            c.exec_drop(
                "UPDATE all_types SET vb = ? WHERE id = 1",
                (b"123456789".to_vec(),)
            )
            .unwrap_err()
        ),
        1406
    );
    let padded: Option<i64> = c
        .exec_first(
            "SELECT id FROM all_types WHERE bn = ? ORDER BY id LIMIT 1",
            (vec![0x0Au8, 0x0B, 0, 0],),
        )
        .unwrap();
    assert_eq!(padded, Some(1));
    // DATETIME(6) / TIMESTAMP(3) found by binary temporal parameters (with microseconds,
    // and one without any for the TIMESTAMP(3) column's .500) and by text.
    for (sql, p) in [
        (
            "SELECT id FROM all_types WHERE d6 = ? ORDER BY id",
            Value::Date(2024, 2, 29, 13, 5, 9, 123_456),
        ),
        (
            "SELECT id FROM all_types WHERE t3 = ? ORDER BY id",
            Value::Date(2023, 12, 31, 23, 59, 59, 500_000),
        ),
        (
            "SELECT id FROM all_types WHERE t3 > ? ORDER BY id",
            Value::Date(2023, 12, 31, 23, 59, 59, 0),
        ),
        (
            "SELECT id FROM all_types WHERE d6 = ? ORDER BY id",
            Value::Bytes(b"2024-2-29 13:05:09.123456".to_vec()),
        ),
        // TIME(3) by a binary TIME parameter, and ordered below a later time.
        (
            "SELECT id FROM all_types WHERE tm = ? ORDER BY id",
            Value::Time(true, 4, 4, 2, 3, 456_000),
        ),
        (
            "SELECT id FROM all_types WHERE tm < ? ORDER BY id",
            Value::Time(false, 0, 0, 0, 0, 0),
        ),
        (
            "SELECT id FROM all_types WHERE y = ? ORDER BY id",
            Value::Int(2024),
        ),
    ] {
        let ids: Vec<i64> = c.exec_map(sql, (p.clone(),), |id: i64| id).unwrap();
        assert_eq!(ids, vec![1, 3], "{sql} with {p:?}");
    }

    // Prepared statements re-executed (later executes reuse bound types).
    let point = c.prep("SELECT v FROM all_types WHERE id = ?").unwrap();
    for id in [1, 3, 1, 3] {
        let v: Option<String> = c.exec_first(&point, (id,)).unwrap();
        assert_eq!(v.as_deref(), Some("héllo wörld"));
    }
    let v: Option<Option<String>> = c.exec_first(&point, (2,)).unwrap();
    assert_eq!(v, Some(None));

    // Error codes.
    let bad_pw = OptsBuilder::from_opts(
        Opts::from_url(&format!("mysql://app:nope@127.0.0.1:{}/", server.port)).unwrap(),
    );
    assert_eq!(code_of(Conn::new(bad_pw).unwrap_err()), 1045);
    let good_pw = Opts::from_url(&format!(
        "mysql://app:app-pw@127.0.0.1:{}/protocol_test",
        server.port
    ))
    .unwrap();
    Conn::new(good_pw).unwrap().query_drop("SELECT 1").unwrap();
    assert_eq!(
        code_of(Conn::new(Opts::from_url(&server.url(Some("no_such_db"))).unwrap()).unwrap_err()),
        1049
    );
    assert_eq!(code_of(c.query_drop("USE no_such_db").unwrap_err()), 1049);
    assert_eq!(code_of(c.query_drop(CREATE).unwrap_err()), 1050);
    assert_eq!(
        code_of(c.query_drop("DROP TABLE no_such_table").unwrap_err()),
        1051
    );
    assert_eq!(
        code_of(
            c.query_drop("SELECT no_such_column FROM all_types")
                .unwrap_err()
        ),
        1054
    );
    assert_eq!(
        code_of(
            c.query_drop("INSERT INTO all_types (id) VALUES (1)")
                .unwrap_err()
        ),
        1062
    );
    assert_eq!(code_of(c.exec_drop(&ins, typed_row(1)).unwrap_err()), 1062);
    assert_eq!(
        code_of(c.query_drop("SELECT * FROM no_such_table").unwrap_err()),
        1146
    );
    assert_eq!(code_of(c.query_drop("SELEKT 1").unwrap_err()), 1064);
    assert_eq!(code_of(c.prep("SELEKT ?").unwrap_err()), 1064);
    let unsupported = "SELECT id FROM all_types WHERE (id, t) IN (SELECT id, t FROM all_types)";
    assert_eq!(code_of(c.query_drop(unsupported).unwrap_err()), 1235);

    // The connection is still fine after all those errors.
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM all_types").unwrap();
    assert_eq!(n, Some(4));
}

/// A value of `len` bytes whose content depends on `seed` and the position.
fn long_value(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| b'a' + ((i / 1000 + seed as usize) % 26) as u8)
        .collect()
}

#[test]
fn long_text_and_blob_values_through_both_protocols() {
    let server = TestServer::start();
    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    c.query_drop("CREATE DATABASE long_values").unwrap();
    c.query_drop("USE long_values").unwrap();
    c.query_drop(
        "CREATE TABLE docs (id INT PRIMARY KEY, title VARCHAR(50), body LONGTEXT, \
         data LONGBLOB, note TINYTEXT, mid MEDIUMBLOB)",
    )
    .unwrap();

    // Binary protocol: a 5 MB text and a 3 MB blob as parameters.
    let body = long_value(1, 5 << 20);
    let data: Vec<u8> = (0..3 << 20).map(|i| (i * 7 % 251) as u8).collect();
    let ins = c
        .prep("INSERT INTO docs (id, title, body, data) VALUES (?, ?, ?, ?)")
        .unwrap();
    c.exec_drop(&ins, (1, "big", body.clone(), data.clone()))
        .unwrap();
    // Text protocol: a 1 MB value in the statement text.
    let text_body = String::from_utf8(long_value(2, 1 << 20)).unwrap();
    c.query_drop(format!(
        "INSERT INTO docs (id, title, body) VALUES (2, 'text', '{text_body}')"
    ))
    .unwrap();

    let sel = c.prep("SELECT body, data FROM docs WHERE id = ?").unwrap();
    let (b, d): (Vec<u8>, Vec<u8>) = c.exec_first(&sel, (1,)).unwrap().unwrap();
    assert!(
        b == body,
        "binary protocol: the 5 MB body came back changed"
    );
    assert!(
        d == data,
        "binary protocol: the 3 MB blob came back changed"
    );
    let (b, d): (Vec<u8>, Vec<u8>) = c
        .query_first("SELECT body, data FROM docs WHERE id = 1")
        .unwrap()
        .unwrap();
    assert!(
        b == body && d == data,
        "text protocol: a long value came back changed"
    );
    let t: Option<String> = c.query_first("SELECT body FROM docs WHERE id = 2").unwrap();
    assert!(
        t.as_deref() == Some(text_body.as_str()),
        "the 1 MB text came back changed"
    );

    // The result metadata of a LONGTEXT column says how long its values may be.
    let cols: Vec<(String, u32)> = c
        .query_iter("SELECT body, data, note, mid FROM docs WHERE id = 2")
        .unwrap()
        .columns()
        .as_ref()
        .iter()
        .map(|col| (col.name_str().into_owned(), col.column_length()))
        .collect();
    assert_eq!(
        cols,
        vec![
            ("body".into(), u32::MAX),
            ("data".into(), u32::MAX),
            ("note".into(), 1020),
            ("mid".into(), 16_777_215),
        ]
    );

    // A change of a short column keeps the long values; a changed long value reads back new.
    c.exec_drop("UPDATE docs SET title = ? WHERE id = ?", ("renamed", 1))
        .unwrap();
    let tail = long_value(3, 70_000);
    c.exec_drop(
        "UPDATE docs SET body = CONCAT(body, ?) WHERE id = ?",
        (tail.clone(), 2),
    )
    .unwrap();
    let sel_title = c.prep("SELECT title, body FROM docs WHERE id = ?").unwrap();
    let (title, b): (String, Vec<u8>) = c.exec_first(&sel_title, (1,)).unwrap().unwrap();
    assert_eq!(title, "renamed");
    assert!(b == body, "an unrelated UPDATE changed the long value");
    let len: Option<i64> = c
        .query_first("SELECT LENGTH(body) FROM docs WHERE id = 2")
        .unwrap();
    assert_eq!(len, Some((1 << 20) + 70_000));

    // Each size class keeps its MySQL limit.
    assert_eq!(
        code_of(
            c.exec_drop(
                "INSERT INTO docs (id, note) VALUES (?, ?)",
                (3, "n".repeat(256))
            )
            .unwrap_err()
        ),
        1406
    );
    c.exec_drop(
        "INSERT INTO docs (id, mid) VALUES (?, ?)",
        (4, vec![7u8; 16_777_215]),
    )
    .unwrap();
    assert_eq!(
        code_of(
            c.exec_drop("UPDATE docs SET mid = CONCAT(mid, 'x') WHERE id = ?", (4,))
                .unwrap_err()
        ),
        1406
    );
    let n: Option<i64> = c
        .query_first("SELECT COUNT(*) FROM docs WHERE LENGTH(mid) = 16777215")
        .unwrap();
    assert_eq!(n, Some(1));
}
