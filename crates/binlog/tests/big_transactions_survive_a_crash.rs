//! A transaction whose binary-log events are larger than one redo record (16 MiB; they ride in
//! part records, then the commit record) is logged whole and in order, also when the process
//! dies before a byte of it reached the binary-log files: recovery writes every part from the
//! redo log. A transaction whose parts were appended but which did not commit leaves nothing.
//!
//! A child process (this test binary, re-run with an environment variable) runs an engine whose
//! sink never writes the files itself (as if each commit's `pwrite` was still to come) and is
//! killed with SIGKILL; the parent recovers with the real sink and decodes the files.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use common::{id_pad_row, id_pad_table, stored_rows};
use tierdb_binlog::decode::{to_value, Decoder, Event};
use tierdb_binlog::log::{Binlog, BinlogConfig};
use tierdb_binlog::rows::RowsKind;
use tierdb_engine::binlog::AppendRecord;
use tierdb_engine::{
    BinlogSink, Capture, Engine, EngineConfig, Result, Row, RowChange, TableDef, Value,
};

const ROWS: i64 = 60_000;
const CHILD_ENV: &str = "BIG_TXN_CHILD_DIR";

/// Forwards to the real log but never writes the files (the crash comes before each write);
/// and fails the placement whose events carry the marker value, after its parts were appended.
struct NoWrites {
    inner: Arc<Binlog>,
}

impl BinlogSink for NoWrites {
    fn encode_changes(&self, changes: &[RowChange], out: &mut Vec<u8>) -> Result<()> {
        self.inner.encode_changes(changes, out)
    }
    fn encode_transaction(&self, capture: Capture) -> Result<Vec<Vec<u8>>> {
        self.inner.encode_transaction(capture)
    }
    fn place(&self, events: Vec<Vec<u8>>, append: &mut AppendRecord<'_>) -> Result<(u64, u64)> {
        let doomed = events
            .iter()
            .any(|c| c.windows(8).any(|w| w == b"DOOMED!!"));
        let mut parts = 0;
        let mut wrapped = |b: &[u8], last: bool| -> Result<(u64, u64)> {
            if doomed && last {
                return Err(tierdb_engine::Error::Internal(
                    "refused after the parts".into(),
                ));
            }
            parts += 1;
            append(b, last)
        };
        let r = self.inner.place(events, &mut wrapped);
        if doomed {
            assert!(
                parts >= 2,
                "the doomed transaction had {parts} part records"
            );
        }
        r
    }
    fn write(&self, _ticket: u64) {}
    fn write_durable(&self, _durable: u64) {}
    fn abandon(&self, ticket: u64) {
        self.inner.abandon(ticket)
    }
    fn finished(&self, ticket: u64) {
        self.inner.finished(ticket)
    }
    fn replay(&self, bytes: &[u8]) -> Result<()> {
        self.inner.replay(bytes)
    }
    fn before_checkpoint(&self, lsn: u64, durable: u64) -> Result<()> {
        self.inner.before_checkpoint(lsn, durable)
    }
}

fn table() -> TableDef {
    id_pad_table("big")
}

fn row(id: i64, tag: &str) -> Row {
    id_pad_row(id, tag)
}

fn engine_cfg(dir: &Path, sink: Arc<dyn BinlogSink>) -> EngineConfig {
    let mut c = EngineConfig::under(dir.join("db"));
    c.buffer_pool_size_bytes = 256 << 20;
    c.flush_log_at_trx_commit = 1;
    c.binlog = Some(sink);
    c
}

fn binlog(dir: &Path) -> Arc<Binlog> {
    Binlog::open(BinlogConfig::new(dir.join("binlog"))).expect("open binary log")
}

