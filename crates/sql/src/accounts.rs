//! Accounts and privileges: who may log in (`user@host`, a mysql_native_password hash or no
//! password), what each account may do (global, database and table privileges, MariaDB's
//! names and levels), and the check a statement passes before it runs.
//!
//! Owns: the in-memory account list (`Accounts`, shared by every session, versioned), its
//! persistence as engine account entries (layout in `docs/format.md`, "Accounts"), the
//! choice of account at login (most specific host first, as MariaDB sorts them), and the
//! privilege checks (`Accounts::check`), with MariaDB's error codes and texts (1142, 1044,
//! 1227). The statements that change accounts are read in `crate::account_sql`.
//!
//! Accounts from the config file (`[[users]]`) are listed first-class but read-only here:
//! they hold every privilege, and SQL cannot change or drop them (the file is their source).
//!
//! Must never: keep a password in clear text (only SHA1(SHA1(password)) is kept and stored),
//! hold the account lock while calling into the engine's catalog write, or let a session
//! without a matching account through a check (no account: no privilege).

use crate::result::SqlError;
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tierdb_engine::Engine;

// Privilege bits, in the order MariaDB 10.11 lists them in SHOW GRANTS. They are stored
// (`docs/format.md`), so a bit keeps its meaning forever.
pub const SELECT: u64 = 1 << 0;
pub const INSERT: u64 = 1 << 1;
pub const UPDATE: u64 = 1 << 2;
pub const DELETE: u64 = 1 << 3;
pub const CREATE: u64 = 1 << 4;
pub const DROP: u64 = 1 << 5;
pub const RELOAD: u64 = 1 << 6;
pub const SHUTDOWN: u64 = 1 << 7;
pub const PROCESS: u64 = 1 << 8;
pub const FILE: u64 = 1 << 9;
pub const REFERENCES: u64 = 1 << 10;
pub const INDEX: u64 = 1 << 11;
pub const ALTER: u64 = 1 << 12;
pub const SHOW_DATABASES: u64 = 1 << 13;
pub const SUPER: u64 = 1 << 14;
pub const CREATE_TMP_TABLE: u64 = 1 << 15;
pub const LOCK_TABLES: u64 = 1 << 16;
pub const EXECUTE: u64 = 1 << 17;
pub const CREATE_VIEW: u64 = 1 << 20;
pub const SHOW_VIEW: u64 = 1 << 21;
pub const CREATE_USER: u64 = 1 << 24;
pub const SET_USER: u64 = 1 << 29;
pub const REPLICATION_SLAVE: u64 = 1 << 18;
pub const BINLOG_MONITOR: u64 = 1 << 19;
pub const BINLOG_ADMIN: u64 = 1 << 35;
pub const BINLOG_REPLAY: u64 = 1 << 36;
pub const CONNECTION_ADMIN: u64 = 1 << 31;
pub const GRANT_OPTION: u64 = 1 << 63;

/// Where a privilege may be granted.
const G: u8 = 1;
const D: u8 = 2;
const T: u8 = 4;

/// Every privilege: bit, name as SHOW GRANTS prints it, levels.
pub const PRIVILEGES: &[(u64, &str, u8)] = &[
    (SELECT, "SELECT", G | D | T),
    (INSERT, "INSERT", G | D | T),
    (UPDATE, "UPDATE", G | D | T),
    (DELETE, "DELETE", G | D | T),
    (CREATE, "CREATE", G | D | T),
    (DROP, "DROP", G | D | T),
    (RELOAD, "RELOAD", G),
    (SHUTDOWN, "SHUTDOWN", G),
    (PROCESS, "PROCESS", G),
    (FILE, "FILE", G),
    (REFERENCES, "REFERENCES", G | D | T),
    (INDEX, "INDEX", G | D | T),
    (ALTER, "ALTER", G | D | T),
    (SHOW_DATABASES, "SHOW DATABASES", G),
    (SUPER, "SUPER", G),
    (CREATE_TMP_TABLE, "CREATE TEMPORARY TABLES", G | D),
    (LOCK_TABLES, "LOCK TABLES", G | D),
    (EXECUTE, "EXECUTE", G | D),
    (1 << 18, "REPLICATION SLAVE", G),
    (1 << 19, "BINLOG MONITOR", G),
    (CREATE_VIEW, "CREATE VIEW", G | D | T),
    (SHOW_VIEW, "SHOW VIEW", G | D | T),
    (1 << 22, "CREATE ROUTINE", G | D),
    (1 << 23, "ALTER ROUTINE", G | D),
    (CREATE_USER, "CREATE USER", G),
    (1 << 25, "EVENT", G | D),
    (1 << 26, "TRIGGER", G | D | T),
    (1 << 27, "CREATE TABLESPACE", G),
    (1 << 28, "DELETE HISTORY", G | D | T),
    (SET_USER, "SET USER", G),
    (1 << 30, "FEDERATED ADMIN", G),
    (CONNECTION_ADMIN, "CONNECTION ADMIN", G),
    (1 << 32, "READ_ONLY ADMIN", G),
    (1 << 33, "REPLICATION SLAVE ADMIN", G),
    (1 << 34, "REPLICATION MASTER ADMIN", G),
    (1 << 35, "BINLOG ADMIN", G),
    (1 << 36, "BINLOG REPLAY", G),
    (1 << 37, "SLAVE MONITOR", G),
];

