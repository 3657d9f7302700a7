//! Memcomparable key encoding: encoded keys compare with `memcmp` exactly as the values
//! compare with `Value::key_cmp` (within one column type), except that a case-insensitive
//! column's text is keyed by its weights and a TIME column's text by its microseconds
//! (`encode_column_value`). Used for primary and secondary index keys. Layout per value is in
//! `docs/format.md` ("Key encoding").

use crate::collation::Collation;
use crate::types::{ColumnDef, ColumnType, TableDef, Value};
use std::ops::Bound;

const TAG_NULL: u8 = 0x00;
const TAG_INT: u8 = 0x02;
const TAG_DOUBLE: u8 = 0x03;
const TAG_BYTES: u8 = 0x04;
/// An integer above `i64::MAX`: after every `TAG_INT` key (only integer columns hold both).
const TAG_UINT: u8 = 0x05;
/// Larger than every tag: `prefix ++ [UPPER]` sorts after every key starting with `prefix`.
const UPPER: u8 = 0xFF;

pub fn encode_value(out: &mut Vec<u8>, v: &Value) {
    encode_value_in(out, v, Collation::Binary)
}

/// Encodes `v` as a key part of a column with collation `coll`: the text of a
/// case-insensitive column is stored as its weight string (`Collation::key_bytes`), so values
/// its collation calls equal get one key. Such a part decodes to the weights, not the value.
pub fn encode_value_in(out: &mut Vec<u8>, v: &Value, coll: Collation) {
    match v {
        Value::Null => out.push(TAG_NULL),
        Value::Int(i) => {
            out.push(TAG_INT);
            out.extend_from_slice(&((*i as u64) ^ (1 << 63)).to_be_bytes());
        }
        Value::UInt(u) => {
            out.push(TAG_UINT);
            out.extend_from_slice(&u.to_be_bytes());
        }
        Value::Double(d) => {
            out.push(TAG_DOUBLE);
            let bits = d.to_bits();
            let s = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            };
            out.extend_from_slice(&s.to_be_bytes());
        }
        Value::Bytes(b) => {
            out.push(TAG_BYTES);
            for &c in coll.key_bytes(b).iter() {
                out.push(c);
                if c == 0 {
                    out.push(0xFF);
                }
            }
            out.push(0);
            out.push(1);
        }
    }
}

/// Encodes `v` as a key part of column `col` (None: binary): under its collation, and a
/// TIME's text as its microseconds, so that keys order by time (`-01:00:00` before
/// `00:00:00`, `99:00:00` before `100:00:00`). Text that is no canonical TIME stays bytes
/// (after every time: the SQL layer stores only canonical text).
pub fn encode_column_value(out: &mut Vec<u8>, v: &Value, col: Option<&ColumnDef>) {
    match (col, v) {
        (Some(c), Value::Bytes(b)) if matches!(c.ty, ColumnType::Time(_)) => match time_micros(b) {
            Some(m) => encode_value_in(out, &Value::Int(m), Collation::Binary),
            None => encode_value_in(out, v, Collation::Binary),
        },
        (Some(c), _) => encode_value_in(out, v, c.collation),
        (None, _) => encode_value_in(out, v, Collation::Binary),
    }
}

/// The signed microseconds of canonical TIME text `[-]H+:MM:SS[.f]` (at most 6 fraction
/// digits, minutes and seconds below 60); None for any other bytes.
pub fn time_micros(b: &[u8]) -> Option<i64> {
    let (neg, b) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    let digits = |s: &[u8]| -> Option<i64> {
        if s.is_empty() || s.len() > 7 || !s.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(s.iter().fold(0i64, |n, c| n * 10 + i64::from(c - b'0')))
    };
    let (main, frac) = match b.iter().position(|&c| c == b'.') {
        Some(p) => (&b[..p], Some(&b[p + 1..])),
        None => (b, None),
    };
    let mut parts = main.split(|&c| c == b':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || h.len() < 2 || m.len() != 2 || s.len() != 2 {
        return None;
    }
    let (h, m, s) = (digits(h)?, digits(m)?, digits(s)?);
    if m > 59 || s > 59 {
        return None;
    }
    let f = match frac {
        None => 0,
        Some(f) if f.len() <= 6 => digits(f)? * 10i64.pow(6 - f.len() as u32),
        Some(_) => return None,
    };
    let micros = ((h * 60 + m) * 60 + s) * 1_000_000 + f;
    Some(if neg { -micros } else { micros })
}

pub fn encode_key(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 9);
    for v in values {
        encode_value(&mut out, v);
    }
    out
}

/// Encodes `values` as the key of columns `cols` of `def` (each value under its column's
/// collation; a position past the columns — the hidden row id — is binary).
pub fn encode_key_of(def: &TableDef, cols: &[usize], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 9);
    for (i, v) in values.iter().enumerate() {
        let col = cols.get(i).and_then(|&c| def.columns.get(c));
        encode_column_value(&mut out, v, col);
    }
    out
}

