#!/usr/bin/env python3
"""Build rtfprof's test fixtures and golden outputs with real TensorFlow.

    /work/tfvenv/bin/python tools/gen_golden.py          # everything (~1-2 min)
    /work/tfvenv/bin/python tools/gen_golden.py --golden-only
                                   # keep testdata/<model>/, redo testdata/golden/

Needs a Python with TensorFlow (CPU is enough); TensorFlow is never a
dependency of the repository or of CI, which only read the files written here.

Part 1 (fixtures).  Small TF1-style models are built in graph mode
(`tf.compat.v1`, eager disabled, control flow v1), run for two warm-up steps
and then for three steps traced with FULL_TRACE in a session with one inter-
and one intra-op thread.  For each model, testdata/<model>/ gets:

    graph.pbtxt   GraphDef (as_graph_def(add_shapes=True)) in text format
    graph.pb      the same GraphDef, binary
    run_meta_0..2 binary RunMetadata of the three traced steps
    tfprof_log    binary OpLogProto as tfprof's Python logger builds it
                  (tfprof_logger.merge_default_with_oplog(graph, run_meta=
                  run_meta_0, add_trace=True), i.e. what
                  tf.compat.v1.profiler.write_op_log writes): float_ops,
                  `_trainable_variables` types and Python code traces.  File
                  names in the traces are made relative (TensorFlow's own
                  files relative to site-packages, ours relative to the repo
                  root) so that they do not depend on the machine.
    profile       binary ProfileProto of the three steps, made by the engine
                  (`_pywrap_tfprof`: NewProfiler(graph, tfprof_log),
                  AddStep(i, run_meta_i), SerializeToString()), which is what
                  tf.compat.v1.profiler.Profiler(graph).add_step(...) +
                  serialize_to_string() do, but fed with exactly the files
                  above (same op log, relative paths).

Models: mlp (resource variables, GradientDescent), cnn (VariableV2,
Conv2D/BiasAdd/Relu/MaxPool, Momentum), while (tf.compat.v1.while_loop RNN,
Adam) and gpu_synth, a SYNTHETIC input derived from cnn's real trace (see
make_gpu_synth) so that the engine's accelerator code paths get exercised on
a machine without a GPU.  gpu_synth also has run_meta_nostream (its step 0
without the stream devices) to trigger the "misses accelerator stream" note.

TensorFlow is run with TF_ENABLE_ONEDNN_OPTS=0 (plain Eigen kernels, classic
op names) and with Grappler's remapper off (so Conv2D+BiasAdd+Relu and
MatMul+BiasAdd stay separate nodes that match the GraphDef).  Timings in the
traces are real and change from one run to the next, so the fixtures and
the golden files must always be regenerated together (this script does).

Part 2 (golden outputs).  The option sets in the CASES tables below are run
through TensorFlow's real tfprof engine (`_pywrap_tfprof`, the code behind
the `profiler` CLI) and testdata/golden/ gets:

    cases.txt          one case a line: `<case_name> <view> <flags...>`,
                       flags as rtfprof's CLI takes them, paths relative to
                       testdata/; `#` lines are comments
    <case>.out         exact stdout of `profiler <view> <flags...>`
    <case>.file        for cases with --output=file:outfile=NAME: the file
    <case>.err         engine stderr (C level) when not empty once
                       TensorFlow's log lines are removed
    TF_VERSION         the TensorFlow version used

stdout of the CLI (tensorflow/core/profiler/profiler.cc) is reproduced as:
"Reading Files...\\n", then without --profile_path "Try to use a single
--profile_path instead of graph_path,op_log_path,run_meta_path\\n" and
"run graph coverage: %.2f\\n" after each run_meta file, then the view text.
The engine is always asked to write the view to a temporary file
(output=file:outfile=...), which holds exactly what it prints to stdout.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

# Must be set before TensorFlow is imported.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
GOLDEN = TESTDATA / "golden"

REAL_MODELS = ["mlp", "cnn", "while"]
MODELS = REAL_MODELS + ["gpu_synth"]
N_STEPS = 3
N_WARMUP = 2

GPU_DEVICE = "/job:localhost/replica:0/task:0/device:GPU:0"
GPU_STREAM_ALL = "/device:GPU:0/stream:all"
GPU_STREAM_7 = "/device:GPU:0/stream:7"
GPU_COMPUTE_OPS = {
    "Conv2D", "MatMul", "BiasAdd", "Relu", "MaxPool",
    "Conv2DBackpropInput", "Conv2DBackpropFilter", "BiasAddGrad",
    "ReluGrad", "MaxPoolGrad",
}

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.framework import step_stats_pb2  # noqa: E402
from tensorflow.core.profiler import tfprof_log_pb2  # noqa: E402
from tensorflow.core.profiler import tfprof_options_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2  # noqa: E402
from tensorflow.core.protobuf import rewriter_config_pb2  # noqa: E402
from tensorflow.python.profiler import tfprof_logger  # noqa: E402
from tensorflow.python.util import _pywrap_tfprof as P  # noqa: E402

tf1 = tf.compat.v1
SITE_PACKAGES = str(Path(tf.__file__).resolve().parent.parent)


# --------------------------------------------------------------------------
# Part 1: models and fixtures
# --------------------------------------------------------------------------

def build_mlp():
    """MLP 32 -> 64 -> 64 -> 10, resource variables, GradientDescent."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(1)
        x = tf1.placeholder(tf.float32, [8, 32], name="x")
        y = tf1.placeholder(tf.float32, [8, 10], name="y")
        h = x
        dims = [(32, 64), (64, 64), (64, 10)]
        for i, (a, b) in enumerate(dims):
            with tf1.variable_scope("layer%d" % (i + 1)):
                w = tf1.get_variable("weights", [a, b], use_resource=True)
                bias = tf1.get_variable(
                    "biases", [b], initializer=tf1.zeros_initializer(),
                    use_resource=True)
                h = tf.matmul(h, w) + bias
                if i < len(dims) - 1:
                    h = tf.nn.relu(h)
        with tf1.name_scope("loss"):
            loss = tf.reduce_mean(
                tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=h))
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(8, 32).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[np.arange(8) % 10]}
    return g, train, init, feed


