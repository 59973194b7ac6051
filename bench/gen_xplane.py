#!/usr/bin/env python3
"""Write a large XPlane bench trace (>= 10 MB) to OUT_DIR.

    /work/venvs/tf/bin/python bench/gen_xplane.py OUT_DIR [--steps N] [--blocks N]
        # -> OUT_DIR/plugins/profile/run0/host0.xplane.pb

A thin front for `tools/xplane/gen_traces.py --bench OUT_DIR` (see its
docstring: 40 residual bottleneck blocks x 40 marked steps, TF2 on CPU,
~10.6 MB in ~20 s).  --steps and --blocks change the 40s; the trace grows
with steps x blocks: `--steps 400` is a genuine run 10x as long (~106 MB,
a few minutes), for bench/'s linearity check.  The traces are not
committed; bench/ makes them when it needs them.
"""
import argparse
import os
import subprocess
import sys

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("out_dir")
ap.add_argument("--steps", type=int, default=40, help="marked training steps (default 40)")
ap.add_argument("--blocks", type=int, default=40, help="residual blocks (default 40)")
args = ap.parse_args()
gen = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "tools", "xplane", "gen_traces.py")
sys.exit(subprocess.run([sys.executable, gen, "--bench", args.out_dir,
                         "--bench-steps", str(args.steps),
                         "--bench-blocks", str(args.blocks)]).returncode)
