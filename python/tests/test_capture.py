"""`rtfprof capture` of a real JAX job: jax_job.py runs a training loop on
CPU with jax.profiler.start_server; two captures in a row each land where
XProf reads them (LOGDIR/plugins/profile/RUN/localhost_PORT.xplane.pb) and
rtfprof prints the job's steps right after each. Skipped where jax is not
installed (.ci/run installs it). The failures are tested against stand-in
servers in tests/integration/capture.rs."""
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli

JOB = Path(__file__).resolve().parent / "jax_job.py"

STEP_ROW = re.compile(r"^train (\d+) ", re.M)


def free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture
def jax_job():
    """The job's address, once its first step has compiled."""
    pytest.importorskip("jax", reason="jax is not installed: the live capture is not tested")
    port = free_port()
    job = subprocess.Popen([sys.executable, str(JOB), str(port), "120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = job.stdout.readline()
        assert line == "ready\n", job.stderr.read() if job.poll() is not None else line
        yield "localhost:%d" % port
    finally:
        job.kill()
        job.wait()


def test_two_captures_land_where_xprof_reads_them_with_their_steps(jax_job, tmp_path):
    steps_seen = []
    for _ in range(2):
        run = run_cli(["capture", "--service_addr", jax_job, "--duration_ms", "1000", "--logdir", str(tmp_path)], timeout=120)
        assert run.returncode == 0, run.stderr
        header = run.stdout.splitlines()[0]
        match = re.fullmatch(r"Captured 1 host of 1 host in (.*)", header)
        assert match, run.stdout
        run_dir = Path(match.group(1))
        assert run_dir.parent == tmp_path / "plugins" / "profile"
        assert re.fullmatch(r"\d{4}(_\d\d){5}(_\d+)?", run_dir.name)
        trace = run_dir / ("localhost_%s.xplane.pb" % jax_job.split(":")[1])
        assert [p.name for p in run_dir.iterdir()] == [trace.name]
        # The steps printed are those `rtfprof steps` finds in the file.
        steps = run_cli(["steps", "--xplane_path", str(trace)])
        assert steps.returncode == 0, steps.stderr
        assert run.stdout == header + "\n" + steps.stdout
        numbers = [int(n) for n in STEP_ROW.findall(run.stdout)]
        # About 1 ms a step with 5 ms between: a second holds tens.
        assert len(numbers) >= 10, run.stdout
        assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
        steps_seen.append(numbers)
    assert len({p.name for p in (tmp_path / "plugins" / "profile").iterdir()}) == 2
    assert steps_seen[1][0] > steps_seen[0][-1]


def test_xprof_opens_the_capture(jax_job, tmp_path):
    convert = pytest.importorskip("xprof.convert.raw_to_tool_data", reason="xprof is not installed")
    run = run_cli(["capture", "--service_addr", jax_job, "--duration_ms", "500", "--logdir", str(tmp_path)], timeout=120)
    assert run.returncode == 0, run.stderr
    trace = next((tmp_path / "plugins" / "profile").glob("*/*.xplane.pb"))
    data, content_type = convert.xspace_to_tool_data([str(trace)], "overview_page", {"use_saved_result": False})
    assert content_type == "application/json" and data


def test_the_python_function_captures_into_a_run(jax_job, tmp_path):
    import rtfprof
    run_dir = Path(rtfprof.capture(jax_job, 500, tmp_path))
    assert run_dir.parent == tmp_path / "plugins" / "profile"
    trace = run_dir / ("localhost_%s.xplane.pb" % jax_job.split(":")[1])
    assert len(rtfprof.steps(xplane_path=str(trace))) >= 5


def test_the_python_function_names_a_host_without_a_server(tmp_path):
    import rtfprof
    address = "localhost:%d" % free_port()
    with pytest.raises(RuntimeError, match="capture %s: no profiler server answers" % address):
        rtfprof.capture([address], 100, tmp_path)
    assert not (tmp_path / "plugins").exists()
    with pytest.raises(ValueError, match="--service_addr: 'nowhere' is not HOST:PORT"):
        rtfprof.capture("nowhere", 100, tmp_path)
