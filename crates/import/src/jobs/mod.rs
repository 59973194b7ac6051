//! Several jobs at once (`--job NAME=PATH`, repeatable): each job's files are
//! loaded on their own, then merged into one profile in which every node is
//! renamed `NAME/<node>` and every device `/NAME<device>`. Jobs traced on
//! separate machines often report the same device names
//! (`/job:localhost/replica:0/task:0/device:CPU:0`); the prefix keeps them
//! apart. The scope view then has one top-level scope per job (the combined
//! view; `--start_name_regexes NAME` shows one job), timelines get one group
//! of processes per job, and `rtfprof jobs` prints a per-job summary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::inputs::sniff;
use crate::inputs::{InputPaths, events};
use crate::stats::device::DeviceName;
use crate::stats::symbol::symbol;
use crate::stats::{ExecStep, Stats};

/// One `--job NAME=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobSpec {
    pub name: String,
    pub inputs: InputPaths,
}

impl JobSpec {
    /// `NAME=DIR` (with graph.pbtxt or graph.pb, run_meta_0…, optionally
    /// tfprof_log, or a profile, or event files, or one PyTorch trace),
    /// `NAME=PROFILE_FILE`, `NAME=EVENT_FILE`, or a trace file (XPlane or
    /// PyTorch, known by its content).
    pub fn parse(spec: &str) -> Result<JobSpec> {
        let bad = |m: String| Error::flag("--job", m);
        let (name, path) = spec.split_once('=').ok_or_else(|| bad(format!("'{spec}' is not NAME=PATH")))?;
        if name.is_empty() || name.contains('/') {
            return Err(bad(format!("job name '{name}' must be non-empty and without '/'")));
        }
        let path = PathBuf::from(path);
        let inputs = if path.is_dir() {
            discover(&path)?
        } else if events::is_event_file_name(&path) {
            InputPaths { events_path: Some(path), ..Default::default() }
        } else if let Some((kind, _)) = crate::inputs::sniff::sniff_file(&path)
            && matches!(kind, sniff::Kind::Xplane | sniff::Kind::ChromeTrace)
        {
            if kind == sniff::Kind::Xplane {
                InputPaths { xplane_path: Some(path), ..Default::default() }
            } else {
                InputPaths { pytorch_path: Some(path), ..Default::default() }
            }
        } else {
            InputPaths { profile_path: Some(path), ..Default::default() }
        };
        Ok(JobSpec { name: name.to_owned(), inputs })
    }
}

