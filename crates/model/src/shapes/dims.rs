//! Partially known shapes and the arithmetic TF's `InferenceContext`
//! does on them (merge, broadcast, concatenation, subshapes).
//!
//! A [`Shape`] is `None` for an unknown rank, else its dims with `-1` for
//! an unknown one, as `TensorShapeProto` and `TensorShape.as_list()` write
//! them. All products are checked: a graph may claim any dims.

/// `None`: unknown rank; `-1`: unknown dim.
pub type Shape = Option<Vec<i64>>;

/// A shape whose rank is `rank` with every dim unknown.
pub fn unknown_dims(rank: usize) -> Shape {
    Some(vec![-1; rank])
}

/// Every dim known (a scalar included).
pub fn is_fully_known(shape: &Shape) -> bool {
    shape.as_ref().is_some_and(|dims| dims.iter().all(|&d| d >= 0))
}

/// The number of elements, if every dim is known and the product fits.
pub fn elements(shape: &Shape) -> Option<i64> {
    let dims = shape.as_ref()?;
    dims.iter().try_fold(1i64, |acc, &d| if d < 0 { None } else { acc.checked_mul(d) })
}

/// TF's `Merge` of two dims: equal, or one unknown; `None` on a conflict.
pub fn merge_dim(a: i64, b: i64) -> Option<i64> {
    match (a, b) {
        (-1, d) | (d, -1) => Some(d),
        (a, b) if a == b => Some(a),
        _ => None,
    }
}

/// TF's `Merge` of two shapes: the more known of the two, dim by dim;
/// `None` when their ranks or a pair of known dims differ.
pub fn merge(a: &Shape, b: &Shape) -> Option<Shape> {
    match (a, b) {
        (None, s) | (s, None) => Some(s.clone()),
        (Some(x), Some(y)) if x.len() == y.len() => x.iter().zip(y).map(|(&p, &q)| merge_dim(p, q)).collect::<Option<Vec<_>>>().map(Some),
        _ => None,
    }
}

/// `merge`, or the first shape when the two conflict (TF would reject the
/// graph; a guess is not made).
pub fn merge_or_first(a: &Shape, b: &Shape) -> Shape {
    merge(a, b).unwrap_or_else(|| a.clone())
}

/// The rank, when known.
pub fn rank(shape: &Shape) -> Option<usize> {
    shape.as_ref().map(Vec::len)
}

/// Dim `i` (negative: from the end), `-1` when unknown or out of range.
pub fn dim(shape: &Shape, i: i64) -> i64 {
    let Some(dims) = shape else { return -1 };
    let at = if i < 0 { i.checked_add(dims.len() as i64) } else { Some(i) };
    at.and_then(|at| usize::try_from(at).ok()).and_then(|at| dims.get(at).copied()).unwrap_or(-1)
}

/// `shape` with rank `rank`, merged with what it says; unknown rank becomes
/// `rank` unknown dims. `None` when its rank is another.
pub fn with_rank(shape: &Shape, rank: usize) -> Option<Vec<i64>> {
    match shape {
        None => Some(vec![-1; rank]),
        Some(dims) if dims.len() == rank => Some(dims.clone()),
        Some(_) => None,
    }
}

/// TF's `BroadcastBinaryOpOutputShapeFnHelper`: numpy broadcasting where a
/// known dim above 1 wins, a 1 yields to the other dim, and two unknown
/// dims give an unknown one.
pub fn broadcast(x: &Shape, y: &Shape) -> Shape {
    let (x, y) = (x.as_ref()?, y.as_ref()?);
    let rank = x.len().max(y.len());
    let at = |dims: &Vec<i64>, i: usize| if i < rank - dims.len() { 1 } else { dims[i - (rank - dims.len())] };
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let (a, b) = (at(x, i), at(y, i));
        out.push(if a > 1 {
            a
        } else if b > 1 || a == 1 {
            b
        } else if b == 1 {
            a
        } else if a < 0 && b < 0 {
            -1
        } else {
            // 0 with 0 or with unknown.
            merge_dim(a, b).unwrap_or(0)
        });
    }
    Some(out)
}

