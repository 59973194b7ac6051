#!/usr/bin/env python3
"""rtfprof against Holistic Trace Analysis on one PyTorch trace, side by
side in one run, for bench/pytorch.md (standard library only; run by hand,
never by CI, with no other benchmark beside it):

    flock /tmp/rtfprof-bench.lock python3 bench/pytorch_hta.py \\
        [--rtfprof target/release/rtfprof] [--baseline OLD_BINARY] \\
        [--trace bench/data/vm_2378.x85.pt.trace.json] [--runs 3]

Times `rtfprof steps` and `rtfprof op` (`--pytorch_path TRACE`, output to
/dev/null) on the trace and on TRACE.gz when it exists, the best of --runs
runs each, with /usr/bin/time -f '%M KB %e s %U %S' (peak RSS, wall
seconds, CPU seconds in user and kernel mode);
--baseline times another binary the same way, interleaved run by run.
Then HTA once (bench/hta_breakdown.py with --hta-python): its process,
and its own seconds for loading the trace and get_temporal_breakdown().
The ratio is HTA's load + temporal breakdown over rtfprof's whole process.
Prints a markdown table, with the load average before and after each run.
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def timed(argv, stdout=subprocess.DEVNULL):
    """(wall s, peak RSS KB, load before, load after, stdout, CPU s) of
    argv."""
    before = loadavg()
    r = subprocess.run(["/usr/bin/time", "-f", "%M KB %e s %U %S"] + argv, stdout=stdout,
                       stderr=subprocess.PIPE, text=True)
    after = loadavg()
    m = re.search(r"^(\d+) KB ([\d.]+) s ([\d.]+) ([\d.]+)$", r.stderr, re.M)
    if r.returncode != 0 or not m:
        sys.exit("failed: %s\n%s" % (" ".join(argv), r.stderr))
    return float(m.group(2)), int(m.group(1)), before, after, r.stdout, float(m.group(3)) + float(m.group(4))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtfprof", default=str(ROOT / "target/release/rtfprof"))
    ap.add_argument("--baseline", help="another rtfprof binary, timed the same way")
    ap.add_argument("--trace", default=str(BENCH / "data/vm_2378.x85.pt.trace.json"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hta-python", default="/work/venvs/hta/bin/python")
    ap.add_argument("--no-hta", action="store_true")
    args = ap.parse_args()

    trace = Path(args.trace)
    inputs = [trace] + ([Path(str(trace) + ".gz")] if Path(str(trace) + ".gz").exists() else [])
    binaries = [("rtfprof", args.rtfprof)] + ([("baseline", args.baseline)] if args.baseline else [])
    print("machine: %d cores, %s; load average at start %.2f" % (os.cpu_count(), " ".join(os.uname()[2:3]), loadavg()), flush=True)
    rows = []
    for command in ["steps", "op"]:
        for path in inputs:
            best = {}
            for _ in range(args.runs):
                for name, binary in binaries:
                    t = timed([binary, command, "--pytorch_path", str(path)])
                    print("  %s %s %s: %.2f s, CPU %.2f s, %d KB (load %.2f -> %.2f)" % (name, command, path.name, t[0], t[5], t[1], t[2], t[3]), flush=True)
                    if name not in best or t[0] < best[name][0]:
                        best[name] = t
            for name, _ in binaries:
                rows.append((name, command, path.name, best[name]))

    hta = None
    if not args.no_hta:
        t = timed([args.hta_python, str(BENCH / "hta_breakdown.py"), str(trace)], stdout=subprocess.PIPE)
        m = re.search(r"load ([\d.]+) s, temporal breakdown ([\d.]+) s", t[4])
        hta = (float(m.group(1)), float(m.group(2)), t)
        print("  HTA: load %.1f s, temporal breakdown %.1f s; process %.1f s, %d KB (load %.2f -> %.2f)"
              % (hta[0], hta[1], t[0], t[1], t[2], t[3]), flush=True)

    print()
    print("| binary | command | input | wall (best of %d) | its CPU | peak RSS | load avg | vs HTA |" % args.runs)
    print("|---|---|---|---|---|---|---|---|")
    for name, command, input_name, (wall, rss, before, after, _, cpu) in rows:
        ratio = "%.0f×" % ((hta[0] + hta[1]) / wall) if hta else "—"
        print("| %s | `%s` | `%s` | %.2f s | %.2f s | %.0f MB | %.1f–%.1f | %s |" % (name, command, input_name, wall, cpu, rss / 1024, before, after, ratio))
    if hta:
        load, temporal, (wall, rss, before, after, _, cpu) = hta
        print("| HTA 0.5.0 | load + `get_temporal_breakdown` | `%s` | %.1f + %.1f s (process %.1f s) | %.1f s | %.0f MB | %.1f–%.1f | |"
              % (trace.name, load, temporal, wall, cpu, rss / 1024, before, after))


if __name__ == "__main__":
    main()
