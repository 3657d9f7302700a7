//! Value conversions with MySQL semantics: number parsing from strings, SQL comparison,
//! a total order for sorting/grouping, truthiness, text formatting, and coercion of a value
//! into a column's storage form (strict mode: bad values are errors, not warnings).
//!
//! Owns: every rule about how one `Value` variant turns into another.
//! Must never: panic on any input value (all parsing is bounds-checked), or allocate when a
//! borrowed answer will do on the per-row paths (`compare`, `to_f64`, `truthy`).

use crate::result::SqlError;
use std::borrow::Cow;
use std::cmp::Ordering;
use tierdb_engine::{Collation, ColumnDef, Value};

/// -2^63 and 2^63 as doubles: the integer range an f64 must lie in to convert to i64.
pub const I64_MIN_F: f64 = i64::MIN as f64;
pub const I64_END_F: f64 = -(i64::MIN as f64);
/// 2^64 as a double: every u64 lies below it.
pub const U64_END_F: f64 = 2.0 * I64_END_F;

/// Parses the longest numeric prefix of `b` the way MySQL converts a string to a number
/// (leading spaces, sign, digits, fraction, exponent). Returns the number and whether the
/// whole string (ignoring surrounding spaces) was a valid number.
pub fn parse_number(b: &[u8]) -> (f64, bool) {
    match scan_number(b) {
        None => (0.0, false),
        Some((v, end)) => (v, b[end..].iter().all(u8::is_ascii_whitespace)),
    }
}

/// The numeric prefix of `b` (see `parse_number`): its value and where it ends; `None` when
/// `b` starts with no number at all.
pub fn scan_number(b: &[u8]) -> Option<(f64, usize)> {
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut ndigits = i - digits_start;
    if i < b.len() && b[i] == b'.' {
        let f = i + 1;
        let mut j = f;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        ndigits += j - f;
        if ndigits > 0 {
            i = j;
        }
    }
    if ndigits == 0 {
        return None;
    }
    let mut end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let es = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > es {
            end = j;
        }
    }
    let text = std::str::from_utf8(&b[start..end]).unwrap_or("0");
    Some((text.parse().unwrap_or(0.0), end))
}

/// Parses a whole string as an integer when it is one (no fraction, no exponent).
pub fn parse_int_exact(b: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(b).ok()?.trim();
    s.parse::<i64>().ok()
}

/// `parse_int_exact` that also reads integers up to 2^64 - 1 (as `Value::UInt`).
pub fn parse_integer_exact(b: &[u8]) -> Option<Value> {
    match parse_int_exact(b) {
        Some(i) => Some(Value::Int(i)),
        None => {
            let s = std::str::from_utf8(b).ok()?.trim();
            s.parse::<u64>().ok().map(Value::from_u64)
        }
    }
}

/// The number a string reads as: an exact integer when it is one (up to 2^64 - 1), else its
/// numeric prefix as a double.
pub fn number_of_bytes(b: &[u8]) -> Value {
    parse_integer_exact(b).unwrap_or_else(|| Value::Double(parse_number(b).0))
}

/// Numeric value of `v` (strings parsed by prefix, like MySQL). `None` for NULL.
pub fn to_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        Value::Double(d) => Some(*d),
        Value::Bytes(b) => Some(parse_number(b).0),
    }
}

/// Rounds a double to i64 the MySQL way (half away from zero), saturating.
pub fn round_f64_to_i64(d: f64) -> i64 {
    if d.is_nan() {
        return 0;
    }
    let r = d.round();
    if r >= I64_END_F {
        i64::MAX
    } else if r <= I64_MIN_F {
        i64::MIN
    } else {
        r as i64
    }
}

/// Integer value of `v` (doubles rounded, strings parsed, integers above `i64::MAX`
/// saturated). `None` for NULL.
pub fn to_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i),
        Value::UInt(_) => Some(i64::MAX),
        Value::Double(d) => Some(round_f64_to_i64(*d)),
        Value::Bytes(b) => match parse_int_exact(b) {
            Some(i) => Some(i),
            None => Some(round_f64_to_i64(parse_number(b).0)),
        },
    }
}

/// A double's text where a string is made of it (CAST AS CHAR, CONCAT, comparisons with
/// text): as MariaDB prints it, the same text a result set shows (`result::format_double`).
pub fn format_double(d: f64) -> String {
    crate::result::format_double(d)
}

