//! The global read lock of `FLUSH TABLES WITH READ LOCK` (FTWRL), as backup tools use it
//! (`mariadb-dump --master-data` / `--lock-all-tables`): while a session holds it no other
//! session changes anything — table rows (TEMPORARY tables excepted), DDL, accounts, commits
//! of transactions that wrote — so the data and the binary-log position the holder reads agree.
//!
//! Owns: the set of holding connections and two gates, each a flag and a count of those
//! inside: one for write statements (`enter_write`, for a statement's whole run) and one for
//! commits of transactions that wrote (`enter_commit`). FTWRL takes them in two phases, as
//! MariaDB does: it closes the statement gate and waits for the running write statements,
//! then closes the commit gate and waits for the commits under way. A statement waiting for a
//! row lock that an open transaction holds thus still sees that transaction commit (it is not
//! held at the commit gate before the statements are drained). In each gate a newcomer counts
//! itself in, then looks at the flag; FTWRL sets the flag, then looks at the count (both
//! sequentially consistent), so one of the two always sees the other.
//!
//! Must never: let a write statement or a commit of changes run while a holder holds the
//! lock; wait without a deadline (`lock_wait_timeout`, error 1205) or past a KILL; leave a
//! gate closed when no session holds the lock (a failed or killed FTWRL opens them again).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::SqlError;

/// A flag that keeps newcomers out and the count of those inside.
#[derive(Default)]
struct Gate {
    closed: AtomicBool,
    inside: AtomicU64,
}

/// The global read lock (one per server).
#[derive(Default)]
pub struct GlobalReadLock {
    /// Connections holding the lock (several may, as with MariaDB's shared lock).
    holders: Mutex<HashSet<u32>>,
    statements: Gate,
    commits: Gate,
    wait: Mutex<()>,
    changed: Condvar,
}

/// A write statement or a commit inside its gate; leaves it when dropped.
pub struct WriteGuard<'a> {
    lock: &'a GlobalReadLock,
    gate: &'a Gate,
}

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.gate.inside.fetch_sub(1, SeqCst);
        if self.gate.closed.load(SeqCst) {
            let _g = self.lock.wait.lock();
            self.lock.changed.notify_all();
        }
    }
}

/// How often a waiter looks at its deadline and its KILL flag.
const POLL: Duration = Duration::from_millis(50);

