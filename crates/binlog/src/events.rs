//! Whole binlog events: the 19-byte v4 header, each event's body, and the CRC32 trailer.
//!
//! This module owns the byte layout of every non-row event tierdb writes (Format_description,
//! Gtid_list, Binlog_checkpoint, Gtid, Query, Table_map, Xid, Rotate, Stop), the finishing of
//! an event (size and checksum), the after-the-fact patching of `log_pos` and GTID sequence
//! numbers, and a scanner that finds the complete, checksum-valid events at the start of a
//! buffer.
//!
//! Layouts follow MariaDB 10.11 with `binlog_checksum=CRC32`, `mysql56_temporal_format=ON` and
//! `binlog_row_metadata=NO_LOG`; each was checked against a binlog written by `mariadbd`
//! 10.11.19 (the unit tests hold such bytes). Rules:
//! - never panic on any input (bad values, wrong buffers, random bytes): return a
//!   [`FormatError`] or stop scanning;
//! - never write a byte MariaDB would not read: a builder that gets input it cannot encode
//!   exactly returns an error and leaves `out` as it was.
//!
//! Event layout (all integers little-endian):
//!
//! | bytes | field                                                    |
//! |-------|----------------------------------------------------------|
//! | 4     | timestamp (unix seconds)                                 |
//! | 1     | type code                                                |
//! | 4     | server id                                                |
//! | 4     | event size, header + body + checksum                     |
//! | 4     | log_pos: file offset of the end of this event            |
//! | 2     | flags                                                    |
//! | n     | body (post-header, then payload)                         |
//! | 4     | CRC32 (zlib) of header and body                          |
//!
//! Builders write `log_pos = 0`; the caller fixes positions once it knows where the bytes go
//! (first [`set_gtid_seq`], then [`set_positions`], which also redoes the checksums).

use tierdb_engine::{ColumnDef, ColumnType};

/// The four bytes every binlog file starts with.
pub const MAGIC: [u8; 4] = [0xfe, b'b', b'i', b'n'];
/// Length of the common v4 event header.
pub const HEADER_LEN: usize = 19;
/// Length of the CRC32 trailer of every event.
pub const CHECKSUM_LEN: usize = 4;
/// The smallest valid event: a header and a checksum.
pub const MIN_EVENT_LEN: usize = HEADER_LEN + CHECKSUM_LEN;

/// A statement (DDL, or `BEGIN`/`COMMIT` of non-transactional engines).
pub const QUERY_EVENT: u8 = 2;
/// The server stopped; last event of a file.
pub const STOP_EVENT: u8 = 3;
/// Names the next binlog file; last event of a file.
pub const ROTATE_EVENT: u8 = 4;
/// First event of every file: versions, header lengths, checksum algorithm.
pub const FORMAT_DESCRIPTION_EVENT: u8 = 15;
/// Commit of a transaction of a transactional engine.
pub const XID_EVENT: u8 = 16;
/// Maps a table id to a table name and its column types (precedes rows events).
pub const TABLE_MAP_EVENT: u8 = 19;
/// Inserted rows (v1 layout, as MariaDB writes it).
pub const WRITE_ROWS_EVENT_V1: u8 = 23;
/// Updated rows, before and after images (v1 layout).
pub const UPDATE_ROWS_EVENT_V1: u8 = 24;
/// Deleted rows (v1 layout).
pub const DELETE_ROWS_EVENT_V1: u8 = 25;
/// The original statement of the following rows events (`binlog_annotate_row_events`).
pub const ANNOTATE_ROWS_EVENT: u8 = 160;
/// Names the oldest binlog file crash recovery still needs.
pub const BINLOG_CHECKPOINT_EVENT: u8 = 161;
/// MariaDB GTID: starts every event group (transaction or DDL).
pub const GTID_EVENT: u8 = 162;
/// The GTID state at the start of a file, one entry per (domain, server).
pub const GTID_LIST_EVENT: u8 = 163;

/// Header flag: the file is being written (only ever set on a Format_description event;
/// excluded from its checksum).
pub const LOG_EVENT_BINLOG_IN_USE_F: u16 = 0x1;
/// Header flag MariaDB sets on GTID events: the event does not depend on a current database.
pub const LOG_EVENT_SUPPRESS_USE_F: u16 = 0x8;

/// GTID event flag: the group is a single statement without BEGIN/COMMIT (DDL).
pub const FL_STANDALONE: u8 = 1;
/// GTID event flag: a commit id for parallel replication follows (never written here).
pub const FL_GROUP_COMMIT_ID: u8 = 2;
/// GTID event flag: the group changes only transactional tables (can be rolled back).
pub const FL_TRANSACTIONAL: u8 = 4;
/// GTID event flag: a replica may apply the group in parallel with others.
pub const FL_ALLOW_PARALLEL: u8 = 8;
/// GTID event flag: the group waited for a row lock on the primary.
pub const FL_WAITED: u8 = 16;
/// GTID event flag: the group is DDL.
pub const FL_DDL: u8 = 32;

/// Query event `flags2` bit: `sql_auto_is_null=1`.
pub const OPTION_AUTO_IS_NULL: u32 = 1 << 14;
/// Query event `flags2` bit: `explicit_defaults_for_timestamp=1` (MariaDB 10.11's default).
pub const OPTION_EXPLICIT_DEF_TIMESTAMP: u32 = 1 << 24;
/// Query event `flags2` bit: `foreign_key_checks=0`.
pub const OPTION_NO_FOREIGN_KEY_CHECKS: u32 = 1 << 26;
/// Query event `flags2` bit: `unique_checks=0`.
pub const OPTION_RELAXED_UNIQUE_CHECKS: u32 = 1 << 27;

/// Checksum algorithm byte of the Format_description event: CRC32.
pub const CHECKSUM_ALG_CRC32: u8 = 1;

/// Binlog format version of every file MariaDB 5.0 and later writes.
pub const BINLOG_VERSION: u16 = 4;
/// Width of the server version field of a Format_description event (NUL padded; the last
/// byte is always NUL for readers).
pub const SERVER_VERSION_LEN: usize = 50;

/// Post-header length of each event type MariaDB 10.11 knows, indexed by type code - 1
/// (171 types: 1..=39 from MySQL, 40..=159 unused, 160..=171 MariaDB's own). Readers use it
/// to find each event's payload, so it must be byte for byte what `mariadbd` writes.
const POST_HEADER_LENS: [u8; 171] = post_header_lens();

