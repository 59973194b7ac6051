//! Static shape inference over a GraphDef, as TensorFlow's C++ shape
//! functions run when a GraphDef is imported into a `tf.Graph`.
//!
//! Why: TF's Python `tf.compat.v1.profiler.profile(graph)` counts float ops
//! from the shapes its graph knows, and a `tf.Graph` knows the shapes every
//! op's shape function infers on import, not only the `_output_shapes` a
//! GraphDef may carry. rtfprof reads GraphDefs, so it infers the same
//! shapes to count the same float ops (`--default_op_log`,
//! `--estimate_flops`, `rtfprof.profile`).
//!
//! What TF does, and so this module (checked against TF by
//! `tools/gen_shapes.py` and `tests/integration/shapes.rs`):
//! - nodes are visited in topological order; a `Merge` fed by a
//!   `NextIteration` (a v1 while loop) sees that back edge as unknown, so
//!   loop variables are mostly of unknown shape, as in TF;
//! - sources: `Placeholder` `shape`, `Const` values, variables' `shape`;
//! - shapes that depend on a tensor's *value* (Reshape's target, Fill's
//!   dims, reduction axes, …) use it when TF's constant evaluation would
//!   find it: a `Const`, `Shape`/`Size`/`Rank` of a known shape, a
//!   `StridedSlice` of a `Shape` picking a known dim, and integer ops over
//!   such values (`fold.rs`); a partial shape vector (`Pack` of scalars,
//!   `ConcatV2`, `Shape` of a partial shape) gives a partial shape;
//! - functional control flow (`While`, `If`, `Case`) takes its
//!   `output_shapes` attr, else TF's fallback; a function call
//!   (`PartitionedCall`, `StatefulPartitionedCall`, a library function as
//!   an op) is inferred through the function's body, as the `ShapeRefiner`
//!   of a `tf.Graph` does (`call.rs`);
//! - a node's `_output_shapes` are merged into what is inferred (TF's
//!   importer does the same, then drops the attribute);
//! - an op type without a shape function here gives unknown shapes, never
//!   a guess. Run-time shapes are not propagated: TF's profiler only fills
//!   single tensors with them (`Stats::estimate_missing_flops`).

mod call;
pub mod dims;
mod fold;
mod ops;
pub mod tensor;

use std::collections::{BTreeMap, HashMap};

use crate::proto::tensorflow::AttrValue;
use crate::proto::tensorflow::attr_value::Value;
use crate::stats::records::{FunctionRecord, NodeRecord};
pub use dims::Shape;

/// One output as inference knows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Out {
    pub shape: Shape,
    /// An integer tensor's values, when TF's constant evaluation finds them.
    pub value: Option<Vec<i64>>,
    /// What TF's `ConstantPartialShape` reads from this tensor used as a
    /// shape, where its producer (Shape, Pack, ConcatV2, StridedSlice, Cast)
    /// says more than its value.
    pub as_shape: Option<Shape>,
    /// A resource handle's shape data (the variable's shape).
    pub handle: Option<Shape>,
    /// Produced by `Shape`/`ShapeN`: the shape it holds (for a
    /// `StridedSlice` that picks one dim).
    pub shape_of: Option<Shape>,
}

impl Out {
    pub fn of(shape: Shape) -> Out {
        Out { shape, ..Out::default() }
    }
}

/// One node being inferred: its attributes and its data inputs' outputs.
pub(crate) struct Ctx<'a> {
    pub op: &'a str,
    pub attrs: &'a BTreeMap<String, AttrValue>,
    pub inputs: Vec<&'a Out>,
}

static UNKNOWN: Out = Out { shape: None, value: None, as_shape: None, handle: None, shape_of: None };

