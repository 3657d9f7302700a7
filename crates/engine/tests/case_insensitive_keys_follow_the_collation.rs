//! Keys of case-insensitive (`utf8mb4_general_ci`) columns: a primary key, a UNIQUE index and
//! plain indexes whose values differ only in case or trailing spaces are one key, while a
//! binary column next to them keeps every byte distinct.
//!
//! A random workload (inserts, lookups and deletes through differently-cased keys, updates
//! that change a key's case in place — the primary key's and a UNIQUE index's —, values
//! moving between rows) runs against a model that
//! knows the rule only for ASCII — lower-case, trailing spaces dropped — and after every step
//! and after a reopen (the collation is read back from the catalog) the table, each index's
//! order and range scans on folded bounds agree with the model.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use tierdb_engine::{Collation, Engine, Error, IndexDef, Row, Table, TableDef, Value};

/// `(name VARCHAR ci PRIMARY KEY, code VARCHAR ci NULL UNIQUE, bin VARCHAR binary, n INT,
/// KEY bin (bin), KEY code_n (code, n))`.
fn def() -> TableDef {
    let mut name = bytes_col("name", 8);
    name.collation = Collation::GeneralCi;
    let mut code = bytes_col("code", 8);
    code.collation = Collation::GeneralCi;
    code.nullable = true;
    TableDef {
        name: "t".into(),
        columns: vec![name, code, bytes_col("bin", 8), int_col("n")],
        primary_key: vec![0],
        indexes: vec![
            IndexDef {
                name: "code".into(),
                columns: vec![1],
                unique: true,
            },
            IndexDef {
                name: "bin".into(),
                columns: vec![2],
                unique: false,
            },
            IndexDef {
                name: "code_n".into(),
                columns: vec![1, 3],
                unique: false,
            },
        ],
        foreign_keys: Vec::new(),
        checks: Vec::new(),
    }
}

/// The model's rule: ASCII case and trailing spaces do not count.
fn fold(s: &[u8]) -> Vec<u8> {
    let mut v = s.to_ascii_lowercase();
    while v.last() == Some(&b' ') {
        v.pop();
    }
    v
}

fn text(rng: &mut Rng) -> Vec<u8> {
    let mut v: Vec<u8> = (0..1 + rng.below(3))
        .map(|_| b"aAbBcC"[rng.below(6) as usize])
        .collect();
    let pad = rng.below(3) as usize;
    v.extend(std::iter::repeat_n(b' ', pad));
    v
}

