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
//! Writes through a view (`write_through`) are rewritten onto the view's table before they
//! are planned, so the executor only ever writes tables.
//!
//! Must never: store a query it did not plan successfully, or rewrite a write through a view
//! whose names it cannot resolve unambiguously (subqueries, names the view does not show).

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
    if !cv.cluster_by.is_empty() || cv.comment.is_some() || cv.with_no_schema_binding {
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
    if !cx.placeholders.is_empty() || has_variable(&cv.query) {
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
    if let Some(t) = cx.hidden_temp.take() {
        return Err(SqlError::new(
            1352,
            "HY000",
            format!("View's SELECT refers to a temporary table '{t}'"),
        ));
    }
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
        if n.is_empty() || n.ends_with(' ') {
            return Err(SqlError::new(
                1166,
                "42000",
                format!("Incorrect column name '{n}'"),
            ));
        }
        if names[..i].iter().any(|o| o.eq_ignore_ascii_case(n)) {
            return Err(SqlError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{n}'"),
            ));
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
                // `DEFINER = u@h` unquoted reads as one name; CURRENT_USER and the like are
                // the session's account.
                ast::GranteeName::ObjectName(n) => {
                    let text = n.to_string();
                    let (u, h) = text.rsplit_once('@')?;
                    let unquote = |x: &str| x.trim_matches(['`', '\'', '"']).to_string();
                    Some(format!("{}@{}", unquote(u), unquote(h)))
                }
            }),
            p.security.as_ref().map(|s| s.to_string()),
        ),
    };
    if check_option != "NONE" && writable_select(&q, algorithm.as_deref().unwrap_or("")).is_none() {
        return Err(SqlError::new(
            1368,
            "HY000",
            format!("CHECK OPTION on non-updatable view `{db}`.`{name}`"),
        ));
    }
    name_items(&mut q.body, &names);
    if session_db.as_deref() != Some(db.as_str()) {
        if let Some(home) = &session_db {
            qualify_tables(&mut q, home);
        }
    }
    Ok(Utility::CreateView {
        db,
        def: ViewDef {
            name,
            query: q.to_string(),
            // Empty when not given: the session keeps an altered view's, else UNDEFINED.
            algorithm: algorithm.unwrap_or_default(),
            // Filled in by the session when empty.
            definer: definer.unwrap_or_default(),
            security: security.unwrap_or_else(|| "DEFINER".into()),
            check_option,
            charset_client: String::new(),
            collation_connection: String::new(),
        },
        replace: cv.or_replace,
        alter: cv.or_alter,
        if_not_exists: cv.if_not_exists,
    })
}

/// `q` names a user or system variable (`@x`, `@@x`): a view cannot (1351).
fn has_variable(q: &ast::Query) -> bool {
    struct V;
    impl ast::Visitor for V {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            match e {
                ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.starts_with('@') => {
                    ControlFlow::Break(())
                }
                ast::Expr::CompoundIdentifier(p)
                    if p.first()
                        .is_some_and(|i| i.quote_style.is_none() && i.value.starts_with('@')) =>
                {
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            }
        }
    }
    ast::Visit::visit(q, &mut V).is_break()
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
    // The WITH names in scope: each query's own while it (and what it holds) is visited.
    struct Q<'a> {
        db: &'a str,
        scopes: Vec<Vec<String>>,
    }
    impl ast::VisitorMut for Q<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &mut ast::Query) -> ControlFlow<()> {
            let names = q.with.as_ref().map_or_else(Vec::new, |w| {
                w.cte_tables
                    .iter()
                    .map(|c| c.alias.name.value.clone())
                    .collect()
            });
            self.scopes.push(names);
            ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &mut ast::Query) -> ControlFlow<()> {
            self.scopes.pop();
            ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, name: &mut ast::ObjectName) -> ControlFlow<()> {
            if let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() {
                let cte = self
                    .scopes
                    .iter()
                    .flatten()
                    .any(|c| c.eq_ignore_ascii_case(&id.value));
                if !cte {
                    name.0
                        .insert(0, ast::ObjectNamePart::Identifier(quoted(self.db)));
                }
            }
            ControlFlow::Continue(())
        }
    }
    let _ = ast::VisitMut::visit(
        q,
        &mut Q {
            db,
            scopes: Vec::new(),
        },
    );
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
        checks: Vec::new(),
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
    let q = crate::ddl::quote_ident;
    let definer = match v.definer.rsplit_once('@') {
        Some((u, h)) => format!("{}@{}", q(u), q(h)),
        None => q(&v.definer),
    };
    let check = match v.check_option.as_str() {
        "NONE" => String::new(),
        other => format!(" WITH {other} CHECK OPTION"),
    };
    format!(
        "CREATE ALGORITHM={} DEFINER={definer} SQL SECURITY {} VIEW {} AS {}{check}",
        v.algorithm,
        v.security,
        q(&v.name),
        v.query
    )
}

