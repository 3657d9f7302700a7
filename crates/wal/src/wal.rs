//! The `Wal` handle: append into the log buffer, group-committed write + fsync, commit
//! policies, checkpoints, sticky failure.
//!
//! Owns: the append buffer and its lock, the group-commit protocol (one leader writes and
//! fsyncs while followers wait on a condvar), the LSN watermarks, the poison state, the
//! flusher thread handle.
//!
//! Watermarks, always `checkpoint <= durable <= written <= end`:
//! - `end`: LSN after the last appended record (in the buffer or beyond);
//! - `written`: bytes below it are in the segment files (OS page cache at least);
//! - `durable`: bytes below it are fsynced (and the directory entries of their segments);
//! - `checkpoint`: persisted in the control file; segments wholly below it may be deleted.
//!
//! Lock order (a lock may only be taken while holding locks listed before it):
//! `ckpt` → `sync` (never held across I/O) ; `writer` → `append`. The append lock is never
//! held while taking `writer` and never across I/O; `in_lock` callbacks run under it and must
//! not call back into the `Wal`.
//!
//! Must never: acknowledge an `EveryCommit` commit (or return from `flush_to`) before the
//! record's bytes are fsynced; advance `durable` past bytes not covered by a completed fsync;
//! retry a failed fsync or keep working after a failed write or fsync (the log is poisoned
//! and every later call returns `WalError::Poisoned` with the original error text);
//! busy-wait.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use tierdb_page::Lsn;

use crate::config::{FlushPolicy, WalConfig};
use crate::control;
use crate::error::WalError;
use crate::flusher;
use crate::format::{encode_header, MAX_RECORD_BYTES, RECORD_HEADER_BYTES};
use crate::reader::WalReader;
use crate::recovery;
use crate::segment::remove_segment_file;
use crate::stats::{Counters, WalStats};
use crate::writer::Writer;
use crate::DeviceOpener;

/// Records appended but not yet handed to the files: stream bytes `[buf_start, end)`.
pub(crate) struct AppendBuf {
    pub buf: Vec<u8>,
    pub buf_start: u64,
    pub end: u64,
}

pub(crate) struct SyncState {
    /// A thread is writing + fsyncing on behalf of everyone.
    leader: bool,
}

/// State shared by the `Wal` handle and the flusher thread.
pub(crate) struct Shared {
    pub dir: PathBuf,
    pub buffer_size_bytes: usize,
    pub flush_interval: Duration,
    policy: AtomicU8,
    append: Mutex<AppendBuf>,
    pub(crate) writer: Mutex<Writer>,
    sync: Mutex<SyncState>,
    sync_cv: Condvar,
    ckpt: Mutex<()>,
    end_lsn: AtomicU64,
    written_lsn: AtomicU64,
    durable_lsn: AtomicU64,
    checkpoint_lsn: AtomicU64,
    poisoned: AtomicBool,
    poison_msg: Mutex<Option<String>>,
    closed: AtomicBool,
    counters: Counters,
    pub flusher_stop: Mutex<bool>,
    pub flusher_cv: Condvar,
}

impl Shared {
    /// Builds the shared state of a log whose files end (validly) at `end`.
    pub(crate) fn new(cfg: &WalConfig, writer: Writer, end: u64, checkpoint: u64) -> Shared {
        Shared {
            dir: cfg.dir.clone(),
            buffer_size_bytes: cfg.buffer_size_bytes,
            flush_interval: cfg.flush_interval,
            policy: AtomicU8::new(cfg.policy.to_mysql()),
            append: Mutex::new(AppendBuf {
                buf: Vec::with_capacity(cfg.buffer_size_bytes),
                buf_start: end,
                end,
            }),
            writer: Mutex::new(writer),
            sync: Mutex::new(SyncState { leader: false }),
            sync_cv: Condvar::new(),
            ckpt: Mutex::new(()),
            end_lsn: AtomicU64::new(end),
            written_lsn: AtomicU64::new(end),
            durable_lsn: AtomicU64::new(end),
            checkpoint_lsn: AtomicU64::new(checkpoint),
            poisoned: AtomicBool::new(false),
            poison_msg: Mutex::new(None),
            closed: AtomicBool::new(false),
            counters: Counters::default(),
            flusher_stop: Mutex::new(false),
            flusher_cv: Condvar::new(),
        }
    }

    pub fn end(&self) -> u64 {
        self.end_lsn.load(Ordering::Acquire)
    }

