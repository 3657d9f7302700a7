//! `LOCK TABLES` / `UNLOCK TABLES` and the `ALTER TABLE` forms that mysqldump output and
//! schema tools send.
//!
//! - a READ lock keeps every writer out (the holder gets 1099, others wait and time out with
//!   1205) until UNLOCK TABLES; plain reads are not blocked;
//! - a WRITE lock lets only its session write; another session's write waits for the unlock;
//! - taking a lock waits for another session's open writing transaction;
//! - under LOCK TABLES a statement may use only locked tables (1100), DDL is refused (1192),
//!   BEGIN and the end of the session release the locks;
//! - `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS` are accepted no-ops; `ADD INDEX`/`ADD KEY`
//!   and `DROP INDEX` change the indexes; other changes are 1235.

mod common;

use common::*;
use std::time::{Duration, Instant};

fn code(s: &mut tierdb_sql::Session, sql: &str) -> u16 {
    err(s, sql).code
}

#[test]
fn a_read_lock_keeps_every_writer_out_until_unlock() {
    let env = env_with_small_table(10);
    let mut holder = env.session(1);
    let mut other = env.session(2);
    exec(&mut other, "CREATE TABLE u (id INT PRIMARY KEY)");
    exec(&mut holder, "LOCK TABLES t READ");
    assert_eq!(
        q(&mut holder, "SELECT COUNT(*) FROM t")[0][0],
        int_value(10)
    );
    assert_eq!(code(&mut holder, "INSERT INTO t VALUES (100, 1, 1)"), 1099);
    assert_eq!(code(&mut holder, "SELECT * FROM u"), 1100);
    assert_eq!(q(&mut other, "SELECT COUNT(*) FROM t")[0][0], int_value(10));
    let t0 = Instant::now();
    assert_eq!(code(&mut other, "UPDATE t SET v = 1 WHERE id = 1"), 1205);
    assert!(t0.elapsed() >= Duration::from_millis(900));
    exec(&mut other, "INSERT INTO u VALUES (1)");
    exec(&mut holder, "UNLOCK TABLES");
    exec(&mut other, "UPDATE t SET v = 1 WHERE id = 1");
    exec(&mut holder, "INSERT INTO u VALUES (2)");
}

#[test]
fn a_write_lock_lets_only_its_session_write() {
    let env = env_with_small_table(10);
    exec(
        &mut env.session(9),
        "SET GLOBAL innodb_lock_wait_timeout = 5",
    );
    let mut holder = env.session(1);
    exec(&mut holder, "LOCK TABLES t WRITE");
    exec(&mut holder, "INSERT INTO t VALUES (100, 1, 1)");
    exec(&mut holder, "UPDATE t SET v = 7 WHERE id = 2");
    let shared = env.shared.clone();
    let waiter = std::thread::spawn(move || {
        let mut s = tierdb_sql::Session::new(shared, 2, "root", "localhost", Some("sbtest"))
            .expect("session");
        let t0 = Instant::now();
        s.query("UPDATE t SET v = 8 WHERE id = 2")
            .expect("update after unlock");
        t0.elapsed()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !waiter.is_finished(),
        "another session wrote a WRITE-locked table"
    );
    exec(&mut holder, "UNLOCK TABLES");
    assert!(waiter.join().expect("waiter") >= Duration::from_millis(250));
    assert_eq!(
        q(&mut holder, "SELECT v FROM t WHERE id = 2")[0][0],
        int_value(8)
    );
}

#[test]
fn taking_a_lock_waits_for_another_sessions_open_writes() {
    let env = env_with_small_table(10);
    let mut writer = env.session(1);
    let mut locker = env.session(2);
    exec(&mut writer, "BEGIN");
    exec(&mut writer, "UPDATE t SET v = 3 WHERE id = 3");
    assert_eq!(code(&mut locker, "LOCK TABLES t READ"), 1205);
    // A failed LOCK TABLES holds nothing.
    exec(&mut writer, "UPDATE t SET v = 4 WHERE id = 4");
    exec(&mut writer, "COMMIT");
    exec(&mut locker, "LOCK TABLES t READ");
    assert_eq!(
        q(
            &mut locker,
            "SELECT v FROM t WHERE id IN (3, 4) ORDER BY id"
        ),
        vec![vec![int_value(3)], vec![int_value(4)]]
    );
}

#[test]
fn ddl_is_refused_and_begin_or_the_session_end_release_the_locks() {
    let env = env_with_small_table(5);
    let mut a = env.session(1);
    let mut b = env.session(2);
    exec(&mut a, "LOCK TABLES t WRITE");
    assert_eq!(code(&mut a, "CREATE TABLE v (id INT PRIMARY KEY)"), 1192);
    assert_eq!(code(&mut a, "DROP TABLE t"), 1192);
    exec(&mut a, "ALTER TABLE t DISABLE KEYS");
    exec(&mut a, "/*!40000 ALTER TABLE `t` ENABLE KEYS */");
    exec(&mut a, "BEGIN");
    exec(&mut b, "UPDATE t SET v = 1 WHERE id = 1");
    exec(&mut a, "COMMIT");
    exec(&mut a, "LOCK TABLES t WRITE");
    a.end();
    exec(&mut b, "UPDATE t SET v = 2 WHERE id = 1");
    assert_eq!(code(&mut b, "ALTER TABLE nosuch DISABLE KEYS"), 1146);
}

#[test]
fn alter_table_adds_and_drops_indexes() {
    let env = env_with_small_table(50);
    let mut s = env.session(1);
    exec(&mut s, "ALTER TABLE t ADD INDEX v_idx (v)");
    exec(&mut s, "ALTER TABLE t ADD KEY kv (k, v)");
    let names: Vec<String> = q(&mut s, "SHOW INDEX FROM t")
        .iter()
        .map(|r| text(&r[2]))
        .collect();
    assert!(names.contains(&"v_idx".to_string()), "{names:?}");
    assert!(names.contains(&"kv".to_string()), "{names:?}");
    exec(&mut s, "UPDATE t SET v = id % 3");
    assert_eq!(
        q(
            &mut s,
            "SELECT COUNT(*) FROM t FORCE INDEX (v_idx) WHERE v = 1"
        )[0][0],
        int_value(17)
    );
    exec(&mut s, "ALTER TABLE t DROP INDEX v_idx");
    exec(&mut s, "ALTER TABLE t ALGORITHM = INPLACE, LOCK = NONE");
    assert!(!q(&mut s, "SHOW INDEX FROM t")
        .iter()
        .any(|r| text(&r[2]) == "v_idx"));
    // Several changes at once (a rebuild of the table); an unsupported one is still 1235.
    exec(&mut s, "ALTER TABLE t ADD INDEX a (v), ADD INDEX b (k)");
    let names: Vec<String> = q(&mut s, "SHOW INDEX FROM t")
        .iter()
        .map(|r| text(&r[2]))
        .collect();
    assert!(names.contains(&"a".to_string()) && names.contains(&"b".to_string()));
    assert_eq!(
        q(&mut s, "SELECT COUNT(*) FROM t FORCE INDEX (a) WHERE v = 1")[0][0],
        int_value(17)
    );
    assert_eq!(
        code(
            &mut s,
            "ALTER TABLE t ADD INDEX c (v), ADD CONSTRAINT positive CHECK (v > 0)"
        ),
        1235
    );
}
