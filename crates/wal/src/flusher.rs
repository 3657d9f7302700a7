//! The background flusher: about once per `flush_interval`, writes and fsyncs whatever is
//! not yet durable. This is what makes `Periodic` (0) and `WriteAtCommit` (2) durable
//! within about a second; under `EveryCommit` it only bounds how long records appended
//! without a commit stay volatile.
//!
//! Owns: the flusher thread's loop and its stop signal.
//!
//! Must never: run after the `Wal` is closed or dropped (it is stopped and joined there);
//! retry after the log is poisoned (it exits: nothing more can be made durable).

use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crate::wal::Shared;

/// Starts the flusher thread.
pub(crate) fn spawn(shared: Arc<Shared>) -> std::io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name("tierdb-wal-flusher".to_string())
        .spawn(move || run(&shared))
}

fn run(shared: &Shared) {
    loop {
        {
            let mut stop = shared.flusher_stop.lock();
            if !*stop {
                shared.flusher_cv.wait_for(&mut stop, shared.flush_interval);
            }
            if *stop {
                return;
            }
        }
        if shared.is_poisoned() {
            return;
        }
        let end = shared.end();
        if shared.durable() < end {
            if let Err(e) = shared.flush_to(end) {
                tracing::error!(error = %e, "redo log background flush failed");
            }
        }
    }
}

/// Asks the flusher to stop (it exits at its next wake-up, which this triggers).
pub(crate) fn request_stop(shared: &Shared) {
    *shared.flusher_stop.lock() = true;
    shared.flusher_cv.notify_all();
}
