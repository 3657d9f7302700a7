//! The planner: one parsed statement → a `Plan` with tables resolved to `Arc<Table>`,
//! columns to positions, `?` to parameter numbers, and the access path chosen. Prepared
//! statements keep their plan and re-plan only when the catalog version moves.
//!
//! Owns: which SQL shapes are supported (everything else is refused here with 1235/1064
//! naming the construct) and result-set metadata.
//! Must never: read or write rows (that is `exec.rs`), or change the catalog.

use crate::access::{self, Access, AccessPlan, Hints};
use crate::compile::{
    contains_aggregate, item_name, object_name_parts, AggBuilder, AggFunc, AggSpec, Compiler,
    Scope, ScopeCol, WinFunc,
};
use crate::ddl;
use crate::expr::{Expr, SqlType};
use crate::infoschema;
use crate::result::{Column, ColumnKind, SqlError};
use crate::variables;
use sqlparser::ast;
use sqlparser::tokenizer::Location;
use std::sync::Arc;
use tierdb_engine::{
    ColumnDef, ColumnMask, ColumnType, Engine, Table, TableDef, TableLockMode, Value,
};

pub struct PlanCx<'a> {
    pub engine: &'a Arc<Engine>,
    pub db: Option<&'a str>,
    pub placeholders: &'a [Location],
    /// The statement's subqueries, numbered in planning order; `build` moves them into the
    /// top-level plan.
    pub subqueries: std::cell::RefCell<Vec<SelectPlan>>,
    /// The queries enclosing the subquery being planned, outermost first.
    pub outer: std::cell::RefCell<Vec<OuterScope>>,
    /// The common table expressions in scope (`WITH name AS (...)`), outermost first: a
    /// table name in FROM that is one of them is that query, planned as a derived table.
    pub ctes: std::cell::RefCell<Vec<Cte>>,
    /// The views being expanded (or created), outermost first, as (db, name, the database
    /// unqualified table names in its query resolve in): naming a view already on the stack
    /// is recursion (1462).
    pub views: std::cell::RefCell<Vec<(String, String, Option<String>)>>,
    /// The next work-table number of a recursive WITH query (unique in the statement).
    pub next_work_table: std::cell::Cell<usize>,
    /// The session's TEMPORARY tables: a name among them means that table (before the
    /// database's tables and views), except inside a view's query.
    pub temps: Option<&'a crate::temp::TempTables>,
    /// A name the session's TEMPORARY tables hold, read inside a view's query (where it does
    /// not mean that table): CREATE VIEW refuses it (1352).
    pub hidden_temp: std::cell::RefCell<Option<String>>,
    /// The statement's select lists as written (unaliased expression columns are named by
    /// their text).
    pub item_texts: &'a crate::parse::ItemTexts,
    /// How many stored view queries are being planned (their text is not the statement's:
    /// `item_texts` does not apply inside them).
    pub expanding: std::cell::Cell<usize>,
    /// Whose rights a view's tables are checked against (None: an embedded session, no
    /// checks).
    pub rights: Option<ViewRights<'a>>,
    /// The accounts the views being expanded run as, innermost last (None: unrestricted):
    /// an INVOKER view inside a DEFINER view runs as that definer.
    pub run_as: std::cell::RefCell<Vec<Option<Arc<crate::accounts::Account>>>>,
}

/// What view expansion needs to check a view's tables: the account list (DEFINER views
/// run with their definer's privileges) and the session's account (INVOKER views).
#[derive(Clone)]
pub struct ViewRights<'a> {
    pub accounts: &'a crate::accounts::Accounts,
    /// The session's account; None when it holds every privilege.
    pub invoker: Option<Arc<crate::accounts::Account>>,
    pub client_host: &'a str,
}

static NO_ITEM_TEXTS: crate::parse::ItemTexts = crate::parse::ItemTexts::EMPTY;

/// One `WITH` entry in scope.
#[derive(Clone)]
pub struct Cte {
    pub name: String,
    pub query: ast::Query,
    /// `WITH name (a, b) AS (...)`: the names of its columns.
    pub columns: Vec<String>,
    /// `WITH RECURSIVE` and the query names itself.
    pub recursive: bool,
    /// While the recursive part of that query is planned: the name means the rows of the
    /// previous iteration, work table `.0`, with the anchor's columns `.1`.
    pub work: Option<(usize, Vec<Column>)>,
}

/// A query whose subquery is being planned: a column the subquery names and its own FROM
/// does not have is looked up here (innermost enclosing query first), which makes the
/// subquery correlated.
pub struct OuterScope {
    pub scope: Scope,
    /// The values the subquery takes from this query, as expressions over this query's row;
    /// the subquery sees value k as `Param(base + k)`.
    pub refs: Vec<Expr>,
    /// In the select list, HAVING or ORDER BY of a grouped query (evaluated on group rows,
    /// not FROM rows): its GROUP BY expressions. A subquery there may name a column that is
    /// one of them (passed as that group row value); other columns are refused.
    pub group: Option<Vec<Expr>>,
}

impl<'a> PlanCx<'a> {
    /// A planning context with no subqueries yet.
    pub fn new(engine: &'a Arc<Engine>, db: Option<&'a str>, placeholders: &'a [Location]) -> Self {
        PlanCx {
            engine,
            db,
            placeholders,
            subqueries: Default::default(),
            outer: Default::default(),
            ctes: Default::default(),
            views: Default::default(),
            next_work_table: Default::default(),
            temps: None,
            hidden_temp: Default::default(),
            item_texts: &NO_ITEM_TEXTS,
            expanding: Default::default(),
            rights: None,
            run_as: Default::default(),
        }
    }

    /// This context naming unaliased expression columns by their text in `texts`.
    pub fn with_item_texts(mut self, texts: &'a crate::parse::ItemTexts) -> Self {
        self.item_texts = texts;
        self
    }

    /// This context checking views' tables against `rights`.
    pub fn with_rights(mut self, rights: Option<ViewRights<'a>>) -> Self {
        self.rights = rights;
        self
    }

    /// Checks that view `db`.`view` (`def`) may do `needs`: its definer may (DEFINER
    /// security, the default), or whoever it is read for may (INVOKER: the session, or the
    /// definer of the view it is inside). 1356 when not, as MariaDB; 1449 when the definer is
    /// no account. Returns the account the view runs as (None: unrestricted), for
    /// `run_as` while it is expanded.
    pub(crate) fn view_rights(
        &self,
        db: &str,
        view: &str,
        def: &tierdb_engine::ViewDef,
        needs: impl FnOnce() -> Vec<crate::accounts::Need>,
    ) -> Result<Option<Arc<crate::accounts::Account>>, SqlError> {
        let Some(r) = &self.rights else {
            return Ok(None);
        };
        let who = if def.security.eq_ignore_ascii_case("INVOKER") {
            let context = match self.run_as.borrow().last() {
                Some(outer) => outer.clone(),
                None => r.invoker.clone(),
            };
            match context {
                Some(a) => a,
                None => return Ok(None),
            }
        } else {
            let (u, h) = def.definer.rsplit_once('@').unwrap_or((&def.definer, "%"));
            match r.accounts.get(u, h) {
                Some(a) => a,
                None => {
                    return Err(SqlError::new(
                        1449,
                        "HY000",
                        format!("The user specified as a definer ('{u}'@'{h}') does not exist"),
                    ))
                }
            }
        };
        if who.is_superuser() {
            return Ok(None);
        }
        crate::accounts::check(&who, r.client_host, &needs())
            .map_err(|_| crate::view::invalid(db, view))?;
        Ok(Some(who))
    }

    /// This context with the session's TEMPORARY tables in scope.
    pub fn with_temps(mut self, temps: &'a crate::temp::TempTables) -> Self {
        self.temps = Some(temps);
        self
    }

    /// The engine key of the session's TEMPORARY table `db`.`t`, when it has one and the
    /// name is not read inside a view's query (views never see TEMPORARY tables).
    pub(crate) fn temp_key(&self, db: &str, t: &str) -> Option<String> {
        let temps = self.temps?;
        let key = temps.key(db, t)?;
        if !self.engine.is_temporary_table(db, key) {
            // Gone with its database (another session's DROP DATABASE).
            return None;
        }
        if !self.views.borrow().is_empty() {
            self.hidden_temp.replace(Some(t.to_string()));
            return None;
        }
        Some(key.to_string())
    }

    /// The database unqualified table names resolve in: the view's being expanded, else the
    /// session's.
    pub(crate) fn current_db(&self) -> Option<String> {
        match self.views.borrow().last() {
            Some((_, _, home)) => home.clone(),
            None => self.db.map(str::to_string),
        }
    }

    /// Plans view `name` if it names one: its query, planned in the view's database with
    /// no WITH queries or enclosing scopes of the statement visible; a table or column its
    /// query names that is gone is 1356 (as MariaDB). None: no view has that name.
    pub fn view(&self, name: &ast::ObjectName) -> Result<Option<SelectPlan>, SqlError> {
        // No database to look in (1046) or a malformed name: not a view; the caller's
        // table lookup reports it.
        let Ok((db, v)) = self.qualify(name) else {
            return Ok(None);
        };
        if self.temp_key(&db, &v).is_some() {
            return Ok(None);
        }
        let Some(def) = self.engine.view(&db, &v) else {
            return Ok(None);
        };
        if self
            .views
            .borrow()
            .iter()
            .any(|(d, n, _)| *d == db && *n == v)
        {
            return Err(SqlError::new(
                1462,
                "HY000",
                format!("`{db}`.`{v}` contains view recursion"),
            ));
        }
        let q = match crate::parse::parse(&def.query)?.stmt {
            ast::Statement::Query(q) => q,
            _ => return Err(crate::view::invalid(&db, &v)),
        };
        let runs_as = self.view_rights(&db, &v, &def, || {
            crate::authorize::view_query_needs(self.engine, &db, &q)
        })?;
        self.run_as.borrow_mut().push(runs_as);
        self.views
            .borrow_mut()
            .push((db.clone(), v.clone(), Some(db.clone())));
        let ctes = std::mem::take(&mut *self.ctes.borrow_mut());
        self.expanding.set(self.expanding.get() + 1);
        let planned = self.derived(&q);
        self.expanding.set(self.expanding.get() - 1);
        *self.ctes.borrow_mut() = ctes;
        self.views.borrow_mut().pop();
        self.run_as.borrow_mut().pop();
        planned.map(Some).map_err(|e| match e.code {
            1046 | 1049 | 1054 | 1146 | 1052 | 1305 | 1356 | 1630 => crate::view::invalid(&db, &v),
            _ => e,
        })
    }

    /// Plans the WITH query `name` (the innermost one of that name) as it was defined: it
    /// sees only the WITH entries before it. None: no WITH entry has that name.
    fn cte(&self, name: &ast::ObjectName) -> Result<Option<(SelectPlan, Vec<String>)>, SqlError> {
        let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice() else {
            return Ok(None);
        };
        let (at, cte) = {
            let ctes = self.ctes.borrow();
            match ctes
                .iter()
                .rposition(|c| c.name.eq_ignore_ascii_case(&id.value))
            {
                Some(at) => (at, ctes[at].clone()),
                None => return Ok(None),
            }
        };
        if let Some((slot, columns)) = &cte.work {
            return Ok(Some((work_table_plan(*slot, columns), cte.columns)));
        }
        let later = self.ctes.borrow_mut().split_off(at);
        let planned = if cte.recursive {
            self.recursive_cte(&cte)
        } else {
            self.derived(&cte.query)
        };
        self.ctes.borrow_mut().extend(later);
        Ok(Some((planned?, cte.columns)))
    }

    /// Plans a recursive WITH query `anchor UNION [ALL | DISTINCT] step`: the anchor as
    /// usual, then the step with the query's own name meaning the rows the previous
    /// iteration added (a work table). The step may name it once, in its FROM (or a join),
    /// not in a subquery, and may not aggregate (4008), as MariaDB requires.
    fn recursive_cte(&self, cte: &Cte) -> Result<SelectPlan, SqlError> {
        let restricted = || {
            SqlError::new(
                4008,
                "HY000",
                format!(
                    "Restrictions imposed on recursive definitions are violated for table '{}'",
                    cte.name
                ),
            )
        };
        let q = &cte.query;
        let (left, right, distinct) = match &*q.body {
            ast::SetExpr::SetOperation {
                op: ast::SetOperator::Union,
                set_quantifier,
                left,
                right,
            } => (
                left,
                right,
                match set_quantifier {
                    ast::SetQuantifier::All => false,
                    ast::SetQuantifier::Distinct | ast::SetQuantifier::None => true,
                    other => return Err(SqlError::unsupported(format!("UNION {other}"))),
                },
            ),
            _ => return Err(restricted()),
        };
        if q.order_by.is_some() || q.limit_clause.is_some() || q.with.is_some() {
            return Err(SqlError::unsupported(
                "ORDER BY, LIMIT or WITH in a recursive WITH query",
            ));
        }
        if names_table(left, &cte.name, false) {
            let mut first = &**left;
            while let ast::SetExpr::SetOperation { left, .. } = first {
                first = left;
            }
            if !names_table(first, &cte.name, false) {
                return Err(SqlError::unsupported(
                    "a recursive WITH query with more than one recursive part",
                ));
            }
            return Err(SqlError::new(
                4007,
                "HY000",
                format!("No anchors for recursive WITH element '{}'", cte.name),
            ));
        }
        if names_table(right, &cte.name, true) {
            return Err(restricted());
        }
        let outer = std::mem::take(&mut *self.outer.borrow_mut());
        let planned = (|| {
            let anchor = set_operation(q, left, self)?;
            let slot = self.next_work_table.get();
            self.next_work_table.set(slot + 1);
            self.ctes.borrow_mut().push(Cte {
                work: Some((slot, anchor.columns.clone())),
                recursive: false,
                ..cte.clone()
            });
            let step = set_operation(q, right, self);
            self.ctes.borrow_mut().pop();
            let step = step?;
            if step.n_out != anchor.n_out {
                return Err(SqlError::new(
                    1222,
                    "21000",
                    "The used SELECT statements have a different number of columns",
                ));
            }
            if step.agg.is_some() || !step.windows.is_empty() {
                return Err(restricted());
            }
            Ok(recursive_plan(anchor, step, distinct, slot))
        })();
        *self.outer.borrow_mut() = outer;
        planned
    }

    /// Plans the body of a derived table or WITH query: it cannot see the columns of the
    /// queries around it (no LATERAL), so the enclosing scopes are set aside meanwhile.
    fn derived(&self, q: &ast::Query) -> Result<SelectPlan, SqlError> {
        let outer = std::mem::take(&mut *self.outer.borrow_mut());
        let planned = select(q, self);
        *self.outer.borrow_mut() = outer;
        planned
    }

    /// Resolves a column the current query's FROM does not have against the enclosing
    /// queries. Found in query L: it is passed down as a parameter through every query
    /// between (each registers it once), and the expression returned is the innermost one's
    /// `Expr::Outer` parameter. None: no enclosing query has it either.
    pub fn outer_column(&self, parts: &[&str]) -> Result<Option<Expr>, SqlError> {
        let mut frames = self.outer.borrow_mut();
        let base = self.placeholders.len();
        for level in (0..frames.len()).rev() {
            let col = match frames[level].scope.resolve(parts) {
                Ok(c) => c,
                Err(e) if e.code == 1052 => return Err(e),
                Err(_) => continue,
            };
            let scope = &frames[level].scope;
            let (ty, binary) = (scope.type_of(col), scope.is_binary(&Expr::Col(col)));
            let mut e = match &frames[level].group {
                None => Expr::Col(col),
                Some(group) => match group.iter().position(|g| same_ref(g, &Expr::Col(col))) {
                    Some(k) => Expr::Col(k),
                    None => {
                        return Err(SqlError::unsupported(format!(
                        "a subquery of a grouped query naming '{}', which is not a GROUP BY column",
                        parts.join(".")
                    )))
                    }
                },
            };
            for f in frames[level..].iter_mut() {
                let k = match f.refs.iter().position(|r| same_ref(r, &e)) {
                    Some(k) => k,
                    None => {
                        f.refs.push(e);
                        f.refs.len() - 1
                    }
                };
                e = Expr::Outer {
                    param: base + k,
                    ty,
                    binary,
                };
            }
            return Ok(Some(e));
        }
        Ok(None)
    }
}

/// Two references to an enclosing query's value are the same (columns and parameters only).
fn same_ref(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Col(x), Expr::Col(y))
        | (Expr::Outer { param: x, .. }, Expr::Outer { param: y, .. }) => x == y,
        _ => false,
    }
}

impl PlanCx<'_> {
    pub(crate) fn db(&self) -> Result<String, SqlError> {
        self.current_db().ok_or_else(no_db)
    }
    /// (db, table) of a possibly qualified name.
    pub fn qualify(&self, name: &ast::ObjectName) -> Result<(String, String), SqlError> {
        let parts = object_name_parts(name)?;
        match parts.as_slice() {
            [t] => Ok((self.db()?, t.clone())),
            [d, t] => Ok((d.clone(), t.clone())),
            _ => Err(SqlError::syntax(format!("bad table name {name}"))),
        }
    }
    /// (db, engine name) of a possibly qualified name of a table in use: the key of the
    /// session's TEMPORARY table of that name, if it has one, else the name.
    pub fn qualify_table(&self, name: &ast::ObjectName) -> Result<(String, String), SqlError> {
        let (db, t) = self.qualify(name)?;
        Ok(match self.temp_key(&db, &t) {
            Some(key) => (db, key),
            None => (db, t),
        })
    }
    /// The base table `name` names (1347 for a view).
    fn table(&self, name: &ast::ObjectName) -> Result<Arc<Table>, SqlError> {
        let (db, t) = self.qualify_table(name)?;
        crate::view::base_table(self.engine, &db, &t)
    }
    /// `name` names a view (not a table; a TEMPORARY table hides a view of its name).
    pub(crate) fn is_view(&self, name: &ast::ObjectName) -> bool {
        self.qualify(name).is_ok_and(|(db, t)| {
            self.temp_key(&db, &t).is_none() && self.engine.view(&db, &t).is_some()
        })
    }
    /// The table an INSERT / UPDATE / DELETE writes: a view here is one `view::write_through`
    /// did not take (a multi-table statement, UPDATE ... FROM), 1235.
    pub(crate) fn write_target(
        &self,
        name: &ast::ObjectName,
        what: &str,
    ) -> Result<Arc<Table>, SqlError> {
        if self.is_view(name) {
            let (db, t) = self.qualify(name)?;
            return Err(SqlError::unsupported(format!(
                "{what} of view '{db}.{t}' in this form (write through the view alone, or to its tables)"
            )));
        }
        self.table(name)
    }
    /// The INFORMATION_SCHEMA table (or `mysql.user`) `name` names, if it names one.
    fn info_table(
        &self,
        name: &ast::ObjectName,
    ) -> Result<Option<infoschema::InfoTable>, SqlError> {
        let parts = object_name_parts(name)?;
        let current = self.current_db();
        let (db, t) = match parts.as_slice() {
            [t] => match current.as_deref() {
                Some(d) => (d, t.as_str()),
                None => return Ok(None),
            },
            [d, t] => (d.as_str(), t.as_str()),
            _ => return Ok(None),
        };
        if !infoschema::is_schema(db) {
            return Ok(infoschema::mysql_table(self.engine, db, t));
        }
        infoschema::table(self.engine, t).map(Some)
    }
}

pub fn no_db() -> SqlError {
    SqlError::new(1046, "3D000", "No database selected")
}

#[derive(Clone, Debug)]
pub enum Source {
    Dual,
    Table {
        table: Arc<Table>,
        access: AccessPlan,
    },
    Derived {
        plan: Box<SelectPlan>,
        alias: String,
    },
    /// An INFORMATION_SCHEMA table: rows generated from the catalog at execution.
    Virtual(Box<crate::infoschema::InfoTable>),
    /// Base tables joined left to right (`crate::join`).
    Join(Box<crate::join::JoinPlan>),
    /// The rows the previous iteration of a recursive WITH query added (numbered per
    /// statement; see `Recursive`).
    WorkTable(usize),
    /// A recursive WITH query: the anchor's rows, then the step run again and again over
    /// work table `slot` holding the rows the run before added, until a run adds none
    /// (`distinct`: rows already produced are not added again), at most
    /// `max_recursive_iterations` runs (then 1931).
    Recursive {
        anchor: Box<SelectPlan>,
        step: Box<SelectPlan>,
        distinct: bool,
        slot: usize,
    },
    /// `left UNION | INTERSECT | EXCEPT [ALL | DISTINCT] right` (projected rows): UNION the
    /// rows of both, INTERSECT left rows also in right, EXCEPT left rows not in right; with
    /// DISTINCT duplicates removed (first occurrences kept), with ALL counted (INTERSECT ALL
    /// keeps a row as often as both have it, EXCEPT ALL as often as left has it more).
    SetOperation {
        op: SetOp,
        left: Box<SelectPlan>,
        right: Box<SelectPlan>,
        distinct: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

impl SetOp {
    pub fn sql(self) -> &'static str {
        match self {
            SetOp::Union => "UNION",
            SetOp::Intersect => "INTERSECT",
            SetOp::Except => "EXCEPT",
        }
    }
}

#[derive(Clone, Debug)]
pub struct OrderKey {
    /// Index into the pre-row (projection values followed by extra sort values).
    pub pos: usize,
    pub desc: bool,
    /// A DECIMAL value (kept as text): sorted by number, not by bytes.
    pub numeric: bool,
    /// A binary column: strings sorted as bytes (else under `utf8mb4_general_ci`).
    pub binary: bool,
}

#[derive(Clone, Debug)]
pub struct AggPlan {
    pub group: Vec<Expr>,
    pub specs: Vec<AggSpec>,
    /// Bit i set: GROUP BY expression i is a binary column (its strings group as bytes).
    pub group_binary: u64,
    /// `WITH ROLLUP`: after the last group of each prefix of the GROUP BY list, a row of that
    /// prefix's totals with NULL for the rest (deepest first; the grand total last).
    pub rollup: bool,
}

#[derive(Clone, Debug)]
pub struct SelectPlan {
    pub source: Source,
    pub filter: Option<Expr>,
    pub agg: Option<AggPlan>,
    /// HAVING (on the aggregate row), or a post-filter on the source row without GROUP BY.
    pub having: Option<Expr>,
    /// Output expressions (`n_out` of them) followed by extra ORDER BY expressions.
    pub project: Vec<Expr>,
    pub n_out: usize,
    /// Output columns whose values must be converted to the announced kind.
    pub conform: Vec<Option<(ColumnKind, u8)>>,
    pub order: Vec<OrderKey>,
    /// The access path already yields rows in ORDER BY order.
    pub sorted_by_access: bool,
    /// MIN / MAX without GROUP BY or WHERE over key-leading columns: the keys read in
    /// order, each to its first row with the column (index into the row) not NULL. The
    /// aggregates see only those rows — real rows holding every extreme, so their MIN and
    /// MAX are the table's. Empty: the source is read whole.
    pub extremes: Vec<(AccessPlan, usize)>,
    /// A loose index scan (`access::loose_key`): only one row per distinct value of the
    /// column matters, so the source is read as one row per value of the key it leads.
    pub loose: Option<crate::access::Loose>,
    pub distinct: bool,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
    pub columns: Vec<Column>,
    /// A locking read (only with a base-table or no source): the rows read from the table
    /// are locked and re-read (see `exec`).
    pub lock: Option<LockingRead>,
    /// The table columns the query reads (None = all): the others are not decoded. Set by
    /// `SelectPlan::finish` from every expression evaluated on the source row.
    pub read_cols: Option<ColumnMask>,
    /// Per `project` entry: a bare column referenced by no other entry, so `exec` may move
    /// the value out of the (discarded) source row instead of copying it.
    pub project_moves: Vec<bool>,
    /// The statement's subqueries (top-level plan only; `Expr::Subquery` etc. index them).
    pub subqueries: Vec<SelectPlan>,
    /// As a correlated subquery: how many values of the enclosing query it takes (after the
    /// statement's parameters); 0 for every other plan.
    pub outer_params: usize,
    /// An expression evaluated on this plan's rows runs a correlated subquery: the rows are
    /// read first, then filtered and projected with the transaction free (set by `finish`).
    pub correlated: bool,
    /// Window functions, computed over all rows that pass WHERE / GROUP BY / HAVING; their
    /// results are appended to those rows (in this order) before the projection.
    pub windows: Vec<crate::compile::WindowSpec>,
    /// Where the window results go in the row: after the stage's columns (a row read from a
    /// table without a primary key also holds its hidden row id there, which they replace).
    pub window_base: usize,
    /// `SELECT SQL_CALC_FOUND_ROWS ...`: FOUND_ROWS() afterwards counts the rows without
    /// LIMIT (honoured for the statement's own SELECT; see `exec::run_select_counting`).
    pub calc_found_rows: bool,
}

impl SelectPlan {
    /// Derives `read_cols` and `project_moves` from the finished plan. Must run after every
    /// change to the expressions, the source or the locking clause.
    pub fn finish(&mut self) {
        self.read_cols = self.columns_read();
        let agg_exprs = self.agg.iter().flat_map(|a| {
            a.group
                .iter()
                .chain(a.specs.iter().filter_map(|s| s.arg.as_ref()))
                .chain(a.specs.iter().flat_map(|s| s.order.iter().map(|o| &o.key)))
        });
        let window_exprs = self.windows.iter().flat_map(|w| {
            w.args
                .iter()
                .chain(w.partition.iter())
                .chain(w.order.iter().map(|o| &o.key))
        });
        self.correlated = self
            .filter
            .iter()
            .chain(self.having.iter())
            .chain(self.project.iter())
            .chain(agg_exprs)
            .chain(window_exprs)
            .any(Expr::is_correlated);
        self.project_moves =
            (0..self.project.len())
                .map(|i| match &self.project[i] {
                    Expr::Col(c) => !self.project.iter().enumerate().any(|(j, e)| {
                        j != i && e.any(&mut |x| matches!(x, Expr::Col(d) if d == c))
                    }),
                    _ => false,
                })
                .collect();
    }

