#!/usr/bin/env python3
"""Write XProf's own numbers for the XPlane fixtures to testdata/xplane/expected/.

    /work/venvs/xprof/bin/python tools/xplane/xprof_goldens.py [--tool NAME]... [FIXTURE...]

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
  kernel_stats        GPU traces (tf2_bert_8gpu, the jax_h200 traces, ROCm)
  input_pipeline_analyzer  all of the fixture's hosts in one call: its
                      per-step breakdown (table 1: one row per step, the
                      summary and conclusion in its "p" properties), read
                      by `rtfprof steps` and `advise`'s StepTimeChecker
  overview_page       TPU traces only (xla_tpu_inference): of XProf's
                      answer only the first table's duty cycle and idle
                      time properties (OVERVIEW_FIELDS), read by advise's
                      AcceleratorUtilizationChecker (XProf's device duty
                      cycle is the TPUs'; its GPU overview has none)
  memory_viewer       one call per host and XLA program (XProf takes one
                      program at a time: `module_name` is `<module>(<program
                      id>)`, as XProf names the `*.hlo_proto.pb` files it
                      extracts from the trace's /host:metadata plane), for
                      the traces that hold programs

xspace_to_tool_data returns a tuple (data, content_type); content_type is
'application/json' for these tools and data is JSON text (bytes or
str).  The golden file is that JSON parsed and written again with indent=1
(key order and every number kept as XProf wrote them), named

  expected/<fixture>.<tool>.json                  framework_op_stats, hlo_stats,
                                                  input_pipeline_analyzer,
                                                  overview_page (trimmed)
  expected/<fixture>.<host>.memory_profile.json   memory_profile
  expected/<fixture>.<host>.memory_viewer.json    memory_viewer

A memory_viewer golden is a JSON object {"<module>(<program id>)":
XProf's answer, or null where xspace_to_tool_data returned no data}, every
program of the trace, for the committed fixtures.  For the shared traces (not in the repository, and
their programs are mostly those of the fixtures cut from them) it is small
and derived: only the trace's main program, the first of XProf's own
module order (most heap simulator events, then by name), under "main",
and of XProf's answer only the fields rtfprof reads (MAIN_FIELDS; the
maxHeap entries without sourceInfo, indefiniteLifetimes as id and size).
In memory_viewer's `logicalBufferSpans`, a proto map, the keys are written
sorted (a map's JSON order is not the proto's).

`--tool NAME` (repeatable) runs only those tools, so that new goldens can be
added without rewriting the others.

`--heldout DIR` reads held-out JAX GPU traces instead, DIR/<name>/vm.xplane.pb
(tools/xplane/record_heldout.py records them), and writes their goldens to
DIR/expected/, never to the repository: the tests read them there when
RTFPROF_HELDOUT_JAX_GPU=DIR is set (tests/integration/common/mod.rs), with the rules
they hold the shared traces to.

Each tool is run twice, on two separate copies, and the two answers are
compared; the script stops if XProf ever answers differently for the same
input after the normalisations (memory_viewer's above, memory_profile's
below).

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
JAX_GPU_CUTS = ["jax_gpu_mlp", "jax_gpu_mlp_nocb", "jax_gpu_cnn", "jax_gpu_lstm", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_gpu_cond", "jax_gpu_cond_nocb"]
# JAX with TransformerEngine on 8 MI300X (AMD-AGI/TraceLens's test trace,
# copied whole: testdata/xplane/README.md): ROCm's host launches carry
# hlo_op and program_id too.
ROCM = ["rocm_te_fused_attn"]
HLO_FIXTURES = {"jax_jit", "xla_tpu_inference", *JAX_GPU, *JAX_GPU_CUTS, *ROCM}
KERNEL_FIXTURES = {"tf2_bert_8gpu", *JAX_GPU, *JAX_GPU_CUTS, *ROCM}
OVERVIEW_FIXTURES = {"xla_tpu_inference"}
# What the overview_page goldens keep: the first table's properties on the
# devices' duty cycle and idle time.
OVERVIEW_FIELDS = ["device_duty_cycle_percent", "device_duty_cycle_high_confidence_percent", "device_idle_time_percent"]


def heldout_fixtures(folder):
    """{name: [trace path]} of the held-out traces DIR/<name>/vm.xplane.pb,
    each treated as a shared JAX GPU trace."""
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "*", "vm.xplane.pb"))):
        name = os.path.basename(os.path.dirname(path))
        out[name] = [path]
        SHARED_FIXTURES[name] = path
        HLO_FIXTURES.add(name)
        KERNEL_FIXTURES.add(name)
    return out


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
    if tool == "overview_page":
        obj = {"p": {k: obj[0]["p"][k] for k in OVERVIEW_FIELDS if k in obj[0]["p"]}}
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


# What the shared traces' memory_viewer goldens keep of XProf's answer.
MAIN_FIELDS = [
    "moduleName", "entryComputationName", "peakHeapMib", "peakUnpaddedHeapMib", "peakHeapSizePosition",
    "heapSizes", "unpaddedHeapSizes", "hloInstructionNames", "maxHeap", "totalBufferAllocationMib",
    "indefiniteBufferAllocationMib", "entryComputationParametersMib", "maybeLiveOutMib", "nonReusableMib",
    "indefiniteLifetimes",
]


def memory_viewer(path):
    """{"<module>(<program id>)": XProf's memory_viewer answer (None where it
    fails)} for every XLA program of one host's trace, on a copy; {} when the
    trace holds none."""
    from xprof.convert import raw_to_tool_data
    with tempfile.TemporaryDirectory(prefix="xprof_golden_") as tmp:
        run = os.path.join(tmp, "plugins", "profile", "run0")
        os.makedirs(run)
        copy = os.path.join(run, os.path.basename(path))
        shutil.copyfile(path, copy)
        # Extracts every program's HloProto beside the trace.
        raw_to_tool_data.xspace_to_tool_names([copy])
        suffix = ".hlo_proto.pb"
        modules = sorted(f[: -len(suffix)] for f in os.listdir(run) if f.endswith(suffix) and f != "NO_MODULE" + suffix)
        out = {}
        for module in modules:
            data, content_type = raw_to_tool_data.xspace_to_tool_data(
                [copy], "memory_viewer", {"use_saved_result": False, "module_name": module})
            if data is None:
                out[module] = None
                continue
            if content_type != "application/json":
                sys.exit(f"xprof_goldens: memory_viewer answered {content_type!r}, not JSON")
            obj = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
            spans = obj.get("logicalBufferSpans")
            if spans is not None:
                obj["logicalBufferSpans"] = {k: spans[k] for k in sorted(spans, key=int)}
            out[module] = obj
    return out


def main_program(viewer):
    """The shared trace's main program, of XProf's answers for every program:
    the first in XProf's own module order (GetSortedModuleListByHeapTraceSize:
    most heap simulator events, then by name), only MAIN_FIELDS kept."""
    answered = {m: v for m, v in viewer.items() if v}
    if not answered:
        return None
    main = min(answered, key=lambda m: (-max(len(answered[m].get("heapSizes", [])) - 1, 0), m))
    kept = {k: answered[main][k] for k in MAIN_FIELDS if k in answered[main]}
    kept["maxHeap"] = [{k: v for k, v in o.items() if k != "sourceInfo"} for o in kept.get("maxHeap", [])]
    kept["indefiniteLifetimes"] = [{k: v for k, v in a.items() if k in ("id", "sizeMib")} for a in kept.get("indefiniteLifetimes", [])]
    return {"main": main, main: kept}


def write(name, obj):
    with open(os.path.join(EXPECTED, name), "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    import xprof  # noqa: F401  (fail early without it)
    from importlib.metadata import version
    global EXPECTED
    args = sys.argv[1:]
    found = fixtures
    if "--heldout" in args:
        at = args.index("--heldout")
        folder = os.path.abspath(args[at + 1])
        del args[at : at + 2]
        EXPECTED = os.path.join(folder, "expected")
        found = lambda: heldout_fixtures(folder)  # noqa: E731
    os.makedirs(EXPECTED, exist_ok=True)
    tools = set()
    while "--tool" in args:
        at = args.index("--tool")
        tools.add(args[at + 1])
        del args[at : at + 2]
    wanted = set(args)
    missing = []
    for name, paths in found().items():
        if wanted and name not in wanted:
            continue
        jobs = [(f"{name}.framework_op_stats.json", paths, "framework_op_stats")]
        for p in paths:
            host = os.path.basename(p)[: -len(".xplane.pb")]
            jobs.append((f"{name}.{host}.memory_profile.json", [p], "memory_profile"))
            jobs.append((f"{name}.{host}.memory_viewer.json", [p], "memory_viewer"))
        if name in HLO_FIXTURES:
            jobs.append((f"{name}.hlo_stats.json", paths, "hlo_stats"))
        if name in KERNEL_FIXTURES:
            jobs.append((f"{name}.kernel_stats.json", paths, "kernel_stats"))
        if name in OVERVIEW_FIXTURES:
            jobs.append((f"{name}.overview_page.json", paths, "overview_page"))
        jobs.append((f"{name}.input_pipeline_analyzer.json", paths, "input_pipeline_analyzer"))
        for out, ps, tool in jobs:
            if tools and tool not in tools:
                continue
            if tool == "memory_viewer":
                first, second = memory_viewer(ps[0]), memory_viewer(ps[0])
                if first != second:
                    sys.exit(f"xprof_goldens: memory_viewer on {name} differs between two runs")
                if not first:
                    continue  # no XLA programs in this trace
                if name in SHARED_FIXTURES:
                    first = main_program(first)
                write(out, first)
                print(os.path.join(EXPECTED, out))
                continue
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
            print(os.path.join(EXPECTED, out))
    with open(os.path.join(EXPECTED, "XPROF_VERSION"), "w") as f:
        f.write(f"xprof {version('xprof')}\n")
    if not wanted and not tools:
        with open(os.path.join(EXPECTED, "MISSING"), "w") as f:
            f.write("".join(m + "\n" for m in missing))


if __name__ == "__main__":
    main()
