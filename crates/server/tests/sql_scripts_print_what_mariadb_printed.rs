//! SQL scripts piped into the real `mariadb` client print exactly what MariaDB 10.11 printed.
//!
//! Each `fixtures/NAME.sql` was piped into a MariaDB 10.11 server with `mariadb --batch
//! --force -vvv` to record `fixtures/NAME.mariadb_10_11.{out,err}`; the test pipes it into
//! tierdb the same way and compares stdout (timings removed) and the error lines.
//!
//! `upserts_and_unique_keys.sql` (inline `UNIQUE` columns, `UNIQUE KEY` constraints,
//! `CREATE UNIQUE INDEX`, `ALTER TABLE ... ADD UNIQUE KEY` over duplicates and over distinct
//! values, duplicate-entry errors on INSERT and UPDATE, NULLs in unique keys, a value freed by a
//! rolled-back DELETE, `INSERT ... ON DUPLICATE KEY UPDATE` with `VALUES()` and assignments
//! seeing earlier ones, `INSERT IGNORE` with SHOW WARNINGS and `@@warning_count`, `REPLACE`
//! deleting the rows of several keys, affected-row counts and info lines, SHOW CREATE TABLE,
//! SHOW COLUMNS, INFORMATION_SCHEMA.STATISTICS).
//!
//! `tables_without_primary_key.sql`: a table with no key at all (duplicate rows, UPDATE,
//! DELETE, a later index, a locking read), an AUTO_INCREMENT column that is only a secondary
//! key (sysbench's `--secondary` shape), 1075 for an auto column without a key and for
//! dropping its only key, a unique key as the only key with upserts, and SHOW COLUMNS showing
//! it as PRI the way MariaDB does.
//!
//! `joins.sql`: INNER, comma and CROSS joins, LEFT JOIN with NULL-extended rows (also with a
//! filter in ON, and `WHERE right.id IS NULL`), three tables, a self join, aggregates and
//! DISTINCT over joins, `t.*`, ORDER BY / LIMIT, a duplicate alias (1066), and an ON naming
//! a column unqualified that a later table also has (it means the earlier table's; tierdb
//! used to call it ambiguous).
//!
//! `add_column.sql`: `ALTER TABLE ... ADD [COLUMN]` on a table with rows (DEFAULT, NULL, NOT
//! NULL without DEFAULT reading the type's implicit default, DECIMAL), inserts with and
//! without a column list afterwards, updates and an index on the new column, a table without
//! a primary key, 1060 for a duplicate name.
//!
//! `subqueries.sql`: uncorrelated subqueries — `IN` / `NOT IN (SELECT ...)` with NULLs,
//! scalar subqueries in WHERE and in the select list, `[NOT] EXISTS`, nested subqueries, in
//! UPDATE and DELETE, with a join; 1242 for a scalar subquery returning two rows, 1241 for
//! two columns.
//!
//! `decimal_scale_in_lists_and_empty_subqueries.sql`: the scale of DECIMAL products, ROUND,
//! SUM of products; DECIMAL in an IN list of strings; `[NOT] IN` an empty subquery (also for
//! NULL); `SELECT @@warning_count` keeping the warnings for SHOW WARNINGS; ORDER BY mixing
//! DECIMAL text and numbers.
//!
//! `update_delete_order_by_and_create_like.sql`: `UPDATE/DELETE ... ORDER BY ... LIMIT` (a
//! job-queue pattern, DECIMAL keys, DESC), `CREATE TABLE ... LIKE` (1050 when the table
//! exists, a Note with IF NOT EXISTS, 1146 for a missing source).
//!
//! `union.sql`: UNION (DISTINCT) and UNION ALL, chains of both, ORDER BY by name, position
//! and DESC over the result, LIMIT, parenthesized operands with their own ORDER BY / LIMIT, a
//! UNION in a derived table and in `IN (...)`, DECIMAL and INT merged into DECIMAL, 1222 for
//! operands with different column counts.
//!
//! `date_and_string_functions.sql`: DATE, YEAR, MONTH, DAY, HOUR, MINUTE, SECOND,
//! DATE_FORMAT (every common specifier), REPLACE, LEFT, RIGHT, with NULLs, in WHERE and
//! GROUP BY.
//!
//! `insert_select.sql`: INSERT ... SELECT with a column list, defaults and AUTO_INCREMENT
//! for the others, 1062 / INSERT IGNORE / ON DUPLICATE KEY UPDATE with `VALUES()`, a table
//! filled from itself (all rows read first), a subquery in the SELECT, 1136.
//!
//! `decimal_order_and_compare.sql`: DECIMAL values sort, MIN/MAX and compare (with each
//! other, with strings, in BETWEEN) as numbers, not as their text; SUM and arithmetic show
//! the scale.
//!
//! `collations.sql`: text under MariaDB's default `utf8mb4_general_ci` — case, accents and
//! trailing spaces ignored in `=`, IN, LIKE, BETWEEN, ORDER BY, GROUP BY, DISTINCT, MIN/MAX,
//! joins, UNIQUE and PRIMARY keys (1062 for `'ANN@example.COM'` against `'Ann@Example.com'`,
//! ON DUPLICATE KEY UPDATE and REPLACE finding the row), a primary key updated to another
//! case; `COLLATE utf8mb4_bin` columns and `COLLATE=utf8mb4_bin` tables compare bytes (also a
//! column added later); SHOW CREATE TABLE, SHOW FULL COLUMNS and INFORMATION_SCHEMA naming
//! the collations; `BINARY x`, `CAST(x AS BINARY)` and `x COLLATE utf8mb4_bin` comparing
//! bytes (in =, LIKE, IN, BETWEEN, ORDER BY, DISTINCT) and `COLLATE utf8mb4_general_ci`
//! making a binary column case-insensitive; 1273 / 1115 for unknown collations and
//! character sets.
//!
//! `rename_table.sql`: `RENAME TABLE` of one table (rows, UNIQUE key and AUTO_INCREMENT
//! counter kept), a swap through a temporary name in one statement, 1050 / 1146 (nothing
//! renamed when a later pair fails), a move to another database, `ALTER TABLE ... RENAME
//! TO / AS`, and the old name free for a new table. (For a target database that does not
//! exist MariaDB says 1025 "Error on rename"; tierdb says 1049 Unknown database.)
//!
//! `date_arithmetic.sql`: `DATE_ADD` / `DATE_SUB` / `ADDDATE` / `SUBDATE`, `d ± INTERVAL n
//! unit` and `INTERVAL n unit + d` for every unit (month ends clamped, leap years, a date
//! staying a date for day-or-longer units, microseconds, fractional amounts rounded, numbers
//! as dates, NULLs), `DATEDIFF`, `TIMESTAMPDIFF` (partial months and years not counted,
//! negative spans), on DATE / DATETIME columns in SELECT, WHERE (also against an index) and
//! UPDATE, and next to `NOW()`.
//!
//! `group_concat.sql`: `GROUP_CONCAT` per group and over a whole table, with ORDER BY (ASC,
//! DESC, several keys), SEPARATOR (also empty), DISTINCT (case-insensitive), several
//! arguments, NULLs skipped, an empty result, with HAVING, and 1111 for an aggregate inside.
//!
//! `charsets_and_collations.sql`: `SHOW CHARACTER SET` / `SHOW CHARSET` and `SHOW COLLATION`
//! with LIKE and WHERE, for the character sets and collations tierdb accepts (MariaDB lists
//! many more; the script filters to these).
//!
//! `alter_column.sql`: `MODIFY` (widening, NOT NULL, DEFAULT, COLLATE on a column outside
//! any key), `CHANGE` (rename and redefine), `RENAME COLUMN`, `ALTER COLUMN ... SET / DROP
//! DEFAULT`, with 1265 for a stored value that does not fit (naming its row), 1060 and 1054.

