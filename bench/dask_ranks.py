#!/usr/bin/env python3
"""The Dask recipe of partials (docs/book/src/commands/partial.md) on a
directory of rank traces: a LocalCluster of worker processes makes each
rank's partial (`rtfprof.partial`), then merges them in a tree
(`rtfprof.merge`, --fan-in at a time, on the workers); and, with --single,
one process makes the directory's partial (`rtfprof partial --pytorch_path
DIR`), which the merged one must equal byte for byte (the book's promise).

    python bench/dask_ranks.py DIR [--workers 2] [--fan-in 2] [--single] [--out merged.rtfprof]

Needs the rtfprof wheel and dask[distributed] in the running Python, and
/usr/bin/time for the single process. Prints one JSON object: wall times
of the partial phase and of the merge tree, each rank's time (seconds and
MB/s of JSON), each worker's peak RSS (its process's ru_maxrss, read on the
worker after the run) and its RSS before any task, the partial and merged
sizes, and the single process's wall time, peak RSS and equality.
bench/dask_ranks.md has the results on 128 ranks (tools/torch/make_ranks.py).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import rtfprof


def json_bytes(path):
    """The uncompressed size of a trace: for .gz, gzip's trailer (the size
    mod 4 GiB: rank traces here are far smaller)."""
    if not path.endswith(".gz"):
        return os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def timed_partial(path):
    """A rank's partial on a worker, and what it cost there."""
    start = time.perf_counter()
    data = rtfprof.partial(path)
    return {"bytes": data, "seconds": time.perf_counter() - start, "pid": os.getpid(), "size": len(data)}


def without_bytes(part):
    return {k: v for k, v in part.items() if k != "bytes"}


def timed_merge(parts):
    start = time.perf_counter()
    data = rtfprof.merge([p["bytes"] for p in parts])
    return {"bytes": data, "seconds": time.perf_counter() - start, "pid": os.getpid(), "inputs": len(parts)}


def peak_rss_mb():
    """This process's peak resident set (Linux: ru_maxrss is in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb():
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fan-in", type=int, default=2, help="partials a merge task takes (default 2: pairs)")
    ap.add_argument("--single", action="store_true", help="also run the single process and compare bytes")
    ap.add_argument("--rtfprof", default="rtfprof", help="the CLI the single process runs (default: rtfprof on PATH)")
    ap.add_argument("--out", help="write the merged partial here")
    args = ap.parse_args()
    if args.fan_in < 2 or args.workers < 1:
        sys.exit("dask_ranks.py: --fan-in must be at least 2 and --workers at least 1")
    if not os.path.isdir(args.dir):
        sys.exit(f"dask_ranks.py: {args.dir}: not a directory")
    files = sorted(os.path.join(args.dir, n) for n in os.listdir(args.dir) if n.endswith((".pt.trace.json", ".pt.trace.json.gz")))
    if not files:
        sys.exit(f"dask_ranks.py: {args.dir}: no *.pt.trace.json(.gz) files")
    from dask.distributed import Client, LocalCluster, wait

    result = {"ranks": len(files), "workers": args.workers, "fan_in": args.fan_in, "cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    result["json_mb"] = sum(json_bytes(f) for f in files) / 1e6
    result["gz_mb"] = sum(os.path.getsize(f) for f in files) / 1e6
    # memory_limit=0: no spilling or restarts, so the peaks are the recipe's own.
    with LocalCluster(n_workers=args.workers, processes=True, threads_per_worker=1, memory_limit=0, dashboard_address=None) as cluster, Client(cluster) as client:
        result["worker_rss_before_mb"] = sorted(client.run(rss_mb).values())
        start = time.perf_counter()
        parts = client.map(timed_partial, files)
        wait(parts)
        result["partial_wall_s"] = time.perf_counter() - start
        ranks = client.gather(client.map(without_bytes, parts))
        start = time.perf_counter()
        level = parts
        merges = []
        while len(level) > 1:
            level = [client.submit(timed_merge, level[i:i + args.fan_in]) for i in range(0, len(level), args.fan_in)]
            merges.append(level)
        wait(level)
        merged = level[0].result()
        result["merge_wall_s"] = time.perf_counter() - start
        result["merge_levels"] = len(merges)
        result["root_merge_s"] = merged.get("seconds", 0.0)
        result["worker_peak_rss_mb"] = sorted(client.run(peak_rss_mb).values())
        merged = merged["bytes"]
        del parts, level, merges
    seconds = [r["seconds"] for r in ranks]
    per_rank_mb = result["json_mb"] / len(files)
    result["rank_s"] = {"median": statistics.median(seconds), "min": min(seconds), "max": max(seconds), "mean": statistics.mean(seconds)}
    result["rank_mb_per_s"] = per_rank_mb / statistics.median(seconds)
    result["partial_mb"] = statistics.median(r["size"] for r in ranks) / 1e6
    result["merged_mb"] = len(merged) / 1e6
    result["total_wall_s"] = result["partial_wall_s"] + result["merge_wall_s"]
    if args.out:
        with open(args.out, "wb") as f:
            f.write(merged)
    if args.single:
        with tempfile.TemporaryDirectory() as tmp:
            out, timing = os.path.join(tmp, "single.rtfprof"), os.path.join(tmp, "time")
            run = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", timing, args.rtfprof, "partial", "--pytorch_path", args.dir, "-o", out], capture_output=True, text=True)
            if run.returncode != 0:
                result["single"] = {"rc": run.returncode, "stderr": run.stderr.strip()[-500:]}
            else:
                wall, kb = open(timing).read().split()[-2:]
                with open(out, "rb") as f:
                    single = f.read()
                result["single"] = {"wall_s": float(wall), "peak_rss_mb": int(kb) / 1024, "bytes_equal": single == merged}
    result["load_after"] = os.getloadavg()[0]
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.single and not result["single"].get("bytes_equal"):
        sys.exit(1)


if __name__ == "__main__":
    main()
