#!/usr/bin/env bash
# Memory of big transactions: one LOAD DATA LOCAL of ROWS sysbench-shaped rows (the file of
# bench/load_data.sh), then one UPDATE of half of them (a longer `c`, every row), then one
# DELETE of that half, each statement its own transaction, into tierdb binaries (128 MiB
# pool; without and with the binary log) and MariaDB 10.11 (128 MiB InnoDB pool, no binary
# log), each alone on the machine. Prints and writes OUT_DIR/results.csv as
# "label,step,seconds,peak_rss_kb,rss_kb" (peak: the server's VmHWM after the step).
# Usage: bench/big_transaction_memory.sh OUT_DIR BINARY [BINARY...]
set -u
. "$(dirname "$0")/common.sh"
out=${1:?out dir}
shift
mkdir -p "$out"
rows=${ROWS:-1000000}
file=/tmp/loadbench/rows.tsv
make_rows_file "$rows" "$file"
ddl="CREATE TABLE sb (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))"
half=$((rows / 2))
steps() { # port pid label
  local m="mariadb -h127.0.0.1 -P$1 -uroot"
  $m -e "DROP DATABASE IF EXISTS lb; CREATE DATABASE lb; USE lb; $ddl"
  step "$1" "$2" "$3" load "LOAD DATA LOCAL INFILE '$file' INTO TABLE sb"
  step "$1" "$2" "$3" update "UPDATE sb SET c = CONCAT(LEFT(c, 100), 'x') WHERE id <= $half"
  step "$1" "$2" "$3" delete "DELETE FROM sb WHERE id <= $half"
}
step() { # port pid label name sql
  local t0 t1
  t0=$(date +%s.%N)
  mariadb --local-infile=1 -h127.0.0.1 -P$1 -uroot lb -e "$5" || echo "$3 $4 failed"
  t1=$(date +%s.%N)
  local hwm rss
  hwm=$(awk '/VmHWM/{print $2}' /proc/$2/status)
  rss=$(awk '/VmRSS/{print $2}' /proc/$2/status)
  echo "$3,$4,$(echo "$t1 - $t0" | bc),$hwm,$rss" | tee -a "$out/results.csv"
}
echo "label,step,seconds,peak_rss_kb,rss_kb" > "$out/results.csv"
n=0
for b in "$@"; do
  n=$((n + 1))
  for binlog in off on; do
    d=/tmp/loadbench/mem; rm -rf $d; mkdir -p $d
    extra=()
    [ $binlog = on ] && extra=(--log-bin --server-id 1)
    "$b" serve --port 3462 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 128M "${extra[@]}" > /tmp/loadbench/mem-tierdb$n.log 2>&1 &
    pid=$!; sleep 2
    steps 3462 $pid "tierdb$n-binlog-$binlog"
    kill $pid; wait $pid 2>/dev/null
  done
done
start_scratch_mariadb /tmp/loadbench/m 3463 /tmp/loadbench/mariadb.log 128M
steps 3463 $SCRATCH_MARIADB_PID mariadb
kill $SCRATCH_MARIADB_PID; wait $SCRATCH_MARIADB_PID 2>/dev/null
