//! Element-wise ops: unary ones keep their input's shape, binary ones
//! broadcast (`BroadcastBinaryOpOutputShapeFn`), gradients of activations
//! merge their two inputs.

use super::super::dims::{self, Shape};
use super::super::{Ctx, Out};
use super::{one, scalar};

const UNARY: &[&str] = &[
    "Identity",
    "StopGradient",
    "PreventGradient",
    "Snapshot",
    "Relu",
    "Relu6",
    "Elu",
    "Selu",
    "Tanh",
    "Sigmoid",
    "Exp",
    "Expm1",
    "Log",
    "Log1p",
    "Sqrt",
    "Rsqrt",
    "Square",
    "Neg",
    "Abs",
    "Sign",
    "Reciprocal",
    "Inv",
    "Floor",
    "Ceil",
    "Round",
    "Rint",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Erf",
    "Erfc",
    "Softplus",
    "Softsign",
    "LeakyRelu",
    "Cast",
    "ZerosLike",
    "OnesLike",
    "IsFinite",
    "IsNan",
    "IsInf",
    "LogicalNot",
    "CheckNumerics",
    "CheckNumericsV2",
    "Softmax",
    "LogSoftmax",
    "Invert",
    "Lgamma",
    "Digamma",
    "Cumsum",
    "Cumprod",
    "ClipByValue",
    "Bitcast",
    "EnsureShape",
    "DebugIdentity",
    "Gelu",
    "Mish",
    "Swish",
    "Conj",
    "Real",
    "Imag",
    "Angle",
    "FakeQuantWithMinMaxArgs",
    "LRN",
    "Reverse",
    "ReverseV2",
    "RandomShuffle",
    "InvertPermutation",
    "GuaranteeConst",
];

const BINARY: &[&str] = &[
    "Add",
    "AddV2",
    "Sub",
    "Mul",
    "MulNoNan",
    "Div",
    "DivNoNan",
    "RealDiv",
    "TruncateDiv",
    "FloorDiv",
    "FloorMod",
    "TruncateMod",
    "Mod",
    "Maximum",
    "Minimum",
    "Pow",
    "SquaredDifference",
    "Greater",
    "GreaterEqual",
    "Less",
    "LessEqual",
    "Equal",
    "NotEqual",
    "LogicalAnd",
    "LogicalOr",
    "Atan2",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "LeftShift",
    "RightShift",
    "Xdivy",
    "Xlogy",
    "Xlog1py",
    "Igamma",
    "Igammac",
    "Zeta",
    "Polygamma",
    "ApproximateEqual",
    "Complex",
];

const GRADS: &[&str] = &[
    "ReluGrad",
    "Relu6Grad",
    "EluGrad",
    "SeluGrad",
    "SoftplusGrad",
    "SoftsignGrad",
    "LeakyReluGrad",
    "TanhGrad",
    "SigmoidGrad",
    "RsqrtGrad",
    "SqrtGrad",
    "ReciprocalGrad",
    "InvGrad",
];

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    let op = c.op;
    if UNARY.contains(&op) {
        // (Identity and friends pass a resource's handle data on.)
        let handle = c.input(0).handle.clone();
        return Some(vec![Out { shape: c.shape(0).clone(), handle, ..Out::default() }]);
    }
    if BINARY.contains(&op) {
        return one(dims::broadcast(c.shape(0), c.shape(1)));
    }
    if GRADS.contains(&op) {
        return one(dims::merge_or_first(c.shape(0), c.shape(1)));
    }
    match op {
        "AddN" | "AccumulateNV2" => one((0..c.n()).fold(None, |acc: Shape, i| dims::merge_or_first(&acc, c.shape(i)))),
        "SelectV2" => one(dims::broadcast(c.shape(0), &dims::broadcast(c.shape(1), c.shape(2)))),
        "Select" => one(dims::merge_or_first(c.shape(1), c.shape(2))),
        "BiasAdd" | "BiasAddV1" => {
            let (mut out, bias) = (c.shape(0).clone(), dims::dim(c.shape(1), 0));
            if let Some(d) = out.as_mut() {
                let channel = if c.channels_first() && d.len() >= 3 { d.len() - 3 } else { d.len().wrapping_sub(1) };
                if let Some(x) = d.get_mut(channel) {
                    *x = dims::merge_dim(*x, bias).unwrap_or(*x);
                }
            }
            one(out)
        }
        "BiasAddGrad" => {
            let g = c.shape(0);
            let channel = match dims::rank(g) {
                Some(r) if c.channels_first() && r >= 3 => dims::dim(g, -3),
                _ => dims::dim(g, -1),
            };
            one(Some(vec![channel]))
        }
        "L2Loss" => one(scalar()),
        _ => None,
    }
}
