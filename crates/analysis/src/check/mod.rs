//! `rtfprof check BASELINE NEW`: a noise-aware performance regression gate
//! for CI. Two profiles of the same program (or a baseline summary saved
//! from one), each side one run or several, are compared metric by metric
//! on their per-step samples:
//!
//! - [`metrics`]: what is sampled (step time, the step breakdown's
//!   categories, each op's time and count per step);
//! - [`runs`]: a side of several runs, pooled, with each run's medians;
//! - [`statistics`]: medians and the one-sided Mann-Whitney U test;
//! - [`decision`]: which metrics are judged and each one's verdict;
//! - [`options`]: the thresholds, with their defaults and why;
//! - [`rules`]: the rules file (`--rules`): thresholds by regex, budgets,
//!   metrics to ignore; [`budgets`] judges the budgets;
//! - [`result`]: the outcome, which `rtfprof::outputs::check` writes.

pub mod budgets;
pub mod decision;
pub mod metrics;
pub mod options;
pub mod result;
pub mod rules;
pub mod runs;
pub mod statistics;

pub use decision::decide;
pub use metrics::{Kind, Metric, Samples, from_sources};
pub use options::{Options, defaults};
pub use result::{BudgetRow, BudgetVerdict, Check, Ignored, Row, Verdict};
pub use rules::Rules;
