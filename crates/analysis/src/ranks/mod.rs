//! `rtfprof ranks`: the ranks of a distributed job side by side. A rank is
//! one PyTorch trace (`*.pt.trace.json[.gz]` of a directory) or one XPlane
//! host (`*.xplane.pb` of a run directory).
//!
//! **Rank ids.** A PyTorch trace's `distributedInfo.rank` (torch writes it
//! when `torch.distributed` is initialised), else the trace's place in the
//! directory's sorted file names; every trace of a directory must say or
//! none, and no two may say the same rank. XPlane hosts are numbered in the
//! order of their sorted file names.
//!
//! **Steps.** Each rank's steps are exactly `rtfprof steps` on that rank's
//! file alone ([`crate::steps::pytorch::analyze_trace`],
//! [`crate::steps::xplane::analyze`] and [`crate::steps::from_hosts`]); per
//! step the rank's compute, communication and idle time come from there
//! too, with the communication that no computation overlapped
//! ("exposed"). Step time statistics are those of `rtfprof steps` (mean,
//! sample standard deviation, CV).
//!
//! **Communication** is the time collective kernels ran (NCCL/RCCL kernels
//! and the other names of [`crate::steps::pytorch`]'s communication rule;
//! XLA's collectives as XProf classes them, `nccl…`). Neither trace kind
//! tells waiting for the other ranks from moving data: a collective kernel
//! is one span from its start, however early its rank arrived, to the end
//! of the transfer. It is reported whole.
//!
//! **Stragglers** ([`straggler_rule`]): a rank is one when its own time
//! (mean over its steps of the step time less the exposed communication)
//! is more than [`STRAGGLER_K`] scaled MADs above the median rank's, and at
//! least [`STRAGGLER_FLOOR`] of it. In a synchronous job every rank waits
//! for the slowest in its collectives, so step times even out across ranks
//! and the wait shows as exposed communication on the ranks that were on
//! time: the slow rank is the one with the most time of its own.
//!
//! **Overlap** ([`hta::comm_comp_overlap`]): HTA 0.5.0's
//! `get_comm_comp_overlap()`, per rank (PyTorch: HTA's number itself; XPlane:
//! the same definition on the trace's picoseconds).
//!
//! `rtfprof::outputs::ranks` writes the text, JSON and CSV.

mod sources;
pub mod xplane;

pub use sources::from_sources;

use std::path::Path;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::hta::{self, Timing};
use crate::inputs::pytorch::windows::Windows;
use crate::inputs::pytorch::{Category, Trace};
use crate::intervals::{Empty, covered, difference, union};
pub use crate::stats::records::ranks::*;
use crate::steps::pytorch::{self as torch_steps, Classifier, Kind};
use crate::steps::windowed::WindowedSteps;

/// The straggler rule's cutoff, in scaled MADs: Iglewicz and Hoaglin's 3.5
/// for the modified z-score `0.6745 (x - median) / MAD`, the usual robust
/// outlier test (a normal sample passes it with probability ≈ 0.9998 per
/// value, so 16 ranks of pure jitter name none with ≈ 99.6% chance).
pub const STRAGGLER_K: f64 = 3.5;

/// The MAD of a normal sample times this estimates its standard deviation.
pub const MAD_SCALE: f64 = 1.4826;

/// A straggler is also at least this much slower than the median rank
/// (5%): ranks that agree to within noise (a MAD near 0, e.g. the same
/// trace twice) name no straggler for a difference that small.
pub const STRAGGLER_FLOOR: f64 = 0.05;

/// The rank ids of traces, given each one's `distributedInfo.rank`: those,
/// or the file order where no trace has one. `None` where some have one
/// and others not, or two have the same: the message says which.
pub fn rank_ids(names: &[&str], given: &[Option<i64>]) -> std::result::Result<(Vec<i64>, bool), String> {
    if given.iter().all(Option::is_none) {
        return Ok(((0..given.len() as i64).collect(), false));
    }
    if let Some(k) = given.iter().position(Option::is_none) {
        let with = given.iter().position(Option::is_some).map_or("", |i| names[i]);
        return Err(format!("mixes traces with a rank (distributedInfo.rank, e.g. {with}) and without one (e.g. {}): give one job's ranks", names[k]));
    }
    let ids: Vec<i64> = given.iter().map(|r| r.unwrap_or(0)).collect();
    for (i, id) in ids.iter().enumerate() {
        if let Some(j) = ids[..i].iter().position(|other| other == id) {
            return Err(format!("{} and {} both say they are rank {id} (distributedInfo.rank): give one job's ranks", names[j], names[i]));
        }
    }
    Ok((ids, true))
}