    pub fn durable(&self) -> u64 {
        self.durable_lsn.load(Ordering::Acquire)
    }

    pub fn is_poisoned(&self) -> bool {
        self.poisoned.load(Ordering::Acquire)
    }

    fn poisoned_error(&self) -> WalError {
        let msg = self
            .poison_msg
            .lock()
            .clone()
            .unwrap_or_else(|| "unknown earlier failure".to_string());
        WalError::Poisoned(msg)
    }

    /// Records the first failure and makes the log refuse all further work. Returns the
    /// original error for the caller that hit it.
    fn poison(&self, err: WalError) -> WalError {
        {
            let mut msg = self.poison_msg.lock();
            if msg.is_none() {
                tracing::error!(error = %err, "redo log poisoned; reopen required");
                *msg = Some(err.to_string());
            }
        }
        self.poisoned.store(true, Ordering::Release);
        err
    }

    fn check_poison(&self) -> Result<(), WalError> {
        if self.is_poisoned() {
            return Err(self.poisoned_error());
        }
        Ok(())
    }

    fn check_usable(&self) -> Result<(), WalError> {
        self.check_poison()?;
        if self.closed.load(Ordering::Acquire) {
            return Err(WalError::Closed);
        }
        Ok(())
    }

    fn append(&self, payload: &[u8], in_lock: impl FnOnce(Lsn, Lsn)) -> Result<Lsn, WalError> {
        self.check_usable()?;
        if payload.is_empty() || payload.len() > MAX_RECORD_BYTES {
            return Err(WalError::InvalidRecord {
                len: payload.len(),
                max: MAX_RECORD_BYTES,
            });
        }
        // The CRC does not depend on the position: compute it before taking the lock.
        let header = encode_header(payload);
        let framed = (RECORD_HEADER_BYTES + payload.len()) as u64;
        let mut in_lock = Some(in_lock);
        loop {
            let mut a = self.append.lock();
            if !a.buf.is_empty() && a.buf.len() + framed as usize > self.buffer_size_bytes {
                // Full: hand the buffer to the files outside the append lock, then retry.
                drop(a);
                Counters::add(&self.counters.buffer_full_writes, 1);
                self.write_out()?;
                continue;
            }
            let start = a.end;
            let Some(end) = start.checked_add(framed) else {
                return Err(WalError::InvalidArgument("LSN space exhausted".to_string()));
            };
            a.buf.extend_from_slice(&header);
            a.buf.extend_from_slice(payload);
            a.end = end;
            self.end_lsn.store(end, Ordering::Release);
            if let Some(f) = in_lock.take() {
                f(Lsn(start), Lsn(end));
            }
            drop(a);
            Counters::add(&self.counters.appends, 1);
            Counters::add(&self.counters.appended_bytes, framed);
            return Ok(Lsn(end));
        }
    }

    fn write_out(&self) -> Result<u64, WalError> {
        let mut w = self.writer.lock();
        self.write_out_locked(&mut w)
    }

    /// Moves everything in the append buffer into the segment files (no fsync). Returns the
    /// new `written` position.
    fn write_out_locked(&self, w: &mut Writer) -> Result<u64, WalError> {
        self.check_poison()?;
        let start = {
            let mut a = self.append.lock();
            if a.buf.is_empty() {
                return Ok(w.written);
            }
            debug_assert_eq!(a.buf_start, w.written, "buffer starts where the files end");
            std::mem::swap(&mut a.buf, &mut w.spare);
            let start = a.buf_start;
            a.buf_start = a.end;
            start
        };
        let mut data = std::mem::take(&mut w.spare);
        debug_assert_eq!(start, w.written);
        let r = w.write_stream(&data);
        let n = data.len() as u64;
        data.clear();
        if data.capacity() > 2 * self.buffer_size_bytes {
            data = Vec::with_capacity(self.buffer_size_bytes);
        }
        w.spare = data;
        match r {
            Ok(()) => {
                self.written_lsn.store(w.written, Ordering::Release);
                Counters::add(&self.counters.writes, 1);
                Counters::add(&self.counters.written_bytes, n);
                Ok(w.written)
            }
            Err(e) => Err(self.poison(e)),
        }
    }

