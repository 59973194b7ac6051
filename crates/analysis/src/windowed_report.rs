//! What `rtfprof report` reads from a large PyTorch trace, a window of
//! steps at a time, each window read once: the node model (the report's
//! trees and op table), the steps (its steps tab) and each step's memory
//! replay (its memory tab), each as the trace read whole gives it.
//!
//! Each window's trace goes to the import, which counts its executions
//! into the node model and hands over the `[memory]` records of the steps
//! no later window adds to ([`WindowedImport::with_allocations`]), and to
//! the steps ([`WindowedSteps`]); the records handed over are replayed at
//! once ([`StepReplay`]), so memory holds a window, the node model and
//! the steps' results.

use crate::error::Result;
use crate::hta;
use crate::inputs::pytorch::WindowedImport;
use crate::inputs::pytorch::windows::Windows;
use crate::load::{self, Loaded, Sources};
use crate::memory::{MemoryProfile, StepReplay};
use crate::stats::Stats;
use crate::stats::flops::FlopsEstimate;
use crate::steps::windowed::WindowedSteps;

/// A report's inputs read in windows.
pub struct WindowedReport {
    /// The node model and its start-up lines; no trace is kept.
    pub loaded: Loaded,
    pub steps: crate::steps::Steps,
    /// The replay of `--step` (every step for -1), empty without records.
    pub memory: MemoryProfile,
    /// Whether the trace has any allocation records.
    pub any_records: bool,
}

/// The report's inputs when `--pytorch_path` is one trace that its
/// windowing cuts ([`load::lone_pytorch_windows`]); `None` for other
/// inputs, which are loaded whole.
pub fn pytorch(sources: &Sources, step: i64) -> Result<Option<WindowedReport>> {
    let Some(windows) = load::lone_pytorch_windows(sources)? else { return Ok(None) };
    read(&windows, step, sources.paths.estimate_flops).map(Some)
}

/// Reads the trace `windows` plans for a report of `step` (-1: every
/// step), float ops estimated as `estimate_flops` says.
pub fn read(windows: &Windows, step: i64, estimate_flops: FlopsEstimate) -> Result<WindowedReport> {
    let mut import = WindowedImport::with_allocations(windows);
    let mut steps = WindowedSteps::new(windows, hta::SLACK_NS);
    let mut replay = StepReplay::new(step);
    for k in 0..windows.windows.len() {
        let trace = windows.read(k)?;
        let (handed, rows) = rayon::join(|| import.add_allocations(k, &trace), || steps.add(k, &trace).map(drop));
        handed?.into_iter().for_each(|handed| replay.add(handed));
        rows?;
    }
    let mut stats = Stats::new();
    let (last, lines) = import.finish_with_allocations(&mut stats)?;
    last.into_iter().for_each(|handed| replay.add(handed));
    stats.estimate_missing_flops(estimate_flops);
    // (Without records the report replays nothing, whatever `--step` is.)
    let (memory, any_records) = if replay.any_records() { replay.finish()? } else { (MemoryProfile::default(), false) };
    let loaded = Loaded {
        stats,
        kinds: vec![crate::inputs::Kind::PyTorch],
        traces: Vec::new(),
        listing: format!("Reading Files...\n{lines}"),
        coverage: Vec::new(),
        rank_summaries: None,
    };
    Ok(WindowedReport { loaded, steps: crate::steps::pytorch::steps(vec![steps.finish("")]), memory, any_records })
}
