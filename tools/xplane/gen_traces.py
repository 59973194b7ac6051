#!/usr/bin/env python3
"""Record the real XPlane traces under testdata/xplane/ (and the bench trace).

    /work/venvs/tf/bin/python tools/xplane/gen_traces.py            # all fixtures
    /work/venvs/tf/bin/python tools/xplane/gen_traces.py tf_loop keras_fit
    /work/venvs/tf/bin/python tools/xplane/gen_traces.py --bench OUT_DIR \
        [--bench-steps N] [--bench-blocks N]
                                # the large bench trace (not committed)

TF fixtures need a Python with TensorFlow (CPU); `jax_jit` needs one with
jax[cpu], given by --jax-python (default /work/venvs/xprof/bin/python).  Each
fixture runs in its own subprocess (`--one NAME --out DIR`) so that no
profiler or tf.function state leaks from one into the next.  Regenerate the
XProf goldens afterwards (tools/xplane/xprof_goldens.py): the traces hold
real timings, which change on every run.

Every trace is kept exactly as the profiler wrote it; only its path is
fixed: the profiler writes `<logdir>/plugins/profile/<timestamp>/<hostname>
.xplane.pb`, and this script moves that file to
`testdata/xplane/<fixture>/plugins/profile/run0/host0.xplane.pb` and drops
everything else the run wrote (TensorBoard event files).  The XSpace's own
`hostnames` field still names the machine that recorded it.

Fixtures (TF with TF_ENABLE_ONEDNN_OPTS=0, 1 inter-op and 1 intra-op thread,
fixed seeds; JAX on CPU):

  tf_loop    custom training loop: a `tf.function` step (2-layer dense model,
             GradientTape, assign_sub updates) run 4 times inside
             `tf.profiler.experimental.Trace("train", step_num=i, _r=1)`;
             inside the profiled window but outside every step marker: a few
             eager ops (tf.constant, tf.add, tf.multiply) before the loop, one
             more call of the step function, and an eager tf.add after it.
  keras_fit  Keras `model.fit` of a tiny Dense model (SGD, mse), 1 epoch of
             6 batches, with tf.profiler.experimental.start/stop around the
             whole fit (so the first batch includes tracing the train
             function, and fit's setup lies outside every marker); a callback
             wraps each batch in the marker Keras' TensorBoard callback uses
             when it profiles (keras.src.backend.tensorflow.tensorboard
             .start_batch_trace: `Trace("Profiled batch", step_num=batch)`);
             TensorBoard itself is not installed.
  while_loop a `tf.function` train step around an RNN written with
             tf.while_loop (3 iterations) whose body calls a nested
             tf.function `cell` (inlined by TF), plus a nested tf.function
             `head` marked `_noinline` so that it stays a PartitionedCall op
             (a function call op whose body runs as ops of its own); 3 steps
             in `Trace("train", step_num=i, _r=1)`.
  jax_jit    a jitted JAX MLP train step with jax.named_scope("mlp") /
             "hidden" / "out", 4 steps in
             `jax.profiler.StepTraceAnnotation("train", step_num=i)`,
             recorded with `jax.profiler.trace(logdir)`.
  tf_data_loop  the tf_loop model fed by a tf.data pipeline (from_tensor_slices,
             a map, batch 4, repeat, prefetch 2): 4 steps, each
             `Trace("train", step_num=i, _r=1)` around `next(iterator)` and the
             step function (so the steps wait for input, and tf.data works on
             its own threads).
  many_steps the tf_loop program with 7 steps in markers (XProf drops the
             first and last step of a host with more than 5).
  two_hosts  ONE run directory holding host0.xplane.pb and host1.xplane.pb.
             No second machine exists here: these are two separate processes
             on the same machine, each running the tf_loop program (host1
             with a wider hidden layer, 3 steps instead of 4) and profiled on
             its own; their files are put side by side under the names a
             two-host profile would have.  Both XSpaces name the same
             machine in `hostnames`.

--bench OUT_DIR: a TF2 program of 40 residual bottleneck blocks (each: three
convolutions, 1x1, 3x3, 1x1, each followed by BiasAdd, a hand-written
normalisation from tf.nn.moments and Relu, then the residual add; forward,
gradient and assign_sub updates, about 5,500 op executions a step) trained
for 40 steps, each
in `Trace("train", step_num=i, _r=1)`, written to
OUT_DIR/plugins/profile/run0/host0.xplane.pb (>= 10 MB; for bench/, not
committed). --bench-steps and --bench-blocks change the 40s: the trace
grows with steps x blocks (400 steps: ~106 MB, for bench/'s linearity check).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTDATA = os.path.join(REPO, "testdata", "xplane")
TF_FIXTURES = ["tf_loop", "keras_fit", "while_loop", "two_hosts", "tf_data_loop", "many_steps"]
JAX_FIXTURES = ["jax_jit"]
RUN = "run0"


def tf_setup():
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    import tensorflow as tf
    tf.random.set_seed(0)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    return tf


def mlp_train_step(tf, hidden):
    """A two-layer MLP's training step as a tf.function (variables w1, w2)."""
    w1 = tf.Variable(tf.random.normal([8, hidden]), name="w1")
    w2 = tf.Variable(tf.random.normal([hidden, 1]), name="w2")

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(x, w1))
            p = tf.matmul(h, w2)
            loss = tf.reduce_mean(tf.square(p - y))
        grads = tape.gradient(loss, [w1, w2])
        for v, g in zip([w1, w2], grads):
            v.assign_sub(0.01 * g)
        return loss

    return step