/// Other names MariaDB accepts for a privilege in GRANT / REVOKE.
pub const PRIVILEGE_ALIASES: &[(&str, &str)] = &[
    ("REPLICATION CLIENT", "BINLOG MONITOR"),
    ("REPLICATION REPLICA", "REPLICATION SLAVE"),
    ("REPLICATION REPLICA ADMIN", "REPLICATION SLAVE ADMIN"),
    ("REPLICA MONITOR", "SLAVE MONITOR"),
];

/// Every privilege of a level (without GRANT OPTION).
pub fn all_at(level: Level) -> u64 {
    let l = level.mask();
    PRIVILEGES
        .iter()
        .filter(|p| p.2 & l != 0)
        .fold(0, |a, p| a | p.0)
}

/// The grant level of a privilege set: global (`*.*`), a database (or pattern), one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Global,
    Db,
    Table,
}

impl Level {
    fn mask(self) -> u8 {
        match self {
            Level::Global => G,
            Level::Db => D,
            Level::Table => T,
        }
    }
}

/// Names of the privileges in `bits`, in MariaDB's order (GRANT OPTION not included).
pub fn names(bits: u64) -> Vec<&'static str> {
    PRIVILEGES
        .iter()
        .filter(|p| bits & p.0 != 0)
        .map(|p| p.1)
        .collect()
}

/// The privilege `words` name (upper case, single spaces), if any.
pub fn privilege_named(words: &str) -> Option<u64> {
    let w = PRIVILEGE_ALIASES
        .iter()
        .find(|a| a.0 == words)
        .map_or(words, |a| a.1);
    if w == "GRANT OPTION" {
        return Some(GRANT_OPTION);
    }
    PRIVILEGES.iter().find(|p| p.1 == w).map(|p| p.0)
}

/// One account.
#[derive(Clone, Debug, PartialEq)]
pub struct Account {
    pub user: String,
    /// Host pattern (`%` and `_` wildcards, `localhost`, `ip/mask`), lower case.
    pub host: String,
    /// SHA1(SHA1(password)); None: no password.
    pub auth: Option<[u8; 20]>,
    pub global: u64,
    /// Database name or pattern → privileges.
    pub dbs: BTreeMap<String, u64>,
    /// (database, table) → privileges.
    pub tables: BTreeMap<(String, String), u64>,
    /// From the config file's `[[users]]`: every privilege, not changed through SQL.
    pub from_config: bool,
}

