//! Interval arithmetic on half-open `(start, end)` pairs: union,
//! difference and coverage.
//!
//! It was written out once per reader (ranks, steps, device busy time,
//! HTA's breakdown), each copy with its own edge rules; here they are one
//! set of functions, and where callers differ the rule has a name
//! ([`Empty`]). Rules every caller shares:
//!
//! - Touching intervals merge: `(a, b)` and `(b, c)` give `(a, c)`.
//! - The union is built in order of starts: [`union`] sorts its input,
//!   [`union_in_order`] and [`measure_up_to`] take it already in order.

use std::iter::Sum;
use std::ops::{Add, Sub};

/// What a union does with an empty (`end == start`) or inverted
/// (`end < start`) interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Empty {
    /// Leave it out before merging.
    Drop,
    /// Merge it like any other: one that starts inside an earlier interval
    /// (or at its end) is absorbed, one that does not stands alone in the
    /// result as it was (an inverted one still inverted). HTA's
    /// `merge_kernel_intervals` does this (its order decides where an
    /// inverted interval shares its start with another), as do the readers
    /// that always kept them, whose intervals are never inverted (an empty
    /// one adds nothing to a length).
    Keep,
}

/// The union of intervals given in order of their starts, as disjoint
/// intervals in order, merged as they come (nothing is held but the
/// interval being merged).
pub fn union_in_order<T, I>(intervals: I, empty: Empty) -> impl Iterator<Item = (T, T)>
where
    T: Copy + Ord,
    I: IntoIterator<Item = (T, T)>,
{
    let mut intervals = intervals.into_iter().filter(move |&(start, end)| empty == Empty::Keep || end > start).peekable();
    std::iter::from_fn(move || {
        let mut open = intervals.next()?;
        while let Some(&(start, end)) = intervals.peek() {
            if start > open.1 {
                break;
            }
            open.1 = open.1.max(end);
            intervals.next();
        }
        Some(open)
    })
}

/// The union of intervals in any order, as disjoint intervals in order.
pub fn union<T: Copy + Ord>(mut intervals: Vec<(T, T)>, empty: Empty) -> Vec<(T, T)> {
    intervals.sort_unstable();
    union_in_order(intervals, empty).collect()
}

/// What of disjoint sorted intervals `a` no interval of disjoint sorted
/// `b` covers.
pub fn difference<T: Copy + Ord>(a: &[(T, T)], b: &[(T, T)]) -> Vec<(T, T)> {
    let mut out = Vec::new();
    let mut k = 0;
    for &(mut start, end) in a {
        while k < b.len() && b[k].1 <= start {
            k += 1;
        }
        let mut j = k;
        while j < b.len() && b[j].0 < end {
            if b[j].0 > start {
                out.push((start, b[j].0));
            }
            start = start.max(b[j].1);
            j += 1;
        }
        if start < end {
            out.push((start, end));
        }
    }
    out
}

/// How much of `[start, end)` disjoint sorted intervals cover. A piece
/// that comes out negative (the window ends before it starts) counts as
/// nothing.
pub fn covered<T>(intervals: &[(T, T)], start: T, end: T) -> T
where
    T: Copy + Ord + Sub<Output = T> + Sum<T> + Default,
{
    let first = intervals.partition_point(|i| i.1 <= start);
    intervals[first..].iter().take_while(|i| i.0 < end).map(|i| i.1.min(end) - i.0.max(start)).filter(|&d| d > T::default()).sum()
}

