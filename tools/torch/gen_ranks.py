#!/usr/bin/env python3
"""Makes the traces of a synchronous data-parallel job of N ranks out of
one real single-GPU PyTorch trace: each rank's trace is the real trace cut
to a few steps, slowed or sped up by that rank's factor, with NCCL-like
all-reduce kernels inserted and every rank waiting for the last one in
them. Deterministic: the same arguments write the same bytes.

    python3 tools/torch/gen_ranks.py [--trace TRACE] [--ranks 16]
        [--slow-rank 11] [--slow-factor 1.3] [--jitter 0.02] [--seed 1]
        [--steps 2,3] [--out testdata/pytorch/ranks16]

TRACE defaults to ../shared/traces/torch_h200/torch_resnet18/*.pt.trace.json.gz
(ResNet-18 on one H200, ProfilerStep#1..#4). Only the standard library is
used. What each rank's trace holds:

- **The real trace's steps `--steps`** (ProfilerStep#2 and #3): its CPU
  ops, runtime calls, annotations and flows of those steps, and the GPU
  events (kernels, copies, sets, GPU annotations) their calls launched.
  Left out to keep the files small: the Python frames (`with_stack`),
  `[memory]` and other instant events.
- **Its speed.** Rank r runs at a factor f_r drawn uniformly from
  [1 - jitter, 1 + jitter] (`random.Random(seed)`), the slow rank at
  `--slow-factor`: every CPU and GPU time of a step is stretched by f_r
  from the step's start. Each step also starts 0..40 us late on each rank
  (host jitter).
- **Collectives.** In each step, three all-reduces of the gradients (DDP's
  buckets): two launched during the backward pass (at 35% and 70% of it)
  and one at its end, each by `record_param_comms` > `nccl:all_reduce` >
  `cudaLaunchKernel` on a thread of their own (tid pid+60), running
  `ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)`
  on stream 24, with Kineto's args and `ac2g` flows. A collective ends on
  every rank at the same time: the latest rank's start plus its transfer
  time (600, 800, 900 us): ranks that arrive early wait in it. The last
  one also starts after the rank's backward kernels; the optimizer's CPU
  ops and kernels (the step after the `optimizer` annotation's start) are
  moved after it ends, so that the step's rest waits for the gradients.
- **A copy of the batch** at each step's start: `aten::copy_` >
  `cudaMemcpyAsync` (tid pid+61) and a `Memcpy HtoD (Pinned -> Device)` of
  19,267,584 bytes (32x3x224x224 floats) on stream 25, 780 us.
- **Who it is.** `distributedInfo` (backend nccl, rank, world_size, one
  process group of every rank) as torch writes it; its own pid (CPU
  events), its GPU `r % 8` (pid and args.device of GPU events); the file
  `node{r // 8}_{pid}.{stamp}.pt.trace.json.gz`, as
  tensorboard_trace_handler names files, with pids drawn so that the
  files' sorted order is not the ranks'. Written gzipped with mtime 0.

So in every step the ranks that are on time wait for the slow one in the
last all-reduce: step times even out across ranks, while the slow rank
spends the least time waiting.
"""

import argparse
import glob
import gzip
import io
import json
import os
import random
import re

import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repeat_trace import MARK, MARKED, ns, us_text  # noqa: E402

US = 1000  # ns


def marked(n):
    return MARK + us_text(int(round(n)))


STEP = re.compile(r"^ProfilerStep#(\d+)$")
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync"}
LAUNCHES = {"cuda_runtime", "cuda_driver"}

NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
BUCKETS = [(0.35, 600), (0.70, 800)]  # (where in the backward pass, transfer us)
FINAL_TRANSFER_US = 900
BATCH_BYTES = 32 * 3 * 224 * 224 * 4
BATCH_COPY_US = 780
COMM_STREAM = 24
COPY_STREAM = 25


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f, parse_float=lambda text: MARK + text)


