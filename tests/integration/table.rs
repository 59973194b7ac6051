//! CSV and JSON output. tfprof cannot produce these, so:
//! - an invariant ties them to what tfprof does print: a node's per-step
//!   values equal that node's totals when the same view runs at that step;
//! - snapshots under `testdata/expected/` catch unintended changes. They are
//!   written by rtfprof itself: rerun with `RTFPROF_BLESS=1` and review the
//!   diff in git.

use std::collections::HashMap;

use rtfprof::show::{self, Displayed, Options};
use rtfprof::views::View;
use serde_json::Value;

use crate::common;

use common::{fixture_flags as flags, fixture_stats as stats, rtfprof, testdata};

fn export(view: &str, kind: &str, model: &str, extra: &[&str]) -> String {
    let mut args = vec![view.to_owned()];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(flags(model));
    rtfprof(&args).outfile(kind)
}

/// node path (names from the root) → totals, for one run of a view.
fn totals_by_path(node: &Displayed, prefix: &str, out: &mut HashMap<String, rtfprof::stats::Metrics>) {
    let path = format!("{prefix}/{}", node.name);
    out.insert(path.clone(), node.totals);
    for c in &node.children {
        totals_by_path(c, &path, out);
    }
}

fn check_json_node(node: &Value, prefix: &str, by_step: &[HashMap<String, rtfprof::stats::Metrics>], checked: &mut usize) {
    let path = format!("{prefix}/{}", node["name"].as_str().unwrap());
    for (i, at_step) in by_step.iter().enumerate() {
        let expected = at_step.get(&path).unwrap_or_else(|| panic!("{path} missing at step {i}"));
        let values = &node["per_step"]["metrics"];
        assert_eq!(values["exec_micros"]["values"][i].as_i64().unwrap(), expected.exec_micros, "{path} step {i}");
        assert_eq!(values["requested_bytes"]["values"][i].as_i64().unwrap(), expected.requested_bytes, "{path} step {i}");
        assert_eq!(values["float_ops"]["values"][i].as_i64().unwrap(), expected.float_ops, "{path} step {i}");
        *checked += 1;
    }
    for c in node["children"].as_array().unwrap() {
        check_json_node(c, &path, by_step, checked);
    }
}

#[test]
fn per_step_values_equal_the_view_run_at_each_step() {
    for model in ["cnn", "while"] {
        let stats = stats(model);
        for (view, name) in [(View::Scope, "scope"), (View::Graph, "graph"), (View::Code, "code")] {
            let json: Value = serde_json::from_str(&export(name, "json", model, &["--max_depth=1000"])).unwrap();
            assert_eq!(json["schema_version"], 1);
            assert_eq!(json["steps"], serde_json::json!([0, 1, 2]));
            let by_step: Vec<_> = (0..3)
                .map(|step| {
                    let opts = Options { step, max_depth: 1000, ..Options::default() };
                    let mut map = HashMap::new();
                    totals_by_path(&show::run(&stats, view, &opts).unwrap().root, "", &mut map);
                    map
                })
                .collect();
            let mut checked = 0;
            check_json_node(&json["root"], "", &by_step, &mut checked);
            assert!(checked > 30, "{model} {name}: only {checked} values checked");
        }
    }
}

#[test]
fn csv_has_one_row_per_displayed_node_with_statistics() {
    let csv = export("scope", "csv", "cnn", &["--max_depth=3"]);
    let text = export("scope", "file", "cnn", &["--max_depth=3"]);
    let lines_shown = text.lines().skip_while(|l| !l.starts_with("_TFProfRoot")).count();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    for column in ["depth", "name", "total_exec_micros", "steps_ran", "exec_micros_mean", "exec_micros_std", "exec_micros_cv"] {
        assert!(header.iter().any(|h| h == column), "missing column {column}");
    }
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), lines_shown, "one row per displayed line");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in &rows {
        let mean: f64 = row[col("exec_micros_mean")].parse().unwrap();
        let std: f64 = row[col("exec_micros_std")].parse().unwrap();
        let cv: f64 = row[col("exec_micros_cv")].parse().unwrap();
        if mean > 0.0 {
            assert!((cv - std / mean).abs() < 1e-3, "cv = std / mean in {row:?}");
        }
    }
}

#[test]
fn snapshots() {
    let cases = [
        ("cnn.scope.csv", export("scope", "csv", "cnn", &["--max_depth=3", "--select=bytes,micros"])),
        ("while.op.json", export("op", "json", "while", &[])),
        ("mlp.code.json", export("code", "json", "mlp", &["--max_depth=6"])),
    ];
    let bless = std::env::var_os("RTFPROF_BLESS").is_some();
    for (name, actual) in cases {
        let path = testdata().join("expected").join(name);
        if bless {
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing: run with RTFPROF_BLESS=1", path.display()));
        assert!(expected == actual, "{name} changed; if intended, rerun with RTFPROF_BLESS=1 and review the diff");
    }
}