fn timeout() -> SqlError {
    SqlError::new(
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

fn interrupted() -> SqlError {
    SqlError::new(1317, "70100", "Query execution was interrupted")
}

impl GlobalReadLock {
    /// Does connection `conn` hold the lock (or is it taking it)?
    pub fn held_by(&self, conn: u32) -> bool {
        self.statements.closed.load(SeqCst) && self.holders.lock().contains(&conn)
    }

    /// Some connection holds the lock or is taking it.
    pub fn is_closed(&self) -> bool {
        self.statements.closed.load(SeqCst)
    }

    /// A write statement of `conn` starts: waits while the lock is held (up to `wait()`,
    /// asked only then: a statement's usual case reads no setting and no clock; `killed` is
    /// polled). The holder itself gets 1223 instead.
    pub fn enter_write(
        &self,
        conn: u32,
        wait: &dyn Fn() -> Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<WriteGuard<'_>, SqlError> {
        self.enter(&self.statements, conn, wait, killed)
    }

    /// A commit of changes by `conn` starts (outside any write statement): waits while the
    /// lock is held, as `enter_write`.
    pub fn enter_commit(
        &self,
        conn: u32,
        wait: &dyn Fn() -> Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<WriteGuard<'_>, SqlError> {
        self.enter(&self.commits, conn, wait, killed)
    }

    fn enter<'a>(
        &'a self,
        gate: &'a Gate,
        conn: u32,
        wait: &dyn Fn() -> Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<WriteGuard<'a>, SqlError> {
        let mut deadline = None;
        loop {
            gate.inside.fetch_add(1, SeqCst);
            if !gate.closed.load(SeqCst) {
                return Ok(WriteGuard { lock: self, gate });
            }
            drop(WriteGuard { lock: self, gate });
            if self.holders.lock().contains(&conn) {
                return Err(SqlError::new(
                    1223,
                    "HY000",
                    "Can't execute the query because you have a conflicting read lock",
                ));
            }
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + wait());
            let mut g = self.wait.lock();
            while gate.closed.load(SeqCst) {
                if killed() {
                    return Err(interrupted());
                }
                let now = Instant::now();
                if now >= deadline {
                    return Err(timeout());
                }
                self.changed.wait_for(&mut g, POLL.min(deadline - now));
            }
        }
    }

    /// `FLUSH TABLES WITH READ LOCK` by `conn`: closes the statement gate and waits (up to
    /// `wait`) for the running write statements, then the commit gate and the commits under
    /// way. On a timeout or a KILL the lock is not taken (one `conn` held already stays).
    pub fn acquire(
        &self,
        conn: u32,
        wait: Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<(), SqlError> {
        {
            let mut h = self.holders.lock();
            if !h.insert(conn) {
                return Ok(());
            }
            self.statements.closed.store(true, SeqCst);
        }
        let deadline = Instant::now() + wait;
        let drained = self
            .drain(&self.statements, deadline, killed)
            .and_then(|()| {
                self.commits.closed.store(true, SeqCst);
                self.drain(&self.commits, deadline, killed)
            });
        if drained.is_err() {
            self.release(conn);
        }
        drained
    }

    /// Waits until nobody is inside `gate` (closed by the caller).
    fn drain(
        &self,
        gate: &Gate,
        deadline: Instant,
        killed: &dyn Fn() -> bool,
    ) -> Result<(), SqlError> {
        let mut g = self.wait.lock();
        while gate.inside.load(SeqCst) > 0 {
            if killed() {
                return Err(interrupted());
            }
            if Instant::now() >= deadline {
                return Err(timeout());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            self.changed.wait_for(&mut g, POLL.min(left));
        }
        Ok(())
    }

    /// `UNLOCK TABLES` or the end of `conn`'s session; false when it held nothing.
    pub fn release(&self, conn: u32) -> bool {
        let mut h = self.holders.lock();
        let had = h.remove(&conn);
        if h.is_empty() {
            self.statements.closed.store(false, SeqCst);
            self.commits.closed.store(false, SeqCst);
            drop(h);
            let _g = self.wait.lock();
            self.changed.notify_all();
        }
        had
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn a_holder_keeps_writers_out_until_it_releases() {
        let l = Arc::new(GlobalReadLock::default());
        l.acquire(1, LONG, &|| false).unwrap();
        assert_eq!(
            l.enter_write(1, &|| LONG, &|| false).err().map(|e| e.code),
            Some(1223)
        );
        let short = l.enter_write(2, &|| Duration::from_millis(100), &|| false);
        assert_eq!(short.err().map(|e| e.code), Some(1205));
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            let g = l2.enter_write(2, &|| LONG, &|| false).map(|_| ());
            (g, Instant::now())
        });
        std::thread::sleep(Duration::from_millis(200));
        let released = Instant::now();
        assert!(l.release(1));
        let (r, entered) = t.join().unwrap();
        r.unwrap();
        assert!(entered >= released, "the writer got in before the release");
        assert!(!l.is_closed());
    }

    #[test]
    fn acquiring_waits_for_running_writers_and_gives_up_cleanly() {
        let l = Arc::new(GlobalReadLock::default());
        let g = l.enter_write(2, &|| LONG, &|| false).unwrap();
        assert_eq!(
            l.acquire(1, Duration::from_millis(100), &|| false)
                .err()
                .map(|e| e.code),
            Some(1205)
        );
        assert!(!l.is_closed(), "a failed FTWRL leaves the gate open");
        assert_eq!(
            l.acquire(1, LONG, &|| true).err().map(|e| e.code),
            Some(1317)
        );
        let l2 = l.clone();
        let t = std::thread::spawn(move || l2.acquire(1, LONG, &|| false));
        std::thread::sleep(Duration::from_millis(100));
        drop(g);
        t.join().unwrap().unwrap();
        assert!(l.held_by(1));
        // A second holder; the lock opens only when both let go.
        l.acquire(3, LONG, &|| false).unwrap();
        l.release(1);
        assert!(l.is_closed());
        l.release(3);
        assert!(l.enter_write(2, &|| LONG, &|| false).is_ok());
    }

    #[test]
    fn commits_pass_while_statements_drain_and_wait_after() {
        let l = Arc::new(GlobalReadLock::default());
        let running = l.enter_write(2, &|| LONG, &|| false).unwrap();
        let l2 = l.clone();
        let t = std::thread::spawn(move || l2.acquire(1, LONG, &|| false));
        std::thread::sleep(Duration::from_millis(100));
        // Phase 1: statements wait, a commit goes through.
        assert_eq!(
            l.enter_write(3, &|| Duration::from_millis(50), &|| false)
                .err()
                .map(|e| e.code),
            Some(1205)
        );
        drop(l.enter_commit(3, &|| LONG, &|| false).unwrap());
        drop(running);
        t.join().unwrap().unwrap();
        // Phase 2 done: commits wait too.
        assert_eq!(
            l.enter_commit(3, &|| Duration::from_millis(50), &|| false)
                .err()
                .map(|e| e.code),
            Some(1205)
        );
        // A second FTWRL of the holder that fails keeps the first.
        assert!(l.acquire(1, Duration::ZERO, &|| true).is_ok());
        assert!(l.held_by(1));
        l.release(1);
        assert!(l.enter_commit(3, &|| LONG, &|| false).is_ok());
    }

    #[test]
    fn writers_and_a_locker_racing_never_overlap() {
        let l = Arc::new(GlobalReadLock::default());
        let inside = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let writers: Vec<_> = (0..4)
            .map(|i| {
                let (l, inside, stop) = (l.clone(), inside.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(SeqCst) {
                        let _g = l.enter_write(10 + i, &|| LONG, &|| false).unwrap();
                        inside.fetch_add(1, SeqCst);
                        std::hint::spin_loop();
                        inside.fetch_sub(1, SeqCst);
                    }
                })
            })
            .collect();
        for _ in 0..200 {
            l.acquire(1, LONG, &|| false).unwrap();
            assert_eq!(inside.load(SeqCst), 0, "a writer inside under the lock");
            std::thread::sleep(Duration::from_micros(200));
            assert_eq!(inside.load(SeqCst), 0, "a writer got in under the lock");
            l.release(1);
        }
        stop.store(true, SeqCst);
        for w in writers {
            w.join().unwrap();
        }
    }
}