/// The text form of a value (numbers formatted, bytes as-is). `None` for NULL.
pub fn to_text(v: &Value) -> Option<Cow<'_, [u8]>> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(Cow::Owned(i.to_string().into_bytes())),
        Value::UInt(u) => Some(Cow::Owned(u.to_string().into_bytes())),
        Value::Double(d) => Some(Cow::Owned(format_double(*d).into_bytes())),
        Value::Bytes(b) => Some(Cow::Borrowed(b)),
    }
}

/// SQL truth value: `None` for NULL, numbers are true when non-zero.
pub fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(*i != 0),
        Value::UInt(_) => Some(true),
        Value::Double(d) => Some(*d != 0.0),
        Value::Bytes(b) => Some(parse_number(b).0 != 0.0),
    }
}

/// Exact comparison of an integer with a double (transitive, unlike a cast to f64).
pub fn cmp_int_double(i: i64, d: f64) -> Ordering {
    if d.is_nan() {
        return Ordering::Less;
    }
    if d >= I64_END_F {
        return Ordering::Less;
    }
    if d < I64_MIN_F {
        return Ordering::Greater;
    }
    let t = d.trunc();
    let ti = t as i64;
    match i.cmp(&ti) {
        Ordering::Equal => {
            let f = d - t;
            if f > 0.0 {
                Ordering::Less
            } else if f < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        o => o,
    }
}

/// Exact comparison of an integer above `i64::MAX` with a double.
fn cmp_uint_double(u: u64, d: f64) -> Ordering {
    if d.is_nan() || d >= U64_END_F {
        return Ordering::Less;
    }
    if d < I64_END_F {
        return Ordering::Greater;
    }
    // d is an integer here (doubles this large have no fraction).
    u.cmp(&(d as u64))
}

fn cmp_num(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.cmp(y),
        (Value::Int(_), Value::UInt(_)) => Ordering::Less,
        (Value::UInt(_), Value::Int(_)) => Ordering::Greater,
        (Value::UInt(x), Value::Double(y)) => cmp_uint_double(*x, *y),
        (Value::Double(x), Value::UInt(y)) => cmp_uint_double(*y, *x).reverse(),
        (Value::Int(x), Value::Double(y)) => cmp_int_double(*x, *y),
        (Value::Double(x), Value::Int(y)) => cmp_int_double(*y, *x).reverse(),
        (Value::Double(x), Value::Double(y)) => x.total_cmp(y),
        _ => Ordering::Equal,
    }
}

/// SQL comparison (`=`, `<`, ...): `None` when either side is NULL. Numbers compare
/// numerically; a number against a string converts the string to a number; strings compare
/// under the default collation, `utf8mb4_general_ci` (case- and accent-insensitive, trailing
/// spaces ignored), as MariaDB compares text that involves no binary column.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    compare_in(a, b, Collation::GeneralCi)
}

/// `compare` with strings under collation `coll`.
pub fn compare_in(a: &Value, b: &Value, coll: Collation) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Bytes(x), Value::Bytes(y)) => Some(coll.cmp(x, y)),
        (Value::Bytes(x), n) => Some(cmp_num(&number_of_bytes(x), n)),
        (n, Value::Bytes(y)) => Some(cmp_num(n, &number_of_bytes(y))),
        _ => Some(cmp_num(a, b)),
    }
}

/// `sort_cmp` for DECIMAL values (text such as "-10.50"): values that read as plain decimal
/// numbers (DECIMAL text, integers, doubles) compare as numbers, exactly; NULL first; anything
/// else after the numbers, by bytes. A total order (sorting relies on it).
pub fn sort_cmp_decimal(a: &Value, b: &Value) -> Ordering {
    // The text of a value (None for NULL); Bytes are borrowed, numbers formatted.
    fn text(v: &Value) -> Option<Cow<'_, [u8]>> {
        match v {
            Value::Null => None,
            Value::Bytes(b) => Some(Cow::Borrowed(b.as_slice())),
            Value::Int(i) => Some(Cow::Owned(i.to_string().into_bytes())),
            Value::UInt(u) => Some(Cow::Owned(u.to_string().into_bytes())),
            // Rust prints doubles in full positional notation (no exponent).
            Value::Double(d) => Some(Cow::Owned(d.to_string().into_bytes())),
        }
    }
    match (text(a), text(b)) {
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Less,
        (_, None) => Ordering::Greater,
        (Some(x), Some(y)) => match (decimal_parts(&x), decimal_parts(&y)) {
            (Some(p), Some(q)) => cmp_decimal_parts(&p, &q),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => x.cmp(&y),
        },
    }
}

