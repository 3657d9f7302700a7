//! Exact decimal numbers for DECIMAL arithmetic and sums: a value is `m / 10^s` with an
//! arbitrary-precision mantissa, kept to MariaDB's limits (81 significant digits inside a
//! computation, as its nine nine-digit words; scale at most 38).
//!
//! Owns: `Dec` and its conversions from the values DECIMAL computations meet (integers,
//! DECIMAL text such as "-12.50", and doubles, read through their shortest decimal form),
//! its + - * / and remainder, rounding half away from zero, and its text.
//!
//! Must never: round silently. An operation whose result would need more than
//! `MAX_DIGITS` digits returns `None`, and the caller falls back to its double path; only a
//! product's scale past `MAX_SCALE` and a quotient's digits past its scale are cut (as
//! MariaDB cuts them).

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use tierdb_engine::Value;

/// The largest scale kept (MariaDB's DECIMAL scale limit).
pub const MAX_SCALE: u8 = 38;

/// The most significant digits a value may have (MariaDB computes in nine words of nine
/// digits); beyond, operations refuse, so no computation grows without bound.
pub const MAX_DIGITS: u32 = 81;

/// An exact decimal: `m / 10^s`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dec {
    m: BigInt,
    s: u8,
}

fn pow10(n: u32) -> BigInt {
    BigInt::from(10u8).pow(n)
}

/// Significant digits of `m` (0 has none).
fn digits(m: &BigInt) -> u32 {
    match m.magnitude().to_u128() {
        Some(0) => 0,
        Some(u) => u.ilog10() + 1,
        None => m.magnitude().to_string().len() as u32,
    }
}

/// `n / d` (d nonzero) rounded half away from zero.
fn div_half_away(n: &BigInt, d: &BigInt) -> BigInt {
    let (q, r) = (n / d, n % d);
    if r.abs() * 2u8 < d.abs() {
        q
    } else if n.is_negative() != d.is_negative() {
        q - 1u8
    } else {
        q + 1u8
    }
}

/// The order bytes of a nonzero value 0.`digits` * 10^`e` (see `Dec::order_bytes`).
fn order_from_parts(neg: bool, e: i32, digits: &str) -> Vec<u8> {
    let digits = digits.trim_end_matches('0');
    let e = (e.clamp(-0x7FFF, 0x7FFF) + 0x8000) as u16;
    let mut out = Vec::with_capacity(digits.len() + 4);
    if neg {
        // Complemented, and closed by 0xFF so that a longer one sorts first.
        out.push(0);
        out.extend_from_slice(&(!e).to_be_bytes());
        out.extend(digits.bytes().map(|c| !c));
        out.push(0xFF);
    } else {
        out.push(2);
        out.extend_from_slice(&e.to_be_bytes());
        out.extend_from_slice(digits.as_bytes());
    }
    out
}

impl Dec {
    pub fn from_int(i: i128) -> Dec {
        Dec {
            m: BigInt::from(i),
            s: 0,
        }
    }

    pub fn scale(&self) -> u8 {
        self.s
    }

    fn checked(m: BigInt, s: u8) -> Option<Dec> {
        (digits(&m) <= MAX_DIGITS && s <= MAX_SCALE).then_some(Dec { m, s })
    }

    /// Plain decimal text: an optional sign, digits, an optional point and fraction digits
    /// (no spaces, no exponent). `None` for anything else, past `MAX_DIGITS` digits or past
    /// `MAX_SCALE` fraction digits.
    pub fn parse(b: &[u8]) -> Option<Dec> {
        let (neg, int, frac) = crate::coerce::plain_decimal_parts(b)?;
        let s = u8::try_from(frac.len()).ok().filter(|&s| s <= MAX_SCALE)?;
        let int = &int[int.iter().take_while(|&&c| c == b'0').count()..];
        if int.len() + frac.len() > MAX_DIGITS as usize + usize::from(MAX_SCALE) {
            return None;
        }
        let mut text = Vec::with_capacity(int.len() + frac.len() + 1);
        text.extend_from_slice(int);
        text.extend_from_slice(frac);
        if text.is_empty() {
            text.push(b'0');
        }
        let m = BigInt::parse_bytes(&text, 10)?;
        Dec::checked(if neg { -m } else { m }, s)
    }

