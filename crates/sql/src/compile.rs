//! Turns sqlparser expressions into `Expr`: resolves column names against a `Scope`, numbers
//! `?` placeholders by their position in the statement text, maps function names, and in
//! aggregate context collects aggregate calls into an `AggBuilder`.
//!
//! Owns: name resolution rules (unqualified, `t.c`, `db.t.c`; aliases for ORDER BY/HAVING),
//! literal parsing, and the result-column naming of unaliased expressions.
//! Must never: evaluate anything against the engine, or recurse deeper than `MAX_DEPTH`
//! (left-deep operator chains are not bounded by the parser's recursion limit).

use crate::expr::{
    BinOp, CastTo, Expr, Func, IntervalUnit, RegexFunc, Scale, SqlType, StrFunc, SubRef, UnOp,
};
use crate::result::{Column, ColumnKind, SqlError};
use sqlparser::ast;
use sqlparser::tokenizer::Location;
use tierdb_engine::Value;

/// Deepest expression nesting we compile.
pub const MAX_DEPTH: usize = 256;

/// One column visible to expressions.
#[derive(Clone, Debug)]
pub struct ScopeCol {
    pub name: String,
    /// Names that may qualify this column (`t`, alias, `db.t`).
    pub qualifiers: Vec<String>,
    pub ty: SqlType,
    pub meta: Column,
    /// The right-hand copy of a column a USING / NATURAL join merged: only a qualified name
    /// (`t.c`) reaches it; a bare `c` means the merged column.
    pub merged_away: bool,
    /// A base table's column: its values are stored in its type's form (a DATETIME(n)'s all
    /// with n fraction digits), which a derived table's or a UNION's column need not be.
    pub base: bool,
}

/// The members of an ENUM or SET column.
#[derive(Clone, Debug, PartialEq)]
pub struct Members {
    pub names: std::sync::Arc<[String]>,
    /// A SET (its number is a bit mask), not an ENUM.
    pub set: bool,
}

/// The columns of the row an expression is evaluated against.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    pub fn resolve(&self, parts: &[&str]) -> Result<usize, SqlError> {
        let (qual, name) = match parts {
            [n] => (None, *n),
            [q, n] => (Some(q.to_string()), *n),
            [d, t, n] => (Some(format!("{d}.{t}")), *n),
            _ => return Err(unknown_column(&parts.join("."), "SELECT")),
        };
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            if !c.name.eq_ignore_ascii_case(name) {
                continue;
            }
            match &qual {
                Some(q) if !c.qualifiers.iter().any(|x| x == q) => continue,
                None if c.merged_away => continue,
                _ => {}
            }
            if found.is_some() {
                return Err(SqlError::new(
                    1052,
                    "23000",
                    format!("Column '{}' in SELECT is ambiguous", parts.join(".")),
                ));
            }
            found = Some(i);
        }
        found.ok_or_else(|| unknown_column(&parts.join("."), "SELECT"))
    }
    pub fn type_of(&self, i: usize) -> SqlType {
        self.cols.get(i).map(|c| c.ty).unwrap_or(SqlType::Null)
    }

    /// True when `e` is BIGINT UNSIGNED for arithmetic (see `Expr::Unsigned`).
    pub fn is_unsigned(&self, e: &Expr) -> bool {
        match e {
            Expr::Col(i) => self
                .cols
                .get(*i)
                .is_some_and(|c| c.meta.unsigned && c.ty == SqlType::Int),
            Expr::Const(Value::UInt(_))
            | Expr::Cast(_, CastTo::Unsigned)
            | Expr::Unsigned(_)
            | Expr::Unary(UnOp::BitNot, _)
            | Expr::Bin(
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr,
                ..,
            ) => true,
            _ => false,
        }
    }

    /// True when `e`'s strings compare as bytes: a binary-collation column, or `BINARY x` /
    /// `CAST(x AS BINARY)` / `x COLLATE utf8mb4_bin`; every other string (columns, literals,
    /// function results) uses `utf8mb4_general_ci`.
    pub fn is_binary(&self, e: &Expr) -> bool {
        match e {
            Expr::Col(i) => self.cols.get(*i).is_some_and(|c| c.meta.binary),
            Expr::Outer { binary, .. } => *binary,
            Expr::Cast(_, CastTo::Binary) => true,
            // JSON functions give utf8mb4_bin text (as MariaDB's do).
            Expr::Func(Func::Json(_), _) => true,
            _ => false,
        }
    }
}

/// The member number of ENUM value `e` (the bit mask of a SET's) among `members` (see
/// `Compiler::enum_number`).
fn enum_number_of(e: Expr, members: &Members) -> Expr {
    let mut args = Vec::with_capacity(members.names.len() + 1);
    args.push(e.clone());
    args.extend(
        members
            .names
            .iter()
            .map(|m| Expr::Const(Value::Bytes(m.as_bytes().to_vec()))),
    );
    if members.set {
        return Expr::Func(Func::Misc(crate::funcs::MiscFunc::SetMask), args);
    }
    // A stored value is exactly its member's text: found byte by byte.
    let field = Expr::Bytewise(Box::new(Expr::Func(Func::Str(StrFunc::Field), args)));
    Expr::Case {
        operand: None,
        whens: vec![(Expr::IsNull(Box::new(e), false), Expr::Const(Value::Null))],
        otherwise: Some(Box::new(field)),
    }
}

/// Comparison node `cmp`, made byte-wise (`Expr::Bytewise`) when `binary` (an operand is a
/// binary column).
fn bytewise_if(binary: bool, cmp: Expr) -> Expr {
    if binary {
        Expr::Bytewise(Box::new(cmp))
    } else {
        cmp
    }
}

pub fn unknown_column(name: &str, clause: &str) -> SqlError {
    SqlError::new(
        1054,
        "42S22",
        format!("Unknown column '{name}' in '{clause}'"),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    CountStar,
    Sum,
    Avg,
    Min,
    Max,
    /// A non-aggregated column in an aggregate query (MySQL returns a value from the group).
    AnyValue,
    /// `GROUP_CONCAT([DISTINCT] x, ... [ORDER BY ...] [SEPARATOR s])`.
    GroupConcat,
    /// `JSON_ARRAYAGG([DISTINCT] x [ORDER BY ...])`: collected like GROUP_CONCAT, each row's
    /// argument as `JSON_ARRAY(x)` (NULL included, as `null`).
    JsonArrayAgg,
    /// `JSON_OBJECTAGG(k, v)`: collected like GROUP_CONCAT, each row as `JSON_OBJECT(k, v)`
    /// (a NULL key skips the row).
    JsonObjectAgg,
}

/// One ORDER BY key of GROUP_CONCAT.
#[derive(Clone, Debug)]
pub struct GroupOrder {
    pub key: Expr,
    pub desc: bool,
    /// A DECIMAL key (text): sorted by number.
    pub numeric: bool,
    /// A binary column: strings sorted as bytes.
    pub binary: bool,
}

#[derive(Clone, Debug)]
pub struct AggSpec {
    pub func: AggFunc,
    pub arg: Option<Expr>,
    pub distinct: bool,
    pub arg_type: SqlType,
    /// The argument is a binary column: MIN/MAX and DISTINCT compare its strings as bytes.
    pub binary: bool,
    /// GROUP_CONCAT's ORDER BY keys, on the source row.
    pub order: Vec<GroupOrder>,
    /// GROUP_CONCAT's SEPARATOR (`,` by default).
    pub separator: Vec<u8>,
    /// GROUP_CONCAT's / JSON_ARRAYAGG's LIMIT: the rows kept (after ORDER BY).
    pub limit: Option<usize>,
}

/// Window functions (`f(...) OVER (...)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WinFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// `NTILE(n)`: args (n).
    Ntile,
    /// `LAG(x[, offset[, default]])` / `LEAD(...)`: args (x, offset, default).
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// `NTH_VALUE(x, n)`: args (x, n).
    NthValue,
    /// `COUNT` / `SUM` / `AVG` / `MIN` / `MAX` over the frame (`WindowSpec::agg`).
    Agg(AggFunc),
}

impl WinFunc {
    /// Never NULL (ranks, counts), as MariaDB reports these columns to clients.
    pub fn never_null(self) -> bool {
        matches!(
            self,
            WinFunc::RowNumber
                | WinFunc::Rank
                | WinFunc::DenseRank
                | WinFunc::PercentRank
                | WinFunc::CumeDist
                | WinFunc::Ntile
                | WinFunc::Agg(AggFunc::Count | AggFunc::CountStar)
        )
    }
}

/// One end of a window frame. `Unbounded` is the partition's first row as a start and its
/// last as an end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameBound {
    Unbounded,
    Preceding(u64),
    CurrentRow,
    Following(u64),
}

/// A window frame: `ROWS` counts rows; otherwise (`RANGE`, only with UNBOUNDED and CURRENT
/// ROW bounds) CURRENT ROW takes the row's peers (equal ORDER BY keys) along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WinFrame {
    pub rows: bool,
    pub start: FrameBound,
    pub end: FrameBound,
}

/// One window function call of a query: evaluated on the rows the projection would see
/// (source rows, or aggregate rows in a grouped query), after WHERE / GROUP BY / HAVING and
/// before ORDER BY / DISTINCT / LIMIT; its result is a column appended to those rows.
#[derive(Clone, Debug)]
pub struct WindowSpec {
    pub func: WinFunc,
    pub args: Vec<Expr>,
    pub partition: Vec<Expr>,
    /// The window's ORDER BY (`numeric` / `binary` set by the planner from the row's types).
    pub order: Vec<GroupOrder>,
    pub frame: WinFrame,
    /// Partition keys compared as bytes (bit i for key i).
    pub partition_binary: u64,
    /// For `WinFunc::Agg`: the accumulator's spec (argument `args[0]`).
    pub agg: Option<AggSpec>,
    /// The result type (set by the planner).
    pub ty: SqlType,
}

/// Window calls found while compiling a query's select list and ORDER BY. Each call is
/// compiled to `Expr::Col(WINDOW_COL_BASE + k)`, renumbered by the planner to follow the
/// row's own columns.
#[derive(Default, Debug)]
pub struct WindowBuilder {
    pub specs: Vec<WindowSpec>,
}

/// See `WindowBuilder`.
pub const WINDOW_COL_BASE: usize = 1 << 40;

/// True when `e` holds a window function call (also inside a subquery).
pub fn contains_window(e: &ast::Expr) -> bool {
    struct W;
    impl ast::Visitor for W {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &ast::Expr) -> std::ops::ControlFlow<()> {
            match e {
                ast::Expr::Function(f) if f.over.is_some() => std::ops::ControlFlow::Break(()),
                _ => std::ops::ControlFlow::Continue(()),
            }
        }
    }
    ast::Visit::visit(e, &mut W).is_break()
}

fn window_not_here() -> SqlError {
    SqlError::new(
        4015,
        "HY000",
        "Window function is allowed only in SELECT list and ORDER BY clause",
    )
}

/// Aggregate calls found while compiling an aggregate query. The aggregate row is
/// `group values ++ aggregate results`.
#[derive(Default, Debug)]
pub struct AggBuilder {
    pub group_texts: Vec<String>,
    pub group_exprs: Vec<Expr>,
    pub specs: Vec<AggSpec>,
    spec_texts: Vec<String>,
}

pub struct Compiler<'a> {
    pub scope: &'a Scope,
    /// Sorted start locations of every `?` in the statement.
    pub placeholders: &'a [Location],
    pub agg: Option<&'a mut AggBuilder>,
    /// Where window functions may appear (the select list, ORDER BY): collects them. None:
    /// a window function here is error 4015.
    pub windows: Option<&'a mut WindowBuilder>,
    /// Projection aliases usable in ORDER BY and HAVING: name, compiled item, and whether
    /// the item is a plain column (`x`, `t.x`, `*`) rather than an expression.
    pub aliases: &'a [(String, Expr, bool)],
    pub clause: &'static str,
    /// In `ON DUPLICATE KEY UPDATE`: `VALUES(col)` is the value the statement tried to
    /// insert, found at this offset + the column's position in the evaluated row.
    pub values_offset: Option<usize>,
    /// Where subqueries may appear (WHERE, the select list): plans them into the
    /// statement's list. None: a subquery here is refused.
    pub planner: Option<&'a crate::plan::PlanCx<'a>>,
    /// `@name`s that are parameters here (LOAD DATA's field variables): `@name` is
    /// `Param(i)` for the name at position i.
    pub user_params: &'a [String],
    depth: usize,
}

