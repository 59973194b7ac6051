//! The decision: which metrics are judged, and each one's verdict.
//!
//! A metric regresses only if both hold: (a) its median grew by more than
//! its threshold, and (b) a one-sided Mann-Whitney U test on the two runs'
//! per-step samples rejects "no change" at `alpha`, its p-value adjusted
//! by Holm's method over every metric tested in the check
//! ([`super::statistics::holm`]: tens of metrics are tested at once); an
//! allocator's peak memory must besides grow by `min_memory_change` bytes.
//! (a) alone fails on noise whenever a run happens to be slow; (b) alone
//! fails on changes too small to matter once the runs are long enough.
//! An op, kernel, category or rank's communication must besides have
//! moved the step
//! (`moves_the_step`): the step time must show a growth of its own (its
//! one-sided rank test, unadjusted, at [`STEP_ALPHA`]), at least
//! [`STEP_SHOWS`] of the op's growth, and the op's growth alone must be
//! at least the step's threshold of the baseline's step time
//! (`--min_part_growth` where given). Identical
//! processes differ in single ops (where a process's buffers lie, which op
//! TensorFlow's executor runs first) by more than the op thresholds and
//! with every step of a run alike, so that the op's own test is no
//! defence; what such an op costs is most often lost in the step's noise.
//! Such a row is `step_unmoved` ([`Verdict::StepUnmoved`]), not `noise`:
//! its growth is real in these two runs, whether the program's or the
//! process's, and it did not cost the step. Improvements are
//! reported and never fail; so are ops that appear or disappear (new code
//! adds ops on purpose; what they cost shows in the step time).
//!
//! A rules file adds to this ([`super::rules`]): thresholds by regex
//! ([`Options::threshold`]), metrics to ignore (left out of the rows and
//! listed as ignored), and budgets ([`super::budgets`]).

use super::metrics::{Kind, Metric, Samples};
use super::options::Options;
use super::result::{Check, Ignored, Row, Verdict};
use super::runs::{Side, clear_of_the_runs};
use super::statistics::{holm, mann_whitney_greater, median};

/// Compares the `new` run (or runs) with the `baseline` run (or runs): each
/// side at least one run of the program, pooled ([`Side::pool`]).
pub fn decide(baseline: &[Samples], new: &[Samples], options: &Options) -> Check {
    let (base_side, new_side) = (Side::pool(baseline), Side::pool(new));
    let sides = Sides { base: &base_side, new: &new_side };
    let (baseline, new) = (&base_side.pooled, &new_side.pooled);
    let step = StepMoved::new(baseline.step_times(), new.step_times(), options);
    let mut rows = Vec::new();
    // Ops, kernels and XLA instructions: ranked below.
    let mut ranked = Vec::new();
    let mut count_rows = Vec::new();
    let mut ignored = Vec::new();
    for (kind, name) in labels(baseline, new) {
        let (b, n) = (baseline.get(kind, &name), new.get(kind, &name));
        let row = match kind {
            Kind::StepTime => Some(judge(kind, &name, b, n, options.max_regression, options, sides)),
            // An allocator on one side only (a baseline saved without
            // memory, a trace recorded without it) is not judged.
            Kind::PeakMemory => (b.is_some() && n.is_some()).then(|| judge(kind, &name, b, n, options.max_memory_regression, options, sides)),
            Kind::OpCount | Kind::KernelCount => count_row(kind, &name, b, n, sides),
            // The parts of the step (`Kind::is_part_of_step`).
            _ => {
                let (bm, nm) = (median_of(b), median_of(n));
                let large = bm >= options.min_share * step.base_median || nm >= options.min_share * step.new_median;
                // An op or kernel on one side only is reported by its
                // count; an instruction on one side only (XLA renumbers
                // fusions when the program changes) is not judged.
                let counted = matches!(kind, Kind::OpTime | Kind::KernelTime | Kind::HloTime);
                let on_both = !counted || (ran(b) && ran(n));
                (large && on_both).then(|| judge(kind, &name, b, n, options.max_op_regression, options, sides))
            }
        };
        // An ignored metric: what would have been its row is listed, with
        // no verdict.
        if let Some(row) = &row
            && let Some(rule) = options.ignored_by(&row.label)
        {
            let median = |m: Option<&Metric>| m.and_then(|m| median(&m.samples));
            let entry = Ignored {
                kind,
                name: name.clone(),
                label: row.label.clone(),
                rule: rule.as_str().to_owned(),
                baseline_median: median(b),
                new_median: median(n),
            };
            ignored.push(entry);
            continue;
        }
        match (kind, row) {
            (_, None) => {}
            (Kind::OpTime | Kind::KernelTime | Kind::HloTime, Some(row)) => ranked.push(row),
            (Kind::OpCount | Kind::KernelCount, Some(row)) => count_rows.push(row),
            (_, Some(row)) => rows.push(row),
        }
    }
    // Ops, then kernels, then instructions (`Kind`'s order), each the
    // largest growth first: the op that slowed the step leads.
    ranked.sort_by(|a, b| a.kind.cmp(&b.kind).then_with(|| b.change.unwrap_or(0.0).total_cmp(&a.change.unwrap_or(0.0))).then_with(|| a.name.cmp(&b.name)));
    rows.extend(ranked);
    adjust_for_multiple_tests(&mut rows, options.alpha);
    for row in rows.iter_mut().filter(|r| r.kind.is_part_of_step() && r.verdict == Verdict::Regression) {
        if !moves_the_step(row.new_median - row.baseline_median, &step) {
            row.verdict = Verdict::StepUnmoved;
        }
    }
    rows.extend(count_rows);
    let budgets = super::budgets::judge(new, options);
    let (baseline, new) = (baseline.source.clone(), new.source.clone());
    Check { baseline, new, baseline_runs: base_side.sources, new_runs: new_side.sources, options: options.clone(), rows, budgets, ignored }
}

