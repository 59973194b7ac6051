//! `rtfprof memory`: each allocator's bytes in use over a step, its peak,
//! and the nodes that hold live bytes at the peak.
//!
//! The allocations come from [`Stats::allocations`] (loaded with
//! [`crate::inputs::InputPaths::allocations`]). For each step and allocator
//! they are replayed in time order:
//! - RunMetadata and profiles record allocations (`alloc_bytes > 0`) and
//!   frees (`< 0`); the curve is their running sum from 0 at the step's
//!   start. Allocations come before frees of the same microsecond, so the
//!   peak is an upper bound.
//! - XPlane traces record, with each event, the allocator's own bytes in
//!   use (`bytes_allocated + bytes_reserved`); the curve is that count, as in
//!   XProf's `memory_profile`, and includes what was allocated before the
//!   step.
//!
//! The peak is the largest value of the curve; when it is reached more than
//! once, the last time counts (as in XProf). A node's live bytes at the
//! peak are its allocations minus its frees up to the peak. Bytes in use at
//! the peak that no node of the step holds (allocated before the step, or
//! by no op) are listed as [`UNTRACKED`], so the live bytes add up to the
//! peak.
//!
//! On XPlane traces, [`programs`] adds what each XLA program that ran
//! holds at its own peak, by XLA's buffer assignment (XProf's
//! `memory_viewer`): JAX's allocator events name no op, XLA's buffer
//! assignment does.
//!
//! [`analyze`] is the library entry point (the HTML report calls it);
//! `rtfprof::outputs::memory` writes the tfprof-style text and the JSON.

pub mod programs;

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::inputs::Kind;
use crate::stats::{AllocationEvent, Stats};

/// The name under which live bytes no node holds are listed. It cannot be
/// a TensorFlow node name (those have no parentheses).
pub const UNTRACKED: &str = "(untracked)";

/// The memory of every step analyzed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryProfile {
    pub steps: Vec<StepMemory>,
    /// The XLA programs that ran in the loaded XPlane traces, largest peak
    /// first (programs XProf's memory viewer fails on last).
    pub programs: Vec<programs::ProgramMemory>,
}

/// One step's allocators.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepMemory {
    pub step: i64,
    /// The step's start in the input's clock (µs): its first execution or
    /// allocator event. (With several jobs, each has its own clock: see
    /// [`AllocatorMemory::start_micros`].)
    pub start_micros: i64,
    /// By allocator name.
    pub allocators: Vec<AllocatorMemory>,
}

/// One allocator in one step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllocatorMemory {
    pub name: String,
    /// The step's start in the clock of the allocator's job (µs); curve
    /// times and the peak time count from here.
    pub start_micros: i64,
    pub peak_bytes: i64,
    /// When the peak was (last) reached, in µs from the step's start.
    pub peak_micros: i64,
    /// Nodes with live bytes at the peak, most bytes first (then by name),
    /// [`UNTRACKED`] among them when there are such bytes.
    pub live_at_peak: Vec<LiveNode>,
    /// Bytes in use over the step: `(µs from the step's start, bytes)`, at
    /// most two points a microsecond (the highest value within it, then the
    /// value it ends with, when they differ).
    pub curve: Vec<(i64, i64)>,
    /// Whether the curve is the allocator's own count (XPlane) rather than
    /// a replay of allocation records from 0.
    pub measured: bool,
    /// How many allocation events the step has for this allocator.
    pub events: usize,
}

/// A node holding bytes at the peak.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveNode {
    pub name: String,
    pub bytes: i64,
}

/// The steps that have executions or allocations.
pub fn steps(stats: &Stats) -> BTreeSet<i64> {
    let mut steps = stats.steps.clone();
    steps.extend(stats.allocations.iter().map(|e| e.step));
    steps
}

/// Analyzes `step`, or every step when it is negative. A step that was not
/// recorded is an error, as in the views.
pub fn analyze(loaded: &crate::load::Loaded, step: i64) -> Result<MemoryProfile> {
    Ok(MemoryProfile { steps: step_memory(loaded, step)?, programs: ran_programs(loaded)? })
}

