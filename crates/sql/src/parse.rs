//! SQL text → one sqlparser `Statement` plus the locations of its `?` markers.
//!
//! Owns: the MySQL dialect choice, the recursion limit (sqlparser's default, kept on), the
//! one-statement-per-call rule, the 1064/1065 error texts, and the one syntax sqlparser lacks:
//! a trailing `LOCK IN SHARE MODE` is cut from the tokens and handed on as a `FOR SHARE`
//! locking clause of the query (anywhere else it is refused with 1235). Also
//! `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS` (what mysqldump writes around its INSERTs;
//! InnoDB ignores them) are read as `ALTER TABLE t ALGORITHM = DEFAULT`, a no-op too;
//! MariaDB's `/*M!NNNNNN ... */` comments are executed like MySQL's `/*!NNNNN ... */`; and
//! `SHOW CREATE DATABASE [IF NOT EXISTS] x` is handed on as words of a `SHOW`. Big multi-row
//! `INSERT ... VALUES` of literals take `bulk_values`' fast path.
//! Must never: panic on any input; it only tokenizes and parses.

use crate::result::SqlError;
use sqlparser::ast::{LockClause, LockType, Query, Statement};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Token, Tokenizer};

/// Longest run of operators between separators we accept. Left-deep chains like
/// `1+1+1+...` are built iteratively by the parser (not bounded by its recursion limit) but
/// dropped and walked recursively; this keeps them well inside the stack.
const MAX_OPERATOR_RUN: usize = 2000;

pub struct Parsed {
    pub stmt: Statement,
    pub placeholders: Vec<Location>,
    /// The select lists' items as written (see [`ItemTexts`]).
    pub item_texts: ItemTexts,
    /// `SELECT ... INTO OUTFILE | DUMPFILE ...` (cut from the query, which `stmt` holds).
    pub into_file: Option<crate::load::IntoFile>,
}

/// Every select list of a statement as written, keyed by the location of its `SELECT`
/// keyword: item i's text from its first to its last token (inner whitespace and comments
/// kept). MariaDB names an unaliased expression column by that text.
#[derive(Clone, Debug, Default)]
pub struct ItemTexts(Vec<(Location, Vec<String>)>);

/// The longest column name MariaDB derives from an item's text, in characters.
const MAX_ITEM_NAME_CHARS: usize = 255;

impl ItemTexts {
    /// No texts (statements planned without their text).
    pub const EMPTY: ItemTexts = ItemTexts(Vec::new());

    /// The texts of the select list whose `SELECT` keyword is at `at`, when the statement
    /// had one there with `n` items.
    pub fn of(&self, at: Location, n: usize) -> Option<&[String]> {
        self.0
            .iter()
            .find(|(l, items)| *l == at && items.len() == n)
            .map(|(_, items)| items.as_slice())
    }

    /// Splits every select list in `tokens` (the statement `sql`) into its items' texts, in
    /// one pass (select lists nest: a stack of the open ones).
    fn scan(sql: &str, tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> ItemTexts {
        use sqlparser::keywords::Keyword;
        const MODIFIERS: [&str; 11] = [
            "ALL",
            "DISTINCT",
            "DISTINCTROW",
            "HIGH_PRIORITY",
            "STRAIGHT_JOIN",
            "SQL_SMALL_RESULT",
            "SQL_BIG_RESULT",
            "SQL_BUFFER_RESULT",
            "SQL_CACHE",
            "SQL_NO_CACHE",
            "SQL_CALC_FOUND_ROWS",
        ];
        const ENDS: [Keyword; 14] = [
            Keyword::FROM,
            Keyword::WHERE,
            Keyword::GROUP,
            Keyword::HAVING,
            Keyword::ORDER,
            Keyword::LIMIT,
            Keyword::INTO,
            Keyword::UNION,
            Keyword::EXCEPT,
            Keyword::INTERSECT,
            Keyword::WINDOW,
            Keyword::FOR,
            Keyword::LOCK,
            Keyword::PROCEDURE,
        ];
        /// A select list being read: where its SELECT is, the parenthesis depth it is at,
        /// the items so far, where the current item starts, and the count of out-of-order
        /// tokens when it began (any later one spoils it).
        struct Open {
            at: Location,
            depth: usize,
            items: Vec<Option<String>>,
            first: Option<Location>,
            leading: bool,
            bad_at_start: usize,
        }
        // Tokens from a `/*! ... */` comment do not carry their own place in the text.
        if sql.contains("/*!") {
            return ItemTexts::default();
        }
        let lines = LineStarts::new(sql);
        let mut out = Vec::new();
        let mut open: Vec<Open> = Vec::new();
        let mut depth = 0usize;
        // End of the previous token, and how many tokens came without a place of their own
        // or out of order (`/*! ... */` comments, tokens the shims inserted).
        let mut prev_end = Location { line: 0, column: 0 };
        let mut bad = 0usize;
        let mut after_period = false;
        let close =
            |o: Open, upto: Location, bad: usize, out: &mut Vec<(Location, Vec<String>)>| {
                let mut o = o;
                o.items.push(o.first.and_then(|a| lines.text(a, upto)));
                let items: Option<Vec<String>> = o.items.into_iter().collect();
                if let (Some(items), true) = (items, bad == o.bad_at_start) {
                    if !items.iter().any(|t| t.contains("/*!")) {
                        out.push((o.at, items));
                    }
                }
            };
        for t in tokens {
            if matches!(t.token, Token::Whitespace(_)) {
                continue;
            }
            if t.span.start.line == 0 || t.span.start < prev_end {
                bad += 1;
            }
            let period = matches!(t.token, Token::Period);
            let word = match &t.token {
                Token::Word(w) if w.quote_style.is_none() && !after_period => Some(w),
                _ => None,
            };
            after_period = period;
            match &t.token {
                Token::SemiColon | Token::EOF => {
                    while let Some(o) = open.pop() {
                        close(o, prev_end, bad, &mut out);
                    }
                    depth = 0;
                    continue;
                }
                Token::RParen | Token::RBracket => {
                    // The lists inside this parenthesis end before it.
                    while open.last().is_some_and(|o| o.depth >= depth && depth > 0) {
                        if let Some(o) = open.pop() {
                            close(o, prev_end, bad, &mut out);
                        }
                    }
                    depth = depth.saturating_sub(1);
                }
                Token::Comma => {
                    if let Some(o) = open.last_mut().filter(|o| o.depth == depth) {
                        let item = o.first.take().and_then(|a| lines.text(a, prev_end));
                        o.items.push(item);
                        o.leading = false;
                        prev_end = t.span.end;
                        continue;
                    }
                }
                _ => {}
            }
            if let Some(w) = word {
                let top_here = open.last().is_some_and(|o| o.depth == depth);
                if top_here && ENDS.contains(&w.keyword) {
                    if let Some(o) = open.pop() {
                        close(o, prev_end, bad, &mut out);
                    }
                } else if top_here
                    && open.last().is_some_and(|o| o.leading && o.first.is_none())
                    && MODIFIERS.iter().any(|m| w.value.eq_ignore_ascii_case(m))
                {
                    prev_end = t.span.end;
                    continue;
                }
            }
            // The token belongs to the innermost open list's current item.
            if let Some(o) = open.last_mut() {
                o.leading = false;
                o.first.get_or_insert(t.span.start);
            }
            if matches!(t.token, Token::LParen | Token::LBracket) {
                depth += 1;
            }
            if word.is_some_and(|w| w.keyword == Keyword::SELECT) {
                open.push(Open {
                    at: t.span.start,
                    depth,
                    items: Vec::new(),
                    first: None,
                    leading: true,
                    bad_at_start: bad,
                });
            }
            prev_end = t.span.end;
        }
        while let Some(o) = open.pop() {
            close(o, prev_end, bad, &mut out);
        }
        ItemTexts(out)
    }
}

/// What a statement the parser refuses is, when it is MariaDB syntax tierdb does not have:
/// stored programs (`CREATE [OR REPLACE] [DEFINER = u] TRIGGER | PROCEDURE | FUNCTION |
/// EVENT`), FULLTEXT / SPATIAL indexes, partitioned tables, HANDLER.
fn unsupported_statement(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<&'static str> {
    let first = tokens
        .iter()
        .find(|t| !matches!(t.token, Token::Whitespace(_)))?;
    let Token::Word(w) = &first.token else {
        return None;
    };
    if !["CREATE", "ALTER", "HANDLER", "CHECKSUM"]
        .iter()
        .any(|k| w.value.eq_ignore_ascii_case(k))
    {
        return None;
    }
    let words: Vec<String> = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            other => other.to_string(),
        })
        .collect();
    match words.first().map(String::as_str) {
        Some("HANDLER") => return Some("HANDLER"),
        // MariaDB's value comes from its own row format: one of ours could not be compared.
        Some("CHECKSUM") => return Some("CHECKSUM TABLE"),
        Some("CREATE") => {
            for w in words.iter().skip(1).take(12) {
                match w.as_str() {
                    "TRIGGER" => return Some("CREATE TRIGGER (triggers)"),
                    "PROCEDURE" => return Some("CREATE PROCEDURE (stored procedures)"),
                    "FUNCTION" => return Some("CREATE FUNCTION (stored functions)"),
                    "EVENT" => return Some("CREATE EVENT (scheduled events)"),
                    "FULLTEXT" | "SPATIAL" => return Some("FULLTEXT and SPATIAL indexes"),
                    "TABLE" | "VIEW" | "DATABASE" | "SCHEMA" | "INDEX" | "UNIQUE" | "USER"
                    | "ROLE" | "SEQUENCE" => break,
                    _ => {}
                }
            }
        }
        _ => {}
    }
    let partitioned = matches!(words.first().map(String::as_str), Some("CREATE" | "ALTER"))
        && words
            .windows(2)
            .any(|w| w[0] == "PARTITION" && w[1] == "BY");
    partitioned.then_some("partitioned tables (PARTITION BY)")
}

