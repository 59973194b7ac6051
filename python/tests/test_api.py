"""rtfprof.profile, to_records and to_dataframe against TensorFlow's results
and the CLI's CSV/JSON output."""
import base64
import csv
import faulthandler
import io
import json
import os
import re
import struct
import threading

import pytest

import rtfprof
from conftest import (FIXTURES, METRIC_FIELDS, TESTDATA, absolute_inputs, chain, cli_flags, plain,
                      run_cli)

VIEWS = ["scope", "graph", "op", "code"]


# ---------------------------------------------------------------------------
# What tf.profiler returns
# ---------------------------------------------------------------------------

def test_results_equal_tensorflows(tf_results):
    """Every field of every node, as TensorFlow's engine returned them."""
    cases = tf_results["cases"]
    assert len(cases) >= 60
    differ = []
    for case in cases:
        root = rtfprof.profile(case["cmd"], options=case["options"], **absolute_inputs(case["inputs"]))
        if plain(root) != case["result"]:
            differ.append(case["name"])
    assert differ == []


def test_node_types_follow_the_view():
    mlp = absolute_inputs(FIXTURES["mlp"])
    assert isinstance(rtfprof.profile("scope", **mlp), rtfprof.GraphNode)
    assert isinstance(rtfprof.profile("graph", **mlp), rtfprof.GraphNode)
    assert isinstance(rtfprof.profile("op", **mlp), rtfprof.MultiGraphNode)
    code = rtfprof.profile("code", **mlp)
    assert isinstance(code, rtfprof.MultiGraphNode)
    assert repr(code).startswith("MultiGraphNode(name='_TFProfRoot', ")


def test_the_issues_example():
    root = rtfprof.profile("scope", profile_path=str(TESTDATA / "mlp" / "profile"),
                           options={"max_depth": 100, "select": ["micros", "bytes"],
                                    "account_type_regexes": [".*"], "step": -1})
    assert root.name == "_TFProfRoot"
    assert root.total_exec_micros == sum(c.total_exec_micros for c in root.children)
    assert root.children[0].name == "GradientDescent"
    layer1 = next(c for c in root.children if c.name == "layer1")
    matmul = next(c for c in layer1.children if c.name == "layer1/MatMul")
    assert matmul.devices == ["/job:localhost/replica:0/task:0/device:cpu:0"]
    assert matmul.input_shapes == {0: (8, 32), 1: (32, 64)}
    assert matmul.float_ops == 32768
    assert matmul.total_definition_count == 1 + sum(c.total_definition_count for c in matmul.children)


# ---------------------------------------------------------------------------
# The same numbers as the CLI's JSON and CSV
# ---------------------------------------------------------------------------

OPTION_SETS = {
    "all": ({"max_depth": 1000}, ["--max_depth=1000"]),
    "step1.displayed": ({"max_depth": 1000, "step": 1, "account_displayed_op_only": True,
                         "show_name_regexes": [".*MatMul.*", ".*Conv2D.*", ".*grad.*"]},
                        ["--max_depth=1000", "--step=1", "--account_displayed_op_only=true",
                         "--show_name_regexes=.*MatMul.*,.*Conv2D.*,.*grad.*"]),
}
JSON_CASES = [(m, v, o) for m in FIXTURES for v in VIEWS for o in OPTION_SETS]


def cli_export(kind, view, inputs, flags, tmp_path):
    out = tmp_path / ("out." + kind)
    run = run_cli([view, "--output=%s:outfile=%s" % (kind, out)] + flags + cli_flags(inputs))
    assert run.returncode == 0, run.stderr
    return out.read_text()


def json_rows(node, out):
    out.append(node)
    for child in node["children"]:
        json_rows(child, out)
    return out


def check_node(api, js, multi):
    """A node's own and total values equal the JSON's (run_count only on graph nodes)."""
    assert api.name == js["name"]
    for metric, field in METRIC_FIELDS.items():
        if multi and metric == "run_count":
            continue
        assert getattr(api, field) == js["own"][metric], (api.name, metric)
        assert getattr(api, "total_" + field) == js["total"][metric], (api.name, metric)


def check_tree(api, js, multi):
    check_node(api, js, multi)
    assert len(api.children) == len(js["children"]), api.name
    if multi:
        assert len(api.graph_nodes) == js["graph_nodes"]
    for a, j in zip(api.children, js["children"]):
        check_tree(a, j, multi)


