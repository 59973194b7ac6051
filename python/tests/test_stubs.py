"""The type stubs describe the extension module as it is (mypy's stubtest)."""
import subprocess
import sys

import pytest


def test_stubs_match_the_module():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy.stubtest", "rtfprof._rtfprof"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