/// A text's lines and characters, to turn a token's (line, column) into a byte offset.
struct LineStarts<'a> {
    sql: &'a str,
    /// Per line, the index of its first character.
    starts: Vec<usize>,
    /// The byte offset of every character, then the text's length (empty for ASCII text,
    /// where a character's index is its byte offset).
    chars: Vec<usize>,
}

impl<'a> LineStarts<'a> {
    fn new(sql: &'a str) -> Self {
        let chars: Vec<usize> = if sql.is_ascii() {
            Vec::new()
        } else {
            sql.char_indices()
                .map(|(i, _)| i)
                .chain(std::iter::once(sql.len()))
                .collect()
        };
        let mut starts = vec![0];
        starts.extend(
            sql.chars()
                .enumerate()
                .filter(|(_, c)| *c == '\n')
                .map(|(i, _)| i + 1),
        );
        LineStarts { sql, starts, chars }
    }

    /// The byte offset of 1-based (line, column), columns counted in characters.
    fn offset(&self, at: Location) -> Option<usize> {
        let start = *self
            .starts
            .get(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
        let index = start + usize::try_from(at.column).ok()?.checked_sub(1)?;
        if self.chars.is_empty() {
            return Some(index).filter(|&o| o <= self.sql.len());
        }
        self.chars.get(index).copied()
    }

    /// The text from `from` up to (not including) `to`, cut to MariaDB's name length.
    fn text(&self, from: Location, to: Location) -> Option<String> {
        let (a, b) = (self.offset(from)?, self.offset(to)?);
        let t = self.sql.get(a..b)?;
        Some(t.chars().take(MAX_ITEM_NAME_CHARS).collect())
    }
}

fn syntax(msg: impl std::fmt::Display) -> SqlError {
    SqlError::syntax(format!(
        "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use: {msg}"
    ))
}

/// The query a trailing `LOCK IN SHARE MODE` belongs to (also under EXPLAIN).
fn locked_query(stmt: &mut Statement) -> Option<&mut Query> {
    match stmt {
        Statement::Query(q) => Some(q),
        Statement::Explain { statement, .. } => locked_query(statement),
        _ => None,
    }
}

const SHARE_MODE: [&str; 4] = ["LOCK", "IN", "SHARE", "MODE"];

/// Positions in `tokens` of the first `LOCK IN SHARE MODE` run of unquoted words (consecutive
/// but for whitespace), if any.
fn share_mode_run(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<[usize; 4]> {
    let mut run = [0usize; 4];
    let mut n = 0usize;
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Whitespace(_) => {}
            Token::Word(w) if w.quote_style.is_none() => {
                // LOCK is none of the later words, so a mismatch can only restart at LOCK.
                if !w.value.eq_ignore_ascii_case(SHARE_MODE[n]) {
                    n = 0;
                    if !w.value.eq_ignore_ascii_case(SHARE_MODE[0]) {
                        continue;
                    }
                }
                run[n] = i;
                n += 1;
                if n == SHARE_MODE.len() {
                    return Some(run);
                }
            }
            _ => n = 0,
        }
    }
    None
}

/// The MariaDB version tierdb speaks for (10.11), as in `/*M!NNNNNN ... */` comments.
pub(crate) const MARIADB_VERSION_ID: u64 = 101_100;

/// Where the line comment starting at `b[i]` (`# ...` or `-- ...`) ends: the index of its
/// newline (or the end); None when none starts there.
pub(crate) fn line_comment_end(b: &[u8], i: usize) -> Option<usize> {
    let starts = b.get(i) == Some(&b'#')
        || (b.get(i) == Some(&b'-')
            && b.get(i + 1) == Some(&b'-')
            && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()));
    starts.then(|| {
        b[i..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(b.len(), |p| i + p)
    })
}

/// MariaDB's executable comments `/*M!NNNNNN text */` (and `/*M! text */`) run `text` when
/// NNNNNN is not above our version, as MariaDB does (sqlparser handles MySQL's
/// `/*!NNNNN ... */` itself).
fn mariadb_comments(
    dialect: &MySqlDialect,
    tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>,
) -> Result<(), SqlError> {
    use sqlparser::tokenizer::Whitespace;
    let mut i = 0;
    while i < tokens.len() {
        let body = match &tokens[i].token {
            Token::Whitespace(Whitespace::MultiLineComment(c)) => {
                c.strip_prefix("M!").and_then(|r| {
                    let digits =
                        r.len() - r.trim_start_matches(|ch: char| ch.is_ascii_digit()).len();
                    // Only for server versions up to ours (10.11.x): e.g. mariadb-dump's
                    // `/*M!999999\- enable the sandbox mode */` stays a comment.
                    let applies = digits == 0
                        || r[..digits]
                            .parse::<u64>()
                            .is_ok_and(|v| v <= MARIADB_VERSION_ID);
                    applies.then(|| r[digits..].to_string())
                })
            }
            _ => None,
        };
        let Some(body) = body else {
            i += 1;
            continue;
        };
        let span = tokens[i].span;
        let inner: Vec<_> = Tokenizer::new(dialect, &body)
            .tokenize_with_location()
            .map_err(syntax)?
            .into_iter()
            .filter(|t| t.token != Token::EOF)
            .map(|t| sqlparser::tokenizer::TokenWithSpan {
                token: t.token,
                span,
            })
            .collect();
        let n = inner.len();
        tokens.splice(i..=i, inner);
        i += n;
    }
    Ok(())
}

/// `START TRANSACTION ... WITH CONSISTENT SNAPSHOT [, READ WRITE | READ ONLY]`, which
/// sqlparser does not parse: cuts the three words (and a comma after them) and returns true;
/// the caller marks the parsed statement (`SNAPSHOT_MARK`).
fn consistent_snapshot(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) -> bool {
    let words: Vec<(usize, String)> = tokens
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => Some((i, w.value.to_ascii_uppercase())),
            _ => None,
        })
        .collect();
    if words.first().is_none_or(|(_, w)| w != "START") {
        return false;
    }
    let Some(at) = words
        .windows(3)
        .position(|w| w[0].1 == "WITH" && w[1].1 == "CONSISTENT" && w[2].1 == "SNAPSHOT")
    else {
        return false;
    };
    let (from, mut to) = (words[at].0, words[at + 2].0);
    if let Some(next) =
        (to + 1..tokens.len()).find(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
    {
        if tokens[next].token == Token::Comma {
            to = next;
        }
    }
    tokens.drain(from..=to);
    true
}

/// `SET {GLOBAL | SESSION | LOCAL} TRANSACTION ...`: the scope word, which sqlparser reads
/// and drops (its `session` flag is for PostgreSQL's `SESSION CHARACTERISTICS`).
fn set_transaction_scope(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<String> {
    let mut words = tokens.iter().filter_map(|t| match &t.token {
        Token::Whitespace(_) => None,
        Token::Word(w) if w.quote_style.is_none() => Some(Some(w.value.to_ascii_uppercase())),
        _ => Some(None),
    });
    match (words.next()??, words.next()??, words.next()??) {
        (set, scope, tx)
            if set == "SET"
                && tx == "TRANSACTION"
                && ["GLOBAL", "SESSION", "LOCAL"].contains(&scope.as_str()) =>
        {
            Some(scope)
        }
        _ => None,
    }
}

/// How a parsed `SET GLOBAL TRANSACTION` keeps its scope: the snapshot value, which MySQL's
/// grammar never sets (`SESSION` / `LOCAL` set the `session` flag).
pub const GLOBAL_MARK: sqlparser::ast::Value = sqlparser::ast::Value::Placeholder(String::new());

/// How a parsed `START TRANSACTION` says it came `WITH CONSISTENT SNAPSHOT`: an isolation
/// mode MySQL's grammar cannot produce.
pub const SNAPSHOT_MARK: sqlparser::ast::TransactionMode =
    sqlparser::ast::TransactionMode::IsolationLevel(
        sqlparser::ast::TransactionIsolationLevel::Snapshot,
    );

/// Positions of the tokens that are neither whitespace, `;` nor the end.
fn meaningful(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Vec<usize> {
    tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            !matches!(
                t.token,
                Token::Whitespace(_) | Token::SemiColon | Token::EOF
            )
        })
        .map(|(i, _)| i)
        .collect()
}

