#!/usr/bin/env bash
# I/O-bound BPE benchmark with tierdb's IN-PROCESS throttled devices (no kernel tiers):
# a slow "cloud disk" for the data file (IOPS cap + latency) and fast BPE devices (IOPS cap).
# Data ≈ 16x the buffer pool; sysbench special distribution (15 % hot set: larger than DRAM,
# smaller than the BPE). Systems: BPE off, BPE on (1 device), BPE on (2 devices).
# For kernel-throttled tiers and MariaDB side by side, use `tierdb-lab run` (crates/lab).
#
# Usage: bench/io_bound.sh [out_dir]
#   env: TABLES ROWS POOL SECONDS_RUN THREADS DATA_IOPS DATA_LAT_US BPE_IOPS WORKLOADS
#        DATA_CAP=separate (DATA_IOPS reads + DATA_IOPS writes, as the kernel lab) | shared
#        (DATA_IOPS shared by reads and writes, as most cloud disks sell IOPS)
#        SERVER_FLAGS (extra `tierdb serve` flags, e.g. "--relocating-writes false")
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${TABLES:-8} ROWS=${ROWS:-100000} POOL=${POOL:-16M} RUN=${SECONDS_RUN:-60} THREADS=${THREADS:-64}
DATA_IOPS=${DATA_IOPS:-1000} DATA_LAT_US=${DATA_LAT_US:-1000} BPE_IOPS=${BPE_IOPS:-8000}
case ${DATA_CAP:-separate} in
  separate) DATA_FLAGS=(--data-read-iops "$DATA_IOPS" --data-write-iops "$DATA_IOPS") ;;
  shared) DATA_FLAGS=(--data-iops "$DATA_IOPS") ;;
  *) echo "DATA_CAP must be separate or shared" >&2; exit 2 ;;
esac
WORKLOADS=${WORKLOADS:-oltp_read_only oltp_write_only oltp_read_write}
OUT=${1:-bench/runs/$(date +%F)-io-bound}
WORK=${WORK:-/tmp/tierdb-iobench}
PORT=3417
mkdir -p "$OUT"; rm -rf "$WORK"; mkdir -p "$WORK"
scripts/setup.sh
cargo build --release --bin tierdb >/dev/null
BIN="$PWD/target/release/tierdb"
SBARGS=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest
        --tables="$TABLES" --table-size="$ROWS" --rand-type=special --rand-spec-pct=15)
