#!/usr/bin/env bash
# A/B of two tierdb binaries on one data folder (cache-resident): prepares once with B, then
# alternates A, B, A, B for each workload. Usage: ab.sh OLD_BIN NEW_BIN OUT_DIR
set -euo pipefail
A=$1; B=$2; OUT=$3; W=/tmp/ab-data; PORT=3417
TABLES=${TABLES:-4}; SIZE=${SIZE:-100000}; SECS=${SECS:-20}
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --tables=$TABLES --table-size=$SIZE"
start() { "$1" serve --port $PORT --data-dir $W/data --redo-dir $W/redo --bpe-devices $W/bpe0 --buffer-pool-size 1G > $OUT/server.log 2>&1 & PID=$!; for i in $(seq 50); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && return; sleep 0.2; done; }
stop() { kill -TERM $PID; wait $PID || true; }
rm -rf $W; mkdir -p $W $OUT
start $B; mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'; $SB oltp_read_write prepare > $OUT/prepare.log 2>&1; stop
echo "binary,workload,round,qps" > $OUT/results.csv
for wl in oltp_write_only oltp_read_write oltp_point_select; do
  for round in 1 2; do
    for side in A B; do
      bin=$A; [ $side = B ] && bin=$B
      start $bin
      $SB --threads=64 --time=$SECS $wl run > $OUT/$wl-$side-$round.log 2>&1
      stop
      q=$(grep "queries:" $OUT/$wl-$side-$round.log | sed -E 's/.*\(([0-9.]+) per sec.*/\1/')
      echo "$side,$wl,$round,$q" | tee -a $OUT/results.csv
    done
  done
done
