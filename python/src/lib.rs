//! `rtfprof._rtfprof`: the Python module over the rtfprof library.
//!
//! `profile()` runs [`rtfprof::api::profile`] with the GIL released and turns
//! tfprof's result message into `GraphNode` / `MultiGraphNode` objects with
//! the message's field names; `steps()` gives [`rtfprof::api::steps`]' rows
//! as dicts. `_table()` gives the rows behind `to_records`
//! and `to_dataframe` (the CSV output's, from `rtfprof::outputs::table`), and
//! `_main()` is the `rtfprof` command installed with the wheel.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyRuntimeError, PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyList, PyString, PyTuple};

use rtfprof::diff::sides::{self, Side, Which};
use rtfprof::load::Sources;
use rtfprof::outputs::node_proto::ViewProto;
use rtfprof::outputs::table::{self, Cell};
use rtfprof::proto::tensorflow::tfprof::{GraphNodeProto, MultiGraphNodeProto, TfProfTensorProto};
use rtfprof::show::options::{DictValue, Options, Output};
use rtfprof::show::{Displayed, PerStep};
use rtfprof::views::View;

/// As in the `rtfprof` binary (see its `main.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Stack of the threads that build and drop node trees, which can be as
/// deep as a view's (address space; only what the recursion reaches is
/// touched).
const DEEP_STACK_BYTES: usize = 1 << 30;

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// The CLI's one-line message as a Python exception: `OSError` (or its
/// `FileNotFoundError`, … subclass) when a file could not be read or
/// written, `ValueError` for anything wrong with an option or an input.
fn to_py_err(e: rtfprof::Error) -> PyErr {
    let e = rtfprof::inputs::sniff::add_hint(e);
    let message = e.to_string();
    match &e {
        rtfprof::Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(message),
            _ => PyOSError::new_err(message),
        },
        _ => PyValueError::new_err(message),
    }
}

// ---------------------------------------------------------------------------
// Options: tf.profiler's option dicts
// ---------------------------------------------------------------------------

fn python_repr(value: &Bound<'_, PyAny>) -> String {
    value.repr().map(|r| r.to_string()).unwrap_or_else(|_| "<unprintable>".into())
}

fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// A Python value as [`DictValue`]; the library checks it against its key.
fn dict_value(value: &Bound<'_, PyAny>) -> DictValue {
    let other = || DictValue::Other { repr: python_repr(value), type_name: type_name(value) };
    if value.is_instance_of::<PyBool>() {
        return value.extract::<bool>().map_or_else(|_| other(), DictValue::Bool);
    }
    if let Ok(v) = value.extract::<i64>() {
        return DictValue::Int(v);
    }
    if value.is_instance_of::<PyString>() {
        return value.extract::<String>().map_or_else(|_| other(), DictValue::Str);
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items: Option<Vec<String>> =
            value.try_iter().ok().and_then(|items| items.map(|item| item.ok().filter(|i| i.is_instance_of::<PyString>())?.extract().ok()).collect());
        return items.map_or_else(other, DictValue::List);
    }
    other()
}

/// `options` as tf.profiler reads its option dicts (see
/// [`Options::from_tf_dict`]); `output` defaults to `none` (no text printed).
fn parse_options(options: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let base = Options { output: Output::None, ..Options::default() };
    let Some(options) = options else { return Ok(base) };
    let mut entries = Vec::new();
    for (key, value) in options.iter() {
        let Ok(key) = key.extract::<String>() else {
            return Err(PyValueError::new_err(format!("options: keys are option names, got {}", python_repr(&key))));
        };
        entries.push((key, dict_value(&value)));
    }
    Options::from_tf_dict(base, entries).map_err(to_py_err)
}

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

fn path_arg(name: &str, value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<PathBuf>> {
    let Some(value) = value.filter(|v| !v.is_none()) else { return Ok(None) };
    value
        .extract::<PathBuf>()
        .map(Some)
        .map_err(|_| PyValueError::new_err(format!("--{name}: expected a path, got {} ({})", python_repr(value), type_name(value))))
}

/// A side of `check`: one path, or a list of paths (its runs); at least
/// one.
fn paths_arg(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    let paths = if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        value
            .try_iter()?
            .map(|item| path_arg(name, Some(&item?))?.ok_or_else(|| PyValueError::new_err(format!("--{name}: a run's path is None"))))
            .collect::<PyResult<Vec<_>>>()?
    } else {
        path_arg(name, Some(value))?.into_iter().collect()
    };
    if paths.is_empty() {
        return Err(PyValueError::new_err(format!("check: give the {name} side's path (or a list of its runs' paths)")));
    }
    Ok(paths)
}

/// `run_meta_path`: one path, the CLI's comma-separated list, or a list of
/// paths (step i is the i-th).
fn run_meta_arg(value: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    let Some(value) = value.filter(|v| !v.is_none()) else { return Ok(None) };
    let as_text =
        |p: PathBuf| p.into_os_string().into_string().map_err(|p| PyValueError::new_err(format!("--run_meta_path: {} is not valid UTF-8", p.display())));
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut paths = Vec::new();
        for item in value.try_iter()? {
            let text = as_text(path_arg("run_meta_path", Some(&item?))?.unwrap_or_default())?;
            if text.contains(',') {
                return Err(PyValueError::new_err(format!("--run_meta_path: '{text}' contains a comma, which separates steps")));
            }
            paths.push(text);
        }
        return Ok(Some(paths.join(",")));
    }
    path_arg("run_meta_path", Some(value))?.map(as_text).transpose()
}

fn parse_view(cmd: &str) -> PyResult<View> {
    View::parse(cmd).ok_or_else(|| PyValueError::new_err(format!("cmd: unknown view '{cmd}' (valid: scope, graph, op, code)")))
}

// ---------------------------------------------------------------------------
// Result objects
// ---------------------------------------------------------------------------

/// The displayed rows of one `profile()` call, flat in pre-order (so that
/// dropping them never recurses), with their per-step values.
struct Table {
    rows: Vec<(usize, Displayed)>,
    per_step: Option<PerStep>,
    /// The op view's rows, whose `total_*` in tfprof are cumulative down the
    /// list (each row's own plus every row after it); [`_table`] gives each
    /// row's own instead, as a DataFrame's reader expects.
    op_rows: bool,
}

/// Which rows of a [`Table`] a node and what is displayed below it are.
#[derive(Clone)]
struct Rows {
    table: Arc<Table>,
    start: usize,
    len: usize,
}

fn flatten(root: Displayed) -> Vec<(usize, Displayed)> {
    let mut rows = Vec::new();
    let mut stack = vec![(0, root)];
    while let Some((depth, mut node)) = stack.pop() {
        let children = std::mem::take(&mut node.children);
        rows.push((depth, node));
        stack.extend(children.into_iter().rev().map(|c| (depth + 1, c)));
    }
    rows
}

/// A checkpoint value (`TFProfTensorProto`): `dtype` is TensorFlow's
/// `DataType` number; one of the value lists holds the values, flattened in
/// row-major order.
#[pyclass(module = "rtfprof", frozen, get_all)]
struct TensorValue {
    dtype: i32,
    value_double: Vec<f64>,
    value_int64: Vec<i64>,
    value_str: Vec<String>,
}

#[pymethods]
impl TensorValue {
    fn __repr__(&self) -> String {
        let count = self.value_double.len() + self.value_int64.len() + self.value_str.len();
        format!("TensorValue(dtype={}, values={count})", self.dtype)
    }
}

