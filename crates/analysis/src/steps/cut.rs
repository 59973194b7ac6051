//! Which time of an XPlane trace holds some of its steps, for `rtfprof cut`
//! (which writes the events of that window, `inputs::xplane::cut`).
//!
//! Steps are numbered as `rtfprof steps` shows them (the number a step's
//! name ends with, `train 5`, or its group). The window runs from the first
//! kept step's start (or its group's root's, which begins earlier: the host
//! side of a step runs ahead of its devices, and its kernel launches are
//! what group the kernels; a cut without them would leave the first step's
//! kernels without a step) to the last one's end. XProf drops the first
//! and the last step of a trace that has more than 5: a cut of more than 5
//! steps keeps one more step either side, for XProf to drop, so that the
//! cut's table shows the steps asked for.

use crate::error::{Error, Result};
use crate::inputs::step_range::StepRange;
use std::path::Path;

use crate::inputs::xplane::{TraceSource, XplaneFile, not_an_xspace};

use super::xplane::{self, DROP_INCOMPLETE_STEPS_ABOVE, HostStep};
use super::{Source, Steps, no_steps_message};

/// The steps a cut keeps and their window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The steps asked for, as `rtfprof steps` names them.
    pub steps: Vec<String>,
    /// The steps kept either side for XProf to drop (none, or two).
    pub margin: Vec<String>,
    /// From the first kept step's start (or its group's root's) to the
    /// last one's end, in the trace's picoseconds.
    pub span_ps: (i128, i128),
    /// Whether the steps are named by their groups' numbers (a JAX trace's
    /// device steps), which count the trace's roots: the cut must keep
    /// them all for its steps to keep their numbers. (Steps named by their
    /// markers, `train 4`, are not: keeping the roots of the steps around
    /// them would make those steps in part.)
    pub by_group: bool,
}

/// The window of `steps` in the trace `file` (one host's).
pub fn window(file: &XplaneFile, steps: StepRange) -> Result<Window> {
    file.check()?;
    let host = xplane::analyze_every_step(&file.bytes, &|part| file.release(part));
    file.walked();
    window_of(host, &file.path, steps, true)
}

/// The window of `steps` in a loaded trace, for its timeline (`--output
/// timeline` with `--steps`): as [`window`]'s, without the steps around
/// them that XProf would drop (a timeline shows the steps asked for).
pub fn timeline_window(trace: &TraceSource, steps: StepRange) -> Result<Window> {
    let host = xplane::analyze_every_step(&trace.bytes, &|part| trace.release(part));
    trace.walked();
    window_of(host, &trace.path, steps, false)
}

/// The window of `steps` in the steps analysis `host` of the trace at
/// `path`; `margin`: with a step either side of more than
/// `DROP_INCOMPLETE_STEPS_ABOVE` steps, for XProf to drop.
fn window_of(
    host: std::result::Result<(xplane::HostSteps, xplane::GroupRoots), prost::DecodeError>,
    path: &Path,
    steps: StepRange,
    margin: bool,
) -> Result<Window> {
    let (all, roots) = host.map_err(|e| not_an_xspace(path, &e))?;
    let mut shown = all.steps.clone();
    xplane::drop_incomplete_steps(&mut shown);
    let dropped = usize::from(shown.len() != all.steps.len());
    let invalid = |message: String| Error::input("--xplane_path", path, message);
    if shown.is_empty() {
        let none = Steps { source: Source::Xplane(all.hardware), rows: Vec::new(), tf_data_in_use: false, pytorch: Vec::new() };
        return Err(invalid(no_steps_message(&none)));
    }
    let picked: Vec<usize> = (0..shown.len()).filter(|&i| u64::try_from(number(&shown[i])).is_ok_and(|n| steps.contains(n))).collect();
    let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
        let (a, b) = (&shown[0], &shown[shown.len() - 1]);
        let have = if shown.len() == 1 { format!("its only step is {}", name(a)) } else { format!("its steps are {} to {}", name(a), name(b)) };
        let asked = if steps.first == steps.last { format!("no step {}", steps.first) } else { format!("no step in {}..{}", steps.first, steps.last) };
        return Err(invalid(format!("{asked}: {have} (as `rtfprof steps` shows them)")));
    };
    // (Indices in `all`, whose first step `shown` may have dropped.)
    let (mut first, mut last) = (first + dropped, last + dropped);
    let kept = all.steps[first..=last].iter().map(name).collect();
    let mut margin_steps = Vec::new();
    if margin && last - first + 1 > DROP_INCOMPLETE_STEPS_ABOVE && first > 0 && last + 1 < all.steps.len() {
        (first, last) = (first - 1, last + 1);
        margin_steps = vec![name(&all.steps[first]), name(&all.steps[last])];
    }
    // From the earliest start of a step or of its group's root (a step's
    // kernels are grouped by their launches, before the step's time on the
    // devices) to the last step's end (what comes after a step groups none
    // of its events).
    let around = &all.steps[first..=last];
    let starts = around.iter().flat_map(|s| [Some(s.begin_ps), roots.get(&s.group).copied()]).flatten();
    let start = starts.min().unwrap_or(0);
    let end = around.iter().map(|s| s.begin_ps + s.duration_ps).max().unwrap_or(0);
    let by_group = around.iter().any(|s| s.name.is_empty());
    Ok(Window { steps: kept, margin: margin_steps, span_ps: (start, end), by_group })
}

/// A step's number as `rtfprof steps` shows it: the number its name ends
/// with (`train 5`), or its group (an unnamed step's name).
fn number(step: &HostStep) -> i64 {
    step.name.rsplit(' ').next().and_then(|n| n.parse().ok()).unwrap_or(step.group)
}

/// A step's name as `rtfprof steps` shows it.
fn name(step: &HostStep) -> String {
    if step.name.is_empty() { step.group.to_string() } else { step.name.clone() }
}
