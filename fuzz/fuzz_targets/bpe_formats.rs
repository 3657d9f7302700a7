//! The buffer-pool extension's on-device metadata decoders (`tierdb_bpe::format`):
//! `RegionHeader::decode` and `Manifest::decode` on arbitrary bytes.
//!
//! Properties: never panic, never allocate without bound; a decoded manifest re-encodes to
//! bytes that decode to the same manifest and carry the same counted fields (reserved
//! bytes and unused flag bits are ignored by the decoder, so they may differ); a decoded
//! region header is self-consistent (slots within capacity and within the header). Each
//! decoder also sees a copy of the input with magic, version and CRCs fixed up, so the
//! checks after the CRC are reached.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tierdb_bpe::format::{Manifest, RegionHeader, REGION_HEADER_FIXED};

/// Writes a valid region-header CRC into `h` (CRC32C of bytes 0..40 and 44..header end).
fn fix_region_crc(h: &mut [u8]) {
    if h.len() < REGION_HEADER_FIXED {
        return;
    }
    let hl = u32::from_le_bytes(h[12..16].try_into().unwrap()) as usize;
    if hl < REGION_HEADER_FIXED || hl > h.len() {
        return;
    }
    let c = crc32c::crc32c(&h[..40]);
    let c = crc32c::crc32c_append(c, &h[44..hl]);
    h[40..44].copy_from_slice(&c.to_le_bytes());
}

/// Writes valid head and body CRCs into a manifest buffer.
fn fix_manifest_crcs(b: &mut [u8]) {
    if b.len() < 64 {
        return;
    }
    let body = crc32c::crc32c(&b[64..]);
    b[56..60].copy_from_slice(&body.to_le_bytes());
    let head = crc32c::crc32c(&b[..60]);
    b[60..64].copy_from_slice(&head.to_le_bytes());
}

fn check_manifest(b: &[u8]) {
    if let Ok(m) = Manifest::decode(b) {
        let again = m.encode();
        // Magic, version, region size, tag, region count and entry count are copied
        // verbatim; the flag word, reserved bytes and per-entry padding may differ.
        assert_eq!(again.len(), b.len());
        assert_eq!(Manifest::decode(&again).as_ref(), Ok(&m), "manifest re-decode");
        assert_eq!(again[..12], b[..12]);
        assert_eq!(again[16..36], b[16..36]);
        assert_eq!(again[40..48], b[40..48]);
    }
}

fn check_region(b: &[u8]) {
    if let Ok(h) = RegionHeader::decode(b) {
        assert!(h.slots.len() as u32 <= h.slot_capacity);
        assert!(h.header_len as usize <= b.len());
        assert!(REGION_HEADER_FIXED + h.slots.len() * 24 <= h.header_len as usize);
    }
}

fuzz_target!(|data: &[u8]| {
    check_region(data);
    check_manifest(data);

    // With magic, version and CRCs fixed up, so the decoders get past their first checks.
    let mut r = data.to_vec();
    if r.len() >= REGION_HEADER_FIXED {
        r[0..8].copy_from_slice(b"TDBPEREG");
        r[8..12].copy_from_slice(&1u32.to_le_bytes());
        fix_region_crc(&mut r);
        check_region(&r);
    }
    let mut m = data.to_vec();
    if m.len() >= 64 {
        m[0..8].copy_from_slice(b"TDBPEMAN");
        m[8..12].copy_from_slice(&1u32.to_le_bytes());
        fix_manifest_crcs(&mut m);
        check_manifest(&m);
    }
});
