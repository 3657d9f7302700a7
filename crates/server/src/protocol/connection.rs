//! One client connection from greeting to goodbye: handshake and authentication, then the
//! command loop (the commands themselves are in `commands.rs`).
//!
//! Owns: the per-connection state (negotiated capabilities, scramble, user, the backend,
//! prepared statement state) and the guarantee that `Backend::end` and `Service::close` run
//! exactly once however the connection ends.
//! Must never: run a command before authentication succeeded; keep serving after a framing
//! error (the stream position is then unknown); panic on anything the client sends.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::IpAddr;

use super::backend::{Backend, Service, SqlError};
use super::binary::StmtState;
use super::handshake::{self, ResponseError, SCRAMBLE_LEN};
use super::packet::{PacketReader, PacketWriter, ReadError};
use super::response;

/// How a connection ended, for the log.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnEnd {
    #[error("client quit")]
    Quit,
    #[error("{0}")]
    Read(#[from] ReadError),
    #[error("socket write failed: {0}")]
    Write(#[from] std::io::Error),
    #[error("handshake refused: {0}")]
    Refused(String),
}

/// What the connection waits to read, for the socket's read timeout (`serve`'s `phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadPhase {
    /// The next command (an idle client: `wait_timeout`).
    Commands,
    /// The rest of a file the statement asked the client for (LOAD DATA LOCAL): a client
    /// that stalls holds the statement's locks, so it gets a short timeout.
    ClientFile,
}

/// `serve`'s read-phase callback, kept by the connection.
pub(crate) type PhaseHook<'s, R> = Box<dyn Fn(&R, ReadPhase) + 's>;

/// Result of one command: keep reading or close.
pub(crate) enum Flow {
    Continue,
    Close,
}

/// A connection's state once the greeting is sent.
pub struct Connection<'s, S: Service, R, W> {
    pub(crate) service: &'s S,
    pub(crate) reader: PacketReader<R>,
    pub(crate) writer: PacketWriter<W>,
    pub(crate) conn_id: u32,
    pub(crate) peer: IpAddr,
    pub(crate) scramble: [u8; SCRAMBLE_LEN],
    pub(crate) caps: u32,
    pub(crate) user: String,
    pub(crate) backend: Option<S::Backend>,
    pub(crate) stmts: HashMap<u32, StmtState>,
    /// COM_QUERY may hold several statements separated by `;` (CLIENT_MULTI_STATEMENTS at
    /// login, or COM_SET_OPTION).
    pub(crate) multi_statements: bool,
    /// The reply being written is not the last of its COM_QUERY (SERVER_MORE_RESULTS_EXISTS).
    pub(crate) more_results: bool,
    /// Sets the socket's read timeout for what is read next.
    pub(crate) phase: PhaseHook<'s, R>,
}

/// Serves one connection on `reader`/`writer` until the client leaves or the stream breaks.
/// `phase` runs once the client is authenticated (`Commands`: e.g. to switch the socket from
/// the connect timeout to the idle timeout) and around each client file a statement reads.
pub fn serve<'s, S, R, W>(
    service: &'s S,
    reader: R,
    writer: W,
    conn_id: u32,
    peer: IpAddr,
    phase: impl Fn(&R, ReadPhase) + 's,
) -> ConnEnd
where
    S: Service,
    R: Read,
    W: Write,
{
    let mut conn = Connection {
        service,
        reader: PacketReader::new(reader, service.max_packet_bytes()),
        writer: PacketWriter::new(writer),
        conn_id,
        peer,
        scramble: handshake::new_scramble(),
        caps: 0,
        user: String::new(),
        backend: None,
        stmts: HashMap::new(),
        multi_statements: false,
        more_results: false,
        phase: Box::new(phase),
    };
    let end = match conn.handshake() {
        Ok(()) => {
            (conn.phase)(conn.reader.get_ref(), ReadPhase::Commands);
            conn.command_loop()
        }
        Err(e) => e,
    };
    conn.finish();
    end
}

