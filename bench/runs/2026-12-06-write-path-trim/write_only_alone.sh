#!/usr/bin/env bash
# usage: write_only_alone.sh BIN LABEL [flush] [rounds]  (env: TABLES, ROWS, SECS, PRE, EXTRA) — tierdb alone, write_only 64 thr: QPS, server CPU, fsyncs
set -u
BIN=$1; LABEL=$2; FL=${3:-1}; R=${4:-2}; PORT=3431; W=/tmp/ab/w-$LABEL
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit $FL $EXTRA > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=${TABLES:-8} --table-size=${ROWS:-100000}"
$SB oltp_write_only prepare --threads=8 >/dev/null
# PRE: workloads run for 35 s each before the warm-up (what the side-by-side harness does).
for w in ${PRE:-}; do $SB $w run --threads=64 --time=35 >/dev/null 2>&1; done
$SB oltp_write_only run --threads=64 --time=4 >/dev/null 2>&1
st() { mariadb -h127.0.0.1 -P$PORT -uroot -N -e "show global status where variable_name in ('Innodb_os_log_fsyncs','Questions')" | awk '{print $2}' | tr '\n' ' '; }
for r in $(seq $R); do
  SP=$P; t0=$(awk '{print $14+$15}' /proc/$SP/stat)
  c0=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat); s0=$(st)
  $SB oltp_write_only run --threads=64 --time=${SECS:-15} > /tmp/ab/out.$$ 2>&1
  out=$(cat /tmp/ab/out.$$); s1=$(st)
  t1=$(awk '{print $14+$15}' /proc/$SP/stat)
  c1=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $5+$6}' /proc/stat)
  q=$(echo "$out" | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+')
  n=$(echo "$out" | grep -oP 'queries:\s+\K\d+')
  echo "$LABEL r$r qps=$q server_us_per_q=$(echo "scale=1; ($t1-$t0)*10000/$n" | bc) idle=$(echo "$c0 $c1" | awk '{printf "%.1f%%", 100*($4-$2)/(($3+$4)-($1+$2))}') fsyncs/s=$(echo "$s0 $s1" | awk -v s=${SECS:-15} '{printf "%.0f", ($3-$1)/s}') q/fsync=$(echo "$s0 $s1" | awk '{printf "%.1f", ($4-$2)/($3-$1)}')"
done
kill $P; wait $P 2>/dev/null
