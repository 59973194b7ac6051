//! tfprof's text: the `Doc:` section, the legend line and node lines
//! (`QueryDoc`, `FormatLegend`, `FormatNode` in `tfprof_utils.cc`,
//! `tfprof_show.cc`).

use std::fmt::Write;

use super::format;
use super::options::{Select, Shown};
use crate::stats::{Metrics, Snapshot, Totals};
use crate::views::View;

const SCOPE_HELP: &str = "scope: The nodes in the model graph are organized by their names, which is hierarchical like filesystem.";
const CODE_HELP: &str = "code: When python trace is available, the nodes are python lines and their are organized by the python call stack.";
const OP_HELP: &str = "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes belonging to the same type are aggregated together.";

const TOTAL_TIME_HELP: &str = "total execution time: Sum of accelerator execution time and cpu execution time.";
const CPU_TIME_HELP: &str = "cpu execution time: The time from the start to the end of the operation. It's the sum of actual cpu run time plus the time that it spends waiting if part of computation is launched asynchronously.";
const ACCELERATOR_TIME_HELP: &str =
    "accelerator execution time: Time spent executing on the accelerator. This is normally measured by the actual hardware library.";

/// Warning tfprof puts before the doc when GPU kernels were not traced.
pub const MISSING_ACCELERATOR_STREAM: &str = "\n\nFound accelerator operation but misses accelerator stream stats!\n\nIt's likely a gpu tracing issue rather than tf-profiler issue.\nIf you found your operation missing accelerator time, consider to post to discuss@tensorflow.org!\n\n";

fn select_help(shown: Shown) -> String {
    match shown {
        Shown::Bytes => "requested bytes: The memory requested by the operation, accumulatively.".into(),
        Shown::Micros => format!("{TOTAL_TIME_HELP}\n{CPU_TIME_HELP}\n{ACCELERATOR_TIME_HELP}"),
        Shown::AcceleratorMicros => ACCELERATOR_TIME_HELP.into(),
        Shown::CpuMicros => CPU_TIME_HELP.into(),
        Shown::Params => "param: Number of parameters (in the Variable).".into(),
        Shown::FloatOps => "flops: Number of float operations. Note: Please read the implementation for the math behind it.".into(),
        Shown::TensorValue => "tensor_value: Not supported now.".into(),
        Shown::Device => "device: which device is placed on.".into(),
        Shown::OpTypes => "op_types: The attributes of the operation, includes the Kernel name device placed on and user-defined strings.".into(),
        Shown::Occurrence => "occurrence: The number of times it occurs".into(),
        Shown::InputShapes => "input shape: The shape of input tensors".into(),
        Shown::PeakBytes => "peak bytes: The peak amount of memory that the operation is holding at some point.".into(),
        Shown::ResidualBytes => "residual bytes: The memory not de-allocated after the operation finishes.".into(),
        Shown::OutputBytes => "output bytes: The memory that is output from the operation (not necessarily allocated by the operation)".into(),
    }
}

/// Everything printed before the legend line: `\nDoc:\n…\n\nProfile:\n`.
pub fn header(view: View, select: &Select, miss_accelerator_stream: bool) -> String {
    let mut out = String::new();
    if miss_accelerator_stream {
        out.push_str(MISSING_ACCELERATOR_STREAM);
    }
    let help = match view {
        View::Scope | View::Graph => SCOPE_HELP,
        View::Code => CODE_HELP,
        View::Op => OP_HELP,
    };
    out.push_str("\nDoc:\n");
    out.push_str(help);
    out.push('\n');
    let helps: Vec<String> = select.iter().map(select_help).collect();
    out.push_str(&helps.join("\n"));
    out.push_str("\n\nProfile:\n");
    out
}

/// Time columns: `micros` brings all three; otherwise the chosen ones.
pub fn time_columns(select: &Select) -> Vec<Shown> {
    if select.has(Shown::Micros) {
        vec![Shown::Micros, Shown::AcceleratorMicros, Shown::CpuMicros]
    } else {
        [Shown::AcceleratorMicros, Shown::CpuMicros].into_iter().filter(|&s| select.has(s)).collect()
    }
}