/// (negative, integer digits, fraction digits) of a plain decimal text: an optional sign,
/// digits, an optional point and fraction digits; None for anything else (exponents,
/// spaces, ...).
pub(crate) fn plain_decimal_parts(b: &[u8]) -> Option<(bool, &[u8], &[u8])> {
    let (neg, rest) = match b.split_first() {
        Some((b'-', r)) => (true, r),
        Some((b'+', r)) => (false, r),
        _ => (false, b),
    };
    let (int, frac) = match rest.iter().position(|&c| c == b'.') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &rest[rest.len()..]),
    };
    if int.is_empty() && frac.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return None;
    }
    Some((neg, int, frac))
}

/// `plain_decimal_parts` with the integer digits' leading zeros and the fraction's trailing
/// zeros cut.
fn decimal_parts(b: &[u8]) -> Option<(bool, &[u8], &[u8])> {
    let (neg, int, frac) = plain_decimal_parts(b)?;
    let lead = int.iter().take_while(|&&c| c == b'0').count();
    let trail = frac.iter().rev().take_while(|&&c| c == b'0').count();
    let (int, frac) = (&int[lead..], &frac[..frac.len() - trail]);
    // Minus zero is zero.
    Some((neg && !(int.is_empty() && frac.is_empty()), int, frac))
}

fn cmp_decimal_parts(p: &(bool, &[u8], &[u8]), q: &(bool, &[u8], &[u8])) -> Ordering {
    let magnitude = |a: &(bool, &[u8], &[u8]), b: &(bool, &[u8], &[u8])| {
        a.1.len()
            .cmp(&b.1.len())
            .then_with(|| a.1.cmp(b.1))
            .then_with(|| a.2.cmp(b.2))
    };
    match (p.0, q.0) {
        (false, true) => Ordering::Greater,
        (true, false) => Ordering::Less,
        (false, false) => magnitude(p, q),
        (true, true) => magnitude(q, p),
    }
}

/// A total order for ORDER BY, DISTINCT and GROUP BY: NULL first, then numbers (exactly),
/// then strings under the default collation (see `compare`).
pub fn sort_cmp(a: &Value, b: &Value) -> Ordering {
    sort_cmp_in(a, b, Collation::GeneralCi)
}

/// `sort_cmp` with strings under collation `coll`.
pub fn sort_cmp_in(a: &Value, b: &Value, coll: Collation) -> Ordering {
    fn class(v: &Value) -> u8 {
        match v {
            Value::Null => 0,
            Value::Int(_) | Value::UInt(_) | Value::Double(_) => 1,
            Value::Bytes(_) => 2,
        }
    }
    match (a, b) {
        (Value::Bytes(x), Value::Bytes(y)) => coll.cmp(x, y),
        _ => match class(a).cmp(&class(b)) {
            Ordering::Equal if class(a) == 1 => cmp_num(a, b),
            o => o,
        },
    }
}

/// A row of values ordered by `sort_cmp`, column by column; bit i of the mask set = column i
/// (i < 64) compares its strings byte by byte (a binary column).
#[derive(Clone, Debug)]
pub struct OrdRow(pub Vec<Value>, pub u64);

