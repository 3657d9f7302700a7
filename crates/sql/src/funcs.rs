//! Scalar functions that need nothing but their argument values: hashes (MD5, SHA1, SHA2,
//! CRC32), UUID() and RAND(), numbers (TRUNCATE, FORMAT, trigonometry, CONV / BIN / OCT,
//! BIT_COUNT), strings (ELT, CHAR, ORD, UNHEX, TO_BASE64 / FROM_BASE64, INET_ATON /
//! INET_NTOA), times of day (TIME_TO_SEC, SEC_TO_TIME, CURTIME), and week numbers (WEEK,
//! YEARWEEK, WEEKOFYEAR) and STR_TO_DATE.
//!
//! Owns: what each computes and its result type. Must never: panic on any value (every
//! argument may be NULL, text, a huge number or garbage), or look at anything but its
//! arguments and the clock.

use crate::coerce::{self, to_f64, to_i64, to_text};
use crate::expr::SqlType;
use crate::result::SqlError;
use tierdb_engine::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MiscFunc {
    Md5,
    Sha1,
    /// `SHA2(s, bits)`: 224, 256 (also 0), 384 or 512; NULL for other lengths.
    Sha2,
    Crc32,
    /// A random (version 4) UUID in MariaDB's text form.
    Uuid,
    Rand,
    /// `TRUNCATE(x, d)`: x cut (not rounded) to d decimals (d < 0: to tens, hundreds...).
    Truncate,
    /// `FORMAT(x, d)`: x rounded to d decimals with `,` between thousands.
    Format,
    IsNull,
    Pi,
    Sin,
    Cos,
    Tan,
    Cot,
    Asin,
    Acos,
    /// `ATAN(x)` or `ATAN(y, x)`.
    Atan,
    Atan2,
    Radians,
    Degrees,
    BitCount,
    /// `ELT(n, s1, s2, ...)`: the n-th string.
    Elt,
    /// `CHAR(n, ...)`: the bytes of each integer (big-endian, no leading zero bytes).
    Char,
    /// `ORD(s)`: the first character's bytes as one number.
    Ord,
    /// `CONV(n, from_base, to_base)`.
    Conv,
    Bin,
    Oct,
    Unhex,
    ToBase64,
    FromBase64,
    InetAton,
    InetNtoa,
    TimeToSec,
    SecToTime,
    /// `TIMEDIFF(a, b)`: a - b as a TIME, both TIMEs or both datetimes (else NULL).
    TimeDiff,
    /// `ADDTIME(a, t)` / `SUBTIME(a, t)`: a TIME or datetime `a` moved by TIME `t`.
    AddTime,
    SubTime,
    /// Internal (no SQL name): `(s, member...)`, SET value `s`'s bit mask among the members.
    SetMask,
    /// `TIME_FORMAT(t, format)`: DATE_FORMAT's time specifiers for a TIME (hours past 23
    /// kept); NULL when the format has a date specifier.
    TimeFormat,
    /// `CURTIME()` / `CURRENT_TIME` / `UTC_TIME()`: the time of day (UTC, the server's clock).
    CurTime,
    /// `WEEK(d[, mode])`.
    Week,
    /// `YEARWEEK(d[, mode])`: year * 100 + week.
    YearWeek,
    /// `WEEKOFYEAR(d)`: WEEK(d, 3).
    WeekOfYear,
    /// `STR_TO_DATE(s, format)`: a DATE, or a DATETIME when the format has time parts.
    StrToDate,
    /// `SLEEP(seconds)`: 0; woken early by a KILL, error 1317 (`crate::interrupt::sleep`).
    Sleep,
}

/// The function of that (upper-case) name, with its least and most argument counts.
pub fn named(name: &str) -> Option<(MiscFunc, usize, usize)> {
    use MiscFunc as M;
    Some(match name {
        "MD5" => (M::Md5, 1, 1),
        "SHA1" | "SHA" => (M::Sha1, 1, 1),
        "SHA2" => (M::Sha2, 2, 2),
        "CRC32" => (M::Crc32, 1, 1),
        "UUID" => (M::Uuid, 0, 0),
        "SLEEP" => (M::Sleep, 1, 1),
        "RAND" => (M::Rand, 0, 0),
        "TRUNCATE" => (M::Truncate, 2, 2),
        "FORMAT" => (M::Format, 2, 2),
        "ISNULL" => (M::IsNull, 1, 1),
        "PI" => (M::Pi, 0, 0),
        "SIN" => (M::Sin, 1, 1),
        "COS" => (M::Cos, 1, 1),
        "TAN" => (M::Tan, 1, 1),
        "COT" => (M::Cot, 1, 1),
        "ASIN" => (M::Asin, 1, 1),
        "ACOS" => (M::Acos, 1, 1),
        "ATAN" => (M::Atan, 1, 2),
        "ATAN2" => (M::Atan2, 2, 2),
        "RADIANS" => (M::Radians, 1, 1),
        "DEGREES" => (M::Degrees, 1, 1),
        "BIT_COUNT" => (M::BitCount, 1, 1),
        "ELT" => (M::Elt, 2, usize::MAX),
        "CHAR" => (M::Char, 1, usize::MAX),
        "ORD" => (M::Ord, 1, 1),
        "CONV" => (M::Conv, 3, 3),
        "BIN" => (M::Bin, 1, 1),
        "OCT" => (M::Oct, 1, 1),
        "UNHEX" => (M::Unhex, 1, 1),
        "TO_BASE64" => (M::ToBase64, 1, 1),
        "FROM_BASE64" => (M::FromBase64, 1, 1),
        "INET_ATON" => (M::InetAton, 1, 1),
        "INET_NTOA" => (M::InetNtoa, 1, 1),
        "TIME_TO_SEC" => (M::TimeToSec, 1, 1),
        "SEC_TO_TIME" => (M::SecToTime, 1, 1),
        "TIMEDIFF" => (M::TimeDiff, 2, 2),
        "ADDTIME" => (M::AddTime, 2, 2),
        "SUBTIME" => (M::SubTime, 2, 2),
        "TIME_FORMAT" => (M::TimeFormat, 2, 2),
        "CURTIME" | "CURRENT_TIME" | "UTC_TIME" => (M::CurTime, 0, 0),
        "WEEK" => (M::Week, 1, 2),
        "YEARWEEK" => (M::YearWeek, 1, 2),
        "WEEKOFYEAR" => (M::WeekOfYear, 1, 1),
        "STR_TO_DATE" => (M::StrToDate, 2, 2),
        _ => return None,
    })
}

