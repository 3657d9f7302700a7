//! Streaming the binary log to a replica (COM_BINLOG_DUMP): where to start (a file and
//! position, or the replica's GTID position), the events from there on as they are written,
//! following rotations, and heartbeats while nothing happens.
//!
//! Owns: [`Dump`], one per replica connection: the artificial Rotate and Format_description
//! events a replica expects first, skipping the event groups a GTID replica already has, the
//! wait for new events (`Binlog`'s write generation), heartbeat events.
//!
//! Must never: send a byte that is not a complete, checksum-valid event (a write still landing
//! is waited for); send an event group a GTID replica already applied; block past the
//! heartbeat period or after the binary log was told to stop; panic on what a replica sends.

use std::collections::VecDeque;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::events;
use crate::log::Binlog;

/// MariaDB's HEARTBEAT_LOG_EVENT.
pub const HEARTBEAT_EVENT: u8 = 27;
/// An event the master made up (not in a file): the replica does not move its position.
pub const LOG_EVENT_ARTIFICIAL_F: u16 = 0x20;

/// Why a dump cannot start or go on: MariaDB's 1236 with its text.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DumpError(pub String);

/// What the replica asked for.
#[derive(Clone, Debug, Default)]
pub struct DumpRequest {
    /// File to start in ("" = the first file, or the GTID position when `gtid_state` is set).
    pub file: String,
    /// Offset in `file` (4 = its start).
    pub pos: u64,
    /// BINLOG_DUMP_NON_BLOCK: end the stream at the end of the log instead of waiting.
    pub nonblock: bool,
    /// `@slave_connect_state` (`0-1-42,...`): start after these GTIDs.
    pub gtid_state: Option<String>,
    /// `@master_heartbeat_period` (None or zero: no heartbeats).
    pub heartbeat: Option<Duration>,
    /// The replica reads CRC32 checksums (`@master_binlog_checksum`).
    pub checksums: bool,
}

/// One replica's stream.
pub struct Dump {
    log: Arc<Binlog>,
    file: u32,
    pos: u64,
    queue: VecDeque<Vec<u8>>,
    /// Event groups of domain 0 with a sequence number up to this are skipped.
    skip_upto: u64,
    /// Inside a group being skipped; `Some(true)`: a standalone one (ends after one event).
    skipping: Option<bool>,
    nonblock: bool,
    heartbeat: Option<Duration>,
    last_sent: Instant,
}

/// Makes `ev` an artificial event: no position, the artificial flag, checksum redone.
fn artificial(mut ev: Vec<u8>) -> Vec<u8> {
    let flags = u16::from_le_bytes([ev[17], ev[18]]) | LOG_EVENT_ARTIFICIAL_F;
    ev[17..19].copy_from_slice(&flags.to_le_bytes());
    positionless(ev)
}

/// `ev` with no end position (the replica does not move its position for it).
fn positionless(mut ev: Vec<u8>) -> Vec<u8> {
    ev[13..17].copy_from_slice(&0u32.to_le_bytes());
    events::reseal(&mut ev);
    ev
}

/// The artificial Rotate a replica is sent when the stream moves to `file` at `pos`.
fn fake_rotate(log: &Binlog, file: u32, pos: u64) -> Result<Vec<u8>, DumpError> {
    let mut rot = Vec::new();
    events::rotate(
        &mut rot,
        0,
        log.config().server_id,
        &log.file_name(file),
        pos,
    )
    .map_err(|e| DumpError(e.to_string()))?;
    Ok(artificial(rot))
}

/// Most bytes of a file read at once (an event larger than this is read whole).
const READ_CHUNK: u64 = 4 << 20;

/// Parses `0-1-42,1-2-7` into (domain, server, seq) triples.
fn parse_state(s: &str) -> Result<Vec<(u32, u32, u64)>, DumpError> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut it = p.split('-');
            let (Some(d), Some(s), Some(q), None) = (it.next(), it.next(), it.next(), it.next())
            else {
                return Err(DumpError(format!(
                    "Malformed GTID '{p}' in the replica's position"
                )));
            };
            match (d.parse(), s.parse(), q.parse()) {
                (Ok(d), Ok(s), Ok(q)) => Ok((d, s, q)),
                _ => Err(DumpError(format!(
                    "Malformed GTID '{p}' in the replica's position"
                ))),
            }
        })
        .collect()
}

