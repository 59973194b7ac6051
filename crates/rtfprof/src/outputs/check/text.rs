//! The text table of `rtfprof check` (stdout by default).

use super::{amount, p_value, percent};
use crate::check::{Check, Verdict};

/// One line a judged metric, in the check's order, then the verdict.
/// Metric names are printed as the profile has them, on a line of their
/// own column (the terminal is the reader; nothing is interpreted).
pub fn render(check: &Check) -> String {
    let mut out = format!("rtfprof check: baseline {} vs new {}\n", check.baseline, check.new);
    let o = &check.options;
    out.push_str(&format!(
        "A metric regresses when its median grows by more than its threshold (step time {:.0}%, ops and categories {:.0}%, peak memory {:.0}% and {}) and a one-sided Mann-Whitney U test on the per-step samples gives p < {}.\n\n",
        o.max_regression * 100.0,
        o.max_op_regression * 100.0,
        o.max_memory_regression * 100.0,
        super::amount(o.min_memory_change, "bytes"),
        o.alpha
    ));
    let header = ["verdict", "baseline", "new", "change", "p", "threshold", "steps", "metric"];
    let mut table: Vec<[String; 8]> = vec![header.map(str::to_owned)];
    for row in &check.rows {
        let unit = row.kind.unit();
        let threshold = if row.kind == crate::check::Kind::OpCount { "-".to_owned() } else { format!("{:.0}%", row.threshold * 100.0) };
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
    let widths: Vec<usize> = (0..8).map(|c| table.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for line in &table {
        let cells: Vec<String> = line.iter().enumerate().map(|(c, cell)| if c == 7 { cell.clone() } else { format!("{cell:<w$}", w = widths[c]) }).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&check.summary());
    out.push('\n');
    out
}

/// The verdict as the table shows it: failures in capitals.
pub fn verdict_word(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "REGRESSION",
        Verdict::Improvement => "improved",
        Verdict::Noise => "noise",
        Verdict::Unchanged => "ok",
        Verdict::TooFewSteps => "too few steps",
        Verdict::Appeared => "appeared",
        Verdict::Disappeared => "disappeared",
        Verdict::CountChanged => "count changed",
    }
}
