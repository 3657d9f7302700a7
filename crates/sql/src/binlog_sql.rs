//! The binary log as SQL sees it: `SHOW BINARY LOGS`, `SHOW MASTER STATUS`,
//! `FLUSH BINARY LOGS`, `PURGE BINARY LOGS`, and what a DDL statement's query event says
//! about the session (`sql_mode` bits, flags, character sets).
//!
//! Owns: recognising those statements (sqlparser reads none of them; `FLUSH BINARY LOGS`
//! it reads as a plain FLUSH), their results as MariaDB 10.11 gives them (also without a
//! binary log: 1381, or an empty result), and the session facts written into query events.
//!
//! Must never: claim a statement it does not fully read (anything else goes on to the
//! general parser), or delete a binary-log file itself (`tierdb_binlog::log` decides what
//! may go).

use crate::result::{Column, QueryResult, SqlError};
use crate::show::{s, text_cols};
use tierdb_engine::Value;

/// A statement about the binary log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BinlogStmt {
    /// `SHOW {BINARY | MASTER} LOGS`
    ShowLogs,
    /// `SHOW {MASTER | BINLOG} STATUS`
    ShowStatus,
    /// `SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count]`
    ShowEvents {
        file: Option<String>,
        from: u64,
        offset: u64,
        limit: Option<u64>,
    },
    /// `FLUSH [NO_WRITE_TO_BINLOG | LOCAL] {BINARY LOGS | LOGS}`
    Flush,
    /// `PURGE {BINARY | MASTER} LOGS TO 'file'`
    PurgeTo(String),
    /// `PURGE {BINARY | MASTER} LOGS BEFORE expr` (the expression's text)
    PurgeBefore(String),
    /// `BINLOG 'base64'` or `BINLOG @v1, @v2, ...` (fragments in user variables): events
    /// `mariadb-binlog` prints, applied as a replica would.
    Apply(ApplySource),
}

/// Where the events of a BINLOG statement are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplySource {
    /// The quoted base64 text.
    Literal(String),
    /// User variables (names without `@`) whose values, concatenated, are the base64 text.
    Vars(Vec<String>),
}

/// Words of `sql` up to `n`, upper-cased, comments and a final `;` ignored.
fn words(sql: &str) -> Vec<String> {
    let body = sql.trim().trim_end_matches(';');
    body.split_ascii_whitespace()
        .map(|w| w.to_ascii_uppercase())
        .collect()
}

/// Reads `sql` when it is a binary-log statement (None: not one of them).
pub fn parse(sql: &str) -> Result<Option<BinlogStmt>, SqlError> {
    let head = sql.trim_start();
    let starts = |w: &str| {
        head.get(..w.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(w))
    };
    if starts("BINLOG") && head[6..].starts_with(|c: char| c.is_ascii_whitespace()) {
        let arg = head[6..].trim().trim_end_matches(';').trim_end();
        let bad = || {
            SqlError::syntax(format!(
                "You have an error in your SQL syntax near '{}': BINLOG takes a quoted string or @variables",
                &arg[..arg.len().min(40)]
            ))
        };
        if arg.starts_with('@') {
            let vars: Vec<String> = arg
                .split(',')
                .map(|v| {
                    v.trim()
                        .trim_start_matches('@')
                        .trim_matches('`')
                        .to_string()
                })
                .collect();
            if vars.iter().any(|v| v.is_empty()) {
                return Err(bad());
            }
            return Ok(Some(BinlogStmt::Apply(ApplySource::Vars(vars))));
        }
        return match unquote(arg) {
            Some(text) => Ok(Some(BinlogStmt::Apply(ApplySource::Literal(text)))),
            None => Err(bad()),
        };
    }
    if !(starts("SHOW") || starts("FLUSH") || starts("PURGE")) {
        return Ok(None);
    }
    let w = words(sql);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    Ok(match w.as_slice() {
        ["SHOW", "BINARY" | "MASTER", "LOGS"] => Some(BinlogStmt::ShowLogs),
        ["SHOW", "MASTER" | "BINLOG", "STATUS"] => Some(BinlogStmt::ShowStatus),
        ["SHOW", "BINLOG", "EVENTS", rest @ ..] => Some(parse_show_events(rest, sql)?),
        ["FLUSH", rest @ ..] => {
            let rest = match rest {
                ["NO_WRITE_TO_BINLOG" | "LOCAL", r @ ..] => r,
                r => r,
            };
            match rest {
                ["BINARY", "LOGS"] | ["LOGS"] => Some(BinlogStmt::Flush),
                _ => None,
            }
        }
        ["PURGE", "BINARY" | "MASTER", "LOGS", ..] => {
            // The rest as written: a quoted file name or an expression.
            let after = head
                .splitn(4, |c: char| c.is_ascii_whitespace())
                .nth(3)
                .unwrap_or("")
                .trim()
                .trim_end_matches(';')
                .trim();
            let (kw, arg) = after
                .split_once(|c: char| c.is_ascii_whitespace())
                .unwrap_or((after, ""));
            let arg = arg.trim();
            if kw.eq_ignore_ascii_case("TO") {
                let name = unquote(arg).ok_or_else(|| {
                    SqlError::syntax(format!(
                        "You have an error in your SQL syntax; PURGE BINARY LOGS TO needs a quoted file name near '{arg}'"
                    ))
                })?;
                Some(BinlogStmt::PurgeTo(name))
            } else if kw.eq_ignore_ascii_case("BEFORE") && !arg.is_empty() {
                Some(BinlogStmt::PurgeBefore(arg.to_string()))
            } else {
                return Err(SqlError::syntax(format!(
                    "You have an error in your SQL syntax; PURGE BINARY LOGS takes TO 'file' or BEFORE datetime near '{after}'"
                )));
            }
        }
        _ => None,
    })
}

