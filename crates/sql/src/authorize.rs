//! What a statement needs from its account: the privileges on each table, database or the
//! server that MariaDB asks of the same statement (`crate::accounts::Need`).
//!
//! Two passes: `statement_needs` reads the statement as written, before it is planned (so a
//! view is checked as the view, not the tables behind it — views run with their definer's
//! rights, MariaDB's default `SQL SECURITY DEFINER` —, and a denied client learns nothing from
//! "table doesn't exist"); `utility_needs` reads a planned utility statement (DDL, SHOW, SET
//! GLOBAL, LOCK TABLES ...), whose names the planner has resolved. The `match` over `Utility`
//! has no catch-all, so a new statement kind must say what it needs.
//!
//! Must never: check anything for the superuser path (the caller skips both passes when the
//! account holds every global privilege), or count a WITH query's name (where it is in scope,
//! as the planner resolves it) or a session's TEMPORARY table as a table to check (MariaDB
//! checks neither).

use crate::accounts::{self as a, Need};
use crate::plan::{Plan, SetTarget, Utility};
use crate::temp::TempTables;
use sqlparser::ast::{self, Statement, Visit, Visitor};
use std::ops::ControlFlow;
use tierdb_engine::Engine;

/// Resolves names as the statement's session would.
pub struct Names<'a> {
    pub engine: &'a Engine,
    pub db: Option<&'a str>,
    pub temps: &'a TempTables,
}

/// The tables a part of a statement names: every relation but those that name a WITH
/// query in scope where they stand.
#[derive(Default)]
struct Relations {
    names: Vec<ast::ObjectName>,
    scopes: Vec<WithScope>,
}

/// One WITH clause being walked: its names, and which of them the part being walked sees,
/// as the planner resolves them (`PlanCx::cte`): a WITH query sees the ones before it (and,
/// under RECURSIVE, itself); the main query sees all.
struct WithScope {
    query: *const ast::Query,
    names: Vec<String>,
    bodies: Vec<*const ast::Query>,
    /// Per WITH query: RECURSIVE and its body names itself.
    recursive: Vec<bool>,
    visible: usize,
    /// The WITH query being walked, under RECURSIVE: it sees its own name.
    own: Option<usize>,
}

impl Relations {
    fn is_with_name(&self, n: &ast::ObjectName) -> bool {
        let [ast::ObjectNamePart::Identifier(id)] = n.0.as_slice() else {
            return false;
        };
        self.scopes.iter().any(|s| {
            s.names.iter().enumerate().any(|(i, w)| {
                (i < s.visible || s.own == Some(i)) && w.eq_ignore_ascii_case(&id.value)
            })
        })
    }
}

impl Visitor for Relations {
    type Break = ();
    fn pre_visit_relation(&mut self, relation: &ast::ObjectName) -> ControlFlow<()> {
        if !self.is_with_name(relation) {
            self.names.push(relation.clone());
        }
        ControlFlow::Continue(())
    }
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        let ptr = q as *const ast::Query;
        if let Some(s) = self.scopes.last_mut() {
            if let Some(i) = s.bodies.iter().position(|b| *b == ptr) {
                s.visible = i;
                s.own = s.recursive[i].then_some(i);
            }
        }
        if let Some(w) = &q.with {
            let names: Vec<String> = w
                .cte_tables
                .iter()
                .map(|c| c.alias.name.value.clone())
                .collect();
            // A WITH query is recursive only when its own body names it (the planner's test).
            let recursive = w
                .cte_tables
                .iter()
                .map(|c| {
                    w.recursive
                        && crate::plan::names_table(&c.query.body, &c.alias.name.value, false)
                })
                .collect();
            self.scopes.push(WithScope {
                query: ptr,
                bodies: w
                    .cte_tables
                    .iter()
                    .map(|c| c.query.as_ref() as *const ast::Query)
                    .collect(),
                visible: names.len(),
                own: None,
                names,
                recursive,
            });
        }
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        let ptr = q as *const ast::Query;
        if self.scopes.last().is_some_and(|s| s.query == ptr) {
            self.scopes.pop();
        }
        if let Some(s) = self.scopes.last_mut() {
            if s.bodies.contains(&ptr) {
                s.visible = s.names.len();
                s.own = None;
            }
        }
        ControlFlow::Continue(())
    }
}

