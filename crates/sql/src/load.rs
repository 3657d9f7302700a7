//! `LOAD DATA [LOCAL] INFILE`: reading a delimited text file (tab-separated by default, or
//! CSV with `FIELDS TERMINATED BY ',' ENCLOSED BY '"'`) into a table, as MariaDB does.
//!
//! Owns: the statement's syntax (sqlparser does not read MySQL's form), the plan (target
//! table, which column or `@variable` each field goes to, the `SET` assignments), the byte
//! format of the file (terminators, enclosure, escapes, `\N`) and the per-row rules that differ
//! from INSERT: a missing field is warning 1261 and its column's zero value (NULL when the
//! column's default is NULL, the current time for a TIMESTAMP), surplus fields are 1262, a
//! NULL for a NOT NULL column is 1263 and its zero value; with `LOCAL` (and no REPLACE) every
//! such problem and every duplicate key is a warning, as if IGNORE were given, because the
//! client's file cannot be stopped midway. The rows themselves go through INSERT's writer
//! (`exec::put_row`): CHECK constraints, foreign keys, AUTO_INCREMENT and the binary log see
//! them as inserted rows.
//!
//! Where the bytes come from is the caller's: the session opens a server-side file (FILE
//! privilege, `secure_file_priv`), the protocol streams the client's file for `LOCAL`.
//!
//! Must never: hold more than one row of the file in memory (besides the read buffer); read
//! past the statement's rows into anything else; panic on any file content.

use std::io::Read;
use std::sync::Arc;

use sqlparser::ast;
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;
use tierdb_engine::{ColumnType, Row, Table, Txn, Value};

use crate::expr::{EvalCx, Expr};
use crate::fit::{self, Dest};
use crate::plan::{InsertPlan, OnDuplicate, PlanCx};
use crate::result::{Raised, SqlError, Warning};

/// How a row whose key is taken is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadDup {
    /// Neither REPLACE nor IGNORE: error 1062 (a warning with LOCAL).
    Error,
    Ignore,
    Replace,
}

/// Where one field of a line goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Column(String),
    /// `@name` (lower-cased).
    Var(String),
}

/// The byte format of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub field_term: Vec<u8>,
    pub enclosed: Option<u8>,
    pub escaped: Option<u8>,
    pub line_start: Vec<u8>,
    pub line_term: Vec<u8>,
}

impl Default for Format {
    /// MariaDB's defaults: tab-separated fields, `\` escapes, one line per row.
    fn default() -> Format {
        Format {
            field_term: b"\t".to_vec(),
            enclosed: None,
            escaped: Some(b'\\'),
            line_start: Vec::new(),
            line_term: b"\n".to_vec(),
        }
    }
}

/// A parsed `LOAD DATA` statement.
#[derive(Clone, Debug)]
pub struct LoadStmt {
    pub local: bool,
    pub file: String,
    pub dup: LoadDup,
    pub table: ast::ObjectName,
    pub format: Format,
    pub ignore_lines: u64,
    /// The fields' destinations in order; empty: the table's columns in order.
    pub targets: Vec<Target>,
    pub sets: Vec<ast::Assignment>,
}

fn syntax(msg: impl std::fmt::Display) -> SqlError {
    SqlError::syntax(format!(
        "You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use: {msg}"
    ))
}

/// A quick look: may `sql` be a LOAD DATA (it starts with `LOAD`, or with a comment)?
pub fn may_be_load(sql: &str) -> bool {
    let t = sql.trim_start();
    t.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("LOAD"))
        || ["/*", "--", "#"].iter().any(|c| t.starts_with(c))
}

fn is_word(t: Option<&Token>, w: &str) -> bool {
    matches!(t, Some(Token::Word(x)) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

fn peek_word(p: &Parser, w: &str) -> bool {
    is_word(Some(&p.peek_token().token), w)
}

fn take_word(p: &mut Parser, w: &str) -> bool {
    let hit = peek_word(p, w);
    if hit {
        p.next_token();
    }
    hit
}

fn expect_word(p: &mut Parser, w: &str, stmt: &str) -> Result<(), SqlError> {
    if take_word(p, w) {
        Ok(())
    } else {
        Err(syntax(format!(
            "expected {w} in {stmt}, found {}",
            p.peek_token().token
        )))
    }
}

/// A string literal's bytes (or a hexadecimal literal's).
fn string(p: &mut Parser, what: &str) -> Result<Vec<u8>, SqlError> {
    match p.next_token().token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s.into_bytes()),
        Token::HexStringLiteral(h) => {
            unhex(&h).ok_or_else(|| syntax(format!("a bad hexadecimal string for {what}")))
        }
        other => Err(syntax(format!(
            "expected a string for {what}, found {other}"
        ))),
    }
}

/// `[CHARACTER SET cs | CHARSET cs]`.
fn charset_clause(p: &mut Parser, stmt: &str) -> Result<(), SqlError> {
    if take_word(p, "CHARACTER") {
        expect_word(p, "SET", stmt)?;
        charset(&p.next_token().token)
    } else if take_word(p, "CHARSET") {
        charset(&p.next_token().token)
    } else {
        Ok(())
    }
}

