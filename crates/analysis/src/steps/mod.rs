//! `rtfprof steps`: where each step's time goes, in XProf's categories
//! (device compute, device to device, collectives, host compute, kernel
//! launch, input, output, compile, other).
//!
//! XPlane traces get XProf's `input_pipeline_analyzer` step rows
//! ([`xplane`]); RunMetadata and event files get the categories their
//! records allow (`run_meta`). PyTorch traces have no such categories:
//! their steps split each GPU's time instead, with columns of their own
//! ([`pytorch`]). [`summary`] gives XProf's conclusion from the same
//! numbers (used by `advise`); `rtfprof::outputs::steps` writes them.

pub mod cut;
pub mod pytorch;
pub(crate) mod run_meta;
pub mod windowed;
pub mod xplane;

use crate::error::Result;
use crate::inputs::pytorch::windows::Windowing;
use crate::inputs::xplane::{XplaneFile, not_an_xspace};
use crate::load::{self, Sources};
pub use crate::sample::stats_of;
use xplane::{Hardware, HostSteps, event_type as et};

/// The categories, in the order of XProf's step-time graph.
pub const CATEGORIES: [&str; 9] =
    ["device_compute", "device_to_device", "device_collectives", "host_compute", "kernel_launch", "input", "output", "compile", "other"];

/// XProf's column labels for [`CATEGORIES`].
pub const LABELS: [&str; 9] =
    ["Device compute", "Device to device", "Device collectives", "Host compute", "Kernel launch", "Input", "Output", "Compilation", "Other"];

/// Where the steps came from, and so which categories they can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// XPlane traces: every category, as XProf computes them.
    Xplane(Hardware),
    /// RunMetadata, event files and profiles: device compute and host
    /// compute only (the node model keeps no memcpy streams).
    RunMetadata,
    /// PyTorch traces: the rows are in [`Steps::pytorch`], one table a
    /// rank, with their own columns ([`pytorch::number_names`]).
    PyTorch,
}

/// One step's time and its split, in microseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct StepRow {
    pub name: String,
    pub step_us: f64,
    /// Per [`CATEGORIES`]; `None` where the input cannot tell.
    pub categories: [Option<f64>; 9],
    /// GPU traces, beyond XProf: the step's time in memcpys on the devices
    /// (any direction), and the time no device ran anything.
    pub transfers_us: Option<f64>,
    pub device_idle_us: Option<f64>,
}

impl StepRow {
    /// The step time, each of [`CATEGORIES`], then transfers and device
    /// idle (named by [`number_names`]).
    pub fn numbers(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        std::iter::once(Some(self.step_us)).chain(self.categories.iter().copied()).chain([self.transfers_us, self.device_idle_us])
    }
}

/// The names of [`StepRow::numbers`] in the JSON and CSV outputs (and the
/// Python API): `step_time_us`, `<category>_us`, `transfers_us`,
/// `device_idle_us`.
pub fn number_names() -> impl Iterator<Item = String> {
    std::iter::once("step_time_us".to_owned())
        .chain(CATEGORIES.iter().map(|c| format!("{c}_us")))
        .chain(["transfers_us".to_owned(), "device_idle_us".to_owned()])
}

/// The steps of a profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Steps {
    pub source: Source,
    pub rows: Vec<StepRow>,
    /// tf.data ops ran (XProf then points at its host input analysis).
    pub tf_data_in_use: bool,
    /// PyTorch traces' steps, a rank a trace (`rows` is then empty).
    pub pytorch: Vec<pytorch::Rank>,
}

impl Steps {
    /// Whether no step was found.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.pytorch.iter().all(|r| r.rows.is_empty())
    }
}

