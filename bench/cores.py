#!/usr/bin/env python3
"""How rtfprof's time scales with cores (issue 49, item 7): the large JAX GPU
XPlane trace and the large Kineto trace, read with 1, 2, 4, 8 and 16 threads.

    python3 bench/cores.py RTFPROF XPLANE_SRC KINETO_SRC OUT_DIR [--threads 1,2,4,8,16]

XPLANE_SRC: the shared H200 jax_lstm trace (../shared/traces/jax_h200/
jax_lstm/vm.xplane.pb), repeated 91 times by tools/xplane/repeat_trace.py
--gpu (x91: 272 MB, as in bench/README.md's GPU family). KINETO_SRC: the
shared H200 torch_tx trace, repeated by tools/torch/repeat_trace.py to
470 MB. rtfprof's threads are rayon's pool, sized by RAYON_NUM_THREADS (the
XPlane decoder's workers and the JSON reader's pieces follow it). Each
(command, threads) runs REPEATS times; the fastest wall time and its user
time and peak RSS (wait4's rusage) are kept. Writes OUT_DIR/cores.md (a
table and the speed-up over 1 thread) and prints it. Only the standard
library is used, so it runs on a bare machine with python3.
"""

import os
import subprocess
import sys
import time

REPEATS = 2
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, threads):
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads), CI="1")
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)}: exit {status}: {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--threads")]
    threads = [1, 2, 4, 8, 16]
    for a in sys.argv[1:]:
        if a.startswith("--threads"):
            threads = [int(t) for t in a.split("=", 1)[1].split(",")]
    rtfprof, xplane_src, kineto_src, out = args
    os.makedirs(out, exist_ok=True)
    xplane_dir = os.path.join(out, "xplane_x91")
    if not os.path.exists(os.path.join(xplane_dir, "plugins")):
        subprocess.run([sys.executable, os.path.join(HERE, "../tools/xplane/repeat_trace.py"), xplane_src, xplane_dir, "91", "--gpu"], check=True, stdout=subprocess.DEVNULL)
    kineto = os.path.join(out, "kineto_470mb.pt.trace.json")
    if not os.path.exists(kineto):
        subprocess.run([sys.executable, os.path.join(HERE, "../tools/torch/repeat_trace.py"), kineto_src, "--size", "470", "--out", kineto], check=True, stdout=subprocess.DEVNULL)
    size = lambda p: sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs) if os.path.isdir(p) else os.path.getsize(p)
    cases = [
        (f"XPlane x91 ({size(xplane_dir) / 1e6:.0f} MB)", "scope", ["scope", "--xplane_path", xplane_dir, "--max_depth", "3"]),
        (f"XPlane x91 ({size(xplane_dir) / 1e6:.0f} MB)", "steps", ["steps", "--xplane_path", xplane_dir]),
        (f"XPlane x91 ({size(xplane_dir) / 1e6:.0f} MB)", "kernels", ["kernels", "--xplane_path", xplane_dir]),
        (f"Kineto ({size(kineto) / 1e6:.0f} MB)", "op", ["op", "--pytorch_path", kineto, "--max_depth", "10"]),
        (f"Kineto ({size(kineto) / 1e6:.0f} MB)", "steps", ["steps", "--pytorch_path", kineto]),
    ]
    rows = []
    for trace, name, argv in cases:
        base = None
        for t in threads:
            best = min((run([rtfprof] + argv, t) for _ in range(REPEATS)), key=lambda r: r[0])
            base = base or best[0]
            rows.append((trace, name, t, best[0], best[1], best[2], base / best[0]))
            print(f"{trace} {name} threads={t}: wall {best[0]:.2f} s, user+sys {best[1]:.2f} s, peak {best[2]:.0f} MB, x{base / best[0]:.2f}", flush=True)
    lines = [
        f"machine: {os.cpu_count()} cores ({os.uname().machine}); fastest of {REPEATS} runs; RAYON_NUM_THREADS=N",
        "",
        "| trace | command | threads | wall (s) | user+sys (s) | peak RSS (MB) | speed-up |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    lines += [f"| {a} | `{b}` | {t} | {w:.2f} | {u:.2f} | {m:.0f} | {s:.2f}x |" for a, b, t, w, u, m, s in rows]
    open(os.path.join(out, "cores.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
