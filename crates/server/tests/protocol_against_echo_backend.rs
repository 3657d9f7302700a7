//! The protocol module served in-process over real TCP with the echo test backend, driven by
//! the `mysql` client crate and by hand-made packets. Checks wire behaviour independently of
//! the SQL layer.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use mysql::prelude::*;
use mysql::{Conn, OptsBuilder, Value as MyValue};
use tierdb_server::listener::{self, ListenerOptions, ListenerState};
use tierdb_server::protocol::testing::EchoService;

struct EchoServer {
    port: u16,
    state: Arc<ListenerState>,
}

impl EchoServer {
    fn start(opts: ListenerOptions) -> EchoServer {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let state = Arc::new(ListenerState::default());
        let st = state.clone();
        std::thread::spawn(move || listener::run(l, Arc::new(EchoService::default()), opts, st));
        EchoServer { port, state }
    }
    fn opts(&self, user: &str, pass: Option<&str>, db: Option<&str>) -> OptsBuilder {
        OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some(user))
            .pass(pass)
            .db_name(db)
            .prefer_socket(false)
            .max_allowed_packet(Some(64 << 20))
    }
    fn conn(&self) -> Conn {
        Conn::new(self.opts("root", None, Some("test"))).unwrap()
    }
}

impl Drop for EchoServer {
    fn drop(&mut self) {
        self.state.stop();
        self.state.wait_drained(Duration::from_secs(5));
    }
}

