//! Execution of planned SELECT / INSERT / UPDATE / DELETE against one engine `Txn`.
//!
//! Rows stream from the access path through filter → (aggregate) → project → (sort,
//! distinct) → limit; without ORDER BY (or when the access path already yields the order)
//! the scan stops as soon as LIMIT is satisfied. Writes collect their target rows first and
//! then change them (no row is visited twice); each target is locked and re-read first
//! (`lock_target`). A locking read (`SELECT ... FOR UPDATE / FOR SHARE / LOCK IN SHARE
//! MODE`) locks each base-table row that matches the WHERE on the unlocked scan — exclusive
//! for FOR UPDATE, shared for the other two — and passes on the re-read
//! newest committed version if it still matches; a full primary key is locked directly, even
//! when no row has it (the plan sorts again when the rows come through a secondary index in
//! ORDER BY order: a re-read row's order column may have moved). Like UPDATE, a locking read
//! does not see a row whose committed version did not match the WHERE when scanned, even if
//! another transaction is changing it to match. A query whose expressions run a correlated
//! subquery reads its source rows first and evaluates them with the transaction lent to the
//! subquery runner (`TxnRunner`); UPDATE / DELETE always lend it that way.
//!
//! Must never: commit or roll back the transaction, or undo a failed statement (the session
//! owns that, through an engine savepoint), or keep a cursor open while writing.

use crate::access::{concrete_ranges, Access, AccessPlan, RangeExpr};
use crate::coerce::{self, to_f64, to_i64, to_text, OrdRow};
use crate::compile::{AggFunc, AggSpec, FrameBound, WinFunc, WindowSpec};
use crate::ddl;
use crate::dec::Dec;
use crate::expr::{EvalCx, Expr, SqlType, SubRef, SubqueryRunner};
use crate::fit::{self, Dest};
use crate::fk::{self, Fk};
use crate::plan::{
    DeletePlan, InsertPlan, LockWait, OnDuplicate, SelectPlan, SetOp, Source, UpdatePlan,
};
use crate::result::{ColumnKind, Raised, SqlError, Warning};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;
use tierdb_engine::{
    Collation, ColumnMask, ColumnType, Error as EngineError, LockMode, Row, Table, Txn, Value,
};

/// The key of a row read from `t` in its primary tree (for a table without a primary key,
/// the hidden row id the engine returns after the columns).
pub(crate) fn pk_of(t: &Table, row: &[Value]) -> Vec<Value> {
    // The row id is the last value whatever the handle's column count (a row written after
    // an ADD COLUMN is wider than an older handle's definition).
    if t.def.has_hidden_key() {
        return row.last().cloned().into_iter().collect();
    }
    t.def
        .key_columns()
        .iter()
        .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
        .collect()
}

type RowFn<'f> = dyn FnMut(Row) -> Result<bool, SqlError> + 'f;

/// A locking read: rows are locked only when they match `filter` (the WHERE), both on the
/// unlocked scan and after the lock.
#[derive(Clone, Copy)]
struct Locking<'a> {
    filter: Option<&'a Expr>,
    mode: LockMode,
    wait: LockWait,
}

/// Locks row `pk` of `t` (in `mode`) and reads it, waiting as `wait` says: None when it is
/// gone, or when it is locked by another transaction under SKIP LOCKED.
fn lock_row(
    t: &Arc<Table>,
    pk: &[Value],
    mode: LockMode,
    wait: LockWait,
    txn: &mut Txn,
) -> Result<Option<Row>, SqlError> {
    match wait {
        LockWait::Wait => Ok(txn.lock_row_mode(t, pk, mode)?),
        LockWait::NoWait => Ok(txn.lock_row_nowait(t, pk, mode)?),
        LockWait::SkipLocked => match txn.lock_row_nowait(t, pk, mode) {
            Err(EngineError::LockWaitTimeout) => Ok(None),
            other => Ok(other?),
        },
    }
}

/// A row found by an unlocked scan, on its way to `f`: a locking read locks it and passes on
/// the re-read version if it still matches.
fn visit<F: FnMut(&mut Txn, Row) -> Result<bool, SqlError>>(
    t: &Arc<Table>,
    lock: Option<Locking>,
    row: Row,
    txn: &mut Txn,
    cx: &EvalCx,
    f: &mut F,
) -> Result<bool, SqlError> {
    // A scan stops here when its statement was killed.
    crate::interrupt::check()?;
    let Some(Locking { filter, mode, wait }) = lock else {
        return f(txn, row);
    };
    if let Some(x) = filter {
        if !x.matches(&row, cx)? {
            return Ok(true);
        }
    }
    match lock_target(t, filter, mode, wait, &row, txn, cx)? {
        Some(locked) => f(txn, locked),
        None => Ok(true),
    }
}

/// The row with full primary key `pk`: a plain read (of the `want` columns), or (locking)
/// lock the key and read the whole row.
fn point(
    t: &Arc<Table>,
    lock: Option<Locking>,
    want: Option<&ColumnMask>,
    pk: &[Value],
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Option<Row>, SqlError> {
    let Some(Locking { filter, mode, wait }) = lock else {
        return Ok(txn.get_columns(t, pk, want)?);
    };
    let Some(row) = lock_row(t, pk, mode, wait, txn)? else {
        return Ok(None);
    };
    if let Some(x) = filter {
        if !x.matches(&row, cx)? {
            return Ok(None);
        }
    }
    Ok(Some(row))
}

/// The ranges of `access` when it is one lookup by the whole primary key of `t`
/// (`WHERE id = ?`): point selects and single-row UPDATE / DELETE take fast paths then.
fn single_pk_point<'a>(t: &Table, access: &'a AccessPlan) -> Option<&'a [RangeExpr]> {
    match &access.access {
        Access::Pk {
            ranges,
            points: true,
        } if ranges.len() == 1 && ranges[0].eq.len() == t.def.primary_key.len() => Some(ranges),
        _ => None,
    }
}

