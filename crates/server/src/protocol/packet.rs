//! Packet framing: 3-byte little-endian length + 1-byte sequence id, with payloads of
//! 16 MiB − 1 or more split over several physical packets.
//!
//! Owns: reading one logical packet (assembling continuation packets, enforcing
//! `max_allowed_packet` before buffering, checking sequence ids) and writing logical packets
//! into one buffer that goes to the socket in a single `write` per response.
//! Must never: allocate more than `max_allowed_packet` for a client's packet; panic or loop on
//! a truncated stream; write to the socket before `flush` (except to bound a huge response).

use std::io::{self, Read, Write};

use super::constants::MAX_PACKET_CHUNK;

/// Why no packet could be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The peer closed the connection cleanly between packets.
    #[error("connection closed by peer")]
    Closed,
    /// The stream ended inside a packet.
    #[error("connection closed inside a packet")]
    Truncated,
    #[error("packet of {size} bytes exceeds max_allowed_packet ({max})")]
    TooLarge { size: u64, max: u64 },
    #[error("packet sequence id {got}, expected {expected}")]
    OutOfOrder { expected: u8, got: u8 },
    #[error("socket read failed: {0}")]
    Io(#[from] io::Error),
}

/// Reads logical packets from a byte stream.
pub struct PacketReader<R> {
    inner: io::BufReader<R>,
    max_packet_bytes: u64,
    bytes_read: u64,
}

impl<R: Read> PacketReader<R> {
    pub fn new(inner: R, max_packet_bytes: u64) -> PacketReader<R> {
        PacketReader {
            inner: io::BufReader::with_capacity(16 * 1024, inner),
            max_packet_bytes,
            bytes_read: 0,
        }
    }

    pub fn set_max_packet_bytes(&mut self, max: u64) {
        self.max_packet_bytes = max;
    }

    /// Bytes taken from the stream since the last call.
    pub fn take_bytes_read(&mut self) -> u64 {
        std::mem::take(&mut self.bytes_read)
    }

    /// The underlying stream (e.g. to change socket timeouts).
    pub fn get_ref(&self) -> &R {
        self.inner.get_ref()
    }

    /// Reads one logical packet whose first physical packet must carry sequence id `*seq`;
    /// afterwards `*seq` is the id the next packet (in either direction) must carry.
    pub fn read_packet(&mut self, seq: &mut u8) -> Result<Vec<u8>, ReadError> {
        let mut payload = Vec::new();
        let mut first = true;
        loop {
            let header = self.read_header(first)?;
            first = false;
            let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
            if header[3] != *seq {
                return Err(ReadError::OutOfOrder {
                    expected: *seq,
                    got: header[3],
                });
            }
            *seq = seq.wrapping_add(1);
            let size = (payload.len() + len) as u64;
            if size > self.max_packet_bytes {
                return Err(ReadError::TooLarge {
                    size,
                    max: self.max_packet_bytes,
                });
            }
            let start = payload.len();
            payload.resize(start + len, 0);
            self.inner
                .read_exact(&mut payload[start..])
                .map_err(eof_is_truncated)?;
            self.bytes_read += 4 + len as u64;
            if len < MAX_PACKET_CHUNK {
                return Ok(payload);
            }
        }
    }

    fn read_header(&mut self, first: bool) -> Result<[u8; 4], ReadError> {
        let mut header = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            match self.inner.read(&mut header[got..]) {
                Ok(0) if got == 0 && first => return Err(ReadError::Closed),
                Ok(0) => return Err(ReadError::Truncated),
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
        Ok(header)
    }
}

fn eof_is_truncated(e: io::Error) -> ReadError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        ReadError::Truncated
    } else {
        ReadError::Io(e)
    }
}

/// Above this many buffered bytes a response is written out before it is complete.
const SPILL_BYTES: usize = 1 << 20;

/// Frames logical packets into a buffer; `flush` sends the buffer.
pub struct PacketWriter<W> {
    out: W,
    buf: Vec<u8>,
    seq: u8,
    bytes_written: u64,
}

impl<W: Write> PacketWriter<W> {
    pub fn new(out: W) -> PacketWriter<W> {
        PacketWriter {
            out,
            buf: Vec::with_capacity(16 * 1024),
            seq: 0,
            bytes_written: 0,
        }
    }