@pytest.mark.parametrize("model,view,option_set", JSON_CASES, ids=["%s.%s.%s" % c for c in JSON_CASES])
def test_numbers_equal_the_clis_json(model, view, option_set, tmp_path):
    options, flags = OPTION_SETS[option_set]
    if view == "code" and options.get("account_displayed_op_only"):
        flags = [f for f in flags if "account_displayed" not in f]
        options = {k: v for k, v in options.items() if k != "account_displayed_op_only"}
    doc = json.loads(cli_export("json", view, FIXTURES[model], flags, tmp_path))
    root = rtfprof.profile(view, options=options, **absolute_inputs(FIXTURES[model]))
    if view == "op":
        check_node(root, doc["root"], multi=True)
        rows = chain(root)
        assert [r.name for r in rows] == [c["name"] for c in doc["root"]["children"]]
        for api, js in zip(rows, doc["root"]["children"]):
            check_node(api, js, multi=True)
            assert len(api.graph_nodes) == js["graph_nodes"]
    else:
        check_tree(root, doc["root"], multi=view == "code")
    # The records: the JSON's nodes in pre-order, with every per-step value.
    records = rtfprof.to_records(root)
    nodes = json_rows(doc["root"], [])
    assert len(records) == len(nodes) > 1
    steps = doc["steps"]
    assert steps == [0, 1, 2]
    for record, node in zip(records, nodes):
        assert (record["depth"], record["name"], record["accounted"], record["graph_nodes"]) == (
            node["depth"], node["name"], node["accounted"], node["graph_nodes"])
        for metric in METRIC_FIELDS:
            assert record["own_" + metric] == node["own"][metric]
            # (The op view's rows: their own totals, not tfprof's running sum.)
            total = node["own" if view == "op" and node["depth"] > 0 else "total"][metric]
            assert record["total_" + metric] == total
        assert record["steps"] == len(steps) and record["steps_ran"] == node["per_step"]["steps_ran"]
        for metric, summary in node["per_step"]["metrics"].items():
            assert [record["%s_step%d" % (metric, s)] for s in steps] == summary["values"]
            assert record[metric + "_mean"] == summary["mean"]
            assert record[metric + "_std"] == summary["std"]
            assert record[metric + "_cv"] == summary["cv"]


@pytest.mark.parametrize("view", VIEWS)
def test_records_are_the_csv_rows(view, tmp_path):
    text = cli_export("csv", view, FIXTURES["cnn"], ["--max_depth=6"], tmp_path)
    rows = list(csv.reader(io.StringIO(text)))
    root = rtfprof.profile(view, options={"max_depth": 6}, **absolute_inputs(FIXTURES["cnn"]))
    records = rtfprof.to_records(root, step_values=False)
    assert list(records[0]) == rows[0], "the CSV's columns"
    assert len(records) == len(rows) - 1
    columns = rows[0]
    for record, row in zip(records, rows[1:]):
        if view == "op" and record["depth"] > 0:
            # The op rows' totals: each type's own, where the CSV (tfprof)
            # sums each row with the rows after it.
            row = [row[columns.index("own_" + c[len("total_"):])] if c.startswith("total_") else cell
                   for c, cell in zip(columns, row)]
        for (column, value), cell in zip(record.items(), row):
            if isinstance(value, bool):
                assert str(value).lower() == cell
            elif isinstance(value, float):
                decimals = 4 if column.endswith("_cv") else 3
                assert "%.*f" % (decimals, value) == cell, column
            else:
                assert str(value) == cell, column


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_output_files_are_the_clis(kind, tmp_path):
    expected = cli_export(kind, "code", FIXTURES["cnn"], ["--max_depth=5", "--select=bytes"], tmp_path)
    out = tmp_path / ("api." + kind)
    rtfprof.profile("code", options={"max_depth": 5, "select": ["bytes"], "output": "%s:outfile=%s" % (kind, out)},
                    **absolute_inputs(FIXTURES["cnn"]))
    assert out.read_text() == expected


EVENTS = {"events_path": "events/tutorial", "op_log_path": "events/tutorial.tfprof_log"}


@pytest.mark.parametrize("view", ["scope", "graph", "op"])
def test_tensorboard_event_logs(view, tmp_path):
    """events_path reads a TensorBoard log as --events_path does."""
    doc = json.loads(cli_export("json", view, EVENTS, ["--max_depth=100"], tmp_path))
    root = rtfprof.profile(view, options={"max_depth": 100}, **absolute_inputs(EVENTS))
    records = rtfprof.to_records(root)
    nodes = json_rows(doc["root"], [])
    kind = lambda n: "own" if view == "op" and n["depth"] > 0 else "total"  # noqa: E731
    assert [(r["name"], r["total_exec_micros"], r["total_requested_bytes"]) for r in records] == [
        (n["name"], n[kind(n)]["exec_micros"], n[kind(n)]["requested_bytes"]) for n in nodes]
    assert records[0]["steps"] == len(doc["steps"]) == 3


def test_tensorboard_event_log_text_and_errors(capsys):
    golden = (TESTDATA / "events" / "golden" / "tutorial.scope.default.out").read_text()
    rtfprof.profile("scope", events_path=TESTDATA / "events" / "tutorial", options={"output": "stdout"})
    printed = capsys.readouterr().out
    assert printed.startswith("\nDoc:\n") and golden.endswith(printed)
    assert golden[:-len(printed)].endswith("run graph coverage: 0.43\n"), "only the start-up lines are left out"
    trace = TESTDATA / "events" / "tf2_trace"
    with pytest.raises(ValueError) as e:
        rtfprof.profile("scope", events_path=trace)
    assert str(e.value) == cli_error(["scope", "--events_path=%s" % trace])
    assert "--xplane_path" in str(e.value)


