//! Fitting a value into a column's storage form, as MariaDB does on INSERT, UPDATE, REPLACE
//! and LOAD: in strict mode a value that does not fit fails the statement; outside strict
//! mode, or under IGNORE, it is clamped or cut to fit with a warning (1264 out of range,
//! 1265 data truncated, 1366 not a number). Losses that are harmless (a decimal rounded to
//! its scale, trailing spaces cut, a date's time dropped) are notes in every mode.
//!
//! Owns: the rules of `Dest`-directed conversion, its error and warning messages.
//! Must never: store a value outside the column's type (a lenient path always clamps to a
//! value the strict path would accept), panic on any input, or decide about NULL in a NOT
//! NULL column (the caller knows whether the statement is one row or many).

use crate::coerce::{
    int_range, parse_datetime, parse_integer_exact, parse_temporal, scan_number, to_f64, to_text,
    zero_datetime, I64_MIN_F, U64_END_F,
};
use crate::result::{Raised, SqlError, Warning};
use tierdb_engine::{ColumnDef, ColumnType, Value};

/// Where a value is being written: names for messages, and what a value that does not fit
/// becomes.
#[derive(Clone, Copy, Debug)]
pub struct Dest<'a> {
    /// Database and table, for the `` `db`.`table`.`column` `` of 1366 / 1292 messages (""
    /// when not known: the message names the column alone).
    pub db: &'a str,
    pub table: &'a str,
    /// 1-based row of the statement, for messages.
    pub row: usize,
    /// A value that does not fit is clamped or cut to fit with a warning (outside strict
    /// mode, or under IGNORE) instead of failing the statement.
    pub lenient: bool,
}

impl Dest<'static> {
    /// Strict, with no table named (defaults, ALTER TABLE's checks).
    pub fn strict(row: usize) -> Dest<'static> {
        Dest {
            db: "",
            table: "",
            row,
            lenient: false,
        }
    }
}

impl Dest<'_> {
    /// A loss: the error in strict mode; otherwise its warning, and `fitted` is stored.
    fn lossy(&self, e: SqlError, fitted: Value, raised: &mut Raised) -> Result<Value, SqlError> {
        if self.lenient {
            raised.push(Warning::warn(e.code, e.message));
            Ok(fitted)
        } else {
            Err(e)
        }
    }

    fn out_of_range(&self, col: &str) -> SqlError {
        SqlError::new(
            1264,
            "22003",
            format!("Out of range value for column '{col}' at row {}", self.row),
        )
    }

    fn truncated_msg(&self, col: &str) -> String {
        format!("Data truncated for column '{col}' at row {}", self.row)
    }

    fn truncated(&self, col: &str) -> SqlError {
        SqlError::new(1265, "01000", self.truncated_msg(col))
    }

    /// Note 1265: a harmless loss (rounding, trailing spaces, a dropped time of day).
    fn note_truncated(&self, col: &str, raised: &mut Raised) {
        raised.push(Warning::note(1265, self.truncated_msg(col)));
    }

    fn too_long(&self, col: &str) -> SqlError {
        SqlError::new(
            1406,
            "22001",
            format!("Data too long for column '{col}' at row {}", self.row),
        )
    }

    fn column_named(&self, col: &str) -> String {
        if self.table.is_empty() {
            format!("'{col}'")
        } else {
            format!("`{}`.`{}`.`{col}`", self.db, self.table)
        }
    }

    /// 1366 (a text that is no number) or 1292 (no date): `kind` names the type.
    fn incorrect(&self, code: u16, kind: &str, v: &Value, col: &str) -> SqlError {
        let shown = match to_text(v) {
            Some(t) => String::from_utf8_lossy(&t).into_owned(),
            None => "NULL".into(),
        };
        SqlError::new(
            code,
            "22007",
            format!(
                "Incorrect {kind} value: '{shown}' for column {} at row {}",
                self.column_named(col),
                self.row
            ),
        )
    }
}

/// What a text holds as a number.
enum NumText {
    /// No number at all ('', 'abc'): 1366.
    Nothing,
    /// A number followed by nothing, by spaces only (`spaces`: a note), or by other
    /// characters (`junk`: 1265).
    Number {
        value: f64,
        spaces: bool,
        junk: bool,
    },
}