pub fn is_aggregate_name(name: &str) -> bool {
    matches!(
        name.to_ascii_uppercase().as_str(),
        "COUNT"
            | "SUM"
            | "AVG"
            | "MIN"
            | "MAX"
            | "ANY_VALUE"
            | "GROUP_CONCAT"
            | "JSON_ARRAYAGG"
            | "JSON_OBJECTAGG"
    )
}

/// True when the expression contains an aggregate function call.
pub fn contains_aggregate(e: &ast::Expr, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let d = depth + 1;
    match e {
        ast::Expr::Function(f) => {
            // A window function is no aggregate, but its arguments and window may hold some
            // (`RANK() OVER (ORDER BY SUM(x))` in a grouped query).
            if f.over.is_none() && is_aggregate_name(&object_name_last(&f.name)) {
                return true;
            }
            let in_window = match &f.over {
                Some(ast::WindowType::WindowSpec(w)) => {
                    w.partition_by.iter().any(|x| contains_aggregate(x, d))
                        || w.order_by.iter().any(|o| contains_aggregate(&o.expr, d))
                }
                _ => false,
            };
            in_window
                || function_args(f).iter().any(|a| match a {
                    FArg::Expr(x) => contains_aggregate(x, d),
                    FArg::Star => false,
                })
        }
        ast::Expr::BinaryOp { left, right, .. } => {
            contains_aggregate(left, d) || contains_aggregate(right, d)
        }
        ast::Expr::UnaryOp { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::IsNull(expr)
        | ast::Expr::IsNotNull(expr)
        | ast::Expr::IsTrue(expr)
        | ast::Expr::IsFalse(expr)
        | ast::Expr::IsNotTrue(expr)
        | ast::Expr::IsNotFalse(expr)
        | ast::Expr::Cast { expr, .. } => contains_aggregate(expr, d),
        ast::Expr::Between {
            expr, low, high, ..
        } => {
            contains_aggregate(expr, d) || contains_aggregate(low, d) || contains_aggregate(high, d)
        }
        ast::Expr::In {
            expr,
            target: ast::InTarget::List(l),
            ..
        } => contains_aggregate(expr, d) || l.iter().any(|x| contains_aggregate(x, d)),
        // The left operand of a subquery comparison is this query's (the subquery's own
        // aggregates are its own).
        ast::Expr::In {
            expr,
            target: ast::InTarget::Subquery(_),
            ..
        }
        | ast::Expr::AnyOp { left: expr, .. }
        | ast::Expr::AllOp { left: expr, .. } => contains_aggregate(expr, d),
        ast::Expr::Like { expr, pattern, .. } => {
            contains_aggregate(expr, d) || contains_aggregate(pattern, d)
        }
        ast::Expr::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_ref().is_some_and(|x| contains_aggregate(x, d))
                || conditions.iter().any(|c| {
                    contains_aggregate(&c.condition, d) || contains_aggregate(&c.result, d)
                })
                || else_result
                    .as_ref()
                    .is_some_and(|x| contains_aggregate(x, d))
        }
        _ => false,
    }
}

pub enum FArg<'a> {
    Expr(&'a ast::Expr),
    Star,
}

/// Plain positional arguments of a function call (named args etc. are refused later).
pub fn function_args(f: &ast::Function) -> Vec<FArg<'_>> {
    match &f.args {
        ast::FunctionArguments::List(l) => l
            .args
            .iter()
            .filter_map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(FArg::Expr(e)),
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Wildcard) => Some(FArg::Star),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn function_is_distinct(f: &ast::Function) -> bool {
    matches!(&f.args, ast::FunctionArguments::List(l) if matches!(l.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)))
}

pub fn object_name_last(n: &ast::ObjectName) -> String {
    match n.0.last() {
        Some(ast::ObjectNamePart::Identifier(i)) => i.value.clone(),
        _ => String::new(),
    }
}

/// The identifier parts of an object name (`db.t` → ["db", "t"]).
pub fn object_name_parts(n: &ast::ObjectName) -> Result<Vec<String>, SqlError> {
    n.0.iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => Ok(i.value.clone()),
            other => Err(SqlError::unsupported(format!("object name part {other}"))),
        })
        .collect()
}

/// A decimal literal (`12.50`: digits with a point, no exponent) as an expression typed
/// DECIMAL with its scale (see `Expr::DecimalConst`); `None` for other numbers.
fn decimal_literal(s: &str) -> Option<Expr> {
    let (int, frac) = s.split_once('.')?;
    if !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let scale = u8::try_from(frac.len()).ok().filter(|&n| n <= 30)?;
    Some(Expr::DecimalConst(decimal_value(s), scale))
}

/// An integer literal past 2^64 - 1 (digits only): DECIMAL with scale 0, as MariaDB types it.
fn big_integer_literal(s: &str) -> Option<Expr> {
    if !s.bytes().all(|c| c.is_ascii_digit()) || s.parse::<u64>().is_ok() {
        return None;
    }
    Some(Expr::DecimalConst(decimal_value(s), 0))
}

/// A decimal literal's value (see `Expr::DecimalConst`): a double when it has at most 15
/// significant digits, else its exact text (without leading zeros).
fn decimal_value(s: &str) -> Value {
    let significant = s
        .bytes()
        .filter(u8::is_ascii_digit)
        .skip_while(|&c| c == b'0')
        .count();
    if significant <= 15 {
        return number_literal(s);
    }
    let t = s.trim_start_matches('0');
    let t = if t.is_empty() || t.starts_with('.') {
        format!("0{t}")
    } else {
        t.to_string()
    };
    Value::Bytes(t.into_bytes())
}

/// Parses a numeric literal: integers that fit i64 become Int, larger ones up to 2^64 - 1
/// UInt, others Double.
pub fn number_literal(s: &str) -> Value {
    if let Ok(i) = s.parse::<i64>() {
        return Value::Int(i);
    }
    if let Ok(u) = s.parse::<u64>() {
        return Value::UInt(u);
    }
    Value::Double(s.parse::<f64>().unwrap_or(0.0))
}

/// A literal value, or `None` when the AST value is not a plain literal.
pub fn literal(v: &ast::Value) -> Result<Value, SqlError> {
    Ok(match v {
        ast::Value::Number(s, _) => number_literal(s),
        ast::Value::SingleQuotedString(s)
        | ast::Value::DoubleQuotedString(s)
        | ast::Value::NationalStringLiteral(s)
        | ast::Value::EscapedStringLiteral(s)
        | ast::Value::TripleSingleQuotedString(s)
        | ast::Value::TripleDoubleQuotedString(s) => Value::Bytes(crate::rawtext::literal_bytes(s)),
        ast::Value::HexStringLiteral(h) => {
            let h = if h.len() % 2 == 1 {
                format!("0{h}")
            } else {
                h.clone()
            };
            let mut out = Vec::with_capacity(h.len() / 2);
            for i in (0..h.len()).step_by(2) {
                let byte = u8::from_str_radix(h.get(i..i + 2).unwrap_or("00"), 16)
                    .map_err(|_| SqlError::syntax(format!("bad hex literal X'{h}'")))?;
                out.push(byte);
            }
            Value::Bytes(out)
        }
        // b'...': a number (64 bits at most: a BIT(64) value keeps all of them); a longer
        // one is its bytes, big-endian, as MariaDB reads a bit string.
        ast::Value::SingleQuotedByteStringLiteral(bits) => {
            if bits.chars().any(|c| c != '0' && c != '1') {
                return Err(SqlError::syntax(format!("bad bit literal b'{bits}'")));
            }
            let digits = bits.trim_start_matches('0');
            if digits.len() <= 64 {
                Value::from_u64(
                    digits
                        .bytes()
                        .fold(0u64, |n, c| n << 1 | u64::from(c - b'0')),
                )
            } else {
                let mut out = vec![0u8; digits.len().div_ceil(8)];
                for (i, c) in digits.bytes().rev().enumerate() {
                    if c == b'1' {
                        let at = out.len() - 1 - i / 8;
                        out[at] |= 1 << (i % 8);
                    }
                }
                Value::Bytes(out)
            }
        }
        ast::Value::Boolean(b) => Value::Int(i64::from(*b)),
        ast::Value::Null => Value::Null,
        other => return Err(SqlError::unsupported(format!("literal {other}"))),
    })
}

/// The result-column name MariaDB shows for an unaliased select item `e` written as `raw`:
/// a column's name, a string literal's value, `NULL` / `TRUE` / `FALSE`, a number as
/// written; any other expression is named by its text as written (without the text, as
/// sqlparser prints it).
pub fn item_name(e: &ast::Expr, raw: Option<&str>) -> String {
    let mut inner = e;
    while let ast::Expr::Nested(x) = inner {
        inner = x;
    }
    match inner {
        ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) => column_name_of(inner),
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s)
            | ast::Value::DoubleQuotedString(s)
            | ast::Value::NationalStringLiteral(s) => s.clone(),
            ast::Value::Null => "NULL".into(),
            ast::Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.into(),
            _ if std::ptr::eq(inner, e) => raw.map_or_else(|| column_name_of(e), str::to_string),
            _ => column_name_of(inner),
        },
        ast::Expr::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
            item_name(value, None)
        }
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Plus,
            expr,
        } => item_name(expr, None),
        _ => raw.map_or_else(|| column_name_of(e), str::to_string),
    }
}

