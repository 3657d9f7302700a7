//! Access paths: which key a single-table statement reads through, and with which bounds.
//!
//! At plan time `choose` looks at the conjuncts of a compiled WHERE and picks the primary
//! key or a secondary index with equality / IN / range conditions on a key prefix (the
//! choice and its EXPLAIN description are fixed then). At execution `concrete_ranges`
//! evaluates the bound expressions, converts them into the key column's storage domain,
//! drops empty ranges, sorts and merges overlapping ones (so OR-ed ranges never return a row
//! twice and the output stays in key order), or answers `None` when a value cannot be
//! compared in key order (then the caller scans everything).
//!
//! Must never: make a range narrower than the WHERE it came from. The full WHERE is always
//! re-checked on every row read, so a range may be loose but never too tight.

use crate::coerce::{parse_integer_exact, parse_number, I64_END_F, I64_MIN_F, U64_END_F};
use crate::expr::{BinOp, EvalCx, Expr};
use crate::result::SqlError;
use std::cmp::Ordering;
use std::ops::Bound;
use tierdb_engine::{Collation, ColumnDef, ColumnType, TableDef, Value};

/// How values compare in key order for a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyDomain {
    Int,
    Float,
    /// Strings, byte order (binary collation).
    Str,
    /// Strings under `utf8mb4_general_ci` (the key stores their weights).
    StrCi,
    /// DECIMAL with this scale: the key holds the value's text at the scale, whose byte
    /// order is not numeric order, so only equalities (= and IN) look it up.
    Decimal(u8),
    /// TIME: the key holds the value's signed microseconds (`tierdb_engine::time_micros`).
    Time,
}

impl KeyDomain {
    /// Compares two key values of this domain as the index orders them.
    fn cmp(self, x: &Value, y: &Value) -> Ordering {
        match (self, x, y) {
            (KeyDomain::StrCi, Value::Bytes(a), Value::Bytes(b)) => Collation::GeneralCi.cmp(a, b),
            _ => x.key_cmp(y),
        }
    }
}

pub fn domain_of(col: &ColumnDef) -> Option<KeyDomain> {
    match col.ty {
        ColumnType::Int { .. } | ColumnType::Year | ColumnType::Bit(_) => Some(KeyDomain::Int),
        ColumnType::Time(_) => Some(KeyDomain::Time),
        ColumnType::Float | ColumnType::Double => Some(KeyDomain::Float),
        ColumnType::Decimal { scale, .. } => Some(KeyDomain::Decimal(scale)),
        ColumnType::Char(_)
        | ColumnType::VarChar(_)
        | ColumnType::Text(_)
        | ColumnType::Enum(_)
        | ColumnType::Set(_)
            if col.collation == Collation::GeneralCi =>
        {
            Some(KeyDomain::StrCi)
        }
        ColumnType::Char(_)
        | ColumnType::VarChar(_)
        | ColumnType::Text(_)
        | ColumnType::Enum(_)
        | ColumnType::Set(_)
        | ColumnType::Blob(_)
        | ColumnType::Binary(_)
        | ColumnType::VarBinary(_)
        | ColumnType::Date
        | ColumnType::DateTime(_)
        | ColumnType::Timestamp(_) => Some(KeyDomain::Str),
    }
}

/// A range on a key: equalities on the first `eq.len()` key columns, then bounds on the next.
#[derive(Clone, Debug)]
pub struct RangeExpr {
    pub eq: Vec<Expr>,
    pub lo: Bound<Expr>,
    pub hi: Bound<Expr>,
    /// `key IN (SELECT ...)` on the key's first column: the range stands for one equality
    /// per value of the statement's uncorrelated subquery number `each` (`eq` then holds
    /// one placeholder), known only at execution.
    pub each: Option<usize>,
}

#[derive(Clone, Debug)]
pub enum Access {
    /// Every row in primary key order.
    Full,
    /// Every row in the order of secondary index `0` (forced by a hint).
    FullIndex(usize),
    /// Primary key ranges; when every range is a full-key equality they are point lookups.
    Pk {
        ranges: Vec<RangeExpr>,
        points: bool,
    },
    /// Ranges on secondary index `index`.
    Index {
        index: usize,
        ranges: Vec<RangeExpr>,
    },
}

/// What EXPLAIN shows about the access.
#[derive(Clone, Debug, Default)]
pub struct ExplainInfo {
    pub access_type: &'static str,
    pub possible_keys: Vec<String>,
    pub key: Option<String>,
    pub key_len: Option<u32>,
    pub key_ref: Option<String>,
    pub rows: Option<u64>,
    /// True when some WHERE condition is not enforced by the key bounds alone.
    pub using_where: bool,
}

#[derive(Clone, Debug)]
pub struct AccessPlan {
    pub access: Access,
    /// Domains of the key columns the ranges use, in key order.
    pub domains: Vec<KeyDomain>,
    /// The order rows come out in (column positions), when known.
    pub order_cols: Vec<usize>,
    /// Number of leading `order_cols` fixed to one value by single equalities.
    pub fixed_prefix: usize,
    /// Read the key backwards (ranges last to first, each from its top): set when an ORDER BY
    /// of descending keys is served by the key's order.
    pub desc: bool,
    pub explain: ExplainInfo,
}

#[derive(Clone, Debug)]
enum Cond {
    Eq(usize, Expr),
    In(usize, Vec<Expr>),
    /// `col IN (SELECT ...)`, the subquery uncorrelated (its number).
    InSub(usize, usize),
    Range(usize, Bound<Expr>, Bound<Expr>),
    Or(usize, Vec<(Bound<Expr>, Bound<Expr>)>),
}

impl Cond {
    fn col(&self) -> usize {
        match self {
            Cond::Eq(c, _)
            | Cond::In(c, _)
            | Cond::InSub(c, _)
            | Cond::Range(c, ..)
            | Cond::Or(c, _) => *c,
        }
    }
}

pub fn conjuncts(e: &Expr, out: &mut Vec<Expr>) {
    match e {
        Expr::Bin(BinOp::And, a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other.clone()),
    }
}

