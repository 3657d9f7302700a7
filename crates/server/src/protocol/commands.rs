//! The command phase: one function per COM_* command, each writing exactly the reply the
//! protocol prescribes (or none, for COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA and COM_QUIT).
//!
//! Owns: command decoding and the mapping of backend results/errors onto reply packets,
//! including the COM_FIELD_LIST terminator (always a classic 5-byte EOF, which every client
//! accepts), prepared-statement bookkeeping, and LOAD DATA LOCAL's exchange (the file request,
//! the client's file streamed to the backend and always read to its end).
//! Must never: reply twice or not at all to a command that expects a reply; send a result
//! set's rows without its column definitions; panic on a short or malformed command.

use std::io::{Read, Write};

use super::backend::{Backend, ColumnKind, QueryResult, Service, SqlError, Value};
use super::binary::{self, StmtState};
use super::codec::Cursor;
use super::connection::{ConnEnd, Connection, Flow};
use super::constants::com;
use super::handshake;
use super::response;
use super::text;

fn malformed() -> SqlError {
    SqlError::new(1835, "HY000", "Malformed communication packet.")
}

fn unknown_command() -> SqlError {
    SqlError::new(1047, "08S01", "Unknown command")
}

/// The client's file of a LOAD DATA LOCAL as a byte stream: its packets' payloads up to the
/// empty packet that ends it.
struct InfileStream<'a, R> {
    reader: &'a mut super::packet::PacketReader<R>,
    /// The sequence id the next packet must carry.
    seq: u8,
    buf: Vec<u8>,
    pos: usize,
    /// The empty packet was read (or the stream broke).
    done: bool,
    /// Why the stream broke: the connection cannot go on.
    failed: Option<super::packet::ReadError>,
}

impl<R: Read> InfileStream<'_, R> {
    /// Reads (and drops) what is left of the file, up to its empty packet.
    fn drain(&mut self) {
        while !self.done {
            match self.reader.read_packet(&mut self.seq) {
                Ok(p) if p.is_empty() => self.done = true,
                Ok(_) => {}
                Err(e) => {
                    self.failed = Some(e);
                    self.done = true;
                }
            }
        }
    }
}

