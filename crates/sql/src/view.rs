//! Views: `CREATE [OR REPLACE] VIEW`, `ALTER VIEW`, what a view's stored query looks like,
//! and the table shape a view shows (SHOW COLUMNS, INFORMATION_SCHEMA).
//!
//! A view is stored as the text of its SELECT, rewritten at CREATE time so that it reads the
//! same later and elsewhere: `*` becomes the columns it stood for then (a column added to a
//! table afterwards does not appear in the view, as in MariaDB), every select-list item
//! carries the view column's name, and table names that resolved in a database other than
//! the view's are qualified. Wherever a view is named the planner plans that text as a
//! derived table (`PlanCx::view`).
//!
//! Must never: write through a view (INSERT / UPDATE / DELETE name base tables only), or
//! store a query it did not plan successfully.

use crate::compile::object_name_parts;
use crate::plan::{PlanCx, SelectPlan, Utility};
use crate::result::SqlError;
use sqlparser::ast;
use std::ops::ControlFlow;
use std::sync::Arc;
use tierdb_engine::{ColumnDef, Engine, TableDef, ViewDef};

/// The MariaDB error for a view whose query names a table or column that is gone.
pub fn invalid(db: &str, v: &str) -> SqlError {
    SqlError::new(
        1356,
        "HY000",
        format!("View '{db}.{v}' references invalid table(s) or column(s) or function(s) or definer/invoker of view lack rights to use them"),
    )
}

/// A view named where a table must be (ALTER TABLE, CREATE TABLE ... LIKE, TRUNCATE, ...).
pub fn not_base_table(db: &str, t: &str) -> SqlError {
    SqlError::new(
        1347,
        "HY000",
        format!("'{db}.{t}' is not of type 'BASE TABLE'"),
    )
}

/// A table named where a view must be (SHOW CREATE VIEW).
pub fn not_a_view(db: &str, t: &str) -> SqlError {
    SqlError::new(1347, "HY000", format!("'{db}.{t}' is not of type 'VIEW'"))
}

/// The `options` entry `parse` puts a trailing `WITH [CASCADED | LOCAL] CHECK OPTION` in.
pub const CHECK_OPTION_KEY: &str = "check_option";

fn quoted(name: &str) -> ast::Ident {
    ast::Ident::with_quote('`', name)
}

