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
N=len(samples); target=sys.argv[2]; depth=int(sys.argv[3]) if len(sys.argv)>3 else 3
c=collections.Counter()
for s in samples:
    idx=[i for i,f in enumerate(s) if target in f]
    if not idx: continue
    i=idx[-1]  # outermost occurrence (stack is innermost first)
    chain=[f for f in s[i+1:] if 'tierdb' in f][:depth]
    c[' <- '.join(x[:60] for x in chain)]+=1
for k,v in c.most_common(15): print('%5.2f%% %s'%(100*v/N,k))
