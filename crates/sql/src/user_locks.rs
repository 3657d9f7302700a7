//! User-level (advisory) locks: `GET_LOCK(name, timeout)`, `RELEASE_LOCK(name)`,
//! `RELEASE_ALL_LOCKS()`, `IS_FREE_LOCK(name)`, `IS_USED_LOCK(name)` — the named locks
//! applications and migration tools take to run one job at a time.
//!
//! A lock is owned by a connection and counted (the owner may take it again; it is free
//! when released as often); names compare case-insensitively. A connection's locks go when
//! it ends. A wait that would close a cycle of connections waiting for each other's locks
//! fails at once (1213) instead of waiting forever.
//!
//! Owns: the lock table and its waits. Must never: hold its mutex while anything else runs,
//! or let a wait outlast its timeout.

use crate::result::SqlError;
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The SQL functions over user-level locks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserLockFunc {
    /// `GET_LOCK(name, timeout)`: 1 taken, 0 timed out.
    Get,
    /// `RELEASE_LOCK(name)`: 1 released, 0 another's, NULL nobody's.
    Release,
    /// `RELEASE_ALL_LOCKS()`: how many were released.
    ReleaseAll,
    /// `IS_FREE_LOCK(name)`: 1 free, 0 held.
    IsFree,
    /// `IS_USED_LOCK(name)`: the holder's connection id, or NULL.
    IsUsed,
}

impl UserLockFunc {
    pub fn named(name: &str) -> Option<(UserLockFunc, usize, usize)> {
        Some(match name {
            "GET_LOCK" => (UserLockFunc::Get, 2, 2),
            "RELEASE_LOCK" => (UserLockFunc::Release, 1, 1),
            "RELEASE_ALL_LOCKS" => (UserLockFunc::ReleaseAll, 0, 0),
            "IS_FREE_LOCK" => (UserLockFunc::IsFree, 1, 1),
            "IS_USED_LOCK" => (UserLockFunc::IsUsed, 1, 1),
            _ => return None,
        })
    }
}

#[derive(Default)]
struct Table {
    /// Lock name (lower case) → (owner, times taken).
    held: HashMap<String, (u32, u64)>,
    /// Connection → the lock name it waits for.
    waiting: HashMap<u32, String>,
}

#[derive(Default)]
pub struct UserLocks {
    table: Mutex<Table>,
    freed: Condvar,
}

/// Longest a name may be (MariaDB's limit).
const MAX_NAME: usize = 64;

fn key(name: &str) -> Result<String, SqlError> {
    if name.chars().count() > MAX_NAME {
        return Err(SqlError::new(
            3057,
            "42000",
            format!("Incorrect user-level lock name '{name}'."),
        ));
    }
    Ok(name.to_lowercase())
}

