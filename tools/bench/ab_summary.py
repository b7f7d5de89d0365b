#!/usr/bin/env python3
"""Medians, ranges and new/old ratios of an ab_compare.sh run.

usage: ab_summary.py OUT"""
import glob, re, statistics, sys, os
D = sys.argv[1]
def vals(v, kind, pat, conv=float):
    out = []
    for f in sorted(glob.glob(os.path.join(D, '%s_%s_*.txt' % (v, kind)))):
        m = re.search(pat, open(f).read(), re.M)
        if m: out.append(conv(m.group(1)))
    return out
rows = [
 ('empty tasks noarg (tasks/s)', 'thr', r'^noarg dagger=(\d+)', 1),
 ('empty tasks distinct (tasks/s)', 'thr', r'^distinct dagger=(\d+)', 1),
 ('empty tasks chains (tasks/s)', 'thr', r'^chains dagger=(\d+)', 1),
 ('2x2 tiny tree (ms)', 'l22', r'tiny-task reduction tree \(127 tasks\): ([\d.]+) ms', -1),
 ('2x2 512^2 gather (ms)', 'l22', r'tiled gather \(64x64 tiles\): ([\d.]+) ms', -1),
 ('4x1 tiny tree (ms)', 'l41', r'tiny-task reduction tree \(127 tasks\): ([\d.]+) ms', -1),
 ('4x1 512^2 gather (ms)', 'l41', r'tiled gather \(64x64 tiles\): ([\d.]+) ms', -1),
 ('actor latency one way (us)', 'act', r'one way: ([\d.]+) us', -1),
 ('xfer 1 MiB (GB/s)', 'xfer', r'1 MiB x 16(?: host)?\s*: median ([\d.]+)', 1),
 ('xfer 64 MiB (GB/s)', 'xfer', r'64 MiB x  2(?: host)?\s*: median ([\d.]+)', 1),
 ('starpu noarg (tasks/s)', 'thr', r'^noarg dagger=\d+ starpu=(\d+)', 1),
 ('cholesky 4096/512 (GF/s)', 'chol', r'dagger[_ ]gflops=([\d.]+)', 1),
]
def pairs(kind, pat, sense):
    """new/old of each alternated pair (the same index ran back to back)."""
    out = []
    for f in sorted(glob.glob(os.path.join(D, 'new_%s_*.txt' % kind))):
        g = f.replace('new_%s_' % kind, 'old_%s_' % kind)
        if not os.path.exists(g): continue
        mn = re.search(pat, open(f).read(), re.M)
        mo = re.search(pat, open(g).read(), re.M)
        if mn and mo:
            n, o = float(mn.group(1)), float(mo.group(1))
            out.append(n / o if sense > 0 else o / n)
    return out
print('%-32s %-28s %-28s %s' % ('figure', 'old median [min..max]', 'new median [min..max]', 'new/old, medians (and best values); per pair: median [range]'))
for name, kind, pat, sense in rows:
    o, n = vals('old', kind, pat), vals('new', kind, pat)
    if not o or not n: print(name, 'missing', len(o), len(n)); continue
    mo, mn = statistics.median(o), statistics.median(n)
    r = mn / mo if sense > 0 else mo / mn
    best = max(n) / max(o) if sense > 0 else min(o) / min(n)
    pr = pairs(kind, pat, sense)
    ps = ' pairs %.2fx [%.2f..%.2f]' % (statistics.median(pr), min(pr), max(pr)) if pr else ''
    print('%-32s %-28s %-28s %.2fx (best %.2fx, n=%d/%d);%s' % (name, '%.4g [%.4g..%.4g]' % (mo, min(o), max(o)), '%.4g [%.4g..%.4g]' % (mn, min(n), max(n)), r, best, len(o), len(n), ps))
# noarg vs starpu of new in same run
n = vals('new', 'thr', r'^noarg dagger=\d+ starpu=\d+ ratio=([\d.]+)x')
if n: print('new noarg / StarPU (same run): median %.2fx [%.2f..%.2f]' % (statistics.median(n), min(n), max(n)))
