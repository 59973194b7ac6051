#!/usr/bin/env python3
"""Write XProf's own numbers for the XPlane fixtures to testdata/xplane/expected/.

    /work/venvs/xprof/bin/python tools/xplane/xprof_goldens.py [FIXTURE...]

Needs a Python with the `xprof` package (XProf 2.24 was used; the version
goes to expected/XPROF_VERSION).  Run it after tools/xplane/gen_traces.py:
the traces hold real timings, so fixtures and goldens change together.

Fixtures: every directory testdata/xplane/<fixture>/plugins/profile/run0/
with its *.xplane.pb files, plus the shared traces
../shared/traces/{xla_tpu_inference,tf2_bert_8gpu}/run/host0.xplane.pb and
../shared/traces/jax_h200/*/vm.xplane.pb (read by path, never copied into the repository; skipped with a message
when absent).

For each fixture the trace files are COPIED into a fresh temporary
directory (XProf writes a cache, ALL_HOSTS.op_stats_v2.pb and *.SSTABLE,
beside the trace and answers later calls from it) and
`xprof.convert.raw_to_tool_data.xspace_to_tool_data(paths, tool,
{"use_saved_result": False})` is called:

  framework_op_stats  all of the fixture's hosts in one call
  memory_profile      one call per host (XProf takes one host at a time)
  hlo_stats           JAX/XLA fixtures only (jax_jit, xla_tpu_inference,
                      the jax_h200 traces)
  kernel_stats        GPU traces (tf2_bert_8gpu, the jax_h200 traces)
  input_pipeline_analyzer  all of the fixture's hosts in one call: its
                      per-step breakdown (table 1: one row per step, the
                      summary and conclusion in its "p" properties), read
                      by `rtfprof steps` and `advise`'s StepTimeChecker

xspace_to_tool_data returns a tuple (data, content_type); content_type is
'application/json' for these four tools and data is JSON text (bytes or
str).  The golden file is that JSON parsed and written again with indent=1
(key order and every number kept as XProf wrote them), named

  expected/<fixture>.<tool>.json                  framework_op_stats, hlo_stats,
                                                  input_pipeline_analyzer
  expected/<fixture>.<host>.memory_profile.json   memory_profile

Each tool is run twice, on two separate copies, and the two answers are
compared; the script stops if XProf ever answers differently for the same
input after the one normalisation below.

Normalisation (memory_profile only).  XProf lists the allocations active at
the peak as `activeAllocations` entries; an entry with numOccurrences N > 1
stands for N alike allocations and points (snapshotIndex) at ONE of them in
`memoryProfileSnapshots`, and which one changes from run to run (seen on
xla_tpu_inference: its address and timeOffsetPs differ between two calls).
In such a representative snapshot, `timeOffsetPs`, `aggregationStats` and
`activityMetadata.address` are replaced by the string
"<one of N alike allocations>".  And `memoryProfilePerAllocator` (a proto
map, whose JSON key order changes from one process to the next) is written
with its keys sorted.  Nothing else is changed.  When XProf returns no data
(data is None: the tool failed), no file is written and the fact is
listed in expected/MISSING.
"""
import glob
import json
import os
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = os.path.join(REPO, "testdata", "xplane")
EXPECTED = os.path.join(TESTDATA, "expected")
SHARED = os.path.join(os.path.dirname(REPO), "shared", "traces")
# name -> path under ../shared/traces
SHARED_FIXTURES = {
    "xla_tpu_inference": "xla_tpu_inference/run/host0.xplane.pb",
    "tf2_bert_8gpu": "tf2_bert_8gpu/run/host0.xplane.pb",
}
# JAX 0.11 on one H200 (README there): with and without command buffers.
JAX_GPU = ["jax_mlp", "jax_mlp_nocb", "flax_cnn", "flax_cnn_nocb", "jax_lstm", "jax_lstm_nocb", "jax_xfer"]
SHARED_FIXTURES.update({name: f"jax_h200/{name}/vm.xplane.pb" for name in JAX_GPU})
# Cut from those by tools/xplane/cut_jax_gpu.sh (committed fixtures).
JAX_GPU_CUTS = ["jax_gpu_mlp", "jax_gpu_mlp_nocb", "jax_gpu_cnn", "jax_gpu_lstm", "jax_gpu_lstm_nocb", "jax_gpu_xfer"]
HLO_FIXTURES = {"jax_jit", "xla_tpu_inference", *JAX_GPU, *JAX_GPU_CUTS}
KERNEL_FIXTURES = {"tf2_bert_8gpu", *JAX_GPU, *JAX_GPU_CUTS}