    /// The source-table columns any expression evaluated on a source row refers to: WHERE,
    /// and either GROUP BY plus the aggregate arguments (the projection and HAVING then see
    /// the aggregate row) or HAVING plus the projection. None (decode everything) for locking
    /// reads (rows are re-read and re-checked whole), when every column is needed, or when an
    /// expression names a position the table does not have.
    fn columns_read(&self) -> Option<ColumnMask> {
        let Source::Table { table, .. } = &self.source else {
            return None;
        };
        if self.lock.is_some() {
            return None;
        }
        let n = table.def.columns.len();
        let mut want = vec![false; n];
        let mut exprs: Vec<&Expr> = self.filter.iter().collect();
        match &self.agg {
            Some(a) => {
                exprs.extend(a.group.iter());
                exprs.extend(a.specs.iter().filter_map(|s| s.arg.as_ref()));
                exprs.extend(a.specs.iter().flat_map(|s| s.order.iter().map(|o| &o.key)));
            }
            None => {
                exprs.extend(self.having.iter());
                exprs.extend(self.project.iter());
            }
        }
        for e in exprs {
            let out_of_range = e.any(&mut |x| match x {
                Expr::Col(c) if *c < n => {
                    want[*c] = true;
                    false
                }
                Expr::Col(_) => true,
                _ => false,
            });
            if out_of_range {
                return None;
            }
        }
        if want.iter().all(|&w| w) {
            return None;
        }
        Some(Arc::from(want))
    }
}

/// The locking clause of a SELECT: exclusive row locks for FOR UPDATE, shared ones for
/// FOR SHARE / LOCK IN SHARE MODE, and what to do with a row another transaction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockingRead {
    /// `FOR UPDATE` (else `FOR SHARE` / `LOCK IN SHARE MODE`: shared row locks).
    pub exclusive: bool,
    pub wait: LockWait,
}

/// How a locking read meets a row locked by another transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Wait up to `innodb_lock_wait_timeout` (1205 after it).
    Wait,
    /// `NOWAIT`: 1205 at once.
    NoWait,
    /// `SKIP LOCKED`: leave the row out.
    SkipLocked,
}

impl LockingRead {
    pub fn sql(self) -> &'static str {
        if self.exclusive {
            "FOR UPDATE"
        } else {
            "FOR SHARE"
        }
    }
}

#[derive(Clone, Debug)]
pub struct InsertPlan {
    pub table: Arc<Table>,
    /// Values per row; `None` = DEFAULT.
    pub rows: Vec<Vec<Option<Expr>>>,
    /// For each table column, its position in a values row (or None: default).
    pub col_map: Vec<Option<usize>>,
    /// What a row whose primary or unique key is taken does.
    pub on_duplicate: OnDuplicate,
    /// INSERT ... SELECT: the rows come from this query (`rows` is empty).
    pub select: Option<Box<SelectPlan>>,
    /// Written through a view WITH CHECK OPTION: each row must pass this.
    pub check: Option<Box<ViewCheck>>,
    /// The table's CHECK constraints (4025 for a row that fails one).
    pub checks: Option<Box<crate::check::RowChecks>>,
}

/// A view's CHECK OPTION as a write checks it: the condition over the table's row (1369
/// naming `view` when a row fails it).
#[derive(Clone, Debug)]
pub struct ViewCheck {
    pub condition: Expr,
    pub view: String,
}

/// The duplicate-key handling of an INSERT.
#[derive(Clone, Debug)]
pub enum OnDuplicate {
    /// Plain INSERT: error 1062.
    Fail,
    /// INSERT IGNORE: the row is skipped with a warning.
    Ignore,
    /// REPLACE: the rows holding the keys are deleted, then the row is inserted.
    Replace,
    /// ON DUPLICATE KEY UPDATE: these assignments update the row holding the key; each is
    /// evaluated against that row (earlier assignments applied) followed by the row the
    /// statement tried to insert (`VALUES(col)`).
    Update(Vec<(usize, Expr)>),
}

/// `UPDATE a JOIN b ... SET a.x = ...` / `DELETE a, b FROM a JOIN b ...`: the joined rows
/// come from a SELECT of each target's columns followed by the SET values (run until every
/// target row it meets was locked before it ran); each target row is then changed once (the
/// first joined row that reaches it decides).
#[derive(Clone, Debug)]
pub struct MultiWrite {
    pub select: SelectPlan,
    pub targets: Vec<MultiTarget>,
}

#[derive(Clone, Debug)]
pub struct MultiTarget {
    pub table: Arc<Table>,
    /// Where the target's columns start in a row of `select`.
    pub offset: usize,
    /// UPDATE: (column of the table, its new value).
    pub sets: Vec<(usize, MultiValue)>,
    /// The table's CHECK constraints (4025 for a row that fails one).
    pub checks: Option<Box<crate::check::RowChecks>>,
}

#[derive(Clone, Debug)]
pub enum MultiValue {
    /// The value at this position of a row of `select`.
    At(usize),
    /// `SET x = DEFAULT`.
    Const(Value),
}

#[derive(Clone, Debug)]
pub struct UpdatePlan {
    pub table: Arc<Table>,
    pub access: AccessPlan,
    pub filter: Option<Expr>,
    pub sets: Vec<(usize, Expr)>,
    pub limit: Option<Expr>,
    /// ORDER BY: matched rows are updated in this order.
    pub order: Vec<RowOrder>,
    /// The statement's subqueries (see `SelectPlan::subqueries`).
    pub subqueries: Vec<SelectPlan>,
    /// A multi-table UPDATE (then `table` is its first target and the fields above are
    /// unused).
    pub multi: Option<Box<MultiWrite>>,
    /// Written through a view WITH CHECK OPTION: each new row must pass this.
    pub check: Option<Box<ViewCheck>>,
    /// The table's CHECK constraints (4025 for a row that fails one).
    pub checks: Option<Box<crate::check::RowChecks>>,
    /// `UPDATE IGNORE`: a row whose change a key, foreign key or CHECK refuses stays as it
    /// was (a warning for a CHECK), division by zero gives NULL with a warning.
    pub ignore: bool,
}

#[derive(Clone, Debug)]
pub struct DeletePlan {
    pub table: Arc<Table>,
    pub access: AccessPlan,
    pub filter: Option<Expr>,
    pub limit: Option<Expr>,
    /// ORDER BY: matched rows are deleted in this order.
    pub order: Vec<RowOrder>,
    /// The statement's subqueries (see `SelectPlan::subqueries`).
    pub subqueries: Vec<SelectPlan>,
    /// A multi-table DELETE (as `UpdatePlan::multi`).
    pub multi: Option<Box<MultiWrite>>,
    /// `DELETE IGNORE`: a row a foreign key keeps stays, with warning 1451.
    pub ignore: bool,
}

#[derive(Clone, Debug)]
pub enum ShowFilter {
    None,
    Like(String),
    Where(Box<ast::Expr>),
}

#[derive(Clone, Debug)]
pub enum SetTarget {
    /// A system variable; `global`: Some(true) GLOBAL, Some(false) SESSION, None default.
    System {
        name: String,
        global: Option<bool>,
    },
    User(String),
    Names {
        charset: String,
    },
    Isolation {
        level: String,
        scope: IsolationScope,
    },
}

/// Which transactions a `SET ... TRANSACTION ISOLATION LEVEL` is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IsolationScope {
    /// `SET TRANSACTION ...`: the next transaction only.
    Next,
    /// `SET SESSION TRANSACTION ...`: the session's later transactions.
    Session,
    /// `SET GLOBAL TRANSACTION ...`: sessions that start later.
    Global,
}

#[derive(Clone, Debug)]
pub struct SetItem {
    pub target: SetTarget,
    /// `None` = DEFAULT.
    pub value: Option<Expr>,
}

/// Statements the session runs itself (no row access plan).
#[derive(Clone, Debug)]
pub enum Utility {
    /// `BEGIN` / `START TRANSACTION`; `snapshot`: `WITH CONSISTENT SNAPSHOT` (the read view
    /// opens now under REPEATABLE READ).
    Begin {
        snapshot: bool,
    },
    Commit,
    Rollback,
    /// `SAVEPOINT name`.
    Savepoint(String),
    /// `ROLLBACK [WORK] TO [SAVEPOINT] name`.
    RollbackToSavepoint(String),
    /// `RELEASE SAVEPOINT name`.
    ReleaseSavepoint(String),
    Use(String),
    Set(Vec<SetItem>),
    ShowDatabases(ShowFilter),
    ShowTables {
        db: Option<String>,
        full: bool,
        filter: ShowFilter,
    },
    ShowColumns {
        db: String,
        table: String,
        full: bool,
        filter: ShowFilter,
    },
    ShowIndex {
        db: String,
        table: String,
    },
    ShowCreateTable {
        db: String,
        table: String,
    },
    ShowCreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    ShowVariables {
        global: bool,
        filter: ShowFilter,
    },
    ShowStatus {
        global: bool,
        filter: ShowFilter,
    },
    ShowProcessList {
        full: bool,
    },
    /// `SHOW WARNINGS [LIMIT [offset,] count]`: (offset, count) of the list.
    ShowWarnings {
        limit: Option<(usize, usize)>,
    },
    /// `SHOW ERRORS [LIMIT ...]`.
    ShowErrors {
        limit: Option<(usize, usize)>,
    },
    /// `SHOW COUNT(*) WARNINGS` (false) / `SHOW COUNT(*) ERRORS` (true).
    ShowWarningCount {
        errors: bool,
    },
    ShowEngines,
    /// A SHOW of something tierdb has none of (stored routines, triggers, events, a replica
    /// connection): MariaDB's columns and no rows, so GUI and monitoring tools that ask at
    /// connect time go on.
    ShowNone(crate::show::NoneOf),
    /// `SHOW CHARACTER SET` / `SHOW CHARSET [LIKE | WHERE]`.
    ShowCharset {
        filter: ShowFilter,
    },
    /// `SHOW COLLATION [LIKE | WHERE]`.
    ShowCollation {
        filter: ShowFilter,
    },
    ShowTableStatus {
        db: Option<String>,
        filter: ShowFilter,
    },
    CreateDatabase {
        name: String,
        if_not_exists: bool,
    },
    DropDatabase {
        name: String,
        if_exists: bool,
    },
    CreateTable {
        db: String,
        def: TableDef,
        if_not_exists: bool,
        /// `CREATE TEMPORARY TABLE`: the session's own (see `crate::temp`).
        temporary: bool,
        /// `CREATE OR REPLACE TABLE`: a table of that name is dropped first.
        or_replace: bool,
    },
    /// `CREATE TABLE t [(columns, keys)] [AS] SELECT ...`: the query runs first; the table
    /// gets `def`'s columns that the query does not name, then one column per query column
    /// (`def`'s definition of that name, else the plain column it copies — `sources` — else
    /// a type that fits its values), then the rows.
    CreateTableAs {
        db: String,
        def: TableDef,
        select: Box<SelectPlan>,
        sources: Vec<Option<ColumnDef>>,
        if_not_exists: bool,
        temporary: bool,
        or_replace: bool,
    },
    /// The tables by engine name (a TEMPORARY table's key when the session has one of that
    /// name).
    DropTable {
        tables: Vec<(String, String)>,
        if_exists: bool,
        /// `DROP TEMPORARY TABLE`: only the session's TEMPORARY tables.
        temporary: bool,
    },
    CreateIndex {
        db: String,
        table: String,
        name: String,
        columns: Vec<String>,
        unique: bool,
    },
    DropIndex {
        db: String,
        table: String,
        name: String,
    },
    Truncate {
        db: String,
        table: String,
    },
    /// `ALTER TABLE t ADD [COLUMN] c ...` (at the end; existing rows read `column.fill`).
    AddColumn {
        db: String,
        table: String,
        column: tierdb_engine::ColumnDef,
        /// The table's checks when the column's definition carries one (see
        /// `check::with_column_check`).
        checks: Option<Vec<tierdb_engine::CheckDef>>,
    },
    /// `ALTER TABLE ... MODIFY / CHANGE / RENAME COLUMN / ALTER COLUMN ... DEFAULT`: column
    /// `pos` becomes `column`; with `check`, every stored value must fit it first.
    AlterColumn {
        db: String,
        table: String,
        pos: usize,
        column: tierdb_engine::ColumnDef,
        check: bool,
    },
    /// `ALTER TABLE ... ADD CONSTRAINT ... CHECK / DROP CONSTRAINT`: the table's checks become
    /// `checks`; `added`: the position of a new one every stored row must pass first.
    SetChecks {
        db: String,
        table: String,
        checks: Vec<tierdb_engine::CheckDef>,
        added: Option<usize>,
        /// `DROP CONSTRAINT IF EXISTS` of a name the table does not have: nothing changes,
        /// this note (1091) is given.
        missing: Option<String>,
    },
    /// `ALTER TABLE` changes that rewrite every row (see `crate::alter`).
    RebuildTable {
        db: String,
        table: String,
        rebuild: Box<crate::alter::Rebuild>,
    },
    /// `RENAME TABLE a TO b, ...` / `ALTER TABLE a RENAME TO b`: (db, from, to_db, to) per
    /// table, all renamed or none; `alter` for the ALTER TABLE form (its counter).
    RenameTables {
        pairs: Vec<(String, String, String, String)>,
        alter: bool,
    },
    /// `ALTER TABLE t` with nothing to change (`DISABLE KEYS`, `ALGORITHM = ...`, `LOCK = ...`).
    AlterNoop {
        db: String,
        table: String,
    },
    /// `CREATE [OR REPLACE] VIEW` / `ALTER VIEW` (`alter`: the view must exist); an empty
    /// definer is the session's user, empty character sets the session's.
    CreateView {
        db: String,
        def: tierdb_engine::ViewDef,
        replace: bool,
        alter: bool,
        if_not_exists: bool,
    },
    DropView {
        views: Vec<(String, String)>,
        if_exists: bool,
    },
    /// `SHOW CREATE VIEW` (1347 for a table).
    ShowCreateView {
        db: String,
        view: String,
    },
    /// `LOCK TABLES`: (db, table, mode) per table, a table named twice taking the stronger mode.
    LockTables {
        tables: Vec<(String, String, TableLockMode)>,
    },
    UnlockTables,
    Analyze {
        tables: Vec<(String, String)>,
    },
    /// `OPTIMIZE TABLE`: each table rebuilt (as InnoDB's "recreate + analyze"). Per table:
    /// (db, engine name — a TEMPORARY table's key —, name as written).
    Optimize {
        tables: Vec<(String, String, String)>,
    },
    /// `CHECK TABLE`: each table's rows read and its indexes counted against them (as for
    /// `Optimize`).
    Check {
        tables: Vec<(String, String, String)>,
    },
    /// `REPAIR TABLE`: nothing to repair (as InnoDB, which answers that it cannot); a note
    /// per table (as for `Optimize`).
    Repair {
        tables: Vec<(String, String, String)>,
    },
    /// `SELECT ... INTO OUTFILE | DUMPFILE`: the query's rows into a new file on the server.
    SelectIntoFile {
        select: Box<SelectPlan>,
        into: crate::load::IntoFile,
    },
    /// `SELECT ... INTO @a, @b`: the query's one row goes into the user variables (none:
    /// warning 1329 and the variables keep their values; several: 1172).
    SelectInto {
        select: Box<SelectPlan>,
        vars: Vec<String>,
        /// Written `SELECT ... FROM ... INTO @v`: warning 1287.
        deprecated: bool,
    },
    /// `FLUSH PRIVILEGES | TABLES | LOGS | HOSTS | ...`: nothing to flush in tierdb (no
    /// privilege tables, no table cache, no log files to reopen); it commits the open
    /// transaction, as MariaDB's does.
    Flush,
    /// `FLUSH TABLES WITH READ LOCK`: the global read lock (`read_lock`), until UNLOCK
    /// TABLES or the session's end.
    FlushReadLock,
    /// A statement some of whose clauses were left out, each with a note (ALTER TABLE's
    /// `IF [NOT] EXISTS`, `crate::alter_if`): the notes (code, message), then the rest.
    Noted {
        notes: Vec<(u16, String)>,
        then: Box<Utility>,
    },
}

impl Utility {
    /// The tables (db, engine name) a table DDL statement changes (none for other statements).
    pub fn ddl_targets(&self) -> Vec<(&str, &str)> {
        match self {
            Utility::Noted { then, .. } => then.ddl_targets(),
            Utility::CreateIndex { db, table, .. }
            | Utility::DropIndex { db, table, .. }
            | Utility::AddColumn { db, table, .. }
            | Utility::AlterColumn { db, table, .. }
            | Utility::SetChecks { db, table, .. }
            | Utility::RebuildTable { db, table, .. }
            | Utility::Truncate { db, table } => vec![(db.as_str(), table.as_str())],
            Utility::DropTable { tables, .. } => tables
                .iter()
                .map(|(d, t)| (d.as_str(), t.as_str()))
                .collect(),
            Utility::RenameTables { pairs, .. } => pairs
                .iter()
                .map(|(d, f, _, _)| (d.as_str(), f.as_str()))
                .collect(),
            Utility::Optimize { tables } => tables
                .iter()
                .map(|(d, key, _)| (d.as_str(), key.as_str()))
                .collect(),
            _ => Vec::new(),
        }
    }
    /// Ends the open transaction first (CREATE / DROP TEMPORARY TABLE do not, as MySQL).
    pub fn commits_first(&self) -> bool {
        if let Utility::Noted { then, .. } = self {
            return then.commits_first();
        }
        self.is_ddl()
            && !matches!(
                self,
                Utility::CreateTable {
                    temporary: true,
                    ..
                } | Utility::CreateTableAs {
                    temporary: true,
                    ..
                } | Utility::DropTable {
                    temporary: true,
                    ..
                }
            )
    }
    /// True when the statement changes the catalog (implicit commit, catalog version bump).
    pub fn is_ddl(&self) -> bool {
        if let Utility::Noted { then, .. } = self {
            return then.is_ddl();
        }
        matches!(
            self,
            Utility::CreateDatabase { .. }
                | Utility::DropDatabase { .. }
                | Utility::CreateTable { .. }
                | Utility::CreateTableAs { .. }
                | Utility::DropTable { .. }
                | Utility::CreateIndex { .. }
                | Utility::DropIndex { .. }
                | Utility::AddColumn { .. }
                | Utility::RenameTables { .. }
                | Utility::AlterColumn { .. }
                | Utility::SetChecks { .. }
                | Utility::RebuildTable { .. }
                | Utility::Optimize { .. }
                | Utility::Truncate { .. }
                | Utility::CreateView { .. }
                | Utility::DropView { .. }
        )
    }
}

