//! HTA's whole-trace breakdowns of a trace read a window at a time
//! ([`crate::inputs::pytorch::windows`]), equal to those of the whole
//! trace read at once.
//!
//! Each window gives the device work it owns ([`Selection::of_window`]).
//! Merging intervals and taking each stream's gaps need the events in order
//! of their starts, across windows; a window's events are held until no
//! later window can hold one that starts earlier: device work starts after
//! the call that launched it, and every later window's launches (and
//! unlaunched work) start at or after the window's end, so once a window is
//! added, what starts before its end (less [`SLACK_NS`] for clocks that
//! disagree) is settled. What remains held is the work that runs past a
//! window's end: a step's tail, not a trace's length.

use std::collections::BTreeMap;

use super::{DeviceBreakdown, Gaps, Merged, Selection, StreamEvent, StreamIdle, Timing, delay_in, device_breakdown, device_intervals, stream_events};
use crate::inputs::pytorch::Trace;
use crate::intervals::{Empty, union_in_order};

/// How far before its launch's window a device event may start (GPU and
/// host clocks are synchronised to within microseconds; 100 ms is far
/// beyond any such drift) and still be counted exactly.
pub const SLACK_NS: i64 = 100_000_000;

/// Intervals merged as they arrive: the settled groups' total, first start
/// and last end, and the groups not settled yet.
#[derive(Debug, Default)]
struct Union {
    settled: Option<Merged>,
    open: Vec<(i64, i64)>,
}

impl Union {
    /// Settles the groups that no interval starting at or after `horizon`
    /// can join (in HTA's merge an interval joins the group before it when
    /// it starts at or before that group's end).
    fn settle(&mut self, horizon: i64) {
        for (start, end) in self.settle_groups(horizon) {
            let m = self.settled.get_or_insert(Merged { busy: 0, first: start, last: end });
            m.busy += end - start;
            m.last = end;
        }
    }

    /// The groups [`Union::settle`] settles, in order, kept apart.
    fn settle_groups(&mut self, horizon: i64) -> Vec<(i64, i64)> {
        self.open.sort_by_key(|&(start, _)| start);
        let groups: Vec<(i64, i64)> = union_in_order(std::mem::take(&mut self.open), Empty::Keep).collect();
        let mut settled = Vec::new();
        for (start, end) in groups {
            if start.max(end) < horizon {
                settled.push((start, end));
            } else {
                self.open.push((start, end));
            }
        }
        settled
    }

    /// The earliest time of the groups not settled (a start, or an
    /// inverted group's end).
    fn open_from(&self) -> Option<i64> {
        self.open.iter().map(|&(s, e)| s.min(e)).min()
    }
}

/// HTA's `get_comm_comp_overlap()` of a trace fed a window at a time: each
/// window's own overlap events (a kernel by its launch's window) merged by
/// kind as they settle (as [`Accumulator`] settles them), and the time
/// both kinds cover swept as far as no later group can reach.
#[derive(Debug)]
pub struct OverlapAccumulator {
    timing: Timing,
    /// `Some`: leave the last step out (HTA's rule over ranks), with the
    /// rank's last step start (`None`: the rank has none).
    last_step_start: Option<Option<i64>>,
    comm: Union,
    comp: Union,
    sweep: super::Sweep,
    settled_to: i64,
    slack_ns: i64,
}

impl OverlapAccumulator {
    /// `steps`: the plan's steps ([`crate::inputs::pytorch::windows::Windows::steps`]).
    pub fn new(timing: Timing, steps: &Trace, drop_last_step: bool, slack_ns: i64) -> OverlapAccumulator {
        let last_step_start = drop_last_step.then(|| super::overlap_last_step(steps, timing));
        OverlapAccumulator {
            timing,
            last_step_start,
            comm: Union::default(),
            comp: Union::default(),
            sweep: Default::default(),
            settled_to: i64::MIN,
            slack_ns,
        }
    }

    /// Adds the overlap events `window` owns (of its `trace`, whose
    /// [`Trace::launches_by_correlation`] are `launches`); an error where
    /// some start before an earlier window's settled time.
    pub fn add(&mut self, trace: &Trace, window: &crate::inputs::pytorch::windows::Window, launches: &rustc_hash::FxHashMap<u64, u32>) -> Result<(), String> {
        let (comm, comp) = super::overlap_intervals(trace, self.timing, self.last_step_start, |i| window.owns(trace, launches, i));
        if comm.iter().chain(&comp).any(|&(start, _)| start < self.settled_to) {
            return Err(format!("a kernel starts more than {} ms before the call that launched it", self.slack_ns / 1_000_000));
        }
        self.comm.open.extend(comm);
        self.comp.open.extend(comp);
        let horizon = |slack: i64| {
            let horizon = window.own.1.saturating_sub(slack);
            match self.timing {
                Timing::Exact => horizon,
                Timing::Hta if horizon == i64::MAX => i64::MAX,
                Timing::Hta => super::hta_span(horizon, 0).0,
            }
        };
        let settled = horizon(self.slack_ns);
        let (comm, comp) = (self.comm.settle_groups(settled), self.comp.settle_groups(settled));
        self.sweep.add_groups(&comm, &comp);
        // Later groups start at or after `settled`; an inverted one may end
        // a little before it: sweep only to a slack earlier.
        let swept = [Some(horizon(self.slack_ns.saturating_mul(2))), self.comm.open_from(), self.comp.open_from()].into_iter().flatten().min();
        self.sweep.run_before(swept);
        self.settled_to = self.settled_to.max(settled);
        Ok(())
    }

