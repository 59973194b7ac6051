#!/usr/bin/env python3
"""Record the PyTorch and TensorFlow 2 CPU runs under testdata/check/ that
`rtfprof check` is tested on (the JAX runs are gen_runs.py's).

    /work/venvs/gate-torch/bin/python tools/check/gen_framework_runs.py torch
    /work/venvs/gate-tf/bin/python tools/check/gen_framework_runs.py tf
    /work/venvs/gate-torch/bin/python tools/check/gen_framework_runs.py torch --noise 6 OUT_DIR
                        # 6 more runs of the base program, for measuring noise
                        # (then: python3 tools/check/noise.py OUT_DIR)

Needs a Python with torch (CPU is enough: `pip install torch`) or with
tensorflow (`pip install tensorflow`), in a venv outside the repository.

The program is gen_runs.py's: a train step of a 3-layer MLP (batch 128,
256 -> 512 -> 512 -> 64, ReLU, mean squared error, SGD), STEPS steps
recorded after one warm-up step, on one thread, each run in its own process.
The runs of a set (a framework's fixtures, or the --noise runs) are recorded
interleaved, as gen_runs.py's are (interleave.py): all started together,
taking turns a step at a time in a random order each round, so that a change
of the machine's speed falls on every run alike.

- torch: `torch.profiler.profile(activities=[CPU], profile_memory=True)`,
  each step in `record_function("ProfilerStep#N")` (N = 1..STEPS), each
  layer in `record_function("layerN")`; the trace is written gzipped
  (`<run>/trace.pt.trace.json.gz`). `ProfilerStep#N` is the span that
  `prof.step()` opens (PyTorch's profiler calls the same
  `record_function`), but `prof.step()` ends a step only where the next
  begins, so that the wait for this process's turn would be in a step;
  opened and closed around the step itself, the span leaves it out.
- tf: a `tf.function` step with each layer in `tf.name_scope("layerN")`, each
  step in `tf.profiler.experimental.Trace("train", step_num=i, _r=1)`,
  recorded by `tf.profiler.experimental.start/stop`; the trace is moved to
  `<run>/plugins/profile/run0/host0.xplane.pb`. TensorFlow's CPU allocator
  records allocator events only when it is the BFC allocator, so the runs set
  `TF_CPU_ALLOCATOR_USE_BFC=true`: the trace then has the allocator's bytes in
  use, as it has on a GPU.

Fixtures, testdata/check/<framework>_<name>:

  base_a, base_b  the program, twice: two runs of identical code
  wider           layer2 twice as wide (HIDDEN*2): its matmuls are slower
  extra_op        a tanh on layer1's output, in its own scope "extra"
  memory          a 64 MiB buffer allocated at the start of each step (left
                  uninitialised, so it costs no time) and freed after it:
                  the step's peak memory grows by 64 MiB

Each trace is kept as the profiler wrote it (the torch one gzipped); only
its path is fixed. The timings are real: rerunning changes every number.
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

from interleave import Turns, run_interleaved

STEPS = 12
BATCH = 128
IN = 256
HIDDEN = 512
OUT = 64
BIG = 16 * 1024 * 1024  # floats: 64 MiB
VARIANTS = ["base_a", "base_b", "wider", "extra_op", "memory"]


def torch_program(variant, logdir, turns):
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    torch.set_num_threads(1)
    torch.manual_seed(0)
    hidden2 = HIDDEN * 2 if variant == "wider" else HIDDEN
    w1 = (torch.randn(IN, HIDDEN) * 0.05).requires_grad_()
    w2 = (torch.randn(HIDDEN, hidden2) * 0.05).requires_grad_()
    w3 = (torch.randn(hidden2, OUT) * 0.05).requires_grad_()
    params = [w1, w2, w3]
    x = torch.randn(BATCH, IN)
    y = torch.zeros(BATCH, OUT)

    def step():
        big = torch.empty(BIG) if variant == "memory" else None
        with record_function("layer1"):
            h = torch.relu(x @ w1)
        if variant == "extra_op":
            with record_function("extra"):
                h = torch.tanh(h)
        with record_function("layer2"):
            h = torch.relu(h @ w2)
        with record_function("layer3"):
            out = h @ w3
        loss = ((out - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
        del big

    step()  # warm up before profiling
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        turns.ready()
        for i in range(STEPS):
            turns.wait()
            with record_function(f"ProfilerStep#{i + 1}"):
                step()
            turns.done()
        turns.wait()
    prof.export_chrome_trace(os.path.join(logdir, "trace.pt.trace.json"))


def tf_program(variant, logdir, turns):
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.random.set_seed(0)
    hidden2 = HIDDEN * 2 if variant == "wider" else HIDDEN
    w1 = tf.Variable(tf.random.normal((IN, HIDDEN)) * 0.05, name="w1")
    w2 = tf.Variable(tf.random.normal((HIDDEN, hidden2)) * 0.05, name="w2")
    w3 = tf.Variable(tf.random.normal((hidden2, OUT)) * 0.05, name="w3")
    params = [w1, w2, w3]
    x = tf.random.normal((BATCH, IN))
    y = tf.zeros((BATCH, OUT))

    @tf.function
    def step(x, y):
        big = tf.raw_ops.Empty(shape=[BIG], dtype=tf.float32, init=False) if variant == "memory" else None
        with tf.GradientTape() as tape:
            with tf.name_scope("layer1"):
                h = tf.nn.relu(tf.matmul(x, w1))
            if variant == "extra_op":
                with tf.name_scope("extra"):
                    h = tf.tanh(h)
            with tf.name_scope("layer2"):
                h = tf.nn.relu(tf.matmul(h, w2))
            with tf.name_scope("layer3"):
                out = tf.matmul(h, w3)
            loss = tf.reduce_mean(tf.square(out - y))
        grads = tape.gradient(loss, params)
        updates = [p.assign_sub(0.01 * g) for p, g in zip(params, grads)]
        if big is None:
            return loss
        # Read after the updates, so that the buffer is held for the whole step.
        with tf.control_dependencies(updates):
            return loss + 0.0 * big[0]

    step(x, y)  # trace and warm up before profiling
    tf.profiler.experimental.start(logdir)
    turns.ready()
    for i in range(STEPS):
        turns.wait()
        with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
            step(x, y).numpy()
        turns.done()
    turns.wait()
    tf.profiler.experimental.stop()


def record(framework, runs):
    """Runs each (variant, out_dir) of `runs` in its own process, interleaved
    step by step, and moves each trace to its out_dir."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", TF_CPU_ALLOCATOR_USE_BFC="true", CUDA_VISIBLE_DEVICES="")
    with tempfile.TemporaryDirectory() as tmp:
        logdirs = [os.path.join(tmp, str(i)) for i in range(len(runs))]
        commands = []
        for (variant, _), logdir in zip(runs, logdirs):
            program = "base" if variant.startswith("base") else variant
            os.makedirs(logdir)
            commands.append(([sys.executable, __file__, framework, "--one", program, "--logdir", logdir], env))
        run_interleaved(commands, STEPS)
        for (_, out_dir), logdir in zip(runs, logdirs):
            keep(framework, logdir, out_dir)