/// `SELECT ... INTO @a, @b` (as `parse` marks it): the query without its INTO, the
/// variables (names without `@`), and whether the INTO came after FROM. None for other
/// queries.
fn into_vars(q: &ast::Query) -> Option<(ast::Query, Vec<String>, bool)> {
    let ast::SetExpr::Select(s) = q.body.as_ref() else {
        return None;
    };
    let into = s.into.as_ref()?;
    let vars: Vec<String> = into
        .targets
        .iter()
        .map(|t| match t {
            ast::Expr::Identifier(i) => i.value.strip_prefix('@').map(str::to_ascii_lowercase),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let at_end = into.unlogged;
    let mut plain = q.clone();
    if let ast::SetExpr::Select(s) = plain.body.as_mut() {
        s.into = None;
    }
    Some((plain, vars, at_end))
}

/// A SELECT whose INTO OUTFILE / DUMPFILE clause `parse` cut: the query writing the file.
pub fn into_file(plan: Plan, into: crate::load::IntoFile) -> Result<Plan, SqlError> {
    match plan {
        Plan::Select(select) => Ok(util(Utility::SelectIntoFile { select, into })),
        _ => Err(SqlError::unsupported("INTO OUTFILE | DUMPFILE here")),
    }
}

fn util(u: Utility) -> Plan {
    Plan::Utility(Box::new(u))
}

#[derive(Clone, Debug)]
pub enum Plan {
    Select(Box<SelectPlan>),
    Insert(Box<InsertPlan>),
    Update(Box<UpdatePlan>),
    Delete(Box<DeletePlan>),
    Explain(Box<Plan>),
    Utility(Box<Utility>),
    /// LOAD DATA [LOCAL] INFILE (its rows come from a file: `crate::load`).
    Load(Box<crate::load::LoadPlan>),
}

impl Plan {
    /// A SELECT of one table (or none) without locking clause or subqueries: it writes
    /// nothing (what `tables` would say, without building the list).
    pub fn is_plain_read(&self) -> bool {
        matches!(self, Plan::Select(s) if s.lock.is_none()
            && s.subqueries.is_empty()
            && matches!(s.source, Source::Table { .. } | Source::Dual))
    }

    /// The tables the statement reads or writes, with true for written (for the
    /// `LOCK TABLES` checks). EXPLAIN reads none.
    pub fn tables(&self) -> Vec<(&Arc<Table>, bool)> {
        fn select<'a>(s: &'a SelectPlan, out: &mut Vec<(&'a Arc<Table>, bool)>) {
            match &s.source {
                Source::Dual => {}
                // FOR UPDATE counts as a write (1099 under a READ table lock, as MariaDB).
                Source::Table { table, .. } => {
                    out.push((table, s.lock.is_some_and(|l| l.exclusive)))
                }
                Source::Derived { plan, .. } => select(plan, out),
                Source::Virtual(_) | Source::WorkTable(_) => {}
                Source::Recursive { anchor, step, .. } => {
                    select(anchor, out);
                    select(step, out);
                }
                Source::Join(j) => {
                    for input in j.inputs() {
                        match input {
                            crate::join::JoinInput::Table(t) => out.push((t, false)),
                            crate::join::JoinInput::Derived { plan, .. } => select(plan, out),
                        }
                    }
                }
                Source::SetOperation { left, right, .. } => {
                    select(left, out);
                    select(right, out);
                }
            }
        }
        let mut out = Vec::new();
        let subqueries: &[SelectPlan] = match self {
            Plan::Select(s) => {
                select(s, &mut out);
                &s.subqueries
            }
            Plan::Insert(p) => {
                out.push((&p.table, true));
                match &p.select {
                    Some(q) => {
                        select(q, &mut out);
                        &q.subqueries
                    }
                    None => &[],
                }
            }
            Plan::Update(p) => {
                out.push((&p.table, true));
                if let Some(m) = &p.multi {
                    m.targets.iter().for_each(|t| out.push((&t.table, true)));
                    select(&m.select, &mut out);
                }
                &p.subqueries
            }
            Plan::Delete(p) => {
                out.push((&p.table, true));
                if let Some(m) = &p.multi {
                    m.targets.iter().for_each(|t| out.push((&t.table, true)));
                    select(&m.select, &mut out);
                }
                &p.subqueries
            }
            Plan::Load(p) => {
                out.push((p.table(), true));
                &[]
            }
            Plan::Explain(_) | Plan::Utility(_) => &[],
        };
        for s in subqueries {
            select(s, &mut out);
        }
        out
    }

    /// Result columns known at prepare time.
    pub fn columns(&self) -> Vec<Column> {
        match self {
            Plan::Select(s) => s.columns.clone(),
            _ => Vec::new(),
        }
    }
}

/// The plan of an `OPTIMIZE TABLE` / `CHECK TABLE` / `REPAIR TABLE` statement (`parse::table_maintenance`).
pub fn maintenance(m: &crate::parse::Maintenance, cx: &PlanCx) -> Result<Plan, SqlError> {
    let mut tables = Vec::with_capacity(m.tables.len());
    for (db, name) in &m.tables {
        let db = match db {
            Some(d) => d.clone(),
            None => cx.db()?,
        };
        let key = cx.temp_key(&db, name).unwrap_or_else(|| name.clone());
        tables.push((db, key, name.clone()));
    }
    Ok(util(match m.op {
        crate::parse::MaintenanceOp::Analyze => Utility::Analyze {
            tables: tables.into_iter().map(|(db, _, name)| (db, name)).collect(),
        },
        crate::parse::MaintenanceOp::Optimize => Utility::Optimize { tables },
        crate::parse::MaintenanceOp::Check => Utility::Check { tables },
        crate::parse::MaintenanceOp::Repair => Utility::Repair { tables },
    }))
}

pub fn build(stmt: &ast::Statement, cx: &PlanCx) -> Result<Plan, SqlError> {
    use ast::Statement as S;
    if matches!(stmt, S::Insert(_) | S::Update(_) | S::Delete(_)) {
        if let Some((on_table, check)) = crate::view::write_through(stmt, cx)? {
            let mut plan = build(&on_table, cx)?;
            if let Some(c) = check {
                let (table, slot) = match &mut plan {
                    Plan::Insert(p) => (p.table.clone(), &mut p.check),
                    Plan::Update(p) => (p.table.clone(), &mut p.check),
                    _ => return Ok(plan),
                };
                let scope = table_scope(&table, c.alias.as_deref());
                let mut compiler = Compiler::new(&scope, cx.placeholders);
                compiler.clause = "WHERE";
                *slot = Some(Box::new(ViewCheck {
                    condition: compiler.compile(&c.condition)?,
                    view: c.view,
                }));
            }
            return Ok(plan);
        }
    }
    Ok(match stmt {
        S::Query(q) => match into_vars(q) {
            Some((plain, vars, at_end)) => {
                let mut p = select(&plain, cx)?;
                p.subqueries = cx.subqueries.take();
                if p.n_out != vars.len() {
                    return Err(SqlError::new(
                        1222,
                        "21000",
                        "The used SELECT statements have a different number of columns",
                    ));
                }
                util(Utility::SelectInto {
                    select: Box::new(p),
                    vars,
                    deprecated: at_end,
                })
            }
            None => {
                let mut p = select(q, cx)?;
                p.subqueries = cx.subqueries.take();
                Plan::Select(Box::new(p))
            }
        },
        S::Insert(ins) => {
            let mut p = insert(ins, cx)?;
            if let Some(q) = &mut p.select {
                q.subqueries = cx.subqueries.take();
            }
            Plan::Insert(Box::new(p))
        }
        S::Update(u) => match update(u, cx)? {
            Plan::Update(mut p) => {
                p.subqueries = cx.subqueries.take();
                Plan::Update(p)
            }
            other => other,
        },
        S::Delete(d) => match delete(d, cx)? {
            Plan::Delete(mut p) => {
                p.subqueries = cx.subqueries.take();
                Plan::Delete(p)
            }
            other => other,
        },
        S::Explain {
            statement,
            analyze: false,
            ..
        } => {
            let inner = build(statement, cx)?;
            match inner {
                Plan::Select(_) | Plan::Update(_) | Plan::Delete(_) | Plan::Insert(_) => {
                    Plan::Explain(Box::new(inner))
                }
                _ => return Err(SqlError::unsupported("EXPLAIN of this statement")),
            }
        }
        S::ExplainTable { table_name, .. } => {
            let (db, table) = cx.qualify_table(table_name)?;
            util(Utility::ShowColumns {
                db,
                table,
                full: false,
                filter: ShowFilter::None,
            })
        }
        S::StartTransaction { modes, .. } => util(Utility::Begin {
            snapshot: modes.contains(&crate::parse::SNAPSHOT_MARK),
        }),
        S::Commit { chain: false, .. } => util(Utility::Commit),
        S::Rollback {
            chain: false,
            savepoint: None,
        } => util(Utility::Rollback),
        S::Rollback {
            chain: false,
            savepoint: Some(name),
        } => util(Utility::RollbackToSavepoint(name.value.clone())),
        S::Savepoint { name } => util(Utility::Savepoint(name.value.clone())),
        S::ReleaseSavepoint { name } => util(Utility::ReleaseSavepoint(name.value.clone())),
        S::Use(u) => {
            let name = match u {
                ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                    object_name_parts(n)?.join(".")
                }
                other => return Err(SqlError::unsupported(format!("{other}"))),
            };
            util(Utility::Use(name))
        }
        S::Set(s) => util(Utility::Set(set(s, cx)?)),
        S::ShowDatabases { show_options, .. } => {
            util(Utility::ShowDatabases(show_filter(show_options)))
        }
        S::ShowTables {
            full, show_options, ..
        } => {
            let db = match &show_options.show_in {
                Some(ast::ShowStatementIn {
                    parent_name: Some(n),
                    ..
                }) => Some(object_name_parts(n)?.join(".")),
                _ => None,
            };
            util(Utility::ShowTables {
                db,
                full: *full,
                filter: show_filter(show_options),
            })
        }
        S::ShowColumns {
            full, show_options, ..
        } => {
            let Some(ast::ShowStatementIn {
                parent_name: Some(n),
                ..
            }) = &show_options.show_in
            else {
                return Err(SqlError::syntax("SHOW COLUMNS needs FROM <table>"));
            };
            let (db, table) = cx.qualify_table(n)?;
            util(Utility::ShowColumns {
                db,
                table,
                full: *full,
                filter: show_filter(show_options),
            })
        }
        S::ShowCreate { obj_type, obj_name } => match obj_type {
            ast::ShowCreateObject::Table => {
                let (db, table) = cx.qualify_table(obj_name)?;
                util(Utility::ShowCreateTable { db, table })
            }
            ast::ShowCreateObject::View => {
                let (db, view) = cx.qualify(obj_name)?;
                util(Utility::ShowCreateView { db, view })
            }
            other => return Err(SqlError::unsupported(format!("SHOW CREATE {other}"))),
        },
        S::ShowCharset(c) => util(Utility::ShowCharset {
            filter: stmt_filter(&c.filter),
        }),
        S::ShowCollation { filter } => util(Utility::ShowCollation {
            filter: stmt_filter(filter),
        }),
        S::ShowVariables { filter, global, .. } => util(Utility::ShowVariables {
            global: *global,
            filter: stmt_filter(filter),
        }),
        S::ShowStatus { filter, global, .. } => util(Utility::ShowStatus {
            global: *global,
            filter: stmt_filter(filter),
        }),
        S::ShowProcessList { full } => util(Utility::ShowProcessList { full: *full }),
        S::ShowVariable { variable } => show_words(variable, cx)?,
        S::CreateDatabase {
            db_name,
            if_not_exists,
            ..
        } => util(Utility::CreateDatabase {
            name: object_name_parts(db_name)?.join("."),
            if_not_exists: *if_not_exists,
        }),
        S::CreateTable(ct) if ct.or_replace && ct.if_not_exists => {
            return Err(SqlError::new(
                1221,
                "HY000",
                "Incorrect usage of OR REPLACE and IF NOT EXISTS",
            ))
        }
        S::CreateTable(ct) if ct.query.is_some() => {
            let (db, name) = cx.qualify(&ct.name)?;
            if ct.like.is_some() {
                return Err(SqlError::unsupported(
                    "CREATE TABLE ... AS SELECT with LIKE",
                ));
            }
            if ct.columns.is_empty() && !ct.constraints.is_empty() {
                return Err(SqlError::unsupported(
                    "keys on the columns of a CREATE TABLE ... AS SELECT query (add them after)",
                ));
            }
            let Some(q) = &ct.query else {
                return Err(SqlError::syntax(
                    "internal: CREATE TABLE ... AS without a query",
                ));
            };
            let def = if ct.columns.is_empty() {
                ddl::check_table_name(&name)?;
                if ct
                    .constraints
                    .iter()
                    .any(|c| matches!(c, ast::TableConstraint::Check(_)))
                {
                    return Err(SqlError::unsupported(
                        "CHECK in CREATE TABLE ... AS SELECT without column definitions (add it after)",
                    ));
                }
                TableDef {
                    name,
                    columns: Vec::new(),
                    primary_key: Vec::new(),
                    indexes: Vec::new(),
                    foreign_keys: Vec::new(),
                    checks: Vec::new(),
                }
            } else {
                let mut def = ddl::table_def(ct)?;
                def.name = name;
                if !def.foreign_keys.is_empty() {
                    return Err(SqlError::unsupported(
                        "FOREIGN KEY in CREATE TABLE ... AS SELECT (add it after)",
                    ));
                }
                def
            };
            let mut select = select(q, cx)?;
            select.subqueries = cx.subqueries.take();
            unique_column_names(&select.columns)?;
            let sources = (0..select.n_out)
                .map(|i| copied_column(&select, i))
                .collect();
            util(Utility::CreateTableAs {
                db,
                def,
                select: Box::new(select),
                sources,
                if_not_exists: ct.if_not_exists,
                temporary: ct.temporary,
                or_replace: ct.or_replace,
            })
        }
        S::CreateTable(ct) => {
            let (db, name) = cx.qualify(&ct.name)?;
            let def = match &ct.like {
                // CREATE TABLE t LIKE src: src's columns and indexes, no rows.
                Some(
                    ast::CreateTableLikeKind::Plain(l) | ast::CreateTableLikeKind::Parenthesized(l),
                ) if ct.columns.is_empty() && ct.query.is_none() => {
                    // `CREATE OR REPLACE TABLE t LIKE t` would drop its own source (1066,
                    // as MariaDB).
                    if ct.or_replace && cx.qualify(&l.name)? == (db.clone(), name.clone()) {
                        return Err(SqlError::new(
                            1066,
                            "42000",
                            format!("Not unique table/alias: '{name}'"),
                        ));
                    }
                    let src = cx.table(&l.name)?;
                    let mut def = src.def.clone();
                    def.name = name;
                    for c in &mut def.columns {
                        c.fill = None;
                    }
                    // As MariaDB: the keys are copied, the foreign keys are not.
                    def.foreign_keys.clear();
                    def
                }
                _ => {
                    let mut def = ddl::table_def(ct)?;
                    crate::fk::resolve_db(&mut def, &db);
                    def
                }
            };
            util(Utility::CreateTable {
                db,
                def,
                if_not_exists: ct.if_not_exists,
                temporary: ct.temporary,
                or_replace: ct.or_replace,
            })
        }
        S::CreateView(cv) => util(crate::view::create(cv, cx)?),
        S::CreateIndex(ci) => {
            let (db, table) = cx.qualify_table(&ci.table_name)?;
            let columns = index_column_names(&ci.columns)?;
            let name = match &ci.name {
                Some(n) => object_name_parts(n)?.join("."),
                None => columns.first().cloned().unwrap_or_default(),
            };
            // MariaDB's `CREATE INDEX IF NOT EXISTS`: a note when the name is taken.
            if ci.if_not_exists
                && cx
                    .table(&ci.table_name)?
                    .def
                    .indexes
                    .iter()
                    .any(|i| i.name.eq_ignore_ascii_case(&name))
            {
                return Ok(util(Utility::Noted {
                    notes: vec![(1061, format!("Duplicate key name '{name}'"))],
                    then: Box::new(Utility::AlterNoop { db, table }),
                }));
            }
            util(Utility::CreateIndex {
                db,
                table,
                name,
                columns,
                unique: ci.unique,
            })
        }
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            temporary,
            ..
        } => match object_type {
            ast::ObjectType::Table => {
                let tables = names
                    .iter()
                    .map(|n| cx.qualify_table(n))
                    .collect::<Result<Vec<_>, _>>()?;
                util(Utility::DropTable {
                    tables,
                    if_exists: *if_exists,
                    temporary: *temporary,
                })
            }
            ast::ObjectType::View => {
                let views = names
                    .iter()
                    .map(|n| cx.qualify(n))
                    .collect::<Result<Vec<_>, _>>()?;
                util(Utility::DropView {
                    views,
                    if_exists: *if_exists,
                })
            }
            ast::ObjectType::Database | ast::ObjectType::Schema => {
                let [n] = names.as_slice() else {
                    return Err(SqlError::syntax("DROP DATABASE takes one name"));
                };
                util(Utility::DropDatabase {
                    name: object_name_parts(n)?.join("."),
                    if_exists: *if_exists,
                })
            }
            ast::ObjectType::Index => {
                let (Some(t), [n]) = (table, names.as_slice()) else {
                    return Err(SqlError::syntax(
                        "DROP INDEX needs: DROP INDEX name ON table",
                    ));
                };
                let (db, table) = cx.qualify_table(t)?;
                let name = object_name_parts(n)?.join(".");
                // `DROP INDEX IF EXISTS`: a note when there is none of that name.
                if *if_exists
                    && !cx
                        .table(t)?
                        .def
                        .indexes
                        .iter()
                        .any(|i| i.name.eq_ignore_ascii_case(&name))
                {
                    return Ok(util(Utility::Noted {
                        notes: vec![(
                            1091,
                            format!("Can't DROP INDEX `{name}`; check that it exists"),
                        )],
                        then: Box::new(Utility::AlterNoop { db, table }),
                    }));
                }
                util(Utility::DropIndex { db, table, name })
            }
            other => return Err(SqlError::unsupported(format!("DROP {other}"))),
        },
        S::AlterTable(at) => alter_table(at, cx)?,
        S::RenameTable(list) => {
            let mut pairs = Vec::with_capacity(list.len());
            for r in list {
                let (db, from) = cx.qualify_table(&r.old_name)?;
                let (to_db, to) = cx.qualify(&r.new_name)?;
                ddl::check_table_name(&to)?;
                pairs.push((db, from, to_db, to));
            }
            util(Utility::RenameTables {
                pairs,
                alter: false,
            })
        }
        S::LockTables { tables } => {
            let mut out: Vec<(String, String, TableLockMode)> = Vec::new();
            for lt in tables {
                let name = ast::ObjectName::from(vec![lt.table.clone()]);
                let mode = match lt.lock_type {
                    ast::LockTableType::Read { .. } => TableLockMode::Read,
                    ast::LockTableType::Write { .. } => TableLockMode::Write,
                };
                // A view locks the tables its query reads (as MariaDB).
                let tables: Vec<(String, String)> = if cx.is_view(&name) {
                    let Some(v) = cx.view(&name)? else {
                        return Err(SqlError::syntax("internal: view vanished"));
                    };
                    let mut p = Plan::Select(Box::new(v));
                    if let Plan::Select(s) = &mut p {
                        s.subqueries = cx.subqueries.take();
                    }
                    p.tables()
                        .into_iter()
                        .map(|(t, _)| (t.db.clone(), t.def.name.clone()))
                        .collect()
                } else {
                    vec![cx.qualify_table(&name)?]
                };
                for (db, table) in tables {
                    match out.iter_mut().find(|(d, t, _)| *d == db && *t == table) {
                        Some(e) if mode == TableLockMode::Write => e.2 = mode,
                        Some(_) => {}
                        None => out.push((db, table, mode)),
                    }
                }
            }
            util(Utility::LockTables { tables: out })
        }
        S::UnlockTables => util(Utility::UnlockTables),
        S::Flush {
            object_type,
            read_lock,
            export,
            tables,
            ..
        } => {
            use ast::FlushType as F;
            if *read_lock && matches!(object_type, F::Tables) && tables.is_empty() && !*export {
                return Ok(Plan::Utility(Box::new(Utility::FlushReadLock)));
            }
            if *read_lock || *export {
                return Err(SqlError::unsupported(stmt));
            }
            match object_type {
                // FLUSH STATUS would reset counters tierdb keeps; refused rather than ignored.
                F::Status => return Err(SqlError::unsupported(stmt)),
                _ => util(Utility::Flush),
            }
        }
        S::CreateSchema {
            schema_name: ast::SchemaName::Simple(name),
            if_not_exists,
            or_replace: false,
            ..
        } => util(Utility::CreateDatabase {
            name: object_name_parts(name)?.join("."),
            if_not_exists: *if_not_exists,
        }),
        S::Truncate(t) => {
            let [target] = t.table_names.as_slice() else {
                return Err(SqlError::unsupported("TRUNCATE of several tables"));
            };
            let (db, table) = cx.qualify_table(&target.name)?;
            util(Utility::Truncate { db, table })
        }
        S::Analyze(a) => {
            let Some(n) = &a.table_name else {
                return Err(SqlError::syntax("ANALYZE TABLE needs a table"));
            };
            util(Utility::Analyze {
                tables: vec![cx.qualify(n)?],
            })
        }
        other => {
            let text = other.to_string();
            let head: String = text
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            return Err(SqlError::unsupported(head));
        }
    })
}

/// `ALTER TABLE ... ADD [UNIQUE] INDEX name (cols)`; unnamed, it is named after its first
/// column (`_2`, `_3`, ... when taken in `def`, as MariaDB).
fn add_index(
    db: String,
    table: String,
    def: &TableDef,
    name: Option<&ast::Ident>,
    cols: &[ast::IndexColumn],
    unique: bool,
) -> Result<Plan, SqlError> {
    let columns = index_column_names(cols)?;
    let name = match name {
        Some(n) => n.value.clone(),
        None => ddl::free_index_name(def, columns.first().map_or("", String::as_str)),
    };
    Ok(util(Utility::CreateIndex {
        db,
        table,
        name,
        columns,
        unique,
    }))
}

/// The column names of an index definition (plain columns only).
fn index_column_names(cols: &[ast::IndexColumn]) -> Result<Vec<String>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(i) => Ok(i.value.clone()),
            other => Err(SqlError::unsupported(format!(
                "index on expression {other}"
            ))),
        })
        .collect()
}

/// `ALTER TABLE`: one `ADD [UNIQUE] INDEX`/`ADD [UNIQUE] KEY`, one `DROP INDEX`/`DROP KEY`, or only no-op
/// options (`ALGORITHM`, `LOCK`, and `DISABLE KEYS`/`ENABLE KEYS` as `parse` rewrites them).
fn alter_table(at: &ast::AlterTable, cx: &PlanCx) -> Result<Plan, SqlError> {
    use ast::AlterTableOperation as Op;
    let (db, table) = cx.qualify_table(&at.name)?;
    if at.on_cluster.is_some() {
        let t = cx.table(&at.name)?;
        if let Some((rest, notes)) = crate::alter_if::resolve(at, &t.def) {
            let plan = alter_table(&rest, cx)?;
            return Ok(match plan {
                Plan::Utility(then) if !notes.is_empty() => util(Utility::Noted { notes, then }),
                other => other,
            });
        }
    }
    let ops: Vec<&Op> = at
        .operations
        .iter()
        .filter(|o| !matches!(o, Op::Algorithm { .. } | Op::Lock { .. }))
        .collect();
    if !ops.is_empty() {
        let t = cx.table(&at.name)?;
        crate::check::alter_allowed(&ops, &t.def)?;
        if crate::alter::rewrites(&ops, &t.def)? {
            let mut rebuild = crate::alter::plan(&ops, &t.def)?;
            crate::fk::resolve_db(&mut rebuild.def, &db);
            return Ok(util(Utility::RebuildTable {
                db,
                table,
                rebuild: Box::new(rebuild),
            }));
        }
    }
    // `ALGORITHM = INPLACE | COPY` alone (also `FORCE` and `ENGINE = ...`, which `parse`
    // turns into it) rebuilds the table, as MariaDB's "null" ALTER TABLE does.
    let rebuild_alone = at.operations.iter().any(|o| {
        matches!(
            o,
            Op::Algorithm {
                algorithm: ast::AlterTableAlgorithm::Inplace | ast::AlterTableAlgorithm::Copy,
                ..
            }
        )
    });
    if ops.is_empty() && rebuild_alone {
        let t = cx.table(&at.name)?;
        let mut rebuild = crate::alter::plan(&[], &t.def)?;
        rebuild.force = true;
        // MariaDB reports the rows copied for a TEMPORARY table (always copied) and for
        // `FORCE` / `ENGINE` (one ALGORITHM clause after `parse`) with `ALGORITHM = COPY`.
        let algorithms: Vec<_> = at
            .operations
            .iter()
            .filter_map(|o| match o {
                Op::Algorithm { algorithm, .. } => Some(algorithm),
                _ => None,
            })
            .collect();
        rebuild.copies = t.is_temporary()
            || (algorithms.len() > 1
                && algorithms
                    .iter()
                    .any(|a| matches!(a, ast::AlterTableAlgorithm::Copy)));
        return Ok(util(Utility::RebuildTable {
            db,
            table,
            rebuild: Box::new(rebuild),
        }));
    }
    match ops.as_slice() {
        [] => Ok(util(Utility::AlterNoop { db, table })),
        [Op::AddConstraint {
            constraint: ast::TableConstraint::Index(ix),
            ..
        }] => add_index(
            db,
            table,
            &cx.table(&at.name)?.def,
            ix.name.as_ref(),
            &ix.columns,
            false,
        ),
        [Op::AddConstraint {
            constraint: ast::TableConstraint::Unique(u),
            ..
        }] => add_index(
            db,
            table,
            &cx.table(&at.name)?.def,
            u.index_name.as_ref().or(u.name.as_ref()),
            &u.columns,
            true,
        ),
        [Op::AddColumn {
            if_not_exists,
            column_def,
            ..
        }] => {
            let t = cx.table(&at.name)?;
            if *if_not_exists && t.def.column_index(&column_def.name.value).is_some() {
                return Ok(util(Utility::AlterNoop { db, table }));
            }
            let (plain, cond) = crate::check::column_check(column_def)?;
            let column = ddl::added_column(&plain, &t.def)?;
            let checks = match cond {
                Some(cond) => Some(crate::check::with_column_check(&t.def, &column, &cond)?),
                None => None,
            };
            Ok(util(Utility::AddColumn {
                db,
                table,
                column,
                checks,
            }))
        }
        [Op::RenameTable {
            table_name: ast::RenameTableNameKind::To(new) | ast::RenameTableNameKind::As(new),
        }] => {
            let (to_db, to) = cx.qualify(new)?;
            ddl::check_table_name(&to)?;
            Ok(util(Utility::RenameTables {
                pairs: vec![(db, table, to_db, to)],
                alter: true,
            }))
        }
        [Op::ModifyColumn {
            col_name,
            data_type,
            options,
            column_position,
        }] => change_column(
            at,
            cx,
            col_name,
            col_name,
            data_type,
            options,
            column_position,
        ),
        [Op::ChangeColumn {
            old_name,
            new_name,
            data_type,
            options,
            column_position,
        }] => change_column(
            at,
            cx,
            old_name,
            new_name,
            data_type,
            options,
            column_position,
        ),
        [Op::RenameColumn {
            old_column_name,
            new_column_name,
        }] => {
            let t = cx.table(&at.name)?;
            let pos = column_of(&t.def, &old_column_name.value)?;
            crate::ddl::check_rename(&t.def, pos, &new_column_name.value)?;
            let mut column = t.def.columns[pos].clone();
            column.name = new_column_name.value.clone();
            Ok(util(Utility::AlterColumn {
                db,
                table,
                pos,
                column,
                check: false,
            }))
        }
        [Op::AlterColumn { column_name, op }] => {
            let t = cx.table(&at.name)?;
            let pos = column_of(&t.def, &column_name.value)?;
            let old = &t.def.columns[pos];
            let column = match op {
                ast::AlterColumnOperation::SetDefault { value } => ddl::with_default(old, value)?,
                ast::AlterColumnOperation::DropDefault => {
                    let mut c = old.clone();
                    c.default = None;
                    c
                }
                other => return Err(SqlError::unsupported(format!("ALTER COLUMN ... {other}"))),
            };
            Ok(util(Utility::AlterColumn {
                db,
                table,
                pos,
                column,
                check: false,
            }))
        }
        [Op::AddConstraint {
            constraint: ast::TableConstraint::Check(k),
            ..
        }] => {
            let t = cx.table(&at.name)?;
            let checks = crate::check::added(&t.def, k)?;
            Ok(util(Utility::SetChecks {
                db,
                table,
                added: Some(checks.len() - 1),
                checks,
                missing: None,
            }))
        }
        [Op::DropConstraint {
            name, if_exists, ..
        }] => {
            let t = cx.table(&at.name)?;
            let before = t.def.checks.len();
            let checks: Vec<_> = t
                .def
                .checks
                .iter()
                // (A column's own check is not a constraint DROP CONSTRAINT can name.)
                .filter(|c| c.column_level || !c.name.eq_ignore_ascii_case(&name.value))
                .cloned()
                .collect();
            if checks.len() < before {
                return Ok(util(Utility::SetChecks {
                    db,
                    table,
                    checks,
                    added: None,
                    missing: None,
                }));
            }
            if t.def
                .foreign_keys
                .iter()
                .any(|f| f.name.eq_ignore_ascii_case(&name.value))
            {
                return Err(SqlError::unsupported(
                    "DROP CONSTRAINT of a foreign key (use DROP FOREIGN KEY)",
                ));
            }
            let missing = format!(
                "Can't DROP CONSTRAINT `{}`; check that it exists",
                name.value
            );
            if *if_exists {
                return Ok(util(Utility::SetChecks {
                    db,
                    table,
                    checks,
                    added: None,
                    missing: Some(missing),
                }));
            }
            Err(SqlError::new(1091, "42000", missing))
        }
        [Op::DropIndex { name }] => Ok(util(Utility::DropIndex {
            db,
            table,
            name: name.value.clone(),
        })),
        [one] => Err(SqlError::unsupported(format!("ALTER TABLE ... {one}"))),
        _ => Err(SqlError::syntax(
            "internal: several ALTER TABLE changes not planned",
        )),
    }
}