/// An op's or category's growth is a regression only if the step time's
/// median grew by at least this part of it (in time): an op whose time
/// grows while the step's does not was overlapped, waiting, not slower
/// work. TensorFlow's executor shows it between identical runs: on the
/// testdata/check program, `AssignSubVariableOp_1` took 74 µs in some
/// processes and 3.5-7.2 ms in others, in steps of the same 11-14 ms
/// (docs/book/src/commands/check.md, "Defaults"). Half, not all: the step
/// time's median and the op's need not move by exactly the same amount.
pub const STEP_SHOWS: f64 = 0.5;

/// The step time's side of an op's regression: the step must show a
/// growth of its own at this level, by its one-sided Mann-Whitney test on
/// the two runs' step times, unadjusted (the condition only takes
/// failures away from the metrics the adjusted tests found, so the
/// check's chance of failing identical runs stays below `alpha`).
///
/// Why: in fresh sets of identical runs (8 processes a set, 56 checks,
/// recorded interleaved as `tools/check/gen_runs.py` records them), single
/// ops took 1.5 to 4 times as long in some processes as in others, in
/// every step (PyTorch's `aten::mul`, JAX's layer-2 transpose, TF2's
/// `AssignSubVariableOp_1`), so that their own test was sure of it
/// (p ~ 0.001), while the step's median, noisier, moved by a few percent
/// either way. A real change of one op shows in the step: the committed
/// variants' step tests give p = 1e-7 to 0.014 (TF2's wider layer, 10
/// steps a side, is the weakest), hence 0.05 and not `alpha`
/// (docs/book/src/commands/check.md, "Defaults", has the counts).
pub const STEP_ALPHA: f64 = 0.05;

/// What [`moves_the_step`] needs of the step time, computed once a check.
struct StepMoved {
    base_median: f64,
    new_median: f64,
    /// The step time's unadjusted one-sided p-value (None: a side has no
    /// steps).
    p_value: Option<f64>,
    /// The least growth of a part, as a share of the baseline's median
    /// step time (`--min_part_growth`, else the step time's threshold).
    min_part_growth: f64,
}

impl StepMoved {
    fn new(base: &[f64], new: &[f64], options: &Options) -> StepMoved {
        StepMoved {
            base_median: median(base).unwrap_or(0.0),
            new_median: median(new).unwrap_or(0.0),
            p_value: mann_whitney_greater(new, base),
            min_part_growth: options.min_part_growth.unwrap_or_else(|| options.threshold("step_time", options.max_regression)),
        }
    }
}