/// The number a text holds, for a numeric column of `kind` ("integer", "double", "decimal"):
/// `Ok(n)` to go on with; `Err(fitted)` when a lenient write decided here (no number at all:
/// 1366 and `fit(None)`; a number followed by other characters: 1265 and `fit(Some(n))`); the
/// strict error otherwise. Trailing spaces are a note.
fn text_number(
    b: &[u8],
    v: &Value,
    kind: &str,
    name: &str,
    dest: &Dest,
    raised: &mut Raised,
    fit: impl Fn(Option<f64>) -> Value,
) -> Result<Result<f64, Value>, SqlError> {
    match num_text(b) {
        NumText::Nothing => {
            let e = dest.incorrect(1366, kind, v, name);
            dest.lossy(e, fit(None), raised).map(Err)
        }
        NumText::Number {
            value, junk: true, ..
        } => dest
            .lossy(dest.truncated(name), fit(Some(value)), raised)
            .map(Err),
        NumText::Number { value, spaces, .. } => {
            if spaces {
                dest.note_truncated(name, raised);
            }
            Ok(Ok(value))
        }
    }
}

fn num_text(b: &[u8]) -> NumText {
    match scan_number(b) {
        None => NumText::Nothing,
        Some((value, end)) => {
            let rest = &b[end..];
            let junk = !rest.iter().all(u8::is_ascii_whitespace);
            NumText::Number {
                value,
                spaces: !rest.is_empty() && !junk,
                junk,
            }
        }
    }
}

