//! The binary log, proved with MariaDB's own tools: a real `tierdb serve --log-bin` takes a
//! mixed workload; the real `mariadb-binlog` reads its files and the output, piped into a real
//! MariaDB 10.11 server, rebuilds the same tables (point-in-time recovery, a replica's
//! catch-up). Also: a SIGKILL mid-workload leaves the log holding exactly the committed
//! transactions (it is made durable by the redo log), restarts start a new file and continue
//! the GTID sequence, and the SQL statements about the log answer as MariaDB's do. A real
//! MariaDB replica (`CHANGE MASTER TO` tierdb) follows tierdb through rotations and restarts.

mod common;

use common::mariadb_server::ScratchMariadb;
use common::{run_program, TestServer};
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn connect(port: u16) -> Conn {
    Conn::new(Opts::from_url(&format!("mysql://root@127.0.0.1:{port}/")).unwrap()).expect("connect")
}

fn run(c: &mut Conn, sql: &str) {
    c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The binary log files of `server`, oldest first (from SHOW BINARY LOGS).
fn log_files(server: &TestServer) -> Vec<PathBuf> {
    let mut c = connect(server.port);
    let names: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").expect("SHOW BINARY LOGS");
    names
        .into_iter()
        .map(|(n, _)| server.dir.path().join("binlog").join(n))
        .collect()
}

/// `mariadb-binlog FILES > out`; the output file.
fn decode(server: &TestServer, files: &[PathBuf], extra: &[&str]) -> PathBuf {
    assert!(
        common::exists("/usr/bin/mariadb-binlog"),
        "mariadb-binlog is missing: run scripts/setup.sh"
    );
    let out = server
        .dir
        .path()
        .join(format!("replay-{}.sql", extra.len()));
    let mut args: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    args.push(format!("--result-file={}", out.display()));
    args.extend(files.iter().map(|f| f.display().to_string()));
    let (ok, stdout, err) = run_program("/usr/bin/mariadb-binlog", &args, Duration::from_secs(60));
    assert!(ok, "mariadb-binlog failed: {err}\n{stdout}");
    out
}

/// Every row of `db.table` as the `mariadb` client prints it, ordered by the first column.
fn rows_of(port: u16, db: &str, table: &str, via_mariadb: Option<&ScratchMariadb>) -> String {
    let sql = format!("SELECT * FROM `{db}`.`{table}` ORDER BY 1");
    let (ok, out, err) = match via_mariadb {
        Some(m) => m.sql(&sql),
        None => run_program(
            common::MARIADB,
            &[
                "-h127.0.0.1".into(),
                format!("-P{port}"),
                "-uroot".into(),
                "--batch".into(),
                "-e".into(),
                sql.clone(),
            ],
            Duration::from_secs(60),
        ),
    };
    assert!(ok, "{sql}: {err}");
    out
}

/// A fresh tierdb that has applied `replay` (mariadb-binlog's output) with the `mariadb`
/// client: BINLOG statements and all.
fn replayed_into_tierdb(replay: &std::path::Path) -> TestServer {
    let copy = TestServer::start();
    let (ok, out, err) = run_program(
        "/bin/sh",
        &[
            "-c".into(),
            format!(
                "{} -h127.0.0.1 -P{} -uroot --batch --max-allowed-packet=1G < '{}'",
                common::MARIADB,
                copy.port,
                replay.display()
            ),
        ],
        Duration::from_secs(120),
    );
    assert!(ok, "tierdb refused the replayed binary log: {err}\n{out}");
    copy
}

/// Four connections writing `w.t` (id, k, pad) until `stop`: inserts, and every fifth
/// statement an UPDATE of a seventh of the rows. Each returns how many statements it ran;
/// `until_error`: a failed statement ends the writer (the server went away) rather than the
/// test.
fn start_writers(
    port: u16,
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    until_error: bool,
) -> Vec<std::thread::JoinHandle<u64>> {
    (0..4)
        .map(|w| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut c = connect(port);
                let mut n = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let sql = if n % 5 == 4 {
                        format!("UPDATE w.t SET k = k + 1 WHERE id % 7 = {w}")
                    } else {
                        format!(
                            "INSERT INTO w.t (k, pad) VALUES ({n}, REPEAT('p', {}))",
                            n % 100
                        )
                    };
                    match c.query_drop(&sql) {
                        Ok(()) => n += 1,
                        Err(_) if until_error => break,
                        Err(e) => panic!("{sql}: {e}"),
                    }
                }
                n
            })
        })
        .collect()
}

/// Panics showing the first lines that differ (tables can be long).
fn same_rows(got: &str, want: &str, what: &str) {
    if got == want {
        return;
    }
    let g: Vec<&str> = got.lines().collect();
    let w: Vec<&str> = want.lines().collect();
    let first = g
        .iter()
        .zip(&w)
        .position(|(a, b)| a != b)
        .unwrap_or(g.len().min(w.len()));
    panic!(
        "{what}: {} rows against {} expected; first difference at line {first}: got {:?}, expected {:?}",
        g.len(),
        w.len(),
        g.get(first..(first + 3).min(g.len())),
        w.get(first..(first + 3).min(w.len()))
    );
}

