#!/usr/bin/env python3
"""Compare `rtfprof steps` with XProf's input_pipeline_analyzer on any trace.

    /work/venvs/xprof/bin/python tools/xplane/compare_steps.py TRACE.xplane.pb [RTFPROF]

For traces too big to commit as fixtures (bench/data/xplane/x1, x10, x25):
tests/integration/steps.rs holds the same check for the committed fixtures. XProf
converts a copy of TRACE alone in a temporary directory (its cache would
answer otherwise); rtfprof (default target/release/rtfprof) writes its
JSON. Per step, every column must be within 1% of the step time (the
issue's criterion); prints the largest difference of each column, in µs
and as a share of its step, and exits 1 on a mismatch.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# rtfprof's key -> the column of XProf's step table (ms), as tests/integration/steps.rs.
COLUMNS = {
    "step_time_us": 11,
    "device_compute_us": 1, "device_to_device_us": 2, "device_collectives_us": 3,
    "host_compute_us": 4, "kernel_launch_us": 5, "input_us": 6, "output_us": 7,
    "compile_us": 8, "other_us": 9,
}


def xprof_rows(trace):
    from xprof.convert import raw_to_tool_data
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(trace))
        shutil.copyfile(trace, copy)
        data, _ = raw_to_tool_data.xspace_to_tool_data([copy], "input_pipeline_analyzer", {"use_saved_result": False})
    tables = json.loads(data)
    return tables[1]["rows"] if isinstance(tables, list) else tables["rows"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    trace = sys.argv[1]
    binary = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "target", "release", "rtfprof")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "steps.json")
        subprocess.run([binary, "steps", "--xplane_path", trace, "--output", f"json:outfile={out}"], check=True)
        ours = json.load(open(out))["steps"]
    rows = xprof_rows(trace)
    print(f"{len(ours)} steps (XProf: {len(rows)})")
    ok = len(ours) == len(rows)
    worst = {key: (0.0, 0.0, "") for key in COLUMNS}
    for row, step in zip(rows, ours):
        cells = [c.get("v") if isinstance(c, dict) else c for c in row["c"]]
        if cells[0] != step["step"]:
            print(f"step name: XProf {cells[0]!r}, rtfprof {step['step']!r}")
            ok = False
        step_us = cells[11] * 1000.0
        for key, col in COLUMNS.items():
            diff = abs(cells[col] * 1000.0 - step[key])
            share = diff / step_us if step_us else 0.0
            if share > worst[key][1]:
                worst[key] = (diff, share, step["step"])
            if share > 0.01:
                ok = False
    for key, (diff, share, name) in worst.items():
        print(f"{key:24} largest difference {diff:10.3f} µs ({100 * share:.4f}% of step {name or '-'})")
    print("OK: every column within 1% of its step time" if ok else "MISMATCH")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
