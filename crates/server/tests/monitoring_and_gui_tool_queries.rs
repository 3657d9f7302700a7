//! What monitoring agents and GUI tools ask at connect time or on every scrape: SHOW
//! statements about objects tierdb has none of answer MariaDB 10.11's columns and no rows
//! (column lists recorded from MariaDB 10.11), INFORMATION_SCHEMA's status and variable
//! tables hold what SHOW STATUS / SHOW VARIABLES show, and LOAD_FILE reads a server file.

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};

fn connect(server: &TestServer, db: Option<&str>) -> Conn {
    Conn::new(Opts::from_url(&server.url(db)).unwrap()).expect("connect")
}

/// The column names of `sql`'s result set and its row count.
fn columns(c: &mut Conn, sql: &str) -> (Vec<String>, usize) {
    let mut r = c.query_iter(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let names = r
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    let rows = r.by_ref().count();
    (names, rows)
}

const ROUTINES: &str = "Db Name Type Definer Modified Created Security_type Comment \
    character_set_client collation_connection Database Collation";
const TRIGGERS: &str = "Trigger Event Table Statement Timing Created sql_mode Definer \
    character_set_client collation_connection Database Collation";
const EVENTS: &str = "Db Name Definer Time zone Type Execute at Interval value Interval field \
    Starts Ends Status Originator character_set_client collation_connection Database Collation";

/// Joins column names with spaces (names with a space in them read the same way).
fn joined(names: &[String]) -> String {
    names.join(" ")
}

#[test]
fn shows_of_routines_triggers_events_and_replicas_answer_empty_with_mariadbs_columns() {
    let server = TestServer::start();
    let mut c = connect(&server, None);
    c.query_drop("CREATE DATABASE shop").unwrap();
    for (sql, want) in [
        ("SHOW FUNCTION STATUS", ROUTINES),
        ("SHOW PROCEDURE STATUS WHERE Db = 'shop'", ROUTINES),
        ("SHOW FUNCTION STATUS LIKE 'f%'", ROUTINES),
        ("SHOW TRIGGERS FROM shop", TRIGGERS),
        ("SHOW TRIGGERS IN shop LIKE 'orders'", TRIGGERS),
        ("SHOW EVENTS FROM shop WHERE Name = 'x'", EVENTS),
    ] {
        let (names, rows) = columns(&mut c, sql);
        assert_eq!(joined(&names), want, "{sql}");
        assert_eq!(rows, 0, "{sql}");
    }
    // Without a database: 1046, as MariaDB; an unknown one: 1049.
    let e = c.query_drop("SHOW TRIGGERS").unwrap_err().to_string();
    assert!(e.contains("1046"), "{e}");
    let e = c
        .query_drop("SHOW EVENTS FROM nope")
        .unwrap_err()
        .to_string();
    assert!(e.contains("1049"), "{e}");
    let mut d = connect(&server, Some("shop"));
    assert_eq!(columns(&mut d, "SHOW TRIGGERS").1, 0);
    // Replication status: tierdb replicates from no server.
    let (names, rows) = columns(&mut c, "SHOW SLAVE STATUS");
    assert_eq!(rows, 0);
    assert_eq!(names.len(), 54);
    assert_eq!(names[0], "Slave_IO_State");
    assert_eq!(names[32], "Seconds_Behind_Master");
    assert_eq!(names[53], "Replicate_Rewrite_DB");
    assert_eq!(columns(&mut c, "SHOW REPLICA STATUS").0, names);
    let (all, rows) = columns(&mut c, "SHOW ALL SLAVES STATUS");
    assert_eq!(rows, 0);
    assert_eq!(all.len(), 62);
    assert_eq!(&all[..2], ["Connection_name", "Slave_SQL_State"]);
    assert_eq!(&all[2..56], names.as_slice());
    assert_eq!(all[61], "Gtid_Slave_Pos");
}

#[test]
fn information_schema_status_and_variables_match_show() {
    let server = TestServer::start();
    let mut c = connect(&server, None);
    let before: u64 = c
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_SELECT'",
        )
        .unwrap()
        .unwrap();
    for _ in 0..5 {
        let _: Option<u64> = c.query_first("SELECT 1").unwrap();
    }
    let after: u64 = c
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_SELECT'",
        )
        .unwrap()
        .unwrap();
    assert!(after >= before + 5, "{before} -> {after}");
    // Every SHOW GLOBAL VARIABLES row is a GLOBAL_VARIABLES row, name in capitals.
    let shown: Vec<(String, String)> = c.query("SHOW GLOBAL VARIABLES").unwrap();
    let listed: Vec<(String, String)> = c
        .query("SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES")
        .unwrap();
    assert_eq!(shown.len(), listed.len());
    for ((n, v), (ln, lv)) in shown.iter().zip(&listed) {
        assert_eq!((n.to_ascii_uppercase(), v), (ln.clone(), lv), "{n}");
    }
    // SESSION_VARIABLES sees the session's own values, GLOBAL_VARIABLES does not.
    c.query_drop("SET SESSION sql_mode = 'ANSI_QUOTES'")
        .unwrap();
    let session: String = c
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES WHERE VARIABLE_NAME = 'SQL_MODE'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(session, "ANSI_QUOTES");
    let global: String = c
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'SQL_MODE'",
        )
        .unwrap()
        .unwrap();
    assert_ne!(global, "ANSI_QUOTES");
    let uptime: u64 = c
        .query_first(
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'UPTIME'",
        )
        .unwrap()
        .unwrap();
    assert!(uptime < 3600);
    let tables: Vec<String> = c
        .query("SHOW TABLES FROM information_schema LIKE '%\\_STATUS'")
        .unwrap();
    assert_eq!(tables, ["GLOBAL_STATUS", "SESSION_STATUS"]);
}

#[test]
fn load_file_reads_a_server_file_for_accounts_with_file() {
    let server = TestServer::start();
    let mut c = connect(&server, None);
    let path = server.dir.path().join("note.bin");
    std::fs::write(&path, b"\x00bytes\xff\n").unwrap();
    let got: Option<Vec<u8>> = c
        .query_first(format!("SELECT LOAD_FILE('{}')", path.display()))
        .unwrap()
        .unwrap();
    assert_eq!(got.as_deref(), Some(&b"\x00bytes\xff\n"[..]));
    for missing in [
        format!("'{}'", server.dir.path().join("none").display()),
        format!("'{}'", server.dir.path().display()),
        "NULL".to_string(),
    ] {
        let got: Option<Vec<u8>> = c
            .query_first(format!("SELECT LOAD_FILE({missing})"))
            .unwrap()
            .unwrap();
        assert_eq!(got, None, "{missing}");
    }
    c.query_drop("CREATE USER app@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT SELECT ON *.* TO app@'%'").unwrap();
    let mut app =
        Conn::new(Opts::from_url(&format!("mysql://app:pw@127.0.0.1:{}/", server.port)).unwrap())
            .unwrap();
    let got: Option<Vec<u8>> = app
        .query_first(format!("SELECT LOAD_FILE('{}')", path.display()))
        .unwrap()
        .unwrap();
    assert_eq!(got, None, "an account without FILE reads nothing");
    c.query_drop("GRANT FILE ON *.* TO app@'%'").unwrap();
    let got: Option<Vec<u8>> = app
        .query_first(format!("SELECT LOAD_FILE('{}')", path.display()))
        .unwrap()
        .unwrap();
    assert_eq!(got.as_deref(), Some(&b"\x00bytes\xff\n"[..]));
}