/// A view an INSERT / UPDATE / DELETE writes through, as a statement on its table sees it.
struct Target {
    /// The table written.
    table: Arc<tierdb_engine::Table>,
    /// The view's FROM item: its base table, named with its database (and the view's alias
    /// for it, if it had one), so the column expressions below still resolve.
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
const MAX_VIEW_DEPTH: usize = 64;

fn not_updatable(v: &str, what: &str) -> SqlError {
    let what = if what == "REPLACE" { "INSERT" } else { what };
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

/// `e` holds a subquery.
fn has_subquery(e: &ast::Expr) -> bool {
    struct Q;
    impl ast::Visitor for Q {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }
    ast::Visit::visit(e, &mut Q).is_break()
}

/// The one SELECT of a query a view can be written through, with the table it reads:
/// one table or view in FROM, no DISTINCT, GROUP BY, HAVING, aggregates, window functions,
/// LIMIT, UNION, WITH or subqueries (in the select list or WHERE), not ALGORITHM=TEMPTABLE.
fn writable_select<'q>(q: &'q ast::Query, algorithm: &str) -> Option<&'q ast::Select> {
    let s = match (&*q.body, &q.with, &q.limit_clause) {
        (ast::SetExpr::Select(s), None, None) if algorithm != "TEMPTABLE" => s,
        _ => return None,
    };
    let grouped =
        !matches!(&s.group_by, ast::GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty());
    let items_ok = s.projection.iter().all(|it| match it {
        ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => {
            !crate::compile::contains_aggregate(e, 0)
                && !crate::compile::contains_window(e)
                && !has_subquery(e)
        }
        _ => false,
    });
    let one_table = matches!(s.from.as_slice(), [twj] if twj.joins.is_empty()
        && matches!(twj.relation, ast::TableFactor::Table { args: None, .. }));
    let where_ok = s.selection.as_ref().is_none_or(|w| !has_subquery(w));
    (one_table && items_ok && where_ok && s.distinct.is_none() && !grouped && s.having.is_none())
        .then_some(s)
}

