//! `rtfprof check` on real runs (testdata/check, by tools/check/gen_runs.py):
//! two runs of one JAX program, the program with a wider layer, and with an
//! extra op. The decisions are what is tested (they do not depend on the
//! exact timings), and each output's syntax: JUnit parsed by quick-xml,
//! GitHub annotations by the workflow-command grammar, JSON and benchmark
//! documents by serde.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{rtfprof, testdata};

fn run_dir(name: &str) -> String {
    testdata().join("check").join(name).display().to_string()
}

/// Runs `check BASELINE NEW extra…` with a JSON output too: (exit code,
/// stdout, the JSON document).
fn check(baseline: &str, new: &str, extra: &[&str]) -> (i32, String, Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("check.json");
    let mut args = vec!["check".to_owned(), baseline.to_owned(), new.to_owned(), "--output".into(), "stdout".into()];
    args.push(format!("--output=json:outfile={}", json.display()));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let out = rtfprof(&args).run();
    let code = out.code().expect("exited");
    assert!(code == 0 || code == 1, "exit {code}: {}", out.stderr_lossy());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).expect("the JSON output")).expect("JSON");
    (code, out.stdout_lossy().into_owned(), doc)
}

fn labels_with(doc: &Value, verdict: &str) -> Vec<String> {
    doc["metrics"].as_array().unwrap().iter().filter(|m| m["verdict"] == verdict).map(|m| m["label"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn identical_runs_pass() {
    let (code, stdout, doc) = check(&run_dir("base_a"), &run_dir("base_b"), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(doc["passed"], true);
    assert!(labels_with(&doc, "regression").is_empty());
    assert!(stdout.trim_end().ends_with(doc["summary"].as_str().unwrap()), "{stdout}");
    assert!(stdout.contains("PASS: no regression"), "{stdout}");
}

#[test]
fn a_wider_layer_fails_and_names_its_op() {
    let (code, stdout, doc) = check(&run_dir("base_a"), &run_dir("wider"), &[]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(doc["passed"], false);
    let regressed = labels_with(&doc, "regression");
    // The step, and the forward dense op of the layer made wider.
    for want in ["step_time", "op:jit(step)/jvp(layer2)/dot_general"] {
        assert!(regressed.iter().any(|r| r == want), "{want} not among {regressed:?}");
    }
    assert!(stdout.contains("FAIL: ") && stdout.contains("op:jit(step)/jvp(layer2)/dot_general"), "{stdout}");
    // The XLA instructions of layer 2's forward and backward dots
    // (`rtfprof hlo --xplane_path testdata/check/wider` names their
    // framework ops), and none of layer 1's.
    for want in ["hlo:jit_step/ynn_fusion.3", "hlo:jit_step/ynn_fusion"] {
        assert!(regressed.iter().any(|r| r == want), "{want} not among {regressed:?}");
    }
    assert!(!regressed.iter().any(|r| r == "hlo:jit_step/ynn_fusion.4" || r == "hlo:jit_step/dot"), "{regressed:?}");
    // Every regression passed both gates.
    for m in doc["metrics"].as_array().unwrap().iter().filter(|m| m["verdict"] == "regression") {
        assert!(m["change"].as_f64().unwrap() > m["threshold"].as_f64().unwrap(), "{m}");
        assert!(m["p_value"].as_f64().unwrap() < doc["options"]["alpha"].as_f64().unwrap(), "{m}");
    }
}

#[test]
fn swapped_runs_are_improvements_and_pass() {
    let (code, stdout, doc) = check(&run_dir("wider"), &run_dir("base_a"), &[]);
    assert_eq!(code, 0, "{stdout}");
    let improved = labels_with(&doc, "improvement");
    assert!(improved.iter().any(|l| l == "step_time"), "{improved:?}");
    assert!(stdout.contains("improved"), "{stdout}");
}

#[test]
fn an_extra_op_is_reported_as_appearing() {
    let (_, stdout, doc) = check(&run_dir("base_a"), &run_dir("extra_op"), &[]);
    assert!(labels_with(&doc, "appeared").iter().any(|l| l == "count:jit(step)/jvp(extra)/tanh"), "{stdout}");
    assert!(stdout.contains("appeared") && stdout.contains("jit(step)/jvp(extra)/tanh"), "{stdout}");
    // The other way round, it disappears.
    let (_, _, back) = check(&run_dir("extra_op"), &run_dir("base_a"), &[]);
    assert!(labels_with(&back, "disappeared").iter().any(|l| l == "count:jit(step)/jvp(extra)/tanh"));
}

#[test]
fn thresholds_are_flags() {
    // The same runs pass once the step, the ops and the categories may grow
    // threefold (the wider layer's step time grows by much less).
    let (code, stdout, _) = check(&run_dir("base_a"), &run_dir("wider"), &["--max_regression=300%", "--max_op_regression", "3"]);
    assert_eq!(code, 0, "{stdout}");
    // A threshold for one metric overrides the general one.
    let (code, _, doc) = check(&run_dir("base_a"), &run_dir("wider"), &["--max_regression=300%", "--max_op_regression=3", "--threshold=step_time=1%"]);
    assert_eq!(code, 1);
    assert_eq!(labels_with(&doc, "regression"), ["step_time"]);
    // Layer 3's matrix multiplication doubled by a small part of the step:
    // step unmoved, until --min_part_growth asks less of a part.
    let layer3 = "op:jit(step)/jvp(layer3)/dot_general".to_owned();
    let (_, _, doc) = check(&run_dir("base_a"), &run_dir("wider"), &[]);
    assert!(labels_with(&doc, "step_unmoved").contains(&layer3), "{:?}", labels_with(&doc, "step_unmoved"));
    let (code, _, doc) = check(&run_dir("base_a"), &run_dir("wider"), &["--min_part_growth=0.5%"]);
    assert_eq!(code, 1);
    assert!(labels_with(&doc, "regression").contains(&layer3), "{:?}", labels_with(&doc, "regression"));
    assert_eq!(doc["options"]["min_part_growth"], 0.005);
    assert_eq!(metric(&doc, "step_time")["threshold"], 0.05);
}

#[test]
fn too_few_steps_pass_saying_so() {
    // TF1 profiles of 3 steps each.
    let cnn = testdata().join("cnn/profile").display().to_string();
    let b8 = testdata().join("cnn_b8/profile").display().to_string();
    let (code, stdout, doc) = check(&cnn, &b8, &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("too few steps to judge"), "{stdout}");
    assert_eq!(labels_with(&doc, "too_few_steps").first().map(String::as_str), Some("step_time"));
}

/// Runs a failing check with every file output: their paths by kind.
fn all_outputs(dir: &Path) -> (i32, String, [PathBuf; 4]) {
    let paths = ["check.xml", "check.md", "bench.json", "check.txt"].map(|f| dir.join(f));
    let args = [
        "check".to_owned(),
        run_dir("base_a"),
        run_dir("wider"),
        format!("--output=junit:outfile={}", paths[0].display()),
        format!("--output=markdown:outfile={}", paths[1].display()),
        format!("--output=benchmark:outfile={}", paths[2].display()),
        format!("--output=file:outfile={}", paths[3].display()),
        "--output=github".to_owned(),
    ];
    let out = rtfprof(&args).run();
    (out.code().unwrap(), out.stdout_lossy().into_owned(), paths)
}

#[test]
fn junit_is_well_formed_xml_with_a_failure_per_regression() {
    use quick_xml::Reader;
    use quick_xml::events::Event;
    let dir = tempfile::tempdir().unwrap();
    let (code, _, [xml, ..]) = all_outputs(dir.path());
    assert_eq!(code, 1);
    let text = std::fs::read_to_string(&xml).unwrap();
    let mut reader = Reader::from_str(&text);
    let (mut depth, mut testcases, mut failures, mut declared) = (0i32, 0, 0, None);
    loop {
        match reader.read_event().unwrap_or_else(|e| panic!("not well-formed at {}: {e}\n{text}", reader.buffer_position())) {
            Event::Start(e) => {
                depth += 1;
                match e.name().as_ref() {
                    b"testcase" => testcases += 1,
                    b"failure" => failures += 1,
                    b"testsuite" => {
                        let attr = e.try_get_attribute("failures").unwrap().expect("failures=");
                        declared = Some(std::str::from_utf8(&attr.value).unwrap().parse::<usize>().unwrap());
                    }
                    _ => {}
                }
            }
            Event::End(_) => depth -= 1,
            Event::Empty(e) if e.name().as_ref() == b"testcase" => testcases += 1,
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    assert!(testcases >= 3, "{testcases} testcases");
    assert!(failures >= 2, "{failures} failures");
    assert_eq!(declared, Some(failures));
    // Names from the profile are in attributes, escaped by the writer.
    assert!(text.contains(r#"name="op:jit(step)/jvp(layer2)/dot_general""#), "{text}");
}

#[test]
fn github_annotations_follow_the_workflow_command_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stdout, _) = all_outputs(dir.path());
    let line = regex::Regex::new(r"^::(error|warning|notice) title=([^:,\r\n]*)::([^\r\n]*)$").unwrap();
    let mut errors = 0;
    for l in stdout.lines() {
        let caps = line.captures(l).unwrap_or_else(|| panic!("not a workflow command: {l:?}"));
        // Properties escape ':' and ','; '%' only starts an escape.
        for part in [&caps[2], &caps[3]] {
            let stray = part.match_indices('%').any(|(i, _)| !["%25", "%0D", "%0A", "%3A", "%2C"].iter().any(|e| part[i..].starts_with(e)));
            assert!(!stray, "unescaped % in {l:?}");
        }
        errors += usize::from(&caps[1] == "error");
    }
    assert!(stdout.contains("::error title=rtfprof check%3A op%3Ajit(step)/jvp(layer2)/dot_general::"), "{stdout}");
    // One a regression, and the verdict.
    assert!(errors >= 3, "{stdout}");
    assert!(stdout.lines().last().unwrap().starts_with("::error title=rtfprof check::FAIL"), "{stdout}");
}

#[test]
fn markdown_benchmark_and_text_files() {
    let dir = tempfile::tempdir().unwrap();
    let (_, _, [_, md, bench, txt]) = all_outputs(dir.path());
    let md = std::fs::read_to_string(md).unwrap();
    // Parentheses and slashes of op names are escaped: no link, no emphasis.
    assert!(md.contains(r"op\:jit\(step\)\/jvp\(layer2\)\/dot\_general"), "{md}");
    assert!(md.lines().filter(|l| l.starts_with("| ")).all(|l| l.matches(" | ").count() == 6), "{md}");
    let bench: Value = serde_json::from_str(&std::fs::read_to_string(bench).unwrap()).unwrap();
    let entries = bench.as_array().unwrap();
    assert!(entries.iter().all(|e| e["name"].is_string() && e["unit"].is_string() && e["value"].is_number()), "{bench}");
    assert!(entries.iter().any(|e| e["name"] == "step_time"));
    assert!(std::fs::read_to_string(txt).unwrap().contains("FAIL: "));
}

#[test]
fn a_saved_baseline_decides_as_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("baseline.json");
    let out = rtfprof(["check".to_owned(), run_dir("base_a"), format!("--save_baseline={}", saved.display())]).run();
    assert!(out.success(), "{}", out.stderr_lossy());
    assert!(out.stdout_lossy().contains("written to"));
    let size = std::fs::metadata(&saved).unwrap().len();
    assert!(size < 20_000, "{size} bytes");
    for new in ["base_b", "wider", "extra_op"] {
        let (code, _, from_trace) = check(&run_dir("base_a"), &run_dir(new), &[]);
        let (saved_code, _, from_saved) = check(&saved.display().to_string(), &run_dir(new), &[]);
        assert_eq!(code, saved_code, "{new}");
        assert_eq!(from_trace["metrics"], from_saved["metrics"], "{new}");
    }
}

/// Several runs a side (BASELINE... NEW, `--new`, a baseline saved from
/// several runs): the runs' steps are pooled and each run's median is
/// kept, as the checks of one run each have it; the wider layer still
/// fails, naming its ops; a saved baseline of several runs decides as the
/// runs do.
#[test]
fn several_runs_a_side_pool_their_steps_and_keep_each_runs_median() {
    let (a, b, wider) = (run_dir("base_a"), run_dir("base_b"), run_dir("wider"));
    let (code, stdout, doc) = check(&a, &b, &[&wider]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("With 2 baseline runs and 1 new run, their steps are pooled"), "{stdout}");
    assert_eq!(doc["baseline_runs"], serde_json::json!([a, b]));
    assert_eq!(doc["new_runs"], serde_json::json!([wider]));
    let failed = labels_with(&doc, "regression");
    for op in ["op:jit(step)/jvp(layer2)/dot_general", "op:jit(step)/transpose(jvp(layer2))/dot_general", "step_time"] {
        assert!(failed.iter().any(|l| l == op), "{op} not in {failed:?}");
    }
    // Each run's median is the one its own check has, and the steps add up.
    let (_, _, of_a) = check(&a, &wider, &[]);
    let (_, _, of_b) = check(&b, &wider, &[]);
    let mut compared = 0;
    for m in doc["metrics"].as_array().unwrap().iter().filter(|m| !m["kind"].as_str().unwrap().contains("count")) {
        let label = m["label"].as_str().unwrap();
        let (Some(ma), Some(mb)) = (find(&of_a, label), find(&of_b, label)) else { continue };
        assert_eq!(m["baseline_run_medians"], serde_json::json!([ma["baseline_median"], mb["baseline_median"]]), "{label}");
        assert_eq!(m["new_run_medians"], serde_json::json!([ma["new_median"]]), "{label}");
        assert_eq!(m["baseline_steps"].as_u64().unwrap(), ma["baseline_steps"].as_u64().unwrap() + mb["baseline_steps"].as_u64().unwrap(), "{label}");
        compared += 1;
    }
    assert!(compared > 10, "{compared}");
    // Saved from several runs (with --new), the baseline decides as they do.
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("runs.json");
    let out = rtfprof(["check".to_owned(), "--new".into(), a.clone(), b.clone(), format!("--save_baseline={}", saved.display())]).run();
    assert!(out.success(), "{}", out.stderr_lossy());
    assert!(out.stdout_lossy().starts_with("Baseline of 2 runs ("), "{}", out.stdout_lossy());
    let (saved_code, _, from_saved) = check(&saved.display().to_string(), &wider, &[]);
    assert_eq!((saved_code, &from_saved["metrics"]), (code, &doc["metrics"]));
    // Two identical new runs against two identical baseline runs pass.
    let (code, stdout, doc) = check(&a, &b, &["--new", &run_dir("fresh_a"), &run_dir("fresh_b")]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!((doc["baseline_runs"].as_array().unwrap().len(), doc["new_runs"].as_array().unwrap().len()), (2, 2));
}

fn find<'a>(doc: &'a Value, label: &str) -> Option<&'a Value> {
    doc["metrics"].as_array().unwrap().iter().find(|m| m["label"] == label)
}

/// Bad inputs: one line naming the file or flag, exit 2 (1 means a
/// regression), and no output file.
#[test]
fn bad_inputs_exit_2_with_one_line_and_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let bad_baseline = dir.path().join("bad.json");
    std::fs::write(&bad_baseline, r#"{"rtfprof_check_baseline": 1, "steps": "no"}"#).unwrap();
    let bad_runs = dir.path().join("bad_runs.json");
    let one_run = r#"{"steps": ["1"], "metrics": [{"kind": "step_time", "name": "step_time", "samples": [1.0]}]}"#;
    std::fs::write(&bad_runs, format!(r#"{{"rtfprof_check_baseline": 2, "runs": [{one_run}, {{"steps": "no"}}]}}"#)).unwrap();
    let unreadable = dir.path().join("dir.json");
    std::fs::create_dir(&unreadable).unwrap();
    let missing = dir.path().join("missing").display().to_string();
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md").display().to_string();
    let (a, b) = (run_dir("base_a"), run_dir("base_b"));
    // Rules files: missing, not TOML, an unknown key, a bad regex, a bad
    // amount; each error names the file and the line.
    let rules = |name: &str, text: Option<&str>| {
        let path = dir.path().join(name);
        if let Some(text) = text {
            std::fs::write(&path, text).unwrap();
        }
        format!("--rules={}", path.display())
    };
    let bad_rules = [
        (rules("nope.toml", None), "--rules ".to_owned() + &dir.path().join("nope.toml").display().to_string() + ": No such file"),
        (rules("not_toml.toml", Some("{\"max_regression\": \"5%\"}\n")), "not_toml.toml: line 1: ".to_owned()),
        (rules("unknown_key.toml", Some("[defaults]\nmax_regresion = '5%'\n")), "unknown_key.toml: line 2: unknown field `max_regresion`".to_owned()),
        (
            rules("bad_regex.toml", Some("[[threshold]]\nmetric = 'op:(x'\nmax_regression = '5%'\n")),
            "bad_regex.toml: line 2: [[threshold]] metric: 'op:(x' is not a regex".to_owned(),
        ),
        (
            rules("bad_amount.toml", Some("[[budget]]\nmetric = 'step_time'\nmax = '20'\n")),
            "bad_amount.toml: line 3: [[budget]] max: '20' is not a time".to_owned(),
        ),
    ];
    let mut cases: Vec<(Vec<String>, &str)> = vec![
        (vec![a.clone(), missing.clone()], "NEW"),
        (vec![missing.clone(), b.clone()], "BASELINE"),
        (vec![a.clone(), readme.clone()], "NEW"),
        (vec![bad_baseline.display().to_string(), b.clone()], "bad.json"),
        (vec![unreadable.display().to_string(), b.clone()], "dir.json"),
        (vec![a.clone(), b.clone(), "--max_regression=five".into()], "--max_regression"),
        (vec![a.clone(), b.clone(), "--alpha=2".into()], "--alpha"),
        (vec![a.clone(), b.clone(), "--min_memory_change=lots".into()], "--min_memory_change"),
        (vec![a.clone(), b.clone(), "--min_part_growth=-2%".into()], "--min_part_growth"),
        (vec![a.clone(), b.clone(), "--max_memory_regression=-1%".into()], "--max_memory_regression"),
        (vec![a.clone(), b.clone(), "--threshold=step_time".into()], "--threshold"),
        (vec![a.clone(), b.clone(), "--output=junit".into()], "--output"),
        (vec![a.clone()], "NEW"),
        (vec![a.clone(), format!("--right_xplane_path={missing}")], "--right_xplane_path"),
        (vec![a.clone(), b.clone(), format!("--left_xplane_path={b}")], "BASELINE"),
        (vec![a.clone(), "--new".into(), b.clone(), format!("--right_xplane_path={b}")], "NEW"),
        (vec![a.clone(), b.clone(), "--new".into(), b.clone(), missing.clone()], "NEW"),
        (vec![bad_runs.display().to_string(), b.clone()], "bad_runs.json: run 2: "),
    ];
    cases.extend(bad_rules.iter().map(|(flag, says)| (vec![a.clone(), b.clone(), flag.clone()], says.as_str())));
    for (extra, names) in cases {
        let mut args = vec!["check".to_owned()];
        args.extend(extra);
        args.push(format!("--output=json:outfile={}", json.display()));
        let out = rtfprof(&args).run();
        let stderr = out.stderr_lossy();
        assert_eq!(out.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("rtfprof: ") && stderr.contains(names), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!json.exists(), "{args:?} wrote its output");
    }
}

/// The PyTorch and TensorFlow 2 CPU runs of testdata/check
/// (tools/check/gen_framework_runs.py): `<framework>_base_a`, `_base_b`
/// (the same program), `_wider` (layer 2 twice as wide), `_extra_op` (a
/// tanh in scope `extra`) and `_memory` (64 MiB more held during each step).
/// For each framework: the matmul of the widened layer, its `tanh` and its
/// CPU allocator.
const FRAMEWORKS: [(&str, &str, &str); 2] =
    [("torch", "op:layer2/aten::matmul/aten::mm", "count:extra/aten::tanh"), ("tf", "op:layer2/MatMul", "count:extra/Tanh")];

/// A check with every output that names metrics: (exit code, text, JSON,
/// JUnit XML, GitHub annotations).
struct Outputs {
    code: i32,
    text: String,
    json: Value,
    junit: String,
    github: String,
}

fn all_formats(baseline: &str, new: &str) -> Outputs {
    let dir = tempfile::tempdir().unwrap();
    let [json, junit, text] = ["check.json", "check.xml", "check.txt"].map(|f| dir.path().join(f));
    let args = [
        "check".to_owned(),
        run_dir(baseline),
        run_dir(new),
        format!("--output=json:outfile={}", json.display()),
        format!("--output=junit:outfile={}", junit.display()),
        format!("--output=file:outfile={}", text.display()),
        "--output=github".to_owned(),
    ];
    let out = rtfprof(&args).run();
    let code = out.code().expect("exited");
    assert!(code == 0 || code == 1, "exit {code}: {}", out.stderr_lossy());
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Outputs { code, text: read(&text), json: serde_json::from_str(&read(&json)).expect("JSON"), junit: read(&junit), github: out.stdout_lossy().into_owned() }
}

impl Outputs {
    /// `label` failed, and every format says so.
    fn assert_regressed(&self, label: &str) {
        let context = format!("{label}:\n{}\n{}", self.text, self.github);
        assert_eq!(self.code, 1, "{context}");
        assert_eq!(self.json["passed"], false);
        assert!(labels_with(&self.json, "regression").iter().any(|l| l == label), "{context}");
        let row = self.text.lines().find(|l| l.starts_with("REGRESSION") && l.ends_with(&format!("  {label}")));
        assert!(row.is_some(), "{context}");
        assert!(self.text.lines().last().is_some_and(|l| l.starts_with("FAIL: ") && l.contains(label)), "{context}");
        // A testcase named by the label, holding a <failure>.
        let case =
            self.junit.split("<testcase ").find(|c| c.contains(&format!("name=\"{label}\""))).unwrap_or_else(|| panic!("no testcase {label}: {}", self.junit));
        let case = case.split("</testcase>").next().unwrap();
        assert!(case.contains("<failure message=\"") && case.contains("type=\"regression\""), "{case}");
        let title = github::escape_property(&format!("rtfprof check: {label}"));
        assert!(self.github.lines().any(|l| l.starts_with(&format!("::error title={title}::"))), "{context}");
    }
}

/// What `--output github` escapes in a property (the toolkit's rules, as
/// crates/rtfprof/src/outputs/check/github.rs has them; tested there).
mod github {
    pub fn escape_property(text: &str) -> String {
        text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A").replace(':', "%3A").replace(',', "%2C")
    }
}

#[test]
fn frameworks_identical_runs_pass() {
    for (framework, ..) in FRAMEWORKS {
        let out = all_formats(&format!("{framework}_base_a"), &format!("{framework}_base_b"));
        assert_eq!(out.code, 0, "{framework}: {}", out.text);
        assert_eq!(out.json["passed"], true);
        assert!(out.text.contains("PASS: no regression"), "{}", out.text);
        assert!(!out.junit.contains("<failure"), "{}", out.junit);
        assert!(!out.github.contains("::error"), "{}", out.github);
        assert!(out.github.lines().last().unwrap().starts_with("::notice title=rtfprof check::PASS"), "{}", out.github);
        // The peak memory of each allocator is judged, and unchanged.
        let memory: Vec<&Value> = out.json["metrics"].as_array().unwrap().iter().filter(|m| m["kind"] == "peak_memory").collect();
        assert!(!memory.is_empty(), "{framework}: no peak_memory metric");
        for m in memory {
            assert_eq!(m["unit"], "bytes");
            assert_eq!(m["verdict"], "unchanged", "{m}");
            assert!(m["label"].as_str().unwrap().starts_with("memory:"), "{m}");
        }
    }
}

#[test]
fn frameworks_a_wider_layer_fails_naming_its_matmul() {
    for (framework, matmul, _) in FRAMEWORKS {
        all_formats(&format!("{framework}_base_a"), &format!("{framework}_wider")).assert_regressed(matmul);
    }
}

#[test]
fn frameworks_more_memory_fails_naming_the_allocators_peak() {
    for (framework, ..) in FRAMEWORKS {
        let out = all_formats(&format!("{framework}_base_a"), &format!("{framework}_memory"));
        let memory = labels_with(&out.json, "regression").into_iter().find(|l| l.starts_with("memory:"));
        let memory = memory.unwrap_or_else(|| panic!("{framework}: no memory regression:\n{}", out.text));
        out.assert_regressed(&memory);
        // 64 MiB more: the medians differ by about that.
        let row = out.json["metrics"].as_array().unwrap().iter().find(|m| m["label"] == memory.as_str()).unwrap();
        let grew = row["new_median"].as_f64().unwrap() - row["baseline_median"].as_f64().unwrap();
        assert!((grew - 64.0 * 1024.0 * 1024.0).abs() < 4e6, "{framework}: {row}");
        assert!(out.text.contains("MB"), "{}", out.text);
        // The other way round it is an improvement, and passes.
        let back = all_formats(&format!("{framework}_memory"), &format!("{framework}_base_a"));
        assert!(labels_with(&back.json, "improvement").contains(&memory), "{}", back.text);
        assert!(labels_with(&back.json, "regression").iter().all(|l| !l.starts_with("memory:")), "{}", back.text);
    }
}

#[test]
fn frameworks_an_extra_op_appears() {
    for (framework, _, tanh) in FRAMEWORKS {
        let out = all_formats(&format!("{framework}_base_a"), &format!("{framework}_extra_op"));
        assert!(labels_with(&out.json, "appeared").iter().any(|l| l == tanh), "{framework}: {}", out.text);
        assert!(out.text.lines().any(|l| l.starts_with("appeared") && l.ends_with(&format!("  {tanh}"))), "{}", out.text);
        let title = github::escape_property(&format!("rtfprof check: {tanh}"));
        assert!(out.github.lines().any(|l| l.starts_with(&format!("::warning title={title}::"))), "{}", out.github);
    }
}

#[test]
fn frameworks_a_saved_baseline_keeps_the_peak_memory() {
    let dir = tempfile::tempdir().unwrap();
    for (framework, ..) in FRAMEWORKS {
        let saved = dir.path().join(format!("{framework}.json"));
        let out = rtfprof(["check".to_owned(), run_dir(&format!("{framework}_base_a")), format!("--save_baseline={}", saved.display())]).run();
        assert!(out.success(), "{}", out.stderr_lossy());
        let (code, _, from_trace) = check(&run_dir(&format!("{framework}_base_a")), &run_dir(&format!("{framework}_memory")), &[]);
        let (saved_code, _, from_saved) = check(&saved.display().to_string(), &run_dir(&format!("{framework}_memory")), &[]);
        assert_eq!((code, &from_trace["metrics"]), (saved_code, &from_saved["metrics"]), "{framework}");
    }
}

#[test]
fn a_memory_threshold_is_a_flag() {
    let (code, stdout, doc) =
        check(&run_dir("torch_base_a"), &run_dir("torch_memory"), &["--max_memory_regression=10000%", "--max_regression=10000%", "--max_op_regression=10000%"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(doc["options"]["max_memory_regression"].as_f64().unwrap() == 100.0);
    let (code, _, doc) = check(
        &run_dir("torch_base_a"),
        &run_dir("torch_memory"),
        &["--max_memory_regression=10000%", "--max_regression=10000%", "--max_op_regression=10000%", "--threshold=memory:cpu=5%"],
    );
    assert_eq!(code, 1);
    assert_eq!(labels_with(&doc, "regression"), ["memory:cpu"]);
    // 64 MiB more is below a floor of 100 MB.
    let (_, stdout, doc) = check(&run_dir("torch_base_a"), &run_dir("torch_memory"), &["--min_memory_change=100MB", "--threshold=memory:cpu=5%"]);
    assert!(labels_with(&doc, "regression").iter().all(|l| l != "memory:cpu"), "{stdout}");
    assert_eq!(doc["options"]["min_memory_change"], 1e8);
}

/// Writes `text` as a rules file in `dir`; its path.
fn rules_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn metric<'a>(doc: &'a Value, label: &str) -> &'a Value {
    doc["metrics"].as_array().unwrap().iter().find(|m| m["label"] == label).unwrap_or_else(|| panic!("no metric {label}: {doc}"))
}

/// Budgets are judged on the new run's medians, whatever the baseline:
/// identical runs that pass fail once a budget is below their median, in
/// every format, naming the metric, the budget and the value; a budget
/// above it passes. (The budgets are set from the medians the check
/// reports, so the test does not depend on the recorded timings.)
#[test]
fn rules_a_budget_exceeded_fails_naming_metric_budget_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, plain) = check(&run_dir("torch_base_a"), &run_dir("torch_base_b"), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(plain["budgets"], Value::Array(Vec::new()));
    let step_ms = metric(&plain, "step_time")["new_median"].as_f64().unwrap() / 1e3;
    let peak = metric(&plain, "memory:cpu")["new_median"].as_f64().unwrap();
    let (tight, loose) = (format!("{:.3}ms", step_ms / 2.0), format!("{:.3}ms", step_ms * 2.0));
    let rules = rules_file(
        dir.path(),
        "budgets.toml",
        &format!(
            "[[budget]]\nmetric = 'step_time'\nmax = '{tight}'\n[[budget]]\nmetric = 'step_time'\nmax = '{loose}'\n\
             [[budget]]\nmetric = 'memory:.*'\nmax = '{}B'\n[[budget]]\nmetric = 'memory:gpu.*'\nmax = '1GB'\n",
            (peak / 2.0).round()
        ),
    );
    let (code, stdout, doc) = check(&run_dir("torch_base_a"), &run_dir("torch_base_b"), &[&format!("--rules={rules}")]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(doc["passed"], false);
    assert!(labels_with(&doc, "regression").is_empty(), "{stdout}");
    let budgets = doc["budgets"].as_array().unwrap();
    let verdicts: Vec<(&str, &str, &str)> =
        budgets.iter().map(|b| (b["label"].as_str().unwrap_or("-"), b["max_text"].as_str().unwrap(), b["verdict"].as_str().unwrap())).collect();
    assert_eq!(
        verdicts,
        [
            ("step_time", tight.as_str(), "exceeded"),
            ("step_time", loose.as_str(), "within"),
            ("memory:cpu", budgets[2]["max_text"].as_str().unwrap(), "exceeded"),
            ("-", "1GB", "unmatched")
        ]
    );
    assert_eq!(budgets[0]["value"], metric(&doc, "step_time")["new_median"]);
    let tight_us = tight.trim_end_matches("ms").parse::<f64>().unwrap() * 1e3;
    assert!((budgets[0]["max"].as_f64().unwrap() - tight_us).abs() < 1e-6, "{}", budgets[0]);
    // The verdict names the metric, its median and the budget.
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("FAIL: 2 metrics over budget: step_time (") && last.contains(&format!(" > {tight})")) && last.contains("memory:cpu ("), "{last}");
    assert!(stdout.lines().any(|l| l.starts_with("OVER BUDGET") && l.contains(&tight) && l.ends_with("  step_time")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("no match") && l.contains("memory:gpu.*")), "{stdout}");

    // JUnit, annotations and Markdown say so too.
    let [xml, md] = ["check.xml", "check.md"].map(|f| dir.path().join(f));
    let args = [
        "check".to_owned(),
        run_dir("torch_base_a"),
        run_dir("torch_base_b"),
        format!("--rules={rules}"),
        format!("--output=junit:outfile={}", xml.display()),
        format!("--output=markdown:outfile={}", md.display()),
        "--output=github".to_owned(),
    ];
    let out = rtfprof(&args).run();
    assert_eq!(out.code(), Some(1));
    let junit = std::fs::read_to_string(&xml).unwrap();
    let case = junit.split("<testcase ").find(|c| c.contains(r#"name="budget:step_time""#) && c.contains("<failure")).unwrap_or_else(|| panic!("{junit}"));
    assert!(case.contains(r#"type="budget""#) && case.contains(&tight), "{case}");
    assert!(junit.contains(r#"failures="2""#) && junit.contains(r#"name="budget:memory:gpu.*""#), "{junit}");
    let github = out.stdout_lossy();
    assert!(
        github.lines().any(|l| l.starts_with("::error title=rtfprof check%3A budget step_time::step_time is over budget") && l.contains(&tight)),
        "{github}"
    );
    assert!(github.lines().any(|l| l.starts_with("::warning title=rtfprof check%3A budget memory%3Agpu.*::")), "{github}");
    assert!(github.lines().last().unwrap().starts_with("::error title=rtfprof check::FAIL"), "{github}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("#### Budgets") && md.contains(r"| **OVER BUDGET** | step\_time |"), "{md}");
}

/// An ignore rule turns a failing check into a passing one: the ignored
/// metric is listed as such, neither among the judged metrics nor failed.
/// The file's defaults apply, and a flag given overrides them.
#[test]
fn rules_an_ignored_metric_is_neither_judged_nor_failed() {
    let dir = tempfile::tempdir().unwrap();
    let loose = "[defaults]\nmax_regression = '10000%'\nmax_op_regression = '10000%'\n";
    let (base, more) = (run_dir("torch_base_a"), run_dir("torch_memory"));
    let without = rules_file(dir.path(), "loose.toml", loose);
    let (code, stdout, doc) = check(&base, &more, &[&format!("--rules={without}")]);
    assert_eq!((code, labels_with(&doc, "regression")), (1, vec!["memory:cpu".to_owned()]), "{stdout}");
    assert_eq!(doc["options"]["max_op_regression"], 100.0);
    assert_eq!(doc["options"]["rules"], without.as_str());

    let with = rules_file(dir.path(), "ignore.toml", &format!("ignore = ['memory:.*', 'count:.*']\n{loose}"));
    let (code, stdout, doc) = check(&base, &more, &[&format!("--rules={with}")]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(doc["passed"], true);
    assert!(doc["metrics"].as_array().unwrap().iter().all(|m| m["kind"] != "peak_memory" && m["kind"] != "op_count"), "{stdout}");
    let ignored: Vec<(&str, &str)> = doc["ignored"].as_array().unwrap().iter().map(|i| (i["label"].as_str().unwrap(), i["rule"].as_str().unwrap())).collect();
    assert_eq!(ignored, [("memory:cpu", "memory:.*"), ("count:aten::empty", "count:.*")], "{stdout}");
    assert!(doc["ignored"][0]["new_median"].as_f64().unwrap() > doc["ignored"][0]["baseline_median"].as_f64().unwrap());
    assert!(stdout.contains("Ignored by the rules file") && stdout.lines().any(|l| l.ends_with("  memory:cpu")), "{stdout}");
    assert!(stdout.trim_end().ends_with("; 2 metrics ignored"), "{stdout}");

    // A flag given wins over the file's default; the file's other
    // defaults stay.
    let (_, stdout, doc) = check(&base, &more, &[&format!("--rules={with}"), "--max_op_regression=8%"]);
    assert_eq!(doc["options"]["max_op_regression"], 0.08);
    assert_eq!(doc["options"]["max_regression"], 100.0);
    let ops: Vec<&Value> = doc["metrics"].as_array().unwrap().iter().filter(|m| m["kind"] == "op_time").collect();
    assert!(!ops.is_empty() && ops.iter().all(|m| m["threshold"] == 0.08), "{stdout}");
    assert_eq!(metric(&doc, "step_time")["threshold"], 100.0);
}

/// A threshold by regex relaxes the ops of the widened layer (the TF2 run
/// fails on them with the defaults); the first rule that matches wins, and
/// a --threshold flag naming the metric wins over the rules. (The other
/// metrics the wider layer fails, its layer 3 and its memory, are let
/// through by --threshold flags of their own, which the regex does not
/// match.)
#[test]
fn rules_a_regex_threshold_relaxes_one_layers_ops() {
    let dir = tempfile::tempdir().unwrap();
    let (base, wider) = (run_dir("tf_base_a"), run_dir("tf_wider"));
    let (code, stdout, doc) = check(&base, &wider, &[]);
    assert_eq!(code, 1, "{stdout}");
    let failed = labels_with(&doc, "regression");
    assert!(failed.iter().any(|l| l == "op:layer2/MatMul"), "{stdout}");

    let regex = "op:(gradient_tape/)?layer2/MatMul(/MatMul(_1)?)?";
    let layer2 = regex::Regex::new(&format!("^(?:{regex})$")).unwrap();
    let others: Vec<String> = failed.iter().filter(|l| !layer2.is_match(l)).map(|l| format!("--threshold={l}=10000%")).collect();
    let with = |rules: &str, more: &[&str]| {
        let mut args: Vec<String> = vec![format!("--rules={rules}")];
        args.extend(others.iter().cloned());
        args.extend(more.iter().map(|s| (*s).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(&base, &wider, &args)
    };
    let (code, stdout, doc) = with(&rules_file(dir.path(), "others.toml", ""), &[]);
    assert_eq!(code, 1, "the layer's ops fail with the defaults: {stdout}");
    assert!(labels_with(&doc, "regression").iter().all(|l| layer2.is_match(l)), "{stdout}");

    let relax = format!("[[threshold]]\nmetric = '{regex}'\nmax_regression = '300%'\n");
    let rules = rules_file(dir.path(), "relax.toml", &relax);
    let (code, stdout, doc) = with(&rules, &[]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(metric(&doc, "op:layer2/MatMul")["threshold"], 3.0);
    // Metrics the regex does not match keep their kind's threshold.
    assert_eq!(metric(&doc, "op:layer1/MatMul")["threshold"], 0.08);
    assert_eq!(doc["options"]["threshold_rules"][0]["metric"], regex);

    // The first matching rule wins: an exact rule before it keeps the
    // forward op at 8%.
    let first = rules_file(dir.path(), "first.toml", &format!("[[threshold]]\nmetric = 'op:layer2/MatMul'\nmax_regression = '8%'\n{relax}"));
    let (code, stdout, doc) = with(&first, &[]);
    assert_eq!((code, labels_with(&doc, "regression")), (1, vec!["op:layer2/MatMul".to_owned()]), "{stdout}");
    // --threshold wins over the file's rules.
    let (code, _, doc) = with(&rules, &["--threshold=op:layer2/MatMul=8%"]);
    assert_eq!((code, labels_with(&doc, "regression")), (1, vec!["op:layer2/MatMul".to_owned()]));
}

/// The book's example rules file (docs/book/src/commands/check.md shows
/// it whole and runs it): the page's copy is the file's.
#[test]
fn rules_the_books_example_file_is_the_committed_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/book/src/commands/check.md")).unwrap();
    let file = std::fs::read_to_string(testdata().join("check/rules.toml")).unwrap();
    let block = page.split("```toml\n").nth(1).and_then(|b| b.split("```").next()).expect("a ```toml block");
    assert_eq!(block, file);
    assert!(page.contains("--rules testdata/check/rules.toml"));
    // It parses, and every part of it is used on the runs it is shown on.
    let rules = format!("--rules={}", testdata().join("check/rules.toml").display());
    let (code, stdout, doc) = check(&run_dir("tf_base_a"), &run_dir("tf_wider"), &[&rules]);
    assert!(code == 0 || code == 1, "{stdout}");
    assert!(!doc["budgets"].as_array().unwrap().is_empty() && doc["options"]["threshold_rules"].as_array().unwrap().len() == 2, "{stdout}");
}

/// github-action-benchmark's entries carry the rules file's budgets: in
/// the `extra` of each metric a budget judged (the action's charts show
/// it under the point), and as entries of their own for the budgeted
/// metrics the check did not compare with the baseline (here every op:
/// with --min_share 100% none is judged); a budget that matched nothing
/// has no value, and no entry.
#[test]
fn benchmark_entries_carry_the_budgets() {
    let dir = tempfile::tempdir().unwrap();
    let rules = rules_file(
        dir.path(),
        "budgets.toml",
        "[[budget]]\nmetric = 'step_time'\nmax = '1us'\n[[budget]]\nmetric = 'op:.*'\nmax = '1s'\n[[budget]]\nmetric = '.*'\nmax = '10s'\n\
         [[budget]]\nmetric = 'memory:.*'\nmax = '100GB'\n[[budget]]\nmetric = 'memory:gpu.*'\nmax = '1GB'\n",
    );
    let bench = dir.path().join("bench.json");
    let args = [format!("--rules={rules}"), "--min_share=100%".to_owned(), format!("--output=benchmark:outfile={}", bench.display())];
    let (code, stdout, doc) = check(&run_dir("torch_base_a"), &run_dir("torch_base_b"), &args.each_ref().map(String::as_str));
    assert_eq!(code, 1, "{stdout}");
    let entries: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&bench).unwrap()).unwrap();

    // The judged metrics first, as the JSON has them, then each budgeted
    // metric that was not judged, once, in the budgets' order.
    let judged: Vec<&Value> = doc["metrics"].as_array().unwrap().iter().filter(|m| m["kind"] != "op_count").collect();
    assert!(judged.iter().all(|m| !m["label"].as_str().unwrap().starts_with("op:")), "{stdout}");
    let budgets = doc["budgets"].as_array().unwrap();
    let mut expected: Vec<(String, Value)> = judged.iter().map(|m| (m["label"].as_str().unwrap().to_owned(), m["new_median"].clone())).collect();
    for b in budgets.iter().filter(|b| b["label"].is_string()) {
        let label = b["label"].as_str().unwrap();
        if !expected.iter().any(|(l, _)| l == label) {
            expected.push((label.to_owned(), b["value"].clone()));
        }
    }
    let got: Vec<(String, Value)> = entries.iter().map(|e| (e["name"].as_str().unwrap().to_owned(), e["value"].clone())).collect();
    assert_eq!(got, expected);
    assert!(got.iter().any(|(l, _)| l.starts_with("op:")), "{stdout}");
    assert!(budgets.iter().any(|b| b["verdict"] == "unmatched") && got.iter().all(|(l, _)| !l.starts_with("memory:gpu")));

    // Each entry's extra names every budget that judged it, with its verdict.
    for entry in &entries {
        let name = entry["name"].as_str().unwrap();
        let extra = entry["extra"].as_str().unwrap();
        let mine: Vec<String> = budgets
            .iter()
            .filter(|b| b["label"] == name)
            .map(|b| format!("; budget {} ({}): {}", b["max_text"].as_str().unwrap(), b["rule"].as_str().unwrap(), b["verdict"].as_str().unwrap()))
            .collect();
        assert!(!mine.is_empty(), "{name}: every metric here is budgeted by '.*'");
        assert!(extra.ends_with(&mine.concat()), "{name}: {extra}");
        let compared = judged.iter().any(|m| m["label"] == name);
        assert_eq!(extra.starts_with("not compared with the baseline"), !compared, "{name}: {extra}");
    }
    let step = &entries[0];
    assert_eq!(step["name"], "step_time");
    assert!(step["extra"].as_str().unwrap().contains("; budget 1us (step_time): exceeded"), "{step}");
}

const NOISE_BEGIN: &str = "<!-- identical pairs: begin (written by tests/integration/check.rs) -->\n";
const NOISE_END: &str = "<!-- identical pairs: end -->\n";

/// Every pair of identical runs in testdata/check, checked both ways with
/// the defaults: each passes both ways (the runs of a set were recorded
/// interleaved, step by step, so that both saw the same machine:
/// tools/check/interleave.py). How far their medians moved is the table
/// the book shows ("Defaults", between its markers; `RTFPROF_BLESS=1`
/// rewrites it from this run), so that the count of pairs and the largest
/// noise are computed, not typed.
#[test]
fn identical_pairs_pass_and_their_noise_is_the_books() {
    let pairs = [
        ("JAX", "base_a", "base_b"),
        ("PyTorch", "torch_base_a", "torch_base_b"),
        ("TensorFlow 2", "tf_base_a", "tf_base_b"),
        ("JAX, a fresh set", "fresh_a", "fresh_b"),
        ("PyTorch, a fresh set", "torch_fresh_a", "torch_fresh_b"),
        ("TensorFlow 2, a fresh set", "tf_fresh_a", "tf_fresh_b"),
    ];
    let largest = |docs: &[&Value], kind: &str| -> (Option<f64>, usize) {
        let changes: Vec<f64> = docs
            .iter()
            .flat_map(|d| d["metrics"].as_array().unwrap().iter())
            .filter(|m| m["kind"] == kind)
            .filter_map(|m| m["change"].as_f64().map(f64::abs))
            .collect();
        (changes.iter().copied().reduce(f64::max), changes.len())
    };
    let percent = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{:.1}%", x * 100.0));
    let mut table = String::from(
        "| identical runs | checks (both ways) | largest change of the median step time | of an op's median (ops compared) | of an allocator's median peak |\n\
         |---|--:|--:|--:|--:|\n",
    );
    let (mut checks, mut worst_step) = (0, 0.0f64);
    for (framework, a, b) in pairs {
        let (code_ab, out_ab, ab) = check(&run_dir(a), &run_dir(b), &[]);
        assert_eq!(code_ab, 0, "{a} and {b} are the same program:\n{out_ab}");
        let (code_ba, out_ba, ba) = check(&run_dir(b), &run_dir(a), &[]);
        assert_eq!(code_ba, 0, "{b} and {a} are the same program:\n{out_ba}");
        checks += 2;
        let docs = [&ab, &ba];
        let (step, _) = largest(&docs, "step_time");
        let (op, ops) = largest(&docs, "op_time");
        let (memory, _) = largest(&docs, "peak_memory");
        worst_step = worst_step.max(step.unwrap());
        table.push_str(&format!("| `{a}`, `{b}` ({framework}) | 2 | {} | {} ({ops}) | {} |\n", percent(step), percent(op), percent(memory)));
    }
    table.push_str(&format!(
        "\n{checks} checks of {} pairs of identical runs, all passed; the largest change of a median step time among them: {}.\n",
        pairs.len(),
        percent(Some(worst_step))
    ));

    let page_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/book/src/commands/check.md");
    let page = std::fs::read_to_string(&page_path).unwrap();
    let (head, rest) = page.split_once(NOISE_BEGIN).expect("the table's begin marker");
    let (shown, tail) = rest.split_once(NOISE_END).expect("the table's end marker");
    if std::env::var_os("RTFPROF_BLESS").is_some() {
        std::fs::write(&page_path, format!("{head}{NOISE_BEGIN}{table}{NOISE_END}{tail}")).unwrap();
    } else {
        assert!(shown == table, "the book's table of identical pairs is not this run's; if intended, rerun with RTFPROF_BLESS=1 and review:\n{table}");
    }
}

/// A PyTorch trace of a GPU: each kernel that takes a share of the step is
/// compared by its name, in every output, beside the ops (the CPU's time);
/// the kernels' counts are reported only where they change. (Two steps of
/// a real H200 trace, judged with `--min_steps 2`: no p-value can reach
/// alpha with two steps, so they pass.)
#[test]
fn a_gpu_traces_kernels_are_compared_by_name() {
    let trace = testdata().join("pytorch/h200_tx.steps2-3.pt.trace.json.gz").display().to_string();
    let (code, stdout, doc) = check(&trace, &trace, &["--min_steps", "2"]);
    assert_eq!(code, 0, "{stdout}");
    let kernels: Vec<&str> = doc["metrics"].as_array().unwrap().iter().filter(|m| m["kind"] == "kernel_time").map(|m| m["label"].as_str().unwrap()).collect();
    assert!(kernels.contains(&"kernel:nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"), "{kernels:?}");
    assert!(kernels.iter().all(|k| k.starts_with("kernel:")), "{kernels:?}");
    assert!(stdout.contains("kernel:nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"), "{stdout}");
    assert!(doc["metrics"].as_array().unwrap().iter().all(|m| m["kind"] != "kernel_count"), "identical runs: no count changed");
}

/// An XPlane trace of XLA programs: each instruction is compared per step
/// (`hlo:MODULE/INSTRUCTION`), and its samples, saved with
/// `--save_baseline`, add up to `rtfprof hlo`'s total for it (every
/// execution of these fixtures lies in a sampled step): JAX on an H200
/// with command buffers and without, a CNN, and JAX on a CPU.
#[test]
fn an_xla_traces_instructions_are_compared_per_step() {
    for fixture in ["jax_gpu_mlp", "jax_gpu_mlp_nocb", "jax_gpu_cnn", "jax_jit"] {
        let trace = testdata().join("xplane").join(fixture).display().to_string();
        let dir = tempfile::tempdir().unwrap();
        let (saved, table) = (dir.path().join("baseline.json"), dir.path().join("hlo.json"));
        for args in [
            ["check".to_owned(), trace.clone(), format!("--save_baseline={}", saved.display())],
            ["hlo".to_owned(), format!("--xplane_path={trace}"), format!("--output=json:outfile={}", table.display())],
        ] {
            let out = rtfprof(args).run();
            assert!(out.success(), "{}", out.stderr_lossy());
        }
        let read = |path: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() };
        let (saved, table) = (read(&saved), read(&table));
        let totals: std::collections::BTreeMap<String, f64> = table["hlo_ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (format!("{}/{}", r["module"].as_str().unwrap(), r["hlo_op_name"].as_str().unwrap()), r["total_time_us"].as_f64().unwrap()))
            .collect();
        let sampled: std::collections::BTreeMap<String, f64> = saved["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["kind"] == "hlo_time")
            .map(|m| (m["name"].as_str().unwrap().to_owned(), m["samples"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).sum()))
            .collect();
        assert_eq!(sampled.keys().collect::<Vec<_>>(), totals.keys().collect::<Vec<_>>(), "{fixture}");
        for (name, total) in &totals {
            assert!((sampled[name] - total).abs() < 1e-6, "{fixture} {name}: {} vs {total}", sampled[name]);
        }
        let (code, stdout, doc) = check(&trace, &trace, &["--min_steps", "1"]);
        assert_eq!(code, 0, "{stdout}");
        assert!(doc["metrics"].as_array().unwrap().iter().any(|m| m["kind"] == "hlo_time"), "{fixture}: {stdout}");
    }
}

/// A job of several ranks (a directory of PyTorch traces, one a rank):
/// each rank's communication and exposed communication per step are
/// compared, named by rank, with the samples `rtfprof ranks` gives. (The
/// ranks16 fixture has two steps a rank: judged with `--min_steps 2`.)
#[test]
fn each_ranks_communication_is_compared() {
    let dir = testdata().join("pytorch/ranks16");
    let (code, stdout, doc) = check(&dir.display().to_string(), &dir.display().to_string(), &["--min_steps", "2"]);
    assert_eq!(code, 0, "{stdout}");
    let json = tempfile::tempdir().unwrap();
    let ranks_json = json.path().join("ranks.json");
    let ranks = rtfprof(["ranks".to_owned(), format!("--pytorch_path={}", dir.display()), format!("--output=json:outfile={}", ranks_json.display())]).run();
    assert!(ranks.success(), "{}", ranks.stderr_lossy());
    let ranks: Value = serde_json::from_str(&std::fs::read_to_string(&ranks_json).unwrap()).unwrap();
    let ranks = ranks["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 16);
    for rank in ranks {
        let id = rank["rank"].as_i64().unwrap();
        for (kind, field) in [("communication", "communication_us"), ("exposed_communication", "exposed_communication_us")] {
            let row = metric(&doc, &format!("{kind}:rank{id}"));
            let mut steps: Vec<f64> = rank["steps"].as_array().unwrap().iter().map(|s| s[field].as_f64().unwrap()).collect();
            steps.sort_by(f64::total_cmp);
            // (Two steps: the median is their mean.)
            let median = (steps[0] + steps[1]) / 2.0;
            assert!((row["baseline_median"].as_f64().unwrap() - median).abs() < 1e-6, "{kind} rank {id}: {row}");
            assert_eq!(row["kind"], kind);
        }
    }
}

/// An XPlane trace of a GPU that ran collectives: each host's
/// communication and exposed communication per step are compared, named by
/// the host, with the samples `rtfprof ranks` gives for it; in a run
/// directory of several hosts, each host's on its own steps. The fixture is
/// SYNTHETIC (testdata/xplane/README.md: a real H200 trace with an NCCL
/// all-reduce kernel added beside each step's backward pass); no XPlane
/// trace this project can read has collectives inside its steps.
#[test]
fn each_hosts_communication_is_compared() {
    let trace = testdata().join("xplane/gpu_nccl_synth");
    let dir = tempfile::tempdir().unwrap();
    let (saved, ranks_json) = (dir.path().join("baseline.json"), dir.path().join("ranks.json"));
    for args in [
        ["check".to_owned(), trace.display().to_string(), format!("--save_baseline={}", saved.display())],
        ["ranks".to_owned(), format!("--xplane_path={}", trace.display()), format!("--output=json:outfile={}", ranks_json.display())],
    ] {
        let out = rtfprof(args).run();
        assert!(out.success(), "{}", out.stderr_lossy());
    }
    let read = |path: &Path| -> Value { serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap() };
    let (saved, ranks) = (read(&saved), read(&ranks_json));
    let samples = |doc: &Value, kind: &str, name: &str| -> Vec<f64> {
        let metric = doc["metrics"].as_array().unwrap().iter().find(|m| m["kind"] == kind && m["name"] == name);
        metric.unwrap_or_else(|| panic!("no {kind}:{name}"))["samples"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect()
    };
    let steps = ranks["ranks"][0]["steps"].as_array().unwrap();
    for (kind, field) in [("communication", "communication_us"), ("exposed_communication", "exposed_communication_us")] {
        let from_ranks: Vec<f64> = steps.iter().map(|s| s[field].as_f64().unwrap()).collect();
        let sampled = samples(&saved, kind, "vm");
        assert_eq!(sampled.len(), from_ranks.len(), "{kind}");
        // (`ranks` writes its microseconds to 3 decimals.)
        assert!(sampled.iter().zip(&from_ranks).all(|(a, b)| (a - b).abs() < 1e-3), "{kind}: {sampled:?} vs {from_ranks:?}");
        assert!(sampled.iter().all(|&us| us > 0.0), "{kind}: {sampled:?}");
    }
    let (code, stdout, doc) = check(&trace.display().to_string(), &trace.display().to_string(), &[]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(metric(&doc, "communication:vm")["verdict"], "unchanged", "{stdout}");
    // The all-reduce twice as long (the `_slow` fixture): past the backward
    // pass, it adds to the step, and fails naming the host's communication.
    // (8 steps a side, their microseconds tied: the exact test given the
    // ties names it; the normal approximation's p of 4.7e-4 could not pass
    // Holm's adjustment over some forty metrics.)
    let slow = testdata().join("xplane/gpu_nccl_synth_slow").display().to_string();
    let (code, stdout, doc) = check(&trace.display().to_string(), &slow, &[]);
    assert_eq!(code, 1, "{stdout}");
    for label in ["step_time", "communication:vm", "exposed_communication:vm"] {
        assert_eq!(metric(&doc, label)["verdict"], "regression", "{label}: {stdout}");
    }
    // Two hosts, the second the slow one: each its own.
    let run = dir.path().join("two/plugins/profile/run0");
    std::fs::create_dir_all(&run).unwrap();
    let (saved_slow, two) = (dir.path().join("slow.json"), dir.path().join("two.json"));
    std::fs::copy(trace.join("plugins/profile/run0/vm.xplane.pb"), run.join("worker0.xplane.pb")).unwrap();
    std::fs::copy(Path::new(&slow).join("plugins/profile/run0/vm.xplane.pb"), run.join("worker1.xplane.pb")).unwrap();
    for (input, output) in [(slow.clone(), &saved_slow), (dir.path().join("two").display().to_string(), &two)] {
        let out = rtfprof(["check".to_owned(), input, format!("--save_baseline={}", output.display())]).run();
        assert!(out.success(), "{}", out.stderr_lossy());
    }
    let (saved_slow, two) = (read(&saved_slow), read(&two));
    for (host, alone) in [("worker0", &saved), ("worker1", &saved_slow)] {
        for kind in ["communication", "exposed_communication"] {
            assert_eq!(samples(&two, kind, host), samples(alone, kind, "vm"), "{host} {kind}");
        }
    }
}

/// Identical runs of fresh sets (testdata/check/README.md) that failed on
/// single ops before an op had to move the step (`moves_the_step` in
/// crates/analysis/src/check/decision.rs): one process ran an op 1.5 to
/// 4 times as long as the other in every step, so that the op is past its
/// threshold and significant by its own test, and is `step_unmoved`:
/// the step did not grow with it.
#[test]
fn fresh_identical_runs_that_differ_in_single_ops_pass() {
    let cases: [(&str, &str, &[&str]); 3] = [
        ("fresh_a", "fresh_b", &["op:jit(step)/transpose(jvp(layer2))/transpose"]),
        (
            "tf_fresh_a",
            "tf_fresh_b",
            &["op:AssignSubVariableOp_1", "op:mul_1", "op:gradient_tape/layer3/MatMul/MatMul_1", "op:gradient_tape/layer2/MatMul/MatMul_1"],
        ),
        ("torch_fresh_a", "torch_fresh_b", &["op:aten::mul"]),
    ];
    for (a, b, ops) in cases {
        let (code, out, doc) = check(&run_dir(a), &run_dir(b), &[]);
        assert_eq!(code, 0, "{a} and {b} are the same program:\n{out}");
        let alpha = doc["options"]["alpha"].as_f64().unwrap();
        for op in ops {
            let m = metric(&doc, op);
            assert_eq!(m["verdict"], "step_unmoved", "{a} vs {b}: {m}");
            let (change, threshold, p) = (m["change"].as_f64().unwrap(), m["threshold"].as_f64().unwrap(), m["p_value"].as_f64().unwrap());
            assert!(change > threshold && p < alpha, "{a} vs {b}: the op's own gates no longer fail it: {m}");
        }
    }
}