mod common;

use common::{TestServer, MARIADB};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Removes the " (0.001 sec)" timings the client appends to result lines.
fn without_timings(s: &str) -> String {
    s.lines()
        .map(|l| match (l.rfind(" ("), l.ends_with(" sec)")) {
            (Some(i), true) => &l[..i],
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn unique_keys_and_upserts_print_what_mariadb_printed() {
    prints_what_mariadb_printed("upserts_and_unique_keys");
}

#[test]
fn ordered_reads_and_extremes_print_what_mariadb_printed() {
    prints_what_mariadb_printed("ordered_reads_and_extremes");
}

#[test]
fn semi_joins_print_what_mariadb_printed() {
    prints_what_mariadb_printed("semi_joins");
}

#[test]
fn like_prefix_ranges_print_what_mariadb_printed() {
    prints_what_mariadb_printed("like_prefix_ranges");
}

#[test]
fn analyze_of_several_tables_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("analyze_tables");
}

#[test]
fn fractional_seconds_print_what_mariadb_printed() {
    prints_what_mariadb_printed("fractional_seconds");
}

#[test]
fn year_enum_numbers_and_item_names_print_what_mariadb_printed() {
    prints_what_mariadb_printed("year_enum_and_column_names");
}

#[test]
fn time_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("time_columns");
}

#[test]
fn bit_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("bit_columns");
}

#[test]
fn accounts_and_grants_print_what_mariadb_printed() {
    prints_what_mariadb_printed("accounts_and_grants");
}

#[test]
fn set_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("set_columns");
}

#[test]
fn tables_without_primary_key_print_what_mariadb_printed() {
    prints_what_mariadb_printed("tables_without_primary_key");
}

#[test]
fn joins_print_what_mariadb_printed() {
    prints_what_mariadb_printed("joins");
}

#[test]
fn decimals_order_and_compare_as_in_mariadb() {
    prints_what_mariadb_printed("decimal_order_and_compare");
}

#[test]
fn added_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("add_column");
}

#[test]
fn subqueries_print_what_mariadb_printed() {
    prints_what_mariadb_printed("subqueries");
}

#[test]
fn decimal_scale_in_lists_and_empty_subqueries_print_what_mariadb_printed() {
    prints_what_mariadb_printed("decimal_scale_in_lists_and_empty_subqueries");
}

#[test]
fn ordered_updates_and_create_like_print_what_mariadb_printed() {
    prints_what_mariadb_printed("update_delete_order_by_and_create_like");
}

#[test]
fn unions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("union");
}

#[test]
fn date_and_string_functions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("date_and_string_functions");
}

#[test]
fn collations_print_what_mariadb_printed() {
    prints_what_mariadb_printed("collations");
}

#[test]
fn rename_table_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("rename_table");
}

#[test]
fn date_arithmetic_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("date_arithmetic");
}

#[test]
fn group_concat_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("group_concat");
}

#[test]
fn charsets_and_collations_print_what_mariadb_printed() {
    prints_what_mariadb_printed("charsets_and_collations");
}

#[test]
fn alter_column_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("alter_column");
}

#[test]
fn insert_select_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("insert_select");
}