/// `[{FIELDS | COLUMNS} ...] [LINES ...]` into `format`; true when ENCLOSED BY came with
/// OPTIONALLY.
fn format_clauses(p: &mut Parser, format: &mut Format, stmt: &str) -> Result<bool, SqlError> {
    let mut optionally = false;
    if take_word(p, "FIELDS") || take_word(p, "COLUMNS") {
        let mut any = false;
        loop {
            if take_word(p, "TERMINATED") {
                expect_word(p, "BY", stmt)?;
                format.field_term = string(p, "FIELDS TERMINATED BY")?;
            } else if peek_word(p, "OPTIONALLY") || peek_word(p, "ENCLOSED") {
                optionally = take_word(p, "OPTIONALLY");
                expect_word(p, "ENCLOSED", stmt)?;
                expect_word(p, "BY", stmt)?;
                format.enclosed = one_char(string(p, "ENCLOSED BY")?)?;
            } else if take_word(p, "ESCAPED") {
                expect_word(p, "BY", stmt)?;
                format.escaped = one_char(string(p, "ESCAPED BY")?)?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax(
                "FIELDS needs TERMINATED BY, ENCLOSED BY or ESCAPED BY",
            ));
        }
    }
    if take_word(p, "LINES") {
        let mut any = false;
        loop {
            if take_word(p, "STARTING") {
                expect_word(p, "BY", stmt)?;
                format.line_start = string(p, "LINES STARTING BY")?;
            } else if take_word(p, "TERMINATED") {
                expect_word(p, "BY", stmt)?;
                format.line_term = string(p, "LINES TERMINATED BY")?;
            } else {
                break;
            }
            any = true;
        }
        if !any {
            return Err(syntax("LINES needs STARTING BY or TERMINATED BY"));
        }
    }
    if format.field_term.is_empty() || format.line_term.is_empty() {
        // MariaDB's fixed-width rows (both empty) are not read or written here.
        return Err(SqlError::unsupported(format!(
            "{stmt} with an empty FIELDS or LINES TERMINATED BY (fixed-width rows)"
        )));
    }
    Ok(optionally)
}

/// Reads a `LOAD DATA` statement (None: another statement). `LOAD XML` and `PARTITION` are
/// refused with 1235.
pub fn parse(sql: &str) -> Result<Option<LoadStmt>, SqlError> {
    let Some(toks) = crate::parse::statement_tokens(sql)? else {
        return Ok(None);
    };
    if !is_word(toks.first(), "LOAD") {
        return Ok(None);
    }
    if is_word(toks.get(1), "XML") {
        return Err(SqlError::unsupported("LOAD XML"));
    }
    if !is_word(toks.get(1), "DATA") {
        return Ok(None);
    }
    const S: &str = "LOAD DATA";
    let dialect = MySqlDialect {};
    let mut p = Parser::new(&dialect).with_tokens(toks[2..].to_vec());
    let _ = take_word(&mut p, "LOW_PRIORITY") || take_word(&mut p, "CONCURRENT");
    let local = take_word(&mut p, "LOCAL");
    expect_word(&mut p, "INFILE", S)?;
    let file = String::from_utf8_lossy(&string(&mut p, "the file name")?).into_owned();
    let dup = if take_word(&mut p, "REPLACE") {
        LoadDup::Replace
    } else if take_word(&mut p, "IGNORE") {
        LoadDup::Ignore
    } else {
        LoadDup::Error
    };
    expect_word(&mut p, "INTO", S)?;
    expect_word(&mut p, "TABLE", S)?;
    let table = p
        .parse_object_name(false)
        .map_err(|e| syntax(format!("{e} (the table of LOAD DATA)")))?;
    if peek_word(&p, "PARTITION") {
        return Err(SqlError::unsupported("LOAD DATA ... PARTITION"));
    }
    charset_clause(&mut p, S)?;
    let mut format = Format::default();
    format_clauses(&mut p, &mut format, S)?;
    let mut ignore_lines = 0;
    if take_word(&mut p, "IGNORE") {
        ignore_lines = p
            .parse_literal_uint()
            .map_err(|e| syntax(format!("{e} (IGNORE n LINES)")))?;
        if !(take_word(&mut p, "LINES") || take_word(&mut p, "ROWS")) {
            return Err(syntax("expected LINES or ROWS after IGNORE n"));
        }
    }
    let mut targets = Vec::new();
    if p.peek_token().token == Token::LParen {
        p.next_token();
        if p.peek_token().token == Token::RParen {
            p.next_token();
        } else {
            loop {
                let t = match p.next_token().token {
                    Token::Word(w) => match w.value.strip_prefix('@') {
                        Some(v) if w.quote_style.is_none() => Target::Var(v.to_ascii_lowercase()),
                        _ => Target::Column(w.value),
                    },
                    other => {
                        return Err(syntax(format!(
                            "expected a column or @variable in LOAD DATA's list, found {other}"
                        )))
                    }
                };
                targets.push(t);
                match p.next_token().token {
                    Token::Comma => {}
                    Token::RParen => break,
                    other => {
                        return Err(syntax(format!(
                            "expected , or ) in LOAD DATA's list, found {other}"
                        )))
                    }
                }
            }
        }
    }
    let mut sets = Vec::new();
    if take_word(&mut p, "SET") {
        sets = p
            .parse_comma_separated(Parser::parse_assignment)
            .map_err(|e| syntax(format!("{e} (LOAD DATA ... SET)")))?;
    }
    let rest = p.peek_token().token;
    if rest != Token::EOF {
        return Err(syntax(format!("unexpected {rest} in LOAD DATA")));
    }
    Ok(Some(LoadStmt {
        local,
        file,
        dup,
        table,
        format,
        ignore_lines,
        targets,
        sets,
    }))
}

