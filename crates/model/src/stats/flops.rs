//! Native FLOPs estimation (`--estimate_flops`): TensorFlow's Python flops
//! registry, every op type with a `RegisterStatistics(TYPE, "flops")`
//! function (listed in `testdata/flops/registered_ops.txt` by
//! `tools/gen_flops.py`), computed from the shapes a `tf.Graph` knows: the
//! GraphDef's `_output_shapes` merged with what TF's shape functions infer
//! ([`crate::shapes`], run by `Stats::add_graph` when estimates are on),
//! completed by run-time shapes from RunMetadata the way `tfprof_logger`
//! completes them. Einsum, which the registry lacks, is added for
//! `--estimate_flops` (not for [`FlopsEstimate::TfDefaultOpLog`], TF's own).
//!
//! Like `tfprof_logger`, a node gets an estimate when the shapes its formula
//! reads are fully known and the value is not 0 (it may be negative: an
//! empty input to a reduction). TF's functions also assert two shapes their
//! formulas do not use, the input of a convolution and the output of Mean;
//! `--estimate_flops` does not need them, so it counts such nodes where TF
//! gives none. [`FlopsEstimate::TfDefaultOpLog`] (`--default_op_log`, the
//! Python API's default) is TF's Python `profile()` exactly: those asserts
//! hold, and a node its op log lists keeps 0 unless the estimate is
//! positive (`merge_default_with_oplog`).
//!
//! Formulas (N = number of elements; `in0`, `in1` the first two inputs), with
//! the TF function (`flops_registry.py` unless `nn_ops.py` is named):
//!
//! | ops | float ops | TF function |
//! |---|---|---|
//! | Reciprocal, Square, Log, Neg, AssignSub, AssignAdd | N(in0) | `_unary_op_flops` |
//! | Rsqrt | 2·N(in0) | `_rsqrt_flops` |
//! | Softmax | 5·N(in0) | `_softmax_flops` |
//! | L2Loss | 3·N(in0) − 1 | `_l2_loss_flops` |
//! | Add, AddV2, Sub, Mul, RealDiv, Maximum, Minimum, Pow, Greater(Equal), Less(Equal), (Not)Equal | N(out) | `_binary_per_element_op_flops` |
//! | SquaredDifference | 2·N(out) | `_squared_difference_flops` |
//! | RsqrtGrad | 4·N(out) | `_rsqrt_grad_flops` |
//! | Mean | N(in0) | `_mean_flops` |
//! | Sum, ArgMax, ArgMin, BiasAddGrad | N(in0) − N(out) | `_reduction_op_flops` |
//! | AvgPool, MaxPool (NHWC) | kernel area · N(out) | `_pool_flops` |
//! | AvgPoolGrad (NHWC) | 2 · kernel area · N(in1) | `_avg_pool_grad_flops` |
//! | MaxPoolGrad (NHWC) | (kernel area + 1) · N(in1) | `_max_pool_grad_flops` |
//! | Conv2D | 2 · N(out) · filter h·w·in_depth | `nn_ops._calc_conv_flops` |
//! | Conv3D | 2 · N(out) · filter t·h·w·in_depth | `nn_ops._calc_conv3d_flops` |
//! | DepthwiseConv2dNative, Dilation2D | 2 · N(out) · filter h·w | `nn_ops._calc_depthwise_conv_flops`, `nn_ops._calc_dilation2d_flops` |
//! | Conv2DBackpropInput (NHWC) | int(2 · N(out) · N(filter=in1) / (out depth · stride h·w)) | `_conv_2d_backprop_input_flops` |
//! | Conv2DBackpropFilter (NHWC) | int(2 · N(in0) · N(out) / (in0 depth · stride h·w)) | `_conv_2d_backprop_filter_flops` |
//! | BiasAdd | N(in0) | `nn_ops._calc_bias_add_flops` |
//! | AddN | N(in0) · (inputs − 1), control inputs counted | `_add_n_flops` |
//! | MatMul | 2 · N(out) · k, k = in0 dim 1 (dim 0 if `transpose_a`) | `_calc_mat_mul_flops` |
//! | BatchMatMul, V2, V3 | 2 · N(out) · last dim of in0 (TF reads a `transpose_a` attr these ops lack, so never the other dim) | `_calc_batch_mat_mul_flops` |
//! | Einsum (not in TF's registry) | N(out) · Π contracted dims, × 2 for two operands | — |