class Base:
    """The real trace cut to the chosen steps, in original time (ns)."""

    def __init__(self, trace, keep):
        ev = trace["traceEvents"]
        self.meta = {k: v for k, v in trace.items() if k != "traceEvents"}
        steps = sorted(((ns(e["ts"]), int(STEP.match(e["name"]).group(1)), e) for e in ev
                        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and STEP.match(e.get("name", ""))), key=lambda s: s[0])
        numbers = [n for _, n, _ in steps]
        missing = [k for k in keep if k not in numbers]
        if missing:
            raise SystemExit(f"the trace has no ProfilerStep#{missing[0]} (it has {numbers})")
        self.cpu_pid = steps[0][2]["pid"]
        kept = [s for s in steps if s[1] in keep]
        after = [s for s in steps if s[0] > kept[-1][0]]
        self.starts = [s[0] for s in kept]
        last_end = ns(kept[-1][2]["ts"]) + ns(kept[-1][2]["dur"])
        self.end = after[0][0] if after else last_end + 1000 * US
        self.regions = self.starts[1:] + [self.end]
        # Per step: the optimizer's start (the cut), the backward pass.
        self.cut, self.backward = [], []
        for k, start in enumerate(self.starts):
            inside = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e.get("pid") == self.cpu_pid
                      and start <= ns(e["ts"]) < self.regions[k]]
            opt = [ns(e["ts"]) for e in inside if e["name"] == "optimizer"]
            bwd = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in inside if e["name"] == "backward"]
            if not opt or not bwd:
                raise SystemExit(f"step {k}: no 'optimizer' or 'backward' record_function")
            self.cut.append(opt[0])
            self.backward.append(bwd[0])
        t0 = self.starts[0]
        self.cpu = [e for e in ev if e.get("ph") == "X" and e.get("pid") == self.cpu_pid and e.get("cat") != "python_function"
                    and t0 <= ns(e["ts"]) < self.end]
        launch_ts = {e["args"]["correlation"]: ns(e["ts"]) for e in self.cpu if e.get("cat") in LAUNCHES and "correlation" in e.get("args", {})}
        annotation_ts = {e["args"]["External id"]: ns(e["ts"]) for e in self.cpu if e.get("cat") == "user_annotation" and "External id" in e.get("args", {})}
        self.gpu = []  # (event, the CPU time that decides its step and side)
        for e in ev:
            if e.get("ph") != "X" or e.get("cat") not in GPU_CATS:
                continue
            args = e.get("args", {})
            at = launch_ts.get(args.get("correlation")) if e["cat"] != "gpu_user_annotation" else annotation_ts.get(args.get("External id"))
            if at is not None:
                self.gpu.append((e, at))
        kept_corr = {e["args"]["correlation"] for e, _ in self.gpu if "correlation" in e.get("args", {})}
        fwdbwd = {}
        for e in ev:
            if e.get("cat") == "fwdbwd" and e.get("ph") in ("s", "f"):
                fwdbwd.setdefault(e["id"], []).append(e)
        self.flows = [e for e in ev if e.get("cat") == "ac2g" and e.get("ph") in ("s", "f") and e.get("id") in kept_corr]
        for pair in fwdbwd.values():
            if len(pair) == 2 and all(t0 <= ns(e["ts"]) < self.end for e in pair):
                self.flows.extend(pair)
        self.launch_of = {c: t for c, t in launch_ts.items() if c in kept_corr}
        self.metadata = [e for e in ev if e.get("ph") == "M"]
        self.span = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "Trace"]
        self.step_numbers = [s[1] for s in kept]

    def region(self, t):
        """The kept step whose region holds t (before the first: 0)."""
        k = 0
        while k + 1 < len(self.starts) and t >= self.starts[k + 1]:
            k += 1
        return k

    def first_post_gpu(self, k):
        """The earliest start of the GPU work launched after step k's cut."""
        starts = [ns(e["ts"]) for e, at in self.gpu if self.region(at) == k and at >= self.cut[k] and e["cat"] != "gpu_user_annotation"]
        return min(starts) if starts else None

    def last_pre_gpu_end(self, k):
        ends = [ns(e["ts"]) + ns(e["dur"]) for e, at in self.gpu if self.region(at) == k and at < self.cut[k] and e["cat"] != "gpu_user_annotation"]
        return max(ends) if ends else self.cut[k]


