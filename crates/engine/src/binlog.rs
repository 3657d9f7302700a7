//! The engine's side of the binary log: what a committing transaction hands to it and how
//! its bytes ride in the redo log.
//!
//! Owns: [`RowChange`] (a row image a transaction changed, captured by `Txn::insert` /
//! `update` / `delete` while a sink is configured, the table is not TEMPORARY and the
//! transaction logs), the [`BinlogSink`] contract, and the redo record kind
//! [`KIND_BINLOG`] for a binary-log write that is no transaction's (DDL statements).
//!
//! The binary log is made durable by the redo log, not by fsyncs of its own: a committing
//! transaction's events go into its commit record (`redo::encode_txn_end_with`), placed in
//! the binary log's order while the sink holds its order lock, so the two logs agree on
//! order; after the record is durable the sink writes the bytes to its files. Recovery hands
//! every such record after the checkpoint back to the sink (`replay`), and a checkpoint first
//! lets the sink write and sync what the log is about to let go (`before_checkpoint`).
//! A transaction whose events do not fit one record (the redo log's records are at most
//! 16 MiB) has them split: part records ([`KIND_BINLOG_PART`]) first, the rest in its
//! commit record; recovery writes the parts only once it finds that commit record.
//!
//! Must never: capture a change of a TEMPORARY table, a change rolled back to a savepoint
//! (the capture is cut with it), or let a commit be acknowledged whose binary-log bytes are
//! not in the durable redo record.

use std::sync::Arc;

use crate::{Result, Row, Table};

/// Redo record kind of a binary-log write outside a transaction (`[4][sink bytes]`).
pub(crate) const KIND_BINLOG: u8 = 4;
/// Redo record kind of the leading part of a transaction's binary-log writes that do not fit
/// its commit record (`[5][txn u64][sink bytes]`); it counts only once the transaction's
/// commit record is found.
pub(crate) const KIND_BINLOG_PART: u8 = 5;

/// The payload of a part record of transaction `txn`.
pub(crate) fn encode_part(txn: u64, bytes: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(9 + bytes.len());
    p.push(KIND_BINLOG_PART);
    p.extend_from_slice(&txn.to_le_bytes());
    p.extend_from_slice(bytes);
    p
}

/// The transaction and sink bytes of a part record's payload (None: too short).
pub(crate) fn decode_part(payload: &[u8]) -> Option<(u64, &[u8])> {
    if payload.len() < 9 || payload[0] != KIND_BINLOG_PART {
        return None;
    }
    let txn = u64::from_le_bytes(payload[1..9].try_into().ok()?);
    Some((txn, &payload[9..]))
}

/// One changed row: `before` for an update or a delete, `after` for an insert or an update.
/// Rows are complete (long values read back), with a table without a primary key's hidden row
/// id as an extra last value.
#[derive(Debug, Clone)]
pub struct RowChange {
    pub table: Arc<Table>,
    pub before: Option<Row>,
    pub after: Option<Row>,
    /// Made with `foreign_key_checks = 0` (a replica must not check or cascade either).
    pub no_fk_checks: bool,
}

/// Appends one redo record whose payload ends with the given sink bytes and returns its start
/// and end. `last`: the record that completes the placement (the commit record, or a kind 4
/// record); `false`: a part record that counts only once the last one is found (a caller
/// outside a transaction refuses parts).
pub type AppendRecord<'a> = dyn FnMut(&[u8], bool) -> Result<(u64, u64)> + 'a;

/// Where the engine sends committed changes when a binary log is configured
/// (`EngineConfig::binlog`). Implemented by `tierdb-binlog`.
pub trait BinlogSink: Send + Sync {
    /// Encodes a committing transaction's changes (called outside every lock).
    fn encode_transaction(&self, changes: &[RowChange]) -> Result<Vec<u8>>;
    /// Under the sink's order lock: gives `events` their place in the binary log and appends
    /// the redo record carrying them through `append` (whose argument is the sink's bytes;
    /// bytes too large for one record go in parts, the last call with `last = true`).
    /// Returns a ticket for `write` and the last record's end LSN.
    fn place(&self, events: Vec<u8>, append: &mut AppendRecord<'_>) -> Result<(u64, u64)>;
    /// After the record of `ticket` is durable: writes its bytes to the binary-log files.
    /// A failure is the sink's to report; the record stays for recovery and checkpoints.
    fn write(&self, ticket: u64);
    /// Writes every placed record that ends at or before `durable` (the redo log's durable
    /// end) and was not written yet: commits made while `flush_log_at_trx_commit` was 0 or 2
    /// reach the files once their record is durable (the checkpointer calls this each second).
    fn write_durable(&self, durable: u64);
    /// A ticket whose record never became durable (the redo log failed): forget it.
    fn abandon(&self, ticket: u64);
    /// The placement of `ticket` is over: its transaction's changes are visible to new read
    /// views (or it failed). Called once per ticket, after `write` / `abandon`.
    fn finished(&self, ticket: u64);
    /// Recovery: the sink bytes of a durable record found after the checkpoint.
    fn replay(&self, bytes: &[u8]) -> Result<()>;
    /// Before the redo log lets go of everything before `lsn` (`durable`: the redo log's
    /// durable end): every placed write whose first record starts before it must be in the
    /// files and synced.
    fn before_checkpoint(&self, lsn: u64, durable: u64) -> Result<()>;
}
