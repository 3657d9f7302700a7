//! Correlated subqueries against a model: customers and orders of random rows (NULLs and
//! orders of no customer included); EXISTS / NOT EXISTS, IN, scalar COUNT / SUM / MAX,
//! ALL / ANY, a subquery two levels deep naming the outermost query, and correlated
//! subqueries of a grouped query are compared with the answer computed row by row here; a
//! prepared statement whose correlated subquery also takes a `?` answers each execution
//! with its own parameter; UPDATE ... SET col = (correlated subquery) and DELETE ... WHERE NOT
//! EXISTS change exactly the rows the model says, and see the transaction's own rows.

mod common;

use common::*;
use tierdb_engine::Value;

/// (id, region, credit)
type C = (i64, Option<i64>, Option<i64>);
/// (id, cid, amount)
type O = (i64, Option<i64>, i64);

fn setup() -> (Env, Vec<C>, Vec<O>) {
    let env = env();
    let mut s = env.session(1);
    exec(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, region INT, credit INT)",
    );
    exec(
        &mut s,
        "CREATE TABLE o (id INT PRIMARY KEY, cid INT, amount INT NOT NULL, KEY cid (cid))",
    );
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let cs: Vec<C> = (0..60)
        .map(|id| {
            let region = (next(6) > 0).then(|| next(4) as i64);
            let credit = (next(5) > 0).then(|| next(50) as i64);
            (id, region, credit)
        })
        .collect();
    let os: Vec<O> = (0..240)
        .map(|id| {
            // Some orders name no customer (ids 60..80) or nothing.
            let cid = (next(12) > 0).then(|| next(80) as i64);
            (id, cid, next(60) as i64)
        })
        .collect();
    let lit = |v: Option<i64>| v.map_or("NULL".to_string(), |x| x.to_string());
    let vals: Vec<String> = cs
        .iter()
        .map(|(id, r, cr)| format!("({id}, {}, {})", lit(*r), lit(*cr)))
        .collect();
    exec(&mut s, &format!("INSERT INTO c VALUES {}", vals.join(",")));
    for chunk in os.chunks(60) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|(id, cid, a)| format!("({id}, {}, {a})", lit(*cid)))
            .collect();
        exec(&mut s, &format!("INSERT INTO o VALUES {}", vals.join(",")));
    }
    (env, cs, os)
}

fn opt(v: &Value) -> Option<i64> {
    match v {
        Value::Null => None,
        other => Some(int(other)),
    }
}

fn orders_of<'a>(os: &'a [O], c: &C) -> impl Iterator<Item = &'a O> + 'a {
    let id = c.0;
    os.iter().filter(move |o| o.1 == Some(id))
}

fn id_list(rows: Vec<Vec<Value>>) -> Vec<i64> {
    rows.iter().map(|r| int(&r[0])).collect()
}

