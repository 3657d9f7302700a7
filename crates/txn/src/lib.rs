//! tierdb-txn: row locks for transactions.
//!
//! Owns: the lock table (row locks keyed by (table id, encoded primary key), shared or
//! exclusive, held to commit or rollback), lock waits with a timeout (MySQL 1205), and
//! deadlock detection on the wait-for graph (the requester that closes a cycle is the victim:
//! MySQL 1213).
//!
//! Modes: any number of transactions may hold a row in `Shared` mode (`SELECT ... FOR SHARE`);
//! `Exclusive` (writes, `FOR UPDATE`) excludes every other holder. A holder of `Shared` asks
//! for `Exclusive` to upgrade: it waits for the other shared holders to leave (two holders
//! both upgrading is a deadlock, one of them the victim). A new shared request waits while an
//! exclusive request waits for the same row (it queues behind the writer, and the wait-for
//! graph has that edge), so a stream of readers cannot starve a writer; waiters of the same
//! mode are not ordered among themselves (each retries at every release).
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
    /// The statement waiting was killed (`watch_interrupt`).
    #[error("interrupted")]
    Interrupted,
}

thread_local! {
    /// The kill flag of the statement running on this thread (`watch_interrupt`).
    static INTERRUPT: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicU8>>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes lock waits on this thread watch `flag` (KILL QUERY / KILL CONNECTION of the
/// statement running here): once it is non-zero, a wait ends with `LockError::Interrupted`
/// within one recheck interval. Returns the flag watched before, to put back.
pub fn watch_interrupt(
    flag: Option<std::sync::Arc<std::sync::atomic::AtomicU8>>,
) -> Option<std::sync::Arc<std::sync::atomic::AtomicU8>> {
    INTERRUPT.with(|i| i.replace(flag))
}

thread_local! {
    /// Where a lock wait on this thread shows itself, and with which value
    /// (`report_lock_waits`).
    static WAIT_SHOWN: std::cell::RefCell<Option<(std::sync::Arc<std::sync::atomic::AtomicU8>, u8)>> =
        const { std::cell::RefCell::new(None) };
}

/// Makes lock waits on this thread store `value` in `flag` while they wait (and 0 after):
/// SHOW PROCESSLIST's State of the statement running here. Returns what was set before.
pub fn report_lock_waits(
    to: Option<(std::sync::Arc<std::sync::atomic::AtomicU8>, u8)>,
) -> Option<(std::sync::Arc<std::sync::atomic::AtomicU8>, u8)> {
    WAIT_SHOWN.with(|w| w.replace(to))
}

/// Shows a lock wait on this thread's flag until dropped.
struct WaitShown;

impl WaitShown {
    fn start() -> WaitShown {
        WAIT_SHOWN.with(|w| {
            if let Some((f, v)) = &*w.borrow() {
                f.store(*v, std::sync::atomic::Ordering::Relaxed);
            }
        });
        WaitShown
    }
}

impl Drop for WaitShown {
    fn drop(&mut self) {
        WAIT_SHOWN.with(|w| {
            if let Some((f, _)) = &*w.borrow() {
                f.store(0, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
}

fn interrupted() -> bool {
    INTERRUPT.with(|i| {
        i.borrow()
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed) != 0)
    })
}

/// How a row is locked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockMode {
    /// Readers that must see the row unchanged until they end (`FOR SHARE`).
    Shared,
    /// Writers and `FOR UPDATE`.
    Exclusive,
}

/// A lockable row: table id and encoded key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LockKey {
    pub table: u64,
    pub key: Vec<u8>,
}

/// Who holds one row: one exclusive holder, or one or more shared holders.
#[derive(Debug)]
enum Holders {
    Exclusive(TxnId),
    Shared(Vec<TxnId>),
}

impl Holders {
    /// The holders `txn` must wait for to get `mode` (empty: it can have it now).
    fn blockers(&self, txn: TxnId, mode: LockMode) -> Vec<TxnId> {
        match (self, mode) {
            (Holders::Exclusive(o), _) if *o == txn => Vec::new(),
            (Holders::Exclusive(o), _) => vec![*o],
            (Holders::Shared(_), LockMode::Shared) => Vec::new(),
            (Holders::Shared(v), LockMode::Exclusive) => {
                v.iter().copied().filter(|&o| o != txn).collect()
            }
        }
    }

    fn holds(&self, txn: TxnId) -> bool {
        match self {
            Holders::Exclusive(o) => *o == txn,
            Holders::Shared(v) => v.contains(&txn),
        }
    }
}

#[derive(Default)]
struct ShardState {
    owners: HashMap<LockKey, Holders>,
    /// Rows with waiting exclusive requests, and who waits.
    x_waiting: HashMap<LockKey, Vec<TxnId>>,
}

impl ShardState {
    fn remove_x_waiter(&mut self, key: &LockKey, txn: TxnId) {
        if let Some(v) = self.x_waiting.get_mut(key) {
            v.retain(|&t| t != txn);
            if v.is_empty() {
                self.x_waiting.remove(key);
            }
        }
    }
}

struct Shard {
    state: Mutex<ShardState>,
    released: Condvar,
}

const SHARDS: usize = 64;
/// Waiters wake at least this often to re-run deadlock detection.
const RECHECK: Duration = Duration::from_millis(50);

pub struct LockManager {
    shards: Vec<Shard>,
    /// txn → the txns it waits for.
    waits_for: Mutex<HashMap<TxnId, Vec<TxnId>>>,
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
                    state: Mutex::new(ShardState::default()),
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

    /// True when waiting for `owners` would close a cycle back to `me` (a depth-first walk
    /// of the wait-for graph).
    fn closes_cycle(graph: &HashMap<TxnId, Vec<TxnId>>, me: TxnId, owners: &[TxnId]) -> bool {
        let mut stack: Vec<TxnId> = owners.to_vec();
        let mut seen: Vec<TxnId> = Vec::new();
        while let Some(cur) = stack.pop() {
            if cur == me {
                return true;
            }
            if seen.contains(&cur) {
                continue;
            }
            seen.push(cur);
            if let Some(next) = graph.get(&cur) {
                stack.extend_from_slice(next);
            }
        }
        false
    }

    /// Takes the exclusive lock on `key` for `txn` (see `lock_mode`).
    pub fn lock(&self, txn: TxnId, key: &LockKey, timeout: Duration) -> Result<bool, LockError> {
        self.lock_mode(txn, key, LockMode::Exclusive, timeout)
    }

    /// Takes `key` in `mode` for `txn`, waiting up to `timeout`. Returns true when `txn` did
    /// not hold the row before (the caller remembers the key for `release`), false when it
    /// already held it (in any mode; a shared holder asking for `Exclusive` is upgraded).
    pub fn lock_mode(
        &self,
        txn: TxnId,
        key: &LockKey,
        mode: LockMode,
        timeout: Duration,
    ) -> Result<bool, LockError> {
        let shard = self.shard(key);
        let deadline = Instant::now() + timeout;
        let mut st = shard.state.lock();
        let mut counted = false;
        let mut queued = false;
        // Shown as waiting from the first wait until this returns.
        let mut _shown: Option<WaitShown> = None;
        // Leaving the wait (granted, deadlock or timeout): forget the wait-for edges and the
        // queued exclusive request (whose leaving may unblock queued readers).
        let leave = |st: &mut ShardState, queued: bool, counted: bool| {
            if queued {
                st.remove_x_waiter(key, txn);
                shard.released.notify_all();
            }
            if counted {
                self.waits_for.lock().remove(&txn);
            }
        };
        loop {
            let holds = st.owners.get(key).is_some_and(|h| h.holds(txn));
            let mut blockers = st
                .owners
                .get(key)
                .map_or_else(Vec::new, |h| h.blockers(txn, mode));
            if mode == LockMode::Shared && !holds {
                if let Some(w) = st.x_waiting.get(key) {
                    blockers.extend(w.iter().copied().filter(|&t| t != txn));
                }
            }
            if blockers.is_empty() {
                let granted = match st.owners.get_mut(key) {
                    None => {
                        st.owners.insert(
                            key.clone(),
                            match mode {
                                LockMode::Exclusive => Holders::Exclusive(txn),
                                LockMode::Shared => Holders::Shared(vec![txn]),
                            },
                        );
                        true
                    }
                    Some(h) => {
                        match (h, mode) {
                            (Holders::Shared(v), LockMode::Shared) => {
                                if !holds {
                                    v.push(txn);
                                }
                            }
                            (h @ Holders::Shared(_), LockMode::Exclusive) => {
                                *h = Holders::Exclusive(txn);
                            }
                            (Holders::Exclusive(_), _) => {}
                        }
                        !holds
                    }
                };
                leave(&mut st, queued, counted);
                return Ok(granted);
            }
            if timeout.is_zero() {
                // A request that will not wait (NOWAIT / SKIP LOCKED) waits for nobody, so it
                // closes no cycle: it times out at once instead of being a deadlock victim.
                leave(&mut st, queued, counted);
                return Err(LockError::Timeout);
            }
            {
                let mut g = self.waits_for.lock();
                if Self::closes_cycle(&g, txn, &blockers) {
                    g.remove(&txn);
                    drop(g);
                    self.stats
                        .deadlocks
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    leave(&mut st, queued, false);
                    return Err(LockError::Deadlock);
                }
                g.insert(txn, blockers);
            }
            if mode == LockMode::Exclusive && !queued {
                queued = true;
                st.x_waiting.entry(key.clone()).or_default().push(txn);
            }
            if !counted {
                counted = true;
                self.stats
                    .waits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                _shown = Some(WaitShown::start());
            }
            let now = Instant::now();
            if now >= deadline {
                self.stats
                    .timeouts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                leave(&mut st, queued, counted);
                return Err(LockError::Timeout);
            }
            if interrupted() {
                leave(&mut st, queued, counted);
                return Err(LockError::Interrupted);
            }
            let wait = (deadline - now).min(RECHECK);
            shard.released.wait_for(&mut st, wait);
        }
    }

    /// Releases locks held by `txn`.
    pub fn release<'a>(&self, txn: TxnId, keys: impl IntoIterator<Item = &'a LockKey>) {
        for k in keys {
            let shard = self.shard(k);
            let mut st = shard.state.lock();
            let Some(h) = st.owners.get_mut(k) else {
                continue;
            };
            let (held, now_free) = match h {
                Holders::Exclusive(o) => (*o == txn, true),
                Holders::Shared(v) => {
                    let before = v.len();
                    v.retain(|&o| o != txn);
                    (v.len() != before, v.is_empty())
                }
            };
            if !held {
                continue;
            }
            if now_free {
                st.owners.remove(k);
            }
            // Also when shared holders remain: an upgrader may be waiting for just this one.
            shard.released.notify_all();
        }
    }

    /// Number of rows currently locked (for status output and tests).
    pub fn held(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.state.lock().owners.len())
            .sum()
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

    #[test]
    fn shared_holders_coexist_and_block_a_writer_until_all_leave() {
        let lm = Arc::new(LockManager::new());
        let sh = LockMode::Shared;
        let t = Duration::from_secs(5);
        assert!(lm.lock_mode(1, &k(1), sh, t).unwrap());
        assert!(lm.lock_mode(2, &k(1), sh, t).unwrap());
        assert!(!lm.lock_mode(2, &k(1), sh, t).unwrap(), "already held");
        assert_eq!(
            lm.lock(3, &k(1), Duration::from_millis(80)),
            Err(LockError::Timeout),
            "a writer waits for the readers"
        );
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(3, &k(1), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        lm.release(1, [&k(1)]);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!h.is_finished(), "one reader is still there");
        lm.release(2, [&k(1)]);
        assert_eq!(h.join().unwrap(), Ok(true));
        // Now exclusive: a reader waits.
        assert_eq!(
            lm.lock_mode(1, &k(1), sh, Duration::from_millis(80)),
            Err(LockError::Timeout)
        );
        // The exclusive holder asking for shared keeps its exclusive lock.
        assert!(!lm.lock_mode(3, &k(1), sh, t).unwrap());
        assert_eq!(
            lm.lock_mode(1, &k(1), sh, Duration::from_millis(50)),
            Err(LockError::Timeout)
        );
        lm.release(3, [&k(1)]);
        assert_eq!(lm.held(), 0);
    }

    #[test]
    fn sole_reader_upgrades_and_two_upgraders_deadlock() {
        let lm = Arc::new(LockManager::new());
        let sh = LockMode::Shared;
        let t = Duration::from_secs(5);
        lm.lock_mode(1, &k(1), sh, t).unwrap();
        assert!(
            !lm.lock(1, &k(1), t).unwrap(),
            "sole shared holder upgrades at once"
        );
        assert_eq!(
            lm.lock_mode(2, &k(1), sh, Duration::from_millis(50)),
            Err(LockError::Timeout),
            "the upgrade is exclusive"
        );
        lm.release(1, [&k(1)]);

        lm.lock_mode(1, &k(2), sh, t).unwrap();
        lm.lock_mode(2, &k(2), sh, t).unwrap();
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(1, &k(2), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(lm.lock(2, &k(2), t), Err(LockError::Deadlock));
        lm.release(2, [&k(2)]);
        assert_eq!(
            h.join().unwrap(),
            Ok(false),
            "1 held it shared: upgraded, not new"
        );
        lm.release(1, [&k(2)]);
        assert_eq!(lm.held(), 0);
    }

    #[test]
    fn a_request_that_will_not_wait_times_out_instead_of_being_a_deadlock_victim() {
        // 1 holds k1 and waits for k2; 2 holds k2 and asks for k1 with a zero timeout
        // (NOWAIT / SKIP LOCKED): it would close the cycle if it waited, but it does not wait.
        let lm = Arc::new(LockManager::new());
        let t = Duration::from_secs(5);
        lm.lock(1, &k(1), t).unwrap();
        lm.lock(2, &k(2), t).unwrap();
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(1, &k(2), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(lm.lock(2, &k(1), Duration::ZERO), Err(LockError::Timeout));
        assert_eq!(lm.lock(2, &k(1), Duration::ZERO), Err(LockError::Timeout));
        lm.release(2, [&k(2)]);
        assert_eq!(h.join().unwrap(), Ok(true), "1 gets k2 once 2 lets go");
        lm.release(1, [&k(1), &k(2)]);
        assert_eq!(lm.held(), 0);
    }

    #[test]
    fn deadlock_through_a_shared_holder_is_found() {
        // 1 holds k1 shared with 3; 2 holds k2. 1 waits for k2 (held by 2); 2 asks for k1
        // exclusively: it must wait for 1 and 3, and 1 waits for 2 → cycle.
        let lm = Arc::new(LockManager::new());
        let t = Duration::from_secs(5);
        lm.lock_mode(1, &k(1), LockMode::Shared, t).unwrap();
        lm.lock_mode(3, &k(1), LockMode::Shared, t).unwrap();
        lm.lock(2, &k(2), t).unwrap();
        let lm2 = lm.clone();
        let h = std::thread::spawn(move || lm2.lock(1, &k(2), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(lm.lock(2, &k(1), t), Err(LockError::Deadlock));
        lm.release(2, [&k(2)]);
        assert_eq!(h.join().unwrap(), Ok(true));
    }

    #[test]
    fn a_waiting_writer_is_not_starved_by_new_readers() {
        let lm = Arc::new(LockManager::new());
        let sh = LockMode::Shared;
        let t = Duration::from_secs(5);
        lm.lock_mode(1, &k(1), sh, t).unwrap();
        let lm2 = lm.clone();
        let writer = std::thread::spawn(move || lm2.lock(2, &k(1), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        // A new reader queues behind the waiting writer instead of joining reader 1.
        assert_eq!(
            lm.lock_mode(3, &k(1), sh, Duration::from_millis(80)),
            Err(LockError::Timeout)
        );
        let lm3 = lm.clone();
        let reader = std::thread::spawn(move || lm3.lock_mode(3, &k(1), sh, t));
        std::thread::sleep(Duration::from_millis(50));
        // Reader 1 already holds the row: asking again does not wait.
        assert!(!lm.lock_mode(1, &k(1), sh, t).unwrap());
        lm.release(1, [&k(1)]);
        assert_eq!(writer.join().unwrap(), Ok(true), "the writer goes first");
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !reader.is_finished(),
            "the reader waits for the writer to end"
        );
        lm.release(2, [&k(1)]);
        assert_eq!(reader.join().unwrap(), Ok(true));
        lm.release(3, [&k(1)]);
        assert_eq!(lm.held(), 0);
    }

    #[test]
    fn a_writer_that_gives_up_lets_queued_readers_in() {
        let lm = Arc::new(LockManager::new());
        let sh = LockMode::Shared;
        lm.lock_mode(1, &k(1), sh, Duration::from_secs(5)).unwrap();
        let lm2 = lm.clone();
        let writer = std::thread::spawn(move || lm2.lock(2, &k(1), Duration::from_millis(150)));
        std::thread::sleep(Duration::from_millis(50));
        let lm3 = lm.clone();
        let reader =
            std::thread::spawn(move || lm3.lock_mode(3, &k(1), sh, Duration::from_secs(5)));
        assert_eq!(writer.join().unwrap(), Err(LockError::Timeout));
        assert_eq!(reader.join().unwrap(), Ok(true), "shares with reader 1");
        lm.release(1, [&k(1)]);
        lm.release(3, [&k(1)]);
        assert_eq!(lm.held(), 0);
    }

    #[test]
    fn a_reader_queued_behind_a_writer_is_part_of_the_wait_for_graph() {
        // 1 holds k1 shared; 3 holds k2. Writer 2 waits for k1 (for 1). Reader 3 asks for k1
        // shared: it queues behind 2. Then 1 asks for k2 (held by 3): 1 → 3 → 2 → 1 closes a
        // cycle that only exists because 3 queues behind the writer.
        let lm = Arc::new(LockManager::new());
        let t = Duration::from_secs(5);
        lm.lock_mode(1, &k(1), LockMode::Shared, t).unwrap();
        lm.lock(3, &k(2), t).unwrap();
        let lm2 = lm.clone();
        let writer = std::thread::spawn(move || lm2.lock(2, &k(1), Duration::from_secs(5)));
        std::thread::sleep(Duration::from_millis(50));
        let lm3 = lm.clone();
        let reader = std::thread::spawn(move || {
            lm3.lock_mode(3, &k(1), LockMode::Shared, Duration::from_secs(5))
        });
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(lm.lock(1, &k(2), t), Err(LockError::Deadlock));
        lm.release(1, [&k(1)]);
        assert_eq!(writer.join().unwrap(), Ok(true));
        lm.release(2, [&k(1)]);
        assert_eq!(reader.join().unwrap(), Ok(true));
        lm.release(3, [&k(1), &k(2)]);
        assert_eq!(lm.held(), 0);
    }
}
