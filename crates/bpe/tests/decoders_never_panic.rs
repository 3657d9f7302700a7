//! Arbitrary bytes (random, or a valid encoding with bytes flipped / truncated) given to the
//! region-header and manifest decoders return an error or a value, never a panic.

use proptest::prelude::*;
use tierdb_bpe::format::{
    seal_region_header, write_slot_entry, Manifest, ManifestEntry, ManifestRegion, RegionHeader,
    RegionLayout, SlotEntry,
};

fn valid_header() -> Vec<u8> {
    let l = RegionLayout::new(256 << 10).expect("layout");
    let mut b = vec![0u8; l.header_len];
    for i in 0..5u16 {
        write_slot_entry(
            &mut b,
            i,
            &SlotEntry {
                page_id: u64::from(i),
                page_lsn: 9,
                page_crc: 1,
            },
        );
    }
    seal_region_header(&mut b, &l, 3, 0, 1, 5);
    b
}

fn valid_manifest() -> Vec<u8> {
    Manifest {
        clean: true,
        region_size: 1 << 20,
        tag: 1,
        regions: vec![ManifestRegion {
            region_no: 0,
            seq: 1,
        }],
        entries: (0..4)
            .map(|i| ManifestEntry {
                page_id: i,
                lsn_low: 1,
                region_no: 0,
                slot: i as u16,
                hit: false,
            })
            .collect(),
    }
    .encode()
}

proptest! {
    #[test]
    fn random_bytes(b in prop::collection::vec(any::<u8>(), 0..9000)) {
        let _ = RegionHeader::decode(&b);
        let _ = Manifest::decode(&b);
    }

    #[test]
    fn mutated_valid_encodings(flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8), cut in any::<usize>()) {
        for mut b in [valid_header(), valid_manifest()] {
            let n = b.len();
            for (at, x) in &flips {
                b[at % n] ^= x;
            }
            let b = &b[..cut % (n + 1)];
            let _ = RegionHeader::decode(b);
            let _ = Manifest::decode(b);
        }
    }

    #[test]
    fn manifest_counts_that_lie(regions in any::<u32>(), entries in any::<u64>()) {
        let mut b = valid_manifest();
        b[32..36].copy_from_slice(&regions.to_le_bytes());
        b[40..48].copy_from_slice(&entries.to_le_bytes());
        let crc = crc32c_of(&b[..60]);
        b[60..64].copy_from_slice(&crc.to_le_bytes());
        let _ = Manifest::decode(&b);
    }
}

fn crc32c_of(b: &[u8]) -> u32 {
    // Castagnoli, bitwise (the test must not depend on the crate's internals).
    let mut crc = !0u32;
    for &x in b {
        crc ^= u32::from(x);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn valid_encodings_decode() {
    assert!(RegionHeader::decode(&valid_header()).is_ok());
    assert!(Manifest::decode(&valid_manifest()).is_ok());
}
