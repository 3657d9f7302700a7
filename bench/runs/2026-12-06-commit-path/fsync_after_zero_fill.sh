#!/usr/bin/env bash
# usage: fsync_after_zero_fill.sh BIN — tierdb alone, write_only 64 threads; strace for 4 s
# records every fdatasync and pwrite64 of the server; fsync_after_zero_fill.py then splits the
# fdatasync latencies into those right after a zero-fill (64 KiB writes of zeros by the same
# thread) and the others.
set -u
BIN=$1; PORT=3431; W=/tmp/ab/w-strace
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit 1 > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000"
$SB oltp_write_only prepare --threads=8 >/dev/null
$SB oltp_write_only run --threads=64 --time=12 > $W/sb.out 2>&1 &
sleep 4
timeout 4 strace -f -e trace=fdatasync,pwrite64 -T -p $P -o $W/strace.txt 2>/dev/null
wait %2; kill $P; wait $P 2>/dev/null
python3 "$(dirname "$0")/fsync_after_zero_fill.py" $W/strace.txt
