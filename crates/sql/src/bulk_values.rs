//! The fast path for big multi-row `INSERT` / `REPLACE ... VALUES` statements of literals:
//! what `mariadb-dump`'s extended inserts and loaders such as sysbench's `prepare` send, where
//! sqlparser's tokenizer and expression parser were a third of the server's time.
//!
//! The statement up to the end of its first row goes through the full parser
//! ([`crate::parse::parse`], so every shim and check applies to it); the other rows are read
//! here, byte by byte, into the expressions sqlparser builds for the same literals (numbers,
//! `-` numbers, single-quoted strings with MariaDB's escapes, `NULL`) and appended to the first
//! row's `VALUES`. Anything else — another literal form, a comment, a `?`, a clause after the
//! rows, a short statement — returns `None` and the whole text takes the full parser; the
//! property test below holds this path to the full parser's result.
//!
//! Must never: accept text the full parser would read differently, or panic on any input.

use crate::parse::Parsed;
use crate::result::SqlError;
use sqlparser::ast::{Expr, Parens, SetExpr, Statement, UnaryOperator, Value};

/// Shorter statements take the full parser (the fast path pays off over many rows).
pub(crate) const MIN_LEN: usize = 2048;

/// `sql` parsed by the fast path, or None when it does not apply.
pub(crate) fn parse(sql: &str) -> Option<Result<Parsed, SqlError>> {
    if sql.len() < MIN_LEN {
        return None;
    }
    parse_any_length(sql)
}

fn parse_any_length(sql: &str) -> Option<Result<Parsed, SqlError>> {
    let b = sql.as_bytes();
    let rows_at = values_keyword_end(b)?;
    let mut i = rows_at;
    // The first row only delimits the template; its values come from the full parser.
    read_row(sql, &mut i)?;
    let template = &sql[..i];
    let mut rows = Vec::new();
    loop {
        skip_space(b, &mut i);
        match b.get(i) {
            None => break,
            Some(b';') => {
                i += 1;
                skip_space(b, &mut i);
                if i < b.len() {
                    return None;
                }
                break;
            }
            Some(b',') => {
                i += 1;
                rows.push(Parens::with_empty_span(read_row(sql, &mut i)?));
            }
            Some(_) => return None,
        }
    }
    if rows.is_empty() {
        return None;
    }
    let mut parsed = match crate::parse::parse_full(template) {
        Ok(p) => p,
        // The full parser reports it, with the whole statement's text.
        Err(_) => return None,
    };
    let Statement::Insert(ins) = &mut parsed.stmt else {
        return None;
    };
    let q = ins.source.as_mut()?;
    let SetExpr::Values(v) = q.body.as_mut() else {
        return None;
    };
    if v.rows.len() != 1 || v.explicit_row {
        return None;
    }
    v.rows.extend(rows);
    Some(Ok(parsed))
}

fn skip_space(b: &[u8], i: &mut usize) {
    while b
        .get(*i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        *i += 1;
    }
}

/// Where the rows start: after the `VALUES` / `VALUE` keyword of a statement that begins with
/// `INSERT` or `REPLACE` and has no quote, comment or `?` before it (backquoted names are
/// skipped whole).
fn values_keyword_end(b: &[u8]) -> Option<usize> {
    let mut i = 0;
    skip_space(b, &mut i);
    let mut first = true;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            let w = &b[s..i];
            if first {
                if !w.eq_ignore_ascii_case(b"INSERT") && !w.eq_ignore_ascii_case(b"REPLACE") {
                    return None;
                }
                first = false;
            } else if w.eq_ignore_ascii_case(b"VALUES") || w.eq_ignore_ascii_case(b"VALUE") {
                return Some(i);
            }
            continue;
        }
        match c {
            b'`' => {
                // `name`, with `` for a backquote inside.
                i += 1;
                loop {
                    match b.get(i) {
                        None => return None,
                        Some(b'`') if b.get(i + 1) == Some(&b'`') => i += 2,
                        Some(b'`') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' | b'.' | b',' | b'(' | b')' => i += 1,
            c if c.is_ascii_digit() => i += 1,
            _ => return None,
        }
        if first {
            return None;
        }
    }
    None
}

/// One `( literal, ... )` row at `*i` (after optional spaces).
fn read_row(sql: &str, i: &mut usize) -> Option<Vec<Expr>> {
    let b = sql.as_bytes();
    skip_space(b, i);
    if b.get(*i) != Some(&b'(') {
        return None;
    }
    *i += 1;
    let mut row = Vec::new();
    loop {
        skip_space(b, i);
        row.push(read_literal(sql, i)?);
        skip_space(b, i);
        match b.get(*i) {
            Some(b',') => *i += 1,
            Some(b')') => {
                *i += 1;
                return Some(row);
            }
            _ => return None,
        }
    }
}

/// True when the byte after a number or word ends it (a separator, not more of a token).
fn ends_token(b: &[u8], i: usize) -> bool {
    matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r' | b',' | b')'))
}