/// Converts `v` into the storage form of `col` for a write to `dest`: notes and (when
/// lenient) warnings go to `raised`. NULL is returned as NULL; the caller decides about
/// NOT NULL and AUTO_INCREMENT.
pub fn fit(v: Value, col: &ColumnDef, dest: &Dest, raised: &mut Raised) -> Result<Value, SqlError> {
    let name = col.name.as_str();
    match &col.ty {
        _ if v.is_null() => Ok(Value::Null),
        ColumnType::Int { bytes, unsigned } => {
            let (lo, hi) = int_range(*bytes, *unsigned);
            let int = |i: i128| Value::from_i128(i).unwrap_or(Value::Null);
            let i = match &v {
                Value::Int(_) | Value::UInt(_) => v.as_i128().unwrap_or(0),
                Value::Double(d) => {
                    let r = d.round();
                    if !(I64_MIN_F..U64_END_F).contains(&r) {
                        let fitted = int(clamp_round(r, lo, hi));
                        return dest.lossy(dest.out_of_range(name), fitted, raised);
                    }
                    r as i128
                }
                Value::Bytes(b) => match parse_integer_exact(b).and_then(|i| i.as_i128()) {
                    Some(i) => {
                        if b.last().is_some_and(u8::is_ascii_whitespace) {
                            dest.note_truncated(name, raised);
                        }
                        i
                    }
                    None => {
                        let fit = |n: Option<f64>| int(n.map_or(0, |n| clamp_round(n, lo, hi)));
                        let d = match text_number(b, &v, "integer", name, dest, raised, fit)? {
                            Ok(n) => n,
                            Err(fitted) => return Ok(fitted),
                        };
                        let r = d.round();
                        if !(I64_MIN_F..U64_END_F).contains(&r) {
                            let fitted = int(clamp_round(r, lo, hi));
                            return dest.lossy(dest.out_of_range(name), fitted, raised);
                        }
                        r as i128
                    }
                },
                Value::Null => return Ok(Value::Null),
            };
            if i < lo || i > hi {
                let fitted = int(i.clamp(lo, hi));
                return dest.lossy(dest.out_of_range(name), fitted, raised);
            }
            Ok(int(i))
        }
        ColumnType::Bit(n) => {
            let max: u128 = (1u128 << n) - 1;
            // Text is bytes, read as one big-endian number ('A' is 65), as MariaDB reads it.
            let x: Option<u128> = match &v {
                Value::Int(i) => u128::try_from(*i).ok(),
                Value::UInt(u) => Some(u128::from(*u)),
                Value::Double(d) if d.is_finite() && *d >= 0.0 => Some(d.round() as u128),
                Value::Double(_) => None,
                Value::Bytes(b) if b.len() <= 16 => {
                    Some(b.iter().fold(0u128, |n, c| n << 8 | u128::from(*c)))
                }
                Value::Bytes(_) => Some(u128::MAX),
                Value::Null => return Ok(Value::Null),
            };
            let to_value = |x: u128| Value::from_u64(x as u64);
            match x {
                Some(x) if x <= max => Ok(to_value(x)),
                _ if !dest.lenient => Err(dest.too_long(name)),
                over => {
                    raised.push(Warning::warn(1264, dest.out_of_range(name).message));
                    Ok(to_value(if over.is_some() { max } else { 0 }))
                }
            }
        }
        ColumnType::Year => {
            // Text of fewer than four characters is a two-digit year even when it is 0
            // ('0', '00', '000' are 2000); the number 0 and '0000' are the zero year.
            let short = matches!(&v, Value::Bytes(b) if b.trim_ascii().len() < 4);
            let year = move |n: f64| -> Option<i64> {
                let r = n.round();
                let y = match r {
                    0.0 if !short => 0.0,
                    r if (0.0..70.0).contains(&r) => 2000.0 + r,
                    r if (70.0..100.0).contains(&r) => 1900.0 + r,
                    r => r,
                };
                (y == 0.0 || (1901.0..=2155.0).contains(&y)).then_some(y as i64)
            };
            let n = match &v {
                Value::Int(i) => *i as f64,
                Value::UInt(u) => *u as f64,
                Value::Double(d) => *d,
                Value::Bytes(b) => {
                    let fit = |n: Option<f64>| Value::Int(n.and_then(year).unwrap_or(0));
                    match text_number(b, &v, "integer", name, dest, raised, fit)? {
                        Ok(n) => n,
                        Err(fitted) => return Ok(fitted),
                    }
                }
                Value::Null => return Ok(Value::Null),
            };
            match year(n) {
                Some(y) => Ok(Value::Int(y)),
                None => dest.lossy(dest.out_of_range(name), Value::Int(0), raised),
            }
        }
        ColumnType::Float | ColumnType::Double => {
            let max = if col.ty == ColumnType::Float {
                f64::from(f32::MAX)
            } else {
                f64::MAX
            };
            let d = match &v {
                Value::Bytes(b) => {
                    let fit = |n: Option<f64>| Value::Double(fit_float(n.unwrap_or(0.0), max));
                    match text_number(b, &v, "double", name, dest, raised, fit)? {
                        Ok(n) => n,
                        Err(fitted) => return Ok(fitted),
                    }
                }
                other => to_f64(other).unwrap_or(0.0),
            };
            if !d.is_finite() || d.abs() > max {
                let fitted = Value::Double(fit_float(d, max));
                return dest.lossy(dest.out_of_range(name), fitted, raised);
            }
            Ok(Value::Double(fit_float(d, max)))
        }
        ColumnType::Decimal {
            precision,
            scale,
            unsigned,
        } => {
            let (p, s) = (*precision, *scale);
            // The nearest value a number out of range is set to: UNSIGNED stops at zero.
            let limit = |neg: bool| {
                if neg && *unsigned {
                    decimal_zero(s)
                } else {
                    decimal_max(p, s, neg)
                }
            };
            let text = match &v {
                Value::Int(i) => i.to_string(),
                Value::UInt(u) => u.to_string(),
                // Rust prints a double's shortest round-trip digits in full positional
                // notation, so rounding to the scale sees the digits the user wrote.
                Value::Double(d) if d.is_finite() => d.to_string(),
                Value::Double(d) => {
                    let fitted = limit(*d < 0.0);
                    return dest.lossy(dest.out_of_range(name), fitted, raised);
                }
                Value::Bytes(b) => {
                    let t = String::from_utf8_lossy(b);
                    if is_plain_decimal(t.trim()) {
                        if b.last().is_some_and(u8::is_ascii_whitespace) {
                            dest.note_truncated(name, raised);
                        }
                        t.trim().to_string()
                    } else {
                        let fit = |n: Option<f64>| match n {
                            None => decimal_zero(s),
                            Some(n) if !n.is_finite() || n < 0.0 && *unsigned => limit(n < 0.0),
                            Some(n) => decimal_clamped(&n.to_string(), p, s),
                        };
                        let below_zero = *unsigned && t.trim_start().starts_with('-');
                        match text_number(b, &v, "decimal", name, dest, raised, fit)? {
                            // ('-5x' into UNSIGNED: truncated, then out of range, as MariaDB.)
                            Err(fitted) if below_zero && fitted == decimal_zero(s) => {
                                return dest.lossy(dest.out_of_range(name), fitted, raised);
                            }
                            Err(fitted) => return Ok(fitted),
                            Ok(n) if !n.is_finite() => {
                                let fitted = limit(n < 0.0);
                                return dest.lossy(dest.out_of_range(name), fitted, raised);
                            }
                            Ok(n) => n.to_string(),
                        }
                    }
                }
                Value::Null => return Ok(Value::Null),
            };
            // UNSIGNED takes no value below zero (-0.001 neither, though it rounds to 0.00).
            let t = text.trim_start();
            if *unsigned && t.starts_with('-') && t.bytes().any(|c| (b'1'..=b'9').contains(&c)) {
                return dest.lossy(dest.out_of_range(name), limit(true), raised);
            }
            match crate::coerce::format_decimal(&text, p, s) {
                crate::coerce::DecimalResult::Ok(out) => {
                    if drops_digits(&text, s) {
                        dest.note_truncated(name, raised);
                    }
                    Ok(Value::Bytes(out.into_bytes()))
                }
                crate::coerce::DecimalResult::Invalid => {
                    let e = dest.incorrect(1366, "decimal", &v, name);
                    dest.lossy(e, decimal_zero(s), raised)
                }
                crate::coerce::DecimalResult::OutOfRange => {
                    let fitted = limit(text.trim_start().starts_with('-'));
                    dest.lossy(dest.out_of_range(name), fitted, raised)
                }
            }
        }
        ColumnType::Set(members) => match crate::coerce::set_value(&v, members, col) {
            Ok(text) => Ok(Value::Bytes(text.into_bytes())),
            // Members that are none of the set's: 1265; outside strict mode they are
            // dropped (what remains is kept), as MariaDB does.
            Err(kept) => dest.lossy(
                dest.truncated(name),
                Value::Bytes(kept.into_bytes()),
                raised,
            ),
        },
        ColumnType::Enum(members) => match crate::coerce::enum_member(&v, members, col) {
            Some(m) => Ok(Value::Bytes(m.as_bytes().to_vec())),
            // The empty string is MariaDB's "error value" of an ENUM (index 0).
            None => dest.lossy(dest.truncated(name), Value::Bytes(Vec::new()), raised),
        },
        ColumnType::Char(n) | ColumnType::VarChar(n) => {
            let b = to_text(&v).map(|c| c.into_owned()).unwrap_or_default();
            let mut b = utf8_text(b, name, dest, raised)?;
            if matches!(col.ty, ColumnType::Char(_)) {
                while b.last() == Some(&b' ') {
                    b.pop();
                }
            }
            fit_text(b, *n as usize, Unit::Chars, name, dest, raised)
        }
        ColumnType::Binary(n) | ColumnType::VarBinary(n) => {
            let b = to_text(&v).map(|c| c.into_owned()).unwrap_or_default();
            let mut b = match fit_text(b, *n as usize, Unit::Bytes, name, dest, raised)? {
                Value::Bytes(b) => b,
                other => return Ok(other),
            };
            if matches!(col.ty, ColumnType::Binary(_)) {
                b.resize(*n as usize, 0);
            }
            Ok(Value::Bytes(b))
        }
        ColumnType::Text(size) | ColumnType::Blob(size) => {
            let b = to_text(&v).map(|c| c.into_owned()).unwrap_or_default();
            let max = usize::try_from(size.max_bytes()).unwrap_or(usize::MAX);
            if matches!(col.ty, ColumnType::Text(_)) {
                let b = utf8_text(b, name, dest, raised)?;
                fit_text(b, max, Unit::TextBytes, name, dest, raised)
            } else {
                fit_text(b, max, Unit::Bytes, name, dest, raised)
            }
        }
        ColumnType::Date => fit_date(&v, None, name, dest, raised),
        ColumnType::Time(n) => fit_time(&v, *n, name, dest, raised),
        ColumnType::DateTime(n) => fit_date(&v, Some(*n), name, dest, raised),
        ColumnType::Timestamp(n) => {
            let fitted = fit_date(&v, Some(*n), name, dest, raised)?;
            match &fitted {
                Value::Bytes(b) if !timestamp_in_range(b) => {
                    if dest.lenient {
                        raised.push(Warning::warn(1264, dest.out_of_range(name).message));
                        Ok(Value::Bytes(zero_datetime(*n).into_bytes()))
                    } else {
                        Err(dest.incorrect(1292, "datetime", &v, name))
                    }
                }
                _ => Ok(fitted),
            }
        }
    }
}

