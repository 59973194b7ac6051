//! A side of a check given as several runs of the same program: their
//! samples pooled, for the medians and the rank tests, and each run's
//! median kept, so that the decision can measure a change against the
//! spread between runs ([`super::decision`]).
//!
//! Why runs and not only steps: identical processes differ in single ops
//! by 1.5 to 4 times, in every step of a run alike (where a process's
//! buffers lie, which op TensorFlow's executor runs first), so that the
//! steps of one run sample that process, not the program. With one run a
//! side nothing in the two profiles tells such a process from a slower
//! program; with several, the baseline's runs show how far processes of
//! the same program lie apart (docs/book/src/commands/check.md, "Runs,
//! not steps", has the counts).

use std::collections::HashMap;

use super::metrics::{Kind, Metric, Samples};
use super::statistics::median;

/// One side: its runs' samples pooled, and each run's median of each
/// metric.
#[derive(Clone, Debug)]
pub struct Side {
    /// Every run's samples of a metric one after the other (one run's as
    /// they are); `source` names every run, `steps` are every run's.
    pub pooled: Samples,
    /// Each run's source, in order.
    pub sources: Vec<String>,
    /// Each run's median of each metric, in run order, for the runs that
    /// have it.
    run_medians: HashMap<(Kind, String), Vec<f64>>,
}

impl Side {
    /// Pools `runs` (at least one). A run without an op, kernel or XLA
    /// instruction that another run has did not run it: it adds a 0 for
    /// each of its steps, as a step without it does within a run. A run
    /// without another metric (a category, an allocator, a rank) adds
    /// nothing to it.
    pub fn pool(runs: &[Samples]) -> Side {
        let mut run_medians: HashMap<(Kind, String), Vec<f64>> = HashMap::new();
        if let [only] = runs {
            for m in &only.metrics {
                run_medians.insert((m.kind, m.name.clone()), median(&m.samples).into_iter().collect());
            }
            return Side { pooled: only.clone(), sources: vec![only.source.clone()], run_medians };
        }
        // The metrics in the order the runs first have them.
        let mut order: Vec<(Kind, &str)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for m in runs.iter().flat_map(|r| &r.metrics) {
            if seen.insert((m.kind, m.name.as_str())) {
                order.push((m.kind, &m.name));
            }
        }
        let mut metrics = Vec::with_capacity(order.len());
        for (kind, name) in order {
            let (mut samples, mut medians) = (Vec::new(), Vec::new());
            for run in runs {
                match run.get(kind, name) {
                    Some(m) => {
                        samples.extend_from_slice(&m.samples);
                        medians.extend(median(&m.samples));
                    }
                    None if runs_per_step(kind) => {
                        samples.extend(std::iter::repeat_n(0.0, run.step_times().len()));
                        medians.push(0.0);
                    }
                    None => {}
                }
            }
            run_medians.insert((kind, name.to_owned()), medians);
            metrics.push(Metric { kind, name: name.to_owned(), samples });
        }
        let pooled = Samples {
            source: runs.iter().map(|r| r.source.as_str()).collect::<Vec<_>>().join(", "),
            steps: runs.iter().flat_map(|r| r.steps.iter().cloned()).collect(),
            metrics,
        };
        Side { pooled, sources: runs.iter().map(|r| r.source.clone()).collect(), run_medians }
    }

    /// Each run's median of the metric (empty where no run has it).
    pub fn run_medians(&self, kind: Kind, name: &str) -> &[f64] {
        self.run_medians.get(&(kind, name.to_owned())).map_or(&[], Vec::as_slice)
    }
}

/// Whether a metric of this kind has a sample in every step of a run that
/// ran it (0 where it did not run): an op's, kernel's or instruction's
/// time and count.
fn runs_per_step(kind: Kind) -> bool {
    matches!(kind, Kind::OpTime | Kind::OpCount | Kind::KernelTime | Kind::KernelCount | Kind::HloTime)
}

