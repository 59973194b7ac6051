#!/usr/bin/env python3
"""XPlane benchmark: rtfprof `scope`/`op --xplane_path` against XProf's
`framework_op_stats` conversion, and `rtfprof steps` against XProf's
`input_pipeline_analyzer`, in one run (issues 16 and 20).

    python3 bench/xplane.py [--rtfprof PATH] [--scales x1,x10,x25,x100]
                            [--runs N] [--xprof-scales x1,x25] [--out FILE]
    python3 bench/xplane.py --family gpu [--scales x1,x91,x364] ...

Traces (bench/data/xplane/<scale>/plugins/profile/run0/host0.xplane.pb,
not committed; made when missing with the TF venv, see bench/README.md):
- x1: bench/gen_xplane.py's real TF2 trace, 40 residual blocks x 40
  marked steps (~10.6 MB);
- x10: the same model traced for 400 steps (`--steps 400`, ~108 MB), a
  genuine trace 10x the size;
- x25, x100: x1 with each plane's events repeated 25 and 100 times,
  shifted in time, markers renumbered (tools/xplane/repeat_trace.py):
  ~270 MB and ~1.08 GB.

rtfprof: the whole process (`rtfprof scope|op|steps --xplane_path DIR
--output file:outfile=/dev/null`), wall time of the fastest of --runs runs
(3 for traces over 50 MB, 2 for those over 500 MB) after one warm-up run
(none over 500 MB), user+sys CPU and peak RSS (ru_maxrss from wait4,
which counts the mapped file's pages it touched).
XProf: bench/xprof_convert.py in the XProf venv, on a copy of the trace
alone in its own temporary directory, cache files deleted before every
run; the import is not timed.  `serve` times --runs conversions after one
warm-up (fastest taken) for the small scales; the big ones are converted
once, in a fresh process (`rss`), which also gives the peak RSS (process
peak, and peak minus the baseline after importing xprof).
Writes the results to --out (default bench/results_xplane.md) and splices
them into bench/results.md between `<!-- xplane -->` markers.

--family gpu (issue 29): JAX on an H200, the LSTM of the shared traces
(`../shared/traces/jax_h200/jax_lstm`, or $GPU_TRACE: a `lax.scan` loop
run as CUDA graphs, 10 marked steps, 3.4 MB, of which 0.4 MB programs),
repeated with `tools/xplane/repeat_trace.py --gpu` (bench/data/xplane_gpu/
<scale>: x91 ~270 MB, x364 ~1.07 GB, as the TF2 family's x25 and x100);
views `scope`, `op`, `steps`, `hlo` and `kernels` against XProf's
`framework_op_stats`, `input_pipeline_analyzer`, `hlo_stats` and
`kernel_stats`; results in bench/results_xplane_gpu.md and between
`<!-- xplane_gpu -->` markers.  (XProf attributes none of a command
buffer's kernels to ops: its op tables are nearly empty on this trace,
rtfprof's are full; the work of reading the trace is the same.)
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
DATA = os.path.join(BENCH, "data", "xplane")
XPROF_PY = os.environ.get("XPROF_PYTHON", "/work/venvs/xprof/bin/python")
TF_PY = os.environ.get("TF_PYTHON", "/work/venvs/tf/bin/python")
# rtfprof's view → the XProf tool that answers the same question.
XPROF_TOOL = {"scope": "framework_op_stats", "op": "framework_op_stats", "steps": "input_pipeline_analyzer"}
HOW = {
    "x1": "real TF2 trace: 40 residual blocks x 40 marked steps (bench/gen_xplane.py)",
    "x10": "real TF2 trace: 40 blocks x 400 marked steps (bench/gen_xplane.py --steps 400)",
    "x25": "x1's events x25, shifted, steps renumbered (tools/xplane/repeat_trace.py)",
    "x100": "x1's events x100, shifted, steps renumbered (tools/xplane/repeat_trace.py)",
}


GPU_DATA = os.path.join(BENCH, "data", "xplane_gpu")
GPU_SOURCE = os.environ.get("GPU_TRACE", os.path.join(ROOT, "..", "shared", "traces", "jax_h200", "jax_lstm", "vm.xplane.pb"))
GPU_XPROF_TOOL = dict(XPROF_TOOL, hlo="hlo_stats", kernels="kernel_stats")
GPU_HOW = "jax_lstm (H200, command buffers, lax.scan) x{n}: events repeated, shifted, ids and steps renumbered (tools/xplane/repeat_trace.py --gpu)"
FAMILY = "tf2"


def trace(scale):
    data = GPU_DATA if FAMILY == "gpu" else DATA
    return os.path.join(data, scale, "plugins", "profile", "run0", "host0.xplane.pb")


def make(scale):
    if os.path.exists(trace(scale)):
        return
    if FAMILY == "gpu":
        print(f"== making {scale}", file=sys.stderr)
        subprocess.run([TF_PY, os.path.join(ROOT, "tools", "xplane", "repeat_trace.py"), GPU_SOURCE,
                        os.path.join(GPU_DATA, scale), scale[1:], "--gpu"], check=True)
        return
    print(f"== making {scale}", file=sys.stderr)
    if scale in ("x1", "x10"):
        steps = ["--steps", "400"] if scale == "x10" else []
        subprocess.run([TF_PY, os.path.join(BENCH, "gen_xplane.py"), os.path.join(DATA, scale)] + steps, check=True)
    else:
        make("x1")
        subprocess.run([TF_PY, os.path.join(ROOT, "tools", "xplane", "repeat_trace.py"), trace("x1"),
                        os.path.join(DATA, scale), scale[1:]], check=True)


def run_once(cmd):
    """Wall s, user s, sys s and peak RSS (KB) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"{cmd} failed: {err.decode(errors='replace')}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss


