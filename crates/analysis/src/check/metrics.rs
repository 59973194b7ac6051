//! What `rtfprof check` compares: per-step samples of a profile's step
//! time, of each part of the step breakdown, of each allocator's peak
//! memory (where the trace records allocations), of each op's time and
//! count, (PyTorch traces of GPUs) of each kernel's, and (PyTorch and
//! XPlane traces of GPUs) of each rank's or host's communication, read
//! from the inputs once.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::load::{self, Purpose, Sources};
use crate::steps::{self, CATEGORIES};

/// What a metric measures, and so which threshold it gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The whole step's time.
    StepTime,
    /// One category of the step breakdown (`rtfprof steps`).
    Category,
    /// One allocator's peak bytes in use in a step (`rtfprof memory`).
    PeakMemory,
    /// One op's (node's) time in a step.
    OpTime,
    /// How many times one op ran in a step.
    OpCount,
    /// One GPU kernel's (copy's, set's) time in a step, by its name.
    KernelTime,
    /// How many times one kernel started in a step.
    KernelCount,
    /// One XLA instruction's time in a step (XPlane traces of XLA
    /// programs), by its module and name.
    HloTime,
    /// One rank's time in collectives in a step (`rtfprof ranks`).
    Communication,
    /// One rank's time in collectives that no computation overlapped in a
    /// step: what communication adds to the step.
    ExposedCommunication,
}

impl Kind {
    /// The name in outputs and in the baseline file.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::StepTime => "step_time",
            Kind::Category => "category",
            Kind::PeakMemory => "peak_memory",
            Kind::OpTime => "op_time",
            Kind::OpCount => "op_count",
            Kind::KernelTime => "kernel_time",
            Kind::KernelCount => "kernel_count",
            Kind::HloTime => "hlo_time",
            Kind::Communication => "communication",
            Kind::ExposedCommunication => "exposed_communication",
        }
    }

    /// Every kind.
    pub const ALL: [Kind; 10] = [
        Kind::StepTime,
        Kind::Category,
        Kind::PeakMemory,
        Kind::OpTime,
        Kind::OpCount,
        Kind::KernelTime,
        Kind::KernelCount,
        Kind::HloTime,
        Kind::Communication,
        Kind::ExposedCommunication,
    ];

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether it counts runs (reported when it changes, never failed)
    /// rather than measuring time or bytes.
    pub fn is_count(self) -> bool {
        matches!(self, Kind::OpCount | Kind::KernelCount)
    }

    /// Whether it is a part of the step's time (an op's, a kernel's, an
    /// XLA instruction's, a category's, a rank's communication): judged
    /// against its share of the step, and a regression only if it moved
    /// the step.
    pub fn is_part_of_step(self) -> bool {
        matches!(self, Kind::Category | Kind::Communication | Kind::ExposedCommunication | Kind::OpTime | Kind::KernelTime | Kind::HloTime)
    }

    /// The unit of its samples: microseconds, bytes, or a count.
    pub fn unit(self) -> &'static str {
        match self {
            kind if kind.is_count() => "count",
            Kind::PeakMemory => "bytes",
            _ => "us",
        }
    }
}

/// One metric's samples, one a step, in step order.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    pub kind: Kind,
    /// `step_time`, the category's name, the allocator's name, or the op's
    /// node name.
    pub name: String,
    pub samples: Vec<f64>,
}

impl Metric {
    /// The name outputs show: `step_time`, `category:host_compute`,
    /// `memory:cpu`, `op:jit(step)/jvp(layer2)/dot_general`, `count:…`,
    /// `kernel:…`, `kernel_count:…`, `hlo:jit_step/fusion.3`,
    /// `communication:rank0`,
    /// `exposed_communication:rank0`.
    pub fn label(&self) -> String {
        match self.kind {
            Kind::StepTime => "step_time".to_owned(),
            Kind::Category => format!("category:{}", self.name),
            Kind::PeakMemory => format!("memory:{}", self.name),
            Kind::OpTime => format!("op:{}", self.name),
            Kind::OpCount => format!("count:{}", self.name),
            Kind::KernelTime => format!("kernel:{}", self.name),
            Kind::KernelCount => format!("kernel_count:{}", self.name),
            Kind::HloTime => format!("hlo:{}", self.name),
            Kind::Communication => format!("communication:{}", self.name),
            Kind::ExposedCommunication => format!("exposed_communication:{}", self.name),
        }
    }
}

