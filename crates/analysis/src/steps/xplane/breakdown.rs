//! Stage 3, breakdown: a step's markers and typed events ([`Details`])
//! resolved into its time per event type ([`non_overlapped`], XProf's
//! `ToNonOverlappedEvents`) and, beyond XProf, its time on the devices
//! ([`add_device_time`]).

use std::collections::BTreeMap;

use super::events::Events;
use super::step_events::DeviceSpan;
use super::{DeviceTime, HostStep, event_type as et};
use crate::intervals::measure_up_to;

/// A step's markers and typed events, before overlaps are resolved.
#[derive(Debug, Default)]
pub(super) struct Details {
    /// (is a device marker, begin, end)
    pub(super) markers: Vec<(bool, i128, i128)>,
    /// (type, event index): times are read from the events when the step
    /// is resolved, so a step's events cost 8 bytes each until then.
    pub(super) events: Vec<(u8, u32)>,
    /// (type, begin, end) of events that are not records.
    pub(super) spans: Vec<(u8, i128, i128)>,
    pub(super) name: String,
    /// The line `name` comes from (see [`walk_host`](super::step_events::walk_host)).
    pub(super) name_line: usize,
}

impl Details {
    pub(super) fn combine(&mut self, other: Details) {
        self.markers.extend(other.markers);
        self.events.extend(other.events);
        self.spans.extend(other.spans);
        if self.name.is_empty() {
            self.name = other.name;
        }
    }

    /// The step's time: its longest host marker, unless a device marker is
    /// longer and not inside it.
    fn step_time(&self) -> (i128, i128) {
        let longest = |device: bool| {
            self.markers.iter().filter(|m| m.0 == device).fold((0, 0), |best: (i128, i128), m| if m.2 - m.1 > best.1 - best.0 { (m.1, m.2) } else { best })
        };
        let host = longest(false);
        let device = longest(true);
        if device.1 == device.0 {
            return host;
        }
        if host.0 <= device.0 && device.1 <= host.1 { host } else { device }
    }

    pub(super) fn step_info(&self, ev: &Events<'_>, group: i64, has_device: bool) -> Option<HostStep> {
        let (begin, end) = self.step_time();
        let mut events: Vec<(u8, i128, i128)> = self.events.iter().map(|&(t, i)| (t, ev.begin(i as usize), ev.end(i as usize))).collect();
        events.extend_from_slice(&self.spans);
        let mut type_ps: BTreeMap<u8, i128> = BTreeMap::new();
        let mut covered = 0;
        for_each_non_overlapped(&events, |t, b, e| {
            let overlap = (end.min(e) - begin.max(b)).max(0);
            *type_ps.entry(t).or_default() += overlap;
            covered += overlap;
        });
        if covered < end - begin {
            *type_ps.entry(et::UNKNOWN_TIME).or_default() += end - begin - covered;
        }
        let well_formed = if has_device {
            type_ps.contains_key(&et::DEVICE_COMPUTE_16) || type_ps.contains_key(&et::DEVICE_COMPUTE_32)
        } else {
            type_ps.contains_key(&et::HOST_COMPUTE)
        };
        (well_formed && end > begin).then(|| HostStep { group, name: self.name.clone(), begin_ps: begin, duration_ps: end - begin, type_ps, device: None })
    }
}

/// XProf's `ToNonOverlappedEvents`: the spans between consecutive event
/// boundaries, each owned by the highest type active there (0 if none).
pub fn non_overlapped(events: &[(u8, i128, i128)]) -> Vec<(u8, i128, i128)> {
    let mut out = Vec::with_capacity(2 * events.len());
    for_each_non_overlapped(events, |t, b, e| out.push((t, b, e)));
    out
}

