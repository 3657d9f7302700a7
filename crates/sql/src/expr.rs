//! Compiled expressions and their evaluation against one row.
//!
//! Owns: the `Expr` tree the planner produces (columns resolved to positions, `?` resolved to
//! parameter numbers, functions resolved to `Func`), three-valued logic, arithmetic with
//! overflow checks, LIKE matching, and the static result type of an expression.
//! Must never: look names up (that is `compile.rs`), touch the engine, or panic on any value.
//! Evaluation borrows where it can (`Cow`) so filters over rows do not allocate.

use crate::coerce::{self, compare, compare_in, to_f64, to_i64, to_text, truthy};
use crate::dec::Dec;
use crate::result::SqlError;
use std::borrow::Cow;
use std::cmp::Ordering;
use tierdb_engine::{Collation, Value};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    IntDiv,
    Mod,
    Eq,
    NullSafeEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    BitAnd,
    BitOr,
    BitXor,
    /// `<<` and `>>` on 64-bit unsigned values (a shift by 64 or more, or by a negative
    /// count, is 0).
    Shl,
    Shr,
}

impl BinOp {
    /// `=`, `<=>`, `<>`, `<`, `<=`, `>`, `>=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq
                | BinOp::NullSafeEq
                | BinOp::Ne
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

/// Built-in scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    Concat,
    ConcatWs,
    Coalesce,
    IfNull,
    If,
    NullIf,
    Length,
    CharLength,
    Upper,
    Lower,
    Abs,
    Floor,
    Ceil,
    Round,
    Now,
    CurDate,
    UnixTimestamp,
    Database,
    User,
    /// CURRENT_USER(): the account (`user@host pattern`) the session's privileges are from.
    CurrentUser,
    Version,
    ConnectionId,
    LastInsertId,
    Greatest,
    Least,
    Substring,
    Trim,
    Replace,
    Left,
    Right,
    /// DATE(x): the date part.
    DatePart,
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Microsecond,
    DateFormat,
    /// `DATE_ADD(d, INTERVAL n unit)`, `d + INTERVAL ...`, `DATE_SUB`, `ADDDATE`, `SUBDATE`:
    /// args (date, signed amount, unit as `IntervalUnit` number).
    DateAdd,
    /// `DATEDIFF(a, b)`: days from b to a (times ignored).
    DateDiff,
    /// `CONVERT_TZ(dt, from, to)`: zones as offsets ('+05:30') or SYSTEM (the server's
    /// clock, UTC); a named zone is NULL (no time zone tables, as a MariaDB without them).
    ConvertTz,
    /// `TIMESTAMPDIFF(unit, a, b)`: args (unit number, a, b); whole units from a to b.
    TimestampDiff,
    /// The string functions `string_func` computes (a binary operand makes them work on
    /// bytes).
    Str(StrFunc),
    Pow,
    Sqrt,
    Sign,
    Exp,
    Ln,
    /// `LOG(x)` (natural) or `LOG(base, x)`.
    Log,
    Log10,
    Log2,
    DayOfWeek,
    Weekday,
    DayName,
    MonthName,
    DayOfYear,
    Quarter,
    LastDay,
    ToDays,
    RowCount,
    FoundRows,
    /// `FROM_UNIXTIME(n[, format])` (UTC, as the server's clock).
    FromUnixtime,
    /// `REGEXP` / `RLIKE` and the `REGEXP_*` functions (see `regex_func`); case-insensitive
    /// unless an operand is binary.
    Regex(RegexFunc),
    /// Functions of their argument values alone (`crate::funcs`).
    Misc(crate::funcs::MiscFunc),
    /// GET_LOCK and the other user-level lock functions (`Env::user_lock`).
    UserLock(crate::user_locks::UserLockFunc),
    /// `BINLOG_GTID_POS(file, pos)`.
    BinlogGtidPos,
    /// `LOAD_FILE(path)`: a server file's bytes (`Env::load_file`).
    LoadFile,
    /// JSON_EXTRACT and the other JSON functions (`crate::json`).
    Json(crate::json::JsonFunc),
}

/// The regular-expression functions: args (text, pattern[, replacement]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegexFunc {
    /// `s REGEXP p`: 1 when p matches somewhere in s.
    Match,
    /// `REGEXP_REPLACE(s, p, r)`: every match replaced (`\N` in r names group N).
    Replace,
    /// `REGEXP_SUBSTR(s, p)`: the first match ('' when none).
    Substr,
    /// `REGEXP_INSTR(s, p)`: 1-based character position of the first match (0 when none).
    Instr,
}

/// String functions (see `string_func`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrFunc {
    Repeat,
    Lpad,
    Rpad,
    Reverse,
    /// `INSTR(s, sub)` (and `LOCATE(sub, s[, pos])`, compiled with its arguments swapped):
    /// args (s, sub[, pos]); 1-based character position, 0 when absent.
    Instr,
    SubstringIndex,
    Ltrim,
    Rtrim,
    Space,
    Ascii,
    Hex,
    Field,
    FindInSet,
    Strcmp,
    /// `TRIM(LEADING / TRAILING / BOTH r FROM s)`: args (s, r); every repetition of r
    /// removed from that end (bytes compared exactly, as MariaDB does).
    TrimLeading,
    TrimTrailing,
    TrimBoth,
}

/// Units of `INTERVAL n unit` and TIMESTAMPDIFF (stored as a constant argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntervalUnit {
    Microsecond = 0,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl IntervalUnit {
    const ALL: [IntervalUnit; 9] = [
        IntervalUnit::Microsecond,
        IntervalUnit::Second,
        IntervalUnit::Minute,
        IntervalUnit::Hour,
        IntervalUnit::Day,
        IntervalUnit::Week,
        IntervalUnit::Month,
        IntervalUnit::Quarter,
        IntervalUnit::Year,
    ];

    /// The unit named `name` (MySQL's keywords, upper or lower case).
    pub fn named(name: &str) -> Option<IntervalUnit> {
        Some(match name.to_ascii_uppercase().as_str() {
            "MICROSECOND" => IntervalUnit::Microsecond,
            "SECOND" => IntervalUnit::Second,
            "MINUTE" => IntervalUnit::Minute,
            "HOUR" => IntervalUnit::Hour,
            "DAY" => IntervalUnit::Day,
            "WEEK" => IntervalUnit::Week,
            "MONTH" => IntervalUnit::Month,
            "QUARTER" => IntervalUnit::Quarter,
            "YEAR" => IntervalUnit::Year,
            _ => return None,
        })
    }

    fn of(v: &Value) -> Option<IntervalUnit> {
        let i = usize::try_from(to_i64(v)?).ok()?;
        IntervalUnit::ALL.get(i).copied()
    }

    /// Months per unit for the calendar units, None for the fixed-length ones.
    fn months(self) -> Option<i64> {
        match self {
            IntervalUnit::Month => Some(1),
            IntervalUnit::Quarter => Some(3),
            IntervalUnit::Year => Some(12),
            _ => None,
        }
    }

    /// Microseconds per unit for the fixed-length units.
    fn micros(self) -> i64 {
        match self {
            IntervalUnit::Microsecond => 1,
            IntervalUnit::Second => 1_000_000,
            IntervalUnit::Minute => 60_000_000,
            IntervalUnit::Hour => 3_600_000_000,
            IntervalUnit::Day => 86_400_000_000,
            _ => 7 * 86_400_000_000,
        }
    }

    /// A date plus this unit stays a date (no time part appears).
    pub fn keeps_dates(self) -> bool {
        matches!(
            self,
            IntervalUnit::Day
                | IntervalUnit::Week
                | IntervalUnit::Month
                | IntervalUnit::Quarter
                | IntervalUnit::Year
        )
    }
}

/// Target of CAST/CONVERT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastTo {
    Signed,
    Unsigned,
    Char,
    /// `BINARY x`, `CAST(x AS BINARY)`, `x COLLATE utf8mb4_bin`: the text of `x`, compared
    /// byte by byte (see `Scope::is_binary`).
    Binary,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    Date,
    /// DATETIME(n): the text with `n` fraction digits.
    DateTime(u8),
    /// Internal (no SQL spells it): the exact value as `Dec::order_bytes`, so that a
    /// comparison made byte-wise compares DECIMALs exactly (a value that is not an exact
    /// number is read as a double first).
    DecimalOrder,
    /// Internal: a value compared with a DATE (None) or DATETIME(n) / TIMESTAMP(n) column,
    /// as that column's text (`coerce::temporal_for_compare`), so that the byte order of the
    /// column's values decides the comparison; a value that is no date is the zero date.
    TemporalOf(Option<u8>),
    /// Internal: a DATE / DATETIME(n) value in a numeric context (`d + 0`, `SUM(d)`,
    /// `CAST(d AS SIGNED)`): its digits as one number, `YYYYMMDD[hhmmss]`, with `n` digits
    /// after the point (a DECIMAL) when n > 0, as MariaDB reads it.
    TemporalNumber(u8),
    /// `CAST(x AS TIME(n))`: the canonical TIME text with n fraction digits (NULL when `x`
    /// is no time or lies past ±838:59:59); n = 7: `TIME(x)`, x's own fraction digits.
    Time(u8),
    /// Internal: a TIME value's signed microseconds (an integer), so that comparisons,
    /// ORDER BY, GROUP BY and MIN / MAX order times as times (`crate::time`).
    TimeMicros,
    /// Internal: a TIME value behind its microseconds as 8 order-preserving bytes, so that
    /// MIN / MAX compare times byte by byte and keep the value as it was (`Unkeyed`).
    TimeKeyed,
    /// Internal: a `TimeKeyed` value without its 8 key bytes.
    Unkeyed,
    /// Internal: a TIME(n) value in a numeric context, `[-]HHMMSS[.n digits]` (n = 7: as many
    /// digits as the value has).
    TimeNumber(u8),
    /// Internal: text compared with a BIT column, read as one big-endian number of its
    /// bytes (`'A'` is 65), as MariaDB compares them.
    BitNumber,
}

/// Static type of an expression's result, used for result-set metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SqlType {
    Int,
    Double,
    Decimal(u8),
    Text,
    Date,
    DateTime,
    Time,
    Null,
}

#[derive(Clone, Debug)]
pub enum Expr {
    Const(Value),
    Param(usize),
    /// A column of an enclosing query, passed to a correlated subquery as its parameter
    /// `param` (see `SubRef`), with the column's type and whether it is binary.
    Outer {
        param: usize,
        ty: SqlType,
        binary: bool,
    },
    Col(usize),
    Unary(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    IsNull(Box<Expr>, bool),
    /// `x IS [NOT] TRUE/FALSE`: (expr, value, negated)
    IsBool(Box<Expr>, bool, bool),
    In(Box<Expr>, Vec<Expr>, bool),
    Between(Box<Expr>, Box<Expr>, Box<Expr>, bool),
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: u8,
        negated: bool,
    },
    Func(Func, Vec<Expr>),
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Cast(Box<Expr>, CastTo),
    /// `@@name` (lower-case), with an optional explicit scope (true = GLOBAL).
    SysVar(String, Option<bool>),
    UserVar(String),
    /// `(SELECT ...)` as a value, and the type of its column.
    Subquery(SubRef, SqlType),
    /// `x [NOT] IN (SELECT ...)`.
    InSubquery(Box<Expr>, SubRef, bool),
    /// `[NOT] EXISTS (SELECT ...)`.
    Exists(SubRef, bool),
    /// `x op ALL (SELECT ...)` (`all`) or `x op ANY / SOME (SELECT ...)`, op a comparison.
    Quantified {
        left: Box<Expr>,
        op: BinOp,
        sub: SubRef,
        all: bool,
    },
    /// A comparison (`Bin` with a comparison operator, `In`, `InSubquery`, `Between`, `Like`)
    /// that compares strings byte by byte, because an operand is a binary column; the
    /// comparisons outside it use the default `utf8mb4_general_ci`.
    Bytewise(Box<Expr>),
    /// Integer arithmetic (`Bin` with `+ - * DIV %`) whose result is BIGINT UNSIGNED, because
    /// an operand is (an unsigned integer column, an integer above i64::MAX, a cast to
    /// UNSIGNED, a bit operation or another such node), as MariaDB types it: the result must
    /// lie in 0 ..= 2^64 - 1 (else 1690), and may exceed i64::MAX.
    Unsigned(Box<Expr>),
    /// A decimal literal (`0.10`, digits after a point and no exponent; or an integer past
    /// 2^64 - 1): its value as a double when it has at most 15 significant digits (the double
    /// keeps them all), else its exact text; typed DECIMAL with the scale written (2 here),
    /// so that arithmetic with it is typed DECIMAL and shown at that scale, as in MariaDB
    /// (`0.1 + 0.2` is `0.3`), and a long literal reaches a DECIMAL column whole.
    DecimalConst(Value, u8),
    /// `+ - * /` typed DECIMAL (operands that are integers, DECIMAL columns or literals):
    /// computed exactly (`dec::Dec`, up to 81 digits; a division at MariaDB's inner scale,
    /// whole groups of nine digits), so `p + 0.01 = 0.21` and `0.3 - 0.1 - 0.2 = 0` hold as
    /// with MariaDB's decimals; the result travels as `Dec::into_value` makes it. An operand
    /// that is not an exact number (a string such as '1e3', a value past 81 digits) takes
    /// the double path, rounded to the scale when there is one: `Some` for `+ - *` with no
    /// division or function inside (rounding is then exact), `None` otherwise.
    Scaled(Box<Expr>, Scale),
}

/// How an `Expr::Scaled` computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    /// The scale the double path rounds to (`+ - *` with no division or function inside).
    pub round: Option<u8>,
    /// The operands' declared scales: an exact operand is read at least at its scale (the
    /// literal 1.000000 arrives as the double 1.0), and a division's scale depends on them.
    pub operands: (u8, u8),
}

/// A subquery used in an expression: the statement's subquery number `index` (its plan in
/// `EvalCx::subplans`) and, when it is correlated, the values of the enclosing query it
/// names.
#[derive(Clone, Debug)]
pub struct SubRef {
    pub index: usize,
    /// Uncorrelated: empty, and its rows are computed once per execution (`EvalCx::subq`).
    /// Correlated: expressions over the enclosing query's row; the subquery is run for each
    /// row with the statement's `base` parameters followed by these values as its parameters
    /// (its references to the enclosing query were compiled to `Param(base + k)`).
    pub outer: Vec<Expr>,
    pub base: usize,
}