def test_one_step_has_no_step_columns():
    root = rtfprof.profile("scope", graph_path=str(TESTDATA / "mlp" / "graph.pbtxt"),
                           run_meta_path=str(TESTDATA / "mlp" / "run_meta_1"))
    record = rtfprof.to_records(root)[0]
    assert "steps" not in record and "exec_micros_mean" not in record
    assert record["total_run_count"] > 0


def test_records_of_a_subtree_and_of_the_op_chain():
    inputs = absolute_inputs(FIXTURES["cnn"])
    root = rtfprof.profile("scope", options={"max_depth": 100}, **inputs)
    everything = rtfprof.to_records(root)
    sub = root.children[1]
    records = rtfprof.to_records(sub)
    start = next(i for i, r in enumerate(everything) if r["name"] == sub.name)
    assert records == everything[start:start + len(records)]
    assert records[0]["depth"] == 1 and all(r["depth"] > 1 for r in records[1:])
    op = rtfprof.profile("op", **inputs)
    rows = chain(op)
    assert [r["name"] for r in rtfprof.to_records(rows[2])] == [r.name for r in rows[2:]]
    with pytest.raises(ValueError, match="graph_nodes"):
        rtfprof.to_records(rows[0].graph_nodes[0])
    with pytest.raises(ValueError, match="expected a node"):
        rtfprof.to_records("scope")


def test_dataframe():
    pandas = pytest.importorskip("pandas")
    root = rtfprof.profile("scope", options={"max_depth": 100}, **absolute_inputs(FIXTURES["cnn"]))
    df = rtfprof.to_dataframe(root)
    assert isinstance(df, pandas.DataFrame)
    records = rtfprof.to_records(root)
    assert list(df.columns) == list(records[0]) and len(df) == len(records)
    assert df["name"].tolist() == [r["name"] for r in records]
    assert df["exec_micros_cv"].tolist() == [r["exec_micros_cv"] for r in records]
    assert str(df["total_exec_micros"].dtype) == "int64" and str(df["exec_micros_mean"].dtype) == "float64"
    assert df.loc[0, "total_exec_micros"] == root.total_exec_micros


# ---------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------

