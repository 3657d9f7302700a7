#!/usr/bin/env bash
set -u
FL=$1; W=/tmp/ab/mdb-$FL; PORT=3432
rm -rf $W; mkdir -p $W/data; chown -R mysql:mysql $W
mariadb-install-db --user=mysql --datadir=$W/data > $W/install.log 2>&1
mariadbd --user=mysql --datadir=$W/data --port=$PORT --bind-address=127.0.0.1 --socket=$W/sock --pid-file=$W/pid --log-error=$W/err.log --skip-grant-tables --max-connections=1000 --innodb-buffer-pool-size=1G --innodb-flush-method=O_DIRECT --innodb-flush-log-at-trx-commit=$FL &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=${TABLES:-4} --table-size=${ROWS:-50000}"
$SB oltp_write_only prepare --threads=8 >/dev/null
$SB oltp_write_only run --threads=64 --time=4 >/dev/null 2>&1
for r in 1 2; do
  SP=$(cat $W/pid); t0=$(awk '{print $14+$15}' /proc/$SP/stat)
  out=$($SB oltp_write_only run --threads=64 --time=15 2>&1)
  t1=$(awk '{print $14+$15}' /proc/$SP/stat)
  q=$(echo "$out" | grep -oP 'queries:\s+\d+\s+\(\K[0-9.]+'); n=$(echo "$out" | grep -oP 'queries:\s+\K\d+')
  echo "mariadb flush=$FL r$r qps=$q server_us_per_q=$(echo "scale=1; ($t1-$t0)*10000/$n" | bc)"
done
mariadb-admin -S $W/sock -uroot shutdown; wait $P 2>/dev/null
