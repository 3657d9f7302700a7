//! The redo log's on-disk bytes: record framing and segment file names (see `docs/format.md`, "Redo log").
//!
//! Owns: `encode_header`, `decode_header`, `check_record`, the segment naming rule and the
//! limits that make garbage recognisable (`MAX_RECORD_BYTES`).
//!
//! Must never: do I/O; panic on any input (every decoder takes untrusted bytes); accept a
//! zero-length record or one longer than `MAX_RECORD_BYTES`.

/// Bytes of framing in front of every payload: `[u32 LE length][u32 LE CRC32C]`.
pub const RECORD_HEADER_BYTES: usize = 8;

/// Largest payload a record may carry. Anything larger in a length field is garbage.
pub const MAX_RECORD_BYTES: usize = 16 * 1024 * 1024;

/// Segment files are `<20 decimal digits of the first byte's LSN>.log`.
pub const SEGMENT_NAME_DIGITS: usize = 20;
/// File name suffix of a segment.
pub const SEGMENT_SUFFIX: &str = ".log";

const _: () = assert!(RECORD_HEADER_BYTES == 8);
const _: () = assert!(MAX_RECORD_BYTES <= u32::MAX as usize);

/// The CRC stored in a record header: CRC32C of the 4 length bytes followed by the payload.
pub fn record_crc(len_bytes: [u8; 4], payload: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&len_bytes), payload)
}

/// Builds the 8-byte header for `payload`. The caller has checked
/// `0 < payload.len() <= MAX_RECORD_BYTES`.
pub fn encode_header(payload: &[u8]) -> [u8; RECORD_HEADER_BYTES] {
    debug_assert!(!payload.is_empty() && payload.len() <= MAX_RECORD_BYTES);
    let len_bytes = (payload.len() as u32).to_le_bytes();
    let crc = record_crc(len_bytes, payload);
    let mut h = [0u8; RECORD_HEADER_BYTES];
    h[0..4].copy_from_slice(&len_bytes);
    h[4..8].copy_from_slice(&crc.to_le_bytes());
    h
}

/// A decoded record header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub len: u32,
    pub crc: u32,
}

impl RecordHeader {
    /// Total bytes of the framed record (header + payload).
    pub fn framed_len(&self) -> u64 {
        RECORD_HEADER_BYTES as u64 + u64::from(self.len)
    }
}

/// Decodes a header from the first 8 bytes of `bytes`. `None` when there are fewer than 8
/// bytes or the length is 0 or above `MAX_RECORD_BYTES` (end of the valid log).
pub fn decode_header(bytes: &[u8]) -> Option<RecordHeader> {
    let len = u32::from_le_bytes(bytes.get(0..4)?.try_into().ok()?);
    let crc = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?);
    if len == 0 || len as usize > MAX_RECORD_BYTES {
        return None;
    }
    Some(RecordHeader { len, crc })
}

/// True when `payload` matches the header's length and CRC.
pub fn check_record(h: RecordHeader, payload: &[u8]) -> bool {
    payload.len() == h.len as usize && record_crc(h.len.to_le_bytes(), payload) == h.crc
}

/// Decodes one whole record at the start of `bytes`: `Some((payload, framed length))`, or
/// `None` when the bytes do not start with a complete, valid record.
pub fn decode_record(bytes: &[u8]) -> Option<(&[u8], usize)> {
    let h = decode_header(bytes)?;
    let end = RECORD_HEADER_BYTES.checked_add(h.len as usize)?;
    let payload = bytes.get(RECORD_HEADER_BYTES..end)?;
    check_record(h, payload).then_some((payload, end))
}

/// File name of the segment whose first byte is at `base_lsn`.
pub fn segment_file_name(base_lsn: u64) -> String {
    format!(
        "{base_lsn:0width$}{SEGMENT_SUFFIX}",
        width = SEGMENT_NAME_DIGITS
    )
}

/// Parses a segment file name back into its base LSN; `None` for any other file.
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(SEGMENT_SUFFIX)?;
    if digits.len() != SEGMENT_NAME_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn segment_names_round_trip() {
        assert_eq!(segment_file_name(0), "00000000000000000000.log");
        assert_eq!(segment_file_name(65536), "00000000000000065536.log");
        assert_eq!(segment_file_name(u64::MAX), "18446744073709551615.log");
        for v in [0, 1, 65536, u64::MAX] {
            assert_eq!(parse_segment_file_name(&segment_file_name(v)), Some(v));
        }
        assert_eq!(parse_segment_file_name("control"), None);
        assert_eq!(parse_segment_file_name("0000000000000000000.log"), None);
        assert_eq!(parse_segment_file_name("0000000000000000000a.log"), None);
        assert_eq!(parse_segment_file_name("+0000000000000000001.log"), None);
        // 20 digits that overflow u64.
        assert_eq!(parse_segment_file_name("99999999999999999999.log"), None);
    }

    #[test]
    fn record_round_trip_and_rejections() {
        let payload = b"hello redo";
        let mut rec = encode_header(payload).to_vec();
        rec.extend_from_slice(payload);
        assert_eq!(decode_record(&rec), Some((&payload[..], rec.len())));
        // Any flipped bit is caught.
        for i in 0..rec.len() {
            let mut bad = rec.clone();
            bad[i] ^= 0x10;
            assert_eq!(decode_record(&bad), None, "flip at byte {i} not detected");
        }
        // Truncation is caught.
        assert_eq!(decode_record(&rec[..rec.len() - 1]), None);
        // Zero length and oversized lengths are rejected before any CRC work.
        assert_eq!(decode_header(&[0u8; 8]), None);
        let mut big = [0u8; 8];
        big[0..4].copy_from_slice(&((MAX_RECORD_BYTES as u32) + 1).to_le_bytes());
        assert_eq!(decode_header(&big), None);
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode_record(&bytes);
            let _ = decode_header(&bytes);
        }

        #[test]
        fn encode_decode(payload in proptest::collection::vec(any::<u8>(), 1..2048)) {
            let mut rec = encode_header(&payload).to_vec();
            rec.extend_from_slice(&payload);
            rec.extend_from_slice(b"trailing");
            let (p, n) = decode_record(&rec).unwrap();
            prop_assert_eq!(p, &payload[..]);
            prop_assert_eq!(n, payload.len() + RECORD_HEADER_BYTES);
        }
    }
}