    /// One group-commit round, run by the leader only: write out everything buffered, fsync
    /// every device written since the last round (and the directory if a segment was
    /// created), then publish the new durable LSN.
    fn sync_round(&self) -> Result<(), WalError> {
        let (target, devs, dir_dirty) = {
            let mut w = self.writer.lock();
            let target = self.write_out_locked(&mut w)?;
            (
                target,
                std::mem::take(&mut w.unsynced),
                std::mem::take(&mut w.dir_dirty),
            )
        };
        if dir_dirty {
            control::sync_dir(&self.dir).map_err(|e| self.poison(e))?;
        }
        for d in &devs {
            d.sync()
                .map_err(|e| self.poison(WalError::io(format!("fsyncing {}", d.name()), e)))?;
        }
        if !devs.is_empty() || dir_dirty {
            Counters::add(&self.counters.fsyncs, 1);
        }
        self.durable_lsn.fetch_max(target, Ordering::AcqRel);
        Ok(())
    }

    /// Cuts the active segment's zeroed tail and fsyncs it (clean close; the log is flushed).
    fn trim_tail(&self) -> Result<(), WalError> {
        let devs = {
            let mut w = self.writer.lock();
            self.write_out_locked(&mut w)?;
            w.trim_tail().map_err(|e| self.poison(e))?;
            std::mem::take(&mut w.unsynced)
        };
        for d in &devs {
            d.sync()
                .map_err(|e| self.poison(WalError::io(format!("fsyncing {}", d.name()), e)))?;
        }
        Ok(())
    }

    pub fn flush_to(&self, lsn: u64) -> Result<(), WalError> {
        self.check_poison()?;
        let target = lsn.min(self.end());
        if self.durable() >= target {
            return Ok(());
        }
        Counters::add(&self.counters.flush_waits, 1);
        let mut g = self.sync.lock();
        loop {
            self.check_poison()?;
            if self.durable() >= target {
                return Ok(());
            }
            if g.leader {
                self.sync_cv.wait(&mut g);
                continue;
            }
            g.leader = true;
            drop(g);
            let r = self.sync_round();
            g = self.sync.lock();
            g.leader = false;
            self.sync_cv.notify_all();
            r?;
        }
    }

    fn commit(&self, lsn: Lsn) -> Result<(), WalError> {
        Counters::add(&self.counters.commits, 1);
        match self.policy() {
            FlushPolicy::EveryCommit => {
                self.check_usable()?;
                self.flush_to(lsn.0)
            }
            FlushPolicy::WriteAtCommit => {
                self.check_usable()?;
                if self.written_lsn.load(Ordering::Acquire) >= lsn.0 {
                    return Ok(());
                }
                let mut w = self.writer.lock();
                if w.written >= lsn.0 {
                    return Ok(());
                }
                self.write_out_locked(&mut w).map(|_| ())
            }
            FlushPolicy::Periodic => self.check_usable(),
        }
    }

    fn policy(&self) -> FlushPolicy {
        FlushPolicy::from_u8(self.policy.load(Ordering::Relaxed))
    }

    fn checkpoint(&self, lsn: Lsn) -> Result<(), WalError> {
        self.check_usable()?;
        let _ckpt = self.ckpt.lock();
        let current = self.checkpoint_lsn.load(Ordering::Acquire);
        if lsn.0 < current {
            return Err(WalError::InvalidArgument(format!(
                "checkpoint LSN {lsn} is below the current checkpoint {current}"
            )));
        }
        let end = self.end();
        if lsn.0 > end {
            return Err(WalError::InvalidArgument(format!(
                "checkpoint LSN {lsn} is past the end of the log {end}"
            )));
        }
        if lsn.0 == current {
            return Ok(());
        }
        self.flush_to(lsn.0)?;
        control::write(&self.dir, lsn.0).map_err(|e| self.poison(e))?;
        self.checkpoint_lsn.store(lsn.0, Ordering::Release);
        // Reclaim: segments wholly below the checkpoint, never the active (last) one.
        let doomed: Vec<PathBuf> = {
            let mut w = self.writer.lock();
            let keep_from = w
                .segs
                .iter()
                .take_while(|s| s.end() <= lsn.0)
                .count()
                .min(w.segs.len().saturating_sub(1));
            w.segs.drain(..keep_from).map(|s| s.path).collect()
        };
        for path in &doomed {
            remove_segment_file(path)?;
            Counters::add(&self.counters.segments_deleted, 1);
            tracing::debug!(path = %path.display(), "redo segment reclaimed");
        }
        Ok(())
    }

