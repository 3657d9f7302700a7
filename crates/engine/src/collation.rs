//! String collations: how text values compare, sort and form index keys.
//!
//! Owns: [`Collation`] (binary, or the case- and accent-insensitive `utf8mb4_general_ci` that
//! MariaDB gives every text column by default), the weight of a character, comparison without
//! allocation, and the weight string that index keys store for a case-insensitive column.
//!
//! Must never: allocate on the ASCII comparison path (ORDER BY and DISTINCT over text call it
//! per row pair), panic on bytes that are not UTF-8, or make two values equal whose weight
//! strings differ (keys, uniqueness and comparisons must agree exactly).
//!
//! The case-insensitive rules, an approximation of MariaDB's `utf8mb4_general_ci` written
//! from its observed behaviour: each character weighs as its base letter (canonical
//! decomposition without the marks, so `é` = `e`, `ǘ` = `u`), upper-cased with Unicode's
//! simple mapping (`ß` weighs `S`); `й`/`Й` and Hangul syllables keep their own weight
//! (a syllable's decomposition would start with a jamo many share); characters outside the
//! Basic Multilingual Plane all weigh U+FFFD (they compare equal, as in MariaDB); trailing
//! spaces are ignored (PAD SPACE: `'a' = 'a  '`). A byte that is not part of valid UTF-8
//! weighs 0xD800 + byte (a surrogate code point, so it equals no character). Ligatures and
//! multi-letter expansions do not expand (`æ` ≠ `ae`, like general_ci).

use std::cmp::Ordering;
use unicode_normalization::char::decompose_canonical;

/// How the text values of a column compare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Collation {
    /// Byte by byte (BLOB/BINARY/VARBINARY columns, `*_bin` collations, and text columns of
    /// tables created before collations were recorded).
    #[default]
    Binary,
    /// Case- and accent-insensitive, trailing spaces ignored (`utf8mb4_general_ci`).
    GeneralCi,
}

impl Collation {
    /// Compares two text values under this collation.
    pub fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::GeneralCi => cmp_ci(a, b),
        }
    }

    /// The bytes an index key stores for text value `v`: memcmp of two weight strings orders
    /// like `cmp` of the values (equal exactly when `cmp` says Equal).
    pub fn key_bytes<'a>(self, v: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        match self {
            Collation::Binary => std::borrow::Cow::Borrowed(v),
            Collation::GeneralCi => {
                let mut out = Vec::with_capacity(v.len());
                for w in Weights::new(trim_pad(v)) {
                    push_weight(&mut out, w);
                }
                std::borrow::Cow::Owned(out)
            }
        }
    }

    /// `v` with every character replaced by its weight character (UTF-8, spaces kept), for
    /// matching LIKE patterns under this collation. Binary: unchanged.
    pub fn fold<'a>(self, v: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        match self {
            Collation::Binary => std::borrow::Cow::Borrowed(v),
            Collation::GeneralCi if v.is_ascii() => {
                if v.iter().any(u8::is_ascii_lowercase) {
                    std::borrow::Cow::Owned(v.to_ascii_uppercase())
                } else {
                    std::borrow::Cow::Borrowed(v)
                }
            }
            Collation::GeneralCi => {
                let mut out = Vec::with_capacity(v.len());
                for w in Weights::new(v) {
                    push_weight(&mut out, w);
                }
                std::borrow::Cow::Owned(out)
            }
        }
    }

    /// The name MariaDB shows for this collation of a utf8mb4 column.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "utf8mb4_bin",
            Collation::GeneralCi => "utf8mb4_general_ci",
        }
    }
}

/// `v` without trailing spaces (PAD SPACE collations ignore them).
fn trim_pad(v: &[u8]) -> &[u8] {
    let n = v.iter().rev().take_while(|&&c| c == b' ').count();
    &v[..v.len() - n]
}

/// Case-insensitive comparison, no allocation. Runs of identical bytes are skipped at memcmp
/// speed; at a difference between two ASCII characters other than the space their upper-case
/// forms decide (or the scan goes on when they are the same letter); anything else (a space,
/// a non-ASCII byte, one text ending) goes to the full comparison of weights.
fn cmp_ci(a: &[u8], b: &[u8]) -> Ordering {
    let mut i = 0;
    loop {
        match a[i..].iter().zip(&b[i..]).position(|(x, y)| x != y) {
            Some(k) => {
                let j = i + k;
                let (x, y) = (a[j], b[j]);
                // ASCII bytes are whole characters, so `j` starts one in both texts and
                // everything before it weighs the same.
                if x.is_ascii() && y.is_ascii() && x != b' ' && y != b' ' {
                    let (ux, uy) = (x.to_ascii_uppercase(), y.to_ascii_uppercase());
                    if ux != uy {
                        return ux.cmp(&uy);
                    }
                    i = j + 1;
                    continue;
                }
                return cmp_weights(a, b);
            }
            None => {
                let n = a.len().min(b.len());
                if a[n..].iter().chain(&b[n..]).all(|&c| c == b' ') {
                    return Ordering::Equal;
                }
                return cmp_weights(a, b);
            }
        }
    }
}

/// The full case-insensitive comparison: trailing spaces dropped, then weight by weight.
fn cmp_weights(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (trim_pad(a), trim_pad(b));
    Weights::new(a).cmp(Weights::new(b))
}

/// The weights of the characters of a text, in order.
struct Weights<'a> {
    rest: &'a [u8],
}

impl<'a> Weights<'a> {
    fn new(v: &'a [u8]) -> Self {
        Weights { rest: v }
    }
}

