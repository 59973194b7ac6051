//! UncountedFlopsChecker (rtfprof's own, with `--estimate_flops` or
//! `--default_op_log` only, so that tfprof's advise keeps tfprof's output):
//! what the estimated float ops leave out, instead of a silent zero.
//!
//! - every node of an op type TF's flops registry has a formula for whose
//!   float ops stay 0, one line each, with the reason the estimate gave
//!   ([`Stats::flops_or_why`]: which input's shape is not fully known and
//!   what is known of it, a data format TF's formula does not take, …);
//! - the op types without a formula that compute on floating-point data,
//!   one line each with their count: their work is in no float ops count,
//!   TF's or rtfprof's. Ops that only move, select or hold data (Identity,
//!   Reshape, ConcatV2, Gather, control flow, …) and ops on other types are
//!   left out: no one expects float ops of them.

use std::collections::BTreeMap;

use crate::proto::tensorflow::DataType;
use crate::proto::tensorflow::attr_value::Value;
use crate::stats::Stats;
use crate::stats::uncounted::Uncounted;

/// Float-typed ops that move, select or hold data: no arithmetic to count.
const NO_ARITHMETIC: &[&str] = &[
    "Assign",
    "Bitcast",
    "BroadcastTo",
    "Cast",
    "CheckNumerics",
    "Concat",
    "ConcatV2",
    "ConjugateTranspose",
    "DynamicStitch",
    "Enter",
    "Exit",
    "ExpandDims",
    "Fill",
    "Gather",
    "GatherNd",
    "GatherV2",
    "Identity",
    "IdentityN",
    "Merge",
    "MirrorPad",
    "NextIteration",
    "OneHot",
    "OnesLike",
    "Pack",
    "Pad",
    "PadV2",
    "ParallelDynamicStitch",
    "PreventGradient",
    "Print",
    "RefEnter",
    "RefExit",
    "RefIdentity",
    "RefMerge",
    "RefNextIteration",
    "RefSwitch",
    "Reshape",
    "Reverse",
    "ReverseV2",
    "ScatterNd",
    "Select",
    "SelectV2",
    "Shape",
    "ShapeN",
    "Size",
    "Slice",
    "Snapshot",
    "Split",
    "SplitV",
    "Squeeze",
    "StopGradient",
    "StridedSlice",
    "StridedSliceGrad",
    "Switch",
    "Tile",
    "Transpose",
    "Unpack",
    "ZerosLike",
];

/// TF's floating-point `DataType`s.
const FLOATING: [i32; 4] = [DataType::DtHalf as i32, DataType::DtFloat as i32, DataType::DtDouble as i32, DataType::DtBfloat16 as i32];

pub fn check(stats: &Stats) -> Vec<String> {
    let mut reports = Vec::new();
    // op type → (count, first node's name)
    let mut without_formula: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for (id, why) in stats.uncounted_flops() {
        let node = &stats.nodes[id];
        if why != Uncounted::NoFormula {
            reports.push(format!("{} ({}): float ops not counted: {}", node.name, node.op, stats.describe_uncounted(node, why)));
        } else if computes_on_floats(node) {
            without_formula.entry(node.op).or_insert((0, &node.name)).0 += 1;
        }
    }
    let mut op_types: Vec<_> = without_formula.into_iter().collect();
    op_types.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    for (op, (count, first)) in op_types {
        let nodes = if count == 1 { "node" } else { "nodes" };
        reports.push(format!("{op} ({count} {nodes}, e.g. {first}): float ops not counted: no formula in TF's flops registry"));
    }
    reports
}

/// An op that does arithmetic on floating-point data (its `T` attr).
fn computes_on_floats(node: &crate::stats::Node) -> bool {
    let floating = matches!(node.attrs.get("T").and_then(|a| a.value.as_ref()), Some(Value::Type(t)) if FLOATING.contains(t));
    floating && !NO_ARITHMETIC.contains(&node.op)
}
