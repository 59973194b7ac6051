//! `rtfprof report` and `rtfprof diff … --output html:outfile=PATH`: one
//! self-contained HTML page (styles, script and data inline, nothing fetched)
//! that opens from `file://` in any current browser.
//!
//! The page's script and styles are real source files under
//! `assets/report/`, embedded at build time. The profile goes in as one JSON
//! document inside `<script type="application/json">`, with `<`, `>` and `&`
//! written as `\u003c`, `\u003e`, `\u0026`: names from profiles (`</script>`,
//! `<module>`) cannot end the element, and the script only ever puts them in
//! the page as text. A Content-Security-Policy forbids every fetch.
//!
//! The data is columnar (one array per field) so that a 25k-node graph stays
//! a few megabytes and parses quickly; its layout is described by
//! `schemas/report.schema.json` and versioned by `schema_version`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::diff::{DiffNode, Metric};
use crate::error::Result;
use crate::outputs::diff::Labels;
use crate::outputs::table::{METRICS, MetricColumn, Summary};
use crate::show::{self, Displayed, Options};
use crate::stats::{Metrics, Stats};
use crate::views::View;

const TEMPLATE: &str = include_str!("../../../../assets/report/report.html");
const STYLE: &str = include_str!("../../../../assets/report/report.css");
const SCRIPT: &str = include_str!("../../../../assets/report/report.js");
/// The ranks tab: one function, `ranksPanel`, that report.js calls; written
/// after report.js in its script element (a function declaration is
/// hoisted, and report.js' `'use strict'` stays the first statement).
const RANKS_SCRIPT: &str = include_str!("../../../../assets/report/ranks.js");
const RANKS_STYLE: &str = include_str!("../../../../assets/report/ranks.css");

pub const SCHEMA_VERSION: u32 = 1;

/// Everything the page shows, as it is embedded.
#[derive(Serialize)]
pub struct Page {
    schema_version: u32,
    /// `report` or `diff`.
    kind: &'static str,
    header: Header,
    /// Flame charts: the scope view, and the code view when there are code
    /// traces.
    trees: Vec<FlameTree>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ops: Option<OpTable>,
    #[serde(skip_serializing_if = "Option::is_none")]
    steps: Option<StepsPanel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory: Option<MemoryPanel>,
    /// XPlane traces: the XLA instructions and GPU kernels that ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<DevicePanel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    diff: Option<DiffData>,
    /// Several ranks (PyTorch traces, XPlane hosts): `rtfprof ranks`'
    /// JSON document ([`crate::outputs::ranks::to_json`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    ranks: Option<serde_json::Value>,
}

/// `rtfprof hlo` and `rtfprof kernels` as columns, times in µs.
#[derive(Serialize, Default)]
struct DevicePanel {
    hlo: BTreeMap<&'static str, Vec<serde_json::Value>>,
    kernels: BTreeMap<&'static str, Vec<serde_json::Value>>,
}

/// Each step as `rtfprof steps` splits it (XProf's categories, then
/// transfers and device idle on GPUs), one column a number.
#[derive(Serialize)]
struct Breakdown {
    names: Vec<String>,
    /// (key, label, values; null where the input cannot tell).
    columns: Vec<(String, String, Vec<Option<f64>>)>,
}

/// What the command line says about the inputs, for the page's header.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Each input flag and its value, as given.
    pub inputs: Vec<(String, String)>,
    /// Run graph coverage: one entry, or one per job (named).
    pub coverage: Vec<(String, f64)>,
    /// Why the inputs have no allocation records, should they have none
    /// (the memory tab says it). The stats must be loaded with
    /// `InputPaths::allocations` for the records to be kept.
    pub no_allocations: String,
}

#[derive(Serialize, Default)]
struct Header {
    title: String,
    generator: String,
    inputs: Vec<(String, String)>,
    /// Every recorded step, and the one shown (-1: each node's average).
    steps: Vec<i64>,
    step: i64,
    /// Each device with its busy time summed over the steps (µs).
    devices: Vec<(String, i64)>,
    coverage: Vec<(String, f64)>,
    graph_nodes: usize,
    /// View options that differ from tfprof's defaults.
    options: Vec<(String, String)>,
    notes: Vec<String>,
}

/// One tree view for a flame chart: node `i` has `names[i]`, `parents[i]`
/// (-1 for the root; parents come before children, siblings in display
/// order) and one value per metric, its own and its total.
#[derive(Serialize)]
struct FlameTree {
    view: &'static str,
    names: Vec<String>,
    parents: Vec<i64>,
    /// Op types and devices, indexed by `op` and `device` (0 is "").
    strings: Vec<String>,
    op: Vec<u32>,
    device: Vec<u32>,
    own: BTreeMap<&'static str, Vec<i64>>,
    total: BTreeMap<&'static str, Vec<i64>>,
}

/// The op view, one row per op type with its own values.
#[derive(Serialize)]
struct OpTable {
    names: Vec<String>,
    graph_nodes: Vec<usize>,
    own: BTreeMap<&'static str, Vec<i64>>,
}

