#!/usr/bin/env python3
"""rtfprof benchmark driver (standard library only).  Use bench/run.sh.

    python3 bench/run.py --rtfprof BIN [--tf-python PY] [--quick] [--no-perf]

Times the rtfprof binary BIN (whole process) and, when --tf-python names a
Python that imports TensorFlow, TensorFlow's tfprof engine in-process
(bench/tfprof_engine.py), on the files in bench/data/ (bench/gen_data.py),
then writes bench/results.md and prints it.  See bench/README.md.
"""
import argparse
import datetime
import json
import os
import platform
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
N_STEPS = 5
SELECT = "micros,bytes,params,float_ops,occurrence"  # = tfprof_engine.SELECT
VIEWS = ["scope", "graph", "op", "code"]
TARGET_SPEEDUP = 10.0
TARGET_PBTXT_S = 0.3
TARGET_LINEAR = 1.3
# x1's profile of 100 steps (bench/gen_data.py), for the many-steps workload.
MANY_STEPS_PROFILE = "profile_100"


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), capture_output=True,
                          text=True, **kw)


# ------------------------------------------------------------- rtfprof runs

def rt_args(binary, d, workload, out="/dev/null"):
    """rtfprof command line for a workload on data directory d."""
    rms = ",".join(str(d / ("run_meta_%d" % i)) for i in range(N_STEPS))
    full = ["--run_meta_path=" + rms, "--op_log_path=" + str(d / "tfprof_log")]
    common = ["--select=" + SELECT, "--output=file:outfile=" + out]
    if workload in VIEWS:
        return [binary, workload, "--graph_path=" + str(d / "graph.pb")] + \
            full + common
    if workload == "profile_scope":
        return [binary, "scope", "--profile_path=" + str(d / "profile")] + common
    if workload == "profile100_scope":  # x1's 100-step profile
        return [binary, "scope", "--profile_path=" + str(d / MANY_STEPS_PROFILE)] + common
    if workload == "pbtxt_scope":      # text GraphDef + run_metas + op log
        return [binary, "scope", "--graph_path=" + str(d / "graph.pbtxt")] + \
            full + common
    if workload == "pbtxt_only":       # text GraphDef alone
        return [binary, "scope", "--graph_path=" + str(d / "graph.pbtxt")] + common
    if workload == "pb_only":          # binary GraphDef alone
        return [binary, "scope", "--graph_path=" + str(d / "graph.pb")] + common
    raise ValueError(workload)


def summarise(times, cpu, sys_, tool):
    """Median/min/max wall seconds, median user+sys seconds and median sys
    (kernel) seconds of the runs, with the runs' wall and kernel seconds."""
    return {"median": statistics.median(times), "min": min(times),
            "max": max(times), "runs": len(times),
            "cpu": statistics.median(cpu), "sys": statistics.median(sys_),
            "times": times, "sys_runs": sys_, "tool": tool}


