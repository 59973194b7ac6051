//! Where a GPU's time goes, as Holistic Trace Analysis (HTA 0.5.0) splits
//! it: `get_temporal_breakdown()` (the span from the first kernel's start to
//! the last one's end, as compute, non-compute and idle time) and
//! `get_idle_time_breakdown()` (each stream's gaps between kernels, as
//! waiting on the host, launch delay between back-to-back kernels, or other)
//! and `get_cuda_kernel_launch_stats()` (each launch call against the GPU
//! event it launched: [`launch_stats`]).
//!
//! HTA's event selection is followed: only GPU events with a stream; with
//! two or more `ProfilerStep` spans, the last (incomplete) step is left out,
//! and a kernel counts only if its launch came before it. HTA rounds every
//! event to whole microseconds (start up, end down, each in f64), so short
//! kernels can end before they start there; [`Timing::Hta`] does the same
//! and gives HTA's numbers, [`Timing::Exact`] keeps nanoseconds.
//! Differences kept on purpose: HTA analyses a rank (all its GPUs at once),
//! this one device at a time; a kernel whose launch is not in the trace has
//! no launch time here (HTA's join takes the trace's first event for it).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::inputs::pytorch::{Category, Event, Trace};
use crate::intervals::{Empty, union_in_order};

/// How event times are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Nanoseconds as written.
    Exact,
    /// HTA's whole microseconds: `ceil(ts)`, `floor(ts + dur)` in f64 µs,
    /// each f64 the one nearest the decimal ([`hta_span`]).
    Hta,
}

/// One device's split of its busy span (µs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceBreakdown {
    pub device: u32,
    /// From the first kernel's start to the last one's end (HTA's
    /// `kernel_time`).
    pub span_us: f64,
    /// Time some computation kernel ran (not communication, copy, set or
    /// sync).
    pub compute_us: f64,
    /// Time only other GPU work ran.
    pub non_compute_us: f64,
    /// Time no GPU work ran.
    pub idle_us: f64,
}

/// One stream's gaps between consecutive kernels (µs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamIdle {
    pub device: u32,
    pub stream: u32,
    /// The kernel was launched after the previous one had ended: the host
    /// was late.
    pub host_wait_us: f64,
    /// A gap shorter than `consecutive_kernel_delay_us`: launch overhead.
    pub kernel_wait_us: f64,
    pub other_us: f64,
}

/// HTA's default `consecutive_kernel_delay` (µs).
pub const CONSECUTIVE_KERNEL_DELAY_US: i64 = 30;

/// An event's (start, end) in the units of `timing`: ns or µs.
pub fn span(e: &Event, timing: Timing) -> (i64, i64) {
    match timing {
        Timing::Exact => (e.ts, e.end()),
        Timing::Hta => hta_span(e.ts, e.dur),
    }
}

/// The start of an event at `ts_ns` in the units of `timing`.
pub fn span_start(ts_ns: i64, timing: Timing) -> i64 {
    match timing {
        Timing::Exact => ts_ns,
        Timing::Hta => hta_span(ts_ns, 0).0,
    }
}

/// HTA's whole-microsecond (start, end) of an event at `ts_ns` lasting
/// `dur_ns`: pandas holds `ts` and `dur` as the f64s nearest to the
/// decimals Kineto wrote ([`micros_f64`]), and HTA takes `ceil(ts)` and
/// `floor(ts + dur)`, the sum in f64.
pub fn hta_span(ts_ns: i64, dur_ns: i64) -> (i64, i64) {
    let (ts, dur) = (micros_f64(ts_ns), micros_f64(dur_ns));
    (ts.ceil() as i64, (ts + dur).floor() as i64)
}

/// The f64 nearest to `ns / 1000` (ties to even): what parsing the
/// decimal `"<ns / 1000>.<ns % 1000, 3 digits>"` gives (Python's `float`,
/// Rust's `parse::<f64>`), i.e. the µs value pandas holds. (A decimal
/// with more than 3 digits after the point was already rounded to whole
/// ns when read, so pandas' value can differ from this one there.)
///
/// Below 2^53 in magnitude, `ns as f64` is exact and one division of exact
/// operands is correctly rounded. Above it (epoch times in ns are about
/// 2^60), `ns as f64` would already be rounded (to a multiple of up to
/// 1024 ns) and the division would round a second time, moving a value by
/// an ulp (0.25 µs at epoch times) and its `ceil`/`floor` by 1 µs. There
/// the quotient is taken in integers: scaled by a power of two so that it
/// has 53 significant bits, rounded half to even, and multiplied back by
/// that power of two exactly.
pub fn micros_f64(ns: i64) -> f64 {
    const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
    if ns.unsigned_abs() < EXACT {
        return ns as f64 / 1000.0;
    }
    let magnitude = nearest_quotient(u128::from(ns.unsigned_abs()), 1000);
    if ns < 0 { -magnitude } else { magnitude }
}

