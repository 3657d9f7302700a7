//! SQL text → one sqlparser `Statement` plus the locations of its `?` markers.
//!
//! Owns: the MySQL dialect choice, the recursion limit (sqlparser's default, kept on), the
//! one-statement-per-call rule, and the 1064/1065 error texts.
//! Must never: panic on any input; it only tokenizes and parses.

use crate::result::SqlError;
use sqlparser::ast::Statement;
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
}

fn syntax(msg: impl std::fmt::Display) -> SqlError {
    SqlError::syntax(format!(
        "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use: {msg}"
    ))
}

pub fn parse(sql: &str) -> Result<Parsed, SqlError> {
    let dialect = MySqlDialect {};
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(syntax)?;
    let mut placeholders = Vec::new();
    let mut meaningful = 0usize;
    let mut run = 0usize;
    let mut words: Vec<String> = Vec::new();
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
                    Token::Word(w) if w.quote_style.is_none() => {
                        let u = w.value.to_ascii_uppercase();
                        if matches!(u.as_str(), "AND" | "OR" | "XOR") {
                            run += 1;
                            if run > MAX_OPERATOR_RUN {
                                return Err(SqlError::new(
                                    1436,
                                    "HY000",
                                    "expression too long: too many chained operators",
                                ));
                            }
                        }
                        if words.len() < 8 {
                            words.push(u);
                        } else {
                            words.remove(0);
                            words.push(u);
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
    let tail: Vec<&str> = words.iter().map(|s| s.as_str()).collect();
    if tail.ends_with(&["LOCK", "IN", "SHARE", "MODE"]) {
        return Err(SqlError::unsupported("locking reads (LOCK IN SHARE MODE)"));
    }
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    let mut stmts = parser.parse_statements().map_err(syntax)?;
    if stmts.len() > 1 {
        return Err(SqlError::syntax(
            "multi-statement queries are not supported: send one statement per query (found several statements separated by ';')",
        ));
    }
    let stmt = stmts
        .pop()
        .ok_or_else(|| SqlError::new(1065, "42000", "Query was empty"))?;
    placeholders.sort_by_key(|l| (l.line, l.column));
    Ok(Parsed { stmt, placeholders })
}