/// Runs correlated subqueries during evaluation (exec.rs implements it over the statement's
/// transaction).
pub trait SubqueryRunner {
    /// The first column of the rows of subquery `s` run with `params`, stopping after
    /// `max_rows`.
    fn rows(
        &self,
        s: &SubRef,
        params: Vec<Value>,
        max_rows: usize,
        cx: &EvalCx,
    ) -> Result<Vec<Value>, SqlError>;
}

/// What evaluation may need from the session besides the row and parameters.
pub trait Env {
    fn current_db(&self) -> Option<&str>;
    fn user(&self) -> String;
    /// CURRENT_USER(): the account the privileges are from (USER() unless it differs).
    fn current_user(&self) -> String {
        self.user()
    }
    /// The account whose privileges limit what the statement may see (INFORMATION_SCHEMA
    /// rows); None: no limit.
    fn account(&self) -> Option<&crate::accounts::Account> {
        None
    }
    /// Every account (INFORMATION_SCHEMA's privilege tables); None without a server.
    fn accounts(&self) -> Option<&crate::accounts::Accounts> {
        None
    }
    /// INFORMATION_SCHEMA.PROCESSLIST's rows: the connections this session may see (SHOW
    /// FULL PROCESSLIST's first eight columns); none without a server.
    fn processlist(&self) -> Vec<tierdb_engine::Row> {
        Vec::new()
    }
    /// `LOAD_FILE(path)`: the bytes of a server file the account may read (FILE privilege,
    /// under `secure_file_priv`, at most `max_allowed_packet`), else NULL (as MariaDB).
    fn load_file(&self, _path: &str) -> Value {
        Value::Null
    }
    /// INFORMATION_SCHEMA's GLOBAL_STATUS, SESSION_STATUS, GLOBAL_VARIABLES or
    /// SESSION_VARIABLES rows (`table`, in capitals): name and value; none without a server.
    fn server_values(&self, _table: &str) -> Vec<tierdb_engine::Row> {
        Vec::new()
    }
    fn connection_id(&self) -> u32;
    fn last_insert_id(&self) -> u64;
    fn version(&self) -> String;
    fn sysvar(&self, name: &str, global: Option<bool>) -> Result<Value, SqlError>;
    /// What the sql_mode says about written values (`read_write_mode` unless cached).
    fn write_mode(&self) -> WriteMode {
        read_write_mode(self)
    }
    /// `foreign_key_checks` is on (`read_fk_checks` unless cached).
    fn fk_checks(&self) -> bool {
        read_fk_checks(self)
    }
    fn user_var(&self, name: &str) -> Value;
    /// `ROW_COUNT()`: rows the previous statement changed (-1 after a SELECT or an error).
    fn row_count(&self) -> i64 {
        -1
    }
    /// `FOUND_ROWS()`: rows the last SELECT returned.
    fn found_rows(&self) -> u64 {
        0
    }
    /// GET_LOCK and friends for this connection; refused where there is no session.
    fn user_lock(
        &self,
        _f: crate::user_locks::UserLockFunc,
        _args: &[Value],
    ) -> Result<Value, SqlError> {
        Err(SqlError::unsupported("user-level locks here"))
    }
    /// The engine, for statements that look at other tables than their own (foreign keys);
    /// None where there is no session (then no foreign key is checked).
    fn engine(&self) -> Option<&tierdb_engine::Engine> {
        None
    }
    /// `BINLOG_GTID_POS(file, pos)`: the GTID position at that binary-log position; None
    /// (NULL) without a binary log, or for a file or position not in it.
    fn binlog_gtid_pos(&self, _file: &str, _pos: u64) -> Option<String> {
        None
    }
}

/// The values of an uncorrelated subquery (first column, in row order), and when every one
/// is a signed integer also those sorted, so that `x IN (SELECT ...)` over many rows is a
/// binary search, not a walk of the list for every row that asks.
#[derive(Clone, Debug, Default)]
pub struct SubValues {
    pub rows: Vec<Value>,
    pub ints: Option<Vec<i64>>,
}

impl SubValues {
    pub fn new(rows: Vec<Value>) -> SubValues {
        let ints = rows
            .iter()
            .map(|v| match v {
                Value::Int(i) => Some(*i),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()
            .map(|mut v| {
                v.sort_unstable();
                v
            });
        SubValues { rows, ints }
    }
}

/// Evaluation context: parameters of the execution and the session environment.
pub struct EvalCx<'a> {
    pub params: &'a [Value],
    pub env: &'a dyn Env,
    /// The first column of every row of each of the statement's uncorrelated subqueries
    /// (computed once per execution, before the statement reads anything else; a correlated
    /// subquery's entry is empty).
    pub subq: &'a [SubValues],
    /// The statement's subquery plans (`SubRef::index` numbers them).
    pub subplans: &'a [crate::plan::SelectPlan],
    /// Runs correlated subqueries; None where none can appear (evaluating one then fails
    /// with an internal error, never a wrong answer).
    pub runner: Option<&'a dyn SubqueryRunner>,
}

impl<'a> EvalCx<'a> {
    /// A context with parameters and a session and no subqueries.
    pub fn new(params: &'a [Value], env: &'a dyn Env) -> EvalCx<'a> {
        EvalCx {
            params,
            env,
            subq: &[],
            subplans: &[],
            runner: None,
        }
    }
}

/// SQL `v IN (items)`: true when one equals `v`, else NULL when `v` or an item is NULL, else
/// false.
fn membership<'a>(
    v: &Value,
    items: impl Iterator<Item = Result<Cow<'a, Value>, SqlError>>,
    coll: Collation,
) -> Result<Option<bool>, SqlError> {
    if v.is_null() {
        return Ok(None);
    }
    let mut saw_null = false;
    for x in items {
        match compare_in(v, &*x?, coll) {
            Some(Ordering::Equal) => return Ok(Some(true)),
            None => saw_null = true,
            _ => {}
        }
    }
    Ok(if saw_null { None } else { Some(false) })
}

/// The rows of subquery `s` for `row`: computed up front when uncorrelated, else run now
/// with the row's values (at most `max_rows` of them: 1 answers EXISTS, 2 tell a scalar
/// subquery returning several rows).
/// `l op r` for a comparison operator (None: NULL).
fn compare_op(op: BinOp, l: &Value, r: &Value, coll: Collation) -> Option<bool> {
    let o = compare_in(l, r, coll)?;
    Some(match op {
        BinOp::Eq => o == Ordering::Equal,
        BinOp::Ne => o != Ordering::Equal,
        BinOp::Lt => o == Ordering::Less,
        BinOp::Le => o != Ordering::Greater,
        BinOp::Gt => o == Ordering::Greater,
        _ => o != Ordering::Less,
    })
}

fn subquery_rows<'a>(
    cx: &EvalCx<'a>,
    s: &SubRef,
    row: &[Value],
    max_rows: usize,
) -> Result<Cow<'a, [Value]>, SqlError> {
    if s.outer.is_empty() {
        return cx
            .subq
            .get(s.index)
            .map(|v| Cow::Borrowed(v.rows.as_slice()))
            .ok_or_else(|| SqlError::new(1105, "HY000", "internal: a subquery was not run"));
    }
    let runner = cx.runner.ok_or_else(|| {
        SqlError::new(
            1105,
            "HY000",
            "internal: a correlated subquery evaluated where it cannot run",
        )
    })?;
    let mut params: Vec<Value> = cx.params.iter().take(s.base).cloned().collect();
    params.resize(s.base, Value::Null);
    for e in &s.outer {
        params.push(e.eval(row, cx)?.into_owned());
    }
    Ok(Cow::Owned(runner.rows(s, params, max_rows, cx)?))
}

fn overflow(what: &str) -> SqlError {
    SqlError::new(
        1690,
        "22003",
        format!("BIGINT value is out of range in '{what}'"),
    )
}

fn overflow_unsigned(what: &str) -> SqlError {
    SqlError::new(
        1690,
        "22003",
        format!("BIGINT UNSIGNED value is out of range in '{what}'"),
    )
}

/// Numeric form used by arithmetic: strings become Int when they are integers, else Double.
pub(crate) fn num(v: &Value) -> Value {
    match v {
        Value::Bytes(b) => coerce::number_of_bytes(b),
        other => other.clone(),
    }
}

/// The 64 bits bit operations work on: integers as two's complement, others converted.
pub(crate) fn bits(v: &Value) -> Option<u64> {
    match v {
        Value::UInt(u) => Some(*u),
        Value::Double(d) if *d >= coerce::U64_END_F => Some(u64::MAX),
        Value::Double(d) if *d >= coerce::I64_END_F => Some(*d as u64),
        other => to_i64(other).map(|i| i as u64),
    }
}

/// `d` rounded to `scale` decimals (half away from zero, on its shortest decimal digits):
/// the double nearest the decimal result. Doubles past 15 significant digits, or scales
/// past 15, are left as they are (no digits to gain).
fn round_to_scale(d: f64, scale: u8) -> f64 {
    if !d.is_finite() || scale > 15 || d.abs() >= 1e15 {
        return d;
    }
    coerce::decimal_text(d, scale).parse().unwrap_or(d)
}

/// `-v` for an integer above `i64::MAX`: only -2^63 is still an integer.
pub(crate) fn neg_uint(u: u64) -> Value {
    Value::from_i128(-i128::from(u)).unwrap_or(Value::Double(-(u as f64)))
}

fn bool_val(b: Option<bool>) -> Value {
    match b {
        None => Value::Null,
        Some(true) => Value::Int(1),
        Some(false) => Value::Int(0),
    }
}

impl Expr {
    /// True when a correlated subquery is evaluated somewhere in this expression (it needs
    /// `EvalCx::runner`, so the row source must not hold the transaction meanwhile).
    pub fn is_correlated(&self) -> bool {
        self.any(&mut |e| match e {
            Expr::Subquery(s, _)
            | Expr::Exists(s, _)
            | Expr::InSubquery(_, s, _)
            | Expr::Quantified { sub: s, .. } => !s.outer.is_empty(),
            _ => false,
        })
    }

    /// No column of the row is read (and no correlated subquery runs, which would need the
    /// transaction): the value can be computed once, e.g. as a key bound.
    pub fn is_row_independent(&self) -> bool {
        !self.any(&mut |e| matches!(e, Expr::Col(_))) && !self.is_correlated()
    }

    /// Renumbers every row column (`Col`) this expression and its correlated subqueries'
    /// parameters name.
    pub fn map_cols(&mut self, f: &mut dyn FnMut(usize) -> usize) {
        let sub = |s: &mut SubRef, f: &mut dyn FnMut(usize) -> usize| {
            for e in &mut s.outer {
                e.map_cols(f);
            }
        };
        match self {
            Expr::Col(c) => *c = f(*c),
            Expr::Const(_)
            | Expr::DecimalConst(..)
            | Expr::Param(_)
            | Expr::Outer { .. }
            | Expr::SysVar(..)
            | Expr::UserVar(_) => {}
            Expr::Unary(_, a)
            | Expr::IsNull(a, _)
            | Expr::IsBool(a, ..)
            | Expr::Cast(a, _)
            | Expr::Bytewise(a)
            | Expr::Unsigned(a)
            | Expr::Scaled(a, _) => a.map_cols(f),
            Expr::Bin(_, a, b) => {
                a.map_cols(f);
                b.map_cols(f);
            }
            Expr::In(a, list, _) => {
                a.map_cols(f);
                for e in list {
                    e.map_cols(f);
                }
            }
            Expr::InSubquery(a, s, _) => {
                a.map_cols(f);
                sub(s, f);
            }
            Expr::Subquery(s, _) | Expr::Exists(s, _) => sub(s, f),
            Expr::Quantified { left, sub: s, .. } => {
                left.map_cols(f);
                sub(s, f);
            }
            Expr::Between(a, b, c, _) => {
                a.map_cols(f);
                b.map_cols(f);
                c.map_cols(f);
            }
            Expr::Like { expr, pattern, .. } => {
                expr.map_cols(f);
                pattern.map_cols(f);
            }
            Expr::Func(_, args) => {
                for e in args {
                    e.map_cols(f);
                }
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                if let Some(o) = operand {
                    o.map_cols(f);
                }
                for (a, b) in whens {
                    a.map_cols(f);
                    b.map_cols(f);
                }
                if let Some(o) = otherwise {
                    o.map_cols(f);
                }
            }
        }
    }

