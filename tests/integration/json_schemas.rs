//! Every JSON document rtfprof writes, checked against its schema in
//! `schemas/` (JSON Schema draft 2020-12): the views' `--output json`, the
//! `steps`, `memory`, `hlo`, `kernels`, `ranks`, `diff` and `check` JSON, and the data embedded in the
//! HTML pages of `report` and `diff`. The real binary runs on the committed
//! fixtures of every input kind (TF1 run metadata, profiles, event files,
//! jobs and checkpoints; the XPlane traces of TF, JAX on CPU and GPU; the
//! PyTorch traces), and on `../shared/traces` when it is there.
//!
//! The schemas are the user documentation of the outputs, so they are
//! checked too: each is a valid draft 2020-12 schema, describes every field,
//! uses every definition it has and is used by a fixture case; and a
//! document with a required key removed fails, so these checks can fail.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{page_data, rtfprof, shared_traces, testdata};
use serde_json::Value;

/// Where a case's document comes from.
#[derive(Clone, Debug)]
enum Out {
    /// `--output json:outfile=PATH`.
    Json,
    /// `--output html:outfile=PATH`: the page's `rtfprof-data` element.
    Html,
    /// The `tfprof>` prompt, given this command line, `-output json:…`
    /// appended.
    Prompt(&'static str),
}

/// One run of rtfprof and the schema its output must match.
#[derive(Clone, Debug)]
struct Case {
    /// `schemas/<schema>.schema.json`.
    schema: &'static str,
    args: Vec<String>,
    out: Out,
}

fn case(schema: &'static str, command: &str, inputs: &[String]) -> Case {
    let mut args = vec![command.to_owned()];
    args.extend(inputs.iter().cloned());
    let out = if schema == "report" { Out::Html } else { Out::Json };
    Case { schema, args, out }
}

fn data(path: &str) -> String {
    testdata().join(path).display().to_string()
}

/// The graph, three run metadata files and the op log of a TF1 fixture.
fn tf1(model: &str) -> Vec<String> {
    common::fixture_flags(model)
}

fn xplane(name: &str) -> Vec<String> {
    vec![format!("--xplane_path={}", data(&format!("xplane/{name}")))]
}

const VIEWS: [&str; 4] = ["scope", "graph", "op", "code"];

/// The cases on the committed fixtures: every command with JSON output on
/// every input kind it takes, where the input has what the command needs
/// (a refusal there would fail the case).
fn fixture_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // TF1: graph, run metadata of three steps (per-step statistics) and op
    // log with code traces.
    for model in ["cnn", "cnn_b8", "mlp", "matmuls", "while", "gpu_synth"] {
        let inputs = tf1(model);
        for view in VIEWS {
            cases.push(case("view", view, &inputs));
        }
        for (schema, command) in [("memory", "memory"), ("steps", "steps"), ("report", "report")] {
            cases.push(case(schema, command, &inputs));
        }
    }
    // Other TF1 inputs: one step (no per-step statistics), profiles, event
    // files, jobs, a checkpoint.
    let others: [(Vec<String>, &[&str], bool); 6] = [
        (vec![format!("--graph_path={}", data("cnn/graph.pb")), format!("--run_meta_path={}", data("cnn/run_meta_1"))], &["scope", "graph", "op"], true),
        (vec![format!("--profile_path={}", data("cnn/profile"))], &VIEWS, true),
        (vec![format!("--profile_path={}", data("gpu_synth/profile"))], &VIEWS, true),
        (
            vec![format!("--events_path={}", data("events/tutorial")), format!("--op_log_path={}", data("events/tutorial.tfprof_log"))],
            &["scope", "graph", "op"],
            true,
        ),
        (vec![format!("--job=worker0={}", data("jobs/worker0")), format!("--job=worker1={}", data("jobs/worker1"))], &["scope", "graph", "op"], true),
        // (A checkpoint alone has no steps.)
        (
            vec![format!("--graph_path={}", data("ckpt/graph.pbtxt")), format!("--checkpoint_path={}", data("ckpt/model.ckpt"))],
            &["scope", "graph", "op"],
            false,
        ),
    ];
    for (inputs, views, steps) in others {
        for view in views {
            cases.push(case("view", view, &inputs));
        }
        cases.push(case("memory", "memory", &inputs));
        cases.push(case("report", "report", &inputs));
        if steps {
            cases.push(case("steps", "steps", &inputs));
        }
    }
    // rtfprof check: identical runs, an improvement (the wider layer as
    // baseline), and too few steps (TF1 profiles of 3 steps).
    // The PyTorch and TF2 runs add each allocator's peak memory (the
    // memory variants as baselines: the peaks improve, and the check passes).
    for pair in [
        ["check/base_a", "check/base_b"],
        ["check/wider", "check/base_a"],
        ["cnn/profile", "cnn_b8/profile"],
        ["check/torch_memory", "check/torch_base_a"],
        ["check/tf_memory", "check/tf_base_b"],
    ] {
        cases.push(case("check", "check", &pair.map(data)));
    }
    // A PyTorch trace of an H200 with its kernels (two steps: judged with
    // --min_steps 2, as the ranks below).
    let h200 = data("pytorch/h200_tx.steps2-3.pt.trace.json.gz");
    cases.push(case("check", "check", &[h200.clone(), h200, "--min_steps=2".to_owned()]));
    // A job of 16 ranks: each rank's communication.
    let ranks = data("pytorch/ranks16");
    cases.push(case("check", "check", &[ranks.clone(), ranks, "--min_steps=2".to_owned()]));
    // A rules file's budgets (one exceeded: the check fails) and ignored
    // metrics.
    let mut with_rules = ["check/tf_base_a", "check/tf_wider"].map(data).to_vec();
    with_rules.push(format!("--rules={}", data("check/rules.toml")));
    cases.push(case("check", "check", &with_rules));
    // The views' JSON written at the tfprof> prompt.
    cases.push(Case { schema: "view", args: vec![format!("--profile_path={}", data("cnn/profile"))], out: Out::Prompt("op -max_depth 5") });
    // XPlane: (fixture, code view, steps, hlo, kernels). The TF traces have
    // no Python stacks for the code view nor XLA programs; gpu_synth,
    // keras_fit and while_loop have no steps as XProf finds them.
    let traces = [
        ("gpu_synth", false, false, false, false),
        ("jax_gpu_cnn", true, true, true, true),
        ("jax_gpu_lstm", true, true, true, true),
        ("jax_gpu_lstm_nocb", true, true, true, true),
        ("jax_gpu_mlp", true, true, true, true),
        ("jax_gpu_mlp_nocb", true, true, true, true),
        ("jax_gpu_xfer", true, true, true, true),
        ("jax_jit", true, true, true, false),
        ("keras_fit", false, false, false, false),
        ("many_steps", false, true, false, false),
        ("region_past_marker", false, true, false, false),
        ("tf_data_loop", false, true, false, false),
        ("tf_loop", false, true, false, false),
        ("two_hosts", false, true, false, false),
        ("while_loop", false, false, false, false),
    ];
    for (name, code, steps, hlo, kernels) in traces {
        let inputs = xplane(name);
        for view in ["scope", "op"].into_iter().chain(code.then_some("code")) {
            cases.push(case("view", view, &inputs));
        }
        cases.push(case("memory", "memory", &inputs));
        cases.push(case("report", "report", &inputs));
        for (wanted, schema) in [(steps, "steps"), (hlo, "hlo"), (kernels, "kernels")] {
            if wanted {
                cases.push(case(schema, schema, &inputs));
            }
        }
    }
    // Two JAX GPU traces as jobs: every row and program names its job.
    let host = |name: &str| data(&format!("xplane/{name}/plugins/profile/run0/host0.xplane.pb"));
    let jobs = vec![format!("--job=a={}", host("jax_gpu_mlp")), format!("--job=b={}", host("jax_gpu_cnn"))];
    for view in ["scope", "op", "code"] {
        cases.push(case("view", view, &jobs));
    }
    for schema in ["memory", "steps", "hlo", "kernels", "report"] {
        cases.push(case(schema, schema, &jobs));
    }
    // PyTorch CPU traces, one each and the directory of them (ranks).
    for (trace, code) in [("schedule.pt.trace.json.gz", true), ("shapes_merges.pt.trace.json", false), ("threads_memory.pt.trace.json", false), ("", true)] {
        let path = testdata().join("pytorch").join(trace);
        let inputs = vec![format!("--pytorch_path={}", path.display())];
        for view in ["scope", "op"].into_iter().chain(code.then_some("code")) {
            cases.push(case("view", view, &inputs));
        }
        for schema in ["memory", "steps", "report"] {
            cases.push(case(schema, schema, &inputs));
        }
    }
    // PyTorch GPU traces: the kernels.
    for trace in ["h200_resnet18", "h200_tx"] {
        cases.push(case("kernels", "kernels", &[format!("--pytorch_path={}", data(&format!("pytorch/{trace}.steps2-3.pt.trace.json.gz")))]));
    }
    // rtfprof ranks: generated GPU ranks, real gloo CPU ranks, XPlane hosts.
    for inputs in [vec![format!("--pytorch_path={}", data("pytorch/ranks16"))], vec![format!("--pytorch_path={}", data("pytorch/gloo3"))], xplane("two_hosts")]
    {
        cases.push(case("ranks", "ranks", &inputs));
        cases.push(case("report", "report", &inputs));
    }
    // rtfprof diff's page: profiles, two steps of one, saved text outputs,
    // traces.
    let diffs = [
        vec![format!("--left_profile_path={}", data("cnn_b8/profile")), format!("--right_profile_path={}", data("cnn/profile"))],
        vec![format!("--profile_path={}", data("cnn/profile")), "--left_step=0".into(), "--right_step=2".into()],
        vec![format!("--left_text={}", data("golden/cnn_b8.scope.diff_side.out")), format!("--right_text={}", data("golden/cnn.scope.diff_side.out"))],
        vec![
            format!("--left_xplane_path={}", data("xplane/jax_gpu_mlp")),
            format!("--right_xplane_path={}", data("xplane/jax_gpu_mlp_nocb")),
            "--view=code".into(),
        ],
        vec![
            format!("--left_pytorch_path={}", data("pytorch/schedule.pt.trace.json.gz")),
            format!("--right_pytorch_path={}", data("pytorch/threads_memory.pt.trace.json")),
        ],
    ];
    for sides in diffs {
        cases.push(case("report", "diff", &sides));
        cases.push(case("diff", "diff", &sides));
    }
    cases
}

