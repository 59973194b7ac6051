//! Sibling order (`SortNodes`): ascending name, or descending by a total.
//! Ties are not broken by name; they keep their previous order. Every view
//! sorts with `std::stable_sort` in current tfprof (older revisions used
//! `std::sort` in the code and op views; the TF 2.21 goldens settle it).

use super::options::OrderBy;
use crate::stats::Metrics;

/// What the comparator looks at.
#[derive(Clone, Copy, Debug)]
pub struct SortKey<'n> {
    pub name: &'n str,
    pub totals: Metrics,
    /// Graph nodes in a code/op node; `None` in scope/graph views, where
    /// `occurrence` orders by name.
    pub occurrence: Option<usize>,
}

/// tfprof's "less": does `a` come before `b`?
pub fn precedes(order_by: OrderBy, a: &SortKey<'_>, b: &SortKey<'_>) -> bool {
    let root = crate::views::ROOT_NAME;
    if a.name == root {
        return true;
    }
    if b.name == root {
        return false;
    }
    let (x, y) = (&a.totals, &b.totals);
    match order_by {
        OrderBy::Name | OrderBy::Depth => a.name < b.name,
        OrderBy::Natural => natural_cmp(a.name, b.name).is_lt(),
        OrderBy::Bytes => x.requested_bytes > y.requested_bytes,
        OrderBy::PeakBytes => x.peak_bytes > y.peak_bytes,
        OrderBy::ResidualBytes => x.residual_bytes > y.residual_bytes,
        OrderBy::OutputBytes => x.output_bytes > y.output_bytes,
        OrderBy::Micros => x.exec_micros > y.exec_micros,
        OrderBy::AcceleratorMicros => x.accelerator_micros > y.accelerator_micros,
        OrderBy::CpuMicros => x.cpu_micros > y.cpu_micros,
        OrderBy::Params => x.parameters > y.parameters,
        OrderBy::FloatOps => x.float_ops > y.float_ops,
        OrderBy::Occurrence => match (a.occurrence, b.occurrence) {
            (Some(m), Some(n)) => m > n,
            _ => a.name < b.name,
        },
    }
}

/// Names compared with their runs of digits as numbers (`layer_2` before
/// `layer_10`, as a person counts; tfprof's `name` puts `layer_10` first),
/// the rest byte by byte; names equal that way (`x01`, `x1`) by their bytes.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let run = |s: &[u8], at: usize| at + s[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            let (ei, ej) = (run(x, i), run(y, j));
            let strip = |s: &'_ [u8]| -> usize { s.iter().take_while(|&&c| c == b'0').count() };
            let (n, m) = (&x[i + strip(&x[i..ei])..ei], &y[j + strip(&y[j..ej])..ej]);
            let order = n.len().cmp(&m.len()).then_with(|| n.cmp(m));
            if order != Ordering::Equal {
                return order;
            }
            (i, j) = (ei, ej);
        } else {
            if x[i] != y[j] {
                return x[i].cmp(&y[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (x.len() - i).cmp(&(y.len() - j)).then_with(|| x.cmp(y))
}

/// Sorts `items` stably by tfprof's comparator over their keys.
pub fn stable_sort<'n, T: Copy>(items: &mut [T], order_by: OrderBy, key: impl Fn(T) -> SortKey<'n>) {
    let mut keyed: Vec<(SortKey<'n>, T)> = items.iter().map(|&t| (key(t), t)).collect();
    keyed.sort_by(|a, b| {
        if precedes(order_by, &a.0, &b.0) {
            std::cmp::Ordering::Less
        } else if precedes(order_by, &b.0, &a.0) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    for (slot, (_, t)) in items.iter_mut().zip(keyed) {
        *slot = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, bytes: i64) -> SortKey<'_> {
        SortKey { name, totals: Metrics { requested_bytes: bytes, ..Default::default() }, occurrence: Some(bytes as usize) }
    }

    #[test]
    fn totals_sort_descending_and_ties_keep_their_order() {
        let keys = [key("b", 1), key("a", 5), key("c", 1), key("d", 5)];
        let mut items = [0, 1, 2, 3];
        stable_sort(&mut items, OrderBy::Bytes, |i| keys[i]);
        assert_eq!(items, [1, 3, 0, 2]);
        stable_sort(&mut items, OrderBy::Name, |i| keys[i]);
        assert_eq!(items, [1, 0, 2, 3]);
    }

    #[test]
    fn natural_order_counts_numbers() {
        let mut names = ["layer_10", "layer_2", "layer_1", "layer", "layer_02", "Layer_3", "layer_1a", "a10b2", "a10b10", "a9"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, ["Layer_3", "a9", "a10b2", "a10b10", "layer", "layer_1", "layer_1a", "layer_02", "layer_2", "layer_10"]);
        let keys: Vec<SortKey<'_>> = ["dense_10", "dense_9", "dense_0"].iter().map(|n| key(n, 0)).collect();
        let mut items = [0, 1, 2];
        stable_sort(&mut items, OrderBy::Natural, |i| keys[i]);
        assert_eq!(items, [2, 1, 0]);
        stable_sort(&mut items, OrderBy::Name, |i| keys[i]);
        assert_eq!(items, [2, 0, 1]);
    }

    #[test]
    fn occurrence_orders_by_name_where_the_view_has_no_count() {
        let a = SortKey { occurrence: None, ..key("a", 1) };
        let b = SortKey { occurrence: None, ..key("b", 9) };
        assert!(precedes(OrderBy::Occurrence, &a, &b));
        assert!(precedes(OrderBy::Occurrence, &key("b", 9), &key("a", 1)));
    }
}
