//! `rtfprof diff` on two real profiles of one model at two batch sizes
//! (`cnn` at batch 4, `cnn_b8` at batch 8).
//!
//! The report is rtfprof's own, so it is checked by invariants plus a
//! blessed snapshot (`RTFPROF_BLESS=1` rewrites it; review the git diff):
//! - diffing tfprof's own saved scope outputs of the two profiles lists the
//!   same nodes, in the same tree, as diffing the profiles themselves;
//! - identical sides are refused, and a copy of a profile differs by 0;
//! - bad metrics, sizes, views and text files fail with one line;
//! - the JSON output holds the text's nodes, with the values the text
//!   formats; partial profiles diff as the profiles they were made of.

use crate::common;

use common::{rtfprof, testdata};
use serde_json::Value;

fn side(name: &str, model: &str) -> Vec<String> {
    let d = testdata().join(model);
    vec![
        format!("--{name}_graph_path={}", d.join("graph.pb").display()),
        format!("--{name}_run_meta_path={}", (0..3).map(|i| d.join(format!("run_meta_{i}")).display().to_string()).collect::<Vec<_>>().join(",")),
    ]
}

/// The node lines (indentation and name) of a report, without the numbers.
fn tree_lines(report: &str) -> Vec<String> {
    report.lines().skip(4).map(|l| l.split(" (").next().unwrap().to_owned()).collect()
}

#[test]
fn text_files_and_profiles_list_the_same_nodes() {
    let golden = testdata().join("golden");
    for (metric, delta, min_size) in [("bytes", "0.3", "1KB"), ("micros", "0.5", "5us")] {
        let common = ["diff".to_owned(), format!("--metric={metric}"), format!("--delta={delta}"), format!("--min_size={min_size}"), "--max_depth=100".into()];
        let mut from_text = common.to_vec();
        from_text.push(format!("--left_text={}", golden.join("cnn_b8.scope.diff_side.out").display()));
        from_text.push(format!("--right_text={}", golden.join("cnn.scope.diff_side.out").display()));
        let mut from_profiles = common.to_vec();
        from_profiles.extend(side("left", "cnn_b8"));
        from_profiles.extend(side("right", "cnn"));
        let run = rtfprof(&from_text).run();
        let (a, err_a, ok_a) = (run.stdout_str(), run.stderr_str(), run.success());
        let run = rtfprof(&from_profiles).run();
        let (b, err_b, ok_b) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(ok_a && ok_b, "{err_a}{err_b}");
        assert!(tree_lines(a).len() > 3, "{metric}: the batch sizes should differ:\n{a}");
        assert_eq!(tree_lines(a), tree_lines(b), "{metric}: text and profile diffs list different nodes");
    }
}

#[test]
fn identical_sides_are_refused_and_copies_differ_by_nothing() {
    let p = testdata().join("cnn/profile").display().to_string();
    let run = rtfprof([
        "diff".into(),
        format!("--left_profile_path={p}"),
        format!("--right_profile_path={p}"),
        "--right_step=-1".into(),
        "--left_step=-1".into(),
        "--names=a,b".into(),
    ])
    .run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    // Same inputs and step: refused, since it could only be a mistake.
    assert!(!ok && err.lines().count() == 1 && err.contains("both sides are the same"), "{out}{err}");
    let run =
        rtfprof(["diff".into(), format!("--profile_path={p}"), "--left_step=1".into(), "--right_step=1".into(), format!("--right_profile_path={p}")]).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(!ok, "{out}{err}");
    let copy = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(&p, copy.path()).unwrap();
    let run = rtfprof([
        "diff".into(),
        format!("--left_profile_path={p}"),
        format!("--right_profile_path={}", copy.path().display()),
        "--delta=0".into(),
        "--min_size=1".into(),
    ])
    .run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    // Equal values everywhere: relative difference 0 >= 0 lists nodes, but
    // every listed difference must be zero.
    assert!(out.lines().skip(4).all(|l| l.contains(" +0") && l.contains("x1.0")), "{out}");
}

#[test]
fn snapshot_of_two_batch_sizes() {
    let mut args =
        vec!["diff".to_owned(), "--metric=bytes".into(), "--delta=0.2".into(), "--min_size=10KB".into(), "--names=bs8,bs4".into(), "--max_depth=100".into()];
    args.extend(side("left", "cnn_b8"));
    args.extend(side("right", "cnn"));
    let run = rtfprof(&args).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    // Paths differ between machines; keep the report from its first node on.
    let report: String = out.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert!(report.contains("_TFProfRoot (bs8:"), "{report}");
    let path = testdata().join("expected/cnn_b8-vs-cnn.diff");
    if std::env::var_os("RTFPROF_BLESS").is_some() {
        std::fs::write(&path, &report).unwrap();
    } else {
        let expected = std::fs::read_to_string(&path).expect("snapshot missing: run with RTFPROF_BLESS=1");
        assert!(expected == report, "diff report changed; if intended, rerun with RTFPROF_BLESS=1 and review");
    }
}

