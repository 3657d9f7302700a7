//! Byte layouts the BPE writes: the region header (at the start of every region on a device)
//! and the per-device manifest sidecar file. Documented in `docs/format.md` ("Buffer Pool Extension").
//!
//! Owns: `RegionLayout` (where slots sit inside a region), encoders and the decoders for
//! untrusted bytes. Must never: panic or index out of bounds on any input given to a
//! `decode`/`read_*` function (fuzzed by `tests/decoders_never_panic.rs`); do I/O.

use tierdb_io::DIRECT_ALIGN;
use tierdb_page::PAGE_SIZE;

use crate::error::{BpeError, FormatError};

/// "TDBPEREG".
pub const REGION_MAGIC: [u8; 8] = *b"TDBPEREG";
/// Region header format version.
pub const REGION_VERSION: u32 = 1;
/// Fixed part of the region header, before the slot table.
pub const REGION_HEADER_FIXED: usize = 64;
/// One slot-table entry: page id u64, page LSN u64, page CRC u32, reserved u32.
pub const SLOT_ENTRY_SIZE: usize = 24;
/// Slots per region are limited by the 11-bit slot field of an index entry.
pub const MAX_SLOTS_PER_REGION: u32 = 2047;

/// "TDBPEMAN".
pub const MANIFEST_MAGIC: [u8; 8] = *b"TDBPEMAN";
/// Manifest format version.
pub const MANIFEST_VERSION: u32 = 1;
/// Manifest header size.
pub const MANIFEST_HEADER: usize = 64;
/// One manifest region record: region number u32, sequence u64.
pub const MANIFEST_REGION_SIZE: usize = 12;
/// One manifest entry: page id u64, LSN low 32 bits u32, region number u32, slot u16,
/// flags u8 (bit 0 = hit), reserved u8.
pub const MANIFEST_ENTRY_SIZE: usize = 20;
/// Manifest flag: written by a clean `shutdown()`.
pub const MANIFEST_CLEAN: u32 = 1;

fn rd_u16(b: &[u8], at: usize) -> u16 {
    let mut a = [0u8; 2];
    a.copy_from_slice(&b[at..at + 2]);
    u16::from_le_bytes(a)
}
fn rd_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}
fn rd_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}
fn wr_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn wr_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Where things sit inside a region of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegionLayout {
    /// Region size in bytes.
    pub region_size: u64,
    /// Header length: `REGION_HEADER_FIXED + slots × SLOT_ENTRY_SIZE` rounded up to 4 KiB.
    pub header_len: usize,
    /// Page slots per region.
    pub slots: u32,
}

impl RegionLayout {
    /// The layout for `region_size` bytes (the largest slot count whose header and slots fit).
    pub fn new(region_size: u64) -> Result<RegionLayout, BpeError> {
        let page = PAGE_SIZE as u64;
        if region_size == 0 || !region_size.is_multiple_of(page) {
            return Err(BpeError::Config(format!(
                "region_size_bytes {region_size} must be a non-zero multiple of {PAGE_SIZE}"
            )));
        }
        let mut slots = (region_size / page).min(u64::from(MAX_SLOTS_PER_REGION) + 1);
        while slots > 0 {
            let header = Self::header_len_for(slots as usize) as u64;
            if header + slots * page <= region_size && slots <= u64::from(MAX_SLOTS_PER_REGION) {
                break;
            }
            slots -= 1;
        }
        if slots == 0 {
            return Err(BpeError::Config(format!(
                "region_size_bytes {region_size} holds no page slot (minimum 32 KiB)"
            )));
        }
        let used = Self::header_len_for(slots as usize) as u64 + slots * page;
        if region_size - used >= page && slots == u64::from(MAX_SLOTS_PER_REGION) {
            return Err(BpeError::Config(format!(
                "region_size_bytes {region_size} exceeds the maximum of {MAX_SLOTS_PER_REGION} \
                 page slots per region (use at most 32 MiB)"
            )));
        }
        Ok(RegionLayout {
            region_size,
            header_len: Self::header_len_for(slots as usize),
            slots: slots as u32,
        })
    }