#[test]
fn correlated_subqueries_print_what_mariadb_printed() {
    prints_what_mariadb_printed("correlated_subqueries");
}

#[test]
fn right_joins_print_what_mariadb_printed() {
    prints_what_mariadb_printed("right_joins");
}

#[test]
fn set_operations_print_what_mariadb_printed() {
    prints_what_mariadb_printed("set_operations");
}

#[test]
fn sql_prepared_statements_print_what_mariadb_printed() {
    prints_what_mariadb_printed("sql_prepared_statements");
}

#[test]
fn alter_table_rewrites_print_what_mariadb_printed() {
    prints_what_mariadb_printed("alter_table_rewrites");
}

#[test]
fn on_update_current_timestamp_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("on_update_current_timestamp");
}

#[test]
fn joins_using_and_natural_print_what_mariadb_printed() {
    prints_what_mariadb_printed("joins_using_and_natural");
}

#[test]
fn column_errors_name_the_clause_as_mariadb() {
    prints_what_mariadb_printed("column_errors_name_the_clause");
}

#[test]
fn with_queries_print_what_mariadb_printed() {
    prints_what_mariadb_printed("with_queries");
}

#[test]
fn derived_tables_in_joins_print_what_mariadb_printed() {
    prints_what_mariadb_printed("derived_tables_in_joins");
}

#[test]
fn alias_and_scope_resolution_print_what_mariadb_printed() {
    prints_what_mariadb_printed("alias_and_scope_resolution");
}

#[test]
fn create_table_as_select_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("create_table_as_select");
}

#[test]
fn string_math_and_calendar_functions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("string_math_and_calendar_functions");
}

#[test]
fn index_names_print_what_mariadb_printed() {
    prints_what_mariadb_printed("index_names");
}

#[test]
fn add_column_with_key_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("add_column_with_key");
}

#[test]
fn row_count_and_found_rows_print_what_mariadb_printed() {
    prints_what_mariadb_printed("row_count_and_found_rows");
}

#[test]
fn functions_ctas_and_row_count_edges_print_what_mariadb_printed() {
    prints_what_mariadb_printed("functions_ctas_and_row_count_edges");
}

/// FOREIGN KEY constraints: definitions (names, generated indexes, errno 150 / 121), checks
/// on child rows, RESTRICT / CASCADE / SET NULL on parent rows (also self-referencing and
/// multi-level), foreign_key_checks = 0, DROP / TRUNCATE / ALTER of tables in a key, renamed
/// parents, and INFORMATION_SCHEMA's view of the keys.
#[test]
fn foreign_keys_print_what_mariadb_printed() {
    prints_what_mariadb_printed("foreign_keys");
}

/// Foreign keys at the edges: a duplicate key is reported (or upserted) before the new row's
/// parent is checked, ON UPDATE CASCADE / SET NULL never cascade back into the table being
/// updated, a parent created after its children (checks off) must fit them, DROP DATABASE
/// keeps a table another database references.
#[test]
fn foreign_key_edges_print_what_mariadb_printed() {
    prints_what_mariadb_printed("foreign_key_edges");
}

/// ENUM columns: members by name (case-insensitive, trailing spaces ignored) or number,
/// 1265 for anything else, the first member as a NOT NULL column's implicit default, 1291,
/// quoting in SHOW CREATE TABLE, INFORMATION_SCHEMA, and ALTER to / from ENUM.
#[test]
fn enum_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("enum_columns");
}

/// Multi-table UPDATE (`UPDATE a JOIN b ... SET`, `UPDATE a, b SET`, LEFT JOIN, aliases,
/// DEFAULT) and DELETE (`DELETE a, b FROM ...`, `DELETE FROM a USING ...`): each target row
/// changed once, 1052 / 1054 / 1109, foreign keys on the rows changed.
#[test]
fn multi_table_writes_print_what_mariadb_printed() {
    prints_what_mariadb_printed("multi_table_writes");
}

/// Review findings: a database-qualified SET column in a multi-table UPDATE, `DELETE a.* FROM`,
/// LOW_PRIORITY / QUICK, ENUM members picked by a number in text, binary-collation ENUMs
/// (distinct cases, byte comparison), a numeric ENUM default (1067).
#[test]
fn enum_and_multi_table_edges_print_what_mariadb_printed() {
    prints_what_mariadb_printed("enum_and_multi_table_edges");
}

/// Views: CREATE [OR REPLACE] / ALTER / DROP VIEW and their errors (1050, 1054, 1060, 1146,
/// 1353, 4092, 1965 and its note, 1347, 1356 once a column or table a view reads is gone,
/// MariaDB's 1146 for a view naming itself), `*` fixed at CREATE (a column added later is not
/// in the view), views over UNION, joins, USING, WITH, scalar subqueries and aggregates, used
/// in joins, subqueries, CREATE TABLE ... AS SELECT, INSERT ... SELECT, prepared statements
/// (planned again after the tables change), across databases (the view's own database
/// resolves its names), RENAME TABLE of views (1450 across databases), LOCK TABLES of a
/// view, SHOW [FULL] TABLES [LIKE | WHERE], DESCRIBE / SHOW COLUMNS / SHOW INDEX of a view,
/// INFORMATION_SCHEMA TABLES / VIEWS / COLUMNS.
#[test]
fn views_print_what_mariadb_printed() {
    prints_what_mariadb_printed("views");
}