fn disjuncts<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Bin(BinOp::Or, a, b) => {
            disjuncts(a, out);
            disjuncts(b, out);
        }
        other => out.push(other),
    }
}

fn analyze(e: &Expr, def: &TableDef) -> Option<Cond> {
    let indep = |x: &Expr| x.is_row_independent();
    if let Some(stripped) = without_time_casts(e, def) {
        return analyze(&stripped, def);
    }
    match e {
        // A byte-wise comparison bounds a key fully when its column is binary (key bytes in
        // byte order). On a case-insensitive key (`ci_col < BINARY 'a'`) byte order and the
        // weight order disagree, so only equalities stay (what is equal byte for byte is
        // equal ignoring case: a loose bound the WHERE re-check narrows); ranges are dropped.
        // `BINARY col = 'x'` (a cast of the column itself) looks the key up too: the cast
        // keeps a text column's bytes; an equality found through it is re-checked.
        Expr::Bytewise(inner) => {
            let (stripped, cast) = without_binary_casts(inner);
            analyze(&stripped, def).filter(|c| {
                let ci = def.columns.get(c.col()).and_then(domain_of) == Some(KeyDomain::StrCi);
                !(ci || cast) || matches!(c, Cond::Eq(..) | Cond::In(..))
            })
        }
        Expr::Bin(op, a, b) => {
            let (col, x, flipped) = match (&**a, &**b) {
                (Expr::Col(c), x) if indep(x) => (*c, x, false),
                (x, Expr::Col(c)) if indep(x) => (*c, x, true),
                _ => {
                    if *op == BinOp::Or {
                        return analyze_or(e, def);
                    }
                    return None;
                }
            };
            let x = x.clone();
            let op = if flipped {
                match op {
                    BinOp::Lt => BinOp::Gt,
                    BinOp::Le => BinOp::Ge,
                    BinOp::Gt => BinOp::Lt,
                    BinOp::Ge => BinOp::Le,
                    o => *o,
                }
            } else {
                *op
            };
            Some(match op {
                BinOp::Eq => Cond::Eq(col, x),
                BinOp::Lt => Cond::Range(col, Bound::Unbounded, Bound::Excluded(x)),
                BinOp::Le => Cond::Range(col, Bound::Unbounded, Bound::Included(x)),
                BinOp::Gt => Cond::Range(col, Bound::Excluded(x), Bound::Unbounded),
                BinOp::Ge => Cond::Range(col, Bound::Included(x), Bound::Unbounded),
                BinOp::Or => return analyze_or(e, def),
                _ => return None,
            })
        }
        Expr::Between(a, lo, hi, false) => match &**a {
            Expr::Col(c) if indep(lo) && indep(hi) => Some(Cond::Range(
                *c,
                Bound::Included((**lo).clone()),
                Bound::Included((**hi).clone()),
            )),
            _ => None,
        },
        Expr::In(a, list, false) => match &**a {
            Expr::Col(c) if list.iter().all(indep) && !list.is_empty() => {
                Some(Cond::In(*c, list.clone()))
            }
            _ => None,
        },
        Expr::InSubquery(a, sub, false) if sub.outer.is_empty() => match &**a {
            Expr::Col(c) => Some(Cond::InSub(*c, sub.index)),
            _ => None,
        },
        Expr::Like {
            expr,
            pattern,
            escape,
            negated: false,
        } => match (&**expr, &**pattern) {
            (Expr::Col(c), Expr::Const(Value::Bytes(p))) => like_range(def, *c, p, *escape),
            _ => None,
        },
        _ => None,
    }
}

/// `col LIKE 'abc%...'`: the range of the texts starting with the pattern's literal prefix
/// (before its first unescaped `%` or `_`), from the prefix itself up to the prefix followed
/// by more of the largest character than the column can hold — above every text of the
/// column that starts with it, in byte order (0xFF bytes) or in `utf8mb4_general_ci`'s weight
/// order (U+FFFF, the largest weight). Only for CHAR / VARCHAR / BINARY / VARBINARY columns
/// (their length bounds the padding) and a non-empty prefix; the WHERE re-check does the rest.
fn like_range(def: &TableDef, c: usize, pattern: &[u8], escape: u8) -> Option<Cond> {
    let mut prefix = Vec::new();
    let mut it = pattern.iter();
    while let Some(&b) = it.next() {
        match b {
            b'%' | b'_' => break,
            b if b == escape => match it.next() {
                Some(&x) => prefix.push(x),
                None => prefix.push(b),
            },
            b => prefix.push(b),
        }
    }
    if prefix.is_empty() {
        return None;
    }
    let col = def.columns.get(c)?;
    let ci = col.collation == Collation::GeneralCi;
    let mut hi = prefix.clone();
    match col.ty {
        ColumnType::Char(n) | ColumnType::VarChar(n) if ci => {
            for _ in 0..n {
                hi.extend_from_slice("\u{FFFF}".as_bytes());
            }
        }
        // Text in byte order: at most four bytes per character.
        ColumnType::Char(n) | ColumnType::VarChar(n) => {
            hi.extend(std::iter::repeat_n(0xFF, 4 * n as usize))
        }
        ColumnType::Binary(n) | ColumnType::VarBinary(n) => {
            hi.extend(std::iter::repeat_n(0xFF, n as usize))
        }
        _ => return None,
    }
    Some(Cond::Range(
        c,
        Bound::Included(Expr::Const(Value::Bytes(prefix))),
        Bound::Included(Expr::Const(Value::Bytes(hi))),
    ))
}

