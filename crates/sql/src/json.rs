//! JSON functions over JSON text (MariaDB keeps JSON as text too): JSON_VALID,
//! JSON_EXTRACT, JSON_UNQUOTE, JSON_VALUE, JSON_QUOTE, JSON_OBJECT, JSON_ARRAY, JSON_TYPE,
//! JSON_LENGTH, JSON_KEYS.
//!
//! Documents are parsed into a tree that keeps numbers and strings as written (so 1.50 stays
//! 1.50 and escapes stay escapes) and printed back in MariaDB's form (`, ` and `: ` between
//! items). Paths: `$`, `.name`, `."name"`, `.*`, `[n]`, `[*]`.
//!
//! Owns: JSON parsing, paths and printing. Must never: panic or recurse without bound on any
//! input (nesting deeper than `MAX_DEPTH` is invalid JSON here).

use crate::coerce::to_text;
use crate::result::SqlError;
use tierdb_engine::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonFunc {
    Valid,
    Extract,
    Unquote,
    Value,
    Quote,
    Object,
    Array,
    Type,
    Length,
    Keys,
}

impl JsonFunc {
    pub fn named(name: &str) -> Option<(JsonFunc, usize, usize)> {
        use JsonFunc as J;
        Some(match name {
            "JSON_VALID" => (J::Valid, 1, 1),
            "JSON_EXTRACT" => (J::Extract, 2, usize::MAX),
            "JSON_UNQUOTE" => (J::Unquote, 1, 1),
            "JSON_VALUE" => (J::Value, 2, 2),
            "JSON_QUOTE" => (J::Quote, 1, 1),
            "JSON_OBJECT" => (J::Object, 0, usize::MAX),
            "JSON_ARRAY" => (J::Array, 0, usize::MAX),
            "JSON_TYPE" => (J::Type, 1, 1),
            "JSON_LENGTH" => (J::Length, 1, 2),
            "JSON_KEYS" => (J::Keys, 1, 2),
            _ => return None,
        })
    }

    /// True when the result is JSON text (embedded as it is by JSON_OBJECT / JSON_ARRAY).
    pub fn makes_json(self) -> bool {
        matches!(
            self,
            JsonFunc::Extract
                | JsonFunc::Quote
                | JsonFunc::Object
                | JsonFunc::Array
                | JsonFunc::Keys
        )
    }

    pub fn is_int(self) -> bool {
        matches!(self, JsonFunc::Valid | JsonFunc::Length)
    }
}

/// Nesting deeper than this is not accepted.
const MAX_DEPTH: usize = 512;