/// The result type, given the arguments' types.
pub fn result_type(f: MiscFunc, args: &[SqlType]) -> SqlType {
    use MiscFunc as M;
    match f {
        M::Crc32
        | M::IsNull
        | M::BitCount
        | M::Ord
        | M::InetAton
        | M::TimeToSec
        | M::Week
        | M::YearWeek
        | M::WeekOfYear
        | M::SetMask
        | M::Sleep => SqlType::Int,
        M::Rand
        | M::Pi
        | M::Sin
        | M::Cos
        | M::Tan
        | M::Cot
        | M::Asin
        | M::Acos
        | M::Atan
        | M::Atan2
        | M::Radians
        | M::Degrees => SqlType::Double,
        M::Truncate => match args.first() {
            Some(SqlType::Int) => SqlType::Int,
            Some(SqlType::Decimal(s)) => SqlType::Decimal(*s),
            _ => SqlType::Double,
        },
        M::TimeDiff | M::SecToTime | M::CurTime => SqlType::Time,
        M::AddTime | M::SubTime => match args.first() {
            Some(SqlType::Time) => SqlType::Time,
            Some(SqlType::DateTime) => SqlType::DateTime,
            _ => SqlType::Text,
        },
        // STR_TO_DATE is typed by its result (a date or a datetime text).
        _ => SqlType::Text,
    }
}

/// True when the function never gives NULL (as MariaDB reports it to clients), given
/// whether all its arguments are never NULL.
pub fn never_null(f: MiscFunc, args_never_null: bool) -> bool {
    use MiscFunc as M;
    match f {
        M::IsNull | M::Rand | M::Pi | M::CurTime | M::Sleep => true,
        M::Md5 | M::Sha1 | M::Crc32 | M::BitCount | M::Ord | M::Truncate => args_never_null,
        _ => false,
    }
}

/// Decimal text `t` rounded half away from zero to `d` decimals (None: not a number).
fn round_decimal_text(t: &str, d: usize) -> Option<String> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut digits: Vec<u8> = int
        .bytes()
        .chain(frac.bytes().chain(std::iter::repeat(b'0')).take(d))
        .collect();
    if digits.is_empty() {
        digits.push(b'0');
    }
    if frac.as_bytes().get(d).is_some_and(|c| *c >= b'5') {
        let mut k = digits.len();
        loop {
            if k == 0 {
                digits.insert(0, b'1');
                break;
            }
            k -= 1;
            if digits[k] == b'9' {
                digits[k] = b'0';
            } else {
                digits[k] += 1;
                break;
            }
        }
    }
    let split = digits.len() - d;
    let int_part = std::str::from_utf8(&digits[..split])
        .ok()?
        .trim_start_matches('0');
    let int_part = if int_part.is_empty() { "0" } else { int_part };
    let frac_part = std::str::from_utf8(&digits[split..]).ok()?;
    let zero = digits.iter().all(|c| *c == b'0');
    let sign = if neg && !zero { "-" } else { "" };
    Some(if d > 0 {
        format!("{sign}{int_part}.{frac_part}")
    } else {
        format!("{sign}{int_part}")
    })
}

