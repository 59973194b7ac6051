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
