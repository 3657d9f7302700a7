//! The per-table gate between writers and index builds (a metadata lock, in MySQL's terms).
//!
//! Every transaction that writes a table holds its gate (shared, by transaction id) from its
//! first write to its end; `CREATE INDEX` closes the gate, waits for the holders to end, builds
//! the index and publishes the new table handle, then opens it again. So no change can be made
//! — or be rolled back — through a handle that does not know the new index while it is built.
//! Each handle carries the gate version it was made under; a writer holding an older handle is
//! moved to the current one (`Txn` does this on every write).
//!
//! Must never: let a writer in while a build is running; let a build start while a writer that
//! entered is still running; wait without a deadline.

use parking_lot::{Condvar, Mutex};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Default)]
struct State {
    writers: HashSet<u64>,
    building: bool,
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
            .field("version", &self.version())
            .finish()
    }
}

/// Why the gate could not be passed in time.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct GateTimeout;

impl TableGate {
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The table's handle is being replaced: handles made before are stale from now on.
    pub(crate) fn bump_version(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// Transaction `txn` starts writing the table: waits while an index is being built.
    pub(crate) fn enter(&self, txn: u64, timeout: Duration) -> Result<(), GateTimeout> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        while st.building {
            if self.changed.wait_until(&mut st, deadline).timed_out() && st.building {
                return Err(GateTimeout);
            }
        }
        st.writers.insert(txn);
        Ok(())
    }

    /// Transaction `txn` has ended (committed or rolled back).
    pub(crate) fn leave(&self, txn: u64) {
        let mut st = self.state.lock();
        if st.writers.remove(&txn) && st.writers.is_empty() && st.building {
            self.changed.notify_all();
        }
    }

    /// Closes the gate and waits until no writer is left. On a timeout the gate is open again.
    pub(crate) fn close(&self, timeout: Duration) -> Result<BuildGuard<'_>, GateTimeout> {
        let deadline = Instant::now() + timeout;
        let mut st = self.state.lock();
        while st.building {
            // Another build of this table (DDL is serialised, so only briefly).
            if self.changed.wait_until(&mut st, deadline).timed_out() && st.building {
                return Err(GateTimeout);
            }
        }
        st.building = true;
        while !st.writers.is_empty() {
            if self.changed.wait_until(&mut st, deadline).timed_out() && !st.writers.is_empty() {
                st.building = false;
                self.changed.notify_all();
                return Err(GateTimeout);
            }
        }
        Ok(BuildGuard { gate: self })
    }
}

/// The gate is closed while this lives; dropping it opens the gate.
pub(crate) struct BuildGuard<'a> {
    gate: &'a TableGate,
}

impl Drop for BuildGuard<'_> {
    fn drop(&mut self) {
        let mut st = self.gate.state.lock();
        st.building = false;
        self.gate.changed.notify_all();
    }
}
