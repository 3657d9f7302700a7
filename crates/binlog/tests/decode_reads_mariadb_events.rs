//! `tierdb_binlog::decode` reads what a real `mariadbd` 10.11 writes: a binlog file of rows
//! events for a table of every column type (decoded values are the rows tierdb would store),
//! and the `BINLOG '...'` statements `mariadb-binlog` prints for it (the same events). Also:
//! optional Table_map metadata (`binlog_row_metadata=FULL`) and the refusal of
//! `binlog_row_image=MINIMAL`. Needs MariaDB 10.11's server and client tools
//! (`scripts/setup.sh`).

mod common;

use std::process::Command;

use common::{b, big_blob, col, hex_upper, run, tool, Server};
use tierdb_binlog::decode::{
    check_columns, to_value, DecodeError, Decoder, Event, RawValue, RowsEvent, TableMap,
};
use tierdb_binlog::rows::RowsKind;
use tierdb_engine::{ColumnDef, ColumnType, LobSize, Value};

/// Every ColumnType variant (and every width / size of the sized ones), with its SQL type.
fn columns() -> Vec<(ColumnDef, &'static str)> {
    use ColumnType::*;
    let int = |bytes, unsigned| Int { bytes, unsigned };
    let names = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let dec = |precision, scale, unsigned| Decimal {
        precision,
        scale,
        unsigned,
    };
    vec![
        (col("id", int(4, false), false), "INT NOT NULL"),
        (col("ti", int(1, false), true), "TINYINT"),
        (col("tiu", int(1, true), true), "TINYINT UNSIGNED"),
        (col("si", int(2, false), true), "SMALLINT"),
        (col("siu", int(2, true), true), "SMALLINT UNSIGNED"),
        (col("mi", int(3, false), true), "MEDIUMINT"),
        (col("miu", int(3, true), true), "MEDIUMINT UNSIGNED"),
        (col("i", int(4, false), true), "INT"),
        (col("iu", int(4, true), true), "INT UNSIGNED"),
        (col("bi", int(8, false), true), "BIGINT"),
        (col("biu", int(8, true), true), "BIGINT UNSIGNED"),
        (col("f", Float, true), "FLOAT"),
        (col("d", Double, true), "DOUBLE"),
        (col("dec1", dec(10, 3, false), true), "DECIMAL(10,3)"),
        (
            col("dec2", dec(30, 10, true), true),
            "DECIMAL(30,10) UNSIGNED",
        ),
        (col("dec3", dec(65, 30, false), true), "DECIMAL(65,30)"),
        (col("c", Char(10), true), "CHAR(10)"),
        (col("c2", Char(100), true), "CHAR(100)"),
        (col("vc", VarChar(20), true), "VARCHAR(20)"),
        (col("vc2", VarChar(100), true), "VARCHAR(100)"),
        (col("tt", Text(LobSize::Tiny), true), "TINYTEXT"),
        (col("tx", Text(LobSize::Regular), true), "TEXT"),
        (col("mt", Text(LobSize::Medium), true), "MEDIUMTEXT"),
        (col("lt", Text(LobSize::Long), true), "LONGTEXT"),
        (col("tb", Blob(LobSize::Tiny), true), "TINYBLOB"),
        (col("bl", Blob(LobSize::Regular), true), "BLOB"),
        (col("mb", Blob(LobSize::Medium), true), "MEDIUMBLOB"),
        (col("lb", Blob(LobSize::Long), true), "LONGBLOB"),
        (col("bn", Binary(4), true), "BINARY(4)"),
        (col("vb", VarBinary(300), true), "VARBINARY(300)"),
        (col("dt", Date, true), "DATE"),
        (col("dtm", DateTime(0), true), "DATETIME"),
        (col("dtm2", DateTime(2), true), "DATETIME(2)"),
        (col("dtm6", DateTime(6), true), "DATETIME(6)"),
        (col("ts", Timestamp(3), true), "TIMESTAMP(3) NULL"),
        (col("ts5", Timestamp(5), true), "TIMESTAMP(5) NULL"),
        (col("y", Year, true), "YEAR"),
        (col("bt", Bit(1), true), "BIT(1)"),
        (col("bt13", Bit(13), true), "BIT(13)"),
        (col("bt64", Bit(64), true), "BIT(64)"),
        (col("tm", Time(0), true), "TIME"),
        (col("tm1", Time(1), true), "TIME(1)"),
        (col("tm4", Time(4), true), "TIME(4)"),
        (col("tm6", Time(6), true), "TIME(6)"),
        (
            col("s", Set(names(&["a", "b", "c"])), true),
            "SET('a','b','c')",
        ),
        (
            col("e", Enum(names(&["x", "y", "z"])), true),
            "ENUM('x','y','z')",
        ),
        (col("j", Text(LobSize::Long), true), "JSON"),
        (
            col("e2", Enum(names(&["p", "q"])), false),
            "ENUM('p','q') NOT NULL",
        ),
    ]
}