q() { mariadb -h127.0.0.1 -P$PORT -uroot -N -e "$1"; }
stat() { q "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'; }

start() { # devices...
  local devs; devs=$(IFS=,; echo "$*")
  ( cd "$WORK" && exec "$BIN" serve --port $PORT --buffer-pool-size "$POOL" \
      "${DATA_FLAGS[@]}" --data-latency-us "$DATA_LAT_US" \
      --bpe-read-iops "$BPE_IOPS" --bpe-write-iops "$BPE_IOPS" --bpe-devices "$devs" ${SERVER_FLAGS:-} >> server.log 2>&1 ) &
  SPID=$!
  for _ in $(seq 100); do q 'select 1' >/dev/null 2>&1 && return; sleep 0.2; done
  echo "server did not start" >&2; exit 1
}
stop() { kill -TERM "$SPID"; wait "$SPID" || true; }

echo "system,workload,tps,qps,p95_ms,errors,bpe_hits,bpe_lookups,data_reads,pages_flushed,data_write_ios,data_file_slots,data_file_pages" > "$OUT/results.csv"
measure() { # system workload
  local h0 l0 r0 f0 w0; h0=$(stat Tierdb_bpe_hits); l0=$(stat Tierdb_bpe_lookups); r0=$(stat Innodb_buffer_pool_reads)
  f0=$(stat Innodb_buffer_pool_pages_flushed); w0=$(stat Innodb_data_writes)
  sysbench "$2" "${SBARGS[@]}" --threads="$THREADS" --time="$RUN" --report-interval=10 run > "$OUT/$1-$2.log" 2>&1
  local tps qps p95 err
  tps=$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' "$OUT/$1-$2.log")
  qps=$(grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+' "$OUT/$1-$2.log")
  p95=$(grep -oP '95th percentile:\s+\K[0-9.]+' "$OUT/$1-$2.log")
  err=$(grep -oP 'ignored errors:\s+\K\d+' "$OUT/$1-$2.log")
  local h l r f w; h=$(( $(stat Tierdb_bpe_hits) - h0 )); l=$(( $(stat Tierdb_bpe_lookups) - l0 )); r=$(( $(stat Innodb_buffer_pool_reads) - r0 ))
  f=$(( $(stat Innodb_buffer_pool_pages_flushed) - f0 )); w=$(( $(stat Innodb_data_writes) - w0 ))
  local slots pages; slots=$(stat Tierdb_data_file_slots); pages=$(stat Tierdb_data_file_pages)
  echo "$1,$2,$tps,$qps,$p95,$err,$h,$l,$r,$f,$w,${slots:-},${pages:-}" >> "$OUT/results.csv"
  echo "$1 $2: tps=$tps qps=$qps p95=${p95}ms bpe_hits=$h/$l data_reads=$r pages_flushed=$f data_writes=$w slots=${slots:-} pages=${pages:-}"
}

start "$WORK/ssd0/bpe.cache"
q "CREATE DATABASE sbtest"
/usr/bin/time -f "%e" -o "$OUT/prepare.seconds" sysbench oltp_read_write "${SBARGS[@]}" --threads=8 prepare > "$OUT/prepare.log" 2>&1
du -sh "$WORK/tierdb-data/data" > "$OUT/data-size.txt"
for w in $WORKLOADS; do
  q "SET GLOBAL bpe_enabled = OFF"
  sysbench "$w" "${SBARGS[@]}" --threads="$THREADS" --time=10 run > /dev/null 2>&1 || true
  measure bpe_off "$w"
  q "SET GLOBAL bpe_enabled = ON"
  sysbench "$w" "${SBARGS[@]}" --threads="$THREADS" --time=20 run > /dev/null 2>&1 || true
  measure bpe_on_1dev "$w"
done
stop
# Two devices, same total BPE size: start with an empty BPE and warm it with the read-only
# workload (as the one-device runs were warmed by the runs before them).
rm -rf "$WORK/ssd0" "$WORK/ssd1"
start "$WORK/ssd0/bpe.cache" "$WORK/ssd1/bpe.cache"
sysbench oltp_read_only "${SBARGS[@]}" --threads="$THREADS" --time=60 run > /dev/null 2>&1 || true
for w in $WORKLOADS; do
  sysbench "$w" "${SBARGS[@]}" --threads="$THREADS" --time=20 run > /dev/null 2>&1 || true
  measure bpe_on_2dev "$w"
done
q "SHOW GLOBAL STATUS LIKE 'Tierdb_bpe%'" > "$OUT/bpe-status-end.txt"
stop
{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB, kernel $(uname -r)"
  echo "throttling: in-process (tierdb Throttled devices): data file ${DATA_IOPS} IOPS (${DATA_CAP:-separate} read/write caps) + ${DATA_LAT_US} us; each BPE device ${BPE_IOPS} IOPS"
  echo "server flags: ${SERVER_FLAGS:-(defaults)}; binary: $(git rev-parse --short HEAD)"
  echo "data: $TABLES tables x $ROWS rows ($(cut -f1 "$OUT/data-size.txt")); pool $POOL; BPE 4x pool; $THREADS threads; ${RUN}s per run"
  echo "QPS gain from the BPE (on / off), 1 device and 2 devices:"
  for w in $WORKLOADS; do
    off=$(awk -F, -v w=$w '$1=="bpe_off" && $2==w {print $4}' "$OUT/results.csv")
    on1=$(awk -F, -v w=$w '$1=="bpe_on_1dev" && $2==w {print $4}' "$OUT/results.csv")
    on2=$(awk -F, -v w=$w '$1=="bpe_on_2dev" && $2==w {print $4}' "$OUT/results.csv")
    echo "  $w: off $off, on(1) $on1 (x$(echo "scale=2; $on1/$off" | bc)), on(2) $on2 (x$(echo "scale=2; $on2/$off" | bc))"
  done
  echo "BPE device reads per second (BPE hits / run seconds), 1 device vs 2 devices:"
  for w in $WORKLOADS; do
    h1=$(awk -F, -v w=$w '$1=="bpe_on_1dev" && $2==w {print $7}' "$OUT/results.csv")
    h2=$(awk -F, -v w=$w '$1=="bpe_on_2dev" && $2==w {print $7}' "$OUT/results.csv")
    echo "  $w: 1 device $((h1 / RUN))/s, 2 devices $((h2 / RUN))/s (x$(echo "scale=2; $h2/$h1" | bc))"
  done
} | tee "$OUT/summary.txt"
