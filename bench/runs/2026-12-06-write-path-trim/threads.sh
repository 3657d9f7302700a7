#!/usr/bin/env bash
# per-thread-name CPU of the server during a write_only run after a 35 s write_only warm-up
set -u
BIN=$1; PORT=3431; W=/tmp/ab/w-thr
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit 1 $EXTRA > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000"
$SB oltp_write_only prepare --threads=8 >/dev/null
$SB oltp_write_only run --threads=64 --time=${WARM:-35} >/dev/null 2>&1
snap() { for t in /proc/$P/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15}' $t/stat)"; done | awk '{n=$1; sub(/[0-9]+$/,"",n); a[n]+=$NF} END {for (k in a) print k, a[k]}' | sort; }
st() { mariadb -h127.0.0.1 -P$PORT -uroot -N -e "show global status" | grep -E "Innodb_data_writes|Innodb_data_written|Tierdb_data_file_segments_cleaned|Tierdb_data_file_pages_moved|Innodb_buffer_pool_pages_flushed|Innodb_os_log_fsyncs|Tierdb_page_maps_written|Innodb_buffer_pool_pages_dirty|Questions|Innodb_checkpoint" ; }
snap > /tmp/ab/thr0; st > /tmp/ab/st0
$SB oltp_write_only run --threads=64 --time=20 | grep "queries:"
snap > /tmp/ab/thr1; st > /tmp/ab/st1
join /tmp/ab/thr0 /tmp/ab/thr1 | awk '{printf "%-24s %6.1f%% of a core\n", $1, ($3-$2)/20}' | sort -k2 -rn | head -15
join /tmp/ab/st0 /tmp/ab/st1 | awk '{printf "%-40s %s -> %s (%+d)\n", $1, $2, $3, $3-$2}'
kill $P; wait $P 2>/dev/null
