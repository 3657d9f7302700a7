//! Table definitions: CREATE TABLE (sqlparser AST) → engine `TableDef`, MySQL type names for
//! SHOW COLUMNS / SHOW CREATE TABLE, and column defaults.
//!
//! Owns: the mapping of MySQL column types onto engine storage classes and which table
//! features are refused (SET, ...).
//! Must never: talk to the engine (the session runs the DDL), or accept a definition it
//! would later store or show differently.

use crate::coerce::{self, now_text};
use crate::compile::{literal, object_name_last};
use crate::exec::is_text_type;
use crate::result::{Column, SqlError};
use sqlparser::ast;
use tierdb_engine::{Collation, ColumnDef, ColumnType, IndexDef, LobSize, TableDef, Value};

/// The stored default of a DATETIME/TIMESTAMP column declared `DEFAULT CURRENT_TIMESTAMP`.
pub const CURRENT_TIMESTAMP: &[u8] = b"CURRENT_TIMESTAMP";

pub fn column_type(dt: &ast::DataType, col: &str) -> Result<ColumnType, SqlError> {
    use ast::DataType as D;
    let int = |bytes: u8, unsigned: bool| ColumnType::Int { bytes, unsigned };
    let char_len =
        |l: &Option<ast::CharacterLength>, default: Option<u64>| -> Result<u32, SqlError> {
            match l {
                Some(ast::CharacterLength::IntegerLength { length, .. }) => Ok(*length as u32),
                Some(ast::CharacterLength::Max) => Err(SqlError::unsupported("VARCHAR(MAX)")),
                None => default
                    .map(|d| d as u32)
                    .ok_or_else(|| SqlError::syntax(format!("column '{col}' needs a length"))),
            }
        };
    let too_long = |max: u32| {
        SqlError::new(
            1074,
            "42000",
            format!(
                "Column length too big for column '{col}' (max = {max}); use BLOB or TEXT instead"
            ),
        )
    };
    Ok(match dt {
        D::TinyInt(_) | D::Bool | D::Boolean => int(1, false),
        D::TinyIntUnsigned(_) | D::UTinyInt => int(1, true),
        D::SmallInt(_) | D::Int2(_) => int(2, false),
        D::SmallIntUnsigned(_) | D::Int2Unsigned(_) | D::USmallInt => int(2, true),
        D::MediumInt(_) => int(3, false),
        D::MediumIntUnsigned(_) => int(3, true),
        D::Int(_) | D::Integer(_) | D::Int4(_) => int(4, false),
        D::IntUnsigned(_) | D::IntegerUnsigned(_) | D::Int4Unsigned(_) => int(4, true),
        D::BigInt(_) | D::Int8(_) => int(8, false),
        D::BigIntUnsigned(_) | D::Int8Unsigned(_) | D::UBigInt => int(8, true),
        D::Float(info) | D::FloatUnsigned(info) => match info {
            ast::ExactNumberInfo::Precision(p) | ast::ExactNumberInfo::PrecisionAndScale(p, _)
                if *p > 24 =>
            {
                ColumnType::Double
            }
            _ => ColumnType::Float,
        },
        D::Float4 => ColumnType::Float,
        D::Real
        | D::RealUnsigned
        | D::Double(_)
        | D::DoubleUnsigned(_)
        | D::DoublePrecision
        | D::DoublePrecisionUnsigned
        | D::Float8 => ColumnType::Double,
        D::Decimal(info)
        | D::DecimalUnsigned(info)
        | D::Numeric(info)
        | D::Dec(info)
        | D::DecUnsigned(info) => {
            let (p, s) = match info {
                ast::ExactNumberInfo::None => (10, 0),
                ast::ExactNumberInfo::Precision(p) => (*p, 0),
                ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, (*s).max(0) as u64),
            };
            if p > 65 || p == 0 {
                return Err(SqlError::new(
                    1426,
                    "42000",
                    format!("Too big precision {p} specified for '{col}'. Maximum is 65."),
                ));
            }
            if s > 30 || s > p {
                return Err(SqlError::new(
                    1425,
                    "42000",
                    format!("Too big scale {s} specified for '{col}'. Maximum is 30."),
                ));
            }
            ColumnType::Decimal {
                precision: p as u8,
                scale: s as u8,
                unsigned: matches!(dt, D::DecimalUnsigned(_) | D::DecUnsigned(_)),
            }
        }
        D::Char(l) | D::Character(l) => {
            let n = char_len(l, Some(1))?;
            if n > 255 {
                return Err(too_long(255));
            }
            ColumnType::Char(n)
        }
        D::Varchar(l) | D::CharVarying(l) | D::CharacterVarying(l) | D::Nvarchar(l) => {
            let n = char_len(l, None)?;
            if n > 16383 {
                return Err(too_long(16383));
            }
            ColumnType::VarChar(n)
        }
        // JSON is text compared byte by byte (MariaDB: LONGTEXT COLLATE utf8mb4_bin).
        D::TinyText => ColumnType::Text(LobSize::Tiny),
        D::Text => ColumnType::Text(LobSize::Regular),
        D::MediumText => ColumnType::Text(LobSize::Medium),
        D::LongText | D::JSON => ColumnType::Text(LobSize::Long),
        D::TinyBlob => ColumnType::Blob(LobSize::Tiny),
        D::Blob(_) => ColumnType::Blob(LobSize::Regular),
        D::Binary(l) => {
            let n = l.unwrap_or(1);
            if n > u64::from(MAX_BINARY) {
                return Err(too_long(MAX_BINARY));
            }
            ColumnType::Binary(n as u32)
        }
        D::Varbinary(l) => {
            let n = match l {
                Some(ast::BinaryLength::IntegerLength { length }) => *length,
                Some(ast::BinaryLength::Max) => {
                    return Err(SqlError::unsupported("VARBINARY(MAX)"))
                }
                None => return Err(SqlError::syntax(format!("column '{col}' needs a length"))),
            };
            if n > u64::from(MAX_VARBINARY) {
                return Err(too_long(MAX_VARBINARY));
            }
            ColumnType::VarBinary(n as u32)
        }
        D::MediumBlob => ColumnType::Blob(LobSize::Medium),
        D::LongBlob => ColumnType::Blob(LobSize::Long),
        D::Date => ColumnType::Date,
        D::Enum(members, _) => {
            let mut names: Vec<String> = Vec::with_capacity(members.len());
            for m in members {
                let ast::EnumMember::Name(n) = m else {
                    return Err(SqlError::unsupported("ENUM members with values"));
                };
                // Trailing spaces are not part of a member (MariaDB strips them); duplicates
                // are found once the column's collation is known (`parse_column`).
                names.push(n.trim_end_matches(' ').to_string());
            }
            if names.is_empty() || names.len() > 65_535 {
                return Err(SqlError::syntax(format!(
                    "ENUM of column '{col}' needs 1 to 65535 values"
                )));
            }
            ColumnType::Enum(names)
        }
        D::Set(members) => {
            let names: Vec<String> = members
                .iter()
                .map(|n| n.trim_end_matches(' ').to_string())
                .collect();
            if let Some(bad) = names.iter().find(|n| n.contains(',')) {
                return Err(SqlError::new(
                    1367,
                    "22007",
                    format!("Illegal set '{bad}' value found during parsing"),
                ));
            }
            if names.is_empty() || names.len() > 64 {
                return Err(SqlError::new(
                    1097,
                    "HY000",
                    format!("Too many strings for column {col} and SET"),
                ));
            }
            ColumnType::Set(names)
        }
        D::Datetime(n) => ColumnType::DateTime(fsp_of(*n, col)?),
        D::Time(n, ast::TimezoneInfo::None) => ColumnType::Time(fsp_of(*n, col)?),
        // (BIT(0) is BIT(1), as in MariaDB.)
        D::Bit(n) => match n.unwrap_or(1) {
            n @ 0..=64 => ColumnType::Bit(n.max(1) as u8),
            _ => {
                return Err(SqlError::new(
                    1439,
                    "42000",
                    format!("Display width out of range for '{col}' (max = 64)"),
                ))
            }
        },
        D::Timestamp(n, _) => ColumnType::Timestamp(fsp_of(*n, col)?),
        // SERIAL: BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE (the rest in `parse_column`).
        D::Custom(name, args) if args.is_empty() && is_serial_name(name) => ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
        // YEAR, YEAR(4); any other width becomes YEAR(4), as in MariaDB.
        D::Custom(name, args)
            if object_name_last(name).eq_ignore_ascii_case("year")
                && matches!(args.as_slice(), [] | [ast::TypeModifier::Number(..)]) =>
        {
            ColumnType::Year
        }
        other => return Err(SqlError::unsupported(format!("column type {other}"))),
    })
}