/// Step times and how each node varies across steps.
#[derive(Serialize)]
struct StepsPanel {
    steps: Vec<i64>,
    /// First start to last end of any node in the step.
    wall_micros: Vec<i64>,
    /// The root's totals at each step (the sum over all shown nodes).
    totals: BTreeMap<&'static str, Vec<i64>>,
    /// Busy time of each device at each step.
    devices: Vec<(String, Vec<i64>)>,
    nodes: StepNodes,
    /// The steps as `rtfprof steps` gives them, when it finds any (XPlane
    /// traces: XProf's steps, which need not be the markers above).
    #[serde(skip_serializing_if = "Option::is_none")]
    breakdown: Option<Breakdown>,
}

/// The scope view's graph nodes with their totals at every step, and the
/// statistics `--output csv/json` give for them ([`Summary`]).
#[derive(Serialize, Default)]
struct StepNodes {
    names: Vec<String>,
    steps_ran: Vec<usize>,
    metrics: BTreeMap<&'static str, Series>,
}

#[derive(Serialize, Default)]
struct Series {
    values: Vec<Vec<i64>>,
    mean: Vec<f64>,
    std: Vec<f64>,
    cv: Vec<f64>,
}

/// The metrics of the steps panel (those that vary by step and mean most).
const STEP_METRICS: [&str; 3] = ["exec_micros", "accelerator_micros", "requested_bytes"];

/// `rtfprof memory`'s analysis ([`crate::memory::analyze`]) of each step
/// shown: every allocator's bytes in use over the step, its peak and the
/// nodes live at the peak.
#[derive(Serialize, Default)]
struct MemoryPanel {
    /// Why there is nothing to show (the inputs have no allocation
    /// records); empty when there are steps.
    note: String,
    /// The live nodes' names, once each: a node live in every step of a
    /// long profile would otherwise be written once a step.
    names: Vec<String>,
    steps: Vec<MemoryStep>,
    /// XPlane traces: the XLA programs that ran, as `rtfprof memory` lists
    /// them ([`crate::memory::programs`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    programs: Vec<ProgramPanel>,
}

/// One XLA program: its peak and the buffers live there, as columns.
#[derive(Serialize, Default)]
struct ProgramPanel {
    /// `jit_step (9285)`, with its job where there are several.
    name: String,
    /// Why XProf's memory viewer fails on it; empty otherwise.
    error: String,
    peak_bytes: i64,
    /// The instruction whose heap simulator event reached the peak.
    peak_instruction: String,
    /// The parameters', outputs' and constants' bytes (held for the whole
    /// run), the parameters' and outputs' alone, and every allocation's.
    indefinite_bytes: i64,
    parameter_bytes: i64,
    output_bytes: i64,
    total_allocation_bytes: i64,
    op_name: Vec<String>,
    instruction: Vec<String>,
    kind: Vec<&'static str>,
    shape: Vec<String>,
    bytes: Vec<i64>,
}

#[derive(Serialize)]
struct MemoryStep {
    step: i64,
    allocators: Vec<AllocatorPanel>,
}

#[derive(Serialize)]
struct AllocatorPanel {
    name: String,
    peak_bytes: i64,
    /// µs from the step's start, like the curve's times.
    peak_micros: i64,
    /// The allocator's own count (XPlane) rather than a replay from 0.
    measured: bool,
    events: usize,
    /// The curve, thinned to at most [`CURVE_POINTS`] points (see [`thin`]).
    micros: Vec<i64>,
    bytes: Vec<i64>,
    /// The nodes live at the peak (indices into [`MemoryPanel::names`]),
    /// most bytes first, and their bytes.
    live: Vec<u32>,
    live_bytes: Vec<i64>,
}

/// More points than a chart has pixels would only weigh on the page.
const CURVE_POINTS: usize = 2000;

/// `rtfprof diff`'s merged tree: both sides' values (null: absent), and the
/// nodes the text report lists, in its order, with their depth.
#[derive(Serialize)]
struct DiffData {
    metric: &'static str,
    unit: &'static str,
    left_name: String,
    right_name: String,
    left_source: String,
    right_source: String,
    delta: f64,
    min_size: i64,
    names: Vec<String>,
    parents: Vec<i64>,
    left: Vec<Option<i64>>,
    right: Vec<Option<i64>>,
    listed: Vec<(usize, usize)>,
}

fn generator() -> String {
    format!("rtfprof {}", env!("CARGO_PKG_VERSION"))
}

/// Three decimals are plenty for a page and keep the JSON small.
fn round3(x: f64) -> f64 {
    if x.is_finite() { (x * 1000.0).round() / 1000.0 } else { 0.0 }
}

fn columns(rows: usize) -> BTreeMap<&'static str, Vec<i64>> {
    METRICS.iter().map(|(name, _)| (*name, Vec::with_capacity(rows))).collect()
}

fn push_metrics(columns: &mut BTreeMap<&'static str, Vec<i64>>, m: &Metrics) {
    for (name, get) in METRICS {
        columns.get_mut(name).expect("every metric has a column").push(get(m));
    }
}

