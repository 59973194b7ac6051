#!/usr/bin/env python3
"""What TensorFlow's shape functions infer for GraphDefs saved without
shapes, and what its Python profiler then counts: the oracle of rtfprof's
static shape inference (tests/integration/shapes.rs, python/tests).

    /work/venvs/tf/bin/python tools/gen_shapes.py        # ~20 s

Needs a Python with TensorFlow (CPU is enough); CI only reads what this
writes to testdata/shapes/:

  <name>/graph.pb   a GraphDef built here with TF1 graph code, written
                    without `_output_shapes` (`graph.as_graph_def()`, as
                    users save it with `tf.io.write_graph(sess.graph_def)`).
  <name>/shapes.json
                    {"tensorflow": version, "nodes": [[name, op, outputs]]}:
                    for every node of that GraphDef imported into a fresh
                    `tf.Graph` (`tf.import_graph_def`, which runs every op's
                    C++ shape function), the static shape of each output:
                    a list of dims (-1 unknown), or null for an unknown rank.
  profile.json.gz   gzip (mtime 0) of {"tensorflow", "cases": [{"name",
                    "cmd", "inputs", "options", "result"}]}, as
                    tools/gen_profile_parity.py writes them: what
                    `tf.compat.v1.profiler.profile(graph, run_meta=...,
                    cmd=..., options=...)` returns for each graph imported
                    into a fresh tf.Graph, with ProfileOptionBuilder's
                    float_operation() and trainable_variables_parameter()
                    (and time_and_memory() where there is run metadata), in
                    the scope, graph and op views. The graphs: every graph
                    above without run metadata, and testdata/flops/cnn_bn's
                    graph_noshapes.pb with its run_meta_unfused (shapes TF
                    infers, completed by run-time shapes).

Graphs (`HOLDOUT` marks the one kept out of tuning: the tests read it like
the others, but rtfprof's inference was written without looking at it):

  cnn          conv + FusedBatchNormV3 + max/avg pool + dense, unknown batch,
               sparse softmax cross-entropy, Momentum.
  rnn          a tanh RNN over time with tf.while_loop and TensorArrays
               (control flow v1: Enter/Merge/Switch/Exit/NextIteration),
               unknown batch, GradientDescent.
  transformer  one block: layer norm, multi-head attention (BatchMatMulV2,
               Softmax), a feed-forward layer, unknown batch, Adam.
  feeders      an unknown-batch placeholder through the ops that compute
               shapes: Shape/StridedSlice/Pack/Fill/Tile/Pad/ConcatV2/
               ExpandDims/Squeeze/GatherV2/OneHot/Range/Select/Split/Unpack,
               into ops the flops registry counts.
  autoencoder  (HOLDOUT) depthwise conv, conv2d_transpose, Conv3D, AddN,
               RMSProp.
  text_cnn     (HOLDOUT) embedding lookup, conv1d, dropout, Einsum
               attention pooling, batch normalization, Adagrad.
  registry     the flops registry's ops the graphs above lack: Dilation2D
               (and its backprops), MaxPoolV2 (and MaxPoolGradV2), GatherNd
               (and ScatterNd), unknown batch, GradientDescent.
  lstm_sep     (HOLDOUT) an LSTM cell unrolled over 3 steps (TF1 ops:
               split gates, sigmoid/tanh), a depthwise-separable conv over
               mirror-padded tiles, BatchMatMulV2 and Einsum heads, one-hot
               and gathered targets, log-softmax, cumsum, unknown batch, Adam.
  control_flow TF2 control flow in a TF1 graph: functional While and If
               (tf.while_loop and tf.cond under control flow v2, with their
               gradients), a loop whose carried tensor grows (a relaxed
               shape invariant), an If whose branches differ in shape, a
               While and an If under `bare/` whose `output_shapes` attr is
               removed after building (TF's fallbacks: the inputs' shapes,
               unknown), tf.function calls (PartitionedCall and
               StatefulPartitionedCall), unknown batch, GradientDescent.
  image        ResizeBilinear, ResizeNearestNeighbor (its size computed from
               a partly known tf.shape) and ResizeBicubic with their
               gradients, TopKV2 (k constant), MatrixBandPart, and
               TensorScatterUpdate/Add/Sub, unknown batch, GradientDescent.
  segmenter    (HOLDOUT) an encoder-decoder: strided conv, a tf.cond dropout
               on a defaulted training flag, nearest and bilinear upsampling,
               a functional while loop of residual convs, causal attention
               over pixels masked with band_part, top_k, a scattered table,
               a tf.function loss, unknown batch, Adam.
"""
import gzip
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_python_fixtures import plain  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "shapes"
Builder = tf1.profiler.ProfileOptionBuilder
HOLDOUT = ["autoencoder", "text_cnn", "lstm_sep", "segmenter"]


