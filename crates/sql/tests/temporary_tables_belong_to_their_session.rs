//! A TEMPORARY table belongs to the session that made it: it hides the database's table of
//! the same name for that session only, no other session sees or lists it, a prepared
//! statement follows it as it comes and goes, and it is gone (its pages freed) when the
//! session ends, or, after a crash, when the engine opens again.

mod common;

use common::*;
use tierdb_engine::Value;
use tierdb_sql::Session;

/// Pages freed from dropped trees so far, after freeing what can be (the checkpointer may
/// have freed some first: the counter holds both).
fn pages_reclaimed(engine: &tierdb_engine::Engine) -> u64 {
    engine.reclaim_dropped(usize::MAX).expect("reclaim");
    engine
        .status()
        .into_iter()
        .find(|(k, _)| k == "Tierdb_pages_reclaimed")
        .and_then(|(_, v)| v.parse().ok())
        .expect("Tierdb_pages_reclaimed")
}

fn names(s: &mut Session, sql: &str) -> Vec<String> {
    q(s, sql).iter().map(|r| text(&r[0])).collect()
}

#[test]
fn a_temporary_table_hides_the_table_of_its_name_for_its_session_only() {
    let env = env();
    let mut a = env.session(1);
    let mut b = env.session(2);
    exec(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))");
    exec(&mut a, "INSERT INTO t VALUES (1, 'shared')");
    exec(
        &mut a,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, mine INT)",
    );
    exec(&mut a, "INSERT INTO t VALUES (7, 70)");
    assert_eq!(q(&mut a, "SELECT id, mine FROM t").len(), 1);
    assert_eq!(int(&q(&mut a, "SELECT mine FROM t")[0][0]), 70);
    // The other session reads the database's table, and cannot drop the TEMPORARY one.
    assert_eq!(text(&q(&mut b, "SELECT v FROM t")[0][0]), "shared");
    exec(&mut b, "CREATE TEMPORARY TABLE only_a (x INT)");
    exec(&mut b, "DROP TEMPORARY TABLE only_a");
    assert_eq!(err(&mut b, "DROP TEMPORARY TABLE t").code, 1051);
    // Neither lists it.
    for s in [&mut a, &mut b] {
        assert_eq!(names(s, "SHOW TABLES"), vec!["t".to_string()]);
        let n = q(
            s,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'sbtest'",
        );
        assert_eq!(int(&n[0][0]), 1);
    }
    // A name taken by a TEMPORARY table: 1050, or a note with IF NOT EXISTS.
    assert_eq!(err(&mut a, "CREATE TEMPORARY TABLE t (x INT)").code, 1050);
    exec(&mut a, "CREATE TEMPORARY TABLE IF NOT EXISTS t (x INT)");
    // DROP TABLE takes the TEMPORARY table first, then the database's.
    exec(&mut a, "DROP TABLE t");
    assert_eq!(text(&q(&mut a, "SELECT v FROM t")[0][0]), "shared");
    exec(&mut a, "DROP TABLE t");
    assert_eq!(err(&mut b, "SELECT * FROM t").code, 1146);
}

#[test]
fn a_prepared_statement_follows_a_temporary_table_as_it_comes_and_goes() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    exec(&mut s, "INSERT INTO t VALUES (1, 10)");
    let stmt = s
        .prepare("SELECT v FROM t WHERE id = ?")
        .expect("prepare")
        .statement_id;
    let run = |s: &mut Session| rows(s.execute(stmt, &[Value::Int(1)]).expect("execute"));
    assert_eq!(int(&run(&mut s)[0][0]), 10);
    exec(
        &mut s,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, v INT)",
    );
    exec(&mut s, "INSERT INTO t VALUES (1, 99)");
    assert_eq!(int(&run(&mut s)[0][0]), 99);
    exec(&mut s, "DROP TEMPORARY TABLE t");
    assert_eq!(int(&run(&mut s)[0][0]), 10);
}

#[test]
fn create_and_drop_temporary_table_leave_the_transaction_open() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE p (a INT)");
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO p VALUES (1)");
    exec(&mut s, "CREATE TEMPORARY TABLE x (c INT)");
    exec(&mut s, "INSERT INTO x VALUES (5)");
    exec(&mut s, "CREATE TEMPORARY TABLE y AS SELECT 7 AS c");
    exec(&mut s, "DROP TEMPORARY TABLE x");
    assert_eq!(err(&mut s, "SELECT * FROM x").code, 1146);
    exec(&mut s, "ROLLBACK");
    assert!(q(&mut s, "SELECT * FROM p").is_empty());
    // As MariaDB: the rows CREATE TEMPORARY TABLE ... SELECT wrote stay.
    assert_eq!(int(&q(&mut s, "SELECT c FROM y")[0][0]), 7);
    assert_eq!(err(&mut s, "SELECT * FROM x").code, 1146);
    // A dropped TEMPORARY table the transaction wrote is dropped once it ends.
    let engine = env.shared.engine().clone();
    let reclaimed = pages_reclaimed(&engine);
    exec(&mut s, "SET autocommit = 0");
    exec(&mut s, "CREATE TEMPORARY TABLE z (c INT PRIMARY KEY)");
    exec(&mut s, "INSERT INTO z VALUES (1), (2)");
    exec(&mut s, "DROP TEMPORARY TABLE z");
    exec(&mut s, "INSERT INTO p VALUES (9)");
    exec(&mut s, "COMMIT");
    exec(&mut s, "SET autocommit = 1");
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM p")[0][0]), 1);
    assert!(pages_reclaimed(&engine) > reclaimed);
    // Plain DROP TABLE commits the open transaction, also for a TEMPORARY table.
    exec(&mut s, "BEGIN");
    exec(&mut s, "INSERT INTO p VALUES (2)");
    exec(&mut s, "DROP TABLE y");
    exec(&mut s, "ROLLBACK");
    assert_eq!(
        int(&q(&mut s, "SELECT COUNT(*) FROM p WHERE a = 2")[0][0]),
        1
    );
}