/// The report of `loaded`, read from `inputs` (named in the header), with
/// what was read apart from it (see [`ReadApart`]).
pub fn report_of(loaded: &crate::load::Loaded, inputs: &crate::load::Sources, opts: &Options, apart: ReadApart) -> Result<Page> {
    let no_allocations = crate::memory::no_records_note(loaded).to_owned();
    report_page(loaded, opts, &Sources { inputs: inputs.flags(), coverage: loaded.coverage.clone(), no_allocations }, apart)
}

/// What a report of large inputs reads apart from its loaded profile, so
/// that the profile and the records these are made of are never held at
/// once: an XPlane trace's steps, read before it is loaded
/// ([`steps_before_loading`]); a large PyTorch trace's steps and memory
/// replay, read from the windows that make its node model ([`windowed`]).
/// What is not read apart is found from the loaded profile.
#[derive(Default)]
pub struct ReadApart {
    breakdown: Option<Option<Breakdown>>,
    /// The replay, and whether the trace has any allocation records.
    memory: Option<(crate::memory::MemoryProfile, bool)>,
}

/// The steps breakdown of XPlane traces given alone (`--xplane_path`),
/// read in place as `rtfprof steps` reads them, before the report loads
/// them: the loaded profile and the steps' per-event records are then
/// never held at once (`report` of the 1.06 GB flax_cnn_nocb x3400 trace
/// peaked at 1.57 GiB with both, bench/large_xplane.md). Nothing for other
/// inputs, whose steps are found from the loaded profile.
pub fn steps_before_loading(inputs: &crate::load::Sources) -> ReadApart {
    let alone = inputs.pytorch_path.is_none() && inputs.jobs.is_empty() && inputs.partial_paths.is_empty() && inputs.partial_bytes.is_none();
    let Some((hosts, _)) = crate::load::xplane_hosts(inputs).ok().flatten().filter(|_| alone) else { return ReadApart::default() };
    // (As from the loaded traces: a trace whose steps cannot be read has no
    // breakdown.)
    ReadApart { breakdown: Some(crate::steps::analyze_xplane(&hosts).ok().as_ref().and_then(breakdown_of)), memory: None }
}

/// The report's profile of a large PyTorch trace given alone, read a
/// window of steps at a time ([`crate::windowed_report`]), with its steps
/// and memory read from the same windows; `None` for other inputs, which
/// are loaded whole. `step` is `--step`.
pub fn windowed(inputs: &crate::load::Sources, step: i64) -> Result<Option<(crate::load::Loaded, ReadApart)>> {
    Ok(crate::windowed_report::pytorch(inputs, step)?.map(read_apart))
}

/// The profile of a windowed read, and what was read apart from it.
fn read_apart(read: crate::windowed_report::WindowedReport) -> (crate::load::Loaded, ReadApart) {
    let apart = ReadApart { breakdown: Some(breakdown_of(&read.steps)), memory: Some((read.memory, read.any_records)) };
    (read.loaded, apart)
}

/// Builds the report page: the scope view (and the code view when there are
/// code traces) for flame charts, the op view as a table, and the steps
/// panel, all with the view options in `opts` (the steps breakdown and
/// memory replay in `apart` where they were read apart). The op table lists
/// every op type that passes the filters: `--max_depth` limits the trees
/// only (in tfprof's op view it would cut the list after that many rows).
/// Needs a deep stack, like the views.
pub fn report_page(loaded: &crate::load::Loaded, opts: &Options, sources: &Sources, apart: ReadApart) -> Result<Page> {
    let stats = &loaded.stats;
    let scope = show::run(stats, View::Scope, opts)?.root;
    let mut trees = vec![flame_tree(stats, View::Scope, &scope)];
    let mut notes = Vec::new();
    if stats.has_code_traces {
        let code = show::run(stats, View::Code, opts)?.root;
        trees.push(flame_tree(stats, View::Code, &code));
    } else {
        let why = if loaded.all(crate::inputs::Kind::PyTorch) {
            "no Python stacks (torch.profiler.profile(with_stack=True) records them)"
        } else if loaded.all(crate::inputs::Kind::Xplane) {
            "no Python call stacks for its ops (JAX's XLA programs record them; TF's ops do not)"
        } else {
            "no code traces (an op log written with add_trace=True has them)"
        };
        notes.push(format!("{why}: no code view"));
    }
    let op_opts = Options { max_depth: i64::MAX, ..opts.clone() };
    let ops = op_table(&show::run(stats, View::Op, &op_opts)?.root);
    // (Each step's wall time and device busy times, for the steps tab and the header.)
    let summary = crate::jobs::summarize("", stats);
    let mut steps = steps_panel(stats, opts, &scope, &summary);
    steps.breakdown = match apart.breakdown {
        Some(read) => read,
        None => crate::steps::analyze(loaded).ok().as_ref().and_then(breakdown_of),
    };
    let memory = memory_panel(loaded, opts, &sources.no_allocations, apart.memory)?;
    let device = device_panel(loaded);
    let ranks = ranks_panel(loaded, sources, &mut notes);
    let first_input = sources.inputs.first().map_or("", |(_, v)| v.as_str());
    let header = Header {
        title: format!("rtfprof report: {first_input}"),
        generator: generator(),
        inputs: sources.inputs.clone(),
        steps: stats.steps.iter().copied().collect(),
        step: opts.step,
        devices: devices(stats, &summary),
        coverage: sources.coverage.clone(),
        graph_nodes: stats.nodes.len(),
        options: changed_options(opts),
        notes,
    };
    Ok(Page {
        schema_version: SCHEMA_VERSION,
        kind: "report",
        header,
        trees,
        ops: Some(ops),
        steps: Some(steps),
        memory: Some(memory),
        device,
        diff: None,
        ranks,
    })
}

