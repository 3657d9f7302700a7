//! Views through dumps: a dump the real `mariadb-dump` 10.11 wrote from a MariaDB database
//! with views (committed as `fixtures/mariadb_dump_10_11_views.sql`: placeholder views, then
//! `CREATE ALGORITHM=... DEFINER=... SQL SECURITY ... VIEW` split over `/*!50001 */` and
//! `/*!50013 */` comments, MariaDB's own spelling of the queries — parenthesized joins,
//! `count(0)`-style calls, a view over a grouped view, `WITH CASCADED CHECK OPTION` in its
//! `/*!50002 */` comment) loads with the real `mariadb` client, twice (the second load drops
//! and recreates every view), and the views then print what MariaDB printed. The CHECK OPTION
//! holds. The real `mariadb-dump` then dumps the database from tierdb and that dump loads into
//! a second database that prints the same.

mod common;

use common::{TestServer, MARIADB};

const QUERIES: &str = "SELECT * FROM shopv.big_orders ORDER BY id; \
     SELECT * FROM shopv.customer_totals ORDER BY customer; \
     SELECT * FROM shopv.big_spenders ORDER BY customer; \
     SELECT * FROM shopv.located ORDER BY id; \
     SELECT TABLE_NAME, CHECK_OPTION, SECURITY_TYPE, ALGORITHM FROM information_schema.VIEWS \
     WHERE TABLE_SCHEMA = 'shopv' ORDER BY TABLE_NAME;";

/// What MariaDB 10.11 printed for `QUERIES` on the database the fixture was dumped from.
const MARIADB_PRINTED: &str = "id\tcustomer_id\tamount\n\
    1\t1\t10.50\n\
    3\t2\t99.00\n\
    5\t3\t12.00\n\
    customer\torders\ttotal\n\
    Ann\t2\t13.75\n\
    Bob\t1\t99.00\n\
    Cy\t2\t12.75\n\
    customer\ttotal\n\
    Bob\t99.00\n\
    id\tname\tcity\n\
    1\tAnn\tOslo\n\
    3\tCy\tRome\n\
    TABLE_NAME\tCHECK_OPTION\tSECURITY_TYPE\tALGORITHM\n\
    big_orders\tCASCADED\tDEFINER\tUNDEFINED\n\
    big_spenders\tNONE\tDEFINER\tUNDEFINED\n\
    customer_totals\tNONE\tDEFINER\tUNDEFINED\n\
    located\tNONE\tINVOKER\tMERGE\n";

fn mariadb(server: &TestServer, args: &[&str], sql: &str) -> (bool, String, String) {
    common::mariadb_batch(server, args, sql)
}

#[test]
fn a_mariadb_dump_with_views_loads_reads_back_and_dumps_again() {
    assert!(
        common::exists(MARIADB),
        "the mariadb client is not installed at {MARIADB}"
    );
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mariadb_dump_10_11_views.sql");
    assert!(fixture.exists(), "missing {}", fixture.display());
    let server = TestServer::start();
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE shopv");
    assert!(ok, "{err}");
    for round in 0..2 {
        let (ok, out, err) = mariadb(
            &server,
            &["shopv"],
            &format!("source {}", fixture.display()),
        );
        assert!(ok, "round {round}: loading the dump failed: {err}\n{out}");
        assert_eq!(err, "", "round {round}");
        let (ok, out, err) = mariadb(&server, &[], QUERIES);
        assert!(ok, "round {round}: {err}");
        assert_eq!(out, MARIADB_PRINTED, "round {round}");
    }

    // The view's CHECK OPTION came along: a row it would not show is refused, one it shows
    // goes into the table.
    let (ok, _, err) = mariadb(
        &server,
        &[],
        "INSERT INTO shopv.big_orders (customer_id, amount) VALUES (2, 5)",
    );
    assert!(!ok);
    assert!(
        err.contains("ERROR 1369 (44000)")
            && err.contains("CHECK OPTION failed `shopv`.`big_orders`"),
        "{err}"
    );
    let (ok, out, err) = mariadb(
        &server,
        &[],
        "INSERT INTO shopv.big_orders (customer_id, amount) VALUES (2, 50); \
         SELECT COUNT(*), SUM(amount) FROM shopv.orders; \
         DELETE FROM shopv.big_orders WHERE amount = 50; \
         SELECT COUNT(*), SUM(amount) FROM shopv.orders",
    );
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "COUNT(*)\tSUM(amount)\n6\t175.50\nCOUNT(*)\tSUM(amount)\n5\t125.50\n"
    );

    // Dump from tierdb with the real mariadb-dump and load it into another database.
    let dump_path = common::dump_from_tierdb(&server, "shopv", "views_from_tierdb.sql");
    let ours = std::fs::read_to_string(&dump_path).expect("dump file");
    assert!(
        ours.contains("/*!50013 DEFINER=`root`@`localhost` SQL SECURITY INVOKER */"),
        "{ours}"
    );
    assert!(
        ours.contains("/*!50002 WITH CASCADED CHECK OPTION */"),
        "{ours}"
    );
    let (ok, _, err) = mariadb(&server, &[], "CREATE DATABASE shopv2");
    assert!(ok, "{err}");
    let (ok, out, err) = mariadb(
        &server,
        &["shopv2"],
        &format!("source {}", dump_path.display()),
    );
    assert!(ok, "loading tierdb's own dump failed: {err}\n{out}");
    let (ok, out, err) = mariadb(&server, &[], &QUERIES.replace("shopv", "shopv2"));
    assert!(ok, "{err}");
    assert_eq!(out, MARIADB_PRINTED);
}