/// Bytes for a utf8mb4 text column: as they are when they are UTF-8; otherwise error 1366
/// "Incorrect string value" in strict mode, or (lenient) each invalid byte stored as `?` with
/// that warning, as MariaDB does. (Statements may carry raw bytes: `crate::rawtext`.)
fn utf8_text(
    b: Vec<u8>,
    name: &str,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Vec<u8>, SqlError> {
    let Err(bad) = std::str::from_utf8(&b) else {
        return Ok(b);
    };
    // MariaDB shows the value from the first bad byte, at most 6 bytes, bad ones as \xHH.
    let at = bad.valid_up_to();
    let mut shown = String::new();
    for &c in b[at..].iter().take(6) {
        if c.is_ascii() && !c.is_ascii_control() {
            shown.push(char::from(c));
        } else {
            shown.push_str(&format!("\\x{c:02X}"));
        }
    }
    if b.len() - at > 6 {
        shown.push_str("...");
    }
    let e = SqlError::new(
        1366,
        "22007",
        format!(
            "Incorrect string value: '{shown}' for column {} at row {}",
            dest.column_named(name),
            dest.row
        ),
    );
    if !dest.lenient {
        return Err(e);
    }
    raised.push(Warning::warn(e.code, e.message));
    let mut out = Vec::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        out.extend_from_slice(chunk.valid().as_bytes());
        if !chunk.invalid().is_empty() {
            out.push(b'?');
        }
    }
    Ok(out)
}