#[test]
fn a_mariadb_server_replaying_the_binary_log_ends_with_the_same_tables() {
    let server = TestServer::start_with(&["--log-bin"]);
    let mut c = connect(server.port);
    let blob = "x".repeat(70_000);
    let statements = vec![
        "CREATE DATABASE app".to_string(),
        "USE app".into(),
        "CREATE TABLE kinds (id INT PRIMARY KEY AUTO_INCREMENT, ti TINYINT, su SMALLINT UNSIGNED,
            mi MEDIUMINT, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dc DECIMAL(12,3),
            du DECIMAL(30,10) UNSIGNED, c CHAR(5), v VARCHAR(300), t MEDIUMTEXT, b BLOB, bn BINARY(3),
            vb VARBINARY(10), dt DATE, dtm DATETIME(6), ts TIMESTAMP(3) NULL, y YEAR, bt BIT(10),
            tm TIME(2), st SET('a','b','c'), en ENUM('x','y','z'), j JSON)"
            .into(),
        "INSERT INTO kinds VALUES (NULL, -128, 65535, -8388608, -9223372036854775808,
            18446744073709551615, 1.5, -2.25, '-123456789.125', '12345678901234567890.0123456789',
            'héllo', 'ab€', 'text', x'00ff', 'ab', x'0102', '2024-02-29',
            '9999-12-31 23:59:59.999999', '2024-01-02 03:04:05.678', 2155, b'1010101010',
            '-838:59:59.99', 'a,c', 'z', '{\"a\": [1, 2]}')"
            .into(),
        "INSERT INTO kinds (id) VALUES (NULL), (NULL)".into(),
        format!("UPDATE kinds SET t = '{blob}', v = '' WHERE id = 2"),
        "UPDATE kinds SET id = 10 WHERE id = 3".into(),
        "CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20))".into(),
        "CREATE TABLE child (id INT PRIMARY KEY, pid INT, KEY (pid),
            FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)"
            .into(),
        "INSERT INTO parent VALUES (1, 'one'), (2, 'two')".into(),
        "INSERT INTO child VALUES (10, 1), (11, 1), (20, 2)".into(),
        // The cascade's rows are the replica's engine's to delete.
        "DELETE FROM parent WHERE id = 1".into(),
        // A transaction with a statement rolled back to a savepoint, and one rolled back.
        "BEGIN".into(),
        "INSERT INTO parent VALUES (3, 'three')".into(),
        "SAVEPOINT s".into(),
        "INSERT INTO parent VALUES (4, 'four')".into(),
        "ROLLBACK TO SAVEPOINT s".into(),
        "UPDATE parent SET name = 'TWO' WHERE id = 2".into(),
        "COMMIT".into(),
        "BEGIN".into(),
        "INSERT INTO parent VALUES (5, 'five')".into(),
        "ROLLBACK".into(),
        // A failing statement changes nothing.
        "INSERT INTO parent VALUES (6, 'six'), (2, 'dup')".into(),
        // TEMPORARY tables stay out of the log; what is copied from them does not.
        "CREATE TEMPORARY TABLE scratch (id INT PRIMARY KEY, name VARCHAR(20))".into(),
        "INSERT INTO scratch VALUES (7, 'seven'), (8, 'eight')".into(),
        "INSERT INTO parent SELECT * FROM scratch".into(),
        "DROP TEMPORARY TABLE scratch".into(),
        "FLUSH BINARY LOGS".into(),
        "CREATE TABLE copy AS SELECT id, name FROM parent WHERE id > 2".into(),
        "ALTER TABLE copy ADD COLUMN note VARCHAR(10) DEFAULT 'n'".into(),
        "INSERT INTO copy VALUES (9, 'nine', 'late')".into(),
        "CREATE TABLE gone (id INT PRIMARY KEY)".into(),
        "INSERT INTO gone VALUES (1)".into(),
        "TRUNCATE TABLE gone".into(),
        "INSERT INTO gone VALUES (2)".into(),
        "RENAME TABLE gone TO kept".into(),
        "CREATE TABLE dropped (id INT PRIMARY KEY)".into(),
        "DROP TABLE dropped".into(),
        // A list that fails on its second name still dropped the first (logged so).
        "CREATE TABLE half (id INT PRIMARY KEY)".into(),
        "DROP TABLE half, no_such_table".into(),
        // A key change is one update for the log: the replica's ON UPDATE CASCADE follows it.
        "CREATE TABLE p2 (id INT PRIMARY KEY)".into(),
        "CREATE TABLE c2 (id INT PRIMARY KEY, pid INT, KEY (pid), FOREIGN KEY (pid)
            REFERENCES p2 (id) ON DELETE CASCADE ON UPDATE CASCADE)"
            .into(),
        "INSERT INTO p2 VALUES (3), (4)".into(),
        "INSERT INTO c2 VALUES (3, 3), (4, 4)".into(),
        "UPDATE p2 SET id = 30 WHERE id = 3".into(),
        // A prepared DDL statement that fails leaves nothing for the next one to log.
        "CREATE TABLE pt (id INT PRIMARY KEY)".into(),
        "PREPARE s FROM 'ALTER TABLE pt ADD COLUMN c INT'".into(),
        "DROP TABLE pt".into(),
        "EXECUTE s".into(),
        "CREATE TABLE newtab (id INT PRIMARY KEY)".into(),
        "INSERT INTO newtab VALUES (1)".into(),
        // Rows without a primary key are found by their bytes ('A' is not 'a').
        "CREATE TABLE nopk (v VARCHAR(5), w INT)".into(),
        "INSERT INTO nopk VALUES ('A', 1), ('a', 1), ('b ', 2)".into(),
        "DELETE FROM nopk WHERE v = BINARY 'a'".into(),
        "UPDATE nopk SET w = 3 WHERE v = BINARY 'b '".into(),
        // A list naming a TEMPORARY table too is logged without it.
        "CREATE TEMPORARY TABLE tmpy (id INT)".into(),
        "CREATE TABLE dropme (id INT PRIMARY KEY)".into(),
        "DROP TABLE tmpy, dropme".into(),
        // Not logged: this session turned sql_log_bin off.
        "SET SESSION sql_log_bin = 0".into(),
        "INSERT INTO parent VALUES (100, 'unlogged')".into(),
        "SET SESSION sql_log_bin = 1".into(),
        "DELETE FROM kinds WHERE id = 1".into(),
    ];
    for s in &statements {
        let r = c.query_drop(s);
        if s.contains("'dup'") || s.contains("no_such_table") || s == "EXECUTE s" {
            assert!(r.is_err(), "{s} must fail");
        } else {
            r.unwrap_or_else(|e| panic!("{}: {e}", &s[..s.len().min(200)]));
        }
    }
    // Prepared statements (binary protocol) are logged the same way.
    let stmt = c.prep("INSERT INTO kept VALUES (?)").unwrap();
    c.exec_drop(&stmt, (3,)).unwrap();

    // The statements about the log.
    let files = log_files(&server);
    assert_eq!(
        files.len(),
        2,
        "one file, then one after FLUSH BINARY LOGS: {files:?}"
    );
    let (file, pos, _, _): (String, u64, String, String) =
        c.query_first("SHOW MASTER STATUS").unwrap().unwrap();
    assert_eq!(file, "tierdb-bin.000002");
    assert_eq!(pos, std::fs::metadata(&files[1]).unwrap().len());
    let gtid: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert!(gtid.starts_with("0-1-"), "{gtid}");
    let log_bin: i64 = c.query_first("SELECT @@log_bin").unwrap().unwrap();
    assert_eq!(log_bin, 1);

    // Replay everything into MariaDB.
    let mariadb = ScratchMariadb::start();
    let replay = decode(&server, &files, &[]);
    let (ok, out, err) = mariadb.source(&replay);
    assert!(ok, "MariaDB refused the replayed binary log: {err}\n{out}");
    for t in [
        "kinds", "parent", "child", "copy", "kept", "p2", "c2", "newtab", "nopk",
    ] {
        let want = rows_of(server.port, "app", t, None);
        let got = rows_of(0, "app", t, Some(&mariadb));
        if t == "parent" {
            // The row written with sql_log_bin = 0 exists only on tierdb.
            let without: String = want
                .lines()
                .filter(|l| !l.starts_with("100\t"))
                .map(|l| format!("{l}\n"))
                .collect();
            assert_ne!(without, want, "tierdb has the unlogged row");
            assert_eq!(got, without, "table parent");
        } else {
            assert_eq!(got, want, "table {t}");
        }
    }
    // The same output replays into another tierdb (point-in-time recovery on tierdb).
    let copy = replayed_into_tierdb(&replay);
    for t in [
        "kinds", "parent", "child", "copy", "kept", "p2", "c2", "newtab", "nopk",
    ] {
        let want = rows_of(0, "app", t, Some(&mariadb));
        let got = rows_of(copy.port, "app", t, None);
        assert_eq!(got, want, "table {t} in the tierdb copy");
    }
    let (_, tables, _) = mariadb.sql("SHOW TABLES FROM app");
    for gone in ["dropped", "scratch", "gone", "half", "dropme", "pt", "tmpy"] {
        assert!(
            !tables.lines().any(|l| l == gone),
            "{gone} on the replica: {tables}"
        );
    }

    // mariadb-binlog decodes every row event (`-v`), including the cascade's absence.
    let verbose = decode(&server, &files, &["-v", "--base64-output=DECODE-ROWS"]);
    let text = String::from_utf8_lossy(&std::fs::read(verbose).unwrap()).into_owned();
    assert!(text.contains("### DELETE FROM `app`.`parent`"), "{text}");
    assert!(
        !text.contains("### DELETE FROM `app`.`child`"),
        "cascaded rows were logged"
    );
    assert!(!text.contains("unlogged") && !text.contains("five") && !text.contains("four"));
}