impl Account {
    pub fn new(user: &str, host: &str, auth: Option<[u8; 20]>) -> Account {
        Account {
            user: user.to_string(),
            host: host.to_ascii_lowercase(),
            auth,
            global: 0,
            dbs: BTreeMap::new(),
            tables: BTreeMap::new(),
            from_config: false,
        }
    }
    /// `'user'@'host'` as error messages write it.
    pub fn quoted(&self) -> String {
        format!("'{}'@'{}'", self.user, self.host)
    }
    /// Privileges that apply to database `db` (global ones included).
    fn on_db(&self, db: &str) -> u64 {
        self.global | self.db_grants(db)
    }
    fn db_grants(&self, db: &str) -> u64 {
        self.dbs
            .iter()
            .filter(|(pattern, _)| db_matches(pattern, db))
            .fold(0, |a, (_, p)| a | p)
    }
    /// Privileges that apply to table `db`.`table` (global and database ones included).
    fn on_table(&self, db: &str, table: &str) -> u64 {
        // (A scan, not a lookup: no key to allocate on every check; accounts hold few
        // table grants.)
        let t = self
            .tables
            .iter()
            .find(|((d, n), _)| d == db && n == table)
            .map_or(0, |(_, p)| *p);
        self.on_db(db) | t
    }
    /// Some database-level privilege on `db` (globally or there), or some privilege on one of
    /// its tables: what USE and SHOW DATABASES need (server-only privileges such as PROCESS
    /// do not count).
    pub fn any_in_db(&self, db: &str) -> bool {
        self.on_db(db) & all_at(Level::Db) != 0
            || self
                .tables
                .iter()
                .any(|((d, _), p)| d == db && p & all_at(Level::Table) != 0)
    }
    /// Some table-level privilege on table `db`.`table`, at any level: what SHOW COLUMNS /
    /// SHOW CREATE TABLE / SHOW TABLES need (CREATE TEMPORARY TABLES or LOCK TABLES on the
    /// database do not count).
    pub fn any_on_table(&self, db: &str, table: &str) -> bool {
        self.on_table(db, table) & all_at(Level::Table) != 0
    }
    /// Holds all of `privs` on table `db`.`table`, from any level.
    pub fn holds_on_table(&self, db: &str, table: &str, privs: u64) -> bool {
        self.on_table(db, table) & privs == privs
    }
    /// Holds every global privilege: no check can fail.
    pub fn is_superuser(&self) -> bool {
        self.from_config || self.global & all_at(Level::Global) == all_at(Level::Global)
    }
}

/// A database grant pattern matches `db`: `%` / `_` wildcards, `\` escapes them.
fn db_matches(pattern: &str, db: &str) -> bool {
    if !pattern.contains(['%', '_', '\\']) {
        return pattern == db;
    }
    crate::expr::like_match(db.as_bytes(), pattern.as_bytes(), b'\\')
}

/// A host pattern matches a client at `peer`: `localhost` is any loopback address (the name
/// a loopback client resolves to); `a.b.c.d/m.m.m.m` an IPv4 network; otherwise `%` / `_`
/// wildcards against the address's text (and `localhost` for a loopback client).
pub fn host_matches(pattern: &str, peer: IpAddr) -> bool {
    let peer = match peer {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
        v4 => v4,
    };
    if pattern == "localhost" {
        return peer.is_loopback();
    }
    if let Some((net, mask)) = pattern.split_once('/') {
        let (Ok(net), Ok(mask), IpAddr::V4(p)) = (
            net.parse::<std::net::Ipv4Addr>(),
            mask.parse::<std::net::Ipv4Addr>(),
            peer,
        ) else {
            return false;
        };
        let (n, m, p) = (u32::from(net), u32::from(mask), u32::from(p));
        return p & m == n;
    }
    let text = peer.to_string();
    crate::expr::like_match(text.as_bytes(), pattern.as_bytes(), b'\\')
        || (peer.is_loopback() && crate::expr::like_match(b"localhost", pattern.as_bytes(), b'\\'))
}

/// Sort key of an account for login: the most specific host first (no wildcard, then the
/// later the first wildcard the better, `%` last), then named users before the anonymous one;
/// among equals the config file's accounts first (SQL cannot shadow them), then by host and
/// user, so the choice is the same before and after a restart.
fn login_order(a: &Account) -> (u8, usize, bool, bool, String, String) {
    let h = &a.host;
    let rank = match h.find(['%', '_']) {
        None => (0, 0),
        Some(_) if h == "%" => (2, 0),
        Some(p) => (1, usize::MAX - p),
    };
    (
        rank.0,
        rank.1,
        a.user.is_empty(),
        !a.from_config,
        a.host.clone(),
        a.user.clone(),
    )
}

/// The account list every session reads.
pub struct Accounts {
    list: RwLock<Vec<Arc<Account>>>,
    /// Bumped on every change (sessions re-read their account then).
    version: AtomicU64,
}

/// What a session is logged in as: (user, host pattern) of its account; `None`: a trusted
/// embedded session (the library's own callers and tests), which holds every privilege.
pub type AccountId = Option<(String, String)>;

impl Accounts {
    /// The accounts stored in `engine`'s catalog.
    pub fn load(engine: &Engine) -> Result<Accounts, String> {
        let list = decode_entries(&engine.account_entries())?;
        let a = Accounts {
            list: RwLock::new(Vec::new()),
            version: AtomicU64::new(1),
        };
        a.install(list);
        Ok(a)
    }