/// Rows as tierdb stores them, by position in [`columns`].
fn rows() -> Vec<Vec<Value>> {
    let big = big_blob();
    let max = vec![
        Value::Int(1),
        Value::Int(127),
        Value::Int(255),
        Value::Int(32767),
        Value::Int(65535),
        Value::Int(8_388_607),
        Value::Int(16_777_215),
        Value::Int(2_147_483_647),
        Value::Int(4_294_967_295),
        Value::Int(i64::MAX),
        Value::UInt(u64::MAX),
        Value::Double(3.5),
        Value::Double(f64::MAX),
        b("9999999.999"),
        b("99999999999999999999.9999999999"),
        b("99999999999999999999999999999999999.999999999999999999999999999999"),
        b("héllo wörl"),
        b(&"€".repeat(100)),
        b(&"ü".repeat(20)),
        b(&"😀".repeat(100)),
        b(&"t".repeat(255)),
        b(&"x".repeat(300)),
        b(&"m".repeat(70_000)),
        b("long"),
        Value::Bytes(vec![0, 255]),
        Value::Bytes(big[..65_535].to_vec()),
        Value::Bytes(big.clone()),
        Value::Bytes(vec![5; 3]),
        Value::Bytes(vec![1, 2, 3, 4]),
        Value::Bytes(vec![0xff; 300]),
        b("9999-12-31"),
        b("9999-12-31 23:59:59"),
        b("9999-12-31 23:59:59.99"),
        b("9999-12-31 23:59:59.999999"),
        b("2038-01-19 03:14:07.999"),
        b("2038-01-19 03:14:07.99999"),
        Value::Int(2155),
        Value::Int(1),
        Value::Int(8191),
        Value::UInt(u64::MAX),
        b("838:59:59"),
        b("838:59:59.9"),
        b("838:59:59.9999"),
        b("838:59:59.999999"),
        b("a,b,c"),
        b("z"),
        b(r#"{"k": [1, 2, "ü"]}"#),
        b("q"),
    ];
    let min = vec![
        Value::Int(2),
        Value::Int(-128),
        Value::Int(0),
        Value::Int(-32768),
        Value::Int(0),
        Value::Int(-8_388_608),
        Value::Int(0),
        Value::Int(-2_147_483_648),
        Value::Int(0),
        Value::Int(i64::MIN),
        Value::Int(0),
        Value::Double(-1.25),
        Value::Double(-2.5e-300),
        b("-12.340"),
        b("0.0000000001"),
        b("-0.000000000000000000000000000001"),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        b(""),
        Value::Bytes(vec![0, 1, 0, 0]),
        b(""),
        b("1000-01-01"),
        b("1000-01-01 00:00:00"),
        b("2024-02-29 12:34:56.01"),
        b("2024-02-29 12:34:56.000001"),
        b("1970-01-01 00:00:01.001"),
        b("0000-00-00 00:00:00.00000"),
        Value::Int(1901),
        Value::Int(0),
        Value::Int(0),
        Value::Int(0),
        b("-838:59:59"),
        b("-00:00:00.1"),
        b("-00:00:01.0001"),
        b("-838:59:59.999999"),
        b(""),
        b("x"),
        b("[]"),
        b("p"),
    ];
    let mut nulls = vec![Value::Null; max.len()];
    nulls[0] = Value::Int(3);
    nulls[max.len() - 1] = b("p");
    let mut mixed = min.clone();
    mixed[0] = Value::Int(4);
    mixed[16] = b("Zoë 🦀");
    mixed[17] = b(" lead");
    mixed[28] = Value::Bytes(vec![0, 0, 0, 0]);
    mixed[32] = b("0000-00-00 00:00:00.00");
    mixed[40] = b("-01:02:03");
    mixed[41] = b("-100:00:00.5");
    mixed[42] = b("12:00:00.2500");
    mixed[43] = b("-00:00:00.000001");
    mixed[44] = b("a,c");
    mixed[45] = b("y");
    mixed[36] = Value::Int(2000);
    vec![max, min, nulls, mixed]
}

/// The SQL literal of a stored value for a column of type `ty`.
fn literal(v: &Value, ty: &ColumnType) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) => format!("{d:e}"),
        Value::Bytes(bytes) => match ty {
            ColumnType::Char(_)
            | ColumnType::VarChar(_)
            | ColumnType::Text(_)
            | ColumnType::Blob(_)
            | ColumnType::Binary(_)
            | ColumnType::VarBinary(_) => {
                if bytes.is_empty() {
                    "''".into()
                } else {
                    format!("X'{}'", hex_upper(bytes))
                }
            }
            _ => format!("'{}'", String::from_utf8(bytes.clone()).unwrap()),
        },
    }
}

