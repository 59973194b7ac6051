//! Which nodes are accounted, shown and descended into — shared by all views
//! (`TFShow::ShouldShow`, `TFMultiShow::ShouldShow`, `ShouldTrim`, `ReAccount`).

use super::options::Options;
use crate::stats::{Metrics, Totals};

/// Accounted iff the account regexes are `.*` or one matches an op type.
pub fn is_accounted<'a>(opts: &Options, op_types: impl IntoIterator<Item = &'a &'a str>) -> bool {
    let regexes = &opts.account_type_regexes;
    regexes.is_match_all() || op_types.into_iter().any(|t| regexes.matches(t))
}

/// Values the `min_*` thresholds compare: the memory and time thresholds
/// always test totals; params, float ops and occurrence test a node's own
/// values in the scope/graph views and totals in the code/op views.
pub struct Thresholded<'a> {
    pub totals: &'a Metrics,
    pub params: i64,
    pub float_ops: i64,
    /// `None` where the view has no occurrence test of its own.
    pub occurrence: Option<i64>,
}

impl<'a> Thresholded<'a> {
    /// Scope and graph views.
    pub fn graph_node(own: &'a Metrics, totals: &'a Totals) -> Self {
        Thresholded { totals: &totals.metrics, params: own.parameters, float_ops: own.float_ops, occurrence: Some(own.run_count) }
    }

    /// Code and op views.
    pub fn multi_node(totals: &'a Metrics) -> Self {
        Thresholded { totals, params: totals.parameters, float_ops: totals.float_ops, occurrence: None }
    }
}

/// The show test: thresholds, depth, then show and hide regexes.
pub fn should_show(opts: &Options, name: &str, values: Thresholded<'_>, depth: i64) -> bool {
    if name == crate::views::ROOT_NAME {
        return true;
    }
    let t = values.totals;
    let below = t.requested_bytes < opts.min_bytes
        || t.peak_bytes < opts.min_peak_bytes
        || t.residual_bytes < opts.min_residual_bytes
        || t.output_bytes < opts.min_output_bytes
        || t.exec_micros < opts.min_micros
        || t.accelerator_micros < opts.min_accelerator_micros
        || t.cpu_micros < opts.min_cpu_micros
        || values.params < opts.min_params
        || values.float_ops < opts.min_float_ops
        || values.occurrence.is_some_and(|run_count| run_count < opts.min_occurrence)
        || depth > opts.max_depth;
    if below {
        return false;
    }
    let shown = opts.show_name_regexes.is_match_all() || opts.show_name_regexes.matches(name);
    shown && !opts.hide_name_regexes.matches(name)
}

/// A trimmed node may be shown, but its subtree is not descended.
pub fn is_trimmed(opts: &Options, name: &str) -> bool {
    opts.trim_name_regexes.matches(name)
}
