//! The account statements, read and run: CREATE / ALTER / DROP / RENAME USER, SET PASSWORD,
//! GRANT, REVOKE, SHOW GRANTS and SHOW CREATE USER (sqlparser reads none of them in MariaDB's
//! form, `'user'@'host'`). Roles, proxies, column privileges, TLS requirements and resource
//! limits are refused with 1235 naming the clause.
//!
//! Owns: a small lexer for these statements, their syntax (`parse`), and what they do to
//! `crate::accounts::Accounts` (`run`), with MariaDB's codes: 1396 (operation failed for an
//! account), 1133 (no such account for GRANT / SET PASSWORD), 1141 / 1147 (no such grant),
//! 1221 / 1144 (privilege at the wrong level), 1470 (name too long), notes 1973 / 1974.
//! Must never: accept a statement it did not read to its end, or write a password anywhere
//! but as its hash.

use crate::accounts::{self, Account, Level, Need};
use crate::result::{Column, QueryResult, SqlError, Value, Warning};
use crate::shared::Shared;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    /// A quoted string or a backquoted name.
    Quoted(String),
    Sym(char),
}

fn lex(sql: &str) -> Result<Vec<Tok>, SqlError> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = crate::parse::line_comment_end(b, i) {
            i = end;
            continue;
        }
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\r' | b'\n' | b';' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                // `/*! ... */` and `/*M! ... */` hold code (after an optional version).
                let code = matches!(b.get(i + 2), Some(b'!'))
                    || (b.get(i + 2) == Some(&b'M') && b.get(i + 3) == Some(&b'!'));
                // (Only for server versions up to ours: `/*M!999999 ... */` is a comment.)
                let mut j = i + if code && b[i + 2] == b'M' { 4 } else { 3 };
                let digits_at = j;
                while code && j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                let applies = !code
                    || j == digits_at
                    || sql[digits_at..j]
                        .parse::<u64>()
                        .is_ok_and(|v| v <= crate::parse::MARIADB_VERSION_ID);
                if code && applies {
                    i = j;
                } else {
                    let end = sql[i + 2..]
                        .find("*/")
                        .ok_or_else(|| SqlError::syntax("unterminated comment"))?;
                    i += end + 4;
                }
            }
            b'*' if b.get(i + 1) == Some(&b'/') => i += 2,
            b'\'' | b'"' | b'`' => {
                let q = c;
                let mut s = Vec::new();
                i += 1;
                loop {
                    let Some(&d) = b.get(i) else {
                        return Err(SqlError::syntax("unterminated quoted text"));
                    };
                    if d == q {
                        if b.get(i + 1) == Some(&q) {
                            s.push(q);
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    if d == b'\\' && q != b'`' {
                        let e = *b
                            .get(i + 1)
                            .ok_or_else(|| SqlError::syntax("unterminated quoted text"))?;
                        // `\%` and `\_` keep their backslash (LIKE patterns), as MySQL.
                        if e == b'%' || e == b'_' {
                            s.push(b'\\');
                        }
                        s.push(match e {
                            b'n' => b'\n',
                            b't' => b'\t',
                            b'r' => b'\r',
                            b'0' => 0,
                            other => other,
                        });
                        i += 2;
                        continue;
                    }
                    s.push(d);
                    i += 1;
                }
                let s = String::from_utf8(s)
                    .map_err(|_| SqlError::syntax("quoted text is not UTF-8"))?;
                out.push(Tok::Quoted(s));
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                out.push(Tok::Word(sql[start..i].to_string()));
            }
            b',' | b'.' | b'(' | b')' | b'=' | b'*' | b'@' => {
                out.push(Tok::Sym(c as char));
                i += 1;
            }
            _ => {
                return Err(SqlError::syntax(format!(
                    "near '{}'",
                    sql[i..].chars().take(40).collect::<String>()
                )))
            }
        }
    }
    Ok(out)
}

/// A named account or the session's own.
#[derive(Clone, Debug, PartialEq)]
pub enum AccountName {
    Named(String, String),
    Current,
}

/// `IDENTIFIED ...`: the hash to keep (None: no password).
#[derive(Clone, Debug, PartialEq)]
pub struct Auth(pub Option<[u8; 20]>);

#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    pub name: AccountName,
    pub auth: Option<Auth>,
}