    /// Sets the sequence id of the next packet written.
    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }
    pub fn seq(&self) -> u8 {
        self.seq
    }

    /// Bytes sent since the last call.
    pub fn take_bytes_written(&mut self) -> u64 {
        std::mem::take(&mut self.bytes_written)
    }

    /// Appends one logical packet whose payload `fill` writes.
    pub fn packet(&mut self, fill: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0, 0, 0, 0]);
        fill(&mut self.buf);
        let len = self.buf.len() - start - 4;
        if len < MAX_PACKET_CHUNK {
            self.buf[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            self.buf[start + 3] = self.seq;
            self.seq = self.seq.wrapping_add(1);
        } else {
            let payload = self.buf.split_off(start + 4);
            self.buf.truncate(start);
            let mut chunks = payload.chunks(MAX_PACKET_CHUNK).peekable();
            while let Some(chunk) = chunks.next() {
                self.buf
                    .extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
                self.buf.push(self.seq);
                self.seq = self.seq.wrapping_add(1);
                self.buf.extend_from_slice(chunk);
                if chunks.peek().is_none() && chunk.len() == MAX_PACKET_CHUNK {
                    // A payload that is an exact multiple of the chunk size ends with an
                    // empty packet.
                    self.buf.extend_from_slice(&[0, 0, 0, self.seq]);
                    self.seq = self.seq.wrapping_add(1);
                }
            }
        }
        if self.buf.len() > SPILL_BYTES {
            self.write_out()?;
        }
        Ok(())
    }

    /// Appends one packet with the given payload.
    pub fn write_payload(&mut self, payload: &[u8]) -> io::Result<()> {
        self.packet(|b| b.extend_from_slice(payload))
    }

    fn write_out(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.out.write_all(&self.buf)?;
            self.bytes_written += self.buf.len() as u64;
            self.buf.clear();
        }
        Ok(())
    }

    /// Sends everything buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        self.write_out()?;
        self.out.flush()
    }

    pub fn get_ref(&self) -> &W {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload: &[u8]) -> Vec<u8> {
        let mut w = PacketWriter::new(Vec::new());
        w.write_payload(payload).unwrap();
        w.flush().unwrap();
        w.out
    }

    #[test]
    fn small_packet_round_trips() {
        let bytes = frame(b"\x03select 1");
        assert_eq!(&bytes[..4], &[9, 0, 0, 0]);
        let mut r = PacketReader::new(&bytes[..], 1 << 20);
        let mut seq = 0;
        assert_eq!(r.read_packet(&mut seq).unwrap(), b"\x03select 1");
        assert_eq!(seq, 1);
        assert!(matches!(r.read_packet(&mut seq), Err(ReadError::Closed)));
    }

    #[test]
    fn payloads_at_the_chunk_boundary_split_and_reassemble() {
        for len in [
            MAX_PACKET_CHUNK - 1,
            MAX_PACKET_CHUNK,
            MAX_PACKET_CHUNK + 1,
            2 * MAX_PACKET_CHUNK,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let bytes = frame(&payload);
            let chunks = len / MAX_PACKET_CHUNK + 1;
            assert_eq!(bytes.len(), len + 4 * chunks, "len {len}");
            let mut r = PacketReader::new(&bytes[..], 64 << 20);
            let mut seq = 0;
            assert_eq!(r.read_packet(&mut seq).unwrap(), payload);
            assert_eq!(seq as usize, chunks);
        }
    }

    #[test]
    fn oversized_packet_is_refused_before_buffering() {
        let bytes = [0xFF, 0xFF, 0xFF, 0];
        let mut r = PacketReader::new(&bytes[..], 1024);
        assert!(matches!(
            r.read_packet(&mut 0),
            Err(ReadError::TooLarge { .. })
        ));
    }

    #[test]
    fn truncated_and_out_of_order_packets_are_errors() {
        let mut r = PacketReader::new(&[5u8, 0, 0, 0, 1, 2][..], 1024);
        assert!(matches!(r.read_packet(&mut 0), Err(ReadError::Truncated)));
        let mut r = PacketReader::new(&[5u8, 0][..], 1024);
        assert!(matches!(r.read_packet(&mut 0), Err(ReadError::Truncated)));
        let mut r = PacketReader::new(&[1u8, 0, 0, 7, 1][..], 1024);
        assert!(matches!(
            r.read_packet(&mut 0),
            Err(ReadError::OutOfOrder {
                expected: 0,
                got: 7
            })
        ));
    }
}
