//! One COM_QUERY holding several statements (CLIENT_MULTI_STATEMENTS, which the `mysql`
//! crate, PHP's `multi_query`, Rails' fixture loader and Go's `multiStatements=true` use):
//! each statement's result in turn, `;` inside quotes and comments not splitting, and an
//! error ending the batch with the statements after it not run.

mod common;

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::TestServer;

/// Every result of `sql`: for each, its rows as text (or the affected rows of an OK).
fn results(conn: &mut Conn, sql: &str) -> Result<Vec<Vec<String>>, mysql::Error> {
    let mut out = Vec::new();
    let mut r = conn.query_iter(sql)?;
    while let Some(set) = r.iter() {
        let affected = set.affected_rows();
        let mut rows = Vec::new();
        let mut columns = 0;
        for row in set {
            let row = row?;
            columns = row.len();
            let cells: Vec<String> = (0..row.len())
                .map(|i| match row.as_ref(i) {
                    Some(mysql::Value::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
                    Some(mysql::Value::NULL) => "NULL".into(),
                    Some(v) => format!("{v:?}"),
                    None => "?".into(),
                })
                .collect();
            rows.push(cells.join(","));
        }
        if columns == 0 && rows.is_empty() {
            rows.push(format!("ok {affected}"));
        }
        out.push(rows);
    }
    Ok(out)
}

#[test]
fn multi_statement_batches_return_each_result_and_stop_at_an_error() {
    let server = TestServer::start();
    let mut conn = Conn::new(Opts::from_url(&server.url(None)).expect("url")).expect("connect");
    let got = results(
        &mut conn,
        "CREATE DATABASE ms; CREATE TABLE ms.t (id INT PRIMARY KEY, s VARCHAR(10)); \
         INSERT INTO ms.t VALUES (1, 'a;b'), (2, 'it''s;'); -- a comment; with a semicolon\n\
         SELECT id, s FROM ms.t ORDER BY id; /* ; */ SELECT COUNT(*) FROM ms.t;",
    )
    .expect("batch");
    assert_eq!(
        got,
        vec![
            vec!["ok 1".to_string()],
            vec!["ok 0".into()],
            vec!["ok 2".into()],
            vec!["1,a;b".into(), "2,it's;".into()],
            vec!["2".into()],
        ]
    );
    // An error ends the batch: the statement after it does not run.
    let err = results(
        &mut conn,
        "INSERT INTO ms.t VALUES (3, 'x'); SELECT nope FROM ms.t; INSERT INTO ms.t VALUES (4, 'y')",
    )
    .expect_err("the second statement fails");
    match err {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1054, "{e:?}"),
        other => panic!("{other:?}"),
    }
    let ids: Vec<i64> = conn.query("SELECT id FROM ms.t ORDER BY id").expect("ids");
    assert_eq!(ids, [1, 2, 3]);
    // The connection is in step afterwards; DO runs its expressions and returns nothing.
    assert_eq!(
        results(&mut conn, "DO 1; SELECT 7").expect("DO"),
        vec![vec!["ok 0".to_string()], vec!["7".into()]]
    );
}
