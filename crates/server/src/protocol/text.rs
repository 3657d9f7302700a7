//! Text protocol result sets (COM_QUERY) and the pieces every result set shares: the column
//! count, ColumnDefinition41 packets, and values rendered as text.
//!
//! Owns: ColumnKind → MySQL type/flags/charset mapping, value-to-text formatting (integers,
//! unsigned, doubles the way MySQL prints them), and text row encoding (NULL = 0xFB).
//! Must never: reorder or drop rows or columns; write the terminator style itself — it asks
//! `response::end_of_rows`.

use std::io::{self, Write};

use super::backend::{Column, ColumnKind, Value};
use super::codec::{put_lenenc_bytes, put_lenenc_int, put_u16, put_u32};
use super::constants::{charset, flag, ty};
use super::packet::PacketWriter;
use super::response;

/// The wire type of a column kind.
pub fn wire_type(kind: ColumnKind) -> u8 {
    match kind {
        ColumnKind::Tiny => ty::TINY,
        ColumnKind::Short => ty::SHORT,
        ColumnKind::Int24 => ty::INT24,
        ColumnKind::Long => ty::LONG,
        ColumnKind::LongLong => ty::LONGLONG,
        ColumnKind::Float => ty::FLOAT,
        ColumnKind::Double => ty::DOUBLE,
        ColumnKind::NewDecimal => ty::NEWDECIMAL,
        ColumnKind::String => ty::STRING,
        ColumnKind::VarString => ty::VAR_STRING,
        ColumnKind::Blob => ty::BLOB,
        ColumnKind::Date => ty::DATE,
        ColumnKind::DateTime => ty::DATETIME,
        ColumnKind::Timestamp => ty::TIMESTAMP,
        ColumnKind::Year => ty::YEAR,
        ColumnKind::Time => ty::TIME,
        ColumnKind::Bit => ty::BIT,
        ColumnKind::Null => ty::NULL,
    }
}

fn is_numeric(kind: ColumnKind) -> bool {
    matches!(
        kind,
        ColumnKind::Tiny
            | ColumnKind::Short
            | ColumnKind::Int24
            | ColumnKind::Long
            | ColumnKind::LongLong
            | ColumnKind::Float
            | ColumnKind::Double
            | ColumnKind::NewDecimal
            | ColumnKind::Year
    )
}

/// Bytes per character of the announced text charset (utf8mb4).
const TEXT_BYTES_PER_CHAR: u32 = 4;

