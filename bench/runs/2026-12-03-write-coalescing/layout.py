#!/usr/bin/env python3
"""Physical layout of B+tree leaf levels in a tierdb data file (read-only).

Follows the right-sibling links (page header offset 40, docs/format.md) from every leaf
that no other leaf points at, and prints per leaf chain (one per tree): leaves, the share
of key-order neighbours that are also file neighbours (id + 1), and the mean run length.
Usage: layout.py <data_dir>/tierdb.dat
"""
import struct, sys

P = 16384
data = open(sys.argv[1], 'rb').read()
right, slots = {}, {}
for i in range(len(data) // P):
    h = data[i * P:i * P + 64]
    if h[:4] == b'TDBP' and h[24] == 2:
        right[i] = struct.unpack('<Q', h[40:48])[0]
        slots[i] = struct.unpack('<H', h[32:34])[0]
pointed = set(r for r in right.values() if r)
chains = []
for head in (p for p in right if p not in pointed):
    c = [head]
    while right[c[-1]]:
        c.append(right[c[-1]])
    chains.append(c)
for c in sorted(chains, key=len, reverse=True):
    if len(c) < 2:
        continue
    runs, r = [], 1
    for a, b in zip(c, c[1:]):
        if b == a + 1:
            r += 1
        else:
            runs.append(r)
            r = 1
    runs.append(r)
    adj = sum(1 for a, b in zip(c, c[1:]) if b == a + 1) / (len(c) - 1)
    print(f"{len(c)} leaves, first {c[0]}: file-adjacent {adj:.2f}, mean run {sum(runs)/len(runs):.1f}, "
          f"mean keys/leaf {sum(slots[p] for p in c)/len(c):.0f}")