/// Position of column `name` of `def` (1054 naming the table, as MariaDB's ALTER does).
fn column_of(def: &tierdb_engine::TableDef, name: &str) -> Result<usize, SqlError> {
    def.column_index(name).ok_or_else(|| {
        SqlError::new(
            1054,
            "42S22",
            format!("Unknown column '{name}' in '{}'", def.name),
        )
    })
}

/// `ALTER TABLE ... MODIFY [COLUMN] c type ...` (`old` = `new`) or `CHANGE [COLUMN] old new
/// type ...`: the new definition replaces the old one; a type or a NOT NULL that some stored
/// value might not satisfy asks for every value to be checked first.
#[allow(clippy::too_many_arguments)]
fn change_column(
    at: &ast::AlterTable,
    cx: &PlanCx,
    old: &ast::Ident,
    new: &ast::Ident,
    data_type: &ast::DataType,
    options: &[ast::ColumnOption],
    position: &Option<ast::MySQLColumnPosition>,
) -> Result<Plan, SqlError> {
    debug_assert!(position.is_none(), "a change of place is a rebuild");
    let (db, table) = cx.qualify_table(&at.name)?;
    let t = cx.table(&at.name)?;
    let pos = column_of(&t.def, &old.value)?;
    let c = ast::ColumnDef {
        name: new.clone(),
        data_type: data_type.clone(),
        options: options
            .iter()
            .map(|o| ast::ColumnOptionDef {
                name: None,
                option: o.clone(),
            })
            .collect(),
    };
    let column = ddl::changed_column(&c, &t.def, pos)?;
    crate::fk::child_column_kept(&t.def, pos, &column)?;
    let before = &t.def.columns[pos];
    let check = column.ty != before.ty || (before.nullable && !column.nullable);
    Ok(util(Utility::AlterColumn {
        db,
        table,
        pos,
        column,
        check,
    }))
}

fn show_filter(o: &ast::ShowStatementOptions) -> ShowFilter {
    match &o.filter_position {
        Some(ast::ShowStatementFilterPosition::Infix(f))
        | Some(ast::ShowStatementFilterPosition::Suffix(f)) => stmt_filter(&Some(f.clone())),
        None => ShowFilter::None,
    }
}

fn stmt_filter(f: &Option<ast::ShowStatementFilter>) -> ShowFilter {
    match f {
        Some(ast::ShowStatementFilter::Like(s)) => ShowFilter::Like(s.clone()),
        Some(ast::ShowStatementFilter::Where(e)) => ShowFilter::Where(Box::new(e.clone())),
        Some(ast::ShowStatementFilter::ILike(s)) => ShowFilter::Like(s.clone()),
        Some(ast::ShowStatementFilter::NoKeyword(s)) => ShowFilter::Like(s.clone()),
        None => ShowFilter::None,
    }
}

/// The `LIMIT [offset,] count` of SHOW WARNINGS / ERRORS, as (offset, count).
fn show_limit(words: &[&str]) -> Result<Option<(usize, usize)>, SqlError> {
    let num = |t: &str| {
        t.parse::<usize>()
            .map_err(|_| SqlError::syntax(format!("a number was expected near '{t}'")))
    };
    // `parse::show_warnings_limit` hands the numbers on as (offset, count).
    match words {
        [] => Ok(None),
        ["LIMIT", o, n] => Ok(Some((num(o)?, num(n)?))),
        _ => Err(SqlError::syntax(format!(
            "You have an error in your SQL syntax near '{}'",
            words.join(" ")
        ))),
    }
}

/// SHOW forms sqlparser does not model (`SHOW INDEX FROM t`, `SHOW WARNINGS`, ...).
fn show_words(words: &[ast::Ident], cx: &PlanCx) -> Result<Plan, SqlError> {
    let w: Vec<String> = words.iter().map(|i| i.value.to_ascii_uppercase()).collect();
    let raw: Vec<&str> = words.iter().map(|i| i.value.as_str()).collect();
    let name_at = |i: usize| -> Result<(String, String), SqlError> {
        let t = raw
            .get(i)
            .ok_or_else(|| SqlError::syntax("missing table name"))?;
        // sqlparser hands `db.t` over as two words (the dot is dropped).
        let qualified = w
            .get(i + 1)
            .is_some_and(|k| !["FROM", "IN", "WHERE", "LIKE"].contains(&k.as_str()));
        let (mut db, mut table) = match t.split_once('.') {
            Some((d, t)) => (Some(d.to_string()), t.to_string()),
            None if qualified => (Some(t.to_string()), raw[i + 1].to_string()),
            None => (None, t.to_string()),
        };
        if let (Some(kw), Some(d)) = (w.get(i + 1), raw.get(i + 2)) {
            if kw == "FROM" || kw == "IN" {
                db = Some(d.to_string());
            }
        }
        if db.is_none() {
            db = Some(cx.db()?);
        }
        table = table.trim_matches('`').to_string();
        Ok((db.unwrap_or_default(), table))
    };
    let ws: Vec<&str> = w.iter().map(|s| s.as_str()).collect();
    Ok(util(match ws.as_slice() {
        ["WARNINGS", rest @ ..] => Utility::ShowWarnings {
            limit: show_limit(rest)?,
        },
        ["ERRORS", rest @ ..] => Utility::ShowErrors {
            limit: show_limit(rest)?,
        },
        ["COUNT", "WARNINGS"] => Utility::ShowWarningCount { errors: false },
        ["COUNT", "ERRORS"] => Utility::ShowWarningCount { errors: true },
        ["ENGINES"] | ["STORAGE", "ENGINES"] => Utility::ShowEngines,
        ["FUNCTION" | "PROCEDURE", "STATUS", ..] => {
            Utility::ShowNone(crate::show::NoneOf::Routines)
        }
        ["TRIGGERS" | "EVENTS", rest @ ..] => {
            // Of one database: the one named (which must exist) or the current one (1046).
            match rest {
                ["FROM" | "IN", ..] => {
                    let db = raw.get(2).copied().unwrap_or_default();
                    if !cx.engine.database_exists(db) {
                        return Err(SqlError::new(
                            1049,
                            "42000",
                            format!("Unknown database '{db}'"),
                        ));
                    }
                }
                _ => {
                    cx.db()?;
                }
            }
            Utility::ShowNone(match ws[0] {
                "TRIGGERS" => crate::show::NoneOf::Triggers,
                _ => crate::show::NoneOf::Events,
            })
        }
        ["SLAVE" | "REPLICA", "STATUS", ..] => Utility::ShowNone(crate::show::NoneOf::Replica),
        ["ALL", "SLAVES" | "REPLICAS", "STATUS", ..] => {
            Utility::ShowNone(crate::show::NoneOf::AllReplicas)
        }
        ["INDEX" | "INDEXES" | "KEYS", "FROM" | "IN", ..] => {
            let (db, table) = name_at(2)?;
            let table = cx.temp_key(&db, &table).unwrap_or(table);
            Utility::ShowIndex { db, table }
        }
        ["TABLE", "STATUS", rest @ ..] => {
            let db = match rest {
                ["FROM" | "IN", _, ..] => Some(raw[3].to_string()),
                _ => None,
            };
            let filter = match rest.iter().position(|x| *x == "LIKE") {
                Some(p) => ShowFilter::Like(
                    raw.get(2 + p + 1)
                        .map(|s| s.trim_matches('\'').to_string())
                        .unwrap_or_default(),
                ),
                None => ShowFilter::None,
            };
            Utility::ShowTableStatus { db, filter }
        }
        ["CREATE", "DATABASE" | "SCHEMA", rest @ ..] => {
            let if_not_exists = matches!(rest, ["IF", "NOT", "EXISTS", _]);
            let n = raw
                .get(if if_not_exists { 5 } else { 2 })
                .ok_or_else(|| SqlError::syntax("SHOW CREATE DATABASE needs a name"))?;
            Utility::ShowCreateDatabase {
                name: n.to_string(),
                if_not_exists,
            }
        }
        _ => return Err(SqlError::unsupported(format!("SHOW {}", raw.join(" ")))),
    }))
}

fn set(s: &ast::Set, cx: &PlanCx) -> Result<Vec<SetItem>, SqlError> {
    let empty = Scope::default();
    let compile_value = |e: &ast::Expr| -> Result<Option<Expr>, SqlError> {
        match e {
            ast::Expr::Identifier(i)
                if i.value.eq_ignore_ascii_case("DEFAULT") && i.quote_style.is_none() =>
            {
                Ok(None)
            }
            // `SET autocommit = ON`, `SET sql_mode = TRADITIONAL`: bare words are strings.
            ast::Expr::Identifier(i) if !i.value.starts_with('@') => {
                Ok(Some(Expr::Const(Value::Bytes(i.value.as_bytes().to_vec()))))
            }
            other => Ok(Some(Compiler::new(&empty, cx.placeholders).compile(other)?)),
        }
    };
    let target = |scope: &Option<ast::ContextModifier>,
                  name: &ast::ObjectName|
     -> Result<SetTarget, SqlError> {
        let parts = object_name_parts(name)?;
        let mut global = match scope {
            Some(ast::ContextModifier::Global) => Some(true),
            Some(ast::ContextModifier::Session) | Some(ast::ContextModifier::Local) => Some(false),
            None => None,
        };
        let mut names: Vec<String> = parts;
        if let Some(first) = names.first().cloned() {
            if let Some(rest) = first.strip_prefix("@@") {
                let r = rest.to_ascii_lowercase();
                match r.as_str() {
                    "global" if names.len() > 1 => {
                        global = Some(true);
                        names.remove(0);
                    }
                    "session" | "local" if names.len() > 1 => {
                        global = Some(false);
                        names.remove(0);
                    }
                    _ => names[0] = rest.to_string(),
                }
            } else if let Some(u) = first.strip_prefix('@') {
                return Ok(SetTarget::User(u.to_ascii_lowercase()));
            }
        }
        Ok(SetTarget::System {
            name: names.join(".").to_ascii_lowercase(),
            global,
        })
    };
    Ok(match s {
        ast::Set::SingleAssignment {
            scope,
            variable,
            values,
            ..
        } => {
            let [v] = values.as_slice() else {
                return Err(SqlError::syntax("SET takes one value per variable"));
            };
            vec![SetItem {
                target: target(scope, variable)?,
                value: compile_value(v)?,
            }]
        }
        ast::Set::MultipleAssignments { assignments } => assignments
            .iter()
            .map(|a| {
                Ok(SetItem {
                    target: target(&a.scope, &a.name)?,
                    value: compile_value(&a.value)?,
                })
            })
            .collect::<Result<Vec<_>, SqlError>>()?,
        ast::Set::SetNames { charset_name, .. } => {
            vec![SetItem {
                target: SetTarget::Names {
                    charset: charset_name.value.clone(),
                },
                value: None,
            }]
        }
        ast::Set::SetNamesDefault {} => vec![SetItem {
            target: SetTarget::Names {
                charset: "utf8mb4".into(),
            },
            value: None,
        }],
        ast::Set::SetTransaction {
            modes,
            session,
            snapshot,
        } => {
            let scope = match snapshot {
                None if *session => IsolationScope::Session,
                None => IsolationScope::Next,
                Some(v) if v.value == crate::parse::GLOBAL_MARK => IsolationScope::Global,
                Some(_) => return Err(SqlError::unsupported("SET TRANSACTION SNAPSHOT")),
            };
            let mut out = Vec::new();
            for m in modes {
                match m {
                    ast::TransactionMode::IsolationLevel(l) => {
                        let level = match l {
                            ast::TransactionIsolationLevel::ReadUncommitted => "READ-UNCOMMITTED",
                            ast::TransactionIsolationLevel::ReadCommitted => "READ-COMMITTED",
                            ast::TransactionIsolationLevel::RepeatableRead => "REPEATABLE-READ",
                            ast::TransactionIsolationLevel::Serializable => "SERIALIZABLE",
                            other => {
                                return Err(SqlError::unsupported(format!(
                                    "isolation level {other}"
                                )))
                            }
                        };
                        out.push(SetItem {
                            target: SetTarget::Isolation {
                                level: level.into(),
                                scope,
                            },
                            value: None,
                        });
                    }
                    ast::TransactionMode::AccessMode(ast::TransactionAccessMode::ReadWrite) => {}
                    other => return Err(SqlError::unsupported(format!("SET TRANSACTION {other}"))),
                }
            }
            out
        }
        ast::Set::SetTimeZone { value, .. } => {
            vec![SetItem {
                target: SetTarget::System {
                    name: "time_zone".into(),
                    global: None,
                },
                value: compile_value(value)?,
            }]
        }
        other => return Err(SqlError::unsupported(format!("{other}"))),
    })
}

// ---------------------------------------------------------------------------------------
// SELECT

/// Bit i set: `exprs[i]` (i < 64) is a binary column of `scope` (see `coerce::OrdRow`).
fn binary_mask(exprs: &[Expr], scope: &Scope) -> u64 {
    exprs
        .iter()
        .take(64)
        .enumerate()
        .filter(|(_, e)| scope.is_binary(e))
        .fold(0, |m, (i, _)| m | 1 << i)
}

impl SelectPlan {
    /// Bit i set: output column i (i < 64) holds a binary column's strings (DISTINCT and
    /// UNION compare them as bytes).
    pub fn output_binary(&self) -> u64 {
        self.columns
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, c)| c.binary)
            .fold(0, |m, (i, _)| m | 1 << i)
    }
}

fn column_meta(def: &ColumnDef, table: &str, db: &str, primary: bool) -> Column {
    let (kind, length, decimals, is_text) = match &def.ty {
        ColumnType::Int { bytes, unsigned } => {
            let (k, l) = match bytes {
                1 => (ColumnKind::Tiny, 4),
                2 => (ColumnKind::Short, 6),
                3 => (ColumnKind::Int24, 9),
                4 => (ColumnKind::Long, 11),
                _ => (ColumnKind::LongLong, 20),
            };
            (k, if *unsigned { l - 1 } else { l }, 0, false)
        }
        ColumnType::Float => (ColumnKind::Float, 12, 31, false),
        ColumnType::Double => (ColumnKind::Double, 22, 31, false),
        ColumnType::Decimal {
            precision, scale, ..
        } => (
            ColumnKind::NewDecimal,
            // (Digits, point and sign: `ddl::column_for_values` reads the digits back.)
            u32::from(*precision) + 2,
            *scale,
            false,
        ),
        // Text lengths are in characters (the protocol announces utf8mb4, 4 bytes each); a
        // TEXT type's limit is in bytes, which MySQL announces like characters.
        ColumnType::Char(n) => (ColumnKind::String, *n, 0, true),
        ColumnType::VarChar(n) => (ColumnKind::VarString, *n, 0, true),
        ColumnType::Text(s) => (
            ColumnKind::Blob,
            u32::try_from(s.max_bytes()).unwrap_or(u32::MAX),
            0,
            true,
        ),
        ColumnType::Enum(m) => (ColumnKind::String, crate::coerce::enum_width(m), 0, true),
        ColumnType::Set(m) => (ColumnKind::String, crate::coerce::set_width(m), 0, true),
        ColumnType::Blob(s) => (
            ColumnKind::Blob,
            u32::try_from(s.max_bytes()).unwrap_or(u32::MAX),
            0,
            false,
        ),
        ColumnType::Binary(n) => (ColumnKind::String, *n, 0, false),
        ColumnType::VarBinary(n) => (ColumnKind::VarString, *n, 0, false),
        ColumnType::Date => (ColumnKind::Date, 10, 0, false),
        ColumnType::Year => (ColumnKind::Year, 4, 0, false),
        ColumnType::Bit(n) => (ColumnKind::Bit, u32::from(*n), 0, false),
        ColumnType::Time(n) => (ColumnKind::Time, crate::coerce::time_width(*n), *n, false),
        ColumnType::DateTime(n) => (
            ColumnKind::DateTime,
            crate::coerce::datetime_width(*n) as u32,
            *n,
            false,
        ),
        ColumnType::Timestamp(n) => (
            ColumnKind::Timestamp,
            crate::coerce::datetime_width(*n) as u32,
            *n,
            false,
        ),
    };
    Column {
        name: def.name.clone(),
        table: table.to_string(),
        schema: db.to_string(),
        kind,
        length,
        decimals,
        unsigned: matches!(
            def.ty,
            ColumnType::Int { unsigned: true, .. } | ColumnType::Decimal { unsigned: true, .. }
        ),
        not_null: !def.nullable,
        primary_key: primary,
        is_text,
        binary: def.collation == tierdb_engine::Collation::Binary
            && matches!(
                def.ty,
                ColumnType::Char(_)
                    | ColumnType::VarChar(_)
                    | ColumnType::Text(_)
                    | ColumnType::Blob(_)
                    | ColumnType::Binary(_)
                    | ColumnType::VarBinary(_)
                    | ColumnType::Enum(_)
                    | ColumnType::Set(_)
            ),
        members: match &def.ty {
            ColumnType::Enum(m) | ColumnType::Set(m) => Some(crate::compile::Members {
                names: m.as_slice().into(),
                set: matches!(def.ty, ColumnType::Set(_)),
            }),
            _ => None,
        },
    }
}

pub fn sql_type_of(ty: &ColumnType) -> SqlType {
    match ty {
        ColumnType::Int { .. } | ColumnType::Year | ColumnType::Bit(_) => SqlType::Int,
        ColumnType::Float | ColumnType::Double => SqlType::Double,
        ColumnType::Decimal { scale, .. } => SqlType::Decimal(*scale),
        ColumnType::Date => SqlType::Date,
        ColumnType::DateTime(_) | ColumnType::Timestamp(_) => SqlType::DateTime,
        ColumnType::Time(_) => SqlType::Time,
        _ => SqlType::Text,
    }
}

/// Metadata for a computed column of static type `t`.
pub fn computed_column(name: String, t: SqlType) -> Column {
    match t {
        SqlType::Int => Column::bigint(name),
        SqlType::Double => Column {
            kind: ColumnKind::Double,
            length: 23,
            decimals: 31,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
        SqlType::Decimal(s) => Column {
            kind: ColumnKind::NewDecimal,
            length: 67,
            decimals: s,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
        SqlType::Text => Column::text(name),
        SqlType::Date => Column {
            kind: ColumnKind::Date,
            length: 10,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
        SqlType::DateTime => Column {
            kind: ColumnKind::DateTime,
            length: 19,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
        SqlType::Time => Column {
            kind: ColumnKind::Time,
            length: 10,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
        SqlType::Null => Column {
            kind: ColumnKind::Null,
            length: 0,
            is_text: false,
            binary: false,
            ..Column::text(name)
        },
    }
}

pub fn table_scope(t: &Table, alias: Option<&str>) -> Scope {
    def_scope(&t.def, &t.db, alias)
}

pub(crate) fn def_scope(def: &TableDef, db: &str, alias: Option<&str>) -> Scope {
    let quals: Vec<String> = match alias {
        Some(a) => vec![a.to_string()],
        None => vec![def.name.clone(), format!("{}.{}", db, def.name)],
    };
    Scope {
        cols: def
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeCol {
                merged_away: false,
                base: true,
                name: c.name.clone(),
                qualifiers: quals.clone(),
                ty: sql_type_of(&c.ty),
                meta: column_meta(c, &def.name, db, def.primary_key.contains(&i)),
            })
            .collect(),
    }
}

fn hints_of(dirs: &[ast::TableIndexDirective]) -> Result<Hints, SqlError> {
    let mut h = Hints::default();
    for d in dirs {
        match d {
            ast::TableIndexDirective::MySql(x) => {
                let names: Vec<String> = x.index_names.iter().map(|i| i.value.clone()).collect();
                match x.hint_type {
                    ast::TableIndexHintType::Force => {
                        h.force = true;
                        h.only.get_or_insert_with(Vec::new).extend(names);
                    }
                    ast::TableIndexHintType::Use => {
                        h.only.get_or_insert_with(Vec::new).extend(names)
                    }
                    ast::TableIndexHintType::Ignore => h.ignore.extend(names),
                }
            }
            other => return Err(SqlError::unsupported(format!("index directive {other}"))),
        }
    }
    Ok(h)
}

fn check_hint_names(h: &Hints, def: &TableDef) -> Result<(), SqlError> {
    for n in h.only.iter().flatten().chain(h.ignore.iter()) {
        if !n.eq_ignore_ascii_case("PRIMARY")
            && !def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
        {
            return Err(SqlError::new(
                1176,
                "42000",
                format!("Key '{n}' doesn't exist in table '{}'", def.name),
            ));
        }
    }
    Ok(())
}

fn limit_exprs(q: &ast::Query, cx: &PlanCx) -> Result<(Option<Expr>, Option<Expr>), SqlError> {
    let empty = Scope::default();
    let mut c = Compiler::new(&empty, cx.placeholders);
    let mut one = |e: &ast::Expr| -> Result<Expr, SqlError> {
        let x = c.compile(e)?;
        match &x {
            Expr::Const(Value::Int(i)) if *i >= 0 => Ok(x),
            // `LIMIT 18446744073709551615`: the usual "every row" after an OFFSET.
            Expr::Const(Value::UInt(_)) | Expr::Param(_) => Ok(x),
            _ => Err(SqlError::syntax(format!(
                "LIMIT/OFFSET must be a non-negative integer, not {e}"
            ))),
        }
    };
    Ok(match &q.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset {
            limit,
            offset,
            limit_by,
        }) => {
            if !limit_by.is_empty() {
                return Err(SqlError::unsupported("LIMIT BY"));
            }
            let l = match limit {
                Some(e) => Some(one(e)?),
                None => None,
            };
            let o = match offset {
                Some(o) => Some(one(&o.value)?),
                None => None,
            };
            (l, o)
        }
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(one(limit)?), Some(one(offset)?))
        }
    })
}

