#!/usr/bin/env bash
# A/B of two tierdb binaries, tierdb alone: point_select and write_only, 64 threads,
# 4 tables x 50 000 rows, 1 GiB pool, a 3 s warm-up then 15 s per workload, alternated
# rounds (ROUNDS, default 2). Usage: bench/ab_two_binaries.sh OLD_BINARY NEW_BINARY; prints
# "label workload QPS server-µs-per-query" (the server's user + system CPU from
# /proc/PID/stat over the run, divided by the queries); WORKLOADS="oltp_read_only ..." picks
# other workloads.
set -u
old=${1:?old binary}
new=${2:?new binary}
mkdir -p /tmp/ab
tck=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' /proc/$1/stat; }
run() { # bin label
  local d=/tmp/ab/d; rm -rf $d; mkdir -p $d
  $1 serve --port 3450 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > /tmp/ab/$2.log 2>&1 &
  local pid=$!; sleep 2
  mariadb -h127.0.0.1 -P3450 -uroot -e "CREATE DATABASE sbtest"
  local sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3450 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=50000"
  $sb oltp_read_write prepare --threads=4 > /dev/null
  for w in ${WORKLOADS:-oltp_point_select oltp_write_only}; do
    $sb $w run --threads=64 --time=3 > /dev/null 2>&1
    local t0; t0=$(cpu $pid)
    local out; out=$($sb $w run --threads=64 --time=15 2>&1)
    local t1; t1=$(cpu $pid)
    local q n
    q=$(echo "$out" | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+')
    n=$(echo "$out" | grep -oP 'queries:\s+\K\d+')
    echo "$2 $w $q $(echo "scale=2; ($t1 - $t0) * 1000000 / $tck / $n" | bc)"
  done
  kill $pid; wait $pid 2>/dev/null
}
for r in $(seq "${ROUNDS:-2}"); do
  run "$old" old
  run "$new" new
done
