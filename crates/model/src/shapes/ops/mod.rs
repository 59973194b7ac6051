//! The shape functions, one family of op types per file, as TF registers
//! them (`REGISTER_OP(...).SetShapeFn(...)` in `tensorflow/core/ops/`).
//! Each family answers `None` for an op type it does not know.

mod array;
mod control;
mod elementwise;
mod functional;
mod image;
mod math;
mod nn;
mod state;

use super::dims::Shape;
use super::{Ctx, Out, fold};

/// The outputs of the node `c` describes, or `None` for an op type no
/// family knows (its shapes stay unknown; TF's are then not guessed).
pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    let mut outs = elementwise::infer(c)
        .or_else(|| math::infer(c))
        .or_else(|| array::infer(c))
        .or_else(|| nn::infer(c))
        .or_else(|| control::infer(c))
        .or_else(|| functional::infer(c))
        .or_else(|| image::infer(c))
        .or_else(|| state::infer(c))?;
    fold::values(c, &mut outs);
    Some(outs)
}

/// Outputs of these shapes, nothing else known.
pub(crate) fn outs(shapes: impl IntoIterator<Item = Shape>) -> Option<Vec<Out>> {
    Some(shapes.into_iter().map(Out::of).collect())
}

/// One output of this shape.
pub(crate) fn one(shape: Shape) -> Option<Vec<Out>> {
    outs([shape])
}

/// A scalar.
pub(crate) fn scalar() -> Shape {
    Some(Vec::new())
}

/// A vector of `n` elements (`-1` unknown).
pub(crate) fn vector(n: i64) -> Shape {
    Some(vec![n])
}