fn text_of(v: &Value) -> Option<Vec<u8>> {
    to_text(v).map(|t| t.into_owned())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn double(x: f64) -> Value {
    if x.is_finite() {
        Value::Double(x)
    } else {
        Value::Null
    }
}

/// CRC-32 with the polynomial zlib and MariaDB's CRC32() use (0xEDB88320, reflected).
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// `n` (text, in base `from`) in base `to`, as MariaDB's CONV: bases 2..36 (a negative
/// `to` prints a signed value); the digits read up to the first that is not one.
fn conv(n: &[u8], from: i64, to: i64) -> Option<String> {
    let (fa, ta) = (from.unsigned_abs(), to.unsigned_abs());
    if !(2..=36).contains(&fa) || !(2..=36).contains(&ta) {
        return None;
    }
    let text = std::str::from_utf8(n).ok()?.trim();
    let (neg, digits) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        let Some(d) = c.to_digit(36).filter(|d| u64::from(*d) < fa) else {
            break;
        };
        v = v.saturating_mul(fa).saturating_add(u64::from(d));
    }
    let (neg_out, mut v) = if neg {
        if to < 0 {
            (true, v)
        } else {
            (false, v.wrapping_neg())
        }
    } else if to < 0 && (v as i64) < 0 {
        (true, (v as i64).unsigned_abs())
    } else {
        (false, v)
    };
    let mut out = Vec::new();
    loop {
        let d = (v % ta) as u32;
        out.push(std::char::from_digit(d, 36)?.to_ascii_uppercase());
        v /= ta;
        if v == 0 {
            break;
        }
    }
    if neg_out {
        out.push('-');
    }
    Some(out.into_iter().rev().collect())
}

/// `x` to `d` decimals, not rounded.
fn truncate(x: &Value, d: i64) -> Value {
    let d = d.clamp(-40, 40);
    match x {
        Value::Null => Value::Null,
        Value::UInt(u) => {
            let p = 10u64.checked_pow(d.min(0).unsigned_abs() as u32);
            Value::from_u64(p.map_or(0, |p| u - u % p))
        }
        Value::Int(i) => {
            if d >= 0 {
                Value::Int(*i)
            } else {
                match 10i64.checked_pow(d.unsigned_abs() as u32) {
                    Some(p) => Value::Int(i - i % p),
                    None => Value::Int(0),
                }
            }
        }
        Value::Bytes(b) if coerce::parse_int_exact(b).is_none() => {
            // DECIMAL text (or a number in text): cut the digits.
            let t = String::from_utf8_lossy(b).trim().to_string();
            let valid = !t.is_empty()
                && t.trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '.');
            if !valid {
                return match to_f64(x) {
                    Some(f) => truncate(&Value::Double(f), d),
                    None => Value::Null,
                };
            }
            let (int, frac) = t.split_once('.').unwrap_or((&t, ""));
            if d >= 0 {
                let keep: String = frac.chars().take(d as usize).collect();
                Value::Bytes(
                    if keep.is_empty() {
                        int.to_string()
                    } else {
                        format!("{int}.{keep}")
                    }
                    .into_bytes(),
                )
            } else {
                match to_f64(&Value::Bytes(int.as_bytes().to_vec())) {
                    Some(f) => truncate(&Value::Double(f), d),
                    None => Value::Null,
                }
            }
        }
        other => match to_f64(other) {
            Some(f) => {
                let p = 10f64.powi(d as i32);
                double((f * p).trunc() / p)
            }
            None => Value::Null,
        },
    }
}

/// `x` rounded to `d` decimals (0..=30) with `,` between thousands.
fn format_number(x: &Value, d: i64) -> Option<String> {
    let d = d.clamp(0, 30) as usize;
    let text = match x {
        Value::Int(i) => round_decimal_text(&i.to_string(), d)?,
        Value::UInt(u) => round_decimal_text(&u.to_string(), d)?,
        Value::Bytes(b) => {
            let t = String::from_utf8_lossy(b).trim().to_string();
            match round_decimal_text(&t, d) {
                Some(s) => s,
                None => round_decimal_text(&format!("{:.17}", to_f64(x)?), d)?,
            }
        }
        other => {
            let f = to_f64(other)?;
            if !f.is_finite() {
                return None;
            }
            round_decimal_text(&format!("{f:.17}"), d)?
        }
    };
    let (neg, body) = match text.strip_prefix('-') {
        Some(r) => (true, r.to_string()),
        None => (false, text),
    };
    let (int, frac) = match body.split_once('.') {
        Some((i, f)) => (i.to_string(), Some(f.to_string())),
        None => (body.clone(), None),
    };
    let mut grouped = String::new();
    for (k, c) in int.chars().enumerate() {
        if k > 0 && (int.len() - k) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = if neg { format!("-{grouped}") } else { grouped };
    if let Some(f) = frac.filter(|_| d > 0) {
        out.push('.');
        out.push_str(&f);
    }
    Some(out)
}

/// MariaDB's `HH:MM:SS` text of a number of seconds (negative with `-`; hours past 24 kept;
/// at most 838:59:59, the TIME range).
fn time_text(secs: i64) -> String {
    let s = secs.clamp(-(838 * 3600 + 59 * 60 + 59), 838 * 3600 + 59 * 60 + 59);
    let a = s.unsigned_abs();
    format!(
        "{}{:02}:{:02}:{:02}",
        if s < 0 { "-" } else { "" },
        a / 3600,
        a / 60 % 60,
        a % 60
    )
}

/// Seconds of a time of day written `[-]H:MM[:SS]` (also the time part of a datetime, or a
/// number HHMMSS).
fn time_seconds(v: &Value) -> Option<i64> {
    let t = text_of(v)?;
    let t = std::str::from_utf8(&t).ok()?.trim();
    let t = t.rsplit(' ').next().unwrap_or(t);
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let t = t.split('.').next().unwrap_or(t);
    let parts: Vec<&str> = t.split(':').collect();
    let n = |s: &str| s.parse::<i64>().ok().filter(|x| *x >= 0);
    let secs = match parts.as_slice() {
        [h, m, s] => n(h)? * 3600 + n(m)?.min(59) * 60 + n(s)?.min(59),
        [h, m] => n(h)? * 3600 + n(m)?.min(59) * 60,
        [digits] => {
            let x = n(digits)?;
            x / 10000 * 3600 + x / 100 % 100 * 60 + x % 100
        }
        _ => return None,
    };
    Some(if neg { -secs } else { secs })
}

/// `micros` within the TIME range: the nearest end past it, with MariaDB's warning 1292.
fn clip_time(micros: i64, digits: u8) -> i64 {
    crate::time::in_range(micros).unwrap_or_else(|nearest| {
        crate::expr::expr_warning(
            1292,
            format!(
                "Truncated incorrect time value: '{}'",
                // (MariaDB shows a value with a fraction with all six digits.)
                crate::time::text(micros, if digits > 0 { 6 } else { 0 })
            ),
        );
        nearest
    })
}

/// `TIME_FORMAT` of `micros` (None: a date specifier in `fmt`).
fn time_format(micros: i64, fmt: &[u8]) -> Option<String> {
    let abs = micros.unsigned_abs();
    let secs = abs / 1_000_000;
    let (h, m, s, us) = (secs / 3600, secs / 60 % 60, secs % 60, abs % 1_000_000);
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let ampm = if h % 24 < 12 { "AM" } else { "PM" };
    let mut out = String::new();
    if micros < 0 {
        out.push('-');
    }
    let text = String::from_utf8_lossy(fmt);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('H') => out.push_str(&format!("{h:02}")),
            Some('k') => out.push_str(&h.to_string()),
            Some('h' | 'I') => out.push_str(&format!("{h12:02}")),
            Some('l') => out.push_str(&h12.to_string()),
            Some('i') => out.push_str(&format!("{m:02}")),
            Some('s' | 'S') => out.push_str(&format!("{s:02}")),
            Some('f') => out.push_str(&format!("{us:06}")),
            Some('p') => out.push_str(ampm),
            Some('r') => out.push_str(&format!("{h12:02}:{m:02}:{s:02} {ampm}")),
            Some('T') => out.push_str(&format!("{h:02}:{m:02}:{s:02}")),
            Some(
                'a' | 'b' | 'c' | 'D' | 'd' | 'e' | 'j' | 'M' | 'm' | 'U' | 'u' | 'V' | 'v' | 'W'
                | 'w' | 'X' | 'x' | 'Y' | 'y',
            ) => return None,
            Some(other) => out.push(other),
            None => out.push('%'),
        }
    }
    Some(out)
}

