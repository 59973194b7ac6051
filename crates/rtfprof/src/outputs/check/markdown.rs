//! `--output markdown:outfile=PATH`: a table for a pull request comment or
//! a job summary (`$GITHUB_STEP_SUMMARY`). Names from the profile are
//! escaped: every ASCII punctuation character gets a backslash (which
//! CommonMark allows for any of them), so `|` cannot split a cell and `*`,
//! `_`, `<`, `` ` `` or `[` cannot format or link; line breaks become spaces.

use super::{amount, p_value, percent};
use crate::check::{BudgetVerdict, Check};

pub fn render(check: &Check) -> String {
    let icon = if check.passed() { "✅" } else { "❌" };
    let mut out = format!("### {icon} rtfprof check\n\n{}\n\n", escape(&check.summary()));
    out.push_str(&format!("Baseline: {}  \nNew: {}\n\n", escape(&check.baseline), escape(&check.new)));
    // With several runs a side, each run's median: what a change must clear.
    let several = check.several_runs();
    out.push_str("| verdict | metric | baseline | new | change | p | threshold |");
    out.push_str(if several { " run medians |\n|---|---|--:|--:|--:|--:|--:|--:|\n" } else { "\n|---|---|--:|--:|--:|--:|--:|\n" });
    for row in &check.rows {
        let unit = row.kind.unit();
        let threshold = if row.kind.is_count() { "-".to_owned() } else { format!("{:.0}%", row.threshold * 100.0) };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |",
            super::text::verdict_word(row.verdict),
            escape(&row.label),
            amount(row.baseline_median, unit),
            amount(row.new_median, unit),
            escape(&percent(row.change)),
            p_value(row.p_value),
            escape(&threshold),
        ));
        if several {
            let (base, new) = super::run_medians(row);
            out.push_str(&format!(" {} → {} |", escape(&base), escape(&new)));
        }
        out.push('\n');
    }
    if !check.budgets.is_empty() {
        out.push_str("\n#### Budgets (the new run's median)\n\n| verdict | metric | new | budget | rule |\n|---|---|--:|--:|---|\n");
        for b in &check.budgets {
            let metric = b.label.as_deref().map_or_else(|| "(no metric matched)".to_owned(), escape);
            let value = b.value.map_or_else(|| "-".to_owned(), |v| amount(v, b.unit));
            let verdict = super::text::budget_word(b.verdict);
            let verdict = if b.verdict == BudgetVerdict::Exceeded { format!("**{verdict}**") } else { verdict.to_owned() };
            out.push_str(&format!("| {verdict} | {metric} | {value} | {} | {} |\n", escape(&b.max_text), escape(&b.rule)));
        }
    }
    if !check.ignored.is_empty() {
        out.push_str("\n#### Ignored by the rules file\n\n| metric | baseline | new | rule |\n|---|--:|--:|---|\n");
        for i in &check.ignored {
            let unit = i.kind.unit();
            let median = |m: Option<f64>| m.map_or_else(|| "-".to_owned(), |v| amount(v, unit));
            out.push_str(&format!("| {} | {} | {} | {} |\n", escape(&i.label), median(i.baseline_median), median(i.new_median), escape(&i.rule)));
        }
    }
    out
}

/// Text that Markdown shows as it is.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\r' | '\n' => out.push(' '),
            c if c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Several runs a side add a column of each run's medians; one run a
    /// side has none.
    #[test]
    fn several_runs_show_their_medians() {
        use super::super::tests::step_run as run;
        use crate::check::{Options, decide};
        let out = super::render(&decide(&[run(0.0), run(10.0)], &[run(14.0)], &Options::default()));
        assert!(out.contains("| threshold | run medians |\n|---|---|--:|--:|--:|--:|--:|--:|\n"), "{out}");
        assert!(out.contains("| noise | step\\_time | 108us | 115us | \\+5\\.8\\% | 0.0010 | 5\\% | 101us 111us → 115us |\n"), "{out}");
        let out = super::render(&decide(&[run(0.0)], &[run(14.0)], &Options::default()));
        assert!(!out.contains("run medians") && out.contains("| threshold |\n"), "{out}");
    }

    #[test]
    fn escapes_every_punctuation() {
        assert_eq!(super::escape("a|b*c_<x>`[l](u)\nz"), r"a\|b\*c\_\<x\>\`\[l\]\(u\) z");
    }
}
