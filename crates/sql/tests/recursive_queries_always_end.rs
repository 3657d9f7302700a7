//! A recursive WITH query always ends: one that would recurse forever stops with error 1931
//! after `max_recursive_iterations` iterations (or as soon as its reader's LIMIT is met),
//! UNION DISTINCT ends at a cycle, and deep recursions within the limit run to the end.

mod common;

use common::*;

#[test]
fn recursion_without_end_stops_at_the_iteration_limit_or_the_limit_clause() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "SET max_recursive_iterations = 50");
    let e = err(
        &mut s,
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c",
    );
    assert_eq!(e.code, 1931, "{}", e.message);
    assert!(
        e.message.contains("max_recursive_iterations = 50"),
        "{}",
        e.message
    );
    // The reader's LIMIT stops it first (rows are produced as they are made).
    let got = q(
        &mut s,
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c LIMIT 3",
    );
    assert_eq!(
        got.iter().map(|r| int(&r[0])).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    // Several recursive parts are refused; rows doubling per iteration (a self-join of the
    // work table) stop at the limit.
    let e = err(
        &mut s,
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n FROM c UNION ALL SELECT n FROM c) SELECT COUNT(*) FROM c",
    );
    assert_eq!(e.code, 1235, "{}", e.message);
    let started = std::time::Instant::now();
    let e = err(
        &mut s,
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT c.n + d.n FROM c, (SELECT 1 AS n UNION ALL SELECT 2) AS d) SELECT COUNT(*) FROM c",
    );
    assert_eq!(e.code, 1931, "{}", e.message);
    assert!(
        e.message.contains("more than 4000000 rows"),
        "{}",
        e.message
    );
    eprintln!("doubling recursion stopped after {:?}", started.elapsed());

    // Strings growing per iteration: CONCAT stops at 16 MiB (NULL, as MariaDB), and the
    // query's bytes are bounded too.
    let got = q(
        &mut s,
        "WITH RECURSIVE r(n, s) AS (SELECT 1, CAST('a' AS CHAR(10)) UNION ALL SELECT n + 1, CONCAT(s, s) FROM r WHERE n < 40) SELECT MAX(LENGTH(s)), COUNT(*) FROM r",
    );
    assert_eq!(
        got[0].iter().map(int).collect::<Vec<_>>(),
        vec![1 << 24, 40]
    );
    let e = err(
        &mut s,
        "WITH RECURSIVE r(n, s) AS (SELECT 1, REPEAT('x', 10000000) UNION ALL SELECT n + 1, s FROM r WHERE n < 40) SELECT COUNT(*) FROM r",
    );
    assert_eq!(e.code, 1931, "{}", e.message);
    assert!(e.message.contains("256 MiB"), "{}", e.message);

    // Within the limit a deep recursion runs to its end.
    exec(&mut s, "SET max_recursive_iterations = 20000");
    let got = q(
        &mut s,
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10000) SELECT COUNT(*), SUM(n), MAX(n) FROM c",
    );
    assert_eq!(
        got[0].iter().map(int).collect::<Vec<_>>(),
        vec![10000, 50_005_000, 10000]
    );
}

#[test]
fn union_distinct_ends_at_a_cycle_in_the_data() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE edge (a INT, b INT, PRIMARY KEY (a, b))",
    );
    // 1 -> 2 -> 3 -> 1 (a cycle) and 3 -> 4.
    exec(
        &mut s,
        "INSERT INTO edge VALUES (1, 2), (2, 3), (3, 1), (3, 4)",
    );
    let got = q(
        &mut s,
        "WITH RECURSIVE reach(n) AS (SELECT 1 UNION SELECT e.b FROM reach r JOIN edge e ON e.a = r.n) SELECT n FROM reach ORDER BY n",
    );
    assert_eq!(
        got.iter().map(|r| int(&r[0])).collect::<Vec<_>>(),
        vec![1, 2, 3, 4]
    );
    // With UNION ALL the same walk never ends: the limit stops it.
    exec(&mut s, "SET max_recursive_iterations = 30");
    let e = err(
        &mut s,
        "WITH RECURSIVE reach(n) AS (SELECT 1 UNION ALL SELECT e.b FROM reach r JOIN edge e ON e.a = r.n) SELECT COUNT(*) FROM reach",
    );
    assert_eq!(e.code, 1931);
}

#[test]
fn recursive_references_outside_the_steps_from_are_refused() {
    let env = env();
    let mut s = env.session(1);
    for (sql, code) in [
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n IN (SELECT n FROM c)) SELECT * FROM c", 4008),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT COUNT(*) FROM c) SELECT * FROM c", 4008),
        ("WITH RECURSIVE c(n) AS (SELECT n FROM c UNION ALL SELECT 1) SELECT * FROM c", 4007),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n, n FROM c) SELECT * FROM c", 1222),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c ORDER BY n LIMIT 2) SELECT * FROM c", 1235),
        ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT * FROM c FOR UPDATE", 1235),
    ] {
        assert_eq!(err(&mut s, sql).code, code, "{sql}");
    }
}