/// The cases on `../shared/traces` (real JAX and TF GPU traces, a TPU
/// trace, PyTorch GPU traces); `None`, saying so, when it is absent.
fn shared_cases() -> Option<Vec<Case>> {
    let root = shared_traces();
    if !root.is_dir() {
        eprintln!("skipped: {} is absent (it is not part of the repository)", root.display());
        return None;
    }
    let mut cases = Vec::new();
    let mut add = |flag: &str, dir: PathBuf, views: &[&str], schemas: &[&'static str]| {
        if !dir.exists() {
            eprintln!("skipped: {} is absent", dir.display());
            return;
        }
        let inputs = vec![format!("--{flag}={}", dir.display())];
        for view in views {
            cases.push(case("view", view, &inputs));
        }
        for &schema in schemas {
            cases.push(case(schema, schema, &inputs));
        }
    };
    for trace in common::JAX_GPU_TRACES {
        add("xplane_path", root.join("jax_h200").join(trace), &["scope", "op", "code"], &["memory", "steps", "hlo", "kernels", "report"]);
    }
    // (TF's trace runs no XLA program; rtfprof steps refuses TPU traces and
    // a TPU runs no GPU kernels.)
    add("xplane_path", root.join("tf2_bert_8gpu/run"), &["scope", "op"], &["memory", "steps", "kernels", "report"]);
    add("xplane_path", root.join("xla_tpu_inference/run"), &["scope", "op", "code"], &["memory", "hlo", "report"]);
    for trace in ["torch_tx", "torch_resnet18"] {
        add("pytorch_path", root.join("torch_h200").join(trace), &["scope", "op", "code"], &["memory", "steps", "kernels", "report"]);
    }
    Some(cases)
}