/// The clauses of SHOW BINLOG EVENTS (`rest`: the upper-cased words after EVENTS; the file
/// name is taken from `sql` as written).
fn parse_show_events(rest: &[&str], sql: &str) -> Result<BinlogStmt, SqlError> {
    let bad = || {
        SqlError::syntax(format!(
            "You have an error in your SQL syntax near '{}': SHOW BINLOG EVENTS [IN 'file'] [FROM pos] [LIMIT [offset,] count]",
            rest.join(" ")
        ))
    };
    let num = |w: &str| w.trim_end_matches(',').parse::<u64>().map_err(|_| bad());
    let (mut file, mut from, mut offset, mut limit) = (None, 4, 0, None);
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            "IN" => {
                // The name as written (case kept): the word at the same place in `sql`.
                let words: Vec<&str> = sql
                    .trim()
                    .trim_end_matches(';')
                    .split_ascii_whitespace()
                    .collect();
                let w = words.get(3 + i + 1).ok_or_else(bad)?;
                file = Some(unquote(w).ok_or_else(bad)?);
                i += 2;
            }
            "FROM" => {
                from = num(rest.get(i + 1).ok_or_else(bad)?)?;
                i += 2;
            }
            "LIMIT" => {
                let a = rest.get(i + 1).ok_or_else(bad)?;
                if let Some((o, n)) = a.split_once(',').filter(|(_, n)| !n.is_empty()) {
                    offset = num(o)?;
                    limit = Some(num(n)?);
                    i += 2;
                } else if a.ends_with(',') {
                    offset = num(a)?;
                    limit = Some(num(rest.get(i + 2).ok_or_else(bad)?)?);
                    i += 3;
                } else {
                    limit = Some(num(a)?);
                    i += 2;
                }
            }
            _ => return Err(bad()),
        }
    }
    Ok(BinlogStmt::ShowEvents {
        file,
        from,
        offset,
        limit,
    })
}