/// The f64 nearest to `n / d` (`n` and `d` nonzero, below 2^64; ties to
/// even), in integers.
fn nearest_quotient(n: u128, d: u128) -> f64 {
    const DIGITS: u32 = f64::MANTISSA_DIGITS;
    // n / d lies in [2^(a - b - 1), 2^(a - b + 1)) where n and d have a
    // and b significant bits: shifted by k = DIGITS - (a - b), the quotient
    // has DIGITS or DIGITS + 1 bits; one more shift (down) makes DIGITS.
    let bits = |v: u128| 128 - v.leading_zeros() as i32;
    let mut k = DIGITS as i32 - (bits(n) - bits(d));
    let divide = |k: i32| {
        // n 2^k / d, as a quotient and a remainder over the divisor.
        let (num, den) = if k >= 0 { (n << k, d) } else { (n, d << -k) };
        (num / den, num % den, den)
    };
    let (mut q, mut r, mut den) = divide(k);
    if q >> DIGITS != 0 {
        k -= 1;
        (q, r, den) = divide(k);
    }
    debug_assert!(q >> (DIGITS - 1) == 1 && q >> DIGITS == 0, "{n} / {d}: {q}");
    // Half to even; q + 1 may reach 2^DIGITS, still exact in f64.
    if 2 * r > den || (2 * r == den && q & 1 == 1) {
        q += 1;
    }
    // q <= 2^DIGITS is exact in f64, and so is 2^-k (k lies in -11..=116
    // for n and d below 2^64), so their product is exact.
    let scale = f64::from_bits(((1023 - k) as u64) << 52);
    q as f64 * scale
}

fn to_us(v: i64, timing: Timing) -> f64 {
    match timing {
        Timing::Exact => v as f64 / 1000.0,
        Timing::Hta => v as f64,
    }
}

/// The events HTA keeps, as (index, start, end): GPU events (a stream and a
/// correlation, or a device-wide sync) whose launch is kept, device events
/// with a stream but no correlation that start before the last profiler
/// step, and CPU events before it. The breakdowns and the launch stats of
/// one timing can share it ([`Selection::of`]) rather than select again.
pub struct Selection {
    timing: Timing,
    /// Device events with a stream: (event index, start, end).
    gpu: Vec<(u32, i64, i64)>,
    /// The CPU events kept that have a correlation: (event index, start,
    /// end), a later one with the same id replacing an earlier one.
    launches: FxHashMap<u64, (u32, i64, i64)>,
}

impl Selection {
    /// The events of `trace` that HTA keeps, timed as `timing` says.
    pub fn of(trace: &Trace, timing: Timing) -> Selection {
        select(trace, timing)
    }

    /// The events HTA keeps of one window of a trace, counting only the
    /// device work the window owns (`own`, [`Window::own`]):
    /// `last_step_start` and `kept_without` are the whole trace's
    /// ([`last_step_start`] of its steps; whether it has a host event
    /// without a correlation before that).
    ///
    /// [`Window::own`]: crate::inputs::pytorch::windows::Window::own
    pub fn of_window(trace: &Trace, timing: Timing, last_step_start: Option<i64>, kept_without: bool, own: (i64, i64)) -> Selection {
        select_with(trace, timing, last_step_start, Some(kept_without), Some(own))
    }
}

fn select(trace: &Trace, timing: Timing) -> Selection {
    select_with(trace, timing, last_step_start(trace, timing), None, None)
}

/// The start of the last `ProfilerStep` on the host, where HTA leaves a
/// trace's events out from (`None` with fewer than two distinct step
/// names: then nothing is left out). HTA looks for "ProfilerStep" in any
/// name and counts distinct names (each name looked at once, not each
/// event's).
pub fn last_step_start(trace: &Trace, timing: Timing) -> Option<i64> {
    let events = || trace.events.iter().filter(|e| e.category != Category::Trace);
    let holds_step: Vec<bool> = trace.strings.all().map(|s| s.contains("ProfilerStep")).collect();
    let is_step = |e: &Event| holds_step[e.name.index()];
    let step_names: FxHashSet<_> = events().filter(|e| is_step(e)).map(|e| e.name).collect();
    let sync = sync_names(trace);
    if step_names.len() >= 2 { events().filter(|e| !is_device_work(e, &sync) && is_step(e)).map(|e| span(e, timing).0).max() } else { None }
}

