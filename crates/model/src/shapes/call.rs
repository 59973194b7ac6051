//! Function calls, inferred through the called function's body.
//!
//! Why: a `tf.Graph`'s `ShapeRefiner` is given the graph's function library
//! (`TF_Graph`'s constructor in TF's C API), so when a GraphDef is imported
//! a `PartitionedCall`, a `StatefulPartitionedCall` or a node whose op is
//! a library function gets the shapes its body's `_Retval`s have, with the
//! call's input shapes (and values, and resource shapes) at its `_Arg`s.
//! The op's own registered shape function only says "unknown".

use std::collections::HashMap;

use super::{Ctx, NodeRecord, Out, run};
use crate::proto::tensorflow::attr_value::Value;
use crate::stats::records::FunctionRecord;

/// Calls nested deeper than this (or recursive ones) stay unknown.
const MAX_DEPTH: usize = 8;

/// A graph's functions by name.
pub(crate) struct Library<'a> {
    functions: HashMap<&'a str, &'a FunctionRecord>,
}

impl<'a> Library<'a> {
    pub fn new(functions: &'a [FunctionRecord]) -> Library<'a> {
        Library { functions: functions.iter().map(|f| (f.name.as_str(), f)).collect() }
    }

    /// The outputs of the node `c` describes if it calls a function: `None`
    /// for any other node. A call of a function the library lacks has
    /// `Tout` unknown outputs (the op's `UnknownShape`).
    pub fn call(&self, c: &Ctx, depth: usize) -> Option<Vec<Out>> {
        let name = match c.op {
            "PartitionedCall" | "StatefulPartitionedCall" => match c.attrs.get("f")?.value.as_ref()? {
                Value::Func(f) => f.name.as_str(),
                _ => return None,
            },
            op if self.functions.contains_key(op) => op,
            _ => return None,
        };
        let unknown = |n: usize| Some(vec![Out::default(); n]);
        let Some(function) = self.functions.get(name) else { return unknown(c.types("Tout")?.len()) };
        if depth >= MAX_DEPTH {
            return unknown(function.rets.len());
        }
        Some(self.body(function, c, depth + 1))
    }

    /// Infers `function`'s body with the call's inputs at its arguments;
    /// its returns' shapes and resource shapes.
    fn body(&self, function: &FunctionRecord, c: &Ctx, depth: usize) -> Vec<Out> {
        let args: Vec<NodeRecord> = function.args.iter().map(|a| NodeRecord { name: a.clone(), op: "_Arg".into(), ..NodeRecord::default() }).collect();
        let nodes: Vec<&NodeRecord> = args.iter().chain(&function.nodes).collect();
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
        for (i, node) in nodes.iter().enumerate() {
            by_name.entry(node.name.as_str()).or_insert(i);
        }
        let resolve = |input: &str| -> Option<(usize, usize)> {
            let mut parts = input.split(':');
            let producer = *by_name.get(parts.next()?)?;
            match (parts.next(), parts.next().map(str::parse::<usize>), parts.next()) {
                (None, None, None) => Some((producer, 0)),
                (Some(output), Some(Ok(index)), None) => Some((producer, self.slot(&nodes[producer].op, output, index)?)),
                _ => None,
            }
        };
        let inputs: Vec<Vec<Option<(usize, usize)>>> =
            nodes.iter().map(|node| node.inputs.iter().filter(|i| !i.starts_with('^')).map(|i| resolve(i)).collect()).collect();
        // An argument: the caller's shape, value and resource shape.
        let seeds: Vec<Option<Out>> = (0..args.len())
            .map(|i| {
                let given = c.input(i);
                Some(Out { shape: given.shape.clone(), value: given.value.clone(), handle: given.handle.clone(), ..Out::default() })
            })
            .collect();
        let results = run(&nodes, &inputs, &seeds, self, depth);
        function
            .rets
            .iter()
            .map(|(_, source)| {
                let found = resolve(source).and_then(|(p, slot)| results[p].as_ref()?.get(slot));
                found.map_or_else(Out::default, |out| Out { shape: out.shape.clone(), handle: out.handle.clone(), ..Out::default() })
            })
            .collect()
    }

    /// The output index of `output:index` of a node of `op`: the index for
    /// an op with one output arg (a list or not), else the arg's position
    /// among the op's (each one tensor), a library function's by its
    /// signature.
    fn slot(&self, op: &str, output: &str, index: usize) -> Option<usize> {
        if let Some(function) = self.functions.get(op) {
            return function.rets.iter().position(|(name, _)| name == output).filter(|_| index == 0);
        }
        match OUTPUT_ARGS.iter().find(|(o, _)| *o == op) {
            Some((_, names)) => names.iter().position(|n| *n == output).filter(|_| index == 0),
            None => Some(index),
        }
    }
}

/// The op types shape inference knows that have more than one output arg,
/// with their output args in order (their `REGISTER_OP`s).
const OUTPUT_ARGS: &[(&str, &[&str])] = &[
    ("FusedBatchNorm", &["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"]),
    ("FusedBatchNormV2", &["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"]),
    ("FusedBatchNormV3", &["y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"]),
    ("FusedBatchNormGrad", &["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"]),
    ("FusedBatchNormGradV2", &["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"]),
    ("FusedBatchNormGradV3", &["x_backprop", "scale_backprop", "offset_backprop", "reserve_space_4", "reserve_space_5"]),
    ("Unique", &["y", "idx"]),
    ("TopK", &["values", "indices"]),
    ("TopKV2", &["values", "indices"]),
    ("SparseSoftmaxCrossEntropyWithLogits", &["loss", "backprop"]),
    ("SoftmaxCrossEntropyWithLogits", &["loss", "backprop"]),
    ("BroadcastGradientArgs", &["r0", "r1"]),
    ("Switch", &["output_false", "output_true"]),
    ("RefSwitch", &["output_false", "output_true"]),
    ("Merge", &["output", "value_index"]),
    ("RefMerge", &["output", "value_index"]),
    ("TensorArrayV3", &["handle", "flow"]),
    ("TensorArrayGradV3", &["grad_handle", "flow_out"]),
    ("TensorArrayGradWithShape", &["grad_handle", "flow_out"]),
    ("TensorArrayConcatV3", &["value", "lengths"]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::attr_value::ListValue;
    use crate::proto::tensorflow::{NameAttrList, TensorProto};
    use crate::shapes::infer_with;
    use crate::shapes::tests::{node, shape_proto as shape};

    fn call(name: &str, function: &str, inputs: &[&str], outputs: usize) -> NodeRecord {
        node(
            name,
            "PartitionedCall",
            inputs,
            vec![
                ("f", Value::Func(Box::new(NameAttrList { name: function.into(), attr: Default::default() }))),
                ("Tout", Value::List(Box::new(ListValue { r#type: vec![1; outputs], ..Default::default() }))),
            ],
        )
    }

    #[test]
    fn a_call_has_its_bodys_shapes() {
        let weights = TensorProto { dtype: 1, tensor_shape: Some(shape(&[4, 3])), ..Default::default() };
        let dense = FunctionRecord {
            name: "dense".into(),
            args: vec!["x".into()],
            nodes: vec![
                node("w", "Const", &[], vec![("value", Value::Tensor(Box::new(weights)))]),
                node("mm", "MatMul", &["x", "w:output:0"], vec![]),
                node("split", "Unique", &["x"], vec![]),
            ],
            rets: vec![("y".into(), "mm:product:0".into()), ("idx".into(), "split:idx:0".into()), ("lost".into(), "nowhere:output:0".into())],
        };
        // A function that calls itself, by its name as an op.
        let endless = FunctionRecord {
            name: "endless".into(),
            args: vec!["x".into()],
            nodes: vec![node("again", "endless", &["x"], vec![])],
            rets: vec![("y".into(), "again:y:0".into())],
        };
        let nodes = vec![
            node("p", "Placeholder", &[], vec![("shape", Value::Shape(shape(&[-1, 4])))]),
            call("call", "dense", &["p"], 3),
            node("after", "Relu", &["call"], vec![]),
            call("missing", "absent", &["p"], 2),
            call("loop", "endless", &["p"], 1),
            node("direct", "dense", &["p"], vec![]),
        ];
        let shapes = infer_with(&nodes, &[dense, endless]);
        assert_eq!(shapes[1], Some(vec![Some(vec![-1, 3]), Some(vec![-1]), None]));
        assert_eq!(shapes[2], Some(vec![Some(vec![-1, 3])]));
        assert_eq!(shapes[3], Some(vec![None, None]), "a function the library lacks: Tout unknown outputs");
        assert_eq!(shapes[4], Some(vec![None]), "recursion ends unknown");
        assert_eq!(shapes[5], Some(vec![Some(vec![-1, 3]), Some(vec![-1]), None]), "a library function as an op");
    }
}