pub const MEMORY_COLUMNS: [Shown; 4] = [Shown::Bytes, Shown::PeakBytes, Shown::ResidualBytes, Shown::OutputBytes];

/// The legend line of the scope and graph views.
pub fn legend(view: View, select: &Select) -> String {
    let mut columns: Vec<&str> = Vec::new();
    let memory = MEMORY_COLUMNS.iter().filter(|&&s| select.has(s)).map(|&s| column_name(s));
    let times = time_columns(select).into_iter().map(column_name);
    let counts = [Shown::Params, Shown::FloatOps].into_iter().filter(|&s| select.has(s)).map(column_name);
    match view {
        View::Scope | View::Graph => {
            columns.extend(counts);
            columns.extend(memory);
            columns.extend(times);
        }
        View::Code | View::Op => {
            columns.extend(memory);
            columns.extend(times);
            columns.extend(counts);
        }
    }
    let tail = [Shown::Device, Shown::OpTypes, Shown::Occurrence, Shown::InputShapes];
    for shown in tail.into_iter().filter(|&s| select.has(s)) {
        columns.push(match (shown, view) {
            (Shown::Occurrence, View::Code | View::Op) => "op occurrence (run|defined)",
            _ => column_name(shown),
        });
    }
    format!("node name | {}\n", columns.join(" | "))
}

/// The legend name of a column in the scope and graph views.
pub fn column_name(shown: Shown) -> &'static str {
    match shown {
        Shown::Params => "# parameters",
        Shown::FloatOps => "# float_ops",
        Shown::Bytes => "requested bytes",
        Shown::PeakBytes => "peak bytes",
        Shown::ResidualBytes => "residual bytes",
        Shown::OutputBytes => "output bytes",
        Shown::Micros => "total execution time",
        Shown::AcceleratorMicros => "accelerator execution time",
        Shown::CpuMicros => "cpu execution time",
        Shown::Device => "assigned devices",
        Shown::OpTypes => "op types",
        Shown::Occurrence => "op count (run|defined)",
        Shown::InputShapes => "input shapes",
        Shown::TensorValue => "",
    }
}

/// What a scope or graph node line shows besides the numbers.
pub struct GraphNodeFacts<'a> {
    pub name: &'a str,
    pub shape: &'a [i64],
    pub device: &'a str,
    /// Op types in sorted order (only read when `op_types` is selected).
    pub op_types: Vec<&'a str>,
    pub input_shapes: &'a [(usize, Vec<i64>)],
}

/// Items joined by `", "`, appended to a line as they come.
struct Items<'a> {
    out: &'a mut String,
    first: bool,
}

impl Items<'_> {
    /// Starts the next item and returns the buffer to write it into.
    fn next(&mut self) -> &mut String {
        if !std::mem::take(&mut self.first) {
            self.out.push_str(", ");
        }
        self.out
    }

    /// `<own>/<total><suffix>`, or `--/<total><suffix>` when not accounted.
    fn pair(&mut self, accounted: bool, own: i64, total: i64, write: fn(&mut String, i64), suffix: &str) {
        let out = self.next();
        if accounted {
            write(out, own);
            out.push('/');
        } else {
            out.push_str("--/");
        }
        write(out, total);
        out.push_str(suffix);
    }
}

