//! System variables: the registry of names MySQL clients ask for, with defaults, scope and
//! validation; global values live in `Shared`, session overrides in the `Session`.
//!
//! Owns: `@@x` / `SET [GLOBAL|SESSION] x = v` semantics and their error codes (1193 unknown,
//! 1228/1229 wrong scope, 1238 read-only, 1231/1232 bad value).
//! Must never: accept a value it cannot show back, or let `SET SESSION` change a global.
//! Engine settings (`engine.variables()`) are global and are offered to
//! `engine.set_variable` first.

use crate::result::SqlError;
use std::collections::HashMap;
use tierdb_engine::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarScope {
    Global,
    Session,
    Both,
}

#[derive(Clone, Copy, Debug)]
pub enum VarKind {
    Bool,
    Int { min: i64, max: i64 },
    Str,
    Enum(&'static [&'static str]),
    ReadOnly,
}

pub struct VarDef {
    pub name: &'static str,
    pub scope: VarScope,
    pub kind: VarKind,
}

const ISOLATION: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];
const CHARSETS: &[&str] = &["utf8mb4", "utf8", "utf8mb3", "latin1", "binary", "ascii"];

macro_rules! v {
    ($n:expr, $s:ident, $k:expr) => {
        VarDef {
            name: $n,
            scope: VarScope::$s,
            kind: $k,
        }
    };
}

const BIG: i64 = i64::MAX;

/// The collation MariaDB numbers `id` (the ones tierdb can name).
fn collation_by_id(id: i64) -> Option<&'static str> {
    Some(match id {
        8 => "latin1_swedish_ci",
        33 => "utf8mb3_general_ci",
        45 => "utf8mb4_general_ci",
        46 => "utf8mb4_bin",
        63 => "binary",
        83 => "utf8mb3_bin",
        224 => "utf8mb4_unicode_ci",
        _ => return None,
    })
}

