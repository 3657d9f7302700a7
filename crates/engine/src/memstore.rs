//! TEMPORARY scaffold: an in-memory store behind the engine API so that the SQL and server
//! layers can be developed while the page-based storage is wired in. Not durable. Replaced by
//! the B+tree storage; must not survive into a release.

use crate::keys::{encode_key, lower_bound, upper_bound};
use crate::{EngineConfig, Error, IndexDef, Result, Row, Table, TableDef, Value};
use parking_lot::RwLock;
use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

struct MemTable {
    table: Arc<Table>,
    rows: BTreeMap<Vec<u8>, Row>,
    auto_inc: i64,
}

pub(crate) enum Undo {
    Put { table: u64, key: Vec<u8>, old: Option<Row> },
}

pub(crate) struct Store {
    _cfg: EngineConfig,
    dbs: RwLock<BTreeMap<String, BTreeMap<String, u64>>>,
    tables: RwLock<BTreeMap<u64, MemTable>>,
    next_id: AtomicU64,
}

fn pk_of(def: &TableDef, row: &Row) -> Vec<Value> {
    def.primary_key.iter().map(|&i| row[i].clone()).collect()
}

impl Store {
    pub fn new(cfg: EngineConfig) -> Store {
        let mut dbs = BTreeMap::new();
        dbs.insert("mysql".to_string(), BTreeMap::new());
        Store { _cfg: cfg, dbs: RwLock::new(dbs), tables: RwLock::new(BTreeMap::new()), next_id: AtomicU64::new(1) }
    }
    pub fn cfg(&self) -> &EngineConfig {
        &self._cfg
    }
    pub fn create_database(&self, name: &str) -> Result<()> {
        let mut d = self.dbs.write();
        if d.contains_key(name) {
            return Err(Error::DatabaseExists(name.into()));
        }
        d.insert(name.into(), BTreeMap::new());
        Ok(())
    }
    pub fn drop_database(&self, name: &str) -> Result<()> {
        let t = self.dbs.write().remove(name).ok_or_else(|| Error::NoSuchDatabase(name.into()))?;
        let mut tables = self.tables.write();
        for id in t.values() {
            tables.remove(id);
        }
        Ok(())
    }
    pub fn database_exists(&self, name: &str) -> bool {
        self.dbs.read().contains_key(name)
    }
    pub fn databases(&self) -> Vec<String> {
        self.dbs.read().keys().cloned().collect()
    }
    pub fn create_table(&self, db: &str, mut def: TableDef) -> Result<()> {
        let mut d = self.dbs.write();
        let tabs = d.get_mut(db).ok_or_else(|| Error::NoSuchDatabase(db.into()))?;
        if tabs.contains_key(&def.name) {
            return Err(Error::TableExists(def.name.clone()));
        }
        if def.primary_key.is_empty() {
            return Err(Error::NotSupported("tables without a PRIMARY KEY".into()));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        tabs.insert(def.name.clone(), id);
        def.indexes.retain(|_| true);
        let table = Arc::new(Table { db: db.into(), def, id });
        self.tables.write().insert(id, MemTable { table, rows: BTreeMap::new(), auto_inc: 0 });
        Ok(())
    }
    fn id_of(&self, db: &str, name: &str) -> Result<u64> {
        let d = self.dbs.read();
        let tabs = d.get(db).ok_or_else(|| Error::NoSuchDatabase(db.into()))?;
        tabs.get(name).copied().ok_or_else(|| Error::NoSuchTable { db: db.into(), table: name.into() })
    }
    pub fn drop_table(&self, db: &str, name: &str) -> Result<()> {
        let id = self.id_of(db, name)?;
        self.dbs.write().get_mut(db).map(|t| t.remove(name));
        self.tables.write().remove(&id);
        Ok(())
    }
    pub fn create_index(&self, db: &str, table: &str, index: IndexDef) -> Result<()> {
        let id = self.id_of(db, table)?;
        let mut tables = self.tables.write();
        let mt = tables.get_mut(&id).ok_or_else(|| Error::Internal("table vanished".into()))?;
        if mt.table.def.indexes.iter().any(|i| i.name == index.name) {
            return Err(Error::IndexExists(index.name));
        }
        let mut def = mt.table.def.clone();
        def.indexes.push(index);
        mt.table = Arc::new(Table { db: db.into(), def, id });
        Ok(())
    }
    pub fn drop_index(&self, db: &str, table: &str, index: &str) -> Result<()> {
        let id = self.id_of(db, table)?;
        let mut tables = self.tables.write();
        let mt = tables.get_mut(&id).ok_or_else(|| Error::Internal("table vanished".into()))?;
        let mut def = mt.table.def.clone();
        def.indexes.retain(|i| i.name != index);
        mt.table = Arc::new(Table { db: db.into(), def, id });
        Ok(())
    }
    pub fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        let id = self.id_of(db, name)?;
        Ok(self.tables.read()[&id].table.clone())
    }
    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        let d = self.dbs.read();
        Ok(d.get(db).ok_or_else(|| Error::NoSuchDatabase(db.into()))?.keys().cloned().collect())
    }
    pub fn status(&self) -> Vec<(String, String)> {
        vec![("Tierdb_storage".into(), "memory-scaffold".into())]
    }
    pub fn get(&self, t: &Table, pk: &[Value]) -> Result<Option<Row>> {
        let tables = self.tables.read();
        let mt = tables.get(&t.id).ok_or_else(|| Error::NoSuchTable { db: t.db.clone(), table: t.def.name.clone() })?;
        Ok(mt.rows.get(&encode_key(pk)).cloned())
    }
    pub fn scan(&self, t: &Table, index: Option<usize>, lo: Bound<Vec<Value>>, hi: Bound<Vec<Value>>) -> Result<crate::RowCursor> {
        let tables = self.tables.read();
        let mt = tables.get(&t.id).ok_or_else(|| Error::NoSuchTable { db: t.db.clone(), table: t.def.name.clone() })?;
        let out: Vec<Result<Row>> = match index {
            None => mt.rows.range((lower_bound(&lo), upper_bound(&hi))).map(|(_, r)| Ok(r.clone())).collect(),
            Some(i) => {
                let idx = mt.table.def.indexes.get(i).ok_or_else(|| Error::Internal("bad index".into()))?;
                let mut v: Vec<(Vec<u8>, Row)> = mt
                    .rows
                    .values()
                    .map(|r| {
                        let mut k: Vec<Value> = idx.columns.iter().map(|&c| r[c].clone()).collect();
                        k.extend(pk_of(&mt.table.def, r));
                        (encode_key(&k), r.clone())
                    })
                    .collect();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                let (l, h) = (lower_bound(&lo), upper_bound(&hi));
                v.into_iter()
                    .filter(|(k, _)| (l.as_ref(), h.as_ref()).contains(k))
                    .map(|(_, r)| Ok(r))
                    .collect()
            }
        };
        Ok(Box::new(out.into_iter()))
    }
    pub fn insert(&self, t: &Table, mut row: Row, undo: &mut Vec<Undo>) -> Result<Option<i64>> {
        let mut tables = self.tables.write();
        let mt = tables.get_mut(&t.id).ok_or_else(|| Error::NoSuchTable { db: t.db.clone(), table: t.def.name.clone() })?;
        let mut assigned = None;
        for (i, c) in t.def.columns.iter().enumerate() {
            if c.auto_increment {
                match row[i] {
                    Value::Null | Value::Int(0) => {
                        mt.auto_inc += 1;
                        row[i] = Value::Int(mt.auto_inc);
                        assigned = Some(mt.auto_inc);
                    }
                    Value::Int(v) => mt.auto_inc = mt.auto_inc.max(v),
                    _ => {}
                }
            } else if row[i].is_null() && !c.nullable {
                return Err(Error::NotNull(c.name.clone()));
            }
        }
        let key = encode_key(&pk_of(&t.def, &row));
        if mt.rows.contains_key(&key) {
            let k: Vec<String> = pk_of(&t.def, &row).iter().map(|v| v.to_string()).collect();
            return Err(Error::DuplicateKey { key: k.join("-"), index: "PRIMARY".into() });
        }
        mt.rows.insert(key.clone(), row);
        undo.push(Undo::Put { table: t.id, key, old: None });
        Ok(assigned)
    }
    pub fn update(&self, t: &Table, pk: &[Value], new_row: Row, undo: &mut Vec<Undo>) -> Result<bool> {
        let mut tables = self.tables.write();
        let mt = tables.get_mut(&t.id).ok_or_else(|| Error::NoSuchTable { db: t.db.clone(), table: t.def.name.clone() })?;
        let key = encode_key(pk);
        let Some(old) = mt.rows.remove(&key) else { return Ok(false) };
        undo.push(Undo::Put { table: t.id, key, old: Some(old) });
        let nk = encode_key(&pk_of(&t.def, &new_row));
        let prev = mt.rows.insert(nk.clone(), new_row);
        undo.push(Undo::Put { table: t.id, key: nk, old: prev });
        Ok(true)
    }
    pub fn delete(&self, t: &Table, pk: &[Value], undo: &mut Vec<Undo>) -> Result<bool> {
        let mut tables = self.tables.write();
        let mt = tables.get_mut(&t.id).ok_or_else(|| Error::NoSuchTable { db: t.db.clone(), table: t.def.name.clone() })?;
        let key = encode_key(pk);
        let Some(old) = mt.rows.remove(&key) else { return Ok(false) };
        undo.push(Undo::Put { table: t.id, key, old: Some(old) });
        Ok(true)
    }
    pub fn rollback(&self, undo: Vec<Undo>) -> Result<()> {
        let mut tables = self.tables.write();
        for u in undo.into_iter().rev() {
            let Undo::Put { table, key, old } = u;
            if let Some(mt) = tables.get_mut(&table) {
                match old {
                    Some(r) => {
                        mt.rows.insert(key, r);
                    }
                    None => {
                        mt.rows.remove(&key);
                    }
                }
            }
        }
        Ok(())
    }
}