/// Fractional-second digits of `DATETIME(n)` / `TIMESTAMP(n)` / `NOW(n)` (0 when not
/// given); 1426 past 6, naming `what`, as MariaDB.
pub fn fsp_of(n: Option<u64>, what: &str) -> Result<u8, SqlError> {
    match n {
        None => Ok(0),
        Some(n) if n <= 6 => Ok(n as u8),
        Some(_) => Err(SqlError::new(
            1426,
            "42000",
            format!("Too big precision specified for '{what}'. Maximum is 6"),
        )),
    }
}

/// `current_timestamp()` or `current_timestamp(n)`: the current-time DEFAULT / ON UPDATE of a
/// column with `fsp` fraction digits, as MariaDB shows it (at the column's precision).
pub fn now_sql(fsp: u8) -> String {
    if fsp == 0 {
        "current_timestamp()".into()
    } else {
        format!("current_timestamp({fsp})")
    }
}

fn is_serial_name(name: &ast::ObjectName) -> bool {
    name.0.len() == 1 && object_name_last(name).eq_ignore_ascii_case("SERIAL")
}

/// The longest BINARY(n) and VARBINARY(n), in bytes (MariaDB's limits).
const MAX_BINARY: u32 = 255;
const MAX_VARBINARY: u32 = 65_532;