fn relations<V: Visit>(node: &V, out: &mut Relations) {
    let _ = node.visit(out);
}

impl Names<'_> {
    /// (db, table) of a name as written; None for a name that needs no check (a WITH
    /// query's, a TEMPORARY table's, INFORMATION_SCHEMA's) or that the planner will refuse.
    fn resolve(&self, n: &ast::ObjectName) -> Option<(String, String)> {
        // `FROM DUAL` (unquoted) names no table — unless a table or view of that name
        // exists, which the planner reads where DUAL is not alone in FROM: then it is checked
        // wherever it stands (stricter than needed in `SELECT ... FROM DUAL` alone).
        if let [ast::ObjectNamePart::Identifier(id)] = n.0.as_slice() {
            if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("DUAL") {
                let db = self.db?;
                let exists = self.engine.table(db, &id.value).is_ok()
                    || self.engine.view(db, &id.value).is_some();
                if !exists {
                    return None;
                }
            }
        }
        let parts = crate::compile::object_name_parts(n).ok()?;
        let (db, t) = match parts.as_slice() {
            [t] => (self.db?.to_string(), t.clone()),
            [d, t] => (d.clone(), t.clone()),
            _ => return None,
        };
        if crate::infoschema::is_schema(&db) {
            return None;
        }
        if self
            .temps
            .key(&db, &t)
            .is_some_and(|k| self.engine.is_temporary_table(&db, k))
        {
            return None;
        }
        Some((db, t))
    }

    fn push(&self, out: &mut Vec<Need>, n: &ast::ObjectName, privs: u64) {
        if let Some((db, name)) = self.resolve(n) {
            out.push(Need::Table { db, name, privs });
        }
    }

    /// SELECT on every relation `r` names.
    fn reads(&self, out: &mut Vec<Need>, r: &Relations) {
        for n in &r.names {
            self.push(out, n, a::SELECT);
        }
    }
}

/// An expression reads a column.
fn reads_columns(e: &ast::Expr) -> bool {
    struct Cols(bool);
    impl Visitor for Cols {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> ControlFlow<()> {
            if matches!(
                e,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            ) {
                self.0 = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
    let mut c = Cols(false);
    let _ = e.visit(&mut c);
    c.0
}

/// The base name of a table factor and the name it goes by (its alias, else its last part).
fn factor_name(f: &ast::TableFactor) -> Option<(&ast::ObjectName, String)> {
    match f {
        ast::TableFactor::Table { name, alias, .. } => {
            let called = match alias {
                Some(al) => al.name.value.clone(),
                None => crate::compile::object_name_parts(name)
                    .ok()?
                    .last()?
                    .clone(),
            };
            Some((name, called))
        }
        _ => None,
    }
}

fn factors(tables: &[ast::TableWithJoins]) -> Vec<&ast::TableFactor> {
    tables
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)))
        .collect()
}

/// What a stored view's query `q` needs of whoever the view runs as: names resolve in the
/// view's database `db`, and no TEMPORARY table is seen (views never see them).
pub fn view_query_needs(engine: &Engine, db: &str, q: &ast::Query) -> Vec<Need> {
    let none = TempTables::default();
    let names = Names {
        engine,
        db: Some(db),
        temps: &none,
    };
    let mut out = Vec::new();
    let mut r = Relations::default();
    relations(q, &mut r);
    names.reads(&mut out, &r);
    out
}