    /// True when `f` holds for this node or any descendant.
    pub fn any(&self, f: &mut dyn FnMut(&Expr) -> bool) -> bool {
        if f(self) {
            return true;
        }
        match self {
            Expr::Const(_)
            | Expr::DecimalConst(..)
            | Expr::Param(_)
            | Expr::Outer { .. }
            | Expr::Col(_)
            | Expr::SysVar(..)
            | Expr::UserVar(_) => false,
            Expr::Unary(_, a)
            | Expr::IsNull(a, _)
            | Expr::IsBool(a, ..)
            | Expr::Cast(a, _)
            | Expr::Bytewise(a)
            | Expr::Unsigned(a)
            | Expr::Scaled(a, _) => a.any(f),
            Expr::Bin(_, a, b) => a.any(f) || b.any(f),
            Expr::In(a, list, _) => a.any(f) || list.iter().any(|e| e.any(f)),
            Expr::InSubquery(a, s, _) => a.any(f) || s.outer.iter().any(|e| e.any(f)),
            Expr::Subquery(s, _) | Expr::Exists(s, _) => s.outer.iter().any(|e| e.any(f)),
            Expr::Quantified { left, sub, .. } => left.any(f) || sub.outer.iter().any(|e| e.any(f)),
            Expr::Between(a, b, c, _) => a.any(f) || b.any(f) || c.any(f),
            Expr::Like { expr, pattern, .. } => expr.any(f) || pattern.any(f),
            Expr::Func(_, args) => args.iter().any(|e| e.any(f)),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                operand.as_ref().is_some_and(|e| e.any(f))
                    || whens.iter().any(|(a, b)| a.any(f) || b.any(f))
                    || otherwise.as_ref().is_some_and(|e| e.any(f))
            }
        }
    }

    /// Evaluates to a boolean for WHERE/HAVING: NULL counts as false.
    pub fn matches(&self, row: &[Value], cx: &EvalCx) -> Result<bool, SqlError> {
        Ok(truthy(&*self.eval(row, cx)?).unwrap_or(false))
    }

    pub fn eval<'a>(
        &'a self,
        row: &'a [Value],
        cx: &'a EvalCx,
    ) -> Result<Cow<'a, Value>, SqlError> {
        Ok(match self {
            Expr::Const(v) | Expr::DecimalConst(v, _) => Cow::Borrowed(v),
            Expr::Param(i) | Expr::Outer { param: i, .. } => {
                Cow::Borrowed(cx.params.get(*i).unwrap_or(&Value::Null))
            }
            Expr::Col(i) => Cow::Borrowed(row.get(*i).unwrap_or(&Value::Null)),
            Expr::Unary(op, a) => {
                let v = a.eval(row, cx)?;
                Cow::Owned(match op {
                    UnOp::Not => bool_val(truthy(&v).map(|b| !b)),
                    UnOp::Neg => match num(&v) {
                        Value::Int(i) => Value::Int(i.checked_neg().ok_or_else(|| overflow("-x"))?),
                        Value::UInt(u) => neg_uint(u),
                        // DECIMAL text keeps every digit.
                        Value::Double(d) => match Dec::of_text(&v) {
                            Some(x) => x.neg().into_value(),
                            None => Value::Double(-d),
                        },
                        other => other,
                    },
                    UnOp::BitNot => match bits(&num(&v)) {
                        Some(u) => Value::from_u64(!u),
                        None => Value::Null,
                    },
                })
            }
            Expr::Bin(op, a, b) => {
                Cow::Owned(self.eval_bin(*op, a, b, row, cx, Collation::GeneralCi)?)
            }
            Expr::IsNull(a, neg) => {
                let v = a.eval(row, cx)?;
                Cow::Owned(Value::Int(i64::from(v.is_null() != *neg)))
            }
            Expr::IsBool(a, want, neg) => {
                let v = a.eval(row, cx)?;
                let r = truthy(&v) == Some(*want);
                Cow::Owned(Value::Int(i64::from(r != *neg)))
            }
            Expr::Subquery(s, _) => match &*subquery_rows(cx, s, row, 2)? {
                [] => Cow::Owned(Value::Null),
                [v] => Cow::Owned(v.clone()),
                _ => {
                    return Err(SqlError::new(
                        1242,
                        "21000",
                        "Subquery returns more than 1 row",
                    ))
                }
            },
            Expr::Exists(s, neg) => {
                let any = !subquery_rows(cx, s, row, 1)?.is_empty();
                Cow::Owned(Value::Int(i64::from(any != *neg)))
            }
            Expr::InSubquery(..)
            | Expr::Quantified { .. }
            | Expr::In(..)
            | Expr::Between(..)
            | Expr::Like { .. } => Cow::Owned(self.eval_collated(Collation::GeneralCi, row, cx)?),
            Expr::Bytewise(e) => Cow::Owned(e.eval_collated(Collation::Binary, row, cx)?),
            Expr::Unsigned(e) => match &**e {
                Expr::Bin(op, a, b) => {
                    let (l, r) = (a.eval(row, cx)?, b.eval(row, cx)?);
                    Cow::Owned(arith_in(*op, &l, &r, true)?)
                }
                other => other.eval(row, cx)?,
            },
            Expr::Scaled(e, scale) => {
                let Expr::Bin(op, a, b) = &**e else {
                    return e.eval(row, cx);
                };
                let (l, r) = (a.eval(row, cx)?, b.eval(row, cx)?);
                // Exact when both operands are (integers, DECIMAL text, decimal literals,
                // other exact results); the double path otherwise.
                let at = |v: &Value, s: u8| Dec::of(v).map(|d| d.widen(s).unwrap_or(d));
                if let (Some(x), Some(y)) = (at(&l, scale.operands.0), at(&r, scale.operands.1)) {
                    let exact = match op {
                        BinOp::Add => x.checked_add(&y),
                        BinOp::Sub => x.checked_sub(&y),
                        BinOp::Mul => x.checked_mul(&y),
                        BinOp::Div => x.checked_div(&y, Dec::division_scale(x.scale(), y.scale())),
                        BinOp::Mod => x.checked_rem(&y),
                        _ => None,
                    };
                    if let Some(d) = exact {
                        return Ok(Cow::Owned(d.into_value()));
                    }
                }
                Cow::Owned(match (arith(*op, &l, &r)?, scale.round) {
                    (Value::Double(d), Some(s)) => Value::Double(round_to_scale(d, s)),
                    (other, _) => other,
                })
            }
            Expr::Func(f, args) => Cow::Owned(eval_func(*f, args, row, cx)?),
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                let op = match operand {
                    Some(o) => Some(o.eval(row, cx)?),
                    None => None,
                };
                for (w, t) in whens {
                    let wv = w.eval(row, cx)?;
                    let hit = match &op {
                        Some(o) => compare(o, &wv) == Some(Ordering::Equal),
                        None => truthy(&wv).unwrap_or(false),
                    };
                    if hit {
                        return t.eval(row, cx);
                    }
                }
                match otherwise {
                    Some(e) => e.eval(row, cx)?,
                    None => Cow::Owned(Value::Null),
                }
            }
            Expr::Cast(a, to) => {
                let v = a.eval(row, cx)?;
                Cow::Owned(cast(&v, *to))
            }
            Expr::SysVar(name, global) => Cow::Owned(cx.env.sysvar(name, *global)?),
            Expr::UserVar(name) => Cow::Owned(cx.env.user_var(name)),
        })
    }

    /// Evaluates a comparison node with strings under collation `coll` (see `Bytewise`).
    fn eval_collated(
        &self,
        coll: Collation,
        row: &[Value],
        cx: &EvalCx,
    ) -> Result<Value, SqlError> {
        Ok(match self {
            Expr::InSubquery(a, s, neg) => {
                let set = subquery_rows(cx, s, row, usize::MAX)?;
                if set.is_empty() {
                    // Nothing is IN an empty set, not even NULL.
                    return Ok(Value::Int(i64::from(*neg)));
                }
                let v = a.eval(row, cx)?;
                let ints = s.outer.is_empty().then(|| cx.subq.get(s.index)).flatten();
                if let (Some(ints), Value::Int(i)) = (ints.and_then(|v| v.ints.as_ref()), &*v) {
                    // Integers only (no NULL among them): an integer is found or not.
                    return Ok(Value::Int(i64::from(ints.binary_search(i).is_ok() != *neg)));
                }
                let r = membership(&v, set.iter().map(|x| Ok(Cow::Borrowed(x))), coll)?;
                bool_val(r.map(|b| b != *neg))
            }
            Expr::Quantified { left, op, sub, all } => {
                let set = subquery_rows(cx, sub, row, usize::MAX)?;
                if set.is_empty() {
                    // Every row of an empty set passes ALL; none passes ANY.
                    return Ok(Value::Int(i64::from(*all)));
                }
                let v = left.eval(row, cx)?;
                let mut saw_null = false;
                for x in set.iter() {
                    match compare_op(*op, &v, x, coll) {
                        Some(r) if r != *all => return Ok(Value::Int(i64::from(r))),
                        None => saw_null = true,
                        Some(_) => {}
                    }
                }
                bool_val(if saw_null { None } else { Some(*all) })
            }
            Expr::In(a, list, neg) => {
                let v = a.eval(row, cx)?;
                let r = membership(&v, list.iter().map(|e| e.eval(row, cx)), coll)?;
                bool_val(r.map(|b| b != *neg))
            }
            Expr::Between(a, lo, hi, neg) => {
                let v = a.eval(row, cx)?;
                let l = lo.eval(row, cx)?;
                let h = hi.eval(row, cx)?;
                let ge = compare_in(&v, &l, coll).map(|o| o != Ordering::Less);
                let le = compare_in(&v, &h, coll).map(|o| o != Ordering::Greater);
                let r = and3(ge, le);
                bool_val(r.map(|b| b != *neg))
            }
            Expr::Like {
                expr,
                pattern,
                escape,
                negated,
            } => {
                let v = expr.eval(row, cx)?;
                let p = pattern.eval(row, cx)?;
                let (Some(vt), Some(pt)) = (to_text(&v), to_text(&p)) else {
                    return Ok(Value::Null);
                };
                let m = coll.like(&vt, &pt, *escape);
                Value::Int(i64::from(m != *negated))
            }
            Expr::Bin(op, a, b) => self.eval_bin(*op, a, b, row, cx, coll)?,
            Expr::Func(Func::Str(g), args) => {
                let vals = eval_args(args, row, cx)?;
                string_func(*g, &vals, coll)
            }
            Expr::Func(Func::Regex(g), args) => regex_func(*g, &eval_args(args, row, cx)?, coll)?,
            other => other.eval(row, cx)?.into_owned(),
        })
    }

    fn eval_bin(
        &self,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        row: &[Value],
        cx: &EvalCx,
        coll: Collation,
    ) -> Result<Value, SqlError> {
        match op {
            BinOp::And => {
                let l = truthy(&*a.eval(row, cx)?);
                if l == Some(false) {
                    return Ok(Value::Int(0));
                }
                let r = truthy(&*b.eval(row, cx)?);
                return Ok(bool_val(and3(l, r)));
            }
            BinOp::Or => {
                let l = truthy(&*a.eval(row, cx)?);
                if l == Some(true) {
                    return Ok(Value::Int(1));
                }
                let r = truthy(&*b.eval(row, cx)?);
                return Ok(bool_val(match (l, r) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                }));
            }
            _ => {}
        }
        let l = a.eval(row, cx)?;
        let r = b.eval(row, cx)?;
        Ok(match op {
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                bool_val(compare_op(op, &l, &r, coll))
            }
            BinOp::NullSafeEq => Value::Int(i64::from(match (l.is_null(), r.is_null()) {
                (true, true) => true,
                (false, false) => compare_in(&l, &r, coll) == Some(Ordering::Equal),
                _ => false,
            })),
            BinOp::Xor => bool_val(match (truthy(&l), truthy(&r)) {
                (Some(x), Some(y)) => Some(x != y),
                _ => None,
            }),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr => {
                // MariaDB's bit operations work on unsigned 64-bit integers.
                match (bits(&num(&l)), bits(&num(&r))) {
                    (Some(x), Some(y)) => Value::from_u64(match op {
                        BinOp::BitAnd => x & y,
                        BinOp::BitOr => x | y,
                        BinOp::BitXor => x ^ y,
                        // Counts outside 0..64 shift every bit out.
                        _ => match u32::try_from(y) {
                            Ok(n) if n < 64 => {
                                if op == BinOp::Shl {
                                    x << n
                                } else {
                                    x >> n
                                }
                            }
                            _ => 0,
                        },
                    }),
                    _ => Value::Null,
                }
            }
            _ => arith(op, &l, &r)?,
        })
    }

    /// True when the value can never be NULL: a constant other than NULL, a column
    /// `col_not_null` says is NOT NULL, and the operators that give NULL only for a NULL
    /// operand over such values (arithmetic that can divide by zero excluded). False where
    /// unsure.
    pub fn never_null(&self, col_not_null: &dyn Fn(usize) -> bool) -> bool {
        let nn = |e: &Expr| e.never_null(col_not_null);
        match self {
            Expr::Const(v) | Expr::DecimalConst(v, _) => !v.is_null(),
            Expr::Col(c) => col_not_null(*c),
            Expr::Unary(UnOp::Neg | UnOp::BitNot | UnOp::Not, a) => nn(a),
            Expr::Bin(BinOp::NullSafeEq, ..) => true,
            Expr::Bin(BinOp::Div | BinOp::IntDiv | BinOp::Mod, ..) => false,
            Expr::Bin(_, a, b) => nn(a) && nn(b),
            Expr::IsNull(..) | Expr::IsBool(..) => true,
            Expr::Like { expr, pattern, .. } => nn(expr) && nn(pattern),
            Expr::In(a, list, _) => nn(a) && list.iter().all(nn),
            Expr::Between(a, b, c, _) => nn(a) && nn(b) && nn(c),
            Expr::Func(Func::Regex(RegexFunc::Match | RegexFunc::Instr), args) => {
                args.iter().all(nn)
            }
            Expr::Func(
                Func::FoundRows
                | Func::RowCount
                | Func::LastInsertId
                | Func::ConnectionId
                | Func::Now
                | Func::CurDate,
                _,
            ) => true,
            Expr::Func(Func::Misc(m), args) => crate::funcs::never_null(*m, args.iter().all(nn)),
            Expr::Func(Func::Str(StrFunc::Instr) | Func::Length | Func::CharLength, args) => {
                args.iter().all(nn)
            }
            Expr::Bytewise(a) | Expr::Unsigned(a) => nn(a),
            Expr::Scaled(a, _) => nn(a),
            // (MariaDB counts casts to text as possibly NULL.)
            Expr::Cast(
                a,
                CastTo::Signed | CastTo::Unsigned | CastTo::Double | CastTo::DecimalOrder,
            ) => nn(a),
            _ => false,
        }
    }

    /// The static result type (for column metadata). `cols` gives the types of row columns.
    pub fn sql_type(&self, cols: &dyn Fn(usize) -> SqlType) -> SqlType {
        match self {
            Expr::Const(v) => match v {
                Value::Null => SqlType::Null,
                Value::Int(_) => SqlType::Int,
                Value::UInt(_) => SqlType::Int,
                Value::Double(_) => SqlType::Double,
                Value::Bytes(_) => SqlType::Text,
            },
            Expr::DecimalConst(_, scale) => SqlType::Decimal(*scale),
            Expr::Param(_) | Expr::UserVar(_) | Expr::SysVar(..) => SqlType::Text,
            Expr::Outer { ty, .. } => *ty,
            Expr::Col(i) => cols(*i),
            Expr::Unary(UnOp::Neg, a) => match a.sql_type(cols) {
                SqlType::Text => SqlType::Double,
                t => t,
            },
            Expr::Subquery(_, t) => *t,
            Expr::Unary(..)
            | Expr::IsNull(..)
            | Expr::IsBool(..)
            | Expr::In(..)
            | Expr::InSubquery(..)
            | Expr::Exists(..)
            | Expr::Quantified { .. }
            | Expr::Between(..)
            | Expr::Like { .. } => SqlType::Int,
            // A comparison (Int) or a string function made byte-wise: the inner type.
            Expr::Bytewise(a) | Expr::Unsigned(a) | Expr::Scaled(a, _) => a.sql_type(cols),
            Expr::Bin(op, a, b) => match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod => {
                    match (a.sql_type(cols), b.sql_type(cols)) {
                        (SqlType::Int, SqlType::Int) => SqlType::Int,
                        (SqlType::Decimal(x), SqlType::Decimal(y)) if *op == BinOp::Mul => {
                            SqlType::Decimal(x.saturating_add(y).min(30))
                        }
                        (SqlType::Decimal(x), SqlType::Decimal(y)) => SqlType::Decimal(x.max(y)),
                        (SqlType::Decimal(x), SqlType::Int)
                        | (SqlType::Int, SqlType::Decimal(x)) => SqlType::Decimal(x),
                        _ => SqlType::Double,
                    }
                }
                // MariaDB's exact division: the dividend's scale plus div_precision_increment
                // (4) digits.
                BinOp::Div => match (a.sql_type(cols), b.sql_type(cols)) {
                    (SqlType::Int, SqlType::Int | SqlType::Decimal(_)) => SqlType::Decimal(4),
                    (SqlType::Decimal(x), SqlType::Int | SqlType::Decimal(_)) => {
                        SqlType::Decimal(x.saturating_add(4).min(30))
                    }
                    _ => SqlType::Double,
                },
                _ => SqlType::Int,
            },
            Expr::Func(f, args) => match f {
                Func::Concat
                | Func::ConcatWs
                | Func::Upper
                | Func::Lower
                | Func::Database
                | Func::User
                | Func::CurrentUser
                | Func::Version => SqlType::Text,
                Func::Substring
                | Func::Trim
                | Func::Replace
                | Func::Left
                | Func::Right
                | Func::DateFormat => SqlType::Text,
                Func::DatePart => SqlType::Date,
                Func::Year
                | Func::Month
                | Func::Day
                | Func::Hour
                | Func::Minute
                | Func::Second
                | Func::Microsecond => SqlType::Int,
                Func::Length
                | Func::CharLength
                | Func::ConnectionId
                | Func::LastInsertId
                | Func::UnixTimestamp
                | Func::Regex(RegexFunc::Match | RegexFunc::Instr) => SqlType::Int,
                Func::Regex(_) | Func::BinlogGtidPos | Func::LoadFile => SqlType::Text,
                Func::UserLock(_) => SqlType::Int,
                Func::Json(j) if j.is_int() => SqlType::Int,
                Func::Json(_) => SqlType::Text,
                Func::Misc(crate::funcs::MiscFunc::Truncate) => rounded_type(args, cols),
                Func::Misc(m) => crate::funcs::result_type(
                    *m,
                    &args.iter().map(|a| a.sql_type(cols)).collect::<Vec<_>>(),
                ),
                Func::FromUnixtime if args.len() > 1 => SqlType::Text,
                Func::FromUnixtime => SqlType::DateTime,
                // Of a DECIMAL: DECIMAL with no fraction (it may pass 64 bits), as MariaDB
                // types a wide one.
                Func::Floor | Func::Ceil => match args.first().map(|a| a.sql_type(cols)) {
                    Some(SqlType::Decimal(_)) => SqlType::Decimal(0),
                    _ => SqlType::Int,
                },
                Func::Round => rounded_type(args, cols),
                Func::Abs => args
                    .first()
                    .map(|a| a.sql_type(cols))
                    .unwrap_or(SqlType::Null),
                Func::Now | Func::ConvertTz => SqlType::DateTime,
                Func::DateDiff | Func::TimestampDiff => SqlType::Int,
                Func::DateAdd => {
                    let keeps = match args.get(2) {
                        Some(Expr::Const(v)) => {
                            IntervalUnit::of(v).is_some_and(|u| u.keeps_dates())
                        }
                        _ => false,
                    };
                    match args.first().map(|a| a.sql_type(cols)) {
                        Some(SqlType::Date) if keeps => SqlType::Date,
                        Some(SqlType::Date | SqlType::DateTime) => SqlType::DateTime,
                        _ => SqlType::Text,
                    }
                }
                Func::CurDate => SqlType::Date,
                Func::Str(
                    StrFunc::Instr
                    | StrFunc::Ascii
                    | StrFunc::Field
                    | StrFunc::FindInSet
                    | StrFunc::Strcmp,
                ) => SqlType::Int,
                Func::Str(_) | Func::DayName | Func::MonthName => SqlType::Text,
                Func::Sign
                | Func::DayOfWeek
                | Func::Weekday
                | Func::DayOfYear
                | Func::Quarter
                | Func::ToDays
                | Func::RowCount
                | Func::FoundRows => SqlType::Int,
                Func::Pow
                | Func::Sqrt
                | Func::Exp
                | Func::Ln
                | Func::Log
                | Func::Log10
                | Func::Log2 => SqlType::Double,
                Func::LastDay => SqlType::Date,
                Func::Coalesce | Func::IfNull | Func::Greatest | Func::Least | Func::NullIf => {
                    unify(args.iter().map(|a| a.sql_type(cols)))
                }
                Func::If => unify(args.iter().skip(1).map(|a| a.sql_type(cols))),
            },
            Expr::Case {
                whens, otherwise, ..
            } => unify(
                whens
                    .iter()
                    .map(|(_, t)| t.sql_type(cols))
                    .chain(otherwise.iter().map(|e| e.sql_type(cols))),
            ),
            Expr::Cast(_, to) => match to {
                CastTo::Signed | CastTo::Unsigned => SqlType::Int,
                CastTo::Char | CastTo::Binary | CastTo::DecimalOrder => SqlType::Text,
                CastTo::Double => SqlType::Double,
                CastTo::Decimal { scale, .. } => SqlType::Decimal(*scale),
                CastTo::Date => SqlType::Date,
                CastTo::DateTime(_) | CastTo::TemporalOf(Some(_)) => SqlType::DateTime,
                CastTo::TemporalOf(None) => SqlType::Date,
                CastTo::TemporalNumber(0)
                | CastTo::TimeNumber(0)
                | CastTo::TimeMicros
                | CastTo::BitNumber => SqlType::Int,
                CastTo::TemporalNumber(n) | CastTo::TimeNumber(n) => SqlType::Decimal((*n).min(6)),
                CastTo::Time(_) | CastTo::Unkeyed => SqlType::Time,
                CastTo::TimeKeyed => SqlType::Text,
            },
        }
    }
}