/// Appends one scope/graph line without indentation or newline:
/// `name (item, item, …)`.
pub fn write_graph_node_line(out: &mut String, select: &Select, facts: GraphNodeFacts<'_>, own: &Metrics, totals: &Totals, accounted: bool) {
    let t = &totals.metrics;
    out.push_str(facts.name);
    out.push_str(" (");
    let mut items = Items { out, first: true };
    if select.has(Shown::Params) {
        if !facts.shape.is_empty() {
            items.next().push_str(&format::shape(facts.shape));
        }
        items.pair(accounted, own.parameters, t.parameters, format::write_count, " params");
    }
    if select.has(Shown::FloatOps) {
        items.pair(accounted, own.float_ops, t.float_ops, format::write_count, " flops");
    }
    for shown in MEMORY_COLUMNS.into_iter().filter(|&s| select.has(s)) {
        items.pair(accounted, metric(shown, own), metric(shown, t), format::write_bytes, "");
    }
    for shown in time_columns(select) {
        items.pair(accounted, metric(shown, own), metric(shown, t), format::write_micros, "");
    }
    if select.has(Shown::Device) && !facts.device.is_empty() {
        items.next().push_str(facts.device);
    }
    if select.has(Shown::OpTypes) {
        items.next().push_str(&facts.op_types.join("|"));
    }
    if select.has(Shown::Occurrence) {
        items.pair(accounted, own.run_count, t.run_count, format::write_count, "|");
        let out = &mut *items.out;
        out.push_str(if accounted { "1/" } else { "--/" });
        format::write_count(out, totals.definition_count);
    }
    if select.has(Shown::InputShapes) {
        let out = items.next();
        for (k, (i, s)) in facts.input_shapes.iter().enumerate() {
            if k > 0 {
                out.push('|');
            }
            let _ = if s.is_empty() { write!(out, "{i}:unknown") } else { write!(out, "{i}:{}", format::shape(s)) };
        }
    }
    items.out.push(')');
}

/// Appends one code-view line without indentation or newline
/// (`TFCode::FormatNode`): memory, times, params, flops, then devices, op
/// types and the two N/A columns.
pub fn write_code_node_line(out: &mut String, select: &Select, name: &str, snapshot: &Snapshot, totals: &Metrics, accounted: bool) {
    let own = &snapshot.own;
    out.push_str(name);
    out.push_str(" (");
    let mut items = Items { out, first: true };
    for shown in MEMORY_COLUMNS.into_iter().filter(|&s| select.has(s)) {
        items.pair(accounted, metric(shown, own), metric(shown, totals), format::write_bytes, "");
    }
    for shown in time_columns(select) {
        items.pair(accounted, metric(shown, own), metric(shown, totals), format::write_micros, "");
    }
    if select.has(Shown::Params) {
        items.pair(accounted, own.parameters, totals.parameters, format::write_count, " params");
    }
    if select.has(Shown::FloatOps) {
        items.pair(accounted, own.float_ops, totals.float_ops, format::write_count, " flops");
    }
    if select.has(Shown::Device) && !snapshot.devices.is_empty() {
        items.next().push_str(&join(&snapshot.devices));
    }
    if select.has(Shown::OpTypes) {
        items.next().push_str(&join(&snapshot.op_types));
    }
    if select.has(Shown::Occurrence) {
        items.next().push_str("occurrence N/A in code view");
    }
    if select.has(Shown::InputShapes) {
        items.next().push_str("input_shapes N/A in code view");
    }
    items.out.push(')');
}

/// A sorted set joined with `|`, as tfprof prints devices and op types.
pub fn join(set: &std::collections::BTreeSet<&str>) -> String {
    set.iter().copied().collect::<Vec<_>>().join("|")
}

/// The value of a numeric column in `m`.
pub fn metric(shown: Shown, m: &Metrics) -> i64 {
    match shown {
        Shown::Bytes => m.requested_bytes,
        Shown::PeakBytes => m.peak_bytes,
        Shown::ResidualBytes => m.residual_bytes,
        Shown::OutputBytes => m.output_bytes,
        Shown::Micros => m.exec_micros,
        Shown::AcceleratorMicros => m.accelerator_micros,
        Shown::CpuMicros => m.cpu_micros,
        Shown::Params => m.parameters,
        Shown::FloatOps => m.float_ops,
        _ => unreachable!("{shown} is not a numeric column"),
    }
}
