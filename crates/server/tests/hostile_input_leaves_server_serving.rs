//! Garbage, truncated and oversized packets, a thousand idle connections and a client that
//! vanishes mid-transaction: afterwards the server still serves and committed data is intact.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::raw::{self, read_packet, write_packet};
use common::TestServer;

fn raise_fd_limit(want: u64) {
    // SAFETY: getrlimit/setrlimit only touch the struct we pass.
    unsafe {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < want {
            r.rlim_cur = want.min(r.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

fn fresh_client_sees(server: &TestServer, want_rows: i64) {
    let mut c = Conn::new(Opts::from_url(&server.url(Some("hostile"))).unwrap()).unwrap();
    let n: Option<i64> = c.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(n, Some(want_rows));
}

#[test]
fn hostile_input_leaves_server_serving() {
    raise_fd_limit(4096);
    let mut server = TestServer::start_with(&["--max-allowed-packet", "32M"]);
    let mut c = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    c.query_drop("CREATE DATABASE hostile").unwrap();
    c.query_drop("USE hostile").unwrap();
    c.query_drop("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v VARCHAR(20))")
        .unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 'one'), (2, 'two')")
        .unwrap();

    // 1. Garbage in place of the handshake response.
    for garbage in [
        &b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"[..],
        &[0xFF; 64][..],
        &[0, 0, 0, 1][..],
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let _ = read_packet(&mut s);
        let _ = s.write_all(garbage);
        let _ = s.shutdown(std::net::Shutdown::Write);
        let _ = read_packet(&mut s); // an error packet or EOF, never a hang
    }
    // Garbage commands after a good login.
    let mut s = raw::login(server.port, Some("hostile"));
    for cmd in [
        &[0x17u8, 1, 2][..],
        &[0x16][..],
        &[0xEE, 0xEE][..],
        &[0x04][..],
        &[0x1b, 9, 9][..],
        &[][..],
    ] {
        write_packet(&mut s, 0, cmd).unwrap();
        let (reply, _) = read_packet(&mut s).unwrap();
        assert!(
            matches!(reply[0], 0x00 | 0xFE | 0xFF),
            "command {cmd:?} got {reply:?}"
        );
    }
    assert_eq!(raw::query(&mut s, "SELECT 1")[0], 1);

    // 2. Truncated packets: a header promising more than is sent, then a close.
    for _ in 0..20 {
        let mut s = raw::login(server.port, None);
        let _ = s.write_all(&[100, 0, 0, 0, 3, b'S', b'E']);
        drop(s);
    }
    let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let _ = s.write_all(&[0x20]);
    drop(s);

    // 3. A 17 MiB query (multi-packet) gets a normal reply; a 40 MiB one exceeds
    //    max_allowed_packet (32M) and gets error 1153.
    let mut s = raw::login(server.port, Some("hostile"));
    let big = format!("SELECT '{}'", "x".repeat(17 << 20));
    let reply = raw::query(&mut s, &big);
    assert!(
        reply[0] == 1 || reply[0] == 0xFF,
        "17 MiB query reply {:?}",
        &reply[..reply.len().min(16)]
    );
    assert_eq!(raw::query(&mut s, "SELECT 1")[0], 1);
    let huge = vec![b'x'; 40 << 20];
    let mut p = vec![3u8];
    p.extend_from_slice(&huge);
    let sent = write_packet(&mut s, 0, &p).is_ok();
    // The server replies 1153 and closes; the reply can be lost to the TCP reset caused by
    // the unread rest of the packet, so only a reply that did arrive is checked.
    if sent {
        if let Ok((e, _)) = read_packet(&mut s) {
            assert_eq!(
                &e[..3],
                &[0xFF, 0x81, 0x04],
                "{}",
                String::from_utf8_lossy(&e)
            );
        }
    }

    // 4. A thousand idle, logged-in connections.
    let idle: Vec<TcpStream> = (0..1000).map(|_| raw::login(server.port, None)).collect();
    fresh_client_sees(&server, 2);

    // 5. A client vanishing mid-transaction: its insert is rolled back and its lock freed.
    let mut v = raw::login(server.port, Some("hostile"));
    assert_eq!(raw::query(&mut v, "BEGIN")[0], 0);
    assert_eq!(
        raw::query(&mut v, "INSERT INTO t VALUES (3, 'uncommitted')")[0],
        0
    );
    assert_eq!(
        raw::query(&mut v, "UPDATE t SET v = 'changed' WHERE id = 1")[0],
        0
    );
    drop(v);
    drop(idle);
    std::thread::sleep(Duration::from_millis(300));
    let mut c = Conn::new(Opts::from_url(&server.url(Some("hostile"))).unwrap()).unwrap();
    c.query_drop("SET SESSION innodb_lock_wait_timeout = 5")
        .ok();
    let rows: Vec<(i64, String)> = c.query("SELECT id, v FROM t ORDER BY id").unwrap();
    assert_eq!(rows, vec![(1, "one".to_string()), (2, "two".to_string())]);
    c.query_drop("UPDATE t SET v = 'uno' WHERE id = 1").unwrap();
    c.query_drop("INSERT INTO t VALUES (3, 'three')").unwrap();
    fresh_client_sees(&server, 3);
    assert!(server.is_running(), "server died:\n{}", server.log());
    assert!(
        !server.log().contains("panicked"),
        "a connection panicked:\n{}",
        server.log()
    );
}
