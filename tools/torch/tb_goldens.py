#!/usr/bin/env python3
"""Writes the step time breakdown of PyTorch's TensorBoard plugin
(torch-tb-profiler 0.4.3, its overview page) for the PyTorch traces of
testdata/pytorch and the shared H200 traces, as goldens for
`rtfprof steps --pytorch_path` (tests/integration/pytorch_steps.rs).

    /work/venvs/tbprof/bin/python tools/torch/tb_goldens.py [SHARED_TRACES] [OUT_DIR]

(venv: python3 -m venv /work/venvs/tbprof && /work/venvs/tbprof/bin/pip
install torch-tb-profiler==0.4.3). SHARED_TRACES defaults to
../shared/traces/torch_h200, OUT_DIR to testdata/pytorch/tb. For each trace
it writes OUT_DIR/NAME.tb.json: the steps the plugin finds (names, start and
end) and each step's costs per role (Kernel, Memcpy, Memset, Communication,
Runtime, DataLoader, CPU Exec, Other, Total), all in integer nanoseconds.

Two adaptations, both outside the plugin's logic:

- Times are given to the plugin as integer nanoseconds (the trace's
  microsecond text times 1000, exactly) instead of float microseconds, so
  that its interval arithmetic is exact; it never mixes times with
  constants, so nothing else changes.
- The plugin predates Kineto's `cuda_runtime` and `cuda_driver` categories
  (it knows `Runtime` only as category `runtime`), so on today's traces it
  sees no runtime call: its Runtime column is 0 and steps never extend to
  the GPU work they launched. Mapping both categories to its Runtime type
  restores what it does on the traces it was written for. The goldens are
  computed with the mapping; `unpatched` keeps the plugin's own steps and
  costs without it.

The plugin also leaves out of its overview the trailing steps whose kernels
it thinks were not all captured (a warning in its log); the goldens keep
every step it found, before that cut, in `steps`, and the names it kept in
`kept_steps`.
"""

import decimal
import gzip
import json
import logging
import os
import sys
from importlib.metadata import version

logging.disable(logging.WARNING)

from torch_tb_profiler.profiler import event_parser, trace  # noqa: E402
from torch_tb_profiler.profiler.data import RunProfileData  # noqa: E402

ROLES = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other", "total"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal, strict=False)
    for e in doc["traceEvents"]:
        for k in ("ts", "dur"):
            if k in e:
                e[k] = int(decimal.Decimal(e[k]) * 1000)
        # Other numbers as json reads them.
        e.update({k: float(v) for k, v in e.items() if isinstance(v, decimal.Decimal)})
        args = e.get("args")
        if isinstance(args, dict):
            args.update({k: float(v) for k, v in args.items() if isinstance(v, decimal.Decimal)})
    return doc


def breakdown(path):
    # The plugin shortens the step list in place when it drops tail steps
    # (its only use of `matched`): run its update once with every step
    # matched, to learn the steps before that cut, then as it does.
    found = {}
    original = event_parser.StepParser._update_steps_duration

    def before_cut(self, prev, steps_device, matched):
        saved = (list(self.steps), list(self.steps_names))
        original(self, prev, steps_device, [1] * len(matched))
        found["all_steps"], found["all_names"] = list(self.steps), list(self.steps_names)
        self.steps, self.steps_names = saved
        original(self, prev, steps_device, matched)

    event_parser.StepParser._update_steps_duration = before_cut
    try:
        profile = RunProfileData.from_json("worker", "span", load(path))
    finally:
        event_parser.StepParser._update_steps_duration = original
    return profile, found


def costs(profile):
    return [{role: int(round(c)) for role, c in zip(ROLES, step.costs)} for step in profile.steps_costs]


def golden(path, derived_from):
    saved = dict(trace.EventTypeMap)
    try:
        unpatched, _ = breakdown(path)
        trace.EventTypeMap["cuda_runtime"] = trace.EventTypes.RUNTIME
        trace.EventTypeMap["cuda_driver"] = trace.EventTypes.RUNTIME
        patched, found = breakdown(path)
    finally:
        trace.EventTypeMap.clear()
        trace.EventTypeMap.update(saved)
    return {
        "derived_from": derived_from,
        "torch_tb_profiler": version("torch-tb-profiler"),
        "kept_steps": patched.steps_names,
        "steps": [
            {"name": name, "start_ns": start, "end_ns": end}
            for name, (start, end) in zip(found.get("all_names", patched.steps_names), found.get("all_steps", []))
        ],
        "costs": costs(patched),
        "unpatched": {"steps": unpatched.steps_names, "costs": costs(unpatched)},
    }


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    shared = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "../../../shared/traces/torch_h200")
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "../../testdata/pytorch/tb")
    os.makedirs(out_dir, exist_ok=True)
    cases = []
    fixtures = os.path.join(here, "../../testdata/pytorch")
    for name in sorted(os.listdir(fixtures)):
        for suffix in (".pt.trace.json.gz", ".pt.trace.json"):
            if name.endswith(suffix):
                cases.append((os.path.join(fixtures, name), f"testdata/pytorch/{name}", name.removesuffix(suffix)))
    if os.path.isdir(shared):
        for sub in sorted(os.listdir(shared)):
            d = os.path.join(shared, sub)
            if os.path.isdir(d):
                for name in sorted(os.listdir(d)):
                    if name.endswith(".pt.trace.json.gz"):
                        cases.append((os.path.join(d, name), f"shared/traces/torch_h200/{sub}/{name}", f"shared.{sub}"))
    for path, derived_from, stem in cases:
        out = os.path.join(out_dir, f"{stem}.tb.json")
        with open(out, "w") as f:
            json.dump(golden(path, derived_from), f, indent=1)
            f.write("\n")
        print(out)


if __name__ == "__main__":
    main()
