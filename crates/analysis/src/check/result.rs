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
    /// Changed beyond the threshold, but the test cannot tell it from noise.
    Noise,
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
            Verdict::Unchanged => "unchanged",
            Verdict::TooFewSteps => "too_few_steps",
            Verdict::Appeared => "appeared",
            Verdict::Disappeared => "disappeared",
            Verdict::CountChanged => "count_changed",
        }
    }

    /// Whether outputs should draw attention to it (a warning annotation).
    pub fn is_notable(self) -> bool {
        matches!(self, Verdict::Appeared | Verdict::Disappeared | Verdict::CountChanged | Verdict::Noise | Verdict::TooFewSteps)
    }
}

/// One metric, as judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kind: Kind,
    pub name: String,
    /// `step_time`, `category:NAME`, `memory:ALLOCATOR`, `op:NAME`,
    /// `count:NAME`.
    pub label: String,
    pub baseline_median: f64,
    pub new_median: f64,
    /// (new - baseline) / baseline; `None` where the baseline is 0.
    pub change: Option<f64>,
    /// The one-sided rank test's p-value in the direction of the change
    /// (`None` where no test ran).
    pub p_value: Option<f64>,
    /// The threshold that applied.
    pub threshold: f64,
    pub baseline_steps: usize,
    pub new_steps: usize,
    pub verdict: Verdict,
}

/// The whole check.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    pub baseline: String,
    pub new: String,
    pub options: Options,
    /// Step time first, then the categories, the allocators' peak memory,
    /// ops by change (largest growth first), then op counts.
    pub rows: Vec<Row>,
}

impl Check {
    pub fn regressions(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Regression)
    }

    /// Whether the new profile passes: no metric regressed.
    pub fn passed(&self) -> bool {
        self.regressions().next().is_none()
    }

    /// Whether a side had too few steps for anything to be judged (an
    /// allocator with too few steps of records leaves the rest judged).
    pub fn too_few_steps(&self) -> bool {
        self.rows.iter().any(|r| r.kind == Kind::StepTime && r.verdict == Verdict::TooFewSteps)
    }

    /// One line for the end of every output: the verdict and why.
    pub fn summary(&self) -> String {
        let regressions: Vec<&str> = self.regressions().map(|r| r.label.as_str()).collect();
        if !regressions.is_empty() {
            return format!("FAIL: {} regressed: {}", plural(regressions.len(), "metric"), regressions.join(", "));
        }
        if self.too_few_steps() {
            let (b, n) = self.rows.first().map_or((0, 0), |r| (r.baseline_steps, r.new_steps));
            return format!("PASS: too few steps to judge ({b} and {n}; at least {} a side needed)", self.options.min_steps);
        }
        let improved = self.rows.iter().filter(|r| r.verdict == Verdict::Improvement).count();
        let judged = self.rows.iter().filter(|r| r.kind != Kind::OpCount).count();
        if improved > 0 {
            format!("PASS: no regression in {}; {} improved", plural(judged, "metric"), improved)
        } else {
            format!("PASS: no regression in {}", plural(judged, "metric"))
        }
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}
