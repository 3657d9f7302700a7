//! Test support: a real data file with O_DIRECT, a real redo log, a small buffer pool.
#![allow(dead_code)]

use std::sync::Arc;
use tierdb_btree::{alloc, Mtr, Store};
use tierdb_buffer::{BufferPool, PageStore, PoolConfig, WalGate};
use tierdb_io::{Device, DirectFile};
use tierdb_page::{Lsn, PageId};
use tierdb_wal::{FlushPolicy, Wal, WalConfig};

pub struct File(pub DirectFile);
impl PageStore for File {
    fn read_page(&self, id: PageId, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_at(buf, id.offset())
    }
    fn write_page(&self, id: PageId, buf: &[u8]) -> std::io::Result<()> {
        self.0.write_at(buf, id.offset())
    }
    fn sync(&self) -> std::io::Result<()> {
        self.0.sync()
    }
}
pub struct Gate(pub Arc<Wal>);
impl WalGate for Gate {
    fn flush_to(&self, lsn: Lsn) -> Result<(), String> {
        self.0.flush_to(lsn).map_err(|e| e.to_string())
    }
}

/// A fresh store with `frames` pool frames under `dir`, meta page formatted.
pub fn store(dir: &std::path::Path, frames: u64) -> Store {
    let wal = Arc::new(
        Wal::open(WalConfig {
            segment_size_bytes: 8 << 20,
            policy: FlushPolicy::Periodic,
            ..WalConfig::new(dir.join("redo"))
        })
        .unwrap(),
    );
    let file = Arc::new(File(DirectFile::open(&dir.join("data"), true).unwrap()));
    let pool = BufferPool::new(
        PoolConfig {
            size_bytes: frames * 16384,
            ..PoolConfig::default()
        },
        file,
        Arc::new(Gate(wal.clone())),
    )
    .unwrap();
    let s = Store { pool, wal };
    let mut m = Mtr::new(&s, 0);
    alloc::format_meta(&mut m).unwrap();
    m.commit().unwrap();
    s
}