/// Feeds every row of `t` reachable through `access` (a superset of the WHERE; with `lock`,
/// only locked rows matching it) to `f` until it returns false. Without `lock`, only the
/// `want` columns are decoded (the others are NULL); a locking read always reads whole rows.
/// `f` gets the transaction too, so it may read on through it while the scan is open (a
/// join's later tables); it is generic so that a plain consumer costs no extra call a row.
fn table_rows<F: FnMut(&mut Txn, Row) -> Result<bool, SqlError>>(
    t: &Arc<Table>,
    access: &AccessPlan,
    lock: Option<Locking>,
    want: Option<&ColumnMask>,
    txn: &mut Txn,
    cx: &EvalCx,
    f: &mut F,
) -> Result<(), SqlError> {
    let want = if lock.is_some() { None } else { want };
    let desc = access.desc;
    // Rows of key `index` (None: the primary key) within bounds, in the access's direction;
    // false when `f` stopped.
    let range = |txn: &mut Txn,
                 index: Option<usize>,
                 bounds: (Bound<Vec<Value>>, Bound<Vec<Value>>),
                 f: &mut F|
     -> Result<bool, SqlError> {
        for r in txn.scan_columns_dir(t, index, bounds, want, desc)? {
            if !visit(t, lock, r?, txn, cx, f)? {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let whole = (Bound::Unbounded, Bound::Unbounded);
    match &access.access {
        Access::Full => range(txn, None, whole, f).map(drop),
        Access::FullIndex(i) => range(txn, Some(*i), whole, f).map(drop),
        Access::Pk { ranges, .. } => {
            // Fast path: one point lookup (point selects, single-row UPDATE/DELETE).
            if let Some(ranges) = single_pk_point(t, access) {
                let Some(cr) = concrete_ranges(ranges, &access.domains, cx)? else {
                    return range(txn, None, whole, f).map(drop);
                };
                if let Some(r) = cr.into_iter().next() {
                    if let Some(row) = point(t, lock, want, &r.eq, txn, cx)? {
                        f(txn, row)?;
                    }
                }
                return Ok(());
            }
            let Some(mut cr) = concrete_ranges(ranges, &access.domains, cx)? else {
                return range(txn, None, whole, f).map(drop);
            };
            if desc {
                cr.reverse();
            }
            let n_pk = t.def.primary_key.len();
            for r in cr {
                if r.eq.len() == n_pk
                    && matches!((&r.lo, &r.hi), (Bound::Unbounded, Bound::Unbounded))
                {
                    if let Some(row) = point(t, lock, want, &r.eq, txn, cx)? {
                        if !f(txn, row)? {
                            return Ok(());
                        }
                    }
                    continue;
                }
                if !range(txn, None, r.scan_bounds(), f)? {
                    return Ok(());
                }
            }
            Ok(())
        }
        Access::Index { index, ranges } => {
            // A value that cannot be looked up reads the whole index: the rows keep the
            // index's order, which an ORDER BY may rely on.
            let Some(mut cr) = concrete_ranges(ranges, &access.domains, cx)? else {
                return range(txn, Some(*index), whole, f).map(drop);
            };
            if desc {
                cr.reverse();
            }
            for r in cr {
                if !range(txn, Some(*index), r.scan_bounds(), f)? {
                    return Ok(());
                }
            }
            Ok(())
        }
    }
}

/// The groups of a GROUP BY: each key's accumulators, in key order (a BTreeMap) while there
/// are few. Past `HASH_GROUPS_FROM` groups, while every key has a hashed form
/// (`group_hash_key`) and there is no ROLLUP (whose prefix totals need the groups in order
/// as they are made), they are found by hash instead, kept in the order met and sorted once
/// at the end.
struct Groups {
    hashed: Option<HashedGroups>,
    ordered: BTreeMap<OrdRow, Vec<Acc>>,
    /// Hashing may still be taken up (no ROLLUP, no key without a hashed form met).
    may_hash: bool,
}

type HashedGroups = (
    std::collections::HashMap<Vec<u8>, usize>,
    Vec<(OrdRow, Vec<Acc>)>,
);

/// Groups from which a GROUP BY finds them by hash (below, a few comparisons are cheaper).
const HASH_GROUPS_FROM: usize = 64;

impl Groups {
    fn new(rollup: bool) -> Groups {
        Groups {
            hashed: None,
            ordered: BTreeMap::new(),
            may_hash: !rollup,
        }
    }

    /// The accumulators of group `key`, made by `new` for a key met the first time.
    fn entry(&mut self, key: OrdRow, new: impl FnOnce() -> Vec<Acc>) -> &mut Vec<Acc> {
        if self.hashed.is_none() && self.may_hash && self.ordered.len() >= HASH_GROUPS_FROM {
            self.start_hashing();
        }
        let h = match self.hashed {
            Some(_) => group_hash_key(&key),
            None => None,
        };
        if h.is_none() {
            // A key with no hashed form: the groups so far go back into key order.
            if let Some((_, list)) = self.hashed.take() {
                self.ordered.extend(list);
                self.may_hash = false;
            }
        }
        match (&mut self.hashed, h) {
            (Some((index, list)), Some(h)) => {
                let i = *index.entry(h).or_insert_with(|| {
                    list.push((key, new()));
                    list.len() - 1
                });
                &mut list[i].1
            }
            _ => self.ordered.entry(key).or_insert_with(new),
        }
    }

    /// Moves the ordered groups into the hashed form (when every key has one).
    fn start_hashing(&mut self) {
        let mut index = std::collections::HashMap::with_capacity(self.ordered.len() * 2);
        for (i, k) in self.ordered.keys().enumerate() {
            match group_hash_key(k) {
                Some(h) => {
                    index.insert(h, i);
                }
                None => {
                    self.may_hash = false;
                    return;
                }
            }
        }
        let list: Vec<(OrdRow, Vec<Acc>)> = std::mem::take(&mut self.ordered).into_iter().collect();
        self.hashed = Some((index, list));
    }

    /// The groups in key order.
    fn into_sorted(self) -> Vec<(OrdRow, Vec<Acc>)> {
        match self.hashed {
            Some((_, mut list)) => {
                list.sort_by(|a, b| a.0.cmp(&b.0));
                list
            }
            None => self.ordered.into_iter().collect(),
        }
    }
}

/// Bytes equal for two group keys exactly when `OrdRow` compares them equal: per value a
/// class tag, then integers as 128-bit numbers (an Int and a UInt of one value meet) and
/// text as its collation's weights (`Collation::key_bytes`), length-prefixed. None for a
/// double, which compares numerically with integers.
fn group_hash_key(k: &OrdRow) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(k.0.len() * 17);
    for (i, v) in k.0.iter().enumerate() {
        match v {
            Value::Null => out.push(0),
            Value::Int(x) => {
                out.push(1);
                out.extend_from_slice(&i128::from(*x).to_le_bytes());
            }
            Value::UInt(x) => {
                out.push(1);
                out.extend_from_slice(&i128::from(*x).to_le_bytes());
            }
            Value::Double(_) => return None,
            Value::Bytes(b) => {
                let w = coerce::collation_of_bit(k.1, i).key_bytes(b);
                out.push(2);
                out.extend_from_slice(&(w.len() as u64).to_le_bytes());
                out.extend_from_slice(&w);
            }
        }
    }
    Some(out)
}

/// Rows this many in a row with one value of a loose scan's column make it jump past the
/// value with a new descent; below that the key is read on (nearly unique values cost no
/// more than a plain read of the key).
const LOOSE_SKIP_AFTER: u32 = 4;

/// A loose index scan (`access::Loose`): one row of `t` per value of the key's leading
/// column (rows whose value equals the previous one, by the column's collation, are
/// skipped; after `LOOSE_SKIP_AFTER` of them the read jumps past the value).
fn loose_rows(
    t: &Arc<Table>,
    l: &crate::access::Loose,
    want: Option<&ColumnMask>,
    txn: &mut Txn,
    f: &mut RowFn,
) -> Result<(), SqlError> {
    let coll = t
        .def
        .columns
        .get(l.col)
        .map_or(Collation::Binary, |c| c.collation);
    let mut from = Bound::Unbounded;
    'seek: loop {
        let bounds = (from, Bound::Unbounded);
        let mut rows = txn.scan_columns_dir(t, l.index, bounds, want, false)?;
        let mut last: Option<Value> = None;
        let mut repeats = 0;
        loop {
            // A statement killed while it walks many values stops here.
            crate::interrupt::check()?;
            let Some(row) = rows.next().transpose()? else {
                return Ok(());
            };
            let value = row.get(l.col).cloned().unwrap_or(Value::Null);
            if last
                .as_ref()
                .is_some_and(|p| coerce::sort_cmp_in(p, &value, coll).is_eq())
            {
                repeats += 1;
                if repeats >= LOOSE_SKIP_AFTER {
                    from = Bound::Excluded(vec![value]);
                    continue 'seek;
                }
                continue;
            }
            repeats = 0;
            last = Some(value);
            if !f(row)? {
                return Ok(());
            }
        }
    }
}

thread_local! {
    /// The work tables of the recursive WITH queries running on this thread: the rows the
    /// previous iteration added, by work-table number.
    static WORK_TABLES: RefCell<BTreeMap<usize, std::rc::Rc<Vec<Vec<Value>>>>> =
        const { RefCell::new(BTreeMap::new()) };
}

/// Most rows one recursive WITH query may make (its rows are held in memory while it runs;
/// a query whose rows multiply per iteration reaches this long before the iteration limit).
const RECURSIVE_ROWS_MAX: u64 = 4_000_000;

/// Most bytes of values one recursive WITH query may make (rows whose strings grow per
/// iteration reach this first).
const RECURSIVE_BYTES_MAX: u64 = 256 << 20;

/// Forgets a work table when its query ends (also by an error).
struct WorkTableGuard(usize);

impl Drop for WorkTableGuard {
    fn drop(&mut self) {
        WORK_TABLES.with(|w| w.borrow_mut().remove(&self.0));
    }
}

/// A recursive WITH query's rows (see `Source::Recursive`), fed to `f` as they are made.
fn recursive_rows(
    plan: &SelectPlan,
    (anchor, step, distinct, slot): (&SelectPlan, &SelectPlan, bool, usize),
    txn: &mut Txn,
    cx: &EvalCx,
    f: &mut RowFn,
) -> Result<(), SqlError> {
    let max_iterations = match cx.env.sysvar("max_recursive_iterations", None) {
        Ok(v) => to_i64(&v).unwrap_or(1000).max(0) as u64,
        Err(_) => 1000,
    };
    let _guard = WorkTableGuard(slot);
    let mut made = 0u64;
    let mut bytes = 0u64;
    let binary = anchor.output_binary();
    let mut seen: BTreeSet<OrdRow> = BTreeSet::new();
    let go_on = std::cell::Cell::new(true);
    // Keeps a new row (unless DISTINCT has it) for the next iteration and passes it on.
    let mut take = |row: Vec<Value>, next: &mut Vec<Vec<Value>>| -> Result<bool, SqlError> {
        let row = conform_row(plan, row);
        if distinct && !seen.insert(OrdRow(row.clone(), binary)) {
            return Ok(true);
        }
        made += 1;
        bytes += row
            .iter()
            .map(|v| match v {
                Value::Bytes(b) => b.len() as u64 + 16,
                _ => 16,
            })
            .sum::<u64>();
        if made > RECURSIVE_ROWS_MAX || bytes > RECURSIVE_BYTES_MAX {
            return Err(SqlError::new(
                1931,
                "HY000",
                format!(
                    "Query execution was interrupted. The recursive WITH query made more than {RECURSIVE_ROWS_MAX} rows or {} MiB",
                    RECURSIVE_BYTES_MAX >> 20
                ),
            ));
        }
        next.push(row.clone());
        go_on.set(f(row)?);
        Ok(go_on.get())
    };
    let mut work = Vec::new();
    select_into(anchor, txn, cx, &mut |row| take(row, &mut work))?;
    let mut iterations = 0u64;
    while go_on.get() && !work.is_empty() {
        if iterations >= max_iterations {
            return Err(SqlError::new(
                1931,
                "HY000",
                format!(
                    "Query execution was interrupted. The query exceeded max_recursive_iterations = {max_iterations}"
                ),
            ));
        }
        iterations += 1;
        let rows = std::rc::Rc::new(std::mem::take(&mut work));
        WORK_TABLES.with(|w| w.borrow_mut().insert(slot, rows));
        let mut next = Vec::new();
        select_into(step, txn, cx, &mut |row| take(row, &mut next))?;
        work = next;
    }
    Ok(())
}

/// The rows of `plan`'s FROM (before its WHERE; a locking read already applied it).
fn source_rows(
    plan: &SelectPlan,
    txn: &mut Txn,
    cx: &EvalCx,
    f: &mut RowFn,
) -> Result<(), SqlError> {
    if let (Source::Table { table, .. }, Some(l)) = (&plan.source, &plan.loose) {
        return loose_rows(table, l, plan.read_cols.as_ref(), txn, f);
    }
    match &plan.source {
        Source::Dual => {
            f(Vec::new())?;
            Ok(())
        }
        Source::Table { table, .. } if !plan.extremes.is_empty() => {
            for (access, col) in &plan.extremes {
                let mut go_on = true;
                table_rows(
                    table,
                    access,
                    None,
                    plan.read_cols.as_ref(),
                    txn,
                    cx,
                    &mut |_, row| {
                        if matches!(row.get(*col), None | Some(Value::Null)) {
                            return Ok(true);
                        }
                        go_on = f(row)?;
                        Ok(false)
                    },
                )?;
                if !go_on {
                    break;
                }
            }
            Ok(())
        }
        Source::Table { table, access } => {
            let lock = plan.lock.map(|l| Locking {
                filter: plan.filter.as_ref(),
                mode: if l.exclusive {
                    LockMode::Exclusive
                } else {
                    LockMode::Shared
                },
                wait: l.wait,
            });
            let want = plan.read_cols.as_ref();
            table_rows(table, access, lock, want, txn, cx, &mut |_, r| f(r))
        }
        Source::Derived { plan, .. } => select_into(plan, txn, cx, f),
        Source::WorkTable(slot) => {
            let rows = WORK_TABLES.with(|w| w.borrow().get(slot).cloned());
            for row in rows.iter().flat_map(|r| r.iter()) {
                if !f(row.clone())? {
                    break;
                }
            }
            Ok(())
        }
        Source::Recursive {
            anchor,
            step,
            distinct,
            slot,
        } => recursive_rows(plan, (anchor, step, *distinct, *slot), txn, cx, f),
        Source::SetOperation {
            op: SetOp::Union,
            left,
            right,
            distinct,
        } => {
            let mut seen: BTreeSet<OrdRow> = BTreeSet::new();
            let mut go_on = true;
            let binary = left.output_binary() | right.output_binary();
            for part in [left, right] {
                if !go_on {
                    break;
                }
                select_into(part, txn, cx, &mut |row| {
                    let row = conform_row(plan, row);
                    if *distinct && !seen.insert(OrdRow(row.clone(), binary)) {
                        return Ok(true);
                    }
                    go_on = f(row)?;
                    Ok(go_on)
                })?;
            }
            Ok(())
        }
        Source::SetOperation {
            op,
            left,
            right,
            distinct,
        } => {
            // The right operand's rows, counted; then the left one streams through them.
            let binary = left.output_binary() | right.output_binary();
            let mut counts: BTreeMap<OrdRow, u64> = BTreeMap::new();
            select_into(right, txn, cx, &mut |row| {
                *counts
                    .entry(OrdRow(conform_row(plan, row), binary))
                    .or_default() += 1;
                Ok(true)
            })?;
            let intersect = *op == SetOp::Intersect;
            let mut emitted: BTreeSet<OrdRow> = BTreeSet::new();
            select_into(left, txn, cx, &mut |row| {
                let key = OrdRow(conform_row(plan, row), binary);
                let keep = if *distinct {
                    counts.contains_key(&key) == intersect && !emitted.contains(&key)
                } else {
                    match counts.get_mut(&key) {
                        Some(n) if *n > 0 => {
                            *n -= 1;
                            intersect
                        }
                        _ => !intersect,
                    }
                };
                if !keep {
                    return Ok(true);
                }
                if *distinct {
                    emitted.insert(OrdRow(key.0.clone(), binary));
                }
                f(key.0)
            })
        }
        Source::Join(j) => {
            // The first table's rows stream in: each goes through the later tables before
            // the next is read, so a LIMIT stops the read of the first table too.
            let mut join = crate::join::Run::new(j);
            match (&j.first, &j.first_access) {
                (crate::join::JoinInput::Table(t), Some(access)) => {
                    table_rows(t, access, None, None, txn, cx, &mut |txn, r| {
                        join.outer_row(r, txn, cx, f)
                    })
                }
                (first, _) => {
                    for r in crate::join::all_rows(first, txn, cx)? {
                        if !join.outer_row(r, txn, cx, f)? {
                            break;
                        }
                    }
                    Ok(())
                }
            }
        }
        Source::Virtual(info) => {
            let rows = match (info.schema, info.def.name.as_str()) {
                (crate::infoschema::SCHEMA, "PROCESSLIST") => cx.env.processlist(),
                (
                    crate::infoschema::SCHEMA,
                    t @ ("GLOBAL_STATUS" | "SESSION_STATUS" | "GLOBAL_VARIABLES"
                    | "SESSION_VARIABLES"),
                ) => cx.env.server_values(t),
                _ => crate::infoschema::visible_rows(info, cx.env.account(), cx.env.accounts())?,
            };
            for row in rows {
                if !f(row)? {
                    break;
                }
            }
            Ok(())
        }
    }
}

fn count_arg(e: &Option<Expr>, what: &str, cx: &EvalCx) -> Result<Option<u64>, SqlError> {
    match e {
        None => Ok(None),
        Some(x) => {
            let v = x.eval(&[], cx)?;
            match &*v {
                Value::Int(i) if *i >= 0 => Ok(Some(*i as u64)),
                Value::UInt(u) => Ok(Some(*u)),
                Value::Bytes(b) => match coerce::parse_integer_exact(b).and_then(|i| i.as_i128()) {
                    Some(i) if i >= 0 => Ok(Some(i as u64)),
                    _ => Err(SqlError::new(
                        1210,
                        "HY000",
                        format!("Incorrect arguments to {what}"),
                    )),
                },
                Value::Double(d) if *d >= 0.0 && d.fract() == 0.0 => Ok(Some(*d as u64)),
                _ => Err(SqlError::new(
                    1210,
                    "HY000",
                    format!("Incorrect arguments to {what}"),
                )),
            }
        }
    }
}

/// Converts a computed value to the kind announced in the column metadata.
/// An operand row of a set operation in the result's column kinds (so `1` and `1.00` of an
/// INT and a DECIMAL operand compare equal).
fn conform_row(plan: &SelectPlan, row: Vec<Value>) -> Vec<Value> {
    if plan.conform.iter().all(Option::is_none) {
        return row;
    }
    row.into_iter()
        .enumerate()
        .map(|(i, v)| match plan.conform.get(i).copied().flatten() {
            Some((k, decimals)) => conform(v, k, decimals),
            None => v,
        })
        .collect()
}

pub fn conform(v: Value, kind: ColumnKind, decimals: u8) -> Value {
    if v.is_null() {
        return v;
    }
    match kind {
        // DECIMAL results (SUM of DECIMAL, DECIMAL arithmetic) show their scale: 96.30.
        ColumnKind::NewDecimal if decimals <= 30 => {
            let text = match &v {
                Value::Double(d) => coerce::decimal_text(*d, decimals),
                other => match to_text(other) {
                    Some(t) => String::from_utf8_lossy(&t).into_owned(),
                    None => return v,
                },
            };
            match coerce::format_decimal(&text, 65, decimals) {
                coerce::DecimalResult::Ok(s) => Value::Bytes(s.into_bytes()),
                _ => v,
            }
        }
        // A DECIMAL whose scale is not exact (a division): the double is kept, for the
        // statements reading it (a derived table, INSERT ... SELECT), and the protocol shows
        // it at the column's scale.
        ColumnKind::NewDecimal if matches!(v, Value::Double(_)) => v,
        ColumnKind::Tiny
        | ColumnKind::Short
        | ColumnKind::Int24
        | ColumnKind::Long
        | ColumnKind::LongLong
        | ColumnKind::Year
        | ColumnKind::Bit => match v {
            Value::Int(_) | Value::UInt(_) => v,
            // An integer past 64 bits (FLOOR of a long DECIMAL) keeps its digits.
            Value::Bytes(b) if Dec::parse(&b).is_some_and(|d| d.scale() == 0) => Value::Bytes(b),
            other => Value::Int(to_i64(&other).unwrap_or(0)),
        },
        ColumnKind::Float | ColumnKind::Double => match v {
            Value::Double(_) => v,
            other => Value::Double(to_f64(&other).unwrap_or(0.0)),
        },
        ColumnKind::Null => Value::Null,
        _ => match v {
            Value::Bytes(_) => v,
            other => Value::Bytes(to_text(&other).map(|c| c.into_owned()).unwrap_or_default()),
        },
    }
}

/// Runs correlated subqueries through the statement's transaction, which its caller has
/// lent to the cell: nothing else reads through it while an expression is evaluated.
struct TxnRunner<'c, 't> {
    txn: &'c RefCell<&'t mut Txn>,
}

impl SubqueryRunner for TxnRunner<'_, '_> {
    fn rows(
        &self,
        s: &SubRef,
        params: Vec<Value>,
        max_rows: usize,
        cx: &EvalCx,
    ) -> Result<Vec<Value>, SqlError> {
        let plan = cx
            .subplans
            .get(s.index)
            .ok_or_else(|| SqlError::new(1105, "HY000", "internal: unknown subquery"))?;
        let mut txn = self.txn.try_borrow_mut().map_err(|_| {
            SqlError::new(
                1105,
                "HY000",
                "internal: a correlated subquery ran while its transaction was reading",
            )
        })?;
        let scx = EvalCx {
            params: &params,
            runner: None,
            ..*cx
        };
        let mut out = Vec::new();
        select_into(plan, &mut txn, &scx, &mut |r| {
            out.push(r.into_iter().next().unwrap_or(Value::Null));
            Ok(out.len() < max_rows)
        })?;
        Ok(out)
    }
}

/// Runs `f` with `cx` able to run correlated subqueries through `txn` (lent to a cell that
/// `f` borrows from whenever it reads or writes itself).
fn with_runner<R>(
    txn: &mut Txn,
    cx: &EvalCx,
    f: impl FnOnce(&RefCell<&mut Txn>, &EvalCx) -> Result<R, SqlError>,
) -> Result<R, SqlError> {
    let cell = RefCell::new(txn);
    let runner = TxnRunner { txn: &cell };
    let rcx = EvalCx {
        runner: Some(&runner),
        ..*cx
    };
    f(&cell, &rcx)
}

/// Runs a SELECT and collects its rows.
pub fn run_select(
    plan: &SelectPlan,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut out = Vec::new();
    select_into(plan, txn, cx, &mut |r| {
        out.push(r);
        Ok(true)
    })?;
    Ok(out)
}

/// `run_select`, and the rows FOUND_ROWS() reports afterwards: with SQL_CALC_FOUND_ROWS,
/// those the query has without its LIMIT / OFFSET (the query runs without them and the
/// page is cut from its rows), else the rows returned.
pub fn run_select_counting(
    plan: &SelectPlan,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<(Vec<Vec<Value>>, u64), SqlError> {
    if !plan.calc_found_rows || (plan.limit.is_none() && plan.offset.is_none()) {
        let rows = run_select(plan, txn, cx)?;
        let n = rows.len() as u64;
        return Ok((rows, n));
    }
    let limit = count_arg(&plan.limit, "LIMIT", cx)?;
    let offset = count_arg(&plan.offset, "OFFSET", cx)?.unwrap_or(0);
    let mut all = plan.clone();
    all.limit = None;
    all.offset = None;
    let rows = run_select(&all, txn, cx)?;
    let found = rows.len() as u64;
    let page = rows
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit.map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX)))
        .collect();
    Ok((page, found))
}

