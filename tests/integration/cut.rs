//! `rtfprof cut` of XPlane traces: the cut's steps get exactly the rows the
//! whole trace's `rtfprof steps` gives them, and its op and scope views at a
//! kept step are the whole trace's (XProf's input_pipeline_analyzer gives
//! the cut the whole trace's rows too: checked by hand,
//! docs/book/src/commands/cut.md). On testdata's JAX GPU and TF CPU traces,
//! and on `../shared/traces`' JAX H200 traces and TF2 8-GPU trace where
//! that directory is present. (PyTorch cuts are tested beside the PyTorch
//! steps, `steps::pytorch`.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

/// A testdata trace.
fn fixture(name: &str) -> PathBuf {
    common::testdata().join("xplane").join(name).join("plugins/profile/run0/host0.xplane.pb")
}

/// The traces and the steps cut from them: testdata's, and the shared
/// ones present (a cut of 6 steps among them, which keeps one more either
/// side for XProf to drop).
fn cases() -> Vec<(PathBuf, &'static str)> {
    let mut cases = vec![
        (fixture("jax_gpu_cond"), "2..3"),
        (fixture("jax_gpu_cnn"), "1"),
        (fixture("jax_gpu_xfer"), "0"),
        (fixture("tf_loop"), "1..2"),
        (fixture("many_steps"), "1..5"),
        (fixture("tf_data_loop"), "1"),
    ];
    for (name, steps) in [("jax_mlp", "2..7"), ("jax_lstm", "3..4"), ("flax_cnn", "1..3"), ("jax_xfer", "2..3"), ("jax_lstm_nocb", "5")] {
        cases.extend(common::jax_gpu_trace(name).map(|trace| (trace, steps)));
    }
    if let Some(dir) = common::shared_trace_dir("tf2_bert_8gpu") {
        cases.push((dir.join("run/host0.xplane.pb"), "0"));
    }
    cases
}

/// Cuts `steps` of `trace` into `dir`; the cut's path and what rtfprof said.
fn cut(trace: &Path, steps: &str, dir: &Path) -> (PathBuf, String) {
    let out = dir.join("host0.xplane.pb");
    let run =
        common::rtfprof(["cut".into(), format!("--xplane_path={}", trace.display()), format!("--steps={steps}"), format!("-o={}", out.display())]).run().ok();
    (out, String::from_utf8(run.stdout).unwrap())
}

/// A step's number, as `--steps` takes it: the number its name ends with.
fn number(row: &Value) -> u64 {
    row["step"].as_str().unwrap().rsplit(' ').next().unwrap().parse().unwrap()
}

#[test]
fn xplane_cuts_keep_their_steps_rows() {
    for (trace, steps) in cases() {
        let whole = common::steps_json("--xplane_path", &trace).unwrap();
        let (first, last) = steps.split_once("..").unwrap_or((steps, steps));
        let range = first.parse().unwrap()..=last.parse().unwrap();
        let kept: Vec<&Value> = whole["steps"].as_array().unwrap().iter().filter(|row| range.contains(&number(row))).collect();
        assert!(!kept.is_empty(), "{} {steps}", trace.display());
        let dir = tempfile::tempdir().unwrap();
        let (part, said) = cut(&trace, steps, dir.path());
        assert!(said.contains(" events) written to ") && said.contains(kept[0]["step"].as_str().unwrap()), "{said}");
        let part = common::steps_json("--xplane_path", &part).unwrap();
        let rows: Vec<&Value> = part["steps"].as_array().unwrap().iter().collect();
        assert_eq!(rows, kept, "{} {steps}", trace.display());
        assert!(std::fs::metadata(dir.path().join("host0.xplane.pb")).unwrap().len() < std::fs::metadata(&trace).unwrap().len());
    }
}

/// The op and scope views of a kept step (`--step N`, by the trace's step
/// markers) are the whole trace's, but for the rows of ops that never ran
/// in the cut (the whole trace's views show them at 0us).
#[test]
fn xplane_cuts_keep_their_steps_views() {
    let profile = |view: &str, trace: &Path, step: u64| {
        let text = common::rtfprof([view.to_owned(), format!("--xplane_path={}", trace.display()), format!("--step={step}")]).run().ok().stdout;
        let text = String::from_utf8(text).unwrap();
        let rows = text[text.find("Profile:").expect("a profile")..].lines().filter(|row| times(row).next().is_none() || times(row).any(|t| t != "0us"));
        rows.map(str::to_owned).collect::<Vec<_>>()
    };
    // (The views number a JAX trace's steps by their markers' step_num,
    // `rtfprof steps` by XProf's groups: jax_gpu_cond's markers start at 4.)
    let mut cases = vec![(fixture("jax_gpu_cond"), "2..3", [6, 7]), (fixture("tf_loop"), "1..2", [1, 2])];
    cases.extend(common::jax_gpu_trace("jax_mlp_nocb").map(|trace| (trace, "4..5", [4, 5])));
    for (trace, steps, [first, last]) in cases {
        let dir = tempfile::tempdir().unwrap();
        let (part, _) = cut(&trace, steps, dir.path());
        for step in first..=last {
            for view in ["op", "scope"] {
                assert_eq!(profile(view, &part, step), profile(view, &trace, step), "{} {view} --step {step}", trace.display());
            }
        }
    }
}