    /// The exact value of an integer, of DECIMAL text, or of a double's shortest decimal
    /// form (the literal it was read from: 0.1 is 0.1). `None` for NULL, other text,
    /// non-finite doubles and anything past `MAX_DIGITS` digits.
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

    /// The exact value of DECIMAL text (`None` for any other value): what functions keep
    /// every digit of, where they read numbers and doubles as doubles.
    pub fn of_text(v: &Value) -> Option<Dec> {
        match v {
            Value::Bytes(b) => Dec::parse(b),
            _ => None,
        }
    }

    /// The nearest double.
    pub fn to_f64(&self) -> f64 {
        crate::coerce::parse_number(self.text().as_bytes()).0
    }

    fn has_fraction(&self) -> bool {
        self.m != &self.truncate(0).m * pow10(u32::from(self.s))
    }

    /// The same value at the larger scale `s` (exact); `None` when it does not fit.
    pub fn widen(&self, s: u8) -> Option<Dec> {
        if s < self.s || s > MAX_SCALE {
            return None;
        }
        Dec::checked(&self.m * pow10(u32::from(s - self.s)), s)
    }

    /// The value at scale `s`: widened exactly, or rounded half away from zero.
    pub fn round(&self, s: u8) -> Option<Dec> {
        if s >= self.s {
            return self.widen(s);
        }
        Dec::checked(div_half_away(&self.m, &pow10(u32::from(self.s - s))), s)
    }

    /// The value rounded half away from zero to `places` digits after the point; negative
    /// places round to tens, hundreds, ... (ROUND(x, -2)), keeping the value's scale.
    pub fn round_places(&self, places: i32) -> Option<Dec> {
        if places >= 0 {
            let s = u8::try_from(places).unwrap_or(MAX_SCALE);
            return self.round(s.min(self.s));
        }
        // In units of the mantissa: a multiple of 10^(k + s).
        let k = places.unsigned_abs();
        let step = pow10(k + u32::from(self.s));
        Dec::checked(div_half_away(&self.m, &step) * &step, self.s)
    }

    /// The value cut toward zero to scale `s` (at most its own).
    pub fn truncate(&self, s: u8) -> Dec {
        if s >= self.s {
            return self.clone();
        }
        Dec {
            m: &self.m / pow10(u32::from(self.s - s)),
            s,
        }
    }

    fn aligned(&self, o: &Dec) -> Option<(BigInt, BigInt, u8)> {
        let s = self.s.max(o.s);
        Some((self.widen(s)?.m, o.widen(s)?.m, s))
    }

    pub fn checked_add(&self, o: &Dec) -> Option<Dec> {
        let (a, b, s) = self.aligned(o)?;
        Dec::checked(a + b, s)
    }

    pub fn checked_sub(&self, o: &Dec) -> Option<Dec> {
        let (a, b, s) = self.aligned(o)?;
        Dec::checked(a - b, s)
    }

    /// The product; a scale past `MAX_SCALE` is cut toward zero to it.
    pub fn checked_mul(&self, o: &Dec) -> Option<Dec> {
        let p = Dec {
            m: &self.m * &o.m,
            s: self.s + o.s,
        };
        let p = p.truncate(p.s.min(MAX_SCALE));
        Dec::checked(p.m, p.s)
    }

    /// `self / o` at scale `s`, cut toward zero (MariaDB's division keeps whole groups of
    /// nine digits and drops the rest). `None` when `o` is zero or the result does not fit.
    pub fn checked_div(&self, o: &Dec, s: u8) -> Option<Dec> {
        if o.m.is_zero() || s > MAX_SCALE {
            return None;
        }
        // self / o = (m1 / 10^s1) / (m2 / 10^s2) = m1 * 10^(s + s2 - s1) / m2 / 10^s.
        let shift = (u32::from(s) + u32::from(o.s)).checked_sub(u32::from(self.s))?;
        Dec::checked(&self.m * pow10(shift) / &o.m, s)
    }