fn insert_sql(table: &str, cols: &[ColumnDef], rows: &[Vec<Value>]) -> String {
    let tuples: Vec<String> = rows
        .iter()
        .map(|r| {
            let vals: Vec<String> = r.iter().zip(cols).map(|(v, c)| literal(v, &c.ty)).collect();
            format!("({})", vals.join(", "))
        })
        .collect();
    format!("INSERT INTO {table} VALUES {};", tuples.join(", "))
}

/// Decodes standard base64 (as `mariadb-binlog` prints it; whitespace ignored).
fn base64(text: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let chars: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .collect();
    let mut out = Vec::with_capacity(chars.len() * 3 / 4);
    for chunk in chunks_of_4(&chars) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &c)| acc | (val(c) << (18 - 6 * i)));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

fn chunks_of_4(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.chunks(4)
}

/// The payloads of the `BINLOG '...'` statements in `mariadb-binlog`'s output.
fn binlog_statements(text: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\nBINLOG '") {
        let body = &rest[at + "\nBINLOG '".len()..];
        let end = body.find('\'').expect("closing quote");
        out.push(base64(&body[..end]));
        rest = &body[end..];
    }
    out
}

/// The row images of the rows events of table `name` in `events`, with the Table_map each
/// event was decoded against.
fn table_rows<'a>(events: &'a [Event], name: &str) -> Vec<(&'a TableMap, &'a RowsEvent)> {
    let mut map = None;
    let mut out = Vec::new();
    for e in events {
        match e {
            Event::TableMap(m) if m.table == name => map = Some(m),
            Event::TableMap(_) => map = None,
            Event::Rows(r) => {
                if let Some(m) = map {
                    assert_eq!(m.table_id, r.table_id);
                    out.push((m, r));
                }
            }
            _ => {}
        }
    }
    out
}

fn to_values(raw: &[RawValue], cols: &[ColumnDef]) -> Vec<Value> {
    assert_eq!(raw.len(), cols.len());
    raw.iter()
        .zip(cols)
        .map(|(r, c)| to_value(r, &c.ty).unwrap_or_else(|e| panic!("column {}: {e}", c.name)))
        .collect()
}

fn assert_rows_eq(got: &[Value], want: &[Value], what: &str) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            g == w,
            "{what}, column {i}: got {g:?}, want {w:?}",
            g = shorten(g),
            w = shorten(w)
        );
    }
}