/// The steps of `sources`, as `rtfprof steps` finds them, with the
/// warnings about the inputs: XPlane traces are read in place (no node
/// model); other inputs are loaded. No step is an error saying why.
pub fn from_sources(sources: &Sources) -> Result<(Steps, Vec<String>)> {
    load::check_event_flags(sources, load::Purpose::Steps)?;
    if let Some((hosts, _)) = load::xplane_hosts(sources)? {
        return Ok((analyze_xplane(&hosts)?, Vec::new()));
    }
    if let Some(ranks) = load::pytorch_only(sources)? {
        return Ok((analyze_pytorch(&ranks, sources.pytorch_windows)?, Vec::new()));
    }
    let mut loaded = load::load(sources, load::Purpose::Steps)?;
    let warnings = std::mem::take(&mut loaded.stats.warnings);
    Ok((with_rows(analyze(&loaded)?, &[])?, warnings))
}

/// The steps of a loaded profile: from its XPlane traces if it was read
/// from traces, else from its run metadata.
pub fn analyze(loaded: &crate::load::Loaded) -> Result<Steps> {
    if loaded.pytorch_traces().next().is_some() {
        return Ok(pytorch::steps(pytorch::analyze(loaded.pytorch_traces().map(|(rank, trace)| (rank, &**trace)))));
    }
    match xplane_hosts(loaded)? {
        Some(hosts) => Ok(from_hosts(&hosts)),
        None => Ok(run_meta::analyze(&loaded.stats)),
    }
}

/// Each host's steps of a profile loaded from XPlane traces, in the order
/// of [`crate::load::Loaded::xplane_traces`]; `None` for a profile read
/// from other inputs.
pub fn xplane_hosts(loaded: &crate::load::Loaded) -> Result<Option<Vec<HostSteps>>> {
    if loaded.pytorch_traces().next().is_some() || !loaded.from_traces() {
        return Ok(None);
    }
    // (Each trace's pages are given back once walked, a large one's as
    // they are walked: the loaded profile holds the mapped traces, and
    // `report` analyzes the steps of a 1 GB one after its views: 2.8 GB
    // peak RSS with its pages kept.)
    let mut hosts = Vec::new();
    for (_, trace) in loaded.xplane_traces() {
        let host = xplane::analyze_releasing(&trace.bytes, &|part| trace.release(part));
        trace.walked();
        hosts.push(host.map_err(|e| not_an_xspace(&trace.path, &e))?);
    }
    Ok(Some(hosts))
}

/// The steps of XPlane traces, one file a host: read in place, without
/// loading them into nodes (the views' conversion is not needed). No step
/// is an error naming the trace (its run directory for several hosts).
pub fn analyze_xplane(hosts: &[(String, std::path::PathBuf)]) -> Result<Steps> {
    let paths: Vec<std::path::PathBuf> = hosts.iter().map(|(_, path)| path.clone()).collect();
    with_rows(analyze_xplane_found(hosts)?, &paths)
}

/// [`analyze_xplane`], with no step not an error: for `capture`, whose
/// trace is saved whatever it holds (a loop without step markers has none).
pub fn analyze_xplane_found(hosts: &[(String, std::path::PathBuf)]) -> Result<Steps> {
    let files = hosts.iter().map(|(_, path)| XplaneFile::open(path)).collect::<Result<Vec<_>>>()?;
    for file in &files {
        file.check()?;
    }
    analyze_files(&files)
}

/// The steps of XPlane traces given alone (`--xplane_path`), read in place
/// before they are loaded: as [`analyze`] finds them from the loaded
/// traces, without the loaded profile in memory at the same time. `None`
/// for other inputs, and where the traces cannot be read (loading them
/// then says why, as it did).
pub fn xplane_before_loading(sources: &Sources) -> Option<Steps> {
    xplane_hosts_before_loading(sources).map(|hosts| from_hosts(&hosts))
}

/// Each host's steps of [`xplane_before_loading`], in the order the
/// traces load in.
pub fn xplane_hosts_before_loading(sources: &Sources) -> Option<Vec<HostSteps>> {
    let alone = sources.pytorch_path.is_none() && sources.jobs.is_empty() && sources.partial_paths.is_empty() && sources.partial_bytes.is_none();
    let (hosts, _) = load::xplane_hosts(sources).ok().flatten().filter(|_| alone)?;
    let files = hosts.iter().map(|(_, path)| XplaneFile::open(path)).collect::<Result<Vec<_>>>().ok()?;
    if files.iter().any(|file| file.check().is_err()) {
        return None;
    }
    analyze_hosts(&files).ok()
}