/// `SHOW {FUNCTION | PROCEDURE} STATUS`, `SHOW TRIGGERS`, `SHOW EVENTS`, `SHOW {SLAVE |
/// REPLICA} STATUS`, `SHOW ALL SLAVES STATUS`, with any `[FROM db] [LIKE ... | WHERE ...]`
/// (sqlparser reads few of them): tierdb has none of these objects, so the words that name
/// the statement and its database are handed on as a `SHOW` and the filter, which could
/// only remove rows, is dropped.
fn show_of_nothing(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Statement> {
    let words: Vec<&Token> = significant(tokens);
    if !is_keyword(words.first().copied(), "SHOW") {
        return None;
    }
    let word = |i: usize| match words.get(i) {
        Some(Token::Word(w)) => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let head = match (word(1)?.as_str(), word(2).as_deref(), word(3).as_deref()) {
        ("FUNCTION" | "PROCEDURE", Some("STATUS"), _) => 3,
        ("SLAVE" | "REPLICA", Some("STATUS"), _) => 3,
        ("ALL", Some("SLAVES" | "REPLICAS"), Some("STATUS")) => 4,
        ("TRIGGERS" | "EVENTS", _, _) => 2,
        _ => return None,
    };
    let mut n = head;
    if matches!(word(head).as_deref(), Some("FROM" | "IN")) {
        word(head + 1)?;
        n = head + 2;
    }
    let variable = words[1..n]
        .iter()
        .map(|t| match t {
            Token::Word(w) => sqlparser::ast::Ident::new(w.value.clone()),
            other => sqlparser::ast::Ident::new(other.to_string()),
        })
        .collect();
    Some(Statement::ShowVariable { variable })
}

/// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] name`, which sqlparser does not parse:
/// handed on as the words `CREATE DATABASE [IF NOT EXISTS] name` of a `SHOW`.
fn show_create_database(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Statement> {
    let words: Vec<&sqlparser::tokenizer::Word> = tokens
        .iter()
        .filter(|t| {
            !matches!(
                t.token,
                Token::Whitespace(_) | Token::SemiColon | Token::EOF
            )
        })
        .map(|t| match &t.token {
            Token::Word(w) => Some(w),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let kw = |i: usize, k: &str| {
        words
            .get(i)
            .is_some_and(|w| w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
    };
    if !(kw(0, "SHOW") && kw(1, "CREATE") && (kw(2, "DATABASE") || kw(2, "SCHEMA"))) {
        return None;
    }
    let if_not_exists = kw(3, "IF") && kw(4, "NOT") && kw(5, "EXISTS");
    let name_at = if if_not_exists { 6 } else { 3 };
    if words.len() != name_at + 1 {
        return None;
    }
    let mut variable: Vec<sqlparser::ast::Ident> = vec!["CREATE".into(), "DATABASE".into()];
    if if_not_exists {
        variable.extend(["IF".into(), "NOT".into(), "EXISTS".into()]);
    }
    variable.push(sqlparser::ast::Ident::new(words[name_at].value.clone()));
    Some(Statement::ShowVariable { variable })
}

/// The tokens of a statement but spaces, comments and the final `;`.
fn significant(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Vec<&Token> {
    tokens
        .iter()
        .map(|t| &t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::SemiColon | Token::EOF))
        .collect()
}

/// `t` is the unquoted word `k` (any case).
fn is_keyword(t: Option<&Token>, k: &str) -> bool {
    matches!(t, Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
}

/// `SHOW {WARNINGS | ERRORS} LIMIT [offset,] count` (or `LIMIT count OFFSET offset`), whose
/// numbers sqlparser drops: handed on as the words `WARNINGS LIMIT offset count`.
fn show_warnings_limit(tokens: &[sqlparser::tokenizer::TokenWithSpan]) -> Option<Statement> {
    let toks = significant(tokens);
    let kw = |i: usize, k: &str| is_keyword(toks.get(i).copied(), k);
    if !(kw(0, "SHOW") && (kw(1, "WARNINGS") || kw(1, "ERRORS")) && kw(2, "LIMIT")) {
        return None;
    }
    let num = |i: usize| match toks.get(i) {
        Some(Token::Number(n, _)) => Some(n.clone()),
        _ => None,
    };
    let (offset, count) = match toks.len() {
        4 => ("0".to_string(), num(3)?),
        6 if matches!(toks[4], Token::Comma) => (num(3)?, num(5)?),
        6 if kw(4, "OFFSET") => (num(5)?, num(3)?),
        _ => return None,
    };
    let Token::Word(what) = toks[1] else {
        return None;
    };
    let variable = vec![
        sqlparser::ast::Ident::new(what.value.to_ascii_uppercase()),
        "LIMIT".into(),
        sqlparser::ast::Ident::new(offset),
        sqlparser::ast::Ident::new(count),
    ];
    Some(Statement::ShowVariable { variable })
}

/// MariaDB binds `LIKE` and `REGEXP` tighter than comparisons and `||` (`a REGEXP b = 1` is
/// `(a REGEXP b) = 1`, `1 = a LIKE b` is `1 = (a LIKE b)`); sqlparser binds them looser.
/// Rotates every such unparenthesized pair back (explicit parentheses are kept, as
/// `Expr::Nested`).
fn bind_predicates_tighter(stmt: &mut Statement) {
    use sqlparser::ast::{BinaryOperator as B, Expr as A};
    fn loose(op: &B) -> bool {
        matches!(
            op,
            B::Eq | B::NotEq | B::Lt | B::LtEq | B::Gt | B::GtEq | B::Spaceship | B::StringConcat
        )
    }
    /// How to build a predicate again from its two operands.
    type Rebuild = Box<dyn FnOnce(Box<A>, Box<A>) -> A>;
    fn fix(e: A) -> A {
        // The operands, the rebuild, and whether the pattern side may be rotated (not past
        // an ESCAPE clause).
        let (expr, pattern, rebuild, pattern_side): (Box<A>, Box<A>, Rebuild, bool) = match e {
            A::RLike {
                negated,
                expr,
                pattern,
                regexp,
            } => (
                expr,
                pattern,
                Box::new(move |x, p| A::RLike {
                    negated,
                    expr: x,
                    pattern: p,
                    regexp,
                }),
                true,
            ),
            A::Like {
                negated,
                any,
                expr,
                pattern,
                escape_char,
            } => {
                let plain = escape_char.is_none();
                (
                    expr,
                    pattern,
                    Box::new(move |x, p| A::Like {
                        negated,
                        any,
                        expr: x,
                        pattern: p,
                        escape_char,
                    }),
                    plain,
                )
            }
            other => return other,
        };
        match (*expr, *pattern) {
            // `a REGEXP (p op r)` → `(a REGEXP p) op r`.
            (x, A::BinaryOp { left, op, right }) if pattern_side && loose(&op) => A::BinaryOp {
                left: Box::new(fix(rebuild(Box::new(x), left))),
                op,
                right,
            },
            // `(l op m) REGEXP p` → `l op (m REGEXP p)`.
            (A::BinaryOp { left, op, right }, p) if loose(&op) => A::BinaryOp {
                left,
                op,
                right: Box::new(fix(rebuild(right, Box::new(p)))),
            },
            // `a REGEXP (p IN (...))` / `(p BETWEEN ...)`: the REGEXP goes inside (not for
            // NOT IN / NOT BETWEEN, which MariaDB reads the other way).
            (
                x,
                A::In {
                    expr: p,
                    target,
                    negated: n @ false,
                    global,
                },
            ) if pattern_side => A::In {
                expr: Box::new(fix(rebuild(Box::new(x), p))),
                target,
                negated: n,
                global,
            },
            (
                x,
                A::Between {
                    expr: p,
                    negated: n @ false,
                    low,
                    high,
                },
            ) if pattern_side => A::Between {
                expr: Box::new(fix(rebuild(Box::new(x), p))),
                negated: n,
                low,
                high,
            },
            (x, p) => rebuild(Box::new(x), Box::new(p)),
        }
    }
    struct Fix;
    impl sqlparser::ast::VisitorMut for Fix {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut A) -> std::ops::ControlFlow<()> {
            if matches!(e, A::RLike { .. } | A::Like { .. }) {
                let taken = std::mem::replace(e, A::Value(sqlparser::ast::Value::Null.into()));
                *e = fix(taken);
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let _ = sqlparser::ast::VisitMut::visit(stmt, &mut Fix);
}

/// `CURRENT_USER` without parentheses is the function (a keyword in MariaDB; sqlparser reads
/// a name). A backquoted `current_user` stays a name.
fn bare_current_user(stmt: &mut Statement) {
    use sqlparser::ast::Expr as A;
    struct Fix;
    impl sqlparser::ast::VisitorMut for Fix {
        type Break = ();
        fn post_visit_expr(&mut self, e: &mut A) -> std::ops::ControlFlow<()> {
            if let A::Identifier(id) = e {
                if id.quote_style.is_none() && id.value.eq_ignore_ascii_case("CURRENT_USER") {
                    *e = A::Function(sqlparser::ast::Function {
                        name: sqlparser::ast::ObjectName::from(vec![id.clone()]),
                        uses_odbc_syntax: false,
                        parameters: sqlparser::ast::FunctionArguments::None,
                        args: sqlparser::ast::FunctionArguments::List(
                            sqlparser::ast::FunctionArgumentList {
                                duplicate_treatment: None,
                                args: Vec::new(),
                                clauses: Vec::new(),
                            },
                        ),
                        filter: None,
                        null_treatment: None,
                        over: None,
                        within_group: Vec::new(),
                    });
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let _ = sqlparser::ast::VisitMut::visit(stmt, &mut Fix);
}

/// Two MySQL forms sqlparser does not read: `x REGEXP NULL` / `RLIKE NULL` (NULL put in
/// parentheses) and `TRIM(LEADING | TRAILING | BOTH FROM s)` without a string to remove
/// (a space, which it means).
fn null_pattern_and_bare_trim(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) {
    let idx = meaningful(tokens);
    // Insert from the end so earlier positions stay valid.
    for k in (0..idx.len().saturating_sub(1)).rev() {
        let (a, b) = (idx[k], idx[k + 1]);
        let span = tokens[b].span;
        let at = |token: Token| sqlparser::tokenizer::TokenWithSpan { token, span };
        if (is_word(&tokens[a].token, "REGEXP") || is_word(&tokens[a].token, "RLIKE"))
            && is_word(&tokens[b].token, "NULL")
        {
            tokens.insert(b + 1, at(Token::RParen));
            tokens.insert(b, at(Token::LParen));
        } else if k >= 2
            && is_word(&tokens[idx[k - 2]].token, "TRIM")
            && matches!(tokens[idx[k - 1]].token, Token::LParen)
            && ["LEADING", "TRAILING", "BOTH"]
                .iter()
                .any(|w| is_word(&tokens[a].token, w))
            && is_word(&tokens[b].token, "FROM")
        {
            tokens.insert(b, at(Token::SingleQuotedString(" ".into())));
            tokens.insert(
                b,
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            );
        }
    }
}

/// Two spellings MariaDB writes into the views' queries it stores (SHOW CREATE VIEW,
/// mariadb-dump) that sqlparser does not read: `a MOD b` (the `%` operator) and
/// `CAST(x AS CHAR CHARSET utf8mb3)` / `CHARACTER SET ...` in a CAST (text is utf8mb4 here;
/// the character set is dropped).
fn mariadb_view_spellings(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) {
    let next_meaningful = |tokens: &[sqlparser::tokenizer::TokenWithSpan], i: usize| {
        tokens[i + 1..]
            .iter()
            .position(|t| !matches!(t.token, Token::Whitespace(_)))
            .map(|k| i + 1 + k)
    };
    let prev_meaningful = |tokens: &[sqlparser::tokenizer::TokenWithSpan], i: usize| {
        tokens[..i]
            .iter()
            .rposition(|t| !matches!(t.token, Token::Whitespace(_)))
    };
    // `MOD` right after an operand (a number, a string, `)`, a quoted name or a name that is
    // no keyword) is the operator; elsewhere it is the MOD() function or a name (`t.mod`).
    for i in 0..tokens.len() {
        if !is_word(&tokens[i].token, "MOD") {
            continue;
        }
        let after_operand = prev_meaningful(tokens, i).is_some_and(|p| match &tokens[p].token {
            Token::Number(..) | Token::SingleQuotedString(_) | Token::RParen => true,
            Token::Word(w) => {
                w.quote_style.is_some() || w.keyword == sqlparser::keywords::Keyword::NoKeyword
            }
            _ => false,
        });
        let qualified =
            next_meaningful(tokens, i).is_some_and(|j| tokens[j].token == Token::Period);
        if after_operand && !qualified {
            tokens[i].token = Token::Mod;
        }
    }
    // `!(...)` and `!exists(...)` (how MariaDB writes NOT around a parenthesized operand):
    // `(NOT (...))`.
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i].token != Token::ExclamationMark {
            i += 1;
            continue;
        }
        let mut open = next_meaningful(tokens, i);
        if let Some(j) = open.filter(|&j| is_word(&tokens[j].token, "EXISTS")) {
            open = next_meaningful(tokens, j);
        }
        let Some(open) = open.filter(|&j| tokens[j].token == Token::LParen) else {
            i += 1;
            continue;
        };
        let mut depth = 0i32;
        let mut close = None;
        for (k, t) in tokens.iter().enumerate().skip(open) {
            match t.token {
                Token::LParen => depth += 1,
                Token::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let span = tokens[i].span;
        let at = |token: Token| sqlparser::tokenizer::TokenWithSpan { token, span };
        tokens.insert(close + 1, at(Token::RParen));
        tokens.splice(
            i..=i,
            [
                at(Token::LParen),
                at(Token::make_keyword("NOT")),
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            ],
        );
        i += 3;
    }
    // CHARSET x / CHARACTER SET x directly inside CAST( ... ).
    let mut drop = Vec::new();
    let mut casts: Vec<i32> = Vec::new();
    let mut depth = 0i32;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].token {
            Token::LParen => {
                depth += 1;
            }
            Token::RParen => {
                if casts.last() == Some(&depth) {
                    casts.pop();
                }
                depth -= 1;
            }
            t if is_word(t, "CAST") => {
                if let Some(j) =
                    next_meaningful(tokens, i).filter(|&j| tokens[j].token == Token::LParen)
                {
                    casts.push(depth + 1);
                    depth += 1;
                    i = j + 1;
                    continue;
                }
            }
            t if casts.last() == Some(&depth)
                && (is_word(t, "CHARSET") || is_word(t, "CHARACTER")) =>
            {
                let mut k = i;
                if is_word(t, "CHARACTER") {
                    match next_meaningful(tokens, k) {
                        Some(j) if is_word(&tokens[j].token, "SET") => k = j,
                        _ => {
                            i += 1;
                            continue;
                        }
                    }
                }
                if let Some(name) = next_meaningful(tokens, k) {
                    if let Token::Word(w) = &tokens[name].token {
                        // CHAR[(n)] CHARSET binary is BINARY[(n)]; other sets are dropped.
                        if w.value.eq_ignore_ascii_case("binary") {
                            let mut c = prev_meaningful(tokens, i);
                            if let Some(r) = c.filter(|&r| tokens[r].token == Token::RParen) {
                                c = tokens[..r]
                                    .iter()
                                    .rposition(|t| t.token == Token::LParen)
                                    .and_then(|l| prev_meaningful(tokens, l));
                            }
                            if let Some(c) = c.filter(|&c| is_word(&tokens[c].token, "CHAR")) {
                                tokens[c].token = Token::make_keyword("BINARY");
                            }
                        }
                        drop.extend(i..=name);
                        i = name + 1;
                        continue;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    for i in drop.into_iter().rev() {
        tokens.remove(i);
    }
}

/// `SHOW TABLE STATUS ... LIKE 'pattern'`: sqlparser reads the statement as words and
/// drops the quoted pattern, so it is handed on as a (backquoted) word.
fn show_table_status_pattern(tokens: &mut [sqlparser::tokenizer::TokenWithSpan]) {
    let idx = meaningful(tokens);
    let kw = |i: usize, k: &str| {
        idx.get(i).is_some_and(|&j| {
            matches!(&tokens[j].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(k))
        })
    };
    if !(kw(0, "SHOW") && kw(1, "TABLE") && kw(2, "STATUS")) {
        return;
    }
    let Some(like) = (3..idx.len()).find(|&i| kw(i, "LIKE")) else {
        return;
    };
    if let Some(&j) = idx.get(like + 1) {
        if let Token::SingleQuotedString(p) | Token::DoubleQuotedString(p) = &tokens[j].token {
            tokens[j].token = Token::Word(sqlparser::tokenizer::Word {
                value: p.clone(),
                quote_style: Some('`'),
                keyword: sqlparser::keywords::Keyword::NoKeyword,
            });
        }
    }
}

/// `ALTER TABLE name {DISABLE | ENABLE} KEYS`: the last two words become `ALGORITHM =
/// DEFAULT` (sqlparser knows no KEYS toggle; both are no-ops here, as in InnoDB).
fn keys_toggle_as_noop(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) {
    let words = meaningful(tokens);
    let word = |i: usize, w: &str| is_word(&tokens[i].token, w);
    let n = words.len();
    if n < 5
        || !word(words[0], "ALTER")
        || !word(words[1], "TABLE")
        || !(word(words[n - 2], "DISABLE") || word(words[n - 2], "ENABLE"))
        || !word(words[n - 1], "KEYS")
    {
        return;
    }
    let (a, b) = (words[n - 2], words[n - 1]);
    tokens[a].token = Token::make_keyword("ALGORITHM");
    tokens[b].token = Token::make_keyword("DEFAULT");
    tokens.insert(b, sqlparser::tokenizer::TokenWithSpan::wrap(Token::Eq));
}

/// The tokens of one statement read without sqlparser's parser: no whitespace, comments
/// or end marker, MariaDB's executable comments opened, a trailing `;` cut. None when the
/// text does not tokenize (the parser then reports it).
pub(crate) fn statement_tokens(sql: &str) -> Result<Option<Vec<Token>>, SqlError> {
    let dialect = MySqlDialect {};
    let Ok(mut tokens) = Tokenizer::new(&dialect, sql).tokenize_with_location() else {
        return Ok(None);
    };
    mariadb_comments(&dialect, &mut tokens)?;
    let mut toks: Vec<Token> = tokens
        .into_iter()
        .map(|t| t.token)
        .filter(|t| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .collect();
    if toks.last() == Some(&Token::SemiColon) {
        toks.pop();
    }
    Ok(Some(toks))
}

/// SQL-level prepared statements, which sqlparser reads only in PostgreSQL's form.
#[derive(Debug, PartialEq)]
pub enum SqlPrepared {
    /// `PREPARE name FROM 'text'` or `FROM @var`.
    Prepare { name: String, from: PrepareFrom },
    /// `EXECUTE name [USING @a, @b, ...]` (user variable names, lower case).
    Execute { name: String, using: Vec<String> },
    /// `{DEALLOCATE | DROP} PREPARE name`.
    Deallocate { name: String },
}

#[derive(Debug, PartialEq)]
pub enum PrepareFrom {
    Text(String),
    UserVar(String),
}

/// Reads `PREPARE` / `EXECUTE` / `DEALLOCATE PREPARE` statements (None: another statement).
/// Names are case-insensitive (kept in lower case).
pub fn sql_prepared(sql: &str) -> Result<Option<SqlPrepared>, SqlError> {
    let Some(toks) = statement_tokens(sql)? else {
        return Ok(None);
    };
    let toks: Vec<&Token> = toks.iter().collect();
    let word = |i: usize| match toks.get(i) {
        Some(Token::Word(w)) => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let name_at = |i: usize| match toks.get(i) {
        Some(Token::Word(w)) => Ok(w.value.to_lowercase()),
        _ => Err(syntax("a prepared statement name was expected")),
    };
    // `@name` comes as one word or as `@` and a word.
    let user_var = |i: usize| -> Option<(String, usize)> {
        match (toks.get(i), toks.get(i + 1)) {
            (Some(Token::Word(w)), _) if w.value.starts_with('@') && w.value.len() > 1 => {
                Some((w.value[1..].to_ascii_lowercase(), i + 1))
            }
            (Some(Token::AtSign), Some(Token::Word(w))) => {
                Some((w.value.to_ascii_lowercase(), i + 2))
            }
            _ => None,
        }
    };
    let end = |i: usize| {
        if i == toks.len() {
            Ok(())
        } else {
            Err(syntax(format!(
                "unexpected {} after the statement",
                toks[i]
            )))
        }
    };
    match word(0).as_deref() {
        Some("PREPARE") if word(2).as_deref() == Some("FROM") => {
            let name = name_at(1)?;
            let from = match toks.get(3) {
                Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => {
                    end(4)?;
                    PrepareFrom::Text(s.clone())
                }
                _ => match user_var(3) {
                    Some((v, next)) => {
                        end(next)?;
                        PrepareFrom::UserVar(v)
                    }
                    None => return Err(syntax("PREPARE ... FROM needs a string or a @variable")),
                },
            };
            Ok(Some(SqlPrepared::Prepare { name, from }))
        }
        Some("EXECUTE") => {
            let name = name_at(1)?;
            let mut using = Vec::new();
            let mut i = 2;
            if word(2).as_deref() == Some("USING") {
                i = 3;
                loop {
                    let Some((v, next)) = user_var(i) else {
                        return Err(syntax("EXECUTE ... USING takes @variables"));
                    };
                    using.push(v);
                    i = next;
                    if toks.get(i) == Some(&&Token::Comma) {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            end(i)?;
            Ok(Some(SqlPrepared::Execute { name, using }))
        }
        Some("DEALLOCATE" | "DROP") if word(1).as_deref() == Some("PREPARE") => {
            let name = name_at(2)?;
            end(3)?;
            Ok(Some(SqlPrepared::Deallocate { name }))
        }
        _ => Ok(None),
    }
}

/// A table maintenance statement sqlparser does not read: `OPTIMIZE | ANALYZE [LOCAL |
/// NO_WRITE_TO_BINLOG] TABLE t [, t ...]` (ANALYZE's `PERSISTENT FOR ...` taken and ignored)
/// or `CHECK TABLE t [, t ...] [QUICK | FAST | MEDIUM | EXTENDED | CHANGED | FOR UPGRADE]`
/// (the options change nothing here), or `REPAIR [LOCAL | NO_WRITE_TO_BINLOG] TABLE t [, t
/// ...] [QUICK] [EXTENDED] [USE_FRM]`.
#[derive(Debug, PartialEq)]
pub struct Maintenance {
    pub op: MaintenanceOp,
    /// (database, table) as written; the database None when not given.
    pub tables: Vec<(Option<String>, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaintenanceOp {
    Optimize,
    Analyze,
    Check,
    Repair,
}

/// Reads `OPTIMIZE TABLE` / `CHECK TABLE` / `REPAIR TABLE` (None: another statement).
pub fn table_maintenance(sql: &str) -> Result<Option<Maintenance>, SqlError> {
    let Some(toks) = statement_tokens(sql)? else {
        return Ok(None);
    };
    let toks: Vec<&Token> = toks.iter().collect();
    let keyword = |i: usize| match toks.get(i) {
        Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let (op, mut i) = match keyword(0).as_deref() {
        Some("OPTIMIZE") => match keyword(1).as_deref() {
            Some("LOCAL" | "NO_WRITE_TO_BINLOG") => (MaintenanceOp::Optimize, 2),
            _ => (MaintenanceOp::Optimize, 1),
        },
        Some("ANALYZE") => match keyword(1).as_deref() {
            Some("LOCAL" | "NO_WRITE_TO_BINLOG") => (MaintenanceOp::Analyze, 2),
            _ => (MaintenanceOp::Analyze, 1),
        },
        Some("CHECK") => (MaintenanceOp::Check, 1),
        Some("REPAIR") => match keyword(1).as_deref() {
            Some("LOCAL" | "NO_WRITE_TO_BINLOG") => (MaintenanceOp::Repair, 2),
            _ => (MaintenanceOp::Repair, 1),
        },
        _ => return Ok(None),
    };
    if !matches!(keyword(i).as_deref(), Some("TABLE" | "TABLES")) {
        return Ok(None);
    }
    i += 1;
    let name = |i: usize| match toks.get(i) {
        Some(Token::Word(w)) => Ok(w.value.clone()),
        _ => Err(syntax("a table name was expected")),
    };
    let mut tables = Vec::new();
    loop {
        let first = name(i)?;
        i += 1;
        if toks.get(i) == Some(&&Token::Period) {
            tables.push((Some(first), name(i + 1)?));
            i += 2;
        } else {
            tables.push((None, first));
        }
        if toks.get(i) == Some(&&Token::Comma) {
            i += 1;
        } else {
            break;
        }
    }
    if op == MaintenanceOp::Analyze && keyword(i).as_deref() == Some("PERSISTENT") {
        // Engine-independent statistics: there are none to collect.
        i = toks.len();
    }
    if op == MaintenanceOp::Repair {
        while let Some("QUICK" | "EXTENDED" | "USE_FRM") = keyword(i).as_deref() {
            i += 1;
        }
    }
    if op == MaintenanceOp::Check {
        while let Some(w) = keyword(i) {
            match w.as_str() {
                "QUICK" | "FAST" | "MEDIUM" | "EXTENDED" | "CHANGED" => i += 1,
                "FOR" if keyword(i + 1).as_deref() == Some("UPGRADE") => i += 2,
                _ => break,
            }
        }
    }
    if i != toks.len() {
        return Err(syntax(format!(
            "unexpected {} after the table list",
            toks[i]
        )));
    }
    Ok(Some(Maintenance { op, tables }))
}

/// `ALTER TABLE name FORCE` and `ALTER TABLE name ENGINE [=] x` (a "null" ALTER that rebuilds
/// the table, whatever the engine named): each such clause becomes `ALGORITHM = INPLACE`,
/// which the planner takes, alone, as a request to rebuild (sqlparser reads neither).
fn null_alter_as_rebuild(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) {
    let words = meaningful(tokens);
    let word = |i: usize, w: &str| is_word(&tokens[i].token, w);
    let Some(starts) = alter_clause_starts(tokens, &words) else {
        return;
    };
    let mut spans = Vec::new();
    for &n in &starts {
        let Some(&at) = words.get(n) else {
            continue;
        };
        let ends_clause = |k: usize| {
            words
                .get(k)
                .is_none_or(|&w| matches!(tokens[w].token, Token::Comma))
        };
        let span = if word(at, "FORCE") && ends_clause(n + 1) {
            Some((at, at))
        } else if word(at, "ENGINE") {
            let v = if words
                .get(n + 1)
                .is_some_and(|&w| tokens[w].token == Token::Eq)
            {
                n + 2
            } else {
                n + 1
            };
            match words.get(v) {
                Some(&w)
                    if matches!(
                        tokens[w].token,
                        Token::Word(_) | Token::SingleQuotedString(_)
                    ) && ends_clause(v + 1) =>
                {
                    Some((at, w))
                }
                _ => None,
            }
        } else {
            None
        };
        spans.extend(span);
    }
    // Rewritten from the last clause back, so earlier positions stay valid.
    for (from, to) in spans.into_iter().rev() {
        let wrap = sqlparser::tokenizer::TokenWithSpan::wrap;
        tokens.splice(
            from..=to,
            [
                wrap(Token::make_keyword("ALGORITHM")),
                wrap(Token::Eq),
                wrap(Token::make_keyword("INPLACE")),
            ],
        );
    }
}

/// `t` is the unquoted word `w` (any case).
fn is_word(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// Where the clauses of `ALTER TABLE name clause, clause, ...` start (positions in `words`,
/// the meaningful tokens): after the table name (`t` or `db . t`) and after each top-level
/// comma. None for other statements.
fn alter_clause_starts(
    tokens: &[sqlparser::tokenizer::TokenWithSpan],
    words: &[usize],
) -> Option<Vec<usize>> {
    let word = |i: usize, w: &str| is_word(&tokens[i].token, w);
    if words.len() < 4 || !word(words[0], "ALTER") || !word(words[1], "TABLE") {
        return None;
    }
    let mut starts = vec![if matches!(tokens[words[3]].token, Token::Period) {
        5
    } else {
        3
    }];
    let mut depth = 0i32;
    for (n, &w) in words.iter().enumerate().skip(starts[0]) {
        match tokens[w].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => starts.push(n + 1),
            _ => {}
        }
    }
    Some(starts)
}

/// Marks an ALTER TABLE whose clauses had MariaDB's `IF [NOT] EXISTS` (which sqlparser's
/// MySQL dialect does not read): the statement's `on_cluster` (a ClickHouse clause, never
/// parsed here) holds this prefix and the list `k:n` / `k:e` of clause k with IF NOT EXISTS
/// / IF EXISTS, comma-separated (see `alter_if_clauses`, `plan::alter_table`).
pub const ALTER_IF_MARK: &str = "\u{0}tierdb-if:";

/// MariaDB's `IF [NOT] EXISTS` inside ALTER TABLE clauses (`ADD COLUMN IF NOT EXISTS c ...`,
/// `ADD INDEX IF NOT EXISTS i (...)`, `ADD CONSTRAINT f FOREIGN KEY IF NOT EXISTS (...)`,
/// `DROP INDEX IF EXISTS i`, `MODIFY COLUMN IF EXISTS c ...`, ...): the words are cut (the
/// first such run of a clause, outside parentheses) and returned as (clause, NOT EXISTS).
fn alter_if_clauses(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) -> Vec<(usize, bool)> {
    let words = meaningful(tokens);
    let Some(starts) = alter_clause_starts(tokens, &words) else {
        return Vec::new();
    };
    let word = |n: usize, w: &str| words.get(n).is_some_and(|&i| is_word(&tokens[i].token, w));
    let mut found = Vec::new();
    let mut cut = Vec::new();
    // `DROP KEY k` is MariaDB's other spelling of `DROP INDEX k`.
    let renamed: Vec<usize> = starts
        .iter()
        .filter(|&&n| word(n, "DROP") && word(n + 1, "KEY"))
        .map(|&n| words[n + 1])
        .collect();
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(words.len());
        let mut depth = 0i32;
        for n in start..end {
            match tokens[words[n]].token {
                Token::LParen => depth += 1,
                Token::RParen => depth -= 1,
                _ if depth == 0 && word(n, "IF") => {
                    let run = if word(n + 1, "NOT") && word(n + 2, "EXISTS") {
                        Some((3, true))
                    } else if word(n + 1, "EXISTS") {
                        Some((2, false))
                    } else {
                        None
                    };
                    if let Some((len, not)) = run {
                        found.push((k, not));
                        cut.extend((n..n + len).map(|m| words[m]));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    for i in renamed {
        tokens[i].token = Token::make_keyword("INDEX");
    }
    for i in cut.into_iter().rev() {
        tokens.remove(i);
    }
    found
}

/// `SELECT ... INTO @a, @b [FROM ...]` or `SELECT ... FROM ... INTO @a, @b` (MySQL's user
/// variable targets, in either place, which sqlparser does not read): the words are cut and
/// the variable names (lower-case, without `@`) returned, for the caller to put in the
/// query's `SELECT ... INTO` (`plan::build` reads them there), with true when the INTO comes
/// after the FROM clause (MariaDB's deprecated form, warning 1287). `INTO OUTFILE` / `DUMPFILE`
/// clauses are cut the same way and returned as such.
fn select_into_vars(
    tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>,
) -> Result<Option<SelectInto>, SqlError> {
    let words = meaningful(tokens);
    let is = |n: usize, w: &str| words.get(n).is_some_and(|&i| is_word(&tokens[i].token, w));
    if !is(0, "SELECT") {
        return Ok(None);
    }
    let mut depth = 0i32;
    let mut at = None;
    let mut after_from = false;
    for (n, &i) in words.iter().enumerate() {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && is(n, "FROM") => after_from = true,
            _ if depth == 0 && is(n, "INTO") => {
                at = Some(n);
                break;
            }
            _ => {}
        }
    }
    let Some(at) = at else {
        return Ok(None);
    };
    let rest: Vec<Token> = words[at + 1..]
        .iter()
        .map(|&i| tokens[i].token.clone())
        .collect();
    if let Some((mut into, n)) = crate::load::parse_into_file(&rest)? {
        into.after_from = after_from;
        let (from, to) = (words[at], words[at + n]);
        tokens.drain(from..=to);
        return Ok(Some(SelectInto::File(into)));
    }
    let mut vars = Vec::new();
    let mut n = at + 1;
    loop {
        let name = words.get(n).and_then(|&i| match &tokens[i].token {
            Token::Word(w) if w.quote_style.is_none() => w.value.strip_prefix('@'),
            _ => None,
        });
        let Some(name) = name.filter(|v| !v.is_empty() && !v.starts_with('@')) else {
            return Err(syntax("SELECT ... INTO takes user variables (@name, ...)"));
        };
        vars.push(name.to_ascii_lowercase());
        if words
            .get(n + 1)
            .is_some_and(|&i| tokens[i].token == Token::Comma)
        {
            n += 2;
        } else {
            break;
        }
    }
    let (from, to) = (words[at], words[n]);
    tokens.drain(from..=to);
    Ok(Some(SelectInto::Vars(vars, after_from)))
}

/// Where a SELECT's INTO clause sends its rows.
enum SelectInto {
    /// User variables (names without `@`), and whether the INTO came after FROM.
    Vars(Vec<String>, bool),
    File(crate::load::IntoFile),
}

/// Marks a DELETE with `IGNORE` (which sqlparser reads as a table name): its `on_cluster`
/// (a ClickHouse clause, never parsed here) holds this. An UPDATE's is its SQLite-style
/// `OR IGNORE`.
pub const IGNORE_MARK: &str = "\u{0}tierdb-ignore";

/// `UPDATE` / `DELETE` modifiers sqlparser reads as table names: `LOW_PRIORITY` and `QUICK`
/// (no effect in InnoDB either) are dropped, `IGNORE` too and reported (true) for the caller
/// to mark the statement; `DELETE a.*, b.* FROM ...` / `DELETE FROM a.* USING ...` lose the
/// `.*`.
fn write_modifiers(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) -> bool {
    let word = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let idx: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .map(|(i, _)| i)
        .collect();
    let Some(&first) = idx.first() else {
        return false;
    };
    let verb = match word(&tokens[first].token).as_deref() {
        Some(v @ ("UPDATE" | "DELETE")) => v.to_string(),
        _ => return false,
    };
    let mut drop = Vec::new();
    let mut ignore = false;
    for &i in &idx[1..] {
        match word(&tokens[i].token).as_deref() {
            Some("LOW_PRIORITY" | "QUICK") => drop.push(i),
            Some("IGNORE") => {
                ignore = true;
                drop.push(i);
            }
            _ => break,
        }
    }
    if verb == "DELETE" {
        // `name.*` before WHERE: the table list of a multi-table DELETE.
        for w in idx.windows(3) {
            if matches!(word(&tokens[w[0]].token).as_deref(), Some("WHERE")) {
                break;
            }
            let named = matches!(tokens[w[0]].token, Token::Word(_));
            if named && tokens[w[1]].token == Token::Period && tokens[w[2]].token == Token::Mul {
                drop.extend([w[1], w[2]]);
            }
        }
    }
    drop.sort_unstable();
    drop.dedup();
    for i in drop.into_iter().rev() {
        tokens.remove(i);
    }
    ignore
}

/// `UPDATE a, b SET ...` (MySQL's multi-table UPDATE over a comma list, which sqlparser does
/// not take): each top-level comma before SET becomes `CROSS JOIN`, the same join.
fn update_comma_joins(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) {
    let mut meaningful = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)));
    match meaningful.next() {
        Some((_, t)) if is_word(&t.token, "UPDATE") => {}
        _ => return,
    }
    let mut depth = 0i32;
    let mut commas = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            Token::Comma if depth == 0 => commas.push(i),
            tok if depth == 0 && is_word(tok, "SET") => break,
            _ => {}
        }
    }
    for &i in commas.iter().rev() {
        let span = tokens[i].span;
        let at = |token: Token| sqlparser::tokenizer::TokenWithSpan { token, span };
        tokens.splice(
            i..=i,
            [
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                at(Token::make_keyword("CROSS")),
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
                at(Token::make_keyword("JOIN")),
                at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            ],
        );
    }
}

/// MySQL's view statements sqlparser does not take as they are: `ALTER [ALGORITHM = ...]
/// [DEFINER = ...] [SQL SECURITY ...] VIEW` becomes `CREATE OR REPLACE ... VIEW` (returned
/// true: the statement is marked `or_alter`, the view must exist), and a trailing
/// `WITH [CASCADED | LOCAL] CHECK OPTION` is cut (returned: CASCADED or LOCAL).
fn view_shims(tokens: &mut Vec<sqlparser::tokenizer::TokenWithSpan>) -> (bool, Option<String>) {
    let word = |t: &Token| match t {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    };
    let idx = meaningful(tokens);
    let (Some(&first), Some(&second)) = (idx.first(), idx.get(1)) else {
        return (false, None);
    };
    let verb = word(&tokens[first].token);
    let next = word(&tokens[second].token);
    let alter = verb.as_deref() == Some("ALTER")
        && matches!(
            next.as_deref(),
            Some("VIEW" | "ALGORITHM" | "DEFINER" | "SQL")
        );
    let is_view = alter
        || (verb.as_deref() == Some("CREATE")
            && idx
                .iter()
                .take_while(|&&i| word(&tokens[i].token).as_deref() != Some("AS"))
                .any(|&i| word(&tokens[i].token).as_deref() == Some("VIEW")));
    if !is_view {
        return (false, None);
    }
    // `... WITH [CASCADED | LOCAL] CHECK OPTION` at the end.
    let words: Vec<Option<String>> = idx.iter().map(|&i| word(&tokens[i].token)).collect();
    let n = words.len();
    let mut check = None;
    if n >= 3
        && words[n - 2].as_deref() == Some("CHECK")
        && words[n - 1].as_deref() == Some("OPTION")
    {
        let (kind, with_at) = match words[n - 3].as_deref() {
            Some(k @ ("CASCADED" | "LOCAL")) => (k.to_string(), n.checked_sub(4)),
            _ => ("CASCADED".to_string(), Some(n - 3)),
        };
        if let Some(w) = with_at.filter(|&w| words[w].as_deref() == Some("WITH")) {
            tokens.truncate(idx[w]);
            check = Some(kind);
        }
    }
    if alter {
        let span = tokens[first].span;
        let at = |token: Token| sqlparser::tokenizer::TokenWithSpan { token, span };
        let space = || at(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space));
        tokens.splice(
            first..=first,
            [
                at(Token::make_keyword("CREATE")),
                space(),
                at(Token::make_keyword("OR")),
                space(),
                at(Token::make_keyword("REPLACE")),
            ],
        );
    }
    (alter, check)
}

pub fn parse(sql: &str) -> Result<Parsed, SqlError> {
    // Big multi-row INSERT / REPLACE of literals: the rows are read without sqlparser.
    if let Some(parsed) = crate::bulk_values::parse(sql) {
        return parsed;
    }
    parse_full(sql)
}

/// `parse` without the multi-row fast path.
pub(crate) fn parse_full(sql: &str) -> Result<Parsed, SqlError> {
    let dialect = MySqlDialect {};
    let mut tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(syntax)?;
    mariadb_comments(&dialect, &mut tokens)?;
    let snapshot = consistent_snapshot(&mut tokens);
    let tx_scope = set_transaction_scope(&tokens);
    if let Some(stmt) = show_create_database(&tokens)
        .or_else(|| show_warnings_limit(&tokens))
        .or_else(|| show_of_nothing(&tokens))
    {
        return Ok(Parsed {
            stmt,
            placeholders: Vec::new(),
            item_texts: ItemTexts::default(),
            into_file: None,
        });
    }
    let mut placeholders = Vec::new();
    let mut meaningful = 0usize;
    let mut run = 0usize;
    for t in &tokens {
        match &t.token {
            Token::Whitespace(_) | Token::SemiColon | Token::EOF => {}
            Token::Placeholder(_) => {
                placeholders.push(t.span.start);
                meaningful += 1;
            }
            other => {
                meaningful += 1;
                match other {
                    Token::Comma | Token::LParen | Token::RParen => run = 0,
                    Token::Plus
                    | Token::Minus
                    | Token::Mul
                    | Token::Div
                    | Token::Mod
                    | Token::Eq
                    | Token::Neq
                    | Token::Lt
                    | Token::Gt
                    | Token::LtEq
                    | Token::GtEq
                    | Token::Spaceship
                    | Token::Pipe
                    | Token::Ampersand
                    | Token::Caret
                    | Token::StringConcat => {
                        run += 1;
                        if run > MAX_OPERATOR_RUN {
                            return Err(SqlError::new(
                                1436,
                                "HY000",
                                "expression too long: too many chained operators",
                            ));
                        }
                    }
                    Token::Word(w)
                        if w.quote_style.is_none()
                            && ["AND", "OR", "XOR"]
                                .iter()
                                .any(|k| w.value.eq_ignore_ascii_case(k)) =>
                    {
                        run += 1;
                        if run > MAX_OPERATOR_RUN {
                            return Err(SqlError::new(
                                1436,
                                "HY000",
                                "expression too long: too many chained operators",
                            ));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    if meaningful == 0 {
        return Err(SqlError::new(1065, "42000", "Query was empty"));
    }
    // `... LOCK IN SHARE MODE [;]`: cut the words, add the clause after parsing.
    // MariaDB also allows `NOWAIT` or `SKIP LOCKED` after it.
    let mut share_mode = false;
    let mut share_nonblock = None;
    if let Some(run) = share_mode_run(&tokens) {
        let words: Vec<(usize, String)> = tokens
            .iter()
            .enumerate()
            .skip(run[3] + 1)
            .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
            .take(2)
            .filter_map(|(i, t)| match &t.token {
                Token::Word(w) => Some((i, w.value.to_ascii_uppercase())),
                _ => None,
            })
            .collect();
        let last = match words.as_slice() {
            [(i, w), ..] if w == "NOWAIT" => {
                share_nonblock = Some(sqlparser::ast::NonBlock::Nowait);
                *i
            }
            [(_, w), (j, l), ..] if w == "SKIP" && l == "LOCKED" => {
                share_nonblock = Some(sqlparser::ast::NonBlock::SkipLocked);
                *j
            }
            _ => run[3],
        };
        let at_end = tokens[last + 1..].iter().all(|t| {
            matches!(
                t.token,
                Token::Whitespace(_) | Token::SemiColon | Token::EOF
            )
        });
        if !at_end {
            return Err(SqlError::unsupported(
                "LOCK IN SHARE MODE anywhere but at the end of the statement",
            ));
        }
        tokens.drain(run[0]..=last);
        share_mode = true;
    }
    keys_toggle_as_noop(&mut tokens);
    null_alter_as_rebuild(&mut tokens);
    let alter_ifs = alter_if_clauses(&mut tokens);
    let ignore = write_modifiers(&mut tokens);
    let into_vars = select_into_vars(&mut tokens)?;
    update_comma_joins(&mut tokens);
    let (view_alter, view_check) = view_shims(&mut tokens);
    show_table_status_pattern(&mut tokens);
    mariadb_view_spellings(&mut tokens);
    null_pattern_and_bare_trim(&mut tokens);
    let item_texts = ItemTexts::scan(sql, &tokens);
    let unsupported = unsupported_statement(&tokens);
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let mut stmts = parser.parse_statements().map_err(|e| match unsupported {
        // Valid MariaDB that tierdb does not have: 1235 naming it, not a syntax error.
        Some(what) => SqlError::unsupported(what),
        None => syntax(e),
    })?;
    if stmts.len() > 1 {
        return Err(SqlError::syntax(
            "multi-statement queries are not supported: send one statement per query (found several statements separated by ';')",
        ));
    }
    let not_a_select = || syntax("LOCK IN SHARE MODE belongs to a SELECT");
    for st in &mut stmts {
        bind_predicates_tighter(st);
        bare_current_user(st);
    }
    let mut stmt = stmts.pop().ok_or_else(|| {
        if share_mode {
            not_a_select()
        } else {
            SqlError::new(1065, "42000", "Query was empty")
        }
    })?;
    if share_mode {
        let q = locked_query(&mut stmt).ok_or_else(not_a_select)?;
        q.locks.push(LockClause {
            lock_type: LockType::Share,
            of: None,
            nonblock: share_nonblock,
        });
    }
    if let Some(scope) = tx_scope {
        if let sqlparser::ast::Statement::Set(sqlparser::ast::Set::SetTransaction {
            session,
            snapshot,
            ..
        }) = &mut stmt
        {
            if scope == "GLOBAL" {
                *snapshot = Some(GLOBAL_MARK.with_empty_span());
            } else {
                *session = true;
            }
        }
    }
    if snapshot {
        match &mut stmt {
            sqlparser::ast::Statement::StartTransaction { modes, .. } => modes.push(SNAPSHOT_MARK),
            _ => {
                return Err(syntax(
                    "WITH CONSISTENT SNAPSHOT belongs to START TRANSACTION",
                ))
            }
        }
    }
    if let Statement::CreateView(cv) = &mut stmt {
        cv.or_alter = view_alter;
        if let Some(kind) = view_check {
            cv.options = sqlparser::ast::CreateTableOptions::With(vec![
                sqlparser::ast::SqlOption::KeyValue {
                    key: sqlparser::ast::ObjectName::from(vec![sqlparser::ast::Ident::new(
                        crate::view::CHECK_OPTION_KEY,
                    )]),
                    value: sqlparser::ast::Expr::value(sqlparser::ast::Value::SingleQuotedString(
                        kind,
                    )),
                },
            ]);
        }
    }
    let mut into_file = None;
    let into_vars = match into_vars {
        Some(SelectInto::File(f)) => {
            if !matches!(&stmt, Statement::Query(q) if matches!(q.body.as_ref(), sqlparser::ast::SetExpr::Select(_)))
            {
                return Err(SqlError::unsupported("INTO OUTFILE | DUMPFILE of a UNION"));
            }
            into_file = Some(f);
            None
        }
        Some(SelectInto::Vars(v, after)) => Some((v, after)),
        None => None,
    };
    if let Some((vars, after_from)) = into_vars {
        let Statement::Query(q) = &mut stmt else {
            return Err(syntax("INTO @variable belongs to a SELECT"));
        };
        let sqlparser::ast::SetExpr::Select(s) = q.body.as_mut() else {
            return Err(SqlError::unsupported("SELECT ... INTO of a UNION"));
        };
        s.into = Some(sqlparser::ast::SelectInto {
            temporary: false,
            // (Meaningless for variables: marks the INTO written after FROM.)
            unlogged: after_from,
            table: false,
            targets: vars
                .into_iter()
                .map(|v| {
                    sqlparser::ast::Expr::Identifier(sqlparser::ast::Ident::new(format!("@{v}")))
                })
                .collect(),
        });
    }
    if ignore {
        match &mut stmt {
            Statement::Update(u) => u.or = Some(sqlparser::ast::SqliteOnConflict::Ignore),
            Statement::Delete(d) => {
                d.on_cluster = Some(sqlparser::ast::Ident::new(IGNORE_MARK));
            }
            _ => {}
        }
    }
    if !alter_ifs.is_empty() {
        if let Statement::AlterTable(at) = &mut stmt {
            let list: Vec<String> = alter_ifs
                .iter()
                .map(|(k, not)| format!("{k}:{}", if *not { 'n' } else { 'e' }))
                .collect();
            at.on_cluster = Some(sqlparser::ast::Ident::new(format!(
                "{ALTER_IF_MARK}{}",
                list.join(",")
            )));
        }
    }
    placeholders.sort_by_key(|l| (l.line, l.column));
    Ok(Parsed {
        stmt,
        placeholders,
        item_texts,
        into_file,
    })
}

/// The statements of a multi-statement COM_QUERY (a client that enabled
/// CLIENT_MULTI_STATEMENTS): `sql` cut at each `;` outside quotes, backquotes and comments,
/// as MariaDB cuts it. Pieces holding only spaces and comments are left out.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    // Whether the current piece has anything but spaces and comments.
    let mut content = false;
    while i < b.len() {
        if let Some(end) = line_comment_end(b, i) {
            i = end;
            continue;
        }
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                content = true;
                i += 1;
                while i < b.len() {
                    if b[i] == b'\\' && q != b'`' {
                        i += 2;
                    } else if b[i] == q {
                        // A doubled quote is one quote character.
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                        } else {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // `/*! ... */` holds SQL MariaDB runs.
                if b.get(i + 2) == Some(&b'!') {
                    content = true;
                }
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            b';' => {
                if content {
                    out.push(&sql[start..i]);
                }
                content = false;
                i += 1;
                start = i;
            }
            c => {
                content |= !c.is_ascii_whitespace();
                i += 1;
            }
        }
    }
    if content && start < sql.len() {
        out.push(&sql[start..]);
    }
    out
}

#[cfg(test)]
mod tests {
    //! The PREPARE / EXECUTE / DEALLOCATE shim: what it reads, and that it leaves other
    //! statements (and malformed ones) to the parser or a clear syntax error.
    use super::*;

    #[test]
    fn multi_statements_split_at_semicolons_outside_quotes_and_comments() {
        let sql = "SELECT 'a;b', \"c;\\\";d\", `e;f` FROM t; -- x; y\n\
                   INSERT INTO t VALUES ('it''s;'); /* ; */ ; # ;\nDO 1;;  ";
        assert_eq!(
            split_statements(sql),
            [
                "SELECT 'a;b', \"c;\\\";d\", `e;f` FROM t",
                " -- x; y\nINSERT INTO t VALUES ('it''s;')",
                " # ;\nDO 1",
            ]
        );
        assert_eq!(split_statements("SELECT 1"), ["SELECT 1"]);
        assert_eq!(split_statements("SELECT 1;"), ["SELECT 1"]);
        assert!(split_statements(" ; -- only a comment").is_empty());
        // An unterminated quote or comment ends the text; nothing panics.
        assert_eq!(split_statements("SELECT 'x;"), ["SELECT 'x;"]);
        assert_eq!(split_statements("SELECT 1 /* ;"), ["SELECT 1 /* ;"]);
        assert_eq!(split_statements("SELECT '\\"), ["SELECT '\\"]);
    }

    fn p(sql: &str) -> Result<Option<SqlPrepared>, u16> {
        sql_prepared(sql).map_err(|e| e.code)
    }

    #[test]
    fn prepared_statement_commands_are_read_or_refused_clearly() {
        assert_eq!(
            p("PREPARE Sel FROM 'SELECT ?';"),
            Ok(Some(SqlPrepared::Prepare {
                name: "sel".into(),
                from: PrepareFrom::Text("SELECT ?".into())
            }))
        );
        assert_eq!(
            p("prepare s from @Q"),
            Ok(Some(SqlPrepared::Prepare {
                name: "s".into(),
                from: PrepareFrom::UserVar("q".into())
            }))
        );
        assert_eq!(
            p("EXECUTE s USING @a, @B"),
            Ok(Some(SqlPrepared::Execute {
                name: "s".into(),
                using: vec!["a".into(), "b".into()]
            }))
        );
        assert_eq!(
            p("execute s"),
            Ok(Some(SqlPrepared::Execute {
                name: "s".into(),
                using: vec![]
            }))
        );
        assert_eq!(
            p("DROP PREPARE s"),
            Ok(Some(SqlPrepared::Deallocate { name: "s".into() }))
        );
        assert_eq!(p("DROP TABLE s"), Ok(None));
        assert_eq!(p("SELECT 1"), Ok(None));
        assert_eq!(p("PREPARE s FROM 1"), Err(1064));
        assert_eq!(p("EXECUTE s USING"), Err(1064));
        assert_eq!(p("EXECUTE s USING @a @b"), Err(1064));
        assert_eq!(p("EXECUTE"), Err(1064));
        assert_eq!(p("DEALLOCATE PREPARE"), Err(1064));
        assert_eq!(p("PREPARE s FROM 'x' 'y'"), Err(1064));
    }

    /// Each select list's items as written, nested ones too, with multi-byte text on
    /// several lines; `x.limit` is a column, not the end of the list.
    #[test]
    fn item_texts_are_each_select_lists_items_as_written() {
        let texts = |sql: &str| -> Vec<Vec<String>> {
            parse(sql)
                .expect("parses")
                .item_texts
                .0
                .into_iter()
                .map(|(_, items)| items)
                .collect()
        };
        let mut got = texts("SELECT a+1,  (SELECT b  *2 FROM t), f(x, y) FROM u");
        got.sort();
        assert_eq!(
            got,
            [
                vec![
                    "a+1".to_string(),
                    "(SELECT b  *2 FROM t)".into(),
                    "f(x, y)".into()
                ],
                vec!["b  *2".to_string()],
            ]
        );
        assert_eq!(
            texts("SELECT DISTINCT 'é'||x,\n  CONCAT('ü',\n y) FROM t"),
            [vec!["'é'||x".to_string(), "CONCAT('ü',\n y)".into()]]
        );
        assert_eq!(
            texts("SELECT x.limit + 1 FROM (SELECT 1 AS `limit`) x"),
            [
                vec!["x.limit + 1".to_string()],
                vec!["1 AS `limit`".to_string()]
            ]
        );
        assert_eq!(
            texts("SELECT 1+1 UNION SELECT 2 * 2"),
            [vec!["1+1".to_string()], vec!["2 * 2".to_string()]]
        );
        // A `/*! ... */` comment gives its tokens no place of their own: no texts.
        assert!(texts("SELECT a+1 /*!, b+2 */ FROM t").is_empty());
        // Nested select lists: one each.
        let deep = format!("SELECT {}1{}", "(SELECT ".repeat(20), ")".repeat(20));
        assert_eq!(texts(&deep).len(), 21);
    }
}
