#!/usr/bin/env python3
"""Writes a few well-formed seed inputs per fuzz target into seeds/<target>/.

Run from fuzz/: python3 seeds/gen.py. Seeds only help the fuzzer past magic numbers and
CRCs faster; every target also works from an empty corpus.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


T = _table()


def crc32c(b, c=0):
    c ^= 0xFFFFFFFF
    for x in b:
        c = T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


PAGE = 16384

# --- redo_record ---------------------------------------------------------------------
txn_end = bytes([2]) + struct.pack("<Q", 7) + b"\x01"
write("redo_record", "txn_end", txn_end)
diff = bytes([1]) + struct.pack("<QH", 9, 1) + struct.pack("<QB", 4, 1)
ops = struct.pack("<HH", 100, 3) + b"abc"  # literal
ops += struct.pack("<HHH", 200, 0x8000 | 16, 202)  # move
diff += struct.pack("<H", 2) + ops + struct.pack("<I", 4) + b"undo"
write("redo_record", "mtr_diff", diff)
fill = bytes([1]) + struct.pack("<QH", 9, 1) + struct.pack("<QB", 4, 1)
fops = struct.pack("<HHB", 300, 0xC000 | 1000, 0)  # fill of zeros
fops += struct.pack("<HHB", 16000, 0xC000 | 1000, 7)  # fill past the page end: refused
fill += struct.pack("<H", 2) + fops + struct.pack("<I", 0)
write("redo_record", "mtr_fill", fill)
img_body = bytes(range(256)) * 4
img = bytes([1]) + struct.pack("<QH", 9, 1) + struct.pack("<QB", 4, 0)
img += struct.pack("<HH", len(img_body), PAGE - len(img_body)) + img_body
img += struct.pack("<I", 0)
write("redo_record", "mtr_image", img)

# --- wal_reader -----------------------------------------------------------------------
def rec(payload):
    lb = struct.pack("<I", len(payload))
    return lb + struct.pack("<I", crc32c(payload, crc32c(lb))) + payload


stream = rec(txn_end) + rec(diff) + rec(b"x" * 40)
write("wal_reader", "three_records", b"\x00" + stream)
write("wal_reader", "three_records_then_garbage", b"\x00" + stream + b"\x05\x00\x00\x00garbage")
write("wal_reader", "split_mid_record", b"\x01" + struct.pack("<H", 30) + stream)

# --- bpe_formats ----------------------------------------------------------------------
regions = [(0, 5), (1, 6)]
entries = [(10, 99, 0, 0, 1), (11, 98, 1, 3, 0)]
body = b"".join(struct.pack("<IQ", r, s) for r, s in regions)
body += b"".join(struct.pack("<QIIHBx", *e) for e in entries)
head = bytearray(64)
head[0:8] = b"TDBPEMAN"
struct.pack_into("<IIQQI", head, 8, 1, 1, 16 << 20, 1234, len(regions))
struct.pack_into("<Q", head, 40, len(entries))
struct.pack_into("<I", head, 56, crc32c(body))
struct.pack_into("<I", head, 60, crc32c(bytes(head[:60])))
write("bpe_formats", "manifest", bytes(head) + body)
hl = 64 + 2 * 24
h = bytearray(hl)
h[0:8] = b"TDBPEREG"
struct.pack_into("<IIQIIII", h, 8, 1, hl, 3, 0, 7, 2, 2)
struct.pack_into("<QQI", h, 64, 10, 99, 0xABCD)
struct.pack_into("<QQI", h, 88, 11, 98, 0x1234)
c = crc32c(bytes(h[44:]), crc32c(bytes(h[:40])))
struct.pack_into("<I", h, 40, c)
write("bpe_formats", "region_header", bytes(h))

# --- key_row_codecs -------------------------------------------------------------------
key = b"\x00" + b"\x02" + struct.pack(">Q", (5 ^ (1 << 63)) & 0xFFFFFFFFFFFFFFFF)
key += b"\x03" + struct.pack(">Q", 0x3FF0000000000000 | (1 << 63))
key += b"\x04ab\x00\xffc\x00\x01"
write("key_row_codecs", "null_int_double_bytes", key)
# An integer above i64::MAX (tag 05), and the non-canonical 05 form of a small one.
write("key_row_codecs", "uint_upper_half", b"\x05" + struct.pack(">Q", (1 << 64) - 1))
write("key_row_codecs", "uint_small_non_canonical", b"\x05" + struct.pack(">Q", 7))

# --- page_verify ----------------------------------------------------------------------
page = bytearray(PAGE)
page[0:4] = b"TDBP"
struct.pack_into("<QQBB", page, 8, 4, 42, 2, 1)
struct.pack_into("<I", page, 4, crc32c(bytes(page[8:])))
write("page_verify", "sealed_leaf", bytes(page))

# --- packet_decoder -------------------------------------------------------------------
def chunks(*payloads):
    return b"".join(bytes([len(p)]) + p for p in payloads)


execute = b"\x17" + struct.pack("<IBI", 1, 0, 1) + b"\x00" + b"\x01"
execute += struct.pack("<HH", 8, 253) + struct.pack("<q", 42) + b"\x03abc"
cmds = chunks(
    b"\x03echo hi",
    b"\x03rows 3",
    b"\x03error 1064",
    b"\x16select ?",
    execute,
    b"\x18" + struct.pack("<IH", 1, 0) + b"data",
    b"\x1c" + struct.pack("<II", 1, 10),
    b"\x1a" + struct.pack("<I", 1),
    b"\x19" + struct.pack("<I", 1),
    b"\x04t\x00",
    b"\x02db2",
    b"\x0e",
    b"\x11root\x00\x00test\x00",
    b"\x1f\x00",
    b"\x01",
)
write("packet_decoder", "framed_commands", bytes([3 | 8]) + cmds)
write("packet_decoder", "framed_commands_small_packets", bytes([3 | 8 | 4]) + cmds)
write("packet_decoder", "raw_after_login", bytes([2]) + b"\x07\x00\x00\x00\x03echo a")

# --- sql_text -------------------------------------------------------------------------
sql = [
    "SELECT id, k, c FROM t WHERE k > 0 ORDER BY id DESC LIMIT 2",
    "INSERT INTO t VALUES (?, ?, ?)\nUPDATE t SET k = k + 1 WHERE id = ?\nDELETE FROM t WHERE id = 2",
    "BEGIN\nINSERT INTO t (id, k) VALUES (10, 10)\nROLLBACK\nSELECT COUNT(*), SUM(k) FROM t GROUP BY k HAVING COUNT(*) > 0",
    "SELECT * FROM t FORCE INDEX (kk) WHERE k BETWEEN 1 AND 3",
    "EXPLAIN SELECT * FROM t WHERE id IN (1, 2, 3)",
    "SHOW VARIABLES LIKE 'auto%'\nSHOW TABLES\nSHOW STATUS\nSELECT @@version, DATABASE()",
    "SET autocommit = 0\nINSERT INTO t VALUES (4, 4, 'd')\nCOMMIT",
    "CREATE TABLE u (a INT PRIMARY KEY, b CHAR(3) DEFAULT 'x')\nINSERT INTO u SELECT id, c FROM t\nDROP TABLE u",
    "SELECT CASE WHEN k IS NULL THEN 'n' ELSE CONCAT(c, 'z') END, CAST(k AS SIGNED) FROM t",
    "SELECT 9223372036854775807 + 1\nSELECT 1 / 0\nSELECT 0x41 LIKE 'a%'",
    "LOCK TABLES t READ /*!32311 LOCAL */, t WRITE\nINSERT INTO t VALUES (5, 5, 'e')\nUNLOCK TABLES",
    "/*!40000 ALTER TABLE `t` DISABLE KEYS */\nALTER TABLE t ADD INDEX k2 (k, c)\nALTER TABLE t DROP INDEX k2",
    "/*M!100100 SET WAIT_TIMEOUT=DEFAULT */\nSHOW CREATE DATABASE IF NOT EXISTS `db`\n/*M!999999\\- x */ SELECT 1",
    "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema=database() ORDER BY ordinal_position\nSELECT * FROM INFORMATION_SCHEMA.TABLES",
    "CREATE TABLE u (a INT, b VARCHAR(5) UNIQUE, c INT, UNIQUE KEY bc (b, c))\nINSERT INTO u VALUES (1, 'x', NULL), (1, 'x', 2)\nCREATE UNIQUE INDEX ua ON u (a)",
    "INSERT INTO t VALUES (1, 2, 'a') ON DUPLICATE KEY UPDATE k = VALUES(k) + k, c = VALUES(c)\nREPLACE INTO t VALUES (1, 3, 'b')\nINSERT IGNORE INTO t VALUES (1, 1, 'c')\nSHOW WARNINGS",
    "SELECT t.id, u.k FROM t JOIN t AS u ON u.id = t.k LEFT JOIN t v ON v.c = u.c WHERE t.k > 1 ORDER BY 1 LIMIT 3\nSELECT COUNT(*) FROM t, t AS x",
    "SELECT id FROM t WHERE k IN (SELECT k FROM t WHERE id > ?) AND EXISTS (SELECT 1 FROM t)\nSELECT (SELECT MAX(id) FROM t) + 1\nDELETE FROM t WHERE id NOT IN (SELECT k FROM t)",
    "SELECT id FROM t UNION SELECT k FROM t UNION ALL (SELECT 1 ORDER BY 1 LIMIT 1) ORDER BY 1 DESC LIMIT 2\nUPDATE t SET k = 1 ORDER BY id DESC LIMIT 1\nCREATE TABLE u LIKE t",
    "SELECT DATE_FORMAT('2024-02-29 13:05:09.5', '%W %D %M %Y %r %j %f %%'), YEAR(c), LEFT(c, k), RIGHT(c, -1), REPLACE(c, 'a', '') FROM t",
    "ALTER TABLE t ADD COLUMN d DECIMAL(6,2) NOT NULL\nSELECT d, SUM(d) FROM t GROUP BY d ORDER BY d DESC\nSELECT * FROM t WHERE d BETWEEN '1' AND 2.5",
    "CREATE TABLE h (id INT NOT NULL AUTO_INCREMENT, v INT, KEY xid (id))\nINSERT INTO h (v) VALUES (1), (1)\nUPDATE h SET v = 2 WHERE v = 1 LIMIT 1\nDELETE FROM h\nDROP INDEX xid ON h",
    "CREATE TABLE w (s VARCHAR(9) COLLATE utf8mb4_bin PRIMARY KEY, n CHAR(4) CHARACTER SET latin1 UNIQUE) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci\nINSERT INTO w VALUES ('\u00e9A ', 'Ab'), ('a', 'aB ')\nSELECT * FROM w WHERE BINARY s = 'a' OR n COLLATE utf8mb4_bin LIKE 'A%' ORDER BY BINARY n, s COLLATE utf8mb4_general_ci",
    "RENAME TABLE t TO t2, t2 TO t3\nALTER TABLE t3 RENAME TO t\nRENAME TABLE t TO nodb.t, x TO y\nSELECT COUNT(*) FROM t",
    "SELECT DATE_ADD(c, INTERVAL k MONTH), c - INTERVAL 1.5 HOUR, INTERVAL -1 WEEK + '2024-02-29', ADDDATE(k, k), DATEDIFF(c, NOW()), TIMESTAMPDIFF(QUARTER, c, '9999-12-31') FROM t WHERE c > NOW() - INTERVAL 7 DAY",
    "SELECT k, GROUP_CONCAT(DISTINCT c, id ORDER BY c DESC, id SEPARATOR '|') FROM t GROUP BY k HAVING GROUP_CONCAT(id) LIKE '%1%'",
    "BEGIN\nSELECT id FROM t WHERE k > 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED\nSELECT * FROM t WHERE id = 1 FOR SHARE NOWAIT\nSELECT c FROM t LOCK IN SHARE MODE SKIP LOCKED\nCOMMIT",
    "ALTER TABLE t MODIFY k BIGINT NOT NULL DEFAULT 3\nALTER TABLE t CHANGE c cc VARCHAR(200) COLLATE utf8mb4_bin\nALTER TABLE t RENAME COLUMN cc TO c\nALTER TABLE t ALTER COLUMN k DROP DEFAULT\nALTER TABLE t MODIFY c INT\nSHOW COLLATION LIKE 'utf8%'\nSHOW CHARSET WHERE Maxlen > 1",
    "SELECT id, (SELECT COUNT(*) FROM t AS u WHERE u.k = t.id AND u.c > t.c) FROM t WHERE EXISTS (SELECT 1 FROM t u WHERE u.id = t.k AND NOT EXISTS (SELECT 1 FROM t v WHERE v.k = u.id AND v.c = t.c)) ORDER BY (SELECT MAX(k) FROM t w WHERE w.id < t.id)\nSELECT k, COUNT(*) FROM t GROUP BY k HAVING COUNT(*) >= ALL (SELECT COUNT(*) FROM t x WHERE x.k = t.k)\nUPDATE t SET k = (SELECT MIN(id) FROM t AS y WHERE y.c = t.c) WHERE id = ANY (SELECT k FROM t z WHERE z.id = t.id)\nDELETE FROM t WHERE NOT EXISTS (SELECT 1 FROM t q WHERE q.k = t.id)",
    "ALTER TABLE t DROP COLUMN c, ADD COLUMN z INT DEFAULT 3 FIRST, MODIFY k VARCHAR(5) AFTER z\nALTER TABLE t DROP PRIMARY KEY, ADD PRIMARY KEY (k, id), ADD UNIQUE KEY u (z, k)\nALTER TABLE t CHANGE k kk DECIMAL(6,1) NOT NULL FIRST, DROP COLUMN IF EXISTS nope, DROP INDEX u\nALTER TABLE t MODIFY id INT AUTO_INCREMENT UNIQUE, ALGORITHM=COPY",
    "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ\nSTART TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */\nSELECT * FROM t WHERE k BETWEEN 1 AND 3\nSAVEPOINT sp\nUPDATE t SET k = k + 1\nSELECT COUNT(*) FROM t FOR UPDATE\nROLLBACK TO SAVEPOINT sp\nCOMMIT\nSTART TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY\nSELECT 1 WITH CONSISTENT SNAPSHOT",
    "SELECT * FROM t RIGHT JOIN t AS u ON u.k = t.id LEFT JOIN t v ON v.id = u.k ORDER BY 1\nSELECT k FROM t INTERSECT ALL SELECT id FROM t EXCEPT SELECT 3 ORDER BY k LIMIT 2\n(SELECT c FROM t UNION SELECT k FROM t) EXCEPT DISTINCT SELECT NULL\nSET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE\nSET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
    "SET @q = 'SELECT * FROM t WHERE id > ?', @x = 1\nPREPARE s FROM @q\nEXECUTE s USING @x\nEXECUTE S USING @x, @y\nPREPARE s2 FROM \"INSERT INTO t VALUES (?, ?, ?)\"\nDEALLOCATE PREPARE s\nDROP PREPARE s2\nEXECUTE s",
    "SELECT * FROM t JOIN t AS u USING (id, k) NATURAL LEFT JOIN t v WHERE id > 1 ORDER BY k\nSELECT u.*, c FROM t NATURAL RIGHT JOIN t AS u GROUP BY c\nSELECT * FROM t, t u JOIN t w USING (nope)",
    "CREATE TABLE o (id INT PRIMARY KEY, n INT, ts TIMESTAMP NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP, d DATETIME ON UPDATE NOW())\nINSERT INTO o VALUES (1, 1, NULL, NULL) ON DUPLICATE KEY UPDATE n = n + 1\nUPDATE o SET n = 2\nALTER TABLE o MODIFY ts INT ON UPDATE CURRENT_TIMESTAMP",
    "WITH x (a, b) AS (SELECT id, k FROM t), y AS (SELECT a FROM x WHERE b > ?) SELECT * FROM y JOIN x USING (a) LEFT JOIN (SELECT k, COUNT(*) n FROM t GROUP BY k) AS g ON g.k = x.b\nWITH x AS (SELECT 1), x AS (SELECT 2) SELECT 3\nSELECT * FROM (SELECT id, id FROM t) AS d",
    "CREATE TABLE c (id INT PRIMARY KEY, e INT DEFAULT 7) AS SELECT id, k + 1 AS k1, CONCAT(c, 'x') AS cx, NULL AS n FROM t\nCREATE TABLE IF NOT EXISTS c SELECT 1\nCREATE TABLE d (UNIQUE KEY (k)) SELECT k FROM t\nCREATE TABLE e SELECT id, id FROM t",
    "CREATE TABLE f (id INT PRIMARY KEY, p INT REFERENCES t (id), q INT, CONSTRAINT x FOREIGN KEY ix (q, p) REFERENCES t (k, id) ON DELETE CASCADE ON UPDATE SET NULL)\nINSERT IGNORE INTO f VALUES (1, 1, 1), (2, 9, NULL)\nDELETE FROM t WHERE id = 1\nUPDATE t SET id = id + 10\nALTER TABLE f DROP FOREIGN KEY x, ADD FOREIGN KEY (p) REFERENCES f (id)\nSET foreign_key_checks = 0\nDROP TABLE t\nTRUNCATE TABLE f",
    "CREATE TABLE n (id INT PRIMARY KEY, e ENUM('a','B ','') NOT NULL, f ENUM('x') COLLATE utf8mb4_bin DEFAULT 'x')\nINSERT INTO n VALUES (1, '2', 'X'), (2, 3, NULL)\nUPDATE t JOIN n ON n.id = t.id SET t.c = n.e, n.e = 'a' WHERE t.k > ?\nUPDATE t, n AS m SET m.f = DEFAULT WHERE m.id = t.k\nDELETE LOW_PRIORITY t.*, n FROM t LEFT JOIN n USING (id)\nDELETE FROM n.* USING n, t WHERE n.id = t.id\nUPDATE IGNORE t SET k = 1\nALTER TABLE n MODIFY e ENUM('a','B','','z')",
    "CREATE VIEW v (a, b) AS SELECT id, k * 2 FROM t WHERE k > 0 WITH LOCAL CHECK OPTION\nCREATE OR REPLACE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY INVOKER VIEW w AS SELECT * FROM v UNION SELECT 1, 2\nSELECT * FROM v JOIN w USING (a) WHERE b IN (SELECT b FROM w)\nUPDATE v SET a = a + 1 WHERE b > ? ORDER BY a LIMIT 1\nINSERT INTO v (a) VALUES (9)\nDELETE FROM v WHERE v.a = 1\nALTER VIEW w AS SELECT a FROM v\nRENAME TABLE w TO w2\nSHOW CREATE VIEW v\nDROP VIEW IF EXISTS v, w2, x",
    "SELECT a MOD 2, CAST(a AS CHAR CHARSET utf8mb3), CAST(b AS CHAR(3) CHARACTER SET utf8mb4) FROM (((t JOIN t u ON u.id = t.k)) LEFT JOIN t w ON (w.id = u.id))\nCREATE VIEW x AS SELECT * FROM x\nSHOW TABLE STATUS LIKE 'v%'\nLOCK TABLES v READ, t WRITE",
    "SELECT REPEAT(c, k), LPAD(c, k, 'ab'), RPAD(c, -1, ''), REVERSE(c), INSTR(c, 'A'), LOCATE('a', c, k), SUBSTRING_INDEX(c, 'a', -k), SPACE(k), HEX(c), FIELD(k, id, 1), FIND_IN_SET(c, 'a,b'), STRCMP(c, 'B'), POW(k, id), LOG(k, id), DAYNAME(c), LAST_DAY(c), TO_DAYS(c) FROM t",
    "SELECT c REGEXP '^a(b|c)*$', c NOT RLIKE ?, REGEXP_REPLACE(c, '([a-z])', '\\\\1-'), REGEXP_SUBSTR(c, '[0-9]+'), REGEXP_INSTR(BINARY c, 'x'), TRIM(LEADING 'a' FROM c), TRIM(BOTH 'ab' FROM c), k << 3, k >> id, UNIX_TIMESTAMP(c), FROM_UNIXTIME(k, '%Y'), CONVERT(c USING binary), CONVERT(k, CHAR) FROM t\nSELECT 1 FROM DUAL\nSHOW GRANTS FOR CURRENT_USER()\nSELECT 'x' REGEXP '('",
    "SELECT id, ROW_NUMBER() OVER w, RANK() OVER (PARTITION BY k ORDER BY c DESC), SUM(k) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING), LAG(c, 2) OVER w, NTILE(?) OVER (), FIRST_VALUE(c) OVER (w RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM t WINDOW w AS (ORDER BY k) ORDER BY 2 LIMIT 3\nSELECT k, SUM(SUM(id)) OVER (), CUME_DIST() OVER (ORDER BY COUNT(*)) FROM t GROUP BY k HAVING COUNT(*) > 0\nSELECT id FROM t WHERE ROW_NUMBER() OVER () > 1",
    "WITH RECURSIVE r (n, s) AS (SELECT 1, CAST(c AS CHAR(20)) FROM t WHERE id = 1 UNION ALL SELECT n + 1, CONCAT(s, 'x') FROM r JOIN t ON t.id = r.n WHERE n < ?) SELECT * FROM r\nWITH RECURSIVE q AS (SELECT 1 AS n UNION SELECT n % 3 + 1 FROM q) SELECT n FROM q\nWITH RECURSIVE z (n) AS (SELECT n FROM z UNION ALL SELECT 1) SELECT * FROM z\nSET max_recursive_iterations = 3",
    "SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1, 1\nSELECT FOUND_ROWS()\nINSERT INTO t VALUES (9, 1 / 0, 'z')\nINSERT IGNORE INTO t VALUES (9, 1 DIV 0, 'z')\nSET sql_mode = ''\nUPDATE t SET k = k % 0\nSELECT GET_LOCK('job', 0.1), IS_USED_LOCK('job'), RELEASE_LOCK('job'), RELEASE_ALL_LOCKS()",
    "SELECT MD5(c), SHA2(c, 384), CRC32(c), UUID(), RAND() < 2, TRUNCATE(k, -1), FORMAT(k * 1000.5, 2), CONV(c, 16, -10), BIN(k), UNHEX(c), TO_BASE64(c), FROM_BASE64(c), INET_ATON(c), INET_NTOA(k), SEC_TO_TIME(k), TIME_TO_SEC(c), WEEK(c, k), YEARWEEK(c), STR_TO_DATE(c, '%d/%m/%Y %r'), ELT(k, c, 'b'), CHAR(k, 256), ORD(c), POSITION('a' IN c), EXTRACT(YEAR FROM c) FROM t",
    "CREATE TABLE j (id INT PRIMARY KEY, m JSON)\nINSERT INTO j VALUES (1, '{\"a\": [1, {\"b\": \"x\"}], \"c\": 1.50}')\nSELECT JSON_EXTRACT(m, '$.a[1].b', '$.*'), JSON_UNQUOTE(JSON_EXTRACT(m, '$.\"a\"[0]')), JSON_VALUE(m, '$.c'), JSON_OBJECT('k', m, 'v', JSON_ARRAY(1, NULL)), JSON_KEYS(m), JSON_LENGTH(m, '$.a'), JSON_TYPE(m), JSON_VALID(m), JSON_QUOTE(m) FROM j WHERE JSON_EXTRACT(m, '$.c') > 1",
    "CREATE TABLE ck (id INT PRIMARY KEY, a INT CHECK (a > 0 AND a NOT IN (3, 4)), d JSON, s VARCHAR(9) CHECK (s NOT LIKE 'x%' OR NOT (s <=> NULL)), CONSTRAINT big CHECK (a < 100 OR s IS NULL), CHECK ((a DIV 2) >= -a MOD 3 XOR s != 'q'))\nINSERT INTO ck VALUES (1, 5, '[1]', 'y'), (2, -1, 'no', NULL) ON DUPLICATE KEY UPDATE a = -a\nREPLACE INTO ck SET id = 1, a = 0\nUPDATE ck SET a = a - 10, d = '{' WHERE id > ?\nALTER TABLE ck ADD CONSTRAINT c2 CHECK (id > a), DROP CONSTRAINT big\nALTER TABLE ck ADD CHECK (SUBSTR(s, 1, 1) <> CAST(a AS CHAR))\nALTER TABLE ck DROP CONSTRAINT IF EXISTS nope\nALTER TABLE ck DROP COLUMN a\nCREATE TABLE bad (x INT CHECK (x > (SELECT 1)), y INT CHECK (y > RAND() + @v))\nSELECT * FROM information_schema.check_constraints",
    "CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, k INT, KEY (k))\nINSERT INTO t SELECT id, k FROM t\nCREATE TEMPORARY TABLE IF NOT EXISTS s LIKE t\nCREATE TEMPORARY TABLE u AS SELECT * FROM t WHERE k > ?\nBEGIN\nREPLACE INTO t VALUES (1, 1)\nDROP TEMPORARY TABLE s, nope\nALTER TABLE u RENAME TO w, ADD COLUMN z INT\nRENAME TABLE w TO x, t TO y\nCREATE VIEW vv AS SELECT * FROM x\nTRUNCATE x\nCOMMIT\nDROP TABLE t, t\nSHOW CREATE TABLE x",
    "CREATE TABLE lv (id INT PRIMARY KEY, b LONGTEXT, m MEDIUMBLOB, t TINYTEXT, x TINYBLOB, KEY (t))\nINSERT INTO lv VALUES (1, REPEAT('a', 70000), REPEAT(?, 9000), 'q', 'r')\nBEGIN\nUPDATE lv SET b = CONCAT(b, b), t = REPEAT('z', 300) WHERE id = 1\nUPDATE lv SET m = NULL, b = LEFT(b, ?) WHERE id > 0\nROLLBACK\nINSERT IGNORE INTO lv SELECT 1, b, m, t, x FROM lv\nSELECT LENGTH(b), MD5(m), SUBSTRING(b, 69990) FROM lv WHERE b LIKE '%a'\nALTER TABLE lv DROP COLUMN x, MODIFY t TEXT\nCREATE TABLE lv2 AS SELECT b, m FROM lv\nDELETE FROM lv",
    "CREATE OR REPLACE TABLE b (id BINARY(16) PRIMARY KEY, v VARBINARY(8), k INT, KEY kk (k))\nINSERT INTO b VALUES (UNHEX('00ff'), 'abc', 1), ('x', ?, 2)\nSELECT * FROM b WHERE (id, k) IN ((UNHEX('00ff'), 1), ('x', 2)) AND (k, v) > (0, '') OR (k, v) = (?, 1)\nSELECT (1, 2) = 1, ((1, 2)) < (1, 3, 4), (k, NULL) IN ((1, 2)) FROM b\nUPDATE IGNORE b SET id = 'x' WHERE k = 1\nDELETE IGNORE QUICK FROM b WHERE k > ?\nALTER TABLE b ADD COLUMN IF NOT EXISTS k INT, DROP INDEX IF EXISTS nope, ADD KEY IF NOT EXISTS kk (v), DROP KEY kk, MODIFY COLUMN IF EXISTS zz INT\nCREATE INDEX IF NOT EXISTS kk ON b (k)\nDROP INDEX IF EXISTS kk ON b",
    "SET sql_mode = ''\nCREATE TABLE lz (id SERIAL, a TINYINT NOT NULL, d DECIMAL(4,1), s VARCHAR(2), e ENUM('x'), t DATE DEFAULT (now()))\nINSERT INTO lz (a, d, s, e, t) VALUES (300, 'x1', 'abc  ', 'y', '2020-02-30 x'), (NULL, 1e9, ?, 0, 20201301)\nINSERT INTO lz (s) SELECT c FROM t\nUPDATE IGNORE lz SET a = '12abc', d = -99999, t = 'nonsense'\nSHOW WARNINGS LIMIT 1, 2\nSHOW COUNT(*) WARNINGS\nSHOW ERRORS LIMIT 0\nSET sql_mode = DEFAULT\nREPLACE INTO lz (id, a) VALUES (1, 1e30)",
    "KILL QUERY CONNECTION_ID()\nKILL 0\nKILL HARD CONNECTION @nope\nKILL QUERY ID 3\nDO SLEEP(0), 1 / 0, CONVERT_TZ(NOW(), '+00:00', '-12:59')\nFLUSH TABLES\nFLUSH LOCAL PRIVILEGES\nFLUSH TABLES WITH READ LOCK\nFLUSH STATUS\nCREATE SCHEMA IF NOT EXISTS zz\nDROP SCHEMA zz\nSELECT 1; SELECT 2\nSELECT '\\0'",
    "SELECT k, v, SUM(k), JSON_ARRAYAGG(DISTINCT v ORDER BY v DESC LIMIT 2), JSON_OBJECTAGG(v, k) FROM b GROUP BY k, v WITH ROLLUP HAVING SUM(k) > ?\nSELECT k, COUNT(*) INTO @a, @b FROM b GROUP BY k LIMIT 1\nSELECT 1 / 0, k DIV 0 FROM b INTO @c, @d\nSELECT 1 INTO OUTFILE '/tmp/x'\nSELECT GROUP_CONCAT(k LIMIT 1) FROM b GROUP BY k WITH ROLLUP ORDER BY 1\nCREATE OR REPLACE TABLE IF NOT EXISTS b (x INT)\nCREATE OR REPLACE TABLE b AS SELECT * FROM b",
    "CREATE TABLE ub (id BIGINT UNSIGNED PRIMARY KEY, v BIGINT UNSIGNED, KEY (v))\nINSERT INTO ub VALUES (18446744073709551615, 9223372036854775808), (0, ?)\nSELECT id, v + 1, v - 18446744073709551615, -v, ~v, v << 1, v DIV -1, v % 0, CAST(v AS SIGNED), CAST(-v AS UNSIGNED), HEX(v), SUM(v), AVG(v) FROM ub WHERE v BETWEEN 9.3e18 AND 18446744073709551616 GROUP BY id ORDER BY v DESC LIMIT 18446744073709551615\nSELECT 9223372036854775807 + 1, 18446744073709551615 * 2, -9223372036854775808 DIV -1, ABS(-9223372036854775808)\nUPDATE ub SET v = v - 1 WHERE id >= 9223372036854775807.5\nCREATE TABLE ub2 AS SELECT id FROM ub",
    "CREATE TABLE dq (id DECIMAL(20,0) PRIMARY KEY, a DECIMAL(65,30), b DECIMAL(38,10) UNSIGNED, KEY (a))\nINSERT INTO dq VALUES (12345678901234567890, 99999999999999999999999999999999999.999999999999999999999999999999, 1.5), (1, -0.000000000000000000000000000001, ?)\nSELECT a * a * a, a / 0.0000001, a % 0.3, -a, ROUND(a, -30), ROUND(b, 30), FLOOR(a), CEIL(-a), SUM(a), AVG(b), 2/3 = 0.6667 FROM dq WHERE a IN (1, '1e400', NULL) OR b BETWEEN 0 AND 123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890 GROUP BY a HAVING SUM(a) > 1.5\nSELECT 1e308 * 10, 0.00000000000000000000000000000000000001 * 0.1, 99999999999999999999999999999999999999999999999999999999999999999999999999999999999 + 1\nUPDATE dq SET b = b - 2, a = a / 3 WHERE id = 12345678901234567890.0",
]
for i, s in enumerate(sql):
    write("sql_text", "stmt%02d" % i, s.encode())
