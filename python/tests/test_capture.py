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


# A child that captures from ADDRESSES (the last a listening socket that
# never answers), says when it started, and prints what the capture ended
# with: the exception and the warnings, one a line.
INTERRUPTED_CHILD = r"""
import signal, socket, sys, time, warnings
# (A process started in the background by a shell without job control
# inherits SIGINT ignored, and Python then installs no KeyboardInterrupt
# handler: a CI step run that way made both Ctrl-C tests wait out their
# timeout. The test is of Ctrl-C as a terminal delivers it.)
signal.signal(signal.SIGINT, signal.default_int_handler)
import rtfprof
stalled = socket.socket()
stalled.bind(("localhost", 0))
stalled.listen()  # (the kernel accepts connections; nothing answers them)
addresses = sys.argv[2:] + ["localhost:%d" % stalled.getsockname()[1]]
print(addresses[-1], flush=True)
started = time.monotonic()
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        rtfprof.capture(addresses, 500, sys.argv[1], timeout_ms=120000)
        print("returned")
    except KeyboardInterrupt:
        print("KeyboardInterrupt after %.1f s" % (time.monotonic() - started))
for w in caught:
    print("%s: %s" % (w.category.__name__, w.message))
"""


def interrupted_capture(logdir, addresses, ready):
    """Runs INTERRUPTED_CHILD, sends it SIGINT once `ready()` holds, and
    returns the stalled address and its output lines."""
    import signal
    import time
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED_CHILD, str(logdir)] + addresses, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stalled = child.stdout.readline().strip()
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # (the capture is waiting on the stalled host)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == 0, err
    return stalled, out.splitlines()


def test_ctrl_c_ends_the_python_function_at_once(tmp_path):
    # Without the main thread looking for Ctrl-C, the capture waited for
    # its 120 s deadline and KeyboardInterrupt came after it.
    stalled, lines = interrupted_capture(tmp_path, [], lambda: True)
    assert re.fullmatch(r"KeyboardInterrupt after [0-4]\.\d s", lines[0]), lines
    assert lines[1:] == [
        "RuntimeWarning: capture %s: no trace: Ctrl-C came before it" % stalled,
        "RuntimeWarning: capture: interrupted (Ctrl-C); nothing was saved",
    ]
    assert not (tmp_path / "plugins").exists()


def test_ctrl_c_keeps_the_trace_that_arrived(jax_job, tmp_path):
    arrived = lambda: any((tmp_path / "plugins" / "profile").glob("*/*.xplane.pb"))
    stalled, lines = interrupted_capture(tmp_path, [jax_job], arrived)
    [trace] = (tmp_path / "plugins" / "profile").glob("*/*.xplane.pb")
    assert trace.name == "localhost_%s.xplane.pb" % jax_job.split(":")[1]
    assert lines[0].startswith("KeyboardInterrupt after "), lines
    assert lines[1:] == [
        "RuntimeWarning: capture %s: no trace: Ctrl-C came before it" % stalled,
        "RuntimeWarning: capture: interrupted (Ctrl-C); kept %s" % trace.parent,
    ]
    import rtfprof
    assert len(rtfprof.steps(xplane_path=str(trace))) >= 5
