"""rtfprof.profile against TensorFlow's own Python tf.compat.v1.profiler.profile.

testdata/python/profile_parity.json.gz (tools/gen_profile_parity.py) holds
what TF 2.21's Python function returned for the GraphDef fixtures, given
their graph (imported), one RunMetadata and an op log (the fixture's, none,
or the fixture's without float ops), with ProfileOptionBuilder's presets
and a builder with name filters and account_displayed_op_only. TF merges a
default op log into the one given (float ops of its registered statistics,
shapes completed from the run metadata); rtfprof.profile does the same by
default (`default_op_log=True`), so every field of every node must be TF's.
"""
import gzip
import json

import pytest

import rtfprof
from conftest import TESTDATA, absolute_inputs, plain

with gzip.open(TESTDATA / "python" / "profile_parity.json.gz", "rt") as f:
    PARITY = json.load(f)
CASES = PARITY["cases"]

# GraphDefs saved without _output_shapes (tools/gen_shapes.py): TF's graph
# infers every shape on import, and rtfprof.profile infers the same.
with gzip.open(TESTDATA / "shapes" / "profile.json.gz", "rt") as f:
    SHAPES = json.load(f)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_profile_equals_tensorflows_python_profile(case):
    root = rtfprof.profile(case["cmd"], options=case["options"], **absolute_inputs(case["inputs"]))
    assert plain(root) == case["result"]


@pytest.mark.parametrize("case", SHAPES, ids=[c["name"] for c in SHAPES])
def test_profile_of_a_graph_without_shapes_equals_tensorflows(case):
    root = rtfprof.profile(case["cmd"], options=case["options"], **absolute_inputs(case["inputs"]))
    assert plain(root) == case["result"]


def test_the_cases_cover_what_the_issue_names():
    names = {c["name"] for c in CASES}
    assert len(CASES) == 72
    for model in ("cnn", "mlp"):
        for options in ("time_and_memory", "trainable_variables_parameter", "float_operation", "custom"):
            for cmd in ("scope", "graph", "op"):
                assert "%s.op_log_no_flops.%s.%s" % (model, options, cmd) in names


def test_without_the_default_op_log_only_the_op_logs_float_ops_count():
    """The command line's numbers (tfprof reads the op log alone): an op log
    without float ops gives none; TF's Python function counts them."""
    case = next(c for c in CASES if c["name"] == "cnn.op_log_no_flops.float_operation.scope")
    inputs = absolute_inputs(case["inputs"])
    merged = rtfprof.profile("scope", options=case["options"], **inputs)
    alone = rtfprof.profile("scope", options=case["options"], default_op_log=False, **inputs)
    assert merged.total_float_ops == case["result"]["total_float_ops"] > 0
    assert alone.total_float_ops == 0