/// Plans `CREATE [OR REPLACE] VIEW` (and `ALTER VIEW`, which `parse` reads as
/// `CREATE OR REPLACE` with `or_alter` set: the view must exist).
pub fn create(cv: &ast::CreateView, cx: &PlanCx) -> Result<Utility, SqlError> {
    if cv.materialized || cv.secure || cv.temporary || cv.to.is_some() || cv.copy_grants {
        return Err(SqlError::unsupported(
            "this kind of view (MATERIALIZED / TEMPORARY / SECURE)",
        ));
    }
    if !cv.cluster_by.is_empty()
        || cv.comment.is_some()
        || cv.with_no_schema_binding
        || cv.if_not_exists
    {
        return Err(SqlError::syntax(
            "You have an error in your SQL syntax near the view's options",
        ));
    }
    let check_option = match &cv.options {
        ast::CreateTableOptions::None => "NONE".to_string(),
        ast::CreateTableOptions::With(o) => match o.as_slice() {
            [ast::SqlOption::KeyValue {
                key,
                value: ast::Expr::Value(v),
            }] if object_name_parts(key)?.join(".") == CHECK_OPTION_KEY => match &v.value {
                ast::Value::SingleQuotedString(s) => s.clone(),
                _ => return Err(SqlError::unsupported("view options")),
            },
            _ => return Err(SqlError::unsupported("view options")),
        },
        _ => return Err(SqlError::unsupported("view options")),
    };
    if !cx.placeholders.is_empty() {
        return Err(SqlError::new(
            1351,
            "HY000",
            "View's SELECT contains a variable or parameter",
        ));
    }
    let (db, name) = cx.qualify(&cv.name)?;
    crate::ddl::check_table_name(&name)?;
    let mut q = (*cv.query).clone();
    // Planned as the statement's session sees its tables, with the view itself on the stack:
    // a query naming the view (also through other views, as CREATE OR REPLACE could) is
    // recursion.
    let session_db = cx.current_db();
    cx.views
        .borrow_mut()
        .push((db.clone(), name.clone(), session_db.clone()));
    let planned = plan_and_expand(&mut q, cx);
    cx.views.borrow_mut().pop();
    // Naming the view itself (also through another view) reads, as MariaDB words it, a
    // table that does not exist yet.
    let plan = planned.map_err(|e| match e.code {
        1462 => tierdb_engine::Error::NoSuchTable {
            db: db.clone(),
            table: name.clone(),
        }
        .into(),
        _ => e,
    })?;
    let names: Vec<String> = if cv.columns.is_empty() {
        plan.columns.iter().map(|c| c.name.clone()).collect()
    } else {
        if cv.columns.len() != plan.columns.len() {
            return Err(SqlError::new(
                1353,
                "HY000",
                "View's SELECT and view's field list have different column counts",
            ));
        }
        cv.columns.iter().map(|c| c.name.value.clone()).collect()
    };
    for (i, n) in names.iter().enumerate() {
        if names[..i].iter().any(|o| o.eq_ignore_ascii_case(n)) {
            return Err(SqlError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{n}'"),
            ));
        }
    }
    name_items(&mut q.body, &names);
    if session_db.as_deref() != Some(db.as_str()) {
        if let Some(home) = &session_db {
            qualify_tables(&mut q, home);
        }
    }
    let (algorithm, definer, security) = match &cv.params {
        None => (None, None, None),
        Some(p) => (
            p.algorithm.as_ref().map(|a| a.to_string()),
            p.definer.as_ref().and_then(|d| match d {
                ast::GranteeName::UserHost { user, host } => {
                    Some(format!("{}@{}", user.value, host.value))
                }
                // DEFINER = CURRENT_USER and the like: the session's user.
                ast::GranteeName::ObjectName(_) => None,
            }),
            p.security.as_ref().map(|s| s.to_string()),
        ),
    };
    Ok(Utility::CreateView {
        db,
        def: ViewDef {
            name,
            query: q.to_string(),
            algorithm: algorithm.unwrap_or_else(|| "UNDEFINED".into()),
            // Filled in by the session when empty.
            definer: definer.unwrap_or_default(),
            security: security.unwrap_or_else(|| "DEFINER".into()),
            check_option,
            charset_client: String::new(),
            collation_connection: String::new(),
        },
        replace: cv.or_replace,
        alter: cv.or_alter,
    })
}

/// Plans the view's query (errors as MariaDB's CREATE VIEW gives them) and replaces every
/// `*` in its top-level SELECTs by the columns it stands for now.
fn plan_and_expand(q: &mut ast::Query, cx: &PlanCx) -> Result<SelectPlan, SqlError> {
    let plan = crate::plan::select(q, cx);
    cx.subqueries.take();
    let plan = plan?;
    let with = q.with.clone();
    expand_stars(&mut q.body, &with, cx)?;
    cx.subqueries.take();
    Ok(plan)
}

