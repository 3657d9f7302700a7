#!/usr/bin/env bash
# A/B with server CPU per query: bin label workload...
set -u
mkdir -p /tmp/ab
run() { # bin label
  local d=/tmp/ab/d; rm -rf $d; mkdir -p $d
  $1 serve --port 3450 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > /tmp/ab/$2.log 2>&1 &
  local pid=$!; sleep 2
  mariadb -h127.0.0.1 -P3450 -uroot -e "CREATE DATABASE sbtest"
  local sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3450 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=50000"
  $sb oltp_read_write prepare --threads=4 > /dev/null
  for w in ${WORKLOADS:-oltp_point_select}; do
    $sb $w run --threads=64 --time=3 > /dev/null 2>&1
    local t0=$(awk '{print $14+$15}' /proc/$pid/stat)
    out=$($sb $w run --threads=64 --time=15 2>&1)
    local t1=$(awk '{print $14+$15}' /proc/$pid/stat)
    q=$(echo "$out" | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+')
    n=$(echo "$out" | grep -oP 'queries:\s+\K\d+')
    us=$(echo "($t1 - $t0) * 10000 / $n" | bc -l)
    printf "%s %s %s %.2f\n" $2 $w $q $us
  done
  kill $pid; wait $pid 2>/dev/null
}
for r in 1 2 3; do
  run "$1" old
  run "$2" new
done
