//! tierdb-bpe: the Buffer Pool Extension, tier 2 of 3 — a cache of CLEAN 16 KiB pages on one
//! or more fast local SSD files, between the DRAM buffer pool and the slow data disk.
//!
//! Owns: the DRAM index (`index`: 12-byte entries in 64 Robin Hood shards), the
//! log-structured region layout on the devices (`format`, documented in `docs/format.md`), the
//! admission filter (`admission`), region/device state (`region`), the allocator and shared
//! state (`inner`), the background writer/evictor thread (`writer`), counters (`stats`) and
//! the public `Bpe` with its `TierHooks` implementation (`bpe`).
//!
//! How it works: a clean page evicted from DRAM is copied into the open region's DRAM buffer
//! and indexed at once; a full region is sealed and written by the writer thread in one
//! sequential write; regions are placed round-robin over the devices and evicted FIFO, hit
//! pages of an evicted region being re-admitted. A DRAM miss looks the page up, reads its slot
//! (from DRAM if the region is not written yet) and validates it (page id, CRC32C, LSN
//! fingerprint) — any failure is a miss. `on_dirty` drops the entry (DRAM only).
//!
//! Must never: serve a page that is not the current clean version (see docs/format.md, "Staleness
//! rule"); return an error or panic to the buffer pool; block an evicting thread on device
//! I/O; use more than 16 bytes of DRAM index per cached page at steady state.
//!
//! Lock order: `Bpe::ctl` → `Inner::alloc` → `RegionMeta::mem` → leaves (index shard,
//! region table, spare buffers, filter rotation). Details in `inner.rs`.

mod admission;
mod bpe;
mod config;
mod error;
pub mod format;
mod index;
mod inner;
mod region;
mod stats;
mod writer;

pub use bpe::{Bpe, RecoveryInfo, RegionInfo};
pub use config::{
    default_opener, AdmissionPolicy, BpeConfig, DeviceOpener, Trust, DEFAULT_REGION_SIZE_BYTES,
};
pub use error::{BpeError, FormatError};
pub use stats::{BpeStats, DeviceStats};
