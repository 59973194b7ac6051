"""rtfprof.ranks() is `rtfprof ranks --output json`'s document."""
import json
import subprocess
import sys

import pytest

import rtfprof
from conftest import TESTDATA

RANKS16 = TESTDATA / "pytorch" / "ranks16"


def test_ranks_is_the_commands_json(tmp_path):
    doc = rtfprof.ranks(pytorch_path=RANKS16)
    out = tmp_path / "ranks.json"
    subprocess.run([sys.executable, "-m", "rtfprof", "ranks", f"--pytorch_path={RANKS16}", f"--output=json:outfile={out}"], check=True)
    assert doc == json.loads(out.read_text())
    assert doc["stragglers"] == [11]
    assert [r["rank"] for r in doc["ranks"]] == list(range(16))


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="needs --pytorch_path"):
        rtfprof.ranks()
    with pytest.raises(ValueError, match="holds no"):
        rtfprof.ranks(pytorch_path=TESTDATA / "cnn")