/// The result-column name for an unaliased projection expression, from its AST alone (see
/// `item_name`, which prefers the text as written).
pub fn column_name_of(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::CompoundIdentifier(parts) => {
            if parts.first().is_some_and(|p| p.value.starts_with("@@")) {
                parts
                    .iter()
                    .map(|p| p.value.as_str())
                    .collect::<Vec<_>>()
                    .join(".")
            } else {
                parts.last().map(|p| p.value.clone()).unwrap_or_default()
            }
        }
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            ast::Value::Number(s, _) => s.clone(),
            ast::Value::Null => "NULL".into(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

impl<'a> Compiler<'a> {
    pub fn new(scope: &'a Scope, placeholders: &'a [Location]) -> Compiler<'a> {
        Compiler {
            scope,
            placeholders,
            agg: None,
            windows: None,
            aliases: &[],
            clause: "SELECT",
            values_offset: None,
            planner: None,
            user_params: &[],
            depth: 0,
        }
    }

    /// Operands of one comparison, and whether it must compare byte-wise.
    ///
    /// - Only integers and DECIMALs (one of them a DECIMAL column or expression, or a
    ///   literal past a double's digits): compared exactly, every operand cast to
    ///   `CastTo::DecimalOrder` (bytes in numeric order) and the comparison made byte-wise.
    /// - A DECIMAL beside other text (another DECIMAL, a string): the textual ones are
    ///   compared as numbers, as DOUBLE, as MySQL compares DECIMAL with strings.
    /// - Otherwise unchanged (numbers against text already compare numerically).
    ///
    /// A DECIMAL with a division inside compares at its scale (MariaDB: `2/3 = 0.6667`
    /// holds), though arithmetic reads all its digits (`(2/3 - 1) * 100` is -33.3333).
    /// Aggregate rows are left alone (their column types are not the scope's), but for
    /// long literals, which compare as doubles there.
    fn numeric_if_decimal(&self, ops: Vec<Expr>) -> (Vec<Expr>, bool) {
        let as_double = |ops: Vec<Expr>| -> Vec<Expr> {
            ops.into_iter()
                .map(|e| match e {
                    Expr::DecimalConst(Value::Bytes(b), s) => {
                        Expr::DecimalConst(Value::Double(crate::coerce::parse_number(&b).0), s)
                    }
                    e => e,
                })
                .collect()
        };
        if self.agg.is_some() {
            return (as_double(ops), false);
        }
        let ty = |e: &Expr| e.sql_type(&|i| self.scope.type_of(i));
        let ops: Vec<Expr> = ops
            .into_iter()
            .map(|e| match ty(&e) {
                SqlType::Decimal(s) if e.any(&mut |x| matches!(x, Expr::Bin(BinOp::Div, ..))) => {
                    Expr::Func(Func::Round, vec![e, Expr::Const(Value::Int(i64::from(s)))])
                }
                _ => e,
            })
            .collect();
        // (A string constant beside a DECIMAL column is read as a value of the column's
        // type, at its scale, as MariaDB converts a constant to the column's type: '1e-50'
        // beside a DECIMAL(20,2) is 0.00.)
        let column_scale = ops.iter().find_map(|e| match (e, ty(e)) {
            (Expr::Col(_), SqlType::Decimal(s)) => Some(s),
            _ => None,
        });
        let exact_kinds = ops.iter().all(|e| {
            matches!(ty(e), SqlType::Int | SqlType::Decimal(_) | SqlType::Null)
                || column_scale.is_some() && matches!(e, Expr::Const(Value::Bytes(_)))
        });
        // (A short decimal literal alone does not take an integer column off its index.)
        let decimal_value = ops.iter().any(|e| match e {
            Expr::DecimalConst(Value::Double(_), _) => false,
            e => matches!(ty(e), SqlType::Decimal(_)),
        });
        if exact_kinds && decimal_value {
            let ops = ops
                .into_iter()
                .map(|e| match (&e, column_scale) {
                    (Expr::Const(Value::Bytes(_)), Some(scale)) => {
                        let to = CastTo::Decimal {
                            precision: 65,
                            scale,
                        };
                        Expr::Cast(Box::new(Expr::Cast(Box::new(e), to)), CastTo::DecimalOrder)
                    }
                    _ => Expr::Cast(Box::new(e), CastTo::DecimalOrder),
                })
                .collect();
            return (ops, true);
        }
        let ops = as_double(ops);
        // (A decimal literal is a number here, as before it was typed DECIMAL: it does not
        // make the strings beside it numbers.)
        let types: Vec<SqlType> = ops
            .iter()
            .map(|e| match e {
                Expr::DecimalConst(..) => SqlType::Double,
                e => ty(e),
            })
            .collect();
        let textual = |t: &SqlType| matches!(t, SqlType::Decimal(_) | SqlType::Text);
        let decimal = types.iter().any(|t| matches!(t, SqlType::Decimal(_)));
        if !decimal || types.iter().filter(|t| textual(t)).count() < 2 {
            return (ops, false);
        }
        let ops = ops
            .into_iter()
            .zip(types)
            .map(|(e, t)| {
                if textual(&t) {
                    Expr::Cast(Box::new(e), CastTo::Double)
                } else {
                    e
                }
            })
            .collect();
        (ops, false)
    }

    /// Operands of one comparison with a DATE / DATETIME / TIMESTAMP column of this query,
    /// compared as points in time as MariaDB does (`d = '2020-1-1'`, `dt = '2020-01-01
    /// 10:00'` and `dt = 20200101100000` hold), through `CastTo::TemporalOf`:
    /// - When every column operand is a base table's column of one form (whose stored values
    ///   all have that form) and the other operands are row-independent (literals,
    ///   parameters, NOW()), only those are cast, to the column's own text: the column's
    ///   key can still be looked up.
    /// - Otherwise (a derived table's or a UNION's column, whose values may have any fraction
    ///   width; a DATE beside a DATETIME; an expression of the row), every operand is cast,
    ///   so both sides have one form.
    fn temporal_operands(&self, ops: Vec<Expr>) -> Vec<Expr> {
        if self.agg.is_some() {
            return ops;
        }
        // Per column operand: its text form (None = DATE, Some(n) = DATETIME(n); None for a
        // non-temporal column) and whether it is a base table's column.
        let info = |e: &Expr| -> Option<(Option<Option<u8>>, bool)> {
            let Expr::Col(i) = e else { return None };
            let c = self.scope.cols.get(*i)?;
            let form = match c.meta.kind {
                ColumnKind::Date => Some(None),
                ColumnKind::DateTime | ColumnKind::Timestamp => Some(Some(c.meta.decimals.min(6))),
                _ => None,
            };
            Some((form, c.base))
        };
        let cols: Vec<(Option<Option<u8>>, bool)> = ops.iter().filter_map(info).collect();
        let Some(fsp) = cols.iter().find_map(|(f, _)| *f) else {
            return ops;
        };
        let simple = cols.iter().all(|(f, base)| *base && *f == Some(fsp))
            && ops
                .iter()
                .all(|e| matches!(e, Expr::Col(_)) || e.is_row_independent());
        ops.into_iter()
            .map(|e| {
                if !simple || !matches!(e, Expr::Col(_)) {
                    Expr::Cast(Box::new(e), CastTo::TemporalOf(fsp))
                } else {
                    e
                }
            })
            .collect()
    }

    /// `e` in a numeric context (arithmetic, SUM / AVG, a numeric CAST): a DATE or
    /// DATETIME(n) reads as its digits, `YYYYMMDD[hhmmss][.n digits]` (not as the year its
    /// text starts with), a TIME as `[-]HHMMSS[.f]`, an ENUM as its member's number, as
    /// MariaDB reads them. In an aggregate query the type is that of what the aggregate
    /// row's column holds (`source_of`); other aggregate values are left alone.
    fn as_number(&self, e: Expr) -> Expr {
        let scope = self.scope;
        let fsp = {
            let Some(src) = self.source_of(&e) else {
                // MIN / MAX of a TIME: at its argument's precision.
                if self.is_time(&e) {
                    let fsp = self.min_max_time_arg(&e).map_or(7, |x| self.time_fsp(x));
                    return Expr::Cast(Box::new(e), CastTo::TimeNumber(fsp));
                }
                return e;
            };
            if let Some(members) = self.members_of(src) {
                return enum_number_of(e, members);
            }
            match src.sql_type(&|i| scope.type_of(i)) {
                SqlType::Time => {
                    let fsp = self.time_fsp(src);
                    return Expr::Cast(Box::new(e), CastTo::TimeNumber(fsp));
                }
                SqlType::Date => 0,
                SqlType::DateTime => match src {
                    Expr::Col(i) => scope.cols.get(*i).map_or(0, |c| c.meta.decimals.min(6)),
                    Expr::Cast(_, CastTo::DateTime(n)) => *n,
                    _ => 0,
                },
                _ => return e,
            }
        };
        Expr::Cast(Box::new(e), CastTo::TemporalNumber(fsp))
    }

    /// The expression over the FROM row that `e` reads: `e` itself, or in an aggregate
    /// query the group key or the bare column (ANY_VALUE / MIN / MAX argument) an aggregate
    /// row's column holds. None: an aggregate row's other values.
    fn source_of<'e>(&'e self, e: &'e Expr) -> Option<&'e Expr> {
        let Some(agg) = self.agg.as_deref() else {
            return Some(e);
        };
        let Expr::Col(k) = e else { return None };
        if let Some(g) = agg.group_exprs.get(*k) {
            return Some(g);
        }
        let spec = agg.specs.get(k - agg.group_exprs.len())?;
        match spec.func {
            AggFunc::AnyValue | AggFunc::Min | AggFunc::Max => spec.arg.as_ref(),
            _ => None,
        }
    }

    /// The argument (over the FROM row) of the MIN / MAX of a TIME that `e` reads from the
    /// aggregate row (`CastTo::Unkeyed` of `CastTo::TimeKeyed`).
    fn min_max_time_arg<'e>(&'e self, e: &'e Expr) -> Option<&'e Expr> {
        let Expr::Cast(inner, CastTo::Unkeyed) = e else {
            return None;
        };
        let (Expr::Col(k), Some(agg)) = (&**inner, self.agg.as_deref()) else {
            return None;
        };
        let spec = agg.specs.get(k.checked_sub(agg.group_exprs.len())?)?;
        match &spec.arg {
            Some(Expr::Cast(x, CastTo::TimeKeyed)) => Some(x),
            _ => None,
        }
    }

    /// True when `e` holds TIME values (a TIME column, `CAST(x AS TIME)`, TIMEDIFF, ...).
    fn is_time(&self, e: &Expr) -> bool {
        let scope = self.scope;
        let ty = |x: &Expr| x.sql_type(&|i| scope.type_of(i));
        match self.source_of(e) {
            Some(src) => ty(src) == SqlType::Time,
            // An aggregate row's computed value (MIN of a TIME) types itself.
            None => !matches!(e, Expr::Col(_)) && ty(e) == SqlType::Time,
        }
    }

    /// Fraction digits of TIME expression `src` (over the FROM row): a base table column's,
    /// a CAST's; 7 (as many as each value has) for others (a derived table's column, TIMEDIFF).
    fn time_fsp(&self, src: &Expr) -> u8 {
        match src {
            // (A derived table's column: its declared digits when it has some.)
            Expr::Col(i) => self
                .scope
                .cols
                .get(*i)
                .filter(|c| c.base || c.meta.decimals > 0)
                .map_or(7, |c| c.meta.decimals.min(6)),
            Expr::Cast(_, CastTo::Time(n)) if *n <= 6 => *n,
            _ => 7,
        }
    }

    /// Comparison operands with a TIME among them, all read as microseconds
    /// (`CastTo::TimeMicros`): text order is not time order (`-02:00:00`, `100:00:00`). The
    /// access planner sees through the column's cast (its key holds microseconds).
    fn time_operands(&self, ops: Vec<Expr>) -> Vec<Expr> {
        if !ops.iter().any(|e| self.is_time(e)) {
            return ops;
        }
        ops.into_iter()
            .map(|e| Expr::Cast(Box::new(e), CastTo::TimeMicros))
            .collect()
    }

    /// The key ORDER BY and GROUP BY order `e` by when it is not `e` itself: an ENUM's
    /// member number, a TIME's microseconds.
    pub fn order_key(&self, e: &Expr) -> Option<Expr> {
        if self.is_time(e) {
            return Some(Expr::Cast(Box::new(e.clone()), CastTo::TimeMicros));
        }
        self.enum_number(e)
    }

    /// The members of the base table's ENUM or SET column `src` (an expression over the FROM
    /// row).
    fn members_of(&self, src: &Expr) -> Option<&Members> {
        let Expr::Col(i) = src else { return None };
        self.scope.cols.get(*i)?.meta.members.as_ref()
    }

    /// The number of ENUM column `e`'s member (1 for the first; 0 for the empty error value;
    /// NULL for NULL), or a SET column's bit mask, as MariaDB reads them in a numeric context
    /// and orders them. None when `e` is no base table's ENUM or SET column.
    pub fn enum_number(&self, e: &Expr) -> Option<Expr> {
        let members = self.members_of(self.source_of(e)?)?;
        Some(enum_number_of(e.clone(), members))
    }

    /// Comparison operands with a BIT column among them: text read as the big-endian number
    /// of its bytes (`b8 = 'A'` is `b8 = 65`, `CastTo::BitNumber`), as MariaDB compares them.
    fn bit_operands(&self, ops: Vec<Expr>) -> Vec<Expr> {
        let scope = self.scope;
        let is_bit = |e: &Expr| {
            self.source_of(e).is_some_and(|src| {
                matches!(src, Expr::Col(i) if scope.cols.get(*i).is_some_and(|c| c.meta.kind == ColumnKind::Bit))
            })
        };
        if !ops.iter().any(is_bit) {
            return ops;
        }
        ops.into_iter()
            .map(|e| {
                if !is_bit(&e) && e.sql_type(&|i| scope.type_of(i)) == SqlType::Text {
                    Expr::Cast(Box::new(e), CastTo::BitNumber)
                } else {
                    e
                }
            })
            .collect()
    }

    /// Comparison operands `ops` with an ENUM column beside a number read as its member's
    /// number (`e = 2` is the second member), as MariaDB compares them; a string compares
    /// with the member's text.
    fn enum_operands(&self, ops: Vec<Expr>) -> Vec<Expr> {
        if self.agg.is_some() || !ops.iter().any(|e| self.enum_number(e).is_some()) {
            return ops;
        }
        let scope = self.scope;
        let numeric = ops.iter().any(|e| {
            matches!(
                e.sql_type(&|i| scope.type_of(i)),
                SqlType::Int | SqlType::Double | SqlType::Decimal(_)
            )
        });
        if !numeric {
            return ops;
        }
        ops.into_iter()
            .map(|e| self.enum_number(&e).unwrap_or(e))
            .collect()
    }

    /// Plans a subquery into the statement's list. Columns it names that its own FROM lacks
    /// are looked up in this query's scope (and the ones enclosing it): the subquery is then
    /// correlated and takes those values as parameters (`SubRef::outer`).
    /// `one_column`: used as a value or with IN (1241 unless it returns one column).
    fn subquery(&mut self, q: &ast::Query, one_column: bool) -> Result<SubRef, SqlError> {
        let Some(cx) = self.planner else {
            return Err(SqlError::unsupported(format!(
                "subqueries in the {}",
                self.clause
            )));
        };
        cx.outer.borrow_mut().push(crate::plan::OuterScope {
            scope: self.scope.clone(),
            refs: Vec::new(),
            group: self.agg.as_ref().map(|a| a.group_exprs.clone()),
        });
        let planned = crate::plan::select(q, cx);
        let outer = cx
            .outer
            .borrow_mut()
            .pop()
            .map(|f| f.refs)
            .unwrap_or_default();
        let mut plan = planned?;
        if one_column && plan.n_out != 1 {
            return Err(SqlError::new(
                1241,
                "21000",
                "Operand should contain 1 column(s)",
            ));
        }
        plan.outer_params = outer.len();
        let mut list = cx.subqueries.borrow_mut();
        list.push(plan);
        Ok(SubRef {
            index: list.len() - 1,
            outer,
            base: self.placeholders.len(),
        })
    }

    /// `left op ALL (SELECT ...)` (`all`) or `left op ANY / SOME (SELECT ...)`.
    fn quantified(
        &mut self,
        left: &ast::Expr,
        op: &ast::BinaryOperator,
        right: &ast::Expr,
        all: bool,
    ) -> Result<Expr, SqlError> {
        let op = match op {
            ast::BinaryOperator::Eq => BinOp::Eq,
            ast::BinaryOperator::NotEq => BinOp::Ne,
            ast::BinaryOperator::Lt => BinOp::Lt,
            ast::BinaryOperator::LtEq => BinOp::Le,
            ast::BinaryOperator::Gt => BinOp::Gt,
            ast::BinaryOperator::GtEq => BinOp::Ge,
            other => {
                return Err(SqlError::unsupported(format!(
                    "operator {other} with ANY / ALL"
                )))
            }
        };
        let ast::Expr::Subquery(q) = right else {
            return Err(SqlError::syntax("ANY / ALL take a subquery"));
        };
        let x = self.compile(left)?;
        let bin = self.scope.is_binary(&x);
        let sub = self.subquery(q, true)?;
        let cmp = Expr::Quantified {
            left: Box::new(x),
            op,
            sub,
            all,
        };
        Ok(bytewise_if(bin, cmp))
    }

    /// A column of this query's FROM, else (where subqueries are planned) of an enclosing
    /// query; 1054 / 1052 naming this clause.
    fn column(&self, names: &[&str]) -> Result<Expr, SqlError> {
        let full = names.join(".");
        match self.scope.resolve(names) {
            Ok(i) => Ok(Expr::Col(i)),
            Err(e) if e.code == 1054 => match self.planner {
                Some(cx) => match cx.outer_column(names) {
                    Ok(Some(x)) => Ok(x),
                    Ok(None) => Err(self.in_clause(e, &full)),
                    Err(o) if o.code == 1052 => Err(self.in_clause(o, &full)),
                    Err(o) => Err(o),
                },
                None => Err(self.in_clause(e, &full)),
            },
            Err(e) => Err(self.in_clause(e, &full)),
        }
    }

    /// The select-list item named `name` (ORDER BY / HAVING see them), as MariaDB finds it:
    /// the first expression item of that name; else the plain column item of that name —
    /// 1052 when two items name different columns (`SELECT *` over a join with two `x`
    /// columns, then `ORDER BY x`). None when no item has the name.
    fn alias(&self, name: &str) -> Result<Option<Expr>, SqlError> {
        let mut column: Option<&Expr> = None;
        for (n, x, plain) in self.aliases {
            if !n.eq_ignore_ascii_case(name) {
                continue;
            }
            if !plain {
                return Ok(Some(x.clone()));
            }
            match column {
                Some(c) if format!("{c:?}") != format!("{x:?}") => {
                    return Err(SqlError::new(
                        1052,
                        "23000",
                        format!("Column '{name}' in {} is ambiguous", self.clause),
                    ))
                }
                _ => column = Some(x),
            }
        }
        Ok(column.cloned())
    }

    /// A column resolution error naming this clause: 1052 (ambiguous) or 1054 (unknown).
    fn in_clause(&self, e: SqlError, name: &str) -> SqlError {
        if e.code == 1052 {
            SqlError::new(
                1052,
                "23000",
                format!("Column '{name}' in {} is ambiguous", self.clause),
            )
        } else {
            unknown_column(name, self.clause)
        }
    }

    fn param_index(&self, span: &sqlparser::tokenizer::Span) -> Result<usize, SqlError> {
        let loc = span.start;
        self.placeholders
            .binary_search_by(|l| (l.line, l.column).cmp(&(loc.line, loc.column)))
            .map_err(|_| SqlError::syntax("could not place a '?' parameter marker"))
    }

    pub fn compile(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(SqlError::new(
                1436,
                "HY000",
                "expression nesting too deep (thread stack overrun guard)",
            ));
        }
        let r = self.compile_inner(e);
        self.depth -= 1;
        r
    }

    fn agg_lookup(&mut self, e: &ast::Expr) -> Result<Option<Expr>, SqlError> {
        let Some(agg) = self.agg.as_deref_mut() else {
            return Ok(None);
        };
        let text = e.to_string();
        if let Some(i) = agg.group_texts.iter().position(|t| *t == text) {
            return Ok(Some(Expr::Col(i)));
        }
        match e {
            ast::Expr::Function(f) if is_aggregate_name(&object_name_last(&f.name)) => {
                let name = object_name_last(&f.name).to_ascii_uppercase();
                let args = function_args(f);
                let distinct = function_is_distinct(f);
                let (func, arg) = match (name.as_str(), args.as_slice()) {
                    ("COUNT", [FArg::Star]) => (AggFunc::CountStar, None),
                    ("COUNT", [FArg::Expr(x)]) => (AggFunc::Count, Some(*x)),
                    ("SUM", [FArg::Expr(x)]) => (AggFunc::Sum, Some(*x)),
                    ("AVG", [FArg::Expr(x)]) => (AggFunc::Avg, Some(*x)),
                    ("MIN", [FArg::Expr(x)]) => (AggFunc::Min, Some(*x)),
                    ("MAX", [FArg::Expr(x)]) => (AggFunc::Max, Some(*x)),
                    ("ANY_VALUE", [FArg::Expr(x)]) => (AggFunc::AnyValue, Some(*x)),
                    ("GROUP_CONCAT", a) if !a.is_empty() => {
                        return self
                            .add_group_concat(f, AggFunc::GroupConcat, distinct, text)
                            .map(Some);
                    }
                    ("JSON_ARRAYAGG", [_]) => {
                        return self
                            .add_group_concat(f, AggFunc::JsonArrayAgg, distinct, text)
                            .map(Some);
                    }
                    ("JSON_OBJECTAGG", [_, _]) if !distinct => {
                        return self
                            .add_group_concat(f, AggFunc::JsonObjectAgg, false, text)
                            .map(Some);
                    }
                    ("JSON_ARRAYAGG" | "JSON_OBJECTAGG", _) => {
                        return Err(SqlError::new(
                            1582,
                            "42000",
                            format!(
                                "Incorrect parameter count in the call to native function '{name}'"
                            ),
                        ))
                    }
                    _ => {
                        return Err(SqlError::syntax(format!(
                            "wrong arguments to aggregate {f}"
                        )))
                    }
                };
                if f.filter.is_some() {
                    return Err(SqlError::unsupported("aggregate FILTER"));
                }
                if arg.is_some_and(contains_window) {
                    return Err(SqlError::new(
                        4074,
                        "HY000",
                        "Window functions can not be used as arguments to group functions.",
                    ));
                }
                self.add_agg(func, arg, distinct, text).map(Some)
            }
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) if !is_variable(e) => {
                if let ast::Expr::Identifier(id) = e {
                    if let Some(x) = self.alias(&id.value)? {
                        return Ok(Some(x));
                    }
                }
                // A bare column in an aggregate query: its group-by position or ANY_VALUE.
                let compiled = self.without_agg(|c| c.compile(e))?;
                let agg = self
                    .agg
                    .as_deref_mut()
                    .ok_or_else(|| SqlError::syntax("internal: aggregate context lost"))?;
                match compiled {
                    Expr::Col(ci) => {
                        if let Some(gi) = agg
                            .group_exprs
                            .iter()
                            .position(|g| matches!(g, Expr::Col(x) if *x == ci))
                        {
                            return Ok(Some(Expr::Col(gi)));
                        }
                    }
                    // A column of an enclosing query is one value for every group (also
                    // when there is no row).
                    outer @ Expr::Outer { .. } => return Ok(Some(outer)),
                    _ => {}
                }
                self.add_agg(AggFunc::AnyValue, Some(e), false, text)
                    .map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `GROUP_CONCAT([DISTINCT] x, y, ... [ORDER BY k [DESC], ...] [SEPARATOR 's'])`: the
    /// arguments are concatenated per row (a row with a NULL one is skipped), the rows'
    /// strings joined with the separator.
    /// `JSON_ARRAYAGG` / `JSON_OBJECTAGG` (`func`) go the same way with their rows' JSON.
    fn add_group_concat(
        &mut self,
        f: &ast::Function,
        func: AggFunc,
        distinct: bool,
        text: String,
    ) -> Result<Expr, SqlError> {
        let ast::FunctionArguments::List(list) = &f.args else {
            return Err(SqlError::syntax("GROUP_CONCAT needs arguments"));
        };
        let mut args = Vec::new();
        for a in function_args(f) {
            let FArg::Expr(x) = a else {
                return Err(SqlError::syntax("'*' is not valid in GROUP_CONCAT()"));
            };
            if contains_aggregate(x, 0) {
                return Err(SqlError::new(
                    1111,
                    "HY000",
                    "Invalid use of group function",
                ));
            }
            args.push(self.without_agg(|c| c.compile(x))?);
        }
        let mut order = Vec::new();
        let mut separator = b",".to_vec();
        let mut limit = None;
        for clause in &list.clauses {
            match clause {
                ast::FunctionArgumentClause::OrderBy(keys) => {
                    for k in keys {
                        if contains_aggregate(&k.expr, 0) {
                            return Err(SqlError::new(
                                1111,
                                "HY000",
                                "Invalid use of group function",
                            ));
                        }
                        let x = self.without_agg(|c| c.compile(&k.expr))?;
                        let binary = self.scope.is_binary(&x);
                        let scope = self.scope;
                        let numeric =
                            matches!(x.sql_type(&|i| scope.type_of(i)), SqlType::Decimal(_));
                        order.push(GroupOrder {
                            key: x,
                            desc: crate::plan::is_desc(k)?,
                            numeric,
                            binary,
                        });
                    }
                }
                ast::FunctionArgumentClause::Separator(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        separator = crate::rawtext::literal_bytes(s)
                    }
                    other => {
                        return Err(SqlError::syntax(format!(
                            "SEPARATOR takes a string, not {other}"
                        )))
                    }
                },
                ast::FunctionArgumentClause::Limit(n) => {
                    limit = Some(match self.compile(n)? {
                        Expr::Const(Value::Int(n)) if n >= 0 => n as usize,
                        _ => {
                            return Err(SqlError::syntax(
                                "LIMIT in an aggregate takes a non-negative integer",
                            ))
                        }
                    });
                }
                other => return Err(SqlError::unsupported(format!("{} ... {other}", f.name))),
            }
        }
        // JSON: each row's argument as JSON text.
        let scope = self.scope;
        let json = |j: crate::json::JsonFunc, args: Vec<Expr>| {
            let args = args
                .into_iter()
                .map(|a| decimal_as_json_number(a, scope))
                .collect();
            Expr::Func(Func::Json(j), args)
        };
        let arg = match func {
            AggFunc::JsonArrayAgg => json(crate::json::JsonFunc::Array, args),
            AggFunc::JsonObjectAgg => {
                let key = args.first().cloned().unwrap_or(Expr::Const(Value::Null));
                Expr::Case {
                    operand: None,
                    whens: vec![(Expr::IsNull(Box::new(key), false), Expr::Const(Value::Null))],
                    otherwise: Some(Box::new(json(crate::json::JsonFunc::Object, args))),
                }
            }
            _ if args.len() == 1 => args.pop().unwrap_or(Expr::Const(Value::Null)),
            _ => Expr::Func(Func::Concat, args),
        };
        let binary = func != AggFunc::GroupConcat || self.scope.is_binary(&arg);
        self.register_agg(
            AggSpec {
                func,
                limit,
                arg: Some(arg),
                distinct,
                arg_type: SqlType::Text,
                binary,
                order,
                separator,
            },
            text,
        )
    }

    /// Adds aggregate `spec` (written as `text`) to the query's list, or finds the same call
    /// made earlier; returns its column in the aggregate row.
    fn register_agg(&mut self, spec: AggSpec, text: String) -> Result<Expr, SqlError> {
        let agg = self
            .agg
            .as_deref_mut()
            .ok_or_else(|| SqlError::syntax("internal: aggregate context lost"))?;
        let ng = agg.group_exprs.len();
        if let Some(i) = agg.spec_texts.iter().position(|t| *t == text) {
            return Ok(Expr::Col(ng + i));
        }
        agg.specs.push(spec);
        agg.spec_texts.push(text);
        Ok(Expr::Col(ng + agg.specs.len() - 1))
    }

    fn add_agg(
        &mut self,
        func: AggFunc,
        arg: Option<&ast::Expr>,
        distinct: bool,
        text: String,
    ) -> Result<Expr, SqlError> {
        let arg = match arg {
            Some(x) => {
                if contains_aggregate(x, 0) {
                    return Err(SqlError::new(
                        1111,
                        "HY000",
                        "Invalid use of group function",
                    ));
                }
                let x = self.without_agg(|c| c.compile(x))?;
                Some(match func {
                    AggFunc::Sum | AggFunc::Avg => self.without_agg(|c| Ok(c.as_number(x)))?,
                    _ => x,
                })
            }
            None => None,
        };
        // MIN / MAX of a TIME: by its microseconds (byte-wise, `CastTo::TimeKeyed`), the value
        // kept as it was.
        if let (AggFunc::Min | AggFunc::Max, Some(x)) = (func, &arg) {
            if self.without_agg(|c| Ok(c.is_time(x)))? {
                let keyed = Expr::Cast(Box::new(x.clone()), CastTo::TimeKeyed);
                let spec = AggSpec {
                    func,
                    arg: Some(keyed),
                    distinct,
                    arg_type: SqlType::Text,
                    binary: true,
                    order: Vec::new(),
                    separator: Vec::new(),
                    limit: None,
                };
                let r = self.register_agg(spec, text)?;
                return Ok(Expr::Cast(Box::new(r), CastTo::Unkeyed));
            }
        }
        let scope = self.scope;
        let arg_type = arg
            .as_ref()
            .map(|a| a.sql_type(&|i| scope.type_of(i)))
            .unwrap_or(SqlType::Int);
        let binary = arg.as_ref().is_some_and(|a| scope.is_binary(a));
        self.register_agg(
            AggSpec {
                func,
                arg,
                distinct,
                arg_type,
                binary,
                order: Vec::new(),
                separator: Vec::new(),
                limit: None,
            },
            text,
        )
    }

    /// `date ± INTERVAL n unit` → `DateAdd(date, ±n, unit)`.
    fn date_add(
        &mut self,
        date: &ast::Expr,
        iv: &ast::Interval,
        subtract: bool,
    ) -> Result<Expr, SqlError> {
        let unit = match (&iv.leading_field, &iv.last_field) {
            (Some(f), None) => interval_unit(&f.to_string())?,
            (Some(_), Some(_)) => {
                return Err(SqlError::unsupported(
                    "compound INTERVAL units (such as DAY_HOUR); use one unit",
                ))
            }
            (None, _) => return Err(SqlError::syntax("INTERVAL needs a unit (INTERVAL 1 DAY)")),
        };
        let n = self.compile(&iv.value)?;
        let n = if subtract {
            Expr::Unary(UnOp::Neg, Box::new(n))
        } else {
            n
        };
        Ok(Expr::Func(
            Func::DateAdd,
            vec![self.compile(date)?, n, Expr::Const(Value::Int(unit as i64))],
        ))
    }

    /// DATE_ADD / DATE_SUB / ADDDATE / SUBDATE (`(d, INTERVAL n unit)`, or `(d, days)` for
    /// the last two) and TIMESTAMPDIFF(unit, a, b), whose arguments are not plain expressions.
    fn date_function(&mut self, name: &str, args: &[FArg]) -> Result<Expr, SqlError> {
        let subtract = matches!(name, "DATE_SUB" | "SUBDATE");
        match (name, args) {
            ("TIMESTAMPDIFF", [FArg::Expr(u), FArg::Expr(a), FArg::Expr(b)]) => {
                let unit = match u {
                    ast::Expr::Identifier(i) => interval_unit(&i.value)?,
                    other => return Err(SqlError::syntax(format!("TIMESTAMPDIFF unit {other}"))),
                };
                Ok(Expr::Func(
                    Func::TimestampDiff,
                    vec![
                        Expr::Const(Value::Int(unit as i64)),
                        self.compile(a)?,
                        self.compile(b)?,
                    ],
                ))
            }
            ("TIMESTAMPDIFF", _) => Err(wrong_args(name)),
            (_, [FArg::Expr(d), FArg::Expr(ast::Expr::Interval(iv))]) => {
                self.date_add(d, iv, subtract)
            }
            ("ADDDATE" | "SUBDATE", [FArg::Expr(d), FArg::Expr(n)]) => {
                let n = self.compile(n)?;
                let n = if subtract {
                    Expr::Unary(UnOp::Neg, Box::new(n))
                } else {
                    n
                };
                Ok(Expr::Func(
                    Func::DateAdd,
                    vec![
                        self.compile(d)?,
                        n,
                        Expr::Const(Value::Int(IntervalUnit::Day as i64)),
                    ],
                ))
            }
            (_, [_, _]) => Err(SqlError::syntax(format!(
                "{name} needs an INTERVAL: {name}(date, INTERVAL n unit)"
            ))),
            _ => Err(wrong_args(name)),
        }
    }

    fn without_agg<T>(
        &mut self,
        f: impl FnOnce(&mut Compiler) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let saved = self.agg.take();
        let windows = self.windows.take();
        let aliases = std::mem::take(&mut self.aliases);
        let r = f(self);
        self.agg = saved;
        self.windows = windows;
        self.aliases = aliases;
        r
    }

    /// How MariaDB's messages name the type of `e` (`int`, `decimal`, `varchar`, ...).
    fn type_name(&mut self, e: &ast::Expr) -> Result<String, SqlError> {
        let x = self.compile(e)?;
        let scope = &self.scope;
        Ok(match x.sql_type(&|i| scope.type_of(i)) {
            SqlType::Int => "int",
            SqlType::Double => "double",
            SqlType::Decimal(_) => "decimal",
            SqlType::Text => "varchar",
            SqlType::Date => "date",
            SqlType::DateTime => "datetime",
            SqlType::Time => "time",
            SqlType::Null => "null",
        }
        .into())
    }

    fn compile_inner(&mut self, e: &ast::Expr) -> Result<Expr, SqlError> {
        if let ast::Expr::Function(f) = e {
            if f.over.is_some() {
                return self.window_call(f);
            }
        }
        if let Some(x) = self.agg_lookup(e)? {
            return Ok(x);
        }
        use ast::Expr as A;
        Ok(match e {
            A::Identifier(id) => {
                if let Some(v) = id.value.strip_prefix("@@") {
                    return Ok(sysvar(v, None));
                }
                if let Some(v) = id.value.strip_prefix('@') {
                    let v = v.to_ascii_lowercase();
                    if let Some(i) = self.user_params.iter().position(|p| *p == v) {
                        return Ok(Expr::Param(i));
                    }
                    return Ok(Expr::UserVar(v));
                }
                if let Some(x) = self.alias(&id.value)? {
                    return Ok(x);
                }
                self.column(&[&id.value])?
            }
            A::CompoundIdentifier(parts) => {
                if let Some(first) = parts.first() {
                    if let Some(scope) = first.value.strip_prefix("@@") {
                        let name: Vec<&str> = parts[1..].iter().map(|p| p.value.as_str()).collect();
                        let global = match scope.to_ascii_lowercase().as_str() {
                            "global" => Some(true),
                            "session" | "local" => Some(false),
                            _ => {
                                return Err(SqlError::syntax(format!("bad variable reference {e}")))
                            }
                        };
                        return Ok(sysvar(&name.join("."), global));
                    }
                }
                let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                self.column(&names)?
            }
            A::Value(v) => match &v.value {
                ast::Value::Placeholder(_) => Expr::Param(self.param_index(&v.span)?),
                ast::Value::Number(s, _) => decimal_literal(s)
                    .or_else(|| big_integer_literal(s))
                    .unwrap_or_else(|| Expr::Const(number_literal(s))),
                other => Expr::Const(literal(other)?),
            },
            A::Nested(x) => self.compile(x)?,
            A::UnaryOp { op, expr } => {
                let x = self.compile(expr)?;
                let x = match op {
                    ast::UnaryOperator::Minus => self.as_number(x),
                    _ => x,
                };
                match op {
                    ast::UnaryOperator::Minus => match x {
                        Expr::Const(Value::Int(i)) if i != i64::MIN => Expr::Const(Value::Int(-i)),
                        Expr::Const(Value::UInt(u)) => Expr::Const(crate::expr::neg_uint(u)),
                        Expr::Const(Value::Double(d)) => Expr::Const(Value::Double(-d)),
                        Expr::DecimalConst(Value::Double(d), s) => {
                            Expr::DecimalConst(Value::Double(-d), s)
                        }
                        Expr::DecimalConst(Value::Bytes(b), s) => {
                            let neg = match b.strip_prefix(b"-") {
                                Some(rest) => rest.to_vec(),
                                None => [b"-".as_slice(), &b].concat(),
                            };
                            Expr::DecimalConst(Value::Bytes(neg), s)
                        }
                        x => Expr::Unary(UnOp::Neg, Box::new(x)),
                    },
                    ast::UnaryOperator::Plus => x,
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                        Expr::Unary(UnOp::Not, Box::new(x))
                    }
                    ast::UnaryOperator::BitwiseNot => Expr::Unary(UnOp::BitNot, Box::new(x)),
                    other => return Err(SqlError::unsupported(format!("operator {other}"))),
                }
            }
            // `d + INTERVAL n unit`, `INTERVAL n unit + d`, `d - INTERVAL n unit`.
            A::BinaryOp {
                left,
                op: op @ (ast::BinaryOperator::Plus | ast::BinaryOperator::Minus),
                right,
            } if matches!(**right, A::Interval(_))
                || (matches!(op, ast::BinaryOperator::Plus)
                    && matches!(**left, A::Interval(_))) =>
            {
                match (&**left, &**right) {
                    (d, A::Interval(iv)) => {
                        self.date_add(d, iv, matches!(op, ast::BinaryOperator::Minus))?
                    }
                    (A::Interval(iv), d) => self.date_add(d, iv, false)?,
                    _ => return Err(SqlError::syntax("internal: INTERVAL operand lost")),
                }
            }
            // Row constructors: `(a, b) = (1, 2)`, `(a, b) > (x, y)`.
            A::BinaryOp { left, op, right }
                if crate::rowcmp::row_items(left).is_some()
                    || crate::rowcmp::row_items(right).is_some() =>
            {
                match crate::rowcmp::comparison(left, op, right, &mut |e| self.type_name(e))? {
                    Some(rewritten) => self.compile(&rewritten)?,
                    None => return Err(crate::rowcmp::operand_columns(1)),
                }
            }
            A::Tuple(_) => return Err(crate::rowcmp::operand_columns(1)),
            A::BinaryOp { left, op, right } => {
                let bop = match op {
                    ast::BinaryOperator::Plus => BinOp::Add,
                    ast::BinaryOperator::Minus => BinOp::Sub,
                    ast::BinaryOperator::Multiply => BinOp::Mul,
                    ast::BinaryOperator::Divide => BinOp::Div,
                    ast::BinaryOperator::Modulo => BinOp::Mod,
                    ast::BinaryOperator::MyIntegerDivide
                    | ast::BinaryOperator::DuckIntegerDivide => BinOp::IntDiv,
                    ast::BinaryOperator::Eq => BinOp::Eq,
                    ast::BinaryOperator::Spaceship => BinOp::NullSafeEq,
                    ast::BinaryOperator::NotEq => BinOp::Ne,
                    ast::BinaryOperator::Lt => BinOp::Lt,
                    ast::BinaryOperator::LtEq => BinOp::Le,
                    ast::BinaryOperator::Gt => BinOp::Gt,
                    ast::BinaryOperator::GtEq => BinOp::Ge,
                    ast::BinaryOperator::And => BinOp::And,
                    ast::BinaryOperator::Or | ast::BinaryOperator::StringConcat => BinOp::Or,
                    ast::BinaryOperator::Xor => BinOp::Xor,
                    ast::BinaryOperator::BitwiseAnd => BinOp::BitAnd,
                    ast::BinaryOperator::BitwiseOr => BinOp::BitOr,
                    ast::BinaryOperator::BitwiseXor => BinOp::BitXor,
                    ast::BinaryOperator::PGBitwiseShiftLeft => BinOp::Shl,
                    ast::BinaryOperator::PGBitwiseShiftRight => BinOp::Shr,
                    ast::BinaryOperator::Regexp => {
                        return self.regexp(left, right, false);
                    }
                    other => return Err(SqlError::unsupported(format!("operator {other}"))),
                };
                let l = self.compile(left)?;
                let r = self.compile(right)?;
                if bop.is_comparison() {
                    let bin = self.scope.is_binary(&l) || self.scope.is_binary(&r);
                    let ops = self.time_operands(self.enum_operands(vec![l, r]));
                    let ops = self.bit_operands(ops);
                    let (mut v, exact) = self.numeric_if_decimal(self.temporal_operands(ops));
                    let r = v.pop().unwrap_or(Expr::Const(Value::Null));
                    let l = v.pop().unwrap_or(Expr::Const(Value::Null));
                    let cmp = Expr::Bin(bop, Box::new(l), Box::new(r));
                    return Ok(bytewise_if(bin || exact, cmp));
                }
                let (l, r) = match bop {
                    BinOp::And | BinOp::Or | BinOp::Xor => (l, r),
                    _ => (self.as_number(l), self.as_number(r)),
                };
                // Integer arithmetic is unsigned when an operand is (for `%`: the dividend),
                // as MariaDB types it; with a DECIMAL, REAL or string operand it is not.
                let scope = self.scope;
                // (A parameter or user variable is typed by its value at run time.)
                let int = |e: &Expr| {
                    matches!(e, Expr::Param(_) | Expr::UserVar(_))
                        || e.sql_type(&|i| scope.type_of(i)) == SqlType::Int
                };
                let unsigned = int(&l)
                    && int(&r)
                    && match bop {
                        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::IntDiv => {
                            scope.is_unsigned(&l) || scope.is_unsigned(&r)
                        }
                        BinOp::Mod => scope.is_unsigned(&l),
                        _ => false,
                    };
                let types = |i: usize| scope.type_of(i);
                let declared = |e: &Expr| match e.sql_type(&types) {
                    SqlType::Decimal(s) => s,
                    _ => 0,
                };
                let operands = (declared(&l), declared(&r));
                let bin = Expr::Bin(bop, Box::new(l), Box::new(r));
                if unsigned {
                    return Ok(Expr::Unsigned(Box::new(bin)));
                }
                // Rounding to the scale (on the double path) is exact only over exact
                // operands: not over a division or a function's result (MariaDB keeps more
                // digits inside those).
                let inexact = |e: &Expr| matches!(e, Expr::Bin(BinOp::Div, ..) | Expr::Func(..));
                match bin.sql_type(&types) {
                    SqlType::Decimal(s)
                        if matches!(
                            bop,
                            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod
                        ) =>
                    {
                        let rounds = bop != BinOp::Div && !bin.any(&mut |e| inexact(e));
                        let scale = Scale {
                            round: rounds.then_some(s),
                            operands,
                        };
                        Expr::Scaled(Box::new(bin), scale)
                    }
                    _ => bin,
                }
            }
            A::AnyOp {
                left,
                compare_op,
                right,
                ..
            } => self.quantified(left, compare_op, right, false)?,
            A::AllOp {
                left,
                compare_op,
                right,
            } => self.quantified(left, compare_op, right, true)?,
            A::IsNull(x) => Expr::IsNull(Box::new(self.compile(x)?), false),
            A::IsNotNull(x) => Expr::IsNull(Box::new(self.compile(x)?), true),
            A::IsTrue(x) => Expr::IsBool(Box::new(self.compile(x)?), true, false),
            A::IsNotTrue(x) => Expr::IsBool(Box::new(self.compile(x)?), true, true),
            A::IsFalse(x) => Expr::IsBool(Box::new(self.compile(x)?), false, false),
            A::IsNotFalse(x) => Expr::IsBool(Box::new(self.compile(x)?), false, true),
            A::In {
                expr,
                target,
                negated,
                ..
            } => match target {
                ast::InTarget::List(list) => {
                    if let Some(rewritten) =
                        crate::rowcmp::in_list(expr, list, *negated, &mut |e| self.type_name(e))?
                    {
                        return self.compile(&rewritten);
                    }
                    let mut all = vec![self.compile(expr)?];
                    for i in list {
                        all.push(self.compile(i)?);
                    }
                    let bin = all.iter().any(|e| self.scope.is_binary(e));
                    let all = self.bit_operands(self.time_operands(self.enum_operands(all)));
                    let (all, exact) = self.numeric_if_decimal(self.temporal_operands(all));
                    let mut all = all.into_iter();
                    let x = all.next().unwrap_or(Expr::Const(Value::Null));
                    let cmp = Expr::In(Box::new(x), all.collect(), *negated);
                    bytewise_if(bin || exact, cmp)
                }
                ast::InTarget::Subquery(q) => {
                    if crate::rowcmp::row_items(expr).is_some() {
                        return Err(SqlError::unsupported("a row constructor IN (SELECT ...)"));
                    }
                    let x = self.compile(expr)?;
                    let bin = self.scope.is_binary(&x);
                    let cmp = Expr::InSubquery(Box::new(x), self.subquery(q, true)?, *negated);
                    bytewise_if(bin, cmp)
                }
                _ => return Err(SqlError::unsupported("this IN form")),
            },
            A::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let parts = vec![self.compile(expr)?, self.compile(low)?, self.compile(high)?];
                let bin = parts.iter().any(|e| self.scope.is_binary(e));
                let parts = self.time_operands(parts);
                let (v, exact) = self.numeric_if_decimal(self.temporal_operands(parts));
                let mut v = v.into_iter().map(Box::new);
                let cmp = match (v.next(), v.next(), v.next()) {
                    (Some(x), Some(lo), Some(hi)) => Expr::Between(x, lo, hi, *negated),
                    _ => return Err(SqlError::syntax("internal: BETWEEN lost an operand")),
                };
                bytewise_if(bin || exact, cmp)
            }
            A::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                if *any {
                    return Err(SqlError::unsupported("LIKE ANY"));
                }
                let escape = match escape_char.as_deref() {
                    None => b'\\',
                    Some(A::Value(v)) => match &v.value {
                        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s)
                            if s.len() == 1 =>
                        {
                            s.as_bytes()[0]
                        }
                        _ => {
                            return Err(SqlError::new(
                                1210,
                                "HY000",
                                "Incorrect arguments to ESCAPE",
                            ))
                        }
                    },
                    Some(_) => {
                        return Err(SqlError::new(
                            1210,
                            "HY000",
                            "Incorrect arguments to ESCAPE",
                        ))
                    }
                };
                let (x, pat) = (self.compile(expr)?, self.compile(pattern)?);
                let bin = self.scope.is_binary(&x) || self.scope.is_binary(&pat);
                let cmp = Expr::Like {
                    expr: Box::new(x),
                    pattern: Box::new(pat),
                    escape,
                    negated: *negated,
                };
                bytewise_if(bin, cmp)
            }
            A::Function(f) => self.function(f)?,
            A::Ceil { expr, field } | A::Floor { expr, field } => {
                if !matches!(
                    field,
                    ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime)
                ) {
                    return Err(SqlError::unsupported(format!("{e}")));
                }
                let func = if matches!(e, A::Ceil { .. }) {
                    Func::Ceil
                } else {
                    Func::Floor
                };
                Expr::Func(func, vec![self.compile(expr)?])
            }
            A::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.compile(expr)?];
                args.push(match substring_from {
                    Some(x) => self.compile(x)?,
                    None => Expr::Const(Value::Int(1)),
                });
                if let Some(x) = substring_for {
                    args.push(self.compile(x)?);
                }
                Expr::Func(Func::Substring, args)
            }
            A::RLike {
                negated,
                expr,
                pattern,
                ..
            } => return self.regexp(expr, pattern, *negated),
            // POSITION(sub IN s) is LOCATE(sub, s).
            A::Position { expr, r#in } => Expr::Func(
                Func::Str(StrFunc::Instr),
                vec![self.compile(r#in)?, self.compile(expr)?],
            ),
            A::Extract { field, expr, .. } => {
                use ast::DateTimeField as D;
                let f = match field {
                    D::Year => Func::Year,
                    D::Month => Func::Month,
                    D::Day => Func::Day,
                    D::Hour => Func::Hour,
                    D::Minute => Func::Minute,
                    D::Second => Func::Second,
                    D::Microsecond => Func::Microsecond,
                    D::Quarter => Func::Quarter,
                    other => {
                        return Err(SqlError::unsupported(format!("EXTRACT({other} FROM ...)")))
                    }
                };
                Expr::Func(f, vec![self.compile(expr)?])
            }
            A::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters: None,
            } => {
                use ast::TrimWhereField as W;
                let x = self.compile(expr)?;
                match (trim_where, trim_what) {
                    (None | Some(W::Both), None) => Expr::Func(Func::Trim, vec![x]),
                    (Some(W::Leading), None) => Expr::Func(Func::Str(StrFunc::Ltrim), vec![x]),
                    (Some(W::Trailing), None) => Expr::Func(Func::Str(StrFunc::Rtrim), vec![x]),
                    (side, Some(what)) => {
                        let f = match side {
                            Some(W::Leading) => StrFunc::TrimLeading,
                            Some(W::Trailing) => StrFunc::TrimTrailing,
                            _ => StrFunc::TrimBoth,
                        };
                        let args = vec![x, self.compile(what)?];
                        let binary = args.iter().any(|a| self.scope.is_binary(a));
                        bytewise_if(binary, Expr::Func(Func::Str(f), args))
                    }
                }
            }
            // CONVERT(x USING charset): text (bytes for `binary`); CONVERT(x, type) is CAST.
            A::Convert {
                is_try: false,
                expr,
                data_type,
                charset,
                target_before_value: false,
                styles,
            } if styles.is_empty() => {
                let x = self.compile(expr)?;
                let to = match (data_type, charset) {
                    (Some(t), None) => cast_target(t, &column_name_of(expr))?,
                    (None, Some(cs)) if object_name_last(cs).eq_ignore_ascii_case("binary") => {
                        CastTo::Binary
                    }
                    (None, Some(_)) | (Some(_), Some(_)) => CastTo::Char,
                    (None, None) => return Err(SqlError::syntax("CONVERT needs a type")),
                };
                Expr::Cast(Box::new(x), to)
            }
            A::Cast {
                kind: ast::CastKind::Cast,
                expr,
                data_type: ast::DataType::Binary(None),
                format: None,
            } if needs_rebinding(expr) => self.compile(&binary_on_left(expr))?,
            A::Cast {
                expr,
                data_type,
                format: None,
                ..
            } => {
                let x = self.compile(expr)?;
                let to = cast_target(data_type, &column_name_of(expr))?;
                let x = match to {
                    CastTo::Signed | CastTo::Unsigned | CastTo::Decimal { .. } | CastTo::Double => {
                        self.as_number(x)
                    }
                    _ => x,
                };
                Expr::Cast(Box::new(x), to)
            }
            // A character set introducer: `_binary 'x'` is a binary string; the text of
            // another character set is kept as written (statements arrive as utf8mb4).
            A::Prefixed { prefix, value } if prefix.value.starts_with('_') => {
                let x = self.compile(value)?;
                match prefix.value.to_ascii_lowercase().as_str() {
                    "_binary" => Expr::Cast(Box::new(x), CastTo::Binary),
                    "_utf8mb4" | "_utf8mb3" | "_utf8" | "_latin1" | "_ascii" => x,
                    other => {
                        return Err(SqlError::new(
                            1115,
                            "42000",
                            format!("Unknown character set: '{}'", &other[1..]),
                        ))
                    }
                }
            }
            A::Collate { expr, collation } => {
                let x = self.compile(expr)?;
                match crate::ddl::collation_named(&object_name_last(collation))? {
                    tierdb_engine::Collation::Binary => Expr::Cast(Box::new(x), CastTo::Binary),
                    // Text of the default collation (also a binary column's).
                    tierdb_engine::Collation::GeneralCi => Expr::Cast(Box::new(x), CastTo::Char),
                }
            }
            A::Case {
                operand,
                conditions,
                else_result,
                ..
            } => Expr::Case {
                operand: match operand {
                    Some(o) => Some(Box::new(self.compile(o)?)),
                    None => None,
                },
                whens: conditions
                    .iter()
                    .map(|c| Ok((self.compile(&c.condition)?, self.compile(&c.result)?)))
                    .collect::<Result<Vec<_>, SqlError>>()?,
                otherwise: match else_result {
                    Some(x) => Some(Box::new(self.compile(x)?)),
                    None => None,
                },
            },
            A::Subquery(q) => {
                let sub = self.subquery(q, true)?;
                let t = self
                    .planner
                    .and_then(|cx| {
                        cx.subqueries
                            .borrow()
                            .get(sub.index)
                            .and_then(|p| p.columns.first().map(crate::plan::kind_type))
                    })
                    .unwrap_or(SqlType::Text);
                Expr::Subquery(sub, t)
            }
            A::Exists { subquery, negated } => {
                Expr::Exists(self.subquery(subquery, false)?, *negated)
            }
            other => return Err(SqlError::unsupported(format!("expression {other}"))),
        })
    }

    /// `f(...) OVER (...)`: the call is registered with the query's windows and compiled to
    /// the column its result will be (see `WindowBuilder`). Its arguments, PARTITION BY and
    /// ORDER BY are compiled on the row the projection sees (aggregates allowed in a grouped
    /// query), where no window function may nest.
    fn window_call(&mut self, f: &ast::Function) -> Result<Expr, SqlError> {
        if self.windows.is_none() {
            return Err(window_not_here());
        }
        let spec = match &f.over {
            Some(ast::WindowType::WindowSpec(
                w @ ast::WindowSpec {
                    window_name: None, ..
                },
            )) => w,
            // Named windows the query defines were written into the calls already.
            Some(ast::WindowType::NamedWindow(n))
            | Some(ast::WindowType::WindowSpec(ast::WindowSpec {
                window_name: Some(n),
                ..
            })) => {
                return Err(SqlError::new(
                    4009,
                    "HY000",
                    format!(
                        "Window specification with name '{}' is not defined",
                        n.value
                    ),
                ))
            }
            None => return Err(SqlError::syntax("internal: OVER lost")),
        };
        if f.filter.is_some() || !f.within_group.is_empty() || f.null_treatment.is_some() {
            return Err(SqlError::unsupported(format!("{f}")));
        }
        let name = object_name_last(&f.name).to_ascii_uppercase();
        let raw = function_args(f);
        let n_declared = match &f.args {
            ast::FunctionArguments::List(l) => {
                if l.duplicate_treatment.is_some() || !l.clauses.is_empty() {
                    return Err(SqlError::unsupported(format!(
                        "DISTINCT or clauses in the window function {name}"
                    )));
                }
                l.args.len()
            }
            ast::FunctionArguments::None => 0,
            ast::FunctionArguments::Subquery(_) => {
                return Err(SqlError::syntax(format!("a subquery as {name}'s argument")))
            }
        };
        if raw.len() != n_declared {
            return Err(SqlError::unsupported(format!("argument form in {f}")));
        }
        let (func, min, max) = match (name.as_str(), raw.as_slice()) {
            ("ROW_NUMBER", _) => (WinFunc::RowNumber, 0, 0),
            ("RANK", _) => (WinFunc::Rank, 0, 0),
            ("DENSE_RANK", _) => (WinFunc::DenseRank, 0, 0),
            ("PERCENT_RANK", _) => (WinFunc::PercentRank, 0, 0),
            ("CUME_DIST", _) => (WinFunc::CumeDist, 0, 0),
            ("NTILE", _) => (WinFunc::Ntile, 1, 1),
            ("LAG", _) => (WinFunc::Lag, 1, 3),
            ("LEAD", _) => (WinFunc::Lead, 1, 3),
            ("FIRST_VALUE", _) => (WinFunc::FirstValue, 1, 1),
            ("LAST_VALUE", _) => (WinFunc::LastValue, 1, 1),
            ("NTH_VALUE", _) => (WinFunc::NthValue, 2, 2),
            ("COUNT", [FArg::Star]) => (WinFunc::Agg(AggFunc::CountStar), 0, 1),
            ("COUNT", _) => (WinFunc::Agg(AggFunc::Count), 1, 1),
            ("SUM", _) => (WinFunc::Agg(AggFunc::Sum), 1, 1),
            ("AVG", _) => (WinFunc::Agg(AggFunc::Avg), 1, 1),
            ("MIN", _) => (WinFunc::Agg(AggFunc::Min), 1, 1),
            ("MAX", _) => (WinFunc::Agg(AggFunc::Max), 1, 1),
            _ => {
                return Err(SqlError::unsupported(format!(
                    "{name}() as a window function"
                )))
            }
        };
        if raw.len() < min || raw.len() > max {
            return Err(wrong_args(&name));
        }
        let saved = self.windows.take();
        let r = self.window_parts(func, &raw, spec);
        self.windows = saved;
        let w = r?;
        let windows = self
            .windows
            .as_deref_mut()
            .ok_or_else(|| SqlError::syntax("internal: window context lost"))?;
        windows.specs.push(w);
        Ok(Expr::Col(WINDOW_COL_BASE + windows.specs.len() - 1))
    }

    /// The compiled parts of one window call (see `window_call`).
    fn window_parts(
        &mut self,
        func: WinFunc,
        raw: &[FArg],
        w: &ast::WindowSpec,
    ) -> Result<WindowSpec, SqlError> {
        let mut args = Vec::new();
        for a in raw {
            match a {
                FArg::Expr(x) => {
                    let x = self.compile(x)?;
                    args.push(match func {
                        WinFunc::Agg(AggFunc::Sum | AggFunc::Avg) => self.as_number(x),
                        _ => x,
                    });
                }
                FArg::Star => {}
            }
        }
        let mut partition = Vec::new();
        for x in &w.partition_by {
            partition.push(self.compile(x)?);
        }
        let mut order = Vec::new();
        for k in &w.order_by {
            let key = self.compile(&k.expr)?;
            order.push(GroupOrder {
                key: self.order_key(&key).unwrap_or(key),
                desc: crate::plan::is_desc(k)?,
                numeric: false,
                binary: false,
            });
        }
        let frame_bound =
            |b: &ast::WindowFrameBound, start: bool| -> Result<FrameBound, SqlError> {
                let offset = |x: &ast::Expr| -> Result<u64, SqlError> {
                    match x {
                        ast::Expr::Value(v) => match &v.value {
                            ast::Value::Number(n, _) => n.parse::<u64>().ok(),
                            _ => None,
                        },
                        _ => None,
                    }
                    .ok_or_else(|| {
                        SqlError::unsupported(format!(
                            "frame offset {x} (a non-negative whole number is needed)"
                        ))
                    })
                };
                Ok(match b {
                    ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
                    ast::WindowFrameBound::Preceding(None) if start => FrameBound::Unbounded,
                    ast::WindowFrameBound::Following(None) if !start => FrameBound::Unbounded,
                    ast::WindowFrameBound::Preceding(Some(x)) => FrameBound::Preceding(offset(x)?),
                    ast::WindowFrameBound::Following(Some(x)) => FrameBound::Following(offset(x)?),
                    other => {
                        return Err(SqlError::syntax(format!(
                            "{other} cannot {} a window frame",
                            if start { "start" } else { "end" }
                        )))
                    }
                })
            };
        let frame = match &w.window_frame {
            None if order.is_empty() => WinFrame {
                rows: false,
                start: FrameBound::Unbounded,
                end: FrameBound::Unbounded,
            },
            None => WinFrame {
                rows: false,
                start: FrameBound::Unbounded,
                end: FrameBound::CurrentRow,
            },
            Some(f) => {
                let start = frame_bound(&f.start_bound, true)?;
                let end = match &f.end_bound {
                    Some(b) => frame_bound(b, false)?,
                    None => FrameBound::CurrentRow,
                };
                let rows = match f.units {
                    ast::WindowFrameUnits::Rows => true,
                    ast::WindowFrameUnits::Range => false,
                    ast::WindowFrameUnits::Groups => {
                        return Err(SqlError::unsupported("GROUPS window frames"))
                    }
                };
                let plain =
                    |b: FrameBound| matches!(b, FrameBound::Unbounded | FrameBound::CurrentRow);
                if !(rows || plain(start) && plain(end)) {
                    return Err(SqlError::unsupported(
                        "RANGE window frames with an offset (use ROWS)",
                    ));
                }
                WinFrame { rows, start, end }
            }
        };
        let agg = match func {
            WinFunc::Agg(a) => Some(AggSpec {
                func: a,
                arg: args.first().cloned(),
                distinct: false,
                arg_type: SqlType::Null,
                binary: false,
                order: Vec::new(),
                separator: Vec::new(),
                limit: None,
            }),
            _ => None,
        };
        Ok(WindowSpec {
            func,
            args,
            partition,
            order,
            frame,
            partition_binary: 0,
            agg,
            ty: SqlType::Null,
        })
    }

    /// `s [NOT] REGEXP p` (also RLIKE): case-insensitive unless an operand is binary.
    fn regexp(&mut self, s: &ast::Expr, p: &ast::Expr, negated: bool) -> Result<Expr, SqlError> {
        let args = vec![self.compile(s)?, self.compile(p)?];
        let binary = args.iter().any(|a| self.scope.is_binary(a));
        let m = bytewise_if(binary, Expr::Func(Func::Regex(RegexFunc::Match), args));
        Ok(if negated {
            Expr::Unary(UnOp::Not, Box::new(m))
        } else {
            m
        })
    }

    fn function(&mut self, f: &ast::Function) -> Result<Expr, SqlError> {
        let name = object_name_last(&f.name).to_ascii_uppercase();
        // Messages name the function as the statement spelled it (as MariaDB).
        let spelled = object_name_last(&f.name);
        if is_aggregate_name(&name) {
            return Err(SqlError::new(
                1111,
                "HY000",
                "Invalid use of group function",
            ));
        }
        if f.over.is_some() {
            return Err(SqlError::unsupported("window functions"));
        }
        let raw = function_args(f);
        if name == "VALUES" {
            return match (self.values_offset, raw.as_slice()) {
                (Some(off), [FArg::Expr(ast::Expr::Identifier(id))]) => self
                    .scope
                    .resolve(&[&id.value])
                    .map(|ci| Expr::Col(off + ci))
                    .map_err(|_| unknown_column(&id.value, self.clause)),
                (Some(_), _) => Err(SqlError::syntax("VALUES() takes one column name")),
                // Outside ON DUPLICATE KEY UPDATE, MariaDB's VALUES(col) is NULL.
                (None, _) => Ok(Expr::Const(Value::Null)),
            };
        }
        if matches!(
            name.as_str(),
            "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE" | "TIMESTAMPDIFF"
        ) {
            return self.date_function(&name, &raw);
        }
        let n_declared = match &f.args {
            ast::FunctionArguments::List(l) => l.args.len(),
            _ => 0,
        };
        if raw.len() != n_declared {
            return Err(SqlError::unsupported(format!("argument form in {f}")));
        }
        let mut args = Vec::with_capacity(raw.len());
        for a in &raw {
            match a {
                FArg::Expr(x) => args.push(self.compile(x)?),
                FArg::Star => {
                    return Err(SqlError::syntax(format!("'*' is not valid in {name}()")))
                }
            }
        }
        // TIME(x): x as a TIME with the fraction digits it was written with.
        if name == "TIME" {
            return match args.as_slice() {
                [_] => Ok(Expr::Cast(
                    Box::new(args.pop().unwrap_or(Expr::Const(Value::Null))),
                    CastTo::Time(7),
                )),
                _ => Err(wrong_args(&name)),
            };
        }
        let (func, min, max) = match name.as_str() {
            "CONCAT" => (Func::Concat, 1, usize::MAX),
            "CONCAT_WS" => (Func::ConcatWs, 2, usize::MAX),
            "COALESCE" => (Func::Coalesce, 1, usize::MAX),
            "IFNULL" => (Func::IfNull, 2, 2),
            "NULLIF" => (Func::NullIf, 2, 2),
            "IF" => (Func::If, 3, 3),
            "LENGTH" | "OCTET_LENGTH" => (Func::Length, 1, 1),
            "CHAR_LENGTH" | "CHARACTER_LENGTH" => (Func::CharLength, 1, 1),
            "UPPER" | "UCASE" => (Func::Upper, 1, 1),
            "LOWER" | "LCASE" => (Func::Lower, 1, 1),
            "ABS" => (Func::Abs, 1, 1),
            "FLOOR" => (Func::Floor, 1, 1),
            "CEIL" | "CEILING" => (Func::Ceil, 1, 1),
            "ROUND" => (Func::Round, 1, 2),
            "NOW" | "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" | "SYSDATE"
            | "UTC_TIMESTAMP" => (Func::Now, 0, 1),
            "CURDATE" | "CURRENT_DATE" | "UTC_DATE" => (Func::CurDate, 0, 0),
            "UNIX_TIMESTAMP" => (Func::UnixTimestamp, 0, 1),
            "FROM_UNIXTIME" => (Func::FromUnixtime, 1, 2),
            "REGEXP_REPLACE" => (Func::Regex(RegexFunc::Replace), 3, 3),
            "REGEXP_SUBSTR" => (Func::Regex(RegexFunc::Substr), 2, 2),
            "REGEXP_INSTR" => (Func::Regex(RegexFunc::Instr), 2, 2),
            "DATABASE" | "SCHEMA" => (Func::Database, 0, 0),
            "USER" | "SESSION_USER" | "SYSTEM_USER" => (Func::User, 0, 0),
            "CURRENT_USER" => (Func::CurrentUser, 0, 0),
            "VERSION" => (Func::Version, 0, 0),
            "CONNECTION_ID" => (Func::ConnectionId, 0, 0),
            "BINLOG_GTID_POS" => (Func::BinlogGtidPos, 2, 2),
            "LOAD_FILE" => (Func::LoadFile, 1, 1),
            "LAST_INSERT_ID" => (Func::LastInsertId, 0, 0),
            "ROW_COUNT" => (Func::RowCount, 0, 0),
            "FOUND_ROWS" => (Func::FoundRows, 0, 0),
            "GREATEST" => (Func::Greatest, 2, usize::MAX),
            "LEAST" => (Func::Least, 2, usize::MAX),
            "SUBSTRING" | "SUBSTR" | "MID" => (Func::Substring, 2, 3),
            "TRIM" => (Func::Trim, 1, 1),
            "REPLACE" => (Func::Replace, 3, 3),
            "LEFT" => (Func::Left, 2, 2),
            "RIGHT" => (Func::Right, 2, 2),
            "DATE" => (Func::DatePart, 1, 1),
            "YEAR" => (Func::Year, 1, 1),
            "MONTH" => (Func::Month, 1, 1),
            "DAY" | "DAYOFMONTH" => (Func::Day, 1, 1),
            "HOUR" => (Func::Hour, 1, 1),
            "MINUTE" => (Func::Minute, 1, 1),
            "SECOND" => (Func::Second, 1, 1),
            "MICROSECOND" => (Func::Microsecond, 1, 1),
            "DATE_FORMAT" => (Func::DateFormat, 2, 2),
            "DATEDIFF" => (Func::DateDiff, 2, 2),
            "CONVERT_TZ" => (Func::ConvertTz, 3, 3),
            "REPEAT" => (Func::Str(StrFunc::Repeat), 2, 2),
            "LPAD" => (Func::Str(StrFunc::Lpad), 3, 3),
            "RPAD" => (Func::Str(StrFunc::Rpad), 3, 3),
            "REVERSE" => (Func::Str(StrFunc::Reverse), 1, 1),
            "INSTR" => (Func::Str(StrFunc::Instr), 2, 2),
            "LOCATE" => {
                if !(2..=3).contains(&args.len()) {
                    return Err(wrong_args(&spelled));
                }
                // LOCATE(sub, s[, pos]) is INSTR(s, sub) from pos.
                args.swap(0, 1);
                (Func::Str(StrFunc::Instr), 2, 3)
            }
            "SUBSTRING_INDEX" => (Func::Str(StrFunc::SubstringIndex), 3, 3),
            "LTRIM" => (Func::Str(StrFunc::Ltrim), 1, 1),
            "RTRIM" => (Func::Str(StrFunc::Rtrim), 1, 1),
            "SPACE" => (Func::Str(StrFunc::Space), 1, 1),
            "ASCII" => (Func::Str(StrFunc::Ascii), 1, 1),
            "HEX" => (Func::Str(StrFunc::Hex), 1, 1),
            "FIELD" => (Func::Str(StrFunc::Field), 2, usize::MAX),
            "FIND_IN_SET" => (Func::Str(StrFunc::FindInSet), 2, 2),
            "STRCMP" => (Func::Str(StrFunc::Strcmp), 2, 2),
            "POW" | "POWER" => (Func::Pow, 2, 2),
            "SQRT" => (Func::Sqrt, 1, 1),
            "SIGN" => (Func::Sign, 1, 1),
            "EXP" => (Func::Exp, 1, 1),
            "LN" => (Func::Ln, 1, 1),
            "LOG" => (Func::Log, 1, 2),
            "LOG10" => (Func::Log10, 1, 1),
            "LOG2" => (Func::Log2, 1, 1),
            "DAYOFWEEK" => (Func::DayOfWeek, 1, 1),
            "WEEKDAY" => (Func::Weekday, 1, 1),
            "DAYNAME" => (Func::DayName, 1, 1),
            "MONTHNAME" => (Func::MonthName, 1, 1),
            "DAYOFYEAR" => (Func::DayOfYear, 1, 1),
            "QUARTER" => (Func::Quarter, 1, 1),
            "LAST_DAY" => (Func::LastDay, 1, 1),
            "TO_DAYS" => (Func::ToDays, 1, 1),
            "MOD" => {
                if args.len() != 2 {
                    return Err(wrong_args(&spelled));
                }
                let b = args.pop().unwrap_or(Expr::Const(Value::Null));
                let a = args.pop().unwrap_or(Expr::Const(Value::Null));
                return Ok(Expr::Bin(BinOp::Mod, Box::new(a), Box::new(b)));
            }
            "RAND" if !args.is_empty() => {
                return Err(SqlError::unsupported(
                    "RAND(seed) (RAND() without a seed works)",
                ))
            }
            other => match crate::funcs::named(other) {
                Some((m, min, max)) => (Func::Misc(m), min, max),
                None if crate::json::JsonFunc::named(other).is_some() => {
                    let (j, min, max) = crate::json::JsonFunc::named(other)
                        .ok_or_else(|| SqlError::syntax("internal: JSON function lost"))?;
                    if matches!(
                        j,
                        crate::json::JsonFunc::Object | crate::json::JsonFunc::Array
                    ) {
                        let scope = self.scope;
                        args = args
                            .into_iter()
                            .map(|a| decimal_as_json_number(a, scope))
                            .collect();
                    }
                    (Func::Json(j), min, max)
                }
                None if crate::user_locks::UserLockFunc::named(other).is_some() => {
                    let (u, min, max) = crate::user_locks::UserLockFunc::named(other)
                        .ok_or_else(|| SqlError::syntax("internal: lock function lost"))?;
                    (Func::UserLock(u), min, max)
                }
                None => {
                    return Err(SqlError::new(
                        1305,
                        "42000",
                        format!("FUNCTION {name} does not exist"),
                    ));
                }
            },
        };
        if args.len() < min || args.len() > max {
            return Err(wrong_args(&spelled));
        }
        if matches!(func, Func::Now) {
            // NOW(n): the precision, a literal 0..=6 (kept as the only argument when > 0).
            let what = match name.as_str() {
                "SYSDATE" | "UTC_TIMESTAMP" => name.to_ascii_lowercase(),
                _ => "current_timestamp".to_string(),
            };
            let fsp = match args.first() {
                None => 0,
                Some(Expr::Const(Value::Int(n))) => {
                    crate::ddl::fsp_of(Some(u64::try_from(*n).unwrap_or(u64::MAX)), &what)?
                }
                Some(_) => {
                    return Err(SqlError::syntax(format!(
                        "{spelled}(): the precision must be a number from 0 to 6"
                    )))
                }
            };
            args = if fsp > 0 {
                vec![Expr::Const(Value::Int(i64::from(fsp)))]
            } else {
                Vec::new()
            };
        }
        // A binary string operand makes the string functions compare and walk bytes.
        let binary =
            crate::expr::is_string_func(func) && args.iter().any(|a| self.scope.is_binary(a));
        Ok(bytewise_if(binary, Expr::Func(func, args)))
    }
}