/// The allocators of `step`, or of every step when it is negative, without
/// the XLA programs' buffer assignments ([`analyze`] adds them; `rtfprof
/// check` reads only each allocator's peak).
pub fn step_memory(loaded: &crate::load::Loaded, step: i64) -> Result<Vec<StepMemory>> {
    let stats = &loaded.stats;
    let known = steps(stats);
    if step >= 0 && !known.contains(&step) {
        return Err(step_not_found(step, &known));
    }
    let chosen: Vec<i64> = if step >= 0 { vec![step] } else { known.into_iter().collect() };
    // Each (step, allocator)'s events, in input order.
    let mut groups: BTreeMap<(i64, &str), Vec<&AllocationEvent>> = BTreeMap::new();
    for e in stats.allocations.iter().filter(|e| chosen.binary_search(&e.step).is_ok()) {
        groups.entry((e.step, e.allocator)).or_default().push(e);
    }
    let first_execs = first_execs(stats, &chosen);
    let steps = chosen
        .iter()
        .map(|&step| {
            let in_step: Vec<(&str, &[&AllocationEvent])> =
                groups.range((step, "")..).take_while(|((s, _), _)| *s == step).map(|((_, name), events)| (*name, events.as_slice())).collect();
            replay_step(step, &in_step, |job| first_execs.get(&(job, step)).copied())
        })
        .collect();
    Ok(steps)
}

/// The first op start (`all_start_micros` > 0) of each job in each of
/// `steps`, by (job, step): a job's ops are the nodes named `job/…`, and
/// every node is the empty job's (one job, or none named). One pass over
/// the nodes' executions: asking every node for every step instead took
/// steps × nodes lookups, most of `check`'s and `memory`'s time on a trace
/// of thousands of steps.
fn first_execs<'a>(stats: &'a Stats, steps: &[i64]) -> FxHashMap<(&'a str, i64), i64> {
    let mut jobs: BTreeSet<&str> = BTreeSet::from([""]);
    let mut last = "";
    for e in &stats.allocations {
        if !std::ptr::eq(e.job, last) {
            last = e.job;
            jobs.insert(e.job);
        }
    }
    let mut first: FxHashMap<(&str, i64), i64> = FxHashMap::default();
    for node in &stats.nodes {
        let of: Vec<&str> = jobs.iter().copied().filter(|j| j.is_empty() || node.name.strip_prefix(j).is_some_and(|rest| rest.starts_with('/'))).collect();
        for (&step, exec) in &node.execs {
            if exec.all_start_micros <= 0 || steps.binary_search(&step).is_err() {
                continue;
            }
            for &job in &of {
                first.entry((job, step)).and_modify(|m| *m = (*m).min(exec.all_start_micros)).or_insert(exec.all_start_micros);
            }
        }
    }
    first
}

/// One step's allocators (`allocators`: each one's events, by name),
/// each job's clock starting the step at its own first op
/// (`first_exec`) or event.
fn replay_step(step: i64, allocators: &[(&str, &[&AllocationEvent])], first_exec: impl Fn(&str) -> Option<i64>) -> StepMemory {
    // Each job's first event, in one pass (a step's events are nearly all
    // of one job: the last job seen is tried first, by address, before
    // the names are compared).
    let mut first_events: Vec<(&str, i64)> = Vec::new();
    for e in allocators.iter().flat_map(|(_, events)| events.iter()) {
        let at = match first_events.last() {
            Some((job, _)) if std::ptr::eq(*job, e.job) => first_events.len() - 1,
            _ => match first_events.iter().position(|(job, _)| *job == e.job) {
                Some(at) => at,
                None => {
                    first_events.push((e.job, e.micros));
                    continue;
                }
            },
        };
        first_events[at].1 = first_events[at].1.min(e.micros);
    }
    let start_of = |job: &str, first_event: Option<i64>| match (first_event, first_exec(job)) {
        (Some(a), Some(b)) => a.min(b),
        (a, b) => a.or(b).unwrap_or(0),
    };
    let starts: BTreeMap<&str, i64> = first_events.iter().map(|&(job, first)| (job, start_of(job, Some(first)))).collect();
    let allocators = allocators.iter().map(|(name, events)| replay(name, events, starts[events[0].job])).collect();
    let start_micros = starts.values().copied().min().unwrap_or_else(|| start_of("", None));
    StepMemory { step, start_micros, allocators }
}

