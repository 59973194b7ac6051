//! What `rtfprof check` compares: per-step samples of a profile's step
//! time, of each part of the step breakdown, of each allocator's peak
//! memory (where the trace records allocations), and of each op's time and
//! count, read from the inputs once.

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
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        [Kind::StepTime, Kind::Category, Kind::PeakMemory, Kind::OpTime, Kind::OpCount].into_iter().find(|k| k.as_str() == name)
    }

    /// The unit of its samples: microseconds, bytes, or a count.
    pub fn unit(self) -> &'static str {
        match self {
            Kind::OpCount => "count",
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
    /// `memory:cpu`, `op:jit(step)/jvp(layer2)/dot_general`, `count:…`.
    pub fn label(&self) -> String {
        match self.kind {
            Kind::StepTime => "step_time".to_owned(),
            Kind::Category => format!("category:{}", self.name),
            Kind::PeakMemory => format!("memory:{}", self.name),
            Kind::OpTime => format!("op:{}", self.name),
            Kind::OpCount => format!("count:{}", self.name),
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
    let early = steps::xplane_before_loading(sources);
    let loaded = load::load(sources, Purpose::Check)?;
    let analyzed = match early {
        Some(analyzed) => analyzed,
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
    } else {
        samples.steps = analyzed.rows.iter().map(|r| r.name.clone()).collect();
        samples.metrics.push(Metric { kind: Kind::StepTime, name: "step_time".into(), samples: analyzed.rows.iter().map(|r| r.step_us).collect() });
        for (i, category) in CATEGORIES.iter().enumerate() {
            let values: Option<Vec<f64>> = analyzed.rows.iter().map(|r| r.categories[i]).collect();
            if let Some(values) = values {
                samples.metrics.push(Metric { kind: Kind::Category, name: (*category).to_owned(), samples: values });
            }
        }
    }
    let steps = sampled_steps(&loaded.stats, samples.steps.len());
    samples.metrics.extend(memory_metrics(&loaded, &steps)?);
    samples.metrics.extend(op_metrics(&loaded.stats, &steps));
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