/// The unit of an INTERVAL or TIMESTAMPDIFF (1064 naming it when tierdb has no such unit).
fn interval_unit(name: &str) -> Result<IntervalUnit, SqlError> {
    IntervalUnit::named(name).ok_or_else(|| {
        SqlError::syntax(format!(
            "unknown INTERVAL unit {name} (MICROSECOND, SECOND, MINUTE, HOUR, DAY, WEEK, MONTH, QUARTER or YEAR)"
        ))
    })
}

fn wrong_args(name: &str) -> SqlError {
    SqlError::new(
        1582,
        "42000",
        format!("Incorrect parameter count in the call to native function '{name}'"),
    )
}

fn is_variable(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Identifier(i) => i.value.starts_with('@'),
        ast::Expr::CompoundIdentifier(p) => p.first().is_some_and(|i| i.value.starts_with('@')),
        _ => false,
    }
}

fn sysvar(name: &str, global: Option<bool>) -> Expr {
    let lower = name.to_ascii_lowercase();
    if global.is_none() {
        if let Some(rest) = lower.strip_prefix("global.") {
            return Expr::SysVar(rest.to_string(), Some(true));
        }
        if let Some(rest) = lower
            .strip_prefix("session.")
            .or_else(|| lower.strip_prefix("local."))
        {
            return Expr::SysVar(rest.to_string(), Some(false));
        }
    }
    Expr::SysVar(lower, global)
}

