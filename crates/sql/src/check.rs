//! CHECK constraints: declaring them (CREATE TABLE, the implicit `json_valid` check of a JSON
//! column), storing their condition in MariaDB's spelling, and checking written rows.
//!
//! Owns: the names MariaDB gives checks (a column's check is named after the column, an
//! unnamed table check `CONSTRAINT_n`), the conditions a check may not use (subqueries 1970;
//! functions whose value is not a function of the row, variables 1901), the canonical text
//! (`` `a` > 0 and `b` is not null ``), and error 4025 for a row that makes a condition false.
//! Must never: let a row through whose check is false (NULL passes, as in SQL); store text it
//! cannot parse again.

use std::ops::ControlFlow;

use sqlparser::ast;
use tierdb_engine::{CheckDef, Table, TableDef, Value};

use crate::compile::{object_name_last, Compiler};
use crate::expr::{EvalCx, Expr};
use crate::result::SqlError;

/// A table's checks compiled for its rows.
#[derive(Clone, Debug)]
pub struct RowChecks {
    /// (name in the error, condition over the table's row).
    checks: Vec<(String, Expr)>,
    /// `db`.`table` for the error.
    table: String,
}

impl RowChecks {
    /// The checks of `t`, or None when it has none.
    pub fn of(t: &Table) -> Result<Option<Box<RowChecks>>, SqlError> {
        RowChecks::for_def(&t.def, &t.db)
    }

    /// The checks of table definition `def` of database `db`, or None when it has none.
    pub fn for_def(def: &TableDef, db: &str) -> Result<Option<Box<RowChecks>>, SqlError> {
        if def.checks.is_empty() {
            return Ok(None);
        }
        let scope = crate::plan::def_scope(def, db, None);
        let mut checks = Vec::with_capacity(def.checks.len());
        for c in &def.checks {
            let e = parse_condition(&c.expr)?;
            let mut compiler = Compiler::new(&scope, &[]);
            compiler.clause = "CHECK";
            let name = if c.column_level {
                format!("{}.{}", def.name, c.name)
            } else {
                c.name.clone()
            };
            checks.push((name, compiler.compile(&e)?));
        }
        Ok(Some(Box::new(RowChecks {
            checks,
            table: format!("`{db}`.`{}`", def.name),
        })))
    }

