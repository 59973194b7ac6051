"""The wheel's `rtfprof` command: the same command line as the native binary."""
import subprocess
import sys

import pytest

from conftest import TESTDATA, rtfprof_command, run_cli

GOLDEN = TESTDATA / "golden"


def golden_cases(selected):
    """(name, view, flags) of testdata/golden/cases.txt lines `selected` keeps."""
    cases = []
    for line in (GOLDEN / "cases.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, view, *flags = line.split()
        if selected(name, view):
            flags = [f.replace("_path=", "_path=%s/" % TESTDATA) if "_path=" in f else f for f in flags]
            flags = [f.replace(",", ",%s/" % TESTDATA) if f.startswith("--run_meta_path=") else f for f in flags]
            cases.append((name, view, flags))
    return cases


# Every view of every fixture read from a profile file (advise is left out:
# tfprof's checker order is not deterministic).
PROFILE_CASES = golden_cases(lambda name, view: ".in_profile" in name and view != "advise")


def test_there_are_cases():
    assert len(PROFILE_CASES) >= 40


@pytest.mark.parametrize("name,view,flags", PROFILE_CASES, ids=[c[0] for c in PROFILE_CASES])
def test_prints_tfprofs_output(name, view, flags):
    run = run_cli([view] + flags)
    assert run.returncode == 0, run.stderr
    assert run.stdout == (GOLDEN / (name + ".out")).read_text()


def test_files_and_run_metadata_as_the_binary_reads_them():
    [(name, view, flags)] = golden_cases(lambda name, view: name == "cnn.scope.default")
    run = run_cli([view] + flags)
    assert run.returncode == 0, run.stderr
    assert run.stdout == (GOLDEN / (name + ".out")).read_text()


def test_bad_input_is_one_line_on_stderr_and_exit_1(tmp_path):
    run = run_cli(["scope", "--profile_path=%s" % (tmp_path / "missing")])
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith("rtfprof: --profile_path %s: " % (tmp_path / "missing"))
    assert run.stderr.count("\n") == 1


def test_wrong_kind_of_file():
    run = run_cli(["scope", "--profile_path=%s" % (TESTDATA / "mlp" / "graph.pbtxt")])
    assert run.returncode == 1
    assert run.stdout == "" and run.stderr.startswith("rtfprof: --profile_path ") and run.stderr.count("\n") == 1


def test_usage_error_exits_2():
    run = run_cli(["scope", "--no_such_flag"])
    assert run.returncode == 2
    assert run.stderr.startswith("rtfprof: ") and run.stderr.endswith("see 'rtfprof --help'\n")


def test_version_and_help():
    import rtfprof
    run = run_cli(["--version"])
    assert run.returncode == 0 and run.stdout == "rtfprof %s\n" % rtfprof.__version__
    run = run_cli(["--help"])
    assert run.returncode == 0 and "--profile_path" in run.stdout


def test_python_dash_m():
    [(name, view, flags)] = golden_cases(lambda name, view: name == "mlp.op.in_profile.step_m1")
    run = subprocess.run([sys.executable, "-m", "rtfprof", view] + flags, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == (GOLDEN / (name + ".out")).read_text()


def test_a_closed_pipe_ends_quietly():
    command = "'%s' graph --profile_path='%s' --max_depth=100000 | head -n 1" % (
        rtfprof_command(), TESTDATA / "while" / "profile")
    run = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Reading Files...\n" and run.stderr == ""
