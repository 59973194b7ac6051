"""Partial profiles from Python: rtfprof.partial over rank traces, merged
with rtfprof.merge in a tree — here on a Dask LocalCluster, as the README's
recipe does on a real one — give the bytes, text views, ranks and HTML
report of the single-process run."""
import shutil
import subprocess
import sys

import pytest

import rtfprof

from conftest import TESTDATA

RANKS = 24


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """Tens of rank traces: copies of two committed fixtures, renamed."""
    folder = tmp_path_factory.mktemp("ranks")
    sources = [TESTDATA / "pytorch" / "threads_memory.pt.trace.json", TESTDATA / "pytorch" / "schedule.pt.trace.json.gz"]
    for rank in range(RANKS):
        source = sources[rank % 2]
        suffix = ".pt.trace.json.gz" if source.name.endswith(".gz") else ".pt.trace.json"
        shutil.copy(source, folder / f"rank{rank:02d}{suffix}")
    return folder


def cli(*args):
    run = subprocess.run([sys.executable, "-m", "rtfprof", *map(str, args)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout


def tree_merge(parts):
    """Pairwise, as the cluster does it."""
    while len(parts) > 1:
        parts = [rtfprof.merge(parts[i:i + 2]) for i in range(0, len(parts), 2)]
    return parts[0]


def test_partials_merge_to_the_single_process_profile(ranks, tmp_path):
    files = sorted(ranks.iterdir())
    single = rtfprof.partial(pytorch_path=ranks)
    parts = [rtfprof.partial(f) for f in reversed(files)]
    assert tree_merge(parts) == single
    assert rtfprof.merge(parts[::3] + [rtfprof.merge(parts[1::3]), rtfprof.merge(parts[2::3])]) == single
    # profile() reads the bytes as the rank directory's --job merge.
    options = {"max_depth": 100, "select": ["micros", "occurrence"], "order_by": "micros"}
    from_bytes = rtfprof.to_records(rtfprof.profile("op", partial=single, options=options))
    from_traces = rtfprof.to_records(rtfprof.profile("op", pytorch_path=ranks, options=options))
    assert from_bytes == from_traces
    (tmp_path / "all.rtfprof").write_bytes(single)
    assert rtfprof.to_records(rtfprof.profile("op", partial_path=tmp_path, options=options)) == from_traces


def test_bad_partials_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="not an rtfprof partial profile"):
        rtfprof.merge([b"nonsense"])
    good = rtfprof.partial(TESTDATA / "pytorch" / "threads_memory.pt.trace.json")
    with pytest.raises(ValueError, match="truncated or corrupt"):
        rtfprof.profile("op", partial=good[: len(good) // 2])
    with pytest.raises(ValueError, match="is in two partials"):
        rtfprof.merge([good, good])


def test_dask_recipe_equals_the_single_process_run(ranks, tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="dask[distributed] is not installed: the Dask recipe is not tested")
    files = sorted(str(f) for f in ranks.iterdir())
    with distributed.LocalCluster(n_workers=3, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        # The README's recipe: a partial where each file lies, merged in a tree.
        parts = client.map(rtfprof.partial, files)
        while len(parts) > 1:
            parts = [client.submit(rtfprof.merge, parts[i:i + 8]) for i in range(0, len(parts), 8)]
        merged = parts[0].result()
    assert merged == rtfprof.partial(pytorch_path=ranks)
    out = tmp_path / "merged.rtfprof"
    out.write_bytes(merged)
    for view in (["op", "--select", "micros,occurrence"], ["scope", "--max_depth", "4"], ["code", "--max_depth", "5"]):
        assert cli(*view, "--partial_path", out) == cli(*view, "--pytorch_path", ranks), view
    # The ranks: each partial carries its rank, so the merged one gives the
    # ranks, stragglers and overlap of the traces read together.
    assert cli("ranks", "--partial_path", out) == cli("ranks", "--pytorch_path", ranks)
    assert rtfprof.ranks(partial=merged) == rtfprof.ranks(pytorch_path=ranks)
    # The report from the cluster's partial is the single process's.
    report = tmp_path / "report.html"
    cli("report", "--partial_path", out, "--output", f"html:outfile={report}")
    from_cluster = report.read_bytes()
    cli("partial", "--pytorch_path", ranks, "-o", out)
    cli("report", "--partial_path", out, "--output", f"html:outfile={report}")
    assert report.read_bytes() == from_cluster
