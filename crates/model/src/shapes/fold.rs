//! Integer values shape functions read (TF's `EvaluateConstantTensor`,
//! `TryInferFromShapes`) and tensors read as shapes (`ConstantPartialShape`).
//!
//! TF folds a constant subgraph by running its kernels; here the integer
//! ops that compute shapes are folded, on values of at most
//! [`tensor::MAX_VALUES`] elements, with checked arithmetic. No value
//! crosses control flow (TF does not fold through `Enter`/`Merge`/…).

use super::dims::{self, Shape};
use super::{Ctx, Out, tensor};

/// Input `t` read as a shape (`MakeShapeFromShapeTensor`): a scalar -1 is
/// an unknown shape, an empty vector a scalar, else what its producer
/// tells (`as_shape`), its value (-1: unknown dim), or its length.
pub(crate) fn as_shape(t: &Out) -> Shape {
    match dims::rank(&t.shape) {
        Some(1) | None => {}
        _ => return None,
    }
    if dims::dim(&t.shape, 0) == 0 {
        return Some(Vec::new());
    }
    if let Some(s) = &t.as_shape {
        return s.clone();
    }
    general(t)
}

/// `MakeShapeFromTensor`: the value, else as many unknown dims as it has
/// elements.
fn general(t: &Out) -> Shape {
    if let Some(v) = &t.value {
        return v.iter().all(|&x| x >= -1).then(|| v.clone());
    }
    let n = dims::dim(&t.shape, 0);
    (0..=tensor::MAX_VALUES as i64).contains(&n).then(|| vec![-1; n as usize])
}

/// Sets the values, shapes-as-values and handle data of `c`'s outputs.
pub(crate) fn values(c: &Ctx, outs: &mut [Out]) {
    let Some(first) = outs.first_mut() else { return };
    match c.op {
        "Const" => first.value = c.tensor("value").and_then(tensor::int_values),
        "Shape" => {
            let s = c.shape(0);
            first.value = dims::is_fully_known(s).then(|| s.clone()).flatten();
            first.as_shape = Some(s.clone());
            first.shape_of = Some(s.clone());
        }
        "ShapeN" => {
            for (i, out) in outs.iter_mut().enumerate() {
                let s = c.shape(i);
                out.value = dims::is_fully_known(s).then(|| s.clone()).flatten();
                out.as_shape = Some(s.clone());
                out.shape_of = Some(s.clone());
            }
        }
        "Size" => first.value = dims::elements(c.shape(0)).map(|n| vec![n]),
        "Rank" => first.value = dims::rank(c.shape(0)).map(|r| vec![r as i64]),
        "Identity" | "StopGradient" | "Snapshot" | "Reshape" | "ExpandDims" | "Squeeze" => first.value = c.value(0).map(<[i64]>::to_vec),
        "Cast" => {
            let int = matches!(c.dtype("DstT"), Some(tensor::INT32 | tensor::INT64));
            first.value = c.value(0).filter(|_| int).map(<[i64]>::to_vec);
            first.as_shape = Some(if first.value.is_some() {
                general(first)
            } else {
                match as_shape(c.input(0)) {
                    Some(d) if !int => dims::unknown_dims(d.len()),
                    other => other,
                }
            });
        }
        "Pack" if (0..c.n()).all(|i| dims::rank(c.shape(i)) == Some(0)) => {
            first.value = (0..c.n()).map(|i| c.scalar(i)).collect();
            first.as_shape = Some(Some((0..c.n()).map(|i| c.scalar(i).map_or(-1, |v| v.max(-1))).collect()));
        }
        "ConcatV2" | "Concat" if c.n() >= 1 => {
            let (axis, values) = if c.op == "ConcatV2" { (c.n() - 1, 0..c.n() - 1) } else { (0, 1..c.n()) };
            if c.scalar(axis).is_some_and(|a| a == 0 || a == -1) {
                first.value = values.clone().map(|i| c.value(i)).collect::<Option<Vec<_>>>().map(|v| v.concat()).filter(|v| v.len() <= tensor::MAX_VALUES);
            }
            first.as_shape = Some(values.map(|i| as_shape(c.input(i))).try_fold(Vec::new(), |mut acc, s| {
                acc.extend(s?);
                Some(acc)
            }));
        }
        "StridedSlice" => {
            first.value = strided_slice_value(c);
            first.as_shape = Some(partial_strided_slice(c));
        }
        "VariableShape" => first.as_shape = Some(c.input(0).handle.clone().flatten()),
        "Add" | "AddV2" | "Sub" | "Mul" | "FloorDiv" | "FloorMod" | "Maximum" | "Minimum" => first.value = binary(c),
        "InvertPermutation" => {
            first.value = c.value(0).and_then(|p| {
                let mut inverse = vec![-1i64; p.len()];
                for (i, &x) in p.iter().enumerate() {
                    let at = inverse.get_mut(usize::try_from(x).ok()?)?;
                    if *at != -1 {
                        return None;
                    }
                    *at = i as i64;
                }
                Some(inverse)
            })
        }
        "Neg" => first.value = c.value(0).and_then(|v| v.iter().map(|x| x.checked_neg()).collect()),
        "Prod" | "Sum" | "Max" | "Min" if !c.flag("keep_dims") && dims::rank(c.shape(0)) == Some(1) && c.value(1).is_some_and(|a| !a.is_empty()) => {
            first.value = c.value(0).and_then(|v| reduce(c.op, v)).map(|x| vec![x]);
        }
        "Range" => {
            first.value = (|| {
                // (The length is the output's, from start, limit and delta.)
                let (start, delta) = (c.scalar(0)?, c.scalar(2)?);
                let n = usize::try_from(dims::dim(&first.shape, 0)).ok().filter(|&n| n <= tensor::MAX_VALUES)?;
                (0..n as i64).map(|i| i.checked_mul(delta)?.checked_add(start)).collect::<Option<Vec<_>>>()
            })();
        }
        "Fill" => {
            let n = dims::elements(&first.shape).and_then(|n| usize::try_from(n).ok()).filter(|&n| n <= tensor::MAX_VALUES);
            first.value = n.zip(c.scalar(1)).map(|(n, v)| vec![v; n]);
        }
        "GatherV2" if c.scalar(2) == Some(0) && dims::rank(c.shape(0)) == Some(1) => {
            first.value = (|| {
                let params = c.value(0)?;
                c.value(1)?.iter().map(|&i| params.get(usize::try_from(i).ok()?).copied()).collect()
            })();
        }
        _ => {}
    }
}

