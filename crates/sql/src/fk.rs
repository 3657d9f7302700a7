//! FOREIGN KEY constraints, as InnoDB keeps them: declared on the child (referencing) table,
//! checked row by row while a statement changes rows, with the parent's referencing rows
//! refused (RESTRICT / NO ACTION), deleted or updated along (CASCADE) or set to NULL
//! (SET NULL).
//!
//! Owns: turning the FOREIGN KEY syntax into `ForeignKeyDef`s (names, the index each needs
//! on the child), checking a definition against its parent (`validate`, errno 150 / 121 as
//! MariaDB), the constraint text of errors and SHOW CREATE TABLE, and enforcement (`Fk`).
//!
//! Concurrency (as InnoDB): a child row's insert or change locks the parent row it found
//! *shared* until the transaction ends, so the parent cannot be deleted or re-keyed under
//! it; a parent's delete or re-key holds the parent row exclusively (the statement locked it)
//! and locks each referencing child row before acting on it, re-checking it still
//! references the parent. All lookups are current reads (the statement's mode).
//!
//! Must never: change a row without its checks while `foreign_key_checks` is on, or recurse
//! through cascades without bound (`MAX_DEPTH`, as InnoDB's 15).

use crate::coerce;
use crate::ddl;
use crate::result::SqlError;
use sqlparser::ast;
use std::ops::Bound;
use std::sync::Arc;
use tierdb_engine::{
    ColumnDef, ColumnType, Engine, FkAction, ForeignKeyDef, LockMode, Row, Table, TableDef, Txn,
    Value,
};

/// Cascades deeper than this fail the statement (InnoDB's limit).
const MAX_DEPTH: usize = 15;

/// One FOREIGN KEY clause of a statement: the definition (an empty name is given one by
/// `add_to_def`) and the name of the index it asks for when the table has none.
pub struct Declared {
    pub fk: ForeignKeyDef,
    pub key_name: Option<String>,
}

fn action(a: &Option<ast::ReferentialAction>) -> Result<FkAction, SqlError> {
    Ok(match a {
        None | Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
        Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
        Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
        Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
        Some(ast::ReferentialAction::SetDefault) => {
            return Err(SqlError::unsupported("FOREIGN KEY ... SET DEFAULT"))
        }
    })
}