impl<R: Read> Read for InfileStream<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.buf.len() {
            if self.done {
                return Ok(0);
            }
            match self.reader.read_packet(&mut self.seq) {
                Ok(p) if p.is_empty() => self.done = true,
                Ok(p) => {
                    self.buf = p;
                    self.pos = 0;
                }
                Err(e) => {
                    let msg = e.to_string();
                    self.failed = Some(e);
                    self.done = true;
                    return Err(std::io::Error::other(msg));
                }
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<S: Service, R: Read, W: Write> Connection<'_, S, R, W> {
    /// Handles one command packet. `Err` ends the connection (socket failure).
    pub(crate) fn dispatch(&mut self, payload: &[u8]) -> Result<Flow, ConnEnd> {
        let Some((&cmd, body)) = payload.split_first() else {
            self.send_error(&malformed())?;
            return Ok(Flow::Continue);
        };
        if self.backend.is_none() {
            // Only after a failed COM_CHANGE_USER / COM_RESET_CONNECTION.
            self.send_error(&SqlError::new(1053, "08S01", "Session ended; reconnect"))?;
            return Ok(Flow::Close);
        }
        match cmd {
            com::QUIT => return Ok(Flow::Close),
            com::PING => self.reply_ok(0, 0)?,
            // COM_REFRESH (`mariadb-admin refresh`, FLUSH by command): nothing to flush.
            com::REFRESH => self.reply_ok(0, 0)?,
            com::QUERY => self.com_query(body)?,
            com::INIT_DB => {
                let db = String::from_utf8_lossy(body).into_owned();
                let r = self.backend_call(|b| b.init_db(&db));
                match r {
                    Ok(()) => self.reply_ok(0, 0)?,
                    Err(e) => self.send_error(&e)?,
                }
            }
            com::FIELD_LIST => self.com_field_list(body)?,
            com::STMT_PREPARE => self.com_stmt_prepare(body)?,
            com::STMT_EXECUTE => self.com_stmt_execute(body)?,
            com::STMT_SEND_LONG_DATA => self.com_stmt_send_long_data(body),
            com::STMT_CLOSE => {
                if let Ok(id) = Cursor::new(body).u32() {
                    if self.stmts.remove(&id).is_some() {
                        self.with_backend(|b| b.close_statement(id));
                    }
                }
            }
            com::STMT_RESET => self.com_stmt_reset(body)?,
            com::SET_OPTION => {
                let status = self.status();
                let caps = self.caps;
                // 0: MYSQL_OPTION_MULTI_STATEMENTS_ON, 1: ..._OFF.
                match Cursor::new(body).u16() {
                    Ok(o @ (0 | 1)) => {
                        self.multi_statements = o == 0;
                        self.writer
                            .packet(|b| response::end_of_rows(b, caps, status, 0))?
                    }
                    _ => self.send_error(&unknown_command())?,
                }
            }
            com::STATISTICS => {
                let line = self.service.statistics();
                self.writer.write_payload(line.as_bytes())?;
            }
            com::RESET_CONNECTION => {
                self.stmts.clear();
                match self.backend_call(|b| b.reset_connection()) {
                    Ok(()) => self.reply_ok(0, 0)?,
                    Err(e) => self.send_error(&e)?,
                }
            }
            com::CHANGE_USER => return self.com_change_user(body),
            com::REGISTER_SLAVE => {
                let sid = Cursor::new(body).u32().unwrap_or(0);
                match self.backend_call(|b| b.register_replica(sid)) {
                    Ok(()) => self.reply_ok(0, 0)?,
                    Err(e) => self.send_error(&e)?,
                }
            }
            com::BINLOG_DUMP => return self.com_binlog_dump(body),
            com::BINLOG_DUMP_GTID => self.send_error(&SqlError::unsupported(
                "COM_BINLOG_DUMP_GTID (MySQL replicas); MariaDB replicas are served",
            ))?,
            _ => self.send_error(&unknown_command())?,
        }
        Ok(Flow::Continue)
    }

    fn with_backend<T>(&mut self, f: impl FnOnce(&mut S::Backend) -> T) -> T
    where
        T: Default,
    {
        match self.backend.as_mut() {
            Some(b) => f(b),
            None => T::default(),
        }
    }

    fn backend_call<T>(
        &mut self,
        f: impl FnOnce(&mut S::Backend) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        match self.backend.as_mut() {
            Some(b) => f(b),
            None => Err(SqlError::new(1053, "08S01", "Session ended; reconnect")),
        }
    }

    /// COM_BINLOG_DUMP: `pos u32 | flags u16 | server_id u32 | file name`. Every event goes
    /// out as its own packet (`0x00` then the event) until the stream ends, the replica goes
    /// away or an error ends it; the connection then closes (as MariaDB's does).
    fn com_binlog_dump(&mut self, body: &[u8]) -> Result<Flow, ConnEnd> {
        let mut c = Cursor::new(body);
        let (Ok(pos), Ok(flags), Ok(_sid)) = (c.u32(), c.u16(), c.u32()) else {
            self.send_error(&malformed())?;
            return Ok(Flow::Close);
        };
        let file = String::from_utf8_lossy(body.get(10..).unwrap_or(&[]))
            .trim_end_matches('\0')
            .to_string();
        let mut stream = match self.backend_call(|b| b.binlog_dump(&file, u64::from(pos), flags)) {
            Ok(s) => s,
            Err(e) => {
                self.send_error(&e)?;
                return Ok(Flow::Close);
            }
        };
        loop {
            match stream.next_event() {
                Ok(Some(ev)) => {
                    self.writer.packet(|b| {
                        b.push(0);
                        b.extend_from_slice(&ev);
                    })?;
                    self.writer.flush()?;
                    self.report_bytes();
                }
                Ok(None) => {
                    let status = self.status();
                    self.writer.packet(|b| response::eof(b, status, 0))?;
                    return Ok(Flow::Close);
                }
                Err(e) => {
                    self.send_error(&e)?;
                    return Ok(Flow::Close);
                }
            }
        }
    }

    fn reply_ok(&mut self, affected_rows: u64, last_insert_id: u64) -> std::io::Result<()> {
        let status = self.status();
        self.writer
            .packet(|b| response::ok(b, affected_rows, last_insert_id, status, 0, ""))
    }

    fn reply_result(
        &mut self,
        r: Result<QueryResult, SqlError>,
        binary_rows: bool,
    ) -> std::io::Result<()> {
        let status = self.status();
        let caps = self.caps;
        match r {
            Err(e) => self.send_error(&e),
            Ok(QueryResult::Ok {
                affected_rows,
                last_insert_id,
                warnings,
                info,
            }) => self.writer.packet(|b| {
                response::ok(b, affected_rows, last_insert_id, status, warnings, &info)
            }),
            Ok(QueryResult::Rows { columns, .. }) if columns.is_empty() => self.reply_ok(0, 0),
            // (Answered by `local_infile` before a reply is written.)
            Ok(QueryResult::LocalInfile { .. }) => self.send_error(&SqlError::new(
                1105,
                "HY000",
                "internal: LOAD DATA LOCAL without its file",
            )),
            Ok(QueryResult::Rows { mut columns, rows }) => {
                // A computed BIGINT column holding an integer above i64::MAX (`SELECT ~0`,
                // `CAST(-1 AS UNSIGNED)`) is announced UNSIGNED, so that clients read its
                // 8 binary bytes (or its digits) as unsigned; one that also holds negative
                // integers is announced DECIMAL (sent as text), as MariaDB types it.
                for (i, col) in columns.iter_mut().enumerate() {
                    if col.kind != ColumnKind::LongLong || col.unsigned {
                        continue;
                    }
                    let holds =
                        |f: &dyn Fn(&Value) -> bool| rows.iter().any(|r| r.get(i).is_some_and(f));
                    if holds(&|v| matches!(v, Value::UInt(_))) {
                        if holds(&|v| matches!(v, Value::Int(i) if *i < 0)) {
                            col.kind = ColumnKind::NewDecimal;
                            col.decimals = 0;
                        } else {
                            col.unsigned = true;
                        }
                    }
                }
                let warnings = self.backend.as_ref().map_or(0, |b| b.warning_count());
                let write = if binary_rows {
                    binary::write_result_set
                } else {
                    text::write_result_set
                };
                write(&mut self.writer, &columns, &rows, caps, status, warnings)
            }
        }
    }

    fn com_query(&mut self, body: &[u8]) -> Result<(), ConnEnd> {
        let sql = tierdb_sql::rawtext::statement_text(body);
        if self.multi_statements {
            let parts = tierdb_sql::parse::split_statements(&sql);
            if parts.len() > 1 {
                return self.com_query_multi(&parts);
            }
        }
        let r = self.backend_call(|b| b.query(&sql));
        let r = self.local_infile(r)?;
        Ok(self.reply_result(r, false)?)
    }

    /// A statement that asked for the client's file (LOAD DATA LOCAL): the request (`0xFB`
    /// and the file name), the file's packets streamed to the backend up to the client's
    /// empty packet (all of them, also when the load stopped early), then the statement's
    /// result. Any other result passes through. Err: the stream broke (the connection ends).
    fn local_infile(
        &mut self,
        r: Result<QueryResult, SqlError>,
    ) -> Result<Result<QueryResult, SqlError>, ConnEnd> {
        let Ok(QueryResult::LocalInfile { file }) = r else {
            return Ok(r);
        };
        if self.caps & super::constants::cap::LOCAL_FILES == 0 {
            return Ok(self.backend_call(|b| b.load_local(None)));
        }
        self.writer.packet(|b| {
            b.push(0xFB);
            b.extend_from_slice(file.as_bytes());
        })?;
        self.writer.flush()?;
        (self.phase)(
            self.reader.get_ref(),
            super::connection::ReadPhase::ClientFile,
        );
        let mut src = InfileStream {
            reader: &mut self.reader,
            seq: self.writer.seq(),
            buf: Vec::new(),
            pos: 0,
            done: false,
            failed: None,
        };
        let r = match self.backend.as_mut() {
            Some(b) => b.load_local(Some(&mut src)),
            None => Err(SqlError::new(1053, "08S01", "Session ended; reconnect")),
        };
        src.drain();
        let (failed, seq) = (src.failed.take(), src.seq);
        (self.phase)(
            self.reader.get_ref(),
            super::connection::ReadPhase::Commands,
        );
        if let Some(e) = failed {
            return Err(ConnEnd::Read(e));
        }
        self.writer.set_seq(seq);
        Ok(r)
    }

    /// Several statements in one COM_QUERY: each one's reply in turn, all but the last
    /// flagged SERVER_MORE_RESULTS_EXISTS; an error is the last reply (the statements after
    /// it are not run), as MariaDB does.
    fn com_query_multi(&mut self, parts: &[&str]) -> Result<(), ConnEnd> {
        for (i, part) in parts.iter().enumerate() {
            let r = self.backend_call(|b| b.query(part));
            let r = self.local_infile(r)?;
            let failed = r.is_err();
            self.more_results = !failed && i + 1 < parts.len();
            let written = self.reply_result(r, false);
            self.more_results = false;
            written?;
            if failed {
                break;
            }
        }
        Ok(())
    }

    fn com_field_list(&mut self, body: &[u8]) -> std::io::Result<()> {
        let mut c = Cursor::new(body);
        let table = String::from_utf8_lossy(c.nul_bytes()).into_owned();
        match self.backend_call(|b| b.field_list(&table)) {
            Err(e) => self.send_error(&e),
            Ok(columns) => {
                for col in &columns {
                    self.writer
                        .packet(|b| text::column_definition(b, col, true))?;
                }
                // Always the classic EOF: the MariaDB client waits for exactly this.
                let status = self.status();
                self.writer.packet(|b| response::eof(b, status, 0))
            }
        }
    }

    fn com_stmt_prepare(&mut self, body: &[u8]) -> std::io::Result<()> {
        let sql = tierdb_sql::rawtext::statement_text(body);
        match self.backend_call(|b| b.prepare(&sql)) {
            Err(e) => self.send_error(&e),
            Ok(info) => {
                self.stmts.insert(
                    info.statement_id,
                    StmtState {
                        param_count: info.param_count,
                        ..Default::default()
                    },
                );
                let (caps, status) = (self.caps, self.status());
                binary::write_prepare_ok(&mut self.writer, &info, caps, status)
            }
        }
    }

    fn com_stmt_execute(&mut self, body: &[u8]) -> std::io::Result<()> {
        match binary::parse_execute(body, &mut self.stmts) {
            Err(e) => self.send_error(&e.to_sql_error()),
            Ok((id, params)) => {
                let r = self.backend_call(|b| b.execute(id, &params));
                self.reply_result(r, true)
            }
        }
    }

    fn com_stmt_send_long_data(&mut self, body: &[u8]) {
        let mut c = Cursor::new(body);
        let (Ok(id), Ok(param)) = (c.u32(), c.u16()) else {
            return;
        };
        let data = c.rest();
        if let Some(st) = self.stmts.get_mut(&id) {
            if param < st.param_count {
                let slot = st.long_data.entry(param).or_default();
                // Bounded like any packet: the total may not exceed max_allowed_packet.
                if (slot.len() + data.len()) as u64 <= self.service.max_packet_bytes() {
                    slot.extend_from_slice(data);
                }
            }
        }
    }

    fn com_stmt_reset(&mut self, body: &[u8]) -> std::io::Result<()> {
        let Ok(id) = Cursor::new(body).u32() else {
            return self.send_error(&malformed());
        };
        match self.stmts.get_mut(&id) {
            None => self.send_error(&SqlError::new(
                1243,
                "HY000",
                format!("Unknown prepared statement handler ({id}) given to mysqld_stmt_reset"),
            )),
            Some(st) => {
                st.long_data.clear();
                self.with_backend(|b| b.reset_statement(id));
                self.reply_ok(0, 0)
            }
        }
    }

    fn com_change_user(&mut self, body: &[u8]) -> Result<Flow, ConnEnd> {
        let Ok(cu) = handshake::parse_change_user(body, self.caps) else {
            self.send_error(&malformed())?;
            return Ok(Flow::Close);
        };
        let mut seq = self.writer.seq();
        let token = self.native_token(cu.auth_plugin.as_deref(), cu.auth_response, &mut seq)?;
        self.writer.set_seq(seq);
        if let Err(e) = self.authenticate(&cu.user, &token) {
            self.send_error(&e)?;
            return Ok(Flow::Close);
        }
        self.stmts.clear();
        self.end_backend();
        let host = self.host();
        match self.service.open(
            self.conn_id,
            &cu.user,
            &host,
            self.peer,
            cu.database.as_deref(),
        ) {
            Ok(b) => {
                self.backend = Some(b);
                self.user = cu.user;
                self.reply_ok(0, 0)?;
                Ok(Flow::Continue)
            }
            Err(e) => {
                self.send_error(&e)?;
                Ok(Flow::Close)
            }
        }
    }
}
