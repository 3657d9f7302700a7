//! Decoding MariaDB binlog events: the inverse of [`crate::events`] and [`crate::rows`], for
//! applying row events (the `BINLOG '...'` statements `mariadb-binlog` prints, and later a
//! replica's event stream).
//!
//! This module owns reading whole events (the v4 header, the CRC32 trailer, the bodies of
//! Format_description, Table_map, rows v1/v2, Query, Xid and GTID events), MariaDB's binary
//! row format of every column type tierdb has (and of what MariaDB 10.11 writes for the
//! equivalent InnoDB columns: `mysql56_temporal_format=ON`, `binlog_row_image=FULL`), and the
//! fitting of a decoded value to a tierdb column ([`to_value`], [`check_columns`]).
//!
//! Rules:
//! - never panic, loop or allocate without bound on any input: every length is checked
//!   against the bytes present before it is used, and a buffer that is not a run of whole,
//!   well-formed events is a [`DecodeError`];
//! - never accept a value that does not fit: [`to_value`] returns exactly the form tierdb
//!   stores for the column (`crates/engine/src/types.rs`), or an error — it never rounds,
//!   truncates or clamps (CHAR only loses its pad spaces and BINARY gets its pad zero bytes
//!   back, as tierdb stores them); a NULL in a NOT NULL column is the caller's to refuse;
//! - what the decoder cannot apply faithfully (compressed events, MINIMAL/NOBLOB row images,
//!   old temporal formats) is [`DecodeError::Unsupported`], never skipped.
//!
//! Integer columns: a Table_map event says whether a column is UNSIGNED only with
//! `binlog_row_metadata=MINIMAL|FULL` (MariaDB's default is `NO_LOG`). Without it an integer
//! decodes as the signed reading of its bytes ([`RawValue::Int`]), and [`to_value`] reads it
//! back as unsigned for an UNSIGNED column of the same width ([`check_columns`] requires the
//! same width); with it, UNSIGNED columns decode as [`RawValue::UInt`].

use std::collections::HashMap;

use crate::events::{
    enum_pack_len, event_crc, lob_pack_len, CHECKSUM_ALG_CRC32, CHECKSUM_LEN, DELETE_ROWS_EVENT_V1,
    FORMAT_DESCRIPTION_EVENT, GTID_EVENT, HEADER_LEN, MAX_BYTES_PER_CHAR, MYSQL_TYPE_BIT,
    MYSQL_TYPE_BLOB, MYSQL_TYPE_DATE, MYSQL_TYPE_DATETIME2, MYSQL_TYPE_DOUBLE, MYSQL_TYPE_ENUM,
    MYSQL_TYPE_FLOAT, MYSQL_TYPE_INT24, MYSQL_TYPE_LONG, MYSQL_TYPE_LONGLONG,
    MYSQL_TYPE_NEWDECIMAL, MYSQL_TYPE_SET, MYSQL_TYPE_SHORT, MYSQL_TYPE_STRING, MYSQL_TYPE_TIME2,
    MYSQL_TYPE_TIMESTAMP2, MYSQL_TYPE_TINY, MYSQL_TYPE_VARCHAR, MYSQL_TYPE_YEAR, QUERY_EVENT,
    TABLE_MAP_EVENT, UPDATE_ROWS_EVENT_V1, WRITE_ROWS_EVENT_V1, XID_EVENT,
};
use crate::rows::{RowsKind, STMT_END_F};
use tierdb_engine::{ColumnDef, ColumnType, Value};

/// Rows event v2 (MySQL 5.6+): the v1 layout plus an extra-data block after the flags.
const WRITE_ROWS_EVENT_V2: u8 = 30;
const UPDATE_ROWS_EVENT_V2: u8 = 31;
const DELETE_ROWS_EVENT_V2: u8 = 32;
/// Column types that have a metadata size but no row format decoded here.
const MYSQL_TYPE_VAR_STRING: u8 = 253;
const MYSQL_TYPE_GEOMETRY: u8 = 255;
/// Table_map optional metadata: the UNSIGNED flag of each numeric column.
const OPT_META_SIGNEDNESS: u8 = 1;
/// Width of the server version field of a Format_description event.
const SERVER_VERSION_LEN: usize = 50;
/// Offsets in the common header.
const TYPE_OFFSET: usize = 4;
const SERVER_ID_OFFSET: usize = 5;
const EVENT_LEN_OFFSET: usize = 9;
/// GTID event flag: the group is one statement without BEGIN/COMMIT.
const FL_STANDALONE: u8 = 1;
/// Largest TIME hour MariaDB holds (838:59:59.999999).
const TIME_MAX_HOUR: u32 = 838;

/// One decoded event.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The first event of a binlog: `checksums` is true when its checksum algorithm is CRC32
    /// (every following event then carries a CRC32 trailer).
    FormatDescription {
        binlog_version: u16,
        server_version: String,
        checksums: bool,
    },
    /// Binds a table id to a table and its column types for the rows events that follow.
    TableMap(TableMap),
    /// Write/Update/Delete rows (v1 or v2).
    Rows(RowsEvent),
    /// A statement in its default database.
    Query { db: String, sql: Vec<u8> },
    /// Commit of a transaction.
    Xid(u64),
    /// MariaDB GTID `domain-server_id-seq`, starting an event group; `standalone` when the
    /// group is one statement without BEGIN/COMMIT (DDL).
    Gtid {
        seq: u64,
        domain: u32,
        server_id: u32,
        standalone: bool,
    },
    /// Any other well-formed event (Annotate_rows, Rotate, Gtid_list, Binlog_checkpoint,
    /// Stop, ...), by type code.
    Other { type_code: u8 },
}

/// A Table_map event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableMap {
    pub table_id: u64,
    pub db: String,
    pub table: String,
    pub columns: Vec<MapColumn>,
}

/// One column of a Table_map event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapColumn {
    /// The binlog type code (`MYSQL_TYPE_*`; CHAR, BINARY, ENUM and SET are all 254).
    pub type_code: u8,
    /// The column metadata as MariaDB's `table_def` holds it: the one byte of FLOAT, DOUBLE,
    /// BLOB and the temporal types; little-endian for VARCHAR (max bytes) and BIT (bits % 8,
    /// then bytes in the high byte); first byte high for NEWDECIMAL (precision << 8 | scale)
    /// and STRING (real type or length bits << 8 | length or pack length); 0 for the rest.
    pub meta: u16,
    /// The column may hold NULL.
    pub nullable: bool,
    /// UNSIGNED, for numeric columns (and YEAR) when the event carries optional signedness
    /// metadata (`binlog_row_metadata=MINIMAL|FULL`); None when not known or not numeric.
    pub unsigned: Option<bool>,
}

/// A rows event: the images of each row, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct RowsEvent {
    pub kind: RowsKind,
    pub table_id: u64,
    /// Rows event flags: `STMT_END_F` = 1, `NO_FOREIGN_KEY_CHECKS_F` = 2,
    /// `RELAXED_UNIQUE_CHECKS_F` = 4, `COMPLETE_ROWS_F` = 8.
    pub flags: u16,
    /// Columns of the table (each image has one value per column).
    pub ncols: usize,
    /// `(before, after)` per row: Write has only `after`, Delete only `before`, Update both.
    pub rows: Vec<RawRow>,
}

/// One row of a rows event as `(before, after)` images, one value per column.
pub type RawRow = (Option<Vec<RawValue>>, Option<Vec<RawValue>>);

/// A column value as the event carries it, before it is fitted to a tierdb column.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    Null,
    /// An integer column read as signed (see the module doc on UNSIGNED).
    Int(i64),
    /// An integer column the event marks UNSIGNED.
    UInt(u64),
    Float(f32),
    Double(f64),
    /// DECIMAL as canonical text: no leading zeros, exactly the event column's scale of
    /// fraction digits, no sign on zero (`-12.340`, `0.00`, `7`).
    Decimal(String),
    /// CHAR / VARCHAR / BINARY / VARBINARY / BLOB / TEXT / JSON bytes (CHAR without its
    /// trailing spaces and BINARY without its trailing zero bytes, as MariaDB writes them).
    Bytes(Vec<u8>),
    Date {
        y: u16,
        m: u8,
        d: u8,
    },
    DateTime {
        y: u16,
        m: u8,
        d: u8,
        h: u8,
        mi: u8,
        s: u8,
        micro: u32,
    },
    /// Seconds since the epoch (0 with `micro` 0 is the zero TIMESTAMP).
    Timestamp {
        secs: u32,
        micro: u32,
    },
    Time {
        neg: bool,
        h: u32,
        m: u8,
        s: u8,
        micro: u32,
    },
    /// 0 or 1901..=2155.
    Year(u16),
    Bit(u64),
    /// 1-based member index; 0 is the empty "error" value.
    Enum(u16),
    /// Bit i set: member i + 1 is in the set.
    Set(u64),
}

/// Why bytes could not be decoded, or a value or column does not fit.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The buffer ends inside an event.
    #[error("event at offset {offset} is cut off: {needed} bytes needed, {available} present")]
    Truncated {
        offset: usize,
        needed: usize,
        available: usize,
    },
    /// An event whose bytes do not follow its type's layout.
    #[error("event at offset {offset} (type {type_code}) is malformed: {reason}")]
    Malformed {
        offset: usize,
        type_code: u8,
        reason: String,
    },
    /// An event whose CRC32 trailer does not match its bytes.
    #[error("event at offset {offset} (type {type_code}) fails its CRC32 checksum")]
    BadChecksum { offset: usize, type_code: u8 },
    /// A rows event whose table id no preceding Table_map event (of the same statement)
    /// mapped.
    #[error(
        "rows event at offset {offset} uses table id {table_id}, which no Table_map event mapped"
    )]
    UnknownTable { offset: usize, table_id: u64 },
    /// Well-formed input this decoder does not apply (it is never silently skipped).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A Table_map event and a table with different numbers of columns.
    #[error("the event's table has {event} columns, the table {table}")]
    ColumnCount { event: usize, table: usize },
    /// A Table_map column that cannot be applied to the table's column.
    #[error("column {index} `{column}`: {reason}")]
    ColumnMismatch {
        index: usize,
        column: String,
        reason: String,
    },
    /// A decoded value that a column of the given type cannot hold.
    #[error("{value} does not fit a {ty} column: {reason}")]
    BadValue {
        value: String,
        ty: String,
        reason: String,
    },
}

/// Decodes `buf`, consecutive whole events (not starting with the binlog magic). Each event
/// carries a CRC32 trailer, which is verified, when `checksums` is true — until a
/// Format_description event in `buf` says otherwise. A rows event needs the Table_map event
/// of its table earlier in `buf` (use [`Decoder`] to keep maps across buffers).
pub fn decode_events(buf: &[u8], checksums: bool) -> Result<Vec<Event>, DecodeError> {
    Decoder::with_checksums(checksums).feed(buf)
}

/// A decoder that keeps what earlier buffers said: the format (header length, checksums)
/// of the last Format_description event and the table maps of the current statement.
///
/// Table maps are kept until a Format_description event, or until the first Table_map or
/// rows event after a rows event with `STMT_END_F` (MariaDB forgets them at the end of a
/// statement, so a rows event of a later statement needs its own Table_map event).
#[derive(Clone, Debug)]
pub struct Decoder {
    state: State,
}

#[derive(Clone, Debug)]
struct State {
    checksums: bool,
    format_seen: bool,
    header_len: usize,
    /// Post-header length per type code - 1, from the last Format_description event.
    post_header: Vec<u8>,
    maps: HashMap<u64, TableMap>,
    statement_ended: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder that expects a Format_description event first; events before one are taken
    /// to carry CRC32 trailers (MariaDB 10.11's default `binlog_checksum`).
    pub fn new() -> Decoder {
        Decoder::with_checksums(true)
    }

    /// A decoder for events that carry CRC32 trailers (`checksums`) until a
    /// Format_description event says otherwise.
    pub fn with_checksums(checksums: bool) -> Decoder {
        Decoder {
            state: State {
                checksums,
                format_seen: false,
                header_len: HEADER_LEN,
                post_header: Vec::new(),
                maps: HashMap::new(),
                statement_ended: false,
            },
        }
    }

    /// Decodes `buf`, consecutive whole events, in order. On error nothing is returned and
    /// the decoder is as it was before the call.
    pub fn feed(&mut self, buf: &[u8]) -> Result<Vec<Event>, DecodeError> {
        let mut state = self.state.clone();
        let mut events = Vec::new();
        let mut offset = 0;
        while offset < buf.len() {
            let (event, len) = state.decode_one(buf, offset)?;
            events.push(event);
            offset += len;
        }
        self.state = state;
        Ok(events)
    }

    /// The table map of `table_id` the decoder holds (see the type's doc for how long).
    pub fn table_map(&self, table_id: u64) -> Option<&TableMap> {
        self.state.maps.get(&table_id)
    }

    /// Whether events are expected to carry CRC32 trailers.
    pub fn checksums(&self) -> bool {
        self.state.checksums
    }

    /// True once a Format_description event was decoded (MariaDB refuses `BINLOG`
    /// statements of other events before one).
    pub fn format_seen(&self) -> bool {
        self.state.format_seen
    }
}

/// An error inside one event, before its offset is known.
enum Bad {
    Malformed(String),
    Unsupported(String),
    UnknownTable(u64),
}

fn malformed(reason: impl Into<String>) -> Bad {
    Bad::Malformed(reason.into())
}

/// Reads a byte slice front to back; every read checks the bytes are there.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Self {
        Reader { b }
    }
    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    fn left(&self) -> usize {
        self.b.len()
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Bad> {
        if n > self.b.len() {
            return Err(malformed(format!(
                "{what}: {n} bytes needed, {} left",
                self.b.len()
            )));
        }
        let (head, tail) = self.b.split_at(n);
        self.b = tail;
        Ok(head)
    }
    fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }
    fn u8(&mut self, what: &str) -> Result<u8, Bad> {
        Ok(self.take(1, what)?[0])
    }
    /// An unsigned little-endian integer of `n` (at most 8) bytes.
    fn le(&mut self, n: usize, what: &str) -> Result<u64, Bad> {
        let bytes = self.take(n.min(8), what)?;
        Ok(bytes
            .iter()
            .rev()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }
    /// An unsigned big-endian integer of `n` (at most 8) bytes.
    fn be(&mut self, n: usize, what: &str) -> Result<u64, Bad> {
        let bytes = self.take(n.min(8), what)?;
        Ok(bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }
    /// MySQL's length-encoded integer.
    fn lenenc(&mut self, what: &str) -> Result<u64, Bad> {
        match self.u8(what)? {
            n @ 0..=250 => Ok(u64::from(n)),
            0xfc => self.le(2, what),
            0xfd => self.le(3, what),
            0xfe => self.le(8, what),
            other => Err(malformed(format!(
                "{what}: {other:#04x} starts no length-encoded integer"
            ))),
        }
    }
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        x.copy_from_slice(s);
    }
    u32::from_le_bytes(x)
}