/// A parsed JSON value; numbers and strings as written (strings without their quotes, with
/// their escapes).
#[derive(Clone, Debug, PartialEq)]
enum J {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<J> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.s.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Some(J::Obj(items));
                }
                loop {
                    self.ws();
                    let k = self.string()?;
                    self.ws();
                    (self.s.get(self.i) == Some(&b':')).then_some(())?;
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(J::Obj(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Some(J::Arr(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(J::Arr(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(J::Str),
            b't' => self.word(b"true").map(|_| J::Bool(true)),
            b'f' => self.word(b"false").map(|_| J::Bool(false)),
            b'n' => self.word(b"null").map(|_| J::Null),
            _ => self.number(),
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        self.s[self.i..].starts_with(w).then(|| self.i += w.len())
    }

    /// A string's raw content (escapes kept), checked.
    fn string(&mut self) -> Option<String> {
        (self.s.get(self.i) == Some(&b'"')).then_some(())?;
        self.i += 1;
        let start = self.i;
        loop {
            match *self.s.get(self.i)? {
                b'"' => break,
                b'\\' => match *self.s.get(self.i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                    b'u' => {
                        let hex = self.s.get(self.i + 2..self.i + 6)?;
                        hex.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                        self.i += 6;
                    }
                    _ => return None,
                },
                c if c < 0x20 => return None,
                _ => self.i += 1,
            }
        }
        let raw = std::str::from_utf8(&self.s[start..self.i])
            .ok()?
            .to_string();
        self.i += 1;
        Some(raw)
    }

    fn number(&mut self) -> Option<J> {
        let start = self.i;
        if self.s.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let s = p.i;
            while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i > s
        };
        digits(self).then_some(())?;
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            digits(self).then_some(())?;
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            digits(self).then_some(())?;
        }
        Some(J::Num(
            std::str::from_utf8(&self.s[start..self.i])
                .ok()?
                .to_string(),
        ))
    }
}

/// The document `text` parsed (None: not valid JSON).
fn parse(text: &[u8]) -> Option<J> {
    let mut p = Parser { s: text, i: 0 };
    let v = p.value(0)?;
    p.ws();
    (p.i == text.len()).then_some(v)
}

fn print(v: &J, out: &mut String) {
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Num(n) => out.push_str(n),
        J::Str(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        J::Arr(items) => {
            out.push('[');
            for (k, x) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                print(x, out);
            }
            out.push(']');
        }
        J::Obj(items) => {
            out.push('{');
            for (k, (key, x)) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                out.push('"');
                out.push_str(key);
                out.push_str("\": ");
                print(x, out);
            }
            out.push('}');
        }
    }
}

fn printed(v: &J) -> String {
    let mut s = String::new();
    print(v, &mut s);
    s
}

/// A string's escapes decoded.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut it = raw.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = it.by_ref().take(4).collect();
                let mut code = u32::from_str_radix(&hex, 16).unwrap_or(0xFFFD);
                // A surrogate pair.
                if (0xD800..0xDC00).contains(&code) {
                    let mut look = it.clone();
                    if look.next() == Some('\\') && look.next() == Some('u') {
                        let lo: String = look.by_ref().take(4).collect();
                        if let Ok(lo) = u32::from_str_radix(&lo, 16) {
                            if (0xDC00..0xE000).contains(&lo) {
                                code = 0x10000 + ((code - 0xD800) << 10) + (lo - 0xDC00);
                                it = look;
                            }
                        }
                    }
                }
                out.push(char::from_u32(code).unwrap_or('\u{FFFD}'));
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// `s` as the content of a JSON string (quotes, backslashes and control characters
/// escaped).
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[derive(Debug, PartialEq)]
enum Step {
    Key(String),
    AnyKey,
    Index(usize),
    AnyIndex,
}

/// A path (`$.a[1]."b c".*[*]`); None when it is not one tierdb reads.
fn parse_path(p: &str) -> Option<Vec<Step>> {
    let b = p.trim().as_bytes();
    (b.first() == Some(&b'$')).then_some(())?;
    let mut i = 1;
    let mut steps = Vec::new();
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                match b.get(i)? {
                    b'*' => {
                        steps.push(Step::AnyKey);
                        i += 1;
                    }
                    b'"' => {
                        let start = i + 1;
                        let end = start + b[start..].iter().position(|c| *c == b'"')?;
                        steps.push(Step::Key(std::str::from_utf8(&b[start..end]).ok()?.into()));
                        i = end + 1;
                    }
                    _ => {
                        let start = i;
                        while i < b.len() && !matches!(b[i], b'.' | b'[' | b' ') {
                            i += 1;
                        }
                        if i == start {
                            return None;
                        }
                        steps.push(Step::Key(std::str::from_utf8(&b[start..i]).ok()?.into()));
                    }
                }
            }
            b'[' => {
                let end = i + b[i..].iter().position(|c| *c == b']')?;
                let inner = std::str::from_utf8(&b[i + 1..end]).ok()?.trim();
                steps.push(if inner == "*" {
                    Step::AnyIndex
                } else {
                    Step::Index(inner.parse().ok()?)
                });
                i = end + 1;
            }
            b' ' => i += 1,
            _ => return None,
        }
    }
    Some(steps)
}

