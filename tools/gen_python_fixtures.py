#!/usr/bin/env python3
"""Fixtures for the Python package's tests (python/tests), made with TensorFlow.

    /work/venvs/tf/bin/python tools/gen_python_fixtures.py

Needs a Python with TensorFlow (CPU is enough); CI never runs this, the
tests read only the files written here, into testdata/python/:

    options.json   {name: dict} of option dicts exactly as TensorFlow's
                   tf.compat.v1.profiler.ProfileOptionBuilder builds them:
                   its three presets, its default, and a builder chain for
                   each of its with_*/select/order_by/account_displayed_op_only
                   methods (file names in output options are relative, the
                   tests put them in a temporary directory).
    results.json.gz
                   gzip (mtime 0, so regenerating is byte-stable) of the JSON
                   {"tensorflow": version, "cases": [case]}: for each case,
                   what tf.profiler returns for a view of a fixture under
                   testdata/ with one option dict: case = {"name", "cmd",
                   "inputs" ({keyword: path relative to testdata/}),
                   "options" (a dict of options.json, output "none"),
                   "result"}. The result is TensorFlow's message
                   (GraphNodeProto for scope/graph, MultiGraphNodeProto for
                   op/code, as tf.profiler.profile parses it) as plain JSON:
                   every field, int64s as numbers, a TensorShapeProto as its
                   dimensions (null for an unknown rank), input_shapes keyed
                   by the input index as a string, tensor_value null when
                   unset.

The results come from tfprof's engine (`_pywrap_tfprof`, what
tf.compat.v1.profiler.profile and Profiler call) fed with the fixture files:
ProfilerFromFile for a profile, NewProfiler + AddStep for a GraphDef, run
metadata and op log, then Profile(cmd, options) with the options converted by
tf.profiler's own `_build_options`.
"""
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.profiler import tfprof_output_pb2  # noqa: E402
from tensorflow.python.profiler import model_analyzer  # noqa: E402
from tensorflow.python.util import _pywrap_tfprof as P  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "python"
Builder = tf.compat.v1.profiler.ProfileOptionBuilder


def option_dicts():
    """Every kind of dict ProfileOptionBuilder makes, by name."""
    B = Builder
    return {
        "preset.trainable_variables_parameter": B.trainable_variables_parameter(),
        "preset.float_operation": B.float_operation(),
        "preset.time_and_memory": B.time_and_memory(),
        "preset.time_and_memory.thresholds": B.time_and_memory(
            min_micros=2, min_bytes=0, min_accelerator_micros=0, min_cpu_micros=1,
            min_peak_bytes=64, min_residual_bytes=0, min_output_bytes=0),
        "builder.default": B().build(),
        "builder.with_max_depth": B().with_max_depth(3).build(),
        "builder.with_min_memory": B().with_min_memory(
            min_bytes=100, min_peak_bytes=10, min_residual_bytes=1, min_output_bytes=1).build(),
        "builder.with_min_execution_time": B().with_min_execution_time(
            min_micros=2, min_accelerator_micros=0, min_cpu_micros=1).build(),
        "builder.with_min_parameters": B().with_min_parameters(10).build(),
        "builder.with_min_occurrence": B().with_min_occurrence(2).build(),
        "builder.with_min_float_operations": B().with_min_float_operations(1000).build(),
        "builder.with_accounted_types": B().with_accounted_types(["MatMul", "Conv2D.*"]).build(),
        "builder.with_node_names": B().with_node_names(
            start_name_regexes=["gradients.*", "layer.*", "conv.*", "rnn.*"],
            show_name_regexes=[".*"], hide_name_regexes=[".*Initializer.*"],
            trim_name_regexes=[".*_grad"]).build(),
        "builder.account_displayed_op_only": B().with_node_names(
            show_name_regexes=[".*MatMul.*", ".*Conv2D.*", ".*add.*"]).account_displayed_op_only(True).build(),
        "builder.with_empty_output": B().with_empty_output().build(),
        "builder.with_stdout_output": B().with_stdout_output().build(),
        "builder.with_file_output": B().with_file_output("view.txt").build(),
        "builder.with_timeline_output": B().with_timeline_output("timeline.json").build(),
        "builder.with_pprof_output": B().with_pprof_output("profile.pb.gz").select(["micros"]).build(),
        "builder.order_by": B().order_by("bytes").build(),
        "builder.select": B().select(
            ["bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros", "accelerator_micros",
             "cpu_micros", "params", "float_ops", "occurrence", "device", "op_types",
             "input_shapes"]).build(),
        "builder.with_step": B().with_step(1).build(),
    }