/// The plan of one operand of a set operation (`outer` gives the query fields to copy).
fn set_operation(
    outer: &ast::Query,
    body: &ast::SetExpr,
    cx: &PlanCx,
) -> Result<SelectPlan, SqlError> {
    match body {
        ast::SetExpr::SetOperation {
            op:
                op @ (ast::SetOperator::Union | ast::SetOperator::Intersect | ast::SetOperator::Except),
            set_quantifier,
            left,
            right,
        } => {
            let op = match op {
                ast::SetOperator::Intersect => SetOp::Intersect,
                ast::SetOperator::Except => SetOp::Except,
                _ => SetOp::Union,
            };
            let distinct = match set_quantifier {
                ast::SetQuantifier::All => false,
                ast::SetQuantifier::Distinct | ast::SetQuantifier::None => true,
                other => return Err(SqlError::unsupported(format!("{} {other}", op.sql()))),
            };
            let l = set_operation(outer, left, cx)?;
            let r = set_operation(outer, right, cx)?;
            if l.n_out != r.n_out {
                return Err(SqlError::new(
                    1222,
                    "21000",
                    "The used SELECT statements have a different number of columns",
                ));
            }
            let n = l.n_out;
            // The first operand names the columns; a column whose operands disagree on the
            // kind is sent as text.
            let mut columns = Vec::with_capacity(n);
            let mut conform = Vec::with_capacity(n);
            for i in 0..n {
                let a = &l.columns[i];
                let b = &r.columns[i];
                let (ta, tb) = (kind_type(a), kind_type(b));
                let numeric =
                    |t: SqlType| matches!(t, SqlType::Int | SqlType::Double | SqlType::Decimal(_));
                if a.kind == b.kind && a.kind == ColumnKind::NewDecimal {
                    // DECIMALs (kept as text) in the larger scale, so 1.0 and 1.00 are one
                    // value and print as MariaDB merges them (1.50).
                    let mut c = a.clone();
                    c.not_null = a.not_null && b.not_null;
                    c.decimals = a.decimals.max(b.decimals);
                    c.length = a.length.max(b.length);
                    c.table = String::new();
                    conform.push(Some((c.kind, c.decimals)));
                    columns.push(c);
                } else if a.kind == b.kind {
                    let mut c = a.clone();
                    c.not_null = a.not_null && b.not_null;
                    c.length = a.length.max(b.length);
                    c.table = String::new();
                    // (An ENUM / SET only when both sides have the same members.)
                    if a.members != b.members {
                        c.members = None;
                    }
                    columns.push(c);
                    conform.push(None);
                } else if b.kind == ColumnKind::Null || a.kind == ColumnKind::Null {
                    // A NULL literal takes the other operand's kind.
                    let mut c = if a.kind == ColumnKind::Null {
                        b.clone()
                    } else {
                        a.clone()
                    };
                    c.name = a.name.clone();
                    c.not_null = false;
                    c.table = String::new();
                    // (An ENUM / SET only when both sides have the same members.)
                    if a.members != b.members {
                        c.members = None;
                    }
                    conform.push(None);
                    columns.push(c);
                } else if numeric(ta) && numeric(tb) {
                    // Numbers of different kinds: DOUBLE if either is, else DECIMAL with the
                    // larger scale (integers have scale 0), as MariaDB merges them.
                    let t = match (ta, tb) {
                        (SqlType::Double, _) | (_, SqlType::Double) => SqlType::Double,
                        (SqlType::Decimal(x), SqlType::Decimal(y)) => SqlType::Decimal(x.max(y)),
                        (SqlType::Decimal(x), _) | (_, SqlType::Decimal(x)) => SqlType::Decimal(x),
                        _ => SqlType::Int,
                    };
                    let mut c = computed_column(a.name.clone(), t);
                    c.not_null = a.not_null && b.not_null;
                    conform.push(Some((c.kind, c.decimals)));
                    columns.push(c);
                } else {
                    let c = Column::text(a.name.clone());
                    conform.push(Some((c.kind, u8::MAX)));
                    columns.push(c);
                }
            }
            Ok(identity_plan(
                Source::SetOperation {
                    op,
                    left: Box::new(l),
                    right: Box::new(r),
                    distinct,
                },
                columns,
                conform,
            ))
        }
        ast::SetExpr::SetOperation { op, .. } => Err(SqlError::unsupported(format!("{op}"))),
        ast::SetExpr::Query(q) => select(q, cx),
        other => {
            let mut q = outer.clone();
            *q.body = other.clone();
            q.order_by = None;
            q.limit_clause = None;
            q.locks = Vec::new();
            select(&q, cx)
        }
    }
}

/// The ORDER BY expressions of a query (none without ORDER BY).
fn order_by_list(q: &ast::Query) -> Result<Vec<ast::OrderByExpr>, SqlError> {
    match &q.order_by {
        None => Ok(Vec::new()),
        Some(ob) => match &ob.kind {
            ast::OrderByKind::Expressions(v) => Ok(v.clone()),
            ast::OrderByKind::All(_) => Err(SqlError::unsupported("ORDER BY ALL")),
        },
    }
}

/// Whether an ORDER BY key is descending.
pub(crate) fn is_desc(o: &ast::OrderByExpr) -> Result<bool, SqlError> {
    match &o.options.sort {
        Some(ast::OrderBySort::Desc) => Ok(true),
        Some(ast::OrderBySort::Asc) | None => Ok(false),
        Some(_) => Err(SqlError::unsupported("ORDER BY ... USING")),
    }
}

/// ORDER BY and LIMIT of a UNION: over its output columns (by name or position).
fn union_order_and_limit(p: &mut SelectPlan, q: &ast::Query, cx: &PlanCx) -> Result<(), SqlError> {
    let scope = Scope {
        cols: p
            .columns
            .iter()
            .map(|c| ScopeCol {
                merged_away: false,
                base: false,
                name: c.name.clone(),
                qualifiers: Vec::new(),
                ty: kind_type(c),
                // (A UNION's column is no ENUM: its rows come from several.)
                meta: Column {
                    members: None,
                    ..c.clone()
                },
            })
            .collect(),
    };
    let order_by = order_by_list(q)?;
    for o in &order_by {
        let desc = is_desc(o)?;
        let c = Compiler::new(&scope, cx.placeholders);
        let x = match &o.expr {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                Expr::Col(position_of(&v.value, p.n_out, "ORDER BY")?)
            }
            e => {
                let mut c = Compiler::new(&scope, cx.placeholders);
                c.clause = "ORDER BY";
                c.compile(e)?
            }
        };
        // A TIME orders by its microseconds (`Compiler::order_key`).
        let pos = match (c.order_key(&x), x) {
            (None, Expr::Col(i)) if i < p.n_out => i,
            (key, x) => {
                p.project.push(key.unwrap_or(x));
                p.project.len() - 1
            }
        };
        let numeric = p
            .project
            .get(pos)
            .is_some_and(|e| matches!(e.sql_type(&|i| scope.type_of(i)), SqlType::Decimal(_)));
        let binary = p.project.get(pos).is_some_and(|e| scope.is_binary(e));
        p.order.push(OrderKey {
            pos,
            desc,
            numeric,
            binary,
        });
    }
    let (limit, offset) = limit_exprs(q, cx)?;
    p.limit = limit;
    p.offset = offset;
    p.finish();
    Ok(())
}

pub fn select(q: &ast::Query, cx: &PlanCx) -> Result<SelectPlan, SqlError> {
    let Some(with) = &q.with else {
        return select_body(q, cx);
    };
    let base = cx.ctes.borrow().len();
    let mut added: Vec<Cte> = Vec::with_capacity(with.cte_tables.len());
    for c in &with.cte_tables {
        if c.from.is_some() || c.materialized.is_some() {
            return Err(SqlError::unsupported("WITH ... AS [NOT] MATERIALIZED"));
        }
        let name = c.alias.name.value.clone();
        if added.iter().any(|a| a.name.eq_ignore_ascii_case(&name)) {
            return Err(SqlError::new(
                4004,
                "HY000",
                format!("Duplicate query name `{name}` in WITH clause"),
            ));
        }
        added.push(Cte {
            recursive: with.recursive && names_table(&c.query.body, &name, false),
            work: None,
            name,
            query: (*c.query).clone(),
            columns: c
                .alias
                .columns
                .iter()
                .map(|d| d.name.value.clone())
                .collect(),
        });
    }
    // Each entry is planned once here, seeing the entries before it, so an error in one
    // the statement never reads is still reported (as MariaDB does).
    let mut r = Ok(());
    for c in added {
        if r.is_ok() {
            // (The trial plan's subqueries are dropped again: references plan it anew.)
            let n = cx.subqueries.borrow().len();
            let planned = if c.recursive {
                cx.recursive_cte(&c)
            } else {
                cx.derived(&c.query)
            };
            r = planned
                .and_then(|p| derived_source(p, c.name.clone(), &c.columns))
                .map(|_| ());
            cx.subqueries.borrow_mut().truncate(n);
        }
        cx.ctes.borrow_mut().push(c);
    }
    let r = r.and_then(|()| select_body(q, cx));
    cx.ctes.borrow_mut().truncate(base);
    r
}