    fn read_from(&self, from: Lsn) -> Result<WalReader, WalError> {
        let mut w = self.writer.lock();
        let written = self.write_out_locked(&mut w)?;
        let first = w.segs.first().map_or(written, |s| s.base);
        if from.0 < first || from.0 > written {
            return Err(WalError::InvalidArgument(format!(
                "read_from({from}): the log holds LSNs {first}..{written}"
            )));
        }
        Ok(WalReader::new(w.views(), from.0, written))
    }

    fn stats(&self) -> WalStats {
        let (segments, bytes_on_disk, segments_from_spare) = {
            let w = self.writer.lock();
            (w.segs.len() as u64, w.bytes_on_disk(), w.from_spare)
        };
        let c = &self.counters;
        WalStats {
            appends: Counters::get(&c.appends),
            appended_bytes: Counters::get(&c.appended_bytes),
            buffer_full_writes: Counters::get(&c.buffer_full_writes),
            writes: Counters::get(&c.writes),
            written_bytes: Counters::get(&c.written_bytes),
            fsyncs: Counters::get(&c.fsyncs),
            commits: Counters::get(&c.commits),
            flush_waits: Counters::get(&c.flush_waits),
            segments,
            segments_deleted: Counters::get(&c.segments_deleted),
            segments_from_spare,
            bytes_on_disk,
            end_lsn: Lsn(self.end()),
            durable_lsn: Lsn(self.durable()),
            checkpoint_lsn: Lsn(self.checkpoint_lsn.load(Ordering::Acquire)),
        }
    }
}

/// The redo log. `Send + Sync`; share it behind an `Arc`.
///
/// See the crate docs for the format, the watermarks and the lock order.
pub struct Wal {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    prefill: Arc<crate::prefill::Prefill>,
    prefiller: Mutex<Option<JoinHandle<()>>>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Wal>();
};

impl Wal {
    /// Opens (or creates) the log in `cfg.dir` with segment files as `tierdb_io::BufferedFile`.
    pub fn open(cfg: WalConfig) -> Result<Wal, WalError> {
        Wal::open_with(cfg, crate::default_opener())
    }

    /// Opens (or creates) the log, opening segment files with `opener`.
    ///
    /// Creates the directory if missing; reads the checkpoint LSN from the control file (0 if
    /// there is none); scans the records from the checkpoint to find the end of the valid
    /// log; cuts off a torn or invalid tail (truncates that segment at the valid end, deletes
    /// any later segment file, fsyncs both) so stale bytes can never be read as records later;
    /// appends resume at the valid end. Starts the background flusher and the prefill thread.
    pub fn open_with(cfg: WalConfig, opener: DeviceOpener) -> Result<Wal, WalError> {
        let shared = Arc::new(recovery::open(&cfg, opener)?);
        let prefill = Arc::clone(&shared.writer.lock().prefill);
        let prefiller = prefill
            .spawn()
            .map_err(|e| WalError::io("starting the redo prefill thread", e))?;
        let handle = flusher::spawn(Arc::clone(&shared)).map_err(|e| {
            prefill.stop();
            WalError::io("starting the redo flusher thread", e)
        })?;
        Ok(Wal {
            shared,
            flusher: Mutex::new(Some(handle)),
            prefill,
            prefiller: Mutex::new(Some(prefiller)),
        })
    }