def var(name, shape):
    return tf1.get_variable(name, shape, initializer=tf1.glorot_uniform_initializer(seed=0) if len(shape) > 1 else tf1.zeros_initializer())


def cnn():
    x = tf1.placeholder(tf.float32, [None, 16, 16, 3], name="images")
    y = tf1.placeholder(tf.int64, [None], name="labels")
    h = x
    for i, c in enumerate([8, 16]):
        with tf1.variable_scope("conv%d" % i):
            h = tf.nn.conv2d(h, var("w", [3, 3, h.shape[-1], c]), 1, "SAME")
            scale, offset = tf1.get_variable("scale", [c], initializer=tf1.ones_initializer()), var("offset", [c])
            h, _, _ = tf1.nn.fused_batch_norm(h, scale, offset, is_training=True)
            h = tf.nn.relu(h)
            h = tf.nn.max_pool2d(h, 2, 2, "SAME") if i == 0 else tf.nn.avg_pool2d(h, 2, 2, "VALID")
    h = tf.reshape(h, [-1, 4 * 4 * 16])
    logits = tf.nn.bias_add(tf.matmul(h, var("fc/w", [256, 10])), var("fc/b", [10]))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    tf1.train.MomentumOptimizer(0.1, 0.9).minimize(loss)


def rnn():
    x = tf1.placeholder(tf.float32, [None, 5, 8], name="inputs")
    w, b = var("cell/w", [8 + 12, 12]), var("cell/b", [12])
    steps = tf.shape(x)[1]
    xs = tf.TensorArray(tf.float32, size=steps).unstack(tf.transpose(x, [1, 0, 2]))
    h0 = tf.zeros(tf.stack([tf.shape(x)[0], 12]))
    outs = tf.TensorArray(tf.float32, size=steps)

    def body(t, h, outs):
        h = tf.tanh(tf.matmul(tf.concat([xs.read(t), h], 1), w) + b)
        return t + 1, h, outs.write(t, h)

    _, h, outs = tf1.while_loop(lambda t, *_: t < steps, body, [tf.constant(0), h0, outs])
    loss = tf.reduce_sum(tf.square(h)) + tf.reduce_mean(outs.stack())
    tf1.train.GradientDescentOptimizer(0.1).minimize(loss)


