#!/usr/bin/env python3
"""Makes the traces of a data-parallel job of N ranks, each about --size
megabytes of JSON (written gzipped), for the cluster benchmark of
partials (bench/dask_ranks.py, bench/dask_ranks.md).

    python3 tools/torch/make_ranks.py --ranks 128 --size 100 --out DIR [--jobs 2] [--seed 1]

gen_ranks.py writes the job's N ranks first (two steps of the real
ResNet-18 H200 trace each; every rank its own speed factor and its own
`distributedInfo.rank`, all-reduces that end together on every rank, one
slow rank); each is then repeated with repeat_trace_large.py's template
until it reaches --size megabytes: copy k of every rank starts at
(k + 1) * 1000 s, its steps are ProfilerStep#(k + 1)000NN. The offsets of
all ranks count from the earliest event of the job, so the ranks keep
their alignment (who waits for whom) in every copy. Files keep
gen_ranks.py's names and are gzipped at level 1 with mtime 0: the same
arguments write the same bytes. Only the standard library is used.
"""

import argparse
import gzip
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repeat_trace import MARK, ns  # noqa: E402
from repeat_trace_large import write_repeated  # noqa: E402


def load(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=lambda text: MARK + text)


def first_ts(path):
    return min(ns(e["ts"]) for e in load(path)["traceEvents"] if "ts" in e)


def repeat(job):
    """One rank: its repeated trace, gzipped; returns (name, copies, JSON bytes)."""
    source, out, size, start = job
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=1, mtime=0) as f:
        copies = write_repeated(load(source), size, f, start)
        return os.path.basename(out), copies, f.tell()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=128)
    ap.add_argument("--size", type=float, default=100, help="megabytes of JSON a rank (default 100)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=1, help="ranks written at a time (default 1)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.ranks < 1 or args.size <= 0:
        sys.exit("make_ranks.py: --ranks must be at least 1 and --size above 0")

    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.out) as base:
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "gen_ranks.py"), "--ranks", str(args.ranks), "--slow-rank", str(args.ranks * 2 // 3),
                        "--seed", str(args.seed), "--out", base], check=True, stdout=subprocess.DEVNULL)
        sources = sorted(os.path.join(base, n) for n in os.listdir(base) if n.endswith(".pt.trace.json.gz"))
        with multiprocessing.Pool(args.jobs) as pool:
            start = min(pool.map(first_ts, sources))
            jobs = [(s, os.path.join(args.out, os.path.basename(s)), args.size, start) for s in sources]
            total = 0
            for name, copies, size in pool.imap_unordered(repeat, jobs):
                total += size
                print(f"{name}: {copies} copies, {size / 1e6:.0f} MB of JSON", flush=True)
    print(f"{args.out}: {len(sources)} ranks, {total / 1e6:.0f} MB of JSON")


if __name__ == "__main__":
    main()