def keep(framework, logdir, out_dir):
    """Moves the trace a run left in logdir to out_dir."""
    shutil.rmtree(out_dir, ignore_errors=True)
    if framework == "torch":
        os.makedirs(out_dir)
        dest = os.path.join(out_dir, "trace.pt.trace.json.gz")
        with open(os.path.join(logdir, "trace.pt.trace.json"), "rb") as src, gzip.GzipFile(dest, "wb", mtime=0) as gz:
            shutil.copyfileobj(src, gz)
    else:
        runs = os.path.join(logdir, "plugins", "profile")
        (run,) = os.listdir(runs)
        (trace,) = [f for f in os.listdir(os.path.join(runs, run)) if f.endswith(".xplane.pb")]
        dest = os.path.join(out_dir, "plugins", "profile", "run0", "host0.xplane.pb")
        os.makedirs(os.path.dirname(dest))
        shutil.move(os.path.join(runs, run, trace), dest)
    print(f"{out_dir}: {os.path.getsize(dest)} bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("framework", choices=["torch", "tf"])
    ap.add_argument("--one")
    ap.add_argument("--logdir")
    ap.add_argument("--noise", type=int, metavar="N", help="record N runs of the base program into OUT_DIR/run<i>")
    ap.add_argument("--only", help="record only these fixtures (comma-separated names; interleaved with each other only)")
    Turns.add_arguments(ap)
    ap.add_argument("out", nargs="?")
    args = ap.parse_intermixed_args()
    if args.one:
        (torch_program if args.framework == "torch" else tf_program)(args.one, args.logdir, Turns.from_args(args))
        return
    if args.noise:
        record(args.framework, [("base", os.path.join(args.out, f"run{i}")) for i in range(args.noise)])
        return
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "check")
    names = args.only.split(",") if args.only else VARIANTS
    record(args.framework, [(name, os.path.join(root, f"{args.framework}_{name}")) for name in names])


if __name__ == "__main__":
    main()
