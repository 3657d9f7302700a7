# Sourced by the bench scripts.
#
# start_scratch_mariadb DIR PORT LOG [POOL] starts a fresh MariaDB 10.11
# under DIR (InnoDB pool POOL, default 1G; O_DIRECT, flush at every commit, no binary log) on
# PORT, waits until it answers and leaves its pid in SCRATCH_MARIADB_PID.
start_scratch_mariadb() {
  local d=$1 port=$2 log=$3 pool=${4:-1G}
  rm -rf "$d"; mkdir -p "$d/data" "$d/tmp"; chown -R mysql:mysql "$d"
  mariadb-install-db --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" --skip-test-db --auth-root-authentication-method=normal > /dev/null 2>&1
  mariadbd --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" --port="$port" --socket="$d/sock" --bind-address=127.0.0.1 \
    --innodb-buffer-pool-size="$pool" --innodb-flush-method=O_DIRECT --innodb-flush-log-at-trx-commit=1 --skip-log-bin > "$log" 2>&1 &
  SCRATCH_MARIADB_PID=$!
  for _ in $(seq 60); do mariadb -h127.0.0.1 -P"$port" -uroot -e "SELECT 1" > /dev/null 2>&1 && break; sleep 0.5; done
}

# alternate_rounds BINARY...: ROUNDS rounds (default 2); each runs the caller's
# `tierdb_round BINARY tierdbN ROUND` for every binary, then its `mariadb_round ROUND`.
alternate_rounds() {
  local r n b
  for r in $(seq "${ROUNDS:-2}"); do
    n=0
    for b in "$@"; do
      n=$((n + 1))
      tierdb_round "$b" "tierdb$n" "$r"
    done
    mariadb_round "$r"
  done
}

# make_rows_file ROWS FILE writes ROWS sysbench-shaped rows (id, k, c of 120 characters, pad
# of 60), tab-separated, to FILE (about 190 MiB for 1M rows), unless it already holds them.
make_rows_file() {
  mkdir -p "$(dirname "$2")"
  if [ -s "$2" ] && [ "$(wc -l < "$2")" = "$1" ]; then
    return
  fi
  python3 - "$1" "$2" <<'PY'
import random, sys
random.seed(1)
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, 'w') as f:
    for i in range(1, n + 1):
        c = '-'.join('%011d' % random.randint(0, 10**11) for _ in range(10))
        pad = '-'.join('%011d' % random.randint(0, 10**11) for _ in range(5))
        f.write('%d\t%d\t%s\t%s\n' % (i, random.randint(1, 1000000), c, pad))
PY
}
