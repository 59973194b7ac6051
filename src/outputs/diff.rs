//! `rtfprof diff`'s text: the two sides' values per node, the difference
//! and the ratio, indented by depth (the HTML page is in [`super::html`],
//! the folded stacks in [`super::folded`]).

use std::fmt::Write;

use crate::diff::{DiffNode, Metric};

/// How the report names the two sides and what it compares.
pub struct Labels<'a> {
    pub left_name: &'a str,
    pub right_name: &'a str,
    pub left_source: &'a str,
    pub right_source: &'a str,
}

/// The report text.
pub fn render(root: &DiffNode, metric: Metric, delta: f64, min_size: i64, labels: &Labels<'_>) -> String {
    let (l, r, m) = (labels.left_name, labels.right_name, metric.name());
    let mut out = format!(
        "Comparing {} ({l}), {} ({r})\n - Showing nodes with minimum size >= {} and relative difference in {m} >= {:.1}% or such children\n - Showing absolute {m} differences {m}({l}) - {m}({r}) and relative {m} differences {m}({l}) / {m}({r})\n\n",
        labels.left_source,
        labels.right_source,
        metric.format(min_size),
        delta * 100.0
    );
    render_node(root, 0, metric, labels, &mut out);
    out
}

fn render_node(node: &DiffNode, depth: usize, metric: Metric, labels: &Labels<'_>, out: &mut String) {
    let mut sides = Vec::new();
    if let Some(l) = node.left {
        sides.push(format!("{}:{}", labels.left_name, metric.format(l)));
    }
    if let Some(r) = node.right {
        sides.push(format!("{}:{}", labels.right_name, metric.format(r)));
    }
    let d = node.difference();
    let sign = if d < 0 { '-' } else { '+' };
    let magnitude = metric.format(d.checked_abs().unwrap_or(i64::MAX));
    let ratio = match (node.left, node.right) {
        (Some(l), Some(r)) if r != 0 => format!("x{:.1}", l as f64 / r as f64),
        _ => String::new(),
    };
    let _ = writeln!(out, "{:indent$}{} ({}) {sign}{magnitude} {ratio}", "", node.name, sides.join(" "), indent = depth * 2);
    for child in &node.children {
        render_node(child, depth + 1, metric, labels, out);
    }
}

