//! `--default_op_log` (TF's Python `profile()`) on GraphDefs saved without
//! `_output_shapes`: what `tf.compat.v1.profiler.profile(graph, ...)`
//! returns for them, its graph having inferred every shape on import
//! (`testdata/shapes/profile.json.gz`, `tools/gen_shapes.py`), equals
//! `rtfprof::api::profile` with the default op log, every field of every
//! node. The per-tensor shapes are checked in `rtfprof-import`
//! (`inputs::shape_oracle`).

use rtfprof::show::Options;
use rtfprof::stats::flops::FlopsEstimate;
use rtfprof::views::View;
use serde_json::Value;

use crate::node_proto::{as_plain, cases_in, dict_value, first_value_difference, inputs};

fn profile(case: &Value, estimate: FlopsEstimate) -> Value {
    let view = View::parse(case["cmd"].as_str().unwrap()).unwrap();
    let entries = case["options"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), dict_value(v)));
    let opts = Options::from_tf_dict(Options::default(), entries).unwrap();
    let mut sources = inputs(case);
    sources.paths.estimate_flops = estimate;
    let profiled = rtfprof::api::profile(view, &sources, &opts).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
    as_plain(&profiled.proto)
}

#[test]
fn the_default_op_log_equals_tensorflows_profile() {
    let doc = cases_in("shapes/profile.json.gz");
    let cases = doc;
    assert!(cases.len() >= 39, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        if let Some(d) = first_value_difference(&case["result"], &profile(case, FlopsEstimate::TfDefaultOpLog), "root") {
            failures.push(format!("{}: {d}", case["name"].as_str().unwrap()));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

/// The names of the nodes TF's `profile()` gives float ops: its
/// `float_operation` scope view (`min_float_ops` 1) shows every one.
fn counted_by_tensorflow(node: &Value, names: &mut std::collections::BTreeSet<String>) {
    if node["float_ops"].as_i64().unwrap() > 0 {
        names.insert(node["name"].as_str().unwrap().to_owned());
    }
    for child in node["children"].as_array().unwrap() {
        counted_by_tensorflow(child, names);
    }
}

/// `advise --default_op_log`'s UncountedFlopsChecker names, of the nodes
/// whose op type TF's flops registry has a formula for, exactly those
/// TF's `profile()` leaves at 0 float ops, each with its reason.
#[test]
fn advise_lists_the_registered_nodes_tensorflow_counts_no_float_ops_for() {
    let registered = crate::flops::registered_ops();
    let mut failures = Vec::new();
    let mut listed_total = 0;
    let cases = cases_in("shapes/profile.json.gz");
    let scope_cases: Vec<&Value> = cases.iter().filter(|c| c["name"].as_str().unwrap().ends_with(".float_operation.scope")).collect();
    assert!(scope_cases.len() >= 7, "only {} graphs", scope_cases.len());
    for case in scope_cases {
        let mut counted = std::collections::BTreeSet::new();
        counted_by_tensorflow(&case["result"], &mut counted);
        let mut sources = inputs(case);
        sources.paths.estimate_flops = FlopsEstimate::TfDefaultOpLog;
        let loaded = rtfprof::load::load(&sources, rtfprof::load::Purpose::Advise).unwrap();
        let expected: std::collections::BTreeSet<String> =
            loaded.stats.nodes.iter().filter(|n| registered.iter().any(|op| op == n.op) && !counted.contains(&*n.name)).map(|n| n.name.to_string()).collect();
        let (checkers, _) = rtfprof::api::advise(&sources).unwrap();
        let checker = checkers.iter().find(|c| c.name == "UncountedFlopsChecker").expect("no UncountedFlopsChecker");
        // "NAME (OP): float ops not counted: REASON"; op types without a
        // formula are listed as "OP (N nodes, e.g. NAME): …".
        let listed: std::collections::BTreeSet<String> = checker
            .reports
            .iter()
            .filter_map(|line| {
                let (name, rest) = line.split_once(" (")?;
                let (op, _) = rest.split_once("): float ops not counted: ")?;
                registered.iter().any(|r| r == op).then(|| name.to_owned())
            })
            .collect();
        listed_total += listed.len();
        if listed != expected {
            let missing: Vec<_> = expected.difference(&listed).collect();
            let extra: Vec<_> = listed.difference(&expected).collect();
            failures.push(format!("{}: not listed {missing:?}, listed but counted by TF {extra:?}", case["name"]));
        }
    }
    assert!(listed_total > 0, "no graph has an uncounted node: the test checks nothing");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Without estimates, `advise` is tfprof's: no UncountedFlopsChecker.
#[test]
fn advise_without_estimates_has_no_uncounted_flops_checker() {
    let cases = cases_in("shapes/profile.json.gz");
    let (checkers, _) = rtfprof::api::advise(&inputs(&cases[0])).unwrap();
    assert!(checkers.iter().all(|c| c.name != "UncountedFlopsChecker"));
}
