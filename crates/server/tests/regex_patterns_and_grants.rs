//! Regular expressions from clients (patterns as parameters, bad and hostile patterns) and
//! SHOW GRANTS, through a real MySQL client crate.
//!
//! A pattern is user input: a malformed one is error 1139 and the connection goes on; one
//! that backtracking engines take exponential time over answers at once (the `regex` crate
//! matches in linear time); an oversized one is refused, not compiled without bound.

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::time::{Duration, Instant};

fn code_of(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(m) => m.code,
        other => panic!("not a server error: {other:?}"),
    }
}

#[test]
fn patterns_from_clients_match_fail_cleanly_and_never_hang() {
    let server = TestServer::start();
    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    c.query_drop("CREATE DATABASE re").unwrap();
    c.query_drop("USE re").unwrap();
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(100), b VARBINARY(100))")
        .unwrap();
    c.query_drop(
        "INSERT INTO t VALUES (1, 'Order #123', 'Order #123'), (2, 'invoice 77', 'INVOICE'), (3, NULL, NULL)",
    )
    .unwrap();

    // The pattern as a prepared statement's parameter (binary protocol), changed per run.
    let stmt = c
        .prep("SELECT id FROM t WHERE s REGEXP ? ORDER BY id")
        .unwrap();
    let ids: Vec<i64> = c.exec(&stmt, ("^order",)).unwrap();
    assert_eq!(ids, vec![1], "case-insensitive on a text column");
    let ids: Vec<i64> = c.exec(&stmt, ("[0-9]{2,}",)).unwrap();
    assert_eq!(ids, vec![1, 2]);
    let e = c.exec::<i64, _, _>(&stmt, ("(",)).unwrap_err();
    assert_eq!(code_of(e), 1139, "a malformed pattern is 1139");
    // A binary column compares bytes.
    let ids: Vec<i64> = c
        .query("SELECT id FROM t WHERE b REGEXP '^invoice' ORDER BY id")
        .unwrap();
    assert!(
        ids.is_empty(),
        "binary operands are case-sensitive: {ids:?}"
    );
    let r: Option<String> = c
        .exec_first(
            "SELECT REGEXP_REPLACE(s, ?, ?) FROM t WHERE id = 1",
            ("#([0-9]+)", "no. \\1"),
        )
        .unwrap();
    assert_eq!(r.as_deref(), Some("Order no. 123"));

    // Errors name the problem and leave the connection serving.
    for bad in [
        "SELECT 'a' REGEXP '[z-a]'",
        "SELECT 'a' REGEXP '(?<n'",
        "SELECT REGEXP_SUBSTR('a', '\\\\')",
    ] {
        let e = c.query_drop(bad).unwrap_err();
        assert_eq!(code_of(e), 1139, "{bad}");
    }
    // Back-references are not in the `regex` crate's language: 1139, not a wrong answer.
    assert_eq!(
        code_of(c.query_drop("SELECT 'aa' REGEXP '(a)\\\\1'").unwrap_err()),
        1139
    );

    // A pattern that makes backtracking engines run for ages, on a 30-character subject
    // (2^30 paths): answered at once.
    let started = Instant::now();
    let m: Option<i64> = c
        .query_first(format!(
            "SELECT '{}' REGEXP '^(a+)+$'",
            "a".repeat(30) + "b"
        ))
        .unwrap();
    assert_eq!(m, Some(0));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "took {:?}",
        started.elapsed()
    );
    // An oversized pattern is refused instead of compiled without bound.
    let huge = format!("SELECT 'x' REGEXP '{}'", "(a{1000}){1000}");
    assert_eq!(code_of(c.query_drop(huge).unwrap_err()), 1139);

    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(3), "the connection still serves");
}

#[test]
fn show_grants_names_the_session_account() {
    let server = TestServer::start();
    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    let who: Option<String> = c.query_first("SELECT CURRENT_USER()").unwrap();
    let who = who.unwrap();
    let (user, host) = who.split_once('@').unwrap();
    for q in [
        "SHOW GRANTS".to_string(),
        "SHOW GRANTS FOR CURRENT_USER".to_string(),
        "SHOW GRANTS FOR CURRENT_USER()".to_string(),
        format!("SHOW GRANTS FOR '{user}'@'{host}'"),
        format!("SHOW GRANTS FOR {user}@'{host}'"),
    ] {
        let rows: Vec<String> = c.query(&q).unwrap();
        assert_eq!(
            rows,
            vec![format!(
                "GRANT ALL PRIVILEGES ON *.* TO `{user}`@`{host}` WITH GRANT OPTION"
            )],
            "{q}"
        );
    }
    let e = c.query_drop("SHOW GRANTS FOR 'nobody'@'%'").unwrap_err();
    assert_eq!(code_of(e), 1141);
}