/// A node of the scope or graph view: tfprof's `GraphNodeProto`. Own values
/// are the node's own at the chosen step (`step=-1`: averaged over the steps
/// it ran in), `total_*` those of the node and its accounted descendants.
#[pyclass(module = "rtfprof", frozen)]
struct GraphNode {
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    tensor_value: Option<Py<TensorValue>>,
    #[pyo3(get)]
    run_count: i64,
    #[pyo3(get)]
    exec_micros: i64,
    #[pyo3(get)]
    accelerator_exec_micros: i64,
    #[pyo3(get)]
    cpu_exec_micros: i64,
    #[pyo3(get)]
    requested_bytes: i64,
    #[pyo3(get)]
    peak_bytes: i64,
    #[pyo3(get)]
    residual_bytes: i64,
    #[pyo3(get)]
    output_bytes: i64,
    #[pyo3(get)]
    parameters: i64,
    #[pyo3(get)]
    float_ops: i64,
    #[pyo3(get)]
    devices: Vec<String>,
    #[pyo3(get)]
    total_definition_count: i64,
    #[pyo3(get)]
    total_run_count: i64,
    #[pyo3(get)]
    total_exec_micros: i64,
    #[pyo3(get)]
    total_accelerator_exec_micros: i64,
    #[pyo3(get)]
    total_cpu_exec_micros: i64,
    #[pyo3(get)]
    total_requested_bytes: i64,
    #[pyo3(get)]
    total_peak_bytes: i64,
    #[pyo3(get)]
    total_residual_bytes: i64,
    #[pyo3(get)]
    total_output_bytes: i64,
    #[pyo3(get)]
    total_parameters: i64,
    #[pyo3(get)]
    total_float_ops: i64,
    #[pyo3(get)]
    shapes: Py<PyList>,
    #[pyo3(get)]
    input_shapes: Py<PyDict>,
    /// A Python list, whose deallocation CPython keeps from recursing too
    /// deep (a chain of inputs can be thousands of nodes long).
    #[pyo3(get)]
    children: Py<PyList>,
    rows: Option<Rows>,
}

#[pymethods]
impl GraphNode {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "GraphNode(name={}, total_exec_micros={}, total_requested_bytes={}, children={})",
            python_repr(PyString::new(py, &self.name).as_any()),
            self.total_exec_micros,
            self.total_requested_bytes,
            self.children.bind(py).len()
        )
    }
}

/// A row of the op view or a node of the code view: tfprof's
/// `MultiGraphNodeProto`, with the graph nodes it groups in `graph_nodes`.
#[pyclass(module = "rtfprof", frozen)]
struct MultiGraphNode {
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    exec_micros: i64,
    #[pyo3(get)]
    accelerator_exec_micros: i64,
    #[pyo3(get)]
    cpu_exec_micros: i64,
    #[pyo3(get)]
    requested_bytes: i64,
    #[pyo3(get)]
    peak_bytes: i64,
    #[pyo3(get)]
    residual_bytes: i64,
    #[pyo3(get)]
    output_bytes: i64,
    #[pyo3(get)]
    parameters: i64,
    #[pyo3(get)]
    float_ops: i64,
    #[pyo3(get)]
    total_exec_micros: i64,
    #[pyo3(get)]
    total_accelerator_exec_micros: i64,
    #[pyo3(get)]
    total_cpu_exec_micros: i64,
    #[pyo3(get)]
    total_requested_bytes: i64,
    #[pyo3(get)]
    total_peak_bytes: i64,
    #[pyo3(get)]
    total_residual_bytes: i64,
    #[pyo3(get)]
    total_output_bytes: i64,
    #[pyo3(get)]
    total_parameters: i64,
    #[pyo3(get)]
    total_float_ops: i64,
    #[pyo3(get)]
    graph_nodes: Py<PyList>,
    #[pyo3(get)]
    children: Py<PyList>,
    rows: Option<Rows>,
}

#[pymethods]
impl MultiGraphNode {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "MultiGraphNode(name={}, total_exec_micros={}, total_requested_bytes={}, graph_nodes={}, children={})",
            python_repr(PyString::new(py, &self.name).as_any()),
            self.total_exec_micros,
            self.total_requested_bytes,
            self.graph_nodes.bind(py).len(),
            self.children.bind(py).len()
        )
    }
}

fn shape_value(py: Python<'_>, shape: &rtfprof::proto::tensorflow::TensorShapeProto) -> PyResult<Py<PyAny>> {
    if shape.unknown_rank {
        return Ok(py.None());
    }
    let dims: Vec<i64> = shape.dim.iter().map(|d| d.size).collect();
    Ok(PyTuple::new(py, dims)?.into_any().unbind())
}

fn tensor_value(py: Python<'_>, value: TfProfTensorProto) -> PyResult<Py<TensorValue>> {
    Py::new(py, TensorValue { dtype: value.dtype, value_double: value.value_double, value_int64: value.value_int64, value_str: value.value_str })
}

/// Converts `proto` and its children; `next` is the pre-order index of the
/// next displayed row (`None` for a row's graph nodes, which are not rows).
fn graph_node(py: Python<'_>, proto: GraphNodeProto, table: Option<&Arc<Table>>, next: &mut usize) -> PyResult<Py<GraphNode>> {
    let start = *next;
    if table.is_some() {
        *next += 1;
    }
    let children = PyList::empty(py);
    for child in proto.children {
        children.append(graph_node(py, child, table, next)?)?;
    }
    let input_shapes = PyDict::new(py);
    for (slot, shape) in &proto.input_shapes {
        input_shapes.set_item(slot, shape_value(py, shape)?)?;
    }
    let node = GraphNode {
        name: proto.name,
        tensor_value: proto.tensor_value.map(|v| tensor_value(py, v)).transpose()?,
        run_count: proto.run_count,
        exec_micros: proto.exec_micros,
        accelerator_exec_micros: proto.accelerator_exec_micros,
        cpu_exec_micros: proto.cpu_exec_micros,
        requested_bytes: proto.requested_bytes,
        peak_bytes: proto.peak_bytes,
        residual_bytes: proto.residual_bytes,
        output_bytes: proto.output_bytes,
        parameters: proto.parameters,
        float_ops: proto.float_ops,
        devices: proto.devices,
        total_definition_count: proto.total_definition_count,
        total_run_count: proto.total_run_count,
        total_exec_micros: proto.total_exec_micros,
        total_accelerator_exec_micros: proto.total_accelerator_exec_micros,
        total_cpu_exec_micros: proto.total_cpu_exec_micros,
        total_requested_bytes: proto.total_requested_bytes,
        total_peak_bytes: proto.total_peak_bytes,
        total_residual_bytes: proto.total_residual_bytes,
        total_output_bytes: proto.total_output_bytes,
        total_parameters: proto.total_parameters,
        total_float_ops: proto.total_float_ops,
        shapes: PyList::empty(py).unbind(),
        input_shapes: input_shapes.unbind(),
        children: children.unbind(),
        rows: table.map(|t| Rows { table: t.clone(), start, len: *next - start }),
    };
    Py::new(py, node)
}

/// Converts an op or code view node; `rows` is its displayed rows.
fn multi_graph_node(py: Python<'_>, proto: MultiGraphNodeProto, children: Bound<'_, PyList>, rows: Option<Rows>) -> PyResult<Py<MultiGraphNode>> {
    let graph_nodes = PyList::empty(py);
    for node in proto.graph_nodes {
        graph_nodes.append(graph_node(py, node, None, &mut 0)?)?;
    }
    let node = MultiGraphNode {
        name: proto.name,
        exec_micros: proto.exec_micros,
        accelerator_exec_micros: proto.accelerator_exec_micros,
        cpu_exec_micros: proto.cpu_exec_micros,
        requested_bytes: proto.requested_bytes,
        peak_bytes: proto.peak_bytes,
        residual_bytes: proto.residual_bytes,
        output_bytes: proto.output_bytes,
        parameters: proto.parameters,
        float_ops: proto.float_ops,
        total_exec_micros: proto.total_exec_micros,
        total_accelerator_exec_micros: proto.total_accelerator_exec_micros,
        total_cpu_exec_micros: proto.total_cpu_exec_micros,
        total_requested_bytes: proto.total_requested_bytes,
        total_peak_bytes: proto.total_peak_bytes,
        total_residual_bytes: proto.total_residual_bytes,
        total_output_bytes: proto.total_output_bytes,
        total_parameters: proto.total_parameters,
        total_float_ops: proto.total_float_ops,
        graph_nodes: graph_nodes.unbind(),
        children: children.unbind(),
        rows,
    };
    Py::new(py, node)
}

