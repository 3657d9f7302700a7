//! tierdb-buffer: the DRAM buffer pool, tier 1 of 3.
//!
//! Owns: a fixed number of 16 KiB frames in ONE 4096-aligned allocation (`arena`), their
//! per-frame state in atomics (`frame`), the sharded page table mapping `PageId` → frame
//! (`table`), the miss path and clock eviction (`pool`, `evict`), the background flusher that
//! writes dirty pages back under the WAL rule (`flusher`), and the page guards handed to the
//! B+tree (`guard`). The BPE tier plugs in through [`TierHooks`]; the data file through
//! [`PageStore`]; the redo log through [`WalGate`] (`seams`).
//!
//! Must never: write a page to the store before the redo log is durable up to that page's LSN;
//! hand out page bytes that failed `tierdb_page::verify`; hold any lock other than the latches
//! of the frames being read or written (and a try-locked batch scratch) across a disk read or
//! write (or a hook call); take a global lock on a hit; grow
//! past its byte budget (frames are never added after `new`).
//!
//! # Lock order (the whole crate)
//!
//! There are four kinds of locks:
//!
//! 1. **Frame latches** (`FrameMeta::latch`, a parking_lot `RawRwLock`): the page latch the
//!    caller holds through a `PageRead`/`PageWrite`, and that the pool itself takes to load,
//!    write or evict a frame.
//! 2. **Shard locks** (`table`, 64 `RwLock<HashMap<PageId, FrameIdx>>`).
//! 3. The **hooks lock** (`RwLock<Option<Arc<dyn TierHooks>>>`).
//! 4. The **flusher control mutex**.
//! 5. The **batch scratch mutexes** (`BufferPool::batch_scratch`): taken by an evicting
//!    thread (holding its victim's X latch) and held across its batch write; a thread finding
//!    all in use waits for one. A holder takes only try-latches and then waits for nothing
//!    but the WAL gate and the store, so the wait closes no cycle.
//!
//! Rules:
//!
//! - Locks 2, 3 and 4 are *leaves*: while one is held the holder acquires no other lock of
//!   any kind (not even a try-lock), does no I/O and calls no hook, store or WAL method. Each
//!   is held for a handful of instructions (hash lookup + atomic pin, insert/remove, Arc
//!   clone, flag flip).
//! - Because shard locks are leaves, they MAY be taken while holding a frame latch (the miss
//!   path publishes `id → frame` while holding the new frame's X latch; eviction, failed loads
//!   and `discard` remove a mapping while holding the frame's X latch). A frame latch is
//!   never *waited for* while a shard lock is held: the hit path drops the shard read lock
//!   before it blocks on the latch.
//! - The pool waits (blocks) on at most one frame latch at a time and only where the caller
//!   asked for that page (`read`/`write`/`create`/`discard`) or in `flush_all` (shared
//!   latch, one frame at a time). Every other frame latch the pool takes is a try-lock
//!   (victim selection, background flusher), so the pool adds no latch-wait edges between
//!   pages: latch ordering between pages is entirely the caller's (B+tree top-down).
//! - Calls out of the pool (`PageStore`, `WalGate`, `TierHooks`) are made holding only the
//!   latches of the frames in question (one, or the members of a write run / batch: the
//!   victim's X latch and try-taken shared latches; plus whatever latches the caller itself
//!   holds), never a shard, hooks or flusher lock. Implementations of those traits must not call back into
//!   the pool.
//!
//! # Pins
//!
//! A pin (`FrameMeta::pins`) keeps a frame from being reused. Pins are only ever *added*
//! while holding the shard lock of the page mapped to the frame (read lock on a hit, write
//! lock at publication). Eviction re-checks `pins == 0` under the shard *write* lock before
//! removing the mapping, so a frame with a pin is never evicted. Unmapped frames can gain no
//! pins.

mod arena;
mod error;
mod evict;
mod flusher;
mod frame;
mod guard;
mod pool;
mod seams;
mod stats;
mod table;

pub use error::BufferError;
pub use guard::{PageRead, PageWrite};
pub use pool::{BufferPool, PoolConfig};
pub use seams::{write_adjacent_runs, PageStore, TierHooks, WalGate};
pub use stats::PoolStats;
pub use tierdb_page::{Lsn, PageId, PAGE_SIZE};
