#!/usr/bin/env python3
"""Folds `perf script -F comm,tid,ip,sym` output (dwarf call graphs) of the server.

  stacks.py incl FILE PATTERN...      share of samples with a frame matching each pattern
  stacks.py children FILE PATTERN [N] what the outermost matching frame called, by share
  stacks.py parents FILE PATTERN [D]  the D tierdb frames above the outermost match
"""
import collections
import re
import sys


def load(path):
    samples, cur = [], []
    for line in open(path):
        if not line.strip():
            if cur:
                samples.append(cur)
            cur = []
            continue
        if line[0] not in ' \t':
            cur = []
            continue
        parts = line.strip().split(None, 1)
        if len(parts) == 2:
            cur.append(re.sub(r'::h[0-9a-f]{16}', '', re.sub(r' \(.*\)$', '', parts[1])))
    if cur:
        samples.append(cur)
    return samples


def outermost(s, pat):
    idx = [i for i, f in enumerate(s) if pat in f]
    return idx[-1] if idx else None


def main():
    mode, path = sys.argv[1], sys.argv[2]
    samples = load(path)
    n = len(samples)
    if mode == 'incl':
        print('samples', n)
        for p in sys.argv[3:]:
            c = sum(1 for s in samples if any(p in f for f in s))
            print('%6.2f%%  %s' % (100 * c / n, p))
        return
    pat = sys.argv[3]
    arg = int(sys.argv[4]) if len(sys.argv) > 4 else None
    c = collections.Counter()
    tot = 0
    for s in samples:
        i = outermost(s, pat)
        if i is None:
            continue
        tot += 1
        if mode == 'children':
            c[(s[i - 1] if i > 0 else '<self>')[:110]] += 1
        else:
            chain = [f for f in s[i + 1:] if 'tierdb' in f][:arg or 3]
            c[' <- '.join(x[:60] for x in chain)] += 1
    print('total %.2f%%' % (100 * tot / n))
    for k, v in c.most_common(arg if mode == 'children' and arg else 20):
        print('%5.2f%% %s' % (100 * v / n, k))


main()
