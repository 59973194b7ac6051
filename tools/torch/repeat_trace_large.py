#!/usr/bin/env python3
"""Makes a very large PyTorch trace (gigabytes) out of a real one, for the
bounded-memory benchmarks (bench/large_pytorch.md), at disk speed.

    python3 tools/torch/repeat_trace_large.py TRACE --size 10000 --out OUT

repeat_trace.py shifts every number of every copy in Python, about 1 MB/s
under load: hours for 10 GB. Here one copy of the events is written once
as a template whose shifted numbers all start with the digit 1, so that
copy k is the template with that leading 1 replaced by k + 1 (a few
bytes.replace calls a copy):

- ts: 10^9 us + the event's offset from the trace's first event, so copy
  k runs at (k + 1) * 10^9 us (1000 s apart: idle time between copies);
- External id, correlation, Python id, Python parent id and flow ids:
  10^8 + the id, so copy k's are (k + 1) * 10^8 + the id;
- ProfilerStep#N: ProfilerStep#1NNNNN (N in five digits), so copy k's
  steps are (k + 1) * 10^5 + N, in order.

The profiler's span ("Trace") and metadata events are written once, the
span widened over every copy. Only the standard library is used.
"""

import argparse
import gzip
import json
import os

# The trace's numbers are read and written as repeat_trace.py does.
from repeat_trace import ARG_IDS, MARK, MARKED, STEP, ns, us_text  # noqa: E402

TS_BASE_US = 10**9
ID_BASE = 10**8
STEP_BASE = 10**5


def write_repeated(trace, size_mb, f, start=None):
    """Writes `trace` (as json.load with parse_float=MARK + text reads it)
    repeated to about `size_mb` megabytes into the binary file `f`; returns
    the number of copies. `start` (ns) is the time the offsets count from,
    by default the trace's first event: traces given the same start keep
    their alignment to each other in every copy (make_ranks.py's ranks)."""
    events = trace["traceEvents"]
    if start is None:
        start = min(ns(e["ts"]) for e in events if "ts" in e)

    def template(e):
        e = dict(e)
        ts, dur = ns(e.pop("ts")), e.pop("dur", None)
        offset = ts - start
        assert 0 <= offset < TS_BASE_US * 1000, "the trace spans more than 1000 s"
        if "args" in e:
            a = dict(e["args"])
            for key in ARG_IDS:
                if isinstance(a.get(key), int):
                    assert 0 <= a[key] < ID_BASE, f"{key} {a[key]} has more than 8 digits"
                    a[key] += ID_BASE
            e["args"] = a
        if e.get("ph") in ("s", "t", "f") and isinstance(e.get("id"), int):
            assert 0 <= e["id"] < ID_BASE
            e["id"] += ID_BASE
        m = STEP.match(str(e.get("name", "")))
        if m:
            assert int(m.group(1)) < STEP_BASE
            e["name"] = f"ProfilerStep#1{int(m.group(1)):05d}"
        text = MARKED.sub(r"\1", json.dumps(e, ensure_ascii=False))
        times = f', "ts": {us_text(TS_BASE_US * 1000 + offset)}' + (f', "dur": {us_text(ns(dur))}' if dur is not None else "")
        return text[:-1] + times + "}"

    once = [e for e in events if e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e]
    repeated = [e for e in events if not (e.get("ph") == "M" or e.get("cat") == "Trace" or "ts" not in e)]
    copy = ",\n".join(template(e) for e in repeated).encode("utf-8")
    # The prefixes of the shifted numbers, as the template writes them.
    prefixes = [b'"ts": 1'] + [json.dumps(k).encode() + b": 1" for k in ARG_IDS] + [b'"id": 1', b"ProfilerStep#1"]
    copies = max(1, int(size_mb * 1e6 / (len(copy) + 2)))
    header = {k: v for k, v in trace.items() if k not in ("traceEvents", "traceName")}
    f.write(b"{\n")
    for k, v in header.items():
        f.write(("  %s: %s,\n" % (json.dumps(k), MARKED.sub(r"\1", json.dumps(v)))).encode())
    f.write(b'  "traceEvents": [\n')
    for k in range(copies):
        text = copy
        if k:
            for prefix in prefixes:
                text = text.replace(prefix, prefix[:-1] + str(k + 1).encode())
            f.write(b",\n")
        f.write(text)
    for e in once:
        if "ts" in e:
            if e.get("cat") == "Trace" and "dur" in e:
                e = dict(e)
                e["dur"] = MARK + us_text(ns(e["dur"]) + copies * TS_BASE_US * 1000)
            f.write(b",\n" + template(e).encode("utf-8"))
        else:
            f.write(b",\n" + MARKED.sub(r"\1", json.dumps(e)).encode("utf-8"))
    f.write(b"\n  ]\n}\n")
    return copies


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--size", type=float, default=10000, help="megabytes of output (default 10000)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt", encoding="utf-8") as f:
        trace = json.load(f, parse_float=lambda text: MARK + text)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "wb") as f:
        copies = write_repeated(trace, args.size, f)
    print(f"{args.out}: {copies} copies, {os.path.getsize(args.out) / 1e6:.0f} MB")

if __name__ == "__main__":
    main()