def rtfprof_runs(binary, view, scale, runs, warm_up=True):
    cmd = [binary, view, "--xplane_path", os.path.dirname(trace(scale)), "--output", "file:outfile=/dev/null"]
    if warm_up:
        run_once(cmd)  # page cache
    results = [run_once(cmd) for _ in range(runs)]
    best = min(results)
    return {"wall": best[0], "cpu": best[1] + best[2], "user": best[1], "sys": best[2],
            "walls": [r[0] for r in results], "users": [r[1] for r in results], "syss": [r[2] for r in results],
            "rss_kb": max(r[3] for r in results)}


def copy_alone(scale, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    path = os.path.join(d, "host0.xplane.pb")
    shutil.copyfile(trace(scale), path)
    return path


def xprof_serve(paths_runs, tool):
    """Times conversions by `tool` in one persistent XProf process: [(path, runs)]."""
    proc = subprocess.Popen([XPROF_PY, os.path.join(BENCH, "xprof_convert.py"), "serve"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert json.loads(proc.stdout.readline())["ready"]
    out = []
    for path, runs in paths_runs:
        results = []
        for _ in range(runs + 1):  # the first is a warm-up
            proc.stdin.write(f"{tool}\t{path}\n")
            proc.stdin.flush()
            results.append(json.loads(proc.stdout.readline()))
        timed = results[1:]
        out.append({"wall": min(r["total"] for r in timed), "cpu": min(r["cpu"] for r in timed),
                    "walls": [r["total"] for r in timed]})
    proc.stdin.write("\n")
    proc.stdin.close()
    proc.wait()
    return out


def xprof_rss(path, tmp, tool):
    out = os.path.join(tmp, "rss.json")
    start = time.perf_counter()
    subprocess.run([XPROF_PY, os.path.join(BENCH, "xprof_convert.py"), "rss", path, out, tool], check=True)
    r = json.load(open(out))
    r["process_wall"] = time.perf_counter() - start
    return r


def mb(n):
    return n / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rtfprof", default=os.path.join(ROOT, "target", "release", "rtfprof"))
    ap.add_argument("--family", choices=("tf2", "gpu"), default="tf2", help="tf2: TF2 CPU traces; gpu: JAX on an H200")
    ap.add_argument("--scales", default=None, help="default x1,x10,x25,x100 (gpu: x1,x91,x364)")
    ap.add_argument("--xprof-scales", default=None, help="scales XProf converts (x25: once, ~75 s and ~7.5 GB; default x1,x10,x25, gpu: x1,x91)")
    ap.add_argument("--runs", type=int, default=5, help="rtfprof runs per workload on x1/x10 (fewer on bigger)")
    ap.add_argument("--out", default=None, help="default bench/results_xplane.md (gpu: bench/results_xplane_gpu.md)")
    ap.add_argument("--commit", default=None, help="the commit --rtfprof was built from, if not HEAD's")
    args = ap.parse_args()
    global FAMILY, XPROF_TOOL, HOW
    FAMILY = args.family
    gpu = FAMILY == "gpu"
    args.scales = args.scales or ("x1,x91,x364" if gpu else "x1,x10,x25,x100")
    args.xprof_scales = args.xprof_scales if args.xprof_scales is not None else ("x1,x91" if gpu else "x1,x10,x25")
    args.out = args.out or os.path.join(BENCH, "results_xplane_gpu.md" if gpu else "results_xplane.md")
    if gpu:
        XPROF_TOOL = GPU_XPROF_TOOL
        HOW = {s: GPU_HOW.format(n=s[1:]) for s in args.scales.split(",")}
    scales = args.scales.split(",")
    xprof_scales = [s for s in args.xprof_scales.split(",") if s] if os.path.exists(XPROF_PY) else []
    for s in scales:
        make(s)
    binary = os.path.join(tempfile.mkdtemp(), "rtfprof.bench")
    shutil.copy(args.rtfprof, binary)  # a rebuild during the run changes nothing
    commit = args.commit or subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = not args.commit and subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    load_before = open("/proc/loadavg").read().split()[:3]
    started = time.time()

    sizes = {s: os.path.getsize(trace(s)) for s in scales}
    rt = {}
    xp = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Scale by scale, XProf first then rtfprof, so that a change of load
        # on the machine weighs on both tools of a scale alike.
        for s in scales:
            for tool in (sorted(set(XPROF_TOOL.values())) if s in xprof_scales else []):
                path = copy_alone(s, tmp)
                print(f"== XProf {tool} on {s}", file=sys.stderr)
                if sizes[s] < 50e6:
                    xp[(s, tool)] = xprof_serve([(path, 3)], tool)[0]
                    xp[(s, tool)]["rss"] = xprof_rss(path, tmp, tool)
                else:
                    r = xprof_rss(path, tmp, tool)
                    xp[(s, tool)] = {"wall": r["total"], "cpu": None, "walls": [r["total"]], "rss": r}
                shutil.rmtree(os.path.dirname(path))
            runs = args.runs if sizes[s] < 50e6 else (3 if sizes[s] < 500e6 else 2)
            for view in XPROF_TOOL:
                print(f"== rtfprof {view} on {s} ({runs} runs)", file=sys.stderr)
                # (The 1 GB trace: its first run is a run, the page cache
                # is warm from reading it before.)
                rt[(s, view)] = rtfprof_runs(binary, view, s, runs, warm_up=sizes[s] < 500e6)

    L = []
    L.append(f"# rtfprof XPlane benchmark results{' (JAX GPU)' if gpu else ''}\n")
    L.append(f"Written by `python3 bench/xplane.py{' --family gpu' if gpu else ''} --scales {args.scales} --xprof-scales {','.join(xprof_scales)}` "
             f"on {datetime.datetime.now():%Y-%m-%d %H:%M}, {time.time() - started:.0f} s.\n")
    L.append(f"- machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
             f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.1f} GiB RAM; load average before/after: "
             f"{' '.join(load_before)} / {' '.join(open('/proc/loadavg').read().split()[:3])} (other jobs share the machine)")
    L.append(f"- rtfprof: commit `{commit}`{' with uncommitted changes' if dirty else ''}; whole process, "
             f"`rtfprof {'|'.join(XPROF_TOOL)} --xplane_path DIR --output file:outfile=/dev/null`, fastest run after one warm-up")
    L.append("- XProf: `xspace_to_tool_data([copy], TOOL, {\"use_saved_result\": False})` in-process "
             "(TOOL: `framework_op_stats` against scope and op, `input_pipeline_analyzer` against steps"
             f"{', `hlo_stats` against hlo, `kernel_stats` against kernels' if gpu else ''}) "
             "(bench/xprof_convert.py), on a copy alone in a temporary directory, cache deleted before each run; "
             "small traces: fastest of 3 after a warm-up in one process; big ones: one run in a fresh process\n")
    L.append("## Traces\n")
    L.append("| scale | size | how made |\n|---|---:|---|")
    for s in scales:
        L.append(f"| {s} | {mb(sizes[s]):.1f} MB | {HOW.get(s, '')} |")
    L.append("\n## rtfprof vs XProf\n")
    L.append("| scale | view | rtfprof wall s (fastest; all) | rtfprof user + sys s (fastest run) | rtfprof peak RSS MB | XProf tool | XProf wall s | XProf peak RSS MB (process; minus import) | XProf / rtfprof wall |")
    L.append("|---|---|---:|---:|---:|---|---:|---:|---:|")
    for s in scales:
        for view, tool in XPROF_TOOL.items():
            r = rt[(s, view)]
            x = xp.get((s, tool))
            walls = ", ".join(f"{w:.2f}" for w in r["walls"])
            if x:
                rss = x["rss"]
                xcol = f"{x['wall']:.2f}"
                xrss = f"{rss['peak_kb'] / 1024:.0f} ({rss['delta_kb'] / 1024:.0f})"
                ratio = f"**{x['wall'] / r['wall']:.1f}x**"
            else:
                xcol = xrss = ratio = "-"
            L.append(f"| {s} | {view} | {r['wall']:.3f} ({walls}) | {r['user']:.2f} + {r['sys']:.2f} | {r['rss_kb'] / 1024:.0f} | {tool} | {xcol} | {xrss} | {ratio} |")
    L.append("\n## Linearity (rtfprof, fastest runs)\n")
    L.append("Wall time of the fastest runs, and user time (the least of the runs: "
             "the kernel time of page faults varies between runs of one binary on this VM, see README.md).\n")
    L.append("| from | to | size ratio | view | wall ratio | wall ratio / size ratio | user ratio / size ratio | RSS ratio |")
    L.append("|---|---|---:|---|---:|---:|---:|---:|")
    pairs = [("x1", "x91"), ("x91", "x364"), ("x1", "x364")] if gpu else [("x1", "x10"), ("x1", "x25"), ("x25", "x100"), ("x1", "x100")]
    for a, b in pairs:
        if a in scales and b in scales:
            k = sizes[b] / sizes[a]
            for view in XPROF_TOOL:
                t = rt[(b, view)]["wall"] / rt[(a, view)]["wall"]
                # (A 3 MB trace's user time can read 0.00 s: then no ratio.)
                ua, ub = min(rt[(a, view)]["users"]), min(rt[(b, view)]["users"])
                u = f"**{ub / ua / k:.2f}**" if ua > 0 else "-"
                m = rt[(b, view)]["rss_kb"] / rt[(a, view)]["rss_kb"]
                L.append(f"| {a} | {b} | {k:.2f} | {view} | {t:.2f} | **{t / k:.2f}** | {u} | {m:.2f} |")
    text = "\n".join(L) + "\n"
    raw = {"sizes": sizes, "rtfprof": {f"{s}/{v}": r for (s, v), r in rt.items()}, "xprof": {f"{s}/{t}": r for (s, t), r in xp.items()}}
    text += "\n<details><summary>raw</summary>\n\n```json\n" + json.dumps(raw, indent=1) + "\n```\n</details>\n"
    open(args.out, "w").write(text)
    results = os.path.join(BENCH, "results.md")
    if os.path.exists(results):
        old = open(results).read()
        mark = "xplane_gpu" if gpu else "xplane"
        block = f"<!-- {mark} -->\n" + text.replace("# rtfprof XPlane", "## XPlane") + f"<!-- /{mark} -->\n"
        if f"<!-- {mark} -->" in old:
            head, rest = old.split(f"<!-- {mark} -->", 1)
            old = head + block + rest.split(f"<!-- /{mark} -->\n", 1)[-1]
        else:
            old = old.rstrip("\n") + "\n\n" + block
        open(results, "w").write(old)
    print(text)


if __name__ == "__main__":
    main()
