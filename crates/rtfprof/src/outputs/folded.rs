//! `--output folded:outfile=PATH`: collapsed stacks, the input format of
//! flame-graph tools (Brendan Gregg's `flamegraph.pl`, inferno, speedscope).
//!
//! The scope and code views write one line per displayed node,
//! `_TFProfRoot;scope;…;node <value>`: the frames are the displayed path
//! from the root (tfprof's names, in full), the value is the node's total
//! minus its displayed children's totals. So the values add up to the
//! root's total, and nodes the display filters hide (below `--max_depth`,
//! under `--min_*`, matched by `--hide_name_regexes`) count in their nearest
//! displayed ancestor's line. Lines whose value is 0 (or, with odd inputs,
//! negative) are left out.
//!
//! `rtfprof diff` writes the two-column differential form,
//! `stack <left> <right>`, which `inferno-flamegraph` and `flamegraph.pl`
//! draw as a differential flame graph: the whole merged tree, each side's
//! values adding up to its total (`--delta` and `--min_size` only select
//! the lines of the text report).
//!
//! Escaping: consumers split a line at its last space (the count) and the
//! rest at `;`, and inferno trims the line and takes a second number before
//! the count for the other column of a differential graph. So in names,
//! percent-encoded (`%XX`, the character's UTF-8 bytes, so the name can be
//! recovered):
//! - `%`, `;`, `\n` and `\r`, always;
//! - whitespace at either end of a name;
//! - a space followed only by digits and dots (`tail 7`), which inferno
//!   would read as a count.
//!
//! Other spaces stay: they are safe, and code-view names have many
//! (`train.py:12:step (gradient)`).

use std::borrow::Cow;
use std::io::Write;

use crate::diff::DiffNode;
use crate::error::{Error, Result};
use crate::show::options::{Options, Shown};
use crate::show::{Displayed, text};

/// The metrics a folded view can carry: one time or bytes metric.
const METRICS: [Shown; 7] =
    [Shown::Micros, Shown::AcceleratorMicros, Shown::CpuMicros, Shown::Bytes, Shown::PeakBytes, Shown::ResidualBytes, Shown::OutputBytes];

/// Checks `--select` for folded output: exactly one time or bytes metric.
pub fn selected_metric(opts: &Options) -> Result<Shown> {
    let valid = || METRICS.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ");
    let mut selected = opts.select.iter();
    match (selected.next(), selected.next()) {
        (Some(s), None) if METRICS.contains(&s) => Ok(s),
        (Some(s), None) => Err(Error::flag("--select", format!("folded output needs a time or bytes metric, not '{s}' (one of {})", valid()))),
        _ => Err(Error::flag("--select", format!("folded output needs exactly one --select metric (one of {})", valid()))),
    }
}

