//! Partial profiles (`rtfprof::partial`, `rtfprof partial`, `--partial_path`):
//! merging is associative and commutative to the byte; N identical ranks
//! count N times one rank's calls; views from merged partials equal those of
//! `--job` loading; bad partial files are one line and a non-zero exit.

use std::path::{Path, PathBuf};

use rtfprof::partial::{self, Partial};

use crate::common;

use common::{rtfprof, testdata};

fn data(path: &str) -> PathBuf {
    testdata().join(path)
}

/// Fixtures of every input kind but XPlane's, as (job name, path).
const FIXTURES: &[(&str, &str)] = &[
    ("schedule", "pytorch/schedule.pt.trace.json.gz"),
    ("shapes", "pytorch/shapes_merges.pt.trace.json"),
    ("threads", "pytorch/threads_memory.pt.trace.json"),
    ("resnet", "pytorch/h200_resnet18.steps2-3.pt.trace.json.gz"),
    ("cnn", "cnn/profile"),
    ("gpu_synth", "gpu_synth/profile"),
    ("w0", "jobs/worker0"),
    ("w1", "jobs/worker1"),
    ("jax", "xplane/jax_gpu_cnn"),
];

fn partials() -> Vec<Partial> {
    FIXTURES.iter().map(|(name, path)| rtfprof::make_partial::from_path(&data(path), Some(name)).unwrap_or_else(|e| panic!("{path}: {e}"))).collect()
}

/// xorshift64*: the same sequence on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Merges `parts` as a random tree: shuffled, cut into random groups, each
/// merged (recursively), the results merged in a random order.
fn random_tree(rng: &mut Rng, mut parts: Vec<Partial>) -> Partial {
    rng.shuffle(&mut parts);
    if parts.len() <= 2 {
        return partial::merge(parts).unwrap();
    }
    let mut groups = Vec::new();
    while !parts.is_empty() {
        let take = 1 + rng.below(parts.len());
        let rest = parts.split_off(take);
        groups.push(if rng.below(2) == 0 { random_tree(rng, parts) } else { partial::merge(parts).unwrap() });
        parts = rest;
    }
    rng.shuffle(&mut groups);
    // Through bytes, as workers send them.
    let groups = groups.iter().map(|g| partial::from_bytes(&partial::to_bytes(g), Path::new("g")).unwrap());
    partial::merge(groups).unwrap()
}

#[test]
fn merging_is_associative_and_commutative_to_the_byte() {
    let parts = partials();
    assert!(parts.len() >= 8);
    let canonical = partial::to_bytes(&partial::merge(parts.clone()).unwrap());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..40 {
        let merged = random_tree(&mut rng, parts.clone());
        assert!(partial::to_bytes(&merged) == canonical, "round {round}: bytes differ");
    }
    // A job given twice is an error, not a silent double count.
    let err = partial::merge([parts[0].clone(), parts[0].clone()]).unwrap_err().to_string();
    assert!(err.contains("'schedule' is in two partials"), "{err}");
}

#[test]
fn n_identical_ranks_count_n_times_one_rank() {
    const N: usize = 6;
    let trace = data("pytorch/schedule.pt.trace.json.gz");
    let one = rtfprof::make_partial::from_path(&trace, Some("rank0")).unwrap();
    let ranks = partial::merge((0..N).map(|r| rtfprof::make_partial::from_path(&trace, Some(&format!("rank{r}"))).unwrap())).unwrap();
    let opts = rtfprof::show::Options { max_depth: i64::MAX, ..Default::default() };
    let rows = |p: Partial| {
        let loaded = p.into_loaded();
        let root = rtfprof::show::run(&loaded.stats, rtfprof::views::View::Op, &opts).unwrap().root;
        let mut rows: Vec<(String, i64, i64)> = root.children.iter().map(|r| (r.name.clone(), r.own.run_count, r.own.exec_micros)).collect();
        rows.sort();
        rows
    };
    let (one, all) = (rows(one), rows(ranks));
    assert!(!one.is_empty());
    assert_eq!(one.len(), all.len());
    for (a, b) in one.iter().zip(&all) {
        assert_eq!((&a.0, a.1 * N as i64, a.2 * N as i64), (&b.0, b.1, b.2), "op {}", a.0);
    }
}

#[test]
fn views_of_merged_partials_equal_views_of_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    let mut jobs = Vec::new();
    // Two partials of one job each, one of three jobs: grouping is free.
    for (i, (name, path)) in FIXTURES.iter().enumerate().filter(|(_, (n, _))| *n != "jax") {
        let path = data(path).display().to_string();
        jobs.push(format!("--job={name}={path}"));
        if i < 2 {
            let file = dir.path().join(format!("{name}.rtfprof"));
            rtfprof(["partial", &format!("--job={name}={path}"), "-o", file.to_str().unwrap()]).run().ok();
            files.push(file.display().to_string());
        }
    }
    let rest = dir.path().join("rest");
    std::fs::create_dir(&rest).unwrap();
    let mut args: Vec<String> = vec!["partial".into()];
    args.extend(jobs[2..].iter().cloned());
    args.extend(["-o".into(), rest.join("rest.rtfprof").display().to_string()]);
    rtfprof(&args).run().ok();
    files.push(rest.display().to_string());
    // (Given in another order than the names sort: the loader sorts them.)
    jobs.reverse();
    let partial_flag = format!("--partial_path={}", files.join(","));
    for view in [
        &["scope", "--max_depth=4"][..],
        &["op", "--select=micros,occurrence,accelerator_micros"],
        &["code", "--max_depth=6", "--select=micros,bytes"],
        &["graph", "--max_depth=3"],
        &["scope", "--step=0", "--select=bytes,peak_bytes,residual_bytes,output_bytes"],
    ] {
        let mut from_partials: Vec<&str> = view.to_vec();
        from_partials.push(&partial_flag);
        let mut from_jobs: Vec<&str> = view.to_vec();
        from_jobs.extend(jobs.iter().map(String::as_str));
        let run = rtfprof(&from_partials).run();
        let (a, err_a, code_a) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        let run = rtfprof(&from_jobs).run();
        let (b, err_b, code_b) = (run.stdout_str(), run.stderr_str(), run.exit_code());
        assert_eq!((code_a, code_b), (0, 0), "{view:?}: {err_a} {err_b}");
        assert!(a.lines().count() > 5, "{view:?}: {a}");
        assert!(a == b, "{view:?}: views differ\n--- partials\n{a}\n--- jobs\n{b}");
    }
}