/// `a` followed by `b` (unknown if either rank is).
pub fn concat(a: &Shape, b: &Shape) -> Shape {
    let (a, b) = (a.as_ref()?, b.as_ref()?);
    Some(a.iter().chain(b).copied().collect())
}

/// Python's `dims[begin:end:stride]` of a known rank (TF's `Subshape`).
pub fn subshape(shape: &Shape, begin: i64, end: i64, stride: i64) -> Shape {
    let dims = shape.as_ref()?;
    let indices = slice_indices(dims.len() as i64, begin, end, stride)?;
    Some(indices.into_iter().map(|i| dims[i]).collect())
}

/// The indices `range(n)[begin:end:stride]` picks, as Python clamps them.
pub fn slice_indices(n: i64, begin: i64, end: i64, stride: i64) -> Option<Vec<usize>> {
    if stride == 0 {
        return None;
    }
    let clamp = |v: i64, low: i64, high: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(low, high)
    };
    let mut out = Vec::new();
    if stride > 0 {
        let (mut i, end) = (clamp(begin, 0, n), clamp(end, 0, n));
        while i < end {
            out.push(i as usize);
            i = i.checked_add(stride)?;
        }
    } else {
        let (mut i, end) = (clamp(begin, -1, n - 1), clamp(end, -1, n - 1));
        while i > end {
            out.push(i as usize);
            i = i.checked_add(stride)?;
        }
    }
    Some(out)
}

/// An axis in `[-rank, rank)` made non-negative.
pub fn axis(axis: i64, rank: usize) -> Option<usize> {
    let rank = rank as i64;
    let a = if axis < 0 { axis.checked_add(rank)? } else { axis };
    (0..rank).contains(&a).then_some(a as usize)
}

/// `a · b` of two dims, unknown if either is.
pub fn mul_dim(a: i64, b: i64) -> i64 {
    if a < 0 || b < 0 { -1 } else { a.checked_mul(b).unwrap_or(-1) }
}

/// TF's `Multiply` of two dims: a 1 yields the other, a 0 gives 0 even
/// with an unknown one.
pub fn times(a: i64, b: i64) -> i64 {
    match (a, b) {
        (1, x) | (x, 1) => x,
        (0, _) | (_, 0) => 0,
        _ => mul_dim(a, b),
    }
}

/// `a + b` of two dims, unknown if either is.
pub fn add_dim(a: i64, b: i64) -> i64 {
    if a < 0 || b < 0 { -1 } else { a.checked_add(b).unwrap_or(-1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_follows_tensorflow() {
        assert_eq!(broadcast(&Some(vec![3, 1]), &Some(vec![1, 4])), Some(vec![3, 4]));
        assert_eq!(broadcast(&Some(vec![-1, 4]), &Some(vec![4])), Some(vec![-1, 4]));
        assert_eq!(broadcast(&Some(vec![-1]), &Some(vec![1])), Some(vec![-1]));
        assert_eq!(broadcast(&Some(vec![-1]), &Some(vec![-1])), Some(vec![-1]));
        assert_eq!(broadcast(&Some(vec![0]), &Some(vec![-1])), Some(vec![0]));
        assert_eq!(broadcast(&None, &Some(vec![1])), None);
    }

    #[test]
    fn slices_clamp_like_python() {
        assert_eq!(subshape(&Some(vec![1, 2, 3, 4]), 1, i64::MAX, 1), Some(vec![2, 3, 4]));
        assert_eq!(subshape(&Some(vec![1, 2, 3, 4]), -1, i64::MAX, 1), Some(vec![4]));
        assert_eq!(subshape(&Some(vec![1, 2, 3, 4]), -1, -5, -1), Some(vec![4, 3, 2, 1]));
        assert_eq!(subshape(&Some(vec![1, 2]), 0, 2, 0), None);
        assert_eq!(slice_indices(3, i64::MIN, i64::MAX, i64::MAX), Some(vec![0]));
    }
}