/// A frame name with the characters that would break a line escaped.
pub fn escape(name: &str) -> Cow<'_, str> {
    let trimmed = name.trim();
    let lead = name.len() - name.trim_start().len();
    let tail = trimmed.len() + lead;
    // A last space that makes the name end like a count.
    let count_space =
        trimmed.rfind(' ').filter(|&at| at + 1 < trimmed.len() && trimmed[at + 1..].bytes().all(|b| b.is_ascii_digit() || b == b'.')).map(|at| at + lead);
    if lead == 0 && tail == name.len() && count_space.is_none() && !name.contains(['%', ';', '\n', '\r']) {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for (at, c) in name.char_indices() {
        let encode = matches!(c, '%' | ';' | '\n' | '\r') || at < lead || at >= tail || Some(at) == count_space;
        if encode {
            let mut utf8 = [0; 4];
            for byte in c.encode_utf8(&mut utf8).bytes() {
                out.push_str(&format!("%{byte:02X}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Writes a displayed tree's stacks, valued by `metric`'s totals.
pub fn write<W: Write>(root: &Displayed, metric: Shown, mut out: W) -> std::io::Result<W> {
    let mut stack = String::new();
    write_node(root, metric, &mut stack, &mut out)?;
    Ok(out)
}

fn write_node(node: &Displayed, metric: Shown, stack: &mut String, out: &mut impl Write) -> std::io::Result<()> {
    let depth = stack.len();
    if depth > 0 {
        stack.push(';');
    }
    stack.push_str(&escape(&node.name));
    let children: i64 = node.children.iter().map(|c| text::metric(metric, &c.totals)).fold(0, i64::wrapping_add);
    let value = text::metric(metric, &node.totals).wrapping_sub(children);
    if value > 0 {
        writeln!(out, "{stack} {value}")?;
    }
    for child in &node.children {
        write_node(child, metric, stack, out)?;
    }
    stack.truncate(depth);
    Ok(())
}

/// Writes a merged diff tree as `stack <left> <right>`.
pub fn write_diff<W: Write>(root: &DiffNode, mut out: W) -> std::io::Result<W> {
    let mut stack = String::new();
    write_diff_node(root, &mut stack, &mut out)?;
    Ok(out)
}

fn write_diff_node(node: &DiffNode, stack: &mut String, out: &mut impl Write) -> std::io::Result<()> {
    let depth = stack.len();
    if depth > 0 {
        stack.push(';');
    }
    stack.push_str(&escape(&node.name));
    // A side's own value: its total minus its children's on that side.
    let own = |side: fn(&DiffNode) -> Option<i64>| {
        let children = node.children.iter().filter_map(side).fold(0, i64::wrapping_add);
        side(node).map_or(0, |total| total.wrapping_sub(children).max(0))
    };
    let (left, right) = (own(|n| n.left), own(|n| n.right));
    if left > 0 || right > 0 {
        writeln!(out, "{stack} {left} {right}")?;
    }
    for child in &node.children {
        write_diff_node(child, stack, out)?;
    }
    stack.truncate(depth);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Metrics;

    fn node(name: &str, micros: i64, children: Vec<Displayed>) -> Displayed {
        Displayed { name: name.into(), totals: Metrics { exec_micros: micros, ..Default::default() }, children, ..Default::default() }
    }

    fn folded(root: &Displayed) -> String {
        String::from_utf8(write(root, Shown::Micros, Vec::new()).unwrap()).unwrap()
    }

    #[test]
    fn values_are_totals_minus_displayed_children_and_add_up() {
        // b's children are not displayed (too deep): b's line carries them.
        let root = node("_TFProfRoot", 100, vec![node("a", 60, vec![node("a/x", 50, vec![])]), node("b", 40, vec![])]);
        let text = folded(&root);
        assert_eq!(text, "_TFProfRoot;a 10\n_TFProfRoot;a;a/x 50\n_TFProfRoot;b 40\n");
        let sum: i64 = text.lines().map(|l| l.rsplit(' ').next().unwrap().parse::<i64>().unwrap()).sum();
        assert_eq!(sum, 100);
    }

    #[test]
    fn names_are_escaped_so_lines_stay_whole() {
        assert_eq!(escape("plain name/with space"), "plain name/with space");
        assert_eq!(escape("f.py:12:step (gradient)"), "f.py:12:step (gradient)");
        assert_eq!(escape("a;b\nc\r%d"), "a%3Bb%0Ac%0D%25d");
        assert_eq!(escape("tail 7"), "tail%207");
        assert_eq!(escape("v 1.5"), "v%201.5");
        assert_eq!(escape("7 tail 7x"), "7 tail 7x");
        assert_eq!(escape(" padded\t "), "%20padded%09%20");
        assert_eq!(escape("\u{a0}nbsp"), "%C2%A0nbsp");
        let root = node("_TFProfRoot", 7, vec![node("x;y 3\nz", 7, vec![])]);
        assert_eq!(folded(&root), "_TFProfRoot;x%3By 3%0Az 7\n");
    }

    #[test]
    fn diffs_have_a_column_per_side() {
        let side = |name: &str, left: Option<i64>, right: Option<i64>, children| DiffNode { name: name.into(), left, right, children };
        let root = side("_TFProfRoot", Some(10), Some(12), vec![side("a", Some(10), Some(4), vec![]), side("b", None, Some(8), vec![])]);
        let text = String::from_utf8(write_diff(&root, Vec::new()).unwrap()).unwrap();
        assert_eq!(text, "_TFProfRoot;a 10 4\n_TFProfRoot;b 0 8\n");
    }

    #[test]
    fn one_time_or_bytes_metric_is_needed() {
        let with = |select: &str| Options { select: crate::show::options::Select::parse(select).unwrap(), ..Options::default() };
        assert_eq!(selected_metric(&with("peak_bytes")).unwrap(), Shown::PeakBytes);
        for bad in ["params", "micros,bytes", ""] {
            assert!(selected_metric(&with(bad)).unwrap_err().to_string().starts_with("--select: folded output needs"), "{bad}");
        }
    }
}
