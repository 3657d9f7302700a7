import sys,re,collections
samples=[];cur=[]
for line in open(sys.argv[1]):
    if not line.strip():
        if cur: samples.append(cur); cur=[]
        continue
    if line[0] not in ' \t':
        cur=[]; continue
    parts=line.strip().split(None,1)
    if len(parts)==2: cur.append(re.sub(r'::h[0-9a-f]{16}','',re.sub(r' \(.*\)$','',parts[1])))
if cur: samples.append(cur)
N=len(samples); target=sys.argv[2]
c=collections.Counter(); tot=0
for s in samples:
    idx=[i for i,f in enumerate(s) if target in f]
    if not idx: continue
    tot+=1
    i=idx[-1]
    # child = the frame just inside (innermost direction) of the outermost target occurrence
    child = s[i-1] if i>0 else '<self>'
    c[child[:110]]+=1
print('total %.2f%%'%(100*tot/N))
for k,v in c.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 20): print('%5.2f%% %s'%(100*v/N,k))