/// True when readers take `version` for a server whose Format_description event carries a
/// checksum algorithm: MariaDB 5.3+ or MySQL 5.6.1+ (MariaDB's `do_server_version_split`:
/// up to three numbers below 256 separated by dots; anything else is version 0.0.0).
fn checksum_aware(version: &str) -> bool {
    let mut split = [0u32; 3];
    let mut rest = version.as_bytes();
    for (i, part) in split.iter_mut().enumerate() {
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        let n = rest[..digits].iter().try_fold(0u32, |acc, &c| {
            acc.checked_mul(10)?.checked_add(u32::from(c - b'0'))
        });
        match n {
            Some(n) if n < 256 => *part = n,
            _ => return false,
        }
        rest = &rest[digits..];
        match rest.first() {
            Some(b'.') if i < 2 => rest = &rest[1..],
            _ if i == 2 => {}
            _ => return false,
        }
    }
    if version.contains("MariaDB") || version.contains("-maria-") {
        split >= [5, 3, 0]
    } else {
        split >= [5, 6, 1]
    }
}

impl State {
    /// Post-header length of events of `type_code`: as the last Format_description event
    /// said, else MariaDB 10.11's.
    fn post_header_len(&self, type_code: u8) -> usize {
        let default = match type_code {
            QUERY_EVENT => 13,
            TABLE_MAP_EVENT | WRITE_ROWS_EVENT_V1 | UPDATE_ROWS_EVENT_V1 | DELETE_ROWS_EVENT_V1 => {
                8
            }
            WRITE_ROWS_EVENT_V2 | UPDATE_ROWS_EVENT_V2 | DELETE_ROWS_EVENT_V2 => 10,
            GTID_EVENT => 19,
            _ => 0,
        };
        match usize::from(type_code)
            .checked_sub(1)
            .and_then(|i| self.post_header.get(i))
        {
            Some(&n) => usize::from(n),
            None => default,
        }
    }

    /// Decodes the event at `offset`; returns it and its length.
    fn decode_one(&mut self, buf: &[u8], offset: usize) -> Result<(Event, usize), DecodeError> {
        let available = buf.len() - offset;
        if available < HEADER_LEN {
            return Err(DecodeError::Truncated {
                offset,
                needed: HEADER_LEN,
                available,
            });
        }
        let type_code = buf[offset + TYPE_OFFSET];
        let size = le_u32(buf, offset + EVENT_LEN_OFFSET) as usize;
        let bad = |reason: String| DecodeError::Malformed {
            offset,
            type_code,
            reason,
        };
        let is_fde = type_code == FORMAT_DESCRIPTION_EVENT;
        let header_len = if is_fde { HEADER_LEN } else { self.header_len };
        let trailer = if self.checksums && !is_fde {
            CHECKSUM_LEN
        } else {
            0
        };
        if size < header_len + trailer {
            return Err(bad(format!(
                "size {size} is below the {} of its header{}",
                header_len + trailer,
                if trailer > 0 { " and checksum" } else { "" }
            )));
        }
        if size > available {
            return Err(DecodeError::Truncated {
                offset,
                needed: size,
                available,
            });
        }
        let event = &buf[offset..offset + size];
        if trailer > 0 {
            let stored = le_u32(event, size - CHECKSUM_LEN);
            if event_crc(&event[..size - CHECKSUM_LEN]) != stored {
                return Err(DecodeError::BadChecksum { offset, type_code });
            }
        }
        let body = &event[header_len..size - trailer];
        let decoded = match type_code {
            FORMAT_DESCRIPTION_EVENT => self.format_description(event),
            TABLE_MAP_EVENT => {
                self.end_statement_maps();
                self.table_map(body)
            }
            WRITE_ROWS_EVENT_V1 | UPDATE_ROWS_EVENT_V1 | DELETE_ROWS_EVENT_V1
            | WRITE_ROWS_EVENT_V2 | UPDATE_ROWS_EVENT_V2 | DELETE_ROWS_EVENT_V2 => {
                self.end_statement_maps();
                self.rows(type_code, body)
            }
            QUERY_EVENT => self.query(body),
            XID_EVENT => Reader::new(body).le(8, "xid").map(Event::Xid),
            GTID_EVENT => gtid(body, le_u32(event, SERVER_ID_OFFSET)),
            20..=22 => Err(Bad::Unsupported(
                "pre-GA rows events (MySQL 5.1.15 to 5.1.17)".into(),
            )),
            39 => Err(Bad::Unsupported("MySQL partial-update rows events".into())),
            40 => Err(Bad::Unsupported(
                "MySQL transaction payload (compressed) events".into(),
            )),
            165..=171 => Err(Bad::Unsupported(format!(
                "compressed events (type {type_code}, log_bin_compress=ON)"
            ))),
            _ => Ok(Event::Other { type_code }),
        };
        match decoded {
            Ok(e) => Ok((e, size)),
            Err(Bad::Malformed(reason)) => Err(bad(reason)),
            Err(Bad::Unsupported(what)) => Err(DecodeError::Unsupported(format!(
                "{what} (event at offset {offset}, type {type_code})"
            ))),
            Err(Bad::UnknownTable(table_id)) => Err(DecodeError::UnknownTable { offset, table_id }),
        }
    }

    /// Forgets the table maps of a statement that ended (at the next statement's first
    /// Table_map or rows event).
    fn end_statement_maps(&mut self) {
        if self.statement_ended {
            self.maps.clear();
            self.statement_ended = false;
        }
    }

    fn format_description(&mut self, event: &[u8]) -> Result<Event, Bad> {
        let body = &event[HEADER_LEN..];
        let mut r = Reader::new(body);
        let binlog_version = r.le(2, "binlog version")? as u16;
        let version_field = r.take(SERVER_VERSION_LEN, "server version")?;
        let _created = r.take(4, "create time")?;
        let header_len = usize::from(r.u8("common header length")?);
        if binlog_version != 4 {
            return Err(Bad::Unsupported(format!(
                "binlog format version {binlog_version}"
            )));
        }
        if header_len < HEADER_LEN {
            return Err(malformed(format!(
                "common header length {header_len} is below {HEADER_LEN}"
            )));
        }
        let end = version_field
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(SERVER_VERSION_LEN);
        let server_version = String::from_utf8_lossy(&version_field[..end]).into_owned();
        let lens = r.rest();
        let (post_header, checksums) = if checksum_aware(&server_version) {
            // The checksum algorithm byte, then the event's own checksum (always present).
            let Some(cut) = lens.len().checked_sub(1 + CHECKSUM_LEN) else {
                return Err(malformed("no room for the checksum algorithm and checksum"));
            };
            let alg = lens[cut];
            match alg {
                CHECKSUM_ALG_CRC32 => {
                    let n = event.len() - CHECKSUM_LEN;
                    if event_crc(&event[..n]) != le_u32(event, n) {
                        return Err(malformed("its CRC32 checksum does not match"));
                    }
                }
                // OFF, and UNDEF (255) of a server that did not say.
                0 | 255 => {}
                other => {
                    return Err(Bad::Unsupported(format!("checksum algorithm {other}")));
                }
            }
            (&lens[..cut], alg == CHECKSUM_ALG_CRC32)
        } else {
            (lens, false)
        };
        self.checksums = checksums;
        self.format_seen = true;
        self.header_len = header_len;
        self.post_header = post_header.to_vec();
        self.maps.clear();
        self.statement_ended = false;
        Ok(Event::FormatDescription {
            binlog_version,
            server_version,
            checksums,
        })
    }

    /// Table id and flags at the start of a Table_map or rows post-header: a 6-byte id, or
    /// a 4-byte one when the post-header is 6 bytes (MySQL 5.1.x).
    fn id_and_flags(&self, r: &mut Reader<'_>, type_code: u8) -> Result<(u64, u16, usize), Bad> {
        let ph = self.post_header_len(type_code);
        let id_len = if ph == 6 { 4 } else { 6 };
        if ph < id_len + 2 {
            return Err(malformed(format!("post-header length {ph}")));
        }
        let table_id = r.le(id_len, "table id")?;
        let flags = r.le(2, "flags")? as u16;
        Ok((table_id, flags, ph - id_len - 2))
    }

    fn table_map(&mut self, body: &[u8]) -> Result<Event, Bad> {
        let mut r = Reader::new(body);
        let (table_id, _flags, extra) = self.id_and_flags(&mut r, TABLE_MAP_EVENT)?;
        r.take(extra, "post-header")?;
        let db = name(&mut r, "database name")?;
        let table = name(&mut r, "table name")?;
        let ncols = r.lenenc("column count")?;
        if ncols > r.left() as u64 {
            return Err(malformed(format!(
                "{ncols} columns but {} bytes left",
                r.left()
            )));
        }
        let ncols = ncols as usize;
        let types = r.take(ncols, "column types")?;
        let meta_len = r.lenenc("metadata length")?;
        let meta_block = r.take(
            usize::try_from(meta_len).unwrap_or(usize::MAX),
            "column metadata",
        )?;
        let mut m = Reader::new(meta_block);
        let mut columns = Vec::with_capacity(ncols);
        for (i, &type_code) in types.iter().enumerate() {
            let what = format!("metadata of column {i}");
            let meta = match type_code {
                0..=3 | 6..=14 => 0,
                4 | 5 | 17..=19 | 245 | MYSQL_TYPE_BLOB | MYSQL_TYPE_GEOMETRY => {
                    u16::from(m.u8(&what)?)
                }
                MYSQL_TYPE_VARCHAR | MYSQL_TYPE_VAR_STRING | MYSQL_TYPE_BIT => {
                    m.le(2, &what)? as u16
                }
                MYSQL_TYPE_NEWDECIMAL | MYSQL_TYPE_ENUM | MYSQL_TYPE_SET | MYSQL_TYPE_STRING => {
                    m.be(2, &what)? as u16
                }
                other => {
                    return Err(Bad::Unsupported(format!(
                        "column {i} of `{db}`.`{table}` has binlog type {other}"
                    )))
                }
            };
            columns.push(MapColumn {
                type_code,
                meta,
                nullable: false,
                unsigned: None,
            });
        }
        if !m.is_empty() {
            return Err(malformed(format!(
                "{} bytes of column metadata left over",
                m.left()
            )));
        }
        let nulls = r.take(ncols.div_ceil(8), "null bitmap")?;
        for (i, c) in columns.iter_mut().enumerate() {
            c.nullable = nulls[i / 8] & (1 << (i % 8)) != 0;
        }
        optional_metadata(r.rest(), &mut columns);
        let map = TableMap {
            table_id,
            db,
            table,
            columns,
        };
        self.maps.insert(table_id, map.clone());
        Ok(Event::TableMap(map))
    }