#[test]
fn a_crash_leaves_the_binary_log_holding_exactly_the_committed_transactions() {
    // Durable commits, and commits fsynced once a second (a crash loses the last ones: the
    // log must lose the same ones).
    for flush in ["1", "0"] {
        crash_and_compare(flush);
    }
}

fn crash_and_compare(flush: &str) {
    let mut server = TestServer::start_with(&[
        "--log-bin",
        "--max-binlog-size",
        "64K",
        "--flush-log-at-trx-commit",
        flush,
    ]);
    {
        let mut c = connect(server.port);
        run(&mut c, "CREATE DATABASE w");
        run(
            &mut c,
            "CREATE TABLE w.t (id INT PRIMARY KEY AUTO_INCREMENT, k INT, pad VARCHAR(100), KEY (k))",
        );
    }
    // Four writers commit as fast as they can; the server is killed under them.
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers = start_writers(port, &stop, true);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
    }
    server.restart(true);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let done: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(done > 100, "the writers committed only {done} statements");

    // After the restart: a new file, the GTID sequence continued, and the log replays to
    // exactly what the server holds.
    let mut c = connect(server.port);
    let gtid_before: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    run(
        &mut c,
        "INSERT INTO w.t (k, pad) VALUES (-1, 'after the crash')",
    );
    let gtid_after: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    let seq = |g: &str| g.rsplit('-').next().unwrap().parse::<u64>().unwrap();
    assert_eq!(
        seq(&gtid_after),
        seq(&gtid_before) + 1,
        "{gtid_before} -> {gtid_after}"
    );
    // With flush_log_at_trx_commit = 0 a commit reaches the files once it is durable (within
    // about a second): wait until the current file holds everything placed.
    let t0 = Instant::now();
    loop {
        let (file, pos, _, _): (String, u64, String, String) =
            c.query_first("SHOW MASTER STATUS").unwrap().unwrap();
        let len = std::fs::metadata(server.dir.path().join("binlog").join(&file))
            .map(|m| m.len())
            .unwrap_or(0);
        if len >= pos {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{file} stays at {len} < {pos}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let files = log_files(&server);
    assert!(
        files.len() >= 3,
        "64K files, then one more at the restart: {files:?}"
    );
    assert!(server.log().contains("binary log started"));

    let mariadb = ScratchMariadb::start();
    let replay = decode(&server, &files, &[]);
    let (ok, out, err) = mariadb.source(&replay);
    assert!(ok, "MariaDB refused the replayed binary log: {err}\n{out}");
    let want = rows_of(server.port, "w", "t", None);
    let got = rows_of(0, "w", "t", Some(&mariadb));
    assert!(want.lines().count() > 50, "too few rows to mean anything");
    same_rows(
        &got,
        &want,
        &format!("flush {flush}: the replayed log against the recovered table"),
    );
    let copy = replayed_into_tierdb(&replay);
    assert_eq!(
        rows_of(copy.port, "w", "t", None),
        want,
        "the tierdb copy differs"
    );
}

#[test]
fn transactions_of_tens_of_megabytes_are_logged_and_survive_a_crash() {
    // Commits made durable once a second: the crash comes before the checkpointer wrote the
    // last commit's events to the files, so recovery rewrites them from the redo log.
    let mut server = TestServer::start_with(&["--log-bin", "--flush-log-at-trx-commit", "2"]);
    let mut c = connect(server.port);
    run(&mut c, "CREATE DATABASE big");
    run(
        &mut c,
        "CREATE TABLE big.t (id INT PRIMARY KEY AUTO_INCREMENT, pad VARCHAR(300))",
    );
    run(&mut c, "INSERT INTO big.t (pad) VALUES (REPEAT('a', 250))");
    // 2^16 rows by doubling: the last INSERT ... SELECT logs about 17 MiB of row images.
    for _ in 0..16 {
        run(&mut c, "INSERT INTO big.t (pad) SELECT pad FROM big.t");
    }
    // Before and after images of every row: about 35 MiB of events in one transaction.
    run(
        &mut c,
        "UPDATE big.t SET pad = CONCAT(id, REPEAT('u', 240))",
    );
    // A transaction that rolls back logs nothing, however large.
    run(&mut c, "BEGIN");
    run(&mut c, "UPDATE big.t SET pad = 'rolled back'");
    run(&mut c, "ROLLBACK");
    drop(c);
    server.restart(true);

    let want = rows_of(server.port, "big", "t", None);
    assert_eq!(want.lines().count(), 65_537, "header and 65 536 rows");
    let mut c = connect(server.port);
    let gtid: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    assert_eq!(gtid, "0-1-20", "2 DDL, 18 transactions");
    let files = log_files(&server);
    // mariadb-binlog prints all rows of one statement as one BINLOG statement (about 47 MiB
    // here): the server must take it, as it must for a log MariaDB wrote.
    let mariadb = ScratchMariadb::start_with(&["--max-allowed-packet=1G"]);
    let replay = decode(&server, &files, &[]);
    let (ok, out, err) = mariadb.source(&replay);
    assert!(ok, "MariaDB refused the replayed binary log: {err}\n{out}");
    same_rows(
        &rows_of(0, "big", "t", Some(&mariadb)),
        &want,
        "the log replayed into MariaDB against the recovered table",
    );
    let copy = replayed_into_tierdb(&replay);
    same_rows(
        &rows_of(copy.port, "big", "t", None),
        &want,
        "the log replayed into a second tierdb against the recovered table",
    );
    let replayed = status_value(&mut c, "Tierdb_binlog_recovered_writes");
    eprintln!("binary-log writes recovered from the redo log at the restart: {replayed}");
}

fn status_value(c: &mut Conn, name: &str) -> u64 {
    let v: Option<(String, String)> = c
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .unwrap();
    v.map_or(0, |(_, v)| v.parse().unwrap_or(0))
}

#[test]
fn dumps_with_master_data_and_the_log_after_their_position_rebuild_the_table() {
    // Point-in-time recovery as a DBA runs it: `mariadb-dump --master-data` while writers
    // run, then the log from the dump's position. With --single-transaction the dump reads
    // Binlog_snapshot_file / _position, taken with its read view; without, it holds FLUSH
    // TABLES WITH READ LOCK while it reads the position and the rows. A position ahead of
    // the data loses rows, one behind it repeats them (1062).
    let server = TestServer::start_with(&["--log-bin", "--max-binlog-size", "256K"]);
    {
        let mut c = connect(server.port);
        run(&mut c, "CREATE DATABASE w");
        run(
            &mut c,
            "CREATE TABLE w.t (id INT PRIMARY KEY AUTO_INCREMENT, k INT, pad VARCHAR(100))",
        );
        run(&mut c, "INSERT INTO w.t (k, pad) VALUES (0, 'seed')");
    }
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers = start_writers(port, &stop, false);
    let dump_to = |name: &str, kind: &str| {
        let dump = server.dir.path().join(name);
        let (ok, _, err) = run_program(
            "/usr/bin/mariadb-dump",
            &[
                "-h127.0.0.1".into(),
                format!("-P{port}"),
                "-uroot".into(),
                kind.into(),
                "--master-data=2".into(),
                "--gtid".into(),
                "--databases".into(),
                "w".into(),
                format!("--result-file={}", dump.display()),
            ],
            Duration::from_secs(120),
        );
        assert!(ok, "mariadb-dump {kind} failed: {err}");
        dump
    };
    // Four dumps while the writers run: two of each kind.
    let mut dumps = Vec::new();
    for i in 0..4 {
        let kind = if i % 2 == 0 {
            "--single-transaction"
        } else {
            "--lock-all-tables"
        };
        std::thread::sleep(Duration::from_millis(400));
        dumps.push(dump_to(&format!("dump{i}.sql"), kind));
    }
    std::thread::sleep(Duration::from_millis(400));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let done: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    // Commits made durable once a second reach the files within about two seconds: a dump
    // right after one still gets its GTID position (with --single-transaction the session's
    // own snapshot answers BINLOG_GTID_POS before the bytes are in the file; FLUSH TABLES
    // WITH READ LOCK writes the files up to itself).
    {
        let mut c = connect(port);
        run(&mut c, "SET GLOBAL innodb_flush_log_at_trx_commit = 0");
        for (i, kind) in ["--single-transaction", "--lock-all-tables"]
            .iter()
            .enumerate()
        {
            run(
                &mut c,
                &format!(
                    "INSERT INTO w.t (k, pad) VALUES (-{}, 'just committed')",
                    i + 1
                ),
            );
            let late = dump_to(&format!("late{i}.sql"), kind);
            let pos: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
            let text = std::fs::read_to_string(&late).unwrap();
            assert!(
                text.contains(&format!("gtid_slave_pos='{pos}'")),
                "the {kind} dump right after a commit names {pos}"
            );
            dumps.push(late);
        }
        run(&mut c, "SET GLOBAL innodb_flush_log_at_trx_commit = 1");
        // A synced commit writes the files up to it: the late inserts are in them when this
        // returns, not up to two seconds later.
        run(&mut c, "CREATE TABLE w.fence (id INT PRIMARY KEY)");
    }
    assert!(done > 100, "the writers ran only {done} statements");
    let want = rows_of(server.port, "w", "t", None);
    let mut c = connect(server.port);
    for dump in &dumps {
        // The dump names its position twice: file / offset, and the GTID there.
        let text = std::fs::read_to_string(dump).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("MASTER_LOG_FILE="))
            .unwrap_or_else(|| panic!("no position in the dump"));
        let field = |key: &str| -> String {
            let at = line.find(key).unwrap() + key.len();
            line[at..]
                .trim_start_matches('\'')
                .split(['\'', ',', ';'])
                .next()
                .unwrap()
                .to_string()
        };
        let (file, pos) = (field("MASTER_LOG_FILE="), field("MASTER_LOG_POS="));
        let gtid_line = text
            .lines()
            .find(|l| l.contains("gtid_slave_pos="))
            .unwrap_or_else(|| panic!("no GTID position in the dump"));
        let at: Option<String> = c
            .query_first(format!("SELECT BINLOG_GTID_POS('{file}', {pos})"))
            .unwrap()
            .unwrap();
        let at = at.expect("BINLOG_GTID_POS of the dump's position");
        assert!(
            gtid_line.contains(&format!("'{at}'")),
            "{gtid_line} against {at}"
        );

        // Restore the dump, then the log from the dump's position on.
        let mariadb = ScratchMariadb::start();
        let (ok, out, err) = mariadb.source(dump);
        assert!(ok, "MariaDB refused the dump: {err}\n{out}");
        let all = log_files(&server);
        let from = all
            .iter()
            .position(|f| f.file_name().unwrap().to_str() == Some(file.as_str()))
            .expect("the dump's file is in the log");
        let replay = decode(&server, &all[from..], &[&format!("--start-position={pos}")]);
        let (ok, out, err) = mariadb.source(&replay);
        assert!(
            ok,
            "the log after {file}:{pos} does not apply: {err}\n{out}"
        );
        same_rows(
            &rows_of(0, "w", "t", Some(&mariadb)),
            &want,
            &format!("dump at {file}:{pos} + log from there against tierdb"),
        );
    }
}

