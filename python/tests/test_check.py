"""rtfprof.check: the dict `rtfprof check --output json` writes, on the real
runs of testdata/check (tools/check/gen_runs.py)."""
import json
import subprocess
import sys

import pytest

import rtfprof
from conftest import TESTDATA

RUNS = TESTDATA / "check"


def test_identical_runs_pass_and_a_wider_layer_fails():
    same = rtfprof.check(RUNS / "base_a", str(RUNS / "base_b"))
    assert same["passed"] is True
    wider = rtfprof.check(RUNS / "base_a", RUNS / "wider")
    assert wider["passed"] is False
    regressed = {m["label"] for m in wider["metrics"] if m["verdict"] == "regression"}
    assert {"step_time", "op:jit(step)/jvp(layer2)/dot_general"} <= regressed


def test_several_runs_a_side_are_lists_of_paths(tmp_path):
    out = tmp_path / "check.json"
    base, new = [RUNS / "base_a", str(RUNS / "base_b")], (RUNS / "fresh_a", RUNS / "fresh_b")
    run = subprocess.run(
        [sys.executable, "-m", "rtfprof", "check", *map(str, base), "--new", *map(str, new), "--output", f"json:outfile={out}"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    result = rtfprof.check(base, new)
    assert result == json.loads(out.read_text())
    assert len(result["baseline_runs"]) == len(result["new_runs"]) == 2
    step = next(m for m in result["metrics"] if m["label"] == "step_time")
    assert len(step["baseline_run_medians"]) == 2
    wider = rtfprof.check(base, RUNS / "wider")
    assert wider["passed"] is False
    with pytest.raises(ValueError, match="baseline"):
        rtfprof.check([], RUNS / "wider")


def test_min_part_growth():
    layer3 = "op:jit(step)/jvp(layer3)/dot_general"
    verdict = lambda result: next(m["verdict"] for m in result["metrics"] if m["label"] == layer3)
    assert verdict(rtfprof.check(RUNS / "base_a", RUNS / "wider")) == "step_unmoved"
    loose = rtfprof.check(RUNS / "base_a", RUNS / "wider", min_part_growth="0.5%")
    assert verdict(loose) == "regression" and loose["options"]["min_part_growth"] == 0.005
    with pytest.raises(ValueError, match="min_part_growth"):
        rtfprof.check(RUNS / "base_a", RUNS / "wider", min_part_growth="lots")


def test_the_dict_is_the_clis_json(tmp_path):
    out = tmp_path / "check.json"
    run = subprocess.run(
        [sys.executable, "-m", "rtfprof", "check", str(RUNS / "base_a"), str(RUNS / "extra_op"), "--output", f"json:outfile={out}"],
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    assert rtfprof.check(str(RUNS / "base_a"), str(RUNS / "extra_op")) == json.loads(out.read_text())


def test_thresholds_and_bad_values():
    loose = rtfprof.check(RUNS / "base_a", RUNS / "wider", max_regression="300%", max_op_regression="300%")
    assert loose["passed"] is True
    strict = rtfprof.check(RUNS / "base_a", RUNS / "wider", max_regression="300%", max_op_regression="300%", thresholds={"step_time": "1%"})
    assert [m["label"] for m in strict["metrics"] if m["verdict"] == "regression"] == ["step_time"]
    with pytest.raises(ValueError, match="max_regression"):
        rtfprof.check(RUNS / "base_a", RUNS / "wider", max_regression="five")
    with pytest.raises(Exception, match="no_such"):
        rtfprof.check(RUNS / "no_such", RUNS / "wider")


def test_memory_flags():
    """A run that holds more memory fails on its allocator's peak, as `rtfprof check` does, unless the memory flags allow it."""
    loose = {"max_regression": "10000%", "max_op_regression": "10000%"}
    more = rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", **loose)
    assert [m["label"] for m in more["metrics"] if m["verdict"] == "regression"] == ["memory:cpu"]
    assert rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", max_memory_regression="10000%", **loose)["passed"] is True
    assert rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", min_memory_change="1GiB", **loose)["passed"] is True
    with pytest.raises(ValueError, match="min_memory_change"):
        rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", min_memory_change="lots")


def test_a_rules_file(tmp_path):
    """`rules=` reads a rules file as `--rules` does: budgets fail, ignored metrics pass, keywords override its defaults."""
    rules = tmp_path / "rules.toml"
    rules.write_text("ignore = ['memory:.*']\n[defaults]\nmax_regression = '10000%'\nmax_op_regression = '10000%'\n")
    ignored = rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", rules=rules)
    assert ignored["passed"] is True
    assert [i["label"] for i in ignored["ignored"]] == ["memory:cpu"]
    assert ignored["options"]["rules"] == str(rules)
    # A keyword given overrides the file's default, as a flag does.
    strict = rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_memory", rules=str(rules), max_op_regression="8%")
    assert strict["options"]["max_op_regression"] == 0.08
    step = next(m for m in ignored["metrics"] if m["label"] == "step_time")["new_median"]
    budget = tmp_path / "budget.toml"
    budget.write_text(f"[[budget]]\nmetric = 'step_time'\nmax = '{step / 2:.0f}us'\n")
    over = rtfprof.check(RUNS / "torch_base_a", RUNS / "torch_base_b", rules=budget)
    assert over["passed"] is False
    assert [(b["label"], b["verdict"]) for b in over["budgets"]] == [("step_time", "exceeded")]
    assert "over budget: step_time" in over["summary"]
    # The dict is the CLI's JSON.
    out = tmp_path / "check.json"
    run = subprocess.run(
        [sys.executable, "-m", "rtfprof", "check", str(RUNS / "torch_base_a"), str(RUNS / "torch_base_b"), "--rules", str(budget), "--output", f"json:outfile={out}"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stderr
    assert json.loads(out.read_text()) == over
    bad = tmp_path / "bad.toml"
    bad.write_text("[defaults]\nmax_regresion = '5%'\n")
    with pytest.raises(ValueError, match=r"bad\.toml: line 2: unknown field `max_regresion`"):
        rtfprof.check(RUNS / "base_a", RUNS / "base_b", rules=bad)
    with pytest.raises(FileNotFoundError, match="nope.toml"):
        rtfprof.check(RUNS / "base_a", RUNS / "base_b", rules=tmp_path / "nope.toml")
