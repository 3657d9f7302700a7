//! Binary protocol: COM_STMT_PREPARE replies, COM_STMT_EXECUTE parameter decoding and binary
//! result rows.
//!
//! Owns: per-statement parameter state kept between executes (types from the last execute
//! that sent them, COM_STMT_SEND_LONG_DATA buffers), the decoding of every parameter type
//! into a `Value`, and the encoding of values into binary rows by column kind.
//! Must never: panic or read past the payload on malformed input (every decode returns
//! `ExecError`); guess parameter types it was never told.

use std::collections::HashMap;
use std::io::{self, Write};

use super::backend::{Column, ColumnKind, PreparedInfo, SqlError, Value};
use super::codec::{put_lenenc_bytes, put_u16, put_u32, Cursor, Malformed};
use super::constants::{cap, ty};
use super::packet::PacketWriter;
use super::response;
use super::text::{column_definition, write_columns};
use tierdb_sql::result::{bit_bytes, format_double};

/// What the connection remembers about one prepared statement.
#[derive(Clone, Debug, Default)]
pub struct StmtState {
    pub param_count: u16,
    /// (type, unsigned) per parameter, from the last execute that bound types.
    pub types: Option<Vec<(u8, bool)>>,
    /// COM_STMT_SEND_LONG_DATA chunks per parameter, consumed by the next execute.
    pub long_data: HashMap<u16, Vec<u8>>,
}

/// Why an execute cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error("Unknown prepared statement handler ({0}) given to mysqld_stmt_execute")]
    UnknownStatement(u32),
    #[error("Incorrect arguments to mysqld_stmt_execute")]
    Malformed,
    #[error("Incorrect arguments to mysqld_stmt_execute: unknown parameter type {0}")]
    UnknownType(u8),
    #[error("Incorrect arguments to mysqld_stmt_execute: parameter types were never sent")]
    NoTypes,
}

impl From<Malformed> for ExecError {
    fn from(_: Malformed) -> ExecError {
        ExecError::Malformed
    }
}

impl ExecError {
    pub fn to_sql_error(&self) -> SqlError {
        match self {
            ExecError::UnknownStatement(_) => SqlError::new(1243, "HY000", self.to_string()),
            _ => SqlError::new(1210, "HY000", self.to_string()),
        }
    }
}

/// Writes the COM_STMT_PREPARE_OK reply with parameter and column definitions.
pub fn write_prepare_ok<W: Write>(
    w: &mut PacketWriter<W>,
    info: &PreparedInfo,
    client_caps: u32,
    status: u16,
) -> io::Result<()> {
    let ncols = u16::try_from(info.columns.len()).unwrap_or(u16::MAX);
    w.packet(|b| {
        b.push(0x00);
        put_u32(b, info.statement_id);
        put_u16(b, ncols);
        put_u16(b, info.param_count);
        b.push(0);
        put_u16(b, 0);
    })?;
    let classic_eof = client_caps & cap::DEPRECATE_EOF == 0;
    if info.param_count > 0 {
        let param = Column {
            not_null: false,
            ..Column::bigint("?")
        };
        for _ in 0..info.param_count {
            w.packet(|b| column_definition(b, &param, false))?;
        }
        if classic_eof {
            w.packet(|b| response::eof(b, status, 0))?;
        }
    }
    if ncols > 0 {
        for col in info.columns.iter().take(usize::from(ncols)) {
            w.packet(|b| column_definition(b, col, false))?;
        }
        if classic_eof {
            w.packet(|b| response::eof(b, status, 0))?;
        }
    }
    Ok(())
}

/// Decodes a COM_STMT_EXECUTE body (after the command byte) into the statement id and its
/// parameter values, updating the statement's remembered types and consuming long data.
pub fn parse_execute(
    body: &[u8],
    stmts: &mut HashMap<u32, StmtState>,
) -> Result<(u32, Vec<Value>), ExecError> {
    let mut c = Cursor::new(body);
    let id = c.u32()?;
    let st = stmts.get_mut(&id).ok_or(ExecError::UnknownStatement(id))?;
    let _cursor_flags = c.u8()?;
    let _iterations = c.u32()?;
    let n = usize::from(st.param_count);
    if n == 0 {
        return Ok((id, Vec::new()));
    }
    let null_bitmap = c.take(n.div_ceil(8))?;
    let bound = c.u8()?;
    if bound == 1 {
        let mut types = Vec::with_capacity(n);
        for _ in 0..n {
            let t = c.u8()?;
            let f = c.u8()?;
            types.push((t, f & 0x80 != 0));
        }
        st.types = Some(types);
    }
    let types = st.types.as_ref().ok_or(ExecError::NoTypes)?;
    let mut values = Vec::with_capacity(n);
    for (i, &(t, unsigned)) in types.iter().enumerate() {
        let is_null = null_bitmap[i / 8] & (1 << (i % 8)) != 0;
        if let Some(data) = st.long_data.remove(&(i as u16)) {
            values.push(Value::Bytes(data));
        } else if is_null || t == ty::NULL {
            values.push(Value::Null);
        } else {
            values.push(decode_param(&mut c, t, unsigned)?);
        }
    }
    st.long_data.clear();
    Ok((id, values))
}

