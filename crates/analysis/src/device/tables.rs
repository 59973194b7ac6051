//! The device tables of a user's inputs, as `rtfprof hlo` and `rtfprof
//! kernels` find them: PyTorch traces alone are read in place, other inputs
//! loaded, every job's rows merged.

use super::Tables;
use crate::error::{Error, Result};
use crate::load::{self, Loaded, Purpose, Sources};

/// The XLA instructions and kernels of the loaded XPlane traces, and the
/// kernels of the loaded PyTorch traces (every job's, merged); other
/// inputs are an error naming `command`.
pub fn tables(loaded: &Loaded, command: &str) -> Result<Tables> {
    if !loaded.from_traces() {
        return Err(Error::flag(
            command,
            "needs a TF2 or JAX profiler trace (--xplane_path) or, for kernels, a PyTorch trace (--pytorch_path): other inputs record no XLA instructions or kernels",
        ));
    }
    let xplane = loaded.xplane_traces().map(|(job, trace)| (job.to_owned(), trace.device.clone()));
    let pytorch = loaded.pytorch_traces().map(|(job, trace)| (job.to_owned(), pytorch_kernels(trace)));
    Ok(Tables::merge(xplane.chain(pytorch)))
}

/// Where `--pytorch_path` is the only input: its traces' device tables,
/// read in place (no node model), one job a rank ("" for a lone trace), as
/// [`load::pytorch_only`] finds them: their kernels, merged. `None` for other
/// inputs.
pub fn pytorch_only_tables(sources: &Sources) -> Result<Option<Tables>> {
    use rayon::prelude::*;
    if sources.has_partials() {
        return Ok(None);
    }
    let Some(ranks) = load::pytorch_only(sources)? else { return Ok(None) };
    let jobs: Vec<(String, Tables)> =
        ranks.par_iter().map(|(name, file)| Ok((name.clone(), pytorch_kernels(&crate::inputs::pytorch::Trace::open(file)?)))).collect::<Result<_>>()?;
    Ok(Some(Tables::merge(jobs)))
}

fn pytorch_kernels(trace: &crate::inputs::pytorch::Trace) -> Tables {
    Tables { hlo_ops: Vec::new(), kernels: crate::inputs::pytorch::kernels::kernel_stats(trace) }
}

/// The device tables of `sources`, as `rtfprof hlo` and `rtfprof kernels`
/// find them: PyTorch traces alone are read in place, other inputs loaded
/// (see [`tables`]).
pub fn from_sources(sources: &Sources, command: &str) -> Result<Tables> {
    load::check_event_flags(sources, Purpose::Tables)?;
    match pytorch_only_tables(sources)? {
        Some(tables) => Ok(tables),
        None => tables(&load::load(sources, Purpose::Tables)?, command),
    }
}