/// A code view node and its subtree, rows counted in pre-order.
fn code_node(py: Python<'_>, mut proto: MultiGraphNodeProto, table: &Arc<Table>, next: &mut usize) -> PyResult<Py<MultiGraphNode>> {
    let start = *next;
    *next += 1;
    let children = PyList::empty(py);
    for child in std::mem::take(&mut proto.children) {
        children.append(code_node(py, child, table, next)?)?;
    }
    let rows = Rows { table: table.clone(), start, len: *next - start };
    multi_graph_node(py, proto, children, Some(rows))
}

/// The op view's chain of rows: the rows from `index` on are this node's.
fn op_chain(py: Python<'_>, mut proto: MultiGraphNodeProto, table: &Arc<Table>, index: usize) -> PyResult<Py<MultiGraphNode>> {
    let children = PyList::empty(py);
    if let Some(next) = proto.children.pop() {
        children.append(op_chain(py, next, table, index + 1)?)?;
    }
    let rows = Rows { table: table.clone(), start: index, len: table.rows.len() - index };
    multi_graph_node(py, proto, children, Some(rows))
}

fn build_node(py: Python<'_>, proto: ViewProto, view: View, table: &Arc<Table>) -> PyResult<Py<PyAny>> {
    Ok(match (proto, view) {
        (ViewProto::Graph(root), _) => graph_node(py, root, Some(table), &mut 0)?.into_any(),
        (ViewProto::Multi(root), View::Op) => op_chain(py, root, table, 0)?.into_any(),
        (ViewProto::Multi(root), _) => code_node(py, root, table, &mut 0)?.into_any(),
    })
}

/// Runs `work` on a thread with a deep stack, attached to the interpreter,
/// while the calling thread waits detached.
fn on_deep_stack<T: Send>(py: Python<'_>, work: impl FnOnce(Python<'_>) -> PyResult<T> + Send) -> PyResult<T> {
    py.detach(|| {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("rtfprof-nodes".into())
                .stack_size(DEEP_STACK_BYTES)
                .spawn_scoped(scope, || Python::attach(work))
                .map_err(|e| PyOSError::new_err(format!("cannot start a thread: {e}")))?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    })
}

// ---------------------------------------------------------------------------
// Module functions
// ---------------------------------------------------------------------------

/// Shows one view of the inputs, as `tf.compat.v1.profiler.profile(cmd=…,
/// options=…)` does, and returns its root: a `GraphNode` (scope, graph) or a
/// `MultiGraphNode` (op, code). With `default_op_log` (the default), a
/// graph's float ops are those TF's Python function merges into the op log
/// it is given (`--default_op_log`); without, the op log's alone, as the
/// tfprof and rtfprof command lines read them.
#[pyfunction]
#[pyo3(signature = (cmd, *, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, checkpoint_path=None, events_path=None, xplane_path=None, pytorch_path=None, options=None, default_op_log=true, partial=None, partial_path=None, job=None))]
#[allow(clippy::too_many_arguments)]
fn profile(
    py: Python<'_>,
    cmd: &str,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    checkpoint_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyAny>>,
    default_op_log: bool,
    partial: Option<&Bound<'_, PyAny>>,
    partial_path: Option<&Bound<'_, PyAny>>,
    job: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let view = parse_view(cmd)?;
    let options = match options.filter(|o| !o.is_none()) {
        None => None,
        Some(o) => Some(
            o.cast::<PyDict>()
                .map_err(|_| PyValueError::new_err(format!("options: expected a dict of tf.profiler options, got {} ({})", python_repr(o), type_name(o))))?,
        ),
    };
    let opts = parse_options(options)?;
    let mut inputs = input_sources(graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    partial_args(&mut inputs, partial, partial_path)?;
    inputs.jobs = job_args(job)?;
    check_inputs("profile", &inputs)?;
    inputs.paths.checkpoint_path = path_arg("checkpoint_path", checkpoint_path)?;
    // (TF's function takes a graph: a profile holds its own float ops.)
    if default_op_log && (inputs.paths.graph_path.is_some() || inputs.paths.events_path.is_some()) {
        inputs.paths.estimate_flops = rtfprof::stats::flops::FlopsEstimate::TfDefaultOpLog;
    }
    let profiled = py.detach(|| rtfprof::api::profile(view, &inputs, &opts)).map_err(to_py_err)?;
    warn_all(py, &profiled.warnings)?;
    if profiled.rows_cut > 0 {
        // (TF's profile() cuts the op list at max_depth without a word.)
        let shown = profiled.root.children.len();
        let message = format!(
            "op view: {shown} of {} op types returned (max_depth {} ends the list, as in TF's profile()); options={{'max_depth': …}} returns more",
            shown + profiled.rows_cut,
            opts.max_depth
        );
        warn_all(py, &[message])?;
    }
    if !profiled.printed.is_empty() {
        py.import("sys")?.getattr("stdout")?.call_method1("write", (profiled.printed.as_str(),))?;
    }
    let rtfprof::api::Profiled { proto, root, per_step, .. } = profiled;
    on_deep_stack(py, move |py| {
        let table = Arc::new(Table { rows: flatten(root), per_step, op_rows: view == View::Op });
        build_node(py, proto, view, &table)
    })
}

/// The inputs every function takes; `function` names the caller when there
/// are none.
#[allow(clippy::too_many_arguments)]
fn input_args(
    function: &str,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
) -> PyResult<Sources> {
    let inputs = input_sources(graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    check_inputs(function, &inputs)?;
    Ok(inputs)
}

fn check_inputs(function: &str, inputs: &Sources) -> PyResult<()> {
    if inputs.is_empty() {
        return Err(PyValueError::new_err(format!(
            "{function}: no inputs (give profile_path, or graph_path with run_meta_path and op_log_path, or events_path, or xplane_path, or pytorch_path, or partial)"
        )));
    }
    Ok(())
}

/// `job=`: several jobs loaded apart and merged, as `--job NAME=PATH`
/// takes them: a dict of names to paths, or a list of `NAME=PATH` strings.
fn job_args(job: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(job) = job.filter(|j| !j.is_none()) else { return Ok(Vec::new()) };
    if let Ok(jobs) = job.cast::<PyDict>() {
        return jobs
            .iter()
            .map(|(name, path)| {
                let name: String = name.extract().map_err(|_| PyValueError::new_err("--job: the keys of job are the jobs' names"))?;
                let path = path_arg("job", Some(&path))?.unwrap_or_default();
                Ok(format!("{name}={}", path.display()))
            })
            .collect();
    }
    if job.is_instance_of::<PyList>() || job.is_instance_of::<PyTuple>() {
        return job.try_iter()?.map(|spec| spec?.extract::<String>().map_err(|_| PyValueError::new_err("--job: expected NAME=PATH strings"))).collect();
    }
    Err(PyValueError::new_err(format!("--job: expected a dict of names to paths or a list of NAME=PATH, got {} ({})", python_repr(job), type_name(job))))
}

/// `rtfprof jobs`: per job (`job=`, as `profile` takes it), its nodes, run
/// graph coverage and each step's wall time with its busiest devices (µs):
/// `[{"job", "nodes", "coverage", "steps": [{"step", "wall_micros",
/// "devices": {device: busy µs}}]}]`.
#[pyfunction]
#[pyo3(signature = (job))]
fn jobs(py: Python<'_>, job: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
    let sources = Sources { jobs: job_args(Some(job))?, ..Sources::default() };
    if sources.jobs.is_empty() {
        return Err(PyValueError::new_err("jobs: give the jobs to summarize, e.g. job={'w0': 'traces/w0'}"));
    }
    let summaries = py.detach(|| rtfprof::api::jobs(&sources)).map_err(to_py_err)?;
    let list = PyList::empty(py);
    for summary in &summaries {
        let row = PyDict::new(py);
        row.set_item("job", &summary.name)?;
        row.set_item("nodes", summary.nodes)?;
        row.set_item("coverage", summary.coverage)?;
        let steps = PyList::empty(py);
        for step in &summary.steps {
            let s = PyDict::new(py);
            s.set_item("step", step.step)?;
            s.set_item("wall_micros", step.wall_micros)?;
            let devices = PyDict::new(py);
            for (device, micros) in &step.devices {
                devices.set_item(device, micros)?;
            }
            s.set_item("devices", devices)?;
            steps.append(s)?;
        }
        row.set_item("steps", steps)?;
        list.append(row)?;
    }
    Ok(list.unbind())
}

/// `partial=` (a partial's bytes, or a path) and `partial_path=` (a path, a
/// comma-separated string or a list of paths; directories of `*.rtfprof`).
fn partial_args(inputs: &mut Sources, partial: Option<&Bound<'_, PyAny>>, partial_path: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    for (name, value) in [("partial", partial), ("partial_path", partial_path)] {
        let Some(value) = value.filter(|v| !v.is_none()) else { continue };
        if let Ok(bytes) = value.cast::<PyBytes>() {
            if name == "partial_path" {
                return Err(PyValueError::new_err("--partial_path: expected paths, got bytes (pass bytes as partial=)"));
            }
            inputs.partial_bytes = Some(Arc::new(bytes.as_bytes().to_vec()));
        } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
            for item in value.try_iter()? {
                inputs.partial_paths.extend(path_arg(name, Some(&item?))?);
            }
        } else if let Ok(text) = value.extract::<String>() {
            inputs.partial_paths.extend(text.split(',').filter(|s| !s.is_empty()).map(PathBuf::from));
        } else {
            inputs.partial_paths.extend(path_arg(name, Some(value))?);
        }
    }
    Ok(())
}

