//! The global read lock of `FLUSH TABLES WITH READ LOCK` (FTWRL), as backup tools use it
//! (`mariadb-dump --master-data` / `--lock-all-tables`): while a session holds it no other
//! session changes anything — table rows (TEMPORARY tables excepted), DDL, accounts, commits
//! of transactions that wrote — so the data and the binary-log position the holder reads agree.
//!
//! Owns: the set of holding connections and the count of write statements running. A write
//! statement enters (`enter_write`) for its whole run; FTWRL closes the gate and waits until
//! the running ones have left. Both sides use sequentially consistent atomics (a writer
//! counts itself in, then looks at the gate; FTWRL closes the gate, then looks at the count),
//! so a writer either sees the gate closed or is seen by FTWRL.
//!
//! Must never: let a write statement run while a holder holds the lock; wait without a
//! deadline (`lock_wait_timeout`, error 1205) or past a KILL; leave the gate closed when no
//! session holds it (a failed or killed FTWRL opens it again).

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::SqlError;

/// The global read lock (one per server).
#[derive(Default)]
pub struct GlobalReadLock {
    /// Connections holding the lock (several may, as with MariaDB's shared lock).
    holders: Mutex<HashSet<u32>>,
    /// Writers stay out: a holder exists or one is acquiring.
    closed: AtomicBool,
    /// Write statements running now.
    writers: AtomicU64,
    wait: Mutex<()>,
    changed: Condvar,
}

/// A write statement inside the gate; leaves it when dropped.
pub struct WriteGuard<'a>(&'a GlobalReadLock);

impl Drop for WriteGuard<'_> {
    fn drop(&mut self) {
        self.0.writers.fetch_sub(1, SeqCst);
        if self.0.closed.load(SeqCst) {
            let _g = self.0.wait.lock();
            self.0.changed.notify_all();
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
    /// Does connection `conn` hold the lock?
    pub fn held_by(&self, conn: u32) -> bool {
        self.closed.load(SeqCst) && self.holders.lock().contains(&conn)
    }

    /// Some connection holds the lock (SHOW PROCESSLIST's waiting state).
    pub fn is_closed(&self) -> bool {
        self.closed.load(SeqCst)
    }

    /// A write statement of `conn` starts: waits while the lock is held (up to `wait`;
    /// `killed` is polled). The holder itself gets 1223 instead.
    pub fn enter_write(
        &self,
        conn: u32,
        wait: Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<WriteGuard<'_>, SqlError> {
        let deadline = Instant::now() + wait;
        loop {
            self.writers.fetch_add(1, SeqCst);
            if !self.closed.load(SeqCst) {
                return Ok(WriteGuard(self));
            }
            drop(WriteGuard(self));
            if self.held_by(conn) {
                return Err(SqlError::new(
                    1223,
                    "HY000",
                    "Can't execute the query because you have a conflicting read lock",
                ));
            }
            let mut g = self.wait.lock();
            while self.closed.load(SeqCst) {
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

    /// `FLUSH TABLES WITH READ LOCK` by `conn`: closes the gate and waits (up to `wait`) for
    /// the running write statements to end. On a timeout or a KILL the lock is not taken.
    pub fn acquire(
        &self,
        conn: u32,
        wait: Duration,
        killed: &dyn Fn() -> bool,
    ) -> Result<(), SqlError> {
        {
            let mut h = self.holders.lock();
            h.insert(conn);
            self.closed.store(true, SeqCst);
        }
        let deadline = Instant::now() + wait;
        let mut g = self.wait.lock();
        while self.writers.load(SeqCst) > 0 {
            let failed = if killed() {
                Some(interrupted())
            } else if Instant::now() >= deadline {
                Some(timeout())
            } else {
                None
            };
            if let Some(e) = failed {
                drop(g);
                self.release(conn);
                return Err(e);
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
            self.closed.store(false, SeqCst);
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
            l.enter_write(1, LONG, &|| false).err().map(|e| e.code),
            Some(1223)
        );
        let short = l.enter_write(2, Duration::from_millis(100), &|| false);
        assert_eq!(short.err().map(|e| e.code), Some(1205));
        let l2 = l.clone();
        let t = std::thread::spawn(move || {
            let g = l2.enter_write(2, LONG, &|| false).map(|_| ());
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
        let g = l.enter_write(2, LONG, &|| false).unwrap();
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
        assert!(l.enter_write(2, LONG, &|| false).is_ok());
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
                        let _g = l.enter_write(10 + i, LONG, &|| false).unwrap();
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