/// The type of ROUND / TRUNCATE(x[, n]): x's, a DECIMAL with n digits after the point when
/// n is a constant (0 without n), as MariaDB types them.
fn rounded_type(args: &[Expr], cols: &dyn Fn(usize) -> SqlType) -> SqlType {
    match (args.first().map(|a| a.sql_type(cols)), args.get(1)) {
        (Some(SqlType::Decimal(_)), None) => SqlType::Decimal(0),
        // MariaDB shows n digits (ROUND(1.5, 3) is 1.500); 30 at most here.
        (Some(SqlType::Decimal(_)), Some(Expr::Const(Value::Int(n)))) => {
            SqlType::Decimal(u8::try_from((*n).clamp(0, 30)).unwrap_or(0))
        }
        (Some(SqlType::Int), _) => SqlType::Int,
        (Some(SqlType::Decimal(s)), _) => SqlType::Decimal(s),
        (Some(SqlType::Null), _) | (None, _) => SqlType::Null,
        _ => SqlType::Double,
    }
}

fn unify(types: impl Iterator<Item = SqlType>) -> SqlType {
    let mut out = SqlType::Null;
    for t in types {
        out = match (out, t) {
            (SqlType::Null, t) => t,
            (o, SqlType::Null) => o,
            (a, b) if a == b => a,
            (SqlType::Int, SqlType::Double) | (SqlType::Double, SqlType::Int) => SqlType::Double,
            (SqlType::Decimal(a), SqlType::Decimal(b)) => SqlType::Decimal(a.max(b)),
            (SqlType::Int, SqlType::Decimal(s)) | (SqlType::Decimal(s), SqlType::Int) => {
                SqlType::Decimal(s)
            }
            (SqlType::Double, SqlType::Decimal(_)) | (SqlType::Decimal(_), SqlType::Double) => {
                SqlType::Double
            }
            _ => SqlType::Text,
        };
    }
    out
}

fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

