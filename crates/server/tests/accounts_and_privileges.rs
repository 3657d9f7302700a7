//! Accounts made with SQL and what they may do, through a real MySQL client crate against the
//! real server: CREATE USER / GRANT / REVOKE / SET PASSWORD / RENAME / DROP USER, the checks
//! every statement passes (text and binary protocol), what SHOW and INFORMATION_SCHEMA let an
//! account see, and accounts surviving clean and crash restarts. Error codes and texts are
//! the ones MariaDB 10.11 gives for the same statements (recorded against it by hand).

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::collections::BTreeSet;

fn connect(port: u16, user: &str, pw: &str, db: Option<&str>) -> Result<Conn, mysql::Error> {
    let auth = if pw.is_empty() {
        user.to_string()
    } else {
        format!("{user}:{pw}")
    };
    let url = format!("mysql://{auth}@127.0.0.1:{port}/{}", db.unwrap_or(""));
    Conn::new(Opts::from_url(&url).unwrap())
}

fn err_of(e: mysql::Error) -> (u16, String) {
    match e {
        mysql::Error::MySqlError(m) => (m.code, m.message),
        other => panic!("not a server error: {other:?}"),
    }
}

fn denied(c: &mut Conn, sql: &str) -> (u16, String) {
    match c.query_drop(sql) {
        Ok(()) => panic!("{sql}: allowed, should be denied"),
        Err(e) => err_of(e),
    }
}

fn set(rows: Vec<String>) -> BTreeSet<String> {
    rows.into_iter().collect()
}