/// `rtfprof memory` on a PyTorch trace read a window of steps at a time
/// ([`crate::inputs::pytorch::allocations_windows`]): each step
/// is replayed as soon as its records are all read, with the numbers of
/// the trace read whole, so memory holds a window and the steps' results.
/// Returns the profile, the start-up lines, and whether the trace has any
/// allocation records.
pub fn windowed(windows: &crate::inputs::pytorch::windows::Windows, step: i64) -> Result<(MemoryProfile, String, bool)> {
    let mut replay = StepReplay::new(step);
    let listing = crate::inputs::pytorch::allocations_windows(windows, |handed| replay.add(handed))?;
    let (profile, any) = replay.finish()?;
    Ok((profile, listing, any))
}

/// The steps of a windowed read ([`crate::inputs::pytorch::StepAllocations`],
/// handed over once no later window adds to them) replayed as they come:
/// `rtfprof memory` and the report read a large trace so.
pub struct StepReplay {
    /// The step to replay (-1: every step).
    step: i64,
    known: BTreeSet<i64>,
    steps: Vec<StepMemory>,
    any_records: bool,
}

impl StepReplay {
    pub fn new(step: i64) -> StepReplay {
        StepReplay { step, known: BTreeSet::new(), steps: Vec::new(), any_records: false }
    }

    /// Replays `handed` if it is a step to replay.
    pub fn add(&mut self, handed: crate::inputs::pytorch::StepAllocations) {
        self.known.insert(handed.step);
        self.any_records |= !handed.allocations.is_empty();
        if self.step >= 0 && handed.step != self.step {
            return;
        }
        // Each allocator's events, in input order, by name.
        let mut groups: BTreeMap<&str, Vec<&AllocationEvent>> = BTreeMap::new();
        for e in &handed.allocations {
            groups.entry(e.allocator).or_default().push(e);
        }
        let allocators: Vec<(&str, &[&AllocationEvent])> = groups.iter().map(|(name, events)| (*name, events.as_slice())).collect();
        self.steps.push(replay_step(handed.step, &allocators, |_| handed.first_exec_micros));
    }

    /// Whether any step handed over so far has allocation records.
    pub fn any_records(&self) -> bool {
        self.any_records
    }

    /// The profile of the steps replayed, and whether the trace has any
    /// allocation records; a `--step` that was not recorded is an error.
    pub fn finish(mut self) -> Result<(MemoryProfile, bool)> {
        if self.step >= 0 && !self.known.contains(&self.step) {
            return Err(step_not_found(self.step, &self.known));
        }
        self.steps.sort_by_key(|s| s.step);
        Ok((MemoryProfile { steps: self.steps, programs: Vec::new() }, self.any_records))
    }
}

/// `--step` names a step that was not recorded.
fn step_not_found(step: i64, known: &BTreeSet<i64>) -> Error {
    let available: Vec<String> = known.iter().map(i64::to_string).collect();
    Error::Profile(format!("--step={step}: step not found (available steps: {})", available.join(" ")))
}