    /// The redo directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The checkpoint LSN, as read at open or last written by `checkpoint`.
    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.shared.checkpoint_lsn.load(Ordering::Acquire))
    }

    /// LSN just past the last appended record.
    pub fn end_lsn(&self) -> Lsn {
        Lsn(self.shared.end())
    }

    /// Every byte below this LSN is fsynced.
    pub fn durable_lsn(&self) -> Lsn {
        Lsn(self.shared.durable())
    }

    /// Every byte below this LSN has been written to the segment files (maybe not fsynced).
    pub fn written_lsn(&self) -> Lsn {
        Lsn(self.shared.written_lsn.load(Ordering::Acquire))
    }

    /// Appends one record (`1..=MAX_RECORD_BYTES` bytes of opaque payload) and returns the
    /// LSN just past it.
    ///
    /// `in_lock(start, end)` runs while the append lock is held, after the record's position
    /// is fixed and before any other record can be appended, so the caller can stamp page
    /// LSNs / mark pages dirty in log order. It must be short and must not call into this
    /// `Wal` (the append lock is not reentrant).
    ///
    /// Cheap: copies into the in-memory log buffer. When the buffer is full, the appender
    /// first writes the buffer to the files (outside the append lock).
    pub fn append(&self, payload: &[u8], in_lock: impl FnOnce(Lsn, Lsn)) -> Result<Lsn, WalError> {
        self.shared.append(payload, in_lock)
    }

    /// Blocks until `durable_lsn() >= lsn` (an `lsn` past the end is clamped to the end).
    ///
    /// Group commit: one caller becomes the leader, writes everything buffered so far and
    /// fsyncs it; concurrent callers wait on a condvar and are covered by the same fsync
    /// when their record was in the leader's write, or the next leader's otherwise.
    pub fn flush_to(&self, lsn: Lsn) -> Result<(), WalError> {
        self.shared.flush_to(lsn.0)
    }

    /// Makes a commit whose record ends at `lsn` as durable as the policy asks:
    /// `EveryCommit` → `flush_to(lsn)`; `WriteAtCommit` → the buffered bytes are written to
    /// the files without fsync; `Periodic` → nothing (the background flusher writes and
    /// fsyncs about once per `flush_interval`).
    pub fn commit(&self, lsn: Lsn) -> Result<(), WalError> {
        self.shared.commit(lsn)
    }

    /// Changes the commit policy (takes effect for the next `commit`).
    pub fn set_policy(&self, p: FlushPolicy) {
        self.shared.policy.store(p.to_mysql(), Ordering::Relaxed);
    }

    /// The current commit policy.
    pub fn policy(&self) -> FlushPolicy {
        self.shared.policy()
    }

    /// Persists `lsn` as the checkpoint (flushing the log to `lsn` first if needed) and
    /// deletes the segment files that lie wholly below it. `lsn` must be a record boundary
    /// (an LSN returned by `append`, or `end_lsn()`), not below the current checkpoint and
    /// not past the end; recovery starts reading there.
    pub fn checkpoint(&self, lsn: Lsn) -> Result<(), WalError> {
        self.shared.checkpoint(lsn)
    }

    /// Iterates the records from `from` (a record boundary, normally `checkpoint_lsn()`) to
    /// the end of the valid log, as `(start LSN, payload)`.
    ///
    /// Meant for recovery at start-up, before appends begin: it first writes out the log
    /// buffer (no fsync) and then sees exactly the records appended before the call. It
    /// stops cleanly (`None`) at the first invalid or torn record.
    pub fn read_from(&self, from: Lsn) -> Result<WalReader, WalError> {
        self.shared.read_from(from)
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> WalStats {
        self.shared.stats()
    }

    /// Flushes everything (write + fsync), stops the background threads, deletes the spare
    /// segment and refuses further appends and commits (`WalError::Closed`). Call it after the
    /// last appender has stopped.
    pub fn close(&self) -> Result<(), WalError> {
        self.shared.closed.store(true, Ordering::Release);
        self.stop_threads();
        self.prefill.discard();
        let end = self.shared.end();
        self.shared.flush_to(end)?;
        self.shared.trim_tail()
    }

    /// Test support: models `kill -9`. Stops the background threads and drops the handle
    /// without writing the log buffer; bytes already written to the files stay (as in the OS
    /// page cache).
    #[doc(hidden)]
    pub fn simulate_crash(self) {
        self.shared.closed.store(true, Ordering::Release);
        self.stop_threads();
    }

    /// Stops and joins the background threads (flusher, prefill).
    fn stop_threads(&self) {
        flusher::request_stop(&self.shared);
        self.prefill.stop();
        if let Some(h) = self.flusher.lock().take() {
            if h.join().is_err() {
                tracing::error!("redo flusher thread panicked");
            }
        }
        if let Some(h) = self.prefiller.lock().take() {
            if h.join().is_err() {
                tracing::error!("redo prefill thread panicked");
            }
        }
    }
}

impl Drop for Wal {
    /// Stops the background threads; unless closed or poisoned, makes a best-effort final
    /// flush (an error is logged: nothing can be returned from `drop`).
    fn drop(&mut self) {
        self.stop_threads();
        if self.shared.closed.load(Ordering::Acquire) || self.shared.is_poisoned() {
            return;
        }
        let end = self.shared.end();
        if let Err(e) = self.shared.flush_to(end) {
            tracing::error!(error = %e, "redo log flush on drop failed");
        }
    }
}

impl std::fmt::Debug for Wal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wal")
            .field("dir", &self.shared.dir)
            .field("end_lsn", &self.shared.end())
            .field("durable_lsn", &self.shared.durable())
            .field("poisoned", &self.shared.is_poisoned())
            .finish()
    }
}
