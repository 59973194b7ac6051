//! The thresholds of the decision, shared by the library, the command line
//! and Python (one [`Options`] whose `Default` is [`defaults`]).

use std::collections::BTreeMap;

use super::rules::{Budget, Pattern, ThresholdRule};
use crate::error::{Error, Result};

/// The defaults, and why (docs/book/src/commands/check.md, "Defaults",
/// has the measurements).
pub mod defaults {
    /// Step time may grow this much (relative change of the median) before
    /// it can fail: above the run-to-run noise of the median measured on
    /// identical CPU runs (testdata/check), the 5% most CI gates use.
    pub const MAX_REGRESSION: f64 = 0.05;
    /// Ops and breakdown categories may grow this much: one op's median
    /// varies more from run to run than the step's, which sums many.
    pub const MAX_OP_REGRESSION: f64 = 0.08;
    /// An allocator's peak memory may grow this much, and by at least
    /// [`MIN_MEMORY_CHANGE`]. A step's peak does not depend on the
    /// machine's speed: 43 pairs of identical PyTorch CPU runs had the same
    /// peak to the byte. It depends on which tensors are live together,
    /// which TensorFlow's executor decides anew in each run: on the 5 MB
    /// peak of the testdata/check program it moved by up to 1.96 MB (51%),
    /// which the absolute floor absorbs.
    pub const MAX_MEMORY_REGRESSION: f64 = 0.05;
    /// Bytes an allocator's median peak must grow by, besides
    /// [`MAX_MEMORY_REGRESSION`], to regress (4 MiB): above the run-to-run
    /// difference of TensorFlow's op order on a small program (1.96 MB),
    /// far below what a real regression of a training job's memory is.
    pub const MIN_MEMORY_CHANGE: f64 = 4.0 * 1024.0 * 1024.0;
    /// The one-sided Mann-Whitney test must reject "no change" at this
    /// level, its p-value adjusted by Holm's method over every metric the
    /// check tests: the chance that two identical runs fail anywhere is
    /// then at most 1%, however many metrics there are (unadjusted, at
    /// 0.01 and 30 metrics, about one identical check in four would reject
    /// somewhere).
    pub const ALPHA: f64 = 0.01;
    /// Fewer steps than this on a side, and nothing is judged: with 4 and 4
    /// samples the smallest one-sided p-value is 1/70 > 0.01.
    pub const MIN_STEPS: usize = 5;
    /// Ops and categories below this share of the step time (median, on
    /// both sides) are not judged: a 10 µs op doubling is noise in a 5 ms
    /// step, and tiny medians make relative changes meaningless.
    pub const MIN_SHARE: f64 = 0.01;
}

/// How `rtfprof check` decides.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// Largest relative growth of the step time's median that passes.
    pub max_regression: f64,
    /// Largest relative growth of an op's or a category's median that passes.
    pub max_op_regression: f64,
    /// Largest relative growth of an allocator's median peak memory that
    /// passes.
    pub max_memory_regression: f64,
    /// Fewest bytes an allocator's median peak must grow by to regress.
    pub min_memory_change: f64,
    /// The significance level of the one-sided rank test.
    pub alpha: f64,
    /// Fewest steps a side needs for anything to be judged.
    pub min_steps: usize,
    /// Smallest share of the step time an op or category needs to be judged.
    pub min_share: f64,
    /// Least growth of a part of the step (an op, kernel, instruction,
    /// category, rank's communication), as a share of the baseline's
    /// median step time, for it to fail (`moves_the_step`'s third
    /// condition). `None`: the step time's threshold, so that a part fails
    /// when its growth alone would fail the step.
    pub min_part_growth: Option<f64>,
    /// Thresholds for single metrics, by label (`step_time`,
    /// `category:host_compute`, `memory:ALLOCATOR`, `op:NAME`), over
    /// everything else (the command line's `--threshold`).
    pub thresholds: BTreeMap<String, f64>,
    /// The rules file's thresholds by regex: the first that matches a
    /// label wins over the general thresholds above, not over
    /// `thresholds`.
    pub threshold_rules: Vec<ThresholdRule>,
    /// The rules file's budgets on the new run's medians.
    pub budgets: Vec<Budget>,
    /// Metrics neither judged nor failed: regexes over labels.
    pub ignore: Vec<Pattern>,
    /// The rules file read, as outputs name it.
    pub rules: Option<String>,
}