fn schemas_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas")
}

/// Every schema file by name (`view` for `schemas/view.schema.json`).
fn schema_files() -> BTreeMap<String, Value> {
    let mut schemas = BTreeMap::new();
    for entry in std::fs::read_dir(schemas_dir()).expect("schemas/ exists") {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_str().unwrap().to_owned();
        let name = file.strip_suffix(".schema.json").unwrap_or_else(|| panic!("schemas/{file}: schema files are named NAME.schema.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        let schema = serde_json::from_str(&text).unwrap_or_else(|e| panic!("schemas/{file} is not JSON: {e}"));
        schemas.insert(name.to_owned(), schema);
    }
    schemas
}

fn validators() -> BTreeMap<String, jsonschema::Validator> {
    schema_files()
        .into_iter()
        .map(|(name, schema)| {
            let validator = jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("schemas/{name}.schema.json does not compile: {e}"));
            (name, validator)
        })
        .collect()
}

/// What is wrong with a document, one line an error (at most 10); empty
/// when it matches.
fn errors(validator: &jsonschema::Validator, document: &Value) -> Vec<String> {
    validator.iter_errors(document).take(10).map(|e| format!("at '{}': {e}", e.instance_path())).collect()
}

/// Runs a case: the document it writes.
fn document(case: &Case) -> Result<Value, String> {
    let dir = tempfile::tempdir().unwrap();
    let mut args = case.args.clone();
    let mut stdin = String::new();
    let path = match &case.out {
        Out::Json => {
            let path = dir.path().join("out.json");
            args.push(format!("--output=json:outfile={}", path.display()));
            path
        }
        Out::Html => {
            let path = dir.path().join("out.html");
            args.push(format!("--output=html:outfile={}", path.display()));
            path
        }
        Out::Prompt(command) => {
            let path = dir.path().join("out.json");
            stdin = format!("{command} -output json:outfile={}\nquit\n", path.display());
            path
        }
    };
    let output = rtfprof(&args).stdin(stdin).run();
    // (`check` exits 1 for a failed check, which writes its document too.)
    let failed_check = case.schema == "check" && output.code() == Some(1);
    if !output.success() && !failed_check {
        return Err(format!("exit {:?}: {}", output.code(), output.stderr_lossy().trim()));
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    match case.out {
        Out::Html => page_data(&text),
        _ => serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}")),
    }
}

/// Runs the cases, two at a time, and checks each document against its
/// schema; fails listing every case that failed.
fn check(cases: &[Case]) {
    let validators = validators();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(4));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(case) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let validator = validators.get(case.schema).unwrap_or_else(|| panic!("no schemas/{}.schema.json", case.schema));
                    let problems = match document(case) {
                        Ok(document) => errors(validator, &document),
                        Err(e) => vec![e],
                    };
                    if !problems.is_empty() {
                        let what = format!("rtfprof {} ({:?}) against schemas/{}.schema.json", case.args.join(" "), case.out, case.schema);
                        failures.lock().unwrap().push(format!("{what}:\n  {}", problems.join("\n  ")));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
    eprintln!("{} documents match their schemas", cases.len());
}

#[test]
fn fixture_outputs_match_their_schemas() {
    check(&fixture_cases());
}

#[test]
fn shared_trace_outputs_match_their_schemas() {
    if let Some(cases) = shared_cases() {
        check(&cases);
    }
}

/// The `#/$defs/NAME` references anywhere in a schema.
fn refs(value: &Value, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                out.insert(target.clone());
            }
            map.values().for_each(|v| refs(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
        _ => {}
    }
}

/// The properties without a description: each property of an object
/// schema describes itself, or refers to a definition that does. (The
/// conditions of `if`/`then`/`else` and the refinements beside a `$ref`
/// restate fields documented elsewhere.)
fn undescribed(value: &Value, root: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            let refinement = map.contains_key("$ref");
            for (key, v) in map {
                if matches!(key.as_str(), "if" | "then" | "else") || (refinement && key == "properties") {
                    continue;
                }
                if key == "properties" {
                    for (name, property) in v.as_object().into_iter().flatten() {
                        let described = property.get("description").is_some()
                            || property
                                .get("$ref")
                                .and_then(Value::as_str)
                                .and_then(|r| r.strip_prefix('#'))
                                .and_then(|p| root.pointer(p))
                                .is_some_and(|d| d.get("description").is_some());
                        if !described {
                            out.push(format!("{at}/properties/{name}"));
                        }
                    }
                }
                undescribed(v, root, &format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => items.iter().enumerate().for_each(|(i, v)| undescribed(v, root, &format!("{at}/{i}"), out)),
        _ => {}
    }
}

/// The report's `ranks` member is `rtfprof ranks`' document: the report
/// schema holds a copy of `schemas/ranks.schema.json` (its definitions as
/// `ranks_*`; a schema file stands alone, for validators without a
/// registry), which must not drift from it.
#[test]
fn the_reports_ranks_are_the_ranks_schema() {
    fn prefixed(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| match (k.as_str(), x.as_str().and_then(|r| r.strip_prefix("#/$defs/"))) {
                        ("$ref", Some(name)) => (k.clone(), Value::String(format!("#/$defs/ranks_{name}"))),
                        _ => (k.clone(), prefixed(x)),
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(prefixed).collect()),
            other => other.clone(),
        }
    }
    let schemas = schema_files();
    let (ranks, report) = (&schemas["ranks"], &schemas["report"]);
    let defs = &report["$defs"];
    let mut document = ranks.as_object().unwrap().clone();
    for key in ["$schema", "title", "$defs"] {
        document.remove(key);
    }
    assert_eq!(defs["ranks_document"], prefixed(&Value::Object(document)), "report.schema.json's ranks_document");
    for (name, def) in ranks["$defs"].as_object().unwrap() {
        assert_eq!(defs[format!("ranks_{name}")], prefixed(def), "report.schema.json's ranks_{name}");
    }
}

#[test]
fn every_schema_is_valid_documented_and_used() {
    let schemas = schema_files();
    assert!(schemas.len() >= 6, "schemas/ should hold a schema per JSON output, found {:?}", schemas.keys());
    for (name, schema) in &schemas {
        let file = format!("schemas/{name}.schema.json");
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{file}: not declared draft 2020-12");
        if let Err(e) = jsonschema::meta::validate(schema) {
            panic!("{file} is not a valid schema: {e} (at '{}')", e.instance_path());
        }
        jsonschema::draft202012::new(schema).unwrap_or_else(|e| panic!("{file} does not compile: {e}"));
        for key in ["title", "description"] {
            assert!(schema[key].is_string(), "{file}: no {key}");
        }
        let mut missing = Vec::new();
        undescribed(schema, schema, "#", &mut missing);
        assert!(missing.is_empty(), "{file}: properties without a description: {missing:?}");
        // Every definition is used, and every reference resolves.
        let mut used = BTreeSet::new();
        refs(schema, &mut used);
        for target in &used {
            let resolved = target.strip_prefix('#').and_then(|p| schema.pointer(p));
            assert!(resolved.is_some(), "{file}: {target} resolves to nothing");
        }
        for def in schema.get("$defs").and_then(Value::as_object).into_iter().flat_map(|d| d.keys()) {
            assert!(used.contains(&format!("#/$defs/{def}")), "{file}: $defs/{def} is used nowhere");
        }
    }
    // Every schema checks some output of the committed fixtures, and every
    // case names a schema that exists.
    let used: BTreeSet<&str> = fixture_cases().iter().map(|c| c.schema).collect();
    let files: BTreeSet<&str> = schemas.keys().map(String::as_str).collect();
    assert_eq!(used, files, "schemas/ and the schemas the fixture cases check differ");
}

/// A fixture case's document with a key removed from the object at
/// `parent` (a JSON pointer); panics if there is no such key.
fn without(mut document: Value, parent: &str, key: &str) -> Value {
    let object = document.pointer_mut(parent).and_then(Value::as_object_mut).unwrap_or_else(|| panic!("no object at {parent}"));
    assert!(object.remove(key).is_some(), "no key {key} at {parent}");
    document
}

#[test]
fn a_document_missing_a_required_key_or_with_an_unknown_one_fails() {
    let validators = validators();
    let cnn = tf1("cnn");
    let profile = vec![format!("--profile_path={}", data("cnn/profile"))];
    let mlp = xplane("jax_gpu_mlp");
    let torch = vec![format!("--pytorch_path={}", data("pytorch/schedule.pt.trace.json.gz"))];
    let diff = case("report", "diff", &[format!("--profile_path={}", data("cnn/profile")), "--left_step=0".into(), "--right_step=2".into()]);
    // (case, the object a required key is removed from, the key)
    let mutations = [
        (case("view", "scope", &cnn), "/root/children/0/total", "exec_micros"),
        (case("view", "scope", &cnn), "/root/children/0", "per_step"),
        (case("view", "op", &cnn), "", "units"),
        (case("steps", "steps", &cnn), "/steps/0", "other_us"),
        (case("steps", "steps", &mlp), "/steps/0", "device_idle_us"),
        (case("steps", "steps", &torch), "/steps/0", "cpu_step_us"),
        (case("steps", "steps", &torch), "", "gpu_time"),
        (case("memory", "memory", &cnn), "/steps/0/allocators/cpu", "peak_micros"),
        (case("memory", "memory", &mlp), "/programs/0/live_at_peak/0", "kind"),
        (case("hlo", "hlo", &mlp), "/hlo_ops/0", "occurrences"),
        (case("kernels", "kernels", &mlp), "/kernels/0", "block_dim"),
        (case("report", "report", &profile), "/header", "title"),
        (case("report", "report", &mlp), "/device/kernels", "occupancy_pct"),
        (diff, "/diff", "listed"),
    ];
    let mut documents: BTreeMap<String, Value> = BTreeMap::new();
    for (case, parent, key) in mutations {
        let validator = &validators[case.schema];
        let name = format!("rtfprof {} ({:?})", case.args.join(" "), case.out);
        let original = documents.entry(name.clone()).or_insert_with(|| document(&case).unwrap_or_else(|e| panic!("{name}: {e}"))).clone();
        assert_eq!(errors(validator, &original), Vec::<String>::new(), "{name}: the document itself should match");
        let mutated = without(original.clone(), parent, key);
        assert!(!errors(validator, &mutated).is_empty(), "{name} without {parent}/{key} still matches schemas/{}.schema.json", case.schema);
        // An unknown key where the shape is closed fails too.
        let mut extra = original;
        extra.pointer_mut(parent).and_then(Value::as_object_mut).unwrap().insert("unexpected".into(), Value::Null);
        assert!(!errors(validator, &extra).is_empty(), "{name} with {parent}/unexpected still matches schemas/{}.schema.json", case.schema);
    }
    // A wrong type or a negative count fails: the diff page's root listed
    // at a negative depth, a view's node with a negative depth.
    let mut page = documents.into_iter().find(|(name, _)| name.contains("--left_step=0")).unwrap().1;
    page["diff"]["listed"][0][1] = (-1).into();
    assert!(!errors(&validators["report"], &page).is_empty(), "a negative depth in diff.listed still matches");
    let mut view = document(&case("view", "scope", &profile)).unwrap();
    view["root"]["children"][0]["depth"] = "1".into();
    assert!(!errors(&validators["view"], &view).is_empty(), "a string depth still matches");
}
