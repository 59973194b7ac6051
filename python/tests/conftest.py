"""Shared helpers for the tests of the installed rtfprof wheel.

Run from a venv where the wheel is installed (see .ci/run): the tests import
the installed package and run its `rtfprof` command, never the sources.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTDATA = REPO / "testdata"

RESULTS = TESTDATA / "python" / "results.json.gz"


def _fixtures():
    """The fixtures as profile() keywords (paths relative to testdata/), as
    tools/gen_python_fixtures.py gave them to TensorFlow: one spelling, the
    generator's."""
    with gzip.open(RESULTS, "rt") as f:
        cases = json.load(f)["cases"]
    fixtures = {}
    for case in cases:
        fixtures.setdefault(case["name"].split(".")[0], case["inputs"])
    return fixtures


FIXTURES = _fixtures()

OWN_FIELDS = ["run_count", "exec_micros", "accelerator_exec_micros", "cpu_exec_micros", "requested_bytes",
              "peak_bytes", "residual_bytes", "output_bytes", "parameters", "float_ops"]
TOTAL_FIELDS = ["total_definition_count"] + ["total_" + f for f in OWN_FIELDS]
# The CSV/JSON outputs' metric names and the message's field names.
METRIC_FIELDS = {"requested_bytes": "requested_bytes", "peak_bytes": "peak_bytes",
                 "residual_bytes": "residual_bytes", "output_bytes": "output_bytes",
                 "exec_micros": "exec_micros", "accelerator_micros": "accelerator_exec_micros",
                 "cpu_micros": "cpu_exec_micros", "parameters": "parameters", "float_ops": "float_ops",
                 "run_count": "run_count"}


def absolute_inputs(inputs):
    """profile() keywords with paths under testdata/."""
    out = {}
    for key, value in inputs.items():
        if isinstance(value, list):
            out[key] = [str(TESTDATA / v) for v in value]
        else:
            out[key] = str(TESTDATA / value)
    return out


def cli_flags(inputs):
    """The same inputs as rtfprof flags."""
    flags = []
    for key, value in absolute_inputs(inputs).items():
        flags.append("--%s=%s" % (key, ",".join(value) if isinstance(value, list) else value))
    return flags


def rtfprof_command():
    """The `rtfprof` command the wheel installed beside this Python."""
    here = Path(sys.executable).parent / "rtfprof"
    found = str(here) if here.exists() else shutil.which("rtfprof")
    assert found, "the wheel's rtfprof command is not installed"
    return found


def run_cli(args, **kwargs):
    return subprocess.run([rtfprof_command()] + list(args), capture_output=True, text=True, **kwargs)


def chain(root):
    """The op view's rows: tfprof links them as a chain."""
    rows = []
    node = root
    while node.children:
        assert len(node.children) == 1, "op rows form a chain"
        node = node.children[0]
        rows.append(node)
    return rows


def shape(s):
    return None if s is None else list(s)


def plain(node):
    """A node as tools/gen_python_fixtures.py writes TensorFlow's messages."""
    import rtfprof
    out = {"name": node.name}
    if isinstance(node, rtfprof.GraphNode):
        tv = node.tensor_value
        out["tensor_value"] = None if tv is None else {
            "dtype": tv.dtype, "value_double": tv.value_double, "value_int64": tv.value_int64,
            "value_str": tv.value_str}
        for f in OWN_FIELDS + TOTAL_FIELDS:
            out[f] = getattr(node, f)
        out["devices"] = list(node.devices)
        out["shapes"] = [shape(s) for s in node.shapes]
        out["input_shapes"] = {str(k): shape(v) for k, v in sorted(node.input_shapes.items())}
    else:
        for f in OWN_FIELDS[1:] + TOTAL_FIELDS[2:]:
            out[f] = getattr(node, f)
        out["graph_nodes"] = [plain(g) for g in node.graph_nodes]
    out["children"] = [plain(c) for c in node.children]
    return out


@pytest.fixture(scope="session")
def tf_results():
    with gzip.open(RESULTS, "rt") as f:
        return json.load(f)


@pytest.fixture(scope="session")
def tf_options():
    with open(TESTDATA / "python" / "options.json") as f:
        return json.load(f)


def pytest_report_header(config):
    import rtfprof
    return "rtfprof %s from %s" % (rtfprof.__version__, os.path.dirname(rtfprof.__file__))