impl Iterator for Weights<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        let (&first, _) = self.rest.split_first()?;
        if first.is_ascii() {
            self.rest = &self.rest[1..];
            return Some(u32::from(first.to_ascii_uppercase()));
        }
        let n = match first {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        let decoded = self
            .rest
            .get(..n)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.chars().next());
        match decoded {
            Some(c) => {
                self.rest = &self.rest[n..];
                Some(weight(c))
            }
            None => {
                self.rest = &self.rest[1..];
                Some(0xD800 + u32::from(first))
            }
        }
    }
}

/// The weight of one character under `utf8mb4_general_ci` (see the module doc).
fn weight(c: char) -> u32 {
    if c.is_ascii() {
        return u32::from(c.to_ascii_uppercase());
    }
    if u32::from(c) > 0xFFFF {
        return 0xFFFD;
    }
    // Kept whole: й/Й (general_ci does not fold them to и), and Hangul syllables, whose
    // canonical decomposition starts with a conjoining jamo shared by hundreds of syllables.
    if matches!(c, 'й' | 'Й' | '\u{AC00}'..='\u{D7A3}') {
        return if matches!(c, 'й' | 'Й') {
            u32::from('Й')
        } else {
            u32::from(c)
        };
    }
    let mut base = c;
    decompose_canonical(c, |d| {
        if base == c {
            base = d;
        }
    });
    let upper = base.to_uppercase().next().unwrap_or(base);
    u32::from(upper).min(0xFFFF)
}

/// Appends weight `w` in an order-preserving variable-length form (UTF-8's layout, which also
/// holds the surrogate range used for invalid bytes).
fn push_weight(out: &mut Vec<u8>, w: u32) {
    if w < 0x80 {
        out.push(w as u8);
    } else if w < 0x800 {
        out.push(0xC0 | (w >> 6) as u8);
        out.push(0x80 | (w & 0x3F) as u8);
    } else {
        out.push(0xE0 | (w >> 12) as u8);
        out.push(0x80 | ((w >> 6) & 0x3F) as u8);
        out.push(0x80 | (w & 0x3F) as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CI: Collation = Collation::GeneralCi;

    #[test]
    fn general_ci_equalities_seen_on_mariadb_10_11() {
        // Each pair compared equal (or not) with `SELECT x = y` on MariaDB 10.11.
        let equal = [
            ("a", "A"),
            ("é", "E"),
            ("ß", "s"),
            ("a", "a   "),
            ("ё", "е"),
            ("ї", "і"),
            ("ў", "у"),
            ("Ő", "O"),
            ("ǘ", "u"),
            ("ệ", "e"),
            ("Ş", "S"),
            ("ÿ", "Y"),
            ("Å", "A"),
            ("ς", "Σ"),
            ("ά", "α"),
            ("ΐ", "ι"),
            ("ϐ", "β"),
            ("µ", "μ"),
            ("ı", "i"),
            ("İ", "i"),
            ("ǅ", "ǆ"),
            ("😀", "😁"),
        ];
        for (x, y) in equal {
            assert_eq!(
                CI.cmp(x.as_bytes(), y.as_bytes()),
                Ordering::Equal,
                "{x} = {y}"
            );
            assert_eq!(CI.key_bytes(x.as_bytes()), CI.key_bytes(y.as_bytes()));
        }
        let different = [
            ("ß", "ss"),
            ("й", "и"),
            ("æ", "ae"),
            ("Ø", "O"),
            ("ĳ", "ij"),
            ("Ð", "D"),
            ("þ", "p"),
            ("Ŀ", "L"),
            ("ẞ", "ß"),
            ("a", "b"),
            ("수", "시"),
            ("가", "각"),
        ];
        for (x, y) in different {
            assert_ne!(
                CI.cmp(x.as_bytes(), y.as_bytes()),
                Ordering::Equal,
                "{x} <> {y}"
            );
            assert_ne!(CI.key_bytes(x.as_bytes()), CI.key_bytes(y.as_bytes()));
        }
    }

    #[test]
    fn underscore_sorts_after_every_letter_of_either_case() {
        let mut v = vec!["_", "b", "Z", "a", "é", "B"];
        v.sort_by(|x, y| CI.cmp(x.as_bytes(), y.as_bytes()));
        assert_eq!(v, ["a", "b", "B", "é", "Z", "_"]);
    }

    fn text() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![
                Just(b"a".to_vec()),
                Just(b"A".to_vec()),
                Just(b" ".to_vec()),
                Just(b"_".to_vec()),
                Just(b"\t".to_vec()),
                Just("é".as_bytes().to_vec()),
                Just("É".as_bytes().to_vec()),
                Just("й".as_bytes().to_vec()),
                Just("😀".as_bytes().to_vec()),
                Just(vec![0xFF]),
                Just(vec![0x00]),
                Just(vec![0xC3]),
                any::<u8>().prop_map(|b| vec![b]),
            ],
            0..6,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #[test]
        fn comparing_agrees_with_comparing_key_bytes(a in text(), b in text()) {
            let by_cmp = CI.cmp(&a, &b);
            let by_key = CI.key_bytes(&a).cmp(&CI.key_bytes(&b));
            prop_assert_eq!(by_cmp, by_key);
            prop_assert_eq!(CI.cmp(&b, &a), by_cmp.reverse());
        }

        #[test]
        fn folding_for_like_equals_folding_the_weights(a in text()) {
            let folded = CI.fold(&a).into_owned();
            let mut w = Vec::new();
            for x in Weights::new(&a) {
                push_weight(&mut w, x);
            }
            prop_assert_eq!(folded, w);
        }
    }
}
