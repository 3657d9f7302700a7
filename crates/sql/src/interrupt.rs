//! KILL QUERY / KILL CONNECTION reaching a running statement. Each connection has a kill flag
//! (`ConnInfo::kill`); while a statement runs, its thread watches that flag: row loops call
//! `check` (error 1317 once it is raised), lock waits end within their recheck interval
//! (`tierdb_engine::watch_interrupt`), SLEEP wakes.
//!
//! Owns: the flag's values and the thread's watch.
//! Must never: stop a statement anywhere but a check point (a statement is undone by the
//! usual statement rollback, never left half applied), or keep a flag raised for the next
//! statement after a KILL QUERY.

use crate::result::SqlError;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// Flag values: nothing, KILL QUERY, KILL CONNECTION.
pub const NONE: u8 = 0;
pub const QUERY: u8 = 1;
pub const CONNECTION: u8 = 2;

thread_local! {
    static WATCHED: RefCell<Option<Arc<AtomicU8>>> = const { RefCell::new(None) };
}

/// The watch of one statement; dropping it puts back what the thread watched before.
pub struct Watch {
    before: Option<Arc<AtomicU8>>,
    before_locks: Option<Arc<AtomicU8>>,
    before_shown: Option<(Arc<AtomicU8>, u8)>,
}

/// Starts watching `flag` for the statement about to run on this thread (a KILL QUERY that
/// reached the connection between statements is forgotten).
/// `waiting`: the connection's state, which the engine's row-lock waits set meanwhile.
pub fn watch(flag: &Arc<AtomicU8>, waiting: &Arc<AtomicU8>) -> Watch {
    let _ = flag.compare_exchange(QUERY, NONE, Ordering::AcqRel, Ordering::Relaxed);
    Watch {
        before: WATCHED.with(|w| w.replace(Some(flag.clone()))),
        before_locks: tierdb_engine::watch_interrupt(Some(flag.clone())),
        before_shown: tierdb_engine::report_lock_waits(Some((
            waiting.clone(),
            crate::shared::Waiting::RowLock as u8,
        ))),
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        WATCHED.with(|w| *w.borrow_mut() = self.before.take());
        tierdb_engine::watch_interrupt(self.before_locks.take());
        tierdb_engine::report_lock_waits(self.before_shown.take());
    }
}

/// The flag value watched on this thread (NONE when no statement watches one).
pub fn raised() -> u8 {
    WATCHED.with(|w| {
        w.borrow()
            .as_ref()
            .map_or(NONE, |f| f.load(Ordering::Relaxed))
    })
}

/// Error 1317 once the running statement was killed.
pub fn check() -> Result<(), SqlError> {
    match raised() {
        NONE => Ok(()),
        _ => Err(interrupted()),
    }
}

/// Error 1317, "Query execution was interrupted".
pub fn interrupted() -> SqlError {
    SqlError::new(1317, "70100", "Query execution was interrupted")
}

/// Sleeps `secs` seconds (SLEEP()), waking early when the statement is killed: 0 after the
/// full time, 1 when woken by a kill.
pub fn sleep(secs: f64) -> i64 {
    if secs.is_nan() || secs <= 0.0 {
        return 0;
    }
    let end = std::time::Instant::now() + std::time::Duration::from_secs_f64(secs.min(1e9));
    loop {
        if raised() != NONE {
            return 1;
        }
        let now = std::time::Instant::now();
        if now >= end {
            return 0;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(20)));
    }
}
