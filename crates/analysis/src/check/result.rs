//! The outcome of a check: one row a metric judged, and the verdict.

use super::metrics::Kind;
use super::options::Options;

/// What was concluded about one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Grew beyond its threshold, and the rank test says it grew: fails.
    Regression,
    /// Shrank beyond the threshold, significantly: reported, never fails.
    Improvement,
    /// Changed beyond the threshold, but the test cannot tell it from
    /// noise, or (several runs a side) the runs' medians overlap within the
    /// threshold: processes of the same program lie that far apart.
    Noise,
    /// A part of the step (op, kernel, category, rank's communication)
    /// grew past its threshold and its own test, but the step time did not
    /// move with it (`moves_the_step`): reported, never fails. Not `Noise`:
    /// the growth is real in these runs, whether a change of the program
    /// (a small op doubled) or of the process (identical processes differ
    /// so in single ops); it is too small, or too well hidden, to cost the
    /// step.
    StepUnmoved,
    /// Within the threshold.
    Unchanged,
    /// A side has fewer steps than `min_steps`: not judged.
    TooFewSteps,
    /// Op counts: the op runs only in the new profile.
    Appeared,
    /// Op counts: the op runs only in the baseline.
    Disappeared,
    /// Op counts: it runs a different number of times a step.
    CountChanged,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Improvement => "improvement",
            Verdict::Noise => "noise",
            Verdict::StepUnmoved => "step_unmoved",
            Verdict::Unchanged => "unchanged",
            Verdict::TooFewSteps => "too_few_steps",
            Verdict::Appeared => "appeared",
            Verdict::Disappeared => "disappeared",
            Verdict::CountChanged => "count_changed",
        }
    }

    /// Whether outputs should draw attention to it (a warning annotation).
    pub fn is_notable(self) -> bool {
        matches!(self, Verdict::Appeared | Verdict::Disappeared | Verdict::CountChanged | Verdict::Noise | Verdict::StepUnmoved | Verdict::TooFewSteps)
    }
}

/// One metric, as judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kind: Kind,
    pub name: String,
    /// As [`super::metrics::Metric::label`] writes it: `step_time`,
    /// `category:NAME`, `memory:ALLOCATOR`, `op:NAME`, `count:NAME`, ….
    pub label: String,
    pub baseline_median: f64,
    pub new_median: f64,
    /// (new - baseline) / baseline; `None` where the baseline is 0.
    pub change: Option<f64>,
    /// The one-sided rank test's p-value in the direction of the change,
    /// Holm-adjusted over the rows tested (`None` where no test ran).
    pub p_value: Option<f64>,
    /// The threshold that applied.
    pub threshold: f64,
    pub baseline_steps: usize,
    pub new_steps: usize,
    /// Each run's median, for the runs of the side that have the metric
    /// (one run: its median).
    pub baseline_run_medians: Vec<f64>,
    pub new_run_medians: Vec<f64>,
    pub verdict: Verdict,
}

/// What was concluded about one budget of the rules file and one metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetVerdict {
    /// The new run's median is within the budget.
    Within,
    /// Above it: fails, whatever the baseline.
    Exceeded,
    /// No metric of the new run matched the budget's regex (or those that
    /// did are ignored): reported, so that a misspelt budget is seen.
    Unmatched,
}

impl BudgetVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetVerdict::Within => "within",
            BudgetVerdict::Exceeded => "exceeded",
            BudgetVerdict::Unmatched => "unmatched",
        }
    }
}

/// One budget of the rules file on one metric of the new run (or on none,
/// when nothing matched it).
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetRow {
    /// The budget's regex, as the file has it.
    pub rule: String,
    /// The metric judged (`None` when unmatched).
    pub label: Option<String>,
    pub kind: Option<Kind>,
    /// The budget, in the unit of the metrics it judges.
    pub max: f64,
    /// `us` or `bytes`.
    pub unit: &'static str,
    /// The budget as the file writes it (`20ms`).
    pub max_text: String,
    /// The new run's median (`None` when unmatched).
    pub value: Option<f64>,
    pub new_steps: usize,
    pub verdict: BudgetVerdict,
}

/// A metric the rules file ignores: shown, neither judged nor failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Ignored {
    pub kind: Kind,
    pub name: String,
    pub label: String,
    /// The ignore regex that matched, as the file has it.
    pub rule: String,
    /// The medians, where the side has the metric.
    pub baseline_median: Option<f64>,
    pub new_median: Option<f64>,
}

