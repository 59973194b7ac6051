//! `rtfprof diff` on two real profiles of one model at two batch sizes
//! (`cnn` at batch 4, `cnn_b8` at batch 8).
//!
//! The report is rtfprof's own, so it is checked by invariants plus a
//! blessed snapshot (`RTFPROF_BLESS=1` rewrites it; review the git diff):
//! - diffing tfprof's own saved scope outputs of the two profiles lists the
//!   same nodes, in the same tree, as diffing the profiles themselves;
//! - identical sides are refused, and a copy of a profile differs by 0;
//! - bad metrics, sizes, views and text files fail with one line.

mod common;

use common::{rtfprof_ok as rtfprof, testdata};

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
        let (a, err_a, ok_a) = rtfprof(&from_text);
        let (b, err_b, ok_b) = rtfprof(&from_profiles);
        assert!(ok_a && ok_b, "{err_a}{err_b}");
        assert!(tree_lines(&a).len() > 3, "{metric}: the batch sizes should differ:\n{a}");
        assert_eq!(tree_lines(&a), tree_lines(&b), "{metric}: text and profile diffs list different nodes");
    }
}

#[test]
fn identical_sides_are_refused_and_copies_differ_by_nothing() {
    let p = testdata().join("cnn/profile").display().to_string();
    let (out, err, ok) = rtfprof(&["diff".into(), format!("--left_profile_path={p}"), format!("--right_profile_path={p}"), "--right_step=-1".into(), "--left_step=-1".into(), "--names=a,b".into()]);
    // Same inputs and step: refused, since it could only be a mistake.
    assert!(!ok && err.lines().count() == 1 && err.contains("both sides are the same"), "{out}{err}");
    let (out, err, ok) = rtfprof(&["diff".into(), format!("--profile_path={p}"), "--left_step=1".into(), "--right_step=1".into(), format!("--right_profile_path={p}")]);
    assert!(!ok, "{out}{err}");
    let copy = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(&p, copy.path()).unwrap();
    let (out, err, ok) = rtfprof(&["diff".into(), format!("--left_profile_path={p}"), format!("--right_profile_path={}", copy.path().display()), "--delta=0".into(), "--min_size=1".into()]);
    assert!(ok, "{err}");
    // Equal values everywhere: relative difference 0 >= 0 lists nodes, but
    // every listed difference must be zero.
    assert!(out.lines().skip(4).all(|l| l.contains(" +0") && l.contains("x1.0")), "{out}");
}

#[test]
fn snapshot_of_two_batch_sizes() {
    let mut args = vec!["diff".to_owned(), "--metric=bytes".into(), "--delta=0.2".into(), "--min_size=10KB".into(), "--names=bs8,bs4".into(), "--max_depth=100".into()];
    args.extend(side("left", "cnn_b8"));
    args.extend(side("right", "cnn"));
    let (out, err, ok) = rtfprof(&args);
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
        let (out, err, ok) = rtfprof(&args);
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
        let (_, err, ok) = rtfprof(&["scope".into(), format!("--xplane_path={trace}"), "--select=micros".into(), "--max_depth=100".into(), format!("--output=file:outfile={}", out.display())]);
        assert!(ok, "{err}");
        texts.extend([format!("--{side}_text={}", out.display()), "--metric=micros".into()]);
    }
    texts.pop();
    let (from_texts, err_a, ok_a) = rtfprof(&texts);
    let (from_traces, err_b, ok_b) = rtfprof(&["diff".into(), "--max_depth=100".into(), "--delta=0.05".into(), format!("--left_xplane_path={mlp}"), format!("--right_xplane_path={nocb}")]);
    assert!(ok_a && ok_b, "{err_a}{err_b}");
    assert!(from_traces.contains("relative difference in micros"), "default metric of traces: {from_traces}");
    assert!(tree_lines(&from_traces).len() > 3, "{from_traces}");
    assert_eq!(tree_lines(&from_texts), tree_lines(&from_traces));
    // The global trace at two steps; a run directory's hosts as one side.
    let (out, err, ok) = rtfprof(&["diff".into(), format!("--xplane_path={mlp}"), "--left_step=8".into(), "--right_step=9".into()]);
    assert!(ok && out.contains("step 8 (left)") && out.contains("step 9 (right)"), "{out}{err}");
    let hosts = xplane.join("two_hosts").display().to_string();
    let (out, err, ok) = rtfprof(&["diff".into(), format!("--left_xplane_path={hosts}"), "--right_step=0".into(), "--delta=0".into()]);
    assert!(ok && out.contains("hosts host0,host1 (left)") && out.contains("\n  host0") && out.contains("\n  host1"), "{out}{err}");
    let (_, err, ok) = rtfprof(&["diff".into(), format!("--left_xplane_path={mlp}"), format!("--left_profile_path={mlp}"), format!("--right_xplane_path={nocb}")]);
    assert!(!ok && err.contains("--left_xplane_path") && err.lines().count() == 1, "{err}");
}