def fixtures():
    """{name: [trace paths]} of the committed fixtures and the shared traces."""
    out = {}
    for d in sorted(glob.glob(os.path.join(TESTDATA, "*", "plugins", "profile", "run0"))):
        name = os.path.relpath(d, TESTDATA).split(os.sep)[0]
        out[name] = sorted(glob.glob(os.path.join(d, "*.xplane.pb")))
    for name, rel in SHARED_FIXTURES.items():
        path = os.path.join(SHARED, rel)
        if os.path.exists(path):
            out[name] = [path]
        else:
            print(f"xprof_goldens: {path} absent, skipping {name}", file=sys.stderr)
    return out


def run_tool(paths, tool):
    """XProf's answer for `tool` on copies of `paths`, as parsed JSON (None on failure)."""
    from xprof.convert import raw_to_tool_data
    with tempfile.TemporaryDirectory(prefix="xprof_golden_") as tmp:
        run = os.path.join(tmp, "plugins", "profile", "run0")
        os.makedirs(run)
        copies = []
        for p in paths:
            dest = os.path.join(run, os.path.basename(p))
            shutil.copyfile(p, dest)
            copies.append(dest)
        data, content_type = raw_to_tool_data.xspace_to_tool_data(
            copies, tool, {"use_saved_result": False})
    if data is None:
        return None
    if content_type != "application/json":
        sys.exit(f"xprof_goldens: {tool} answered {content_type!r}, not JSON")
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    obj = json.loads(data)
    if tool == "memory_profile":
        obj = normalise_memory_profile(obj)
    return obj


def normalise_memory_profile(obj):
    if "memoryProfilePerAllocator" in obj:
        per_alloc = obj["memoryProfilePerAllocator"]
        obj["memoryProfilePerAllocator"] = {k: per_alloc[k] for k in sorted(per_alloc)}
    for alloc in obj.get("memoryProfilePerAllocator", {}).values():
        snaps = alloc.get("memoryProfileSnapshots", [])
        for active in alloc.get("activeAllocations", []):
            n = int(active.get("numOccurrences", "1"))
            idx = int(active.get("snapshotIndex", "-1"))
            if n > 1 and 0 <= idx < len(snaps):
                mark = f"<one of {n} alike allocations>"
                snap = snaps[idx]
                snap["timeOffsetPs"] = mark
                snap["aggregationStats"] = mark
                snap.setdefault("activityMetadata", {})["address"] = mark
    return obj


def write(name, obj):
    with open(os.path.join(EXPECTED, name), "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    import xprof  # noqa: F401  (fail early without it)
    from importlib.metadata import version
    os.makedirs(EXPECTED, exist_ok=True)
    wanted = set(sys.argv[1:])
    missing = []
    for name, paths in fixtures().items():
        if wanted and name not in wanted:
            continue
        jobs = [(f"{name}.framework_op_stats.json", paths, "framework_op_stats")]
        for p in paths:
            host = os.path.basename(p)[: -len(".xplane.pb")]
            jobs.append((f"{name}.{host}.memory_profile.json", [p], "memory_profile"))
        if name in HLO_FIXTURES:
            jobs.append((f"{name}.hlo_stats.json", paths, "hlo_stats"))
        if name in KERNEL_FIXTURES:
            jobs.append((f"{name}.kernel_stats.json", paths, "kernel_stats"))
        jobs.append((f"{name}.input_pipeline_analyzer.json", paths, "input_pipeline_analyzer"))
        for out, ps, tool in jobs:
            first = run_tool(ps, tool)
            second = run_tool(ps, tool)
            if first != second:
                sys.exit(f"xprof_goldens: {tool} on {name} differs between two runs")
            if first is None:
                missing.append(f"{out}: xspace_to_tool_data returned no data")
                if os.path.exists(os.path.join(EXPECTED, out)):
                    os.remove(os.path.join(EXPECTED, out))
                continue
            write(out, first)
            print(f"testdata/xplane/expected/{out}")
    with open(os.path.join(EXPECTED, "XPROF_VERSION"), "w") as f:
        f.write(f"xprof {version('xprof')}\n")
    if not wanted:
        with open(os.path.join(EXPECTED, "MISSING"), "w") as f:
            f.write("".join(m + "\n" for m in missing))


if __name__ == "__main__":
    main()