def build_cnn(batch=4):
    """Two conv layers + dense, classic VariableV2 variables, Momentum."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(2)
        x = tf1.placeholder(tf.float32, [batch, 16, 16, 3], name="images")
        y = tf1.placeholder(tf.float32, [batch, 10], name="labels")
        h = x
        for i, (cin, cout) in enumerate([(3, 8), (8, 16)]):
            with tf1.variable_scope("conv%d" % (i + 1)):
                k = tf1.get_variable("kernel", [3, 3, cin, cout],
                                     use_resource=False)
                b = tf1.get_variable("bias", [cout],
                                     initializer=tf1.zeros_initializer(),
                                     use_resource=False)
                h = tf.nn.conv2d(h, k, strides=[1, 1, 1, 1], padding="SAME")
                h = tf.nn.bias_add(h, b)
                h = tf.nn.relu(h)
                h = tf.nn.max_pool2d(h, ksize=2, strides=2, padding="VALID")
        with tf1.variable_scope("dense"):
            h = tf.reshape(h, [batch, 4 * 4 * 16])
            w = tf1.get_variable("weights", [256, 10], use_resource=False)
            b = tf1.get_variable("bias", [10],
                                 initializer=tf1.zeros_initializer(),
                                 use_resource=False)
            logits = tf.nn.bias_add(tf.matmul(h, w), b)
        with tf1.name_scope("loss"):
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                labels=y, logits=logits))
        train = tf1.train.MomentumOptimizer(0.01, 0.9).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(1)
    feed = {x: rng.rand(batch, 16, 16, 3).astype(np.float32),
            y: np.eye(10, dtype=np.float32)[np.arange(batch) % 10]}
    return g, train, init, feed


def build_while():
    """RNN-ish tf.compat.v1.while_loop (5 x MatMul+Tanh), Adam."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(3)
        seq = tf1.placeholder(tf.float32, [5, 4, 8], name="seq")
        target = tf1.placeholder(tf.float32, [4, 3], name="target")
        with tf1.variable_scope("rnn"):
            w_x = tf1.get_variable("w_x", [8, 16])
            w_h = tf1.get_variable("w_h", [16, 16])
            b = tf1.get_variable("b", [16],
                                 initializer=tf1.zeros_initializer())
            h0 = tf1.get_variable("state", [4, 16],
                                  initializer=tf1.zeros_initializer())

            def cond(i, h):
                return i < 5

            def body(i, h):
                x_t = tf.gather(seq, i)
                h = tf.tanh(tf.matmul(x_t, w_x) + tf.matmul(h, w_h) + b)
                return i + 1, h

            _, h_last = tf1.while_loop(cond, body, [tf.constant(0), h0],
                                       name="loop")
        with tf1.variable_scope("out"):
            w = tf1.get_variable("weights", [16, 3])
            pred = tf.matmul(h_last, w)
        with tf1.name_scope("loss"):
            loss = tf.reduce_mean(tf.square(pred - target))
        train = tf1.train.AdamOptimizer(0.01).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(2)
    feed = {seq: rng.rand(5, 4, 8).astype(np.float32),
            target: rng.rand(4, 3).astype(np.float32)}
    return g, train, init, feed


def build_matmuls():
    """BatchMatMulV2 (in TF's flops registry) and Einsum (not in it), for
    the FLOPs-estimation tests."""
    g = tf.Graph()
    with g.as_default():
        a = tf1.placeholder(tf.float32, [3, 4, 5], name="a")
        b = tf1.placeholder(tf.float32, [3, 5, 6], name="b")
        c = tf.matmul(a, b, name="batch_matmul")
        d = tf.matmul(a, b, adjoint_a=False, name="batch_matmul_2")
        e = tf.einsum("bij,bjk->bik", a, b, name="einsum_bmm")
        f = tf.einsum("bik->bk", e, name="einsum_sum")
        w = tf1.get_variable("scale", [6], use_resource=False)
        out = tf.add_n([c, d, e], name="total") * w + tf.reduce_sum(f)
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(3)
    feed = {a: rng.rand(3, 4, 5).astype(np.float32),
            b: rng.rand(3, 5, 6).astype(np.float32)}
    return g, out, init, feed


def build_names():
    """Names whose bytes sort on both sides of '/' ('-' and '.' below it,
    '0', 'A', '>', '_' and 'b' above), a node that is also a scope (the
    variable `a` and its `a/read`), and scopes that come back after others
    in graph order: the order of siblings in the scope view."""
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [2, 2], name="x")
        a = tf1.get_variable("a", [2, 2], use_resource=False)
        outs = [tf.matmul(x, a, name=name) for name in [
            "a-b/m", "a.b/m", "a_b/m", "a>b/m", "a0/m", "A/m", "a/m", "ab/m",
            "a-/m", "a./m", "a-b/m-1", "a-b.c/m", "a-b/c/m", "a.b/m.1"]]
        out = tf.add_n(outs, name="a-b/sum")
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(4)
    return g, out, init, {x: rng.rand(2, 2).astype(np.float32)}


BUILDERS = {"mlp": build_mlp, "cnn": build_cnn, "while": build_while,
            "cnn_b8": lambda: build_cnn(batch=8), "matmuls": build_matmuls,
            "names": build_names}
# Fixtures outside MODELS' per-view cases: cnn at batch 8 is the other side
# of the diff tests (two real profiles of one model that differ), matmuls
# feeds the FLOPs tests, names has three cases of its own (all_cases).
EXTRA_FIXTURES = ["cnn_b8", "matmuls", "names"]


def session_config():
    cfg = tf1.ConfigProto(inter_op_parallelism_threads=1,
                          intra_op_parallelism_threads=1)
    # Keep Conv2D/BiasAdd/Relu and MatMul/BiasAdd as separate kernels.
    cfg.graph_options.rewrite_options.remapping = (
        rewriter_config_pb2.RewriterConfig.OFF)
    return cfg


def relative_path(s):
    """Machine-independent file names for code traces."""
    for prefix in (SITE_PACKAGES + os.sep, str(ROOT) + os.sep):
        if s.startswith(prefix):
            return s[len(prefix):]
    return s


def make_op_log(graph, run_meta):
    op_log = tfprof_logger.merge_default_with_oplog(
        graph, run_meta=run_meta, add_trace=True, add_trainable_var=True)
    for k in list(op_log.id_to_string.keys()):
        op_log.id_to_string[k] = relative_path(op_log.id_to_string[k])
    # Sanity: it is an OpLogProto with float_ops, types and code traces.
    assert any(e.float_ops for e in op_log.log_entries)
    assert any("_trainable_variables" in e.types for e in op_log.log_entries)
    assert any(e.code_def.traces for e in op_log.log_entries)
    return op_log


def engine_profile(graph_bytes, op_log_bytes, run_metas):
    """ProfileProto made by the engine from exactly these inputs."""
    P.NewProfiler(graph_bytes, op_log_bytes)
    try:
        for i, rm in enumerate(run_metas):
            P.AddStep(i, b"", rm, b"")
        return P.SerializeToString()
    finally:
        P.DeleteProfiler()


def write_fixture(model, graph_def, run_metas, op_log_bytes, extra=None):
    d = TESTDATA / model
    d.mkdir(parents=True, exist_ok=True)
    (d / "graph.pbtxt").write_text(text_format.MessageToString(graph_def))
    (d / "graph.pb").write_bytes(graph_def.SerializeToString())
    rm_bytes = [rm.SerializeToString() for rm in run_metas]
    for i, b in enumerate(rm_bytes):
        (d / ("run_meta_%d" % i)).write_bytes(b)
    (d / "tfprof_log").write_bytes(op_log_bytes)
    profile = engine_profile(graph_def.SerializeToString(), op_log_bytes,
                             rm_bytes)
    check = tfprof_log_pb2.ProfileProto()
    check.ParseFromString(profile)
    assert list(check.steps) == list(range(len(rm_bytes))) and check.has_trace
    (d / "profile").write_bytes(profile)
    for name, data in (extra or {}).items():
        (d / name).write_bytes(data)


