//! GET_LOCK / RELEASE_LOCK between real client connections: one holder at a time, a
//! waiter gets the lock when it is released or when its holder disconnects, a timeout
//! returns 0, and two connections waiting for each other's locks get 1213 instead of
//! waiting forever.

mod common;

use common::TestServer;
use mysql::prelude::*;
use mysql::{Conn, Opts};
use std::time::{Duration, Instant};

fn conn(server: &TestServer) -> Conn {
    Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap()
}

fn one(c: &mut Conn, sql: &str) -> Option<i64> {
    c.query_first::<Option<i64>, _>(sql).unwrap().flatten()
}

#[test]
fn one_holder_at_a_time_and_waiters_get_the_lock_when_it_is_freed() {
    let server = TestServer::start();
    let mut a = conn(&server);
    let mut b = conn(&server);
    let a_id = one(&mut a, "SELECT CONNECTION_ID()").unwrap();
    assert_eq!(one(&mut a, "SELECT GET_LOCK('nightly-job', 0)"), Some(1));
    assert_eq!(one(&mut b, "SELECT GET_LOCK('NIGHTLY-JOB', 0)"), Some(0));
    assert_eq!(
        one(&mut b, "SELECT IS_USED_LOCK('nightly-job')"),
        Some(a_id)
    );
    assert_eq!(one(&mut b, "SELECT RELEASE_LOCK('nightly-job')"), Some(0));

    // A timeout returns 0 after (about) the time asked for.
    let started = Instant::now();
    assert_eq!(one(&mut b, "SELECT GET_LOCK('nightly-job', 0.3)"), Some(0));
    assert!(started.elapsed() >= Duration::from_millis(250));

    // B waits; A releases: B gets it.
    let b_id = b.connection_id();
    let waiter = std::thread::spawn(move || {
        let got = one(&mut b, "SELECT GET_LOCK('nightly-job', 20)");
        (got, b)
    });
    std::thread::sleep(Duration::from_millis(300));
    // SHOW PROCESSLIST says what B waits for.
    let rows: Vec<(u32, String, Option<String>)> = a
        .query_map("SHOW PROCESSLIST", |r: mysql::Row| {
            (r.get(0).unwrap(), r.get(6).unwrap(), r.get(7).unwrap())
        })
        .unwrap();
    let b_row = rows.into_iter().find(|r| r.0 == b_id).expect("B is listed");
    assert_eq!(
        (b_row.1.as_str(), b_row.2.as_deref()),
        ("User lock", Some("SELECT GET_LOCK('nightly-job', 20)"))
    );
    assert_eq!(one(&mut a, "SELECT RELEASE_LOCK('nightly-job')"), Some(1));
    let (got, b) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
    assert_eq!(one(&mut a, "SELECT IS_FREE_LOCK('nightly-job')"), Some(0));

    // B disconnects holding it: A can take it.
    drop(b);
    let mut tries = 0;
    while one(&mut a, "SELECT GET_LOCK('nightly-job', 1)") != Some(1) {
        tries += 1;
        assert!(tries < 20, "the lock of a closed connection was not freed");
    }
    assert_eq!(one(&mut a, "SELECT RELEASE_ALL_LOCKS()"), Some(1));
}

#[test]
fn waiting_for_each_others_locks_is_a_deadlock_not_a_hang() {
    let server = TestServer::start();
    let mut a = conn(&server);
    let mut b = conn(&server);
    assert_eq!(one(&mut a, "SELECT GET_LOCK('x', 0)"), Some(1));
    assert_eq!(one(&mut b, "SELECT GET_LOCK('y', 0)"), Some(1));
    let waiter = std::thread::spawn(move || {
        let got = one(&mut a, "SELECT GET_LOCK('y', 30)");
        (got, a)
    });
    std::thread::sleep(Duration::from_millis(300));
    let e = b.query_drop("SELECT GET_LOCK('x', 30)").unwrap_err();
    match e {
        mysql::Error::MySqlError(m) => assert_eq!(m.code, 1213, "{}", m.message),
        other => panic!("{other:?}"),
    }
    assert_eq!(one(&mut b, "SELECT RELEASE_LOCK('y')"), Some(1));
    let (got, _a) = waiter.join().unwrap();
    assert_eq!(got, Some(1));
}