    fn header_len_for(slots: usize) -> usize {
        (REGION_HEADER_FIXED + slots * SLOT_ENTRY_SIZE).next_multiple_of(DIRECT_ALIGN)
    }

    /// Byte offset of `slot`'s page inside the region.
    pub fn slot_offset(&self, slot: u16) -> usize {
        self.header_len + usize::from(slot) * PAGE_SIZE
    }

    /// Bytes a region with `used` slots occupies when written.
    pub fn written_len(&self, used: u32) -> usize {
        self.header_len + used as usize * PAGE_SIZE
    }
}

/// One slot of a region: which page version it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotEntry {
    pub page_id: u64,
    pub page_lsn: u64,
    pub page_crc: u32,
}

/// A decoded region header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionHeader {
    pub header_len: u32,
    pub seq: u64,
    pub device_id: u32,
    pub region_no: u32,
    pub slot_capacity: u32,
    pub slots: Vec<SlotEntry>,
}

/// Writes slot `slot`'s table entry into a region buffer's header.
pub fn write_slot_entry(region: &mut [u8], slot: u16, e: &SlotEntry) {
    let at = REGION_HEADER_FIXED + usize::from(slot) * SLOT_ENTRY_SIZE;
    wr_u64(region, at, e.page_id);
    wr_u64(region, at + 8, e.page_lsn);
    wr_u32(region, at + 16, e.page_crc);
    wr_u32(region, at + 20, 0);
}

/// Reads slot `slot`'s table entry back from a region buffer the BPE itself filled.
pub fn read_slot_entry(region: &[u8], slot: u16) -> SlotEntry {
    let at = REGION_HEADER_FIXED + usize::from(slot) * SLOT_ENTRY_SIZE;
    SlotEntry {
        page_id: rd_u64(region, at),
        page_lsn: rd_u64(region, at + 8),
        page_crc: rd_u32(region, at + 16),
    }
}

fn header_crc(h: &[u8]) -> u32 {
    let c = crc32c::crc32c(&h[..40]);
    crc32c::crc32c_append(c, &h[44..])
}

/// Seals a region buffer: fills the fixed header and its CRC. Slot entries `0..used` must
/// already be written; entries past `used` are zeroed.
pub fn seal_region_header(
    region: &mut [u8],
    layout: &RegionLayout,
    seq: u64,
    device_id: u32,
    region_no: u32,
    used: u32,
) {
    let h = &mut region[..layout.header_len];
    let tail = REGION_HEADER_FIXED + used as usize * SLOT_ENTRY_SIZE;
    h[tail..].fill(0);
    h[..REGION_HEADER_FIXED].fill(0);
    h[0..8].copy_from_slice(&REGION_MAGIC);
    wr_u32(h, 8, REGION_VERSION);
    wr_u32(h, 12, layout.header_len as u32);
    wr_u64(h, 16, seq);
    wr_u32(h, 24, device_id);
    wr_u32(h, 28, region_no);
    wr_u32(h, 32, layout.slots);
    wr_u32(h, 36, used);
    let crc = header_crc(h);
    wr_u32(h, 40, crc);
}