/// The projection of `row` (consumed: bare columns used once are moved out, not copied).
fn project(plan: &SelectPlan, mut row: Vec<Value>, cx: &EvalCx) -> Result<Vec<Value>, SqlError> {
    let mut out = Vec::with_capacity(plan.project.len());
    for (i, e) in plan.project.iter().enumerate() {
        let v = match e {
            Expr::Col(c) if plan.project_moves.get(i) == Some(&true) && *c < row.len() => {
                std::mem::replace(&mut row[*c], Value::Null)
            }
            _ => e.eval(&row, cx)?.into_owned(),
        };
        out.push(match plan.conform.get(i).copied().flatten() {
            Some((k, decimals)) => conform(v, k, decimals),
            None => v,
        });
    }
    Ok(out)
}

pub(crate) fn select_into(
    plan: &SelectPlan,
    txn: &mut Txn,
    cx: &EvalCx,
    sink: &mut RowFn,
) -> Result<(), SqlError> {
    if !plan.correlated {
        return select_rows(plan, &mut |f| source_rows(plan, txn, cx, f), cx, sink);
    }
    // A correlated subquery runs for each row through the transaction: read the rows first
    // (only those the WHERE's other conditions let through).
    let mut rows = Vec::new();
    source_rows(plan, txn, cx, &mut |r| {
        if uncorrelated_conjuncts_hold(plan.filter.as_ref(), &r, cx)? {
            rows.push(r);
        }
        Ok(true)
    })?;
    with_runner(txn, cx, |_, rcx| {
        let mut rows = rows.into_iter();
        let mut feed = |f: &mut RowFn| -> Result<(), SqlError> {
            for r in rows.by_ref() {
                if !f(r)? {
                    break;
                }
            }
            Ok(())
        };
        select_rows(plan, &mut feed, rcx, sink)
    })
}

/// False when a condition ANDed into `filter` that runs no correlated subquery fails on
/// `row` (the whole filter then fails too).
fn uncorrelated_conjuncts_hold(
    filter: Option<&Expr>,
    row: &[Value],
    cx: &EvalCx,
) -> Result<bool, SqlError> {
    match filter {
        None => Ok(true),
        Some(Expr::Bin(crate::expr::BinOp::And, a, b)) => {
            Ok(uncorrelated_conjuncts_hold(Some(a), row, cx)?
                && uncorrelated_conjuncts_hold(Some(b), row, cx)?)
        }
        Some(e) if e.is_correlated() => Ok(true),
        Some(e) => e.matches(row, cx),
    }
}

/// The rows a source feeds to its argument (until it returns false).
type Feed<'f> = dyn FnMut(&mut RowFn) -> Result<(), SqlError> + 'f;

