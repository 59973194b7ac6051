#!/usr/bin/env python3
"""Makes a large PyTorch trace out of a real one, for benchmarks: the
trace's events are repeated until the output reaches --size megabytes,
each copy shifted in time by the trace's span and with fresh ids, so the
result reads as one long run of many steps.

    python3 tools/torch/repeat_trace.py TRACE [--size 500] [--out bench/data/NAME]

TRACE is a *.pt.trace.json or .json.gz. Per copy k: every ts moves by
k * (span + 1 ms); External id, correlation, flow id, Python id and Python
parent id move by k * (their maximum + 1); ProfilerStep#N becomes
ProfilerStep#(N + k * steps). Metadata events and the profiler's own span
are written once, the span widened to cover every copy. Times are kept as
whole nanoseconds and written as Kineto writes them ("<us>.<3 digits>").
Only the standard library is used.
"""

import argparse
import gzip
import json
import os
import re


# Floats are read as marked text, so that they are written back as they were.
MARK = "\x00F"
MARKED = re.compile(r'"\\u0000F([-+0-9.eE]+)"')


def ns(v):
    """A ts/dur (an int, or a float as marked text) -> whole ns."""
    s = v[len(MARK):] if isinstance(v, str) and v.startswith(MARK) else str(v)
    neg = s.startswith("-")
    s = s.lstrip("-")
    whole, _, frac = s.partition(".")
    n = int(whole or 0) * 1000 + int((frac + "000")[:3])
    return -n if neg else n


def us_text(n):
    sign = "-" if n < 0 else ""
    n = abs(n)
    return f"{sign}{n // 1000}.{n % 1000:03d}"


ARG_IDS = ("External id", "correlation", "Python id", "Python parent id")
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--size", type=float, default=500, help="megabytes of output (default 500)")
    ap.add_argument("--out", help="output path (default bench/data/<name>.x<copies>.pt.trace.json)")
    args = ap.parse_args()

    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt", encoding="utf-8") as f:
        trace = json.load(f, parse_float=lambda text: MARK + text)
    events = trace["traceEvents"]
    timed = [e for e in events if "ts" in e]
    start = min(ns(e["ts"]) for e in timed)
    end = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in timed)
    period = end - start + 1_000_000
    max_id = {k: 0 for k in ARG_IDS}
    max_flow = 0
    steps = 0
    for e in events:
        for k in ARG_IDS:
            v = e.get("args", {}).get(k)
            if isinstance(v, int):
                max_id[k] = max(max_id[k], v)
        if e.get("ph") in ("s", "t", "f") and isinstance(e.get("id"), int):
            max_flow = max(max_flow, e["id"])
        m = STEP.match(str(e.get("name", "")))
        if m:
            steps = max(steps, int(m.group(1)) + 1)
    once = [e for e in events if e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e]
    repeated = [e for e in events if not (e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e)]

    def line(e, k):
        e = dict(e)
        ts, dur = ns(e.pop("ts")), e.pop("dur", None)
        if k:
            ts += k * period
            if "args" in e:
                a = dict(e["args"])
                for key in ARG_IDS:
                    if isinstance(a.get(key), int):
                        a[key] += k * (max_id[key] + 1)
                e["args"] = a
            if e.get("ph") in ("s", "t", "f") and isinstance(e.get("id"), int):
                e["id"] += k * (max_flow + 1)
            m = STEP.match(str(e.get("name", "")))
            if m:
                e["name"] = f"ProfilerStep#{int(m.group(1)) + k * steps}"
        text = MARKED.sub(r"\1", json.dumps(e, ensure_ascii=False))
        times = f', "ts": {us_text(ts)}' + (f', "dur": {us_text(ns(dur))}' if dur is not None else "")
        return text[:-1] + times + "}"

    one_copy = sum(len(line(e, 0)) + 2 for e in repeated)
    copies = max(1, int(args.size * 1e6 / one_copy))
    name = os.path.basename(args.trace).split(".")[0]
    out = args.out or os.path.join("bench", "data", f"{name}.x{copies}.pt.trace.json")
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    header = {k: v for k, v in trace.items() if k not in ("traceEvents", "traceName")}
    with open(out, "w", encoding="utf-8") as f:
        f.write("{\n")
        for k, v in header.items():
            f.write("  %s: %s,\n" % (json.dumps(k), MARKED.sub(r"\1", json.dumps(v))))
        f.write('  "traceEvents": [\n')
        first = True
        for k in range(copies):
            for e in repeated:
                f.write(("" if first else ",\n") + line(e, k))
                first = False
        for e in once:
            if e.get("cat") == "Trace" and "dur" in e:
                e = dict(e)
                e["dur"] = MARK + us_text(ns(e["dur"]) + (copies - 1) * period)
            if "ts" in e:
                f.write(",\n" + line(e, 0))
            else:
                f.write(",\n" + MARKED.sub(r"\1", json.dumps(e)))
        f.write("\n  ]\n}\n")
    print(f"{out}: {copies} copies, {os.path.getsize(out) / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
