//! One error per MySQL code the SQL layer must produce.

mod common;
use common::*;
use tierdb_engine::Error as EngineError;
use tierdb_sql::{Session, SqlError};

fn code(s: &mut Session, sql: &str) -> u16 {
    err(s, sql).code
}

#[test]
fn each_error_has_its_code() {
    let e = env();
    let mut nodb = Session::new(e.shared.clone(), 5, "u", "h", None).unwrap();
    assert_eq!(code(&mut nodb, "SELECT * FROM t"), 1046);
    assert_eq!(code(&mut nodb, "CREATE TABLE t (id INT PRIMARY KEY)"), 1046);
    assert_eq!(code(&mut nodb, "USE nosuchdb"), 1049);
    assert_eq!(nodb.init_db("nosuchdb").unwrap_err().code, 1049);
    assert_eq!(
        Session::new(e.shared.clone(), 6, "u", "h", Some("nosuchdb"))
            .err()
            .map(|e| e.code),
        Some(1049)
    );

    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT NOT NULL, k INT NOT NULL, c CHAR(5) NOT NULL DEFAULT '', d DOUBLE, PRIMARY KEY (id))");
    assert_eq!(code(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)"), 1050);
    assert_eq!(code(&mut s, "DROP TABLE nosuch"), 1051);
    // As MariaDB, the tables there are dropped before the error.
    exec(&mut s, "CREATE TABLE gone (id INT)");
    assert_eq!(code(&mut s, "DROP TABLE gone, nosuch"), 1051);
    assert_eq!(code(&mut s, "SELECT * FROM gone"), 1146);
    assert_eq!(code(&mut s, "SELECT nosuch FROM t"), 1054);
    assert_eq!(code(&mut s, "SELECT * FROM t WHERE nosuch = 1"), 1054);
    assert_eq!(
        code(&mut s, "INSERT INTO t (id, nosuch) VALUES (1, 2)"),
        1054
    );
    assert_eq!(code(&mut s, "UPDATE t SET nosuch = 1"), 1054);
    exec(&mut s, "INSERT INTO t (id, k) VALUES (1, 1)");
    let dup = err(&mut s, "INSERT INTO t (id, k) VALUES (1, 2)");
    assert_eq!((dup.code, dup.state), (1062, "23000"));
    assert_eq!(code(&mut s, "SELECT * FROM nosuch"), 1146);
    assert_eq!(code(&mut s, "INSERT INTO nosuch VALUES (1)"), 1146);
    assert_eq!(
        s.prepare("SELECT * FROM nosuch WHERE id = ?")
            .unwrap_err()
            .code,
        1146
    );
    assert_eq!(code(&mut s, "SELEKT 1"), 1064);
    assert_eq!(code(&mut s, "SELECT 1; SELECT 2"), 1064);
    assert_eq!(code(&mut s, "SELECT id FROM t WHERE id = ?"), 1064);
    assert_eq!(code(&mut s, ""), 1065);
    assert_eq!(
        code(
            &mut s,
            "SELECT * FROM t a JOIN t b ON a.id = b.id RIGHT JOIN t c ON c.id = a.id"
        ),
        1235
    );
    assert_eq!(
        code(
            &mut s,
            "SELECT id FROM t INTERSECT SELECT id FROM t FOR UPDATE"
        ),
        1235
    );
    assert_eq!(
        code(&mut s, "CREATE TABLE u (id INT PRIMARY KEY, g POINT)"),
        1235
    );
    assert_eq!(code(&mut s, "SET nosuch_var = 1"), 1193);
    assert_eq!(code(&mut s, "SELECT @@nosuch_var"), 1193);
    assert_eq!(code(&mut s, "SET autocommit = 'maybe'"), 1231);
    assert_eq!(
        code(&mut s, "SET transaction_isolation = 'SOMETIMES'"),
        1231
    );
    assert_eq!(code(&mut s, "SET wait_timeout = 'abc'"), 1232);
    assert_eq!(code(&mut s, "SET GLOBAL version = 'x'"), 1238);
    assert_eq!(code(&mut s, "SET max_connections = 10"), 1229);
    assert_eq!(code(&mut s, "SET GLOBAL warning_count = 1"), 1228);
    assert_eq!(code(&mut s, "INSERT INTO t (id, k) VALUES (1, 2, 3)"), 1136);
    assert_eq!(code(&mut s, "INSERT INTO t VALUES (2, 2)"), 1136);
    assert_eq!(code(&mut s, "INSERT INTO t (id, k) VALUES (2, NULL)"), 1048);
    assert_eq!(code(&mut s, "UPDATE t SET k = NULL WHERE id = 1"), 1048);
    assert_eq!(
        code(&mut s, "INSERT INTO t (id, k) VALUES (2, 'abc')"),
        1366
    );
    assert_eq!(
        code(&mut s, "INSERT INTO t (id, k, c) VALUES (2, 1, 'toolong')"),
        1406
    );
    assert_eq!(
        code(&mut s, "UPDATE t SET c = 'toolong' WHERE id = 1"),
        1406
    );
    assert_eq!(code(&mut s, "INSERT INTO t (id) VALUES (3)"), 1364);
    assert_eq!(
        code(&mut s, "INSERT INTO t (id, k) VALUES (99999999999, 1)"),
        1264
    );
    assert_eq!(code(&mut s, "SELECT NOSUCHFUNC(1)"), 1305);
    assert_eq!(code(&mut s, "SELECT * FROM t FORCE INDEX (nosuch)"), 1176);
    assert_eq!(code(&mut s, "DROP DATABASE nosuch"), 1008);
    assert_eq!(code(&mut s, "CREATE DATABASE sbtest"), 1007);
    // '0' and ' 7 ' are integers; the table is unchanged by the failed statements above.
    exec(&mut s, "INSERT INTO t (id, k) VALUES ('2', ' 7 ')");
    assert_eq!(
        q(&mut s, "SELECT id, k FROM t ORDER BY id"),
        vec![
            vec![tierdb_engine::Value::Int(1), tierdb_engine::Value::Int(1)],
            vec![tierdb_engine::Value::Int(2), tierdb_engine::Value::Int(7)]
        ]
    );
}

