#!/usr/bin/env python3
"""Records small CPU programs with torch.profiler and writes what PyTorch
itself says about them, as the oracle of rtfprof's PyTorch trace reader.

Run with a Python that has torch (only needed to regenerate; CI never runs
this):

    /work/venvs/torchref/bin/python tools/torch/gen_key_averages.py [OUT_DIR]

OUT_DIR defaults to testdata/pytorch (torch 2.11). Other torch versions
write into testdata/pytorch/versions/torch-X.Y.Z (the venv's
torch.__version__ without its +local part), e.g.

    /work/venvs/torch-2.0.0/bin/python tools/torch/gen_key_averages.py \
        testdata/pytorch/versions/torch-2.0.0

It runs with torch 2.0 on: where an older torch lacks something (see
OLD_NAMES and dump()), a row attribute is written under its older cuda_*
name or left out, and a table whose arguments table() does not take is left
out. tests/integration/pytorch.rs (OtherTorch) says what each version's key_averages()
does otherwise; it has no rule for 2.12 and 2.13 on the with_stack program.
PyPI's Linux wheels need their nvidia-* libraries to import even on a
machine without a GPU: tools/torch/make_torch_venv.sh X.Y.Z makes such a
venv (torch without triton, the nvidia-*/cuda-* pins of its METADATA).

For each program NAME it writes:

- NAME.pt.trace.json (or .json.gz): prof.export_chrome_trace();
- NAME.key_averages.json: {"torch": version, "cases": [...]}: for
  group_by_input_shape False and True, every row of prof.key_averages() with
  the attributes listed in FIELDS (floats as Python writes them, so they
  parse back to the same double; device_type as "CPU"/"CUDA", input_shapes
  as str()) and top_level (cpu_parent is None), one row a line;
- NAME.tables.json: prof.key_averages(...).table(**args) for each entry of
  TABLES, with its arguments.

The programs cover: [memory] rows (frees outside any op), a second thread,
nested same-named record_function spans (merged by _remove_dup_nodes),
aten ops whose only child has their name, autograd backward, a schedule with
ProfilerStep#N and .json.gz output, with_stack/with_modules (python_function
events, which key_averages ignores), and ops called with several input shapes
(group_by_input_shape), TensorList inputs included.
"""

import inspect
import json
import os
import sys
import threading

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

# Left out, as a trace read back from JSON cannot give them anything else:
# node_id (-1), is_legacy, is_async, is_remote (False), overload_name ("",
# without group_by_overload_name), stack ([] without group_by_stack_n) and
# flops (not written to the trace).
FIELDS = [
    "key", "count", "device_type", "is_user_annotation", "cpu_time_total", "self_cpu_time_total",
    "device_time_total", "self_device_time_total", "cpu_memory_usage",
    "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage",
    "cpu_time", "device_time", "input_shapes",
]

# table() arguments: (group_by_input_shape values, args).
TABLES = [
    ((False, True), {}),
    ((False,), {"sort_by": "self_cpu_time_total"}),
    ((False,), {"sort_by": "cpu_time_total", "row_limit": 5}),
    ((True,), {"sort_by": "count", "row_limit": 7, "max_name_column_width": 20}),
    ((False,), {"sort_by": "cpu_memory_usage", "row_limit": 6, "header": "memory first", "time_unit": "ms"}),
    ((False,), {"sort_by": "self_cpu_memory_usage", "row_limit": 6, "top_level_events_only": True, "time_unit": "us"}),
    ((True,), {"sort_by": "cpu_time", "row_limit": 6, "max_shapes_column_width": 12, "time_unit": "s"}),
]


# Older torch names some attributes otherwise: cuda_* before device_* (2.0
# to 2.3). Such a field is written under the name torch had; a field torch
# lacks (is_user_annotation before 2.5) is left out of the row.
OLD_NAMES = {f: f.replace("device_", "cuda_") for f in FIELDS if "device_" in f and f != "device_type"}


def row(r):
    out = {}
    for f in FIELDS:
        if not hasattr(r, f):
            if f not in OLD_NAMES or not hasattr(r, OLD_NAMES[f]):
                continue
            f = OLD_NAMES[f]
        v = getattr(r, f)
        if f == "device_type":
            v = str(v).split(".")[-1]
        elif f == "input_shapes":
            v = str(v)
        out[f] = v
    # Whether the row's first event has no CPU parent: the rows
    # table(top_level_events_only=True) keeps. (The torch 2.11 fixtures in
    # testdata/pytorch predate it.)
    out["top_level"] = r.cpu_parent is None
    return out