#[test]
fn bad_diff_arguments_fail_with_one_line() {
    let text = testdata().join("golden/cnn.scope.diff_side.out").display().to_string();
    let micros_only = testdata().join("golden/cnn.scope.default.out").display().to_string();
    for (extra, flag) in [
        (vec!["--metric=speed".to_owned()], "--metric"),
        (vec!["--min_size=lots".to_owned()], "--min_size"),
        (vec!["--view=op".to_owned()], "--view"),
        (vec!["--names=onlyone".to_owned()], "--names"),
        (vec![format!("--right_text={micros_only}")], "has no 'requested bytes' column"),
    ] {
        let mut args = vec!["diff".to_owned(), format!("--left_text={text}")];
        if !extra[0].starts_with("--right_text") {
            args.push(format!("--right_text={text}"));
        }
        args.extend(extra);
        let run = rtfprof(&args).run();
        let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(!ok && out.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(flag), "{err}");
    }
}

/// Two XPlane traces (the same JAX program with and without command
/// buffers) diff as their saved scope views do, on micros by default (a
/// trace records no bytes per op); a run directory's hosts are one side.
#[test]
fn traces_diff_as_their_saved_views() {
    let dir = tempfile::tempdir().unwrap();
    let xplane = testdata().join("xplane");
    let (mlp, nocb) = (xplane.join("jax_gpu_mlp").display().to_string(), xplane.join("jax_gpu_mlp_nocb").display().to_string());
    let mut texts = vec!["diff".to_owned(), "--max_depth=100".into(), "--delta=0.05".into()];
    for (side, trace) in [("left", &mlp), ("right", &nocb)] {
        let out = dir.path().join(format!("{side}.txt"));
        rtfprof([
            "scope".into(),
            format!("--xplane_path={trace}"),
            "--select=micros".into(),
            "--max_depth=100".into(),
            format!("--output=file:outfile={}", out.display()),
        ])
        .run()
        .ok();
        texts.extend([format!("--{side}_text={}", out.display()), "--metric=micros".into()]);
    }
    texts.pop();
    let run = rtfprof(&texts).run();
    let (from_texts, err_a, ok_a) = (run.stdout_str(), run.stderr_str(), run.success());
    let run =
        rtfprof(["diff".into(), "--max_depth=100".into(), "--delta=0.05".into(), format!("--left_xplane_path={mlp}"), format!("--right_xplane_path={nocb}")])
            .run();
    let (from_traces, err_b, ok_b) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok_a && ok_b, "{err_a}{err_b}");
    assert!(from_traces.contains("relative difference in micros"), "default metric of traces: {from_traces}");
    assert!(tree_lines(from_traces).len() > 3, "{from_traces}");
    assert_eq!(tree_lines(from_texts), tree_lines(from_traces));
    // The global trace at two steps; a run directory's hosts as one side.
    let run = rtfprof(["diff".into(), format!("--xplane_path={mlp}"), "--left_step=8".into(), "--right_step=9".into()]).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok && out.contains("step 8 (left)") && out.contains("step 9 (right)"), "{out}{err}");
    let hosts = xplane.join("two_hosts").display().to_string();
    let run = rtfprof(["diff".into(), format!("--left_xplane_path={hosts}"), "--right_step=0".into(), "--delta=0".into()]).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok && out.contains("hosts host0,host1 (left)") && out.contains("\n  host0") && out.contains("\n  host1"), "{out}{err}");
    let run = rtfprof(["diff".into(), format!("--left_xplane_path={mlp}"), format!("--left_profile_path={mlp}"), format!("--right_xplane_path={nocb}")]).run();
    let (err, ok) = (run.stderr_str(), run.success());
    assert!(!ok && err.contains("--left_xplane_path") && err.lines().count() == 1, "{err}");
}

/// A listed node: (depth, name, left, right, difference).
type JsonNode = (usize, String, Option<i64>, Option<i64>, i64);

/// The JSON's listed nodes in pre-order: (depth, name, left, right,
/// difference).
fn json_nodes(node: &Value, depth: usize, into: &mut Vec<JsonNode>) {
    into.push((depth, node["name"].as_str().unwrap().to_owned(), node["left"].as_i64(), node["right"].as_i64(), node["difference"].as_i64().unwrap()));
    for child in node["children"].as_array().unwrap() {
        json_nodes(child, depth + 1, into);
    }
}

