#!/usr/bin/env bash
# Experiment script of bench/runs/2026-12-03-write-coalescing (paths under /tmp/wexp; BIN is a tierdb binary).
# usage: run.sh BIN LABEL BPE(on|off) [extra flags...]
set -euo pipefail
BIN=$1 LABEL=$2 BPE=$3; shift 3
PORT=3427 BASE=/tmp/wexp2/base-${RELOC:-true} WORK=/tmp/wexp2/work
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000 --rand-type=special --rand-spec-pct=15)
q() { mariadb -h127.0.0.1 -P$PORT -uroot -N -e "$1"; }
st() { q "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'; }
FLAGS=(--port $PORT --buffer-pool-size 16M --data-read-iops 1000 --data-write-iops 1000 --data-latency-us 1000 --bpe-read-iops 8000 --bpe-write-iops 8000 --bpe-devices $WORK/ssd0/bpe.cache)
if [ ! -d $BASE ]; then
  mkdir -p $BASE; cd $BASE
  "$BIN" serve --relocating-writes ${RELOC:-true} --port $PORT --buffer-pool-size 256M --bpe-devices $BASE/ssd0/bpe.cache > server.log 2>&1 & P=$!
  for _ in $(seq 100); do q 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
  q "CREATE DATABASE sbtest"; sysbench oltp_read_write "${SB[@]}" --threads=8 prepare > prepare.log 2>&1
  kill -TERM $P; wait $P || true; rm -rf $BASE/ssd0
fi
rm -rf $WORK; cp -a $BASE $WORK; cd $WORK
"$BIN" serve --relocating-writes ${RELOC:-true} "${FLAGS[@]}" --bpe-enabled $( [ $BPE = on ] && echo true || echo false ) "$@" > server.log 2>&1 & P=$!
for _ in $(seq 100); do q 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
sysbench oltp_write_only "${SB[@]}" --threads=64 --time=${WARM:-40} run > /dev/null 2>&1 || true
f0=$(st Innodb_buffer_pool_pages_flushed); w0=$(st Innodb_data_writes); e0=$(st Tierdb_buffer_pool_evictions_dirty); r0=$(st Innodb_buffer_pool_reads); h0=$(st Tierdb_bpe_hits)
sysbench oltp_write_only "${SB[@]}" --threads=64 --time=${RUN:-30} run > sb.log 2>&1
f=$(( $(st Innodb_buffer_pool_pages_flushed)-f0 )); w=$(( $(st Innodb_data_writes)-w0 )); e=$(( $(st Tierdb_buffer_pool_evictions_dirty)-e0 )); r=$(( $(st Innodb_buffer_pool_reads)-r0 )); h=$(( $(st Tierdb_bpe_hits)-h0 ))
tx=$(grep -oP 'transactions:\s+\K\d+' sb.log); tps=$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' sb.log); err=$(grep -oP 'ignored errors:\s+\K\d+' sb.log)
sl=$(st Tierdb_data_file_slots); pg=$(st Tierdb_data_file_pages); mv=$(st Tierdb_data_file_pages_moved); rd=$(st Innodb_data_reads); wio=$(st Tierdb_data_page_write_ios); dw=$(st Innodb_data_writes); pf=$(st Innodb_buffer_pool_pages_flushed); dbg=$(q "SHOW GLOBAL STATUS LIKE 'Dbg%'" | tr "\n" " "); echo "$dbg"  >> /tmp/wexp2/results.txt; echo "slots=$sl pages=$pg moved=$mv data_reads=$rd batches=$wio data_writes=$dw flushed=$pf" >> /tmp/wexp2/results.txt
kill -TERM $P; wait $P || true
printf "%s reloc=${RELOC:-true} bpe=%s tps=%s err=%s pages/tx=%.2f ios/tx=%.2f dirty_evict/tx=%.2f data_reads/tx=%.2f bpe_hits/tx=%.2f\n" $LABEL $BPE $tps $err $(echo "$f/$tx"|bc -l) $(echo "$w/$tx"|bc -l) $(echo "$e/$tx"|bc -l) $(echo "$r/$tx"|bc -l) $(echo "$h/$tx"|bc -l) | tee -a /tmp/wexp2/results.txt