#[test]
fn views_and_foreign_keys_never_reach_a_temporary_table() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE base (id INT PRIMARY KEY)");
    exec(&mut s, "INSERT INTO base VALUES (1), (2)");
    exec(&mut s, "CREATE VIEW v AS SELECT id FROM base");
    exec(&mut s, "CREATE TEMPORARY TABLE base (id INT PRIMARY KEY)");
    exec(&mut s, "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY)");
    // A view reads the database's table even while a TEMPORARY one hides it.
    assert_eq!(q(&mut s, "SELECT * FROM v").len(), 2);
    let e = err(&mut s, "CREATE VIEW w AS SELECT id FROM tmp");
    assert_eq!(
        (e.code, e.message.as_str()),
        (1352, "View's SELECT refers to a temporary table 'tmp'")
    );
    let e = err(
        &mut s,
        "CREATE TEMPORARY TABLE c (id INT, p INT, FOREIGN KEY (p) REFERENCES tmp (id))",
    );
    assert_eq!(e.code, 1005, "{e:?}");
}

#[test]
fn a_sessions_temporary_tables_are_dropped_and_their_pages_freed_when_it_ends() {
    let env = env();
    let engine = env.shared.engine().clone();
    let mut s = env.session(1);
    exec(&mut s, "CREATE TABLE keep (id INT PRIMARY KEY)");
    let before = engine.data_pages_allocated().expect("pages");
    let reclaimed = pages_reclaimed(&engine);
    exec(
        &mut s,
        "CREATE TEMPORARY TABLE big (id INT PRIMARY KEY, c CHAR(200), KEY (c))",
    );
    for chunk in (0..3000).collect::<Vec<i64>>().chunks(300) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, '{}')", "y".repeat(150)))
            .collect();
        exec(
            &mut s,
            &format!("INSERT INTO big VALUES {}", values.join(",")),
        );
    }
    let grown = engine.data_pages_allocated().expect("pages");
    assert!(grown > before + 20, "{before} -> {grown}");
    assert_eq!(pages_reclaimed(&engine), reclaimed);
    s.end();
    let freed = pages_reclaimed(&engine) - reclaimed;
    assert!(
        freed + 10 >= grown - before,
        "the TEMPORARY table's {} pages were not given back: {freed} freed",
        grown - before
    );
    let mut t = env.session(2);
    assert_eq!(names(&mut t, "SHOW TABLES"), vec!["keep".to_string()]);
}

#[test]
fn temporary_tables_left_by_a_crash_are_dropped_when_the_engine_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let shared = open_shared(dir.path());
    let mut s = Session::new(shared.clone(), 1, "root", "localhost", None).expect("session");
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "USE d");
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY)");
    exec(&mut s, "INSERT INTO t VALUES (1)");
    exec(
        &mut s,
        "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, c CHAR(200))",
    );
    let values: Vec<String> = (0..2000)
        .map(|i| format!("({i}, '{}')", "z".repeat(180)))
        .collect();
    exec(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(",")),
    );
    // A crash: the session never ends, the engine is not shut down.
    std::mem::forget(s);
    drop(shared);

    let shared = open_shared(dir.path());
    let engine = shared.engine().clone();
    let freed = pages_reclaimed(&engine);
    assert!(
        freed > 20,
        "the crashed session's TEMPORARY table still holds its pages ({freed} freed)"
    );
    let mut s = Session::new(shared.clone(), 2, "root", "localhost", Some("d")).expect("session");
    assert_eq!(names(&mut s, "SHOW TABLES"), vec!["t".to_string()]);
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM t")[0][0]), 1);
    // Its name is free for a new TEMPORARY table.
    exec(&mut s, "CREATE TEMPORARY TABLE t (x INT)");
    exec(&mut s, "INSERT INTO t VALUES (3)");
    assert_eq!(int(&q(&mut s, "SELECT x FROM t")[0][0]), 3);
}

#[test]
fn a_temporary_name_is_free_again_once_another_session_dropped_its_database() {
    let env = env();
    let mut a = env.session(1);
    let mut b = env.session(2);
    exec(&mut a, "CREATE DATABASE x");
    exec(&mut a, "CREATE TEMPORARY TABLE x.t (v INT)");
    exec(&mut a, "INSERT INTO x.t VALUES (1)");
    exec(&mut b, "DROP DATABASE x");
    exec(&mut a, "CREATE DATABASE x");
    assert_eq!(err(&mut a, "SELECT * FROM x.t").code, 1146);
    exec(&mut a, "CREATE TEMPORARY TABLE x.t (w INT)");
    exec(&mut a, "INSERT INTO x.t VALUES (2)");
    assert_eq!(int(&q(&mut a, "SELECT w FROM x.t")[0][0]), 2);
    exec(&mut a, "DROP TEMPORARY TABLE x.t");
    assert_eq!(err(&mut a, "SELECT * FROM x.t").code, 1146);
}