/// How much of the time before each of `points` (in order) the union of
/// `intervals` (in order of their starts, empty ones dropped) covers: the
/// union's measure up to each point, so that a window's [`covered`] is the
/// difference of its ends', without holding the union.
pub fn measure_up_to<T, I>(intervals: I, points: &[T]) -> Vec<T>
where
    T: Copy + Ord + Sub<Output = T> + Add<Output = T> + Default,
    I: IntoIterator<Item = (T, T)>,
{
    let mut at = vec![T::default(); points.len()];
    let (mut next, mut done) = (0, T::default());
    for (b, e) in union_in_order(intervals, Empty::Drop) {
        while next < points.len() && points[next] <= b {
            at[next] = done;
            next += 1;
        }
        while next < points.len() && points[next] < e {
            at[next] = done + (points[next] - b);
            next += 1;
        }
        done = done + (e - b);
    }
    at[next..].fill(done);
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::XorShift;

    #[test]
    fn touching_intervals_merge() {
        assert_eq!(union(vec![(0, 5), (5, 8)], Empty::Drop), vec![(0, 8)]);
        assert_eq!(union(vec![(0, 5), (5, 8)], Empty::Keep), vec![(0, 8)]);
        assert_eq!(union(vec![(0, 5), (6, 8)], Empty::Drop), vec![(0, 5), (6, 8)]);
    }

    #[test]
    fn nested_and_overlapping_intervals_merge() {
        assert_eq!(union(vec![(0, 10), (2, 3), (5, 12), (20, 30)], Empty::Drop), vec![(0, 12), (20, 30)]);
        assert_eq!(union(vec![(0, 5), (3, 8), (8, 9), (10, 12), (11, 11)], Empty::Keep), vec![(0, 9), (10, 12)]);
    }

    #[test]
    fn unsorted_input_is_sorted_first() {
        assert_eq!(union(vec![(20, 30), (5, 12), (0, 10)], Empty::Drop), vec![(0, 12), (20, 30)]);
        assert!(union(Vec::<(i64, i64)>::new(), Empty::Drop).is_empty());
    }

    #[test]
    fn empty_and_inverted_intervals_drop_or_stay() {
        // Alone: dropped, or kept as they were.
        assert_eq!(union(vec![(5, 5), (10, 20)], Empty::Drop), vec![(10, 20)]);
        assert_eq!(union(vec![(5, 5), (10, 20)], Empty::Keep), vec![(5, 5), (10, 20)]);
        assert_eq!(union(vec![(30, 25), (10, 20)], Empty::Keep), vec![(10, 20), (30, 25)]);
        assert_eq!(union(vec![(30, 25), (10, 20)], Empty::Drop), vec![(10, 20)]);
        // Inside (or at the end of) another: absorbed either way.
        assert_eq!(union(vec![(0, 10), (4, 2), (10, 10)], Empty::Keep), vec![(0, 10)]);
        // Kept, an inverted interval opens a group that a later start
        // past its end does not join (HTA's rule).
        assert_eq!(union_in_order([(5, 3), (5, 9)], Empty::Keep).collect::<Vec<_>>(), vec![(5, 3), (5, 9)]);
        assert_eq!(union_in_order([(5, 9), (5, 3)], Empty::Keep).collect::<Vec<_>>(), vec![(5, 9)]);
    }

    #[test]
    fn difference_cuts_out_and_splits() {
        let a = union(vec![(0, 10), (5, 12), (20, 30)], Empty::Drop);
        assert_eq!(difference(&a, &[(2, 4), (11, 21), (25, 26)]), vec![(0, 2), (4, 11), (21, 25), (26, 30)]);
        assert_eq!(difference(&[(0, 10), (15, 30)], &[(0, 20)]), vec![(20, 30)]);
        assert_eq!(difference(&[(15, 30), (40, 50)], &[(0, 20)]), vec![(20, 30), (40, 50)]);
        // An empty interval of `b` splits without taking anything.
        assert_eq!(difference(&[(0, 10)], &[(5, 5)]), vec![(0, 5), (5, 10)]);
        assert!(difference(&[(3, 3)], &[(0, 1)]).is_empty());
    }

    #[test]
    fn covered_clips_to_the_window() {
        let a = [(0, 12), (20, 30)];
        assert_eq!(covered(&a, 10, 25), 7);
        assert_eq!(covered(&a, 12, 20), 0);
        assert_eq!(covered(&a, -5, 100), 22);
        // A window that ends before it starts covers nothing.
        assert_eq!(covered(&a, 8, 4), 0);
        assert_eq!(covered::<i64>(&[], 0, 1), 0);
    }

    /// The union's measure up to each point gives every window's cover, as
    /// the union held whole does.
    #[test]
    fn measure_up_to_points_covers_as_the_union() {
        let mut rng = XorShift::new(0xc0ffee);
        for _ in 0..500 {
            let mut spans: Vec<(i128, i128)> =
                (0..rng.below(40)).map(|_| (rng.below(200) as i128 - 50, rng.below(60) as i128 - 10)).map(|(b, d)| (b, b + d)).collect();
            spans.sort_unstable();
            let queries: Vec<(i128, i128)> =
                (0..rng.below(10) + 1).map(|_| (rng.below(300) as i128 - 100, rng.below(120) as i128)).map(|(b, d)| (b, b + d)).collect();
            let mut points: Vec<i128> = queries.iter().flat_map(|q| [q.0, q.1]).collect();
            points.sort_unstable();
            points.dedup();
            let at = measure_up_to(spans.iter().copied(), &points);
            let whole: Vec<_> = union_in_order(spans.iter().copied(), Empty::Drop).collect();
            assert_eq!(whole, union(spans.clone(), Empty::Drop));
            for (b, e) in queries {
                let k = |t| points.binary_search(&t).unwrap();
                assert_eq!(at[k(e)] - at[k(b)], covered(&whole, b, e), "{spans:?} [{b}, {e})");
            }
        }
    }
}