/// A partial profile of one rank's or host's trace (or of every rank of a
/// directory), as `rtfprof partial` writes it: the bytes to pass to
/// `merge` and to `profile(partial=…)`. `path` is any input `--job
/// NAME=PATH` takes (a PyTorch trace, an XPlane file or log directory, a
/// profile, a TF directory); `name` is its job's (rank's) name (default:
/// the file's name without .pt.trace.json, .xplane.pb, …). Or give the
/// inputs by keyword, as to `profile`.
#[pyfunction]
#[pyo3(signature = (path=None, *, name=None, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, events_path=None, xplane_path=None, pytorch_path=None))]
#[allow(clippy::too_many_arguments)]
fn partial<'py>(
    py: Python<'py>,
    path: Option<&Bound<'py, PyAny>>,
    name: Option<String>,
    graph_path: Option<&Bound<'py, PyAny>>,
    run_meta_path: Option<&Bound<'py, PyAny>>,
    op_log_path: Option<&Bound<'py, PyAny>>,
    profile_path: Option<&Bound<'py, PyAny>>,
    events_path: Option<&Bound<'py, PyAny>>,
    xplane_path: Option<&Bound<'py, PyAny>>,
    pytorch_path: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let path = path_arg("path", path)?;
    let inputs = input_sources(graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    let bytes = match path {
        Some(_) if !inputs.is_empty() => return Err(PyValueError::new_err("partial: give path or input keywords, not both")),
        Some(path) => py.detach(|| rtfprof::make_partial::from_path(&path, name.as_deref()).map(|p| rtfprof::partial::to_bytes(&p))),
        None => {
            check_inputs("partial", &inputs)?;
            py.detach(|| rtfprof::make_partial::from_sources(&inputs, name.as_deref()).map(|p| rtfprof::partial::to_bytes(&p)))
        }
    }
    .map_err(to_py_err)?;
    Ok(PyBytes::new(py, &bytes))
}

/// Merges partial profiles (bytes from `partial` or `merge`) into one: the
/// same bytes whatever the order or grouping, so a tree of merges on many
/// workers gives what one merge of all would.
#[pyfunction]
fn merge<'py>(py: Python<'py>, partials: Vec<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = py
        .detach(|| {
            let parts = partials
                .iter()
                .enumerate()
                .map(|(i, bytes)| rtfprof::partial::from_bytes(bytes, std::path::Path::new(&format!("<partials[{i}]>"))))
                .collect::<rtfprof::error::Result<Vec<_>>>()?;
            rtfprof::partial::merge(parts).map(|p| rtfprof::partial::to_bytes(&p))
        })
        .map_err(to_py_err)?;
    Ok(PyBytes::new(py, &bytes))
}

#[allow(clippy::too_many_arguments)]
fn input_sources(
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
) -> PyResult<Sources> {
    let run_meta_paths = run_meta_arg(run_meta_path)?.unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(PathBuf::from).collect();
    let paths = rtfprof::inputs::InputPaths {
        graph_path: path_arg("graph_path", graph_path)?,
        run_meta_paths,
        op_log_path: path_arg("op_log_path", op_log_path)?,
        profile_path: path_arg("profile_path", profile_path)?,
        events_path: path_arg("events_path", events_path)?,
        ..Default::default()
    };
    let inputs =
        Sources { paths, xplane_path: path_arg("xplane_path", xplane_path)?, pytorch_path: path_arg("pytorch_path", pytorch_path)?, ..Sources::default() };
    Ok(inputs)
}

/// Each step's time and its split into XProf's categories, as `rtfprof
/// steps` gives them: one dict a step, with the JSON output's keys (`step`:
/// the step number as an `int` where the step is numbered,
/// `step_time_us`, `<category>_us`, then on GPUs `transfers_us` and
/// `device_idle_us`; `None` where the input cannot tell). PyTorch traces:
/// one dict a rank, step and GPU, with their JSON rows' keys (the
/// TensorBoard plugin's categories, the GPU's split, kernel kinds).
#[pyfunction]
#[pyo3(signature = (*, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, events_path=None, xplane_path=None, pytorch_path=None))]
#[allow(clippy::too_many_arguments)]
fn steps(
    py: Python<'_>,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyList>> {
    let inputs = input_args("steps", graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    let (analyzed, warnings) = py.detach(|| rtfprof::api::steps(&inputs)).map_err(to_py_err)?;
    warn_all(py, &warnings)?;
    if analyzed.source == rtfprof::steps::Source::PyTorch {
        // A row per rank, step and GPU, with the JSON output's keys.
        let json = from_json(py, |out| rtfprof::outputs::steps::write_json(&analyzed, out))?;
        return Ok(json.get_item("steps")?.cast_into::<PyList>()?.unbind());
    }
    let list = PyList::empty(py);
    for row in &analyzed.rows {
        let step = PyDict::new(py);
        // The step number, as a number (the JSON's `step` is its text).
        match row.name.parse::<i64>() {
            Ok(number) => step.set_item("step", number)?,
            Err(_) => step.set_item("step", &row.name)?,
        }
        for (name, value) in rtfprof::steps::number_names().zip(row.numbers()) {
            step.set_item(name, value)?;
        }
        list.append(step)?;
    }
    Ok(list.unbind())
}

/// The warnings about the inputs that the CLI prints, as RuntimeWarnings.
fn warn_all(py: Python<'_>, warnings: &[String]) -> PyResult<()> {
    for warning in warnings {
        let message = std::ffi::CString::new(warning.replace('\0', " ")).expect("NULs replaced");
        PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &message, 1)?;
    }
    Ok(())
}

