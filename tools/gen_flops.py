#!/usr/bin/env python3
"""TensorFlow's flops registry as test data for `--estimate_flops`.

    /work/venvs/tf/bin/python tools/gen_flops.py        # ~30 s

Needs a Python with TensorFlow (CPU is enough); CI only reads what this
writes to testdata/flops/ (tests/integration/flops.rs):

  registered_ops.txt  every op type TF's Python code registers a "flops"
                      statistic for (`@ops.RegisterStatistics(TYPE, "flops")`),
                      one a line, with the Python function that computes it.
                      Read from the registry itself (`ops._stats_registry`),
                      not from the source text.  Registrations happen when
                      their module is imported, so before reading it the
                      script imports `tensorflow` and then every module of
                      the installed package whose source mentions
                      `RegisterStatistics` (a text scan that only decides
                      what to import; tests and the decorator's own module
                      are skipped).  Today those are nn_ops.py and
                      profiler/internal/flops_registry.py.
  graph.pbtxt, graph.pb
                      one GraphDef (`as_graph_def(add_shapes=True)`) with case
                      nodes for every registered type: plain shapes,
                      broadcasting, transposes, strides that leave a fraction,
                      NCHW, partly unknown and empty shapes, a control input,
                      an input taken from output slot 1.  Each case node is
                      named `<Type>` or `<Type>/<variant>`; its inputs are
                      `<case>/in<i>` placeholders (or consts and variables).
  cases.tsv           one row per case node: node, op, tf_float_ops (what
                      `tfprof_logger` logs for it: `_get_logged_ops` on the
                      graph, `-` when it logs none), rtfprof_float_ops (see
                      below), input shapes, attrs that matter, and why TF
                      gives none.
  cnn_bn/             a real trace: a TF1 CNN with batch norm
                      (`tf.nn.batch_normalization`, so Rsqrt and RsqrtGrad)
                      and an unknown batch size, trained with
                      GradientDescent.  graph.pb, and per Grappler setting
                      (`fused`: default, Conv2D+BiasAdd+Relu fused into
                      _FusedConv2D; `unfused`: remapper off) run_meta_<s> and
                      tfprof_log_<s>, the op log TF's logger writes from that
                      graph and run metadata (float_ops only); and
                      graph_noshapes.pb, the GraphDef without `_output_shapes`
                      (as `tf.io.write_graph(sess.graph_def, ...)` saves it).
  TF_VERSION

rtfprof_float_ops equals tf_float_ops except for one documented family: a
shape that TF's function asserts to be fully defined but its formula does
not use.  The Conv2D, Conv3D, DepthwiseConv2dNative and Dilation2D functions
assert the *input* shape, so a conv whose output shape is known but whose
input's is not (the first conv on a placeholder fed with an unknown batch
size, its output completed from run metadata) gets no float_ops from TF;
Mean's asserts its output shape, which its formula multiplies by 0.  rtfprof
counts these nodes; the expected value is what TF's function computes for
the same case built with every shape known, in a scratch graph.
"""
import importlib
import os
import sys
from pathlib import Path

# Must be set before TensorFlow is imported.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from google.protobuf import text_format  # noqa: E402
from tensorflow.core.protobuf import rewriter_config_pb2  # noqa: E402
from tensorflow.python.framework import ops  # noqa: E402
from tensorflow.python.profiler import tfprof_logger  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "testdata" / "flops"
TF_ROOT = Path(tf.__file__).resolve().parent

# Ops whose TF function asserts a shape its formula does not use: the
# input of convolutions, the output of Mean.
UNUSED_SHAPE = {"Conv2D", "Conv3D", "DepthwiseConv2dNative", "Dilation2D",
                "Mean"}


# --------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------

def import_registering_modules():
    """Imports every module of the installed package that registers stats."""
    imported = []
    for path in sorted(TF_ROOT.rglob("*.py")):
        rel = path.relative_to(TF_ROOT.parent)
        if path.name.endswith("_test.py") or rel.as_posix() in (
                "tensorflow/python/framework/ops.py",):
            continue
        try:
            text = path.read_text(errors="ignore")
        except OSError:
            continue
        if "RegisterStatistics" not in text:
            continue
        module = ".".join(rel.with_suffix("").parts)
        importlib.import_module(module)
        imported.append(module)
    return imported