impl<'a> Ctx<'a> {
    pub fn n(&self) -> usize {
        self.inputs.len()
    }
    pub fn input(&self, i: usize) -> &'a Out {
        self.inputs.get(i).copied().unwrap_or(&UNKNOWN)
    }
    pub fn shape(&self, i: usize) -> &'a Shape {
        &self.input(i).shape
    }
    pub fn value(&self, i: usize) -> Option<&'a [i64]> {
        self.input(i).value.as_deref()
    }
    /// A scalar or one-element value.
    pub fn scalar(&self, i: usize) -> Option<i64> {
        match self.value(i)? {
            [v] => Some(*v),
            _ => None,
        }
    }
    fn attr(&self, name: &str) -> Option<&'a Value> {
        self.attrs.get(name).and_then(|a| a.value.as_ref())
    }
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.attr(name)? {
            Value::I(i) => Some(*i),
            _ => None,
        }
    }
    pub fn ints(&self, name: &str) -> Option<&'a [i64]> {
        match self.attr(name)? {
            Value::List(list) => Some(&list.i),
            _ => None,
        }
    }
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.attr(name), Some(Value::B(true)))
    }
    pub fn string(&self, name: &str) -> Option<&'a [u8]> {
        match self.attr(name)? {
            Value::S(s) => Some(s),
            _ => None,
        }
    }
    /// A `list(type)` attribute.
    pub fn types(&self, name: &str) -> Option<&'a [i32]> {
        match self.attr(name)? {
            Value::List(list) => Some(&list.r#type),
            _ => None,
        }
    }
    pub fn dtype(&self, name: &str) -> Option<i32> {
        match self.attr(name)? {
            Value::Type(t) => Some(*t),
            _ => None,
        }
    }
    pub fn attr_shape(&self, name: &str) -> Option<Shape> {
        match self.attr(name)? {
            Value::Shape(s) => Some(tensor::from_proto(s)),
            _ => None,
        }
    }
    pub fn tensor(&self, name: &str) -> Option<&'a crate::proto::tensorflow::TensorProto> {
        match self.attr(name)? {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }
    /// `data_format` starts with "NC" (channels first).
    pub fn channels_first(&self) -> bool {
        self.string("data_format").is_some_and(|f| f.starts_with(b"NC"))
    }
    /// TF's `MakeShapeFromShapeTensor(i)`: input `i` read as a shape.
    pub fn shape_input(&self, i: usize) -> Shape {
        fold::as_shape(self.input(i))
    }
}

/// The inferred output shapes of each of `nodes` (a GraphDef's, in its
/// order): `None` for a node whose op has no shape function here (and no
/// `_output_shapes`), or that a cycle or a missing input keeps from being
/// visited.
pub fn infer(nodes: &[NodeRecord]) -> Vec<Option<Vec<Shape>>> {
    infer_with(nodes, &[])
}

/// [`infer`] with the GraphDef's function library: a function call gets
/// the shapes its body returns (`call.rs`), as a `tf.Graph` infers them.
pub fn infer_with(nodes: &[NodeRecord], functions: &[FunctionRecord]) -> Vec<Option<Vec<Shape>>> {
    let library = call::Library::new(functions);
    let refs: Vec<&NodeRecord> = nodes.iter().collect();
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        by_name.entry(node.name.as_str()).or_insert(i);
    }
    // Data inputs: (producer, slot); None for a producer the graph lacks.
    let inputs: Vec<Vec<Option<(usize, usize)>>> = nodes
        .iter()
        .map(|node| {
            node.inputs
                .iter()
                .filter(|i| !i.starts_with('^'))
                .map(|i| {
                    let (name, slot) = match i.rsplit_once(':') {
                        Some((name, slot)) if slot.bytes().all(|b| b.is_ascii_digit()) => (name, slot.parse().ok()?),
                        _ => (i.as_str(), 0),
                    };
                    by_name.get(name).map(|&p| (p, slot))
                })
                .collect()
        })
        .collect();
    let results = run(&refs, &inputs, &[], &library, 0);
    results.into_iter().map(|outs| outs.map(|outs| outs.into_iter().map(|o| o.shape).collect())).collect()
}

/// Infers `nodes` in topological order over `inputs` (each node's data
/// inputs as (producer, slot)); a node with a `seeds` entry (a function's
/// argument) has that one output. `depth` counts the calls this body is in.
fn run(nodes: &[&NodeRecord], inputs: &[Vec<Option<(usize, usize)>>], seeds: &[Option<Out>], library: &call::Library, depth: usize) -> Vec<Option<Vec<Out>>> {
    let order = order::topological(nodes, inputs);
    let mut results: Vec<Option<Vec<Out>>> = vec![None; nodes.len()];
    let mut done = vec![false; nodes.len()];
    for &i in &order {
        let node = nodes[i];
        if let Some(Some(seed)) = seeds.get(i) {
            results[i] = Some(vec![seed.clone()]);
            done[i] = true;
            continue;
        }
        let ins: Vec<&Out> = inputs[i]
            .iter()
            .map(|input| match input {
                Some((p, slot)) if done[*p] => results[*p].as_ref().and_then(|outs| outs.get(*slot)).unwrap_or(&UNKNOWN),
                _ => &UNKNOWN,
            })
            .collect();
        let ctx = Ctx { op: &node.op, attrs: &node.attrs, inputs: ins };
        let mut outs = ops::infer(&ctx).or_else(|| library.call(&ctx, depth));
        if let Some(given) = &node.output_shapes {
            let given: Vec<Shape> = given.iter().map(tensor::from_proto).collect();
            outs = Some(match outs {
                // TF merges them into what it infers (and rejects a graph
                // where they conflict: then the graph's own word is kept).
                Some(mut outs) if outs.len() <= given.len() => {
                    for (out, g) in outs.iter_mut().zip(&given) {
                        out.shape = dims::merge(&out.shape, g).unwrap_or_else(|| g.clone());
                    }
                    outs
                }
                _ => given.into_iter().map(Out::of).collect(),
            });
        }
        results[i] = outs;
        done[i] = true;
    }
    results
}