/// An ENUM's or SET's members as SHOW CREATE TABLE lists them: `'a','b'`.
fn member_list(members: &[String]) -> String {
    members
        .iter()
        .map(|m| format!("'{}'", m.replace('\\', "\\\\").replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

/// MySQL's name of a column type (as SHOW COLUMNS prints it, MariaDB style).
pub fn type_name(ty: &ColumnType) -> String {
    match ty {
        ColumnType::Int { bytes, unsigned } => {
            let (n, w) = match bytes {
                1 => ("tinyint", 4),
                2 => ("smallint", 6),
                3 => ("mediumint", 9),
                4 => ("int", 11),
                _ => ("bigint", 20),
            };
            if *unsigned {
                format!("{n}({}) unsigned", if *bytes == 8 { 20 } else { w - 1 })
            } else {
                format!("{n}({w})")
            }
        }
        ColumnType::Float => "float".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Decimal {
            precision,
            scale,
            unsigned,
        } => format!(
            "decimal({precision},{scale}){}",
            if *unsigned { " unsigned" } else { "" }
        ),
        ColumnType::Char(n) => format!("char({n})"),
        ColumnType::VarChar(n) => format!("varchar({n})"),
        ColumnType::Text(s) => format!("{}text", s.prefix()),
        ColumnType::Blob(s) => format!("{}blob", s.prefix()),
        ColumnType::Binary(n) => format!("binary({n})"),
        ColumnType::VarBinary(n) => format!("varbinary({n})"),
        ColumnType::Date => "date".into(),
        ColumnType::Year => "year(4)".into(),
        ColumnType::Bit(n) => format!("bit({n})"),
        ColumnType::Time(0) => "time".into(),
        ColumnType::Time(n) => format!("time({n})"),
        ColumnType::DateTime(0) => "datetime".into(),
        ColumnType::Timestamp(0) => "timestamp".into(),
        ColumnType::DateTime(n) => format!("datetime({n})"),
        ColumnType::Timestamp(n) => format!("timestamp({n})"),
        ColumnType::Enum(members) => format!("enum({})", member_list(members)),
        ColumnType::Set(members) => format!("set({})", member_list(members)),
    }
}

fn default_value(e: &ast::Expr, col: &ColumnDef) -> Result<Option<Value>, SqlError> {
    // `DEFAULT (x)`, as ORMs write it (SQLAlchemy's `server_default=func.now()`), is `x`.
    let mut e = e;
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    let invalid = || {
        SqlError::new(
            1067,
            "42000",
            format!("Invalid default value for '{}'", col.name),
        )
    };
    let v = match e {
        ast::Expr::Value(v) => literal(&v.value)?,
        ast::Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => match &**expr {
            ast::Expr::Value(v) => match literal(&v.value)? {
                Value::Int(i) => Value::Int(-i),
                Value::Double(d) => Value::Double(-d),
                _ => return Err(invalid()),
            },
            _ => return Err(invalid()),
        },
        ast::Expr::Function(_) if is_now_call(e) => {
            if col.ty.fsp().is_none() {
                return Err(invalid());
            }
            return Ok(Some(Value::Bytes(CURRENT_TIMESTAMP.to_vec())));
        }
        other => return Err(SqlError::unsupported(format!("DEFAULT {other}"))),
    };
    if v.is_null() {
        if !col.nullable {
            return Err(invalid());
        }
        return Ok(None);
    }
    // An ENUM's default names a member (a number is 1067, as MariaDB).
    if matches!(col.ty, ColumnType::Enum(_)) && !matches!(v, Value::Bytes(_)) {
        return Err(invalid());
    }
    coerce::coerce_to_column(v, col, 1)
        .map(Some)
        .map_err(|_| invalid())
}

/// `CURRENT_TIMESTAMP` / `NOW()` / `LOCALTIMESTAMP` / `LOCALTIME`: the current time as a
/// column DEFAULT or ON UPDATE value.
fn is_now_call(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Function(f) if matches!(
        object_name_last(&f.name).to_ascii_uppercase().as_str(),
        "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIMESTAMP" | "LOCALTIME"
    ))
}

/// The value a column gets when an INSERT does not name it (`None` = no default: error).
pub fn column_default(col: &ColumnDef) -> Option<Value> {
    match &col.default {
        // (A text column may hold the text 'CURRENT_TIMESTAMP' as its default.)
        Some(Value::Bytes(b)) if b == CURRENT_TIMESTAMP && col.ty.fsp().is_some() => {
            col.ty.fsp().map(|n| Value::Bytes(now_text(n).into_bytes()))
        }
        Some(v) => Some(v.clone()),
        None if col.nullable || col.auto_increment => Some(Value::Null),
        // A NOT NULL ENUM without a default starts at its first member (as MariaDB).
        None => match &col.ty {
            ColumnType::Enum(m) => m.first().map(|f| Value::Bytes(f.clone().into_bytes())),
            _ => None,
        },
    }
}

fn index_columns(cols: &[ast::IndexColumn], def: &TableDef) -> Result<Vec<usize>, SqlError> {
    cols.iter()
        .map(|c| match &c.column.expr {
            ast::Expr::Identifier(i) => def.column_index(&i.value).ok_or_else(|| {
                SqlError::new(
                    1072,
                    "42000",
                    format!("Key column '{}' doesn't exist in table", i.value),
                )
            }),
            other => Err(SqlError::unsupported(format!("index on {other}"))),
        })
        .collect()
}

/// The secondary indexes in the order MariaDB lists them (SHOW CREATE TABLE, SHOW INDEX):
/// unique ones over NOT NULL columns, other unique ones, then the rest, each group in
/// definition order.
pub fn display_order(def: &TableDef) -> Vec<&IndexDef> {
    let mut v: Vec<&IndexDef> = def.indexes.iter().collect();
    v.sort_by_key(|i| match i.unique {
        true if i
            .columns
            .iter()
            .all(|&c| def.columns.get(c).is_some_and(|c| !c.nullable)) =>
        {
            0
        }
        true => 1,
        false => 2,
    });
    v
}

/// Adds an index to `def`, named as MySQL names it: the given name, else the first column's
/// name (`col_2`, `col_3`, ... when taken). 1061 for a name already used.
/// The name MariaDB gives an index declared without one, named after its first column
/// `base`: `base`, else `base_2`, `base_3`, ... (never `PRIMARY`).
pub(crate) fn free_index_name(def: &TableDef, base: &str) -> String {
    let taken = |n: &str| {
        n.eq_ignore_ascii_case("PRIMARY")
            || def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
    };
    let mut name = base.to_string();
    let mut k = 2;
    while taken(&name) {
        name = format!("{base}_{k}");
        k += 1;
    }
    name
}

fn add_index(
    def: &mut TableDef,
    name: Option<String>,
    columns: Vec<usize>,
    unique: bool,
) -> Result<(), SqlError> {
    let taken =
        |def: &TableDef, n: &str| def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n));
    if columns.is_empty() {
        return Err(SqlError::new(
            1064,
            "42000",
            "An index needs at least one column",
        ));
    }
    let name = match name {
        Some(n) if n.eq_ignore_ascii_case("PRIMARY") => {
            return Err(SqlError::new(
                1280,
                "42000",
                format!("Incorrect index name '{n}'"),
            ))
        }
        Some(n) if taken(def, &n) => {
            return Err(SqlError::new(
                1061,
                "42000",
                format!("Duplicate key name '{n}'"),
            ))
        }
        Some(n) => n,
        None => free_index_name(def, &def.columns[columns[0]].name),
    };
    def.indexes.push(IndexDef {
        name,
        columns,
        unique,
    });
    Ok(())
}

/// One column definition as written: the column, whether it was declared PRIMARY KEY or
/// UNIQUE, and its DEFAULT (converted by the caller once the nullability is final).
struct ParsedColumn {
    col: ColumnDef,
    primary: bool,
    unique: bool,
    default: Option<ast::Expr>,
    /// A column-level `REFERENCES parent (col)` (CREATE TABLE only).
    references: Option<ast::ForeignKeyConstraint>,
    /// A column-level `CHECK (...)` (CREATE TABLE only; the checks themselves are made by
    /// `check::declared`).
    check: bool,
}