/// `select` of a query whose WITH entries (if any) are in scope.
fn select_body(q: &ast::Query, cx: &PlanCx) -> Result<SelectPlan, SqlError> {
    if q.fetch.is_some() || q.for_clause.is_some() || !q.pipe_operators.is_empty() {
        return Err(SqlError::unsupported("FETCH/FOR clauses"));
    }
    let lock = locking_read(&q.locks)?;
    let s = match &*q.body {
        ast::SetExpr::Select(s) => s,
        ast::SetExpr::Query(inner) if q.order_by.is_none() && q.limit_clause.is_none() => {
            let mut p = select(inner, cx)?;
            if let Some(l) = lock {
                set_lock(&mut p, l, &q.locks, None)?;
            }
            return Ok(p);
        }
        ast::SetExpr::SetOperation { .. } => {
            let mut p = set_operation(q, &q.body, cx)?;
            if lock.is_some() {
                return Err(SqlError::unsupported("locking reads of a UNION"));
            }
            union_order_and_limit(&mut p, q, cx)?;
            // `SELECT SQL_CALC_FOUND_ROWS ... UNION ...`: the whole query's rows count.
            let mut first = &*q.body;
            while let ast::SetExpr::SetOperation { left, .. } = first {
                first = left;
            }
            p.calc_found_rows = matches!(first, ast::SetExpr::Select(s)
                if s.select_modifiers.as_ref().is_some_and(|m| m.sql_calc_found_rows));
            return Ok(p);
        }
        other => return Err(SqlError::unsupported(format!("query form {other}"))),
    };
    if s.into.is_some() {
        return Err(SqlError::unsupported("SELECT ... INTO"));
    }
    let calc_found_rows = s
        .select_modifiers
        .as_ref()
        .is_some_and(|m| m.sql_calc_found_rows);
    if !s.named_window.is_empty() {
        let mut resolved = q.clone();
        resolve_named_windows(&mut resolved)?;
        return select_body(&resolved, cx);
    }
    if s.top.is_some() || !s.lateral_views.is_empty() || s.qualify.is_some() {
        return Err(SqlError::unsupported("this SELECT clause"));
    }
    let distinct = match &s.distinct {
        None | Some(ast::Distinct::All) => false,
        Some(ast::Distinct::Distinct) => true,
        Some(other) => return Err(SqlError::unsupported(format!("{other}"))),
    };

    // FROM (a parenthesized join first in a FROM item, as MariaDB writes views, unwrapped)
    let unwrapped = unwrap_leading_joins(&s.from);
    let from = unwrapped.as_deref().unwrap_or(&s.from);
    // `FROM DUAL` (the unquoted keyword alone) is no FROM at all.
    let from = if is_dual(from) { &[] } else { from };
    let (mut source_kind, scope) = match from {
        [] => (SourceKind::Dual, Scope::default()),
        several if several.len() > 1 || !several[0].joins.is_empty() => join_sources(several, cx)?,
        [twj] => match derived_factor(&twj.relation, cx)? {
            // A derived table or a WITH query.
            Some((inner, a, scope)) => (SourceKind::Derived(inner, a), scope),
            None => match &twj.relation {
                ast::TableFactor::Table {
                    name,
                    alias,
                    args: None,
                    ..
                } => {
                    if let Some(info) = cx.info_table(name)? {
                        let alias_name = alias.as_ref().map(|a| a.name.value.clone());
                        let scope = def_scope(&info.def, info.schema, alias_name.as_deref());
                        (SourceKind::Virtual(Box::new(info)), scope)
                    } else {
                        let (t, hints, scope) = base_table(&twj.relation, cx, "SELECT")?;
                        (SourceKind::Table(t, hints), scope)
                    }
                }
                ast::TableFactor::Derived { .. } => {
                    return Err(SqlError::unsupported("LATERAL derived tables"))
                }
                other => return Err(SqlError::unsupported(format!("FROM {other}"))),
            },
        },
        _ => return Err(SqlError::unsupported("this FROM clause")),
    };

    // WHERE
    let filter = match &s.selection {
        Some(w) => {
            if contains_aggregate(w, 0) {
                return Err(SqlError::new(
                    1111,
                    "HY000",
                    "Invalid use of group function",
                ));
            }
            let mut c = Compiler::new(&scope, cx.placeholders);
            c.clause = "WHERE";
            c.planner = Some(cx);
            Some(c.compile(w)?)
        }
        None => None,
    };
    let filter = filter.map(|f| exists_as_in(f, cx));
    if let (SourceKind::Derived(inner, _), Some(f)) = (&mut source_kind, &filter) {
        push_into_derived(inner, f);
    }

    // Projection items (wildcards expanded).
    let mut items: Vec<(ItemExpr, String)> = Vec::new();
    let texts = (cx.expanding.get() == 0)
        .then(|| {
            cx.item_texts
                .of(s.select_token.0.span.start, s.projection.len())
        })
        .flatten();
    for (k, it) in s.projection.iter().enumerate() {
        match it {
            ast::SelectItem::UnnamedExpr(e) => {
                let raw = texts.and_then(|t| t.get(k)).map(String::as_str);
                items.push((ItemExpr::Ast(Box::new(e.clone())), item_name(e, raw)))
            }
            ast::SelectItem::ExprWithAlias { expr, alias } => {
                items.push((ItemExpr::Ast(Box::new(expr.clone())), alias.value.clone()))
            }
            ast::SelectItem::Wildcard(_) => {
                if scope.cols.is_empty() {
                    return Err(SqlError::new(1096, "HY000", "No tables used"));
                }
                for i in star_order(&source_kind, scope.cols.len()) {
                    items.push((ItemExpr::Col(i), scope.cols[i].name.clone()));
                }
            }
            ast::SelectItem::QualifiedWildcard(kind, _) => {
                let q = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(n) => {
                        object_name_parts(n)?.join(".")
                    }
                    _ => return Err(SqlError::unsupported("this wildcard form")),
                };
                let mut any = false;
                // All of the table's columns in its own order (also a USING join's merged
                // ones, as MySQL lists them).
                for i in 0..scope.cols.len() {
                    let c = &scope.cols[i];
                    if c.qualifiers.contains(&q) {
                        items.push((ItemExpr::Col(i), c.name.clone()));
                        any = true;
                    }
                }
                if !any {
                    return Err(SqlError::new(1051, "42S02", format!("Unknown table '{q}'")));
                }
            }
            other => return Err(SqlError::unsupported(format!("select item {other}"))),
        }
    }

    let order_by = order_by_list(q)?;
    let (group_by, rollup): (Vec<ast::Expr>, bool) = match &s.group_by {
        ast::GroupByExpr::Expressions(v, mods) if mods.is_empty() => (v.clone(), false),
        ast::GroupByExpr::Expressions(v, mods)
            if matches!(mods.as_slice(), [ast::GroupByWithModifier::Rollup]) =>
        {
            if !order_by.is_empty() {
                return Err(SqlError::new(
                    1221,
                    "HY000",
                    "Incorrect usage of CUBE/ROLLUP and ORDER BY",
                ));
            }
            (v.clone(), true)
        }
        _ => {
            return Err(SqlError::unsupported(
                "GROUP BY modifiers other than WITH ROLLUP",
            ))
        }
    };
    let is_agg = !group_by.is_empty()
        || items
            .iter()
            .any(|(e, _)| matches!(e, ItemExpr::Ast(a) if contains_aggregate(a, 0)))
        || s.having.as_ref().is_some_and(|h| contains_aggregate(h, 0))
        || order_by.iter().any(|o| contains_aggregate(&o.expr, 0));

    let mut builder = AggBuilder::default();
    if is_agg {
        for g in &group_by {
            // GROUP BY <position> / <alias> refer to the select list.
            let resolved = match g {
                ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                    let n = position_of(&v.value, items.len(), "GROUP BY")?;
                    items[n].0.clone()
                }
                ast::Expr::Identifier(id) => group_by_name(&id.value, g, &items, &scope)?,
                other => ItemExpr::Ast(Box::new(other.clone())),
            };
            let (text, compiled) = match &resolved {
                ItemExpr::Ast(a) => {
                    if contains_aggregate(a, 0) {
                        return Err(SqlError::new(
                            1056,
                            "42000",
                            format!("Can't group on '{a}'"),
                        ));
                    }
                    let mut c = Compiler::new(&scope, cx.placeholders);
                    c.clause = "GROUP BY";
                    (a.to_string(), c.compile(a)?)
                }
                ItemExpr::Col(i) => (scope.cols[*i].name.clone(), Expr::Col(*i)),
            };
            // Groups come out in GROUP BY order, an ENUM's by its members' numbers, a TIME's
            // by its microseconds: that key goes first, as a key of its own (it names no
            // select item).
            if !rollup {
                if let Some(n) = Compiler::new(&scope, cx.placeholders).order_key(&compiled) {
                    builder.group_texts.push(String::new());
                    builder.group_exprs.push(n);
                }
            }
            builder.group_texts.push(text);
            builder.group_exprs.push(compiled);
        }
    }

    // Compile projection.
    let mut wbuilder = crate::compile::WindowBuilder::default();
    let mut project = Vec::with_capacity(items.len());
    let mut aliases: Vec<(String, Expr, bool)> = Vec::new();
    for (it, name) in &items {
        let e = match it {
            ItemExpr::Col(i) => {
                if is_agg {
                    let mut c = Compiler::new(&scope, cx.placeholders);
                    c.agg = Some(&mut builder);
                    let n = &scope.cols[*i];
                    let mut parts: Vec<ast::Ident> = Vec::new();
                    if let Some(q) = n.qualifiers.first() {
                        parts.push(ast::Ident::new(q.clone()));
                    }
                    parts.push(ast::Ident::new(n.name.clone()));
                    c.compile(&ast::Expr::CompoundIdentifier(parts))?
                } else {
                    Expr::Col(*i)
                }
            }
            ItemExpr::Ast(a) => {
                let mut c = Compiler::new(&scope, cx.placeholders);
                c.planner = Some(cx);
                c.windows = Some(&mut wbuilder);
                if is_agg {
                    c.agg = Some(&mut builder);
                }
                c.compile(a)?
            }
        };
        let plain = match it {
            ItemExpr::Col(_) => true,
            ItemExpr::Ast(a) => matches!(
                &**a,
                ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)
            ),
        };
        aliases.push((name.clone(), e.clone(), plain));
        project.push(e);
    }
    let n_out = project.len();

    // HAVING
    let having = match &s.having {
        Some(h) => {
            let mut c = Compiler::new(&scope, cx.placeholders);
            c.clause = "HAVING";
            c.planner = Some(cx);
            c.aliases = &aliases;
            if is_agg {
                c.agg = Some(&mut builder);
            }
            Some(c.compile(h)?)
        }
        None => None,
    };

    // ORDER BY
    let mut order = Vec::with_capacity(order_by.len());
    for o in &order_by {
        let desc = is_desc(o)?;
        let pos = match &o.expr {
            ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..)) => {
                let at = position_of(&v.value, n_out, "ORDER BY")?;
                // An ENUM, SET or TIME item orders by its number (`Compiler::order_key`).
                let mut c = Compiler::new(&scope, cx.placeholders);
                if is_agg {
                    c.agg = Some(&mut builder);
                }
                match project.get(at).and_then(|x| c.order_key(x)) {
                    Some(key) => {
                        project.push(key);
                        project.len() - 1
                    }
                    None => at,
                }
            }
            e => {
                let mut c = Compiler::new(&scope, cx.placeholders);
                c.clause = "ORDER BY";
                c.planner = Some(cx);
                c.aliases = &aliases;
                c.windows = Some(&mut wbuilder);
                if is_agg {
                    c.agg = Some(&mut builder);
                }
                let x = c.compile(e)?;
                // An ENUM orders by its members' numbers, a TIME by its microseconds.
                let x = c.order_key(&x).unwrap_or(x);
                match project.iter().position(|p| same_expr(p, &x)) {
                    Some(p) => p,
                    None => {
                        project.push(x);
                        project.len() - 1
                    }
                }
            }
        };
        order.push(OrderKey {
            pos,
            desc,
            numeric: false,
            binary: false,
        });
    }
    let (limit, offset) = limit_exprs(q, cx)?;

    // Types and metadata.
    let agg = if is_agg {
        Some(AggPlan {
            group_binary: binary_mask(&builder.group_exprs, &scope),
            group: builder.group_exprs,
            specs: builder.specs,
            rollup,
        })
    } else {
        None
    };
    let scope_ref = &scope;
    let stage_type = |i: usize| -> SqlType {
        match &agg {
            None => scope_ref.type_of(i),
            Some(a) => {
                if i < a.group.len() {
                    a.group[i].sql_type(&|c| scope_ref.type_of(c))
                } else {
                    a.specs
                        .get(i - a.group.len())
                        .map(agg_type)
                        .unwrap_or(SqlType::Null)
                }
            }
        }
    };
    // Whether column i of the row the windows see holds a binary column's strings.
    let stage_binary = |i: usize| -> bool {
        match &agg {
            None => scope_ref.cols.get(i).is_some_and(|c| c.meta.binary),
            Some(a) => {
                if i < a.group.len() {
                    a.group_binary >> i.min(63) & 1 == 1 && i < 64
                } else {
                    a.specs.get(i - a.group.len()).is_some_and(|s| {
                        s.binary
                            && matches!(s.func, AggFunc::Min | AggFunc::Max | AggFunc::AnyValue)
                    })
                }
            }
        }
    };
    // Window functions: typed on the row they see, then numbered after its columns.
    let stage_width = match &agg {
        None => scope.cols.len(),
        Some(a) => a.group.len() + a.specs.len(),
    };
    let mut windows = wbuilder.specs;
    let stage_bin = |e: &Expr| match e {
        Expr::Col(c) => stage_binary(*c),
        other => matches!(other, Expr::Cast(_, crate::expr::CastTo::Binary)),
    };
    for w in &mut windows {
        w.partition_binary = w
            .partition
            .iter()
            .take(64)
            .enumerate()
            .filter(|(_, e)| stage_bin(e))
            .fold(0u64, |m, (i, _)| m | (1 << i));
        for o in &mut w.order {
            o.numeric = matches!(o.key.sql_type(&stage_type), SqlType::Decimal(_));
            o.binary = stage_bin(&o.key);
        }
        let arg_type = w
            .args
            .first()
            .map_or(SqlType::Int, |a| a.sql_type(&stage_type));
        if let Some(a) = &mut w.agg {
            a.arg_type = arg_type;
            a.binary = w.args.first().is_some_and(stage_bin);
        }
        w.ty = match (w.func, &w.agg) {
            (WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank | WinFunc::Ntile, _) => {
                SqlType::Int
            }
            // Printed with 10 decimals, as MariaDB prints these DOUBLEs.
            (WinFunc::PercentRank | WinFunc::CumeDist, _) => SqlType::Decimal(10),
            (WinFunc::Agg(_), Some(a)) => agg_type(a),
            _ => arg_type,
        };
    }
    for e in &mut project {
        e.map_cols(&mut |c| {
            if c >= crate::compile::WINDOW_COL_BASE {
                stage_width + (c - crate::compile::WINDOW_COL_BASE)
            } else {
                c
            }
        });
    }
    let windows_ref = &windows;
    let row_type = |i: usize| -> SqlType {
        match i.checked_sub(stage_width) {
            Some(k) => windows_ref.get(k).map_or(SqlType::Null, |w| w.ty),
            None => stage_type(i),
        }
    };
    // Whether column i of the row the projection sees holds a binary column's strings.
    let row_binary = |i: usize| -> bool {
        match i.checked_sub(stage_width) {
            Some(k) => windows_ref.get(k).is_some_and(|w| {
                !matches!(
                    w.func,
                    WinFunc::Agg(AggFunc::Count | AggFunc::CountStar | AggFunc::Sum | AggFunc::Avg)
                ) && w.args.first().is_some_and(stage_bin)
            }),
            None => stage_binary(i),
        }
    };
    for k in &mut order {
        k.numeric = project
            .get(k.pos)
            .is_some_and(|e| matches!(e.sql_type(&row_type), SqlType::Decimal(_)));
        k.binary = match project.get(k.pos) {
            Some(Expr::Col(c)) => row_binary(*c),
            Some(e) => matches!(e, Expr::Cast(_, crate::expr::CastTo::Binary)),
            None => false,
        };
    }
    let mut columns = Vec::with_capacity(n_out);
    let mut conform = Vec::with_capacity(n_out);
    for (i, (_, name)) in items.iter().enumerate() {
        let e = &project[i];
        let base_col = match (e, &agg) {
            (Expr::Col(c), None) => Some(*c),
            (Expr::Col(c), Some(a)) if *c < a.group.len() => match &a.group[*c] {
                Expr::Col(x) => Some(*x),
                _ => None,
            },
            (Expr::Col(c), Some(a)) => match a.specs.get(*c - a.group.len()) {
                Some(AggSpec {
                    func: AggFunc::AnyValue | AggFunc::Min | AggFunc::Max,
                    arg: Some(Expr::Col(x)),
                    ..
                }) => Some(*x),
                _ => None,
            },
            _ => None,
        };
        // A GROUP BY key is a value of some row of its group: NOT NULL stays (not with
        // ROLLUP, whose total rows hold NULL there).
        let group_key =
            matches!((e, &agg), (Expr::Col(c), Some(a)) if *c < a.group.len() && !a.rollup);
        match base_col.and_then(|c| scope.cols.get(c)) {
            Some(sc) => {
                let mut m = sc.meta.clone();
                m.name = name.clone();
                // (MariaDB reports every column of a query with window functions as
                // possibly NULL; clients size columns by it.)
                if (agg.is_some() && !group_key) || !windows_ref.is_empty() {
                    m.not_null = false;
                }
                // MIN / MAX of a YEAR is shown as a plain number (0, not 0000), as MariaDB.
                let min_max = matches!((e, &agg), (Expr::Col(c), Some(a)) if matches!(
                    a.specs.get(c.wrapping_sub(a.group.len())),
                    Some(AggSpec { func: AggFunc::Min | AggFunc::Max, .. })
                ));
                if m.kind == ColumnKind::Year && min_max {
                    m.kind = ColumnKind::Short;
                }
                columns.push(m);
                conform.push(None);
            }
            None => {
                let mut t = e.sql_type(&row_type);
                if let Expr::SysVar(n, _) = e {
                    let counter = matches!(
                        n.as_str(),
                        "warning_count" | "error_count" | "last_insert_id" | "identity"
                    );
                    if let Some(d) = variables::lookup(n) {
                        if counter
                            || matches!(
                                d.kind,
                                variables::VarKind::Bool | variables::VarKind::Int { .. }
                            )
                        {
                            t = SqlType::Int;
                        }
                    }
                }
                let mut col = computed_column(name.clone(), t);
                col.binary = matches!(e, Expr::Cast(_, crate::expr::CastTo::Binary));
                // CAST(x AS TIME(n)): n fraction digits.
                if let Expr::Cast(_, crate::expr::CastTo::Time(n @ 1..=6)) = e {
                    col.decimals = *n;
                    col.length = crate::coerce::time_width(*n);
                }
                // A constant other than NULL is never NULL, nor are operators over such
                // values and NOT NULL columns (without aggregation; clients size by it).
                col.not_null = match e {
                    Expr::Const(v) | Expr::DecimalConst(v, _) => !v.is_null(),
                    _ if agg.is_none() => e.never_null(&|c| match c.checked_sub(stage_width) {
                        Some(k) => windows_ref.get(k).is_some_and(|w| w.func.never_null()),
                        None => {
                            windows_ref.is_empty()
                                && scope.cols.get(c).is_some_and(|sc| sc.meta.not_null)
                        }
                    }),
                    _ => false,
                };
                // DECIMAL results are printed at their scale only where it is derived exactly
                // (decimal literals, + - *, SUM/MIN/MAX, and the choosers IFNULL, IF, CASE, ...
                // whose value is one of their arguments); other values (a division, ROUND,
                // ...) pass as computed (the protocol shows them at the column's scale).
                let exact = |e: &Expr| {
                    let arith = match e {
                        Expr::Unsigned(inner) | Expr::Scaled(inner, _) => inner,
                        other => other,
                    };
                    use crate::expr::Func as F;
                    matches!(
                        arith,
                        Expr::DecimalConst(..)
                            | Expr::Case { .. }
                            | Expr::Func(
                                F::Coalesce
                                    | F::IfNull
                                    | F::If
                                    | F::NullIf
                                    | F::Greatest
                                    | F::Least,
                                _
                            )
                            | Expr::Bin(
                                crate::expr::BinOp::Add
                                    | crate::expr::BinOp::Sub
                                    | crate::expr::BinOp::Mul,
                                ..
                            )
                    )
                };
                let mut exact_scale = exact(e);
                if let (Expr::Col(c), Some(a)) = (e, &agg) {
                    // A GROUP BY key shows as its expression would.
                    exact_scale |= a.group.get(*c).is_some_and(exact);
                    if let Some(spec) = c.checked_sub(a.group.len()).and_then(|k| a.specs.get(k)) {
                        // COUNT is never NULL (clients size the column by it).
                        col.not_null |= matches!(spec.func, AggFunc::Count | AggFunc::CountStar);
                        exact_scale |= matches!(
                            spec.func,
                            AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max
                        );
                    }
                }
                if let Some(w) = match e {
                    Expr::Col(c) => c.checked_sub(stage_width).and_then(|k| windows_ref.get(k)),
                    _ => None,
                } {
                    exact_scale |= matches!(
                        w.func,
                        WinFunc::PercentRank
                            | WinFunc::CumeDist
                            | WinFunc::Agg(
                                AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max
                            )
                    );
                    col.not_null |= w.func.never_null();
                }
                let scale = if exact_scale { col.decimals } else { u8::MAX };
                conform.push(Some((col.kind, scale)));
                columns.push(col);
            }
        }
    }

    let mut loose = None;
    let mut source = match source_kind {
        SourceKind::Dual => Source::Dual,
        SourceKind::Table(t, hints) => {
            if filter.is_none() && windows.is_empty() {
                loose = access::loose_column(&project, distinct, agg.as_ref())
                    .and_then(|c| access::loose_key(&t.def, c, &hints));
            }
            let mut access = choose_access(cx, &t, filter.as_ref(), &hints);
            // (A correlated WHERE is checked after every row is read: no early stop.)
            if matches!(access.access, Access::Full)
                && agg.is_none()
                && windows.is_empty()
                && !filter.as_ref().is_some_and(Expr::is_correlated)
                && few_rows(&limit, &offset)
            {
                if let Some((cols, _)) = order_columns(&order, &project) {
                    access::order_by_index(&mut access, &t.def, &cols, &hints);
                }
            }
            Source::Table { table: t, access }
        }
        SourceKind::Derived(p, a) => Source::Derived { plan: p, alias: a },
        SourceKind::Virtual(v) => Source::Virtual(v),
        SourceKind::Join(parts, _) => {
            Source::Join(Box::new(plan_join(parts, &scope, filter.as_ref(), cx)?))
        }
    };
    let sorted_by_access = !order.is_empty()
        && agg.is_none()
        && match &mut source {
            Source::Table { access, .. } => match order_matches(&order, &project, access) {
                Some(desc) => {
                    access.desc = desc;
                    true
                }
                None => false,
            },
            _ => false,
        };
    let extremes = match (&source, &agg) {
        (Source::Table { table, .. }, Some(a))
            if filter.is_none() && a.group.is_empty() && !a.rollup && windows.is_empty() =>
        {
            access::extremes(&table.def, &a.specs).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    // (MIN / MAX alone read two rows: better than a row per value.)
    if !extremes.is_empty() {
        loose = None;
    }
    // A loose scan reads its own key ascending: the rows are sorted after it.
    let sorted_by_access = sorted_by_access && loose.is_none();
    let mut plan = SelectPlan {
        source,
        filter,
        agg,
        having,
        project,
        n_out,
        conform,
        order,
        sorted_by_access,
        extremes,
        loose,
        distinct,
        limit,
        offset,
        columns,
        lock: None,
        read_cols: None,
        project_moves: Vec::new(),
        subqueries: Vec::new(),
        outer_params: 0,
        correlated: false,
        windows,
        window_base: stage_width,
        calc_found_rows,
    };
    if let Some(l) = lock {
        let names = scope.cols.first().map(|c| c.qualifiers.as_slice());
        set_lock(&mut plan, l, &q.locks, names)?;
    }
    plan.finish();
    Ok(plan)
}

/// The kind of a query's locking clauses (the strongest, and the last NOWAIT / SKIP LOCKED;
/// None without any).
fn locking_read(locks: &[ast::LockClause]) -> Result<Option<LockingRead>, SqlError> {
    let mut out: Option<LockingRead> = None;
    for l in locks {
        let exclusive = out.is_some_and(|o| o.exclusive) || l.lock_type == ast::LockType::Update;
        let wait = match &l.nonblock {
            None => out.map_or(LockWait::Wait, |o| o.wait),
            Some(ast::NonBlock::Nowait) => LockWait::NoWait,
            Some(ast::NonBlock::SkipLocked) => LockWait::SkipLocked,
        };
        out = Some(LockingRead { exclusive, wait });
    }
    Ok(out)
}

/// Makes `p` a locking read: only a single base table (or no table) can be locked, and an
/// `OF name` must name that table: one of `names` (its alias, or its plain and qualified
/// names), or without them its plain or qualified name.
fn set_lock(
    p: &mut SelectPlan,
    l: LockingRead,
    locks: &[ast::LockClause],
    names: Option<&[String]>,
) -> Result<(), SqlError> {
    if p.filter.as_ref().is_some_and(Expr::is_correlated) {
        // The locked rows are re-checked against WHERE while the scan holds the transaction.
        return Err(SqlError::unsupported(
            "a correlated subquery in the WHERE of a locking read",
        ));
    }
    let unresolved = |name: String| {
        SqlError::new(
            3568,
            "HY000",
            format!("Unresolved name '{name}' for locking clause."),
        )
    };
    match &p.source {
        Source::Dual => {
            if let Some(of) = locks.iter().find_map(|c| c.of.as_ref()) {
                return Err(unresolved(object_name_parts(of)?.join(".")));
            }
        }
        Source::Table { table, access } => {
            // Every row read is locked: MIN / MAX and DISTINCT read the whole source.
            p.extremes.clear();
            p.loose = None;
            // Rows are re-read after their lock: through a secondary index, the ORDER BY
            // column of a row changed meanwhile may have moved, so sort again (a primary key
            // cannot move: the re-read is by that key).
            if matches!(access.access, Access::Index { .. } | Access::FullIndex(_)) {
                p.sorted_by_access = false;
            }
            for of in locks.iter().filter_map(|c| c.of.as_ref()) {
                let name = object_name_parts(of)?.join(".");
                let named = match names {
                    Some(n) => n.contains(&name),
                    None => {
                        name == table.def.name || name == format!("{}.{}", table.db, table.def.name)
                    }
                };
                if !named {
                    return Err(unresolved(name));
                }
            }
        }
        Source::Derived { .. } => {
            return Err(SqlError::unsupported(format!(
                "locking reads ({}) of a derived table",
                l.sql()
            )))
        }
        Source::Virtual(_) => {
            return Err(SqlError::unsupported(format!(
                "locking reads ({}) of INFORMATION_SCHEMA",
                l.sql()
            )))
        }
        Source::WorkTable(_) | Source::Recursive { .. } => {
            return Err(SqlError::unsupported(format!(
                "locking reads ({}) of a recursive WITH query",
                l.sql()
            )))
        }
        Source::Join(_) => {
            return Err(SqlError::unsupported(format!(
                "locking reads ({}) of a join",
                l.sql()
            )))
        }
        Source::SetOperation { op, .. } => {
            return Err(SqlError::unsupported(format!(
                "locking reads ({}) of a {}",
                l.sql(),
                op.sql()
            )))
        }
    }
    p.lock = Some(l);
    Ok(())
}

enum SourceKind {
    Dual,
    Table(Arc<Table>, Hints),
    Derived(Box<SelectPlan>, String),
    Virtual(Box<crate::infoschema::InfoTable>),
    /// The tables in the order they are joined, and for a `RIGHT JOIN` the order `*` lists
    /// their columns in (row positions; None = row order).
    Join(Vec<JoinPart>, Option<Vec<usize>>),
}

/// The row positions `*` lists, in order: a RIGHT JOIN's tables as the statement names them,
/// a USING / NATURAL join's merged columns once, first.
fn star_order(source: &SourceKind, width: usize) -> Vec<usize> {
    match source {
        SourceKind::Join(_, Some(order)) => order.iter().copied().filter(|&i| i < width).collect(),
        _ => (0..width).collect(),
    }
}

/// One base table of a join as FROM names it.
struct JoinPart {
    input: crate::join::JoinInput,
    hints: Hints,
    left: bool,
    on: Option<ast::Expr>,
}

/// A base table named in FROM of a join (`what` = "joins") or of UPDATE/DELETE: the table,
/// its index hints and the scope of its columns (derived and INFORMATION_SCHEMA tables are
/// refused).
fn base_table(
    f: &ast::TableFactor,
    cx: &PlanCx,
    what: &str,
) -> Result<(Arc<Table>, Hints, Scope), SqlError> {
    match f {
        ast::TableFactor::Table {
            name,
            alias,
            index_directives,
            args: None,
            ..
        } => {
            if cx.info_table(name)?.is_some() {
                return Err(SqlError::unsupported(format!(
                    "{what} with INFORMATION_SCHEMA tables"
                )));
            }
            let t = cx.write_target(name, what)?;
            let hints = hints_of(index_directives)?;
            check_hint_names(&hints, &t.def)?;
            let scope = table_scope(&t, alias.as_ref().map(|a| a.name.value.as_str()));
            Ok((t, hints, scope))
        }
        other => Err(SqlError::unsupported(format!("{what} of {other}"))),
    }
}

/// 1060 unless every name in `cols` is different (case-insensitively): the columns of a
/// derived table or of a table made by CREATE TABLE ... AS SELECT.
fn unique_column_names(cols: &[Column]) -> Result<(), SqlError> {
    for (i, c) in cols.iter().enumerate() {
        if cols[..i]
            .iter()
            .any(|o| o.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(SqlError::new(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", c.name),
            ));
        }
    }
    Ok(())
}

/// A derived table (or WITH query) `inner` known as `a` in FROM; `columns` (if given) rename
/// its columns (4002 when their number differs).
fn derived_source(
    mut inner: SelectPlan,
    a: String,
    columns: &[String],
) -> Result<(Box<SelectPlan>, String, Scope), SqlError> {
    if !columns.is_empty() {
        if columns.len() != inner.columns.len() {
            return Err(SqlError::new(
                4002,
                "HY000",
                "WITH column list and SELECT field list have different column counts",
            ));
        }
        for (c, n) in inner.columns.iter_mut().zip(columns) {
            c.name = n.clone();
        }
    }
    // Its columns are named like a table's: each name once.
    unique_column_names(&inner.columns)?;
    let scope = Scope {
        cols: inner
            .columns
            .iter()
            .map(|c| ScopeCol {
                merged_away: false,
                base: false,
                name: c.name.clone(),
                qualifiers: vec![a.clone()],
                ty: kind_type(c),
                meta: Column {
                    table: a.clone(),
                    schema: String::new(),
                    ..c.clone()
                },
            })
            .collect(),
    };
    Ok((Box::new(inner), a, scope))
}

/// A FROM item that is a derived table or a WITH query: its plan, the name it is known by
/// and the scope of its columns. None: a base (or INFORMATION_SCHEMA) table.
/// A derived table (a view, mostly) that reads one table plainly — no grouping, DISTINCT,
/// LIMIT or locking, its output columns bare table columns — also gets the conditions of
/// the outer WHERE that compare one of those columns with a value known before any row is
/// read (`= ? `, `IN (...)`, `BETWEEN`, `IS NULL`, ...), so its access path can use an index
/// instead of reading the whole table. The outer WHERE still applies them.
fn push_into_derived(inner: &mut SelectPlan, outer: &Expr) {
    if !matches!(inner.source, Source::Table { .. } | Source::Derived { .. }) {
        return;
    }
    if inner.agg.is_some()
        || inner.having.is_some()
        || inner.distinct
        || inner.limit.is_some()
        || inner.offset.is_some()
        || inner.lock.is_some()
        || inner.correlated
        || inner.outer_params != 0
        || !inner.order.is_empty()
        || !inner.windows.is_empty()
    {
        return;
    }
    // Output column i as the table column it is, if it is one unchanged.
    let plain = |e: &Expr| -> Option<Expr> {
        let Expr::Col(i) = e else { return None };
        match (inner.project.get(*i), inner.conform.get(*i)) {
            (Some(Expr::Col(k)), None | Some(None)) if *i < inner.n_out => Some(Expr::Col(*k)),
            _ => None,
        }
    };
    // Known before any row is read, and the same for every row of this execution.
    let fixed = |e: &Expr| {
        !e.any(&mut |x| {
            matches!(
                x,
                Expr::Col(_)
                    | Expr::Outer { .. }
                    | Expr::Subquery(..)
                    | Expr::Exists(..)
                    | Expr::InSubquery(..)
                    | Expr::Quantified { .. }
            )
        })
    };
    let mut conj = Vec::new();
    crate::access::conjuncts(outer, &mut conj);
    let mut pushed = Vec::new();
    for c in conj {
        use crate::expr::BinOp as B;
        let moved = match &c {
            Expr::Bin(op @ (B::Eq | B::NullSafeEq | B::Lt | B::Le | B::Gt | B::Ge), a, b) => {
                match (plain(a), plain(b)) {
                    (Some(k), None) if fixed(b) => Some(Expr::Bin(*op, Box::new(k), b.clone())),
                    (None, Some(k)) if fixed(a) => Some(Expr::Bin(*op, a.clone(), Box::new(k))),
                    _ => None,
                }
            }
            Expr::In(a, list, neg) if list.iter().all(fixed) => {
                plain(a).map(|k| Expr::In(Box::new(k), list.clone(), *neg))
            }
            Expr::Between(a, lo, hi, neg) if fixed(lo) && fixed(hi) => {
                plain(a).map(|k| Expr::Between(Box::new(k), lo.clone(), hi.clone(), *neg))
            }
            Expr::IsNull(a, neg) => plain(a).map(|k| Expr::IsNull(Box::new(k), *neg)),
            _ => None,
        };
        pushed.extend(moved);
    }
    let Some(conds) = pushed
        .into_iter()
        .reduce(|a, b| Expr::Bin(crate::expr::BinOp::And, Box::new(a), Box::new(b)))
    else {
        return;
    };
    match &mut inner.source {
        Source::Table { table, access } => {
            let filter = match inner.filter.take() {
                Some(f) => Expr::Bin(crate::expr::BinOp::And, Box::new(f), Box::new(conds)),
                None => conds,
            };
            *access = access::choose(&table.def, Some(&filter), &Hints::default());
            inner.filter = Some(filter);
            inner.finish();
        }
        // A view over a view: on down (this level's WHERE still applies them).
        Source::Derived { plan, .. } => push_into_derived(plan, &conds),
        _ => {}
    }
}

/// A query's `WINDOW name AS (...)` definitions written into the calls naming them
/// (`OVER name`, or `OVER (name ORDER BY ...)` adding to it), and removed from the query.
/// 4009 for an undefined name, 4010 for a name defined twice.
fn resolve_named_windows(q: &mut ast::Query) -> Result<(), SqlError> {
    type Named = Vec<(String, ast::WindowSpec)>;
    fn lookup<'n>(named: &'n Named, name: &ast::Ident) -> Result<&'n ast::WindowSpec, SqlError> {
        named
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(&name.value))
            .map(|(_, w)| w)
            .ok_or_else(|| {
                SqlError::new(
                    4009,
                    "HY000",
                    format!(
                        "Window specification with name '{}' is not defined",
                        name.value
                    ),
                )
            })
    }
    // A spec building on a named one: its own parts win, the rest come from the base.
    fn merge(named: &Named, w: &ast::WindowSpec) -> Result<ast::WindowSpec, SqlError> {
        let Some(base_name) = &w.window_name else {
            return Ok(w.clone());
        };
        let base = lookup(named, base_name)?;
        Ok(ast::WindowSpec {
            window_name: None,
            partition_by: if w.partition_by.is_empty() {
                base.partition_by.clone()
            } else {
                w.partition_by.clone()
            },
            order_by: if w.order_by.is_empty() {
                base.order_by.clone()
            } else {
                w.order_by.clone()
            },
            window_frame: w.window_frame.clone().or_else(|| base.window_frame.clone()),
        })
    }
    let ast::SetExpr::Select(s) = &mut *q.body else {
        return Ok(());
    };
    let mut named: Named = Vec::new();
    for ast::NamedWindowDefinition(name, def) in std::mem::take(&mut s.named_window) {
        if named
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(&name.value))
        {
            return Err(SqlError::new(
                4010,
                "HY000",
                format!(
                    "Multiple window specifications with the same name '{}'",
                    name.value
                ),
            ));
        }
        let spec = match &def {
            ast::NamedWindowExpr::WindowSpec(w) => merge(&named, w)?,
            ast::NamedWindowExpr::NamedWindow(other) => lookup(&named, other)?.clone(),
        };
        named.push((name.value.clone(), spec));
    }
    struct Resolve<'n> {
        named: &'n Named,
        err: Option<SqlError>,
    }
    impl ast::VisitorMut for Resolve<'_> {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut ast::Expr) -> std::ops::ControlFlow<()> {
            let ast::Expr::Function(f) = e else {
                return std::ops::ControlFlow::Continue(());
            };
            let resolved = match &f.over {
                Some(ast::WindowType::NamedWindow(n)) => lookup(self.named, n).cloned(),
                Some(ast::WindowType::WindowSpec(w)) if w.window_name.is_some() => {
                    merge(self.named, w)
                }
                _ => return std::ops::ControlFlow::Continue(()),
            };
            match resolved {
                Ok(w) => {
                    f.over = Some(ast::WindowType::WindowSpec(w));
                    std::ops::ControlFlow::Continue(())
                }
                Err(x) => {
                    self.err = Some(x);
                    std::ops::ControlFlow::Break(())
                }
            }
        }
    }
    let mut r = Resolve {
        named: &named,
        err: None,
    };
    let _ = ast::VisitMut::visit(q, &mut r);
    match r.err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// True when `body` names table `name` (unqualified) anywhere (`only_nested`: only inside
/// a subquery or derived table, not in its own FROM).
pub(crate) fn names_table(body: &ast::SetExpr, name: &str, only_nested: bool) -> bool {
    struct Find<'n> {
        name: &'n str,
        depth: usize,
        only_nested: bool,
    }
    impl ast::Visitor for Find<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
            self.depth += 1;
            std::ops::ControlFlow::Continue(())
        }
        fn post_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
            self.depth -= 1;
            std::ops::ControlFlow::Continue(())
        }
        fn pre_visit_relation(&mut self, r: &ast::ObjectName) -> std::ops::ControlFlow<()> {
            let hit = matches!(r.0.as_slice(), [ast::ObjectNamePart::Identifier(id)]
                if id.value.eq_ignore_ascii_case(self.name));
            if hit && (!self.only_nested || self.depth > 0) {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        }
    }
    ast::Visit::visit(
        body,
        &mut Find {
            name,
            depth: 0,
            only_nested,
        },
    )
    .is_break()
}

/// A plan passing the rows of `source` on as they are (columns `columns`, converted as
/// `conform` says).
fn identity_plan(
    source: Source,
    columns: Vec<Column>,
    conform: Vec<Option<(ColumnKind, u8)>>,
) -> SelectPlan {
    let n = columns.len();
    let mut p = SelectPlan {
        source,
        filter: None,
        agg: None,
        having: None,
        project: (0..n).map(Expr::Col).collect(),
        n_out: n,
        conform,
        order: Vec::new(),
        sorted_by_access: false,
        extremes: Vec::new(),
        loose: None,
        distinct: false,
        limit: None,
        offset: None,
        columns,
        lock: None,
        read_cols: None,
        project_moves: Vec::new(),
        subqueries: Vec::new(),
        outer_params: 0,
        correlated: false,
        windows: Vec::new(),
        window_base: 0,
        calc_found_rows: false,
    };
    p.finish();
    p
}