/// Whether an op or category whose median grew by `growth` (its own test
/// and threshold passed) moved the step, as the module doc says: the step
/// grew significantly ([`STEP_ALPHA`]), by at least [`STEP_SHOWS`] of
/// `growth`, and `growth` alone is at least the step's threshold of the
/// baseline's step time, so that the op's growth alone would fail the
/// step (or `--min_part_growth` of it, where given). (A 16 µs growth of
/// TF2's `mul_1`, 0.4% of a 4.3 ms step, failed identical runs; the widened layers' matrix multiplications grew by
/// 6.5-18% of the step: PyTorch's layer-2 `aten::mm` the least.)
fn moves_the_step(growth: f64, step: &StepMoved) -> bool {
    let step_growth = step.new_median - step.base_median;
    let significant = step.p_value.is_some_and(|p| p < STEP_ALPHA);
    significant && step_growth >= STEP_SHOWS * growth && growth >= step.min_part_growth * step.base_median
}

/// Every (kind, name) either side has, step time first, then in kind and
/// name order.
fn labels(baseline: &Samples, new: &Samples) -> Vec<(Kind, String)> {
    let mut all: Vec<(Kind, String)> = baseline.metrics.iter().chain(&new.metrics).map(|m| (m.kind, m.name.clone())).collect();
    all.sort();
    all.dedup();
    all
}

fn median_of(metric: Option<&Metric>) -> f64 {
    metric.and_then(|m| median(&m.samples)).unwrap_or(0.0)
}

/// Whether the metric's op ran in any step.
fn ran(metric: Option<&Metric>) -> bool {
    metric.is_some_and(|m| m.samples.iter().any(|&v| v > 0.0))
}

fn label(kind: Kind, name: &str) -> String {
    Metric { kind, name: name.to_owned(), samples: Vec::new() }.label()
}

/// The two sides' runs, for each run's medians.
#[derive(Clone, Copy)]
struct Sides<'a> {
    base: &'a Side,
    new: &'a Side,
}

impl Sides<'_> {
    fn run_medians(&self, kind: Kind, name: &str) -> (Vec<f64>, Vec<f64>) {
        (self.base.run_medians(kind, name).to_vec(), self.new.run_medians(kind, name).to_vec())
    }
}

/// The verdict on one time metric, as the module doc says; with several
/// runs on a side, the change must besides hold from run to run
/// ([`clear_of_the_runs`]), or it is noise.
fn judge(kind: Kind, name: &str, base: Option<&Metric>, new: Option<&Metric>, default_threshold: f64, options: &Options, sides: Sides) -> Row {
    let label = label(kind, name);
    let threshold = options.threshold(&label, default_threshold);
    let empty: &[f64] = &[];
    let (b, n) = (base.map_or(empty, |m| &m.samples), new.map_or(empty, |m| &m.samples));
    let (bm, nm) = (median(b).unwrap_or(0.0), median(n).unwrap_or(0.0));
    let change = (bm > 0.0).then(|| (nm - bm) / bm);
    // Peak memory: a growth below the absolute floor is within the threshold.
    let floor = if kind == Kind::PeakMemory { options.min_memory_change } else { 0.0 };
    let (baseline_run_medians, new_run_medians) = sides.run_medians(kind, name);
    let mut row = Row {
        kind,
        name: name.to_owned(),
        label,
        baseline_median: bm,
        new_median: nm,
        change,
        p_value: None,
        threshold,
        baseline_steps: b.len(),
        new_steps: n.len(),
        baseline_run_medians,
        new_run_medians,
        verdict: Verdict::Unchanged,
    };
    if b.len() < options.min_steps || n.len() < options.min_steps {
        row.verdict = Verdict::TooFewSteps;
        return row;
    }
    let Some(change) = change else { return row };
    let grew = change >= 0.0;
    row.p_value = if grew { mann_whitney_greater(n, b) } else { mann_whitney_greater(b, n) };
    let significant = row.p_value.is_some_and(|p| p < options.alpha);
    let past_threshold = change.abs() > threshold && (nm - bm).abs() >= floor;
    let beyond_noise = significant && clear_of_the_runs(&row.baseline_run_medians, &row.new_run_medians, grew, threshold, floor);
    row.verdict = match (past_threshold, beyond_noise, grew) {
        (false, _, _) => Verdict::Unchanged,
        (true, false, _) => Verdict::Noise,
        (true, true, true) => Verdict::Regression,
        (true, true, false) => Verdict::Improvement,
    };
    row
}

