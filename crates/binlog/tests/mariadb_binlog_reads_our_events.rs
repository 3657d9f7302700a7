//! A binlog file written with `tierdb_binlog` is read by the real `mariadb-binlog` (exit 0, the
//! decoded rows are our values) and applied by a real `mariadbd` (the rows SELECTed back are
//! our values). Needs MariaDB 10.11's server and client tools (`scripts/setup.sh`).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{b, big_blob, col, hex_upper, run, tool, Server};
use tierdb_binlog::events::{self, QueryEvent, MAGIC};
use tierdb_binlog::rows::{row_image_len, rows_event, rows_event_overhead, RowImages, RowsKind};
use tierdb_engine::{Collation, ColumnDef, ColumnType, LobSize, Value};

const SERVER_ID: u32 = 1;
const TS: u32 = 1_733_400_000;
const DB: &str = "bl";
const FILE_NAME: &str = "tierdb-bin.000001";
/// Our events' split size: rows events stay below this (each row in exactly one event).
const MAX_ROWS_EVENT_BYTES: usize = 8192;

/// Every ColumnType variant (and every width / size of the sized ones), with its SQL type.
fn columns() -> Vec<(ColumnDef, &'static str)> {
    use ColumnType::*;
    let int = |bytes, unsigned| Int { bytes, unsigned };
    let names = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut bin_text = col("cb", Char(5), true);
    bin_text.collation = Collation::Binary;
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
        (
            col(
                "dec1",
                Decimal {
                    precision: 10,
                    scale: 3,
                    unsigned: false,
                },
                true,
            ),
            "DECIMAL(10,3)",
        ),
        (
            col(
                "dec2",
                Decimal {
                    precision: 30,
                    scale: 10,
                    unsigned: true,
                },
                true,
            ),
            "DECIMAL(30,10) UNSIGNED",
        ),
        (
            col("c", Char(10), true),
            "CHAR(10) COLLATE utf8mb4_general_ci",
        ),
        (bin_text, "CHAR(5) COLLATE utf8mb4_bin"),
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
        (col("dtm6", DateTime(6), true), "DATETIME(6)"),
        (col("ts", Timestamp(3), true), "TIMESTAMP(3) NULL"),
        (col("y", Year, true), "YEAR"),
        (col("bt", Bit(1), true), "BIT(1)"),
        (col("bt13", Bit(13), true), "BIT(13)"),
        (col("bt64", Bit(64), true), "BIT(64)"),
        (col("tm", Time(0), true), "TIME"),
        (col("tm3", Time(3), true), "TIME(3)"),
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

fn create_table_sql(cols: &[(ColumnDef, &str)]) -> String {
    let defs: Vec<String> = cols
        .iter()
        .map(|(c, ty)| format!("`{}` {ty}", c.name))
        .collect();
    format!(
        "CREATE TABLE `t` ({}, PRIMARY KEY (`id`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
        defs.join(", ")
    )
}

/// The rows inserted into `t`, by position in [`columns`].
fn rows() -> Vec<Vec<Value>> {
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
        b("héllo wörld"),
        b("AbC"),
        b(&"€".repeat(100)),
        b(&"ü".repeat(20)),
        b(&"😀".repeat(100)),
        b("tiny"),
        b("text"),
        b("medium"),
        b("long"),
        Value::Bytes(vec![0, 255]),
        Value::Bytes(vec![1, 2, 3]),
        Value::Bytes(vec![4; 10]),
        Value::Bytes(vec![5; 3]),
        Value::Bytes(vec![1, 2, 3, 4]),
        Value::Bytes(vec![0xff; 300]),
        b("9999-12-31"),
        b("9999-12-31 23:59:59"),
        b("9999-12-31 23:59:59.999999"),
        b("2038-01-19 03:14:07.999"),
        Value::Int(2155),
        Value::Int(1),
        Value::Int(8191),
        Value::UInt(u64::MAX),
        b("838:59:59"),
        b("838:59:59.999"),
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
        b(""),
        Value::Bytes(vec![0, 1, 0, 0]),
        b(""),
        b("1000-01-01"),
        b("1000-01-01 00:00:00"),
        b("2024-02-29 12:34:56.000001"),
        b("1970-01-01 00:00:01.001"),
        Value::Int(1901),
        Value::Int(0),
        Value::Int(0),
        Value::Int(0),
        b("-838:59:59"),
        b("-00:00:01.500"),
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
    mixed[15] = b("Zoë 🦀");
    mixed[16] = b("x");
    mixed[38] = b("-01:02:03");
    mixed[39] = b("-100:00:00.001");
    mixed[40] = b("C,A"); // case-insensitive members
    mixed[41] = b("Y");
    mixed[32] = b("0000-00-00 00:00:00.000000");
    mixed[33] = Value::Null;
    mixed[34] = Value::Int(2000);
    vec![max, min, nulls, mixed]
}

/// Appends one transaction: GTID, Table_map, the rows events (split so each stays below
/// `MAX_ROWS_EVENT_BYTES` unless a single row is larger), Xid. The GTID seq is patched later.
fn dml(
    out: &mut Vec<u8>,
    table_id: u64,
    table: &str,
    cols: &[ColumnDef],
    kind: RowsKind,
    rows: &[RowImages<'_>],
    xid: u64,
) {
    events::gtid(out, TS, SERVER_ID, 0, 0, false);
    events::table_map(out, TS, SERVER_ID, table_id, DB, table, cols).unwrap();
    let image_len = |r: &RowImages<'_>| -> usize {
        [r.0, r.1]
            .into_iter()
            .flatten()
            .map(|img| row_image_len(cols, img).unwrap())
            .sum()
    };
    let mut chunk: Vec<RowImages<'_>> = Vec::new();
    let mut size = rows_event_overhead(kind, cols.len());
    for (i, r) in rows.iter().enumerate() {
        let len = image_len(r);
        if !chunk.is_empty() && size + len > MAX_ROWS_EVENT_BYTES {
            rows_event(out, TS, SERVER_ID, kind, table_id, cols, &chunk, false).unwrap();
            chunk.clear();
            size = rows_event_overhead(kind, cols.len());
        }
        chunk.push(*r);
        size += len;
        if i == rows.len() - 1 {
            let start = out.len();
            rows_event(out, TS, SERVER_ID, kind, table_id, cols, &chunk, true).unwrap();
            assert_eq!(
                out.len() - start,
                size,
                "row_image_len + overhead = event size"
            );
        }
    }
    events::xid(out, TS, SERVER_ID, xid);
}

fn ddl(out: &mut Vec<u8>, seq: u64, db: &str, sql: &str) {
    events::gtid(out, TS, SERVER_ID, seq, 0, true);
    let q = QueryEvent {
        thread_id: 5,
        exec_time: 0,
        error_code: 0,
        db,
        sql: sql.as_bytes(),
        sql_mode: 0x5420_0000,
        auto_increment_increment: 1,
        auto_increment_offset: 1,
        charset_client: 45,
        collation_connection: 45,
        collation_server: 45,
        time_zone: None,
        flags2: events::OPTION_EXPLICIT_DEF_TIMESTAMP,
    };
    events::query(out, TS, SERVER_ID, &q).unwrap();
}

/// A table without a primary key: rows carry a hidden row id after the last column.
fn hidden_key_columns() -> Vec<ColumnDef> {
    vec![
        col("a", ColumnType::VarChar(10), true),
        col("big", ColumnType::Blob(LobSize::Medium), true),
    ]
}

/// The whole file: magic, header events, two DDL groups, DML groups, Rotate.
fn build_binlog(cols: &[(ColumnDef, &str)]) -> Vec<u8> {
    let defs: Vec<ColumnDef> = cols.iter().map(|(c, _)| c.clone()).collect();
    let rows = rows();
    let mut ev = Vec::new();
    events::format_description(&mut ev, TS, SERVER_ID, "10.11.0-MariaDB-tierdb").unwrap();
    events::gtid_list(&mut ev, TS, SERVER_ID, &[]);
    events::binlog_checkpoint(&mut ev, TS, SERVER_ID, FILE_NAME).unwrap();
    let mut sealed = ev.len();
    let mut seq = 0;
    // Each group is built position-independent, then numbered and positioned.
    let mut seal = |ev: &mut Vec<u8>, sealed: &mut usize, patch_seq: bool| {
        seq += 1;
        if patch_seq {
            events::set_gtid_seq(&mut ev[*sealed..], seq).unwrap();
        }
        events::set_positions(&mut ev[*sealed..], 4 + *sealed as u64).unwrap();
        *sealed = ev.len();
    };
    ddl(&mut ev, 1, "", &format!("CREATE DATABASE `{DB}`"));
    seal(&mut ev, &mut sealed, false);
    ddl(&mut ev, 2, DB, &create_table_sql(cols));
    seal(&mut ev, &mut sealed, false);
    ddl(
        &mut ev,
        3,
        DB,
        "CREATE TABLE `h` (`a` VARCHAR(10), `big` MEDIUMBLOB)",
    );
    seal(&mut ev, &mut sealed, false);

    let inserts: Vec<RowImages<'_>> = rows.iter().map(|r| (None, Some(&r[..]))).collect();
    dml(&mut ev, 70, "t", &defs, RowsKind::Write, &inserts, 100);
    seal(&mut ev, &mut sealed, true);

    // Update row 2 (the minimums) to new values; delete row 3 (the NULLs).
    let mut updated = rows[1].clone();
    updated[1] = Value::Int(-1);
    updated[15] = b("updated ✓");
    updated[31] = Value::Null;
    updated[39] = b("-00:00:00.001");
    let update = [(Some(&rows[1][..]), Some(&updated[..]))];
    dml(&mut ev, 70, "t", &defs, RowsKind::Update, &update, 101);
    seal(&mut ev, &mut sealed, true);
    let delete = [(Some(&rows[2][..]), None)];
    dml(&mut ev, 70, "t", &defs, RowsKind::Delete, &delete, 102);
    seal(&mut ev, &mut sealed, true);

    // Hidden-key table: a 70 000-byte blob row, and enough small rows to need several events.
    let hcols = hidden_key_columns();
    let mut hrows = vec![vec![b("big"), Value::Bytes(big_blob()), Value::Int(1)]];
    for i in 0..400 {
        hrows.push(vec![
            b(&format!("r{i}")),
            Value::Bytes(vec![b'z'; 30]),
            Value::Int(i + 2),
        ]);
    }
    let hinserts: Vec<RowImages<'_>> = hrows.iter().map(|r| (None, Some(&r[..]))).collect();
    dml(&mut ev, 71, "h", &hcols, RowsKind::Write, &hinserts, 103);
    seal(&mut ev, &mut sealed, true);

    events::rotate(&mut ev, TS, SERVER_ID, "tierdb-bin.000002", 4).unwrap();
    events::set_positions(&mut ev[sealed..], 4 + sealed as u64).unwrap();

    let (found, used) = events::scan(&ev);
    assert_eq!(
        used,
        ev.len(),
        "every event we wrote scans as whole and checksum-valid"
    );
    let rows_events = found
        .iter()
        .filter(|e| e.type_code == events::WRITE_ROWS_EVENT_V1)
        .count();
    assert!(
        rows_events >= 3,
        "the hidden-key insert was split: {rows_events}"
    );
    let seqs: Vec<u64> = found
        .iter()
        .filter_map(|e| events::gtid_seq(&ev[e.offset..e.offset + e.len]))
        .map(|(seq, _, _)| seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5, 6, 7]);

    let mut file = MAGIC.to_vec();
    file.extend_from_slice(&ev);
    file
}

