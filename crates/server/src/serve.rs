//! `tierdb serve`: open the engine, listen, serve until SIGINT/SIGTERM, shut down cleanly.
//!
//! Owns: process-level setup (logging, file-descriptor limit, signal handling) and the
//! shutdown order: stop accepting → end sessions (each finishes its statement; idle ones are
//! closed) → `Engine::shutdown` (flush + checkpoint).
//! Must never: shut the engine down while a session may still write to it, unless sessions
//! overrun `shutdown_timeout` (then it logs loudly and shuts down anyway).

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;

use crate::adapter::TierService;
use crate::config::Config;
use crate::listener::{self, ListenerOptions, ListenerState};

/// Installs the tracing subscriber: RUST_LOG if set, else the config's `log` filter.
pub fn init_logging(filter: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Raises the soft open-file limit to the hard limit (each connection is a descriptor).
fn raise_fd_limit() {
    // SAFETY: getrlimit/setrlimit write/read only the struct we pass.
    unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// Blocks SIGINT/SIGTERM in this thread (and every thread started after it) and starts a
/// thread that waits for them: the first stops the listener, a second exits at once.
fn handle_signals(state: Arc<ListenerState>) -> anyhow::Result<()> {
    // SAFETY: the sigset is initialised by sigemptyset before use; pthread_sigmask and
    // sigwait only read/write the sets we pass.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            anyhow::bail!("cannot block SIGINT/SIGTERM");
        }
        set
    };
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut stopping = false;
            loop {
                let mut sig = 0;
                // SAFETY: see above.
                if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
                    continue;
                }
                if stopping {
                    tracing::error!(
                        signal = sig,
                        "second signal: exiting without clean shutdown"
                    );
                    std::process::exit(1);
                }
                stopping = true;
                tracing::info!(signal = sig, "signal received: shutting down");
                state.stop();
            }
        })?;
    Ok(())
}

/// Runs the server with `cfg` until a signal stops it.
pub fn run(cfg: Config) -> anyhow::Result<()> {
    let state = Arc::new(ListenerState::default());
    handle_signals(state.clone())?;
    raise_fd_limit();

    let listener = TcpListener::bind((cfg.bind, cfg.port))
        .with_context(|| format!("cannot listen on {}:{}", cfg.bind, cfg.port))?;
    for dir in [&cfg.data_dir, &cfg.redo_dir] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // The binary log is opened first: the engine's recovery brings its files up to date.
    let binlog = match cfg.binlog_config() {
        Some(b) => {
            let dir = b.dir.clone();
            Some(
                tierdb_binlog::log::Binlog::open(b)
                    .with_context(|| format!("cannot open the binary log in {}", dir.display()))?,
            )
        }
        None => None,
    };
    let mut ecfg = cfg.engine_config();
    ecfg.binlog = binlog
        .clone()
        .map(|b| b as Arc<dyn tierdb_engine::BinlogSink>);
    let engine = tierdb_engine::Engine::open(ecfg).context("cannot open the storage engine")?;
    let shared = tierdb_sql::Shared::new(engine.clone(), crate::adapter::server_info(&cfg))
        .map_err(anyhow::Error::msg)?;
    if let Some(b) = &binlog {
        b.start().context("cannot start the binary log")?;
        shared.set_binlog(b.clone());
    }
    // KILL CONNECTION ends the socket of the connection it names.
    let sockets = state.clone();
    shared.set_connection_closer(Box::new(move |id| sockets.close_connection(id)));
    let service =
        Arc::new(TierService::new(shared, &cfg, state.clone()).map_err(anyhow::Error::msg)?);
    let opts = ListenerOptions {
        max_connections: cfg.max_connections as usize,
        connect_timeout: Duration::from_secs(cfg.connect_timeout.max(1)),
        wait_timeout: Duration::from_secs(cfg.wait_timeout.max(1)),
        thread_stack_bytes: cfg.thread_stack_size.bytes() as usize,
    };
    tracing::info!(
        addr = %format!("{}:{}", cfg.bind, cfg.port),
        data_dir = %cfg.data_dir.display(),
        redo_dir = %cfg.redo_dir.display(),
        buffer_pool_size = %cfg.buffer_pool_size,
        "tierdb ready for connections"
    );
    listener::run(listener, service, opts, state.clone());
    // Replicas' dumps wait for new events: they end now, so their connections close.
    if let Some(b) = &binlog {
        b.stop_dumps();
    }

    tracing::info!(
        connections = state.active(),
        "no longer accepting; ending sessions"
    );
    if !state.wait_drained(Duration::from_secs(cfg.shutdown_timeout)) {
        tracing::error!(
            connections = state.active(),
            "sessions still running after shutdown_timeout; shutting the engine down anyway"
        );
    }
    engine.shutdown().context("engine shutdown failed")?;
    if let Some(b) = &binlog {
        b.close().context("binary log close failed")?;
    }
    tracing::info!("shutdown complete");
    Ok(())
}
