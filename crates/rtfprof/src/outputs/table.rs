//! `--output csv:outfile=PATH` and `--output json:outfile=PATH`: every
//! displayed node with raw numbers in fixed units (bytes, microseconds,
//! counts), not formatted strings, for spreadsheets and notebooks.
//!
//! When several steps are loaded, each node also gets, per metric, its value
//! in every step and their mean, standard deviation (population) and
//! coefficient of variation (std / mean, 0 when the mean is 0), plus the
//! number of steps it ran in. Tree views report a node's totals (itself and
//! its accounted descendants) per step; op rows their own values.
//!
//! The JSON layout is versioned by `schema_version` and described by
//! `schemas/view.schema.json` (checked by `tests/integration/json_schemas.rs`).

use std::io::Write;

use serde::Serialize;

use crate::show::{Displayed, PerStep};
use crate::stats::Metrics;
use crate::views::View;

pub const SCHEMA_VERSION: u32 = 1;

/// An exported metric: its unit-bearing name and its value of a node.
pub type MetricColumn = (&'static str, fn(&Metrics) -> i64);

/// The metrics exported, with their unit-bearing names.
pub const METRICS: [MetricColumn; 10] = [
    ("requested_bytes", |m| m.requested_bytes),
    ("peak_bytes", |m| m.peak_bytes),
    ("residual_bytes", |m| m.residual_bytes),
    ("output_bytes", |m| m.output_bytes),
    ("exec_micros", |m| m.exec_micros),
    ("accelerator_micros", |m| m.accelerator_micros),
    ("cpu_micros", |m| m.cpu_micros),
    ("parameters", |m| m.parameters),
    ("float_ops", |m| m.float_ops),
    ("run_count", |m| m.run_count),
];

/// Metrics that vary by step (parameters do not).
fn stepped_metrics() -> impl Iterator<Item = &'static MetricColumn> {
    METRICS.iter().filter(|(name, _)| *name != "parameters")
}

#[derive(Serialize)]
pub struct Summary {
    pub values: Vec<i64>,
    pub mean: f64,
    pub std: f64,
    pub cv: f64,
}

impl Summary {
    pub fn of(values: Vec<i64>) -> Summary {
        let n = values.len().max(1) as f64;
        let mean = values.iter().map(|&v| v as f64).sum::<f64>() / n;
        let variance = values.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
        let std = variance.sqrt();
        let cv = if mean == 0.0 { 0.0 } else { std / mean };
        Summary { values, mean, std, cv }
    }
}

#[derive(Serialize)]
struct StepStats {
    steps_ran: usize,
    metrics: std::collections::BTreeMap<&'static str, Summary>,
}

fn metrics_map(m: &Metrics) -> std::collections::BTreeMap<&'static str, i64> {
    METRICS.iter().map(|(name, get)| (*name, get(m))).collect()
}

fn step_stats(per_step: Option<&PerStep>, index: usize) -> Option<StepStats> {
    let per_step = per_step?;
    let at: Vec<&Metrics> = per_step.values.iter().map(|v| &v[index]).collect();
    let metrics = stepped_metrics().map(|(name, get)| (*name, Summary::of(at.iter().map(|m| get(m)).collect()))).collect();
    Some(StepStats { steps_ran: at.iter().filter(|m| m.run_count > 0).count(), metrics })
}

#[derive(Serialize)]
struct JsonNode {
    name: String,
    depth: usize,
    accounted: bool,
    graph_nodes: usize,
    own: std::collections::BTreeMap<&'static str, i64>,
    total: std::collections::BTreeMap<&'static str, i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    per_step: Option<StepStats>,
    children: Vec<JsonNode>,
}

fn json_node(node: &Displayed, depth: usize, per_step: Option<&PerStep>) -> JsonNode {
    JsonNode {
        name: node.name.clone(),
        depth,
        accounted: node.accounted,
        graph_nodes: node.graph_nodes.len(),
        own: metrics_map(&node.own),
        total: metrics_map(&node.totals),
        per_step: step_stats(per_step, node.index),
        children: node.children.iter().map(|c| json_node(c, depth + 1, per_step)).collect(),
    }
}

#[derive(Serialize)]
struct JsonDocument {
    schema_version: u32,
    generator: String,
    view: &'static str,
    step: i64,
    steps: Vec<i64>,
    units: std::collections::BTreeMap<&'static str, &'static str>,
    root: JsonNode,
}

/// Per-step statistics only mean something with more than one step.
fn usable(per_step: Option<&PerStep>) -> Option<&PerStep> {
    per_step.filter(|p| p.steps.len() > 1)
}