/// The ranks of PyTorch traces, one a rank, named (the traces of
/// `dir`, which errors name).
pub fn analyze_pytorch(dir: &Path, traces: &[(String, &Trace)]) -> Result<Ranks> {
    let traces: Vec<(String, RankTrace<'_>)> = traces.iter().map(|(name, trace)| (name.clone(), RankTrace::Whole(trace))).collect();
    analyze_pytorch_read(dir, &traces)
}

/// A rank's trace: read whole, or planned to be read a window of steps at
/// a time (its top-level fields read: `distributedInfo`).
pub enum RankTrace<'a> {
    Whole(&'a Trace),
    Windows(&'a Windows, &'a Trace),
}

impl RankTrace<'_> {
    fn distributed(&self) -> Option<&crate::inputs::pytorch::Distributed> {
        match self {
            RankTrace::Whole(trace) => trace.distributed.as_ref(),
            RankTrace::Windows(_, head) => head.distributed.as_ref(),
        }
    }

    /// The trace whose events hold every `ProfilerStep` name.
    fn steps(&self) -> &Trace {
        match self {
            RankTrace::Whole(trace) => trace,
            RankTrace::Windows(windows, _) => &windows.steps,
        }
    }
}

/// [`analyze_pytorch`] of traces read whole or in windows.
pub fn analyze_pytorch_read(dir: &Path, traces: &[(String, RankTrace<'_>)]) -> Result<Ranks> {
    let (ids, from_traces) = pytorch_ids(dir, traces.iter().map(|(n, t)| (n.as_str(), t.distributed())))?;
    // HTA leaves the last step out when its symbol table, shared by every
    // rank, holds two or more ProfilerStep names.
    let step_names: rustc_hash::FxHashSet<&str> = traces.iter().flat_map(|(_, t)| hta::profiler_step_names(t.steps())).collect();
    let drop_last_step = step_names.len() >= 2;
    let mut ranks: Vec<Rank> = traces
        .par_iter()
        .zip(ids.par_iter())
        .map(|((name, trace), &id)| match trace {
            RankTrace::Whole(trace) => Ok(pytorch_rank(id, name, trace, drop_last_step)),
            RankTrace::Windows(windows, _) => pytorch_rank_windowed(id, name, windows, drop_last_step, hta::SLACK_NS),
        })
        .collect::<Result<_>>()?;
    Ok(finish(Source::PyTorch, from_traces, &mut ranks))
}

/// The rank ids of PyTorch traces (`(name, distributedInfo)`, one a
/// rank, of `dir`, which errors name), as [`rank_ids`] gives them.
fn pytorch_ids<'a>(dir: &Path, traces: impl Iterator<Item = (&'a str, Option<&'a crate::inputs::pytorch::Distributed>)>) -> Result<(Vec<i64>, bool)> {
    let (names, given): (Vec<&str>, Vec<Option<i64>>) = traces.map(|(name, distributed)| (name, distributed.and_then(|d| d.rank))).unzip();
    rank_ids(&names, &given).map_err(|m| Error::input(crate::inputs::pytorch::KIND, dir, m))
}

/// Each step's compute, communication, exposed communication and idle
/// time of PyTorch traces (`(name, trace, its step rows)`, one a rank, of
/// `dir`), as [`analyze_pytorch`] gives them, with the rank ids: for
/// callers that have the steps' rows already (`check`), without the rest
/// of a rank's analysis (its copies, HTA's overlap).
pub fn pytorch_rank_steps(dir: &Path, traces: &[(&str, &Trace, &[torch_steps::Row])]) -> Result<Vec<(i64, Vec<RankStep>)>> {
    let (ids, _) = pytorch_ids(dir, traces.iter().map(|(name, trace, _)| (*name, trace.distributed.as_ref())))?;
    let steps = traces.par_iter().map(|(_, trace, rows)| {
        let mut table = StepTable::default();
        table.add(rows, &GpuWork::of(&mut Classifier::new(trace), |_, _| true));
        table.finish()
    });
    Ok(ids.into_iter().zip(steps.collect::<Vec<_>>()).collect())
}

/// The summary of one PyTorch trace as a rank.
pub fn pytorch_summary(name: &str, trace: &Trace) -> RankSummary {
    let rank = pytorch_rank(0, name, trace, false);
    let overlap_without_last_step = rank.overlap.map(|_| CommOverlap {
        percent: hta::comm_comp_overlap(trace, Timing::Hta, true).percent(),
        exact_ratio: hta::comm_comp_overlap(trace, Timing::Exact, true).ratio(),
    });
    let mut step_names: Vec<String> = hta::profiler_step_names(trace).into_iter().map(str::to_owned).collect();
    step_names.sort();
    step_names.dedup();
    RankSummary { source: Source::PyTorch, rank, given_rank: trace.distributed.as_ref().and_then(|d| d.rank), step_names, overlap_without_last_step }
}

/// The ranks of summaries named by their jobs, in name order (which is the
/// order of the ranks' files when their names are the files' stems, as
/// `rtfprof partial` names them): ids as [`analyze_pytorch`] and
/// [`xplane::analyze`] give them, then the straggler rule. `what` names
/// the inputs in errors.
pub fn from_summaries(what: &Path, summaries: Vec<(String, RankSummary)>) -> Result<Ranks> {
    let Some(source) = summaries.first().map(|(_, s)| s.source) else {
        return Err(Error::input("--partial_path", what, "holds no ranks (partials of PyTorch or XPlane traces carry their rank)"));
    };
    if let Some((name, _)) = summaries.iter().find(|(_, s)| s.source != source) {
        return Err(Error::input("--partial_path", what, format!("mixes PyTorch and XPlane ranks (e.g. {name}): give one job's ranks")));
    }
    let names: Vec<&str> = summaries.iter().map(|(n, _)| n.as_str()).collect();
    let (ids, from_traces) = match source {
        Source::PyTorch => {
            let given: Vec<Option<i64>> = summaries.iter().map(|(_, s)| s.given_rank).collect();
            rank_ids(&names, &given).map_err(|m| Error::input("--partial_path", what, m))?
        }
        Source::Xplane => ((0..summaries.len() as i64).collect(), false),
    };
    let step_names: rustc_hash::FxHashSet<&str> = summaries.iter().flat_map(|(_, s)| s.step_names.iter().map(String::as_str)).collect();
    let drop_last_step = source == Source::PyTorch && step_names.len() >= 2;
    let mut ranks: Vec<Rank> = summaries
        .iter()
        .zip(ids)
        .map(|((_, s), id)| {
            let overlap = if drop_last_step { s.overlap_without_last_step } else { s.rank.overlap };
            Rank { rank: id, overlap, ..s.rank.clone() }
        })
        .collect();
    Ok(finish(source, from_traces, &mut ranks))
}

/// Sorts the ranks and applies the straggler rule.
pub fn finish(source: Source, ids_from_traces: bool, ranks: &mut Vec<Rank>) -> Ranks {
    ranks.sort_by_key(|r| r.rank);
    let rule = straggler_rule(ranks);
    let stragglers = ranks.iter().filter(|r| r.straggler).map(|r| r.rank).collect();
    Ranks { source, ids_from_traces, ranks: std::mem::take(ranks), rule, stragglers }
}

/// The median of values (the mean of the middle two of an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// Marks the stragglers: ranks whose own time exceeds the median rank's by
/// more than [`STRAGGLER_K`] scaled MADs and by [`STRAGGLER_FLOOR`] of it.
/// Ranks without steps are left out; with fewer than 3 others, none is
/// named.
pub fn straggler_rule(ranks: &mut [Rank]) -> Option<Rule> {
    let own: Vec<f64> = ranks.iter().filter_map(Rank::own_us).collect();
    if own.len() < 3 {
        return None;
    }
    let median_us = median(own.clone());
    let scaled_mad_us = MAD_SCALE * median(own.iter().map(|x| (x - median_us).abs()).collect());
    let threshold_us = median_us + (STRAGGLER_K * scaled_mad_us).max(STRAGGLER_FLOOR * median_us);
    for rank in ranks.iter_mut() {
        rank.straggler = rank.own_us().is_some_and(|x| x > threshold_us);
    }
    Some(Rule { median_us, scaled_mad_us, threshold_us })
}

/// `H2D` for `Memcpy HtoD (Pageable -> Device)`, as Kineto names copies.
fn direction_of_memcpy(name: &str) -> &'static str {
    match name.strip_prefix("Memcpy ").and_then(|rest| rest.split_whitespace().next()) {
        Some("HtoD") => "H2D",
        Some("DtoH") => "D2H",
        Some("DtoD") => "D2D",
        Some("PtoP") => "P2P",
        Some("HtoH") => "H2H",
        _ => "other",
    }
}

