#!/usr/bin/env bash
# Cache-resident sysbench comparison: tierdb vs MariaDB 10.11 (InnoDB) on this machine.
# Same data (8 tables x 100k rows by default), buffer pools large enough for everything,
# O_DIRECT and a durable commit (flush at every commit) on both, 64 threads, same command.
#
# Usage: bench/cache_resident.sh [out_dir]   (env: TABLES, ROWS, RUN_SECONDS, THREADS, POOL, ROUNDS)
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${TABLES:-8} ROWS=${ROWS:-100000} SECONDS_RUN=${RUN_SECONDS:-30} THREADS=${THREADS:-64} POOL=${POOL:-1G}
OUT=${1:-bench/runs/$(date +%F)-cache-resident}
WORK=${WORK:-/tmp/tierdb-bench}
mkdir -p "$OUT"; rm -rf "$WORK"; mkdir -p "$WORK"
scripts/setup.sh
cargo build --release --bin tierdb >/dev/null
WORKLOADS="oltp_point_select oltp_read_only oltp_write_only oltp_read_write"
results="$OUT/results.csv"
ROUNDS=${ROUNDS:-2}
echo "system,workload,round,tps,qps,p95_ms,errors" > "$results"

sb() { # port workload action [extra]
  sysbench "$2" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
    --mysql-db=sbtest --tables="$TABLES" --table-size="$ROWS" "${@:4}" "$3"
}

prepare() { # name port
  mariadb -h127.0.0.1 -P"$2" -uroot -e "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest"
  local t0; t0=$(date +%s.%N)
  sb "$2" oltp_read_write prepare --threads=8 > "$OUT/$1-prepare.log" 2>&1
  echo "$(date +%s.%N) - $t0" | bc > "$OUT/$1-prepare.seconds"
}

measure() { # name port workload round
  local name=$1 port=$2 w=$3 r=$4 log="$OUT/$1-$3-r$4.log"
  # Warm-up, then the measured run.
  sb "$port" "$w" run --threads="$THREADS" --time=5 > /dev/null 2>&1 || true
  sb "$port" "$w" run --threads="$THREADS" --time="$SECONDS_RUN" --report-interval=5 > "$log" 2>&1
  local tps qps p95 err
  tps=$(grep -oP 'transactions:\s+\d+\s+\(\K[0-9.]+' "$log")
  qps=$(grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+' "$log")
  p95=$(grep -oP '95th percentile:\s+\K[0-9.]+' "$log")
  err=$(grep -oP 'ignored errors:\s+\K\d+' "$log")
  echo "$name,$w,$r,$tps,$qps,$p95,$err" >> "$results"
  echo "round $r $name $w: tps=$tps qps=$qps p95=${p95}ms ignored_errors=$err"
}

# Both servers run side by side (same data, both idle while the other is measured), so every
# workload is measured on both within a minute of each other; rounds alternate the order.
mkdir -p "$WORK/tierdb"
( cd "$WORK/tierdb" && exec "$OLDPWD/target/release/tierdb" serve --port 3407 --buffer-pool-size "$POOL" \
    --flush-log-at-trx-commit 1 > server.log 2>&1 ) &
TPID=$!
mkdir -p "$WORK/mariadb/data"; chown -R mysql:mysql "$WORK/mariadb"
mariadb-install-db --user=mysql --datadir="$WORK/mariadb/data" > "$WORK/mariadb/install.log" 2>&1
mariadbd --user=mysql --datadir="$WORK/mariadb/data" --port=3408 --bind-address=127.0.0.1 \
  --socket="$WORK/mariadb/sock" --pid-file="$WORK/mariadb/pid" --log-error="$WORK/mariadb/err.log" \
  --skip-grant-tables --max-connections=1000 --innodb-buffer-pool-size="$POOL" \
  --innodb-flush-method=O_DIRECT --innodb-flush-log-at-trx-commit=1 &
MPID=$!
trap 'kill -TERM $TPID $MPID 2>/dev/null || true' EXIT
for port in 3407 3408; do
  for _ in $(seq 100); do mariadb -h127.0.0.1 -P$port -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
done
prepare tierdb 3407
prepare mariadb 3408
for r in $(seq "$ROUNDS"); do
  for w in $WORKLOADS; do
    if [ $((r % 2)) -eq 1 ]; then order="tierdb:3407 mariadb:3408"; else order="mariadb:3408 tierdb:3407"; fi
    for sp in $order; do measure "${sp%%:*}" "${sp##*:}" "$w" "$r"; done
  done
done
kill -TERM $TPID $MPID; wait $TPID $MPID || true
trap - EXIT

{
  echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/{print $2}') GiB"
  echo "data: $TABLES tables x $ROWS rows; pool $POOL; $THREADS threads; ${SECONDS_RUN}s per workload after a 5s warm-up; $ROUNDS rounds (order alternated)"
  echo "mean QPS over the rounds, tierdb / mariadb:"
  for w in $WORKLOADS; do
    t=$(awk -F, -v w=$w '$1=="tierdb" && $2==w {s+=$5; n++} END {printf "%.0f", s/n}' "$results")
    m=$(awk -F, -v w=$w '$1=="mariadb" && $2==w {s+=$5; n++} END {printf "%.0f", s/n}' "$results")
    echo "  $w: tierdb $t, mariadb $m, ratio $(echo "scale=2; $t / $m" | bc)"
  done
} | tee "$OUT/summary.txt"