/// Every variable tierdb knows (engine variables come from the engine in addition).
pub static VARS: &[VarDef] = &[
    v!(
        "auto_increment_increment",
        Both,
        VarKind::Int { min: 1, max: 1 }
    ),
    v!(
        "auto_increment_offset",
        Both,
        VarKind::Int { min: 1, max: 1 }
    ),
    v!("autocommit", Both, VarKind::Bool),
    v!("big_tables", Both, VarKind::Bool),
    v!("character_set_client", Both, VarKind::Enum(CHARSETS)),
    v!("character_set_connection", Both, VarKind::Enum(CHARSETS)),
    v!("character_set_database", Both, VarKind::Enum(CHARSETS)),
    v!("character_set_filesystem", Both, VarKind::Enum(CHARSETS)),
    v!("character_set_results", Both, VarKind::Str),
    v!("character_set_server", Both, VarKind::Enum(CHARSETS)),
    v!("character_set_system", Global, VarKind::ReadOnly),
    v!("collation_connection", Both, VarKind::Str),
    v!("collation_database", Both, VarKind::Str),
    v!("collation_server", Both, VarKind::Str),
    v!(
        "connect_timeout",
        Global,
        VarKind::Int {
            min: 2,
            max: 31_536_000
        }
    ),
    v!("datadir", Global, VarKind::ReadOnly),
    v!("default_storage_engine", Both, VarKind::Str),
    v!("default_week_format", Both, VarKind::Int { min: 0, max: 7 }),
    v!(
        "div_precision_increment",
        Both,
        VarKind::Int { min: 0, max: 30 }
    ),
    v!("error_count", Session, VarKind::ReadOnly),
    v!("explicit_defaults_for_timestamp", Both, VarKind::Bool),
    v!("foreign_key_checks", Both, VarKind::Bool),
    v!(
        "group_concat_max_len",
        Both,
        VarKind::Int { min: 4, max: BIG }
    ),
    v!("have_ssl", Global, VarKind::ReadOnly),
    v!("hostname", Global, VarKind::ReadOnly),
    v!("identity", Session, VarKind::Int { min: 0, max: BIG }),
    v!("init_connect", Global, VarKind::Str),
    // tierdb rolls back only the statement on a lock wait timeout (fixed).
    v!("innodb_rollback_on_timeout", Global, VarKind::ReadOnly),
    v!(
        "interactive_timeout",
        Both,
        VarKind::Int {
            min: 1,
            max: 31_536_000
        }
    ),
    v!("last_insert_id", Session, VarKind::Int { min: 0, max: BIG }),
    v!("lc_messages", Both, VarKind::Str),
    v!("lc_time_names", Both, VarKind::Str),
    v!("license", Global, VarKind::ReadOnly),
    v!("local_infile", Global, VarKind::Bool),
    v!(
        "lock_wait_timeout",
        Both,
        VarKind::Int {
            min: 1,
            max: 31_536_000
        }
    ),
    v!("log_bin", Global, VarKind::ReadOnly),
    v!("log_bin_basename", Global, VarKind::ReadOnly),
    v!("log_bin_index", Global, VarKind::ReadOnly),
    v!("binlog_format", Both, VarKind::Enum(&["ROW"])),
    v!("binlog_checksum", Global, VarKind::ReadOnly),
    v!("binlog_row_image", Both, VarKind::Enum(&["FULL"])),
    v!("max_binlog_size", Global, VarKind::ReadOnly),
    v!("sync_binlog", Global, VarKind::ReadOnly),
    v!("gtid_binlog_pos", Global, VarKind::ReadOnly),
    v!("gtid_current_pos", Global, VarKind::ReadOnly),
    // Session values are accepted (a replayed binary log sets them) and not used: the binary
    // log writes the configured server_id and domain 0. SET GLOBAL of either is 1238.
    v!(
        "gtid_domain_id",
        Both,
        VarKind::Int {
            min: 0,
            max: 4_294_967_295
        }
    ),
    v!("gtid_seq_no", Session, VarKind::Int { min: 0, max: BIG }),
    v!("pseudo_slave_mode", Session, VarKind::Bool),
    v!(
        "pseudo_thread_id",
        Session,
        VarKind::Int {
            min: 0,
            max: 4_294_967_295
        }
    ),
    v!("skip_parallel_replication", Session, VarKind::Bool),
    v!(
        "max_delayed_threads",
        Both,
        VarKind::Int {
            min: 0,
            max: 16_384
        }
    ),
    v!("completion_type", Both, VarKind::Enum(&["NO_CHAIN"])),
    v!(
        "check_constraint_checks",
        Both,
        VarKind::Enum(&["OFF", "ON"])
    ),
    v!(
        "system_versioning_insert_history",
        Both,
        VarKind::Enum(&["OFF"])
    ),
    v!(
        "timestamp",
        Session,
        VarKind::Int {
            min: 0,
            max: 2_147_483_647
        }
    ),
    v!("lower_case_table_names", Global, VarKind::ReadOnly),
    v!(
        "max_allowed_packet",
        Both,
        VarKind::Int {
            min: 1024,
            max: 1 << 30
        }
    ),
    v!(
        "max_connections",
        Global,
        VarKind::Int {
            min: 1,
            max: 100_000
        }
    ),
    // Iterations a WITH RECURSIVE query may run (past them it stops with error 1931).
    v!(
        "max_recursive_iterations",
        Both,
        VarKind::Int { min: 0, max: BIG }
    ),
    v!(
        "max_execution_time",
        Both,
        VarKind::Int { min: 0, max: BIG }
    ),
    v!(
        "max_heap_table_size",
        Both,
        VarKind::Int {
            min: 16384,
            max: BIG
        }
    ),
    v!(
        "max_statement_time",
        Both,
        VarKind::Int { min: 0, max: BIG }
    ),
    v!(
        "max_user_connections",
        Both,
        VarKind::Int {
            min: 0,
            max: 100_000
        }
    ),
    v!(
        "net_buffer_length",
        Both,
        VarKind::Int {
            min: 1024,
            max: 1_048_576
        }
    ),
    v!(
        "net_read_timeout",
        Both,
        VarKind::Int {
            min: 1,
            max: 31_536_000
        }
    ),
    v!(
        "net_write_timeout",
        Both,
        VarKind::Int {
            min: 1,
            max: 31_536_000
        }
    ),
    // Accepted and shown back (mariadb-dump sets it); the planner has no such switches.
    v!("optimizer_switch", Both, VarKind::Str),
    v!("performance_schema", Global, VarKind::ReadOnly),
    v!("port", Global, VarKind::ReadOnly),
    v!("protocol_version", Global, VarKind::ReadOnly),
    v!("query_cache_size", Global, VarKind::Int { min: 0, max: 0 }),
    v!("query_cache_type", Both, VarKind::Enum(&["OFF"])),
    // The folder server-side LOAD DATA INFILE reads from (config `secure_file_priv`); NULL: any.
    v!("secure_file_priv", Global, VarKind::ReadOnly),
    // Written into every binary-log event: set in the config file (`server_id`); a session
    // value is accepted as for gtid_domain_id.
    v!(
        "server_id",
        Both,
        VarKind::Int {
            min: 0,
            max: 4_294_967_295
        }
    ),
    v!("skip_networking", Global, VarKind::ReadOnly),
    v!("socket", Global, VarKind::ReadOnly),
    v!("sql_auto_is_null", Both, VarKind::Bool),
    v!("sql_log_bin", Session, VarKind::Bool),
    v!("sql_mode", Both, VarKind::Str),
    v!("sql_notes", Both, VarKind::Bool),
    v!("sql_quote_show_create", Both, VarKind::Bool),
    v!("sql_safe_updates", Both, VarKind::Bool),
    v!("sql_select_limit", Both, VarKind::Int { min: 0, max: BIG }),
    v!("sql_warnings", Both, VarKind::Bool),
    v!("storage_engine", Both, VarKind::Str),
    v!("system_time_zone", Global, VarKind::ReadOnly),
    v!(
        "table_open_cache",
        Global,
        VarKind::Int {
            min: 1,
            max: 1_048_576
        }
    ),
    v!(
        "thread_cache_size",
        Global,
        VarKind::Int { min: 0, max: 16384 }
    ),
    v!(
        "time_zone",
        Both,
        VarKind::Enum(&["SYSTEM", "+00:00", "UTC"])
    ),
    v!(
        "tmp_table_size",
        Both,
        VarKind::Int {
            min: 1024,
            max: BIG
        }
    ),
    v!("transaction_isolation", Both, VarKind::Enum(ISOLATION)),
    v!("transaction_read_only", Both, VarKind::Bool),
    v!("tx_isolation", Both, VarKind::Enum(ISOLATION)),
    v!("tx_read_only", Both, VarKind::Bool),
    v!("unique_checks", Both, VarKind::Bool),
    v!("version", Global, VarKind::ReadOnly),
    v!("version_comment", Global, VarKind::ReadOnly),
    v!("version_compile_machine", Global, VarKind::ReadOnly),
    v!("version_compile_os", Global, VarKind::ReadOnly),
    v!(
        "wait_timeout",
        Both,
        VarKind::Int {
            min: 1,
            max: 31_536_000
        }
    ),
    v!("warning_count", Session, VarKind::ReadOnly),
];