class Timeline:
    """One rank's times: per step, a start A_k, the factor f, the post-cut
    start P_k; CPU times map piecewise, GPU times by their launch's side."""

    def __init__(self, base, f, start_delays):
        self.base, self.f, self.delays = base, f, start_delays
        self.A, self.P = [], []

    def pre(self, k, t):
        return self.A[k] + (t - self.base.starts[k]) * self.f

    def post(self, k, t):
        return self.P[k] + (t - self.base.cut[k]) * self.f

    def cpu(self, t):
        k = self.base.region(t)
        if t < self.base.starts[0]:
            return self.A[0] + (t - self.base.starts[0])
        return self.pre(k, t) if t < self.base.cut[k] else self.post(k, t)

    def gpu(self, at, t):
        k = self.base.region(at)
        return self.pre(k, t) if at < self.base.cut[k] else self.post(k, t)


def rank_factors(n, slow_rank, slow_factor, jitter, rng):
    factors = [1.0 + rng.uniform(-jitter, jitter) for _ in range(n)]
    if 0 <= slow_rank < n:
        factors[slow_rank] = slow_factor
    return factors


def build(base, n, factors, rng):
    """Lays out every rank's steps, collectives and copies; returns per rank
    its Timeline and the inserted events (in new time, ns)."""
    lines = [Timeline(base, factors[r], [rng.uniform(0, 40 * US) for _ in base.starts]) for r in range(n)]
    inserted = [[] for _ in range(n)]  # ("comm"|"copy", k, launch_ns, gpu_start, gpu_end, seq)
    offsets = [rng.uniform(0, 30 * US) for _ in range(n)]
    nccl_end = [float("-inf")] * n
    seq = 0
    for k, start in enumerate(base.starts):
        for r, line in enumerate(lines):
            if k == 0:
                line.A.append(start + offsets[r])
            else:
                line.A.append(line.post(k - 1, start) + line.delays[k])
            # The batch's copy at the step's start.
            launch = line.A[k] + 2 * US
            inserted[r].append(("copy", k, launch, launch + 12 * US, launch + 12 * US + BATCH_COPY_US * US, None))
        b0, b1 = base.backward[k]
        for share, transfer in BUCKETS:
            seq += 1
            at = b0 + share * (b1 - b0)
            starts = []
            for r, line in enumerate(lines):
                launch = line.pre(k, at)
                starts.append(max(launch + 20 * US, nccl_end[r]))
            end = max(starts) + transfer * US
            for r in range(n):
                inserted[r].append(("comm", k, lines[r].pre(k, at), starts[r], end, seq))
                nccl_end[r] = end
        seq += 1
        starts = []
        for r, line in enumerate(lines):
            launch = line.pre(k, b1)
            starts.append(max(launch + 20 * US, line.pre(k, base.last_pre_gpu_end(k)), nccl_end[r]))
        end = max(starts) + FINAL_TRANSFER_US * US
        first_post = base.first_post_gpu(k)
        for r, line in enumerate(lines):
            inserted[r].append(("comm", k, line.pre(k, b1), starts[r], end, seq))
            nccl_end[r] = end
            cut = line.pre(k, base.cut[k])
            post = cut if first_post is None else max(cut, end + 5 * US - (first_post - base.cut[k]) * line.f)
            line.P.append(post)
    return lines, inserted


