//! Result sets of SHOW statements, ANALYZE TABLE and EXPLAIN, shaped like MariaDB 10.11's
//! (column names and order), filtered by `LIKE 'pattern'` or `WHERE expr`.
//!
//! Must never: change state; every function here only reads the catalog, the shared
//! registry and the session's view of variables.

use crate::access::{Access, ExplainInfo};
use crate::compile::{Compiler, Scope, ScopeCol};
use crate::ddl;
use crate::expr::{like_match, Env, EvalCx, SqlType};
use crate::plan::{Plan, SelectPlan, ShowFilter, Source};
use crate::result::{Column, QueryResult, SqlError};
use crate::shared::{Shared, Waiting};
use crate::variables::{self, VarKind, VarScope};
use std::sync::atomic::Ordering;
use tierdb_engine::{Collation, Engine, Table, Value};

pub(crate) fn s(x: impl AsRef<str>) -> Value {
    Value::Bytes(x.as_ref().as_bytes().to_vec())
}

fn opt(x: Option<impl AsRef<str>>) -> Value {
    match x {
        Some(v) => s(v),
        None => Value::Null,
    }
}

pub(crate) fn text_cols(names: &[&str]) -> Vec<Column> {
    names.iter().map(|n| Column::text(*n)).collect()
}

/// Applies a SHOW filter: LIKE on column `like_col` (case-insensitive), or WHERE on all.
pub fn filter_rows(
    columns: &[Column],
    rows: Vec<Vec<Value>>,
    filter: &ShowFilter,
    like_col: usize,
    env: &dyn Env,
) -> Result<Vec<Vec<Value>>, SqlError> {
    match filter {
        ShowFilter::None => Ok(rows),
        ShowFilter::Like(p) => {
            let pat = p.to_ascii_lowercase();
            Ok(rows
                .into_iter()
                .filter(|r| match r.get(like_col) {
                    Some(Value::Bytes(b)) => {
                        like_match(&b.to_ascii_lowercase(), pat.as_bytes(), b'\\')
                    }
                    _ => false,
                })
                .collect())
        }
        ShowFilter::Where(e) => {
            let scope = Scope {
                cols: columns
                    .iter()
                    .map(|c| ScopeCol {
                        merged_away: false,
                        base: false,
                        name: c.name.clone(),
                        qualifiers: Vec::new(),
                        ty: SqlType::Text,
                        meta: c.clone(),
                    })
                    .collect(),
            };
            let x = Compiler::new(&scope, &[]).compile(e)?;
            let cx = EvalCx::new(&[], env);
            let mut out = Vec::new();
            for r in rows {
                if x.matches(&r, &cx)? {
                    out.push(r);
                }
            }
            Ok(out)
        }
    }
}