/// The device-wide syncs HTA counts as device work.
fn sync_names(trace: &Trace) -> [Option<crate::inputs::pytorch::Sym>; 2] {
    ["Event Sync", "Context Sync"].map(|n| trace.strings.lookup(n))
}

/// HTA's device work: a stream and a correlation, or a device-wide sync.
fn is_device_work(e: &Event, sync: &[Option<crate::inputs::pytorch::Sym>; 2]) -> bool {
    (e.stream.is_some() && e.correlation.is_some()) || sync.contains(&Some(e.name))
}

/// [`Selection::of`] given the whole trace's last step start, and, for a
/// window of a trace ([`crate::inputs::pytorch::windows`]), whether the
/// whole trace keeps a host event without a correlation (`kept_without`;
/// `None`: this trace says) and the time the window owns: only device
/// events it owns are kept (those whose launch, or, without one kept, whose
/// own start lies in `own`), so that each is counted in one window.
fn select_with(trace: &Trace, timing: Timing, last_step_start: Option<i64>, kept_without: Option<bool>, own: Option<(i64, i64)>) -> Selection {
    let sync = sync_names(trace);
    let events = || trace.events.iter().enumerate().filter(|(_, e)| e.category != Category::Trace);
    let is_gpu = |e: &Event| is_device_work(e, &sync);
    let cpu_kept = |e: &Event| last_step_start.is_none_or(|last| span(e, timing).0 < last);
    let mut launches = FxHashMap::default();
    // Whether a CPU event kept has no correlation (HTA's join then keeps
    // the GPU events without one).
    let mut kept_without_here = false;
    for (i, e) in events().filter(|(_, e)| !is_gpu(e) && cpu_kept(e)) {
        match e.correlation {
            // A later launch with the same id wins, as in HTA's assignment.
            Some(c) => {
                let (start, end) = span(e, timing);
                launches.insert(c.get(), (i as u32, start, end));
            }
            None => kept_without_here = true,
        }
    }
    let kept_without = kept_without.unwrap_or(kept_without_here);
    // The GPU events whose correlation is among the CPU events kept.
    let launched = |e: &Event| e.correlation.map_or(kept_without, |c| launches.contains_key(&c.get()));
    // Device events with a stream but no correlation (MTIA's `dma_request`
    // copies and `event_record`/`pe_exe` events, which no runtime call
    // links) are CPU events to HTA's filter (kept when they start before
    // the last step, as the others), but its breakdowns take every kept
    // event with a stream for device work: they ran on the device, so they
    // count here too. (CPU ops with a stream, TorchInductor's launch ops,
    // which HTA counts as well, do not: they ran on the CPU.)
    let uncorrelated_device = |e: &Event| !is_gpu(e) && e.category.on_device() && e.stream.is_some() && cpu_kept(e);
    // Whether the window owns a device event: by its launch's start, or
    // its own without a launch kept.
    let owned = |e: &Event| {
        own.is_none_or(|(from, to)| {
            let launch = e.correlation.and_then(|c| launches.get(&c.get())).map(|&(i, _, _)| trace.events[i as usize].ts);
            let at = launch.unwrap_or(e.ts);
            from <= at && at < to
        })
    };
    let gpu = events()
        .filter(|(_, e)| (is_gpu(e) && e.stream.is_some() && (last_step_start.is_none() || launched(e))) || uncorrelated_device(e))
        .filter(|(_, e)| owned(e))
        .map(|(i, e)| {
            let (start, end) = span(e, timing);
            (i as u32, start, end)
        })
        .collect();
    Selection { timing, gpu, launches }
}

/// HTA's `merge_kernel_intervals` ([`merged_groups`]): the sum of
/// (end - start) over the groups, the first group's start and the last
/// group's end (0s without intervals).
fn merged(intervals: Vec<(i64, i64)>) -> (i64, i64, i64) {
    let groups = merged_groups(intervals);
    let busy = groups.iter().map(|&(s, e)| e - s).sum();
    (busy, groups.first().map_or(0, |g| g.0), groups.last().map_or(0, |g| g.1))
}

/// HTA's `get_kernel_type` is COMPUTATION: not `^nccl.*Kernel`, not
/// `Memcpy`/`Memset`/`dma` first, and not matching
/// `(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)` from the start (where
/// `.` stops at a newline).
pub fn is_compute_kernel(name: &str) -> bool {
    let line = name.split('\n').next().unwrap_or("");
    let nccl = name.starts_with("nccl") && line[4..].contains("Kernel");
    let memory = name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("dma");
    let not_compute = nccl || line.contains("Memcpy") || name.starts_with("Memset") || line.contains("Sync");
    !nccl && !memory && !not_compute
}

