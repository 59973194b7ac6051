//! `--output json:outfile=PATH` (schemas/check.schema.json); also the
//! dict `rtfprof.check()` returns in Python.

use serde_json::{Value, json};

use crate::check::Check;

/// The document as a value.
pub fn value(check: &Check) -> Value {
    let o = &check.options;
    let metrics: Vec<Value> = check
        .rows
        .iter()
        .map(|r| {
            json!({
                "label": r.label,
                "kind": r.kind.as_str(),
                "name": r.name,
                "unit": r.kind.unit(),
                "baseline_median": r.baseline_median,
                "new_median": r.new_median,
                "change": r.change,
                "p_value": r.p_value,
                "threshold": r.threshold,
                "baseline_steps": r.baseline_steps,
                "new_steps": r.new_steps,
                "baseline_run_medians": r.baseline_run_medians,
                "new_run_medians": r.new_run_medians,
                "verdict": r.verdict.as_str(),
            })
        })
        .collect();
    let budgets: Vec<Value> = check
        .budgets
        .iter()
        .map(|b| {
            json!({
                "rule": b.rule,
                "label": b.label,
                "kind": b.kind.map(|k| k.as_str()),
                "unit": b.unit,
                "max": b.max,
                "max_text": b.max_text,
                "value": b.value,
                "new_steps": b.new_steps,
                "verdict": b.verdict.as_str(),
            })
        })
        .collect();
    let ignored: Vec<Value> = check
        .ignored
        .iter()
        .map(|i| {
            json!({
                "label": i.label,
                "kind": i.kind.as_str(),
                "name": i.name,
                "unit": i.kind.unit(),
                "rule": i.rule,
                "baseline_median": i.baseline_median,
                "new_median": i.new_median,
            })
        })
        .collect();
    let threshold_rules: Vec<Value> = o.threshold_rules.iter().map(|r| json!({"metric": r.metric.as_str(), "max_regression": r.max_regression})).collect();
    let ignore: Vec<&str> = o.ignore.iter().map(|p| p.as_str()).collect();
    json!({
        "schema_version": 1,
        "baseline": check.baseline,
        "new": check.new,
        "baseline_runs": check.baseline_runs,
        "new_runs": check.new_runs,
        "passed": check.passed(),
        "summary": check.summary(),
        "options": {
            "max_regression": o.max_regression,
            "max_op_regression": o.max_op_regression,
            "max_memory_regression": o.max_memory_regression,
            "min_memory_change": o.min_memory_change,
            "alpha": o.alpha,
            "min_steps": o.min_steps,
            "min_share": o.min_share,
            "min_part_growth": o.min_part_growth,
            "thresholds": o.thresholds,
            "rules": o.rules,
            "threshold_rules": threshold_rules,
            "ignore": ignore,
        },
        "metrics": metrics,
        "budgets": budgets,
        "ignored": ignored,
    })
}

/// The document, one line and a newline (serde_json escapes the names).
pub fn render(check: &Check) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(&value(check)).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}