thread_local! {
    static WRITING_VALUES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// While one is alive on a thread, a division by zero there is error 1365 instead of NULL:
/// taken around evaluating the values an INSERT or UPDATE writes, as MariaDB's default
/// strict mode with ERROR_FOR_DIVISION_BY_ZERO does (a SELECT or a WHERE still gets NULL).
pub struct WrittenValues(bool);

impl WrittenValues {
    /// `strict`: division by zero is an error meanwhile (see `strict_division`); false
    /// keeps NULL (INSERT IGNORE, a lenient sql_mode).
    pub fn begin(strict: bool) -> WrittenValues {
        WrittenValues(WRITING_VALUES.with(|w| w.replace(strict)))
    }
}

/// What the session's sql_mode says about values written by INSERT / UPDATE.
#[derive(Clone, Copy, Debug)]
pub struct WriteMode {
    /// STRICT_TRANS_TABLES, STRICT_ALL_TABLES or TRADITIONAL: a value that does not fit its
    /// column is an error (otherwise it is clamped or cut with a warning; see `fit`).
    pub strict: bool,
    /// ERROR_FOR_DIVISION_BY_ZERO with a strict mode (MariaDB's default): a division by
    /// zero in a written value is an error (see `WrittenValues`).
    pub division: bool,
}

/// The session's `WriteMode` (`Env::write_mode`: sessions keep it until a variable changes).
pub fn write_mode(env: &dyn Env) -> WriteMode {
    env.write_mode()
}

/// Whether `foreign_key_checks` is on now (one read of it).
pub fn read_fk_checks(env: &(impl Env + ?Sized)) -> bool {
    !matches!(env.sysvar("foreign_key_checks", None), Ok(Value::Int(0)))
}

/// The `WriteMode` of the current sql_mode (one read of it).
pub fn read_write_mode(env: &(impl Env + ?Sized)) -> WriteMode {
    let mode = env
        .sysvar("sql_mode", None)
        .ok()
        .and_then(|v| to_text(&v).map(|t| String::from_utf8_lossy(&t).to_ascii_uppercase()))
        .unwrap_or_default();
    let strict = mode.contains("STRICT_TRANS_TABLES")
        || mode.contains("STRICT_ALL_TABLES")
        || mode.contains("TRADITIONAL");
    WriteMode {
        strict,
        division: strict && mode.contains("ERROR_FOR_DIVISION_BY_ZERO"),
    }
}

/// Whether the session's sql_mode makes a division by zero in written values an error.
pub fn strict_division(env: &dyn Env) -> bool {
    write_mode(env).division
}

impl Drop for WrittenValues {
    fn drop(&mut self) {
        WRITING_VALUES.with(|w| w.set(self.0));
    }
}

thread_local! {
    /// Warnings raised while evaluating expressions on this thread (the running statement's
    /// `Core::run` takes them: `take_warnings`).
    static EXPR_WARNINGS: std::cell::RefCell<Vec<(u16, Cow<'static, str>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The warnings expressions raised while a statement ran (since the last call), as the
/// session keeps them: a division by zero warns only when the sql_mode has
/// ERROR_FOR_DIVISION_BY_ZERO (as MariaDB; its default mode has it). The mode is read only
/// when there is something to filter.
pub fn statement_warnings(env: &dyn Env) -> Vec<(u16, Cow<'static, str>)> {
    let mut raised = take_warnings();
    if raised.iter().any(|(c, _)| *c == 1365) && !sql_mode_has(env, "ERROR_FOR_DIVISION_BY_ZERO") {
        raised.retain(|(c, _)| *c != 1365);
    }
    raised
}

/// The session's sql_mode names `flag`.
fn sql_mode_has(env: &dyn Env, flag: &str) -> bool {
    env.sysvar("sql_mode", None)
        .ok()
        .and_then(|v| to_text(&v).map(|t| String::from_utf8_lossy(&t).to_ascii_uppercase()))
        .is_some_and(|m| m.contains(flag))
}

/// Minutes east of UTC of a time zone: `SYSTEM` (the server's clock, UTC) or an offset
/// `[+-]H:M` from -12:59 to +13:00. `None` for anything else (named zones need the time zone
/// tables, which tierdb does not have).
fn zone_offset_minutes(v: &Value) -> Option<i64> {
    let t = to_text(v)?;
    let t = std::str::from_utf8(&t).ok()?.trim();
    if t.eq_ignore_ascii_case("SYSTEM") {
        return Some(0);
    }
    let (sign, rest) = match t.as_bytes().first()? {
        b'+' => (1, &t[1..]),
        b'-' => (-1, &t[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    let digits = |t: &str| !t.is_empty() && t.len() <= 4 && t.bytes().all(|c| c.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    let total = sign * (h * 60 + m);
    // MariaDB's range: -12:59 to +13:00.
    (m < 60 && (-(12 * 60 + 59)..=13 * 60).contains(&total)).then_some(total)
}

/// The note of a negative integer cast to UNSIGNED (MariaDB's text, its spelling kept).
pub const CAST_NEGATIVE_NOTE: &str =
    "Cast to unsigned converted negative integer to it's positive complement";

/// MariaDB's `max_error_count`: the most warnings one statement keeps.
pub const MAX_WARNINGS: usize = 64;

pub(crate) fn expr_warning(code: u16, message: impl Into<Cow<'static, str>>) {
    EXPR_WARNINGS.with(|w| {
        let mut w = w.borrow_mut();
        if w.len() < MAX_WARNINGS {
            w.push((code, message.into()));
        }
    });
}

/// How many warnings expressions raised on this thread so far (see `truncate_warnings`).
pub fn warnings_len() -> usize {
    EXPR_WARNINGS.with(|w| w.borrow().len())
}

/// Forgets the expression warnings raised after the first `n` (an evaluation repeated for
/// the same row).
pub fn truncate_warnings(n: usize) {
    EXPR_WARNINGS.with(|w| w.borrow_mut().truncate(n));
}

/// The warnings expressions raised on this thread since the last call (and forgets them).
pub fn take_warnings() -> Vec<(u16, Cow<'static, str>)> {
    EXPR_WARNINGS.with(|w| std::mem::take(&mut *w.borrow_mut()))
}

/// NULL with warning 1365 for a division by zero, or error 1365 while values are written
/// (see `WrittenValues`).
fn divided_by_zero() -> Result<Value, SqlError> {
    if WRITING_VALUES.with(std::cell::Cell::get) {
        Err(SqlError::new(1365, "22012", "Division by 0"))
    } else {
        expr_warning(1365, "Division by 0");
        Ok(Value::Null)
    }
}

fn arith(op: BinOp, l: &Value, r: &Value) -> Result<Value, SqlError> {
    arith_in(op, l, r, false)
}

/// `arith`, with integer results typed unsigned when `unsigned` (see `Expr::Unsigned`) or an
/// operand is above i64::MAX.
fn arith_in(op: BinOp, l: &Value, r: &Value, unsigned: bool) -> Result<Value, SqlError> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    // DIV of DECIMALs (text) is exact; its quotient must fit BIGINT (1690 otherwise).
    if op == BinOp::IntDiv && (matches!(l, Value::Bytes(_)) || matches!(r, Value::Bytes(_))) {
        if let (Some(x), Some(y)) = (Dec::of(l), Dec::of(r)) {
            if let Some(q) = x.checked_div(&y, x.scale()) {
                return match q.truncate(0).integer_value() {
                    Some(v @ Value::Int(_)) => Ok(v),
                    _ => Err(overflow(&format!("{} DIV {}", x.text(), y.text()))),
                };
            }
        }
    }
    // (Text holding an integer stays exact: a DECIMAL value is text too. MariaDB computes a
    // string operand as a double, which differs only past 2^53.)
    let (l, r) = (num(l), num(r));
    if let (Some(x), Some(y)) = (l.as_i128(), r.as_i128()) {
        // Integers compute exactly in i128. As in MariaDB, the result is unsigned when an
        // operand is (here: above i64::MAX) and must then lie in 0 ..= 2^64 - 1, else it is
        // signed and must fit i64; outside, error 1690.
        let unsigned = unsigned
            || matches!(l, Value::UInt(_))
            || (op != BinOp::Mod && matches!(r, Value::UInt(_)));
        let int = |v: Option<i128>, sign: &str| {
            let what = || format!("{x} {sign} {y}");
            match v {
                Some(v) if unsigned && v >= 0 => {
                    Value::from_i128(v).ok_or_else(|| overflow_unsigned(&what()))
                }
                Some(v) if !unsigned => i64::try_from(v)
                    .map(Value::Int)
                    .map_err(|_| overflow(&what())),
                _ if unsigned => Err(overflow_unsigned(&what())),
                _ => Err(overflow(&what())),
            }
        };
        return Ok(match op {
            BinOp::Add => int(x.checked_add(y), "+")?,
            BinOp::Sub => int(x.checked_sub(y), "-")?,
            BinOp::Mul => int(x.checked_mul(y), "*")?,
            BinOp::Div => {
                if y == 0 {
                    divided_by_zero()?
                } else {
                    Value::Double(x as f64 / y as f64)
                }
            }
            BinOp::IntDiv => {
                if y == 0 {
                    divided_by_zero()?
                } else {
                    int(x.checked_div(y), "DIV")?
                }
            }
            BinOp::Mod => {
                if y == 0 {
                    divided_by_zero()?
                } else {
                    int(x.checked_rem(y), "%")?
                }
            }
            _ => Value::Null,
        });
    }
    let x = to_f64(&l).unwrap_or(0.0);
    let y = to_f64(&r).unwrap_or(0.0);
    Ok(match op {
        BinOp::Add => Value::Double(x + y),
        BinOp::Sub => Value::Double(x - y),
        BinOp::Mul => Value::Double(x * y),
        BinOp::Div => {
            if y == 0.0 {
                divided_by_zero()?
            } else {
                Value::Double(x / y)
            }
        }
        BinOp::IntDiv => {
            let q = (x / y).trunc();
            if y == 0.0 {
                divided_by_zero()?
            } else if !(coerce::I64_MIN_F..coerce::I64_END_F).contains(&q) {
                return Err(overflow(&format!("{x} DIV {y}")));
            } else {
                Value::Int(q as i64)
            }
        }
        BinOp::Mod => {
            if y == 0.0 {
                divided_by_zero()?
            } else {
                Value::Double(x % y)
            }
        }
        _ => Value::Null,
    })
}

pub fn cast(v: &Value, to: CastTo) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    match to {
        // Integers keep their 64 bits, as MariaDB reinterprets them (CAST(-1 AS UNSIGNED) is
        // 2^64 - 1, CAST(18446744073709551615 AS SIGNED) is -1); other numbers are rounded
        // and saturate (CAST(-1.5 AS UNSIGNED) is 0).
        CastTo::Signed => Value::Int(match num(v) {
            Value::UInt(u) => u as i64,
            n => to_i64(&n).unwrap_or(0),
        }),
        CastTo::Unsigned => match num(v) {
            Value::Int(i) => {
                if i < 0 {
                    expr_warning(1105, CAST_NEGATIVE_NOTE);
                }
                Value::from_u64(i as u64)
            }
            n @ Value::UInt(_) => n,
            n => {
                let d = to_f64(&n).unwrap_or(0.0).round();
                Value::from_u64(if d.is_nan() || d <= 0.0 {
                    0
                } else if d >= coerce::U64_END_F {
                    u64::MAX
                } else {
                    d as u64
                })
            }
        },
        CastTo::Char | CastTo::Binary => match v {
            Value::Null => Value::Null,
            v => Value::Bytes(to_text(v).map(|c| c.into_owned()).unwrap_or_default()),
        },
        CastTo::Double => Value::Double(to_f64(v).unwrap_or(0.0)),
        // Exact where `Dec` reads the value; else (text that is not a plain number, past
        // Dec's limits) as the double it reads as.
        // A value that is no date compares as the zero date, as MariaDB reads it (with
        // its warning 1292, which tierdb does not raise here).
        CastTo::TemporalOf(fsp) => match v {
            Value::Null => Value::Null,
            v => Value::Bytes(
                coerce::temporal_for_compare(v, fsp)
                    .or_else(|| {
                        coerce::temporal_for_compare(&Value::Bytes(b"0000-00-00".to_vec()), fsp)
                    })
                    .unwrap_or_default(),
            ),
        },
        CastTo::TemporalNumber(fsp) => coerce::temporal_number(v, fsp),
        CastTo::BitNumber => match v {
            Value::Bytes(b) if b.len() <= 8 => {
                Value::from_u64(b.iter().fold(0u64, |n, c| n << 8 | u64::from(*c)))
            }
            // Longer than any BIT value: equal to none (and above every one).
            Value::Bytes(_) => Value::Double(f64::INFINITY),
            other => other.clone(),
        },
        CastTo::Time(fsp) => {
            match crate::time::parse(v).map(|t| (t, crate::time::in_range(t.micros))) {
                // (`TIME(x)`: as many fraction digits as x was written with.)
                Some((t, Ok(m))) => {
                    let fsp = if fsp > 6 { t.digits } else { fsp };
                    Value::Bytes(crate::time::text(m, fsp).into_bytes())
                }
                _ => {
                    let shown = to_text(v).map(|t| String::from_utf8_lossy(&t).into_owned());
                    expr_warning(
                        1292,
                        format!("Incorrect time value: '{}'", shown.unwrap_or_default()),
                    );
                    Value::Null
                }
            }
        }
        // A value that is no time reads as 00:00:00 (MariaDB's with its warning 1292).
        CastTo::TimeMicros => Value::Int(crate::time::parse(v).map_or(0, |t| t.micros)),
        CastTo::TimeKeyed => {
            let micros = crate::time::parse(v).map_or(0, |t| t.micros);
            let mut out = ((micros as u64) ^ (1 << 63)).to_be_bytes().to_vec();
            out.extend_from_slice(&to_text(v).unwrap_or_default());
            Value::Bytes(out)
        }
        CastTo::Unkeyed => match v {
            Value::Bytes(b) => Value::Bytes(b.get(8..).unwrap_or_default().to_vec()),
            other => other.clone(),
        },
        CastTo::TimeNumber(fsp) => match crate::time::parse(v) {
            Some(t) => crate::time::number(t.micros, if fsp > 6 { t.digits } else { fsp }),
            None => v.clone(),
        },
        CastTo::DecimalOrder => Value::Bytes(match Dec::of(v) {
            Some(d) => d.order_bytes(),
            None => Dec::order_bytes_of_double(to_f64(v).unwrap_or(0.0)),
        }),
        CastTo::Decimal { precision, scale } => {
            let text = match v {
                Value::Int(i) => i.to_string(),
                Value::UInt(u) => u.to_string(),
                // DECIMAL text keeps every digit.
                Value::Bytes(b) if Dec::parse(b).is_some() => String::from_utf8_lossy(b).into(),
                other => coerce::decimal_text(to_f64(other).unwrap_or(0.0), scale),
            };
            match coerce::format_decimal(&text, precision, scale) {
                coerce::DecimalResult::Ok(s) => Value::Bytes(s.into_bytes()),
                _ => Value::Null,
            }
        }
        CastTo::Date => coerce::parse_datetime(v, false)
            .map(Value::Bytes)
            .unwrap_or(Value::Null),
        CastTo::DateTime(n) => coerce::parse_temporal(v, Some(n))
            .map(Value::Bytes)
            .unwrap_or(Value::Null),
    }
}

/// The last second a TIMESTAMP holds (2038-01-19 03:14:07 UTC), as MariaDB 10.11.
const TIMESTAMP_MAX_SECS: i64 = 2_147_483_647;

/// A DATE / DATETIME value read from its text (`YYYY-MM-DD[ HH:MM:SS[.ffffff]]`).
struct DateTimeParts {
    y: i64,
    mo: i64,
    d: i64,
    h: i64,
    mi: i64,
    s: i64,
    micros: i64,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

/// The functions `string_func` computes (a binary operand makes them work on bytes).
pub(crate) fn is_string_func(f: Func) -> bool {
    matches!(f, Func::Str(_) | Func::Regex(_))
}

/// Compiled patterns of the thread's recent REGEXP calls (pattern, case-insensitive), so a
/// filter over many rows compiles its pattern once.
type RegexCache = Vec<(Vec<u8>, bool, std::sync::Arc<regex::bytes::Regex>)>;

thread_local! {
    static REGEX_CACHE: std::cell::RefCell<RegexCache> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Pattern `p` compiled (case-insensitive unless `coll` is binary); 1139 naming the
/// problem when it is no valid pattern. The `regex` crate matches in linear time, so no
/// pattern can make a query hang; it has no back-references or look-around (1139 too).
fn compiled_regex(
    p: &[u8],
    coll: Collation,
) -> Result<std::sync::Arc<regex::bytes::Regex>, SqlError> {
    let ci = coll != Collation::Binary;
    if let Some(r) = REGEX_CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(q, qci, _)| q == p && *qci == ci)
            .map(|(_, _, r)| r.clone())
    }) {
        return Ok(r);
    }
    let bad = |m: String| SqlError::new(1139, "42000", format!("Regex error '{m}'"));
    // A binary operand is matched byte by byte: the pattern's other bytes as escapes.
    // (So is a pattern that is no UTF-8 text, such as x'ff'.)
    let unicode = ci && std::str::from_utf8(p).is_ok();
    let text = if unicode {
        String::from_utf8_lossy(p).into_owned()
    } else {
        p.iter()
            .map(|&b| {
                if b.is_ascii() {
                    (b as char).to_string()
                } else {
                    format!("\\x{b:02X}")
                }
            })
            .collect()
    };
    let r = regex::bytes::RegexBuilder::new(&text)
        .case_insensitive(ci)
        .unicode(unicode)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| {
            let m = e.to_string();
            // The crate's message ends with a line naming the problem.
            let last = m.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
            bad(last.trim().trim_start_matches("error: ").to_string())
        })?;
    let r = std::sync::Arc::new(r);
    REGEX_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 16 {
            c.remove(0);
        }
        c.push((p.to_vec(), ci, r.clone()));
    });
    Ok(r)
}

/// MariaDB's replacement text (`\N` names group N, `\\` is a backslash) in the `regex`
/// crate's spelling (`${N}`, `$$` for a dollar).
fn replacement(r: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(r.len());
    let mut i = 0;
    while i < r.len() {
        match r[i] {
            b'$' => out.extend_from_slice(b"$$"),
            b'\\' if i + 1 < r.len() && r[i + 1].is_ascii_digit() => {
                out.extend_from_slice(format!("${{{}}}", r[i + 1] - b'0').as_bytes());
                i += 1;
            }
            b'\\' if i + 1 < r.len() => {
                i += 1;
                if r[i] == b'$' {
                    out.extend_from_slice(b"$$");
                } else {
                    out.push(r[i]);
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The regular-expression functions (NULL when an argument is NULL).
fn regex_func(f: RegexFunc, a: &[Value], coll: Collation) -> Result<Value, SqlError> {
    let null = Value::Null;
    let at = |i: usize| a.get(i).unwrap_or(&null);
    let (Some(s), Some(p)) = (to_text(at(0)), to_text(at(1))) else {
        return Ok(Value::Null);
    };
    let re = compiled_regex(&p, coll)?;
    Ok(match f {
        RegexFunc::Match => Value::Int(i64::from(re.is_match(&s))),
        RegexFunc::Substr => match re.find(&s) {
            Some(m) => Value::Bytes(m.as_bytes().to_vec()),
            None => Value::Bytes(Vec::new()),
        },
        RegexFunc::Instr => match re.find(&s) {
            Some(m) => {
                let before = &s[..m.start()];
                let chars = match std::str::from_utf8(before) {
                    Ok(t) if coll != Collation::Binary => t.chars().count(),
                    _ => before.len(),
                };
                Value::Int(chars as i64 + 1)
            }
            None => Value::Int(0),
        },
        RegexFunc::Replace => {
            let Some(r) = to_text(at(2)) else {
                return Ok(Value::Null);
            };
            // An empty pattern replaces nothing (as MariaDB).
            if p.is_empty() {
                return Ok(Value::Bytes(s.into_owned()));
            }
            let out = re.replace_all(&s, replacement(&r).as_slice());
            if out.len() > MAX_STRING {
                return Ok(Value::Null);
            }
            Value::Bytes(out.into_owned())
        }
    })
}

/// Most bytes a string function builds (MariaDB's default `max_allowed_packet`); past it
/// the result is NULL.
const MAX_STRING: usize = 16 << 20;

/// One character of `a` equals one of `b` under the default collation.
fn same_char(a: char, b: char) -> bool {
    let (mut x, mut y) = ([0u8; 4], [0u8; 4]);
    Collation::GeneralCi.cmp(
        a.encode_utf8(&mut x).as_bytes(),
        b.encode_utf8(&mut y).as_bytes(),
    ) == Ordering::Equal
}

/// Character position (0-based) of `needle` in `hay` at or after `from`, under `coll`.
fn find_chars(hay: &[char], needle: &[char], from: usize, coll: Collation) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    (from..=hay.len() - needle.len()).find(|&i| {
        needle
            .iter()
            .enumerate()
            .all(|(j, c)| same_char_in(hay[i + j], *c, coll))
    })
}

/// `same_char`, or plain equality under the binary collation.
fn same_char_in(a: char, b: char, coll: Collation) -> bool {
    if coll == Collation::Binary {
        a == b
    } else {
        same_char(a, b)
    }
}

/// A string function's text as characters: UTF-8 decoded, or — under the binary collation
/// or for bytes that are not UTF-8 — one character per byte, so such data comes back
/// unchanged through `from_chars`. The flag says which.
fn chars_of(v: &Value, coll: Collation) -> Option<(Vec<char>, bool)> {
    let t = to_text(v)?;
    Some(match std::str::from_utf8(&t) {
        Ok(s) if coll != Collation::Binary => (s.chars().collect(), false),
        _ => (t.iter().map(|&b| char::from(b)).collect(), true),
    })
}

/// The bytes of characters from `chars_of` (`bytes`: they were bytes).
fn from_chars(c: impl IntoIterator<Item = char>, bytes: bool) -> Value {
    if bytes {
        Value::Bytes(c.into_iter().map(|ch| ch as u32 as u8).collect())
    } else {
        Value::Bytes(c.into_iter().collect::<String>().into_bytes())
    }
}

/// The string functions added with REPEAT (arguments evaluated); NULL in → NULL out.
/// `coll`: binary when an operand is a binary string (then INSTR / LOCATE, FIELD,
/// FIND_IN_SET and STRCMP compare bytes and the others work on bytes), else the default.
fn string_func(f: StrFunc, a: &[Value], coll: Collation) -> Value {
    let null = Value::Null;
    let at = |i: usize| a.get(i).unwrap_or(&null);
    // Two texts as characters, both decoded alike (bytes when either is not UTF-8).
    let pair = |x: &Value, y: &Value| -> Option<(Vec<char>, Vec<char>, bool)> {
        let (p, pb) = chars_of(x, coll)?;
        let (q, qb) = chars_of(y, coll)?;
        if pb == qb {
            return Some((p, q, pb));
        }
        Some((
            chars_of(x, Collation::Binary)?.0,
            chars_of(y, Collation::Binary)?.0,
            true,
        ))
    };
    match f {
        StrFunc::Repeat | StrFunc::Space => {
            let (unit, n) = if f == StrFunc::Space {
                (Some(b" ".to_vec()), to_i64(at(0)))
            } else {
                (to_text(at(0)).map(|t| t.into_owned()), to_i64(at(1)))
            };
            let (Some(unit), Some(n)) = (unit, n) else {
                return Value::Null;
            };
            let n = n.max(0) as usize;
            if unit.len().saturating_mul(n) > MAX_STRING {
                return Value::Null;
            }
            Value::Bytes(unit.repeat(n))
        }
        StrFunc::Lpad | StrFunc::Rpad => {
            let (Some((t, pad, bytes)), Some(n)) = (pair(at(0), at(2)), to_i64(at(1))) else {
                return Value::Null;
            };
            let Ok(n) = usize::try_from(n) else {
                return Value::Null;
            };
            if n <= t.len() {
                return from_chars(t[..n].iter().copied(), bytes);
            }
            if pad.is_empty() || n.saturating_mul(4) > MAX_STRING {
                return Value::Null;
            }
            let fill = pad.iter().copied().cycle().take(n - t.len());
            if f == StrFunc::Lpad {
                from_chars(fill.chain(t), bytes)
            } else {
                from_chars(t.into_iter().chain(fill), bytes)
            }
        }
        StrFunc::Reverse => match chars_of(at(0), coll) {
            Some((t, b)) => from_chars(t.into_iter().rev(), b),
            None => Value::Null,
        },
        StrFunc::Instr => {
            let Some((hay, needle, bytes)) = pair(at(0), at(1)) else {
                return Value::Null;
            };
            let coll = if bytes { Collation::Binary } else { coll };
            let from = match a.get(2) {
                None => 1,
                Some(v) => match to_i64(v) {
                    Some(p) => p,
                    None => return Value::Null,
                },
            };
            if from < 1 || from as u64 > hay.len().max(1) as u64 {
                return Value::Int(0);
            }
            match find_chars(&hay, &needle, from as usize - 1, coll) {
                Some(i) => Value::Int(i as i64 + 1),
                None => Value::Int(0),
            }
        }
        StrFunc::SubstringIndex => {
            let (Some(t), Some(d), Some(n)) = (to_text(at(0)), to_text(at(1)), to_i64(at(2)))
            else {
                return Value::Null;
            };
            if d.is_empty() || n == 0 {
                return Value::Bytes(Vec::new());
            }
            // Byte positions of every occurrence (case-sensitive, as MariaDB).
            let mut hits = Vec::new();
            let mut i = 0;
            while i + d.len() <= t.len() {
                if t[i..].starts_with(&d) {
                    hits.push(i);
                    i += d.len();
                } else {
                    i += 1;
                }
            }
            let k = usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX);
            if k > hits.len() {
                return Value::Bytes(t.into_owned());
            }
            if n > 0 {
                Value::Bytes(t[..hits[k - 1]].to_vec())
            } else {
                Value::Bytes(t[hits[hits.len() - k] + d.len()..].to_vec())
            }
        }
        StrFunc::Ltrim | StrFunc::Rtrim => match to_text(at(0)) {
            Some(t) => {
                // A space is one byte in UTF-8 text and binary data alike.
                let start = if f == StrFunc::Ltrim {
                    t.iter().position(|&b| b != b' ').unwrap_or(t.len())
                } else {
                    0
                };
                let end = if f == StrFunc::Rtrim {
                    t.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1)
                } else {
                    t.len()
                };
                Value::Bytes(t[start..end.max(start)].to_vec())
            }
            None => Value::Null,
        },
        StrFunc::TrimLeading | StrFunc::TrimTrailing | StrFunc::TrimBoth => {
            let (Some(t), Some(r)) = (to_text(at(0)), to_text(at(1))) else {
                return Value::Null;
            };
            let (mut start, mut end) = (0, t.len());
            if !r.is_empty() {
                if f != StrFunc::TrimTrailing {
                    while t[start..end].starts_with(&r) {
                        start += r.len();
                    }
                }
                if f != StrFunc::TrimLeading {
                    while t[start..end].ends_with(&r) {
                        end -= r.len();
                    }
                }
            }
            Value::Bytes(t[start..end].to_vec())
        }
        StrFunc::Ascii => match to_text(at(0)) {
            Some(t) => Value::Int(t.first().copied().map_or(0, i64::from)),
            None => Value::Null,
        },
        StrFunc::Hex => match at(0) {
            Value::Null => Value::Null,
            Value::Int(i) => Value::Bytes(format!("{:X}", *i as u64).into_bytes()),
            Value::UInt(u) => Value::Bytes(format!("{u:X}").into_bytes()),
            Value::Double(d) => {
                // As MariaDB: through an unsigned 64-bit integer, values outside its range
                // (or below i64's) clamped to all ones.
                let r = d.round();
                let u = if !(-9.223_372_036_854_776e18..1.844_674_407_370_955_2e19).contains(&r) {
                    u64::MAX
                } else if r < 0.0 {
                    r as i64 as u64
                } else {
                    r as u64
                };
                Value::Bytes(format!("{u:X}").into_bytes())
            }
            v => match to_text(v) {
                Some(t) => Value::Bytes(
                    t.iter()
                        .map(|b| format!("{b:02X}"))
                        .collect::<String>()
                        .into_bytes(),
                ),
                None => Value::Null,
            },
        },
        StrFunc::Field => {
            let x = at(0);
            if x.is_null() {
                return Value::Int(0);
            }
            let pos = a[1..]
                .iter()
                .position(|v| compare_in(x, v, coll) == Some(Ordering::Equal));
            Value::Int(pos.map_or(0, |p| p as i64 + 1))
        }
        StrFunc::FindInSet => {
            let Some((s, list, bytes)) = pair(at(0), at(1)) else {
                return Value::Null;
            };
            let coll = if bytes { Collation::Binary } else { coll };
            if s.contains(&',') || list.is_empty() {
                return Value::Int(0);
            }
            let pos = list.split(|c| *c == ',').position(|item| {
                item.len() == s.len()
                    && item.iter().zip(&s).all(|(a, b)| same_char_in(*a, *b, coll))
            });
            Value::Int(pos.map_or(0, |p| p as i64 + 1))
        }
        StrFunc::Strcmp => {
            let (Some(x), Some(y)) = (to_text(at(0)), to_text(at(1))) else {
                return Value::Null;
            };
            Value::Int(match coll.cmp(&x, &y) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            })
        }
    }
}

/// The math functions added with POW (arguments evaluated): a double; NULL for NULL input
/// or a square root / logarithm outside its domain; 1690 for a POW or EXP result that is no
/// finite number (as MariaDB).
fn math_func(f: Func, a: &[Value]) -> Result<Value, SqlError> {
    let x = match a.first().and_then(coerce::to_f64) {
        Some(x) => x,
        None => return Ok(Value::Null),
    };
    let finite = |r: f64, name: &str| {
        if r.is_finite() {
            Ok(Value::Double(r))
        } else {
            Err(SqlError::new(
                1690,
                "22003",
                format!("DOUBLE value is out of range in '{name}'"),
            ))
        }
    };
    let r = match f {
        Func::Sign => {
            return Ok(Value::Int(if x > 0.0 {
                1
            } else if x < 0.0 {
                -1
            } else {
                0
            }))
        }
        Func::Pow => {
            return match a.get(1).and_then(coerce::to_f64) {
                Some(y) => finite(x.powf(y), "pow"),
                None => Ok(Value::Null),
            }
        }
        Func::Exp => return finite(x.exp(), "exp"),
        Func::Sqrt => x.sqrt(),
        Func::Ln => x.ln(),
        Func::Log => match a.get(1) {
            // LOG(base, x)
            Some(v) => match coerce::to_f64(v) {
                Some(y) if x > 0.0 && x != 1.0 && y > 0.0 => y.ln() / x.ln(),
                _ => return Ok(Value::Null),
            },
            None => x.ln(),
        },
        Func::Log10 => x.log10(),
        Func::Log2 => x.log2(),
        _ => return Ok(Value::Null),
    };
    let log = matches!(f, Func::Ln | Func::Log | Func::Log10 | Func::Log2);
    Ok(if r.is_finite() && !(log && x <= 0.0) {
        Value::Double(r)
    } else {
        Value::Null
    })
}

impl DateTimeParts {
    /// DAYOFWEEK, WEEKDAY, DAYNAME, MONTHNAME, DAYOFYEAR, QUARTER, LAST_DAY, TO_DAYS of this
    /// date (NULL where a zero month or day makes it no day).
    fn calendar(&self, f: Func) -> Value {
        let no_day = self.mo == 0 || self.d == 0;
        // 0 = Monday (1970-01-01 was a Thursday).
        let wd = (self.days() + 3).rem_euclid(7);
        match f {
            Func::Quarter => Value::Int((self.mo + 2) / 3),
            Func::MonthName if self.mo > 0 => {
                Value::Bytes(MONTHS[(self.mo - 1) as usize].as_bytes().to_vec())
            }
            Func::LastDay if self.mo > 0 => {
                let next = if self.mo == 12 {
                    DateTimeParts {
                        y: self.y + 1,
                        mo: 1,
                        d: 1,
                        ..*self
                    }
                } else {
                    DateTimeParts {
                        mo: self.mo + 1,
                        d: 1,
                        ..*self
                    }
                };
                let last = next.days() - DateTimeParts { d: 1, ..*self }.days();
                Value::Bytes(format!("{:04}-{:02}-{:02}", self.y, self.mo, last).into_bytes())
            }
            _ if no_day => Value::Null,
            Func::DayOfWeek => Value::Int((wd + 1) % 7 + 1),
            Func::Weekday => Value::Int(wd),
            Func::DayName => Value::Bytes(WEEKDAYS[wd as usize].as_bytes().to_vec()),
            Func::DayOfYear => Value::Int(
                self.days()
                    - DateTimeParts {
                        mo: 1,
                        d: 1,
                        ..*self
                    }
                    .days()
                    + 1,
            ),
            Func::ToDays => Value::Int(self.days() + 719_528),
            _ => Value::Null,
        }
    }

    fn parse(t: &[u8]) -> Option<DateTimeParts> {
        let t = std::str::from_utf8(t).ok()?.trim();
        let (date, time) = match t.split_once([' ', 'T']) {
            Some((d, tm)) => (d, Some(tm)),
            None => (t, None),
        };
        let mut dp = date.split('-').map(|x| x.parse::<i64>().ok());
        let (y, mo, d) = (dp.next()??, dp.next()??, dp.next()??);
        if dp.next().is_some()
            || !(0..=9999).contains(&y)
            || !(0..=12).contains(&mo)
            || !(0..=31).contains(&d)
        {
            return None;
        }
        let (mut h, mut mi, mut s, mut micros) = (0, 0, 0, 0);
        if let Some(tm) = time {
            let (hms, frac) = tm.split_once('.').unwrap_or((tm, ""));
            let mut tp = hms.split(':').map(|x| x.parse::<i64>().ok());
            h = tp.next()??;
            mi = tp.next().flatten().unwrap_or(0);
            s = tp.next().flatten().unwrap_or(0);
            if !frac.is_empty() {
                let digits: String = frac.chars().take(6).collect();
                micros = format!("{digits:0<6}").parse().ok()?;
            }
            if !(0..=838).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&s) {
                return None;
            }
        }
        Some(DateTimeParts {
            y,
            mo,
            d,
            h,
            mi,
            s,
            micros,
        })
    }

    /// Days since 1970-01-01 (proleptic Gregorian).
    fn days(&self) -> i64 {
        let y = if self.mo <= 2 { self.y - 1 } else { self.y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let m = self.mo;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + self.d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146097 + doe - 719468
    }

    /// Microseconds since 1970-01-01 00:00:00.
    fn epoch_micros(&self) -> i64 {
        ((self.days() * 86_400 + self.h * 3600 + self.mi * 60 + self.s) * 1_000_000) + self.micros
    }

    fn from_epoch_micros(us: i64) -> DateTimeParts {
        let (y, mo, d, h, mi, s) = coerce::civil_from_unix(us.div_euclid(1_000_000));
        DateTimeParts {
            y,
            mo: i64::from(mo),
            d: i64::from(d),
            h: i64::from(h),
            mi: i64::from(mi),
            s: i64::from(s),
            micros: us.rem_euclid(1_000_000),
        }
    }

    /// `YYYY-MM-DD`, or with the time (and microseconds when there are any).
    fn text(&self, with_time: bool) -> String {
        let mut out = format!("{:04}-{:02}-{:02}", self.y, self.mo, self.d);
        if with_time {
            out.push_str(&format!(" {:02}:{:02}:{:02}", self.h, self.mi, self.s));
            if self.micros != 0 {
                out.push_str(&format!(".{:06}", self.micros));
            }
        }
        out
    }

    /// A date or datetime argument of the date arithmetic functions (any form
    /// `coerce::parse_datetime` reads, also numbers), and whether it had a time part. None
    /// for NULL, text that is not a valid date, and the zero date.
    fn argument(v: &Value) -> Option<(DateTimeParts, bool)> {
        let canon = coerce::parse_datetime(v, true)?;
        let mut p = DateTimeParts::parse(&canon)?;
        if p.mo == 0 || p.d == 0 {
            return None;
        }
        let text = to_text(v)?;
        let t = std::str::from_utf8(&text).ok()?.trim();
        let has_time = match v {
            Value::Bytes(_) => t.contains([' ', 'T']),
            _ => t.split('.').next().unwrap_or("").len() > 8,
        };
        if let (true, Some((_, frac))) = (has_time, t.split_once('.')) {
            let digits: String = frac.chars().take(6).collect();
            if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
                p.micros = format!("{digits:0<6}").parse().ok()?;
            }
        }
        Some((p, has_time))
    }

    /// This date moved by `n` units (None when it leaves years 0–9999 or overflows).
    fn plus(&self, n: i64, unit: IntervalUnit) -> Option<DateTimeParts> {
        let out = match unit.months() {
            Some(k) => {
                let total = (self.y * 12 + self.mo - 1).checked_add(n.checked_mul(k)?)?;
                let (y, mo) = (total.div_euclid(12), total.rem_euclid(12) + 1);
                let last = i64::from(coerce::days_in_month(
                    u32::try_from(y).ok()?,
                    u32::try_from(mo).ok()?,
                ));
                DateTimeParts {
                    y,
                    mo,
                    d: self.d.min(last),
                    ..*self
                }
            }
            None => DateTimeParts::from_epoch_micros(
                self.epoch_micros()
                    .checked_add(n.checked_mul(unit.micros())?)?,
            ),
        };
        (0..=9999).contains(&out.y).then_some(out)
    }

    /// Whole `unit`s from `self` to `later` (negative when it is earlier), as TIMESTAMPDIFF.
    fn units_until(&self, later: &DateTimeParts, unit: IntervalUnit) -> i64 {
        match unit.months() {
            Some(k) => {
                let months = (later.y * 12 + later.mo) - (self.y * 12 + self.mo);
                // The rest of each timestamp within its month decides a partial month.
                let rest = |p: &DateTimeParts| p.epoch_micros() - (p.days() - p.d) * 86_400_000_000;
                let months = if months > 0 && rest(later) < rest(self) {
                    months - 1
                } else if months < 0 && rest(later) > rest(self) {
                    months + 1
                } else {
                    months
                };
                months / k
            }
            None => (later.epoch_micros() - self.epoch_micros()) / unit.micros(),
        }
    }

    /// MySQL DATE_FORMAT.
    fn format(&self, fmt: &[u8]) -> String {
        let month = |full: bool| {
            let name = usize::try_from(self.mo - 1)
                .ok()
                .and_then(|i| MONTHS.get(i))
                .copied()
                .unwrap_or("");
            if full {
                name.to_string()
            } else {
                name.chars().take(3).collect()
            }
        };
        // 0 = Monday (1970-01-01 was a Thursday).
        let wd = (self.days() + 3).rem_euclid(7) as usize;
        let h12 = if self.h % 12 == 0 { 12 } else { self.h % 12 };
        let ampm = if self.h % 24 < 12 { "AM" } else { "PM" };
        let yday = self.days()
            - DateTimeParts {
                mo: 1,
                d: 1,
                ..*self
            }
            .days()
            + 1;
        let mut out = String::new();
        let mut it = fmt.iter();
        while let Some(&c) = it.next() {
            if c != b'%' {
                out.push(c as char);
                continue;
            }
            let Some(&k) = it.next() else { break };
            match k {
                b'Y' => out += &format!("{:04}", self.y),
                b'y' => out += &format!("{:02}", self.y % 100),
                b'm' => out += &format!("{:02}", self.mo),
                b'c' => out += &self.mo.to_string(),
                b'M' => out += &month(true),
                b'b' => out += &month(false),
                b'd' => out += &format!("{:02}", self.d),
                b'e' => out += &self.d.to_string(),
                b'D' => {
                    let suffix = match (self.d % 10, self.d % 100) {
                        (_, 11..=13) => "th",
                        (1, _) => "st",
                        (2, _) => "nd",
                        (3, _) => "rd",
                        _ => "th",
                    };
                    out += &format!("{}{suffix}", self.d);
                }
                b'H' => out += &format!("{:02}", self.h),
                b'k' => out += &self.h.to_string(),
                b'h' | b'I' => out += &format!("{h12:02}"),
                b'l' => out += &h12.to_string(),
                b'i' => out += &format!("{:02}", self.mi),
                b's' | b'S' => out += &format!("{:02}", self.s),
                b'f' => out += &format!("{:06}", self.micros),
                b'p' => out += ampm,
                b'T' => out += &format!("{:02}:{:02}:{:02}", self.h, self.mi, self.s),
                b'r' => out += &format!("{h12:02}:{:02}:{:02} {ampm}", self.mi, self.s),
                b'W' => out += WEEKDAYS[wd],
                b'a' => out += &WEEKDAYS[wd][..3],
                b'w' => out += &((wd + 1) % 7).to_string(),
                b'j' => out += &format!("{yday:03}"),
                other => out.push(other as char),
            }
        }
        out
    }
}

/// Every argument evaluated, for the functions that take them all as values.
fn eval_args(args: &[Expr], row: &[Value], cx: &EvalCx) -> Result<Vec<Value>, SqlError> {
    args.iter()
        .map(|e| e.eval(row, cx).map(|v| v.into_owned()))
        .collect()
}

fn eval_func(f: Func, args: &[Expr], row: &[Value], cx: &EvalCx) -> Result<Value, SqlError> {
    let arg = |i: usize| -> Result<Value, SqlError> {
        match args.get(i) {
            Some(e) => Ok(e.eval(row, cx)?.into_owned()),
            None => Ok(Value::Null),
        }
    };
    Ok(match f {
        Func::Concat => {
            let mut out = Vec::new();
            for e in args {
                let v = e.eval(row, cx)?;
                match to_text(&v) {
                    Some(t) => out.extend_from_slice(&t),
                    None => return Ok(Value::Null),
                }
                if out.len() > MAX_STRING {
                    return Ok(Value::Null);
                }
            }
            Value::Bytes(out)
        }
        Func::ConcatWs => {
            let sep = arg(0)?;
            let Some(sep) = to_text(&sep).map(|c| c.into_owned()) else {
                return Ok(Value::Null);
            };
            let mut out = Vec::new();
            let mut first = true;
            for e in args.iter().skip(1) {
                let v = e.eval(row, cx)?;
                if let Some(t) = to_text(&v) {
                    if !first {
                        out.extend_from_slice(&sep);
                    }
                    out.extend_from_slice(&t);
                    first = false;
                }
            }
            Value::Bytes(out)
        }
        Func::Coalesce => {
            for e in args {
                let v = e.eval(row, cx)?;
                if !v.is_null() {
                    return Ok(v.into_owned());
                }
            }
            Value::Null
        }
        Func::IfNull => {
            let a = arg(0)?;
            if a.is_null() {
                arg(1)?
            } else {
                a
            }
        }
        Func::NullIf => {
            let a = arg(0)?;
            let b = arg(1)?;
            if compare(&a, &b) == Some(Ordering::Equal) {
                Value::Null
            } else {
                a
            }
        }
        Func::If => {
            if truthy(&arg(0)?).unwrap_or(false) {
                arg(1)?
            } else {
                arg(2)?
            }
        }
        Func::Length => match to_text(&arg(0)?) {
            Some(t) => Value::Int(t.len() as i64),
            None => Value::Null,
        },
        Func::CharLength => match to_text(&arg(0)?) {
            Some(t) => Value::Int(String::from_utf8_lossy(&t).chars().count() as i64),
            None => Value::Null,
        },
        Func::Upper | Func::Lower => match to_text(&arg(0)?) {
            Some(t) => {
                let s = String::from_utf8_lossy(&t);
                Value::Bytes(
                    if f == Func::Upper {
                        s.to_uppercase()
                    } else {
                        s.to_lowercase()
                    }
                    .into_bytes(),
                )
            }
            None => Value::Null,
        },
        Func::Abs | Func::Floor | Func::Ceil => {
            let x = arg(0)?;
            // DECIMAL text keeps every digit.
            if let Some(d) = Dec::of_text(&x) {
                return Ok(match f {
                    Func::Abs => d.abs().into_value(),
                    _ => d.integral(f == Func::Ceil).into_integer_value(),
                });
            }
            match (f, num(&x)) {
                (Func::Abs, Value::Int(i)) => {
                    Value::Int(i.checked_abs().ok_or_else(|| overflow("abs"))?)
                }
                (Func::Abs, v @ Value::UInt(_)) => v,
                (Func::Abs, Value::Double(d)) => Value::Double(d.abs()),
                (_, v @ (Value::Int(_) | Value::UInt(_))) => v,
                (_, Value::Double(d)) => {
                    Value::Int(coerce::round_f64_to_i64(if f == Func::Floor {
                        d.floor()
                    } else {
                        d.ceil()
                    }))
                }
                _ => Value::Null,
            }
        }
        Func::Round => {
            let places = to_i64(&arg(1)?).unwrap_or(0).clamp(-30, 30);
            let x = arg(0)?;
            // DECIMAL text rounds exactly (every digit kept, half away from zero).
            if let Some(d) = Dec::of_text(&x).and_then(|d| d.round_places(places as i32)) {
                return Ok(d.into_value());
            }
            match num(&x) {
                v @ (Value::Int(_) | Value::UInt(_)) if places >= 0 => v,
                Value::Null => Value::Null,
                v => {
                    let d = to_f64(&v).unwrap_or(0.0);
                    let m = 10f64.powi(places as i32);
                    let r = (d * m).round() / m;
                    if matches!(v, Value::Int(_)) {
                        Value::Int(coerce::round_f64_to_i64(r))
                    } else {
                        Value::Double(r)
                    }
                }
            }
        }
        Func::Greatest | Func::Least => {
            let mut best: Option<Value> = None;
            for e in args {
                let v = e.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let take = match &best {
                    None => true,
                    Some(b) => {
                        let o = compare(&v, b).unwrap_or(Ordering::Equal);
                        if f == Func::Greatest {
                            o == Ordering::Greater
                        } else {
                            o == Ordering::Less
                        }
                    }
                };
                if take {
                    best = Some(v.into_owned());
                }
            }
            best.unwrap_or(Value::Null)
        }
        Func::Substring => {
            let s = arg(0)?;
            let Some(t) = to_text(&s) else {
                return Ok(Value::Null);
            };
            let chars: Vec<char> = String::from_utf8_lossy(&t).chars().collect();
            let pos = to_i64(&arg(1)?).unwrap_or(1);
            let len = if args.len() > 2 {
                to_i64(&arg(2)?).unwrap_or(0)
            } else {
                i64::MAX
            };
            let n = chars.len() as i64;
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                n
            };
            if start < 0 || start >= n || len <= 0 {
                Value::Bytes(Vec::new())
            } else {
                let end = start.saturating_add(len).min(n);
                Value::Bytes(
                    chars[start as usize..end as usize]
                        .iter()
                        .collect::<String>()
                        .into_bytes(),
                )
            }
        }
        Func::Trim => match to_text(&arg(0)?) {
            Some(t) => Value::Bytes(
                String::from_utf8_lossy(&t)
                    .trim_matches(' ')
                    .as_bytes()
                    .to_vec(),
            ),
            None => Value::Null,
        },
        Func::Replace => {
            let (Some(t), Some(from), Some(to)) = (
                to_text(&arg(0)?).map(|c| c.into_owned()),
                to_text(&arg(1)?).map(|c| c.into_owned()),
                to_text(&arg(2)?).map(|c| c.into_owned()),
            ) else {
                return Ok(Value::Null);
            };
            if from.is_empty() {
                return Ok(Value::Bytes(t));
            }
            let mut out = Vec::with_capacity(t.len());
            let mut i = 0;
            while i < t.len() {
                if t[i..].starts_with(&from) {
                    out.extend_from_slice(&to);
                    i += from.len();
                    if out.len() > MAX_STRING {
                        return Ok(Value::Null);
                    }
                } else {
                    out.push(t[i]);
                    i += 1;
                }
            }
            Value::Bytes(out)
        }
        Func::Str(g) => {
            let vals = eval_args(args, row, cx)?;
            string_func(g, &vals, Collation::GeneralCi)
        }
        Func::Pow
        | Func::Sqrt
        | Func::Sign
        | Func::Exp
        | Func::Ln
        | Func::Log
        | Func::Log10
        | Func::Log2 => {
            let vals = eval_args(args, row, cx)?;
            math_func(f, &vals)?
        }
        Func::Left | Func::Right => {
            let (Some(t), Some(n)) = (to_text(&arg(0)?).map(|c| c.into_owned()), to_i64(&arg(1)?))
            else {
                return Ok(Value::Null);
            };
            let chars: Vec<char> = String::from_utf8_lossy(&t).chars().collect();
            let n = (n.max(0) as usize).min(chars.len());
            let part = if f == Func::Left {
                &chars[..n]
            } else {
                &chars[chars.len() - n..]
            };
            Value::Bytes(part.iter().collect::<String>().into_bytes())
        }
        Func::DatePart
        | Func::Year
        | Func::Month
        | Func::Day
        | Func::Hour
        | Func::Minute
        | Func::Second
        | Func::Microsecond
        | Func::DateFormat
        | Func::DayOfWeek
        | Func::Weekday
        | Func::DayName
        | Func::MonthName
        | Func::DayOfYear
        | Func::Quarter
        | Func::LastDay
        | Func::ToDays => {
            let v0 = arg(0)?;
            let d = to_text(&v0).and_then(|t| DateTimeParts::parse(&t));
            // A TIME's parts (HOUR('100:00:00') is 100; the sign is dropped).
            if let (None, Func::Hour | Func::Minute | Func::Second | Func::Microsecond) = (&d, f) {
                let Some(t) = crate::time::parse(&v0) else {
                    return Ok(Value::Null);
                };
                let abs = t.micros.unsigned_abs() as i64;
                let secs = abs / 1_000_000;
                return Ok(Value::Int(match f {
                    Func::Hour => secs / 3600,
                    Func::Minute => secs / 60 % 60,
                    Func::Second => secs % 60,
                    _ => abs % 1_000_000,
                }));
            }
            let Some(d) = d else {
                return Ok(Value::Null);
            };
            match f {
                Func::DatePart => {
                    Value::Bytes(format!("{:04}-{:02}-{:02}", d.y, d.mo, d.d).into_bytes())
                }
                Func::Year => Value::Int(d.y),
                Func::Month => Value::Int(d.mo),
                Func::Day => Value::Int(d.d),
                Func::Hour => Value::Int(d.h),
                Func::Minute => Value::Int(d.mi),
                Func::Second => Value::Int(d.s),
                Func::Microsecond => Value::Int(d.micros),
                Func::DateFormat => match to_text(&arg(1)?) {
                    Some(fmt) => Value::Bytes(d.format(&fmt).into_bytes()),
                    None => Value::Null,
                },
                _ => d.calendar(f),
            }
        }
        Func::DateAdd => {
            let (Some((p, has_time)), Some(unit)) = (
                DateTimeParts::argument(&arg(0)?),
                IntervalUnit::of(&arg(2)?),
            ) else {
                return Ok(Value::Null);
            };
            // A fractional amount is rounded, as MySQL does ('1.5 HOUR' is 2 hours).
            let n = match arg(1)? {
                Value::Null => return Ok(Value::Null),
                Value::Int(i) => i,
                other => match to_f64(&other) {
                    Some(f) if f.is_finite() && f.abs() < 9.0e18 => f.round() as i64,
                    _ => return Ok(Value::Null),
                },
            };
            match p.plus(n, unit) {
                Some(out) => Value::Bytes(out.text(has_time || !unit.keeps_dates()).into_bytes()),
                None => Value::Null,
            }
        }
        Func::ConvertTz => {
            let (Some((p, _)), Some(from), Some(to)) = (
                DateTimeParts::argument(&arg(0)?),
                zone_offset_minutes(&arg(1)?),
                zone_offset_minutes(&arg(2)?),
            ) else {
                return Ok(Value::Null);
            };
            // A time outside TIMESTAMP's range (as UTC) is returned as it is, as MariaDB.
            let in_range = p.plus(-from, IntervalUnit::Minute).is_some_and(|u| {
                (0..=TIMESTAMP_MAX_SECS * 1_000_000 + 999_999).contains(&u.epoch_micros())
            });
            if !in_range {
                return Ok(Value::Bytes(p.text(true).into_bytes()));
            }
            match p.plus(to - from, IntervalUnit::Minute) {
                Some(out) => Value::Bytes(out.text(true).into_bytes()),
                None => Value::Null,
            }
        }
        Func::DateDiff => {
            let (Some((a, _)), Some((b, _))) = (
                DateTimeParts::argument(&arg(0)?),
                DateTimeParts::argument(&arg(1)?),
            ) else {
                return Ok(Value::Null);
            };
            Value::Int(a.days() - b.days())
        }
        Func::TimestampDiff => {
            let (Some(unit), Some((a, _)), Some((b, _))) = (
                IntervalUnit::of(&arg(0)?),
                DateTimeParts::argument(&arg(1)?),
                DateTimeParts::argument(&arg(2)?),
            ) else {
                return Ok(Value::Null);
            };
            Value::Int(a.units_until(&b, unit))
        }
        Func::Now => {
            let fsp = match args.first() {
                Some(_) => to_i64(&arg(0)?).unwrap_or(0).clamp(0, 6) as u8,
                None => 0,
            };
            Value::Bytes(coerce::now_text(fsp).into_bytes())
        }
        Func::CurDate => Value::Bytes(coerce::now_text(0).as_bytes()[..10].to_vec()),
        Func::UnixTimestamp if args.is_empty() => Value::Int(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0),
        ),
        // A date (read as UTC, the server's clock) as seconds since the epoch; NULL outside
        // the TIMESTAMP range, as MariaDB.
        Func::UnixTimestamp => match DateTimeParts::argument(&arg(0)?) {
            Some((p, _)) => {
                let us = p.epoch_micros();
                if !(0..=TIMESTAMP_MAX_SECS * 1_000_000 + 999_999).contains(&us) {
                    Value::Null
                } else if us % 1_000_000 == 0 {
                    Value::Int(us / 1_000_000)
                } else {
                    Value::Double(us as f64 / 1e6)
                }
            }
            None => Value::Null,
        },
        Func::FromUnixtime => {
            let v = arg(0)?;
            let us = match &v {
                Value::Null => return Ok(Value::Null),
                Value::Int(i) => i.checked_mul(1_000_000),
                other => to_f64(other)
                    .filter(|f| f.is_finite() && f.abs() < 1e15)
                    .map(|f| (f * 1e6).round() as i64),
            };
            let Some(us) =
                us.filter(|u| (0..=TIMESTAMP_MAX_SECS * 1_000_000 + 999_999).contains(u))
            else {
                return Ok(Value::Null);
            };
            let d = DateTimeParts::from_epoch_micros(us);
            if args.len() > 1 {
                match to_text(&arg(1)?) {
                    Some(fmt) => Value::Bytes(d.format(&fmt).into_bytes()),
                    None => Value::Null,
                }
            } else {
                Value::Bytes(d.text(true).into_bytes())
            }
        }
        Func::Regex(g) => regex_func(g, &eval_args(args, row, cx)?, Collation::GeneralCi)?,
        Func::Misc(m) => crate::funcs::eval(m, &eval_args(args, row, cx)?)?,
        Func::UserLock(u) => cx.env.user_lock(u, &eval_args(args, row, cx)?)?,
        Func::LoadFile => {
            let a = eval_args(args, row, cx)?;
            match a.first().and_then(crate::coerce::to_text) {
                Some(path) => cx.env.load_file(&String::from_utf8_lossy(&path)),
                None => Value::Null,
            }
        }
        Func::BinlogGtidPos => {
            let a = eval_args(args, row, cx)?;
            let file = a.first().and_then(crate::coerce::to_text);
            let pos = a.get(1).and_then(crate::coerce::to_i64);
            match (file, pos) {
                (Some(f), Some(p)) if p >= 0 => {
                    match cx
                        .env
                        .binlog_gtid_pos(&String::from_utf8_lossy(&f), p as u64)
                    {
                        Some(g) => Value::Bytes(g.into_bytes()),
                        None => Value::Null,
                    }
                }
                _ => Value::Null,
            }
        }
        Func::Json(j) => {
            let made_by_json: Vec<bool> = args
                .iter()
                .map(|e| matches!(e, Expr::Func(Func::Json(k), _) if k.makes_json()))
                .collect();
            crate::json::eval(j, &eval_args(args, row, cx)?, &made_by_json)?
        }
        Func::Database => match cx.env.current_db() {
            Some(d) => Value::Bytes(d.as_bytes().to_vec()),
            None => Value::Null,
        },
        Func::User => Value::Bytes(cx.env.user().into_bytes()),
        Func::CurrentUser => Value::Bytes(cx.env.current_user().into_bytes()),
        Func::Version => Value::Bytes(cx.env.version().into_bytes()),
        Func::ConnectionId => Value::Int(i64::from(cx.env.connection_id())),
        Func::LastInsertId => Value::Int(cx.env.last_insert_id() as i64),
        Func::RowCount => Value::Int(cx.env.row_count()),
        Func::FoundRows => Value::Int(cx.env.found_rows() as i64),
    })
}