const fn post_header_lens() -> [u8; 171] {
    let mut a = [0u8; 171];
    // START_EVENT_V3 (1): binlog version, server version, created.
    a[0] = 2 + SERVER_VERSION_LEN as u8 + 4;
    a[QUERY_EVENT as usize - 1] = 13;
    a[ROTATE_EVENT as usize - 1] = 8;
    a[6 - 1] = 18; // LOAD_EVENT
    a[8 - 1] = 4; // CREATE_FILE_EVENT
    a[9 - 1] = 4; // APPEND_BLOCK_EVENT
    a[10 - 1] = 4; // EXEC_LOAD_EVENT
    a[11 - 1] = 4; // DELETE_FILE_EVENT
    a[12 - 1] = 18; // NEW_LOAD_EVENT
    a[FORMAT_DESCRIPTION_EVENT as usize - 1] = FDE_POST_HEADER_LEN as u8;
    a[17 - 1] = 4; // BEGIN_LOAD_QUERY_EVENT
    a[18 - 1] = 26; // EXECUTE_LOAD_QUERY_EVENT
    a[TABLE_MAP_EVENT as usize - 1] = 8;
    a[WRITE_ROWS_EVENT_V1 as usize - 1] = 8;
    a[UPDATE_ROWS_EVENT_V1 as usize - 1] = 8;
    a[DELETE_ROWS_EVENT_V1 as usize - 1] = 8;
    a[26 - 1] = 2; // INCIDENT_EVENT
    a[30 - 1] = 10; // WRITE_ROWS_EVENT (v2)
    a[31 - 1] = 10; // UPDATE_ROWS_EVENT (v2)
    a[32 - 1] = 10; // DELETE_ROWS_EVENT (v2)
                    // 39..=41: types MariaDB reserves for later MySQL row events; mariadbd 10.11 writes 10.
    a[39 - 1] = 10;
    a[40 - 1] = 10;
    a[41 - 1] = 10;
    a[BINLOG_CHECKPOINT_EVENT as usize - 1] = 4;
    a[GTID_EVENT as usize - 1] = 19;
    a[GTID_LIST_EVENT as usize - 1] = 4;
    a[165 - 1] = 13; // QUERY_COMPRESSED_EVENT
    a[166 - 1] = 8; // WRITE_ROWS_COMPRESSED_EVENT_V1
    a[167 - 1] = 8; // UPDATE_ROWS_COMPRESSED_EVENT_V1
    a[168 - 1] = 8; // DELETE_ROWS_COMPRESSED_EVENT_V1
    a[169 - 1] = 10; // WRITE_ROWS_COMPRESSED_EVENT
    a[170 - 1] = 10; // UPDATE_ROWS_COMPRESSED_EVENT
    a[171 - 1] = 10; // DELETE_ROWS_COMPRESSED_EVENT
    a
}

/// Format_description post-header: binlog version, server version, created, header length,
/// the post-header length array.
const FDE_POST_HEADER_LEN: usize = 2 + SERVER_VERSION_LEN + 4 + 1 + 171;
const _: () = assert!(FDE_POST_HEADER_LEN == 228);
/// Post-header of a GTID event: seq_no, domain, flags, zero padding.
const GTID_POST_HEADER_LEN: usize = 19;

// Header field offsets.
const TYPE_OFFSET: usize = 4;
const SERVER_ID_OFFSET: usize = 5;
const EVENT_LEN_OFFSET: usize = 9;
const LOG_POS_OFFSET: usize = 13;
const FLAGS_OFFSET: usize = 17;
const _: () = assert!(FLAGS_OFFSET + 2 == HEADER_LEN);

/// Input the encoder cannot turn into bytes MariaDB reads, or a buffer that is not a run of
/// whole events.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A name, string or event is longer than its length field allows.
    #[error("{what} is {len} bytes long, at most {max} fit the binlog format")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
    },
    /// A buffer ends inside an event.
    #[error("event at offset {offset} is cut off: {needed} bytes needed, {available} present")]
    Truncated {
        offset: usize,
        needed: usize,
        available: usize,
    },
    /// An event's size field is below the 23-byte minimum.
    #[error("event at offset {offset} has size {size}, below the minimum of {MIN_EVENT_LEN}")]
    BadEventSize { offset: usize, size: u32 },
    /// An event would end past the 4 GiB that `log_pos` can address.
    #[error("binlog position {pos} does not fit the 32-bit log_pos field")]
    PositionOverflow { pos: u64 },
    /// The event is not of the type the operation needs.
    #[error("expected a {expected} event, found type code {found}")]
    WrongEventType { expected: &'static str, found: u8 },
    /// The server version string cannot head a binlog MariaDB reads with checksums.
    #[error("server version {0:?} must start with `major.minor.patch` of 5.6.1 or later")]
    BadServerVersion(String),
    /// A table id above the 48 bits Table_map and rows events hold.
    #[error("table id {0} does not fit 48 bits")]
    BadTableId(u64),
    /// A column whose type or size has no MariaDB binlog encoding.
    #[error("column `{column}`: {reason}")]
    BadColumn { column: String, reason: String },
    /// A value that does not fit its column's type.
    #[error("column `{column}` ({ty}): cannot encode {value}: {reason}")]
    BadValue {
        column: String,
        ty: String,
        value: String,
        reason: String,
    },
    /// A row with fewer values than the table has columns, or a missing before/after image.
    #[error("row {row}: {reason}")]
    BadRow { row: usize, reason: String },
}

fn too_long(what: &'static str, len: usize, max: usize) -> FormatError {
    FormatError::TooLong { what, len, max }
}

/// Starts an event in `out`: writes its header with size and log_pos 0 and returns the
/// event's start offset for [`finish_event`].
pub(crate) fn begin_event(
    out: &mut Vec<u8>,
    ts: u32,
    type_code: u8,
    server_id: u32,
    flags: u16,
) -> usize {
    let start = out.len();
    out.extend_from_slice(&ts.to_le_bytes());
    out.push(type_code);
    out.extend_from_slice(&server_id.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes()); // event size, set by finish_event
    out.extend_from_slice(&0u32.to_le_bytes()); // log_pos, set by set_positions
    out.extend_from_slice(&flags.to_le_bytes());
    start
}