use super::uncounted::{Tensor, Uncounted};
use super::{Node, Stats};
use crate::proto::tensorflow::attr_value::Value;

/// Product of `values`, or `None` when it does not fit an int64 (TF's
/// logger then fails to store a Python int in the int64 `float_ops` field,
/// or its numpy products wrap around): such a node gets no estimate, and
/// absurd shapes cannot abort the program.
fn product(values: impl IntoIterator<Item = i64>) -> Option<i64> {
    values.into_iter().try_fold(1i64, i64::checked_mul)
}

fn elements(shape: &[i64]) -> Option<i64> {
    product(shape.iter().copied())
}

/// `int(n / d)` as Python computes it for `n, d >= 0`: the exact quotient
/// rounded to the nearest double (ties to even), then truncated. Past 2^53
/// this is not the integer quotient, nor what rounding `n` to a double first
/// gives. `None` for `d == 0` (TF raises) or a result beyond int64.
fn python_int_of_quotient(n: i128, d: i128) -> Option<i64> {
    if n < 0 || d <= 0 {
        return None;
    }
    let (q, r) = (n / d, n % d);
    // floor(log2 q): the quotient lies in [2^k, 2^(k+1)), where doubles are
    // 2^(k-52) apart.
    let k = 127 - q.leading_zeros() as i32;
    if q < 1 << 53 {
        // The double is q + 1 when the quotient is at most half a step
        // below it, else q (truncated). Below 1 (q = 0) only a quotient
        // within 2^-54 of 1 rounds up. On a tie q + 1 is the even one unless
        // the step is 1. ((d - r) · 2^(53-k) overflowing means far below.)
        let k = if q == 0 { -1 } else { k };
        let up = (d - r).checked_mul(1 << (53 - k)).is_some_and(|below| below < d || (below == d && (k < 52 || q % 2 == 1)));
        return i64::try_from(q + i128::from(up)).ok();
    }
    // Doubles here are integers `step` apart: round to a multiple, ties to even.
    let step = 1i128 << (k - 52);
    let low = q - q % step;
    let twice_rest = (q % step).checked_mul(d)?.checked_add(r)?.checked_mul(2)?;
    let up = twice_rest > step * d || (twice_rest == step * d && (low / step) % 2 == 1);
    i64::try_from(if up { low + step } else { low }).ok()
}

/// Which nodes get estimated float ops, and by which rules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlopsEstimate {
    /// None: the op log's float ops alone (tfprof's command line).
    #[default]
    Off,
    /// `--estimate_flops`: every node the op log gives none, counting the
    /// shapes TF asserts but does not use as not needed.
    Missing,
    /// What TF's Python `tf.compat.v1.profiler.profile` merges into the op
    /// log it is given (`tfprof_logger.merge_default_with_oplog`): TF's
    /// asserts hold, and a listed node with 0 keeps it unless positive.
    TfDefaultOpLog,
}

impl FlopsEstimate {
    pub fn is_on(self) -> bool {
        self != FlopsEstimate::Off
    }
}

impl Stats {
    /// A fully known output shape of `node`'s output `slot`: the static
    /// one, else the run-time one where it agrees with it (TF's
    /// `_fill_missing_graph_shape` merges the two, and leaves a tensor
    /// alone when they conflict).
    fn shape_of(&self, node: &Node, slot: usize) -> Option<Vec<i64>> {
        let fixed = node.static_output_shapes.get(slot);
        if let Some(shape) = fixed
            && crate::shapes::dims::is_fully_known(shape)
        {
            return shape.clone();
        }
        let runtime = node.runtime_output_shapes.as_ref()?;
        // tfprof_logger ignores run-time outputs whose count differs from the
        // graph's. A node of an op type shape inference does not know, in a
        // GraphDef without `_output_shapes`, has no count; TF's graph would
        // have one that the run-time shapes match.
        if !node.static_output_shapes.is_empty() && runtime.len() != node.static_output_shapes.len() {
            return None;
        }
        let seen = runtime.get(slot)?.clone()?;
        match fixed {
            Some(shape) => crate::shapes::dims::merge(shape, &Some(seen)).flatten(),
            None => Some(seen),
        }
    }