#[test]
fn a_synced_commit_finds_the_files_holding_every_commit_before_it() {
    // Commits under flush_log_at_trx_commit = 0 reach the files once their redo record is
    // durable (within about two seconds); the next synced commit makes it so at once and
    // writes them, so that whoever reads the files after it sees every commit before it.
    let server = TestServer::start_with(&["--log-bin"]);
    let mut c = connect(server.port);
    run(&mut c, "CREATE DATABASE s");
    run(&mut c, "CREATE TABLE s.t (id INT PRIMARY KEY)");
    let gtids_in_files = |c: &mut Conn| -> usize {
        let (file, _): (String, u64) = c
            .query_first("SHOW MASTER STATUS")
            .map(|r: Option<(String, u64, String, String)>| {
                let r = r.unwrap();
                (r.0, r.1)
            })
            .unwrap();
        let types: Vec<String> = c
            .query_map(
                format!("SHOW BINLOG EVENTS IN '{file}'"),
                |r: mysql::Row| r.get::<String, _>(2).unwrap(),
            )
            .unwrap();
        types.iter().filter(|t| *t == "Gtid").count()
    };
    for round in 0..3 {
        let before = gtids_in_files(&mut c);
        run(&mut c, "SET GLOBAL innodb_flush_log_at_trx_commit = 0");
        for i in 0..5 {
            run(
                &mut c,
                &format!("INSERT INTO s.t VALUES ({})", round * 10 + i),
            );
        }
        run(&mut c, "SET GLOBAL innodb_flush_log_at_trx_commit = 1");
        run(
            &mut c,
            &format!("INSERT INTO s.t VALUES ({})", round * 10 + 9),
        );
        assert_eq!(
            gtids_in_files(&mut c),
            before + 6,
            "round {round}: the five lazy commits and the synced one are in the file"
        );
    }
}

