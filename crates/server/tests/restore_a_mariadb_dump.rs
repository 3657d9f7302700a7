//! Migrating into tierdb: a dump written by the real `mariadb-dump` 10.11 (from a MariaDB
//! server, committed as `fixtures/mariadb_dump_10_11_shop.sql`: `LOCK TABLES`, `ALTER TABLE
//! ... DISABLE KEYS`, `/*!40101 SET ... */` comments, escaped strings, NULLs, DECIMAL,
//! DATETIME, TEXT, BIGINT UNSIGNED, secondary keys) is loaded with the real `mariadb` client;
//! the same queries then print exactly what MariaDB printed for the original data. Loading the
//! dump a second time (it drops and recreates each table) gives the same result.
//!
//! Backing up from tierdb: the real `mariadb-dump` then dumps the database from tierdb (it
//! reads INFORMATION_SCHEMA, SHOW CREATE TABLE, takes LOCK TABLES ... READ LOCAL); its table
//! definitions and rows are the ones MariaDB's own dump had, and the new dump loads into a
//! second database that reads back the same.
//!
//! Binary data: a dump of BLOB / VARBINARY columns made without `--hex-blob` holds their bytes
//! raw inside string literals (not UTF-8); loaded into tierdb, and dumped from it again and
//! reloaded, every byte is kept (tierdb once read such statements as UTF-8 and replaced each
//! invalid byte with U+FFFD).

mod common;

use common::{TestServer, MARIADB};

fn mariadb(server: &TestServer, args: &[&str], sql: &str) -> (bool, String, String) {
    common::mariadb_batch(server, args, sql)
}

const QUERIES: &str =
    "SELECT id, name, email, balance, joined, note FROM shop.customers ORDER BY id; \
     SELECT COUNT(*), SUM(amount), SUM(customer_id * amount), MIN(id), MAX(id) FROM shop.orders; \
     SELECT customer_id, COUNT(*) FROM shop.orders GROUP BY customer_id ORDER BY customer_id;";

/// What MariaDB 10.11 printed for `QUERIES` on the database the fixture was dumped from.
const MARIADB_PRINTED: &str = "id\tname\temail\tbalance\tjoined\tnote\n\
    1\tAnn\tann@example.com\t10.50\t2024-01-02 03:04:05\tit's \"quoted\"\n\
    2\tBob\tNULL\t0.00\tNULL\tNULL\n\
    3\tCy\\\\d\tc@x\t-3.25\t2023-12-31 23:59:59\ttab\\there\\nnewline\n\
    COUNT(*)\tSUM(amount)\tSUM(customer_id * amount)\tMIN(id)\tMAX(id)\n\
    500\t251250\t496858\t1\t500\n\
    customer_id\tCOUNT(*)\n\
    1\t166\n\
    2\t167\n\
    3\t167\n";

#[test]
fn a_mariadb_dump_loads_and_reads_back_as_in_mariadb() {
    assert!(
        common::exists(MARIADB),
        "the mariadb client is not installed at {MARIADB}"
    );
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mariadb_dump_10_11_shop.sql");
    assert!(fixture.exists(), "missing {}", fixture.display());
    let server = TestServer::start();
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE shop");
    assert!(ok, "{err}");
    for round in 0..2 {
        let (ok, out, err) = mariadb(&server, &["shop"], &format!("source {}", fixture.display()));
        assert!(ok, "round {round}: loading the dump failed: {err}\n{out}");
        assert_eq!(err, "", "round {round}");
        let (ok, out, err) = mariadb(&server, &[], QUERIES);
        assert!(ok, "round {round}: {err}");
        assert_eq!(out, MARIADB_PRINTED, "round {round}");
    }
    let (ok, out, err) = mariadb(&server, &[], "SHOW INDEX FROM shop.orders");
    assert!(ok, "{err}");
    let keys: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(2).unwrap_or(""))
        .collect();
    assert_eq!(keys, ["PRIMARY", "cust"]);
    // The dump's LOCK TABLES ... UNLOCK TABLES pairs left no lock behind.
    let (ok, out, err) = mariadb(
        &server,
        &[],
        "SHOW GLOBAL STATUS LIKE 'Com_%lock_tables'; UPDATE shop.orders SET amount = amount + 1 WHERE id = 1",
    );
    assert!(ok, "{err}");
    assert!(out.contains("Com_lock_tables\t4"), "{out}");
    assert!(out.contains("Com_unlock_tables\t4"), "{out}");
    let (ok, _, err) = mariadb(
        &server,
        &[],
        "UPDATE shop.orders SET amount = amount - 1 WHERE id = 1",
    );
    assert!(ok, "{err}");

    // Dump from tierdb with the real mariadb-dump.
    let dump_path = common::dump_from_tierdb(&server, "shop", "from_tierdb.sql");
    let ours = std::fs::read_to_string(&dump_path).expect("dump file");
    let theirs = std::fs::read_to_string(&fixture).expect("fixture");
    // Table definitions and data lines as MariaDB's own dump had them.
    let body = |d: &str| -> Vec<String> {
        d.lines()
            .filter(|l| l.starts_with("  ") || l.starts_with(") ENGINE") || l.starts_with('('))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(body(&ours), body(&theirs));
    assert!(ours.contains("LOCK TABLES `customers` WRITE;"), "{ours}");
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE shop2");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(
        &server,
        &["shop2"],
        &format!("source {}", dump_path.display()),
    );
    assert!(ok, "loading tierdb's own dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &[], &QUERIES.replace("shop.", "shop2."));
    assert!(ok, "{err}");
    assert_eq!(out, MARIADB_PRINTED);
}