/// Writing through views: UPDATE / DELETE / INSERT through updatable views (also a view over
/// a view, an alias with ORDER BY / LIMIT), 1348 / 1054 / 1288 / 1471 for what cannot be
/// written, IS_UPDATABLE, WITH [CASCADED | LOCAL] CHECK OPTION (1369) as MariaDB applies it,
/// and LAST_INSERT_ID after inserts into a table with a foreign key.
#[test]
fn views_written_through_print_what_mariadb_printed() {
    prints_what_mariadb_printed("views_written_through");
}

/// View edges a review found: prepared statements after DROP VIEW (1146), views written the
/// way MariaDB stores them (`db`.`t`.`c`), names a view does not show in writes through it
/// (1054 'FROM' / 'SET', 1423, 1471 for a column twice), `INSERT INTO v SET`, MariaDB's
/// spellings (`a MOD (b + 1)`, `!exists(...)`, `!(... <=> ...)`, `CAST(... AS CHAR CHARSET
/// binary)`), a column named `mod`, WITH names scoped when a view is created from another
/// database, writes through broken views (1356), swapping views with RENAME TABLE, 1368,
/// 1166, 1351, 1347, CREATE VIEW IF NOT EXISTS, ALTER VIEW keeping ALGORITHM, a view name
/// with a backquote.
#[test]
fn view_edges_print_what_mariadb_printed() {
    prints_what_mariadb_printed("view_edges");
}

/// `regexp_trim_dual.sql`: `REGEXP` / `RLIKE` / `NOT REGEXP` (case-insensitive, binary
/// operands byte-exact, POSIX classes), `REGEXP_REPLACE` with `\N` groups and a literal
/// `$`, `REGEXP_SUBSTR`, `REGEXP_INSTR` counting characters; `TRIM(LEADING / TRAILING /
/// BOTH r FROM s)` removing repetitions of a string; `<<` / `>>` (shifts past 63 bits are 0);
/// `UNIX_TIMESTAMP(date)` (NULL outside the TIMESTAMP range) and `FROM_UNIXTIME(n[, fmt])`;
/// `CONVERT(x USING cs)` and `CONVERT(x, type)`; `FROM DUAL` (and 1096 for `*`, a quoted
/// `dual` being a table name); column widths of expressions that are never NULL; `REGEXP
/// NULL`, `TRIM(LEADING FROM s)`; LIKE / REGEXP binding tighter than `=`, `<`, `||`, IN and
/// BETWEEN (but not NOT IN / NOT BETWEEN), as MariaDB reads them.
#[test]
fn regexp_trim_dual_print_what_mariadb_printed() {
    prints_what_mariadb_printed("regexp_trim_dual");
}

/// `window_functions.sql`: ROW_NUMBER / RANK / DENSE_RANK / PERCENT_RANK / CUME_DIST /
/// NTILE / LAG / LEAD / FIRST_VALUE / LAST_VALUE / NTH_VALUE and COUNT / SUM / AVG / MIN /
/// MAX over windows: PARTITION BY (case-insensitive text, binary bytes), ORDER BY with ties
/// and NULLs, the default frames (peers included with ORDER BY, the partition without),
/// `ROWS` frames with offsets on either side, `RANGE ... CURRENT ROW ... UNBOUNDED
/// FOLLOWING`; windows over WHERE, over GROUP BY (`RANK() OVER (ORDER BY SUM(x))`,
/// `SUM(SUM(x)) OVER ()`), with HAVING, DISTINCT, ORDER BY / LIMIT on the numbered rows,
/// derived tables, named windows (`WINDOW w AS`, `OVER (w ROWS ...)`), in CTAS and views
/// (not updatable: 1288); 4009 / 4010 / 4015 / 4074 / 4024.
#[test]
fn window_functions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("window_functions");
}

/// `calc_found_rows_and_division.sql`: `SELECT SQL_CALC_FOUND_ROWS ... LIMIT` then
/// `FOUND_ROWS()` counting the rows without LIMIT / OFFSET (also grouped, DISTINCT, a page
/// past the end, no LIMIT, and a plain SELECT afterwards); AVG of DECIMAL at its scale;
/// division by zero (`/`, DIV, `%`, MOD) in the values INSERT / UPDATE / INSERT ... SELECT /
/// ON DUPLICATE KEY UPDATE write is 1365, as MariaDB's strict mode.
#[test]
fn calc_found_rows_and_division_print_what_mariadb_printed() {
    prints_what_mariadb_printed("calc_found_rows_and_division");
}

/// `with_recursive.sql`: `WITH RECURSIVE` — number series, aggregates over one, a subtree
/// and a path to the root of a hierarchy (the step joining the table with the query
/// itself, in both join spellings), paths built with CONCAT, UNION DISTINCT ending a cycle,
/// Fibonacci with ORDER BY / LIMIT outside, a recursive query joined with itself, date
/// series, WITH RECURSIVE entries that do not recurse, a view holding one; 4008 for the
/// query in a subquery of its step or aggregated there, 1222, `max_recursive_iterations`.
#[test]
fn with_recursive_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("with_recursive");
}

/// `scalar_functions.sql`: MD5, SHA1 / SHA, SHA2 (224–512), CRC32, UUID, RAND (also ORDER
/// BY RAND()), TRUNCATE, FORMAT (rounding half away from zero, thousands separators),
/// ISNULL, PI and trigonometry, BIT_COUNT, ELT, CHAR, ORD (multibyte), CONV / BIN / OCT,
/// UNHEX, TO_BASE64 / FROM_BASE64, INET_ATON / INET_NTOA, TIME_TO_SEC / SEC_TO_TIME, WEEK
/// in all eight modes at year boundaries, YEARWEEK, WEEKOFYEAR, STR_TO_DATE (`%m %d %Y %e
/// %M %b %y %H %i %r %T %j`), POSITION, EXTRACT, CURTIME.
#[test]
fn scalar_functions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("scalar_functions");
}

