//! `tierdb_page::verify` on arbitrary bytes: the raw input (any length), the input padded or
//! cut to `PAGE_SIZE`, and the padded page after `seal`.
//!
//! Properties: never panics; a sealed page with the right magic verifies exactly when its
//! type and version are valid; flipping any one byte of a sealed page makes it fail.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tierdb_page::{off, page_id, seal, verify, PageId, PageType, PAGE_FORMAT_VERSION, PAGE_MAGIC, PAGE_SIZE};

fuzz_target!(|data: &[u8]| {
    // Raw: any length, with an expected id from the input when there is one.
    let expected = data
        .get(..8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
    let _ = verify(data, PageId(expected));
    let _ = verify(data, PageId(0));

    // Padded (or cut) to a page.
    let mut page = vec![0u8; PAGE_SIZE];
    let n = data.len().min(PAGE_SIZE);
    page[..n].copy_from_slice(&data[..n]);
    let _ = verify(&page, PageId(expected));
    let _ = verify(&page, page_id(&page));

    // Sealed: right magic and CRC, its own id.
    page[off::MAGIC..off::MAGIC + 4].copy_from_slice(&PAGE_MAGIC.to_le_bytes());
    seal(&mut page);
    let id = page_id(&page);
    let ok = PageType::from_u8(page[off::PAGE_TYPE]).is_some()
        && page[off::VERSION] == PAGE_FORMAT_VERSION;
    assert_eq!(verify(&page, id).is_ok(), ok, "sealed page: {:?}", verify(&page, id));
    // Any single-byte corruption is caught (the CRC detects every 1-byte error; the
    // magic and CRC fields fail on their own).
    if data.len() >= 3 {
        let at = usize::from(u16::from_le_bytes([data[0], data[1]])) % PAGE_SIZE;
        let x = data[2] | 1;
        page[at] ^= x;
        assert!(verify(&page, id).is_err(), "byte {at} ^= {x:#x} went unnoticed");
    }
});