impl RegionHeader {
    /// Decodes untrusted bytes (at least the header). Never panics.
    pub fn decode(b: &[u8]) -> Result<RegionHeader, FormatError> {
        if b.len() < REGION_HEADER_FIXED {
            return Err(FormatError::TooShort {
                need: REGION_HEADER_FIXED,
                got: b.len(),
            });
        }
        if b[0..8] != REGION_MAGIC {
            return Err(FormatError::BadMagic);
        }
        let version = rd_u32(b, 8);
        if version != REGION_VERSION {
            return Err(FormatError::BadVersion(version));
        }
        let header_len = rd_u32(b, 12) as usize;
        if header_len < REGION_HEADER_FIXED {
            return Err(FormatError::Inconsistent(
                "header length below the fixed part",
            ));
        }
        if b.len() < header_len {
            return Err(FormatError::TooShort {
                need: header_len,
                got: b.len(),
            });
        }
        let h = &b[..header_len];
        let stored = rd_u32(h, 40);
        let computed = header_crc(h);
        if stored != computed {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        let slot_capacity = rd_u32(h, 32);
        let used = rd_u32(h, 36);
        if used > slot_capacity || slot_capacity > MAX_SLOTS_PER_REGION {
            return Err(FormatError::Inconsistent("slot count"));
        }
        let need = REGION_HEADER_FIXED + used as usize * SLOT_ENTRY_SIZE;
        if need > header_len {
            return Err(FormatError::Inconsistent(
                "slot table longer than the header",
            ));
        }
        let slots = (0..used as u16).map(|i| read_slot_entry(h, i)).collect();
        Ok(RegionHeader {
            header_len: header_len as u32,
            seq: rd_u64(h, 16),
            device_id: rd_u32(h, 24),
            region_no: rd_u32(h, 28),
            slot_capacity,
            slots,
        })
    }
}

/// A region listed in a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManifestRegion {
    pub region_no: u32,
    pub seq: u64,
}

/// A cached page listed in a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    pub page_id: u64,
    pub lsn_low: u32,
    pub region_no: u32,
    pub slot: u16,
    pub hit: bool,
}

