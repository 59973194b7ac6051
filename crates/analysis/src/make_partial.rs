//! Making a partial profile (see [`crate::partial`], the format and its
//! codec) from what the loader reads: the node model's part, and the job as
//! a rank where it was read from one PyTorch trace or one XPlane host (the
//! ranks analysis summarizes it), so that `rtfprof ranks --partial_path`
//! gives what the traces read together give.

use std::path::Path;

use crate::error::{Error, Result};
use crate::inputs::Trace;
use crate::inputs::pytorch::WindowedImport;
use crate::inputs::pytorch::windows::{Windowing, Windows};
use crate::load::{Loaded, Purpose, Sources};
use crate::partial::{self, Partial};
use crate::ranks::RankSummary;

/// One job's partial from its loaded profile.
pub fn from_loaded(name: &str, loaded: &Loaded) -> Partial {
    Partial::from_loaded(name, loaded, rank_summary(name, loaded).as_ref())
}

/// The job as a rank, where it was read from one PyTorch trace or one
/// XPlane host (a host whose steps `ranks` cannot read carries none).
fn rank_summary(name: &str, loaded: &Loaded) -> Option<RankSummary> {
    match loaded.traces.as_slice() {
        [(_, Trace::PyTorch(trace))] => Some(crate::ranks::pytorch_summary(name, trace)),
        [(_, Trace::Xplane(source))] => crate::ranks::xplane::summary(name, &source.file()).ok(),
        _ => None,
    }
}

/// The partial of `sources`: each `--job`, each host of an XPlane run
/// directory or rank of a PyTorch directory is a job; a single input is
/// one job named `name` (default: its file's name, see [`partial::job_name`]).
pub fn from_sources(sources: &Sources, name: Option<&str>) -> Result<Partial> {
    if !sources.partial_paths.is_empty() {
        return partial::read(&sources.partial_paths);
    }
    let resolved = crate::load::resolve(sources, Purpose::Partial)?;
    if !sources.jobs.is_empty() || !resolved.hosts.is_empty() {
        // Each job reduced to its partial as soon as it is read: memory
        // holds a job or two (one a thread), not all of them.
        use rayon::prelude::*;
        let jobs = crate::load::jobs_of(sources, &resolved)?;
        let partials = jobs.par_iter().map(|job| of_paths(&job.name, &job.inputs, sources.pytorch_windows)).collect::<Result<Vec<_>>>()?;
        return partial::merge(partials);
    }
    let name = match name {
        Some(name) => name.to_owned(),
        None => {
            let paths = &resolved.paths;
            let first = [&paths.pytorch_path, &paths.xplane_path, &paths.profile_path, &paths.events_path, &paths.graph_path]
                .into_iter()
                .flatten()
                .next()
                .or(paths.run_meta_paths.first());
            first.map_or_else(|| "job".to_owned(), |p| partial::job_name(p))
        }
    };
    if name.is_empty() || name.contains('/') {
        return Err(Error::flag("--name", format!("job name '{name}' must be non-empty and without '/'")));
    }
    of_paths(&name, &resolved.paths, sources.pytorch_windows)
}

/// One job's partial from its input paths; a PyTorch trace that
/// `windowing` reads a window of steps at a time is read once, each
/// window both imported into the node model and summarized as a rank.
fn of_paths(name: &str, paths: &crate::inputs::InputPaths, windowing: Windowing) -> Result<Partial> {
    if let Some(file) = &paths.pytorch_path
        && let Some(windows) = windowing.plan(file)?
    {
        return of_windows(name, &windows, paths.estimate_flops);
    }
    let loaded = crate::load::load_paths(paths)?;
    Ok(from_loaded(name, &loaded))
}

/// One job's partial from a PyTorch trace planned in `windows`.
fn of_windows(name: &str, windows: &Windows, estimate_flops: crate::stats::flops::FlopsEstimate) -> Result<Partial> {
    let mut import = WindowedImport::new(windows);
    let rank = crate::ranks::pytorch_summary_windowed(name, windows, |k, trace| import.add(k, trace))?;
    let mut stats = crate::stats::Stats::new();
    let listing = import.finish(&mut stats);
    stats.estimate_missing_flops(estimate_flops);
    let loaded = Loaded { stats, kinds: vec![crate::inputs::Kind::PyTorch], traces: Vec::new(), listing, coverage: Vec::new(), rank_summaries: None };
    Ok(Partial::from_loaded(name, &loaded, Some(&rank)))
}

/// The partial of one path of any kind the loader reads (as `--job
/// NAME=PATH` takes it, or a TF2/JAX log directory), named `name` or
/// after the file.
pub fn from_path(path: &Path, name: Option<&str>) -> Result<Partial> {
    let name = name.map_or_else(|| partial::job_name(path), str::to_owned);
    let spec = format!("{name}={}", path.display());
    if path.is_dir() && crate::jobs::JobSpec::parse(&spec).is_err() {
        // A TF2/JAX log or run directory: one job, or one a host.
        return from_sources(&Sources { xplane_path: Some(path.to_owned()), ..Default::default() }, Some(&name));
    }
    from_sources(&Sources { jobs: vec![spec], ..Default::default() }, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the partial the whole trace gives,
    /// byte for byte (its node model, code traces and rank).
    #[test]
    fn windows_give_the_whole_traces_partial() {
        let whole = |path: &std::path::Path, _: &_| {
            let paths = crate::inputs::InputPaths { pytorch_path: Some(path.to_owned()), ..Default::default() };
            Some(partial::to_bytes(&of_paths("r", &paths, Windowing::Whole).ok()?))
        };
        let windowings = crate::inputs::pytorch::for_each_windowing(whole, |whole, windows, what| {
            let windowed = of_windows("r", windows, Default::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(&partial::to_bytes(&windowed) == whole, "{what}");
        });
        assert!(windowings >= 81, "{windowings} windowings");
    }
}
