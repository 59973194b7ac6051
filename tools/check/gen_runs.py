#!/usr/bin/env python3
"""Record the JAX CPU runs under testdata/check/ that `rtfprof check` is tested on.

    /work/venvs/gate-jax/bin/python tools/check/gen_runs.py            # the fixtures
    /work/venvs/gate-jax/bin/python tools/check/gen_runs.py --noise 6 OUT_DIR
                        # 6 more runs of the base program, for measuring noise
    /work/venvs/gate-jax/bin/python tools/check/gen_runs.py --variants 4 OUT_DIR
                        # 4 runs of each fixture's program (OUT_DIR/base0,
                        # wider0, extra_op0, …), for checks of several runs a side

Needs a Python with jax[cpu] (a venv outside the repository:
`python3 -m venv /work/venvs/jax && /work/venvs/jax/bin/pip install 'jax[cpu]'`).

The program: a jitted train step of a 3-layer MLP (dense layers in
`jax.named_scope("layer1")` … `("layer3")`, SGD update), each step inside
`jax.profiler.StepTraceAnnotation("train", step_num=i)`, STEPS steps recorded
with `jax.profiler.trace(logdir)` after one step that compiles it. XLA runs on
one thread (`--xla_cpu_multi_thread_eigen=false`), so that the runs' noise is
the machine's, not the thread pool's.

The runs of a set (the fixtures, or the --noise runs) are recorded
interleaved (interleave.py): each in its own process, all started together,
taking turns a step at a time in a random order each round, so that a change
of the machine's speed falls on every run alike. A process waits for its turn
outside its step markers.

Fixtures (testdata/check/<name>/plugins/profile/run0/host0.xplane.pb):

  base_a, base_b  the program, twice: two runs of identical code
  wider           layer2 twice as wide (HIDDEN*2): its dense ops are slower
  extra_op        the program plus one op the others lack: a tanh in
                  jax.named_scope("extra") on layer1's output

Each trace is kept as the profiler wrote it; only its path is fixed (the
profiler writes plugins/profile/<timestamp>/<hostname>.xplane.pb). The runs
hold real timings: rerunning changes every number, and the tests check
decisions (pass, fail, which metric), which do not depend on them.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from interleave import Turns, run_interleaved

STEPS = 15
BATCH = 128
IN = 256
HIDDEN = 512
OUT = 64
FIXTURES = ["base_a", "base_b", "wider", "extra_op"]


def program(variant, logdir, turns):
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    import jax
    import jax.numpy as jnp

    hidden2 = HIDDEN * 2 if variant == "wider" else HIDDEN
    k = jax.random.split(jax.random.PRNGKey(0), 4)
    params = {
        "w1": jax.random.normal(k[0], (IN, HIDDEN)) * 0.05,
        "w2": jax.random.normal(k[1], (HIDDEN, hidden2)) * 0.05,
        "w3": jax.random.normal(k[2], (hidden2, OUT)) * 0.05,
    }
    x = jax.random.normal(k[3], (BATCH, IN))
    y = jnp.zeros((BATCH, OUT))

    def loss_fn(p, x, y):
        with jax.named_scope("layer1"):
            h = jax.nn.relu(x @ p["w1"])
        if variant == "extra_op":
            with jax.named_scope("extra"):
                h = jnp.tanh(h)
        with jax.named_scope("layer2"):
            h = jax.nn.relu(h @ p["w2"])
        with jax.named_scope("layer3"):
            out = h @ p["w3"]
        return jnp.mean((out - y) ** 2)

    @jax.jit
    def step(p, x, y):
        grads = jax.grad(loss_fn)(p, x, y)
        return jax.tree.map(lambda a, g: a - 0.01 * g, p, grads)

    params = jax.block_until_ready(step(params, x, y))  # compile before profiling
    with jax.profiler.trace(logdir):
        turns.ready()
        for i in range(STEPS):
            turns.wait()
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                params = jax.block_until_ready(step(params, x, y))
            turns.done()
        turns.wait()


def record(runs):
    """Runs each (variant, out_dir) of `runs` in its own process, interleaved
    step by step, and moves each trace to its out_dir."""
    with tempfile.TemporaryDirectory() as tmp:
        logdirs = [os.path.join(tmp, str(i)) for i in range(len(runs))]
        commands = [([sys.executable, __file__, "--one", variant, "--logdir", logdir], None) for (variant, _), logdir in zip(runs, logdirs)]
        run_interleaved(commands, STEPS)
        for (_, out_dir), logdir in zip(runs, logdirs):
            keep(logdir, out_dir)


def keep(logdir, out_dir):
    """Moves the trace a run left in logdir to out_dir."""
    runs = os.path.join(logdir, "plugins", "profile")
    (run,) = os.listdir(runs)
    (trace,) = [f for f in os.listdir(os.path.join(runs, run)) if f.endswith(".xplane.pb")]
    dest = os.path.join(out_dir, "plugins", "profile", "run0")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(dest)
    shutil.move(os.path.join(runs, run, trace), os.path.join(dest, "host0.xplane.pb"))
    size = os.path.getsize(os.path.join(dest, "host0.xplane.pb"))
    print(f"{out_dir}: {size} bytes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one")
    ap.add_argument("--logdir")
    ap.add_argument("--noise", type=int, metavar="N", help="record N runs of the base program into OUT_DIR/run<i>, interleaved")
    ap.add_argument("--variants", type=int, metavar="N", help="record N runs of each program into OUT_DIR/<program><i>, all interleaved")
    Turns.add_arguments(ap)
    ap.add_argument("out", nargs="?")
    args = ap.parse_args()
    if args.one:
        program(args.one, args.logdir, Turns.from_args(args))
        return
    if args.noise:
        record([("base", os.path.join(args.out, f"run{i}")) for i in range(args.noise)])
        return
    if args.variants:
        programs = ["base", "wider", "extra_op"]
        record([(p, os.path.join(args.out, f"{p}{i}")) for i in range(args.variants) for p in programs])
        return
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "testdata", "check")
    record([("base" if name.startswith("base") else name, os.path.join(root, name)) for name in FIXTURES])


if __name__ == "__main__":
    main()
