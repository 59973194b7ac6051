//! `--output benchmark:outfile=PATH`: the new profile's medians in
//! github-action-benchmark's `customSmallerIsBetter` format (a list of
//! `{name, unit, value, extra}`), so its charts track them commit by commit.
//!
//! The rules file's budgets go in the `extra` of the metric they judge
//! (the action shows `extra` under the point in its charts' tooltips):
//! github-action-benchmark has no absolute limit, only an alert on the
//! ratio to the previous commit, so a budget as an entry of its own would
//! chart a flat line and its alert could never fire. A metric a budget
//! judges that the check did not compare with the baseline (an op below
//! `--min_share`, an allocator on the new side only) is an entry too: the
//! rules file asked for it to be watched. A budget that matched no metric
//! has no value to chart and is left out (the other outputs report it).

use serde_json::{Value, json};

use super::{p_value, percent};
use crate::check::{BudgetRow, Check};

/// The judged metrics (not op counts): step time, categories, peak
/// memory, ops; then the budgeted metrics that were not judged.
pub fn render(check: &Check) -> Vec<u8> {
    let mut entries: Vec<Value> = check
        .rows
        .iter()
        .filter(|r| !r.kind.is_count())
        .map(|r| {
            let mut extra = format!("baseline {} ({}), p={}, {}", r.baseline_median, percent(r.change), p_value(r.p_value), r.verdict.as_str());
            extra.push_str(&budgets_of(check, &r.label));
            json!({ "name": r.label, "unit": r.kind.unit(), "value": r.new_median, "extra": extra })
        })
        .collect();
    let mut only_budgeted: Vec<&BudgetRow> = Vec::new();
    for b in &check.budgets {
        let (Some(label), Some(kind), Some(value)) = (&b.label, b.kind, b.value) else { continue };
        let judged = check.rows.iter().any(|r| r.kind == kind && &r.label == label);
        if judged || only_budgeted.iter().any(|o| o.label.as_ref() == Some(label)) {
            continue;
        }
        only_budgeted.push(b);
        let extra = format!("not compared with the baseline{}", budgets_of(check, label));
        entries.push(json!({ "name": label, "unit": kind.unit(), "value": value, "extra": extra }));
    }
    let mut bytes = serde_json::to_vec_pretty(&entries).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// `; budget 12ms: exceeded` for each budget that judged the metric
/// `label`, in the rules file's order.
fn budgets_of(check: &Check, label: &str) -> String {
    check
        .budgets
        .iter()
        .filter(|b| b.label.as_deref() == Some(label))
        .map(|b| format!("; budget {} ({}): {}", b.max_text, b.rule, b.verdict.as_str()))
        .collect()
}