/// SQL LIKE with `%`, `_` and an escape byte; `_` matches one UTF-8 character. Linear-time
/// backtracking over the last `%` (no exponential blow-up).
pub fn like_match(text: &[u8], pattern: &[u8], escape: u8) -> bool {
    // Tokenize the pattern: Some(b) literal byte, None for '_', and a marker for '%'.
    #[derive(Clone, Copy, PartialEq)]
    enum P {
        Lit(u8),
        One,
        Any,
    }
    let mut pat = Vec::with_capacity(pattern.len());
    let mut i = 0;
    while i < pattern.len() {
        let c = pattern[i];
        if c == escape && i + 1 < pattern.len() {
            pat.push(P::Lit(pattern[i + 1]));
            i += 2;
            continue;
        }
        pat.push(match c {
            b'%' => P::Any,
            b'_' => P::One,
            c => P::Lit(c),
        });
        i += 1;
    }
    let char_len = |t: &[u8], at: usize| -> usize {
        let b = t[at];
        let n = if b < 0x80 {
            1
        } else if b >= 0xF0 {
            4
        } else if b >= 0xE0 {
            3
        } else if b >= 0xC0 {
            2
        } else {
            1
        };
        n.min(t.len() - at)
    };
    let (mut t, mut p) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pat.len() {
            match pat[p] {
                P::Any => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                P::One => {
                    t += char_len(text, t);
                    p += 1;
                    continue;
                }
                P::Lit(c) if c == text[t] => {
                    t += 1;
                    p += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                let nt = st + char_len(text, st);
                star = Some((sp, nt));
                p = sp + 1;
                t = nt;
            }
            None => return false,
        }
    }
    while p < pat.len() && pat[p] == P::Any {
        p += 1;
    }
    p == pat.len()
}

