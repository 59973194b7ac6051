//! Convolutions, pooling, batch norm and losses (`nn_ops.cc`,
//! `common_shape_fns.cc`).

use super::super::dims::{self, Shape};
use super::super::{Ctx, Out};
use super::{one, outs, scalar, vector};

pub(crate) fn infer(c: &Ctx) -> Option<Vec<Out>> {
    match c.op {
        "Conv2D" | "_FusedConv2D" => one(conv(c, 2, ConvFilter::Full)),
        "Conv3D" => one(conv(c, 3, ConvFilter::Full)),
        "DepthwiseConv2dNative" => one(conv(c, 2, ConvFilter::Depthwise)),
        "MaxPool" | "AvgPool" => one(conv(c, 2, ConvFilter::Pool)),
        // ksize and strides as inputs: unknown unless both are constants.
        "MaxPoolV2" => match (c.value(1), c.value(2)) {
            (Some(ksize), Some(strides)) => one(windowed(c, 2, ConvFilter::Pool, Some(ksize), strides)),
            _ => one(None),
        },
        "Dilation2D" => one(dilation(c)),
        "Dilation2DBackpropInput" => one(c.shape(0).clone()),
        "Dilation2DBackpropFilter" => one(c.shape(1).clone()),
        "MaxPool3D" | "AvgPool3D" => one(conv(c, 3, ConvFilter::Pool)),
        "Conv2DBackpropInput" | "DepthwiseConv2dNativeBackpropInput" | "AvgPoolGrad" => one(ranked(c.shape_input(0), 4)),
        "Conv3DBackpropInputV2" | "AvgPool3DGrad" => one(ranked(c.shape_input(0), 5)),
        "Conv2DBackpropFilter" | "DepthwiseConv2dNativeBackpropFilter" => one(ranked(c.shape_input(1), 4)),
        "Conv3DBackpropFilterV2" => one(ranked(c.shape_input(1), 5)),
        "MaxPoolGrad" | "MaxPoolGradGrad" | "MaxPoolGradV2" | "MaxPoolGradGradV2" => one(ranked(c.shape(0).clone(), 4)),
        "MaxPool3DGrad" | "MaxPool3DGradGrad" => one(ranked(c.shape(0).clone(), 5)),
        "FusedBatchNorm" | "FusedBatchNormV2" | "FusedBatchNormV3" => {
            let (x, channels) = batch_norm_input(c, 0);
            let v = vector(channels);
            let mut shapes = vec![x, v.clone(), v.clone(), v.clone(), v];
            if c.op == "FusedBatchNormV3" {
                shapes.push(None);
            }
            outs(shapes)
        }
        "FusedBatchNormGrad" | "FusedBatchNormGradV2" | "FusedBatchNormGradV3" => {
            let (dy, channels) = batch_norm_input(c, 0);
            let (x, _) = batch_norm_input(c, 1);
            let is_training = c.attrs.get("is_training").is_none() || c.flag("is_training");
            let reserve = if is_training { vector(0) } else { vector(channels) };
            outs([dims::merge_or_first(&dy, &x), vector(channels), vector(channels), reserve.clone(), reserve])
        }
        "SoftmaxCrossEntropyWithLogits" => {
            let both = dims::broadcast(c.shape(0), c.shape(1));
            let m = ranked(both, 2);
            outs([Some(vec![dims::dim(&m, 0)]), m])
        }
        "SparseSoftmaxCrossEntropyWithLogits" => {
            let features = ranked(c.shape(0).clone(), 2);
            let batch = dims::merge_dim(dims::dim(&features, 0), dims::dim(c.shape(1), 0)).unwrap_or(-1);
            outs([Some(vec![batch]), Some(vec![batch, dims::dim(&features, 1)])])
        }
        "InTopK" | "InTopKV2" => one(Some(vec![dims::dim(c.shape(1), 0)])),
        "TopKV2" | "TopK" => {
            let values = top_k(c);
            outs([values.clone(), values])
        }
        "Dropout" => one(scalar()),
        _ => None,
    }
}

/// TF's `TopKShapeFn`: the input with its last dim replaced by `k` (an
/// input of TopKV2, an attr of TopK); unknown for an unknown rank.
fn top_k(c: &Ctx) -> Shape {
    let k = if c.op == "TopKV2" {
        match c.value(1) {
            // `MakeDimForScalarInput`: a scalar, not negative.
            Some(&[k]) if k >= 0 && dims::rank(c.shape(1)) == Some(0) => k,
            Some(_) => return None,
            None => -1,
        }
    } else {
        c.int("k").filter(|&k| k >= 0)?
    };
    let mut d = c.shape(0).clone()?;
    let last = d.last_mut()?;
    if *last >= 0 && k >= 0 && *last < k {
        return None;
    }
    *last = k;
    Some(d)
}

/// `shape` with rank `rank` (unknown rank: that many unknown dims).
fn ranked(shape: Shape, rank: usize) -> Shape {
    dims::with_rank(&shape, rank)
}

/// FusedBatchNorm's input `i` (rank 4 or 5) and its channel count merged
/// with `scale` (input 1 of the forward op, 2 of the gradient).
fn batch_norm_input(c: &Ctx, i: usize) -> (Shape, i64) {
    let x = c.shape(i).clone().and_then(|d| (d.len() == 4 || d.len() == 5).then_some(d));
    let x = x.or_else(|| dims::unknown_dims(4));
    let channel = if c.channels_first() { 1 } else { dims::rank(&x).unwrap_or(4) - 1 };
    let scale = if c.op.contains("Grad") { 2 } else { 1 };
    let channels = dims::merge_dim(dims::dim(&x, channel as i64), dims::dim(c.shape(scale), 0)).unwrap_or(-1);
    let mut x = x;
    if let Some(d) = x.as_mut() {
        d[channel] = channels;
    }
    (x, channels)
}