fn setup(root: &mut Conn) {
    for q in [
        "CREATE DATABASE shop",
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, qty INT)",
        "INSERT INTO shop.orders VALUES (1, 10), (2, 20)",
        "CREATE DATABASE hr",
        "CREATE TABLE hr.salaries (id INT PRIMARY KEY, pay INT)",
        "INSERT INTO hr.salaries VALUES (1, 5000)",
        "CREATE TABLE hr.phones (id INT PRIMARY KEY, phone VARCHAR(20))",
        "INSERT INTO hr.phones VALUES (1, '555-0101')",
        "CREATE VIEW hr.directory AS SELECT id, phone FROM hr.phones",
    ] {
        root.query_drop(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
}

#[test]
fn an_application_account_gets_only_what_it_was_granted() {
    let server = TestServer::start();
    let mut root = connect(server.port, "root", "", None).unwrap();
    setup(&mut root);
    root.query_drop("CREATE USER app IDENTIFIED BY 'app-pw'")
        .unwrap();
    root.query_drop("GRANT SELECT, INSERT, UPDATE, DELETE ON shop.* TO app")
        .unwrap();
    root.query_drop("GRANT SELECT ON hr.directory TO app")
        .unwrap();

    let mut app = connect(server.port, "app", "app-pw", Some("shop")).unwrap();
    let who: Option<(String, String)> = app.query_first("SELECT CURRENT_USER(), USER()").unwrap();
    assert_eq!(
        who,
        Some(("app@%".into(), "app@localhost".into())),
        "the account is app@%, the client app@localhost"
    );

    // What was granted works, in both protocols.
    app.query_drop("INSERT INTO orders VALUES (3, 30)").unwrap();
    app.query_drop("UPDATE orders SET qty = qty + 1 WHERE id = 3")
        .unwrap();
    app.query_drop("DELETE FROM orders WHERE id = 3").unwrap();
    let qty: Option<i64> = app
        .exec_first("SELECT qty FROM orders WHERE id = ?", (2,))
        .unwrap();
    assert_eq!(qty, Some(20));
    app.exec_drop("UPDATE orders SET qty = ? WHERE id = ?", (21, 2))
        .unwrap();
    // A view is read with its definer's rights: SELECT on the view is enough.
    let phones: Vec<String> = app.query("SELECT phone FROM hr.directory").unwrap();
    assert_eq!(phones, vec!["555-0101".to_string()]);
    // A WITH query's name is not a table.
    let n: Option<i64> = app
        .query_first("WITH s AS (SELECT 1 AS id) SELECT COUNT(*) FROM s")
        .unwrap();
    assert_eq!(n, Some(1));

    // Tables it may not read, however they are reached.
    assert_eq!(
        denied(&mut app, "SELECT * FROM hr.phones"),
        (
            1142,
            "SELECT command denied to user 'app'@'localhost' for table `hr`.`phones`".into()
        )
    );
    for sql in [
        "SELECT * FROM hr.salaries",
        "SELECT id FROM orders WHERE id IN (SELECT id FROM hr.salaries)",
        "SELECT o.id FROM orders o JOIN hr.salaries s ON s.id = o.id",
        "INSERT INTO orders SELECT id, pay FROM hr.salaries",
        "UPDATE orders SET qty = (SELECT MAX(pay) FROM hr.salaries)",
        "DELETE FROM orders WHERE id IN (SELECT id FROM hr.salaries)",
        "SELECT * FROM (SELECT * FROM hr.salaries) AS d",
        "SET @pay = (SELECT MAX(pay) FROM hr.salaries)",
        "DO (SELECT MAX(pay) FROM hr.salaries)",
        "EXPLAIN SELECT * FROM hr.salaries",
    ] {
        let (code, msg) = denied(&mut app, sql);
        assert_eq!(code, 1142, "{sql}: {msg}");
        assert!(msg.contains("`hr`.`salaries`"), "{sql}: {msg}");
    }
    // A table that does not exist is denied too (nothing learnt about what exists).
    assert_eq!(denied(&mut app, "SELECT * FROM hr.nope").0, 1142);
    let e = app
        .exec_first::<i64, _, _>("SELECT pay FROM hr.salaries WHERE id = ?", (1,))
        .unwrap_err();
    assert_eq!(err_of(e).0, 1142, "prepared statements are checked too");
    // Writes it was not given (the view: SELECT only).
    assert_eq!(
        denied(&mut app, "UPDATE hr.directory SET phone = 'x'"),
        (
            1142,
            "UPDATE command denied to user 'app'@'localhost' for table `hr`.`directory`".into()
        )
    );

    // DDL, per table and per database.
    for (sql, what) in [
        ("CREATE TABLE shop.x (a INT)", "CREATE"),
        ("DROP TABLE orders", "DROP"),
        ("ALTER TABLE orders ADD COLUMN z INT", "ALTER"),
        ("CREATE INDEX iq ON orders (qty)", "INDEX"),
        ("TRUNCATE TABLE orders", "DROP"),
    ] {
        let (code, msg) = denied(&mut app, sql);
        assert_eq!(code, 1142, "{sql}");
        assert!(
            msg.starts_with(&format!("{what} command denied to user 'app'@'localhost'")),
            "{sql}: {msg}"
        );
    }
    assert_eq!(
        denied(&mut app, "CREATE DATABASE x"),
        (
            1044,
            "Access denied for user 'app'@'%' to database 'x'".into()
        )
    );
    assert_eq!(denied(&mut app, "DROP DATABASE hr").0, 1044);
    assert_eq!(
        denied(&mut app, "CREATE TEMPORARY TABLE tt (a INT)").0,
        1044
    );

    // Databases: USE needs some privilege there; SHOW and INFORMATION_SCHEMA list only
    // what the account may use.
    app.query_drop("USE hr").unwrap();
    assert_eq!(denied(&mut app, "USE mysql").0, 1044);
    // A WITH name hides the table only where it is in scope.
    assert_eq!(
        denied(
            &mut app,
            "SELECT * FROM salaries WHERE id IN (WITH salaries AS (SELECT 1 AS id) SELECT id FROM salaries)"
        )
        .0,
        1142
    );
    let dbs: Vec<String> = app.query("SHOW DATABASES").unwrap();
    assert_eq!(
        set(dbs),
        set(vec![
            "hr".into(),
            "information_schema".into(),
            "shop".into()
        ])
    );
    let tables: Vec<String> = app.query("SHOW TABLES FROM hr").unwrap();
    assert_eq!(tables, vec!["directory".to_string()]);
    let listed: Vec<String> = app
        .query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'hr'")
        .unwrap();
    assert_eq!(listed, vec!["directory".to_string()]);
    let cols: Vec<String> = app
        .query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'hr' ORDER BY 1")
        .unwrap();
    assert_eq!(cols, vec!["id".to_string(), "phone".to_string()]);
    assert_eq!(denied(&mut app, "SHOW COLUMNS FROM hr.salaries").0, 1142);
    assert_eq!(denied(&mut app, "SHOW CREATE TABLE hr.salaries").0, 1142);

    // Server administration.
    assert_eq!(
        denied(&mut app, "SET GLOBAL max_connections = 10"),
        (
            1227,
            "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
                .into()
        )
    );
    app.query_drop("SET SESSION sql_mode = ''").unwrap();
    assert_eq!(
        denied(&mut app, "CREATE USER eve"),
        (
            1227,
            "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"
                .into()
        )
    );
    assert_eq!(denied(&mut app, "GRANT SELECT ON shop.* TO app").0, 1044);
    assert_eq!(denied(&mut app, "FLUSH TABLES").0, 1227);
    let root_id: Option<i64> = root.query_first("SELECT CONNECTION_ID()").unwrap();
    let root_id = root_id.unwrap();
    assert_eq!(
        denied(&mut app, &format!("KILL {root_id}")),
        (1095, format!("You are not owner of thread {root_id}"))
    );
    root.query_drop("SELECT 1").unwrap();
    let users: Vec<(i64, String)> = app
        .query_map("SHOW PROCESSLIST", |row: mysql::Row| {
            (row.get(0).unwrap(), row.get(1).unwrap())
        })
        .unwrap();
    assert!(
        users.iter().all(|(_, u)| u == "app") && !users.is_empty(),
        "without PROCESS only its own connections: {users:?}"
    );
    // A login that matched an anonymous account is not `app`, whatever name it typed: it
    // sees its own connection only, not app's statements.
    root.query_drop("CREATE USER ''@'localhost'").unwrap();
    let mut anon = connect(server.port, "app", "", None).expect("anonymous login");
    let me: Option<i64> = anon.query_first("SELECT CONNECTION_ID()").unwrap();
    let seen: Vec<i64> = anon
        .query_map("SHOW PROCESSLIST", |row: mysql::Row| row.get(0).unwrap())
        .unwrap();
    assert_eq!(
        seen,
        vec![me.unwrap()],
        "an anonymous account sees itself only"
    );
    let seen: Vec<i64> = anon
        .query("SELECT ID FROM information_schema.PROCESSLIST")
        .unwrap();
    assert_eq!(seen, vec![me.unwrap()], "also in INFORMATION_SCHEMA");
    drop(anon);
    root.query_drop("DROP USER ''@'localhost'").unwrap();

    // Its own grants, as MariaDB prints them; someone else's need the mysql database.
    let grants: Vec<String> = app.query("SHOW GRANTS").unwrap();
    assert_eq!(
        grants,
        vec![
            format!(
                "GRANT USAGE ON *.* TO `app`@`%` IDENTIFIED BY PASSWORD '{}'",
                password_hash("app-pw")
            ),
            "GRANT SELECT, INSERT, UPDATE, DELETE ON `shop`.* TO `app`@`%`".into(),
            "GRANT SELECT ON `hr`.`directory` TO `app`@`%`".into(),
        ]
    );
    assert_eq!(
        denied(&mut app, "SHOW GRANTS FOR root@localhost"),
        (
            1044,
            "Access denied for user 'app'@'%' to database 'mysql'".into()
        )
    );
    // The session still serves after every refusal.
    let n: Option<i64> = app.query_first("SELECT COUNT(*) FROM shop.orders").unwrap();
    assert_eq!(n, Some(2));

    // SHOW STATUS counts the account statements and the refusals.
    assert_eq!(
        err_of(connect(server.port, "app", "wrong", None).unwrap_err()).0,
        1045
    );
    let status: Vec<(String, String)> = root
        .query(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_create_user', 'Com_grant', 'Access_denied_errors')",
        )
        .unwrap();
    let get = |n: &str| -> i64 {
        status
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or_else(|| panic!("{n} missing: {status:?}"))
    };
    // (Refused ones count too, as in MariaDB: root's two and app's.)
    assert_eq!(get("Com_create_user"), 3);
    assert_eq!(get("Com_grant"), 3);
    assert!(get("Access_denied_errors") >= 30, "{status:?}");
}

/// `*` + hex of SHA1(SHA1(pw)), as MariaDB's PASSWORD() writes it.
fn password_hash(pw: &str) -> String {
    use sha1::Digest;
    let h = sha1::Sha1::digest(sha1::Sha1::digest(pw.as_bytes()));
    let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
    format!("*{hex}")
}

#[test]
fn grants_revokes_and_account_changes_take_effect_at_once() {
    let server = TestServer::start();
    let mut root = connect(server.port, "root", "", None).unwrap();
    setup(&mut root);
    root.query_drop("CREATE USER rep@localhost IDENTIFIED BY 'r1'")
        .unwrap();
    root.query_drop("GRANT SELECT ON shop.* TO rep@localhost")
        .unwrap();
    let mut rep = connect(server.port, "rep", "r1", Some("shop")).unwrap();
    let stmt = rep.prep("SELECT qty FROM orders WHERE id = ?").unwrap();
    let q: Option<i64> = rep.exec_first(&stmt, (1,)).unwrap();
    assert_eq!(q, Some(10));

    // REVOKE: the prepared statement's next execution is refused.
    root.query_drop("REVOKE SELECT ON shop.* FROM rep@localhost")
        .unwrap();
    let e = rep.exec_first::<i64, _, _>(&stmt, (1,)).unwrap_err();
    assert_eq!(
        err_of(e),
        (
            1142,
            "SELECT command denied to user 'rep'@'localhost' for table `shop`.`orders`".into()
        )
    );
    // A table grant gives it back.
    root.query_drop("GRANT SELECT ON shop.orders TO rep@localhost")
        .unwrap();
    let q: Option<i64> = rep.exec_first(&stmt, (2,)).unwrap();
    assert_eq!(q, Some(20));
    // Revoking what is not granted: MariaDB's 1141 / 1147.
    assert_eq!(
        denied(&mut root, "REVOKE SELECT ON hr.* FROM rep@localhost").0,
        1141
    );
    assert_eq!(
        denied(&mut root, "REVOKE SELECT ON hr.phones FROM rep@localhost"),
        (
            1147,
            "There is no such grant defined for user 'rep' on host 'localhost' on table 'phones'"
                .into()
        )
    );
    assert_eq!(
        denied(&mut root, "GRANT SELECT ON shop.nope TO rep@localhost").0,
        1146
    );
    assert_eq!(
        denied(&mut root, "GRANT RELOAD ON shop.* TO rep@localhost"),
        (
            1221,
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES".into()
        )
    );
    assert_eq!(
        denied(&mut root, "GRANT SELECT ON shop.* TO nobody@localhost").0,
        1133
    );

    // Passwords.
    root.query_drop("SET PASSWORD FOR rep@localhost = PASSWORD('r2')")
        .unwrap();
    assert_eq!(
        err_of(connect(server.port, "rep", "r1", None).unwrap_err()),
        (
            1045,
            "Access denied for user 'rep'@'localhost' (using password: YES)".into()
        )
    );
    let mut rep2 = connect(server.port, "rep", "r2", None).unwrap();
    rep2.query_drop("SET PASSWORD = PASSWORD('r3')").unwrap();
    connect(server.port, "rep", "r3", None).unwrap();
    root.query_drop("ALTER USER rep@localhost IDENTIFIED BY 'r4'")
        .unwrap();
    connect(server.port, "rep", "r4", None).unwrap();

    // RENAME keeps the grants; the old name no longer logs in.
    root.query_drop("RENAME USER rep@localhost TO reporter@localhost")
        .unwrap();
    assert_eq!(
        err_of(connect(server.port, "rep", "r4", None).unwrap_err()).0,
        1045
    );
    let mut reporter = connect(server.port, "reporter", "r4", Some("shop")).unwrap();
    let n: Option<i64> = reporter.query_first("SELECT COUNT(*) FROM orders").unwrap();
    assert_eq!(n, Some(2));

    // DROP USER: its open sessions lose every privilege, new logins are refused.
    root.query_drop("DROP USER reporter@localhost").unwrap();
    assert_eq!(denied(&mut reporter, "SELECT COUNT(*) FROM orders").0, 1142);
    assert_eq!(
        err_of(connect(server.port, "reporter", "r4", None).unwrap_err()).0,
        1045
    );
    assert_eq!(
        denied(&mut root, "DROP USER reporter@localhost"),
        (
            1396,
            "Operation DROP USER failed for 'reporter'@'localhost'".into()
        )
    );
    root.query_drop("DROP USER IF EXISTS reporter@localhost")
        .unwrap();
    let w: Vec<(String, u16, String)> = root.query("SHOW WARNINGS").unwrap();
    assert_eq!(
        w,
        vec![(
            "Note".into(),
            1974,
            "Can't drop user 'reporter'@'localhost'; it doesn't exist".into()
        )]
    );

    // The most specific host wins: from loopback `dup@localhost`, not `dup@%`.
    root.query_drop(
        "CREATE USER dup@'%' IDENTIFIED BY 'anywhere', dup@localhost IDENTIFIED BY 'here'",
    )
    .unwrap();
    let mut dup = connect(server.port, "dup", "here", None).unwrap();
    let me: Option<String> = dup.query_first("SELECT CURRENT_USER()").unwrap();
    assert_eq!(me.as_deref(), Some("dup@localhost"));
    assert_eq!(
        err_of(connect(server.port, "dup", "anywhere", None).unwrap_err()).0,
        1045
    );
}

#[test]
fn accounts_survive_restarts_and_config_accounts_stay_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tierdb.toml");
    std::fs::write(
        &config,
        "[[users]]\nname = \"root\"\n\n[[users]]\nname = \"admin\"\npassword = \"adm\"\n",
    )
    .unwrap();
    let mut server = TestServer::start_with(&["--config", config.to_str().unwrap()]);
    let mut admin = connect(server.port, "admin", "adm", None).unwrap();
    setup(&mut admin);
    let me: Option<String> = admin.query_first("SELECT CURRENT_USER()").unwrap();
    assert_eq!(me.as_deref(), Some("admin@%"));
    admin
        .query_drop("CREATE USER keep IDENTIFIED BY 'k'")
        .unwrap();
    admin
        .query_drop("GRANT SELECT, INSERT ON shop.* TO keep")
        .unwrap();
    admin
        .query_drop("GRANT UPDATE ON shop.orders TO keep WITH GRANT OPTION")
        .unwrap();
    let before: Vec<String> = admin.query("SHOW GRANTS FOR keep").unwrap();
    assert_eq!(before.len(), 3, "{before:?}");

    // The config file's accounts are changed there, not through SQL.
    for sql in [
        "DROP USER admin",
        "ALTER USER root@localhost IDENTIFIED BY 'x'",
        "REVOKE ALL PRIVILEGES, GRANT OPTION FROM admin",
        "RENAME USER admin TO boss",
    ] {
        let (code, msg) = denied(&mut admin, sql);
        assert_eq!(code, 1396, "{sql}: {msg}");
        assert!(msg.contains("config file"), "{sql}: {msg}");
    }
    drop(admin);

    // Clean restart: the account and its grants are back.
    server.restart(false);
    let mut keep = connect(server.port, "keep", "k", Some("shop")).unwrap();
    keep.query_drop("INSERT INTO orders VALUES (9, 90)")
        .unwrap();
    keep.query_drop("UPDATE orders SET qty = 91 WHERE id = 9")
        .unwrap();
    assert_eq!(denied(&mut keep, "DELETE FROM orders").0, 1142);
    let mut admin = connect(server.port, "admin", "adm", None).unwrap();
    let after: Vec<String> = admin.query("SHOW GRANTS FOR keep").unwrap();
    assert_eq!(after, before);

    // A change acknowledged just before a crash is there after it.
    admin
        .query_drop("REVOKE INSERT ON shop.* FROM keep")
        .unwrap();
    admin.query_drop("CREATE USER late@localhost").unwrap();
    drop((keep, admin));
    server.restart(true);
    let mut keep = connect(server.port, "keep", "k", Some("shop")).unwrap();
    assert_eq!(
        denied(&mut keep, "INSERT INTO orders VALUES (10, 1)").0,
        1142
    );
    let n: Option<i64> = keep.query_first("SELECT COUNT(*) FROM orders").unwrap();
    assert_eq!(n, Some(3));
    connect(server.port, "late", "", None).unwrap();
}

