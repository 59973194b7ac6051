#!/usr/bin/env python3
"""Writes, for each Kineto trace given, which op launched its GPU work by
the launch rule of the book's PyTorch schema page (an implementation of its
own, written from the rule's text, not from rtfprof's code), as the golden
that tests/integration/pytorch.rs compares rtfprof with:

    python3 tools/torch/launch_goldens.py testdata/pytorch/published/*.json.gz

For TRACE.json.gz it writes TRACE.launch.json: the GPU time (ns) of
kernels, copies and sets; the time linked to an op, summed per op name; and
the time left unlinked, by reason ("launch_not_in_trace": no runtime or
driver call with the event's correlation; "launch_outside_ops": the call ran
outside every op of its thread).

The rule: a GPU event's correlation names its launch (the runtime or driver
call with that correlation); the launching op is the op the launch's
External id (torch 1.8/1.9: `external id`) names, if that op ran on the
launch's thread and encloses it, else the innermost op (cpu_op, Operator or
user_annotation) that encloses the launch on its thread. A GPU event
without a launch in the trace takes the op its own External id names only
if, in that trace, every GPU event that has both a launch and an External id
names the op the rule found. Only the standard library is used.
"""

import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from repeat_trace import MARK, ns  # noqa: E402

GPU = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset", "mtia_ccp_events"}
LAUNCH = {"cuda_runtime", "cuda_driver", "Runtime", "Driver", "mtia_runtime", "privateuse1_runtime", "privateuse1_driver", "xpu_runtime"}
OPS = {"cpu_op", "Operator", "user_annotation"}


def external_id(e):
    args = e.get("args") or {}
    v = args.get("External id", args.get("external id"))
    return v if v else None


def golden(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        trace = json.load(f, parse_float=lambda text: MARK + text)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    xs = [e for e in events if e.get("ph") == "X" and "ts" in e]

    def start(e):
        return ns(e["ts"])

    def end(e):
        return ns(e["ts"]) + ns(e.get("dur", 0))

    def thread(e):
        return (str(e.get("pid")), str(e.get("tid")))

    ops = [e for e in xs if e.get("cat") in OPS]
    by_id = {}
    for e in ops:
        if external_id(e) is not None:
            by_id.setdefault(external_id(e), e)
    launches = {}
    for e in xs:
        c = (e.get("args") or {}).get("correlation")
        if e.get("cat") in LAUNCH and c:
            launches.setdefault(c, e)
    ops_of_thread = {}
    for e in ops:
        ops_of_thread.setdefault(thread(e), []).append(e)

    def encloses(op, launch):
        return thread(op) == thread(launch) and start(op) <= start(launch) and end(op) >= end(launch)

    def launching_op(launch):
        named = by_id.get(external_id(launch))
        if named is not None and encloses(named, launch):
            return named
        # Innermost: of the enclosing ops, the one that starts last; of
        # those starting together, the shortest; then the later in the file.
        best = None
        for k, op in enumerate(ops_of_thread.get(thread(launch), [])):
            if encloses(op, launch):
                key = (start(op), -end(op), k)
                if best is None or key >= best[0]:
                    best = (key, op)
        return best and best[1]

    total = linked = 0
    by_op = {}
    unlinked = {"launch_not_in_trace": 0, "launch_outside_ops": 0}
    pending = []
    own_ids_are_links = True
    for e in xs:
        if e.get("cat") not in GPU:
            continue
        dur = ns(e.get("dur", 0))
        total += dur
        launch = launches.get((e.get("args") or {}).get("correlation"))
        if launch is None:
            pending.append(e)
            continue
        op = launching_op(launch)
        if op is None:
            unlinked["launch_outside_ops"] += dur
            continue
        if external_id(e) is not None and external_id(e) != external_id(op):
            own_ids_are_links = False
        linked += dur
        by_op[op["name"]] = by_op.get(op["name"], 0) + dur
    for e in pending:
        dur = ns(e.get("dur", 0))
        op = by_id.get(external_id(e)) if own_ids_are_links else None
        if op is None:
            unlinked["launch_not_in_trace"] += dur
        else:
            linked += dur
            by_op[op["name"]] = by_op.get(op["name"], 0) + dur
    return {"gpu_ns": total, "linked_ns": linked, "unlinked_ns": unlinked, "by_op": dict(sorted(by_op.items()))}


def main():
    for path in sys.argv[1:]:
        out = path[: -len(".json.gz")] + ".launch.json"
        g = golden(path)
        with open(out, "w") as f:
            json.dump(g, f, indent=1, ensure_ascii=False)
            f.write("\n")
        share = g["linked_ns"] / g["gpu_ns"] * 100 if g["gpu_ns"] else 0
        print(f"{out}: {g['gpu_ns']} ns of GPU work, {share:.1f}% linked, {len(g['by_op'])} ops, unlinked {g['unlinked_ns']}")


if __name__ == "__main__":
    main()