def transformer():
    d, heads, t = 16, 4, 6
    x = tf1.placeholder(tf.float32, [None, t, d], name="tokens")

    def layer_norm(v, name):
        mean, variance = tf.nn.moments(v, [-1], keepdims=True)
        return (v - mean) * tf.math.rsqrt(variance + 1e-6) * var(name + "/g", [d]) + var(name + "/b", [d])

    def split(v):
        return tf.transpose(tf.reshape(v, [-1, t, heads, d // heads]), [0, 2, 1, 3])

    h = layer_norm(x, "ln1")
    flat = tf.reshape(h, [-1, d])
    q, k, v = (split(tf.matmul(flat, var(n, [d, d]))) for n in ("wq", "wk", "wv"))
    att = tf.nn.softmax(tf.matmul(q, k, transpose_b=True) / np.sqrt(d // heads))
    o = tf.reshape(tf.transpose(tf.matmul(att, v), [0, 2, 1, 3]), [-1, d])
    h = x + tf.reshape(tf.matmul(o, var("wo", [d, d])), tf.shape(x))
    f = tf.nn.relu(tf.matmul(tf.reshape(layer_norm(h, "ln2"), [-1, d]), var("ff1", [d, 4 * d])))
    h = h + tf.reshape(tf.matmul(f, var("ff2", [4 * d, d])), [-1, t, d])
    loss = tf.reduce_mean(tf.square(h))
    tf1.train.AdamOptimizer(1e-3).minimize(loss)


def feeders():
    x = tf1.placeholder(tf.float32, [None, 6, 4], name="x")
    ids = tf1.placeholder(tf.int32, [None], name="ids")
    n = tf.shape(x)[0]
    filled = tf.fill(tf.stack([n, 6, 4]), 0.5)
    padded = tf.pad(x * filled, [[0, 0], [1, 1], [0, 0]])
    tiled = tf.tile(tf.expand_dims(padded, 1), [1, 2, 1, 1])
    squeezed = tf.squeeze(tf.reduce_sum(tiled, axis=[2], keepdims=True), [2])
    a, b = tf.split(squeezed, 2, axis=2)
    c, d = tf.split(x, [1, 5], axis=1)
    parts = tf.unstack(x, axis=1)
    stacked = tf.stack(parts[:3], axis=1)
    cat = tf.concat([a, b], axis=1)
    emb = tf.gather(var("emb", [20, 4]), ids)
    hot = tf.one_hot(ids, 20)
    r = tf.cast(tf.range(0, tf.size(x)), tf.float32)
    picked = tf.where(x > 0, x, -x)
    sliced = tf.slice(x, [0, 1, 0], [-1, 3, 2])
    ranked = tf.cast(tf.rank(x), tf.float32)
    m = tf.matmul(hot, var("proj", [20, 4])) + emb
    tf.identity(tf.reduce_mean(cat) + tf.reduce_sum(stacked) + tf.reduce_max(r) + tf.reduce_sum(picked * x)
                + tf.reduce_sum(sliced) + ranked + tf.reduce_sum(tf.square(m)) + tf.reduce_sum(c) + tf.reduce_mean(d)
                + tf.reduce_sum(tf.reshape(x, [n, -1])), name="out")


def autoencoder():
    x = tf1.placeholder(tf.float32, [None, 8, 8, 4], name="images")
    h = tf.nn.relu(tf.nn.depthwise_conv2d(x, var("dw", [3, 3, 4, 2]), [1, 1, 1, 1], "SAME"))
    h = tf.nn.conv2d(h, var("down", [3, 3, 8, 6]), 2, "SAME")
    up = tf.nn.conv2d_transpose(h, var("up", [3, 3, 4, 6]), tf.shape(x), 2, "SAME")
    v = tf.nn.conv3d(tf.expand_dims(x, 1), var("c3", [1, 3, 3, 4, 2]), [1, 1, 1, 1, 1], "SAME")
    loss = tf.add_n([tf.reduce_mean(tf.square(up - x)), tf.reduce_mean(v), tf.nn.l2_loss(h)])
    tf1.train.RMSPropOptimizer(1e-3).minimize(loss)


def text_cnn():
    ids = tf1.placeholder(tf.int32, [None, 12], name="ids")
    labels = tf1.placeholder(tf.float32, [None, 3], name="labels")
    emb = tf.nn.embedding_lookup(var("emb", [50, 8]), ids)
    h = tf.nn.relu(tf.nn.conv1d(emb, var("conv", [3, 8, 16]), 1, "VALID"))
    keep = tf.cast(tf.random.uniform(tf.shape(h), seed=1) > 0.1, tf.float32)
    h = h * keep / 0.9
    scores = tf.nn.softmax(tf.einsum("btc,c->bt", h, var("att", [16])))
    pooled = tf.concat([tf.reduce_max(h, axis=1), tf.einsum("bt,btc->bc", scores, h)], axis=1)
    mean, variance = tf.nn.moments(pooled, axes=[0])
    normed = tf.nn.batch_normalization(pooled, mean, variance, var("beta", [32]), None, 1e-3)
    logits = tf.matmul(normed, var("out", [32, 3]))
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    loss += 1e-4 * tf.add_n([tf.nn.l2_loss(v) for v in tf1.trainable_variables()])
    tf1.train.AdagradOptimizer(0.1).minimize(loss)


def lstm_sep():
    units, t, f = 6, 3, 5
    x = tf1.placeholder(tf.float32, [None, t, f], name="seq")
    img = tf1.placeholder(tf.float32, [None, 6, 6, 2], name="img")
    ids = tf1.placeholder(tf.int32, [None], name="ids")
    w, b = var("lstm/w", [f + units, 4 * units]), var("lstm/b", [4 * units])
    batch = tf.shape(x)[0]
    h = c = tf.zeros(tf.stack([batch, units]))
    for step in tf.unstack(x, axis=1):
        gates = tf.nn.bias_add(tf.matmul(tf.concat([step, h], 1), w), b)
        i, j, fg, o = tf.split(gates, 4, axis=1)
        c = tf.sigmoid(fg + 1.0) * c + tf.sigmoid(i) * tf.tanh(j)
        h = tf.sigmoid(o) * tf.tanh(c)
    padded = tf.pad(tf.tile(img, [1, 1, 1, 2]), [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    conv = tf.nn.separable_conv2d(padded, var("sep/dw", [3, 3, 4, 2]), var("sep/pw", [1, 1, 8, units]), [1, 1, 1, 1], "VALID")
    pooled = tf.reduce_mean(tf.nn.relu6(conv), axis=[1, 2])
    seq = tf.stack([h, pooled], axis=1)
    att = tf.nn.softmax(tf.linalg.matmul(seq, seq, transpose_b=True))
    mixed = tf.einsum("bij,bjd->bid", att, seq) + tf.linalg.matmul(att, seq)
    logits = tf.einsum("bd,dk->bk", tf.reduce_sum(mixed, 1), var("head", [units, 7]))
    targets = tf.one_hot(ids, 7) + tf.gather(var("prior", [7, 7]), ids)
    loss = -tf.reduce_mean(tf.reduce_sum(targets * tf.nn.log_softmax(logits), 1))
    loss += tf.reduce_mean(tf.math.cumsum(tf.exp(-tf.abs(logits)), axis=1))
    tf1.train.AdamOptimizer(1e-3).minimize(loss)


def registry():
    x = tf1.placeholder(tf.float32, [None, 9, 9, 3], name="images")
    fixed = tf1.placeholder(tf.float32, [2, 7, 7, 3], name="fixed")
    h = tf.nn.dilation2d(x, var("dil", [3, 3, 3]), [1, 2, 2, 1], "SAME", "NHWC", [1, 1, 1, 1])
    g = tf.nn.dilation2d(fixed, var("dil2", [2, 2, 3]), [1, 1, 1, 1], "VALID", "NHWC", [1, 2, 2, 1])
    p = tf.raw_ops.MaxPoolV2(input=h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    q = tf.raw_ops.MaxPoolV2(input=g, ksize=tf.constant([1, 3, 3, 1]), strides=[1, 1, 1, 1], padding="SAME")
    table = var("table", [4, 5, 6])
    picked = tf.gather_nd(table, [[0, 1], [2, 3], [3, 4]]) + tf.reduce_sum(tf.gather_nd(table, [[[1]], [[2]]]))
    loss = tf.reduce_mean(p) + tf.reduce_sum(q) + tf.reduce_sum(tf.square(picked))
    tf1.train.GradientDescentOptimizer(0.1).minimize(loss)


def control_flow():
    x = tf1.placeholder(tf.float32, [None, 6], name="x")
    flag = tf1.placeholder(tf.bool, [], name="flag")
    w = var("w", [6, 6])

    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(h, w))

    _, h = tf1.while_loop(lambda i, h: i < 3, body, [tf.constant(0), x])

    def grow(i, acc):
        return i + 1, tf.concat([acc, acc[:, :1] * w[0, 0]], axis=1)

    _, grown = tf1.while_loop(lambda i, acc: i < 2, grow, [tf.constant(0), x],
                              shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, None])])
    y = tf.cond(flag, lambda: tf.nn.relu(h), lambda: h * 0.5)
    z = tf.cond(flag, lambda: tf.zeros([2, 3]) + w[0, :3], lambda: tf.ones([4, 3]) * w[1, :3])
    with tf.name_scope("bare"):
        _, h2 = tf1.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, tf.matmul(v, w)), [tf.constant(0), x])
        y2 = tf.cond(flag, lambda: tf.matmul(x, w) + 1.0, lambda: x - 1.0)

    @tf.function
    def act(v):
        return tf.nn.softmax(v) * 2.0

    @tf.function
    def dense(v):
        return tf.matmul(v, w) + 1.0

    d = dense(act(y))
    square = tf.cond(flag, lambda: tf.matmul(w, w), lambda: w)
    loss = (tf.reduce_mean(d) + tf.reduce_sum(tf.square(z)) + tf.reduce_mean(h2) + tf.reduce_mean(y2)
            + tf.reduce_mean(grown) + tf.reduce_mean(act(square)) + tf.reduce_sum(square))
    tf1.train.GradientDescentOptimizer(0.1).minimize(loss)


def image():
    x = tf1.placeholder(tf.float32, [None, 8, 8, 3], name="images")
    fixed = tf1.placeholder(tf.float32, [2, 5, 5, 3], name="fixed")
    h = tf.nn.relu(tf.nn.conv2d(x, var("k", [3, 3, 3, 4]), 1, "SAME"))
    up = tf.image.resize(h, [16, 16])
    near = tf.image.resize(h, tf.shape(h)[1:3] * 2, method="nearest")
    near2 = tf.image.resize(fixed, tf.shape(fixed)[1:3] * 2, method="nearest")
    cubic = tf1.image.resize_bicubic(h, [4, 4])
    pooled = tf.nn.conv2d(up, var("k2", [3, 3, 4, 4]), 2, "SAME")
    logits = tf.matmul(tf.reshape(pooled, [-1, 8 * 8 * 4]), var("fc", [256, 10]))
    values, indices = tf.math.top_k(logits, k=3)
    picked, _ = tf.math.top_k(tf.reshape(near2, [2, -1]), k=tf.constant(5))
    banded = tf.linalg.band_part(tf.matmul(logits, tf.linalg.band_part(tf.ones([10, 10]), -1, 0)), 0, 2)
    table = tf.tensor_scatter_nd_update(var("table", [5, 4]), [[1], [3]], tf.ones([2, 4]))
    added = tf.tensor_scatter_nd_add(tf.reshape(logits, [-1, 5, 2]), [[0, 1]], tf.ones([1, 2]))
    taken = tf.tensor_scatter_nd_sub(fixed, [[0, 1, 1]], tf.ones([1, 3]))
    loss = (tf.reduce_sum(values) + tf.reduce_mean(banded) + tf.reduce_sum(tf.square(table)) + tf.reduce_sum(added)
            + tf.reduce_sum(taken) + tf.reduce_mean(near) + tf.reduce_mean(tf.square(cubic)) + tf.reduce_sum(picked)
            + tf.reduce_sum(tf.cast(indices, tf.float32)))
    tf1.train.GradientDescentOptimizer(0.1).minimize(loss)


def segmenter():
    x = tf1.placeholder(tf.float32, [None, 12, 12, 3], name="images")
    training = tf1.placeholder_with_default(False, [], name="training")
    h = tf.nn.relu(tf.nn.conv2d(x, var("enc", [3, 3, 3, 8]), 2, "SAME"))
    h = tf.cond(training, lambda: tf.nn.dropout(h, rate=0.2, seed=1), lambda: tf.identity(h))
    near = tf.image.resize(h, tf.shape(x)[1:3], method="nearest")
    smooth = tf1.image.resize_bilinear(h, [12, 12], align_corners=True)
    feat = tf.concat([near + smooth, x], axis=3)
    k = var("refine", [3, 3, 11, 11])
    _, feat = tf1.while_loop(lambda i, f: i < 2, lambda i, f: (i + 1, f + 0.1 * tf.nn.conv2d(tf.nn.relu(f), k, 1, "SAME")),
                             [tf.constant(0), feat])
    logits = tf.nn.conv2d(feat, var("head", [1, 1, 11, 4]), 1, "SAME")
    flat = tf.reshape(logits, [-1, 144, 4])
    mask = tf.linalg.band_part(tf.ones([144, 144]), -1, 0)
    att = tf.nn.softmax(tf.matmul(flat, flat, transpose_b=True) * mask - 1e9 * (1.0 - mask))
    mixed = tf.reduce_mean(tf.matmul(att, flat), 1)
    top, idx = tf.math.top_k(mixed, k=2)
    table = tf.tensor_scatter_nd_sub(var("table", [4, 4]), [[0], [2]], tf.ones([2, 4]))
    out = tf.matmul(mixed, table)

    @tf.function
    def score(a, b):
        return tf.reduce_sum(tf.square(a - b), axis=1)

    loss = tf.reduce_mean(score(out, tf.one_hot(idx[:, 0], 4))) + tf.reduce_mean(top)
    tf1.train.AdamOptimizer(1e-3).minimize(loss)


GRAPHS = {"cnn": cnn, "rnn": rnn, "transformer": transformer, "feeders": feeders, "autoencoder": autoencoder,
          "text_cnn": text_cnn, "lstm_sep": lstm_sep, "registry": registry, "control_flow": control_flow,
          "image": image, "segmenter": segmenter}

# Functional control flow ops whose `output_shapes` attr build() removes:
# a GraphDef written by other tools may lack it, and TF's shape functions
# then fall back (While: its inputs' shapes; If: unknown).
BARE_SCOPE = "bare/"


def build(fn):
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(0)
        if fn is rnn:
            tf1.disable_control_flow_v2()
        try:
            fn()
        finally:
            tf1.enable_control_flow_v2()
    graph_def = graph.as_graph_def()
    for node in graph_def.node:
        if node.name.startswith(BARE_SCOPE) and node.op in ("While", "StatelessWhile", "If", "StatelessIf"):
            del node.attr["output_shapes"]
    return graph_def


def imported(graph_def):
    graph = tf.Graph()
    with graph.as_default():
        tf1.import_graph_def(graph_def, name="")
    return graph


def shape(s):
    return None if s.rank is None else [-1 if d is None else d for d in s.as_list()]


def inferred(graph):
    return [[op.name, op.type, [shape(t.shape) for t in op.outputs]] for op in graph.get_operations()]


def option_sets(with_run_meta):
    sets = {"float_operation": Builder.float_operation(),
            "trainable_variables_parameter": Builder.trainable_variables_parameter()}
    if with_run_meta:
        sets["time_and_memory"] = Builder.time_and_memory()
    return sets


def profile_cases(name, graph_path, run_meta_path=None):
    graph_def = graph_pb2.GraphDef()
    graph_def.ParseFromString((TESTDATA / graph_path).read_bytes())
    cases = []
    for options_name, options in option_sets(run_meta_path is not None).items():
        options = dict(options, output="none")
        for cmd in ("scope", "graph", "op"):
            run_meta = None
            inputs = {"graph_path": graph_path}
            if run_meta_path:
                run_meta = config_pb2.RunMetadata()
                run_meta.ParseFromString((TESTDATA / run_meta_path).read_bytes())
                inputs["run_meta_path"] = [run_meta_path]
            # A fresh graph each time: profile() completes its shapes.
            result = tf1.profiler.profile(imported(graph_def), run_meta=run_meta, cmd=cmd, options=options)
            cases.append({"name": "%s.%s.%s" % (name, options_name, cmd), "cmd": cmd, "inputs": inputs,
                          "options": options, "result": plain(result)})
    return cases


def main():
    cases = []
    for name, fn in GRAPHS.items():
        d = OUT / name
        d.mkdir(parents=True, exist_ok=True)
        graph_def = build(fn)
        assert not any("_output_shapes" in n.attr for n in graph_def.node)
        (d / "graph.pb").write_bytes(graph_def.SerializeToString(deterministic=True))
        nodes = inferred(imported(graph_def))
        text = json.dumps({"tensorflow": tf.__version__, "nodes": nodes}, separators=(",", ":"))
        (d / "shapes.json").write_text(text.replace('],["', '],\n["') + "\n")
        unknown = sum(1 for _, _, outs in nodes for s in outs if s is None or -1 in s)
        print("%s: %d nodes, %d outputs not fully known" % (name, len(nodes), unknown), file=sys.stderr)
        cases += profile_cases(name, "shapes/%s/graph.pb" % name)
    cases += profile_cases("cnn_bn_run_meta", "flops/cnn_bn/graph_noshapes.pb", "flops/cnn_bn/run_meta_unfused")
    text = json.dumps({"tensorflow": tf.__version__, "holdout": HOLDOUT, "cases": cases}, separators=(",", ":"),
                      sort_keys=True)
    path = OUT / "profile.json.gz"
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode() + b"\n")
    print("%d cases, %s %d KB" % (len(cases), path.relative_to(ROOT), path.stat().st_size // 1024), file=sys.stderr)


if __name__ == "__main__":
    main()
