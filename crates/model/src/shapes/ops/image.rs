//! Image resizing and its gradients (`image_ops.cc`).

use super::super::dims::{self, Shape};
use super::super::{Ctx, Out};
use super::one;

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    match c.op {
        "ResizeBilinear" | "ResizeNearestNeighbor" | "ResizeBicubic" | "ResizeArea" => one(resize(c)),
        // The original image's shape, as given.
        "ResizeBilinearGrad" | "ResizeBicubicGrad" => one(c.shape(1).clone()),
        "ResizeNearestNeighborGrad" => one(nearest_neighbor_grad(c)),
        _ => None,
    }
}

/// The `size` input (a 2-vector): its values when TF's constant evaluation
/// finds them (negative: unknown), else two unknown dims; `None` when it is
/// not a 2-vector (TF refuses the graph).
fn size(c: &Ctx) -> Option<[i64; 2]> {
    let s = dims::with_rank(c.shape(1), 1)?;
    dims::merge_dim(s[0], 2)?;
    Some(match c.value(1) {
        Some(&[h, w]) => [h.max(-1), w.max(-1)],
        Some(_) => return None,
        None => [-1, -1],
    })
}

/// TF's `ResizeShapeFn`: `[batch, height, width, channels]` with height and
/// width from `size`.
fn resize(c: &Ctx) -> Shape {
    let input = dims::with_rank(c.shape(0), 4)?;
    let [h, w] = size(c)?;
    Some(vec![input[0], h, w, input[3]])
}

/// The gradient's own shape with height and width from `size`.
fn nearest_neighbor_grad(c: &Ctx) -> Shape {
    let mut grads = dims::with_rank(c.shape(0), 4)?;
    let [h, w] = size(c)?;
    grads[1] = h;
    grads[2] = w;
    Some(grads)
}