fn decode_param(c: &mut Cursor<'_>, t: u8, unsigned: bool) -> Result<Value, ExecError> {
    Ok(match t {
        ty::TINY => {
            let b = c.u8()?;
            Value::Int(if unsigned {
                i64::from(b)
            } else {
                i64::from(b as i8)
            })
        }
        ty::SHORT | ty::YEAR => {
            let v = c.u16()?;
            Value::Int(if unsigned {
                i64::from(v)
            } else {
                i64::from(v as i16)
            })
        }
        ty::LONG | ty::INT24 => {
            let v = c.u32()?;
            Value::Int(if unsigned {
                i64::from(v)
            } else {
                i64::from(v as i32)
            })
        }
        ty::LONGLONG => {
            let v = c.u64()?;
            if unsigned {
                Value::from_u64(v)
            } else {
                Value::Int(v as i64)
            }
        }
        ty::FLOAT => {
            let f = f32::from_le_bytes(c.u32()?.to_le_bytes());
            // Keep the digits the client meant (0.1f32 is 0.1, not 0.100000001490116).
            Value::Double(f.to_string().parse::<f64>().unwrap_or(f64::from(f)))
        }
        ty::DOUBLE => Value::Double(f64::from_le_bytes(c.u64()?.to_le_bytes())),
        ty::DATE | ty::NEWDATE => Value::Bytes(decode_datetime(c, true)?.into_bytes()),
        ty::DATETIME | ty::TIMESTAMP | ty::DATETIME2 | ty::TIMESTAMP2 => {
            Value::Bytes(decode_datetime(c, false)?.into_bytes())
        }
        ty::TIME | ty::TIME2 => Value::Bytes(decode_time(c)?.into_bytes()),
        ty::DECIMAL
        | ty::NEWDECIMAL
        | ty::VARCHAR
        | ty::BIT
        | ty::JSON
        | ty::ENUM
        | ty::SET
        | ty::TINY_BLOB
        | ty::MEDIUM_BLOB
        | ty::LONG_BLOB
        | ty::BLOB
        | ty::VAR_STRING
        | ty::STRING
        | ty::GEOMETRY => Value::Bytes(c.lenenc_bytes()?.to_vec()),
        other => return Err(ExecError::UnknownType(other)),
    })
}

fn decode_datetime(c: &mut Cursor<'_>, date_only: bool) -> Result<String, ExecError> {
    let len = usize::from(c.u8()?);
    let mut d = Cursor::new(c.take(len)?);
    let (mut y, mut mo, mut day, mut h, mut mi, mut s, mut us) =
        (0u16, 0u8, 0u8, 0u8, 0u8, 0u8, 0u32);
    if len >= 4 {
        y = d.u16()?;
        mo = d.u8()?;
        day = d.u8()?;
    }
    if len >= 7 {
        h = d.u8()?;
        mi = d.u8()?;
        s = d.u8()?;
    }
    if len >= 11 {
        us = d.u32()?;
    }
    let mut out = format!("{y:04}-{mo:02}-{day:02}");
    if !date_only {
        out.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
        if us != 0 {
            out.push_str(&format!(".{us:06}"));
        }
    }
    Ok(out)
}

fn decode_time(c: &mut Cursor<'_>) -> Result<String, ExecError> {
    let len = usize::from(c.u8()?);
    let mut d = Cursor::new(c.take(len)?);
    if len < 8 {
        return Ok("00:00:00".into());
    }
    let neg = d.u8()? != 0;
    let days = u64::from(d.u32()?);
    let h = u64::from(d.u8()?) + days * 24;
    let mi = d.u8()?;
    let s = d.u8()?;
    let us = if len >= 12 { d.u32()? } else { 0 };
    let mut out = format!("{}{h:02}:{mi:02}:{s:02}", if neg { "-" } else { "" });
    if us != 0 {
        out.push_str(&format!(".{us:06}"));
    }
    Ok(out)
}

