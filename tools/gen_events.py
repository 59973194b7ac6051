#!/usr/bin/env python3
"""Build rtfprof's TensorBoard event-file fixtures and their golden outputs.

    /work/venvs/tf/bin/python tools/gen_events.py             # everything (~1 min)
    /work/venvs/tf/bin/python tools/gen_events.py --golden-only
                          # keep the event files, redo testdata/events/golden/

Needs a Python with TensorFlow; CI only reads the files written here.

Fixtures (testdata/events/, one directory per TensorBoard run):

    tutorial/   a TF1 tutorial-style training run in graph mode (the shape of
                TensorFlow's mnist_with_summaries.py): a small CNN on MNIST-
                shaped random data, Adam, `loss`/`accuracy` scalar summaries
                every step, `FileWriter(logdir, sess.graph)`, and every other
                step run with FULL_TRACE and logged with
                `writer.add_run_metadata(run_metadata, "step%d" % i)`.  Steps
                0-2 go to one event file (after the graph and meta graph);
                then the writer is closed and reopened, which starts a second
                file, for steps 3-5.  The files are renamed
                to fixed names (`events.out.tfevents.<time>.<host>` holds the
                clock and host name otherwise), in time order.
    summary_run_metadata/
                one traced step of a small MLP written with TF2's summary
                writer: the graph with `tf.summary.graph`, the RunMetadata as
                a `graph_run_metadata` summary (what `trace_export` writes
                with profiler=True), so that this plugin's run metadata with
                step stats is read too.
    tutorial.tfprof_log
                the tutorial graph's OpLogProto (tfprof_logger, float ops and
                `_trainable_variables`, no code traces), for --op_log_path.
    tf2_trace/  TF2's own tracing, as the "Graphs in TensorBoard" guide does
                it: `tf.summary.trace_on(graph=True)` around a tf.function,
                `trace_export` (plugin `graph_run_metadata_graph`), then the
                same with profiler=True (plugin `graph_run_metadata`).  Both
                hold graphs only, no step stats (TF2 keeps those in profiler
                traces): the input of rtfprof's message saying so.

Goldens (testdata/events/golden/): for each case of CASES, what rtfprof must
print.  The graph and run metadata are taken out of the event files by
TensorFlow's own reader (`tf.compat.v1.train.summary_iterator`): the newest
`graph_def` event, then every run metadata in file order (files in name
order), kept if its tag matches `--events_tags` (whole tag).  tfprof's engine
(`_pywrap_tfprof`, as in tools/gen_golden.py) is fed exactly those bytes and
makes the coverage lines and the view.  The start-up lines are the tfprof
CLI's, with rtfprof's list of steps after the first two:

    step <i>: "<tag>" (<event file name>)

`cases.txt` lists `<case> <view> <flags...>` with paths relative to
testdata/, as testdata/golden/cases.txt does.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_golden as G  # noqa: E402  (sets TF_ENABLE_ONEDNN_OPTS, imports TF)

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.framework import graph_pb2  # noqa: E402
from tensorflow.core.protobuf import config_pb2  # noqa: E402
from tensorflow.core.protobuf import meta_graph_pb2  # noqa: E402
from tensorflow.python.util import _pywrap_tfprof as P  # noqa: E402

tf1 = tf.compat.v1
EVENTS = G.TESTDATA / "events"
GOLDEN = EVENTS / "golden"
TUTORIAL_STEPS = 6
# The step at which the writer is closed and reopened (a new event file).
RESUME_AT = 3
# The tutorial graph's OpLogProto, beside its run directory.
TUTORIAL_OP_LOG = "tutorial.tfprof_log"
# Fixed event-file names: (first file, resumed file).
TUTORIAL_FILES = ["events.out.tfevents.1700000000.tutorial",
                  "events.out.tfevents.1700000060.tutorial"]


# --------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------

def build_tutorial():
    """A small MNIST-style CNN, as in TF1's tutorials: one convolution
    layer, one dense layer, Adam."""
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(5)
        with tf1.name_scope("input"):
            x = tf1.placeholder(tf.float32, [16, 28, 28, 1], name="x-input")
            y = tf1.placeholder(tf.int64, [16], name="y-input")
        with tf1.variable_scope("conv1"):
            k = tf1.get_variable("weights", [5, 5, 1, 8])
            b = tf1.get_variable("biases", [8],
                                 initializer=tf1.constant_initializer(0.1))
            h = tf.nn.relu(tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME") + b)
            h = tf.nn.max_pool2d(h, 2, 2, "SAME")
        with tf1.variable_scope("fc"):
            h = tf.reshape(h, [16, 14 * 14 * 8])
            w = tf1.get_variable("weights", [14 * 14 * 8, 10])
            b = tf1.get_variable("biases", [10],
                                 initializer=tf1.constant_initializer(0.1))
            logits = tf.matmul(h, w) + b
        with tf1.name_scope("cross_entropy"):
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=logits))
        tf1.summary.scalar("cross_entropy", loss)
        with tf1.name_scope("train"):
            train = tf1.train.AdamOptimizer(1e-3).minimize(loss)
        with tf1.name_scope("accuracy"):
            correct = tf.equal(tf.argmax(logits, 1), y)
            accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
        tf1.summary.scalar("accuracy", accuracy)
        merged = tf1.summary.merge_all()
        init = tf1.global_variables_initializer()
    rng = np.random.RandomState(5)
    feed = {x: rng.rand(16, 28, 28, 1).astype(np.float32),
            y: np.arange(16) % 10}
    return g, train, merged, init, feed


def newest_file(logdir, before):
    new = sorted(set(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))
                 - before)
    assert len(new) == 1, new
    return new[0]


def write_tutorial():
    logdir = EVENTS / "tutorial"
    shutil.rmtree(logdir, ignore_errors=True)
    logdir.mkdir(parents=True)
    graph, train, merged, init, feed = build_tutorial()
    with tf1.Session(graph=graph, config=G.session_config()) as sess:
        sess.run(init)
        with graph.as_default():
            writer = tf1.summary.FileWriter(str(logdir), sess.graph)
        for i in range(TUTORIAL_STEPS):
            if i == RESUME_AT:
                writer.close()
                first = newest_file(str(logdir), set())
                os.rename(first, logdir / TUTORIAL_FILES[0])
                # A new file name needs a new second on the clock.
                time.sleep(1.1)
                writer.reopen()
            if i % 2 == 0:
                run_options = tf1.RunOptions(
                    trace_level=tf1.RunOptions.FULL_TRACE)
                run_metadata = tf1.RunMetadata()
                summary, _ = sess.run([merged, train], feed,
                                      options=run_options,
                                      run_metadata=run_metadata)
                assert run_metadata.step_stats.dev_stats
                writer.add_run_metadata(run_metadata, "step%d" % i)
            else:
                summary, _ = sess.run([merged, train], feed)
            writer.add_summary(summary, i)
        writer.close()
    second = newest_file(str(logdir), {str(logdir / TUTORIAL_FILES[0])})
    os.rename(second, logdir / TUTORIAL_FILES[1])
    # float_ops and _trainable_variables types, without code traces (which
    # would be four times the size of the log).
    op_log = G.tfprof_logger.merge_default_with_oplog(
        graph, add_trace=False, add_trainable_var=True)
    assert any(e.float_ops for e in op_log.log_entries)
    (EVENTS / TUTORIAL_OP_LOG).write_bytes(op_log.SerializeToString())


def tf2_worker():
    """The TF2 fixtures, in a process of their own: eager execution on, and
    the profiler started by trace_on(profiler=True) ends with the process."""
    # summary_run_metadata: a traced session step, written by TF2's writer.
    g = tf.Graph()
    with g.as_default():
        tf1.set_random_seed(6)
        x = tf1.placeholder(tf.float32, [4, 8], name="x")
        h = x
        for i, (a, b) in enumerate([(8, 16), (16, 4)]):
            with tf1.variable_scope("dense%d" % (i + 1)):
                w = tf1.get_variable("kernel", [a, b])
                bias = tf1.get_variable("bias", [b],
                                        initializer=tf1.zeros_initializer())
                h = tf.nn.relu(tf.matmul(h, w) + bias)
        out = tf.reduce_sum(h, name="total")
        init = tf1.global_variables_initializer()
    with tf1.Session(graph=g, config=G.session_config()) as sess:
        sess.run(init)
        rm = tf1.RunMetadata()
        sess.run(out, {x: np.ones([4, 8], np.float32)},
                 options=tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE),
                 run_metadata=rm)
        assert rm.step_stats.dev_stats
    from tensorflow.python.ops import summary_ops_v2
    logdir = EVENTS / "summary_run_metadata"
    shutil.rmtree(logdir, ignore_errors=True)
    writer = tf.summary.create_file_writer(str(logdir))
    with writer.as_default():
        tf.summary.graph(g.as_graph_def(add_shapes=True))
        summary_ops_v2.run_metadata("forward", rm, step=0)
    writer.close()
    (path,) = glob.glob(str(logdir / "events.out.tfevents.*"))
    os.rename(path, logdir / "events.out.tfevents.1700000000.summary.v2")

    # tf2_trace: TF2's trace_on/trace_export, graphs only.
    logdir = EVENTS / "tf2_trace"
    shutil.rmtree(logdir, ignore_errors=True)

    @tf.function
    def dense(x, w, b):
        return tf.nn.relu(tf.matmul(x, w) + b)

    args = (tf.ones([4, 8]), tf.ones([8, 3]), tf.zeros([3]))
    writer = tf.summary.create_file_writer(str(logdir))
    tf.summary.trace_on(graph=True)
    dense(*args)
    with writer.as_default():
        tf.summary.trace_export(name="dense_trace", step=0)
    with tempfile.TemporaryDirectory() as profile_dir:
        tf.summary.trace_on(graph=True, profiler=True,
                            profiler_outdir=profile_dir)
        dense(*args)
        with writer.as_default():
            tf.summary.trace_export(name="dense_profile", step=1)
    writer.close()
    (path,) = glob.glob(str(logdir / "events.out.tfevents.*"))
    os.rename(path, logdir / "events.out.tfevents.1700000000.trace.v2")


def build_fixtures():
    tf1.disable_eager_execution()
    write_tutorial()
    subprocess.run([sys.executable, __file__, "--tf2-worker"], check=True)
    check_tf2_trace()


# --------------------------------------------------------------------------
# Reading event files with TensorFlow's reader
# --------------------------------------------------------------------------

RUN_METADATA_PLUGINS = ("graph_run_metadata", "graph_run_metadata_graph")


def event_files(path):
    if path.is_file():
        return [path]
    return sorted(path.glob("events.out.tfevents.*"))


def read_events(path):
    """(newest graph bytes or b"", [(tag, file name, RunMetadata bytes)])."""
    graph, meta_graph, run_metas = b"", b"", []
    for f in event_files(path):
        for e in tf1.train.summary_iterator(str(f)):
            what = e.WhichOneof("what")
            if what == "graph_def":
                graph = e.graph_def
            elif what == "meta_graph_def":
                mg = meta_graph_pb2.MetaGraphDef.FromString(e.meta_graph_def)
                meta_graph = mg.graph_def.SerializeToString()
            elif what == "tagged_run_metadata":
                t = e.tagged_run_metadata
                run_metas.append((t.tag, f.name, t.run_metadata))
            elif what == "summary":
                for v in e.summary.value:
                    if (v.metadata.plugin_data.plugin_name
                            in RUN_METADATA_PLUGINS):
                        (data,) = v.tensor.string_val
                        run_metas.append((v.tag, f.name, data))
    return graph or meta_graph, run_metas


def has_step_stats(rm_bytes):
    rm = config_pb2.RunMetadata.FromString(rm_bytes)
    return len(rm.step_stats.dev_stats) > 0


def check_tf2_trace():
    graph, run_metas = read_events(EVENTS / "tf2_trace")
    assert not graph and len(run_metas) == 2, (len(graph), len(run_metas))
    assert not any(has_step_stats(rm) for _, _, rm in run_metas)
    plugins = set()
    for f in event_files(EVENTS / "tf2_trace"):
        for e in tf1.train.summary_iterator(str(f)):
            for v in e.summary.value:
                plugins.add(v.metadata.plugin_data.plugin_name)
    assert plugins == set(RUN_METADATA_PLUGINS), plugins


# --------------------------------------------------------------------------
# Golden outputs
# --------------------------------------------------------------------------

def C(name, view, path, flags=()):
    return (name, view, [("events_path", path)] + list(flags))


CASES = [
    C("tutorial.scope.default", "scope", "events/tutorial"),
    C("tutorial.scope.bytes_micros", "scope", "events/tutorial",
      [("select", "bytes,peak_bytes,micros,params,occurrence"),
       ("order_by", "micros"), ("max_depth", "4")]),
    C("tutorial.scope.run", "scope", "events",
      [("events_run", "tutorial"), ("select", "micros,occurrence"),
       ("max_depth", "3")]),
    C("tutorial.scope.tags", "scope", "events/tutorial",
      [("events_tags", "step[24]"), ("select", "micros,occurrence"),
       ("max_depth", "3")]),
    C("tutorial.graph.step2", "graph", "events/tutorial",
      [("step", "2"), ("select", "micros,bytes,occurrence"),
       ("start_name_regexes", "train/Adam"), ("max_depth", "4")]),
    C("tutorial.op.micros", "op", "events/tutorial",
      [("select", "micros,bytes,occurrence,input_shapes"),
       ("order_by", "micros")]),
    C("tutorial.op.first_file_step0", "op",
      "events/tutorial/" + TUTORIAL_FILES[0],
      [("step", "0"), ("select", "micros,bytes,params"),
       ("output", "file:outfile=op.txt")]),
    C("tutorial.scope.op_log", "scope", "events/tutorial",
      [("op_log_path", "events/" + TUTORIAL_OP_LOG),
       ("select", "float_ops,params,micros"), ("order_by", "float_ops"),
       ("max_depth", "3")]),
    C("tutorial.op.trainable", "op", "events/tutorial",
      [("op_log_path", "events/" + TUTORIAL_OP_LOG),
       ("account_type_regexes", "_trainable_variables"),
       ("select", "params,bytes,micros,occurrence")]),
    C("tutorial.advise", "advise", "events/tutorial"),
    C("summary_run_metadata.scope", "scope", "events/summary_run_metadata",
      [("select", "micros,bytes,params,occurrence"), ("max_depth", "100")]),
]


def resolve_events(flags):
    """The graph and run metadata rtfprof must read for these flags."""
    path = G.TESTDATA / flags["events_path"]
    if "events_run" in flags:
        path = path / flags["events_run"]
    graph, run_metas = read_events(path)
    pattern = flags.get("events_tags")
    kept = [(tag, name, rm) for tag, name, rm in run_metas
            if pattern is None or re.fullmatch(pattern, tag)]
    # rtfprof lists run metadata without step stats apart (not as steps);
    # the cases here have none.
    assert all(has_step_stats(rm) for _, _, rm in kept)
    return graph, kept


def startup_lines(run_metas):
    lines = [b"Reading Files...\n",
             b"Try to use a single --profile_path instead of "
             b"graph_path,op_log_path,run_meta_path\n"]
    for i, (tag, name, _) in enumerate(run_metas):
        assert re.fullmatch(r"[ -~]*", tag) and '"' not in tag \
            and "\\" not in tag, tag
        lines.append(b'step %d: "%s" (%s)\n' % (i, tag.encode(), name.encode()))
    return b"".join(lines)


def run_case(view, flags, tmpdir):
    """(stdout, file or None, filtered engine stderr), as gen_golden's."""
    outfile = os.path.join(tmpdir, "view.txt")
    if os.path.exists(outfile):
        os.remove(outfile)
    opts = G.build_options(list(flags.items()), outfile)
    graph, run_metas = resolve_events(flags)
    header = startup_lines(run_metas)
    with G.Capture(2) as err, G.Capture(1) as out:
        try:
            op_log = (G.TESTDATA / flags["op_log_path"]).read_bytes() \
                if "op_log_path" in flags else b""
            assert P.NewProfiler(graph, op_log)
            for i, (_, _, rm) in enumerate(run_metas):
                header += b"run graph coverage: %.2f\n" % P.AddStep(i, b"", rm, b"")
            G.profile_view(P, view, opts)
        finally:
            P.DeleteProfiler()
    text = Path(outfile).read_bytes() if os.path.exists(outfile) else b""
    stderr = b"".join(l for l in err.data.splitlines(keepends=True)
                      if not G.is_tf_log_line(l))
    if flags.get("output", "").startswith("file:"):
        return header + out.data, text, stderr
    return header + out.data + text, None, stderr