/// A plan reading work table `slot` (columns `columns`) as it is.
fn work_table_plan(slot: usize, columns: &[Column]) -> SelectPlan {
    identity_plan(
        Source::WorkTable(slot),
        columns.to_vec(),
        vec![None; columns.len()],
    )
}

/// The plan of a recursive WITH query (see `Source::Recursive`): the anchor's columns, the
/// step's rows converted to their kinds (numbers; text passes as it is).
fn recursive_plan(anchor: SelectPlan, step: SelectPlan, distinct: bool, slot: usize) -> SelectPlan {
    let mut columns = anchor.columns.clone();
    // (MariaDB reports a recursive query's columns as possibly NULL; clients size by it.)
    for c in &mut columns {
        c.not_null = false;
    }
    let n = columns.len();
    let conform: Vec<Option<(ColumnKind, u8)>> = columns
        .iter()
        .map(|c| match kind_type(c) {
            SqlType::Int | SqlType::Double => Some((c.kind, u8::MAX)),
            SqlType::Decimal(s) => Some((c.kind, s)),
            _ => None,
        })
        .collect();
    debug_assert_eq!(conform.len(), n);
    identity_plan(
        Source::Recursive {
            anchor: Box::new(anchor),
            step: Box::new(step),
            distinct,
            slot,
        },
        columns,
        conform,
    )
}

/// True for MySQL's `FROM DUAL`: one unquoted, unqualified, unaliased name DUAL.
fn is_dual(from: &[ast::TableWithJoins]) -> bool {
    let [twj] = from else { return false };
    match &twj.relation {
        ast::TableFactor::Table {
            name,
            alias: None,
            args: None,
            ..
        } if twj.joins.is_empty() => match name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(id)] => {
                id.quote_style.is_none() && id.value.eq_ignore_ascii_case("dual")
            }
            _ => false,
        },
        _ => false,
    }
}

/// `(a JOIN b ON p) LEFT JOIN c ON q` is `a JOIN b ON p LEFT JOIN c ON q`: a parenthesized
/// join (without an alias) first in a FROM item, nested any depth (MariaDB writes every view's
/// joins so), unwrapped. None when there is none.
fn unwrap_leading_joins(from: &[ast::TableWithJoins]) -> Option<Vec<ast::TableWithJoins>> {
    let nested = |t: &ast::TableWithJoins| {
        matches!(t.relation, ast::TableFactor::NestedJoin { alias: None, .. })
    };
    if !from.iter().any(nested) {
        return None;
    }
    Some(
        from.iter()
            .map(|twj| {
                let mut t = twj.clone();
                while let ast::TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                } = t.relation
                {
                    let inner = *table_with_joins;
                    let mut joins = inner.joins;
                    joins.extend(t.joins);
                    t = ast::TableWithJoins {
                        relation: inner.relation,
                        joins,
                    };
                }
                t
            })
            .collect(),
    )
}

fn derived_factor(
    f: &ast::TableFactor,
    cx: &PlanCx,
) -> Result<Option<(Box<SelectPlan>, String, Scope)>, SqlError> {
    match f {
        ast::TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } => {
            let (inner, columns) = match cx.cte(name)? {
                Some(found) => found,
                None => match cx.view(name)? {
                    Some(v) => (v, Vec::new()),
                    None => return Ok(None),
                },
            };
            let a = match alias {
                Some(a) => a.name.value.clone(),
                None if columns.is_empty() => crate::compile::object_name_last(name),
                None => object_name_parts(name)?.join("."),
            };
            derived_source(inner, a, &columns).map(Some)
        }
        ast::TableFactor::Derived {
            subquery,
            alias,
            lateral: false,
            ..
        } => {
            let Some(alias) = alias else {
                return Err(SqlError::new(
                    1248,
                    "42000",
                    "Every derived table must have its own alias",
                ));
            };
            let inner = cx.derived(subquery)?;
            let columns: Vec<String> = alias.columns.iter().map(|d| d.name.value.clone()).collect();
            derived_source(inner, alias.name.value.clone(), &columns).map(Some)
        }
        _ => Ok(None),
    }
}

/// FROM with joins or a comma list: the tables in order and the scope of their columns side
/// by side.
fn join_sources(
    from: &[ast::TableWithJoins],
    cx: &PlanCx,
) -> Result<(SourceKind, Scope), SqlError> {
    use ast::JoinOperator as J;
    let mut parts = Vec::new();
    let mut scope = Scope::default();
    // The row positions `*` lists, in order (a RIGHT JOIN or a USING join reorders them).
    let mut star: Vec<usize> = Vec::new();
    // Adds a table (its ON clause is set later); returns the range of its columns.
    let add = |f: &ast::TableFactor,
               left: bool,
               scope: &mut Scope,
               parts: &mut Vec<JoinPart>|
     -> Result<std::ops::Range<usize>, SqlError> {
        use crate::join::JoinInput;
        let (input, hints, sc) = match derived_factor(f, cx)? {
            Some((plan, alias, sc)) => (JoinInput::Derived { plan, alias }, Hints::default(), sc),
            None => {
                let (t, hints, sc) = base_table(f, cx, "joins")?;
                (JoinInput::Table(t), hints, sc)
            }
        };
        // The name the table is known by (its alias, else its name) must be new.
        if let Some(q) = sc.cols.first().and_then(|c| c.qualifiers.first()) {
            if scope.cols.iter().any(|o| o.qualifiers.first() == Some(q)) {
                return Err(SqlError::new(
                    1066,
                    "42000",
                    format!("Not unique table/alias: '{q}'"),
                ));
            }
        }
        let mut cols = sc.cols;
        let start = scope.cols.len();
        if left {
            // NULL-extended when no row matches: the columns may be NULL.
            for c in &mut cols {
                c.meta.not_null = false;
            }
        }
        scope.cols.extend(cols);
        parts.push(JoinPart {
            input,
            hints,
            left,
            on: None,
        });
        Ok(start..scope.cols.len())
    };
    for (n, twj) in from.iter().enumerate() {
        // This comma-list item's columns as `*` lists them: what a USING / NATURAL join
        // inside it looks for its columns in (the comma binds weaker than JOIN).
        let mut group: Vec<usize>;
        let mut joins = twj.joins.iter().peekable();
        match joins.peek().map(|j| &j.join_operator) {
            // `a RIGHT JOIN b ON c` first in FROM is `b LEFT JOIN a ON c` with a's columns
            // listed first by `*` (as MySQL rewrites it).
            Some(J::Right(c) | J::RightOuter(c)) if n == 0 => {
                let Some(j) = joins.next() else {
                    return Err(SqlError::syntax("internal: RIGHT JOIN without a table"));
                };
                let b = add(&j.relation, false, &mut scope, &mut parts)?;
                let a = add(&twj.relation, true, &mut scope, &mut parts)?;
                let b_cols: Vec<usize> = b.collect();
                let (on, merged) = join_condition(c, &b_cols, a.clone(), &mut scope)?;
                let on = on.ok_or_else(|| SqlError::syntax("RIGHT JOIN needs an ON clause"))?;
                set_on(&mut parts, on);
                group = match merged {
                    // USING / NATURAL: the merged columns (b's), b's others, then a's others.
                    Some(m) => m,
                    None => a.chain(b_cols).collect(),
                };
            }
            _ => group = add(&twj.relation, false, &mut scope, &mut parts)?.collect(),
        }
        for j in joins {
            let (left, c) = match &j.join_operator {
                J::Join(c) | J::Inner(c) | J::CrossJoin(c) => (false, c),
                J::Left(c) | J::LeftOuter(c) => (true, c),
                J::Right(_) | J::RightOuter(_) => {
                    return Err(SqlError::unsupported(
                        "RIGHT JOIN after other joins (write it as a LEFT JOIN)",
                    ))
                }
                J::FullOuter(_) => return Err(SqlError::unsupported("FULL JOIN")),
                _ => return Err(SqlError::unsupported("this kind of join")),
            };
            let r = add(&j.relation, left, &mut scope, &mut parts)?;
            let (on, merged) = join_condition(c, &group, r.clone(), &mut scope)?;
            if left && on.is_none() {
                return Err(SqlError::syntax("LEFT JOIN needs an ON clause"));
            }
            if let Some(on) = on {
                set_on(&mut parts, on);
            }
            match merged {
                Some(m) => group = m,
                None => group.extend(r),
            }
        }
        star.extend(group);
    }
    let star = (!star.iter().copied().eq(0..scope.cols.len())).then_some(star);
    Ok((SourceKind::Join(parts, star), scope))
}

fn set_on(parts: &mut [JoinPart], on: ast::Expr) {
    if let Some(p) = parts.last_mut() {
        p.on = Some(on);
    }
}

/// The ON condition of a join of the table with columns `right` to the columns `left` (in
/// `*` order) before it. For USING / NATURAL also the new `*` order: the merged columns in
/// `left`'s order, `left`'s others, `right`'s others; the right-hand copies of the merged
/// columns are then reachable only qualified (a bare name means the left one, as MySQL's
/// COALESCE of the two for an inner or LEFT join).
fn join_condition(
    c: &ast::JoinConstraint,
    left: &[usize],
    right: std::ops::Range<usize>,
    scope: &mut Scope,
) -> Result<(Option<ast::Expr>, Option<Vec<usize>>), SqlError> {
    use ast::JoinConstraint as C;
    let names: Vec<String> = match c {
        C::On(e) => return Ok((Some(e.clone()), None)),
        C::None => return Ok((None, None)),
        C::Using(cols) => cols
            .iter()
            .map(|n| object_name_parts(n).map(|p| p.join(".")))
            .collect::<Result<_, _>>()?,
        C::UsingAlias(..) => return Err(SqlError::unsupported("JOIN ... USING ... AS")),
        // NATURAL: every name both sides have (the left side's in its order).
        C::Natural => left
            .iter()
            .filter(|&&i| !scope.cols[i].merged_away)
            .map(|&i| scope.cols[i].name.clone())
            .filter(|n| {
                scope.cols[right.clone()]
                    .iter()
                    .any(|c| c.name.eq_ignore_ascii_case(n))
            })
            .collect(),
    };
    let unknown = |n: &str| SqlError::new(1054, "42S22", format!("Unknown column '{n}' in 'FROM'"));
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for n in &names {
        let mut l = left
            .iter()
            .copied()
            .filter(|&i| !scope.cols[i].merged_away && scope.cols[i].name.eq_ignore_ascii_case(n));
        let li = l.next().ok_or_else(|| unknown(n))?;
        if l.next().is_some() {
            return Err(SqlError::new(
                1052,
                "23000",
                format!("Column '{n}' in FROM is ambiguous"),
            ));
        }
        let ri = right
            .clone()
            .find(|&i| scope.cols[i].name.eq_ignore_ascii_case(n))
            .ok_or_else(|| unknown(n))?;
        if !pairs.iter().any(|&(a, _)| a == li) {
            pairs.push((li, ri));
        }
    }
    let col_ref = |i: usize| -> ast::Expr {
        let c = &scope.cols[i];
        let mut idents: Vec<ast::Ident> = Vec::new();
        if let Some(q) = c.qualifiers.first() {
            idents.push(ast::Ident::new(q.clone()));
        }
        idents.push(ast::Ident::new(c.name.clone()));
        ast::Expr::CompoundIdentifier(idents)
    };
    let on = pairs
        .iter()
        .map(|&(l, r)| ast::Expr::BinaryOp {
            left: Box::new(col_ref(l)),
            op: ast::BinaryOperator::Eq,
            right: Box::new(col_ref(r)),
        })
        .reduce(|a, b| ast::Expr::BinaryOp {
            left: Box::new(a),
            op: ast::BinaryOperator::And,
            right: Box::new(b),
        })
        // NATURAL with no common column: every pair of rows.
        .unwrap_or(ast::Expr::Value(ast::Value::Boolean(true).into()));
    let merged: Vec<usize> = left
        .iter()
        .copied()
        .filter(|i| pairs.iter().any(|&(l, _)| l == *i))
        .collect();
    let mut order = merged.clone();
    order.extend(left.iter().copied().filter(|i| !merged.contains(i)));
    for &(_, r) in &pairs {
        scope.cols[r].merged_away = true;
    }
    order.extend(right.filter(|i| !pairs.iter().any(|&(_, r)| r == *i)));
    Ok((Some(on), Some(order)))
}

/// `access::choose`, comparing the keys that can serve the WHERE by the entries their
/// ranges hold now (counted in the trees up to `access::ESTIMATE_CAP`, when the bounds are
/// literals):
/// `status = 'new' AND created_at > '2025-12-30'` reads the narrower key, whichever it is.
fn choose_access(
    cx: &PlanCx,
    t: &Arc<tierdb_engine::Table>,
    filter: Option<&Expr>,
    hints: &Hints,
) -> AccessPlan {
    let est = |idx: Option<usize>,
               ranges: &[access::RangeExpr],
               domains: &[access::KeyDomain],
               cap: u64|
     -> Option<u64> {
        let env = crate::exec::NoEnv;
        let ecx = crate::expr::EvalCx::new(&[], &env);
        let concrete = access::concrete_ranges(ranges, domains, &ecx).ok()??;
        let mut total = 0u64;
        for r in concrete {
            let (lo, hi) = r.scan_bounds();
            let left = cap.saturating_sub(total);
            total += cx.engine.estimate_range(t, idx, &lo, &hi, left).ok()?;
            if total >= cap {
                break;
            }
        }
        Some(total)
    };
    access::choose_estimated(&t.def, filter, hints, Some(&est))
}

/// Turns the parsed join into its plan: ON clauses compiled over the tables up to theirs,
/// the first table's access path from the WHERE conjuncts on it alone, and per later table a
/// lookup from equalities with earlier tables (ON; also WHERE for an inner join).
fn plan_join(
    parts: Vec<JoinPart>,
    scope: &Scope,
    filter: Option<&Expr>,
    cx: &PlanCx,
) -> Result<crate::join::JoinPlan, SqlError> {
    use crate::join::{
        choose_lookup, conjuncts, only_columns_below, rejects_matched_rows, JoinInput, JoinPlan,
        JoinStep,
    };
    let mut parts = parts.into_iter();
    let Some(first) = parts.next() else {
        return Err(SqlError::syntax("internal: empty join"));
    };
    let where_conds: Vec<&Expr> = filter.map(conjuncts).unwrap_or_default();
    let w0 = first.input.width();
    let pushed: Vec<Expr> = where_conds
        .iter()
        .filter(|c| only_columns_below(c, w0))
        .map(|c| (*c).clone())
        .collect();
    let pushed = pushed
        .into_iter()
        .reduce(|a, b| Expr::Bin(crate::expr::BinOp::And, Box::new(a), Box::new(b)));
    let first_access = match &first.input {
        JoinInput::Table(t) => Some(access::choose(&t.def, pushed.as_ref(), &first.hints)),
        JoinInput::Derived { .. } => None,
    };
    let mut steps = Vec::new();
    let mut offset = w0;
    for p in parts {
        let width = p.input.width();
        // ON sees the tables up to its own (a prefix of the joined row), so a name that
        // a later table also has is neither ambiguous nor resolved to the later table.
        let visible = Scope {
            cols: scope.cols[..(offset + width).min(scope.cols.len())].to_vec(),
        };
        let on = match &p.on {
            Some(e) => {
                let mut c = Compiler::new(&visible, cx.placeholders);
                c.clause = "ON";
                let x = c.compile(e)?;
                if !only_columns_below(&x, offset + width) {
                    return Err(SqlError::new(
                        1054,
                        "42S22",
                        format!("Unknown column in 'ON': {e} names a table joined later"),
                    ));
                }
                Some(x)
            }
            None => None,
        };
        let mut conds: Vec<&Expr> = on.as_ref().map(conjuncts).unwrap_or_default();
        if !p.left {
            conds.extend(where_conds.iter().copied());
        }
        let (lookup, not_exists) = match &p.input {
            JoinInput::Table(t) => (
                choose_lookup(t, offset, &conds),
                p.left && rejects_matched_rows(t, offset, &where_conds),
            ),
            JoinInput::Derived { .. } => (None, false),
        };
        steps.push(JoinStep {
            input: p.input,
            left: p.left,
            on,
            lookup,
            offset,
            not_exists,
        });
        offset += width;
    }
    Ok(JoinPlan {
        first: first.input,
        first_access,
        first_filtered: pushed.is_some(),
        steps,
    })
}

/// The table column query column `i` of `p` shows unchanged (a plain column of a base
/// table, through joins and derived tables), for `CREATE TABLE ... AS SELECT` to copy: its
/// type, NULL-ability and default; not AUTO_INCREMENT, keys or ON UPDATE.
pub(crate) fn copied_column(p: &SelectPlan, i: usize) -> Option<ColumnDef> {
    if p.agg.is_some() {
        return None;
    }
    let Some(Expr::Col(j)) = p.project.get(i) else {
        return None;
    };
    let from_input = |input: &crate::join::JoinInput, j: usize| match input {
        crate::join::JoinInput::Table(t) => t.def.columns.get(j).cloned(),
        crate::join::JoinInput::Derived { plan, .. } => copied_column(plan, j),
    };
    let mut c = match &p.source {
        Source::Table { table, .. } => table.def.columns.get(*j).cloned(),
        Source::Derived { plan, .. } => copied_column(plan, *j),
        Source::Join(jn) => {
            let mut at = *j;
            let mut found = None;
            for input in jn.inputs() {
                let w = input.width();
                if at < w {
                    found = from_input(input, at);
                    break;
                }
                at -= w;
            }
            found
        }
        _ => None,
    }?;
    c.name = p.columns.get(i)?.name.clone();
    // A LEFT JOIN's inner columns may come out NULL whatever the table says.
    if p.columns.get(i).is_some_and(|m| !m.not_null) {
        c.nullable = true;
    }
    c.auto_increment = false;
    c.on_update_now = false;
    c.fill = None;
    Some(c)
}

/// `GROUP BY name`, as MariaDB resolves it: among the select-list items of that name, two
/// naming different columns are ambiguous (1052); then a column of FROM of that name wins;
/// else the first expression item of that name, else the column item.
fn group_by_name(
    name: &str,
    g: &ast::Expr,
    items: &[(ItemExpr, String)],
    scope: &Scope,
) -> Result<ItemExpr, SqlError> {
    let ambiguous = || {
        SqlError::new(
            1052,
            "23000",
            format!("Column '{name}' in GROUP BY is ambiguous"),
        )
    };
    // A select item that is a plain column: its position in FROM.
    let column_of = |x: &ItemExpr| -> Option<usize> {
        match x {
            ItemExpr::Col(i) => Some(*i),
            ItemExpr::Ast(a) => match &**a {
                ast::Expr::Identifier(i) => scope.resolve(&[&i.value]).ok(),
                ast::Expr::CompoundIdentifier(parts) => {
                    let p: Vec<&str> = parts.iter().map(|i| i.value.as_str()).collect();
                    scope.resolve(&p).ok()
                }
                _ => None,
            },
        }
    };
    let mut column: Option<(usize, &ItemExpr)> = None;
    let mut expression: Option<&ItemExpr> = None;
    for (x, n) in items {
        if !n.eq_ignore_ascii_case(name) {
            continue;
        }
        match column_of(x) {
            Some(c) => match column {
                Some((o, _)) if o != c => return Err(ambiguous()),
                _ => column = Some((c, x)),
            },
            None => {
                expression.get_or_insert(x);
            }
        }
    }
    match scope.resolve(&[name]) {
        Ok(_) => Ok(ItemExpr::Ast(Box::new(g.clone()))),
        Err(e) => match expression.or(column.map(|(_, x)| x)) {
            Some(x) => Ok(x.clone()),
            None if e.code == 1052 => Err(ambiguous()),
            None => Err(crate::compile::unknown_column(name, "GROUP BY")),
        },
    }
}

#[derive(Clone)]
enum ItemExpr {
    Ast(Box<ast::Expr>),
    Col(usize),
}

pub(crate) fn kind_type(c: &Column) -> SqlType {
    match c.kind {
        ColumnKind::Tiny
        | ColumnKind::Short
        | ColumnKind::Int24
        | ColumnKind::Long
        | ColumnKind::LongLong
        | ColumnKind::Year
        | ColumnKind::Bit => SqlType::Int,
        ColumnKind::Float | ColumnKind::Double => SqlType::Double,
        ColumnKind::NewDecimal => SqlType::Decimal(c.decimals),
        ColumnKind::Date => SqlType::Date,
        ColumnKind::DateTime | ColumnKind::Timestamp => SqlType::DateTime,
        ColumnKind::Time => SqlType::Time,
        ColumnKind::Null => SqlType::Null,
        _ => SqlType::Text,
    }
}

pub fn agg_type(s: &AggSpec) -> SqlType {
    match s.func {
        AggFunc::Count | AggFunc::CountStar => SqlType::Int,
        AggFunc::Sum => match s.arg_type {
            SqlType::Int => SqlType::Decimal(0),
            SqlType::Decimal(x) => SqlType::Decimal(x),
            _ => SqlType::Double,
        },
        AggFunc::Avg => match s.arg_type {
            SqlType::Int => SqlType::Decimal(4),
            SqlType::Decimal(x) => SqlType::Decimal(x.saturating_add(4).min(30)),
            _ => SqlType::Double,
        },
        AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => s.arg_type,
        AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => SqlType::Text,
    }
}

fn position_of(v: &ast::Value, n: usize, clause: &str) -> Result<usize, SqlError> {
    let ast::Value::Number(s, _) = v else {
        return Err(SqlError::syntax("expected a position"));
    };
    match s.parse::<usize>() {
        Ok(p) if p >= 1 && p <= n => Ok(p - 1),
        _ => Err(crate::compile::unknown_column(s, clause)),
    }
}

fn same_expr(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Col(x), Expr::Col(y)) => x == y,
        (Expr::Const(x), Expr::Const(y)) => x == y,
        (Expr::DecimalConst(x, s), Expr::DecimalConst(y, t)) => x == y && s == t,
        (Expr::Param(x), Expr::Param(y)) => x == y,
        _ => format!("{a:?}") == format!("{b:?}"),
    }
}

/// Rewrites each top-level conjunct `EXISTS (SELECT ... FROM t WHERE t.x = outer AND rest)`
/// of a WHERE into `outer IN (SELECT t.x FROM t WHERE rest)` when that equality, on integer
/// columns, is the subquery's only reference to the enclosing query: the subquery is then
/// run once instead of once per row, and its values can drive key lookups of the enclosing
/// table (`access`: `outer IN (SELECT ...)` on a key column). Both forms select the same
/// rows: EXISTS is false where IN is false or NULL, and WHERE keeps neither. Anything else
/// (NOT EXISTS, an aggregate, a second outer reference, a join) is left as it is.
fn exists_as_in(e: Expr, cx: &PlanCx) -> Expr {
    match e {
        Expr::Bin(crate::expr::BinOp::And, a, b) => Expr::Bin(
            crate::expr::BinOp::And,
            Box::new(exists_as_in(*a, cx)),
            Box::new(exists_as_in(*b, cx)),
        ),
        Expr::Exists(sref, false) if sref.outer.len() == 1 => {
            let mut subs = cx.subqueries.borrow_mut();
            let Some(p) = subs.get_mut(sref.index) else {
                return Expr::Exists(sref, false);
            };
            match decorrelate(p, sref.base) {
                Some(()) => Expr::InSubquery(
                    Box::new(sref.outer[0].clone()),
                    crate::expr::SubRef {
                        index: sref.index,
                        outer: Vec::new(),
                        base: sref.base,
                    },
                    false,
                ),
                None => Expr::Exists(sref, false),
            }
        }
        other => other,
    }
}