/// `*` and `t.*` in the SELECTs whose rows `body` returns: each becomes the column names it
/// lists, found by planning `SELECT <that item> FROM <the same FROM>` with the same WITH.
fn expand_stars(
    body: &mut ast::SetExpr,
    with: &Option<ast::With>,
    cx: &PlanCx,
) -> Result<(), SqlError> {
    match body {
        ast::SetExpr::Select(s) => {
            let mut items = Vec::with_capacity(s.projection.len());
            for it in std::mem::take(&mut s.projection) {
                let qualifier = match &it {
                    ast::SelectItem::Wildcard(_) => None,
                    ast::SelectItem::QualifiedWildcard(
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n),
                        _,
                    ) => Some(n.clone()),
                    _ => {
                        items.push(it);
                        continue;
                    }
                };
                let probe = ast::Query {
                    with: with.clone(),
                    body: Box::new(ast::SetExpr::Select(Box::new(ast::Select {
                        projection: vec![it.clone()],
                        selection: None,
                        group_by: ast::GroupByExpr::Expressions(vec![], vec![]),
                        having: None,
                        distinct: None,
                        ..(**s).clone()
                    }))),
                    order_by: None,
                    limit_clause: None,
                    fetch: None,
                    locks: vec![],
                    for_clause: None,
                    settings: None,
                    format_clause: None,
                    pipe_operators: vec![],
                };
                let cols = crate::plan::select(&probe, cx)?.columns;
                for c in cols {
                    let e = match &qualifier {
                        None => ast::Expr::Identifier(quoted(&c.name)),
                        Some(n) => {
                            let mut parts: Vec<ast::Ident> =
                                n.0.iter().filter_map(|p| p.as_ident().cloned()).collect();
                            parts.push(quoted(&c.name));
                            ast::Expr::CompoundIdentifier(parts)
                        }
                    };
                    items.push(ast::SelectItem::UnnamedExpr(e));
                }
            }
            s.projection = items;
            Ok(())
        }
        ast::SetExpr::SetOperation { left, right, .. } => {
            expand_stars(left, with, cx)?;
            expand_stars(right, with, cx)
        }
        ast::SetExpr::Query(inner) => {
            let w = inner.with.clone().or_else(|| with.clone());
            expand_stars(&mut inner.body, &w, cx)
        }
        _ => Ok(()),
    }
}

/// Every select-list item of the first SELECT of `body` (the one whose names a UNION takes)
/// gets `AS <name>`.
fn name_items(body: &mut ast::SetExpr, names: &[String]) {
    match body {
        ast::SetExpr::Select(s) => {
            for (it, n) in s.projection.iter_mut().zip(names) {
                let e = match std::mem::replace(it, ast::SelectItem::Wildcard(Default::default())) {
                    ast::SelectItem::UnnamedExpr(e)
                    | ast::SelectItem::ExprWithAlias { expr: e, .. } => e,
                    other => {
                        *it = other;
                        continue;
                    }
                };
                *it = ast::SelectItem::ExprWithAlias {
                    expr: e,
                    alias: quoted(n),
                };
            }
        }
        ast::SetExpr::SetOperation { left, .. } => name_items(left, names),
        ast::SetExpr::Query(inner) => name_items(&mut inner.body, names),
        _ => {}
    }
}

