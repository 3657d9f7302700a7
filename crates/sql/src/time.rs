//! TIME values: reading what users write (`'10:30'`, `'-1 02:03:04.5'`, `103000`, a datetime's
//! time part), the canonical text a TIME(n) column stores, and the signed microseconds that
//! order and compare them.
//!
//! A TIME is a signed duration within ±838:59:59.999999. Its canonical text is
//! `[-]HH:MM:SS[.f]`: at least two hour digits (three past 99), exactly n fraction digits for
//! a TIME(n) column. Text order is not time order (`-02:00:00`, `100:00:00`), so comparisons,
//! ORDER BY, GROUP BY and MIN / MAX read the microseconds (`CastTo::TimeMicros`), and the
//! engine keys a TIME column by them (`tierdb_engine::time_micros`).
//!
//! Must never: panic on any input, or give two values one canonical text that differ in
//! their microseconds (the column's fraction digits are cut, not rounded, as MariaDB does).

use tierdb_engine::Value;

/// The largest TIME, 838:59:59.999999, in microseconds.
pub const MAX_MICROS: i64 = ((838 * 60 + 59) * 60 + 59) * 1_000_000 + 999_999;

/// A value read as a TIME: its microseconds (not yet range-checked) and how many fraction
/// digits it was written with (at most 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Time {
    pub micros: i64,
    pub digits: u8,
}

/// Reads `v` as a TIME: `[-][D ]H+:MM[:SS][.f]`, `[-]H+:MM`, digits `[-][[H]HMM]SS[.f]`, a
/// datetime's time part (`YYYY-MM-DD HH:MM:SS`), an integer or a double of the digit form.
/// None: no time (minutes or seconds past 59, other text).
pub fn parse(v: &Value) -> Option<Time> {
    let text = match v {
        Value::Null => return None,
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) if d.is_finite() => format!("{d}"),
        Value::Double(_) => return None,
        Value::Bytes(b) => {
            if let Some(micros) = tierdb_engine::time_micros(b) {
                let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
                let has_point = b.len() > digits && b[b.len() - digits - 1] == b'.';
                let digits = if has_point { digits.min(6) as u8 } else { 0 };
                return Some(Time { micros, digits });
            }
            std::str::from_utf8(b).ok()?.trim().to_string()
        }
    };
    parse_text(&text)
}

fn parse_text(t: &str) -> Option<Time> {
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r.trim_start()),
        None => (false, t),
    };
    // A datetime: its time part (a date alone is midnight).
    let t = match datetime_time_part(t) {
        Some(rest) => rest,
        None => t,
    };
    let (main, frac) = match t.split_once('.') {
        Some((m, f)) => (m, Some(f)),
        None => (t, None),
    };
    let (micros_frac, digits) = match frac {
        None => (0, 0),
        Some(f) => {
            let ds: String = f.chars().take_while(char::is_ascii_digit).collect();
            if ds.len() != f.len() {
                return None;
            }
            let kept = &ds[..ds.len().min(6)];
            let v: i64 = if kept.is_empty() {
                0
            } else {
                format!("{kept:0<6}").parse().ok()?
            };
            (v, kept.len() as u8)
        }
    };
    let num = |s: &str| -> Option<i64> {
        if s.is_empty() || s.len() > 12 || !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    let (days, hms) = match main.split_once(' ') {
        Some((d, rest)) if main.contains(':') => (num(d)?, rest.trim_start()),
        _ => (0, main),
    };
    let (h, m, s) = if hms.contains(':') {
        let parts: Vec<&str> = hms.split(':').collect();
        match parts.as_slice() {
            [h, m] => (num(h)?, num(m)?, 0),
            [h, m, s] => (num(h)?, num(m)?, num(s)?),
            _ => return None,
        }
    } else {
        if days != 0 {
            return None;
        }
        let x = num(hms)?;
        (x / 10_000, x / 100 % 100, x % 100)
    };
    if m > 59 || s > 59 {
        return None;
    }
    let secs = (days.checked_mul(24)?.checked_add(h)?)
        .checked_mul(3600)?
        .checked_add(m * 60 + s)?;
    let micros = secs.checked_mul(1_000_000)?.checked_add(micros_frac)?;
    Some(Time {
        micros: if neg { -micros } else { micros },
        digits,
    })
}

/// The text after `YYYY-MM-DD ` (or `T`) when `t` starts with a date; `00:00:00` for a date
/// alone.
fn datetime_time_part(t: &str) -> Option<&str> {
    let b = t.as_bytes();
    let date_len = b
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'-')
        .count();
    let date = &t[..date_len];
    let parts: Vec<&str> = date.split('-').collect();
    if parts.len() != 3 || parts[0].len() != 4 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    match b.get(date_len) {
        None => Some("0"),
        Some(b' ' | b'T') => Some(t[date_len + 1..].trim_start()),
        Some(_) => None,
    }
}

