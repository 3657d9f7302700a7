//! Every statement shape the sysbench 1.0.20 Lua scripts send (prepare, prewarm, run,
//! cleanup), both through COM_QUERY and through prepare/execute, with results checked.

mod common;
use common::*;
use tierdb_engine::Value;
use tierdb_sql::{ColumnKind, QueryResult, Session};

const TABLE_SIZE: i64 = 200;

fn c_val(i: i64) -> String {
    format!(
        "{:011}-{:011}-{:011}-{:011}-{:011}-{:011}-{:011}-{:011}-{:011}-{:011}",
        i,
        i * 7,
        i * 13,
        0,
        1,
        2,
        3,
        4,
        5,
        i % 17
    )
}
fn pad_val(i: i64) -> String {
    format!("{:011}-{:011}-{:011}-{:011}-{:011}", i, 1, 2, 3, i % 5)
}
fn k_of(i: i64) -> i64 {
    (i * 37) % TABLE_SIZE + 1
}

fn create(s: &mut Session, n: u32, auto_inc: bool, secondary_key: bool) {
    let id_def = if auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let key = if secondary_key {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    exec(
        s,
        &format!(
            "CREATE TABLE sbtest{n}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {key} (id)\n) /*! ENGINE = innodb */ "
        ),
    );
}

fn bulk_insert(s: &mut Session, n: u32, auto_inc: bool) {
    // sysbench's bulk insert: one INSERT with many rows (batches of ~16 KiB).
    let mut i = 1;
    while i <= TABLE_SIZE {
        let head = if auto_inc {
            format!("INSERT INTO sbtest{n}(k, c, pad) VALUES")
        } else {
            format!("INSERT INTO sbtest{n}(id, k, c, pad) VALUES")
        };
        let mut parts = Vec::new();
        while i <= TABLE_SIZE && parts.len() < 50 {
            parts.push(if auto_inc {
                format!("({}, '{}', '{}')", k_of(i), c_val(i), pad_val(i))
            } else {
                format!("({}, {}, '{}', '{}')", i, k_of(i), c_val(i), pad_val(i))
            });
            i += 1;
        }
        let r = exec(s, &format!("{head}{}", parts.join(",")));
        assert_eq!(affected(&r), parts.len() as u64);
    }
}

fn prepare_tables(s: &mut Session, auto_inc: bool) {
    create(s, 1, auto_inc, false);
    bulk_insert(s, 1, auto_inc);
    exec(s, "CREATE INDEX k_1 ON sbtest1(k)");
}

fn prewarm(s: &mut Session) {
    exec(s, "SET tmp_table_size=2*1024*1024*1024");
    exec(s, "SET max_heap_table_size=2*1024*1024*1024");
    let r = q(s, "ANALYZE TABLE sbtest1");
    assert_eq!(
        r,
        vec![vec![
            Value::Bytes(b"sbtest.sbtest1".to_vec()),
            Value::Bytes(b"analyze".to_vec()),
            Value::Bytes(b"status".to_vec()),
            Value::Bytes(b"OK".to_vec())
        ]]
    );
    let avg = q(
        s,
        &format!(
            "SELECT AVG(id) FROM (SELECT * FROM sbtest1 FORCE KEY (PRIMARY) LIMIT {TABLE_SIZE}) t"
        ),
    );
    assert_eq!(
        text(&avg[0][0]),
        format!("{:.4}", (TABLE_SIZE + 1) as f64 / 2.0)
    );
    let cnt = q(
        s,
        &format!(
            "SELECT COUNT(*) FROM (SELECT * FROM sbtest1 WHERE k LIKE '%0%' LIMIT {TABLE_SIZE}) t"
        ),
    );
    let expect = (1..=TABLE_SIZE)
        .filter(|i| k_of(*i).to_string().contains('0'))
        .count() as i64;
    assert_eq!(int(&cnt[0][0]), expect);
    let cnt = q(
        s,
        &format!(
            "SELECT COUNT(*) FROM (SELECT * FROM sbtest1 FORCE KEY (k_1) LIMIT {TABLE_SIZE}) t"
        ),
    );
    assert_eq!(int(&cnt[0][0]), TABLE_SIZE);
}

struct Stmts {
    begin: u32,
    commit: u32,
    point: u32,
    simple: u32,
    sum: u32,
    order: u32,
    distinct: u32,
    idx_upd: u32,
    nonidx_upd: u32,
    del: u32,
    ins: u32,
}

fn prepare_all(s: &mut Session) -> Stmts {
    let mut p = |sql: &str, n: u16| {
        let info = s.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(info.param_count, n, "{sql}");
        info.statement_id
    };
    Stmts {
        begin: p("BEGIN", 0),
        commit: p("COMMIT", 0),
        point: p("SELECT c FROM sbtest1 WHERE id=?", 1),
        simple: p("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?", 2),
        sum: p("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?", 2),
        order: p(
            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
            2,
        ),
        distinct: p(
            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
            2,
        ),
        idx_upd: p("UPDATE sbtest1 SET k=k+1 WHERE id=?", 1),
        nonidx_upd: p("UPDATE sbtest1 SET c=? WHERE id=?", 2),
        del: p("DELETE FROM sbtest1 WHERE id=?", 1),
        ins: p("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)", 4),
    }
}

fn x(s: &mut Session, id: u32, params: &[Value]) -> QueryResult {
    s.execute(id, params)
        .unwrap_or_else(|e| panic!("stmt {id}: {e}"))
}

fn b(v: &str) -> Value {
    Value::Bytes(v.as_bytes().to_vec())
}

fn run_read_write(s: &mut Session, st: &Stmts) {
    let range = 10;
    x(s, st.begin, &[]);
    assert!(s.in_transaction());
    // point selects
    for id in [1, 5, TABLE_SIZE] {
        let r = rows(x(s, st.point, &[Value::Int(id)]));
        assert_eq!(r, vec![vec![b(&c_val(id))]]);
    }
    assert!(rows(x(s, st.point, &[Value::Int(TABLE_SIZE + 10)])).is_empty());
    // ranges
    let r = rows(x(
        s,
        st.simple,
        &[Value::Int(20), Value::Int(20 + range - 1)],
    ));
    assert_eq!(r.len(), range as usize);
    assert_eq!(r[0], vec![b(&c_val(20))]);
    let r = rows(x(s, st.sum, &[Value::Int(20), Value::Int(20 + range - 1)]));
    let expect: i64 = (20..20 + range).map(k_of).sum();
    assert_eq!(int(&r[0][0]), expect);
    let r = rows(x(
        s,
        st.order,
        &[Value::Int(20), Value::Int(20 + range - 1)],
    ));
    let mut cs: Vec<String> = (20..20 + range).map(c_val).collect();
    cs.sort();
    assert_eq!(r.iter().map(|r| text(&r[0])).collect::<Vec<_>>(), cs);
    let r = rows(x(
        s,
        st.distinct,
        &[Value::Int(20), Value::Int(20 + range - 1)],
    ));
    assert_eq!(r.iter().map(|r| text(&r[0])).collect::<Vec<_>>(), cs);
    // writes
    let r = x(s, st.idx_upd, &[Value::Int(7)]);
    assert_eq!(affected(&r), 1);
    let r = x(s, st.nonidx_upd, &[b("new-c-value"), Value::Int(8)]);
    assert_eq!(affected(&r), 1);
    let r = x(s, st.del, &[Value::Int(9)]);
    assert_eq!(affected(&r), 1);
    let r = x(
        s,
        st.ins,
        &[Value::Int(9), Value::Int(42), b(&c_val(9)), b(&pad_val(9))],
    );
    assert_eq!(affected(&r), 1);
    x(s, st.commit, &[]);
    assert!(!s.in_transaction());
    let r = q(
        s,
        "SELECT k, c FROM sbtest1 WHERE id IN (7, 8, 9) ORDER BY id",
    );
    assert_eq!(
        r,
        vec![
            vec![Value::Int(k_of(7) + 1), b(&c_val(7))],
            vec![Value::Int(k_of(8)), b("new-c-value")],
            vec![Value::Int(42), b(&c_val(9))]
        ]
    );
}

#[test]
fn oltp_prepare_prewarm_run_cleanup_with_auto_inc() {
    let e = env();
    let mut s = e.session(1);
    prepare_tables(&mut s, true);
    prewarm(&mut s);
    let st = prepare_all(&mut s);
    run_read_write(&mut s, &st);
    // the same statements again, autocommit mode (--skip_trx)
    let r = rows(x(&mut s, st.point, &[Value::Int(3)]));
    assert_eq!(r.len(), 1);
    // column metadata
    match s
        .query("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 3")
        .unwrap()
    {
        QueryResult::Rows { columns, .. } => {
            assert_eq!(columns[0].name, "SUM(k)");
            assert_eq!(columns[0].kind, ColumnKind::NewDecimal);
        }
        other => panic!("{other:?}"),
    }
    match s.query("SELECT c FROM sbtest1 WHERE id=1").unwrap() {
        QueryResult::Rows { columns, .. } => {
            assert_eq!(columns[0].name, "c");
            assert_eq!(columns[0].kind, ColumnKind::String);
            assert!(columns[0].is_text);
            assert_eq!(columns[0].table, "sbtest1");
        }
        other => panic!("{other:?}"),
    }
    for id in [
        st.point,
        st.simple,
        st.sum,
        st.order,
        st.distinct,
        st.idx_upd,
        st.nonidx_upd,
        st.del,
        st.ins,
        st.begin,
        st.commit,
    ] {
        s.close_statement(id);
    }
    exec(&mut s, "DROP TABLE IF EXISTS sbtest1");
    exec(&mut s, "DROP TABLE IF EXISTS sbtest1");
    s.end();
}

#[test]
fn oltp_without_auto_inc_and_oltp_insert() {
    let e = env();
    let mut s = e.session(1);
    prepare_tables(&mut s, false);
    let st = prepare_all(&mut s);
    run_read_write(&mut s, &st);
    // oltp_insert.lua with --auto_inc=off: negative unique ids via COM_QUERY
    let r = exec(
        &mut s,
        &format!(
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES ({}, {}, '{}', '{}')",
            5 - 2147483648i64,
            3,
            c_val(1),
            pad_val(1)
        ),
    );
    assert_eq!(affected(&r), 1);
    exec(&mut s, "DROP TABLE IF EXISTS sbtest1");
    // oltp_insert.lua with auto_inc: id 0 → generated
    create(&mut s, 1, true, false);
    let r = exec(
        &mut s,
        &format!(
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5, '{}', '{}')",
            c_val(1),
            pad_val(1)
        ),
    );
    match r {
        QueryResult::Ok { last_insert_id, .. } => assert_eq!(last_insert_id, 1),
        other => panic!("{other:?}"),
    }
    let r = exec(
        &mut s,
        &format!(
            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (0, 5, '{}', '{}')",
            c_val(2),
            pad_val(2)
        ),
    );
    assert!(matches!(
        r,
        QueryResult::Ok {
            last_insert_id: 2,
            ..
        }
    ));
    assert_eq!(
        q(&mut s, "SELECT LAST_INSERT_ID()"),
        vec![vec![Value::Int(2)]]
    );
}

