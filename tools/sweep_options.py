#!/usr/bin/env python3
"""Random differential test of rtfprof against TensorFlow's real tfprof engine.

    CARGO_TARGET_DIR=/tmp/sweep-target cargo build --release
    /work/tfvenv/bin/python tools/sweep_options.py --seed 1 --cases 500 \\
        --rtfprof /tmp/sweep-target/release/rtfprof

    # or for a fixed wall-clock budget, with results kept in a directory:
    /work/tfvenv/bin/python tools/sweep_options.py --seed 7 --minutes 60 \\
        --out /tmp/sweep-out

    # re-check one rtfprof command line (flags as in testdata/golden/cases.txt,
    # paths relative to testdata/; no spaces inside values):
    /work/tfvenv/bin/python tools/sweep_options.py --one \\
        "scope --profile_path=cnn/profile --max_depth=2 --order_by=micros"

    # harness check: the golden cases must all compare equal
    /work/tfvenv/bin/python tools/sweep_options.py --golden

    # look past known mismatches
    /work/tfvenv/bin/python tools/sweep_options.py --minutes 10 \\
        --skip-cmd '^code .*--order_by=occurrence'

--rtfprof defaults to /tmp/sweep-target/release/rtfprof.  In printed command
lines, --output=timeline:outfile=TIMELINE and pprof:outfile=PPROF stand for a
temporary path (the same one on both sides, since tfprof prints it), and
file:outfile=out.txt for a temporary file.

The Python must have TensorFlow (see tools/gen_golden.py). Each case is a
view (scope, graph, op, code; advise less often), one fixture of testdata/
(mlp, cnn, cnn_b8, while, gpu_synth, matmuls, names, jobs/worker0,
jobs/worker1), one kind of input (text or binary GraphDef with all, one or a
reordered subset of the run_meta files, with or without the op log; graph
only; run metadata only; --profile_path; gpu_synth's run_meta_nostream) and
a random set of view options: max_depth, the min_* thresholds (values taken
from the fixture's real per-node values, their neighbours, 0, 1 and round
numbers), step (-1, recorded steps, steps out of range), order_by, select
subsets, account_type/start/trim/show/hide regexes built from the fixture's
real node names, scopes, op types, devices and code-trace lines,
account_displayed_op_only, and output (stdout, file, none, timeline; pprof
for the code view). Candidate names and values are read from rtfprof's own
JSON output of each fixture; they only choose the options, nothing is
compared against them.

Each case runs through the engine (`gen_golden.run_case`, in a worker
process so that a crash of the engine is reported instead of ending the
sweep) and through the rtfprof binary (cwd testdata/).  Compared byte for
byte: stdout, and the written file for --output=file:outfile=...; for
timeline and pprof outputs stdout and the names of the files written (not
their contents: rtfprof's timeline JSON differs on purpose, see README.md).
stderr is not compared (printed for information).  advise is compared as
tests/integration/golden.rs does (checker sections in any order).  rtfprof's deliberate
differences (README.md "Where rtfprof deliberately differs") are not
generated: no unknown select/order_by values, no regexes that are invalid
in both dialects (name pieces are escaped), no timeline for the op view.

Each mismatch is printed with the full rtfprof command line and the first
lines of a unified diff, re-run through the engine twice to detect engine
nondeterminism, and minimised (options dropped, list elements dropped, the
input reduced, while it still mismatches).  With --out DIR, DIR gets
mismatches.jsonl (one JSON object per mismatch) and summary.txt (the
minimal reproductions, grouped by the set of options they need).

Cases known to crash the engine (code view with max_depth < 1 or with a
trim regex matching _TFProfRoot: tfprof segfaults) are skipped unless
--allow-crashes is given; other engine crashes are reported as mismatches.

--self-test perturbs one option on the engine side only (max_depth + 1) to
check that mismatches are really detected and reported.
"""
import argparse
import difflib
import json
import os
import pickle
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"

VIEWS = ["scope", "graph", "op", "code", "advise"]
VIEW_WEIGHTS = [30, 22, 22, 20, 3]
FIXTURES = ["mlp", "cnn", "cnn_b8", "while", "gpu_synth", "matmuls",
            "names", "jobs/worker0", "jobs/worker1"]
FIXTURE_WEIGHTS = [16, 18, 6, 16, 16, 8, 8, 3, 3]
N_STEPS = 3

SELECT_VALUES = ["bytes", "peak_bytes", "residual_bytes", "output_bytes",
                 "micros", "accelerator_micros", "cpu_micros", "params",
                 "float_ops", "occurrence", "tensor_value", "device",
                 "op_types", "input_shapes"]
