//! Ops that make or rearrange tensors (`array_ops.cc`): sources, reshapes,
//! slices, concatenation, padding, gathers.

use super::super::dims::{self, Shape};
use super::super::{Ctx, Out, tensor};
use super::{one, outs, scalar, vector};

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    let shape = |i| c.shape(i);
    match c.op {
        "Const" | "HostConst" => one(c.tensor("value").and_then(tensor::shape)),
        "Placeholder" | "PlaceholderV2" => one(c.attr_shape("shape").flatten()),
        "PlaceholderWithDefault" => one(dims::merge_or_first(&c.attr_shape("shape").flatten(), shape(0))),
        "Reshape" => one(reshape(shape(0), c.shape_input(1))),
        "Shape" => one(vector(dims::rank(shape(0)).map_or(-1, |r| r as i64))),
        "ShapeN" => outs((0..c.n()).map(|i| vector(dims::rank(shape(i)).map_or(-1, |r| r as i64)))),
        "Size" | "Rank" => one(scalar()),
        "Transpose" => one(transpose(c)),
        "ExpandDims" => one(expand_dims(c)),
        "Squeeze" => one(squeeze(c)),
        "Pack" => one(pack(c)),
        "Unpack" => {
            let num = usize::try_from(c.int("num")?).ok().filter(|&n| n <= 1 << 16)?;
            let out = shape(0).as_ref().and_then(|d| {
                let axis = dims::axis(c.int("axis").unwrap_or(0), d.len())?;
                Some(d.iter().enumerate().filter(|(i, _)| *i != axis).map(|(_, &x)| x).collect())
            });
            outs(vec![out; num])
        }
        "ConcatV2" if c.n() >= 1 => one(concat(c, c.n() - 1, 0..c.n() - 1)),
        "Concat" if c.n() >= 1 => one(concat(c, 0, 1..c.n())),
        "Split" => split(c, 1, c.scalar(0)),
        "SplitV" => split(c, 0, c.scalar(2)),
        "Slice" => one(slice(c)),
        "StridedSlice" => one(strided_slice(c)),
        "Pad" | "PadV2" | "MirrorPad" => one(pad(c)),
        "Tile" => one(tile(c)),
        "Fill" => one(c.shape_input(0)),
        "BroadcastTo" => one(c.shape_input(1)),
        "GatherV2" => one(gather(shape(0), shape(1), c.scalar(2), c.int("batch_dims").unwrap_or(0))),
        "Gather" => one(gather(shape(0), shape(1), Some(0), 0)),
        "GatherNd" => one(gather_nd(shape(0), shape(1))),
        "ScatterNd" => one(c.shape_input(2)),
        // `ScatterNdTensorShape`: the tensor scattered into, of rank 1 or more.
        "TensorScatterUpdate" | "TensorScatterAdd" | "TensorScatterSub" | "TensorScatterMin" | "TensorScatterMax" => {
            let scalar = |i| dims::rank(shape(i)) == Some(0);
            one(if scalar(0) || scalar(1) || scalar(2) { None } else { shape(0).clone() })
        }
        // `UnchangedShape`.
        "MatrixBandPart" => one(shape(0).clone()),
        "OneHot" => one(one_hot(c)),
        "BroadcastGradientArgs" => outs([vector(-1), vector(-1)]),
        "BroadcastArgs" => one(vector(-1)),
        "ConcatOffset" => outs((1..c.n()).map(|i| shape(i).clone())),
        "DynamicStitch" | "ParallelDynamicStitch" => one(dynamic_stitch(c)),
        "UnsortedSegmentSum" | "UnsortedSegmentMax" | "UnsortedSegmentMin" | "UnsortedSegmentProd" => one(unsorted_segment(c)),
        "Where" => one(Some(vec![-1, dims::rank(shape(0)).map_or(-1, |r| r as i64)])),
        "Unique" => outs([vector(-1), vector(dims::dim(shape(0), 0))]),
        _ => None,
    }
}

