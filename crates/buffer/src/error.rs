//! The buffer pool's error type.
//!
//! Owns: [`BufferError`]. Must never: lose the page id of a failed read or write, or turn an
//! I/O error into a panic.
//!
//! Lock order: none; no locks here.

use std::io;

use tierdb_page::{PageError, PageId};

/// Why a buffer-pool operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BufferError {
    /// The store failed to read or write this page.
    #[error("page {page}: I/O error: {source}")]
    Io { page: PageId, source: io::Error },
    /// The page read from the store failed verification (torn, corrupt, never written, or
    /// read from the wrong offset).
    #[error("page {page}: corrupt page: {error}")]
    Corrupt {
        page: PageId,
        #[source]
        error: PageError,
    },
    /// Every frame is pinned (or latched) and none could be freed in time.
    #[error("buffer pool: no free frame (every frame is pinned)")]
    NoFreeFrame,
    /// The redo log could not be made durable up to a page's LSN, so the page was not written.
    #[error("buffer pool: redo log flush failed: {0}")]
    Wal(String),
    /// An earlier write or sync to the store failed; the pool refuses further writes (sticky).
    #[error("buffer pool poisoned by an earlier store failure: {0}")]
    Poisoned(String),
    /// `PageStore::sync` failed (the pool is now poisoned).
    #[error("buffer pool: store sync failed: {source}")]
    Sync { source: io::Error },
    /// The pool could not be set up (allocation or thread spawn failed, bad config).
    #[error("buffer pool setup failed: {0}")]
    Setup(String),
}