/// A comparison of TIME values (`Compiler::time_operands` casts every operand to its
/// microseconds) with a TIME column's cast replaced by the column: the column's key holds
/// those microseconds, and the other operands' casts give them (`KeyDomain::Time`). None
/// when `e` is no such comparison.
fn without_time_casts(e: &Expr, def: &TableDef) -> Option<Expr> {
    use crate::expr::CastTo;
    let time_col = |x: &Expr| match x {
        Expr::Cast(inner, CastTo::TimeMicros) => match **inner {
            Expr::Col(c) if matches!(def.columns.get(c)?.ty, ColumnType::Time(_)) => {
                Some(Expr::Col(c))
            }
            _ => None,
        },
        _ => None,
    };
    let micros = |x: &Expr| matches!(x, Expr::Cast(_, CastTo::TimeMicros));
    let plain = |x: &Expr| time_col(x).unwrap_or_else(|| x.clone());
    match e {
        Expr::Bin(op, a, b)
            if op.is_comparison()
                && micros(a)
                && micros(b)
                && (time_col(a).is_some() || time_col(b).is_some()) =>
        {
            Some(Expr::Bin(*op, Box::new(plain(a)), Box::new(plain(b))))
        }
        Expr::In(a, list, neg) => Some(Expr::In(Box::new(time_col(a)?), list.clone(), *neg)),
        Expr::Between(a, lo, hi, neg) => Some(Expr::Between(
            Box::new(time_col(a)?),
            lo.clone(),
            hi.clone(),
            *neg,
        )),
        _ => None,
    }
}

/// `e` (a comparison) with `CAST(col AS BINARY)` operands replaced by the column (or an
/// exact DECIMAL comparison's casts removed), and whether there was one.
fn without_binary_casts(e: &Expr) -> (Expr, bool) {
    // An exact DECIMAL comparison casts every operand (`CastTo::DecimalOrder`): an integer
    // key is looked up by the raw values (`to_key` reads DECIMAL text exactly), in the same
    // order, so ranges stay (a DECIMAL column has no key domain).
    let ordered = |x: &Expr| matches!(x, Expr::Cast(_, crate::expr::CastTo::DecimalOrder));
    let raw = |x: &Expr| match x {
        Expr::Cast(inner, crate::expr::CastTo::DecimalOrder) => (**inner).clone(),
        other => other.clone(),
    };
    match e {
        Expr::Bin(op, a, b) if ordered(a) && ordered(b) => {
            return (Expr::Bin(*op, Box::new(raw(a)), Box::new(raw(b))), false);
        }
        Expr::In(a, list, neg) if ordered(a) => {
            let list = list.iter().map(raw).collect();
            return (Expr::In(Box::new(raw(a)), list, *neg), false);
        }
        Expr::Between(a, lo, hi, neg) if ordered(a) => {
            let (a, lo, hi) = (raw(a), raw(lo), raw(hi));
            return (
                Expr::Between(Box::new(a), Box::new(lo), Box::new(hi), *neg),
                true,
            );
        }
        _ => {}
    }
    let strip = |x: &Expr| match x {
        Expr::Cast(inner, crate::expr::CastTo::Binary) if matches!(**inner, Expr::Col(_)) => {
            ((**inner).clone(), true)
        }
        other => (other.clone(), false),
    };
    match e {
        Expr::Bin(op, a, b) => {
            let ((a, ca), (b, cb)) = (strip(a), strip(b));
            (Expr::Bin(*op, Box::new(a), Box::new(b)), ca || cb)
        }
        Expr::In(a, list, neg) => {
            let (a, ca) = strip(a);
            (Expr::In(Box::new(a), list.clone(), *neg), ca)
        }
        Expr::Between(a, lo, hi, neg) => {
            let (a, ca) = strip(a);
            (Expr::Between(Box::new(a), lo.clone(), hi.clone(), *neg), ca)
        }
        other => (other.clone(), false),
    }
}

fn analyze_or(e: &Expr, def: &TableDef) -> Option<Cond> {
    let mut ds = Vec::new();
    disjuncts(e, &mut ds);
    if ds.len() > 1024 {
        return None;
    }
    let mut col = None;
    let mut out = Vec::new();
    for d in ds {
        let c = analyze(d, def)?;
        if *col.get_or_insert(c.col()) != c.col() {
            return None;
        }
        match c {
            Cond::Eq(_, x) => out.push((Bound::Included(x.clone()), Bound::Included(x))),
            Cond::In(_, l) => out.extend(
                l.into_iter()
                    .map(|x| (Bound::Included(x.clone()), Bound::Included(x))),
            ),
            Cond::Range(_, lo, hi) => out.push((lo, hi)),
            Cond::Or(_, rs) => out.extend(rs),
            Cond::InSub(..) => return None,
        }
    }
    Some(Cond::Or(col?, out))
}

/// Which keys a hint allows.
#[derive(Clone, Debug, Default)]
pub struct Hints {
    /// FORCE/USE INDEX list (None = no restriction). "PRIMARY" names the primary key.
    pub only: Option<Vec<String>>,
    pub force: bool,
    pub ignore: Vec<String>,
}

impl Hints {
    fn allows(&self, name: &str) -> bool {
        if self.ignore.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            return false;
        }
        match &self.only {
            Some(l) => l.iter().any(|n| n.eq_ignore_ascii_case(name)),
            None => true,
        }
    }
}

struct Candidate {
    score: u32,
    ranges: Vec<RangeExpr>,
    used_eq: usize,
    fixed: usize,
    has_range: bool,
    n_prefixes: usize,
    /// Its points are a subquery's values (`RangeExpr::each`).
    each: bool,
    domains: Vec<KeyDomain>,
    /// Entries its ranges hold (counted up to a cap), when estimated.
    rows: Option<u64>,
}

const MAX_POINTS: usize = 4096;