pub fn databases(
    engine: &Engine,
    filter: &ShowFilter,
    env: &dyn Env,
) -> Result<QueryResult, SqlError> {
    let columns = text_cols(&["Database"]);
    // Only what the account may use (before any WHERE sees the names).
    let visible = |db: &str| match env.account() {
        None => true,
        Some(a) => a.global & crate::accounts::SHOW_DATABASES != 0 || a.any_in_db(db),
    };
    let rows = std::iter::once(crate::infoschema::SCHEMA.to_string())
        .chain(engine.databases().into_iter().filter(|d| visible(d)))
        .map(|n| vec![s(n)])
        .collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

pub fn tables(
    engine: &Engine,
    db: &str,
    full: bool,
    filter: &ShowFilter,
    env: &dyn Env,
) -> Result<QueryResult, SqlError> {
    // As MariaDB: the pattern is part of the column name.
    let mut columns = vec![Column::text(match filter {
        ShowFilter::Like(p) => format!("Tables_in_{db} ({p})"),
        _ => format!("Tables_in_{db}"),
    })];
    if full {
        columns.push(Column::text("Table_type"));
    }
    let names: Vec<(String, &str)> = if crate::infoschema::is_schema(db) {
        crate::infoschema::TABLES
            .iter()
            .map(|t| (t.to_string(), "SYSTEM VIEW"))
            .collect()
    } else {
        let mut all: Vec<(String, &str)> = engine
            .tables(db)?
            .into_iter()
            .map(|t| (t, "BASE TABLE"))
            .collect();
        all.extend(engine.views(db).iter().map(|v| (v.name.clone(), "VIEW")));
        // Only what the account may use (before any WHERE sees the names).
        if let Some(a) = env.account() {
            all.retain(|(t, _)| a.any_on_table(db, t));
        }
        all.sort();
        all
    };
    let rows = names
        .into_iter()
        .map(|(t, kind)| {
            let mut r = vec![s(t)];
            if full {
                r.push(s(kind));
            }
            r
        })
        .collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

/// The `Key` of SHOW COLUMNS / `COLUMN_KEY` of INFORMATION_SCHEMA.COLUMNS, as MySQL sets it:
/// PRI for a primary key column (or, without one, a column of the first unique key over NOT
/// NULL columns), UNI for the first column of a one-column unique index, MUL
/// for the first column of any other index.
pub(crate) fn column_key(def: &tierdb_engine::TableDef, ci: usize) -> &'static str {
    let first = |i: &&tierdb_engine::IndexDef| i.columns.first() == Some(&ci);
    // Without a primary key MariaDB shows the first unique key over NOT NULL columns as one.
    let promoted = def.primary_key.is_empty()
        && crate::ddl::display_order(def)
            .into_iter()
            .find(|i| {
                i.unique
                    && i.columns
                        .iter()
                        .all(|&c| def.columns.get(c).is_some_and(|c| !c.nullable))
            })
            .is_some_and(|i| i.columns.contains(&ci));
    if def.primary_key.contains(&ci) || promoted {
        "PRI"
    } else if def
        .indexes
        .iter()
        .filter(first)
        .any(|i| i.unique && i.columns.len() == 1)
    {
        "UNI"
    } else if def.indexes.iter().any(|i| first(&i)) {
        "MUL"
    } else {
        ""
    }
}

pub fn columns(
    def: &tierdb_engine::TableDef,
    full: bool,
    filter: &ShowFilter,
    env: &dyn Env,
) -> Result<QueryResult, SqlError> {
    let names: &[&str] = if full {
        &[
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment",
        ]
    } else {
        &["Field", "Type", "Null", "Key", "Default", "Extra"]
    };
    // Every column but Default is NOT NULL, as in MariaDB (clients size columns by it).
    let mut columns = text_cols(names);
    for c in columns.iter_mut().filter(|c| c.name != "Default") {
        c.not_null = true;
    }
    let mut rows = Vec::new();
    for (ci, c) in def.columns.iter().enumerate() {
        let mut r = vec![s(&c.name), s(ddl::type_name(&c.ty))];
        if full {
            r.push(opt(ddl::collation_name(c).map(str::to_string)));
        }
        r.push(s(if c.nullable { "YES" } else { "NO" }));
        r.push(s(column_key(def, ci)));
        r.push(opt(ddl::default_text(c)));
        r.push(s(ddl::extra_text(c)));
        if full {
            r.push(s("select,insert,update,references"));
            r.push(s(""));
        }
        rows.push(r);
    }
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

/// COM_FIELD_LIST: column definitions of a table.
pub fn field_list(t: &Table) -> Vec<Column> {
    crate::plan::table_scope(t, None)
        .cols
        .into_iter()
        .map(|c| c.meta)
        .collect()
}

/// One column of one index (the primary key first), as SHOW INDEX and
/// INFORMATION_SCHEMA.STATISTICS list them.
pub(crate) struct IndexPart<'a> {
    pub index: &'a str,
    pub unique: bool,
    /// 1-based position in the index.
    pub seq: usize,
    pub column: &'a tierdb_engine::ColumnDef,
}

pub(crate) fn index_parts(def: &tierdb_engine::TableDef) -> Vec<IndexPart<'_>> {
    let pk = (!def.primary_key.is_empty()).then_some(("PRIMARY", true, &def.primary_key));
    pk.into_iter()
        .chain(
            crate::ddl::display_order(def)
                .into_iter()
                .map(|i| (i.name.as_str(), i.unique, &i.columns)),
        )
        .flat_map(|(index, unique, cols)| {
            cols.iter().enumerate().filter_map(move |(k, &ci)| {
                def.columns.get(ci).map(|column| IndexPart {
                    index,
                    unique,
                    seq: k + 1,
                    column,
                })
            })
        })
        .collect()
}

pub fn index(def: &tierdb_engine::TableDef) -> QueryResult {
    let mut columns = text_cols(&[
        "Table",
        "Non_unique",
        "Key_name",
        "Seq_in_index",
        "Column_name",
        "Collation",
    ]);
    columns[1] = Column::bigint("Non_unique");
    columns[3] = Column::bigint("Seq_in_index");
    columns.push(Column::bigint("Cardinality"));
    columns.extend(text_cols(&[
        "Sub_part",
        "Packed",
        "Null",
        "Index_type",
        "Comment",
        "Index_comment",
        "Ignored",
    ]));
    let rows = index_parts(def)
        .into_iter()
        .map(|p| {
            vec![
                s(&def.name),
                Value::Int(i64::from(!p.unique)),
                s(p.index),
                Value::Int(p.seq as i64),
                s(&p.column.name),
                s("A"),
                Value::Null,
                Value::Null,
                Value::Null,
                s(if p.column.nullable { "YES" } else { "" }),
                s("BTREE"),
                s(""),
                s(""),
                s("NO"),
            ]
        })
        .collect();
    QueryResult::Rows { columns, rows }
}

