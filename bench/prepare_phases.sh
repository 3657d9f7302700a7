#!/usr/bin/env bash
# sysbench's load, timed in its two phases: `oltp_read_write prepare --create_secondary=off`
# (multi-row INSERTs of TABLES x ROWS rows, 8 client threads), then CREATE INDEX k_N on every
# table from 8 concurrent clients. tierdb binaries and MariaDB 10.11 (a scratch server, 1 GiB
# InnoDB pool, O_DIRECT, flush at commit, no binary log), each alone on the machine, ROUNDS
# rounds (default 2), alternated; durable commits everywhere.
# Usage: bench/prepare_phases.sh OUT_DIR BINARY [BINARY...]; prints and writes
# OUT_DIR/results.csv as "label,round,insert_seconds,index_seconds,rows".
set -u
. "$(dirname "$0")/common.sh"
out=${1:?out dir}
shift
mkdir -p "$out"
tables=${TABLES:-8} rows=${ROWS:-100000}
work=/tmp/prepbench
mkdir -p $work
phases() { # port label round
  local p=$1 i
  mariadb -h127.0.0.1 -P$p -uroot -e "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  local t0 t1 t2
  t0=$(date +%s.%N)
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root \
    --mysql-db=sbtest --tables=$tables --table-size=$rows --threads=8 --create_secondary=off prepare > /dev/null
  t1=$(date +%s.%N)
  local pids=()
  for i in $(seq $tables); do
    mariadb -h127.0.0.1 -P$p -uroot sbtest -e "CREATE INDEX k_$i ON sbtest$i(k)" &
    pids+=($!)
  done
  wait "${pids[@]}"
  t2=$(date +%s.%N)
  local n=0
  for i in $(seq $tables); do
    n=$((n + $(mariadb -N -h127.0.0.1 -P$p -uroot -e "SELECT COUNT(*) FROM sbtest.sbtest$i FORCE INDEX (k_$i) WHERE k >= 0")))
  done
  echo "$2,$3,$(echo "$t1 - $t0" | bc),$(echo "$t2 - $t1" | bc),$n" | tee -a "$out/results.csv"
}
tierdb_round() { # binary label round
  local d=$work/d; rm -rf $d; mkdir -p $d
  "$1" serve --port 3462 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > $work/$2.log 2>&1 &
  local pid=$!; sleep 2
  phases 3462 "$2" "$3"
  kill $pid; wait $pid 2>/dev/null
}
mariadb_round() { # round
  start_scratch_mariadb $work/m 3463 $work/mariadb.log
  phases 3463 mariadb "$1"
  kill $SCRATCH_MARIADB_PID; wait $SCRATCH_MARIADB_PID 2>/dev/null
}
echo "label,round,insert_seconds,index_seconds,rows" > "$out/results.csv"
alternate_rounds "$@"