/// SHOW BINLOG EVENTS: one row per event of one file, as MariaDB describes them.
pub fn show_events(
    b: Option<&tierdb_binlog::log::Binlog>,
    file: Option<&str>,
    from: u64,
    offset: u64,
    limit: Option<u64>,
) -> Result<QueryResult, SqlError> {
    let mut columns = text_cols(&["Log_name"]);
    columns.push(Column::bigint("Pos"));
    columns.extend(text_cols(&["Event_type"]));
    columns.push(Column::bigint("Server_id"));
    columns.push(Column::bigint("End_log_pos"));
    columns.extend(text_cols(&["Info"]));
    let Some(b) = b else {
        return Ok(QueryResult::Rows {
            columns,
            rows: Vec::new(),
        });
    };
    let failed = |why: &str| {
        SqlError::new(
            1220,
            "HY000",
            format!("Error when executing command SHOW BINLOG EVENTS: {why}"),
        )
    };
    let name = match file {
        Some(f) => f.to_string(),
        None => b
            .list()?
            .first()
            .map(|f| f.name.clone())
            .ok_or_else(|| failed("Could not find target log"))?,
    };
    let bytes = b
        .read_file(&name)?
        .ok_or_else(|| failed("Could not find target log"))?;
    if bytes.len() < 4 || from < 4 || from as usize > bytes.len() {
        return Err(failed("Wrong offset or I/O error"));
    }
    let (evs, _) = tierdb_binlog::events::scan(&bytes[4..]);
    let mut starts = evs.iter().map(|e| e.offset as u64 + 4);
    if from as usize != bytes.len() && !starts.any(|p| p == from) {
        return Err(failed("Wrong offset or I/O error"));
    }
    let rows = evs
        .iter()
        .filter(|e| e.offset as u64 + 4 >= from)
        .skip(offset as usize)
        .take(limit.map_or(usize::MAX, |l| l as usize))
        .map(|e| {
            let ev = &bytes[4 + e.offset..4 + e.offset + e.len];
            let (kind, info) = describe(ev);
            let sid = u32::from_le_bytes([ev[5], ev[6], ev[7], ev[8]]);
            vec![
                s(&name),
                Value::Int(e.offset as i64 + 4),
                s(kind),
                Value::Int(i64::from(sid)),
                Value::Int(i64::from(e.log_pos)),
                s(info),
            ]
        })
        .collect();
    Ok(QueryResult::Rows { columns, rows })
}

