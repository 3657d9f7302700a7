//! ALTER TABLE changes that rewrite every row: DROP COLUMN, ADD COLUMN ... FIRST / AFTER, a
//! MODIFY / CHANGE that changes a column's stored form (INT to VARCHAR, a DECIMAL's scale, a
//! key column's collation, AUTO_INCREMENT) or its place, ADD / DROP PRIMARY KEY, and a list of
//! several changes in one statement.
//!
//! Owns: applying the changes in order to a working copy of the table definition that
//! remembers where each column's values come from (`Rebuild`), MariaDB's rules and errors for
//! them, and converting each old row into the new definition while the engine copies the rows
//! (`Engine::rebuild_table`, which keeps the table as it was when anything fails).
//! Must never: read or write rows itself, or hand the engine a definition whose
//! AUTO_INCREMENT column leads no key.

use crate::coerce::coerce_to_column;
use crate::ddl;
use crate::result::SqlError;
use sqlparser::ast;
use tierdb_engine::{ColumnDef, ColumnType, Engine, IndexDef, TableDef, Value};

/// A planned rewrite of a table.
#[derive(Clone, Debug)]
pub struct Rebuild {
    /// The definition the plan was made from (the engine refuses with 1412 if it moved).
    pub from: TableDef,
    pub def: TableDef,
    /// Per column of `def`: the column of `from` its values come from; None for a new column,
    /// whose existing rows get `fills[i]`.
    pub sources: Vec<Option<usize>>,
    pub fills: Vec<Value>,
    /// A column's stored form changed or the primary key went: MariaDB copies the rows then
    /// and reports them as affected (else 0, an in-place change for it).
    pub copies: bool,
    /// Notes for changes skipped by IF [NOT] EXISTS: (code, message).
    pub notes: Vec<(u16, String)>,
    /// Rebuilt even when nothing changes (`FORCE`, `ENGINE = ...`, `OPTIMIZE TABLE`).
    pub force: bool,
}

/// True when `ops` (ALGORITHM / LOCK options already left out) need a rewrite of the rows:
/// several changes, or one that cannot be made in the catalog alone.
pub fn rewrites(ops: &[&ast::AlterTableOperation], def: &TableDef) -> Result<bool, SqlError> {
    use ast::AlterTableOperation as Op;
    let [op] = ops else {
        return Ok(ops.len() > 1);
    };
    Ok(match op {
        // (An index a foreign key needs: the rewrite path refuses it with 1553.)
        Op::DropIndex { name } => {
            name.value.eq_ignore_ascii_case("PRIMARY")
                || !crate::fk::keys_covered(&without_index(def, &name.value))
        }
        Op::DropColumn { .. }
        | Op::DropPrimaryKey { .. }
        | Op::DropForeignKey { .. }
        | Op::AddConstraint {
            constraint: ast::TableConstraint::PrimaryKey(_) | ast::TableConstraint::ForeignKey(_),
            ..
        } => true,
        // A new key needs its entries built from the rows: a rewrite.
        Op::AddColumn {
            column_position,
            column_def,
            ..
        } => {
            column_position.is_some()
                || column_def.options.iter().any(|o| {
                    matches!(
                        o.option,
                        ast::ColumnOption::PrimaryKey(_) | ast::ColumnOption::Unique(_)
                    )
                })
        }
        Op::ModifyColumn {
            col_name: old,
            data_type,
            options,
            column_position,
        }
        | Op::ChangeColumn {
            old_name: old,
            data_type,
            options,
            column_position,
            ..
        } => {
            if column_position.is_some() {
                return Ok(true);
            }
            let new_name = match op {
                Op::ChangeColumn { new_name, .. } => new_name,
                _ => old,
            };
            let pos = column_pos(def, &old.value)?;
            let (col, primary, unique) =
                ddl::changed_column_keys(&column_ast(new_name, data_type, options), def, pos)?;
            primary
                || unique
                || !Engine::changes_in_place(&def.columns[pos], &col, is_keyed(def, pos))
        }
        _ => false,
    })
}

