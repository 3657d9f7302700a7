//! INFORMATION_SCHEMA as tools query it: TABLES, COLUMNS, STATISTICS and SCHEMATA describe
//! the catalog (and follow DDL at once, also for prepared statements); TRIGGERS, VIEWS,
//! ROUTINES and KEY_COLUMN_USAGE are empty; WHERE, ORDER BY, COUNT and lower-case names work;
//! an unknown table is 1109; it cannot be locked or written. Also the MariaDB-specific
//! statement text mariadb-dump sends: `/*M!NNNNNN ... */` comments (run only for versions up
//! to ours), `SHOW CREATE DATABASE IF NOT EXISTS`, `SET optimizer_switch`.

mod common;

use common::*;
use tierdb_engine::Value;

fn texts(rows: Vec<Vec<Value>>) -> Vec<Vec<String>> {
    rows.iter().map(|r| r.iter().map(text).collect()).collect()
}

#[test]
fn catalog_tables_describe_the_tables_and_follow_ddl() {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE t (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, \
         c VARCHAR(20), price DECIMAL(8,2) NOT NULL DEFAULT 1.50, KEY k_idx (k, c))",
    );
    exec(&mut s, "INSERT INTO t (k, c) VALUES (1, 'a'), (2, 'b')");
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT table_schema, table_name, table_type, engine, auto_increment \
             FROM information_schema.tables WHERE table_schema = DATABASE()"
        )),
        vec![vec!["sbtest", "t", "BASE TABLE", "InnoDB", "3"]]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, \
             COLUMN_TYPE, COLUMN_KEY, EXTRA, CHARACTER_MAXIMUM_LENGTH, NUMERIC_PRECISION, \
             NUMERIC_SCALE FROM INFORMATION_SCHEMA.COLUMNS \
             WHERE TABLE_SCHEMA = 'sbtest' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION DESC"
        )),
        vec![
            vec![
                "price",
                "4",
                "1.50",
                "NO",
                "decimal",
                "decimal(8,2)",
                "",
                "",
                "NULL",
                "8",
                "2"
            ],
            vec![
                "c",
                "3",
                "NULL",
                "YES",
                "varchar",
                "varchar(20)",
                "",
                "",
                "20",
                "NULL",
                "NULL"
            ],
            vec!["k", "2", "0", "NO", "int", "int(11)", "MUL", "", "NULL", "10", "0"],
            vec![
                "id",
                "1",
                "NULL",
                "NO",
                "int",
                "int(11)",
                "PRI",
                "auto_increment",
                "NULL",
                "10",
                "0"
            ],
        ]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT index_name, seq_in_index, column_name, non_unique \
             FROM information_schema.statistics WHERE table_name = 't' \
             ORDER BY index_name, seq_in_index"
        )),
        // Sorted case-insensitively, as MariaDB sorts its INFORMATION_SCHEMA names.
        vec![
            vec!["k_idx", "1", "k", "1"],
            vec!["k_idx", "2", "c", "1"],
            vec!["PRIMARY", "1", "id", "0"],
        ]
    );
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT schema_name, default_character_set_name FROM information_schema.schemata"
        )),
        vec![
            vec!["information_schema", "utf8"],
            vec!["sbtest", "utf8mb4"]
        ]
    );
    // The keys' columns (no UNIQUE index or foreign key here: the primary key only).
    assert_eq!(
        texts(q(
            &mut s,
            "SELECT constraint_name, table_name, column_name, ordinal_position, \
             referenced_table_name FROM information_schema.KEY_COLUMN_USAGE"
        )),
        vec![vec!["PRIMARY", "t", "id", "1", "NULL"]]
    );
    for empty in ["TRIGGERS", "VIEWS", "ROUTINES", "REFERENTIAL_CONSTRAINTS"] {
        assert!(
            q(&mut s, &format!("SELECT * FROM information_schema.{empty}")).is_empty(),
            "{empty}"
        );
    }
    // A prepared statement sees later DDL.
    let id = s
        .prepare("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = ?")
        .expect("prepare")
        .statement_id;
    let count = |s: &mut tierdb_sql::Session| {
        int(&rows(
            s.execute(id, &[Value::Bytes(b"t".to_vec())])
                .expect("execute"),
        )[0][0])
    };
    assert_eq!(count(&mut s), 4);
    exec(&mut s, "DROP TABLE t");
    assert_eq!(count(&mut s), 0);
    assert!(q(&mut s, "SELECT * FROM information_schema.tables").is_empty());
    // USE information_schema, unqualified names.
    exec(&mut s, "USE information_schema");
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM SCHEMATA")[0][0]), 2);
    let listed = texts(q(&mut s, "SHOW TABLES"));
    assert!(listed.contains(&vec!["TABLES".to_string()]), "{listed:?}");
    assert_eq!(
        texts(q(&mut s, "SHOW DATABASES")),
        vec![vec!["information_schema"], vec!["sbtest"]]
    );
}

