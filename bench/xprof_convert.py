#!/usr/bin/env python3
"""Time / measure an XProf tool's conversion in-process (bench/xplane.py's
helper; run it with the Python that has `xprof`).

    python xprof_convert.py serve            (lines "TOOL<tab>TRACE" or "TRACE" on stdin)
    python xprof_convert.py rss TRACE OUT.json [TOOL]

The conversion is what XProf's web UI runs for a tool (default
`framework_op_stats`, the op table; `input_pipeline_analyzer` is the step
breakdown): `xprof.convert.raw_to_tool_data.xspace_to_tool_data([TRACE],
TOOL, {"use_saved_result": False})`.  XProf writes a cache
beside the trace (`ALL_HOSTS.op_stats_v2.pb`, `*.SSTABLE`) and would read it
back on the next call: TRACE must be a copy alone in its own directory, and
every file beside it is deleted before each run, so that each run converts
the trace from scratch.  Importing xprof is never timed.

`serve` reads one trace path (after its tool and a tab) per line on stdin, converts it once and prints
one JSON line: wall seconds (perf_counter) and process CPU seconds
(time.process_time, all threads) of the call, the output's length, and
ru_maxrss so far.  An empty line ends it.
`rss` converts TRACE once in this fresh process and writes ru_maxrss after
importing xprof (the baseline: Python + xprof, nothing read yet) and after
the conversion (the peak) to OUT.json; XProf's own peak is the difference.
"""
import json
import os
import resource
import sys
import time


def clear_cache(trace):
    """Deletes everything beside the trace (XProf's cache files)."""
    d = os.path.dirname(os.path.abspath(trace))
    for name in os.listdir(d):
        path = os.path.join(d, name)
        if path != os.path.abspath(trace) and os.path.isfile(path):
            os.remove(path)


def convert(trace, tool="framework_op_stats"):
    from xprof.convert import raw_to_tool_data
    clear_cache(trace)
    wall, cpu = time.perf_counter(), time.process_time()
    data, _ = raw_to_tool_data.xspace_to_tool_data(
        [trace], tool, {"use_saved_result": False})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not data:
        raise RuntimeError("XProf returned nothing for " + trace)
    return {"total": wall, "cpu": cpu, "out_len": len(data),
            "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def main():
    from xprof.convert import raw_to_tool_data  # noqa: F401  (import not timed)
    if sys.argv[1] == "serve":
        print(json.dumps({"ready": True}), flush=True)
        for line in sys.stdin:
            line = line.strip()
            if not line:
                break
            tool, _, trace = line.rpartition("\t")
            print(json.dumps(convert(trace, tool or "framework_op_stats")), flush=True)
    elif sys.argv[1] == "rss":
        trace, out = sys.argv[2], sys.argv[3]
        tool = sys.argv[4] if len(sys.argv) > 4 else "framework_op_stats"
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        r = convert(trace, tool)
        json.dump({"baseline_kb": base, "peak_kb": r["maxrss_kb"],
                   "delta_kb": r["maxrss_kb"] - base, "total": r["total"]},
                  open(out, "w"))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
