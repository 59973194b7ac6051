//! Matrix products, reductions, arg-max/min, Range and Einsum.

use super::super::dims::{self, Shape};
use super::super::{Ctx, Out};
use super::{one, vector};

const REDUCTIONS: &[&str] = &["Sum", "Mean", "Max", "Min", "Prod", "All", "Any", "EuclideanNorm"];

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    match c.op {
        "MatMul" => {
            let a = dims::with_rank(c.shape(0), 2).unwrap_or(vec![-1, -1]);
            let b = dims::with_rank(c.shape(1), 2).unwrap_or(vec![-1, -1]);
            let m = if c.flag("transpose_a") { a[1] } else { a[0] };
            let n = if c.flag("transpose_b") { b[0] } else { b[1] };
            one(Some(vec![m, n]))
        }
        "BatchMatMul" | "BatchMatMulV2" | "BatchMatMulV3" => one(batch_matmul(c)),
        op if REDUCTIONS.contains(&op) => one(reduction(c)),
        "ArgMax" | "ArgMin" => {
            let input = c.shape(0);
            one(match (input, c.scalar(1)) {
                (Some(d), Some(axis)) => dims::axis(axis, d.len()).map(|a| d.iter().enumerate().filter(|(i, _)| *i != a).map(|(_, &x)| x).collect()),
                (Some(d), None) if !d.is_empty() => dims::unknown_dims(d.len() - 1),
                _ => None,
            })
        }
        "Range" => one(vector(range_size(c).unwrap_or(-1))),
        "Einsum" => one(einsum(c)),
        _ => None,
    }
}

/// `BatchMatMulV2Shape` (and V1's, whose batch dims must be equal).
fn batch_matmul(c: &Ctx) -> Shape {
    let (a, b) = (c.shape(0).as_ref()?, c.shape(1).as_ref()?);
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (adj_x, adj_y) = (c.flag("adj_x"), c.flag("adj_y"));
    let m = if adj_x { a[a.len() - 1] } else { a[a.len() - 2] };
    let n = if adj_y { b[b.len() - 2] } else { b[b.len() - 1] };
    let (batch_a, batch_b) = (Some(a[..a.len() - 2].to_vec()), Some(b[..b.len() - 2].to_vec()));
    let batch = if c.op == "BatchMatMul" { dims::merge_or_first(&batch_a, &batch_b) } else { dims::broadcast(&batch_a, &batch_b) };
    dims::concat(&batch, &Some(vec![m, n]))
}

/// TF's `ReductionShape`.
fn reduction(c: &Ctx) -> Shape {
    let keep = c.flag("keep_dims");
    let input = c.shape(0).as_ref();
    let (Some(input), Some(axes)) = (input, c.value(1)) else {
        return if keep { dims::unknown_dims(input?.len()) } else { None };
    };
    let mut reduced = vec![false; input.len()];
    for &a in axes {
        reduced[dims::axis(a, input.len())?] = true;
    }
    Some(input.iter().zip(&reduced).filter_map(|(&d, &r)| if r { keep.then_some(1) } else { Some(d) }).collect())
}

/// `Range`'s length from known start, limit and delta (integers).
fn range_size(c: &Ctx) -> Option<i64> {
    let (start, limit, delta) = (c.scalar(0)?, c.scalar(1)?, c.scalar(2)?);
    if delta == 0 || (delta > 0 && start > limit) || (delta < 0 && start < limit) {
        return None;
    }
    let span = limit.checked_sub(start)?.checked_abs()?;
    let step = delta.checked_abs()?;
    Some(span / step + i64::from(span % step != 0))
}

/// Einsum without `...`: each output letter's dim from an operand that has
/// it (merged across operands).
fn einsum(c: &Ctx) -> Shape {
    let equation = std::str::from_utf8(c.string("equation")?).ok()?;
    let (inputs, output) = equation.split_once("->")?;
    if equation.contains('.') {
        return None;
    }
    let mut sizes = std::collections::HashMap::new();
    for (i, labels) in inputs.split(',').enumerate() {
        let shape = c.shape(i).as_ref()?;
        if shape.len() != labels.len() {
            return None;
        }
        for (l, &d) in labels.chars().zip(shape) {
            let known = sizes.entry(l).or_insert(d);
            *known = dims::merge_dim(*known, d)?;
        }
    }
    output.chars().map(|l| sizes.get(&l).copied()).collect()
}