/// With several runs on a side: whether a change holds from run to run,
/// the fastest new run's median past `threshold` (and `floor`) above the
/// slowest baseline run's where it `grew`, the slowest new run's past it
/// below the fastest baseline run's where it shrank. With one run a side
/// the pooled medians' change is the runs' (and was judged already): true.
pub fn clear_of_the_runs(base: &[f64], new: &[f64], grew: bool, threshold: f64, floor: f64) -> bool {
    if base.len() < 2 && new.len() < 2 {
        return true;
    }
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let (from, to) = if grew { (max(base), min(new)) } else { (min(base), max(new)) };
    if !(from.is_finite() && to.is_finite()) {
        // A side where no run has the metric: nothing to compare.
        return false;
    }
    if from <= 0.0 {
        // From runs that did not run it: any growth clears them.
        return grew && to - from >= floor.max(f64::MIN_POSITIVE);
    }
    let change = (to - from) / from;
    (change >= 0.0) == grew && change.abs() > threshold && (to - from).abs() >= floor
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str, step: &[f64], ops: &[(&str, &[f64])]) -> Samples {
        let mut metrics = vec![Metric { kind: Kind::StepTime, name: "step_time".into(), samples: step.to_vec() }];
        for (name, values) in ops {
            metrics.push(Metric { kind: Kind::OpTime, name: (*name).into(), samples: values.to_vec() });
        }
        Samples { source: source.into(), steps: (0..step.len()).map(|i| i.to_string()).collect(), metrics }
    }

    /// One run is itself, and its medians are its own.
    #[test]
    fn one_run_is_kept_as_it_is() {
        let a = run("a", &[3.0, 1.0, 2.0], &[("dot", &[1.0, 2.0, 3.0])]);
        let side = Side::pool(std::slice::from_ref(&a));
        assert_eq!(side.pooled, a);
        assert_eq!(side.run_medians(Kind::OpTime, "dot"), [2.0]);
        assert_eq!(side.run_medians(Kind::OpTime, "tanh"), [] as [f64; 0]);
    }

    /// Runs are pooled in order; an op a run did not run is 0 in each of
    /// its steps; every run's median is kept.
    #[test]
    fn runs_are_pooled_and_an_op_missing_from_a_run_is_zero() {
        let a = run("a", &[10.0, 12.0], &[("dot", &[4.0, 6.0])]);
        let b = run("b", &[11.0, 13.0, 15.0], &[("dot", &[5.0, 5.0, 8.0]), ("tanh", &[1.0, 1.0, 1.0])]);
        let side = Side::pool(&[a, b]);
        assert_eq!((side.sources.as_slice(), side.pooled.source.as_str()), (["a", "b"].map(String::from).as_slice(), "a, b"));
        assert_eq!(side.pooled.steps.len(), 5);
        assert_eq!(side.pooled.step_times(), [10.0, 12.0, 11.0, 13.0, 15.0]);
        assert_eq!(side.pooled.get(Kind::OpTime, "tanh").unwrap().samples, [0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_eq!(side.run_medians(Kind::OpTime, "dot"), [5.0, 5.0]);
        assert_eq!(side.run_medians(Kind::OpTime, "tanh"), [0.0, 1.0]);
        assert_eq!(side.run_medians(Kind::StepTime, "step_time"), [11.0, 13.0]);
    }

    /// A growth must hold from the slowest baseline run to the fastest new
    /// one; a shrink from the fastest baseline run to the slowest new one.
    #[test]
    fn a_change_must_clear_the_spread_of_the_runs() {
        // One run a side: the pooled change was judged already.
        assert!(clear_of_the_runs(&[10.0], &[10.0], true, 0.05, 0.0));
        // The new runs all above the baseline's slowest by more than 5%.
        assert!(clear_of_the_runs(&[10.0, 12.0], &[13.0, 14.0], true, 0.05, 0.0));
        // One new run within the baseline's spread.
        assert!(!clear_of_the_runs(&[10.0, 12.0], &[12.5, 14.0], true, 0.05, 0.0));
        // The floor (peak memory) applies to the gap.
        assert!(!clear_of_the_runs(&[10.0, 12.0], &[13.0], true, 0.05, 2.0));
        // Shrinks, mirrored.
        assert!(clear_of_the_runs(&[10.0, 12.0], &[8.0, 9.0], false, 0.05, 0.0));
        assert!(!clear_of_the_runs(&[10.0, 12.0], &[8.0, 9.8], false, 0.05, 0.0));
        // An op that no baseline run ran: any growth clears them; nothing
        // shrinks below them.
        assert!(clear_of_the_runs(&[0.0, 0.0], &[3.0, 4.0], true, 0.08, 0.0));
        assert!(!clear_of_the_runs(&[0.0, 2.0], &[0.0, 0.0], false, 0.08, 0.0));
    }
}