fn candidate(conds: &[Cond], key: &[usize], def: &TableDef) -> Option<Candidate> {
    let mut prefixes: Vec<Vec<Expr>> = vec![Vec::new()];
    let mut used = 0;
    let mut fixed = 0;
    let mut single = true;
    let mut domains = Vec::new();
    let mut each = None;
    for &col in key {
        let Some(dom) = def.columns.get(col).and_then(domain_of) else {
            break;
        };
        if used == 0
            && !conds
                .iter()
                .any(|c| matches!(c, Cond::Eq(k, _) | Cond::In(k, _) if *k == col))
        {
            if let Some(Cond::InSub(_, sub)) = conds
                .iter()
                .find(|c| matches!(c, Cond::InSub(k, _) if *k == col))
            {
                // One placeholder, the subquery's values at execution; nothing after it.
                prefixes = vec![vec![Expr::Const(Value::Null)]];
                each = Some(*sub);
                domains.push(dom);
                used = 1;
                break;
            }
        }
        if let Some(Cond::Eq(_, x)) = conds
            .iter()
            .find(|c| matches!(c, Cond::Eq(k, _) if *k == col))
        {
            for p in &mut prefixes {
                p.push(x.clone());
            }
        } else if let Some(Cond::In(_, l)) = conds
            .iter()
            .find(|c| matches!(c, Cond::In(k, _) if *k == col))
        {
            if prefixes.len() * l.len() > MAX_POINTS {
                break;
            }
            let mut next = Vec::with_capacity(prefixes.len() * l.len());
            for p in &prefixes {
                for x in l {
                    let mut q = p.clone();
                    q.push(x.clone());
                    next.push(q);
                }
            }
            prefixes = next;
            single = false;
        } else {
            break;
        }
        domains.push(dom);
        used += 1;
        if single {
            fixed += 1;
        }
    }
    let mut ranges = Vec::new();
    let mut has_range = false;
    if used < key.len() && each.is_none() {
        let col = key[used];
        let ordered = |d: &KeyDomain| !matches!(d, KeyDomain::Decimal(_));
        if let Some(dom) = def.columns.get(col).and_then(domain_of).filter(ordered) {
            let mut lo = Bound::Unbounded;
            let mut hi = Bound::Unbounded;
            for c in conds {
                if let Cond::Range(k, l, h) = c {
                    if *k == col {
                        if matches!(lo, Bound::Unbounded) && !matches!(l, Bound::Unbounded) {
                            lo = l.clone();
                        }
                        if matches!(hi, Bound::Unbounded) && !matches!(h, Bound::Unbounded) {
                            hi = h.clone();
                        }
                    }
                }
            }
            if !matches!((&lo, &hi), (Bound::Unbounded, Bound::Unbounded)) {
                has_range = true;
                domains.push(dom);
                for p in &prefixes {
                    ranges.push(RangeExpr {
                        eq: p.clone(),
                        lo: lo.clone(),
                        hi: hi.clone(),
                        each: None,
                    });
                }
            } else if let Some(Cond::Or(_, rs)) = conds
                .iter()
                .find(|c| matches!(c, Cond::Or(k, _) if *k == col))
            {
                if prefixes.len() * rs.len() <= MAX_POINTS {
                    has_range = true;
                    domains.push(dom);
                    for p in &prefixes {
                        for (l, h) in rs {
                            ranges.push(RangeExpr {
                                eq: p.clone(),
                                lo: l.clone(),
                                hi: h.clone(),
                                each: None,
                            });
                        }
                    }
                }
            }
        }
    }
    if !has_range {
        if used == 0 {
            return None;
        }
        for p in &prefixes {
            ranges.push(RangeExpr {
                eq: p.clone(),
                lo: Bound::Unbounded,
                hi: Bound::Unbounded,
                each,
            });
        }
    }
    Some(Candidate {
        score: 0,
        ranges,
        used_eq: used,
        fixed,
        has_range,
        // Values known only at execution: never a single point.
        n_prefixes: if each.is_some() { 2 } else { prefixes.len() },
        each: each.is_some(),
        domains,
        rows: None,
    })
}

/// EXPLAIN's key_len of key columns `cols`.
fn key_len(def: &TableDef, cols: &[usize]) -> u32 {
    cols.iter()
        .filter_map(|&c| def.columns.get(c))
        .map(key_len_of)
        .sum()
}

fn key_len_of(c: &ColumnDef) -> u32 {
    let base = match &c.ty {
        ColumnType::Int { bytes, .. } => u32::from(*bytes),
        ColumnType::Float => 4,
        ColumnType::Double => 8,
        ColumnType::Decimal { precision, .. } => u32::from(*precision) / 2 + 1,
        ColumnType::Char(n) => n * 4,
        ColumnType::VarChar(n) => n * 4 + 2,
        ColumnType::Binary(n) => *n,
        ColumnType::VarBinary(n) => n + 2,
        ColumnType::Text(_) | ColumnType::Blob(_) => 0,
        ColumnType::Enum(m) => {
            if m.len() > 255 {
                2
            } else {
                1
            }
        }
        ColumnType::Set(m) => match m.len().div_ceil(8) {
            n @ 1..=4 => n as u32,
            _ => 8,
        },
        ColumnType::Date => 3,
        ColumnType::Year => 1,
        ColumnType::Bit(n) => u32::from(*n).div_ceil(8),
        ColumnType::Time(n) => 3 + u32::from(*n).div_ceil(2),
        // The fraction's bytes in MariaDB's binary form: (fsp + 1) / 2.
        ColumnType::DateTime(n) => 5 + u32::from(*n).div_ceil(2),
        ColumnType::Timestamp(n) => 4 + u32::from(*n).div_ceil(2),
    };
    base + u32::from(c.nullable)
}

/// Entries a key (None: the primary key) holds within some ranges, counted up to the cap
/// given last; None when the ranges' values are not known at plan time (a parameter).
pub type Estimator<'e> = dyn Fn(Option<usize>, &[RangeExpr], &[KeyDomain], u64) -> Option<u64> + 'e;

/// Most entries counted for one key when keys are compared.
pub const ESTIMATE_CAP: u64 = 1000;

/// True when `r`'s bounds are literals (casts and signs of them), known at plan time.
pub fn literal_range(r: &RangeExpr) -> bool {
    fn lit(e: &Expr) -> bool {
        match e {
            Expr::Const(_) | Expr::DecimalConst(..) => true,
            Expr::Cast(x, _) | Expr::Unary(crate::expr::UnOp::Neg, x) => lit(x),
            _ => false,
        }
    }
    let bound = |b: &Bound<Expr>| match b {
        Bound::Included(x) | Bound::Excluded(x) => lit(x),
        Bound::Unbounded => true,
    };
    r.each.is_none() && r.eq.iter().all(lit) && bound(&r.lo) && bound(&r.hi)
}

/// Picks the access path for `filter` (compiled against the table's columns).
pub fn choose(def: &TableDef, filter: Option<&Expr>, hints: &Hints) -> AccessPlan {
    choose_estimated(def, filter, hints, None)
}