#[test]
fn engine_lock_errors_map_to_1213_and_1205() {
    let d: SqlError = EngineError::Deadlock.into();
    assert_eq!((d.code, d.state), (1213, "40001"));
    let l: SqlError = EngineError::LockWaitTimeout.into();
    assert_eq!((l.code, l.state), (1205, "HY000"));
}

/// KILL's keywords are read off text that may hold multi-byte characters where a keyword
/// would end (found by the `sql_text` fuzzer: it panicked slicing inside one).
#[test]
fn kill_with_multibyte_text_is_an_error_not_a_panic() {
    let e = env();
    let mut s = e.session(1);
    for sql in [
        "KILL \u{10FFAB}AB",
        "KILL Q\u{10FFAB}",
        "KILL QUERY \u{E9}\u{E9}",
        "KILL HA\u{E9}",
        "KILL CONNECTIO\u{E9} 5",
    ] {
        assert!(s.query(sql).is_err(), "{sql}");
    }
    assert_eq!(code(&mut s, "KILL 99999"), 1094);
}

/// MariaDB statements tierdb does not have (stored programs, FULLTEXT indexes, partitioned
/// tables, HANDLER) are refused with 1235 naming them, not as syntax errors; text that is
/// no statement stays a syntax error.
#[test]
fn unsupported_mariadb_statements_are_1235_not_syntax_errors() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v TEXT)");
    for (sql, names) in [
        (
            "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.v = 'x'",
            "TRIGGER",
        ),
        (
            "CREATE DEFINER=`root`@`localhost` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.v = 'x'",
            "TRIGGER",
        ),
        ("CREATE PROCEDURE p() SELECT 1", "PROCEDURE"),
        ("CREATE OR REPLACE PROCEDURE p() SELECT 1", "PROCEDURE"),
        ("CREATE FUNCTION f() RETURNS INT RETURN 1", "FUNCTION"),
        ("CREATE EVENT ev ON SCHEDULE EVERY 1 HOUR DO SELECT 1", "EVENT"),
        ("CREATE FULLTEXT INDEX ft ON t (v)", "FULLTEXT"),
        (
            "CREATE TABLE p (id INT PRIMARY KEY) PARTITION BY HASH(id) PARTITIONS 2",
            "PARTITION BY",
        ),
        ("HANDLER t OPEN", "HANDLER"),
    ] {
        let err = s.query(sql).expect_err(sql);
        assert_eq!(err.code, 1235, "{sql}: {err:?}");
        assert!(err.message.contains(names), "{sql}: {}", err.message);
    }
    assert_eq!(code(&mut s, "CREATE TABEL x (id INT)"), 1064);
    assert_eq!(code(&mut s, "SELEKT 1"), 1064);
}
