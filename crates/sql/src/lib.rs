//! tierdb-sql: parse, plan and run SQL on the engine facade.
//!
//! Layers, top down: `session` (one per connection: transactions, prepared statements,
//! dispatch) → `parse` (sqlparser, MySQL dialect) → `plan` (+ `compile` for expressions,
//! `access` for key ranges, `ddl` for table definitions, `alter` for ALTER TABLE
//! changes that rewrite rows, `fk` for FOREIGN KEY constraints, `check` for CHECK constraints,
//! `view` for views) → `exec`
//! (row pipeline on an engine `Txn`) and `show` (SHOW / EXPLAIN result sets). `expr` evaluates
//! expressions, with `funcs` (scalar functions of their arguments alone) and `json` (JSON
//! functions) beside it, and `dec` (exact DECIMAL arithmetic and sums); `load` reads LOAD DATA's
//! files into tables through `exec`'s row writer. `shared`, `variables`, `status` and `user_locks` (GET_LOCK) hold
//! server-wide state; `infoschema` makes INFORMATION_SCHEMA's virtual tables.
//! `result` is the seam to the wire protocol.
//!
//! Must never: reach storage except through `tierdb_engine`, or panic on client input.

pub mod access;
pub mod account_sql;
pub mod accounts;
pub mod alter;
pub mod alter_if;
pub mod authorize;
pub mod binlog_sql;
pub mod bulk_values;
pub mod check;
pub mod coerce;
pub mod compile;
pub mod ddl;
pub mod dec;
pub mod exec;
pub mod expr;
pub mod fit;
pub mod fk;
pub mod funcs;
pub mod infoschema;
pub mod interrupt;
pub mod join;
pub mod json;
pub mod load;
pub mod maintain;
pub mod parse;
pub mod plan;
pub mod rawtext;
pub mod read_lock;
pub mod result;
pub mod rowcmp;
pub mod session;
pub mod shared;
pub mod show;
pub mod status;
pub mod temp;
pub mod time;
pub mod user_locks;
pub mod variables;
pub mod view;

pub use result::{Column, ColumnKind, PreparedInfo, QueryResult, SqlError, Value};
pub use session::Session;
pub use shared::{ServerInfo, Shared};