/// HTA's `get_kernel_type` is COMMUNICATION: `^nccl.*Kernel` (where `.`
/// stops at a newline).
pub fn is_comm_kernel(name: &str) -> bool {
    let line = name.split('\n').next().unwrap_or("");
    name.starts_with("nccl") && line[4..].contains("Kernel")
}

/// The distinct names that hold `ProfilerStep` (HTA counts them over every
/// rank's events, in one symbol table, to decide whether to leave the last
/// step out).
pub fn profiler_step_names(trace: &Trace) -> FxHashSet<&str> {
    trace.events.iter().filter(|e| e.category != Category::Trace).map(|e| trace.str(e.name)).filter(|n| n.contains("ProfilerStep")).collect()
}

/// The events of a rank that HTA's `get_comm_comp_overlap()` reads: those
/// with a stream, among the events HTA keeps. With `drop_last_step` (two or
/// more distinct `ProfilerStep` names over all ranks), HTA keeps the CPU
/// events that start before the rank's last `ProfilerStep` and the GPU
/// events (a stream and a correlation, or a device-wide sync) that one of
/// them launched; an event with a stream and neither counts as a CPU event
/// there. (index, start, end) in the units of `timing`.
///
/// Only the events `counted` takes (a window's own); the last step is
/// left out where `last_step_start` is given ([`overlap_last_step`];
/// `Some(None)`: the rank has no step, and HTA's comparison with NaN keeps
/// no CPU event).
fn overlap_events(trace: &Trace, timing: Timing, last_step_start: Option<Option<i64>>, counted: impl Fn(u32) -> bool) -> Vec<(u32, i64, i64)> {
    let sync = sync_names(trace);
    let events = || trace.events.iter().enumerate().filter(|(i, e)| e.category != Category::Trace && counted(*i as u32));
    let is_gpu = |e: &Event| (e.stream.is_some() && e.correlation.is_some()) || sync.contains(&Some(e.name));
    let with_stream = |(i, e): (usize, &Event)| {
        let (start, end) = span(e, timing);
        e.stream.is_some().then_some((i as u32, start, end))
    };
    let Some(last_step_start) = last_step_start else {
        return events().filter_map(with_stream).collect();
    };
    let cpu_kept = |e: &Event| last_step_start.is_some_and(|last| span(e, timing).0 < last);
    // (Every CPU event of the trace: a counted kernel's launch may be
    // another window's to count.)
    let correlations: FxHashSet<u64> =
        trace.events.iter().filter(|e| e.category != Category::Trace && !is_gpu(e) && cpu_kept(e)).filter_map(|e| e.correlation.map(|c| c.get())).collect();
    events()
        .filter(|(_, e)| if is_gpu(e) { e.correlation.is_some_and(|c| correlations.contains(&c.get())) } else { cpu_kept(e) })
        .filter_map(with_stream)
        .collect()
}

/// The start of a rank's last `ProfilerStep` as HTA finds it for the
/// overlap (the trace of a plan's steps gives the whole trace's).
pub fn overlap_last_step(trace: &Trace, timing: Timing) -> Option<i64> {
    let sync = sync_names(trace);
    let step_names = profiler_step_names(trace);
    let is_gpu = |e: &Event| (e.stream.is_some() && e.correlation.is_some()) || sync.contains(&Some(e.name));
    trace.events.iter().filter(|e| e.category != Category::Trace && !is_gpu(e) && step_names.contains(trace.str(e.name))).map(|e| span(e, timing).0).max()
}

/// Communication and computation intervals.
type CommComp = (Vec<(i64, i64)>, Vec<(i64, i64)>);

/// The intervals of each kind of the overlap events `counted` takes:
/// (communication, computation).
fn overlap_intervals(trace: &Trace, timing: Timing, last_step_start: Option<Option<i64>>, counted: impl Fn(u32) -> bool) -> CommComp {
    let (mut comm, mut comp) = (Vec::new(), Vec::new());
    for (i, start, end) in overlap_events(trace, timing, last_step_start, counted) {
        let name = trace.str(trace.events[i as usize].name);
        if is_comm_kernel(name) {
            comm.push((start, end));
        } else if is_compute_kernel(name) {
            comp.push((start, end));
        }
    }
    (comm, comp)
}

