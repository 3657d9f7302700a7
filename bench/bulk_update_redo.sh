#!/usr/bin/env bash
# Bulk UPDATE / DELETE: redo bytes per changed row and seconds, tierdb binaries alternated,
# each alone on the machine (1 GiB pool, durable commits). 200k sysbench-shaped rows (`c` a
# VARCHAR(150)) loaded with LOAD DATA, then in turn: rows 1..100k made shorter (`c` cut to 90
# characters), the same rows made longer, rows 100k..200k's `k` changed (an index entry
# moved), rows 1..100k deleted; each statement its own transaction.
# Usage: bench/bulk_update_redo.sh OUT_DIR BINARY [BINARY...]; prints and writes
# OUT_DIR/results.csv as "label,round,step,seconds,redo_bytes_per_row" (redo: the growth of
# Innodb_os_log_written over the statement).
set -u
. "$(dirname "$0")/common.sh"
out=${1:?out dir}
shift
mkdir -p "$out"
file=/tmp/loadbench/rows200k.tsv
make_rows_file 200000 "$file"
one() { # binary label round
  local d=/tmp/loadbench/upd; rm -rf $d; mkdir -p $d
  "$1" serve --port 3473 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > $d/log 2>&1 &
  local pid=$!; sleep 2
  local m="mariadb -h127.0.0.1 -P3473 -uroot"
  $m -e "CREATE DATABASE lb; CREATE TABLE lb.sb (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c VARCHAR(150) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))"
  $m --local-infile=1 lb -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE sb"
  step "$2" "$3" shorter "UPDATE sb SET c = LEFT(c, 90) WHERE id <= 100000"
  step "$2" "$3" longer "UPDATE sb SET c = CONCAT(c, '-more-text-here') WHERE id <= 100000"
  step "$2" "$3" index_key "UPDATE sb SET k = k + 1 WHERE id > 100000 AND id <= 200000"
  step "$2" "$3" delete "DELETE FROM sb WHERE id <= 100000"
  kill $pid; wait $pid 2>/dev/null
}
written() { mariadb -h127.0.0.1 -P3473 -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_os_log_written'" | awk '{print $2}'; }
step() { # label round name sql (100 000 rows each)
  local a z t0 t1
  a=$(written); t0=$(date +%s.%N)
  mariadb -h127.0.0.1 -P3473 -uroot lb -e "$4"
  t1=$(date +%s.%N); z=$(written)
  echo "$1,$2,$3,$(echo "$t1 - $t0" | bc),$(( (z - a) / 100000 ))" | tee -a "$out/results.csv"
}
echo "label,round,step,seconds,redo_bytes_per_row" > "$out/results.csv"
tierdb_round() { one "$@"; }
mariadb_round() { :; }
alternate_rounds "$@"
