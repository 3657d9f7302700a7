import sys,re,collections
samples=[];cur=[]
for line in open(sys.argv[1]):
    if not line.strip():
        if cur: samples.append(cur); cur=[]
        continue
    if line[0] not in ' \t':
        cur=[]; continue
    parts=line.strip().split(None,1)
    if len(parts)==2: cur.append(re.sub(r'::h[0-9a-f]{16}','',parts[1]))
if cur: samples.append(cur)
N=len(samples); print('samples',N)
pats=sys.argv[2:]
for p in pats:
    c=sum(1 for s in samples if any(p in f for f in s))
    print('%6.2f%%  %s'%(100*c/N,p))