#[test]
fn ddl_and_concurrent_writes_reach_the_log_in_the_order_they_happened() {
    let server = TestServer::start_with(&["--log-bin"]);
    {
        let mut c = connect(server.port);
        run(&mut c, "CREATE DATABASE rc");
        run(
            &mut c,
            "CREATE TABLE rc.race (id INT PRIMARY KEY AUTO_INCREMENT, v INT)",
        );
    }
    let port = server.port;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut c = connect(port);
                let mut i = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // A TRUNCATE may make one fail (the table changed under it): fine.
                    let _ = c.query_drop(format!("INSERT INTO rc.race (v) VALUES ({i})"));
                    i += 1;
                }
            })
        })
        .collect();
    let mut c = connect(port);
    for i in 0..150 {
        let sql = match i % 3 {
            0 => "TRUNCATE TABLE rc.race",
            1 => "ALTER TABLE rc.race ADD COLUMN extra INT DEFAULT 7",
            _ => "ALTER TABLE rc.race DROP COLUMN extra",
        };
        run(&mut c, sql);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let mariadb = ScratchMariadb::start();
    let replay = decode(&server, &log_files(&server), &[]);
    let (ok, out, err) = mariadb.source(&replay);
    assert!(
        ok,
        "MariaDB refused the log (an event out of order?): {err}\n{out}"
    );
    let want = rows_of(server.port, "rc", "race", None);
    assert_eq!(rows_of(0, "rc", "race", Some(&mariadb)), want);
}