    fn install(&self, mut list: Vec<Arc<Account>>) {
        list.sort_by_cached_key(|a| login_order(a));
        *self.list.write() = list;
        self.version.fetch_add(1, Ordering::Release);
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Sets the config file's accounts (replacing earlier ones): a user with a password as
    /// `user@%`, one without as `user@localhost` (loopback clients only).
    pub fn set_config_accounts(&self, users: &[(String, Option<[u8; 20]>)]) {
        let mut list: Vec<Arc<Account>> = self
            .list
            .read()
            .iter()
            .filter(|a| !a.from_config)
            .cloned()
            .collect();
        for (name, auth) in users {
            let host = if auth.is_some() { "%" } else { "localhost" };
            list.retain(|a| !(a.user == *name && a.host == host));
            let mut a = Account::new(name, host, *auth);
            a.global = all_at(Level::Global) | GRANT_OPTION;
            a.from_config = true;
            list.push(Arc::new(a));
        }
        self.install(list);
    }

    /// The account a client `user` at `peer` logs in as (MariaDB's choice: the first in login
    /// order whose user is `user` or anonymous and whose host matches), with its credential.
    pub fn login(&self, user: &str, peer: IpAddr) -> Option<Arc<Account>> {
        self.list
            .read()
            .iter()
            .find(|a| (a.user == user || a.user.is_empty()) && host_matches(&a.host, peer))
            .cloned()
    }

    /// The account `user`@`host` (host compared without case).
    pub fn get(&self, user: &str, host: &str) -> Option<Arc<Account>> {
        self.list
            .read()
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .cloned()
    }

    /// Every account, in login order.
    pub fn all(&self) -> Vec<Arc<Account>> {
        self.list.read().clone()
    }

    /// Replaces accounts: `changed` (user, host) → new account (None: dropped), written to
    /// the engine's catalog in one durable write, then made visible. The caller holds
    /// `Shared::account_ddl`, so changes do not interleave.
    pub fn apply(
        &self,
        engine: &Engine,
        changed: Vec<((String, String), Option<Account>)>,
    ) -> Result<(), SqlError> {
        let before = self.all();
        let mut entries: Vec<tierdb_engine::AccountChange> = Vec::new();
        for ((user, host), new) in &changed {
            if let Some(old) = before.iter().find(|a| a.user == *user && a.host == *host) {
                for (k, _) in encode_account(old) {
                    entries.push((k, None));
                }
            }
            if let Some(a) = new {
                for (k, v) in encode_account(a) {
                    // A key written again after its delete keeps the write.
                    entries.retain(|(e, _)| *e != k);
                    entries.push((k, Some(v)));
                }
            }
        }
        engine
            .change_accounts(entries)
            .map_err(|e| SqlError::new(1105, "HY000", format!("account change failed: {e}")))?;
        let mut list: Vec<Arc<Account>> = before;
        for ((user, host), new) in changed {
            list.retain(|a| !(a.user == user && a.host == host));
            if let Some(a) = new {
                list.push(Arc::new(a));
            }
        }
        self.install(list);
        Ok(())
    }
}

// ---- stored form ----

const KIND_USER: &[u8] = b"U";
const KIND_DB: &[u8] = b"D";
const KIND_TABLE: &[u8] = b"T";

/// An account's entries: `[U, user, host]` → version 1 | auth kind u8 (0 none, 1 native +
/// 20 bytes) | global privileges u64 LE; `[D, user, host, db]` and `[T, user, host, db,
/// table]` → privileges u64 LE.
fn encode_account(a: &Account) -> Vec<(Vec<Vec<u8>>, Vec<u8>)> {
    let (u, h) = (a.user.as_bytes().to_vec(), a.host.as_bytes().to_vec());
    let mut v = vec![1u8];
    match &a.auth {
        None => v.push(0),
        Some(hash) => {
            v.push(1);
            v.extend_from_slice(hash);
        }
    }
    v.extend_from_slice(&a.global.to_le_bytes());
    let mut out = vec![(vec![KIND_USER.to_vec(), u.clone(), h.clone()], v)];
    for (db, p) in &a.dbs {
        out.push((
            vec![
                KIND_DB.to_vec(),
                u.clone(),
                h.clone(),
                db.as_bytes().to_vec(),
            ],
            p.to_le_bytes().to_vec(),
        ));
    }
    for ((db, t), p) in &a.tables {
        out.push((
            vec![
                KIND_TABLE.to_vec(),
                u.clone(),
                h.clone(),
                db.as_bytes().to_vec(),
                t.as_bytes().to_vec(),
            ],
            p.to_le_bytes().to_vec(),
        ));
    }
    out
}

fn decode_entries(entries: &[(Vec<Vec<u8>>, Vec<u8>)]) -> Result<Vec<Arc<Account>>, String> {
    let text = |b: &[u8]| {
        String::from_utf8(b.to_vec()).map_err(|_| "account entry name is not UTF-8".to_string())
    };
    let privs = |v: &[u8]| -> Result<u64, String> {
        let b: [u8; 8] = v
            .try_into()
            .map_err(|_| "account privilege entry size".to_string())?;
        Ok(u64::from_le_bytes(b))
    };
    let mut accounts: BTreeMap<(String, String), Account> = BTreeMap::new();
    // Users first (entries come in key order: D < T < U), then their grants.
    for (k, v) in entries.iter().filter(|(k, _)| k[0] == KIND_USER) {
        let [_, u, h] = k.as_slice() else {
            return Err("account entry key".into());
        };
        let (user, host) = (text(u)?, text(h)?);
        let bad = || format!("account entry of '{user}'@'{host}'");
        let (auth, rest) = match v.as_slice() {
            [1, 0, rest @ ..] => (None, rest),
            [1, 1, rest @ ..] if rest.len() >= 20 => {
                let mut hash = [0u8; 20];
                hash.copy_from_slice(&rest[..20]);
                (Some(hash), &rest[20..])
            }
            _ => return Err(bad()),
        };
        let mut a = Account::new(&user, &host, auth);
        a.global = privs(rest).map_err(|_| bad())?;
        accounts.insert((user, host), a);
    }
    for (k, v) in entries.iter().filter(|(k, _)| k[0] != KIND_USER) {
        match (k[0].as_slice(), k.as_slice()) {
            (KIND_DB, [_, u, h, db]) => {
                let (u, h) = (text(u)?, text(h)?);
                let missing = format!("database grant of a missing account '{u}'@'{h}'");
                let a = accounts.get_mut(&(u, h)).ok_or(missing)?;
                a.dbs.insert(text(db)?, privs(v)?);
            }
            (KIND_TABLE, [_, u, h, db, t]) => {
                let (u, h) = (text(u)?, text(h)?);
                let missing = format!("table grant of a missing account '{u}'@'{h}'");
                let a = accounts.get_mut(&(u, h)).ok_or(missing)?;
                a.tables.insert((text(db)?, text(t)?), privs(v)?);
            }
            _ => return Err("account entry kind".into()),
        }
    }
    Ok(accounts.into_values().map(Arc::new).collect())
}

// ---- checks ----

/// One thing a statement needs.
#[derive(Clone, Debug, PartialEq)]
pub enum Need {
    /// All of these privileges on the table (or view) `db`.`name` (1142 naming the first
    /// one missing).
    Table {
        db: String,
        name: String,
        privs: u64,
    },
    /// All of these privileges on database `db` (1044).
    Db { db: String, privs: u64 },
    /// Some privilege in database `db` (USE, SHOW TABLES; 1044).
    AnyInDb(String),
    /// Some privilege on table `db`.`name` (SHOW COLUMNS, SHOW CREATE TABLE; 1142 SELECT).
    AnyOnTable { db: String, name: String },
    /// One of these global privileges (1227 listing them).
    Global(u64),
}

/// 1142 for `what` on `db`.`table`, naming the client as MariaDB does (its host, not the
/// account's pattern).
pub fn table_denied(what: &str, a: &Account, client_host: &str, db: &str, table: &str) -> SqlError {
    SqlError::new(
        1142,
        "42000",
        format!(
            "{what} command denied to user '{}'@'{client_host}' for table `{db}`.`{table}`",
            a.user
        ),
    )
}

/// 1044 for database `db`.
pub fn db_denied(a: &Account, db: &str) -> SqlError {
    SqlError::new(
        1044,
        "42000",
        format!("Access denied for user {} to database '{db}'", a.quoted()),
    )
}

/// 1227 naming the global privileges of which one is needed.
pub fn global_denied(privs: u64) -> SqlError {
    let mut n = names(privs);
    if privs & GRANT_OPTION != 0 {
        n.push("GRANT OPTION");
    }
    SqlError::new(
        1227,
        "42000",
        format!(
            "Access denied; you need (at least one of) the {} privilege(s) for this operation",
            n.join(", ")
        ),
    )
}

fn first_name(bits: u64) -> &'static str {
    if bits & !GRANT_OPTION == 0 {
        return "GRANT";
    }
    names(bits).first().copied().unwrap_or("USAGE")
}