/// Finds a job's files in a directory by tfprof's usual names; without
/// them, the directory is a TensorBoard log directory if it holds event files.
fn discover(dir: &Path) -> Result<InputPaths> {
    let profile = dir.join("profile");
    if profile.is_file() && !dir.join("graph.pb").exists() && !dir.join("graph.pbtxt").exists() {
        return Ok(InputPaths { profile_path: Some(profile), ..Default::default() });
    }
    let graph = ["graph.pb", "graph.pbtxt"].iter().map(|f| dir.join(f)).find(|p| p.is_file());
    let mut run_metas: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|source| Error::Io { kind: "--job", path: dir.to_owned(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let step = p.file_name()?.to_str()?.strip_prefix("run_meta")?.trim_start_matches(['_', '-']).parse().ok()?;
            Some((step, p))
        })
        .collect();
    run_metas.sort();
    if graph.is_none() && run_metas.is_empty() {
        // A TensorBoard log directory (or one of its runs).
        if !events::runs(dir)?.is_empty() {
            return Ok(InputPaths { events_path: Some(dir.to_owned()), ..Default::default() });
        }
        // One PyTorch trace (a rank's, as tensorboard_trace_handler writes).
        let traces: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|source| Error::Io { kind: "--job", path: dir.to_owned(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && crate::inputs::sniff::sniff_file(p).is_some_and(|(kind, _)| kind == sniff::Kind::ChromeTrace))
            .collect();
        if let [trace] = traces.as_slice() {
            return Ok(InputPaths { pytorch_path: Some(trace.clone()), ..Default::default() });
        }
        return Err(Error::input("--job", dir, "no graph.pb, graph.pbtxt, run_meta_N, profile, event files or one PyTorch trace in this directory"));
    }
    let op_log = dir.join("tfprof_log");
    Ok(InputPaths {
        graph_path: graph,
        run_meta_paths: run_metas.into_iter().map(|(_, p)| p).collect(),
        op_log_path: op_log.is_file().then_some(op_log),
        ..Default::default()
    })
}

/// Loads every job (in parallel) with `load`, then merges them.
pub fn load<T: Send>(specs: &[JobSpec], load: impl Fn(&InputPaths) -> Result<T> + Sync) -> Result<Vec<(String, T)>> {
    specs.par_iter().map(|spec| Ok((spec.name.clone(), load(&spec.inputs)?))).collect()
}

/// Each job's string ids move to their own range so code traces stay apart.
const ID_RANGE: i64 = 1 << 40;

fn prefix_device(job: &str, device: &str) -> String {
    if device.is_empty() { String::new() } else { format!("/{job}{device}") }
}

/// Renames the devices of execution records; `renamed` keeps each device's
/// new name, so that it is built once.
fn prefix_execs(job: &str, exec: &mut ExecStep, renamed: &mut BTreeMap<DeviceName, DeviceName>) {
    exec.rename_devices(|d| *renamed.entry(d).or_insert_with_key(|d| symbol(&prefix_device(job, d))));
}

/// Merges per-job profiles into one; step i of every job becomes step i.
pub fn merge(jobs: Vec<(String, Stats)>) -> Stats {
    let mut merged = Stats::new();
    for (index, (job, stats)) in jobs.into_iter().enumerate() {
        let offset = index as i64 * ID_RANGE;
        merged.id_to_string.extend(stats.id_to_string.into_iter().map(|(id, s)| (id + offset, s)));
        merged.steps.extend(stats.steps.iter().copied());
        merged.has_code_traces |= stats.has_code_traces;
        merged.miss_accelerator_stream |= stats.miss_accelerator_stream;
        merged.warnings.extend(stats.warnings.into_iter().map(|w| format!("job {job}: {w}")));
        // Each job's allocators are its own, like its devices.
        merged.keep_allocations |= stats.keep_allocations;
        let job_symbol = symbol(&job);
        merged.allocations.extend(stats.allocations.into_iter().map(|e| crate::stats::AllocationEvent {
            allocator: symbol(&format!("{job}/{}", e.allocator)),
            node: if e.node.is_empty() { e.node } else { format!("{job}/{}", e.node).into() },
            job: job_symbol,
            ..e
        }));
        let mut renamed = BTreeMap::new();
        for mut node in stats.nodes {
            node.name = format!("{job}/{}", node.name).into();
            for input in &mut node.inputs {
                input.name = format!("{job}/{}", input.name).into();
            }
            if !node.canonical_device.is_empty() {
                node.op_types.remove(&node.canonical_device);
                node.canonical_device = symbol(&prefix_device(&job, node.canonical_device));
                node.op_types.insert(node.canonical_device);
            }
            for exec in node.execs.values_mut() {
                prefix_execs(&job, exec, &mut renamed);
            }
            if let Some(trace) = &mut node.trace {
                for t in &mut trace.traces {
                    t.file_id += offset;
                    t.function_id += offset;
                    t.line_id += offset;
                }
            }
            merged.insert_node(node);
        }
    }
    merged
}

/// One job's step: how long it took and where the time went.
#[derive(Debug, PartialEq)]
pub struct StepSummary {
    pub step: i64,
    /// From the first op's start to the last op's end.
    pub wall_micros: i64,
    /// Devices by busy time (sum of op durations), busiest first.
    pub devices: Vec<(String, i64)>,
}

/// What `rtfprof jobs` reports for one job.
#[derive(Debug)]
pub struct JobSummary {
    pub name: String,
    pub nodes: usize,
    pub coverage: f64,
    pub steps: Vec<StepSummary>,
}

pub fn summarize(name: &str, stats: &Stats) -> JobSummary {
    // One walk over the nodes' step records, each added to its step (a
    // lookup of every node at every step was a quarter of the HTML report
    // of a 1,000-step trace). Wrapping, as the stats add: a profile's values
    // are anything.
    let index: rustc_hash::FxHashMap<i64, usize> = stats.steps.iter().enumerate().map(|(i, &step)| (step, i)).collect();
    // (first start > 0, last end, busy time by device)
    let mut at_step: Vec<(Option<i64>, i64, BTreeMap<&str, i64>)> = vec![(None, 0, BTreeMap::new()); index.len()];
    for node in &stats.nodes {
        for (step, exec) in node.execs.iter() {
            let Some(&i) = index.get(step) else { continue };
            let (start, end, busy) = &mut at_step[i];
            if exec.all_start_micros > 0 {
                *start = Some(start.map_or(exec.all_start_micros, |s| s.min(exec.all_start_micros)));
            }
            *end = (*end).max(exec.latest_end_micros);
            for (device, times) in exec.accelerator_execs().chain(exec.cpu_execs()) {
                let sum = times.iter().fold(0i64, |sum, t| sum.wrapping_add(t.1));
                let total = busy.entry(device).or_default();
                *total = total.wrapping_add(sum);
            }
        }
    }
    let steps = stats
        .steps
        .iter()
        .zip(at_step)
        .map(|(&step, (start, end, busy))| {
            let mut devices: Vec<(String, i64)> = busy.into_iter().map(|(d, t)| (d.to_owned(), t)).collect();
            devices.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
            StepSummary { step, wall_micros: end.saturating_sub(start.unwrap_or(0)).max(0), devices }
        })
        .collect();
    JobSummary { name: name.to_owned(), nodes: stats.nodes.len(), coverage: stats.run_coverage(), steps }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::inputs::{NodeDetail, load_profile};

    /// Each step's wall time and device busy times, as a walk over the
    /// step's records of every node gives them (what `summarize` did before
    /// it walked each node's records once).
    fn by_step(stats: &Stats) -> Vec<StepSummary> {
        stats
            .steps
            .iter()
            .map(|&step| {
                let execs: Vec<&ExecStep> = stats.nodes.iter().filter_map(|n| n.execs.get(&step)).collect();
                let start = execs.iter().map(|e| e.all_start_micros).filter(|&s| s > 0).min().unwrap_or(0);
                let end = execs.iter().map(|e| e.latest_end_micros).max().unwrap_or(0);
                let mut busy: BTreeMap<&str, i64> = BTreeMap::new();
                for exec in &execs {
                    for (device, times) in exec.accelerator_execs().chain(exec.cpu_execs()) {
                        let total = busy.entry(device).or_default();
                        *total = total.wrapping_add(times.iter().fold(0i64, |sum, t| sum.wrapping_add(t.1)));
                    }
                }
                let mut devices: Vec<(String, i64)> = busy.into_iter().map(|(d, t)| (d.to_owned(), t)).collect();
                devices.sort_by_key(|(_, t)| std::cmp::Reverse(*t));
                StepSummary { step, wall_micros: end.saturating_sub(start).max(0), devices }
            })
            .collect()
    }

    #[test]
    fn steps_summed_node_by_node_equal_them_step_by_step() {
        for fixture in ["cnn", "gpu_synth"] {
            let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("testdata").join(fixture).join("profile");
            let stats = crate::inputs::profile_nodes::stats_from_profile(load_profile(&path, NodeDetail::default()).unwrap()).unwrap();
            let summary = summarize(fixture, &stats);
            assert_eq!(summary.steps.len(), 3, "{fixture}");
            assert!(summary.steps.iter().all(|s| s.wall_micros > 0 && !s.devices.is_empty()), "{fixture}");
            assert_eq!(summary.steps, by_step(&stats), "{fixture}");
        }
    }
}