/// `db`.`name` (a view) as a `Target` for `what` (INSERT, UPDATE or DELETE): a view whose
/// query `writable_select` takes, over a table or such a view (1288 / 1471 otherwise).
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
    let Some(s) = writable_select(&q, &def.algorithm) else {
        return Err(not_updatable(name, what));
    };
    let twj = &s.from[0];
    let ast::TableFactor::Table {
        name: rel_name,
        alias: rel_alias,
        ..
    } = &twj.relation
    else {
        return Err(not_updatable(name, what));
    };
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
    let parts = object_name_parts(rel_name)?;
    let (rdb, rtable) = match parts.as_slice() {
        [t] => (db.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(invalid(db, name)),
    };
    // The view's definer (or, for SQL SECURITY INVOKER, the session) writes its table: it
    // must hold `what` there, and SELECT on what the view's query reads.
    let runs_as = cx.view_rights(db, name, &def, || {
        let mut needs = crate::authorize::view_query_needs(cx.engine, db, &q);
        let privs = match what {
            "INSERT" => crate::accounts::INSERT,
            "REPLACE" => crate::accounts::INSERT | crate::accounts::DELETE,
            "UPDATE" => crate::accounts::UPDATE,
            _ => crate::accounts::DELETE,
        };
        needs.push(crate::accounts::Need::Table {
            db: rdb.clone(),
            name: rtable.clone(),
            privs,
        });
        needs
    })?;
    let mut filter = s.selection.clone();
    if cx.engine.view(&rdb, &rtable).is_some() {
        // A view over a view: its expressions name the inner view's columns; put those in.
        cx.run_as.borrow_mut().push(runs_as);
        let inner = target(cx, &rdb, &rtable, what, depth + 1);
        cx.run_as.borrow_mut().pop();
        let inner = inner?;
        let known = ViewRef {
            db: rdb.clone(),
            name: rtable.clone(),
            alias: rel_alias.as_ref().map(|a| a.name.value.clone()),
        };
        let bad = |_| invalid(db, name);
        for (_, e) in &mut columns {
            subst(e, &inner.columns, &known, "SELECT").map_err(bad)?;
        }
        if let Some(f) = &mut filter {
            subst(f, &inner.columns, &known, "WHERE").map_err(bad)?;
        }
        // As MariaDB: LOCAL checks the view's own WHERE, CASCADED also the views' under it,
        // and a view without a CHECK OPTION checks nothing (not even views under it).
        let check = match def.check_option.as_str() {
            "NONE" => None,
            "LOCAL" => filter.clone(),
            _ => and(inner.filter.clone(), filter.clone()),
        };
        return Ok(Target {
            table: inner.table,
            relation: inner.relation,
            filter: and(inner.filter, filter),
            columns,
            check,
        });
    }
    let Ok(table) = cx.engine.table(&rdb, &rtable) else {
        return Err(invalid(db, name));
    };
    let mut relation = twj.relation.clone();
    if let ast::TableFactor::Table { name: n, .. } = &mut relation {
        *n = ast::ObjectName::from(vec![quoted(&rdb), quoted(&rtable)]);
    }
    let check = match def.check_option.as_str() {
        "NONE" => None,
        _ => filter.clone(),
    };
    Ok(Target {
        table,
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

/// How a statement names the view it writes (or a view names the view it reads).
struct ViewRef {
    db: String,
    name: String,
    alias: Option<String>,
}

impl ViewRef {
    /// `q` (the qualifier of a column reference) names this view: its alias if it has one,
    /// else `v` or `db.v`.
    fn is(&self, q: &[ast::Ident]) -> bool {
        match (&self.alias, q) {
            (Some(a), [x]) => x.value.eq_ignore_ascii_case(a),
            (Some(_), _) => false,
            (None, [x]) => x.value == self.name,
            (None, [d, x]) => d.value == self.db && x.value == self.name,
            _ => false,
        }
    }
}

/// Replaces, in `e`, each reference to a view column (`c`, or `v.c` / `db.v.c`) by that
/// column's expression. Anything else is 1054 naming `clause`, as the view shows nothing else
/// (`DEFAULT` stays); a subquery is refused (its names could be the view's or its own).
fn subst(
    e: &mut ast::Expr,
    cols: &[(String, ast::Expr)],
    view: &ViewRef,
    clause: &str,
) -> Result<(), SqlError> {
    if has_subquery(e) {
        return Err(SqlError::unsupported(
            "a subquery in a statement that writes through a view",
        ));
    }
    struct S<'a> {
        cols: &'a [(String, ast::Expr)],
        view: &'a ViewRef,
        clause: &'a str,
    }
    impl S<'_> {
        fn col(&self, c: &ast::Ident, shown: String) -> Result<ast::Expr, SqlError> {
            self.cols
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(&c.value))
                .map(|(_, e)| ast::Expr::Nested(Box::new(e.clone())))
                .ok_or_else(|| {
                    SqlError::new(
                        1054,
                        "42S22",
                        format!("Unknown column '{shown}' in '{}'", self.clause),
                    )
                })
        }
    }
    impl ast::VisitorMut for S<'_> {
        type Break = SqlError;
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<SqlError> {
            let new = match e {
                ast::Expr::Identifier(c)
                    if c.quote_style.is_none() && c.value.eq_ignore_ascii_case("DEFAULT") =>
                {
                    return ControlFlow::Continue(())
                }
                ast::Expr::Identifier(c) => self.col(c, c.value.clone()),
                ast::Expr::CompoundIdentifier(p) => {
                    let shown = p
                        .iter()
                        .map(|i| i.value.as_str())
                        .collect::<Vec<_>>()
                        .join(".");
                    match p.split_last() {
                        Some((c, q)) if self.view.is(q) => self.col(c, shown),
                        _ => Err(SqlError::new(
                            1054,
                            "42S22",
                            format!("Unknown column '{shown}' in '{}'", self.clause),
                        )),
                    }
                }
                _ => return ControlFlow::Continue(()),
            };
            match new {
                Ok(n) => {
                    *e = n;
                    ControlFlow::Continue(())
                }
                Err(err) => ControlFlow::Break(err),
            }
        }
    }
    match ast::VisitMut::visit(e, &mut S { cols, view, clause }) {
        ControlFlow::Break(err) => Err(err),
        ControlFlow::Continue(()) => Ok(()),
    }
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

