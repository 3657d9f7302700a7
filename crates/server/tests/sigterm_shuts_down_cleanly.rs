//! SIGTERM with clients connected (one idle, one mid-transaction): the server closes them,
//! shuts the engine down and exits 0 promptly.

mod common;

use std::time::Duration;

use mysql::prelude::*;
use mysql::{Conn, Opts};

use common::TestServer;

#[test]
fn sigterm_shuts_down_cleanly() {
    let mut server = TestServer::start();
    let mut a = Conn::new(Opts::from_url(&server.url(None)).unwrap()).unwrap();
    a.query_drop("CREATE DATABASE d").unwrap();
    a.query_drop("CREATE TABLE d.t (id INT NOT NULL PRIMARY KEY)")
        .unwrap();
    let mut b = Conn::new(Opts::from_url(&server.url(Some("d"))).unwrap()).unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("INSERT INTO t VALUES (1)").unwrap();
    let status = server
        .stop(Duration::from_secs(20))
        .expect("server did not exit within 20 s of SIGTERM");
    assert!(status.success(), "exit status {status}\n{}", server.log());
    let log = server.log();
    assert!(log.contains("shutdown complete"), "{log}");
    assert!(a.query_drop("SELECT 1").is_err());
}