pub fn lookup(name: &str) -> Option<&'static VarDef> {
    VARS.iter().find(|d| d.name == name)
}

/// Defaults, given facts only the server knows.
pub fn defaults(
    version: &str,
    version_comment: &str,
    port: u16,
    hostname: &str,
    datadir: &str,
) -> HashMap<&'static str, Value> {
    let s = |x: &str| Value::Bytes(x.as_bytes().to_vec());
    let mut m = HashMap::new();
    for d in VARS {
        let v = match d.name {
            "auto_increment_increment" | "auto_increment_offset" => Value::Int(1),
            "autocommit" | "foreign_key_checks" | "unique_checks" | "sql_notes" | "sql_log_bin" | "sql_quote_show_create" => Value::Int(1),
            "explicit_defaults_for_timestamp" | "local_infile" => Value::Int(1),
            "big_tables" | "sql_auto_is_null" | "sql_safe_updates" | "sql_warnings" | "transaction_read_only" | "tx_read_only" => {
                Value::Int(0)
            }
            "character_set_client" | "character_set_connection" | "character_set_database" | "character_set_results" | "character_set_server" => {
                s("utf8mb4")
            }
            "character_set_filesystem" => s("binary"),
            "character_set_system" => s("utf8mb3"),
            "collation_connection" | "collation_database" | "collation_server" => s("utf8mb4_general_ci"),
            "connect_timeout" => Value::Int(10),
            "datadir" => s(datadir),
            "default_storage_engine" | "storage_engine" => s("InnoDB"),
            "default_week_format" | "error_count" | "warning_count" | "identity" | "last_insert_id" => Value::Int(0),
            "div_precision_increment" => Value::Int(4),
            "group_concat_max_len" => Value::Int(1_048_576),
            "have_ssl" => s("DISABLED"),
            "hostname" => s(hostname),
            "init_connect" => s(""),
            "interactive_timeout" | "wait_timeout" => Value::Int(28_800),
            "lc_messages" | "lc_time_names" => s("en_US"),
            "license" => s("Apache-2.0"),
            "lock_wait_timeout" => Value::Int(86_400),
            "log_bin" => Value::Int(0),
            "performance_schema" | "skip_networking" => s("OFF"),
            "log_bin_basename" | "log_bin_index" => Value::Null,
            "binlog_format" => s("ROW"),
            "binlog_checksum" => s("CRC32"),
            "binlog_row_image" => s("FULL"),
            "max_binlog_size" => Value::Int(1 << 30),
            // The binary log is made durable with the redo log (no fsync of its own).
            "sync_binlog" | "gtid_domain_id" | "gtid_seq_no" | "pseudo_slave_mode" => Value::Int(0),
            "skip_parallel_replication" | "timestamp" | "pseudo_thread_id" => Value::Int(0),
            "max_delayed_threads" => Value::Int(20),
            "completion_type" => s("NO_CHAIN"),
            "check_constraint_checks" => s("ON"),
            "system_versioning_insert_history" => s("OFF"),
            "gtid_binlog_pos" | "gtid_current_pos" => s(""),
            "innodb_rollback_on_timeout" => s("OFF"),
            "lower_case_table_names" => Value::Int(0),
            "max_allowed_packet" => Value::Int(64 << 20),
            "max_connections" => Value::Int(151),
            "max_recursive_iterations" => Value::Int(1000),
            "max_execution_time" | "max_statement_time" | "max_user_connections" => Value::Int(0),
            "max_heap_table_size" | "tmp_table_size" => Value::Int(16 << 20),
            "net_buffer_length" => Value::Int(16384),
            "net_read_timeout" => Value::Int(30),
            "net_write_timeout" => Value::Int(60),
            "optimizer_switch" => s("index_merge=on,index_merge_union=on,index_merge_sort_union=on,index_merge_intersection=on,semijoin=on"),
            "port" => Value::Int(i64::from(port)),
            "protocol_version" => Value::Int(10),
            "query_cache_size" => Value::Int(0),
            "query_cache_type" => s("OFF"),
            "server_id" => Value::Int(1),
            "socket" => s(""),
            "sql_mode" => s("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"),
            "sql_select_limit" => Value::Int(i64::MAX),
            "system_time_zone" => s("UTC"),
            "table_open_cache" => Value::Int(2000),
            "thread_cache_size" => Value::Int(151),
            "time_zone" => s("SYSTEM"),
            "transaction_isolation" | "tx_isolation" => s("READ-COMMITTED"),
            "version" => s(version),
            "version_comment" => s(version_comment),
            "version_compile_machine" => s(std::env::consts::ARCH),
            "version_compile_os" => s("Linux"),
            _ => Value::Null,
        };
        m.insert(d.name, v);
    }
    m
}