/// TF's `SetOutputShapeForReshape`: the target, with one unknown dim
/// completed from the input's element count where both are known.
fn reshape(input: &Shape, target: Shape) -> Shape {
    let (Some(input), Some(mut out)) = (input.as_ref(), target.clone()) else { return target };
    let known_product = |d: &[i64]| -> (Option<i64>, Vec<usize>) {
        let unknown: Vec<usize> = (0..d.len()).filter(|&i| d[i] < 0).collect();
        (d.iter().filter(|&&x| x >= 0).try_fold(1i64, |a, &x| a.checked_mul(x)), unknown)
    };
    let (Some(out_known), out_unknown) = known_product(&out) else { return Some(out) };
    let (Some(in_known), in_unknown) = known_product(input) else { return Some(out) };
    match (in_unknown.len(), out_unknown.as_slice()) {
        (0, [i]) if out_known > 0 && in_known % out_known == 0 => out[*i] = in_known / out_known,
        (1, [i]) if in_known == out_known => out[*i] = -1,
        _ => {}
    }
    Some(out)
}

fn transpose(c: &Ctx) -> Shape {
    let input = c.shape(0);
    let Some(perm) = c.value(1) else {
        let rank = dims::rank(input).or_else(|| usize::try_from(dims::dim(c.shape(1), 0)).ok())?;
        return dims::unknown_dims(rank);
    };
    let input = dims::with_rank(input, perm.len())?;
    perm.iter().map(|&p| dims::axis(p, input.len()).map(|p| input[p])).collect()
}

fn expand_dims(c: &Ctx) -> Shape {
    let mut d = c.shape(0).clone()?;
    let axis = c.scalar(1)?;
    let at = dims::axis(axis, d.len() + 1)?;
    d.insert(at, 1);
    Some(d)
}

fn squeeze(c: &Ctx) -> Shape {
    let d = c.shape(0).as_ref()?;
    let wanted: Vec<usize> = c.ints("squeeze_dims").unwrap_or_default().iter().map(|&a| dims::axis(a, d.len())).collect::<Option<_>>()?;
    let mut out = Vec::new();
    for (i, &x) in d.iter().enumerate() {
        if wanted.is_empty() {
            // Without dims, unknown dims may or may not be 1: TF gives up.
            if x < 0 {
                return None;
            }
            if x != 1 {
                out.push(x);
            }
        } else if !wanted.contains(&i) {
            out.push(x);
        }
    }
    Some(out)
}

fn pack(c: &Ctx) -> Shape {
    let merged = (0..c.n()).try_fold(None, |acc: Shape, i| dims::merge(&acc, c.shape(i)))?;
    let mut d = merged?;
    let axis = dims::axis(c.int("axis").unwrap_or(0), d.len() + 1)?;
    d.insert(axis, c.n() as i64);
    Some(d)
}

/// TF's `ConcatShapeHelper`: inputs `values` along the axis input `axis`.
fn concat(c: &Ctx, axis: usize, values: std::ops::Range<usize>) -> Shape {
    let Some(a) = c.scalar(axis) else {
        // Unknown axis: the rank of any input, every dim unknown.
        let rank = values.clone().find_map(|i| dims::rank(c.shape(i)))?;
        return dims::unknown_dims(rank);
    };
    let rank = values.clone().find_map(|i| dims::rank(c.shape(i)))?;
    let a = dims::axis(a, rank)?;
    let mut out: Option<Vec<i64>> = None;
    for i in values {
        let d = dims::with_rank(c.shape(i), rank)?;
        out = Some(match out {
            None => d,
            Some(mut o) => {
                for j in 0..rank {
                    o[j] = if j == a { dims::add_dim(o[j], d[j]) } else { dims::merge_dim(o[j], d[j]).unwrap_or(o[j]) };
                }
                o
            }
        });
    }
    out
}

