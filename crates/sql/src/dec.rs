//! Exact decimal numbers for DECIMAL arithmetic and sums: a value is `m / 10^s` with an
//! i128 mantissa, so up to 38 significant digits compute without rounding.
//!
//! Owns: `Dec` and its conversions from the values DECIMAL computations meet (integers,
//! DECIMAL text such as "-12.50", and doubles, read through their shortest decimal form),
//! its + - *, rounding half away from zero, and its text.
//!
//! Must never: round silently. Every operation that would need more than 38 digits (or a
//! scale above `MAX_SCALE`) returns `None`, and the caller falls back to its double path.

use tierdb_engine::Value;

/// The largest scale kept (MariaDB's DECIMAL scale limit).
pub const MAX_SCALE: u8 = 38;

/// An exact decimal: `m / 10^s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dec {
    m: i128,
    s: u8,
}

fn pow10(n: u8) -> Option<i128> {
    10i128.checked_pow(u32::from(n))
}

impl Dec {
    pub fn from_int(i: i128) -> Dec {
        Dec { m: i, s: 0 }
    }

    pub fn scale(self) -> u8 {
        self.s
    }

    /// Plain decimal text: an optional sign, digits, an optional point and fraction digits
    /// (no spaces, no exponent). `None` for anything else or past 38 digits.
    pub fn parse(b: &[u8]) -> Option<Dec> {
        let (neg, rest) = match b.split_first() {
            Some((b'-', r)) => (true, r),
            Some((b'+', r)) => (false, r),
            _ => (false, b),
        };
        let (int, frac) = match rest.iter().position(|&c| c == b'.') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let s = u8::try_from(frac.len()).ok().filter(|&s| s <= MAX_SCALE)?;
        let mut m: i128 = 0;
        for &c in int.iter().chain(frac) {
            if !c.is_ascii_digit() {
                return None;
            }
            m = m.checked_mul(10)?.checked_add(i128::from(c - b'0'))?;
        }
        // 38 digits at most: beyond, `m * 10` in later arithmetic overflows too soon to be
        // useful, and i128 holds every 38-digit number.
        if m >= pow10(38)? {
            return None;
        }
        Some(Dec {
            m: if neg { -m } else { m },
            s,
        })
    }

    /// The exact value of an integer, of DECIMAL text, or of a double's shortest decimal
    /// form (the literal it was read from: 0.1 is 0.1). `None` for NULL, other text,
    /// non-finite doubles and anything past 38 digits.
    pub fn of(v: &Value) -> Option<Dec> {
        match v {
            Value::Null => None,
            Value::Int(i) => Some(Dec::from_int(i128::from(*i))),
            Value::UInt(u) => Some(Dec::from_int(i128::from(*u))),
            // Rust prints doubles positionally (no exponent), shortest round-trip digits.
            Value::Double(d) if d.is_finite() => Dec::parse(d.to_string().as_bytes()),
            Value::Double(_) => None,
            Value::Bytes(b) => Dec::parse(b),
        }
    }

    /// The same value at the larger scale `s` (exact); `None` when it does not fit.
    pub fn widen(self, s: u8) -> Option<Dec> {
        if s < self.s || s > MAX_SCALE {
            return None;
        }
        Some(Dec {
            m: self.m.checked_mul(pow10(s - self.s)?)?,
            s,
        })
    }

    /// The value at scale `s`: widened exactly, or rounded half away from zero.
    pub fn round(self, s: u8) -> Option<Dec> {
        if s >= self.s {
            return self.widen(s);
        }
        let d = pow10(self.s - s)?;
        let (q, r) = (self.m / d, self.m % d);
        let away = r.unsigned_abs() * 2 >= d.unsigned_abs();
        let q = match (away, self.m < 0) {
            (false, _) => q,
            (true, false) => q + 1,
            (true, true) => q - 1,
        };
        Some(Dec { m: q, s })
    }

    fn aligned(self, o: Dec) -> Option<(i128, i128, u8)> {
        let s = self.s.max(o.s);
        Some((self.widen(s)?.m, o.widen(s)?.m, s))
    }

    pub fn checked_add(self, o: Dec) -> Option<Dec> {
        let (a, b, s) = self.aligned(o)?;
        Some(Dec {
            m: a.checked_add(b)?,
            s,
        })
    }

    pub fn checked_sub(self, o: Dec) -> Option<Dec> {
        let (a, b, s) = self.aligned(o)?;
        Some(Dec {
            m: a.checked_sub(b)?,
            s,
        })
    }

    pub fn checked_mul(self, o: Dec) -> Option<Dec> {
        let s = self.s.checked_add(o.s).filter(|&s| s <= MAX_SCALE)?;
        Some(Dec {
            m: self.m.checked_mul(o.m)?,
            s,
        })
    }