/// A FOREIGN KEY clause of table `def` (`column`: the column a column-level `REFERENCES`
/// belongs to). The parent's database is empty when the statement did not name one.
pub fn declared(
    c: &ast::ForeignKeyConstraint,
    def: &TableDef,
    column: Option<usize>,
) -> Result<Declared, SqlError> {
    if c.match_kind.is_some() || c.characteristics.is_some() {
        return Err(SqlError::unsupported("FOREIGN KEY ... MATCH / DEFERRABLE"));
    }
    let columns = match column {
        Some(ci) if c.columns.is_empty() => vec![ci],
        _ => c
            .columns
            .iter()
            .map(|i| {
                def.column_index(&i.value).ok_or_else(|| {
                    SqlError::new(
                        1072,
                        "42000",
                        format!("Key column '{}' doesn't exist in table", i.value),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    let name = c
        .name
        .as_ref()
        .or(c.index_name.as_ref())
        .map(|n| n.value.clone());
    let parent_columns: Vec<String> = c.referred_columns.iter().map(|i| i.value.clone()).collect();
    if parent_columns.len() != columns.len() {
        return Err(SqlError::new(
            1239,
            "42000",
            format!(
                "Incorrect foreign key definition for '{}': Key reference and table reference don't match",
                name.as_deref().unwrap_or("foreign key without name")
            ),
        ));
    }
    let parts: Vec<String> = c
        .foreign_table
        .0
        .iter()
        .map(|p| p.to_string().trim_matches('`').to_string())
        .collect();
    let (parent_db, parent_table) = match parts.as_slice() {
        [t] => (String::new(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::syntax(format!("table name {}", c.foreign_table))),
    };
    Ok(Declared {
        fk: ForeignKeyDef {
            name: name.clone().unwrap_or_default(),
            columns,
            parent_db,
            parent_table,
            parent_columns,
            on_delete: action(&c.on_delete)?,
            on_update: action(&c.on_update)?,
        },
        key_name: name,
    })
}

/// Adds `fks` to `def` (statement order; `resolve_db` later names the database of parents
/// given without one): unnamed ones become `<table>_ibfk_<n>` after the highest such number the table
/// had, and each gets an index on its columns unless another index (or the primary key)
/// starts with them — a generated index is dropped in favour of any other covering one, as
/// MariaDB does.
pub fn add_to_def(def: &mut TableDef, fks: Vec<Declared>) -> Result<(), SqlError> {
    let prefix = format!("{}_ibfk_", def.name);
    let mut n = def
        .foreign_keys
        .iter()
        .filter_map(|f| f.name.strip_prefix(&prefix)?.parse::<u64>().ok())
        .max()
        .unwrap_or(0);
    let mut keys: Vec<(Option<String>, Vec<usize>, bool)> = Vec::new();
    for mut d in fks {
        if d.fk.name.is_empty() {
            n += 1;
            d.fk.name = format!("{prefix}{n}");
        }
        keys.push((d.key_name, d.fk.columns.clone(), true));
        def.foreign_keys.push(d.fk);
    }
    for i in 0..keys.len() {
        let cols = keys[i].1.clone();
        let covered = index_for(def, &cols).is_some()
            || keys
                .iter()
                .enumerate()
                .any(|(j, k)| j != i && k.2 && leads(&k.1, &cols));
        if covered {
            keys[i].2 = false;
        }
    }
    for (name, cols, keep) in keys {
        if keep {
            let name = match name {
                Some(n) if !def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(&n)) => n,
                _ => ddl::free_index_name(def, &def.columns[cols[0]].name),
            };
            def.indexes.push(tierdb_engine::IndexDef {
                name,
                columns: cols,
                unique: false,
            });
        }
    }
    Ok(())
}

/// Gives the foreign keys of a new table `def` whose parent was named without a database the
/// table's database `db`.
pub fn resolve_db(def: &mut TableDef, db: &str) {
    for f in &mut def.foreign_keys {
        if f.parent_db.is_empty() {
            f.parent_db = db.to_string();
        }
    }
}

pub(crate) fn cant_create(db: &str, table: &str, errno: u16) -> SqlError {
    let what = match errno {
        121 => "Duplicate key on write or update",
        _ => "Foreign key constraint is incorrectly formed",
    };
    SqlError::new(
        1005,
        "HY000",
        format!("Can't create table `{db}`.`{table}` (errno: {errno} \"{what}\")"),
    )
}

/// Parent and child columns can be joined by a foreign key (InnoDB: same integer width and
/// sign, same string collation, same temporal type; any two DECIMALs).
fn compatible(a: &ColumnDef, b: &ColumnDef) -> bool {
    use ColumnType as T;
    let text = |t: &T| matches!(t, T::Char(_) | T::VarChar(_));
    match (&a.ty, &b.ty) {
        (T::Int { .. }, T::Int { .. }) | (T::Float, T::Float) | (T::Double, T::Double) => {
            a.ty == b.ty
        }
        (T::Decimal { .. }, T::Decimal { .. }) => true,
        (x, y) if text(x) && text(y) => a.collation == b.collation,
        // (Keys hold the text at the column's precision: the same precision.)
        (T::Date, T::Date)
        | (T::Year, T::Year)
        | (T::Time(_), T::Time(_))
        | (T::Bit(_), T::Bit(_))
        | (T::DateTime(_), T::DateTime(_))
        | (T::Timestamp(_), T::Timestamp(_)) => a.ty == b.ty,
        _ => false,
    }
}

/// Positions in `def` of the columns named `names` (None when one is missing).
fn positions(def: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| def.column_index(n)).collect()
}

/// The index of `def` whose leading columns are `cols`: `Some(None)` for the primary key,
/// `Some(Some(i))` for secondary index `i`.
fn index_for(def: &TableDef, cols: &[usize]) -> Option<Option<usize>> {
    if !def.primary_key.is_empty() && leads(&def.primary_key, cols) {
        return Some(None);
    }
    def.indexes
        .iter()
        .position(|i| leads(&i.columns, cols))
        .map(Some)
}

/// Key columns `key` start with `cols`.
fn leads(key: &[usize], cols: &[usize]) -> bool {
    key.len() >= cols.len() && key[..cols.len()] == *cols
}

/// 1553: the index is the last one a foreign key can use.
pub fn needed_index(name: &str) -> SqlError {
    SqlError::new(
        1553,
        "HY000",
        format!("Cannot drop index '{name}': needed in a foreign key constraint"),
    )
}

/// A column on either side of a foreign key keeps the type and collation the key joins on
/// (NULL-ability, default and name may change).
fn type_kept(old: &ColumnDef, new: &ColumnDef) -> bool {
    old.ty == new.ty && old.collation == new.collation
}

/// 1832: column `pos` of `def`, in one of its foreign keys, keeps its type when it becomes
/// `new`.
pub fn child_column_kept(def: &TableDef, pos: usize, new: &ColumnDef) -> Result<(), SqlError> {
    let old = &def.columns[pos];
    match def.foreign_keys.iter().find(|f| f.columns.contains(&pos)) {
        Some(f) if !type_kept(old, new) => Err(SqlError::new(
            1832,
            "HY000",
            format!(
                "Cannot change column '{}': used in a foreign key constraint '{}'",
                old.name, f.name
            ),
        )),
        _ => Ok(()),
    }
}

/// Every foreign key of `def` has an index (or the primary key) starting with its columns.
pub fn keys_covered(def: &TableDef) -> bool {
    def.foreign_keys
        .iter()
        .all(|f| index_for(def, &f.columns).is_some())
}

/// Checks the foreign keys of `def` (table `db`.`def.name`) named in `added` against their
/// parents (skipped with `checks` off, as MariaDB does) and every constraint name of the
/// database for duplicates (errno 121).
pub fn validate(
    engine: &Engine,
    db: &str,
    def: &TableDef,
    added: &[String],
    checks: bool,
) -> Result<(), SqlError> {
    for f in def.foreign_keys.iter().filter(|f| added.contains(&f.name)) {
        let clash_here = def
            .foreign_keys
            .iter()
            .filter(|g| g.name.eq_ignore_ascii_case(&f.name))
            .count()
            > 1;
        let clash_elsewhere = engine.tables(db).unwrap_or_default().iter().any(|t| {
            *t != def.name
                && engine.table(db, t).is_ok_and(|t| {
                    t.def
                        .foreign_keys
                        .iter()
                        .any(|g| g.name.eq_ignore_ascii_case(&f.name))
                })
        });
        // (MariaDB: errno 150 for two keys of the statement's table, 121 for another table's.)
        if clash_here {
            return Err(cant_create(db, &def.name, 150));
        }
        if clash_elsewhere {
            return Err(cant_create(db, &def.name, 121));
        }
        let sets_null = f.on_delete == FkAction::SetNull || f.on_update == FkAction::SetNull;
        if sets_null && f.columns.iter().any(|&c| !def.columns[c].nullable) {
            return Err(cant_create(db, &def.name, 150));
        }
        if !checks {
            continue;
        }
        let parent_handle;
        let parent: &TableDef = if f.references(db, &def.name) {
            def
        } else {
            parent_handle = engine
                .table(&f.parent_db, &f.parent_table)
                .map_err(|_| cant_create(db, &def.name, 150))?;
            &parent_handle.def
        };
        if !fits_parent(def, f, parent) {
            return Err(cant_create(db, &def.name, 150));
        }
    }
    Ok(())
}

/// Parent `parent` has the columns key `f` of table `def` references, an index starting
/// with them, and types that join.
fn fits_parent(def: &TableDef, f: &ForeignKeyDef, parent: &TableDef) -> bool {
    let Some(pcols) = positions(parent, &f.parent_columns) else {
        return false;
    };
    index_for(parent, &pcols).is_some()
        && f.columns
            .iter()
            .zip(&pcols)
            .all(|(&c, &p)| compatible(&def.columns[c], &parent.columns[p]))
}

/// A new table `def` in `db` fits the foreign keys other tables already declared for that
/// name (made while `foreign_key_checks` was off): else errno 150 as MariaDB.
pub fn validate_as_parent(engine: &Engine, db: &str, def: &TableDef) -> Result<(), SqlError> {
    for (child, fi) in engine.referencing(db, &def.name) {
        if !fits_parent(&child.def, &child.def.foreign_keys[fi], def) {
            return Err(cant_create(db, &def.name, 150));
        }
    }
    Ok(())
}

/// The parent side of every foreign key referencing `db`.`table` (other tables', and the
/// table's own when it references itself) survives its change from `from` to `to`: each
/// referenced column is still there (1829; MariaDB would rename the key's column), keeps its
/// type and collation (1833), and an index still starts with them (1553, naming the index
/// that served them).
pub fn parent_side_kept(
    engine: &Engine,
    db: &str,
    table: &str,
    from: &TableDef,
    to: &TableDef,
) -> Result<(), SqlError> {
    for (child, fi) in engine.referencing(db, table) {
        let f = &child.def.foreign_keys[fi];
        let Some(before) = positions(from, &f.parent_columns) else {
            continue;
        };
        let mut after = Vec::with_capacity(before.len());
        for (name, &a) in f.parent_columns.iter().zip(&before) {
            let Some(b) = to.column_index(name) else {
                return Err(SqlError::new(
                    1829,
                    "HY000",
                    format!(
                        "Cannot drop column '{name}': needed in a foreign key constraint '{}' of table `{}`.`{}` (renaming it is not supported yet)",
                        f.name, child.db, child.def.name
                    ),
                ));
            };
            let (x, y) = (&from.columns[a], &to.columns[b]);
            if !type_kept(x, y) {
                return Err(SqlError::new(
                    1833,
                    "HY000",
                    format!(
                        "Cannot change column '{}': used in a foreign key constraint '{}' of table '{}.{}'",
                        x.name, f.name, child.db, child.def.name
                    ),
                ));
            }
            after.push(b);
        }
        if index_for(to, &after).is_none() {
            return Err(needed_index(match index_for(from, &before) {
                Some(Some(i)) => &from.indexes[i].name,
                _ => "PRIMARY",
            }));
        }
    }
    Ok(())
}

/// An existing row `row` of table `def` has a parent for each foreign key named in `added`
/// (ALTER TABLE ... ADD FOREIGN KEY; plain reads, no locks): else 1452.
pub fn parents_exist(
    engine: &Engine,
    txn: &mut Txn,
    db: &str,
    def: &TableDef,
    added: &[String],
    row: &[Value],
) -> Result<(), SqlError> {
    for f in def.foreign_keys.iter().filter(|f| added.contains(&f.name)) {
        let vals: Vec<Value> = f.columns.iter().map(|&c| row[c].clone()).collect();
        if vals.iter().any(Value::is_null) {
            continue;
        }
        let fails = || child_fails(db, def, f);
        let parent = engine
            .table(&f.parent_db, &f.parent_table)
            .map_err(|_| fails())?;
        let pcols = positions(&parent.def, &f.parent_columns).ok_or_else(fails)?;
        if rows_with(txn, &parent, &pcols, &vals)?.is_empty() {
            return Err(fails());
        }
    }
    Ok(())
}

/// The table's constraints as INFORMATION_SCHEMA lists them: (name, columns, type) for the
/// primary key, each UNIQUE index and each foreign key.
pub fn constraints(def: &TableDef) -> Vec<(&str, &[usize], &'static str)> {
    let mut v: Vec<(&str, &[usize], &'static str)> = Vec::new();
    if !def.primary_key.is_empty() {
        v.push(("PRIMARY", &def.primary_key, "PRIMARY KEY"));
    }
    for i in def.indexes.iter().filter(|i| i.unique) {
        v.push((&i.name, &i.columns, "UNIQUE"));
    }
    for f in &def.foreign_keys {
        v.push((&f.name, &f.columns, "FOREIGN KEY"));
    }
    v
}

/// The name of the parent's index a foreign key uses (`PRIMARY` for the primary key); None
/// when the parent or its index is missing.
pub fn parent_index_name(
    engine: &Engine,
    db: &str,
    def: &TableDef,
    f: &ForeignKeyDef,
) -> Option<String> {
    let handle;
    let parent = if f.references(db, &def.name) {
        def
    } else {
        handle = engine.table(&f.parent_db, &f.parent_table).ok()?;
        &handle.def
    };
    let cols = positions(parent, &f.parent_columns)?;
    Some(match index_for(parent, &cols)? {
        None => "PRIMARY".into(),
        Some(i) => parent.indexes[i].name.clone(),
    })
}

/// INFORMATION_SCHEMA's name of an action.
pub fn rule(a: FkAction) -> &'static str {
    match a {
        FkAction::Restrict => "RESTRICT",
        FkAction::NoAction => "NO ACTION",
        FkAction::Cascade => "CASCADE",
        FkAction::SetNull => "SET NULL",
    }
}

fn names(def: &TableDef, cols: &[usize]) -> String {
    cols.iter()
        .map(|&c| format!("`{}`", def.columns[c].name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `CONSTRAINT `x` FOREIGN KEY (`a`) REFERENCES `p` (`id`) ON DELETE CASCADE`, as SHOW CREATE
/// TABLE prints it for a table in database `db` (`qualify`: always name the parent's
/// database).
pub fn clause(db: &str, def: &TableDef, f: &ForeignKeyDef, qualify: bool) -> String {
    let parent = if qualify || f.parent_db != db {
        format!("`{}`.`{}`", f.parent_db, f.parent_table)
    } else {
        format!("`{}`", f.parent_table)
    };
    let pcols = f
        .parent_columns
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = format!(
        "CONSTRAINT `{}` FOREIGN KEY ({}) REFERENCES {parent} ({pcols})",
        f.name,
        names(def, &f.columns)
    );
    for (word, a) in [("DELETE", f.on_delete), ("UPDATE", f.on_update)] {
        let what = match a {
            FkAction::Restrict => continue,
            FkAction::NoAction => "NO ACTION",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        };
        s.push_str(&format!(" ON {word} {what}"));
    }
    s
}

/// `clause` with the parent's database always named and no ON DELETE / ON UPDATE (the
/// form of TRUNCATE's 1701).
pub fn clause_without_actions(db: &str, def: &TableDef, f: &ForeignKeyDef) -> String {
    let bare = ForeignKeyDef {
        on_delete: FkAction::Restrict,
        on_update: FkAction::Restrict,
        ..f.clone()
    };
    clause(db, def, &bare, true)
}

/// The table's foreign keys in the order SHOW CREATE TABLE lists them (by name, as InnoDB).
pub fn display_order(def: &TableDef) -> Vec<&ForeignKeyDef> {
    let mut v: Vec<&ForeignKeyDef> = def.foreign_keys.iter().collect();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

pub fn child_fails(db: &str, def: &TableDef, f: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        1452,
        "23000",
        format!(
            "Cannot add or update a child row: a foreign key constraint fails (`{db}`.`{}`, {})",
            def.name,
            clause(db, def, f, false)
        ),
    )
}

fn parent_fails(db: &str, def: &TableDef, f: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        1451,
        "23000",
        format!(
            "Cannot delete or update a parent row: a foreign key constraint fails (`{db}`.`{}`, {})",
            def.name,
            clause(db, def, f, false)
        ),
    )
}

/// 1451 without the constraint (DROP TABLE of a referenced table).
pub fn parent_in_use() -> SqlError {
    SqlError::new(
        1451,
        "23000",
        "Cannot delete or update a parent row: a foreign key constraint fails",
    )
}

/// A foreign key of another table that references `db`.`table` (DROP / TRUNCATE refuse).
pub fn referenced_by_other(engine: &Engine, db: &str, table: &str) -> Option<(Arc<Table>, usize)> {
    engine
        .referencing(db, table)
        .into_iter()
        .find(|(t, _)| !(t.db == db && t.def.name == table))
}

fn same(a: &Value, b: &Value, col: &ColumnDef) -> bool {
    if matches!(col.ty, ColumnType::Decimal { .. }) {
        coerce::sort_cmp_decimal(a, b).is_eq()
    } else {
        coerce::sort_cmp_in(a, b, col.collation).is_eq()
    }
}

/// Rows of `t` whose columns `cols` hold `vals` (read through the index that starts with
/// them, or the whole table), unlocked.
fn rows_with(
    txn: &mut Txn,
    t: &Arc<Table>,
    cols: &[usize],
    vals: &[Value],
) -> Result<Vec<Row>, SqlError> {
    let (index, lo, hi) = match index_for(&t.def, cols) {
        Some(i) => (
            i,
            Bound::Included(vals.to_vec()),
            Bound::Included(vals.to_vec()),
        ),
        None => (None, Bound::Unbounded, Bound::Unbounded),
    };
    let cursor = txn.scan_columns(t, index, lo, hi, None)?;
    let mut out = Vec::new();
    for r in cursor {
        let r = r?;
        if matches(t, &r, cols, vals) {
            out.push(r);
        }
    }
    Ok(out)
}

fn matches(t: &Table, row: &[Value], cols: &[usize], vals: &[Value]) -> bool {
    cols.iter().zip(vals).all(|(&c, v)| {
        row.get(c)
            .is_some_and(|x| !x.is_null() && same(x, v, &t.def.columns[c]))
    })
}

/// Enforcement for one statement while `foreign_key_checks` is on: the engine finds the
/// tables on the other side of each key.
pub struct Fk<'e> {
    pub engine: &'e Engine,
}

impl<'e> Fk<'e> {
    /// The statement's enforcement: None when `foreign_key_checks` is off or there is no
    /// session engine. (Not None merely because no table has a foreign key yet: one may be
    /// created while the statement runs; `parent_row` checks that per row.)
    pub fn of(cx: &crate::expr::EvalCx<'e>) -> Option<Fk<'e>> {
        let engine = cx.env.engine()?;
        let on = cx.env.fk_checks();
        on.then_some(Fk { engine })
    }

    /// A row of child table `t` is about to be written as `row` (`old`: its version before,
    /// for an UPDATE): every foreign key whose columns are all non-NULL and changed must find
    /// its parent row, which is then locked shared until the transaction ends.
    pub fn child_row(
        &self,
        txn: &mut Txn,
        t: &Table,
        row: &[Value],
        old: Option<&[Value]>,
    ) -> Result<(), SqlError> {
        for f in &t.def.foreign_keys {
            let vals: Vec<Value> = f.columns.iter().map(|&c| row[c].clone()).collect();
            if vals.iter().any(Value::is_null) {
                continue;
            }
            // Unchanged key columns need no check, unless the row's primary key moves (InnoDB
            // re-inserts the row then, checking every key again).
            if old.is_some_and(|o| {
                f.columns.iter().all(|&c| o.get(c) == row.get(c))
                    && crate::exec::pk_of(t, o) == crate::exec::pk_of(t, row)
            }) {
                continue;
            }
            let fails = || child_fails(&t.db, &t.def, f);
            let parent = self
                .engine
                .table(&f.parent_db, &f.parent_table)
                .map_err(|_| fails())?;
            let pcols = positions(&parent.def, &f.parent_columns).ok_or_else(fails)?;
            // A row that references itself (same table, its own key) is its own parent.
            if parent.id() == t.id()
                && pcols.iter().zip(&vals).all(|(&p, v)| {
                    row.get(p)
                        .is_some_and(|x| same(x, v, &parent.def.columns[p]))
                })
            {
                continue;
            }
            let mut found = false;
            for cand in rows_with(txn, &parent, &pcols, &vals)? {
                let locked = txn.lock_row_mode(
                    &parent,
                    &crate::exec::pk_of(&parent, &cand),
                    LockMode::Shared,
                )?;
                if locked.is_some_and(|r| matches(&parent, &r, &pcols, &vals)) {
                    found = true;
                    break;
                }
            }
            if !found {
                return Err(fails());
            }
        }
        Ok(())
    }

    /// A row of table `t` is about to be deleted (`new` None) or changed to `new`: the rows
    /// of other tables (or of `t`) that reference it through a changed key get their
    /// foreign key's action. Call before the row itself changes.
    pub fn parent_row(
        &self,
        txn: &mut Txn,
        t: &Arc<Table>,
        old: &[Value],
        new: Option<&[Value]>,
    ) -> Result<(), SqlError> {
        if !self.engine.any_foreign_keys() {
            return Ok(());
        }
        // The row itself is not visited again by its own cascade (a row referencing itself).
        let mut busy = vec![(t.id(), crate::exec::pk_of(t, old))];
        let mut updating = Vec::new();
        if new.is_some() {
            updating.push(t.id());
        }
        self.parent_row_at(txn, t, old, new, 0, &mut busy, &mut updating)
    }

    // (The cascade's state travels as two lists: rows being changed, tables being updated.)
    #[allow(clippy::too_many_arguments)]
    fn parent_row_at(
        &self,
        txn: &mut Txn,
        t: &Arc<Table>,
        old: &[Value],
        new: Option<&[Value]>,
        depth: usize,
        busy: &mut Vec<(u64, Vec<Value>)>,
        updating: &mut Vec<u64>,
    ) -> Result<(), SqlError> {
        for (child, fi) in self.engine.referencing(&t.db, &t.def.name) {
            let f = &child.def.foreign_keys[fi];
            let Some(pcols) = positions(&t.def, &f.parent_columns) else {
                continue;
            };
            let vals: Vec<Value> = pcols.iter().map(|&p| old[p].clone()).collect();
            if vals.iter().any(Value::is_null) {
                continue;
            }
            if new.is_some_and(|n| pcols.iter().all(|&p| n.get(p) == old.get(p))) {
                continue;
            }
            let act = if new.is_some() {
                f.on_update
            } else {
                f.on_delete
            };
            let cascading = matches!(act, FkAction::Cascade | FkAction::SetNull);
            // As InnoDB: too deep, or an ON UPDATE CASCADE / SET NULL back into a table an
            // update of this chain is changing (also a row's own reference to itself).
            if cascading
                && (depth >= MAX_DEPTH || (new.is_some() && updating.contains(&child.id())))
            {
                if rows_with(txn, &child, &f.columns, &vals)?.is_empty() {
                    continue;
                }
                return Err(parent_fails(&child.db, &child.def, f));
            }
            for cand in rows_with(txn, &child, &f.columns, &vals)? {
                let pk = crate::exec::pk_of(&child, &cand);
                if cascading && busy.iter().any(|(id, k)| *id == child.id() && *k == pk) {
                    continue;
                }
                let mode = if cascading {
                    LockMode::Exclusive
                } else {
                    LockMode::Shared
                };
                let Some(row) = txn.lock_row_mode(&child, &pk, mode)? else {
                    continue;
                };
                if !matches(&child, &row, &f.columns, &vals) {
                    continue;
                }
                match (act, new) {
                    (FkAction::Restrict | FkAction::NoAction, _) => {
                        return Err(parent_fails(&child.db, &child.def, f))
                    }
                    (FkAction::Cascade, None) => {
                        busy.push((child.id(), pk.clone()));
                        self.parent_row_at(txn, &child, &row, None, depth + 1, busy, updating)?;
                        // A replica's engine cascades by itself: not in the binary log.
                        let logging = txn.set_binlog(false);
                        let r = txn.delete(&child, &pk);
                        txn.set_binlog(logging);
                        r?;
                        busy.pop();
                    }
                    (_, new) => {
                        let mut changed = row.clone();
                        for (&c, &p) in f.columns.iter().zip(&pcols) {
                            changed[c] = match (act, new) {
                                (FkAction::Cascade, Some(n)) => n[p].clone(),
                                _ => Value::Null,
                            };
                        }
                        if changed == row {
                            continue;
                        }
                        busy.push((child.id(), pk.clone()));
                        updating.push(child.id());
                        self.parent_row_at(
                            txn,
                            &child,
                            &row,
                            Some(&changed),
                            depth + 1,
                            busy,
                            updating,
                        )?;
                        updating.pop();
                        let logging = txn.set_binlog(false);
                        let r = txn.update(&child, &pk, changed);
                        txn.set_binlog(logging);
                        r?;
                        busy.pop();
                    }
                }
            }
        }
        Ok(())
    }
}

/// `Fk::child_row` when checks are on.
pub fn child_row(
    fk: &Option<Fk>,
    txn: &mut Txn,
    t: &Table,
    row: &[Value],
    old: Option<&[Value]>,
) -> Result<(), SqlError> {
    match fk {
        Some(f) if !t.def.foreign_keys.is_empty() => f.child_row(txn, t, row, old),
        _ => Ok(()),
    }
}

/// `Fk::parent_row` when checks are on.
pub fn parent_row(
    fk: &Option<Fk>,
    txn: &mut Txn,
    t: &Arc<Table>,
    old: &[Value],
    new: Option<&[Value]>,
) -> Result<(), SqlError> {
    match fk {
        Some(f) => f.parent_row(txn, t, old, new),
        None => Ok(()),
    }
}