/// One profile's samples of every metric.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    /// What was read (the trace's path, or a baseline file's), for outputs.
    pub source: String,
    /// The steps sampled (their names as `rtfprof steps` shows them).
    pub steps: Vec<String>,
    pub metrics: Vec<Metric>,
}

impl Samples {
    pub fn get(&self, kind: Kind, name: &str) -> Option<&Metric> {
        self.metrics.iter().find(|m| m.kind == kind && m.name == name)
    }

    pub fn step_times(&self) -> &[f64] {
        self.get(Kind::StepTime, "step_time").map_or(&[], |m| &m.samples)
    }
}

/// The samples of `sources` (one profile): the step rows of `rtfprof
/// steps` for the step time and breakdown, the allocators' peaks of
/// `rtfprof memory`, the node model's per-step executions for the ops.
/// Every op that ran is kept here: which ones are large enough to judge is
/// the decision's ([`super::decide`]).
pub fn from_sources(sources: &Sources, source: String) -> Result<Samples> {
    // (An XPlane trace's steps are read before it is loaded, as `report`
    // reads them: the steps' records and the loaded profile are then not
    // held at once.)
    let early = steps::xplane_hosts_before_loading(sources);
    let loaded = load::load(sources, Purpose::Check)?;
    let hosts = match early {
        Some(hosts) if hosts.len() == loaded.xplane_traces().count() => Some(hosts),
        _ => steps::xplane_hosts(&loaded)?,
    };
    let analyzed = match &hosts {
        Some(hosts) => steps::from_hosts(hosts),
        None => steps::analyze(&loaded)?,
    };
    let analyzed = steps::with_rows(analyzed, &[])?;
    let mut samples = Samples { source, ..Samples::default() };
    if let Some(rank) = analyzed.pytorch.first() {
        // PyTorch: the first rank's steps, split by the TensorBoard
        // plugin's roles.
        samples.steps = rank.rows.iter().map(|r| r.step.clone()).collect();
        samples.metrics.push(Metric { kind: Kind::StepTime, name: "step_time".into(), samples: rank.rows.iter().map(|r| r.step_ns() as f64 / 1e3).collect() });
        for (i, role) in steps::pytorch::ROLES.iter().enumerate() {
            let values: Vec<f64> = rank.rows.iter().map(|r| r.roles_ns[i] as f64 / 1e3).collect();
            samples.metrics.push(Metric { kind: Kind::Category, name: (*role).to_owned(), samples: values });
        }
        if let Some((_, trace)) = loaded.pytorch_traces().next() {
            samples.metrics.extend(kernel_metrics(trace, &rank.rows));
        }
        samples.metrics.extend(communication_metrics(&loaded, &analyzed.pytorch, std::path::Path::new(&samples.source))?);
    } else {
        samples.steps = analyzed.rows.iter().map(|r| r.name.clone()).collect();
        samples.metrics.push(Metric { kind: Kind::StepTime, name: "step_time".into(), samples: analyzed.rows.iter().map(|r| r.step_us).collect() });
        for (i, category) in CATEGORIES.iter().enumerate() {
            let values: Option<Vec<f64>> = analyzed.rows.iter().map(|r| r.categories[i]).collect();
            if let Some(values) = values {
                samples.metrics.push(Metric { kind: Kind::Category, name: (*category).to_owned(), samples: values });
            }
        }
        if let Some(hosts) = &hosts {
            samples.metrics.extend(host_communication_metrics(&loaded, hosts)?);
        }
    }
    let steps = sampled_steps(&loaded.stats, samples.steps.len());
    samples.metrics.extend(memory_metrics(&loaded, &steps)?);
    samples.metrics.extend(op_metrics(&loaded.stats, &steps));
    samples.metrics.extend(hlo_metrics(&loaded, &steps));
    Ok(samples)
}

