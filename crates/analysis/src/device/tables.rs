//! The device tables of a user's inputs, as `rtfprof hlo` and `rtfprof
//! kernels` find them: PyTorch traces alone are read in place, other inputs
//! loaded, every job's rows merged.

use super::Tables;
use crate::error::{Error, Result};
use crate::inputs::pytorch::windows::Windows;
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
    let windowing = sources.pytorch_windows;
    let jobs: Vec<(String, Tables)> = ranks
        .par_iter()
        .map(|(name, file)| {
            let tables = match windowing.plan(file)? {
                Some(windows) => Tables { hlo_ops: Vec::new(), kernels: windowed_kernels(&windows)? },
                None => pytorch_kernels(&crate::inputs::pytorch::Trace::open(file)?),
            };
            Ok((name.clone(), tables))
        })
        .collect::<Result<_>>()?;
    Ok(Some(Tables::merge(jobs)))
}

/// The kernel rows of a trace read a window of steps at a time: each
/// window's own kernels' rows ([`Window::owns`]), added up by row key in
/// the order first seen (counts and times add up, extremes are kept, the
/// occupancy is the first launch's).
///
/// [`Window::owns`]: crate::inputs::pytorch::windows::Window::owns
pub fn windowed_kernels(windows: &Windows) -> Result<Vec<crate::stats::records::device::Kernel>> {
    use crate::stats::records::device::Kernel;
    type RowKey = (String, String, u32, u32, u32, [u32; 3], [u32; 3], bool, bool);
    let key = |k: &Kernel| -> RowKey {
        let (name, op) = (k.kernel_name.clone(), k.op_name.clone());
        (
            name,
            op,
            k.registers_per_thread,
            k.static_shmem_bytes,
            k.dynamic_shmem_bytes,
            k.block_dim,
            k.grid_dim,
            k.is_op_tensor_core_eligible,
            k.is_kernel_using_tensor_core,
        )
    };
    let mut rows: Vec<Kernel> = Vec::new();
    let mut index: rustc_hash::FxHashMap<RowKey, usize> = Default::default();
    for (k, window) in windows.windows.iter().enumerate() {
        let trace = windows.read(k)?;
        let launches = trace.launches_by_correlation();
        for row in crate::inputs::pytorch::kernels::kernel_stats_of(&trace, &|i| window.owns(&trace, &launches, i)) {
            match index.entry(key(&row)) {
                std::collections::hash_map::Entry::Occupied(at) => rows[*at.get()].add(&row.sums()),
                std::collections::hash_map::Entry::Vacant(at) => {
                    at.insert(rows.len());
                    rows.push(row);
                }
            }
        }
    }
    Ok(rows)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::pytorch::Trace;

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps and kernels gives the kernel table the
    /// whole trace gives, row for row and in order.
    #[test]
    fn windows_give_the_whole_traces_kernels() {
        let whole = |_: &_, trace: &Trace| {
            let whole = Tables::merge([(String::new(), pytorch_kernels(trace))]);
            (!whole.kernels.is_empty()).then(|| format!("{:#?}", whole.kernels))
        };
        let windowed = crate::inputs::pytorch::for_each_windowing(whole, |whole, windows, what| {
            let by_windows = Tables::merge([(String::new(), Tables { hlo_ops: Vec::new(), kernels: windowed_kernels(windows).unwrap() })]);
            assert_eq!(&format!("{:#?}", by_windows.kernels), whole, "{what}");
        });
        assert!(windowed >= 40, "only {windowed} traces were windowed");
    }
}
