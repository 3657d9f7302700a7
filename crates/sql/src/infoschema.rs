//! `INFORMATION_SCHEMA`: read-only virtual tables made from the catalog when a statement
//! reads them — SCHEMATA, TABLES, COLUMNS, STATISTICS, the keys and foreign keys
//! (TABLE_CONSTRAINTS, KEY_COLUMN_USAGE, REFERENTIAL_CONSTRAINTS, CHECK_CONSTRAINTS), VIEWS (views also have
//! their rows in TABLES and COLUMNS), and the always-empty TRIGGERS and ROUTINES (tierdb has
//! none of those objects). Queried like any table
//! (WHERE, ORDER BY, aggregates, LIMIT run on the generated rows), which is what mariadb-dump,
//! GUI clients and ORMs do.
//!
//! Owns: each virtual table's columns and how its rows are derived from the engine catalog.
//! Must never: change anything, or show a row for a table the catalog does not hold.

use crate::ddl;
use crate::result::SqlError;
use std::sync::Arc;
use tierdb_engine::{ColumnDef, ColumnType, Engine, Row, TableDef, Value};

/// The schema name (compared case-insensitively).
pub const SCHEMA: &str = "information_schema";

pub fn is_schema(db: &str) -> bool {
    db.eq_ignore_ascii_case(SCHEMA)
}

/// The virtual tables, in the order `SHOW TABLES FROM information_schema` lists them.
pub const TABLES: &[&str] = &[
    "CHECK_CONSTRAINTS",
    "COLUMNS",
    "GLOBAL_STATUS",
    "GLOBAL_VARIABLES",
    "KEY_COLUMN_USAGE",
    "PROCESSLIST",
    "REFERENTIAL_CONSTRAINTS",
    "ROUTINES",
    "SCHEMATA",
    "SCHEMA_PRIVILEGES",
    "SESSION_STATUS",
    "SESSION_VARIABLES",
    "STATISTICS",
    "TABLES",
    "TABLE_CONSTRAINTS",
    "TABLE_PRIVILEGES",
    "TRIGGERS",
    "USER_PRIVILEGES",
    "VIEWS",
];

/// Error 1044 for creating or dropping the schema (as MySQL answers).
pub fn read_only(user: &str) -> SqlError {
    SqlError::new(
        1044,
        "42000",
        format!("Access denied for user '{user}' to database '{SCHEMA}'"),
    )
}

/// A virtual table as a plan holds it: its definition and the engine it describes.
#[derive(Clone)]
pub struct InfoTable {
    pub def: TableDef,
    pub engine: Arc<Engine>,
    /// The database it is read through: `information_schema`, or `mysql` for `mysql.user`.
    pub schema: &'static str,
}

impl std::fmt::Debug for InfoTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.schema, self.def.name)
    }
}

/// The `mysql` database's one table tierdb shows: `mysql.user`, read-only, built from the
/// accounts (names and order of MariaDB 10.11's columns).
pub const MYSQL_USER_PRIVS: &[(&str, u64)] = &[
    ("Select_priv", crate::accounts::SELECT),
    ("Insert_priv", crate::accounts::INSERT),
    ("Update_priv", crate::accounts::UPDATE),
    ("Delete_priv", crate::accounts::DELETE),
    ("Create_priv", crate::accounts::CREATE),
    ("Drop_priv", crate::accounts::DROP),
    ("Reload_priv", crate::accounts::RELOAD),
    ("Shutdown_priv", crate::accounts::SHUTDOWN),
    ("Process_priv", crate::accounts::PROCESS),
    ("File_priv", crate::accounts::FILE),
    ("Grant_priv", crate::accounts::GRANT_OPTION),
    ("References_priv", crate::accounts::REFERENCES),
    ("Index_priv", crate::accounts::INDEX),
    ("Alter_priv", crate::accounts::ALTER),
    ("Show_db_priv", crate::accounts::SHOW_DATABASES),
    ("Super_priv", crate::accounts::SUPER),
    ("Create_tmp_table_priv", crate::accounts::CREATE_TMP_TABLE),
    ("Lock_tables_priv", crate::accounts::LOCK_TABLES),
    ("Execute_priv", crate::accounts::EXECUTE),
    ("Repl_slave_priv", 1 << 18),
    ("Repl_client_priv", 1 << 19),
    ("Create_view_priv", crate::accounts::CREATE_VIEW),
    ("Show_view_priv", crate::accounts::SHOW_VIEW),
    ("Create_routine_priv", 1 << 22),
    ("Alter_routine_priv", 1 << 23),
    ("Create_user_priv", crate::accounts::CREATE_USER),
    ("Event_priv", 1 << 25),
    ("Trigger_priv", 1 << 26),
    ("Create_tablespace_priv", 1 << 27),
    ("Delete_history_priv", 1 << 28),
];

