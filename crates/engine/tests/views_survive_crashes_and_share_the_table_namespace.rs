//! Views in the engine's catalog: a view and a table cannot share a name (either way round),
//! CREATE OR REPLACE swaps the stored query, a query longer than one catalog cell is stored
//! in pieces and read back whole, rename and drop change every piece, DROP DATABASE takes the
//! views with it, and all of it survives a crash image (no shutdown) as it stood.

mod common;

use common::*;
use std::sync::Arc;
use tierdb_engine::{Engine, Error, ViewDef};

fn open(dir: &std::path::Path) -> Arc<Engine> {
    Engine::open(small_cfg(dir, 4 << 20)).expect("open")
}

fn view(name: &str, query: String) -> ViewDef {
    ViewDef {
        name: name.into(),
        query,
        algorithm: "UNDEFINED".into(),
        definer: "root@localhost".into(),
        security: "DEFINER".into(),
        check_option: "NONE".into(),
        charset_client: "utf8mb4".into(),
        collation_connection: "utf8mb4_general_ci".into(),
    }
}

fn names(e: &Engine, db: &str) -> Vec<String> {
    e.views(db).iter().map(|v| v.name.clone()).collect()
}

#[test]
fn views_share_names_with_tables_and_survive_a_crash_image_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = open(dir.path());
    e.create_database("d").expect("db");
    e.create_database("gone").expect("db");
    e.create_table("d", kv_table("t")).expect("t");

    // One namespace: a view cannot take a table's name, nor a table a view's.
    let r = e.create_view("d", view("t", "SELECT 1".into()), false);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    let r = e.create_view("d", view("t", "SELECT 1".into()), true);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    e.create_view("d", view("v", "SELECT id FROM t".into()), false)
        .expect("v");
    let r = e.create_table("d", kv_table("v"));
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    let r = e.rename_tables(&[("d".into(), "t".into(), "d".into(), "v".into())]);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    let r = e.create_view("d", view("v", "SELECT 2".into()), false);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    let r = e.create_view("nodb", view("v", "SELECT 2".into()), false);
    assert!(matches!(r, Err(Error::NoSuchDatabase(_))), "{r:?}");

    // A long query (many catalog cells), then replaced by a shorter one and back: no
    // piece of an older version may be read with a newer one.
    let long = format!("SELECT {} id AS `id` FROM t", "id + 1 AS `x`, ".repeat(900));
    assert!(long.len() > 10_000);
    e.create_view("d", view("report", long.clone()), false)
        .expect("report");
    e.create_view("d", view("report", "SELECT 1 AS `one`".into()), true)
        .expect("replace");
    let longer = format!("{long} WHERE id > 0");
    e.create_view("d", view("report", longer.clone()), true)
        .expect("replace again");
    // Shorter but still several pieces: the old version's last pieces must go.
    e.create_view("d", view("shrink", format!("{longer} AND id < 9")), false)
        .expect("shrink");
    e.create_view("d", view("shrink", long.clone()), true)
        .expect("shrink again");
    e.create_view("d", view("old", long.clone()), false)
        .expect("old");
    e.rename_views(&[("d".into(), "old".into(), "renamed".into())])
        .expect("rename");
    let r = e.rename_views(&[("d".into(), "renamed".into(), "t".into())]);
    assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
    e.create_view("gone", view("w", long.clone()), false)
        .expect("w");
    e.create_view("d", view("dropped", long.clone()), false)
        .expect("dropped");
    e.drop_view("d", "dropped").expect("drop");
    let r = e.drop_view("d", "t");
    assert!(matches!(r, Err(Error::NoSuchTable { .. })), "{r:?}");
    e.drop_database("gone").expect("drop database");
    assert_eq!(names(&e, "d"), vec!["renamed", "report", "shrink", "v"]);

    for image in 0..2 {
        // A crash image (no shutdown), and the image of the reopened image after a clean
        // shutdown: the same views, whole.
        let crash = tempfile::tempdir().expect("tempdir");
        copy_engine_dir(dir.path(), crash.path());
        let c = open(crash.path());
        assert_eq!(
            names(&c, "d"),
            vec!["renamed", "report", "shrink", "v"],
            "image {image}"
        );
        assert_eq!(c.view("d", "report").expect("report").query, longer);
        assert_eq!(c.view("d", "renamed").expect("renamed").query, long);
        assert_eq!(c.view("d", "shrink").expect("shrink").query, long);
        assert_eq!(c.view("d", "v").expect("v").query, "SELECT id FROM t");
        assert!(c.view("d", "dropped").is_none());
        assert!(!c.database_exists("gone"));
        assert!(c.views("gone").is_empty());
        // The table is untouched and still takes no view name.
        assert_eq!(c.tables("d").expect("tables"), vec!["t"]);
        let r = c.create_table("d", kv_table("report"));
        assert!(matches!(r, Err(Error::TableExists(_))), "{r:?}");
        c.shutdown().expect("shutdown");
        drop(c);
        let again = open(crash.path());
        assert_eq!(names(&again, "d"), vec!["renamed", "report", "shrink", "v"]);
        assert_eq!(again.view("d", "report").expect("report").query, longer);
        again.shutdown().expect("shutdown");
    }
    e.shutdown().expect("shutdown");
}
