#!/usr/bin/env python3
"""fdatasync latencies from `strace -f -T` output: right after a zero-fill (64 KiB pwrite64
of zeros by the same thread since its previous fdatasync) and the others."""
import re
import statistics
import sys

zero_since_sync = {}
after, normal = [], []
for line in open(sys.argv[1]):
    m = re.match(r'(\d+)\s+(\w+)\(', line)
    if not m:
        continue
    tid, call = m.groups()
    if call == 'pwrite64' and '\\0\\0\\0\\0' in line and '65536' in line:
        zero_since_sync[tid] = True
    elif call == 'fdatasync':
        t = re.search(r'<([0-9.]+)>', line)
        if not t:
            continue
        (after if zero_since_sync.get(tid) else normal).append(float(t.group(1)))
        zero_since_sync[tid] = False
for name, xs in (('after a zero-fill', after), ('others', normal)):
    if xs:
        xs.sort()
        print('%-18s n=%-5d mean %.2f ms  p50 %.2f ms  max %.2f ms' % (
            name, len(xs), 1000 * statistics.mean(xs), 1000 * xs[len(xs) // 2], 1000 * xs[-1]))
    else:
        print('%-18s n=0' % name)