def test_every_option_builder_dict_is_accepted(tf_options, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    inputs = absolute_inputs(FIXTURES["mlp"])
    for name, options in tf_options.items():
        for view in VIEWS:
            if view != "code" and "pprof" in options["output"]:
                continue  # pprof output is for the code view only, as in tfprof
            if view == "op" and options["output"].startswith("timeline"):
                continue  # the op view has no timeline, as in tfprof
            root = rtfprof.profile(view, options=options, **inputs)
            assert root.name == "_TFProfRoot", name
    assert "\nProfile:\nnode name | " in (tmp_path / "view.txt").read_text()
    assert (tmp_path / "profile.pb.gz").stat().st_size > 0
    assert sorted(p.name for p in tmp_path.glob("timeline.json_*")) == ["timeline.json_-1", "timeline.json_0",
                                                                          "timeline.json_1", "timeline.json_2"]
    printed = capsys.readouterr().out
    assert "\nProfile:\nnode name | " in printed, "output stdout prints the view"


def test_stdout_output_prints_the_clis_view(capsys):
    golden = (TESTDATA / "golden" / "mlp.scope.in_profile.out").read_text()
    rtfprof.profile("scope", profile_path=str(TESTDATA / "mlp" / "profile"),
                    options={"select": ["params", "bytes", "micros", "occurrence"], "output": "stdout"})
    assert "Reading Files...\n" + capsys.readouterr().out == golden
    rtfprof.profile("scope", profile_path=str(TESTDATA / "mlp" / "profile"))
    assert capsys.readouterr().out == "", "without an output option nothing is printed"


def test_options_as_strings_and_tuples():
    inputs = absolute_inputs(FIXTURES["cnn"])
    a = rtfprof.profile("op", options={"select": "micros,bytes", "account_type_regexes": "Conv2D.*,MatMul"}, **inputs)
    b = rtfprof.profile("op", options={"select": ("bytes", "micros"), "account_type_regexes": ["Conv2D.*", "MatMul"]},
                        **inputs)
    assert plain(a) == plain(b)
    names = [r.name for r in chain(a)]
    assert "MatMul" in names and "Conv2D" in names and all(re.fullmatch("Conv2D.*|MatMul", n) for n in names)


# ---------------------------------------------------------------------------
# Bad input raises, with the CLI's message
# ---------------------------------------------------------------------------

def cli_error(args):
    """The CLI's error line (its start-up lines may come before, on stdout)."""
    run = run_cli(args)
    assert run.returncode != 0
    line = run.stderr.rstrip("\n")
    assert "\n" not in line
    return line[len("rtfprof: "):].replace("; see 'rtfprof --help'", "")


@pytest.mark.parametrize("options,says", [
    ({"max_depht": 3}, "options: unknown key 'max_depht' (valid: max_depth, "),
    ({"foo": 1, "bar": 2}, "options: unknown keys 'foo', 'bar' (valid: "),
    ({"select": ["micros", "bogus"]}, "--select: unknown value 'bogus' (valid: "),
    ({"order_by": "speed"}, "--order_by: unknown value 'speed' (valid: "),
    ({"max_depth": "10"}, "--max_depth: expected an integer, got '10' (str)"),
    ({"min_bytes": 1.5}, "--min_bytes: expected an integer, got 1.5 (float)"),
    ({"hide_name_regexes": ["("]}, "--hide_name_regexes: invalid regex '('"),
    ({"account_type_regexes": 3}, "--account_type_regexes: expected a list of strings, got 3 (int)"),
    ({"account_displayed_op_only": "maybe"}, "--account_displayed_op_only: 'maybe' is not a boolean"),
    ({"output": "html:outfile=x"}, "--output: html output is written by 'rtfprof report' and 'rtfprof diff'"),
    ({"output": "svg:outfile=x"}, "--output: unknown output type 'svg'"),
    ({"output": "file"}, "--output: output type file needs outfile"),
    ({"step": 7}, "--step=7: step not found (available steps: 0 1 2)"),
    ({1: 2}, "options: keys are option names, got 1"),
])
def test_bad_options_raise_value_error(options, says):
    with pytest.raises(ValueError) as e:
        rtfprof.profile("scope", options=options, **absolute_inputs(FIXTURES["mlp"]))
    assert str(e.value).startswith(says), str(e.value)


def test_option_errors_read_as_the_clis():
    flags = cli_flags(FIXTURES["mlp"])
    for options, flag in [({"select": ["bogus"]}, "--select=bogus"), ({"hide_name_regexes": ["("]}, "--hide_name_regexes=("),
                          ({"step": 7}, "--step=7"), ({"output": "file"}, "--output=file")]:
        with pytest.raises(ValueError) as e:
            rtfprof.profile("scope", options=options, **absolute_inputs(FIXTURES["mlp"]))
        assert str(e.value) == cli_error(["scope", flag] + flags)


def test_bad_files_raise_the_clis_errors(tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError) as e:
        rtfprof.profile("scope", profile_path=missing)
    assert str(e.value) == cli_error(["scope", "--profile_path=%s" % missing])
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    graph = TESTDATA / "mlp" / "graph.pbtxt"
    cases = [
        ({"profile_path": graph}, ["--profile_path=%s" % graph]),
        ({"graph_path": empty}, ["--graph_path=%s" % empty]),
        ({"graph_path": graph, "run_meta_path": [graph]}, ["--graph_path=%s" % graph, "--run_meta_path=%s" % graph]),
        ({"graph_path": TESTDATA / "mlp" / "profile"}, ["--graph_path=%s" % (TESTDATA / "mlp" / "profile")]),
        ({"graph_path": graph, "op_log_path": graph}, ["--graph_path=%s" % graph, "--op_log_path=%s" % graph]),
        ({"graph_path": graph, "checkpoint_path": missing}, ["--graph_path=%s" % graph, "--checkpoint_path=%s" % missing]),
        ({"xplane_path": graph}, ["--xplane_path=%s" % graph]),
    ]
    for inputs, flags in cases:
        with pytest.raises((ValueError, OSError)) as e:
            rtfprof.profile("scope", **inputs)
        assert str(e.value) == cli_error(["scope"] + flags), inputs


def test_code_view_needs_code_traces():
    graph = str(TESTDATA / "mlp" / "graph.pbtxt")
    with pytest.raises(ValueError) as e:
        rtfprof.profile("code", graph_path=graph)
    assert str(e.value) == cli_error(["code", "--graph_path=%s" % graph])


def test_bad_arguments():
    mlp = absolute_inputs(FIXTURES["mlp"])
    with pytest.raises(ValueError, match="unknown view 'advise'"):
        rtfprof.profile("advise", **mlp)
    with pytest.raises(ValueError, match="no inputs"):
        rtfprof.profile("scope")
    with pytest.raises(ValueError, match="expected a dict"):
        rtfprof.profile("scope", options=[("max_depth", 3)], **mlp)
    with pytest.raises(ValueError, match="--graph_path: expected a path, got 3"):
        rtfprof.profile("scope", graph_path=3)
    with pytest.raises(ValueError, match="contains a comma"):
        rtfprof.profile("scope", graph_path=mlp["profile_path"], run_meta_path=["a,b"])
    with pytest.raises(TypeError):
        rtfprof.profile("scope", mlp["profile_path"])  # inputs are keyword-only


def test_checkpoint_values():
    """tensor_value holds what TensorFlow's checkpoint reader reads (testdata/ckpt/expected.json)."""
    import math
    ckpt = TESTDATA / "ckpt"
    expected = json.loads((ckpt / "expected.json").read_text())["tensors"]
    root = rtfprof.profile("scope", graph_path=ckpt / "graph.pbtxt", checkpoint_path=ckpt / "model.ckpt",
                           options={"max_depth": 100, "account_type_regexes": ["_checkpoint_variables"],
                                    "select": ["params", "tensor_value"]})
    nodes = {}
    stack = [root]
    while stack:
        node = stack.pop()
        nodes[node.name] = node
        stack.extend(node.children)
    dtypes = {"float32": 1, "float64": 2, "int32": 3, "int64": 9, "string": 7}
    checked = 0
    for name, tensor in expected.items():
        if name not in nodes:
            continue
        value = nodes[name].tensor_value
        if tensor["dtype"] not in dtypes or tensor["sliced"]:
            assert value is None, name  # tfprof shows no other dtype; sliced variables are not read
            continue
        assert value.dtype == dtypes[tensor["dtype"]], name
        if "values_b64" in tensor:
            raw = base64.b64decode(tensor["values_b64"])
            code = {"float32": "f", "float64": "d", "int32": "i", "int64": "q"}[tensor["dtype"]]
            values = list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(code), code), raw))
            assert (value.value_double or value.value_int64) == values, name
        elif tensor["dtype"] == "string":
            # Bytes that are not UTF-8 become U+FFFD, as the text output shows them.
            assert value.value_str == [bytes.fromhex(v).decode(errors="replace") for v in tensor["values"]], name
        elif tensor["dtype"].startswith("int"):
            assert value.value_int64 == [int(v) for v in tensor["values"]], name
        else:
            got = [repr(v) if not math.isnan(v) else ("-nan" if math.copysign(1, v) < 0 else "nan")
                   for v in value.value_double]
            assert got == [v if v in ("nan", "-nan", "inf", "-inf") else repr(float(v)) for v in tensor["values"]], name
        checked += 1
    assert checked >= 7
    assert nodes["_TFProfRoot"].tensor_value is None


