//! One view as a function call, for programs rather than the command line
//! (the Python module is built on it): inputs and options in, and out what
//! `tf.profiler.profile` gives — the displayed tree as tfprof's message —
//! plus the displayed nodes and per-step values the CSV/JSON outputs read.

use crate::error::Result;
use crate::load::{self, Purpose, Sources};
use crate::outputs::node_proto::{self, ViewProto};
use crate::show::options::Output;
use crate::show::{Displayed, Options, PerStep};
use crate::stack::with_deep_stack;
use crate::views::View;

/// What [`profile`] computed.
#[derive(Debug)]
pub struct Profiled {
    /// tfprof's result message (`GraphNodeProto` or `MultiGraphNodeProto`).
    pub proto: ViewProto,
    /// The displayed tree, the root first (op view: the rows are its children).
    pub root: Displayed,
    /// Each displayed node's values at every step, when more than one step
    /// was loaded (see [`crate::outputs::table::records`]).
    pub per_step: Option<PerStep>,
    /// What tfprof prints on stdout for `opts.output`: the view's text for
    /// `stdout`, the messages about written files for a timeline or pprof
    /// output, nothing otherwise. (The CLI's start-up lines are not part of
    /// it: `tf.profiler` does not print them.)
    pub printed: String,
    /// Warnings about the inputs, and what a timeline's selection
    /// (`opts.events`) left out, one line each (the CLI prints them on
    /// stderr).
    pub warnings: Vec<String>,
    /// Op view: the rows `max_depth` left out (tfprof cuts the list there
    /// without a word; callers can say so).
    pub rows_cut: usize,
}

/// Loads `sources` as `rtfprof <view>` does and shows `view` with `opts`,
/// writing the file `opts.output` names, if any. Runs on a thread with a deep
/// stack (views recurse along name scopes and input chains).
pub fn profile(view: View, sources: &Sources, opts: &Options) -> Result<Profiled> {
    with_deep_stack(|| {
        load::check_event_flags(sources, Purpose::View(view))?;
        if let (Some(flag), false) = (opts.events.flags().first(), matches!(opts.output, Output::Timeline(_))) {
            return Err(crate::outputs::view::selects_timelines_only(flag));
        }
        let mut loaded = load::load(sources, Purpose::View(view))?;
        let mut warnings = std::mem::take(&mut loaded.stats.warnings);
        let stats = &loaded.stats;
        let result = crate::show::run(stats, view, opts)?;
        let mut printed = String::new();
        match &opts.output {
            Output::Stdout => printed = result.text,
            Output::None => {}
            Output::File(path) => crate::outputs::write_atomic(path, result.text.as_bytes())?,
            // (What a timeline's selection left out is said as a warning is.)
            _ => warnings.extend(crate::outputs::view::write(&loaded, view, opts, &mut printed)?),
        }
        let proto = node_proto::build(stats, view, opts, &result.root);
        let per_step = (stats.steps.len() > 1).then(|| crate::show::per_step(stats, view, opts));
        let rows_cut = if view == View::Op && opts.max_depth < i64::MAX {
            let all = crate::show::run(stats, view, &Options { max_depth: i64::MAX, output: Output::None, ..opts.clone() })?;
            all.root.children.len().saturating_sub(result.root.children.len())
        } else {
            0
        };
        Ok(Profiled { proto, root: result.root, per_step, printed, warnings, rows_cut })
    })
}

/// Each step's time and its split into XProf's categories, as `rtfprof
/// steps` finds them in `sources` (XPlane traces, run metadata, event files
/// or a profile), with the warnings about the inputs the CLI prints; a
/// profile without steps is an error saying why.
pub fn steps(sources: &Sources) -> Result<(crate::steps::Steps, Vec<String>)> {
    with_deep_stack(|| crate::steps::from_sources(sources))
}

/// Each allocator's bytes in use at `step` (every step when negative), as
/// `rtfprof memory` replays them, with the warnings about the inputs.
pub fn memory(sources: &Sources, step: i64) -> Result<(crate::memory::MemoryProfile, Vec<String>)> {
    with_deep_stack(|| {
        load::check_event_flags(sources, Purpose::Memory)?;
        // (A large PyTorch trace is read a window of steps at a time.)
        if let Some((profile, _, _)) = crate::memory::pytorch_windowed(sources, step)? {
            return Ok((profile, Vec::new()));
        }
        let mut loaded = load::load(sources, Purpose::Memory)?;
        let warnings = std::mem::take(&mut loaded.stats.warnings);
        Ok((crate::memory::analyze(&loaded, step)?, warnings))
    })
}

/// Each job's summary, as `rtfprof jobs` prints it: nodes, run graph
/// coverage, and each step's wall time and busiest devices.
pub fn jobs(sources: &Sources) -> Result<Vec<crate::jobs::JobSummary>> {
    with_deep_stack(|| {
        let jobs = load::load_jobs_apart(sources, Purpose::Jobs)?;
        Ok(jobs.iter().map(|(name, job)| crate::jobs::summarize(name, &job.stats)).collect())
    })
}