#[test]
fn select_random_points_and_ranges() {
    let e = env();
    let mut s = e.session(1);
    prepare_tables(&mut s, true);
    let points = s.prepare("\n        SELECT id, k, c, pad\n          FROM sbtest1\n          WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)\n        ").unwrap();
    assert_eq!(points.param_count, 10);
    assert_eq!(points.columns.len(), 4);
    let ks: Vec<i64> = vec![1, 2, 3, 3, 50, 77, 1000, 5, 6, 7];
    let params: Vec<Value> = ks.iter().map(|k| Value::Int(*k)).collect();
    let r = rows(s.execute(points.statement_id, &params).unwrap());
    let expect = (1..=TABLE_SIZE).filter(|i| ks.contains(&k_of(*i))).count();
    assert_eq!(r.len(), expect);
    let ranges = s
        .prepare("\n        SELECT count(k)\n          FROM sbtest1\n          WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ?")
        .unwrap();
    let params: Vec<Value> = [10, 15, 13, 20, 100, 105]
        .iter()
        .map(|v| Value::Int(*v))
        .collect();
    let r = rows(s.execute(ranges.statement_id, &params).unwrap());
    let expect = (1..=TABLE_SIZE)
        .filter(|i| matches!(k_of(*i), 10..=20 | 100..=105))
        .count() as i64;
    assert_eq!(int(&r[0][0]), expect);
    match s.execute(ranges.statement_id, &params).unwrap() {
        QueryResult::Rows { columns, .. } => assert_eq!(columns[0].name, "count(k)"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bulk_insert_lua_and_secondary_option() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE IF NOT EXISTS sbtest1 (\n          id INTEGER NOT NULL,\n          k INTEGER DEFAULT '0' NOT NULL,\n          PRIMARY KEY (id))");
    exec(&mut s, "CREATE TABLE IF NOT EXISTS sbtest1 (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id))");
    let vals: Vec<String> = (1..=500).map(|i| format!("({i},{i})")).collect();
    let r = exec(
        &mut s,
        &format!("INSERT INTO sbtest1 VALUES{}", vals.join(",")),
    );
    assert_eq!(affected(&r), 500);
    assert_eq!(
        q(&mut s, "SELECT COUNT(*) FROM sbtest1"),
        vec![vec![Value::Int(500)]]
    );
    exec(&mut s, "DROP TABLE IF EXISTS sbtest1");
    // --secondary: no primary key, `KEY xid (id)`. The engine may refuse such tables; the SQL
    // layer must answer with an error code, not panic.
    let r = s.query("CREATE TABLE sbtest2(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, KEY xid (id)) /*! ENGINE = innodb */");
    if let Err(e) = r {
        assert_eq!(e.code, 1235);
    }
}

#[test]
fn connect_time_queries_of_clients() {
    let e = env();
    let mut s = e.session(1);
    assert_eq!(
        q(&mut s, "select @@version_comment limit 1"),
        vec![vec![b("tierdb")]]
    );
    assert_eq!(q(&mut s, "SELECT DATABASE()"), vec![vec![b("sbtest")]]);
    assert_eq!(
        q(&mut s, "SELECT USER()"),
        vec![vec![b("sbtest@127.0.0.1")]]
    );
    let r = exec(&mut s, "SELECT @@max_allowed_packet, @@wait_timeout, @@socket, @@session.autocommit, @@GLOBAL.version");
    match r {
        QueryResult::Rows { columns, rows } => {
            assert_eq!(columns[0].name, "@@max_allowed_packet");
            assert_eq!(rows[0][0], Value::Int(64 << 20));
            assert_eq!(rows[0][1], Value::Int(28800));
            assert_eq!(rows[0][3], Value::Int(1));
            assert_eq!(text(&rows[0][4]), "10.11.0-tierdb-0.1.0");
        }
        other => panic!("{other:?}"),
    }
    exec(&mut s, "SET NAMES utf8mb4");
    exec(&mut s, "SET character_set_results = NULL");
    exec(&mut s, "SET autocommit=1");
    exec(&mut s, "USE sbtest");
}