/// A DECIMAL value (kept as text) as JSON_ARRAY / JSON_OBJECT embed it: a number written as
/// the value is (`1.50`, as MariaDB), by reading the text as JSON (`JSON_EXTRACT(x, '$')`,
/// whose result is embedded as it is). Other expressions unchanged.
fn decimal_as_json_number(a: Expr, scope: &Scope) -> Expr {
    if !matches!(a.sql_type(&|i| scope.type_of(i)), SqlType::Decimal(_)) {
        return a;
    }
    Expr::Func(
        Func::Json(crate::json::JsonFunc::Extract),
        vec![a, Expr::Const(Value::Bytes(b"$".to_vec()))],
    )
}

/// True for the operator nodes MySQL's `BINARY` prefix binds tighter than (see
/// `binary_on_left`).
fn needs_rebinding(e: &ast::Expr) -> bool {
    use ast::BinaryOperator as B;
    use ast::Expr as A;
    // Only operators with a truth-value result: `CAST(a + b AS BINARY)` written out means the
    // sum's text, and a cast of a comparison's 0/1 to binary is not something to write.
    matches!(
        e,
        A::BinaryOp {
            op: B::Eq
                | B::NotEq
                | B::Lt
                | B::LtEq
                | B::Gt
                | B::GtEq
                | B::Spaceship
                | B::And
                | B::Or
                | B::Xor,
            ..
        } | A::Like { .. }
            | A::RLike { .. }
            | A::In { .. }
            | A::Between { .. }
            | A::IsNull(_)
            | A::IsNotNull(_)
    )
}