impl PartialEq for OrdRow {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for OrdRow {}
impl PartialOrd for OrdRow {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdRow {
    fn cmp(&self, other: &Self) -> Ordering {
        for (i, (a, b)) in self.0.iter().zip(other.0.iter()).enumerate() {
            let o = sort_cmp_in(a, b, collation_of_bit(self.1, i));
            if o != Ordering::Equal {
                return o;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

/// The collation of column `i` under binary-column mask `mask` (see `OrdRow`).
pub fn collation_of_bit(mask: u64, i: usize) -> Collation {
    if i < 64 && mask >> i & 1 == 1 {
        Collation::Binary
    } else {
        Collation::GeneralCi
    }
}

/// Integer range of an integer column.
pub fn int_range(bytes: u8, unsigned: bool) -> (i128, i128) {
    let bits = u32::from(bytes.clamp(1, 8)) * 8;
    if unsigned {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

/// Characters of a SET's every member joined by commas (its display width).
pub fn set_width(members: &[String]) -> u32 {
    let chars: usize = members.iter().map(|m| m.chars().count()).sum();
    (chars + members.len().saturating_sub(1)) as u32
}

/// Characters of an ENUM's longest member (its display width).
pub fn enum_width(members: &[String]) -> u32 {
    members
        .iter()
        .map(|m| m.chars().count() as u32)
        .max()
        .unwrap_or(0)
}

/// Converts `v` into the storage form of `col` in strict mode, with no table named in
/// messages and notes dropped (see `fit::fit` for writes). `row` is 1-based, for messages.
/// NULL is returned as NULL; the caller decides about NOT NULL and AUTO_INCREMENT.
pub fn coerce_to_column(v: Value, col: &ColumnDef, row: usize) -> Result<Value, SqlError> {
    let mut notes = crate::result::Raised::default();
    crate::fit::fit(v, col, &crate::fit::Dest::strict(row), &mut notes)
}

/// The member of ENUM column `col` that `v` names: by name (as the column's collation
/// compares, trailing spaces ignored) or by number (1 = the first, also as text).
pub fn enum_member<'m>(v: &Value, members: &'m [String], col: &ColumnDef) -> Option<&'m String> {
    let pick = match v {
        Value::Int(i) => usize::try_from(*i).ok().and_then(|i| i.checked_sub(1)),
        Value::Double(d) if d.fract() == 0.0 && *d >= 1.0 => Some(*d as usize - 1),
        Value::UInt(_) | Value::Double(_) | Value::Null => None,
        Value::Bytes(b) => {
            let mut b = b.as_slice();
            while b.last() == Some(&b' ') {
                b = &b[..b.len() - 1];
            }
            members
                .iter()
                .position(|m| col.collation.cmp(m.as_bytes(), b).is_eq())
                // Not a member's name: a number in text picks by number ('2').
                .or_else(|| {
                    std::str::from_utf8(b)
                        .ok()
                        .and_then(|t| t.trim().parse::<usize>().ok())
                        .and_then(|i| i.checked_sub(1))
                })
        }
    };
    pick.and_then(|i| members.get(i))
}

/// A SET column's stored text for `v`: the members it names (text: names separated by `,`,
/// compared as the column's collation, trailing spaces ignored; a number: a bit mask, bit
/// i naming member i + 1) in member order, joined by `,`. Err with the members that were
/// found when something names no member (a name, a bit past the members).
pub fn set_value(v: &Value, members: &[String], col: &ColumnDef) -> Result<String, String> {
    let join = |mask: u64| -> String {
        members
            .iter()
            .enumerate()
            .filter(|(i, _)| mask >> i & 1 == 1)
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    let all = if members.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << members.len()) - 1
    };
    let mask = match v {
        Value::Int(i) if *i >= 0 => *i as u64,
        Value::UInt(u) => *u,
        Value::Double(d) if d.is_finite() && *d >= 0.0 => d.round() as u64,
        Value::Int(_) | Value::Double(_) | Value::Null => return Err(String::new()),
        Value::Bytes(b) => {
            let mut mask = 0u64;
            let mut bad = false;
            for part in b.split(|&c| c == b',') {
                let mut p = part;
                while p.last() == Some(&b' ') {
                    p = &p[..p.len() - 1];
                }
                if p.is_empty() && b.is_empty() {
                    continue;
                }
                match members
                    .iter()
                    .position(|m| col.collation.cmp(m.as_bytes(), p).is_eq())
                {
                    Some(i) => mask |= 1 << i,
                    None => bad = true,
                }
            }
            // A number in text is a bit mask ('3').
            if bad && mask == 0 {
                if let Some(n) = std::str::from_utf8(b)
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok())
                {
                    return if n & !all == 0 {
                        Ok(join(n))
                    } else {
                        Err(join(n & all))
                    };
                }
            }
            return if bad { Err(join(mask)) } else { Ok(join(mask)) };
        }
    };
    if mask & !all == 0 {
        Ok(join(mask))
    } else {
        Err(join(mask & all))
    }
}

/// The bit mask of SET text `b` (its members as stored, in member order) among `members`:
/// bit i for member i + 1 (`s + 0`, ORDER BY); a part naming no member adds nothing.
pub fn set_mask<'m>(b: &[u8], members: impl Iterator<Item = &'m [u8]>) -> u64 {
    if b.is_empty() {
        return 0;
    }
    let parts: Vec<&[u8]> = b.split(|&c| c == b',').collect();
    members
        .take(64)
        .enumerate()
        .filter(|(_, m)| parts.contains(m))
        .fold(0u64, |mask, (i, _)| mask | 1 << i)
}

/// `d` as decimal text with `scale` digits after the point, rounded half away from zero on
/// its shortest digits as MariaDB rounds decimals (`format!("{:.4}")` would round 0.03125
/// to even: 0.0312).
pub fn decimal_text(d: f64, scale: u8) -> String {
    match format_decimal(&d.to_string(), 65, scale) {
        DecimalResult::Ok(s) if d.is_finite() => s,
        _ => format!("{:.*}", usize::from(scale), d),
    }
}

/// DECIMAL text as the protocol shows it in a column of `scale` decimals: text with
/// another number of fraction digits (an exact division, kept whole for the expressions
/// reading it; a rounded value) rounded half away from zero or padded to the scale; other
/// text (already at the scale, or not a plain decimal) unchanged.
pub fn decimal_bytes_at(b: &[u8], scale: u8) -> Cow<'_, [u8]> {
    let frac = match b.iter().position(|&c| c == b'.') {
        Some(point) => b.len() - point - 1,
        None => 0,
    };
    if frac != usize::from(scale) {
        if let Ok(DecimalResult::Ok(s)) =
            std::str::from_utf8(b).map(|t| format_decimal(t, 65, scale))
        {
            return Cow::Owned(s.into_bytes());
        }
    }
    Cow::Borrowed(b)
}

pub enum DecimalResult {
    Ok(String),
    Invalid,
    OutOfRange,
}

/// Normalizes decimal text to exactly `scale` fraction digits (rounding half away from
/// zero) and checks it fits `precision`.
pub fn format_decimal(text: &str, precision: u8, scale: u8) -> DecimalResult {
    let t = text.trim();
    let (neg, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (ip, fp) = match body.find('.') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, ""),
    };
    if (ip.is_empty() && fp.is_empty())
        || !ip.bytes().all(|c| c.is_ascii_digit())
        || !fp.bytes().all(|c| c.is_ascii_digit())
    {
        return DecimalResult::Invalid;
    }
    let scale = usize::from(scale);
    let mut digits: Vec<u8> = ip.bytes().map(|c| c - b'0').collect();
    let mut frac: Vec<u8> = fp.bytes().map(|c| c - b'0').collect();
    let round_up = frac.len() > scale && frac[scale] >= 5;
    frac.resize(scale.max(frac.len().min(scale)), 0);
    frac.truncate(scale);
    while frac.len() < scale {
        frac.push(0);
    }
    if round_up {
        // Add one unit in the last place, carrying into the integer part.
        let mut carry = true;
        for d in frac.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                carry = false;
                break;
            }
        }
        if carry {
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    while digits.len() > 1 && digits[0] == 0 {
        digits.remove(0);
    }
    if digits.is_empty() {
        digits.push(0);
    }
    let int_digits = if digits == [0] { 0 } else { digits.len() };
    if int_digits + scale > usize::from(precision) {
        return DecimalResult::OutOfRange;
    }
    let zero = digits.iter().all(|&d| d == 0) && frac.iter().all(|&d| d == 0);
    let mut s = String::with_capacity(digits.len() + frac.len() + 2);
    if neg && !zero {
        s.push('-');
    }
    s.extend(digits.iter().map(|d| char::from(b'0' + d)));
    if scale > 0 {
        s.push('.');
        s.extend(frac.iter().map(|d| char::from(b'0' + d)));
    }
    DecimalResult::Ok(s)
}

/// Parses a date or datetime from text ('YYYY-MM-DD[ HH:MM:SS[.f]]', also 'YYYYMMDD[HHMMSS]'
/// and integers of that shape). Returns the canonical text, without fractional seconds.
pub fn parse_datetime(v: &Value, with_time: bool) -> Option<Vec<u8>> {
    parse_temporal(v, with_time.then_some(0))
}

/// `parse_datetime` for a column of `fsp`: None = DATE (`YYYY-MM-DD`), Some(n) = DATETIME(n)
/// (`YYYY-MM-DD HH:MM:SS`, then `.` and n fraction digits when n > 0; further digits are cut,
/// as MariaDB does with `time_round_fractional` off).
pub fn parse_temporal(v: &Value, fsp: Option<u8>) -> Option<Vec<u8>> {
    let (nums, micros) = datetime_fields(v)?;
    let (y, mo, d, h, mi, s) = (nums[0], nums[1], nums[2], nums[3], nums[4], nums[5]);
    let zero_date = y == 0 && mo == 0 && d == 0;
    if !zero_date && (mo == 0 || mo > 12 || d == 0 || d > days_in_month(y, mo)) {
        return None;
    }
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let mut out = format!("{y:04}-{mo:02}-{d:02}");
    if let Some(n) = fsp {
        out.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
        push_fraction(&mut out, micros, n);
    }
    Some(out.into_bytes())
}

/// A DATE or DATETIME value read as a number (`CastTo::TemporalNumber`): `YYYYMMDD` for a
/// date, `YYYYMMDDhhmmss` for a datetime, as an integer, or as DECIMAL text with `fsp` digits
/// after the point when fsp > 0. Anything else (a number, text that is no date) reads as it
/// would without the cast.
pub fn temporal_number(v: &Value, fsp: u8) -> Value {
    let Value::Bytes(b) = v else { return v.clone() };
    let date_only = !b.iter().any(|&c| c == b' ' || c == b'T');
    let Some(text) = parse_temporal(v, (!date_only).then_some(fsp)) else {
        return v.clone();
    };
    let digits: String = text
        .iter()
        .filter(|c| c.is_ascii_digit() || **c == b'.')
        .map(|&c| char::from(c))
        .collect();
    match digits.parse::<i64>() {
        Ok(n) => Value::Int(n),
        Err(_) => Value::Bytes(digits.into_bytes()),
    }
}

/// Year, month, day, hour, minute, second and microseconds of a date / datetime value, not
/// yet range-checked.
fn datetime_fields(v: &Value) -> Option<([u32; 6], u32)> {
    let text: String = match v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) if d.is_finite() => format!("{d}"),
        Value::Double(_) => return None,
        Value::Bytes(b) => String::from_utf8_lossy(b).trim().to_string(),
        Value::Null => return None,
    };
    // The fraction: digits after the first '.', once the text has a time part.
    let (main, frac) = match text.split_once('.') {
        Some((m, f)) => (m, Some(f)),
        None => (text.as_str(), None),
    };
    let micros_of = |f: Option<&str>| -> Option<u32> {
        let Some(f) = f else { return Some(0) };
        let digits: String = f.chars().take_while(char::is_ascii_digit).take(6).collect();
        if digits.is_empty() {
            return Some(0);
        }
        format!("{digits:0<6}").parse().ok()
    };
    if main.bytes().all(|c| c.is_ascii_digit()) {
        // A number: YYYYMMDD or YYYYMMDDHHMMSS (a fraction only after the latter).
        if frac.is_some_and(|f| !f.bytes().all(|c| c.is_ascii_digit())) {
            return None;
        }
        let b = main.as_bytes();
        let take = |s: usize, n: usize| -> Option<u32> {
            std::str::from_utf8(b.get(s..s + n)?).ok()?.parse().ok()
        };
        return match b.len() {
            8 => Some(([take(0, 4)?, take(4, 2)?, take(6, 2)?, 0, 0, 0], 0)),
            14 => Some((
                [
                    take(0, 4)?,
                    take(4, 2)?,
                    take(6, 2)?,
                    take(8, 2)?,
                    take(10, 2)?,
                    take(12, 2)?,
                ],
                micros_of(frac)?,
            )),
            _ => None,
        };
    }
    let parts: Vec<&str> = main.split(['-', ' ', ':', 'T']).collect();
    if parts.len() != 3 && parts.len() != 6 && parts.len() != 5 {
        return None;
    }
    let mut n = [0u32; 6];
    for (slot, p) in n.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 4 || !p.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *slot = p.parse().ok()?;
    }
    let micros = if parts.len() == 6 {
        micros_of(frac)?
    } else {
        0
    };
    Some((n, micros))
}