/// What `stmt` needs before it is planned (DML and the queries inside DDL).
pub fn statement_needs(stmt: &Statement, names: &Names) -> Vec<Need> {
    let mut out = Vec::new();
    match stmt {
        Statement::Query(q) => {
            let mut r = Relations::default();
            relations(q.as_ref(), &mut r);
            names.reads(&mut out, &r);
        }
        Statement::Explain { statement, .. } => {
            // EXPLAIN shows what a view reads: SHOW VIEW on each view it names.
            let mut needs = statement_needs(statement, names);
            let mut r = Relations::default();
            relations(statement.as_ref(), &mut r);
            for n in &r.names {
                if let Some((db, t)) = names.resolve(n) {
                    if names.engine.view(&db, &t).is_some() {
                        needs.push(table(&db, &t, a::SHOW_VIEW));
                    }
                }
            }
            return needs;
        }
        Statement::Insert(ins) => {
            if let ast::TableObject::TableName(t) = &ins.table {
                let mut privs = a::INSERT;
                if ins.replace_into {
                    privs |= a::DELETE;
                }
                if matches!(ins.on, Some(ast::OnInsert::DuplicateKeyUpdate(_))) {
                    privs |= a::UPDATE;
                }
                names.push(&mut out, t, privs);
            }
            let mut r = Relations::default();
            if let Some(src) = &ins.source {
                relations(src.as_ref(), &mut r);
            }
            if let Some(on) = &ins.on {
                relations(on, &mut r);
            }
            names.reads(&mut out, &r);
        }
        Statement::Update(u) => {
            let mut all = vec![&u.table];
            let from: Vec<&ast::TableWithJoins> = match &u.from {
                Some(ast::UpdateTableFromKind::BeforeSet(f))
                | Some(ast::UpdateTableFromKind::AfterSet(f)) => f.iter().collect(),
                None => Vec::new(),
            };
            all.extend(from.iter().copied());
            let tables: Vec<&ast::TableFactor> = all
                .iter()
                .flat_map(|t| {
                    std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation))
                })
                .collect();
            let single = tables.len() == 1;
            // The tables whose columns are assigned.
            let mut targets: Vec<usize> = Vec::new();
            for asg in &u.assignments {
                let cols: Vec<&ast::ObjectName> = match &asg.target {
                    ast::AssignmentTarget::ColumnName(c) => vec![c],
                    ast::AssignmentTarget::Tuple(cs) => cs.iter().collect(),
                };
                for c in cols {
                    let parts = crate::compile::object_name_parts(c).unwrap_or_default();
                    for (i, f) in tables.iter().enumerate() {
                        let Some((name, called)) = factor_name(f) else {
                            continue;
                        };
                        let hit = match parts.as_slice() {
                            _ if single => true,
                            [q, _] => q.eq_ignore_ascii_case(&called),
                            [_, q, _] => q.eq_ignore_ascii_case(&called),
                            [col] => names.resolve(name).is_some_and(|(db, t)| {
                                names.engine.table(&db, &t).is_ok_and(|tab| {
                                    tab.def
                                        .columns
                                        .iter()
                                        .any(|c| c.name.eq_ignore_ascii_case(col))
                                })
                            }),
                            _ => false,
                        };
                        if hit && !targets.contains(&i) {
                            targets.push(i);
                        }
                    }
                }
            }
            let reads_target = !single
                || u.selection.is_some()
                || !u.order_by.is_empty()
                || u.assignments.iter().any(|asg| reads_columns(&asg.value));
            let exprs: Vec<&ast::Expr> = u
                .assignments
                .iter()
                .map(|asg| &asg.value)
                .chain(u.selection.as_ref())
                .collect();
            let joins = all.iter().flat_map(|t| t.joins.iter());
            write_needs(
                names,
                &mut out,
                &tables,
                |i, _| targets.contains(&i),
                a::UPDATE,
                reads_target,
                joins,
                &exprs,
            );
        }
        Statement::Delete(d) => {
            let from: Vec<ast::TableWithJoins> = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f.clone(),
            };
            // The rows come from the USING list when there is one (the FROM list then names
            // the targets among them, by alias), else from the FROM list.
            let (sources, target_names): (Vec<ast::TableWithJoins>, Vec<ast::ObjectName>) =
                match &d.using {
                    Some(u) => (
                        u.clone(),
                        factors(&from)
                            .iter()
                            .filter_map(|f| match f {
                                ast::TableFactor::Table { name, .. } => Some(name.clone()),
                                _ => None,
                            })
                            .collect(),
                    ),
                    None => (from.clone(), d.tables.clone()),
                };
            let tables = factors(&sources);
            let single = target_names.is_empty() && tables.len() == 1;
            let reads_target = !single || d.selection.is_some() || !d.order_by.is_empty();
            let is_target = |_: usize, called: &str| {
                single
                    || target_names.iter().any(|t| {
                        // `t`, `db.t` or `t.*`: the name the target goes by.
                        let parts: Vec<&str> =
                            t.0.iter()
                                .filter_map(|p| match p {
                                    ast::ObjectNamePart::Identifier(id) => Some(id.value.as_str()),
                                    _ => None,
                                })
                                .filter(|p| *p != "*")
                                .collect();
                        parts.last().is_some_and(|l| l.eq_ignore_ascii_case(called))
                    })
            };
            let exprs: Vec<&ast::Expr> = d.selection.iter().collect();
            let joins = sources.iter().flat_map(|t| t.joins.iter());
            write_needs(
                names,
                &mut out,
                &tables,
                is_target,
                a::DELETE,
                reads_target,
                joins,
                &exprs,
            );
        }
        Statement::CreateTable(ct) => {
            let mut r = Relations::default();
            if let Some(q) = &ct.query {
                relations(q.as_ref(), &mut r);
            }
            match &ct.like {
                Some(ast::CreateTableLikeKind::Parenthesized(l))
                | Some(ast::CreateTableLikeKind::Plain(l)) => r.names.push(l.name.clone()),
                None => {}
            }
            names.reads(&mut out, &r);
        }
        Statement::CreateView(v) => {
            let mut r = Relations::default();
            relations(v.query.as_ref(), &mut r);
            names.reads(&mut out, &r);
        }
        // Any other statement reads only through subqueries it holds (`SET @v = (SELECT
        // ...)`, `SHOW ... WHERE x IN (SELECT ...)`): SELECT on what they name.
        other => {
            let mut r = Relations::default();
            subquery_relations(other, &mut r);
            names.reads(&mut out, &r);
        }
    }
    out
}