    /// `self / o` at scale `s`, cut toward zero (MariaDB's division keeps whole groups of
    /// nine digits and drops the rest). `None` when `o` is zero, `s` is below the scale the
    /// quotient needs to be meaningful (`self.s`), or the result does not fit.
    pub fn checked_div(self, o: Dec, s: u8) -> Option<Dec> {
        if o.m == 0 || s > MAX_SCALE {
            return None;
        }
        // self / o = (m1 / 10^s1) / (m2 / 10^s2) = m1 * 10^(s + s2 - s1) / m2 / 10^s.
        let shift = (s + o.s).checked_sub(self.s)?;
        let num = self.m.checked_mul(10i128.checked_pow(u32::from(shift))?)?;
        Some(Dec { m: num / o.m, s })
    }

    /// The scale MariaDB computes `a / b` at: the operands' scales plus four
    /// (`div_precision_increment`), rounded up to a whole group of nine digits.
    pub fn division_scale(a: u8, b: u8) -> u8 {
        let s = u16::from(a) + u16::from(b) + 4;
        let s = s.div_ceil(9) * 9;
        u8::try_from(s.min(u16::from(MAX_SCALE))).unwrap_or(MAX_SCALE)
    }

    /// `self / n` at scale `s`, rounded half away from zero (AVG: the sum by the count).
    /// `None` when `n` is zero or the result does not fit.
    pub fn div_int(self, n: i128, s: u8) -> Option<Dec> {
        if n == 0 {
            return None;
        }
        let num = self.widen(s)?.m;
        let (q, r) = (num / n, num % n);
        let away = r.unsigned_abs().checked_mul(2)? >= n.unsigned_abs();
        let q = if away {
            if (num < 0) != (n < 0) {
                q - 1
            } else {
                q + 1
            }
        } else {
            q
        };
        Some(Dec { m: q, s })
    }

    /// Significant digits of the mantissa (0 has none).
    fn digits(self) -> u32 {
        let mut u = self.m.unsigned_abs();
        let mut n = 0;
        while u > 0 {
            u /= 10;
            n += 1;
        }
        n
    }

