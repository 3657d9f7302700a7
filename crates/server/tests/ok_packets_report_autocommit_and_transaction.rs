//! The status flags of every OK packet say whether autocommit is on and whether a
//! transaction is open, as MariaDB's do. Drivers act on them: PyMySQL (and Django through
//! it) sends `SET autocommit = 1` only when the last packet says autocommit is off, so a
//! server that always said "on" left such a session in an open transaction that its next
//! ROLLBACK undid.

mod common;

use common::{raw, TestServer};

const AUTOCOMMIT: u16 = 2;
const IN_TRANS: u16 = 1;

/// The status flags of an OK packet (affected rows and insert id below 251: one byte each).
fn status_of(ok: &[u8], sql: &str) -> u16 {
    assert_eq!(ok[0], 0, "{sql}: not OK: {}", String::from_utf8_lossy(ok));
    assert!(ok[1] < 251 && ok[2] < 251, "{sql}: long counts in {ok:?}");
    u16::from_le_bytes([ok[3], ok[4]]) & (AUTOCOMMIT | IN_TRANS)
}

#[test]
fn ok_packets_follow_autocommit_and_open_transactions() {
    let server = TestServer::start();
    let mut s = raw::login(server.port, None);
    // (statement, flags MariaDB 10.11 reports after it)
    let steps: &[(&str, u16)] = &[
        ("CREATE DATABASE flags", AUTOCOMMIT),
        ("CREATE TABLE flags.t (a INT PRIMARY KEY)", AUTOCOMMIT),
        ("SET autocommit = 0", 0),
        ("INSERT INTO flags.t VALUES (1)", IN_TRANS),
        ("COMMIT", 0),
        ("INSERT INTO flags.t VALUES (2)", IN_TRANS),
        ("ROLLBACK", 0),
        ("SET autocommit = 1", AUTOCOMMIT),
        ("BEGIN", AUTOCOMMIT | IN_TRANS),
        ("INSERT INTO flags.t VALUES (3)", AUTOCOMMIT | IN_TRANS),
        ("COMMIT", AUTOCOMMIT),
        ("START TRANSACTION", AUTOCOMMIT | IN_TRANS),
        ("ROLLBACK", AUTOCOMMIT),
        // Autocommit off, then on again: turning it on commits what was open.
        ("SET autocommit = 0", 0),
        ("INSERT INTO flags.t VALUES (4)", IN_TRANS),
        ("SET autocommit = 1", AUTOCOMMIT),
    ];
    for (sql, want) in steps {
        let ok = raw::query(&mut s, sql);
        assert_eq!(status_of(&ok, sql), *want, "flags after {sql}");
    }
    // What was committed is what another session sees: 1, 3 and 4 (2 was rolled back).
    let mut other = raw::login(server.port, None);
    let ok = raw::query(&mut other, "DELETE FROM flags.t WHERE a IN (1, 3, 4)");
    assert_eq!(ok[1], 3, "rows committed by the first session: {ok:?}");
}

/// The greeting offers SESSION_TRACK (Node's mysql2 reads an OK packet's info as
/// length-encoded, which is how tierdb and MariaDB always write it, only when that was
/// agreed; otherwise it showed the length byte as part of the text) and MULTI_STATEMENTS.
#[test]
fn the_greeting_offers_session_track_and_multi_statements() {
    let server = TestServer::start();
    let mut s = std::net::TcpStream::connect(("127.0.0.1", server.port)).expect("connect");
    let (g, _) = raw::read_packet(&mut s).expect("greeting");
    assert_eq!(g[0], 10);
    let version_end = 1 + g[1..].iter().position(|&c| c == 0).expect("version") + 1;
    // Connection id (4), scramble part 1 (8), filler (1): then the lower capability bytes;
    // charset (1) and status (2) before the upper ones.
    let lo = u16::from_le_bytes([g[version_end + 13], g[version_end + 14]]);
    let hi = u16::from_le_bytes([g[version_end + 18], g[version_end + 19]]);
    let caps = u32::from(lo) | u32::from(hi) << 16;
    assert_ne!(caps & (1 << 23), 0, "SESSION_TRACK in {caps:#x}");
    assert_ne!(caps & (1 << 16), 0, "MULTI_STATEMENTS in {caps:#x}");
    // A multi-row INSERT's OK: the info is length-encoded.
    let mut c = raw::login(server.port, None);
    for sql in ["CREATE DATABASE g", "CREATE TABLE g.t (a INT)"] {
        assert_eq!(raw::query(&mut c, sql)[0], 0, "{sql}");
    }
    let ok = raw::query(&mut c, "INSERT INTO g.t VALUES (1), (2)");
    let info = b"Records: 2  Duplicates: 0  Warnings: 0";
    assert_eq!(ok[7] as usize, info.len(), "{ok:?}");
    assert_eq!(&ok[8..], info);
}
