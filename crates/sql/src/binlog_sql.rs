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
    /// `FLUSH [NO_WRITE_TO_BINLOG | LOCAL] {BINARY LOGS | LOGS}`
    Flush,
    /// `PURGE {BINARY | MASTER} LOGS TO 'file'`
    PurgeTo(String),
    /// `PURGE {BINARY | MASTER} LOGS BEFORE expr` (the expression's text)
    PurgeBefore(String),
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
    if !(starts("SHOW") || starts("FLUSH") || starts("PURGE")) {
        return Ok(None);
    }
    let w = words(sql);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    Ok(match w.as_slice() {
        ["SHOW", "BINARY" | "MASTER", "LOGS"] => Some(BinlogStmt::ShowLogs),
        ["SHOW", "MASTER" | "BINLOG", "STATUS"] => Some(BinlogStmt::ShowStatus),
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

/// MariaDB's `sql_mode` bits for a mode list (`STRICT_TRANS_TABLES,...`), as query events
/// carry it; unknown names add nothing.
pub fn sql_mode_bits(modes: &str) -> u64 {
    const NAMES: &[&str] = &[
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
    modes
        .split(',')
        .filter_map(|m| {
            let m = m.trim();
            NAMES.iter().position(|n| n.eq_ignore_ascii_case(m))
        })
        .fold(0, |acc, i| acc | (1u64 << i))
}

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
        assert!(parse("PURGE BINARY LOGS").is_err());
        for other in [
            "SHOW TABLES",
            "FLUSH TABLES",
            "FLUSH STATUS",
            "SELECT 1",
            "SHOW BINLOG EVENTS",
        ] {
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
    }
}