#[test]
fn binary_log_statements_answer_as_mariadb_does() {
    // Without a binary log (MariaDB's answers recorded against 10.11 with log_bin off).
    let plain = TestServer::start();
    let mut c = connect(plain.port);
    match c.query_drop("SHOW BINARY LOGS") {
        Err(mysql::Error::MySqlError(e)) => {
            assert_eq!(
                (e.code, e.message.as_str()),
                (1381, "You are not using binary logging")
            )
        }
        other => panic!("SHOW BINARY LOGS without a log: {other:?}"),
    }
    let rows: Vec<mysql::Row> = c.query("SHOW MASTER STATUS").unwrap();
    assert!(rows.is_empty());
    run(&mut c, "FLUSH BINARY LOGS");
    run(&mut c, "PURGE BINARY LOGS TO 'tierdb-bin.000001'");
    let v: i64 = c.query_first("SELECT @@log_bin").unwrap().unwrap();
    assert_eq!(v, 0);

    // With one: purging, refusing what is not a file, privileges.
    let server = TestServer::start_with(&["--log-bin"]);
    let mut c = connect(server.port);
    run(&mut c, "CREATE DATABASE p");
    run(&mut c, "FLUSH BINARY LOGS");
    run(&mut c, "CREATE TABLE p.t (id INT PRIMARY KEY)");
    run(&mut c, "FLUSH LOGS");
    let before: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(before.len(), 3, "{before:?}");
    match c.query_drop("PURGE BINARY LOGS TO 'nonsense.000001'") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1373),
        other => panic!("purge to an unknown file: {other:?}"),
    }
    run(&mut c, &format!("PURGE BINARY LOGS TO '{}'", before[1].0));
    let after: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(after, before[1..].to_vec());
    assert!(!server.dir.path().join("binlog").join(&before[0].0).exists());
    let index = std::fs::read_to_string(server.dir.path().join("binlog/tierdb-bin.index")).unwrap();
    assert!(
        !index.contains(&before[0].0) && index.contains(&before[1].0),
        "{index}"
    );
    // The current file is never purged, whatever BEFORE says.
    run(&mut c, "PURGE BINARY LOGS BEFORE NOW() + INTERVAL 1 DAY");
    let last: Vec<(String, u64)> = c.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(last.len(), 1);
    assert_eq!(last[0].0, before[2].0);

    // SHOW BINLOG EVENTS describes the current file's events as MariaDB does.
    type EventRow = (String, u64, String, u64, u64, String);
    let evs: Vec<EventRow> = c
        .query(format!("SHOW BINLOG EVENTS IN '{}'", last[0].0))
        .unwrap();
    assert_eq!(evs[0].1, 4);
    assert_eq!(evs[0].2, "Format_desc");
    assert!(evs[0].5.starts_with("Server ver: 10.11"), "{evs:?}");
    assert_eq!(evs[1].2, "Gtid_list");
    assert_eq!(evs[2].2, "Binlog_checkpoint");
    assert_eq!(evs[2].5, last[0].0);
    for w in evs.windows(2) {
        assert_eq!(
            w[0].4, w[1].1,
            "each event starts where the one before ends: {evs:?}"
        );
    }
    run(&mut c, "INSERT INTO p.t VALUES (1)");
    let evs: Vec<EventRow> = c
        .query(format!(
            "SHOW BINLOG EVENTS IN '{}' FROM {} LIMIT 1, 3",
            last[0].0, evs[2].4
        ))
        .unwrap();
    let kinds: Vec<&str> = evs.iter().map(|e| e.2.as_str()).collect();
    assert_eq!(kinds, ["Table_map", "Write_rows_v1", "Xid"], "{evs:?}");
    assert!(
        evs[0].5.ends_with("(p.t)") && evs[1].5.ends_with("flags: STMT_END_F"),
        "{evs:?}"
    );
    match c.query_drop(format!("SHOW BINLOG EVENTS IN '{}' FROM 5", last[0].0)) {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1220, "{}", e.message),
        other => panic!("a position inside an event: {other:?}"),
    }
    run(&mut c, "CREATE USER watcher@localhost");
    let mut w =
        Conn::new(Opts::from_url(&format!("mysql://watcher@127.0.0.1:{}/", server.port)).unwrap())
            .unwrap();
    for (sql, code) in [
        ("SET SESSION sql_log_bin = 0", 1227),
        ("SHOW BINARY LOGS", 1227),
        ("SHOW MASTER STATUS", 1227),
        ("PURGE BINARY LOGS BEFORE NOW()", 1227),
        ("FLUSH BINARY LOGS", 1227),
    ] {
        match w.query_drop(sql) {
            Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, code, "{sql}: {}", e.message),
            other => panic!("{sql} by an account without privileges: {other:?}"),
        }
    }
    // sql_log_bin holds for whole transactions.
    run(&mut c, "BEGIN");
    match c.query_drop("SET sql_log_bin = 0") {
        Err(mysql::Error::MySqlError(e)) => assert_eq!(e.code, 1694, "{}", e.message),
        other => panic!("sql_log_bin inside a transaction: {other:?}"),
    }
    run(&mut c, "COMMIT");
    run(&mut c, "GRANT BINLOG MONITOR ON *.* TO watcher@localhost");
    let rows: Vec<(String, u64)> = w.query("SHOW BINARY LOGS").unwrap();
    assert_eq!(rows.len(), 1);
}

