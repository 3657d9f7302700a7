#!/usr/bin/env bash
# usage: wo.sh BIN LABEL [flush]  — tierdb alone, write_only 64 thr, reports QPS + server CPU
set -u
BIN=$1; LABEL=$2; FL=${3:-1}; PORT=3431; W=/tmp/ab/w-$LABEL
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit $FL > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=50000"
$SB oltp_write_only prepare --threads=4 >/dev/null
$SB oltp_write_only run --threads=64 --time=4 >/dev/null 2>&1
for r in 1 2; do
  t0=$(awk '{print $14+$15}' /proc/$(pgrep -f "port $PORT" | head -1)/stat 2>/dev/null)
  SP=$(pgrep -f "^$BIN serve --port $PORT"); t0=$(awk '{print $14+$15}' /proc/$SP/stat)
  c0=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
  $SB oltp_write_only run --threads=64 --time=15 > /tmp/ab/out.$$ 2>&1 &
  SBJ=$!; sleep 0.5; SBP=$(pgrep -n sysbench); s0=$(awk '{print $14+$15}' /proc/$SBP/stat)
  sleep 14; s1=$(awk '{print $14+$15}' /proc/$SBP/stat); wait $SBJ
  out=$(cat /tmp/ab/out.$$)
  t1=$(awk '{print $14+$15}' /proc/$SP/stat)
  c1=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
  q=$(echo "$out" | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+')
  n=$(echo "$out" | grep -oP 'queries:\s+\K\d+')
  echo "$LABEL flush=$FL r$r qps=$q server_us_per_q=$(echo "scale=1; ($t1-$t0)*10000/$n" | bc) sysbench_cores=$(echo "scale=2; ($s1-$s0)/1350" | bc) idle=$(echo "$c0 $c1" | awk '{printf "%.1f%%", 100*($4-$2)/(($3+$4)-($1+$2))}')"
done
kill $P; wait $P 2>/dev/null
