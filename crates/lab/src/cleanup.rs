//! Teardown registry: every resource the lab creates (server process, mount, loop device,
//! cgroup) registers an undo action here, and the action runs exactly once — when its
//! [`Guard`] is dropped (normal end or an error unwinding through `?`), or, on SIGINT/SIGTERM,
//! from the signal handler, which runs all pending actions newest-first and exits.
//!
//! Owns: the global stack of pending undo actions and the signal handler.
//! Must never: decide *what* to tear down (callers do), or panic while running actions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

type Action = Box<dyn FnOnce() + Send>;

static NEXT: AtomicU64 = AtomicU64::new(1);
static STACK: Mutex<Vec<(u64, String, Action)>> = Mutex::new(Vec::new());

/// Runs its registered undo action when dropped (unless already run by the signal handler).
#[must_use = "dropping the guard runs the teardown at once"]
pub struct Guard {
    id: u64,
}

/// Registers `action` (described by `label`) and returns the guard that will run it.
pub fn register(label: impl Into<String>, action: impl FnOnce() + Send + 'static) -> Guard {
    let id = NEXT.fetch_add(1, Ordering::SeqCst);
    STACK
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((id, label.into(), Box::new(action)));
    Guard { id }
}

fn take(id: u64) -> Option<(String, Action)> {
    let mut s = STACK.lock().unwrap_or_else(|e| e.into_inner());
    let pos = s.iter().position(|(i, _, _)| *i == id)?;
    let (_, l, a) = s.remove(pos);
    Some((l, a))
}

impl Guard {
    /// Forgets the action without running it (the caller undid the resource itself).
    pub fn disarm(self) {
        let _ = take(self.id);
        std::mem::forget(self);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some((_, action)) = take(self.id) {
            action();
        }
    }
}

/// Runs every pending action, newest first.
pub fn run_all() {
    loop {
        let item = STACK.lock().unwrap_or_else(|e| e.into_inner()).pop();
        match item {
            Some((_, label, action)) => {
                eprintln!("tierdb-lab: teardown: {label}");
                action();
            }
            None => break,
        }
    }
}

/// Installs the SIGINT/SIGTERM handler: tear everything down, then exit 130.
pub fn install_signal_handler() -> anyhow::Result<()> {
    ctrlc::set_handler(|| {
        eprintln!("\ntierdb-lab: interrupted, tearing down");
        run_all();
        std::process::exit(130);
    })?;
    Ok(())
}
