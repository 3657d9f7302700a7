//! What a statement returns, in the terms the wire protocol needs — the seam between the SQL
//! layer and the server's protocol module. No protocol encoding happens here.

use std::borrow::Cow;

pub use tierdb_engine::Value;

/// The MySQL column type to announce in a result set's column definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Tiny,
    Short,
    Int24,
    Long,
    LongLong,
    Float,
    Double,
    NewDecimal,
    /// CHAR(n)
    String,
    /// VARCHAR(n) and computed strings
    VarString,
    Blob,
    Date,
    DateTime,
    Timestamp,
    /// YEAR: an integer shown with four digits (`0000`).
    Year,
    /// TIME(n): `[-]HH:MM:SS[.f]` text (`crate::time`).
    Time,
    /// BIT(n): an integer, sent as its ceil(n / 8) big-endian bytes (`length` is n).
    Bit,
    Null,
}

/// One column of a result set.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// Original table name ("" for expressions).
    pub table: String,
    /// Database name ("" for expressions).
    pub schema: String,
    pub kind: ColumnKind,
    /// Display length in characters/digits (MySQL's "column_length").
    pub length: u32,
    pub decimals: u8,
    pub unsigned: bool,
    pub not_null: bool,
    pub primary_key: bool,
    /// True for text columns (utf8mb4 charset); false for numbers/binary (charset 63).
    pub is_text: bool,
    /// Strings of this column compare byte by byte (a BLOB or a `*_bin` text column); false
    /// for the default case-insensitive collation and for non-strings.
    pub binary: bool,
    /// An ENUM's or SET's members (a base table's column, also read through a derived table
    /// or a view): numeric contexts and ORDER BY read its number. Never sent to clients.
    pub members: Option<crate::compile::Members>,
}

impl Column {
    /// A computed text column (SHOW output, @@variables, string expressions): 64 characters
    /// announced (CREATE TABLE ... SELECT widens it to the longest value).
    pub fn text(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            table: String::new(),
            schema: String::new(),
            kind: ColumnKind::VarString,
            length: 64,
            decimals: 0,
            unsigned: false,
            not_null: false,
            primary_key: false,
            is_text: true,
            binary: false,
            members: None,
        }
    }
    /// A computed BIGINT column (COUNT(*), numeric expressions).
    pub fn bigint(name: impl Into<String>) -> Column {
        Column {
            kind: ColumnKind::LongLong,
            length: 21,
            is_text: false,
            binary: false,
            ..Column::text(name)
        }
    }
}

/// The result of one statement.
/// One entry of SHOW WARNINGS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// "Note", "Warning", or "Error" (the statement's error, listed after it failed).
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

impl Warning {
    pub fn warn(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Warning",
            code,
            message: message.into(),
        }
    }
    pub fn error(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Error",
            code,
            message: message.into(),
        }
    }
    pub fn note(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Note",
            code,
            message: message.into(),
        }
    }
}

/// The warnings a statement raised: the first `MAX_WARNINGS` (MariaDB's `max_error_count`)
/// listed for SHOW WARNINGS, the rest only counted (as the OK packet and `@@warning_count`
/// count them all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Raised {
    pub listed: Vec<Warning>,
    pub unlisted: usize,
}

impl Raised {
    pub fn push(&mut self, w: Warning) {
        if self.listed.len() < crate::expr::MAX_WARNINGS {
            self.listed.push(w);
        } else {
            self.unlisted += 1;
        }
    }
    /// Every warning raised, listed or not.
    pub fn count(&self) -> usize {
        self.listed.len() + self.unlisted
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    /// OK packet.
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
    /// A result set; `rows[i][j]` is the value of column `j` in row `i`.
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<Value>>,
    },
    /// `LOAD DATA LOCAL INFILE`: the statement needs the client's file `file` (the protocol
    /// asks the client for it and hands the bytes to `Session::load_local`, whose result is
    /// the statement's).
    LocalInfile { file: String },
}

impl QueryResult {
    pub fn ok() -> QueryResult {
        QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        }
    }
}

/// An error for the client: MySQL error number, SQLSTATE and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ERROR {code} ({state}): {message}")]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
}

impl SqlError {
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            message: message.into(),
        }
    }
    /// 1064: syntax error.
    pub fn syntax(message: impl Into<String>) -> SqlError {
        SqlError::new(1064, "42000", message)
    }
    /// 1235: valid SQL that tierdb does not support; `what` names the construct.
    pub fn unsupported(what: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1235,
            "42000",
            format!("This version of tierdb doesn't yet support '{what}'"),
        )
    }
}

impl From<tierdb_engine::Error> for SqlError {
    fn from(e: tierdb_engine::Error) -> SqlError {
        let (code, state) = e.mysql_code();
        SqlError::new(code, state, e.to_string())
    }
}

/// What PREPARE tells the client.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedInfo {
    pub statement_id: u32,
    pub param_count: u16,
    /// Result columns when known at prepare time (may be empty).
    pub columns: Vec<Column>,
}

