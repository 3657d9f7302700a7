#!/usr/bin/env bash
# point_select / read_only as root (config superuser: no per-statement check) and as an SQL
# account holding ALL ON sbtest.* (every statement checked), one server, alternated.
set -u
bin=${1:?tierdb binary}
d=/tmp/ab/acct; rm -rf $d; mkdir -p $d
$bin serve --port 3451 --data-dir $d/data --redo-dir $d/redo --bpe-devices $d/bpe0 --buffer-pool-size 1G > $d/log 2>&1 &
pid=$!; sleep 2
mariadb -h127.0.0.1 -P3451 -uroot -e "CREATE DATABASE sbtest; CREATE USER sb IDENTIFIED BY 'sb'; GRANT ALL ON sbtest.* TO sb"
base="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3451 --mysql-db=sbtest --tables=4 --table-size=50000"
$base --mysql-user=root oltp_read_write prepare --threads=4 > /dev/null
for r in 1 2; do
  for who in "root" "sb --mysql-password=sb"; do
    for w in oltp_point_select oltp_read_only; do
      $base --mysql-user=$who $w run --threads=64 --time=3 > /dev/null 2>&1
      q=$($base --mysql-user=$who $w run --threads=64 --time=15 2>&1 | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+')
      echo "${who%% *} $w $q"
    done
  done
done
kill $pid; wait $pid 2>/dev/null