pub fn create_table(t: &Table) -> QueryResult {
    QueryResult::Rows {
        columns: text_cols(&["Table", "Create Table"]),
        rows: vec![vec![
            s(&t.def.name),
            s({
                let text = ddl::render_create_table(&t.db, &t.def, Some(t.next_auto_increment()));
                match text.strip_prefix("CREATE TABLE ") {
                    Some(rest) if t.is_temporary() => format!("CREATE TEMPORARY TABLE {rest}"),
                    _ => text,
                }
            }),
        ]],
    }
}

/// `SHOW CREATE VIEW v` (also `SHOW CREATE TABLE v`).
pub fn create_view(v: &tierdb_engine::ViewDef) -> QueryResult {
    QueryResult::Rows {
        columns: text_cols(&[
            "View",
            "Create View",
            "character_set_client",
            "collation_connection",
        ]),
        rows: vec![vec![
            s(&v.name),
            s(crate::view::create_statement(v)),
            s(&v.charset_client),
            s(&v.collation_connection),
        ]],
    }
}

pub fn create_database(
    engine: &Engine,
    name: &str,
    if_not_exists: bool,
) -> Result<QueryResult, SqlError> {
    if !engine.database_exists(name) {
        return Err(SqlError::new(
            1049,
            "42000",
            format!("Unknown database '{name}'"),
        ));
    }
    Ok(QueryResult::Rows {
        columns: text_cols(&["Database", "Create Database"]),
        rows: vec![vec![
            s(name),
            s(format!(
                "CREATE DATABASE {}`{name}` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci */",
                if if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" }
            )),
        ]],
    })
}

fn var_text(kind: VarKind, v: &Value) -> String {
    match (kind, v) {
        (VarKind::Bool, Value::Int(i)) => if *i != 0 { "ON" } else { "OFF" }.into(),
        _ => variables::show(v),
    }
}