/// `mysql.user`'s definition (`db` `mysql`, `name` `user`, exactly: names there compare
/// byte by byte), else None.
pub fn mysql_table(engine: &Arc<Engine>, db: &str, name: &str) -> Option<InfoTable> {
    if db != "mysql" || name != "user" {
        return None;
    }
    let mut columns = vec![text("Host"), text("User"), text("Password")];
    columns.extend(MYSQL_USER_PRIVS.iter().map(|(n, _)| text(n)));
    columns.extend(
        ["ssl_type", "ssl_cipher", "x509_issuer", "x509_subject"]
            .iter()
            .map(|n| text(n)),
    );
    columns.extend(
        [
            "max_questions",
            "max_updates",
            "max_connections",
            "max_user_connections",
        ]
        .iter()
        .map(|n| int(n)),
    );
    columns.extend(
        [
            "plugin",
            "authentication_string",
            "password_expired",
            "is_role",
            "default_role",
        ]
        .iter()
        .map(|n| text(n)),
    );
    columns.push(col(
        "max_statement_time",
        ColumnType::Decimal {
            precision: 12,
            scale: 6,
            unsigned: false,
        },
    ));
    Some(InfoTable {
        def: TableDef {
            name: "user".into(),
            columns,
            primary_key: vec![],
            indexes: vec![],
            foreign_keys: vec![],
            checks: Vec::new(),
        },
        engine: engine.clone(),
        schema: "mysql",
    })
}

/// `mysql.user`'s rows: one per account.
fn mysql_user_rows(accounts: &[Arc<crate::accounts::Account>]) -> Vec<Row> {
    accounts
        .iter()
        .map(|a| {
            let hash = a
                .auth
                .as_ref()
                .map(crate::accounts::hash_text)
                .unwrap_or_default();
            let mut row = vec![s(&a.host), s(&a.user), s(&hash)];
            for (_, bit) in MYSQL_USER_PRIVS {
                row.push(s(if a.global & bit != 0 { "Y" } else { "N" }));
            }
            row.extend([s(""), s(""), s(""), s("")]);
            row.extend([n(0), n(0), n(0), n(0)]);
            row.extend([s("mysql_native_password"), s(&hash), s("N"), s("N"), s("")]);
            row.push(s("0.000000"));
            row
        })
        .collect()
}

fn col(name: &str, ty: ColumnType) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable: true,
        auto_increment: false,
        default: None,
        fill: None,
        collation: tierdb_engine::Collation::Binary,
        on_update_now: false,
    }
}

/// A text column. Names of databases and tables compare byte by byte (`t1` and `T1` are two
/// tables, and MariaDB looks them up exactly); the other columns (constraint, index, column
/// names, types, ...) compare and sort case-insensitively, as MariaDB's `utf8mb3_general_ci`
/// INFORMATION_SCHEMA columns do.
fn text(name: &str) -> ColumnDef {
    let exact = name.ends_with("SCHEMA")
        || name.ends_with("TABLE_NAME")
        || matches!(name, "SCHEMA_NAME" | "EVENT_OBJECT_TABLE");
    ColumnDef {
        collation: if exact {
            tierdb_engine::Collation::Binary
        } else {
            tierdb_engine::Collation::GeneralCi
        },
        ..col(name, ColumnType::VarChar(512))
    }
}

fn int(name: &str) -> ColumnDef {
    col(
        name,
        ColumnType::Int {
            bytes: 8,
            unsigned: true,
        },
    )
}