def registered_flops_ops():
    """{op type: 'module.function'} for every "flops" registration."""
    import_registering_modules()
    out = {}
    for key in ops._stats_registry.list():
        op_type, stat = key.rsplit(",", 1)
        if stat != "flops":
            continue
        f = ops._stats_registry.lookup(key)
        out[op_type] = "%s.%s" % (f.__module__, f.__qualname__)
    return out


# --------------------------------------------------------------------------
# Case graph
# --------------------------------------------------------------------------

def P(shape, dtype=tf.float32):
    """A placeholder input of `shape` (None: unknown rank)."""
    return ("placeholder", dtype, shape)


def C(value, dtype=tf.int32):
    """A constant input."""
    return ("const", dtype, value)


def REF(shape):
    """A ref variable (VariableV2), for AssignAdd/AssignSub."""
    return ("ref", tf.float32, shape)


def make_inputs(name, specs):
    tensors = []
    for i, (kind, dtype, arg) in enumerate(specs):
        n = "%s/in%d" % (name, i)
        if kind == "placeholder":
            tensors.append(tf1.placeholder(dtype, arg, name=n))
        elif kind == "const":
            tensors.append(tf.constant(arg, dtype=dtype, name=n))
        else:
            tensors.append(tf1.Variable(tf.zeros(arg), use_resource=False,
                                        name=n))
    return tensors


class Case:
    def __init__(self, name, build, specs, out_shape=None, full_specs=None):
        self.name = name          # node name of the case op
        self.build = build        # (input tensors, name) -> tensor or op
        self.specs = specs        # input specs (P, C, REF)
        self.out_shape = out_shape    # set_shape on output 0 (statically known)
        self.full_specs = full_specs  # the same case with every shape known


def op_of(result):
    if isinstance(result, (list, tuple)):
        result = result[0]
    return result if isinstance(result, tf.Operation) else result.op


def build_case(case, specs):
    tensors = make_inputs(case.name, specs)
    op = op_of(case.build(tensors, case.name))
    assert op.name == case.name, (op.name, case.name)
    if case.out_shape is not None:
        op.outputs[0].set_shape(case.out_shape)
    return op


R = tf.raw_ops
NHWC_S1 = dict(strides=[1, 1, 1, 1], padding="SAME")