fn shorten(v: &Value) -> String {
    let s = format!("{v:?}");
    if s.len() > 200 {
        format!("{}... ({} chars)", &s[..200], s.len())
    } else {
        s
    }
}

/// What the events of the test's statements must decode to, checked against `events`.
fn check_decoded(events: &[Event], cols: &[ColumnDef], rows: &[Vec<Value>], updated: &[Value]) {
    assert!(matches!(
        &events[0],
        Event::FormatDescription { binlog_version: 4, checksums: true, server_version }
            if server_version.starts_with("10.11.")
    ));
    let t = table_rows(events, "t");
    // INSERT (one event per row: each insert is its own statement), UPDATE, DELETE, and
    // the INSERT after binlog_row_metadata=FULL.
    let kinds: Vec<RowsKind> = t.iter().map(|(_, r)| r.kind).collect();
    assert_eq!(
        kinds,
        [
            RowsKind::Write,
            RowsKind::Write,
            RowsKind::Write,
            RowsKind::Write,
            RowsKind::Update,
            RowsKind::Delete,
            RowsKind::Write
        ]
    );
    for (i, (map, r)) in t.iter().enumerate() {
        check_columns(map, cols).unwrap_or_else(|e| panic!("event {i}: {e}"));
        assert_eq!((map.db.as_str(), r.ncols), ("dd", cols.len()));
        assert!(r.flags & 1 != 0, "STMT_END_F");
        assert_eq!(r.rows.len(), 1);
    }
    for (i, row) in rows.iter().enumerate() {
        let after = t[i].1.rows[0].1.as_ref().unwrap();
        assert_rows_eq(&to_values(after, cols), row, &format!("insert {i}"));
    }
    let (before, after) = &t[4].1.rows[0];
    assert_rows_eq(
        &to_values(before.as_ref().unwrap(), cols),
        &rows[1],
        "update before",
    );
    assert_rows_eq(
        &to_values(after.as_ref().unwrap(), cols),
        updated,
        "update after",
    );
    let deleted = t[5].1.rows[0].0.as_ref().unwrap();
    assert_rows_eq(&to_values(deleted, cols), &rows[2], "delete");

    // With binlog_row_metadata=FULL the Table_map says which numeric columns are UNSIGNED;
    // UNSIGNED integers then decode as UInt.
    let (full_map, full_rows) = t[6];
    for (m, c) in full_map.columns.iter().zip(cols) {
        let unsigned = match c.ty {
            ColumnType::Int { unsigned, .. } | ColumnType::Decimal { unsigned, .. } => {
                Some(unsigned)
            }
            ColumnType::Float | ColumnType::Double => Some(false),
            // MariaDB gives YEAR (an unsigned TINYINT inside) a signedness bit.
            ColumnType::Year => Some(true),
            _ => None,
        };
        assert_eq!(m.unsigned, unsigned, "column {}", c.name);
    }
    let after = full_rows.rows[0].1.as_ref().unwrap();
    assert_eq!(after[10], RawValue::UInt(u64::MAX));
    assert_eq!(after[2], RawValue::UInt(255));
    assert_eq!(after[1], RawValue::Int(127));
    let mut want = rows[0].clone();
    want[0] = Value::Int(10);
    assert_rows_eq(&to_values(after, cols), &want, "insert with FULL metadata");
}