/// The times of a view's row (`12us`, `1.5ms`, …).
fn times(row: &str) -> impl Iterator<Item = &str> {
    row.split(|c: char| " (),/".contains(c)).filter(|t| t.starts_with(|c: char| c.is_ascii_digit()) && t.ends_with('s') && !t.ends_with('%'))
}

/// Cuts `trace` with `flags` into `dir`: the cut's bytes and what rtfprof
/// said.
fn cut_with(trace: &Path, flags: &[&str], dir: &Path) -> (Vec<u8>, String) {
    let out = dir.join("host0.xplane.pb");
    let mut args = vec!["cut".to_owned(), format!("--xplane_path={}", trace.display()), format!("-o={}", out.display())];
    args.extend(flags.iter().map(|f| f.to_string()));
    let run = common::rtfprof(args).run().ok();
    (std::fs::read(&out).unwrap(), String::from_utf8(run.stdout).unwrap())
}

/// The numbers in the brackets of what a cut said: `N of M events`, then
/// those of each kind left out.
fn counted(said: &str) -> Vec<u64> {
    let counts = &said[said.find('(').unwrap()..said.find(')').unwrap()];
    counts.split(|c: char| !c.is_ascii_digit()).filter_map(|n| n.parse().ok()).collect()
}

/// XPlane cuts by time, devices and duration: all the time is the trace
/// byte for byte; the devices not listed lose their planes, the host keeps
/// its; events shorter than the minimum go, and each kind left out is
/// counted in the line (kept plus left out is every event).
#[test]
fn xplane_cuts_by_time_devices_and_duration() {
    use prost::Message;
    use rtfprof::proto::tensorflow::profiler::{XSpace, x_event};
    let trace = fixture("jax_gpu_cond");
    let whole_bytes = std::fs::read(&trace).unwrap();
    let whole = XSpace::decode(whole_bytes.as_slice()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (all, said) = cut_with(&trace, &["--time_ms=0..100000000"], dir.path());
    assert!(all == whole_bytes, "{said}");

    let (bytes, said) = cut_with(&trace, &["--time_ms=0..100000000", "--devices=7"], dir.path());
    let part = XSpace::decode(bytes.as_slice()).unwrap();
    let names = |space: &XSpace| space.planes.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
    let kept_planes: Vec<String> = names(&whole).into_iter().filter(|n| !n.starts_with("/device:GPU:")).collect();
    assert!(kept_planes.len() < whole.planes.len());
    assert_eq!(names(&part), kept_planes);
    let events = |space: &XSpace| space.planes.iter().flat_map(|p| &p.lines).map(|l| l.events.len() as u64).sum::<u64>();
    let [kept, total, other, 7] = counted(&said)[..] else { panic!("{said}") };
    assert_eq!((kept, total, kept + other), (events(&part), events(&whole), total), "{said}");
    assert!(said.contains("on devices other than 7"), "{said}");

    let (bytes, said) = cut_with(&trace, &["--time_ms=0..100000000", "--min_dur_us=5"], dir.path());
    let part = XSpace::decode(bytes.as_slice()).unwrap();
    let timed = |space: &XSpace| {
        space
            .planes
            .iter()
            .flat_map(|p| &p.lines)
            .flat_map(|l| &l.events)
            .filter(|e| matches!(e.data, Some(x_event::Data::OffsetPs(_))))
            .map(|e| e.duration_ps)
            .collect::<Vec<_>>()
    };
    assert!(timed(&part).iter().all(|&ps| ps >= 5_000_000), "{said}");
    let short = timed(&whole).iter().filter(|&&ps| ps < 5_000_000).count() as u64;
    let [kept, total, too_short, 5] = counted(&said)[..] else { panic!("{said}") };
    assert!(short > 0 && too_short == short && kept + too_short == total && kept == events(&part), "{said}");
}