/// What MariaDB 10.11 printed for `BINARY_QUERY` on the database
/// `fixtures/mariadb_dump_10_11_binary.sql` was dumped from.
const BINARY_QUERY: &str = "SELECT COUNT(*), MD5(GROUP_CONCAT(HEX(b), HEX(v), c ORDER BY id)), \
     SUM(LENGTH(b)), SUM(LENGTH(v)) FROM rawb.t; SELECT HEX(v) FROM rawb.t WHERE id = 7";
const BINARY_PRINTED: &str = "20\t8fb99efab27aa9e7fe9f61d22b595cad\t640\t460\n\
     8F14E45FCEEA167A5A36DEDD4BEA254300FF5C270A0D1A\n";

#[test]
fn a_dump_with_raw_binary_literals_keeps_every_byte() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mariadb_dump_10_11_binary.sql");
    let raw = std::fs::read(&fixture).expect("fixture");
    assert!(
        std::str::from_utf8(&raw).is_err(),
        "the fixture must hold raw (non-UTF-8) bytes"
    );
    let server = TestServer::start();
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE rawb");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(&server, &["rawb"], &format!("source {}", fixture.display()));
    assert!(ok, "loading the dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &["-N"], BINARY_QUERY);
    assert!(ok, "{err}");
    assert_eq!(out, BINARY_PRINTED);

    // tierdb's own dump of it (raw bytes again) loads into another database unchanged.
    let dump_path = common::dump_from_tierdb(&server, "rawb", "binary_from_tierdb.sql");
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE rawb2");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(
        &server,
        &["rawb2"],
        &format!("source {}", dump_path.display()),
    );
    assert!(ok, "loading tierdb's own dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &["-N"], &BINARY_QUERY.replace("rawb.", "rawb2."));
    assert!(ok, "{err}");
    assert_eq!(out, BINARY_PRINTED);
}

/// Queries over `fixtures/mariadb_dump_10_11_kinds.sql`, whose output MariaDB 10.11 printed
/// into `fixtures/mariadb_dump_10_11_kinds.printed` for the database it was dumped from.
const KINDS_QUERIES: &str =
    "SELECT id, t, t0, y, HEX(f), HEX(b), e, d6, t + 0, e + 0 FROM kinds.k ORDER BY t; \
     SELECT id FROM kinds.k WHERE t < '00:00:00' OR y = 2155 ORDER BY id; \
     SELECT e, COUNT(*) FROM kinds.k GROUP BY e; \
     SELECT MIN(t), MAX(t), SUM(b), COUNT(*) FROM kinds.k WHERE f = 1;";

/// TIME(3) (negative, past 99 hours), YEAR (with 0000), BIT(1) / BIT(12) (dumped as raw
/// bytes in string literals), ENUM and DATETIME(6) columns with defaults and keys: MariaDB's
/// dump loads and reads back as in MariaDB; tierdb's own dump has the same table definition
/// and data lines, and loads again.
#[test]
fn a_dump_with_time_year_bit_and_enum_columns_round_trips() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let fixture = dir.join("mariadb_dump_10_11_kinds.sql");
    let printed = std::fs::read(dir.join("mariadb_dump_10_11_kinds.printed")).expect("printed");
    let printed = String::from_utf8_lossy(&printed).into_owned();
    let server = TestServer::start();
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE kinds");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(
        &server,
        &["kinds"],
        &format!("source {}", fixture.display()),
    );
    assert!(ok, "loading the dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &[], KINDS_QUERIES);
    assert!(ok, "{err}");
    assert_eq!(out, printed);

    let dump_path = common::dump_from_tierdb(&server, "kinds", "kinds_from_tierdb.sql");
    let body = |d: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(d)
            .lines()
            .filter(|l| l.starts_with("  ") || l.starts_with(") ENGINE") || l.starts_with('('))
            .map(str::to_string)
            .collect()
    };
    let ours = std::fs::read(&dump_path).expect("dump file");
    let theirs = std::fs::read(&fixture).expect("fixture");
    assert_eq!(body(&ours), body(&theirs));
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE kinds2");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(
        &server,
        &["kinds2"],
        &format!("source {}", dump_path.display()),
    );
    assert!(ok, "loading tierdb's own dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &[], &KINDS_QUERIES.replace("kinds.", "kinds2."));
    assert!(ok, "{err}");
    assert_eq!(out, printed);
}
