//! How long one text comparison takes, binary vs `utf8mb4_general_ci`, on strings shaped
//! like sysbench's `c` column (ten 11-digit groups joined by '-'), sorted the way
//! `ORDER BY c` sorts them. Prints ns per comparison (sort work included).
//!
//! `cargo run --release -p tierdb-engine --example collation_compare`

use std::time::Instant;
use tierdb_engine::Collation;

fn main() {
    let mut seed = 0x1234_5678u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let strs: Vec<Vec<u8>> = (0..100)
        .map(|_| {
            let groups: Vec<String> = (0..10)
                .map(|_| format!("{:011}", next() % 100_000_000_000))
                .collect();
            groups.join("-").into_bytes()
        })
        .collect();
    for coll in [Collation::Binary, Collation::GeneralCi] {
        let t0 = Instant::now();
        let mut n = 0u64;
        for _ in 0..2000 {
            let mut v: Vec<&Vec<u8>> = strs.iter().collect();
            v.sort_by(|a, b| {
                n += 1;
                coll.cmp(a, b)
            });
            std::hint::black_box(&v);
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        println!("{coll:?}: {n} comparisons, {ns:.1} ns each");
    }
}