/// `choose`; with `est`, when several keys can serve the WHERE, the one whose ranges hold
/// the fewest entries (a secondary index's counting double: each entry costs a row lookup)
/// wins where both are estimated, instead of the static preference (a primary key given
/// whole is taken without counting).
pub fn choose_estimated(
    def: &TableDef,
    filter: Option<&Expr>,
    hints: &Hints,
    est: Option<&Estimator>,
) -> AccessPlan {
    let mut conj = Vec::new();
    if let Some(f) = filter {
        conjuncts(f, &mut conj);
    }
    let conds: Vec<Cond> = conj.iter().filter_map(|c| analyze(c, def)).collect();
    let pk_allowed = hints.allows("PRIMARY");
    let mut possible = Vec::new();
    let mut all: Vec<(Option<usize>, Candidate)> = Vec::new();
    let mut consider =
        |idx: Option<usize>, key: &[usize], name: &str, possible: &mut Vec<String>| {
            let Some(mut c) = candidate(&conds, key, def) else {
                return;
            };
            possible.push(name.to_string());
            if !hints.allows(name) {
                return;
            }
            let full_points = c.used_eq == key.len() && !c.has_range;
            c.score = match idx {
                None if full_points => 100,
                Some(_) if c.used_eq > 0 && !c.has_range => 60 + c.used_eq as u32,
                Some(_) if c.used_eq > 0 => 55 + c.used_eq as u32,
                None => 50,
                Some(_) => 40,
            };
            all.push((idx, c));
        };
    if !def.primary_key.is_empty() {
        consider(None, &def.primary_key, "PRIMARY", &mut possible);
    }
    for (i, ix) in def.indexes.iter().enumerate() {
        consider(Some(i), &ix.columns, &ix.name, &mut possible);
    }
    let weight = |idx: &Option<usize>| if idx.is_some() { 2 } else { 1 };
    let cost = |idx: &Option<usize>, rows: u64| rows.saturating_mul(weight(idx));
    // Counted only when there is a choice, for at most 64 ranges a key, best-scored first;
    // each count stops once it would cost more than the cheapest so far.
    let whole_pk = all.iter().any(|(_, c)| c.score >= 100);
    if let Some(est) = est.filter(|_| all.len() > 1 && !whole_pk) {
        all.sort_by_key(|(_, c)| std::cmp::Reverse(c.score));
        let mut cheapest = u64::MAX;
        for (idx, c) in &mut all {
            if c.score < 100 && c.ranges.len() <= 64 && c.ranges.iter().all(literal_range) {
                let cap = (cheapest / weight(idx)).saturating_add(1).min(ESTIMATE_CAP);
                c.rows = est(*idx, &c.ranges, &c.domains, cap);
                if let Some(r) = c.rows {
                    cheapest = cheapest.min(cost(idx, r));
                }
            }
        }
    }
    let mut best: Option<(Option<usize>, Candidate)> = None;
    for (idx, c) in all {
        let better = match &best {
            None => true,
            Some((bidx, b)) => match (c.rows, b.rows) {
                (Some(r), Some(br)) if cost(&idx, r) != cost(bidx, br) => {
                    cost(&idx, r) < cost(bidx, br)
                }
                _ => c.score > b.score,
            },
        };
        if better {
            best = Some((idx, c));
        }
    }
    let mut explain = ExplainInfo {
        possible_keys: possible,
        using_where: !conj.is_empty(),
        ..Default::default()
    };
    let Some((idx, cand)) = best else {
        // No usable condition: a forced secondary index is scanned whole; else the table.
        if let Some(only) = hints.only.as_ref().filter(|_| hints.force) {
            if let Some(i) = def
                .indexes
                .iter()
                .position(|ix| only.iter().any(|n| n.eq_ignore_ascii_case(&ix.name)))
            {
                let ix = &def.indexes[i];
                explain.access_type = "index";
                explain.key = Some(ix.name.clone());
                explain.key_len = Some(key_len(def, &ix.columns));
                let mut order = ix.columns.clone();
                order.extend(def.primary_key.iter().copied());
                return AccessPlan {
                    access: Access::FullIndex(i),
                    domains: Vec::new(),
                    order_cols: order,
                    fixed_prefix: 0,
                    desc: false,
                    explain,
                };
            }
        }
        let _ = pk_allowed;
        explain.access_type = if hints.force
            && hints
                .only
                .as_ref()
                .is_some_and(|l| l.iter().any(|n| n.eq_ignore_ascii_case("PRIMARY")))
            && !def.primary_key.is_empty()
        {
            explain.key = Some("PRIMARY".into());
            explain.key_len = Some(key_len(def, &def.primary_key));
            "index"
        } else {
            "ALL"
        };
        return AccessPlan {
            access: Access::Full,
            domains: Vec::new(),
            order_cols: def.primary_key.clone(),
            fixed_prefix: 0,
            desc: false,
            explain,
        };
    };
    let key: Vec<usize> = match idx {
        None => def.primary_key.clone(),
        Some(i) => def.indexes[i].columns.clone(),
    };
    let parts = cand.used_eq + usize::from(cand.has_range);
    explain.key = Some(match idx {
        None => "PRIMARY".into(),
        Some(i) => def.indexes[i].name.clone(),
    });
    explain.key_len = Some(key_len(def, &key[..parts.min(key.len())]));
    let points = idx.is_none() && cand.used_eq == key.len() && !cand.has_range && !cand.each;
    explain.access_type = if points && cand.n_prefixes == 1 {
        "const"
    } else if idx.is_some() && !cand.has_range && cand.n_prefixes == 1 {
        "ref"
    } else {
        "range"
    };
    if matches!(explain.access_type, "const" | "ref") {
        explain.key_ref = Some(vec!["const"; cand.used_eq].join(","));
    }
    if explain.access_type == "const" {
        explain.rows = Some(1);
    }
    // Conditions fully enforced by the key: one equality per used column and nothing else.
    explain.using_where = conj.len() > cand.used_eq || cand.has_range;
    let mut order = key.clone();
    if idx.is_some() {
        order.extend(def.primary_key.iter().copied());
    }
    let access = match idx {
        None => Access::Pk {
            ranges: cand.ranges,
            points,
        },
        Some(i) => Access::Index {
            index: i,
            ranges: cand.ranges,
        },
    };
    AccessPlan {
        access,
        domains: cand.domains,
        order_cols: order,
        fixed_prefix: cand.fixed,
        desc: false,
        explain,
    }
}

