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
//! account holds every global privilege), or count a WITH query's name or a session's
//! TEMPORARY table as a table to check (MariaDB checks neither).

use crate::accounts::{self as a, Need};
use crate::plan::{Plan, SetTarget, Utility};
use crate::temp::TempTables;
use sqlparser::ast::{self, Statement, Visit, Visitor};
use std::collections::HashSet;
use std::ops::ControlFlow;
use tierdb_engine::Engine;

/// Resolves names as the statement's session would.
pub struct Names<'a> {
    pub engine: &'a Engine,
    pub db: Option<&'a str>,
    pub temps: &'a TempTables,
}

/// The relations a part of a statement names, and the WITH names it defines.
#[derive(Default)]
struct Relations {
    names: Vec<ast::ObjectName>,
    ctes: HashSet<String>,
}

impl Visitor for Relations {
    type Break = ();
    fn pre_visit_relation(&mut self, relation: &ast::ObjectName) -> ControlFlow<()> {
        self.names.push(relation.clone());
        ControlFlow::Continue(())
    }
    fn pre_visit_query(&mut self, q: &ast::Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            for c in &w.cte_tables {
                self.ctes.insert(c.alias.name.value.to_ascii_lowercase());
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
    fn resolve(&self, n: &ast::ObjectName, ctes: &HashSet<String>) -> Option<(String, String)> {
        let parts = crate::compile::object_name_parts(n).ok()?;
        let (db, t) = match parts.as_slice() {
            [t] => {
                if ctes.contains(&t.to_ascii_lowercase()) {
                    return None;
                }
                (self.db?.to_string(), t.clone())
            }
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

    fn push(&self, out: &mut Vec<Need>, n: &ast::ObjectName, ctes: &HashSet<String>, privs: u64) {
        if let Some((db, name)) = self.resolve(n, ctes) {
            out.push(Need::Table { db, name, privs });
        }
    }

    /// SELECT on every relation `r` names.
    fn reads(&self, out: &mut Vec<Need>, r: &Relations, ctes: &HashSet<String>) {
        for n in &r.names {
            self.push(out, n, ctes, a::SELECT);
        }
    }
}

/// The WITH names defined anywhere in `stmt`.
fn all_ctes(stmt: &Statement) -> HashSet<String> {
    let mut r = Relations::default();
    relations(stmt, &mut r);
    r.ctes
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

/// What `stmt` needs before it is planned (DML and the queries inside DDL).
pub fn statement_needs(stmt: &Statement, names: &Names) -> Vec<Need> {
    let ctes = all_ctes(stmt);
    let mut out = Vec::new();
    match stmt {
        Statement::Query(q) => {
            let mut r = Relations::default();
            relations(q.as_ref(), &mut r);
            names.reads(&mut out, &r, &ctes);
        }
        Statement::Explain { statement, .. } => return statement_needs(statement, names),
        Statement::Insert(ins) => {
            if let ast::TableObject::TableName(t) = &ins.table {
                let mut privs = a::INSERT;
                if ins.replace_into {
                    privs |= a::DELETE;
                }
                if matches!(ins.on, Some(ast::OnInsert::DuplicateKeyUpdate(_))) {
                    privs |= a::UPDATE;
                }
                names.push(&mut out, t, &ctes, privs);
            }
            let mut r = Relations::default();
            if let Some(src) = &ins.source {
                relations(src.as_ref(), &mut r);
            }
            if let Some(on) = &ins.on {
                relations(on, &mut r);
            }
            names.reads(&mut out, &r, &ctes);
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
                            [col] => names.resolve(name, &ctes).is_some_and(|(db, t)| {
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
            for (i, f) in tables.iter().enumerate() {
                if let Some((name, _)) = factor_name(f) {
                    let mut privs = 0;
                    if targets.contains(&i) {
                        privs |= a::UPDATE;
                    }
                    if !targets.contains(&i) || reads_target {
                        privs |= a::SELECT;
                    }
                    names.push(&mut out, name, &ctes, privs);
                }
            }
            // Subqueries and derived tables anywhere else read.
            let mut r = Relations::default();
            for f in &tables {
                if !matches!(f, ast::TableFactor::Table { .. }) {
                    relations(*f, &mut r);
                }
            }
            for asg in &u.assignments {
                relations(&asg.value, &mut r);
            }
            if let Some(w) = &u.selection {
                relations(w, &mut r);
            }
            for j in all.iter().flat_map(|t| t.joins.iter()) {
                relations(&j.join_operator, &mut r);
            }
            names.reads(&mut out, &r, &ctes);
        }
        Statement::Delete(d) => {
            let from: Vec<ast::TableWithJoins> = match &d.from {
                ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f.clone(),
            };
            let mut sources = from.clone();
            if let Some(u) = &d.using {
                sources.extend(u.iter().cloned());
            }
            let tables = factors(&sources);
            let single = d.tables.is_empty() && tables.len() == 1;
            let reads_target = !single || d.selection.is_some() || !d.order_by.is_empty();
            for f in &tables {
                let Some((name, called)) = factor_name(f) else {
                    continue;
                };
                let target = single
                    || d.tables.iter().any(|t| {
                        crate::compile::object_name_parts(t)
                            .ok()
                            .and_then(|p| p.last().cloned())
                            .is_some_and(|l| l.eq_ignore_ascii_case(&called))
                    });
                let mut privs = 0;
                if target {
                    privs |= a::DELETE;
                }
                if !target || reads_target {
                    privs |= a::SELECT;
                }
                names.push(&mut out, name, &ctes, privs);
            }
            let mut r = Relations::default();
            for f in &tables {
                if !matches!(f, ast::TableFactor::Table { .. }) {
                    relations(*f, &mut r);
                }
            }
            if let Some(w) = &d.selection {
                relations(w, &mut r);
            }
            for j in sources.iter().flat_map(|t| t.joins.iter()) {
                relations(&j.join_operator, &mut r);
            }
            names.reads(&mut out, &r, &ctes);
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
            names.reads(&mut out, &r, &ctes);
        }
        Statement::CreateView(v) => {
            let mut r = Relations::default();
            relations(v.query.as_ref(), &mut r);
            names.reads(&mut out, &r, &ctes);
        }
        _ => {}
    }
    out
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
pub fn plan_needs(plan: &Plan) -> Vec<Need> {
    match plan {
        Plan::Utility(u) => utility_needs(u),
        Plan::Select(_)
        | Plan::Insert(_)
        | Plan::Update(_)
        | Plan::Delete(_)
        | Plan::Explain(_) => Vec::new(),
    }
}

fn utility_needs(u: &Utility) -> Vec<Need> {
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
        | Utility::ShowCharset { .. }
        | Utility::ShowCollation { .. }
        | Utility::UnlockTables
        // Filtered to what the account may see (`crate::session`).
        | Utility::ShowDatabases(_)
        | Utility::ShowProcessList { .. }
        // Its query was checked as written.
        | Utility::SelectInto { .. } => Vec::new(),
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
                vec![Need::AnyOnTable {
                    db: db.clone(),
                    name: t.clone(),
                }]
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
            if *temporary {
                vec![Need::Db {
                    db: db.clone(),
                    privs: a::CREATE_TMP_TABLE,
                }]
            } else {
                vec![table(db, &def.name, a::CREATE)]
            }
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
        Utility::Optimize { tables } | Utility::Check { tables } => {
            let pairs: Vec<(String, String)> = tables
                .iter()
                .map(|(d, key, _)| (d.clone(), key.clone()))
                .collect();
            per_table(&pairs, a::SELECT | a::INSERT)
        }
        Utility::Flush => vec![Need::Global(a::RELOAD)],
        Utility::Noted { then, .. } => utility_needs(then),
    }
}