#[cfg(test)]
mod tests {
    use super::{like_match, string_func, Collation, DateTimeParts, Func, IntervalUnit, StrFunc};
    use proptest::prelude::*;
    use tierdb_engine::Value;

    #[test]
    fn pow_and_exp_out_of_range_are_errors_and_roots_of_negatives_null() {
        let d = Value::Double;
        for (f, args) in [
            (Func::Pow, vec![d(0.0), d(-1.0)]),
            (Func::Pow, vec![d(10.0), d(400.0)]),
            (Func::Exp, vec![d(710.0)]),
        ] {
            let e = super::math_func(f, &args).expect_err("out of range");
            assert_eq!(e.code, 1690);
        }
        assert_eq!(
            super::math_func(Func::Sqrt, &[d(-4.0)]).ok(),
            Some(Value::Null)
        );
        assert_eq!(
            super::math_func(Func::Ln, &[d(0.0)]).ok(),
            Some(Value::Null)
        );
        assert_eq!(
            super::math_func(Func::Pow, &[d(2.0), d(3.0)]).ok(),
            Some(d(8.0))
        );
    }

    #[test]
    fn string_results_past_sixteen_mebibytes_are_null() {
        let b = |t: &str| Value::Bytes(t.as_bytes().to_vec());
        assert_eq!(
            string_func(
                StrFunc::Repeat,
                &[b("ab"), Value::Int(10_000_000)],
                Collation::GeneralCi
            ),
            Value::Null
        );
        assert_eq!(
            string_func(
                StrFunc::Lpad,
                &[b("a"), Value::Int(i64::MAX), b("x")],
                Collation::GeneralCi
            ),
            Value::Null
        );
        assert_eq!(
            string_func(
                StrFunc::Space,
                &[Value::Int(20_000_000)],
                Collation::GeneralCi
            ),
            Value::Null
        );
        assert_eq!(
            string_func(
                StrFunc::Repeat,
                &[b("ab"), Value::Int(3)],
                Collation::GeneralCi
            ),
            b("ababab")
        );
    }