/// Ends the event begun at `start`: sets its size and appends its checksum. Fails (and
/// removes the event from `out`) when the event is larger than the 32-bit size field.
pub(crate) fn finish_event(out: &mut Vec<u8>, start: usize) -> Result<(), FormatError> {
    let len = out.len() - start + CHECKSUM_LEN;
    let Ok(size) = u32::try_from(len) else {
        out.truncate(start);
        return Err(too_long("event", len, u32::MAX as usize));
    };
    out[start + EVENT_LEN_OFFSET..start + EVENT_LEN_OFFSET + 4]
        .copy_from_slice(&size.to_le_bytes());
    let crc = event_crc(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// Recomputes the checksum of one whole event after its header was changed in place.
pub fn reseal(event: &mut [u8]) {
    let n = event.len() - CHECKSUM_LEN;
    let crc = event_crc(&event[..n]);
    event[n..].copy_from_slice(&crc.to_le_bytes());
}

/// A GTID event's group is standalone (a DDL statement's: no XID ends it). False for any
/// other event.
pub fn gtid_is_standalone(event: &[u8]) -> bool {
    event.get(TYPE_OFFSET) == Some(&GTID_EVENT)
        && event
            .get(HEADER_LEN + 12)
            .is_some_and(|f| f & FL_STANDALONE != 0)
}

/// For the events whose size can never overflow (small fixed bodies and names checked
/// before).
fn finish_small(out: &mut Vec<u8>, start: usize) {
    let done = finish_event(out, start);
    debug_assert!(done.is_ok(), "small event overflowed: {done:?}");
}

/// CRC32 of an event's header and body (`bytes` without the trailer). The in-use flag of a
/// Format_description event is excluded, as MariaDB clears it in place when it closes a file.
pub(crate) fn event_crc(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    if bytes.len() >= HEADER_LEN && bytes[TYPE_OFFSET] == FORMAT_DESCRIPTION_EVENT {
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&bytes[..HEADER_LEN]);
        header[FLAGS_OFFSET] &= !(LOG_EVENT_BINLOG_IN_USE_F as u8);
        h.update(&header);
        h.update(&bytes[HEADER_LEN..]);
    } else {
        h.update(bytes);
    }
    h.finalize()
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Appends MySQL's length-encoded integer (`net_store_length`).
pub(crate) fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    if n < 251 {
        out.push(n as u8);
    } else if n < 1 << 16 {
        out.push(0xfc);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        out.push(0xfd);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Bytes [`put_lenenc`] writes for `n`.
pub(crate) fn lenenc_len(n: u64) -> usize {
    match n {
        0..=250 => 1,
        251..=0xffff => 3,
        0x1_0000..=0xff_ffff => 4,
        _ => 9,
    }
}

/// Appends the 6-byte table id of Table_map and rows events.
pub(crate) fn put_table_id(out: &mut Vec<u8>, table_id: u64) -> Result<(), FormatError> {
    if table_id >= 1 << 48 {
        return Err(FormatError::BadTableId(table_id));
    }
    out.extend_from_slice(&table_id.to_le_bytes()[..6]);
    Ok(())
}

/// Appends the Format_description event MariaDB 10.11 writes at the start of a file created
/// at server start-up: binlog version 4, `server_version`, `ts` as the create time, the header
/// and post-header lengths, and CRC32 as the checksum algorithm.
///
/// `server_version` decides how readers parse the file: it must start with a version of
/// 5.6.1 or later (checksum-aware; MariaDB's own readers also accept 5.3+ when it contains
/// `MariaDB`), e.g. `10.11.0-MariaDB-tierdb`, and be at most 49 bytes.
///
/// A non-zero create time tells readers the server started with this file (a replica then
/// drops its temporary tables); use [`format_description_with_created`] with 0 for files
/// opened by a rotation.
pub fn format_description(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    server_version: &str,
) -> Result<(), FormatError> {
    format_description_with_created(out, ts, server_id, server_version, ts)
}

/// [`format_description`] with an explicit create time (0 for a file opened by a rotation,
/// as MariaDB writes it).
pub fn format_description_with_created(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    server_version: &str,
    created: u32,
) -> Result<(), FormatError> {
    let version = server_version.as_bytes();
    if version.len() > SERVER_VERSION_LEN - 1 {
        return Err(too_long(
            "server version",
            version.len(),
            SERVER_VERSION_LEN - 1,
        ));
    }
    if !version_is_checksum_aware(server_version) {
        return Err(FormatError::BadServerVersion(server_version.to_owned()));
    }
    let start = begin_event(out, ts, FORMAT_DESCRIPTION_EVENT, server_id, 0);
    out.extend_from_slice(&BINLOG_VERSION.to_le_bytes());
    out.extend_from_slice(version);
    out.resize(out.len() + SERVER_VERSION_LEN - version.len(), 0);
    out.extend_from_slice(&created.to_le_bytes());
    out.push(HEADER_LEN as u8);
    out.extend_from_slice(&POST_HEADER_LENS);
    out.push(CHECKSUM_ALG_CRC32);
    debug_assert_eq!(out.len() - start, HEADER_LEN + FDE_POST_HEADER_LEN + 1);
    finish_small(out, start);
    Ok(())
}

/// True when readers take `v` for a server whose Format_description carries a checksum
/// algorithm: MySQL 5.6.1+, or MariaDB 5.3+.
fn version_is_checksum_aware(v: &str) -> bool {
    let mut parts = [0u32; 3];
    let mut rest = v;
    for (i, part) in parts.iter_mut().enumerate() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            return false;
        }
        *part = rest[..digits].parse().unwrap_or(0);
        rest = &rest[digits..];
        if i < 2 {
            match rest.strip_prefix('.') {
                Some(r) => rest = r,
                None => return false,
            }
        }
    }
    let at_least = |min: [u32; 3]| parts >= min;
    if v.contains("MariaDB") || v.contains("-maria-") {
        at_least([5, 3, 0])
    } else {
        at_least([5, 6, 1])
    }
}

/// Appends a Gtid_list event: the GTID state at the start of the file, as
/// `(domain, server_id, seq_no)` entries (MariaDB writes them sorted by domain).
pub fn gtid_list(out: &mut Vec<u8>, ts: u32, server_id: u32, list: &[(u32, u32, u64)]) {
    let start = begin_event(out, ts, GTID_LIST_EVENT, server_id, 0);
    // The count shares its u32 with 4 flag bits; 2^28 domains cannot exist.
    let count = list.len().min(0x0fff_ffff);
    out.extend_from_slice(&(count as u32).to_le_bytes());
    if list.is_empty() {
        // MariaDB pads an empty list with two zero bytes.
        out.extend_from_slice(&[0, 0]);
    }
    for &(domain, server, seq) in &list[..count] {
        out.extend_from_slice(&domain.to_le_bytes());
        out.extend_from_slice(&server.to_le_bytes());
        out.extend_from_slice(&seq.to_le_bytes());
    }
    finish_small(out, start);
}

/// Appends a Binlog_checkpoint event naming `file_name` (a base name, e.g. `bin.000001`): the
/// oldest file crash recovery still needs.
pub fn binlog_checkpoint(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    file_name: &str,
) -> Result<(), FormatError> {
    check_file_name(file_name)?;
    let start = begin_event(out, ts, BINLOG_CHECKPOINT_EVENT, server_id, 0);
    out.extend_from_slice(&(file_name.len() as u32).to_le_bytes());
    out.extend_from_slice(file_name.as_bytes());
    finish_small(out, start);
    Ok(())
}

/// Longest binlog file name MariaDB's readers accept (FN_REFLEN - 1).
const MAX_FILE_NAME_LEN: usize = 511;

fn check_file_name(name: &str) -> Result<(), FormatError> {
    if name.len() > MAX_FILE_NAME_LEN {
        return Err(too_long("binlog file name", name.len(), MAX_FILE_NAME_LEN));
    }
    Ok(())
}

/// Appends a MariaDB GTID event `domain-server_id-seq`, which starts an event group.
///
/// `standalone = false`: a transaction of transactional tables, closed by an Xid event
/// (flags `FL_TRANSACTIONAL | FL_ALLOW_PARALLEL`, as MariaDB 10.11 writes for InnoDB).
/// `standalone = true`: a DDL statement that is its own group, a Query event and nothing
/// else (flags `FL_STANDALONE | FL_ALLOW_PARALLEL | FL_DDL`).
pub fn gtid(out: &mut Vec<u8>, ts: u32, server_id: u32, seq: u64, domain: u32, standalone: bool) {
    let flags2 = if standalone {
        FL_STANDALONE | FL_ALLOW_PARALLEL | FL_DDL
    } else {
        FL_TRANSACTIONAL | FL_ALLOW_PARALLEL
    };
    let start = begin_event(out, ts, GTID_EVENT, server_id, LOG_EVENT_SUPPRESS_USE_F);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&domain.to_le_bytes());
    out.push(flags2);
    out.resize(start + HEADER_LEN + GTID_POST_HEADER_LEN, 0);
    finish_small(out, start);
}