#[derive(Clone, Copy, PartialEq)]
enum ConvFilter {
    /// `[spatial…, in, out]`: `out` channels.
    Full,
    /// `[h, w, in, multiplier]`: `in · multiplier` channels.
    Depthwise,
    /// No filter: `ksize`, channels kept.
    Pool,
}

/// Output shape of a convolution or pooling over `spatial` dims: TF's
/// `Conv2DShape`/`Conv3DShape`/`DepthwiseConv2DNativeShape`/`MaxPoolShape`
/// (`GetWindowedOutputSize` for VALID, SAME and EXPLICIT padding).
fn conv(c: &Ctx, spatial: usize, filter: ConvFilter) -> Shape {
    let ksize = if filter == ConvFilter::Pool { Some(c.ints("ksize")?) } else { None };
    windowed(c, spatial, filter, ksize, c.ints("strides")?)
}

/// [`conv`] with the pooling window `ksize` and `strides` given (attrs, or
/// MaxPoolV2's inputs).
fn windowed(c: &Ctx, spatial: usize, filter: ConvFilter, ksize: Option<&[i64]>, strides: &[i64]) -> Shape {
    let rank = spatial + 2;
    let input = dims::with_rank(c.shape(0), rank)?;
    let first = c.channels_first();
    let (batch, channels, space): (i64, i64, Vec<i64>) =
        if first { (input[0], input[1], input[2..].to_vec()) } else { (input[0], input[rank - 1], input[1..rank - 1].to_vec()) };
    // The window and stride per spatial dim, in NHWC/NCHW order of attrs.
    let pick = |attr: &[i64]| -> Option<Vec<i64>> {
        if attr.len() != rank {
            return None;
        }
        Some(if first { attr[2..].to_vec() } else { attr[1..rank - 1].to_vec() })
    };
    let strides = pick(strides)?;
    let dilations = match c.ints("dilations") {
        Some(d) if !d.is_empty() => pick(d)?,
        _ => vec![1; spatial],
    };
    let (window, out_channels): (Vec<i64>, i64) = match filter {
        ConvFilter::Pool => (pick(ksize?)?, channels),
        _ => {
            let f = dims::with_rank(c.shape(1), rank)?;
            let out = match filter {
                ConvFilter::Full => f[rank - 1],
                _ => dims::mul_dim(f[2], f[3]),
            };
            (f[..spatial].to_vec(), out)
        }
    };
    let padding = c.string("padding").unwrap_or_default();
    let explicit = c.ints("explicit_paddings").unwrap_or_default();
    let mut out_space = Vec::with_capacity(spatial);
    for i in 0..spatial {
        let (size, k, s, d) = (space[i], window[i], strides[i], dilations[i]);
        if s <= 0 || d <= 0 {
            return None;
        }
        out_space.push(if size < 0 || k < 0 {
            -1
        } else {
            let effective = (k - 1).checked_mul(d)?.checked_add(1)?;
            let pads = match padding {
                b"VALID" => 0,
                b"SAME" => {
                    out_space.push(size.checked_add(s - 1)? / s);
                    continue;
                }
                b"EXPLICIT" => {
                    let at = if first { 2 * (i + 2) } else { 2 * (i + 1) };
                    explicit.get(at)?.checked_add(*explicit.get(at + 1)?)?
                }
                _ => return None,
            };
            size.checked_add(pads)?.checked_sub(effective)?.checked_add(s)?.div_euclid(s).max(0)
        });
    }
    Some(if first {
        [batch, out_channels].into_iter().chain(out_space).collect()
    } else {
        std::iter::once(batch).chain(out_space).chain([out_channels]).collect()
    })
}

/// TF's Dilation2D shape function: input `[batch, rows, cols, depth]`,
/// filter `[rows, cols, depth]`, `strides` and `rates` `[1, r, c, 1]`; the
/// output's spatial dims are unknown unless the input's and the filter's
/// are all known, its depth is the filter's.
fn dilation(c: &Ctx) -> Shape {
    let input = dims::with_rank(c.shape(0), 4)?;
    let filter = dims::with_rank(c.shape(1), 3)?;
    let (strides, rates) = (c.ints("strides")?, c.ints("rates")?);
    if strides.len() != 4 || rates.len() != 4 {
        return None;
    }
    let (batch, depth) = (input[0], filter[2]);
    if [input[1], input[2], filter[0], filter[1]].iter().any(|&d| d < 0) {
        return Some(vec![batch, -1, -1, depth]);
    }
    dims::merge_dim(input[3], depth)?;
    let mut out = vec![batch];
    for i in 0..2 {
        let (size, k, stride, rate) = (input[1 + i], filter[i], strides[1 + i], rates[1 + i]);
        if stride <= 0 || rate <= 0 {
            return None;
        }
        let effective = (k - 1).checked_mul(rate - 1)?.checked_add(k)?;
        out.push(match c.string("padding")? {
            b"VALID" => size.checked_sub(effective)?.checked_add(stride)?.div_euclid(stride).max(0),
            b"SAME" => size.checked_add(stride - 1)? / stride,
            _ => return None,
        });
    }
    out.push(depth);
    Some(out)
}