#[test]
fn decode_reads_mariadb_events() {
    let mariadb_binlog = tool("mariadb-binlog");
    for t in ["mariadbd", "mariadb-install-db", "mariadb"] {
        tool(t);
    }
    let dir = tempfile::Builder::new()
        .prefix("binlog-decode-it")
        .tempdir()
        .unwrap();
    let server = Server::start_with_binlog(dir.path());
    let cols_sql = columns();
    let cols: Vec<ColumnDef> = cols_sql.iter().map(|(c, _)| c.clone()).collect();
    let defs: Vec<String> = cols_sql
        .iter()
        .map(|(c, ty)| format!("`{}` {ty}", c.name))
        .collect();
    let rows = rows();
    let mut updated = rows[1].clone();
    updated[1] = Value::Int(-1);
    updated[16] = b("updated ✓");
    updated[31] = Value::Null;
    updated[41] = b("-00:00:00.9");
    let set_updated: Vec<String> = [1, 16, 31, 41]
        .iter()
        .map(|&i| format!("`{}` = {}", cols[i].name, literal(&updated[i], &cols[i].ty)))
        .collect();
    let mut full_row = rows[0].clone();
    full_row[0] = Value::Int(10);

    let mut sql = format!(
        "SET sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'; SET time_zone = '+00:00';
         CREATE DATABASE dd; USE dd;
         CREATE TABLE t ({}, PRIMARY KEY (id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
         FLUSH BINARY LOGS;\n",
        defs.join(", ")
    );
    for r in &rows {
        sql.push_str(&insert_sql("t", &cols, std::slice::from_ref(r)));
        sql.push('\n');
    }
    sql.push_str(&format!(
        "UPDATE t SET {} WHERE id = 2;\nDELETE FROM t WHERE id = 3;\n\
         SET GLOBAL binlog_row_metadata = FULL;\n",
        set_updated.join(", ")
    ));
    server.exec(&sql);
    // A new connection: the global setting applies to the Table_map events written next.
    server.exec(&format!(
        "SET time_zone = '+00:00'; USE dd; {}\n
         SET GLOBAL binlog_row_metadata = NO_LOG;\n
         FLUSH BINARY LOGS;\n
         SET SESSION binlog_row_image = MINIMAL; UPDATE dd.t SET ti = 5 WHERE id = 1;\n
         FLUSH BINARY LOGS;",
        insert_sql("t", &cols, &[full_row])
    ));

    let data = dir.path().join("data");
    let file = |n: u32| data.join(format!("mysql-bin.{n:06}"));
    let bytes = std::fs::read(file(2)).expect("the second binlog file");
    assert_eq!(&bytes[..4], b"\xfebin");

    // 1. The file: one buffer of whole events.
    let mut d = Decoder::new();
    let events = d.feed(&bytes[4..]).unwrap_or_else(|e| panic!("{e}"));
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::Other { type_code: 160 })));
    assert!(events.iter().any(|e| matches!(e, Event::Xid(_))));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::Gtid {
            server_id: 99,
            standalone: false,
            ..
        }
    )));
    check_decoded(&events, &cols, &rows, &updated);

    // 2. The BINLOG statements mariadb-binlog prints: the Format_description in one, each
    //    statement's Table_map and rows events in another. Fed in order, they decode to the
    //    same Table_map and rows events.
    let printed = run(Command::new(&mariadb_binlog).arg(file(2))).stdout;
    let statements = binlog_statements(&String::from_utf8_lossy(&printed));
    assert!(
        statements.len() > 7,
        "{} BINLOG statements",
        statements.len()
    );
    let mut d = Decoder::new();
    let mut from_statements = Vec::new();
    for s in &statements {
        from_statements.extend(d.feed(s).unwrap_or_else(|e| panic!("{e}")));
    }
    assert!(d.format_seen());
    let tables_and_rows = |evs: &[Event]| -> Vec<Event> {
        evs.iter()
            .filter(|e| matches!(e, Event::TableMap(_) | Event::Rows(_)))
            .cloned()
            .collect()
    };
    assert_eq!(tables_and_rows(&from_statements), tables_and_rows(&events));
    check_decoded(&from_statements, &cols, &rows, &updated);

    // 3. binlog_row_image=MINIMAL leaves columns out of the images: refused, not guessed.
    let minimal = std::fs::read(file(3)).expect("the third binlog file");
    match Decoder::new().feed(&minimal[4..]) {
        Err(DecodeError::Unsupported(m)) => assert!(m.contains("binlog_row_image"), "{m}"),
        other => panic!("MINIMAL row image: {other:?}"),
    }
}
