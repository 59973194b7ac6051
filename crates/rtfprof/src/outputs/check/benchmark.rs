//! `--output benchmark:outfile=PATH`: the new profile's medians in
//! github-action-benchmark's `customSmallerIsBetter` format (a list of
//! `{name, unit, value}`), so its charts track them commit by commit.

use serde_json::{Value, json};

use super::{p_value, percent};
use crate::check::{Check, Kind};

/// The judged metrics (not op counts): step time, categories, peak
/// memory, ops.
pub fn render(check: &Check) -> Vec<u8> {
    let entries: Vec<Value> = check
        .rows
        .iter()
        .filter(|r| r.kind != Kind::OpCount)
        .map(|r| {
            json!({
                "name": r.label,
                "unit": r.kind.unit(),
                "value": r.new_median,
                "extra": format!("baseline {} ({}), p={}, {}", r.baseline_median, percent(r.change), p_value(r.p_value), r.verdict.as_str()),
            })
        })
        .collect();
    let mut bytes = serde_json::to_vec_pretty(&entries).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