def cases():
    out = []

    def add(name, build, specs, **kw):
        out.append(Case(name, build, specs, **kw))

    # Unary ops: elements of input 0.
    for t in ["Reciprocal", "Square", "Rsqrt", "Log", "Neg"]:
        add(t, lambda x, n, t=t: getattr(R, t)(x=x[0], name=n), [P([3, 4])])
    add("Square/scalar", lambda x, n: R.Square(x=x[0], name=n), [P([])])
    add("Square/partial", lambda x, n: R.Square(x=x[0], name=n),
        [P([None, 4])])
    add("Square/unknown_rank", lambda x, n: R.Square(x=x[0], name=n),
        [P(None)])
    add("Square/empty", lambda x, n: R.Square(x=x[0], name=n), [P([0, 4])])
    # Input 0 is output slot 1 of a SplitV: [2,4] and [3,4].
    add("Square/slot1",
        lambda x, n: R.Square(
            x=R.SplitV(value=x[0], size_splits=x[1], axis=x[2], num_split=2,
                       name=n + "/split")[1], name=n),
        [P([5, 4]), C([2, 3]), C(0)])
    add("Softmax", lambda x, n: R.Softmax(logits=x[0], name=n), [P([2, 5])])
    add("L2Loss", lambda x, n: R.L2Loss(t=x[0], name=n), [P([3, 4])])
    add("L2Loss/empty", lambda x, n: R.L2Loss(t=x[0], name=n), [P([0])])
    for t in ["AssignAdd", "AssignSub"]:
        add(t, lambda x, n, t=t: getattr(R, t)(ref=x[0], value=x[1], name=n),
            [REF([3, 4]), P([3, 4])])

    # Binary element-wise ops: elements of the (broadcast) output.
    for t in ["Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum",
              "Pow", "SquaredDifference", "GreaterEqual", "Greater",
              "LessEqual", "Less", "Equal", "NotEqual"]:
        add(t, lambda x, n, t=t: getattr(R, t)(x=x[0], y=x[1], name=n),
            [P([3, 1]), P([1, 4])])
    add("Mul/partial", lambda x, n: R.Mul(x=x[0], y=x[1], name=n),
        [P([None, 4]), P([4])])
    add("Add/scalar", lambda x, n: R.Add(x=x[0], y=x[1], name=n),
        [P([]), P([])])
    add("RsqrtGrad", lambda x, n: R.RsqrtGrad(y=x[0], dy=x[1], name=n),
        [P([3, 4]), P([3, 4])])

    # Reductions: elements in, minus (Mean: plus nothing for) elements out.
    for t in ["Mean", "Sum"]:
        add(t, lambda x, n, t=t: getattr(R, t)(input=x[0], axis=x[1],
                                               name=n),
            [P([3, 4, 5]), C(1)])
    add("Sum/keep_dims",
        lambda x, n: R.Sum(input=x[0], axis=x[1], keep_dims=True, name=n),
        [P([3, 4, 5]), C([0, 2])])
    add("Sum/all", lambda x, n: R.Sum(input=x[0], axis=x[1], name=n),
        [P([3, 4]), C([0, 1])])
    add("Sum/empty", lambda x, n: R.Sum(input=x[0], axis=x[1], name=n),
        [P([3, 0]), C(1)])
    add("Sum/partial", lambda x, n: R.Sum(input=x[0], axis=x[1], name=n),
        [P([None, 4]), C(1)])
    # Mean's output shape (times 0 in its formula) unknown: axis fed.
    add("Mean/partial_out",
        lambda x, n: R.Mean(input=x[0], axis=x[1], name=n),
        [P([3, 4]), P([], tf.int32)], full_specs=[P([3, 4]), C(1)])
    for t in ["ArgMax", "ArgMin"]:
        add(t, lambda x, n, t=t: getattr(R, t)(input=x[0], dimension=x[1],
                                               name=n),
            [P([3, 4, 5]), C(2)])
    add("BiasAddGrad", lambda x, n: R.BiasAddGrad(out_backprop=x[0], name=n),
        [P([2, 3, 4])])
    add("BiasAddGrad/nchw",
        lambda x, n: R.BiasAddGrad(out_backprop=x[0], data_format="NCHW",
                                   name=n),
        [P([2, 4, 3, 3])])
    add("BiasAddGrad/empty",
        lambda x, n: R.BiasAddGrad(out_backprop=x[0], name=n), [P([0, 3])])

    # Pooling: NHWC only.
    pool = dict(ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    for t in ["MaxPool", "AvgPool"]:
        add(t, lambda x, n, t=t: pool_op(t, x[0], n, **pool),
            [P([2, 8, 8, 3])])
    add("AvgPool/same_k3",
        lambda x, n: pool_op("AvgPool", x[0], n, ksize=[1, 3, 3, 1],
                             strides=[1, 2, 2, 1], padding="SAME"),
        [P([2, 7, 7, 3])])
    add("MaxPool/nchw",
        lambda x, n: pool_op("MaxPool", x[0], n, data_format="NCHW",
                             ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2],
                             padding="VALID"),
        [P([2, 3, 8, 8])])
    add("AvgPoolGrad",
        lambda x, n: R.AvgPoolGrad(orig_input_shape=x[0], grad=x[1], name=n,
                                   **pool),
        [C([2, 8, 8, 3]), P([2, 4, 4, 3])])
    add("AvgPoolGrad/nchw",
        lambda x, n: R.AvgPoolGrad(orig_input_shape=x[0], grad=x[1], name=n,
                                   data_format="NCHW", ksize=[1, 1, 2, 2],
                                   strides=[1, 1, 2, 2], padding="VALID"),
        [C([2, 3, 8, 8]), P([2, 3, 4, 4])])
    add("MaxPoolGrad",
        lambda x, n: R.MaxPoolGrad(orig_input=x[0], orig_output=x[1],
                                   grad=x[2], name=n, **pool),
        [P([2, 8, 8, 3]), P([2, 4, 4, 3]), P([2, 4, 4, 3])])
    add("MaxPoolGrad/nchw",
        lambda x, n: R.MaxPoolGrad(orig_input=x[0], orig_output=x[1],
                                   grad=x[2], name=n, data_format="NCHW",
                                   ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2],
                                   padding="VALID"),
        [P([2, 3, 8, 8]), P([2, 3, 4, 4]), P([2, 3, 4, 4])])

    # Convolutions.
    conv = lambda x, n, **kw: R.Conv2D(input=x[0], filter=x[1], name=n,  # noqa
                                       **{**NHWC_S1, **kw})
    add("Conv2D", conv, [P([2, 8, 8, 3]), P([3, 3, 3, 4])])
    add("Conv2D/valid_s2",
        lambda x, n: conv(x, n, strides=[1, 2, 2, 1], padding="VALID"),
        [P([2, 9, 9, 3]), P([3, 3, 3, 4])])
    add("Conv2D/nchw",
        lambda x, n: conv(x, n, data_format="NCHW"),
        [P([2, 3, 8, 8]), P([3, 3, 3, 4])])
    add("Conv2D/out_partial", conv, [P([None, 8, 8, 3]), P([3, 3, 3, 4])])
    add("Conv2D/in_partial", conv, [P([None, 8, 8, 3]), P([3, 3, 3, 4])],
        out_shape=[2, 8, 8, 4],
        full_specs=[P([2, 8, 8, 3]), P([3, 3, 3, 4])])
    conv3d = lambda x, n: R.Conv3D(input=x[0], filter=x[1], name=n,  # noqa
                                   strides=[1, 1, 1, 1, 1], padding="SAME")
    add("Conv3D", conv3d, [P([1, 4, 6, 6, 2]), P([2, 3, 3, 2, 5])])
    add("Conv3D/in_partial", conv3d,
        [P([None, 4, 6, 6, 2]), P([2, 3, 3, 2, 5])], out_shape=[1, 4, 6, 6, 5],
        full_specs=[P([1, 4, 6, 6, 2]), P([2, 3, 3, 2, 5])])
    dw = lambda x, n: R.DepthwiseConv2dNative(  # noqa
        input=x[0], filter=x[1], name=n, **NHWC_S1)
    add("DepthwiseConv2dNative", dw, [P([2, 8, 8, 3]), P([3, 3, 3, 2])])
    add("DepthwiseConv2dNative/in_partial", dw,
        [P([None, 8, 8, 3]), P([3, 3, 3, 2])], out_shape=[2, 8, 8, 6],
        full_specs=[P([2, 8, 8, 3]), P([3, 3, 3, 2])])
    dil = lambda x, n: R.Dilation2D(  # noqa
        input=x[0], filter=x[1], strides=[1, 1, 1, 1], rates=[1, 1, 1, 1],
        padding="VALID", name=n)
    add("Dilation2D", dil, [P([1, 8, 8, 3]), P([3, 3, 3])])
    add("Dilation2D/in_partial", dil, [P([None, 8, 8, 3]), P([3, 3, 3])],
        out_shape=[1, 6, 6, 3],
        full_specs=[P([1, 8, 8, 3]), P([3, 3, 3])])

    bpi = lambda x, n, **kw: R.Conv2DBackpropInput(  # noqa
        input_sizes=x[0], filter=x[1], out_backprop=x[2], name=n,
        **{"strides": [1, 2, 2, 1], "padding": "SAME", **kw})
    add("Conv2DBackpropInput", bpi,
        [C([2, 8, 8, 3]), P([3, 3, 3, 4]), P([2, 4, 4, 4])])
    # 2 * 25 * 4 / (1 * 9) is not an integer: TF truncates.
    add("Conv2DBackpropInput/fraction",
        lambda x, n: bpi(x, n, strides=[1, 3, 3, 1], padding="VALID"),
        [C([1, 5, 5, 1]), P([2, 2, 1, 1]), P([1, 2, 2, 1])])
    # Beyond 2^53, TF's true division rounds the exact quotient to a double
    # before int(); rounding the product first gives another number here.
    huge = 2 ** 25 + 1
    add("Conv2DBackpropInput/huge",
        lambda x, n: bpi(x, n, strides=[1, 1, 5, 1], padding="VALID"),
        [C([1, huge, huge, 5]), P([1, 1, 5, 7]),
         P([1, huge, -(-huge // 5), 7])])
    add("Conv2DBackpropInput/nchw",
        lambda x, n: bpi(x, n, strides=[1, 1, 2, 2], data_format="NCHW"),
        [C([2, 3, 8, 8]), P([3, 3, 3, 4]), P([2, 4, 4, 4])])
    bpf = lambda x, n, **kw: R.Conv2DBackpropFilter(  # noqa
        input=x[0], filter_sizes=x[1], out_backprop=x[2], name=n,
        **{"strides": [1, 2, 2, 1], "padding": "SAME", **kw})
    add("Conv2DBackpropFilter", bpf,
        [P([2, 8, 8, 3]), C([3, 3, 3, 4]), P([2, 4, 4, 4])])
    add("Conv2DBackpropFilter/fraction",
        lambda x, n: bpf(x, n, strides=[1, 3, 3, 1], padding="VALID"),
        [P([1, 5, 5, 1]), C([2, 2, 1, 1]), P([1, 2, 2, 1])])
    add("Conv2DBackpropFilter/huge",
        lambda x, n: bpf(x, n, strides=[1, 1, 5, 1], padding="VALID"),
        [P([1, huge, huge, 5]), C([1, 1, 5, 7]),
         P([1, huge, -(-huge // 5), 7])])
    add("Conv2DBackpropFilter/nchw",
        lambda x, n: bpf(x, n, strides=[1, 1, 2, 2], data_format="NCHW"),
        [P([2, 3, 8, 8]), C([3, 3, 3, 4]), P([2, 4, 4, 4])])

    add("BiasAdd", lambda x, n: R.BiasAdd(value=x[0], bias=x[1], name=n),
        [P([2, 3, 4]), P([4])])
    add("BiasAdd/nchw",
        lambda x, n: R.BiasAdd(value=x[0], bias=x[1], data_format="NCHW",
                               name=n),
        [P([2, 4, 3, 3]), P([4])])

    # AddN: elements of input 0 times (inputs - 1), control inputs included.
    add("AddN", lambda x, n: R.AddN(inputs=x, name=n),
        [P([3, 4]), P([3, 4]), P([3, 4])])
    add("AddN/one", lambda x, n: R.AddN(inputs=x, name=n), [P([3, 4])])
    add("AddN/control", add_n_with_control, [P([3, 4]), P([3, 4]), P([2])])

    # Matrix products.
    add("MatMul", lambda x, n: R.MatMul(a=x[0], b=x[1], name=n),
        [P([3, 4]), P([4, 5])])
    add("MatMul/transpose_a",
        lambda x, n: R.MatMul(a=x[0], b=x[1], transpose_a=True, name=n),
        [P([4, 3]), P([4, 5])])
    add("MatMul/transpose_b",
        lambda x, n: R.MatMul(a=x[0], b=x[1], transpose_b=True, name=n),
        [P([3, 4]), P([5, 4])])
    add("MatMul/partial", lambda x, n: R.MatMul(a=x[0], b=x[1], name=n),
        [P([None, 4]), P([4, 5])])
    add("BatchMatMul", lambda x, n: R.BatchMatMul(x=x[0], y=x[1], name=n),
        [P([2, 3, 4]), P([2, 4, 5])])
    # TF reads `transpose_a`, which BatchMatMul* do not have (they have
    # adj_x): k is always the last dim of input 0.
    add("BatchMatMul/adj_x",
        lambda x, n: R.BatchMatMul(x=x[0], y=x[1], adj_x=True, name=n),
        [P([2, 4, 3]), P([2, 4, 5])])
    add("BatchMatMulV2",
        lambda x, n: R.BatchMatMulV2(x=x[0], y=x[1], name=n),
        [P([2, 1, 3, 4]), P([5, 4, 6])])
    add("BatchMatMulV2/adj_x",
        lambda x, n: R.BatchMatMulV2(x=x[0], y=x[1], adj_x=True, name=n),
        [P([2, 4, 3]), P([2, 4, 5])])
    add("BatchMatMulV3",
        lambda x, n: R.BatchMatMulV3(x=x[0], y=x[1], Tout=tf.float32,
                                     name=n),
        [P([2, 3, 4]), P([2, 4, 5])])
    return out


def pool_op(t, x, name, **kw):
    if t == "MaxPool":
        return R.MaxPool(input=x, name=name, **kw)
    return R.AvgPool(value=x, name=name, **kw)


def add_n_with_control(x, n):
    with tf1.get_default_graph().control_dependencies([x[2].op]):
        return R.AddN(inputs=x[:2], name=n)


def shape_str(shape):
    if shape.rank is None:
        return "?"
    return "x".join("?" if d is None else str(d) for d in shape.as_list()) \
        or "scalar"


ATTRS = ["data_format", "strides", "ksize", "padding", "transpose_a",
         "transpose_b", "adj_x", "keep_dims"]


def attr_str(op):
    out = []
    nd = op.node_def
    for a in ATTRS:
        if a not in nd.attr:
            continue
        v = nd.attr[a]
        kind = v.WhichOneof("value")
        if kind == "list":
            val = ",".join(str(i) for i in v.list.i)
        elif kind == "s":
            val = v.s.decode()
        elif kind == "b":
            val = str(v.b).lower()
        else:
            continue
        out.append("%s=%s" % (a, val))
    return " ".join(out)


def tf_logged(graph, run_meta=None):
    """{node: float_ops} exactly as tfprof's Python logger logs them."""
    logged, _ = tfprof_logger._get_logged_ops(
        graph, run_meta, add_trace=False, add_trainable_var=False)
    return {name: e.float_ops for name, e in logged.items() if e.float_ops}


def why_none(graph, op):
    try:
        stats = ops.get_stats_for_node_def(graph, op.node_def, "flops")
    except ValueError as e:
        return str(e).splitlines()[0]
    return "value %r" % (stats.value,)


def build_case_graph(registered):
    graph = tf.Graph()
    all_cases = cases()
    with graph.as_default():
        built = [(c, build_case(c, c.specs)) for c in all_cases]
    logged = tf_logged(graph)
    rows = []
    for case, op in built:
        tf_value = logged.get(op.name)
        rtfprof_value = tf_value
        reason = "" if tf_value is not None else why_none(graph, op)
        if case.full_specs is not None:
            # TF gives none; rtfprof counts what TF's own function counts
            # once the unused shape is known.
            assert tf_value is None and op.type in UNUSED_SHAPE
            scratch = tf.Graph()
            with scratch.as_default():
                twin = build_case(case, case.full_specs)
            rtfprof_value = tf_logged(scratch)[twin.name]
        inputs = [shape_str(t.shape) for t in op.inputs]
        rows.append((op.name, op.type, tf_value, rtfprof_value,
                     " ".join(inputs), attr_str(op), reason))
    covered = {r[1] for r in rows if r[2] is not None}
    missing = set(registered) - covered
    assert not missing, "no case with TF float_ops for %s" % sorted(missing)
    return graph.as_graph_def(add_shapes=True), rows


def write_cases(rows):
    fmt = lambda v: "-" if v is None else str(v)  # noqa: E731
    lines = ["# node\top\ttf_float_ops\trtfprof_float_ops\tinput_shapes\t"
             "attrs\ttf_gives_none_because"]
    for name, op, tf_v, rt_v, shapes, attrs, reason in rows:
        for field in (name, shapes, attrs, reason):
            assert "\t" not in field and "\n" not in field
        lines.append("\t".join([name, op, fmt(tf_v), fmt(rt_v), shapes,
                                attrs, reason]))
    (OUT / "cases.tsv").write_text("\n".join(lines) + "\n")


# --------------------------------------------------------------------------
# Traced CNN with batch norm
# --------------------------------------------------------------------------

def build_cnn_bn():
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(0)
        x = tf1.placeholder(tf.float32, [None, 16, 16, 3], name="images")
        y = tf1.placeholder(tf.float32, [None, 10], name="labels")
        h = x
        for i, c in enumerate([8, 16]):
            with tf1.variable_scope("conv%d" % i):
                w = tf1.get_variable("w", [3, 3, h.shape[-1], c])
                b = tf1.get_variable("b", [c])
                h = tf.nn.relu(tf.nn.bias_add(
                    tf.nn.conv2d(h, w, 1, "SAME"), b))
                mean, var = tf.nn.moments(h, [0, 1, 2])
                h = tf.nn.batch_normalization(h, mean, var, None, None, 1e-3)
                h = tf.nn.max_pool2d(h, 2, 2, "SAME")
        h = tf.reshape(h, [-1, 4 * 4 * 16])
        w = tf1.get_variable("fc/w", [256, 10])
        logits = tf.matmul(h, w)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
            labels=y, logits=logits))
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(0)
    feed = {x: rng.rand(4, 16, 16, 3), y: np.eye(10)[:4]}
    return graph, train, init, feed


def trace_cnn_bn(remapping):
    """Graph, run metadata and TF's op log for one Grappler setting."""
    graph, train, init, feed = build_cnn_bn()
    cfg = tf1.ConfigProto(inter_op_parallelism_threads=1,
                          intra_op_parallelism_threads=1)
    if not remapping:
        cfg.graph_options.rewrite_options.remapping = (
            rewriter_config_pb2.RewriterConfig.OFF)
    with tf1.Session(graph=graph, config=cfg) as sess:
        sess.run(init)
        sess.run(train, feed)
        rm = tf1.RunMetadata()
        sess.run(train, feed, run_metadata=rm, options=tf1.RunOptions(
            trace_level=tf1.RunOptions.FULL_TRACE))
    # Before the logger, which completes the graph's shapes in place.
    graph_def = graph.as_graph_def(add_shapes=True)
    op_log = tfprof_logger.merge_default_with_oplog(
        graph, run_meta=rm, add_trace=False, add_trainable_var=False)
    return graph_def, rm, op_log


def write_cnn_bn():
    d = OUT / "cnn_bn"
    d.mkdir(parents=True, exist_ok=True)
    graph_defs = []
    for setting, remapping in (("fused", True), ("unfused", False)):
        graph_def, rm, op_log = trace_cnn_bn(remapping)
        graph_defs.append(graph_def)
        (d / ("run_meta_" + setting)).write_bytes(rm.SerializeToString())
        (d / ("tfprof_log_" + setting)).write_bytes(op_log.SerializeToString())
        fused = sum("_FusedConv2D" in n.timeline_label
                    for dev in rm.step_stats.dev_stats for n in dev.node_stats)
        print("cnn_bn %s: %d float_ops entries, %d _FusedConv2D stats" % (
            setting, sum(1 for e in op_log.log_entries if e.float_ops),
            fused))
    assert graph_defs[0] == graph_defs[1], "the two builds differ"
    (d / "graph.pb").write_bytes(
        graph_defs[0].SerializeToString(deterministic=True))
    # As tf.io.write_graph(sess.graph_def, ...) saves it: no _output_shapes.
    for node in graph_defs[0].node:
        if "_output_shapes" in node.attr:
            del node.attr["_output_shapes"]
    (d / "graph_noshapes.pb").write_bytes(
        graph_defs[0].SerializeToString(deterministic=True))


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    registered = registered_flops_ops()
    lines = ["# Op types with a \"flops\" statistics function in TensorFlow "
             "%s's Python registry" % tf.__version__,
             "# (tools/gen_flops.py): <op type> <function>."]
    lines += ["%s %s" % (t, f) for t, f in sorted(registered.items())]
    (OUT / "registered_ops.txt").write_text("\n".join(lines) + "\n")
    graph_def, rows = build_case_graph(registered)
    (OUT / "graph.pbtxt").write_text(text_format.MessageToString(graph_def))
    (OUT / "graph.pb").write_bytes(
        graph_def.SerializeToString(deterministic=True))
    write_cases(rows)
    write_cnn_bn()
    (OUT / "TF_VERSION").write_text(tf.__version__ + "\n")
    print("%d registered types, %d cases (%d where TF gives none)" % (
        len(registered), len(rows), sum(r[2] is None for r in rows)))


if __name__ == "__main__":
    sys.exit(main())
