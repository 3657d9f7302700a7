//! LOAD DATA and SELECT ... INTO OUTFILE seen from clients: a Rust driver streaming a large
//! file, clients that refuse to send files or vanish in the middle of one, and the limits on
//! server-side files (FILE privilege, `secure_file_priv`, `local_infile`). What the statements
//! print is compared with MariaDB's in `sql_scripts_print_what_mariadb_printed.rs`.

mod common;

use std::io::Write;
use std::time::{Duration, Instant};

use common::raw::{login, login_with_caps, query, read_packet, write_packet};
use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, LocalInfileHandler, Opts, OptsBuilder};

const CLIENT_LOCAL_FILES: u32 = 128;

fn connect(server: &TestServer) -> Conn {
    Conn::new(Opts::from_url(&server.url(None)).unwrap()).expect("connect")
}

fn error_code(reply: &[u8]) -> Option<u16> {
    (reply.first() == Some(&0xFF)).then(|| u16::from_le_bytes([reply[1], reply[2]]))
}

/// A driver streams 200 000 generated rows (about 12 MiB, many protocol packets) in one
/// statement: every row arrives, the @variable and SET columns are computed per row, and
/// the OK packet's info line counts them.
#[test]
fn a_driver_streams_a_large_file_and_every_row_arrives() {
    let server = TestServer::start();
    let mut c = connect(&server);
    c.query_drop("CREATE DATABASE big").unwrap();
    c.query_drop(
        "CREATE TABLE big.t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(40), twice BIGINT, KEY (k))",
    )
    .unwrap();
    const ROWS: u64 = 200_000;
    let opts = OptsBuilder::from_opts(Opts::from_url(&server.url(Some("big"))).unwrap())
        .local_infile_handler(Some(LocalInfileHandler::new(|name, out| {
            assert_eq!(name, b"generated.tsv");
            let mut buf = Vec::with_capacity(1 << 16);
            for i in 1..=ROWS {
                writeln!(buf, "{i}\t{}\tvalue-{i:030}", (i * 7919) % 1000).unwrap();
                if buf.len() > 60_000 {
                    out.write_all(&buf)?;
                    buf.clear();
                }
            }
            out.write_all(&buf)
        })));
    let mut d = Conn::new(opts).expect("connect with a handler");
    let started = Instant::now();
    d.query_drop(
        "LOAD DATA LOCAL INFILE 'generated.tsv' INTO TABLE t (id, @k, c) SET k = @k, twice = @k * 2",
    )
    .expect("load");
    let info = String::from_utf8_lossy(d.info_ref()).into_owned();
    assert_eq!(
        info,
        format!("Records: {ROWS}  Deleted: 0  Skipped: 0  Warnings: 0")
    );
    assert_eq!(d.affected_rows(), ROWS);
    eprintln!("{ROWS} rows in {:?}", started.elapsed());
    let (n, sum_k, bad): (u64, u64, u64) = c
        .query_first("SELECT COUNT(*), SUM(k), SUM(twice <> 2 * k) FROM big.t")
        .unwrap()
        .unwrap();
    let want: u64 = (1..=ROWS).map(|i| (i * 7919) % 1000).sum();
    assert_eq!((n, sum_k, bad), (ROWS, want, 0));
    // The secondary index holds every row too (read through it, then through the table).
    let by_index: u64 = c
        .query_first("SELECT COUNT(*) FROM big.t WHERE k BETWEEN 0 AND 999")
        .unwrap()
        .unwrap();
    assert_eq!(by_index, ROWS);
    let last: String = c
        .query_first("SELECT c FROM big.t WHERE id = 200000")
        .unwrap()
        .unwrap();
    assert_eq!(last, format!("value-{ROWS:030}"));
    // The @variable keeps the last row's value (as text, as MariaDB).
    let k: String = d.query_first("SELECT @k").unwrap().unwrap();
    assert_eq!(k, ((ROWS * 7919) % 1000).to_string());
}