/// For `ORDER BY cols LIMIT n` over a table that no WHERE condition narrows (`plan` a full
/// scan): a secondary index whose leading columns are `cols`, read whole in that order, so
/// the statement stops after its first rows instead of sorting the table. Nothing changes
/// when the primary key already gives that order, or when no index (the hints allowing)
/// does; false then.
pub fn order_by_index(
    plan: &mut AccessPlan,
    def: &TableDef,
    cols: &[usize],
    hints: &Hints,
) -> bool {
    if cols.is_empty()
        || hints.only.as_ref().is_some_and(|_| hints.force)
        || def.primary_key.starts_with(cols)
    {
        return false;
    }
    let Some(i) = def
        .indexes
        .iter()
        .position(|ix| ix.columns.starts_with(cols) && hints.allows(&ix.name))
    else {
        return false;
    };
    let ix = &def.indexes[i];
    plan.access = Access::FullIndex(i);
    plan.order_cols = ix.columns.clone();
    plan.order_cols.extend(def.primary_key.iter().copied());
    plan.explain.access_type = "index";
    plan.explain.key = Some(ix.name.clone());
    plan.explain.key_len = Some(key_len(def, &ix.columns));
    true
}

/// A loose index scan: key `index` (None: the primary key) read for one row per value of its
/// leading column `col`. The key is read on while values change; a run of rows with one
/// value makes the read jump past it with a new descent (`exec::loose_rows`). Only rows the
/// reader sees are returned, so a value whose rows are all hidden from it does not appear.
#[derive(Clone, Debug)]
pub struct Loose {
    pub index: Option<usize>,
    pub col: usize,
    pub explain: ExplainInfo,
}

/// The column whose distinct values alone decide the query's result: `SELECT DISTINCT c`
/// (one plain column), or aggregates that ignore repeats of one column `c` — COUNT / SUM /
/// AVG (DISTINCT c), MIN(c), MAX(c), `c` itself — with no GROUP BY or GROUP BY c alone.
pub fn loose_column(
    project: &[Expr],
    distinct: bool,
    agg: Option<&crate::plan::AggPlan>,
) -> Option<usize> {
    use crate::compile::AggFunc;
    let Some(a) = agg else {
        return match project {
            [Expr::Col(c)] if distinct => Some(*c),
            _ => None,
        };
    };
    if a.rollup {
        return None;
    }
    let mut col = match a.group.as_slice() {
        [] => None,
        [Expr::Col(g)] => Some(*g),
        _ => return None,
    };
    for spec in &a.specs {
        let repeats_ignored = match spec.func {
            AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => true,
            AggFunc::Count | AggFunc::Sum | AggFunc::Avg => spec.distinct,
            _ => false,
        };
        let Some(Expr::Col(c)) = &spec.arg else {
            return None;
        };
        if !repeats_ignored || *col.get_or_insert(*c) != *c {
            return None;
        }
    }
    col
}

/// The key a loose scan of column `c` reads: a secondary index it leads (allowed by the
/// hints), else the primary key when `c` leads it and is not all of it (a one-column key
/// has one row per value already).
pub fn loose_key(def: &TableDef, c: usize, hints: &Hints) -> Option<Loose> {
    let col = def.columns.get(c)?;
    let (index, name) = match def
        .indexes
        .iter()
        .position(|ix| ix.columns.first() == Some(&c) && hints.allows(&ix.name))
    {
        Some(i) => (Some(i), def.indexes[i].name.clone()),
        None if def.primary_key.first() == Some(&c)
            && def.primary_key.len() > 1
            && hints.allows("PRIMARY") =>
        {
            (None, "PRIMARY".to_string())
        }
        None => return None,
    };
    Some(Loose {
        index,
        col: c,
        explain: ExplainInfo {
            access_type: "range",
            possible_keys: Vec::new(),
            key: Some(name),
            key_len: Some(key_len_of(col)),
            key_ref: None,
            rows: None,
            using_where: false,
        },
    })
}

/// For aggregates that are all MIN / MAX of plain columns, each column leading the primary
/// key or a secondary index whose order is the aggregate's (not DECIMAL, whose key is
/// text, nor ENUM): per aggregate, that key read from its low end (MIN) or its high end
/// (MAX), and the column. None when one aggregate has no such key.
pub fn extremes(
    def: &TableDef,
    specs: &[crate::compile::AggSpec],
) -> Option<Vec<(AccessPlan, usize)>> {
    use crate::compile::AggFunc;
    let mut out = Vec::with_capacity(specs.len());
    for spec in specs {
        let desc = match spec.func {
            AggFunc::Min => false,
            AggFunc::Max => true,
            _ => return None,
        };
        let Some(Expr::Col(c)) = spec.arg else {
            return None;
        };
        let col = def.columns.get(c)?;
        if matches!(
            col.ty,
            ColumnType::Decimal { .. } | ColumnType::Enum(_) | ColumnType::Set(_)
        ) {
            return None;
        }
        let access = if def.primary_key.first() == Some(&c) {
            Access::Full
        } else {
            Access::FullIndex(
                def.indexes
                    .iter()
                    .position(|ix| ix.columns.first() == Some(&c))?,
            )
        };
        let plan = AccessPlan {
            access,
            domains: Vec::new(),
            order_cols: Vec::new(),
            fixed_prefix: 0,
            desc,
            explain: ExplainInfo::default(),
        };
        out.push((plan, c));
    }
    (!out.is_empty()).then_some(out)
}

/// A range with its bounds evaluated and converted into key storage values.
#[derive(Clone, Debug)]
pub struct ConcreteRange {
    pub eq: Vec<Value>,
    pub lo: Bound<Value>,
    pub hi: Bound<Value>,
}