/// [`non_overlapped`]'s spans, handed to `visit` in order. The events'
/// bounds are sorted as one `u64` each (time from the earliest bound,
/// then ends before starts, then higher types first), where every bound
/// is within 2^55 ps (10 hours) of the earliest: a step's breakdown sorts
/// thousands. Bounds further apart (a corrupt trace) are sorted as tuples,
/// in the same order. (With the open types' bitset below: the breakdowns'
/// share of `steps`' CPU samples on the JAX GPU bench trace x91, 6.5% →
/// 4.1%, `perf record`.)
fn for_each_non_overlapped(events: &[(u8, i128, i128)], mut visit: impl FnMut(u8, i128, i128)) {
    const TIME_SHIFT: u32 = 9;
    let Some(first) = events.iter().map(|&(_, b, e)| b.min(e)).min() else { return };
    let last = events.iter().map(|&(_, b, e)| b.max(e)).max().unwrap_or(first);
    let mut counts = [0i64; et::LAST as usize + 1];
    // The types whose count is above 0, for the next top when the top's
    // count falls to 0 (a look at each type below it was most of the
    // steps' breakdowns: a kernel, type 140, ending with nothing above 0).
    let mut open = [0u64; 4];
    let mut top = et::UNKNOWN_TIME;
    let mut step = |(time, start, t): (i128, bool, u8), next: i128| {
        let (word, bit) = (usize::from(t / 64), 1u64 << (t % 64));
        if start {
            counts[t as usize] += 1;
            top = top.max(t);
        } else {
            counts[t as usize] -= 1;
        }
        if counts[t as usize] > 0 {
            open[word] |= bit
        } else {
            open[word] &= !bit
        }
        if !start && t == top && counts[t as usize] == 0 {
            // The highest type below `t` whose count is above 0.
            top = (0..=word)
                .rev()
                .find_map(|w| {
                    let below = if w == word { open[w] & (bit - 1) } else { open[w] };
                    (below != 0).then(|| (64 * w + 63 - below.leading_zeros() as usize) as u8)
                })
                .unwrap_or(et::UNKNOWN_TIME);
        }
        visit(top, time, next);
    };
    if last - first < 1 << (64 - TIME_SHIFT) {
        let key = |time: i128, start: bool, t: u8| ((time - first) as u64) << TIME_SHIFT | u64::from(start) << 8 | u64::from(u8::MAX - t);
        let bound = |key: u64| (first + i128::from(key >> TIME_SHIFT), key >> 8 & 1 == 1, u8::MAX - (key & 0xff) as u8);
        let mut keys: Vec<u64> = events.iter().flat_map(|&(t, b, e)| [key(b, true, t), key(e, false, t)]).collect();
        keys.sort_unstable();
        for w in keys.windows(2) {
            step(bound(w[0]), bound(w[1]).0);
        }
    } else {
        // (time, is_start, type): ends before starts at the same time;
        // among starts or ends, higher types first. (The key is the whole
        // entry: equal entries are alike, so an unstable sort gives the
        // same order.)
        let mut bounds: Vec<(i128, bool, u8)> = events.iter().flat_map(|&(t, b, e)| [(b, true, t), (e, false, t)]).collect();
        bounds.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
        for w in bounds.windows(2) {
            step(w[0], w[1].0);
        }
    }
}

/// The device events whose union [`add_device_time`] measures: those of
/// planes with a `Steps` line as (begin, end, is a memcpy), and the others'
/// [`DeviceSpan`]s, each plane's in order of their starts, with their
/// lines' starts.
#[derive(Default)]
pub(super) struct DeviceSpans {
    pub(super) spans: Vec<(i128, i128, bool)>,
    pub(super) planes: Vec<(Vec<DeviceSpan>, Vec<i128>)>,
}

/// Each step's [`DeviceTime`]: the parts of its span that the device
/// events of `spans` cover (all of them; the memcpys), overlaps once. The
/// events are merged in order of their starts and their union measured up
/// to each step's begin and end as it goes: neither the merged events nor
/// their union are ever held (a device event each on a GPU trace).
pub(super) fn add_device_time(steps: &mut [HostStep], spans: DeviceSpans) {
    let DeviceSpans { mut spans, planes } = spans;
    spans.sort_unstable();
    let mut points: Vec<i128> = steps.iter().flat_map(|s| [s.begin_ps, s.begin_ps + s.duration_ps]).collect();
    points.sort_unstable();
    points.dedup();
    // Every plane's events in order of their starts.
    let merged = || {
        let mut streams: Vec<Box<dyn Iterator<Item = (i128, i128, bool)> + '_>> = vec![Box::new(spans.iter().copied())];
        for (events, bases) in &planes {
            streams.push(Box::new(events.iter().map(|e| {
                let (begin, end) = e.span(bases);
                (begin, end, e.flags & DeviceSpan::TRANSFER != 0)
            })));
        }
        merge_by_start(streams)
    };
    let (busy, transfers) =
        rayon::join(|| measure_up_to(merged().map(|s| (s.0, s.1)), &points), || measure_up_to(merged().filter(|s| s.2).map(|s| (s.0, s.1)), &points));
    let at = |t: i128| points.binary_search(&t).expect("a step's bound");
    for step in steps {
        let (begin, end) = (at(step.begin_ps), at(step.begin_ps + step.duration_ps));
        step.device = Some(DeviceTime { transfer_ps: transfers[end] - transfers[begin], busy_ps: busy[end] - busy[begin] });
    }
}

