//! DROP TABLE and TRUNCATE give the table's pages back for reuse, after the last session
//! that planned a statement on the old table has let go of it: a prepared statement that
//! still names the dropped table gets error 1146 on its next execution and then no longer
//! holds the pages. Repeated drop / create / fill cycles (what sysbench's cleanup + prepare
//! do) leave the data file at the size of one copy.

mod common;

use common::*;
use tierdb_engine::Value;

fn fill(s: &mut common::Env, n: i64) {
    let mut c = s.session(1);
    exec(
        &mut c,
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, KEY k_idx (k))",
    );
    for chunk in (0..n).collect::<Vec<_>>().chunks(250) {
        let values: Vec<String> = chunk
            .iter()
            .map(|i| format!("({i}, {}, '{}')", i % 31, "x".repeat(100)))
            .collect();
        exec(
            &mut c,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    c.end();
}

fn status(s: &mut tierdb_sql::Session, name: &str) -> i64 {
    let r = q(s, &format!("SHOW GLOBAL STATUS LIKE '{name}'"));
    int(&r[0][1])
}

#[test]
fn a_stale_prepared_statement_holds_the_pages_until_it_runs_again() {
    let mut env = env();
    fill(&mut env, 4000);
    let engine = env.shared.engine().clone();
    let mut holder = env.session(2);
    let stmt = holder
        .prepare("SELECT c FROM t WHERE id = ?")
        .expect("prepare")
        .statement_id;
    assert_eq!(
        rows(holder.execute(stmt, &[Value::Int(7)]).expect("execute")).len(),
        1
    );
    let mut admin = env.session(3);
    exec(&mut admin, "DROP TABLE t");
    // The primary tree, the index and the long-value tree.
    assert_eq!(status(&mut admin, "Tierdb_dropped_trees_pending"), 3);
    assert_eq!(
        engine.reclaim_dropped(usize::MAX).expect("reclaim"),
        0,
        "freed while a prepared statement's plan still named the table"
    );
    let e = holder
        .execute(stmt, &[Value::Int(7)])
        .expect_err("the table is gone");
    assert_eq!(e.code, 1146);
    let freed = engine.reclaim_dropped(usize::MAX).expect("reclaim");
    assert!(freed > 20, "only {freed} pages freed");
    assert_eq!(status(&mut admin, "Tierdb_dropped_trees_pending"), 0);
    assert_eq!(status(&mut admin, "Tierdb_pages_reclaimed"), freed as i64);
    // The statement works again once the table exists again.
    fill(&mut env, 10);
    assert_eq!(
        rows(holder.execute(stmt, &[Value::Int(7)]).expect("execute")).len(),
        1
    );
}

#[test]
fn drop_create_fill_cycles_keep_the_data_file_at_one_copy() {
    let mut env = env();
    let engine = env.shared.engine().clone();
    let mut sizes = vec![];
    for cycle in 0..4 {
        fill(&mut env, 3000);
        sizes.push(engine.data_pages_allocated().expect("pages"));
        let mut c = env.session(4);
        if cycle % 2 == 0 {
            exec(&mut c, "DROP TABLE t");
        } else {
            exec(&mut c, "TRUNCATE TABLE t");
            assert_eq!(int(&q(&mut c, "SELECT COUNT(*) FROM t")[0][0]), 0);
            exec(&mut c, "DROP TABLE t");
        }
        c.end();
        engine.reclaim_dropped(usize::MAX).expect("reclaim");
    }
    assert!(
        sizes[3] <= sizes[0] + 8,
        "the data file kept growing over drop/create cycles: {sizes:?} pages"
    );
}