/// Filter → (aggregate) → project → (sort, distinct) → limit over the rows of `feed`.
fn select_rows(
    plan: &SelectPlan,
    feed: &mut Feed,
    cx: &EvalCx,
    sink: &mut RowFn,
) -> Result<(), SqlError> {
    let limit = count_arg(&plan.limit, "LIMIT", cx)?;
    let offset = count_arg(&plan.offset, "OFFSET", cx)?.unwrap_or(0);
    if limit == Some(0) {
        return Ok(());
    }
    let n_out = plan.n_out;
    let needs_sort = !plan.order.is_empty() && !plan.sorted_by_access;
    let windowed = !plan.windows.is_empty();
    if plan.agg.is_none() && !needs_sort && !windowed {
        // Streaming: filter → project → (distinct) → offset/limit, stopping early.
        let mut skipped = 0u64;
        let mut emitted = 0u64;
        let mut seen: BTreeSet<OrdRow> = BTreeSet::new();
        let mut err = None;
        feed(&mut |row| {
            if let Some(f) = &plan.filter {
                if !f.matches(&row, cx)? {
                    return Ok(true);
                }
            }
            if let Some(h) = &plan.having {
                if !h.matches(&row, cx)? {
                    return Ok(true);
                }
            }
            let mut out = project(plan, row, cx)?;
            out.truncate(n_out);
            if plan.distinct && !seen.insert(OrdRow(out.clone(), plan.output_binary())) {
                return Ok(true);
            }
            if skipped < offset {
                skipped += 1;
                return Ok(true);
            }
            emitted += 1;
            match sink(out) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    err = Some(e);
                    return Ok(false);
                }
            }
            Ok(limit.is_none_or(|l| emitted < l))
        })?;
        return match err {
            Some(e) => Err(e),
            None => Ok(()),
        };
    }

    // Materializing path: pre-rows = projection ++ extra sort values. With window
    // functions, the rows are kept unprojected in `stage` until the windows are computed.
    let mut pre: Vec<Vec<Value>> = Vec::new();
    let mut stage: Vec<Vec<Value>> = Vec::new();
    match &plan.agg {
        None => {
            feed(&mut |row| {
                if let Some(f) = &plan.filter {
                    if !f.matches(&row, cx)? {
                        return Ok(true);
                    }
                }
                if let Some(h) = &plan.having {
                    if !h.matches(&row, cx)? {
                        return Ok(true);
                    }
                }
                if windowed {
                    stage.push(row);
                } else {
                    pre.push(project(plan, row, cx)?);
                }
                Ok(true)
            })?;
        }
        Some(agg) => {
            let new_accs = || agg.specs.iter().map(Acc::new).collect::<Vec<_>>();
            // Hashed while every key is hashable and there is no ROLLUP (whose prefix totals
            // need the groups in order as they are made); sorted once at the end.
            let mut groups = Groups::new(agg.rollup);
            // WITH ROLLUP: per prefix length l < n of the GROUP BY list, the totals of each
            // prefix.
            let levels = if agg.rollup { agg.group.len() } else { 0 };
            let mut partial: Vec<BTreeMap<OrdRow, Vec<Acc>>> =
                (0..levels).map(|_| BTreeMap::new()).collect();
            let mut single = if agg.group.is_empty() {
                Some(new_accs())
            } else {
                None
            };
            feed(&mut |row| {
                if let Some(f) = &plan.filter {
                    if !f.matches(&row, cx)? {
                        return Ok(true);
                    }
                }
                let accs = match &mut single {
                    Some(a) => a,
                    None => {
                        let key = agg
                            .group
                            .iter()
                            .map(|g| g.eval(&row, cx).map(|v| v.into_owned()))
                            .collect::<Result<Vec<_>, _>>()?;
                        for (l, level) in partial.iter_mut().enumerate() {
                            let accs = level
                                .entry(OrdRow(key[..l].to_vec(), agg.group_binary))
                                .or_insert_with(new_accs);
                            for (acc, spec) in accs.iter_mut().zip(agg.specs.iter()) {
                                acc.add(spec, &row, cx)?;
                            }
                        }
                        groups.entry(OrdRow(key, agg.group_binary), new_accs)
                    }
                };
                for (acc, spec) in accs.iter_mut().zip(agg.specs.iter()) {
                    acc.add(spec, &row, cx)?;
                }
                Ok(true)
            })?;
            let mut emit = |key: Vec<Value>, accs: Vec<Acc>| -> Result<(), SqlError> {
                let mut arow = key;
                arow.extend(
                    accs.into_iter()
                        .zip(agg.specs.iter())
                        .map(|(a, s)| a.finish(s)),
                );
                if let Some(h) = &plan.having {
                    if !h.matches(&arow, cx)? {
                        return Ok(());
                    }
                }
                if windowed {
                    stage.push(arow);
                } else {
                    pre.push(project(plan, arow, cx)?);
                }
                Ok(())
            };
            match single {
                Some(accs) => emit(Vec::new(), accs)?,
                None => {
                    let n = agg.group.len();
                    let mut partial: Vec<_> = partial.into_iter().map(|m| m.into_iter()).collect();
                    let mut full = groups.into_sorted().into_iter().peekable();
                    while let Some((k, accs)) = full.next() {
                        let next = full.peek().map(|(nk, _)| nk.0.clone());
                        let key = k.0;
                        emit(key.clone(), accs)?;
                        // The prefixes this was the last group of, longest first (a prefix
                        // the next group shares, and so every shorter one, goes on).
                        for l in (0..partial.len()).rev() {
                            let prefix = |k: &[Value]| OrdRow(k[..l].to_vec(), agg.group_binary);
                            if next.as_ref().is_some_and(|nk| prefix(nk) == prefix(&key)) {
                                break;
                            }
                            if let Some((p, accs)) = partial[l].next() {
                                let mut total = p.0;
                                total.resize(n, Value::Null);
                                emit(total, accs)?;
                            }
                        }
                    }
                }
            }
        }
    }
    if windowed {
        let results = plan
            .windows
            .iter()
            .map(|w| window_values(w, &stage, cx))
            .collect::<Result<Vec<_>, _>>()?;
        let mut cols: Vec<_> = results.into_iter().map(Vec::into_iter).collect();
        for mut row in stage {
            row.resize(plan.window_base, Value::Null);
            for c in &mut cols {
                row.push(c.next().unwrap_or(Value::Null));
            }
            pre.push(project(plan, row, cx)?);
        }
    }
    if needs_sort {
        let order = &plan.order;
        pre.sort_by(|a, b| {
            for k in order {
                let (x, y) = (
                    a.get(k.pos).unwrap_or(&Value::Null),
                    b.get(k.pos).unwrap_or(&Value::Null),
                );
                let o = key_cmp(x, y, k.desc, k.numeric, k.binary);
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        });
    }
    let mut seen: BTreeSet<OrdRow> = BTreeSet::new();
    let mut skipped = 0u64;
    let mut emitted = 0u64;
    for mut r in pre {
        r.truncate(n_out);
        if plan.distinct && !seen.insert(OrdRow(r.clone(), plan.output_binary())) {
            continue;
        }
        if skipped < offset {
            skipped += 1;
            continue;
        }
        if limit.is_some_and(|l| emitted >= l) {
            break;
        }
        emitted += 1;
        if !sink(r)? {
            break;
        }
    }
    Ok(())
}

/// The values of window function `w` for each of `rows` (in their order): the rows sorted
/// by partition and window ORDER BY (stably), each partition walked once. Aggregates over a
/// frame that starts at the partition's first row (the default) or ends at its last are
/// accumulated in one pass; other frames are summed row by row over the frame.
fn window_values(w: &WindowSpec, rows: &[Vec<Value>], cx: &EvalCx) -> Result<Vec<Value>, SqlError> {
    let n = rows.len();
    let eval_all = |es: &[Expr], r: &[Value]| -> Result<Vec<Value>, SqlError> {
        es.iter()
            .map(|e| e.eval(r, cx).map(|v| v.into_owned()))
            .collect()
    };
    let mut parts = Vec::with_capacity(n);
    let mut keys = Vec::with_capacity(n);
    let order_keys: Vec<Expr> = w.order.iter().map(|o| o.key.clone()).collect();
    for r in rows {
        parts.push(OrdRow(eval_all(&w.partition, r)?, w.partition_binary));
        keys.push(eval_all(&order_keys, r)?);
    }
    let key_order = |a: usize, b: usize| -> Ordering {
        for (o, (x, y)) in w.order.iter().zip(keys[a].iter().zip(keys[b].iter())) {
            let c = key_cmp(x, y, o.desc, o.numeric, o.binary);
            if c != Ordering::Equal {
                return c;
            }
        }
        Ordering::Equal
    };
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| parts[a].cmp(&parts[b]).then_with(|| key_order(a, b)));
    let mut out = vec![Value::Null; n];
    let mut start = 0;
    while start < n {
        let mut end = start + 1;
        while end < n && parts[idx[end]] == parts[idx[start]] {
            end += 1;
        }
        partition_values(w, rows, &idx[start..end], &key_order, &mut out, cx)?;
        start = end;
    }
    Ok(out)
}

/// `window_values` for one partition `p` (row numbers in window order).
fn partition_values(
    w: &WindowSpec,
    rows: &[Vec<Value>],
    p: &[usize],
    key_order: &dyn Fn(usize, usize) -> Ordering,
    out: &mut [Value],
    cx: &EvalCx,
) -> Result<(), SqlError> {
    let m = p.len();
    // Peer groups: rows with equal ORDER BY keys, [peer_start, peer_end).
    let mut peer_start = vec![0usize; m];
    let mut peer_end = vec![m; m];
    for k in 1..m {
        peer_start[k] = if key_order(p[k - 1], p[k]) == Ordering::Equal {
            peer_start[k - 1]
        } else {
            k
        };
    }
    for k in (0..m.saturating_sub(1)).rev() {
        peer_end[k] = if peer_start[k + 1] == peer_start[k] {
            peer_end[k + 1]
        } else {
            k + 1
        };
    }
    let arg = |i: usize, k: usize| -> Result<Value, SqlError> {
        match w.args.get(i) {
            Some(e) => Ok(e.eval(&rows[p[k]], cx)?.into_owned()),
            None => Ok(Value::Null),
        }
    };
    // The frame of row k as [lo, hi).
    let frame = |k: usize| -> (usize, usize) {
        let f = &w.frame;
        let lo = match f.start {
            FrameBound::Unbounded => 0,
            FrameBound::CurrentRow if !f.rows => peer_start[k],
            FrameBound::CurrentRow => k,
            FrameBound::Preceding(d) => k.saturating_sub(usize::try_from(d).unwrap_or(usize::MAX)),
            FrameBound::Following(d) => k.saturating_add(usize::try_from(d).unwrap_or(usize::MAX)),
        };
        let hi = match f.end {
            FrameBound::Unbounded => m,
            FrameBound::CurrentRow if !f.rows => peer_end[k],
            FrameBound::CurrentRow => k + 1,
            FrameBound::Preceding(d) => {
                match usize::try_from(d).ok().and_then(|d| k.checked_sub(d)) {
                    Some(x) => x + 1,
                    None => 0,
                }
            }
            FrameBound::Following(d) => k
                .saturating_add(usize::try_from(d).unwrap_or(usize::MAX))
                .saturating_add(1),
        };
        (lo.min(m), hi.min(m))
    };
    let mut dense = 0i64;
    for k in 0..m {
        if peer_start[k] == k {
            dense += 1;
        }
        let v = match w.func {
            WinFunc::RowNumber => Value::Int(k as i64 + 1),
            WinFunc::Rank => Value::Int(peer_start[k] as i64 + 1),
            WinFunc::DenseRank => Value::Int(dense),
            WinFunc::PercentRank => Value::Double(if m > 1 {
                peer_start[k] as f64 / (m - 1) as f64
            } else {
                0.0
            }),
            WinFunc::CumeDist => Value::Double(peer_end[k] as f64 / m as f64),
            WinFunc::Ntile => {
                let b = match to_i64(&arg(0, k)?) {
                    Some(b) if b > 0 => b as usize,
                    _ => {
                        return Err(SqlError::new(
                            4024,
                            "HY000",
                            "Argument of NTILE must be greater than 0",
                        ))
                    }
                };
                // The first m % b buckets hold one row more than the others.
                let (q, r) = (m / b, m % b);
                let big = r * (q + 1);
                Value::Int(if k < big {
                    k / (q + 1) + 1
                } else {
                    (k - big) / q.max(1) + r + 1
                } as i64)
            }
            WinFunc::Lag | WinFunc::Lead => {
                // A negative offset looks the other way, a NULL one is 0 (as MariaDB).
                let off = match w.args.get(1) {
                    None => Some(1),
                    Some(_) => Some(to_i64(&arg(1, k)?).unwrap_or(0)),
                };
                match off {
                    None => Value::Null,
                    Some(off) => {
                        let back = (w.func == WinFunc::Lag) == (off >= 0);
                        let o = usize::try_from(off.unsigned_abs()).unwrap_or(usize::MAX);
                        let target = if back {
                            k.checked_sub(o)
                        } else {
                            k.checked_add(o).filter(|t| *t < m)
                        };
                        match target {
                            Some(t) => arg(0, t)?,
                            None => arg(2, k)?,
                        }
                    }
                }
            }
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                let (lo, hi) = frame(k);
                let at = match w.func {
                    WinFunc::FirstValue => Some(lo),
                    WinFunc::LastValue => hi.checked_sub(1),
                    // Position 0, a negative or NULL one: no row (NULL), as MariaDB.
                    _ => match to_i64(&arg(1, k)?) {
                        Some(nth) if nth >= 1 => usize::try_from(nth - 1)
                            .ok()
                            .and_then(|n| lo.checked_add(n)),
                        _ => None,
                    },
                };
                match at.filter(|&a| a >= lo && a < hi) {
                    Some(a) => arg(0, a)?,
                    None => Value::Null,
                }
            }
            // Computed for the whole partition below.
            WinFunc::Agg(_) => Value::Null,
        };
        out[p[k]] = v;
    }
    let Some(spec) = &w.agg else {
        return Ok(());
    };
    let frames: Vec<(usize, usize)> = (0..m).map(frame).collect();
    if frames.iter().all(|f| f.0 == 0) {
        // Frames grow from the first row: one running accumulator.
        let mut acc = Acc::new(spec);
        let mut pos = 0;
        for (k, &(_, hi)) in frames.iter().enumerate() {
            while pos < hi {
                acc.add(spec, &rows[p[pos]], cx)?;
                pos += 1;
            }
            out[p[k]] = acc.clone().finish(spec);
        }
    } else if frames.iter().all(|f| f.1 == m) {
        // Frames reach the last row: accumulate from the end.
        let mut acc = Acc::new(spec);
        let mut pos = m;
        for k in (0..m).rev() {
            let lo = frames[k].0;
            while pos > lo {
                pos -= 1;
                acc.add(spec, &rows[p[pos]], cx)?;
            }
            out[p[k]] = acc.clone().finish(spec);
        }
    } else {
        for (k, &(lo, hi)) in frames.iter().enumerate() {
            let mut acc = Acc::new(spec);
            for &r in p.iter().take(hi).skip(lo) {
                acc.add(spec, &rows[r], cx)?;
            }
            out[p[k]] = acc.finish(spec);
        }
    }
    Ok(())
}