fn walk<'a>(v: &'a J, steps: &[Step], out: &mut Vec<&'a J>) {
    let Some((first, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match (first, v) {
        (Step::Key(k), J::Obj(items)) => {
            if let Some((_, x)) = items.iter().find(|(key, _)| unescape(key) == *k) {
                walk(x, rest, out);
            }
        }
        (Step::AnyKey, J::Obj(items)) => {
            for (_, x) in items {
                walk(x, rest, out);
            }
        }
        (Step::Index(n), J::Arr(items)) => {
            if let Some(x) = items.get(*n) {
                walk(x, rest, out);
            }
        }
        // A scalar is an array of itself at position 0 (as MariaDB reads `$[0]`).
        (Step::Index(0), x) if !matches!(x, J::Arr(_)) => walk(x, rest, out),
        (Step::AnyIndex, J::Arr(items)) => {
            for x in items {
                walk(x, rest, out);
            }
        }
        _ => {}
    }
}

fn wild(steps: &[Step]) -> bool {
    steps
        .iter()
        .any(|s| matches!(s, Step::AnyKey | Step::AnyIndex))
}

fn text_arg(v: &Value) -> Option<String> {
    to_text(v).map(|t| String::from_utf8_lossy(&t).into_owned())
}

/// A SQL value as a JSON member: text as a string unless `is_json` (a JSON function's
/// result, embedded as it is), numbers as numbers, NULL as null.
fn member(v: &Value, is_json: bool) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Double(d) if d.is_finite() => format!("{d}"),
        Value::Double(_) => "null".into(),
        Value::Bytes(b) => {
            let s = String::from_utf8_lossy(b);
            if is_json {
                if let Some(j) = parse(b) {
                    return printed(&j);
                }
            }
            format!("\"{}\"", escape(&s))
        }
    }
}

