"""rtfprof: TensorFlow's tfprof profiler, natively, from Python.

    import rtfprof
    root = rtfprof.profile("scope", profile_path="profile",
                           options={"max_depth": 100, "select": ["micros", "bytes"]})
    root.total_exec_micros, root.children[0].name
    df = rtfprof.to_dataframe(root)   # pandas; rtfprof.to_records(root) without
    rtfprof.steps(xplane_path="logdir")  # each step's time split as XProf splits it
    rtfprof.kernels(xplane_path="logdir")  # GPU kernels (also hlo, memory)
    print(rtfprof.key_averages("x.pt.trace.json").table(sort_by="self_cpu_time_total"))

``profile`` takes tf.profiler's option dicts (``ProfileOptionBuilder(...).build()``)
and returns nodes with the field names of tfprof's ``GraphNodeProto`` (scope and
graph views) or ``MultiGraphNodeProto`` (op and code views). The work is done by
the Rust library in this process, with the GIL released. ``steps`` gives each
step's time and its split into XProf's categories (``rtfprof steps``), one dict
a step with the JSON output's keys: ``pandas.DataFrame(rtfprof.steps(...))``.
``hlo`` and ``kernels`` list an XPlane trace's XLA instructions and GPU
kernels, ``memory`` replays the allocations, each as the CLI's JSON output
holds them; ``to_dataframe`` takes any of these results. ``key_averages``
reads a ``torch.profiler`` trace and gives PyTorch's own
``prof.key_averages()`` rows (same attributes, same values) and ``table()``.
``diff`` compares two profiles' trees node by node (``rtfprof diff``);
``advise`` gives ``rtfprof advise``'s lines, ``report`` writes its HTML page.
``capture`` asks running JAX or TensorFlow profiler servers for a trace
(``rtfprof capture``) and returns the run directory it saved.
``partial`` reduces one rank's trace to a partial profile (bytes), ``merge``
merges them in any order or grouping, and ``profile(cmd, partial=…)`` shows
the result (see docs/book/src/commands/partial.md).
"""

from __future__ import annotations

from ._rtfprof import (
    GraphNode,
    KeyAverage,
    KeyAverages,
    MultiGraphNode,
    TensorValue,
    __version__,
    _table,
    advise,
    capture,
    check,
    diff,
    hlo,
    jobs,
    kernels,
    key_averages,
    memory,
    merge,
    partial,
    profile,
    ranks,
    report,
    steps,
)

# Annotations only: the `rtfprof` command imports this package, and typing
# would add to its start-up time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Union

    import pandas

__all__ = [
    "GraphNode",
    "KeyAverage",
    "KeyAverages",
    "MultiGraphNode",
    "TensorValue",
    "__version__",
    "advise",
    "capture",
    "check",
    "diff",
    "hlo",
    "jobs",
    "kernels",
    "key_averages",
    "memory",
    "merge",
    "partial",
    "profile",
    "ranks",
    "report",
    "steps",
    "to_dataframe",
    "to_records",
]


def to_records(node: Union[GraphNode, MultiGraphNode], *, step_values: bool = True) -> List[Dict[str, Any]]:
    """One dict per displayed node of ``node``'s subtree, in display order.

    The keys are the columns ``--output csv`` writes: ``depth`` (the root is
    0), ``name``, ``accounted``, ``graph_nodes``, then ``own_<metric>`` and
    ``total_<metric>`` for requested_bytes, peak_bytes, residual_bytes,
    output_bytes, exec_micros, accelerator_micros, cpu_micros, parameters,
    float_ops and run_count. When several steps were loaded: ``steps``,
    ``steps_ran`` and, for every metric but parameters, its value at each
    step (``<metric>_step<N>``, unless ``step_values=False``) and their
    ``<metric>_mean``, ``<metric>_std`` (population) and ``<metric>_cv``
    (std / mean, 0 when the mean is 0), unrounded. One difference from the
    CSV: an op view's rows have their op type's own totals in ``total_*``
    (the CSV, as tfprof, sums each row with every row after it).
    """
    columns, rows = _table(node, step_values)
    return [dict(zip(columns, row)) for row in rows]


def to_dataframe(node: Union[GraphNode, MultiGraphNode, List[Dict[str, Any]], Dict[str, Any]], *,
                 step_values: bool = True) -> pandas.DataFrame:
    """``to_records(node)`` as a pandas DataFrame, one row per displayed node;
    a list of dicts (``steps``, ``hlo``, ``kernels``) one row per dict; a
    ``memory`` result one row per step and allocator (``step``,
    ``allocator``, ``peak_bytes``, ``peak_micros``, ``live_nodes``); a
    ``diff`` result one row per listed node in pre-order (``depth``,
    ``name``, ``left``, ``right``, ``difference``; ``None`` on a side without
    the node)."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            "rtfprof.to_dataframe needs pandas (pip install pandas); "
            "rtfprof.to_records gives the same rows as dicts"
        ) from e
    if isinstance(node, list):
        return pandas.DataFrame.from_records(node)
    if isinstance(node, dict) and "root" in node:
        rows = []
        stack = [(0, node["root"])]
        while stack:
            depth, n = stack.pop()
            rows.append((depth, n["name"], n["left"], n["right"], n["difference"]))
            stack.extend((depth + 1, c) for c in reversed(n["children"]))
        frame = pandas.DataFrame.from_records(rows, columns=["depth", "name", "left", "right", "difference"])
        # Nullable integers: a side without the node is missing, not NaN.
        return frame.astype({"left": "Int64", "right": "Int64"})
    if isinstance(node, dict):
        return pandas.DataFrame.from_records(
            [{"step": s["step"], "allocator": name, "peak_bytes": a["peak_bytes"], "peak_micros": a["peak_micros"],
              "live_nodes": len(a["live_at_peak"])}
             for s in node["steps"] for name, a in s["allocators"].items()],
            columns=["step", "allocator", "peak_bytes", "peak_micros", "live_nodes"])
    columns, rows = _table(node, step_values)
    return pandas.DataFrame.from_records(rows, columns=columns)
