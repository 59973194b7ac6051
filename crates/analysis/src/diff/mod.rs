//! `rtfprof diff`: compare two profiles node by node on one metric.
//!
//! Each side is a tree of values — a view computed from profile files, or a
//! saved tfprof text output. The trees are matched by name level by level.
//! A node is listed when it is at least `min_size` on one side and its
//! relative difference `|left − right| / max(left, right)` is at least
//! `delta`, or when it exists on one side only, or when one of its
//! descendants is listed. Siblings are sorted by absolute difference. The
//! layout follows the community `tfprof_diff.py` scope-file differ:
//!
//! ```text
//! _TFProfRoot (left:6220MB right:2840MB) +3380MB x2.2
//!   optimize (left:4640MB right:1820MB) +2820MB x2.5
//!     while_loop_body (left:353MB) +353MB
//! ```
//!
//! [`sides`] loads the two sides (the command line and the Python module
//! build them from their flags or keywords); `rtfprof::outputs::diff`
//! writes the text and the JSON.

pub mod sides;

use crate::error::{Error, Result};
use crate::inputs::tfprof_text::TextNode;
use crate::show::format;
use crate::show::options::Shown;
use crate::show::{Displayed, text};

/// What is compared, with its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric(Shown);

impl Metric {
    pub const VALID: &'static [&'static str] =
        &["bytes", "peak_bytes", "residual_bytes", "output_bytes", "micros", "accelerator_micros", "cpu_micros", "params", "float_ops", "occurrence"];

    pub fn parse(name: &str) -> Result<Metric> {
        match Shown::parse(name) {
            Some(shown) if Self::VALID.contains(&name) => Ok(Metric(shown)),
            _ => Err(Error::flag("--metric", format!("unknown metric '{name}' (valid: {})", Self::VALID.join(", ")))),
        }
    }

    pub fn name(self) -> &'static str {
        self.0.as_str()
    }

    /// A view node's total for this metric.
    pub fn of(self, node: &Displayed) -> i64 {
        match self.0 {
            Shown::Occurrence => node.totals.run_count,
            shown => text::metric(shown, &node.totals),
        }
    }

    /// The legend column tfprof prints this metric under.
    pub fn column(self) -> &'static str {
        text::column_name(self.0)
    }

    /// Formats a value in the metric's tfprof unit.
    pub fn format(self, value: i64) -> String {
        match self.0 {
            Shown::Bytes | Shown::PeakBytes | Shown::ResidualBytes | Shown::OutputBytes => format::bytes(value),
            Shown::Micros | Shown::AcceleratorMicros | Shown::CpuMicros => format::micros(value),
            _ => format::count(value),
        }
    }
}

/// One side's tree of values.
#[derive(Clone, Debug, Default)]
pub struct ValueTree {
    pub name: String,
    pub value: i64,
    pub children: Vec<ValueTree>,
}

impl ValueTree {
    pub fn from_view(node: &Displayed, metric: Metric) -> ValueTree {
        ValueTree { name: node.name.clone(), value: metric.of(node), children: node.children.iter().map(|c| ValueTree::from_view(c, metric)).collect() }
    }

    /// From a saved tfprof text output, which must show the metric's column.
    pub fn from_text(node: &TextNode, metric: Metric, file: &std::path::Path) -> Result<ValueTree> {
        if !node.totals.contains_key(metric.column()) {
            return Err(Error::input("tfprof text", file, format!("has no '{}' column (save it with --select {})", metric.column(), metric.name())));
        }
        Ok(Self::text_node(node, metric))
    }

    fn text_node(node: &TextNode, metric: Metric) -> ValueTree {
        ValueTree {
            name: node.name.clone(),
            value: node.totals.get(metric.column()).copied().unwrap_or(0),
            children: node.children.iter().map(|c| Self::text_node(c, metric)).collect(),
        }
    }
}

/// A node of the merged tree.
#[derive(Clone, Debug, PartialEq)]
pub struct DiffNode {
    pub name: String,
    pub left: Option<i64>,
    pub right: Option<i64>,
    pub children: Vec<DiffNode>,
}

impl DiffNode {
    pub fn difference(&self) -> i64 {
        self.left.unwrap_or(0) - self.right.unwrap_or(0)
    }

    /// `|left − right| / max(|left|, |right|)`; 0 when both are 0.
    pub fn relative(&self) -> f64 {
        let (l, r) = (self.left.unwrap_or(0) as f64, self.right.unwrap_or(0) as f64);
        let size = l.abs().max(r.abs());
        if size == 0.0 { 0.0 } else { (l - r).abs() / size }
    }
}

/// Merges two trees by child name (left's order, then right-only children).
pub fn merge(left: Option<&ValueTree>, right: Option<&ValueTree>) -> DiffNode {
    let name = left.or(right).map(|t| t.name.clone()).unwrap_or_default();
    let empty = Vec::new();
    let left_children = left.map_or(&empty, |t| &t.children);
    let right_children = right.map_or(&empty, |t| &t.children);
    let mut children: Vec<DiffNode> = left_children.iter().map(|l| merge(Some(l), right_children.iter().find(|r| r.name == l.name))).collect();
    children.extend(right_children.iter().filter(|r| !left_children.iter().any(|l| l.name == r.name)).map(|r| merge(None, Some(r))));
    DiffNode { name, left: left.map(|t| t.value), right: right.map(|t| t.value), children }
}

/// Keeps significant nodes and their ancestors, sorted by absolute difference.
pub fn filter(node: DiffNode, delta: f64, min_size: i64, is_root: bool) -> Option<DiffNode> {
    let mut children: Vec<DiffNode> = node.children.into_iter().filter_map(|c| filter(c, delta, min_size, false)).collect();
    children.sort_by_key(|c| std::cmp::Reverse(c.difference().unsigned_abs()));
    let node = DiffNode { children, ..node };
    let size = node.left.unwrap_or(0).max(node.right.unwrap_or(0));
    let one_sided = node.left.is_none() || node.right.is_none();
    let significant = size >= min_size && (one_sided || node.relative() >= delta);
    (is_root || significant || !node.children.is_empty()).then_some(node)
}

/// Parses a size such as `1MB`, `10ms`, `2.5k` or `1000` in base units.
pub fn parse_size(text: &str) -> Result<i64> {
    let lowered = text.trim().replace("GB", "000MB");
    crate::inputs::tfprof_text::parse_quantity(&lowered)
        .filter(|v| *v >= 0)
        .ok_or_else(|| Error::flag("--min_size", format!("'{text}' is not a size like 1MB, 10ms, 2.5k or 1000")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_tfprof_units() {
        assert_eq!(parse_size("1MB").unwrap(), 1_000_000);
        assert_eq!(parse_size("10ms").unwrap(), 10_000);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("7").unwrap(), 7);
        assert!(parse_size("lots").is_err());
    }
}
