//! The thresholds of the decision, shared by the library, the command line
//! and Python (one [`Options`] whose `Default` is [`defaults`]).

use std::collections::BTreeMap;

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
    /// The one-sided Mann-Whitney test must reject "no change" at this
    /// level. Small, because a run checks tens of metrics at once: at 0.01
    /// and 30 metrics, an identical run still shows about one test in four
    /// rejecting by chance somewhere, which the threshold then filters.
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
    /// The significance level of the one-sided rank test.
    pub alpha: f64,
    /// Fewest steps a side needs for anything to be judged.
    pub min_steps: usize,
    /// Smallest share of the step time an op or category needs to be judged.
    pub min_share: f64,
    /// Thresholds for single metrics, by label (`step_time`,
    /// `category:host_compute`, `op:NAME`), over the two above.
    pub thresholds: BTreeMap<String, f64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            max_regression: defaults::MAX_REGRESSION,
            max_op_regression: defaults::MAX_OP_REGRESSION,
            alpha: defaults::ALPHA,
            min_steps: defaults::MIN_STEPS,
            min_share: defaults::MIN_SHARE,
            thresholds: BTreeMap::new(),
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
    fn thresholds() {
        assert_eq!(parse_threshold("op:a=b/c=20%").unwrap(), ("op:a=b/c".to_owned(), 0.2));
        assert!(parse_threshold("step_time").is_err());
        assert!(parse_threshold("=5%").is_err());
    }
}
