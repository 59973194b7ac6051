#!/usr/bin/env python3
"""Compares, event by event, the whole-microsecond (start, end) that HTA
0.5.0 gives each GPU event (HTA's dataframe after TraceAnalysis:
`t.get_trace(rank)`, its `ts` shifted back by `t.min_ts`, and `ts + dur`)
with the ones rtfprof's `breakdown::span(e, Timing::Hta)` gives (printed by
`examples/hta_spans.rs`), and prints how many differ.

    cargo build --release --example hta_spans
    /work/venvs/hta/bin/python tools/torch/hta_spans_diff.py TRACE... [--bin target/release/examples/hta_spans]

(venv: see hta_goldens.py.) An event of HTA's dataframe is found in the
trace by HTA's `index` (its place in `traceEvents`), whose `ts`/`dur`
decimals are read exactly as rtfprof reads them (whole nanoseconds, more
than 3 decimals rounded half away from 0), and matched with rtfprof's
event of the same (ts, dur, correlation). GPU events: those with a stream
(HTA's `stream` >= 0) and a correlation. One line per trace:
`TRACE gpu_events=N matched=M differ=D start_differ=S end_differ=E`, and
with --show, the first differing events. With --rtfprof BIN, also HTA's
get_temporal_breakdown() and get_idle_time_breakdown() (summed over
streams) against `BIN steps --pytorch_path TRACE --output json:...`'s
`gpu_time` (one GPU), µs.
"""

import argparse
import collections
import gzip
import json
import logging
import os
import subprocess
import sys
import tempfile
from decimal import ROUND_HALF_UP, Decimal

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hta_goldens import golden  # noqa: E402

BREAKDOWN = [
    ("span_us", "kernel_time(us)"),
    ("compute_us", "compute_time(us)"),
    ("non_compute_us", "non_compute_time(us)"),
    ("idle_us", "idle_time(us)"),
    ("idle_host_wait_us", "host_wait"),
    ("idle_kernel_wait_us", "kernel_wait"),
    ("idle_other_us", "other"),
]


def ns(value):
    """A `ts`/`dur` as rtfprof reads it: whole nanoseconds."""
    if value is None:
        return 0
    return int((Decimal(value) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def hta_events(trace):
    """HTA's GPU events: (index in traceEvents, start, end), µs."""
    with tempfile.TemporaryDirectory() as tmp:
        name = os.path.basename(trace)
        os.symlink(os.path.abspath(trace), os.path.join(tmp, name))
        analysis = TraceAnalysis(trace_dir=tmp)
        t = analysis.t
        rank = sorted(t.traces)[0]
        df = t.get_trace(rank)
        gpu = df[(df["stream"] >= 0) & (df["correlation"] >= 0)]
        return [(int(i), int(ts) + int(t.min_ts), int(ts) + int(t.min_ts) + int(dur)) for i, ts, dur in zip(gpu["index"], gpu["ts"], gpu["dur"])]


def raw_events(trace):
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=lambda text: text, parse_int=lambda text: text)["traceEvents"]


def ours(trace, binary):
    """rtfprof's events with a stream: (ts_ns, dur_ns, correlation) -> [(start, end)]."""
    out = subprocess.run([binary, trace], check=True, capture_output=True, text=True).stdout
    spans = collections.defaultdict(list)
    for line in out.splitlines():
        ts, dur, correlation, start, end = map(int, line.split())
        spans[(ts, dur, correlation)].append((start, end))
    return spans


def compare(trace, binary, show):
    raw = raw_events(trace)
    spans = ours(trace, binary)
    counts = collections.Counter()
    shown = 0
    for index, start, end in hta_events(trace):
        e = raw[index]
        args = e.get("args") or {}
        key = (ns(e.get("ts")), ns(e.get("dur")), int(args.get("correlation", 0) or 0))
        counts["gpu_events"] += 1
        mine = spans.get(key)
        if not mine:
            continue
        counts["matched"] += 1
        s, t = mine[0]
        if (s, t) != (start, end):
            counts["differ"] += 1
            counts["start_differ"] += s != start
            counts["end_differ"] += t != end
            if shown < show:
                shown += 1
                print(f"  {e.get('name')!r} ts={e.get('ts')} dur={e.get('dur')}: HTA ({start}, {end}), rtfprof ({s}, {t})")
    fields = ("gpu_events", "matched", "differ", "start_differ", "end_differ")
    print(trace, " ".join(f"{k}={counts[k]}" for k in fields), flush=True)


def breakdowns(trace, rtfprof):
    """HTA's breakdowns and rtfprof's, one line each."""
    doc = golden(trace, trace)
    theirs = dict(doc["temporal_breakdown"][0])
    for row in doc["idle_time_breakdown"]:
        theirs[row["idle_category"]] = theirs.get(row["idle_category"], 0) + row["idle_time"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "steps.json")
        subprocess.run([rtfprof, "steps", "--pytorch_path", trace, "--output", f"json:outfile={out}"], check=True, capture_output=True)
        with open(out) as f:
            gpus = json.load(f)["gpu_time"]
    if len(gpus) != 1:
        print(f"  {len(gpus)} GPUs: HTA's breakdown is of the rank, not compared")
        return
    ours = gpus[0]
    print("  HTA:    ", " ".join(f"{k}={float(theirs.get(h, 0)):.12g}" for k, h in BREAKDOWN))
    print("  rtfprof:", " ".join(f"{k}={float(ours[k]):.12g}" for k, _ in BREAKDOWN))
    differ = [f"{k} {float(ours[k]) - float(theirs.get(h, 0)):+g}" for k, h in BREAKDOWN if float(ours[k]) != float(theirs.get(h, 0))]
    print("  differ: ", ", ".join(differ) or "none", flush=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--bin", default=os.path.join(here, "../../target/release/examples/hta_spans"))
    ap.add_argument("--rtfprof", help="also compare the breakdowns of this rtfprof binary's steps with HTA's")
    ap.add_argument("--show", type=int, default=0, help="print the first N differing events")
    args = ap.parse_args()
    for trace in args.traces:
        try:
            compare(trace, args.bin, args.show)
            if args.rtfprof:
                breakdowns(trace, args.rtfprof)
        except Exception as e:  # HTA fails on some traces: go on with the next.
            print(trace, f"failed: {type(e).__name__}: {str(e)[:200]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