enum KeyConv {
    Exact(Value),
    /// A non-integer number against an integer column.
    Inexact(f64),
    /// NULL: no row compares equal/less/greater.
    Null,
    /// The value does not compare in key order (e.g. a number against a string column).
    Fallback,
}

const TWO_POW_53: i64 = 1 << 53;

fn to_key(dom: KeyDomain, v: &Value) -> KeyConv {
    match (dom, v) {
        (_, Value::Null) => KeyConv::Null,
        (KeyDomain::Int, Value::Int(_) | Value::UInt(_)) => KeyConv::Exact(v.clone()),
        (KeyDomain::Int, Value::Double(d)) => int_from_f64(*d),
        (KeyDomain::Int, Value::Bytes(b)) => match parse_integer_exact(b) {
            Some(i) => KeyConv::Exact(i),
            // DECIMAL text such as "9007199254740993.0": exact where a double is not.
            None => match crate::dec::Dec::parse(b).and_then(|d| d.integer_value()) {
                Some(i) => KeyConv::Exact(i),
                None => int_from_f64(parse_number(b).0),
            },
        },
        // Above 2^63: not exact as a double.
        (KeyDomain::Float, Value::UInt(_)) => KeyConv::Fallback,
        (KeyDomain::Float, Value::Int(i)) => {
            if i.abs() > TWO_POW_53 {
                KeyConv::Fallback
            } else {
                KeyConv::Exact(Value::Double(*i as f64))
            }
        }
        (KeyDomain::Float, Value::Double(d)) => float_key(*d),
        (KeyDomain::Float, Value::Bytes(b)) => float_key(parse_number(b).0),
        (KeyDomain::Str | KeyDomain::StrCi, Value::Bytes(b)) => {
            KeyConv::Exact(Value::Bytes(b.clone()))
        }
        (KeyDomain::Str | KeyDomain::StrCi, _) => KeyConv::Fallback,
        // Microseconds (a comparison casts every operand to them, `CastTo::TimeMicros`), or
        // a value read as a time; one past the TIME range (or no time) is scanned for.
        (KeyDomain::Time, Value::Int(m)) if crate::time::in_range(*m).is_ok() => {
            KeyConv::Exact(Value::Int(*m))
        }
        (KeyDomain::Time, Value::Bytes(_) | Value::Double(_)) => {
            match crate::time::parse(v).map(|t| crate::time::in_range(t.micros)) {
                Some(Ok(m)) => KeyConv::Exact(Value::Int(m)),
                _ => KeyConv::Fallback,
            }
        }
        (KeyDomain::Time, _) => KeyConv::Fallback,
        // The text the column holds for this value; a value with more digits than the
        // scale equals no key. Text that is not a plain number: scan.
        (KeyDomain::Decimal(s), v) => match crate::dec::Dec::of(v) {
            Some(d) => match d.round(s) {
                Some(r) if r.widen(d.scale().max(s)) == d.widen(d.scale().max(s)) => {
                    KeyConv::Exact(Value::Bytes(r.text().into_bytes()))
                }
                _ => KeyConv::Inexact(0.0),
            },
            None => KeyConv::Fallback,
        },
    }
}

fn float_key(d: f64) -> KeyConv {
    if d.is_nan() {
        KeyConv::Fallback
    } else {
        KeyConv::Exact(Value::Double(if d == 0.0 { 0.0 } else { d }))
    }
}

fn int_from_f64(d: f64) -> KeyConv {
    if d.is_nan() {
        return KeyConv::Fallback;
    }
    if d.fract() == 0.0 && (I64_MIN_F..I64_END_F).contains(&d) {
        KeyConv::Exact(Value::Int(d as i64))
    } else if d.fract() == 0.0 && (I64_END_F..U64_END_F).contains(&d) {
        KeyConv::Exact(Value::from_u64(d as u64))
    } else {
        KeyConv::Inexact(d)
    }
}

/// Converts a lower (`is_lo`) or upper bound into key domain. `Err(())` = fall back to a
/// full scan; `Ok(None)` = the range is empty.
#[allow(clippy::result_unit_err)]
fn bound_key(
    dom: KeyDomain,
    b: &Bound<Expr>,
    is_lo: bool,
    cx: &EvalCx,
) -> Result<Result<Option<Bound<Value>>, ()>, SqlError> {
    let (x, incl) = match b {
        Bound::Unbounded => return Ok(Ok(Some(Bound::Unbounded))),
        Bound::Included(x) => (x, true),
        Bound::Excluded(x) => (x, false),
    };
    if matches!(dom, KeyDomain::Decimal(_)) {
        // (Not reached: DECIMAL keys take no ranges.)
        return Ok(Err(()));
    }
    let v = x.eval(&[], cx)?;
    Ok(match to_key(dom, &v) {
        KeyConv::Exact(k) => Ok(Some(if incl {
            Bound::Included(k)
        } else {
            Bound::Excluded(k)
        })),
        KeyConv::Null => Ok(None),
        KeyConv::Fallback => Err(()),
        KeyConv::Inexact(f) => {
            // Integer column against a fraction: the nearest integer inside the range.
            let r = if is_lo { f.ceil() } else { f.floor() };
            if (I64_END_F..U64_END_F).contains(&r) {
                Ok(Some(Bound::Included(Value::from_u64(r as u64))))
            } else if r >= I64_END_F {
                if is_lo {
                    Ok(None)
                } else {
                    Ok(Some(Bound::Unbounded))
                }
            } else if r < I64_MIN_F {
                if is_lo {
                    Ok(Some(Bound::Unbounded))
                } else {
                    Ok(None)
                }
            } else {
                Ok(Some(Bound::Included(Value::Int(r as i64))))
            }
        }
    })
}

fn cmp_eq(a: &[Value], b: &[Value], domains: &[KeyDomain]) -> Ordering {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let o = domains.get(i).map_or_else(|| x.key_cmp(y), |d| d.cmp(x, y));
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

fn cmp_lo(a: &Bound<Value>, b: &Bound<Value>, d: KeyDomain) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Less,
        (_, Bound::Unbounded) => Ordering::Greater,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            d.cmp(x, y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => d.cmp(x, y).then(Ordering::Less),
        (Bound::Excluded(x), Bound::Included(y)) => d.cmp(x, y).then(Ordering::Greater),
    }
}

