//! What a statement returns, in the terms the wire protocol needs — the seam between the SQL
//! layer and the server's protocol module. No protocol encoding happens here.

pub use tierdb_engine::Value;

/// The MySQL column type to announce in a result set's column definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnKind {
    Tiny,
    Short,
    Int24,
    Long,
    LongLong,
    Float,
    Double,
    NewDecimal,
    /// CHAR(n)
    String,
    /// VARCHAR(n) and computed strings
    VarString,
    Blob,
    Date,
    DateTime,
    Timestamp,
    /// YEAR: an integer shown with four digits (`0000`).
    Year,
    /// TIME(n): `[-]HH:MM:SS[.f]` text (`crate::time`).
    Time,
    /// BIT(n): an integer, sent as its ceil(n / 8) big-endian bytes (`length` is n).
    Bit,
    Null,
}

/// One column of a result set.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// Original table name ("" for expressions).
    pub table: String,
    /// Database name ("" for expressions).
    pub schema: String,
    pub kind: ColumnKind,
    /// Display length in characters/digits (MySQL's "column_length").
    pub length: u32,
    pub decimals: u8,
    pub unsigned: bool,
    pub not_null: bool,
    pub primary_key: bool,
    /// True for text columns (utf8mb4 charset); false for numbers/binary (charset 63).
    pub is_text: bool,
    /// Strings of this column compare byte by byte (a BLOB or a `*_bin` text column); false
    /// for the default case-insensitive collation and for non-strings.
    pub binary: bool,
    /// An ENUM's or SET's members (a base table's column, also read through a derived table
    /// or a view): numeric contexts and ORDER BY read its number. Never sent to clients.
    pub members: Option<crate::compile::Members>,
}

impl Column {
    /// A computed text column (SHOW output, @@variables, string expressions): 64 characters
    /// announced (CREATE TABLE ... SELECT widens it to the longest value).
    pub fn text(name: impl Into<String>) -> Column {
        Column {
            name: name.into(),
            table: String::new(),
            schema: String::new(),
            kind: ColumnKind::VarString,
            length: 64,
            decimals: 0,
            unsigned: false,
            not_null: false,
            primary_key: false,
            is_text: true,
            binary: false,
            members: None,
        }
    }
    /// A computed BIGINT column (COUNT(*), numeric expressions).
    pub fn bigint(name: impl Into<String>) -> Column {
        Column {
            kind: ColumnKind::LongLong,
            length: 21,
            is_text: false,
            binary: false,
            ..Column::text(name)
        }
    }
}

/// The result of one statement.
/// One entry of SHOW WARNINGS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// "Note", "Warning", or "Error" (the statement's error, listed after it failed).
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

impl Warning {
    pub fn warn(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Warning",
            code,
            message: message.into(),
        }
    }
    pub fn error(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Error",
            code,
            message: message.into(),
        }
    }
    pub fn note(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: "Note",
            code,
            message: message.into(),
        }
    }
}

/// The warnings a statement raised: the first `MAX_WARNINGS` (MariaDB's `max_error_count`)
/// listed for SHOW WARNINGS, the rest only counted (as the OK packet and `@@warning_count`
/// count them all).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Raised {
    pub listed: Vec<Warning>,
    pub unlisted: usize,
}

impl Raised {
    pub fn push(&mut self, w: Warning) {
        if self.listed.len() < crate::expr::MAX_WARNINGS {
            self.listed.push(w);
        } else {
            self.unlisted += 1;
        }
    }
    /// Every warning raised, listed or not.
    pub fn count(&self) -> usize {
        self.listed.len() + self.unlisted
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum QueryResult {
    /// OK packet.
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
    /// A result set; `rows[i][j]` is the value of column `j` in row `i`.
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<Value>>,
    },
    /// `LOAD DATA LOCAL INFILE`: the statement needs the client's file `file` (the protocol
    /// asks the client for it and hands the bytes to `Session::load_local`, whose result is
    /// the statement's).
    LocalInfile { file: String },
}

impl QueryResult {
    pub fn ok() -> QueryResult {
        QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        }
    }
}

/// An error for the client: MySQL error number, SQLSTATE and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ERROR {code} ({state}): {message}")]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
}

impl SqlError {
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            message: message.into(),
        }
    }
    /// 1064: syntax error.
    pub fn syntax(message: impl Into<String>) -> SqlError {
        SqlError::new(1064, "42000", message)
    }
    /// 1235: valid SQL that tierdb does not support; `what` names the construct.
    pub fn unsupported(what: impl std::fmt::Display) -> SqlError {
        SqlError::new(
            1235,
            "42000",
            format!("This version of tierdb doesn't yet support '{what}'"),
        )
    }
}

impl From<tierdb_engine::Error> for SqlError {
    fn from(e: tierdb_engine::Error) -> SqlError {
        let (code, state) = e.mysql_code();
        SqlError::new(code, state, e.to_string())
    }
}

/// What PREPARE tells the client.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedInfo {
    pub statement_id: u32,
    pub param_count: u16,
    /// Result columns when known at prepare time (may be empty).
    pub columns: Vec<Column>,
}
