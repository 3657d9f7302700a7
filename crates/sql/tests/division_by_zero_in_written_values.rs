//! Division by zero in the values an INSERT or UPDATE writes is error 1365 (also through a
//! subquery), as MariaDB's default strict sql_mode; INSERT IGNORE and a sql_mode without
//! ERROR_FOR_DIVISION_BY_ZERO write NULL; a query still gets NULL.

mod common;

use common::*;

fn opt(v: &tierdb_engine::Value) -> Option<i64> {
    match v {
        tierdb_engine::Value::Null => None,
        other => Some(int(other)),
    }
}

#[test]
fn division_by_zero_in_written_values_follows_ignore_and_sql_mode() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, g INT NOT NULL, v INT)",
    );
    exec(&mut s, "INSERT INTO t VALUES (1, 1, 1)");
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (2, 1, 1 / 0)").code, 1365);
    assert_eq!(
        err(&mut s, "INSERT INTO t SELECT 2, 1, (SELECT 1 / 0)").code,
        1365
    );
    assert_eq!(
        err(&mut s, "UPDATE t SET v = (SELECT 1 / 0) WHERE id = 1").code,
        1365
    );
    // IGNORE and a lenient sql_mode write NULL.
    exec(&mut s, "INSERT IGNORE INTO t VALUES (3, 1, 1 / 0)");
    exec(&mut s, "SET sql_mode = ''");
    exec(&mut s, "INSERT INTO t VALUES (4, 1, 1 / 0)");
    exec(&mut s, "UPDATE t SET v = v / 0 WHERE id = 1");
    assert!(q(&mut s, "SELECT 1 / 0")[0][0].is_null());
    let got = q(&mut s, "SELECT id, v FROM t ORDER BY id");
    let have: Vec<(i64, Option<i64>)> = got.iter().map(|r| (int(&r[0]), opt(&r[1]))).collect();
    assert_eq!(have, vec![(1, None), (3, None), (4, None)]);
}
