"""Type stubs of the extension module (the Rust library through PyO3)."""

import os
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, final, overload

__all__ = ["_main", "_table", "GraphNode", "KeyAverage", "KeyAverages", "MultiGraphNode", "TensorValue", "advise", "capture", "check", "diff", "hlo", "jobs", "kernels", "key_averages", "memory", "merge", "partial", "profile", "ranks", "report", "steps", "__version__"]

__version__: str

_Path = Union[str, "os.PathLike[str]"]
#: A value of a tf.profiler option dict: ints, a bool, strings, lists of strings.
_OptionValue = Union[int, bool, str, Sequence[str]]
#: A shape: its dimensions, or None when its rank is unknown.
_Shape = Optional[Tuple[int, ...]]

@final
class TensorValue:
    """A checkpoint value (tfprof's TFProfTensorProto), flattened in row-major order."""

    @property
    def dtype(self) -> int:
        """TensorFlow's DataType number (1 float, 2 double, 3 int32, 7 string, 9 int64)."""
    @property
    def value_double(self) -> List[float]: ...
    @property
    def value_int64(self) -> List[int]: ...
    @property
    def value_str(self) -> List[str]: ...

@final
class GraphNode:
    """A scope or graph view node, with tfprof's GraphNodeProto fields.

    Own values are the node's at the chosen step (step -1: averaged over the
    steps it ran in); total_* are the node's and its accounted descendants'.
    Times in microseconds, memory in bytes.
    """

    @property
    def name(self) -> str: ...
    @property
    def tensor_value(self) -> Optional[TensorValue]:
        """The checkpoint's value, with checkpoint_path and select tensor_value."""
    @property
    def run_count(self) -> int: ...
    @property
    def exec_micros(self) -> int: ...
    @property
    def accelerator_exec_micros(self) -> int: ...
    @property
    def cpu_exec_micros(self) -> int: ...
    @property
    def requested_bytes(self) -> int: ...
    @property
    def peak_bytes(self) -> int: ...
    @property
    def residual_bytes(self) -> int: ...
    @property
    def output_bytes(self) -> int: ...
    @property
    def parameters(self) -> int: ...
    @property
    def float_ops(self) -> int: ...
    @property
    def devices(self) -> List[str]:
        """The node's canonical device, if it ran."""
    @property
    def total_definition_count(self) -> int: ...
    @property
    def total_run_count(self) -> int: ...
    @property
    def total_exec_micros(self) -> int: ...
    @property
    def total_accelerator_exec_micros(self) -> int: ...
    @property
    def total_cpu_exec_micros(self) -> int: ...
    @property
    def total_requested_bytes(self) -> int: ...
    @property
    def total_peak_bytes(self) -> int: ...
    @property
    def total_residual_bytes(self) -> int: ...
    @property
    def total_output_bytes(self) -> int: ...
    @property
    def total_parameters(self) -> int: ...
    @property
    def total_float_ops(self) -> int: ...
    @property
    def shapes(self) -> List[_Shape]:
        """Always empty, as in tfprof."""
    @property
    def input_shapes(self) -> Dict[int, _Shape]:
        """Shapes of the node's inputs, by input index."""
    @property
    def children(self) -> List["GraphNode"]: ...

@final
class MultiGraphNode:
    """An op view row or a code view node, with tfprof's MultiGraphNodeProto fields.

    The op view's rows form a chain, as in tfprof: the root's only child is
    the first row, whose only child is the second, and so on; total_* are
    cumulative down the list.
    """

    @property
    def name(self) -> str: ...
    @property
    def exec_micros(self) -> int: ...
    @property
    def accelerator_exec_micros(self) -> int: ...
    @property
    def cpu_exec_micros(self) -> int: ...
    @property
    def requested_bytes(self) -> int: ...
    @property
    def peak_bytes(self) -> int: ...
    @property
    def residual_bytes(self) -> int: ...
    @property
    def output_bytes(self) -> int: ...
    @property
    def parameters(self) -> int: ...
    @property
    def float_ops(self) -> int: ...
    @property
    def total_exec_micros(self) -> int: ...
    @property
    def total_accelerator_exec_micros(self) -> int: ...
    @property
    def total_cpu_exec_micros(self) -> int: ...
    @property
    def total_requested_bytes(self) -> int: ...
    @property
    def total_peak_bytes(self) -> int: ...
    @property
    def total_residual_bytes(self) -> int: ...
    @property
    def total_output_bytes(self) -> int: ...
    @property
    def total_parameters(self) -> int: ...
    @property
    def total_float_ops(self) -> int: ...
    @property
    def graph_nodes(self) -> List[GraphNode]:
        """The accounted graph nodes of the row, each with totals equal to its own values."""
    @property
    def children(self) -> List["MultiGraphNode"]: ...