/// `review_edges_windows_regex_found_rows.sql` (cases a review found): FOUND_ROWS() after
/// `SELECT SQL_CALC_FOUND_ROWS ... UNION [ALL] ... LIMIT`; division by zero in a subquery
/// whose value INSERT / UPDATE write is 1365, and NULL under a sql_mode without
/// ERROR_FOR_DIVISION_BY_ZERO; REGEXP with `BINARY` on either side, on binary columns and
/// hex literals byte by byte (REGEXP_INSTR counting bytes); REGEXP_REPLACE with an empty
/// pattern; LAG / LEAD with negative and NULL offsets, NTH_VALUE(x, 0).
#[test]
fn review_edges_windows_regex_found_rows_print_what_mariadb_printed() {
    prints_what_mariadb_printed("review_edges_windows_regex_found_rows");
}

/// `json_functions.sql`: a `JSON` column (text compared byte by byte), the query ORMs send
/// (`json_unquote(json_extract(meta, '$."foo"')) = 'bar'`, case-sensitive), JSON_EXTRACT
/// (members, array items, several paths, `.*` / `[*]` wildcards; printed in MariaDB's form
/// keeping numbers as written), arithmetic and SUM over extracted numbers, JSON_VALUE,
/// JSON_TYPE, JSON_KEYS, JSON_LENGTH, JSON_OBJECT / JSON_ARRAY over columns and nested in
/// each other, JSON_QUOTE / JSON_UNQUOTE, JSON_VALID, UPDATE writing a built document.
#[test]
fn json_functions_print_what_mariadb_printed() {
    prints_what_mariadb_printed("json_functions");
}

/// `check_constraints.sql`: CHECK constraints declared with a column and as table constraints
/// (named and `CONSTRAINT_n`), a JSON column's implicit `json_valid` check; error 4025 from
/// INSERT (multi-row, ON DUPLICATE KEY UPDATE, REPLACE, IGNORE), UPDATE and through a view;
/// NULL passes; 1826 / 1054 / 1970 / 1901 at CREATE; SHOW CREATE TABLE and
/// INFORMATION_SCHEMA.CHECK_CONSTRAINTS / TABLE_CONSTRAINTS in MariaDB's spelling (sorted
/// case-insensitively, as MariaDB's INFORMATION_SCHEMA columns are).
#[test]
fn check_constraints_print_what_mariadb_printed() {
    prints_what_mariadb_printed("check_constraints");
}

/// `check_constraints_altered.sql`: ALTER TABLE ADD [CONSTRAINT name] CHECK checks every
/// stored row first (4025, nothing changes) and reports the rows; 1826 for a taken name;
/// DROP CONSTRAINT (1091, a note with IF EXISTS); the checks left still hold.
#[test]
fn check_constraints_altered_print_what_mariadb_printed() {
    prints_what_mariadb_printed("check_constraints_altered");
}

/// `check_constraints_review.sql` (a review's findings): backslash escapes in a stored check
/// (CASE, LIKE ... ESCAPE) keep their meaning; multi-row INSERT IGNORE / INSERT IGNORE ...
/// SELECT skip a failing row with a warning, a one-row INSERT IGNORE fails; a JSON column's
/// own check replaces the implicit one; DROP CONSTRAINT does not reach a column's check; a
/// check may not take a key's name (1826) nor read an AUTO_INCREMENT column (1901); a later
/// explicit `CONSTRAINT_1` moves an unnamed check to `CONSTRAINT_2`; backquotes in a check's
/// name in 4025; INFORMATION_SCHEMA table names compare exactly.
#[test]
fn check_constraints_review_print_what_mariadb_printed() {
    prints_what_mariadb_printed("check_constraints_review");
}

/// `temporary_tables.sql`: CREATE TEMPORARY TABLE (plain, LIKE, AS SELECT) hides the
/// database's table of that name, is not listed, keeps its rows through a ROLLBACK of the
/// transaction around CREATE ... SELECT; ALTER / CREATE INDEX / TRUNCATE / RENAME of one; DROP
/// [TEMPORARY] TABLE takes it before the database's table (1051 for DROP TEMPORARY of another);
/// views never see one (1352); a foreign key in one is 1005; CHECK constraints hold in one;
/// LOCK TABLES does not cover one; CREATE TEMPORARY TABLE leaves the transaction open, plain
/// DROP TABLE of one commits it.
#[test]
fn temporary_tables_print_what_mariadb_printed() {
    prints_what_mariadb_printed("temporary_tables");
}

/// `replace_identical_rows.sql`: REPLACE of a row identical to the one holding the table's
/// only unique key replaces nothing (1 row affected, no duplicate), unless a foreign key
/// references the table or another unique key exists (2, as a delete and an insert).
#[test]
fn replace_identical_rows_print_what_mariadb_printed() {
    prints_what_mariadb_printed("replace_identical_rows");
}

/// `drop_table_lists.sql`: DROP [TEMPORARY] TABLE of several names drops the tables that are
/// there even when a name is a view (1965) or names nothing (1051), the error coming after;
/// with IF EXISTS, notes.
#[test]
fn drop_table_lists_print_what_mariadb_printed() {
    prints_what_mariadb_printed("drop_table_lists");
}