    /// `self % o` (the sign of `self`, as MOD); `None` when `o` is zero.
    pub fn checked_rem(&self, o: &Dec) -> Option<Dec> {
        if o.m.is_zero() {
            return None;
        }
        let (a, b, s) = self.aligned(o)?;
        Dec::checked(a % b, s)
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
    pub fn div_int(&self, n: i64, s: u8) -> Option<Dec> {
        if n == 0 {
            return None;
        }
        Dec::checked(div_half_away(&self.widen(s)?.m, &BigInt::from(n)), s)
    }

    /// The nearest integer toward minus infinity (FLOOR) or plus infinity (CEIL).
    pub fn integral(&self, up: bool) -> Dec {
        let t = self.truncate(0);
        let m = match (self.has_fraction(), up, self.m.is_negative()) {
            (true, true, false) => t.m + 1u8,
            (true, false, true) => t.m - 1u8,
            _ => t.m,
        };
        Dec { m, s: 0 }
    }

    pub fn abs(&self) -> Dec {
        Dec {
            m: self.m.abs(),
            s: self.s,
        }
    }

    pub fn neg(&self) -> Dec {
        Dec {
            m: -&self.m,
            s: self.s,
        }
    }

    /// The value as an integer `Value` when it is a whole number within 64 bits.
    pub fn integer_value(&self) -> Option<Value> {
        if self.has_fraction() {
            return None;
        }
        self.truncate(0).m.to_i128().and_then(Value::from_i128)
    }

    /// An integer `Value` when the value is a whole number within 64 bits, else as
    /// `into_value` carries it (text past 15 digits).
    pub fn into_integer_value(self) -> Value {
        self.integer_value().unwrap_or_else(|| self.into_value())
    }

    /// The value as text with exactly its scale's fraction digits ("-0.50", "12").
    pub fn text(&self) -> String {
        let s = usize::from(self.s);
        let digits = self.m.magnitude().to_string();
        let digits = if digits.len() <= s {
            format!("{}{digits}", "0".repeat(s + 1 - digits.len()))
        } else {
            digits
        };
        let (int, frac) = digits.split_at(digits.len() - s);
        let sign = if self.m.is_negative() { "-" } else { "" };
        if s == 0 {
            format!("{sign}{int}")
        } else {
            format!("{sign}{int}.{frac}")
        }
    }

    /// Bytes whose byte order is the numeric order (equal values, whatever their scale,
    /// give equal bytes): a sign class, then for nonzero values the decimal exponent and
    /// the significant digits, both complemented for negative values (whose digits end in
    /// 0xFF, so a longer one sorts first). Used to compare DECIMALs exactly.
    pub fn order_bytes(&self) -> Vec<u8> {
        if self.m.is_zero() {
            return vec![1];
        }
        let all = self.m.magnitude().to_string();
        // value = 0.d1d2... * 10^e, e = integer digits (negative for leading fraction zeros)
        let e = all.len() as i32 - i32::from(self.s);
        order_from_parts(self.m.is_negative(), e, &all)
    }

    /// `order_bytes` of a double (for values past `Dec`'s limits, read as doubles): the same
    /// encoding, from its shortest digits; infinities sort past every finite value.
    pub fn order_bytes_of_double(d: f64) -> Vec<u8> {
        if d == 0.0 || d.is_nan() {
            return vec![1];
        }
        if d.is_infinite() {
            return vec![if d < 0.0 { 0 } else { 3 }];
        }
        // "1.2345e-50": digits 12345, value = 0.12345 * 10^(-50 + 1).
        let sci = format!("{:e}", d.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let e = exp.parse::<i32>().unwrap_or(0) + 1;
        order_from_parts(d < 0.0, e, &digits)
    }

    /// The value as DECIMAL computations carry it: a double when it has at most 15
    /// significant digits (a double then holds exactly these digits as its shortest form),
    /// else the exact text.
    pub fn into_value(self) -> Value {
        if digits(&self.m) <= 15 {
            if let Ok(d) = self.text().parse::<f64>() {
                return Value::Double(d);
            }
        }
        self.into_text_value()
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
        // 81 digits fit, 82 do not; 38 fraction digits fit, 39 do not.
        assert!(Dec::parse("9".repeat(81).as_bytes()).is_some());
        assert_eq!(Dec::parse("1".repeat(82).as_bytes()), None);
        assert!(Dec::parse(format!("0.{}", "1".repeat(38)).as_bytes()).is_some());
        assert_eq!(Dec::parse(format!("0.{}", "1".repeat(39)).as_bytes()), None);
    }

    #[test]
    fn sums_and_products_keep_every_digit() {
        assert_eq!(d("0.1").checked_add(&d("0.2")).unwrap().text(), "0.3");
        assert_eq!(
            d("12345678901234567890.1234567891")
                .checked_add(&d("12345678901234567890.1234567891"))
                .unwrap()
                .text(),
            "24691357802469135780.2469135782"
        );
        assert_eq!(
            d("99999999999999.99").checked_mul(&d("2")).unwrap().text(),
            "199999999999999.98"
        );
        assert_eq!(d("1.5").checked_sub(&d("2.25")).unwrap().text(), "-0.75");
        assert_eq!(d("1.10").checked_mul(&d("-0.3")).unwrap().text(), "-0.330");
    }

    #[test]
    fn overflow_is_none_not_a_wrong_number() {
        let big = d(&"9".repeat(81));
        assert_eq!(big.checked_add(&big), None);
        assert_eq!(big.checked_mul(&d("10")), None);
        assert_eq!(d("1.5").widen(MAX_SCALE + 1), None);
        // 65-digit DECIMAL values (MariaDB's precision limit) compute exactly.
        let a = d(&format!("{}.{}", "9".repeat(35), "9".repeat(30)));
        assert_eq!(
            a.checked_add(&d("0.000000000000000000000000000001"))
                .unwrap()
                .text(),
            format!("1{}.{}", "0".repeat(35), "0".repeat(30))
        );
        // A product's scale past 38 is cut to 38.
        let tiny = d(&format!("0.{}1", "0".repeat(29)));
        assert_eq!(
            tiny.checked_mul(&tiny).unwrap(),
            Dec::from_int(0).widen(38).unwrap()
        );
    }

    #[test]
    fn remainder_keeps_the_dividends_sign_and_fraction() {
        let b = d("1234567890123456789012345678.5555555555");
        assert_eq!(b.checked_rem(&d("10")).unwrap().text(), "8.5555555555");
        assert_eq!(b.checked_rem(&d("1")).unwrap().text(), "0.5555555555");
        assert_eq!(b.checked_rem(&d("0.3")).unwrap().text(), "0.2555555555");
        assert_eq!(d("-7.5").checked_rem(&d("2")).unwrap().text(), "-1.5");
        assert_eq!(d("1").checked_rem(&d("0.0")), None);
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
            x.checked_div(&y, Dec::division_scale(x.scale(), y.scale()))
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
        assert_eq!(d("1").checked_div(&d("0"), 9), None);
        assert_eq!(Dec::division_scale(30, 30), MAX_SCALE);
    }

    #[test]
    fn rounding_to_negative_places_rounds_the_integer_part() {
        let r = |x: &str, p: i32| d(x).round_places(p).unwrap().text();
        assert_eq!(r("14.5", -1), "10.0");
        assert_eq!(r("15", -1), "20");
        assert_eq!(r("-15", -1), "-20");
        assert_eq!(
            r("-12345678901234567890123.1234567", -3),
            "-12345678901234567890000.0000000"
        );
        assert_eq!(r("1.005", 2), "1.01");
        assert_eq!(r("1.5", 3), "1.5");
    }

    #[test]
    fn floor_ceil_and_abs_keep_every_digit() {
        let r = d("-12345678901234567890.1234567891");
        assert_eq!(r.integral(false).text(), "-12345678901234567891");
        assert_eq!(r.integral(true).text(), "-12345678901234567890");
        assert_eq!(d("2.5").integral(true).text(), "3");
        assert_eq!(d("2.5").integral(false).text(), "2");
        assert_eq!(d("-2").integral(false).text(), "-2");
        assert_eq!(r.abs().text(), "12345678901234567890.1234567891");
        assert_eq!(d("7").into_integer_value(), Value::Int(7));
        assert_eq!(
            d("18446744073709551615").into_integer_value(),
            Value::UInt(u64::MAX)
        );
        assert_eq!(
            d("-12345678901234567891").into_integer_value(),
            Value::Bytes(b"-12345678901234567891".to_vec())
        );
    }

    #[test]
    fn order_bytes_sort_as_the_numbers() {
        let vals = [
            "-12345678901234567890.1234567891",
            "-12345678901234567890.12345678",
            "-100",
            "-99.5",
            "-1",
            "-0.5",
            "-0.05",
            "0",
            "0.0000000001",
            "0.05",
            "0.5",
            "1",
            "1.0000000000000000000000000001",
            "99.5",
            "100",
            "12345678901234567889.99",
            "12345678901234567890.1234567891",
        ];
        for w in vals.windows(2) {
            assert!(
                d(w[0]).order_bytes() < d(w[1]).order_bytes(),
                "{} < {}",
                w[0],
                w[1]
            );
        }
        assert_eq!(d("1.50").order_bytes(), d("1.5").order_bytes());
        // Doubles past Dec's limits encode the same way and sort among the exact values.
        assert_eq!(Dec::order_bytes_of_double(0.05), d("0.05").order_bytes());
        assert_eq!(Dec::order_bytes_of_double(-99.5), d("-99.5").order_bytes());
        assert!(Dec::order_bytes_of_double(1e-50) < d("0.0000000001").order_bytes());
        assert!(Dec::order_bytes_of_double(1e-50) > d("0").order_bytes());
        assert!(Dec::order_bytes_of_double(-1e-50) < d("0").order_bytes());
        assert!(Dec::order_bytes_of_double(-1e-50) > d("-0.0000000001").order_bytes());
        assert!(Dec::order_bytes_of_double(1e100) < Dec::order_bytes_of_double(2e100));
        assert!(Dec::order_bytes_of_double(1e100) > d(&"9".repeat(81)).order_bytes());
        assert!(Dec::order_bytes_of_double(f64::INFINITY) > Dec::order_bytes_of_double(1e308));
        assert_eq!(d("-0.00").order_bytes(), d("0").order_bytes());
        assert_eq!(d("100").order_bytes(), d("100.000").order_bytes());
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
            prop_assert_eq!(x.checked_add(&y).unwrap(), Dec { m: (xa + yb).into(), s });
            prop_assert_eq!(x.checked_sub(&y).unwrap(), Dec { m: (xa - yb).into(), s });
            prop_assert_eq!(x.checked_mul(&y).unwrap(), Dec { m: (i128::from(a) * i128::from(b)).into(), s: sa + sb });
            // Text round-trips, and rounding to a smaller scale moves by at most half a unit.
            prop_assert_eq!(Dec::parse(x.text().as_bytes()).unwrap().widen(sa).unwrap(), x.clone());
            // Order bytes compare as the values do.
            prop_assert_eq!(x.order_bytes().cmp(&y.order_bytes()), (xa).cmp(&yb));
            if sa > 0 {
                let r = x.round(sa - 1).unwrap().widen(sa).unwrap();
                prop_assert!((r.m - &x.m).abs() * 2u8 <= BigInt::from(10u8));
            }
        }
    }
}