/// tfprof's checkers (and on traces, the framework's advice) on `sources`,
/// as `rtfprof advise` prints them, with the warnings about the inputs.
pub fn advise(sources: &Sources) -> Result<(Vec<crate::advise::Checker>, Vec<String>)> {
    with_deep_stack(|| {
        let mut loaded = load::load(sources, Purpose::Advise)?;
        let mut warnings = std::mem::take(&mut loaded.stats.warnings);
        let checkers = crate::advise::advise(&loaded, &mut warnings)?;
        Ok((checkers, warnings))
    })
}

/// The HTML report of `sources` as `rtfprof report` writes it (the view
/// options `opts` apply to its trees), with the warnings about the inputs.
pub fn report(sources: &Sources, opts: &Options) -> Result<(crate::outputs::html::Page, Vec<String>)> {
    with_deep_stack(|| {
        use crate::outputs::html;
        let (mut loaded, apart) = match html::windowed(sources, opts.step)? {
            Some(read) => read,
            None => {
                let apart = html::steps_before_loading(sources);
                (load::load(sources, Purpose::Report)?, apart)
            }
        };
        let warnings = std::mem::take(&mut loaded.stats.warnings);
        Ok((html::report_of(&loaded, sources, opts, apart)?, warnings))
    })
}

/// The XLA instructions and GPU kernels of XPlane traces, and the GPU
/// kernels of PyTorch traces, as `rtfprof hlo` and `rtfprof kernels` list
/// them.
pub fn device_tables(sources: &Sources) -> Result<crate::device::Tables> {
    with_deep_stack(|| crate::device::from_sources(sources, "kernels"))
}

/// `rtfprof check`'s runs given as a path: a saved baseline
/// (`--save_baseline`, one run or several), or a trace or profile whose
/// kind is read from the file (a directory: its XPlane hosts, else its
/// PyTorch ranks), one run. `name` is what errors call the path
/// (`BASELINE`, `NEW`, `baseline`).
pub fn check_samples(path: &std::path::Path, name: &'static str) -> Result<Vec<crate::check::Samples>> {
    use crate::error::Error;
    use crate::inputs::sniff::{self, Kind};
    use crate::outputs::check::baseline;
    let display = path.display().to_string();
    let mut sources = Sources::default();
    if path.is_dir() {
        if crate::inputs::xplane::locate(path, None).is_ok() {
            sources.xplane_path = Some(path.to_owned());
        } else if load::pytorch_ranks(path).is_ok() {
            sources.pytorch_path = Some(path.to_owned());
        } else {
            return Err(Error::input(name, path, "a directory with no XPlane or PyTorch traces"));
        }
    } else {
        let head = read_head(path).map_err(|source| Error::Io { kind: name, path: path.to_owned(), source })?;
        if baseline::is_baseline(&head) {
            return baseline::read(path);
        }
        match sniff::sniff_file(path).map(|(kind, _)| kind) {
            Some(Kind::Xplane) => sources.xplane_path = Some(path.to_owned()),
            Some(Kind::ChromeTrace) => sources.pytorch_path = Some(path.to_owned()),
            Some(Kind::Profile) => sources.paths.profile_path = Some(path.to_owned()),
            Some(Kind::Events) => sources.paths.events_path = Some(path.to_owned()),
            Some(kind) => {
                return Err(Error::input(name, path, format!("{} has no steps to compare: give a trace, a profile or a saved baseline", kind.describe())));
            }
            None => return Err(Error::input(name, path, "not a trace, profile or saved baseline that rtfprof check reads")),
        }
    }
    crate::check::from_sources(&sources, display).map(|run| vec![run]).map_err(|e| named_by(e, name))
}

/// The runs of every path of a side ([`check_samples`]), in order.
pub fn check_runs(paths: &[std::path::PathBuf], name: &'static str) -> Result<Vec<crate::check::Samples>> {
    let mut runs = Vec::new();
    for path in paths {
        runs.extend(check_samples(path, name)?);
    }
    Ok(runs)
}

/// The first bytes of a file, where a saved baseline says what it is.
fn read_head(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)?.take(64).read_to_end(&mut head)?;
    Ok(head)
}

/// An error about a file, naming it as the caller gave it (`--left_xplane_path`,
/// `BASELINE`) where the reader named the global flag.
pub fn named_by(error: crate::error::Error, name: &'static str) -> crate::error::Error {
    use crate::error::Error;
    match error {
        Error::Io { path, source, .. } => Error::Io { kind: name, path, source },
        Error::Input { path, message, .. } => Error::Input { kind: name, path, message },
        e => e,
    }
}