/// A ColumnDefinition41 payload. `field_list` adds the default-value field COM_FIELD_LIST
/// replies carry (sent as NULL).
pub fn column_definition(out: &mut Vec<u8>, col: &Column, field_list: bool) {
    put_lenenc_bytes(out, b"def");
    put_lenenc_bytes(out, col.schema.as_bytes());
    put_lenenc_bytes(out, col.table.as_bytes());
    put_lenenc_bytes(out, col.table.as_bytes());
    put_lenenc_bytes(out, col.name.as_bytes());
    put_lenenc_bytes(out, col.name.as_bytes());
    put_lenenc_int(out, 0x0c);
    let text = col.is_text && !is_numeric(col.kind);
    let (cs, length) = if text {
        (
            u16::from(charset::UTF8MB4_GENERAL_CI),
            col.length.saturating_mul(TEXT_BYTES_PER_CHAR),
        )
    } else {
        (charset::BINARY, col.length)
    };
    put_u16(out, cs);
    put_u32(out, length);
    out.push(wire_type(col.kind));
    let mut flags = 0u16;
    if col.not_null {
        flags |= flag::NOT_NULL;
    }
    if col.primary_key {
        flags |= flag::PRI_KEY;
    }
    if col.unsigned {
        flags |= flag::UNSIGNED;
    }
    if col.kind == ColumnKind::Year {
        flags |= flag::UNSIGNED | flag::ZEROFILL;
    }
    if col.kind == ColumnKind::Bit {
        flags |= flag::UNSIGNED;
    }
    if is_numeric(col.kind) {
        flags |= flag::NUM;
    }
    if col.kind == ColumnKind::Blob {
        flags |= flag::BLOB;
    }
    if !text
        && matches!(
            col.kind,
            ColumnKind::String | ColumnKind::VarString | ColumnKind::Blob
        )
    {
        flags |= flag::BINARY;
    }
    put_u16(out, flags);
    out.push(col.decimals);
    put_u16(out, 0);
    if field_list {
        out.push(0xFB);
    }
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
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e15).contains(&a) {
        format!("{v:e}")
    } else if v == 0.0 {
        "0".into()
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

/// Appends the text form of a non-NULL value of column `col` as a length-encoded string.
pub fn put_text_value(out: &mut Vec<u8>, col: &Column, v: &Value) {
    match v {
        Value::Null => out.push(0xFB),
        v if col.kind == ColumnKind::Bit => put_lenenc_bytes(out, &bit_bytes(col, v)),
        // YEAR shows four digits: 0 is `0000`.
        Value::Int(i) if col.kind == ColumnKind::Year => {
            put_lenenc_bytes(out, format!("{i:04}").as_bytes())
        }
        Value::Int(i) => {
            let s = if col.unsigned && *i < 0 {
                (*i as u64).to_string()
            } else {
                i.to_string()
            };
            put_lenenc_bytes(out, s.as_bytes());
        }
        Value::UInt(u) => put_lenenc_bytes(out, u.to_string().as_bytes()),
        Value::Double(d) => {
            let s = match col.kind {
                ColumnKind::Float => format_float(*d),
                ColumnKind::NewDecimal if col.decimals <= 30 => {
                    tierdb_sql::coerce::decimal_text(*d, col.decimals)
                }
                _ => format_double(*d),
            };
            put_lenenc_bytes(out, s.as_bytes());
        }
        Value::Bytes(b) => match col.kind {
            ColumnKind::NewDecimal if col.decimals <= 30 => {
                put_lenenc_bytes(out, &tierdb_sql::coerce::decimal_bytes_at(b, col.decimals))
            }
            _ => put_lenenc_bytes(out, b),
        },
    }
}

/// Writes column count, column definitions and (classic style) their EOF.
pub fn write_columns<W: Write>(
    w: &mut PacketWriter<W>,
    columns: &[Column],
    client_caps: u32,
    status: u16,
) -> io::Result<()> {
    w.packet(|b| put_lenenc_int(b, columns.len() as u64))?;
    for col in columns {
        w.packet(|b| column_definition(b, col, false))?;
    }
    if client_caps & super::constants::cap::DEPRECATE_EOF == 0 {
        w.packet(|b| response::eof(b, status, 0))?;
    }
    Ok(())
}

/// Writes a whole text result set. Rows shorter than the column list are padded with NULL;
/// extra values are dropped (a backend bug must not corrupt the stream).
pub fn write_result_set<W: Write>(
    w: &mut PacketWriter<W>,
    columns: &[Column],
    rows: &[Vec<Value>],
    client_caps: u32,
    status: u16,
    warnings: u16,
) -> io::Result<()> {
    write_columns(w, columns, client_caps, status)?;
    for row in rows {
        w.packet(|b| {
            for (i, col) in columns.iter().enumerate() {
                put_text_value(b, col, row.get(i).unwrap_or(&Value::Null));
            }
        })?;
    }
    w.packet(|b| response::end_of_rows(b, client_caps, status, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_mysql() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(100.0), "100");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(-2.25), "-2.25");
        assert_eq!(format_double(1e20), "1e20");
        assert_eq!(format_double(1.2345e-5), "1.2345e-5");
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

    #[test]
    fn text_row_values() {
        let mut out = Vec::new();
        let mut col = Column::bigint("x");
        put_text_value(&mut out, &col, &Value::Int(-1));
        col.unsigned = true;
        put_text_value(&mut out, &col, &Value::Int(-1));
        put_text_value(&mut out, &col, &Value::Null);
        assert_eq!(out, b"\x02-1\x1418446744073709551615\xFB");
    }

    #[test]
    fn column_definition_layout() {
        let mut out = Vec::new();
        column_definition(&mut out, &Column::bigint("n"), true);
        // def, "", "", "", n, n, 0x0c, charset 63, length 21, LONGLONG, NUM flag, 0 dec, filler, NULL default
        assert_eq!(out, b"\x03def\x00\x00\x00\x01n\x01n\x0c\x3f\x00\x15\x00\x00\x00\x08\x00\x80\x00\x00\x00\xFB");
    }
}