/// The ways around the checks a review tried; each is refused as MariaDB refuses it.
#[test]
fn escalations_through_views_grants_and_names_are_refused() {
    let mut server = TestServer::start();
    let mut root = connect(server.port, "root", "", None).unwrap();
    setup(&mut root);
    for q in [
        "CREATE TABLE shop.`dual` (id INT PRIMARY KEY)",
        "CREATE TABLE shop.secret2 (id INT PRIMARY KEY)",
        "CREATE DATABASE shopx",
        "CREATE TABLE shopx.t (id INT PRIMARY KEY)",
        "INSERT INTO shopx.t VALUES (1)",
        "CREATE USER dev IDENTIFIED BY 'd'",
        "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, CREATE VIEW ON shop.* TO dev",
        "GRANT SELECT ON hr.phones TO dev",
        "CREATE USER lead IDENTIFIED BY 'l'",
        "GRANT SELECT ON shop.orders TO lead WITH GRANT OPTION",
        "GRANT ALL ON `shop\\_%`.* TO lead WITH GRANT OPTION",
        "CREATE USER dba IDENTIFIED BY 'dba'",
        "GRANT ALL ON *.* TO dba WITH GRANT OPTION",
        "CREATE USER ops IDENTIFIED BY 'o'",
        "GRANT PROCESS, RELOAD ON *.* TO ops",
        "CREATE SQL SECURITY INVOKER VIEW shop.inv AS SELECT * FROM hr.salaries",
        "CREATE SQL SECURITY INVOKER VIEW shop.rooti AS SELECT id FROM hr.salaries",
        "CREATE VIEW shop.rootchain AS SELECT id FROM shop.rooti",
        "GRANT SELECT ON shop.inv TO lead",
    ] {
        root.query_drop(q).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    let mut dev = connect(server.port, "dev", "d", Some("shop")).unwrap();
    // A view does not lend its creator more than it had: writing a table it may only read
    // through a view of its own is 1356, and so is reading once the right is revoked.
    dev.query_drop("CREATE VIEW w AS SELECT * FROM hr.phones")
        .unwrap();
    assert_eq!(denied(&mut dev, "UPDATE w SET phone = 'x'").0, 1356);
    assert_eq!(denied(&mut dev, "INSERT INTO w VALUES (9, 'x')").0, 1356);
    assert_eq!(denied(&mut dev, "DELETE FROM w").0, 1356);
    let n: Option<i64> = dev.query_first("SELECT COUNT(*) FROM w").unwrap();
    assert_eq!(n, Some(1));
    let stmt = dev.prep("SELECT COUNT(*) FROM w").unwrap();
    root.query_drop("REVOKE SELECT ON hr.phones FROM dev")
        .unwrap();
    assert_eq!(denied(&mut dev, "SELECT COUNT(*) FROM w").0, 1356);
    let e = dev.exec_first::<i64, _, _>(&stmt, ()).unwrap_err();
    assert_eq!(
        err_of(e).0,
        1356,
        "a prepared read through the view is refused too"
    );
    // Naming another account as the definer needs SUPER / SET USER.
    for sql in [
        "CREATE DEFINER = root@localhost VIEW w2 AS SELECT * FROM orders",
        "CREATE DEFINER = `root`@`localhost` VIEW w2 AS SELECT * FROM orders",
    ] {
        assert_eq!(denied(&mut dev, sql).0, 1227, "{sql}");
    }
    // REPLACE through a view needs DELETE too from the view's definer.
    root.query_drop("GRANT SELECT, INSERT ON hr.phones TO dev")
        .unwrap();
    dev.query_drop("CREATE VIEW w3 AS SELECT * FROM hr.phones")
        .unwrap();
    dev.query_drop("INSERT INTO w3 VALUES (7, 'a')").unwrap();
    assert_eq!(denied(&mut dev, "REPLACE INTO w3 VALUES (7, 'b')").0, 1356);
    // EXPLAIN shows what a view reads: SHOW VIEW on it.
    let (code, msg) = denied(&mut dev, "EXPLAIN SELECT * FROM w3");
    assert_eq!(code, 1142, "{msg}");
    assert!(msg.starts_with("SHOW VIEW command denied"), "{msg}");
    root.query_drop("REVOKE SELECT, INSERT ON hr.phones FROM dev")
        .unwrap();
    // An INVOKER view inside root's DEFINER view runs as root.
    let rows: Vec<i64> = dev.query("SELECT id FROM rootchain").unwrap();
    assert_eq!(rows, vec![1]);
    assert_eq!(denied(&mut dev, "SELECT id FROM rooti").0, 1356);
    // DELETE ... USING names its targets by their aliases in USING.
    assert_eq!(
        denied(
            &mut dev,
            "DELETE FROM x USING hr.phones AS x WHERE x.id = 1"
        )
        .0,
        1142
    );
    // A table called DUAL is checked where the planner reads it as a table.
    // A foreign key needs REFERENCES on its parent (it would reveal the parent's keys).
    let (code, msg) = denied(
        &mut dev,
        "CREATE TABLE child (pid INT, FOREIGN KEY (pid) REFERENCES hr.salaries (id))",
    );
    assert_eq!(code, 1142, "{msg}");
    assert!(msg.starts_with("REFERENCES command denied"), "{msg}");
    // DELETE ... USING deletes from the FROM tables: DELETE on them.
    assert_eq!(
        denied(
            &mut dev,
            "DELETE FROM hr.phones USING hr.phones, orders WHERE hr.phones.id = orders.id"
        )
        .0,
        1142
    );
    // A table named `dual` is a table.
    let mut lead = connect(server.port, "lead", "l", None).unwrap();
    assert_eq!(denied(&mut lead, "SELECT * FROM shop.`dual`").0, 1142);
    lead.query_drop("USE shop").unwrap();
    assert_eq!(denied(&mut lead, "SELECT * FROM `dual`").0, 1142);
    lead.query_drop("SELECT 1 FROM DUAL").unwrap();
    // (Unquoted too, where the planner reads the table: with an alias, a join, a write.)
    assert_eq!(denied(&mut lead, "SELECT * FROM dual AS x").0, 1142);
    assert_eq!(denied(&mut lead, "SELECT * FROM orders, dual").0, 1142);
    assert_eq!(denied(&mut lead, "DELETE FROM dual").0, 1142);
    // An INVOKER view runs with the reader's rights.
    assert_eq!(denied(&mut lead, "SELECT * FROM shop.inv").0, 1356);
    // A self-reference inside a nested WITH does not make a WITH RECURSIVE query recursive:
    // the name there is the table.
    assert_eq!(
        denied(
            &mut lead,
            "WITH RECURSIVE secret2 AS (WITH z AS (SELECT * FROM secret2) SELECT * FROM z) SELECT * FROM secret2"
        )
        .0,
        1142
    );
    // A WITH RECURSIVE name seen before its definition is the table.
    assert_eq!(
        denied(
            &mut lead,
            "WITH RECURSIVE a AS (SELECT * FROM hr.salaries), salaries AS (SELECT 1 AS id, 2 AS pay) SELECT * FROM a"
        )
        .0,
        1142
    );
    // GRANT OPTION on one table does not set other accounts' passwords.
    assert_eq!(
        denied(
            &mut lead,
            "GRANT SELECT ON shop.orders TO dba IDENTIFIED BY 'pwned'"
        )
        .0,
        1044
    );
    connect(server.port, "dba", "dba", None).unwrap();
    // A grant on the pattern `shop\_%` does not reach the wider `shop_%` (which matches
    // shopx too).
    assert_eq!(
        denied(&mut lead, "GRANT SELECT ON `shop_%`.* TO lead").0,
        1044
    );
    lead.query_drop("GRANT SELECT ON `shop\\_%`.* TO dev")
        .unwrap();
    // Server privileges give no view of the databases.
    let mut ops = connect(server.port, "ops", "o", None).unwrap();
    let dbs: Vec<String> = ops.query("SHOW DATABASES").unwrap();
    assert_eq!(dbs, vec!["information_schema".to_string()]);
    assert_eq!(denied(&mut ops, "USE hr").0, 1044);
    assert_eq!(denied(&mut ops, "SHOW CREATE TABLE hr.salaries").0, 1142);
    // Names it may not see do not reach a SHOW's WHERE.
    let mut probe = connect(server.port, "lead", "l", Some("shop")).unwrap();
    probe
        .query_drop("SHOW DATABASES WHERE IF(`Database` = 'hr', 'x' REGEXP '(', 0)")
        .unwrap();
    probe
        .query_drop("SHOW TABLES WHERE IF(Tables_in_shop = 'dual', 'x' REGEXP '(', 0)")
        .unwrap();
    // An SQL account does not shadow a config account of the same rank, before or after a
    // restart.
    root.query_drop("CREATE USER root@'127.0.0.1' IDENTIFIED BY 'z'")
        .unwrap();
    drop((root, dev, lead, ops, probe));
    let me: Option<String> = connect(server.port, "root", "", None)
        .unwrap()
        .query_first("SELECT CURRENT_USER()")
        .unwrap();
    assert_eq!(me.as_deref(), Some("root@localhost"));
    server.restart(false);
    let me: Option<String> = connect(server.port, "root", "", None)
        .unwrap()
        .query_first("SELECT CURRENT_USER()")
        .unwrap();
    assert_eq!(me.as_deref(), Some("root@localhost"));
}