impl Dump {
    /// Where the stream starts, and its first events (artificial Rotate, Format_description).
    pub fn start(log: Arc<Binlog>, req: &DumpRequest) -> Result<Dump, DumpError> {
        if !req.checksums {
            return Err(DumpError(
                "Slave can not handle replication events with the checksum that master is configured to log".into(),
            ));
        }
        let files = log.numbers().map_err(|e| DumpError(e.to_string()))?;
        let Some(&first) = files.first() else {
            return Err(DumpError("Binary log is not open".into()));
        };
        let mut skip_upto = 0;
        let (file, pos) = match (&req.gtid_state, req.file.is_empty()) {
            (Some(state), true) => {
                let state = parse_state(state)?;
                let want = state
                    .iter()
                    .filter(|(d, _, _)| *d == crate::log::DOMAIN)
                    .map(|(_, _, q)| *q)
                    .max()
                    .unwrap_or(0);
                let have = log.last_seq();
                if want > have {
                    return Err(DumpError(format!(
                        "Error: connecting slave requested to start from GTID {}-{}-{want}, which is not in the master's binlog (the master's last is {})",
                        crate::log::DOMAIN,
                        state.first().map_or(0, |g| g.1),
                        log.gtid_binlog_pos()
                    )));
                }
                // The newest file that starts at or before the replica's position (a file
                // whose header is still landing is passed over: the one before it leads there
                // through its Rotate).
                let mut start = None;
                for &n in files.iter().rev() {
                    let before = log.state_before(n).map_err(|e| DumpError(e.to_string()))?;
                    if before.is_some_and(|b| b <= want) {
                        start = Some(n);
                        break;
                    }
                }
                let Some(n) = start else {
                    return Err(DumpError(
                        "Could not find GTID state requested by slave in any binlog files. Probably the slave state is too old and required binlog files have been purged.".into(),
                    ));
                };
                skip_upto = want;
                (n, 4)
            }
            (_, true) => (first, 4),
            (_, false) => {
                let n = log.number_of(&req.file).filter(|n| files.contains(n));
                let Some(n) = n else {
                    return Err(DumpError(
                        "Could not find first log file name in binary log index file".into(),
                    ));
                };
                (n, req.pos.max(4))
            }
        };
        let mut d = Dump {
            file,
            pos,
            queue: VecDeque::new(),
            skip_upto,
            skipping: None,
            nonblock: req.nonblock,
            // A replica that asked for none still gets one every 30 s: a write is how a
            // replica that went away is noticed.
            heartbeat: Some(
                req.heartbeat
                    .filter(|h| !h.is_zero())
                    .unwrap_or(Duration::from_secs(30)),
            ),
            last_sent: Instant::now(),
            log,
        };
        let mut rot = Vec::new();
        events::rotate(
            &mut rot,
            0,
            d.log.config().server_id,
            &d.log.file_name(file),
            pos,
        )
        .map_err(|e| DumpError(e.to_string()))?;
        d.queue.push_back(artificial(rot));
        if pos > 4 {
            // The replica needs the file's format before events from its middle.
            let fde = d.read_event_at(file, 4)?;
            d.queue.push_back(positionless(fde));
            // And the position must be where an event starts.
            let len = std::fs::metadata(d.log.path(file))
                .map(|m| m.len())
                .unwrap_or(0);
            if pos < len && d.read_event_at(file, pos).is_err() {
                return Err(DumpError(format!(
                    "Client requested master to start replication from impossible position {pos} in '{}'",
                    d.log.file_name(file)
                )));
            }
        }
        Ok(d)
    }

    fn read_event_at(&self, file: u32, at: u64) -> Result<Vec<u8>, DumpError> {
        let bytes = self.read_from(file, at)?;
        let (evs, _) = events::scan(&bytes);
        match evs.first() {
            Some(e) => Ok(bytes[e.offset..e.offset + e.len].to_vec()),
            None => Err(DumpError(format!(
                "Could not read an event at position {at} of {}",
                self.log.file_name(file)
            ))),
        }
    }

    /// Bytes of `file` from `at`: up to `READ_CHUNK`, or the whole first event when it is
    /// larger.
    fn read_from(&self, file: u32, at: u64) -> Result<Vec<u8>, DumpError> {
        let path = self.log.path(file);
        let f = File::open(&path)
            .map_err(|e| DumpError(format!("Could not open log file {}: {e}", path.display())))?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        if at > len {
            return Err(DumpError(format!(
                "Client requested master to start replication from position {at} > file size {len}"
            )));
        }
        let read = |n: u64| -> Result<Vec<u8>, DumpError> {
            let mut buf = vec![0u8; n as usize];
            f.read_exact_at(&mut buf, at).map_err(|e| {
                DumpError(format!("Could not read log file {}: {e}", path.display()))
            })?;
            Ok(buf)
        };
        let buf = read((len - at).min(READ_CHUNK))?;
        if buf.len() >= events::HEADER_LEN {
            let size = u64::from(u32::from_le_bytes([buf[9], buf[10], buf[11], buf[12]]));
            if size > buf.len() as u64 && at + size <= len {
                return read(size);
            }
        }
        Ok(buf)
    }

