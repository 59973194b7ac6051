#!/usr/bin/env python3
"""Writes Holistic Trace Analysis' (HTA 0.5.0) communication/computation
overlap of the committed multi-rank PyTorch traces, as goldens for
`rtfprof ranks` (tests/integration/ranks.rs).

    /work/venvs/hta/bin/python tools/torch/hta_ranks_goldens.py [DIR...]

(venv: python3 -m venv /work/venvs/hta && /work/venvs/hta/bin/pip install
holistictraceanalysis==0.5.0). DIR defaults to testdata/pytorch/ranks16 and
testdata/pytorch/gloo3; for each it writes
testdata/pytorch/hta/<basename>.comm_comp_overlap.json:
TraceAnalysis(trace_dir=DIR).get_comm_comp_overlap(visualize=False) with
HTA's default options (the last profiler step left out), one row a rank
as HTA numbers ranks (from each trace's "rank": N), its
comp_comm_overlap_pctg (null where HTA gives NaN: a rank without
communication kernels).
"""

import json
import logging
import math
import os
import sys

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402
from importlib.metadata import version  # noqa: E402


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.normpath(os.path.join(here, "../.."))
    dirs = sys.argv[1:] or [os.path.join(root, "testdata/pytorch/ranks16"), os.path.join(root, "testdata/pytorch/gloo3")]
    out_dir = os.path.join(root, "testdata/pytorch/hta")
    os.makedirs(out_dir, exist_ok=True)
    for d in dirs:
        d = os.path.abspath(d)
        overlap = TraceAnalysis(trace_dir=d).get_comm_comp_overlap(visualize=False)
        rows = [
            {"rank": int(r["rank"]), "comp_comm_overlap_pctg": None if math.isnan(r["comp_comm_overlap_pctg"]) else float(r["comp_comm_overlap_pctg"])}
            for r in overlap.to_dict("records")
        ]
        golden = {
            "derived_from": os.path.relpath(d, root),
            "hta": version("HolisticTraceAnalysis"),
            "comm_comp_overlap": rows,
        }
        path = os.path.join(out_dir, f"{os.path.basename(d)}.comm_comp_overlap.json")
        with open(path, "w") as f:
            json.dump(golden, f, indent=1)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
