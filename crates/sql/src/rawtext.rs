//! Statement text that is not UTF-8. Clients send string literals as raw bytes
//! (mysql-connector-python's client-side parameters, PHP's `real_escape_string`, a dump of
//! BLOBs made without `--hex-blob`), but the parser reads `str`. Such a statement is carried
//! byte for byte: every byte of an invalid sequence becomes one character of a reserved
//! private-use range (valid characters stay), and a string literal turns those characters
//! back into its bytes.
//!
//! Owns: that mapping, both ways.
//! Must never: lose or change a byte of a literal (a reserved-range character the client sent
//! as valid UTF-8 is mapped byte by byte too, so every such character means a byte),
//! or cost anything for ordinary statements beyond one scan for the byte 0xF4.

use std::borrow::Cow;

/// Byte b (>= 0x80) of a mapped statement is the character `BASE + b` (U+10FF80..U+10FFFF,
/// the end of plane 16's private-use area).
const BASE: u32 = 0x10_FF00;

/// Whether `c` stands for a raw byte.
fn is_mapped(c: char) -> bool {
    (BASE + 0x80..=BASE + 0xFF).contains(&u32::from(c))
}

/// The text of statement bytes `b`: as they are when they are UTF-8 with no character of the
/// reserved range; otherwise valid characters stay as they are and each byte of an invalid
/// sequence (or of a reserved character) becomes its mapped character, so identifiers and
/// text outside literals keep their spelling. Trailing NUL bytes end the statement, as
/// MariaDB reads them (`mariadb-slap` sends its statements with one).
pub fn statement_text(b: &[u8]) -> Cow<'_, str> {
    let end = b.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
    let b = &b[..end];
    if let Ok(s) = std::str::from_utf8(b) {
        if !b.contains(&0xF4) || !s.chars().any(is_mapped) {
            return Cow::Borrowed(s);
        }
    }
    let raw = |out: &mut String, bytes: &[u8]| {
        for &byte in bytes {
            out.push(char::from_u32(BASE + u32::from(byte)).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
    };
    let mut out = String::with_capacity(b.len() + 8);
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            if is_mapped(c) {
                let mut buf = [0u8; 4];
                raw(&mut out, c.encode_utf8(&mut buf).as_bytes());
            } else {
                out.push(c);
            }
        }
        raw(&mut out, chunk.invalid());
    }
    Cow::Owned(out)
}

/// The bytes of string literal `s` from a statement read by `statement_text`.
pub fn literal_bytes(s: &str) -> Vec<u8> {
    if !s.as_bytes().contains(&0xF4) || !s.chars().any(is_mapped) {
        return s.as_bytes().to_vec();
    }
    let mut out = Vec::with_capacity(s.len());
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if is_mapped(c) {
            out.push((u32::from(c) - BASE) as u8);
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_statements_are_borrowed_as_they_are() {
        let q = "SELECT 'héllo wörld 😀'".as_bytes();
        assert!(matches!(statement_text(q), Cow::Borrowed(_)));
        assert_eq!(literal_bytes("héllo"), "héllo".as_bytes());
    }

    #[test]
    fn trailing_nul_bytes_end_the_statement() {
        assert_eq!(statement_text(b"SELECT 1\0"), "SELECT 1");
        assert_eq!(statement_text(b"SELECT '\0'\0\0"), "SELECT '\0'");
        assert_eq!(statement_text(b"\0"), "");
    }

    #[test]
    fn raw_bytes_in_a_literal_come_back_exactly() {
        let mut q = b"INSERT INTO t VALUES ('".to_vec();
        let data = [0x00, 0xFF, 0x80, b'x', 0xC3, 0xA9, 0xFE];
        q.extend_from_slice(&data);
        q.extend_from_slice(b"')");
        let text = statement_text(&q);
        let inner = &text[text.find('\'').unwrap() + 1..text.rfind('\'').unwrap()];
        assert_eq!(literal_bytes(inner), data);
    }

    #[test]
    fn valid_characters_outside_literals_keep_their_spelling() {
        let q = b"INSERT INTO caf\xC3\xA9 VALUES ('\xFF\xC3\xA9')";
        let text = statement_text(q);
        assert!(
            text.starts_with("INSERT INTO caf\u{e9} VALUES ('"),
            "{text}"
        );
        let inner = &text[text.find('\'').unwrap() + 1..text.rfind('\'').unwrap()];
        assert_eq!(literal_bytes(inner), b"\xFF\xC3\xA9");
    }

    #[test]
    fn a_reserved_character_in_utf8_text_is_kept_too() {
        // Valid UTF-8 holding U+10FF90 and an invalid byte: both survive the round trip.
        let mut q = "'\u{10FF90}é".as_bytes().to_vec();
        q.push(0xFF);
        q.push(b'\'');
        let text = statement_text(&q);
        assert_eq!(literal_bytes(&text[1..text.len() - 1]), &q[1..q.len() - 1]);
        // Valid UTF-8 alone holding the reserved character is mapped whole as well.
        let q = "'\u{10FFAA}'".as_bytes();
        let text = statement_text(q);
        assert_eq!(literal_bytes(&text[1..text.len() - 1]), &q[1..q.len() - 1]);
    }
}
