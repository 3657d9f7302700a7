import pymysql, time, sys, hashlib
port=int(sys.argv[1]); reps=int(sys.argv[2]) if len(sys.argv)>2 else 3
c=pymysql.connect(host='127.0.0.1',port=port,user='root',database='shop')
cur=c.cursor()
for q in open('queries.sql'):
    q=q.strip()
    if not q: continue
    best=1e9
    for r in range(reps):
        t=time.perf_counter(); cur.execute(q); rows=cur.fetchall(); d=time.perf_counter()-t
        best=min(best,d)
        if d>5: break
    h=hashlib.md5(repr(sorted(map(repr,rows))).encode()).hexdigest()[:6]
    print(f"{best*1000:9.2f} ms {len(rows):6d} {h} {q[:90]}")