/// The steps of PyTorch traces, one a rank (`(name, file)`), read in
/// parallel without the node model; those `windowing` reads a window at a
/// time ([`windowed`]) one after the other.
pub fn analyze_pytorch(ranks: &[(String, std::path::PathBuf)], windowing: Windowing) -> Result<Steps> {
    use rayon::prelude::*;
    let plans = ranks.iter().map(|(_, path)| windowing.plan(path)).collect::<Result<Vec<_>>>()?;
    let whole = ranks.par_iter().zip(&plans).map(|((name, path), plan)| match plan {
        Some(_) => Ok(None),
        None => crate::inputs::pytorch::Trace::open(path).map(|trace| Some(pytorch::analyze_trace(name, &trace))),
    });
    let whole = whole.collect::<Result<Vec<_>>>()?;
    let mut analyzed = Vec::with_capacity(ranks.len());
    for (((name, _), plan), rank) in ranks.iter().zip(&plans).zip(whole) {
        analyzed.push(match (rank, plan) {
            (Some(rank), _) => rank,
            (None, Some(windows)) => windowed::analyze_windows(name, windows)?,
            (None, _) => unreachable!("a rank is read whole or planned"),
        });
    }
    let analyzed = pytorch::steps(analyzed);
    let paths: Vec<std::path::PathBuf> = ranks.iter().map(|(_, path)| path.clone()).collect();
    with_rows(analyzed, &paths)
}

/// `analyzed`, unless it has no step: then an error, one line naming the
/// trace (the run directory of several).
pub fn with_rows(analyzed: Steps, traces: &[std::path::PathBuf]) -> Result<Steps> {
    if !analyzed.is_empty() {
        return Ok(analyzed);
    }
    let message = no_steps_message(&analyzed);
    let flag = if analyzed.source == Source::PyTorch { "--pytorch_path" } else { "--xplane_path" };
    Err(match traces {
        [] => crate::error::Error::Profile(message),
        [trace] => crate::error::Error::input(flag, trace, message),
        [trace, ..] => crate::error::Error::input(flag, trace.parent().unwrap_or(trace), message),
    })
}

/// The steps of XPlane trace files, one a host (the first host's rows are
/// shown); a file that is not a trace is an error naming it.
pub fn analyze_traces<'a>(traces: impl Iterator<Item = (&'a std::path::Path, &'a [u8])>) -> Result<Steps> {
    let mut hosts = Vec::new();
    for (path, bytes) in traces {
        let host = xplane::analyze(bytes).map_err(|e| not_an_xspace(path, &e))?;
        hosts.push(host);
    }
    Ok(from_hosts(&hosts))
}

/// [`analyze_traces`] for mapped trace files, giving their pages back once
/// walked (see [`XplaneFile::release`]).
pub fn analyze_files(files: &[XplaneFile]) -> Result<Steps> {
    analyze_hosts(files).map(|hosts| from_hosts(&hosts))
}

/// Each host's steps of [`analyze_files`].
fn analyze_hosts(files: &[XplaneFile]) -> Result<Vec<HostSteps>> {
    let mut hosts = Vec::new();
    for file in files {
        let host = xplane::analyze_releasing(&file.bytes, &|part| file.release(part));
        file.walked();
        hosts.push(host.map_err(|e| not_an_xspace(&file.path, &e))?);
    }
    Ok(hosts)
}