/// `rtfprof check BASELINE... NEW`: compares two runs (paths of traces,
/// profiles or baselines saved by `--save_baseline`; a list of paths for a
/// side of several runs) step by step and
/// returns what `--output json` writes (`passed`, `summary`, `metrics`,
/// `budgets`, `ignored`, …; schemas/check.schema.json). `rules` is a rules
/// file, as `--rules`; the other settings, where given (not `None`),
/// override its defaults as the flags do, and the built-in defaults are the
/// command line's (`rtfprof::check::defaults`).
#[pyfunction]
#[pyo3(signature = (baseline, new, *, rules=None, max_regression=None, max_op_regression=None, max_memory_regression=None, min_memory_change=None, alpha=None, min_steps=None, min_share=None, min_part_growth=None, thresholds=None))]
#[allow(clippy::too_many_arguments)]
fn check<'py>(
    py: Python<'py>,
    baseline: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
    rules: Option<&Bound<'py, PyAny>>,
    max_regression: Option<&str>,
    max_op_regression: Option<&str>,
    max_memory_regression: Option<&str>,
    min_memory_change: Option<&str>,
    alpha: Option<f64>,
    min_steps: Option<usize>,
    min_share: Option<&str>,
    min_part_growth: Option<&str>,
    thresholds: Option<std::collections::BTreeMap<String, String>>,
) -> PyResult<Bound<'py, PyAny>> {
    use rtfprof::check::options::parse_fraction;
    let baseline = paths_arg("baseline", baseline)?;
    let new = paths_arg("new", new)?;
    let mut options = match path_arg("rules", rules)? {
        Some(path) => rtfprof::check::rules::read(&path).map_err(to_py_err)?.into_options(path.display().to_string()),
        None => rtfprof::check::Options::default(),
    };
    let fraction = |name: &str, value: Option<&str>, into: &mut f64| -> PyResult<()> {
        if let Some(value) = value {
            *into = parse_fraction(name, value).map_err(to_py_err)?;
        }
        Ok(())
    };
    fraction("max_regression", max_regression, &mut options.max_regression)?;
    fraction("max_op_regression", max_op_regression, &mut options.max_op_regression)?;
    fraction("min_share", min_share, &mut options.min_share)?;
    if let Some(value) = min_part_growth {
        options.min_part_growth = Some(parse_fraction("min_part_growth", value).map_err(to_py_err)?);
    }
    fraction("max_memory_regression", max_memory_regression, &mut options.max_memory_regression)?;
    if let Some(value) = min_memory_change {
        options.min_memory_change = rtfprof::check::options::parse_bytes("min_memory_change", value).map_err(to_py_err)?;
    }
    if let Some(alpha) = alpha {
        if !(alpha > 0.0 && alpha < 1.0) {
            return Err(PyValueError::new_err(format!("alpha: {alpha} is not a level between 0 and 1 (e.g. 0.01)")));
        }
        options.alpha = alpha;
    }
    if let Some(min_steps) = min_steps {
        options.min_steps = min_steps;
    }
    for (label, amount) in thresholds.unwrap_or_default() {
        options.thresholds.insert(label, parse_fraction("thresholds", &amount).map_err(to_py_err)?);
    }
    let result = py
        .detach(|| {
            let (base, new) = (rtfprof::api::check_runs(&baseline, "baseline")?, rtfprof::api::check_runs(&new, "new")?);
            Ok::<_, rtfprof::Error>(rtfprof::check::decide(&base, &new, &options))
        })
        .map_err(to_py_err)?;
    from_json(py, |mut out| {
        out.extend(rtfprof::outputs::check::json::render(&result));
        Ok(out)
    })
}

/// A JSON document the library wrote, as Python objects (`json.loads`):
/// exactly what the CLI's `--output json` holds.
fn from_json(py: Python<'_>, write: impl FnOnce(Vec<u8>) -> std::io::Result<Vec<u8>>) -> PyResult<Bound<'_, PyAny>> {
    let bytes = write(Vec::new()).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (PyBytes::new(py, &bytes),))
}

