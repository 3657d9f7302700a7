#!/usr/bin/env bash
set -u
BIN=$1; PORT=3431; W=/tmp/ab/w-drift
rm -rf $W; mkdir -p $W
( cd $W && exec $BIN serve --port $PORT --buffer-pool-size 1G --flush-log-at-trx-commit 1 $EXTRA > server.log 2>&1 ) &
P=$!
for _ in $(seq 100); do mariadb -h127.0.0.1 -P$PORT -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
mariadb -h127.0.0.1 -P$PORT -uroot -e 'create database sbtest'
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sbtest --tables=8 --table-size=100000"
$SB oltp_write_only prepare --threads=8 >/dev/null
$SB oltp_write_only run --threads=64 --time=4 >/dev/null 2>&1
st() { mariadb -h127.0.0.1 -P$PORT -uroot -N -e "show global status" | sort > $1; }
st /tmp/ab/d0; $SB oltp_write_only run --threads=64 --time=15 | grep "queries:"; st /tmp/ab/d1
$SB oltp_write_only run --threads=64 --time=40 | grep "queries:"; st /tmp/ab/d2
$SB oltp_write_only run --threads=64 --time=15 | grep "queries:"; st /tmp/ab/d3
python3 - <<'PY'
def load(p):
    d={}
    for l in open(p):
        parts=l.rstrip('\n').split('\t')
        if len(parts)==2:
            try: d[parts[0]]=float(parts[1])
            except: pass
    return d
d0,d1,d2,d3=[load('/tmp/ab/d%d'%i) for i in range(4)]
q1=d1['Questions']-d0['Questions']; q3=d3['Questions']-d2['Questions']
for k in sorted(d0):
    a=(d1.get(k,0)-d0[k])/q1; b=(d3.get(k,0)-d2.get(k,0))/q3
    if abs(a-b)>1e-9 and (abs(a)>0.001 or abs(b)>0.001):
        print('%-45s %12.4f %12.4f'%(k,a,b))
for k in ['Innodb_buffer_pool_pages_dirty','Tierdb_purges_deferred','Innodb_buffer_pool_pages_data','Tierdb_data_file_slots','Tierdb_data_file_pages']:
    if k in d3: print('level',k,d0.get(k),d1.get(k),d2.get(k),d3.get(k))
PY
kill $P; wait $P 2>/dev/null
