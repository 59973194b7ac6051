//! `--output folded:outfile=PATH`: collapsed stacks, checked against the
//! same view's JSON output (its displayed tree), and fed to the real
//! consumers when they are installed: `inferno-flamegraph` and
//! `inferno-diff-folded` (`cargo install inferno`), and speedscope, the web
//! app (its npm package's static files, `RTFPROF_SPEEDSCOPE` or
//! `target/speedscope/package/dist/release`, fetched by `.ci/run`) opened in
//! headless Chromium: its sandwich table must list every frame with the
//! self and total values the file implies. speedscope's importer
//! (`src/import/bg-flamegraph.ts`) is a regex, `^(.*) (\d+)$` per line and
//! `;` between frames; the lines are also checked against it here, so that
//! the format holds where the app is not installed.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::{fixture_flags, rtfprof, testdata};

fn args(view: &str, inputs: Vec<String>, extra: &[&str]) -> Vec<String> {
    let mut args = vec![view.to_owned()];
    args.extend(inputs);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Folded lines as stack → values.
fn parse(text: &str) -> BTreeMap<String, Vec<i64>> {
    let mut stacks = BTreeMap::new();
    for line in text.lines() {
        let (stack, count) = line.rsplit_once(' ').unwrap_or_else(|| panic!("no count: {line:?}"));
        let value: i64 = count.parse().unwrap_or_else(|_| panic!("no count: {line:?}"));
        assert!(stacks.insert(stack.to_owned(), vec![value]).is_none(), "a stack twice: {line}");
    }
    stacks
}

/// The JSON's metric name for a `--select` metric.
fn json_metric(select: &str) -> &'static str {
    match select {
        "micros" => "exec_micros",
        "accelerator_micros" => "accelerator_micros",
        "cpu_micros" => "cpu_micros",
        "bytes" => "requested_bytes",
        "peak_bytes" => "peak_bytes",
        "residual_bytes" => "residual_bytes",
        "output_bytes" => "output_bytes",
        other => panic!("{other}"),
    }
}

/// What the folded file must hold, from the displayed tree in the JSON:
/// every displayed node's path with its total minus its children's.
fn expected_from_json(node: &Value, metric: &str, prefix: &str, out: &mut BTreeMap<String, Vec<i64>>) {
    let name = rtfprof::outputs::folded::escape(node["name"].as_str().unwrap()).into_owned();
    let stack = if prefix.is_empty() { name } else { format!("{prefix};{name}") };
    let children = node["children"].as_array().unwrap();
    let own = node["total"][metric].as_i64().unwrap() - children.iter().map(|c| c["total"][metric].as_i64().unwrap()).sum::<i64>();
    if own > 0 {
        out.insert(stack.clone(), vec![own]);
    }
    for child in children {
        expected_from_json(child, metric, &stack, out);
    }
}

/// speedscope's parse of a folded line.
fn speedscope_accepts(line: &str) -> bool {
    let Some((stack, count)) = line.rsplit_once(' ') else { return false };
    !stack.is_empty() && !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit())
}

fn check_view(view: &str, inputs: Vec<String>, select: &str, extra: &[&str]) -> String {
    let mut with_select = vec![format!("--select={select}")];
    with_select.extend(extra.iter().map(|s| s.to_string()));
    let extra: Vec<&str> = with_select.iter().map(String::as_str).collect();
    let folded = rtfprof(args(view, inputs.clone(), &extra)).outfile("folded");
    let json: Value = serde_json::from_str(&rtfprof(args(view, inputs, &extra)).outfile("json")).unwrap();
    let metric = json_metric(select);
    let mut expected = BTreeMap::new();
    expected_from_json(&json["root"], metric, "", &mut expected);
    let got = parse(&folded);
    assert_eq!(got, expected, "{view} {extra:?}");
    let sum: i64 = got.values().map(|v| v[0]).sum();
    assert_eq!(sum, json["root"]["total"][metric].as_i64().unwrap(), "{view} {extra:?}: the values add up to the view's total");
    assert!(folded.lines().all(speedscope_accepts), "{view} {extra:?}");
    assert!(folded.lines().all(|l| l.starts_with("_TFProfRoot")), "{view} {extra:?}");
    folded
}