/// Formats a double the way MySQL prints DOUBLE: shortest round-trip digits, exponent form
/// for very large or very small magnitudes.
pub fn format_double(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "NaN".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if v == 0.0 {
        return "0".into();
    }
    // The shortest round-trip digits and where the decimal point falls among them (as
    // MariaDB's dtoa gives them): positional unless the point is 15 or more places before
    // the first digit, or the number is a whole one of more than 15 digits.
    let sci = format!("{v:e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let decpt = exp.parse::<i32>().unwrap_or(0) + 1;
    let len = mant.bytes().filter(u8::is_ascii_digit).count() as i32;
    if decpt <= -15 || (decpt >= len && decpt > 15) {
        sci
    } else {
        format!("{v}")
    }
}

/// Formats a FLOAT column's value as MariaDB does: six significant digits, positional
/// between 1e-15 and 1e15, otherwise `mantissa` e `exponent` (3.40282e38, 1e-20).
pub fn format_float(v: f64) -> String {
    let f = v as f32;
    if !f.is_finite() {
        return format_double(v);
    }
    if f == 0.0 {
        return "0".into();
    }
    // "d.ddddde<exp>", rounded to six significant digits.
    let sci = format!("{:.5e}", f64::from(f));
    let Some((mant, exp)) = sci.split_once('e') else {
        return sci;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mant) = match mant.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mant),
    };
    let all: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = all.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    if !(-15..15).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        format!("{sign}{first}{dot}{rest}e{exp}")
    } else if exp >= 0 {
        let whole = exp as usize + 1;
        if digits.len() > whole {
            format!("{sign}{}.{}", &digits[..whole], &digits[whole..])
        } else {
            format!("{sign}{digits}{}", "0".repeat(whole - digits.len()))
        }
    } else {
        let zeros = "0".repeat((-exp - 1) as usize);
        format!("{sign}0.{zeros}{digits}")
    }
}

/// A BIT(n) column's value as the client reads it: ceil(n / 8) big-endian bytes.
pub fn bit_bytes(col: &Column, v: &Value) -> Vec<u8> {
    let n = match v {
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        Value::Double(d) => *d as u64,
        Value::Bytes(b) => b.iter().fold(0u64, |n, c| n << 8 | u64::from(*c)),
        Value::Null => 0,
    };
    let width = col.length.div_ceil(8).clamp(1, 8) as usize;
    n.to_be_bytes()[8 - width..].to_vec()
}

/// How a value of column `col` reads as text in a result set (what the text protocol sends
/// and SELECT ... INTO OUTFILE writes); None for NULL.
pub fn column_text<'v>(col: &Column, v: &'v Value) -> Option<Cow<'v, [u8]>> {
    let owned = |s: String| Some(Cow::Owned(s.into_bytes()));
    match v {
        Value::Null => None,
        v if col.kind == ColumnKind::Bit => Some(Cow::Owned(bit_bytes(col, v))),
        // YEAR shows four digits: 0 is `0000`.
        Value::Int(i) if col.kind == ColumnKind::Year => owned(format!("{i:04}")),
        Value::Int(i) if col.unsigned && *i < 0 => owned((*i as u64).to_string()),
        Value::Int(i) => owned(i.to_string()),
        Value::UInt(u) => owned(u.to_string()),
        Value::Double(d) => owned(match col.kind {
            ColumnKind::Float => format_float(*d),
            ColumnKind::NewDecimal if col.decimals <= 30 => {
                crate::coerce::decimal_text(*d, col.decimals)
            }
            _ => format_double(*d),
        }),
        Value::Bytes(b) => match col.kind {
            ColumnKind::NewDecimal if col.decimals <= 30 => {
                Some(crate::coerce::decimal_bytes_at(b, col.decimals))
            }
            _ => Some(Cow::Borrowed(b)),
        },
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn doubles_print_like_mysql() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(100.0), "100");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-2.25), "-2.25");
        assert_eq!(format_double(1e20), "1e20");
        // Pairs printed by MariaDB 10.11 for a DOUBLE column holding each value.
        for (v, want) in [
            (1.2345e-5, "0.000012345"),
            (1.5e-7, "0.00000015"),
            (1e-15, "0.000000000000001"),
            (1.5e-15, "0.0000000000000015"),
            (1e-16, "1e-16"),
            (1e-20, "1e-20"),
            (1e14, "100000000000000"),
            (1e15, "1e15"),
            (1.5e16, "1.5e16"),
            (1234567890123456.0, "1.234567890123456e15"),
            (1234567890123456.8, "1234567890123456.8"),
            (123456789012345.6, "123456789012345.6"),
            (1.2345678901234568e17, "1.2345678901234568e17"),
            (0.000123456789012345, "0.000123456789012345"),
            (-1.25e-5, "-0.0000125"),
        ] {
            assert_eq!(format_double(v), want, "{v}");
        }
        assert_eq!(format_float(0.1), "0.1");
    }

    #[test]
    fn floats_print_six_digits_like_mariadb() {
        // Pairs printed by MariaDB 10.11 for a FLOAT column holding each value.
        let cases = [
            (1.23456789, "1.23457"),
            (123456789.0, "123457000"),
            (1e-5, "0.00001"),
            (1234567.0, "1234570"),
            (123456.7, "123457"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (99999.95, "100000"),
            (0.000123456789, "0.000123457"),
            (-2.5e-10, "-0.00000000025"),
            (1e38, "1e38"),
            (3.4028235e38, "3.40282e38"),
            (1e-20, "1e-20"),
            (1.5e-30, "1.5e-30"),
            (-1.17549e-38, "-1.17549e-38"),
            (1e-15, "0.000000000000001"),
            (999999.5, "1000000"),
            (0.5, "0.5"),
            (-0.0, "0"),
        ];
        for (v, want) in cases {
            assert_eq!(format_float(v), want, "{v}");
        }
    }
}