/// An aggregate accumulator.
#[derive(Clone)]
enum Acc {
    Count(i64),
    SumInt {
        sum: i128,
        any: bool,
        count: i64,
    },
    /// SUM / AVG of DECIMALs, exact (`dec`); turns into `SumF` if a value is not an exact
    /// number or the sum outgrows `dec::MAX_DIGITS`.
    SumExact {
        sum: Dec,
        any: bool,
        count: i64,
    },
    SumF {
        sum: f64,
        any: bool,
        count: i64,
    },
    MinMax(Option<Value>),
    Any(Option<Value>),
    Distinct(BTreeSet<OrdRow>),
    /// GROUP_CONCAT: per row its ORDER BY keys and its string.
    Concat(Vec<(Vec<Value>, Value)>),
}

impl Acc {
    fn new(s: &AggSpec) -> Acc {
        if matches!(
            s.func,
            AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg
        ) {
            return Acc::Concat(Vec::new());
        }
        if s.distinct {
            return Acc::Distinct(BTreeSet::new());
        }
        match s.func {
            AggFunc::Count | AggFunc::CountStar => Acc::Count(0),
            AggFunc::Sum | AggFunc::Avg => match s.arg_type {
                SqlType::Int => Acc::SumInt {
                    sum: 0,
                    any: false,
                    count: 0,
                },
                SqlType::Decimal(_) => Acc::SumExact {
                    sum: Dec::from_int(0),
                    any: false,
                    count: 0,
                },
                _ => Acc::SumF {
                    sum: 0.0,
                    any: false,
                    count: 0,
                },
            },
            AggFunc::Min | AggFunc::Max => Acc::MinMax(None),
            AggFunc::AnyValue => Acc::Any(None),
            AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
                Acc::Concat(Vec::new())
            }
        }
    }

    fn add(&mut self, s: &AggSpec, row: &[Value], cx: &EvalCx) -> Result<(), SqlError> {
        if let (AggFunc::CountStar, Acc::Count(n)) = (s.func, &mut *self) {
            *n += 1;
            return Ok(());
        }
        let Some(arg) = &s.arg else { return Ok(()) };
        let v = arg.eval(row, cx)?;
        if v.is_null() {
            if let Acc::Any(x @ None) = self {
                *x = Some(Value::Null);
            }
            return Ok(());
        }
        match self {
            Acc::Count(n) => *n += 1,
            Acc::SumInt { sum, any, count } => {
                match &*v {
                    Value::Int(_) | Value::UInt(_) => *sum += v.as_i128().unwrap_or(0),
                    other => *sum += i128::from(to_i64(other).unwrap_or(0)),
                }
                *any = true;
                *count += 1;
            }
            Acc::SumExact { sum, any, count } => {
                match Dec::of(&v).and_then(|x| sum.checked_add(&x)) {
                    Some(next) => {
                        *sum = next;
                        *any = true;
                        *count += 1;
                    }
                    None => {
                        // Not exact (or past `dec::MAX_DIGITS`): the rest of the sum in doubles.
                        *self = Acc::SumF {
                            sum: sum.to_f64() + to_f64(&v).unwrap_or(0.0),
                            any: true,
                            count: *count + 1,
                        };
                    }
                }
            }
            Acc::SumF { sum, any, count } => {
                *sum += to_f64(&v).unwrap_or(0.0);
                *any = true;
                *count += 1;
            }
            Acc::MinMax(cur) => {
                let replace = match cur {
                    None => true,
                    Some(c) => {
                        let o = if matches!(s.arg_type, SqlType::Decimal(_)) {
                            coerce::sort_cmp_decimal(&v, c)
                        } else {
                            coerce::sort_cmp_in(&v, c, coll(s.binary))
                        };
                        if s.func == AggFunc::Min {
                            o == Ordering::Less
                        } else {
                            o == Ordering::Greater
                        }
                    }
                };
                if replace {
                    *cur = Some(v.into_owned());
                }
            }
            Acc::Any(cur) => {
                if cur.is_none() {
                    *cur = Some(v.into_owned());
                }
            }
            Acc::Distinct(set) => {
                set.insert(OrdRow(vec![v.into_owned()], u64::from(s.binary)));
            }
            Acc::Concat(items) => {
                let keys = s
                    .order
                    .iter()
                    .map(|o| o.key.eval(row, cx).map(|v| v.into_owned()))
                    .collect::<Result<Vec<_>, _>>()?;
                let text = to_text(&v).map(|t| t.into_owned()).unwrap_or_default();
                items.push((keys, Value::Bytes(text)));
            }
        }
        Ok(())
    }

    fn finish(self, s: &AggSpec) -> Value {
        match self {
            Acc::Count(n) => Value::Int(n),
            Acc::SumInt { sum, any, count } => {
                if !any {
                    return Value::Null;
                }
                let sum = Dec::from_int(sum);
                match s.func {
                    AggFunc::Avg => match sum.div_int(count, 4) {
                        Some(d) => d.into_text_value(),
                        None => Value::Null,
                    },
                    _ => sum.into_text_value(),
                }
            }
            Acc::SumExact { sum, any, count } => {
                if !any {
                    return Value::Null;
                }
                // SUM keeps the argument's scale, AVG four digits more (MariaDB's
                // div_precision_increment), rounded half away from zero; the result travels
                // as `Dec::into_value` makes it.
                let scale = match s.arg_type {
                    SqlType::Decimal(k) => k,
                    _ => 0,
                };
                let exact = match s.func {
                    AggFunc::Avg => sum.div_int(count, scale.saturating_add(4)),
                    _ => sum.round(scale),
                };
                match exact {
                    Some(d) => d.into_value(),
                    None => {
                        let total = sum.to_f64();
                        match s.func {
                            AggFunc::Avg => Value::Double(total / count as f64),
                            _ => Value::Double(total),
                        }
                    }
                }
            }
            Acc::SumF { sum, any, count } => {
                if !any {
                    return Value::Null;
                }
                match s.func {
                    AggFunc::Avg => Value::Double(sum / count as f64),
                    _ => Value::Double(sum),
                }
            }
            Acc::MinMax(v) | Acc::Any(v) => v.unwrap_or(Value::Null),
            Acc::Concat(items) => group_concat(s, items),
            Acc::Distinct(set) => {
                let vals: Vec<Value> = set
                    .into_iter()
                    .filter_map(|r| r.0.into_iter().next())
                    .collect();
                let mut acc = Acc::new(&AggSpec {
                    distinct: false,
                    ..s.clone()
                });
                let probe = AggSpec {
                    arg: Some(Expr::Col(0)),
                    distinct: false,
                    ..s.clone()
                };
                let env = NoEnv;
                let cx = EvalCx::new(&[], &env);
                for v in vals {
                    let _ = acc.add(&probe, std::slice::from_ref(&v), &cx);
                }
                acc.finish(&probe)
            }
        }
    }
}

/// Most bytes a GROUP_CONCAT result keeps (MariaDB's default `group_concat_max_len`).
const GROUP_CONCAT_MAX_LEN: usize = 1 << 20;

/// GROUP_CONCAT's result from the rows' (ORDER BY keys, string): sorted by the keys (stably,
/// so equal keys keep the order rows were read in), with DISTINCT the first of equal strings
/// kept, joined by the separator and cut at `GROUP_CONCAT_MAX_LEN` bytes (at a character
/// boundary); NULL for no rows.
fn group_concat(s: &AggSpec, mut items: Vec<(Vec<Value>, Value)>) -> Value {
    if items.is_empty() {
        return Value::Null;
    }
    if !s.order.is_empty() {
        items.sort_by(|(a, _), (b, _)| {
            for ((x, y), o) in a.iter().zip(b).zip(&s.order) {
                let c = key_cmp(x, y, o.desc, o.numeric, o.binary);
                if c != Ordering::Equal {
                    return c;
                }
            }
            Ordering::Equal
        });
    }
    let mut seen: BTreeSet<OrdRow> = BTreeSet::new();
    // JSON_ARRAYAGG / JSON_OBJECTAGG: each row's JSON (`[x]` / `{"k": v}`) loses its
    // brackets; the members are joined as MariaDB prints them.
    let (open, separator, close): (&[u8], &[u8], &[u8]) = match s.func {
        AggFunc::JsonArrayAgg => (b"[", b",", b"]"),
        AggFunc::JsonObjectAgg => (b"{", b", ", b"}"),
        _ => (b"", &s.separator, b""),
    };
    let mut out: Vec<u8> = open.to_vec();
    let mut first = true;
    let mut kept = 0usize;
    for (_, v) in items {
        if s.limit.is_some_and(|n| kept >= n) {
            break;
        }
        if s.distinct && !seen.insert(OrdRow(vec![v.clone()], u64::from(s.binary))) {
            continue;
        }
        kept += 1;
        if !first {
            out.extend_from_slice(separator);
        }
        first = false;
        if let Value::Bytes(b) = v {
            match s.func {
                AggFunc::JsonArrayAgg => out.extend_from_slice(inner_json(&b)),
                AggFunc::JsonObjectAgg => out.extend_from_slice(&compact_member(inner_json(&b))),
                _ => out.extend_from_slice(&b),
            }
        }
        if out.len() >= GROUP_CONCAT_MAX_LEN {
            // Cut at a character boundary: never inside a UTF-8 sequence.
            let mut end = GROUP_CONCAT_MAX_LEN;
            while end > 0 && out.get(end).is_some_and(|&b| b & 0xC0 == 0x80) {
                end -= 1;
            }
            out.truncate(end);
            break;
        }
    }
    out.extend_from_slice(close);
    Value::Bytes(out)
}

/// `[x]` / `{...}` without its brackets.
fn inner_json(b: &[u8]) -> &[u8] {
    b.get(1..b.len().saturating_sub(1)).unwrap_or_default()
}

/// `"key": value` as `"key":value` (JSON_OBJECTAGG's spacing in MariaDB).
fn compact_member(m: &[u8]) -> Vec<u8> {
    let mut escaped = false;
    for (i, &c) in m.iter().enumerate().skip(1) {
        match c {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'"' => {
                if m[i + 1..].starts_with(b": ") {
                    let mut out = m[..=i].to_vec();
                    out.push(b':');
                    out.extend_from_slice(&m[i + 3..]);
                    return out;
                }
                break;
            }
            _ => {}
        }
    }
    m.to_vec()
}

pub(crate) struct NoEnv;
impl crate::expr::Env for NoEnv {
    fn current_db(&self) -> Option<&str> {
        None
    }
    fn user(&self) -> String {
        String::new()
    }
    fn connection_id(&self) -> u32 {
        0
    }
    fn last_insert_id(&self) -> u64 {
        0
    }
    fn version(&self) -> String {
        String::new()
    }
    fn sysvar(&self, name: &str, _: Option<bool>) -> Result<Value, SqlError> {
        Err(crate::variables::unknown(name))
    }
    fn user_var(&self, _: &str) -> Value {
        Value::Null
    }
}

