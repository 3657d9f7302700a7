//! tierdb-txn: row locks for transactions.
//!
//! Owns: the lock table (exclusive row locks keyed by (table id, encoded primary key), held
//! to commit or rollback), lock waits with a timeout (MySQL 1205), and deadlock detection on
//! the wait-for graph (the requester that closes a cycle is the victim: MySQL 1213).
//!
//! Lock order inside this crate: a shard mutex, then the wait-for graph mutex; never the other
//! way round. Must never: block while holding the wait-for mutex; let a waiter sleep without
//! a deadline.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::time::{Duration, Instant};

/// Transaction identifier; 0 means "no transaction".
pub type TxnId = u64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    #[error("deadlock")]
    Deadlock,
    #[error("lock wait timeout")]
    Timeout,
}

/// A lockable row: table id and encoded key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub table: u64,
    pub key: Vec<u8>,
}

struct Shard {
    owners: Mutex<HashMap<LockKey, TxnId>>,
    released: Condvar,
}

const SHARDS: usize = 64;
/// Waiters wake at least this often to re-run deadlock detection.
const RECHECK: Duration = Duration::from_millis(50);

pub struct LockManager {
    shards: Vec<Shard>,
    /// txn → the txn it waits for.
    waits_for: Mutex<HashMap<TxnId, TxnId>>,
    hasher: std::collections::hash_map::RandomState,
    stats: LockStats,
}

#[derive(Default, Debug)]
pub struct LockStats {
    pub waits: std::sync::atomic::AtomicU64,
    pub deadlocks: std::sync::atomic::AtomicU64,
    pub timeouts: std::sync::atomic::AtomicU64,
}

impl Default for LockManager {
    fn default() -> Self {
        LockManager::new()
    }
}

impl LockManager {
    pub fn new() -> LockManager {
        LockManager {
            shards: (0..SHARDS)
                .map(|_| Shard {
                    owners: Mutex::new(HashMap::new()),
                    released: Condvar::new(),
                })
                .collect(),
            waits_for: Mutex::new(HashMap::new()),
            hasher: Default::default(),
            stats: LockStats::default(),
        }
    }

    pub fn stats(&self) -> &LockStats {
        &self.stats
    }

    fn shard(&self, k: &LockKey) -> &Shard {
        &self.shards[(self.hasher.hash_one(k) as usize) % SHARDS]
    }

    /// True when waiting for `owner` would close a cycle back to `me`.
    fn closes_cycle(graph: &HashMap<TxnId, TxnId>, me: TxnId, owner: TxnId) -> bool {
        let mut cur = owner;
        for _ in 0..graph.len() + 1 {
            if cur == me {
                return true;
            }
            match graph.get(&cur) {
                Some(&n) => cur = n,
                None => return false,
            }
        }
        false
    }

    /// Takes the exclusive lock on `key` for `txn`. Returns true when newly acquired (the
    /// caller remembers it for `release`), false when `txn` already held it.
    pub fn lock(&self, txn: TxnId, key: &LockKey, timeout: Duration) -> Result<bool, LockError> {
        let shard = self.shard(key);
        let deadline = Instant::now() + timeout;
        let mut owners = shard.owners.lock();
        let mut counted = false;
        loop {
            let owner = match owners.get(key) {
                None => {
                    owners.insert(key.clone(), txn);
                    if counted {
                        self.waits_for.lock().remove(&txn);
                    }
                    return Ok(true);
                }
                Some(&o) if o == txn => return Ok(false),
                Some(&o) => o,
            };
            {
                let mut g = self.waits_for.lock();
                if Self::closes_cycle(&g, txn, owner) {
                    g.remove(&txn);
                    self.stats
                        .deadlocks
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return Err(LockError::Deadlock);
                }
                g.insert(txn, owner);
            }
            if !counted {
                counted = true;
                self.stats
                    .waits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            let now = Instant::now();
            if now >= deadline {
                self.waits_for.lock().remove(&txn);
                self.stats
                    .timeouts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                return Err(LockError::Timeout);
            }
            let wait = (deadline - now).min(RECHECK);
            shard.released.wait_for(&mut owners, wait);
        }
    }

    /// Releases locks held by `txn`.
    pub fn release<'a>(&self, txn: TxnId, keys: impl IntoIterator<Item = &'a LockKey>) {
        for k in keys {
            let shard = self.shard(k);
            let mut owners = shard.owners.lock();
            if owners.get(k) == Some(&txn) {
                owners.remove(k);
                shard.released.notify_all();
            }
        }
    }

    /// Number of locks currently held (for status output and tests).
    pub fn held(&self) -> usize {
        self.shards.iter().map(|s| s.owners.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn k(i: u8) -> LockKey {
        LockKey {
            table: 1,
            key: vec![i],
        }
    }

    #[test]
    fn second_locker_waits_until_release() {
        let lm = Arc::new(LockManager::new());
        assert!(lm.lock(1, &k(1), Duration::from_secs(1)).unwrap());
        assert!(!lm.lock(1, &k(1), Duration::from_secs(1)).unwrap());
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(2, &k(1), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        lm.release(1, [&k(1)]);
        assert_eq!(h.join().unwrap(), Ok(true));
    }

    #[test]
    fn lock_wait_times_out() {
        let lm = LockManager::new();
        lm.lock(1, &k(1), Duration::from_secs(1)).unwrap();
        let t = Instant::now();
        assert_eq!(
            lm.lock(2, &k(1), Duration::from_millis(120)),
            Err(LockError::Timeout)
        );
        assert!(t.elapsed() >= Duration::from_millis(120));
    }

    #[test]
    fn two_way_deadlock_aborts_one_victim() {
        let lm = Arc::new(LockManager::new());
        lm.lock(1, &k(1), Duration::from_secs(5)).unwrap();
        lm.lock(2, &k(2), Duration::from_secs(5)).unwrap();
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(1, &k(2), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        // Txn 2 now closes the cycle and is the victim.
        assert_eq!(
            lm.lock(2, &k(1), Duration::from_secs(5)),
            Err(LockError::Deadlock)
        );
        lm.release(2, [&k(2)]);
        assert_eq!(h.join().unwrap(), Ok(true));
    }
}