impl Options {
    /// The threshold of the metric `label`, whose kind's is
    /// `kind_default`: `--threshold LABEL=…`, else the first rule of the
    /// rules file that matches, else the kind's.
    pub fn threshold(&self, label: &str, kind_default: f64) -> f64 {
        if let Some(&t) = self.thresholds.get(label) {
            return t;
        }
        self.threshold_rules.iter().find(|r| r.metric.matches(label)).map_or(kind_default, |r| r.max_regression)
    }

    /// The ignore rule that matches `label`, if one does.
    pub fn ignored_by(&self, label: &str) -> Option<&Pattern> {
        self.ignore.iter().find(|p| p.matches(label))
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_regression: defaults::MAX_REGRESSION,
            max_op_regression: defaults::MAX_OP_REGRESSION,
            max_memory_regression: defaults::MAX_MEMORY_REGRESSION,
            min_memory_change: defaults::MIN_MEMORY_CHANGE,
            alpha: defaults::ALPHA,
            min_steps: defaults::MIN_STEPS,
            min_share: defaults::MIN_SHARE,
            min_part_growth: None,
            thresholds: BTreeMap::new(),
            threshold_rules: Vec::new(),
            budgets: Vec::new(),
            ignore: Vec::new(),
            rules: None,
        }
    }
}

/// Parses a relative amount: `5%`, or a fraction `0.05`; `flag` names it
/// in the error. Must be finite and at least 0.
pub fn parse_fraction(flag: &str, value: &str) -> Result<f64> {
    let trimmed = value.trim();
    let parsed = match trimmed.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => trimmed.parse::<f64>(),
    };
    match parsed {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(Error::flag(flag, format!("'{value}' is not a relative amount >= 0 (e.g. 5% or 0.05)"))),
    }
}

/// Parses an amount of memory: bytes (`4194304`), or with a unit, `B`,
/// `KB`/`MB`/`GB` (powers of 1000) or `KiB`/`MiB`/`GiB` (of 1024), e.g.
/// `4MiB`; `flag` names it in the error.
pub fn parse_bytes(flag: &str, value: &str) -> Result<f64> {
    let trimmed = value.trim();
    let units = [("KiB", 1024.0), ("MiB", 1024.0 * 1024.0), ("GiB", 1024.0 * 1024.0 * 1024.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("B", 1.0)];
    let (number, scale) = units.iter().find_map(|(unit, scale)| trimmed.strip_suffix(unit).map(|n| (n.trim(), *scale))).unwrap_or((trimmed, 1.0));
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
        _ => Err(Error::flag(flag, format!("'{value}' is not an amount of memory >= 0 (e.g. 4MiB, 100MB or 1048576)"))),
    }
}

/// Parses `--threshold LABEL=AMOUNT` (e.g. `op:jit(step)/dot_general=20%`):
/// the label is everything before the last `=`.
pub fn parse_threshold(value: &str) -> Result<(String, f64)> {
    let Some((label, amount)) = value.rsplit_once('=') else {
        return Err(Error::flag("--threshold", format!("'{value}' is not METRIC=AMOUNT (e.g. step_time=3% or op:NAME=20%)")));
    };
    if label.is_empty() {
        return Err(Error::flag("--threshold", format!("'{value}' names no metric (e.g. step_time=3%)")));
    }
    Ok((label.to_owned(), parse_fraction("--threshold", amount)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions() {
        assert_eq!(parse_fraction("--max_regression", "5%").unwrap(), 0.05);
        assert_eq!(parse_fraction("--max_regression", "0.1").unwrap(), 0.1);
        for bad in ["", "five", "-5%", "NaN", "inf", "5%%"] {
            let e = parse_fraction("--max_regression", bad).unwrap_err().to_string();
            assert!(e.starts_with("--max_regression: "), "{e}");
        }
    }

    #[test]
    fn bytes() {
        assert_eq!(parse_bytes("--min_memory_change", "4MiB").unwrap(), 4194304.0);
        assert_eq!(parse_bytes("--min_memory_change", "1.5 GB").unwrap(), 1.5e9);
        assert_eq!(parse_bytes("--min_memory_change", "512").unwrap(), 512.0);
        assert_eq!(parse_bytes("--min_memory_change", "2KB").unwrap(), 2000.0);
        for bad in ["", "MiB", "-1MB", "4 TB", "NaN"] {
            assert!(parse_bytes("--min_memory_change", bad).unwrap_err().to_string().starts_with("--min_memory_change: "), "{bad}");
        }
    }

    #[test]
    fn thresholds() {
        assert_eq!(parse_threshold("op:a=b/c=20%").unwrap(), ("op:a=b/c".to_owned(), 0.2));
        assert!(parse_threshold("step_time").is_err());
        assert!(parse_threshold("=5%").is_err());
    }
}