/// Each allocator's bytes in use over each step (`step=-1`) or one step,
/// its peak and the nodes live at the peak, as `rtfprof memory --output
/// json` writes them: `{"schema_version", "steps": [{"step", "allocators":
/// {name: {"peak_bytes", "peak_micros", "live_at_peak", "curve"}}}]}`; on
/// XPlane traces also `"programs"`: each XLA program that ran, its peak and
/// the buffers live there by XLA's buffer assignment (XProf's
/// memory_viewer).
#[pyfunction]
#[pyo3(signature = (*, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, events_path=None, xplane_path=None, pytorch_path=None, step=-1))]
#[allow(clippy::too_many_arguments)]
fn memory(
    py: Python<'_>,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
    step: i64,
) -> PyResult<Py<PyAny>> {
    let inputs = input_args("memory", graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    let (profile, warnings) = py.detach(|| rtfprof::api::memory(&inputs, step)).map_err(to_py_err)?;
    warn_all(py, &warnings)?;
    Ok(from_json(py, |out| rtfprof::outputs::memory::json::write(&profile, out))?.unbind())
}

/// The XLA instructions that ran in XPlane traces, as `rtfprof hlo --output
/// json` lists them (its `hlo_ops`): one dict a row, longest first.
#[pyfunction]
#[pyo3(signature = (*, xplane_path))]
fn hlo(py: Python<'_>, xplane_path: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    device_rows(py, xplane_path, rtfprof::device::Table::Hlo, "hlo_ops")
}

/// The GPU kernels of XPlane traces, as `rtfprof kernels --output json`
/// lists them (its `kernels`): one dict a row, longest first.
#[pyfunction]
#[pyo3(signature = (*, xplane_path))]
fn kernels(py: Python<'_>, xplane_path: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    device_rows(py, xplane_path, rtfprof::device::Table::Kernels, "kernels")
}

/// `rtfprof ranks --output json`'s document for a directory of PyTorch
/// traces (`pytorch_path`, one a rank) or an XPlane run (`xplane_path`, one
/// host a rank), or for partial profiles of such ranks (`partial`,
/// `partial_path`, as `profile` takes them): `{"schema_version", "ranks":
/// [...], "stragglers": [rank ids], "straggler_rule", ...}`.
#[pyfunction]
#[pyo3(signature = (*, pytorch_path=None, xplane_path=None, partial=None, partial_path=None))]
fn ranks(
    py: Python<'_>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    partial: Option<&Bound<'_, PyAny>>,
    partial_path: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let mut sources =
        Sources { pytorch_path: path_arg("pytorch_path", pytorch_path)?, xplane_path: path_arg("xplane_path", xplane_path)?, ..Sources::default() };
    partial_args(&mut sources, partial, partial_path)?;
    let (ranks, _) = py.detach(|| rtfprof::ranks::from_sources(&sources)).map_err(to_py_err)?;
    Ok(from_json(py, |out| rtfprof::outputs::ranks::write_json(&ranks, out))?.unbind())
}

fn device_rows(py: Python<'_>, xplane_path: &Bound<'_, PyAny>, table: rtfprof::device::Table, key: &str) -> PyResult<Py<PyAny>> {
    let inputs = input_args(key, None, None, None, None, None, Some(xplane_path), None)?;
    let tables = py.detach(|| rtfprof::api::device_tables(&inputs)).map_err(to_py_err)?;
    Ok(from_json(py, |out| rtfprof::outputs::device::write_json(&tables, table, out))?.get_item(key)?.unbind())
}

fn rows_of(node: &Bound<'_, PyAny>) -> PyResult<Option<Rows>> {
    if let Ok(n) = node.cast::<GraphNode>() {
        return Ok(n.get().rows.clone());
    }
    if let Ok(n) = node.cast::<MultiGraphNode>() {
        return Ok(n.get().rows.clone());
    }
    Err(PyValueError::new_err(format!(
        "expected a node rtfprof.profile returned (GraphNode or MultiGraphNode), got {} ({})",
        python_repr(node),
        type_name(node)
    )))
}

/// tfprof's checkers on the inputs, as `rtfprof advise` prints them (on
/// traces: the devices' utilization and the framework's own advice): one
/// dict a report line, `{"checker": name, "report": text}`, in the
/// command's order; warnings about the inputs are RuntimeWarnings.
/// `default_op_log` estimates float ops as `profile` does (`rtfprof advise
/// --default_op_log`), adding the `UncountedFlopsChecker`'s list of what
/// they leave out; off by default, as `rtfprof advise` is tfprof's.
#[pyfunction]
#[pyo3(signature = (*, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, events_path=None, xplane_path=None, pytorch_path=None, partial=None, partial_path=None, job=None, default_op_log=false))]
#[allow(clippy::too_many_arguments)]
fn advise(
    py: Python<'_>,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
    partial: Option<&Bound<'_, PyAny>>,
    partial_path: Option<&Bound<'_, PyAny>>,
    job: Option<&Bound<'_, PyAny>>,
    default_op_log: bool,
) -> PyResult<Py<PyList>> {
    let mut inputs = input_sources(graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    partial_args(&mut inputs, partial, partial_path)?;
    inputs.jobs = job_args(job)?;
    if default_op_log {
        inputs.paths.estimate_flops = rtfprof::stats::flops::FlopsEstimate::TfDefaultOpLog;
    }
    check_inputs("advise", &inputs)?;
    let (checkers, warnings) = py.detach(|| rtfprof::api::advise(&inputs)).map_err(to_py_err)?;
    warn_all(py, &warnings)?;
    let list = PyList::empty(py);
    for checker in &checkers {
        for report in &checker.reports {
            let row = PyDict::new(py);
            row.set_item("checker", checker.name)?;
            row.set_item("report", report)?;
            list.append(row)?;
        }
    }
    Ok(list.unbind())
}

const _: () = {
    use rtfprof::capture::defaults::{DEVICE_TRACER_LEVEL, HOST_TRACER_LEVEL, PYTHON_TRACER_LEVEL};
    assert!(HOST_TRACER_LEVEL == 2 && DEVICE_TRACER_LEVEL == 1 && PYTHON_TRACER_LEVEL == 0, "capture's Python signature writes out these defaults");
};

/// Captures a trace from running profiler servers, as `rtfprof capture`
/// does (`addresses`: `"HOST:PORT"` or a list of them), saves each host's
/// under `logdir/plugins/profile/RUN/` and returns the run directory's path. A host
/// that failed is a `RuntimeWarning` naming its address, or, if none was
/// saved, a `RuntimeError` (`ValueError` for bad arguments). Ctrl-C ends
/// the capture at once: the traces that arrived are kept, a
/// `RuntimeWarning` says where, and `KeyboardInterrupt` is raised.
#[pyfunction]
// (The tracer levels' defaults are rtfprof::capture::defaults' values,
// written out: a path shows as `...` in the signature Python sees.)
#[pyo3(signature = (addresses, duration_ms, logdir, *, host_tracer_level=2, device_tracer_level=1, python_tracer_level=0, delay_ms=0, timeout_ms=None))]
#[allow(clippy::too_many_arguments)]
fn capture(
    py: Python<'_>,
    addresses: &Bound<'_, PyAny>,
    duration_ms: u64,
    logdir: PathBuf,
    host_tracer_level: u32,
    device_tracer_level: u32,
    python_tracer_level: u32,
    delay_ms: u64,
    timeout_ms: Option<u64>,
) -> PyResult<String> {
    let addresses: Vec<String> = match addresses.extract::<String>() {
        Ok(one) => one.split(',').map(str::to_owned).collect(),
        Err(_) => addresses.extract()?,
    };
    let mut options = rtfprof::capture::Options::default();
    options.duration_ms = duration_ms;
    options.delay_ms = delay_ms;
    options.host_tracer_level = host_tracer_level;
    options.device_tracer_level = device_tracer_level;
    options.python_tracer_level = python_tracer_level;
    options.timeout_ms = timeout_ms;
    let setup_error = |e: rtfprof::capture::SetupError| match e {
        rtfprof::capture::SetupError::Flag { .. } => PyValueError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    };
    let (session, interrupt) = rtfprof::capture::Session::interruptible().map_err(setup_error)?;
    // The capture runs on another thread: Python runs its SIGINT handler
    // (KeyboardInterrupt) only on its main thread, so this one looks for
    // Ctrl-C while it waits, and interrupts the capture, which keeps the
    // traces that arrived.
    let mut ctrl_c = None;
    let taken = std::thread::scope(|scope| {
        let capturing = scope.spawn(|| session.capture(&addresses, &logdir, &options));
        while !capturing.is_finished() {
            py.detach(|| std::thread::sleep(std::time::Duration::from_millis(20)));
            if ctrl_c.is_none()
                && let Err(e) = py.check_signals()
            {
                interrupt.interrupt();
                ctrl_c = Some(e);
            }
        }
        capturing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
    .map_err(setup_error)?;
    let failures: Vec<String> = taken.failed().map(|(address, error)| format!("capture {address}: {error}")).collect();
    if let Some(ctrl_c) = ctrl_c {
        // KeyboardInterrupt, as Python's own waits end, after saying what
        // was kept.
        let kept = if taken.saved().next().is_some() { format!("kept {}", taken.run_dir.display()) } else { "nothing was saved".to_owned() };
        warn_all(py, &failures)?;
        warn_all(py, &[format!("capture: interrupted (Ctrl-C); {kept}")])?;
        return Err(ctrl_c);
    }
    if taken.saved().next().is_none() {
        return Err(PyRuntimeError::new_err(failures.join("\n")));
    }
    warn_all(py, &failures)?;
    Ok(taken.run_dir.to_string_lossy().into_owned())
}

/// Writes the HTML report of the inputs to `outfile`, as `rtfprof report
/// --output html:outfile=…` does (`options`: the view options of its
/// trees, tf.profiler's dict; every node unless `max_depth` is given), and
/// returns `outfile`.
#[pyfunction]
#[pyo3(signature = (outfile, *, graph_path=None, run_meta_path=None, op_log_path=None, profile_path=None, events_path=None, xplane_path=None, pytorch_path=None, partial=None, partial_path=None, job=None, options=None))]
#[allow(clippy::too_many_arguments)]
fn report<'py>(
    py: Python<'py>,
    outfile: &Bound<'py, PyAny>,
    graph_path: Option<&Bound<'_, PyAny>>,
    run_meta_path: Option<&Bound<'_, PyAny>>,
    op_log_path: Option<&Bound<'_, PyAny>>,
    profile_path: Option<&Bound<'_, PyAny>>,
    events_path: Option<&Bound<'_, PyAny>>,
    xplane_path: Option<&Bound<'_, PyAny>>,
    pytorch_path: Option<&Bound<'_, PyAny>>,
    partial: Option<&Bound<'_, PyAny>>,
    partial_path: Option<&Bound<'_, PyAny>>,
    job: Option<&Bound<'_, PyAny>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let path = path_arg("outfile", Some(outfile))?.ok_or_else(|| PyValueError::new_err("report: outfile is the HTML file to write"))?;
    let mut inputs = input_sources(graph_path, run_meta_path, op_log_path, profile_path, events_path, xplane_path, pytorch_path)?;
    partial_args(&mut inputs, partial, partial_path)?;
    inputs.jobs = job_args(job)?;
    check_inputs("report", &inputs)?;
    let mut opts = parse_options(options)?;
    if options.is_none_or(|o| !o.contains("max_depth").unwrap_or(false)) {
        // (As the command: the report's trees hold every node.)
        opts.max_depth = i64::MAX;
    }
    let (page, warnings) = py.detach(|| rtfprof::api::report(&inputs, &opts)).map_err(to_py_err)?;
    warn_all(py, &warnings)?;
    rtfprof::outputs::stream_atomic(&path, |out| rtfprof::outputs::html::write(&page, out)).map_err(to_py_err)?;
    Ok(outfile.clone())
}

/// The keys a side of `diff` takes: the input keywords of `profile`, then
/// `partial_path` and `text` (a saved tfprof scope/graph/code output).
const DIFF_SIDE_KEYS: [&str; 9] =
    ["graph_path", "run_meta_path", "op_log_path", "profile_path", "events_path", "xplane_path", "pytorch_path", "partial_path", "text"];

/// One side of `diff` from its dict of inputs.
fn diff_side(side: &Bound<'_, PyDict>, step: i64, which: Which) -> PyResult<Side> {
    let name = if which == Which::Left { "left" } else { "right" };
    for key in side.keys() {
        let key: String = key.extract().map_err(|_| PyTypeError::new_err(format!("diff: the keys of {name} are input names")))?;
        if !DIFF_SIDE_KEYS.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!("diff: {name} has an unknown input '{key}' (valid: {})", DIFF_SIDE_KEYS.join(", "))));
        }
    }
    let get = |key: &str| side.get_item(key);
    let (graph, run_meta, op_log, profile, events, xplane, pytorch, partial_path, text) = (
        get("graph_path")?,
        get("run_meta_path")?,
        get("op_log_path")?,
        get("profile_path")?,
        get("events_path")?,
        get("xplane_path")?,
        get("pytorch_path")?,
        get("partial_path")?,
        get("text")?,
    );
    let mut sources = input_sources(graph.as_ref(), run_meta.as_ref(), op_log.as_ref(), profile.as_ref(), events.as_ref(), xplane.as_ref(), pytorch.as_ref())?;
    partial_args(&mut sources, None, partial_path.as_ref())?;
    let text = path_arg("text", text.as_ref())?;
    if sources.is_empty() && text.is_none() {
        return Err(PyValueError::new_err(format!("diff: {name} has no inputs (give one of {})", DIFF_SIDE_KEYS.join(", "))));
    }
    Side::new(sources, text, step, which).map_err(to_py_err)
}

