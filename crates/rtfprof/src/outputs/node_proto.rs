//! A displayed view as the message `tf.profiler.profile` returns: a
//! `GraphNodeProto` tree for the scope and graph views, a
//! `MultiGraphNodeProto` for the op and code views (`tfprof_output.proto`),
//! with the values tfprof's engine puts in them, so that code reading
//! tf.profiler's result can read rtfprof's.
//!
//! As in tfprof: every node carries its own values and its totals; graph
//! nodes their canonical device and input shapes (whatever `select` says);
//! op and code rows their accounted graph nodes, each with totals equal to
//! its own values; the op view's rows form a chain (the root's child is the
//! first row, whose child is the second, …), as `TFOp::ShowInternal` links
//! them; `shapes` is never filled.

use crate::inputs::checkpoint::TensorValues;
use crate::proto::tensorflow::tfprof::{GraphNodeProto, MultiGraphNodeProto, TfProfTensorProto};
use crate::proto::tensorflow::{TensorShapeProto, tensor_shape_proto};
use crate::show::options::Shown;
use crate::show::{Displayed, Options};
use crate::stats::{Metrics, NodeId, Stats};
use crate::views::View;

/// The root message of one view.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewProto {
    /// Scope and graph views.
    Graph(GraphNodeProto),
    /// Op and code views.
    Multi(MultiGraphNodeProto),
}

/// Builds the message tfprof returns for `root`, the tree
/// [`crate::show::run`] displayed for `view` with `opts`.
pub fn build(stats: &Stats, view: View, opts: &Options, root: &Displayed) -> ViewProto {
    match view {
        View::Scope | View::Graph => ViewProto::Graph(tree_node(stats, opts, root)),
        View::Code => ViewProto::Multi(code_node(stats, opts.step, root)),
        View::Op => {
            // Linked from the last row up, so each row owns the rest.
            let mut rest: Option<MultiGraphNodeProto> = None;
            for row in root.children.iter().rev() {
                let mut node = multi_node(stats, opts.step, row);
                node.children.extend(rest.take());
                rest = Some(node);
            }
            let mut node = multi_node(stats, opts.step, root);
            node.children.extend(rest);
            ViewProto::Multi(node)
        }
    }
}

/// A scope or graph view node and its displayed children.
fn tree_node(stats: &Stats, opts: &Options, shown: &Displayed) -> GraphNodeProto {
    let mut node = graph_node(stats, shown.graph_nodes.first().copied(), &shown.name, &shown.own, &shown.totals, shown.definitions);
    if opts.select.has(Shown::TensorValue) {
        node.tensor_value = tensor_value(stats, &shown.name);
    }
    node.children = shown.children.iter().map(|c| tree_node(stats, opts, c)).collect();
    node
}

/// A code view node and its displayed children.
fn code_node(stats: &Stats, step: i64, shown: &Displayed) -> MultiGraphNodeProto {
    let mut node = multi_node(stats, step, shown);
    node.children = shown.children.iter().map(|c| code_node(stats, step, c)).collect();
    node
}

/// An op or code row without children, with its graph nodes.
fn multi_node(stats: &Stats, step: i64, shown: &Displayed) -> MultiGraphNodeProto {
    let (own, total) = (&shown.own, &shown.totals);
    MultiGraphNodeProto {
        name: shown.name.clone(),
        exec_micros: own.exec_micros,
        accelerator_exec_micros: own.accelerator_micros,
        cpu_exec_micros: own.cpu_micros,
        requested_bytes: own.requested_bytes,
        peak_bytes: own.peak_bytes,
        residual_bytes: own.residual_bytes,
        output_bytes: own.output_bytes,
        parameters: own.parameters,
        float_ops: own.float_ops,
        total_exec_micros: total.exec_micros,
        total_accelerator_exec_micros: total.accelerator_micros,
        total_cpu_exec_micros: total.cpu_micros,
        total_requested_bytes: total.requested_bytes,
        total_peak_bytes: total.peak_bytes,
        total_residual_bytes: total.residual_bytes,
        total_output_bytes: total.output_bytes,
        total_parameters: total.parameters,
        total_float_ops: total.float_ops,
        graph_nodes: shown
            .graph_nodes
            .iter()
            .map(|&id| {
                let own = Metrics::of(&stats.nodes[id], step);
                graph_node(stats, Some(id), &stats.nodes[id].name, &own, &own, 1)
            })
            .collect(),
        children: Vec::new(),
    }
}

/// A `GraphNodeProto` without children: `id`'s device and input shapes (none
/// for synthetic scope nodes and the root), the given values.
fn graph_node(stats: &Stats, id: Option<NodeId>, name: &str, own: &Metrics, total: &Metrics, definitions: i64) -> GraphNodeProto {
    let graph_node = id.map(|id| &stats.nodes[id]);
    GraphNodeProto {
        name: name.to_owned(),
        run_count: own.run_count,
        exec_micros: own.exec_micros,
        accelerator_exec_micros: own.accelerator_micros,
        cpu_exec_micros: own.cpu_micros,
        requested_bytes: own.requested_bytes,
        peak_bytes: own.peak_bytes,
        residual_bytes: own.residual_bytes,
        output_bytes: own.output_bytes,
        parameters: own.parameters,
        float_ops: own.float_ops,
        devices: graph_node.map(|g| g.canonical_device).filter(|d| !d.is_empty()).map(str::to_owned).into_iter().collect(),
        total_definition_count: definitions,
        total_run_count: total.run_count,
        total_exec_micros: total.exec_micros,
        total_accelerator_exec_micros: total.accelerator_micros,
        total_cpu_exec_micros: total.cpu_micros,
        total_requested_bytes: total.requested_bytes,
        total_peak_bytes: total.peak_bytes,
        total_residual_bytes: total.residual_bytes,
        total_output_bytes: total.output_bytes,
        total_parameters: total.parameters,
        total_float_ops: total.float_ops,
        input_shapes: graph_node.map(|g| stats.input_shapes(g).into_iter().map(|(i, dims)| (i as i32, shape_proto(&dims))).collect()).unwrap_or_default(),
        ..Default::default()
    }
}

/// tfprof's `VecToShapeProto`: no dimensions means an unknown rank.
fn shape_proto(dims: &[i64]) -> TensorShapeProto {
    TensorShapeProto { dim: dims.iter().map(|&size| tensor_shape_proto::Dim { size, name: String::new() }).collect(), unknown_rank: dims.is_empty() }
}

/// The checkpoint's value of variable `name`, flattened in row-major order,
/// for the dtypes tfprof shows (float and double as doubles, int32 and int64
/// as int64, strings); `None` otherwise. The values are the checkpoint's
/// exactly, not rounded as tfprof's text shows them.
fn tensor_value(stats: &Stats, name: &str) -> Option<TfProfTensorProto> {
    use crate::proto::tensorflow::DataType;
    let checkpoint = stats.checkpoint.as_ref().filter(|c| c.contains(name))?;
    let tensor = checkpoint.tensor(name).ok()?;
    let mut value = TfProfTensorProto { dtype: tensor.dtype as i32, ..Default::default() };
    match (tensor.dtype, tensor.values) {
        (DataType::DtFloat | DataType::DtDouble, TensorValues::Float(v)) => value.value_double = v,
        (DataType::DtInt32 | DataType::DtInt64, TensorValues::Int(v)) => value.value_int64 = v,
        (DataType::DtString, TensorValues::Str(v)) => value.value_str = v.into_iter().map(|s| String::from_utf8_lossy(&s).into_owned()).collect(),
        _ => return None,
    }
    Some(value)
}
