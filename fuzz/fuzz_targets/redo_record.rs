//! `tierdb_btree::redo::decode` (redo log payloads) on arbitrary bytes; when a record
//! decodes, each page change is `apply`-ed to a scratch page.
//!
//! Properties: decode and apply never panic (the decoder bounds every range it accepts to
//! the page); a decoded `TxnEnd` re-encodes to the input; for a decoded change, re-encoding
//! the page it produced (`encode_change` as a diff against the scratch page, and as a full
//! image) and applying that reproduces the same page.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tierdb_btree::redo::{self, PageChange, Record};
use tierdb_page::{format, off, PageId, PageType, PAGE_SIZE};

fn scratch() -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    format(&mut p, PageId(4), PageType::BTreeLeaf);
    p[PAGE_SIZE / 2] = 0x5a;
    p
}

/// Decodes a payload holding exactly one change and returns it.
fn single_change(payload: &[u8]) -> PageChange {
    match redo::decode(payload) {
        Ok(Record::Mtr { mut changes, .. }) if changes.len() == 1 => changes.remove(0),
        other => panic!("re-encoded change does not decode: {other:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(rec) = redo::decode(data) else {
        return;
    };
    match rec {
        Record::TxnEnd { txn, committed } => {
            assert_eq!(redo::encode_txn_end(txn, committed), data);
        }
        Record::Mtr { changes, .. } => {
            let base = scratch();
            let mut page = base.clone();
            for (i, change) in changes.iter().enumerate() {
                // Each change on its own, from the same starting page.
                let mut after = base.clone();
                redo::apply(&mut after, change);
                // And all of them in sequence, as recovery would.
                redo::apply(&mut page, change);
                if i >= 4 {
                    continue; // the round trip below is 16 KiB work per change
                }
                // Round trip: diff against the start, then full image.
                let mut out = Vec::new();
                redo::begin_mtr(&mut out, 1, 1);
                redo::encode_change(&mut out, change.page(), Some(&mut base.clone()), &after);
                redo::finish_mtr(&mut out, b"");
                let mut again = base.clone();
                redo::apply(&mut again, &single_change(&out));
                // encode_change never logs the CRC and LSN fields (redo stamps them).
                for r in [off::CRC..off::CRC + 4, off::LSN..off::LSN + 8] {
                    again[r.clone()].copy_from_slice(&after[r]);
                }
                assert!(again == after, "diff round trip differs");

                let mut out = Vec::new();
                redo::begin_mtr(&mut out, 1, 1);
                redo::encode_change(&mut out, change.page(), None, &after);
                redo::finish_mtr(&mut out, b"");
                let mut again = vec![0xEEu8; PAGE_SIZE];
                redo::apply(&mut again, &single_change(&out));
                assert!(again == after, "image round trip differs");
            }
        }
    }
});
