//! Showing the op view: one row per op type, with totals that accumulate down
//! the sorted list (`TFOp::ShowInternal`, `TFOp::FormatNode`).

use super::filter::{self, Thresholded};
use super::options::{Options, Shown};
use super::{Displayed, format, order, text};
use crate::stats::{Metrics, Snapshot, Stats};
use crate::views::View;
use crate::views::op::OpGroup;

struct Row<'a> {
    group: &'a OpGroup,
    snap: Snapshot,
    totals: Metrics,
    /// Runs of the selected nodes, each counted once (the occurrence column).
    runs: i64,
}

/// Returns the text after `Profile:\n` and the displayed rows (as the
/// root's children).
pub fn op_view(stats: &Stats, groups: &[OpGroup], opts: &Options) -> (String, Displayed) {
    let mut rows: Vec<Row<'_>> = groups
        .iter()
        .map(|group| {
            let snap = Snapshot::take(stats, &group.nodes, opts.step, &opts.account_type_regexes);
            let runs = snap.graph_nodes.iter().map(|&id| stats.nodes[id].run_count(opts.step)).sum();
            Row { group, totals: snap.own, snap, runs }
        })
        .collect();
    if rows.is_empty() {
        // Only the (empty) root row, without a legend.
        let group = OpGroup { name: crate::views::ROOT_NAME.into(), nodes: vec![] };
        let root = Row { group: &group, snap: Snapshot::default(), totals: Metrics::default(), runs: 0 };
        return (format_row(&root, &Metrics::default(), opts), Displayed { name: root.group.name.clone(), ..Default::default() });
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order::stable_sort(&mut order, opts.order_by, |i| order::SortKey {
        name: &rows[i].group.name,
        totals: rows[i].totals,
        occurrence: Some(rows[i].snap.graph_nodes.len()),
    });
    // Totals accumulate from the bottom of the list up, over accounted rows.
    let accounted: Vec<usize> = order.into_iter().filter(|&i| rows[i].snap.accounted).collect();
    accumulate(&mut rows, &accounted);
    let mut root_totals = accounted.first().map_or_else(Metrics::default, |&i| rows[i].totals);

    let start = if opts.start_name_regexes.is_empty() || opts.start_name_regexes.is_match_all() {
        0
    } else {
        accounted.iter().position(|&i| opts.start_name_regexes.matches(&rows[i].group.name)).unwrap_or(accounted.len())
    };
    let mut shown = Vec::new();
    for (depth, &i) in accounted[start..].iter().enumerate() {
        let name = &rows[i].group.name;
        if filter::is_trimmed(opts, name) || depth as i64 > opts.max_depth {
            break;
        }
        let enough_nodes = opts.min_occurrence <= rows[i].snap.graph_nodes.len() as i64;
        if enough_nodes && filter::should_show(opts, name, Thresholded::multi_node(&rows[i].totals), depth as i64) {
            shown.push(i);
        }
    }
    if opts.account_displayed_op_only {
        for &i in &shown {
            rows[i].totals = rows[i].snap.own;
        }
        accumulate(&mut rows, &shown);
        root_totals = shown.first().map_or_else(Metrics::default, |&i| rows[i].totals);
    }
    let mut out = text::legend(View::Op, &opts.select);
    // The root's index follows the groups' (see show::per_step).
    let mut root = Displayed { name: crate::views::ROOT_NAME.into(), totals: root_totals, index: groups.len(), ..Default::default() };
    for &i in &shown {
        let row = &rows[i];
        root.children.push(Displayed {
            name: row.group.name.clone(),
            own: row.snap.own,
            totals: row.totals,
            definitions: 0,
            accounted: true,
            graph_nodes: row.snap.graph_nodes.clone(),
            children: Vec::new(),
            index: i,
        });
        out.push_str(&format_row(&rows[i], &root_totals, opts));
        if opts.select.has(Shown::InputShapes) {
            let block = input_shapes_block(stats, &rows[i].snap, opts.step);
            if !block.is_empty() {
                out.push('\n');
                out.push_str(&block);
                out.push_str("\n\n");
            }
        }
    }
    (out, root)
}

/// Each row in `list` (top to bottom) gets the totals of every row below it.
fn accumulate(rows: &mut [Row<'_>], list: &[usize]) {
    for pair in (0..list.len().saturating_sub(1)).rev() {
        let below = rows[list[pair + 1]].totals;
        rows[list[pair]].totals += below;
    }
}

/// `value (cum%, self%)` right-aligned in 30 columns.
fn column(value: String, cumulative: i64, own: i64, root_total: i64, show_percent: bool) -> String {
    let (cum, pct) = if show_percent { (100.0 * cumulative as f64 / root_total as f64, 100.0 * own as f64 / root_total as f64) } else { (0.0, 0.0) };
    format!("{:>30}", format!("{value} ({}%, {}%)", format::percent(cum), format::percent(pct)))
}

fn format_row(row: &Row<'_>, root: &Metrics, opts: &Options) -> String {
    let (own, t) = (&row.snap.own, &row.totals);
    let mut attrs: Vec<String> = Vec::new();
    for shown in text::MEMORY_COLUMNS.into_iter().filter(|&s| opts.select.has(s)) {
        let o = text::metric(shown, own);
        // Memory percentages are zeroed when the row's own bytes are 0.
        attrs.push(column(format::bytes(o), text::metric(shown, t), o, text::metric(shown, root), o > 0));
    }
    for shown in text::time_columns(&opts.select) {
        let (o, c) = (text::metric(shown, own), text::metric(shown, t));
        // Time percentages are zeroed when the cumulative time is 0.
        attrs.push(column(format::micros(o), c, o, text::metric(shown, root), c > 0));
    }
    if opts.select.has(Shown::Params) {
        let value = format!("{} params", format::count(own.parameters));
        attrs.push(column(value, t.parameters, own.parameters, root.parameters, t.parameters > 0));
    }
    if opts.select.has(Shown::FloatOps) {
        let value = format!("{} float_ops", format::count(own.float_ops));
        attrs.push(column(value, t.float_ops, own.float_ops, root.float_ops, t.float_ops > 0));
    }
    if opts.select.has(Shown::Device) {
        attrs.push(text::join(&row.snap.devices));
    }
    if opts.select.has(Shown::OpTypes) {
        attrs.push(text::join(&row.snap.op_types));
    }
    if opts.select.has(Shown::Occurrence) {
        attrs.push(format!("{:>10}", format!("{}|{}", row.runs, row.snap.graph_nodes.len())));
    }
    format!("{:<25}{}\n", row.group.name, attrs.join(", "))
}

/// The `input_type: …` lines of an op row: one per distinct input-shape
/// signature, most runs first (`TFMultiShow::FormatInputShapes`).
fn input_shapes_block(stats: &Stats, snap: &Snapshot, step: i64) -> String {
    // signature → (nodes, runs, exec micros), in signature order.
    let mut by_signature: std::collections::BTreeMap<String, (i64, i64, i64)> = Default::default();
    for &id in &snap.graph_nodes {
        let node = &stats.nodes[id];
        let shapes: Vec<String> =
            stats.input_shapes(node).iter().map(|(i, s)| if s.is_empty() { format!("{i}:unknown") } else { format!("{i}:{}", format::shape(s)) }).collect();
        let entry = by_signature.entry(format!("input_type: {}", shapes.join(",\t"))).or_default();
        // int64 sums wrap, as in tfprof.
        entry.0 += 1;
        entry.1 = entry.1.wrapping_add(node.run_count(step));
        entry.2 = entry.2.wrapping_add(node.exec_micros(step));
    }
    let mut entries: Vec<(String, (i64, i64, i64))> = by_signature.into_iter().collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.1.1));
    entries
        .iter()
        .map(|(sig, (nodes, runs, micros))| format!("{sig}\t(run*{runs}|defined*{nodes})\texec_time: {}", format::micros(*micros)))
        .collect::<Vec<_>>()
        .join("\n")
}