#[test]
fn correlated_subqueries_answer_row_by_row() {
    let (env, cs, os) = setup();
    let mut s = env.session(1);

    let with_orders: Vec<i64> = cs
        .iter()
        .filter(|c| orders_of(&os, c).next().is_some())
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.id) ORDER BY id"
        )),
        with_orders
    );
    let without: Vec<i64> = cs
        .iter()
        .filter(|c| orders_of(&os, c).next().is_none())
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE NOT EXISTS (SELECT 1 FROM o WHERE o.cid = c.id) ORDER BY id"
        )),
        without
    );

    // EXISTS linked by one integer equality runs as `id IN (SELECT cid ...)` (once, driving
    // key lookups); the answers stay the row-by-row ones, in every spelling and context.
    let having = |pred: &dyn Fn(&O) -> bool, extra: &dyn Fn(&C) -> bool| -> Vec<i64> {
        cs.iter()
            .filter(|c| extra(c) && orders_of(&os, c).any(pred))
            .map(|c| c.0)
            .collect()
    };
    let big = having(&|o| o.2 > 20, &|_| true);
    for sql in [
        "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > 20) ORDER BY id",
        "SELECT id FROM c WHERE EXISTS (SELECT * FROM o WHERE o.amount > 20 AND c.id = o.cid) ORDER BY id",
        "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > 20 LIMIT 1) ORDER BY id",
        "SELECT id FROM c AS c WHERE id >= 0 AND EXISTS (SELECT o.id FROM o WHERE c.id = o.cid AND 20 < o.amount ORDER BY o.amount) ORDER BY id",
    ] {
        assert_eq!(id_list(q(&mut s, sql)), big, "{sql}");
    }
    let want = having(&|o| o.2 > 20, &|c| c.1 == Some(2));
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE region = 2 AND EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > 20) ORDER BY id"
        )),
        want
    );
    // Not a WHERE conjunct: under OR, and as a value (0 / 1, never NULL).
    let want: Vec<i64> = cs
        .iter()
        .filter(|c| c.1 == Some(1) || orders_of(&os, c).any(|o| o.2 > 20))
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE region = 1 OR EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > 20) ORDER BY id"
        )),
        want
    );
    let got = q(
        &mut s,
        "SELECT id, EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > 20) FROM c ORDER BY id",
    );
    for (row, c) in got.iter().zip(&cs) {
        assert_eq!(int(&row[1]), i64::from(big.contains(&c.0)), "{c:?}");
    }
    // Linked by the subquery table's primary key; and the reverse direction (orders whose
    // customer has credit), where the link column of the outer row may be NULL.
    let want: Vec<i64> = cs
        .iter()
        .filter(|c| os.iter().any(|o| o.0 == c.0 && o.2 % 2 == 0))
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.id = c.id AND o.amount % 2 = 0) ORDER BY id"
        )),
        want
    );
    let want: Vec<i64> = os
        .iter()
        .filter(|o| {
            cs.iter()
                .any(|c| Some(c.0) == o.1 && c.2.is_some_and(|cr| cr > 10))
        })
        .map(|o| o.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM o WHERE EXISTS (SELECT 1 FROM c WHERE c.id = o.cid AND c.credit > 10) ORDER BY id"
        )),
        want
    );
    // Prepared, with a parameter inside the subquery and one outside.
    let st = s
        .prepare("SELECT id FROM c WHERE id < ? AND EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND o.amount > ?) ORDER BY id")
        .unwrap();
    for (lim, amt) in [(30i64, 20i64), (60, 40), (10, 0)] {
        let got = id_list(rows(
            s.execute(st.statement_id, &[Value::Int(lim), Value::Int(amt)])
                .unwrap(),
        ));
        assert_eq!(got, having(&|o| o.2 > amt, &|c| c.0 < lim), "{lim} {amt}");
    }

    // Scalar aggregates per customer: COUNT is 0 and SUM / MAX are NULL without orders.
    let got = q(
        &mut s,
        "SELECT id, (SELECT COUNT(*) FROM o WHERE o.cid = c.id), \
         (SELECT SUM(amount) FROM o WHERE o.cid = c.id), \
         (SELECT MAX(amount) FROM o WHERE o.cid = c.id AND o.amount < c.credit) FROM c ORDER BY id",
    );
    assert_eq!(got.len(), cs.len());
    for (row, c) in got.iter().zip(&cs) {
        let mine: Vec<i64> = orders_of(&os, c).map(|o| o.2).collect();
        assert_eq!(int(&row[0]), c.0);
        assert_eq!(int(&row[1]), mine.len() as i64, "count for {c:?}");
        let sum = (!mine.is_empty()).then(|| mine.iter().sum::<i64>());
        assert_eq!(opt(&row[2]), sum, "sum for {c:?}");
        let max =
            c.2.and_then(|cr| mine.iter().copied().filter(|a| *a < cr).max());
        assert_eq!(opt(&row[3]), max, "max below credit for {c:?}");
    }

    // IN with the outer row inside the subquery's WHERE.
    let want: Vec<i64> = cs
        .iter()
        .filter(|c| {
            os.iter()
                .any(|o| o.1 == Some(c.0) && c.2.is_some_and(|cr| o.2 > cr))
        })
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE id IN (SELECT cid FROM o WHERE o.amount > c.credit) ORDER BY id"
        )),
        want
    );

    // ALL / ANY against the order's own customer's orders (an order with no customer
    // compares against an empty set: ALL true, ANY false).
    let peers = |o: &O| -> Vec<i64> {
        os.iter()
            .filter(|p| p.1.is_some() && p.1 == o.1)
            .map(|p| p.2)
            .collect()
    };
    let top: Vec<i64> = os
        .iter()
        .filter(|o| peers(o).iter().all(|a| o.2 >= *a))
        .map(|o| o.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM o WHERE amount >= ALL (SELECT amount FROM o AS p WHERE p.cid = o.cid) ORDER BY id"
        )),
        top
    );
    let below_some: Vec<i64> = os
        .iter()
        .filter(|o| peers(o).iter().any(|a| o.2 < *a))
        .map(|o| o.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM o WHERE amount < ANY (SELECT amount FROM o AS p WHERE p.cid = o.cid) ORDER BY id"
        )),
        below_some
    );

    // Two levels deep: the innermost subquery names the outermost query's row.
    let want: Vec<i64> = cs
        .iter()
        .filter(|c| {
            orders_of(&os, c).any(|o| {
                os.iter()
                    .any(|p| p.0 != o.0 && p.2 == o.2 && c.2.is_some_and(|cr| p.2 < cr))
            })
        })
        .map(|c| c.0)
        .collect();
    assert_eq!(
        id_list(q(
            &mut s,
            "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.id AND EXISTS \
             (SELECT 1 FROM o AS p WHERE p.id <> o.id AND p.amount = o.amount AND p.amount < c.credit)) \
             ORDER BY id"
        )),
        want
    );

    // A grouped query: the subquery names a GROUP BY column, in the select list and HAVING.
    let mut regions: Vec<Option<i64>> = cs.iter().map(|c| c.1).collect();
    regions.sort();
    regions.dedup();
    let got = q(
        &mut s,
        "SELECT region, COUNT(*), (SELECT COUNT(*) FROM c AS x WHERE x.region = c.region AND x.credit > 25) \
         FROM c GROUP BY region HAVING COUNT(*) > (SELECT COUNT(*) FROM o WHERE o.cid = c.region) ORDER BY region",
    );
    let mut want = Vec::new();
    for r in regions {
        let members = cs.iter().filter(|c| c.1 == r).count() as i64;
        let rich = cs
            .iter()
            .filter(|c| r.is_some() && c.1 == r && c.2.is_some_and(|cr| cr > 25))
            .count() as i64;
        let orders = os.iter().filter(|o| r.is_some() && o.1 == r).count() as i64;
        if members > orders {
            want.push((r, members, rich));
        }
    }
    let got: Vec<(Option<i64>, i64, i64)> = got
        .iter()
        .map(|r| (opt(&r[0]), int(&r[1]), int(&r[2])))
        .collect();
    assert_eq!(got, want);

    // A scalar subquery returning two rows for some row: 1242.
    let e = err(
        &mut s,
        "SELECT id, (SELECT id FROM o WHERE o.cid = c.id) FROM c",
    );
    assert_eq!(e.code, 1242, "{e:?}");
    // A column no query has: 1054 naming it.
    let e = err(
        &mut s,
        "SELECT id FROM c WHERE EXISTS (SELECT 1 FROM o WHERE o.cid = c.nosuch)",
    );
    assert_eq!(e.code, 1054, "{e:?}");
    assert!(e.message.contains("c.nosuch"), "{}", e.message);
}