ORDER_BY_VALUES = ["name", "bytes", "peak_bytes", "residual_bytes",
                   "output_bytes", "micros", "accelerator_micros",
                   "cpu_micros", "params", "float_ops", "occurrence"]
# min_* flag -> metric name in rtfprof's JSON output.
MIN_FLAGS = {
    "min_bytes": "requested_bytes", "min_peak_bytes": "peak_bytes",
    "min_residual_bytes": "residual_bytes",
    "min_output_bytes": "output_bytes", "min_micros": "exec_micros",
    "min_accelerator_micros": "accelerator_micros",
    "min_cpu_micros": "cpu_micros", "min_params": "parameters",
    "min_float_ops": "float_ops", "min_occurrence": "run_count",
}
INPUT_FLAGS = ("graph_path", "run_meta_path", "op_log_path", "profile_path")
LIST_FLAGS = ("select", "account_type_regexes", "start_name_regexes",
              "trim_name_regexes", "show_name_regexes", "hide_name_regexes")
# Flag order in printed command lines.
FLAG_ORDER = list(INPUT_FLAGS) + [
    "max_depth"] + list(MIN_FLAGS) + [
    "step", "order_by", "account_type_regexes", "start_name_regexes",
    "trim_name_regexes", "show_name_regexes", "hide_name_regexes",
    "account_displayed_op_only", "select", "output"]

# Regexes that are not derived from names; all valid in RE2 and in Rust.
GENERIC_REGEXES = [
    ".*", "gradients.*", ".*Grad.*", ".*/read", ".*gradients.*", "_retval.*",
    "_SOURCE", "[a-z_]+", "[A-Z].*", ".*[0-9]", "[^/]*", "[^/]+/[^/]+",
    ".*_[0-9]+", "(?i).*conv.*", "(?i)matmul", ".*(Add|Mul).*", "^.*$",
    "\\w+", ".+", ".", "", ".*py:[0-9]+:.*", ".*:(build|trace)_.*",
    "[[:alpha:]]+.*", ".*\\d+.*", "gradients/.*_grad/.*",
]
ACCOUNT_TYPE_GENERIC = [
    ".*", "_trainable_variables", "Conv2D", "MatMul|Add.*", ".*Grad.*",
    "MatMul", "VariableV2", "VarHandleOp", "Const", ".*cpu:0.*",
    ".*gpu:0.*", ".*stream.*", "_retval.*", "Identity", "Apply.*",
    ".*Variable.*", "", "(?i)relu.*",
]


# --------------------------------------------------------------------------
# The engine, in a worker process
# --------------------------------------------------------------------------

def _send(fh, obj):
    data = pickle.dumps(obj, protocol=4)
    fh.write(struct.pack("<Q", len(data)))
    fh.write(data)
    fh.flush()


def _recv(fh):
    head = fh.read(8)
    if len(head) < 8:
        raise EOFError
    (n,) = struct.unpack("<Q", head)
    return pickle.loads(fh.read(n))


def engine_worker():
    """Serves (view, flags, extra_dir) requests with gen_golden.run_case."""
    out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)  # stray prints must not corrupt the protocol
    inp = sys.stdin.buffer
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, str(ROOT / "tools"))
    import gen_golden as G  # noqa: E402  (does not regenerate anything)
    tmpdir = tempfile.mkdtemp(prefix="sweep-engine-")
    _send(out, "ready")
    while True:
        try:
            view, flags = _recv(inp)
        except EOFError:
            break
        try:
            res = ("ok",) + tuple(G.run_case(view, flags, tmpdir))
        except Exception as e:  # noqa: BLE001
            res = ("error", repr(e))
        _send(out, res)
    shutil.rmtree(tmpdir, ignore_errors=True)