fn clamp_round(d: f64, lo: i128, hi: i128) -> i128 {
    let r = d.round();
    if r.is_nan() {
        0
    } else if r <= lo as f64 {
        lo
    } else if r >= hi as f64 {
        hi
    } else {
        r as i128
    }
}

/// `d` within ±`max`, single precision when `max` is FLOAT's.
fn fit_float(d: f64, max: f64) -> f64 {
    let d = if d.is_nan() { 0.0 } else { d.clamp(-max, max) };
    if max < f64::MAX {
        f64::from(d as f32)
    } else {
        d
    }
}

fn decimal_zero(scale: u8) -> Value {
    crate::ddl::implicit_default(&ColumnType::Decimal {
        precision: 65,
        scale,
        unsigned: false,
    })
}

/// The largest DECIMAL(p, s) value (999.99 for (5, 2)), negated for `neg`.
fn decimal_max(p: u8, s: u8, neg: bool) -> Value {
    let int = usize::from(p.saturating_sub(s));
    let mut t = String::with_capacity(usize::from(p) + 3);
    if neg {
        t.push('-');
    }
    if int == 0 {
        t.push('0');
    }
    t.extend(std::iter::repeat_n('9', int));
    if s > 0 {
        t.push('.');
        t.extend(std::iter::repeat_n('9', usize::from(s)));
    }
    Value::Bytes(t.into_bytes())
}

/// `digits` (a number's text) as DECIMAL(p, s), or its largest value when it does not fit.
fn decimal_clamped(digits: &str, p: u8, s: u8) -> Value {
    match crate::coerce::format_decimal(digits, p, s) {
        crate::coerce::DecimalResult::Ok(out) => Value::Bytes(out.into_bytes()),
        crate::coerce::DecimalResult::Invalid => decimal_zero(s),
        crate::coerce::DecimalResult::OutOfRange => decimal_max(p, s, digits.starts_with('-')),
    }
}

/// Sign, digits, and at most one '.' with at least one digit: DECIMAL text as written.
fn is_plain_decimal(t: &str) -> bool {
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    !(int.is_empty() && frac.is_empty())
        && int.bytes().all(|c| c.is_ascii_digit())
        && frac.bytes().all(|c| c.is_ascii_digit())
}

/// Whether rounding decimal text to `scale` fraction digits drops a digit other than 0.
fn drops_digits(text: &str, scale: u8) -> bool {
    let t = text.trim();
    match t.find('.') {
        Some(dot) => t[dot + 1..]
            .bytes()
            .skip(usize::from(scale))
            .any(|c| c != b'0'),
        None => false,
    }
}

/// How a string column measures its length.
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    /// Characters (CHAR, VARCHAR); spaces beyond the length are cut with a note.
    Chars,
    /// Bytes, cut at a character boundary (TEXT); spaces beyond it are cut with a note.
    TextBytes,
    /// Bytes (BINARY, VARBINARY, BLOB).
    Bytes,
}