/// An event's type name and Info text, as MariaDB's SHOW BINLOG EVENTS shows them.
fn describe(ev: &[u8]) -> (&'static str, String) {
    use tierdb_binlog::events as e;
    let body = &ev[e::HEADER_LEN..ev.len() - e::CHECKSUM_LEN];
    let u64_at = |o: usize| {
        body.get(o..o + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
            .unwrap_or(0)
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match ev[4] {
        e::FORMAT_DESCRIPTION_EVENT => {
            let ver = body.get(2..52).unwrap_or(&[]);
            let ver = &ver[..ver.iter().position(|&c| c == 0).unwrap_or(ver.len())];
            (
                "Format_desc",
                format!("Server ver: {}, Binlog ver: 4", text(ver)),
            )
        }
        e::GTID_LIST_EVENT => {
            let list = e::gtid_list_entries(ev).unwrap_or_default();
            let l: Vec<String> = list
                .iter()
                .map(|(d, s, q)| format!("{d}-{s}-{q}"))
                .collect();
            ("Gtid_list", format!("[{}]", l.join(",")))
        }
        e::BINLOG_CHECKPOINT_EVENT => ("Binlog_checkpoint", text(body.get(4..).unwrap_or(&[]))),
        e::GTID_EVENT => {
            let (q, d, s) = e::gtid_seq(ev).unwrap_or((0, 0, 0));
            let begin = if e::gtid_is_standalone(ev) {
                ""
            } else {
                "BEGIN "
            };
            ("Gtid", format!("{begin}GTID {d}-{s}-{q}"))
        }
        e::QUERY_EVENT => {
            let db_len = body.get(8).copied().unwrap_or(0) as usize;
            let vars = body
                .get(11..13)
                .map_or(0, |v| u16::from_le_bytes([v[0], v[1]]) as usize);
            let db_at = 13 + vars;
            let db = body.get(db_at..db_at + db_len).unwrap_or(&[]);
            let sql = body.get(db_at + db_len + 1..).unwrap_or(&[]);
            let info = if db.is_empty() {
                text(sql)
            } else {
                format!("use `{}`; {}", text(db), text(sql))
            };
            ("Query", info)
        }
        e::TABLE_MAP_EVENT => {
            let id = u64_at(0) & 0xffff_ffff_ffff;
            let dl = body.get(8).copied().unwrap_or(0) as usize;
            let db = body.get(9..9 + dl).unwrap_or(&[]);
            let tl = body.get(10 + dl).copied().unwrap_or(0) as usize;
            let t = body.get(11 + dl..11 + dl + tl).unwrap_or(&[]);
            (
                "Table_map",
                format!("table_id: {id} ({}.{})", text(db), text(t)),
            )
        }
        k @ (e::WRITE_ROWS_EVENT_V1 | e::UPDATE_ROWS_EVENT_V1 | e::DELETE_ROWS_EVENT_V1) => {
            let id = u64_at(0) & 0xffff_ffff_ffff;
            let flags = body
                .get(6..8)
                .map_or(0, |f| u16::from_le_bytes([f[0], f[1]]));
            let name = match k {
                e::WRITE_ROWS_EVENT_V1 => "Write_rows_v1",
                e::UPDATE_ROWS_EVENT_V1 => "Update_rows_v1",
                _ => "Delete_rows_v1",
            };
            let end = if flags & 1 != 0 {
                " flags: STMT_END_F"
            } else {
                ""
            };
            (name, format!("table_id: {id}{end}"))
        }
        e::XID_EVENT => ("Xid", format!("COMMIT /* xid={} */", u64_at(0))),
        e::ROTATE_EVENT => (
            "Rotate",
            format!("{};pos={}", text(body.get(8..).unwrap_or(&[])), u64_at(0)),
        ),
        e::STOP_EVENT => ("Stop", String::new()),
        _ => ("Unknown", String::new()),
    }
}

/// `'x'` or `"x"` (doubled quotes inside), as text.
fn unquote(t: &str) -> Option<String> {
    let q = t.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = t.strip_prefix(q)?.strip_suffix(q)?;
    let doubled = format!("{q}{q}");
    let plain = inner.replace(&doubled, "");
    if plain.contains(q) {
        return None;
    }
    Some(inner.replace(&doubled, &q.to_string()))
}

/// The bytes of a BINLOG statement's base64 text (line breaks and spaces ignored).
/// mariadb-binlog encodes each event by itself, so padded pieces follow each other.
pub fn base64_events(text: &str) -> Result<Vec<u8>, SqlError> {
    use base64::Engine as _;
    let mut out = Vec::new();
    let mut piece = String::new();
    let mut decode = |piece: &mut String| -> Result<(), SqlError> {
        if !piece.is_empty() {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(piece.as_bytes())
                .map_err(|e| {
                    SqlError::new(
                        1575,
                        "HY000",
                        format!("Decoding of base64 string failed: {e}"),
                    )
                })?;
            out.extend_from_slice(&bytes);
            piece.clear();
        }
        Ok(())
    };
    for c in text.chars().filter(|c| !c.is_ascii_whitespace()) {
        if c != '=' && piece.ends_with('=') {
            decode(&mut piece)?;
        }
        piece.push(c);
    }
    decode(&mut piece)?;
    Ok(out)
}

/// One row change of a BINLOG statement, as the statement that makes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub sql: String,
    pub params: Vec<Value>,
    /// The row event was made with foreign key checks on.
    pub fk_checks: bool,
    /// An UPDATE / DELETE that must find its row (else 1032).
    pub must_change: bool,
    table: String,
}

impl Step {
    /// 1032, as a replica reports a row it cannot find.
    pub fn not_found(&self) -> SqlError {
        SqlError::new(
            1032,
            "HY000",
            format!("Can't find record in '{}'", self.table),
        )
    }
}

/// What a session's BINLOG statements have told it so far: the format description and the
/// table maps (mariadb-binlog prints the format description in a BINLOG statement of its own).
pub struct ApplyState {
    decoder: tierdb_binlog::decode::Decoder,
    maps: std::collections::HashMap<u64, tierdb_binlog::decode::TableMap>,
    described: bool,
}

impl Default for ApplyState {
    fn default() -> Self {
        ApplyState::new()
    }
}

fn quote(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// `` `db`.`table` `` for statements the server writes into the binary log.
pub(crate) fn quote_table(db: &str, table: &str) -> String {
    format!("{}.{}", quote(db), quote(table))
}

impl ApplyState {
    pub fn new() -> ApplyState {
        ApplyState {
            decoder: tierdb_binlog::decode::Decoder::new(),
            maps: Default::default(),
            described: false,
        }
    }

    /// Decodes `bytes` (whole events) and turns their rows into statements on `engine`'s
    /// tables. Errors: 1609 (no format description yet), 1146 (no such table), 1677 (a column
    /// that does not fit), 1610 (bytes that are no events).
    pub fn feed(
        &mut self,
        bytes: &[u8],
        engine: &tierdb_engine::Engine,
    ) -> Result<Vec<Step>, SqlError> {
        use tierdb_binlog::decode::{self, Event};
        use tierdb_binlog::rows::RowsKind;
        let events = self.decoder.feed(bytes).map_err(|e| {
            SqlError::new(
                1610,
                "HY000",
                format!("Corrupted replication event was detected: {e}"),
            )
        })?;
        let mut out = Vec::new();
        for ev in events {
            let what = match &ev {
                Event::FormatDescription { .. } => {
                    self.described = true;
                    continue;
                }
                Event::TableMap(_) => "Table_map",
                Event::Rows(_) => "Rows",
                Event::Query { .. } => "Query",
                _ => "other",
            };
            if !self.described {
                return Err(SqlError::new(
                    1609,
                    "HY000",
                    format!("The BINLOG statement of type `{what}` was not preceded by a format description BINLOG statement."),
                ));
            }
            match ev {
                Event::TableMap(m) => {
                    self.maps.insert(m.table_id, m);
                }
                Event::Rows(r) => {
                    let map = self.maps.get(&r.table_id).ok_or_else(|| {
                        SqlError::new(
                            1610,
                            "HY000",
                            format!("Corrupted replication event was detected: rows of table id {} without its table map", r.table_id),
                        )
                    })?;
                    let t = engine.table(&map.db, &map.table)?;
                    let cols = &t.def.columns;
                    decode::check_columns(map, cols).map_err(|e| {
                        SqlError::new(
                            1677,
                            "HY000",
                            format!(
                                "Column of table '{}.{}' cannot be converted: {e}",
                                map.db, map.table
                            ),
                        )
                    })?;
                    let name = format!("{}.{}", quote(&map.db), quote(&map.table));
                    let fk_checks = r.flags & 0x02 == 0;
                    let keys: Vec<usize> = if t.def.primary_key.is_empty() {
                        (0..cols.len()).collect()
                    } else {
                        t.def.primary_key.clone()
                    };
                    let by_pk = !t.def.primary_key.is_empty();
                    // Without a primary key the row is found by all its values, compared as
                    // bytes ('A' is not 'a' here, whatever the column's collation).
                    let key_sql = keys
                        .iter()
                        .map(|&k| {
                            let c = &cols[k];
                            let text = matches!(
                                c.ty,
                                tierdb_engine::ColumnType::Char(_)
                                    | tierdb_engine::ColumnType::VarChar(_)
                                    | tierdb_engine::ColumnType::Text(_)
                            );
                            match (by_pk, text) {
                                (true, _) => format!("{} = ?", quote(&c.name)),
                                (false, true) => {
                                    format!("{} COLLATE utf8mb4_bin <=> ?", quote(&c.name))
                                }
                                (false, false) => format!("{} <=> ?", quote(&c.name)),
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" AND ");
                    let values =
                        |raw: &Option<Vec<decode::RawValue>>| -> Result<Vec<Value>, SqlError> {
                            let raw = raw.as_ref().ok_or_else(|| {
                            SqlError::new(1610, "HY000", "Corrupted replication event was detected: a row image is missing")
                        })?;
                            raw.iter()
                            .zip(cols)
                            .map(|(v, c)| {
                                decode::to_value(v, &c.ty).map_err(|e| {
                                    SqlError::new(1677, "HY000", format!("Column '{}' of table '{}.{}' cannot be converted: {e}", c.name, map.db, map.table))
                                })
                            })
                            .collect()
                        };
                    let col_list = cols.iter().map(|c| quote(&c.name)).collect::<Vec<_>>();
                    for (before, after) in &r.rows {
                        let step = |sql: String, params: Vec<Value>, must_change: bool| Step {
                            sql,
                            params,
                            fk_checks,
                            must_change,
                            table: map.table.clone(),
                        };
                        match r.kind {
                            RowsKind::Write => out.push(step(
                                format!(
                                    "INSERT INTO {name} ({}) VALUES ({})",
                                    col_list.join(", "),
                                    vec!["?"; cols.len()].join(", ")
                                ),
                                values(after)?,
                                false,
                            )),
                            RowsKind::Delete => {
                                let b = values(before)?;
                                out.push(step(
                                    format!("DELETE FROM {name} WHERE {key_sql} LIMIT 1"),
                                    keys.iter().map(|&k| b[k].clone()).collect(),
                                    true,
                                ));
                            }
                            RowsKind::Update => {
                                let (b, a) = (values(before)?, values(after)?);
                                if a == b {
                                    continue;
                                }
                                let set = col_list
                                    .iter()
                                    .map(|c| format!("{c} = ?"))
                                    .collect::<Vec<_>>()
                                    .join(", ");
                                let mut params = a;
                                params.extend(keys.iter().map(|&k| b[k].clone()));
                                out.push(step(
                                    format!("UPDATE {name} SET {set} WHERE {key_sql} LIMIT 1"),
                                    params,
                                    true,
                                ));
                            }
                        }
                    }
                }
                Event::Query { .. } => {
                    return Err(SqlError::unsupported(
                        "a Query event inside a BINLOG statement",
                    ));
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// 1381, as MariaDB answers binary-log statements without a binary log.
pub fn not_logging() -> SqlError {
    SqlError::new(1381, "HY000", "You are not using binary logging")
}

/// SHOW BINARY LOGS.
pub fn show_logs(b: &tierdb_binlog::log::Binlog) -> Result<QueryResult, SqlError> {
    let files = b.list()?;
    Ok(QueryResult::Rows {
        columns: vec![Column::text("Log_name"), Column::bigint("File_size")],
        rows: files
            .into_iter()
            .map(|f| vec![s(&f.name), Value::Int(f.size as i64)])
            .collect(),
    })
}

/// SHOW MASTER STATUS (an empty result without a binary log, as MariaDB).
pub fn show_status(b: Option<&tierdb_binlog::log::Binlog>) -> QueryResult {
    let mut columns = text_cols(&["File"]);
    columns.push(Column::bigint("Position"));
    columns.extend(text_cols(&["Binlog_Do_DB", "Binlog_Ignore_DB"]));
    let rows = match b {
        Some(b) => {
            let (file, pos) = b.position();
            vec![vec![s(file), Value::Int(pos as i64), s(""), s("")]]
        }
        None => Vec::new(),
    };
    QueryResult::Rows { columns, rows }
}

/// `sql` is only versioned comments without content (`/*!*/`, `/*!40101 */`), which MariaDB
/// answers with OK where an empty query is 1065.
pub fn is_empty_versioned_comment(sql: &str) -> bool {
    let mut rest = sql.trim_start();
    let mut seen = false;
    while let Some(body) = rest.strip_prefix("/*!") {
        let Some(end) = body.find("*/") else {
            return false;
        };
        if !body[..end]
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim()
            .is_empty()
        {
            return false;
        }
        seen = true;
        rest = body[end + 2..]
            .trim_start()
            .trim_start_matches(';')
            .trim_start();
    }
    seen && rest.is_empty()
}

/// The `sql_mode` list of MariaDB's bits (unknown bits are left out).
pub fn sql_mode_names(bits: u64) -> String {
    SQL_MODES
        .iter()
        .enumerate()
        .filter(|(i, _)| bits & (1u64 << i) != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

/// MariaDB's `sql_mode` bits for a mode list (`STRICT_TRANS_TABLES,...`), as query events
/// carry it; unknown names add nothing.
pub fn sql_mode_bits(modes: &str) -> u64 {
    modes
        .split(',')
        .filter_map(|m| {
            let m = m.trim();
            SQL_MODES.iter().position(|n| n.eq_ignore_ascii_case(m))
        })
        .fold(0, |acc, i| acc | (1u64 << i))
}

/// MariaDB's sql_mode names, bit 0 first.
const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "POSTGRESQL",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
    "MYSQL323",
    "MYSQL40",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL",
    "SIMULTANEOUS_ASSIGNMENT",
    "TIME_ROUND_FRACTIONAL",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_log_statements_are_read_and_others_left_alone() {
        assert_eq!(
            parse("show binary logs").unwrap(),
            Some(BinlogStmt::ShowLogs)
        );
        assert_eq!(
            parse("SHOW MASTER LOGS;").unwrap(),
            Some(BinlogStmt::ShowLogs)
        );
        assert_eq!(
            parse("SHOW BINLOG STATUS").unwrap(),
            Some(BinlogStmt::ShowStatus)
        );
        assert_eq!(
            parse("flush local binary logs").unwrap(),
            Some(BinlogStmt::Flush)
        );
        assert_eq!(parse("FLUSH LOGS").unwrap(), Some(BinlogStmt::Flush));
        assert_eq!(
            parse("PURGE BINARY LOGS TO 'tierdb-bin.000003'").unwrap(),
            Some(BinlogStmt::PurgeTo("tierdb-bin.000003".into()))
        );
        assert_eq!(
            parse("purge master logs before now() - interval 3 day").unwrap(),
            Some(BinlogStmt::PurgeBefore("now() - interval 3 day".into()))
        );
        assert!(parse("PURGE BINARY LOGS TO tierdb").is_err());
        assert_eq!(
            parse("BINLOG '\nAAEC\nAwQ=\n'").unwrap(),
            Some(BinlogStmt::Apply(ApplySource::Literal(
                "\nAAEC\nAwQ=\n".into()
            )))
        );
        assert_eq!(
            parse("BINLOG @binlog_fragment_0, @binlog_fragment_1").unwrap(),
            Some(BinlogStmt::Apply(ApplySource::Vars(vec![
                "binlog_fragment_0".into(),
                "binlog_fragment_1".into(),
            ])))
        );
        assert!(parse("BINLOG nonsense").is_err());
        assert!(parse("PURGE BINARY LOGS").is_err());
        assert_eq!(
            parse("SHOW BINLOG EVENTS IN 'Tb.000002' FROM 329 LIMIT 2, 5").unwrap(),
            Some(BinlogStmt::ShowEvents {
                file: Some("Tb.000002".into()),
                from: 329,
                offset: 2,
                limit: Some(5)
            })
        );
        assert_eq!(
            parse("show binlog events limit 3").unwrap(),
            Some(BinlogStmt::ShowEvents {
                file: None,
                from: 4,
                offset: 0,
                limit: Some(3)
            })
        );
        assert!(parse("SHOW BINLOG EVENTS FROM x").is_err());
        assert!(parse("SHOW BINLOG EVENTS IN").is_err());
        for other in ["SHOW TABLES", "FLUSH TABLES", "FLUSH STATUS", "SELECT 1"] {
            assert_eq!(parse(other).unwrap(), None, "{other}");
        }
    }

    #[test]
    fn sql_mode_bits_match_mariadb_for_its_default() {
        // MariaDB 10.11's default mode is 1411383296 in its binary logs.
        assert_eq!(
            sql_mode_bits("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"),
            1_411_383_296
        );
        assert_eq!(sql_mode_bits(""), 0);
        assert_eq!(
            sql_mode_names(1_411_383_296),
            "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
        );
    }

    #[test]
    fn base64_pieces_each_padded_decode_one_after_another() {
        assert_eq!(
            base64_events("AAE=\nAgMEBQ==\n BgcI").unwrap(),
            vec![0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(base64_events("").unwrap(), Vec::<u8>::new());
        assert_eq!(base64_events("A$==").unwrap_err().code, 1575);
    }

    #[test]
    fn only_empty_versioned_comments_are_empty() {
        for yes in ["/*!*/", " /*!40101 */ ;", "/*!*/ /*!*/"] {
            assert!(is_empty_versioned_comment(yes), "{yes}");
        }
        for no in [
            "",
            "/* x */",
            "/*!40101 SET x=1 */",
            "/*!*/ SELECT 1",
            "/*!",
        ] {
            assert!(!is_empty_versioned_comment(no), "{no}");
        }
    }
}
