#!/usr/bin/env python3
"""Cuts a small test fixture out of a real PyTorch GPU trace: the events of
some consecutive ProfilerStep#N, with the GPU work they launched, so that
CI can test GPU numbers on real data without the trace in the repository.

    python3 tools/torch/cut_trace.py TRACE --steps FIRST-LAST --out testdata/pytorch/NAME.pt.trace.json.gz
    python3 tools/torch/cut_trace.py TRACE --window SKIP_MS:LENGTH_MS --out ...

`--window` cuts a trace without steps (or any trace) by time instead:
LENGTH_MS milliseconds of the CPU side, SKIP_MS after its first event (a
trace without CPU events: of its GPU events).

Kept: the header (device properties, distributed info), metadata events,
every CPU-side event (ops, runtime calls, annotations, Python frames,
[memory] instants) that overlaps the window from step FIRST's start to step
LAST's end, except the other steps' ProfilerStep#N spans; GPU kernels,
copies and sets launched by a kept runtime call (by `correlation`), and GPU
events with no launch that overlap the window; GPU-side step annotations
of the kept steps; flows whose every end is kept; the profiler's own span,
clipped to what is kept. Times and ids are written back as they were read
(no rounding). The output is gzipped with a fixed mtime, so the same input
gives the same bytes. Only the standard library is used.
"""

import argparse
import gzip
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repeat_trace import MARK, MARKED, STEP, ns, us_text  # noqa: E402

# Kineto's categories, and torch 1.8/1.9's (Kernel, Memcpy, Runtime, ...).
GPU = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset", "mtia_ccp_events"}
LAUNCHES = {"cuda_runtime", "cuda_driver", "Runtime", "Driver", "mtia_runtime"}
FLOWS = {"s", "t", "f"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--steps", help="FIRST-LAST, e.g. 1-2 (ProfilerStep numbers)")
    how.add_argument("--window", help="SKIP_MS:LENGTH_MS of the CPU side (from its first event)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.steps:
        first, _, last = args.steps.partition("-")
        wanted = set(range(int(first), int(last or first) + 1))
    else:
        wanted = set()

    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt", encoding="utf-8") as f:
        trace = json.load(f, parse_float=lambda text: MARK + text)
    if isinstance(trace, list):
        trace = {"traceEvents": trace}
    events = trace["traceEvents"]

    def span(e):
        start = ns(e["ts"])
        return start, start + ns(e.get("dur", 0))

    def step_of(e):
        m = STEP.match(str(e.get("name", "")))
        return int(m.group(1)) if m else None

    if args.steps:
        cpu_steps = [e for e in events if step_of(e) is not None and e.get("cat") != "gpu_user_annotation"]
        chosen = [e for e in cpu_steps if step_of(e) in wanted]
        if len(chosen) != len(wanted):
            sys.exit(f"{args.trace}: steps {sorted(wanted)} not all found (has {sorted(step_of(e) for e in cpu_steps)})")
        w0 = min(span(e)[0] for e in chosen)
        w1 = max(span(e)[1] for e in chosen)
    else:
        skip, _, length = args.window.partition(":")
        timed = [e for e in events if e.get("ph") == "X" and "ts" in e and e.get("cat") != "Trace"]
        cpu = [e for e in timed if e.get("cat") not in GPU and e.get("cat") != "gpu_user_annotation"] or timed
        w0 = min(span(e)[0] for e in cpu) + int(float(skip) * 1e6)
        w1 = w0 + int(float(length) * 1e6)
        # Steps wholly inside the window are kept.
        wanted = {step_of(e) for e in cpu if step_of(e) is not None and w0 <= span(e)[0] and span(e)[1] <= w1}

    def overlaps(e):
        a, b = span(e)
        return a < w1 and (b > w0 or (a == b and a >= w0))

    kept = []
    correlations = set()
    for e in events:
        cat = e.get("cat")
        if e.get("ph") == "M" or "ts" not in e or cat == "Trace" or e.get("ph") in FLOWS or cat in GPU:
            continue
        step = step_of(e)
        if step is not None and step not in wanted:
            continue
        if cat == "gpu_user_annotation":
            continue
        if overlaps(e):
            kept.append(e)
            if cat in LAUNCHES and "correlation" in e.get("args", {}):
                correlations.add(e["args"]["correlation"])
    gpu_end = w1
    # A GPU event whose launch is in the trace is kept with its launch;
    # one whose launch is not (queued before the profiler started), by time.
    launched = {e["args"]["correlation"] for e in events if e.get("cat") in LAUNCHES and "correlation" in e.get("args", {})}
    for e in events:
        if e.get("cat") in GPU:
            c = e.get("args", {}).get("correlation")
            if (c in correlations) if c in launched and c != 0 else overlaps(e):
                kept.append(e)
                gpu_end = max(gpu_end, span(e)[1])
    for e in events:
        if e.get("cat") == "gpu_user_annotation" and step_of(e) in wanted:
            kept.append(e)
    # Flows: kept when every end of their id lies on a kept event (same
    # thread, same ts as a kept event's start).
    starts = {(e.get("pid"), e.get("tid"), ns(e["ts"])) for e in kept}
    by_id = {}
    for e in events:
        if e.get("ph") in FLOWS:
            by_id.setdefault((e.get("cat"), e.get("id")), []).append(e)
    flows = [e for group in by_id.values() if all((e.get("pid"), e.get("tid"), ns(e["ts"])) in starts for e in group) for e in group]
    kept_ids = {id(e) for e in kept + flows}
    out_events = [e for e in events if id(e) in kept_ids]
    # Metadata of the processes kept, each once (an MTIA trace repeats
    # its few processes' names 60,000 times).
    pids = {e.get("pid") for e in kept}
    seen = set()
    for e in events:
        if e.get("ph") == "M":
            key = json.dumps(e, sort_keys=True)
            if ("pid" in e and e["pid"] not in pids) or key in seen:
                continue
            seen.add(key)
        if e.get("ph") == "M" or "ts" not in e:
            out_events.append(e)
        elif e.get("cat") == "Trace" and kept:
            e = dict(e)
            lo = min(span(x)[0] for x in kept)
            e["ts"] = MARK + us_text(lo)
            e["dur"] = MARK + us_text(max(gpu_end, w1) - lo)
            out_events.append(e)

    text = io.StringIO()
    text.write("{\n")
    for k, v in trace.items():
        if k != "traceEvents":
            text.write("  %s: %s,\n" % (json.dumps(k), MARKED.sub(r"\1", json.dumps(v))))
    text.write('  "traceEvents": [\n')
    text.write(",\n".join(MARKED.sub(r"\1", json.dumps(e, ensure_ascii=False)) for e in out_events))
    text.write("\n  ]\n}\n")
    data = text.getvalue().encode("utf-8")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    if args.out.endswith(".gz"):
        with open(args.out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as f:
            f.write(data)
    else:
        with open(args.out, "wb") as f:
            f.write(data)
    gpu = sum(1 for e in out_events if e.get("cat") in GPU)
    print(f"{args.out}: steps {sorted(wanted)}, window {us_text(w0)}..{us_text(w1)} us, {len(out_events)} of {len(events)} events ({gpu} on the GPU), {os.path.getsize(args.out)} bytes")


if __name__ == "__main__":
    main()