/// A client that did not offer CLIENT_LOCAL_FILES is never asked for a file: 4166, and the
/// connection goes on.
#[test]
fn a_client_that_does_not_send_files_gets_4166_and_goes_on() {
    let server = TestServer::start();
    let mut s = login(server.port, None);
    assert_eq!(error_code(&query(&mut s, "CREATE DATABASE l")), None);
    assert_eq!(error_code(&query(&mut s, "CREATE TABLE l.t (a INT)")), None);
    let reply = query(
        &mut s,
        "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE l.t",
    );
    assert_eq!(error_code(&reply), Some(4166), "{reply:?}");
    assert_eq!(error_code(&query(&mut s, "SELECT 1")), None);
}

/// A client that sends part of its file and then disconnects: the statement is rolled back
/// (no row of it is visible), the server keeps serving, and a later load works.
#[test]
fn a_client_vanishing_mid_file_commits_nothing_and_others_go_on() {
    let server = TestServer::start();
    let mut c = connect(&server);
    c.query_drop("CREATE DATABASE v").unwrap();
    c.query_drop("CREATE TABLE v.t (id INT PRIMARY KEY, s VARCHAR(20))")
        .unwrap();
    let mut s = login_with_caps(server.port, None, CLIENT_LOCAL_FILES);
    let mut q = vec![3u8];
    q.extend_from_slice(b"LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE v.t");
    write_packet(&mut s, 0, &q).unwrap();
    let (ask, seq) = read_packet(&mut s).unwrap();
    assert_eq!(ask[0], 0xFB, "the server asks for the file: {ask:?}");
    assert_eq!(&ask[1..], b"rows.tsv");
    let mut seq = seq.wrapping_add(1);
    for chunk in 0..20 {
        let mut data = Vec::new();
        for i in 0..500 {
            writeln!(data, "{}\trow", chunk * 500 + i).unwrap();
        }
        write_packet(&mut s, seq, &data).unwrap();
        seq = seq.wrapping_add(1);
    }
    // Half a line, then the client is gone.
    write_packet(&mut s, seq, b"99999\tha").unwrap();
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let busy: Vec<(u64, String)> = c
            .query("SELECT ID, COMMAND FROM information_schema.PROCESSLIST WHERE INFO LIKE 'LOAD DATA%'")
            .unwrap();
        if busy.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the load still runs: {busy:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let n: u64 = c.query_first("SELECT COUNT(*) FROM v.t").unwrap().unwrap();
    assert_eq!(n, 0, "a load whose client vanished left rows");
    // The server serves, and a complete file loads.
    let mut s = login_with_caps(server.port, None, CLIENT_LOCAL_FILES);
    let mut q = vec![3u8];
    q.extend_from_slice(b"LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE v.t");
    write_packet(&mut s, 0, &q).unwrap();
    let (ask, seq) = read_packet(&mut s).unwrap();
    assert_eq!(ask[0], 0xFB);
    write_packet(&mut s, seq.wrapping_add(1), b"1\tone\n2\ttwo\n").unwrap();
    write_packet(&mut s, seq.wrapping_add(2), b"").unwrap();
    let (ok, ok_seq) = read_packet(&mut s).unwrap();
    assert_eq!(ok[0], 0, "{}", String::from_utf8_lossy(&ok));
    assert_eq!(
        ok_seq,
        seq.wrapping_add(3),
        "the reply follows the file's packets"
    );
    assert_eq!(error_code(&query(&mut s, "SELECT 1")), None);
    let n: u64 = c.query_first("SELECT COUNT(*) FROM v.t").unwrap().unwrap();
    assert_eq!(n, 2);
}

/// A client that stops sending its file without closing the connection: after the 30 s
/// read timeout of the exchange (not the 8 hours of `wait_timeout`) the connection ends, the
/// statement is rolled back and its row locks are free.
#[test]
fn a_client_stalling_mid_file_is_dropped_after_the_read_timeout() {
    let server = TestServer::start();
    let mut c = connect(&server);
    c.query_drop("CREATE DATABASE st").unwrap();
    c.query_drop("CREATE TABLE st.t (id INT PRIMARY KEY, s VARCHAR(20))")
        .unwrap();
    let mut s = login_with_caps(server.port, None, CLIENT_LOCAL_FILES);
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut q = vec![3u8];
    q.extend_from_slice(b"LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE st.t");
    write_packet(&mut s, 0, &q).unwrap();
    let (ask, seq) = read_packet(&mut s).unwrap();
    assert_eq!(ask[0], 0xFB);
    write_packet(&mut s, seq.wrapping_add(1), b"1\tone\n2\ttwo\n").unwrap();
    let started = Instant::now();
    // The connection ends on the server's side: the socket reads its end.
    let end = read_packet(&mut s);
    let waited = started.elapsed();
    assert!(
        end.is_err(),
        "the server replied instead of ending: {end:?}"
    );
    assert!(
        (Duration::from_secs(25)..Duration::from_secs(90)).contains(&waited),
        "dropped after {waited:?}"
    );
    let n: u64 = c.query_first("SELECT COUNT(*) FROM st.t").unwrap().unwrap();
    assert_eq!(n, 0);
    // The rows it had locked are free.
    c.query_drop("INSERT INTO st.t VALUES (1, 'mine')").unwrap();
}

/// A load that fails in the middle (strict mode, a server-side file) leaves no row behind
/// and the connection keeps its place in the protocol; with LOCAL the client's whole file
/// is read even when the statement failed early (here: a lock wait timeout).
#[test]
fn a_failing_load_leaves_no_rows_and_the_stream_in_step() {
    let server = TestServer::start();
    let mut c = connect(&server);
    c.query_drop("CREATE DATABASE f").unwrap();
    c.query_drop("CREATE TABLE f.t (id INT PRIMARY KEY, n INT NOT NULL)")
        .unwrap();
    let file = server.dir.path().join("rows.tsv");
    let mut data = String::new();
    for i in 1..=1000 {
        data.push_str(&format!("{i}\t{i}\n"));
    }
    data.push_str("1001\tnot a number\n");
    std::fs::write(&file, &data).unwrap();
    let e = c
        .query_drop(format!(
            "LOAD DATA INFILE '{}' INTO TABLE f.t",
            file.display()
        ))
        .unwrap_err();
    assert!(e.to_string().contains("1366"), "{e}");
    let n: u64 = c.query_first("SELECT COUNT(*) FROM f.t").unwrap().unwrap();
    assert_eq!(n, 0);
    // A row another transaction holds: the LOCAL load waits, times out, and the client's
    // remaining packets are read before the error goes back.
    c.query_drop("INSERT INTO f.t VALUES (500, 0)").unwrap();
    let mut holder = connect(&server);
    holder.query_drop("BEGIN").unwrap();
    holder
        .query_drop("SELECT * FROM f.t WHERE id = 500 FOR UPDATE")
        .unwrap();
    let big = data.replace("1001\tnot a number\n", "");
    let opts = OptsBuilder::from_opts(Opts::from_url(&server.url(Some("f"))).unwrap())
        .local_infile_handler(Some(LocalInfileHandler::new(move |_, out| {
            for _ in 0..50 {
                out.write_all(big.as_bytes())?;
            }
            Ok(())
        })));
    let mut d = Conn::new(opts).unwrap();
    c.query_drop("SET GLOBAL innodb_lock_wait_timeout = 1")
        .unwrap();
    let e = d
        .query_drop("LOAD DATA LOCAL INFILE 'x' REPLACE INTO TABLE t")
        .unwrap_err();
    assert!(e.to_string().contains("1205"), "{e}");
    let one: u64 = d.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1, "the connection is still in step");
    holder.query_drop("ROLLBACK").unwrap();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM f.t").unwrap().unwrap();
    assert_eq!(n, 1);
}