/// HTA's `merge_kernel_intervals`: sorted by start, an interval starts a
/// new group when it starts after every end before it; each group runs from
/// its least start to its greatest end. That is [`union_in_order`] keeping
/// empty and inverted intervals ([`Empty::Keep`]: HTA's whole-microsecond
/// spans can be inverted) in HTA's order: sorted by start alone, stably,
/// since where an inverted interval shares its start with another, which
/// comes first decides whether they group.
fn merged_groups(mut intervals: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    intervals.sort_by_key(|&(start, _)| start);
    union_in_order(intervals, Empty::Keep).collect()
}

/// A rank's communication kernels against its computation kernels, as
/// HTA's `get_comm_comp_overlap()` measures them (µs in HTA's timing, ns
/// exactly).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overlap {
    /// Time during which a communication and a computation kernel both ran.
    pub overlap: i64,
    /// The communication kernels' merged time (the ratio's denominator).
    pub communication: i64,
}

impl Overlap {
    /// HTA's `comp_comm_overlap_ratio`: NaN without communication kernels.
    pub fn ratio(&self) -> f64 {
        self.overlap as f64 / self.communication as f64
    }

    /// HTA's `comp_comm_overlap_pctg`: `round(100 * ratio, 2)` as pandas
    /// rounds (times 100, to the nearest even, divided by 100).
    pub fn percent(&self) -> f64 {
        (100.0 * self.ratio() * 100.0).round_ties_even() / 100.0
    }
}

/// HTA's `get_comm_comp_overlap()` for one rank. The kernels are the events
/// with a stream that HTA keeps (see `overlap_events`), typed by
/// HTA's `get_kernel_type` ([`is_comm_kernel`], [`is_compute_kernel`]);
/// each kind's intervals are merged as HTA merges them; the overlap is the
/// time both kinds' merged intervals cover (HTA's running count of starts
/// and ends at 3), which does not depend on how HTA orders events that
/// share a time.
pub fn comm_comp_overlap(trace: &Trace, timing: Timing, drop_last_step: bool) -> Overlap {
    let last_step_start = if drop_last_step { Some(overlap_last_step(trace, timing)) } else { None };
    let (comm, comp) = overlap_intervals(trace, timing, last_step_start, |_| true);
    let (comm, comp) = (merged_groups(comm), merged_groups(comp));
    let mut sweep = Sweep::default();
    sweep.add_groups(&comm, &comp);
    sweep.finish()
}

/// The time both kinds' merged groups cover, swept over their starts and
/// ends in time order (HTA's running count of starts and ends at 3); the
/// order of changes at one time does not matter, so groups may be added
/// as they settle.
#[derive(Debug, Default)]
pub(crate) struct Sweep {
    changes: Vec<(i64, i64)>,
    running: i64,
    last: Option<i64>,
    overlap: i64,
    communication: i64,
}

impl Sweep {
    pub(crate) fn add_groups(&mut self, comm: &[(i64, i64)], comp: &[(i64, i64)]) {
        self.communication += comm.iter().map(|&(s, e)| e - s).sum::<i64>();
        self.changes.extend(comm.iter().flat_map(|&(s, e)| [(s, 1), (e, -1)]).chain(comp.iter().flat_map(|&(s, e)| [(s, 2), (e, -2)])));
    }

    /// Sweeps the changes before `time` (no change added later may come
    /// before it); all of them without one.
    pub(crate) fn run_before(&mut self, time: Option<i64>) {
        self.changes.sort_by_key(|&(t, _)| t);
        let ready = time.map_or(self.changes.len(), |time| self.changes.partition_point(|&(t, _)| t < time));
        for (t, change) in self.changes.drain(..ready) {
            // The running count after the last change at a time holds
            // until the next time.
            if let Some(last) = self.last
                && self.running == 3
            {
                self.overlap += t - last;
            }
            self.running += change;
            self.last = Some(t);
        }
    }

    pub(crate) fn finish(mut self) -> Overlap {
        self.run_before(None);
        Overlap { overlap: self.overlap, communication: self.communication }
    }
}

/// HTA's `get_temporal_breakdown()`, one row per device (by `args.device`).
pub fn temporal_breakdown(trace: &Trace, timing: Timing) -> Vec<DeviceBreakdown> {
    temporal_breakdown_of(trace, &select(trace, timing))
}

/// [`temporal_breakdown`] of the events `selection` (of `trace`) keeps.
pub fn temporal_breakdown_of(trace: &Trace, selection: &Selection) -> Vec<DeviceBreakdown> {
    device_intervals(trace, selection)
        .into_iter()
        .map(|(device, (all, compute))| {
            let (busy, first, last) = merged(all);
            let (compute, _, _) = if compute.is_empty() { (0, 0, 0) } else { merged(compute) };
            device_breakdown(device, Merged { busy, first, last }, compute, selection.timing)
        })
        .collect()
}