/// Split and SplitV along the axis value `axis` of input `value`.
fn split(c: &Ctx, value: usize, axis: Option<i64>) -> Option<Vec<Out>> {
    let num = usize::try_from(c.int("num_split")?).ok().filter(|&n| (1..=1 << 16).contains(&n))?;
    let input = c.shape(value);
    let (Some(d), Some(axis)) = (input.as_ref(), axis) else {
        return outs(vec![input.as_ref().and_then(|d| dims::unknown_dims(d.len())); num]);
    };
    let Some(axis) = dims::axis(axis, d.len()) else { return outs(vec![None; num]) };
    let sizes: Vec<i64> = if c.op == "SplitV" {
        match c.value(1) {
            Some(s) if s.len() == num => {
                let mut s = s.to_vec();
                // One -1 takes what the others leave.
                if let Some(i) = s.iter().position(|&x| x == -1) {
                    let rest: i64 = s.iter().filter(|&&x| x >= 0).sum();
                    s[i] = if d[axis] >= 0 { d[axis] - rest } else { -1 };
                }
                s
            }
            _ => vec![-1; num],
        }
    } else if d[axis] >= 0 && d[axis] % num as i64 == 0 {
        vec![d[axis] / num as i64; num]
    } else {
        vec![-1; num]
    };
    outs(sizes.into_iter().map(|s| {
        let mut o = d.clone();
        o[axis] = s;
        Some(o)
    }))
}

/// TF's `Slice` shape function: begins and sizes read as partial shapes
/// (a size of -1, known only from a value, takes the rest of the dim).
fn slice(c: &Ctx) -> Shape {
    let input = c.shape(0);
    let rank = dims::rank(input).or_else(|| usize::try_from(dims::dim(c.shape(1), 0)).ok())?;
    let begin = c.shape_input(1);
    let Some(size) = c.value(2) else {
        return match c.shape_input(2) {
            Some(sizes) => Some(sizes),
            None => dims::unknown_dims(rank),
        };
    };
    if size.len() != rank {
        return None;
    }
    let d = dims::with_rank(input, rank)?;
    let begin = dims::with_rank(&begin, rank)?;
    Some(
        (0..rank)
            .map(|i| match size[i] {
                -1 if d[i] >= 0 && begin[i] >= 0 => d[i].checked_sub(begin[i]).filter(|&x| x >= 0).unwrap_or(-1),
                s => s.max(-1),
            })
            .collect(),
    )
}

/// `DynamicStitch`: `[max index + 1]` (when every index is known) followed
/// by the data's dims past its indices'.
fn dynamic_stitch(c: &Ctx) -> Shape {
    let n = c.n() / 2;
    let mut extra: Shape = None;
    let mut max_index = Some(-1i64);
    for i in 0..n {
        let (indices, data) = (c.shape(i), c.shape(n + i));
        if let (Some(ix), Some(d)) = (indices, data) {
            let rest = Some(d.get(ix.len()..)?.to_vec());
            extra = dims::merge_or_first(&extra, &rest);
        }
        max_index = match (max_index, c.value(i)) {
            (Some(m), Some(v)) => Some(v.iter().copied().fold(m, i64::max)),
            _ => None,
        };
    }
    dims::concat(&Some(vec![max_index.and_then(|m| m.checked_add(1)).unwrap_or(-1)]), &extra)
}

/// `UnsortedSegment*`: `[num_segments]` followed by the data's dims past
/// the segment ids'.
fn unsorted_segment(c: &Ctx) -> Shape {
    let (data, ids) = (c.shape(0).as_ref()?, c.shape(1).as_ref()?);
    let rest = data.get(ids.len()..)?;
    let segments = c.scalar(2).filter(|&n| n >= 0).unwrap_or(-1);
    Some(std::iter::once(segments).chain(rest.iter().copied()).collect())
}