    /// The value as text with exactly its scale's fraction digits ("-0.50", "12").
    pub fn text(self) -> String {
        let u = self.m.unsigned_abs();
        let s = usize::from(self.s);
        let digits = u.to_string();
        let digits = if digits.len() <= s {
            format!("{}{digits}", "0".repeat(s + 1 - digits.len()))
        } else {
            digits
        };
        let (int, frac) = digits.split_at(digits.len() - s);
        let sign = if self.m < 0 { "-" } else { "" };
        if s == 0 {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    }

    /// The value as DECIMAL computations carry it: a double when it has at most 15
    /// significant digits (a double then holds exactly these digits as its shortest form),
    /// else the exact text.
    pub fn into_value(self) -> Value {
        if self.digits() <= 15 {
            if let Ok(d) = self.text().parse::<f64>() {
                return Value::Double(d);
            }
        }
        Value::Bytes(self.text().into_bytes())
    }

    /// The value as exact text (a DECIMAL column's form).
    pub fn into_text_value(self) -> Value {
        Value::Bytes(self.text().into_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn text_round_trips_with_its_scale() {
        for s in [
            "0",
            "-0.50",
            "12",
            "0.001",
            "-123456789012345678901234567890.12345678",
        ] {
            assert_eq!(d(s).text(), s);
        }
        assert_eq!(d("+.5").text(), "0.5");
        assert_eq!(d("-0").text(), "0");
    }

    #[test]
    fn anything_but_plain_decimal_text_is_refused() {
        for s in [
            "", "-", ".", "1e5", " 1", "1 ", "1.2.3", "abc", "0x10", "--1",
        ] {
            assert_eq!(Dec::parse(s.as_bytes()), None, "{s:?}");
        }
        // 38 digits fit, 39 do not.
        assert!(Dec::parse("9".repeat(38).as_bytes()).is_some());
        assert_eq!(Dec::parse("1".repeat(39).as_bytes()), None);
    }

    #[test]
    fn sums_and_products_keep_every_digit() {
        assert_eq!(d("0.1").checked_add(d("0.2")).unwrap().text(), "0.3");
        assert_eq!(
            d("12345678901234567890.1234567891")
                .checked_add(d("12345678901234567890.1234567891"))
                .unwrap()
                .text(),
            "24691357802469135780.2469135782"
        );
        assert_eq!(
            d("99999999999999.99").checked_mul(d("2")).unwrap().text(),
            "199999999999999.98"
        );
        assert_eq!(d("1.5").checked_sub(d("2.25")).unwrap().text(), "-0.75");
        assert_eq!(d("1.10").checked_mul(d("-0.3")).unwrap().text(), "-0.330");
    }

    #[test]
    fn overflow_is_none_not_a_wrong_number() {
        let big = d(&"9".repeat(38));
        assert_eq!(big.checked_add(big), None);
        assert_eq!(big.checked_mul(d("10")), None);
        assert_eq!(d("1.5").widen(MAX_SCALE + 1), None);
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(d("0.125").round(2).unwrap().text(), "0.13");
        assert_eq!(d("-0.125").round(2).unwrap().text(), "-0.13");
        assert_eq!(d("0.124").round(2).unwrap().text(), "0.12");
        assert_eq!(d("9.995").round(2).unwrap().text(), "10.00");
        assert_eq!(d("2").round(3).unwrap().text(), "2.000");
        assert_eq!(d("-0.004").round(2).unwrap().text(), "0.00");
        assert_eq!(
            d("223456789012345.67").div_int(3, 6).unwrap().text(),
            "74485596337448.556667"
        );
        assert_eq!(d("-1").div_int(3, 4).unwrap().text(), "-0.3333");
        assert_eq!(d("-2").div_int(3, 4).unwrap().text(), "-0.6667");
        assert_eq!(d("1").div_int(0, 4), None);
    }

    #[test]
    fn division_keeps_whole_groups_of_nine_digits_cut_toward_zero() {
        // Figures from MariaDB 10.11: 1/7 is 0.142857142 inside, 1.000000/7 has 18 digits,
        // 1.000000000/0.700000000 has 27.
        let q = |a: &str, b: &str| {
            let (x, y) = (d(a), d(b));
            x.checked_div(y, Dec::division_scale(x.scale(), y.scale()))
                .unwrap()
                .text()
        };
        assert_eq!(q("1", "7"), "0.142857142");
        assert_eq!(q("-2", "3"), "-0.666666666");
        assert_eq!(q("1.000000", "7"), "0.142857142857142857");
        assert_eq!(q("1", "0.333333"), "3.000003000003000003");
        assert_eq!(
            q("1.000000000", "0.700000000"),
            "1.428571428571428571428571428"
        );
        assert_eq!(q("123456789012345678", "10"), "12345678901234567.800000000");
        assert_eq!(d("1").checked_div(d("0"), 9), None);
        assert_eq!(Dec::division_scale(30, 30), MAX_SCALE);
    }

    #[test]
    fn doubles_are_read_through_their_shortest_form() {
        assert_eq!(Dec::of(&Value::Double(0.1)).unwrap().text(), "0.1");
        assert_eq!(
            Dec::of(&Value::Double(-2.5e-7)).unwrap().text(),
            "-0.00000025"
        );
        assert_eq!(Dec::of(&Value::Double(f64::NAN)), None);
        assert_eq!(Dec::of(&Value::Double(1e300)), None);
        assert_eq!(
            Dec::of(&Value::UInt(u64::MAX)).unwrap().text(),
            "18446744073709551615"
        );
    }

    #[test]
    fn short_results_travel_as_doubles_long_ones_as_text() {
        assert_eq!(d("0.30").into_value(), Value::Double(0.3));
        assert_eq!(
            d("1234567890123456.78").into_value(),
            Value::Bytes(b"1234567890123456.78".to_vec())
        );
    }

    proptest! {
        /// Against i128 arithmetic on a common scale: + - * are exact or refuse.
        #[test]
        fn arithmetic_matches_scaled_integers(a in -10i64.pow(15)..10i64.pow(15), sa in 0u8..8,
                                              b in -10i64.pow(15)..10i64.pow(15), sb in 0u8..8) {
            let (x, y) = (Dec { m: a.into(), s: sa }, Dec { m: b.into(), s: sb });
            let s = sa.max(sb);
            let xa = i128::from(a) * 10i128.pow(u32::from(s - sa));
            let yb = i128::from(b) * 10i128.pow(u32::from(s - sb));
            prop_assert_eq!(x.checked_add(y).unwrap(), Dec { m: xa + yb, s });
            prop_assert_eq!(x.checked_sub(y).unwrap(), Dec { m: xa - yb, s });
            prop_assert_eq!(x.checked_mul(y).unwrap(), Dec { m: i128::from(a) * i128::from(b), s: sa + sb });
            // Text round-trips, and rounding to a smaller scale moves by at most half a unit.
            prop_assert_eq!(Dec::parse(x.text().as_bytes()).unwrap().widen(sa).unwrap(), x);
            if sa > 0 {
                let r = x.round(sa - 1).unwrap().widen(sa).unwrap();
                prop_assert!((r.m - x.m).abs() * 2 <= 10);
            }
        }
    }
}