/// The programs of the loaded traces that ran, largest peak first.
pub fn ran_programs(loaded: &crate::load::Loaded) -> Result<Vec<programs::ProgramMemory>> {
    let mut ran = Vec::new();
    for (job, trace) in loaded.xplane_traces() {
        let programs = crate::inputs::xplane::hlo::Programs::from_space(&trace.bytes)
            .map_err(|e| Error::input("--xplane_path", &trace.path, format!("its XLA programs do not decode ({e})")))?;
        let ids: BTreeSet<i64> = trace.device.hlo_ops.iter().map(|r| r.program_id as i64).collect();
        ran.extend(programs.iter().filter(|p| ids.contains(&p.id)).map(|p| programs::ProgramMemory::of(job, p, true)));
    }
    let peak = |p: &programs::ProgramMemory| p.heap.as_ref().map_or(i64::MIN, |h| h.peak_bytes);
    ran.sort_by(|a, b| peak(b).cmp(&peak(a)).then_with(|| (&a.job, a.program_id).cmp(&(&b.job, b.program_id))));
    Ok(ran)
}

/// Replays one allocator's events of one step.
fn replay(name: &str, events: &[&AllocationEvent], start: i64) -> AllocatorMemory {
    let measured = events.iter().all(|e| e.in_use.is_some());
    let mut order: Vec<&AllocationEvent> = events.to_vec();
    if measured {
        order.sort_by_key(|e| e.micros);
    } else {
        // Allocations before frees of the same microsecond.
        order.sort_by_key(|e| (e.micros, e.bytes < 0));
    }
    // The value after each event.
    let mut running = 0i64;
    let values: Vec<i64> = order
        .iter()
        .map(|e| {
            running = match e.in_use {
                Some(in_use) if measured => in_use,
                _ => running.wrapping_add(e.bytes),
            };
            running
        })
        .collect();
    // (`max_by_key` returns the last of equal maxima.)
    let peak_at = values.iter().enumerate().max_by_key(|&(_, v)| *v).map_or(0, |(i, _)| i);
    let peak_bytes = values.get(peak_at).copied().unwrap_or(0);

    let mut curve = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let t = order[i].micros;
        let end = i + order[i..].iter().take_while(|e| e.micros == t).count();
        let (highest, last) = (values[i..end].iter().copied().max().unwrap_or(0), values[end - 1]);
        if highest != last {
            curve.push((t.wrapping_sub(start), highest));
        }
        curve.push((t.wrapping_sub(start), last));
        i = end;
    }

    let mut held: FxHashMap<&str, i64> = FxHashMap::default();
    for e in order.iter().take(peak_at + 1).filter(|e| !e.node.is_empty()) {
        let bytes = held.entry(&e.node).or_default();
        *bytes = bytes.wrapping_add(e.bytes);
    }
    let mut live_at_peak: Vec<LiveNode> =
        held.into_iter().filter(|&(_, bytes)| bytes > 0).map(|(name, bytes)| LiveNode { name: name.to_owned(), bytes }).collect();
    let untracked = live_at_peak.iter().fold(peak_bytes, |rest, n| rest.wrapping_sub(n.bytes));
    if untracked > 0 {
        live_at_peak.push(LiveNode { name: UNTRACKED.to_owned(), bytes: untracked });
    }
    live_at_peak.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));

    AllocatorMemory {
        name: name.to_owned(),
        start_micros: start,
        peak_bytes,
        peak_micros: order.get(peak_at).map_or(0, |e| e.micros.wrapping_sub(start)),
        live_at_peak,
        curve,
        measured,
        events: order.len(),
    }
}

/// Why a trace has nothing to replay.
pub const NO_TRACE_RECORDS: &str =
    "No allocation records: the trace has no MemoryAllocation/MemoryDeallocation events (TensorFlow records them for GPU allocators).";

/// Where `--pytorch_path` is a lone trace that its windowing reads a
/// window of steps at a time (see [`windowed`]): its memory profile, the
/// start-up lines, and whether it has allocation records. `None` for
/// other inputs, which are loaded whole.
pub fn pytorch_windowed(sources: &crate::load::Sources, step: i64) -> Result<Option<(MemoryProfile, String, bool)>> {
    let Some(windows) = crate::load::lone_pytorch_windows(sources)? else { return Ok(None) };
    windowed(&windows, step).map(Some)
}

