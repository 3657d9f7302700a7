//! Values, column types and table definitions: the vocabulary the SQL layer and the engine
//! share. Nothing here knows about pages.

use std::cmp::Ordering;
use std::fmt;

/// A single SQL value as stored by the engine.
///
/// Strings are bytes; how they compare is their column's [`crate::Collation`].
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    /// An integer above `i64::MAX` (BIGINT UNSIGNED's upper half). Never holds a value that
    /// fits `Int`: build it with `Value::from_u64` / `Value::from_i128`, which keep one form
    /// per number.
    UInt(u64),
    Double(f64),
    Bytes(Vec<u8>),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }
    /// The integer `u`: `Int` when it fits, else `UInt`.
    pub fn from_u64(u: u64) -> Value {
        match i64::try_from(u) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(u),
        }
    }
    /// The integer `i` when it lies in -2^63 ..= 2^64 - 1 (`Int` when it fits, else `UInt`).
    pub fn from_i128(i: i128) -> Option<Value> {
        match i64::try_from(i) {
            Ok(v) => Some(Value::Int(v)),
            Err(_) => u64::try_from(i).ok().map(Value::UInt),
        }
    }
    /// The value of an integer (`Int` or `UInt`).
    pub fn as_i128(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(i128::from(*v)),
            Value::UInt(u) => Some(i128::from(*u)),
            _ => None,
        }
    }
    /// True for `Int` and `UInt`.
    pub fn is_integer(&self) -> bool {
        matches!(self, Value::Int(_) | Value::UInt(_))
    }
    /// Total order used for keys: NULL < numbers < bytes; numbers compare numerically.
    pub fn key_cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (Int(a), Int(b)) => a.cmp(b),
            (UInt(a), UInt(b)) => a.cmp(b),
            (Int(_), UInt(_)) => Ordering::Less,
            (UInt(_), Int(_)) => Ordering::Greater,
            (Int(a), Double(b)) => (*a as f64).total_cmp(b),
            (Double(a), Int(b)) => a.total_cmp(&(*b as f64)),
            (UInt(a), Double(b)) => (*a as f64).total_cmp(b),
            (Double(a), UInt(b)) => a.total_cmp(&(*b as f64)),
            (Double(a), Double(b)) => a.total_cmp(b),
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Bytes(_), _) => Ordering::Greater,
            (_, Bytes(_)) => Ordering::Less,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::Bytes(b) => write!(f, "{}", String::from_utf8_lossy(b)),
        }
    }
}

/// A row: one value per column, in column order.
pub type Row = Vec<Value>;

/// Column storage classes the engine knows. The SQL layer maps MySQL types onto these and
/// coerces values before they reach the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// Integer of `bytes` width (1, 2, 3, 4, 8), stored as i64.
    Int {
        bytes: u8,
        unsigned: bool,
    },
    Float,
    Double,
    /// DECIMAL(p, s) [UNSIGNED], stored as its text form.
    Decimal {
        precision: u8,
        scale: u8,
        unsigned: bool,
    },
    Char(u32),
    VarChar(u32),
    /// TINYTEXT, TEXT, MEDIUMTEXT, LONGTEXT (and JSON, a LONGTEXT).
    Text(LobSize),
    /// TINYBLOB, BLOB, MEDIUMBLOB, LONGBLOB.
    Blob(LobSize),
    /// BINARY(n): exactly `n` bytes (1..=255), shorter values padded with zero bytes.
    Binary(u32),
    /// VARBINARY(n): up to `n` bytes (1..=65532).
    VarBinary(u32),
    Date,
    /// DATETIME(fsp): `YYYY-MM-DD HH:MM:SS`, then `.` and exactly `fsp` (1..=6) fraction
    /// digits when `fsp` > 0 (one width per column, so byte order is time order).
    DateTime(u8),
    /// TIMESTAMP(fsp), stored as DATETIME(fsp) text (UTC).
    Timestamp(u8),
    /// YEAR: 1901..=2155 or 0 (shown as `0000`), stored as `Value::Int`.
    Year,
    /// BIT(n), n = 1..=64: an unsigned number below 2^n, stored as an integer (`Value::Int`,
    /// `Value::UInt` past 2^63); the protocol shows its ceil(n / 8) big-endian bytes.
    Bit(u8),
    /// TIME(fsp): a signed duration stored as its text `[-]HH:MM:SS` (two or three hour
    /// digits), then `.` and exactly `fsp` fraction digits when fsp > 0. Its key parts are its
    /// microseconds (`keys::time_micros`), as text order is not time order.
    Time(u8),
    /// SET('a', 'b', ...) (at most 64 members): any of the members, stored as their texts in
    /// member order joined by `,` (the SQL layer maps input onto members; a number is a bit
    /// mask).
    Set(Vec<String>),
    /// ENUM('a', 'b', ...): one of the members, stored as that member's text (the SQL layer
    /// maps input onto a member; 1..n by number).
    Enum(Vec<String>),
}

/// The size class of a TEXT or BLOB column: the longest value it holds, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LobSize {
    Tiny,
    Regular,
    Medium,
    Long,
}

impl LobSize {
    /// The longest value, in bytes (MySQL's limits).
    pub fn max_bytes(self) -> u64 {
        match self {
            LobSize::Tiny => 255,
            LobSize::Regular => 65_535,
            LobSize::Medium => 16_777_215,
            LobSize::Long => 4_294_967_295,
        }
    }
    /// The smallest class holding values of `bytes` bytes.
    pub fn for_bytes(bytes: u64) -> LobSize {
        [LobSize::Tiny, LobSize::Regular, LobSize::Medium]
            .into_iter()
            .find(|s| bytes <= s.max_bytes())
            .unwrap_or(LobSize::Long)
    }
    /// The type name's prefix: `tiny`, ``, `medium`, `long`.
    pub fn prefix(self) -> &'static str {
        match self {
            LobSize::Tiny => "tiny",
            LobSize::Regular => "",
            LobSize::Medium => "medium",
            LobSize::Long => "long",
        }
    }
}