/// Decodes a key produced by `encode_key`. Returns `None` on malformed input.
pub fn decode_key(mut b: &[u8]) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    while let Some((&tag, rest)) = b.split_first() {
        b = rest;
        match tag {
            TAG_NULL => out.push(Value::Null),
            TAG_INT => {
                let raw: [u8; 8] = b.get(..8)?.try_into().ok()?;
                b = &b[8..];
                out.push(Value::Int((u64::from_be_bytes(raw) ^ (1 << 63)) as i64));
            }
            TAG_UINT => {
                let raw: [u8; 8] = b.get(..8)?.try_into().ok()?;
                b = &b[8..];
                // Only integers above i64::MAX take this tag (one encoding per key).
                let u = u64::from_be_bytes(raw);
                if i64::try_from(u).is_ok() {
                    return None;
                }
                out.push(Value::UInt(u));
            }
            TAG_DOUBLE => {
                let raw: [u8; 8] = b.get(..8)?.try_into().ok()?;
                b = &b[8..];
                let s = u64::from_be_bytes(raw);
                let bits = if s >> 63 == 1 { s & !(1 << 63) } else { !s };
                out.push(Value::Double(f64::from_bits(bits)));
            }
            TAG_BYTES => {
                let mut v = Vec::new();
                loop {
                    let (&c, rest) = b.split_first()?;
                    b = rest;
                    if c == 0 {
                        let (&n, rest) = b.split_first()?;
                        b = rest;
                        match n {
                            0xFF => v.push(0),
                            1 => break,
                            _ => return None,
                        }
                    } else {
                        v.push(c);
                    }
                }
                out.push(Value::Bytes(v));
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Turns a bound on a key *prefix* (the first `n` key columns) into a bound on encoded keys;
/// `enc` encodes a prefix (e.g. `encode_key`, or `encode_key_of` with the key's columns).
pub fn lower_bound(b: &Bound<Vec<Value>>, enc: impl Fn(&[Value]) -> Vec<u8>) -> Bound<Vec<u8>> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(p) => Bound::Included(enc(p)),
        Bound::Excluded(p) => {
            let mut k = enc(p);
            k.push(UPPER);
            Bound::Included(k)
        }
    }
}

pub fn upper_bound(b: &Bound<Vec<Value>>, enc: impl Fn(&[Value]) -> Vec<u8>) -> Bound<Vec<u8>> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(p) => {
            let mut k = enc(p);
            k.push(UPPER);
            Bound::Excluded(k)
        }
        Bound::Excluded(p) => Bound::Excluded(enc(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn val() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<i64>().prop_map(Value::Int),
            any::<u64>().prop_map(Value::from_u64),
            (i64::MAX as u64..=u64::MAX).prop_map(Value::from_u64),
            proptest::collection::vec(
                prop_oneof![Just(0u8), Just(1u8), Just(0xFFu8), any::<u8>()],
                0..6
            )
            .prop_map(Value::Bytes),
        ]
    }

    proptest! {
        #[test]
        fn encoding_preserves_order_and_round_trips(a in proptest::collection::vec(val(), 1..3), b in proptest::collection::vec(val(), 1..3)) {
            let (ea, eb) = (encode_key(&a), encode_key(&b));
            prop_assert_eq!(decode_key(&ea).unwrap(), a.clone());
            // Compare column by column like a composite key.
            let mut expect = std::cmp::Ordering::Equal;
            for (x, y) in a.iter().zip(b.iter()) {
                // An integer above i64::MAX and a string never share a column; their tags
                // put the integer last.
                let c = match (x, y) {
                    (Value::UInt(_), Value::Bytes(_)) => std::cmp::Ordering::Greater,
                    (Value::Bytes(_), Value::UInt(_)) => std::cmp::Ordering::Less,
                    _ => x.key_cmp(y),
                };
                if c != std::cmp::Ordering::Equal { expect = c; break; }
            }
            if expect == std::cmp::Ordering::Equal { expect = a.len().cmp(&b.len()); }
            prop_assert_eq!(ea.cmp(&eb), expect);
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = decode_key(&bytes);
        }
    }

    #[test]
    fn integers_above_i64_max_sort_after_every_i64_and_have_one_encoding() {
        let top = encode_key(&[Value::Int(i64::MAX)]);
        let above = encode_key(&[Value::from_u64(1 << 63)]);
        let max = encode_key(&[Value::from_u64(u64::MAX)]);
        assert!(top < above && above < max);
        assert_eq!(decode_key(&max), Some(vec![Value::UInt(u64::MAX)]));
        // 7 under the upper-half tag is not a key tierdb writes.
        assert_eq!(decode_key(&[0x05, 0, 0, 0, 0, 0, 0, 0, 7]), None);
    }

    #[test]
    fn prefix_bounds_cover_exactly_the_prefix() {
        let k = |a: i64, b: i64| encode_key(&[Value::Int(a), Value::Int(b)]);
        let lo = lower_bound(&Bound::Included(vec![Value::Int(5)]), encode_key);
        let hi = upper_bound(&Bound::Included(vec![Value::Int(5)]), encode_key);
        let inside = |key: &Vec<u8>| {
            (match &lo {
                Bound::Included(l) => key >= l,
                _ => true,
            }) && (match &hi {
                Bound::Excluded(h) => key < h,
                _ => true,
            })
        };
        assert!(inside(&k(5, i64::MIN)) && inside(&k(5, i64::MAX)));
        assert!(!inside(&k(4, i64::MAX)) && !inside(&k(6, i64::MIN)));
    }
}
