//! `tierdb_engine::keys::decode_key` (memcomparable index keys) on arbitrary bytes.
//!
//! Properties: never panics; whatever decodes re-encodes to exactly the input bytes
//! (`encode_key(decode_key(b)) == b`), and `decode_key` accepts its own output.
//! (The row codec, `rowcodec`, is a private module of tierdb-engine, so it is not covered.)

#![no_main]

use libfuzzer_sys::fuzz_target;
use tierdb_engine::keys::{decode_key, encode_key};

fuzz_target!(|data: &[u8]| {
    if let Some(values) = decode_key(data) {
        let again = encode_key(&values);
        assert_eq!(again, data, "decode/encode round trip changed the key: {values:?}");
        assert!(decode_key(&again).is_some());
    }
});