/// `SELECT ... INTO OUTFILE 'file' [CHARACTER SET cs] [FIELDS ...] [LINES ...]` or `INTO
/// DUMPFILE 'file'`: where a query's rows go on the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IntoFile {
    pub file: String,
    /// DUMPFILE: one row, its values' bytes one after another, nothing escaped.
    pub dump: bool,
    pub format: Format,
    /// `OPTIONALLY ENCLOSED BY`: only string values are enclosed.
    pub optionally: bool,
    /// Written after FROM (`SELECT ... FROM t INTO OUTFILE ...`): MariaDB's deprecated
    /// place, warning 1287.
    pub after_from: bool,
}

/// Reads the clause after `INTO` when it is `OUTFILE` / `DUMPFILE` (None: it is not), and
/// how many of `toks` (no whitespace) it takes.
pub fn parse_into_file(toks: &[Token]) -> Result<Option<(IntoFile, usize)>, SqlError> {
    let dump = match toks.first() {
        t if is_word(t, "OUTFILE") => false,
        t if is_word(t, "DUMPFILE") => true,
        _ => return Ok(None),
    };
    let stmt = if dump {
        "INTO DUMPFILE"
    } else {
        "INTO OUTFILE"
    };
    let dialect = MySqlDialect {};
    let mut p = Parser::new(&dialect).with_tokens(toks[1..].to_vec());
    let file = String::from_utf8_lossy(&string(&mut p, "the file name")?).into_owned();
    let mut format = Format::default();
    let mut optionally = false;
    if !dump {
        charset_clause(&mut p, stmt)?;
        optionally = format_clauses(&mut p, &mut format, stmt)?;
    }
    Ok(Some((
        IntoFile {
            file,
            dump,
            format,
            optionally,
            after_from: false,
        },
        1 + p.index(),
    )))
}

/// Writes `rows` as INTO OUTFILE / DUMPFILE `into` says: values as a result set shows them;
/// for OUTFILE each line is `LINES STARTING BY`, the fields joined by the field terminator,
/// then the line terminator, NULL as `\N` (the word NULL without an escape character); in a
/// string (or date and time) value the escape character before itself, the enclosing
/// character, NUL (as `0`) and, in a field not enclosed, the terminators' first bytes — what
/// `FieldReader` reads back. DUMPFILE writes
/// the one row's values back to back, nothing added.
pub fn write_rows(
    out: &mut dyn std::io::Write,
    into: &IntoFile,
    columns: &[crate::result::Column],
    rows: &[Vec<Value>],
) -> std::io::Result<()> {
    use crate::result::{column_text, ColumnKind as K};
    let f = &into.format;
    for row in rows {
        if into.dump {
            for (c, v) in columns.iter().zip(row) {
                if let Some(t) = column_text(c, v) {
                    out.write_all(&t)?;
                }
            }
            continue;
        }
        out.write_all(&f.line_start)?;
        for (i, (c, v)) in columns.iter().zip(row).enumerate() {
            if i > 0 {
                out.write_all(&f.field_term)?;
            }
            let Some(text) = column_text(c, v) else {
                match f.escaped {
                    Some(e) => out.write_all(&[e, b'N'])?,
                    None => out.write_all(b"NULL")?,
                }
                continue;
            };
            // OPTIONALLY: strings (and dates and times, which MariaDB writes as strings).
            let stringy = c.is_text
                || matches!(
                    c.kind,
                    K::String
                        | K::VarString
                        | K::Blob
                        | K::Date
                        | K::DateTime
                        | K::Timestamp
                        | K::Time
                );
            let enclose = f.enclosed.filter(|_| !into.optionally || stringy);
            if let Some(q) = enclose {
                out.write_all(&[q])?;
            }
            // (Numbers, BIT values and the like are written as they are, as MariaDB does.)
            match f.escaped.filter(|_| stringy) {
                None => out.write_all(&text)?,
                Some(e) => {
                    let special = |b: u8| {
                        b == e
                            || b == 0
                            || Some(b) == f.enclosed
                            || (enclose.is_none()
                                && (Some(&b) == f.field_term.first()
                                    || Some(&b) == f.line_term.first()))
                    };
                    let mut from = 0;
                    for (k, &b) in text.iter().enumerate() {
                        if special(b) {
                            out.write_all(&text[from..k])?;
                            out.write_all(&[e, if b == 0 { b'0' } else { b }])?;
                            from = k + 1;
                        }
                    }
                    out.write_all(&text[from..])?;
                }
            }
            if let Some(q) = enclose {
                out.write_all(&[q])?;
            }
        }
        out.write_all(&f.line_term)?;
    }
    Ok(())
}

