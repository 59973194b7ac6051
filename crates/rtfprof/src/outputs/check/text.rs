//! The text table of `rtfprof check` (stdout by default).

use super::{amount, p_value, percent};
use crate::check::{BudgetVerdict, Check, Verdict};

/// One line a judged metric, in the check's order; the rules file's
/// budgets and ignored metrics, where it has them; then the verdict.
/// Metric names are printed as the profile has them, on a line of their
/// own column (the terminal is the reader; nothing is interpreted).
pub fn render(check: &Check) -> String {
    let mut out = format!("rtfprof check: baseline {} vs new {}\n", check.baseline, check.new);
    let o = &check.options;
    out.push_str(&format!(
        "A metric regresses when its median grows by more than its threshold (step time {:.0}%, ops and categories {:.0}%, peak memory {:.0}% and {}) and a one-sided Mann-Whitney U test on the per-step samples gives p < {} (Holm-adjusted over the metrics tested); an op, kernel, category or rank's communication besides only if the step time grew with it (else: step unmoved).\n",
        o.max_regression * 100.0,
        o.max_op_regression * 100.0,
        o.max_memory_regression * 100.0,
        super::amount(o.min_memory_change, "bytes"),
        o.alpha
    ));
    if check.several_runs() {
        out.push_str(&format!(
            "With {} and {}, their steps are pooled, and a change must besides hold from run to run: from the slowest baseline run's median to the fastest new run's (else: noise).\n",
            runs(check.baseline_runs.len(), "baseline"),
            runs(check.new_runs.len(), "new"),
        ));
    }
    out.push('\n');
    if let Some(rules) = &o.rules {
        out.push_str(&format!(
            "Rules file {rules}: {} by regex, {}, {} (flags given on the command line override its defaults).\n\n",
            count(o.threshold_rules.len(), "threshold"),
            count(o.budgets.len(), "budget"),
            count(o.ignore.len(), "ignore rule"),
        ));
    }
    let header = ["verdict", "baseline", "new", "change", "p", "threshold", "steps", "metric"];
    let mut table: Vec<[String; 8]> = vec![header.map(str::to_owned)];
    for row in &check.rows {
        let unit = row.kind.unit();
        let threshold = if row.kind.is_count() { "-".to_owned() } else { format!("{:.0}%", row.threshold * 100.0) };
        table.push([
            verdict_word(row.verdict).to_owned(),
            amount(row.baseline_median, unit),
            amount(row.new_median, unit),
            percent(row.change),
            p_value(row.p_value),
            threshold,
            format!("{}/{}", row.baseline_steps, row.new_steps),
            row.label.clone(),
        ]);
    }
    push_table(&mut out, &table);
    if !check.budgets.is_empty() {
        out.push_str("\nBudgets of the rules file (the new run's median):\n");
        let mut table: Vec<[String; 6]> = vec![["verdict", "new", "budget", "steps", "rule", "metric"].map(str::to_owned)];
        for b in &check.budgets {
            table.push([
                budget_word(b.verdict).to_owned(),
                b.value.map_or_else(|| "-".to_owned(), |v| amount(v, b.unit)),
                b.max_text.clone(),
                if b.verdict == BudgetVerdict::Unmatched { "-".to_owned() } else { b.new_steps.to_string() },
                b.rule.clone(),
                b.label.clone().unwrap_or_else(|| "(no metric matched)".to_owned()),
            ]);
        }
        push_table(&mut out, &table);
    }
    if !check.ignored.is_empty() {
        out.push_str("\nIgnored by the rules file (neither judged nor failed):\n");
        let mut table: Vec<[String; 4]> = vec![["baseline", "new", "rule", "metric"].map(str::to_owned)];
        for i in &check.ignored {
            let unit = i.kind.unit();
            let median = |m: Option<f64>| m.map_or_else(|| "-".to_owned(), |v| amount(v, unit));
            table.push([median(i.baseline_median), median(i.new_median), i.rule.clone(), i.label.clone()]);
        }
        push_table(&mut out, &table);
    }
    out.push('\n');
    out.push_str(&check.summary());
    out.push('\n');
    out
}

/// Rows of cells, padded to their columns' widths but the last (a
/// metric's name, as long as it is).
fn push_table<const N: usize>(out: &mut String, table: &[[String; N]]) {
    let widths: Vec<usize> = (0..N).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for line in table {
        let cells: Vec<String> =
            line.iter().enumerate().map(|(c, cell)| if c == N - 1 { cell.clone() } else { format!("{cell:<w$}", w = widths[c]) }).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
}

fn count(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// A budget's verdict as the tables show it: failures in capitals.
pub fn budget_word(verdict: BudgetVerdict) -> &'static str {
    match verdict {
        BudgetVerdict::Within => "ok",
        BudgetVerdict::Exceeded => "OVER BUDGET",
        BudgetVerdict::Unmatched => "no match",
    }
}

/// The verdict as the table shows it: failures in capitals.
pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "REGRESSION",
        Verdict::Improvement => "improved",
        Verdict::Noise => "noise",
        Verdict::StepUnmoved => "step unmoved",
        Verdict::Unchanged => "ok",
        Verdict::TooFewSteps => "too few steps",
        Verdict::Appeared => "appeared",
        Verdict::Disappeared => "disappeared",
        Verdict::CountChanged => "count changed",
    }
}

/// `3 baseline runs`, `1 new run`.
fn runs(n: usize, side: &str) -> String {
    if n == 1 { format!("1 {side} run") } else { format!("{n} {side} runs") }
}