/// Qualifies every one-part table name in `q` (not a WITH query's name) with `db`.
fn qualify_tables(q: &mut ast::Query, db: &str) {
    let mut ctes: Vec<String> = Vec::new();
    collect_ctes(q, &mut ctes);
    let _ = ast::visit_relations_mut(q, |name| {
        if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
            if !ctes.iter().any(|c| c.eq_ignore_ascii_case(&id.value)) {
                name.0
                    .insert(0, ast::ObjectNamePart::Identifier(quoted(db)));
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// The names of every WITH query defined anywhere in `q`.
fn collect_ctes(q: &ast::Query, out: &mut Vec<String>) {
    struct Ctes<'a>(&'a mut Vec<String>);
    impl ast::Visitor for Ctes<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            if let Some(w) = &q.with {
                self.0
                    .extend(w.cte_tables.iter().map(|c| c.alias.name.value.clone()));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::Visit::visit(q, &mut Ctes(out));
}

/// The table shape view `name` shows (SHOW COLUMNS, INFORMATION_SCHEMA.COLUMNS): each
/// column as the table column it copies, else a type for its values; no keys.
pub fn table_def(name: &str, plan: &SelectPlan) -> TableDef {
    let columns = plan
        .columns
        .iter()
        .enumerate()
        .map(|(i, meta)| {
            let mut c: ColumnDef = crate::plan::copied_column(plan, i)
                .unwrap_or_else(|| crate::ddl::column_for_values(meta, std::iter::empty()));
            c.name = meta.name.clone();
            c.auto_increment = false;
            c.nullable = !meta.not_null;
            c
        })
        .collect();
    TableDef {
        name: name.to_string(),
        columns,
        primary_key: Vec::new(),
        indexes: Vec::new(),
        foreign_keys: Vec::new(),
    }
}

/// The base table `db`.`t` (1347 when it is a view, 1146 when neither).
pub fn base_table(
    engine: &Arc<Engine>,
    db: &str,
    t: &str,
) -> Result<Arc<tierdb_engine::Table>, SqlError> {
    match engine.table(db, t) {
        Ok(t) => Ok(t),
        Err(_) if engine.view(db, t).is_some() => Err(not_base_table(db, t)),
        Err(e) => Err(e.into()),
    }
}

/// The table shape of view `db`.`v` (`table_def` of its planned query).
pub fn shape(engine: &Arc<Engine>, db: &str, v: &str) -> Result<TableDef, SqlError> {
    let cx = PlanCx::new(engine, Some(db), &[]);
    let name = ast::ObjectName::from(vec![ast::Ident::new(db), ast::Ident::new(v)]);
    match cx.view(&name)? {
        Some(plan) => Ok(table_def(v, &plan)),
        None => Err(tierdb_engine::Error::NoSuchTable {
            db: db.into(),
            table: v.into(),
        }
        .into()),
    }
}

/// `SHOW CREATE VIEW` / `SHOW CREATE TABLE` of a view: the statement that makes it again.
pub fn create_statement(v: &ViewDef) -> String {
    let definer = match v.definer.rsplit_once('@') {
        Some((u, h)) => format!("`{u}`@`{h}`"),
        None => format!("`{}`", v.definer),
    };
    let check = match v.check_option.as_str() {
        "NONE" => String::new(),
        other => format!(" WITH {other} CHECK OPTION"),
    };
    format!(
        "CREATE ALGORITHM={} DEFINER={definer} SQL SECURITY {} VIEW `{}` AS {}{check}",
        v.algorithm, v.security, v.name, v.query
    )
}

/// A view an INSERT / UPDATE / DELETE writes through, as a statement on its table sees it.
struct Target {
    /// The view's FROM item: its base table (named with its database), the view's alias
    /// for it kept, so the column expressions below still resolve.
    relation: ast::TableFactor,
    /// The view's WHERE: the rows it shows.
    filter: Option<ast::Expr>,
    /// Each view column and its expression over the table.
    columns: Vec<(String, ast::Expr)>,
    /// What a row written through this view must satisfy (its CHECK OPTION): its own WHERE
    /// (LOCAL), also those of the views under it (CASCADED), or nothing.
    check: Option<ast::Expr>,
}

/// How deep views over views may be written through.
const MAX_VIEW_DEPTH: usize = 16;

fn not_updatable(v: &str, what: &str) -> SqlError {
    if what == "INSERT" {
        SqlError::new(
            1471,
            "HY000",
            format!("The target table {v} of the INSERT is not insertable-into"),
        )
    } else {
        SqlError::new(
            1288,
            "HY000",
            format!("The target table {v} of the {what} is not updatable"),
        )
    }
}

/// `db`.`name` (a view) as a `Target` for `what` (INSERT, UPDATE or DELETE): a view over
/// one table (or over such a view) without DISTINCT, GROUP BY, HAVING, aggregates, LIMIT,
/// UNION or WITH, as MariaDB's updatable views (1288 / 1471 otherwise).
fn target(cx: &PlanCx, db: &str, name: &str, what: &str, depth: usize) -> Result<Target, SqlError> {
    let Some(def) = cx.engine.view(db, name) else {
        return Err(tierdb_engine::Error::NoSuchTable {
            db: db.into(),
            table: name.into(),
        }
        .into());
    };
    if depth > MAX_VIEW_DEPTH {
        return Err(SqlError::new(
            1462,
            "HY000",
            format!("`{db}`.`{name}` contains view recursion"),
        ));
    }
    let q = match crate::parse::parse(&def.query)?.stmt {
        ast::Statement::Query(q) => q,
        _ => return Err(invalid(db, name)),
    };
    let s = match (&*q.body, &q.with, &q.limit_clause, def.algorithm.as_str()) {
        (ast::SetExpr::Select(s), None, None, a) if a != "TEMPTABLE" => s,
        _ => return Err(not_updatable(name, what)),
    };
    let grouped =
        !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    let aggregated = s.projection.iter().any(|it| match it {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            crate::compile::contains_aggregate(e, 0)
        }
        _ => false,
    });
    let (rel, rel_name, rel_alias) = match s.from.as_slice() {
        [twj] if twj.joins.is_empty() => match &twj.relation {
            ast::TableFactor::Table {
                name,
                alias,
                args: None,
                ..
            } => (
                twj.relation.clone(),
                name.clone(),
                alias.as_ref().map(|a| a.name.value.clone()),
            ),
            _ => return Err(not_updatable(name, what)),
        },
        _ => return Err(not_updatable(name, what)),
    };
    if s.distinct.is_some() || grouped || s.having.is_some() || aggregated {
        return Err(not_updatable(name, what));
    }
    let mut columns = Vec::with_capacity(s.projection.len());
    for it in &s.projection {
        match it {
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                columns.push((alias.value.clone(), expr.clone()))
            }
            ast::SelectItem::UnnamedExpr(e) => {
                columns.push((crate::compile::column_name_of(e), e.clone()))
            }
            _ => return Err(not_updatable(name, what)),
        }
    }
    let parts = object_name_parts(&rel_name)?;
    let (rdb, rtable) = match parts.as_slice() {
        [t] => (db.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(invalid(db, name)),
    };
    let mut filter = s.selection.clone();
    if cx.engine.table(&rdb, &rtable).is_err() && cx.engine.view(&rdb, &rtable).is_some() {
        // A view over a view: its columns are the inner view's, put in.
        let inner = target(cx, &rdb, &rtable, what, depth + 1)?;
        let names = [rel_alias.unwrap_or_else(|| rtable.clone())];
        for (_, e) in &mut columns {
            subst(e, &inner.columns, &names);
        }
        if let Some(f) = &mut filter {
            subst(f, &inner.columns, &names);
        }
        // As MariaDB: LOCAL checks the view's own WHERE, CASCADED also the views' under it,
        // and a view without a CHECK OPTION checks nothing (not even views under it).
        let check = match def.check_option.as_str() {
            "NONE" => None,
            "LOCAL" => filter.clone(),
            _ => and(inner.filter.clone(), filter.clone()),
        };
        return Ok(Target {
            relation: inner.relation,
            filter: and(inner.filter, filter),
            columns,
            check,
        });
    }
    if cx.engine.table(&rdb, &rtable).is_err() {
        return Err(invalid(db, name));
    }
    let mut relation = rel;
    if let ast::TableFactor::Table { name: n, alias, .. } = &mut relation {
        *n = ast::ObjectName::from(vec![quoted(&rdb), quoted(&rtable)]);
        // Without an alias the view's expressions name the table bare: keep that name.
        if alias.is_none() {
            *alias = Some(ast::TableAlias {
                explicit: true,
                name: quoted(&rtable),
                columns: vec![],
                at: None,
            });
        }
    }
    let check = match def.check_option.as_str() {
        "NONE" => None,
        _ => filter.clone(),
    };
    Ok(Target {
        relation,
        filter,
        columns,
        check,
    })
}

fn and(a: Option<ast::Expr>, b: Option<ast::Expr>) -> Option<ast::Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(ast::Expr::BinaryOp {
            left: Box::new(ast::Expr::Nested(Box::new(a))),
            op: ast::BinaryOperator::And,
            right: Box::new(ast::Expr::Nested(Box::new(b))),
        }),
        (a, b) => a.or(b),
    }
}

/// Replaces, in `e`, each reference to a view column (`c`, or `v.c` / `db.v.c` where `v` is
/// one of `names`) by that column's expression. Bare names inside subqueries are theirs and
/// stay.
fn subst(e: &mut ast::Expr, cols: &[(String, ast::Expr)], names: &[String]) {
    struct S<'a> {
        depth: usize,
        cols: &'a [(String, ast::Expr)],
        names: &'a [String],
    }
    impl S<'_> {
        fn col(&self, c: &ast::Ident) -> Option<ast::Expr> {
            self.cols
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&c.value))
                .map(|(_, e)| ast::Expr::Nested(Box::new(e.clone())))
        }
    }
    impl ast::VisitorMut for S<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth += 1;
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.depth -= 1;
            ControlFlow::Continue(())
        }
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
            let new = match e {
                ast::Expr::Identifier(c) if self.depth == 0 => self.col(c),
                ast::Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                    let v = &p[p.len() - 2];
                    if self.names.iter().any(|n| n.eq_ignore_ascii_case(&v.value)) {
                        self.col(&p[p.len() - 1])
                    } else {
                        None
                    }
                }
                _ => None,
            };
            if let Some(n) = new {
                *e = n;
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::VisitMut::visit(
        e,
        &mut S {
            depth: 0,
            cols,
            names,
        },
    );
}