/// `ON ...` of GRANT / REVOKE as written (`*` and unqualified names resolve in the current
/// database).
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Global,
    /// `*` (current database) or `db.*`.
    Db(Option<String>),
    /// `t` or `db.t`.
    Table(Option<String>, String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum AccountStmt {
    CreateUser {
        or_replace: bool,
        if_not_exists: bool,
        specs: Vec<Spec>,
    },
    AlterUser {
        if_exists: bool,
        specs: Vec<Spec>,
    },
    DropUser {
        if_exists: bool,
        names: Vec<AccountName>,
    },
    RenameUser {
        pairs: Vec<(AccountName, AccountName)>,
    },
    SetPassword {
        name: AccountName,
        auth: Auth,
    },
    /// `privs`: None for ALL [PRIVILEGES].
    Grant {
        privs: Option<u64>,
        target: Target,
        to: Vec<Spec>,
        grant_option: bool,
    },
    Revoke {
        privs: Option<u64>,
        target: Target,
        from: Vec<AccountName>,
    },
    /// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM ...`.
    RevokeAll {
        from: Vec<AccountName>,
    },
    ShowGrants(AccountName),
    ShowCreateUser(AccountName),
}

struct P {
    toks: Vec<Tok>,
    at: usize,
}

impl P {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Word(w)) if w.eq_ignore_ascii_case(k))
    }
    fn kw(&mut self, k: &str) -> bool {
        let hit = self.is_kw(k);
        if hit {
            self.at += 1;
        }
        hit
    }
    fn kws(&mut self, ks: &[&str]) -> bool {
        let save = self.at;
        for k in ks {
            if !self.kw(k) {
                self.at = save;
                return false;
            }
        }
        true
    }
    fn sym(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(&Tok::Sym(c));
        if hit {
            self.at += 1;
        }
        hit
    }
    fn err(&self) -> SqlError {
        let near: Vec<String> = self.toks[self.at.min(self.toks.len())..]
            .iter()
            .take(6)
            .map(|t| match t {
                Tok::Word(w) => w.clone(),
                Tok::Quoted(q) => format!("'{q}'"),
                Tok::Sym(c) => c.to_string(),
            })
            .collect();
        SqlError::syntax(format!("near '{}'", near.join(" ")))
    }
    fn expect_kw(&mut self, k: &str) -> Result<(), SqlError> {
        if self.kw(k) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn expect_sym(&mut self, c: char) -> Result<(), SqlError> {
        if self.sym(c) {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn done(&self) -> Result<(), SqlError> {
        if self.at == self.toks.len() {
            Ok(())
        } else {
            Err(self.err())
        }
    }
    fn name(&mut self) -> Result<String, SqlError> {
        match self.peek() {
            Some(Tok::Word(w) | Tok::Quoted(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }
    fn string(&mut self) -> Result<String, SqlError> {
        match self.peek() {
            Some(Tok::Quoted(w)) => {
                let w = w.clone();
                self.at += 1;
                Ok(w)
            }
            _ => Err(self.err()),
        }
    }
    /// `user[@host]` / `CURRENT_USER[()]`.
    fn account(&mut self) -> Result<AccountName, SqlError> {
        if self.kw("CURRENT_USER") {
            if self.sym('(') {
                self.expect_sym(')')?;
            }
            return Ok(AccountName::Current);
        }
        let user = self.name()?;
        let host = if self.sym('@') {
            self.name()?
        } else {
            "%".to_string()
        };
        if user.chars().count() > 128 {
            return Err(too_long(&user, "user name", 128));
        }
        if host.chars().count() > 255 {
            return Err(too_long(&host, "host name", 255));
        }
        Ok(AccountName::Named(user, host.to_ascii_lowercase()))
    }
    fn accounts(&mut self) -> Result<Vec<AccountName>, SqlError> {
        let mut out = vec![self.account()?];
        while self.sym(',') {
            out.push(self.account()?);
        }
        Ok(out)
    }
    /// `IDENTIFIED BY 'pw' | BY PASSWORD 'hash' | {VIA | WITH} mysql_native_password [{USING |
    /// AS} {'hash' | PASSWORD('pw')} | BY 'pw']`.
    fn auth(&mut self) -> Result<Option<Auth>, SqlError> {
        if !self.kw("IDENTIFIED") {
            return Ok(None);
        }
        if self.kw("BY") {
            if self.kw("PASSWORD") {
                return Ok(Some(self.hash()?));
            }
            return Ok(Some(password(&self.string()?)));
        }
        if self.kw("VIA") || self.kw("WITH") {
            let plugin = self.name()?;
            if !plugin.eq_ignore_ascii_case("mysql_native_password") {
                return Err(SqlError::unsupported(format!(
                    "authentication plugin '{plugin}' (only mysql_native_password)"
                )));
            }
            if self.kw("USING") || self.kw("AS") {
                if self.kw("PASSWORD") {
                    self.expect_sym('(')?;
                    let p = self.string()?;
                    self.expect_sym(')')?;
                    return Ok(Some(password(&p)));
                }
                return Ok(Some(self.hash()?));
            }
            if self.kw("BY") {
                return Ok(Some(password(&self.string()?)));
            }
            return Ok(Some(Auth(None)));
        }
        Err(self.err())
    }
    fn hash(&mut self) -> Result<Auth, SqlError> {
        let h = self.string()?;
        if h.is_empty() {
            return Ok(Auth(None));
        }
        accounts::parse_hash(&h)
            .map(|h| Auth(Some(h)))
            .ok_or_else(|| {
                SqlError::new(
                    1372,
                    "HY000",
                    "Password hash should be a 41-digit hexadecimal number",
                )
            })
    }
    fn specs(&mut self) -> Result<Vec<Spec>, SqlError> {
        let mut out = Vec::new();
        loop {
            let name = self.account()?;
            let auth = self.auth()?;
            out.push(Spec { name, auth });
            if !self.sym(',') {
                return Ok(out);
            }
        }
    }
    /// Clauses tierdb does not keep: refused by name.
    fn refuse_extras(&self) -> Result<(), SqlError> {
        for (k, what) in [
            ("REQUIRE", "REQUIRE (TLS options)"),
            ("PASSWORD", "PASSWORD EXPIRE"),
            ("ACCOUNT", "ACCOUNT LOCK / UNLOCK"),
            ("WITH", "resource limits (WITH MAX_...)"),
        ] {
            if self.is_kw(k) {
                return Err(SqlError::unsupported(what));
            }
        }
        Ok(())
    }
    /// The privileges before `ON`: None for ALL [PRIVILEGES].
    fn privileges(&mut self) -> Result<Option<u64>, SqlError> {
        if self.is_kw("ALL") {
            self.at += 1;
            self.kw("PRIVILEGES");
            return Ok(None);
        }
        let mut bits = 0;
        loop {
            let mut words: Vec<String> = Vec::new();
            while let Some(Tok::Word(w)) = self.peek() {
                if w.eq_ignore_ascii_case("ON") || w.eq_ignore_ascii_case("TO") {
                    break;
                }
                words.push(w.to_ascii_uppercase());
                self.at += 1;
            }
            if self.peek() == Some(&Tok::Sym('(')) {
                return Err(SqlError::unsupported("column privileges"));
            }
            let phrase = words.join(" ");
            if phrase == "USAGE" {
            } else if phrase == "PROXY" {
                return Err(SqlError::unsupported("GRANT PROXY"));
            } else if let Some(b) = accounts::privilege_named(&phrase) {
                bits |= b;
            } else if !phrase.is_empty() && (self.is_kw("TO") || self.is_kw("FROM")) {
                return Err(SqlError::unsupported("roles"));
            } else {
                return Err(self.err());
            }
            if !self.sym(',') {
                return Ok(Some(bits));
            }
        }
    }
    fn target(&mut self) -> Result<Target, SqlError> {
        if self.kw("PROCEDURE") || self.kw("FUNCTION") || self.kw("PACKAGE") {
            return Err(SqlError::unsupported("privileges on stored routines"));
        }
        self.kw("TABLE");
        if self.sym('*') {
            if self.sym('.') {
                self.expect_sym('*')?;
                return Ok(Target::Global);
            }
            return Ok(Target::Db(None));
        }
        let first = self.name()?;
        if self.sym('.') {
            if self.sym('*') {
                return Ok(Target::Db(Some(first)));
            }
            return Ok(Target::Table(Some(first), self.name()?));
        }
        Ok(Target::Table(None, first))
    }
}

fn too_long(s: &str, what: &str, max: usize) -> SqlError {
    let head: String = s.chars().take(64).collect();
    SqlError::new(
        1470,
        "HY000",
        format!("String '{head}...' is too long for {what} (should be no longer than {max})"),
    )
}

fn password(p: &str) -> Auth {
    if p.is_empty() {
        Auth(None)
    } else {
        Auth(Some(accounts::native_hash(p.as_bytes())))
    }
}

/// Whether `sql` may be an account statement (a cheap look at its first words, so other
/// statements pay nothing).
pub fn may_be_account_statement(sql: &str) -> bool {
    let sql = code_start(sql);
    let mut words = sql
        .split(|c: char| c.is_ascii_whitespace() || c == '(')
        .filter(|w| !w.is_empty());
    let first = words.next().unwrap_or("");
    let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
    if is(first, "GRANT") || is(first, "REVOKE") {
        return true;
    }
    let second = words.next().unwrap_or("");
    let third = words.next().unwrap_or("");
    match () {
        _ if is(first, "CREATE") => {
            is(second, "USER")
                || is(second, "ROLE")
                || (is(second, "OR") && is(third, "REPLACE") && {
                    let w = words.next().unwrap_or("");
                    is(w, "USER") || is(w, "ROLE")
                })
        }
        _ if is(first, "DROP") || is(first, "ALTER") || is(first, "RENAME") => {
            is(second, "USER") || is(second, "ROLE")
        }
        _ if is(first, "SET") => {
            is(second, "PASSWORD")
                || second.get(..9).is_some_and(|w| is(w, "PASSWORD="))
                || is(second, "ROLE")
                || is(second, "DEFAULT")
        }
        _ if is(first, "SHOW") => {
            is(second, "GRANTS") || (is(second, "CREATE") && is(third, "USER"))
        }
        _ => false,
    }
}

/// `sql` from its first word of code: leading blanks and comments skipped, the opening of a
/// `/*!NNNNN` / `/*M!NNNNNN` comment too (its text is code).
fn code_start(mut sql: &str) -> &str {
    loop {
        sql = sql.trim_start();
        let b = sql.as_bytes();
        let versioned = sql.starts_with("/*!") || sql.starts_with("/*M!");
        let skip = if versioned && b[2] == b'M' { 4 } else { 3 };
        let digits = if versioned {
            sql[skip..].len()
                - sql[skip..]
                    .trim_start_matches(|c: char| c.is_ascii_digit())
                    .len()
        } else {
            0
        };
        let applies = digits == 0
            || sql[skip..skip + digits]
                .parse::<u64>()
                .is_ok_and(|v| v <= crate::parse::MARIADB_VERSION_ID);
        if versioned && applies {
            sql = &sql[skip + digits..];
        } else if sql.starts_with("/*") {
            match sql.find("*/") {
                Some(end) => sql = &sql[end + 2..],
                None => return sql,
            }
        } else if sql.starts_with('#') || sql.starts_with("-- ") {
            match sql.find('\n') {
                Some(end) => sql = &sql[end + 1..],
                None => return "",
            }
        } else {
            return sql;
        }
    }
}

/// Reads an account statement; None when `sql` is not one (SET DEFAULT ROLE and roles are
/// 1235).
pub fn parse(sql: &str) -> Result<Option<AccountStmt>, SqlError> {
    if !may_be_account_statement(sql) {
        return Ok(None);
    }
    let toks = lex(sql)?;
    let mut p = P { toks, at: 0 };
    let stmt = if p.kw("CREATE") {
        let or_replace = p.kws(&["OR", "REPLACE"]);
        if p.kw("ROLE") {
            return Err(SqlError::unsupported("roles"));
        }
        p.expect_kw("USER")?;
        let if_not_exists = p.kws(&["IF", "NOT", "EXISTS"]);
        if or_replace && if_not_exists {
            return Err(SqlError::new(
                1221,
                "HY000",
                "Incorrect usage of OR REPLACE and IF NOT EXISTS",
            ));
        }
        let specs = p.specs()?;
        p.refuse_extras()?;
        AccountStmt::CreateUser {
            or_replace,
            if_not_exists,
            specs,
        }
    } else if p.kw("ALTER") {
        if p.kw("ROLE") {
            return Err(SqlError::unsupported("roles"));
        }
        p.expect_kw("USER")?;
        let if_exists = p.kws(&["IF", "EXISTS"]);
        let specs = p.specs()?;
        p.refuse_extras()?;
        AccountStmt::AlterUser { if_exists, specs }
    } else if p.kw("DROP") {
        if p.kw("ROLE") {
            return Err(SqlError::unsupported("roles"));
        }
        p.expect_kw("USER")?;
        let if_exists = p.kws(&["IF", "EXISTS"]);
        AccountStmt::DropUser {
            if_exists,
            names: p.accounts()?,
        }
    } else if p.kw("RENAME") {
        p.expect_kw("USER")?;
        let mut pairs = Vec::new();
        loop {
            let from = p.account()?;
            p.expect_kw("TO")?;
            pairs.push((from, p.account()?));
            if !p.sym(',') {
                break;
            }
        }
        AccountStmt::RenameUser { pairs }
    } else if p.kw("SET") {
        if p.is_kw("ROLE") || p.is_kw("DEFAULT") {
            return Err(SqlError::unsupported("roles"));
        }
        p.expect_kw("PASSWORD")?;
        let name = if p.kw("FOR") {
            p.account()?
        } else {
            AccountName::Current
        };
        p.expect_sym('=')?;
        let auth = if p.kw("PASSWORD") {
            p.expect_sym('(')?;
            let pw = p.string()?;
            p.expect_sym(')')?;
            password(&pw)
        } else if p.kw("OLD_PASSWORD") {
            return Err(SqlError::unsupported("OLD_PASSWORD"));
        } else {
            p.hash()?
        };
        AccountStmt::SetPassword { name, auth }
    } else if p.kw("GRANT") {
        let privs = p.privileges()?;
        p.expect_kw("ON")?;
        let target = p.target()?;
        p.expect_kw("TO")?;
        let to = p.specs()?;
        if p.is_kw("REQUIRE") {
            return Err(SqlError::unsupported("REQUIRE (TLS options)"));
        }
        let mut grant_option = false;
        while p.kw("WITH") {
            if p.kws(&["GRANT", "OPTION"]) {
                grant_option = true;
            } else {
                return Err(SqlError::unsupported("resource limits (WITH MAX_...)"));
            }
        }
        AccountStmt::Grant {
            privs,
            target,
            to,
            grant_option,
        }
    } else if p.kw("REVOKE") {
        let save = p.at;
        if p.kw("ALL") {
            p.kw("PRIVILEGES");
            if p.sym(',') {
                p.expect_kw("GRANT")?;
                p.expect_kw("OPTION")?;
                p.expect_kw("FROM")?;
                let from = p.accounts()?;
                p.done()?;
                return Ok(Some(AccountStmt::RevokeAll { from }));
            }
        }
        p.at = save;
        let privs = p.privileges()?;
        p.expect_kw("ON")?;
        let target = p.target()?;
        p.expect_kw("FROM")?;
        AccountStmt::Revoke {
            privs,
            target,
            from: p.accounts()?,
        }
    } else if p.kw("SHOW") {
        if p.kw("GRANTS") {
            let name = if p.kw("FOR") {
                p.account()?
            } else {
                AccountName::Current
            };
            AccountStmt::ShowGrants(name)
        } else if p.kws(&["CREATE", "USER"]) {
            let name = if p.at < p.toks.len() {
                p.account()?
            } else {
                AccountName::Current
            };
            AccountStmt::ShowCreateUser(name)
        } else {
            return Ok(None);
        }
    } else {
        return Ok(None);
    };
    p.done()?;
    Ok(Some(stmt))
}

/// Who runs an account statement.
pub struct Runner<'a> {
    pub shared: &'a Arc<Shared>,
    /// The session's account; None: a trusted embedded session.
    pub me: Option<Arc<Account>>,
    /// (user, host) CURRENT_USER stands for.
    pub current: (String, String),
    /// The client's host (1142 texts name it).
    pub client_host: &'a str,
    pub db: Option<&'a str>,
}

/// What `run` returns: the result and the notes it gave.
pub type Ran = (QueryResult, Vec<Warning>);

fn note(code: u16, message: String) -> Warning {
    Warning {
        level: "Note",
        code,
        message,
    }
}

fn quoted(u: &str, h: &str) -> String {
    format!("'{u}'@'{h}'")
}

impl Runner<'_> {
    fn resolve(&self, n: &AccountName) -> (String, String) {
        match n {
            AccountName::Named(u, h) => (u.clone(), h.clone()),
            AccountName::Current => self.current.clone(),
        }
    }
    fn check(&self, needs: &[Need]) -> Result<(), SqlError> {
        match &self.me {
            None => Ok(()),
            Some(a) => accounts::check(a, self.client_host, needs),
        }
    }
    fn config_refusal(op: &str, a: &Account) -> SqlError {
        SqlError::new(
            1396,
            "HY000",
            format!(
                "Operation {op} failed for {}: the account comes from the config file's [[users]]; change it there",
                a.quoted()
            ),
        )
    }

    pub fn run(&self, stmt: AccountStmt) -> Result<Ran, SqlError> {
        let accts = &self.shared.accounts;
        let engine = &self.shared.engine;
        let ok = || QueryResult::ok();
        match &stmt {
            AccountStmt::ShowGrants(name) | AccountStmt::ShowCreateUser(name) => {
                let (u, h) = self.resolve(name);
                if (u.clone(), h.clone()) != self.current {
                    self.check(&[Need::Db {
                        db: "mysql".into(),
                        privs: accounts::SELECT,
                    }])?;
                }
                let Some(a) = accts.get(&u, &h) else {
                    return Err(if matches!(stmt, AccountStmt::ShowGrants(_)) {
                        no_grant(&u, &h)
                    } else {
                        no_account_row()
                    });
                };
                let (title, lines) = if matches!(stmt, AccountStmt::ShowGrants(_)) {
                    ("Grants", accounts::grant_lines(&a))
                } else {
                    ("CREATE USER", vec![accounts::create_user_text(&a)])
                };
                let columns = vec![Column::text(format!("{title} for {}@{}", a.user, a.host))];
                let rows = lines
                    .into_iter()
                    .map(|l| vec![Value::Bytes(l.into_bytes())])
                    .collect();
                Ok((QueryResult::Rows { columns, rows }, Vec::new()))
            }
            _ => {
                let _g = self.shared.account_ddl.lock();
                self.change(stmt, accts, engine).map(|w| (ok(), w))
            }
        }
    }

    fn change(
        &self,
        stmt: AccountStmt,
        accts: &accounts::Accounts,
        engine: &tierdb_engine::Engine,
    ) -> Result<Vec<Warning>, SqlError> {
        let mut notes = Vec::new();
        let mut changed: Vec<((String, String), Option<Account>)> = Vec::new();
        // The state as this statement has changed it so far (several accounts in one).
        let current =
            |changed: &[((String, String), Option<Account>)], u: &str, h: &str| match changed
                .iter()
                .rev()
                .find(|(k, _)| k.0 == u && k.1 == h)
            {
                Some((_, a)) => a.clone(),
                None => accts.get(u, h).map(|a| a.as_ref().clone()),
            };
        let mut failed: Vec<String> = Vec::new();
        let op;
        match stmt {
            AccountStmt::CreateUser {
                or_replace,
                if_not_exists,
                specs,
            } => {
                op = "CREATE USER";
                self.check(&[Need::Global(accounts::CREATE_USER)])?;
                for s in specs {
                    let (u, h) = self.resolve(&s.name);
                    match current(&changed, &u, &h) {
                        Some(a) if a.from_config => return Err(Self::config_refusal(op, &a)),
                        Some(_) if if_not_exists => notes.push(note(
                            1973,
                            format!("Can't create user {}; it already exists", quoted(&u, &h)),
                        )),
                        Some(_) if !or_replace => failed.push(quoted(&u, &h)),
                        _ => {
                            let auth = s.auth.map(|a| a.0).unwrap_or(None);
                            changed
                                .push(((u.clone(), h.clone()), Some(Account::new(&u, &h, auth))));
                        }
                    }
                }
            }
            AccountStmt::AlterUser { if_exists, specs } => {
                op = "ALTER USER";
                for s in specs {
                    let (u, h) = self.resolve(&s.name);
                    if (u.clone(), h.clone()) != self.current {
                        self.check(&[Need::Global(accounts::CREATE_USER)])?;
                    }
                    match current(&changed, &u, &h) {
                        Some(a) if a.from_config => return Err(Self::config_refusal(op, &a)),
                        Some(mut a) => {
                            if let Some(auth) = s.auth {
                                a.auth = auth.0;
                            }
                            changed.push(((u, h), Some(a)));
                        }
                        None if if_exists => notes.push(note(
                            1396,
                            format!("Operation ALTER USER failed for {}", quoted(&u, &h)),
                        )),
                        None => failed.push(quoted(&u, &h)),
                    }
                }
            }
            AccountStmt::DropUser { if_exists, names } => {
                op = "DROP USER";
                self.check(&[Need::Global(accounts::CREATE_USER)])?;
                for n in names {
                    let (u, h) = self.resolve(&n);
                    match current(&changed, &u, &h) {
                        Some(a) if a.from_config => return Err(Self::config_refusal(op, &a)),
                        Some(_) => changed.push(((u, h), None)),
                        None if if_exists => notes.push(note(
                            1974,
                            format!("Can't drop user {}; it doesn't exist", quoted(&u, &h)),
                        )),
                        None => failed.push(quoted(&u, &h)),
                    }
                }
            }
            AccountStmt::RenameUser { pairs } => {
                op = "RENAME USER";
                self.check(&[Need::Global(accounts::CREATE_USER)])?;
                for (from, to) in pairs {
                    let (u, h) = self.resolve(&from);
                    let (nu, nh) = self.resolve(&to);
                    match (current(&changed, &u, &h), current(&changed, &nu, &nh)) {
                        (Some(a), _) if a.from_config => return Err(Self::config_refusal(op, &a)),
                        (Some(mut a), None) => {
                            a.user = nu.clone();
                            a.host = nh.clone();
                            changed.push(((u, h), None));
                            changed.push(((nu, nh), Some(a)));
                        }
                        _ => failed.push(quoted(&u, &h)),
                    }
                }
            }
            AccountStmt::SetPassword { name, auth } => {
                op = "SET PASSWORD";
                if self.me.is_some() && self.current.0.is_empty() {
                    return Err(SqlError::new(
                        1131,
                        "42000",
                        "You are using MariaDB as an anonymous user and anonymous users are not allowed to modify user settings",
                    ));
                }
                let (u, h) = self.resolve(&name);
                if (u.clone(), h.clone()) != self.current {
                    self.check(&[Need::Db {
                        db: "mysql".into(),
                        privs: accounts::UPDATE,
                    }])?;
                }
                match current(&changed, &u, &h) {
                    Some(a) if a.from_config => return Err(Self::config_refusal(op, &a)),
                    Some(mut a) => {
                        a.auth = auth.0;
                        changed.push(((u, h), Some(a)));
                    }
                    None => return Err(no_account_row()),
                }
            }
            AccountStmt::Grant {
                privs,
                target,
                to,
                grant_option,
            } => {
                op = "GRANT";
                let (level, db, table, mut bits) = self.level_of(&target, privs)?;
                if grant_option {
                    bits |= accounts::GRANT_OPTION;
                }
                if let (Level::Table, Some(db), Some(t)) = (level, &db, &table) {
                    let exists = engine.table(db, t).is_ok()
                        || engine.view(db, t).is_some()
                        || crate::infoschema::mysql_table(&self.shared.engine, db, t).is_some();
                    if !exists {
                        return Err(SqlError::new(
                            1146,
                            "42S02",
                            format!("Table '{db}.{t}' doesn't exist"),
                        ));
                    }
                }
                self.check_grantor(level, db.as_deref(), table.as_deref(), bits)?;
                for s in to {
                    let (u, h) = self.resolve(&s.name);
                    let Some(mut a) = current(&changed, &u, &h) else {
                        return Err(no_account_row());
                    };
                    if a.from_config {
                        return Err(Self::config_refusal(op, &a));
                    }
                    if let Some(auth) = s.auth {
                        // Setting another account's password needs what SET PASSWORD FOR
                        // needs (MariaDB: 1044 on `mysql`).
                        if (u.clone(), h.clone()) != self.current {
                            self.check(&[Need::Db {
                                db: "mysql".into(),
                                privs: accounts::UPDATE,
                            }])?;
                        }
                        a.auth = auth.0;
                    }
                    // USAGE below the global level grants nothing: no empty entry.
                    match (level, db.clone(), table.clone()) {
                        _ if bits == 0 && level != Level::Global => {}
                        (Level::Global, ..) => a.global |= bits,
                        (Level::Db, Some(d), _) => *a.dbs.entry(d).or_default() |= bits,
                        (Level::Table, Some(d), Some(t)) => {
                            *a.tables.entry((d, t)).or_default() |= bits
                        }
                        _ => return Err(internal("grant level without a database")),
                    }
                    changed.push(((u, h), Some(a)));
                }
            }
            AccountStmt::Revoke {
                privs,
                target,
                from,
            } => {
                op = "REVOKE";
                let (level, db, table, bits) = self.level_of(&target, privs)?;
                self.check_grantor(level, db.as_deref(), table.as_deref(), bits)?;
                for n in from {
                    let (u, h) = self.resolve(&n);
                    let Some(mut a) = current(&changed, &u, &h) else {
                        return Err(no_account_row());
                    };
                    if a.from_config {
                        return Err(Self::config_refusal(op, &a));
                    }
                    match (level, db.clone(), table.clone()) {
                        (Level::Global, ..) => a.global &= !bits,
                        (Level::Db, Some(d), _) => {
                            let Some(p) = a.dbs.get_mut(&d) else {
                                return Err(no_grant(&u, &h));
                            };
                            *p &= !bits;
                            if *p == 0 {
                                a.dbs.remove(&d);
                            }
                        }
                        (Level::Table, Some(d), Some(t)) => {
                            let key = (d, t.clone());
                            let Some(p) = a.tables.get_mut(&key) else {
                                return Err(SqlError::new(
                                    1147,
                                    "42000",
                                    format!(
                                        "There is no such grant defined for user '{u}' on host '{h}' on table '{t}'"
                                    ),
                                ));
                            };
                            *p &= !bits;
                            if *p == 0 {
                                a.tables.remove(&key);
                            }
                        }
                        _ => return Err(internal("grant level without a database")),
                    }
                    changed.push(((u, h), Some(a)));
                }
            }
            AccountStmt::RevokeAll { from } => {
                op = "REVOKE";
                self.check(&[Need::Global(accounts::CREATE_USER)])?;
                for n in from {
                    let (u, h) = self.resolve(&n);
                    let Some(mut a) = current(&changed, &u, &h) else {
                        failed.push(quoted(&u, &h));
                        continue;
                    };
                    if a.from_config {
                        return Err(Self::config_refusal(op, &a));
                    }
                    a.global = 0;
                    a.dbs.clear();
                    a.tables.clear();
                    changed.push(((u, h), Some(a)));
                }
            }
            AccountStmt::ShowGrants(_) | AccountStmt::ShowCreateUser(_) => {
                return Err(internal("SHOW reached the account changes"));
            }
        }
        // Of several changes to one account only the last counts. The accounts that could be
        // changed are, also when others of the list failed (as MariaDB).
        let mut last: Vec<((String, String), Option<Account>)> = Vec::new();
        for (k, a) in changed {
            last.retain(|(x, _)| *x != k);
            last.push((k, a));
        }
        if !last.is_empty() {
            accts.apply(engine, last)?;
        }
        if !failed.is_empty() {
            return Err(SqlError::new(
                1396,
                "HY000",
                format!("Operation {op} failed for {}", failed.join(",")),
            ));
        }
        Ok(notes)
    }

    /// (level, database, table, privileges) of a GRANT / REVOKE: `*` and bare names read in
    /// the current database (1046 without one); ALL [PRIVILEGES] (None) is every privilege
    /// of the level but GRANT OPTION, which REVOKE GRANT OPTION names; a privilege the level
    /// does not have is 1221 / 1144.
    fn level_of(
        &self,
        t: &Target,
        privs: Option<u64>,
    ) -> Result<(Level, Option<String>, Option<String>, u64), SqlError> {
        let db = |d: &Option<String>| match d {
            Some(d) => Ok(d.clone()),
            None => self.db.map(str::to_string).ok_or_else(crate::plan::no_db),
        };
        let (level, db, table) = match t {
            Target::Global => (Level::Global, None, None),
            Target::Db(d) => (Level::Db, Some(db(d)?), None),
            Target::Table(d, name) => (Level::Table, Some(db(d)?), Some(name.clone())),
        };
        let all = accounts::all_at(level);
        let bits = privs.unwrap_or(all);
        if bits & !(all | accounts::GRANT_OPTION) != 0 {
            return Err(wrong_level(level));
        }
        Ok((level, db, table, bits))
    }

    /// The grantor must hold GRANT OPTION and the privileges it grants or revokes, at the
    /// target's level.
    fn check_grantor(
        &self,
        level: Level,
        db: Option<&str>,
        table: Option<&str>,
        bits: u64,
    ) -> Result<(), SqlError> {
        let Some(me) = &self.me else {
            return Ok(());
        };
        if me.is_superuser() {
            return Ok(());
        }
        let need = bits | accounts::GRANT_OPTION;
        let denied = match (level, db, table) {
            (Level::Global, ..) => me.global & need != need,
            // A pattern is granted from the global level or the same pattern only (a grant on
            // `app\_%` must not reach `app_%`, which matches more).
            (Level::Db, Some(d), _) if is_pattern(d) => {
                me.global & need != need && me.dbs.get(d).is_none_or(|p| p & need != need)
            }
            (Level::Db, Some(d), _) => {
                return accounts::check(
                    me,
                    self.client_host,
                    &[Need::Db {
                        db: d.to_string(),
                        privs: need,
                    }],
                )
            }
            (_, Some(d), Some(t)) => accounts::check(
                me,
                self.client_host,
                &[Need::Table {
                    db: d.to_string(),
                    name: t.to_string(),
                    privs: need,
                }],
            )
            .is_err(),
            _ => false,
        };
        match (denied, db, table) {
            (false, ..) => Ok(()),
            (true, Some(d), Some(t)) => {
                Err(accounts::table_denied("GRANT", me, self.client_host, d, t))
            }
            (true, Some(d), None) => Err(accounts::db_denied(me, d)),
            (true, ..) => Err(accounts::global_denied(accounts::GRANT_OPTION)),
        }
    }
}

/// A database name with an unescaped `%` or `_`: a pattern.
fn is_pattern(db: &str) -> bool {
    let mut escaped = false;
    for c in db.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '%' | '_' if !escaped => return true,
            _ => escaped = false,
        }
    }
    false
}

fn internal(what: &str) -> SqlError {
    SqlError::new(1105, "HY000", format!("internal error: {what}"))
}

fn no_grant(u: &str, h: &str) -> SqlError {
    SqlError::new(
        1141,
        "42000",
        format!("There is no such grant defined for user '{u}' on host '{h}'"),
    )
}

fn no_account_row() -> SqlError {
    SqlError::new(
        1133,
        "28000",
        "Can't find any matching row in the user table",
    )
}

fn wrong_level(level: Level) -> SqlError {
    match level {
        Level::Table => SqlError::new(
            1144,
            "42000",
            "Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used",
        ),
        _ => SqlError::new(
            1221,
            "HY000",
            "Incorrect usage of DB GRANT and GLOBAL PRIVILEGES",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(u: &str, h: &str) -> AccountName {
        AccountName::Named(u.into(), h.into())
    }

    #[test]
    fn account_names_read_in_every_quoting() {
        let p = |s: &str| parse(s).unwrap().unwrap();
        assert_eq!(
            p("DROP USER bob@localhost, 'ann'@'%', carl, `c`@`D`, \"x\"@'10.0.0.%'"),
            AccountStmt::DropUser {
                if_exists: false,
                names: vec![
                    named("bob", "localhost"),
                    named("ann", "%"),
                    named("carl", "%"),
                    named("c", "d"),
                    named("x", "10.0.0.%"),
                ]
            }
        );
        assert_eq!(
            p("GRANT SELECT, INSERT ON app.* TO 'bob'@'localhost' WITH GRANT OPTION"),
            AccountStmt::Grant {
                privs: Some(accounts::SELECT | accounts::INSERT),
                target: Target::Db(Some("app".into())),
                to: vec![Spec {
                    name: named("bob", "localhost"),
                    auth: None
                }],
                grant_option: true,
            }
        );
        assert_eq!(
            p("REVOKE ALL PRIVILEGES, GRANT OPTION FROM bob@localhost"),
            AccountStmt::RevokeAll {
                from: vec![named("bob", "localhost")]
            }
        );
        assert!(matches!(
            p("SET PASSWORD FOR bob@localhost = PASSWORD('pw')"),
            AccountStmt::SetPassword { auth: Auth(Some(h)), .. } if h == accounts::native_hash(b"pw")
        ));
        assert!(matches!(
            p("CREATE USER IF NOT EXISTS a IDENTIFIED BY PASSWORD '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'"),
            AccountStmt::CreateUser { if_not_exists: true, .. }
        ));
        assert_eq!(
            p("SHOW GRANTS"),
            AccountStmt::ShowGrants(AccountName::Current)
        );
    }

    #[test]
    fn what_tierdb_does_not_keep_is_refused_by_name() {
        let code = |s: &str| parse(s).unwrap_err().code;
        assert_eq!(code("CREATE ROLE r1"), 1235);
        assert_eq!(code("GRANT r1 TO bob"), 1235);
        assert_eq!(code("GRANT SELECT (v) ON app.t TO bob"), 1235);
        assert_eq!(code("GRANT PROXY ON ''@'%' TO bob"), 1235);
        assert_eq!(
            code("GRANT USAGE ON *.* TO bob WITH MAX_QUERIES_PER_HOUR 10"),
            1235
        );
        assert_eq!(code("CREATE USER bob REQUIRE SSL"), 1235);
        assert_eq!(code("CREATE USER bob IDENTIFIED VIA ed25519"), 1235);
        assert_eq!(code("GRANT FOO ON app.t TO bob"), 1064);
        assert_eq!(code("CREATE USER bob extra"), 1064);
        assert_eq!(code("CREATE USER 'unterminated"), 1064);
        assert_eq!(code("CREATE OR REPLACE USER IF NOT EXISTS a"), 1221);
        assert_eq!(code(&format!("CREATE USER '{}'", "a".repeat(129))), 1470);
        assert_eq!(code("CREATE USER a IDENTIFIED BY PASSWORD 'short'"), 1372);
        assert_eq!(parse("CREATE TABLE t (a INT)").unwrap(), None);
        assert_eq!(parse("SHOW TABLES").unwrap(), None);
    }

    #[test]
    fn only_account_statements_are_looked_at() {
        for s in [
            "GRANT ALL ON *.* TO a",
            "create user a",
            "CREATE OR REPLACE USER a",
            "drop user a",
            "SET PASSWORD = PASSWORD('x')",
            "SET PASSWORD='*AB'",
            "SHOW GRANTS",
            "show create user a",
            "RENAME USER a TO b",
            "/*M!100005 SET DEFAULT ROLE NONE FOR a */",
            "/*!40101 GRANT SELECT ON *.* TO a */",
            "-- note\n/* c */ GRANT SELECT ON *.* TO a",
        ] {
            assert!(may_be_account_statement(s), "{s}");
        }
        for s in [
            "SELECT 1",
            "CREATE TABLE t (a INT)",
            "SET autocommit = 1",
            "SHOW CREATE TABLE t",
            "DROP TABLE user",
            "/*M!999999 CREATE USER a */ SELECT 1",
        ] {
            assert!(!may_be_account_statement(s), "{s}");
        }
    }
}