/// The table column an INSERT / UPDATE writes for view column `c` (1054 when the view has
/// no such column, `not_plain` when it is not a plain column reference).
fn written_column(
    t: &Target,
    c: &str,
    clause: &str,
    not_plain: impl FnOnce() -> SqlError,
) -> Result<ast::Ident, SqlError> {
    if !t.columns.iter().any(|(n, _)| n.eq_ignore_ascii_case(c)) {
        return Err(SqlError::new(
            1054,
            "42S22",
            format!("Unknown column '{c}' in '{clause}'"),
        ));
    }
    base_column(t, c).ok_or_else(not_plain)
}

fn not_updatable_column(c: &str) -> SqlError {
    SqlError::new(1348, "HY000", format!("Column '{c}' is not updatable"))
}

/// The view `name` names (as the target of a write), if it names one: how the statement
/// knows it. A view that no longer plans is 1356 here, before anything is written.
fn view_named(
    cx: &PlanCx,
    name: &ast::ObjectName,
    alias: Option<String>,
) -> Result<Option<ViewRef>, SqlError> {
    if !cx.is_view(name) {
        return Ok(None);
    }
    let (db, v) = cx.qualify(name)?;
    let n = cx.subqueries.borrow().len();
    let planned = cx.view(name);
    cx.subqueries.borrow_mut().truncate(n);
    planned?;
    Ok(Some(ViewRef { db, name: v, alias }))
}

/// INFORMATION_SCHEMA.VIEWS.IS_UPDATABLE: UPDATE / DELETE can write through view `db`.`v`.
pub fn is_updatable(engine: &Arc<Engine>, db: &str, v: &str) -> bool {
    let cx = PlanCx::new(engine, Some(db), &[]);
    target(&cx, db, v, "UPDATE", 0).is_ok()
}

/// A CHECK OPTION the rows an INSERT / UPDATE writes through a view must pass: the
/// condition over the table (known by `alias`, if the view gave it one) and the view's name
/// for error 1369.
pub struct Check {
    pub condition: ast::Expr,
    pub alias: Option<String>,
    pub view: String,
}