/// A datetime value (text with a date part: `YYYY-MM-DD HH:MM:SS[.f]`) as microseconds since
/// 1970-01-01, and its fraction digits; None for anything else (a TIME, a number).
fn datetime_micros(v: &Value) -> Option<(i64, u8)> {
    let Value::Bytes(b) = v else { return None };
    let t = std::str::from_utf8(b).ok()?.trim();
    if t.len() < 10 || !t.as_bytes()[..4].iter().all(u8::is_ascii_digit) || t.as_bytes()[4] != b'-'
    {
        return None;
    }
    let canon = coerce::parse_temporal(v, Some(6))?;
    let c = std::str::from_utf8(&canon).ok()?;
    let n = |r: std::ops::Range<usize>| c.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (h, mi, s, us) = (n(11..13)?, n(14..16)?, n(17..19)?, n(20..26)?);
    if mo == 0 || d == 0 {
        return None;
    }
    let days = day_number(y, mo, d) - day_number(1970, 1, 1);
    let digits = match t.split_once('.') {
        Some((_, f)) => f.bytes().take_while(u8::is_ascii_digit).count().min(6) as u8,
        None => 0,
    };
    Some((
        ((days * 86_400 + h * 3600 + mi * 60 + s) * 1_000_000) + us,
        digits,
    ))
}

/// Days since year 0 as MySQL counts them (for week numbers; 1970-01-01 is 719528).
fn day_number(y: i64, m: i64, d: i64) -> i64 {
    let (yy, mm) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468 + 719_528
}

fn days_in_year(y: i64) -> i64 {
    if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
        366
    } else {
        365
    }
}

/// The week number of a date under a MySQL week mode's three flags: weeks start on Monday
/// (else Sunday); the week belongs to the year it mostly lies in and may be 52/53 of the
/// year before (`year_of_week`, else 0 for days before the first week); the first week is
/// the one with the year's first start-of-week day (else the first with four days or more).
/// Returns (year the week belongs to, week).
fn week_of(
    y: i64,
    m: i64,
    d: i64,
    monday_first: bool,
    mut year_of_week: bool,
    first_day_rule: bool,
) -> (i64, i64) {
    let day = day_number(y, m, d);
    let mut first = day_number(y, 1, 1);
    // Weekday of January 1st, 0 = the week's first day.
    let mut wd = (first + 5 + i64::from(!monday_first)).rem_euclid(7);
    let mut year = y;
    let late_start = |wd: i64| if first_day_rule { wd != 0 } else { wd >= 4 };
    if m == 1 && d <= 7 - wd {
        if !year_of_week && late_start(wd) {
            return (year, 0);
        }
        year_of_week = true;
        year -= 1;
        let len = days_in_year(year);
        first -= len;
        wd = (wd + 53 * 7 - len).rem_euclid(7);
    }
    let days = if late_start(wd) {
        day - (first + (7 - wd))
    } else {
        day - (first - wd)
    };
    if year_of_week && days >= 52 * 7 {
        let next_wd = (wd + days_in_year(year)).rem_euclid(7);
        if !late_start(next_wd) {
            return (year + 1, 1);
        }
    }
    (year, days / 7 + 1)
}

