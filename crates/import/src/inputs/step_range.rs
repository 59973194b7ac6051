//! `--steps A..B` of `rtfprof cut`: the range of step numbers to keep,
//! the same for every kind of trace.

use crate::error::{Error, Result};

/// Steps `first..=last` by their numbers (`ProfilerStep#N` in a PyTorch
/// trace, the step's number in `rtfprof steps` of an XPlane one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRange {
    pub first: u64,
    pub last: u64,
}

impl StepRange {
    /// `N` or `A..B` (both included), as `--steps` takes it.
    pub fn parse(text: &str) -> Result<StepRange> {
        let bad = || Error::flag("--steps", format!("'{text}' is not a step or a range of steps like 10..12 (both included)"));
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad());
        let range = match text.split_once("..") {
            Some((a, b)) => StepRange { first: number(a)?, last: number(b.strip_prefix('=').unwrap_or(b))? },
            None => {
                let n = number(text)?;
                StepRange { first: n, last: n }
            }
        };
        if range.first > range.last {
            return Err(Error::flag("--steps", format!("'{text}' is empty: the first step is after the last")));
        }
        Ok(range)
    }

    pub fn contains(self, n: u64) -> bool {
        self.first <= n && n <= self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_ranges_parse() {
        assert_eq!(StepRange::parse("3").unwrap(), StepRange { first: 3, last: 3 });
        assert_eq!(StepRange::parse("10..12").unwrap(), StepRange { first: 10, last: 12 });
        assert_eq!(StepRange::parse("10..=12").unwrap(), StepRange { first: 10, last: 12 });
        for bad in ["", "a", "3..", "..3", "5..4", "-1"] {
            assert!(StepRange::parse(bad).is_err(), "{bad}");
        }
    }
}