#[test]
fn bad_partial_files_are_one_line_and_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let good = partial::to_bytes(&rtfprof::make_partial::from_path(&data("pytorch/threads_memory.pt.trace.json"), None).unwrap());
    let mut other_version = good.clone();
    other_version[partial::MAGIC.len()] = 99;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() * 2 / 3].to_vec(), "truncated or corrupt"),
        ("no_version", partial::MAGIC.to_vec(), "truncated"),
        ("version", other_version, "version 99; this rtfprof reads version 1"),
        ("not_partial", std::fs::read(data("cnn/profile")).unwrap(), "not an rtfprof partial profile"),
        ("empty", Vec::new(), "not an rtfprof partial profile"),
    ];
    for (name, bytes, message) in cases {
        let file = dir.path().join(format!("{name}.rtfprof"));
        std::fs::write(&file, bytes).unwrap();
        for command in ["scope", "op", "report"] {
            let run = rtfprof([command, &format!("--partial_path={}", file.display()), "--output=html:outfile=/dev/null"]).run();
            let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
            let _ = out;
            assert!(code == 1 || command != "report", "{name} {command}: exit {code}: {err}");
            assert!(code != 0, "{name} {command}");
            assert_eq!(err.lines().count(), 1, "{name} {command}: {err}");
            assert!(err.contains(&file.display().to_string()) || command != "report", "{name}: {err}");
            assert!(!err.contains("panicked"), "{name}: {err}");
        }
        let run = rtfprof(["op", &format!("--partial_path={}", file.display())]).run();
        let (err, code) = (run.stderr_str(), run.exit_code());
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(&file.display().to_string()) && err.contains(message), "{name}: {err}");
    }
    // The commands that read the traces' events say so.
    let file = dir.path().join("good.rtfprof");
    std::fs::write(&file, &good).unwrap();
    let run = rtfprof(["steps", &format!("--partial_path={}", file.display())]).run();
    let (err, code) = (run.stderr_str(), run.exit_code());
    assert_ne!(code, 0);
    assert!(err.contains("partial profiles do not hold"), "{err}");
}

/// A partial of each rank's trace carries the rank: `ranks` of the merged
/// partials is `ranks` of the traces read together, text, JSON and CSV,
/// for PyTorch ranks (with and without distributedInfo) and XPlane hosts;
/// the report's ranks tab too.
#[test]
fn ranks_of_partials_are_the_ranks_of_their_traces() {
    let dir = tempfile::tempdir().unwrap();
    for job in ["ranks16", "gloo3"] {
        let traces = testdata().join("pytorch").join(job);
        let parts = dir.path().join(job);
        std::fs::create_dir(&parts).unwrap();
        for trace in std::fs::read_dir(&traces).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().contains(".pt.trace.json")) {
            let out = parts.join(format!("{}.rtfprof", trace.file_name().unwrap().to_string_lossy().split(".pt.trace.json").next().unwrap()));
            rtfprof(["partial".to_owned(), format!("--pytorch_path={}", trace.display()), format!("-o={}", out.display())]).stdout();
        }
        let from_traces = format!("--pytorch_path={}", traces.display());
        let from_parts = format!("--partial_path={}", parts.display());
        assert_eq!(rtfprof(["ranks", &from_parts]).stdout(), rtfprof(["ranks", &from_traces]).stdout(), "{job}");
        for kind in ["json", "csv"] {
            assert_eq!(rtfprof(["ranks", &from_parts]).outfile(kind), rtfprof(["ranks", &from_traces]).outfile(kind), "{job} {kind}");
        }
        let tab = |input: &str| common::page_data(&rtfprof(["report", input]).outfile("html")).unwrap()["ranks"].clone();
        let ranks_tab = tab(&from_parts);
        assert!(ranks_tab["ranks"].as_array().is_some_and(|r| r.len() >= 3), "{job}: {ranks_tab}");
        assert_eq!(ranks_tab, tab(&from_traces), "{job}: the report's ranks tab");
    }
    let hosts = testdata().join("xplane/two_hosts");
    let part = dir.path().join("hosts.rtfprof");
    rtfprof(["partial".to_owned(), format!("--xplane_path={}", hosts.display()), format!("-o={}", part.display())]).stdout();
    assert_eq!(
        rtfprof(["ranks".to_owned(), format!("--partial_path={}", part.display())]).stdout(),
        rtfprof(["ranks".to_owned(), format!("--xplane_path={}", hosts.display())]).stdout()
    );
    // A partial of TF files carries no rank: said, in one line.
    let tf = dir.path().join("tf.rtfprof");
    rtfprof(["partial".to_owned(), format!("--profile_path={}", testdata().join("cnn/profile").display()), format!("-o={}", tf.display())]).stdout();
    let run = rtfprof(["ranks".to_owned(), format!("--partial_path={}", tf.display())]).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert!(code != 0 && out.is_empty() && err.lines().count() == 1 && err.contains("carries no rank"), "{err}");
}