fn cmp_hi(a: &Bound<Value>, b: &Bound<Value>, d: KeyDomain) -> Ordering {
    match (a, b) {
        (Bound::Unbounded, Bound::Unbounded) => Ordering::Equal,
        (Bound::Unbounded, _) => Ordering::Greater,
        (_, Bound::Unbounded) => Ordering::Less,
        (Bound::Included(x), Bound::Included(y)) | (Bound::Excluded(x), Bound::Excluded(y)) => {
            d.cmp(x, y)
        }
        (Bound::Included(x), Bound::Excluded(y)) => d.cmp(x, y).then(Ordering::Greater),
        (Bound::Excluded(x), Bound::Included(y)) => d.cmp(x, y).then(Ordering::Less),
    }
}

/// True when a range `lo..hi` holds no value.
fn is_empty(lo: &Bound<Value>, hi: &Bound<Value>, d: KeyDomain) -> bool {
    match (lo, hi) {
        (Bound::Included(l), Bound::Included(h)) => d.cmp(l, h) == Ordering::Greater,
        (Bound::Included(l), Bound::Excluded(h))
        | (Bound::Excluded(l), Bound::Included(h))
        | (Bound::Excluded(l), Bound::Excluded(h)) => d.cmp(l, h) != Ordering::Less,
        _ => false,
    }
}

/// True when `b` (starting at `b_lo`) overlaps or touches a range ending at `a_hi`.
fn joins(a_hi: &Bound<Value>, b_lo: &Bound<Value>, d: KeyDomain) -> bool {
    match (a_hi, b_lo) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => true,
        (Bound::Excluded(h), Bound::Excluded(l)) => d.cmp(l, h) == Ordering::Less,
        (Bound::Included(h), Bound::Included(l))
        | (Bound::Included(h), Bound::Excluded(l))
        | (Bound::Excluded(h), Bound::Included(l)) => d.cmp(l, h) != Ordering::Greater,
    }
}

/// Evaluates and normalizes ranges. `None`: a bound does not compare in key order — scan all.
pub fn concrete_ranges(
    ranges: &[RangeExpr],
    domains: &[KeyDomain],
    cx: &EvalCx,
) -> Result<Option<Vec<ConcreteRange>>, SqlError> {
    let mut out: Vec<ConcreteRange> = Vec::with_capacity(ranges.len());
    'next: for r in ranges {
        if let Some(sub) = r.each {
            let (Some(&dom), Some(values)) = (domains.first(), cx.subq.get(sub)) else {
                return Ok(None);
            };
            for v in &values.rows {
                match to_key(dom, v) {
                    KeyConv::Exact(k) => out.push(ConcreteRange {
                        eq: vec![k],
                        lo: Bound::Unbounded,
                        hi: Bound::Unbounded,
                    }),
                    KeyConv::Null | KeyConv::Inexact(_) => {}
                    KeyConv::Fallback => return Ok(None),
                }
            }
            continue;
        }
        let mut eq = Vec::with_capacity(r.eq.len());
        for (i, x) in r.eq.iter().enumerate() {
            let Some(&dom) = domains.get(i) else {
                return Ok(None);
            };
            let v = x.eval(&[], cx)?;
            match to_key(dom, &v) {
                KeyConv::Exact(k) => eq.push(k),
                KeyConv::Null | KeyConv::Inexact(_) => continue 'next,
                KeyConv::Fallback => return Ok(None),
            }
        }
        let dom = domains.get(r.eq.len()).copied();
        let (lo, hi) = match dom {
            Some(dom) => {
                let lo = match bound_key(dom, &r.lo, true, cx)? {
                    Err(()) => return Ok(None),
                    Ok(None) => continue 'next,
                    Ok(Some(b)) => b,
                };
                let hi = match bound_key(dom, &r.hi, false, cx)? {
                    Err(()) => return Ok(None),
                    Ok(None) => continue 'next,
                    Ok(Some(b)) => b,
                };
                (lo, hi)
            }
            None => (Bound::Unbounded, Bound::Unbounded),
        };
        if is_empty(&lo, &hi, dom.unwrap_or(KeyDomain::Str)) {
            continue;
        }
        out.push(ConcreteRange { eq, lo, hi });
    }
    if out.len() > 1 {
        // The domain of the bounded column after the equalities (the same for every range,
        // or unused when there is none).
        let d = out
            .first()
            .and_then(|r| domains.get(r.eq.len()))
            .copied()
            .unwrap_or(KeyDomain::Str);
        out.sort_by(|a, b| cmp_eq(&a.eq, &b.eq, domains).then_with(|| cmp_lo(&a.lo, &b.lo, d)));
        let mut merged: Vec<ConcreteRange> = Vec::with_capacity(out.len());
        for r in out {
            if let Some(last) = merged.last_mut() {
                if cmp_eq(&last.eq, &r.eq, domains) == Ordering::Equal && joins(&last.hi, &r.lo, d)
                {
                    if cmp_hi(&r.hi, &last.hi, d) == Ordering::Greater {
                        last.hi = r.hi;
                    }
                    continue;
                }
            }
            merged.push(r);
        }
        out = merged;
    }
    Ok(Some(out))
}

impl ConcreteRange {
    /// Bounds on the key prefix for `Txn::scan` / `Txn::index_scan`.
    pub fn scan_bounds(&self) -> (Bound<Vec<Value>>, Bound<Vec<Value>>) {
        let with = |b: &Bound<Value>| -> Bound<Vec<Value>> {
            match b {
                Bound::Unbounded => {
                    if self.eq.is_empty() {
                        Bound::Unbounded
                    } else {
                        Bound::Included(self.eq.clone())
                    }
                }
                Bound::Included(v) => {
                    let mut k = self.eq.clone();
                    k.push(v.clone());
                    Bound::Included(k)
                }
                Bound::Excluded(v) => {
                    let mut k = self.eq.clone();
                    k.push(v.clone());
                    Bound::Excluded(k)
                }
            }
        };
        (with(&self.lo), with(&self.hi))
    }
}