/// The bytes of a hexadecimal literal's digits (`X'0d0a'`).
fn unhex(h: &str) -> Option<Vec<u8>> {
    if !h.len().is_multiple_of(2) {
        return None;
    }
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The file's character set: text is read as UTF-8 bytes (binary columns take the bytes as
/// they are), so the UTF-8 family, `binary` and `ascii` are accepted.
fn charset(t: &Token) -> Result<(), SqlError> {
    let name = match t {
        Token::Word(w) => w.value.to_ascii_lowercase(),
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.to_ascii_lowercase(),
        other => return Err(syntax(format!("expected a character set, found {other}"))),
    };
    match name.as_str() {
        "utf8" | "utf8mb3" | "utf8mb4" | "binary" | "ascii" | "default" => Ok(()),
        _ => Err(SqlError::unsupported(format!(
            "LOAD DATA ... CHARACTER SET {name} (files are read as utf8mb4)"
        ))),
    }
}

/// ENCLOSED BY / ESCAPED BY take one character, or none.
fn one_char(s: Vec<u8>) -> Result<Option<u8>, SqlError> {
    match s.as_slice() {
        [] => Ok(None),
        [c] => Ok(Some(*c)),
        _ => Err(SqlError::new(
            1083,
            "42000",
            "Field separator argument is not what is expected; check the manual",
        )),
    }
}

/// A planned `LOAD DATA`.
#[derive(Clone, Debug)]
pub struct LoadPlan {
    /// The target table, the columns the fields fill (`col_map[c]`: the field position of
    /// column c, or a SET assignment's) and the duplicate rule; `rows` is empty.
    pub insert: InsertPlan,
    pub local: bool,
    pub file: String,
    pub format: Format,
    pub ignore_lines: u64,
    /// Per field: the table column it fills, or the variable (index into `vars`).
    pub fields: Vec<FieldDest>,
    /// The `@variables` of the field list, in order of first appearance.
    pub vars: Vec<String>,
    /// `SET col = expr`: evaluated over the row (fields filled so far) with the variables as
    /// parameters.
    pub sets: Vec<(usize, Expr)>,
    /// Data problems and duplicate keys are warnings (IGNORE, or LOCAL without REPLACE).
    pub ignore: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldDest {
    Column(usize),
    Var(usize),
}

impl LoadPlan {
    pub fn table(&self) -> &Arc<Table> {
        &self.insert.table
    }
    /// REPLACE deletes rows: it needs DELETE besides INSERT.
    pub fn replaces(&self) -> bool {
        matches!(self.insert.on_duplicate, OnDuplicate::Replace)
    }
}

/// Plans `s`: the table (a view is refused), the field list and the SET assignments.
pub fn plan(s: &LoadStmt, cx: &PlanCx) -> Result<LoadPlan, SqlError> {
    if cx.is_view(&s.table) {
        let (db, v) = cx.qualify(&s.table)?;
        return Err(SqlError::unsupported(format!(
            "LOAD DATA into view '{db}.{v}' (load its table)"
        )));
    }
    let table = cx.write_target(&s.table, "LOAD DATA")?;
    let def = &table.def;
    let mut col_map: Vec<Option<usize>> = vec![None; def.columns.len()];
    let mut vars: Vec<String> = Vec::new();
    let mut fields = Vec::new();
    let targets: Vec<Target> = if s.targets.is_empty() {
        def.columns
            .iter()
            .map(|c| Target::Column(c.name.clone()))
            .collect()
    } else {
        s.targets.clone()
    };
    for (k, t) in targets.iter().enumerate() {
        match t {
            Target::Column(n) => {
                let ci = def
                    .column_index(n)
                    .ok_or_else(|| crate::compile::unknown_column(n, "field list"))?;
                // (Named twice: the later field wins, as in MariaDB.)
                col_map[ci] = Some(k);
                fields.push(FieldDest::Column(ci));
            }
            Target::Var(v) => {
                let i = match vars.iter().position(|x| x == v) {
                    Some(i) => i,
                    None => {
                        vars.push(v.clone());
                        vars.len() - 1
                    }
                };
                fields.push(FieldDest::Var(i));
            }
        }
    }
    let scope = crate::plan::table_scope(&table, None);
    let mut sets = Vec::with_capacity(s.sets.len());
    for a in &s.sets {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let name = crate::compile::object_name_last(n);
        let ci = def
            .column_index(&name)
            .ok_or_else(|| crate::compile::unknown_column(&name, "field list"))?;
        // (A position past the fields: the column counts as given. A column also in the
        // field list is set from its field, then by the assignment, as in MariaDB.)
        col_map[ci].get_or_insert(targets.len() + sets.len());
        let mut c = crate::compile::Compiler::new(&scope, &[]);
        c.clause = "SET";
        c.user_params = &vars;
        sets.push((ci, c.compile(&a.value)?));
    }
    let on_duplicate = match s.dup {
        LoadDup::Error => OnDuplicate::Fail,
        LoadDup::Ignore => OnDuplicate::Ignore,
        LoadDup::Replace => OnDuplicate::Replace,
    };
    // LOCAL without REPLACE: the client's file cannot be stopped, so it reads as IGNORE.
    let ignore = s.dup == LoadDup::Ignore || (s.local && s.dup == LoadDup::Error);
    let on_duplicate = match (ignore, on_duplicate) {
        (true, OnDuplicate::Fail) => OnDuplicate::Ignore,
        (_, d) => d,
    };
    Ok(LoadPlan {
        insert: InsertPlan {
            rows: Vec::new(),
            col_map,
            checks: crate::check::RowChecks::of(&table)?,
            on_duplicate,
            select: None,
            check: None,
            table,
        },
        local: s.local,
        file: s.file.clone(),
        format: s.format.clone(),
        ignore_lines: s.ignore_lines,
        fields,
        vars,
        sets,
        ignore,
    })
}

/// What a load did: rows read, written, deleted by REPLACE, skipped as duplicates.
#[derive(Debug, Default)]
pub struct Loaded {
    pub records: u64,
    pub affected: u64,
    pub deleted: u64,
    pub skipped: u64,
    pub first_auto_id: Option<i64>,
    pub warnings: Raised,
    /// The `@variables` as the last row left them (the session keeps them).
    pub vars: Vec<(String, Value)>,
}

/// Reads every row of `src` into the plan's table in `txn`.
pub fn run(
    plan: &LoadPlan,
    src: &mut dyn Read,
    txn: &mut Txn,
    cx: &EvalCx,
) -> Result<Loaded, SqlError> {
    let t = &plan.insert.table;
    let cols = &t.def.columns;
    let mode = crate::expr::write_mode(cx.env);
    let lenient = plan.ignore || !mode.strict;
    let max_line = match cx.env.sysvar("max_allowed_packet", Some(true)) {
        Ok(Value::Int(n)) if n > 0 => n as usize,
        _ => 64 << 20,
    };
    let mut reader =
        FieldReader::new(src, &plan.format, max_line).keep_fields(plan.fields.len() + 1);
    let mut warnings = Raised::default();
    let mut tally = crate::exec::Tally::default();
    let fk = crate::fk::Fk::of(cx);
    crate::exec::check_unset_defaults(&plan.insert, lenient, &mut warnings)?;
    for _ in 0..plan.ignore_lines {
        if reader.next_line()?.is_none() {
            break;
        }
    }
    let mut vars: Vec<Value> = vec![Value::Null; plan.vars.len()];
    let mut n = 0usize;
    while let Some(line) = reader.next_line()? {
        crate::interrupt::check()?;
        n += 1;
        let dest = Dest {
            db: &t.db,
            table: &t.def.name,
            row: n,
            lenient,
        };
        let warn = |w: &mut Raised, e: SqlError| -> Result<(), SqlError> {
            if !lenient {
                return Err(e);
            }
            w.push(Warning::warn(e.code, e.message));
            Ok(())
        };
        // Columns given no field: their defaults (or zero values, warned about above).
        let mut row: Row = cols
            .iter()
            .map(|c| {
                crate::ddl::column_default(c).unwrap_or_else(|| crate::ddl::implicit_default(&c.ty))
            })
            .collect();
        let surplus = line.len() > plan.fields.len() || reader.had_surplus();
        let mut line = line.into_iter();
        for dest_of in &plan.fields {
            match (line.next(), *dest_of) {
                (Some(field), FieldDest::Var(i)) => {
                    vars[i] = field.map_or(Value::Null, Value::Bytes);
                }
                (None, FieldDest::Var(i)) => vars[i] = Value::Null,
                (Some(None), FieldDest::Column(ci)) => {
                    let col = &cols[ci];
                    row[ci] = if col.nullable || col.auto_increment {
                        Value::Null
                    } else if let Some(now) = now_for(&col.ty) {
                        now
                    } else {
                        warn(
                            &mut warnings,
                            SqlError::new(
                                1263,
                                "22004",
                                format!(
                                    "Column set to default value; NULL supplied to NOT NULL column '{}' at row {n}",
                                    col.name
                                ),
                            ),
                        )?;
                        crate::ddl::implicit_default(&col.ty)
                    };
                }
                (Some(Some(bytes)), FieldDest::Column(ci)) => {
                    row[ci] =
                        fit::fit(Value::Bytes(bytes.clone()), &cols[ci], &dest, &mut warnings)?;
                }
                (None, FieldDest::Column(ci)) => {
                    let col = &cols[ci];
                    warn(
                        &mut warnings,
                        SqlError::new(
                            1261,
                            "01000",
                            format!("Row {n} doesn't contain data for all columns"),
                        ),
                    )?;
                    // As MariaDB: NULL when the column's default is NULL, else its zero
                    // value (not its default), the current time for a TIMESTAMP.
                    row[ci] = match (crate::ddl::column_default(col), now_for(&col.ty)) {
                        (Some(Value::Null), _) => Value::Null,
                        (_, Some(now)) if !col.nullable => now,
                        _ => crate::ddl::implicit_default(&col.ty),
                    };
                }
            }
        }
        if !plan.sets.is_empty() {
            let scx = EvalCx {
                params: &vars,
                env: cx.env,
                subq: cx.subq,
                subplans: cx.subplans,
                runner: cx.runner,
            };
            for (ci, e) in &plan.sets {
                let v = {
                    let _writing = crate::expr::WrittenValues::begin(!lenient && mode.division);
                    e.eval(&row, &scx)?.into_owned()
                };
                let col = &cols[*ci];
                let mut v = fit::fit(v, col, &dest, &mut warnings)?;
                if v.is_null() && !col.nullable && !col.auto_increment {
                    let e = SqlError::new(
                        1048,
                        "23000",
                        format!("Column '{}' cannot be null", col.name),
                    );
                    warn(&mut warnings, e)?;
                    v = crate::ddl::implicit_default(&col.ty);
                }
                row[*ci] = v;
            }
        }
        crate::exec::put_row(
            &plan.insert,
            row,
            true,
            txn,
            cx,
            &fk,
            &dest,
            &mut warnings,
            &mut tally,
        )?;
        if surplus {
            warn(
                &mut warnings,
                SqlError::new(
                    1262,
                    "01000",
                    format!("Row {n} was truncated; it contained more data than there were input columns"),
                ),
            )?;
        }
    }
    let skipped = match plan.insert.on_duplicate {
        OnDuplicate::Ignore => tally.duplicates,
        _ => 0,
    };
    Ok(Loaded {
        records: n as u64,
        affected: tally.affected,
        deleted: tally.deleted,
        skipped,
        first_auto_id: tally.first_auto,
        warnings,
        // (A file without rows leaves the variables as they were, as MariaDB does.)
        vars: match n {
            0 => Vec::new(),
            _ => plan.vars.iter().cloned().zip(vars).collect(),
        },
    })
}

/// The current time for a TIMESTAMP column (what NULL or a missing field gives it).
fn now_for(ty: &ColumnType) -> Option<Value> {
    match ty {
        ColumnType::Timestamp(fsp) => {
            Some(Value::Bytes(crate::coerce::now_text(*fsp).into_bytes()))
        }
        _ => None,
    }
}

/// One field of a line: its bytes, or None for NULL (`\N`, or an unenclosed `NULL` when
/// fields may be enclosed).
pub type Field = Option<Vec<u8>>;

/// Splits a byte stream into lines of fields by a [`Format`].
pub struct FieldReader<'a> {
    src: &'a mut dyn Read,
    fmt: &'a Format,
    /// The escape character, unless it is also the enclosing one (MariaDB's CSV style
    /// `ENCLOSED BY '"' ESCAPED BY '"'`: then only a doubled `"` inside quotes stands for one).
    escape: Option<u8>,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    max_line: usize,
    /// Fields kept per line; the rest are read and dropped (only their presence counts).
    max_fields: usize,
    /// The last line had more fields than `max_fields`.
    surplus: bool,
}

/// How much is read from the source at a time.
const CHUNK: usize = 64 << 10;

impl<'a> FieldReader<'a> {
    pub fn new(src: &'a mut dyn Read, fmt: &'a Format, max_line: usize) -> FieldReader<'a> {
        FieldReader {
            src,
            fmt,
            escape: fmt.escaped.filter(|e| Some(*e) != fmt.enclosed),
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            eof: false,
            max_line,
            max_fields: usize::MAX,
            surplus: false,
        }
    }

    /// Keeps at most `n` fields per line (a line of nothing but terminators must not make
    /// millions of them); `had_surplus` tells whether the last line had more.
    pub fn keep_fields(mut self, n: usize) -> FieldReader<'a> {
        self.max_fields = n.max(1);
        self
    }

    /// The last line read had more fields than were kept.
    pub fn had_surplus(&self) -> bool {
        self.surplus
    }

    /// At least `n` unread bytes buffered, unless the source ends first. False: fewer.
    fn fill(&mut self, n: usize) -> Result<bool, SqlError> {
        while self.buf.len() - self.pos < n && !self.eof {
            if self.pos > 0 && self.pos == self.buf.len() {
                self.buf.clear();
                self.pos = 0;
            } else if self.pos >= CHUNK {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let at = self.buf.len();
            self.buf.resize(at + CHUNK, 0);
            let got = loop {
                match self.src.read(&mut self.buf[at..]) {
                    Ok(g) => break g,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(at);
                        return Err(read_error(e));
                    }
                }
            };
            self.buf.truncate(at + got);
            if got == 0 {
                self.eof = true;
            }
        }
        Ok(self.buf.len() - self.pos >= n)
    }

    /// Whether the unread bytes start with `s` (never for an empty `s`).
    fn at(&mut self, s: &[u8]) -> Result<bool, SqlError> {
        if s.is_empty() || !self.fill(s.len())? {
            return Ok(false);
        }
        Ok(self.buf[self.pos..].starts_with(s))
    }

    fn peek(&mut self) -> Result<Option<u8>, SqlError> {
        Ok(match self.fill(1)? {
            true => Some(self.buf[self.pos]),
            false => None,
        })
    }

    /// The next line's fields; None at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<Vec<Field>>, SqlError> {
        let fmt = self.fmt;
        if !fmt.line_start.is_empty() {
            // Everything up to the prefix is skipped (a line without it entirely).
            loop {
                if self.at(&fmt.line_start)? {
                    self.pos += fmt.line_start.len();
                    break;
                }
                if self.peek()?.is_none() {
                    return Ok(None);
                }
                self.pos += 1;
            }
        } else if self.peek()?.is_none() {
            return Ok(None);
        }
        let mut fields = Vec::new();
        let mut size = 0usize;
        self.surplus = false;
        loop {
            let (field, line_ends) = self.field(&mut size)?;
            if fields.len() < self.max_fields {
                fields.push(field);
            } else {
                self.surplus = true;
            }
            if line_ends {
                return Ok(Some(fields));
            }
        }
    }

    fn too_long(&self) -> SqlError {
        SqlError::new(
            1301,
            "HY000",
            format!(
                "A line of the file is longer than max_allowed_packet ({} bytes)",
                self.max_line
            ),
        )
    }

    /// One field and whether the line ends after it (at its terminator or the input's end).
    fn field(&mut self, size: &mut usize) -> Result<(Field, bool), SqlError> {
        let fmt = self.fmt;
        let mut out = Vec::new();
        let enclosed = match fmt.enclosed {
            Some(q) if self.peek()? == Some(q) => {
                self.pos += 1;
                true
            }
            _ => false,
        };
        let mut escaped_n = false;
        // The bytes that may end or change a field here; any other is taken as it is.
        let specials: [Option<u8>; 3] = match enclosed {
            true => [self.escape, fmt.enclosed, None],
            false => [
                self.escape,
                fmt.field_term.first().copied(),
                fmt.line_term.first().copied(),
            ],
        };
        loop {
            // A run of plain bytes at once.
            let avail = &self.buf[self.pos..];
            let run = avail
                .iter()
                .position(|b| specials.contains(&Some(*b)))
                .unwrap_or(avail.len());
            if run > 0 {
                *size += run;
                if *size > self.max_line {
                    return Err(self.too_long());
                }
                out.extend_from_slice(&avail[..run]);
                self.pos += run;
                escaped_n = false;
                continue;
            }
            *size += 1;
            if *size > self.max_line {
                return Err(self.too_long());
            }
            let Some(b) = self.peek()? else {
                return Ok((self.finish(out, enclosed, escaped_n), true));
            };
            if Some(b) == self.escape {
                self.pos += 1;
                match self.peek()? {
                    Some(c) => {
                        self.pos += 1;
                        escaped_n = c == b'N' && out.is_empty();
                        out.push(unescape(c));
                        continue;
                    }
                    None => {
                        out.push(b);
                        return Ok((self.finish(out, enclosed, false), true));
                    }
                }
            }
            if enclosed {
                if Some(b) == fmt.enclosed {
                    self.pos += 1;
                    if self.peek()? == fmt.enclosed {
                        // A doubled enclosing character is one of it.
                        self.pos += 1;
                        out.push(b);
                        continue;
                    }
                    if self.at(&fmt.line_term)? {
                        self.pos += fmt.line_term.len();
                        return Ok((self.finish(out, true, escaped_n), true));
                    }
                    if self.at(&fmt.field_term)? {
                        self.pos += fmt.field_term.len();
                        return Ok((self.finish(out, true, escaped_n), false));
                    }
                    if self.peek()?.is_none() {
                        return Ok((self.finish(out, true, escaped_n), true));
                    }
                    // Not followed by a terminator: part of the value.
                    out.push(b);
                    continue;
                }
            } else {
                if self.at(&fmt.line_term)? {
                    self.pos += fmt.line_term.len();
                    return Ok((self.finish(out, false, escaped_n), true));
                }
                if self.at(&fmt.field_term)? {
                    self.pos += fmt.field_term.len();
                    return Ok((self.finish(out, false, escaped_n), false));
                }
            }
            escaped_n = false;
            out.push(b);
            self.pos += 1;
        }
    }

    /// A field's value: NULL for `\N` (enclosed or not), or an unenclosed `NULL` when fields
    /// may be enclosed (as MariaDB reads them).
    fn finish(&self, out: Vec<u8>, enclosed: bool, escaped_n: bool) -> Field {
        let null_word = !enclosed && self.fmt.enclosed.is_some() && out == b"NULL";
        if (escaped_n && out == b"N") || null_word {
            return None;
        }
        Some(out)
    }
}