/// sqlparser reads MySQL's `BINARY a = b` as `CAST(a = b AS BINARY)`, but `BINARY` binds to
/// the operand on its right alone (`(BINARY a) = b`); this moves the cast down the left
/// spine of the operators onto that operand. (A `CAST(a = b AS BINARY)` written out in full
/// parses the same and is rebound too; `CAST((a = b) AS BINARY)` is not.)
fn binary_on_left(e: &ast::Expr) -> ast::Expr {
    use ast::Expr as A;
    let down = |x: &A| Box::new(binary_on_left(x));
    match e {
        A::BinaryOp { left, op, right } => A::BinaryOp {
            left: down(left),
            op: op.clone(),
            right: right.clone(),
        },
        A::Like {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => A::Like {
            negated: *negated,
            any: *any,
            expr: down(expr),
            pattern: pattern.clone(),
            escape_char: escape_char.clone(),
        },
        A::In {
            expr,
            target,
            negated,
            global,
        } => A::In {
            expr: down(expr),
            target: target.clone(),
            negated: *negated,
            global: *global,
        },
        A::Between {
            expr,
            negated,
            low,
            high,
        } => A::Between {
            expr: down(expr),
            negated: *negated,
            low: low.clone(),
            high: high.clone(),
        },
        A::RLike {
            negated,
            expr,
            pattern,
            regexp,
        } => A::RLike {
            negated: *negated,
            expr: down(expr),
            pattern: pattern.clone(),
            regexp: *regexp,
        },
        A::IsNull(x) => A::IsNull(down(x)),
        A::IsNotNull(x) => A::IsNotNull(down(x)),
        other => A::Cast {
            kind: ast::CastKind::Cast,
            expr: Box::new(other.clone()),
            data_type: ast::DataType::Binary(None),
            format: None,
        },
    }
}

/// The cast to `dt` of the expression written `what` (named by error 1426).
pub fn cast_target(dt: &ast::DataType, what: &str) -> Result<CastTo, SqlError> {
    use ast::DataType as D;
    Ok(match dt {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => CastTo::Signed,
        D::Unsigned
        | D::UnsignedInteger
        | D::IntUnsigned(_)
        | D::BigIntUnsigned(_)
        | D::IntegerUnsigned(_) => CastTo::Unsigned,
        D::Char(_) | D::Varchar(_) | D::Text | D::Nvarchar(_) => CastTo::Char,
        D::Binary(_) | D::Varbinary(_) => CastTo::Binary,
        D::Double(_) | D::DoublePrecision | D::Float(_) | D::Real => CastTo::Double,
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, (*s).max(0) as u64),
            };
            CastTo::Decimal {
                precision: p.min(65) as u8,
                scale: s.min(30) as u8,
            }
        }
        D::Date => CastTo::Date,
        D::Datetime(n) | D::Timestamp(n, _) => CastTo::DateTime(crate::ddl::fsp_of(*n, what)?),
        D::Time(n, ast::TimezoneInfo::None) => CastTo::Time(crate::ddl::fsp_of(*n, what)?),
        other => return Err(SqlError::unsupported(format!("CAST to {other}"))),
    })
}
