//! Joins: `FROM a [INNER | CROSS | LEFT [OUTER]] JOIN b ON ... [JOIN c ON ...]` and comma
//! lists, run as left-deep nested loops over base tables, derived tables and WITH queries.
//!
//! Owns: the join plan (which rows of each inner table a row of the tables before it meets —
//! an index or primary-key lookup when an equality of the ON clause, or of WHERE for an inner
//! join, gives the leading key columns from earlier tables or constants; otherwise the inner
//! table — always a derived one — read once and kept in memory) and its execution into rows
//! that are the inputs' columns side by side, before WHERE (`Run`: one row of the first
//! table at a time, the looked-up rows streamed, so a consumer that stops stops the reads).
//! A LEFT JOIN step whose WHERE rejects every matched row (`JoinStep::not_exists`) stops at
//! its first match.
//!
//! Must never: return a row the ON clause rejects (a lookup only narrows the candidates, the
//! whole ON clause is still evaluated), drop the NULL-extended row of a LEFT JOIN (nor make
//! one for a row that has a match, "Not exists" included), or use a
//! lookup whose key value has another storage class than the column (then the inner table is
//! scanned for that row instead: `1 = '1'` is true in SQL but not in the key encoding).

use crate::access::AccessPlan;
use crate::expr::{BinOp, CastTo, EvalCx, Expr};
use crate::plan::SelectPlan;
use crate::result::SqlError;
use std::cell::Cell;
use std::ops::Bound;
use std::sync::Arc;
use tierdb_engine::{ColumnType, Row, RowCursor, Table, Txn, Value};

/// What a join reads at one position: a base table or the rows of a derived table / WITH
/// query (computed once per execution, met by comparing every row).
#[derive(Clone, Debug)]
pub enum JoinInput {
    Table(Arc<Table>),
    Derived {
        plan: Box<SelectPlan>,
        alias: String,
    },
}

impl JoinInput {
    /// Columns this input adds to the joined row.
    pub fn width(&self) -> usize {
        match self {
            JoinInput::Table(t) => t.def.columns.len(),
            JoinInput::Derived { plan, .. } => plan.n_out,
        }
    }

    /// The name EXPLAIN shows.
    pub fn name(&self) -> &str {
        match self {
            JoinInput::Table(t) => &t.def.name,
            JoinInput::Derived { alias, .. } => alias,
        }
    }
}

/// The join of `first` (a base table read through `first_access`) with each step's input in
/// turn.
#[derive(Clone, Debug)]
pub struct JoinPlan {
    pub first: JoinInput,
    /// For a base table first (a derived one is read whole).
    pub first_access: Option<AccessPlan>,
    /// Some WHERE conjunct names the first table's columns alone (checked as it is read).
    pub first_filtered: bool,
    pub steps: Vec<JoinStep>,
}

#[derive(Clone, Debug)]
pub struct JoinStep {
    pub input: JoinInput,
    /// LEFT JOIN: a row meeting no row of this table goes on with NULLs for its columns.
    pub left: bool,
    /// The ON clause, over the columns of the tables up to this one.
    pub on: Option<Expr>,
    pub lookup: Option<Lookup>,
    /// Position of this table's first column in the joined row.
    pub offset: usize,
    /// A LEFT JOIN whose WHERE keeps only its NULL-extended rows (`t.c IS NULL` on a NOT NULL
    /// column `c` of this table): the first row meeting the ON clause settles that the row
    /// before it has no such result, so the read stops there (EXPLAIN's "Not exists").
    pub not_exists: bool,
}

/// Equalities giving the leading columns of a key of the inner table.
#[derive(Clone, Debug)]
pub struct Lookup {
    /// None: the primary key; Some(i): secondary index i.
    pub index: Option<usize>,
    /// Values of the key's leading columns, over the row of the tables before this one.
    pub keys: Vec<Expr>,
    /// The keys give the whole primary key: at most one row.
    pub point: bool,
    /// Name of the key (EXPLAIN).
    pub key_name: String,
}

impl JoinPlan {
    pub fn inputs(&self) -> impl Iterator<Item = &JoinInput> {
        std::iter::once(&self.first).chain(self.steps.iter().map(|s| &s.input))
    }
}

/// The conjuncts of `e` (`a AND b AND c` → [a, b, c]).
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Bin(BinOp::And, a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        other => vec![other],
    }
}

/// True when every column `e` names is below `end`.
pub fn only_columns_below(e: &Expr, end: usize) -> bool {
    !e.any(&mut |x| matches!(x, Expr::Col(c) if *c >= end))
}