/// Parses "YYYY-MM-DD[ HH:MM:SS[.ffffff]]" (also 'T' as separator).
fn parse_datetime_text(s: &[u8]) -> Option<(u16, u8, u8, u8, u8, u8, u32)> {
    let s = std::str::from_utf8(s).ok()?.trim();
    let (date, time) = match s.find([' ', 'T']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut dp = date.split('-');
    let y = dp.next()?.parse().ok()?;
    let mo = dp.next()?.parse().ok()?;
    let d = dp.next()?.parse().ok()?;
    if dp.next().is_some() {
        return None;
    }
    let (mut h, mut mi, mut sec, mut us) = (0, 0, 0, 0);
    if let Some(t) = time {
        let (hms, frac) = match t.find('.') {
            Some(i) => (&t[..i], Some(&t[i + 1..])),
            None => (t, None),
        };
        let mut tp = hms.split(':');
        h = tp.next()?.parse().ok()?;
        mi = tp.next()?.parse().ok()?;
        sec = tp.next()?.parse().ok()?;
        if let Some(f) = frac {
            let digits: String = f.chars().take(6).collect();
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            us = digits.parse::<u32>().ok()? * 10u32.pow(6 - digits.len() as u32);
        }
    }
    Some((y, mo, d, h, mi, sec, us))
}

fn put_binary_datetime(out: &mut Vec<u8>, v: &[u8], date_only: bool) {
    let Some((y, mo, d, h, mi, s, us)) = parse_datetime_text(v) else {
        out.push(0);
        return;
    };
    let len: u8 = if date_only || (h, mi, s, us) == (0, 0, 0, 0) {
        if (y, mo, d) == (0, 0, 0) {
            0
        } else {
            4
        }
    } else if us == 0 {
        7
    } else {
        11
    };
    out.push(len);
    if len >= 4 {
        put_u16(out, y);
        out.push(mo);
        out.push(d);
    }
    if len >= 7 {
        out.push(h);
        out.push(mi);
        out.push(s);
    }
    if len >= 11 {
        put_u32(out, us);
    }
}

/// A TIME in the binary protocol: length (0, 8, or 12 with microseconds), sign, days, hours
/// of the day, minutes, seconds, microseconds.
fn put_binary_time(out: &mut Vec<u8>, v: &Value) {
    let micros = tierdb_sql::time::parse(v).map_or(0, |t| t.micros);
    if micros == 0 {
        out.push(0);
        return;
    }
    let abs = micros.unsigned_abs();
    let (secs, us) = (abs / 1_000_000, (abs % 1_000_000) as u32);
    out.push(if us == 0 { 8 } else { 12 });
    out.push(u8::from(micros < 0));
    put_u32(out, (secs / 86_400) as u32);
    out.push((secs / 3600 % 24) as u8);
    out.push((secs / 60 % 60) as u8);
    out.push((secs % 60) as u8);
    if us != 0 {
        put_u32(out, us);
    }
}

fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        // The same 8 bytes: the column's UNSIGNED flag tells the client how to read them.
        Value::UInt(u) => *u as i64,
        Value::Double(d) => *d as i64,
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0),
        Value::Null => 0,
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Double(d) => *d,
        Value::Bytes(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0.0),
        Value::Null => 0.0,
    }
}

/// Appends one non-NULL value in the binary encoding of the column's kind.
fn put_binary_value(out: &mut Vec<u8>, col: &Column, v: &Value) {
    match col.kind {
        ColumnKind::Tiny => out.push(as_i64(v) as u8),
        ColumnKind::Short | ColumnKind::Year => put_u16(out, as_i64(v) as u16),
        ColumnKind::Int24 | ColumnKind::Long => put_u32(out, as_i64(v) as u32),
        ColumnKind::LongLong => out.extend_from_slice(&as_i64(v).to_le_bytes()),
        ColumnKind::Float => out.extend_from_slice(&(as_f64(v) as f32).to_le_bytes()),
        ColumnKind::Double => out.extend_from_slice(&as_f64(v).to_le_bytes()),
        ColumnKind::Date => put_binary_datetime(out, &text_of(col, v), true),
        ColumnKind::DateTime | ColumnKind::Timestamp => {
            put_binary_datetime(out, &text_of(col, v), false)
        }
        ColumnKind::Time => put_binary_time(out, v),
        ColumnKind::Bit => put_lenenc_bytes(out, &bit_bytes(col, v)),
        ColumnKind::NewDecimal | ColumnKind::String | ColumnKind::VarString | ColumnKind::Blob => {
            put_lenenc_bytes(out, &text_of(col, v))
        }
        ColumnKind::Null => {}
    }
}

fn text_of(col: &Column, v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) if col.kind == ColumnKind::NewDecimal && col.decimals <= 30 => {
            tierdb_sql::coerce::decimal_bytes_at(b, col.decimals).into_owned()
        }
        Value::Bytes(b) => b.clone(),
        Value::Int(i) if col.unsigned && *i < 0 => (*i as u64).to_string().into_bytes(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Double(d) if col.kind == ColumnKind::NewDecimal && col.decimals <= 30 => {
            tierdb_sql::coerce::decimal_text(*d, col.decimals).into_bytes()
        }
        Value::Double(d) => format_double(*d).into_bytes(),
        Value::Null => Vec::new(),
    }
}