/// Canonical text of `micros` with `fsp` fraction digits (cut): `[-]HH:MM:SS[.f]`.
pub fn text(micros: i64, fsp: u8) -> String {
    let fsp = fsp.min(6);
    let unit = 10u64.pow(6 - u32::from(fsp));
    let abs = micros.unsigned_abs() / unit * unit;
    let secs = abs / 1_000_000;
    let mut out = String::with_capacity(16);
    if micros < 0 && abs != 0 {
        out.push('-');
    }
    out.push_str(&format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    ));
    crate::coerce::push_fraction(&mut out, (abs % 1_000_000) as u32, fsp);
    out
}

/// `micros` when it lies within the TIME range; Err with the nearest end when it does not.
pub fn in_range(micros: i64) -> Result<i64, i64> {
    if micros.unsigned_abs() <= MAX_MICROS as u64 {
        Ok(micros)
    } else {
        Err(micros.clamp(-MAX_MICROS, MAX_MICROS))
    }
}

/// A TIME read as a number (`t + 0`): `[-]HHMMSS`, with `fsp` digits after the point (a
/// DECIMAL's text) when fsp > 0.
pub fn number(micros: i64, fsp: u8) -> Value {
    let abs = micros.unsigned_abs();
    let secs = abs / 1_000_000;
    // (Within the TIME range: at most 8 385 959.)
    let n = (secs / 3600 * 10_000 + secs / 60 % 60 * 100 + secs % 60) as i64;
    let n = if micros < 0 { -n } else { n };
    if fsp == 0 {
        return Value::Int(n);
    }
    let mut t = String::new();
    if micros < 0 && n == 0 {
        t.push('-');
    }
    t.push_str(&n.to_string());
    crate::coerce::push_fraction(&mut t, (abs % 1_000_000) as u32, fsp.min(6));
    Value::Bytes(t.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(t: &str) -> Option<i64> {
        parse(&Value::Bytes(t.as_bytes().to_vec())).map(|t| t.micros)
    }

    const H: i64 = 3_600_000_000;
    const M: i64 = 60_000_000;
    const S: i64 = 1_000_000;

    #[test]
    fn the_written_forms_read_as_mariadb_reads_them() {
        assert_eq!(micros("10:00:00"), Some(10 * H));
        assert_eq!(micros("10:00"), Some(10 * H));
        assert_eq!(micros("-01:00:00"), Some(-H));
        assert_eq!(micros("838:59:59"), Some(838 * H + 59 * M + 59 * S));
        assert_eq!(micros("1 02:03:04"), Some(26 * H + 3 * M + 4 * S));
        assert_eq!(micros("123456"), Some(12 * H + 34 * M + 56 * S));
        assert_eq!(micros("5"), Some(5 * S));
        assert_eq!(micros("1234"), Some(12 * M + 34 * S));
        assert_eq!(micros("12.5"), Some(12 * S + 500_000));
        assert_eq!(micros("2020-01-02 03:04:05"), Some(3 * H + 4 * M + 5 * S));
        assert_eq!(micros("  -0:0:1 "), Some(-S));
        assert_eq!(micros("10:00:00.1234567"), Some(10 * H + 123_456));
        assert_eq!(
            parse(&Value::Int(123456)).map(|t| t.micros),
            Some(12 * H + 34 * M + 56 * S)
        );
        assert_eq!(
            parse(&Value::Double(12.5)).map(|t| t.micros),
            Some(12 * S + 500_000)
        );
        for bad in [
            "abc",
            "10:60:00",
            "10:00:60",
            "1:2:3:4",
            "",
            "-",
            "10:00:00.5x",
            "99999999999999",
        ] {
            assert_eq!(micros(bad), None, "{bad}");
        }
    }

    #[test]
    fn canonical_text_has_two_hour_digits_and_the_columns_fraction() {
        assert_eq!(text(10 * H, 0), "10:00:00");
        assert_eq!(text(-H, 0), "-01:00:00");
        assert_eq!(text(100 * H, 3), "100:00:00.000");
        assert_eq!(text(10 * H + 123_456, 3), "10:00:00.123");
        assert_eq!(text(-400_000, 0), "00:00:00");
        assert_eq!(text(-400_000, 1), "-00:00:00.4");
        for m in [0, 1, -1, 59 * S, -MAX_MICROS, MAX_MICROS, 123 * H + 456_789] {
            assert_eq!(micros(&text(m, 6)), Some(m));
        }
    }

    #[test]
    fn numbers_are_hhmmss() {
        assert_eq!(number(10 * H, 0), Value::Int(100_000));
        assert_eq!(number(-H, 0), Value::Int(-10_000));
        assert_eq!(number(838 * H + 59 * M + 59 * S, 0), Value::Int(8_385_959));
        assert_eq!(
            number(10 * H + 123_000, 3),
            Value::Bytes(b"100000.123".to_vec())
        );
        assert_eq!(number(-500_000, 1), Value::Bytes(b"-0.5".to_vec()));
    }
}
