//! tierdb-server: the MySQL wire protocol, client sessions and the `tierdb` binary.
//!
//! Owns: the protocol module (`protocol`), the listener with its thread-per-connection model
//! (`listener`), configuration (`config`) and the glue from protocol to SQL layer (`adapter`).
//! Must never: reach past `tierdb-sql` into storage, except to open and shut down the engine.

pub mod adapter;
pub mod config;
pub mod listener;
pub mod protocol;
pub mod serve;