def tf_loop(logdir, hidden=16, steps=4):
    tf = tf_setup()
    step = mlp_train_step(tf, hidden)
    x = tf.random.normal([4, 8])
    y = tf.random.normal([4, 1])

    step(x, y)  # trace and warm up before profiling
    tf.profiler.experimental.start(logdir)
    a = tf.constant([1.0, 2.0])
    b = tf.add(a, a)
    c = tf.multiply(b, a)
    step(x, y)  # a step function call outside every step marker
    for i in range(steps):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x, y)
    tf.add(c, 1.0)
    tf.profiler.experimental.stop()


def tf_data_loop(logdir, steps=4):
    tf = tf_setup()
    step = mlp_train_step(tf, 16)
    xs = tf.random.normal([64, 8])
    ys = tf.random.normal([64, 1])
    ds = (tf.data.Dataset.from_tensor_slices((xs, ys))
          .map(lambda x, y: (tf.tanh(x) * 2.0, y))
          .batch(4).repeat().prefetch(2))
    it = iter(ds)

    step(*next(it))  # trace and warm up before profiling
    tf.profiler.experimental.start(logdir)
    for i in range(steps):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            x, y = next(it)
            step(x, y)
    tf.profiler.experimental.stop()


def keras_fit(logdir):
    tf = tf_setup()
    import keras
    import numpy as np
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 8)).astype("float32")
    y = rng.standard_normal((24, 1)).astype("float32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    from keras.src.backend.tensorflow import tensorboard as kt

    class StepMarkers(keras.callbacks.Callback):
        """The batch markers Keras' TensorBoard callback sets when profiling
        (TensorBoard itself is not installed here)."""

        def on_train_batch_begin(self, batch, logs=None):
            self.ctx = kt.start_batch_trace(batch)

        def on_train_batch_end(self, batch, logs=None):
            kt.stop_batch_trace(self.ctx)

    tf.profiler.experimental.start(logdir)
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0, callbacks=[StepMarkers()])
    tf.profiler.experimental.stop()


def while_loop(logdir):
    tf = tf_setup()
    n_in, n_h, t_len = 4, 8, 3
    wx = tf.Variable(tf.random.normal([n_in, n_h]), name="wx")
    wh = tf.Variable(tf.random.normal([n_h, n_h]), name="wh")
    wo = tf.Variable(tf.random.normal([n_h, 1]), name="wo")
    xs = tf.random.normal([t_len, 2, n_in])
    y = tf.random.normal([2, 1])

    @tf.function
    def cell(h, x):
        return tf.tanh(tf.matmul(x, wx) + tf.matmul(h, wh))

    @tf.function(experimental_attributes={"_noinline": True})
    def head(h):
        return tf.matmul(h, wo)

    @tf.function
    def train_step(xs, y):
        with tf.GradientTape() as tape:
            _, h = tf.while_loop(lambda i, h: i < t_len,
                                 lambda i, h: (i + 1, cell(h, xs[i])),
                                 [tf.constant(0), tf.zeros([2, n_h])])
            loss = tf.reduce_mean(tf.square(head(h) - y))
        grads = tape.gradient(loss, [wx, wh, wo])
        for v, g in zip([wx, wh, wo], grads):
            v.assign_sub(0.01 * g)
        return loss

    train_step(xs, y)
    tf.profiler.experimental.start(logdir)
    for i in range(3):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            train_step(xs, y)
    tf.profiler.experimental.stop()


def jax_jit(logdir):
    import jax
    import jax.numpy as jnp

    key1, key2, key3 = jax.random.split(jax.random.PRNGKey(0), 3)
    params = {"w1": jax.random.normal(key1, (8, 16)), "w2": jax.random.normal(key2, (16, 1))}
    x = jax.random.normal(key3, (4, 8))
    y = jnp.ones((4, 1))

    def loss_fn(p, x, y):
        with jax.named_scope("mlp"):
            with jax.named_scope("hidden"):
                h = jax.nn.relu(x @ p["w1"])
            with jax.named_scope("out"):
                o = h @ p["w2"]
        return jnp.mean((o - y) ** 2)

    @jax.jit
    def step(p, x, y):
        grads = jax.grad(loss_fn)(p, x, y)
        return jax.tree.map(lambda a, g: a - 0.01 * g, p, grads)

    params = jax.block_until_ready(step(params, x, y))  # compile before profiling
    with jax.profiler.trace(logdir):
        for i in range(4):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                params = jax.block_until_ready(step(params, x, y))


