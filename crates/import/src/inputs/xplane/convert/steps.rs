//! Steps: each step's span (its markers merged), and the step a time
//! falls in.

use std::collections::BTreeMap;

/// One step marker's extent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepSpan {
    pub name: String,
    pub start_ps: i128,
    pub end_ps: i128,
}

/// Each step's span: markers of one step number (several lines may mark it)
/// are merged.
pub(super) fn step_spans(markers: &[(i64, &str, i128, i128)]) -> BTreeMap<i64, StepSpan> {
    let mut steps: BTreeMap<i64, StepSpan> = BTreeMap::new();
    for &(step, name, start, end) in markers {
        steps
            .entry(step)
            .and_modify(|s| {
                s.start_ps = s.start_ps.min(start);
                s.end_ps = s.end_ps.max(end);
            })
            .or_insert_with(|| StepSpan { name: name.to_owned(), start_ps: start, end_ps: end });
    }
    steps
}

/// Which step a time falls in: the marker that contains it, else the step
/// after the last; step 0 when there are no markers.
pub(super) struct StepLookup {
    pub(super) spans: Vec<(i128, i128, i64)>,
    pub(super) after_last: i64,
}

impl StepLookup {
    pub(super) fn new(steps: &BTreeMap<i64, StepSpan>) -> StepLookup {
        let mut spans: Vec<(i128, i128, i64)> = steps.iter().map(|(&step, s)| (s.start_ps, s.end_ps, step)).collect();
        spans.sort();
        StepLookup { spans, after_last: steps.keys().next_back().map_or(0, |last| last + 1) }
    }

    pub(super) fn step(&self, t: i128) -> i64 {
        self.step_hinted(t, &mut 0)
    }

    /// [`StepLookup::step`], with [`StepLookup::span_at`]'s `hint`.
    pub(super) fn step_hinted(&self, t: i128, hint: &mut usize) -> i64 {
        if self.spans.is_empty() {
            return 0;
        }
        self.span_at(t, hint).map_or(self.after_last, |at| self.spans[at].2)
    }

    /// The position in `spans` of the span that holds `t`, if one does.
    /// `hint` is where the spans that start after `t` began for the time
    /// asked before: a line's times mostly grow, and then no search is
    /// needed (on the 270 MB bench trace, searching took 0.13 s of 2.1).
    pub(super) fn span_at(&self, t: i128, hint: &mut usize) -> Option<usize> {
        let spans = &self.spans;
        let hinted = *hint <= spans.len() && (*hint == 0 || spans[*hint - 1].0 <= t) && spans.get(*hint).is_none_or(|s| t < s.0);
        if !hinted {
            *hint = spans.partition_point(|s| s.0 <= t);
        }
        // Markers of different steps rarely overlap; a few back suffice.
        (hint.saturating_sub(8)..*hint).rev().find(|&at| t < spans[at].1)
    }
}
