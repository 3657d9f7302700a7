//! Arbitrary text (random bytes, and random sequences of SQL tokens) through
//! `Session::query` / `prepare` / `execute` returns results or errors, never panics.

mod common;
use common::*;
use proptest::prelude::*;
use tierdb_engine::Value;

const WORDS: &[&str] = &[
    "SELECT",
    "FROM",
    "WHERE",
    "t",
    "id",
    "k",
    "c",
    "*",
    ",",
    "(",
    ")",
    "=",
    "<",
    ">",
    "<=",
    "AND",
    "OR",
    "NOT",
    "IN",
    "BETWEEN",
    "LIKE",
    "'a%'",
    "1",
    "-1",
    "2.5",
    "NULL",
    "?",
    "ORDER",
    "BY",
    "DESC",
    "LIMIT",
    "GROUP",
    "HAVING",
    "COUNT(*)",
    "SUM(k)",
    "DISTINCT",
    "INSERT",
    "INTO",
    "VALUES",
    "UPDATE",
    "SET",
    "DELETE",
    "+",
    "-",
    "/",
    "DIV",
    "IS",
    "@@version",
    "@x",
    "CONCAT(",
    "SHOW",
    "TABLES",
    "VARIABLES",
    "STATUS",
    "EXPLAIN",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "CREATE",
    "TABLE",
    "DROP",
    "INDEX",
    "ON",
    "PRIMARY",
    "KEY",
    "INT",
    "CHAR(3)",
    "DEFAULT",
    "'x'",
    "AS",
    "u",
    ";",
    "FORCE",
    "USE",
    "autocommit",
    "0x41",
    "CAST(",
    "SIGNED",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "(SELECT",
    "t2",
    "18446744073709551616",
    "9223372036854775807",
];

/// One engine for all cases (opening one per case is slow); each case gets a new session
/// and a fresh table `t`.
fn setup(db: &str) -> ((), tierdb_sql::Session) {
    static ENV: std::sync::OnceLock<Env> = std::sync::OnceLock::new();
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let e = ENV.get_or_init(env);
    let mut s = e.session(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    exec(&mut s, &format!("CREATE DATABASE IF NOT EXISTS {db}"));
    exec(&mut s, &format!("USE {db}"));
    exec(&mut s, "DROP TABLE IF EXISTS t");
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT, c CHAR(3))",
    );
    exec(&mut s, "CREATE INDEX kk ON t (k)");
    exec(
        &mut s,
        "INSERT INTO t VALUES (1, 1, 'a'), (2, NULL, 'b'), (3, 3, NULL)",
    );
    ((), s)
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::Int),
        any::<f64>().prop_map(Value::Double),
        proptest::collection::vec(any::<u8>(), 0..8).prop_map(Value::Bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(sql in "\\PC{0,80}") {
        let (_e, mut s) = setup("d1");
        let _ = s.query(&sql);
        let _ = s.prepare(&sql);
    }

    #[test]
    fn random_token_soup_never_panics(words in proptest::collection::vec(proptest::sample::select(WORDS), 1..30), params in proptest::collection::vec(value(), 0..4)) {
        let (_e, mut s) = setup("d2");
        let sql = words.join(" ");
        let _ = s.query(&sql);
        if let Ok(p) = s.prepare(&sql) {
            let mut ps = params.clone();
            ps.resize(usize::from(p.param_count), Value::Int(1));
            let _ = s.execute(p.statement_id, &ps);
            let _ = s.execute(p.statement_id, &params);
        }
        prop_assert!(s.query("SELECT 1").is_ok());
    }
}

#[test]
fn pathological_inputs_are_refused_not_crashed() {
    let (_e, mut s) = setup("d3");
    let deep_parens = format!("SELECT {}1{}", "(".repeat(5000), ")".repeat(5000));
    assert!(s.query(&deep_parens).is_err());
    let long_chain = format!("SELECT 1{}", "+1".repeat(100_000));
    assert!(s.query(&long_chain).is_err());
    let long_and = format!(
        "SELECT * FROM t WHERE {}",
        vec!["id=1"; 50_000].join(" AND ")
    );
    assert!(s.query(&long_and).is_err());
    let nots = format!("SELECT {}1", "NOT ".repeat(10_000));
    assert!(s.query(&nots).is_err());
    let many_in = format!(
        "SELECT * FROM t WHERE id IN ({})",
        (0..20_000)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    if let Err(e) = s.query(&many_in) {
        panic!("{e}");
    }
    let big = format!("SELECT '{}'", "x".repeat(1 << 20));
    assert!(s.query(&big).is_ok());
    assert!(s.query("SELECT 9223372036854775807 + 1").is_err());
    assert!(s.query("SELECT -9223372036854775807 - 2").is_err());
    assert!(s.query("SELECT 1 / 0").is_ok());
}
