//! `rtfprof diff`'s text (the two sides' values per node, the difference
//! and the ratio, indented by depth) and JSON; the HTML page is in
//! [`super::html`], the folded stacks in [`super::folded`].

use std::fmt::Write;
use std::io;

use super::Report;
use crate::diff::{DiffNode, Metric};
use crate::views::View;

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

/// The nodes a diff lists, as its text and its JSON give them.
pub struct DiffReport<'a> {
    /// The merged tree filtered by `delta` and `min_size`
    /// ([`crate::diff::sides::Compared::listed`]).
    pub listed: &'a DiffNode,
    pub view: View,
    pub metric: Metric,
    pub delta: f64,
    pub min_size: i64,
    pub labels: &'a Labels<'a>,
}

impl Report for DiffReport<'_> {
    fn text(&self) -> String {
        render(self.listed, self.metric, self.delta, self.min_size, self.labels)
    }

    fn write_json(&self, out: &mut dyn io::Write) -> io::Result<()> {
        write_json(self, out).map(drop)
    }
}

/// `{"schema_version": 1, "view", "metric", "delta", "min_size", "left":
/// {"name", "source"}, "right": {…}, "root": node}`, a node being `{"name",
/// "left", "right", "difference", "children"}` (`null` on a side without
/// the node): `schemas/diff.schema.json`.
pub fn write_json<W: io::Write>(report: &DiffReport<'_>, mut out: W) -> io::Result<W> {
    use serde_json::json;
    fn node(n: &DiffNode) -> serde_json::Value {
        json!({
            "name": n.name,
            "left": n.left,
            "right": n.right,
            "difference": n.difference(),
            "children": n.children.iter().map(node).collect::<Vec<_>>(),
        })
    }
    let labels = report.labels;
    let doc = json!({
        "schema_version": 1,
        "view": report.view.as_str(),
        "metric": report.metric.name(),
        "delta": report.delta,
        "min_size": report.min_size,
        "left": {"name": labels.left_name, "source": labels.left_source},
        "right": {"name": labels.right_name, "source": labels.right_source},
        "root": node(report.listed),
    });
    serde_json::to_writer(&mut out, &doc)?;
    out.write_all(b"\n")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Metric, ValueTree, filter, merge};

    fn tree(name: &str, value: i64, children: Vec<ValueTree>) -> ValueTree {
        ValueTree { name: name.into(), value, children }
    }

    #[test]
    fn merges_filters_and_sorts() {
        let left = tree("root", 100, vec![tree("a", 50, vec![]), tree("b", 40, vec![]), tree("only_left", 10, vec![])]);
        let right = tree("root", 60, vec![tree("a", 49, vec![]), tree("b", 10, vec![]), tree("only_right", 1, vec![])]);
        let merged = merge(Some(&left), Some(&right));
        let shown = filter(merged, 0.1, 2, true).unwrap();
        let names: Vec<&str> = shown.children.iter().map(|c| c.name.as_str()).collect();
        // a differs by 2% (hidden), only_right is below min_size.
        assert_eq!(names, ["b", "only_left"]);
        let metric = Metric::parse("bytes").unwrap();
        let labels = Labels { left_name: "left", right_name: "right", left_source: "x", right_source: "y" };
        let text = render(&shown, metric, 0.1, 2, &labels);
        assert!(text.ends_with("root (left:100B right:60B) +40B x1.7\n  b (left:40B right:10B) +30B x4.0\n  only_left (left:10B) +10B \n"), "{text}");
    }
}