/// Two profiles' trees of one view compared node by node, as `rtfprof diff
/// --output json` writes them: `{"schema_version", "view", "metric",
/// "delta", "min_size", "left": {"name", "source"}, "right": {…}, "root":
/// {"name", "left", "right", "difference", "children": […]}}`, the nodes
/// whose relative difference is at least `delta` and whose size is at least
/// `min_size` (e.g. `"1MB"`, `"10ms"`, or a number in the metric's unit),
/// or that have such children. `left` and `right` are dicts of inputs
/// (`profile`'s keywords, `partial_path`, or `text`: a saved tfprof
/// output); without `right`, the left's inputs at `right_step`.
#[pyfunction]
#[pyo3(signature = (left, right=None, *, view="scope", metric=None, delta=0.1, min_size=None, names=("left".to_owned(), "right".to_owned()), left_step=-1, right_step=-1))]
#[allow(clippy::too_many_arguments)]
fn diff(
    py: Python<'_>,
    left: &Bound<'_, PyDict>,
    right: Option<&Bound<'_, PyDict>>,
    view: &str,
    metric: Option<&str>,
    delta: f64,
    min_size: Option<&Bound<'_, PyAny>>,
    names: (String, String),
    left_step: i64,
    right_step: i64,
) -> PyResult<Py<PyAny>> {
    let view = sides::parse_view(view).map_err(to_py_err)?;
    let metric = metric.map(rtfprof::diff::Metric::parse).transpose().map_err(to_py_err)?;
    if delta.is_nan() || delta < 0.0 {
        return Err(PyValueError::new_err("--delta: must be a number >= 0"));
    }
    let min_size = match min_size.filter(|v| !v.is_none()) {
        None => 0,
        Some(v) => match v.extract::<i64>() {
            Ok(n) if n >= 0 => n,
            _ => rtfprof::diff::parse_size(&v.str()?.to_string_lossy()).map_err(to_py_err)?,
        },
    };
    let left_side = diff_side(left, left_step, Which::Left)?;
    let right_side = match right {
        Some(right) => diff_side(right, right_step, Which::Right)?,
        None => left_side.at_step(right_step).ok_or_else(|| PyValueError::new_err("diff: a saved text has no steps: give right"))?,
    };
    let compared = py.detach(|| sides::compare(&left_side, &right_side, view, metric, &Options::default())).map_err(to_py_err)?;
    let listed = compared.listed(delta, min_size);
    let labels =
        rtfprof::outputs::diff::Labels { left_name: &names.0, right_name: &names.1, left_source: &compared.left_source, right_source: &compared.right_source };
    let report = rtfprof::outputs::diff::DiffReport { listed: &listed, view, metric: compared.metric, delta, min_size, labels: &labels };
    Ok(from_json(py, |out| rtfprof::outputs::diff::write_json(&report, out))?.unbind())
}

/// The CSV output's columns and one tuple per displayed node of `node`'s
/// subtree (pre-order), with each step's values when `step_values`.
#[pyfunction]
fn _table(py: Python<'_>, node: &Bound<'_, PyAny>, step_values: bool) -> PyResult<(Vec<String>, Py<PyList>)> {
    let Some(rows) = rows_of(node)? else {
        return Err(PyValueError::new_err("this node is one of a row's graph_nodes, not a displayed node: pass the root, or a node under root.children"));
    };
    let table = &rows.table;
    let columns = table::columns(table.per_step.as_ref(), step_values);
    let list = PyList::empty(py);
    for (depth, node) in &table.rows[rows.start..rows.start + rows.len] {
        let record = table::record(node, *depth, table.per_step.as_ref());
        let mut cells = record.cells(step_values);
        if table.op_rows && *depth > 0 {
            // Not tfprof's cumulative totals: the op type's own.
            let metrics = table::METRICS.len();
            let (own, total) = cells[4..4 + 2 * metrics].split_at_mut(metrics);
            total.copy_from_slice(own);
        }
        let cells: Vec<Py<PyAny>> = cells
            .into_iter()
            .map(|cell| -> PyResult<Py<PyAny>> {
                Ok(match cell {
                    Cell::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
                    Cell::Bool(v) => v.into_pyobject(py)?.to_owned().into_any().unbind(),
                    Cell::Str(v) => v.into_pyobject(py)?.into_any().unbind(),
                    Cell::Float { value, .. } => value.into_pyobject(py)?.into_any().unbind(),
                })
            })
            .collect::<PyResult<_>>()?;
        list.append(PyTuple::new(py, cells)?)?;
    }
    Ok((columns, list.unbind()))
}

