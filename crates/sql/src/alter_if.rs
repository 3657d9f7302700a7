//! MariaDB's `IF [NOT] EXISTS` on ALTER TABLE clauses: `ADD COLUMN IF NOT EXISTS`, `ADD
//! INDEX | KEY | UNIQUE ... IF NOT EXISTS`, `ADD CONSTRAINT f FOREIGN KEY IF NOT EXISTS`,
//! `DROP COLUMN | INDEX | KEY | FOREIGN KEY | CONSTRAINT IF EXISTS`, `MODIFY | CHANGE COLUMN
//! IF EXISTS`. `parse` cuts the words and marks the statement (`parse::ALTER_IF_MARK`);
//! here the clauses whose condition fails against the table's definition are left out, each
//! with MariaDB's note. As MariaDB, the conditions look at the table as it was before the
//! statement, and at the columns its earlier clauses add (`ADD COLUMN IF NOT EXISTS c ...,
//! ADD COLUMN IF NOT EXISTS c ...` adds one).
//! Owns: deciding which clauses go. Must never: change a clause it keeps (other than setting
//! a DROP CONSTRAINT's own IF EXISTS), or read rows.

use sqlparser::ast;
use sqlparser::ast::AlterTableOperation as Op;
use tierdb_engine::TableDef;

/// Notes of clauses left out: (code, message).
pub type Notes = Vec<(u16, String)>;

/// The clauses marked by `parse` in `at`: (clause position, IF NOT EXISTS). None when the
/// statement has no mark.
fn marked(at: &ast::AlterTable) -> Option<Vec<(usize, bool)>> {
    let mark = at.on_cluster.as_ref()?;
    let list = mark.value.strip_prefix(crate::parse::ALTER_IF_MARK)?;
    Some(
        list.split(',')
            .filter_map(|item| {
                let (k, kind) = item.split_once(':')?;
                Some((k.parse().ok()?, kind == "n"))
            })
            .collect(),
    )
}

/// The table's names before the statement, which the conditions are checked against (as
/// MariaDB: `DROP COLUMN c, ADD COLUMN IF NOT EXISTS c ...` keeps `c` dropped, with a note),
/// and the columns the statement's earlier clauses add or drop (a second `ADD COLUMN IF NOT
/// EXISTS` or `DROP COLUMN IF EXISTS` of one name is left out).
struct Names {
    columns: Vec<String>,
    added_columns: Vec<String>,
    dropped_columns: Vec<String>,
    indexes: Vec<String>,
    foreign_keys: Vec<String>,
    primary: bool,
}

impl Names {
    fn has(list: &[String], name: &str) -> bool {
        list.iter().any(|n| n.eq_ignore_ascii_case(name))
    }
    /// Notes a clause that stays.
    fn apply(&mut self, op: &Op) {
        match op {
            Op::AddColumn { column_def, .. } => {
                self.added_columns.push(column_def.name.value.clone())
            }
            Op::DropColumn { column_names, .. } => self
                .dropped_columns
                .extend(column_names.iter().map(|c| c.value.clone())),
            _ => {}
        }
    }

    /// The note that leaves `op` out, or None when it stays.
    fn skipped(&self, op: &Op, if_not_exists: bool, table: &str) -> Option<(u16, String)> {
        let dup_key = |name: &str| (1061, format!("Duplicate key name '{name}'"));
        let cant_drop = |what: &str, name: &str| {
            (
                1091,
                format!("Can't DROP {what} `{name}`; check that it exists"),
            )
        };
        if if_not_exists {
            return match op {
                Op::AddColumn { column_def, .. }
                    if Self::has(&self.columns, &column_def.name.value)
                        || Self::has(&self.added_columns, &column_def.name.value) =>
                {
                    Some((
                        1060,
                        format!("Duplicate column name '{}'", column_def.name.value),
                    ))
                }
                Op::AddConstraint { constraint, .. } => {
                    let (name, list) = match constraint {
                        ast::TableConstraint::Index(ix) => (ix.name.as_ref(), &self.indexes),
                        ast::TableConstraint::Unique(u) => {
                            (u.index_name.as_ref().or(u.name.as_ref()), &self.indexes)
                        }
                        ast::TableConstraint::ForeignKey(fk) => {
                            (fk.name.as_ref(), &self.foreign_keys)
                        }
                        ast::TableConstraint::PrimaryKey(_) if self.primary => {
                            return Some(dup_key("PRIMARY"))
                        }
                        _ => return None,
                    };
                    let name = name?;
                    Self::has(list, &name.value).then(|| dup_key(&name.value))
                }
                _ => None,
            };
        }
        match op {
            Op::DropColumn { column_names, .. } => column_names
                .iter()
                .find(|c| {
                    !Self::has(&self.columns, &c.value)
                        || Self::has(&self.dropped_columns, &c.value)
                })
                .map(|c| cant_drop("COLUMN", &c.value)),
            Op::DropIndex { name } if !Self::has(&self.indexes, &name.value) => {
                Some(cant_drop("INDEX", &name.value))
            }
            Op::DropForeignKey { name, .. } if !Self::has(&self.foreign_keys, &name.value) => {
                Some(cant_drop("FOREIGN KEY", &name.value))
            }
            Op::ModifyColumn { col_name: c, .. } | Op::ChangeColumn { old_name: c, .. }
                if !Self::has(&self.columns, &c.value) =>
            {
                Some((1054, format!("Unknown column '{}' in '{table}'", c.value)))
            }
            _ => None,
        }
    }
}

/// `at` without the clauses its `IF [NOT] EXISTS` conditions leave out (and without the
/// mark), and their notes in clause order; None when `at` has no such clause.
pub fn resolve(at: &ast::AlterTable, def: &TableDef) -> Option<(ast::AlterTable, Notes)> {
    let marks = marked(at)?;
    let mut names = Names {
        columns: def.columns.iter().map(|c| c.name.clone()).collect(),
        added_columns: Vec::new(),
        dropped_columns: Vec::new(),
        indexes: def.indexes.iter().map(|i| i.name.clone()).collect(),
        foreign_keys: def.foreign_keys.iter().map(|f| f.name.clone()).collect(),
        primary: !def.primary_key.is_empty(),
    };
    let mut kept = Vec::with_capacity(at.operations.len());
    let mut notes = Vec::new();
    for (k, op) in at.operations.iter().enumerate() {
        let condition = marks.iter().find(|(m, _)| *m == k).map(|(_, not)| *not);
        let mut op = op.clone();
        match condition {
            // DROP CONSTRAINT has its own IF EXISTS (its note names the constraint).
            Some(false) if matches!(op, Op::DropConstraint { .. }) => {
                if let Op::DropConstraint { if_exists, .. } = &mut op {
                    *if_exists = true;
                }
            }
            Some(not) => {
                if let Some(note) = names.skipped(&op, not, &def.name) {
                    notes.push(note);
                    continue;
                }
            }
            None => {}
        }
        names.apply(&op);
        kept.push(op);
    }
    let mut out = at.clone();
    out.operations = kept;
    out.on_cluster = None;
    Some((out, notes))
}
