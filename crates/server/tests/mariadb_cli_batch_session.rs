//! The real `mariadb` command-line client in batch mode: connect, DDL, DML, SHOW commands and
//! errors, with exact stdout/stderr.

mod common;

use common::{TestServer, MARIADB};

fn mariadb(server: &TestServer, args: &[&str], sql: &str) -> (bool, String, String) {
    common::mariadb_batch(server, args, sql)
}

#[test]
fn mariadb_cli_batch_session() {
    assert!(
        common::exists(MARIADB),
        "the mariadb client is not installed at {MARIADB}"
    );
    let server = TestServer::start();

    let (ok, out, err) = mariadb(
        &server,
        &[],
        "CREATE DATABASE shop; USE shop; \
         CREATE TABLE items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20), price DECIMAL(6,2)); \
         INSERT INTO items VALUES (1, 'apple', 1.50), (2, 'pear', NULL), (3, 'tab\there', 0.25); \
         SELECT * FROM items ORDER BY id;",
    );
    assert!(ok, "{err}");
    assert_eq!(err, "");
    assert_eq!(
        out,
        "id\tname\tprice\n1\tapple\t1.50\n2\tpear\tNULL\n3\ttab\\there\t0.25\n"
    );

    let (ok, out, err) = mariadb(&server, &["shop"], "SHOW TABLES; SHOW COLUMNS FROM items;");
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "Tables_in_shop\nitems\n\
         Field\tType\tNull\tKey\tDefault\tExtra\n\
         id\tint(11)\tNO\tPRI\tNULL\t\n\
         name\tvarchar(20)\tYES\t\tNULL\t\n\
         price\tdecimal(6,2)\tYES\t\tNULL\t\n"
    );

    let (ok, out, err) = mariadb(
        &server,
        &["shop", "--skip-column-names"],
        "SHOW CREATE TABLE items;",
    );
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "items\tCREATE TABLE `items` (\\n  `id` int(11) NOT NULL,\\n  `name` varchar(20) DEFAULT NULL,\\n  \
         `price` decimal(6,2) DEFAULT NULL,\\n  PRIMARY KEY (`id`)\\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci\n"
    );

    let (ok, out, err) = mariadb(&server, &[], "SHOW DATABASES;");
    assert!(ok, "{err}");
    assert!(out.starts_with("Database\n"), "{out}");
    assert!(out.lines().any(|l| l == "shop"), "{out}");

    // Errors: message on stderr, exit status 1, statements before the error ran.
    let (ok, out, err) = mariadb(
        &server,
        &["shop"],
        "SELECT COUNT(*) FROM items; SELECT * FROM nope;",
    );
    assert!(!ok);
    assert_eq!(out, "COUNT(*)\n3\n");
    // (The client itself echoes the failing statement of a multi-statement -e batch.)
    assert_eq!(
        err,
        "--------------\nSELECT * FROM nope\n--------------\n\nERROR 1146 (42S02) at line 1: Table 'shop.nope' doesn't exist\n"
    );

    let (ok, _, err) = mariadb(
        &server,
        &["shop"],
        "INSERT INTO items VALUES (1, 'again', 0);",
    );
    assert!(!ok);
    assert_eq!(
        err,
        "--------------\nINSERT INTO items VALUES (1, 'again', 0)\n--------------\n\nERROR 1062 (23000) at line 1: Duplicate entry '1' for key 'PRIMARY'\n"
    );

    let (ok, _, err) = mariadb(&server, &["no_such_db"], "SELECT 1;");
    assert!(!ok);
    assert_eq!(err, "ERROR 1049 (42000): Unknown database 'no_such_db'\n");
}