/// One device's manifest: the written regions and the live index entries pointing into them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// Written by a clean shutdown (else by `snapshot`).
    pub clean: bool,
    pub region_size: u64,
    /// Caller's tag (e.g. the redo LSN when the snapshot was taken).
    pub tag: u64,
    pub regions: Vec<ManifestRegion>,
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Encodes to bytes.
    pub fn encode(&self) -> Vec<u8> {
        let body_len =
            self.regions.len() * MANIFEST_REGION_SIZE + self.entries.len() * MANIFEST_ENTRY_SIZE;
        let mut b = vec![0u8; MANIFEST_HEADER + body_len];
        b[0..8].copy_from_slice(&MANIFEST_MAGIC);
        wr_u32(&mut b, 8, MANIFEST_VERSION);
        wr_u32(&mut b, 12, if self.clean { MANIFEST_CLEAN } else { 0 });
        wr_u64(&mut b, 16, self.region_size);
        wr_u64(&mut b, 24, self.tag);
        wr_u32(&mut b, 32, self.regions.len() as u32);
        wr_u64(&mut b, 40, self.entries.len() as u64);
        let mut at = MANIFEST_HEADER;
        for r in &self.regions {
            wr_u32(&mut b, at, r.region_no);
            wr_u64(&mut b, at + 4, r.seq);
            at += MANIFEST_REGION_SIZE;
        }
        for e in &self.entries {
            wr_u64(&mut b, at, e.page_id);
            wr_u32(&mut b, at + 8, e.lsn_low);
            wr_u32(&mut b, at + 12, e.region_no);
            b[at + 16..at + 18].copy_from_slice(&e.slot.to_le_bytes());
            b[at + 18] = u8::from(e.hit);
            at += MANIFEST_ENTRY_SIZE;
        }
        let body = crc32c::crc32c(&b[MANIFEST_HEADER..]);
        wr_u32(&mut b, 56, body);
        let head = crc32c::crc32c(&b[..60]);
        wr_u32(&mut b, 60, head);
        b
    }

    /// Decodes untrusted bytes. Never panics.
    pub fn decode(b: &[u8]) -> Result<Manifest, FormatError> {
        if b.len() < MANIFEST_HEADER {
            return Err(FormatError::TooShort {
                need: MANIFEST_HEADER,
                got: b.len(),
            });
        }
        if b[0..8] != MANIFEST_MAGIC {
            return Err(FormatError::BadMagic);
        }
        let stored = rd_u32(b, 60);
        let computed = crc32c::crc32c(&b[..60]);
        if stored != computed {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        let version = rd_u32(b, 8);
        if version != MANIFEST_VERSION {
            return Err(FormatError::BadVersion(version));
        }
        let n_regions = rd_u32(b, 32) as u64;
        let n_entries = rd_u64(b, 40);
        let body_len = n_regions
            .checked_mul(MANIFEST_REGION_SIZE as u64)
            .and_then(|r| {
                n_entries
                    .checked_mul(MANIFEST_ENTRY_SIZE as u64)
                    .and_then(|e| e.checked_add(r))
            })
            .ok_or(FormatError::Inconsistent("counts overflow"))?;
        if body_len != (b.len() - MANIFEST_HEADER) as u64 {
            return Err(FormatError::Inconsistent(
                "body length does not match counts",
            ));
        }
        let stored = rd_u32(b, 56);
        let computed = crc32c::crc32c(&b[MANIFEST_HEADER..]);
        if stored != computed {
            return Err(FormatError::ChecksumMismatch { stored, computed });
        }
        let mut at = MANIFEST_HEADER;
        let mut regions = Vec::with_capacity(n_regions as usize);
        for _ in 0..n_regions {
            regions.push(ManifestRegion {
                region_no: rd_u32(b, at),
                seq: rd_u64(b, at + 4),
            });
            at += MANIFEST_REGION_SIZE;
        }
        let mut entries = Vec::with_capacity(n_entries as usize);
        for _ in 0..n_entries {
            entries.push(ManifestEntry {
                page_id: rd_u64(b, at),
                lsn_low: rd_u32(b, at + 8),
                region_no: rd_u32(b, at + 12),
                slot: rd_u16(b, at + 16),
                hit: b[at + 18] & 1 != 0,
            });
            at += MANIFEST_ENTRY_SIZE;
        }
        Ok(Manifest {
            clean: rd_u32(b, 12) & MANIFEST_CLEAN != 0,
            region_size: rd_u64(b, 16),
            tag: rd_u64(b, 24),
            regions,
            entries,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_layout_has_1022_slots() {
        let l = RegionLayout::new(16 << 20).expect("layout");
        assert_eq!(l.slots, 1022);
        assert_eq!(l.header_len % DIRECT_ALIGN, 0);
        assert!(l.written_len(l.slots) as u64 <= l.region_size);
    }

    #[test]
    fn layout_limits() {
        assert!(RegionLayout::new(16384).is_err());
        assert!(RegionLayout::new(10000).is_err());
        assert_eq!(RegionLayout::new(32768).expect("2 pages").slots, 1);
        assert!(RegionLayout::new(32 << 20).is_ok());
        assert!(RegionLayout::new(64 << 20).is_err());
    }

    #[test]
    fn region_header_round_trips() {
        let l = RegionLayout::new(256 << 10).expect("layout");
        let mut buf = vec![0u8; l.region_size as usize];
        for i in 0..3u16 {
            let e = SlotEntry {
                page_id: 100 + u64::from(i),
                page_lsn: 7,
                page_crc: 9,
            };
            write_slot_entry(&mut buf, i, &e);
        }
        seal_region_header(&mut buf, &l, 42, 1, 5, 3);
        let h = RegionHeader::decode(&buf[..l.header_len]).expect("decode");
        assert_eq!(h.seq, 42);
        assert_eq!(h.region_no, 5);
        assert_eq!(h.slots.len(), 3);
        assert_eq!(h.slots[2].page_id, 102);
        buf[70] ^= 1;
        assert!(matches!(
            RegionHeader::decode(&buf[..l.header_len]),
            Err(FormatError::ChecksumMismatch { .. })
        ));
    }

    #[test]
    fn manifest_round_trips() {
        let m = Manifest {
            clean: true,
            region_size: 1 << 20,
            tag: 77,
            regions: vec![ManifestRegion {
                region_no: 3,
                seq: 9,
            }],
            entries: vec![ManifestEntry {
                page_id: 5,
                lsn_low: 6,
                region_no: 3,
                slot: 2,
                hit: true,
            }],
        };
        let b = m.encode();
        assert_eq!(Manifest::decode(&b).expect("decode"), m);
        assert!(Manifest::decode(&b[..b.len() - 1]).is_err());
    }
}