/// The statement of a Query event and the session state MariaDB records with it.
#[derive(Clone, Debug)]
pub struct QueryEvent<'a> {
    /// Connection id of the session that ran the statement.
    pub thread_id: u32,
    /// Seconds the statement took.
    pub exec_time: u32,
    /// Error code the statement ended with (0).
    pub error_code: u16,
    /// Current database of the session ("" for none); at most 255 bytes.
    pub db: &'a str,
    /// The statement text.
    pub sql: &'a [u8],
    /// `@@sql_mode` bits.
    pub sql_mode: u64,
    /// `@@auto_increment_increment` (written only when it or the offset is not 1).
    pub auto_increment_increment: u16,
    /// `@@auto_increment_offset`.
    pub auto_increment_offset: u16,
    /// Collation id of `@@character_set_client`.
    pub charset_client: u16,
    /// Collation id of `@@collation_connection`.
    pub collation_connection: u16,
    /// Collation id of `@@collation_server`.
    pub collation_server: u16,
    /// `@@time_zone` when the statement used it (e.g. `+00:00`, `SYSTEM`); at most 255 bytes.
    pub time_zone: Option<&'a str>,
    /// Session option bits (`OPTION_*` constants of this module).
    pub flags2: u32,
}

// Query event status variable codes.
const Q_FLAGS2_CODE: u8 = 0;
const Q_SQL_MODE_CODE: u8 = 1;
const Q_AUTO_INCREMENT: u8 = 3;
const Q_CHARSET_CODE: u8 = 4;
const Q_TIME_ZONE_CODE: u8 = 5;
const Q_CATALOG_NZ_CODE: u8 = 6;
const CATALOG: &[u8] = b"std";

/// Appends a Query event: the statement, its database, and the status variables MariaDB
/// 10.11 writes, in its order: flags2, sql_mode, catalog `std`, auto-increment (when not
/// 1/1), character sets, time zone (when given).
pub fn query(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    q: &QueryEvent<'_>,
) -> Result<(), FormatError> {
    if q.db.len() > 255 {
        return Err(too_long("database name", q.db.len(), 255));
    }
    if let Some(tz) = q.time_zone {
        if tz.len() > 255 {
            return Err(too_long("time zone name", tz.len(), 255));
        }
    }
    let start = begin_event(out, ts, QUERY_EVENT, server_id, 0);
    out.extend_from_slice(&q.thread_id.to_le_bytes());
    out.extend_from_slice(&q.exec_time.to_le_bytes());
    out.push(q.db.len() as u8);
    out.extend_from_slice(&q.error_code.to_le_bytes());
    let status_len_at = out.len();
    out.extend_from_slice(&[0, 0]);
    let status_start = out.len();
    out.push(Q_FLAGS2_CODE);
    out.extend_from_slice(&q.flags2.to_le_bytes());
    out.push(Q_SQL_MODE_CODE);
    out.extend_from_slice(&q.sql_mode.to_le_bytes());
    out.push(Q_CATALOG_NZ_CODE);
    out.push(CATALOG.len() as u8);
    out.extend_from_slice(CATALOG);
    if q.auto_increment_increment != 1 || q.auto_increment_offset != 1 {
        out.push(Q_AUTO_INCREMENT);
        out.extend_from_slice(&q.auto_increment_increment.to_le_bytes());
        out.extend_from_slice(&q.auto_increment_offset.to_le_bytes());
    }
    out.push(Q_CHARSET_CODE);
    out.extend_from_slice(&q.charset_client.to_le_bytes());
    out.extend_from_slice(&q.collation_connection.to_le_bytes());
    out.extend_from_slice(&q.collation_server.to_le_bytes());
    if let Some(tz) = q.time_zone {
        out.push(Q_TIME_ZONE_CODE);
        out.push(tz.len() as u8);
        out.extend_from_slice(tz.as_bytes());
    }
    // At most 5 + 9 + 5 + 5 + 7 + 257 bytes: fits the u16.
    let status_len = (out.len() - status_start) as u16;
    out[status_len_at..status_len_at + 2].copy_from_slice(&status_len.to_le_bytes());
    out.extend_from_slice(q.db.as_bytes());
    out.push(0);
    out.extend_from_slice(q.sql);
    finish_event(out, start)
}

// MySQL column type codes as Table_map events carry them.
pub(crate) const MYSQL_TYPE_TINY: u8 = 1;
pub(crate) const MYSQL_TYPE_SHORT: u8 = 2;
pub(crate) const MYSQL_TYPE_LONG: u8 = 3;
pub(crate) const MYSQL_TYPE_FLOAT: u8 = 4;
pub(crate) const MYSQL_TYPE_DOUBLE: u8 = 5;
pub(crate) const MYSQL_TYPE_LONGLONG: u8 = 8;
pub(crate) const MYSQL_TYPE_INT24: u8 = 9;
pub(crate) const MYSQL_TYPE_DATE: u8 = 10;
pub(crate) const MYSQL_TYPE_YEAR: u8 = 13;
pub(crate) const MYSQL_TYPE_VARCHAR: u8 = 15;
pub(crate) const MYSQL_TYPE_BIT: u8 = 16;
pub(crate) const MYSQL_TYPE_TIMESTAMP2: u8 = 17;
pub(crate) const MYSQL_TYPE_DATETIME2: u8 = 18;
pub(crate) const MYSQL_TYPE_TIME2: u8 = 19;
pub(crate) const MYSQL_TYPE_NEWDECIMAL: u8 = 246;
pub(crate) const MYSQL_TYPE_ENUM: u8 = 247;
pub(crate) const MYSQL_TYPE_SET: u8 = 248;
pub(crate) const MYSQL_TYPE_BLOB: u8 = 252;
pub(crate) const MYSQL_TYPE_STRING: u8 = 254;

/// Bytes per character of every text column (utf8mb4).
pub(crate) const MAX_BYTES_PER_CHAR: u32 = 4;

/// How a column is described in a Table_map event: its binlog type code and metadata.
pub(crate) struct ColumnMeta {
    pub type_code: u8,
    pub meta: [u8; 2],
    pub meta_len: usize,
}

fn bad_column(col: &ColumnDef, reason: impl Into<String>) -> FormatError {
    FormatError::BadColumn {
        column: col.name.clone(),
        reason: reason.into(),
    }
}

/// Pack length of an ENUM with `members` members: 1 or 2 bytes.
pub(crate) fn enum_pack_len(members: usize) -> usize {
    if members < 256 {
        1
    } else {
        2
    }
}

/// Pack length of a SET with `members` members: 1, 2, 3, 4 or 8 bytes.
pub(crate) fn set_pack_len(members: usize) -> usize {
    match members.div_ceil(8) {
        n @ 0..=4 => n.max(1),
        _ => 8,
    }
}

/// Bytes of the length prefix of a TINY/-/MEDIUM/LONG BLOB or TEXT.
pub(crate) fn lob_pack_len(size: tierdb_engine::LobSize) -> usize {
    use tierdb_engine::LobSize;
    match size {
        LobSize::Tiny => 1,
        LobSize::Regular => 2,
        LobSize::Medium => 3,
        LobSize::Long => 4,
    }
}

/// The longest value of a CHAR/BINARY/VARCHAR/VARBINARY column, in bytes.
pub(crate) fn string_max_bytes(col: &ColumnDef) -> Result<u32, FormatError> {
    let (n, per_char) = match &col.ty {
        ColumnType::Char(n) | ColumnType::VarChar(n) => (*n, MAX_BYTES_PER_CHAR),
        ColumnType::Binary(n) | ColumnType::VarBinary(n) => (*n, 1),
        _ => {
            return Err(bad_column(
                col,
                "not a CHAR/VARCHAR/BINARY/VARBINARY column",
            ))
        }
    };
    let max = n
        .checked_mul(per_char)
        .ok_or_else(|| bad_column(col, "length overflows"))?;
    let limit = match col.ty {
        // The 10-bit length of MYSQL_TYPE_STRING's metadata.
        ColumnType::Char(_) | ColumnType::Binary(_) => 1023,
        _ => 65_535,
    };
    if max > limit {
        return Err(bad_column(
            col,
            format!("{max} bytes exceed the {limit} its binlog metadata can hold"),
        ));
    }
    Ok(max)
}