def bench(logdir, blocks=40, steps=40):
    tf = tf_setup()
    chans, size = 8, 8

    def conv_vars(b, j, k):
        return [tf.Variable(tf.random.normal([k, k, chans, chans], stddev=0.1), name=f"b{b}_k{j}"),
                tf.Variable(tf.zeros([chans]), name=f"b{b}_bias{j}"),
                tf.Variable(tf.ones([chans]), name=f"b{b}_gamma{j}"),
                tf.Variable(tf.zeros([chans]), name=f"b{b}_beta{j}")]

    # Bottleneck blocks: 1x1, 3x3, 1x1 convolutions.
    weights = [[conv_vars(b, 0, 1), conv_vars(b, 1, 3), conv_vars(b, 2, 1)] for b in range(blocks)]
    variables = [v for block in weights for conv in block for v in conv]
    x = tf.random.normal([2, size, size, chans])

    def conv_norm(h, kernel, bias, gamma, beta):
        r = tf.nn.bias_add(tf.nn.conv2d(h, kernel, 1, "SAME"), bias)
        mean, var = tf.nn.moments(r, axes=[1, 2, 3], keepdims=True)
        return (r - mean) * tf.math.rsqrt(var + 1e-5) * gamma + beta

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            h = x
            for c0, c1, c2 in weights:
                r = tf.nn.relu(conv_norm(h, *c0))
                r = tf.nn.relu(conv_norm(r, *c1))
                h = tf.nn.relu(h + conv_norm(r, *c2))
            loss = tf.reduce_mean(tf.square(h))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(0.001 * g)
        return loss

    step(x)
    tf.profiler.experimental.start(logdir)
    for i in range(steps):
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x)
    tf.profiler.experimental.stop()


def run_one(name, out):
    """Run fixture `name` in this process; leave its trace(s) under `out`."""
    tmp = tempfile.mkdtemp(prefix=f"xplane_{name}_")
    try:
        if name == "two_hosts":
            # Both "hosts" are separate processes; see the module docstring.
            for host, args in (("host0", []), ("host1", ["--hidden", "32", "--steps", "3"])):
                sub = os.path.join(tmp, host)
                subprocess.run([sys.executable, __file__, "--one", "tf_loop", "--out", sub] + args,
                               check=True)
                move_trace(sub, out, host)
            return
        fn = {"tf_loop": lambda d: tf_loop(d, ARGS.hidden, ARGS.steps), "keras_fit": keras_fit,
              "while_loop": while_loop, "jax_jit": jax_jit,
              "bench": lambda d: bench(d, ARGS.bench_blocks, ARGS.bench_steps),
              "tf_data_loop": tf_data_loop, "many_steps": lambda d: tf_loop(d, 16, 7)}[name]
        fn(tmp)
        move_trace(tmp, out, "host0")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def move_trace(logdir, out, host):
    found = glob.glob(os.path.join(logdir, "**", "*.xplane.pb"), recursive=True)
    if len(found) != 1:
        sys.exit(f"gen_traces: expected one .xplane.pb under {logdir}, found {found}")
    dest_dir = os.path.join(out, "plugins", "profile", RUN)
    os.makedirs(dest_dir, exist_ok=True)
    shutil.move(found[0], os.path.join(dest_dir, f"{host}.xplane.pb"))


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fixtures", nargs="*", help="fixtures to redo (default: all)")
    ap.add_argument("--jax-python", default="/work/venvs/xprof/bin/python")
    ap.add_argument("--bench", metavar="OUT_DIR", help="write the large bench trace there")
    ap.add_argument("--bench-steps", type=int, default=40, metavar="N", help="marked steps of the bench trace (default 40)")
    ap.add_argument("--bench-blocks", type=int, default=40, metavar="N", help="residual blocks of the bench model (default 40)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--hidden", type=int, default=16, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=4, help=argparse.SUPPRESS)
    ARGS = ap.parse_args()
    if ARGS.one:
        run_one(ARGS.one, ARGS.out)
        return
    if ARGS.bench:
        shutil.rmtree(os.path.join(ARGS.bench, "plugins", "profile", RUN), ignore_errors=True)
        subprocess.run([sys.executable, __file__, "--one", "bench", "--out", ARGS.bench,
                        "--bench-steps", str(ARGS.bench_steps), "--bench-blocks", str(ARGS.bench_blocks)],
                       check=True)
        print(os.path.join(ARGS.bench, "plugins", "profile", RUN, "host0.xplane.pb"))
        return
    names = ARGS.fixtures or TF_FIXTURES + JAX_FIXTURES
    for name in names:
        if name not in TF_FIXTURES + JAX_FIXTURES:
            sys.exit(f"gen_traces: unknown fixture {name!r}")
        out = os.path.join(TESTDATA, name)
        shutil.rmtree(out, ignore_errors=True)
        python = ARGS.jax_python if name in JAX_FIXTURES else sys.executable
        subprocess.run([python, __file__, "--one", name, "--out", out], check=True)
        for path in sorted(glob.glob(os.path.join(out, "**", "*.xplane.pb"), recursive=True)):
            print(f"{os.path.relpath(path, REPO)}  {os.path.getsize(path)} bytes")


ARGS = None

if __name__ == "__main__":
    main()
