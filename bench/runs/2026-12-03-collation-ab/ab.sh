#!/bin/bash
# A/B: tierdb before (0e9fe89) and after collations, same data, alternating.
set -u
D=/tmp/ab; NEW=${NEW:-target/release/tierdb}; OLD=${OLD:-/tmp/old-target/release/tierdb}  # OLD: built from 0e9fe89
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3417 --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000"
start() { ($1 serve --port 3417 --data-dir $D/data --redo-dir $D/redo --bpe-devices $D/bpe0 --buffer-pool-size 1G > $D/log 2>&1 &); for i in $(seq 50); do mariadb -h127.0.0.1 -P3417 -uroot -e "select 1" >/dev/null 2>&1 && break; sleep 0.2; done; }
stop() { pkill -f "tierdb serve --port 3417"; while pgrep -f "tierdb serve --port 3417" >/dev/null; do sleep 0.2; done; }
rm -rf $D; mkdir -p $D
start $NEW
mariadb -h127.0.0.1 -P3417 -uroot -e "CREATE DATABASE sbtest"
sysbench oltp_read_write $SB --threads=8 prepare > $D/prepare.log 2>&1
stop
for round in 1 2; do
  for v in new old; do
    bin=$NEW; [ $v = old ] && bin=$OLD
    start $bin
    for w in oltp_read_write oltp_read_only; do
      sysbench $w $SB --threads=64 --time=5 run > /dev/null 2>&1
      q=$(sysbench $w $SB --threads=64 --time=20 run 2>&1 | awk '/queries:/ {gsub(/[(]/,"",$3); print $3}')
      echo "round $round $v $w qps=$q"
    done
    stop
  done
done
