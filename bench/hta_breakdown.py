#!/usr/bin/env python3
"""Times Holistic Trace Analysis on one PyTorch trace: loading it
(TraceAnalysis), then get_temporal_breakdown() and get_idle_time_breakdown(),
for bench/pytorch.md. Run by hand, never by CI:

    /usr/bin/time -f '%e s %M KB' /work/venvs/hta/bin/python bench/hta_breakdown.py bench/data/vm_2378.x85.pt.trace.json

HTA reads every trace of a directory as a rank, so the file is linked into a
directory of its own. Prints each phase's seconds and HTA's numbers.
"""

import logging
import os
import sys
import tempfile
import time

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402


def main():
    path = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        os.symlink(path, os.path.join(tmp, os.path.basename(path)))
        t0 = time.perf_counter()
        analysis = TraceAnalysis(trace_dir=tmp)
        t1 = time.perf_counter()
        temporal = analysis.get_temporal_breakdown(visualize=False)
        t2 = time.perf_counter()
        idle, _ = analysis.get_idle_time_breakdown(visualize=False)
        t3 = time.perf_counter()
    print(f"load {t1 - t0:.1f} s, temporal breakdown {t2 - t1:.1f} s, idle time breakdown {t3 - t2:.1f} s")
    print(temporal.to_string())
    print(idle.to_string())


if __name__ == "__main__":
    main()