/// XProf's combination of hosts (`StepIntersection`, `CombineAllOpStats`):
/// the steps every worker has, aligned in time with the host whose steps
/// span least; the rows are the first host's steps in that window.
pub fn from_hosts(hosts: &[HostSteps]) -> Steps {
    let hardware = hosts.iter().map(|h| h.hardware).max().unwrap_or(Hardware::CpuOnly);
    let shown: &[xplane::HostStep] = match (hosts.first(), host_windows(hosts).into_iter().next().flatten()) {
        (Some(host), Some(window)) => &host.steps[window],
        _ => &[],
    };
    let rows = shown
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let number = if hosts.len() == 1 { step.group } else { i as i64 };
            row(step, number)
        })
        .collect();
    let dataset: i128 = hosts.iter().map(|h| h.dataset_self_ps).sum();
    let enqueue: i128 = hosts.iter().map(|h| h.enqueue_self_ps).sum();
    Steps { source: Source::Xplane(hardware), rows, tf_data_in_use: tf_data_in_use(shown, dataset, enqueue), pytorch: Vec::new() }
}

/// XProf's `TfDataInUse`: tf.data ops took host time that its input
/// analysis keeps: all of it when no step time is host-to-device transfer,
/// else the share the transfers' enqueue ops leave.
fn tf_data_in_use(steps: &[xplane::HostStep], dataset_ps: i128, enqueue_ps: i128) -> bool {
    if dataset_ps <= 0 {
        return false;
    }
    let n = steps.len().max(1) as f64;
    let avg_step = steps.iter().map(|s| s.duration_ps as f64).sum::<f64>() / n;
    let to_device = |s: &xplane::HostStep| [et::HOST_TO_DEVICE, et::DEVICE_WAIT_HOST].iter().map(|t| s.type_ps.get(t).copied().unwrap_or(0)).sum::<i128>();
    let avg_to_device = steps.iter().map(|s| to_device(s) as f64).sum::<f64>() / n;
    let ratio = if avg_step > 0.0 { (avg_to_device / avg_step).min(1.0) } else { 0.0 };
    ratio == 0.0 || (enqueue_ps > 0 && ratio < 1.0)
}

fn row(step: &xplane::HostStep, number: i64) -> StepRow {
    let ps = |types: &[u8]| types.iter().map(|t| step.type_ps.get(t).copied().unwrap_or(0)).sum::<i128>() as f64 / 1e6;
    let categories = [
        ps(&[et::DEVICE_COMPUTE_16, et::DEVICE_COMPUTE_32]),
        ps(&[et::DEVICE_TO_DEVICE, et::DEVICE_WAIT_DEVICE]),
        ps(&[et::DEVICE_COLLECTIVES]),
        ps(&[et::HOST_COMPUTE]),
        ps(&[et::HOST_PREPARE]),
        ps(&[et::HOST_WAIT_INPUT, et::HOST_TO_DEVICE, et::DEVICE_WAIT_HOST]),
        ps(&[et::DEVICE_TO_HOST]),
        ps(&[et::HOST_COMPILE]),
        ps(&[et::UNKNOWN_TIME]),
    ];
    StepRow {
        name: if step.name.is_empty() { number.to_string() } else { step.name.clone() },
        step_us: step.duration_ps as f64 / 1e6,
        categories: categories.map(Some),
        transfers_us: step.device.map(|d| d.transfer_ps as f64 / 1e6),
        device_idle_us: step.device.map(|d| (step.duration_ps - d.busy_ps) as f64 / 1e6),
    }
}

/// Each host's steps that [`from_hosts`]'s rows are (the first host's) or
/// stand beside (the others'), as indices into its [`HostSteps::steps`]:
/// XProf's `StepIntersection` of the workers (the hosts with an
/// accelerator, or all where none has one), the same number of steps
/// each. `None` for a host that is not a worker, and for every host where
/// the first is not one (the rows are then empty).
pub fn host_windows(hosts: &[HostSteps]) -> Vec<Option<std::ops::Range<usize>>> {
    let accelerators = hosts.iter().any(|h| h.hardware != Hardware::CpuOnly);
    let workers: Vec<usize> = (0..hosts.len()).filter(|&i| !accelerators || hosts[i].hardware != Hardware::CpuOnly).collect();
    if hosts.len() == 1 {
        return vec![Some(0..hosts[0].steps.len())];
    }
    let windows = if workers.contains(&0) { intersection(hosts, &workers) } else { None };
    let windows = windows.unwrap_or_else(|| vec![None; hosts.len()]);
    windows.into_iter().map(|w| w.map(|(first, count)| first..first + count)).collect()
}