def trace_model(model):
    graph, train, init, feed = BUILDERS[model]()
    run_metas = []
    with tf1.Session(graph=graph, config=session_config()) as sess:
        sess.run(init)
        for _ in range(N_WARMUP):
            sess.run(train, feed)
        for _ in range(N_STEPS):
            rm = tf1.RunMetadata()
            sess.run(train, feed,
                     options=tf1.RunOptions(
                         trace_level=tf1.RunOptions.FULL_TRACE),
                     run_metadata=rm)
            assert rm.step_stats.dev_stats, "no step stats for " + model
            run_metas.append(rm)
    graph_def = graph.as_graph_def(add_shapes=True)
    op_log = make_op_log(graph, run_metas[0])
    write_fixture(model, graph_def, run_metas, op_log.SerializeToString())
    return graph_def, run_metas, op_log


# Batches large enough that steps last milliseconds and overlap in time.
JOBS = {"worker0": 64, "worker1": 32}


def trace_concurrent_jobs():
    """Two jobs traced at the same time, as two workers would be:
    testdata/jobs/worker0 and worker1, the cnn at two batch sizes (the same
    node and device names, as replicas have). TensorFlow allows one
    tracing session per process, so each job is its own process; both start
    tracing at the same wall-clock instant, so their RunMetadata share one
    clock and their steps overlap."""
    import subprocess
    shutil.rmtree(TESTDATA / "jobs", ignore_errors=True)
    start_at = time.time() + 15  # after both processes have imported TF
    procs = [subprocess.Popen([sys.executable, __file__, "--job-worker", job,
                               str(batch), "%.3f" % start_at])
             for job, batch in JOBS.items()]
    for p in procs:
        assert p.wait() == 0, "job worker failed"


def trace_job_worker(job, batch, start_at):
    tf1.disable_eager_execution()
    tf1.disable_control_flow_v2()
    graph, train, init, feed = build_cnn(batch=batch)
    run_metas = []
    with tf1.Session(graph=graph, config=session_config()) as sess:
        sess.run(init)
        for _ in range(N_WARMUP):
            sess.run(train, feed)
        time.sleep(max(0.0, start_at - time.time()))
        for _ in range(N_STEPS):
            rm = tf1.RunMetadata()
            sess.run(train, feed, options=tf1.RunOptions(
                trace_level=tf1.RunOptions.FULL_TRACE), run_metadata=rm)
            run_metas.append(rm)
    d = TESTDATA / "jobs" / job
    d.mkdir(parents=True)
    (d / "graph.pb").write_bytes(
        graph.as_graph_def(add_shapes=True).SerializeToString())
    for i, rm in enumerate(run_metas):
        (d / ("run_meta_%d" % i)).write_bytes(rm.SerializeToString())


def is_gpu_compute_op(op):
    return op in GPU_COMPUTE_OPS or op.startswith("Apply")


