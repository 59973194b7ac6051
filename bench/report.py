#!/usr/bin/env python3
"""Measure `rtfprof report` on the benchmark's training graph (issue 17's limits).

    bench/report.py [--rtfprof PATH] [--chromium PATH] [--runs N] [--out FILE]

Run by hand, like bench/run.sh (never by CI).  Needs bench/data/x1 (made by
bench/gen_data.py: the ~25k-node, 5-step training graph; see bench/README.md),
a release build (default target/release/rtfprof) and Debian's `chromium` for
the render times.  Python standard library only.

Measures, for x1 from graph.pb + run_meta_0..4 + tfprof_log, from its
5-step profile and (writing only, 3 runs) from its 100-step profile:

1. writing the report: wall time of the whole rtfprof process (median of
   --runs runs after one warm-up, min-max), its peak RSS, the file's size;
2. rendering it: headless Chromium `--dump-dom` of the page opened on each
   tab (scope, code, ops, steps, memory), wall time of the whole browser process
   from launch to the DOM dump, and the page's own time from its script's
   start to the drawn tab (`data-render-ms`); the same browser on an empty
   page gives Chromium's own start-up time.  Each load must end with the
   page drawn (`data-ready="1"`).

Limits (issue 17): under 25 MB, written in under 5 s, rendered within 10 s.
Writes its section into --out (default bench/results.md) between the
`<!-- report benchmark -->` markers, replacing an earlier one, and prints it.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
X1 = BENCH / "data" / "x1"
BEGIN = "<!-- report benchmark: begin (bench/report.py) -->"
END = "<!-- report benchmark: end -->"
TABS = ["scope", "code", "ops", "steps", "memory"]
LIMIT_MB, LIMIT_WRITE_S, LIMIT_RENDER_S = 25, 5, 10


def run_measured(argv):
    """Wall seconds and peak RSS (MB) of one child process."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed: %s\n%s" % (" ".join(argv), err))
    return wall, usage.ru_maxrss / 1024


def chromium_dom(chromium, url, profile):
    argv = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--window-size=1280,900", "--virtual-time-budget=5000",
            "--user-data-dir=" + profile, "--dump-dom", url]
    t = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, check=True).stdout.decode()
    return time.perf_counter() - t, out


def loadavg():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rtfprof", default=str(ROOT / "target/release/rtfprof"))
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(BENCH / "results.md"))
    args = ap.parse_args()
    if not (X1 / "graph.pb").exists():
        sys.exit("no bench/data/x1: make it with bench/gen_data.py --scales 1 "
                 "(needs TensorFlow; see bench/README.md)")
    runs = ",".join(str(X1 / ("run_meta_%d" % i)) for i in range(5))
    workloads = [
        ("graph.pb + 5 run_metas + op log",
         ["--graph_path", str(X1 / "graph.pb"), "--run_meta_path", runs,
          "--op_log_path", str(X1 / "tfprof_log")]),
        ("5-step profile", ["--profile_path", str(X1 / "profile")]),
        ("100-step profile", ["--profile_path", str(X1 / "profile_100")]),
    ]
    tmp = tempfile.mkdtemp(prefix="rtfprof-report-bench-")
    load_before = loadavg()
    rows = []
    renders = []
    try:
        for name, inputs in workloads:
            page = os.path.join(tmp, "report.html")
            argv = [args.rtfprof, "report"] + inputs + ["--output", "html:outfile=" + page]
            run_measured(argv)  # warm-up
            # (The 100-step profile is beside the limits: fewer runs.)
            count = args.runs if "100" not in name else min(3, args.runs)
            measured = [run_measured(argv) for _ in range(count)]
            walls = [w for w, _ in measured]
            size = os.path.getsize(page) / 1e6
            rows.append((name, statistics.median(walls), min(walls), max(walls),
                         max(r for _, r in measured), size))
            if name.startswith("graph.pb"):
                kept = os.path.join(tmp, "x1.html")
                shutil.copy(page, kept)
        empty = os.path.join(tmp, "empty.html")
        Path(empty).write_text("<!DOCTYPE html><title>empty</title>")
        chromium_dom(args.chromium, "file://" + empty, os.path.join(tmp, "p0"))  # warm-up
        base = [chromium_dom(args.chromium, "file://" + empty, os.path.join(tmp, "p%d" % k))[0]
                for k in range(1, 4)]
        for tab in TABS:
            walls, page_ms = [], []
            for k in range(3):
                wall, dom = chromium_dom(args.chromium, "file://%s#tab=%s" % (kept, tab),
                                         os.path.join(tmp, "%s%d" % (tab, k)))
                if 'data-ready="1"' not in dom:
                    sys.exit("the page did not finish drawing the %s tab" % tab)
                walls.append(wall)
                page_ms.append(int(re.search(r'data-render-ms="(\d+)"', dom).group(1)))
            drawn = len(re.findall(r'<div class="fr', dom))
            renders.append((tab, statistics.median(walls), max(walls), statistics.median(page_ms), drawn))
        version = subprocess.run([args.chromium, "--version"], capture_output=True, text=True).stdout.strip()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    L = [BEGIN, "## rtfprof report (HTML page) on x1", ""]
    L.append("Written by `bench/report.py` on %s: commit `%s`, %s, %d cores, load average %s before / %s after "
             "(other jobs on the machine slow every number here)." % (
                 time.strftime("%Y-%m-%d %H:%M"), commit, version, os.cpu_count(), load_before, loadavg()))
    L.append("")
    L.append("Writing the page (`rtfprof report ... --output html:outfile=PATH`, whole process, "
             "%d runs after a warm-up; 3 for the 100-step profile, which is beyond the issue's limits "
             "and shown for scale):" % args.runs)
    L.append("")
    L.append("| inputs | wall s, median (min-max) | < %d s? | peak RSS MB | page MB | < %d MB? |" % (LIMIT_WRITE_S, LIMIT_MB))
    L.append("|---|---:|:-:|---:|---:|:-:|")
    for name, med, lo, hi, rss, size in rows:
        L.append("| %s | %.2f (%.2f-%.2f) | %s | %.0f | %.1f | %s |" % (
            name, med, lo, hi, "**yes**" if hi < LIMIT_WRITE_S else "NO", rss, size,
            "**yes**" if size < LIMIT_MB else "NO"))
    L.append("")
    L.append("Rendering the page from graph.pb + run_metas + op log in headless Chromium "
             "(`--dump-dom`, 1280x900, 3 loads a tab; Chromium alone on an empty page: %.2f s median):" % statistics.median(base))
    L.append("")
    L.append("| tab | browser wall s, median (max) | < %d s? | page script ms (parse + draw) | flame rectangles drawn |" % LIMIT_RENDER_S)
    L.append("|---|---:|:-:|---:|---:|")
    for tab, med, hi, ms, drawn in renders:
        L.append("| %s | %.2f (%.2f) | %s | %d | %s |" % (
            tab, med, hi, "**yes**" if hi < LIMIT_RENDER_S else "NO", ms, drawn if tab in ("scope", "code") else "-"))
    L += ["", END]
    section = "\n".join(L) + "\n"
    out = Path(args.out)
    old = out.read_text() if out.exists() else ""
    if BEGIN in old and END in old:
        text = old[:old.index(BEGIN)] + section + old[old.index(END) + len(END) + 1:]
    else:
        text = old.rstrip("\n") + ("\n\n" if old else "") + section
    out.write_text(text)
    print(section)


if __name__ == "__main__":
    main()