/// The definition of virtual table `name` (case-insensitive), or error 1109.
pub fn table(engine: &Arc<Engine>, name: &str) -> Result<InfoTable, SqlError> {
    let upper = name.to_ascii_uppercase();
    let cols: Vec<ColumnDef> = match upper.as_str() {
        "SCHEMATA" => vec![
            text("CATALOG_NAME"),
            text("SCHEMA_NAME"),
            text("DEFAULT_CHARACTER_SET_NAME"),
            text("DEFAULT_COLLATION_NAME"),
            text("SQL_PATH"),
            text("SCHEMA_COMMENT"),
        ],
        "TABLES" => vec![
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("TABLE_TYPE"),
            text("ENGINE"),
            int("VERSION"),
            text("ROW_FORMAT"),
            int("TABLE_ROWS"),
            int("AVG_ROW_LENGTH"),
            int("DATA_LENGTH"),
            int("MAX_DATA_LENGTH"),
            int("INDEX_LENGTH"),
            int("DATA_FREE"),
            int("AUTO_INCREMENT"),
            text("CREATE_TIME"),
            text("UPDATE_TIME"),
            text("CHECK_TIME"),
            text("TABLE_COLLATION"),
            int("CHECKSUM"),
            text("CREATE_OPTIONS"),
            text("TABLE_COMMENT"),
        ],
        "COLUMNS" => vec![
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("COLUMN_NAME"),
            int("ORDINAL_POSITION"),
            text("COLUMN_DEFAULT"),
            text("IS_NULLABLE"),
            text("DATA_TYPE"),
            int("CHARACTER_MAXIMUM_LENGTH"),
            int("CHARACTER_OCTET_LENGTH"),
            int("NUMERIC_PRECISION"),
            int("NUMERIC_SCALE"),
            int("DATETIME_PRECISION"),
            text("CHARACTER_SET_NAME"),
            text("COLLATION_NAME"),
            text("COLUMN_TYPE"),
            text("COLUMN_KEY"),
            text("EXTRA"),
            text("PRIVILEGES"),
            text("COLUMN_COMMENT"),
            text("IS_GENERATED"),
            text("GENERATION_EXPRESSION"),
        ],
        "STATISTICS" => vec![
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            int("NON_UNIQUE"),
            text("INDEX_SCHEMA"),
            text("INDEX_NAME"),
            int("SEQ_IN_INDEX"),
            text("COLUMN_NAME"),
            text("COLLATION"),
            int("CARDINALITY"),
            int("SUB_PART"),
            text("PACKED"),
            text("NULLABLE"),
            text("INDEX_TYPE"),
            text("COMMENT"),
            text("INDEX_COMMENT"),
        ],
        "TRIGGERS" => vec![
            text("TRIGGER_CATALOG"),
            text("TRIGGER_SCHEMA"),
            text("TRIGGER_NAME"),
            text("EVENT_MANIPULATION"),
            text("EVENT_OBJECT_CATALOG"),
            text("EVENT_OBJECT_SCHEMA"),
            text("EVENT_OBJECT_TABLE"),
            int("ACTION_ORDER"),
            text("ACTION_STATEMENT"),
            text("ACTION_TIMING"),
            text("DEFINER"),
        ],
        // SHOW [GLOBAL | SESSION] STATUS / VARIABLES as rows (from the session:
        // `Env::server_values`), names in capitals as MariaDB lists them.
        "GLOBAL_STATUS" | "SESSION_STATUS" | "GLOBAL_VARIABLES" | "SESSION_VARIABLES" => {
            vec![text("VARIABLE_NAME"), text("VARIABLE_VALUE")]
        }
        // SHOW FULL PROCESSLIST's columns (rows from the session: `Env::processlist`).
        "PROCESSLIST" => vec![
            int("ID"),
            text("USER"),
            text("HOST"),
            text("DB"),
            text("COMMAND"),
            int("TIME"),
            text("STATE"),
            ColumnDef {
                nullable: true,
                ..col("INFO", ColumnType::Text(tierdb_engine::LobSize::Long))
            },
        ],
        "VIEWS" => vec![
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("VIEW_DEFINITION"),
            text("CHECK_OPTION"),
            text("IS_UPDATABLE"),
            text("DEFINER"),
            text("SECURITY_TYPE"),
            text("CHARACTER_SET_CLIENT"),
            text("COLLATION_CONNECTION"),
            text("ALGORITHM"),
        ],
        "USER_PRIVILEGES" => vec![
            text("GRANTEE"),
            text("TABLE_CATALOG"),
            text("PRIVILEGE_TYPE"),
            text("IS_GRANTABLE"),
        ],
        "SCHEMA_PRIVILEGES" => vec![
            text("GRANTEE"),
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("PRIVILEGE_TYPE"),
            text("IS_GRANTABLE"),
        ],
        "TABLE_PRIVILEGES" => vec![
            text("GRANTEE"),
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("PRIVILEGE_TYPE"),
            text("IS_GRANTABLE"),
        ],
        "ROUTINES" => vec![
            text("SPECIFIC_NAME"),
            text("ROUTINE_CATALOG"),
            text("ROUTINE_SCHEMA"),
            text("ROUTINE_NAME"),
            text("ROUTINE_TYPE"),
            text("DATA_TYPE"),
            text("ROUTINE_DEFINITION"),
            text("DEFINER"),
        ],
        "CHECK_CONSTRAINTS" => vec![
            text("CONSTRAINT_CATALOG"),
            text("CONSTRAINT_SCHEMA"),
            text("TABLE_NAME"),
            text("CONSTRAINT_NAME"),
            text("LEVEL"),
            text("CHECK_CLAUSE"),
        ],
        "TABLE_CONSTRAINTS" => vec![
            text("CONSTRAINT_CATALOG"),
            text("CONSTRAINT_SCHEMA"),
            text("CONSTRAINT_NAME"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("CONSTRAINT_TYPE"),
        ],
        "REFERENTIAL_CONSTRAINTS" => vec![
            text("CONSTRAINT_CATALOG"),
            text("CONSTRAINT_SCHEMA"),
            text("CONSTRAINT_NAME"),
            text("UNIQUE_CONSTRAINT_CATALOG"),
            text("UNIQUE_CONSTRAINT_SCHEMA"),
            text("UNIQUE_CONSTRAINT_NAME"),
            text("MATCH_OPTION"),
            text("UPDATE_RULE"),
            text("DELETE_RULE"),
            text("TABLE_NAME"),
            text("REFERENCED_TABLE_NAME"),
        ],
        "KEY_COLUMN_USAGE" => vec![
            text("CONSTRAINT_CATALOG"),
            text("CONSTRAINT_SCHEMA"),
            text("CONSTRAINT_NAME"),
            text("TABLE_CATALOG"),
            text("TABLE_SCHEMA"),
            text("TABLE_NAME"),
            text("COLUMN_NAME"),
            int("ORDINAL_POSITION"),
            int("POSITION_IN_UNIQUE_CONSTRAINT"),
            text("REFERENCED_TABLE_SCHEMA"),
            text("REFERENCED_TABLE_NAME"),
            text("REFERENCED_COLUMN_NAME"),
        ],
        _ => {
            return Err(SqlError::new(
                1109,
                "42S02",
                format!("Unknown table '{name}' in {SCHEMA}"),
            ))
        }
    };
    Ok(InfoTable {
        def: TableDef {
            name: upper,
            columns: cols,
            primary_key: vec![],
            indexes: vec![],
            foreign_keys: vec![],
            checks: Vec::new(),
        },
        engine: engine.clone(),
        schema: SCHEMA,
    })
}

fn s(x: impl AsRef<str>) -> Value {
    Value::Bytes(x.as_ref().as_bytes().to_vec())
}

fn n(x: u64) -> Value {
    Value::Int(x as i64)
}

/// The type name without its size (COLUMNS.DATA_TYPE).
fn data_type(t: &ColumnType) -> String {
    let full = ddl::type_name(t);
    full.split(['(', ' ']).next().unwrap_or("").to_string()
}

/// (character max length, numeric precision, numeric scale, datetime precision).
fn sizes(t: &ColumnType) -> (Value, Value, Value, Value) {
    let null = Value::Null;
    match t {
        ColumnType::Char(len)
        | ColumnType::VarChar(len)
        | ColumnType::Binary(len)
        | ColumnType::VarBinary(len) => (n(u64::from(*len)), null.clone(), null.clone(), null),
        ColumnType::Text(s) | ColumnType::Blob(s) => {
            (n(s.max_bytes()), null.clone(), null.clone(), null)
        }
        ColumnType::Set(m) => (
            n(u64::from(crate::coerce::set_width(m))),
            null.clone(),
            null.clone(),
            null,
        ),
        ColumnType::Enum(m) => (
            n(u64::from(crate::coerce::enum_width(m))),
            null.clone(),
            null.clone(),
            null,
        ),
        ColumnType::Int { bytes, unsigned } => {
            let digits: u64 = match (bytes, unsigned) {
                (1, _) => 3,
                (2, _) => 5,
                (3, false) => 7,
                (3, true) => 8,
                (4, _) => 10,
                (_, false) => 19,
                (_, true) => 20,
            };
            (null.clone(), n(digits), n(0), null)
        }
        ColumnType::Float => (null.clone(), n(12), null.clone(), null),
        ColumnType::Bit(w) => (null.clone(), n(u64::from(*w)), null.clone(), null),
        ColumnType::Double => (null.clone(), n(22), null.clone(), null),
        ColumnType::Decimal {
            precision, scale, ..
        } => (
            null.clone(),
            n(u64::from(*precision)),
            n(u64::from(*scale)),
            null,
        ),
        ColumnType::Date | ColumnType::Year => (null.clone(), null.clone(), null.clone(), null),
        ColumnType::DateTime(p) | ColumnType::Timestamp(p) | ColumnType::Time(p) => {
            (null.clone(), null.clone(), null, n(u64::from(*p)))
        }
    }
}

/// The rows of `t` that `who` may see (None: all of them): a row about a table shows when
/// the account holds some privilege on it, a row about a database when it holds some
/// privilege in it; INFORMATION_SCHEMA's own rows always show (as MariaDB filters them).
///
/// The privilege tables list every account's grants (`accounts`), or, for an account
/// without every privilege, its own.
pub fn visible_rows(
    t: &InfoTable,
    who: Option<&crate::accounts::Account>,
    accounts: Option<&crate::accounts::Accounts>,
) -> Result<Vec<Row>, SqlError> {
    let mut out = match t.def.name.as_str() {
        "user" if t.schema == "mysql" => {
            mysql_user_rows(&accounts.map(|a| a.all()).unwrap_or_default())
        }
        "USER_PRIVILEGES" | "SCHEMA_PRIVILEGES" | "TABLE_PRIVILEGES" => {
            let list = match (accounts, who) {
                (None, _) => Vec::new(),
                (Some(all), None) => all.all(),
                (Some(all), Some(a)) => all.get(&a.user, &a.host).into_iter().collect(),
            };
            privilege_rows(&t.def.name, &list)
        }
        _ => rows(t)?,
    };
    let Some(a) = who else {
        return Ok(out);
    };
    let at = |names: &[&str]| {
        t.def
            .columns
            .iter()
            .position(|c| names.iter().any(|n| c.name == *n))
    };
    let Some(schema) = at(&["TABLE_SCHEMA", "SCHEMA_NAME", "CONSTRAINT_SCHEMA"]) else {
        return Ok(out);
    };
    let table = at(&["TABLE_NAME"]);
    let text = |v: &Value| match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    };
    out.retain(|row| {
        let db = text(&row[schema]);
        if is_schema(&db) {
            return true;
        }
        match table {
            Some(i) => a.any_on_table(&db, &text(&row[i])),
            None => a.any_in_db(&db),
        }
    });
    // A view's definition shows only with SHOW VIEW on it (as MariaDB leaves it empty).
    if let (Some(t_at), Some(def_at)) = (table, at(&["VIEW_DEFINITION"])) {
        for row in &mut out {
            let (db, v) = (text(&row[schema]), text(&row[t_at]));
            if !a.holds_on_table(&db, &v, crate::accounts::SHOW_VIEW) {
                row[def_at] = s("");
            }
        }
    }
    Ok(out)
}