/// Applies `ops` in order to `from`.
pub fn plan(ops: &[&ast::AlterTableOperation], from: &TableDef) -> Result<Rebuild, SqlError> {
    use ast::AlterTableOperation as Op;
    let mut r = Rebuild {
        from: from.clone(),
        def: from.clone(),
        sources: (0..from.columns.len()).map(Some).collect(),
        fills: vec![Value::Null; from.columns.len()],
        copies: false,
        notes: Vec::new(),
        force: false,
    };
    for c in &mut r.def.columns {
        // Every row is written whole: nothing is completed from a fill value any more.
        c.fill = None;
    }
    for op in ops {
        match op {
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position,
                ..
            } => {
                if *if_not_exists && r.def.column_index(&column_def.name.value).is_some() {
                    r.notes.push((
                        1060,
                        format!("Duplicate column name '{}'", column_def.name.value),
                    ));
                    continue;
                }
                let (mut col, primary, unique) = ddl::added_column_keys(column_def, &r.def)?;
                let fill = col.fill.take().unwrap_or(Value::Null);
                let at = match column_position {
                    None => r.def.columns.len(),
                    Some(p) => position(&r.def, p)?,
                };
                let name = col.name.clone();
                r.insert(at, col, None, fill);
                if primary {
                    if !r.def.primary_key.is_empty() {
                        return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
                    }
                    r.def.primary_key = vec![at];
                }
                // (PRIMARY KEY UNIQUE: the primary key is unique already, as MariaDB keeps it.)
                if unique && !primary {
                    r.add_key(Some(ddl::free_index_name(&r.def, &name)), vec![at], true)?;
                }
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for name in column_names {
                    // Only columns the table had before the statement (as MariaDB).
                    match r.original(&name.value) {
                        Some(pos) => r.remove(pos)?,
                        None if *if_exists => r
                            .notes
                            .push((1091, not_there("COLUMN", &name.value).message)),
                        None => return Err(not_there("COLUMN", &name.value)),
                    }
                }
            }
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => r.change(col_name, col_name, data_type, options, column_position)?,
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => r.change(old_name, new_name, data_type, options, column_position)?,
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let pos = r.original_pos(&old_column_name.value)?;
                ddl::check_rename(&r.def, pos, &new_column_name.value)?;
                r.def.columns[pos].name = new_column_name.value.clone();
            }
            Op::AlterColumn { column_name, op } => {
                let pos = r.original_pos(&column_name.value)?;
                let col = &mut r.def.columns[pos];
                match op {
                    ast::AlterColumnOperation::SetDefault { value } => {
                        *col = ddl::with_default(col, value)?;
                    }
                    ast::AlterColumnOperation::DropDefault => col.default = None,
                    other => {
                        return Err(SqlError::unsupported(format!("ALTER COLUMN ... {other}")))
                    }
                }
            }
            Op::AddConstraint { constraint, .. } => match constraint {
                ast::TableConstraint::PrimaryKey(pk) => {
                    if !r.def.primary_key.is_empty() {
                        return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
                    }
                    let cols = key_columns(&r.def, &pk.columns)?;
                    for &c in &cols {
                        r.def.columns[c].nullable = false;
                    }
                    r.def.primary_key = cols;
                }
                ast::TableConstraint::Index(ix) => {
                    r.add_index(ix.name.as_ref(), &ix.columns, false)?;
                }
                ast::TableConstraint::Unique(u) => {
                    r.add_index(u.index_name.as_ref().or(u.name.as_ref()), &u.columns, true)?;
                }
                ast::TableConstraint::ForeignKey(f) => {
                    let d = crate::fk::declared(f, &r.def, None)?;
                    crate::fk::add_to_def(&mut r.def, vec![d])?;
                    // MariaDB copies the rows to check them (and reports them).
                    r.copies = true;
                }
                other => {
                    return Err(SqlError::unsupported(format!(
                        "ALTER TABLE ... ADD {other}"
                    )))
                }
            },
            Op::DropForeignKey { name, .. } => {
                let before = r.def.foreign_keys.len();
                r.def
                    .foreign_keys
                    .retain(|f| !f.name.eq_ignore_ascii_case(&name.value));
                if r.def.foreign_keys.len() == before {
                    return Err(not_there("FOREIGN KEY", &name.value));
                }
            }
            Op::DropPrimaryKey { .. } => r.drop_primary()?,
            Op::DropIndex { name } if name.value.eq_ignore_ascii_case("PRIMARY") => {
                r.drop_primary()?
            }
            Op::DropIndex { name } => {
                let before = r.def.indexes.len();
                r.def
                    .indexes
                    .retain(|i| !i.name.eq_ignore_ascii_case(&name.value));
                if r.def.indexes.len() == before {
                    return Err(not_there("INDEX", &name.value));
                }
                if !crate::fk::keys_covered(&r.def) {
                    return Err(crate::fk::needed_index(&name.value));
                }
            }
            Op::Algorithm { .. } | Op::Lock { .. } => {}
            other => return Err(SqlError::unsupported(format!("ALTER TABLE ... {other}"))),
        }
    }
    if r.def.columns.is_empty() {
        return Err(SqlError::new(
            1090,
            "42000",
            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
        ));
    }
    if let Some(ai) = r.def.columns.iter().position(|c| c.auto_increment) {
        if r.def.primary_key.first() != Some(&ai)
            && !r.def.indexes.iter().any(|i| i.columns.first() == Some(&ai))
        {
            return Err(SqlError::new(
                1075,
                "42000",
                "Incorrect table definition; there can be only one auto column and it must be defined as a key",
            ));
        }
    }
    if !crate::fk::keys_covered(&r.def) {
        return Err(crate::fk::needed_index("PRIMARY"));
    }
    // A stored form that changes (or a key column's collation, AUTO_INCREMENT) is a copy
    // for MariaDB too.
    for (i, src) in r.sources.iter().enumerate() {
        if let Some(p) = src {
            if !Engine::changes_in_place(&from.columns[*p], &r.def.columns[i], false) {
                r.copies = true;
            }
        }
    }
    Ok(r)
}

