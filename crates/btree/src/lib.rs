//! tierdb-btree: B+trees on buffer-pool pages, changed only through logged mini-transactions.
//!
//! Owns: the node format (`node`), mini-transactions, their tracked page writes and redo
//! records (`mtr`, `pagemut`, `redo`), page allocation and the meta page (`alloc`), and the
//! tree algorithms (`tree`): point lookups, ordered scans, insert/update/delete with splits,
//! merges and root collapse.
//!
//! Concurrency: readers descend with shared-latch coupling (parent held until the child is
//! latched). Writers first try an optimistic descent (shared latches, exclusive on the leaf);
//! when the leaf would split or underflow they retry holding exclusive latches on the whole
//! root-to-leaf path. A change whose key a read just found (`BTree::modify_hinted`) may
//! X-latch that leaf with no parent held (only while the mtr holds no other latch), then
//! falls back to the descents. Siblings are only ever latched left to right, so scans that follow
//! right links cannot deadlock with merges. Descending scans (`BTree::scan_rev`) latch no
//! sibling at all: each leaf is reached by its own descent from the root, below the previous
//! leaf's low fence (the separator its parent path starts it with). `modify_exclusive` takes the root-to-leaf path
//! exclusively from the start, so one mtr may change several keys of a tree (catalog renames).
//!
//! Must never: hold a latch when returning to the caller (except inside an `Mtr`); panic on
//! a malformed page from disk (pages are CRC-checked by the pool; node structure is checked
//! with `node::check`).

pub mod alloc;
pub mod mtr;
pub mod node;
pub mod pagemut;
pub mod redo;
pub mod tree;

pub use mtr::Mtr;
pub use tree::{BTree, LeafHint, Modify};

use std::sync::Arc;
use tierdb_buffer::{BufferError, BufferPool};
use tierdb_wal::{Wal, WalError};

/// What every tree operation needs: the DRAM pool and the redo log.
pub struct Store {
    pub pool: Arc<BufferPool>,
    pub wal: Arc<Wal>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Buffer(#[from] BufferError),
    #[error(transparent)]
    Wal(#[from] WalError),
    #[error(transparent)]
    Node(#[from] node::NodeError),
    #[error("corrupt B+tree: {0}")]
    Corrupt(String),
    #[error("key of {0} bytes is too long (max {max})", max = node::MAX_KEY_LEN)]
    KeyTooLong(usize),
    #[error("entry of {0} bytes is too large (max {max})", max = node::MAX_LEAF_CELL)]
    EntryTooLarge(usize),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