    fn rows(&mut self, type_code: u8, body: &[u8]) -> Result<Event, Bad> {
        let (kind, v2) = match type_code {
            WRITE_ROWS_EVENT_V1 => (RowsKind::Write, false),
            UPDATE_ROWS_EVENT_V1 => (RowsKind::Update, false),
            DELETE_ROWS_EVENT_V1 => (RowsKind::Delete, false),
            WRITE_ROWS_EVENT_V2 => (RowsKind::Write, true),
            UPDATE_ROWS_EVENT_V2 => (RowsKind::Update, true),
            _ => (RowsKind::Delete, true),
        };
        let mut r = Reader::new(body);
        let (table_id, flags, mut extra) = self.id_and_flags(&mut r, type_code)?;
        if v2 && extra >= 2 {
            // The extra-data length counts its own two bytes.
            let len = r.le(2, "extra data length")? as usize;
            extra -= 2;
            let data = len
                .checked_sub(2)
                .ok_or_else(|| malformed(format!("extra data length {len} is below 2")))?;
            r.take(data, "extra data")?;
        }
        r.take(extra, "post-header")?;
        let ncols = r.lenenc("column count")?;
        let map = self
            .maps
            .get(&table_id)
            .ok_or(Bad::UnknownTable(table_id))?;
        if ncols != map.columns.len() as u64 {
            return Err(malformed(format!(
                "{ncols} columns, but table id {table_id} was mapped with {}",
                map.columns.len()
            )));
        }
        let ncols = map.columns.len();
        let images = if kind == RowsKind::Update { 2 } else { 1 };
        for _ in 0..images {
            let present = r.take(ncols.div_ceil(8), "columns-present bitmap")?;
            if (0..ncols).any(|i| present[i / 8] & (1 << (i % 8)) == 0) {
                return Err(Bad::Unsupported(
                    "binlog_row_image other than FULL (a rows event leaves columns out)".into(),
                ));
            }
        }
        let kinds = map
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                kind_of(c).map_err(|e| match e {
                    Bad::Malformed(s) => malformed(format!("column {i}: {s}")),
                    Bad::Unsupported(s) => {
                        Bad::Unsupported(format!("column {i} of `{}`.`{}`: {s}", map.db, map.table))
                    }
                    other => other,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if ncols == 0 && !r.is_empty() {
            return Err(malformed("row data for a table without columns"));
        }
        let mut rows = Vec::new();
        while !r.is_empty() {
            let row_no = rows.len();
            let mut image = || {
                read_image(&mut r, &kinds).map_err(|e| match e {
                    Bad::Malformed(s) => malformed(format!("row {row_no}: {s}")),
                    other => other,
                })
            };
            let row = match kind {
                RowsKind::Write => (None, Some(image()?)),
                RowsKind::Delete => (Some(image()?), None),
                RowsKind::Update => {
                    let before = image()?;
                    (Some(before), Some(image()?))
                }
            };
            rows.push(row);
        }
        if flags & STMT_END_F != 0 {
            self.statement_ended = true;
        }
        Ok(Event::Rows(RowsEvent {
            kind,
            table_id,
            flags,
            ncols,
            rows,
        }))
    }

    fn query(&self, body: &[u8]) -> Result<Event, Bad> {
        let ph = self.post_header_len(QUERY_EVENT);
        if ph < 11 {
            return Err(malformed(format!("post-header length {ph}")));
        }
        let mut r = Reader::new(body);
        r.take(8, "thread id and exec time")?;
        let db_len = usize::from(r.u8("database name length")?);
        r.take(2, "error code")?;
        let status_len = if ph >= 13 {
            r.le(2, "status variables length")? as usize
        } else {
            0
        };
        r.take(ph.saturating_sub(13), "post-header")?;
        r.take(status_len, "status variables")?;
        let db = r.take(db_len, "database name")?;
        if r.u8("database name terminator")? != 0 {
            return Err(malformed("database name is not NUL-terminated"));
        }
        let db =
            String::from_utf8(db.to_vec()).map_err(|_| malformed("database name is not UTF-8"))?;
        Ok(Event::Query {
            db,
            sql: r.rest().to_vec(),
        })
    }
}

/// A length-prefixed, NUL-terminated name of a Table_map event.
fn name(r: &mut Reader<'_>, what: &str) -> Result<String, Bad> {
    let len = usize::from(r.u8(what)?);
    let bytes = r.take(len, what)?;
    if r.u8(what)? != 0 {
        return Err(malformed(format!("{what} is not NUL-terminated")));
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed(format!("{what} is not UTF-8")))
}

/// Reads the UNSIGNED flags of the optional metadata after a Table_map's null bitmap (a run
/// of type, length, value fields). Anything it does not understand leaves the flags
/// unknown: they only refine what the decoder would otherwise assume.
///
/// MariaDB writes a bit for every column that has a sign, YEAR included (mariadbd 10.11
/// does; MySQL leaves YEAR out). A wrong reading could not change a value: [`to_value`]
/// reads integers back by the column's width either way, and [`check_columns`] refuses a
/// signedness that differs from the table's.
fn optional_metadata(bytes: &[u8], columns: &mut [MapColumn]) {
    let mut r = Reader::new(bytes);
    while !r.is_empty() {
        let (Ok(field), Ok(len)) = (r.u8(""), r.lenenc("")) else {
            return;
        };
        let Ok(value) = r.take(usize::try_from(len).unwrap_or(usize::MAX), "") else {
            return;
        };
        if field != OPT_META_SIGNEDNESS {
            continue;
        }
        let numeric: Vec<usize> = (0..columns.len())
            .filter(|&i| {
                matches!(
                    columns[i].type_code,
                    MYSQL_TYPE_TINY
                        | MYSQL_TYPE_SHORT
                        | MYSQL_TYPE_INT24
                        | MYSQL_TYPE_LONG
                        | MYSQL_TYPE_LONGLONG
                        | MYSQL_TYPE_FLOAT
                        | MYSQL_TYPE_DOUBLE
                        | MYSQL_TYPE_NEWDECIMAL
                        | MYSQL_TYPE_YEAR
                )
            })
            .collect();
        if value.len() != numeric.len().div_ceil(8) {
            return;
        }
        // One bit per numeric column, most significant bit first.
        for (n, &i) in numeric.iter().enumerate() {
            columns[i].unsigned = Some(value[n / 8] & (0x80 >> (n % 8)) != 0);
        }
    }
}

fn gtid(body: &[u8], server_id: u32) -> Result<Event, Bad> {
    let mut r = Reader::new(body);
    let seq = r.le(8, "GTID sequence number")?;
    let domain = r.le(4, "GTID domain")? as u32;
    let flags = r.u8("GTID flags")?;
    Ok(Event::Gtid {
        seq,
        domain,
        server_id,
        standalone: flags & FL_STANDALONE != 0,
    })
}

/// How a Table_map column's values are laid out in a row image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Little-endian integer of this many bytes; `unsigned` when the event says so.
    Int {
        bytes: usize,
        unsigned: bool,
    },
    Float,
    Double,
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR / BINARY (254): a 1-byte length (2 bytes when `max` > 255), then the bytes.
    Str {
        max: u32,
    },
    /// VARCHAR / VARBINARY: a 1-byte length (2 bytes when `max` > 255), then the bytes.
    VarStr {
        max: u32,
    },
    /// BLOB / TEXT / JSON (and GEOMETRY): a little-endian length of `prefix` bytes.
    Blob {
        prefix: usize,
        geometry: bool,
    },
    Enum {
        pack: usize,
    },
    Set {
        pack: usize,
    },
    Date,
    DateTime {
        fsp: u8,
    },
    Timestamp {
        fsp: u8,
    },
    Time {
        fsp: u8,
    },
    Year,
    Bit {
        bits: u32,
    },
}

fn kind_of(c: &MapColumn) -> Result<Kind, Bad> {
    let int = |bytes| Kind::Int {
        bytes,
        unsigned: c.unsigned == Some(true),
    };
    let fsp = || {
        if c.meta > 6 {
            Err(malformed(format!("fractional seconds {} > 6", c.meta)))
        } else {
            Ok(c.meta as u8)
        }
    };
    let [hi, lo] = c.meta.to_be_bytes();
    Ok(match c.type_code {
        MYSQL_TYPE_TINY => int(1),
        MYSQL_TYPE_SHORT => int(2),
        MYSQL_TYPE_INT24 => int(3),
        MYSQL_TYPE_LONG => int(4),
        MYSQL_TYPE_LONGLONG => int(8),
        MYSQL_TYPE_FLOAT if c.meta == 4 => Kind::Float,
        MYSQL_TYPE_DOUBLE if c.meta == 8 => Kind::Double,
        MYSQL_TYPE_FLOAT | MYSQL_TYPE_DOUBLE => {
            return Err(malformed(format!("floating-point size {}", c.meta)))
        }
        MYSQL_TYPE_NEWDECIMAL => {
            let (precision, scale) = (hi, lo);
            if precision == 0 || precision > 65 || scale > precision || scale > 38 {
                return Err(malformed(format!("DECIMAL({precision},{scale})")));
            }
            Kind::Decimal { precision, scale }
        }
        MYSQL_TYPE_STRING | MYSQL_TYPE_ENUM | MYSQL_TYPE_SET => {
            // CHAR's real type byte carries the length's two high bits, inverted.
            let (real, len) = if c.type_code == MYSQL_TYPE_STRING && hi & 0x30 != 0x30 {
                (
                    hi | 0x30,
                    ((u32::from(hi & 0x30) << 4) ^ 0x300) + u32::from(lo),
                )
            } else if c.type_code == MYSQL_TYPE_STRING {
                (hi, u32::from(lo))
            } else {
                (c.type_code, u32::from(lo))
            };
            match real {
                MYSQL_TYPE_STRING => Kind::Str { max: len },
                MYSQL_TYPE_ENUM if matches!(len, 1 | 2) => Kind::Enum { pack: len as usize },
                MYSQL_TYPE_SET if matches!(len, 1..=4 | 8) => Kind::Set { pack: len as usize },
                MYSQL_TYPE_ENUM | MYSQL_TYPE_SET => {
                    return Err(malformed(format!("ENUM/SET pack length {len}")))
                }
                other => {
                    return Err(Bad::Unsupported(format!(
                        "string column of real type {other}"
                    )))
                }
            }
        }
        MYSQL_TYPE_VARCHAR | MYSQL_TYPE_VAR_STRING => Kind::VarStr {
            max: u32::from(c.meta),
        },
        MYSQL_TYPE_BLOB | MYSQL_TYPE_GEOMETRY => {
            if !(1..=4).contains(&c.meta) {
                return Err(malformed(format!("BLOB length size {}", c.meta)));
            }
            Kind::Blob {
                prefix: usize::from(c.meta),
                geometry: c.type_code == MYSQL_TYPE_GEOMETRY,
            }
        }
        MYSQL_TYPE_DATE => Kind::Date,
        MYSQL_TYPE_DATETIME2 => Kind::DateTime { fsp: fsp()? },
        MYSQL_TYPE_TIMESTAMP2 => Kind::Timestamp { fsp: fsp()? },
        MYSQL_TYPE_TIME2 => Kind::Time { fsp: fsp()? },
        MYSQL_TYPE_YEAR => Kind::Year,
        MYSQL_TYPE_BIT => {
            // Little-endian metadata: bits % 8 in the low byte, whole bytes in the high.
            let bits = u32::from(hi) * 8 + u32::from(lo);
            if lo > 7 || !(1..=64).contains(&bits) {
                return Err(malformed(format!("BIT metadata {:#06x}", c.meta)));
            }
            Kind::Bit { bits }
        }
        7 | 11 | 12 => {
            return Err(Bad::Unsupported(
                "pre-MySQL 5.6 TIMESTAMP/TIME/DATETIME format (mysql56_temporal_format=OFF \
                 or an old table)"
                    .into(),
            ))
        }
        other => {
            return Err(Bad::Unsupported(format!("binlog column type {other}")));
        }
    })
}

/// One row image: the null bitmap, then each non-NULL value.
fn read_image(r: &mut Reader<'_>, kinds: &[Kind]) -> Result<Vec<RawValue>, Bad> {
    let nulls = r.take(kinds.len().div_ceil(8), "null bitmap")?;
    kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            if nulls[i / 8] & (1 << (i % 8)) != 0 {
                Ok(RawValue::Null)
            } else {
                read_value(r, *k).map_err(|e| match e {
                    Bad::Malformed(s) => malformed(format!("column {i}: {s}")),
                    other => other,
                })
            }
        })
        .collect()
}

/// Fraction of DATETIME2 / TIMESTAMP2: 1 byte of hundredths (fsp 1-2), 2 bytes of 1/10000 s
/// (3-4), 3 bytes of microseconds (5-6); big-endian.
fn read_frac(r: &mut Reader<'_>, fsp: u8) -> Result<u32, Bad> {
    let micro = match fsp {
        1 | 2 => r.be(1, "fraction")? * 10_000,
        3 | 4 => r.be(2, "fraction")? * 100,
        5 | 6 => r.be(3, "fraction")?,
        _ => 0,
    };
    if micro >= 1_000_000 {
        return Err(malformed(format!("fraction of {micro} microseconds")));
    }
    Ok(micro as u32)
}

fn read_value(r: &mut Reader<'_>, k: Kind) -> Result<RawValue, Bad> {
    Ok(match k {
        Kind::Int { bytes, unsigned } => {
            let x = r.le(bytes, "integer")?;
            if unsigned {
                RawValue::UInt(x)
            } else {
                let shift = 64 - 8 * bytes as u32;
                RawValue::Int(((x << shift) as i64) >> shift)
            }
        }
        Kind::Float => RawValue::Float(f32::from_bits(r.le(4, "FLOAT")? as u32)),
        Kind::Double => RawValue::Double(f64::from_bits(r.le(8, "DOUBLE")?)),
        Kind::Decimal { precision, scale } => RawValue::Decimal(read_decimal(r, precision, scale)?),
        Kind::Str { max } | Kind::VarStr { max } => {
            let len = r.le(if max > 255 { 2 } else { 1 }, "string length")?;
            if len > u64::from(max) {
                return Err(malformed(format!("{len} bytes in a column of {max}")));
            }
            RawValue::Bytes(r.take(len as usize, "string")?.to_vec())
        }
        Kind::Blob { prefix, .. } => {
            let len = r.le(prefix, "BLOB length")?;
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            RawValue::Bytes(r.take(len, "BLOB")?.to_vec())
        }
        Kind::Enum { pack } => RawValue::Enum(r.le(pack, "ENUM")? as u16),
        Kind::Set { pack } => RawValue::Set(r.le(pack, "SET")?),
        Kind::Date => {
            let v = r.le(3, "DATE")?;
            RawValue::Date {
                y: (v >> 9) as u16,
                m: ((v >> 5) & 15) as u8,
                d: (v & 31) as u8,
            }
        }
        Kind::DateTime { fsp } => {
            let v = r.be(5, "DATETIME")?;
            let v = v
                .checked_sub(0x80_0000_0000)
                .ok_or_else(|| malformed("negative DATETIME"))?;
            let ymd = v >> 17;
            let ym = ymd >> 5;
            let hms = v & 0x1_ffff;
            RawValue::DateTime {
                y: (ym / 13) as u16,
                m: (ym % 13) as u8,
                d: (ymd & 31) as u8,
                h: (hms >> 12) as u8,
                mi: ((hms >> 6) & 63) as u8,
                s: (hms & 63) as u8,
                micro: read_frac(r, fsp)?,
            }
        }
        Kind::Timestamp { fsp } => RawValue::Timestamp {
            secs: r.be(4, "TIMESTAMP")? as u32,
            micro: read_frac(r, fsp)?,
        },
        Kind::Time { fsp } => read_time2(r, fsp)?,
        Kind::Year => {
            let y = r.u8("YEAR")?;
            RawValue::Year(if y == 0 { 0 } else { 1900 + u16::from(y) })
        }
        Kind::Bit { bits } => {
            let x = r.be(bits.div_ceil(8) as usize, "BIT")?;
            if bits < 64 && x >> bits != 0 {
                return Err(malformed(format!("{x:#x} has more than {bits} bits")));
            }
            RawValue::Bit(x)
        }
    })
}

/// TIME2: the signed value `(hour << 12 | minute << 6 | second) << 24 | micros`, stored
/// with an offset so byte order is time order. For fsp 0-4, a 3-byte integer part and a 1-
/// or 2-byte fraction (of a negative value, counted back from the next integer); for fsp
/// 5-6 the whole value in 6 bytes.
fn read_time2(r: &mut Reader<'_>, fsp: u8) -> Result<RawValue, Bad> {
    const INT_OFS: i64 = 0x80_0000;
    const OFS: i64 = 0x8000_0000_0000;
    let int_part =
        |r: &mut Reader<'_>| -> Result<i64, Bad> { Ok(r.be(3, "TIME")? as i64 - INT_OFS) };
    let packed: i64 = match fsp {
        0 => int_part(r)? << 24,
        1..=4 => {
            let mut int = int_part(r)?;
            let (width, unit, wrap) = if fsp <= 2 {
                (1, 10_000, 0x100)
            } else {
                (2, 100, 0x1_0000)
            };
            let mut frac = r.be(width, "TIME fraction")? as i64;
            if int < 0 && frac != 0 {
                int += 1;
                frac -= wrap;
            }
            if frac.abs() * unit >= 1_000_000 {
                return Err(malformed("TIME fraction of a second or more"));
            }
            (int << 24) + frac * unit
        }
        _ => r.be(6, "TIME")? as i64 - OFS,
    };
    let abs = packed.unsigned_abs();
    let hms = abs >> 24;
    let micro = abs & 0xff_ffff;
    if micro >= 1_000_000 {
        return Err(malformed(format!("TIME fraction of {micro} microseconds")));
    }
    Ok(RawValue::Time {
        neg: packed < 0,
        h: (hms >> 12) as u32,
        m: ((hms >> 6) & 63) as u8,
        s: (hms & 63) as u8,
        micro: micro as u32,
    })
}

/// MariaDB's binary DECIMAL (see `rows::decimal_bin`), as canonical text.
fn read_decimal(r: &mut Reader<'_>, precision: u8, scale: u8) -> Result<String, Bad> {
    const DIG2BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
    let intg = usize::from(precision - scale);
    let scale = usize::from(scale);
    // Digit counts of the groups, in order: the leading partial integer group, whole integer
    // groups, whole fraction groups, the trailing partial fraction group.
    let mut groups = Vec::new();
    groups.push(intg % 9);
    groups.extend(std::iter::repeat_n(9, intg / 9));
    groups.extend(std::iter::repeat_n(9, scale / 9));
    groups.push(scale % 9);
    let size: usize = groups.iter().map(|&g| DIG2BYTES[g]).sum();
    let mut bytes = r.take(size, "DECIMAL")?.to_vec();
    let neg = bytes.first().is_some_and(|b| b & 0x80 == 0);
    if let Some(first) = bytes.first_mut() {
        *first ^= 0x80;
    }
    if neg {
        for b in &mut bytes {
            *b = !*b;
        }
    }
    let mut digits = String::with_capacity(intg + scale);
    let mut at = 0;
    for &g in &groups {
        let len = DIG2BYTES[g];
        let n = bytes[at..at + len]
            .iter()
            .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
        at += len;
        if g > 0 && u64::from(n) >= 10u64.pow(g as u32) {
            return Err(malformed(format!(
                "DECIMAL group {n} has more than {g} digits"
            )));
        }
        if g > 0 {
            digits.push_str(&format!("{n:0g$}"));
        }
    }
    let (int_digits, frac_digits) = digits.split_at(intg);
    let int_digits = int_digits.trim_start_matches('0');
    let zero = int_digits.is_empty() && frac_digits.bytes().all(|c| c == b'0');
    let mut out = String::with_capacity(intg + scale + 3);
    if neg && !zero {
        out.push('-');
    }
    out.push_str(if int_digits.is_empty() {
        "0"
    } else {
        int_digits
    });
    if scale > 0 {
        out.push('.');
        out.push_str(frac_digits);
    }
    Ok(out)
}