impl Rebuild {
    /// Position of column `name` if the table had it before the statement (a change names
    /// the table's columns, not ones the same statement adds).
    fn original(&self, name: &str) -> Option<usize> {
        self.def
            .column_index(name)
            .filter(|&p| self.sources[p].is_some())
    }

    /// `original`, else 1054 naming the table.
    fn original_pos(&self, name: &str) -> Result<usize, SqlError> {
        self.original(name).ok_or_else(|| {
            SqlError::new(
                1054,
                "42S22",
                format!("Unknown column '{name}' in '{}'", self.def.name),
            )
        })
    }

    /// Nothing changes (every change was skipped): no row needs copying.
    pub fn is_noop(&self) -> bool {
        if self.force {
            return false;
        }
        let mut same = self.from.clone();
        for c in &mut same.columns {
            c.fill = None;
        }
        same == self.def && self.sources.iter().enumerate().all(|(i, s)| *s == Some(i))
    }

    /// The row of the new definition made from `old` (a row of `from`), as MariaDB's strict
    /// mode converts it: a NULL in a NOT NULL column or a value that does not fit is an
    /// error naming the column and the row (1-based, primary key order); a DECIMAL rounded
    /// to a smaller scale adds a note (code, message) to `notes`.
    pub fn convert(
        &self,
        old: &[Value],
        row: u64,
        notes: &mut Vec<(u16, String)>,
    ) -> Result<Vec<Value>, SqlError> {
        let mut out = Vec::with_capacity(self.def.columns.len());
        for (i, col) in self.def.columns.iter().enumerate() {
            let v = match self.sources[i] {
                Some(p) => old.get(p).cloned().unwrap_or(Value::Null),
                None => self.fills[i].clone(),
            };
            let truncated = || {
                SqlError::new(
                    1265,
                    "01000",
                    format!("Data truncated for column '{}' at row {row}", col.name),
                )
            };
            if v.is_null() {
                if !col.nullable {
                    return Err(truncated());
                }
                out.push(Value::Null);
                continue;
            }
            let Some(p) = self.sources[i] else {
                out.push(v);
                continue;
            };
            let c = match coerce_to_column(v.clone(), col, row as usize) {
                Ok(c) => c,
                Err(e) if e.code == 1366 => {
                    let kind = match col.ty {
                        ColumnType::Int { .. } => "INTEGER",
                        ColumnType::Decimal { .. } => "DECIMAL",
                        ColumnType::Float | ColumnType::Double => "DOUBLE",
                        _ => return Err(truncated()),
                    };
                    return Err(SqlError::new(
                        1292,
                        "22007",
                        format!("Truncated incorrect {kind} value: '{v}'"),
                    ));
                }
                Err(e) if e.code == 1264 => return Err(e),
                // Too long for the new type: "Data too long" (1406) as MariaDB says it, except
                // for a VARCHAR, VARBINARY or BINARY made shorter, which it reports as truncated
                // (1265).
                Err(e)
                    if e.code == 1406
                        && !matches!(
                            (&self.from.columns[p].ty, &col.ty),
                            (ColumnType::VarChar(_), ColumnType::VarChar(_))
                                | (ColumnType::VarBinary(_), ColumnType::VarBinary(_))
                                | (ColumnType::Binary(_), ColumnType::Binary(_))
                        ) =>
                {
                    return Err(e)
                }
                Err(_) => return Err(truncated()),
            };
            // Same stored form: a value that changes on the way (shortened, rounded) does not
            // fit. A DECIMAL given a smaller scale is rounded, with a note.
            if c != v {
                if Engine::changes_in_place(&self.from.columns[p], col, false) {
                    return Err(truncated());
                }
                if let (ColumnType::Decimal { .. }, ColumnType::Decimal { .. }) =
                    (&self.from.columns[p].ty, &col.ty)
                {
                    if crate::coerce::sort_cmp_decimal(&v, &c) != std::cmp::Ordering::Equal {
                        notes.push((
                            1265,
                            format!("Data truncated for column '{}' at row {row}", col.name),
                        ));
                    }
                }
            }
            out.push(c);
        }
        Ok(out)
    }

