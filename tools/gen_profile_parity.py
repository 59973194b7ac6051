#!/usr/bin/env python3
"""What TensorFlow's own Python `tf.compat.v1.profiler.profile(...)` returns
for the GraphDef fixtures: the expected trees of rtfprof.profile's
`default_op_log=True` (python/tests/test_profile_parity.py).

    /work/venvs/tf/bin/python tools/gen_profile_parity.py

Needs a Python with TensorFlow (CPU); CI never runs this. Unlike
tools/gen_python_fixtures.py, which feeds tfprof's engine the files as the
tfprof command line does, this calls the Python function users call:

    graph = tf.Graph(); with graph.as_default(): tf.import_graph_def(graph_def, name="")
    tf.compat.v1.profiler.profile(graph, run_meta=run_meta, op_log=op_log, cmd=cmd, options=options)

which first merges a default op log into the one given
(`tfprof_logger.merge_default_with_oplog`): float ops from the flops
statistics TensorFlow registers, for every node whose shapes are known once
the run metadata's output shapes fill the graph's, where the op log has
none. A fresh graph is imported for every call (filling shapes changes it).

Cases: models cnn and mlp (graph.pb, run_meta_0, and three op logs: the
fixture's `tfprof_log`; none; and that op log with every float_ops zeroed,
as an op log written before the batch size was known would be, written
here to testdata/python/<model>.tfprof_log.no_flops), each with
ProfileOptionBuilder's time_and_memory, trainable_variables_parameter and
float_operation presets and a builder with name filters and
account_displayed_op_only, for the scope, graph and op views; output
"none". The results go to testdata/python/profile_parity.json.gz (gzip with
mtime 0): {"tensorflow": version, "cases": [{"name", "cmd", "inputs"
(profile() keywords, paths relative to testdata/), "options", "result"}]},
each result the returned message as plain JSON, as gen_python_fixtures.py
writes it.
"""
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.profiler import tfprof_log_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_python_fixtures import plain  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "python"
Builder = tf.compat.v1.profiler.ProfileOptionBuilder


def option_sets():
    return {
        "time_and_memory": Builder.time_and_memory(),
        "trainable_variables_parameter": Builder.trainable_variables_parameter(),
        "float_operation": Builder.float_operation(),
        "custom": Builder(Builder.float_operation())
        .with_node_names(start_name_regexes=[".*"], show_name_regexes=[".*(Conv2D|MatMul|add|Relu).*"],
                         hide_name_regexes=[".*Initializer.*"])
        .select(["float_ops", "micros", "bytes", "occurrence"])
        .account_displayed_op_only(True)
        .build(),
    }


def op_logs(model):
    """{variant: path relative to testdata/ or None}; writes the stripped one."""
    source = TESTDATA / model / "tfprof_log"
    stripped = tfprof_log_pb2.OpLogProto()
    stripped.ParseFromString(source.read_bytes())
    for entry in stripped.log_entries:
        entry.float_ops = 0
    target = OUT / (model + ".tfprof_log.no_flops")
    target.write_bytes(stripped.SerializeToString(deterministic=True))
    return {"op_log": "%s/tfprof_log" % model, "no_op_log": None, "op_log_no_flops": str(target.relative_to(TESTDATA))}


def profile(model, cmd, op_log_path, options):
    graph_def = graph_pb2.GraphDef()
    graph_def.ParseFromString((TESTDATA / model / "graph.pb").read_bytes())
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(graph_def, name="")
    run_meta = config_pb2.RunMetadata()
    run_meta.ParseFromString((TESTDATA / model / "run_meta_0").read_bytes())
    op_log = None
    if op_log_path:
        op_log = tfprof_log_pb2.OpLogProto()
        op_log.ParseFromString((TESTDATA / op_log_path).read_bytes())
    return plain(tf.compat.v1.profiler.profile(graph, run_meta=run_meta, op_log=op_log, cmd=cmd, options=options))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    cases = []
    for model in ("cnn", "mlp"):
        for variant, op_log_path in op_logs(model).items():
            for name, options in option_sets().items():
                options = dict(options, output="none")
                for cmd in ("scope", "graph", "op"):
                    inputs = {"graph_path": "%s/graph.pb" % model, "run_meta_path": "%s/run_meta_0" % model}
                    if op_log_path:
                        inputs["op_log_path"] = op_log_path
                    cases.append({"name": "%s.%s.%s.%s" % (model, variant, name, cmd), "cmd": cmd, "inputs": inputs,
                                  "options": options, "result": profile(model, cmd, op_log_path, options)})
    text = json.dumps({"tensorflow": tf.__version__, "cases": cases}, separators=(",", ":"), sort_keys=True)
    path = OUT / "profile_parity.json.gz"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode() + b"\n")
    print("%d cases, %s %d KB" % (len(cases), path.relative_to(ROOT), path.stat().st_size // 1024), file=sys.stderr)


if __name__ == "__main__":
    main()
