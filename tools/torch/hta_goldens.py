#!/usr/bin/env python3
"""Writes Holistic Trace Analysis' (HTA 0.5.0) GPU time breakdowns of the
shared PyTorch GPU traces, of the fixtures cut from them
(testdata/pytorch/h200_*, by cut_trace.py), of the fixtures cut from
published traces (testdata/pytorch/published/, README.md there) and of the
GPU programs of testdata/pytorch/gpu (gen_gpu_traces.py), as goldens
for rtfprof's inputs::pytorch::breakdown (tests/integration/pytorch.rs).

    /work/venvs/hta/bin/python tools/torch/hta_goldens.py [SHARED_TRACES] [OUT_DIR]
    /work/venvs/hta/bin/python tools/torch/hta_goldens.py --fixture testdata/pytorch/published/NAME.pt.trace.json.gz ...

(venv: python3 -m venv /work/venvs/hta && /work/venvs/hta/bin/pip install
holistictraceanalysis==0.5.0; Python 3.11.7, pip resolved pandas 3.1.1 and
numpy 2.4.6). HTA 0.5.0 does not run on every trace under pandas 3 (it
writes indices past 2^15 into a column it downcast to int16: a TypeError),
so the goldens of the published fixtures named `*.json.gz`
(published.{hta_alexnet, hta_external_id_is_correlation, mi210_gpu_only,
mtia_training, sglang_rocm_graph, torch18_resnet50, torch19_resnet50,
vllm_cuda_graph}.hta.json) were written under pandas 2:
python3 -m venv /work/venvs/hta-pd2 && /work/venvs/hta-pd2/bin/pip install
holistictraceanalysis==0.5.0 'pandas<3' (pandas 2.3.3, numpy 2.4.6); the
pandas-3 venv gives the same numbers on these fixtures. The other goldens
are from the pandas-3 venv. A fixture HTA fails on is skipped with its
error (h100_launched_before_trace: HTA's own assertion that non-compute
time is not negative; tests/integration/pytorch.rs says why). SHARED_TRACES defaults to
../shared/traces/torch_h200 (skipped when absent), OUT_DIR to
testdata/pytorch/hta. With --fixture, only the goldens of the fixtures
named are written. A fixture testdata/pytorch/NAME.pt.trace.json.gz gets
OUT_DIR/NAME.hta.json, one in testdata/pytorch/published/ (gpu/) named
NAME.pt.trace.json.gz or NAME.json.gz gets OUT_DIR/published.NAME.hta.json
(gpu.NAME.hta.json). For each shared trace
NAME it writes OUT_DIR/shared.NAME.hta.json, derived from the shared trace
(which is not in the repository): TraceAnalysis(trace_dir).
get_temporal_breakdown() (one rank: idle, compute, non-compute and kernel
time, µs), get_idle_time_breakdown() (per stream: host_wait, kernel_wait,
other, µs) and get_cuda_kernel_launch_stats() (one row per launch and the
GPU event it launched: cpu_duration, gpu_duration, launch_delay, µs; kept
as the counts and sums HTA's plots show: short GPU kernels, runtime and
launch delay outliers), with HTA's default options.
"""

import json
import logging
import os
import sys
import tempfile

logging.disable(logging.WARNING)

from hta.trace_analysis import TraceAnalysis  # noqa: E402
from importlib.metadata import version  # noqa: E402

hta_version = version("HolisticTraceAnalysis")


def launch_summary(df, runtime_cutoff=50, launch_delay_cutoff=100):
    """The numbers behind HTA's three launch plots (its
    visualize_cuda_launch_kernel_info, default cutoffs), and the rows' sums
    and medians."""
    short = df[(df["cpu_duration"] <= runtime_cutoff) & (df["gpu_duration"] < df["cpu_duration"])]
    return {
        "rows": len(df),
        "short_gpu_kernels": len(short),
        "runtime_outliers": int((df["cpu_duration"] > runtime_cutoff).sum()),
        "launch_delay_outliers": int((df["launch_delay"] > launch_delay_cutoff).sum()),
        "cpu_duration_sum": float(df["cpu_duration"].sum()),
        "gpu_duration_sum": float(df["gpu_duration"].sum()),
        "launch_delay_sum": float(df["launch_delay"].sum()),
        # No rows (graph replays, GPU-only traces): no median (JSON null).
        "cpu_duration_median": float(df["cpu_duration"].median()) if len(df) else None,
        "gpu_duration_median": float(df["gpu_duration"].median()) if len(df) else None,
    }