    /// Error 4025 for the first check `row` makes false.
    pub fn check(&self, row: &[Value], cx: &EvalCx) -> Result<(), SqlError> {
        for (name, e) in &self.checks {
            if crate::coerce::truthy(&*e.eval(row, cx)?) == Some(false) {
                return Err(SqlError::new(
                    4025,
                    "23000",
                    format!(
                        "CONSTRAINT `{}` failed for {}",
                        name.replace('`', "``"),
                        self.table
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Checks `row` against `checks` when there are any.
pub fn check_row(
    checks: &Option<Box<RowChecks>>,
    row: &[Value],
    cx: &EvalCx,
) -> Result<(), SqlError> {
    match checks {
        Some(c) => c.check(row, cx),
        None => Ok(()),
    }
}

/// A stored condition as an expression.
pub fn parse_condition(text: &str) -> Result<ast::Expr, SqlError> {
    let parsed = crate::parse::parse(&format!("SELECT {text}"))?;
    if let ast::Statement::Query(q) = parsed.stmt {
        if let ast::SetExpr::Select(s) = *q.body {
            if let [ast::SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                return Ok(e.clone());
            }
        }
    }
    Err(SqlError::new(
        1064,
        "42000",
        format!("CHECK condition {text} is not an expression"),
    ))
}

/// The checks CREATE TABLE declares for `def` (its columns and keys already made), in
/// MariaDB's order: column checks in column order (a JSON column without a check of its own
/// gets `json_valid(col)`), then table checks.
pub fn declared(ct: &ast::CreateTable, def: &TableDef) -> Result<Vec<CheckDef>, SqlError> {
    let mut out: Vec<CheckDef> = Vec::new();
    for c in &ct.columns {
        if let (_, Some(cond)) = column_check(c)? {
            add(&mut out, def, c.name.value.clone(), true, &cond)?;
        }
    }
    // An unnamed table check takes the first `CONSTRAINT_n` no check of the statement has.
    let named: Vec<CheckDef> = ct
        .constraints
        .iter()
        .filter_map(|t| match t {
            ast::TableConstraint::Check(k) => k.name.as_ref().map(|n| CheckDef {
                name: n.value.clone(),
                column_level: false,
                expr: String::new(),
            }),
            _ => None,
        })
        .collect();
    for t in &ct.constraints {
        if let ast::TableConstraint::Check(k) = t {
            let name = match &k.name {
                Some(n) => n.value.clone(),
                None => free_name(&[out.as_slice(), named.as_slice()].concat()),
            };
            add(&mut out, def, name, false, &k.expr)?;
        }
    }
    Ok(out)
}

/// A column definition's own check: its `CHECK (...)`, else a JSON column's implicit
/// `json_valid(col)` (a check of its own replaces it, as MariaDB); and the definition without
/// its CHECK option. More than one CHECK on a column is 1064.
pub fn column_check(c: &ast::ColumnDef) -> Result<(ast::ColumnDef, Option<ast::Expr>), SqlError> {
    let mut conds: Vec<ast::Expr> = Vec::new();
    for o in &c.options {
        if let ast::ColumnOption::Check(k) = &o.option {
            conds.push((*k.expr).clone());
        }
    }
    if conds.len() > 1 {
        return Err(SqlError::syntax(format!(
            "You have an error in your SQL syntax: column '{}' has more than one CHECK",
            c.name.value
        )));
    }
    let cond = match conds.pop() {
        Some(cond) => Some(cond),
        None if matches!(c.data_type, ast::DataType::JSON) => Some(json_valid(&c.name.value)),
        None => None,
    };
    let mut plain = c.clone();
    plain
        .options
        .retain(|o| !matches!(o.option, ast::ColumnOption::Check(_)));
    Ok((plain, cond))
}

/// ALTER TABLE ADD COLUMN `col` whose definition carries check `cond` (`column_check`): the
/// table's checks with the column's added (1826 / 1054 / 1901 as at CREATE TABLE). As in
/// MariaDB, the rows already stored are not read through it (they hold the column's fill).
pub fn with_column_check(
    def: &TableDef,
    col: &tierdb_engine::ColumnDef,
    cond: &ast::Expr,
) -> Result<Vec<CheckDef>, SqlError> {
    let mut wider = def.clone();
    wider.columns.push(col.clone());
    let mut out = def.checks.clone();
    add(&mut out, &wider, col.name.clone(), true, cond)?;
    Ok(out)
}

fn json_valid(column: &str) -> ast::Expr {
    ast::Expr::Function(ast::Function {
        name: ast::ObjectName::from(vec![ast::Ident::new("json_valid")]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                ast::Expr::Identifier(ast::Ident::new(column)),
            ))],
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

/// The first `CONSTRAINT_n` not taken.
fn free_name(taken: &[CheckDef]) -> String {
    (1..)
        .map(|n| format!("CONSTRAINT_{n}"))
        .find(|n| !taken.iter().any(|c| c.name.eq_ignore_ascii_case(n)))
        .unwrap_or_default()
}

fn add(
    out: &mut Vec<CheckDef>,
    def: &TableDef,
    name: String,
    column_level: bool,
    cond: &ast::Expr,
) -> Result<(), SqlError> {
    let key_named = |n: &str| {
        (n.eq_ignore_ascii_case("PRIMARY") && !def.primary_key.is_empty())
            || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
            || def
                .foreign_keys
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(n))
    };
    if out.iter().any(|c| c.name.eq_ignore_ascii_case(&name)) || (!column_level && key_named(&name))
    {
        return Err(SqlError::new(
            1826,
            "HY000",
            format!("Duplicate CHECK constraint name '{name}'"),
        ));
    }
    validate(cond, def, &name)?;
    let expr = canonical(cond);
    // What is stored must read back as the same condition.
    parse_condition(&expr)?;
    out.push(CheckDef {
        name,
        column_level,
        expr,
    });
    Ok(())
}

/// Functions whose value is not a function of the row (1901 in a CHECK), by their upper-case
/// name, with the spelling MariaDB's message uses.
fn not_of_the_row(name: &str) -> Option<String> {
    let n = name.to_ascii_uppercase();
    let shown = match n.as_str() {
        "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => "current_timestamp",
        "CURDATE" | "CURRENT_DATE" => "curdate",
        "CURTIME" | "CURRENT_TIME" => "curtime",
        "RAND" | "UUID" | "UUID_SHORT" | "SYSDATE" | "UNIX_TIMESTAMP" | "UTC_TIMESTAMP"
        | "UTC_DATE" | "UTC_TIME" | "CONNECTION_ID" | "USER" | "CURRENT_USER" | "SESSION_USER"
        | "SYSTEM_USER" | "DATABASE" | "SCHEMA" | "LAST_INSERT_ID" | "FOUND_ROWS" | "ROW_COUNT"
        | "GET_LOCK" | "RELEASE_LOCK" | "RELEASE_ALL_LOCKS" | "IS_FREE_LOCK" | "IS_USED_LOCK"
        | "SLEEP" | "BENCHMARK" | "VERSION" => return Some(n.to_lowercase()),
        _ => return None,
    };
    Some(shown.to_string())
}

/// Refuses what a CHECK may not use, then compiles the condition against the table's columns
/// (1054 naming 'CHECK' for an unknown column).
fn validate(cond: &ast::Expr, def: &TableDef, name: &str) -> Result<(), SqlError> {
    let mut refused: Option<SqlError> = None;
    let _ = ast::visit_expressions(cond, |e| {
        let bad = match e {
            ast::Expr::Subquery(_)
            | ast::Expr::Exists { .. }
            | ast::Expr::In {
                target: ast::InTarget::Subquery(_),
                ..
            } => Some(SqlError::new(
                1970,
                "42000",
                "CHECK does not support subqueries or stored functions",
            )),
            ast::Expr::Function(f) => {
                let fname = object_name_last(&f.name);
                let with_args =
                    matches!(&f.args, ast::FunctionArguments::List(l) if !l.args.is_empty());
                if fname.eq_ignore_ascii_case("UNIX_TIMESTAMP") && with_args {
                    None
                } else {
                    not_of_the_row(&fname).map(|shown| used_in_check(&format!("{shown}()"), name))
                }
            }
            ast::Expr::Identifier(id)
                if def
                    .columns
                    .iter()
                    .any(|c| c.auto_increment && c.name.eq_ignore_ascii_case(&id.value)) =>
            {
                Some(used_in_check("AUTO_INCREMENT", name))
            }
            ast::Expr::Identifier(id) if id.value.starts_with('@') => {
                Some(used_in_check(&id.value, name))
            }
            ast::Expr::CompoundIdentifier(ids)
                if ids.first().is_some_and(|i| i.value.starts_with('@')) =>
            {
                Some(used_in_check(&ids[0].value, name))
            }
            _ => None,
        };
        match bad {
            Some(err) => {
                refused = Some(err);
                ControlFlow::Break(())
            }
            None => ControlFlow::Continue(()),
        }
    });
    if let Some(e) = refused {
        return Err(e);
    }
    let scope = crate::plan::def_scope(def, "", None);
    let mut compiler = Compiler::new(&scope, &[]);
    compiler.clause = "CHECK";
    compiler.compile(cond).map(|_| ())
}

fn used_in_check(what: &str, name: &str) -> SqlError {
    SqlError::new(
        1901,
        "HY000",
        format!("Function or expression '{what}' cannot be used in the CHECK clause of `{name}`"),
    )
}

/// `ALTER TABLE ... ADD [CONSTRAINT [name]] CHECK (...)`: the table's checks with the new one
/// last (1826 for a name taken; named `CONSTRAINT_n` when unnamed).
pub fn added(def: &TableDef, k: &ast::CheckConstraint) -> Result<Vec<CheckDef>, SqlError> {
    let mut out = def.checks.clone();
    let name = match &k.name {
        Some(n) => n.value.clone(),
        None => free_name(&out),
    };
    add(&mut out, def, name, false, &k.expr)?;
    Ok(out)
}

/// ALTER TABLE changes of a column a CHECK constraint reads (DROP, CHANGE, MODIFY, RENAME
/// COLUMN), and ADD / DROP CONSTRAINT among other changes, are not supported yet: 1235,
/// before anything changes.
pub fn alter_allowed(ops: &[&ast::AlterTableOperation], def: &TableDef) -> Result<(), SqlError> {
    use ast::AlterTableOperation as Op;
    for op in ops {
        let touched: Vec<&str> = match op {
            Op::DropColumn { column_names, .. } => {
                column_names.iter().map(|c| c.value.as_str()).collect()
            }
            Op::ChangeColumn { old_name, .. } => vec![old_name.value.as_str()],
            Op::ModifyColumn { col_name, .. } => vec![col_name.value.as_str()],
            Op::RenameColumn {
                old_column_name, ..
            } => vec![old_column_name.value.as_str()],
            Op::AddConstraint {
                constraint: ast::TableConstraint::Check(_),
                ..
            }
            | Op::DropConstraint { .. }
                if ops.len() > 1 =>
            {
                return Err(SqlError::unsupported(
                    "ADD / DROP of a CHECK constraint with other changes in one ALTER TABLE",
                ))
            }
            _ => continue,
        };
        for c in &def.checks {
            let used = columns_used(&c.expr);
            if let Some(col) = touched
                .iter()
                .find(|t| used.iter().any(|u| u.eq_ignore_ascii_case(t)))
            {
                return Err(SqlError::unsupported(format!(
                    "ALTER TABLE that drops, renames or redefines column '{col}', which CHECK constraint `{}` reads",
                    c.name
                )));
            }
        }
    }
    Ok(())
}

/// Lower-case names of the columns a stored condition reads.
pub fn columns_used(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(e) = parse_condition(text) {
        let _ = ast::visit_expressions(&e, |e| {
            match e {
                ast::Expr::Identifier(id) => out.push(id.value.to_lowercase()),
                ast::Expr::CompoundIdentifier(ids) => {
                    if let Some(last) = ids.last() {
                        out.push(last.value.to_lowercase());
                    }
                }
                _ => {}
            }
            ControlFlow::<()>::Continue(())
        });
    }
    out
}

/// MariaDB's spelling of a condition: names backquoted, keywords and functions in lower case,
/// strings with backslash escapes, `!=` as `<>`, `&&` / `||` as `and` / `or`.
pub fn canonical(e: &ast::Expr) -> String {
    let mut e = e;
    // `CHECK ((a > 0))`: the parentheses around the whole condition go.
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    let mut s = String::new();
    print(e, &mut s);
    s
}

fn ident(name: &str, out: &mut String) {
    out.push('`');
    out.push_str(&name.replace('`', "``"));
    out.push('`');
}

fn string(v: &str, out: &mut String) {
    out.push('\'');
    for c in v.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

fn list(items: &[ast::Expr], out: &mut String) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        print(x, out);
    }
}

fn print(e: &ast::Expr, out: &mut String) {
    use ast::Expr as E;
    match e {
        E::Identifier(id) => ident(&id.value, out),
        E::CompoundIdentifier(ids) => ident(ids.last().map_or("", |i| i.value.as_str()), out),
        E::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => string(s, out),
            ast::Value::Boolean(b) => out.push_str(if *b { "1" } else { "0" }),
            ast::Value::Null => out.push_str("NULL"),
            other => out.push_str(&other.to_string()),
        },
        E::Nested(inner) => {
            out.push('(');
            print(inner, out);
            out.push(')');
        }
        E::BinaryOp { left, op, right } => {
            use ast::BinaryOperator as B;
            print(left, out);
            let o = match op {
                B::And => "and".to_string(),
                // `||` is OR under the default sql_mode.
                B::Or | B::StringConcat => "or".to_string(),
                B::Xor => "xor".to_string(),
                B::NotEq => "<>".to_string(),
                B::Modulo => "MOD".to_string(),
                B::MyIntegerDivide => "DIV".to_string(),
                other => other.to_string(),
            };
            out.push(' ');
            out.push_str(&o);
            out.push(' ');
            print(right, out);
        }
        E::UnaryOp { op, expr } => match op {
            ast::UnaryOperator::Not => negated(expr, out),
            ast::UnaryOperator::Minus => {
                out.push('-');
                print(expr, out);
            }
            ast::UnaryOperator::Plus => print(expr, out),
            other => {
                out.push_str(&other.to_string());
                print(expr, out);
            }
        },
        E::IsNull(x) => {
            print(x, out);
            out.push_str(" is null");
        }
        E::IsNotNull(x) => {
            print(x, out);
            out.push_str(" is not null");
        }
        E::Between {
            expr,
            negated,
            low,
            high,
        } => {
            print(expr, out);
            out.push_str(if *negated {
                " not between "
            } else {
                " between "
            });
            print(low, out);
            out.push_str(" and ");
            print(high, out);
        }
        E::In {
            expr,
            target: ast::InTarget::List(items),
            negated,
            ..
        } => {
            print(expr, out);
            out.push_str(if *negated { " not in (" } else { " in (" });
            list(items, out);
            out.push(')');
        }
        E::Like {
            negated,
            expr,
            pattern,
            escape_char,
            ..
        } if escape_char.is_none() => {
            print(expr, out);
            // (MariaDB's own spelling has two spaces before `not like`.)
            out.push_str(if *negated { "  not like " } else { " like " });
            print(pattern, out);
        }
        E::Function(f) if matches!(f.args, ast::FunctionArguments::List(_)) && f.over.is_none() => {
            let ast::FunctionArguments::List(l) = &f.args else {
                unreachable!()
            };
            let plain: Option<Vec<ast::Expr>> = l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => Some(x.clone()),
                    _ => None,
                })
                .collect();
            match plain {
                Some(args) if l.duplicate_treatment.is_none() && l.clauses.is_empty() => {
                    out.push_str(&object_name_last(&f.name).to_lowercase());
                    out.push('(');
                    list(&args, out);
                    out.push(')');
                }
                _ => fallback(e, out),
            }
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            out.push_str("substr(");
            print(expr, out);
            for x in [substring_from, substring_for].into_iter().flatten() {
                out.push(',');
                print(x, out);
            }
            out.push(')');
        }
        E::Cast {
            kind: ast::CastKind::Cast,
            expr,
            data_type,
            format: None,
            ..
        } => {
            out.push_str("cast(");
            print(expr, out);
            out.push_str(" as ");
            out.push_str(&data_type.to_string().to_lowercase());
            out.push(')');
        }
        other => fallback(other, out),
    }
}

/// sqlparser's own spelling of `e`, with backslashes in string literals escaped (sqlparser
/// prints them bare, and a backslash escape would mean something else when read again).
fn fallback(e: &ast::Expr, out: &mut String) {
    let mut e = e.clone();
    let _ = ast::visit_expressions_mut(&mut e, |x| {
        if let ast::Expr::Value(v) = x {
            if let ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) =
                &mut v.value
            {
                *s = s.replace('\\', "\\\\");
            }
        }
        ControlFlow::<()>::Continue(())
    });
    out.push_str(&e.to_string());
}

/// `NOT x` as MariaDB prints it: a comparison turned around, `x = 0` for a bare operand,
/// `!(...)` otherwise.
fn negated(x: &ast::Expr, out: &mut String) {
    use ast::BinaryOperator as B;
    use ast::Expr as E;
    let inner = match x {
        E::Nested(i) => &**i,
        other => other,
    };
    match inner {
        E::BinaryOp { left, op, right } => {
            let flipped = match op {
                B::Lt => Some(B::GtEq),
                B::LtEq => Some(B::Gt),
                B::Gt => Some(B::LtEq),
                B::GtEq => Some(B::Lt),
                B::Eq => Some(B::NotEq),
                B::NotEq => Some(B::Eq),
                _ => None,
            };
            if let Some(op) = flipped {
                return print(
                    &E::BinaryOp {
                        left: left.clone(),
                        op,
                        right: right.clone(),
                    },
                    out,
                );
            }
        }
        E::IsNull(a) => return print(&E::IsNotNull(a.clone()), out),
        E::IsNotNull(a) => return print(&E::IsNull(a.clone()), out),
        E::Identifier(_) | E::CompoundIdentifier(_) => {
            print(inner, out);
            out.push_str(" = 0");
            return;
        }
        _ => {}
    }
    out.push_str("!(");
    print(inner, out);
    out.push(')');
}