/// The options that differ from tfprof's defaults, as `-name value` pairs
/// (`--select` and `--output` do not change the report, and the report's
/// unlimited `--max_depth` is its own default).
fn changed_options(opts: &Options) -> Vec<(String, String)> {
    let defaults = Options::default().listing();
    let default_lines: Vec<&str> = defaults.lines().collect();
    opts.listing()
        .lines()
        .filter(|line| !default_lines.contains(line))
        .filter_map(|line| line.split_once(' ').map(|(k, v)| (k.to_owned(), v.trim().to_owned())))
        .filter(|(k, v)| k != "-select" && k != "-output" && !(k == "-max_depth" && *v == i64::MAX.to_string()))
        .collect()
}

/// Every device, busiest first, with its busy time summed over the steps;
/// devices nodes are placed on but that recorded no time come last.
fn devices(stats: &Stats, summary: &crate::jobs::JobSummary) -> Vec<(String, i64)> {
    let mut busy: BTreeMap<String, i64> = BTreeMap::new();
    for step in &summary.steps {
        for (device, micros) in &step.devices {
            let total = busy.entry(device.clone()).or_default();
            *total = total.wrapping_add(*micros);
        }
    }
    for node in &stats.nodes {
        if !node.canonical_device.is_empty() {
            busy.entry(node.canonical_device.to_string()).or_default();
        }
    }
    let mut devices: Vec<(String, i64)> = busy.into_iter().collect();
    devices.sort_by_key(|(_, micros)| std::cmp::Reverse(*micros));
    devices
}

/// Flattens a displayed tree in pre-order.
fn flame_tree(stats: &Stats, view: View, root: &Displayed) -> FlameTree {
    let mut tree = FlameTree {
        view: view.as_str(),
        names: Vec::new(),
        parents: Vec::new(),
        strings: vec![String::new()],
        op: Vec::new(),
        device: Vec::new(),
        own: columns(0),
        total: columns(0),
    };
    let mut string_ids: BTreeMap<String, u32> = BTreeMap::new();
    let mut intern = |strings: &mut Vec<String>, s: &str| -> u32 {
        if s.is_empty() {
            return 0;
        }
        *string_ids.entry(s.to_owned()).or_insert_with(|| {
            strings.push(s.to_owned());
            (strings.len() - 1) as u32
        })
    };
    // Explicit stack: trees can be thousands deep.
    let mut stack: Vec<(&Displayed, i64)> = vec![(root, -1)];
    while let Some((node, parent)) = stack.pop() {
        let index = tree.names.len() as i64;
        tree.names.push(node.name.clone());
        tree.parents.push(parent);
        // A scope node is one graph node; a code node is a group of them.
        let graph_node = match node.graph_nodes.as_slice() {
            [id] if view != View::Code => Some(&stats.nodes[*id]),
            _ => None,
        };
        let op = intern(&mut tree.strings, graph_node.map_or("", |n| n.op));
        let device = intern(&mut tree.strings, graph_node.map_or("", |n| n.canonical_device));
        tree.op.push(op);
        tree.device.push(device);
        push_metrics(&mut tree.own, &node.own);
        push_metrics(&mut tree.total, &node.totals);
        stack.extend(node.children.iter().rev().map(|c| (c, index)));
    }
    tree
}

fn op_table(root: &Displayed) -> OpTable {
    let mut own = columns(root.children.len());
    for row in &root.children {
        push_metrics(&mut own, &row.own);
    }
    OpTable { names: root.children.iter().map(|r| r.name.clone()).collect(), graph_nodes: root.children.iter().map(|r| r.graph_nodes.len()).collect(), own }
}