def golden(trace, derived_from):
    """HTA's breakdowns of one trace file."""
    with tempfile.TemporaryDirectory() as tmp:
        # HTA reads every trace of a directory as a rank.
        name = os.path.basename(trace)
        os.symlink(os.path.abspath(trace), os.path.join(tmp, name))
        analysis = TraceAnalysis(trace_dir=tmp)
        # The trace's rank (HTA's per-rank analyses default to rank 0).
        rank = sorted(analysis.t.traces)[0]
        temporal = analysis.get_temporal_breakdown(visualize=False)
        idle, _ = analysis.get_idle_time_breakdown(ranks=[rank], visualize=False)
        launches = analysis.get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)[rank]
    return {
        "derived_from": derived_from,
        "hta": hta_version,
        "temporal_breakdown": [
            {k: r[k] for k in ("rank", "idle_time(us)", "compute_time(us)", "non_compute_time(us)", "kernel_time(us)")}
            for r in temporal.to_dict("records")
        ],
        "idle_time_breakdown": [
            {k: r[k] for k in ("rank", "stream", "idle_category", "idle_time")} for r in idle.to_dict("records")
        ],
        "cuda_kernel_launch_stats": launch_summary(launches),
    }


def write(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=lambda v: v.item())
        f.write("\n")
    print(path)


def fixture_golden(path, out_dir, fixtures):
    """Writes the golden of the fixture at `path` (under `fixtures`)."""
    rel = os.path.relpath(os.path.abspath(path), fixtures)
    stem = os.path.basename(path).removesuffix(".pt.trace.json.gz").removesuffix(".json.gz")
    folder = os.path.dirname(rel)
    prefix = f"{folder}." if folder in ("published", "gpu") else ""
    doc = golden(path, f"testdata/pytorch/{rel}")
    write(os.path.join(out_dir, f"{prefix}{stem}.hta.json"), doc)


def main():
    import argparse

    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shared", nargs="?", default=os.path.join(here, "../../../shared/traces/torch_h200"))
    ap.add_argument("out_dir", nargs="?", default=os.path.join(here, "../../testdata/pytorch/hta"))
    ap.add_argument("--fixture", action="append", default=[], help="write only this fixture's golden (repeatable)")
    args = ap.parse_args()
    shared, out_dir = args.shared, args.out_dir
    os.makedirs(out_dir, exist_ok=True)
    fixtures = os.path.normpath(os.path.join(here, "../../testdata/pytorch"))
    if args.fixture:
        for path in args.fixture:
            fixture_golden(path, out_dir, fixtures)
        return
    if os.path.isdir(shared):
        for name in sorted(os.listdir(shared)):
            d = os.path.join(shared, name)
            if not os.path.isdir(d):
                continue
            traces = [f for f in os.listdir(d) if f.endswith(".pt.trace.json.gz") or f.endswith(".pt.trace.json")]
            if len(traces) != 1:
                continue
            doc = golden(os.path.join(d, traces[0]), f"shared/traces/torch_h200/{name}/{traces[0]}")
            write(os.path.join(out_dir, f"shared.{name}.hta.json"), doc)
    else:
        print(f"skipped: {shared} is absent")
    # The GPU fixtures cut from the shared traces by cut_trace.py and from
    # published traces (in the repository, so that CI checks them).
    for name in sorted(os.listdir(fixtures)):
        if name.startswith("h200_") and name.endswith(".pt.trace.json.gz"):
            fixture_golden(os.path.join(fixtures, name), out_dir, fixtures)
    # ...and the programs recorded on a GPU by gen_gpu_traces.py
    for folder in ("published", "gpu"):
        d = os.path.join(fixtures, folder)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith(".json.gz"):
                try:
                    fixture_golden(os.path.join(d, name), out_dir, fixtures)
                except (AssertionError, TypeError) as e:
                    print(f"skipped: {folder}/{name}: HTA {hta_version} failed: {type(e).__name__} {e}")


if __name__ == "__main__":
    main()
