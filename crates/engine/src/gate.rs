//! The per-table gate between writers, index builds and `LOCK TABLES` (a metadata lock, in
//! MySQL's terms).
//!
//! Every transaction that writes a table holds its gate (shared, by transaction id) from its
//! first write to its end. `CREATE INDEX` closes the gate, waits for the holders to end, builds
//! the index and publishes the new table handle, then opens it again: no change can be made —
//! or be rolled back — through a handle that does not know the new index while it is built.
//! Each handle carries the gate version it was made under; a writer holding an older handle is
//! moved to the current one (`Txn` does this on every write).
//!
//! Table locks (`LOCK TABLES`) are held by an *owner* (a session): a READ lock keeps every
//! writer out (several owners may hold READ together), a WRITE lock keeps out every writer but
//! the owner's own transactions (and every other lock). Taking one waits until no other owner's
//! transaction is inside. Plain reads never pass the gate.
//!
//! `DROP TABLE` closes the gate like a build (waiting for writers and table locks: a metadata
//! lock's wait) and leaves it closed for good: a writer or locker holding an older handle then
//! learns the table is gone.
//!
//! Must never: let a writer in while a build is running or another owner holds a table lock;
//! let a build start or a lock be granted while a conflicting writer is inside; wait without a
//! deadline.

use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A `LOCK TABLES` lock mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableLockMode {
    /// Nobody writes the table (the owner neither: the SQL layer refuses with 1099).
    Read,
    /// Only the owner writes the table.
    Write,
}

#[derive(Default)]
struct State {
    /// Writing transactions inside → their owner (0 = none).
    writers: HashMap<u64, u64>,
    /// Transactions holding row locks of the table without writing it (locking reads): a
    /// build waits for them (it may change the key bytes their locks are on); table locks
    /// do not.
    lockers: std::collections::HashSet<u64>,
    building: bool,
    /// Table locks: owner → mode.
    locks: HashMap<u64, TableLockMode>,
    /// The table was dropped: nobody gets in any more.
    dropped: bool,
}

impl State {
    /// May transaction `txn` of `owner` start writing? One that already holds row locks
    /// may even while a build waits for it (the build starts only once it has ended).
    fn admits_writer(&self, txn: u64, owner: u64) -> bool {
        (!self.building || self.lockers.contains(&txn))
            && self
                .locks
                .iter()
                .all(|(&o, &m)| o == owner && owner != 0 && m == TableLockMode::Write)
    }

    /// May `owner` take a `mode` lock now?
    fn admits_lock(&self, owner: u64, mode: TableLockMode) -> bool {
        !self.building
            && self.writers.values().all(|&o| o == owner)
            && self.locks.iter().all(|(&o, &m)| {
                o == owner || (mode == TableLockMode::Read && m == TableLockMode::Read)
            })
    }
}

#[derive(Default)]
pub(crate) struct TableGate {
    state: Mutex<State>,
    changed: Condvar,
    /// Bumped when the table's handle is replaced (index added or dropped).
    version: AtomicU64,
}

impl std::fmt::Debug for TableGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("TableGate")
            .field("writers", &st.writers.len())
            .field("building", &st.building)
            .field("locks", &st.locks.len())
            .field("version", &self.version())
            .finish()
    }
}

/// Why the gate could not be passed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GateError {
    /// Not in time (the caller's lock wait timeout).
    Timeout,
    /// The table was dropped (the caller held a handle made before).
    Dropped,
}

impl TableGate {
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The table's handle is being replaced: handles made before are stale from now on.
    pub(crate) fn bump_version(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Waits on `changed` until `ok(state)` or the deadline. True if `ok` holds.
    fn wait_until(
        &self,
        st: &mut parking_lot::MutexGuard<'_, State>,
        deadline: Instant,
        ok: impl Fn(&State) -> bool,
    ) -> bool {
        while !ok(st) {
            if self.changed.wait_until(st, deadline).timed_out() {
                return ok(st);
            }
        }
        true
    }

    /// Transaction `txn` of `owner` (0 = a transaction of no session) starts writing the
    /// table: waits while an index is built or another owner holds a table lock.
    pub(crate) fn enter(&self, txn: u64, owner: u64, timeout: Duration) -> Result<(), GateError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        if !self.wait_until(&mut st, deadline, |s| {
            s.dropped || s.admits_writer(txn, owner)
        }) {
            return Err(GateError::Timeout);
        }
        if st.dropped {
            return Err(GateError::Dropped);
        }
        st.writers.insert(txn, owner);
        Ok(())
    }