/// The sides of an equality, and whether it is an exact DECIMAL one (both sides cast to
/// `CastTo::DecimalOrder`, compared byte-wise): such an equality looks up only an integer
/// key (a DECIMAL key holds its text at its own scale, which the other side's text need not
/// have), and the condition is checked again on the rows found.
fn equality(c: &Expr) -> Option<(&Expr, &Expr, bool)> {
    match c {
        Expr::Bin(BinOp::Eq, a, b) => Some((a, b, false)),
        Expr::Bytewise(inner) => match &**inner {
            Expr::Bin(BinOp::Eq, a, b) => match (&**a, &**b) {
                (Expr::Cast(a, CastTo::DecimalOrder), Expr::Cast(b, CastTo::DecimalOrder)) => {
                    Some((a, b, true))
                }
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The lookup for the table at `offset` (its definition `t`) from equalities in `conds`:
/// the primary key when all its columns are given, else the index with the most leading
/// columns given, else the primary key's leading columns.
pub fn choose_lookup(t: &Table, offset: usize, conds: &[&Expr]) -> Option<Lookup> {
    let width = t.def.columns.len();
    let mut eq: Vec<Option<Expr>> = vec![None; width];
    for c in conds {
        let Some((a, b, exact)) = equality(c) else {
            continue;
        };
        for (col, other) in [(a, b), (b, a)] {
            if let Expr::Col(ci) = *col {
                if (offset..offset + width).contains(&ci)
                    && (!exact || t.def.columns[ci - offset].ty.is_integer())
                    && only_columns_below(other, offset)
                    && !other.any(&mut |x| matches!(x, Expr::Param(_) | Expr::Outer { .. }))
                    && !other.is_correlated()
                    && eq[ci - offset].is_none()
                {
                    eq[ci - offset] = Some(other.clone());
                }
            }
        }
    }
    let given = |cols: &[usize]| cols.iter().take_while(|&&c| eq[c].is_some()).count();
    let keys_of = |cols: &[usize], n: usize| -> Vec<Expr> {
        cols[..n].iter().filter_map(|&c| eq[c].clone()).collect()
    };
    let pk = &t.def.primary_key;
    let pk_n = given(pk);
    if !pk.is_empty() && pk_n == pk.len() {
        return Some(Lookup {
            index: None,
            keys: keys_of(pk, pk_n),
            point: true,
            key_name: "PRIMARY".into(),
        });
    }
    let best = t
        .def
        .indexes
        .iter()
        .enumerate()
        .map(|(i, ix)| (i, given(&ix.columns)))
        .filter(|&(_, n)| n > 0)
        .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)));
    if let Some((i, n)) = best.filter(|&(_, n)| n >= pk_n) {
        let ix = &t.def.indexes[i];
        return Some(Lookup {
            index: Some(i),
            keys: keys_of(&ix.columns, n),
            point: false,
            key_name: ix.name.clone(),
        });
    }
    (pk_n > 0).then(|| Lookup {
        index: None,
        keys: keys_of(pk, pk_n),
        point: false,
        key_name: "PRIMARY".into(),
    })
}

/// Whether WHERE conjuncts `conds` reject every row in which the table at `offset` (`t`)
/// has a real row: one of them is `c IS NULL` for a NOT NULL column `c` of it.
pub fn rejects_matched_rows(t: &Table, offset: usize, conds: &[&Expr]) -> bool {
    conds.iter().any(|c| match c {
        Expr::IsNull(x, false) => match **x {
            Expr::Col(ci) => ci
                .checked_sub(offset)
                .and_then(|i| t.def.columns.get(i))
                .is_some_and(|col| !col.nullable),
            _ => false,
        },
        _ => false,
    })
}

/// Whether a key value can be looked up for a column of type `ty` (same storage class).
fn same_class(ty: &ColumnType, v: &Value) -> bool {
    match v {
        Value::Int(_) | Value::UInt(_) => ty.is_integer(),
        Value::Double(_) => matches!(ty, ColumnType::Float | ColumnType::Double),
        Value::Bytes(_) => {
            !ty.is_integer() && !matches!(ty, ColumnType::Float | ColumnType::Double)
        }
        Value::Null => false,
    }
}

/// One execution of a join: the rows of the derived inputs without a lookup, read once.
pub struct Run<'j> {
    plan: &'j JoinPlan,
    cache: Vec<Option<Vec<Row>>>,
}

