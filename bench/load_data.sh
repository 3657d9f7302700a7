#!/usr/bin/env bash
# Bulk load: one LOAD DATA LOCAL INFILE of ROWS sysbench-shaped rows (id, k, c CHAR(120),
# pad CHAR(60), a secondary index on k; about 190 MiB for 1M rows) into tierdb binaries and
# into MariaDB 10.11 (a scratch server, 1 GiB InnoDB pool, O_DIRECT, flush at commit), each
# alone on the machine, ROUNDS rounds (default 2), alternated. Durable commits everywhere.
# Usage: bench/load_data.sh OUT_DIR BINARY [BINARY...]; prints and writes OUT_DIR/results.csv
# as "label,round,seconds,rows" (seconds: the client's wall time for the statement).
set -u
. "$(dirname "$0")/common.sh"
out=${1:?out dir}
shift
mkdir -p "$out"
rows=${ROWS:-1000000}
file=/tmp/loadbench/rows.tsv
mkdir -p /tmp/loadbench
make_rows_file "$rows" "$file"
ddl="CREATE TABLE sb (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k))"
load() { # port label round
  mariadb -h127.0.0.1 -P$1 -uroot -e "DROP DATABASE IF EXISTS lb; CREATE DATABASE lb; USE lb; $ddl"
  local t0 t1
  t0=$(date +%s.%N)
  mariadb --local-infile=1 -h127.0.0.1 -P$1 -uroot lb -e "LOAD DATA LOCAL INFILE '$file' INTO TABLE sb"
  t1=$(date +%s.%N)
  local n
  n=$(mariadb -N -h127.0.0.1 -P$1 -uroot -e "SELECT COUNT(*) FROM lb.sb")
  echo "$2,$3,$(echo "$t1 - $t0" | bc),$n" | tee -a "$out/results.csv"
}
tierdb_round() { # binary label round
  local d=/tmp/loadbench/d; rm -rf $d; mkdir -p $d
  "$1" serve --port 3460 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > /tmp/loadbench/$2.log 2>&1 &
  local pid=$!; sleep 2
  load 3460 "$2" "$3"
  kill $pid; wait $pid 2>/dev/null
}
mariadb_round() { # round
  start_scratch_mariadb /tmp/loadbench/m 3461 /tmp/loadbench/mariadb.log
  load 3461 mariadb "$1"
  kill $SCRATCH_MARIADB_PID; wait $SCRATCH_MARIADB_PID 2>/dev/null
}
echo "label,round,seconds,rows" > "$out/results.csv"
alternate_rounds "$@"