/// The child: three committed transactions (one small, two of 20+ MiB of events), one large
/// transaction whose placement fails after its parts, then a small durable commit; then it
/// waits to be killed.
fn child(dir: &Path) {
    let log = binlog(dir);
    let sink = Arc::new(NoWrites { inner: log.clone() });
    let e = Engine::open(engine_cfg(dir, sink)).expect("open engine");
    log.start().expect("start binary log");
    e.create_database("d").expect("create database");
    e.create_table("d", table()).expect("create table");
    let t = e.table("d", "big").expect("table");

    let mut tx = e.begin();
    tx.insert(&t, row(0, "first")).expect("insert");
    tx.commit().expect("small commit");

    let mut tx = e.begin();
    for id in 1..=ROWS {
        tx.insert(&t, row(id, "ins")).expect("insert");
    }
    tx.commit().expect("large insert commit");

    let mut tx = e.begin();
    for id in 1..=ROWS {
        tx.update(&t, &[Value::Int(id)], row(id, "upd"))
            .expect("update");
    }
    tx.commit().expect("large update commit");

    let mut tx = e.begin();
    for id in ROWS + 1..=2 * ROWS {
        tx.insert(&t, row(id, "DOOMED!!")).expect("insert");
    }
    assert!(
        tx.commit().is_err(),
        "the doomed transaction's placement fails"
    );

    let mut tx = e.begin();
    tx.insert(&t, row(-1, "last")).expect("insert");
    tx.commit().expect("last commit");
    println!("READY");
    std::thread::sleep(Duration::from_secs(300));
}

#[test]
fn big_transactions_child() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(Path::new(&dir));
    }
}

#[test]
fn transactions_larger_than_a_redo_record_are_recovered_whole_into_the_binary_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "big_transactions_child", "--nocapture"])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let out = BufReader::new(c.stdout.take().unwrap());
    let mut ready = false;
    for line in out.lines() {
        if line.expect("child output").contains("READY") {
            ready = true;
            break;
        }
    }
    c.kill().expect("SIGKILL the child");
    let status = c.wait().expect("wait");
    assert!(ready, "the child ended early: {status}");

    // Nothing reached the files but their headers.
    let first = dir.path().join("binlog").join("tierdb-bin.000001");
    let before = std::fs::metadata(&first).unwrap().len();
    assert!(before < 1000, "{before} bytes before recovery");

    let log = binlog(dir.path());
    let e = Engine::open(engine_cfg(dir.path(), log.clone())).expect("recover");
    log.start().expect("start binary log");
    let t = e.table("d", "big").expect("table");

    // Apply the file's events to a model of the table.
    let bytes = std::fs::read(&first).unwrap();
    assert!(
        bytes.len() > 40 << 20,
        "{} bytes after recovery",
        bytes.len()
    );
    let mut d = Decoder::new();
    let events = d.feed(&bytes[4..]).expect("decode the recovered file");
    let mut model: BTreeMap<i64, Row> = BTreeMap::new();
    let (mut gtids, mut xids) = (Vec::new(), 0);
    for ev in &events {
        match ev {
            Event::Gtid { seq, .. } => gtids.push(*seq),
            Event::Xid(_) => xids += 1,
            Event::Rows(r) => {
                let cols = &t.def.columns;
                let value = |raw: &[tierdb_binlog::decode::RawValue]| -> Row {
                    raw.iter()
                        .zip(cols)
                        .map(|(v, c)| to_value(v, &c.ty).expect("value"))
                        .collect()
                };
                for (before, after) in &r.rows {
                    match r.kind {
                        RowsKind::Write => {
                            let a = value(after.as_ref().expect("after image"));
                            model.insert(a[0].as_i64().unwrap(), a);
                        }
                        RowsKind::Update => {
                            let b = value(before.as_ref().expect("before image"));
                            let a = value(after.as_ref().expect("after image"));
                            assert_eq!(model.remove(&b[0].as_i64().unwrap()).as_ref(), Some(&b));
                            model.insert(a[0].as_i64().unwrap(), a);
                        }
                        RowsKind::Delete => {
                            let b = value(before.as_ref().expect("before image"));
                            model.remove(&b[0].as_i64().unwrap());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        gtids,
        vec![1, 2, 3, 4],
        "four committed transactions, in order"
    );
    assert_eq!(xids, 4);
    let stored = stored_rows(&e, &t);
    assert_eq!(stored.len() as i64, ROWS + 2, "no doomed row is stored");
    assert!(model == stored, "the log's rows differ from the table's");
    assert_eq!(log.gtid_binlog_pos(), "0-1-4");
}