    /// Inserts column `col` at `at`, its values from `src` (or `fill` for existing rows).
    fn insert(&mut self, at: usize, col: ColumnDef, src: Option<usize>, fill: Value) {
        let shift = |c: &mut usize| {
            if *c >= at {
                *c += 1;
            }
        };
        self.def.primary_key.iter_mut().for_each(shift);
        for ix in &mut self.def.indexes {
            ix.columns.iter_mut().for_each(shift);
        }
        for f in &mut self.def.foreign_keys {
            f.columns.iter_mut().for_each(shift);
        }
        self.def.columns.insert(at, col);
        self.sources.insert(at, src);
        self.fills.insert(at, fill);
    }

    /// Drops column `pos` as MariaDB does: an index of that column alone goes with it, the
    /// column leaves a several-column index, but not a UNIQUE one or the primary key (1072).
    fn remove(&mut self, pos: usize) -> Result<(), SqlError> {
        let name = self.def.columns[pos].name.clone();
        let key_error = || {
            SqlError::new(
                1072,
                "42000",
                format!("Key column '{name}' doesn't exist in table"),
            )
        };
        if let Some(f) = self
            .def
            .foreign_keys
            .iter()
            .find(|f| f.columns.contains(&pos))
        {
            // MariaDB names the index that would go with the column, else the constraint.
            return Err(
                match self.def.indexes.iter().find(|i| i.columns.contains(&pos)) {
                    Some(ix) => crate::fk::needed_index(&ix.name),
                    None => SqlError::new(
                        1828,
                        "HY000",
                        format!(
                            "Cannot drop column '{name}': needed in a foreign key constraint '{}'",
                            f.name
                        ),
                    ),
                },
            );
        }
        if self.def.primary_key.contains(&pos) {
            if self.def.primary_key.len() > 1 {
                return Err(key_error());
            }
            self.def.primary_key.clear();
        }
        let mut kept = Vec::with_capacity(self.def.indexes.len());
        for mut ix in std::mem::take(&mut self.def.indexes) {
            if ix.columns.contains(&pos) {
                if ix.columns.len() == 1 {
                    continue;
                }
                if ix.unique {
                    return Err(key_error());
                }
                ix.columns.retain(|&c| c != pos);
            }
            kept.push(ix);
        }
        self.def.indexes = kept;
        self.self_remove_at(pos);
        Ok(())
    }