/// Per device: all its GPU intervals, and its compute ones.
type DeviceIntervals = std::collections::BTreeMap<u32, (Vec<(i64, i64)>, Vec<(i64, i64)>)>;

/// The intervals of the GPU events `selection` keeps, by device.
fn device_intervals(trace: &Trace, selection: &Selection) -> DeviceIntervals {
    let mut by_device = DeviceIntervals::new();
    for &(i, start, end) in &selection.gpu {
        let e = &trace.events[i as usize];
        let (all, compute) = by_device.entry(e.device.unwrap_or(0)).or_default();
        all.push((start, end));
        if is_compute_kernel(trace.str(e.name)) {
            compute.push((start, end));
        }
    }
    by_device
}

/// A device's merged GPU time: the groups' total, the first one's start
/// and the last one's end.
#[derive(Clone, Copy, Debug, Default)]
struct Merged {
    busy: i64,
    first: i64,
    last: i64,
}

/// A device's row, from its merged GPU time and its merged compute time.
fn device_breakdown(device: u32, all: Merged, compute: i64, timing: Timing) -> DeviceBreakdown {
    let span = all.last - all.first;
    let idle = span - all.busy;
    DeviceBreakdown {
        device,
        span_us: to_us(span, timing),
        compute_us: to_us(compute, timing),
        non_compute_us: to_us(span - compute - idle, timing),
        idle_us: to_us(idle, timing),
    }
}

/// HTA's `get_idle_time_breakdown()`: per (device, stream), the gap before
/// each kernel, copy or set (after the stream's previous one ended) is host
/// wait when its launch started after that end, else kernel wait when
/// shorter than `consecutive_kernel_delay_us` (HTA's default: 30), else
/// other.
pub fn idle_time_breakdown(trace: &Trace, timing: Timing, consecutive_kernel_delay_us: i64) -> Vec<StreamIdle> {
    idle_time_breakdown_of(trace, &select(trace, timing), consecutive_kernel_delay_us)
}

/// [`idle_time_breakdown`] of the events `selection` (of `trace`) keeps.
pub fn idle_time_breakdown_of(trace: &Trace, selection: &Selection, consecutive_kernel_delay_us: i64) -> Vec<StreamIdle> {
    let delay = delay_in(selection.timing, consecutive_kernel_delay_us);
    stream_events(trace, selection)
        .into_iter()
        .map(|((device, stream), mut kernels)| {
            kernels.sort_by_key(|k| k.0);
            let mut gaps = Gaps::default();
            for pair in kernels.windows(2) {
                gaps.add(pair[0].1, pair[1], delay);
            }
            gaps.row(device, stream, selection.timing)
        })
        .collect()
}

/// HTA's `consecutive_kernel_delay` in the units of `timing`.
fn delay_in(timing: Timing, consecutive_kernel_delay_us: i64) -> i64 {
    match timing {
        Timing::Exact => consecutive_kernel_delay_us * 1000,
        Timing::Hta => consecutive_kernel_delay_us,
    }
}

/// A stream's events: (start, end, their launch's start).
type StreamEvent = (i64, i64, Option<i64>);

/// The kernels, copies and sets `selection` keeps, by (device, stream), in
/// the selection's order.
fn stream_events(trace: &Trace, selection: &Selection) -> std::collections::BTreeMap<(u32, u32), Vec<StreamEvent>> {
    let mut streams: std::collections::BTreeMap<(u32, u32), Vec<StreamEvent>> = Default::default();
    for &(i, start, end) in &selection.gpu {
        let e = &trace.events[i as usize];
        if !matches!(e.category, Category::Kernel | Category::GpuMemcpy | Category::GpuMemset) {
            continue;
        }
        let launch = e.correlation.and_then(|c| selection.launches.get(&c.get())).map(|&(_, start, _)| start);
        streams.entry((e.device.unwrap_or(0), e.stream.unwrap_or(0))).or_default().push((start, end, launch));
    }
    streams
}

/// A stream's gaps so far, by kind.
#[derive(Clone, Copy, Debug, Default)]
struct Gaps {
    host: i64,
    kernel: i64,
    other: i64,
}

impl Gaps {
    /// The gap between an event that ended at `prev_end` and the next one.
    fn add(&mut self, prev_end: i64, (start, _, launch): StreamEvent, delay: i64) {
        let gap = start - prev_end;
        if launch.is_some_and(|l| l > prev_end) {
            self.host += gap;
        } else if gap < delay {
            self.kernel += gap;
        } else {
            self.other += gap;
        }
    }