def time_cmd(argv, runs, warmup, tmpdir):
    """summarise() of argv's runs after warmup, with hyperfine if present,
    else timed here."""
    if shutil.which("hyperfine"):
        js = os.path.join(tmpdir, "hf.json")
        r = subprocess.run(
            ["hyperfine", "-N", "--style", "none", "--warmup", str(warmup),
             "--runs", str(runs), "--export-json", js, " ".join(argv)],
            capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("hyperfine failed: " + r.stderr[-2000:])
        res = json.load(open(js))["results"][0]
        u, s = res.get("user"), res.get("system")
        if isinstance(u, list):      # newer hyperfine: per-run values
            return summarise(res["times"], [a + b for a, b in zip(u, s)], s,
                             "hyperfine")
        # hyperfine 1.15: means only
        return summarise(res["times"], [u + s], [s], "hyperfine")
    for _ in range(warmup):
        run_once(argv)
    done = [run_once(argv) for _ in range(runs)]
    return summarise([r["total"] for r in done], [r["cpu"] for r in done],
                     [r["sys"] for r in done], "python loop")


def time_interleaved(argvs):
    """summarise() for each argv (a dict: key -> (argv, runs)), run
    round-robin: round i runs every argv that wants more than i runs, so
    all of them meet the same changes of machine load. Each timed run
    follows an untimed run of the same argv, as a block of runs would: the
    timed run then reuses the pages that run freed (see bench/README.md).
    Timed here (wait4), so that every run's kernel time is known."""
    done = {key: [] for key in argvs}
    for i in range(max(r for _, r in argvs.values())):
        for key, (argv, n) in argvs.items():
            if i < n:
                run_once(argv)
                done[key].append(run_once(argv))
    return {key: summarise([r["total"] for r in runs], [r["cpu"] for r in runs],
                           [r["sys"] for r in runs], "python loop, interleaved")
            for key, runs in done.items()}


def sys_s(timing):
    """A timing's kernel seconds, or '-' when not measured."""
    return fs(timing["sys"]) if timing.get("sys") is not None else "-"


def run_once(argv):
    """Wall and CPU (user+sys, all threads) seconds of one run of argv."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    if status != 0:
        raise RuntimeError("failed: " + " ".join(argv))
    return {"total": dt, "cpu": ru.ru_utime + ru.ru_stime, "sys": ru.ru_stime}


def block_runs(py, binary, d, workloads, tf_runs, tf_warmup, rt_runs,
               rt_warmup, tmpdir):
    """Per workload, back to back: the tfprof engine (a persistent Python
    process, tfprof_engine.py serve: TF imported and inputs read once)
    tf_warmup + tf_runs times, then ONE rtfprof run right after it ("cold":
    see README), then rtfprof under time_cmd (hyperfine: warm-up + runs).
    Doing this workload by workload keeps both tools' timings close in time,
    so changing machine load affects them alike."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    err = open(os.path.join(tmpdir, "serve.err"), "w")
    p = subprocess.Popen([py, str(BENCH / "tfprof_engine.py"), "serve", str(d)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=err, text=True, env=env)

    def reply():
        while True:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError("tfprof_engine.py serve died:\n" +
                                   open(err.name).read()[-3000:])
            if line.startswith("{"):
                return json.loads(line)

    reply()                                   # ready
    out = {}
    try:
        for w in workloads:
            tf = []
            for i in range(tf_warmup + tf_runs):
                p.stdin.write(w + "\n")
                p.stdin.flush()
                r = reply()
                if i >= tf_warmup:
                    tf.append(r)
            argv = rt_args(binary, d, w)
            cold = run_once(argv)
            rt = time_cmd(argv, rt_runs, rt_warmup, tmpdir)
            out[w] = {"rt": rt, "cold": cold,
                      "tf": {k: statistics.median(r[k] for r in tf) for k in
                             ("total", "build", "view", "delete", "cpu")}}
            out[w]["tf"]["n"] = len(tf)
            log("  %-14s tfprof %.3fs  rtfprof %.3fs (%.1fx; first run "
                "after the engine %.3fs)" % (
                    w, out[w]["tf"]["total"], rt["median"],
                    out[w]["tf"]["total"] / rt["median"], cold["total"]))
    finally:
        try:
            p.stdin.write("\n")
            p.stdin.close()
        except OSError:
            pass
        p.wait()
        err.close()
    return out


def peak_rss_kb(argv, runs=3):
    """Median peak RSS (KiB) of argv over runs, by /usr/bin/time -v
    (or the child's rusage from wait4 when /usr/bin/time is missing)."""
    vals = []
    for _ in range(runs):
        if os.path.exists("/usr/bin/time"):
            r = subprocess.run(["/usr/bin/time", "-v"] + argv,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
            m = re.search(r"Maximum resident set size \(kbytes\): (\d+)",
                          r.stderr)
            vals.append(int(m.group(1)))
        else:
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _, _, ru = os.wait4(p.pid, 0)
            vals.append(ru.ru_maxrss)
    return statistics.median(vals)


# -------------------------------------------------------------- tfprof runs

def tf_python_ok(py):
    if not py:
        return None
    r = sh([py, "-c", "import os; os.environ['TF_CPP_MIN_LOG_LEVEL']='3'; "
            "import tensorflow as tf; print(tf.__version__)"])
    return r.stdout.strip().splitlines()[-1] if r.returncode == 0 else None


def tf_engine(py, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([py, str(BENCH / "tfprof_engine.py")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError("tfprof_engine.py %s failed:\n%s" %
                           (args[0], r.stderr[-3000:]))
    for line in r.stdout.splitlines():
        log(line)


# --------------------------------------------------------------------- perf

def perf_works():
    """perf record usable?  (Without hardware counters, as in many VMs where
    `perf stat -e instructions` says <not supported>, it samples cpu-clock.)"""
    if not shutil.which("perf"):
        return False
    with tempfile.TemporaryDirectory() as t:
        return sh(["perf", "record", "-o", os.path.join(t, "p"), "--",
                   "true"]).returncode == 0


def short_sym(s):
    s = re.split(r"\s{3,}", s.strip())[0]     # perf pads with spaces
    s = re.sub(r"::h[0-9a-f]{16}$", "", s)
    return s if len(s) <= 110 else s[:107] + "..."


def perf_profile(argv, tmpdir):
    """Flat self-time and inclusive (rtfprof functions) hot spots."""
    data = os.path.join(tmpdir, "perf.data")
    r = subprocess.run(["perf", "record", "-F", "4999", "--call-graph",
                        "dwarf,16384", "-o", data, "--"] + argv,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    def report(extra):
        out = sh(["perf", "report", "-i", data, "--stdio", "-g", "none",
                  "--percent-limit", "0.5"] + extra).stdout
        rows = []
        for line in out.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            rows.append(line)
        return rows
    flat = []
    for line in report(["--no-children", "--sort", "dso,symbol"]):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$", line)
        if m:
            flat.append((float(m.group(1)), m.group(2), short_sym(m.group(4))))
    incl = []
    for line in report(["--children", "--sort", "symbol"]):
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[(.)\]\s+(.*)$", line)
        if m:
            incl.append((float(m.group(1)), float(m.group(2)),
                         short_sym(m.group(4))))
    boring = ("rtfprof::main", "rtfprof::cli::run", "rtfprof::cli::execute",
              "prost::encoding::merge_loop", "prost::message::Message::decode",
              "prost::encoding::message::merge_repeated")
    incl_rt = [x for x in incl if ("rtfprof" in x[2] or "prost::" in x[2])
               and not x[2].startswith(boring)]
    by_dso = []
    for line in report(["--no-children", "--sort", "dso"]):
        m = re.match(r"\s*([\d.]+)%\s+(\S+)", line)
        if m:
            by_dso.append((float(m.group(1)), m.group(2)))
    samples = re.search(r"\((\d+) samples\)", r.stderr)
    event = sh(["perf", "evlist", "-i", data]).stdout.strip() or "?"
    return {"flat": flat[:18], "incl": incl_rt[:20], "dso": by_dso,
            "event": event,
            "samples": int(samples.group(1)) if samples else None,
            "cmd": " ".join(argv)}


# ------------------------------------------------------------------ machine

def machine_info():
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = "%.1f GiB" % (int(line.split()[1]) / 2**20)
    except OSError:
        pass
    # Free page reporting (virtio-balloon) hands memory the guest freed back
    # to the host, and touching it again costs a host fault per page: see
    # bench/README.md.
    reporting = None
    try:
        for arg in open("/proc/cmdline").read().split():
            if arg.startswith("page_reporting.page_reporting_order="):
                reporting = arg.split("=", 1)[1]
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": cpu, "mem": mem,
            "kernel": platform.release(), "page_reporting_order": reporting}


def loadavg():
    try:
        return open("/proc/loadavg").read().split()[:3]
    except OSError:
        return ["?"] * 3


def git_commit():
    head = sh(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"]).stdout.strip()
    dirty = sh(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src",
                "crates", "Cargo.toml", "Cargo.lock"]).stdout.strip()
    return head, bool(dirty)


# --------------------------------------------------------------- formatting

def fs(x):
    return "%.3f" % x if x < 10 else "%.2f" % x


def mb(kb):
    return "%.0f" % (kb / 1024.0)


def ok(cond):
    return "**yes**" if cond else "**NO**"


# --------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtfprof", required=True)
    ap.add_argument("--rtfprof-label", default=None,
                    help="how to name the binary in the report")
    ap.add_argument("--tf-python", default=None)
    ap.add_argument("--data", default=str(BENCH / "data"))
    ap.add_argument("--out", default=str(BENCH / "results.md"))
    ap.add_argument("--quick", action="store_true",
                    help="fewer repetitions (smoke test)")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--no-scale", action="store_true")
    ap.add_argument("--max-wait-idle", type=float, default=0,
                    help="wait up to this many seconds for the 1-minute load "
                         "average to drop below --idle-load before starting")
    ap.add_argument("--idle-load", type=float, default=1.0)
    args = ap.parse_args()

    data = Path(args.data)
    x1 = data / "x1"
    binary = str(Path(args.rtfprof).resolve())
    if not (x1 / "graph.pb").exists():
        sys.exit("no benchmark data in %s: run bench/run.sh with TensorFlow "
                 "available (it generates the data)" % data)
    meta = {}
    if (data / "meta.json").exists():
        meta = json.loads((data / "meta.json").read_text())
    q = args.quick
    runs_x1, warm = (3, 1) if q else (10, 2)
    tf_repeats = 2 if q else 5

    if args.max_wait_idle > 0:
        t = time.time()
        while float(loadavg()[0]) > args.idle_load and \
                time.time() - t < args.max_wait_idle:
            log("  load average %s > %.1f: waiting for a quieter machine "
                "(at most %.0f s more)" % (loadavg()[0], args.idle_load,
                                           args.max_wait_idle - (time.time() - t)))
            time.sleep(30)
    t_start = time.time()
    info = machine_info()
    load0 = loadavg()
    head, dirty = git_commit()
    tf_version = tf_python_ok(args.tf_python)
    if args.tf_python and not tf_version:
        log("TensorFlow is not importable with %s: rtfprof only" % args.tf_python)
    hf = sh(["hyperfine", "--version"]).stdout.strip() if shutil.which("hyperfine") else None

    tmp = tempfile.mkdtemp(prefix="rtfprof-bench-")
    res = {"rt": {}, "rt_rss": {}, "tf": {}, "tf_rss": {}, "same": {},
           "scale": {}, "cold": {}}
    try:
        # ---- rtfprof on x1
        # A profile of 100 steps (made by gen_data.py when TF is there).
        many = ["profile100_scope"] if (x1 / MANY_STEPS_PROFILE).exists() else []
        many_rt_runs = 3 if q else 5
        tf_ws = VIEWS + ["profile_scope"] + many

        def keep_block(br):
            for w, v in br.items():
                res["tf"][w] = v["tf"]
                res["rt"][w] = v["rt"]
                res["cold"][w] = v["cold"]

        if tf_version:
            # rtfprof and the tfprof engine, workload by workload
            keep_block(block_runs(args.tf_python, binary, x1,
                                  VIEWS + ["profile_scope"], tf_repeats,
                                  0 if q else 1, runs_x1, warm, tmp))

        def rtfprof_x1(ws):
            for w in ws:
                argv = rt_args(binary, x1, w)
                if w not in res["rt"]:
                    res["rt"][w] = time_cmd(argv, runs_x1, warm, tmp)
                res["rt_rss"][w] = peak_rss_kb(argv, 1 if q else 3)
                log("  rtfprof %-14s median %.3fs  cpu %.3fs  peak RSS %s MB" % (
                    w, res["rt"][w]["median"], res["rt"][w]["cpu"],
                    mb(res["rt_rss"][w])))
        rtfprof_x1(VIEWS + ["profile_scope", "pbtxt_scope", "pbtxt_only",
                            "pb_only"])

        # ---- scale series (rtfprof only)
        if not args.no_scale:
            scales = [k for k in (1, 4, 16)
                      if (data / ("x%d" % k) / "graph.pb").exists()]
            for k in set((1, 4, 16)) - set(scales):
                log("  x%d: no data, skipped" % k)
            # The scales run interleaved (x1, x4, x16, x1, ...), so a change
            # of host load over the minutes of the series weighs on all of
            # them alike; x16 as many runs as x1: the fastest of more runs
            # is faster, which would bias the x16/x1 ratio.
            runs = {1: runs_x1, 4: 3 if q else 5, 16: runs_x1}
            for k in scales:
                res["scale"][k] = {}
            for w in ("scope", "profile_scope"):
                timed = time_interleaved(
                    {k: (rt_args(binary, data / ("x%d" % k), w), runs[k])
                     for k in scales})
                for k in scales:
                    row = res["scale"][k]
                    row[w] = timed[k]
                    row[w + "_rss"] = res["rt_rss"][w] if k == 1 else \
                        peak_rss_kb(rt_args(binary, data / ("x%d" % k), w), 1)
                    log("  x%-2d %-14s median %.3fs  peak RSS %s MB" % (
                        k, w, row[w]["median"], mb(row[w + "_rss"])))

        # ---- the 100-step profile, after the scale series: the engine
        # takes 3-4 GB on it, which the host takes back once freed, and
        # the x16 runs would meet those pages (see bench/README.md)
        if tf_version and many:
            # 8-20 s an engine run: 2 runs, no warm-up (its serving process
            # has read nothing of the file yet: ProfilerFromFile reads it).
            keep_block(block_runs(args.tf_python, binary, x1, many,
                                  1 if q else 2, 0, many_rt_runs, 1, tmp))
        rtfprof_x1(many)

        # ---- tfprof engine memory and texts on the same files
        if tf_version:
            for w in tf_ws:
                js = os.path.join(tmp, "rss_%s.json" % w)
                tf_engine(args.tf_python, "rss", str(x1), w, js)
                res["tf_rss"][w] = json.load(open(js))
                log("  tfprof  %-14s engine peak RSS +%s MB (process %s MB)" % (
                    w, mb(res["tf_rss"][w]["delta_kb"]),
                    mb(res["tf_rss"][w]["peak_kb"])))
            # Same text?  (one run each, to files)
            dump = os.path.join(tmp, "tfdump")
            tf_engine(args.tf_python, "dump", str(x1), dump)
            for w in tf_ws:
                mine = os.path.join(tmp, "rt_%s.txt" % w)
                subprocess.run(rt_args(binary, x1, w, out=mine),
                               stdout=subprocess.DEVNULL, check=True)
                a = open(mine, "rb").read()
                b = open(os.path.join(dump, w + ".txt"), "rb").read()
                res["same"][w] = (a == b, len(b))

        # ---- perf hot spots (x1: scope view, profile load + scope)
        profs = []
        if not args.no_perf and perf_works():
            for w in ("scope", "profile_scope"):
                prof = perf_profile(rt_args(binary, x1, w), tmp)
                if prof:
                    prof["cmd"] = prof["cmd"].replace(
                        str(x1) + "/", "").replace(binary, "rtfprof")
                    prof["workload"] = w
                    profs.append(prof)
        elif not args.no_perf:
            log("  perf unavailable: no hot-spot profile")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load1 = loadavg()

    # ---------------------------------------------------------------- report
    L = []
    a = L.append
    rt_label = args.rtfprof_label or binary
    a("# rtfprof benchmark results")
    a("")
    a("Written by `bench/run.sh` (see bench/README.md) on %s, %.0f s." % (
        datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), time.time() - t_start))
    a("")
    a("- machine: %s cores (`nproc`), %s, %s RAM, Linux %s" % (
        info["nproc"], info["cpu"], info["mem"], info["kernel"]))
    if info.get("page_reporting_order"):
        a("- free page reporting to the hypervisor is on (kernel command line "
          "`page_reporting.page_reporting_order=%s`): memory a process frees "
          "goes back to the host about 2 s later, and the next process to "
          "touch it waits for the host to fault it in (the kernel time "
          "below)" % info["page_reporting_order"])
    a("- load average before / after: %s / %s (other jobs on the machine "
      "disturb the timings)" % (" ".join(load0), " ".join(load1)))
    if os.environ.get("RTFPROF_BENCH_COMMIT"):
        # run.sh --head: built from that commit alone
        head, dirty = os.environ["RTFPROF_BENCH_COMMIT"][:12], False
    if os.environ.get("RTFPROF_BENCH_UNKNOWN"):
        a("- rtfprof: %s; built from an unknown state (repository HEAD is "
          "`%s`%s)" % (rt_label, head,
                       " with uncommitted changes in src/" if dirty else ""))
    else:
        a("- rtfprof: commit `%s`%s, %s" % (
            head, " **plus uncommitted changes in src/**" if dirty else "",
            rt_label))
    gen_tf = sorted({m.get("tf_version", "?") for m in meta.values()})
    a("- TensorFlow: %s; data generated with TensorFlow %s" % (
        tf_version or "**not importable: rtfprof alone on existing "
                      "bench/data/ files, no tfprof comparison**",
        ", ".join(gen_tf) or "?"))
    a("- timing: %s, whole rtfprof process, %d runs after %d warm-up for x1%s" % (
        hf or "Python timing loop", runs_x1, warm,
        "; tfprof engine in-process: %d runs after %s warm-up, workload by "
        "workload next to rtfprof's" % (tf_repeats, "no" if q else "1")
        if tf_version else ""))
    a("- options for every view (both tools): tfprof CLI defaults, "
      "`--select=%s`, output to `file:outfile=/dev/null`" % SELECT)
    a("")
    a("## Inputs (bench/data/)")
    a("")
    a("| scale | graph nodes | node stats/step | graph.pb | graph.pbtxt | "
      "run_meta x5 | tfprof_log | profile | how made |")
    a("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for k in (1, 4, 16):
        d = data / ("x%d" % k)
        if not d.exists():
            continue
        m = meta.get("x%d" % k, {})
        sz = {f.name: f.stat().st_size for f in d.iterdir()}
        rm = sum(sz.get("run_meta_%d" % i, 0) for i in range(N_STEPS))
        def f(n):
            return "%.1f MB" % (sz[n] / 1e6) if n in sz else "-"
        a("| x%d | %s | %s | %s | %s | %.1f MB | %s | %s | %s |" % (
            k, m.get("graph_nodes", "?"), m.get("node_stats_per_step", "?"),
            f("graph.pb"), f("graph.pbtxt"), rm / 1e6, f("tfprof_log"),
            f("profile"), m.get("method", "?")))
    a("")
    if (x1 / MANY_STEPS_PROFILE).exists():
        a("x1 also has `%s` (%.1f MB): a ProfileProto of the same graph "
          "and op log with 100 steps (step i is run_meta_(i mod 5)), made by "
          "the engine, as a long ProfileContext run leaves one." % (
              MANY_STEPS_PROFILE, (x1 / MANY_STEPS_PROFILE).stat().st_size / 1e6))
        a("")

    a("## x1 (~25k nodes): rtfprof whole process vs tfprof engine in-process")
    a("")
    a("| workload | rtfprof wall s, median (min-max) | rtfprof CPU s | "
      "rtfprof first run after the engine, wall s | tfprof wall s, median "
      "(build + view + delete) | tfprof CPU s | tfprof / rtfprof wall | "
      ">= 10x? | CPU ratio | same text? |")
    a("|---|---:|---:|---:|---:|---:|---:|:-:|---:|:-:|")
    names = {"scope": "scope view", "graph": "graph view", "op": "op view",
             "code": "code view", "profile_scope": "profile load + scope",
             "profile100_scope": "100-step profile load + scope",
             "pbtxt_scope": "graph.pbtxt + run_metas + op log, scope",
             "pbtxt_only": "graph.pbtxt alone, scope",
             "pb_only": "graph.pb alone, scope"}
    speedups, cpu_speedups = {}, {}
    for w in [w for w in VIEWS + ["profile_scope", "profile100_scope", "pbtxt_scope",
                                  "pbtxt_only", "pb_only"] if w in res["rt"]]:
        r = res["rt"][w]
        c = res["cold"].get(w)
        cells = ["%s (%s-%s)" % (fs(r["median"]), fs(r["min"]), fs(r["max"])),
                 fs(r["cpu"]), fs(c["total"]) if c else "-"]
        t = res["tf"].get(w)
        if t:
            sp = t["total"] / r["median"]
            speedups[w] = sp
            cpu_speedups[w] = t["cpu"] / r["cpu"]
            cells += ["%s (%s + %s + %s)" % (fs(t["total"]), fs(t["build"]),
                                              fs(t["view"]), fs(t["delete"])),
                      fs(t["cpu"]), "%.1fx" % sp, ok(sp >= TARGET_SPEEDUP),
                      "%.1fx" % (t["cpu"] / r["cpu"])]
            s = res["same"].get(w)
            cells.append("yes (%d B)" % s[1] if s and s[0] else
                         ("**NO**" if s else "-"))
        else:
            cells += ["-", "-", "-", "-", "-", "-"]
        a("| %s | %s |" % (names[w], " | ".join(cells)))
    a("")
    a("Workload by workload: the engine %d times (after %s warm-up) in a "
      "Python process that imported TF and read the inputs beforehand, then "
      "one rtfprof run (the *first run after the engine* column), then "
      "rtfprof %d times after %d warm-up runs; medians.  Wall: rtfprof = "
      "whole process (exec, file reads, view, exit); tfprof = NewProfiler + "
      "5 AddStep + Profile + DeleteProfiler (or ProfilerFromFile + Profile + "
      "DeleteProfiler).  CPU = user + sys: rtfprof's all threads (hyperfine "
      "1.15 gives the mean); tfprof's `time.process_time()` around the same "
      "calls.  The CPU ratio is less disturbed by other jobs on the machine "
      "than the wall ratio.  The first rtfprof run after another "
      "memory-hungry process is markedly slower on this VM (fresh pages cost "
      "more to fault in than pages the previous rtfprof run just freed; the "
      "engine, in-process, reuses its warm heap), hence the separate column." % (
          tf_repeats, "no" if q else "1", runs_x1, warm))
    if "profile100_scope" in res["tf"]:
        a("")
        a("The 100-step profile: the engine %d times without warm-up (8-20 s "
          "a run), rtfprof %d times after 1 warm-up run." % (
              res["tf"]["profile100_scope"]["n"], many_rt_runs))
    a("")
    if not tf_version:
        a("tfprof columns empty: TensorFlow not importable in this run.")
        a("")
    a("`graph.pbtxt` rows are rtfprof only: the engine takes a serialized "
      "GraphDef, and the CLI's C++ text parser is not reachable from Python.")
    a("")

    a("## Peak RSS (x1)")
    a("")
    a("| workload | rtfprof peak RSS MB (whole process) | tfprof engine MB "
      "(peak - baseline) | tfprof process peak MB | rtfprof below tfprof? |")
    a("|---|---:|---:|---:|:-:|")
    rss_ok = {}
    for w in [w for w in VIEWS + ["profile_scope", "profile100_scope", "pbtxt_scope"]
              if w in res["rt_rss"]]:
        t = res["tf_rss"].get(w)
        rt = res["rt_rss"][w]
        if t:
            rss_ok[w] = rt < t["delta_kb"]
            a("| %s | %s | %s | %s | %s |" % (names[w], mb(rt), mb(t["delta_kb"]),
                                               mb(t["peak_kb"]), ok(rss_ok[w])))
        else:
            a("| %s | %s | - | - | - |" % (names[w], mb(rt)))
    a("")
    a("rtfprof: `Maximum resident set size` of `/usr/bin/time -v` (median of "
      "%d runs).  tfprof: a fresh Python process imports TensorFlow and reads "
      "the input files into memory, then takes `resource.getrusage("
      "RUSAGE_SELF).ru_maxrss` (baseline), runs the workload once, and takes "
      "it again (peak); the engine's figure is peak - baseline, i.e. what the "
      "C++ engine (with its copies of the inputs) adds on top of Python + TF "
      "+ the file bytes.  The whole process figure is shown for context." % (
          1 if q else 3))
    a("")

    a("## Text GraphDef load")
    a("")
    pbtxt = res["rt"]["pbtxt_only"]["median"]
    pb = res["rt"]["pb_only"]["median"]
    txt_size = (x1 / "graph.pbtxt").stat().st_size / 1e6
    a("- `rtfprof scope --graph_path=graph.pbtxt` (%.1f MB, nothing else): "
      "%.3f s whole process (target < %.1f s: %s); the same graph as "
      "graph.pb: %.3f s, so text parsing costs about %.3f s." % (
          txt_size, pbtxt, TARGET_PBTXT_S, ok(pbtxt < TARGET_PBTXT_S), pb,
          pbtxt - pb))
    a("- with run_metas and op log (scope view): graph.pbtxt %.3f s vs "
      "graph.pb %.3f s." % (res["rt"]["pbtxt_scope"]["median"],
                              res["rt"]["scope"]["median"]))
    a("")

    lin = {}
    if res["scale"]:
        a("## Scale series (rtfprof)")
        a("")
        a("| scale | graph nodes | scope wall s | CPU s | of which kernel s | "
          "us/node (wall) | RSS MB | profile load + scope wall s | CPU s | "
          "of which kernel s | us/node (wall) | RSS MB |")
        a("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        nodes = {}
        for k, row in sorted(res["scale"].items()):
            n = meta.get("x%d" % k, {}).get("graph_nodes")
            nodes[k] = n
            def per(w):
                return "%.1f" % (row[w]["median"] / n * 1e6) if n else "?"
            a("| x%d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                k, n or "?", fs(row["scope"]["median"]),
                fs(row["scope"]["cpu"]), sys_s(row["scope"]), per("scope"),
                mb(row["scope_rss"]), fs(row["profile_scope"]["median"]),
                fs(row["profile_scope"]["cpu"]), sys_s(row["profile_scope"]),
                per("profile_scope"), mb(row["profile_scope_rss"])))
        a("")
        if 1 in res["scale"] and 16 in res["scale"]:
            a("Linearity is judged on each scale's fastest run. The scales "
              "run interleaved (x1, x4, x16, x1, ...; x1 and x16 the same "
              "number of times, each timed run right after an untimed run "
              "of the same command), so this x1 row is timed apart from "
              "the x1 rows above. On this VM "
              "back-to-back x16 runs alternate between reusing the pages the "
              "previous run freed and meeting pages the hypervisor has taken "
              "back (free page reporting, see bench/README.md), so the "
              "median of a few x16 runs is decided by which state came up "
              "more often; x1 runs always reuse. Kernel seconds of each x16 "
              "run, in order, show the two states. Median ratios are given "
              "too.")
            a("")
            for w in ("scope", "profile_scope"):
                r1, r16 = res["scale"][1][w], res["scale"][16][w]
                nr = (nodes[16] / nodes[1]) if nodes[1] and nodes[16] else 16
                lin[w] = (r16["min"] / r1["min"]) / nr
                med = (r16["median"] / r1["median"]) / nr
                c1, c16 = r1["cpu"], r16["cpu"]
                line = ("- %s: x16/x1 fastest-run ratio %.1f for %.0fx the "
                        "nodes: %.2fx linear (target <= %.1fx: %s); median "
                        "ratio %.1f: %.2fx linear; CPU-time ratio %.1f: "
                        "%.2fx linear" % (
                            names[w], r16["min"] / r1["min"], nr, lin[w],
                            TARGET_LINEAR, ok(lin[w] <= TARGET_LINEAR),
                            r16["median"] / r1["median"], med, c16 / c1,
                            c16 / c1 / nr))
                s1, s16 = r1.get("sys"), r16.get("sys")
                if s1 is not None and s16 is not None and c1 > s1:
                    u = (c16 - s16) / (c1 - s1)
                    line += "; user-time ratio %.1f: %.2fx linear" % (u, u / nr)
                if len(r16.get("sys_runs") or []) == len(r16["times"]):
                    line += "; x16 runs: %s" % ", ".join(
                        "%.2f s (kernel %.2f s)" % (t, k) for t, k in
                        zip(r16["times"], r16["sys_runs"]))
                a(line)
            a("")

    a("## Targets")
    a("")
    if speedups:
        for w in [w for w in VIEWS + ["profile_scope", "profile100_scope"] if w in speedups]:
            a("- %s >= 10x faster than tfprof: %s (wall %.1fx; CPU time "
              "%.1fx)" % (names[w], ok(speedups[w] >= TARGET_SPEEDUP),
                          speedups[w], cpu_speedups[w]))
    else:
        a("- speed-ups vs tfprof: not measured (no TensorFlow)")
    a("- 15 MB graph.pbtxt loads in < 0.3 s: %s (%.3f s for %.1f MB, whole "
      "process)" % (ok(pbtxt < TARGET_PBTXT_S), pbtxt, txt_size))
    if rss_ok:
        a("- peak RSS below tfprof's: %s (%s)" % (
            ok(all(rss_ok.values())), ", ".join(
                "%s %s vs %s MB" % (w, mb(res["rt_rss"][w]),
                                   mb(res["tf_rss"][w]["delta_kb"]))
                for w in rss_ok)))
    else:
        a("- peak RSS vs tfprof: not measured (no TensorFlow)")
    for w, v in lin.items():
        a("- linear within 1.3x from x1 to x16 (%s, fastest runs): %s (%.2fx)" % (
            names[w], ok(v <= TARGET_LINEAR), v))
    a("")

    for prof in profs:
        a("## Hot spots (perf, %s on x1)" % names[prof["workload"]])
        a("")
        a("`perf record -F 4999 --call-graph dwarf` of `%s` (%s samples of "
          "event %s). Shares are of all CPU samples across threads (rayon "
          "workers included), not of wall time." % (
              prof["cmd"], prof["samples"], prof["event"]))
        a("")
        a("Self time by object: %s." % ", ".join(
            "%s %.1f%%" % (d.replace("rtfprof.bench", "rtfprof"), p)
            for p, d in prof["dso"]))
        a("")
        a("Self time (flat):")
        a("")
        a("| self % | object | function |")
        a("|---:|---|---|")
        for pct, dso, sym in prof["flat"]:
            a("| %.1f | %s | `%s` |" % (pct, dso.replace("rtfprof.bench",
                                                         "rtfprof"), sym))
        a("")
        a("Inclusive time of rtfprof / prost functions (children included):")
        a("")
        a("| incl % | self % | function |")
        a("|---:|---:|---|")
        for inc, slf, sym in prof["incl"]:
            a("| %.1f | %.1f | `%s` |" % (inc, slf, sym))
        a("")
    text = "\n".join(L) + "\n"
    # Keep the section bench/report.py writes at the end.
    old = Path(args.out).read_text() if Path(args.out).exists() else ""
    if "<!-- report benchmark: begin" in old:
        text += "\n" + old[old.index("<!-- report benchmark: begin"):]
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