/// Turns the correlated EXISTS subquery `p` (its one outer value is parameter `base`) into
/// the uncorrelated `SELECT x FROM t WHERE rest` (see `exists_as_in`); None, leaving `p` as
/// it was, when it does not have that shape.
fn decorrelate(p: &mut SelectPlan, base: usize) -> Option<()> {
    let Source::Table { table, .. } = &p.source else {
        return None;
    };
    let limit_ok = match &p.limit {
        None => true,
        Some(Expr::Const(Value::Int(n))) => *n >= 1,
        Some(_) => false,
    };
    if p.agg.is_some()
        || p.having.is_some()
        || !p.windows.is_empty()
        || p.lock.is_some()
        || p.offset.is_some()
        || !limit_ok
        || p.outer_params != 1
    {
        return None;
    }
    let outer = |x: &Expr| x.any(&mut |y| matches!(y, Expr::Outer { .. }));
    let mut conj = Vec::new();
    access::conjuncts(p.filter.as_ref()?, &mut conj);
    let mut link = None;
    let mut rest = Vec::new();
    for c in conj {
        let col = match &c {
            Expr::Bin(crate::expr::BinOp::Eq, a, b) => match (&**a, &**b) {
                (
                    Expr::Col(x),
                    Expr::Outer {
                        param,
                        ty: SqlType::Int,
                        ..
                    },
                )
                | (
                    Expr::Outer {
                        param,
                        ty: SqlType::Int,
                        ..
                    },
                    Expr::Col(x),
                ) if *param == base => Some(*x),
                _ => None,
            },
            _ => None,
        };
        match col {
            Some(x) if link.is_none() => link = Some(x),
            _ if outer(&c) => return None,
            _ => rest.push(c),
        }
    }
    let x = link?;
    // What is left runs on every row of `t` now, not only on the rows the link picks: keep
    // it free of what could fail there (a scalar subquery's 1242, a division's 1365).
    let risky = |e: &Expr| {
        e.any(&mut |y| {
            matches!(
                y,
                Expr::Subquery(..)
                    | Expr::InSubquery(..)
                    | Expr::Exists(..)
                    | Expr::Quantified { .. }
                    | Expr::Bin(
                        crate::expr::BinOp::Div
                            | crate::expr::BinOp::IntDiv
                            | crate::expr::BinOp::Mod,
                        ..
                    )
            )
        })
    };
    if rest.iter().any(risky) {
        return None;
    }
    let is_int = |c: usize| {
        table
            .def
            .columns
            .get(c)
            .is_some_and(|d| matches!(d.ty, ColumnType::Int { .. }))
    };
    if !is_int(x) || p.project.iter().any(outer) {
        return None;
    }
    let filter = rest
        .into_iter()
        .reduce(|a, b| Expr::Bin(crate::expr::BinOp::And, Box::new(a), Box::new(b)));
    let access = access::choose(&table.def, filter.as_ref(), &access::Hints::default());
    let table = table.clone();
    p.source = Source::Table { table, access };
    p.filter = filter;
    p.project = vec![Expr::Col(x)];
    p.n_out = 1;
    p.conform = vec![None];
    p.columns.truncate(1);
    p.order.clear();
    p.sorted_by_access = false;
    p.extremes.clear();
    p.loose = None;
    p.distinct = false;
    p.limit = None;
    p.outer_params = 0;
    p.finish();
    Some(())
}

/// The columns an ORDER BY sorts by and whether all of them descend: None when a key is not
/// a plain column, the directions are mixed, or a key sorts by number (DECIMAL, whose index
/// order is its text's).
fn order_columns(order: &[OrderKey], project: &[Expr]) -> Option<(Vec<usize>, bool)> {
    let desc = order.first()?.desc;
    if order.iter().any(|o| o.desc != desc || o.numeric) {
        return None;
    }
    let cols = order
        .iter()
        .map(|o| match project.get(o.pos) {
            Some(Expr::Col(c)) => Some(*c),
            // A TIME column ordered by its microseconds (`Compiler::order_key`): its key
            // holds them, so key order is that order.
            Some(Expr::Cast(inner, crate::expr::CastTo::TimeMicros)) => match **inner {
                Expr::Col(c) => Some(c),
                _ => None,
            },
            _ => None,
        })
        .collect::<Option<Vec<usize>>>()?;
    Some((cols, desc))
}

/// Whether `access` yields rows in the ORDER BY's order: Some(reading backwards) if so.
fn order_matches(order: &[OrderKey], project: &[Expr], access: &AccessPlan) -> Option<bool> {
    let (cols, desc) = order_columns(order, project)?;
    (0..=access.fixed_prefix)
        .any(|skip| access.order_cols.get(skip..skip + cols.len()) == Some(&cols[..]))
        .then_some(desc)
}

/// Whether LIMIT (with OFFSET) asks for few enough rows that reading a key in order and
/// stopping beats sorting the table. A LIMIT given as a parameter counts as few.
fn few_rows(limit: &Option<Expr>, offset: &Option<Expr>) -> bool {
    const MOST: i64 = 10_000;
    let n = |e: &Option<Expr>| match e {
        Some(Expr::Const(Value::Int(i))) => Some(*i),
        Some(Expr::Const(Value::UInt(u))) => Some(i64::try_from(*u).unwrap_or(i64::MAX)),
        Some(_) => Some(0),
        None => None,
    };
    match n(limit) {
        None => false,
        Some(l) => l.saturating_add(n(offset).unwrap_or(0)) <= MOST,
    }
}

// ---------------------------------------------------------------------------------------
// INSERT / UPDATE / DELETE

fn insert(ins: &ast::Insert, cx: &PlanCx) -> Result<InsertPlan, SqlError> {
    if ins.returning.is_some() || ins.partitioned.is_some() {
        return Err(SqlError::unsupported("this INSERT clause"));
    }
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::unsupported("INSERT INTO TABLE FUNCTION"));
    };
    let table = cx.write_target(name, "INSERT")?;
    let def = &table.def;
    let empty = Scope::default();
    let mut c = Compiler::new(&empty, cx.placeholders);
    c.clause = "VALUES";
    let value = |c: &mut Compiler, e: &ast::Expr| -> Result<Option<Expr>, SqlError> {
        match e {
            ast::Expr::Identifier(i)
                if i.value.eq_ignore_ascii_case("DEFAULT") && i.quote_style.is_none() =>
            {
                Ok(None)
            }
            other => c.compile(other).map(Some),
        }
    };
    let mut col_names: Vec<String> = Vec::new();
    let mut rows: Vec<Vec<Option<Expr>>> = Vec::new();
    if !ins.assignments.is_empty() {
        let mut row = Vec::new();
        for a in &ins.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            col_names.push(crate::compile::object_name_last(n));
            row.push(value(&mut c, &a.value)?);
        }
        rows.push(row);
    } else {
        for n in &ins.columns {
            col_names.push(crate::compile::object_name_last(n));
        }
        let Some(src) = &ins.source else {
            return Err(SqlError::syntax("INSERT needs VALUES"));
        };
        let width = if col_names.is_empty() {
            def.columns.len()
        } else {
            col_names.len()
        };
        let ast::SetExpr::Values(vals) = &*src.body else {
            // INSERT ... SELECT: the query's rows (all read before the first insert).
            let q = select(src, cx)?;
            if q.n_out != width {
                return Err(SqlError::new(
                    1136,
                    "21S01",
                    "Column count doesn't match value count at row 1",
                ));
            }
            return finish_insert(table, rows, col_names, Some(Box::new(q)), ins, cx);
        };
        rows.reserve(vals.rows.len());
        // `INSERT INTO t [()] VALUES (), ...`: rows of defaults (what ORMs send for a model
        // with only defaulted fields). As in MariaDB, an empty first row makes every row
        // empty.
        let defaults =
            col_names.is_empty() && vals.rows.first().is_some_and(|r| r.content.is_empty());
        let width = if defaults { 0 } else { width };
        for (ri, r) in vals.rows.iter().enumerate() {
            if defaults && r.content.is_empty() {
                rows.push(vec![None; def.columns.len()]);
                continue;
            }
            if r.content.len() != width {
                return Err(SqlError::new(
                    1136,
                    "21S01",
                    format!("Column count doesn't match value count at row {}", ri + 1),
                ));
            }
            rows.push(
                r.content
                    .iter()
                    .map(|e| value(&mut c, e))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
    }
    finish_insert(table, rows, col_names, None, ins, cx)
}

/// The column mapping and duplicate-key rule of an INSERT whose rows are planned.
fn finish_insert(
    table: Arc<Table>,
    rows: Vec<Vec<Option<Expr>>>,
    col_names: Vec<String>,
    select: Option<Box<SelectPlan>>,
    ins: &ast::Insert,
    cx: &PlanCx,
) -> Result<InsertPlan, SqlError> {
    let def = &table.def;
    let mut col_map = vec![None; def.columns.len()];
    if col_names.is_empty() {
        for (i, m) in col_map.iter_mut().enumerate() {
            *m = Some(i);
        }
    } else {
        for (j, n) in col_names.iter().enumerate() {
            let ci = def
                .column_index(n)
                .ok_or_else(|| crate::compile::unknown_column(n, "INSERT INTO"))?;
            if col_map[ci].is_some() {
                return Err(SqlError::new(
                    1110,
                    "42000",
                    format!("Column '{n}' specified twice"),
                ));
            }
            col_map[ci] = Some(j);
        }
    }
    let on_duplicate = match (&ins.on, ins.replace_into, ins.ignore) {
        (Some(_), true, _) => return Err(SqlError::syntax("REPLACE ... ON DUPLICATE KEY UPDATE")),
        (Some(ast::OnInsert::DuplicateKeyUpdate(sets)), false, _) => {
            // IGNORE with ON DUPLICATE KEY UPDATE: the update wins, as in MySQL.
            let scope = table_scope(&table, None);
            let mut c = Compiler::new(&scope, cx.placeholders);
            c.values_offset = Some(def.columns.len());
            let mut out = Vec::with_capacity(sets.len());
            for a in sets {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(SqlError::unsupported("tuple assignment"));
                };
                let name = crate::compile::object_name_last(n);
                let ci = def
                    .column_index(&name)
                    .ok_or_else(|| crate::compile::unknown_column(&name, "UPDATE"))?;
                out.push((ci, c.compile(&a.value)?));
            }
            OnDuplicate::Update(out)
        }
        (Some(other), _, _) => return Err(SqlError::unsupported(format!("INSERT ... {other}"))),
        (None, true, _) => OnDuplicate::Replace,
        (None, false, true) => OnDuplicate::Ignore,
        (None, false, false) => OnDuplicate::Fail,
    };
    Ok(InsertPlan {
        rows,
        col_map,
        checks: crate::check::RowChecks::of(&table)?,
        on_duplicate,
        select,
        check: None,
        table,
    })
}

fn single_table(
    twj: &ast::TableWithJoins,
    cx: &PlanCx,
) -> Result<(Arc<Table>, Scope, Hints), SqlError> {
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("multi-table UPDATE/DELETE"));
    }
    let (t, hints, scope) = base_table(&twj.relation, cx, "UPDATE/DELETE")?;
    Ok((t, scope, hints))
}

fn where_and_limit(
    scope: &Scope,
    selection: &Option<ast::Expr>,
    limit: &Option<ast::Expr>,
    cx: &PlanCx,
) -> Result<(Option<Expr>, Option<Expr>), SqlError> {
    let filter = match selection {
        Some(w) => {
            let mut c = Compiler::new(scope, cx.placeholders);
            c.clause = "WHERE";
            c.planner = Some(cx);
            Some(c.compile(w)?)
        }
        None => None,
    };
    let limit = match limit {
        Some(l) => {
            let empty = Scope::default();
            let x = Compiler::new(&empty, cx.placeholders).compile(l)?;
            if !x.is_row_independent() {
                return Err(SqlError::syntax("LIMIT must be a constant"));
            }
            Some(x)
        }
        None => None,
    };
    Ok((filter, limit))
}

/// One ORDER BY key of a single-table UPDATE / DELETE, over the table's row.
#[derive(Clone, Debug)]
pub struct RowOrder {
    pub expr: Expr,
    pub desc: bool,
    /// A DECIMAL key: compared as a number (see `OrderKey::numeric`).
    pub numeric: bool,
    /// A binary column: strings compared as bytes (see `OrderKey::binary`).
    pub binary: bool,
}

/// `UPDATE/DELETE ... ORDER BY`: the rows matched are changed in this order (with LIMIT: the
/// first ones only).
fn row_order(
    order_by: &[ast::OrderByExpr],
    scope: &Scope,
    cx: &PlanCx,
) -> Result<Vec<RowOrder>, SqlError> {
    let mut out = Vec::with_capacity(order_by.len());
    for o in order_by {
        let desc = is_desc(o)?;
        let mut c = Compiler::new(scope, cx.placeholders);
        c.clause = "ORDER BY";
        let expr = c.compile(&o.expr)?;
        let expr = c.order_key(&expr).unwrap_or(expr);
        let numeric = matches!(expr.sql_type(&|i| scope.type_of(i)), SqlType::Decimal(_));
        let binary = scope.is_binary(&expr);
        out.push(RowOrder {
            expr,
            desc,
            numeric,
            binary,
        });
    }
    Ok(out)
}

fn update(u: &ast::Update, cx: &PlanCx) -> Result<Plan, SqlError> {
    if u.from.is_some() || u.returning.is_some() {
        return Err(SqlError::unsupported("UPDATE ... FROM / RETURNING"));
    }
    let ignore = matches!(u.or, Some(ast::SqliteOnConflict::Ignore));
    if !u.table.joins.is_empty() {
        if ignore {
            return Err(SqlError::unsupported("multi-table UPDATE IGNORE"));
        }
        if !u.order_by.is_empty() || u.limit.is_some() {
            return Err(multi_usage("UPDATE", !u.order_by.is_empty()));
        }
        let from = std::slice::from_ref(&u.table);
        let named = from_tables(from, cx)?;
        let mut targets: MultiTargets = Vec::new();
        for a in &u.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(SqlError::unsupported("tuple assignment"));
            };
            let parts = object_name_parts(n)?;
            let (ti, ci) = multi_column(&named, &parts)?;
            let value = match &a.value {
                ast::Expr::Identifier(i)
                    if i.value.eq_ignore_ascii_case("DEFAULT") && i.quote_style.is_none() =>
                {
                    None
                }
                e => Some(e),
            };
            match targets.iter_mut().find(|(t, _)| *t == ti) {
                Some((_, sets)) => sets.push((ci, value)),
                None => targets.push((ti, vec![(ci, value)])),
            }
        }
        targets.sort_by_key(|(t, _)| *t);
        let m = multi_write(from, &u.selection, &named, targets, cx)?;
        return Ok(Plan::Update(Box::new(UpdatePlan {
            table: m.targets[0].table.clone(),
            access: access::choose(&m.targets[0].table.def, None, &Hints::default()),
            filter: None,
            sets: Vec::new(),
            limit: None,
            order: Vec::new(),
            subqueries: Vec::new(),
            multi: Some(Box::new(m)),
            check: None,
            checks: None,
            ignore: false,
        })));
    }
    let (table, scope, hints) = single_table(&u.table, cx)?;
    let (filter, limit) = where_and_limit(&scope, &u.selection, &u.limit, cx)?;
    let order = row_order(&u.order_by, &scope, cx)?;
    let mut sets = Vec::with_capacity(u.assignments.len());
    for a in &u.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let parts = object_name_parts(n)?;
        let refs: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
        let ci = scope
            .resolve(&refs)
            .map_err(|_| crate::compile::unknown_column(&parts.join("."), "SET"))?;
        let value = match &a.value {
            ast::Expr::Identifier(i)
                if i.value.eq_ignore_ascii_case("DEFAULT") && i.quote_style.is_none() =>
            {
                let col = &table.def.columns[ci];
                Expr::Const(col.default.clone().unwrap_or(Value::Null))
            }
            e => {
                let mut c = Compiler::new(&scope, cx.placeholders);
                c.planner = Some(cx);
                c.clause = "SET";
                c.compile(e)?
            }
        };
        sets.push((ci, value));
    }
    let access = choose_access(cx, &table, filter.as_ref(), &hints);
    Ok(Plan::Update(Box::new(UpdatePlan {
        checks: crate::check::RowChecks::of(&table)?,
        table,
        access,
        filter,
        sets,
        limit,
        order,
        subqueries: Vec::new(),
        multi: None,
        check: None,
        ignore,
    })))
}

/// A multi-table write's targets while planning: (position in the FROM's tables, the
/// assignments to it as (column, value; None = DEFAULT)).
type MultiTargets<'a> = Vec<(usize, Vec<(usize, Option<&'a ast::Expr>)>)>;

/// 1221 for ORDER BY / LIMIT in a multi-table UPDATE / DELETE.
fn multi_usage(what: &str, order: bool) -> SqlError {
    SqlError::new(
        1221,
        "HY000",
        format!(
            "Incorrect usage of {what} and {}",
            if order { "ORDER BY" } else { "LIMIT" }
        ),
    )
}

/// The base tables a FROM list names, with the name the statement gives each (its alias, else
/// its table name).
fn from_tables(
    from: &[ast::TableWithJoins],
    cx: &PlanCx,
) -> Result<Vec<(String, Arc<Table>)>, SqlError> {
    let mut out = Vec::new();
    for twj in from {
        for f in std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation)) {
            if let ast::TableFactor::Table { name, alias, .. } = f {
                if cx.info_table(name)?.is_some() || cx.is_view(name) {
                    continue;
                }
                let t = cx.table(name)?;
                let shown = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| crate::compile::object_name_last(name));
                out.push((shown, t));
            }
        }
    }
    Ok(out)
}

/// The (table, column) a multi-table SET names: `t.c` (alias or table name) or a `c` only
/// one table has (1052 when several do, 1054 when none).
fn multi_column(
    named: &[(String, Arc<Table>)],
    parts: &[String],
) -> Result<(usize, usize), SqlError> {
    let (db, qual, col) = match parts {
        [c] => (None, None, c),
        [t, c] => (None, Some(t), c),
        [d, t, c] => (Some(d), Some(t), c),
        _ => return Err(crate::compile::unknown_column(&parts.join("."), "SET")),
    };
    let hits: Vec<(usize, usize)> = named
        .iter()
        .enumerate()
        .filter(|(_, (n, t))| {
            qual.is_none_or(|q| n.eq_ignore_ascii_case(q)) && db.is_none_or(|d| t.db == *d)
        })
        .filter_map(|(ti, (_, t))| t.def.column_index(col).map(|ci| (ti, ci)))
        .collect();
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => Err(crate::compile::unknown_column(&parts.join("."), "SET")),
        _ => Err(SqlError::new(
            1052,
            "23000",
            format!("Column '{col}' in SET is ambiguous"),
        )),
    }
}

/// Plans a multi-table write over `from` (+ WHERE): `targets` are positions in `named`, each
/// with its assignments (UPDATE; `None` = DEFAULT) or none (DELETE).
fn multi_write(
    from: &[ast::TableWithJoins],
    selection: &Option<ast::Expr>,
    named: &[(String, Arc<Table>)],
    targets: MultiTargets,
    cx: &PlanCx,
) -> Result<MultiWrite, SqlError> {
    if targets.is_empty() {
        return Err(SqlError::syntax("a multi-table write needs a target table"));
    }
    let wildcards: Vec<String> = targets
        .iter()
        .map(|(ti, _)| format!("`{}`.*", named[*ti].0.replace('`', "``")))
        .collect();
    let template = format!("SELECT {} FROM dual", wildcards.join(", "));
    let mut q =
        match sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::MySqlDialect {}, &template)
        {
            Ok(mut v) if v.len() == 1 => match v.pop() {
                Some(ast::Statement::Query(q)) => q,
                _ => return Err(SqlError::syntax("internal: multi-table template")),
            },
            _ => return Err(SqlError::syntax("internal: multi-table template")),
        };
    let mut out_targets = Vec::with_capacity(targets.len());
    let mut offset = 0;
    let mut width = 0;
    for (ti, _) in &targets {
        let t = &named[*ti].1;
        if t.def.has_hidden_key() {
            return Err(SqlError::unsupported(
                "multi-table UPDATE / DELETE of a table without a PRIMARY KEY",
            ));
        }
        width += t.def.columns.len();
    }
    let mut extra = Vec::new();
    for (ti, sets) in &targets {
        let t = named[*ti].1.clone();
        let mut out_sets = Vec::with_capacity(sets.len());
        for (ci, e) in sets {
            let v = match e {
                Some(e) => {
                    extra.push(ast::SelectItem::UnnamedExpr((*e).clone()));
                    MultiValue::At(width + extra.len() - 1)
                }
                None => {
                    MultiValue::Const(t.def.columns[*ci].default.clone().unwrap_or(Value::Null))
                }
            };
            out_sets.push((*ci, v));
        }
        let n = t.def.columns.len();
        out_targets.push(MultiTarget {
            checks: crate::check::RowChecks::of(&t)?,
            table: t,
            offset,
            sets: out_sets,
        });
        offset += n;
    }
    let n_values = extra.len();
    match &mut *q.body {
        ast::SetExpr::Select(sel) => {
            sel.projection.extend(extra);
            sel.from = from.to_vec();
            sel.selection = selection.clone();
        }
        _ => return Err(SqlError::syntax("internal: multi-table template")),
    }
    let plan = select(&q, cx)?;
    if plan.n_out != width + n_values {
        return Err(SqlError::syntax("internal: multi-table row width"));
    }
    Ok(MultiWrite {
        select: plan,
        targets: out_targets,
    })
}

fn delete(d: &ast::Delete, cx: &PlanCx) -> Result<Plan, SqlError> {
    if d.returning.is_some() {
        return Err(SqlError::unsupported("DELETE ... RETURNING"));
    }
    let ignore = d
        .on_cluster
        .as_ref()
        .is_some_and(|m| m.value == crate::parse::IGNORE_MARK);
    let from = match &d.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    // `DELETE a, b FROM a JOIN b ...` / `DELETE FROM a, b USING a JOIN b ...`.
    let multi = match (&d.tables, &d.using) {
        (t, None) if t.is_empty() => None,
        (t, None) => Some((t.clone(), from.as_slice())),
        (t, Some(using)) if t.is_empty() => Some((
            from.iter()
                .map(|twj| match &twj.relation {
                    ast::TableFactor::Table { name, .. } if twj.joins.is_empty() => {
                        Ok(name.clone())
                    }
                    other => Err(SqlError::syntax(format!("DELETE FROM {other} USING"))),
                })
                .collect::<Result<Vec<_>, _>>()?,
            using.as_slice(),
        )),
        _ => return Err(SqlError::syntax("DELETE with both a table list and USING")),
    };
    if let Some((names, from)) = multi {
        if !d.order_by.is_empty() || d.limit.is_some() {
            return Err(multi_usage("DELETE", !d.order_by.is_empty()));
        }
        let named = from_tables(from, cx)?;
        let mut targets: MultiTargets = Vec::new();
        for n in &names {
            let shown = crate::compile::object_name_last(n);
            let ti = named
                .iter()
                .position(|(x, _)| x.eq_ignore_ascii_case(&shown))
                .ok_or_else(|| {
                    SqlError::new(
                        1109,
                        "42S02",
                        format!("Unknown table '{shown}' in MULTI DELETE"),
                    )
                })?;
            if !targets.iter().any(|(t, _)| *t == ti) {
                targets.push((ti, Vec::new()));
            }
        }
        targets.sort_by_key(|(t, _)| *t);
        if ignore {
            return Err(SqlError::unsupported("multi-table DELETE IGNORE"));
        }
        let m = multi_write(from, &d.selection, &named, targets, cx)?;
        return Ok(Plan::Delete(Box::new(DeletePlan {
            table: m.targets[0].table.clone(),
            access: access::choose(&m.targets[0].table.def, None, &Hints::default()),
            filter: None,
            limit: None,
            order: Vec::new(),
            subqueries: Vec::new(),
            multi: Some(Box::new(m)),
            ignore: false,
        })));
    }
    let [twj] = from.as_slice() else {
        return Err(SqlError::unsupported("multi-table DELETE"));
    };
    let (table, scope, hints) = single_table(twj, cx)?;
    let (filter, limit) = where_and_limit(&scope, &d.selection, &d.limit, cx)?;
    let order = row_order(&d.order_by, &scope, cx)?;
    let access = choose_access(cx, &table, filter.as_ref(), &hints);
    Ok(Plan::Delete(Box::new(DeletePlan {
        table,
        access,
        filter,
        limit,
        order,
        subqueries: Vec::new(),
        multi: None,
        ignore,
    })))
}