fn steps_panel(stats: &Stats, opts: &Options, scope: &Displayed, summary: &crate::jobs::JobSummary) -> StepsPanel {
    let steps: Vec<i64> = stats.steps.iter().copied().collect();
    let mut devices: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (i, step) in summary.steps.iter().enumerate() {
        for (device, micros) in &step.devices {
            devices.entry(device.clone()).or_insert_with(|| vec![0; steps.len()])[i] = *micros;
        }
    }
    let mut devices: Vec<(String, Vec<i64>)> = devices.into_iter().collect();
    devices.sort_by_key(|(_, v)| std::cmp::Reverse(v.iter().fold(0i64, |sum, &m| sum.wrapping_add(m))));

    // The scope view's graph nodes; each step's values are reduced to what
    // the panel shows as they come (see show::map_steps): a long profile's
    // every node at every step would be hundreds of megabytes.
    let mut nodes: Vec<&Displayed> = Vec::new();
    let mut stack: Vec<&Displayed> = scope.children.iter().rev().collect();
    while let Some(node) = stack.pop() {
        stack.extend(node.children.iter().rev());
        if !node.graph_nodes.is_empty() {
            nodes.push(node);
        }
    }
    let stepped: Vec<MetricColumn> = METRICS.iter().copied().filter(|(name, _)| *name != "parameters").collect();
    let watched: Vec<MetricColumn> = stepped.iter().copied().filter(|(name, _)| STEP_METRICS.contains(name)).collect();
    // Per step: the root's totals, and each node's watched metrics and run count.
    type AtStep = (Vec<i64>, Vec<Vec<i64>>, Vec<bool>);
    let at_steps: Vec<AtStep> = show::map_steps(stats, View::Scope, opts, |_, at_step| {
        let root = stepped.iter().map(|(_, get)| get(&at_step[scope.index])).collect();
        let watched = watched.iter().map(|(_, get)| nodes.iter().map(|n| get(&at_step[n.index])).collect()).collect();
        let ran = nodes.iter().map(|n| at_step[n.index].run_count > 0).collect();
        (root, watched, ran)
    });
    // Turned into series per metric and node, step by step (each step's
    // values read in order and then dropped: reading them node by node
    // across the steps was a quarter of a long trace's report).
    let mut root_at_steps = Vec::with_capacity(at_steps.len());
    let mut series: Vec<Vec<Vec<i64>>> = vec![(0..nodes.len()).map(|_| Vec::with_capacity(at_steps.len())).collect(); watched.len()];
    let mut steps_ran = vec![0usize; nodes.len()];
    for (root, watched_at_step, ran) in at_steps {
        root_at_steps.push(root);
        for (metric, values) in series.iter_mut().zip(watched_at_step) {
            for (node, value) in metric.iter_mut().zip(values) {
                node.push(value);
            }
        }
        for (count, ran) in steps_ran.iter_mut().zip(ran) {
            *count += usize::from(ran);
        }
    }
    let totals: BTreeMap<&'static str, Vec<i64>> =
        stepped.iter().enumerate().map(|(m, (name, _))| (*name, root_at_steps.iter().map(|root| root[m]).collect())).collect();
    let mut summaries: Vec<Vec<Summary>> = series.into_iter().map(|metric| metric.into_iter().map(Summary::of).collect()).collect();

    let mut panel_nodes = StepNodes::default();
    for (k, node) in nodes.iter().enumerate() {
        if summaries.iter().all(|s| s[k].mean == 0.0) {
            continue;
        }
        panel_nodes.names.push(node.name.clone());
        panel_nodes.steps_ran.push(steps_ran[k]);
        for ((name, _), series) in watched.iter().zip(&mut summaries) {
            let s = &mut series[k];
            let column = panel_nodes.metrics.entry(name).or_default();
            column.mean.push(round3(s.mean));
            column.std.push(round3(s.std));
            column.cv.push(round3(s.cv));
            column.values.push(std::mem::take(&mut s.values));
        }
    }
    // A metric that is zero everywhere (no accelerator) is left out.
    panel_nodes.metrics.retain(|_, s| s.mean.iter().any(|&m| m != 0.0));
    StepsPanel { steps, wall_micros: summary.steps.iter().map(|s| s.wall_micros).collect(), totals, devices, nodes: panel_nodes, breakdown: None }
}

/// `rtfprof steps`' rows, if it finds steps (a profile without any has
/// only the panel above).
fn breakdown_of(analyzed: &crate::steps::Steps) -> Option<Breakdown> {
    if analyzed.rows.is_empty() {
        return None;
    }
    let labels = ["Step time"].into_iter().chain(crate::steps::LABELS).chain(["Transfers", "Device idle"]);
    let columns = crate::steps::number_names()
        .zip(labels)
        .enumerate()
        .map(|(k, (key, label))| (key, label.to_owned(), analyzed.rows.iter().map(|r| r.numbers().nth(k).flatten()).collect::<Vec<_>>()))
        .filter(|(_, _, values)| values.iter().any(Option::is_some))
        .collect();
    Some(Breakdown { names: analyzed.rows.iter().map(|r| r.name.clone()).collect(), columns })
}

/// `rtfprof ranks` of the loaded traces when there are several (a
/// directory of PyTorch traces, an XPlane run of several hosts); where
/// they cannot be read as ranks (see [`crate::ranks::from_sources`]), a note says
/// why instead.
fn ranks_panel(loaded: &crate::load::Loaded, sources: &Sources, notes: &mut Vec<String>) -> Option<serde_json::Value> {
    let pytorch: Vec<(String, &crate::inputs::pytorch::Trace)> = loaded.pytorch_traces().map(|(job, trace)| (job.to_owned(), &**trace)).collect();
    let xplane: Vec<(String, crate::inputs::xplane::XplaneFile)> = loaded.xplane_traces().map(|(job, trace)| (job.to_owned(), trace.file())).collect();
    let analyzed = if pytorch.len() >= 2 {
        let dir = sources.inputs.iter().find(|(flag, _)| flag == "--pytorch_path").map_or("", |(_, value)| value.as_str());
        crate::ranks::analyze_pytorch(std::path::Path::new(dir), &pytorch)
    } else if xplane.len() >= 2 {
        crate::ranks::xplane::analyze(&xplane)
    } else if let Some(summaries) = &loaded.rank_summaries {
        // (Partials whose ranks do not read together give no tab, as before.)
        return crate::ranks::from_summaries(std::path::Path::new("--partial_path"), summaries.clone())
            .ok()
            .map(|ranks| crate::outputs::ranks::to_json(&ranks));
    } else {
        return None;
    };
    match analyzed {
        Ok(ranks) => Some(crate::outputs::ranks::to_json(&ranks)),
        Err(e) => {
            notes.push(format!("no ranks tab: {e}"));
            None
        }
    }
}