/// The steps of the node model that the step rows sample: where the rows
/// left out the first and last steps (XProf's
/// `maybe_drop_incomplete_steps`: the first may include warm-up, the last
/// may be cut by the end of tracing), so do the op and memory samples, so
/// that all sample the same steps.
fn sampled_steps(stats: &crate::stats::Stats, step_rows: usize) -> Vec<i64> {
    let steps: Vec<i64> = stats.steps.iter().copied().collect();
    if steps.len() == step_rows + 2 { steps[1..steps.len() - 1].to_vec() } else { steps }
}

/// Each allocator's peak bytes in use in each of `steps` where it has
/// allocation records, as `rtfprof memory` replays them
/// ([`crate::memory::step_memory`]): XPlane's allocator events (the
/// allocator's own count, bytes allocated before the step included),
/// PyTorch's `[memory]` records, RunMetadata's allocation records. None
/// where the inputs have no allocation records.
fn memory_metrics(loaded: &load::Loaded, steps: &[i64]) -> Result<Vec<Metric>> {
    if loaded.stats.allocations.is_empty() {
        return Ok(Vec::new());
    }
    let mut peaks: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for step in crate::memory::step_memory(loaded, -1)?.iter().filter(|s| steps.contains(&s.step)) {
        for allocator in &step.allocators {
            peaks.entry(allocator.name.clone()).or_default().push(allocator.peak_bytes as f64);
        }
    }
    Ok(peaks.into_iter().map(|(name, samples)| Metric { kind: Kind::PeakMemory, name, samples }).collect())
}

/// Each node that ran: its time and run count in each of `steps` (0 in a
/// step where it did not run).
fn op_metrics(stats: &crate::stats::Stats, steps: &[i64]) -> Vec<Metric> {
    let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut counts: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for node in stats.nodes.iter().filter(|n| !n.execs.is_empty()) {
        let name: &str = &node.name;
        let t = times.entry(name).or_insert_with(|| vec![0.0; steps.len()]);
        let c = counts.entry(name).or_insert_with(|| vec![0.0; steps.len()]);
        for (i, &step) in steps.iter().enumerate() {
            if node.execs.get(&step).is_some() {
                t[i] += node.exec_micros(step) as f64;
                c[i] += node.run_count(step) as f64;
            }
        }
    }
    let time_metrics = times.into_iter().map(|(name, samples)| Metric { kind: Kind::OpTime, name: name.to_owned(), samples });
    let count_metrics = counts.into_iter().map(|(name, samples)| Metric { kind: Kind::OpCount, name: name.to_owned(), samples });
    time_metrics.chain(count_metrics).collect()
}

/// Each XLA instruction of the XPlane traces, named `MODULE/INSTRUCTION`
/// (a host's, of a run directory with several, `HOST/MODULE/INSTRUCTION`):
/// its time in each of `steps`, as `rtfprof hlo` counts its total (on
/// devices the time counted, on hosts the events' durations) and the node
/// model puts executions in steps ([`HloOp::step_ps`]). Instructions of the
/// same name in programs of the same module (a module compiled twice) add
/// up. The node model's ops are the framework's: one JAX op may be several
/// fusions, one fusion several ops.
///
/// [`HloOp::step_ps`]: crate::stats::records::device::HloOp::step_ps
fn hlo_metrics(loaded: &load::Loaded, steps: &[i64]) -> Vec<Metric> {
    let index: std::collections::HashMap<i64, usize> = steps.iter().enumerate().map(|(i, &step)| (step, i)).collect();
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (job, trace) in loaded.xplane_traces() {
        for op in trace.device.hlo_ops.iter().filter(|op| !op.step_ps.is_empty()) {
            let name = [job, &op.module, &op.hlo_op_name].into_iter().filter(|part| !part.is_empty()).collect::<Vec<_>>().join("/");
            let samples = times.entry(name).or_insert_with(|| vec![0.0; steps.len()]);
            for &(step, ps) in &op.step_ps {
                if let Some(&i) = index.get(&step) {
                    samples[i] += ps as f64 / 1e6;
                }
            }
        }
    }
    times.into_iter().map(|(name, samples)| Metric { kind: Kind::HloTime, name, samples }).collect()
}