    /// Removes column `pos` from the column lists (after its keys were dealt with).
    fn self_remove_at(&mut self, pos: usize) {
        let shift = |c: &mut usize| {
            if *c > pos {
                *c -= 1;
            }
        };
        self.def.primary_key.iter_mut().for_each(shift);
        for ix in &mut self.def.indexes {
            ix.columns.iter_mut().for_each(shift);
        }
        for f in &mut self.def.foreign_keys {
            f.columns.iter_mut().for_each(shift);
        }
        self.def.columns.remove(pos);
        self.sources.remove(pos);
        self.fills.remove(pos);
    }

    /// MODIFY / CHANGE: column `old` gets a new definition (and maybe a new place).
    fn change(
        &mut self,
        old: &ast::Ident,
        new: &ast::Ident,
        data_type: &ast::DataType,
        options: &[ast::ColumnOption],
        place: &Option<ast::MySQLColumnPosition>,
    ) -> Result<(), SqlError> {
        // A column this statement adds may be changed too (MariaDB): existing rows then get
        // what the final definition fills in.
        let pos = column_pos(&self.def, &old.value)?;
        let (col, primary, unique) =
            ddl::changed_column_keys(&column_ast(new, data_type, options), &self.def, pos)?;
        if self.sources[pos].is_none() {
            self.fills[pos] =
                ddl::column_default(&col).unwrap_or_else(|| ddl::implicit_default(&col.ty));
        }
        crate::fk::child_column_kept(&self.def, pos, &col)?;
        let name = col.name.clone();
        self.def.columns[pos] = col;
        if primary {
            if !self.def.primary_key.is_empty() {
                return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
            }
            self.def.primary_key = vec![pos];
        }
        if unique {
            self.add_key(Some(name), vec![pos], true)?;
        }
        let Some(place) = place else {
            return Ok(());
        };
        // Take the column out (keys remember it by a placeholder past the end), put it back.
        let col = self.def.columns[pos].clone();
        let src = self.sources[pos];
        let fill = self.fills[pos].clone();
        let away = usize::MAX;
        let mark = |c: &mut usize| {
            if *c == pos {
                *c = away;
            }
        };
        self.def.primary_key.iter_mut().for_each(mark);
        for ix in &mut self.def.indexes {
            ix.columns.iter_mut().for_each(mark);
        }
        self.self_remove_at(pos);
        let at = position(&self.def, place)?;
        self.insert(at, col, src, fill);
        let back = |c: &mut usize| {
            if *c == away {
                *c = at;
            }
        };
        self.def.primary_key.iter_mut().for_each(back);
        for ix in &mut self.def.indexes {
            ix.columns.iter_mut().for_each(back);
        }
        Ok(())
    }