#[test]
fn lines_are_the_displayed_tree_and_add_up_to_the_total() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("scope", "micros", &[]),
        ("scope", "bytes", &["--max_depth=3"]),
        ("scope", "peak_bytes", &["--hide_name_regexes=gradients/conv1.*", "--min_bytes=1000"]),
        ("scope", "cpu_micros", &["--start_name_regexes=gradients", "--step=1"]),
        ("scope", "residual_bytes", &["--account_type_regexes=Conv2D.*,Const,GatherV2", "--account_displayed_op_only"]),
        ("code", "micros", &["--max_depth=1000"]),
        ("code", "output_bytes", &["--max_depth=6", "--trim_name_regexes=.*build_cnn.*"]),
    ];
    for model in ["cnn", "while"] {
        for &(view, select, extra) in cases {
            let folded = check_view(view, fixture_flags(model), select, extra);
            assert!(folded.lines().count() >= 2, "{model} {view} {extra:?}: {folded}");
        }
    }
    // A profile and an XPlane trace.
    let profile = vec![format!("--profile_path={}", testdata().join("gpu_synth/profile").display())];
    check_view("scope", profile.clone(), "accelerator_micros", &[]);
    check_view("code", profile, "bytes", &["--max_depth=100"]);
    let trace = vec![format!("--xplane_path={}", testdata().join("xplane/tf_loop").display())];
    check_view("scope", trace, "micros", &["--max_depth=100"]);
}

/// Node names with `;`, spaces, `%` and line breaks: escaped, so every
/// line stays one stack and one count.
#[test]
fn odd_names_keep_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let graph = dir.path().join("graph.pbtxt");
    let run_meta = dir.path().join("run_meta.pbtxt");
    let names = ["a;b/c d", "a;b/100%", "a;b/line\\nbreak\\r", "tail 7", " both ends "];
    let nodes: String = names.iter().map(|n| format!("node {{ name: \"{n}\" op: \"Op\" }}\n")).collect();
    std::fs::write(&graph, nodes).unwrap();
    let stats: String =
        names.iter().enumerate().map(|(i, n)| format!("node_stats {{ node_name: \"{n}\" all_start_micros: 100 op_end_rel_micros: {} }}\n", i + 2)).collect();
    std::fs::write(&run_meta, format!("step_stats {{ dev_stats {{ device: \"/job:localhost/replica:0/task:0/device:CPU:0\"\n{stats} }} }}\n")).unwrap();
    let inputs = vec![format!("--graph_path={}", graph.display()), format!("--run_meta_path={}", run_meta.display())];
    let folded = check_view("scope", inputs, "micros", &[]);
    assert_eq!(
        folded,
        "_TFProfRoot;%20both ends%20 6\n_TFProfRoot;a%3Bb;a%3Bb/100%25 3\n_TFProfRoot;a%3Bb;a%3Bb/c d 2\n_TFProfRoot;a%3Bb;a%3Bb/line%0Abreak%0D 4\n_TFProfRoot;tail%207 5\n"
    );
    if let Some(inferno) = inferno("inferno-flamegraph") {
        let path = dir.path().join("odd.folded");
        std::fs::write(&path, &folded).unwrap();
        let svg = flamegraph(&inferno, &path);
        for title in ["a%3Bb/c d (2 samples", "tail%207 (5 samples", "%20both ends%20 (6 samples", "a%3Bb/line%0Abreak%0D (4 samples"] {
            assert!(svg.contains(&format!("<title>{title}")), "inferno reads the frame {title:?}");
        }
    }
}

/// An inferno tool on PATH or in cargo's bin directory; `None` (with a
/// message) when it is not installed.
fn inferno(tool: &str) -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).map(|d| d.join(tool)).collect()).unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME").or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo").into())) {
        candidates.push(Path::new(&home).join("bin").join(tool));
    }
    let found = candidates.into_iter().find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipping the {tool} checks: not installed (cargo install inferno)");
    }
    found
}

fn flamegraph(inferno: &Path, folded: &Path) -> String {
    let output = Command::new(inferno).arg(folded).output().unwrap();
    assert!(output.status.success(), "{} {}: {}", inferno.display(), folded.display(), String::from_utf8_lossy(&output.stderr));
    let svg = String::from_utf8(output.stdout).unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg"), "not an SVG");
    svg
}