/// SHOW [GLOBAL|SESSION] VARIABLES. `session` gives the session value of a variable.
pub fn variables(
    shared: &Shared,
    global: bool,
    session: &dyn Fn(&str) -> Option<Value>,
    filter: &ShowFilter,
    env: &dyn Env,
) -> Result<QueryResult, SqlError> {
    let columns = text_cols(&["Variable_name", "Value"]);
    let mut rows: Vec<(String, String)> = Vec::new();
    for d in variables::VARS {
        if global && d.scope == VarScope::Session {
            continue;
        }
        let v = if global {
            shared.global(d.name)
        } else {
            session(d.name).or_else(|| shared.global(d.name))
        };
        // log_bin cannot be set, but shows as the switch it is (ON / OFF; 1 / 0 in SELECT).
        let kind = if d.name == "log_bin" {
            VarKind::Bool
        } else {
            d.kind
        };
        rows.push((
            d.name.to_string(),
            var_text(kind, &v.unwrap_or(Value::Null)),
        ));
    }
    for (n, v) in shared.engine.variables() {
        if !rows.iter().any(|(x, _)| *x == n) {
            rows.push((n, v));
        }
    }
    rows.sort();
    let rows = rows.into_iter().map(|(n, v)| vec![s(n), s(v)]).collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

/// SHOW STATUS; `snapshot`: the session's consistent-snapshot binary-log position, shown as
/// `Binlog_snapshot_file` / `_position` instead of the current one.
pub fn status(
    shared: &Shared,
    filter: &ShowFilter,
    env: &dyn Env,
    snapshot: Option<&tierdb_binlog::log::SnapshotPos>,
) -> Result<QueryResult, SqlError> {
    let columns = text_cols(&["Variable_name", "Value"]);
    let rows = shared
        .status()
        .into_iter()
        .map(|(n, v)| match (n.as_str(), snapshot) {
            ("Binlog_snapshot_file", Some(p)) => (n, p.file.clone()),
            ("Binlog_snapshot_position", Some(p)) => (n, p.offset.to_string()),
            _ => (n, v),
        })
        .map(|(n, v)| vec![s(n), s(v)])
        .collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

pub fn processlist(shared: &Shared, me: u32, full: bool) -> QueryResult {
    let mut columns = vec![Column::bigint("Id")];
    columns.extend(text_cols(&["User", "Host", "db", "Command"]));
    columns.push(Column::bigint("Time"));
    columns.extend(text_cols(&["State", "Info"]));
    columns.push(Column {
        kind: crate::result::ColumnKind::NewDecimal,
        decimals: 3,
        length: 7,
        is_text: false,
        ..Column::text("Progress")
    });
    let now = shared.now_ms();
    let conns: Vec<_> = shared
        .conns
        .lock()
        .iter()
        .map(|(id, c)| (*id, c.clone()))
        .collect();
    let rows = conns
        .into_iter()
        .map(|(id, c)| {
            let busy = id == me || c.busy.load(Ordering::Relaxed);
            let since = c.since_ms.load(Ordering::Relaxed);
            // Info: the running statement (NULL while idle); without FULL its first 100
            // characters.
            let info = if !busy {
                Value::Null
            } else {
                let text = c.info.lock().clone();
                s(if full {
                    text
                } else {
                    text.chars().take(100).collect()
                })
            };
            let state = if busy {
                Waiting::state(c.waiting.load(Ordering::Relaxed))
            } else {
                ""
            };
            vec![
                Value::Int(i64::from(id)),
                s(&c.user),
                s(&c.host),
                opt(c.db.lock().clone()),
                s(if busy { "Query" } else { "Sleep" }),
                Value::Int((now.saturating_sub(since) / 1000) as i64),
                s(state),
                info,
                s("0.000"),
            ]
        })
        .collect();
    QueryResult::Rows { columns, rows }
}

/// SHOW WARNINGS: the last statement's warnings, as (code, message).
/// SHOW WARNINGS / ERRORS of `list`, `limit` = (offset, count) of it.
pub fn warnings<'a>(
    list: impl Iterator<Item = &'a crate::result::Warning>,
    limit: Option<(usize, usize)>,
) -> QueryResult {
    let (skip, take) = limit.unwrap_or((0, usize::MAX));
    let mut columns = text_cols(&["Level"]);
    columns.push(Column {
        kind: crate::result::ColumnKind::Long,
        length: 4,
        is_text: false,
        ..Column::text("Code")
    });
    columns.push(Column::text("Message"));
    let rows = list
        .skip(skip)
        .take(take)
        .map(|w| {
            vec![
                Value::Bytes(w.level.as_bytes().to_vec()),
                Value::Int(i64::from(w.code)),
                Value::Bytes(w.message.as_bytes().to_vec()),
            ]
        })
        .collect();
    QueryResult::Rows { columns, rows }
}

pub fn engines() -> QueryResult {
    QueryResult::Rows {
        columns: text_cols(&["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"]),
        rows: vec![vec![
            s("InnoDB"),
            s("DEFAULT"),
            s("tierdb tiered page store (DRAM buffer pool + SSD extension + durable disk), answering to InnoDB"),
            s("YES"),
            s("NO"),
            s("NO"),
        ]],
    }
}

/// What a `Utility::ShowNone` lists none of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoneOf {
    /// SHOW FUNCTION STATUS / SHOW PROCEDURE STATUS.
    Routines,
    Triggers,
    Events,
    /// SHOW SLAVE STATUS / SHOW REPLICA STATUS: tierdb replicates from no server.
    Replica,
    /// SHOW ALL SLAVES STATUS.
    AllReplicas,
}