fn binary(c: &Ctx) -> Option<Vec<i64>> {
    let (a, b) = (c.value(0)?, c.value(1)?);
    let n = a.len().max(b.len());
    if !(a.len() == n || a.len() == 1) || !(b.len() == n || b.len() == 1) {
        return None;
    }
    (0..n)
        .map(|i| {
            let (x, y) = (a[if a.len() == 1 { 0 } else { i }], b[if b.len() == 1 { 0 } else { i }]);
            match c.op {
                "Add" | "AddV2" => x.checked_add(y),
                "Sub" => x.checked_sub(y),
                "Mul" => x.checked_mul(y),
                "FloorDiv" => {
                    (y != 0).then(|| x.checked_div_euclid(y)).flatten().and_then(|q| if y < 0 && x.rem_euclid(y) != 0 { q.checked_sub(1) } else { Some(q) })
                }
                "FloorMod" => (y != 0).then(|| x.checked_rem_euclid(y)).flatten().map(|r| if y < 0 && r != 0 { r + y } else { r }),
                "Maximum" => Some(x.max(y)),
                _ => Some(x.min(y)),
            }
        })
        .collect()
}

fn reduce(op: &str, v: &[i64]) -> Option<i64> {
    match op {
        "Prod" => v.iter().try_fold(1i64, |a, &x| a.checked_mul(x)),
        "Sum" => v.iter().try_fold(0i64, |a, &x| a.checked_add(x)),
        "Max" => v.iter().copied().max(),
        _ => v.iter().copied().min(),
    }
}

/// The masks of a StridedSlice with one begin/end/stride: (begin, end,
/// stride) as TF's `PartialStridedSliceShape` reads them.
fn one_slice(c: &Ctx) -> Option<(Option<i64>, Option<i64>, i64, bool)> {
    let mask = |name: &str| c.int(name).unwrap_or(0);
    if mask("ellipsis_mask") != 0 || mask("new_axis_mask") != 0 {
        return None;
    }
    let (bm, em) = (mask("begin_mask"), mask("end_mask"));
    if !(bm == 0 || bm == 1) || !(em == 0 || em == 1) {
        return None;
    }
    let begin = if bm == 1 { Some(0) } else { c.scalar(1) };
    let end = if em == 1 { Some(i64::MAX) } else { c.scalar(2) };
    Some((begin, end, c.scalar(3)?, mask("shrink_axis_mask") == 1))
}

/// `ConstantPartialShape` of a StridedSlice: a slice of the partial shape
/// its input holds.
fn partial_strided_slice(c: &Ctx) -> Shape {
    if (1..=3).any(|i| dims::dim(c.shape(i), 0) != 1) {
        return None;
    }
    match one_slice(c)? {
        (Some(b), Some(e), s, false) => dims::subshape(&as_shape(c.input(0)), b, e, s),
        _ => None,
    }
}

/// The value of a StridedSlice of a vector: a slice of a known value, or
/// one known dim of a `Shape` (TF's `TryInferFromShapes`).
fn strided_slice_value(c: &Ctx) -> Option<Vec<i64>> {
    if dims::rank(c.shape(0)) != Some(1) || c.value(3).map(<[i64]>::len) != Some(1) {
        return None;
    }
    let (begin, end, stride, shrink) = one_slice(c)?;
    let begin = begin?;
    if shrink {
        let source = c.value(0).map(|v| Some(v.to_vec())).or_else(|| c.input(0).shape_of.clone())??;
        let at = dims::axis(begin, source.len())?;
        return (source[at] >= 0).then(|| vec![source[at]]);
    }
    let v = c.value(0)?;
    let picked = dims::slice_indices(v.len() as i64, begin, end?, stride)?;
    Some(picked.into_iter().map(|i| v[i]).collect())
}
