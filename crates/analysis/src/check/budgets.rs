//! The rules file's budgets: absolute limits on the new run's medians,
//! judged whatever the baseline says. A budget judges every metric of the
//! new run whose label its regex matches and whose unit its limit has (a
//! time: step time, categories, ops, however small their share; an amount
//! of memory: allocators' peaks), ignored metrics left out. Every budget
//! judges each metric it matches (the first-match rule is the thresholds').
//! The median of the steps there are is compared, with no rank test and no
//! `min_steps`: a limit needs no noise model, and a run of 3 steps at 30 ms
//! is over a 20 ms budget.

use super::metrics::Samples;
use super::options::Options;
use super::result::{BudgetRow, BudgetVerdict};
use super::statistics::median;

/// Each budget of `options` on the `new` run: a row per metric matched, or
/// one `Unmatched` row.
pub fn judge(new: &Samples, options: &Options) -> Vec<BudgetRow> {
    let mut rows = Vec::new();
    for budget in &options.budgets {
        let before = rows.len();
        for metric in new.metrics.iter().filter(|m| budget.max.applies_to(m.kind)) {
            let label = metric.label();
            if !budget.metric.matches(&label) || options.ignored_by(&label).is_some() {
                continue;
            }
            let Some(value) = median(&metric.samples) else { continue };
            rows.push(BudgetRow {
                rule: budget.metric.as_str().to_owned(),
                label: Some(label),
                kind: Some(metric.kind),
                max: budget.max.value(),
                unit: budget.max.unit(),
                max_text: budget.text.clone(),
                value: Some(value),
                new_steps: metric.samples.len(),
                verdict: if value > budget.max.value() { BudgetVerdict::Exceeded } else { BudgetVerdict::Within },
            });
        }
        if rows.len() == before {
            rows.push(BudgetRow {
                rule: budget.metric.as_str().to_owned(),
                label: None,
                kind: None,
                max: budget.max.value(),
                unit: budget.max.unit(),
                max_text: budget.text.clone(),
                value: None,
                new_steps: 0,
                verdict: BudgetVerdict::Unmatched,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::super::metrics::{Kind, Metric};
    use super::super::rules::parse;
    use super::*;

    fn run() -> Samples {
        let metric = |kind, name: &str, samples: Vec<f64>| Metric { kind, name: name.into(), samples };
        Samples {
            source: "new".into(),
            steps: vec!["1".into(), "2".into(), "3".into()],
            metrics: vec![
                metric(Kind::StepTime, "step_time", vec![19_000.0, 21_000.0, 22_000.0]),
                metric(Kind::PeakMemory, "cpu", vec![2e9; 3]),
                metric(Kind::OpTime, "aten::conv2d", vec![900.0, 1100.0, 1000.0]),
                metric(Kind::OpTime, "aten::cudnn_convolution", vec![400.0; 3]),
                metric(Kind::OpCount, "aten::conv2d", vec![1.0; 3]),
            ],
        }
    }

    fn options(text: &str) -> Options {
        parse(text).unwrap().into_options("rules.toml".into())
    }

    #[test]
    fn a_budget_judges_the_new_median_of_each_metric_it_matches() {
        let o = options("[[budget]]\nmetric = 'step_time'\nmax = '20ms'\n[[budget]]\nmetric = 'op:aten::.*conv.*'\nmax = '500us'\n");
        let rows = judge(&run(), &o);
        let got: Vec<(Option<&str>, Option<f64>, BudgetVerdict)> = rows.iter().map(|r| (r.label.as_deref(), r.value, r.verdict)).collect();
        assert_eq!(
            got,
            [
                (Some("step_time"), Some(21_000.0), BudgetVerdict::Exceeded),
                (Some("op:aten::conv2d"), Some(1000.0), BudgetVerdict::Exceeded),
                (Some("op:aten::cudnn_convolution"), Some(400.0), BudgetVerdict::Within),
            ]
        );
        assert_eq!(rows[0].max_text, "20ms");
    }

    #[test]
    fn memory_budgets_judge_peaks_only_and_an_unmatched_budget_is_reported() {
        let o = options("[[budget]]\nmetric = '.*'\nmax = '1GB'\n[[budget]]\nmetric = 'memory:gpu'\nmax = '1GB'\n");
        let rows = judge(&run(), &o);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].label.as_deref(), rows[0].verdict), (Some("memory:cpu"), BudgetVerdict::Exceeded));
        assert_eq!((rows[1].label.as_deref(), rows[1].verdict), (None, BudgetVerdict::Unmatched));
    }

    #[test]
    fn ignored_metrics_are_not_budgeted() {
        let o = options("ignore = ['step_time']\n[[budget]]\nmetric = 'step_time'\nmax = '1ms'\n");
        let rows = judge(&run(), &o);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].verdict, BudgetVerdict::Unmatched);
    }
}