    fn input_shape(&self, node: &Node, i: usize) -> Option<Vec<i64>> {
        let input = node.inputs.get(i)?;
        let producer = self.node(&input.name)?;
        self.shape_of(producer, usize::try_from(input.src_output).ok()?)
    }

    /// The registry's float ops for one node, if its op is known and its
    /// shapes are fully defined; with `tf_asserts`, TF's registry exactly:
    /// also the shapes TF's function asserts without using (a
    /// convolution's input, Mean's output), and no Einsum.
    pub fn estimate_flops(&self, node: &Node, tf_asserts: bool) -> Option<i64> {
        self.flops_or_why(node, tf_asserts).ok()
    }

    /// [`Stats::estimate_flops`], or why it gives none: the first thing the
    /// formula needed and did not have (`advise`'s `UncountedFlopsChecker`
    /// lists these, so the reasons are the computation's own).
    pub fn flops_or_why(&self, node: &Node, tf_asserts: bool) -> Result<i64, Uncounted> {
        let tensor_shape = |tensor: Tensor| -> Result<Vec<i64>, Uncounted> {
            let known = match tensor {
                Tensor::Output => self.shape_of(node, 0),
                Tensor::Input(i) => self.input_shape(node, i),
            };
            known.ok_or(Uncounted::UnknownShape(tensor))
        };
        let out = || tensor_shape(Tensor::Output);
        let in0 = || tensor_shape(Tensor::Input(0));
        let in1 = || tensor_shape(Tensor::Input(1));
        if tf_asserts {
            match node.op {
                "Conv2D" | "Conv3D" | "DepthwiseConv2dNative" | "Dilation2D" => drop(in0()?),
                "Mean" => drop(out()?),
                _ => {}
            }
        }
        let ints = |name: &str| match node.attrs.get(name).and_then(|a| a.value.as_ref()) {
            Some(Value::List(list)) => list.i.clone(),
            _ => Vec::new(),
        };
        let flag = |name: &str| matches!(node.attrs.get(name).and_then(|a| a.value.as_ref()), Some(Value::B(true)));
        let nhwc = || match node.attrs.get("data_format").and_then(|a| a.value.as_ref()) {
            Some(Value::S(s)) => s.as_slice() == b"NHWC",
            _ => false,
        };
        let strides = || {
            let s = ints("strides");
            if s.len() >= 3 { s[1].checked_mul(s[2]).ok_or(Uncounted::Overflow) } else { Err(Uncounted::Attr("strides")) }
        };
        let ksize = || product(ints("ksize")).ok_or(Uncounted::Overflow);
        let n = |shape: &[i64]| elements(shape).ok_or(Uncounted::Overflow);
        let times = |values: &[i64]| product(values.iter().copied()).ok_or(Uncounted::Overflow);
        // A dim the formula reads that the shape's rank lacks.
        let at = |shape: &[i64], i: usize, tensor: Tensor| shape.get(i).copied().ok_or(Uncounted::Rank(tensor));
        let flops = match node.op {
            "Reciprocal" | "Square" | "Log" | "Neg" | "AssignSub" | "AssignAdd" => n(&in0()?)?,
            "Rsqrt" => times(&[2, n(&in0()?)?])?,
            "Softmax" => times(&[5, n(&in0()?)?])?,
            "L2Loss" => times(&[3, n(&in0()?)?])? - 1,
            "Add" | "AddV2" | "Sub" | "Mul" | "RealDiv" | "Maximum" | "Minimum" | "Pow" | "GreaterEqual" | "Greater" | "LessEqual" | "Less" | "Equal"
            | "NotEqual" => n(&out()?)?,
            "SquaredDifference" => times(&[2, n(&out()?)?])?,
            "RsqrtGrad" => times(&[4, n(&out()?)?])?,
            "Mean" => n(&in0()?)?,
            "Sum" | "ArgMax" | "ArgMin" | "BiasAddGrad" => n(&in0()?)?.checked_sub(n(&out()?)?).ok_or(Uncounted::Overflow)?,
            "AvgPool" | "MaxPool" | "AvgPoolGrad" | "MaxPoolGrad" | "Conv2DBackpropInput" | "Conv2DBackpropFilter" if !nhwc() => {
                return Err(Uncounted::NotNhwc);
            }
            "AvgPool" | "MaxPool" => times(&[ksize()?, n(&out()?)?])?,
            "AvgPoolGrad" => times(&[2, ksize()?, n(&in1()?)?])?,
            "MaxPoolGrad" => times(&[ksize()?.checked_add(1).ok_or(Uncounted::Overflow)?, n(&in1()?)?])?,
            "Conv2D" => {
                let f = in1()?;
                let filter = |i| at(&f, i, Tensor::Input(1));
                times(&[2, n(&out()?)?, filter(0)?, filter(1)?, filter(2)?])?
            }
            "Conv3D" => {
                let f = in1()?;
                let filter = |i| at(&f, i, Tensor::Input(1));
                times(&[2, n(&out()?)?, filter(0)?, filter(1)?, filter(2)?, filter(3)?])?
            }
            "DepthwiseConv2dNative" | "Dilation2D" => {
                let f = in1()?;
                let filter = |i| at(&f, i, Tensor::Input(1));
                times(&[2, n(&out()?)?, filter(0)?, filter(1)?])?
            }
            "Conv2DBackpropInput" => {
                let o = out()?;
                let numerator = 2 * i128::from(n(&o)?) * i128::from(n(&in1()?)?);
                let depth = *o.last().ok_or(Uncounted::Rank(Tensor::Output))?;
                python_int_of_quotient(numerator, i128::from(depth) * i128::from(strides()?)).ok_or(Uncounted::Overflow)?
            }
            "Conv2DBackpropFilter" => {
                let image = in0()?;
                let numerator = 2 * i128::from(n(&image)?) * i128::from(n(&out()?)?);
                let depth = *image.last().ok_or(Uncounted::Rank(Tensor::Input(0)))?;
                python_int_of_quotient(numerator, i128::from(depth) * i128::from(strides()?)).ok_or(Uncounted::Overflow)?
            }
            "BiasAdd" => n(&in0()?)?,
            "AddN" if node.inputs.is_empty() => return Err(Uncounted::UnknownShape(Tensor::Input(0))),
            "AddN" => times(&[n(&in0()?)?, node.inputs.len() as i64 - 1])?,
            "MatMul" => {
                let a = in0()?;
                let k = at(&a, if flag("transpose_a") { 0 } else { 1 }, Tensor::Input(0))?;
                times(&[2, n(&out()?)?, k])?
            }
            "BatchMatMul" | "BatchMatMulV2" | "BatchMatMulV3" => {
                let k = *in0()?.last().ok_or(Uncounted::Rank(Tensor::Input(0)))?;
                times(&[2, n(&out()?)?, k])?
            }
            // (Not TF's: its registry has none.)
            "Einsum" if !tf_asserts => self.einsum_flops(node)?,
            _ => return Err(Uncounted::NoFormula),
        };
        // tfprof_logger logs any value but 0.
        if flops == 0 { Err(Uncounted::Zero) } else { Ok(flops) }
    }