def rank_trace(base, r, n, line, inserted, pid, device):
    """The events of rank r, in new time."""
    tid_map = {base.cpu_pid: pid}
    comm_tid, copy_tid = pid + 60, pid + 61

    def cpu_ids(e):
        e = dict(e)
        if e.get("pid") == base.cpu_pid:
            e["pid"] = pid
            tid = e.get("tid")
            e["tid"] = tid_map.setdefault(tid, pid + 25 + len(tid_map) - 1) if isinstance(tid, int) and tid != 0 else tid
        return e

    out = []
    for e in base.metadata:
        e = cpu_ids(e)
        if "ts" in e:
            e["ts"] = marked(line.A[0] - 200 * US)
        out.append(e)
    ends = []
    for e in base.cpu:
        t0, t1 = ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))
        a, b = line.cpu(t0), line.cpu(t1)
        e = cpu_ids(e)
        e["ts"], e["dur"] = marked(a), marked(round(b) - round(a))
        out.append(e)
        ends.append(b)
    for e, at in base.gpu:
        t0, t1 = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
        a, b = line.gpu(at, t0), line.gpu(at, t1)
        e = dict(e)
        e["pid"] = device
        if "args" in e:
            e["args"] = dict(e["args"])
            if "device" in e["args"]:
                e["args"]["device"] = device
        e["ts"], e["dur"] = marked(a), marked(round(b) - round(a))
        out.append(e)
        ends.append(b)
    for e in base.flows:
        e = cpu_ids(e)
        t = ns(e["ts"])
        if e["cat"] == "ac2g":
            at = base.launch_of[e["id"]]
            e["ts"] = marked(line.cpu(t) if e["ph"] == "s" else line.gpu(at, t))
            if e["ph"] == "f":
                e["pid"] = device
        else:
            e["ts"] = marked(line.cpu(t))
        out.append(e)
    external, correlation = 900000, 2000000
    world = list(range(n))
    for kind, k, launch, g0, g1, seq in inserted:
        external += 1
        correlation += 1
        if kind == "comm":
            comms = {"External id": external, "Record function id": 0, "Ev Idx": 0, "Collective name": "allreduce", "dtype": "Float",
                     "In msg nelems": 4194304, "Out msg nelems": 4194304, "In split size": "[]", "Out split size": "[]", "Global rank start": 0,
                     "Global rank stride": 1, "Group size": n, "Process Group Name": "0", "Process Group Description": "default_pg",
                     "Process Group Ranks": json.dumps(world), "Rank": r, "Seq": seq}
            ops = [("cpu_op", "record_param_comms", 0, 30, comms), ("cpu_op", "nccl:all_reduce", 2, 26, {"External id": external + 500000}),
                   ("cuda_runtime", "cudaLaunchKernel", 8, 12, {"External id": external + 500000, "cbid": 211, "correlation": correlation})]
            tid, stream, name, cat = comm_tid, COMM_STREAM, NCCL_KERNEL, "kernel"
            gpu_args = {"External id": external + 500000, "queued": 0, "device": device, "context": 1, "stream": stream, "correlation": correlation,
                        "registers per thread": 96, "shared memory": 4864, "blocks per SM": 0.015152, "warps per SM": 0.484848,
                        "grid": [2, 1, 1], "block": [640, 1, 1], "est. achieved occupancy %": 0}
        else:
            ops = [("cpu_op", "aten::copy_", 0, 15, {"External id": external}),
                   ("cuda_runtime", "cudaMemcpyAsync", 3, 9, {"External id": external, "cbid": 41, "correlation": correlation})]
            tid, stream, name, cat = copy_tid, COPY_STREAM, "Memcpy HtoD (Pinned -> Device)", "gpu_memcpy"
            gpu_args = {"External id": external, "device": device, "context": 1, "stream": stream, "correlation": correlation,
                        "bytes": BATCH_BYTES, "memory bandwidth (GB/s)": BATCH_BYTES / ((round(g1) - round(g0)) / 1e9) / 1e9}
        launch_at = None
        for cat_, op, start, dur, args in ops:
            out.append({"ph": "X", "cat": cat_, "name": op, "pid": pid, "tid": tid, "ts": marked(launch + start * US), "dur": marked(dur * US), "args": args})
            if cat_ == "cuda_runtime":
                launch_at = launch + start * US
        out.append({"ph": "X", "cat": cat, "name": name, "pid": device, "tid": stream, "ts": marked(g0), "dur": marked(round(g1) - round(g0)), "args": gpu_args})
        out.append({"ph": "s", "id": correlation, "pid": pid, "tid": tid, "ts": marked(launch_at), "cat": "ac2g", "name": "ac2g"})
        out.append({"ph": "f", "id": correlation, "pid": device, "tid": stream, "ts": marked(g0), "cat": "ac2g", "name": "ac2g", "bp": "e"})
        ends.append(g1)
    for tid, label in ((comm_tid, "nccl"), (copy_tid, "copy")):
        out.append({"name": "thread_name", "ph": "M", "ts": marked(line.A[0] - 200 * US), "pid": pid, "tid": tid, "args": {"name": f"thread {tid} ({label})"}})
    for e in base.span:
        e = dict(e)
        start = line.A[0] - 200 * US
        e["ts"], e["dur"] = marked(start), marked(round(max(ends) + 100 * US) - round(start))
        out.insert(0, e)
    return out


