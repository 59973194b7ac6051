#!/usr/bin/env python3
"""The 10 GB Kineto trace's numbers against a 1/20 one's, scaled (issue 49).

Both traces are repeats of the shared GPT-2 H200 trace
(tools/torch/repeat_trace_large.py: copies of its events 1000 s apart), so
every interior copy is the same profile: a count or a total over the
trace must grow with the number of steps, and a per-step average or a
kernel's mean must not change. This reads both traces in windows of 128 MB
(the default above 1 GB) with `steps`, `kernels` and `op`, and prints, for
each kind of number, the largest relative difference between the large
trace's and the small one's scaled by the ratio of their steps.

    python3 bench/large_scaled.py DIR     (DIR as bench/large_pytorch.sh's:
                                           tx_10000mb.pt.trace.json there)

Only the standard library; rtfprof from target/release.
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "rtfprof")
SOURCE_DIR = os.path.join(ROOT, "../shared/traces/torch_h200/torch_tx")
SOURCE = os.path.join(SOURCE_DIR, next(f for f in sorted(os.listdir(SOURCE_DIR)) if f.endswith(".pt.trace.json.gz")))


def run(command, trace, out):
    if os.environ.get("REUSE") and os.path.exists(out):
        with open(out) as f:
            return json.load(f), None
    start = time.time()
    subprocess.run([BIN, command, "--pytorch_path", trace, "--window_mb", "128", "--output", f"json:outfile={out}"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f), time.time() - start


def rel(a, b):
    return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b))


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "bench/data/large"
    large = os.path.join(directory, "tx_10000mb.pt.trace.json")
    small = os.path.join(directory, "tx_500mb.pt.trace.json")
    if not os.path.exists(small):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools/torch/repeat_trace_large.py"), SOURCE, "--size", "500", "--out", small], check=True)
    sizes = {t: os.path.getsize(t) / 1e6 for t in (small, large)}
    results = {}
    for command in ("steps", "kernels", "op"):
        for trace, which in ((small, "small"), (large, "large")):
            results[command, trace] = run(command, trace, os.path.join(directory, f"scaled.{command}.{which}.json"))
    (s_steps, _), (l_steps, _) = results["steps", small], results["steps", large]
    ratio = len(l_steps["steps"]) / len(s_steps["steps"])
    # HTA's GPU time and the launch table leave out a trace's last step.
    counted = (len(l_steps["steps"]) - 1) / (len(s_steps["steps"]) - 1)
    # Idle time and the span hold the 1000 s gaps between copies: one
    # fewer than the copies, a copy being the source trace's steps.
    source, _ = run("steps", SOURCE, os.path.join(directory, "scaled.steps.source.json"))
    per_copy = len(source["steps"])
    gaps = (len(l_steps["steps"]) / per_copy - 1) / (len(s_steps["steps"]) / per_copy - 1)
    rows = []

    def worst(name, pairs):
        pairs = list(pairs)
        rows.append((name, len(pairs), max((rel(a, b) for a, b in pairs), default=0.0)))

    # steps: each category's mean over steps; the GPU-time totals scaled.
    numeric = [k for k, v in s_steps["steps"][0].items() if isinstance(v, (int, float))]
    mean = lambda d, k: sum(s[k] for s in d["steps"]) / len(d["steps"])
    worst("steps: each column's mean over steps", ((mean(s_steps, k), mean(l_steps, k)) for k in numeric))
    gpu = list(zip(s_steps["gpu_time"], l_steps["gpu_time"]))
    worst("steps: GPU time (compute, non-compute), scaled by the steps but the last",
          ((s[k] * counted, l[k]) for s, l in gpu for k in ("compute_us", "non_compute_us")))
    worst("steps: GPU span and idle, scaled by the gaps between copies",
          ((s[k] * gaps, l[k]) for s, l in gpu for k in ("span_us", "idle_us")))
    worst("steps: launches (kernels, kernel time), scaled by the steps but the last",
          ((s[k] * counted, l[k]) for s, l in zip(s_steps["launches"], l_steps["launches"]) for k in ("kernels", "kernel_us", "small_kernels")))
    worst("steps: launches' medians", ((s[k], l[k]) for s, l in zip(s_steps["launches"], l_steps["launches"]) for k in ("median_kernel_us", "median_launch_us")))
    # kernels: each kernel's occurrences and total scaled, its mean/min/max equal.
    (s_k, _), (l_k, _) = results["kernels", small], results["kernels", large]
    key = lambda k: (k["kernel_name"], k["op_name"], k["grid_dim"], k["block_dim"])
    large_kernels = {key(k): k for k in l_k["kernels"]}
    same = [(k, large_kernels[key(k)]) for k in s_k["kernels"] if key(k) in large_kernels]
    rows.append(("kernels: rows in both / rows", len(same), f"{len(s_k['kernels'])} small, {len(l_k['kernels'])} large"))
    worst("kernels: occurrences and total, scaled", ((s[f] * ratio, l[f]) for s, l in same for f in ("occurrences", "total_duration_us")))
    worst("kernels: mean, min, max", ((s[f], l[f]) for s, l in same for f in ("avg_duration_us", "min_duration_us", "max_duration_us")))
    # op: the root's totals are per step (tfprof's average over steps).
    (s_op, _), (l_op, _) = results["op", small], results["op", large]
    worst("op: the root's totals (an average step)", ((s_op["root"]["total"][f], l_op["root"]["total"][f]) for f in s_op["root"]["total"]))
    print(f"steps: {len(s_steps['steps'])} (small), {len(l_steps['steps'])} (large), ratio {ratio:.3f}; "
          f"sizes {sizes[small]:.0f} MB, {sizes[large]:.0f} MB, ratio {sizes[large] / sizes[small]:.3f}\n")
    print("| numbers | compared | largest relative difference |\n|---|---:|---:|")
    for name, n, d in rows:
        print(f"| {name} | {n} | {d if isinstance(d, str) else f'{d:.2e}'} |")
    print("\n| command | small (s) | large (s) | time ratio / size ratio |\n|---|---:|---:|---:|")
    for command in ("steps", "kernels", "op"):
        a, b = results[command, small][1], results[command, large][1]
        if a and b:
            print(f"| {command} | {a:.1f} | {b:.1f} | {(b / a) / (sizes[large] / sizes[small]):.2f} |")


if __name__ == "__main__":
    main()