/// Result of a write statement.
pub struct WriteResult {
    pub affected: u64,
    pub matched: u64,
    pub first_auto_id: Option<i64>,
    /// Rows whose key was taken (INSERT IGNORE, REPLACE, ON DUPLICATE KEY UPDATE).
    pub duplicates: u64,
    /// Warnings for SHOW WARNINGS.
    pub warnings: Raised,
}

fn not_null(col: &str) -> SqlError {
    SqlError::new(1048, "23000", format!("Column '{col}' cannot be null"))
}

/// Value `v` assigned to column `col` by an UPDATE's SET (row `dest.row` of the statement):
/// fitted to the column's type, NULL only where the column takes it (a lenient write
/// stores the type's implicit default instead, with warning 1048).
fn assigned(
    col: &tierdb_engine::ColumnDef,
    v: Value,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Value, SqlError> {
    let v = fit::fit(v, col, dest, raised)?;
    if v.is_null() && !col.nullable {
        return null_in_not_null(col, dest.lenient, raised);
    }
    Ok(v)
}

/// NULL written to NOT NULL column `col`: error 1048, or (`lenient`) warning 1048 and the
/// type's implicit default (0, '', the zero date).
fn null_in_not_null(
    col: &tierdb_engine::ColumnDef,
    lenient: bool,
    raised: &mut Raised,
) -> Result<Value, SqlError> {
    if !lenient {
        return Err(not_null(&col.name));
    }
    let e = not_null(&col.name);
    raised.push(Warning::warn(e.code, e.message));
    Ok(ddl::implicit_default(&col.ty))
}

/// Warning or error 1364: column `col` given no value has no default.
fn no_default(col: &tierdb_engine::ColumnDef) -> SqlError {
    SqlError::new(
        1364,
        "HY000",
        format!("Field '{}' doesn't have a default value", col.name),
    )
}

pub fn run_insert(plan: &InsertPlan, txn: &mut Txn, cx: &EvalCx) -> Result<WriteResult, SqlError> {
    let t = &plan.table;
    let cols = &t.def.columns;
    let mut warnings = Raised::default();
    let mut tally = Tally::default();
    let ignore = matches!(plan.on_duplicate, OnDuplicate::Ignore);
    let mode = crate::expr::write_mode(cx.env);
    // Division by zero in the values written is an error (unless IGNORE or the sql_mode
    // says otherwise); so is a value that does not fit its column.
    let strict = !ignore && mode.division;
    let lenient = ignore || !mode.strict;
    // INSERT ... SELECT reads every row first (also when it reads the table it fills).
    let selected = match &plan.select {
        Some(q) => {
            let _writing = crate::expr::WrittenValues::begin(strict);
            Some(run_select(q, txn, cx)?)
        }
        None => None,
    };
    let n_rows = selected.as_ref().map_or(plan.rows.len(), |r| r.len());
    let many = plan.select.is_some() || n_rows > 1;
    // NULL into a NOT NULL column fails a one-row INSERT ... VALUES even outside strict
    // mode (not under IGNORE), as MariaDB.
    let null_lenient = lenient && (ignore || many);
    if n_rows > 0 {
        check_unset_defaults(plan, lenient, &mut warnings)?;
    }
    let fk = Fk::of(cx);
    for ri in 0..n_rows {
        crate::interrupt::check()?;
        let dest = Dest {
            db: &t.db,
            table: &t.def.name,
            row: ri + 1,
            lenient,
        };
        let mut row: Row = Vec::with_capacity(cols.len());
        for (ci, col) in cols.iter().enumerate() {
            let given = match (plan.col_map[ci], &selected) {
                (Some(j), Some(rows)) => rows[ri].get(j).cloned(),
                (Some(j), None) => match plan.rows[ri].get(j) {
                    Some(Some(e)) => {
                        let _writing = crate::expr::WrittenValues::begin(strict);
                        Some(e.eval(&[], cx)?.into_owned())
                    }
                    _ => None,
                },
                (None, _) => None,
            };
            let mut v = match given {
                Some(v) => fit::fit(v, col, &dest, &mut warnings)?,
                None => match ddl::column_default(col) {
                    Some(v) => v,
                    None if lenient => {
                        // An explicit DEFAULT (a column left out was warned about above).
                        if plan.col_map[ci].is_some() {
                            let e = no_default(col);
                            warnings.push(Warning::warn(e.code, e.message));
                        }
                        ddl::implicit_default(&col.ty)
                    }
                    None => return Err(no_default(col)),
                },
            };
            if v.is_null() && !col.nullable && !col.auto_increment {
                v = null_in_not_null(col, null_lenient, &mut warnings)?;
            }
            row.push(v);
        }
        put_row(
            plan,
            row,
            many,
            txn,
            cx,
            &fk,
            &dest,
            &mut warnings,
            &mut tally,
        )?;
    }
    Ok(WriteResult {
        affected: tally.affected,
        matched: (n_rows as u64) - tally.check_skipped,
        first_auto_id: tally.first_auto,
        duplicates: tally.duplicates,
        warnings,
    })
}

/// The columns an INSERT (or LOAD DATA) gives no value that have no default: warned about
/// once, first (an error before any value is looked at in strict mode).
pub(crate) fn check_unset_defaults(
    plan: &InsertPlan,
    lenient: bool,
    warnings: &mut Raised,
) -> Result<(), SqlError> {
    for (ci, col) in plan.table.def.columns.iter().enumerate() {
        if plan.col_map[ci].is_none() && ddl::column_default(col).is_none() {
            let e = no_default(col);
            if !lenient {
                return Err(e);
            }
            warnings.push(Warning::warn(e.code, e.message));
        }
    }
    Ok(())
}

/// What an insert statement's rows have done so far.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub affected: u64,
    /// Rows whose key was taken (skipped, replaced or updated).
    pub duplicates: u64,
    /// Rows REPLACE deleted to make room.
    pub deleted: u64,
    /// Rows IGNORE skipped for a failed CHECK constraint (not counted as records).
    pub check_skipped: u64,
    /// The first AUTO_INCREMENT value generated.
    pub first_auto: Option<i64>,
}

/// Writes one row the statement built (every column's value, fitted) under the plan's
/// duplicate-key rule, after its view CHECK OPTION, CHECK constraints and foreign keys.
/// `many`: the statement writes rows from a query, a file or several VALUES rows (IGNORE
/// then skips a row failing a CHECK constraint rather than failing).
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_row(
    plan: &InsertPlan,
    mut row: Row,
    many: bool,
    txn: &mut Txn,
    cx: &EvalCx,
    fk: &Option<Fk>,
    dest: &Dest,
    warnings: &mut Raised,
    tally: &mut Tally,
) -> Result<(), SqlError> {
    let t = &plan.table;
    let auto = match &plan.on_duplicate {
        OnDuplicate::Fail => {
            // The row's own AUTO_INCREMENT value first when something checks the row.
            let mut assigned = None;
            if plan.check.is_some()
                || plan.checks.is_some()
                || (fk.is_some() && !t.def.foreign_keys.is_empty())
            {
                assigned = txn.assign_auto_increment(t, &mut row);
                let checked = row_allowed(&plan.check, &plan.checks, &row, cx)
                    .and_then(|_| check_new_row(fk, txn, t, &row));
                if let Err(e) = checked {
                    if let Some(v) = assigned {
                        txn.give_back_auto_increment(t, v);
                    }
                    return Err(e);
                }
            }
            tally.affected += 1;
            txn.insert(t, row)?.or(assigned)
        }
        on_dup => {
            let auto = txn.assign_auto_increment(t, &mut row);
            if let Err(e) = row_allowed(&plan.check, &plan.checks, &row, cx) {
                if let Some(v) = auto {
                    txn.give_back_auto_increment(t, v);
                }
                // IGNORE skips a row failing a CHECK constraint with a warning, except
                // in a one-row INSERT ... VALUES, which fails (as MariaDB does).
                let skips = matches!(on_dup, OnDuplicate::Ignore) && e.code == 4025 && many;
                if !skips {
                    return Err(e);
                }
                tally.check_skipped += 1;
                warnings.push(Warning::warn(e.code, e.message));
                return Ok(());
            }
            match upsert(t, row, on_dup, txn, cx, fk, &plan.checks, dest, warnings)? {
                Upserted::Inserted { deleted } => {
                    tally.affected += 1 + deleted;
                    tally.deleted += deleted;
                    tally.duplicates += (deleted > 0) as u64;
                }
                Upserted::Updated { changed } => {
                    tally.affected += if changed { 2 } else { 0 };
                    tally.duplicates += 1;
                }
                Upserted::Skipped(code, msg) => {
                    if let Some(v) = auto {
                        txn.give_back_auto_increment(t, v);
                    }
                    tally.duplicates += 1;
                    warnings.push(Warning::warn(code, msg));
                    return Ok(());
                }
            }
            auto
        }
    };
    if tally.first_auto.is_none() {
        tally.first_auto = auto;
    }
    Ok(())
}

enum Upserted {
    /// Inserted, after deleting `deleted` rows that held its keys (REPLACE).
    Inserted { deleted: u64 },
    /// The row holding the key was updated (ON DUPLICATE KEY UPDATE); `changed`: it differs.
    Updated { changed: bool },
    /// INSERT IGNORE skipped the row: the warning (1062 duplicate key, 1452 no parent row).
    Skipped(u16, String),
}