/// Server-side files: FILE is needed (1227), only paths under `secure_file_priv` are read
/// or written (1290), and `SET GLOBAL local_infile = OFF` refuses LOCAL (4166).
#[test]
fn server_files_need_file_privilege_and_stay_under_secure_file_priv() {
    let allowed = tempfile::tempdir().unwrap();
    let dir = allowed.path().display().to_string();
    let server = TestServer::start_with(&["--secure-file-priv", &dir]);
    let mut c = connect(&server);
    let shown: String = c.query_first("SELECT @@secure_file_priv").unwrap().unwrap();
    assert_eq!(
        shown,
        std::fs::canonicalize(allowed.path())
            .unwrap()
            .display()
            .to_string()
    );
    c.query_drop("CREATE DATABASE p").unwrap();
    c.query_drop("CREATE TABLE p.t (id INT PRIMARY KEY, s VARCHAR(10))")
        .unwrap();
    c.query_drop("INSERT INTO p.t VALUES (1, 'a'), (2, NULL)")
        .unwrap();
    c.query_drop(format!("SELECT * FROM p.t INTO OUTFILE '{dir}/out.txt'"))
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(allowed.path().join("out.txt")).unwrap(),
        "1\ta\n2\t\\N\n"
    );
    let outside = server.dir.path().join("outside.txt");
    std::fs::write(&outside, "3\tc\n").unwrap();
    for sql in [
        format!("LOAD DATA INFILE '{}' INTO TABLE p.t", outside.display()),
        format!("SELECT * FROM p.t INTO OUTFILE '{}.new'", outside.display()),
        // A path that climbs out of the folder.
        format!("LOAD DATA INFILE '{dir}/../outside.txt' INTO TABLE p.t"),
    ] {
        let e = c.query_drop(&sql).unwrap_err();
        assert!(e.to_string().contains("1290"), "{sql}: {e}");
    }
    // A query that fails while its file is written leaves no file behind: the same
    // statement, fixed, can make it.
    let e = c
        .query_drop(format!(
            "SELECT id, (SELECT 1 UNION SELECT 2) FROM p.t INTO OUTFILE '{dir}/failed.txt'"
        ))
        .unwrap_err();
    assert!(e.to_string().contains("1242"), "{e}");
    assert!(!allowed.path().join("failed.txt").exists());
    c.query_drop(format!(
        "SELECT id FROM p.t INTO OUTFILE '{dir}/failed.txt'"
    ))
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(allowed.path().join("failed.txt")).unwrap(),
        "1\n2\n"
    );
    // LOAD_FILE reads under the folder only (NULL elsewhere, as MariaDB).
    let inside: Option<String> = c
        .query_first(format!("SELECT LOAD_FILE('{dir}/out.txt')"))
        .unwrap()
        .unwrap();
    assert_eq!(inside.as_deref(), Some("1\ta\n2\t\\N\n"));
    let outside_read: Option<String> = c
        .query_first(format!("SELECT LOAD_FILE('{}')", outside.display()))
        .unwrap()
        .unwrap();
    assert_eq!(outside_read, None);
    c.query_drop("TRUNCATE p.t").unwrap();
    c.query_drop(format!("LOAD DATA INFILE '{dir}/out.txt' INTO TABLE p.t"))
        .unwrap();
    let n: u64 = c.query_first("SELECT COUNT(*) FROM p.t").unwrap().unwrap();
    assert_eq!(n, 2);
    // An account without FILE.
    c.query_drop("CREATE USER app@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    c.query_drop("GRANT SELECT, INSERT ON p.* TO app@'%'")
        .unwrap();
    let mut app =
        Conn::new(Opts::from_url(&format!("mysql://app:pw@127.0.0.1:{}/p", server.port)).unwrap())
            .unwrap();
    for sql in [
        format!("LOAD DATA INFILE '{dir}/out.txt' INTO TABLE t"),
        format!("SELECT * FROM t INTO OUTFILE '{dir}/app.txt'"),
    ] {
        let e = app.query_drop(&sql).unwrap_err();
        assert!(e.to_string().contains("1227"), "{sql}: {e}");
    }
    // LOCAL needs INSERT only; REPLACE needs DELETE too.
    let e = app
        .query_drop("LOAD DATA LOCAL INFILE 'x' REPLACE INTO TABLE t")
        .unwrap_err();
    assert!(e.to_string().contains("1142"), "{e}");
    // local_infile off: LOCAL refused before any file is asked for.
    c.query_drop("SET GLOBAL local_infile = OFF").unwrap();
    let mut s = login_with_caps(server.port, None, CLIENT_LOCAL_FILES);
    let reply = query(&mut s, "LOAD DATA LOCAL INFILE 'x' INTO TABLE p.t");
    assert_eq!(error_code(&reply), Some(4166), "{reply:?}");
    c.query_drop("SET GLOBAL local_infile = ON").unwrap();
    let com_load: (String, u64) = c
        .query_first("SHOW GLOBAL STATUS LIKE 'Com_load'")
        .unwrap()
        .unwrap();
    assert!(com_load.1 >= 3, "{com_load:?}");
}