#[test]
fn prepared_correlated_subqueries_take_their_parameters() {
    let (env, cs, os) = setup();
    let mut s = env.session(1);
    let st = s
        .prepare(
            "SELECT id, (SELECT COUNT(*) FROM o WHERE o.cid = c.id AND o.amount > ?) \
             FROM c WHERE id < ? ORDER BY id",
        )
        .expect("prepare")
        .statement_id;
    for (min, below) in [(10i64, 20i64), (40, 60), (59, 5), (-1, 60)] {
        let got = match s
            .execute(st, &[Value::Int(min), Value::Int(below)])
            .expect("execute")
        {
            tierdb_sql::QueryResult::Rows { rows, .. } => rows,
            other => panic!("{other:?}"),
        };
        let want: Vec<(i64, i64)> = cs
            .iter()
            .filter(|c| c.0 < below)
            .map(|c| (c.0, orders_of(&os, c).filter(|o| o.2 > min).count() as i64))
            .collect();
        let got: Vec<(i64, i64)> = got.iter().map(|r| (int(&r[0]), int(&r[1]))).collect();
        assert_eq!(got, want, "amount > {min}, id < {below}");
    }
}

#[test]
fn correlated_updates_and_deletes_change_what_the_model_says() {
    let (env, cs, os) = setup();
    let mut s = env.session(1);
    exec(&mut s, "BEGIN");
    // An order inserted in this transaction counts for its customer.
    exec(&mut s, "INSERT INTO o VALUES (1000, 0, 7)");
    let mut os = os;
    os.push((1000, Some(0), 7));
    let r = exec(
        &mut s,
        "UPDATE c SET credit = (SELECT COUNT(*) FROM o WHERE o.cid = c.id) WHERE region = 1",
    );
    let in_region: Vec<&C> = cs.iter().filter(|c| c.1 == Some(1)).collect();
    let changed = in_region
        .iter()
        .filter(|c| c.2 != Some(orders_of(&os, c).count() as i64))
        .count() as u64;
    assert_eq!(affected(&r), changed);
    let got = q(&mut s, "SELECT id, credit FROM c ORDER BY id");
    for (row, c) in got.iter().zip(&cs) {
        let want = if c.1 == Some(1) {
            Some(orders_of(&os, c).count() as i64)
        } else {
            c.2
        };
        assert_eq!(opt(&row[1]), want, "credit of {c:?}");
    }
    // Orders whose customer does not exist go.
    let r = exec(
        &mut s,
        "DELETE FROM o WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.id = o.cid)",
    );
    let orphans = os
        .iter()
        .filter(|o| !o.1.is_some_and(|cid| cs.iter().any(|c| c.0 == cid)))
        .count() as u64;
    assert!(orphans > 0);
    assert_eq!(affected(&r), orphans);
    exec(&mut s, "COMMIT");
    let left = id_list(q(&mut s, "SELECT id FROM o ORDER BY id"));
    let want: Vec<i64> = os
        .iter()
        .filter(|o| o.1.is_some_and(|cid| cs.iter().any(|c| c.0 == cid)))
        .map(|o| o.0)
        .collect();
    assert_eq!(left, want);
}