/// The `rtfprof` command line, in this process: `argv` without the program
/// name; returns the exit code.
#[pyfunction]
fn _main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> u8 {
    let args: Vec<std::ffi::OsString> = std::iter::once("rtfprof".into()).chain(argv).collect();
    py.detach(|| {
        rtfprof_cli::tune_process_memory();
        rtfprof_cli::cli::main(args)
    })
}

// ---------------------------------------------------------------------------
// PyTorch traces: torch's key_averages() and table()
// ---------------------------------------------------------------------------

/// One row of torch's `prof.key_averages()` (a `FunctionEventAvg`), from a
/// trace file: the same attribute names, and the same values to the bit.
/// Times in microseconds, memory in bytes.
#[pyclass(module = "rtfprof", frozen, get_all)]
struct KeyAverage {
    key: String,
    count: u64,
    /// `"CPU"` or `"CUDA"` (torch: `DeviceType.CPU`, `DeviceType.CUDA`).
    device_type: &'static str,
    is_user_annotation: bool,
    cpu_time_total: f64,
    self_cpu_time_total: f64,
    device_time_total: f64,
    self_device_time_total: f64,
    cpu_time: f64,
    device_time: f64,
    cpu_memory_usage: i64,
    self_cpu_memory_usage: i64,
    device_memory_usage: i64,
    self_device_memory_usage: i64,
    /// The first event's input shapes (a list of lists of ints) when grouped
    /// by input shape, else `""`, as in torch.
    input_shapes: Py<PyAny>,
    /// Always -1, False, False, False, "" and []: what torch has for a
    /// profile of one process read back from its trace.
    node_id: i64,
    is_legacy: bool,
    is_async: bool,
    is_remote: bool,
    overload_name: &'static str,
    stack: Vec<String>,
}

#[pymethods]
impl KeyAverage {
    fn __repr__(&self) -> String {
        format!(
            "<KeyAverage key={:?} count={} device_type={} self_cpu_time_total={} cpu_time_total={} self_device_time_total={} device_time_total={}>",
            self.key, self.count, self.device_type, self.self_cpu_time_total, self.cpu_time_total, self.self_device_time_total, self.device_time_total
        )
    }
}

/// torch's `str(input_shapes)` back as lists: `[[8, 16], []]`.
fn shapes_list<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    let mut rest = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or("");
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').map_or(rest.len(), |c| open + c);
        let sizes: Vec<i64> = rest[open + 1..close].split(',').filter_map(|n| n.trim().parse().ok()).collect();
        list.append(sizes)?;
        rest = &rest[(close + 1).min(rest.len())..];
    }
    Ok(list)
}

/// The rows of `rtfprof.key_averages()`: a sequence of `KeyAverage`, with
/// torch's `table()`.
#[pyclass(module = "rtfprof", frozen, sequence)]
struct KeyAverages {
    rows: Vec<rtfprof::key_averages::KeyAverage>,
    objects: Vec<Py<KeyAverage>>,
    profile_memory: bool,
    use_device: Option<String>,
}

#[pymethods]
impl KeyAverages {
    fn __len__(&self) -> usize {
        self.objects.len()
    }

    fn __getitem__(&self, py: Python<'_>, index: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        // As a list's: an int (negative counts from the end) or a slice.
        Ok(PyList::new(py, &self.objects)?.as_any().get_item(index)?.unbind())
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(PyList::new(py, &self.objects)?.as_any().try_iter()?.into_any().unbind())
    }

    fn __repr__(&self) -> String {
        format!("<KeyAverages: {} rows>", self.objects.len())
    }

    /// torch's `EventList.table()`, byte for byte. `max_src_column_width`
    /// is accepted for torch's signature (rows carry no stacks); with_flops
    /// is not: the trace does not hold flops.
    #[pyo3(
        signature = (sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=Some(55), max_shapes_column_width=Some(80), header=None, top_level_events_only=false, time_unit=None),
        text_signature = "(self, /, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55, max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn table(
        &self,
        sort_by: Option<String>,
        row_limit: Option<i64>,
        max_src_column_width: Option<i64>,
        max_name_column_width: Option<usize>,
        max_shapes_column_width: Option<usize>,
        header: Option<String>,
        top_level_events_only: bool,
        time_unit: Option<String>,
    ) -> PyResult<String> {
        use rtfprof::outputs::torch_table::{TableOptions, attribute};
        let _ = max_src_column_width;
        if let (Some(sort_by), Some(first)) = (&sort_by, self.rows.first())
            && attribute(first, sort_by).is_none()
        {
            return Err(pyo3::exceptions::PyAttributeError::new_err(format!("'FunctionEventAvg' object has no attribute '{sort_by}'")));
        }
        let mut options = TableOptions::default();
        options.sort_by = sort_by;
        options.row_limit = row_limit.and_then(|n| usize::try_from(n).ok());
        options.max_name_column_width = max_name_column_width;
        options.max_shapes_column_width = max_shapes_column_width;
        options.header = header;
        options.top_level_events_only = top_level_events_only;
        options.time_unit = time_unit;
        options.profile_memory = self.profile_memory;
        options.use_device = self.use_device.clone();
        rtfprof::outputs::torch_table::table(&self.rows, &options).map_err(pyo3::exceptions::PyRuntimeError::new_err)
    }
}

/// PyTorch's `prof.key_averages(group_by_input_shape=...)` from a trace
/// that `torch.profiler` wrote (`*.pt.trace.json`, or `.json.gz`).
#[pyfunction]
#[pyo3(signature = (path, group_by_input_shape=false))]
fn key_averages(py: Python<'_>, path: &Bound<'_, PyAny>, group_by_input_shape: bool) -> PyResult<KeyAverages> {
    use rtfprof::inputs::pytorch::Trace;
    use rtfprof::outputs::torch_table::TableOptions;
    let path = path_arg("path", Some(path))?.ok_or_else(|| PyValueError::new_err("--path: expected a path, got None"))?;
    let (rows, options) = py
        .detach(|| {
            let trace = Trace::open(&path)?;
            let rows = rtfprof::key_averages::key_averages(&trace, group_by_input_shape);
            Ok::<_, rtfprof::Error>((rows, TableOptions::for_trace(&trace)))
        })
        .map_err(to_py_err)?;
    let objects = rows
        .iter()
        .map(|r| {
            let input_shapes =
                if group_by_input_shape { shapes_list(py, &r.input_shapes)?.into_any().unbind() } else { PyString::new(py, "").into_any().unbind() };
            Py::new(
                py,
                KeyAverage {
                    key: r.key.clone(),
                    count: r.count,
                    device_type: r.device_type.as_str(),
                    is_user_annotation: r.is_user_annotation,
                    cpu_time_total: r.cpu_time_total,
                    self_cpu_time_total: r.self_cpu_time_total,
                    device_time_total: r.device_time_total,
                    self_device_time_total: r.self_device_time_total,
                    cpu_time: r.cpu_time(),
                    device_time: r.device_time(),
                    cpu_memory_usage: r.cpu_memory_usage,
                    self_cpu_memory_usage: r.self_cpu_memory_usage,
                    device_memory_usage: r.device_memory_usage,
                    self_device_memory_usage: r.self_device_memory_usage,
                    input_shapes,
                    node_id: -1,
                    is_legacy: false,
                    is_async: r.is_async,
                    is_remote: false,
                    overload_name: "",
                    stack: Vec::new(),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(KeyAverages { rows, objects, profile_memory: options.profile_memory, use_device: options.use_device })
}

#[pymodule]
mod _rtfprof {
    #[pymodule_export]
    use super::{
        _main, _table, GraphNode, KeyAverage, KeyAverages, MultiGraphNode, TensorValue, advise, capture, check, diff, hlo, jobs, kernels, key_averages, memory,
        merge, partial, profile, ranks, report, steps,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
