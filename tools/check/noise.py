#!/usr/bin/env python3
"""Measure the run-to-run noise `rtfprof check` sees between identical runs.

    /work/venvs/gate-jax/bin/python tools/check/gen_runs.py --noise 8 /tmp/noise
    python3 tools/check/noise.py /tmp/noise [RTFPROF_BINARY]

(or the runs of tools/check/gen_framework_runs.py --noise, for PyTorch and
TensorFlow 2)

    python3 tools/check/noise.py /tmp/noise [RTFPROF_BINARY] --runs K:M

With --runs K:M, checks every choice of K baseline runs against M other
runs (`rtfprof check B1 .. BK --new N1 .. NM`: several runs a side) and
prints how many failed, and on which metrics, instead.

Runs `rtfprof check A B` and `rtfprof check B A` on every pair of the runs
in the folder (run0, run1, …: the same program, so every difference is
noise) and prints how many of those checks failed (and on which metrics),
how far the median step time,
each op's median and each allocator's median peak memory moved (|relative
change|: median, 90th percentile, largest), and each run's step times. The
thresholds (--max_regression, --max_op_regression,
--max_memory_regression) should sit
above the 90th percentile measured on the machine CI runs on
(docs/book/src/commands/check.md, "Defaults").
"""
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    sides = None
    if "--runs" in args:
        i = args.index("--runs")
        sides = tuple(int(n) for n in args[i + 1].split(":"))
        del args[i : i + 2]
    folder = args[0]
    binary = args[1] if len(args) > 1 else "target/release/rtfprof"
    runs = sorted(os.path.join(folder, d) for d in os.listdir(folder) if d.startswith("run"))
    if sides:
        return several_runs(runs, binary, *sides)
    step, ops, memory, failed, pairs = [], [], [], 0, 0
    failing = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "check.json")
        for a, b in itertools.combinations(runs, 2):
            pairs += 1
            for first, second in ((a, b), (b, a)):
                doc = check(binary, [first, second], out, failing)
                failed += not doc["passed"]
            # (The changes of one way only: the other way's are their mirror.)
            for m in doc["metrics"]:
                if m["kind"] == "step_time":
                    step.append(abs(m["change"]))
                elif m["kind"] == "op_time" and m["change"] is not None:
                    ops.append(abs(m["change"]))
                elif m["kind"] == "peak_memory" and m["change"] is not None:
                    memory.append(abs(m["change"]))
        print(f"{len(runs)} runs, {pairs} pairs, {2 * pairs} checks (both ways): {failed} failed with the defaults (regressions by kind: {failing})")
        for what, xs in (("step time", step), ("op", ops), ("peak memory", memory)):
            if not xs:
                continue
            xs = sorted(xs)
            p90 = xs[int(0.9 * (len(xs) - 1))]
            print(f"{what} |change of median|: median {100 * statistics.median(xs):.1f}%, p90 {100 * p90:.1f}%, max {100 * xs[-1]:.1f}% ({len(xs)} comparisons)")
        saved = os.path.join(tmp, "base.json")
        for run in runs:
            subprocess.run([binary, "check", run, "--save_baseline", saved], check=True, capture_output=True)
            with open(saved) as f:
                samples = next(m["samples"] for m in json.load(f)["metrics"] if m["kind"] == "step_time")
            print(f"{run}: {len(samples)} steps, median {statistics.median(samples):.0f} us, min {min(samples):.0f}, max {max(samples):.0f}")


def several_runs(runs, binary, k, m):
    """Every choice of k baseline runs and m other new runs, checked."""
    failed, checks, failing = 0, 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "check.json")
        for base in itertools.combinations(runs, k):
            rest = [r for r in runs if r not in base]
            for new in itertools.combinations(rest, m):
                checks += 1
                failed += not check(binary, [*base, "--new", *new], out, failing)["passed"]
    print(f"{len(runs)} runs, {checks} checks of {k} baseline runs against {m} others: {failed} failed with the defaults (regressions by kind: {failing})")


def check(binary, args, out, failing):
    """`rtfprof check ARGS`: its JSON document; counts its regressions by
    kind into `failing`."""
    subprocess.run([binary, "check", *args, "--output", "none", "--output", f"json:outfile={out}"], check=False, capture_output=True)
    with open(out) as f:
        doc = json.load(f)
    for metric in doc["metrics"]:
        if metric["verdict"] == "regression":
            failing[metric["kind"]] = failing.get(metric["kind"], 0) + 1
    return doc


if __name__ == "__main__":
    main()