/// USER_ / SCHEMA_ / TABLE_PRIVILEGES rows of `accounts`: one per privilege held (USAGE for
/// an account without global privileges), as MariaDB lists them.
fn privilege_rows(table: &str, accounts: &[Arc<crate::accounts::Account>]) -> Vec<Row> {
    use crate::accounts::{names, GRANT_OPTION};
    let mut out = Vec::new();
    let grantable = |bits: u64| {
        s(if bits & GRANT_OPTION != 0 {
            "YES"
        } else {
            "NO"
        })
    };
    for a in accounts {
        let grantee = s(a.quoted());
        match table {
            "USER_PRIVILEGES" => {
                let mut privs = names(a.global);
                if privs.is_empty() {
                    privs.push("USAGE");
                }
                for p in privs {
                    out.push(vec![grantee.clone(), s("def"), s(p), grantable(a.global)]);
                }
            }
            "SCHEMA_PRIVILEGES" => {
                for (db, bits) in &a.dbs {
                    for p in names(*bits) {
                        out.push(vec![
                            grantee.clone(),
                            s("def"),
                            s(db),
                            s(p),
                            grantable(*bits),
                        ]);
                    }
                }
            }
            _ => {
                for ((db, t), bits) in &a.tables {
                    for p in names(*bits) {
                        out.push(vec![
                            grantee.clone(),
                            s("def"),
                            s(db),
                            s(t),
                            s(p),
                            grantable(*bits),
                        ]);
                    }
                }
            }
        }
    }
    out
}