/// `check_added_with_column.sql`: ALTER TABLE ADD COLUMN with a CHECK in its definition (and
/// a JSON column's implicit `json_valid`) adds the check with the column, enforced from then
/// on; the stored rows are not read through it (as MariaDB's instant ADD COLUMN); 1054 / 1901
/// as at CREATE TABLE.
#[test]
fn check_added_with_column_print_what_mariadb_printed() {
    prints_what_mariadb_printed("check_added_with_column");
}

/// `warnings_after_errors.sql`: after a failed statement SHOW WARNINGS / SHOW ERRORS list its
/// error (after the warnings it raised first), `@@warning_count` / `@@error_count` count it.
#[test]
fn warnings_after_errors_print_what_mariadb_printed() {
    prints_what_mariadb_printed("warnings_after_errors");
}

/// `temporary_tables_review.sql` (a review's findings): under LOCK TABLES a TEMPORARY table
/// is written, truncated, altered and dropped without being locked; RENAME TABLE of TEMPORARY
/// tables follows the names earlier pairs give (`a TO c, c TO d`, swaps), 1146 for a name an
/// earlier pair took away; ALTER TABLE ADD FOREIGN KEY of one is 1005 (errno 150).
#[test]
fn temporary_tables_review_print_what_mariadb_printed() {
    prints_what_mariadb_printed("temporary_tables_review");
}

/// `shrink_text_columns.sql`: MODIFY of a text or BLOB column to a type too small for a
/// stored value is 1406 ("Data too long"), a VARCHAR made shorter 1265, as MariaDB.
#[test]
fn shrink_text_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("shrink_text_columns");
}

/// `default_rows.sql`: `INSERT INTO t [()] VALUES (), ...` inserts rows of defaults (1364 for
/// a NOT NULL column without one); an empty first row makes every row empty (1136 else).
#[test]
fn default_rows_print_what_mariadb_printed() {
    prints_what_mariadb_printed("default_rows");
}

/// `optimize_check_and_null_alter.sql`: `ALTER TABLE t FORCE` / `ENGINE = InnoDB` /
/// `ALGORITHM = COPY | INPLACE` rebuild the table (rows reported as MariaDB does, a TEMPORARY
/// table's included); OPTIMIZE TABLE recreates, CHECK TABLE reads and counts, both over table
/// lists with missing tables and views reported in their rows.
#[test]
fn optimize_check_and_null_alter_print_what_mariadb_printed() {
    prints_what_mariadb_printed("optimize_check_and_null_alter");
}

/// `long_values.sql`: TINY / MEDIUM / LONG TEXT and BLOB columns keep their names and limits
/// (1406 past them), JSON is a LONGTEXT with its check; values of 5 KB to 300 KB are written,
/// read, updated, rolled back, copied by CREATE TABLE ... SELECT and ALTER TABLE, and deleted.
#[test]
fn long_values_print_what_mariadb_printed() {
    prints_what_mariadb_printed("long_values");
}

/// `binary_columns.sql`: BINARY(n) pads with zero bytes and VARBINARY(n) keeps its length
/// (1406 past either, 1074 for a length past MariaDB's limits); SHOW CREATE TABLE, SHOW
/// COLUMNS and information_schema name them; a duplicate key shows bytes as `\xHH`; ALTER
/// TABLE shrinks (1265) and converts between them; CREATE TABLE ... SELECT keeps the types.
#[test]
fn binary_columns_print_what_mariadb_printed() {
    prints_what_mariadb_printed("binary_columns");
}

/// `row_constructors.sql`: `(a, b) = (1, 2)`, `(a, b) > (x, y)` (keyset pagination, also
/// prepared), `(a, b) [NOT] IN ((..), (..))` in SELECT, UPDATE and DELETE, with MariaDB's NULL
/// results, and the 1241 / 4078 errors for rows of other widths or single values.
#[test]
fn row_constructors_print_what_mariadb_printed() {
    prints_what_mariadb_printed("row_constructors");
}

/// `create_or_replace.sql`: CREATE OR REPLACE [TEMPORARY] TABLE drops a table of that name
/// first (plain, LIKE and AS SELECT forms), commits an open transaction, and refuses IF NOT
/// EXISTS with it (1221), a view's name (1965), a parent table (1451) and a query reading the
/// table it replaces (1093).
#[test]
fn create_or_replace_print_what_mariadb_printed() {
    prints_what_mariadb_printed("create_or_replace");
}

/// `alter_if_exists.sql`: MariaDB's IF [NOT] EXISTS on ALTER TABLE clauses (ADD COLUMN /
/// INDEX / KEY / UNIQUE / FOREIGN KEY, DROP COLUMN / INDEX / KEY / FOREIGN KEY, MODIFY /
/// CHANGE COLUMN), CREATE INDEX IF NOT EXISTS and DROP INDEX IF EXISTS: skipped clauses give
/// their notes (1060, 1061, 1091, 1054), the others run, also several in one statement.
#[test]
fn alter_if_exists_print_what_mariadb_printed() {
    prints_what_mariadb_printed("alter_if_exists");
}

/// `update_delete_ignore.sql`: UPDATE IGNORE leaves rows a unique key, the primary key or a
/// foreign key refuses as they were (silently, as MariaDB 10.11) and rows failing a CHECK
/// with warning 4025 (not matched); DELETE IGNORE keeps parent rows with warning 1451 each;
/// with LOW_PRIORITY / QUICK and inside a transaction.
#[test]
fn update_delete_ignore_print_what_mariadb_printed() {
    prints_what_mariadb_printed("update_delete_ignore");
}