    /// Reads what is new in the current file into the queue; follows a rotation. Returns
    /// whether it moved on.
    fn fill(&mut self) -> Result<bool, DumpError> {
        let bytes = self.read_from(self.file, self.pos)?;
        let (evs, _) = events::scan(&bytes);
        for e in &evs {
            let ev = &bytes[e.offset..e.offset + e.len];
            self.pos += e.len as u64;
            match e.type_code {
                events::GTID_EVENT => {
                    if let Some((seq, dom, _)) = events::gtid_seq(ev) {
                        let standalone =
                            ev.get(events::HEADER_LEN + 12).is_some_and(|f| f & 1 != 0);
                        self.skipping = (dom == crate::log::DOMAIN && seq <= self.skip_upto)
                            .then_some(standalone);
                    }
                    if self.skipping.is_some() {
                        continue;
                    }
                }
                _ if self.skipping.is_some() => {
                    let ends = e.type_code == events::XID_EVENT || self.skipping == Some(true);
                    if ends {
                        self.skipping = None;
                    }
                    continue;
                }
                _ => {}
            }
            self.queue.push_back(ev.to_vec());
            if e.type_code == events::ROTATE_EVENT {
                self.file += 1;
                self.pos = 4;
                return Ok(true);
            }
        }
        // The file ends without a Rotate (a Stop at shutdown, or a crash): go on in the next,
        // but only once nothing more can come to this one (a rotation creates the next file
        // before its Rotate lands, and earlier commits may still be on their way here).
        if evs.is_empty()
            && self.log.file_finished(self.file)
            && self
                .log
                .numbers()
                .is_ok_and(|f| f.contains(&(self.file + 1)))
        {
            let len = File::open(self.log.path(self.file))
                .and_then(|f| f.metadata())
                .map(|m| m.len())
                .unwrap_or(0);
            if self.pos >= len {
                let next = self.file + 1;
                let rot = fake_rotate(&self.log, next, 4)?;
                self.queue.push_back(rot);
                self.file = next;
                self.pos = 4;
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn heartbeat_event(&self) -> Vec<u8> {
        let name = self.log.file_name(self.file);
        let size = events::HEADER_LEN + name.len() + events::CHECKSUM_LEN;
        let mut ev = Vec::with_capacity(size);
        ev.extend_from_slice(&0u32.to_le_bytes());
        ev.push(HEARTBEAT_EVENT);
        ev.extend_from_slice(&self.log.config().server_id.to_le_bytes());
        ev.extend_from_slice(&(size as u32).to_le_bytes());
        ev.extend_from_slice(&(self.pos.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        ev.extend_from_slice(&LOG_EVENT_ARTIFICIAL_F.to_le_bytes());
        ev.extend_from_slice(name.as_bytes());
        ev.extend_from_slice(&[0; 4]);
        events::reseal(&mut ev);
        ev
    }

    /// The next event to send: waits for one (sending heartbeats meanwhile). None: the
    /// stream is over (a non-blocking dump at the end of the log, or the server stopping).
    pub fn next_event(&mut self) -> Result<Option<Vec<u8>>, DumpError> {
        loop {
            if let Some(ev) = self.queue.pop_front() {
                self.last_sent = Instant::now();
                return Ok(Some(ev));
            }
            if self.log.dumps_stopped() {
                return Ok(None);
            }
            let generation = self.log.generation();
            if self.fill()? {
                continue;
            }
            if !self.queue.is_empty() {
                continue;
            }
            if self.nonblock {
                return Ok(None);
            }
            let mut wait = Duration::from_secs(1);
            if let Some(h) = self.heartbeat {
                let since = self.last_sent.elapsed();
                if since >= h {
                    self.last_sent = Instant::now();
                    return Ok(Some(self.heartbeat_event()));
                }
                wait = wait.min(h - since);
            }
            self.log.wait_for_write(generation, wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replica_positions_parse_or_are_refused() {
        assert_eq!(parse_state("0-1-42").unwrap(), vec![(0, 1, 42)]);
        assert_eq!(
            parse_state("0-1-42, 1-2-7").unwrap(),
            vec![(0, 1, 42), (1, 2, 7)]
        );
        assert!(parse_state("").unwrap().is_empty());
        for bad in ["0-1", "a-b-c", "0-1-2-3", "0--1"] {
            assert!(parse_state(bad).is_err(), "{bad}");
        }
    }
}