/// The rows of `t`, generated now from the catalog.
pub fn rows(t: &InfoTable) -> Result<Vec<Row>, SqlError> {
    let e = &t.engine;
    let mut out = Vec::new();
    let tables = |db: &str| -> Result<Vec<Arc<tierdb_engine::Table>>, SqlError> {
        let mut v = Vec::new();
        for name in e.tables(db)? {
            // A table dropped between the listing and here is simply not shown.
            if let Ok(h) = e.table(db, &name) {
                v.push(h);
            }
        }
        Ok(v)
    };
    match t.def.name.as_str() {
        "SCHEMATA" => {
            out.push(vec![
                s("def"),
                s(SCHEMA),
                s("utf8"),
                s("utf8_general_ci"),
                Value::Null,
                s(""),
            ]);
            for db in e.databases() {
                out.push(vec![
                    s("def"),
                    s(db),
                    s("utf8mb4"),
                    s("utf8mb4_general_ci"),
                    Value::Null,
                    s(""),
                ]);
            }
        }
        "TABLES" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    let auto = if h.def.columns.iter().any(|c| c.auto_increment) {
                        n(h.next_auto_increment())
                    } else {
                        Value::Null
                    };
                    out.push(vec![
                        s("def"),
                        s(&db),
                        s(&h.def.name),
                        s("BASE TABLE"),
                        s("InnoDB"),
                        n(10),
                        s("Dynamic"),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        auto,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        s(ddl::table_default_collation(&h.def).name()),
                        Value::Null,
                        s(""),
                        s(""),
                    ]);
                }
                for v in e.views(&db) {
                    let mut r = vec![s("def"), s(&db), s(&v.name), s("VIEW")];
                    r.extend(std::iter::repeat_n(Value::Null, 16));
                    r.push(s("VIEW"));
                    out.push(r);
                }
            }
        }
        "VIEWS" => {
            for db in e.databases() {
                for v in e.views(&db) {
                    out.push(vec![
                        s("def"),
                        s(&db),
                        s(&v.name),
                        s(&v.query),
                        s(&v.check_option),
                        s(if crate::view::is_updatable(e, &db, &v.name) {
                            "YES"
                        } else {
                            "NO"
                        }),
                        s(&v.definer),
                        s(&v.security),
                        s(&v.charset_client),
                        s(&v.collation_connection),
                        s(&v.algorithm),
                    ]);
                }
            }
        }
        "COLUMNS" => {
            for db in e.databases() {
                let mut defs: Vec<TableDef> = tables(&db)?.iter().map(|h| h.def.clone()).collect();
                // A view whose query no longer plans (a table it reads is gone) has no columns.
                defs.extend(
                    e.views(&db)
                        .iter()
                        .filter_map(|v| crate::view::shape(e, &db, &v.name).ok()),
                );
                for def in &defs {
                    for (ci, c) in def.columns.iter().enumerate() {
                        let (chars, prec, scale, dt) = sizes(&c.ty);
                        let textual = crate::exec::is_text_type(&c.ty);
                        let key = crate::show::column_key(def, ci);
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(&def.name),
                            s(&c.name),
                            n(ci as u64 + 1),
                            ddl::default_sql(c).map(s).unwrap_or(Value::Null),
                            s(if c.nullable { "YES" } else { "NO" }),
                            s(data_type(&c.ty)),
                            chars.clone(),
                            match chars {
                                // TEXT sizes are bytes already; CHAR / VARCHAR count
                                // characters of up to 4 bytes.
                                Value::Int(x)
                                    if textual && !matches!(c.ty, ColumnType::Text(_)) =>
                                {
                                    n(x as u64 * 4)
                                }
                                other => other,
                            },
                            prec,
                            scale,
                            dt,
                            if textual { s("utf8mb4") } else { Value::Null },
                            ddl::collation_name(c).map(s).unwrap_or(Value::Null),
                            s(ddl::type_name(&c.ty)),
                            s(key),
                            s(ddl::extra_text(c)),
                            s("select,insert,update,references"),
                            s(""),
                            s("NEVER"),
                            Value::Null,
                        ]);
                    }
                }
            }
        }
        "STATISTICS" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    for p in crate::show::index_parts(&h.def) {
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(&h.def.name),
                            n(u64::from(!p.unique)),
                            s(&db),
                            s(p.index),
                            n(p.seq as u64),
                            s(&p.column.name),
                            s("A"),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            s(if p.column.nullable { "YES" } else { "" }),
                            s("BTREE"),
                            s(""),
                            s(""),
                        ]);
                    }
                }
            }
        }
        "TABLE_CONSTRAINTS" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    for (name, _, kind) in crate::fk::constraints(&h.def) {
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(name),
                            s(&db),
                            s(&h.def.name),
                            s(kind),
                        ]);
                    }
                    for k in &h.def.checks {
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(&k.name),
                            s(&db),
                            s(&h.def.name),
                            s("CHECK"),
                        ]);
                    }
                }
            }
        }
        "CHECK_CONSTRAINTS" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    for k in &h.def.checks {
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(&h.def.name),
                            s(&k.name),
                            s(if k.column_level { "Column" } else { "Table" }),
                            s(&k.expr),
                        ]);
                    }
                }
            }
        }
        "KEY_COLUMN_USAGE" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    for (name, cols, _) in crate::fk::constraints(&h.def) {
                        let f = h.def.foreign_keys.iter().find(|f| f.name == name);
                        for (k, &c) in cols.iter().enumerate() {
                            let pos = n(k as u64 + 1);
                            let (upos, rdb, rt, rc) = match f {
                                Some(f) => (
                                    pos.clone(),
                                    s(&f.parent_db),
                                    s(&f.parent_table),
                                    s(&f.parent_columns[k]),
                                ),
                                None => (Value::Null, Value::Null, Value::Null, Value::Null),
                            };
                            out.push(vec![
                                s("def"),
                                s(&db),
                                s(name),
                                s("def"),
                                s(&db),
                                s(&h.def.name),
                                s(&h.def.columns[c].name),
                                pos,
                                upos,
                                rdb,
                                rt,
                                rc,
                            ]);
                        }
                    }
                }
            }
        }
        "REFERENTIAL_CONSTRAINTS" => {
            for db in e.databases() {
                for h in tables(&db)? {
                    for f in &h.def.foreign_keys {
                        let unique = crate::fk::parent_index_name(e, &db, &h.def, f);
                        out.push(vec![
                            s("def"),
                            s(&db),
                            s(&f.name),
                            s("def"),
                            s(&f.parent_db),
                            unique.map_or(Value::Null, s),
                            s("NONE"),
                            s(crate::fk::rule(f.on_update)),
                            s(crate::fk::rule(f.on_delete)),
                            s(&h.def.name),
                            s(&f.parent_table),
                        ]);
                    }
                }
            }
        }
        // No triggers or routines exist.
        _ => {}
    }
    Ok(out)
}
