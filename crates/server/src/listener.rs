//! Accepting connections: one OS thread per connection with blocking socket I/O.
//!
//! Owns: the accept loop, TCP_NODELAY and socket timeouts, the `max_connections` limit
//! (error 1040 to the extra client), connection ids, the registry of open sockets used to
//! close them at shutdown, and the last-resort panic guard around each connection.
//! Must never: block the accept loop on one client; let a panic in a connection take the
//! server down; busy-wait (idle connections sleep in `read`).
//!
//! Lock order: `ListenerState::conns` is a leaf lock (nothing else is taken while held).

use std::collections::HashMap;
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::protocol::{self, response, Service};

/// Settings of the accept loop and its connections.
#[derive(Clone, Debug)]
pub struct ListenerOptions {
    pub max_connections: usize,
    /// Read timeout until a client has authenticated.
    pub connect_timeout: Duration,
    /// Read timeout of an authenticated, idle connection (like MySQL's wait_timeout).
    pub wait_timeout: Duration,
    pub thread_stack_bytes: usize,
}

impl Default for ListenerOptions {
    fn default() -> ListenerOptions {
        ListenerOptions {
            max_connections: 1024,
            connect_timeout: Duration::from_secs(10),
            wait_timeout: Duration::from_secs(28_800),
            thread_stack_bytes: 4 << 20,
        }
    }
}

/// State shared between the accept loop, connection threads and whoever stops the server.
pub struct ListenerState {
    stopping: AtomicBool,
    active: AtomicUsize,
    next_id: AtomicU32,
    listen_fd: AtomicU32,
    conns: Mutex<HashMap<u32, TcpStream>>,
    drained: Condvar,
    started: Instant,
}

impl Default for ListenerState {
    fn default() -> ListenerState {
        ListenerState {
            stopping: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            next_id: AtomicU32::new(1),
            listen_fd: AtomicU32::new(u32::MAX),
            conns: Mutex::new(HashMap::new()),
            drained: Condvar::new(),
            started: Instant::now(),
        }
    }
}

impl ListenerState {
    /// Connections currently open.
    pub fn active(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }
    pub fn uptime(&self) -> Duration {
        self.started.elapsed()
    }
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Stops accepting and ends every connection at its next read (a statement in progress
    /// finishes and its reply is sent first). Safe to call from any thread, more than once.
    pub fn stop(&self) {
        if self.stopping.swap(true, Ordering::AcqRel) {
            return;
        }
        let fd = self.listen_fd.load(Ordering::Acquire);
        if fd != u32::MAX {
            // Wakes the thread blocked in accept(); the listener itself is closed by its owner.
            // SAFETY: shutdown(2) on a descriptor number has no memory effects; at worst the
            // number is stale and the call fails.
            unsafe { libc::shutdown(fd as i32, libc::SHUT_RDWR) };
        }
        for s in self.conns.lock().values() {
            let _ = s.shutdown(Shutdown::Read);
        }
    }

    /// Ends connection `id`'s socket both ways (KILL CONNECTION): its thread's read or write
    /// fails and the connection ends, rolling back what it had open. False when it is gone.
    pub fn close_connection(&self, id: u32) -> bool {
        match self.conns.lock().get(&id) {
            Some(s) => {
                let _ = s.shutdown(Shutdown::Both);
                true
            }
            None => false,
        }
    }

    /// Waits until every connection thread has finished, at most `timeout`. True if drained.
    pub fn wait_drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut conns = self.conns.lock();
        while self.active() > 0 {
            if self.drained.wait_until(&mut conns, deadline).timed_out() {
                return self.active() == 0;
            }
        }
        true
    }

    fn connection_done(&self, id: u32) {
        let mut conns = self.conns.lock();
        conns.remove(&id);
        self.active.fetch_sub(1, Ordering::AcqRel);
        self.drained.notify_all();
    }
}

/// How long a reply may wait for a client that does not read (like MySQL's net_write_timeout).
const NET_WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a client may take to send the next packet of a file a statement asked it for
/// (LOAD DATA LOCAL; MariaDB's `net_read_timeout`): the statement holds its locks meanwhile.
const NET_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Refuses a connection over the limit with error 1040, sent in place of the greeting.
fn refuse_too_many(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let mut payload = Vec::new();
    response::err(&mut payload, 1040, "08004", "Too many connections");
    let mut packet = (payload.len() as u32).to_le_bytes();
    packet[3] = 0;
    let _ = stream.write_all(&packet);
    let _ = stream.write_all(&payload);
    let _ = stream.shutdown(Shutdown::Both);
}

/// Runs the accept loop until `state.stop()`. Connection threads may still be running when
/// this returns; use `state.wait_drained`.
pub fn run<S: Service + 'static>(
    listener: TcpListener,
    service: Arc<S>,
    opts: ListenerOptions,
    state: Arc<ListenerState>,
) {
    state
        .listen_fd
        .store(listener.as_raw_fd() as u32, Ordering::Release);
    if state.is_stopping() {
        return;
    }
    loop {
        let accepted = listener.accept();
        if state.is_stopping() {
            break;
        }
        let (stream, peer) = match accepted {
            Ok(x) => x,
            Err(e) => {
                // EMFILE/ENFILE/ECONNABORTED and friends: log, back off briefly, keep serving.
                tracing::warn!(error = %e, "accept failed");
                std::thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::warn!(error = %e, "TCP_NODELAY failed");
        }
        if state.active() >= opts.max_connections {
            tracing::warn!(%peer, max = opts.max_connections, "too many connections");
            refuse_too_many(stream);
            continue;
        }
        let id = state.next_id.fetch_add(1, Ordering::Relaxed);
        let registered = match stream.try_clone() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "cannot clone socket");
                continue;
            }
        };
        state.active.fetch_add(1, Ordering::AcqRel);
        state.conns.lock().insert(id, registered);
        let (svc, st, o) = (service.clone(), state.clone(), opts.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("conn-{id}"))
            .stack_size(opts.thread_stack_bytes)
            .spawn(move || {
                connection_thread(&*svc, stream, id, peer.ip(), &o);
                st.connection_done(id);
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start a connection thread");
            state.connection_done(id);
        }
        // A stop() racing with the insert above must still close this socket.
        if state.is_stopping() {
            if let Some(s) = state.conns.lock().get(&id) {
                let _ = s.shutdown(Shutdown::Read);
            }
        }
    }
    state.listen_fd.store(u32::MAX, Ordering::Release);
}

fn connection_thread<S: Service>(
    service: &S,
    stream: TcpStream,
    id: u32,
    peer: std::net::IpAddr,
    opts: &ListenerOptions,
) {
    let _ = stream.set_read_timeout(Some(opts.connect_timeout));
    let _ = stream.set_write_timeout(Some(NET_WRITE_TIMEOUT));
    let writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!(error = %e, "cannot clone socket");
            return;
        }
    };
    let wait = opts.wait_timeout;
    let result = catch_unwind(AssertUnwindSafe(|| {
        protocol::serve(
            service,
            stream,
            writer,
            id,
            peer,
            move |s: &TcpStream, phase| {
                let _ = s.set_read_timeout(Some(match phase {
                    protocol::ReadPhase::Commands => wait,
                    protocol::ReadPhase::ClientFile => NET_READ_TIMEOUT,
                }));
            },
        )
    }));
    match result {
        Ok(end) => tracing::debug!(conn_id = id, %peer, reason = %end, "connection closed"),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            tracing::error!(conn_id = id, %peer, panic = %what, "BUG: connection thread panicked; connection dropped, server continues");
        }
    }
}