fn pad(c: &Ctx) -> Shape {
    let input = c.shape(0);
    let rank = dims::rank(input).or_else(|| usize::try_from(dims::dim(c.shape(1), 0)).ok())?;
    let Some(p) = c.value(1).filter(|p| p.len() == 2 * rank) else { return dims::unknown_dims(rank) };
    let d = dims::with_rank(input, rank)?;
    Some((0..rank).map(|i| dims::add_dim(d[i], p[2 * i].checked_add(p[2 * i + 1]).filter(|&x| x >= 0).unwrap_or(-1))).collect())
}

/// The multiples are read as a partial shape (a `Shape` of a partly known
/// tensor tiles its known dims).
fn tile(c: &Ctx) -> Shape {
    let input = c.shape(0);
    let rank = dims::rank(input).or_else(|| usize::try_from(dims::dim(c.shape(1), 0)).ok())?;
    let d = dims::with_rank(input, rank)?;
    match c.shape_input(1) {
        Some(m) if m.len() == rank => Some(d.iter().zip(&m).map(|(&x, &k)| dims::times(x, k)).collect()),
        _ => dims::unknown_dims(rank),
    }
}

/// `params[:axis] + indices + params[axis+1:]` (batch dims shared).
fn gather(params: &Shape, indices: &Shape, axis: Option<i64>, batch_dims: i64) -> Shape {
    let (p, i) = (params.as_ref()?, indices.as_ref()?);
    let axis = dims::axis(axis?, p.len())?;
    let batch = usize::try_from(if batch_dims < 0 { batch_dims + i.len() as i64 } else { batch_dims }).ok()?;
    if batch > axis || batch > i.len() {
        return None;
    }
    Some(p[..axis].iter().chain(&i[batch..]).chain(&p[axis + 1..]).copied().collect())
}

fn one_hot(c: &Ctx) -> Shape {
    let mut d = c.shape(0).clone()?;
    let depth = c.scalar(1).filter(|&x| x >= 0).unwrap_or(-1);
    let axis = c.int("axis").unwrap_or(-1);
    let at = if axis == -1 { d.len() } else { usize::try_from(axis).ok().filter(|&a| a <= d.len())? };
    d.insert(at, depth);
    Some(d)
}