/// `b` cut to `max` units: 1406 in strict mode (1265 with the cut when lenient); a cut of
/// spaces only is a note in every mode (not for binary strings).
fn fit_text(
    mut b: Vec<u8>,
    max: usize,
    unit: Unit,
    name: &str,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Value, SqlError> {
    let text = std::str::from_utf8(&b).ok();
    // The byte length of the first `max` units (None: it fits).
    let cut = match (unit, text) {
        (Unit::Chars, Some(s)) => s.char_indices().nth(max).map(|(i, _)| i),
        (Unit::TextBytes, Some(s)) if b.len() > max => Some(
            (0..=max)
                .rev()
                .find(|&i| s.is_char_boundary(i))
                .unwrap_or(0),
        ),
        _ => (b.len() > max).then_some(max),
    };
    let Some(cut) = cut else {
        return Ok(Value::Bytes(b));
    };
    let spaces_only = unit != Unit::Bytes && b[cut..].iter().all(|&c| c == b' ');
    b.truncate(cut);
    if spaces_only {
        dest.note_truncated(name, raised);
        Ok(Value::Bytes(b))
    } else if dest.lenient {
        // The lenient cut is 1265, not the strict 1406.
        raised.push(Warning::warn(1265, dest.truncated_msg(name)));
        Ok(Value::Bytes(b))
    } else {
        Err(dest.too_long(name))
    }
}

/// A DATE (`with_time` false) or DATETIME value: 1292 in strict mode; lenient, the date
/// that starts the text (or the zero date) with 1265. A time of day dropped from a DATE
/// is a note.
/// A TIMESTAMP holds 1970-01-01 00:00:01 ..= 2038-01-19 03:14:07 (UTC, the server's time
/// zone) and the zero value; `b` is canonical datetime text.
fn timestamp_in_range(b: &[u8]) -> bool {
    let Some(s) = b.get(..19) else {
        return false;
    };
    s == b"0000-00-00 00:00:00"
        || (&b"1970-01-01 00:00:01"[..] <= s && s <= &b"2038-01-19 03:14:07"[..])
}

/// A TIME(fsp) column's text for `v` (`crate::time`): 1292 for what is no time or lies past
/// ±838:59:59 (outside strict mode: 00:00:00 with warning 1265, or the nearest end with
/// 1264); note 1265 when a datetime's date is dropped.
fn fit_time(
    v: &Value,
    fsp: u8,
    name: &str,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Value, SqlError> {
    let text = |m: i64| Ok(Value::Bytes(crate::time::text(m, fsp).into_bytes()));
    match crate::time::parse(v).map(|t| crate::time::in_range(t.micros)) {
        Some(Ok(m)) => {
            if matches!(v, Value::Bytes(b) if b.iter().skip(1).any(|&c| c == b'-')) {
                dest.note_truncated(name, raised);
            }
            text(m)
        }
        _ if !dest.lenient => Err(dest.incorrect(1292, "time", v, name)),
        Some(Err(nearest)) => {
            raised.push(Warning::warn(1264, dest.out_of_range(name).message));
            text(nearest)
        }
        None => {
            raised.push(Warning::warn(1265, dest.truncated_msg(name)));
            text(0)
        }
    }
}

fn fit_date(
    v: &Value,
    fsp: Option<u8>,
    name: &str,
    dest: &Dest,
    raised: &mut Raised,
) -> Result<Value, SqlError> {
    if let Some(out) = parse_temporal(v, fsp) {
        // A DATE given a time of day, or text with more fraction digits than microseconds:
        // note 1265, as MariaDB (a fraction cut to the column's precision is silent).
        let time_cut = fsp.is_none()
            && parse_datetime(v, true).is_some_and(|full| !full.ends_with(b" 00:00:00"));
        let long_fraction =
            fsp.is_some() && matches!(v, Value::Bytes(b) if crate::coerce::fraction_digits(b) > 6);
        if time_cut || long_fraction {
            dest.note_truncated(name, raised);
        }
        return Ok(Value::Bytes(out));
    }
    let kind = if fsp.is_some() { "datetime" } else { "date" };
    if !dest.lenient {
        return Err(dest.incorrect(1292, kind, v, name));
    }
    // The longest start of the text that reads as a date and is followed by something that
    // cannot continue one ('2020-01-01x'; not '2020-02-30' read as '2020-02-3').
    let text = to_text(v).map(|c| c.into_owned()).unwrap_or_default();
    let prefix = (1..text.len()).rev().find_map(|n| {
        let next = text[n];
        if next.is_ascii_digit() || b"-: T.".contains(&next) {
            return None;
        }
        parse_temporal(&Value::Bytes(text[..n].to_vec()), fsp)
    });
    let zero = match fsp {
        Some(n) => zero_datetime(n).into_bytes(),
        None => b"0000-00-00".to_vec(),
    };
    raised.push(Warning::warn(1265, dest.truncated_msg(name)));
    Ok(Value::Bytes(prefix.unwrap_or(zero)))
}