fn code_of(e: mysql::Error) -> u16 {
    match e {
        mysql::Error::MySqlError(e) => e.code,
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn text_result_sets_decode_to_typed_values() {
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = s.conn();
    let rows: Vec<mysql::Row> = c.query("rows 3").unwrap();
    assert_eq!(rows.len(), 3);
    let r = &rows[1];
    assert_eq!(r.get::<i64, _>("tiny"), Some(1));
    assert_eq!(r.get::<i64, _>("short"), Some(-1));
    assert_eq!(r.get::<i64, _>("longlong"), Some(1 << 40));
    assert_eq!(r.get::<f64, _>("float"), Some(1.5));
    assert_eq!(r.get::<f64, _>("double"), Some(0.25));
    assert_eq!(r.get::<String, _>("decimal").as_deref(), Some("1.25"));
    assert_eq!(r.get::<String, _>("char").as_deref(), Some("c1"));
    assert_eq!(r.get::<Option<String>, _>("varchar"), Some(None));
    assert_eq!(r.get::<Vec<u8>, _>("blob"), Some(vec![0, 1, 2, 1]));
    assert_eq!(r.get::<String, _>("date").as_deref(), Some("2024-01-02"));
    assert_eq!(
        r.get::<String, _>("datetime").as_deref(),
        Some("2024-01-02 03:04:01")
    );
    let echoed: Option<String> = c.query_first("echo héllo wörld").unwrap();
    assert_eq!(echoed.as_deref(), Some("héllo wörld"));
    let n = c.query_iter("anything else").unwrap().affected_rows();
    assert_eq!(n, "anything else".len() as u64);
    assert_eq!(code_of(c.query_drop("error 1146").unwrap_err()), 1146);
    c.ping().unwrap();
    c.select_db("db2").unwrap();
    assert_eq!(code_of(c.select_db("nope").unwrap_err()), 1049);
    c.query_drop("still fine").unwrap();
}

#[test]
fn prepared_statements_bind_every_parameter_type() {
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = s.conn();
    let stmt = c.prep("select ?, ?, ?, ?, ?, ?, ?, ?, ?").unwrap();
    for round in 0..3i64 {
        let params = vec![
            MyValue::Int(-5 - round),
            MyValue::UInt(u64::MAX),
            MyValue::Double(2.5),
            MyValue::Float(0.1),
            MyValue::Bytes(b"str".to_vec()),
            MyValue::NULL,
            MyValue::Date(2024, 2, 29, 0, 0, 0, 0),
            MyValue::Date(2024, 2, 29, 13, 5, 9, 250_000),
            MyValue::Time(true, 1, 2, 3, 4, 0),
        ];
        let row: mysql::Row = c.exec_first(&stmt, params).unwrap().unwrap();
        let got: Vec<Option<String>> = (0..9)
            .map(|i| row.get::<Option<String>, _>(i).unwrap())
            .collect();
        let want = [
            Some(format!("{}", -5 - round)),
            Some(u64::MAX.to_string()),
            Some("2.5".into()),
            Some("0.1".into()),
            Some("str".into()),
            None,
            Some("2024-02-29 00:00:00".into()),
            Some("2024-02-29 13:05:09.250000".into()),
            Some("-26:03:04".into()),
        ];
        assert_eq!(got, want);
    }
    // The binary result set path with every column kind.
    let stmt2 = c.prep("rows-via-prepare ?").unwrap();
    let row: mysql::Row = c.exec_first(&stmt2, (7,)).unwrap().unwrap();
    assert_eq!(row.get::<String, _>(0).as_deref(), Some("7"));
    c.close(stmt).unwrap();
    assert_eq!(code_of(c.prep("error in prepare").unwrap_err()), 1064);
    c.query_drop("after close").unwrap();
}

#[test]
fn logins_are_checked() {
    let s = EchoServer::start(ListenerOptions::default());
    Conn::new(s.opts("alice", Some("secret"), None)).unwrap();
    assert_eq!(
        code_of(Conn::new(s.opts("alice", Some("wrong"), None)).unwrap_err()),
        1045
    );
    assert_eq!(
        code_of(Conn::new(s.opts("alice", None, None)).unwrap_err()),
        1045
    );
    assert_eq!(
        code_of(Conn::new(s.opts("mallory", Some("x"), None)).unwrap_err()),
        1045
    );
    assert_eq!(
        code_of(Conn::new(s.opts("root", None, Some("nope"))).unwrap_err()),
        1049
    );
    let mut c = Conn::new(s.opts("root", None, Some("db2"))).unwrap();
    c.reset().unwrap();
    c.change_user(
        mysql::ChangeUserOpts::default()
            .with_user(Some("alice".into()))
            .with_pass(Some("secret".into())),
    )
    .unwrap();
    c.query_drop("works").unwrap();
}

#[test]
fn packets_over_16_mib_round_trip() {
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = s.conn();
    let big = "x".repeat(17 << 20);
    let got: Option<String> = c.query_first(format!("echo {big}")).unwrap();
    assert_eq!(got.map(|g| g.len()), Some(big.len()));
}

#[test]
fn connections_over_the_limit_get_error_1040() {
    let s = EchoServer::start(ListenerOptions {
        max_connections: 2,
        ..ListenerOptions::default()
    });
    let _a = s.conn();
    let _b = s.conn();
    assert_eq!(
        code_of(Conn::new(s.opts("root", None, None)).unwrap_err()),
        1040
    );
    drop(_a);
    // The slot frees once the first connection's thread has finished.
    for _ in 0..100 {
        if s.state.active() < 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    s.conn().query_drop("ok again").unwrap();
}

/// A minimal hand-driven client: handshake as root without CLIENT_DEPRECATE_EOF.
fn raw_login(port: u16, db: Option<&str>) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (greeting, _) = read_packet(&mut s);
    assert_eq!(greeting[0], 10);
    let mut caps: u32 = 1 | 4 | 512 | 8192 | 32768 | (1 << 19);
    if db.is_some() {
        caps |= 8;
    }
    let mut p = Vec::new();
    p.extend_from_slice(&caps.to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(b"root\0");
    p.push(0);
    if let Some(db) = db {
        p.extend_from_slice(db.as_bytes());
        p.push(0);
    }
    p.extend_from_slice(b"mysql_native_password\0");
    write_packet(&mut s, 1, &p);
    let (ok, seq) = read_packet(&mut s);
    assert_eq!((ok[0], seq), (0, 2), "login reply {ok:?}");
    s
}

fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) {
    let mut h = (payload.len() as u32).to_le_bytes();
    h[3] = seq;
    s.write_all(&h).unwrap();
    s.write_all(payload).unwrap();
}

fn read_packet(s: &mut TcpStream) -> (Vec<u8>, u8) {
    let mut h = [0u8; 4];
    s.read_exact(&mut h).unwrap();
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    let mut p = vec![0; len];
    s.read_exact(&mut p).unwrap();
    (p, h[3])
}

#[test]
fn field_list_ends_with_a_classic_eof_packet() {
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = raw_login(s.port, Some("test"));
    write_packet(&mut c, 0, b"\x04t\0");
    let (col1, _) = read_packet(&mut c);
    assert_eq!(&col1[..4], b"\x03def");
    assert_eq!(col1.last(), Some(&0xFB), "default value field");
    let _col2 = read_packet(&mut c);
    let (eof, seq) = read_packet(&mut c);
    assert_eq!(eof, [0xFE, 0, 0, 2, 0]);
    assert_eq!(seq, 3);
    // Unknown table: an error packet.
    write_packet(&mut c, 0, b"\x04nope\0");
    assert_eq!(read_packet(&mut c).0[0], 0xFF);
    // Unknown command: 1047, connection stays usable.
    write_packet(&mut c, 0, b"\x0a");
    let (e, _) = read_packet(&mut c);
    assert_eq!(&e[..3], &[0xFF, 0x17, 0x04]);
    write_packet(&mut c, 0, b"\x0e");
    assert_eq!(read_packet(&mut c).0[0], 0x00);
    // COM_STATISTICS is a bare string.
    write_packet(&mut c, 0, b"\x09");
    assert!(read_packet(&mut c).0.starts_with(b"Uptime"));
}

#[test]
fn garbage_and_oversized_packets_close_only_that_connection() {
    let s = EchoServer::start(ListenerOptions::default());
    // Garbage instead of a handshake response: an error or a close, never a hang.
    let mut g = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    g.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = read_packet(&mut g);
    g.write_all(b"\x05\x00\x00\x01hello").unwrap();
    let (e, _) = read_packet(&mut g);
    assert_eq!(e[0], 0xFF);
    // A command packet claiming more than max_allowed_packet: 1153 and close.
    let mut c = raw_login(s.port, None);
    c.write_all(&[0xFF, 0xFF, 0xFF, 0x00]).unwrap();
    c.write_all(&[3; 1000]).unwrap();
    // Nothing is read beyond the header; the limit here is 64 MiB, so send a chain that
    // exceeds it: 4 full chunks + one more.
    let chunk = vec![b'x'; 0xFF_FFFF];
    let mut rest = &chunk[1000..];
    let mut closed = false;
    for seq in 1u8..6 {
        if c.write_all(rest).is_err() || c.write_all(&[0xFF, 0xFF, 0xFF, seq]).is_err() {
            closed = true;
            break;
        }
        rest = &chunk[..];
    }
    if !closed {
        // The reply may be lost to the reset caused by the unread rest of the packet.
        let mut h = [0u8; 7];
        if c.read_exact(&mut h).is_ok() {
            assert_eq!(&h[4..7], &[0xFF, 0x81, 0x04], "error 1153");
        }
    }
    // The server still serves.
    s.conn().query_drop("still serving").unwrap();
}

#[test]
fn a_panicking_backend_drops_only_its_connection() {
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = s.conn();
    assert!(c.query_drop("panic").is_err());
    s.conn().query_drop("still serving").unwrap();
}

#[test]
fn packet_over_max_allowed_packet_gets_error_1153_then_close() {
    use tierdb_server::protocol;
    let service = EchoService {
        max_packet_bytes: Some(1024),
        ..EchoService::default()
    };
    let caps: u32 = 1 | 4 | 512 | 8192 | 32768;
    let mut login = caps.to_le_bytes().to_vec();
    login.extend_from_slice(&(16u32 << 20).to_le_bytes());
    login.push(45);
    login.extend_from_slice(&[0; 23]);
    login.extend_from_slice(b"root\0\0");
    let mut input = vec![login.len() as u8, 0, 0, 1];
    input.extend_from_slice(&login);
    input.extend_from_slice(&[0xD0, 0x07, 0, 0, 3]); // 2000-byte COM_QUERY header
    input.extend_from_slice(&[b'x'; 1999]);
    input.extend_from_slice(&[5, 0, 0, 0, 3, b'e', b'c', b'h', b'o']); // never read
    let mut out = Vec::new();
    let end = protocol::serve(
        &service,
        &input[..],
        &mut out,
        1,
        "127.0.0.1".parse().unwrap(),
        |_, _| {},
    );
    assert!(
        matches!(
            end,
            protocol::ConnEnd::Read(protocol::packet::ReadError::TooLarge { .. })
        ),
        "{end:?}"
    );
    // Greeting, OK, then the error as the last packet.
    let err_at =
        out.len() - (4 + 1 + 2 + 6 + "Got a packet bigger than 'max_allowed_packet' bytes".len());
    assert_eq!(&out[err_at + 4..err_at + 7], &[0xFF, 0x81, 0x04]);
    assert_eq!(
        out[err_at + 3],
        1,
        "sequence id follows the client's packet"
    );
}

#[test]
fn client_starting_with_another_plugin_is_switched_to_native_password() {
    use tierdb_server::protocol::handshake::native_token;
    let s = EchoServer::start(ListenerOptions::default());
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let (g, _) = read_packet(&mut c);
    let v_end = 1 + g[1..].iter().position(|&b| b == 0).unwrap();
    let part1 = &g[v_end + 5..v_end + 13];
    let part2 = &g[v_end + 13 + 1 + 2 + 1 + 2 + 2 + 1 + 10..][..12];
    let scramble: Vec<u8> = part1.iter().chain(part2).copied().collect();
    let caps: u32 = 1 | 4 | 512 | 8192 | 32768 | (1 << 19) | (1 << 21);
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(b"alice\0");
    p.push(32);
    p.extend_from_slice(&[0xAB; 32]);
    p.extend_from_slice(b"caching_sha2_password\0");
    write_packet(&mut c, 1, &p);
    let (switch, seq) = read_packet(&mut c);
    assert_eq!(seq, 2);
    assert!(
        switch.starts_with(b"\xFEmysql_native_password\0"),
        "{switch:?}"
    );
    let challenge = &switch[23..43];
    assert_eq!(challenge, &scramble[..]);
    write_packet(&mut c, 3, &native_token(challenge, b"secret"));
    let (ok, seq) = read_packet(&mut c);
    assert_eq!((ok[0], seq), (0, 4), "{}", String::from_utf8_lossy(&ok));
}
