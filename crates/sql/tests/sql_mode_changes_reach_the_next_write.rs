//! A session keeps what its sql_mode says about written values until a variable changes:
//! every change (its own SET, SET GLOBAL seen by sessions that did not set their own, a
//! prepared statement run again after a change) reaches the very next write.

mod common;

use common::*;

const TOO_LONG: &str = "INSERT INTO t VALUES (?, 'abcdef')";

fn insert(s: &mut tierdb_sql::Session, id: i64) -> Result<(), u16> {
    s.query(&TOO_LONG.replace('?', &id.to_string()))
        .map(|_| ())
        .map_err(|e| e.code)
}

#[test]
fn strictness_follows_every_sql_mode_change() {
    let env = env();
    let mut a = env.session(1);
    let mut b = env.session(2);
    exec(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(3))");
    // Default (strict): too long is error 1406, for both sessions.
    assert_eq!(insert(&mut a, 1), Err(1406));
    assert_eq!(insert(&mut b, 1), Err(1406));
    // A session's own change reaches its next write, not the other session's.
    exec(&mut a, "SET sql_mode = ''");
    assert_eq!(insert(&mut a, 1), Ok(()));
    assert_eq!(insert(&mut b, 2), Err(1406));
    exec(&mut a, "SET SESSION sql_mode = 'STRICT_TRANS_TABLES'");
    assert_eq!(insert(&mut a, 3), Err(1406));
    // A global change reaches a session that has no value of its own.
    exec(&mut a, "SET GLOBAL sql_mode = ''");
    assert_eq!(insert(&mut b, 4), Ok(()));
    assert_eq!(insert(&mut a, 5), Err(1406), "a's own value still holds");
    exec(&mut a, "SET GLOBAL sql_mode = 'STRICT_ALL_TABLES'");
    assert_eq!(insert(&mut b, 6), Err(1406));
    // Prepared: the same statement follows the change made between two executions.
    exec(
        &mut b,
        "PREPARE p FROM 'INSERT INTO t VALUES (?, ''abcdef'')'",
    );
    exec(&mut b, "SET @i = 7");
    assert_eq!(
        b.query("EXECUTE p USING @i").map_err(|e| e.code).err(),
        Some(1406)
    );
    exec(
        &mut b,
        "SET sql_mode = 'TRADITIONAL,NO_ENGINE_SUBSTITUTION'",
    );
    assert_eq!(
        b.query("EXECUTE p USING @i").map_err(|e| e.code).err(),
        Some(1406)
    );
    exec(&mut b, "SET sql_mode = 'NO_ENGINE_SUBSTITUTION'");
    assert!(b.query("EXECUTE p USING @i").is_ok());
    let got: Vec<(i64, String)> = q(&mut a, "SELECT id, c FROM t ORDER BY id")
        .iter()
        .map(|r| (int(&r[0]), text(&r[1])))
        .collect();
    assert_eq!(
        got,
        vec![(1, "abc".into()), (4, "abc".into()), (7, "abc".into())]
    );
}

#[test]
fn foreign_key_checks_follow_every_change() {
    let env = env();
    let mut a = env.session(1);
    let mut b = env.session(2);
    exec(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    exec(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES p (id))",
    );
    let orphan = |s: &mut tierdb_sql::Session, id: i64| {
        s.query(&format!("INSERT INTO c VALUES ({id}, 99)"))
            .map(|_| ())
            .map_err(|e| e.code)
    };
    assert_eq!(orphan(&mut a, 1), Err(1452));
    exec(&mut a, "SET foreign_key_checks = 0");
    assert_eq!(orphan(&mut a, 1), Ok(()));
    assert_eq!(orphan(&mut b, 2), Err(1452), "b keeps its own setting");
    exec(&mut a, "SET foreign_key_checks = 1");
    assert_eq!(orphan(&mut a, 3), Err(1452));
    exec(&mut a, "SET GLOBAL foreign_key_checks = 0");
    assert_eq!(orphan(&mut b, 4), Ok(()), "b has no value of its own");
    exec(&mut a, "SET GLOBAL foreign_key_checks = 1");
    assert_eq!(orphan(&mut b, 5), Err(1452));
}
