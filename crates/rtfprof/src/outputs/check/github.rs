//! `--output github`: workflow commands that GitHub Actions turns into
//! annotations on the run (`::error title=…::…` for each regression,
//! `::warning title=…::…` for what deserves a look, `::notice` for the
//! verdict), printed on stdout. A rules file's budgets add an `::error`
//! for each metric over budget and a `::warning` for each budget that
//! matched nothing; its ignored metrics one `::notice` that lists them.
//!
//! Text from the profile goes into both parts of a command, so both are
//! escaped as the Actions toolkit does (`escapeData` and `escapeProperty`
//! in @actions/core's command.ts): `%`, `\r` and `\n` everywhere, and `:`
//! and `,` too in properties, where they would end the value.

use super::{amount, p_value, percent};
use crate::check::{BudgetVerdict, Check, Row, Verdict};

pub fn render(check: &Check) -> String {
    let mut out = String::new();
    for row in &check.rows {
        let level = match row.verdict {
            Verdict::Regression => "error",
            v if v.is_notable() => "warning",
            _ => continue,
        };
        out.push_str(&command(level, &format!("rtfprof check: {}", row.label), &message(row, check.options.alpha)));
    }
    for b in &check.budgets {
        match (b.verdict, &b.label, b.value) {
            (BudgetVerdict::Exceeded, Some(label), Some(value)) => {
                let message = format!("{label} is over budget: median {} > {} (rules file budget '{}')", amount(value, b.unit), b.max_text, b.rule);
                out.push_str(&command("error", &format!("rtfprof check: budget {label}"), &message));
            }
            (BudgetVerdict::Unmatched, ..) => {
                let message = format!("no metric of the new run matched the budget '{}' ({}): nothing was judged against it", b.rule, b.max_text);
                out.push_str(&command("warning", &format!("rtfprof check: budget {}", b.rule), &message));
            }
            _ => {}
        }
    }
    if !check.ignored.is_empty() {
        let labels: Vec<&str> = check.ignored.iter().map(|i| i.label.as_str()).collect();
        let message = format!("{} ignored by the rules file (neither judged nor failed): {}", labels.len(), labels.join(", "));
        out.push_str(&command("notice", "rtfprof check: ignored", &message));
    }
    let level = if check.passed() { "notice" } else { "error" };
    out.push_str(&command(level, "rtfprof check", &check.summary()));
    out
}

/// The row's verdict and numbers; with several runs a side, each run's
/// median too (what a change must clear).
fn message(row: &Row, alpha: f64) -> String {
    let unit = row.kind.unit();
    let what = match row.verdict {
        Verdict::Regression => "regressed",
        // Significant, so noise by the runs' spread (several runs a side).
        Verdict::Noise if row.p_value.is_some_and(|p| p < alpha) => "changed, but within the spread of the runs",
        Verdict::Noise => "changed, but not significantly",
        Verdict::StepUnmoved => "grew past its threshold and its test, but the step time did not grow with it",
        Verdict::TooFewSteps => "not judged: too few steps",
        Verdict::Appeared => "appeared",
        Verdict::Disappeared => "disappeared",
        Verdict::CountChanged => "runs a different number of times a step",
        Verdict::Improvement | Verdict::Unchanged => "",
    };
    let mut text = format!("{} {what}: median {} -> {} ({})", row.label, amount(row.baseline_median, unit), amount(row.new_median, unit), percent(row.change));
    if !row.kind.is_count() {
        text.push_str(&format!(", p={}, threshold {:.0}%", p_value(row.p_value), row.threshold * 100.0));
    }
    if row.baseline_run_medians.len() > 1 || row.new_run_medians.len() > 1 {
        let (base, new) = super::run_medians(row);
        text.push_str(&format!(", run medians {base} -> {new}"));
    }
    text
}

/// `::LEVEL title=TITLE::MESSAGE` and a newline.
pub fn command(level: &str, title: &str, message: &str) -> String {
    format!("::{level} title={}::{}\n", escape_property(title), escape_data(message))
}

/// `escapeData`: the message.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// `escapeProperty`: a property's value.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change within the runs' spread is said so, with each run's
    /// median; one run a side has no run medians in its message.
    #[test]
    fn noise_of_the_runs_spread_names_the_runs_medians() {
        use super::super::tests::step_run as run;
        use crate::check::{Options, decide};
        let out = render(&decide(&[run(0.0), run(10.0)], &[run(14.0)], &Options::default()));
        let says =
            "step_time changed, but within the spread of the runs: median 108us -> 115us (+5.8%25), p=0.0010, threshold 5%25, run medians 101us 111us -> 115us";
        assert!(out.contains(says), "{out}");
        let out = render(&decide(&[run(0.0)], &[run(5.0)], &Options::default()));
        assert!(!out.contains("run medians"), "{out}");
    }

    #[test]
    fn escapes_as_the_toolkit() {
        assert_eq!(escape_data("50% a\r\nb::c,d"), "50%25 a%0D%0Ab::c,d");
        assert_eq!(escape_property("op:a,b%\n"), "op%3Aa%2Cb%25%0A");
        assert_eq!(command("error", "t:1", "m\n::x"), "::error title=t%3A1::m%0A::x\n");
    }
}