/// The whole check.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The baseline's runs as one name (their sources, comma-separated).
    pub baseline: String,
    pub new: String,
    /// Each run's source, in the order given.
    pub baseline_runs: Vec<String>,
    pub new_runs: Vec<String>,
    pub options: Options,
    /// Step time first, then the categories, the allocators' peak memory,
    /// ops by change (largest growth first), then op counts.
    pub rows: Vec<Row>,
    /// The rules file's budgets, in its order, a row per metric each
    /// matched.
    pub budgets: Vec<BudgetRow>,
    /// The metrics the rules file ignores that would otherwise have been
    /// rows, by kind and name.
    pub ignored: Vec<Ignored>,
}

impl Check {
    /// Whether a side has several runs (outputs then show each run's
    /// medians).
    pub fn several_runs(&self) -> bool {
        self.baseline_runs.len() > 1 || self.new_runs.len() > 1
    }

    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Regression)
    }

    pub fn exceeded(&self) -> impl Iterator<Item = &BudgetRow> {
        self.budgets.iter().filter(|b| b.verdict == BudgetVerdict::Exceeded)
    }

    /// Whether the new profile passes: no metric regressed, no budget
    /// exceeded.
    pub fn passed(&self) -> bool {
        self.regressions().next().is_none() && self.exceeded().next().is_none()
    }

    /// Whether a side had too few steps for anything to be judged (an
    /// allocator with too few steps of records leaves the rest judged).
    pub fn too_few_steps(&self) -> bool {
        self.rows.iter().any(|r| r.kind == Kind::StepTime && r.verdict == Verdict::TooFewSteps)
    }

    /// One line for the end of every output: the verdict and why (with
    /// the budgets and ignored metrics, where a rules file has them).
    pub fn summary(&self) -> String {
        let mut line = self.verdict_line();
        let within = self.budgets.iter().filter(|b| b.verdict == BudgetVerdict::Within).count();
        if within > 0 {
            line.push_str(&format!("; {} within budget", plural(within, "metric")));
        }
        if !self.ignored.is_empty() {
            line.push_str(&format!("; {} ignored", plural(self.ignored.len(), "metric")));
        }
        line
    }

    fn verdict_line(&self) -> String {
        let regressions: Vec<&str> = self.regressions().map(|r| r.label.as_str()).collect();
        let exceeded: Vec<String> =
            self.exceeded().map(|b| format!("{} ({} > {})", b.label.as_deref().unwrap_or(""), amount(b.value.unwrap_or(0.0), b.unit), b.max_text)).collect();
        if !regressions.is_empty() || !exceeded.is_empty() {
            let mut parts = Vec::new();
            if !regressions.is_empty() {
                parts.push(format!("{} regressed: {}", plural(regressions.len(), "metric"), regressions.join(", ")));
            }
            if !exceeded.is_empty() {
                parts.push(format!("{} over budget: {}", plural(exceeded.len(), "metric"), exceeded.join(", ")));
            }
            return format!("FAIL: {}", parts.join("; "));
        }
        if self.too_few_steps() {
            let (b, n) = self.rows.first().map_or((0, 0), |r| (r.baseline_steps, r.new_steps));
            return format!("PASS: too few steps to judge ({b} and {n}; at least {} a side needed)", self.options.min_steps);
        }
        let improved = self.rows.iter().filter(|r| r.verdict == Verdict::Improvement).count();
        let judged = self.rows.iter().filter(|r| !r.kind.is_count()).count();
        if improved > 0 {
            format!("PASS: no regression in {}; {} improved", plural(judged, "metric"), improved)
        } else {
            format!("PASS: no regression in {}", plural(judged, "metric"))
        }
    }
}

/// A median in its unit, as every output shows it: microseconds as
/// µs/ms/s, bytes as B/KB/MB/GB (powers of 1000, as `rtfprof memory` shows
/// them), counts as numbers.
pub fn amount(value: f64, unit: &str) -> String {
    if unit == "count" {
        return format!("{value}");
    }
    if unit == "bytes" {
        return match value.abs() {
            v if v >= 1e9 => format!("{:.2}GB", value / 1e9),
            v if v >= 1e6 => format!("{:.2}MB", value / 1e6),
            v if v >= 1e3 => format!("{:.2}KB", value / 1e3),
            _ => format!("{value:.0}B"),
        };
    }
    if value >= 1e6 {
        format!("{:.3}s", value / 1e6)
    } else if value >= 1e3 {
        format!("{:.2}ms", value / 1e3)
    } else {
        format!("{value:.0}us")
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}