impl ParsedColumn {
    /// ALTER TABLE cannot take a column-level REFERENCES (add the FOREIGN KEY itself).
    fn without_references(self) -> Result<ParsedColumn, SqlError> {
        if self.references.is_some() {
            return Err(SqlError::unsupported(
                "REFERENCES on a column in ALTER TABLE (use ADD FOREIGN KEY)",
            ));
        }
        if self.check {
            return Err(SqlError::unsupported(
                "CHECK constraints in ALTER TABLE column definitions",
            ));
        }
        Ok(self)
    }
}

/// The collation a collation name selects: `*_bin` and `binary` compare bytes, `*_ci` are
/// case-insensitive (all served by tierdb's `utf8mb4_general_ci` rules), `*_cs` compare
/// bytes too (the nearest case-sensitive rules tierdb has). 1273 for anything else.
pub(crate) fn collation_named(name: &str) -> Result<Collation, SqlError> {
    let n = name.to_ascii_lowercase();
    let charset_ok = CHARSETS.iter().any(|c| n.starts_with(&format!("{c}_")));
    if n == "binary" || (charset_ok && (n.ends_with("_bin") || n.ends_with("_cs"))) {
        Ok(Collation::Binary)
    } else if charset_ok && n.ends_with("_ci") {
        Ok(Collation::GeneralCi)
    } else {
        Err(SqlError::new(
            1273,
            "HY000",
            format!("Unknown collation: '{name}'"),
        ))
    }
}

/// Character sets tierdb accepts in DDL; all but `binary` get a case-insensitive collation.
const CHARSETS: &[&str] = &["utf8mb4", "utf8mb3", "utf8", "latin1", "ascii"];

/// The default collation of a character set name (1115 for an unknown one).
fn charset_named(name: &str) -> Result<Collation, SqlError> {
    let n = name.to_ascii_lowercase();
    if n == "binary" {
        Ok(Collation::Binary)
    } else if CHARSETS.contains(&n.as_str()) {
        Ok(Collation::GeneralCi)
    } else {
        Err(SqlError::new(
            1115,
            "42000",
            format!("Unknown character set: '{name}'"),
        ))
    }
}

/// The default collation of a new table's text columns: its `[DEFAULT] CHARSET` /
/// `COLLATE` options (a COLLATE wins), else `utf8mb4_general_ci` like MariaDB's default.
fn table_collation(options: &ast::CreateTableOptions) -> Result<Collation, SqlError> {
    let list = match options {
        ast::CreateTableOptions::Plain(l)
        | ast::CreateTableOptions::With(l)
        | ast::CreateTableOptions::Options(l)
        | ast::CreateTableOptions::TableProperties(l) => l.as_slice(),
        ast::CreateTableOptions::None => &[],
    };
    let mut by_charset = None;
    let mut by_collate = None;
    for o in list {
        if let ast::SqlOption::KeyValue { key, value } = o {
            let key = key.to_string().to_ascii_uppercase();
            let name = match value {
                ast::Expr::Value(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                },
                other => other.to_string(),
            };
            match key.as_str() {
                "DEFAULT CHARSET" | "CHARSET" | "DEFAULT CHARACTER SET" | "CHARACTER SET" => {
                    by_charset = Some(charset_named(&name)?)
                }
                "DEFAULT COLLATE" | "COLLATE" => by_collate = Some(collation_named(&name)?),
                _ => {}
            }
        }
    }
    Ok(by_collate.or(by_charset).unwrap_or(Collation::GeneralCi))
}

/// The default collation of an existing table's text columns (the catalog keeps collations
/// per column only): binary when it has text columns and all of them are binary — a table
/// created with `COLLATE=utf8mb4_bin`, or before collations were recorded — else
/// `utf8mb4_general_ci`. SHOW CREATE TABLE shows it, ADD COLUMN gives it to new columns.
pub fn table_default_collation(def: &TableDef) -> Collation {
    let mut text = def
        .columns
        .iter()
        .filter(|c| is_text_type(&c.ty))
        .peekable();
    if text.peek().is_some() && text.all(|c| c.collation == Collation::Binary) {
        Collation::Binary
    } else {
        Collation::GeneralCi
    }
}

/// The collation name MariaDB shows for column `c` (None for non-text columns).
pub fn collation_name(c: &ColumnDef) -> Option<&'static str> {
    is_text_type(&c.ty).then(|| c.collation.name())
}

/// Parses column `c` of a table whose columns so far are `def`'s (1060 for a name taken);
/// text columns get collation `text_default` unless they name their own.
/// 1060 when `name` belongs to a column of `def` other than the one at `pos` (a column
/// renamed to a name already taken).
pub(crate) fn check_rename(def: &TableDef, pos: usize, name: &str) -> Result<(), SqlError> {
    if def
        .columns
        .iter()
        .enumerate()
        .any(|(i, c)| i != pos && c.name.eq_ignore_ascii_case(name))
    {
        return Err(SqlError::new(
            1060,
            "42S21",
            format!("Duplicate column name '{name}'"),
        ));
    }
    Ok(())
}