impl UserLocks {
    /// GET_LOCK: true when `conn` holds the lock (again), false when `timeout` passed first
    /// (a negative timeout waits as long as it takes).
    pub fn get(&self, conn: u32, name: &str, timeout: f64) -> Result<bool, SqlError> {
        let k = key(name)?;
        let deadline = (timeout >= 0.0)
            .then(|| Instant::now() + Duration::from_secs_f64(timeout.min(31_536_000.0)));
        let mut t = self.table.lock();
        loop {
            match t.held.get_mut(&k) {
                None => {
                    t.held.insert(k.clone(), (conn, 1));
                    t.waiting.remove(&conn);
                    return Ok(true);
                }
                Some((owner, n)) if *owner == conn => {
                    *n += 1;
                    t.waiting.remove(&conn);
                    return Ok(true);
                }
                Some((owner, _)) => {
                    let owner = *owner;
                    if Self::closes_cycle(&t, conn, owner) {
                        t.waiting.remove(&conn);
                        return Err(SqlError::new(
                            1213,
                            "40001",
                            "Deadlock found when trying to get user-level lock; try rolling back transaction/releasing locks and restarting lock acquisition.",
                        ));
                    }
                }
            }
            t.waiting.insert(conn, k.clone());
            // A KILL ends the wait (looked at every 50 ms).
            if crate::interrupt::raised() != crate::interrupt::NONE {
                t.waiting.remove(&conn);
                return Err(crate::interrupt::interrupted());
            }
            let slice = Instant::now() + std::time::Duration::from_millis(50);
            match deadline {
                None => {
                    self.freed.wait_until(&mut t, slice);
                }
                Some(d) if d > slice => {
                    self.freed.wait_until(&mut t, slice);
                }
                Some(d) => {
                    if Instant::now() >= d || self.freed.wait_until(&mut t, d).timed_out() {
                        // One last look after the deadline.
                        if !t.held.contains_key(&k) {
                            continue;
                        }
                        t.waiting.remove(&conn);
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// True when `conn` waiting for a lock `owner` holds would make a cycle of waits.
    fn closes_cycle(t: &Table, conn: u32, mut owner: u32) -> bool {
        for _ in 0..=t.waiting.len() {
            if owner == conn {
                return true;
            }
            match t.waiting.get(&owner).and_then(|n| t.held.get(n)) {
                Some((next, _)) => owner = *next,
                None => return false,
            }
        }
        false
    }

    /// RELEASE_LOCK: Some(true) released (once), Some(false) held by another connection,
    /// None when nobody holds it.
    pub fn release(&self, conn: u32, name: &str) -> Result<Option<bool>, SqlError> {
        let k = key(name)?;
        let mut t = self.table.lock();
        let r = match t.held.get_mut(&k) {
            None => None,
            Some((owner, _)) if *owner != conn => Some(false),
            Some((_, n)) => {
                *n -= 1;
                if *n == 0 {
                    t.held.remove(&k);
                    self.freed.notify_all();
                }
                Some(true)
            }
        };
        Ok(r)
    }

    /// RELEASE_ALL_LOCKS (and a connection's end): every lock `conn` holds is freed; the
    /// number of times they had been taken.
    pub fn release_all(&self, conn: u32) -> u64 {
        let mut t = self.table.lock();
        let mut n = 0;
        t.held.retain(|_, (owner, count)| {
            if *owner == conn {
                n += *count;
                false
            } else {
                true
            }
        });
        t.waiting.remove(&conn);
        if n > 0 {
            self.freed.notify_all();
        }
        n
    }

    /// Evaluates `f` for connection `conn` (NULL for a NULL name or timeout).
    pub fn call(
        &self,
        conn: u32,
        f: UserLockFunc,
        args: &[tierdb_engine::Value],
    ) -> Result<tierdb_engine::Value, SqlError> {
        use tierdb_engine::Value;
        let name = match args.first().map(crate::coerce::to_text) {
            Some(Some(t)) => Some(String::from_utf8_lossy(&t).into_owned()),
            Some(None) => return Ok(Value::Null),
            None => None,
        };
        let name = name.unwrap_or_default();
        Ok(match f {
            UserLockFunc::Get => {
                let Some(timeout) = args.get(1).and_then(crate::coerce::to_f64) else {
                    return Ok(Value::Null);
                };
                match self.get(conn, &name, timeout) {
                    Ok(got) => Value::Int(i64::from(got)),
                    // Woken by KILL: NULL, as MariaDB (the statement goes on).
                    Err(e) if e.code == 1317 => Value::Null,
                    Err(e) => return Err(e),
                }
            }
            UserLockFunc::Release => match self.release(conn, &name)? {
                Some(r) => Value::Int(i64::from(r)),
                None => Value::Null,
            },
            UserLockFunc::ReleaseAll => Value::Int(self.release_all(conn) as i64),
            UserLockFunc::IsFree => Value::Int(i64::from(self.holder(&name)?.is_none())),
            UserLockFunc::IsUsed => match self.holder(&name)? {
                Some(c) => Value::Int(i64::from(c)),
                None => Value::Null,
            },
        })
    }

    /// IS_USED_LOCK: the holder's connection id.
    pub fn holder(&self, name: &str) -> Result<Option<u32>, SqlError> {
        let k = key(name)?;
        Ok(self.table.lock().held.get(&k).map(|(owner, _)| *owner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_lock_is_counted_per_owner_and_freed_by_its_last_release() {
        let l = UserLocks::default();
        assert!(l.get(1, "Job", 0.0).unwrap());
        assert!(l.get(1, "job", 0.0).unwrap());
        assert!(!l.get(2, "JOB", 0.0).unwrap());
        assert_eq!(l.release(2, "job").unwrap(), Some(false));
        assert_eq!(l.release(1, "job").unwrap(), Some(true));
        assert_eq!(l.holder("job").unwrap(), Some(1));
        assert_eq!(l.release(1, "job").unwrap(), Some(true));
        assert_eq!(l.holder("job").unwrap(), None);
        assert_eq!(l.release(1, "job").unwrap(), None);
        assert!(l.get(2, "job", 0.0).unwrap());
        assert_eq!(l.release_all(2), 1);
    }

    #[test]
    fn a_waiter_gets_the_lock_when_it_is_released_and_times_out_otherwise() {
        let l = Arc::new(UserLocks::default());
        assert!(l.get(1, "a", 0.0).unwrap());
        let l2 = l.clone();
        let waiter = std::thread::spawn(move || l2.get(2, "a", 10.0).unwrap());
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(l.release_all(1), 1);
        assert!(waiter.join().unwrap());
        let started = Instant::now();
        assert!(!l.get(3, "a", 0.2).unwrap());
        assert!(started.elapsed() >= Duration::from_millis(150));
    }

    #[test]
    fn waits_that_would_close_a_cycle_fail_at_once() {
        let l = Arc::new(UserLocks::default());
        assert!(l.get(1, "x", 0.0).unwrap());
        assert!(l.get(2, "y", 0.0).unwrap());
        let l2 = l.clone();
        // 1 waits for y (held by 2) ...
        let waiter = std::thread::spawn(move || l2.get(1, "y", 10.0));
        std::thread::sleep(Duration::from_millis(50));
        // ... so 2 waiting for x (held by 1) would be a cycle.
        let e = l.get(2, "x", 10.0).unwrap_err();
        assert_eq!(e.code, 1213);
        assert_eq!(l.release_all(2), 1);
        assert!(waiter.join().unwrap().unwrap());
    }
}
