"""Record several runs step by step interleaved, so that they see the same machine.

gen_runs.py and gen_framework_runs.py record each run of a set (the base
program twice, its variants) in its own process. Recorded one after the
other on a shared machine, the runs differ by whatever the machine did
meanwhile: a neighbour's build that starts between two recordings slows
the whole second run, and `rtfprof check` cannot tell that from a slower
program (docs/book/src/commands/check.md, "Defaults"). Interleaved, the
processes of a set take turns a step at a time: every process starts,
compiles and warms up, then the coordinator lets one process run one step
while the others wait, each round in a new random order (the randomized
multiple interleaved trials of Abedi and Brecht, "Conducting Repeatable
Experiments in Highly Variable Cloud Computing Environments", ICPE 2017).
A change of the machine's speed then falls on the same steps of every run,
and what differs between the runs is the programs.

Every process of a set runs on the same CPU (its affinity set before the
program starts, so every thread it starts inherits it). Taking turns, they
never need two; left to the scheduler, each process kept to the CPU it
woke on, and the one that shared its CPU with a neighbour's compiler was
slower in every step: on the 2-core VM, 8 interleaved identical JAX runs
differed by up to 228% in median step time unpinned, 79% pinned
(docs/book/src/commands/check.md, "Defaults").

The coordinator's side is `run_interleaved`; a program's side is `Turns`:

    turns = Turns.from_args(args)   # --go-fd/--done-fd, or None: run alone
    ...compile, warm up, start the profiler...
    turns.ready()
    for i in range(STEPS):
        turns.wait()                # this process's turn
        ...one step, inside its step marker...
        turns.done()
    turns.wait()                    # every process has run its last step
    ...stop the profiler, write the trace...

A process waits between its steps outside every step marker, so the wait
is in no step's time.
"""
import ctypes
import os
import random
import subprocess

READY, GO, DONE = b"r", b"g", b"d"
# The runs' niceness where allowed (root): their steps then take their CPU
# from a neighbour's build instead of sharing it (see the module's doc).
NICE = -20
# personality(2)'s flag that turns address space layout randomization off.
ADDR_NO_RANDOMIZE = 0x0040000


class Turns:
    """A program's side: waits for its turn on one pipe, says it is done on another."""

    def __init__(self, go_fd=None, done_fd=None):
        self.go_fd, self.done_fd = go_fd, done_fd

    @staticmethod
    def add_arguments(parser):
        parser.add_argument("--go-fd", type=int, help="(set by the coordinator) the pipe this process's turns come on")
        parser.add_argument("--done-fd", type=int, help="(set by the coordinator) the pipe it says it is done on")

    @staticmethod
    def from_args(args):
        return Turns(args.go_fd, args.done_fd)

    def _say(self, what):
        if self.done_fd is not None:
            os.write(self.done_fd, what)

    def ready(self):
        self._say(READY)

    def wait(self):
        if self.go_fd is not None and os.read(self.go_fd, 1) != GO:
            raise SystemExit("interleave: the coordinator went away")

    def done(self):
        self._say(DONE)


def run_interleaved(commands, steps, seed=0, cpu="last"):
    """Runs each of `commands` ((argv, env) pairs, programs that use `Turns`)
    in its own process, `steps` rounds of one step a process, each round in
    an order drawn from random.Random(seed); every process (all its
    threads) on the CPU `cpu` (by default the last this process may use;
    None: wherever the scheduler puts them). Raises if a process fails."""
    procs = []
    if cpu == "last":
        cpu = max(os.sched_getaffinity(0))

    def pin():
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
        try:
            os.nice(NICE)
        except PermissionError:
            pass
        # The same addresses in every process (setarch -R).
        ctypes.CDLL(None, use_errno=True).personality(ADDR_NO_RANDOMIZE)

    for argv, env in commands:
        go_r, go_w = os.pipe()
        done_r, done_w = os.pipe()
        argv = argv + ["--go-fd", str(go_r), "--done-fd", str(done_w)]
        proc = subprocess.Popen(argv, pass_fds=(go_r, done_w), env=env, preexec_fn=pin)
        os.close(go_r)
        os.close(done_w)
        procs.append((proc, go_w, done_r, argv))

    def expect(k, what):
        proc, _, done_r, argv = procs[k]
        got = os.read(done_r, 1)
        if got != what:
            proc.wait()
            raise RuntimeError(f"interleave: {' '.join(argv)} exited {proc.returncode} before saying {what!r}")

    try:
        for k in range(len(procs)):
            expect(k, READY)
        rng = random.Random(seed)
        for _ in range(steps):
            order = list(range(len(procs)))
            rng.shuffle(order)
            for k in order:
                os.write(procs[k][1], GO)
                expect(k, DONE)
        # Every process has run its last step: all write their traces now.
        for _, go_w, _, _ in procs:
            os.write(go_w, GO)
        for proc, _, _, argv in procs:
            if proc.wait() != 0:
                raise RuntimeError(f"interleave: {' '.join(argv)} exited {proc.returncode}")
    finally:
        for proc, go_w, done_r, _ in procs:
            os.close(go_w)
            os.close(done_r)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