/// MariaDB 10.11's columns of the SHOW, and no rows.
pub fn none_of(of: NoneOf) -> QueryResult {
    use crate::result::ColumnKind as K;
    const T: K = K::VarString;
    const ROUTINES: &[(&str, K)] = &[
        ("Db", T),
        ("Name", T),
        ("Type", T),
        ("Definer", T),
        ("Modified", K::DateTime),
        ("Created", K::DateTime),
        ("Security_type", T),
        ("Comment", K::Blob),
        ("character_set_client", T),
        ("collation_connection", T),
        ("Database Collation", T),
    ];
    const TRIGGERS: &[(&str, K)] = &[
        ("Trigger", T),
        ("Event", T),
        ("Table", T),
        ("Statement", K::Blob),
        ("Timing", T),
        ("Created", K::DateTime),
        ("sql_mode", T),
        ("Definer", T),
        ("character_set_client", T),
        ("collation_connection", T),
        ("Database Collation", T),
    ];
    const EVENTS: &[(&str, K)] = &[
        ("Db", T),
        ("Name", T),
        ("Definer", T),
        ("Time zone", T),
        ("Type", T),
        ("Execute at", K::DateTime),
        ("Interval value", T),
        ("Interval field", T),
        ("Starts", K::DateTime),
        ("Ends", K::DateTime),
        ("Status", T),
        ("Originator", K::LongLong),
        ("character_set_client", T),
        ("collation_connection", T),
        ("Database Collation", T),
    ];
    const REPLICA: &[(&str, K)] = &[
        ("Slave_IO_State", T),
        ("Master_Host", T),
        ("Master_User", T),
        ("Master_Port", K::Long),
        ("Connect_Retry", K::Long),
        ("Master_Log_File", T),
        ("Read_Master_Log_Pos", K::LongLong),
        ("Relay_Log_File", T),
        ("Relay_Log_Pos", K::LongLong),
        ("Relay_Master_Log_File", T),
        ("Slave_IO_Running", T),
        ("Slave_SQL_Running", T),
        ("Replicate_Do_DB", T),
        ("Replicate_Ignore_DB", T),
        ("Replicate_Do_Table", T),
        ("Replicate_Ignore_Table", T),
        ("Replicate_Wild_Do_Table", T),
        ("Replicate_Wild_Ignore_Table", T),
        ("Last_Errno", K::Long),
        ("Last_Error", T),
        ("Skip_Counter", K::Long),
        ("Exec_Master_Log_Pos", K::LongLong),
        ("Relay_Log_Space", K::LongLong),
        ("Until_Condition", T),
        ("Until_Log_File", T),
        ("Until_Log_Pos", K::LongLong),
        ("Master_SSL_Allowed", T),
        ("Master_SSL_CA_File", T),
        ("Master_SSL_CA_Path", T),
        ("Master_SSL_Cert", T),
        ("Master_SSL_Cipher", T),
        ("Master_SSL_Key", T),
        ("Seconds_Behind_Master", K::LongLong),
        ("Master_SSL_Verify_Server_Cert", T),
        ("Last_IO_Errno", K::Long),
        ("Last_IO_Error", T),
        ("Last_SQL_Errno", K::Long),
        ("Last_SQL_Error", T),
        ("Replicate_Ignore_Server_Ids", T),
        ("Master_Server_Id", K::Long),
        ("Master_SSL_Crl", T),
        ("Master_SSL_Crlpath", T),
        ("Using_Gtid", T),
        ("Gtid_IO_Pos", T),
        ("Replicate_Do_Domain_Ids", T),
        ("Replicate_Ignore_Domain_Ids", T),
        ("Parallel_Mode", T),
        ("SQL_Delay", K::Long),
        ("SQL_Remaining_Delay", K::Long),
        ("Slave_SQL_Running_State", T),
        ("Slave_DDL_Groups", K::LongLong),
        ("Slave_Non_Transactional_Groups", K::LongLong),
        ("Slave_Transactional_Groups", K::LongLong),
        ("Replicate_Rewrite_DB", T),
    ];
    const ALL_EXTRA_FIRST: &[(&str, K)] = &[("Connection_name", T), ("Slave_SQL_State", T)];
    const ALL_EXTRA_LAST: &[(&str, K)] = &[
        ("Retried_transactions", K::Long),
        ("Max_relay_log_size", K::LongLong),
        ("Executed_log_entries", K::Long),
        ("Slave_received_heartbeats", K::Long),
        ("Slave_heartbeat_period", K::Double),
        ("Gtid_Slave_Pos", T),
    ];
    let cols: Vec<(&str, K)> = match of {
        NoneOf::Routines => ROUTINES.to_vec(),
        NoneOf::Triggers => TRIGGERS.to_vec(),
        NoneOf::Events => EVENTS.to_vec(),
        NoneOf::Replica => REPLICA.to_vec(),
        NoneOf::AllReplicas => [ALL_EXTRA_FIRST, REPLICA, ALL_EXTRA_LAST].concat(),
    };
    QueryResult::Rows {
        columns: cols
            .into_iter()
            .map(|(name, kind)| crate::result::Column {
                kind,
                is_text: kind == T || kind == K::Blob,
                ..crate::result::Column::text(name)
            })
            .collect(),
        rows: Vec::new(),
    }
}

/// The character sets tierdb accepts in DDL (`ddl::charset_named`), as MariaDB 10.11 lists
/// them: name, description, default collation, bytes per character at most.
const CHARSETS: [(&str, &str, &str, i64); 5] = [
    ("latin1", "cp1252 West European", "latin1_swedish_ci", 1),
    ("ascii", "US ASCII", "ascii_general_ci", 1),
    ("utf8mb3", "UTF-8 Unicode", "utf8mb3_general_ci", 3),
    ("utf8mb4", "UTF-8 Unicode", "utf8mb4_general_ci", 4),
    ("binary", "Binary pseudo charset", "binary", 1),
];