/// Longest value of a CHAR/VARCHAR (utf8mb4) or BINARY/VARBINARY column, in bytes.
fn string_max_bytes(ty: &ColumnType) -> u64 {
    match ty {
        ColumnType::Char(n) | ColumnType::VarChar(n) => {
            u64::from(*n) * u64::from(MAX_BYTES_PER_CHAR)
        }
        ColumnType::Binary(n) | ColumnType::VarBinary(n) => u64::from(*n),
        _ => 0,
    }
}

/// A readable name of a Table_map column's type, for messages.
fn describe(c: &MapColumn) -> String {
    match kind_of(c) {
        Ok(Kind::Int { bytes, .. }) => format!("{}-byte integer", bytes),
        Ok(Kind::Float) => "FLOAT".into(),
        Ok(Kind::Double) => "DOUBLE".into(),
        Ok(Kind::Decimal { precision, scale }) => format!("DECIMAL({precision},{scale})"),
        Ok(Kind::Str { max }) => format!("CHAR/BINARY of {max} bytes"),
        Ok(Kind::VarStr { max }) => format!("VARCHAR/VARBINARY of {max} bytes"),
        Ok(Kind::Blob { geometry: true, .. }) => "GEOMETRY".into(),
        Ok(Kind::Blob { prefix, .. }) => format!("BLOB/TEXT with a {prefix}-byte length"),
        Ok(Kind::Enum { .. }) => "ENUM".into(),
        Ok(Kind::Set { .. }) => "SET".into(),
        Ok(Kind::Date) => "DATE".into(),
        Ok(Kind::DateTime { fsp }) => format!("DATETIME({fsp})"),
        Ok(Kind::Timestamp { fsp }) => format!("TIMESTAMP({fsp})"),
        Ok(Kind::Time { fsp }) => format!("TIME({fsp})"),
        Ok(Kind::Year) => "YEAR".into(),
        Ok(Kind::Bit { bits }) => format!("BIT({bits})"),
        Err(_) => format!("binlog type {} (metadata {:#06x})", c.type_code, c.meta),
    }
}

/// Ok when values of the Table_map column `m` can be stored in a column of type `ty`.
fn column_fits(m: &MapColumn, ty: &ColumnType) -> Result<(), String> {
    let k = kind_of(m).map_err(|e| match e {
        Bad::Malformed(s) | Bad::Unsupported(s) => format!("the event's column: {s}"),
        Bad::UnknownTable(_) => String::new(),
    })?;
    let ok = match (ty, k) {
        (ColumnType::Int { bytes, unsigned }, Kind::Int { bytes: w, .. }) => {
            if usize::from(*bytes) == w && m.unsigned.is_some_and(|u| u != *unsigned) {
                return Err(format!(
                    "the event's column is {}",
                    if *unsigned { "signed" } else { "UNSIGNED" }
                ));
            }
            usize::from(*bytes) == w
        }
        (ColumnType::Float, Kind::Float) | (ColumnType::Double, Kind::Double) => true,
        (
            ColumnType::Decimal {
                precision,
                scale,
                unsigned,
            },
            Kind::Decimal {
                precision: p,
                scale: s,
            },
        ) => {
            if *unsigned && m.unsigned == Some(false) {
                return Err("the event's DECIMAL is signed".into());
            }
            s <= *scale && p - s <= precision.saturating_sub(*scale)
        }
        (ColumnType::Char(_) | ColumnType::Binary(_), Kind::Str { max })
        | (ColumnType::VarChar(_) | ColumnType::VarBinary(_), Kind::VarStr { max }) => {
            u64::from(max) <= string_max_bytes(ty)
        }
        (
            ColumnType::Text(size) | ColumnType::Blob(size),
            Kind::Blob {
                prefix,
                geometry: false,
            },
        ) => prefix <= lob_pack_len(*size),
        (ColumnType::Date, Kind::Date) | (ColumnType::Year, Kind::Year) => true,
        (ColumnType::DateTime(f), Kind::DateTime { fsp })
        | (ColumnType::Timestamp(f), Kind::Timestamp { fsp })
        | (ColumnType::Time(f), Kind::Time { fsp }) => fsp <= *f,
        (ColumnType::Bit(n), Kind::Bit { bits }) => bits <= u32::from(*n),
        (ColumnType::Enum(members), Kind::Enum { pack }) => pack <= enum_pack_len(members.len()),
        (ColumnType::Set(_), Kind::Set { .. }) => true,
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the event's {} does not fit a {ty:?} column",
            describe(m)
        ))
    }
}

/// Ok when the rows of a table mapped as `map` can be applied to a table of columns `cols`:
/// the same number of columns, each of the same type family with metadata that fits (same
/// integer width and, when the event says, signedness; a DECIMAL, string, fraction or BIT
/// width no larger than the column's). Values are still checked one by one ([`to_value`]).
/// NULLs are not checked here: a NULL in a NOT NULL column is the caller's to refuse.
pub fn check_columns(map: &TableMap, cols: &[ColumnDef]) -> Result<(), DecodeError> {
    if map.columns.len() != cols.len() {
        return Err(DecodeError::ColumnCount {
            event: map.columns.len(),
            table: cols.len(),
        });
    }
    for (index, (m, c)) in map.columns.iter().zip(cols).enumerate() {
        column_fits(m, &c.ty).map_err(|reason| DecodeError::ColumnMismatch {
            index,
            column: c.name.clone(),
            reason,
        })?;
    }
    Ok(())
}

fn is_leap(y: u32) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 0,
    }
}

/// The proleptic Gregorian date `days` days after 1970-01-01 (`days` >= 0).
fn civil_from_days(days: i64) -> (u32, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y as u32, m as u32, d as u32)
}

/// Appends `.` and the first `fsp` digits of `micro` (nothing for fsp 0).
fn push_fraction(out: &mut String, micro: u32, fsp: u8) {
    if fsp > 0 {
        let all = format!("{micro:06}");
        out.push('.');
        out.push_str(&all[..usize::from(fsp.min(6))]);
    }
}

/// Checks `micro` has no digits past the column's `fsp`.
fn check_fraction(micro: u32, fsp: u8) -> Result<(), String> {
    if micro >= 1_000_000 {
        return Err("fraction of a second or more".into());
    }
    let unit = 10u32.pow(6 - u32::from(fsp.min(6)));
    if !micro.is_multiple_of(unit) {
        return Err(format!("more than {fsp} fractional digits"));
    }
    Ok(())
}