# Inputs, as profile() keywords with paths relative to testdata/.
INPUTS = {
    "mlp": {"profile_path": "mlp/profile"},
    "cnn": {"graph_path": "cnn/graph.pbtxt",
            "run_meta_path": ["cnn/run_meta_0", "cnn/run_meta_1", "cnn/run_meta_2"],
            "op_log_path": "cnn/tfprof_log"},
    "gpu_synth": {"graph_path": "gpu_synth/graph.pbtxt",
                  "run_meta_path": ["gpu_synth/run_meta_0", "gpu_synth/run_meta_1", "gpu_synth/run_meta_2"],
                  "op_log_path": "gpu_synth/tfprof_log"},
    "while": {"profile_path": "while/profile"},
}

# (input, view, option dict name, overrides): the views of every fixture
# with the presets, and the options that change what the result holds.
CASES = (
    [(m, v, o, {}) for m in INPUTS for v in ("scope", "graph", "op", "code")
     for o in ("preset.time_and_memory", "preset.float_operation")]
    + [(m, v, "preset.trainable_variables_parameter", {}) for m in ("mlp", "cnn") for v in ("scope", "op", "code")]
    + [(m, v, "builder.select", {"max_depth": 6}) for m in ("mlp", "gpu_synth") for v in ("scope", "graph", "op", "code")]
    + [(m, v, o, {}) for m in ("cnn",) for v in ("scope", "graph", "op")
       for o in ("builder.account_displayed_op_only", "builder.with_node_names", "builder.with_accounted_types",
                 "builder.with_min_occurrence", "builder.order_by")]
    + [("while", v, "builder.with_step", {"max_depth": 8}) for v in ("scope", "graph", "op", "code")]
    + [("mlp", "scope", "builder.default", {"step": 2, "max_depth": 3}),
       ("mlp", "op", "builder.with_max_depth", {})]
)


def plain(msg):
    """A GraphNodeProto / MultiGraphNodeProto as plain JSON (see above)."""
    out = {}
    for field in msg.DESCRIPTOR.fields:
        value = getattr(msg, field.name)
        if field.name == "input_shapes":
            out[field.name] = {str(k): shape(v) for k, v in sorted(value.items())}
        elif field.name == "shapes":
            out[field.name] = [shape(s) for s in value]
        elif field.name == "tensor_value":
            out[field.name] = (
                {"dtype": value.dtype, "value_double": list(value.value_double),
                 "value_int64": list(value.value_int64), "value_str": list(value.value_str)}
                if msg.HasField("tensor_value") else None)
        elif field.name in ("children", "graph_nodes"):
            out[field.name] = [plain(c) for c in value]
        elif field.name == "devices":
            out[field.name] = list(value)
        else:
            out[field.name] = value
    return out


def shape(s):
    return None if s.unknown_rank else [d.size for d in s.dim]


def read_graph(path):
    gdef = graph_pb2.GraphDef()
    text_format.Parse(path.read_text(), gdef)
    return gdef.SerializeToString()


def run(cmd, inputs, options):
    if "profile_path" in inputs:
        P.ProfilerFromFile(str(TESTDATA / inputs["profile_path"]).encode())
    else:
        P.NewProfiler(read_graph(TESTDATA / inputs["graph_path"]),
                      (TESTDATA / inputs["op_log_path"]).read_bytes())
        for i, rm in enumerate(inputs["run_meta_path"]):
            P.AddStep(i, b"", (TESTDATA / rm).read_bytes(), b"")
    try:
        raw = P.Profile(cmd.encode(), model_analyzer._build_options(options).SerializeToString())
    finally:
        P.DeleteProfiler()
    message = (tfprof_output_pb2.GraphNodeProto() if cmd in ("scope", "graph")
               else tfprof_output_pb2.MultiGraphNodeProto())
    message.ParseFromString(raw)
    return plain(message)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    dicts = option_dicts()
    (OUT / "options.json").write_text(json.dumps(dicts, indent=1, sort_keys=True) + "\n")
    cases = []
    for model, cmd, name, overrides in CASES:
        options = dict(dicts[name], **overrides, output="none")
        case = "%s.%s.%s" % (model, cmd, name) + "".join(".%s=%s" % kv for kv in sorted(overrides.items()))
        cases.append({"name": case, "cmd": cmd, "inputs": INPUTS[model], "options": options,
                      "result": run(cmd, INPUTS[model], options)})
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    text = json.dumps({"tensorflow": tf.__version__, "cases": cases}, separators=(",", ":"), sort_keys=True)
    with open(OUT / "results.json.gz", "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode() + b"\n")
    print("%d option dicts, %d cases, results.json.gz %d KB" % (
        len(dicts), len(cases), (OUT / "results.json.gz").stat().st_size // 1024), file=sys.stderr)


if __name__ == "__main__":
    main()