impl<S: Service, R: Read, W: Write> Connection<'_, S, R, W> {
    pub(crate) fn send_error(&mut self, e: &SqlError) -> std::io::Result<()> {
        self.writer
            .packet(|b| response::err(b, e.code, e.state, &e.message))
    }

    pub(crate) fn status(&self) -> u16 {
        let more = if self.more_results {
            super::constants::status::MORE_RESULTS_EXISTS
        } else {
            0
        };
        more | self
            .backend
            .as_ref()
            .map_or(super::constants::status::AUTOCOMMIT, |b| b.status_flags())
    }

    fn refuse(&mut self, e: SqlError) -> ConnEnd {
        let _ = self.send_error(&e);
        let _ = self.writer.flush();
        ConnEnd::Refused(e.message)
    }

    /// The client's host as MariaDB names it: `localhost` for a loopback address (the name
    /// it resolves to), else the address.
    pub(crate) fn host(&self) -> String {
        let ip = match self.peer {
            std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(self.peer, std::net::IpAddr::V4),
            v4 => v4,
        };
        if ip.is_loopback() {
            "localhost".to_string()
        } else {
            ip.to_string()
        }
    }

    fn access_denied(&self, user: &str, token: &[u8]) -> SqlError {
        SqlError::new(
            1045,
            "28000",
            format!(
                "Access denied for user '{}'@'{}' (using password: {})",
                user,
                self.host(),
                if token.is_empty() { "NO" } else { "YES" }
            ),
        )
    }

    /// Reads the client's auth data for mysql_native_password: the token it sent, or, when it
    /// used another plugin, the reply to an AuthSwitchRequest. `seq` is the next sequence id.
    pub(crate) fn native_token(
        &mut self,
        plugin: Option<&str>,
        token: Vec<u8>,
        seq: &mut u8,
    ) -> Result<Vec<u8>, ConnEnd> {
        match plugin {
            Some(p) if p != super::constants::NATIVE_PASSWORD => {
                self.writer.set_seq(*seq);
                let scramble = self.scramble;
                self.writer
                    .packet(|b| handshake::auth_switch_request(b, &scramble))?;
                self.writer.flush()?;
                *seq = self.writer.seq();
                Ok(self.reader.read_packet(seq)?)
            }
            _ => Ok(token),
        }
    }

    /// Checks `token` for `user`; on success returns Ok, otherwise the 1045 error.
    pub(crate) fn authenticate(&self, user: &str, token: &[u8]) -> Result<(), SqlError> {
        let ok = match self.service.credential(user, self.peer) {
            Some(cred) => handshake::verify(&cred, &self.scramble, token),
            None => false,
        };
        if ok {
            Ok(())
        } else {
            self.service.login_refused();
            Err(self.access_denied(user, token))
        }
    }

    fn handshake(&mut self) -> Result<(), ConnEnd> {
        let version = self.service.server_version();
        let (conn_id, scramble) = (self.conn_id, self.scramble);
        self.writer.set_seq(0);
        self.writer
            .packet(|b| handshake::greeting(b, &version, conn_id, &scramble))?;
        self.writer.flush()?;
        let mut seq = self.writer.seq();
        let payload = self.reader.read_packet(&mut seq)?;
        let resp = match handshake::parse_response(&payload) {
            Ok(r) => r,
            Err(ResponseError::SslRequested) => {
                self.writer.set_seq(seq);
                return Err(self.refuse(SqlError::new(
                    1043,
                    "08S01",
                    "TLS is not supported by this server",
                )));
            }
            Err(e) => {
                self.writer.set_seq(seq);
                return Err(self.refuse(SqlError::new(
                    1043,
                    "08S01",
                    format!("Bad handshake: {e}"),
                )));
            }
        };
        self.caps = resp.caps;
        self.multi_statements = resp.caps & super::constants::cap::MULTI_STATEMENTS != 0;
        let token = self.native_token(resp.auth_plugin.as_deref(), resp.auth_response, &mut seq)?;
        self.writer.set_seq(seq);
        if let Err(e) = self.authenticate(&resp.user, &token) {
            tracing::info!(conn_id, user = %resp.user, peer = %self.peer, "login refused");
            return Err(self.refuse(e));
        }
        let host = self.host();
        match self.service.open(
            conn_id,
            &resp.user,
            &host,
            self.peer,
            resp.database.as_deref(),
        ) {
            Ok(b) => self.backend = Some(b),
            Err(e) => return Err(self.refuse(e)),
        }
        self.user = resp.user;
        tracing::debug!(conn_id, user = %self.user, peer = %self.peer, "client authenticated");
        let status = self.status();
        self.writer
            .packet(|b| response::ok(b, 0, 0, status, 0, ""))?;
        self.writer.flush()?;
        self.report_bytes();
        Ok(())
    }

    pub(crate) fn report_bytes(&mut self) {
        let rx = self.reader.take_bytes_read();
        let tx = self.writer.take_bytes_written();
        if rx != 0 || tx != 0 {
            self.service.add_bytes(rx, tx);
        }
    }

    fn command_loop(&mut self) -> ConnEnd {
        loop {
            let mut seq = 0u8;
            let payload = match self.reader.read_packet(&mut seq) {
                Ok(p) => p,
                Err(e) => {
                    let reply = match &e {
                        ReadError::TooLarge { .. } => Some(SqlError::new(
                            1153,
                            "08S01",
                            "Got a packet bigger than 'max_allowed_packet' bytes",
                        )),
                        ReadError::OutOfOrder { .. } => {
                            Some(SqlError::new(1156, "08S01", "Got packets out of order"))
                        }
                        _ => None,
                    };
                    if let Some(err) = reply {
                        self.writer.set_seq(seq);
                        let _ = self.send_error(&err);
                        let _ = self.writer.flush();
                    }
                    return ConnEnd::Read(e);
                }
            };
            self.writer.set_seq(seq);
            let flow = self.dispatch(&payload);
            if let Err(e) = self.writer.flush() {
                return ConnEnd::Write(e);
            }
            self.report_bytes();
            match flow {
                Ok(Flow::Continue) => {}
                Ok(Flow::Close) => return ConnEnd::Quit,
                Err(e) => return e,
            }
        }
    }

    /// Ends the backend session and tells the service, once.
    pub(crate) fn end_backend(&mut self) {
        if let Some(mut b) = self.backend.take() {
            b.end();
            self.service.close(self.conn_id);
        }
    }

    fn finish(&mut self) {
        self.end_backend();
        self.report_bytes();
    }
}

impl<S: Service, R, W> Drop for Connection<'_, S, R, W> {
    fn drop(&mut self) {
        // Only reached with a backend when a panic unwinds through `serve`: the backend may be
        // mid-statement, so it is dropped (its own Drop rolls back) rather than ended.
        if self.backend.take().is_some() {
            self.service.close(self.conn_id);
        }
    }
}
