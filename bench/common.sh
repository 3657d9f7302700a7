# Sourced by the bench scripts.
#
# start_scratch_mariadb DIR PORT LOG starts a fresh MariaDB 10.11
# under DIR (1 GiB InnoDB pool, O_DIRECT, flush at every commit, no binary log) on PORT,
# waits until it answers and leaves its pid in SCRATCH_MARIADB_PID.
start_scratch_mariadb() {
  local d=$1 port=$2 log=$3
  rm -rf "$d"; mkdir -p "$d/data" "$d/tmp"; chown -R mysql:mysql "$d"
  mariadb-install-db --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" --skip-test-db --auth-root-authentication-method=normal > /dev/null 2>&1
  mariadbd --no-defaults --user=mysql --datadir="$d/data" --tmpdir="$d/tmp" --port="$port" --socket="$d/sock" --bind-address=127.0.0.1 \
    --innodb-buffer-pool-size=1G --innodb-flush-method=O_DIRECT --innodb-flush-log-at-trx-commit=1 --skip-log-bin > "$log" 2>&1 &
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
