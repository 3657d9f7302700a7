//! The engine's side of the binary log: what a committing transaction hands to it and how
//! its bytes ride in the redo log.
//!
//! Owns: [`RowChange`] (a row image a transaction changed, captured by `Txn::insert` /
//! `update` / `delete` while a sink is configured, the table is not TEMPORARY and the
//! transaction logs), [`Capture`] (a running transaction's changes: encoded by the sink in
//! batches as they come, so a big transaction holds its events' bytes, not its rows), the
//! [`BinlogSink`] contract, and the redo record kind [`KIND_BINLOG`] for a binary-log write
//! that is no transaction's (DDL statements).
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

/// Pending changes are encoded once this many wait (and at each savepoint and the commit).
const CAPTURE_BATCH: usize = 256;
/// An encoded chunk is closed and the next one started past this many bytes, so that a big
/// transaction's bytes never sit in one buffer that doubles as it grows.
const CAPTURE_CHUNK: usize = 1 << 20;

/// The binary-log changes of a running transaction: chunks of whole encoded events (the
/// sink's format, without the transaction's first and last events), then changes not yet
/// encoded, and the tables changed.
#[derive(Default)]
pub struct Capture {
    pub chunks: Vec<Vec<u8>>,
    pub pending: Vec<RowChange>,
    /// Every table a captured change was made to (each handle once).
    pub tables: Vec<Arc<Table>>,
    /// Encoding failed: the changes stay pending for the commit, which fails with the error.
    stuck: bool,
    /// Batches encoded so far (a mark taken with changes pending is good only while no
    /// batch was encoded since).
    encodes: u64,
}

/// Where a savepoint left a [`Capture`] (see `Capture::mark`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CaptureMark {
    chunks: usize,
    last_len: usize,
    pending: usize,
    encodes: u64,
}

/// Changes a row's write may capture after a row's mark (`Capture::mark`) before it
/// is cut back or the row is done: a delete and an insert, with room to spare.
const ROW_CHANGES: usize = 8;

impl Capture {
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty() && self.pending.is_empty()
    }

    /// Encodes the pending changes unless `n` more fit the batch: the next `n` captures then
    /// stay pending side by side (an update that moves a row merges its delete and insert).
    pub(crate) fn make_room(&mut self, sink: &dyn BinlogSink, n: usize) {
        if self.pending.len() + n >= CAPTURE_BATCH {
            self.encode_pending(sink);
        }
    }

    /// Captures `c`; a full batch is encoded.
    pub(crate) fn push(&mut self, sink: &dyn BinlogSink, c: RowChange) {
        if !self.tables.iter().any(|t| Arc::ptr_eq(t, &c.table)) {
            self.tables.push(c.table.clone());
        }
        self.pending.push(c);
        self.make_room(sink, 0);
    }

    /// Encodes the pending changes into the last chunk (a new one past `CAPTURE_CHUNK`). On
    /// an error they stay pending: the commit encodes them again and fails there.
    pub(crate) fn encode_pending(&mut self, sink: &dyn BinlogSink) {
        if self.pending.is_empty() || self.stuck {
            return;
        }
        if self.chunks.last().is_none_or(|c| c.len() >= CAPTURE_CHUNK) {
            self.chunks.push(Vec::new());
        }
        let Some(out) = self.chunks.last_mut() else {
            return;
        };
        let len = out.len();
        match sink.encode_changes(&self.pending, out) {
            Ok(()) => {
                self.pending.clear();
                self.encodes += 1;
            }
            Err(_) => {
                out.truncate(len);
                self.stuck = true;
            }
        }
        if self.chunks.last().is_some_and(|c| c.is_empty()) {
            self.chunks.pop();
        }
    }

    /// Where the capture is now. The pending changes are encoded first, so that a later
    /// batch cannot carry changes from before the mark; except for a mark of one row's
    /// writes (`row`: per-row savepoints of UPDATE / DELETE IGNORE), where they stay pending
    /// (each row would get events of its own) and room is made for the few changes one row's
    /// write captures, so that no batch is encoded before the row is cut back or done.
    pub(crate) fn mark(&mut self, sink: Option<&dyn BinlogSink>, row: bool) -> CaptureMark {
        if let Some(s) = sink {
            self.make_room(s, if row { ROW_CHANGES } else { CAPTURE_BATCH });
        }
        CaptureMark {
            chunks: self.chunks.len(),
            last_len: self.chunks.last().map_or(0, |c| c.len()),
            pending: self.pending.len(),
            encodes: self.encodes,
        }
    }

    /// Whether the capture can be cut back to `m`: it has passed that place (was not cut back
    /// before it), and changes pending at `m` were not encoded since.
    pub(crate) fn has(&self, m: CaptureMark) -> bool {
        m.chunks <= self.chunks.len()
            && (m.chunks == 0 || m.last_len <= self.chunks[m.chunks - 1].len())
            && (m.chunks < self.chunks.len() || m.pending <= self.pending.len())
            && (m.pending == 0 || m.encodes == self.encodes)
    }

    /// Forgets what was captured after `m`.
    pub(crate) fn cut(&mut self, m: CaptureMark) {
        if m.chunks < self.chunks.len() {
            self.pending.clear();
        }
        self.pending.truncate(m.pending);
        self.chunks.truncate(m.chunks);
        if let Some(c) = self.chunks.last_mut() {
            c.truncate(m.last_len);
        }
        if self.chunks.last().is_some_and(|c| c.is_empty()) {
            self.chunks.pop();
        }
    }

    pub(crate) fn clear(&mut self) {
        *self = Capture::default();
    }
}

/// Appends one redo record whose payload ends with the given sink bytes and returns its start
/// and end. `last`: the record that completes the placement (the commit record, or a kind 4
/// record); `false`: a part record that counts only once the last one is found (a caller
/// outside a transaction refuses parts).
pub type AppendRecord<'a> = dyn FnMut(&[u8], bool) -> Result<(u64, u64)> + 'a;

/// Where the engine sends committed changes when a binary log is configured
/// (`EngineConfig::binlog`). Implemented by `tierdb-binlog`.
pub trait BinlogSink: Send + Sync {
    /// Encodes `changes` (the next ones of a running transaction, in order) as whole events
    /// appended to `out` (called outside every lock; a batch's first event may repeat a
    /// table's map).
    fn encode_changes(&self, changes: &[RowChange], out: &mut Vec<u8>) -> Result<()>;
    /// A committing transaction's events, in chunks of whole events: its first event, the
    /// captured changes (the rest still pending encoded too), its last event (called outside
    /// every lock; may wait for a DDL statement on `capture.tables` to be logged first).
    fn encode_transaction(&self, capture: Capture) -> Result<Vec<Vec<u8>>>;
    /// Under the sink's order lock: gives `events` (chunks of whole events, in order) their
    /// place in the binary log and appends the redo record carrying them through `append`
    /// (whose argument is the sink's bytes; bytes too large for one record go in parts, the
    /// last call with `last = true`). Returns a ticket for `write` and the last record's end
    /// LSN.
    fn place(&self, events: Vec<Vec<u8>>, append: &mut AppendRecord<'_>) -> Result<(u64, u64)>;
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
