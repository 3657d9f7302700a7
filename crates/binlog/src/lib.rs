//! MariaDB 10.11 binary log (binlog v4, CRC32 checksums, row-based) encoding.
//!
//! `events` builds whole events (header, body, checksum) and scans them back; `rows` encodes
//! row images in MariaDB's binary row format.

pub mod decode;
pub mod dump;
pub mod events;
pub mod log;
pub mod rows;
