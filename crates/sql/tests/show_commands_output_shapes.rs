//! SHOW statements return MySQL/MariaDB-shaped result sets (column names, row shapes).

mod common;
use common::*;
use tierdb_sql::{QueryResult, Session};

fn names(s: &mut Session, sql: &str) -> (Vec<String>, Vec<Vec<String>>) {
    match exec(s, sql) {
        QueryResult::Rows { columns, rows } => (
            columns.into_iter().map(|c| c.name).collect(),
            rows.iter().map(|r| r.iter().map(text).collect()).collect(),
        ),
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn show_shapes() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) /*! ENGINE = innodb */");
    exec(&mut s, "CREATE INDEX k_1 ON sbtest1(k)");

    let (c, r) = names(&mut s, "SHOW DATABASES");
    assert_eq!(c, ["Database"]);
    assert!(r.iter().any(|x| x[0] == "sbtest"));
    let (c, r) = names(&mut s, "SHOW TABLES");
    assert_eq!(c, ["Tables_in_sbtest"]);
    assert_eq!(r, vec![vec!["sbtest1".to_string()]]);
    let (_, r) = names(&mut s, "SHOW TABLES LIKE 'nomatch%'");
    assert!(r.is_empty());
    let (c, _) = names(&mut s, "SHOW FULL TABLES");
    assert_eq!(c, ["Tables_in_sbtest", "Table_type"]);

    let (c, r) = names(&mut s, "SHOW COLUMNS FROM sbtest1");
    assert_eq!(c, ["Field", "Type", "Null", "Key", "Default", "Extra"]);
    assert_eq!(
        r[0],
        ["id", "int(11)", "NO", "PRI", "NULL", "auto_increment"]
    );
    assert_eq!(r[1], ["k", "int(11)", "NO", "MUL", "0", ""]);
    assert_eq!(r[2], ["c", "char(120)", "NO", "", "", ""]);
    let (c, _) = names(&mut s, "SHOW FULL COLUMNS FROM sbtest1");
    assert_eq!(
        c,
        [
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment"
        ]
    );
    let (c, _) = names(&mut s, "DESCRIBE sbtest1");
    assert_eq!(c[0], "Field");

    let (c, r) = names(&mut s, "SHOW INDEX FROM sbtest1");
    assert_eq!(
        &c[..5],
        [
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name"
        ]
    );
    assert_eq!(r.len(), 2);
    assert_eq!(r[1][2], "k_1");

    let (c, r) = names(&mut s, "SHOW CREATE TABLE sbtest1");
    assert_eq!(c, ["Table", "Create Table"]);
    assert!(
        r[0][1].starts_with("CREATE TABLE `sbtest1` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,"),
        "{}",
        r[0][1]
    );
    assert!(
        r[0][1].contains("PRIMARY KEY (`id`),\n  KEY `k_1` (`k`)"),
        "{}",
        r[0][1]
    );

    let (c, r) = names(&mut s, "SHOW VARIABLES LIKE 'max_allowed%'");
    assert_eq!(c, ["Variable_name", "Value"]);
    assert_eq!(
        r,
        vec![vec![
            "max_allowed_packet".to_string(),
            "67108864".to_string()
        ]]
    );
    let (_, r) = names(
        &mut s,
        "SHOW GLOBAL VARIABLES LIKE 'innodb_buffer_pool_size'",
    );
    assert_eq!(r.len(), 1);
    let (_, r) = names(
        &mut s,
        "SHOW SESSION VARIABLES WHERE Variable_name = 'autocommit'",
    );
    assert_eq!(r, vec![vec!["autocommit".to_string(), "ON".to_string()]]);
    let (_, r) = names(&mut s, "SHOW VARIABLES LIKE 'transaction_isolation'");
    assert_eq!(r[0][1], "READ-COMMITTED");
    exec(&mut s, "SET GLOBAL wait_timeout = 100");
    let (_, r) = names(&mut s, "SHOW GLOBAL VARIABLES LIKE 'wait_timeout'");
    assert_eq!(r[0][1], "100");

    let (c, r) = names(&mut s, "SHOW GLOBAL STATUS");
    assert_eq!(c, ["Variable_name", "Value"]);
    for n in [
        "Questions",
        "Com_select",
        "Com_insert",
        "Threads_connected",
        "Uptime",
        "Connections",
        "Com_stmt_execute",
    ] {
        assert!(r.iter().any(|x| x[0] == n), "missing {n}");
    }
    let (_, r) = names(&mut s, "SHOW STATUS LIKE 'Com_create_index'");
    assert_eq!(
        r,
        vec![vec!["Com_create_index".to_string(), "1".to_string()]]
    );
    assert!(e.shared.status().iter().any(|(n, _)| n == "Bytes_received"));

    let mut other = e.session(2);
    exec(&mut other, "SELECT 1");
    let (c, r) = names(&mut s, "SHOW FULL PROCESSLIST");
    assert_eq!(
        c,
        ["Id", "User", "Host", "db", "Command", "Time", "State", "Info", "Progress"]
    );
    assert_eq!(r.len(), 2);
    let me = r.iter().find(|x| x[0] == "1").unwrap();
    assert_eq!(me[4], "Query");
    assert_eq!(me[7], "SHOW FULL PROCESSLIST");
    let them = r.iter().find(|x| x[0] == "2").unwrap();
    assert_eq!(
        (them[1].as_str(), them[3].as_str(), them[4].as_str()),
        ("sbtest", "sbtest", "Sleep")
    );
    other.end();
    let (_, r) = names(&mut s, "SHOW PROCESSLIST");
    assert_eq!(r.len(), 1);

    let (c, r) = names(&mut s, "SHOW WARNINGS");
    assert_eq!(c, ["Level", "Code", "Message"]);
    assert!(r.is_empty());
    let (c, r) = names(&mut s, "SHOW ENGINES");
    assert_eq!(
        c,
        [
            "Engine",
            "Support",
            "Comment",
            "Transactions",
            "XA",
            "Savepoints"
        ]
    );
    assert_eq!(r[0][0], "InnoDB");
    let (c, r) = names(&mut s, "ANALYZE TABLE sbtest1");
    assert_eq!(c, ["Table", "Op", "Msg_type", "Msg_text"]);
    assert_eq!(r[0], ["sbtest.sbtest1", "analyze", "status", "OK"]);
    let (_, r) = names(&mut s, "SHOW TABLE STATUS");
    assert_eq!(r[0][0], "sbtest1");

    let cols = s.field_list("sbtest1").unwrap();
    assert_eq!(
        cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["id", "k", "c", "pad"]
    );
    assert!(cols[0].primary_key && cols[0].not_null);
}