def test_paths_and_run_metadata_lists():
    import pathlib
    d = TESTDATA / "cnn"
    as_list = rtfprof.profile("scope", graph_path=d / "graph.pbtxt",
                              run_meta_path=[d / "run_meta_0", pathlib.Path(d / "run_meta_1")])
    as_text = rtfprof.profile("scope", graph_path=str(d / "graph.pbtxt"),
                              run_meta_path="%s,%s" % (d / "run_meta_0", d / "run_meta_1"))
    assert plain(as_list) == plain(as_text)
    assert rtfprof.to_records(as_list)[0]["steps"] == 2


# ---------------------------------------------------------------------------
# In-process behaviour
# ---------------------------------------------------------------------------

def test_the_gil_is_released_while_loading(tmp_path):
    """The profile is read from a FIFO that this thread fills only while
    profile() runs in another: if profile() held the GIL, neither could go on
    (faulthandler then ends the process instead of hanging)."""
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    result = {}

    def work():
        try:
            result["root"] = rtfprof.profile("scope", profile_path=fifo)
        except Exception as e:  # noqa: BLE001 - reported below
            result["error"] = e

    faulthandler.dump_traceback_later(120, exit=True)
    try:
        thread = threading.Thread(target=work)
        thread.start()
        with open(fifo, "wb") as f:
            f.write((TESTDATA / "mlp" / "profile").read_bytes())
        thread.join()
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert "error" not in result, result.get("error")
    assert result["root"].total_exec_micros == rtfprof.profile("scope", **absolute_inputs(FIXTURES["mlp"])).total_exec_micros


def test_views_thousands_deep(tmp_path):
    """A chain of 20000 ops: built, read and freed without running out of stack."""
    n = 20000
    lines = ['node { name: "n0" op: "NoOp" }']
    lines += ['node { name: "n%d" op: "NoOp" input: "n%d" }' % (i, i - 1) for i in range(1, n)]
    (tmp_path / "chain.pbtxt").write_text("\n".join(lines) + "\n")
    scopes = "/".join("s%d" % i for i in range(3000))
    (tmp_path / "scopes.pbtxt").write_text('node { name: "%s" op: "NoOp" }\n' % scopes)
    graph = rtfprof.profile("graph", graph_path=tmp_path / "chain.pbtxt", options={"max_depth": 10 ** 9})
    depth = 0
    node = graph
    while node.children:
        node = node.children[0]
        depth += 1
    assert depth == n
    assert len(rtfprof.to_records(graph)) == n + 1
    scope = rtfprof.profile("scope", graph_path=tmp_path / "scopes.pbtxt", options={"max_depth": 10 ** 9})
    assert len(rtfprof.to_records(scope)) == 3001
    del graph, node, scope


def test_warnings_are_python_warnings(tmp_path):
    """What the CLI prints on stderr about its inputs becomes RuntimeWarnings."""
    rm = tmp_path / "run_meta.pbtxt"
    rm.write_text('step_stats { dev_stats { device: "/job:localhost/replica:0/task:0/device:CPU:0" '
                  'node_stats { node_name: "layer1/MatMul" all_start_micros: 0 op_end_rel_micros: 5 '
                  'memory { allocator_name: "cpu" total_bytes: 16 } } } }\n')
    graph = TESTDATA / "mlp" / "graph.pbtxt"
    run = run_cli(["scope", "--graph_path=%s" % graph, "--run_meta_path=%s" % rm])
    assert run.stderr == "layer1/MatMul has no start time, skipping\n"
    with pytest.warns(RuntimeWarning) as record:
        rtfprof.profile("scope", graph_path=graph, run_meta_path=rm)
    assert [str(w.message) for w in record] == ["layer1/MatMul has no start time, skipping"]