impl ColumnType {
    /// True when values of this type are stored as `Value::Int`.
    pub fn is_integer(&self) -> bool {
        matches!(self, ColumnType::Int { .. })
    }
    /// Fractional-second digits of a DATETIME / TIMESTAMP (0..=6); None for other types.
    pub fn fsp(&self) -> Option<u8> {
        match self {
            ColumnType::DateTime(n) | ColumnType::Timestamp(n) => Some(*n),
            _ => None,
        }
    }
    /// True for the byte-string types with no character set: BLOBs, BINARY and VARBINARY.
    pub fn is_binary_string(&self) -> bool {
        matches!(
            self,
            ColumnType::Blob(_) | ColumnType::Binary(_) | ColumnType::VarBinary(_)
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    pub auto_increment: bool,
    pub default: Option<Value>,
    /// For a column added by ALTER TABLE ... ADD COLUMN: the value of rows stored before it
    /// existed (their stored rows are shorter); None for columns the table was created with.
    pub fill: Option<Value>,
    /// How text values of this column compare, sort and form index keys (ignored for
    /// non-text types, which are `Binary`).
    pub collation: crate::collation::Collation,
    /// `ON UPDATE CURRENT_TIMESTAMP` (DATETIME / TIMESTAMP only): an UPDATE that changes the
    /// row and does not assign this column sets it to the current time.
    pub on_update_now: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexDef {
    pub name: String,
    /// Column positions in the table.
    pub columns: Vec<usize>,
    pub unique: bool,
}

/// What a foreign key does to the rows that reference a parent row being deleted or having its
/// referenced columns changed. `Restrict` (also the default) and `NoAction` both refuse the
/// change (InnoDB checks at once; they differ only in how SHOW CREATE TABLE prints them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FkAction {
    Restrict,
    NoAction,
    Cascade,
    SetNull,
}

/// A FOREIGN KEY constraint, kept in the child (referencing) table's definition. The parent is
/// named (database, table, columns), as InnoDB does: it may not exist while
/// `foreign_key_checks = 0`, and a renamed parent is followed by rewriting this name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForeignKeyDef {
    /// Constraint name, unique among the foreign keys of its database.
    pub name: String,
    /// Column positions in the child table.
    pub columns: Vec<usize>,
    pub parent_db: String,
    pub parent_table: String,
    /// Column names in the parent table (same count as `columns`).
    pub parent_columns: Vec<String>,
    pub on_delete: FkAction,
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    /// The constraint references table `db`.`table` (names compare as the catalog's do).
    pub fn references(&self, db: &str, table: &str) -> bool {
        self.parent_db == db && self.parent_table == table
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Column positions of the primary key. Empty = the engine adds a hidden row id.
    pub primary_key: Vec<usize>,
    /// Secondary indexes (unique ones also keep their values unique).
    pub indexes: Vec<IndexDef>,
    /// FOREIGN KEY constraints of this (child) table; enforced by the SQL layer.
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// CHECK constraints, in declaration order; enforced by the SQL layer.
    pub checks: Vec<CheckDef>,
}

/// A CHECK constraint: a condition every written row must not make false. The engine stores
/// its text and never evaluates it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckDef {
    /// Constraint name, unique in its table (a column-level check is named after its column).
    pub name: String,
    /// Declared with a column (`a INT CHECK (a > 0)`) rather than as a table constraint.
    pub column_level: bool,
    /// The condition as SQL text (MariaDB's spelling: backquoted names, lower-case keywords).
    pub expr: String,
}

impl TableDef {
    /// Positions in a stored row of the values that form its key in the primary tree: the
    /// primary key's columns or, for a table without one, the hidden row id stored after the
    /// last column (rows of such a table are one value wider than `columns`).
    pub fn key_columns(&self) -> std::borrow::Cow<'_, [usize]> {
        if self.primary_key.is_empty() {
            std::borrow::Cow::Owned(vec![self.columns.len()])
        } else {
            std::borrow::Cow::Borrowed(&self.primary_key)
        }
    }
    /// The table has no primary key: the engine keys its rows by a hidden row id.
    pub fn has_hidden_key(&self) -> bool {
        self.primary_key.is_empty()
    }
    /// Values in a stored row: the columns, plus the hidden row id when there is one.
    pub fn stored_width(&self) -> usize {
        self.columns.len() + usize::from(self.has_hidden_key())
    }

    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }
}

/// A view: a named, stored SELECT (`CREATE VIEW`). The engine keeps it in the catalog and
/// never reads its query; the SQL layer plans it wherever the view is named.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewDef {
    pub name: String,
    /// The view's SELECT as the SQL layer wrote it (table names relative to the view's
    /// database, every select-list item named).
    pub query: String,
    /// `UNDEFINED`, `MERGE` or `TEMPTABLE` (kept and shown; every view is merged).
    pub algorithm: String,
    /// `user@host`, as MariaDB's INFORMATION_SCHEMA.VIEWS.DEFINER shows it.
    pub definer: String,
    /// `DEFINER` or `INVOKER`.
    pub security: String,
    /// `NONE`, `CASCADED` or `LOCAL`.
    pub check_option: String,
    /// The session's character_set_client and collation_connection at CREATE VIEW.
    pub charset_client: String,
    pub collation_connection: String,
}