/// `select_into_variables.sql`: SELECT ... INTO @a, @b before FROM or after it (warning
/// 1287, as MariaDB), without FROM, with a subquery; no row is warning 1329, several 1172,
/// another number of variables 1222.
#[test]
fn select_into_variables_print_what_mariadb_printed() {
    prints_what_mariadb_printed("select_into_variables");
}

/// `lenient_values.sql`: values that do not fit their column under `sql_mode = ''` and
/// under IGNORE are clamped or cut with MariaDB's warnings (1264, 1265, 1366, 1048, 1364
/// once per statement) in INSERT, multi-row INSERT, INSERT ... SELECT, UPDATE, REPLACE, ON
/// DUPLICATE KEY UPDATE and CREATE TABLE ... SELECT; the same values are errors in strict
/// mode, and harmless losses (decimal rounding, trailing spaces, a dropped time) are notes
/// in both; a one-row INSERT of NULL into NOT NULL fails even outside strict mode; 100
/// warnings are counted with 64 listed; SHOW COUNT(*) WARNINGS, SHOW WARNINGS LIMIT; FLOAT
/// columns print six significant digits.
#[test]
fn lenient_values_print_what_mariadb_printed() {
    prints_what_mariadb_printed("lenient_values");
}

/// `orm_ddl_and_time_zones.sql`: what ORMs send that tierdb refused before: a DEFAULT in
/// parentheses (SQLAlchemy's `server_default=func.now()` is `DEFAULT (now())`) and
/// CONVERT_TZ, which Django calls on every connection (offsets, SYSTEM; a named zone is NULL
/// without time zone tables; MariaDB's -12:59..+13:00 range); 1582 names the function as
/// spelled.
#[test]
fn orm_ddl_and_time_zones_print_what_mariadb_printed() {
    prints_what_mariadb_printed("orm_ddl_and_time_zones");
}

/// `admin_statements.sql`: what admin tools send (`mariadb-admin flush-*`, `mariadb-slap`):
/// CREATE / DROP SCHEMA with their 1007 / 1008 notes, a SERIAL column (BIGINT UNSIGNED NOT
/// NULL AUTO_INCREMENT UNIQUE), FLUSH TABLES / PRIVILEGES / LOGS / HOSTS (nothing to flush;
/// an open transaction is committed), DO.
#[test]
fn admin_statements_print_what_mariadb_printed() {
    prints_what_mariadb_printed("admin_statements");
}

/// `raw_bytes_in_text.sql` (raw non-UTF-8 bytes in the script): a utf8mb4 column refuses
/// bytes that are not UTF-8 (1366 Incorrect string value) in strict mode and stores `?` for
/// each with that warning otherwise, while BLOB keeps them; an identifier with valid
/// non-ASCII characters in the same statement as raw bytes keeps its spelling; CONVERT_TZ
/// returns a time outside TIMESTAMP's range as it is; KILL NULL names thread 0.
#[test]
fn raw_bytes_in_text_print_what_mariadb_printed() {
    prints_what_mariadb_printed("raw_bytes_in_text");
}

/// `bigint_unsigned.sql`: BIGINT UNSIGNED over its whole range (values above 2^63 - 1
/// stored, primary and secondary index lookups and ranges, ORDER BY, MIN / MAX / SUM,
/// arithmetic that leaves the range is 1690, arithmetic with an unsigned column is unsigned
/// (past i64::MAX), casts and bit operations on 64 unsigned bits,
/// CREATE TABLE ... SELECT keeps the type, LIMIT 18446744073709551615).
#[test]
fn bigint_unsigned() {
    prints_what_mariadb_printed("bigint_unsigned");
}

/// `decimal_arithmetic.sql`: decimal literals and DECIMAL columns in + - * / are typed
/// DECIMAL at MariaDB's scales, shown, compared and grouped at that scale (`0.1 + 0.2` is
/// 0.3, `p + 0.01 = 0.21` holds); casts and bit operations at the edges of 64 bits; a column
/// holding -1 and 2^64 - 1 is DECIMAL(21,0); a used-up BIGINT UNSIGNED AUTO_INCREMENT is 1467.
#[test]
fn decimal_arithmetic() {
    prints_what_mariadb_printed("decimal_arithmetic");
}

/// `exact_decimals.sql`: DECIMAL values past a double's 15 digits are stored, summed (SUM,
/// AVG, window SUM), computed (+ - * /, ROUND, TRUNCATE, CAST, CEIL, FLOOR, ABS) and compared
/// (=, <, IN, BETWEEN, joins, a string beside a DECIMAL column) exactly; divisions keep
/// MariaDB's inner digits (`(1/7)*10000000000` is 1428571420.0000) and compare at their
/// scale (`2/3 = 0.6667` holds); DECIMAL keys looked up by = and IN; DIV; DECIMAL UNSIGNED
/// refuses values below zero (1264); window functions over a table without a primary key.
#[test]
fn exact_decimals() {
    prints_what_mariadb_printed("exact_decimals");
}

/// `timestamp_range.sql`: TIMESTAMP takes 1970-01-01 00:00:01 ..= 2038-01-19 03:14:07 and
/// the zero value; outside is 1292 in strict mode (INSERT, UPDATE, INSERT ... SELECT), 1264
/// with the zero value stored otherwise (IGNORE, non-strict sql_mode).
#[test]
fn timestamp_range() {
    prints_what_mariadb_printed("timestamp_range");
}