# ---------------------------------------------------------------------------
# steps
# ---------------------------------------------------------------------------

# XProf's step table (input_pipeline_analyzer, table 1): the column of each
# key, in ms (as tests/integration/steps.rs reads it).
XPROF_COLUMNS = {"step_time_us": 11, "device_compute_us": 1, "device_to_device_us": 2,
                 "device_collectives_us": 3, "host_compute_us": 4, "kernel_launch_us": 5, "input_us": 6,
                 "output_us": 7, "compile_us": 8, "other_us": 9}


def test_steps_are_xprofs():
    """Each step of a TF2 trace, as XProf's input_pipeline_analyzer splits it."""
    trace = TESTDATA / "xplane" / "tf_data_loop"
    with open(TESTDATA / "xplane" / "expected" / "tf_data_loop.input_pipeline_analyzer.json") as f:
        rows = json.load(f)[1]["rows"]
    steps = rtfprof.steps(xplane_path=trace)
    assert [s["step"] for s in steps] == [r["c"][0]["v"] for r in rows]
    for step, row in zip(steps, rows):
        assert list(step) == ["step"] + list(XPROF_COLUMNS) + ["transfers_us", "device_idle_us"]
        assert step["transfers_us"] is None and step["device_idle_us"] is None  # (no GPU)
        for key, column in XPROF_COLUMNS.items():
            assert step[key] == pytest.approx(row["c"][column]["v"] * 1000, abs=0.001), (step["step"], key)
    assert steps[0]["input_us"] > 0


def test_steps_equal_the_clis_json(tmp_path):
    """The same rows as `rtfprof steps --output json`, for traces and run metadata
    (whose categories it cannot tell are None, as the JSON's are null)."""
    cases = [
        {"xplane_path": str(TESTDATA / "xplane" / "tf_loop")},
        absolute_inputs(FIXTURES["mlp"]),
        {"pytorch_path": str(TESTDATA / "pytorch" / "h200_tx.steps2-3.pt.trace.json.gz")},
    ]
    for inputs in cases:
        out = tmp_path / "steps.json"
        flags = ["--%s=%s" % (k, ",".join(v) if isinstance(v, list) else v) for k, v in inputs.items()]
        run = run_cli(["steps", "--output=json:outfile=%s" % out] + flags)
        assert run.returncode == 0, run.stderr
        expected = json.loads(out.read_text())["steps"]
        for step in expected:
            # (A numbered step is an int in Python, its text in the JSON.)
            if step["step"].isdigit():
                step["step"] = int(step["step"])
        assert rtfprof.steps(**inputs) == expected
    run_meta = rtfprof.steps(**absolute_inputs(FIXTURES["mlp"]))
    assert run_meta[0]["input_us"] is None and run_meta[0]["host_compute_us"] is not None


def test_pytorch_traces_in_every_function():
    """pytorch_path is an input of profile, steps and memory, as --pytorch_path is
    of the CLI: the GPU time of the op view adds up to the steps' kernel time."""
    trace = TESTDATA / "pytorch" / "h200_resnet18.steps2-3.pt.trace.json.gz"
    steps = rtfprof.steps(pytorch_path=trace)
    assert [s["step"] for s in steps] == ["ProfilerStep#2", "ProfilerStep#3"]
    for s in steps:
        parts = ["kernel", "memcpy", "memset", "communication", "runtime", "dataloader", "cpu_exec", "other"]
        assert sum(s[p + "_us"] for p in parts) == pytest.approx(s["step_time_us"], abs=0.01)
    ops = rtfprof.profile("op", pytorch_path=trace, options={"select": ["accelerator_micros"], "max_depth": 1000})
    assert ops.total_accelerator_exec_micros > 0
    # (The op view's types are a chain, as in TF's MultiGraphNodeProto.)
    types, node = {}, ops
    while node.children:
        node = node.children[0]
        types[node.name] = node.accelerator_exec_micros
    assert types["aten::cudnn_convolution"] > 0 and types["aten::convolution_backward"] > 0
    memory = rtfprof.memory(pytorch_path=trace)
    assert memory["steps"]
    with pytest.raises(ValueError, match="graph.pb"):
        rtfprof.steps(pytorch_path=TESTDATA / "cnn" / "graph.pb")


def test_steps_errors_are_the_clis():
    """No steps, no inputs, a missing file: one clear message, as the CLI's."""
    trace = TESTDATA / "xplane" / "keras_fit"
    run = run_cli(["steps", "--xplane_path=%s" % trace])
    assert run.returncode == 1
    with pytest.raises(ValueError) as error:
        rtfprof.steps(xplane_path=trace)
    assert str(error.value) == run.stderr.strip().removeprefix("rtfprof: ")
    with pytest.raises(ValueError, match="steps: no inputs"):
        rtfprof.steps()
    with pytest.raises(FileNotFoundError):
        rtfprof.steps(xplane_path=TESTDATA / "no such trace")


