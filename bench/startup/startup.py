#!/usr/bin/env python3
"""Start-up cost of delta binaries, side by side (issue 26).

    python3 bench/startup/startup.py TABLE NAME=BINARY [NAME=BINARY ...]

For `--help` and `describe TABLE`: wall time of 41 runs of each binary,
interleaved (the order reversed every other round), timed with
perf_counter; peak RSS of 5 runs of /usr/bin/time -f %M, each on a fresh
copy of the binary (a binary run again and again from the same file can
show more RSS from page-cache state); and, over 21 interleaved runs with
GODEBUG=inittrace=1, the packages initialised, the bytes their inits
allocate and the median of the init clock total. Prints one line per
command and binary, and the load average.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    table, pairs = sys.argv[1], sys.argv[2:]
    bins = dict(p.split("=", 1) for p in pairs)
    cmds = {"--help": ["--help"], "describe": ["describe", table]}
    wall = {(b, c): [] for b in bins for c in cmds}
    for i in range(41):
        order = list(bins) if i % 2 == 0 else list(reversed(list(bins)))
        for c, args in cmds.items():
            for b in order:
                t0 = time.perf_counter()
                subprocess.run([bins[b]] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                wall[(b, c)].append((time.perf_counter() - t0) * 1000)
    rss = {(b, c): [] for b in bins for c in cmds}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(5):
            for c, args in cmds.items():
                for b in bins:
                    fresh = os.path.join(tmp, f"fresh-{i}-{b}-{c.strip('-')}")
                    shutil.copy(bins[b], fresh)
                    r = subprocess.run(["/usr/bin/time", "-f", "%M", fresh] + args, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True, check=True)
                    rss[(b, c)].append(int(r.stderr.strip().splitlines()[-1]))
                    os.remove(fresh)
    init = {b: [] for b in bins}
    for i in range(21):
        for b in bins:
            r = subprocess.run([bins[b], "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, GODEBUG="inittrace=1"))
            # init PKG @T ms, C ms clock, B bytes, A allocs
            lines = [l.split() for l in r.stderr.splitlines() if l.startswith("init ")]
            init[b].append((len(lines), sum(float(l[4]) for l in lines), sum(int(l[7]) for l in lines)))
    print("load average:", os.getloadavg())
    for b in bins:
        pk, by = init[b][0][0], init[b][0][2]
        clock = statistics.median(x[1] for x in init[b])
        print(f"{b}: binary {os.path.getsize(bins[b]) / 1e6:.1f} MB, {pk} packages initialised, "
              f"inits allocate {by} bytes, init clock median {clock:.1f} ms")
        for c in cmds:
            w, m = wall[(b, c)], rss[(b, c)]
            q = statistics.quantiles(w, n=4)
            print(f"  {c:9s} wall median {statistics.median(w):.1f} ms (quartiles {q[0]:.1f}-{q[2]:.1f}, n={len(w)}), "
                  f"peak RSS median {statistics.median(m)} KB (all {sorted(m)})")


if __name__ == "__main__":
    main()