/// The table column view column `c` of `t` stands for (a plain column reference), if any.
fn base_column(t: &Target, c: &str) -> Option<ast::Ident> {
    let mut e: &ast::Expr = &t.columns.iter().find(|(n, _)| n.eq_ignore_ascii_case(c))?.1;
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    match e {
        ast::Expr::Identifier(i) => Some(i.clone()),
        ast::Expr::CompoundIdentifier(p) => p.last().cloned(),
        _ => None,
    }
}

fn not_updatable_column(c: &str) -> SqlError {
    SqlError::new(1348, "HY000", format!("Column '{c}' is not updatable"))
}

/// The view an INSERT / UPDATE / DELETE target names, as (db, view, the name the statement
/// knows it by), if it names one.
fn view_named(
    cx: &PlanCx,
    f: &ast::TableFactor,
) -> Result<Option<(String, String, String)>, SqlError> {
    let ast::TableFactor::Table { name, alias, .. } = f else {
        return Ok(None);
    };
    view_name(cx, name, alias.as_ref().map(|a| a.name.value.clone()))
}

fn view_name(
    cx: &PlanCx,
    name: &ast::ObjectName,
    alias: Option<String>,
) -> Result<Option<(String, String, String)>, SqlError> {
    let Ok((db, v)) = cx.qualify(name) else {
        return Ok(None);
    };
    if cx.engine.table(&db, &v).is_ok() || cx.engine.view(&db, &v).is_none() {
        return Ok(None);
    }
    let known = alias.unwrap_or_else(|| v.clone());
    Ok(Some((db, v, known)))
}

