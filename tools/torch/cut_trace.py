#!/usr/bin/env python3
"""Cut the last steps out of a PyTorch (Kineto) trace, as a small fixture.

    python3 tools/torch/cut_trace.py TRACE.pt.trace.json[.gz] OUT.pt.trace.json.gz STEPS

Keeps the trace's header (every key but traceEvents) and, of its events:

- every metadata event (ph "M") and the profiler's own span (cat "Trace");
- every event that starts at or after the start of the first kept step
  (the last STEPS `ProfilerStep#N` spans by start): the steps' CPU ops,
  runtime calls, kernels, copies, sets, memory records and flows;
- the `python_function` events that are still running then (the frames
  around the steps), so that the ops keep their Python stacks.

Events are written in their original order, each unchanged (json.dumps of
the parsed event; numbers keep Python's float repr, which reads back to the
same value).  The GPU work of the first kept step that the step before it
queued, if any, is left out with that step: the cut starts where a step's
CPU span starts.  Output is gzip-compressed with mtime 0, so the same input
gives the same bytes.
"""
import gzip
import json
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, out, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if open(src, "rb").read(2) == b"\x1f\x8b" else open
    with opener(src, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"]
    steps = sorted(e["ts"] for e in events if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    if len(steps) < keep:
        sys.exit(f"cut_trace: {src} has {len(steps)} steps, fewer than {keep}")
    start = steps[-keep]

    def kept(e):
        if e.get("ph") == "M" or e.get("cat") == "Trace":
            return True
        ts = e.get("ts")
        if ts is None:
            return False
        if ts >= start:
            return True
        return e.get("cat") == "python_function" and ts + e.get("dur", 0) > start

    trace["traceEvents"] = [e for e in events if kept(e)]
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        f.write(json.dumps(trace).encode("utf-8"))
    print(f"{out}: {len(trace['traceEvents'])} of {len(events)} events, from ts {start}")


if __name__ == "__main__":
    main()
