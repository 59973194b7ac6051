//! What shape inference reads from a `TensorProto` (a `Const`'s `value`):
//! its shape, and its values when it is a small integer tensor (the shapes,
//! axes and permutations other ops' shapes depend on).

use super::dims::Shape;
use crate::proto::tensorflow::{TensorProto, TensorShapeProto};

/// Integer tensors longer than this are not read: shape arguments are
/// short, and folding must stay cheap on any graph.
pub const MAX_VALUES: usize = 1 << 12;

/// `DT_INT32`, `DT_INT64`: the dtypes whose values fold.
pub const INT32: i32 = 3;
pub const INT64: i32 = 9;

/// A `TensorShapeProto` as a [`Shape`] (negative dims unknown).
pub fn from_proto(proto: &TensorShapeProto) -> Shape {
    (!proto.unknown_rank).then(|| proto.dim.iter().map(|d| if d.size < 0 { -1 } else { d.size }).collect())
}

/// The tensor's dims (TF takes a `TensorProto`'s shape as written).
pub fn shape(tensor: &TensorProto) -> Shape {
    Some(tensor.tensor_shape.as_ref().map(|s| s.dim.iter().map(|d| d.size.max(-1)).collect()).unwrap_or_default())
}

/// The values of an int32/int64 tensor of at most [`MAX_VALUES`]
/// elements, in row-major order: from `tensor_content`, or from the typed
/// list with its last value repeated to fill the shape (TF's rule).
pub fn int_values(tensor: &TensorProto) -> Option<Vec<i64>> {
    let n = usize::try_from(super::dims::elements(&shape(tensor))?).ok().filter(|&n| n <= MAX_VALUES)?;
    let width = match tensor.dtype {
        INT32 => 4,
        INT64 => 8,
        _ => return None,
    };
    if !tensor.tensor_content.is_empty() {
        if tensor.tensor_content.len() != n * width {
            return None;
        }
        return Some(
            tensor
                .tensor_content
                .chunks_exact(width)
                .map(|c| if width == 4 { i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])) } else { i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) })
                .collect(),
        );
    }
    let listed: Vec<i64> = if tensor.dtype == INT32 { tensor.int_val.iter().map(|&v| i64::from(v)).collect() } else { tensor.int64_val.clone() };
    if listed.len() > n {
        return None;
    }
    let fill = listed.last().copied().unwrap_or(0);
    Some(listed.into_iter().chain(std::iter::repeat(fill)).take(n).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tensorflow::tensor_shape_proto::Dim;

    fn tensor(dtype: i32, dims: &[i64]) -> TensorProto {
        TensorProto {
            dtype,
            tensor_shape: Some(TensorShapeProto { dim: dims.iter().map(|&size| Dim { size, name: String::new() }).collect(), unknown_rank: false }),
            ..Default::default()
        }
    }

    #[test]
    fn values_from_content_or_a_repeated_list() {
        let mut t = tensor(INT32, &[3]);
        t.tensor_content = [1i32, -1, 7].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(int_values(&t), Some(vec![1, -1, 7]));
        t.tensor_content.pop();
        assert_eq!(int_values(&t), None, "a truncated content is no value");
        let mut t = tensor(INT64, &[2, 2]);
        t.int64_val = vec![5];
        assert_eq!(int_values(&t), Some(vec![5; 4]));
        assert_eq!(int_values(&tensor(INT32, &[i64::MAX, 2])), None, "no huge tensor is read");
        assert_eq!(int_values(&tensor(1, &[2])), None, "floats do not fold");
    }
}