/// INFORMATION_SCHEMA.VIEWS.IS_UPDATABLE: UPDATE / DELETE can write through view `db`.`v`.
pub fn is_updatable(engine: &Arc<Engine>, db: &str, v: &str) -> bool {
    let cx = PlanCx::new(engine, Some(db), &[]);
    target(&cx, db, v, "UPDATE", 0).is_ok()
}

/// A CHECK OPTION the rows an INSERT / UPDATE writes through a view must pass: the
/// condition over the table (known by `alias` in it) and the view's name for error 1369.
pub struct Check {
    pub condition: ast::Expr,
    pub alias: String,
    pub view: String,
}

/// An INSERT / UPDATE / DELETE whose target is an updatable view, rewritten onto the view's
/// table (the view's WHERE joins the statement's, view columns become their expressions),
/// with the CHECK OPTION its rows must pass; None when the target is not a view.
pub fn write_through(
    stmt: &ast::Statement,
    cx: &PlanCx,
) -> Result<Option<(ast::Statement, Option<Check>)>, SqlError> {
    let check = |t: &Target, db: &str, v: &str| {
        let alias = match &t.relation {
            ast::TableFactor::Table { alias: Some(a), .. } => a.name.value.clone(),
            _ => String::new(),
        };
        t.check.clone().map(|condition| Check {
            condition,
            alias,
            view: format!("`{db}`.`{v}`"),
        })
    };
    match stmt {
        ast::Statement::Insert(ins) => {
            let ast::TableObject::TableName(name) = &ins.table else {
                return Ok(None);
            };
            let Some((db, v, _)) = view_name(cx, name, None)? else {
                return Ok(None);
            };
            let t = target(cx, &db, &v, "INSERT", 0)?;
            if ins.on.is_some() || !ins.assignments.is_empty() {
                return Err(SqlError::unsupported(format!(
                    "INSERT ... ON DUPLICATE KEY UPDATE / SET through view '{db}.{v}'"
                )));
            }
            let wanted: Vec<String> = if ins.columns.is_empty() {
                t.columns.iter().map(|(n, _)| n.clone()).collect()
            } else {
                ins.columns
                    .iter()
                    .map(crate::compile::object_name_last)
                    .collect()
            };
            let mut columns = Vec::with_capacity(wanted.len());
            for c in &wanted {
                if !t.columns.iter().any(|(n, _)| n.eq_ignore_ascii_case(c)) {
                    return Err(SqlError::new(
                        1054,
                        "42S22",
                        format!("Unknown column '{c}' in 'INSERT INTO'"),
                    ));
                }
                match base_column(&t, c) {
                    Some(b) => columns.push(ast::ObjectName::from(vec![b])),
                    None => return Err(not_updatable(&v, "INSERT")),
                }
            }
            let ast::TableFactor::Table { name: base, .. } = &t.relation else {
                return Err(invalid(&db, &v));
            };
            let mut out = ins.clone();
            out.table = ast::TableObject::TableName(base.clone());
            out.table_alias = None;
            out.columns = columns;
            Ok(Some((ast::Statement::Insert(out), check(&t, &db, &v))))
        }
        ast::Statement::Update(u) => {
            if !u.table.joins.is_empty() || u.from.is_some() {
                return Ok(None);
            }
            let Some((db, v, known)) = view_named(cx, &u.table.relation)? else {
                return Ok(None);
            };
            let t = target(cx, &db, &v, "UPDATE", 0)?;
            let names = [known, v.clone()];
            let mut out = u.clone();
            out.table.relation = t.relation.clone();
            for a in &mut out.assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(SqlError::unsupported("tuple assignments"));
                };
                let c = crate::compile::object_name_last(n);
                if !t.columns.iter().any(|(x, _)| x.eq_ignore_ascii_case(&c)) {
                    return Err(SqlError::new(
                        1054,
                        "42S22",
                        format!("Unknown column '{c}' in 'SET'"),
                    ));
                }
                let b = base_column(&t, &c).ok_or_else(|| not_updatable_column(&c))?;
                a.target = ast::AssignmentTarget::ColumnName(ast::ObjectName::from(vec![b]));
                subst(&mut a.value, &t.columns, &names);
            }
            if let Some(w) = &mut out.selection {
                subst(w, &t.columns, &names);
            }
            let c = check(&t, &db, &v);
            out.selection = and(t.filter, out.selection);
            for o in &mut out.order_by {
                subst(&mut o.expr, &t.columns, &names);
            }
            Ok(Some((ast::Statement::Update(out), c)))
        }
        ast::Statement::Delete(d) => {
            let from = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
            };
            let ([twj], true, None) = (from.as_slice(), d.tables.is_empty(), &d.using) else {
                return Ok(None);
            };
            if !twj.joins.is_empty() {
                return Ok(None);
            }
            let Some((db, v, known)) = view_named(cx, &twj.relation)? else {
                return Ok(None);
            };
            let t = target(cx, &db, &v, "DELETE", 0)?;
            let names = [known, v.clone()];
            let mut out = d.clone();
            let mut twj = twj.clone();
            twj.relation = t.relation.clone();
            out.from = ast::FromTable::WithFromKeyword(vec![twj]);
            if let Some(w) = &mut out.selection {
                subst(w, &t.columns, &names);
            }
            out.selection = and(t.filter, out.selection);
            for o in &mut out.order_by {
                subst(&mut o.expr, &t.columns, &names);
            }
            Ok(Some((ast::Statement::Delete(out), None)))
        }
        _ => Ok(None),
    }
}