/// Inserts `row` under an IGNORE / REPLACE / ON DUPLICATE KEY UPDATE rule. Keys are checked
/// as InnoDB does: the primary key first, then each unique index; the row holding a taken key
/// is locked before it is updated or deleted.
#[allow(clippy::too_many_arguments)]
fn upsert(
    t: &Arc<Table>,
    row: Row,
    on_dup: &OnDuplicate,
    txn: &mut Txn,
    cx: &EvalCx,
    fk: &Option<Fk>,
    checks: &Option<Box<crate::check::RowChecks>>,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Upserted, SqlError> {
    let mut deleted = 0;
    // Each round removes one holder (REPLACE) or ends; a holder gone meanwhile is retried.
    for _ in 0..=t.def.indexes.len() + 2 {
        // The new row's parents (unless a duplicate will be dealt with first).
        match check_new_row(fk, txn, t, &row) {
            Err(e) if e.code == 1452 && matches!(on_dup, OnDuplicate::Ignore) => {
                return Ok(Upserted::Skipped(1452, e.message));
            }
            r => r?,
        }
        let (key_shown, index) = match txn.insert(t, row.clone()) {
            Ok(_) => return Ok(Upserted::Inserted { deleted }),
            Err(EngineError::DuplicateKey { key, index }) => (key, index),
            Err(e) => return Err(e.into()),
        };
        let Some(holder) = txn.locked_duplicate(t, &row, &index)? else {
            continue;
        };
        match on_dup {
            OnDuplicate::Fail => {
                return Err(EngineError::DuplicateKey {
                    key: key_shown,
                    index,
                }
                .into())
            }
            OnDuplicate::Ignore => {
                return Ok(Upserted::Skipped(
                    1062,
                    format!("Duplicate entry '{key_shown}' for key '{index}'"),
                ))
            }
            OnDuplicate::Replace => {
                // As MariaDB: when the table's only unique key is taken by an identical row
                // and no foreign key references the table, nothing is replaced (one row
                // affected, no duplicate counted).
                let n = t.def.columns.len();
                let unique_keys = usize::from(!t.def.has_hidden_key())
                    + t.def.indexes.iter().filter(|i| i.unique).count();
                if unique_keys == 1
                    && fk
                        .as_ref()
                        .is_none_or(|f| f.engine.referencing(&t.db, &t.def.name).is_empty())
                    && holder.get(..n) == row.get(..n)
                {
                    return Ok(Upserted::Inserted { deleted });
                }
                fk::parent_row(fk, txn, t, &holder, None)?;
                if txn.delete(t, &pk_of(t, &holder))? {
                    deleted += 1;
                }
            }
            OnDuplicate::Update(sets) => {
                // The holder's columns, then the row tried (`VALUES(col)`); a hidden row id
                // after the holder's columns is put back below.
                let n = t.def.columns.len();
                let mut joined: Row = holder
                    .get(..n)
                    .ok_or_else(|| {
                        SqlError::new(1105, "HY000", "a stored row is shorter than its table")
                    })?
                    .to_vec();
                joined.extend(row.iter().take(n).cloned());
                for (ci, e) in sets {
                    let col = &t.def.columns[*ci];
                    let _writing =
                        crate::expr::WrittenValues::begin(crate::expr::strict_division(cx.env));
                    let v = e.eval(&joined, cx)?.into_owned();
                    joined[*ci] = assigned(col, v, dest, raised)?;
                }
                joined.truncate(n);
                joined.extend(holder[n..].iter().cloned());
                if joined == holder {
                    return Ok(Upserted::Updated { changed: false });
                }
                touch_on_update(&t.def, sets, &mut joined);
                crate::check::check_row(checks, &joined, cx)?;
                fk::child_row(fk, txn, t, &joined, Some(&holder))?;
                fk::parent_row(fk, txn, t, &holder, Some(&joined))?;
                txn.update(t, &pk_of(t, &holder), joined)?;
                return Ok(Upserted::Updated { changed: true });
            }
        }
    }
    Err(SqlError::new(
        1213,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction (keys kept changing under an upsert)",
    ))
}

/// The foreign keys of a row about to be inserted into `t`: its parents must exist — checked
/// only when no live row holds one of its keys, so a duplicate is reported (or upserted)
/// first, as InnoDB does.
fn check_new_row(fk: &Option<Fk>, txn: &mut Txn, t: &Table, row: &[Value]) -> Result<(), SqlError> {
    if fk.is_none() || t.def.foreign_keys.is_empty() {
        return Ok(());
    }
    if !t.def.has_hidden_key() && txn.locked_duplicate(t, row, "PRIMARY")?.is_some() {
        return Ok(());
    }
    for ix in t.def.indexes.iter().filter(|i| i.unique) {
        if txn.locked_duplicate(t, row, &ix.name)?.is_some() {
            return Ok(());
        }
    }
    fk::child_row(fk, txn, t, row, None)
}

/// A row about to be written: the view it goes through WITH CHECK OPTION must show it (1369)
/// and the table's CHECK constraints must not be false for it (4025).
fn row_allowed(
    view: &Option<Box<crate::plan::ViewCheck>>,
    checks: &Option<Box<crate::check::RowChecks>>,
    row: &[Value],
    cx: &EvalCx,
) -> Result<(), SqlError> {
    view_check(view, row, cx)?;
    crate::check::check_row(checks, row, cx)
}

/// A row written through a view WITH CHECK OPTION must be one the view shows (1369).
fn view_check(
    check: &Option<Box<crate::plan::ViewCheck>>,
    row: &[Value],
    cx: &EvalCx,
) -> Result<(), SqlError> {
    match check {
        Some(c) if !c.condition.matches(row, cx)? => Err(SqlError::new(
            1369,
            "44000",
            format!("CHECK OPTION failed {}", c.view),
        )),
        _ => Ok(()),
    }
}

/// The collation of strings of a binary (true) or a default (false) column.
fn coll(binary: bool) -> Collation {
    if binary {
        Collation::Binary
    } else {
        Collation::GeneralCi
    }
}

/// One ORDER BY key comparison: DECIMAL keys as numbers, binary columns' strings as bytes,
/// descending keys reversed.
fn key_cmp(x: &Value, y: &Value, desc: bool, numeric: bool, binary: bool) -> Ordering {
    let c = if numeric {
        coerce::sort_cmp_decimal(x, y)
    } else {
        coerce::sort_cmp_in(x, y, coll(binary))
    };
    if desc {
        c.reverse()
    } else {
        c
    }
}

/// `collect_targets` in ORDER BY order (all matching rows are read, sorted, then cut at
/// LIMIT).
fn ordered_targets(
    t: &Arc<Table>,
    access: &AccessPlan,
    filter: &Option<Expr>,
    order: &[crate::plan::RowOrder],
    limit: Option<u64>,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<Vec<Row>, SqlError> {
    if order.is_empty() {
        return collect_targets(t, access, filter, limit, true, txn, cx);
    }
    let rows = collect_targets(t, access, filter, None, false, txn, cx)?;
    let mut keyed = Vec::with_capacity(rows.len());
    for r in rows {
        let keys = order
            .iter()
            .map(|o| o.expr.eval(&r, cx).map(|v| v.into_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        keyed.push((keys, r));
    }
    keyed.sort_by(|(a, _), (b, _)| {
        for ((x, y), o) in a.iter().zip(b).zip(order) {
            let c = key_cmp(x, y, o.desc, o.numeric, o.binary);
            if c != Ordering::Equal {
                return c;
            }
        }
        Ordering::Equal
    });
    let n = limit.map_or(keyed.len(), |l| (l as usize).min(keyed.len()));
    Ok(keyed
        .into_iter()
        .take(n)
        .map(|(_, r)| key_skeleton(t, r))
        .collect())
}

/// `row` with only what `pk_of` reads kept (its key columns, or the hidden row id at its
/// end), the other values NULL: a statement's list of target rows holds no long strings.
fn key_skeleton(t: &Table, mut row: Row) -> Row {
    let hidden = t.def.has_hidden_key();
    let keys = t.def.key_columns();
    let last = row.len().saturating_sub(1);
    for (i, v) in row.iter_mut().enumerate() {
        let kept = if hidden { i == last } else { keys.contains(&i) };
        if !kept {
            *v = Value::Null;
        }
    }
    row
}

/// The rows of `t` an UPDATE / DELETE targets, read without locks (`skeleton`: only their
/// keys kept, see `key_skeleton`). A WHERE running a correlated subquery is checked after
/// the scan (the subquery reads through the transaction the scan holds).
fn collect_targets(
    t: &Arc<Table>,
    access: &AccessPlan,
    filter: &Option<Expr>,
    limit: Option<u64>,
    skeleton: bool,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<Vec<Row>, SqlError> {
    let mut rows = Vec::new();
    if limit == Some(0) {
        return Ok(rows);
    }
    let full = |n: usize| limit.is_some_and(|l| n as u64 >= l);
    let later = filter.as_ref().filter(|f| f.is_correlated());
    table_rows(
        t,
        access,
        None,
        None,
        &mut txn.borrow_mut(),
        cx,
        &mut |_, row| {
            let pass = match (later, filter) {
                (None, Some(f)) => f.matches(&row, cx)?,
                (Some(_), f) => uncorrelated_conjuncts_hold(f.as_ref(), &row, cx)?,
                (None, None) => true,
            };
            if !pass {
                return Ok(true);
            }
            rows.push(if skeleton && later.is_none() {
                key_skeleton(t, row)
            } else {
                row
            });
            Ok(later.is_some() || !full(rows.len()))
        },
    )?;
    if let Some(f) = later {
        let mut kept = Vec::new();
        for row in rows {
            if full(kept.len()) {
                break;
            }
            if f.matches(&row, cx)? {
                kept.push(if skeleton { key_skeleton(t, row) } else { row });
            }
        }
        rows = kept;
    }
    Ok(rows)
}

/// The row of a single-row UPDATE / DELETE by its whole primary key, locked first and read
/// once (as `SELECT ... FOR UPDATE` by key does), instead of read, locked and read again: the
/// row read under the lock is the one written, and the WHERE is checked on it. `None` when
/// the statement is not of that shape (no such access, or a key value that cannot be looked
/// up): the caller takes the general path (`ordered_targets` + `lock_write_target`), as it
/// does for a WHERE running a correlated subquery (not called then). A missing row stays
/// locked, as InnoDB keeps the gap it searched locked.
fn locked_point_target(
    t: &Arc<Table>,
    access: &AccessPlan,
    filter: Option<&Expr>,
    limit: Option<u64>,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<Option<Option<Row>>, SqlError> {
    let Some(ranges) = single_pk_point(t, access) else {
        return Ok(None);
    };
    if limit == Some(0) {
        return Ok(Some(None));
    }
    let Some(cr) = concrete_ranges(ranges, &access.domains, cx)? else {
        return Ok(None);
    };
    let Some(r) = cr.into_iter().next() else {
        return Ok(Some(None));
    };
    crate::interrupt::check()?;
    let row = lock_row(
        t,
        &r.eq,
        LockMode::Exclusive,
        LockWait::Wait,
        &mut txn.borrow_mut(),
    )?;
    match (row, filter) {
        (Some(row), Some(f)) if !f.matches(&row, cx)? => Ok(Some(None)),
        (row, _) => Ok(Some(row)),
    }
}

/// The rows an UPDATE / DELETE of table `t` writes, and whether they are locked already
/// (`locked_point_target`, unless `two_phase`) or found unlocked (`ordered_targets`; each is
/// then locked and re-read by `write_target`).
#[allow(
    clippy::too_many_arguments,
    reason = "the statement's parts, as ordered_targets"
)]
fn write_targets(
    t: &Arc<Table>,
    access: &AccessPlan,
    filter: &Option<Expr>,
    order: &[crate::plan::RowOrder],
    limit: Option<u64>,
    two_phase: bool,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<(Vec<Row>, bool), SqlError> {
    if !two_phase {
        if let Some(row) = locked_point_target(t, access, filter.as_ref(), limit, txn, cx)? {
            return Ok((row.into_iter().collect(), true));
        }
    }
    let rows = ordered_targets(t, access, filter, order, limit, txn, cx)?;
    Ok((rows, false))
}

/// Target `seen` of `write_targets`, locked: as it is when it was read under its lock, else
/// locked and re-read (None: gone, or no longer matching the WHERE).
fn write_target(
    locked: bool,
    t: &Arc<Table>,
    filter: Option<&Expr>,
    seen: Row,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<Option<Row>, SqlError> {
    if locked {
        return Ok(Some(seen));
    }
    lock_write_target(t, filter, &seen, txn, cx)
}

/// Locks a row found by the unlocked scan and re-reads it: another transaction may have
/// changed it since. Returns the locked version when it still matches the WHERE.
fn lock_target(
    t: &Arc<Table>,
    filter: Option<&Expr>,
    mode: LockMode,
    wait: LockWait,
    seen: &Row,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Option<Row>, SqlError> {
    let Some(row) = lock_row(t, &pk_of(t, seen), mode, wait, txn)? else {
        return Ok(None);
    };
    if let Some(f) = filter {
        if !f.matches(&row, cx)? {
            return Ok(None);
        }
    }
    Ok(Some(row))
}

/// `lock_target` for UPDATE / DELETE (exclusive, waiting): the WHERE is re-checked once the
/// transaction is free again, so it may run correlated subqueries.
fn lock_write_target(
    t: &Arc<Table>,
    filter: Option<&Expr>,
    seen: &Row,
    txn: &RefCell<&mut Txn>,
    cx: &EvalCx,
) -> Result<Option<Row>, SqlError> {
    let locked = lock_target(
        t,
        None,
        LockMode::Exclusive,
        LockWait::Wait,
        seen,
        &mut txn.borrow_mut(),
        cx,
    )?;
    // The WHERE was evaluated on this row once already (finding it): its re-check under the
    // lock raises no warnings a second time.
    let raised = crate::expr::warnings_len();
    let r = match (locked, filter) {
        (Some(row), Some(f)) if !f.matches(&row, cx)? => Ok(None),
        (locked, _) => Ok(locked),
    };
    crate::expr::truncate_warnings(raised);
    r
}

/// ON UPDATE CURRENT_TIMESTAMP: the columns with it that the statement did not assign take
/// the current time in a row the statement changed.
fn touch_on_update<T>(def: &tierdb_engine::TableDef, sets: &[(usize, T)], row: &mut Row) {
    // One clock reading, cut to each column's precision.
    let mut now = None;
    for (i, c) in def.columns.iter().enumerate() {
        if c.on_update_now && !sets.iter().any(|(ci, _)| *ci == i) {
            if let Some(v) = row.get_mut(i) {
                let t = now.get_or_insert_with(|| coerce::now_text(6));
                let n = coerce::datetime_width(c.ty.fsp().unwrap_or(0));
                *v = Value::Bytes(t.as_bytes()[..n.min(t.len())].to_vec());
            }
        }
    }
}

pub fn run_update(plan: &UpdatePlan, txn: &mut Txn, cx: &EvalCx) -> Result<WriteResult, SqlError> {
    if let Some(m) = &plan.multi {
        return run_multi(m, false, txn, cx);
    }
    let t = &plan.table;
    let limit = count_arg(&plan.limit, "LIMIT", cx)?;
    let mode = crate::expr::write_mode(cx.env);
    let strict = !plan.ignore && mode.division;
    let lenient = plan.ignore || !mode.strict;
    // A correlated subquery may read this table: every row is matched and its new values
    // computed before the first change (as MariaDB, which collects the rows first).
    let two_phase = plan.filter.as_ref().is_some_and(Expr::is_correlated)
        || plan.sets.iter().any(|(_, e)| e.is_correlated());
    let fk = Fk::of(cx);
    // Foreign keys first (the row's new parents, then the rows referencing it), then the row.
    // Under IGNORE a row a key or foreign key refuses stays as it was, with what its foreign
    // keys changed undone (false: not written); MariaDB gives no warning for it.
    let write = |txn: &mut Txn, old: &Row, new: Row| -> Result<bool, SqlError> {
        let mark = plan.ignore.then(|| txn.row_savepoint());
        let r = (|| {
            fk::child_row(&fk, txn, t, &new, Some(old))?;
            fk::parent_row(&fk, txn, t, old, Some(&new))?;
            txn.update(t, &pk_of(t, old), new)?;
            Ok(())
        })();
        match (r, mark) {
            (Ok(()), _) => Ok(true),
            (Err(e), Some(mark)) if ignorable(&e) => {
                txn.rollback_to_savepoint(mark)?;
                Ok(false)
            }
            (Err(e), _) => Err(e),
        }
    };
    with_runner(txn, cx, |txn, cx| {
        let (targets, locked) = write_targets(
            t,
            &plan.access,
            &plan.filter,
            &plan.order,
            limit,
            two_phase,
            txn,
            cx,
        )?;
        let mut matched = 0;
        let mut changed = 0;
        let mut warnings = Raised::default();
        let mut pending: Vec<(Row, Row)> = Vec::new();
        for (ri, seen) in targets.into_iter().enumerate() {
            crate::interrupt::check()?;
            let Some(old) = write_target(locked, t, plan.filter.as_ref(), seen, txn, cx)? else {
                continue;
            };
            matched += 1;
            let mut new = old.clone();
            let dest = Dest {
                db: &t.db,
                table: &t.def.name,
                row: ri + 1,
                lenient,
            };
            for (ci, e) in &plan.sets {
                let _writing = crate::expr::WrittenValues::begin(strict);
                let v = e.eval(&new, cx)?.into_owned();
                new[*ci] = assigned(&t.def.columns[*ci], v, &dest, &mut warnings)?;
            }
            if new == old {
                continue;
            }
            touch_on_update(&t.def, &plan.sets, &mut new);
            match row_allowed(&plan.check, &plan.checks, &new, cx) {
                // IGNORE: a row failing a CHECK stays, with a warning, and is not counted
                // as matched (as MariaDB).
                Err(e) if plan.ignore && e.code == 4025 => {
                    matched -= 1;
                    warnings.push(Warning::warn(e.code, e.message));
                    continue;
                }
                r => r?,
            }
            if two_phase {
                pending.push((old, new));
            } else if write(&mut txn.borrow_mut(), &old, new)? {
                changed += 1;
            }
        }
        for (old, new) in pending {
            if write(&mut txn.borrow_mut(), &old, new)? {
                changed += 1;
            }
        }
        Ok(WriteResult {
            affected: changed,
            matched,
            first_auto_id: None,
            duplicates: 0,
            warnings,
        })
    })
}

/// Errors IGNORE turns into a row left as it was: a duplicate key, a foreign key refusing
/// the change (no parent, or children that keep the old value).
fn ignorable(e: &SqlError) -> bool {
    matches!(e.code, 1062 | 1451 | 1452)
}

pub fn run_delete(plan: &DeletePlan, txn: &mut Txn, cx: &EvalCx) -> Result<WriteResult, SqlError> {
    if let Some(m) = &plan.multi {
        return run_multi(m, true, txn, cx);
    }
    let t = &plan.table;
    let limit = count_arg(&plan.limit, "LIMIT", cx)?;
    // See `run_update`: with a correlated subquery every row is matched first.
    let two_phase = plan.filter.as_ref().is_some_and(Expr::is_correlated);
    let fk = Fk::of(cx);
    let warnings = RefCell::new(Raised::default());
    // The rows referencing it first (refused, deleted or set to NULL), then the row. Under
    // IGNORE a row whose children keep it stays, with what its foreign keys changed undone
    // and warning 1451.
    let delete = |txn: &mut Txn, old: &Row| -> Result<bool, SqlError> {
        let mark = plan.ignore.then(|| txn.row_savepoint());
        let r = fk::parent_row(&fk, txn, t, old, None)
            .and_then(|()| Ok(txn.delete(t, &pk_of(t, old))?));
        match (r, mark) {
            (Err(e), Some(mark)) if e.code == 1451 => {
                txn.rollback_to_savepoint(mark)?;
                warnings.borrow_mut().push(Warning::warn(e.code, e.message));
                Ok(false)
            }
            (r, _) => r,
        }
    };
    with_runner(txn, cx, |txn, cx| {
        let (targets, locked) = write_targets(
            t,
            &plan.access,
            &plan.filter,
            &plan.order,
            limit,
            two_phase,
            txn,
            cx,
        )?;
        let mut n = 0;
        let mut pending = Vec::new();
        for seen in targets {
            let Some(old) = write_target(locked, t, plan.filter.as_ref(), seen, txn, cx)? else {
                continue;
            };
            if two_phase {
                pending.push(old);
            } else if delete(&mut txn.borrow_mut(), &old)? {
                n += 1;
            }
        }
        for old in pending {
            if delete(&mut txn.borrow_mut(), &old)? {
                n += 1;
            }
        }
        Ok(WriteResult {
            affected: n,
            matched: n,
            first_auto_id: None,
            duplicates: 0,
            warnings: warnings.take(),
        })
    })
}

/// The primary key of target `tg`'s row in joined row `row` (None: an outer join's missing
/// side), as a set member.
fn multi_key(tg: &crate::plan::MultiTarget, row: &[Value]) -> Result<Option<OrdRow>, SqlError> {
    let t = &tg.table;
    let n = t.def.columns.len();
    let Some(cols) = row.get(tg.offset..tg.offset + n) else {
        return Err(SqlError::new(
            1105,
            "HY000",
            "a joined row is shorter than its plan",
        ));
    };
    let pk: Vec<Value> = t.def.primary_key.iter().map(|&i| cols[i].clone()).collect();
    if pk.iter().any(Value::is_null) {
        return Ok(None);
    }
    let bytewise = t
        .def
        .primary_key
        .iter()
        .enumerate()
        .filter(|(k, &c)| *k < 64 && t.def.columns[c].collation == Collation::Binary)
        .fold(0u64, |m, (k, _)| m | 1 << k);
    Ok(Some(OrdRow(pk, bytewise)))
}

/// Rounds of reading and locking a multi-table write's targets before it gives up (1213).
const MULTI_ROUNDS: usize = 8;

/// A multi-table UPDATE (`delete` false) or DELETE. The joined rows are read, every target
/// row met is locked, and the read is repeated until it meets no row it had not locked
/// before: then the targets' values (and the SET values computed from them) are current and
/// stay so. Each target row met is then changed once — re-read under its lock, given the SET
/// values of the first joined row that reached it (or deleted) — with the same foreign-key
/// and ON UPDATE rules as one table. Rows of the other tables are read, not locked.
fn run_multi(
    m: &crate::plan::MultiWrite,
    delete: bool,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<WriteResult, SqlError> {
    use crate::plan::MultiValue;
    let mut locked: BTreeSet<(usize, OrdRow)> = BTreeSet::new();
    let mut rows = Vec::new();
    for round in 0..=MULTI_ROUNDS {
        if round == MULTI_ROUNDS {
            return Err(SqlError::new(
                1213,
                "40001",
                "Deadlock found when trying to get lock; try restarting transaction (the rows of a multi-table write kept changing)",
            ));
        }
        rows = run_select(&m.select, txn, cx)?;
        let mut fresh = false;
        for row in &rows {
            for (ti, tg) in m.targets.iter().enumerate() {
                let Some(key) = multi_key(tg, row)? else {
                    continue;
                };
                if locked.contains(&(ti, key.clone())) {
                    continue;
                }
                txn.lock_row(&tg.table, &key.0)?;
                locked.insert((ti, key));
                fresh = true;
            }
        }
        if !fresh {
            break;
        }
    }
    let fk = Fk::of(cx);
    let mut seen: BTreeSet<(usize, OrdRow)> = BTreeSet::new();
    let (mut matched, mut changed) = (0u64, 0u64);
    let lenient = !delete && !crate::expr::write_mode(cx.env).strict;
    let mut warnings = Raised::default();
    for row in &rows {
        for (ti, tg) in m.targets.iter().enumerate() {
            let t = &tg.table;
            let Some(key) = multi_key(tg, row)? else {
                continue;
            };
            if !seen.insert((ti, key.clone())) {
                continue;
            }
            let pk = key.0;
            let Some(old) = txn.lock_row(t, &pk)? else {
                continue;
            };
            matched += 1;
            if delete {
                fk::parent_row(&fk, txn, t, &old, None)?;
                if txn.delete(t, &pk)? {
                    changed += 1;
                }
                continue;
            }
            let mut new = old.clone();
            let dest = Dest {
                db: &t.db,
                table: &t.def.name,
                row: matched as usize,
                lenient,
            };
            for (ci, v) in &tg.sets {
                let col = &t.def.columns[*ci];
                let v = match v {
                    MultiValue::At(p) => row.get(*p).cloned().unwrap_or(Value::Null),
                    MultiValue::Const(v) => v.clone(),
                };
                new[*ci] = assigned(col, v, &dest, &mut warnings)?;
            }
            if new == old {
                continue;
            }
            touch_on_update(&t.def, &tg.sets, &mut new);
            crate::check::check_row(&tg.checks, &new, cx)?;
            fk::child_row(&fk, txn, t, &new, Some(&old))?;
            fk::parent_row(&fk, txn, t, &old, Some(&new))?;
            txn.update(t, &pk, new)?;
            changed += 1;
        }
    }
    Ok(WriteResult {
        affected: changed,
        matched,
        first_auto_id: None,
        duplicates: 0,
        warnings,
    })
}

/// True when the column type keeps text (for SHOW output helpers).
pub fn is_text_type(ty: &ColumnType) -> bool {
    matches!(
        ty,
        ColumnType::Char(_)
            | ColumnType::VarChar(_)
            | ColumnType::Text(_)
            | ColumnType::Enum(_)
            | ColumnType::Set(_)
    )
}