/// The Table_map description of `col`, as MariaDB 10.11 writes it for the same InnoDB column.
pub(crate) fn column_meta(col: &ColumnDef) -> Result<ColumnMeta, FormatError> {
    let none = |type_code| ColumnMeta {
        type_code,
        meta: [0, 0],
        meta_len: 0,
    };
    let one = |type_code, m| ColumnMeta {
        type_code,
        meta: [m, 0],
        meta_len: 1,
    };
    let two = |type_code, meta| ColumnMeta {
        type_code,
        meta,
        meta_len: 2,
    };
    let check_fsp = |fsp: u8| {
        if fsp > 6 {
            Err(bad_column(col, format!("fractional seconds {fsp} > 6")))
        } else {
            Ok(fsp)
        }
    };
    Ok(match &col.ty {
        ColumnType::Int { bytes, .. } => none(match bytes {
            1 => MYSQL_TYPE_TINY,
            2 => MYSQL_TYPE_SHORT,
            3 => MYSQL_TYPE_INT24,
            4 => MYSQL_TYPE_LONG,
            8 => MYSQL_TYPE_LONGLONG,
            _ => return Err(bad_column(col, format!("integer width {bytes}"))),
        }),
        ColumnType::Float => one(MYSQL_TYPE_FLOAT, 4),
        ColumnType::Double => one(MYSQL_TYPE_DOUBLE, 8),
        ColumnType::Decimal {
            precision, scale, ..
        } => {
            if *precision == 0 || *precision > 65 || scale > precision || *scale > 38 {
                return Err(bad_column(
                    col,
                    format!("DECIMAL({precision},{scale}) is out of range"),
                ));
            }
            two(MYSQL_TYPE_NEWDECIMAL, [*precision, *scale])
        }
        ColumnType::Char(_) | ColumnType::Binary(_) => {
            let max = string_max_bytes(col)?;
            // The real type's byte carries the length's two high bits, inverted.
            let hi = ((max & 0x300) >> 4) as u8;
            two(MYSQL_TYPE_STRING, [MYSQL_TYPE_STRING ^ hi, max as u8])
        }
        ColumnType::VarChar(_) | ColumnType::VarBinary(_) => {
            let max = string_max_bytes(col)? as u16;
            two(MYSQL_TYPE_VARCHAR, max.to_le_bytes())
        }
        ColumnType::Text(size) | ColumnType::Blob(size) => {
            one(MYSQL_TYPE_BLOB, lob_pack_len(*size) as u8)
        }
        ColumnType::Date => none(MYSQL_TYPE_DATE),
        ColumnType::DateTime(fsp) => one(MYSQL_TYPE_DATETIME2, check_fsp(*fsp)?),
        ColumnType::Timestamp(fsp) => one(MYSQL_TYPE_TIMESTAMP2, check_fsp(*fsp)?),
        ColumnType::Time(fsp) => one(MYSQL_TYPE_TIME2, check_fsp(*fsp)?),
        ColumnType::Year => none(MYSQL_TYPE_YEAR),
        ColumnType::Bit(n) => {
            if !(1..=64).contains(n) {
                return Err(bad_column(col, format!("BIT({n})")));
            }
            two(MYSQL_TYPE_BIT, [n % 8, n / 8])
        }
        ColumnType::Enum(members) => {
            if members.is_empty() || members.len() > 65_535 {
                return Err(bad_column(
                    col,
                    format!("ENUM of {} members", members.len()),
                ));
            }
            two(
                MYSQL_TYPE_STRING,
                [MYSQL_TYPE_ENUM, enum_pack_len(members.len()) as u8],
            )
        }
        ColumnType::Set(members) => {
            if members.is_empty() || members.len() > 64 {
                return Err(bad_column(col, format!("SET of {} members", members.len())));
            }
            two(
                MYSQL_TYPE_STRING,
                [MYSQL_TYPE_SET, set_pack_len(members.len()) as u8],
            )
        }
    })
}

/// Table flag MariaDB sets on every Table_map event (TM_BIT_LEN_EXACT_F).
const TM_BIT_LEN_EXACT_F: u16 = 1;

/// Appends a Table_map event binding `table_id` to `db`.`table` with the column types and
/// metadata MariaDB 10.11 writes for the equivalent InnoDB columns (no optional metadata, as
/// with `binlog_row_metadata=NO_LOG`). Fails for names over 255 bytes, a table id over 48
/// bits, or a column without a binlog encoding.
pub fn table_map(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    table_id: u64,
    db: &str,
    table: &str,
    cols: &[ColumnDef],
) -> Result<(), FormatError> {
    if db.len() > 255 {
        return Err(too_long("database name", db.len(), 255));
    }
    if table.len() > 255 {
        return Err(too_long("table name", table.len(), 255));
    }
    if table_id >= 1 << 48 {
        return Err(FormatError::BadTableId(table_id));
    }
    let metas = cols
        .iter()
        .map(column_meta)
        .collect::<Result<Vec<_>, _>>()?;
    let start = begin_event(out, ts, TABLE_MAP_EVENT, server_id, 0);
    put_table_id(out, table_id)?;
    out.extend_from_slice(&TM_BIT_LEN_EXACT_F.to_le_bytes());
    out.push(db.len() as u8);
    out.extend_from_slice(db.as_bytes());
    out.push(0);
    out.push(table.len() as u8);
    out.extend_from_slice(table.as_bytes());
    out.push(0);
    put_lenenc(out, cols.len() as u64);
    out.extend(metas.iter().map(|m| m.type_code));
    let meta_len: usize = metas.iter().map(|m| m.meta_len).sum();
    put_lenenc(out, meta_len as u64);
    for m in &metas {
        out.extend_from_slice(&m.meta[..m.meta_len]);
    }
    let mut nulls = vec![0u8; cols.len().div_ceil(8)];
    for (i, c) in cols.iter().enumerate() {
        if c.nullable {
            nulls[i / 8] |= 1 << (i % 8);
        }
    }
    out.extend_from_slice(&nulls);
    finish_event(out, start)
}

/// Appends an Xid event: the commit of the transaction with id `xid`.
pub fn xid(out: &mut Vec<u8>, ts: u32, server_id: u32, xid: u64) {
    let start = begin_event(out, ts, XID_EVENT, server_id, 0);
    out.extend_from_slice(&xid.to_le_bytes());
    finish_small(out, start);
}

/// Appends a Rotate event: the log continues in `next_file` (a base name) at `pos` (4 for
/// the start of the next file, just past its magic).
pub fn rotate(
    out: &mut Vec<u8>,
    ts: u32,
    server_id: u32,
    next_file: &str,
    pos: u64,
) -> Result<(), FormatError> {
    check_file_name(next_file)?;
    let start = begin_event(out, ts, ROTATE_EVENT, server_id, 0);
    out.extend_from_slice(&pos.to_le_bytes());
    out.extend_from_slice(next_file.as_bytes());
    finish_small(out, start);
    Ok(())
}