fn wrong_value(name: &str, v: &Value) -> SqlError {
    SqlError::new(
        1231,
        "42000",
        format!(
            "Variable '{name}' can't be set to the value of '{}'",
            show(v)
        ),
    )
}

fn wrong_type(name: &str) -> SqlError {
    SqlError::new(
        1232,
        "42000",
        format!("Incorrect argument type to variable '{name}'"),
    )
}

pub fn unknown(name: &str) -> SqlError {
    SqlError::new(1193, "HY000", format!("Unknown system variable '{name}'"))
}

/// Text form of a variable value for SHOW VARIABLES.
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.to_string(),
    }
}

/// Validates and normalizes a value for a variable. `DEFAULT` is resolved by the caller.
pub fn validate(def: &VarDef, v: &Value) -> Result<Value, SqlError> {
    let name = def.name;
    // Numbers where names are meant, as `mariadb-binlog` prints a log's session settings
    // (`sql_mode=1411383296`, `collation_connection=45`, `lc_time_names=0`).
    if let Value::Int(i) = v {
        let text = |t: String| validate(def, &Value::Bytes(t.into_bytes()));
        match name {
            "sql_mode" if *i >= 0 => {
                return text(crate::binlog_sql::sql_mode_names(*i as u64));
            }
            "collation_connection" | "collation_server" | "collation_database" => {
                return match collation_by_id(*i) {
                    Some(c) => text(c.to_string()),
                    None => Err(SqlError::new(
                        1273,
                        "HY000",
                        format!("Unknown collation: '{i}'"),
                    )),
                };
            }
            "lc_time_names" if *i == 0 => return text("en_US".into()),
            _ => {}
        }
    }
    match def.kind {
        VarKind::ReadOnly => Err(SqlError::new(
            1238,
            "HY000",
            format!("Variable '{name}' is a read only variable"),
        )),
        VarKind::Bool => match v {
            Value::Int(0) => Ok(Value::Int(0)),
            Value::Int(1) => Ok(Value::Int(1)),
            Value::Bytes(b) => match String::from_utf8_lossy(b).to_ascii_uppercase().as_str() {
                "ON" | "TRUE" | "1" => Ok(Value::Int(1)),
                "OFF" | "FALSE" | "0" => Ok(Value::Int(0)),
                _ => Err(wrong_value(name, v)),
            },
            Value::Double(_) => Err(wrong_type(name)),
            _ => Err(wrong_value(name, v)),
        },
        VarKind::Int { min, max } => match v {
            Value::Int(i) => Ok(Value::Int((*i).clamp(min, max))),
            Value::UInt(_) => Ok(Value::Int(max)),
            Value::Double(d) => Ok(Value::Int(
                crate::coerce::round_f64_to_i64(*d).clamp(min, max),
            )),
            Value::Bytes(_) => Err(wrong_type(name)),
            Value::Null => Err(wrong_value(name, v)),
        },
        VarKind::Str => match v {
            Value::Null if name == "character_set_results" => Ok(Value::Null),
            Value::Null => Err(wrong_value(name, v)),
            Value::Bytes(b) => {
                let s = String::from_utf8_lossy(b).into_owned();
                if name == "sql_mode" {
                    Ok(Value::Bytes(s.to_ascii_uppercase().into_bytes()))
                } else {
                    Ok(Value::Bytes(s.into_bytes()))
                }
            }
            other => Ok(Value::Bytes(other.to_string().into_bytes())),
        },
        VarKind::Enum(allowed) => {
            let s = match v {
                Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                Value::Int(i) if *i >= 0 && (*i as usize) < allowed.len() => {
                    allowed[*i as usize].to_string()
                }
                _ => return Err(wrong_value(name, v)),
            };
            let norm = s.replace(' ', "-");
            match allowed.iter().find(|a| a.eq_ignore_ascii_case(&norm)) {
                Some(a) => Ok(Value::Bytes(a.as_bytes().to_vec())),
                None => Err(wrong_value(name, v)),
            }
        }
    }
}