# ---------------------------------------------------------------------------
# The other commands, as plain Python objects
# ---------------------------------------------------------------------------

JAX_GPU = TESTDATA / "xplane" / "jax_gpu_mlp"


@pytest.mark.parametrize("command,key", [("hlo", "hlo_ops"), ("kernels", "kernels")])
def test_hlo_and_kernels_are_the_clis_json(command, key, tmp_path):
    out = tmp_path / "out.json"
    run = run_cli([command, "--xplane_path=%s" % JAX_GPU, "--output=json:outfile=%s" % out])
    assert run.returncode == 0, run.stderr
    rows = getattr(rtfprof, command)(xplane_path=JAX_GPU)
    assert rows == json.loads(out.read_text())[key] and len(rows) > 5
    with pytest.raises(ValueError, match="not an XSpace trace"):
        getattr(rtfprof, command)(xplane_path=TESTDATA / "cnn" / "profile")


def test_memory_is_the_clis_json(tmp_path):
    for inputs in [{"xplane_path": str(JAX_GPU)}, absolute_inputs(FIXTURES["cnn"])]:
        out = tmp_path / "memory.json"
        flags = ["--%s=%s" % (k, ",".join(v) if isinstance(v, list) else v) for k, v in inputs.items()]
        run = run_cli(["memory", "--output=json:outfile=%s" % out] + flags)
        assert run.returncode == 0, run.stderr
        assert rtfprof.memory(**inputs) == json.loads(out.read_text())
    one = rtfprof.memory(step=1, **absolute_inputs(FIXTURES["cnn"]))
    assert [s["step"] for s in one["steps"]] == [1]
    # XLA programs: on XPlane traces only.
    assert "programs" not in one
    programs = rtfprof.memory(xplane_path=str(JAX_GPU))["programs"]
    assert [p["module"] for p in programs] == ["jit_step"]
    assert sum(b["bytes"] for b in programs[0]["live_at_peak"]) == programs[0]["peak_bytes"]


def test_results_become_dataframes():
    pandas = pytest.importorskip("pandas")
    kernels = rtfprof.to_dataframe(rtfprof.kernels(xplane_path=JAX_GPU))
    assert list(kernels.columns)[:2] == ["kernel_name", "op_name"] and len(kernels) > 5
    steps = rtfprof.to_dataframe(rtfprof.steps(xplane_path=JAX_GPU))
    assert list(steps["step"]) == [0, 1] and str(steps["step"].dtype) == "int64"
    memory = rtfprof.to_dataframe(rtfprof.memory(xplane_path=JAX_GPU))
    assert set(memory["allocator"]) >= {"GPU_0_bfc"}
    assert isinstance(memory, pandas.DataFrame)


def test_steps_warns_as_the_cli_does(tmp_path):
    """A run metadata without step stats: the CLI's stderr line, and a
    RuntimeWarning from steps() (profile() warns the same)."""
    from conftest import FIXTURES as F
    inputs = absolute_inputs(F["cnn"])
    empty = tmp_path / "empty_run_meta"
    empty.write_bytes(b"\x12\x00")  # a RunMetadata with an empty cost graph
    inputs["run_meta_path"] = inputs["run_meta_path"] + [str(empty)]
    with pytest.warns(RuntimeWarning, match="Invalid RunMetadata"):
        rtfprof.steps(**inputs)


def test_a_cut_op_list_says_so():
    """TF's profile() ends the op list at max_depth without a word; rtfprof
    returns the same rows and says how many were left out."""
    import warnings
    with pytest.warns(RuntimeWarning, match=r"op view: \d+ of \d+ op types returned \(max_depth 3 ") as record:
        ops = rtfprof.profile("op", profile_path=TESTDATA / "cnn" / "profile", options={"max_depth": 3})
    shown, total = map(int, re.search(r"(\d+) of (\d+) op types", str(record[0].message)).groups())
    assert shown < total
    rows, node = 0, ops
    while node.children:
        node, rows = node.children[0], rows + 1
    assert rows == shown
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        every = rtfprof.profile("op", profile_path=TESTDATA / "cnn" / "profile", options={"max_depth": 1000})
    rows, node = 0, every
    while node.children:
        node, rows = node.children[0], rows + 1
    assert rows == total


def test_diff_is_the_commands_json(tmp_path):
    left, right = TESTDATA / "cnn_b8" / "profile", TESTDATA / "cnn" / "profile"
    doc = rtfprof.diff({"profile_path": left}, {"profile_path": right}, metric="micros", delta=0.2, min_size="5us",
                       names=("bs8", "bs4"))
    out = tmp_path / "diff.json"
    run = run_cli(["diff", f"--left_profile_path={left}", f"--right_profile_path={right}", "--metric=micros", "--delta=0.2",
                   "--min_size=5us", "--names=bs8,bs4", f"--output=json:outfile={out}"])
    assert run.returncode == 0, run.stderr
    assert doc == json.loads(out.read_text())
    assert doc["left"]["name"] == "bs8" and doc["root"]["name"] == "_TFProfRoot" and doc["root"]["children"]
    # Without right: the left's inputs at right_step; a min_size number is in
    # the metric's unit.
    steps = rtfprof.diff({"profile_path": right}, left_step=0, right_step=2, min_size=0)
    assert steps["left"]["source"].endswith("step 0") and steps["right"]["source"].endswith("step 2")