/// Streams each in order of their starts, merged in that order.
fn merge_by_start<'s>(mut streams: Vec<Box<dyn Iterator<Item = (i128, i128, bool)> + 's>>) -> impl Iterator<Item = (i128, i128, bool)> + 's {
    let mut heads: Vec<Option<(i128, i128, bool)>> = streams.iter_mut().map(|s| s.next()).collect();
    std::iter::from_fn(move || {
        let k = (0..heads.len()).filter(|&k| heads[k].is_some()).min_by_key(|&k| heads[k].map(|h| h.0))?;
        let head = heads[k];
        heads[k] = streams[k].next();
        head
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intervals::{Empty, covered, union_in_order};
    use crate::test_random::XorShift;

    /// Device time per step: the union of the events, clipped to the step.
    #[test]
    fn device_time_counts_overlaps_once_and_clips_to_the_step() {
        let spans: Vec<_> = union_in_order([(0, 10), (5, 20), (30, 40), (35, 36), (50, 50)], Empty::Drop).collect();
        assert_eq!(spans, [(0, 20), (30, 40)]);
        assert_eq!(covered(&spans, 15, 35), 5 + 5);
        assert_eq!(covered(&spans, 20, 30), 0);
        assert_eq!(covered(&spans, -5, 100), 30);
    }

    /// Merged streams come in order of starts, every span kept (the
    /// measure over them is `intervals::measure_up_to`'s, tested there).
    #[test]
    fn merged_streams_come_in_order_of_starts() {
        let mut rng = XorShift::new(0xc0ffee);
        for _ in 0..500 {
            let mut spans: Vec<(i128, i128)> =
                (0..rng.below(40)).map(|_| (rng.below(200) as i128 - 50, rng.below(60) as i128 - 10)).map(|(b, d)| (b, b + d)).collect();
            spans.sort_unstable();
            let (left, right): (Vec<_>, Vec<_>) = spans.iter().map(|&(b, e)| (b, e, false)).partition(|_| rng.below(2) == 0);
            let merged: Vec<(i128, i128, bool)> = merge_by_start(vec![Box::new(left.into_iter()), Box::new(right.into_iter())]).collect();
            assert_eq!(merged.len(), spans.len());
            assert!(merged.windows(2).all(|w| w[0].0 <= w[1].0));
        }
    }

    /// The bounds sorted as packed keys give the spans that sorting them as
    /// (time, is start, type) tuples gives: equal times, ends and starts
    /// together, every type, negative times, bounds 2^55 ps apart or more
    /// (sorted as tuples then), durations below 0 (regions).
    #[test]
    fn packed_bounds_give_the_spans_of_sorted_tuples() {
        fn by_tuples(events: &[(u8, i128, i128)]) -> Vec<(u8, i128, i128)> {
            let mut bounds: Vec<(i128, bool, u8)> = events.iter().flat_map(|&(t, b, e)| [(b, true, t), (e, false, t)]).collect();
            bounds.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(b.2.cmp(&a.2)));
            let mut counts = [0i64; et::LAST as usize + 1];
            let mut top = et::UNKNOWN_TIME;
            let mut out = Vec::new();
            for w in bounds.windows(2) {
                let (time, start, t) = w[0];
                if start {
                    counts[t as usize] += 1;
                    top = top.max(t);
                } else {
                    counts[t as usize] -= 1;
                    if t == top && counts[t as usize] == 0 {
                        top = (0..t).rev().find(|&i| counts[i as usize] > 0).unwrap_or(et::UNKNOWN_TIME);
                    }
                }
                out.push((top, time, w[1].0));
            }
            out
        }
        let mut rng = XorShift::new(0x0b0b_5eed);
        for case in 0..2000 {
            let spread: i128 = [40, 1 << 40, 1 << 56][case % 3];
            let origin = rng.next() as i64 as i128 * 1000;
            let events: Vec<(u8, i128, i128)> = (0..rng.below(30))
                .map(|_| {
                    let b = origin + (rng.below(spread as u64) as i128) - spread / 4;
                    (rng.below(u64::from(et::LAST) + 1) as u8, b, b + rng.below(20) as i128 - 3)
                })
                .collect();
            assert_eq!(non_overlapped(&events), by_tuples(&events), "{events:?}");
        }
    }
}