    pub fn finish(mut self) -> super::Overlap {
        let (comm, comp) = (self.comm.settle_groups(i64::MAX), self.comp.settle_groups(i64::MAX));
        self.sweep.add_groups(&comm, &comp);
        self.sweep.finish()
    }
}

/// A stream's events not settled yet, and its gaps so far.
#[derive(Debug, Default)]
struct Stream {
    pending: Vec<StreamEvent>,
    prev_end: Option<i64>,
    gaps: Gaps,
}

/// HTA's temporal and idle time breakdowns, fed one window at a time.
#[derive(Debug)]
pub struct Accumulator {
    timing: Timing,
    delay: i64,
    /// Per device: all its GPU work and its compute kernels.
    devices: BTreeMap<u32, (Union, Union)>,
    streams: BTreeMap<(u32, u32), Stream>,
    /// Where the last window's settling reached (in the timing's units):
    /// work that starts before it arrives too late to be counted exactly.
    settled_to: i64,
    /// [`SLACK_NS`], or less in tests, which settle as early as they can.
    slack_ns: i64,
}

impl Accumulator {
    pub fn new(timing: Timing, consecutive_kernel_delay_us: i64) -> Accumulator {
        Accumulator::with_slack(timing, consecutive_kernel_delay_us, SLACK_NS)
    }

    /// [`Accumulator::new`] that settles what starts before a window's end
    /// less `slack_ns`.
    pub fn with_slack(timing: Timing, consecutive_kernel_delay_us: i64, slack_ns: i64) -> Accumulator {
        let delay = delay_in(timing, consecutive_kernel_delay_us);
        Accumulator { timing, delay, devices: BTreeMap::new(), streams: BTreeMap::new(), settled_to: i64::MIN, slack_ns }
    }

    pub fn timing(&self) -> Timing {
        self.timing
    }

    /// Adds the device work a window owns (`selection`, of `trace`), then
    /// settles what starts before `own_end` (the end of the time the window
    /// owns, in ns) less [`SLACK_NS`]. An error when some work starts before
    /// an earlier window's settled time: its window cannot be counted
    /// exactly.
    pub fn add(&mut self, trace: &Trace, selection: &Selection, own_end: i64) -> Result<(), String> {
        let settled_to = self.settled_to;
        let too_early = |start: i64| start < settled_to;
        for (device, (all, compute)) in device_intervals(trace, selection) {
            if all.iter().any(|&(start, _)| too_early(start)) {
                return Err(format!("device {device}'s work starts more than {} ms before the call that launched it", self.slack_ns / 1_000_000));
            }
            let (a, c) = self.devices.entry(device).or_default();
            a.open.extend(all);
            c.open.extend(compute);
        }
        for (key, events) in stream_events(trace, selection) {
            self.streams.entry(key).or_default().pending.extend(events);
        }
        let horizon = own_end.saturating_sub(self.slack_ns);
        let horizon = match self.timing {
            Timing::Exact => horizon,
            Timing::Hta if horizon == i64::MAX => i64::MAX,
            Timing::Hta => super::hta_span(horizon, 0).0,
        };
        self.settle(horizon);
        Ok(())
    }

    fn settle(&mut self, horizon: i64) {
        for (all, compute) in self.devices.values_mut() {
            all.settle(horizon);
            compute.settle(horizon);
        }
        for stream in self.streams.values_mut() {
            stream.pending.sort_by_key(|e| e.0);
            let ready = stream.pending.partition_point(|e| e.0 < horizon);
            for event in stream.pending.drain(..ready) {
                if let Some(prev_end) = stream.prev_end {
                    stream.gaps.add(prev_end, event, self.delay);
                }
                stream.prev_end = Some(event.1);
            }
        }
        self.settled_to = self.settled_to.max(horizon);
    }

    /// The breakdowns, once every window is added: HTA's temporal
    /// breakdown per device and idle time breakdown per stream.
    pub fn finish(mut self) -> (Vec<DeviceBreakdown>, Vec<StreamIdle>) {
        self.settle(i64::MAX);
        let timing = self.timing;
        let devices = self
            .devices
            .into_iter()
            .filter_map(|(device, (all, compute))| {
                let all = all.settled?;
                Some(device_breakdown(device, all, compute.settled.map_or(0, |c| c.busy), timing))
            })
            .collect();
        let streams = self.streams.into_iter().map(|((device, stream), s)| s.gaps.row(device, stream, timing)).collect();
        (devices, streams)
    }
}