/// Why there is nothing to replay, by kind of input.
pub fn no_records_note(loaded: &crate::load::Loaded) -> &'static str {
    if loaded.kinds == [Kind::Profile] {
        "No allocation records: a ProfileProto keeps only those of GPU allocators (tfprof drops the others); the RunMetadata files have them all."
    } else if loaded.from_traces() {
        NO_TRACE_RECORDS
    } else {
        "No allocation records in the inputs (RunMetadata has them when traced with FULL_TRACE)."
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::symbol::symbol;

    fn event(micros: i64, bytes: i64, node: &str, in_use: Option<i64>) -> AllocationEvent {
        AllocationEvent { step: 0, allocator: symbol("a"), micros, bytes, node: node.into(), in_use, job: "" }
    }

    fn run(events: &[AllocationEvent]) -> AllocatorMemory {
        let refs: Vec<&AllocationEvent> = events.iter().collect();
        replay("a", &refs, 100)
    }

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the memory profile the trace loaded
    /// whole gives (every step, and one step asked for), with the same
    /// start-up lines.
    #[test]
    fn windows_give_the_whole_traces_memory() {
        use crate::inputs::pytorch::windows::Windowing;
        let whole = |path: &std::path::Path, _: &_| {
            let sources = crate::load::Sources { pytorch_path: Some(path.to_owned()), pytorch_windows: Windowing::Whole, ..Default::default() };
            let loaded = crate::load::load(&sources, crate::load::Purpose::Memory).ok()?;
            Some((analyze(&loaded, -1).unwrap(), loaded))
        };
        let mut with_records = 0;
        let windowings = crate::inputs::pytorch::for_each_windowing(whole, |(whole, loaded), windows, what| {
            let (profile, listing, any) = windowed(windows, -1).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(listing, loaded.listing, "{what}");
            assert_eq!(format!("{profile:?}"), format!("{whole:?}"), "{what}");
            assert_eq!(any, !loaded.stats.allocations.is_empty(), "{what}");
            let last = whole.steps.last().expect("a trace with steps");
            assert_eq!(windowed(windows, last.step).unwrap().0.steps, std::slice::from_ref(last), "{what}");
            with_records += usize::from(any);
        });
        // (They must not all be skipped, nor all lack records.)
        assert!(windowings >= 81 && with_records >= 3, "{windowings} windowings, {with_records} with records");
    }

    #[test]
    fn allocations_come_before_frees_of_the_same_microsecond() {
        // x frees at 110 as y allocates: the peak holds both.
        let m = run(&[event(105, 10, "x", None), event(110, -10, "x", None), event(110, 7, "y", None), event(120, -7, "y", None)]);
        assert_eq!((m.peak_bytes, m.peak_micros), (17, 10));
        assert_eq!(m.curve, [(5, 10), (10, 17), (10, 7), (20, 0)]);
        assert_eq!(m.live_at_peak, [LiveNode { name: "x".into(), bytes: 10 }, LiveNode { name: "y".into(), bytes: 7 }]);
        assert!(!m.measured);
    }

    #[test]
    fn the_last_time_the_peak_is_reached_counts() {
        let m = run(&[event(101, 5, "x", None), event(102, -5, "x", None), event(103, 5, "y", None)]);
        assert_eq!((m.peak_bytes, m.peak_micros), (5, 3));
        assert_eq!(m.live_at_peak, [LiveNode { name: "y".into(), bytes: 5 }]);
    }

    #[test]
    fn an_allocators_own_count_is_the_curve_and_the_rest_is_untracked() {
        // 1000 bytes were in use before the step; a free of some of them
        // (no node) and an allocation by y.
        let m = run(&[event(101, -200, "", Some(800)), event(102, 300, "y", Some(1100)), event(103, -300, "y", Some(800))]);
        assert!(m.measured);
        assert_eq!((m.peak_bytes, m.peak_micros), (1100, 2));
        assert_eq!(m.live_at_peak, [LiveNode { name: UNTRACKED.into(), bytes: 800 }, LiveNode { name: "y".into(), bytes: 300 }]);
        assert_eq!(m.curve, [(1, 800), (2, 1100), (3, 800)]);
    }
}