/// Waits until `replica` has applied everything `server` logged; returns its GTID position.
fn caught_up(replica: &ScratchMariadb, server: &TestServer) -> String {
    let mut c = connect(server.port);
    let want: String = c.query_first("SELECT @@gtid_binlog_pos").unwrap().unwrap();
    let t0 = Instant::now();
    loop {
        let (_, got, _) = replica.sql("SELECT @@gtid_slave_pos");
        let got = got.lines().nth(1).unwrap_or("").trim().to_string();
        if got == want {
            eprintln!("replica caught up at {got} after {:?}", t0.elapsed());
            return got;
        }
        if t0.elapsed() > Duration::from_secs(60) {
            let (_, status, _) = replica.sql("SHOW SLAVE STATUS\\G");
            panic!("the replica is at '{got}', tierdb at '{want}' after 60 s:\n{status}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_mariadb_replica_follows_tierdb_through_rotations_and_restarts() {
    let mut server = TestServer::start_with(&["--log-bin", "--max-binlog-size", "16K"]);
    {
        let mut c = connect(server.port);
        run(&mut c, "CREATE DATABASE shop");
        run(
            &mut c,
            "CREATE TABLE shop.orders (id INT PRIMARY KEY AUTO_INCREMENT, item VARCHAR(40),
             qty INT, placed DATETIME(3), price DECIMAL(10,2), KEY (item))",
        );
        for i in 0..200 {
            run(
                &mut c,
                &format!(
                    "INSERT INTO shop.orders (item, qty, placed, price) VALUES ('item {i}', {}, '2026-01-{:02} 10:00:00.{i:03}', {i}.25)",
                    i % 7,
                    i % 28 + 1
                ),
            );
        }
    }
    let replica = ScratchMariadb::start_with(&["--server-id=2"]);
    let (ok, _, err) = replica.sql(&format!(
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, MASTER_USER='root', \
         MASTER_PASSWORD='', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos; START SLAVE",
        server.port
    ));
    assert!(ok, "CHANGE MASTER / START SLAVE: {err}");
    caught_up(&replica, &server);
    assert_eq!(
        rows_of(0, "shop", "orders", Some(&replica)),
        rows_of(server.port, "shop", "orders", None)
    );

    // Changes while the replica streams: updates, deletes, DDL, a rotation by hand.
    {
        let mut c = connect(server.port);
        run(
            &mut c,
            "UPDATE shop.orders SET qty = qty + 10 WHERE id % 3 = 0",
        );
        run(&mut c, "DELETE FROM shop.orders WHERE id % 10 = 0");
        run(
            &mut c,
            "ALTER TABLE shop.orders ADD COLUMN note VARCHAR(20) DEFAULT 'new'",
        );
        run(&mut c, "FLUSH BINARY LOGS");
        run(
            &mut c,
            "INSERT INTO shop.orders (item, qty, note) VALUES ('late', 1, 'after flush')",
        );
    }
    caught_up(&replica, &server);
    assert_eq!(
        rows_of(0, "shop", "orders", Some(&replica)),
        rows_of(server.port, "shop", "orders", None)
    );

    // tierdb restarts (a clean stop, then a crash): the replica reconnects and goes on from
    // its GTID position in the new files.
    for crash in [false, true] {
        server.restart(crash);
        let mut c = connect(server.port);
        for i in 0..20 {
            run(
                &mut c,
                &format!("INSERT INTO shop.orders (item, qty) VALUES ('restart {crash} {i}', {i})"),
            );
        }
        // The replica's master port changed with the restart.
        let (ok, _, err) = replica.sql(&format!(
            "STOP SLAVE; CHANGE MASTER TO MASTER_PORT={}; START SLAVE",
            server.port
        ));
        assert!(ok, "{err}");
        caught_up(&replica, &server);
        assert_eq!(
            rows_of(0, "shop", "orders", Some(&replica)),
            rows_of(server.port, "shop", "orders", None),
            "after a restart (crash: {crash})"
        );
    }
    let (_, status, _) = replica.sql("SHOW SLAVE STATUS\\G");
    assert!(
        status.contains("Slave_IO_Running: Yes") && status.contains("Slave_SQL_Running: Yes"),
        "{status}"
    );
}
