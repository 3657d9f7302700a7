//! A statement or transaction that would hold more memory than `transaction_memory_limit`
//! (row locks, undo, before-images) gets MySQL error 1206 and is rolled back whole, as InnoDB
//! does when its lock table is full, and the server goes on serving: through the real
//! `tierdb` binary (`--transaction-memory-limit 8M`) and the `mysql` client crate; the limit
//! shows in SHOW VARIABLES, the refusals in SHOW STATUS, and SET GLOBAL raises it.

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};

fn code_of(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

fn value(c: &mut Conn, sql: &str) -> String {
    let row: Option<(String, String)> = c.query_first(sql).expect(sql);
    row.expect(sql).1
}

#[test]
fn a_huge_update_gets_1206_and_leaves_the_table_as_it_was() {
    let server = TestServer::start_with(&["--transaction-memory-limit", "8M"]);
    let mut c = Conn::new(Opts::from_url(&server.url(None)).expect("url")).expect("connect");
    c.query_drop("CREATE DATABASE big").unwrap();
    c.query_drop("USE big").unwrap();
    c.query_drop(
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(200) NOT NULL, KEY k (k))",
    )
    .unwrap();
    for chunk in 0..40 {
        let rows: Vec<String> = (chunk * 1000..(chunk + 1) * 1000)
            .map(|i| format!("({i}, {i}, REPEAT('p', 150))"))
            .collect();
        c.query_drop(format!("INSERT INTO t VALUES {}", rows.join(",")))
            .expect("insert a chunk");
    }
    assert_eq!(
        value(
            &mut c,
            "SHOW VARIABLES LIKE 'tierdb_transaction_memory_limit'"
        ),
        (8u64 << 20).to_string()
    );

    // One statement changing 40 000 rows (about 20 MB of undo and locks).
    let e = c
        .query_drop("UPDATE t SET pad = CONCAT(pad, 'x'), k = k + 1")
        .expect_err("the huge update");
    assert_eq!(code_of(e), 1206);
    let changed: i64 = c
        .query_first("SELECT COUNT(*) FROM t WHERE pad LIKE '%x' OR k <> id")
        .unwrap()
        .unwrap();
    assert_eq!(changed, 0, "the refused statement left no change");

    // Inside a transaction the whole transaction is rolled back (as for a deadlock).
    c.query_drop("BEGIN").unwrap();
    c.query_drop("INSERT INTO t VALUES (-1, -1, 'before')")
        .unwrap();
    let e = c
        .query_drop("DELETE FROM t WHERE id >= 0")
        .expect_err("the huge delete");
    assert_eq!(code_of(e), 1206);
    // A statement-only rollback would let this COMMIT keep the inserted row.
    c.query_drop("COMMIT").unwrap();
    let n: i64 = c.query_first("SELECT COUNT(*) FROM t").unwrap().unwrap();
    assert_eq!(n, 40_000, "neither the insert nor the delete stayed");
    let refusals: u64 = value(
        &mut c,
        "SHOW GLOBAL STATUS LIKE 'Tierdb_transaction_memory_refusals'",
    )
    .parse()
    .unwrap();
    assert_eq!(refusals, 2);
    assert_eq!(
        value(
            &mut c,
            "SHOW GLOBAL STATUS LIKE 'Tierdb_transaction_memory'"
        ),
        "0"
    );

    // Other sessions were served all along; raised online, the update passes.
    let mut other = Conn::new(Opts::from_url(&server.url(Some("big"))).expect("url")).unwrap();
    other
        .query_drop("SET GLOBAL tierdb_transaction_memory_limit = 268435456")
        .unwrap();
    c.query_drop("UPDATE t SET pad = CONCAT(pad, 'x'), k = k + 1")
        .expect("the update under a higher limit");
    let changed: i64 = other
        .query_first("SELECT COUNT(*) FROM t WHERE pad LIKE '%x' AND k = id + 1")
        .unwrap()
        .unwrap();
    assert_eq!(changed, 40_000);
}