/// Another spelling of the same key: every letter's case flipped at random.
fn respell(rng: &mut Rng, s: &[u8]) -> Vec<u8> {
    s.iter()
        .map(|&c| {
            if rng.below(2) == 0 {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn bytes(v: &[u8]) -> Value {
    Value::Bytes(v.to_vec())
}

#[derive(Clone, Debug, PartialEq)]
struct M {
    name: Vec<u8>,
    code: Option<Vec<u8>>,
    bin: Vec<u8>,
    n: i64,
}

impl M {
    fn row(&self) -> Row {
        vec![
            bytes(&self.name),
            self.code.as_deref().map_or(Value::Null, bytes),
            bytes(&self.bin),
            Value::Int(self.n),
        ]
    }
}

/// Model rows by folded name.
type Model = BTreeMap<Vec<u8>, M>;

fn open(dir: &std::path::Path) -> (Arc<Engine>, Arc<Table>) {
    let e = Engine::open(small_cfg(dir, 4 << 20)).expect("open");
    if !e.database_exists("d") {
        e.create_database("d").expect("create database");
        e.create_table("d", def()).expect("create table");
    }
    let t = e.table("d", "t").expect("table");
    (e, t)
}

fn as_bytes(v: &Value) -> Option<&[u8]> {
    match v {
        Value::Bytes(b) => Some(b),
        _ => None,
    }
}

fn check(e: &Engine, t: &Arc<Table>, m: &Model, rng: &mut Rng) {
    let mut tx = e.begin();
    // The table in key order: the model's order of folded names, each row as last written.
    let rows = scan_all(&mut tx, t);
    let want: Vec<Row> = m.values().map(M::row).collect();
    assert_eq!(rows, want, "table rows");
    // The unique index: NULLs first, then by folded code.
    let by_code: Vec<Row> = index_scan_all(&mut tx, t, 0);
    let mut want = m.values().cloned().collect::<Vec<_>>();
    want.sort_by(|a, b| {
        (a.code.as_deref().map(fold), fold(&a.name))
            .cmp(&(b.code.as_deref().map(fold), fold(&b.name)))
    });
    assert_eq!(
        by_code,
        want.iter().map(M::row).collect::<Vec<_>>(),
        "code index"
    );
    // The binary index: bytes order, case kept apart.
    let by_bin = index_scan_all(&mut tx, t, 1);
    let mut want = m.values().cloned().collect::<Vec<_>>();
    want.sort_by(|a, b| (&a.bin, fold(&a.name)).cmp(&(&b.bin, fold(&b.name))));
    assert_eq!(
        by_bin,
        want.iter().map(M::row).collect::<Vec<_>>(),
        "bin index"
    );
    // Point lookups through another spelling of each key.
    for r in m.values() {
        let probe = respell(rng, &r.name);
        let got = tx.get(t, &[bytes(&probe)]).expect("get");
        assert_eq!(
            got,
            Some(r.row()),
            "get {:?}",
            String::from_utf8_lossy(&probe)
        );
    }
    // A range on the case-insensitive index from an upper-case bound: codes folding to
    // "b" or after.
    let got = collect(
        tx.index_scan(t, 0, Bound::Included(vec![bytes(b"B")]), Bound::Unbounded)
            .expect("range"),
    );
    let n_want = m
        .values()
        .filter(|r| {
            r.code
                .as_deref()
                .is_some_and(|c| fold(c).as_slice() >= b"b".as_slice())
        })
        .count();
    assert_eq!(got.len(), n_want, "range from 'B'");
    // Equality on the first column of a two-column index, spelled differently.
    for r in m.values().filter(|r| r.code.is_some()) {
        let code = r.code.as_deref().unwrap_or_default();
        let probe = respell(rng, code);
        let got = collect(
            tx.index_scan(
                t,
                2,
                Bound::Included(vec![bytes(&probe)]),
                Bound::Included(vec![bytes(&probe)]),
            )
            .expect("prefix"),
        );
        assert_eq!(
            got,
            vec![r.row()],
            "code_n prefix {:?}",
            String::from_utf8_lossy(&probe)
        );
    }
    tx.commit().expect("commit");
}

#[test]
fn keys_differing_only_in_case_or_trailing_spaces_are_one_key_and_binary_columns_are_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (e, t) = open(dir.path());
    let mut rng = Rng(0x5eed_ca5e);
    let mut m = Model::new();
    // Inserts let in, inserts refused, deletes, updates refused.
    let mut stats = [0u32; 4];
    for step in 0..600 {
        let mut tx = e.begin();
        match rng.below(8) {
            // Insert: refused exactly when the folded name or code is taken.
            0..=3 => {
                let r = M {
                    name: text(&mut rng),
                    code: (rng.below(4) != 0).then(|| text(&mut rng)),
                    bin: text(&mut rng),
                    n: step,
                };
                let name_taken = m.contains_key(&fold(&r.name));
                let code_taken = r.code.as_deref().is_some_and(|c| {
                    m.values()
                        .any(|o| o.code.as_deref().map(fold) == Some(fold(c)))
                });
                match tx.insert(&t, r.row()) {
                    Ok(_) => {
                        stats[0] += 1;
                        assert!(!name_taken && !code_taken, "step {step}: {r:?} was let in");
                        m.insert(fold(&r.name), r);
                    }
                    Err(Error::DuplicateKey { index, .. }) => {
                        stats[1] += 1;
                        let want = if name_taken { "PRIMARY" } else { "code" };
                        assert!(name_taken || code_taken, "step {step}: {r:?} refused");
                        assert_eq!(index, want, "step {step}");
                    }
                    Err(other) => panic!("step {step}: {other}"),
                }
            }
            // Update through another spelling: a new case of the name (in place), a new n,
            // sometimes the code of another row respelled (refused) or a fresh one.
            4..=6 if !m.is_empty() => {
                let k = m.keys().nth(rng.below(m.len() as u64) as usize).cloned();
                let Some(k) = k else { continue };
                let cur = m[&k].clone();
                let mut new = cur.clone();
                new.name = respell(&mut rng, &cur.name);
                new.n = step;
                match (rng.below(3), &cur.code) {
                    (0, _) => new.code = Some(text(&mut rng)),
                    // The same code in another spelling: its entry in `code` is the same
                    // key, and must survive the commit's purge of the old entries.
                    (1, Some(c)) => new.code = Some(respell(&mut rng, c)),
                    _ => {}
                }
                let clash = new.code.as_deref().is_some_and(|c| {
                    m.iter()
                        .any(|(ok, o)| *ok != k && o.code.as_deref().map(fold) == Some(fold(c)))
                });
                let probe = respell(&mut rng, &cur.name);
                match tx.update(&t, &[bytes(&probe)], new.row()) {
                    Ok(true) => {
                        assert!(!clash, "step {step}: {new:?} clashes");
                        m.insert(k, new);
                    }
                    Ok(false) => panic!("step {step}: {probe:?} not found"),
                    Err(Error::DuplicateKey { index, .. }) => {
                        stats[3] += 1;
                        assert!(clash, "step {step}: {new:?} refused");
                        assert_eq!(index, "code");
                    }
                    Err(other) => panic!("step {step}: {other}"),
                }
            }
            // Delete through another spelling.
            _ if !m.is_empty() => {
                let k = m.keys().nth(rng.below(m.len() as u64) as usize).cloned();
                let Some(k) = k else { continue };
                let probe = respell(&mut rng, &m[&k].name);
                assert!(
                    tx.delete(&t, &[bytes(&probe)]).expect("delete"),
                    "step {step}"
                );
                stats[2] += 1;
                m.remove(&k);
            }
            _ => {}
        }
        tx.commit().expect("commit");
        if step % 50 == 0 {
            check(&e, &t, &m, &mut rng);
        }
    }
    check(&e, &t, &m, &mut rng);
    assert!(
        m.len() > 3 && stats[1] > 0 && stats[2] > 0 && stats[3] > 0,
        "the workload kept rows and met every outcome: {} rows, {stats:?}",
        m.len()
    );
    eprintln!("{} rows at the end; outcomes {stats:?}", m.len());
    assert!(
        m.values().any(|r| r.bin.iter().any(u8::is_ascii_uppercase))
            && m.values().any(|r| r.bin.iter().any(u8::is_ascii_lowercase)),
        "both cases in the binary column"
    );
    e.shutdown().expect("shutdown");
    drop((e, t));

    // The collations come back from the catalog.
    let (e, t) = open(dir.path());
    assert_eq!(t.def.columns[0].collation, Collation::GeneralCi);
    assert_eq!(t.def.columns[2].collation, Collation::Binary);
    check(&e, &t, &m, &mut rng);
    let mut tx = e.begin();
    let row = m.values().next().map(M::row).expect("a row");
    let mut same = row.clone();
    same[0] = bytes(&as_bytes(&row[0]).unwrap_or_default().to_ascii_uppercase());
    same[1] = Value::Null;
    assert!(
        matches!(tx.insert(&t, same), Err(Error::DuplicateKey { .. })),
        "an upper-case spelling of a stored key is refused after the reopen"
    );
    tx.rollback().expect("rollback");
}