/// The character an escape sequence `\c` stands for.
fn unescape(c: u8) -> u8 {
    match c {
        b'0' => 0,
        b'b' => 8,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'Z' => 26,
        other => other,
    }
}

/// An error reading the file or the client's stream.
fn read_error(e: std::io::Error) -> SqlError {
    SqlError::new(
        1158,
        "08S01",
        format!("Got an error reading the file of LOAD DATA: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(data: &[u8], fmt: &Format) -> Vec<Vec<Field>> {
        let mut src = data;
        let mut r = FieldReader::new(&mut src, fmt, 1 << 20);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    fn f(s: &str) -> Field {
        Some(s.as_bytes().to_vec())
    }

    fn csv() -> Format {
        Format {
            field_term: b",".to_vec(),
            enclosed: Some(b'"'),
            ..Format::default()
        }
    }

    #[test]
    fn tab_separated_lines_with_escapes_and_nulls() {
        let got = lines(b"1\ta\\tb\t\\N\n2\t\\\\N\t\n\n3", &Format::default());
        assert_eq!(
            got,
            vec![
                vec![f("1"), f("a\tb"), None],
                vec![f("2"), f("\\N"), f("")],
                vec![f("")],
                vec![f("3")],
            ]
        );
    }

    #[test]
    fn enclosed_fields_hold_terminators_and_doubled_quotes() {
        let got = lines(
            b"\"a,b\",\"q\"\"x\\\"z\",NULL,\"NULL\"\n\"line\nbreak\",\n",
            &csv(),
        );
        assert_eq!(
            got,
            vec![
                vec![f("a,b"), f("q\"x\"z"), None, f("NULL")],
                vec![f("line\nbreak"), f("")],
            ]
        );
    }

    #[test]
    fn a_quote_not_before_a_terminator_is_part_of_the_value() {
        let got = lines(b"\"ab\"cd\",x\n", &csv());
        assert_eq!(got, vec![vec![f("ab\"cd"), f("x")]]);
    }

    #[test]
    fn a_quote_that_is_also_the_escape_character_only_doubles() {
        let fmt = Format {
            escaped: Some(b'"'),
            ..csv()
        };
        let got = lines(b"\"a\"\"b\",\"c,d\"\n\"x\",\"y\\\\z\"\n", &fmt);
        assert_eq!(
            got,
            vec![vec![f("a\"b"), f("c,d")], vec![f("x"), f("y\\\\z")]]
        );
    }

    #[test]
    fn a_line_of_terminators_keeps_only_the_fields_asked_for() {
        let data = vec![b'\t'; 1 << 20];
        let mut src = data.as_slice();
        let fmt = Format::default();
        let mut r = FieldReader::new(&mut src, &fmt, 1 << 21).keep_fields(3);
        let line = r.next_line().unwrap().unwrap();
        assert_eq!(line, vec![f(""), f(""), f("")]);
        assert!(r.had_surplus());
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn multi_byte_terminators_and_line_prefixes() {
        let fmt = Format {
            field_term: b"||".to_vec(),
            line_term: b"\r\n".to_vec(),
            line_start: b"xxx".to_vec(),
            ..Format::default()
        };
        let got = lines(b"xxx1||a|b\r\nno prefix here\r\nzzxxx2||c\r\n", &fmt);
        assert_eq!(got, vec![vec![f("1"), f("a|b")], vec![f("2"), f("c")]]);
    }

    #[test]
    fn an_empty_input_has_no_lines_and_a_missing_last_terminator_is_fine() {
        assert!(lines(b"", &Format::default()).is_empty());
        assert_eq!(
            lines(b"a\tb", &Format::default()),
            vec![vec![f("a"), f("b")]]
        );
    }

    #[test]
    fn a_line_longer_than_the_limit_is_an_error() {
        let data = vec![b'x'; 5000];
        let mut src = data.as_slice();
        let fmt = Format::default();
        let mut r = FieldReader::new(&mut src, &fmt, 1000);
        assert_eq!(r.next_line().unwrap_err().code, 1301);
    }

    /// Whatever bytes the values hold, what `write_rows` writes (INTO OUTFILE) reads back
    /// as it was, across read-buffer boundaries, plain or enclosed.
    #[test]
    fn written_rows_of_any_bytes_read_back_as_written() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (fmt, optionally) in [(Format::default(), false), (csv(), false), (csv(), true)] {
            let columns: Vec<crate::result::Column> = (0..5)
                .map(|i| match i % 2 {
                    0 => crate::result::Column::text(format!("c{i}")),
                    _ => crate::result::Column::bigint(format!("c{i}")),
                })
                .collect();
            let mut rows = Vec::new();
            let mut want = Vec::new();
            for _ in 0..3000 {
                let mut row = Vec::new();
                let mut line = Vec::new();
                for (k, _) in columns.iter().enumerate() {
                    let field: Field = if next() % 10 == 0 {
                        None
                    } else if k % 2 == 1 {
                        Some((next() as i64 % 100_000).to_string().into_bytes())
                    } else {
                        let len = (next() % 40) as usize;
                        Some((0..len).map(|_| (next() % 256) as u8).collect())
                    };
                    row.push(match &field {
                        None => Value::Null,
                        Some(b) if k % 2 == 1 => {
                            Value::Int(std::str::from_utf8(b).unwrap().parse().unwrap())
                        }
                        Some(b) => Value::Bytes(b.clone()),
                    });
                    line.push(field);
                }
                rows.push(row);
                want.push(line);
            }
            let into = IntoFile {
                file: String::new(),
                dump: false,
                format: fmt.clone(),
                optionally,
                after_from: false,
            };
            let mut data = Vec::new();
            write_rows(&mut data, &into, &columns, &rows).unwrap();
            assert_eq!(lines(&data, &fmt), want);
        }
    }

    #[test]
    fn into_file_clauses_parse_and_say_how_long_they_are() {
        let toks = |sql: &str| crate::parse::statement_tokens(sql).unwrap().unwrap();
        let t = toks("OUTFILE '/tmp/x' FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\r\n' FROM t");
        let (into, n) = parse_into_file(&t).unwrap().unwrap();
        assert_eq!(into.file, "/tmp/x");
        assert!(into.optionally && !into.dump);
        assert_eq!(into.format.line_term, b"\r\n");
        assert_eq!(t[n].to_string(), "FROM");
        let t = toks("DUMPFILE 'd'");
        let (into, n) = parse_into_file(&t).unwrap().unwrap();
        assert!(into.dump);
        assert_eq!(n, t.len());
        assert!(parse_into_file(&toks("@a, @b")).unwrap().is_none());
    }

    #[test]
    fn statements_parse_with_every_clause() {
        let s = parse(
            "LOAD DATA LOCAL INFILE '/tmp/x.csv' REPLACE INTO TABLE db.t CHARACTER SET utf8mb4 \
             FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' ESCAPED BY '\\\\' \
             LINES STARTING BY 'p' TERMINATED BY '\\r\\n' IGNORE 1 LINES (a, @b, c) \
             SET d = @b * 2, e = NOW()",
        )
        .unwrap()
        .unwrap();
        assert!(s.local);
        assert_eq!(s.file, "/tmp/x.csv");
        assert_eq!(s.dup, LoadDup::Replace);
        assert_eq!(s.table.to_string(), "db.t");
        assert_eq!(
            s.format,
            Format {
                field_term: b",".to_vec(),
                enclosed: Some(b'"'),
                escaped: Some(b'\\'),
                line_start: b"p".to_vec(),
                line_term: b"\r\n".to_vec(),
            }
        );
        assert_eq!(s.ignore_lines, 1);
        assert_eq!(
            s.targets,
            vec![
                Target::Column("a".into()),
                Target::Var("b".into()),
                Target::Column("c".into())
            ]
        );
        assert_eq!(s.sets.len(), 2);
        assert!(parse("SELECT 1").unwrap().is_none());
        assert_eq!(
            parse("LOAD XML INFILE 'x' INTO TABLE t").unwrap_err().code,
            1235
        );
        assert_eq!(
            parse("LOAD DATA INFILE 'x' INTO TABLE t FIELDS ENCLOSED BY 'ab'")
                .unwrap_err()
                .code,
            1083
        );
        assert_eq!(parse("LOAD DATA INFILE 'x' INTO t").unwrap_err().code, 1064);
        assert_eq!(
            parse("LOAD DATA INFILE 'x' INTO TABLE t garbage")
                .unwrap_err()
                .code,
            1064
        );
    }
}