fn read_literal(sql: &str, i: &mut usize) -> Option<Expr> {
    let b = sql.as_bytes();
    match *b.get(*i)? {
        b'\'' => read_string(sql, i).map(|s| Expr::value(Value::SingleQuotedString(s))),
        b'-' => {
            *i += 1;
            let n = read_number(sql, i)?;
            Some(Expr::UnaryOp {
                op: UnaryOperator::Minus,
                expr: Box::new(n),
            })
        }
        c if c.is_ascii_digit() => read_number(sql, i),
        b'N' | b'n' => {
            let end = *i + 4;
            if b.get(*i..end)?.eq_ignore_ascii_case(b"NULL") && ends_token(b, end) {
                *i = end;
                Some(Expr::value(Value::Null))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Digits with an optional fraction (`12`, `12.50`); other number forms take the full parser.
fn read_number(sql: &str, i: &mut usize) -> Option<Expr> {
    let b = sql.as_bytes();
    let s = *i;
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > from
    };
    if !digits(i) {
        return None;
    }
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        if !digits(i) {
            return None;
        }
    }
    if !ends_token(b, *i) {
        return None;
    }
    Some(Expr::value(Value::Number(sql[s..*i].to_string(), false)))
}

/// A single-quoted string at `*i` with MariaDB's escapes as sqlparser's MySQL dialect reads
/// them: `''` is a quote; `\0 \b \f \n \r \t \Z` their characters, `\a` BEL, `\%` and `\_`
/// kept with their backslash, a backslash before anything else drops.
fn read_string(sql: &str, i: &mut usize) -> Option<String> {
    let b = sql.as_bytes();
    *i += 1;
    let mut out = String::new();
    let mut run = *i;
    loop {
        let c = *b.get(*i)?;
        match c {
            b'\'' => {
                out.push_str(&sql[run..*i]);
                if b.get(*i + 1) == Some(&b'\'') {
                    out.push('\'');
                    *i += 2;
                    run = *i;
                    continue;
                }
                // (`'a' 'b'`, one string to the full parser, fails the row reader after it.)
                *i += 1;
                return Some(out);
            }
            b'\\' => {
                out.push_str(&sql[run..*i]);
                let next = sql.get(*i + 1..)?.chars().next()?;
                match next {
                    '0' => out.push('\0'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    'Z' => out.push('\u{1a}'),
                    '%' | '_' => {
                        out.push('\\');
                        out.push(next);
                    }
                    other => out.push(other),
                }
                *i += 1 + next.len_utf8();
                run = *i;
            }
            _ => *i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn full(sql: &str) -> Result<Statement, String> {
        crate::parse::parse_full(sql)
            .map(|p| p.stmt)
            .map_err(|e| e.to_string())
    }

    /// A literal as a dump or a loader writes it.
    fn clean_literal() -> impl Strategy<Value = String> {
        let text = proptest::collection::vec(
            prop_oneof![
                Just("a".to_string()),
                Just("Zé".to_string()),
                Just("日本".to_string()),
                Just("''".to_string()),
                Just(" ".to_string()),
                Just(",".to_string()),
                Just(")".to_string()),
                Just("(".to_string()),
                Just("\"".to_string()),
                Just("-".to_string()),
                Just("/*".to_string()),
                "\\\\[0abfnrtZ%_'\"\\\\qxé]",
                "[0-9]{1,5}",
            ],
            0..8,
        )
        .prop_map(|parts| format!("'{}'", parts.concat()));
        prop_oneof![
            4 => text,
            3 => "-?[0-9]{1,12}",
            2 => "-?[0-9]{1,8}\\.[0-9]{1,6}",
            1 => Just("NULL".to_string()),
            1 => Just("null".to_string()),
        ]
    }

    /// A form the fast path leaves to the full parser.
    fn odd_literal() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("1e5".to_string()),
            Just("0x1F".to_string()),
            Just("X'AB'".to_string()),
            Just("'a' 'b'".to_string()),
            Just("DEFAULT".to_string()),
            Just("TRUE".to_string()),
            Just("NOW()".to_string()),
            Just("1 /* c */".to_string()),
            Just("1 -- c\n".to_string()),
            Just("\"dq\"".to_string()),
            Just("_binary 'x'".to_string()),
            Just(".5".to_string()),
            Just("- 5".to_string()),
            Just("--5".to_string()),
            Just("+5".to_string()),
            Just("1+1".to_string()),
            Just("?".to_string()),
            Just("'unterminated".to_string()),
            Just("NULLx".to_string()),
            Just("12abc".to_string()),
        ]
    }

    fn rows(odd: bool) -> impl Strategy<Value = String> {
        let lit = if odd {
            prop_oneof![20 => clean_literal(), 1 => odd_literal()].boxed()
        } else {
            clean_literal().boxed()
        };
        let row =
            proptest::collection::vec(lit, 1..4).prop_map(|vals| format!("({})", vals.join(",")));
        proptest::collection::vec(row, 1..40).prop_map(|rows| rows.join(","))
    }

    const HEADS: [&str; 4] = [
        "INSERT INTO t VALUES",
        "insert into `db`.`t` (`a`,`b`) values ",
        "REPLACE INTO t(a, b, c) VALUE",
        "INSERT IGNORE INTO `we``ird` VALUES\n",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]
        /// Whatever the fast path returns is what the full parser returns for the same text.
        #[test]
        fn the_fast_path_agrees_with_the_full_parser(
            head in prop_oneof![
                proptest::sample::select(HEADS.to_vec()),
                Just("INSERT INTO t SELECT 1 FROM DUAL WHERE 'x' IN VALUES"),
                Just("UPDATE t SET a = 1 VALUES"),
                Just("INSERT INTO t /* c */ VALUES"),
            ],
            rows in rows(true),
            tail in prop_oneof![
                Just(""), Just(";"), Just(" ;\n"),
                Just(" ON DUPLICATE KEY UPDATE a = 1"), Just("; SELECT 1"), Just(" , "),
            ],
        ) {
            let sql = format!("{head}{rows}{tail}");
            if let Some(fast) = parse_any_length(&sql) {
                let fast = fast.map(|p| p.stmt).map_err(|e| e.to_string());
                prop_assert_eq!(fast, full(&sql), "{}", sql);
            }
        }

        /// Rows of a dump's literals always take it (and agree).
        #[test]
        fn dump_literals_take_the_fast_path(
            head in proptest::sample::select(HEADS.to_vec()),
            rows in rows(false),
            more in "(,\\(1\\)){1,3}",
            tail in prop_oneof![Just(""), Just(";"), Just(" ;\n")],
        ) {
            let sql = format!("{head}{rows}{more}{tail}");
            let fast = parse_any_length(&sql);
            prop_assert!(fast.is_some(), "not taken: {}", sql);
            let fast = fast.unwrap().map(|p| p.stmt).map_err(|e| e.to_string());
            prop_assert_eq!(fast, full(&sql), "{}", sql);
        }
    }

    #[test]
    fn a_dump_style_insert_takes_the_fast_path() {
        let rows: Vec<String> = (0..200)
            .map(|i| format!("({i},-{i},'it''s \\'{i}\\'\\n\\\\',NULL,{i}.25)"))
            .collect();
        let sql = format!("INSERT INTO `t1` VALUES {};", rows.join(","));
        assert!(sql.len() >= MIN_LEN);
        let fast = parse(&sql).expect("fast path applies").expect("parses");
        assert_eq!(fast.stmt, full(&sql).expect("full parse"));
        let Statement::Insert(ins) = &fast.stmt else {
            panic!("not an insert")
        };
        let SetExpr::Values(v) = ins.source.as_ref().expect("source").body.as_ref() else {
            panic!("not values")
        };
        assert_eq!(v.rows.len(), 200);
        assert_eq!(
            v.rows[7].content[2],
            Expr::value(Value::SingleQuotedString("it's '7'\n\\".into()))
        );
    }

    #[test]
    fn short_or_unusual_statements_take_the_full_parser() {
        assert!(parse("INSERT INTO t VALUES (1),(2)").is_none());
        let long = format!("INSERT INTO t VALUES (1){}", ",(1 /* x */)".repeat(300));
        assert!(parse(&long).is_none());
        let tail = format!(
            "INSERT INTO t VALUES (1){} ON DUPLICATE KEY UPDATE a = 2",
            ",(2)".repeat(600)
        );
        assert!(parse(&tail).is_none());
    }
}