/// `v` as the text of a DATE (`fsp` None) or DATETIME(fsp) column holding the same point in
/// time, for comparing with that column's stored text byte by byte: `YYYY-MM-DD` (a DATE
/// with a time of day also gets ` HH:MM:SS`), the column's `fsp` fraction digits, then any
/// further non-zero digits (so the value sorts after the column's values it exceeds only
/// there). None when `v` is no date.
pub fn temporal_for_compare(v: &Value, fsp: Option<u8>) -> Option<Vec<u8>> {
    let full = parse_temporal(v, Some(6))?;
    let (base, frac) = (&full[..19], &full[20..]);
    let keep = usize::from(fsp.unwrap_or(0));
    let extra = frac[keep..]
        .iter()
        .rposition(|&c| c != b'0')
        .map_or(0, |i| i + 1);
    let mut out = Vec::with_capacity(26);
    match fsp {
        None if extra == 0 && base.ends_with(b" 00:00:00") => out.extend_from_slice(&base[..10]),
        _ => out.extend_from_slice(base),
    }
    if keep + extra > 0 {
        out.push(b'.');
        out.extend_from_slice(&frac[..keep + extra]);
    }
    Some(out)
}

/// Appends `.` and the first `fsp` of the six digits of `micros` (nothing when `fsp` is 0).
pub fn push_fraction(out: &mut String, micros: u32, fsp: u8) {
    if fsp > 0 {
        let all = format!("{:06}", micros.min(999_999));
        out.push('.');
        out.push_str(&all[..usize::from(fsp.min(6))]);
    }
}

