#!/usr/bin/env bash
# perf profile of point_select for one binary: bin label
set -u
d=/tmp/ab/d; rm -rf $d; mkdir -p $d
$1 serve --port 3450 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > /tmp/ab/$2.log 2>&1 &
pid=$!; sleep 2
mariadb -h127.0.0.1 -P3450 -uroot -e "CREATE DATABASE sbtest"
sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3450 --mysql-user=root --mysql-db=sbtest --tables=4 --table-size=50000"
$sb oltp_read_write prepare --threads=4 > /dev/null
$sb oltp_point_select run --threads=64 --time=20 > /tmp/ab/$2.sb 2>&1 &
sleep 5
perf record -F 499 -g -p $pid -o /tmp/ab/$2.perf -- sleep 10 > /dev/null 2>&1
wait %2 2>/dev/null; sleep 1
grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+' /tmp/ab/$2.sb
kill $pid; wait $pid 2>/dev/null