/// Appends a Stop event: the server shut down; nothing follows in this file.
pub fn stop(out: &mut Vec<u8>, ts: u32, server_id: u32) {
    let start = begin_event(out, ts, STOP_EVENT, server_id, 0);
    finish_small(out, start);
}

/// Size of the event starting at `offset` of `buf`, checked to be whole and at least the
/// minimum.
fn event_len_at(buf: &[u8], offset: usize) -> Result<usize, FormatError> {
    let available = buf.len() - offset;
    if available < HEADER_LEN {
        return Err(FormatError::Truncated {
            offset,
            needed: HEADER_LEN,
            available,
        });
    }
    let size = read_u32(buf, offset + EVENT_LEN_OFFSET).unwrap_or(0);
    if (size as usize) < MIN_EVENT_LEN {
        return Err(FormatError::BadEventSize { offset, size });
    }
    if size as usize > available {
        return Err(FormatError::Truncated {
            offset,
            needed: size as usize,
            available,
        });
    }
    Ok(size as usize)
}

/// Sets the `log_pos` of every event in `buf` (a run of whole events that will be written at
/// file offset `base`) to the file offset of its end, and recomputes every checksum.
///
/// Call it last: after [`set_gtid_seq`] and any other patch, since it seals the checksums.
/// Fails, leaving `buf` partly patched, when `buf` does not hold whole events or a position
/// passes 4 GiB.
pub fn set_positions(buf: &mut [u8], base: u64) -> Result<(), FormatError> {
    let mut offset = 0;
    while offset < buf.len() {
        let len = event_len_at(buf, offset)?;
        let end = offset + len;
        let pos = base.saturating_add(end as u64);
        let pos32 = u32::try_from(pos).map_err(|_| FormatError::PositionOverflow { pos })?;
        buf[offset + LOG_POS_OFFSET..offset + LOG_POS_OFFSET + 4]
            .copy_from_slice(&pos32.to_le_bytes());
        let crc = event_crc(&buf[offset..end - CHECKSUM_LEN]);
        buf[end - CHECKSUM_LEN..end].copy_from_slice(&crc.to_le_bytes());
        offset = end;
    }
    Ok(())
}

/// Overwrites the sequence number of the GTID event that must start `buf`. Its checksum is
/// stale afterwards: call [`set_positions`] next, which redoes it.
pub fn set_gtid_seq(buf: &mut [u8], seq: u64) -> Result<(), FormatError> {
    let len = event_len_at(buf, 0)?;
    let found = buf[TYPE_OFFSET];
    if found != GTID_EVENT {
        return Err(FormatError::WrongEventType {
            expected: "GTID",
            found,
        });
    }
    if len < HEADER_LEN + 8 + CHECKSUM_LEN {
        return Err(FormatError::BadEventSize {
            offset: 0,
            size: len as u32,
        });
    }
    buf[HEADER_LEN..HEADER_LEN + 8].copy_from_slice(&seq.to_le_bytes());
    Ok(())
}

/// Where one event lies in a scanned buffer, and its header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventRef {
    /// Offset of the event's first byte in the scanned buffer.
    pub offset: usize,
    /// The event's size, header and checksum included.
    pub len: usize,
    /// Event type code (`*_EVENT` constants).
    pub type_code: u8,
    /// Header timestamp (unix seconds).
    pub timestamp: u32,
    /// Header `log_pos`: file offset of the event's end.
    pub log_pos: u32,
}

/// Finds the complete, checksum-valid events at the start of `buf` (the bytes of a binlog
/// file after its 4-byte magic). Returns them and the number of bytes they cover; scanning
/// stops at the first event that is cut off, has a size below 23, or fails its checksum.
/// Never panics.
pub fn scan(buf: &[u8]) -> (Vec<EventRef>, usize) {
    let mut events = Vec::new();
    let mut offset = 0;
    while offset < buf.len() {
        let Ok(len) = event_len_at(buf, offset) else {
            break;
        };
        let event = &buf[offset..offset + len];
        let (body, trailer) = event.split_at(len - CHECKSUM_LEN);
        let stored = u32::from_le_bytes([trailer[0], trailer[1], trailer[2], trailer[3]]);
        if event_crc(body) != stored {
            break;
        }
        events.push(EventRef {
            offset,
            len,
            type_code: event[TYPE_OFFSET],
            timestamp: read_u32(event, 0).unwrap_or(0),
            log_pos: read_u32(event, LOG_POS_OFFSET).unwrap_or(0),
        });
        offset += len;
    }
    (events, offset)
}

/// The `(seq_no, domain, server_id)` of a GTID event (`event`: its whole bytes, header to
/// checksum); None for any other event or a short one. Does not check the checksum.
pub fn gtid_seq(event: &[u8]) -> Option<(u64, u32, u32)> {
    if event.len() < HEADER_LEN + 12 + CHECKSUM_LEN || *event.get(TYPE_OFFSET)? != GTID_EVENT {
        return None;
    }
    let seq = read_u64(event, HEADER_LEN)?;
    let domain = read_u32(event, HEADER_LEN + 8)?;
    let server_id = read_u32(event, SERVER_ID_OFFSET)?;
    Some((seq, domain, server_id))
}

/// The `(domain, server_id, seq_no)` entries of a Gtid_list event (`event`: its whole bytes);
/// None for any other event or one too short for its count. Does not check the checksum.
pub fn gtid_list_entries(event: &[u8]) -> Option<Vec<(u32, u32, u64)>> {
    if event.len() < HEADER_LEN + 4 + CHECKSUM_LEN || *event.get(TYPE_OFFSET)? != GTID_LIST_EVENT {
        return None;
    }
    let count = (read_u32(event, HEADER_LEN)? & 0x0fff_ffff) as usize;
    let entries_start = HEADER_LEN + 4;
    let needed = count
        .checked_mul(16)?
        .checked_add(entries_start + CHECKSUM_LEN)?;
    if event.len() < needed {
        return None;
    }
    (0..count)
        .map(|i| {
            let at = entries_start + i * 16;
            Some((
                read_u32(event, at)?,
                read_u32(event, at + 4)?,
                read_u64(event, at + 8)?,
            ))
        })
        .collect()
}

