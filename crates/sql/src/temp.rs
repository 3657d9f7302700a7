//! A session's TEMPORARY tables: which of its (database, name)s are its own tables, filed in
//! the engine under keys no other session can name (`Engine::create_temporary_table`).
//!
//! Owns only the name → key map; the tables themselves are ordinary engine tables, created
//! and dropped by the session (`session.rs`), and resolved by the planner before the
//! database's tables and views (`PlanCx::qualify_table`), as MySQL does.
//!
//! Must never: hand a key to another session, or outlive its session's tables (the session
//! drops every one when it ends; the engine drops any a crash left behind when it opens).

use std::collections::BTreeMap;

/// (database, table name) → engine key, for one session.
#[derive(Default, Debug, Clone)]
pub struct TempTables {
    by_name: BTreeMap<(String, String), String>,
}

impl TempTables {
    /// The session has no TEMPORARY table.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
    /// The key of this session's TEMPORARY table `db`.`name`, if it has one.
    pub fn key(&self, db: &str, name: &str) -> Option<&str> {
        if self.by_name.is_empty() {
            return None;
        }
        self.by_name
            .get(&(db.to_string(), name.to_string()))
            .map(String::as_str)
    }
    pub fn insert(&mut self, db: &str, name: &str, key: String) {
        self.by_name.insert((db.to_string(), name.to_string()), key);
    }
    /// Forgets the table filed under `key` in `db` (dropped, or its database dropped).
    pub fn forget_key(&mut self, db: &str, key: &str) {
        self.by_name.retain(|(d, _), k| !(d == db && k == key));
    }
    /// Forgets every table of database `db` (DROP DATABASE took them).
    pub fn forget_database(&mut self, db: &str) {
        self.by_name.retain(|(d, _), _| d != db);
    }
    /// The table filed under `key` in `db` is now called `to`.
    pub fn rename(&mut self, db: &str, key: &str, to: &str) {
        self.forget_key(db, key);
        self.insert(db, to, key.to_string());
    }
    /// Every (database, key), to drop them all.
    pub fn take_all(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.by_name)
            .into_iter()
            .map(|((db, _), key)| (db, key))
            .collect()
    }
}