    fn parts(days: i64, secs: i64) -> DateTimeParts {
        DateTimeParts::from_epoch_micros((days * 86_400 + secs) * 1_000_000)
    }

    proptest! {
        #[test]
        fn fixed_units_go_there_and_back_and_count_back(
            days in -700_000i64..2_900_000,
            secs in 0i64..86_400,
            n in -100_000i64..100_000,
            u in 0usize..6,
        ) {
            let unit = IntervalUnit::ALL[u];
            let p = parts(days, secs);
            if let Some(q) = p.plus(n, unit) {
                prop_assert_eq!(p.units_until(&q, unit), n);
                let back = q.plus(-n, unit).expect("back in range");
                prop_assert_eq!(back.epoch_micros(), p.epoch_micros());
            }
        }

        #[test]
        fn months_clamp_to_the_last_day_and_count_whole_months(
            days in 0i64..2_900_000,
            n in -1200i64..1200,
        ) {
            let p = parts(days, 0);
            if let Some(q) = p.plus(n, IntervalUnit::Month) {
                prop_assert!(q.d <= p.d);
                prop_assert_eq!((q.y * 12 + q.mo) - (p.y * 12 + p.mo), n);
                let whole = p.units_until(&q, IntervalUnit::Month);
                // Clamping may cut a day off the end: then the last month is not whole.
                prop_assert!(whole == n || (q.d < p.d && whole == n - n.signum()));
            }
        }
    }

    #[test]
    fn like_patterns() {
        assert!(like_match(b"12345", b"%3%", b'\\'));
        assert!(!like_match(b"1245", b"%3%", b'\\'));
        assert!(like_match(b"abc", b"a_c", b'\\'));
        assert!(like_match(b"a%c", b"a\\%c", b'\\'));
        assert!(!like_match(b"abc", b"a\\%c", b'\\'));
        assert!(like_match(b"", b"%", b'\\'));
        assert!(like_match(b"aaa", b"%a%a%a%", b'\\'));
        assert!(!like_match(b"aa", b"%a%a%a%", b'\\'));
    }
}