/// Each GPU kernel, copy and set, by name: its time inside each step row's
/// window on the row's GPU (the part of it inside, as the step breakdown's
/// kernel kinds count it: [`steps::pytorch::GpuRow::kinds_ns`]), and how
/// many of it started there ([`steps::pytorch::in_windows_each`]). None
/// for rows without GPU work. The node
/// model's op times are the CPU's; a kernel that slows the GPU is named
/// here.
fn kernel_metrics(trace: &crate::inputs::pytorch::Trace, rows: &[steps::pytorch::Row]) -> Vec<Metric> {
    // Each device's GPU work, by start: (start, end, name).
    let mut work: BTreeMap<u32, Vec<(i64, i64, crate::inputs::pytorch::Sym)>> = BTreeMap::new();
    for e in trace.events.iter().filter(|e| steps::pytorch::is_gpu_work(e)) {
        work.entry(e.device.unwrap_or(0)).or_default().push((e.ts, e.end(), e.name));
    }
    let mut times: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut counts: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (device, events) in &mut work {
        events.sort_unstable_by_key(|w| (w.0, w.1));
        // The device's rows (each step's window on it), in step order.
        let on_device: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].gpu.as_ref().is_some_and(|gpu| gpu.device == *device)).collect();
        let windows: Vec<(i64, i64)> = on_device.iter().map(|&i| (rows[i].start_ns, rows[i].end_ns)).collect();
        steps::pytorch::in_windows_each(events.iter().map(|w| (w.0, w.1)), &windows, |event, k, overlap, started| {
            let (name, i) = (trace.str(events[event].2), on_device[k]);
            times.entry(name).or_insert_with(|| vec![0.0; rows.len()])[i] += overlap as f64 / 1e3;
            if started {
                counts.entry(name).or_insert_with(|| vec![0.0; rows.len()])[i] += 1.0;
            }
        });
    }
    let time_metrics = times.into_iter().map(|(name, samples)| Metric { kind: Kind::KernelTime, name: name.to_owned(), samples });
    let count_metrics = counts.into_iter().map(|(name, samples)| Metric { kind: Kind::KernelCount, name: name.to_owned(), samples });
    time_metrics.chain(count_metrics).collect()
}

/// Each rank's communication and exposed communication in each of its
/// steps, as `rtfprof ranks` gives them (one PyTorch trace a rank, of
/// `source`, which errors name; `ranks`: the steps' rows of each, made
/// already), for the ranks whose GPUs ran collectives: named `rank<id>`.
fn communication_metrics(loaded: &load::Loaded, ranks: &[steps::pytorch::Rank], source: &std::path::Path) -> Result<Vec<Metric>> {
    let traces: Vec<(&str, &crate::inputs::pytorch::Trace, &[steps::pytorch::Row])> =
        loaded.pytorch_traces().filter_map(|(name, trace)| ranks.iter().find(|r| r.rank == name).map(|rank| (name, &**trace, rank.rows.as_slice()))).collect();
    let mut metrics = Vec::new();
    for (id, steps) in crate::ranks::pytorch_rank_steps(source, &traces)? {
        let per_step = |f: fn(&crate::stats::records::ranks::RankStep) -> Option<f64>| steps.iter().map(f).collect::<Option<Vec<f64>>>();
        let (Some(communication), Some(exposed)) = (per_step(|s| s.communication_us), per_step(|s| s.exposed_communication_us)) else { continue };
        if communication.iter().all(|&us| us == 0.0) {
            continue;
        }
        let name = format!("rank{id}");
        metrics.push(Metric { kind: Kind::Communication, name: name.clone(), samples: communication });
        metrics.push(Metric { kind: Kind::ExposedCommunication, name, samples: exposed });
    }
    Ok(metrics)
}

