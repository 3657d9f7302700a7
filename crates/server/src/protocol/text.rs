//! Text protocol result sets (COM_QUERY) and the pieces every result set shares: the column
//! count, ColumnDefinition41 packets, and values rendered as text.
//!
//! Owns: ColumnKind → MySQL type/flags/charset mapping and text row encoding (NULL = 0xFB;
//! a value's text is `tierdb_sql::result::column_text`, which SELECT ... INTO OUTFILE shares).
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

/// Appends the text form of a value of column `col` as a length-encoded string (NULL: 0xFB).
pub fn put_text_value(out: &mut Vec<u8>, col: &Column, v: &Value) {
    match tierdb_sql::result::column_text(col, v) {
        None => out.push(0xFB),
        Some(b) => put_lenenc_bytes(out, &b),
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