    /// Transaction `txn` is about to lock rows of the table (a locking read): waits while the
    /// table is being rebuilt or an index built, then keeps builds out until it ends.
    pub(crate) fn enter_locker(&self, txn: u64, timeout: Duration) -> Result<(), GateError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        if !self.wait_until(&mut st, deadline, |s| s.dropped || !s.building) {
            return Err(GateError::Timeout);
        }
        if st.dropped {
            return Err(GateError::Dropped);
        }
        st.lockers.insert(txn);
        Ok(())
    }

    /// Transaction `txn` has ended (committed or rolled back).
    pub(crate) fn leave(&self, txn: u64) {
        let mut st = self.state.lock();
        let writer = st.writers.remove(&txn).is_some();
        if st.lockers.remove(&txn) || writer {
            self.changed.notify_all();
        }
    }

    /// `LOCK TABLES`: `owner` takes (or changes to) a `mode` lock, waiting for conflicting
    /// writers and locks to go.
    pub(crate) fn lock(
        &self,
        owner: u64,
        mode: TableLockMode,
        timeout: Duration,
    ) -> Result<(), GateError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        if !self.wait_until(&mut st, deadline, |s| {
            s.dropped || s.admits_lock(owner, mode)
        }) {
            return Err(GateError::Timeout);
        }
        if st.dropped {
            return Err(GateError::Dropped);
        }
        st.locks.insert(owner, mode);
        Ok(())
    }

    /// `UNLOCK TABLES` (or the owner's session ended).
    pub(crate) fn unlock(&self, owner: u64) {
        let mut st = self.state.lock();
        if st.locks.remove(&owner).is_some() {
            self.changed.notify_all();
        }
    }

    /// Closes the gate and waits until no writer, no locking reader and no table lock is
    /// left. On a timeout the gate is open again.
    pub(crate) fn close(&self, timeout: Duration) -> Result<BuildGuard<'_>, GateError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        // Another build of this table (DDL is serialised, so only briefly).
        if !self.wait_until(&mut st, deadline, |s| !s.building) {
            return Err(GateError::Timeout);
        }
        if st.dropped {
            return Err(GateError::Dropped);
        }
        st.building = true;
        if !self.wait_until(&mut st, deadline, |s| {
            s.writers.is_empty() && s.lockers.is_empty() && s.locks.is_empty()
        }) {
            st.building = false;
            self.changed.notify_all();
            return Err(GateError::Timeout);
        }
        Ok(BuildGuard { gate: self })
    }
}

/// The gate is closed while this lives; dropping it opens the gate (unless the table was
/// dropped meanwhile: then it stays closed for good).
pub(crate) struct BuildGuard<'a> {
    gate: &'a TableGate,
}

impl BuildGuard<'_> {
    /// DROP TABLE: whoever still holds a handle is told the table is gone.
    pub(crate) fn mark_dropped(&self) {
        self.gate.state.lock().dropped = true;
    }
}

impl Drop for BuildGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.gate.state.lock();
        st.building = false;
        self.gate.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(60);

    #[test]
    fn read_locks_share_and_keep_every_writer_out() {
        let g = TableGate::default();
        g.lock(1, TableLockMode::Read, T).unwrap();
        g.lock(2, TableLockMode::Read, T).unwrap();
        assert_eq!(
            g.enter(10, 1, T),
            Err(GateError::Timeout),
            "the owner of a READ lock"
        );
        assert_eq!(g.enter(11, 3, T), Err(GateError::Timeout));
        assert_eq!(g.lock(3, TableLockMode::Write, T), Err(GateError::Timeout));
        g.unlock(1);
        g.unlock(2);
        g.enter(11, 3, T).unwrap();
        assert_eq!(
            g.lock(1, TableLockMode::Read, T),
            Err(GateError::Timeout),
            "a writer is inside"
        );
        g.leave(11);
        g.lock(1, TableLockMode::Read, T).unwrap();
    }

    #[test]
    fn a_build_waits_for_locking_readers_which_may_still_write() {
        let g = TableGate::default();
        g.enter_locker(20, T).unwrap();
        g.lock(1, TableLockMode::Read, T).unwrap();
        g.unlock(1);
        assert!(g.close(T).is_err(), "a build waits for the locker");
        std::thread::scope(|s| {
            let closer = s.spawn(|| g.close(Duration::from_secs(5)).map(|_| ()));
            std::thread::sleep(Duration::from_millis(30));
            // The locker goes on to write while the build waits for it; its end lets the
            // build in.
            g.enter(20, 0, T).unwrap();
            g.leave(20);
            assert_eq!(closer.join().unwrap(), Ok(()));
        });
        g.enter_locker(21, T).unwrap();
    }

    #[test]
    fn a_dropped_table_turns_everyone_away() {
        let g = TableGate::default();
        g.enter(10, 0, T).unwrap();
        assert!(g.close(T).is_err(), "a drop waits for the writer inside");
        g.leave(10);
        let closed = g.close(T).unwrap();
        closed.mark_dropped();
        drop(closed);
        assert_eq!(g.enter(11, 0, T), Err(GateError::Dropped));
        assert_eq!(g.lock(1, TableLockMode::Read, T), Err(GateError::Dropped));
        assert!(matches!(g.close(T), Err(GateError::Dropped)));
    }

    #[test]
    fn a_write_lock_admits_only_its_owners_writers() {
        let g = TableGate::default();
        g.lock(1, TableLockMode::Write, T).unwrap();
        g.enter(10, 1, T).unwrap();
        assert_eq!(g.enter(11, 2, T), Err(GateError::Timeout));
        assert_eq!(
            g.enter(12, 0, T),
            Err(GateError::Timeout),
            "no-owner transactions too"
        );
        assert_eq!(g.lock(2, TableLockMode::Read, T), Err(GateError::Timeout));
        assert!(g.close(T).is_err(), "an index build waits for the lock");
        g.leave(10);
        g.unlock(1);
        g.enter(11, 2, T).unwrap();
        g.leave(11);
        let b = g.close(T).unwrap();
        assert_eq!(
            g.enter(13, 2, T),
            Err(GateError::Timeout),
            "gate closed by the build"
        );
        drop(b);
        g.enter(13, 2, T).unwrap();
    }
}
