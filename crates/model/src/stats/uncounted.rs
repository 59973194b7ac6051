//! Why a node's float ops stay 0 when estimates are on: the reason
//! [`Stats::flops_or_why`] gives (the computation's own), said in terms of
//! the graph (which input, its producer, the shape known), so `advise`
//! can list what was not counted instead of a silent zero.

use super::flops::FlopsEstimate;
use super::{Node, NodeId, Stats};

/// A tensor a FLOPs formula reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tensor {
    /// The node's input `i` (as the GraphDef lists them).
    Input(usize),
    /// The node's first output.
    Output,
}

/// Why a node gets no registered float ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uncounted {
    /// TF's registry has no formula for the op type (nor rtfprof's Einsum).
    NoFormula,
    /// A shape the formula reads is not fully known: its rank or a dim is
    /// unknown in the graph and the run metadata.
    UnknownShape(Tensor),
    /// The shape has fewer dims than the formula reads.
    Rank(Tensor),
    /// TF's formula for the op takes NHWC only (`data_format` is another).
    NotNhwc,
    /// An attribute the formula reads is missing or malformed.
    Attr(&'static str),
    /// The formula gives 0 (an empty tensor), which TF's logger leaves out.
    Zero,
    /// The value does not fit an int64.
    Overflow,
    /// The op log lists the node with 0 float ops, and TF's
    /// `merge_default_with_oplog` keeps that unless the estimate (this one)
    /// is positive.
    KeptLogged(i64),
}

impl Stats {
    /// The nodes whose float ops estimates left at 0, and why, in node
    /// order; empty when estimates are off (the op log's float ops are then
    /// all there is, as in tfprof).
    pub fn uncounted_flops(&self) -> Vec<(NodeId, Uncounted)> {
        let how = self.flops_estimate;
        if !how.is_on() {
            return Vec::new();
        }
        let tf = how == FlopsEstimate::TfDefaultOpLog;
        (0..self.nodes.len())
            .filter(|&id| self.nodes[id].float_ops == 0)
            .map(|id| match self.flops_or_why(&self.nodes[id], tf) {
                Err(why) => (id, why),
                // (Only TF's merge leaves a node with an estimate at 0.)
                Ok(flops) => (id, Uncounted::KeptLogged(flops)),
            })
            .collect()
    }

    /// `why` said for `node`, e.g. "input 0 (pool1/MaxPool:0) has shape
    /// [?,14,14,32], not fully known".
    pub fn describe_uncounted(&self, node: &Node, why: Uncounted) -> String {
        match why {
            Uncounted::NoFormula => "no formula in TF's flops registry".to_owned(),
            Uncounted::UnknownShape(tensor) => format!("{}, not fully known", self.tensor_and_shape(node, tensor)),
            Uncounted::Rank(tensor) => format!("{}, fewer dims than its formula reads", self.tensor_and_shape(node, tensor)),
            Uncounted::NotNhwc => {
                let format = match node.attrs.get("data_format").and_then(|a| a.value.as_ref()) {
                    Some(crate::proto::tensorflow::attr_value::Value::S(s)) => String::from_utf8_lossy(s).into_owned(),
                    _ => "not given".to_owned(),
                };
                format!("TF's formula takes NHWC only (data_format {format})")
            }
            Uncounted::Attr(name) => format!("attr {name} missing or malformed"),
            Uncounted::Zero => "its formula gives 0 (an empty tensor)".to_owned(),
            Uncounted::Overflow => "its float ops do not fit an int64".to_owned(),
            Uncounted::KeptLogged(flops) => format!("the op log lists it with 0, which TF keeps over an estimate of {flops}"),
        }
    }

    /// "input 1 (conv/w/read:0) has shape [?,3]" / "output 0 has unknown rank".
    fn tensor_and_shape(&self, node: &Node, tensor: Tensor) -> String {
        let (what, shape) = match tensor {
            Tensor::Output => ("output 0".to_owned(), node.static_output_shapes.first()),
            Tensor::Input(i) => match node.inputs.get(i) {
                None => return format!("input {i} is missing"),
                Some(input) => {
                    let slot = usize::try_from(input.src_output).unwrap_or(usize::MAX);
                    let shape = self.node(&input.name).and_then(|p| p.static_output_shapes.get(slot));
                    (format!("input {i} ({}:{})", input.name, input.src_output), shape)
                }
            },
        };
        match shape {
            None => format!("{what} has no shape (its op has no shape function here)"),
            Some(None) => format!("{what} has unknown rank"),
            Some(Some(dims)) => {
                let dims: Vec<String> = dims.iter().map(|&d| if d < 0 { "?".to_owned() } else { d.to_string() }).collect();
                format!("{what} has shape [{}]", dims.join(","))
            }
        }
    }
}