/// Evaluates `f` on its argument values; `json_args[i]` says argument i is JSON text made
/// by a JSON function.
pub fn eval(f: JsonFunc, a: &[Value], json_args: &[bool]) -> Result<Value, SqlError> {
    use JsonFunc as F;
    let text = |s: String| Value::Bytes(s.into_bytes());
    let doc = || a.first().and_then(to_text).and_then(|t| parse(&t));
    Ok(match f {
        F::Valid => match a.first().and_then(to_text) {
            None => Value::Null,
            Some(t) => Value::Int(i64::from(parse(&t).is_some())),
        },
        F::Quote => match a.first().and_then(text_arg) {
            Some(s) => text(format!("\"{}\"", escape(&s))),
            None => Value::Null,
        },
        F::Unquote => match a.first().and_then(text_arg) {
            None => Value::Null,
            Some(s) => match parse(s.as_bytes()) {
                Some(J::Str(raw)) => text(unescape(&raw)),
                _ => text(s),
            },
        },
        F::Object => {
            if a.len() % 2 == 1 {
                return Err(SqlError::new(
                    1582,
                    "42000",
                    "Incorrect parameter count in the call to native function 'JSON_OBJECT'",
                ));
            }
            let mut parts = Vec::new();
            for (k, pair) in a.chunks(2).enumerate() {
                let Some(key) = text_arg(&pair[0]) else {
                    return Err(SqlError::new(
                        4055,
                        "22032",
                        "JSON documents may not contain NULL member names",
                    ));
                };
                let is_json = json_args.get(2 * k + 1).copied().unwrap_or(false);
                parts.push(format!(
                    "\"{}\": {}",
                    escape(&key),
                    member(&pair[1], is_json)
                ));
            }
            text(format!("{{{}}}", parts.join(", ")))
        }
        F::Array => {
            let parts: Vec<String> = a
                .iter()
                .enumerate()
                .map(|(i, v)| member(v, json_args.get(i).copied().unwrap_or(false)))
                .collect();
            text(format!("[{}]", parts.join(", ")))
        }
        _ if a.iter().any(Value::is_null) => Value::Null,
        F::Extract => {
            let Some(d) = doc() else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            let mut wrap = a.len() > 2;
            for p in &a[1..] {
                let Some(steps) = text_arg(p).and_then(|p| parse_path(&p)) else {
                    return Ok(Value::Null);
                };
                wrap |= wild(&steps);
                walk(&d, &steps, &mut found);
            }
            match (found.as_slice(), wrap) {
                ([], _) => Value::Null,
                ([one], false) => text(printed(one)),
                (many, _) => text(printed(&J::Arr(
                    many.iter().map(|x| (*x).clone()).collect(),
                ))),
            }
        }
        F::Value => {
            let Some(d) = doc() else {
                return Ok(Value::Null);
            };
            let Some(steps) = a.get(1).and_then(text_arg).and_then(|p| parse_path(&p)) else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            walk(&d, &steps, &mut found);
            match found.first() {
                Some(J::Str(raw)) => text(unescape(raw)),
                Some(J::Num(n)) => text(n.clone()),
                Some(J::Bool(b)) => text(if *b { "1" } else { "0" }.into()),
                _ => Value::Null,
            }
        }
        F::Type => match doc() {
            Some(J::Obj(_)) => text("OBJECT".into()),
            Some(J::Arr(_)) => text("ARRAY".into()),
            Some(J::Str(_)) => text("STRING".into()),
            Some(J::Null) => text("NULL".into()),
            Some(J::Bool(_)) => text("BOOLEAN".into()),
            Some(J::Num(n)) if n.contains(['.', 'e', 'E']) => text("DOUBLE".into()),
            Some(J::Num(_)) => text("INTEGER".into()),
            None => Value::Null,
        },
        F::Length | F::Keys => {
            let Some(d) = doc() else {
                return Ok(Value::Null);
            };
            let mut found = Vec::new();
            match a.get(1) {
                Some(p) => {
                    let Some(steps) = text_arg(p).and_then(|p| parse_path(&p)) else {
                        return Ok(Value::Null);
                    };
                    walk(&d, &steps, &mut found);
                }
                None => found.push(&d),
            }
            let Some(v) = found.first() else {
                return Ok(Value::Null);
            };
            match (f, v) {
                (F::Length, J::Arr(x)) => Value::Int(x.len() as i64),
                (F::Length, J::Obj(x)) => Value::Int(x.len() as i64),
                (F::Length, _) => Value::Int(1),
                (_, J::Obj(x)) => text(printed(&J::Arr(
                    x.iter().map(|(k, _)| J::Str(k.clone())).collect(),
                ))),
                _ => Value::Null,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_print_in_mariadbs_form_keeping_numbers_and_escapes() {
        let d = parse(br#"{"e":1.50,"f":"q\"w", "a" : [1,2,{"b":"x"}]}"#).unwrap();
        assert_eq!(
            printed(&d),
            r#"{"e": 1.50, "f": "q\"w", "a": [1, 2, {"b": "x"}]}"#
        );
        assert!(parse(b"{").is_none());
        assert!(parse(b"[1,]").is_none());
        assert!(parse(b"01x").is_none());
        assert!(parse(&b"[".repeat(10_000)).is_none());
        assert_eq!(unescape(r"\u00e9\n\ud83d\ude00"), "é\n😀");
    }

    #[test]
    fn paths_find_members() {
        let d = parse(br#"{"a": [1, 2, {"b": "x"}], "c d": 3}"#).unwrap();
        let find = |p: &str| {
            let mut out = Vec::new();
            walk(&d, &parse_path(p).unwrap(), &mut out);
            out.iter().map(|x| printed(x)).collect::<Vec<_>>()
        };
        assert_eq!(find("$.a[2].b"), vec!["\"x\""]);
        assert_eq!(find("$.\"c d\""), vec!["3"]);
        assert_eq!(find("$.a[*]").len(), 3);
        assert_eq!(find("$.*").len(), 2);
        assert!(find("$.zz").is_empty());
        assert!(parse_path("x").is_none());
    }
}