/// XProf's `StepIntersection`: the window `(first index, count)` of each
/// worker's steps that every worker has (`None` for other hosts).
fn intersection(hosts: &[HostSteps], workers: &[usize]) -> Option<Vec<Option<(usize, usize)>>> {
    let spans = |h: usize| -> Vec<(i128, i128)> { hosts[h].steps.iter().map(|s| (s.begin_ps, s.begin_ps + s.duration_ps)).collect() };
    let total = |h: usize| {
        let s = spans(h);
        let (lo, hi) = s.iter().filter(|x| x.1 > x.0).fold((i128::MAX, 0), |(lo, hi), x| (lo.min(x.0), hi.max(x.1)));
        if lo < hi { hi - lo } else { 0 }
    };
    let chief = *workers.iter().min_by_key(|&&h| (total(h), h))?;
    let chief_spans = spans(chief);
    let every_worker = |window: (usize, usize)| (0..hosts.len()).map(|h| workers.contains(&h).then_some(window)).collect();
    if chief_spans.is_empty() {
        return Some(every_worker((0, 0)));
    }
    let (mut max_begin, mut min_end) = (0usize, usize::MAX);
    let mut alignments = vec![None; hosts.len()];
    for &h in workers {
        let (sub_begin, chief_begin, count) = if h == chief { (0, 0, chief_spans.len()) } else { align(&spans(h), &chief_spans) };
        alignments[h] = Some((sub_begin, chief_begin));
        max_begin = max_begin.max(chief_begin);
        min_end = min_end.min(chief_begin + count);
    }
    if max_begin > min_end {
        return Some(every_worker((0, 0)));
    }
    Some(alignments.into_iter().map(|a| a.map(|(sub_begin, chief_begin)| (sub_begin + (max_begin - chief_begin), min_end - max_begin))).collect())
}

/// XProf's `FindStepsAlignment`: the offset between two step sequences
/// whose steps overlap most in time.
fn align(sub: &[(i128, i128)], chief: &[(i128, i128)]) -> (usize, usize, usize) {
    if sub.is_empty() || chief.is_empty() {
        return (0, 0, 0);
    }
    let (n, m) = (sub.len() as i64, chief.len() as i64);
    let mut similarity = vec![0i128; (n + m - 1) as usize];
    let (mut s, mut c) = (0usize, 0usize);
    while s < sub.len() && c < chief.len() {
        if sub[s].1 == sub[s].0 {
            s += 1;
            continue;
        }
        if chief[c].1 == chief[c].0 {
            c += 1;
            continue;
        }
        let overlap = (sub[s].1.min(chief[c].1) - sub[s].0.max(chief[c].0)).max(0);
        similarity[(c as i64 - s as i64 + n - 1) as usize] += overlap;
        if sub[s].1 < chief[c].1 {
            s += 1;
        } else if chief[c].1 < sub[s].1 {
            c += 1;
        } else {
            s += 1;
            c += 1;
        }
    }
    let mut best: Option<(i128, i64)> = None;
    for k in (0..m).chain((1..n).map(|k| -k)) {
        let value = similarity[(k + n - 1) as usize];
        if best.is_none_or(|(b, _)| value > b) {
            best = Some((value, k));
        }
    }
    let k = best.map_or(0, |(_, k)| k);
    let sub_begin = if k >= 0 { 0 } else { (-k) as usize };
    let chief_begin = if k >= 0 { k as usize } else { 0 };
    (sub_begin, chief_begin, (sub.len() - sub_begin).min(chief.len() - chief_begin))
}