/// `YYYY-MM-DD HH:MM:SS[.f]` of a DATETIME(fsp) tierdb holds: a real date (or the zero date
/// 0000-00-00), a time of day, at most fsp fraction digits.
fn datetime_text(
    (y, m, d): (u32, u32, u32),
    (h, mi, s): (u32, u32, u32),
    micro: u32,
    fsp: u8,
) -> Result<String, String> {
    let zero_date = y == 0 && m == 0 && d == 0;
    if !zero_date && (y > 9999 || m == 0 || m > 12 || d == 0 || d > days_in_month(y, m)) {
        return Err("not a calendar date".into());
    }
    if h > 23 || mi > 59 || s > 59 {
        return Err("not a time of day".into());
    }
    check_fraction(micro, fsp)?;
    let mut out = format!("{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    push_fraction(&mut out, micro, fsp);
    Ok(out)
}

/// Converts a decoded value to the [`Value`] tierdb stores in a column of type `ty` (the
/// forms of `crates/engine/src/types.rs`): integers as `Int` (`UInt` above `i64::MAX`), FLOAT
/// and DOUBLE as `Double`, DECIMAL as text with the column's scale, DATE / DATETIME / TIME
/// text with exactly the column's fraction digits, TIMESTAMP as its UTC DATETIME text,
/// YEAR and BIT as integers, ENUM as its member's text, SET as its members' texts joined by
/// `,`, CHAR without trailing spaces, BINARY padded with zero bytes to its length.
///
/// `Null` gives `Value::Null` for every type (the caller refuses it for NOT NULL columns). An
/// integer read as signed ([`RawValue::Int`]) is read back as unsigned for an UNSIGNED column
/// (the event column must have the column's width: [`check_columns`]). Fails when the value
/// cannot belong to the column: another type family, out of range, longer, more digits, not
/// UTF-8 for a text column, not a member.
pub fn to_value(raw: &RawValue, ty: &ColumnType) -> Result<Value, DecodeError> {
    fit(raw, ty).map_err(|reason| DecodeError::BadValue {
        value: shown(raw),
        ty: format!("{ty:?}"),
        reason,
    })
}

/// The value for messages, cut to about 80 characters.
fn shown(raw: &RawValue) -> String {
    let mut s = match raw {
        RawValue::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        other => format!("{other:?}"),
    };
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

fn fit(raw: &RawValue, ty: &ColumnType) -> Result<Value, String> {
    use ColumnType as T;
    use RawValue as R;
    let utf8 = |b: &[u8]| {
        std::str::from_utf8(b)
            .map(|s| s.chars().count())
            .map_err(|_| "text is not UTF-8".to_string())
    };
    let too_long = |len: u64, max: u64, unit: &str| -> Result<(), String> {
        if len > max {
            Err(format!("{len} {unit} exceed the column's {max}"))
        } else {
            Ok(())
        }
    };
    Ok(match (ty, raw) {
        (_, R::Null) => Value::Null,
        (T::Int { bytes, unsigned }, R::Int(_) | R::UInt(_)) => {
            let bits = u32::from(*bytes).clamp(1, 8) * 8;
            let n = match *raw {
                // The signed reading of an UNSIGNED column's bytes: read them back unsigned.
                R::Int(i) if *unsigned && i < 0 && i128::from(i) >= -(1i128 << (bits - 1)) => {
                    i128::from(i) + (1i128 << bits)
                }
                R::Int(i) => i128::from(i),
                R::UInt(u) => i128::from(u),
                _ => 0,
            };
            let (lo, hi) = if *unsigned {
                (0, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            if !(lo..=hi).contains(&n) {
                return Err("out of the column's range".into());
            }
            Value::from_i128(n).ok_or("out of the column's range")?
        }
        (T::Float, R::Float(f)) if f.is_finite() => Value::Double(f64::from(*f)),
        (T::Double, R::Double(d)) if d.is_finite() => Value::Double(*d),
        (T::Float, R::Float(_)) | (T::Double, R::Double(_)) => {
            return Err("not a finite number".into())
        }
        (
            T::Decimal {
                precision,
                scale,
                unsigned,
            },
            R::Decimal(text),
        ) => Value::Bytes(decimal_text(text, *precision, *scale, *unsigned)?.into_bytes()),
        (T::Char(n), R::Bytes(b)) => {
            let mut len = b.len();
            while len > 0 && b[len - 1] == b' ' {
                len -= 1;
            }
            let chars = utf8(&b[..len])?;
            too_long(chars as u64, u64::from(*n), "characters")?;
            Value::Bytes(b[..len].to_vec())
        }
        (T::VarChar(n), R::Bytes(b)) => {
            too_long(utf8(b)? as u64, u64::from(*n), "characters")?;
            Value::Bytes(b.clone())
        }
        (T::Text(size), R::Bytes(b)) => {
            utf8(b)?;
            too_long(b.len() as u64, size.max_bytes(), "bytes")?;
            Value::Bytes(b.clone())
        }
        (T::Binary(n), R::Bytes(b)) => {
            too_long(b.len() as u64, u64::from(*n), "bytes")?;
            let mut v = b.clone();
            v.resize(*n as usize, 0);
            Value::Bytes(v)
        }
        (T::VarBinary(n), R::Bytes(b)) => {
            too_long(b.len() as u64, u64::from(*n), "bytes")?;
            Value::Bytes(b.clone())
        }
        (T::Blob(size), R::Bytes(b)) => {
            too_long(b.len() as u64, size.max_bytes(), "bytes")?;
            Value::Bytes(b.clone())
        }
        (T::Date, R::Date { y, m, d }) => {
            let (y, m, d) = (u32::from(*y), u32::from(*m), u32::from(*d));
            let text = datetime_text((y, m, d), (0, 0, 0), 0, 0)?;
            Value::Bytes(text.as_bytes()[..10].to_vec())
        }
        (
            T::DateTime(fsp),
            R::DateTime {
                y,
                m,
                d,
                h,
                mi,
                s,
                micro,
            },
        ) => {
            let date = (u32::from(*y), u32::from(*m), u32::from(*d));
            let time = (u32::from(*h), u32::from(*mi), u32::from(*s));
            Value::Bytes(datetime_text(date, time, *micro, *fsp)?.into_bytes())
        }
        (T::Timestamp(fsp), R::Timestamp { secs, micro }) => {
            let text = if *secs == 0 && *micro == 0 {
                datetime_text((0, 0, 0), (0, 0, 0), 0, *fsp)?
            } else if *secs == 0 || *secs > i32::MAX as u32 {
                return Err(
                    "outside TIMESTAMP's range (1970-01-01 00:00:01 .. 2038-01-19 03:14:07 UTC)"
                        .into(),
                );
            } else {
                let date = civil_from_days(i64::from(*secs / 86_400));
                let t = *secs % 86_400;
                datetime_text(date, (t / 3600, t / 60 % 60, t % 60), *micro, *fsp)?
            };
            Value::Bytes(text.into_bytes())
        }
        (
            T::Time(fsp),
            R::Time {
                neg,
                h,
                m,
                s,
                micro,
            },
        ) => {
            if *h > TIME_MAX_HOUR || *m > 59 || *s > 59 {
                return Err("outside TIME's range (-838:59:59 .. 838:59:59)".into());
            }
            check_fraction(*micro, *fsp)?;
            let zero = *h == 0 && *m == 0 && *s == 0 && *micro == 0;
            let mut out = String::with_capacity(18);
            if *neg && !zero {
                out.push('-');
            }
            out.push_str(&format!("{h:02}:{m:02}:{s:02}"));
            push_fraction(&mut out, *micro, *fsp);
            Value::Bytes(out.into_bytes())
        }
        (T::Year, R::Year(y)) => {
            if *y != 0 && !(1901..=2155).contains(y) {
                return Err("YEAR is 0 or 1901..=2155".into());
            }
            Value::Int(i64::from(*y))
        }
        (T::Bit(n), R::Bit(x)) => {
            if *n == 0 || (*n < 64 && x >> n != 0) {
                return Err(format!("more than {n} bits"));
            }
            Value::from_u64(*x)
        }
        (T::Enum(members), R::Enum(i)) => match usize::from(*i) {
            0 => Value::Bytes(Vec::new()),
            i => Value::Bytes(
                members
                    .get(i - 1)
                    .ok_or_else(|| format!("the ENUM has {} members", members.len()))?
                    .as_bytes()
                    .to_vec(),
            ),
        },
        (T::Set(members), R::Set(mask)) => {
            if members.len() < 64 && mask >> members.len() != 0 {
                return Err(format!("the SET has {} members", members.len()));
            }
            let names: Vec<&str> = members
                .iter()
                .take(64)
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, m)| m.as_str())
                .collect();
            Value::Bytes(names.join(",").into_bytes())
        }
        _ => return Err("a value of another type".into()),
    })
}

/// DECIMAL text re-fitted to a DECIMAL(precision, scale) column: canonical, exactly `scale`
/// fraction digits; Err when a digit would be lost or the integer part is too long.
fn decimal_text(text: &str, precision: u8, scale: u8, unsigned: bool) -> Result<String, String> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int_part, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    if int_part.is_empty() || !all_digits(int_part) || !all_digits(frac) {
        return Err("not decimal text".into());
    }
    let int_part = int_part.trim_start_matches('0');
    let frac_kept = frac.trim_end_matches('0');
    let scale = usize::from(scale);
    let intg = usize::from(precision.saturating_sub(scale as u8));
    if int_part.len() > intg {
        return Err(format!("more than {intg} integer digits"));
    }
    if frac_kept.len() > scale {
        return Err(format!("more than {scale} fraction digits"));
    }
    let zero = int_part.is_empty() && frac_kept.is_empty();
    if neg && unsigned && !zero {
        return Err("negative value in an UNSIGNED column".into());
    }
    let mut out = String::with_capacity(intg + scale + 3);
    if neg && !zero {
        out.push('-');
    }
    out.push_str(if int_part.is_empty() { "0" } else { int_part });
    if scale > 0 {
        out.push('.');
        out.push_str(frac_kept);
        out.extend(std::iter::repeat_n('0', scale - frac_kept.len()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::tests::{col, hex, reference_columns, reference_row};
    use crate::events::{self, QueryEvent};
    use crate::rows::{rows_event, RowImages};
    use proptest::prelude::*;
    use tierdb_engine::LobSize;

    fn text(s: &str) -> Value {
        Value::Bytes(s.as_bytes().to_vec())
    }

    /// A whole event around `body`: header (server id 7, log_pos 0) and CRC32 trailer.
    fn wrap(type_code: u8, flags: u16, body: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend_from_slice(&0u32.to_le_bytes());
        e.push(type_code);
        e.extend_from_slice(&7u32.to_le_bytes());
        let size = (HEADER_LEN + body.len() + CHECKSUM_LEN) as u32;
        e.extend_from_slice(&size.to_le_bytes());
        e.extend_from_slice(&0u32.to_le_bytes());
        e.extend_from_slice(&flags.to_le_bytes());
        e.extend_from_slice(body);
        let crc = event_crc(&e);
        e.extend_from_slice(&crc.to_le_bytes());
        e
    }

    fn fde() -> Vec<u8> {
        let mut out = Vec::new();
        events::format_description(&mut out, 1, 1, "10.11.0-MariaDB-tierdb").unwrap();
        out
    }

    // Bodies (between header and checksum) written by mariadbd 10.11.19 (server_id 7,
    // binlog_checksum=CRC32), from the tests of `events` and `rows`.
    const MARIADB_FDE_BODY: &str = "040031302e31312e31392d4d6172696144422d302b646562313275312d6c6f6700000000000000000000000000000000000000006f48146b13380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a0a01";
    const MARIADB_TABLE_MAP_BODY: &str = "1200000000000100026431000174002c03010102020909030308080405f6f6f6fefe0f0ffcfcfcfcfcfcfcfcfe0f0a1212110d1010101313fefefcfe2e04080a031e0a0500fe28ee90500090010102030401020304fe042c010006030100050100080003f801f70104f701feffffffff07";
    const MARIADB_WRITE_ROWS_BODY: &str = "12000000000001002cffffffffff0f0000000000f00100000080ff0080ffff000080ffffff00000080ffffffff0000000000000080ffffffffffffffff0000c03f00000000000002c07ffffff3feab8c149aa4350dfb38d200bc614e097e79600668c3a96c6c6f010078056162e282ac00000474696e790400746578740300006d6564040000006c6f6e670200ff0400626c6f620200006d62020000006c6204010203040200ff005dd00ffef3ff7efb99b244310501e24065937d251a7cff011555ffffffffffffffff4b91057fef7cee300503080000007b2261223a20317d02";
    const MARIADB_SPARSE_ROW_BODY: &str = "12000000000001002cffffffffff0ffefffffffff70200000001";
    const MARIADB_GTID_DDL_BODY: &str = "01000000000000000000000029000000000000";
    const MARIADB_GTID_TRX_BODY: &str = "0300000000000000000000000c000000000000";
    const MARIADB_XID_BODY: &str = "0700000000000000";
    const MARIADB_ROTATE_BODY: &str = "040000000000000062696e2e303030303032";
    const MARIADB_GTID_LIST_BODY: &str = "0100000000000000070000000600000000000000";
    const MARIADB_CHECKPOINT_BODY: &str = "0a00000062696e2e303030303031";

    fn rows_of(events: &[Event]) -> Vec<&RowsEvent> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Rows(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn values(raw: &[RawValue], cols: &[ColumnDef]) -> Vec<Value> {
        raw.iter()
            .zip(cols)
            .map(|(r, c)| to_value(r, &c.ty).unwrap_or_else(|e| panic!("column {}: {e}", c.name)))
            .collect()
    }

    #[test]
    fn decodes_what_mariadb_wrote() {
        let mut d = Decoder::new();
        let fde = wrap(FORMAT_DESCRIPTION_EVENT, 0, &hex(MARIADB_FDE_BODY));
        assert_eq!(fde.len(), 252);
        assert_eq!(
            d.feed(&fde).unwrap(),
            [Event::FormatDescription {
                binlog_version: 4,
                server_version: "10.11.19-MariaDB-0+deb12u1-log".into(),
                checksums: true,
            }]
        );
        assert!(d.format_seen() && d.checksums());

        let mut stmt = wrap(TABLE_MAP_EVENT, 0, &hex(MARIADB_TABLE_MAP_BODY));
        stmt.extend(wrap(WRITE_ROWS_EVENT_V1, 0, &hex(MARIADB_WRITE_ROWS_BODY)));
        let got = d.feed(&stmt).unwrap();
        let Event::TableMap(map) = &got[0] else {
            panic!("{got:?}")
        };
        let cols = reference_columns();
        assert_eq!((map.table_id, &*map.db, &*map.table), (18, "d1", "t"));
        assert_eq!(map.columns.len(), cols.len());
        for (m, c) in map.columns.iter().zip(&cols) {
            assert_eq!(m.nullable, c.nullable, "{}", c.name);
            assert_eq!(m.unsigned, None);
        }
        check_columns(map, &cols).unwrap();
        assert_eq!(d.table_map(18), Some(map));
        let rows = rows_of(&got);
        assert_eq!(rows.len(), 1);
        let r = rows[0];
        assert_eq!(
            (r.kind, r.table_id, r.flags, r.ncols),
            (RowsKind::Write, 18, STMT_END_F, 44)
        );
        assert_eq!(r.rows.len(), 1);
        let after = r.rows[0].1.as_ref().unwrap();
        assert!(r.rows[0].0.is_none());
        assert_eq!(values(after, &cols), reference_row());
        // Some raw forms: integers read signed, BIT(64) and BIGINT UNSIGNED all ones.
        assert_eq!(after[2], RawValue::Int(-1));
        assert_eq!(after[10], RawValue::Int(-1));
        assert_eq!(after[37], RawValue::Bit(u64::MAX));
        assert_eq!(after[13], RawValue::Decimal("-12.340".into()));
        assert_eq!(
            after[39],
            RawValue::Time {
                neg: true,
                h: 1,
                m: 2,
                s: 3,
                micro: 456_000
            }
        );
        assert_eq!(after[40], RawValue::Set(0b101));
        assert_eq!(after[41], RawValue::Enum(3));

        // The statement ended: its map is gone for the next statement's rows events.
        let sparse = wrap(DELETE_ROWS_EVENT_V1, 0, &hex(MARIADB_SPARSE_ROW_BODY));
        assert!(matches!(
            d.feed(&sparse),
            Err(DecodeError::UnknownTable { table_id: 18, .. })
        ));
        let mut stmt = wrap(TABLE_MAP_EVENT, 0, &hex(MARIADB_TABLE_MAP_BODY));
        stmt.extend(&sparse);
        let got = d.feed(&stmt).unwrap();
        let r = rows_of(&got)[0];
        assert_eq!(r.kind, RowsKind::Delete);
        let before = values(r.rows[0].0.as_ref().unwrap(), &cols);
        let mut expected = vec![Value::Null; cols.len()];
        expected[0] = Value::Int(2);
        expected[43] = text("p");
        assert_eq!(before, expected);
    }

    #[test]
    fn decodes_mariadb_small_events() {
        let mut buf = wrap(FORMAT_DESCRIPTION_EVENT, 0, &hex(MARIADB_FDE_BODY));
        buf.extend(wrap(163, 0, &hex(MARIADB_GTID_LIST_BODY)));
        buf.extend(wrap(161, 0, &hex(MARIADB_CHECKPOINT_BODY)));
        buf.extend(wrap(GTID_EVENT, 8, &hex(MARIADB_GTID_DDL_BODY)));
        // Query as mariadbd wrote it, with Q_HRNOW (0x80) after the time zone.
        let query = hex("07000000 00000000 02 0000 2b00
             00 00000005 01 0000205400000000 06 03 737464 03 0300 0100 04 2100 2100 0800
             05 06 2b30313a3030 80 010203");
        let mut query = query;
        query.extend_from_slice(b"d1\0INSERT INTO v VALUES (NOW())");
        buf.extend(wrap(QUERY_EVENT, 0, &query));
        buf.extend(wrap(GTID_EVENT, 8, &hex(MARIADB_GTID_TRX_BODY)));
        buf.extend(wrap(XID_EVENT, 0, &hex(MARIADB_XID_BODY)));
        buf.extend(wrap(4, 0, &hex(MARIADB_ROTATE_BODY)));
        buf.extend(wrap(3, 0, &[]));
        let got = decode_events(&buf, false).unwrap();
        assert_eq!(
            got[1..],
            [
                Event::Other { type_code: 163 },
                Event::Other { type_code: 161 },
                Event::Gtid {
                    seq: 1,
                    domain: 0,
                    server_id: 7,
                    standalone: true
                },
                Event::Query {
                    db: "d1".into(),
                    sql: b"INSERT INTO v VALUES (NOW())".to_vec()
                },
                Event::Gtid {
                    seq: 3,
                    domain: 0,
                    server_id: 7,
                    standalone: false
                },
                Event::Xid(7),
                Event::Other { type_code: 4 },
                Event::Other { type_code: 3 },
            ]
        );
    }

    #[test]
    fn decodes_every_event_the_encoder_writes() {
        let cols = vec![
            col(
                "a",
                ColumnType::Int {
                    bytes: 4,
                    unsigned: false,
                },
                false,
            ),
            col("b", ColumnType::VarChar(10), true),
        ];
        let row1 = [Value::Int(1), text("x")];
        let row2 = [Value::Int(2), Value::Null];
        let mut buf = fde();
        events::gtid_list(&mut buf, 1, 1, &[(0, 1, 5)]);
        events::binlog_checkpoint(&mut buf, 1, 1, "bin.000001").unwrap();
        events::gtid(&mut buf, 1, 1, 6, 2, false);
        let q = QueryEvent {
            thread_id: 1,
            exec_time: 0,
            error_code: 0,
            db: "db",
            sql: b"BEGIN",
            sql_mode: 0,
            auto_increment_increment: 2,
            auto_increment_offset: 1,
            charset_client: 45,
            collation_connection: 45,
            collation_server: 45,
            time_zone: Some("+00:00"),
            flags2: 0,
        };
        events::query(&mut buf, 1, 1, &q).unwrap();
        events::table_map(&mut buf, 1, 1, (1 << 48) - 1, "db", "t", &cols).unwrap();
        rows_event(
            &mut buf,
            1,
            1,
            RowsKind::Update,
            (1 << 48) - 1,
            &cols,
            &[(Some(&row1), Some(&row2))],
            false,
        )
        .unwrap();
        rows_event(
            &mut buf,
            1,
            1,
            RowsKind::Write,
            (1 << 48) - 1,
            &cols,
            &[(None, Some(&row1)), (None, Some(&row2))],
            true,
        )
        .unwrap();
        events::xid(&mut buf, 1, 1, u64::MAX);
        events::rotate(&mut buf, 1, 1, "bin.000002", 4).unwrap();
        events::stop(&mut buf, 1, 1);
        events::set_positions(&mut buf, 4).unwrap();
        let got = decode_events(&buf, true).unwrap();
        assert_eq!(got.len(), 11);
        assert_eq!(
            got[0],
            Event::FormatDescription {
                binlog_version: 4,
                server_version: "10.11.0-MariaDB-tierdb".into(),
                checksums: true
            }
        );
        assert_eq!(
            got[3],
            Event::Gtid {
                seq: 6,
                domain: 2,
                server_id: 1,
                standalone: false
            }
        );
        assert_eq!(
            got[4],
            Event::Query {
                db: "db".into(),
                sql: b"BEGIN".to_vec()
            }
        );
        let Event::TableMap(map) = &got[5] else {
            panic!()
        };
        assert_eq!(map.table_id, (1 << 48) - 1);
        assert_eq!(
            map.columns,
            [
                MapColumn {
                    type_code: MYSQL_TYPE_LONG,
                    meta: 0,
                    nullable: false,
                    unsigned: None
                },
                MapColumn {
                    type_code: MYSQL_TYPE_VARCHAR,
                    meta: 40,
                    nullable: true,
                    unsigned: None
                }
            ]
        );
        let rows = rows_of(&got);
        assert_eq!(rows[0].flags, 0);
        assert_eq!(
            rows[0].rows,
            [(
                Some(vec![RawValue::Int(1), RawValue::Bytes(b"x".to_vec())]),
                Some(vec![RawValue::Int(2), RawValue::Null])
            )]
        );
        assert_eq!(rows[1].flags, STMT_END_F);
        assert_eq!(rows[1].rows.len(), 2);
        assert_eq!(got[8], Event::Xid(u64::MAX));
        assert_eq!(got[9], Event::Other { type_code: 4 });
        assert_eq!(got[10], Event::Other { type_code: 3 });
    }

    /// A Table_map and one rows event for `cols` and `rows` (after a Format_description).
    fn statement(cols: &[ColumnDef], kind: RowsKind, rows: &[RowImages<'_>]) -> Vec<u8> {
        let mut buf = Vec::new();
        events::table_map(&mut buf, 0, 1, 42, "db", "t", cols).unwrap();
        rows_event(&mut buf, 0, 1, kind, 42, cols, rows, true).unwrap();
        buf
    }

    /// Encodes `rows`, decodes them with a decoder that saw the Format_description in an
    /// earlier buffer, and checks every value comes back as stored.
    fn round_trip(cols: &[ColumnDef], kind: RowsKind, rows: &[RowImages<'_>]) {
        let mut d = Decoder::new();
        d.feed(&fde()).unwrap();
        let got = d.feed(&statement(cols, kind, rows)).unwrap();
        let Event::TableMap(map) = &got[0] else {
            panic!("{got:?}")
        };
        check_columns(map, cols).unwrap();
        let decoded = rows_of(&got);
        assert_eq!(decoded.len(), 1);
        let r = decoded[0];
        assert_eq!((r.kind, r.table_id, r.ncols), (kind, 42, cols.len()));
        assert_eq!(r.rows.len(), rows.len());
        for ((before, after), (raw_before, raw_after)) in rows.iter().zip(&r.rows) {
            let want = |img: Option<&[Value]>| img.map(|v| v[..cols.len()].to_vec());
            let got = |img: &Option<Vec<RawValue>>| img.as_ref().map(|v| values(v, cols));
            match kind {
                RowsKind::Write => {
                    assert_eq!(raw_before, &None);
                    assert_eq!(got(raw_after), want(*after));
                }
                RowsKind::Delete => {
                    assert_eq!(raw_after, &None);
                    assert_eq!(got(raw_before), want(*before));
                }
                RowsKind::Update => {
                    assert_eq!(got(raw_before), want(*before));
                    assert_eq!(got(raw_after), want(*after));
                }
            }
        }
    }

    fn one_column(ty: ColumnType, vals: &[Value]) {
        let cols = [col("c", ty, true)];
        let rows: Vec<Vec<Value>> = vals.iter().map(|v| vec![v.clone()]).collect();
        let images: Vec<RowImages<'_>> = rows.iter().map(|r| (None, Some(&r[..]))).collect();
        round_trip(&cols, RowsKind::Write, &images);
    }

    /// tierdb's TIME text of `micros` (as `tierdb_sql::time::text`).
    fn time_text(micros: i64, fsp: u8) -> String {
        let unit = 10u64.pow(6 - u32::from(fsp));
        let abs = micros.unsigned_abs() / unit * unit;
        let secs = abs / 1_000_000;
        let mut out = String::new();
        if micros < 0 && abs != 0 {
            out.push('-');
        }
        out.push_str(&format!(
            "{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        ));
        push_fraction(&mut out, (abs % 1_000_000) as u32, fsp);
        out
    }

    const TIME_MAX_MICROS: i64 = ((838 * 60 + 59) * 60 + 59) * 1_000_000 + 999_999;

    fn utc_text(secs: u32, micro: u32, fsp: u8) -> String {
        let (y, m, d) = civil_from_days(i64::from(secs / 86_400));
        let t = secs % 86_400;
        let mut s = format!(
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
            t / 3600,
            t / 60 % 60,
            t % 60
        );
        push_fraction(&mut s, micro, fsp);
        s
    }

    #[test]
    fn temporal_extremes_of_every_fsp() {
        for fsp in 0..=6u8 {
            let unit = 10u32.pow(6 - u32::from(fsp));
            let max_frac = 999_999 / unit * unit;
            let mut dt = vec![
                text(&datetime_text((0, 0, 0), (0, 0, 0), 0, fsp).unwrap()),
                text(&datetime_text((9999, 12, 31), (23, 59, 59), max_frac, fsp).unwrap()),
                text(&datetime_text((1000, 1, 1), (0, 0, 0), unit % 1_000_000, fsp).unwrap()),
                text(&datetime_text((2024, 2, 29), (12, 34, 56), 0, fsp).unwrap()),
                text(&datetime_text((0, 1, 1), (0, 0, 1), 0, fsp).unwrap()),
                Value::Null,
            ];
            one_column(ColumnType::DateTime(fsp), &dt);
            dt.truncate(2);
            let ts = [
                text(&datetime_text((0, 0, 0), (0, 0, 0), 0, fsp).unwrap()),
                text(&utc_text(1, 0, fsp)),
                text(&utc_text(i32::MAX as u32, max_frac, fsp)),
                text(&utc_text(1_709_210_096, unit % 1_000_000, fsp)),
                Value::Null,
            ];
            one_column(ColumnType::Timestamp(fsp), &ts);
            let u = i64::from(unit);
            let times: Vec<Value> = [
                0,
                -TIME_MAX_MICROS,
                TIME_MAX_MICROS,
                -u,
                u,
                -1_000_000,
                -1_000_000 - u,
                -(100 * 3600 * 1_000_000) - u,
                3723 * 1_000_000 + 456_789,
                -3723 * 1_000_000 - 456_789,
            ]
            .iter()
            .map(|&m| text(&time_text(m, fsp)))
            .collect();
            one_column(ColumnType::Time(fsp), &times);
        }
        one_column(
            ColumnType::Date,
            &[
                text("0000-00-00"),
                text("9999-12-31"),
                text("0000-02-29"),
                text("1000-01-01"),
            ],
        );
        one_column(
            ColumnType::Year,
            &[Value::Int(0), Value::Int(1901), Value::Int(2155)],
        );
    }

    #[test]
    fn numeric_extremes() {
        for (bytes, unsigned) in [1, 2, 3, 4, 8]
            .into_iter()
            .flat_map(|b| [(b, false), (b, true)])
        {
            let bits = u32::from(bytes) * 8;
            let (lo, hi) = if unsigned {
                (0i128, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            let vals: Vec<Value> = [lo, hi, 0, 1, lo + 1, hi - 1]
                .iter()
                .map(|&n| Value::from_i128(n).unwrap())
                .collect();
            one_column(ColumnType::Int { bytes, unsigned }, &vals);
        }
        one_column(
            ColumnType::Float,
            &[
                Value::Double(f64::from(f32::MAX)),
                Value::Double(f64::from(f32::MIN_POSITIVE)),
                Value::Double(-1.1f32 as f64),
            ],
        );
        one_column(
            ColumnType::Double,
            &[
                Value::Double(f64::MAX),
                Value::Double(f64::MIN),
                Value::Double(5e-324),
            ],
        );
        for n in 1..=64u8 {
            let max = if n == 64 { u64::MAX } else { (1 << n) - 1 };
            one_column(
                ColumnType::Bit(n),
                &[
                    Value::from_u64(max),
                    Value::Int(0),
                    Value::from_u64(max >> 1),
                ],
            );
        }
        // Every precision and scale: the largest, smallest and a small value.
        for p in 1..=65u8 {
            for s in 0..=p.min(38) {
                let intg = usize::from(p - s);
                let nines = |n: usize| "9".repeat(n);
                let with_frac = |int: String, frac: String| {
                    if s == 0 {
                        int
                    } else {
                        format!("{int}.{frac}")
                    }
                };
                let int_max = if intg == 0 { "0".into() } else { nines(intg) };
                let max = with_frac(int_max, nines(usize::from(s)));
                let small = with_frac("0".into(), format!("{:0>w$}", "1", w = usize::from(s)));
                let zero = with_frac("0".into(), "0".repeat(usize::from(s)));
                let mut vals = vec![text(&max), text(&format!("-{max}")), text(&zero)];
                if s > 0 {
                    vals.push(text(&format!("-{small}")));
                }
                one_column(
                    ColumnType::Decimal {
                        precision: p,
                        scale: s,
                        unsigned: false,
                    },
                    &vals,
                );
            }
        }
    }

    #[test]
    fn strings_of_every_length_prefix() {
        let big: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        let big_text = "€".repeat(23_000); // 69 000 bytes
        for size in [
            LobSize::Tiny,
            LobSize::Regular,
            LobSize::Medium,
            LobSize::Long,
        ] {
            let max = usize::try_from(size.max_bytes().min(70_000)).unwrap();
            let mut blobs = vec![
                Value::Bytes(Vec::new()),
                Value::Bytes(big[..max.min(255)].to_vec()),
                Value::Bytes(big[..max].to_vec()),
            ];
            if size != LobSize::Tiny {
                blobs.push(Value::Bytes(big[..300].to_vec()));
            }
            one_column(ColumnType::Blob(size), &blobs);
            let texts = if size == LobSize::Tiny {
                vec![text(&"é".repeat(127)), text("")]
            } else if size == LobSize::Regular {
                vec![text(&"😀".repeat(16_383))]
            } else {
                vec![text(&big_text), text("{\"a\": 1}")]
            };
            one_column(ColumnType::Text(size), &texts);
        }
        one_column(
            ColumnType::Char(255),
            &[text(&"😀".repeat(255)), text(""), text(" a b")],
        );
        one_column(ColumnType::Char(63), &[text(&"é".repeat(63)), text("x")]);
        one_column(
            ColumnType::Binary(255),
            &[
                Value::Bytes(vec![0xff; 255]),
                Value::Bytes(vec![0; 255]),
                Value::Bytes([vec![1, 0, 2], vec![0; 252]].concat()),
            ],
        );
        one_column(ColumnType::VarChar(16_383), &[text(&"ü".repeat(16_383))]);
        one_column(ColumnType::VarChar(63), &[text(&"a".repeat(63)), text("")]);
        one_column(
            ColumnType::VarBinary(65_532),
            &[Value::Bytes(big[..65_532].to_vec())],
        );
        one_column(ColumnType::VarBinary(255), &[Value::Bytes(vec![0; 255])]);
        let members = |n: usize| (0..n).map(|i| format!("m{i}")).collect::<Vec<_>>();
        one_column(
            ColumnType::Enum(members(300)),
            &[text("m0"), text("m299"), text(""), text("m255")],
        );
        one_column(ColumnType::Enum(members(1)), &[text("m0"), text("")]);
        let all64 = members(64).join(",");
        one_column(
            ColumnType::Set(members(64)),
            &[text(&all64), text(""), text("m63"), text("m0,m7,m8,m32")],
        );
        for n in [1, 8, 9, 16, 17, 24, 25, 32, 33, 63] {
            let all = members(n).join(",");
            one_column(ColumnType::Set(members(n)), &[text(&all), text("")]);
        }
    }

    /// A small deterministic generator (splitmix64) for random tables and rows.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        /// Inclusive range.
        fn range(&mut self, lo: i128, hi: i128) -> i128 {
            let span = (hi - lo + 1) as u128;
            let r = (u128::from(self.next()) << 64 | u128::from(self.next())) % span;
            lo + r as i128
        }
        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }
        fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    fn random_type(r: &mut Rng) -> ColumnType {
        use ColumnType::*;
        let lob = |r: &mut Rng| {
            r.pick(&[
                LobSize::Tiny,
                LobSize::Regular,
                LobSize::Medium,
                LobSize::Long,
            ])
        };
        let members = |n: u64| (0..n).map(|i| format!("m{i}")).collect::<Vec<_>>();
        match r.below(18) {
            0 => Int {
                bytes: r.pick(&[1, 2, 3, 4, 8]),
                unsigned: r.chance(50),
            },
            1 => Float,
            2 => Double,
            3 => {
                let precision = r.range(1, 65) as u8;
                Decimal {
                    precision,
                    scale: r.range(0, i128::from(precision.min(38))) as u8,
                    unsigned: r.chance(30),
                }
            }
            4 => Char(r.range(1, 255) as u32),
            5 => VarChar(r.pick(&[1, 10, 63, 64, 100, 16_383])),
            6 => Text(lob(r)),
            7 => Blob(lob(r)),
            8 => Binary(r.range(1, 255) as u32),
            9 => VarBinary(r.pick(&[1, 16, 255, 256, 65_532])),
            10 => Date,
            11 => DateTime(r.range(0, 6) as u8),
            12 => Timestamp(r.range(0, 6) as u8),
            13 => Time(r.range(0, 6) as u8),
            14 => Year,
            15 => Bit(r.range(1, 64) as u8),
            16 => Enum(members(r.pick(&[1, 2, 255, 256, 300]))),
            _ => Set(members(r.range(1, 64) as u64)),
        }
    }

    fn random_chars(r: &mut Rng, max_chars: usize, max_bytes: usize) -> String {
        let pool = ['a', 'Z', ' ', '0', 'é', '€', '😀', '\'', '\\'];
        let n = if r.chance(10) {
            max_chars
        } else {
            r.range(0, max_chars.min(40) as i128) as usize
        };
        let mut s = String::new();
        for _ in 0..n {
            let c = r.pick(&pool);
            if s.len() + c.len_utf8() > max_bytes {
                break;
            }
            s.push(c);
        }
        s
    }

    fn random_date(r: &mut Rng) -> (u32, u32, u32) {
        if r.chance(5) {
            return (0, 0, 0);
        }
        let y = if r.chance(10) {
            r.pick(&[0, 1000, 9999])
        } else {
            r.range(0, 9999) as u32
        };
        let m = r.range(1, 12) as u32;
        (y, m, r.range(1, i128::from(days_in_month(y, m))) as u32)
    }

    fn random_micro(r: &mut Rng, fsp: u8) -> u32 {
        let unit = 10u32.pow(6 - u32::from(fsp));
        if r.chance(20) {
            return 999_999 / unit * unit;
        }
        r.range(0, 999_999) as u32 / unit * unit
    }

    fn random_value(r: &mut Rng, ty: &ColumnType) -> Value {
        use ColumnType::*;
        match ty {
            Int { bytes, unsigned } => {
                let bits = u32::from(*bytes) * 8;
                let (lo, hi) = if *unsigned {
                    (0, (1i128 << bits) - 1)
                } else {
                    (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
                };
                let n = match r.below(5) {
                    0 => lo,
                    1 => hi,
                    2 => 0,
                    _ => r.range(lo, hi),
                };
                Value::from_i128(n).unwrap()
            }
            Float => loop {
                let f = f32::from_bits(r.next() as u32);
                if f.is_finite() {
                    break Value::Double(f64::from(f));
                }
            },
            Double => loop {
                let d = f64::from_bits(r.next());
                if d.is_finite() {
                    break Value::Double(d);
                }
            },
            Decimal {
                precision,
                scale,
                unsigned,
            } => {
                let intg = usize::from(precision - scale);
                let all_nines = r.chance(15);
                let digit = |r: &mut Rng| {
                    if all_nines {
                        '9'
                    } else {
                        char::from(b'0' + r.below(10) as u8)
                    }
                };
                let n_int = if all_nines {
                    intg
                } else {
                    r.range(0, intg as i128) as usize
                };
                let int: String = (0..n_int).map(|_| digit(r)).collect();
                let int = int.trim_start_matches('0');
                let frac: String = (0..*scale).map(|_| digit(r)).collect();
                let zero = int.is_empty() && frac.bytes().all(|c| c == b'0');
                let mut s = String::new();
                if !unsigned && !zero && r.chance(50) {
                    s.push('-');
                }
                s.push_str(if int.is_empty() { "0" } else { int });
                if *scale > 0 {
                    s.push('.');
                    s.push_str(&frac);
                }
                text(&s)
            }
            Char(n) => {
                let s = random_chars(r, *n as usize, usize::MAX);
                text(s.trim_end_matches(' '))
            }
            VarChar(n) => text(&random_chars(r, *n as usize, usize::MAX)),
            Text(size) => {
                let max = size.max_bytes().min(600) as usize;
                text(&random_chars(r, max, max))
            }
            Blob(size) => {
                let max = size.max_bytes().min(600) as usize;
                let n = if r.chance(10) {
                    max
                } else {
                    r.range(0, max.min(40) as i128) as usize
                };
                Value::Bytes((0..n).map(|_| r.next() as u8).collect())
            }
            Binary(n) => {
                let len = r.range(0, i128::from(*n)) as usize;
                let mut b: Vec<u8> = (0..len)
                    .map(|_| if r.chance(30) { 0 } else { r.next() as u8 })
                    .collect();
                b.resize(*n as usize, 0);
                Value::Bytes(b)
            }
            VarBinary(n) => {
                let len = if r.chance(10) {
                    (*n).min(600) as usize
                } else {
                    r.range(0, i128::from((*n).min(40))) as usize
                };
                Value::Bytes((0..len).map(|_| r.next() as u8).collect())
            }
            Date => {
                let (y, m, d) = random_date(r);
                text(&format!("{y:04}-{m:02}-{d:02}"))
            }
            DateTime(fsp) => {
                let date = random_date(r);
                let time = (
                    r.range(0, 23) as u32,
                    r.range(0, 59) as u32,
                    r.range(0, 59) as u32,
                );
                let micro = random_micro(r, *fsp);
                text(&datetime_text(date, time, micro, *fsp).unwrap())
            }
            Timestamp(fsp) => {
                if r.chance(5) {
                    return text(&datetime_text((0, 0, 0), (0, 0, 0), 0, *fsp).unwrap());
                }
                let secs = if r.chance(10) {
                    r.pick(&[1, i32::MAX as u32])
                } else {
                    r.range(1, i128::from(i32::MAX)) as u32
                };
                text(&utc_text(secs, random_micro(r, *fsp), *fsp))
            }
            Time(fsp) => {
                let m = match r.below(6) {
                    0 => TIME_MAX_MICROS,
                    1 => -TIME_MAX_MICROS,
                    2 => -(r.range(0, 5_000_000) as i64),
                    _ => r.range(-i128::from(TIME_MAX_MICROS), i128::from(TIME_MAX_MICROS)) as i64,
                };
                text(&time_text(m, *fsp))
            }
            Year => Value::Int(match r.below(4) {
                0 => 0,
                1 => 2155,
                _ => r.range(1901, 2155) as i64,
            }),
            Bit(n) => {
                let mask = if *n == 64 { u64::MAX } else { (1 << n) - 1 };
                let x = if r.chance(20) { mask } else { r.next() & mask };
                Value::from_u64(x)
            }
            Enum(members) => {
                let i = r.range(0, members.len() as i128) as usize;
                text(if i == 0 { "" } else { &members[i - 1] })
            }
            Set(members) => {
                let names: Vec<&str> = members
                    .iter()
                    .filter(|_| r.chance(30))
                    .map(String::as_str)
                    .collect();
                text(&names.join(","))
            }
        }
    }

    /// Columns, kind, before images, after images.
    type RandomTable = (Vec<ColumnDef>, RowsKind, Vec<Vec<Value>>, Vec<Vec<Value>>);

    fn random_table(r: &mut Rng) -> RandomTable {
        let ncols = r.range(1, 12) as usize;
        let cols: Vec<ColumnDef> = (0..ncols)
            .map(|i| col(&format!("c{i}"), random_type(r), r.chance(50)))
            .collect();
        let kind = r.pick(&[RowsKind::Write, RowsKind::Update, RowsKind::Delete]);
        let row = |r: &mut Rng| -> Vec<Value> {
            let mut v: Vec<Value> = cols
                .iter()
                .map(|c| {
                    if c.nullable && r.chance(20) {
                        Value::Null
                    } else {
                        random_value(r, &c.ty)
                    }
                })
                .collect();
            if r.chance(20) {
                v.push(Value::Int(r.next() as i64)); // a hidden row id, left out
            }
            v
        };
        let nrows = r.range(1, 4) as usize;
        let before: Vec<Vec<Value>> = (0..nrows).map(|_| row(r)).collect();
        let after: Vec<Vec<Value>> = (0..nrows).map(|_| row(r)).collect();
        (cols, kind, before, after)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn random_rows_round_trip(seed in any::<u64>()) {
            let mut r = Rng(seed);
            let (cols, kind, before, after) = random_table(&mut r);
            let images: Vec<RowImages<'_>> = before
                .iter()
                .zip(&after)
                .map(|(b, a)| match kind {
                    RowsKind::Write => (None, Some(&a[..])),
                    RowsKind::Delete => (Some(&b[..]), None),
                    RowsKind::Update => (Some(&b[..]), Some(&a[..])),
                })
                .collect();
            round_trip(&cols, kind, &images);
        }

        #[test]
        fn never_panics_on_random_bytes(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            checksums in any::<bool>(),
        ) {
            let _ = decode_events(&bytes, checksums);
            let mut d = Decoder::new();
            let _ = d.feed(&fde());
            let _ = d.feed(&bytes);
        }

        #[test]
        fn never_panics_on_damaged_events(
            seed in any::<u64>(),
            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
            cut in any::<usize>(),
            reseal in any::<bool>(),
        ) {
            let mut r = Rng(seed);
            let (cols, kind, before, after) = random_table(&mut r);
            let images: Vec<RowImages<'_>> = before
                .iter()
                .zip(&after)
                .map(|(b, a)| (Some(&b[..]), Some(&a[..])))
                .collect();
            let mut buf = fde();
            buf.extend(statement(&cols, kind, &images));
            // Damage past the Format_description most of the time, so the rest is parsed.
            let start = if r.chance(80) { fde().len() } else { 0 };
            for (at, x) in flips {
                let n = buf.len() - start;
                buf[start + at % n] ^= x;
            }
            buf.truncate(start + cut % (buf.len() - start + 1));
            if reseal {
                // Valid checksums over damaged bodies reach the body decoders.
                let _ = events::set_positions(&mut buf, 4);
            }
            let _ = decode_events(&buf, true);
            let _ = decode_events(&buf, false);
            if let Ok(events) = decode_events(&buf, true) {
                // Whatever decodes converts or fails, never panics.
                for e in &events {
                    if let Event::Rows(rows) = e {
                        for (b, a) in &rows.rows {
                            for img in [b, a].into_iter().flatten() {
                                for (v, c) in img.iter().zip(&cols) {
                                    let _ = to_value(v, &c.ty);
                                }
                            }
                        }
                    }
                    if let Event::TableMap(m) = e {
                        let _ = check_columns(m, &cols);
                    }
                }
            }
        }

        #[test]
        fn to_value_never_panics(raw in raw_value(), seed in any::<u64>()) {
            let mut r = Rng(seed);
            let ty = random_type(&mut r);
            if let Ok(v) = to_value(&raw, &ty) {
                // Whatever is accepted is a value the encoder takes for that column.
                let c = col("c", ty, true);
                let row = [v];
                let mut out = Vec::new();
                prop_assert!(rows_event(&mut out, 0, 1, RowsKind::Write, 1, &[c], &[(None, Some(&row))], true).is_ok(), "{:?}", row);
            }
        }
    }

    fn raw_value() -> impl Strategy<Value = RawValue> {
        prop_oneof![
            Just(RawValue::Null),
            any::<i64>().prop_map(RawValue::Int),
            any::<u64>().prop_map(RawValue::UInt),
            any::<f32>().prop_map(RawValue::Float),
            any::<f64>().prop_map(RawValue::Double),
            "-?[0-9]{0,40}(\\.[0-9]{0,40})?".prop_map(RawValue::Decimal),
            proptest::collection::vec(any::<u8>(), 0..300).prop_map(RawValue::Bytes),
            (any::<u16>(), any::<u8>(), any::<u8>()).prop_map(|(y, m, d)| RawValue::Date {
                y,
                m,
                d
            }),
            (
                any::<u16>(),
                0u8..14,
                0u8..33,
                0u8..25,
                0u8..61,
                0u8..61,
                0u32..1_100_000
            )
                .prop_map(|(y, m, d, h, mi, s, micro)| RawValue::DateTime {
                    y,
                    m,
                    d,
                    h,
                    mi,
                    s,
                    micro
                }),
            (any::<u32>(), 0u32..1_100_000)
                .prop_map(|(secs, micro)| RawValue::Timestamp { secs, micro }),
            (any::<bool>(), 0u32..1000, 0u8..61, 0u8..61, 0u32..1_100_000).prop_map(
                |(neg, h, m, s, micro)| RawValue::Time {
                    neg,
                    h,
                    m,
                    s,
                    micro
                }
            ),
            any::<u16>().prop_map(RawValue::Year),
            any::<u64>().prop_map(RawValue::Bit),
            any::<u16>().prop_map(RawValue::Enum),
            any::<u64>().prop_map(RawValue::Set),
        ]
    }

    /// Patches a whole event in `buf` at `at` (its bytes replaced by `f`'s result) and
    /// fixes the size field and every checksum.
    fn patched(buf: &[u8], at: usize, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
        let len = le_u32(buf, at + EVENT_LEN_OFFSET) as usize;
        let mut e = buf[at..at + len - CHECKSUM_LEN].to_vec();
        f(&mut e);
        let size = (e.len() + CHECKSUM_LEN) as u32;
        e[EVENT_LEN_OFFSET..EVENT_LEN_OFFSET + 4].copy_from_slice(&size.to_le_bytes());
        e.extend_from_slice(&[0; CHECKSUM_LEN]);
        let mut out = buf[..at].to_vec();
        out.extend(e);
        out.extend_from_slice(&buf[at + len..]);
        events::set_positions(&mut out, 4).unwrap();
        out
    }

    fn simple_table() -> (Vec<ColumnDef>, Vec<u8>, usize) {
        let cols = vec![
            col(
                "a",
                ColumnType::Int {
                    bytes: 2,
                    unsigned: true,
                },
                false,
            ),
            col("b", ColumnType::Time(3), true),
        ];
        let row = [Value::Int(65_535), text("-00:00:00.001")];
        let mut buf = fde();
        let fde_len = buf.len();
        buf.extend(statement(&cols, RowsKind::Write, &[(None, Some(&row))]));
        (cols, buf, fde_len)
    }

    #[test]
    fn rows_events_v2_and_signedness_metadata() {
        let (cols, buf, fde_len) = simple_table();
        let map_len = le_u32(&buf, fde_len + EVENT_LEN_OFFSET) as usize;
        let rows_at = fde_len + map_len;
        for extra in [&b""[..], &b"\x01\x02\x03"[..]] {
            // v2: type 30, then the extra-data length (counting itself) after the flags.
            let v2 = patched(&buf, rows_at, |e| {
                e[TYPE_OFFSET] = WRITE_ROWS_EVENT_V2;
                let mut ext = ((extra.len() + 2) as u16).to_le_bytes().to_vec();
                ext.extend_from_slice(extra);
                e.splice(HEADER_LEN + 8..HEADER_LEN + 8, ext);
            });
            let got = decode_events(&v2, true).unwrap();
            let r = rows_of(&got)[0];
            assert_eq!(r.kind, RowsKind::Write);
            assert_eq!(
                values(r.rows[0].1.as_ref().unwrap(), &cols),
                [Value::Int(65_535), text("-00:00:00.001")]
            );
        }
        // Optional metadata: SIGNEDNESS (1 numeric column, UNSIGNED), then a column-name
        // field that is skipped.
        let with_meta = patched(&buf, fde_len, |e| {
            e.extend_from_slice(&[OPT_META_SIGNEDNESS, 1, 0x80, 4, 2, 1, b'a', 0]);
        });
        let got = decode_events(&with_meta, true).unwrap();
        let Event::TableMap(map) = &got[1] else {
            panic!()
        };
        assert_eq!(map.columns[0].unsigned, Some(true));
        assert_eq!(map.columns[1].unsigned, None);
        check_columns(map, &cols).unwrap();
        assert_eq!(
            rows_of(&got)[0].rows[0].1.as_ref().unwrap()[0],
            RawValue::UInt(65_535)
        );
        let mut signed = cols.clone();
        signed[0].ty = ColumnType::Int {
            bytes: 2,
            unsigned: false,
        };
        assert!(matches!(
            check_columns(map, &signed),
            Err(DecodeError::ColumnMismatch { index: 0, .. })
        ));
        // Without it, the signed reading goes back to the UNSIGNED column.
        assert_eq!(
            to_value(&RawValue::Int(-1), &cols[0].ty).unwrap(),
            Value::Int(65_535)
        );
        assert!(to_value(&RawValue::Int(-1), &signed[0].ty).is_ok());
        assert!(to_value(&RawValue::UInt(65_535), &signed[0].ty).is_err());
        assert!(to_value(&RawValue::Int(-32_769), &cols[0].ty).is_err());
    }

    #[test]
    fn refuses_what_it_cannot_apply() {
        let (_, buf, fde_len) = simple_table();
        let map_len = le_u32(&buf, fde_len + EVENT_LEN_OFFSET) as usize;
        let rows_at = fde_len + map_len;
        // binlog_row_image=MINIMAL: a column left out of the image.
        let minimal = patched(&buf, rows_at, |e| e[HEADER_LEN + 9] = 0b01);
        assert!(matches!(
            decode_events(&minimal, true),
            Err(DecodeError::Unsupported(m)) if m.contains("binlog_row_image")
        ));
        // Compressed rows events.
        let compressed = patched(&buf, rows_at, |e| e[TYPE_OFFSET] = 166);
        assert!(matches!(
            decode_events(&compressed, true),
            Err(DecodeError::Unsupported(m)) if m.contains("compressed")
        ));
        // Bad checksum, cut-off event, size below the minimum.
        let mut bad = buf.clone();
        let last = bad.len() - 5;
        bad[last] ^= 1;
        assert!(matches!(
            decode_events(&bad, true),
            Err(DecodeError::BadChecksum { offset, type_code: WRITE_ROWS_EVENT_V1 }) if offset == rows_at
        ));
        assert!(matches!(
            decode_events(&buf[..buf.len() - 1], true),
            Err(DecodeError::Truncated { .. })
        ));
        let tiny = patched(&buf, rows_at, |e| e.truncate(HEADER_LEN));
        assert!(matches!(
            decode_events(&tiny, true),
            Err(DecodeError::Malformed { offset, .. }) if offset == rows_at
        ));
        let mut short = buf[..fde_len].to_vec();
        short.extend_from_slice(&[0; HEADER_LEN]);
        assert!(matches!(
            decode_events(&short, true),
            Err(DecodeError::Malformed { .. })
        ));
        // A rows event with more data than whole rows.
        let extra = patched(&buf, rows_at, |e| e.push(0));
        assert!(matches!(
            decode_events(&extra, true),
            Err(DecodeError::Malformed { .. })
        ));
        // A rows event without its Table_map; an error leaves the decoder as it was.
        let mut d = Decoder::new();
        d.feed(&buf[..rows_at]).unwrap();
        assert!(d.table_map(42).is_some());
        assert!(d.feed(&buf[rows_at..rows_at + 3]).is_err());
        assert!(d.table_map(42).is_some());
        d.feed(&buf[rows_at..]).unwrap();
        assert!(d.table_map(42).is_some(), "kept until the next statement");
        assert!(matches!(
            d.feed(&buf[rows_at..]),
            Err(DecodeError::UnknownTable {
                offset: 0,
                table_id: 42
            })
        ));
        // Without checksums, the trailer of an event is read as its body.
        assert!(decode_events(&buf[fde_len..], false).is_err());
        let mut d = Decoder::with_checksums(false);
        assert!(!d.checksums());
        d.feed(&buf[..fde_len]).unwrap();
        assert!(d.checksums());
        d.feed(&buf[fde_len..]).unwrap();
    }

    #[test]
    fn format_description_without_checksums() {
        // alg OFF: following events have no trailer (the FDE still has its 4 bytes).
        let fde_off = patched(&fde(), 0, |e| {
            let n = e.len();
            e[n - 1] = 0;
        });
        let (cols, buf, fde_len) = simple_table();
        let mut stripped = fde_off.clone();
        let mut at = fde_len;
        while at < buf.len() {
            let len = le_u32(&buf, at + EVENT_LEN_OFFSET) as usize;
            let mut e = buf[at..at + len - CHECKSUM_LEN].to_vec();
            let size = (len - CHECKSUM_LEN) as u32;
            e[EVENT_LEN_OFFSET..EVENT_LEN_OFFSET + 4].copy_from_slice(&size.to_le_bytes());
            stripped.extend(e);
            at += len;
        }
        let got = decode_events(&stripped, true).unwrap();
        assert!(matches!(
            got[0],
            Event::FormatDescription {
                checksums: false,
                ..
            }
        ));
        let r = rows_of(&got)[0];
        assert_eq!(
            values(r.rows[0].1.as_ref().unwrap(), &cols),
            [Value::Int(65_535), text("-00:00:00.001")]
        );
        // An unknown algorithm, and a damaged CRC32 Format_description.
        let odd = patched(&fde(), 0, |e| {
            let n = e.len();
            e[n - 1] = 7;
        });
        assert!(matches!(
            decode_events(&odd, true),
            Err(DecodeError::Unsupported(_))
        ));
        let mut damaged = fde();
        damaged[30] ^= 1;
        assert!(decode_events(&damaged, false).is_err());
        // The in-use flag (header flags at byte 17) is not covered by the checksum.
        let mut in_use = fde();
        in_use[17] |= 1;
        assert!(decode_events(&in_use, false).is_ok());
    }

    #[test]
    fn check_columns_names_the_first_mismatch() {
        let cols = reference_columns();
        let mut map_buf = Vec::new();
        events::table_map(&mut map_buf, 0, 1, 1, "d", "t", &cols).unwrap();
        let got = decode_events(&map_buf, true).unwrap();
        let Event::TableMap(map) = &got[0] else {
            panic!()
        };
        check_columns(map, &cols).unwrap();
        assert!(matches!(
            check_columns(map, &cols[1..]),
            Err(DecodeError::ColumnCount {
                event: 44,
                table: 43
            })
        ));
        use ColumnType::*;
        let fits: &[(usize, ColumnType)] = &[
            (
                1,
                Int {
                    bytes: 1,
                    unsigned: true,
                },
            ), // signedness unknown
            (
                13,
                Decimal {
                    precision: 12,
                    scale: 4,
                    unsigned: false,
                },
            ),
            (16, Char(20)),
            (16, Binary(40)),
            (18, VarChar(30)),
            (20, Text(LobSize::Regular)),
            (24, Text(LobSize::Tiny)),
            (32, DateTime(6)),
            (33, Timestamp(6)),
            (39, Time(6)),
            (36, Bit(64)),
            (41, Enum(vec!["a".into(); 300])),
        ];
        for (i, ty) in fits {
            let mut other = cols.clone();
            other[*i].ty = ty.clone();
            check_columns(map, &other).unwrap_or_else(|e| panic!("{ty:?}: {e}"));
        }
        let mismatches: &[(usize, ColumnType)] = &[
            (
                1,
                Int {
                    bytes: 2,
                    unsigned: false,
                },
            ),
            (11, Double),
            (12, Float),
            (
                13,
                Decimal {
                    precision: 10,
                    scale: 2,
                    unsigned: false,
                },
            ),
            (
                13,
                Decimal {
                    precision: 9,
                    scale: 3,
                    unsigned: false,
                },
            ),
            (16, Char(9)),
            (16, VarChar(10)),
            (18, VarChar(19)),
            (18, Char(20)),
            (21, Text(LobSize::Tiny)),
            (25, Text(LobSize::Tiny)),
            (29, Binary(3)),
            (30, DateTime(0)),
            (32, DateTime(5)),
            (33, DateTime(3)),
            (36, Bit(12)),
            (39, Time(2)),
            (40, Enum(vec!["a".into()])),
            (41, Set(vec!["a".into()])),
            (42, Blob(LobSize::Medium)),
        ];
        for (i, ty) in mismatches {
            let mut other = cols.clone();
            other[*i].ty = ty.clone();
            match check_columns(map, &other) {
                Err(DecodeError::ColumnMismatch { index, column, .. }) => {
                    assert_eq!((index, column.as_str()), (*i, cols[*i].name.as_str()));
                }
                other => panic!("{ty:?} at {i}: {other:?}"),
            }
        }
    }

    #[test]
    fn to_value_refuses_values_that_do_not_fit() {
        use ColumnType::*;
        use RawValue as R;
        let dt = |y, m, d, h, mi, s, micro| R::DateTime {
            y,
            m,
            d,
            h,
            mi,
            s,
            micro,
        };
        let t = |neg, h, m, s, micro| R::Time {
            neg,
            h,
            m,
            s,
            micro,
        };
        let dec = |p, s, unsigned| Decimal {
            precision: p,
            scale: s,
            unsigned,
        };
        let bad: Vec<(R, ColumnType)> = vec![
            (
                R::Int(128),
                Int {
                    bytes: 1,
                    unsigned: false,
                },
            ),
            (
                R::Int(-129),
                Int {
                    bytes: 1,
                    unsigned: true,
                },
            ),
            (
                R::UInt(256),
                Int {
                    bytes: 1,
                    unsigned: true,
                },
            ),
            (
                R::UInt(u64::MAX),
                Int {
                    bytes: 8,
                    unsigned: false,
                },
            ),
            (R::Int(1), Double),
            (R::Float(1.0), Double),
            (R::Double(1.0), Float),
            (R::Float(f32::NAN), Float),
            (R::Double(f64::INFINITY), Double),
            (R::Decimal("123.45".into()), dec(4, 2, false)),
            (R::Decimal("1.235".into()), dec(5, 2, false)),
            (R::Decimal("-1.2".into()), dec(5, 2, true)),
            (R::Decimal("1e3".into()), dec(5, 2, false)),
            (R::Decimal("".into()), dec(5, 2, false)),
            (R::Decimal(".5".into()), dec(5, 2, false)),
            (R::Bytes(b"abc".to_vec()), Char(2)),
            (R::Bytes(vec![0xff]), Char(2)),
            (R::Bytes(vec![0xc3]), VarChar(2)),
            (R::Bytes(vec![0xff]), Text(LobSize::Tiny)),
            (R::Bytes(vec![b'a'; 256]), Text(LobSize::Tiny)),
            (R::Bytes(vec![b'a'; 256]), Blob(LobSize::Tiny)),
            (R::Bytes(vec![1, 2, 3]), Binary(2)),
            (R::Bytes(vec![1, 2, 3]), VarBinary(2)),
            (
                R::Bytes(b"1".to_vec()),
                Int {
                    bytes: 4,
                    unsigned: false,
                },
            ),
            (
                R::Date {
                    y: 2023,
                    m: 2,
                    d: 29,
                },
                Date,
            ),
            (
                R::Date {
                    y: 2024,
                    m: 0,
                    d: 1,
                },
                Date,
            ),
            (
                R::Date {
                    y: 2024,
                    m: 1,
                    d: 0,
                },
                Date,
            ),
            (
                R::Date {
                    y: 2024,
                    m: 13,
                    d: 1,
                },
                Date,
            ),
            (
                R::Date {
                    y: 10000,
                    m: 1,
                    d: 1,
                },
                Date,
            ),
            (dt(2024, 1, 1, 24, 0, 0, 0), DateTime(0)),
            (dt(2024, 1, 1, 0, 60, 0, 0), DateTime(0)),
            (dt(2024, 1, 1, 0, 0, 0, 500_000), DateTime(0)),
            (dt(2024, 1, 1, 0, 0, 0, 5), DateTime(5)),
            (dt(2024, 1, 1, 0, 0, 0, 1_000_000), DateTime(6)),
            (dt(2024, 4, 31, 0, 0, 0, 0), DateTime(6)),
            (
                R::Date {
                    y: 2024,
                    m: 1,
                    d: 1,
                },
                DateTime(0),
            ),
            (R::Timestamp { secs: 0, micro: 5 }, Timestamp(6)),
            (
                R::Timestamp {
                    secs: 1 << 31,
                    micro: 0,
                },
                Timestamp(0),
            ),
            (
                R::Timestamp {
                    secs: 1,
                    micro: 100,
                },
                Timestamp(3),
            ),
            (t(false, 839, 0, 0, 0), Time(0)),
            (t(true, 0, 60, 0, 0), Time(0)),
            (t(true, 0, 0, 0, 1), Time(5)),
            (R::Year(1900), Year),
            (R::Year(2156), Year),
            (R::Bit(8), Bit(3)),
            (
                R::Bit(1),
                Int {
                    bytes: 1,
                    unsigned: false,
                },
            ),
            (R::Enum(4), Enum(vec!["a".into(), "b".into(), "c".into()])),
            (
                R::Set(0b1000),
                Set(vec!["a".into(), "b".into(), "c".into()]),
            ),
            (R::Bytes(b"a".to_vec()), Enum(vec!["a".into()])),
            (R::Enum(1), Set(vec!["a".into()])),
        ];
        for (raw, ty) in bad {
            let r = to_value(&raw, &ty);
            assert!(
                matches!(r, Err(DecodeError::BadValue { .. })),
                "{raw:?} into {ty:?} gave {r:?}"
            );
        }
        let good: Vec<(R, ColumnType, Value)> = vec![
            (
                R::Null,
                Int {
                    bytes: 1,
                    unsigned: false,
                },
                Value::Null,
            ),
            (
                R::Int(-1),
                Int {
                    bytes: 8,
                    unsigned: true,
                },
                Value::UInt(u64::MAX),
            ),
            (
                R::Int(-128),
                Int {
                    bytes: 1,
                    unsigned: true,
                },
                Value::Int(128),
            ),
            (R::Decimal("1.5".into()), dec(6, 3, false), text("1.500")),
            (R::Decimal("-0.00".into()), dec(6, 3, true), text("0.000")),
            (R::Decimal("0012.000".into()), dec(4, 0, false), text("12")),
            (R::Bytes(b"ab  ".to_vec()), Char(2), text("ab")),
            (R::Bytes(vec![7]), Binary(3), Value::Bytes(vec![7, 0, 0])),
            (
                R::Timestamp { secs: 0, micro: 0 },
                Timestamp(2),
                text("0000-00-00 00:00:00.00"),
            ),
            (
                R::Timestamp {
                    secs: 951_782_400,
                    micro: 120_000,
                },
                Timestamp(2),
                text("2000-02-29 00:00:00.12"),
            ),
            (
                dt(2024, 1, 1, 0, 0, 0, 500_000),
                DateTime(3),
                text("2024-01-01 00:00:00.500"),
            ),
            (t(true, 0, 0, 0, 0), Time(0), text("00:00:00")),
            (
                t(true, 838, 59, 59, 999_999),
                Time(6),
                text("-838:59:59.999999"),
            ),
            (t(false, 100, 0, 0, 0), Time(0), text("100:00:00")),
            (R::Enum(0), Enum(vec!["a".into()]), text("")),
            (
                R::Set(0b101),
                Set(vec!["a".into(), "b".into(), "c".into()]),
                text("a,c"),
            ),
            (R::Bit(u64::MAX), Bit(64), Value::UInt(u64::MAX)),
            (R::Year(0), Year, Value::Int(0)),
        ];
        for (raw, ty, want) in good {
            assert_eq!(to_value(&raw, &ty).unwrap(), want, "{raw:?} into {ty:?}");
        }
    }

    /// neg, hours, minutes, seconds, microseconds.
    type TimeParts = (bool, u32, u8, u8, u32);

    #[test]
    fn time2_fraction_layouts() {
        // Bytes from the encoder tests (checked against mariadbd), decoded back.
        let cases: &[(u8, &str, TimeParts)] = &[
            (1, "7ffffe ce", (true, 0, 0, 1, 500_000)),
            (2, "80c000 19", (false, 12, 0, 0, 250_000)),
            (4, "79bfff ffff", (true, 100, 0, 0, 100)),
            (5, "4b9105f0bdca", (true, 838, 59, 58, 999_990)),
            (6, "7fffffffffff", (true, 0, 0, 0, 1)),
            (6, "b46efb000000", (false, 838, 59, 59, 0)),
            (0, "4b9105", (true, 838, 59, 59, 0)),
            (3, "7fffff fff6", (true, 0, 0, 0, 1000)),
            (3, "801083 11d0", (false, 1, 2, 3, 456_000)),
        ];
        for &(fsp, h, (neg, hh, m, s, micro)) in cases {
            let bytes = hex(h);
            let mut r = Reader::new(&bytes);
            let got = read_value(&mut r, Kind::Time { fsp }).ok().unwrap();
            assert!(r.is_empty());
            assert_eq!(
                got,
                RawValue::Time {
                    neg,
                    h: hh,
                    m,
                    s,
                    micro
                },
                "{h}"
            );
        }
        // A fraction of a second or more is malformed, not a value.
        let bytes = hex("800000 64");
        assert!(read_value(&mut Reader::new(&bytes), Kind::Time { fsp: 2 }).is_err());
        let bytes = hex("80000000 0f4240");
        assert!(read_value(&mut Reader::new(&bytes), Kind::Timestamp { fsp: 6 }).is_err());
        // DECIMAL groups above their digit count.
        let bytes = hex("80 3b9aca00");
        assert!(read_decimal(&mut Reader::new(&bytes), 10, 0).is_err());
        assert_eq!(
            read_decimal(&mut Reader::new(&hex("81 3b9ac9ff")), 10, 0)
                .ok()
                .unwrap(),
            "1999999999"
        );
    }
}