#[test]
fn information_schema_refuses_what_it_cannot_do() {
    let env = env();
    let mut s = env.session(1);
    assert_eq!(
        err(&mut s, "SELECT * FROM information_schema.nosuch").code,
        1109
    );
    assert_eq!(err(&mut s, "CREATE DATABASE information_schema").code, 1044);
    assert_eq!(err(&mut s, "DROP DATABASE INFORMATION_SCHEMA").code, 1044);
    assert_eq!(
        err(&mut s, "SELECT * FROM information_schema.tables FOR UPDATE").code,
        1235
    );
    assert!(err(&mut s, "DELETE FROM information_schema.tables").code != 0);
    let explain = texts(q(
        &mut s,
        "EXPLAIN SELECT * FROM information_schema.tables WHERE table_name = 'x'",
    ));
    assert_eq!(explain[0][2], "TABLES");
    assert_eq!(explain[0][3], "ALL");
}

#[test]
fn mariadb_specific_statement_text_from_mariadb_dump() {
    let env = env();
    let mut s = env.session(1);
    exec(&mut s, "/*M!100100 SET @@MAX_STATEMENT_TIME=0.000000 */");
    exec(&mut s, "/*M!100100 SET WAIT_TIMEOUT=DEFAULT */");
    exec(&mut s, "/*M!100100 SET @x = 5 */");
    assert_eq!(int(&q(&mut s, "SELECT @x")[0][0]), 5);
    // A version above ours keeps the text a comment.
    assert_eq!(err(&mut s, "/*M!999999 SET @x = 6 */").code, 1065);
    assert_eq!(int(&q(&mut s, "SELECT @x")[0][0]), 5);
    exec(&mut s, "set optimizer_switch='semijoin=off'");
    assert_eq!(
        text(&q(&mut s, "SELECT @@optimizer_switch")[0][0]),
        "semijoin=off"
    );
    exec(&mut s, "set optimizer_switch=default");
    // Prepared statements behind a leading comment (clients and ORMs add them).
    exec(&mut s, "/* app */ PREPARE p1 FROM 'SELECT 41 + 1'");
    assert_eq!(int(&q(&mut s, "-- tag\nEXECUTE p1")[0][0]), 42);
    exec(&mut s, "/*!40101 DEALLOCATE PREPARE P1 */");
    assert_eq!(err(&mut s, "/* again */ EXECUTE p1").code, 1243);
    // mariadb-dump --single-transaction's opening, version comment included.
    exec(
        &mut s,
        "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */",
    );
    exec(&mut s, "COMMIT");
    assert_eq!(err(&mut s, "SELECT 1 WITH CONSISTENT SNAPSHOT").code, 1064);
    assert_eq!(
        texts(q(&mut s, "SHOW CREATE DATABASE IF NOT EXISTS `sbtest`")),
        vec![vec![
            "sbtest",
            "CREATE DATABASE /*!32312 IF NOT EXISTS*/ `sbtest` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */"
        ]]
    );
    assert_eq!(err(&mut s, "SHOW CREATE DATABASE nosuch").code, 1049);
}
