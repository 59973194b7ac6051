//! What a cut keeps of an event, from its [`EventFields`].

use rustc_hash::FxHashSet;

use super::super::stream::fields::{EventFields, Ph};
use super::select::Selection;

impl EventFields {
    /// Whether the cut keeps this event: `correlations` are those the
    /// window needs, `dropped` those whose launch or device work the
    /// selection drops (their flows go too).
    pub(super) fn kept(&self, window: (i64, i64), selection: &Selection, correlations: &FxHashSet<u64>, dropped: &FxHashSet<u64>) -> Kept {
        if self.ph == Ph::Metadata || self.ts.is_none() {
            return Kept::Yes;
        }
        let correlated = self.correlation.is_some_and(|c| correlations.contains(&c));
        let in_time = match self.ph {
            Ph::Flow => (correlated || self.overlaps(window)) && !self.correlation.is_some_and(|c| dropped.contains(&c)),
            _ if self.category.on_device() => (correlated || self.overlaps(window)) && selection.keeps_device(self.device),
            _ if self.category.is_launch() => correlated || self.overlaps(window),
            _ => self.overlaps(window),
        };
        match (in_time, self.ph == Ph::Complete && !selection.keeps_duration(self.dur)) {
            (false, _) => Kept::No,
            (true, true) => Kept::TooShort,
            (true, false) => Kept::Yes,
        }
    }

    /// Whether the selection drops this launch or device work whatever its
    /// time (its device, its duration).
    pub(super) fn dropped_by(&self, selection: &Selection) -> bool {
        (self.category.on_device() && !selection.keeps_device(self.device)) || (self.ph == Ph::Complete && !selection.keeps_duration(self.dur))
    }
}

/// What [`EventFields::kept`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kept {
    Yes,
    No,
    /// In the selection's time, but shorter than `--min_dur_us`.
    TooShort,
}