/// The one-column files of both sides of a diff.
fn sides(dir: &Path, view: &str, metric: &str) -> (PathBuf, PathBuf) {
    let side = |model: &str| {
        let path = dir.join(format!("{model}.folded"));
        let profile = format!("--profile_path={}", testdata().join(model).join("profile").display());
        std::fs::write(&path, rtfprof(args(view, vec![profile], &[&format!("--select={metric}")])).outfile("folded")).unwrap();
        path
    };
    (side("cnn_b8"), side("cnn"))
}

fn diff_folded(view: &str, metric: &str) -> String {
    let args: Vec<String> = [
        "diff".to_owned(),
        format!("--left_profile_path={}", testdata().join("cnn_b8/profile").display()),
        format!("--right_profile_path={}", testdata().join("cnn/profile").display()),
        format!("--view={view}"),
        format!("--metric={metric}"),
    ]
    .into();
    rtfprof(&args).outfile("folded")
}

/// `stack left right` lines as stack → (left, right).
fn parse_two(text: &str) -> BTreeMap<String, (i64, i64)> {
    text.lines()
        .map(|line| {
            let (rest, right) = line.rsplit_once(' ').unwrap();
            let (stack, left) = rest.rsplit_once(' ').unwrap();
            (stack.to_owned(), (left.parse().unwrap(), right.parse().unwrap()))
        })
        .collect()
}

/// The diff's two columns are each side's own folded view: the same lines
/// as `inferno-diff-folded` makes from the two one-column files, and each
/// column adds up to its side's total.
#[test]
fn diffs_have_each_sides_folded_values() {
    let dir = tempfile::tempdir().unwrap();
    for (view, metric) in [("scope", "bytes"), ("code", "micros")] {
        let two = parse_two(&diff_folded(view, metric));
        let (left, right) = sides(dir.path(), view, metric);
        let (left, right) = (parse(&std::fs::read_to_string(&left).unwrap()), parse(&std::fs::read_to_string(&right).unwrap()));
        let mut expected: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for (stack, v) in &left {
            expected.entry(stack.clone()).or_default().0 = v[0];
        }
        for (stack, v) in &right {
            expected.entry(stack.clone()).or_default().1 = v[0];
        }
        assert_eq!(two, expected, "{view} {metric}");
        assert!(two.values().any(|(l, r)| l != r), "the sides differ somewhere");
    }
}

#[test]
fn inferno_draws_the_outputs() {
    let (Some(flame), Some(diff_tool)) = (inferno("inferno-flamegraph"), inferno("inferno-diff-folded")) else { return };
    let dir = tempfile::tempdir().unwrap();
    for (view, metric) in [("scope", "bytes"), ("code", "micros")] {
        let (left, right) = sides(dir.path(), view, metric);
        flamegraph(&flame, &left);
        // inferno's own differential folding of the two files gives our
        // diff's lines.
        let output = Command::new(&diff_tool).arg(&left).arg(&right).output().unwrap();
        assert!(output.status.success(), "inferno-diff-folded: {}", String::from_utf8_lossy(&output.stderr));
        let theirs = parse_two(&String::from_utf8(output.stdout).unwrap());
        let ours_text = diff_folded(view, metric);
        assert_eq!(parse_two(&ours_text), theirs, "{view} {metric}");
        let ours = dir.path().join(format!("{view}.diff.folded"));
        std::fs::write(&ours, ours_text).unwrap();
        let svg = flamegraph(&flame, &ours);
        assert!(svg.contains("_TFProfRoot"));
    }
}

/// speedscope's static app (`index.html` and its scripts), or `None` with a
/// message.
fn speedscope() -> Option<PathBuf> {
    let dir = std::env::var_os("RTFPROF_SPEEDSCOPE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/speedscope/package/dist/release"));
    let found = dir.join("index.html").is_file().then_some(dir);
    if found.is_none() {
        eprintln!("skipping the speedscope checks: not fetched (.ci/run puts its npm package in target/speedscope, or set RTFPROF_SPEEDSCOPE)");
    }
    found
}

/// A frame's values in speedscope's sandwich view.
#[derive(Debug, PartialEq)]
struct Sandwich {
    total: i64,
    own: i64,
}