    /// N(out) · Π sizes of the letters summed over; × 2 with two operands.
    fn einsum_flops(&self, node: &Node) -> Result<i64, Uncounted> {
        let equation = match node.attrs.get("equation").and_then(|a| a.value.as_ref()) {
            Some(Value::S(s)) => String::from_utf8(s.clone()).ok(),
            _ => None,
        };
        let (inputs, output) = equation.as_deref().and_then(|e| e.split_once("->")).ok_or(Uncounted::Attr("equation"))?;
        let operands: Vec<&str> = inputs.split(',').collect();
        let mut sizes = std::collections::BTreeMap::new();
        for (i, labels) in operands.iter().enumerate() {
            let shape = self.input_shape(node, i).ok_or(Uncounted::UnknownShape(Tensor::Input(i)))?;
            let letters: Vec<char> = labels.chars().filter(|c| c.is_ascii_alphabetic()).collect();
            // Letters bind to the trailing dims when `...` broadcasts leading ones.
            let offset = shape.len().checked_sub(letters.len()).ok_or(Uncounted::Rank(Tensor::Input(i)))?;
            for (j, c) in letters.iter().enumerate() {
                sizes.insert(*c, shape[offset + j]);
            }
        }
        let contracted = product(sizes.iter().filter(|(c, _)| !output.contains(**c)).map(|(_, &n)| n)).ok_or(Uncounted::Overflow)?;
        let factor = if operands.len() == 2 { 2 } else { 1 };
        let out = self.shape_of(node, 0).ok_or(Uncounted::UnknownShape(Tensor::Output))?;
        product([factor, elements(&out).ok_or(Uncounted::Overflow)?, contracted]).ok_or(Uncounted::Overflow)
    }

