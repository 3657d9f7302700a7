//! GROUP_CONCAT keeps at most 1 MiB (MariaDB's default `group_concat_max_len`) and never cuts
//! inside a multi-byte character.

mod common;
use common::*;
use tierdb_engine::Value;

#[test]
fn a_long_group_is_cut_at_a_character_boundary_below_one_mebibyte() {
    let e = env();
    let mut s = e.session(1);
    exec(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v TEXT)");
    // 3000 rows of 'x' + 200 × 'é' (401 bytes): 1.2 MB joined; the odd 'x' puts the cut
    // off the two-byte grid.
    let v = format!("x{}", "é".repeat(200));
    for chunk in (1..=3000).collect::<Vec<i64>>().chunks(500) {
        let rows: Vec<String> = chunk.iter().map(|i| format!("({i}, '{v}')")).collect();
        exec(&mut s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
    }
    let r = q(&mut s, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t");
    let Value::Bytes(b) = &r[0][0] else {
        panic!("expected text, got {:?}", r[0][0]);
    };
    assert!(b.len() <= 1 << 20, "{} bytes", b.len());
    assert!(b.len() > (1 << 20) - 4, "cut early: {} bytes", b.len());
    let text = std::str::from_utf8(b).expect("valid UTF-8 after the cut");
    assert!(text.starts_with(&format!("{v},{v}")));
}
