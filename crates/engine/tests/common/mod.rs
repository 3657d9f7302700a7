//! Helpers shared by the engine's integration tests: column and table definitions, a
//! configuration for small pools, collecting cursors, reading status counters, and a
//! `DeviceWrapper` that keeps a handle on the `Faulty` it puts around the data file.
//!
//! Each test binary uses a different subset, hence the `dead_code` allowance.
#![allow(dead_code)]

use parking_lot::Mutex;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tierdb_engine::{
    ColumnDef, ColumnType, DeviceWrapper, Engine, EngineConfig, IndexDef, Row, RowCursor, TableDef,
    Txn, Value,
};
use tierdb_io::{Device, Faulty};

pub fn int_col(name: &str) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ColumnType::Int {
            bytes: 8,
            unsigned: false,
        },
        nullable: false,
        auto_increment: false,
        default: None,
        fill: None,
        collation: tierdb_engine::Collation::Binary,
        on_update_now: false,
    }
}

pub fn bytes_col(name: &str, len: u32) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ColumnType::VarChar(len),
        nullable: false,
        auto_increment: false,
        default: None,
        fill: None,
        collation: tierdb_engine::Collation::Binary,
        on_update_now: false,
    }
}

/// `(id INT PRIMARY KEY, k INT, pad VARCHAR(255), v INT, KEY k_idx (k))`.
pub fn kv_table(name: &str) -> TableDef {
    TableDef {
        name: name.into(),
        columns: vec![
            int_col("id"),
            int_col("k"),
            bytes_col("pad", 255),
            int_col("v"),
        ],
        primary_key: vec![0],
        indexes: vec![IndexDef {
            name: "k_idx".into(),
            columns: vec![1],
            unique: false,
        }],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

/// A row of `kv_table`; the pad (150–229 bytes) is derived from `id` and `v`, so a row is
/// about 200 bytes and a stale pad is as visible as a stale `v`.
pub fn kv_row(id: i64, k: i64, v: i64) -> Row {
    let len = 150 + (v.rem_euclid(80)) as usize;
    let byte = b'a' + ((id + v).rem_euclid(26)) as u8;
    vec![
        Value::Int(id),
        Value::Int(k),
        Value::Bytes(vec![byte; len]),
        Value::Int(v),
    ]
}

pub fn int(v: i64) -> Value {
    Value::Int(v)
}

pub fn key(v: i64) -> Vec<Value> {
    vec![Value::Int(v)]
}

pub fn incl(v: i64) -> Bound<Vec<Value>> {
    Bound::Included(key(v))
}

pub fn all() -> (Bound<Vec<Value>>, Bound<Vec<Value>>) {
    (Bound::Unbounded, Bound::Unbounded)
}

/// Engine settings for tests: a small pool, no fsync per commit (tests that check
/// durability set it back to 1).
pub fn small_cfg(dir: &Path, pool_bytes: u64) -> EngineConfig {
    let mut c = EngineConfig::under(dir);
    c.buffer_pool_size_bytes = pool_bytes;
    c.flush_log_at_trx_commit = 2;
    c.lock_wait_timeout = Duration::from_secs(10);
    c
}

/// Collects a cursor, panicking on the first error.
pub fn collect(c: RowCursor) -> Vec<Row> {
    c.map(|r| r.expect("cursor row")).collect()
}

pub fn scan_all(tx: &mut Txn, t: &Arc<tierdb_engine::Table>) -> Vec<Row> {
    collect(
        tx.scan(t, Bound::Unbounded, Bound::Unbounded)
            .expect("scan"),
    )
}

pub fn index_scan_all(tx: &mut Txn, t: &Arc<tierdb_engine::Table>, index: usize) -> Vec<Row> {
    collect(
        tx.index_scan(t, index, Bound::Unbounded, Bound::Unbounded)
            .expect("index scan"),
    )
}

/// A counter from `Engine::status`, parsed as u64.
pub fn status(e: &Engine, name: &str) -> u64 {
    e.status()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no status counter {name}"))
        .1
        .parse()
        .unwrap_or_else(|_| panic!("status counter {name} is not a number"))
}

pub type FaultyDev = Faulty<Arc<dyn Device>>;

/// A `DeviceWrapper` putting the data file inside a `Faulty`, and the slot where the
/// `Faulty` lands once the engine has opened the file.
pub fn faulty_data_wrapper() -> (DeviceWrapper, Arc<Mutex<Option<Arc<FaultyDev>>>>) {
    let slot: Arc<Mutex<Option<Arc<FaultyDev>>>> = Arc::new(Mutex::new(None));
    let s2 = slot.clone();
    let w = DeviceWrapper(Arc::new(move |dev: Arc<dyn Device>| {
        let f = Arc::new(Faulty::new(dev));
        *s2.lock() = Some(f.clone());
        f as Arc<dyn Device>
    }));
    (w, slot)
}

/// Takes the `Faulty` out of a slot filled by `faulty_data_wrapper`.
pub fn faulty_of(slot: &Mutex<Option<Arc<FaultyDev>>>) -> Arc<FaultyDev> {
    slot.lock()
        .clone()
        .expect("the engine did not open the data device through the wrapper")
}

/// Verifies every page a closed engine's page map names (each must carry its own id).
pub fn verify_data_file(dir: &Path) -> Result<usize, String> {
    let pages =
        tierdb_engine::pagemap::read_mapped_pages(&dir.join("data")).map_err(|e| e.to_string())?;
    for (id, p) in &pages {
        if tierdb_page::is_zeroed(p) {
            continue;
        }
        tierdb_page::verify(p, *id).map_err(|e| format!("page {id}: {e}"))?;
    }
    Ok(pages.len())
}

/// Copies the flat `data` and `redo` folders of an engine directory.
pub fn copy_engine_dir(from: &Path, to: &Path) {
    for sub in ["data", "redo"] {
        let (a, b) = (from.join(sub), to.join(sub));
        std::fs::create_dir_all(&b).expect("mkdir");
        for e in std::fs::read_dir(&a).expect("read_dir") {
            let e = e.expect("dir entry");
            std::fs::copy(e.path(), b.join(e.file_name())).expect("copy");
        }
    }
}

/// A small xorshift generator for randomised workloads (seed must not be 0).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