def dump(prof, name, out_dir):
    cases, tables = [], []
    for by_shape in (False, True):
        ka = prof.key_averages(group_by_input_shape=by_shape)
        cases.append({"group_by_input_shape": by_shape, "rows": [row(r) for r in ka]})
        for modes, args in TABLES:
            # table() of torch before 2.9 has no time_unit: that table is left out.
            if by_shape in modes and set(args) <= set(inspect.signature(ka.table).parameters):
                tables.append({"group_by_input_shape": by_shape, "args": args, "text": ka.table(**args)})
    with open(os.path.join(out_dir, f"{name}.key_averages.json"), "w") as f:
        # one row a line: small, and diffs stay readable
        f.write('{"torch": %s, "cases": [\n' % json.dumps(torch.__version__))
        for i, case in enumerate(cases):
            f.write('{"group_by_input_shape": %s, "rows": [\n' % json.dumps(case["group_by_input_shape"]))
            f.write(",\n".join(json.dumps(r, separators=(",", ":")) for r in case["rows"]))
            f.write("\n]}%s\n" % ("," if i + 1 < len(cases) else ""))
        f.write("]}\n")
    with open(os.path.join(out_dir, f"{name}.tables.json"), "w") as f:
        json.dump({"torch": torch.__version__, "tables": tables}, f, indent=0)
        f.write("\n")


def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def threads_and_memory(out_dir):
    """No schedule; frees outside any op become [memory] rows; a second
    thread; record_function("outer") directly inside another "outer"."""
    model, x = mlp(), torch.randn(8, 16)

    def other_thread():
        with record_function("worker"):
            a = torch.randn(20, 20)
            b = a @ a
            del a, b

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as p:
        t = torch.ones(100)
        del t
        with record_function("outer"):
            with record_function("outer"):
                y = model(x).relu().sum()
                y.backward()
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        z = [torch.zeros(10) for _ in range(3)]
        del z
    path = os.path.join(out_dir, "threads_memory.pt.trace.json")
    p.export_chrome_trace(path)
    dump(p, "threads_memory", out_dir)


def schedule_steps(out_dir):
    """A schedule: ProfilerStep#N spans, with_stack and with_modules, SGD, a .json.gz trace
    written by on_trace_ready (as tensorboard_trace_handler does)."""
    model, x = mlp(), torch.randn(8, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def ready(prof):
        prof.export_chrome_trace(os.path.join(out_dir, "schedule.pt.trace.json.gz"))
        dump(prof, "schedule", out_dir)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 with_stack=True, with_modules=True, schedule=schedule(wait=1, warmup=1, active=2), on_trace_ready=ready) as p:
        for _ in range(4):
            with record_function("forward"):
                loss = model(x).pow(2).mean()
            with record_function("backward"):
                loss.backward()
            with record_function("optimizer"):
                opt.step()
                opt.zero_grad()
            p.step()


def shapes_and_merges(out_dir):
    """Ops called with several input shapes (group_by_input_shape), TensorList
    inputs (cat, stack), a conv net's backward, ops whose only child has their
    name (aten::div -> aten::div) and a chain of three same-named spans."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as p:
        for n in (1, 2):
            img = torch.randn(n, 3, 8, 8)
            out = conv(img).flatten(1)
            both = torch.stack([torch.cat([out, out], dim=1), out.repeat(1, 2)])
            (both / 3).mean()
        loss = conv(torch.randn(1, 3, 5, 5, requires_grad=True)).sum()
        loss.backward()
        with record_function("same"):
            with record_function("same"):
                with record_function("same"):
                    torch.ones(4).div(2)
            torch.zeros(2)
    p.export_chrome_trace(os.path.join(out_dir, "shapes_merges.pt.trace.json"))
    dump(p, "shapes_merges", out_dir)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../testdata/pytorch")
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    threads_and_memory(out_dir)
    schedule_steps(out_dir)
    shapes_and_merges(out_dir)


if __name__ == "__main__":
    main()