mod order {
    use crate::stats::records::NodeRecord;

    /// Kahn's order over data edges, where a `Merge` does not wait for a
    /// `NextIteration` (TF's importer: such an edge closes a while loop).
    /// Nodes on other cycles are left out.
    pub fn topological(nodes: &[&NodeRecord], inputs: &[Vec<Option<(usize, usize)>>]) -> Vec<usize> {
        let back_edge = |consumer: usize, producer: usize| nodes[consumer].op == "Merge" && nodes[producer].op == "NextIteration";
        let mut pending = vec![0usize; nodes.len()];
        let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
        for (c, ins) in inputs.iter().enumerate() {
            for &(p, _) in ins.iter().flatten() {
                if !back_edge(c, p) {
                    pending[c] += 1;
                    consumers[p].push(c);
                }
            }
        }
        let mut ready: std::collections::VecDeque<usize> = (0..nodes.len()).filter(|&i| pending[i] == 0).collect();
        let mut order = Vec::with_capacity(nodes.len());
        while let Some(p) = ready.pop_front() {
            order.push(p);
            for &c in &consumers[p] {
                pending[c] -= 1;
                if pending[c] == 0 {
                    ready.push_back(c);
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::attr_value::ListValue;
    use crate::proto::tensorflow::tensor_shape_proto::Dim;
    use crate::proto::tensorflow::{TensorProto, TensorShapeProto};
    use crate::test_random::XorShift;

    fn attr(value: Value) -> AttrValue {
        AttrValue { value: Some(value) }
    }

    /// (Also the function calls' tests'.)
    pub(super) fn shape_proto(dims: &[i64]) -> TensorShapeProto {
        TensorShapeProto { dim: dims.iter().map(|&size| Dim { size, name: String::new() }).collect(), unknown_rank: false }
    }

    pub(super) fn node(name: &str, op: &str, inputs: &[&str], attrs: Vec<(&str, Value)>) -> NodeRecord {
        NodeRecord {
            name: name.into(),
            op: op.into(),
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            attrs: attrs.into_iter().map(|(k, v)| (k.to_owned(), attr(v))).collect(),
            ..Default::default()
        }
    }

    fn int_const(name: &str, values: &[i64]) -> NodeRecord {
        let tensor =
            TensorProto { dtype: tensor::INT64, tensor_shape: Some(shape_proto(&[values.len() as i64])), int64_val: values.to_vec(), ..Default::default() };
        node(name, "Const", &[], vec![("value", Value::Tensor(Box::new(tensor)))])
    }

    #[test]
    fn a_reshape_to_a_stacked_shape_keeps_the_unknown_batch() {
        let nodes = vec![
            node("x", "Placeholder", &[], vec![("shape", Value::Shape(shape_proto(&[-1, 4, 4])))]),
            node("shape", "Shape", &["x"], vec![]),
            int_const("begin", &[0]),
            int_const("end", &[1]),
            int_const("stride", &[1]),
            node("batch", "StridedSlice", &["shape", "begin", "end", "stride"], vec![("shrink_axis_mask", Value::I(1))]),
            int_const("sixteen", &[16]),
            node("target", "ConcatV2", &["batch_vec", "sixteen", "axis"], vec![]),
            node("batch_vec", "Pack", &["batch"], vec![]),
            node(
                "axis",
                "Const",
                &[],
                vec![(
                    "value",
                    Value::Tensor(Box::new(TensorProto { dtype: tensor::INT32, int_val: vec![0], tensor_shape: Some(shape_proto(&[])), ..Default::default() })),
                )],
            ),
            node("y", "Reshape", &["x", "target"], vec![]),
        ];
        let shapes = infer(&nodes);
        assert_eq!(shapes[10], Some(vec![Some(vec![-1, 16])]));
        assert_eq!(shapes[5], Some(vec![Some(vec![])]));
    }

    #[test]
    fn cycles_missing_inputs_and_unknown_ops_give_unknown_shapes() {
        let nodes = vec![
            node("a", "Identity", &["b"], vec![]),
            node("b", "Identity", &["a"], vec![]),
            node("c", "Square", &["nowhere:3"], vec![]),
            node("d", "Mystery", &[], vec![]),
        ];
        assert_eq!(infer(&nodes), vec![None, None, Some(vec![None]), None]);
    }

    /// Random graphs of the op types inference knows, with random inputs
    /// and attributes (huge, negative, empty): no panic, no endless loop.
    #[test]
    fn random_graphs_do_not_panic() {
        const OPS: &[&str] = &[
            "Const",
            "Placeholder",
            "Reshape",
            "Shape",
            "ShapeN",
            "Transpose",
            "ExpandDims",
            "Squeeze",
            "Pack",
            "Unpack",
            "ConcatV2",
            "Split",
            "SplitV",
            "Slice",
            "StridedSlice",
            "Pad",
            "Tile",
            "Fill",
            "GatherV2",
            "OneHot",
            "Range",
            "MatMul",
            "BatchMatMulV2",
            "Sum",
            "ArgMax",
            "Conv2D",
            "MaxPool",
            "Conv2DBackpropInput",
            "FusedBatchNormV3",
            "Merge",
            "Enter",
            "AddV2",
            "Prod",
            "FloorDiv",
            "FloorMod",
            "Cast",
            "InvertPermutation",
            "Einsum",
            "BiasAdd",
            "SparseSoftmaxCrossEntropyWithLogits",
            "VarHandleOp",
            "ReadVariableOp",
            "NextIteration",
            "While",
            "StatelessIf",
            "ResizeBilinear",
            "ResizeNearestNeighborGrad",
            "TopKV2",
            "TopK",
            "TensorScatterUpdate",
            "MatrixBandPart",
        ];
        let mut rng = XorShift::new(7);
        let interesting = [0i64, 1, -1, 2, 3, -2, 4096, i64::MAX, i64::MIN, 1 << 40];
        for _ in 0..3000 {
            let n = 1 + rng.below(12) as usize;
            let mut nodes = Vec::new();
            for i in 0..n {
                let pick = |rng: &mut XorShift| interesting[rng.below(interesting.len() as u64) as usize];
                let ints: Vec<i64> = (0..rng.below(6)).map(|_| pick(&mut rng)).collect();
                let op = OPS[rng.below(OPS.len() as u64) as usize];
                let inputs: Vec<String> = (0..rng.below(4)).map(|_| format!("n{}:{}", rng.below(n as u64), rng.below(3))).collect();
                let tensor =
                    TensorProto { dtype: tensor::INT64, tensor_shape: Some(shape_proto(&[ints.len() as i64])), int64_val: ints.clone(), ..Default::default() };
                let mut attrs: BTreeMap<String, AttrValue> = BTreeMap::new();
                attrs.insert("value".into(), attr(Value::Tensor(Box::new(tensor))));
                attrs.insert("shape".into(), attr(Value::Shape(shape_proto(&ints))));
                for key in ["strides", "ksize", "dilations", "explicit_paddings", "squeeze_dims"] {
                    attrs.insert(key.into(), attr(Value::List(Box::new(ListValue { i: ints.clone(), ..Default::default() }))));
                }
                attrs.insert("output_shapes".into(), attr(Value::List(Box::new(ListValue { shape: vec![shape_proto(&ints)], ..Default::default() }))));
                attrs.insert("Tout".into(), attr(Value::List(Box::new(ListValue { r#type: vec![1; ints.len()], ..Default::default() }))));
                for key in ["num", "num_split", "k", "axis", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "batch_dims"] {
                    attrs.insert(key.into(), attr(Value::I(pick(&mut rng).rem_euclid(70))));
                }
                attrs.insert("padding".into(), attr(Value::S([&b"SAME"[..], b"VALID", b"EXPLICIT"][rng.below(3) as usize].to_vec())));
                attrs.insert("equation".into(), attr(Value::S(b"ab,bc->ac".to_vec())));
                nodes.push(NodeRecord { name: format!("n{i}"), op: op.into(), inputs, attrs, ..Default::default() });
            }
            let _ = infer(&nodes);
        }
    }
}