/// Replaces each tested row's p-value by its Holm-adjusted one over all
/// the rows tested, and takes back the verdicts the adjusted value no
/// longer supports: a change past its threshold that is no longer
/// significant is noise. (The adjustment only raises p-values: no other
/// verdict changes.)
fn adjust_for_multiple_tests(rows: &mut [Row], alpha: f64) {
    let raw: Vec<Option<f64>> = rows.iter().map(|r| r.p_value).collect();
    for (row, adjusted) in rows.iter_mut().zip(holm(&raw)) {
        row.p_value = adjusted;
        let significant = adjusted.is_some_and(|p| p < alpha);
        if !significant && matches!(row.verdict, Verdict::Regression | Verdict::Improvement) {
            row.verdict = Verdict::Noise;
        }
    }
}

/// An op- or kernel-count row (`kind`) where the median count per step
/// differs: the op appeared, disappeared or runs a different number of
/// times.
fn count_row(kind: Kind, name: &str, base: Option<&Metric>, new: Option<&Metric>, sides: Sides) -> Option<Row> {
    let (bm, nm) = (median_of(base), median_of(new));
    if bm == nm {
        return None;
    }
    let (baseline_run_medians, new_run_medians) = sides.run_medians(kind, name);
    let verdict = if !ran(base) {
        Verdict::Appeared
    } else if !ran(new) {
        Verdict::Disappeared
    } else {
        Verdict::CountChanged
    };
    Some(Row {
        kind,
        name: name.to_owned(),
        label: label(kind, name),
        baseline_median: bm,
        new_median: nm,
        change: (bm > 0.0).then(|| (nm - bm) / bm),
        p_value: None,
        threshold: 0.0,
        baseline_steps: base.map_or(0, |m| m.samples.len()),
        new_steps: new.map_or(0, |m| m.samples.len()),
        baseline_run_medians,
        new_run_medians,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One run a side.
    fn decide(baseline: &Samples, new: &Samples, options: &Options) -> Check {
        super::decide(std::slice::from_ref(baseline), std::slice::from_ref(new), options)
    }

    fn samples(step: &[f64], ops: &[(&str, &[f64])]) -> Samples {
        let mut metrics = vec![Metric { kind: Kind::StepTime, name: "step_time".into(), samples: step.to_vec() }];
        for (name, values) in ops {
            metrics.push(Metric { kind: Kind::OpTime, name: (*name).into(), samples: values.to_vec() });
            metrics.push(Metric { kind: Kind::OpCount, name: (*name).into(), samples: values.iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }).collect() });
        }
        Samples { source: "x".into(), steps: (0..step.len()).map(|i| i.to_string()).collect(), metrics }
    }

    const STEPS: [f64; 8] = [100.0, 103.0, 98.0, 101.0, 99.0, 130.0, 100.5, 102.0];

    #[test]
    fn identical_runs_pass() {
        let a = samples(&STEPS, &[("dot", &[50.0, 51.0, 49.0, 50.0, 50.0, 52.0, 50.0, 51.0])]);
        let check = decide(&a, &a, &Options::default());
        assert!(check.passed(), "{:?}", check.rows);
        assert!(check.rows.iter().all(|r| r.verdict == Verdict::Unchanged));
    }

    /// Several runs a side. A process that runs an op slower in every
    /// step (as identical processes do: where its buffers lie) fails a
    /// check of one run a side; against a baseline whose runs include such
    /// a process, the same growth is within the runs' spread: noise. A
    /// change past the spread fails, and names the op.
    #[test]
    fn several_runs_a_side_measure_a_change_against_their_spread() {
        let dot = [50.0, 51.0, 49.0, 50.0, 50.0, 52.0, 50.0, 51.0];
        let run = |extra: f64| samples(&STEPS.map(|s| s + extra), &[("dot", &dot.map(|d| d + extra))]);
        let (fast, slow_process, new) = (run(0.0), run(30.0), run(28.0));
        assert!(!decide(&fast, &new, &Options::default()).passed());
        let check = super::decide(&[fast.clone(), slow_process.clone()], std::slice::from_ref(&new), &Options::default());
        assert!(check.passed(), "{:?}", check.rows);
        let dot_row = check.rows.iter().find(|r| r.label == "op:dot").unwrap();
        assert_eq!((dot_row.verdict, dot_row.baseline_steps, dot_row.new_steps), (Verdict::Noise, 16, 8));
        assert_eq!((dot_row.baseline_run_medians.as_slice(), dot_row.new_run_medians.as_slice()), ([50.0, 80.0].as_slice(), [78.0].as_slice()));
        assert_eq!(check.baseline_runs, ["x", "x"]);
        let slower = run(70.0);
        let check = super::decide(&[fast, slow_process], &[slower.clone(), slower], &Options::default());
        let failed: Vec<&str> = check.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["step_time", "op:dot"]);
    }

    #[test]
    fn a_slower_op_fails_and_is_named_and_swapping_is_an_improvement() {
        let dot = [50.0, 51.0, 49.0, 50.0, 50.0, 52.0, 50.0, 51.0];
        let a = samples(&STEPS, &[("dot", &dot)]);
        let b = samples(&STEPS.map(|s| s + 30.0), &[("dot", &dot.map(|d| d + 30.0))]);
        let check = decide(&a, &b, &Options::default());
        let failed: Vec<&str> = check.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["step_time", "op:dot"]);
        let back = decide(&b, &a, &Options::default());
        assert!(back.passed());
        assert_eq!(back.rows.iter().filter(|r| r.verdict == Verdict::Improvement).count(), 2);
    }

    /// A GPU kernel that slows the step fails by its name, after the ops;
    /// one that launches more often is reported by its count, never failed.
    #[test]
    fn a_slower_kernel_fails_and_is_named() {
        let with_kernel = |step: [f64; 8], gemm: [f64; 8], launches: f64| {
            let mut samples = samples(&step, &[("aten::mm", &[20.0; 8])]);
            samples.metrics.push(Metric { kind: Kind::KernelTime, name: "nvjet_sm90_gemm".into(), samples: gemm.to_vec() });
            samples.metrics.push(Metric { kind: Kind::KernelCount, name: "nvjet_sm90_gemm".into(), samples: vec![launches; 8] });
            samples
        };
        let gemm = [40.0, 41.0, 39.0, 40.0, 40.0, 42.0, 40.0, 41.0];
        let a = with_kernel(STEPS, gemm, 2.0);
        let b = with_kernel(STEPS.map(|s| s + 30.0), gemm.map(|g| g + 30.0), 3.0);
        let check = decide(&a, &b, &Options::default());
        let failed: Vec<&str> = check.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["step_time", "kernel:nvjet_sm90_gemm"]);
        let counted = check.rows.iter().find(|r| r.kind == Kind::KernelCount).unwrap();
        assert_eq!((counted.label.as_str(), counted.verdict), ("kernel_count:nvjet_sm90_gemm", Verdict::CountChanged));
        assert!(decide(&a, &a, &Options::default()).passed());
    }

    /// A rank whose collectives now wait longer, exposed, fails by its
    /// name; communication that computation hides does not move the step
    /// and is not failed.
    #[test]
    fn exposed_communication_fails_naming_the_rank() {
        let with_comm = |step: [f64; 8], exposed: [f64; 8], hidden: f64| {
            let mut samples = samples(&step, &[]);
            for (kind, values) in [(Kind::Communication, exposed.map(|e| e + hidden)), (Kind::ExposedCommunication, exposed)] {
                samples.metrics.push(Metric { kind, name: "rank3".into(), samples: values.to_vec() });
            }
            samples
        };
        let exposed = [10.0, 11.0, 9.0, 10.0, 10.0, 12.0, 10.0, 11.0];
        let a = with_comm(STEPS, exposed, 20.0);
        let slower = decide(&a, &with_comm(STEPS.map(|s| s + 30.0), exposed.map(|e| e + 30.0), 20.0), &Options::default());
        let failed: Vec<&str> = slower.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["step_time", "communication:rank3", "exposed_communication:rank3"]);
        let hidden = decide(&a, &with_comm(STEPS, exposed, 50.0), &Options::default());
        assert!(hidden.passed(), "{:?}", hidden.rows);
        assert_eq!(hidden.rows.iter().find(|r| r.label == "communication:rank3").unwrap().verdict, Verdict::StepUnmoved);
    }

    /// Holm's adjustment: evidence that decides one test alone is not
    /// enough among many (two identical runs would fail somewhere).
    #[test]
    fn many_metrics_tested_at_once_need_stronger_evidence() {
        // U = 57 of 64 pairs: the exact one-sided p-value is 0.0035.
        let base = [10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0];
        let slower = [13.5, 15.5, 16.5, 17.5, 18.5, 19.5, 20.5, 21.5];
        let quiet = [50.0, 51.0, 49.0, 50.0, 50.0, 52.0, 50.0, 51.0];
        // Steps of about 50, so that the op's growth of 4.5 is past 5% of
        // the step (`moves_the_step`); the step grows by 2.4 (4.8%: within
        // its threshold) of the op's 4.5, enough for the op to show in it
        // (`STEP_SHOWS`), in every step (its own test: U = 56 of 64).
        let (before, steps) = (STEPS.map(|s| s / 2.0), STEPS.map(|s| s / 2.0 + 2.4));
        // Two tests (the step time and the op): 2 x 0.0035 < 0.01.
        let alone = decide(&samples(&before, &[("a", &base)]), &samples(&steps, &[("a", &slower)]), &Options::default());
        assert_eq!(alone.regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["op:a"]);
        let p = alone.rows.iter().find(|r| r.label == "op:a").unwrap().p_value.unwrap();
        assert!((p - 2.0 * 0.0034965034965034965).abs() < 1e-12, "{p}");
        // Six tests: 6 x 0.0035 > 0.01, the change is noise.
        let quiet_ops = [("b", &quiet), ("c", &quiet), ("d", &quiet), ("e", &quiet)];
        let mut b = vec![("a", &base[..])];
        let mut n = vec![("a", &slower[..])];
        b.extend(quiet_ops.iter().map(|(name, v)| (*name, &v[..])));
        n.extend(quiet_ops.iter().map(|(name, v)| (*name, &v[..])));
        let among = decide(&samples(&before, &b), &samples(&steps, &n), &Options::default());
        assert!(among.passed(), "{:?}", among.rows);
        assert_eq!(among.rows.iter().find(|r| r.label == "op:a").unwrap().verdict, Verdict::Noise);
    }

    /// An op that grows while the step does not (it waited, overlapped
    /// with other work) did not move the step; the same growth with the
    /// step is a regression.
    #[test]
    fn an_op_must_move_the_step() {
        let dot = [20.0, 21.0, 19.0, 20.0, 20.0, 22.0, 20.0, 21.0];
        let waited = dot.map(|d| d + 30.0);
        let a = samples(&STEPS, &[("dot", &dot)]);
        let hidden = decide(&a, &samples(&STEPS, &[("dot", &waited)]), &Options::default());
        assert!(hidden.passed(), "{:?}", hidden.rows);
        assert_eq!(hidden.rows.iter().find(|r| r.label == "op:dot").unwrap().verdict, Verdict::StepUnmoved);
        // The step grows by two thirds of the op's growth: a regression.
        let shown = decide(&a, &samples(&STEPS.map(|s| s + 20.0), &[("dot", &waited)]), &Options::default());
        assert_eq!(shown.regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["step_time", "op:dot"]);
    }

    /// An op that took twice as long in every step (its own test: p =
    /// 8e-5) while the step's median grew by 5.7% in steps that overlap
    /// (the step's test: p = 0.3) did not move the step: identical
    /// processes differ so in single ops. The same op in steps that all
    /// grew is a regression.
    #[test]
    fn an_op_needs_the_step_to_grow_significantly() {
        let dot = [10.0, 11.0, 9.0, 10.0, 10.0, 12.0, 10.0, 11.0];
        let a = samples(&STEPS, &[("dot", &dot)]);
        let overlapping = [90.0, 91.0, 92.0, 106.0, 107.0, 108.0, 140.0, 150.0];
        let check = decide(&a, &samples(&overlapping, &[("dot", &dot.map(|d| d * 2.0))]), &Options::default());
        assert!(check.passed(), "{:?}", check.rows);
        assert_eq!(check.rows.iter().find(|r| r.label == "op:dot").unwrap().verdict, Verdict::StepUnmoved);
        let check = decide(&a, &samples(&STEPS.map(|s| s + 6.0), &[("dot", &dot.map(|d| d * 2.0))]), &Options::default());
        assert_eq!(check.regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["step_time", "op:dot"]);
    }

    /// Two ops double while the step grows by 6: the one whose growth (6)
    /// is past the step's threshold of the step (5% of 100.75) regresses;
    /// the one whose growth is 2% of the step did not move it, however
    /// sure its own test is.
    #[test]
    fn an_op_whose_growth_is_a_small_part_of_the_step_does_not_fail() {
        let dot = [6.0, 6.5, 5.5, 6.0, 6.0, 7.0, 6.0, 6.5];
        let mul = [2.0, 2.1, 1.9, 2.0, 2.0, 2.2, 2.0, 2.1];
        let a = samples(&STEPS, &[("dot", &dot), ("mul", &mul)]);
        let b = samples(&STEPS.map(|s| s + 6.0), &[("dot", &dot.map(|d| d * 2.0)), ("mul", &mul.map(|d| d * 2.0))]);
        let check = decide(&a, &b, &Options::default());
        assert_eq!(check.regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["step_time", "op:dot"]);
        assert_eq!(check.rows.iter().find(|r| r.label == "op:mul").unwrap().verdict, Verdict::StepUnmoved);
        // With the step's threshold at 1%, mul's growth (2%) is past it.
        let mut loose = Options::default();
        loose.thresholds.insert("step_time".into(), 0.01);
        assert!(decide(&a, &b, &loose).regressions().any(|r| r.label == "op:mul"));
        // So with --min_part_growth 1%, the step's own threshold kept.
        let parts = Options { min_part_growth: Some(0.01), ..Options::default() };
        let check = decide(&a, &b, &parts);
        assert_eq!(check.regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["step_time", "op:dot", "op:mul"]);
        assert_eq!(check.rows[0].threshold, 0.05);
        // And 10% keeps even dot (6% of the step) from failing.
        let strict = Options { min_part_growth: Some(0.10), ..Options::default() };
        assert_eq!(decide(&a, &b, &strict).regressions().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["step_time"]);
    }

    #[test]
    fn one_slow_step_is_noise() {
        // The median moves little; one outlier cannot make it significant.
        let mut slow = STEPS;
        slow[0] = 500.0;
        slow[1] = 400.0;
        let check = decide(&samples(&STEPS, &[]), &samples(&slow, &[]), &Options::default());
        assert!(check.passed(), "{:?}", check.rows);
    }

    #[test]
    fn too_few_steps_never_fail() {
        let a = samples(&[100.0, 101.0, 99.0], &[]);
        let b = samples(&[200.0, 201.0, 199.0], &[]);
        let check = decide(&a, &b, &Options::default());
        assert!(check.passed());
        assert_eq!(check.rows[0].verdict, Verdict::TooFewSteps);
        assert!(check.summary().contains("too few steps"));
    }

    #[test]
    fn an_op_that_appears_is_reported_not_failed() {
        let a = samples(&STEPS, &[]);
        let b = samples(&STEPS, &[("tanh", &[5.0; 8])]);
        let check = decide(&a, &b, &Options::default());
        assert!(check.passed());
        let row = check.rows.iter().find(|r| r.label == "count:tanh").unwrap();
        assert_eq!(row.verdict, Verdict::Appeared);
        let back = decide(&b, &a, &Options::default());
        assert_eq!(back.rows.iter().find(|r| r.label == "count:tanh").unwrap().verdict, Verdict::Disappeared);
    }

    #[test]
    fn more_peak_memory_fails_and_an_allocator_on_one_side_is_not_judged() {
        let memory = |bytes: f64, allocator: &str| {
            let mut s = samples(&STEPS, &[]);
            s.metrics.push(Metric { kind: Kind::PeakMemory, name: allocator.into(), samples: vec![bytes; STEPS.len()] });
            s
        };
        let (a, b) = (memory(2.5e6, "cpu"), memory(69.6e6, "cpu"));
        // 2 MB more is 80%, but below the 4 MiB floor.
        assert!(decide(&a, &memory(4.5e6, "cpu"), &Options::default()).passed());
        let check = decide(&a, &b, &Options::default());
        let failed: Vec<&str> = check.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["memory:cpu"]);
        assert!(decide(&a, &a, &Options::default()).passed());
        // 4% more passes the default 5%, floor or not.
        let no_floor = Options { min_memory_change: 0.0, ..Options::default() };
        assert!(decide(&a, &memory(2.6e6, "cpu"), &no_floor).passed());
        assert!(!decide(&a, &memory(4.5e6, "cpu"), &no_floor).passed());
        let other = decide(&a, &memory(69.6e6, "gpu"), &Options::default());
        assert!(other.passed());
        assert!(other.rows.iter().all(|r| r.kind != Kind::PeakMemory));
    }

    #[test]
    fn a_threshold_per_metric_wins() {
        let a = samples(&STEPS, &[]);
        let b = samples(&STEPS.map(|s| s * 1.10), &[]);
        assert!(!decide(&a, &b, &Options::default()).passed());
        let mut options = Options::default();
        options.thresholds.insert("step_time".into(), 0.2);
        assert!(decide(&a, &b, &options).passed());
    }

    #[test]
    fn rules_thresholds_by_regex_first_match_and_ignored_metrics() {
        let dot = [50.0, 51.0, 49.0, 50.0, 50.0, 52.0, 50.0, 51.0];
        let a = samples(&STEPS, &[("layer2/dot", &dot), ("layer1/dot", &dot)]);
        let b = samples(&STEPS.map(|s| s * 1.5), &[("layer2/dot", &dot.map(|d| d * 1.5)), ("layer1/dot", &dot.map(|d| d * 1.5))]);
        let rules = |text: &str| super::super::rules::parse(text).unwrap().into_options("r.toml".into());
        // layer 2 relaxed by the second rule; layer 1 by neither (the first
        // rule matches it, at the default).
        let o = rules("[[threshold]]\nmetric = 'op:layer1/.*'\nmax_regression = '8%'\n[[threshold]]\nmetric = 'op:.*dot'\nmax_regression = '60%'\n");
        let check = decide(&a, &b, &o);
        let failed: Vec<&str> = check.regressions().map(|r| r.label.as_str()).collect();
        assert_eq!(failed, ["step_time", "op:layer1/dot"]);
        assert_eq!(check.rows.iter().find(|r| r.label == "op:layer2/dot").unwrap().threshold, 0.6);
        // --threshold wins over the rules.
        let mut flagged = o.clone();
        flagged.thresholds.insert("op:layer2/dot".into(), 0.1);
        assert!(decide(&a, &b, &flagged).regressions().any(|r| r.label == "op:layer2/dot"));
        // Ignored: no row, no failure, listed with its medians.
        let o = rules("ignore = ['step_time', 'op:.*']\n");
        let check = decide(&a, &b, &o);
        assert!(check.passed(), "{:?}", check.rows);
        assert!(check.rows.iter().all(|r| r.kind != Kind::OpTime && r.kind != Kind::StepTime));
        let ignored: Vec<(&str, &str)> = check.ignored.iter().map(|i| (i.label.as_str(), i.rule.as_str())).collect();
        assert_eq!(ignored, [("step_time", "step_time"), ("op:layer1/dot", "op:.*"), ("op:layer2/dot", "op:.*")]);
        assert_eq!(check.ignored[0].new_median, median(&STEPS.map(|s| s * 1.5)));
        assert!(check.summary().ends_with("; 3 metrics ignored"), "{}", check.summary());
    }
}