class Engine:
    def __init__(self, python):
        self.python = python
        self.proc = None
        self.restarts = 0

    def start(self):
        self.proc = subprocess.Popen(
            [self.python, os.path.abspath(__file__), "--engine-worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, cwd=str(ROOT))
        assert _recv(self.proc.stdout) == "ready"

    def run(self, view, flags):
        """(stdout, file bytes or None, stderr) or raises RuntimeError."""
        if self.proc is None:
            self.start()
        try:
            _send(self.proc.stdin, (view, flags))
            res = _recv(self.proc.stdout)
        except (EOFError, BrokenPipeError):
            rc = self.proc.wait()
            self.proc = None
            self.restarts += 1
            raise RuntimeError("engine worker died (exit %s)" % rc)
        if res[0] != "ok":
            raise RuntimeError("engine error: " + res[1])
        return res[1:]

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


# --------------------------------------------------------------------------
# rtfprof
# --------------------------------------------------------------------------

def cmdline(view, flags):
    return " ".join([view] + ["--%s=%s" % (k, v) for k, v in flags])


def run_rtfprof(binary, view, flags, outfile):
    args = [binary, view]
    for k, v in flags:
        if k == "output" and v.startswith("file:"):
            v = "file:outfile=" + outfile
        args.append("--%s=%s" % (k, v))
    p = subprocess.run(args, cwd=str(TESTDATA), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout, p.stderr


# --------------------------------------------------------------------------
# Fixture facts, from rtfprof's JSON output
# --------------------------------------------------------------------------

def has_op_log(fx):
    return (TESTDATA / fx / "tfprof_log").exists()


def base_inputs(fx):
    if has_op_log(fx):
        return [("profile_path", "%s/profile" % fx)]
    return [("graph_path", "%s/graph.pb" % fx),
            ("run_meta_path", ",".join("%s/run_meta_%d" % (fx, i)
                                       for i in range(N_STEPS)))]


def walk_json(node, out):
    out.append(node)
    for c in node.get("children", []):
        walk_json(c, out)


def fixture_facts(binary, fx, tmp):
    facts = {"names": {}, "values": {}}
    for view in ["scope", "op", "code"]:
        if view == "code" and not has_op_log(fx):
            facts["names"][view] = []
            facts["values"][view] = {}
            continue
        js = os.path.join(tmp, "facts.json")
        flags = base_inputs(fx) + [("max_depth", "1000000"),
                                   ("output", "json:outfile=" + js)]
        args = [binary, view] + ["--%s=%s" % kv for kv in flags]
        subprocess.run(args, cwd=str(TESTDATA), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(js) as fh:
            root = json.load(fh)["root"]
        nodes = []
        walk_json(root, nodes)
        facts["names"][view] = sorted({n["name"] for n in nodes
                                       if n["name"] != "_TFProfRoot"})
        vals = {}
        for n in nodes:
            for part in ("own", "total"):
                for m, v in n.get(part, {}).items():
                    vals.setdefault(m, set()).add(v)
            for m, st in n.get("per_step", {}).get("metrics", {}).items():
                vals.setdefault(m, set()).update(st["values"])
        facts["values"][view] = {m: sorted(v) for m, v in vals.items()}
        os.remove(js)
    # Devices and op types for account_type_regexes.
    facts["devices"] = []
    gp = TESTDATA / fx / "graph.pbtxt"
    if gp.exists():
        devs = set(re.findall(r'^\s*device: "([^"]*)"', gp.read_text(), re.M))
        facts["devices"] = sorted(d for d in devs if d)
    return facts


# --------------------------------------------------------------------------
# Drawing a case
# --------------------------------------------------------------------------

def rms(fx, idx):
    return ",".join("%s/run_meta_%d" % (fx, i) for i in idx)


def draw_inputs(rng, fx):
    """(input kind, input flags)."""
    kinds = ["full", "pb", "rm_subset", "nooplog", "nograph", "graphonly",
             "graphonly_nooplog", "profile"]
    weights = [20, 12, 10, 8, 5, 6, 2, 20]
    if fx == "gpu_synth":
        kinds.append("nostream")
        weights.append(4)
    if not has_op_log(fx):  # jobs/*: graph.pb and run_meta_N only
        kinds, weights = ["nooplog_pb", "nograph_only", "graph_only_pb",
                          "rm_subset_pb"], [6, 2, 1, 2]
    kind = rng.choices(kinds, weights)[0]
    g = "%s/graph.pbtxt" % fx
    gb = "%s/graph.pb" % fx
    log = "%s/tfprof_log" % fx
    all_rm = rms(fx, range(N_STEPS))

    def subset():
        k = rng.randint(1, N_STEPS)
        idx = rng.sample(range(N_STEPS), k)
        if rng.random() < 0.5:
            idx.sort()
        return rms(fx, idx)

    f = {
        "full": lambda: [("graph_path", g), ("run_meta_path", all_rm),
                         ("op_log_path", log)],
        "pb": lambda: [("graph_path", gb), ("run_meta_path", all_rm),
                       ("op_log_path", log)],
        "rm_subset": lambda: [("graph_path", rng.choice([g, gb])),
                              ("run_meta_path", subset()),
                              ("op_log_path", log)],
        "nooplog": lambda: [("graph_path", rng.choice([g, gb])),
                            ("run_meta_path", all_rm)],
        "nograph": lambda: [("run_meta_path", all_rm), ("op_log_path", log)],
        "graphonly": lambda: [("graph_path", rng.choice([g, gb])),
                              ("op_log_path", log)],
        "graphonly_nooplog": lambda: [("graph_path", rng.choice([g, gb]))],
        "profile": lambda: [("profile_path", "%s/profile" % fx)],
        "nostream": lambda: [("graph_path", g),
                             ("run_meta_path",
                              "%s/run_meta_nostream" % fx),
                             ("op_log_path", log)],
        "nooplog_pb": lambda: [("graph_path", gb), ("run_meta_path", all_rm)],
        "nograph_only": lambda: [("run_meta_path", all_rm)],
        "graph_only_pb": lambda: [("graph_path", gb)],
        "rm_subset_pb": lambda: [("graph_path", gb),
                                 ("run_meta_path", subset())],
    }[kind]()
    return kind, f


def pick_value(rng, values):
    """A threshold near the real values: 0, 1, a real value, its
    neighbours, or a round number in their range."""
    real = [v for v in values if v > 0]
    r = rng.random()
    if r < 0.08 or not real:
        return rng.choice([0, 1, 2])
    if r < 0.55:
        return rng.choice(real)
    if r < 0.8:
        return max(0, rng.choice(real) + rng.choice([-1, 1]))
    hi = max(real)
    return rng.choice([10, 100, 1000, 10000, 100000, 1000000,
                       hi // 2, hi, hi + 1, (min(real) + hi) // 3])


RE2_PUNCT = set("\\.+*?()|[]{}^$")


def escape(s, rng):
    """Escapes regex metacharacters; sometimes also other punctuation."""
    out = []
    for ch in s:
        if ch in RE2_PUNCT or (ch in "/:-<>" and rng.random() < 0.3):
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def lit(s):
    """A name piece as a regex: metacharacters other than '.' escaped (code
    view names hold "(gradient)"), so that the regex stays valid."""
    return "".join("\\" + ch if ch in RE2_PUNCT and ch != "." else ch
                   for ch in s)


def name_regex(rng, names, view):
    if not names or rng.random() < 0.18:
        return rng.choice(GENERIC_REGEXES)
    n = rng.choice(names)
    sep = ":" if view == "code" else "/"
    parts = n.split(sep)
    r = rng.random()
    if r < 0.22:
        return lit(n)
    if r < 0.42:  # a scope prefix
        k = rng.randint(1, len(parts))
        return lit(sep.join(parts[:k])) + rng.choice([".*", "", sep + ".*"])
    if r < 0.57:  # a suffix
        k = rng.randint(1, len(parts))
        return ".*" + lit(sep.join(parts[-k:]))
    if r < 0.72:  # a middle piece
        p = rng.choice(parts)
        if len(p) > 3 and rng.random() < 0.5:
            a = rng.randint(0, len(p) - 2)
            p = p[a:rng.randint(a + 1, len(p))]
        return ".*" + lit(p) + ".*"
    if r < 0.8:
        return "%s|%s" % (lit(n), lit(rng.choice(names)))
    if r < 0.88:
        return escape(n, rng)
    if r < 0.94:  # a character class in the name
        i = rng.randrange(len(n))
        if n[i].isalnum():
            return lit(n[:i]) + "[" + n[i] + "x]" + lit(n[i + 1:])
        return lit(n)
    return lit(n[:max(1, len(n) // 2)]) + ".*"


def regex_list(rng, make):
    k = rng.choices([0, 1, 2, 3], [3, 70, 20, 7])[0]
    return ",".join(make() for _ in range(k))


def draw_case(rng, facts_by_fx, fx=None, view=None):
    view = view or rng.choices(VIEWS, VIEW_WEIGHTS)[0]
    fx = fx or rng.choices(FIXTURES, FIXTURE_WEIGHTS)[0]
    facts = facts_by_fx[fx]
    kind, flags = draw_inputs(rng, fx)
    opts = []
    name_view = {"graph": "scope", "advise": "scope"}.get(view, view)
    names = facts["names"].get(name_view, [])
    values = facts["values"].get(name_view, {})
    optypes = facts["names"].get("op", [])

    if rng.random() < 0.55:
        opts.append(("max_depth", str(rng.choice(
            list(range(0, 13)) * 3 + [15, 20, 50, 100, 1000, 1000000, -1]))))
    for flag, metric in MIN_FLAGS.items():
        if rng.random() < 0.11:
            if flag == "min_occurrence":
                v = rng.choice([0, 1, 2, 3, 4, 5, 6, 10, 15] +
                               values.get(metric, [])[:20])
            else:
                v = pick_value(rng, values.get(metric, []))
            opts.append((flag, str(v)))
    if rng.random() < 0.35:
        opts.append(("step", str(rng.choice([-1, -1, 0, 0, 1, 2, 2, 3, 7,
                                             -2, 100]))))
    if rng.random() < 0.45:
        opts.append(("order_by", rng.choice(ORDER_BY_VALUES)))
    if rng.random() < 0.25:
        def acct():
            r = rng.random()
            if r < 0.45:
                return rng.choice(ACCOUNT_TYPE_GENERIC)
            if r < 0.8 and optypes:
                t = rng.choice(optypes)
                return rng.choice([t, t, t + ".*", ".*" + t[1:]])
            if facts["devices"]:
                d = rng.choice(facts["devices"]).lower()
                return rng.choice([d, ".*" + d.split("/")[-1] + ".*"])
            return ".*"
        opts.append(("account_type_regexes", regex_list(rng, acct)))
    for flag, p in [("start_name_regexes", 0.18), ("trim_name_regexes", 0.15),
                    ("show_name_regexes", 0.22), ("hide_name_regexes", 0.2)]:
        if rng.random() < p:
            opts.append((flag, regex_list(
                rng, lambda: name_regex(rng, names, name_view))))
    if rng.random() < 0.3:
        opts.append(("account_displayed_op_only",
                     rng.choice(["true", "false"])))
    if rng.random() < 0.8:
        k = rng.choices([0, 1, 2, 3, 4, 6, 14], [3, 30, 25, 15, 10, 8, 4])[0]
        sel = rng.sample(SELECT_VALUES, k)
        if sel and rng.random() < 0.05:
            sel.append(rng.choice(sel))  # a duplicate
        opts.append(("select", ",".join(sel)))
    r = rng.random()
    if r < 0.12:
        opts.append(("output", "file:outfile=out.txt"))
    elif r < 0.15:
        opts.append(("output", "none"))
    elif r < 0.19:
        opts.append(("output", "stdout"))
    elif r < 0.23 and view in ("scope", "graph", "code"):
        opts.append(("output", "timeline:outfile=TIMELINE"))
    elif r < 0.25 and view == "code":
        metric = rng.choice(["micros", "bytes", "params", "float_ops",
                             "occurrence", "peak_bytes"])
        opts = [kv for kv in opts if kv[0] != "select"]
        opts.append(("select", metric))
        opts.append(("output", "pprof:outfile=PPROF"))
    rng.shuffle(opts)
    opts.sort(key=lambda kv: FLAG_ORDER.index(kv[0]))
    return {"view": view, "fixture": fx, "input": kind, "flags": flags + opts}


def known_engine_crash(view, flags):
    """tfprof's code view dereferences the first node PrintScope returns,
    which is absent when the root itself is cut off (max_depth < 1, or a
    trim regex matching _TFProfRoot): the engine segfaults."""
    if view != "code":
        return False
    d = dict(flags)
    try:
        if int(d.get("max_depth", "10")) < 1:
            return True
    except ValueError:
        pass
    for r in d.get("trim_name_regexes", "").split(","):
        try:
            if r and re.fullmatch(r, "_TFProfRoot"):
                return True
        except re.error:
            pass
    return False


# --------------------------------------------------------------------------
# Running and comparing one case
# --------------------------------------------------------------------------

def advise_sections(text):
    checkers = ["AcceleratorUtilizationChecker", "OperationChecker",
                "ExpensiveOperationChecker", "JobChecker"]
    starts = sorted(i for i in (text.find("\n%s:\n" % c) for c in checkers)
                    if i >= 0)
    starts.append(len(text))
    return text[:starts[0]], sorted(text[a:b] for a, b in
                                    zip(starts, starts[1:]))


class Runner:
    def __init__(self, args):
        self.binary = args.rtfprof
        self.engine = Engine(args.python)
        self.tmp = tempfile.mkdtemp(prefix="sweep-")
        self.side_dir = os.path.join(self.tmp, "side")
        self.self_test = args.self_test
        self.runs = 0

    def _side_files(self):
        return sorted(os.listdir(self.side_dir))

    def _fresh_side(self):
        shutil.rmtree(self.side_dir, ignore_errors=True)
        os.makedirs(self.side_dir)

    def resolve(self, flags):
        out = []
        for k, v in flags:
            if k == "output":
                v = v.replace("TIMELINE", os.path.join(self.side_dir, "tl"))
                v = v.replace("PPROF", os.path.join(self.side_dir, "pp"))
            out.append((k, v))
        return out

    def engine_side(self, view, flags):
        self._fresh_side()
        eflags = self.resolve(flags)
        if self.self_test:
            d = dict(eflags)
            depth = int(d.get("max_depth", "10")) + 1
            eflags = [kv for kv in eflags if kv[0] != "max_depth"]
            eflags.append(("max_depth", str(depth)))
        try:
            out, fdata, err = self.engine.run(view, eflags)
        except RuntimeError as e:
            return {"crash": str(e)}
        return {"stdout": out, "file": fdata, "stderr": err,
                "files": self._side_files()}

    def rtfprof_side(self, view, flags):
        self._fresh_side()
        outfile = os.path.join(self.tmp, "rt_out.txt")
        if os.path.exists(outfile):
            os.remove(outfile)
        rc, out, err = run_rtfprof(self.binary, view, self.resolve(flags),
                                   outfile)
        fdata = None
        if dict(flags).get("output", "").startswith("file:"):
            fdata = b""
            if os.path.exists(outfile):
                with open(outfile, "rb") as fh:
                    fdata = fh.read()
        return {"rc": rc, "stdout": out, "stderr": err, "file": fdata,
                "files": self._side_files()}

    def compare(self, view, flags):
        """None if equal, else a dict describing the mismatch."""
        self.runs += 1
        e = self.engine_side(view, flags)
        r = self.rtfprof_side(view, flags)
        if "crash" in e:
            return {"what": "engine crash", "engine": e, "rtfprof": r}
        diffs = []
        eo, ro = e["stdout"], r["stdout"]
        if view == "advise":
            same = (advise_sections(eo.decode("utf-8", "replace")) ==
                    advise_sections(ro.decode("utf-8", "replace")))
        else:
            same = eo == ro
        if not same:
            diffs.append("stdout")
        if e["file"] is not None and e["file"] != r["file"]:
            diffs.append("file")
        if e["files"] != r["files"]:
            diffs.append("files written")
        if not diffs:
            return None
        return {"what": ",".join(diffs), "engine": e, "rtfprof": r}


def udiff(a, b, n=30):
    a = (a or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (b or b"").decode("utf-8", "replace").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, "tfprof", "rtfprof", n=1))
    text = "".join(lines[:n])
    if len(lines) > n:
        text += "... (%d more diff lines)\n" % (len(lines) - n)
    return text


def describe(mm):
    e, r = mm["engine"], mm["rtfprof"]
    parts = ["  differs: %s; rtfprof exit %s" % (mm["what"], r["rc"])]
    if r["stderr"].strip():
        parts.append("  rtfprof stderr: " +
                     r["stderr"].decode("utf-8", "replace").strip()[:300])
    if "crash" in e:
        parts.append("  " + e["crash"])
        return "\n".join(parts) + "\n"
    if e["stderr"].strip():
        parts.append("  tfprof stderr: " +
                     e["stderr"].decode("utf-8", "replace").strip()[:300])
    if "stdout" in mm["what"]:
        parts.append(udiff(e["stdout"], r["stdout"]))
    if "file" in mm["what"].split(","):
        parts.append("  (output file)\n" + udiff(e["file"], r["file"]))
    if "files written" in mm["what"]:
        parts.append("  files: tfprof %s, rtfprof %s" % (e["files"],
                                                          r["files"]))
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------
# Minimisation
# --------------------------------------------------------------------------

def simplifications(flags):
    """Candidate smaller flag lists, most aggressive first."""
    d = dict(flags)
    for i, (k, v) in enumerate(flags):
        if k in INPUT_FLAGS:
            continue
        yield flags[:i] + flags[i + 1:]
    for i, (k, v) in enumerate(flags):
        if k in LIST_FLAGS or k == "run_meta_path":
            parts = [p for p in v.split(",") if p]
            if len(parts) > 1:
                for j in range(len(parts)):
                    nv = ",".join(parts[:j] + parts[j + 1:])
                    yield flags[:i] + [(k, nv)] + flags[i + 1:]
        if k == "graph_path" and v.endswith(".pb") and \
                (TESTDATA / (v + "txt")).exists():
            yield flags[:i] + [(k, v + "txt")] + flags[i + 1:]
        if k == "op_log_path" and ("graph_path" in d or
                                   "run_meta_path" in d):
            yield flags[:i] + flags[i + 1:]
        if k == "graph_path" and "run_meta_path" in d:
            yield flags[:i] + flags[i + 1:]
        if k == "run_meta_path" and "graph_path" in d:
            yield flags[:i] + flags[i + 1:]
        if k == "max_depth" and v not in ("0", "1", "2", "3", "10"):
            try:
                n = int(v)
            except ValueError:
                n = 10
            for nv in ("3", "10", "100") if n > 10 else ("2",):
                if nv != v:
                    yield flags[:i] + [(k, nv)] + flags[i + 1:]


def minimise(runner, view, flags, budget=200):
    """Drops options and list elements while the case still mismatches in
    the same way (an engine crash stays a crash, a difference stays a
    difference)."""
    first = runner.compare(view, flags)
    if first is None:
        return list(flags)
    crash = first["what"] == "engine crash"
    cur = list(flags)
    progress = True
    while progress and budget > 0:
        progress = False
        for cand in simplifications(cur):
            if known_engine_crash(view, cand) and not crash:
                continue
            budget -= 1
            if budget <= 0:
                break
            res = runner.compare(view, cand)
            if res is not None and (res["what"] == "engine crash") == crash:
                cur = cand
                progress = True
                break
    return cur


def engine_deterministic(runner, view, flags, times=2):
    outs = set()
    for _ in range(times + 1):
        e = runner.engine_side(view, flags)
        if "crash" in e:
            return False
        outs.add((e["stdout"], e["file"]))
    return len(outs) == 1


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def opt_signature(view, flags):
    """View and the option names a minimal reproduction needs."""
    names = [k for k, _ in flags if k not in INPUT_FLAGS]
    kinds = sorted(k for k, _ in flags if k in INPUT_FLAGS)
    return "%s [%s] {%s}" % (view, " ".join(names), ",".join(kinds))


def covered_by(flags, view, fixture, crash, repros):
    """A known minimal reproduction of the same view and fixture whose
    options (inputs aside) this case contains."""
    fset = set(flags)
    for rep in repros:
        if rep["view"] != view or rep["fixture"] != fixture:
            continue
        need = [kv for kv in rep["min_flags"] if kv[0] not in INPUT_FLAGS]
        if all(kv in fset for kv in need) and \
                rep["crash"] == crash:
            return rep
    return None


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=200,
                    help="number of random cases (default 200)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop drawing cases after this wall time")
    ap.add_argument("--rtfprof", default="/tmp/sweep-target/release/rtfprof",
                    help="rtfprof binary (built with cargo build --release)")
    ap.add_argument("--python", default=sys.executable,
                    help="Python with TensorFlow for the engine worker")
    ap.add_argument("--view", choices=VIEWS, help="only this view")
    ap.add_argument("--fixture", choices=FIXTURES, help="only this fixture")
    ap.add_argument("--out", help="directory for mismatches.jsonl and "
                                  "summary.txt")
    ap.add_argument("--no-minimise", action="store_true")
    ap.add_argument("--max-minimise", type=int, default=300,
                    help="minimise at most this many mismatches")
    ap.add_argument("--one", help="compare just this rtfprof command line "
                                  "(view and flags)")
    ap.add_argument("--golden", action="store_true",
                    help="harness check: compare the cases of "
                         "testdata/golden/cases.txt instead of random ones")
    ap.add_argument("--self-test", action="store_true",
                    help="perturb max_depth on the engine side only")
    ap.add_argument("--quiet", action="store_true",
                    help="do not print every mismatch in full")
    ap.add_argument("--allow-crashes", action="store_true",
                    help="also run cases known to crash the engine "
                         "(code view with max_depth < 1 or the root "
                         "trimmed); skipped by default")
    ap.add_argument("--skip-cmd", action="append", default=[],
                    metavar="REGEX",
                    help="skip drawn cases whose command line matches "
                         "(re.search) this regex, e.g. to look past a known "
                         "mismatch; repeatable")
    ap.add_argument("--engine-worker", action="store_true",
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine_worker:
        engine_worker()
        return
    if not os.path.exists(args.rtfprof):
        sys.exit("no rtfprof binary at %s (see --rtfprof)" % args.rtfprof)

    runner = Runner(args)
    try:
        if args.one:
            words = args.one.split()
            view = words[0]
            flags = [tuple(w[2:].split("=", 1)) for w in words[1:]]
            mm = runner.compare(view, flags)
            print(cmdline(view, flags))
            print("equal" if mm is None else describe(mm))
            if mm is not None:
                print("engine deterministic:",
                      engine_deterministic(runner, view, flags))
            return
        if args.golden:
            golden_check(runner)
            return
        sweep(args, runner)
    finally:
        runner.engine.close()
        shutil.rmtree(runner.tmp, ignore_errors=True)


# Golden cases where rtfprof errors out on purpose (see tests/integration/golden.rs).
DELIBERATE = (".select.dup_unknown", ".order_by.unknown",
              ".hide.invalid_regex", ".show.invalid_regex")


def golden_check(runner):
    n = bad = 0
    for line in (TESTDATA / "golden" / "cases.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, view, *words = line.split()
        if name.endswith(DELIBERATE):
            continue
        flags = [tuple(w[2:].split("=", 1)) for w in words]
        n += 1
        mm = runner.compare(view, flags)
        if mm is not None:
            bad += 1
            print("MISMATCH %s: rtfprof %s" % (name, cmdline(view, flags)))
            print(describe(mm), flush=True)
    print("golden: %d cases, %d mismatches" % (n, bad))


def sweep(args, runner):
    t0 = time.time()
    facts = {}
    for fx in FIXTURES:
        facts[fx] = fixture_facts(args.rtfprof, fx, runner.tmp)
    rng = random.Random(args.seed)
    out_dir = Path(args.out) if args.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        jsonl = open(out_dir / "mismatches.jsonl", "a")
    repros = []  # minimised reproductions
    n_cases = n_mm = n_minimised = n_skipped = 0
    by_view = {}
    i = 0
    while True:
        if args.minutes is not None:
            if time.time() - t0 > args.minutes * 60:
                break
        elif i >= args.cases:
            break
        i += 1
        case = draw_case(rng, facts, args.fixture, args.view)
        view, flags = case["view"], case["flags"]
        line = cmdline(view, flags)
        if any(re.search(r, line) for r in args.skip_cmd) or \
                (known_engine_crash(view, flags) and not args.allow_crashes):
            n_skipped += 1
            continue
        n_cases += 1
        by_view[view] = by_view.get(view, 0) + 1
        mm = runner.compare(view, flags)
        if mm is None:
            continue
        n_mm += 1
        rec = {"case": i, "seed": args.seed, "view": view,
               "fixture": case["fixture"], "input": case["input"],
               "cmd": line, "what": mm["what"]}
        rep = covered_by(flags, view, case["fixture"],
                         mm["what"] == "engine crash", repros)
        if rep is not None:
            rep["count"] += 1
            rec["covered_by"] = rep["id"]
            if not args.quiet:
                print("MISMATCH #%d (case %d), like repro %d: %s" %
                      (n_mm, i, rep["id"], line), flush=True)
        else:
            print("MISMATCH #%d (case %d): rtfprof %s" % (n_mm, i, line))
            print(describe(mm), flush=True)
            if not args.no_minimise and n_minimised < args.max_minimise:
                n_minimised += 1
                det = engine_deterministic(runner, view, flags)
                small = minimise(runner, view, flags)
                mm2 = runner.compare(view, small)
                rep = {"id": len(repros) + 1, "view": view,
                       "fixture": case["fixture"], "min_flags": small,
                       "cmd": cmdline(view, small), "count": 1,
                       "engine_deterministic": det,
                       "crash": mm["what"] == "engine crash",
                       "signature": opt_signature(view, small),
                       "diff": describe(mm2) if mm2 else "(no longer "
                       "mismatches: flaky)\n"}
                repros.append(rep)
                rec["min_cmd"] = rep["cmd"]
                rec["repro"] = rep["id"]
                rec["engine_deterministic"] = det
                print("  minimal (repro %d, engine deterministic: %s): "
                      "rtfprof %s" % (rep["id"], det, rep["cmd"]))
                print(rep["diff"], flush=True)
        if out_dir:
            jsonl.write(json.dumps(rec) + "\n")
            jsonl.flush()
    elapsed = time.time() - t0
    summary = summarise(repros, n_cases, n_mm, by_view, runner, elapsed,
                        args, n_skipped)
    print(summary)
    if out_dir:
        jsonl.close()
        (out_dir / "summary.txt").write_text(summary)


def summarise(repros, n_cases, n_mm, by_view, runner, elapsed, args,
              n_skipped):
    lines = ["seed %d: %d cases (%s), %d compare runs in all, %.0fs; "
             "%d mismatching cases, %d minimised reproductions; engine "
             "worker restarts: %d; %d drawn cases skipped (known engine "
             "crashes, --skip-cmd)" % (
                 args.seed, n_cases,
                 ", ".join("%s %d" % kv for kv in sorted(by_view.items())),
                 runner.runs, elapsed, n_mm, len(repros),
                 runner.engine.restarts, n_skipped)]
    groups = {}
    for rep in repros:
        groups.setdefault(rep["signature"], []).append(rep)
    for sig, reps in sorted(groups.items()):
        lines.append("")
        lines.append("== %s: %d repro(s), %d case(s)" %
                     (sig, len(reps), sum(r["count"] for r in reps)))
        for rep in reps[:3]:
            lines.append("-- repro %d (%s, engine deterministic: %s)" %
                         (rep["id"], rep["fixture"],
                          rep["engine_deterministic"]))
            lines.append("rtfprof " + rep["cmd"])
            lines.append(rep["diff"].rstrip("\n"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