#[test]
fn json_lists_the_texts_nodes_with_their_values() {
    // (The two batch sizes run each op as often: every node differs by 0.)
    for (metric, delta) in [("bytes", 0.2), ("micros", 0.2), ("occurrence", 0.0)] {
        let mut args = vec!["diff".to_owned(), format!("--metric={metric}"), format!("--delta={delta}"), "--max_depth=100".into(), "--names=bs8,bs4".into()];
        args.extend(side("left", "cnn_b8"));
        args.extend(side("right", "cnn"));
        let run = rtfprof(&args).run();
        let (text, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(ok, "{err}");
        let doc = rtfprof(&args).json();
        assert_eq!((doc["metric"].as_str(), doc["view"].as_str(), doc["delta"].as_f64()), (Some(metric), Some("scope"), Some(delta)));
        assert_eq!((doc["left"]["name"].as_str(), doc["right"]["name"].as_str()), (Some("bs8"), Some("bs4")));
        let mut nodes = Vec::new();
        json_nodes(&doc["root"], 0, &mut nodes);
        let lines: Vec<&str> = text.lines().skip(4).collect();
        assert!(nodes.len() > 3 && nodes.len() == lines.len(), "{metric}: {} JSON nodes, {} text lines", nodes.len(), lines.len());
        for ((depth, name, left, right, difference), line) in nodes.iter().zip(&lines) {
            assert_eq!(line.len() - line.trim_start().len(), 2 * depth, "{line}");
            assert!(line.trim_start().starts_with(&format!("{name} (")), "{line} is not {name}");
            assert_eq!(*difference, left.unwrap_or(0) - right.unwrap_or(0), "{line}");
            // The text shows each side the JSON has, and only those.
            assert_eq!(line.contains("(bs8:"), left.is_some(), "{line}");
            assert_eq!(line.contains(" bs4:") || line.contains("(bs4:"), right.is_some(), "{line}");
        }
    }
}

/// A partial profile of each side diffs as the profiles themselves: the
/// same nodes and values, under the partial's job.
#[test]
fn partial_profiles_diff_as_their_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let partial = |model: &str| {
        let out = dir.path().join(format!("{model}.rtfprof"));
        rtfprof(["partial".into(), format!("--job=m={}", testdata().join(model).join("profile").display()), format!("-o={}", out.display())]).run().ok();
        out.display().to_string()
    };
    let (left, right) = (partial("cnn_b8"), partial("cnn"));
    let profile = |model: &str| testdata().join(model).join("profile").display().to_string();
    for metric in ["bytes", "micros"] {
        let common = ["diff".to_owned(), format!("--metric={metric}"), "--delta=0".into(), "--max_depth=100".into()];
        let mut of_partials = common.to_vec();
        of_partials.extend([format!("--left_partial_path={left}"), format!("--right_partial_path={right}")]);
        let mut of_profiles = common.to_vec();
        of_profiles.extend([format!("--left_profile_path={}", profile("cnn_b8")), format!("--right_profile_path={}", profile("cnn"))]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        // The partial's tree has its job `m` between the root and the
        // profile's top scopes, and its nodes' names start with `m/`.
        json_nodes(&rtfprof(&of_partials).json()["root"]["children"][0], 0, &mut a);
        json_nodes(&rtfprof(&of_profiles).json()["root"], 0, &mut b);
        assert_eq!(a[0].1, "m");
        let a: Vec<_> = a.into_iter().skip(1).map(|(d, n, l, r, x)| (d, n.strip_prefix("m/").expect("a job's node").to_owned(), l, r, x)).collect();
        assert!(a.len() > 10, "{metric}: {a:?}");
        assert_eq!(a[..], b[1..], "{metric}");
    }
    // One partial at two steps; a side is partials or files, not both.
    let run = rtfprof(["diff".into(), format!("--partial_path={left}"), "--left_step=0".into(), "--right_step=2".into()]).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok && out.contains("step 0 (left)") && out.contains("step 2 (right)"), "{out}{err}");
    let run = rtfprof([
        "diff".into(),
        format!("--left_partial_path={left}"),
        format!("--left_profile_path={}", profile("cnn")),
        format!("--right_partial_path={right}"),
    ])
    .run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(!ok && out.is_empty() && err.lines().count() == 1 && err.contains("--left_partial_path"), "{err}");
    let run =
        rtfprof(["diff".into(), format!("--left_text={left}"), format!("--left_profile_path={}", profile("cnn")), format!("--right_partial_path={right}")])
            .run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(!ok && out.is_empty() && err.lines().count() == 1 && err.contains("--left_text"), "{err}");
}