    fn row(&self, device: u32, stream: u32, timing: Timing) -> StreamIdle {
        StreamIdle { device, stream, host_wait_us: to_us(self.host, timing), kernel_wait_us: to_us(self.kernel, timing), other_us: to_us(self.other, timing) }
    }
}

/// The runtime calls whose launches HTA's `get_cuda_kernel_launch_stats`
/// counts (with its default `include_memory_events`), MTIA's among them.
pub const HTA_LAUNCH_CALLS: [&str; 5] = ["cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync", MTIA_LAUNCH_CALL];

/// The `mtia_runtime` call HTA 0.5.0's launch stats take for MTIA's kernel
/// launch (cuda_kernel_analysis.py).
pub const MTIA_LAUNCH_CALL: &str = "runFunction - job_prep_and_submit_for_execution";

/// Those and the driver API's launches, which HTA leaves out: cuDNN's
/// runtime-compiled kernels and Triton's (torch.compile) are launched so.
pub const ALL_LAUNCH_CALLS: [&str; 7] =
    ["cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync", MTIA_LAUNCH_CALL, "cuLaunchKernel", "cuLaunchKernelEx"];

/// One launch and the GPU event it launched (µs in HTA's timing, else ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Launch {
    /// Index into [`Trace::events`] of the GPU event.
    pub event: u32,
    pub cpu_duration: i64,
    pub gpu_duration: i64,
    /// From the end of the launch call to the start of the GPU event; 0
    /// when the GPU event started first.
    pub launch_delay: i64,
}

/// HTA's `get_cuda_kernel_launch_stats()`: each GPU event (with a stream)
/// joined by correlation to the call of `calls` that launched it, among
/// the events HTA keeps. Durations are in the units of `timing` (µs for
/// [`Timing::Hta`], ns for [`Timing::Exact`]); in HTA's, a short event's
/// duration can be negative, as there. A correlation with several launch
/// calls takes the last one (HTA's join would repeat the row).
pub fn launch_stats(trace: &Trace, timing: Timing, calls: &[&str]) -> Vec<Launch> {
    launch_stats_of(trace, &select(trace, timing), calls)
}

/// [`launch_stats`] of the events `selection` (of `trace`) keeps.
pub fn launch_stats_of(trace: &Trace, selection: &Selection, calls: &[&str]) -> Vec<Launch> {
    let calls: Vec<_> = calls.iter().filter_map(|c| trace.strings.lookup(c)).collect();
    let mut rows = Vec::new();
    for &(i, start, end) in &selection.gpu {
        let e = &trace.events[i as usize];
        let Some(&(launch, launch_start, launch_end)) = e.correlation.and_then(|c| selection.launches.get(&c.get())) else { continue };
        if !calls.contains(&trace.events[launch as usize].name) {
            continue;
        }
        rows.push(Launch { event: i, cpu_duration: launch_end - launch_start, gpu_duration: end - start, launch_delay: (start - launch_end).max(0) });
    }
    rows
}

/// HTA's summary of [`launch_stats`] (its three plots, default cutoffs:
/// 50 µs for a runtime call, 100 µs for a launch delay).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaunchSummary {
    pub rows: usize,
    /// A GPU event shorter than the call that launched it (a call of at
    /// most the runtime cutoff).
    pub short_gpu_kernels: usize,
    pub runtime_outliers: usize,
    pub launch_delay_outliers: usize,
    /// Medians (pandas': the mean of the two middle values), in the units
    /// of the rows.
    pub cpu_duration_median: f64,
    pub gpu_duration_median: f64,
}

/// HTA's runtime and launch delay cutoffs (µs).
pub const RUNTIME_CUTOFF_US: i64 = 50;
pub const LAUNCH_DELAY_CUTOFF_US: i64 = 100;

/// [`LaunchSummary`] of rows in the units of `timing`.
pub fn launch_summary(rows: &[Launch], timing: Timing) -> LaunchSummary {
    let unit = match timing {
        Timing::Exact => 1000,
        Timing::Hta => 1,
    };
    let (runtime_cutoff, delay_cutoff) = (RUNTIME_CUTOFF_US * unit, LAUNCH_DELAY_CUTOFF_US * unit);
    let median = |mut v: Vec<i64>| -> f64 {
        v.sort_unstable();
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2] as f64,
            n => (v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0,
        }
    };
    LaunchSummary {
        rows: rows.len(),
        short_gpu_kernels: rows.iter().filter(|r| r.cpu_duration <= runtime_cutoff && r.gpu_duration < r.cpu_duration).count(),
        runtime_outliers: rows.iter().filter(|r| r.cpu_duration > runtime_cutoff).count(),
        launch_delay_outliers: rows.iter().filter(|r| r.launch_delay > delay_cutoff).count(),
        cpu_duration_median: median(rows.iter().map(|r| r.cpu_duration).collect()),
        gpu_duration_median: median(rows.iter().map(|r| r.gpu_duration).collect()),
    }
}

