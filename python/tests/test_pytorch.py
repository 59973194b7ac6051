"""rtfprof.key_averages() against PyTorch's own key_averages() and table().

testdata/pytorch/ holds traces recorded with torch 2.11 and what torch said
about them (tools/torch/gen_key_averages.py); the shared H200 traces are
checked too when ../shared/traces is there.
"""
import ast
import json
import math
import pickle

import pytest

import rtfprof
from conftest import REPO, TESTDATA

PYTORCH = TESTDATA / "pytorch"
SHARED = REPO.parent / "shared" / "traces" / "torch_h200"


def fixtures():
    out = []
    for expected in sorted(PYTORCH.glob("*.key_averages.json")):
        name = expected.name[: -len(".key_averages.json")]
        trace = next(p for p in PYTORCH.glob(name + ".pt.trace.json*"))
        out.append((name, trace))
    assert len(out) >= 3
    return out


def same(ours, theirs, field):
    if field == "device_type":
        return ours == theirs
    if field == "input_shapes":
        # torch's str(input_shapes); ours is the list itself when grouped.
        return (ours == "" and theirs == "") or ours == ast.literal_eval(theirs)
    if isinstance(theirs, float) or isinstance(ours, float):
        # bit for bit; torch's int 0 is 0.0 here
        return float(ours).hex() == float(theirs).hex() or (ours == 0 and theirs == 0)
    return ours == theirs


@pytest.mark.parametrize("name,trace", fixtures())
def test_rows_equal_torch(name, trace):
    expected = json.loads((PYTORCH / (name + ".key_averages.json")).read_text())
    for case in expected["cases"]:
        rows = rtfprof.key_averages(trace, group_by_input_shape=case["group_by_input_shape"])
        theirs = case["rows"]
        assert len(rows) == len(theirs)
        bad = [
            (r.key, field, getattr(r, field), value)
            for r, t in zip(rows, theirs)
            for field, value in t.items()
            if not same(getattr(r, field), value, field)
        ]
        assert not bad, bad[:10]


@pytest.mark.parametrize("name,trace", fixtures())
def test_tables_equal_torch(name, trace):
    expected = json.loads((PYTORCH / (name + ".tables.json")).read_text())
    for case in expected["tables"]:
        rows = rtfprof.key_averages(str(trace), case["group_by_input_shape"])
        assert rows.table(**case["args"]) == case["text"], case["args"]


def test_shared_gpu_traces():
    if not SHARED.exists():
        pytest.skip(f"{SHARED} is absent (it is not part of the repository)")
    for name in ("torch_resnet18", "torch_tx"):
        d = SHARED / name
        trace = next(d.glob("*.pt.trace.json.gz"))
        rows = rtfprof.key_averages(trace)
        theirs = json.loads((d / "key_averages.json").read_text())
        assert [r.key for r in rows] == [t["key"] for t in theirs]
        assert all(same(getattr(r, f), v, f) for r, t in zip(rows, theirs) for f, v in t.items())
        for sort_by in ("self_cpu_time_total", "self_device_time_total"):
            assert rows.table(sort_by=sort_by, row_limit=-1) == (d / f"table.{sort_by}.txt").read_text()


def test_a_sequence_with_torchs_attributes():
    name, trace = fixtures()[0]
    rows = rtfprof.key_averages(trace)
    assert len(rows) == len(list(rows)) > 5
    assert rows[-1].key == list(rows)[-1].key
    assert [r.key for r in rows[1:3]] == [r.key for r in list(rows)[1:3]]
    r = rows[0]
    assert math.isclose(r.cpu_time, r.cpu_time_total / r.count)
    assert (r.node_id, r.is_legacy, r.is_async, r.is_remote, r.overload_name, r.stack) == (-1, False, False, False, "", [])
    assert "KeyAverage" in repr(r) and r.key in repr(r)
    with pytest.raises(IndexError):
        rows[len(rows)]
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        rows.table(sort_by="nonsense")
    # cuda_* names mean device_*, as in torch
    assert rows.table(sort_by="self_cuda_time_total") == rows.table(sort_by="self_device_time_total")


def test_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.pt.trace.json"
    bad.write_text('{"schemaVersion": 1}')
    with pytest.raises(ValueError, match=r"--pytorch_path .*bad\.pt\.trace\.json: not a Kineto trace \(no traceEvents\)"):
        rtfprof.key_averages(bad)
    with pytest.raises(FileNotFoundError):
        rtfprof.key_averages(tmp_path / "absent.json")