/// `with_rollup.sql`: GROUP BY ... WITH ROLLUP over one and two columns (case-insensitive
/// groups, NULL keys), with HAVING, LIMIT, DISTINCT, GROUP_CONCAT, positions and a derived
/// table; no rows give no totals; ORDER BY with it is 1221.
#[test]
fn with_rollup_print_what_mariadb_printed() {
    prints_what_mariadb_printed("with_rollup");
}

/// `json_aggregates.sql`: JSON_ARRAYAGG (NULLs as null, DECIMAL digits kept, DISTINCT,
/// ORDER BY, LIMIT) and JSON_OBJECTAGG (NULL keys skipped) per group, with ROLLUP and inside
/// JSON_LENGTH; GROUP_CONCAT ... LIMIT; 1582 for a wrong argument count.
#[test]
fn json_aggregates_print_what_mariadb_printed() {
    prints_what_mariadb_printed("json_aggregates");
}

/// `division_by_zero_warnings.sql`: a division by zero that gives NULL (SELECT list, WHERE,
/// UPDATE IGNORE, INSERT IGNORE) raises warning 1365 per evaluation, counted at the end of
/// result sets and in OK packets and listed by SHOW WARNINGS; a plain INSERT is error 1365.
#[test]
fn division_by_zero_warnings_print_what_mariadb_printed() {
    prints_what_mariadb_printed("division_by_zero_warnings");
}

/// `load_data_local.sql`: LOAD DATA LOCAL INFILE of tab-separated, CSV (quoted fields,
/// doubled and escaped quotes, a line break inside quotes, CRLF lines, IGNORE n LINES / ROWS),
/// `|`-separated and prefixed (LINES STARTING BY) files: warnings 1261 / 1262 / 1263 / 1265 /
/// 1366 / 1062 as MariaDB words them, LOCAL reading as IGNORE in strict mode and not, field
/// lists with @variables and SET, `\N` and `NULL`, REPLACE and IGNORE with the info line's
/// counts, an empty file, a load rolled back with its transaction, 1146 and 1083; REPAIR
/// TABLE's note.
#[test]
fn load_data_local_prints_what_mariadb_printed() {
    prints_what_mariadb_printed("load_data_local");
}

/// `select_into_outfile.sql`: SELECT ... INTO OUTFILE (default, CSV with OPTIONALLY
/// ENCLOSED, ENCLOSED with no escape character and LINES STARTING BY, every column kind,
/// NULLs, NUL bytes, tabs and newlines in values) and INTO DUMPFILE, 1086 for a file that is
/// there, 1172 for DUMPFILE of several rows, server-side LOAD DATA INFILE of what was written
/// (strict: 1062, 1366; IGNORE, REPLACE) and 13 for a missing file; DOUBLE values printed
/// where MariaDB puts the point. Every file written equals MariaDB's byte for byte.
#[test]
fn select_into_outfile_writes_what_mariadb_wrote() {
    const FILES: [&str; 8] = [
        "a.txt", "b.csv", "c.csv", "d.bin", "e.txt", "f.txt", "g.txt", "h.bin",
    ];
    let path = |f: &str| format!("/tmp/tierdb_outfile_fixture_{f}");
    for f in FILES {
        let _ = std::fs::remove_file(path(f));
    }
    prints_what_mariadb_printed("select_into_outfile");
    for f in FILES {
        let got = std::fs::read(path(f)).unwrap_or_else(|e| panic!("{}: {e}", path(f)));
        let want =
            std::fs::read(fixture(&format!("outfile/{f}.mariadb_10_11"))).expect("recorded file");
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{f} differs from the file MariaDB wrote"
        );
        assert_eq!(got, want, "{f} differs from the file MariaDB wrote");
        let _ = std::fs::remove_file(path(f));
    }
}

fn prints_what_mariadb_printed(name: &str) {
    assert!(
        common::exists(MARIADB),
        "the mariadb client is not installed at {MARIADB}"
    );
    let script = std::fs::File::open(fixture(&format!("{name}.sql"))).expect("script");
    let server = TestServer::start();
    let mut child = Command::new(MARIADB)
        .args([
            "-h127.0.0.1",
            &format!("-P{}", server.port),
            "-uroot",
            "--batch",
            "--force",
            "-vvv",
        ])
        .stdin(Stdio::from(script))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mariadb");
    // Read as bytes: a script may hold raw bytes that are not UTF-8 (the client echoes them;
    // both sides are then read the same lossy way, and HEX() in the script shows the bytes).
    let mut out = Vec::new();
    let mut err = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut out)
        .expect("read stdout");
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_end(&mut err)
        .expect("read stderr");
    child.wait().expect("mariadb exits");
    let (out, err) = (
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    );
    let read = |f: String| {
        String::from_utf8_lossy(&std::fs::read(fixture(&f)).expect("expected output")).into_owned()
    };
    let want_out = read(format!("{name}.mariadb_10_11.out"));
    let want_err = read(format!("{name}.mariadb_10_11.err"));
    let got = without_timings(&out);
    if got != want_out {
        let first = got
            .lines()
            .zip(want_out.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(got.lines().count().min(want_out.lines().count()));
        let context = |s: &str| -> String {
            s.lines()
                .skip(first.saturating_sub(8))
                .take(16)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "output differs from MariaDB's at line {}:\n--- tierdb ---\n{}\n--- MariaDB ---\n{}",
            first + 1,
            context(&got),
            context(&want_out)
        );
    }
    assert_eq!(err, want_err, "error lines differ from MariaDB's");
}