/// Each XPlane host's communication and exposed communication in each of
/// the steps the rows sample ([`steps::host_windows`]: its own steps, by
/// its own clock), as `rtfprof ranks` counts them
/// ([`crate::ranks::xplane::Collectives::per_step`]), for the hosts whose
/// GPUs ran collectives: named by the host (its job's name, as the
/// instructions of several hosts are; one trace's file name less
/// `.xplane.pb`). `hosts`: each loaded trace's steps, in order.
fn host_communication_metrics(loaded: &load::Loaded, hosts: &[steps::xplane::HostSteps]) -> Result<Vec<Metric>> {
    let mut metrics = Vec::new();
    let traces = loaded.xplane_traces().zip(hosts).zip(steps::host_windows(hosts));
    for (((job, trace), host), window) in traces {
        let Some(window) = window.filter(|_| host.hardware == steps::xplane::Hardware::Gpu) else { continue };
        let Some(per_step) = crate::ranks::xplane::communication_of_steps(&trace.file(), &host.steps[window])? else { continue };
        if per_step.iter().all(|&(communication, _)| communication == 0.0) {
            continue;
        }
        let file_name = trace.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let name = if job.is_empty() { file_name.strip_suffix(".xplane.pb").unwrap_or(&file_name) } else { job }.to_owned();
        metrics.push(Metric { kind: Kind::Communication, name: name.clone(), samples: per_step.iter().map(|s| s.0).collect() });
        metrics.push(Metric { kind: Kind::ExposedCommunication, name, samples: per_step.iter().map(|s| s.1).collect() });
    }
    Ok(metrics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::pytorch::Trace;

    /// On real H200 traces (a transformer and a ResNet, steps 2-3 cut from
    /// the shared traces, and torch.compile and CUDA-graph runs), each
    /// step's kernel times add up to the step breakdown's kernel kinds on
    /// its GPU, and the kernels counted are the GPU events that started in
    /// the step: no kernel is left out or counted twice.
    #[test]
    fn kernels_add_up_to_the_steps_gpu_work() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch"));
        let files = [
            "h200_tx.steps2-3.pt.trace.json.gz",
            "h200_resnet18.steps2-3.pt.trace.json.gz",
            "gpu/compiled.pt.trace.json.gz",
            "gpu/compiled_cudagraphs.pt.trace.json.gz",
        ];
        for file in files {
            let trace = Trace::open(&root.join(file)).unwrap();
            let rank = steps::pytorch::analyze_trace("", &trace);
            let metrics = kernel_metrics(&trace, &rank.rows);
            assert!(metrics.iter().any(|m| m.kind == Kind::KernelTime), "{file}");
            for (i, row) in rank.rows.iter().enumerate() {
                let gpu = row.gpu.as_ref().unwrap();
                let sum = |kind| metrics.iter().filter(|m| m.kind == kind).map(|m| m.samples[i]).sum::<f64>();
                let kinds_us = gpu.kinds_ns.iter().sum::<i64>() as f64 / 1e3;
                assert!((sum(Kind::KernelTime) - kinds_us).abs() < 1e-6 * kinds_us.max(1.0), "{file} {}: {} vs {kinds_us}", row.step, sum(Kind::KernelTime));
                let started = trace
                    .events
                    .iter()
                    .filter(|e| steps::pytorch::is_gpu_work(e) && e.device.unwrap_or(0) == gpu.device && row.start_ns <= e.ts && e.ts < row.end_ns)
                    .count();
                assert_eq!(sum(Kind::KernelCount), started as f64, "{file} {}", row.step);
            }
        }
    }

    /// A CPU-only trace has no kernel metrics.
    #[test]
    fn a_trace_without_gpu_work_has_no_kernels() {
        let root = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/pytorch"));
        let trace = Trace::open(&root.join("schedule.pt.trace.json.gz")).unwrap();
        let rank = steps::pytorch::analyze_trace("", &trace);
        assert!(!rank.rows.is_empty());
        assert_eq!(kernel_metrics(&trace, &rank.rows), []);
    }
}