/// Characters MariaDB announces for TIME(fsp): 10 (`-838:59:59`), 11 + fsp with a fraction.
pub fn time_width(fsp: u8) -> u32 {
    if fsp == 0 {
        10
    } else {
        11 + u32::from(fsp.min(6))
    }
}

/// Characters of DATETIME(fsp) text: 19, or 20 + fsp with a fraction.
pub fn datetime_width(fsp: u8) -> usize {
    if fsp == 0 {
        19
    } else {
        20 + usize::from(fsp)
    }
}

/// Digits after the first `.` of a text (0 without one).
pub fn fraction_digits(b: &[u8]) -> usize {
    b.iter().position(|&c| c == b'.').map_or(0, |i| {
        b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count()
    })
}

/// The zero DATETIME(fsp): `0000-00-00 00:00:00` and `fsp` zero digits.
pub fn zero_datetime(fsp: u8) -> String {
    let mut out = "0000-00-00 00:00:00".to_string();
    push_fraction(&mut out, 0, fsp);
    out
}

pub(crate) fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) {
                29
            } else {
                28
            }
        }
    }
}

/// (year, month, day, hour, minute, second) in UTC for a Unix time in seconds.
pub fn civil_from_unix(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (
        y,
        m,
        d,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

/// Current UTC time as 'YYYY-MM-DD HH:MM:SS', with `fsp` fraction digits.
pub fn now_text(fsp: u8) -> String {
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let (y, mo, d, h, mi, s) = civil_from_unix(us.div_euclid(1_000_000));
    let mut out = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    push_fraction(&mut out, us.rem_euclid(1_000_000) as u32, fsp);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_like_mysql() {
        assert_eq!(parse_number(b" 12abc"), (12.0, false));
        assert_eq!(parse_number(b"1.5e2"), (150.0, true));
        assert_eq!(parse_number(b"abc"), (0.0, false));
        assert_eq!(parse_number(b"-.5"), (-0.5, true));
    }

    #[test]
    fn decimals_round_and_check_precision() {
        let f = |t: &str| match format_decimal(t, 5, 2) {
            DecimalResult::Ok(s) => s,
            DecimalResult::Invalid => "invalid".into(),
            DecimalResult::OutOfRange => "range".into(),
        };
        assert_eq!(f("1.005"), "1.01");
        assert_eq!(f("999.995"), "range");
        assert_eq!(f("-0.001"), "0.00");
        assert_eq!(f("12"), "12.00");
        assert_eq!(f("x"), "invalid");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_unix(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil_from_unix(951_782_400), (2000, 2, 29, 0, 0, 0));
    }

    #[test]
    fn int_double_compare_is_exact() {
        assert_eq!(
            cmp_int_double(9_007_199_254_740_993, 9_007_199_254_740_992.0),
            Ordering::Greater
        );
        assert_eq!(cmp_int_double(2, 2.5), Ordering::Less);
        assert_eq!(cmp_int_double(-2, -2.5), Ordering::Greater);
    }
}