/// MySQL's week mode number (0..7) as `week_of` flags.
fn week_mode(mode: i64) -> (bool, bool, bool) {
    let m = mode.rem_euclid(8);
    let monday_first = m & 1 != 0;
    let year_of_week = m & 2 != 0;
    // Modes with Sunday first count from the first Sunday; with Monday, four-day rule
    // (flag inverted for Sunday-first modes, as MySQL defines them).
    let first_day_rule = (m & 4 != 0) == monday_first;
    (monday_first, year_of_week, first_day_rule)
}

/// y, m, d of a date argument (None: NULL, not a date, or a zero month / day).
fn ymd(v: &Value) -> Option<(i64, i64, i64)> {
    let canon = coerce::parse_datetime(v, true)?;
    let t = std::str::from_utf8(&canon).ok()?;
    let mut it = t.get(..10)?.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (it.next()??, it.next()??, it.next()??);
    (m >= 1 && d >= 1).then_some((y, m, d))
}

/// STR_TO_DATE: `s` read by `fmt` (MySQL's `%` specifiers); None when it does not match or
/// is no valid date.
fn str_to_date(s: &[u8], fmt: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(s).ok()?;
    let fmt = std::str::from_utf8(fmt).ok()?;
    let (mut y, mut mo, mut d, mut h, mut mi, mut se, mut us) =
        (0i64, 0i64, 0i64, 0i64, 0i64, 0i64, 0i64);
    let mut pm: Option<bool> = None;
    let mut has_time = false;
    let mut has_date = false;
    let b = s.as_bytes();
    let mut i = 0usize;
    let number = |i: &mut usize, max_len: usize| -> Option<i64> {
        let start = *i;
        while *i < b.len() && *i - start < max_len && b[*i].is_ascii_digit() {
            *i += 1;
        }
        s.get(start..*i)?.parse().ok()
    };
    // `hh:mm:ss` (%T and the time of %r).
    let hms = |i: &mut usize| -> Option<(i64, i64, i64)> {
        let h = number(i, 2)?;
        (b.get(*i) == Some(&b':')).then_some(())?;
        *i += 1;
        let m = number(i, 2)?;
        (b.get(*i) == Some(&b':')).then_some(())?;
        *i += 1;
        Some((h, m, number(i, 2)?))
    };
    let mut f = fmt.chars().peekable();
    while let Some(c) = f.next() {
        if c != '%' {
            if c.is_whitespace() {
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
            } else if i < b.len() && b[i] as char == c {
                i += 1;
            } else {
                return None;
            }
            continue;
        }
        let spec = f.next()?;
        match spec {
            'Y' => {
                y = number(&mut i, 4)?;
                has_date = true;
            }
            'y' => {
                let v = number(&mut i, 2)?;
                y = if v < 70 { 2000 + v } else { 1900 + v };
                has_date = true;
            }
            'm' | 'c' => {
                mo = number(&mut i, 2)?;
                has_date = true;
            }
            'd' | 'e' => {
                d = number(&mut i, 2)?;
                has_date = true;
            }
            'H' | 'k' | 'h' | 'I' | 'l' => {
                h = number(&mut i, 2)?;
                has_time = true;
            }
            'i' => {
                mi = number(&mut i, 2)?;
                has_time = true;
            }
            's' | 'S' => {
                se = number(&mut i, 2)?;
                has_time = true;
            }
            'f' => {
                let start = i;
                let v = number(&mut i, 6)?;
                us = v * 10i64.pow(6 - (i - start) as u32);
                has_time = true;
            }
            'p' => {
                let rest = s.get(i..i + 2)?.to_ascii_uppercase();
                pm = Some(match rest.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                i += 2;
            }
            'M' | 'b' => {
                let rest = s.get(i..)?.to_ascii_lowercase();
                let found = MONTH_NAMES.iter().enumerate().find_map(|(k, name)| {
                    let n = if spec == 'b' { &name[..3] } else { name };
                    rest.starts_with(n).then_some((k as i64 + 1, n.len()))
                })?;
                mo = found.0;
                i += found.1;
                has_date = true;
            }
            'j' => {
                let doy = number(&mut i, 3)?;
                mo = 1;
                d = doy;
                has_date = true;
            }
            'r' => {
                (h, mi, se) = hms(&mut i)?;
                while i < b.len() && b[i].is_ascii_whitespace() {
                    i += 1;
                }
                let ampm = s.get(i..i + 2)?.to_ascii_uppercase();
                pm = Some(match ampm.as_str() {
                    "AM" => false,
                    "PM" => true,
                    _ => return None,
                });
                i += 2;
                has_time = true;
            }
            'T' => {
                (h, mi, se) = hms(&mut i)?;
                has_time = true;
            }
            '%' => {
                (b.get(i) == Some(&b'%')).then_some(())?;
                i += 1;
            }
            _ => return None,
        }
    }
    if let Some(p) = pm {
        if !(1..=12).contains(&h) {
            return None;
        }
        h = h % 12 + if p { 12 } else { 0 };
    }
    if h > 23 || mi > 59 || se > 59 {
        return None;
    }
    // Day-of-year given as %j: move into the right month.
    if has_date && mo == 1 && d > 31 {
        let mut left = d;
        mo = 1;
        while mo <= 12 {
            let len = i64::from(coerce::days_in_month(y as u32, mo as u32));
            if left <= len {
                break;
            }
            left -= len;
            mo += 1;
        }
        d = left;
        if mo > 12 {
            return None;
        }
    }
    if has_date
        && (!(1..=12).contains(&mo)
            || d < 1
            || d > i64::from(coerce::days_in_month(y as u32, mo as u32))
            || !(0..=9999).contains(&y))
    {
        return None;
    }
    let date = format!("{y:04}-{mo:02}-{d:02}");
    if has_time && !has_date {
        // A time alone (MariaDB returns a TIME).
        let mut t = format!("{h:02}:{mi:02}:{se:02}");
        if us != 0 {
            t.push_str(&format!(".{us:06}"));
        }
        return Some(t);
    }
    Some(if has_time {
        let mut t = format!("{date} {h:02}:{mi:02}:{se:02}");
        if us != 0 {
            t.push_str(&format!(".{us:06}"));
        }
        t
    } else {
        date
    })
}

const MONTH_NAMES: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Evaluates `f` on its argument values.
pub fn eval(f: MiscFunc, a: &[Value]) -> Result<Value, SqlError> {
    use MiscFunc as M;
    let null = Value::Null;
    let at = |i: usize| a.get(i).unwrap_or(&null);
    let num = |i: usize| to_f64(at(i));
    let text = |s: String| Value::Bytes(s.into_bytes());
    Ok(match f {
        M::IsNull => Value::Int(i64::from(at(0).is_null())),
        // NULL or a negative time sleeps not at all, as MariaDB.
        M::Sleep => match crate::interrupt::sleep(num(0).unwrap_or(0.0)) {
            0 => Value::Int(0),
            // Woken by a KILL: the statement ends with 1317, as MariaDB's.
            _ => return Err(crate::interrupt::interrupted()),
        },
        M::Uuid => {
            let b: [u8; 16] = rand::random();
            let mut b = b;
            b[6] = (b[6] & 0x0f) | 0x40;
            b[8] = (b[8] & 0x3f) | 0x80;
            let h = hex(&b);
            text(format!(
                "{}-{}-{}-{}-{}",
                &h[0..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..32]
            ))
        }
        M::Rand => Value::Double(rand::random::<f64>()),
        M::Pi => Value::Double(std::f64::consts::PI),
        M::CurTime => text(coerce::now_text(0)[11..].to_string()),
        _ if a.iter().any(Value::is_null) && !matches!(f, M::Elt | M::Char) => Value::Null,
        M::Md5 => {
            use md5::Digest;
            text(hex(&md5::Md5::digest(text_of(at(0)).unwrap_or_default())))
        }
        M::Sha1 => {
            use sha1::Digest;
            text(hex(&sha1::Sha1::digest(text_of(at(0)).unwrap_or_default())))
        }
        M::Sha2 => {
            use sha2::Digest;
            let data = text_of(at(0)).unwrap_or_default();
            match to_i64(at(1)) {
                Some(224) => text(hex(&sha2::Sha224::digest(&data))),
                Some(0 | 256) => text(hex(&sha2::Sha256::digest(&data))),
                Some(384) => text(hex(&sha2::Sha384::digest(&data))),
                Some(512) => text(hex(&sha2::Sha512::digest(&data))),
                _ => Value::Null,
            }
        }
        M::Crc32 => Value::Int(i64::from(crc32(&text_of(at(0)).unwrap_or_default()))),
        M::Truncate => truncate(at(0), to_i64(at(1)).unwrap_or(0)),
        M::Format => match format_number(at(0), to_i64(at(1)).unwrap_or(0)) {
            Some(s) => text(s),
            None => Value::Null,
        },
        M::Sin => num(0).map_or(Value::Null, |x| double(x.sin())),
        M::Cos => num(0).map_or(Value::Null, |x| double(x.cos())),
        M::Tan => num(0).map_or(Value::Null, |x| double(x.tan())),
        M::Cot => num(0).map_or(Value::Null, |x| double(1.0 / x.tan())),
        M::Asin => num(0).map_or(Value::Null, |x| double(x.asin())),
        M::Acos => num(0).map_or(Value::Null, |x| double(x.acos())),
        M::Atan if a.len() == 2 => match (num(0), num(1)) {
            (Some(y), Some(x)) => double(y.atan2(x)),
            _ => Value::Null,
        },
        M::Atan => num(0).map_or(Value::Null, |x| double(x.atan())),
        M::Atan2 => match (num(0), num(1)) {
            (Some(y), Some(x)) => double(y.atan2(x)),
            _ => Value::Null,
        },
        M::Radians => num(0).map_or(Value::Null, |x| double(x.to_radians())),
        M::Degrees => num(0).map_or(Value::Null, |x| double(x.to_degrees())),
        M::BitCount => Value::Int(i64::from(
            crate::expr::bits(&crate::expr::num(at(0)))
                .unwrap_or(0)
                .count_ones(),
        )),
        M::Elt => match to_i64(at(0)) {
            Some(n) if n >= 1 && (n as usize) < a.len() => at(n as usize).clone(),
            _ => Value::Null,
        },
        M::Char => {
            let mut out = Vec::new();
            for v in a {
                let Some(n) = to_i64(v) else { continue };
                let bytes = (n as u32).to_be_bytes();
                let skip = bytes.iter().take_while(|b| **b == 0).count().min(3);
                out.extend_from_slice(&bytes[skip..]);
            }
            Value::Bytes(out)
        }
        M::Ord => {
            let t = text_of(at(0)).unwrap_or_default();
            let len = match t.first() {
                None => 0,
                Some(&b) if b < 0x80 => 1,
                Some(&b) if b >= 0xF0 => 4,
                Some(&b) if b >= 0xE0 => 3,
                Some(&b) if b >= 0xC0 => 2,
                Some(_) => 1,
            }
            .min(t.len());
            Value::Int(
                t[..len]
                    .iter()
                    .fold(0i64, |acc, b| acc * 256 + i64::from(*b)),
            )
        }
        M::Conv | M::Bin | M::Oct => {
            let (from, to) = match f {
                M::Conv => (to_i64(at(1)).unwrap_or(0), to_i64(at(2)).unwrap_or(0)),
                M::Bin => (10, 2),
                _ => (10, 8),
            };
            let digits = match at(0) {
                Value::Double(x) => format!("{}", x.trunc()).into_bytes(),
                other => text_of(other).unwrap_or_default(),
            };
            match conv(&digits, from, to) {
                Some(s) => text(s),
                None => Value::Null,
            }
        }
        M::Unhex => {
            let t = text_of(at(0)).unwrap_or_default();
            let t: Vec<u8> = if t.len() % 2 == 1 {
                std::iter::once(b'0').chain(t.iter().copied()).collect()
            } else {
                t
            };
            let mut out = Vec::with_capacity(t.len() / 2);
            for pair in t.chunks(2) {
                let s = std::str::from_utf8(pair).ok();
                match s.and_then(|s| u8::from_str_radix(s, 16).ok()) {
                    Some(b) => out.push(b),
                    None => return Ok(Value::Null),
                }
            }
            Value::Bytes(out)
        }
        M::ToBase64 => {
            use base64::Engine;
            let enc = base64::engine::general_purpose::STANDARD
                .encode(text_of(at(0)).unwrap_or_default());
            // MariaDB breaks the text into lines of 76 characters.
            let lines: Vec<&str> = enc
                .as_bytes()
                .chunks(76)
                .map(|c| std::str::from_utf8(c).unwrap_or(""))
                .collect();
            text(lines.join("\n"))
        }
        M::FromBase64 => {
            use base64::Engine;
            let t: Vec<u8> = text_of(at(0))
                .unwrap_or_default()
                .into_iter()
                .filter(|b| !b.is_ascii_whitespace())
                .collect();
            match base64::engine::general_purpose::STANDARD.decode(t) {
                Ok(b) => Value::Bytes(b),
                Err(_) => Value::Null,
            }
        }
        M::InetAton => {
            let t = text_of(at(0)).unwrap_or_default();
            let s = std::str::from_utf8(&t).unwrap_or("");
            let parts: Vec<Option<u64>> = s
                .split('.')
                .map(|p| p.parse::<u64>().ok().filter(|x| *x <= 255))
                .collect();
            if parts.is_empty() || parts.len() > 4 || parts.iter().any(Option::is_none) {
                return Ok(Value::Null);
            }
            // `a.b` is a.0.0.b, `a.b.c` is a.b.0.c (as MariaDB reads short forms).
            let p: Vec<u64> = parts.into_iter().flatten().collect();
            let v = match p.as_slice() {
                [a] => *a,
                [a, b] => (a << 24) | b,
                [a, b, c] => (a << 24) | (b << 16) | c,
                [a, b, c, d] => (a << 24) | (b << 16) | (c << 8) | d,
                _ => return Ok(Value::Null),
            };
            Value::Int(v as i64)
        }
        M::InetNtoa => match to_i64(at(0)) {
            Some(n) if (0..=u32::MAX as i64).contains(&n) => {
                let b = (n as u32).to_be_bytes();
                text(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]))
            }
            _ => Value::Null,
        },
        M::TimeToSec => time_seconds(at(0)).map_or(Value::Null, Value::Int),
        M::TimeDiff => {
            let (a, b) = (at(0), at(1));
            let diff = match (datetime_micros(a), datetime_micros(b)) {
                (Some(x), Some(y)) => Some((x.0.saturating_sub(y.0), x.1.max(y.1))),
                (None, None) => match (crate::time::parse(a), crate::time::parse(b)) {
                    (Some(x), Some(y)) => {
                        Some((x.micros.saturating_sub(y.micros), x.digits.max(y.digits)))
                    }
                    _ => None,
                },
                _ => None,
            };
            match diff {
                Some((m, digits)) => text(crate::time::text(clip_time(m, digits), digits)),
                None => Value::Null,
            }
        }
        M::AddTime | M::SubTime => {
            let sign = if f == M::AddTime { 1 } else { -1 };
            let Some(t) = crate::time::parse(at(1)).filter(|_| datetime_micros(at(1)).is_none())
            else {
                return Ok(Value::Null);
            };
            match datetime_micros(at(0)) {
                Some((base, digits)) => {
                    // (Years 0 to 9999 lie within ±2^58 microseconds of 1970.)
                    let us = base.saturating_add(sign * t.micros);
                    if us.unsigned_abs() > 1 << 58 {
                        return Ok(Value::Null);
                    }
                    let (y, mo, d, h, mi, s) = coerce::civil_from_unix(us.div_euclid(1_000_000));
                    if !(0..=9999).contains(&y) {
                        return Ok(Value::Null);
                    }
                    let mut out = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
                    coerce::push_fraction(
                        &mut out,
                        us.rem_euclid(1_000_000) as u32,
                        digits.max(t.digits),
                    );
                    text(out)
                }
                None => match crate::time::parse(at(0)) {
                    Some(x) => {
                        let digits = x.digits.max(t.digits);
                        let m = clip_time(x.micros.saturating_add(sign * t.micros), digits);
                        text(crate::time::text(m, digits))
                    }
                    None => Value::Null,
                },
            }
        }
        M::SetMask => match a.first() {
            Some(Value::Bytes(b)) => {
                let names = a[1..].iter().map(|m| match m {
                    Value::Bytes(x) => x.as_slice(),
                    _ => &[],
                });
                Value::from_u64(coerce::set_mask(b, names))
            }
            _ => Value::Null,
        },
        M::TimeFormat => {
            let (Some(t), Some(fmt)) = (crate::time::parse(at(0)), text_of(at(1))) else {
                return Ok(Value::Null);
            };
            match time_format(t.micros, &fmt) {
                Some(s) => text(s),
                None => Value::Null,
            }
        }
        M::SecToTime => match to_i64(at(0)) {
            Some(s) => text(time_text(s)),
            None => Value::Null,
        },
        M::Week | M::YearWeek | M::WeekOfYear => {
            let Some((y, m, d)) = ymd(at(0)) else {
                return Ok(Value::Null);
            };
            let mode = match f {
                M::WeekOfYear => 3,
                _ if a.len() > 1 => to_i64(at(1)).unwrap_or(0),
                _ => 0,
            };
            let (monday_first, year_of_week, first_day_rule) = week_mode(mode);
            if f == M::YearWeek {
                let (wy, w) = week_of(y, m, d, monday_first, true, first_day_rule);
                Value::Int(wy * 100 + w)
            } else {
                Value::Int(week_of(y, m, d, monday_first, year_of_week, first_day_rule).1)
            }
        }
        M::StrToDate => {
            let (Some(s), Some(fmt)) = (text_of(at(0)), text_of(at(1))) else {
                return Ok(Value::Null);
            };
            match str_to_date(&s, &fmt) {
                Some(t) => text(t),
                None => Value::Null,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn week_numbers_follow_the_modes() {
        // 2024-01-01 is a Monday; 2023-01-01 a Sunday; 2021-01-01 a Friday.
        let w = |y, m, d, mode| {
            let (a, b, c) = week_mode(mode);
            week_of(y, m, d, a, b, c).1
        };
        assert_eq!(w(2024, 1, 1, 0), 0);
        assert_eq!(w(2024, 1, 1, 1), 1);
        assert_eq!(w(2024, 1, 1, 3), 1);
        assert_eq!(w(2023, 1, 1, 0), 1);
        assert_eq!(w(2023, 1, 1, 3), 52);
        assert_eq!(w(2021, 1, 1, 3), 53);
        assert_eq!(w(2024, 12, 30, 3), 1);
        assert_eq!(w(2024, 3, 5, 0), 9);
    }

    #[test]
    fn crc32_is_zlibs() {
        assert_eq!(crc32(b"MySQL"), 3_259_397_556);
        assert_eq!(crc32(b""), 0);
    }

    #[test]
    fn conversions_between_bases() {
        assert_eq!(conv(b"ff", 16, 10).as_deref(), Some("255"));
        assert_eq!(conv(b"5", 10, 2).as_deref(), Some("101"));
        assert_eq!(conv(b"-1", 10, 16).as_deref(), Some("FFFFFFFFFFFFFFFF"));
        assert_eq!(conv(b"z", 36, 10).as_deref(), Some("35"));
        assert_eq!(conv(b"1", 1, 10), None);
    }

    #[test]
    fn dates_read_by_a_format() {
        assert_eq!(
            str_to_date(b"01/02/2024", b"%m/%d/%Y").as_deref(),
            Some("2024-01-02")
        );
        assert_eq!(
            str_to_date(b"2024-01-02 10:11", b"%Y-%m-%d %H:%i").as_deref(),
            Some("2024-01-02 10:11:00")
        );
        assert_eq!(
            str_to_date(b"March 5 2024 3:04 PM", b"%M %e %Y %l:%i %p").as_deref(),
            Some("2024-03-05 15:04:00")
        );
        assert_eq!(str_to_date(b"2024-02-30", b"%Y-%m-%d"), None);
        assert_eq!(str_to_date(b"junk", b"%Y"), None);
    }
}