fn parse_column(
    c: &ast::ColumnDef,
    def: &TableDef,
    text_default: Collation,
) -> Result<ParsedColumn, SqlError> {
    if def.column_index(&c.name.value).is_some() {
        return Err(SqlError::new(
            1060,
            "42S21",
            format!("Duplicate column name '{}'", c.name.value),
        ));
    }
    let ty = column_type(&c.data_type, &c.name.value)?;
    let text = is_text_type(&ty);
    let mut p = ParsedColumn {
        col: ColumnDef {
            name: c.name.value.clone(),
            ty,
            nullable: true,
            auto_increment: false,
            default: None,
            fill: None,
            collation: if text {
                text_default
            } else {
                Collation::Binary
            },
            on_update_now: false,
        },
        primary: false,
        unique: false,
        default: None,
        references: None,
        check: false,
    };
    if matches!(c.data_type, ast::DataType::JSON) {
        // (Its implicit `json_valid` check is made by CREATE TABLE; ALTER TABLE adds the
        // column without one.)
        p.col.collation = Collation::Binary;
    }
    if matches!(&c.data_type, ast::DataType::Custom(n, a) if a.is_empty() && is_serial_name(n)) {
        p.col.nullable = false;
        p.col.auto_increment = true;
        p.unique = true;
    }
    for o in &c.options {
        match &o.option {
            ast::ColumnOption::Null => p.col.nullable = true,
            ast::ColumnOption::NotNull => p.col.nullable = false,
            ast::ColumnOption::Default(e) => p.default = Some(e.clone()),
            ast::ColumnOption::DialectSpecific(toks)
                if toks
                    .iter()
                    .any(|t| t.to_string().eq_ignore_ascii_case("AUTO_INCREMENT")) =>
            {
                p.col.auto_increment = true;
            }
            ast::ColumnOption::PrimaryKey(_) => p.primary = true,
            ast::ColumnOption::Unique(_) => p.unique = true,
            ast::ColumnOption::CharacterSet(n) => {
                let c = charset_named(&object_name_last(n))?;
                if text {
                    p.col.collation = c;
                }
            }
            ast::ColumnOption::Collation(n) => {
                let c = collation_named(&object_name_last(n))?;
                if text {
                    p.col.collation = c;
                }
            }
            ast::ColumnOption::Comment(_) => {}
            ast::ColumnOption::OnUpdate(e) => {
                if !is_now_call(e) {
                    return Err(SqlError::syntax(format!(
                        "ON UPDATE {e}: only CURRENT_TIMESTAMP (or NOW(), LOCALTIMESTAMP) can follow ON UPDATE"
                    )));
                }
                if p.col.ty.fsp().is_none() {
                    return Err(SqlError::new(
                        1294,
                        "HY000",
                        format!("Invalid ON UPDATE clause for '{}' column", c.name.value),
                    ));
                }
                p.col.on_update_now = true;
            }
            ast::ColumnOption::ForeignKey(f) => p.references = Some(f.clone()),
            ast::ColumnOption::Check(_) => p.check = true,
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    if let ColumnType::Enum(members) | ColumnType::Set(members) = &p.col.ty {
        let kind = if matches!(p.col.ty, ColumnType::Set(_)) {
            "SET"
        } else {
            "ENUM"
        };
        for (i, m) in members.iter().enumerate() {
            let same = |x: &String| {
                crate::coerce::sort_cmp_in(
                    &Value::Bytes(x.as_bytes().to_vec()),
                    &Value::Bytes(m.as_bytes().to_vec()),
                    p.col.collation,
                )
                .is_eq()
            };
            if let Some(x) = members[..i].iter().find(|x| same(x)) {
                return Err(SqlError::new(
                    1291,
                    "HY000",
                    format!(
                        "Column '{}' has duplicated value '{x}' in {kind}",
                        c.name.value
                    ),
                ));
            }
        }
    }
    if p.col.on_update_now && !p.col.nullable && p.default.is_none() {
        // MariaDB gives such a column the zero date as its default.
        p.default = Some(ast::Expr::Value(
            ast::Value::SingleQuotedString("0000-00-00 00:00:00".into()).into(),
        ));
    }
    Ok(p)
}

/// `ALTER TABLE t ADD [COLUMN] c ...` → the engine column, with the value existing rows read
/// (`fill`): the DEFAULT (CURRENT_TIMESTAMP evaluated now), else NULL, else for a NOT NULL
/// column without a DEFAULT the type's implicit default (0, '', ...), as MariaDB fills them.
pub fn added_column(c: &ast::ColumnDef, def: &TableDef) -> Result<ColumnDef, SqlError> {
    match added_column_keys(c, def)? {
        (col, false, false) => Ok(col),
        _ => Err(SqlError::unsupported(
            "ADD COLUMN with PRIMARY KEY or UNIQUE without rewriting the table",
        )),
    }
}

/// `added_column`, and whether the column was declared PRIMARY KEY / UNIQUE (a rewriting
/// ALTER adds those keys).
pub fn added_column_keys(
    c: &ast::ColumnDef,
    def: &TableDef,
) -> Result<(ColumnDef, bool, bool), SqlError> {
    let p = parse_column(c, def, table_default_collation(def))?.without_references()?;
    if p.col.auto_increment {
        return Err(SqlError::unsupported(
            "ADD COLUMN with AUTO_INCREMENT (add the column, then fill it and make it AUTO_INCREMENT)",
        ));
    }
    let (primary, unique) = (p.primary, p.unique);
    let mut col = p.col;
    if primary {
        col.nullable = false;
    }
    if let Some(e) = &p.default {
        col.default = default_value(e, &col)?;
    }
    let fill = match column_default(&col) {
        Some(v) => v,
        None => implicit_default(&col.ty),
    };
    col.fill = Some(fill);
    Ok((col, primary, unique))
}

/// `ALTER TABLE t MODIFY c ...` / `CHANGE old c ...`: the new definition of column `pos`
/// (MySQL's rule: it replaces the old one whole — attributes not restated are gone).
pub fn changed_column(
    c: &ast::ColumnDef,
    def: &TableDef,
    pos: usize,
) -> Result<ColumnDef, SqlError> {
    let (col, primary, unique) = changed_column_keys(c, def, pos)?;
    if primary || unique {
        return Err(SqlError::unsupported(
            "MODIFY / CHANGE COLUMN with PRIMARY KEY or UNIQUE (change the column, then add the index)",
        ));
    }
    Ok(col)
}

/// `changed_column`, also telling whether the new definition says PRIMARY KEY and UNIQUE.
pub fn changed_column_keys(
    c: &ast::ColumnDef,
    def: &TableDef,
    pos: usize,
) -> Result<(ColumnDef, bool, bool), SqlError> {
    // Checked against the other columns only: the column may keep its own name.
    let mut others = def.clone();
    others.columns.remove(pos);
    let p = parse_column(c, &others, table_default_collation(def))?.without_references()?;
    let mut col = p.col;
    if def.primary_key.contains(&pos) {
        col.nullable = false;
    }
    if col.auto_increment && !col.ty.is_integer() {
        return Err(SqlError::new(
            1063,
            "42000",
            format!("Incorrect column specifier for column '{}'", col.name),
        ));
    }
    if let Some(e) = &p.default {
        col.default = default_value(e, &col)?;
    }
    if p.primary {
        col.nullable = false;
    }
    Ok((col, p.primary, p.unique))
}

/// `ALTER TABLE t ALTER [COLUMN] c SET DEFAULT x`: column `col` with default `e`.
pub fn with_default(col: &ColumnDef, e: &ast::Expr) -> Result<ColumnDef, SqlError> {
    let mut c = col.clone();
    c.default = default_value(e, col)?;
    Ok(c)
}

/// What MariaDB stores for a NOT NULL column given no value outside strict mode.
pub fn implicit_default(ty: &ColumnType) -> Value {
    match ty {
        ColumnType::Int { .. } | ColumnType::Year | ColumnType::Bit(_) => Value::Int(0),
        ColumnType::Float | ColumnType::Double => Value::Double(0.0),
        ColumnType::Decimal { scale, .. } => {
            let mut t = "0".to_string();
            if *scale > 0 {
                t.push('.');
                t.extend(std::iter::repeat_n('0', usize::from(*scale)));
            }
            Value::Bytes(t.into_bytes())
        }
        ColumnType::Date => Value::Bytes(b"0000-00-00".to_vec()),
        ColumnType::Time(n) => Value::Bytes(crate::time::text(0, *n).into_bytes()),
        ColumnType::Enum(m) => Value::Bytes(m.first().cloned().unwrap_or_default().into_bytes()),
        ColumnType::DateTime(n) | ColumnType::Timestamp(n) => {
            Value::Bytes(crate::coerce::zero_datetime(*n).into_bytes())
        }
        _ => Value::Bytes(Vec::new()),
    }
}

/// 1103 for a table name MySQL refuses (empty or longer than 64 characters).
pub fn check_table_name(name: &str) -> Result<(), SqlError> {
    if name.is_empty() || name.chars().count() > 64 || name.contains('\0') {
        return Err(SqlError::new(
            1103,
            "42000",
            format!("Incorrect table name '{name}'"),
        ));
    }
    Ok(())
}

/// CREATE TABLE → engine table definition.
pub fn table_def(ct: &ast::CreateTable) -> Result<TableDef, SqlError> {
    if ct.like.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE ... LIKE"));
    }
    let name = object_name_last(&ct.name);
    check_table_name(&name)?;
    let mut def = TableDef {
        name,
        columns: Vec::new(),
        primary_key: Vec::new(),
        indexes: Vec::new(),
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    };
    let mut foreign: Vec<(usize, ast::ForeignKeyConstraint)> = Vec::new();
    let mut pending_defaults: Vec<(usize, ast::Expr)> = Vec::new();
    // Columns declared `UNIQUE` inline: each gets a unique index named after it (MySQL's
    // order: after the indexes of the table constraints).
    let mut unique_columns: Vec<usize> = Vec::new();
    let text_default = table_collation(&ct.table_options)?;
    for (ci, c) in ct.columns.iter().enumerate() {
        let p = parse_column(c, &def, text_default)?;
        if p.primary {
            if !def.primary_key.is_empty() {
                return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
            }
            def.primary_key = vec![ci];
        }
        if p.unique {
            unique_columns.push(ci);
        }
        if let Some(e) = p.default {
            pending_defaults.push((ci, e));
        }
        if let Some(f) = p.references {
            foreign.push((ci, f));
        }
        let col = p.col;
        if col.auto_increment && !col.ty.is_integer() {
            return Err(SqlError::new(
                1063,
                "42000",
                format!("Incorrect column specifier for column '{}'", col.name),
            ));
        }
        def.columns.push(col);
    }
    if def.columns.is_empty() {
        return Err(SqlError::new(
            1113,
            "42000",
            "A table must have at least 1 column",
        ));
    }
    for t in &ct.constraints {
        match t {
            ast::TableConstraint::PrimaryKey(pk) => {
                if !def.primary_key.is_empty() {
                    return Err(SqlError::new(1068, "42000", "Multiple primary key defined"));
                }
                def.primary_key = index_columns(&pk.columns, &def)?;
            }
            ast::TableConstraint::Index(ix) => {
                let columns = index_columns(&ix.columns, &def)?;
                let name = ix.name.as_ref().map(|n| n.value.clone());
                add_index(&mut def, name, columns, false)?;
            }
            ast::TableConstraint::Unique(u) => {
                let columns = index_columns(&u.columns, &def)?;
                let name = u.index_name.as_ref().or(u.name.as_ref());
                add_index(&mut def, name.map(|n| n.value.clone()), columns, true)?;
            }
            ast::TableConstraint::ForeignKey(_) | ast::TableConstraint::Check(_) => {}
            other => return Err(SqlError::unsupported(format!("table constraint {other}"))),
        }
    }
    for ci in unique_columns {
        add_index(&mut def, None, vec![ci], true)?;
    }
    // Foreign keys last (their generated indexes give way to every declared one): the
    // column-level ones first, then the table constraints, as MariaDB numbers them.
    let mut fks = Vec::new();
    for (ci, f) in &foreign {
        fks.push(crate::fk::declared(f, &def, Some(*ci))?);
    }
    for t in &ct.constraints {
        if let ast::TableConstraint::ForeignKey(f) = t {
            fks.push(crate::fk::declared(f, &def, None)?);
        }
    }
    crate::fk::add_to_def(&mut def, fks)?;
    for &p in &def.primary_key {
        def.columns[p].nullable = false;
    }
    for (ci, e) in pending_defaults {
        let d = default_value(&e, &def.columns[ci])?;
        def.columns[ci].default = d;
    }
    let auto: Vec<usize> = (0..def.columns.len())
        .filter(|&i| def.columns[i].auto_increment)
        .collect();
    let leads_a_key = |c: usize| {
        def.primary_key.first() == Some(&c)
            || def.indexes.iter().any(|i| i.columns.first() == Some(&c))
    };
    if auto.len() > 1 || auto.iter().any(|&c| !leads_a_key(c)) {
        return Err(SqlError::new(1075, "42000", "Incorrect table definition; there can be only one auto column and it must be defined as a key"));
    }
    def.checks = crate::check::declared(ct, &def)?;
    Ok(def)
}

/// The column `CREATE TABLE ... AS SELECT` makes for a query column that is not a plain
/// column of a table (whose definition is copied instead): the type its result metadata
/// `meta` describes, widened so that every value in `values` fits (a longer string, a larger
/// integer or decimal than the metadata promises never fails the copy).
pub fn column_for_values<'a>(
    meta: &Column,
    values: impl Iterator<Item = &'a Value> + Clone,
) -> ColumnDef {
    use crate::result::ColumnKind as K;
    let fits_i32 = values.clone().all(|v| match v {
        Value::Int(i) => i32::try_from(*i).is_ok(),
        Value::UInt(_) => false,
        _ => true,
    });
    let any_uint = values.clone().any(|v| matches!(v, Value::UInt(_)));
    // Integers above i64::MAX next to negative ones fit no integer type: DECIMAL(21,0).
    let mixed_sign = any_uint && values.clone().any(|v| matches!(v, Value::Int(i) if *i < 0));
    let chars = values
        .clone()
        .map(|v| match v {
            Value::Bytes(b) => String::from_utf8_lossy(b).chars().count(),
            Value::Int(i) => i.to_string().len(),
            Value::UInt(u) => u.to_string().len(),
            _ => 0,
        })
        .max()
        .unwrap_or(0) as u32;
    // A NULL-only column (`SELECT NULL AS n`) is text of length 0 (keeping the table's
    // default collation; MariaDB makes it BINARY(0)).
    let text = meta.is_text || meta.kind == K::Null;
    let ty = match meta.kind {
        K::Tiny | K::Short | K::Int24 | K::Long if fits_i32 => ColumnType::Int {
            bytes: 4,
            unsigned: false,
        },
        K::Tiny | K::Short | K::Int24 | K::Long | K::LongLong if mixed_sign => {
            ColumnType::Decimal {
                precision: 21,
                scale: 0,
                unsigned: false,
            }
        }
        K::Tiny | K::Short | K::Int24 | K::Long | K::LongLong => ColumnType::Int {
            bytes: 8,
            unsigned: meta.unsigned || any_uint,
        },
        K::Float | K::Double => ColumnType::Double,
        K::NewDecimal => {
            let scale = meta.decimals.min(30);
            // Integer digits: the metadata's, or the widest value's.
            let meta_int = meta
                .length
                .saturating_sub(2)
                .saturating_sub(u32::from(scale));
            let value_int = values
                .map(|v| match v {
                    Value::Bytes(b) => b
                        .iter()
                        .take_while(|c| **c != b'.')
                        .filter(|c| c.is_ascii_digit())
                        .count() as u32,
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            let int = meta_int.max(value_int).max(1);
            ColumnType::Decimal {
                precision: (int + u32::from(scale)).min(65) as u8,
                scale,
                unsigned: false,
            }
        }
        K::Date => ColumnType::Date,
        K::Year => ColumnType::Year,
        K::Bit => ColumnType::Bit(meta.length.clamp(1, 64) as u8),
        // The widest fraction among the values, as for DATETIME.
        K::Time => ColumnType::Time(
            values
                .map(|v| match v {
                    Value::Bytes(b) => coerce::fraction_digits(b),
                    _ => 0,
                })
                .max()
                .unwrap_or(0)
                .min(6)
                .max(usize::from(meta.decimals.min(6))) as u8,
        ),
        // The widest fraction among the values (a computed column's metadata says 0).
        K::DateTime | K::Timestamp => {
            let widest = values
                .map(|v| match v {
                    Value::Bytes(b) => coerce::fraction_digits(b),
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            let fsp = meta.decimals.max(widest.min(6) as u8).min(6);
            if meta.kind == K::Timestamp {
                ColumnType::Timestamp(fsp)
            } else {
                ColumnType::DateTime(fsp)
            }
        }
        K::Blob if text => ColumnType::Text(LobSize::for_bytes(u64::from(meta.length))),
        K::Blob => ColumnType::Blob(LobSize::for_bytes(u64::from(meta.length))),
        // Byte strings: BINARY(n) from a fixed-length one, VARBINARY(n) from others, a BLOB
        // past VARBINARY's limit.
        K::String | K::VarString if !text => {
            let widest = values
                .map(|v| match v {
                    Value::Bytes(b) => b.len(),
                    Value::Int(i) => i.to_string().len(),
                    Value::UInt(u) => u.to_string().len(),
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            let n = meta.length.max(u32::try_from(widest).unwrap_or(u32::MAX));
            if meta.kind == K::String && n <= MAX_BINARY {
                ColumnType::Binary(n)
            } else if n <= MAX_VARBINARY {
                ColumnType::VarBinary(n)
            } else {
                ColumnType::Blob(LobSize::for_bytes(u64::from(n)))
            }
        }
        K::String | K::VarString | K::Null => {
            let n = meta.length.max(chars);
            if n > 16_383 {
                if text {
                    ColumnType::Text(LobSize::for_bytes(u64::from(n) * 4))
                } else {
                    ColumnType::Blob(LobSize::for_bytes(u64::from(n)))
                }
            } else {
                ColumnType::VarChar(n)
            }
        }
    };
    let textual = is_text_type(&ty) && text;
    ColumnDef {
        name: meta.name.clone(),
        ty,
        nullable: !meta.not_null,
        auto_increment: false,
        default: None,
        fill: None,
        collation: if textual && !meta.binary {
            Collation::GeneralCi
        } else {
            Collation::Binary
        },
        on_update_now: false,
    }
}

pub(crate) fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// A string literal as SHOW CREATE TABLE prints a default: `'` doubled, and backslash, NUL,
/// newline and carriage return as backslash escapes (MariaDB's).
fn quote_str(b: &[u8]) -> String {
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'\'');
    for &c in b {
        match c {
            b'\'' => out.extend_from_slice(b"''"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0 => out.extend_from_slice(b"\\0"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            c => out.push(c),
        }
    }
    out.push(b'\'');
    String::from_utf8_lossy(&out).into_owned()
}

/// Text of a column default for SHOW COLUMNS (None = NULL).
pub fn default_text(col: &ColumnDef) -> Option<String> {
    match &col.default {
        Some(v @ (Value::Int(_) | Value::UInt(_))) if matches!(col.ty, ColumnType::Bit(_)) => {
            Some(bit_literal(v))
        }
        Some(Value::Bytes(b)) if b == CURRENT_TIMESTAMP && col.ty.fsp().is_some() => {
            col.ty.fsp().map(now_sql)
        }
        Some(v) => Some(crate::variables::show(v)),
        None => None,
    }
}

/// A BIT value as MariaDB shows a BIT column's default: `b'101'`.
fn bit_literal(v: &Value) -> String {
    match v {
        Value::Int(i) => format!("b'{:b}'", *i as u64),
        Value::UInt(u) => format!("b'{u:b}'"),
        other => other.to_string(),
    }
}

/// A column's default as SQL text, as SHOW CREATE TABLE and
/// INFORMATION_SCHEMA.COLUMNS.COLUMN_DEFAULT show it: `current_timestamp()`, numbers bare,
/// text quoted, `NULL` for a nullable column without one (None: a NOT NULL column without one).
pub fn default_sql(c: &ColumnDef) -> Option<String> {
    Some(match &c.default {
        Some(v @ (Value::Int(_) | Value::UInt(_))) if matches!(c.ty, ColumnType::Bit(_)) => {
            bit_literal(v)
        }
        Some(Value::Bytes(b)) if b == CURRENT_TIMESTAMP && c.ty.fsp().is_some() => {
            now_sql(c.ty.fsp().unwrap_or(0))
        }
        // Numbers unquoted (DECIMAL defaults are kept as text), as MariaDB shows them.
        Some(Value::Bytes(b))
            if matches!(
                c.ty,
                ColumnType::Decimal { .. }
                    | ColumnType::Int { .. }
                    | ColumnType::Float
                    | ColumnType::Double
            ) && std::str::from_utf8(b).is_ok_and(|t| t.parse::<f64>().is_ok()) =>
        {
            String::from_utf8_lossy(b).into_owned()
        }
        Some(Value::Bytes(b)) => quote_str(b),
        Some(v) => v.to_string(),
        None if c.nullable => "NULL".to_string(),
        None => return None,
    })
}

/// The `Extra` of SHOW COLUMNS and INFORMATION_SCHEMA.COLUMNS.
pub fn extra_text(col: &ColumnDef) -> String {
    if col.auto_increment {
        "auto_increment".into()
    } else if col.on_update_now {
        format!("on update {}", now_sql(col.ty.fsp().unwrap_or(0)))
    } else {
        String::new()
    }
}

/// SHOW CREATE TABLE text. `next_auto_increment`: the table option `AUTO_INCREMENT=n`
/// shown when above 1 (rows were inserted), as MariaDB does.
pub fn render_create_table(db: &str, def: &TableDef, next_auto_increment: Option<u64>) -> String {
    let mut lines = Vec::new();
    let table_coll = table_default_collation(def);
    for c in &def.columns {
        let mut l = format!("  {} {}", quote_ident(&c.name), type_name(&c.ty));
        if let Some(name) = collation_name(c).filter(|_| c.collation != table_coll) {
            l.push_str(" CHARACTER SET utf8mb4 COLLATE ");
            l.push_str(name);
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        }
        if c.nullable && matches!(c.ty, ColumnType::Timestamp(_)) {
            l.push_str(" NULL");
        }
        if let Some(d) = default_sql(c) {
            l.push_str(" DEFAULT ");
            l.push_str(&d);
        }
        if c.on_update_now {
            l.push_str(" ON UPDATE ");
            l.push_str(&now_sql(c.ty.fsp().unwrap_or(0)));
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        for k in def
            .checks
            .iter()
            .filter(|k| k.column_level && k.name.eq_ignore_ascii_case(&c.name))
        {
            l.push_str(&format!(" CHECK ({})", k.expr));
        }
        lines.push(l);
    }
    let cols = |v: &[usize]| -> String {
        v.iter()
            .filter_map(|&i| def.columns.get(i))
            .map(|c| quote_ident(&c.name))
            .collect::<Vec<_>>()
            .join(",")
    };
    if !def.primary_key.is_empty() {
        lines.push(format!("  PRIMARY KEY ({})", cols(&def.primary_key)));
    }
    for ix in display_order(def) {
        lines.push(format!(
            "  {}KEY {} ({})",
            if ix.unique { "UNIQUE " } else { "" },
            quote_ident(&ix.name),
            cols(&ix.columns)
        ));
    }
    for f in crate::fk::display_order(def) {
        lines.push(format!("  {}", crate::fk::clause(db, def, f, false)));
    }
    for k in def.checks.iter().filter(|k| !k.column_level) {
        lines.push(format!(
            "  CONSTRAINT {} CHECK ({})",
            quote_ident(&k.name),
            k.expr
        ));
    }
    let auto = match next_auto_increment {
        Some(n) if n > 1 && def.columns.iter().any(|c| c.auto_increment) => {
            format!(" AUTO_INCREMENT={n}")
        }
        _ => String::new(),
    };
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB{auto} DEFAULT CHARSET=utf8mb4 COLLATE={}",
        quote_ident(&def.name),
        lines.join(",\n"),
        table_coll.name()
    )
}