/// The header flags of an event (`event`: at least its header); None when too short.
pub fn event_flags(event: &[u8]) -> Option<u16> {
    read_u16(event, FLAGS_OFFSET)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;
    use tierdb_engine::{Collation, LobSize, Value};

    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    pub(crate) fn col(name: &str, ty: ColumnType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty,
            nullable,
            auto_increment: false,
            default: None,
            fill: None,
            collation: Collation::GeneralCi,
            on_update_now: false,
        }
    }

    /// The body (between header and checksum) of the single event in `buf`.
    fn body(buf: &[u8]) -> &[u8] {
        &buf[HEADER_LEN..buf.len() - CHECKSUM_LEN]
    }

    // Bodies below were written by mariadbd 10.11.19 (server_id 7, binlog_checksum=CRC32).
    const MARIADB_FDE_BODY: &str = "040031302e31312e31392d4d6172696144422d302b646562313275312d6c6f6700000000000000000000000000000000000000006f48146b13380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a0a01";

    #[test]
    fn format_description_matches_mariadb() {
        let mut out = Vec::new();
        format_description(&mut out, 0x6b14486f, 7, "10.11.19-MariaDB-0+deb12u1-log").unwrap();
        assert_eq!(out.len(), 252);
        assert_eq!(body(&out), hex(MARIADB_FDE_BODY));
        assert_eq!(out[TYPE_OFFSET], FORMAT_DESCRIPTION_EVENT);
        let (events, used) = scan(&out);
        assert_eq!((events.len(), used), (1, out.len()));
    }

    #[test]
    fn server_versions() {
        let mut out = Vec::new();
        assert!(format_description(&mut out, 0, 1, "10.11.0-MariaDB-tierdb").is_ok());
        assert!(format_description(&mut out, 0, 1, "8.0.36").is_ok());
        for bad in [
            "tierdb",
            "5.5.9",
            "5.2.1-MariaDB",
            "10.11",
            "1.2.3.4.5.6.7.8.9.0-MariaDB-too-long-for-the-fifty-byte-field",
        ] {
            let before = out.len();
            assert!(format_description(&mut out, 0, 1, bad).is_err(), "{bad}");
            assert_eq!(out.len(), before);
        }
    }

    #[test]
    fn small_events_match_mariadb() {
        let mut out = Vec::new();
        gtid_list(&mut out, 0, 7, &[]);
        assert_eq!(body(&out), hex("000000000000"));
        out.clear();
        gtid_list(&mut out, 0, 7, &[(0, 7, 6)]);
        assert_eq!(body(&out), hex("0100000000000000070000000600000000000000"));
        assert_eq!(gtid_list_entries(&out), Some(vec![(0, 7, 6)]));
        out.clear();
        binlog_checkpoint(&mut out, 0, 7, "bin.000001").unwrap();
        assert_eq!(body(&out), hex("0a00000062696e2e303030303031"));
        out.clear();
        gtid(&mut out, 0, 7, 1, 0, true);
        assert_eq!(body(&out), hex("01000000000000000000000029000000000000"));
        assert_eq!(event_flags(&out), Some(LOG_EVENT_SUPPRESS_USE_F));
        out.clear();
        gtid(&mut out, 0, 7, 3, 0, false);
        assert_eq!(body(&out), hex("0300000000000000000000000c000000000000"));
        assert_eq!(gtid_seq(&out), Some((3, 0, 7)));
        out.clear();
        xid(&mut out, 0, 7, 7);
        assert_eq!(body(&out), hex("0700000000000000"));
        out.clear();
        rotate(&mut out, 0, 7, "bin.000002", 4).unwrap();
        assert_eq!(body(&out), hex("040000000000000062696e2e303030303032"));
        out.clear();
        stop(&mut out, 0, 7);
        assert_eq!(out.len(), MIN_EVENT_LEN);
    }

    #[test]
    fn query_matches_mariadb() {
        let q = QueryEvent {
            thread_id: 7,
            exec_time: 0,
            error_code: 0,
            db: "d1",
            sql: b"INSERT INTO v VALUES (NOW())",
            sql_mode: 0x5420_0000,
            auto_increment_increment: 3,
            auto_increment_offset: 1,
            charset_client: 33,
            collation_connection: 33,
            collation_server: 8,
            time_zone: Some("+01:00"),
            flags2: OPTION_EXPLICIT_DEF_TIMESTAMP | OPTION_NO_FOREIGN_KEY_CHECKS,
        };
        let mut out = Vec::new();
        query(&mut out, 0, 7, &q).unwrap();
        // MariaDB's event also carried Q_HRNOW (0x80, 3 bytes) after the time zone (so its
        // status length was 43), which tierdb does not write; the rest is the same.
        let expected = hex("07000000 00000000 02 0000 2700
             00 00000005 01 0000205400000000 06 03 737464 03 0300 0100 04 2100 2100 0800
             05 06 2b30313a3030");
        let b = body(&out);
        assert_eq!(&b[..expected.len()], &expected[..]);
        assert_eq!(&b[expected.len()..], b"d1\0INSERT INTO v VALUES (NOW())");
    }

    // The Table_map body mariadbd wrote for `d1.t` (table id 18) of the integration test's
    // reference table: every column type.
    const MARIADB_TABLE_MAP_BODY: &str = "1200000000000100026431000174002c03010102020909030308080405f6f6f6fefe0f0ffcfcfcfcfcfcfcfcfe0f0a1212110d1010101313fefefcfe2e04080a031e0a0500fe28ee90500090010102030401020304fe042c010006030100050100080003f801f70104f701feffffffff07";

    pub(crate) fn reference_columns() -> Vec<ColumnDef> {
        use ColumnType::*;
        let int = |bytes, unsigned| Int { bytes, unsigned };
        let members = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut cols = vec![col("id", int(4, false), false)];
        let rest: Vec<(&str, ColumnType)> = vec![
            ("ti", int(1, false)),
            ("tiu", int(1, true)),
            ("si", int(2, false)),
            ("siu", int(2, true)),
            ("mi", int(3, false)),
            ("miu", int(3, true)),
            ("i", int(4, false)),
            ("iu", int(4, true)),
            ("bi", int(8, false)),
            ("biu", int(8, true)),
            ("f", Float),
            ("d", Double),
            (
                "dec1",
                Decimal {
                    precision: 10,
                    scale: 3,
                    unsigned: false,
                },
            ),
            (
                "dec2",
                Decimal {
                    precision: 30,
                    scale: 10,
                    unsigned: true,
                },
            ),
            (
                "dec3",
                Decimal {
                    precision: 5,
                    scale: 0,
                    unsigned: false,
                },
            ),
            ("c", Char(10)),
            ("c2", Char(100)),
            ("vc", VarChar(20)),
            ("vc2", VarChar(100)),
            ("tt", Text(LobSize::Tiny)),
            ("tx", Text(LobSize::Regular)),
            ("mt", Text(LobSize::Medium)),
            ("lt", Text(LobSize::Long)),
            ("tb", Blob(LobSize::Tiny)),
            ("b", Blob(LobSize::Regular)),
            ("mb", Blob(LobSize::Medium)),
            ("lb", Blob(LobSize::Long)),
            ("bn", Binary(4)),
            ("vb", VarBinary(300)),
            ("dt", Date),
            ("dtm", DateTime(0)),
            ("dtm6", DateTime(6)),
            ("ts", Timestamp(3)),
            ("y", Year),
            ("bt", Bit(1)),
            ("bt2", Bit(13)),
            ("bt64", Bit(64)),
            ("tm", Time(0)),
            ("tm3", Time(3)),
            ("s", Set(members(&["a", "b", "c"]))),
            ("e", Enum(members(&["x", "y", "z"]))),
            ("j", Text(LobSize::Long)),
        ];
        cols.extend(rest.into_iter().map(|(n, t)| col(n, t, true)));
        cols.push(col("e2", Enum(members(&["p", "q"])), false));
        cols
    }

    /// The row mariadbd wrote for the reference table's first INSERT.
    pub(crate) fn reference_row() -> Vec<Value> {
        let b = |s: &[u8]| Value::Bytes(s.to_vec());
        vec![
            Value::Int(1),
            Value::Int(-128),
            Value::Int(255),
            Value::Int(-32768),
            Value::Int(65535),
            Value::Int(-8388608),
            Value::Int(16777215),
            Value::Int(-2147483648),
            Value::Int(4294967295),
            Value::Int(i64::MIN),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Double(-2.25),
            b(b"-12.340"),
            b(b"12345678901234567890.0123456789"),
            b(b"-99999"),
            b("héllo".as_bytes()),
            b(b"x"),
            b("ab€".as_bytes()),
            b(b""),
            b(b"tiny"),
            b(b"text"),
            b(b"med"),
            b(b"long"),
            b(b"\x00\xff"),
            b(b"blob"),
            b(b"mb"),
            b(b"lb"),
            b(b"\x01\x02\x03\x04"),
            b(b"\xff\x00"),
            b(b"2024-02-29"),
            b(b"9999-12-31 23:59:59"),
            b(b"2024-01-02 03:04:05.123456"),
            b(b"2024-01-02 03:04:05.678"),
            Value::Int(2155),
            Value::Int(1),
            Value::Int(0b1010101010101),
            Value::UInt(u64::MAX),
            b(b"-838:59:59"),
            b(b"-01:02:03.456"),
            b(b"a,c"),
            b(b"z"),
            b(br#"{"a": 1}"#),
            b(b"q"),
        ]
    }

    #[test]
    fn table_map_matches_mariadb() {
        let mut out = Vec::new();
        table_map(&mut out, 0, 7, 18, "d1", "t", &reference_columns()).unwrap();
        assert_eq!(body(&out), hex(MARIADB_TABLE_MAP_BODY));
    }

    #[test]
    fn table_map_rejects_bad_columns() {
        let mut out = Vec::new();
        for ty in [
            ColumnType::Int {
                bytes: 5,
                unsigned: false,
            },
            ColumnType::VarChar(20_000),
            ColumnType::Char(300),
            ColumnType::Bit(0),
            ColumnType::DateTime(7),
            ColumnType::Enum(vec![]),
            ColumnType::Decimal {
                precision: 66,
                scale: 0,
                unsigned: false,
            },
        ] {
            let cols = [col("a", ty.clone(), true)];
            assert!(
                table_map(&mut out, 0, 1, 1, "d", "t", &cols).is_err(),
                "{ty:?}"
            );
            assert!(out.is_empty());
        }
        let cols = [col("a", ColumnType::Year, true)];
        assert!(table_map(&mut out, 0, 1, 1 << 48, "d", "t", &cols).is_err());
        assert!(table_map(&mut out, 0, 1, 1, &"d".repeat(256), "t", &cols).is_err());
        assert!(out.is_empty());
    }

    fn sample_events() -> Vec<u8> {
        let mut out = Vec::new();
        format_description(&mut out, 100, 1, "10.11.0-MariaDB-tierdb").unwrap();
        gtid_list(&mut out, 100, 1, &[(0, 1, 5)]);
        binlog_checkpoint(&mut out, 100, 1, "bin.000001").unwrap();
        gtid(&mut out, 101, 1, 0, 0, false);
        xid(&mut out, 101, 1, 9);
        rotate(&mut out, 102, 1, "bin.000002", 4).unwrap();
        out
    }

    #[test]
    fn set_positions_sets_ends_and_checksums() {
        let mut buf = sample_events();
        let (events, used) = scan(&buf);
        assert_eq!(
            (events.len(), used),
            (6, buf.len()),
            "builders write valid checksums"
        );
        assert!(events.iter().all(|e| e.log_pos == 0));

        // Patching breaks the GTID event's checksum until set_positions reseals it.
        let gtid_at = events[3].offset;
        set_gtid_seq(&mut buf[gtid_at..], 6).unwrap();
        assert_eq!(scan(&buf).0.len(), 3);
        set_positions(&mut buf, 4).unwrap();
        let (events, used) = scan(&buf);
        assert_eq!((events.len(), used), (6, buf.len()));
        for e in &events {
            assert_eq!(e.log_pos as usize, 4 + e.offset + e.len);
        }
        assert_eq!(events[0].log_pos, 256);
        let g = &buf[gtid_at..gtid_at + events[3].len];
        assert_eq!(gtid_seq(g), Some((6, 0, 1)));
        assert_eq!(events[3].timestamp, 101);

        // Positions are relative to `base`, so the same bytes can move.
        set_positions(&mut buf, 1000).unwrap();
        assert_eq!(scan(&buf).0[0].log_pos, 1000 + 252);
        assert!(matches!(
            set_positions(&mut buf, u64::from(u32::MAX)),
            Err(FormatError::PositionOverflow { .. })
        ));
    }

    #[test]
    fn set_gtid_seq_needs_a_gtid_event_first() {
        let mut buf = Vec::new();
        xid(&mut buf, 0, 1, 1);
        assert!(matches!(
            set_gtid_seq(&mut buf, 1),
            Err(FormatError::WrongEventType {
                found: XID_EVENT,
                ..
            })
        ));
        assert!(set_gtid_seq(&mut [0u8; 5], 1).is_err());
    }

    #[test]
    fn fde_checksum_ignores_in_use_flag() {
        let mut buf = sample_events();
        buf[FLAGS_OFFSET] |= LOG_EVENT_BINLOG_IN_USE_F as u8;
        assert_eq!(scan(&buf).0.len(), 6);
    }

    #[test]
    fn scan_stops_at_torn_and_bad_events() {
        let buf = sample_events();
        let (all, _) = scan(&buf);
        let last = all.last().unwrap();
        // Torn: the last event cut anywhere.
        for cut in last.offset + 1..buf.len() {
            let (events, used) = scan(&buf[..cut]);
            assert_eq!((events.len(), used), (5, last.offset), "cut at {cut}");
        }
        // Bad checksum: any flipped bit in the fourth event.
        let e = all[3];
        for bit in 0..e.len * 8 {
            let mut bad = buf.clone();
            bad[e.offset + bit / 8] ^= 1 << (bit % 8);
            let (events, used) = scan(&bad);
            assert_eq!(events.len(), 3, "bit {bit}");
            assert_eq!(used, e.offset);
        }
        // Garbage after good events, and a size below the minimum.
        let mut junk = buf.clone();
        junk.extend_from_slice(&[0xab; 40]);
        assert_eq!(scan(&junk).1, buf.len());
        let mut tiny = buf.clone();
        tiny.extend_from_slice(&[0; HEADER_LEN + 4]);
        assert_eq!(scan(&tiny).1, buf.len());
        assert!(matches!(
            set_positions(&mut tiny, 4),
            Err(FormatError::BadEventSize { .. })
        ));
    }

    proptest! {
        #[test]
        fn scan_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let (events, used) = scan(&bytes);
            prop_assert!(used <= bytes.len());
            let covered: usize = events.iter().map(|e| e.len).sum();
            prop_assert_eq!(covered, used);
            let _ = gtid_seq(&bytes);
            let _ = gtid_list_entries(&bytes);
            let mut copy = bytes.clone();
            let _ = set_gtid_seq(&mut copy, 1);
            let _ = set_positions(&mut copy, 4);
        }

        #[test]
        fn scan_never_panics_on_damaged_events(
            cut in 0usize..2000,
            flips in proptest::collection::vec((0usize..2000, any::<u8>()), 0..4),
        ) {
            let mut buf = sample_events();
            for (at, x) in flips {
                let n = buf.len();
                buf[at % n] ^= x;
            }
            buf.truncate(cut.min(buf.len()));
            let (_, used) = scan(&buf);
            prop_assert!(used <= buf.len());
            let _ = gtid_list_entries(&buf[used.min(buf.len())..]);
        }
    }
}
