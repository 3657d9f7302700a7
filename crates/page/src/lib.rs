//! tierdb-page: the 16 KiB page format shared by every tier.
//!
//! Owns: the page size, the typed ids (`PageId`, `Lsn`), the 32-byte common page header
//! (magic, CRC32C, page id, page LSN, page type) and the checks run on every page read from
//! any device (data file, BPE, log image). The byte layout is in `docs/format.md`.
//!
//! Must never: do I/O, or hand out a page that failed verification as if it were good.
//! Every decoder here takes untrusted bytes and returns a typed error, never panics.

use std::fmt;

/// Size of every page on every tier.
pub const PAGE_SIZE: usize = 16 * 1024;
/// Size of the common header at the start of every page.
pub const PAGE_HEADER_SIZE: usize = 32;
/// "TDBP" little-endian.
pub const PAGE_MAGIC: u32 = u32::from_le_bytes(*b"TDBP");
/// Current page format version.
pub const PAGE_FORMAT_VERSION: u8 = 1;

/// Byte offsets of the common header fields.
pub mod off {
    pub const MAGIC: usize = 0;
    pub const CRC: usize = 4;
    pub const PAGE_ID: usize = 8;
    pub const LSN: usize = 16;
    pub const PAGE_TYPE: usize = 24;
    pub const VERSION: usize = 25;
    /// 26..32 reserved, zero.
    pub const RESERVED: usize = 26;
}

/// Identifier of a page: its index in the data file (offset = id * PAGE_SIZE).
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PageId(pub u64);

impl PageId {
    /// Byte offset of this page in the data file.
    pub fn offset(self) -> u64 {
        self.0 * PAGE_SIZE as u64
    }
}

impl fmt::Debug for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "page#{}", self.0)
    }
}
impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Log sequence number: a byte position in the redo stream.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Debug)]
pub struct Lsn(pub u64);

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a page holds.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum PageType {
    /// Allocated but never formatted, or on the free list.
    Free = 0,
    /// Page 0: the data file's meta page.
    Meta = 1,
    BTreeLeaf = 2,
    BTreeInternal = 3,
}

impl PageType {
    pub fn from_u8(v: u8) -> Option<PageType> {
        Some(match v {
            0 => PageType::Free,
            1 => PageType::Meta,
            2 => PageType::BTreeLeaf,
            3 => PageType::BTreeInternal,
            _ => return None,
        })
    }
}

/// Why a page read from a device was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PageError {
    #[error("page {page}: wrong length {len} (expected {PAGE_SIZE})")]
    WrongLength { page: u64, len: usize },
    #[error("page {page}: bad magic {found:#010x}")]
    BadMagic { page: u64, found: u32 },
    #[error("page {page}: checksum mismatch (stored {stored:#010x}, computed {computed:#010x}); torn or corrupt page")]
    ChecksumMismatch {
        page: u64,
        stored: u32,
        computed: u32,
    },
    #[error("page {expected}: header names page {found}")]
    WrongPageId { expected: u64, found: u64 },
    #[error("page {page}: unknown page type {found}")]
    BadPageType { page: u64, found: u8 },
    #[error("page {page}: unsupported format version {found}")]
    BadVersion { page: u64, found: u8 },
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

/// CRC32C over everything but the magic and the CRC field itself.
pub fn compute_crc(page: &[u8]) -> u32 {
    crc32c::crc32c(&page[off::PAGE_ID..])
}

/// Accessors on a full page buffer (`PAGE_SIZE` bytes). Callers guarantee the length;
/// `verify` is the only function that must cope with arbitrary input.
pub fn page_id(page: &[u8]) -> PageId {
    PageId(rd_u64(page, off::PAGE_ID))
}
pub fn page_lsn(page: &[u8]) -> Lsn {
    Lsn(rd_u64(page, off::LSN))
}
pub fn page_type_raw(page: &[u8]) -> u8 {
    page[off::PAGE_TYPE]
}
pub fn set_page_lsn(page: &mut [u8], lsn: Lsn) {
    page[off::LSN..off::LSN + 8].copy_from_slice(&lsn.0.to_le_bytes());
}

/// Formats `page` as an empty page of `ty` with id `id` and LSN 0 (body zeroed).
pub fn format(page: &mut [u8], id: PageId, ty: PageType) {
    page.fill(0);
    page[off::MAGIC..off::MAGIC + 4].copy_from_slice(&PAGE_MAGIC.to_le_bytes());
    page[off::PAGE_ID..off::PAGE_ID + 8].copy_from_slice(&id.0.to_le_bytes());
    page[off::PAGE_TYPE] = ty as u8;
    page[off::VERSION] = PAGE_FORMAT_VERSION;
}