def test_diff_to_dataframe_has_a_row_per_listed_node():
    pandas = pytest.importorskip("pandas")
    doc = rtfprof.diff({"profile_path": TESTDATA / "cnn_b8" / "profile"}, {"profile_path": TESTDATA / "cnn" / "profile"},
                       delta=0)
    df = rtfprof.to_dataframe(doc)
    assert list(df.columns) == ["depth", "name", "left", "right", "difference"]
    assert df.iloc[0]["name"] == "_TFProfRoot" and df.iloc[0]["depth"] == 0
    assert (df["difference"] == df["left"].fillna(0) - df["right"].fillna(0)).all()
    assert str(df["left"].dtype) == "Int64"
    assert isinstance(df, pandas.DataFrame)


def test_diff_refuses_bad_sides():
    profile = TESTDATA / "cnn" / "profile"
    with pytest.raises(TypeError, match="unknown input 'profile'"):
        rtfprof.diff({"profile": profile})
    with pytest.raises(ValueError, match="no inputs"):
        rtfprof.diff({}, {"profile_path": profile})
    with pytest.raises(ValueError, match="both sides are the same"):
        rtfprof.diff({"profile_path": profile}, {"profile_path": profile})
    with pytest.raises(ValueError, match="--view"):
        rtfprof.diff({"profile_path": profile}, {"profile_path": profile}, view="op")


def test_op_dataframe_totals_are_each_op_types_own():
    """tfprof's op rows sum each row with every row after it; the DataFrame gives
    each op type's own total, so the column adds up to the root's."""
    pytest.importorskip("pandas")
    root = rtfprof.profile("op", profile_path=TESTDATA / "cnn" / "profile",
                           options={"max_depth": 1000, "select": ["micros", "bytes"]})
    df = rtfprof.to_dataframe(root)
    rows = df.iloc[1:]
    assert len(rows) > 5
    assert (rows["total_exec_micros"] == rows["own_exec_micros"]).all()
    assert rows["total_exec_micros"].sum() == root.total_exec_micros
    # The nodes keep tfprof's (TF's) running totals.
    assert chain(root)[0].total_exec_micros == root.total_exec_micros


def test_advise_is_the_commands_text():
    for inputs, flag in [({"profile_path": TESTDATA / "cnn" / "profile"}, "--profile_path"),
                         ({"xplane_path": TESTDATA / "xplane" / "jax_gpu_cnn"}, "--xplane_path")]:
        rows = rtfprof.advise(**inputs)
        run = run_cli(["advise", "%s=%s" % (flag, next(iter(inputs.values())))])
        assert run.returncode == 0, run.stderr
        text = "".join("\n%s:\n" % c + "".join(r["report"] + "\n" for r in rows if r["checker"] == c)
                       for c in dict.fromkeys(r["checker"] for r in rows))
        assert run.stdout.endswith(text) and len(rows) > 2, run.stdout


def test_report_is_the_commands_page(tmp_path):
    trace = TESTDATA / "xplane" / "jax_gpu_cnn"
    written = rtfprof.report(tmp_path / "api.html", xplane_path=trace)
    assert written == tmp_path / "api.html"
    run = run_cli(["report", f"--xplane_path={trace}", f"--output=html:outfile={tmp_path / 'cli.html'}"])
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "api.html").read_bytes() == (tmp_path / "cli.html").read_bytes()
    with pytest.raises(ValueError, match="no inputs"):
        rtfprof.report(tmp_path / "none.html")
    assert not (tmp_path / "none.html").exists()


def test_jobs_are_the_commands():
    jobs = {"w0": TESTDATA / "jobs" / "worker0", "w1": TESTDATA / "jobs" / "worker1"}
    flags = ["--job=%s=%s" % (name, path) for name, path in jobs.items()]
    as_dict = rtfprof.profile("scope", job=jobs, options={"max_depth": 3, "output": "none"})
    as_list = rtfprof.profile("scope", job=["%s=%s" % item for item in jobs.items()], options={"max_depth": 3})
    assert [c.name for c in as_dict.children] == ["w0", "w1"] == [c.name for c in as_list.children]
    assert as_dict.total_exec_micros == as_list.total_exec_micros > 0
    summary = rtfprof.jobs(jobs)
    run = run_cli(["jobs"] + flags)
    assert run.returncode == 0, run.stderr
    for job in summary:
        assert "job %s: %d nodes, %d steps, run graph coverage %.2f" % (
            job["job"], job["nodes"], len(job["steps"]), job["coverage"]) in run.stdout
    assert [j["job"] for j in summary] == ["w0", "w1"] and all(j["steps"] for j in summary)
    with pytest.raises(ValueError, match="--job"):
        rtfprof.profile("scope", job=42)