    /// TF's `profile()` hands its engine the graph with the shapes it knows
    /// (`as_graph_def(add_shapes=True)`, after filling run-time shapes in):
    /// every graph node's `_output_shapes`, as the views' input shapes show
    /// them, become those. A node whose outputs are not known keeps its own.
    fn show_tf_graph_shapes(&mut self) {
        let shapes: Vec<(usize, Vec<Vec<i64>>)> = (0..self.nodes.len())
            .filter(|&id| !self.nodes[id].static_output_shapes.is_empty())
            .map(|id| {
                let node = &self.nodes[id];
                let shapes = (0..node.static_output_shapes.len())
                    .map(|slot| match self.shape_of(node, slot).map(Some).unwrap_or_else(|| node.static_output_shapes[slot].clone()) {
                        // tfprof's `ShapeProtoToVec`: unknown rank `[]`, a scalar `[1]`.
                        None => Vec::new(),
                        Some(dims) if dims.is_empty() => vec![1],
                        Some(dims) => dims,
                    })
                    .collect();
                (id, shapes)
            })
            .collect();
        for (id, shapes) in shapes {
            self.nodes[id].output_shapes = shapes.into_iter().enumerate().map(|(slot, dims)| (slot as i64, dims)).collect();
        }
    }

    /// Fills the float ops of nodes that have none (no op log entry) with the
    /// registry's estimate, by the rules of `how`; returns how many nodes
    /// got one.
    pub fn estimate_missing_flops(&mut self, how: FlopsEstimate) -> usize {
        if !how.is_on() {
            return 0;
        }
        self.flops_estimate = how;
        let tf = how == FlopsEstimate::TfDefaultOpLog;
        if tf {
            self.show_tf_graph_shapes();
        }
        // Profile nodes carry tfprof's shapes only (unknown = empty); good
        // enough to count elements. (Graph nodes have both or neither.)
        for node in self.nodes.iter_mut().filter(|n| n.static_output_shapes.is_empty()) {
            node.static_output_shapes =
                node.output_shapes.values().map(|dims| (!dims.is_empty() && dims.iter().all(|&d| d >= 0)).then(|| dims.clone())).collect();
        }
        let estimates: Vec<(usize, i64)> = (0..self.nodes.len())
            .filter(|&id| self.nodes[id].float_ops == 0)
            .filter_map(|id| self.estimate_flops(&self.nodes[id], tf).map(|f| (id, f)))
            // (TF's merge replaces a listed node's 0 by a positive value only.)
            .filter(|&(id, flops)| !tf || flops > 0 || !self.logged.get(id).copied().unwrap_or(false))
            .collect();
        for &(id, flops) in &estimates {
            self.nodes[id].float_ops = flops;
        }
        estimates.len()
    }
}

#[cfg(test)]
mod tests {
    use super::python_int_of_quotient;

    /// Below 2^53 both operands are exact doubles, and IEEE division rounds
    /// the exact quotient as Python does. (Past 2^53: testdata/flops cases.)
    #[test]
    fn quotient_rounds_like_python_below_2_pow_53() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200_000 {
            let n = (next() >> (11 + next() % 50)) as i64;
            let d = (next() >> (11 + next() % 52)).max(1) as i64;
            assert_eq!(python_int_of_quotient(n.into(), d.into()), Some((n as f64 / d as f64) as i64), "{n} / {d}");
        }
        // Just below 1, and 2^53 - 1/2 (a tie between 2^53 - 1 and 2^53).
        assert_eq!(python_int_of_quotient((1 << 60) - 1, 1 << 60), Some(1));
        assert_eq!(python_int_of_quotient((1 << 54) - 1, 2), Some(1 << 53));
        assert_eq!(python_int_of_quotient(5, 0), None);
    }
}
