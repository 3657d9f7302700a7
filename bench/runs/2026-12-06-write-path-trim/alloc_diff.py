import re,collections,sys
def load(p):
    by=collections.Counter(); by3=collections.Counter()
    for line in open(p):
        line=line.rstrip('\n'); i=line.rfind(' '); n=int(line[i+1:]); st=line[:i].split(';')
        fr=[re.sub(r'::h[0-9a-f]{16}','',re.sub(r' \(.*\)$','',f)) for f in st]
        tfr=[f for f in fr if 'tierdb' in f]
        by[tfr[-1][:120] if tfr else fr[-1][:120]]+=n
        by3[' <- '.join(x[:60] for x in tfr[-3:][::-1])]+=n
    return by,by3
a,a3=load('st1000-d.txt'); b,b3=load('st6000-d.txt')
N=5000
d={k:(b[k]-a[k])/N for k in set(a)|set(b)}
print('total per txn', sum(d.values()))
for k,v in sorted(d.items(), key=lambda x:-x[1])[:40]: print('%.2f'%v,k)
print()
d3={k:(b3[k]-a3[k])/N for k in set(a3)|set(b3)}
for k,v in sorted(d3.items(), key=lambda x:-x[1])[:60]: print('%.2f'%v,k)