def build_golden():
    shutil.rmtree(GOLDEN, ignore_errors=True)
    GOLDEN.mkdir(parents=True)
    (GOLDEN / "TF_VERSION").write_text(tf.__version__ + "\n")
    lines = [
        "# Golden cases for rtfprof's --events_path, generated by",
        "# tools/gen_events.py with TensorFlow %s; do not edit by hand." %
        tf.__version__,
        "# Format as testdata/golden/cases.txt; goldens in events/golden/.",
    ]
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, view, flags in CASES:
            lines.append(" ".join([name, view] +
                                  ["--%s=%s" % kv for kv in flags]))
            stdout, filedata, stderr = run_case(view, dict(flags), tmpdir)
            (GOLDEN / (name + ".out")).write_bytes(stdout)
            if filedata is not None:
                (GOLDEN / (name + ".file")).write_bytes(filedata)
            if stderr.strip():
                (GOLDEN / (name + ".err")).write_bytes(stderr)
    (EVENTS / "cases.txt").write_text("\n".join(lines) + "\n")
    total = sum(p.stat().st_size for p in EVENTS.rglob("*") if p.is_file())
    assert total < 400 << 10, "testdata/events is %d bytes" % total
    return len(CASES), total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--golden-only", action="store_true",
                    help="keep the event files, regenerate the goldens")
    ap.add_argument("--tf2-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    t0 = time.time()
    if args.tf2_worker:
        tf2_worker()
        return
    if not args.golden_only:
        build_fixtures()
    cases, total = build_golden()
    print("%d cases, testdata/events %d bytes, %.1fs"
          % (cases, total, time.time() - t0))


if __name__ == "__main__":
    main()