    fn add_index(
        &mut self,
        name: Option<&ast::Ident>,
        cols: &[ast::IndexColumn],
        unique: bool,
    ) -> Result<(), SqlError> {
        let columns = key_columns(&self.def, cols)?;
        self.add_key(name.map(|n| n.value.clone()), columns, unique)
    }

    /// A secondary index over `columns`, named after its first column (`_2`, `_3`, ... when
    /// taken) unless `name` is given (1061 for a name taken).
    fn add_key(
        &mut self,
        name: Option<String>,
        columns: Vec<usize>,
        unique: bool,
    ) -> Result<(), SqlError> {
        let name = match name {
            Some(n) => n,
            None => ddl::free_index_name(&self.def, &self.def.columns[columns[0]].name),
        };
        if self
            .def
            .indexes
            .iter()
            .any(|i| i.name.eq_ignore_ascii_case(&name))
        {
            return Err(SqlError::new(
                1061,
                "42000",
                format!("Duplicate key name '{name}'"),
            ));
        }
        self.def.indexes.push(IndexDef {
            name,
            columns,
            unique,
        });
        Ok(())
    }

    fn drop_primary(&mut self) -> Result<(), SqlError> {
        if self.def.primary_key.is_empty() {
            return Err(not_there("INDEX", "PRIMARY"));
        }
        self.def.primary_key.clear();
        self.copies = true;
        Ok(())
    }
}

fn column_ast(
    name: &ast::Ident,
    data_type: &ast::DataType,
    options: &[ast::ColumnOption],
) -> ast::ColumnDef {
    ast::ColumnDef {
        name: name.clone(),
        data_type: data_type.clone(),
        options: options
            .iter()
            .map(|o| ast::ColumnOptionDef {
                name: None,
                option: o.clone(),
            })
            .collect(),
    }
}

/// 1091: `DROP <what> name` of something the table does not have.
pub fn not_there(what: &str, name: &str) -> SqlError {
    SqlError::new(
        1091,
        "42000",
        format!("Can't DROP {what} `{name}`; check that it exists"),
    )
}

fn without_index(def: &TableDef, name: &str) -> TableDef {
    let mut d = def.clone();
    d.indexes.retain(|i| !i.name.eq_ignore_ascii_case(name));
    d
}

fn is_keyed(def: &TableDef, pos: usize) -> bool {
    def.key_columns().contains(&pos) || def.indexes.iter().any(|i| i.columns.contains(&pos))
}

/// Position of column `name` (1054 naming the table, as MariaDB's ALTER does).
pub fn column_pos(def: &TableDef, name: &str) -> Result<usize, SqlError> {
    def.column_index(name).ok_or_else(|| {
        SqlError::new(
            1054,
            "42S22",
            format!("Unknown column '{name}' in '{}'", def.name),
        )
    })
}

/// Where `FIRST` / `AFTER col` puts a column in `def`.
fn position(def: &TableDef, p: &ast::MySQLColumnPosition) -> Result<usize, SqlError> {
    match p {
        ast::MySQLColumnPosition::First => Ok(0),
        ast::MySQLColumnPosition::After(c) => Ok(column_pos(def, &c.value)? + 1),
    }
}

/// The positions of an index's columns (1072 for a name the table lacks).
fn key_columns(def: &TableDef, cols: &[ast::IndexColumn]) -> Result<Vec<usize>, SqlError> {
    let mut out = Vec::with_capacity(cols.len());
    for c in cols {
        let name = match &c.column.expr {
            ast::Expr::Identifier(i) => i.value.clone(),
            other => {
                return Err(SqlError::unsupported(format!(
                    "index on expression {other}"
                )))
            }
        };
        let pos = def.column_index(&name).ok_or_else(|| {
            SqlError::new(
                1072,
                "42000",
                format!("Key column '{name}' doesn't exist in table"),
            )
        })?;
        out.push(pos);
    }
    if out.is_empty() {
        return Err(SqlError::syntax("an index needs at least one column"));
    }
    Ok(out)
}