/// The device tables of the profile's XPlane traces, if any has a row.
fn device_panel(loaded: &crate::load::Loaded) -> Option<DevicePanel> {
    use serde_json::json;
    let tables = crate::device::Tables::merge(loaded.xplane_traces().map(|(job, trace)| (job.to_owned(), trace.device.clone())));
    if tables.is_empty() {
        return None;
    }
    let mut panel = DevicePanel::default();
    let us = |ps: i128| round3(ps as f64 / 1e6);
    for r in &tables.hlo_ops {
        let name = if r.job.is_empty() { r.hlo_op_name.clone() } else { format!("{}/{}", r.job, r.hlo_op_name) };
        let cells: [(&'static str, serde_json::Value); 8] = [
            ("name", json!(name)),
            ("module", json!(format!("{}({})", r.module, r.program_id))),
            ("category", json!(r.category)),
            ("framework_op", json!(r.framework_op)),
            ("occurrences", json!(r.occurrences)),
            ("total_us", json!(us(r.total_ps))),
            ("self_us", json!(us(r.self_ps))),
            ("source", json!(r.source.first().cloned().unwrap_or_default())),
        ];
        for (key, value) in cells {
            panel.hlo.entry(key).or_default().push(value);
        }
    }
    for k in &tables.kernels {
        let dims = |d: [u32; 3]| format!("{},{},{}", d[0], d[1], d[2]);
        let name = if k.job.is_empty() { k.kernel_name.clone() } else { format!("{}/{}", k.job, k.kernel_name) };
        let cells: [(&'static str, serde_json::Value); 11] = [
            ("name", json!(name)),
            ("op_name", json!(k.op_name)),
            ("occurrences", json!(k.occurrences)),
            ("total_us", json!(round3(k.total_ns as f64 / 1e3))),
            ("min_us", json!(round3(k.min_ns as f64 / 1e3))),
            ("max_us", json!(round3(k.max_ns as f64 / 1e3))),
            ("registers", json!(k.registers_per_thread)),
            ("shmem_bytes", json!(k.shmem_bytes())),
            ("launch", json!(format!("grid {} block {}", dims(k.grid_dim), dims(k.block_dim)))),
            ("occupancy_pct", json!(k.occupancy_pct)),
            (
                "tensor_core",
                json!(if k.is_kernel_using_tensor_core {
                    "used"
                } else if k.is_op_tensor_core_eligible {
                    "eligible, unused"
                } else {
                    ""
                }),
            ),
        ];
        for (key, value) in cells {
            panel.kernels.entry(key).or_default().push(value);
        }
    }
    Some(panel)
}

/// The memory of the step shown (each step with `--step -1`), or, when the
/// inputs recorded no allocations, `no_records` (why).
/// The memory tab: `replayed` where the steps were replayed apart from
/// `loaded` (with whether the inputs have records), else a replay of
/// `loaded`'s records.
fn memory_panel(loaded: &crate::load::Loaded, opts: &Options, no_records: &str, replayed: Option<(crate::memory::MemoryProfile, bool)>) -> Result<MemoryPanel> {
    let any_records = replayed.as_ref().map_or(!loaded.stats.allocations.is_empty(), |(_, any)| *any);
    if !any_records {
        let note = if no_records.is_empty() { "No allocation records in the inputs." } else { no_records };
        let programs = program_panels(crate::memory::ran_programs(loaded)?);
        return Ok(MemoryPanel { note: note.to_owned(), programs, ..MemoryPanel::default() });
    }
    let profile = match replayed {
        Some((profile, _)) => profile,
        None => crate::memory::analyze(loaded, opts.step)?,
    };
    let mut panel = MemoryPanel { programs: program_panels(profile.programs), ..MemoryPanel::default() };
    let mut name_ids: FxHashMap<String, u32> = FxHashMap::default();
    for step in profile.steps {
        let mut allocators = Vec::with_capacity(step.allocators.len());
        for a in step.allocators {
            let (micros, bytes) = thin(&a.curve, CURVE_POINTS).into_iter().unzip();
            let (mut live, mut live_bytes) = (Vec::with_capacity(a.live_at_peak.len()), Vec::with_capacity(a.live_at_peak.len()));
            for node in a.live_at_peak {
                let id = *name_ids.entry(node.name).or_insert_with_key(|name| {
                    panel.names.push(name.clone());
                    (panel.names.len() - 1) as u32
                });
                live.push(id);
                live_bytes.push(node.bytes);
            }
            allocators.push(AllocatorPanel {
                name: a.name,
                peak_bytes: a.peak_bytes,
                peak_micros: a.peak_micros,
                measured: a.measured,
                events: a.events,
                micros,
                bytes,
                live,
                live_bytes,
            });
        }
        panel.steps.push(MemoryStep { step: step.step, allocators });
    }
    Ok(panel)
}

/// The programs' panels, in `rtfprof memory`'s order.
fn program_panels(programs: Vec<crate::memory::programs::ProgramMemory>) -> Vec<ProgramPanel> {
    programs
        .into_iter()
        .map(|p| {
            let job = if p.job.is_empty() { String::new() } else { format!("{}: ", p.job) };
            let name = format!("{job}{} ({})", p.module, p.program_id as u64);
            let heap = match p.heap {
                Ok(heap) => heap,
                Err(error) => return ProgramPanel { name, error, ..ProgramPanel::default() },
            };
            let mut panel = ProgramPanel {
                name,
                peak_bytes: heap.peak_bytes,
                peak_instruction: heap.curve.get(heap.peak_event).map(|point| point.instruction.clone()).unwrap_or_default(),
                indefinite_bytes: heap.indefinite_bytes,
                parameter_bytes: heap.parameter_bytes,
                output_bytes: heap.output_bytes,
                total_allocation_bytes: heap.total_allocation_bytes,
                ..ProgramPanel::default()
            };
            for b in heap.live_at_peak {
                panel.instruction.push(b.instruction_with_index());
                panel.op_name.push(b.op_name);
                panel.kind.push(b.kind.as_str());
                panel.shape.push(b.shape);
                panel.bytes.push(b.bytes);
            }
            panel
        })
        .collect()
}

/// A curve of at most about `max` points: runs of consecutive points become
/// their highest point (the last of equal ones, as the peak is) and their
/// last point, so the peak and the shape stay.
fn thin(curve: &[(i64, i64)], max: usize) -> Vec<(i64, i64)> {
    if curve.len() <= max {
        return curve.to_vec();
    }
    let run = curve.len().div_ceil(max / 2);
    let mut out = Vec::with_capacity(max + 2);
    for chunk in curve.chunks(run) {
        let highest = chunk.iter().enumerate().max_by_key(|(_, p)| p.1).map_or(0, |(i, _)| i);
        out.push(chunk[highest]);
        if highest + 1 < chunk.len() {
            out.push(chunk[chunk.len() - 1]);
        }
    }
    out
}

/// Builds the page of `rtfprof diff`: the merged tree of both sides (every
/// node, for the flame chart) and the nodes the text report lists.
pub fn diff_page(merged: &DiffNode, listed: &DiffNode, metric: Metric, delta: f64, min_size: i64, labels: &Labels<'_>) -> Page {
    let mut data = DiffData {
        metric: metric.name(),
        unit: unit_of(metric.name()),
        left_name: labels.left_name.to_owned(),
        right_name: labels.right_name.to_owned(),
        left_source: labels.left_source.to_owned(),
        right_source: labels.right_source.to_owned(),
        delta,
        min_size,
        names: Vec::new(),
        parents: Vec::new(),
        left: Vec::new(),
        right: Vec::new(),
        listed: Vec::new(),
    };
    // Children of each merged node by name, to find the listed nodes.
    let mut by_name: BTreeMap<(i64, &str), usize> = BTreeMap::new();
    let mut stack: Vec<(&DiffNode, i64)> = vec![(merged, -1)];
    while let Some((node, parent)) = stack.pop() {
        let index = data.names.len();
        data.names.push(node.name.clone());
        data.parents.push(parent);
        data.left.push(node.left);
        data.right.push(node.right);
        by_name.entry((parent, node.name.as_str())).or_insert(index);
        stack.extend(node.children.iter().rev().map(|c| (c, index as i64)));
    }
    let mut stack: Vec<(&DiffNode, i64, usize)> = vec![(listed, -1, 0)];
    while let Some((node, parent, depth)) = stack.pop() {
        let Some(&index) = by_name.get(&(parent, node.name.as_str())) else { continue };
        data.listed.push((index, depth));
        stack.extend(node.children.iter().rev().map(|c| (c, index as i64, depth + 1)));
    }
    let header = Header {
        title: format!("rtfprof diff: {} vs {}", labels.left_name, labels.right_name),
        generator: generator(),
        inputs: vec![(labels.left_name.to_owned(), labels.left_source.to_owned()), (labels.right_name.to_owned(), labels.right_source.to_owned())],
        step: -1,
        ..Header::default()
    };
    Page {
        schema_version: SCHEMA_VERSION,
        kind: "diff",
        header,
        trees: Vec::new(),
        ops: None,
        steps: None,
        memory: None,
        device: None,
        diff: Some(data),
        ranks: None,
    }
}

/// How the page formats a metric's values.
fn unit_of(metric: &str) -> &'static str {
    if metric.ends_with("bytes") {
        "bytes"
    } else if metric.ends_with("micros") {
        "micros"
    } else {
        "count"
    }
}

/// Writes the page: the template with the title, styles, data and script
/// in place.
pub fn write<W: Write>(page: &Page, mut out: W) -> io::Result<W> {
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        let end = start + rest[start..].find("}}").expect("template placeholders are closed");
        out.write_all(&rest.as_bytes()[..start])?;
        match &rest[start + 2..end] {
            "TITLE" => out.write_all(escape_html(&page.header.title).as_bytes())?,
            "STYLE" => {
                out.write_all(STYLE.as_bytes())?;
                out.write_all(RANKS_STYLE.as_bytes())?;
            }
            "SCRIPT" => {
                out.write_all(SCRIPT.as_bytes())?;
                out.write_all(b"\n")?;
                out.write_all(RANKS_SCRIPT.as_bytes())?;
            }
            "DATA" => {
                let mut safe = ScriptSafe(&mut out);
                serde_json::to_writer(&mut safe, page)?;
            }
            other => unreachable!("unknown template placeholder {other}"),
        }
        rest = &rest[end + 2..];
    }
    out.write_all(rest.as_bytes())?;
    Ok(out)
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Passes JSON through with `<`, `>` and `&` as `\u` escapes. JSON has them
/// only inside strings, where the escapes mean the same characters, so the
/// data parses unchanged while no `</script>` or `<!--` can appear in it.
struct ScriptSafe<W>(W);

impl<W: Write> Write for ScriptSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut start = 0;
        for (i, &b) in buf.iter().enumerate() {
            let escaped: &[u8] = match b {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                b'&' => b"\\u0026",
                _ => continue,
            };
            self.0.write_all(&buf[start..i])?;
            self.0.write_all(escaped)?;
            start = i + 1;
        }
        self.0.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read a window of one, two or three steps at a time, every trace of
    /// the test data with steps gives the report the whole trace gives
    /// (its page's data and start-up lines, byte for byte), of every step
    /// and of the last.
    #[test]
    fn windows_give_the_whole_traces_report() {
        let sources = |path: &std::path::Path| crate::load::Sources {
            pytorch_path: Some(path.to_owned()),
            pytorch_windows: crate::inputs::pytorch::windows::Windowing::Whole,
            ..Default::default()
        };
        let page = |loaded: &crate::load::Loaded, path: &std::path::Path, step: i64, apart: ReadApart| {
            let opts = Options { step, ..Options::default() };
            let page = crate::stack::with_deep_stack(|| report_of(loaded, &sources(path), &opts, apart)).unwrap();
            // (The start-up lines the command prints, then the page's data.)
            format!("{}{}", loaded.listing, serde_json::to_string(&page).unwrap())
        };
        let whole = |path: &std::path::Path, _: &_| {
            let loaded = crate::load::load(&sources(path), crate::load::Purpose::Report).ok()?;
            let last = *loaded.stats.steps.iter().next_back()?;
            Some((path.to_owned(), last, [-1, last].map(|step| page(&loaded, path, step, ReadApart::default()))))
        };
        let windowings = crate::inputs::pytorch::for_each_windowing(whole, |(path, last, pages), windows, what| {
            for (step, whole_page) in [-1, *last].iter().zip(pages) {
                let read = crate::windowed_report::read(windows, *step, Default::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
                let (loaded, apart) = read_apart(read);
                assert!(&page(&loaded, path, *step, apart) == whole_page, "{what}, step {step}");
            }
        });
        assert!(windowings >= 81, "{windowings} windowings");
    }

    #[test]
    fn embedded_sources_cannot_close_their_elements() {
        for script in [SCRIPT, RANKS_SCRIPT] {
            assert!(!script.to_ascii_lowercase().contains("</script"));
            assert!(!script.contains("<!--"));
        }
        for style in [STYLE, RANKS_STYLE] {
            assert!(!style.to_ascii_lowercase().contains("</style"));
        }
        for placeholder in ["{{TITLE}}", "{{STYLE}}", "{{DATA}}", "{{SCRIPT}}"] {
            assert_eq!(TEMPLATE.matches(placeholder).count(), 1, "{placeholder}");
        }
    }

    #[test]
    fn json_in_a_script_element_is_escaped_and_still_parses() {
        let hostile = "</script><script>alert(1)</script><!-- & \\<module>";
        let mut out = Vec::new();
        serde_json::to_writer(ScriptSafe(&mut out), &serde_json::json!({ "name": hostile })).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["name"], hostile);
    }

    #[test]
    fn thinning_keeps_the_peak_and_the_ends() {
        let curve: Vec<(i64, i64)> = (0..1000).map(|t| (t, (t * 7919) % 1000)).chain([(1000, 5000), (1001, 3)]).collect();
        let thinned = thin(&curve, 100);
        assert!(thinned.len() <= 102, "{}", thinned.len());
        assert!(thinned.contains(&(1000, 5000)));
        assert_eq!(thinned.last(), curve.last());
        assert!(thinned.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(thin(&curve[..50], 100), &curve[..50]);
    }

    #[test]
    fn titles_are_escaped() {
        assert_eq!(escape_html("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
    }
}