/// XProf's bottleneck analysis (`ComputeBottleneckAnalysis`,
/// `GetSummaryNextStep`): its conclusion on input, and the statements on
/// collectives, kernel launch and other time it adds when they are large.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// `host`, `both`, `device` or `unknown` (no step time).
    pub input_classification: String,
    pub input_statement: String,
    pub next_step: String,
    pub device_collectives_statement: String,
    pub kernel_launch_statement: String,
    pub all_other_statement: String,
}

/// XProf's thresholds (percent of the total step time).
const INPUT_HIGH: f64 = 20.0;
const INPUT_MODERATE: f64 = 5.0;
const OUTPUT_HIGH: f64 = 20.0;
const OUTPUT_MODERATE: f64 = 5.0;
const KERNEL_LAUNCH_HIGH: f64 = 15.0;
const KERNEL_LAUNCH_MODERATE: f64 = 3.0;
const ALL_OTHER_HIGH: f64 = 15.0;
const ALL_OTHER_MODERATE: f64 = 3.0;
const COLLECTIVES_HIGH: f64 = 15.0;
const COLLECTIVES_MODERATE: f64 = 3.0;

/// The output-bound statement XProf computes but does not show on this page.
pub fn output_statement(percent: f64) -> Option<String> {
    let p = one_digit(percent);
    if percent >= OUTPUT_HIGH {
        Some(format!(
            "Your program is HIGHLY output-bound because {p}% of the total step time sampled is spent on output. Therefore, you should first focus on reducing the output time."
        ))
    } else if percent >= OUTPUT_MODERATE {
        Some(format!(
            "Your program is MODERATELY output-bound because {p}% of the total step time sampled is spent on output. Therefore, you would need to reduce both the output time and other time."
        ))
    } else {
        None
    }
}

fn one_digit(v: f64) -> String {
    format!("{v:.1}")
}

/// Totals over the steps, in milliseconds as XProf sums them.
fn totals(steps: &Steps) -> (f64, [f64; 9]) {
    let mut step = 0.0;
    let mut cats = [0.0; 9];
    for r in &steps.rows {
        step += r.step_us / 1000.0;
        for (i, c) in r.categories.iter().enumerate() {
            cats[i] += c.unwrap_or(0.0) / 1000.0;
        }
    }
    (step, cats)
}

pub fn summary(steps: &Steps) -> Summary {
    let (total, cats) = totals(steps);
    if total == 0.0 {
        return Summary {
            input_classification: "unknown".into(),
            input_statement: "No step time measured. Therefore we cannot tell where the performance bottleneck is.".into(),
            next_step: "You may skip the rest of this page.".into(),
            device_collectives_statement: String::new(),
            kernel_launch_statement: String::new(),
            all_other_statement: String::new(),
        };
    }
    let pct = |i: usize| 100.0 * cats[i] / total;
    let (input, collectives, launch, other) = (pct(5), pct(2), pct(4), pct(8));
    let (classification, statement, other_reported) = if input >= INPUT_HIGH {
        (
            "host",
            format!(
                "Your program is HIGHLY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you should first focus on reducing the input time.",
                one_digit(input)
            ),
            false,
        )
    } else if input >= INPUT_MODERATE {
        (
            "both",
            format!(
                "Your program is MODERATELY input-bound because {}% of the total step time sampled is waiting for input. Therefore, you would need to reduce both the input time and other time.",
                one_digit(input)
            ),
            false,
        )
    } else if other >= ALL_OTHER_MODERATE {
        (
            "both",
            format!(
                "Your program is POTENTIALLY input-bound because {}% of the total step time sampled is spent on 'All Others' time (which could be due to I/O or Python execution or both).",
                one_digit(other)
            ),
            true,
        )
    } else {
        (
            "device",
            format!(
                "Your program is NOT input-bound because only {}% of the total step time sampled is waiting for input. Therefore, you should focus on reducing other time.",
                one_digit(input)
            ),
            false,
        )
    };
    let level = |v: f64, high: f64, moderate: f64| v >= high || v >= moderate;
    let device_collectives_statement = if level(collectives, COLLECTIVES_HIGH, COLLECTIVES_MODERATE) {
        format!("{} % of the total step time sampled is spent on 'Device Collective Communication'.", one_digit(collectives))
    } else {
        String::new()
    };
    let mut kernel_launch_statement = String::new();
    if level(launch, KERNEL_LAUNCH_HIGH, KERNEL_LAUNCH_MODERATE) {
        kernel_launch_statement = format!("{} % of the total step time sampled is spent on 'Kernel Launch'.", one_digit(launch));
        if steps.tf_data_in_use {
            kernel_launch_statement.push_str(
                " It could be due to CPU contention with tf.data. In this case, you may try to set the environment variable TF_GPU_THREAD_MODE=gpu_private.",
            );
        }
    }
    let all_other_statement = if !other_reported && level(other, ALL_OTHER_HIGH, ALL_OTHER_MODERATE) {
        format!("{} % of the total step time sampled is spent on 'All Others' time. This could be due to Python execution overhead.", one_digit(other))
    } else {
        String::new()
    };
    let next_step = if classification == "host" || classification == "both" {
        if steps.tf_data_in_use {
            "Look at Section 3 for the breakdown of input time on the host.".to_owned()
        } else {
            "Consider using <a href=\"https://www.tensorflow.org/guide/data\" target=\"_blank\">the tf.data API</a> to enable profiler's host-side analysis for input pipeline. Profiler currently does not support custom input pipeline (please ignore Section 3 below).".to_owned()
        }
    } else {
        "You may skip the rest of this page.".to_owned()
    };
    Summary {
        input_classification: classification.into(),
        input_statement: statement,
        next_step,
        device_collectives_statement,
        kernel_launch_statement,
        all_other_statement,
    }
}