/// The needs of an UPDATE's or DELETE's tables: `write` on each target (`is_target(position,
/// name it goes by)`), with SELECT too when `reads_target`; SELECT on the other tables; and
/// SELECT on what derived tables, join conditions and `exprs` read.
#[allow(clippy::too_many_arguments)]
fn write_needs<'t>(
    names: &Names,
    out: &mut Vec<Need>,
    tables: &[&ast::TableFactor],
    is_target: impl Fn(usize, &str) -> bool,
    write: u64,
    reads_target: bool,
    joins: impl Iterator<Item = &'t ast::Join>,
    exprs: &[&ast::Expr],
) {
    let mut r = Relations::default();
    for (i, f) in tables.iter().enumerate() {
        let Some((name, called)) = factor_name(f) else {
            relations(*f, &mut r);
            continue;
        };
        let target = is_target(i, &called);
        let mut privs = 0;
        if target {
            privs |= write;
        }
        if !target || reads_target {
            privs |= a::SELECT;
        }
        names.push(out, name, privs);
    }
    for e in exprs {
        relations(*e, &mut r);
    }
    for j in joins {
        relations(&j.join_operator, &mut r);
    }
    names.reads(out, &r);
}

/// The relations named inside the subqueries of `node` (not its own table names).
fn subquery_relations<V: Visit>(node: &V, out: &mut Relations) {
    struct Sub<'a>(&'a mut Relations);
    impl Visitor for Sub<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
            // (A nested query is collected again when the walk reaches it: harmless.)
            relations(q, self.0);
            ControlFlow::Continue(())
        }
    }
    let _ = node.visit(&mut Sub(out));
}

/// A TEMPORARY table's engine name (`docs/format.md`: a name no identifier can hold).
fn is_temp_key(name: &str) -> bool {
    name.starts_with('\0')
}

fn table(db: &str, name: &str, privs: u64) -> Need {
    Need::Table {
        db: db.to_string(),
        name: name.to_string(),
        privs,
    }
}

