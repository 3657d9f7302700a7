//! `ALTER TABLE ... MODIFY / CHANGE / RENAME COLUMN / ALTER COLUMN ... DEFAULT` change the
//! catalog only, so they are limited to changes that keep every stored value in its form:
//!
//! - integer widths and signedness, text lengths, NOT NULL: every stored value is checked
//!   first (1265 at the first that does not fit, naming its row) and the table is unchanged
//!   after a refusal;
//! - a change of storage form (INT to VARCHAR, DECIMAL scale) or of the collation of a key
//!   column rewrites the rows instead (`alter_table_rewrites_rows_under_writers.rs`); one a
//!   stored value cannot take fails and leaves the table as it was;
//! - a statement prepared before the change is planned again: it never writes with the old
//!   rules (a NULL into the now NOT NULL column is 1048);
//! - after the change, values only the new definition allows go in, indexes still find rows,
//!   and the definition survives a reopen of the engine.

mod common;
use common::*;
use tierdb_engine::Value;
use tierdb_sql::Session;

#[test]
fn widening_checks_every_value_and_refusals_leave_the_table_as_it_was() {
    let e = env();
    let mut s = e.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, small TINYINT, name VARCHAR(4), d DECIMAL(5,2), KEY name (name))",
    );
    exec(
        &mut s,
        "INSERT INTO t VALUES (1, 1, 'ab', 1.50), (2, NULL, 'abcd', 2), (3, 100, NULL, 3)",
    );
    // Narrowing below a stored value: 1265 naming the row (in primary key order).
    let r = err(&mut s, "ALTER TABLE t MODIFY name VARCHAR(3)");
    assert_eq!(
        (r.code, r.message.as_str()),
        (1265, "Data truncated for column 'name' at row 2")
    );
    let r = err(&mut s, "ALTER TABLE t MODIFY small TINYINT NOT NULL");
    assert_eq!(
        (r.code, r.message.as_str()),
        (1265, "Data truncated for column 'small' at row 2")
    );
    // A change of stored form rewrites the rows; one a stored value cannot take changes
    // nothing.
    let r = err(&mut s, "ALTER TABLE t MODIFY name INT");
    assert_eq!(
        (r.code, r.message.as_str()),
        (1292, "Truncated incorrect INTEGER value: 'ab'")
    );
    let before = q(&mut s, "SHOW CREATE TABLE t");
    assert!(text(&before[0][1]).contains("`name` varchar(4) DEFAULT NULL"));
    assert!(text(&before[0][1]).contains("`small` tinyint(4) DEFAULT NULL"));
    // Widening: allowed, and the wider values go in.
    exec(&mut s, "ALTER TABLE t MODIFY small BIGINT UNSIGNED");
    exec(&mut s, "ALTER TABLE t MODIFY name VARCHAR(40)");
    exec(&mut s, "ALTER TABLE t MODIFY d DECIMAL(9,2) NOT NULL");
    exec(
        &mut s,
        "INSERT INTO t VALUES (4, 9000000000, 'a much longer name', 1234567.25)",
    );
    assert_eq!(
        q(&mut s, "SELECT id FROM t WHERE name = 'A MUCH LONGER NAME'")
            .iter()
            .map(|r| int(&r[0]))
            .collect::<Vec<_>>(),
        vec![4],
        "the index on the widened column finds the new row"
    );
    assert_eq!(
        err(&mut s, "INSERT INTO t VALUES (5, -1, 'x', 1)").code,
        1264
    );
}

#[test]
fn a_statement_prepared_before_the_change_is_planned_again() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(3))");
    let id = s
        .prepare("INSERT INTO t VALUES (?, ?)")
        .expect("prepare")
        .statement_id;
    s.execute(id, &[Value::Int(1), Value::Bytes(b"abc".to_vec())])
        .expect("insert before");
    let mut other = e.session(2);
    exec(&mut other, "ALTER TABLE t MODIFY v VARCHAR(3) NOT NULL");
    // The plan was made with the old (nullable) column; re-planned on the catalog change.
    let r = s.execute(id, &[Value::Int(2), Value::Null]);
    assert!(
        matches!(&r, Err(e) if e.code == 1048),
        "a NULL into the now NOT NULL column: {r:?}"
    );
    s.execute(id, &[Value::Int(3), Value::Bytes(b"xyz".to_vec())])
        .expect("insert after the change");
    assert_eq!(q(&mut s, "SELECT COUNT(*) FROM t")[0][0], Value::Int(2));
}

#[test]
fn renames_and_defaults_survive_a_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let open = || open_shared(dir.path());
    let shared = open();
    let mut s = Session::new(shared.clone(), 1, "root", "localhost", None).expect("session");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "USE d");
    exec(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, b INT, KEY b (b))",
    );
    exec(&mut s, "INSERT INTO t VALUES (1, 5)");
    exec(&mut s, "ALTER TABLE t RENAME COLUMN b TO c");
    exec(&mut s, "ALTER TABLE t ALTER COLUMN c SET DEFAULT 9");
    exec(&mut s, "ALTER TABLE t CHANGE c cc BIGINT DEFAULT 9");
    exec(&mut s, "INSERT INTO t (id) VALUES (2)");
    s.end();
    shared.engine().shutdown().expect("shutdown");
    drop(shared);

    let shared = open();
    let mut s = Session::new(shared.clone(), 1, "root", "localhost", Some("d")).expect("session");
    let ddl = text(&q(&mut s, "SHOW CREATE TABLE t")[0][1]);
    assert!(ddl.contains("`cc` bigint(20) DEFAULT 9"), "{ddl}");
    assert!(ddl.contains("KEY `b` (`cc`)"), "{ddl}");
    exec(&mut s, "INSERT INTO t (id) VALUES (3)");
    let rows: Vec<(i64, i64)> = q(&mut s, "SELECT id, cc FROM t WHERE cc >= 5 ORDER BY id")
        .iter()
        .map(|r| (int(&r[0]), int(&r[1])))
        .collect();
    assert_eq!(rows, vec![(1, 5), (2, 9), (3, 9)]);
}
