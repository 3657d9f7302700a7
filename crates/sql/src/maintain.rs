//! `OPTIMIZE TABLE`, `CHECK TABLE` and `REPAIR TABLE`, answered as MariaDB does: one result set of
//! (Table, Op, Msg_type, Msg_text) rows, a failing table reported in its rows (Error, then
//! "Operation failed") without failing the statement.
//!
//! OPTIMIZE rebuilds each table through `Engine::rebuild_table` (every row rewritten into
//! new trees, the old ones freed: InnoDB's "recreate + analyze"); it also gives a table from
//! before long values existed its long-value tree. CHECK reads every row of each table under
//! one read view (every page and long value it needs is read and verified) and counts each
//! index's entries against the rows.
//!
//! Must never: fail the whole statement for one table; report a table as checked while an
//! engine error went unreported.

use crate::result::{QueryResult, SqlError};
use crate::show::{s, text_cols};
use std::ops::Bound;
use std::sync::Arc;
use tierdb_engine::{Engine, Table, Value};

type Row = Vec<Value>;

fn header() -> Vec<crate::result::Column> {
    text_cols(&["Table", "Op", "Msg_type", "Msg_text"])
}

/// `key` names a view, not a table (a TEMPORARY table hides a view of its name).
fn is_view(engine: &Engine, db: &str, key: &str) -> bool {
    !engine.is_temporary_table(db, key) && engine.view(db, key).is_some()
}

fn failed(rows: &mut Vec<Row>, shown: &str, op: &str, msg: &str) {
    rows.push(vec![s(shown), s(op), s("Error"), s(msg)]);
    rows.push(vec![s(shown), s(op), s("status"), s("Operation failed")]);
}

/// `OPTIMIZE TABLE`: per table (db, engine name, name as written).
pub fn optimize(engine: &Engine, tables: &[(String, String, String)]) -> QueryResult {
    let mut rows = Vec::new();
    for (db, key, name) in tables {
        let shown = format!("{db}.{name}");
        if is_view(engine, db, key) {
            failed(
                &mut rows,
                &shown,
                "optimize",
                &format!("'{shown}' is not of type 'BASE TABLE'"),
            );
            continue;
        }
        let rebuilt = engine.table(db, key).map_err(SqlError::from).and_then(|t| {
            let def = crate::alter::plan(&[], &t.def)?.def;
            engine
                .rebuild_table(db, key, &t.def, def, &mut Ok)
                .map_err(SqlError::from)
        });
        match rebuilt {
            Ok(n) => {
                tracing::info!(db, table = %name, rows = n, "OPTIMIZE TABLE rebuilt the table");
                rows.push(vec![
                    s(&shown),
                    s("optimize"),
                    s("note"),
                    s("Table does not support optimize, doing recreate + analyze instead"),
                ]);
                rows.push(vec![s(&shown), s("optimize"), s("status"), s("OK")]);
            }
            Err(e) => failed(&mut rows, &shown, "optimize", &e.message),
        }
    }
    QueryResult::Rows {
        columns: header(),
        rows,
    }
}

/// What CHECK found wrong in table `t` (empty: nothing).
fn check_one(engine: &Engine, t: &Arc<Table>) -> Result<Vec<String>, SqlError> {
    let mut tx = engine.begin();
    tx.consistent_reads();
    let mut n_rows = 0u64;
    for r in tx.scan(t, Bound::Unbounded, Bound::Unbounded)? {
        r?;
        n_rows += 1;
    }
    let mut problems = Vec::new();
    for (i, idx) in t.def.indexes.iter().enumerate() {
        let mut n = 0u64;
        for r in tx.index_scan(t, i, Bound::Unbounded, Bound::Unbounded)? {
            r?;
            n += 1;
        }
        if n != n_rows {
            problems.push(format!(
                "InnoDB: Index '{}' contains {n} entries, should be {n_rows}.",
                idx.name
            ));
        }
    }
    tx.commit()?;
    Ok(problems)
}

/// `REPAIR TABLE`: per table (db, engine name, name as written). There is nothing to
/// repair by hand (a page that fails its checksum is read again from the BPE or the data
/// file, and redo recovery restores a crashed write): the note InnoDB gives.
pub fn repair(engine: &Engine, tables: &[(String, String, String)]) -> QueryResult {
    let mut rows = Vec::new();
    for (db, key, name) in tables {
        let shown = format!("{db}.{name}");
        if is_view(engine, db, key) {
            failed(
                &mut rows,
                &shown,
                "repair",
                &format!("'{shown}' is not of type 'BASE TABLE'"),
            );
            continue;
        }
        match engine.table(db, key) {
            Ok(_) => rows.push(vec![
                s(&shown),
                s("repair"),
                s("note"),
                s("The storage engine for the table doesn't support repair"),
            ]),
            Err(e) => failed(&mut rows, &shown, "repair", &SqlError::from(e).message),
        }
    }
    QueryResult::Rows {
        columns: header(),
        rows,
    }
}

/// `CHECK TABLE`: per table (db, engine name, name as written).
pub fn check(engine: &Engine, tables: &[(String, String, String)]) -> QueryResult {
    let mut rows = Vec::new();
    for (db, key, name) in tables {
        let shown = format!("{db}.{name}");
        if is_view(engine, db, key) {
            rows.push(vec![s(&shown), s("check"), s("status"), s("OK")]);
            continue;
        }
        let t = match engine.table(db, key) {
            Ok(t) => t,
            Err(e) => {
                failed(&mut rows, &shown, "check", &SqlError::from(e).message);
                continue;
            }
        };
        match check_one(engine, &t) {
            Ok(problems) if problems.is_empty() => {
                rows.push(vec![s(&shown), s("check"), s("status"), s("OK")]);
            }
            Ok(problems) => {
                for p in problems {
                    tracing::warn!(db, table = %name, problem = %p, "CHECK TABLE found a problem");
                    rows.push(vec![s(&shown), s("check"), s("Warning"), s(p)]);
                }
                rows.push(vec![s(&shown), s("check"), s("error"), s("Corrupt")]);
            }
            Err(e) => {
                tracing::warn!(db, table = %name, error = %e.message, "CHECK TABLE could not read the table");
                rows.push(vec![s(&shown), s("check"), s("error"), s(&e.message)]);
                rows.push(vec![s(&shown), s("check"), s("error"), s("Corrupt")]);
            }
        }
    }
    QueryResult::Rows {
        columns: header(),
        rows,
    }
}