/// The `@n=value` lines mariadb-binlog printed for the image after `header` (e.g. the n-th
/// `### INSERT INTO `bl`.`t``), as one string per column.
fn decoded_images(text: &str, header: &str) -> Vec<Vec<String>> {
    let mut images = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() != header {
            continue;
        }
        // `### SET` / `### WHERE`, then `###   @n=...` lines.
        let mut image = Vec::new();
        let mut current: Option<String> = None;
        let mut started = false;
        while let Some(next) = lines.peek() {
            if next.starts_with("###   @") {
                if let Some(v) = current.take() {
                    image.push(v);
                }
                // FLOAT values are padded with spaces.
                current = Some(next["###   ".len()..].trim_end().to_owned());
                started = true;
            } else if *next == "### SET" || *next == "### WHERE" {
                if started {
                    image.extend(current.take());
                    images.push(std::mem::take(&mut image));
                    started = false;
                }
            } else {
                break;
            }
            lines.next();
        }
        image.extend(current.take());
        if !image.is_empty() {
            images.push(image);
        }
    }
    images
}

#[test]
fn mariadb_binlog_reads_our_events() {
    let mariadb_binlog = tool("mariadb-binlog");
    // Fail early (not skip) when the server tools are missing.
    for t in ["mariadbd", "mariadb-install-db", "mariadb"] {
        tool(t);
    }
    let dir = tempfile::Builder::new()
        .prefix("binlog-it")
        .tempdir()
        .unwrap();
    let cols = columns();
    let file = dir.path().join(FILE_NAME);
    std::fs::write(&file, build_binlog(&cols)).unwrap();

    // 1. mariadb-binlog decodes every event and every value.
    let out = run(Command::new(&mariadb_binlog)
        .arg("-v")
        .arg("--base64-output=DECODE-ROWS")
        .arg(&file));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("ERROR"),
        "mariadb-binlog complained: {stderr}"
    );
    for needle in [
        "Start: binlog v 4, server v 10.11.0-MariaDB-tierdb created",
        "Gtid list []",
        "Binlog checkpoint tierdb-bin.000001",
        "GTID 0-1-1 ddl",
        "CREATE DATABASE `bl`",
        "GTID 0-1-4 trans",
        "Table_map: `bl`.`t` mapped to number 70",
        "Write_rows: table id 70 flags: STMT_END_F",
        "Update_rows: table id 70 flags: STMT_END_F",
        "Delete_rows: table id 70 flags: STMT_END_F",
        "Xid = 100",
        "Rotate to tierdb-bin.000002  pos: 4",
        "use `bl`",
    ] {
        assert!(
            text.contains(needle),
            "no {needle:?} in mariadb-binlog's output:\n{text}"
        );
    }
    let inserts = decoded_images(&text, "### INSERT INTO `bl`.`t`");
    assert_eq!(inserts.len(), 4, "{text}");
    let expected_max: &[&str] = &[
        "@1=1",
        "@2=127",
        "@3=-1 (255)",
        "@4=32767",
        "@5=-1 (65535)",
        "@6=8388607",
        "@7=-1 (16777215)",
        "@8=2147483647",
        "@9=-1 (4294967295)",
        "@10=9223372036854775807",
        "@11=-1 (18446744073709551615)",
        "@12=3.5",
        "@13=1.7976931348623157081e+308",
        "@14=9999999.999",
        "@15=99999999999999999999.9999999999",
        "@16='héllo wörld'",
        "@17='AbC'",
    ];
    assert_eq!(&inserts[0][..expected_max.len()], expected_max, "{text}");
    let expected_tail_max: &[&str] = &[
        "@21='tiny'",
        "@22='text'",
        "@23='medium'",
        "@24='long'",
        "@25='\\x00\u{fffd}'", // 0xff is printed raw
        "@26='\\x01\\x02\\x03'",
        "@27='\\x04\\x04\\x04\\x04\\x04\\x04\\x04\\x04\\x04\\x04'",
        "@28='\\x05\\x05\\x05'",
        "@29='\\x01\\x02\\x03\\x04'",
    ];
    assert_eq!(&inserts[0][20..29], expected_tail_max, "{text}");
    let expected_temporal_max: &[&str] = &[
        "@31='9999:12:31'",
        "@32='9999-12-31 23:59:59'",
        "@33='9999-12-31 23:59:59.999999'",
        "@34=2147483647.999",
        "@35=2155",
        "@36=b'1'",
        "@37=b'1111111111111'",
        "@38=b'1111111111111111111111111111111111111111111111111111111111111111'",
        "@39='838:59:59'",
        "@40='838:59:59.999'",
        "@41=b'00000111'",
        "@42=3",
        "@43='{\"k\": [1, 2, \"ü\"]}'",
        "@44=2",
    ];
    assert_eq!(&inserts[0][30..], expected_temporal_max, "{text}");
    let expected_min: &[&str] = &[
        "@1=2",
        "@2=-128 (128)",
        "@3=0",
        "@4=-32768 (32768)",
        "@5=0",
        "@6=-8388608 (8388608)",
        "@7=0",
        "@8=-2147483648 (2147483648)",
        "@9=0",
        "@10=-9223372036854775808 (9223372036854775808)",
        "@11=0",
        "@12=-1.25",
        "@13=-2.4999999999999999798e-300",
        "@14=-12.340",
        "@15=0.0000000001",
        "@16=''",
    ];
    assert_eq!(&inserts[1][..expected_min.len()], expected_min, "{text}");
    assert_eq!(
        inserts[1][28], "@29='\\x00\\x01'",
        "BINARY drops trailing zero bytes"
    );
    assert_eq!(
        &inserts[1][30..40],
        [
            "@31='1000:01:01'",
            "@32='1000-01-01 00:00:00'",
            "@33='2024-02-29 12:34:56.000001'",
            "@34=1.001",
            "@35=1901",
            "@36=b'0'",
            "@37=b'0000000000000'",
            "@38=b'0000000000000000000000000000000000000000000000000000000000000000'",
            "@39='-838:59:59'",
            "@40='-00:00:01.500'",
        ],
        "{text}"
    );
    let nulls = &inserts[2];
    assert_eq!(nulls[0], "@1=3");
    assert!(
        nulls[1..43].iter().all(|v| v.ends_with("=NULL")),
        "{nulls:?}"
    );
    assert_eq!(nulls[43], "@44=1");
    assert_eq!(inserts[3][15], "@16='Zoë 🦀'");
    assert_eq!(
        inserts[3][38..42],
        [
            "@39='-01:02:03'",
            "@40='-100:00:00.001'",
            "@41=b'00000101'",
            "@42=2"
        ]
    );

    let updates = decoded_images(&text, "### UPDATE `bl`.`t`");
    assert_eq!(updates.len(), 2, "before and after image: {text}");
    assert_eq!(updates[0][1], "@2=-128 (128)");
    assert_eq!(updates[1][1], "@2=-1 (255)");
    assert_eq!(updates[1][15], "@16='updated ✓'");
    assert_eq!(updates[1][31], "@32=NULL");
    assert_eq!(updates[1][39], "@40='-00:00:00.001'");
    let deletes = decoded_images(&text, "### DELETE FROM `bl`.`t`");
    assert_eq!(deletes.len(), 1);
    assert_eq!(deletes[0][0], "@1=3");
    let hidden = decoded_images(&text, "### INSERT INTO `bl`.`h`");
    assert_eq!(hidden.len(), 401);
    assert_eq!(
        hidden[400],
        ["@1='r399'", &format!("@2='{}'", "z".repeat(30))]
    );

    // 2. A real server applies the events (mariadb-binlog's BINLOG statements) and holds our
    //    rows afterwards.
    let server = Server::start(dir.path());
    let dump = run(Command::new(&mariadb_binlog).arg(&file)).stdout;
    let mut apply = server
        .client()
        .arg("--binary-mode")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mariadb client");
    apply.stdin.take().unwrap().write_all(&dump).unwrap();
    let applied = apply.wait_with_output().unwrap();
    assert!(
        applied.status.success(),
        "the server refused our events: {}",
        String::from_utf8_lossy(&applied.stderr)
    );

    let got = server.query(
        "SELECT id, ti, tiu, si, siu, mi, miu, i, iu, bi, biu, f, d, dec1, dec2, c, cb, \
         CHAR_LENGTH(c2), LEFT(c2, 2), vc, CHAR_LENGTH(vc2), LEFT(vc2, 1), tt, tx, mt, lt, \
         HEX(tb), HEX(bl), HEX(mb), HEX(lb), HEX(bn), LENGTH(vb), dt, dtm, dtm6, ts, y, bt+0, \
         bt13+0, bt64+0, tm, tm3, s, e, j, e2 FROM bl.t ORDER BY id",
    );
    let expected = [
        [
            "1",
            "127",
            "255",
            "32767",
            "65535",
            "8388607",
            "16777215",
            "2147483647",
            "4294967295",
            "9223372036854775807",
            "18446744073709551615",
            "3.5",
            "1.7976931348623157e308",
            "9999999.999",
            "99999999999999999999.9999999999",
            "héllo wörld",
            "AbC",
            "100",
            "€€",
            "üüüüüüüüüüüüüüüüüüüü",
            "100",
            "😀",
            "tiny",
            "text",
            "medium",
            "long",
            "00FF",
            "010203",
            "04040404040404040404",
            "050505",
            "01020304",
            "300",
            "9999-12-31",
            "9999-12-31 23:59:59",
            "9999-12-31 23:59:59.999999",
            "2038-01-19 03:14:07.999",
            "2155",
            "1",
            "8191",
            "18446744073709551615",
            "838:59:59",
            "838:59:59.999",
            "a,b,c",
            "z",
            r#"{"k": [1, 2, "ü"]}"#,
            "q",
        ]
        .join("\t"),
        [
            "2",
            "-1",
            "0",
            "-32768",
            "0",
            "-8388608",
            "0",
            "-2147483648",
            "0",
            "-9223372036854775808",
            "0",
            "-1.25",
            "-2.5e-300",
            "-12.340",
            "0.0000000001",
            "updated ✓",
            "",
            "0",
            "",
            "",
            "0",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "00010000",
            "0",
            "1000-01-01",
            "NULL",
            "2024-02-29 12:34:56.000001",
            "1970-01-01 00:00:01.001",
            "1901",
            "0",
            "0",
            "0",
            "-838:59:59",
            "-00:00:00.001",
            "",
            "x",
            "[]",
            "p",
        ]
        .join("\t"),
        [
            "4",
            "-128",
            "0",
            "-32768",
            "0",
            "-8388608",
            "0",
            "-2147483648",
            "0",
            "-9223372036854775808",
            "0",
            "-1.25",
            "-2.5e-300",
            "-12.340",
            "0.0000000001",
            "Zoë 🦀",
            "x",
            "0",
            "",
            "",
            "0",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            "00010000",
            "0",
            "1000-01-01",
            "1000-01-01 00:00:00",
            "0000-00-00 00:00:00.000000",
            "NULL",
            "2000",
            "0",
            "0",
            "0",
            "-01:02:03",
            "-100:00:00.001",
            "a,c",
            "y",
            "[]",
            "p",
        ]
        .join("\t"),
    ];
    assert_eq!(got, expected);

    let h = server.query("SELECT COUNT(*), SUM(LENGTH(big)), MAX(a) FROM bl.h");
    assert_eq!(h, ["401\t82000\tr99"]);
    let big = server.query("SELECT LENGTH(big), HEX(big) FROM bl.h WHERE a = 'big'");
    let expected_hex = hex_upper(&big_blob());
    assert!(
        big == [format!("70000\t{expected_hex}")],
        "the 70 000-byte blob differs"
    );
    drop(server);
}