/// What a planned statement needs beyond `statement_needs` (utility statements; DML needs
/// nothing more).
pub fn plan_needs(plan: &Plan, engine: &Engine) -> Vec<Need> {
    match plan {
        Plan::Utility(u) => utility_needs(u, engine),
        // As MariaDB: INSERT (and DELETE for REPLACE) on the table, FILE for a server file.
        Plan::Load(p) => {
            let t = p.table();
            let mut needs = Vec::new();
            if !t.is_temporary() {
                let privs = match p.replaces() {
                    true => a::INSERT | a::DELETE,
                    false => a::INSERT,
                };
                needs.push(table(&t.db, &t.def.name, privs));
            }
            if !p.local {
                needs.push(Need::Global(a::FILE));
            }
            needs
        }
        Plan::Select(_)
        | Plan::Insert(_)
        | Plan::Update(_)
        | Plan::Delete(_)
        | Plan::Explain(_) => Vec::new(),
    }
}

/// REFERENCES on the parent of every foreign key in `def` that `old` does not have.
fn references(def: &tierdb_engine::TableDef, old: Option<&tierdb_engine::TableDef>) -> Vec<Need> {
    def.foreign_keys
        .iter()
        .filter(|fk| old.is_none_or(|o| !o.foreign_keys.iter().any(|x| x.name == fk.name)))
        .map(|fk| table(&fk.parent_db, &fk.parent_table, a::REFERENCES))
        .collect()
}