/// What speedscope's sandwich table must say of each frame of `folded`: its
/// self value is the sum of the lines it ends, its total the sum of the
/// lines it is in (once per line, as speedscope counts recursion).
fn sandwich_of(folded: &str) -> BTreeMap<String, Sandwich> {
    let mut frames: BTreeMap<String, Sandwich> = BTreeMap::new();
    for (stack, values) in parse(folded) {
        let names: Vec<&str> = stack.split(';').collect();
        let mut seen = std::collections::BTreeSet::new();
        for name in &names {
            if seen.insert(*name) {
                frames.entry(name.to_string()).or_insert(Sandwich { total: 0, own: 0 }).total += values[0];
            }
        }
        frames.get_mut(*names.last().unwrap()).unwrap().own += values[0];
    }
    frames
}

/// Opens `folded` in speedscope's sandwich view in headless Chromium (as
/// speedscope's own command line does: a script handing it the file) and
/// reads the table rows it renders: (name, total, self). The table is
/// virtualised: only the rows that fit the window are in the page.
fn speedscope_rows(app: &Path, chromium: &Path, dir: &Path, name: &str, folded: &str) -> Vec<(String, Sandwich)> {
    // speedscope's command line writes the file's base64; the browser makes
    // it here from the text (a JSON string is a JavaScript string literal).
    let script = dir.join(format!("{name}.js"));
    let text = serde_json::to_string(folded).unwrap();
    let name_literal = serde_json::to_string(name).unwrap();
    std::fs::write(&script, format!("speedscope.loadFileFromBase64({name_literal}, btoa(unescape(encodeURIComponent({text}))))")).unwrap();
    let url = format!("file://{}#localProfilePath={}&view=sandwich", app.join("index.html").display(), script.display());
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--allow-file-access-from-files",
            "--virtual-time-budget=10000",
            "--window-size=1200,4000",
            "--dump-dom",
        ])
        .arg(&url)
        .output()
        .unwrap();
    assert!(output.status.success(), "chromium: {}", String::from_utf8_lossy(&output.stderr));
    let dom = String::from_utf8(output.stdout).unwrap();
    assert!(dom.contains(&format!("<title>{name} - speedscope</title>")), "speedscope did not open {name}");
    let cell = |html: &str| -> String {
        // Text without tags, entities decoded.
        let mut text = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        common::unescape_html(&text)
    };
    let count = |text: &str| -> i64 { text.split(" (").next().unwrap().replace(',', "").parse().unwrap_or_else(|_| panic!("not a count: {text:?}")) };
    let mut rows = Vec::new();
    for row in dom.split("<tr class=").skip(1) {
        let cells: Vec<String> = row.split("<td").skip(1).map(|c| cell(&c[c.find('>').unwrap() + 1..c.find("</td>").unwrap()])).collect();
        if let [total, own, name] = cells.as_slice() {
            rows.push((name.clone(), Sandwich { total: count(total), own: count(own) }));
        }
    }
    rows
}

/// The real speedscope reads the files: every row of its sandwich table has
/// the values the folded lines imply, for names with markup characters,
/// escapes and counts in the millions too.
#[test]
fn speedscope_reads_the_outputs() {
    let (Some(app), Some(chromium)) = (speedscope(), common::chromium("the speedscope checks")) else { return };
    let dir = tempfile::tempdir().unwrap();
    let odd = "_TFProfRoot;a%3Bb;a%3Bb/<c> & \"d\" 1234567\n_TFProfRoot;tail%207 5\n_TFProfRoot;%20both ends%20 6\n";
    let scope = rtfprof(args("scope", fixture_flags("cnn"), &["--select=micros", "--max_depth=100"])).outfile("folded");
    let code = rtfprof(args("code", fixture_flags("cnn"), &["--select=bytes", "--max_depth=1000"])).outfile("folded");
    for (name, folded) in [("odd.folded", odd), ("scope.folded", scope.as_str()), ("code.folded", code.as_str())] {
        let expected = sandwich_of(folded);
        let rows = speedscope_rows(&app, &chromium, dir.path(), name, folded);
        // A 4000-pixel window holds about 190 rows: all of these files' frames.
        assert_eq!(rows.len(), expected.len(), "{name}: the rows speedscope shows");
        for (frame, values) in &rows {
            assert_eq!(Some(values), expected.get(frame), "{name}: speedscope's row for {frame:?}");
        }
    }
}