/// TF's `ValidateStridedSliceOp` on a partially known input, as the
/// StridedSlice shape function runs it: begin and end may be unknown,
/// strides must be known.
fn strided_slice(c: &Ctx) -> Shape {
    let input = c.shape(0).as_ref()?;
    let strides = c.value(3)?;
    let n = strides.len();
    let (begin, end) = (c.value(1).filter(|b| b.len() == n), c.value(2).filter(|e| e.len() == n));
    let mask = |name: &str| c.int(name).unwrap_or(0);
    let (begin_mask, end_mask, mut ellipsis_mask, new_axis_mask, shrink_mask) =
        (mask("begin_mask"), mask("end_mask"), mask("ellipsis_mask"), mask("new_axis_mask"), mask("shrink_axis_mask"));
    let bit = |m: i64, i: usize| i < 63 && (m >> i) & 1 == 1;
    let mut sparse = n;
    if ellipsis_mask == 0 {
        ellipsis_mask = 1 << n.min(62);
        sparse += 1;
    }
    let rank = input.len();
    // Dense spec: (begin, end, stride, begin masked, end masked, shrink).
    struct Dense {
        begin: Option<i64>,
        end: Option<i64>,
        stride: i64,
        begin_masked: bool,
        end_masked: bool,
        shrink: bool,
    }
    const NEW_AXIS: isize = -1;
    const SHRINK: isize = -2;
    let mut dense: Vec<Dense> = Vec::with_capacity(rank);
    let mut gather: Vec<isize> = Vec::new();
    let mut ellipsis_seen = false;
    for i in 0..sparse {
        if bit(ellipsis_mask, i) && !ellipsis_seen {
            ellipsis_seen = true;
            let after = (i + 1..sparse).filter(|&j| bit(new_axis_mask, j)).count();
            let next = (rank + i + 1 + after).saturating_sub(sparse).min(rank);
            while dense.len() < next {
                gather.push(dense.len() as isize);
                dense.push(Dense { begin: Some(0), end: Some(0), stride: 1, begin_masked: true, end_masked: true, shrink: false });
            }
        } else if bit(new_axis_mask, i) {
            gather.push(NEW_AXIS);
        } else {
            if dense.len() == rank || i >= n {
                return None;
            }
            let shrink = bit(shrink_mask, i);
            gather.push(if shrink { SHRINK } else { dense.len() as isize });
            dense.push(Dense {
                begin: begin.map(|b| b[i]),
                end: end.map(|e| e[i]),
                stride: strides[i],
                begin_masked: bit(begin_mask, i),
                end_masked: bit(end_mask, i),
                shrink,
            });
        }
    }
    let known = begin.is_some() && end.is_some();
    let mut processing = Vec::with_capacity(dense.len());
    for (spec, &dim) in dense.iter().zip(input) {
        let s = spec.stride;
        if s == 0 || (spec.shrink && s <= 0) {
            return None;
        }
        if dim < 0 {
            processing.push(if spec.shrink { 1 } else { -1 });
            continue;
        }
        let interval = if known && spec.shrink {
            let b = spec.begin?;
            let b = if b < 0 { b + dim } else { b };
            if b < 0 || b >= dim {
                return None;
            }
            Some(1)
        } else if known {
            let (low, high) = if s > 0 { (0, dim) } else { (-1, dim - 1) };
            let canonical = |x: i64, masked: bool, is_end: bool| {
                if masked {
                    if (s > 0) != is_end { low } else { high }
                } else {
                    let x = if x < 0 { x.saturating_add(dim) } else { x };
                    x.clamp(low, high)
                }
            };
            Some(canonical(spec.end?, spec.end_masked, true) - canonical(spec.begin?, spec.begin_masked, false))
        } else if spec.shrink {
            Some(1)
        } else if spec.begin_masked && spec.end_masked {
            Some(if s < 0 { -dim } else { dim })
        } else {
            None
        };
        processing.push(match interval {
            Some(0) => 0,
            Some(len) if (len < 0) != (s < 0) => 0,
            Some(len) => len / s + i64::from(len % s != 0),
            None => -1,
        });
    }
    Some(
        gather
            .into_iter()
            .filter_map(|g| match g {
                NEW_AXIS => Some(1),
                SHRINK => None,
                g => processing.get(g as usize).copied(),
            })
            .collect(),
    )
}

/// TF's `GatherNdShape`: `indices[:-1] + params[indices[-1]:]`; unknown
/// when the params' rank or the indices' last dim is.
pub(crate) fn gather_nd(params: &Shape, indices: &Shape) -> Shape {
    let (params, indices) = (params.as_ref()?, indices.as_ref()?);
    let depth = usize::try_from(*indices.last()?).ok()?;
    if params.is_empty() || depth > params.len() {
        return None;
    }
    Some(indices[..indices.len() - 1].iter().chain(&params[depth..]).copied().collect())
}

#[cfg(test)]
mod tests {
    use super::reshape;

    #[test]
    fn reshape_completes_one_unknown_dim() {
        assert_eq!(reshape(&Some(vec![2, 3, 4]), Some(vec![-1, 12])), Some(vec![2, 12]));
        assert_eq!(reshape(&Some(vec![-1, 4, 4, 16]), Some(vec![-1, 256])), Some(vec![-1, 256]));
        assert_eq!(reshape(&Some(vec![-1, 6]), Some(vec![-1, 2, 3])), Some(vec![-1, 2, 3]));
        assert_eq!(reshape(&Some(vec![i64::MAX, 4]), Some(vec![-1, 2])), Some(vec![-1, 2]));
    }
}
