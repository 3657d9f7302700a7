//! Scenario: a child process appends and commits (`EveryCommit`) as fast as it can over
//! small segments and is killed with SIGKILL at a random moment. Reopening the log yields a
//! prefix of what the child appended — every commit it acknowledged is there, nothing else,
//! no garbage — and the log accepts appends again.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use tierdb_wal::{FlushPolicy, Lsn, Wal};

const CHILD_ENV: &str = "TIERDB_WAL_KILL_CHILD_DIR";
const SEG: u64 = 64 * 1024;

fn size(i: u64) -> usize {
    1 + (i as usize * 7919) % 20_000
}

/// The child's body: runs only when the parent re-executes this test with `CHILD_ENV` set.
fn child(dir: &str) {
    let mut c = cfg(std::path::Path::new(dir), SEG);
    c.policy = FlushPolicy::EveryCommit;
    let wal = Wal::open(c).unwrap();
    for i in 0.. {
        let lsn = wal.append(&payload(i, size(i)), |_, _| {}).unwrap();
        wal.commit(lsn).unwrap();
        println!("ack {i}");
    }
}

#[test]
fn killed_process_keeps_acknowledged_commits() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    for round in 0..3u64 {
        let dir = tempfile::tempdir().unwrap();
        let mut proc = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "killed_process_keeps_acknowledged_commits",
                "--nocapture",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = proc.stdout.take().unwrap();
        let mut acked: Option<u64> = None;
        let kill_after = Duration::from_millis(150 + round * 130);
        let start = Instant::now();
        let mut lines = BufReader::new(stdout).lines();
        while start.elapsed() < kill_after {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(n) = l.strip_prefix("ack ") {
                        acked = Some(n.trim().parse().unwrap());
                    }
                }
                _ => break,
            }
        }
        proc.kill().unwrap();
        proc.wait().unwrap();
        let acked = acked.expect("the child acknowledged some commits");

        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        let got = read_all(&wal, Lsn(0));
        assert!(
            got.len() as u64 > acked,
            "acknowledged commit {acked} missing: only {} records",
            got.len()
        );
        for (i, (_, p)) in got.iter().enumerate() {
            assert!(
                p == &payload(i as u64, size(i as u64)),
                "record {i} is not what was appended"
            );
        }
        let end = wal.end_lsn();
        let next = wal.append(b"after the kill", |_, _| {}).unwrap();
        wal.close().unwrap();
        drop(wal);
        let wal = Wal::open(cfg(dir.path(), SEG)).unwrap();
        assert_eq!(read_all(&wal, end), vec![(end, b"after the kill".to_vec())]);
        assert_eq!(wal.end_lsn(), next);
        eprintln!(
            "round {round}: acked {acked}, recovered {} records",
            got.len()
        );
    }
}