/// Copies `(direction, start, end, bytes)` in a time range, by direction.
pub(crate) fn transfers<T: Copy + PartialOrd>(copies: &[(&'static str, T, T, Option<i64>)], from: T, to: T, us: impl Fn(T, T) -> f64) -> Vec<Transfer> {
    let mut out: Vec<Transfer> = Vec::new();
    for &direction in &DIRECTIONS {
        let of: Vec<_> = copies.iter().filter(|c| c.0 == direction && c.1 >= from && c.1 < to).collect();
        if of.is_empty() {
            continue;
        }
        let bytes = of.iter().map(|c| c.3).sum::<Option<i64>>();
        out.push(Transfer { direction, count: of.len() as u64, bytes, us: of.iter().map(|c| us(c.1, c.2)).sum() });
    }
    out
}

/// One PyTorch trace as a rank: its steps as `rtfprof steps` finds them,
/// the collectives' time in each, copies, HTA's overlap.
fn pytorch_rank(rank: i64, name: &str, trace: &Trace, drop_last_step: bool) -> Rank {
    let analyzed = torch_steps::analyze_trace(name, trace);
    let work = GpuWork::of(&mut Classifier::new(trace), |_, _| true);
    let mut steps = StepTable::default();
    steps.add(&analyzed.rows, &work);
    let (from, to) = steps.span();
    let mut transfers = TransferTally::default();
    for copy in &work.copies {
        transfers.add(copy, from, to);
    }
    let has_gpu_work = steps.has_gpu_work;
    let overlap = has_gpu_work.then(|| CommOverlap {
        percent: hta::comm_comp_overlap(trace, Timing::Hta, drop_last_step).percent(),
        exact_ratio: hta::comm_comp_overlap(trace, Timing::Exact, drop_last_step).ratio(),
    });
    Rank {
        rank,
        name: name.to_owned(),
        world_size: trace.distributed.as_ref().and_then(|d| d.world_size),
        steps: steps.finish(),
        transfers: transfers.finish(),
        overlap,
        straggler: false,
    }
}

/// [`pytorch_rank`] of a trace read a window of steps at a time: the rows
/// of [`WindowedSteps`]; each window's own steps' collectives (every device
/// event that meets a step is in the step's window); the copies each
/// window owns (by their launch); HTA's overlap by
/// [`hta::OverlapAccumulator`]. Device work that starts more than
/// `slack_ns` before the window of its launch is an error.
fn pytorch_rank_windowed(rank: i64, name: &str, windows: &Windows, drop_last_step: bool, slack_ns: i64) -> Result<Rank> {
    let mut by_windows = RankWindows::new(windows, drop_last_step, slack_ns, false);
    for k in 0..windows.windows.len() {
        by_windows.add(k, &windows.read(k)?)?;
    }
    Ok(by_windows.finish(rank, name)?.0)
}

/// [`pytorch_summary`] of a trace read a window of steps at a time
/// (`pytorch_rank_windowed`, and the overlap without the last step
/// from the same windows), each window also handed to `also` as it is
/// read: `partial` imports the node model from them.
pub fn pytorch_summary_windowed(name: &str, windows: &Windows, mut also: impl FnMut(usize, &Trace) -> Result<()>) -> Result<RankSummary> {
    let mut by_windows = RankWindows::new(windows, false, hta::SLACK_NS, true);
    for k in 0..windows.windows.len() {
        let trace = windows.read(k)?;
        by_windows.add(k, &trace)?;
        also(k, &trace)?;
    }
    let given_rank = windows.head()?.distributed.as_ref().and_then(|d| d.rank);
    let (rank, without_last_step) = by_windows.finish(0, name)?;
    let overlap_without_last_step = rank.overlap.and(without_last_step);
    let mut step_names: Vec<String> = hta::profiler_step_names(&windows.steps).into_iter().map(str::to_owned).collect();
    step_names.sort();
    step_names.dedup();
    Ok(RankSummary { source: Source::PyTorch, rank, given_rank, step_names, overlap_without_last_step })
}

/// The error of a rank that cannot be read a window at a time, and why.
fn cannot_window(windows: &Windows, why: String) -> Error {
    Error::input(crate::inputs::pytorch::KIND, windows.path(), format!("cannot be read a window at a time: {why}"))
}

/// [`pytorch_rank_windowed`] fed one window at a time: the rows of
/// [`WindowedSteps`]; each window's own steps' collectives (every device
/// event that meets a step is in the step's window); the copies each
/// window owns (by their launch); HTA's overlap by
/// [`hta::OverlapAccumulator`].
struct RankWindows<'w> {
    windows: &'w Windows,
    by_windows: WindowedSteps<'w>,
    overlaps: [hta::OverlapAccumulator; 2],
    /// The overlap without the last step too (a rank summary has both).
    without_last_step: Option<[hta::OverlapAccumulator; 2]>,
    steps: StepTable,
    transfers: TransferTally,
    /// Copies that may start after the last step's end (which only the
    /// last window knows): held until then; the others are before it.
    late: Vec<MemCopy>,
    last_step_start: i64,
    world_size: Option<i64>,
    from: Option<i64>,
    to: i64,
}

impl<'w> RankWindows<'w> {
    fn new(windows: &'w Windows, drop_last_step: bool, slack_ns: i64, also_without_last_step: bool) -> RankWindows<'w> {
        let overlaps = |drop_last_step| [Timing::Hta, Timing::Exact].map(|t| hta::OverlapAccumulator::new(t, &windows.steps, drop_last_step, slack_ns));
        RankWindows {
            windows,
            by_windows: WindowedSteps::new(windows, slack_ns),
            overlaps: overlaps(drop_last_step),
            without_last_step: also_without_last_step.then(|| overlaps(true)),
            steps: StepTable::default(),
            transfers: TransferTally::default(),
            late: Vec::new(),
            last_step_start: windows.steps.steps().into_iter().map(|(_, i)| windows.steps.events[i as usize].ts).max().unwrap_or(i64::MAX),
            world_size: None,
            from: None,
            to: i64::MAX,
        }
    }

    /// Adds window `k`, whose trace is `trace`; windows come in order.
    fn add(&mut self, k: usize, trace: &Trace) -> Result<()> {
        let window = &self.windows.windows[k];
        if k == 0 {
            self.world_size = trace.distributed.as_ref().and_then(|d| d.world_size);
        }
        let rows = self.by_windows.add(k, trace)?.to_vec();
        let mut classifier = Classifier::new(trace);
        let work = GpuWork::of(&mut classifier, |launches, i| window.owns(trace, launches, i));
        self.steps.add(&rows, &work);
        let from = *self.from.get_or_insert(self.steps.span().0);
        if k + 1 == self.windows.windows.len() {
            self.to = self.steps.span().1;
        }
        for copy in work.copies {
            if copy.ts >= self.last_step_start { self.late.push(copy) } else { self.transfers.add(&copy, from, self.to) }
        }
        for overlap in self.overlaps.iter_mut().chain(self.without_last_step.iter_mut().flatten()) {
            overlap.add(trace, window, classifier.launches()).map_err(|m| cannot_window(self.windows, m))?;
        }
        Ok(())
    }

    /// The rank, and HTA's overlap without the last step where asked for.
    fn finish(mut self, rank: i64, name: &str) -> Result<(Rank, Option<CommOverlap>)> {
        if self.to < self.last_step_start {
            return Err(cannot_window(self.windows, "its last step ends before it starts".to_owned()));
        }
        for copy in &self.late {
            self.transfers.add(copy, self.from.unwrap_or(i64::MIN), self.to);
        }
        let has_gpu_work = self.steps.has_gpu_work;
        let overlap = |[by_hta, exact]: [hta::OverlapAccumulator; 2]| {
            let (by_hta, exact) = (by_hta.finish(), exact.finish());
            CommOverlap { percent: by_hta.percent(), exact_ratio: exact.ratio() }
        };
        let without_last_step = self.without_last_step.map(overlap);
        let overlap = has_gpu_work.then(|| overlap(self.overlaps));
        let rank = Rank {
            rank,
            name: name.to_owned(),
            world_size: self.world_size,
            steps: self.steps.finish(),
            transfers: self.transfers.finish(),
            overlap,
            straggler: false,
        };
        Ok((rank, without_last_step))
    }
}

/// One memory copy: its direction, start, end (ns) and bytes.
#[derive(Clone, Copy, Debug)]
struct MemCopy {
    direction: &'static str,
    ts: i64,
    end: i64,
    bytes: Option<i64>,
}

/// A trace's collectives (merged), the communication no computation
/// overlapped, and the copies `counted` takes.
struct GpuWork {
    comm: Vec<(i64, i64)>,
    exposed: Vec<(i64, i64)>,
    copies: Vec<MemCopy>,
}

impl GpuWork {
    /// `counted(launches, event)`: `launches` are the trace's
    /// ([`Trace::launches_by_correlation`]).
    fn of(classifier: &mut Classifier, counted: impl Fn(&rustc_hash::FxHashMap<u64, u32>, u32) -> bool) -> GpuWork {
        let trace = classifier.trace();
        let (mut comm, mut compute, mut copies) = (Vec::new(), Vec::new(), Vec::new());
        for (i, e) in trace.events.iter().enumerate().filter(|(_, e)| torch_steps::is_gpu_work(e)) {
            match classifier.kind(i as u32) {
                Kind::Communication => comm.push((e.ts, e.end())),
                kind if kind.is_compute() => compute.push((e.ts, e.end())),
                _ => {}
            }
            if e.category == Category::GpuMemcpy && counted(classifier.launches(), i as u32) {
                copies.push(MemCopy { direction: direction_of_memcpy(trace.str(e.name)), ts: e.ts, end: e.end(), bytes: trace.copy_bytes(i as u32) });
            }
        }
        let comm = union(comm, Empty::Drop);
        let exposed = difference(&comm, &union(compute, Empty::Drop));
        GpuWork { comm, exposed, copies }
    }
}

/// The steps of a rank, built from `rtfprof steps`' rows (a step and a GPU
/// each) in order.
#[derive(Default)]
struct StepTable {
    steps: Vec<RankStep>,
    windows: Vec<(i64, i64)>,
    has_gpu_work: bool,
}

impl StepTable {
    /// Adds rows whose collectives `work` holds.
    fn add(&mut self, rows: &[torch_steps::Row], work: &GpuWork) {
        for row in rows {
            let window = (row.start_ns, row.end_ns);
            if self.windows.last() != Some(&window) || self.steps.last().is_none_or(|s| s.step != row.step) {
                let us = |ns: i64| ns as f64 / 1000.0;
                self.windows.push(window);
                self.steps.push(RankStep {
                    step: row.step.clone(),
                    step_us: us(row.step_ns()),
                    compute_us: Some(0.0),
                    communication_us: Some(us(covered(&work.comm, window.0, window.1))),
                    exposed_communication_us: Some(us(covered(&work.exposed, window.0, window.1))),
                    idle_us: Some(0.0),
                });
            }
            if let (Some(g), Some(step)) = (&row.gpu, self.steps.last_mut()) {
                self.has_gpu_work = true;
                *step.compute_us.get_or_insert(0.0) += g.compute_ns as f64 / 1000.0;
                *step.idle_us.get_or_insert(0.0) += g.idle_ns as f64 / 1000.0;
            }
        }
    }

    /// From the first step's start to the last one's end.
    fn span(&self) -> (i64, i64) {
        (self.windows.first().map_or(i64::MIN, |w| w.0), self.windows.last().map_or(i64::MIN, |w| w.1))
    }

    /// The steps; their GPU columns empty where no step has GPU work.
    fn finish(mut self) -> Vec<RankStep> {
        if !self.has_gpu_work {
            for step in &mut self.steps {
                (step.compute_us, step.communication_us, step.exposed_communication_us, step.idle_us) = (None, None, None, None);
            }
        }
        self.steps
    }
}

/// Copies by direction, those that start within `[from, to)`, with their
/// durations summed in whole nanoseconds (so that the order they are added
/// in does not matter).
#[derive(Default)]
struct TransferTally {
    by_direction: std::collections::BTreeMap<usize, (u64, Option<i64>, i64)>,
}

impl TransferTally {
    fn add(&mut self, copy: &MemCopy, from: i64, to: i64) {
        if !(copy.ts >= from && copy.ts < to) {
            return;
        }
        let Some(d) = DIRECTIONS.iter().position(|&d| d == copy.direction) else { return };
        let (count, bytes, ns) = self.by_direction.entry(d).or_insert((0, Some(0), 0));
        *count += 1;
        *bytes = bytes.zip(copy.bytes).map(|(a, b)| a + b);
        *ns += copy.end - copy.ts;
    }

    fn finish(self) -> Vec<Transfer> {
        self.by_direction.into_iter().map(|(d, (count, bytes, ns))| Transfer { direction: DIRECTIONS[d], count, bytes, us: ns as f64 / 1000.0 }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(id: i64, own: &[f64]) -> Rank {
        let steps = own
            .iter()
            .map(|&us| RankStep { step: String::new(), step_us: us, compute_us: None, communication_us: None, exposed_communication_us: None, idle_us: None })
            .collect();
        Rank { rank: id, name: id.to_string(), world_size: None, steps, transfers: Vec::new(), overlap: None, straggler: false }
    }

    #[test]
    fn one_slow_rank_among_jittered_ones_is_the_straggler() {
        let mut ranks: Vec<Rank> = (0..16).map(|i| rank(i, &[1000.0 + (i % 5) as f64 * 4.0])).collect();
        ranks[11] = rank(11, &[1300.0]);
        let rule = straggler_rule(&mut ranks).unwrap();
        assert_eq!(ranks.iter().filter(|r| r.straggler).map(|r| r.rank).collect::<Vec<_>>(), vec![11]);
        assert_eq!(rule.median_us, 1008.0);
        // Identical ranks: the MAD is 0 and the 5% floor decides.
        let mut same: Vec<Rank> = (0..4).map(|i| rank(i, &[1000.0])).collect();
        same[2] = rank(2, &[1040.0]);
        straggler_rule(&mut same).unwrap();
        assert!(same.iter().all(|r| !r.straggler));
        // Two ranks: no median to speak of.
        assert_eq!(straggler_rule(&mut [rank(0, &[1.0]), rank(1, &[9.0])]), None);
    }

    #[test]
    fn ids_from_traces_or_file_order() {
        assert_eq!(rank_ids(&["a", "b"], &[None, None]), Ok((vec![0, 1], false)));
        assert_eq!(rank_ids(&["a", "b"], &[Some(1), Some(0)]), Ok((vec![1, 0], true)));
        assert!(rank_ids(&["a", "b"], &[Some(1), None]).unwrap_err().contains("mixes"));
        assert!(rank_ids(&["a", "b"], &[Some(1), Some(1)]).unwrap_err().contains("both say they are rank 1"));
    }

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the rank the whole trace gives (its
    /// steps' collectives, copies and HTA's overlap, with and without the
    /// last step), settling at each window's end and with the slack.
    #[test]
    fn windows_give_the_whole_traces_rank() {
        let whole = |_: &_, trace: &Trace| Some([false, true].map(|drop_last_step| format!("{:#?}", pytorch_rank(3, "r", trace, drop_last_step))));
        let windowed = crate::inputs::pytorch::for_each_windowing(whole, |whole, windows, what| {
            for (drop_last_step, whole) in [false, true].into_iter().zip(whole) {
                for slack in [0, hta::SLACK_NS] {
                    let by_windows = pytorch_rank_windowed(3, "r", windows, drop_last_step, slack).unwrap();
                    assert_eq!(&format!("{by_windows:#?}"), whole, "{what}, slack {slack}, drop {drop_last_step}");
                }
            }
        });
        assert!(windowed >= 80, "only {windowed} windowings");
    }

    #[test]
    fn memcpy_directions() {
        assert_eq!(direction_of_memcpy("Memcpy HtoD (Pageable -> Device)"), "H2D");
        assert_eq!(direction_of_memcpy("Memset (Device)"), "other");
    }
}
