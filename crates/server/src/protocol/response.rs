//! The generic reply packets: OK, ERR, EOF, and the end-of-result-set marker in both styles.
//!
//! Owns: the byte layout of OK/ERR/EOF payloads and the choice between a classic EOF packet
//! and an OK packet with a 0xFE header (CLIENT_DEPRECATE_EOF).
//! Must never: decide *when* a reply is sent — that is the command dispatcher's job.

use super::codec::{put_lenenc_bytes, put_lenenc_int, put_u16};
use super::constants::cap;

/// An OK packet payload. A non-empty `info` is sent length-encoded: the protocol docs say
/// "rest of packet", but MySQL servers write (and libmysql/libmariadb read) a length prefix.
pub fn ok(
    out: &mut Vec<u8>,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    out.push(0x00);
    put_lenenc_int(out, affected_rows);
    put_lenenc_int(out, last_insert_id);
    put_u16(out, status);
    put_u16(out, warnings);
    if !info.is_empty() {
        put_lenenc_bytes(out, info.as_bytes());
    }
}

/// An ERR packet payload. `state` must be a five-character SQLSTATE; anything else is sent
/// as HY000.
pub fn err(out: &mut Vec<u8>, code: u16, state: &str, message: &str) {
    out.push(0xFF);
    put_u16(out, code);
    out.push(b'#');
    let state = if state.len() == 5 && state.is_ascii() {
        state
    } else {
        "HY000"
    };
    out.extend_from_slice(state.as_bytes());
    out.extend_from_slice(message.as_bytes());
}

/// A classic EOF packet payload (5 bytes).
pub fn eof(out: &mut Vec<u8>, status: u16, warnings: u16) {
    out.push(0xFE);
    put_u16(out, warnings);
    put_u16(out, status);
}

/// The packet that ends a result set's rows: a classic EOF, or with CLIENT_DEPRECATE_EOF an
/// OK packet with a 0xFE header.
pub fn end_of_rows(out: &mut Vec<u8>, client_caps: u32, status: u16, warnings: u16) {
    if client_caps & cap::DEPRECATE_EOF != 0 {
        out.push(0xFE);
        put_lenenc_int(out, 0);
        put_lenenc_int(out, 0);
        put_u16(out, status);
        put_u16(out, warnings);
    } else {
        eof(out, status, warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classic_eof_is_five_bytes() {
        let mut out = Vec::new();
        end_of_rows(&mut out, 0, 2, 0);
        assert_eq!(out, [0xFE, 0, 0, 2, 0]);
    }

    #[test]
    fn ok_info_is_length_encoded() {
        let mut out = Vec::new();
        ok(&mut out, 3, 0, 2, 0, "Records: 3");
        assert_eq!(out, b"\x00\x03\x00\x02\x00\x00\x00\x0aRecords: 3");
    }

    #[test]
    fn err_packet_layout() {
        let mut out = Vec::new();
        err(&mut out, 1146, "42S02", "no");
        assert_eq!(out, b"\xFF\x7a\x04#42S02no");
        out.clear();
        err(&mut out, 1, "bad", "x");
        assert_eq!(&out[3..9], b"#HY000");
    }
}