pub fn write_json<W: Write>(view: View, step: i64, root: &Displayed, per_step: Option<&PerStep>, mut out: W) -> std::io::Result<W> {
    let per_step = usable(per_step);
    let doc = JsonDocument {
        schema_version: SCHEMA_VERSION,
        generator: format!("rtfprof {}", env!("CARGO_PKG_VERSION")),
        view: view.as_str(),
        step,
        steps: per_step.map(|p| p.steps.clone()).unwrap_or_default(),
        units: [("*_bytes", "bytes"), ("*_micros", "microseconds"), ("parameters, float_ops, run_count", "count")].into(),
        root: json_node(root, 0, per_step),
    };
    serde_json::to_writer_pretty(&mut out, &doc)?;
    out.write_all(b"\n")?;
    Ok(out)
}

/// A value of a [`Record`]: CSV writes floats with `decimals` digits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    Int(i64),
    Bool(bool),
    Str(&'a str),
    Float { value: f64, decimals: usize },
}

impl std::fmt::Display for Cell<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Int(v) => write!(f, "{v}"),
            Cell::Bool(v) => write!(f, "{v}"),
            Cell::Str(v) => f.write_str(v),
            Cell::Float { value, decimals } => write!(f, "{value:.decimals$}"),
        }
    }
}

/// One displayed node as a row of the CSV output (and of the Python
/// module's `to_records`).
pub struct Record<'a> {
    /// The root is 0.
    pub depth: usize,
    pub node: &'a Displayed,
    steps: Option<StepStats>,
}

/// The displayed nodes in pre-order, the root first, with their per-step
/// statistics when more than one step was loaded.
pub fn records<'a>(root: &'a Displayed, per_step: Option<&PerStep>) -> Vec<Record<'a>> {
    fn walk<'a>(node: &'a Displayed, depth: usize, per_step: Option<&PerStep>, out: &mut Vec<Record<'a>>) {
        out.push(record(node, depth, per_step));
        for child in &node.children {
            walk(child, depth + 1, per_step, out);
        }
    }
    let mut out = Vec::new();
    walk(root, 0, per_step, &mut out);
    out
}

/// The record of one displayed node at `depth` (see [`records`]).
pub fn record<'a>(node: &'a Displayed, depth: usize, per_step: Option<&PerStep>) -> Record<'a> {
    Record { depth, node, steps: step_stats(usable(per_step), node.index) }
}

/// The names of [`Record::cells`]: the CSV header, plus with `step_values`
/// each stepped metric's value at every step (`<metric>_step<N>`, before its
/// mean).
pub fn columns(per_step: Option<&PerStep>, step_values: bool) -> Vec<String> {
    let mut header: Vec<String> = ["depth", "name", "accounted", "graph_nodes"].map(String::from).to_vec();
    header.extend(METRICS.iter().map(|(n, _)| format!("own_{n}")));
    header.extend(METRICS.iter().map(|(n, _)| format!("total_{n}")));
    if let Some(p) = usable(per_step) {
        header.extend(["steps".to_owned(), "steps_ran".to_owned()]);
        for (name, _) in stepped_metrics() {
            if step_values {
                header.extend(p.steps.iter().map(|step| format!("{name}_step{step}")));
            }
            header.extend([format!("{name}_mean"), format!("{name}_std"), format!("{name}_cv")]);
        }
    }
    header
}

impl Record<'_> {
    /// The row's values, in the order of [`columns`].
    pub fn cells(&self, step_values: bool) -> Vec<Cell<'_>> {
        let node = self.node;
        let mut cells = vec![Cell::Int(self.depth as i64), Cell::Str(&node.name), Cell::Bool(node.accounted), Cell::Int(node.graph_nodes.len() as i64)];
        cells.extend(METRICS.iter().map(|(_, get)| Cell::Int(get(&node.own))));
        cells.extend(METRICS.iter().map(|(_, get)| Cell::Int(get(&node.totals))));
        if let Some(stats) = &self.steps {
            let steps = stats.metrics.values().next().map_or(0, |s| s.values.len());
            cells.extend([Cell::Int(steps as i64), Cell::Int(stats.steps_ran as i64)]);
            for (name, _) in stepped_metrics() {
                let s = &stats.metrics[name];
                if step_values {
                    cells.extend(s.values.iter().map(|&v| Cell::Int(v)));
                }
                cells.extend([Cell::Float { value: s.mean, decimals: 3 }, Cell::Float { value: s.std, decimals: 3 }, Cell::Float { value: s.cv, decimals: 4 }]);
            }
        }
        cells
    }
}

/// One row per displayed node in pre-order (the root first, depth 0).
pub fn write_csv<W: Write>(root: &Displayed, per_step: Option<&PerStep>, out: W) -> std::io::Result<W> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(columns(per_step, false))?;
    for record in records(root, per_step) {
        w.write_record(record.cells(false).iter().map(Cell::to_string))?;
    }
    w.into_inner().map_err(|e| e.into_error())
}

#[cfg(test)]
mod tests {
    use super::Summary;

    #[test]
    fn summary_is_population_statistics() {
        let s = Summary::of(vec![2, 4, 4, 4, 5, 5, 7, 9]);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.std, 2.0);
        assert_eq!(s.cv, 0.4);
        assert_eq!(Summary::of(vec![0, 0]).cv, 0.0);
    }
}