/// Sets the page type (used when a page changes role, e.g. root leaf → internal).
pub fn set_page_type(page: &mut [u8], ty: PageType) {
    page[off::PAGE_TYPE] = ty as u8;
}

/// Stores the checksum; call right before the page leaves DRAM.
pub fn seal(page: &mut [u8]) {
    let crc = compute_crc(page);
    page[off::CRC..off::CRC + 4].copy_from_slice(&crc.to_le_bytes());
}

/// True when the page was never written (all zero): a freshly extended file region.
pub fn is_zeroed(page: &[u8]) -> bool {
    page.iter().all(|&b| b == 0)
}

/// Verifies a page read from any device: length, magic, checksum, page id, type, version.
pub fn verify(page: &[u8], expected: PageId) -> Result<(), PageError> {
    if page.len() != PAGE_SIZE {
        return Err(PageError::WrongLength {
            page: expected.0,
            len: page.len(),
        });
    }
    let magic = rd_u32(page, off::MAGIC);
    if magic != PAGE_MAGIC {
        return Err(PageError::BadMagic {
            page: expected.0,
            found: magic,
        });
    }
    let stored = rd_u32(page, off::CRC);
    let computed = compute_crc(page);
    if stored != computed {
        return Err(PageError::ChecksumMismatch {
            page: expected.0,
            stored,
            computed,
        });
    }
    let found = rd_u64(page, off::PAGE_ID);
    if found != expected.0 {
        return Err(PageError::WrongPageId {
            expected: expected.0,
            found,
        });
    }
    let ty = page[off::PAGE_TYPE];
    if PageType::from_u8(ty).is_none() {
        return Err(PageError::BadPageType {
            page: expected.0,
            found: ty,
        });
    }
    let v = page[off::VERSION];
    if v != PAGE_FORMAT_VERSION {
        return Err(PageError::BadVersion {
            page: expected.0,
            found: v,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sealed(id: u64) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        format(&mut p, PageId(id), PageType::BTreeLeaf);
        p[100] = 7;
        set_page_lsn(&mut p, Lsn(42));
        seal(&mut p);
        p
    }

    #[test]
    fn sealed_page_verifies_and_keeps_its_fields() {
        let p = sealed(9);
        verify(&p, PageId(9)).unwrap();
        assert_eq!(page_id(&p), PageId(9));
        assert_eq!(page_lsn(&p), Lsn(42));
        assert_eq!(page_type_raw(&p), PageType::BTreeLeaf as u8);
    }

    #[test]
    fn torn_page_is_reported_with_its_id() {
        let mut p = sealed(9);
        // A torn write: the second half is from an older version.
        for b in &mut p[PAGE_SIZE / 2..] {
            *b ^= 0x5a;
        }
        match verify(&p, PageId(9)) {
            Err(PageError::ChecksumMismatch { page: 9, .. }) => {}
            other => panic!("expected checksum mismatch, got {other:?}"),
        }
    }

    #[test]
    fn page_read_from_the_wrong_offset_is_rejected() {
        let p = sealed(9);
        assert_eq!(
            verify(&p, PageId(10)),
            Err(PageError::WrongPageId {
                expected: 10,
                found: 9
            })
        );
    }

    #[test]
    fn zeroed_page_is_not_a_valid_page() {
        let p = vec![0u8; PAGE_SIZE];
        assert!(is_zeroed(&p));
        assert!(matches!(
            verify(&p, PageId(1)),
            Err(PageError::BadMagic { .. })
        ));
    }

    proptest! {
        #[test]
        fn verify_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..64), len in prop_oneof![Just(PAGE_SIZE), 0usize..PAGE_SIZE + 10]) {
            let mut p = vec![0u8; len];
            for (i, b) in bytes.iter().enumerate() { if i < p.len() { p[i] = *b; } }
            let _ = verify(&p, PageId(3));
        }

        #[test]
        fn any_single_bit_flip_is_detected(byte in 0usize..PAGE_SIZE, bit in 0u8..8) {
            let mut p = sealed(5);
            p[byte] ^= 1 << bit;
            prop_assert!(verify(&p, PageId(5)).is_err());
        }
    }
}
