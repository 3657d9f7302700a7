//! Parameters arrive as Int / Double / Bytes / Null and are coerced like MySQL does; plans
//! survive re-execution and are rebuilt after DDL.

mod common;
use common::*;
use tierdb_engine::Value;

fn b(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

#[test]
fn params_of_every_type() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, k BIGINT, c VARCHAR(10), d DOUBLE, m DECIMAL(6,2), dt DATETIME)");
    let ins = s
        .prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
        .unwrap()
        .statement_id;
    s.execute(
        ins,
        &[
            Value::Int(1),
            Value::Int(10),
            b("one"),
            Value::Double(1.5),
            b("12.345"),
            b("2024-01-02 03:04:05"),
        ],
    )
    .unwrap();
    s.execute(
        ins,
        &[
            b("2"),
            b("20"),
            Value::Int(2),
            b("2.25"),
            Value::Double(7.0),
            b("2024-02-03"),
        ],
    )
    .unwrap();
    s.execute(
        ins,
        &[
            Value::Double(3.0),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ],
    )
    .unwrap();
    assert_eq!(s.execute(ins, &[Value::Int(4)]).unwrap_err().code, 1210);
    assert_eq!(
        s.execute(
            ins,
            &[
                b("x"),
                Value::Int(1),
                b(""),
                Value::Null,
                Value::Null,
                Value::Null
            ]
        )
        .unwrap_err()
        .code,
        1366
    );

    let r = q(&mut s, "SELECT id, k, c, d, m, dt FROM t ORDER BY id");
    assert_eq!(
        r[0],
        vec![
            Value::Int(1),
            Value::Int(10),
            b("one"),
            Value::Double(1.5),
            b("12.35"),
            b("2024-01-02 03:04:05")
        ]
    );
    assert_eq!(
        r[1],
        vec![
            Value::Int(2),
            Value::Int(20),
            b("2"),
            Value::Double(2.25),
            b("7.00"),
            b("2024-02-03 00:00:00")
        ]
    );
    assert_eq!(
        r[2],
        vec![
            Value::Int(3),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );

    let sel = s.prepare("SELECT c FROM t WHERE id = ?").unwrap();
    assert_eq!(sel.columns.len(), 1);
    let id = sel.statement_id;
    assert_eq!(
        rows(s.execute(id, &[Value::Int(1)]).unwrap()),
        vec![vec![b("one")]]
    );
    assert_eq!(
        rows(s.execute(id, &[b("1")]).unwrap()),
        vec![vec![b("one")]]
    );
    assert_eq!(
        rows(s.execute(id, &[Value::Double(1.0)]).unwrap()),
        vec![vec![b("one")]]
    );
    assert!(rows(s.execute(id, &[Value::Double(1.5)]).unwrap()).is_empty());
    assert!(rows(s.execute(id, &[Value::Null]).unwrap()).is_empty());
    assert_eq!(
        rows(s.execute(id, &[b("2abc")]).unwrap()),
        vec![vec![b("2")]]
    );
    // string column compared with a number: MySQL compares numerically
    let byc = s
        .prepare("SELECT id FROM t WHERE c = ?")
        .unwrap()
        .statement_id;
    assert_eq!(
        rows(s.execute(byc, &[Value::Int(2)]).unwrap()),
        vec![vec![Value::Int(2)]]
    );
    assert_eq!(
        rows(s.execute(byc, &[b("one")]).unwrap()),
        vec![vec![Value::Int(1)]]
    );
    // ranges with fractional bounds on an integer key
    let rng = s
        .prepare("SELECT id FROM t WHERE id > ? AND id <= ?")
        .unwrap()
        .statement_id;
    assert_eq!(
        rows(
            s.execute(rng, &[Value::Double(1.5), Value::Double(2.9)])
                .unwrap()
        ),
        vec![vec![Value::Int(2)]]
    );
    // LIMIT ?
    let lim = s
        .prepare("SELECT id FROM t ORDER BY id LIMIT ?, ?")
        .unwrap()
        .statement_id;
    assert_eq!(
        rows(s.execute(lim, &[Value::Int(1), Value::Int(1)]).unwrap()),
        vec![vec![Value::Int(2)]]
    );
    // SET with a parameter
    let set = s.prepare("SET @x = ?").unwrap().statement_id;
    s.execute(set, &[Value::Int(7)]).unwrap();
    assert_eq!(q(&mut s, "SELECT @x"), vec![vec![b("7")]]);
    // DDL re-plans prepared statements: new index used, dropped table reported
    exec(&mut s, "CREATE INDEX kk ON t (k)");
    let byk = s
        .prepare("EXPLAIN SELECT id FROM t WHERE k = ?")
        .unwrap()
        .statement_id;
    assert_eq!(
        text(&rows(s.execute(byk, &[Value::Int(10)]).unwrap())[0][3]),
        "ref"
    );
    exec(&mut s, "DROP INDEX kk ON t");
    assert_eq!(
        text(&rows(s.execute(byk, &[Value::Int(10)]).unwrap())[0][3]),
        "ALL"
    );
    assert_eq!(
        rows(s.execute(id, &[Value::Int(1)]).unwrap()),
        vec![vec![b("one")]]
    );
    exec(&mut s, "DROP TABLE t");
    assert_eq!(s.execute(id, &[Value::Int(1)]).unwrap_err().code, 1146);
    s.close_statement(id);
    assert_eq!(s.execute(id, &[Value::Int(1)]).unwrap_err().code, 1243);
}