/// Why a profile has no steps (for the one line `steps` prints then).
pub fn no_steps_message(steps: &Steps) -> String {
    match steps.source {
        Source::Xplane(Hardware::Tpu) => "TPU traces are not supported by steps (XProf reads TPU steps with rules of its own that rtfprof does not implement)".into(),
        Source::Xplane(Hardware::Gpu) => "the trace has no steps: no device events are grouped into steps (as in XProf's input_pipeline_analyzer)".into(),
        Source::Xplane(Hardware::CpuOnly) => "the trace has no steps: no step markers around host work (tf.profiler.experimental.Trace('train', step_num=N, _r=1) or jax.profiler.StepTraceAnnotation; as in XProf's input_pipeline_analyzer)".into(),
        Source::RunMetadata => "steps: no step of the profile has op executions (they come from --run_meta_path, --events_path, --profile_path or --xplane_path)".into(),
        Source::PyTorch => "the trace has no events to break down into steps".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_prefers_the_most_overlap() {
        let chief = [(10, 20), (20, 30), (30, 40)];
        let sub = [(0, 10), (10, 20), (20, 30), (30, 40)];
        assert_eq!(align(&sub, &chief), (1, 0, 3));
        // No overlap at all: offset 0.
        assert_eq!(align(&[(100, 110)], &chief), (0, 0, 1));
    }

    #[test]
    fn overlaps_go_to_the_highest_type() {
        let spans = xplane::non_overlapped(&[(et::HOST_COMPUTE, 0, 10), (et::HOST_WAIT_INPUT, 5, 8), (et::HOST_COMPUTE, 12, 14)]);
        assert_eq!(
            spans,
            vec![(et::HOST_COMPUTE, 0, 5), (et::HOST_WAIT_INPUT, 5, 8), (et::HOST_COMPUTE, 8, 10), (et::UNKNOWN_TIME, 10, 12), (et::HOST_COMPUTE, 12, 14)]
        );
    }

    #[test]
    fn sample_statistics() {
        let (mean, std, cv) = stats_of(&[1.0, 2.0, 3.0]);
        assert_eq!((mean, std), (2.0, 1.0));
        assert!((cv - 0.5).abs() < 1e-12);
    }
}