/// Checks `needs` in order for account `a` (a client at `client_host`): the first one not
/// met is the error.
pub fn check(a: &Account, client_host: &str, needs: &[Need]) -> Result<(), SqlError> {
    if a.is_superuser() {
        return Ok(());
    }
    for n in needs {
        match n {
            Need::Table { db, name, privs } => {
                let missing = privs & !a.on_table(db, name);
                if missing != 0 {
                    return Err(table_denied(first_name(missing), a, client_host, db, name));
                }
            }
            Need::Db { db, privs } => {
                if privs & !a.on_db(db) != 0 {
                    return Err(db_denied(a, db));
                }
            }
            Need::AnyInDb(db) => {
                if !a.any_in_db(db) {
                    return Err(db_denied(a, db));
                }
            }
            Need::AnyOnTable { db, name } => {
                if !a.any_on_table(db, name) {
                    return Err(table_denied("SELECT", a, client_host, db, name));
                }
            }
            Need::Global(privs) => {
                if a.global & privs == 0 {
                    return Err(global_denied(*privs));
                }
            }
        }
    }
    Ok(())
}

// ---- SHOW GRANTS / SHOW CREATE USER ----

fn backticked(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// `` `user`@`host` `` as SHOW GRANTS writes an account.
pub fn account_text(a: &Account) -> String {
    format!("{}@{}", backticked(&a.user), backticked(&a.host))
}

pub fn hash_text(h: &[u8; 20]) -> String {
    let hex: String = h.iter().map(|b| format!("{b:02X}")).collect();
    format!("*{hex}")
}

/// The `*` + 40 hex digits form of a native password hash, parsed.
pub fn parse_hash(s: &str) -> Option<[u8; 20]> {
    let hex = s.strip_prefix('*')?;
    if hex.len() != 40 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 20];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// SHA1(SHA1(password)), as mysql_native_password keeps it.
pub fn native_hash(password: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    let once = sha1::Sha1::digest(password);
    sha1::Sha1::digest(once).into()
}

fn privilege_list(bits: u64, level: Level) -> String {
    let all = all_at(level);
    if bits & all == all {
        "ALL PRIVILEGES".into()
    } else if bits & !GRANT_OPTION == 0 {
        "USAGE".into()
    } else {
        names(bits).join(", ")
    }
}

/// The lines of SHOW GRANTS for `a`, as MariaDB 10.11 prints them.
pub fn grant_lines(a: &Account) -> Vec<String> {
    let who = account_text(a);
    let with = |bits: u64| {
        if bits & GRANT_OPTION != 0 {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    };
    let auth = a
        .auth
        .as_ref()
        .map(|h| format!(" IDENTIFIED BY PASSWORD '{}'", hash_text(h)))
        .unwrap_or_default();
    let mut out = vec![format!(
        "GRANT {} ON *.* TO {who}{auth}{}",
        privilege_list(a.global, Level::Global),
        with(a.global)
    )];
    for (db, bits) in &a.dbs {
        out.push(format!(
            "GRANT {} ON {}.* TO {who}{}",
            privilege_list(*bits, Level::Db),
            backticked(db),
            with(*bits)
        ));
    }
    for ((db, t), bits) in &a.tables {
        out.push(format!(
            "GRANT {} ON {}.{} TO {who}{}",
            privilege_list(*bits, Level::Table),
            backticked(db),
            backticked(t),
            with(*bits)
        ));
    }
    out
}

/// SHOW CREATE USER's statement for `a`.
pub fn create_user_text(a: &Account) -> String {
    let auth = a
        .auth
        .as_ref()
        .map(|h| format!(" IDENTIFIED BY PASSWORD '{}'", hash_text(h)))
        .unwrap_or_default();
    format!("CREATE USER {}{auth}", account_text(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_entries_round_trip() {
        let mut a = Account::new("app", "10.0.0.%", Some(native_hash(b"pw")));
        a.global = PROCESS;
        a.dbs.insert("shop".into(), SELECT | INSERT | GRANT_OPTION);
        a.dbs.insert("test\\_%".into(), all_at(Level::Db));
        a.tables.insert(("shop".into(), "orders".into()), UPDATE);
        let b = Account::new("", "localhost", None);
        let mut entries: Vec<_> = encode_account(&a)
            .into_iter()
            .chain(encode_account(&b))
            .collect();
        entries.sort();
        let back = decode_entries(&entries).unwrap();
        let find = |u: &str| back.iter().find(|x| x.user == u).unwrap().as_ref().clone();
        assert_eq!(find("app"), a);
        assert_eq!(find(""), b);
        // A grant without its account is corrupt, not ignored.
        let orphan: Vec<_> = entries
            .iter()
            .filter(|(k, _)| !(k[0] == KIND_USER && k[1] == b"app"))
            .cloned()
            .collect();
        assert!(decode_entries(&orphan).is_err());
    }

    #[test]
    fn hosts_match_like_mariadb_patterns() {
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        let lan: IpAddr = "10.0.0.7".parse().unwrap();
        let mapped: IpAddr = "::ffff:10.0.0.7".parse().unwrap();
        assert!(host_matches("localhost", lo));
        assert!(!host_matches("localhost", lan));
        assert!(host_matches("%", lan));
        assert!(host_matches("10.0.0.%", lan));
        assert!(host_matches("10.0.0.%", mapped));
        assert!(!host_matches("10.0.1.%", lan));
        assert!(host_matches("10.0.0.0/255.255.255.0", lan));
        assert!(!host_matches("10.0.0.0/255.255.255.0", lo));
        assert!(host_matches("local%", lo));
        assert!(host_matches("127.0.0.1", lo));
    }

    #[test]
    fn login_prefers_the_most_specific_host_then_a_named_user() {
        let accounts = Accounts {
            list: RwLock::new(Vec::new()),
            version: AtomicU64::new(1),
        };
        let list = vec![
            Arc::new(Account::new("bob", "%", Some(native_hash(b"any")))),
            Arc::new(Account::new("bob", "10.0.0.%", Some(native_hash(b"lan")))),
            Arc::new(Account::new("", "10.0.0.7", None)),
            Arc::new(Account::new("bob", "localhost", None)),
        ];
        accounts.install(list);
        let at = |ip: &str| {
            let a = accounts.login("bob", ip.parse().unwrap()).unwrap();
            (a.user.clone(), a.host.clone())
        };
        assert_eq!(at("127.0.0.1"), ("bob".into(), "localhost".into()));
        assert_eq!(at("10.0.0.8"), ("bob".into(), "10.0.0.%".into()));
        // An exact host beats a pattern even for the anonymous user (as MariaDB).
        assert_eq!(at("10.0.0.7"), ("".into(), "10.0.0.7".into()));
        assert_eq!(at("192.168.1.1"), ("bob".into(), "%".into()));
        assert!(accounts
            .login("eve", "192.168.1.1".parse().unwrap())
            .is_none());
    }

    #[test]
    fn privileges_come_from_any_level_and_the_first_missing_one_is_named() {
        let mut a = Account::new("bob", "localhost", None);
        a.dbs.insert("app".into(), INSERT);
        a.tables.insert(("app".into(), "t".into()), SELECT);
        let need = |db: &str, t: &str, privs| Need::Table {
            db: db.into(),
            name: t.into(),
            privs,
        };
        assert!(check(&a, "localhost", &[need("app", "t", SELECT | INSERT)]).is_ok());
        let e = check(&a, "localhost", &[need("app", "u", SELECT)]).unwrap_err();
        assert_eq!(e.code, 1142);
        assert_eq!(
            e.message,
            "SELECT command denied to user 'bob'@'localhost' for table `app`.`u`"
        );
        let e = check(&a, "localhost", &[need("app", "t", INSERT | DELETE)]).unwrap_err();
        assert!(
            e.message.starts_with("DELETE command denied"),
            "{}",
            e.message
        );
        assert!(check(&a, "localhost", &[Need::AnyInDb("app".into())]).is_ok());
        assert_eq!(
            check(&a, "localhost", &[Need::AnyInDb("mysql".into())])
                .unwrap_err()
                .code,
            1044
        );
        let e = check(&a, "localhost", &[Need::Global(CREATE_USER)]).unwrap_err();
        assert_eq!(
            e.message,
            "Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation"
        );
        a.global = all_at(Level::Global);
        assert!(a.is_superuser());
    }
}