def make_gpu_synth(cnn_graph_def, cnn_run_metas, cnn_op_log):
    """SYNTHETIC accelerator input, derived from cnn's real trace.

    There is no GPU here, so this input is made by a fixed, deterministic
    rewrite of the cnn fixture; only the inputs are synthetic, every expected
    output is still produced by tfprof itself.  The rewrite:
      * graph: each node whose op is a compute op (Conv2D, MatMul, BiasAdd,
        Relu, MaxPool, their gradients, Apply*) gets device GPU_DEVICE;
      * each RunMetadata: the node stats of those nodes move from the CPU
        device to a new dev_stats GPU_DEVICE (same order), with allocator
        name "cpu" renamed "GPU_0_bfc" (memory and output allocations);
      * two stream devices are added, GPU_STREAM_ALL and GPU_STREAM_7, each
        with, for each such node, a NodeExecStats named "<name>:<op>",
        all_start_micros = original start + 3, op_end_rel_micros =
        all_end_rel_micros = max(1, original op_end_rel_micros // 2), no
        memory;
      * GPU_STREAM_ALL also gets a "MEMCPYHtoD" stat, and GPU_DEVICE a stat
        for "_retval_extra_0_0", a name that is not in the graph.
    run_meta_nostream is the rewritten step 0 without the stream devices.
    """
    gdef = graph_pb2.GraphDef()
    gdef.CopyFrom(cnn_graph_def)
    gpu_ops = {}
    for node in gdef.node:
        if is_gpu_compute_op(node.op):
            node.device = GPU_DEVICE
            gpu_ops[node.name] = node.op
    assert {"Conv2D", "BiasAdd", "Relu", "MaxPool", "MatMul",
            "Conv2DBackpropFilter", "ApplyMomentum"} <= set(gpu_ops.values())

    def rename_alloc(ns):
        for m in ns.memory:
            if m.allocator_name == "cpu":
                m.allocator_name = "GPU_0_bfc"
        for o in ns.output:
            ad = o.tensor_description.allocation_description
            if ad.allocator_name == "cpu":
                ad.allocator_name = "GPU_0_bfc"

    out = []
    for rm in cnn_run_metas:
        new = config_pb2.RunMetadata()
        new.CopyFrom(rm)
        del new.step_stats.dev_stats[:]
        gpu = step_stats_pb2.DeviceStepStats(device=GPU_DEVICE)
        stream_all = step_stats_pb2.DeviceStepStats(device=GPU_STREAM_ALL)
        stream_7 = step_stats_pb2.DeviceStepStats(device=GPU_STREAM_7)
        moved = 0
        for dev in rm.step_stats.dev_stats:
            kept = new.step_stats.dev_stats.add()
            kept.CopyFrom(dev)
            if "CPU:0" not in dev.device:
                continue
            del kept.node_stats[:]
            for ns in dev.node_stats:
                name = ns.node_name.split(":")[0]
                if name not in gpu_ops:
                    kept.node_stats.add().CopyFrom(ns)
                    continue
                moved += 1
                g_ns = gpu.node_stats.add()
                g_ns.CopyFrom(ns)
                rename_alloc(g_ns)
                dur = max(1, ns.op_end_rel_micros // 2)
                for stream in (stream_all, stream_7):
                    k = stream.node_stats.add()
                    k.node_name = "%s:%s" % (name, gpu_ops[name])
                    k.all_start_micros = ns.all_start_micros + 3
                    k.op_start_rel_micros = 0
                    k.op_end_rel_micros = dur
                    k.all_end_rel_micros = dur
                    k.timeline_label = k.node_name
        assert moved > 0
        last = gpu.node_stats[-1]
        memcpy = stream_all.node_stats.add()
        memcpy.node_name = "MEMCPYHtoD"
        memcpy.timeline_label = "MEMCPYHtoD 3072 bytes"
        memcpy.all_start_micros = gpu.node_stats[0].all_start_micros + 1
        memcpy.op_end_rel_micros = 2
        memcpy.all_end_rel_micros = 2
        extra = gpu.node_stats.add()
        extra.node_name = "_retval_extra_0_0"
        extra.timeline_label = "_retval_extra_0_0 = _Retval()"
        extra.all_start_micros = last.all_start_micros + last.all_end_rel_micros + 1
        extra.op_end_rel_micros = 2
        extra.all_end_rel_micros = 2
        for d in (gpu, stream_all, stream_7):
            new.step_stats.dev_stats.add().CopyFrom(d)
        out.append(new)

    nostream = config_pb2.RunMetadata()
    nostream.CopyFrom(out[0])
    keep = [d for d in nostream.step_stats.dev_stats if "stream" not in d.device]
    del nostream.step_stats.dev_stats[:]
    for d in keep:
        nostream.step_stats.dev_stats.add().CopyFrom(d)

    write_fixture("gpu_synth", gdef, out, cnn_op_log.SerializeToString(),
                  extra={"run_meta_nostream": nostream.SerializeToString()})


def build_fixtures():
    tf1.disable_eager_execution()
    tf1.disable_control_flow_v2()
    for m in MODELS + EXTRA_FIXTURES:
        shutil.rmtree(TESTDATA / m, ignore_errors=True)
    results = {}
    for m in REAL_MODELS + EXTRA_FIXTURES:
        t = time.time()
        results[m] = trace_model(m)
        print("  fixture %-9s %.1fs" % (m, time.time() - t), flush=True)
    make_gpu_synth(*results["cnn"])
    print("  fixture gpu_synth", flush=True)


# --------------------------------------------------------------------------
# Part 2: cases
# --------------------------------------------------------------------------
# A case is (description, inputs, flags, comment).  `inputs` names one of the
# input sets of input_flags(); `flags` is a list of (flag, value) in CLI form.

def input_flags(model, inputs):
    g = "%s/graph.pbtxt" % model
    rms = ",".join("%s/run_meta_%d" % (model, i) for i in range(N_STEPS))
    log = "%s/tfprof_log" % model
    return {
        "full": [("graph_path", g), ("run_meta_path", rms),
                 ("op_log_path", log)],
        "pb": [("graph_path", "%s/graph.pb" % model), ("run_meta_path", rms),
               ("op_log_path", log)],
        "rm0": [("graph_path", g), ("run_meta_path", "%s/run_meta_0" % model),
                ("op_log_path", log)],
        "nooplog": [("graph_path", g), ("run_meta_path", rms)],
        "nograph": [("run_meta_path", rms), ("op_log_path", log)],
        "graphonly": [("graph_path", g), ("op_log_path", log)],
        "profile": [("profile_path", "%s/profile" % model)],
        "nostream": [("graph_path", g),
                     ("run_meta_path", "%s/run_meta_nostream" % model),
                     ("op_log_path", log)],
    }[inputs]


# Per-model names used in the option sets.
MODEL_INFO = {
    "mlp": dict(scope="layer1", scope2="layer2", var_type="VarHandleOp",
                op_re=".*MatMul.*", nothing="no_such_scope.*",
                start2="layer1,layer3.*", occ=1),
    "cnn": dict(scope="conv1", scope2="conv2", var_type="VariableV2",
                op_re=".*Conv2D.*", nothing="no_such_scope.*",
                start2="conv1,dense.*", occ=1),
    "while": dict(scope="rnn", scope2="out", var_type="VarHandleOp",
                  op_re=".*MatMul.*", nothing="no_such_scope.*",
                  start2="rnn/loop,out.*", occ=2),
    "gpu_synth": dict(scope="conv1", scope2="conv2", var_type="VariableV2",
                      op_re=".*Conv2D.*", nothing="no_such_scope.*",
                      start2="conv1,dense.*", occ=1),
}

SELECTS = ["params", "float_ops", "bytes", "peak_bytes", "residual_bytes",
           "output_bytes", "micros", "accelerator_micros", "cpu_micros",
           "occurrence", "device", "op_types", "input_shapes"]
MULTI = "params,float_ops,bytes,micros,occurrence,device,op_types"
ALL_SELECTS = ("params,float_ops,bytes,peak_bytes,residual_bytes,"
               "output_bytes,micros,accelerator_micros,cpu_micros,"
               "occurrence,device,op_types,input_shapes")
ORDER_BY_SELECT = {
    "name": "micros", "depth": "micros", "bytes": "bytes", "peak_bytes": "peak_bytes",
    "residual_bytes": "residual_bytes", "output_bytes": "output_bytes",
    "micros": "micros", "accelerator_micros": "accelerator_micros",
    "cpu_micros": "cpu_micros", "params": "params", "float_ops": "float_ops",
    "occurrence": "occurrence",
}
# Thresholds chosen so that some nodes are hidden and some shown.
MIN_THRESHOLDS = [
    ("min_bytes", "1000", "bytes"),
    ("min_peak_bytes", "1000", "peak_bytes"),
    ("min_residual_bytes", "1", "residual_bytes"),
    ("min_output_bytes", "1000", "output_bytes"),
    ("min_micros", "20", "micros"),
    ("min_accelerator_micros", "1", "accelerator_micros"),
    ("min_cpu_micros", "10", "cpu_micros"),
    ("min_params", "100", "params"),
    ("min_float_ops", "10000", "float_ops"),
]


def C(desc, flags=(), inputs="full", comment=None):
    return (desc, inputs, list(flags), comment)


def scope_cases(m):
    info = MODEL_INFO[m]
    cs = [C("default", comment="default options: select micros")]
    for s in SELECTS:
        cs.append(C("select." + s, [("select", s)]))
    cs.append(C("select.multi", [("select", MULTI)]))
    cs.append(C("select.all", [("select", ALL_SELECTS), ("max_depth", "4")]))
    cs.append(C("select.empty", [("select", "")],
                comment="--select= gives an empty select list"))
    cs.append(C("select.dup_unknown", [("select", "bytes,bytes,foo")],
                comment="duplicated and unknown select values"))
    for o, s in ORDER_BY_SELECT.items():
        cs.append(C("order_by." + o, [("order_by", o), ("select", s)]))
    cs.append(C("order_by.unknown", [("order_by", "nonsense"),
                                      ("select", "micros")]))
    for d in ["0", "1", "2", "3", "1000"]:
        cs.append(C("max_depth." + d, [("max_depth", d),
                                       ("select", "params,micros")]))
    for flag, val, sel in MIN_THRESHOLDS:
        cs.append(C(flag, [(flag, val), ("select", sel)]))
    occ = str(info["occ"] + 1)
    cs.append(C("min_occurrence", [("min_occurrence", occ),
                                   ("select", "occurrence")]))
    cs.append(C("min_micros.order_by_micros.depth3",
                [("min_micros", "5"), ("order_by", "micros"),
                 ("max_depth", "3"), ("select", "micros,occurrence")]))
    # account_type_regexes
    for vt in ["VariableV2", "VarHandleOp"]:
        cs.append(C("account_type." + vt, [("account_type_regexes", vt),
                                           ("select", "params,bytes")],
                    comment=None if vt == info["var_type"] else
                    "no node of this type in the model"))
    cs.append(C("account_type.trainable",
                [("account_type_regexes", "_trainable_variables"),
                 ("select", "params")]))
    cs.append(C("account_type.trainable.depth1000",
                [("account_type_regexes", "_trainable_variables"),
                 ("select", "params"), ("max_depth", "1000")]))
    cs.append(C("account_type.two",
                [("account_type_regexes", "MatMul,Relu"),
                 ("select", "micros,float_ops,op_types")]))
    cs.append(C("account_type.empty", [("account_type_regexes", ""),
                                       ("select", "micros,params")],
                comment="empty account_type_regexes: nothing is accounted"))
    cs.append(C("account_type.cpu_device",
                [("account_type_regexes", ".*cpu:0.*"),
                 ("select", "micros,device")]))
    if m == "gpu_synth":
        cs.append(C("account_type.gpu_device",
                    [("account_type_regexes", ".*gpu:0.*"),
                     ("select", "micros,accelerator_micros,device")]))
    # start_name_regexes
    cs.append(C("start_name.scope",
                [("start_name_regexes", info["scope"]),
                 ("select", "params,micros")]))
    cs.append(C("start_name.scope_children",
                [("start_name_regexes", info["scope"] + "/.*"),
                 ("select", "micros")]))
    cs.append(C("start_name.two", [("start_name_regexes", info["start2"]),
                                   ("select", "micros")]))
    cs.append(C("start_name.nothing",
                [("start_name_regexes", info["nothing"])],
                comment="start_name_regexes matching no node"))
    # trim / show / hide
    cs.append(C("trim.gradients", [("trim_name_regexes", "gradients"),
                                   ("select", "micros")]))
    cs.append(C("trim.two", [("trim_name_regexes", "gradients,%s" % info["scope"]),
                             ("select", "bytes,micros")]))
    cs.append(C("show.op", [("show_name_regexes", info["op_re"]),
                            ("select", "micros,float_ops")]))
    cs.append(C("show.empty", [("show_name_regexes", "")],
                comment="--show_name_regexes= : empty list, only the root"))
    cs.append(C("show_hide.re2_syntax",
                [("show_name_regexes", r"\Q%s\E(/[\w]+)*" % info["scope"]),
                 ("hide_name_regexes", r".*_\d+,.*\bgrad\b.*,[^[]*[[]"),
                 ("select", "params,micros")],
                comment="RE2 syntax: \\Q..\\E, ASCII \\w \\d \\b, "
                        "a literal [ in a class"))
    cs.append(C("show.two", [("show_name_regexes",
                              "%s.*,%s.*" % (info["scope"], info["scope2"])),
                             ("select", "params")]))
    cs.append(C("hide.gradients", [("hide_name_regexes", "gradients.*"),
                                   ("select", "micros")]))
    cs.append(C("hide.empty", [("hide_name_regexes", "")]))
    cs.append(C("hide.invalid_regex", [("hide_name_regexes", "("),
                                       ("max_depth", "2")],
                comment="invalid RE2 pattern: it never matches, RE2 "
                        "reports an error on stderr at each use"))
    cs.append(C("show.invalid_regex",
                [("show_name_regexes", "(,%s.*" % info["scope"]),
                 ("max_depth", "2")],
                comment="invalid RE2 pattern among show regexes"))
    cs.append(C("account_displayed.show",
                [("show_name_regexes", info["op_re"]),
                 ("account_displayed_op_only", "true"),
                 ("select", "micros,float_ops,bytes")]))
    cs.append(C("account_displayed.hide",
                [("hide_name_regexes", "gradients.*"),
                 ("account_displayed_op_only", "true"),
                 ("select", "micros,params")]))
    cs.append(C("account_displayed.false",
                [("show_name_regexes", info["op_re"]),
                 ("account_displayed_op_only", "false"),
                 ("select", "micros,float_ops")]))
    cs.append(C("account_displayed.yes",
                [("show_name_regexes", info["op_re"]),
                 ("account_displayed_op_only", "Yes"),
                 ("select", "micros,float_ops")],
                comment="the prompt's StringToBool words (t/yes/y/1, any case)"))
    cs.append(C("account_displayed.depth2",
                [("max_depth", "2"), ("account_displayed_op_only", "true"),
                 ("select", "micros,bytes")]))
    # steps
    for st in ["0", "2", "-1"]:
        cs.append(C("step.%s" % st.replace("-", "m"),
                    [("step", st), ("select", "micros,bytes,occurrence")]))
    cs.append(C("step.7", [("step", "7")],
                comment="step 7 was not recorded: the engine prints no view"))
    # output variants
    cs.append(C("output.file", [("select", "params,micros"),
                                ("output", "file:outfile=out.txt")],
                comment="view text goes to <case>.file, stdout has the header"))
    cs.append(C("output.stdout", [("output", "stdout")]))
    cs.append(C("output.none", [("output", "none")],
                comment="output type none: no view text"))
    # input variants
    base = [("select", "params,bytes,micros,occurrence")]
    cs.append(C("in_pbtxt", base))
    cs.append(C("in_pb", base, inputs="pb"))
    cs.append(C("in_pb.default", [], inputs="pb"))
    cs.append(C("in_rm0", base, inputs="rm0"))
    cs.append(C("in_rm0.step2", [("step", "2")], inputs="rm0",
                comment="only step 0 recorded: step 2 not found"))
    cs.append(C("in_nooplog", base + [("max_depth", "3")], inputs="nooplog"))
    cs.append(C("in_nooplog.trainable",
                [("account_type_regexes", "_trainable_variables"),
                 ("select", "params")], inputs="nooplog",
                comment="without op log no node has type _trainable_variables"))
    cs.append(C("in_nograph", [("select", "micros,bytes,op_types")],
                inputs="nograph",
                comment="no graph: nodes come only from the RunMetadata"))
    cs.append(C("in_graphonly", [("select", "params,float_ops,micros")],
                inputs="graphonly", comment="no run_meta at all"))
    cs.append(C("in_profile", base, inputs="profile"))
    cs.append(C("in_profile.default", [], inputs="profile"))
    cs.append(C("in_profile.step1", [("step", "1"), ("select", "micros,bytes")],
                inputs="profile"))
    cs.append(C("in_profile.order_by_micros",
                [("order_by", "micros"), ("select", "micros,occurrence"),
                 ("max_depth", "2")], inputs="profile"))
    cs.append(C("in_profile.trainable",
                [("account_type_regexes", "_trainable_variables"),
                 ("select", "params")], inputs="profile"))
    if m == "gpu_synth":
        cs.append(C("in_nostream", [("select", "micros,accelerator_micros,device")],
                    inputs="nostream",
                    comment="GPU-placed ops without stream stats: warning"))
        cs.append(C("accel.order_by",
                    [("order_by", "accelerator_micros"),
                     ("select", "accelerator_micros,cpu_micros,device"),
                     ("min_accelerator_micros", "1")]))
    return cs


def graph_cases(m):
    info = MODEL_INFO[m]
    return [
        C("default"),
        C("select.multi", [("select", MULTI)]),
        C("select.bytes_depth3", [("select", "bytes,peak_bytes,output_bytes"),
                                  ("max_depth", "3")]),
        C("max_depth.1000", [("max_depth", "1000"),
                             ("select", "params,float_ops")]),
        C("order_by.micros", [("order_by", "micros"), ("select", "micros")]),
        C("order_by.depth", [("order_by", "depth"), ("select", "micros")],
          comment="documented, no branch in the engine: name order"),
        C("start_name.scope", [("start_name_regexes", info["scope"] + ".*"),
                               ("select", "micros,op_types")]),
        C("show.op", [("show_name_regexes", info["op_re"]),
                      ("select", "micros,float_ops")]),
        C("hide.gradients", [("hide_name_regexes", "gradients.*"),
                             ("select", "micros")]),
        C("account_displayed.show",
          [("show_name_regexes", info["op_re"]),
           ("account_displayed_op_only", "true"), ("select", "micros")]),
        C("account_type.trainable",
          [("account_type_regexes", "_trainable_variables"),
           ("select", "params")]),
        C("min_micros", [("min_micros", "20"), ("select", "micros")]),
        C("trim.gradients", [("trim_name_regexes", "gradients.*"),
                             ("select", "micros"), ("max_depth", "20")]),
        C("step.0", [("step", "0"), ("select", "micros,occurrence")]),
        C("step.7", [("step", "7")], comment="step not recorded"),
        C("in_pb", [("select", "params,micros")], inputs="pb"),
        C("in_nooplog", [("select", "params,micros")], inputs="nooplog"),
        C("in_profile.step_m1", [("step", "-1"), ("select", "micros,bytes")],
          inputs="profile"),
        C("in_profile.step1", [("step", "1"), ("select", "micros")],
          inputs="profile"),
        C("output.file", [("output", "file:outfile=out.txt")]),
        C("output.timeline.step1", [("output", "timeline:outfile=tl"),
                                    ("step", "1"), ("max_depth", "100000")],
          comment="stdout only (rtfprof writes its own trace format): a "
                  "GPU's peak allocator memory is printed"),
        C("output.timeline.all_steps", [("output", "timeline:outfile=tl")],
          inputs="nograph", comment="--step -1: one file per step"),
    ]


def op_cases(m):
    info = MODEL_INFO[m]
    cs = [
        C("default"),
        C("select.multi", [("select", MULTI)]),
        C("select.all", [("select", ALL_SELECTS)]),
        C("select.input_shapes", [("select", "input_shapes")]),
        C("select.bytes", [("select", "bytes,peak_bytes,residual_bytes,"
                                      "output_bytes")]),
        C("order_by.micros", [("order_by", "micros"), ("select", "micros")]),
        C("order_by.float_ops", [("order_by", "float_ops"),
                                 ("select", "float_ops")]),
        C("order_by.bytes", [("order_by", "bytes"), ("select", "bytes")]),
        C("order_by.occurrence", [("order_by", "occurrence"),
                                  ("select", "occurrence")]),
        C("order_by.params", [("order_by", "params"), ("select", "params")]),
        C("order_by.depth", [("order_by", "depth"), ("select", "micros")],
          comment="documented, no branch in the engine: name order"),
        C("account_type." + info["var_type"],
          [("account_type_regexes", info["var_type"]),
           ("select", "params,micros")]),
        C("show.op", [("show_name_regexes", info["op_re"]),
                      ("select", "micros,occurrence")]),
        C("hide.op", [("hide_name_regexes", "Const,Identity"),
                      ("select", "micros")]),
        C("min_micros", [("min_micros", "20"), ("select", "micros")]),
        C("min_occurrence", [("min_occurrence", "3"),
                             ("select", "occurrence")]),
        C("max_depth.1", [("max_depth", "1"), ("select", "micros")]),
        C("max_depth.0", [("max_depth", "0"), ("select", "micros")]),
        C("step.0", [("step", "0"), ("select", "micros,bytes")]),
        C("account_displayed.show",
          [("show_name_regexes", info["op_re"]),
           ("account_displayed_op_only", "true"), ("select", "micros")]),
        C("in_pb", [("select", "micros,params")], inputs="pb"),
        C("in_profile.step_m1", [("step", "-1"), ("select", "micros,bytes")],
          inputs="profile"),
        C("in_profile.step2", [("step", "2"), ("select", "micros,occurrence")],
          inputs="profile"),
        C("output.file", [("output", "file:outfile=out.txt"),
                          ("select", "micros,occurrence")]),
    ]
    if m == "gpu_synth":
        cs.append(C("select.accel", [("select", "accelerator_micros,"
                                                "cpu_micros,device"),
                                     ("order_by", "accelerator_micros")]))
    return cs


def code_cases(m):
    return [
        C("default"),
        C("select.micros_occ", [("select", "micros,occurrence")]),
        C("select.params", [("select", "params"),
                            ("account_type_regexes", "_trainable_variables")]),
        C("select.float_ops", [("select", "float_ops,bytes")]),
        C("max_depth.3", [("max_depth", "3"), ("select", "micros")]),
        C("max_depth.1000.gen", [("max_depth", "1000"),
                                 ("show_name_regexes", ".*gen_golden.*"),
                                 ("select", "micros,float_ops")]),
        C("order_by.micros", [("order_by", "micros"), ("select", "micros")]),
        C("order_by.depth", [("order_by", "depth"), ("select", "micros")],
          comment="documented, no branch in the engine: name order"),
        C("order_by.occurrence", [("order_by", "occurrence"),
                                  ("select", "micros,occurrence")],
          comment="a line's own graph nodes; ties keep insertion order"),
        C("in_profile.order_by.occurrence", [("order_by", "occurrence"),
                                             ("account_type_regexes",
                                              ".*Grad.*,Const")],
          inputs="profile"),
        C("show.gen", [("show_name_regexes", "gen_golden.py.*"),
                       ("select", "micros,params")]),
        C("hide.ops_files", [("hide_name_regexes", ".*_ops.py:.*"),
                             ("max_depth", "14"), ("select", "micros")]),
        C("trim.two", [("trim_name_regexes",
                        "variable_scope.py:.*,op_def_library.py:.*"),
                       ("max_depth", "14"), ("select", "micros")]),
        C("account_displayed.gen",
          [("show_name_regexes", "gen_golden.py.*"),
           ("account_displayed_op_only", "true"), ("max_depth", "14"),
           ("select", "micros,float_ops")],
          comment="the code view ignores account_displayed_op_only "
                  "(stderr note)"),
        C("start_name.build", [("start_name_regexes",
                                "gen_golden.py:.*:build_.*"),
                               ("select", "micros")]),
        C("start_name.re2_escapes", [("start_name_regexes",
                                      r"gen_golden\.py:\d+\:\<module\>"),
                                     ("max_depth", "4"), ("select", "micros")],
          comment="RE2 syntax: \\< and \\> are literal, \\d is ASCII"),
        C("select.input_shapes", [("select", "input_shapes,micros")],
          comment="input_shapes is N/A in the code view"),
        C("step.1", [("step", "1"), ("select", "micros,bytes")]),
        C("in_nooplog", [], inputs="nooplog",
          comment="no op log: no code traces, no view text"),
        C("in_profile.step_m1", [("step", "-1"), ("select", "micros")],
          inputs="profile"),
        C("in_profile.step0", [("step", "0"), ("select", "micros,bytes")],
          inputs="profile"),
        C("output.file", [("output", "file:outfile=out.txt"),
                          ("select", "micros")]),
    ]


def advise_cases(m):
    # advise ignores the view options; it runs its checkers with fixed ones.
    return [
        C("default"),
        C("in_nooplog", [], inputs="nooplog",
          comment="no code traces: the code-view check is skipped"),
        C("in_graphonly", [], inputs="graphonly",
          comment="no run metadata: the op-view check is skipped"),
        C("in_profile", [], inputs="profile"),
    ]


VIEW_CASES = [("scope", scope_cases), ("graph", graph_cases),
              ("op", op_cases), ("code", code_cases),
              ("advise", advise_cases)]

# The checkers the tfprof CLI's `advise` runs (Advisor::DefaultOptions).
ADVISOR_CHECKERS = ["AcceleratorUtilizationChecker", "OperationChecker",
                    "ExpensiveOperationChecker", "JobChecker"]


def all_cases():
    cases = []
    for m in MODELS:
        for view, fn in VIEW_CASES:
            for desc, inputs, flags, comment in fn(m):
                name = "%s.%s.%s" % (m, view, desc)
                cases.append((name, view, input_flags(m, inputs) + flags,
                              comment))
    # tfprof's own scope outputs of the two batch sizes: inputs of the diff
    # tests (`rtfprof diff --left_text … --right_text …`).
    for m in ["cnn", "cnn_b8"]:
        flags = [("select", "bytes,micros"), ("max_depth", "100")]
        cases.append(("%s.scope.diff_side" % m, "scope",
                      input_flags(m, "pb") + flags,
                      "one side of tests/integration/diff.rs" if m == "cnn" else None))
    # Sibling order in the scope view for names that sort around '/'.
    for inputs in ["pb", "profile"]:
        flags = [("select", "params,float_ops,occurrence"), ("max_depth", "100")]
        cases.append(("names.scope.in_%s" % inputs, "scope",
                      input_flags("names", inputs) + flags, None))
    cases.append(("names.graph.max_depth.100", "graph",
                  input_flags("names", "pb") + [("max_depth", "100")], None))
    names = [c[0] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return cases


# --------------------------------------------------------------------------
# Part 2: the oracle
# --------------------------------------------------------------------------

def split_list(v):
    return [p for p in v.split(",") if p]


def string_to_bool(v):
    """tfprof's StringToBool (tfprof_utils.cc), as its prompt reads flags."""
    v = v.lower()
    if v in ("true", "t", "yes", "y", "1"):
        return True
    if v in ("false", "f", "no", "n", "0"):
        return False
    raise ValueError("not a tfprof boolean: %r" % v)


def build_options(flags, outfile):
    f = dict(flags)
    o = tfprof_options_pb2.OptionsProto()
    o.max_depth = int(f.get("max_depth", 10))
    for k in ["min_bytes", "min_peak_bytes", "min_residual_bytes",
              "min_output_bytes", "min_micros", "min_accelerator_micros",
              "min_cpu_micros", "min_params", "min_float_ops",
              "min_occurrence"]:
        setattr(o, k, int(f.get(k, 0)))
    o.step = int(f.get("step", -1))
    o.order_by = f.get("order_by", "name")
    o.account_type_regexes.extend(
        split_list(f.get("account_type_regexes", ".*")))
    o.start_name_regexes.extend(split_list(f.get("start_name_regexes", ".*")))
    o.trim_name_regexes.extend(split_list(f.get("trim_name_regexes", "")))
    o.show_name_regexes.extend(split_list(f.get("show_name_regexes", ".*")))
    o.hide_name_regexes.extend(split_list(f.get("hide_name_regexes", "")))
    o.account_displayed_op_only = string_to_bool(
        f.get("account_displayed_op_only", "false"))
    o.select.extend(split_list(f.get("select", "micros")))
    out = f.get("output", "")
    if out in ("", "stdout") or out.startswith("file:"):
        o.output = "file:outfile=" + outfile
    elif out.startswith("timeline:outfile="):
        # Written into the temporary directory; the messages name it
        # relative to it (see run_case).
        o.output = "timeline:outfile=" + os.path.join(
            os.path.dirname(outfile), out.split("=", 1)[1])
    else:
        o.output = out
    return o


class Capture:
    """Redirect the C-level fd (1 or 2) into a temporary file."""

    def __init__(self, fd):
        self.fd = fd

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.tmp = tempfile.TemporaryFile()
        self.saved = os.dup(self.fd)
        os.dup2(self.tmp.fileno(), self.fd)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved, self.fd)
        os.close(self.saved)
        self.tmp.seek(0)
        self.data = self.tmp.read()
        self.tmp.close()


def is_tf_log_line(line):
    return (line.startswith((b"I0000", b"W0000", b"E0000", b"F0000"))
            or line.startswith(b"WARNING: All log messages"))


def read_graph(path):
    gdef = graph_pb2.GraphDef()
    data = path.read_bytes()
    if path.suffix == ".pbtxt":
        text_format.Parse(data.decode(), gdef)
    else:
        gdef.ParseFromString(data)
    return gdef.SerializeToString()


def profile_view(P, view, opts):
    """Has the engine write `view` (or advise, with every checker) to the
    outfile `opts` names."""
    if view == "advise":
        advisor = tfprof_options_pb2.AdvisorOptionsProto()
        for checker in ADVISOR_CHECKERS:
            advisor.checkers[checker].SetInParent()
        P.Profile(b"advise", advisor.SerializeToString())
    else:
        P.Profile(view.encode(), opts.SerializeToString())


def run_case(view, flags, tmpdir):
    """Returns (stdout bytes, file bytes or None, filtered stderr bytes)."""
    f = dict(flags)
    outfile = os.path.join(tmpdir, "view.txt")
    if os.path.exists(outfile):
        os.remove(outfile)
    opts = build_options(flags, outfile)
    header = b"Reading Files...\n"
    with Capture(2) as err, Capture(1) as out:
        try:
            if "profile_path" in f:
                P.ProfilerFromFile(str(TESTDATA / f["profile_path"]).encode())
            else:
                header += (b"Try to use a single --profile_path instead of "
                           b"graph_path,op_log_path,run_meta_path\n")
                graph = (read_graph(TESTDATA / f["graph_path"])
                         if "graph_path" in f else b"")
                op_log = ((TESTDATA / f["op_log_path"]).read_bytes()
                          if "op_log_path" in f else b"")
                ok = P.NewProfiler(graph, op_log)
                assert ok
                for i, rm in enumerate(split_list(f.get("run_meta_path", ""))):
                    cov = P.AddStep(i, b"", (TESTDATA / rm).read_bytes(), b"")
                    header += b"run graph coverage: %.2f\n" % cov
            profile_view(P, view, opts)
        finally:
            P.DeleteProfiler()
    text = b""
    if os.path.exists(outfile):
        with open(outfile, "rb") as fh:
            text = fh.read()
    stderr = b"".join(l for l in err.data.splitlines(keepends=True)
                      if not is_tf_log_line(l))
    if f.get("output", "").startswith("file:"):
        return header + out.data, text, stderr
    if f.get("output", "").startswith("timeline:"):
        # Only what tfprof prints is compared: rtfprof writes its own
        # (Perfetto-valid) trace format.
        shown = out.data.replace(os.fsencode(tmpdir) + b"/", b"")
        for name in os.listdir(tmpdir):
            if name != "view.txt":
                os.remove(os.path.join(tmpdir, name))
        return header + shown, None, stderr
    return header + out.data + text, None, stderr


def cases_txt(cases):
    lines = [
        "# Golden cases for rtfprof, generated by tools/gen_golden.py with",
        "# TensorFlow %s (see TF_VERSION); do not edit by hand." % tf.__version__,
        "# Format: <case_name> <view> <flags...>, whitespace-separated, flags",
        "# as --flag=value, file paths relative to testdata/.  List flags are",
        "# comma-separated, empty pieces dropped (--select= is an empty list).",
        "# <case>.out is the CLI's stdout, <case>.file the file written for",
        "# --output=file:outfile=NAME, <case>.err the engine's stderr (only",
        "# when not empty, TensorFlow log lines removed).",
        "# Absent flags take the tfprof CLI defaults; --account_type_regexes",
        "# fills account_type_regexes (the real CLI's flag bug is not copied).",
        "# gpu_synth is a synthetic input derived from cnn's real trace; its",
        "# expected outputs are still produced by tfprof.",
    ]
    for name, view, flags, comment in cases:
        if comment:
            lines.append("# %s: %s" % (name, comment))
        lines.append(" ".join([name, view] +
                              ["--%s=%s" % (k, v) for k, v in flags]))
    return "\n".join(lines) + "\n"


def build_golden():
    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir(parents=True)
    (GOLDEN / "TF_VERSION").write_text(tf.__version__ + "\n")
    cases = all_cases()
    for name, view, flags, _ in cases:
        for tok in [name, view] + ["%s=%s" % kv for kv in flags]:
            assert tok and not any(c.isspace() for c in tok), tok
    (GOLDEN / "cases.txt").write_text(cases_txt(cases))
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, view, flags, _ in cases:
            stdout, filedata, stderr = run_case(view, flags, tmpdir)
            (GOLDEN / (name + ".out")).write_bytes(stdout)
            if filedata is not None:
                (GOLDEN / (name + ".file")).write_bytes(filedata)
            if stderr.strip():
                (GOLDEN / (name + ".err")).write_bytes(stderr)
    self_check(cases)
    return cases


def self_check(cases):
    """Text and binary GraphDefs must give the same outputs; sizes small."""
    names = {c[0] for c in cases}
    for m in MODELS:
        for a, b in [("in_pbtxt", "in_pb"), ("default", "in_pb.default")]:
            fa = GOLDEN / ("%s.scope.%s.out" % (m, a))
            fb = GOLDEN / ("%s.scope.%s.out" % (m, b))
            assert fa.stem in names and fb.stem in names
            assert fa.read_bytes() == fb.read_bytes(), (fa, fb)
    for p in TESTDATA.rglob("*"):
        assert not p.is_file() or p.stat().st_size < 2 << 20, p


README = """\
# testdata

Everything here is written by `tools/gen_golden.py` (run it with a Python
that has TensorFlow; see its docstring).  Do not edit by hand.

- `mlp/`, `cnn/`, `while/`: real TF1-style models traced with FULL_TRACE:
  `graph.pbtxt`, `graph.pb`, `run_meta_0..2`, `tfprof_log` (OpLogProto),
  `profile` (ProfileProto of the 3 steps).
- `gpu_synth/`: a synthetic accelerator input derived from `cnn/`'s real
  trace (compute ops moved to GPU:0 with stream stats added; see
  `make_gpu_synth` in the generator), plus `run_meta_nostream`.
- `events/`: TensorBoard event files (a TF1 tutorial training log, TF2
  traces) with their own `cases.txt` and `golden/`, written by
  `tools/gen_events.py` (see its docstring).
- `golden/`: `cases.txt` (one case a line: `<name> <view> <flags...>`),
  and per case the tfprof CLI's stdout (`.out`), the file written for
  `--output=file:outfile=NAME` (`.file`) and non-empty engine stderr
  (`.err`), all produced by TensorFlow's real tfprof engine (`TF_VERSION`).
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--golden-only", action="store_true",
                    help="keep testdata/<model>/, regenerate testdata/golden/")
    ap.add_argument("--job-worker", nargs=3, metavar=("JOB", "BATCH", "START"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--jobs", action="store_true",
                    help="only (re)trace the two concurrent jobs fixture")
    ap.add_argument("--fixture", choices=sorted(BUILDERS),
                    help="only (re)trace this one fixture; goldens untouched")
    args = ap.parse_args()
    t0 = time.time()
    if args.job_worker:
        job, batch, start_at = args.job_worker
        trace_job_worker(job, int(batch), float(start_at))
        return
    if args.jobs:
        trace_concurrent_jobs()
        print("fixture jobs, %.1fs" % (time.time() - t0))
        return
    if args.fixture:
        tf1.disable_eager_execution()
        tf1.disable_control_flow_v2()
        trace_model(args.fixture)
        print("fixture %s, %.1fs" % (args.fixture, time.time() - t0))
        return
    if not args.golden_only:
        print("building fixtures", flush=True)
        build_fixtures()
    (TESTDATA / "README.md").write_text(README)
    print("running cases", flush=True)
    cases = build_golden()
    print("%d cases, %.1fs total" % (len(cases), time.time() - t0))


if __name__ == "__main__":
    main()