fn utility_needs(u: &Utility, engine: &Engine) -> Vec<Need> {
    let per_table = |tables: &[(String, String)], privs: u64| -> Vec<Need> {
        tables
            .iter()
            .filter(|(_, t)| !is_temp_key(t))
            .map(|(d, t)| table(d, t, privs))
            .collect()
    };
    match u {
        Utility::Begin { .. }
        | Utility::Commit
        | Utility::Rollback
        | Utility::Savepoint(_)
        | Utility::RollbackToSavepoint(_)
        | Utility::ReleaseSavepoint(_)
        | Utility::ShowVariables { .. }
        | Utility::ShowStatus { .. }
        | Utility::ShowWarnings { .. }
        | Utility::ShowErrors { .. }
        | Utility::ShowWarningCount { .. }
        | Utility::ShowEngines
        | Utility::ShowNone(_)
        | Utility::ShowCharset { .. }
        | Utility::ShowCollation { .. }
        | Utility::UnlockTables
        // Filtered to what the account may see (`crate::session`).
        | Utility::ShowDatabases(_)
        | Utility::ShowProcessList { .. }
        // Its query was checked as written.
        | Utility::SelectInto { .. } => Vec::new(),
        // Its query was checked as written; the file needs FILE.
        Utility::SelectIntoFile { .. } => vec![Need::Global(a::FILE)],
        Utility::Use(db) => vec![Need::AnyInDb(db.clone())],
        Utility::Set(items) => {
            let global = items.iter().any(|it| match &it.target {
                SetTarget::System { global, .. } => *global == Some(true),
                SetTarget::Isolation { scope, .. } => {
                    *scope == crate::plan::IsolationScope::Global
                }
                SetTarget::User(_) | SetTarget::Names { .. } => false,
            });
            if global {
                vec![Need::Global(a::SUPER)]
            } else {
                Vec::new()
            }
        }
        Utility::ShowTables { db, .. } | Utility::ShowTableStatus { db, .. } => match db {
            Some(d) => vec![Need::AnyInDb(d.clone())],
            None => Vec::new(),
        },
        Utility::ShowColumns { db, table: t, .. }
        | Utility::ShowIndex { db, table: t }
        | Utility::ShowCreateTable { db, table: t } => {
            if is_temp_key(t) {
                Vec::new()
            } else {
                let mut v = vec![Need::AnyOnTable {
                    db: db.clone(),
                    name: t.clone(),
                }];
                // A view's definition is shown only with SHOW VIEW (as SHOW CREATE VIEW).
                if matches!(u, Utility::ShowCreateTable { .. }) && engine.view(db, t).is_some() {
                    v.push(table(db, t, a::SHOW_VIEW));
                }
                v
            }
        }
        Utility::ShowCreateView { db, view } => vec![table(db, view, a::SELECT | a::SHOW_VIEW)],
        Utility::ShowCreateDatabase { name, .. } => vec![Need::AnyInDb(name.clone())],
        Utility::CreateDatabase { name, .. } => vec![Need::Db {
            db: name.clone(),
            privs: a::CREATE,
        }],
        Utility::DropDatabase { name, .. } => vec![Need::Db {
            db: name.clone(),
            privs: a::DROP,
        }],
        Utility::CreateTable {
            db, def, temporary, ..
        }
        | Utility::CreateTableAs {
            db, def, temporary, ..
        } => {
            let mut v = if *temporary {
                vec![Need::Db {
                    db: db.clone(),
                    privs: a::CREATE_TMP_TABLE,
                }]
            } else {
                vec![table(db, &def.name, a::CREATE)]
            };
            v.extend(references(def, None));
            v
        }
        Utility::DropTable {
            tables, temporary, ..
        } => {
            if *temporary {
                Vec::new()
            } else {
                per_table(tables, a::DROP)
            }
        }
        Utility::CreateIndex { db, table: t, .. } | Utility::DropIndex { db, table: t, .. } => {
            per_table(&[(db.clone(), t.clone())], a::INDEX)
        }
        Utility::Truncate { db, table: t } => per_table(&[(db.clone(), t.clone())], a::DROP),
        Utility::AddColumn { db, table: t, .. }
        | Utility::AlterColumn { db, table: t, .. }
        | Utility::SetChecks { db, table: t, .. }
        | Utility::RebuildTable { db, table: t, .. }
        | Utility::AlterNoop { db, table: t } => {
            let one = [(db.clone(), t.clone())];
            let mut v = per_table(&one, a::ALTER);
            v.extend(per_table(&one, a::INSERT | a::CREATE));
            if let Utility::RebuildTable { rebuild, .. } = u {
                v.extend(references(&rebuild.def, Some(&rebuild.from)));
            }
            v
        }
        Utility::RenameTables { pairs, .. } => {
            let mut v = Vec::new();
            for (d, from, to_db, to) in pairs {
                v.extend(per_table(&[(d.clone(), from.clone())], a::ALTER | a::DROP));
                v.extend(per_table(&[(to_db.clone(), to.clone())], a::CREATE | a::INSERT));
            }
            v
        }
        Utility::CreateView {
            db, def, replace, ..
        } => {
            let mut privs = a::CREATE_VIEW;
            if *replace {
                privs |= a::DROP;
            }
            vec![table(db, &def.name, privs)]
        }
        Utility::DropView { views, .. } => per_table(views, a::DROP),
        Utility::LockTables { tables } => {
            let mut v: Vec<Need> = Vec::new();
            for (d, t, _) in tables {
                if is_temp_key(t) {
                    continue;
                }
                let lock = Need::Db {
                    db: d.clone(),
                    privs: a::LOCK_TABLES,
                };
                if !v.contains(&lock) {
                    v.push(lock);
                }
                v.push(table(d, t, a::SELECT));
            }
            v
        }
        Utility::Analyze { tables } => per_table(tables, a::SELECT | a::INSERT),
        Utility::Optimize { tables } | Utility::Check { tables } | Utility::Repair { tables } => {
            let pairs: Vec<(String, String)> = tables
                .iter()
                .map(|(d, key, _)| (d.clone(), key.clone()))
                .collect();
            per_table(&pairs, a::SELECT | a::INSERT)
        }
        Utility::Flush | Utility::FlushReadLock => vec![Need::Global(a::RELOAD)],
        Utility::Noted { then, .. } => utility_needs(then, engine),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (db.table, privileges) of what `sql` needs, names resolving in `app`.
    fn needs(sql: &str) -> Vec<(String, u64)> {
        let dir = tempfile::tempdir().unwrap();
        let engine = Engine::open(tierdb_engine::EngineConfig::under(dir.path())).unwrap();
        let temps = TempTables::default();
        let names = Names {
            engine: &engine,
            db: Some("app"),
            temps: &temps,
        };
        let stmt = crate::parse::parse(sql).unwrap().stmt;
        let mut out: Vec<(String, u64)> = statement_needs(&stmt, &names)
            .into_iter()
            .map(|n| match n {
                Need::Table { db, name, privs } => (format!("{db}.{name}"), privs),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn sel(t: &str) -> (String, u64) {
        (t.to_string(), a::SELECT)
    }

    #[test]
    fn a_with_name_is_a_table_only_where_it_is_out_of_scope() {
        // In scope: not a table.
        assert_eq!(needs("WITH s AS (SELECT 1 AS id) SELECT * FROM s"), vec![]);
        // The same name outside the subquery that defines it is the table.
        assert_eq!(
            needs("SELECT * FROM s WHERE id IN (WITH s AS (SELECT 1 AS id) SELECT id FROM s)"),
            vec![sel("app.s")]
        );
        // A non-recursive WITH query sees only the ones before it.
        assert_eq!(
            needs("WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a, b"),
            vec![sel("app.b")]
        );
        assert_eq!(
            needs("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"),
            vec![]
        );
        // Under RECURSIVE a WITH query sees itself and the ones before it, not later ones.
        assert_eq!(
            needs("WITH RECURSIVE a AS (SELECT * FROM s), s AS (SELECT 1 AS id) SELECT * FROM a"),
            vec![sel("app.s")]
        );
        // A self-reference inside a nested WITH does not make the outer query recursive (the
        // planner reads the table there).
        assert_eq!(
            needs(
                "WITH RECURSIVE s AS (WITH z AS (SELECT * FROM s) SELECT * FROM z) SELECT * FROM s"
            ),
            vec![sel("app.s")]
        );
        // A qualified name is always a table.
        assert_eq!(
            needs("WITH s AS (SELECT 1) SELECT * FROM hr.s"),
            vec![sel("hr.s")]
        );
    }

    #[test]
    fn writes_need_their_privilege_and_reads_select() {
        assert_eq!(
            needs("INSERT INTO t VALUES (1)"),
            vec![("app.t".into(), a::INSERT)]
        );
        assert_eq!(
            needs("REPLACE INTO t VALUES (1)"),
            vec![("app.t".into(), a::INSERT | a::DELETE)]
        );
        assert_eq!(
            needs("INSERT INTO t SELECT * FROM hr.s"),
            vec![("app.t".into(), a::INSERT), sel("hr.s")]
        );
        assert_eq!(
            needs("UPDATE t SET v = 1"),
            vec![("app.t".into(), a::UPDATE)]
        );
        assert_eq!(
            needs("UPDATE t SET v = v + 1"),
            vec![("app.t".into(), a::UPDATE | a::SELECT)]
        );
        assert_eq!(
            needs("UPDATE t JOIN u ON u.id = t.id SET t.v = u.v"),
            vec![("app.t".into(), a::UPDATE | a::SELECT), sel("app.u")]
        );
        assert_eq!(needs("DELETE FROM t"), vec![("app.t".into(), a::DELETE)]);
        assert_eq!(
            needs("DELETE x FROM t AS x JOIN u ON u.id = x.id"),
            vec![("app.t".into(), a::DELETE | a::SELECT), sel("app.u")]
        );
        assert_eq!(
            needs("DELETE FROM t USING t, u WHERE t.id = u.id"),
            vec![("app.t".into(), a::DELETE | a::SELECT), sel("app.u")]
        );
        // The FROM list names the targets by their USING alias.
        assert_eq!(
            needs("DELETE FROM x USING hr.s AS x, u WHERE x.id = u.id"),
            vec![sel("app.u"), ("hr.s".into(), a::DELETE | a::SELECT)]
        );
        assert_eq!(
            needs("DELETE FROM s.* USING hr.s"),
            vec![("hr.s".into(), a::DELETE | a::SELECT)]
        );
        assert_eq!(needs("SELECT * FROM `dual`"), vec![sel("app.dual")]);
        assert_eq!(needs("SELECT 1 FROM DUAL"), vec![]);
        // Statements that read only through subqueries.
        assert_eq!(
            needs("SET @v = (SELECT MAX(pay) FROM hr.s)"),
            vec![sel("hr.s")]
        );
        assert_eq!(
            needs("SELECT 1 FROM DUAL WHERE EXISTS (SELECT 1 FROM hr.s)"),
            vec![sel("hr.s")]
        );
    }
}