/// Appends one binary result row payload.
pub fn binary_row(out: &mut Vec<u8>, columns: &[Column], row: &[Value]) {
    out.push(0x00);
    let bitmap_at = out.len();
    out.resize(bitmap_at + (columns.len() + 7 + 2) / 8, 0);
    for (i, col) in columns.iter().enumerate() {
        let v = row.get(i).unwrap_or(&Value::Null);
        if v.is_null() || col.kind == ColumnKind::Null {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
        } else {
            put_binary_value(out, col, v);
        }
    }
}

/// Writes a whole binary result set (reply to COM_STMT_EXECUTE).
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
        w.packet(|b| binary_row(b, columns, row))?;
    }
    w.packet(|b| response::end_of_rows(b, client_caps, status, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmts(param_count: u16) -> HashMap<u32, StmtState> {
        let mut m = HashMap::new();
        m.insert(
            1,
            StmtState {
                param_count,
                ..Default::default()
            },
        );
        m
    }

    #[test]
    fn sysbench_style_execute_then_execute_without_types() {
        let mut m = stmts(2);
        let mut body = vec![1, 0, 0, 0, 0, 1, 0, 0, 0];
        body.push(0); // null bitmap
        body.push(1); // new params bound
        body.extend_from_slice(&[ty::LONGLONG, 0, ty::VAR_STRING, 0]);
        body.extend_from_slice(&42i64.to_le_bytes());
        body.extend_from_slice(b"\x03abc");
        let (id, v) = parse_execute(&body, &mut m).unwrap();
        assert_eq!(
            (id, v),
            (1, vec![Value::Int(42), Value::Bytes(b"abc".to_vec())])
        );

        let mut body = vec![1, 0, 0, 0, 0, 1, 0, 0, 0, 0b10, 0];
        body.extend_from_slice(&7i64.to_le_bytes());
        let (_, v) = parse_execute(&body, &mut m).unwrap();
        assert_eq!(v, vec![Value::Int(7), Value::Null]);
    }

    #[test]
    fn execute_errors() {
        let mut m = stmts(1);
        assert_eq!(
            parse_execute(&[9, 0, 0, 0, 0, 1, 0, 0, 0], &mut m),
            Err(ExecError::UnknownStatement(9))
        );
        assert_eq!(
            parse_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0], &mut m),
            Err(ExecError::NoTypes)
        );
        assert_eq!(
            parse_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 77, 0], &mut m),
            Err(ExecError::UnknownType(77))
        );
        assert_eq!(
            parse_execute(&[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, ty::LONG, 0, 1], &mut m),
            Err(ExecError::Malformed)
        );
        assert_eq!(parse_execute(&[1, 0], &mut m), Err(ExecError::Malformed));
    }

    #[test]
    fn temporal_params_become_text() {
        let mut m = stmts(3);
        let mut body = vec![
            1,
            0,
            0,
            0,
            0,
            1,
            0,
            0,
            0,
            0,
            1,
            ty::DATE,
            0,
            ty::DATETIME,
            0,
            ty::TIME,
            0,
        ];
        body.extend_from_slice(&[4, 0xE8, 0x07, 2, 29]);
        body.extend_from_slice(&[11, 0xE8, 0x07, 2, 29, 13, 5, 9, 0x40, 0xE2, 0x01, 0]);
        body.extend_from_slice(&[8, 1, 1, 0, 0, 0, 2, 3, 4]);
        let (_, v) = parse_execute(&body, &mut m).unwrap();
        assert_eq!(
            v,
            vec![
                Value::Bytes(b"2024-02-29".to_vec()),
                Value::Bytes(b"2024-02-29 13:05:09.123456".to_vec()),
                Value::Bytes(b"-26:03:04".to_vec()),
            ]
        );
    }

    #[test]
    fn binary_row_encoding() {
        let cols = vec![
            Column::bigint("a"),
            Column::text("b"),
            Column {
                kind: ColumnKind::DateTime,
                ..Column::text("c")
            },
        ];
        let mut out = Vec::new();
        binary_row(
            &mut out,
            &cols,
            &[
                Value::Int(5),
                Value::Null,
                Value::Bytes(b"2024-01-02 03:04:05".to_vec()),
            ],
        );
        let mut want = vec![0x00, 0b1000];
        want.extend_from_slice(&5i64.to_le_bytes());
        want.extend_from_slice(&[7, 0xE8, 0x07, 1, 2, 3, 4, 5]);
        assert_eq!(out, want);
    }
}
