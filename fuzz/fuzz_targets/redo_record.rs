//! `tierdb_btree::redo::decode` (redo log payloads) on arbitrary bytes; when a record
//! decodes, each page change is `apply`-ed to a scratch page.
//!
//! Properties: decode and apply never panic (the decoder bounds every range it accepts to
//! the page); a decoded transaction end re-encodes to the input; for a decoded change, the
//! page it produced is reproduced by re-recording its operations through `PageMut` (the
//! mtr's own op log: literals, moves, fills) and by a full image, each encoded, decoded and
//! applied again.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tierdb_btree::pagemut::{OpLog, PageMut};
use tierdb_btree::redo::{self, DiffOp, PageChange, Record};
use tierdb_page::{format, PageId, PageType, PAGE_SIZE};

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

/// `change` recorded again as an mtr would record it, on a copy of `base`: its encoding.
fn re_recorded(base: &[u8], change: &PageChange) -> Vec<u8> {
    let mut page = base.to_vec();
    let mut log = OpLog::new();
    let id = change.page();
    match change {
        PageChange::Image(_, img) => {
            PageMut::new(&mut page, Some(&mut log)).rewrite().copy_from_slice(img);
        }
        PageChange::Diff(_, ops) => {
            let mut p = PageMut::new(&mut page, Some(&mut log));
            for op in ops {
                match op {
                    DiffOp::Literal(o, b) => p.write(*o as usize, b),
                    DiffOp::Move { dst, src, len } => {
                        let s = *src as usize;
                        p.copy_within(s..s + *len as usize, *dst as usize)
                    }
                    DiffOp::Fill { dst, len, byte } => {
                        let d = *dst as usize;
                        p.fill(d..d + *len as usize, *byte)
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    redo::begin_mtr(&mut out, 1, 1);
    if log.is_whole() {
        redo::encode_image(&mut out, id, &page);
    } else {
        redo::encode_ops(&mut out, id, &log);
    }
    redo::finish_mtr(&mut out, b"");
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(rec) = redo::decode(data) else {
        return;
    };
    match rec {
        Record::TxnEnd {
            txn,
            committed,
            binlog,
        } => {
            let again = if binlog.is_empty() {
                redo::encode_txn_end(txn, committed)
            } else {
                redo::encode_txn_end_with(txn, committed, &binlog)
            };
            assert_eq!(again, data);
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
                    continue; // the round trips below are 16 KiB work per change
                }
                let mut again = base.clone();
                redo::apply(&mut again, &single_change(&re_recorded(&base, change)));
                assert!(again == after, "re-recorded round trip differs");

                let mut out = Vec::new();
                redo::begin_mtr(&mut out, 1, 1);
                redo::encode_image(&mut out, change.page(), &after);
                redo::finish_mtr(&mut out, b"");
                let mut again = vec![0xEEu8; PAGE_SIZE];
                redo::apply(&mut again, &single_change(&out));
                assert!(again == after, "image round trip differs");
            }
        }
    }
});