/// The collations of those character sets that tierdb accepts (`ddl::collation_named` maps
/// each to its case-insensitive or binary rules), with MariaDB 10.11's ids and sort lengths.
const COLLATIONS: [(&str, &str, i64, bool, i64); 18] = [
    ("latin1_swedish_ci", "latin1", 8, true, 1),
    ("latin1_bin", "latin1", 47, false, 1),
    ("latin1_general_ci", "latin1", 48, false, 1),
    ("latin1_nopad_bin", "latin1", 1071, false, 1),
    ("ascii_general_ci", "ascii", 11, true, 1),
    ("ascii_bin", "ascii", 65, false, 1),
    ("ascii_nopad_bin", "ascii", 1089, false, 1),
    ("utf8mb3_general_ci", "utf8mb3", 33, true, 1),
    ("utf8mb3_bin", "utf8mb3", 83, false, 1),
    ("utf8mb3_unicode_ci", "utf8mb3", 192, false, 8),
    ("utf8mb3_swedish_ci", "utf8mb3", 200, false, 8),
    ("utf8mb3_nopad_bin", "utf8mb3", 1107, false, 1),
    ("utf8mb4_general_ci", "utf8mb4", 45, true, 1),
    ("utf8mb4_bin", "utf8mb4", 46, false, 1),
    ("utf8mb4_unicode_ci", "utf8mb4", 224, false, 8),
    ("utf8mb4_swedish_ci", "utf8mb4", 232, false, 8),
    ("utf8mb4_nopad_bin", "utf8mb4", 1070, false, 1),
    ("binary", "binary", 63, true, 1),
];

