//! tierdb-binlog: the binary log, in MariaDB 10.11's format (binlog v4, CRC32 checksums,
//! row-based), so that `mariadb-binlog` reads it and MariaDB servers apply it and replicate
//! from it.
//!
//! Owns: the events' bytes (`events` builds and scans whole events, `rows` encodes row images,
//! `decode` reads both back), the files and their order (`log`: placement of each commit's
//! events under the order lock, writing after durability, rotation, purge, recovery from the
//! redo log, the engine's `BinlogSink`), and streaming to replicas (`dump`).
//!
//! Must never: write bytes MariaDB would not read; put an event in the files before the redo
//! record carrying it is durable; let two commits' events interleave or leave commit order;
//! panic on bytes read from files, the redo log, a replica or a BINLOG statement.

pub mod decode;
pub mod dump;
pub mod events;
pub mod log;
pub mod rows;