mod windowed;
pub use windowed::{Accumulator, OverlapAccumulator, SLACK_NS};

#[cfg(test)]
mod tests {
    use super::{hta_span, micros_f64, nearest_quotient};

    /// `ns / 1000` as a decimal, parsed by Rust's correctly rounded parser.
    fn parsed(ns: i64) -> f64 {
        let (q, r) = (ns.unsigned_abs() / 1000, ns.unsigned_abs() % 1000);
        let sign = if ns < 0 { "-" } else { "" };
        format!("{sign}{q}.{r:03}").parse().unwrap()
    }

    /// splitmix64.
    fn random(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn check(ns: i64) {
        let (ours, theirs) = (micros_f64(ns), parsed(ns));
        assert_eq!(ours.to_bits(), theirs.to_bits(), "{ns} ns: {ours} vs {theirs}");
    }

    #[test]
    fn micros_are_the_decimals_nearest_f64() {
        let mut values = vec![0, 1, -1, 999, 1000, 1001, i64::MAX, i64::MIN, i64::MIN + 1];
        // Around 2^53 (where `ns as f64` stops being exact) and the powers
        // of two, in ns and in µs (1000 · 2^k: where the µs value's ulp
        // changes).
        for k in 0..63 {
            for base in [1i64 << k, 1000i64.checked_shl(k).filter(|v| v >> k == 1000).unwrap_or(0)] {
                for d in -1002..=1002 {
                    values.extend([base.saturating_add(d), base.saturating_add(d).saturating_neg()]);
                }
            }
        }
        // Ties: at epoch times (2^50 to 2^51 µs, an ulp of 1/4 µs) the
        // quarters' halves, .125 .375 .625 .875; 2^51 to 2^52 µs: .250
        // .750; 2^52 to 2^53: .500; each the whole-µs value even and odd.
        let mut state = 1;
        for (low, ties) in [(1i64 << 50, &[125, 375, 625, 875][..]), (1 << 51, &[250, 750]), (1 << 52, &[500])] {
            for _ in 0..2000 {
                let us = low + (random(&mut state) % (low as u64 - 1)) as i64;
                for &t in ties {
                    for ns in [us * 1000 + t, (us + 1) * 1000 + t, us * 1000 + t + 1, us * 1000 + t - 1] {
                        values.extend([ns, -ns]);
                    }
                }
            }
        }
        // Random values of every magnitude, with r = 0 and a whole µs.
        for _ in 0..200_000 {
            let bits = random(&mut state) % 64;
            let ns = (random(&mut state) >> (64 - bits).min(63)) as i64;
            values.extend([ns, -ns, ns / 1000 * 1000]);
        }
        // Kineto's epoch times (2023-2025) in ns.
        for _ in 0..200_000 {
            values.push(1_680_000_000_000_000_000 + (random(&mut state) % 100_000_000_000_000_000) as i64);
        }
        for ns in values {
            check(ns);
        }
    }

    #[test]
    fn integer_quotients_equal_one_exact_division() {
        // Below 2^53, n as f64 / 1000.0 is one correctly rounded division.
        let mut state = 7;
        for _ in 0..100_000 {
            let n = random(&mut state) >> (11 + random(&mut state) % 53);
            if n != 0 {
                assert_eq!(nearest_quotient(u128::from(n), 1000).to_bits(), (n as f64 / 1000.0).to_bits(), "{n}");
            }
        }
    }

    #[test]
    fn hta_spans_round_as_pandas() {
        // ns_resolution_trace (HTA's tests): "ts": 1712195495506290.120,
        // "dur": 1.312 is (…290, …291) in HTA; with `ns as f64 / 1000.0`
        // the start was …290.25 and ceil made it …291.
        assert_eq!(hta_span(1712195495506290120, 1312), (1712195495506290, 1712195495506291));
        assert_eq!(hta_span(1712195495506322567, 1280), (1712195495506323, 1712195495506323));
        // A whole-µs trace stays whole: (ts, ts + dur).
        assert_eq!(hta_span(1661203462633808000, 3000), (1661203462633808, 1661203462633811));
        // A short event can end before it starts, as in HTA.
        assert_eq!(hta_span(1_000_200, 500), (1001, 1000));
    }
}