impl<'j> Run<'j> {
    pub fn new(plan: &'j JoinPlan) -> Run<'j> {
        Run {
            plan,
            cache: vec![None; plan.steps.len()],
        }
    }

    /// Joins one row of the first table (its part of WHERE applied or not: WHERE is
    /// evaluated again on the joined rows) with the later tables, calling `f` with each
    /// joined row; false once `f` wants no more.
    pub fn outer_row(
        &mut self,
        mut row: Row,
        txn: &mut Txn,
        cx: &EvalCx,
        f: &mut dyn FnMut(Row) -> Result<bool, SqlError>,
    ) -> Result<bool, SqlError> {
        row.truncate(self.plan.first.width());
        step(self.plan, 0, row, txn, cx, &mut self.cache, f)
    }
}

/// Every row of `input` (a table's committed or this transaction's), columns only.
pub(crate) fn all_rows(
    input: &JoinInput,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Vec<Row>, SqlError> {
    let t = match input {
        JoinInput::Table(t) => t,
        JoinInput::Derived { plan, .. } => {
            let mut out = Vec::new();
            crate::exec::select_into(plan, txn, cx, &mut |r| {
                out.push(r);
                Ok(true)
            })?;
            return Ok(out);
        }
    };
    let width = t.def.columns.len();
    let mut out = Vec::new();
    for r in txn.scan_columns(t, None, Bound::Unbounded, Bound::Unbounded, None)? {
        let mut r = r?;
        r.truncate(width);
        out.push(r);
    }
    Ok(out)
}

/// The rows of step `s`'s table that may meet `prefix` through its lookup, read as they are
/// taken (a consumer that stops early reads no more); None when the step has no lookup or
/// this row's key values cannot use it (then every row is a candidate).
fn looked_up(
    s: &JoinStep,
    prefix: &[Value],
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Option<RowCursor>, SqlError> {
    let (JoinInput::Table(t), Some(lk)) = (&s.input, &s.lookup) else {
        return Ok(None);
    };
    let cols: &[usize] = match lk.index {
        None => &t.def.primary_key,
        Some(ix) => &t.def.indexes[ix].columns,
    };
    let mut vals = Vec::with_capacity(lk.keys.len());
    for (k, &c) in lk.keys.iter().zip(cols) {
        let v = k.eval(prefix, cx)?.into_owned();
        if v.is_null() {
            // `col = NULL` is never true: no row meets this one.
            return Ok(Some(Box::new(std::iter::empty())));
        }
        if !same_class(&t.def.columns[c].ty, &v) {
            return Ok(None);
        }
        vals.push(v);
    }
    if lk.point {
        return Ok(Some(Box::new(txn.get(t, &vals)?.into_iter().map(Ok))));
    }
    let (lo, hi) = (Bound::Included(vals.clone()), Bound::Included(vals));
    Ok(Some(txn.scan_columns(t, lk.index, lo, hi, None)?))
}

fn step(
    j: &JoinPlan,
    i: usize,
    prefix: Row,
    txn: &mut Txn,
    cx: &EvalCx,
    cache: &mut [Option<Vec<Row>>],
    f: &mut dyn FnMut(Row) -> Result<bool, SqlError>,
) -> Result<bool, SqlError> {
    // A join stops here when its statement was killed (its inner rows come from memory).
    crate::interrupt::check()?;
    let Some(s) = j.steps.get(i) else {
        return f(prefix);
    };
    let width = s.input.width();
    let met = Cell::new(false);
    // Joins `prefix` with one candidate; Some(false) = the consumer wants no more rows.
    let mut one =
        |r: &[Value], txn: &mut Txn, cache: &mut [Option<Vec<Row>>]| -> Result<bool, SqlError> {
            let mut row = Vec::with_capacity(prefix.len() + width);
            row.extend(prefix.iter().cloned());
            row.extend(r.iter().cloned());
            if let Some(on) = &s.on {
                if !on.matches(&row, cx)? {
                    return Ok(true);
                }
            }
            met.set(true);
            if s.not_exists {
                // WHERE rejects this row and every row made from it.
                return Ok(true);
            }
            step(j, i + 1, row, txn, cx, cache, f)
        };
    // Whether a candidate settled the "Not exists" step.
    let settled = || s.not_exists && met.get();
    match looked_up(s, &prefix, txn, cx)? {
        Some(rows) => {
            for r in rows {
                let mut r = r?;
                r.truncate(width);
                if !one(&r, txn, cache)? {
                    return Ok(false);
                }
                if settled() {
                    break;
                }
            }
        }
        None => {
            // The table is read once per statement; later steps use other slots.
            let rows = match cache[i].take() {
                Some(rows) => rows,
                None => all_rows(&s.input, txn, cx)?,
            };
            let mut go_on = true;
            for r in &rows {
                match one(r, txn, cache) {
                    Ok(true) if settled() => break,
                    Ok(true) => {}
                    Ok(false) => {
                        go_on = false;
                        break;
                    }
                    Err(e) => {
                        cache[i] = Some(rows);
                        return Err(e);
                    }
                }
            }
            cache[i] = Some(rows);
            if !go_on {
                return Ok(false);
            }
        }
    }
    if !met.get() && s.left {
        let mut row = prefix;
        row.extend(std::iter::repeat_n(Value::Null, width));
        return step(j, i + 1, row, txn, cx, cache, f);
    }
    Ok(true)
}
