#!/usr/bin/env bash
set -u
BIN=$1; LABEL=$2; FL=${3:-1}; PORT=3431; W=/tmp/ab/w-$LABEL
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit $FL > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=${TABLES:-4} --table-size=${ROWS:-50000}"
$SB oltp_write_only prepare --threads=8 >/dev/null
$SB oltp_write_only run --threads=64 --time=14 >/tmp/ab/perf-$LABEL-$FL.sb 2>&1 &
sleep 5
perf record -o /tmp/ab/perfd-$LABEL-$FL.data --call-graph dwarf,32768 -p $P -- sleep 1.5 2>/dev/null >/dev/null
wait %2 2>/dev/null; sleep 6
kill $P; wait $P 2>/dev/null