@overload
def profile(
    cmd: Literal["scope", "graph"],
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    checkpoint_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    options: Optional[Dict[str, _OptionValue]] = None,
    default_op_log: bool = True,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
) -> GraphNode: ...
@overload
def profile(
    cmd: Literal["op", "code"],
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    checkpoint_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    options: Optional[Dict[str, _OptionValue]] = None,
    default_op_log: bool = True,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
) -> MultiGraphNode: ...
@overload
def profile(
    cmd: str,
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    checkpoint_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    options: Optional[Dict[str, _OptionValue]] = None,
    default_op_log: bool = True,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
    job: Union[Dict[str, _Path], Sequence[str], None] = None,
) -> Union[GraphNode, MultiGraphNode]: ...
def partial(
    path: Optional[_Path] = None,
    *,
    name: Optional[str] = None,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
) -> bytes: ...
def merge(partials: Sequence[bytes]) -> bytes: ...
def capture(
    addresses: Union[str, Sequence[str]],
    duration_ms: int,
    logdir: _Path,
    *,
    host_tracer_level: int = 2,
    device_tracer_level: int = 1,
    python_tracer_level: int = 0,
    delay_ms: int = 0,
    timeout_ms: Optional[int] = None,
) -> str:
    """Captures a trace from running profiler servers (`rtfprof capture`); returns the run directory. Ctrl-C keeps the traces that arrived and raises KeyboardInterrupt."""
def check(
    baseline: Union[_Path, Sequence[_Path]],
    new: Union[_Path, Sequence[_Path]],
    *,
    rules: Optional[_Path] = None,
    max_regression: Optional[str] = None,
    max_op_regression: Optional[str] = None,
    max_memory_regression: Optional[str] = None,
    min_memory_change: Optional[str] = None,
    alpha: Optional[float] = None,
    min_steps: Optional[int] = None,
    min_share: Optional[str] = None,
    min_part_growth: Optional[str] = None,
    thresholds: Optional[Dict[str, str]] = None,
) -> Dict[str, Any]:
    """Compare two runs step by step, as `rtfprof check BASELINE NEW --output json` does.

    A side may be a list of paths: several runs of the program, as
    `rtfprof check BASELINE... --new NEW...` compares them.

    `rules` is a rules file (TOML), as `--rules`; each other setting, where
    given, overrides the file's default as the flag does (defaults: 5%, 8%,
    5%, 4MiB, 0.01, 5, 1%)."""
def steps(
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
) -> List[Dict[str, Union[str, float, None]]]:
    """Each step's time and its split, as `rtfprof steps --output json` writes its rows."""
def memory(
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    step: int = ...,
) -> Dict[str, Any]:
    """Each allocator's bytes in use over the steps, and on XPlane traces each XLA program's peak by its buffer assignment ("programs"), as `rtfprof memory --output json`."""
def ranks(
    *,
    pytorch_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
) -> Dict[str, Any]:
    """The ranks of a job side by side and its stragglers, as `rtfprof ranks --output json`."""
def advise(
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
    job: Union[Dict[str, _Path], Sequence[str], None] = None,
    default_op_log: bool = False,
) -> List[Dict[str, str]]:
    """tfprof's checkers (and on traces the framework's advice), as `rtfprof advise` prints them: a dict a line. `default_op_log`: float ops as `profile` estimates them, with an UncountedFlopsChecker listing what they leave out."""
def report(
    outfile: _Path,
    *,
    graph_path: Optional[_Path] = None,
    run_meta_path: Union[_Path, Sequence[_Path], None] = None,
    op_log_path: Optional[_Path] = None,
    profile_path: Optional[_Path] = None,
    events_path: Optional[_Path] = None,
    xplane_path: Optional[_Path] = None,
    pytorch_path: Optional[_Path] = None,
    partial: Union[bytes, _Path, None] = None,
    partial_path: Union[_Path, Sequence[_Path], None] = None,
    job: Union[Dict[str, _Path], Sequence[str], None] = None,
    options: Optional[Dict[str, _OptionValue]] = None,
) -> _Path:
    """Writes `rtfprof report`'s HTML page to outfile and returns it."""
