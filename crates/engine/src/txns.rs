//! The table of active (writing) transactions and row-version visibility.
//!
//! A writing transaction registers here before its first change. For every key it changes it
//! records the FIRST before-image (the last committed version), so that readers who meet a
//! row written by an active transaction read that version instead (READ COMMITTED without
//! read locks). Readers check visibility while holding the leaf's shared latch, so a rollback
//! (which needs the exclusive latch to restore a row) cannot slip between their read of the
//! row and their look-up here.
//!
//! Lock order: page latch → `shards` → `ActiveTxn::writes`; `order` is never taken with a
//! page latch held. Must never: report a transaction as finished before its changes are
//! committed or rolled back.

use crate::rowcodec::{header, FLAG_DELETED};
use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// key → before-image (None = the key did not exist).
type BeforeImages = HashMap<Vec<u8>, Option<Vec<u8>>>;

pub struct ActiveTxn {
    pub id: u64,
    /// tree root → key → before-image (None = the key did not exist).
    writes: Mutex<HashMap<u64, BeforeImages>>,
}

impl ActiveTxn {
    /// Remembers the before-image of `key` unless one is already recorded.
    pub fn record_before(&self, tree: u64, key: &[u8], before: Option<&[u8]>) {
        let mut w = self.writes.lock();
        let t = w.entry(tree).or_default();
        if !t.contains_key(key) {
            t.insert(key.to_vec(), before.map(|b| b.to_vec()));
        }
    }
    fn before(&self, tree: u64, key: &[u8]) -> Option<Option<Vec<u8>>> {
        self.writes
            .lock()
            .get(&tree)
            .and_then(|t| t.get(key).cloned())
    }
}

const SHARDS: usize = 16;

pub struct ActiveTxns {
    shards: Vec<RwLock<HashMap<u64, Arc<ActiveTxn>>>>,
    /// next id and the set of active ids (for the oldest); one lock so that an id is never
    /// handed out without being active.
    order: Mutex<(u64, BTreeMap<u64, u64>)>,
    /// Rows written by a transaction id below this are committed (fast path).
    oldest_active: AtomicU64,
}

impl ActiveTxns {
    pub fn new(next_id: u64) -> ActiveTxns {
        ActiveTxns {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            order: Mutex::new((next_id.max(1), BTreeMap::new())),
            oldest_active: AtomicU64::new(u64::MAX),
        }
    }

    pub fn begin(&self, first_lsn: u64) -> Arc<ActiveTxn> {
        let mut o = self.order.lock();
        let id = o.0;
        o.0 += 1;
        let t = Arc::new(ActiveTxn {
            id,
            writes: Mutex::new(HashMap::new()),
        });
        self.shards[(id as usize) % SHARDS]
            .write()
            .insert(id, t.clone());
        o.1.insert(id, first_lsn);
        let oldest = o.1.keys().next().copied().unwrap_or(u64::MAX);
        self.oldest_active.store(oldest, Ordering::Release);
        t
    }

    pub fn end(&self, id: u64) {
        let mut o = self.order.lock();
        self.shards[(id as usize) % SHARDS].write().remove(&id);
        o.1.remove(&id);
        let oldest = o.1.keys().next().copied().unwrap_or(u64::MAX);
        self.oldest_active.store(oldest, Ordering::Release);
    }

    pub fn get(&self, id: u64) -> Option<Arc<ActiveTxn>> {
        if id < self.oldest_active.load(Ordering::Acquire) {
            return None;
        }
        self.shards[(id as usize) % SHARDS].read().get(&id).cloned()
    }

    /// Smallest `first_lsn` of the active transactions.
    pub fn min_first_lsn(&self) -> Option<u64> {
        self.order.lock().1.values().min().copied()
    }

    /// The id the next transaction will get: every transaction active now has a smaller one.
    pub fn next_id(&self) -> u64 {
        self.order.lock().0
    }

    /// Smallest id of an active transaction (`u64::MAX` when none is active).
    pub fn oldest_active(&self) -> u64 {
        self.oldest_active.load(Ordering::Acquire)
    }

    pub fn count(&self) -> usize {
        self.order.lock().1.len()
    }

    /// The version of a stored row that transaction `me` sees: the stored bytes, the
    /// before-image of an active writer, or nothing (absent or deleted).
    pub fn visible<'a>(&self, me: u64, tree: u64, key: &[u8], stored: &'a [u8]) -> Visible<'a> {
        let Some((flags, writer)) = header(stored) else {
            return Visible::Corrupt;
        };
        if writer != me {
            if let Some(t) = self.get(writer) {
                if let Some(before) = t.before(tree, key) {
                    return match before {
                        Some(b) if header(&b).is_some_and(|(f, _)| f & FLAG_DELETED == 0) => {
                            Visible::Owned(b)
                        }
                        Some(b) if header(&b).is_none() => Visible::Corrupt,
                        _ => Visible::None,
                    };
                }
            }
        }
        if flags & FLAG_DELETED != 0 {
            Visible::None
        } else {
            Visible::Stored(stored)
        }
    }
}

pub enum Visible<'a> {
    None,
    Stored(&'a [u8]),
    Owned(Vec<u8>),
    Corrupt,
}