/// `SHOW CHARACTER SET [LIKE 'p' | WHERE ...]`.
pub fn charsets(filter: &ShowFilter, env: &dyn Env) -> Result<QueryResult, SqlError> {
    let mut columns = text_cols(&["Charset", "Description", "Default collation", "Maxlen"]);
    columns[3] = Column::bigint("Maxlen");
    for c in &mut columns {
        c.not_null = true;
    }
    let rows = CHARSETS
        .iter()
        .map(|(n, d, c, m)| vec![s(n), s(d), s(c), Value::Int(*m)])
        .collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

/// `SHOW COLLATION [LIKE 'p' | WHERE ...]`.
pub fn collations(filter: &ShowFilter, env: &dyn Env) -> Result<QueryResult, SqlError> {
    let mut columns = text_cols(&[
        "Collation",
        "Charset",
        "Id",
        "Default",
        "Compiled",
        "Sortlen",
    ]);
    columns[2] = Column::bigint("Id");
    columns[5] = Column::bigint("Sortlen");
    // As MariaDB declares them (clients size the Id column for a NULL).
    for c in &mut columns {
        c.not_null = c.name != "Id";
    }
    let rows = COLLATIONS
        .iter()
        .map(|(n, cs, id, default, sortlen)| {
            vec![
                s(n),
                s(cs),
                Value::Int(*id),
                s(if *default { "Yes" } else { "" }),
                s("Yes"),
                Value::Int(*sortlen),
            ]
        })
        .collect();
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

pub fn table_status(
    engine: &Engine,
    db: &str,
    filter: &ShowFilter,
    env: &dyn Env,
) -> Result<QueryResult, SqlError> {
    let names = [
        "Name",
        "Engine",
        "Version",
        "Row_format",
        "Rows",
        "Avg_row_length",
        "Data_length",
        "Max_data_length",
        "Index_length",
        "Data_free",
        "Auto_increment",
        "Create_time",
        "Update_time",
        "Check_time",
        "Collation",
        "Checksum",
        "Create_options",
        "Comment",
    ];
    let columns = text_cols(&names);
    let mut rows = Vec::new();
    let mut names: Vec<(String, bool)> =
        engine.tables(db)?.into_iter().map(|t| (t, false)).collect();
    names.extend(engine.views(db).iter().map(|v| (v.name.clone(), true)));
    // Only what the account may use (before any WHERE sees the names).
    if let Some(a) = env.account() {
        names.retain(|(t, _)| a.any_on_table(db, t));
    }
    names.sort();
    for (t, view) in names {
        if view {
            // As MariaDB: a view's row is NULLs but its name and the comment VIEW.
            let mut r = vec![s(&t)];
            r.extend(std::iter::repeat_n(Value::Null, 16));
            r.push(s("VIEW"));
            rows.push(r);
            continue;
        }
        let mut r = vec![s(&t), s("InnoDB"), s("10"), s("Dynamic")];
        r.extend(std::iter::repeat_n(Value::Null, 10));
        let coll = engine.table(db, &t).map_or(Collation::GeneralCi, |h| {
            ddl::table_default_collation(&h.def)
        });
        r.push(s(coll.name()));
        r.push(Value::Null);
        r.push(s(""));
        r.push(s(""));
        rows.push(r);
    }
    let rows = filter_rows(&columns, rows, filter, 0, env)?;
    Ok(QueryResult::Rows { columns, rows })
}

pub fn analyze(
    engine: &Engine,
    tables: &[(String, String)],
    temps: &crate::temp::TempTables,
) -> QueryResult {
    let columns = text_cols(&["Table", "Op", "Msg_type", "Msg_text"]);
    let mut rows = Vec::new();
    for (db, t) in tables {
        let name = format!("{db}.{t}");
        match engine.table(db, temps.key(db, t).unwrap_or(t)) {
            Ok(_) => rows.push(vec![s(&name), s("analyze"), s("status"), s("OK")]),
            Err(e) => {
                // (MariaDB names the table also when its database is missing.)
                let msg = match e {
                    tierdb_engine::Error::NoSuchDatabase(_) => {
                        format!("Table '{name}' doesn't exist")
                    }
                    e => e.to_string(),
                };
                rows.push(vec![s(&name), s("analyze"), s("Error"), s(msg)]);
                rows.push(vec![
                    s(&name),
                    s("analyze"),
                    s("status"),
                    s("Operation failed"),
                ]);
            }
        }
    }
    QueryResult::Rows { columns, rows }
}

// ---------------------------------------------------------------------------------------
// EXPLAIN

fn explain_columns() -> Vec<Column> {
    let mut c = vec![Column::bigint("id")];
    c.extend(text_cols(&[
        "select_type",
        "table",
        "type",
        "possible_keys",
        "key",
        "key_len",
        "ref",
    ]));
    c.push(Column::bigint("rows"));
    c.push(Column::text("Extra"));
    c
}

fn access_row(
    id: i64,
    select_type: &str,
    table: &str,
    e: &ExplainInfo,
    extra: Vec<&str>,
) -> Vec<Value> {
    let mut extra = extra;
    if e.using_where {
        extra.insert(0, "Using where");
    }
    vec![
        Value::Int(id),
        s(select_type),
        s(table),
        s(e.access_type),
        if e.possible_keys.is_empty() {
            Value::Null
        } else {
            s(e.possible_keys.join(","))
        },
        opt(e.key.as_deref()),
        match e.key_len {
            Some(l) => s(l.to_string()),
            None => Value::Null,
        },
        opt(e.key_ref.as_deref()),
        match e.rows {
            Some(r) => Value::Int(r as i64),
            None => Value::Null,
        },
        if extra.is_empty() {
            Value::Null
        } else {
            s(extra.join("; "))
        },
    ]
}

/// An EXPLAIN row reading no table: every column NULL but the id, type and `extra`.
fn tableless_row(id: i64, select_type: &str, extra: &str) -> Vec<Value> {
    let mut r = vec![Value::Int(id), s(select_type)];
    r.extend(std::iter::repeat_n(Value::Null, 7));
    r.push(s(extra));
    r
}

fn explain_select(
    p: &SelectPlan,
    id: i64,
    select_type: &str,
    rows: &mut Vec<Vec<Value>>,
    next_id: &mut i64,
) {
    let mut extra = Vec::new();
    if p.distinct || p.agg.as_ref().is_some_and(|a| !a.group.is_empty()) {
        extra.push("Using temporary");
    }
    if !p.order.is_empty() && !p.sorted_by_access {
        extra.push("Using filesort");
    }
    if let (Source::Table { table, .. }, Some(l)) = (&p.source, &p.loose) {
        extra.retain(|e| *e != "Using temporary" || !p.order.is_empty());
        extra.insert(0, "Using index for group-by");
        rows.push(access_row(
            id,
            select_type,
            &table.def.name,
            &l.explain,
            extra,
        ));
        return;
    }
    match &p.source {
        Source::Dual => rows.push(tableless_row(id, select_type, "No tables used")),
        Source::Table { .. } if !p.extremes.is_empty() => rows.push(tableless_row(
            id,
            select_type,
            "Select tables optimized away",
        )),
        Source::Table { table, access } => {
            let mut a = access.clone();
            if p.filter.is_some() && matches!(a.access, Access::Full | Access::FullIndex(_)) {
                a.explain.using_where = true;
            }
            rows.push(access_row(
                id,
                select_type,
                &table.def.name,
                &a.explain,
                extra,
            ));
        }
        Source::Virtual(info) => rows.push(scan_row(id, select_type, &info.def.name, p, extra)),
        Source::SetOperation {
            op, left, right, ..
        } => {
            explain_select(left, id, select_type, rows, next_id);
            *next_id += 1;
            let child = *next_id;
            explain_select(right, child, op.sql(), rows, next_id);
        }
        Source::Join(j) => {
            use crate::join::JoinInput;
            // Derived inputs are explained after the join's own rows, as `<derivedN>`.
            let mut derived: Vec<(i64, &SelectPlan)> = Vec::new();
            fn name_of<'a>(
                input: &'a JoinInput,
                next_id: &mut i64,
                derived: &mut Vec<(i64, &'a SelectPlan)>,
            ) -> String {
                match input {
                    JoinInput::Table(t) => t.def.name.clone(),
                    JoinInput::Derived { plan, .. } => {
                        *next_id += 1;
                        derived.push((*next_id, plan));
                        format!("<derived{next_id}>")
                    }
                }
            }
            let first = name_of(&j.first, next_id, &mut derived);
            match &j.first_access {
                Some(access) => {
                    let mut a = access.clone();
                    if j.first_filtered && matches!(a.access, Access::Full | Access::FullIndex(_)) {
                        a.explain.using_where = true;
                    }
                    rows.push(access_row(id, select_type, &first, &a.explain, extra));
                }
                None => rows.push(scan_row(id, select_type, &first, p, extra)),
            }
            for st in &j.steps {
                let (kind, key) = match &st.lookup {
                    Some(l) if l.point => ("eq_ref", s(&l.key_name)),
                    Some(l) => ("ref", s(&l.key_name)),
                    None => ("ALL", Value::Null),
                };
                let filtered = st.on.is_some() || p.filter.is_some();
                let name = name_of(&st.input, next_id, &mut derived);
                rows.push(vec![
                    Value::Int(id),
                    s(select_type),
                    s(name),
                    s(kind),
                    Value::Null,
                    key,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    match (filtered, st.not_exists) {
                        (_, true) => s("Using where; Not exists"),
                        (true, false) => s("Using where"),
                        (false, false) => Value::Null,
                    },
                ]);
            }
            for (child, plan) in derived {
                explain_select(plan, child, "DERIVED", rows, next_id);
            }
        }
        Source::Derived { plan, .. } => {
            *next_id += 1;
            let child = *next_id;
            rows.push(scan_row(
                id,
                select_type,
                &format!("<derived{child}>"),
                p,
                extra,
            ));
            explain_select(plan, child, "DERIVED", rows, next_id);
        }
        // MariaDB's shape: the anchor as DERIVED, the step as RECURSIVE UNION reading the
        // work table.
        Source::WorkTable(_) => rows.push(scan_row(id, select_type, "<work table>", p, extra)),
        Source::Recursive { anchor, step, .. } => {
            explain_select(anchor, id, select_type, rows, next_id);
            *next_id += 1;
            let child = *next_id;
            explain_select(step, child, "RECURSIVE UNION", rows, next_id);
        }
    }
}

/// An EXPLAIN row for a source read whole (a derived table, an INFORMATION_SCHEMA table).
fn scan_row(
    id: i64,
    select_type: &str,
    table: &str,
    p: &SelectPlan,
    mut extra: Vec<&str>,
) -> Vec<Value> {
    if p.filter.is_some() {
        extra.insert(0, "Using where");
    }
    vec![
        Value::Int(id),
        s(select_type),
        s(table),
        s("ALL"),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        if extra.is_empty() {
            Value::Null
        } else {
            s(extra.join("; "))
        },
    ]
}

pub fn explain(plan: &Plan) -> QueryResult {
    let mut rows = Vec::new();
    match plan {
        Plan::Select(p) => {
            let st = if matches!(p.source, Source::Derived { .. }) {
                "PRIMARY"
            } else {
                "SIMPLE"
            };
            let mut next = 1;
            explain_select(p, 1, st, &mut rows, &mut next);
        }
        Plan::Update(u) => rows.push(access_row(
            1,
            "SIMPLE",
            &u.table.def.name,
            &u.access.explain,
            Vec::new(),
        )),
        Plan::Delete(d) => rows.push(access_row(
            1,
            "SIMPLE",
            &d.table.def.name,
            &d.access.explain,
            Vec::new(),
        )),
        Plan::Insert(i) => rows.push(vec![
            Value::Int(1),
            s("INSERT"),
            s(&i.table.def.name),
            s("ALL"),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
        ]),
        _ => {}
    }
    QueryResult::Rows {
        columns: explain_columns(),
        rows,
    }
}