def jobs(job: Union[Dict[str, _Path], Sequence[str]]) -> List[Dict[str, Any]]:
    """Each job's nodes, coverage and steps (wall time, busiest devices), as `rtfprof jobs` prints them."""
#: A side of ``diff``: input keywords of ``profile`` (``graph_path``, ``run_meta_path``,
#: ``op_log_path``, ``profile_path``, ``events_path``, ``xplane_path``, ``pytorch_path``),
#: ``partial_path``, or ``text`` (a saved tfprof scope/graph/code output).
_DiffSide = Dict[str, Union[_Path, Sequence[_Path]]]
def diff(
    left: _DiffSide,
    right: Optional[_DiffSide] = None,
    *,
    view: Literal["scope", "graph", "code"] = ...,
    metric: Optional[str] = None,
    delta: float = ...,
    min_size: Union[int, str, None] = None,
    names: Tuple[str, str] = ...,
    left_step: int = ...,
    right_step: int = ...,
) -> Dict[str, Any]:
    """Two profiles' trees of one view compared node by node, as `rtfprof diff --output json`."""
def hlo(*, xplane_path: _Path) -> List[Dict[str, Any]]:
    """The XLA instructions that ran, as `rtfprof hlo --output json` lists them."""
def kernels(*, xplane_path: _Path) -> List[Dict[str, Any]]:
    """The GPU kernels, as `rtfprof kernels --output json` lists them."""
@final
class KeyAverage:
    """A row of PyTorch's ``prof.key_averages()`` (FunctionEventAvg), read from
    its trace: the same attributes, the same values. Times in microseconds,
    memory in bytes."""

    @property
    def key(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def device_type(self) -> str:
        """"CPU" or "CUDA"."""
    @property
    def is_user_annotation(self) -> bool: ...
    @property
    def cpu_time_total(self) -> float: ...
    @property
    def self_cpu_time_total(self) -> float: ...
    @property
    def device_time_total(self) -> float: ...
    @property
    def self_device_time_total(self) -> float: ...
    @property
    def cpu_time(self) -> float:
        """Average CPU time per call."""
    @property
    def device_time(self) -> float:
        """Average device time per call."""
    @property
    def cpu_memory_usage(self) -> int: ...
    @property
    def self_cpu_memory_usage(self) -> int: ...
    @property
    def device_memory_usage(self) -> int: ...
    @property
    def self_device_memory_usage(self) -> int: ...
    @property
    def input_shapes(self) -> Union[str, List[List[int]]]:
        """The first event's input shapes when grouped by input shape, else ""."""
    @property
    def node_id(self) -> int: ...
    @property
    def is_legacy(self) -> bool: ...
    @property
    def is_async(self) -> bool: ...
    @property
    def is_remote(self) -> bool: ...
    @property
    def overload_name(self) -> str: ...
    @property
    def stack(self) -> List[str]: ...

@final
class KeyAverages:
    """The rows of ``key_averages()``, in torch's order, with torch's ``table()``."""

    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int, /) -> KeyAverage: ...
    @overload
    def __getitem__(self, index: slice, /) -> List[KeyAverage]: ...
    def __iter__(self) -> Iterator[KeyAverage]: ...
    def table(
        self,
        sort_by: Optional[str] = None,
        row_limit: Optional[int] = 100,
        max_src_column_width: Optional[int] = 75,
        max_name_column_width: Optional[int] = 55,
        max_shapes_column_width: Optional[int] = 80,
        header: Optional[str] = None,
        top_level_events_only: bool = False,
        time_unit: Optional[str] = None,
    ) -> str:
        """torch's ``EventList.table()``, byte for byte."""

def key_averages(path: _Path, group_by_input_shape: bool = False) -> KeyAverages:
    """PyTorch's ``prof.key_averages()`` from a torch.profiler trace (``*.pt.trace.json[.gz]``)."""
def _table(node: Union[GraphNode, MultiGraphNode], step_values: bool) -> Tuple[List[str], List[Tuple[Any, ...]]]: ...
def _main(argv: List[str]) -> int: ...
