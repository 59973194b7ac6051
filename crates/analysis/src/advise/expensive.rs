//! ExpensiveOperationChecker: the costliest op types, top-level scopes and
//! Python lines, from the op, scope and code views run with fixed options.

use crate::error::Result;
use crate::show::format::micros;
use crate::show::options::{OrderBy, Output, RegexList, Select};
use crate::show::{self, Displayed, Options};
use crate::stats::Stats;
use crate::views::View;

const NAME: &str = "ExpensiveOperationChecker";

fn options(max_depth: i64, min_micros: i64, select: &str) -> Options {
    Options {
        max_depth,
        min_micros,
        order_by: OrderBy::Micros,
        select: Select::parse(select).expect("valid select"),
        output: Output::None,
        trim_name_regexes: RegexList::parse("trim_name_regexes", "").expect("valid"),
        hide_name_regexes: RegexList::parse("hide_name_regexes", "").expect("valid"),
        ..Options::default()
    }
}

fn times(node: &Displayed, totals: bool) -> String {
    let m = if totals { &node.totals } else { &node.own };
    format!("cpu: {}, accelerator: {}, total: {}", micros(m.cpu_micros), micros(m.accelerator_micros), micros(m.exec_micros))
}

/// `from_traces`: the profile was read from traces, whose top nodes are
/// scopes and which can have no op log.
pub fn check(stats: &Stats, from_traces: bool, warnings: &mut Vec<String>) -> Result<Vec<String>> {
    let mut reports = Vec::new();
    if stats.steps.is_empty() {
        // (A trace without executions has no op types to rank, and no run
        // metadata to miss.)
        if !from_traces {
            warnings.push(format!("Missing RunMetadata info. Skip {NAME}"));
            warnings.push(format!("Missing run_meta for {NAME}"));
        }
    } else {
        let root = show::run(stats, View::Op, &options(3, 1, "micros,occurrence"))?.root;
        reports.extend(top_three(&root, |node| {
            let share = 100.0 * node.own.exec_micros as f64 / (root.totals.exec_micros as f64 + 1e-10);
            format!("operation type: {}, {} ({share:.2}%)", node.name, times(node, false))
        }));
    }

    let root = show::run(stats, View::Scope, &options(100, 100, "micros"))?.root;
    // tfprof names a top node's own time: a graph's top nodes are ops. A
    // trace's are name scopes (`jit(step)`, `(transfer)`), whose own time
    // is 0: their totals say where the time goes.
    let scopes = from_traces;
    reports.extend(top_three(&root, |node| format!("graph node: {}, {}", node.name, times(node, scopes))));

    if !stats.has_code_traces {
        // (A trace cannot come with an op log: nothing is missing there.)
        if !from_traces {
            warnings.push(format!("Missing op_log (code traces) for {NAME}"));
        }
        return Ok(reports);
    }
    let root = show::run(stats, View::Code, &options(100, 1, "micros"))?.root;
    // Library frames are usually called once; descend to where user code fans out.
    let mut node = &root;
    while node.children.len() == 1 {
        node = &node.children[0];
    }
    if !node.children.is_empty() {
        let mut lines = Vec::new();
        code_lines(node, 0, &mut lines);
        // (tfprof reports even no line, an empty line; a trace's advice
        // leaves it out.)
        if !lines.is_empty() || !from_traces {
            reports.push(lines.join("\n"));
        }
    }
    Ok(reports)
}

/// `top N <what>` for the first three displayed children, as one report;
/// none when nothing was displayed.
fn top_three(root: &Displayed, what: impl Fn(&Displayed) -> String) -> Option<String> {
    let lines: Vec<String> = root.children.iter().take(3).enumerate().map(|(i, node)| format!("top {} {}", i + 1, what(node))).collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn code_lines(node: &Displayed, depth: usize, lines: &mut Vec<String>) {
    if node.children.len() <= 1 || depth > 3 {
        return;
    }
    for child in node.children.iter().take(3) {
        if child.totals.exec_micros < 1000 {
            continue;
        }
        lines.push(format!("{:indent$}{}, {}", "", child.name, times(child, true), indent = depth * 2));
        code_lines(child, depth + 1, lines);
    }
}