/// An INSERT / UPDATE / DELETE whose target is an updatable view, rewritten onto the view's
/// table (the view's WHERE joins the statement's, view columns become their expressions),
/// with the CHECK OPTION its rows must pass; None when the target is not a view.
pub fn write_through(
    stmt: &ast::Statement,
    cx: &PlanCx,
) -> Result<Option<(ast::Statement, Option<Check>)>, SqlError> {
    let check = |t: &Target, v: &ViewRef| {
        let alias = match &t.relation {
            ast::TableFactor::Table { alias: Some(a), .. } => Some(a.name.value.clone()),
            _ => None,
        };
        t.check.clone().map(|condition| Check {
            condition,
            alias,
            view: format!("`{}`.`{}`", v.db, v.name),
        })
    };
    match stmt {
        ast::Statement::Insert(ins) => {
            let ast::TableObject::TableName(name) = &ins.table else {
                return Ok(None);
            };
            let Some(v) = view_named(cx, name, None)? else {
                return Ok(None);
            };
            let what = if ins.replace_into {
                "REPLACE"
            } else {
                "INSERT"
            };
            let t = target(cx, &v.db, &v.name, what, 0)?;
            if ins.on.is_some() {
                return Err(SqlError::unsupported(format!(
                    "INSERT ... ON DUPLICATE KEY UPDATE through view '{}.{}'",
                    v.db, v.name
                )));
            }
            let not_insertable = || not_updatable(&v.name, "INSERT");
            let mut out = ins.clone();
            out.table = ast::TableObject::TableName(ast::ObjectName::from(vec![
                quoted(&t.table.db),
                quoted(&t.table.def.name),
            ]));
            out.table_alias = None;
            let mut written: Vec<String> = Vec::new();
            let mut note = |b: &ast::Ident| -> Result<(), SqlError> {
                // A table column twice (two view columns over it): MariaDB's 1471.
                if written.iter().any(|w| w.eq_ignore_ascii_case(&b.value)) {
                    return Err(not_insertable());
                }
                written.push(b.value.clone());
                Ok(())
            };
            if !ins.assignments.is_empty() {
                // INSERT INTO v SET c = ..., ...
                for a in &mut out.assignments {
                    let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                        return Err(SqlError::unsupported("tuple assignments"));
                    };
                    let c = crate::compile::object_name_last(n);
                    let b = written_column(&t, &c, "SET", not_insertable)?;
                    note(&b)?;
                    a.target = ast::AssignmentTarget::ColumnName(ast::ObjectName::from(vec![b]));
                }
            } else {
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
                    let b = written_column(&t, c, "INSERT INTO", not_insertable)?;
                    note(&b)?;
                    columns.push(ast::ObjectName::from(vec![b]));
                }
                out.columns = columns;
            }
            // A table column the view does not show must have a default (MariaDB's 1423).
            if t.table.def.columns.iter().any(|c| {
                crate::ddl::column_default(c).is_none()
                    && !written.iter().any(|w| w.eq_ignore_ascii_case(&c.name))
            }) {
                return Err(SqlError::new(
                    1423,
                    "HY000",
                    format!(
                        "Field of view '{}.{}' underlying table doesn't have a default value",
                        v.db, v.name
                    ),
                ));
            }
            Ok(Some((ast::Statement::Insert(out), check(&t, &v))))
        }
        ast::Statement::Update(u) => {
            if !u.table.joins.is_empty() || u.from.is_some() {
                return Ok(None);
            }
            let ast::TableFactor::Table { name, alias, .. } = &u.table.relation else {
                return Ok(None);
            };
            let Some(v) = view_named(cx, name, alias.as_ref().map(|a| a.name.value.clone()))?
            else {
                return Ok(None);
            };
            let t = target(cx, &v.db, &v.name, "UPDATE", 0)?;
            let mut out = u.clone();
            out.table.relation = t.relation.clone();
            for a in &mut out.assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(SqlError::unsupported("tuple assignments"));
                };
                let c = crate::compile::object_name_last(n);
                let b = written_column(&t, &c, "SET", || not_updatable_column(&c))?;
                a.target = ast::AssignmentTarget::ColumnName(ast::ObjectName::from(vec![b]));
                subst(&mut a.value, &t.columns, &v, "SET")?;
            }
            if let Some(w) = &mut out.selection {
                subst(w, &t.columns, &v, "FROM")?;
            }
            for o in &mut out.order_by {
                subst(&mut o.expr, &t.columns, &v, "ORDER BY")?;
            }
            let c = check(&t, &v);
            out.selection = and(t.filter, out.selection);
            Ok(Some((ast::Statement::Update(out), c)))
        }
        ast::Statement::Delete(d) => {
            let from = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
            };
            let ([twj], true, None) = (from.as_slice(), d.tables.is_empty(), &d.using) else {
                return Ok(None);
            };
            let ast::TableFactor::Table { name, alias, .. } = &twj.relation else {
                return Ok(None);
            };
            if !twj.joins.is_empty() {
                return Ok(None);
            }
            let Some(v) = view_named(cx, name, alias.as_ref().map(|a| a.name.value.clone()))?
            else {
                return Ok(None);
            };
            let t = target(cx, &v.db, &v.name, "DELETE", 0)?;
            let mut out = d.clone();
            let mut twj = twj.clone();
            twj.relation = t.relation.clone();
            out.from = ast::FromTable::WithFromKeyword(vec![twj]);
            if let Some(w) = &mut out.selection {
                subst(w, &t.columns, &v, "FROM")?;
            }
            for o in &mut out.order_by {
                subst(&mut o.expr, &t.columns, &v, "ORDER BY")?;
            }
            out.selection = and(t.filter, out.selection);
            Ok(Some((ast::Statement::Delete(out), None)))
        }
        _ => Ok(None),
    }
}