def dump(meta, distributed, events):
    """The trace's text: Kineto's layout, one top-level key a line, events
    one a line."""
    parts = ["{", '  "schemaVersion": 1,']
    for key, value in meta.items():
        if key in ("schemaVersion", "traceName"):
            continue
        parts.append(f"  {json.dumps(key)}: {json.dumps(value)},")
        if key == "deviceProperties":
            parts.append(f'  "distributedInfo": {json.dumps(distributed)},')
    parts.append('  "traceEvents": [')
    parts.append(",\n".join("  " + json.dumps(e) for e in events))
    parts.append("  ],")
    parts.append(f'  "traceName": {json.dumps(meta.get("traceName", ""))}')
    parts.append("}")
    return MARKED.sub(r"\1", "\n".join(parts) + "\n")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_trace = (glob.glob(os.path.join(here, "../../../shared/traces/torch_h200/torch_resnet18/*.pt.trace.json.gz")) or [None])[0]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", default=default_trace)
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--slow-rank", type=int, default=11)
    ap.add_argument("--slow-factor", type=float, default=1.3)
    ap.add_argument("--jitter", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", default="2,3")
    ap.add_argument("--out", default=os.path.join(here, "../../testdata/pytorch/ranks16"))
    args = ap.parse_args()
    if not args.trace:
        raise SystemExit("no --trace, and ../shared/traces/torch_h200/torch_resnet18 is absent")
    rng = random.Random(args.seed)
    base = Base(load(args.trace), [int(s) for s in args.steps.split(",")])
    n = args.ranks
    factors = rank_factors(n, args.slow_rank, args.slow_factor, args.jitter, rng)
    pids = rng.sample(range(20000, 60000), n)
    lines, inserted = build(base, n, factors, rng)
    os.makedirs(args.out, exist_ok=True)
    for f in glob.glob(os.path.join(args.out, "*.pt.trace.json.gz")):
        os.remove(f)
    for r in range(n):
        device = r % 8
        events = rank_trace(base, r, n, lines[r], inserted[r], pids[r], device)
        distributed = {"backend": "nccl", "rank": r, "world_size": n, "pg_count": 1,
                       "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl", "pg_size": n, "ranks": list(range(n))}],
                       "nccl_version": "2.27.5"}
        stamp = 1795000000000000000 + 7919 * pids[r]
        name = f"node{r // 8}_{pids[r]}.{stamp}.pt.trace.json.gz"
        meta = dict(base.meta)
        meta["traceName"] = name[:-3]
        text = dump(meta, distributed, events)
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(text.encode("utf-8"))
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(buf.getvalue())
        print(f"rank {r:2d}  factor {factors[r]:.4f}  {name}")


if __name__ == "__main__":
    main()
