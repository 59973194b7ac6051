//! Making a partial profile (see [`crate::partial`], the format and its
//! codec) from what the loader reads: the node model's part, and the job as
//! a rank where it was read from one PyTorch trace or one XPlane host (the
//! ranks analysis summarizes it), so that `rtfprof ranks --partial_path`
//! gives what the traces read together give.

use std::path::Path;

use crate::error::{Error, Result};
use crate::inputs::Trace;
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
        let jobs = crate::load::load_jobs_apart(sources, Purpose::Partial)?;
        return partial::merge(jobs.iter().map(|(name, loaded)| from_loaded(name, loaded)));
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
    let loaded = crate::load::load_paths(&resolved.paths)?;
    Ok(from_loaded(&name, &loaded))
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
