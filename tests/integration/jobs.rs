//! Several jobs at once, on two jobs traced concurrently by TensorFlow in
//! separate processes (testdata/jobs, tools/gen_golden.py --jobs: the cnn at
//! batch 64 and 32, starting their traced steps at one instant). Both report
//! the same node and device names, which rtfprof must keep apart.

use std::path::PathBuf;

use crate::common;

use common::{rtfprof, testdata};

fn jobs_dir() -> PathBuf {
    testdata().join("jobs")
}

fn job_flags() -> Vec<String> {
    ["worker0", "worker1"].iter().map(|j| format!("--job={j}={}", jobs_dir().join(j).display())).collect()
}

fn body(out: &str) -> Vec<String> {
    out.lines().skip_while(|l| !l.starts_with("_TFProfRoot")).map(str::to_owned).collect()
}

#[test]
fn each_job_in_the_combined_view_equals_its_own_view() {
    let opts = ["--max_depth=100".to_owned(), "--select=micros,bytes,params,occurrence".to_owned()];
    let mut combined_args = vec!["scope".to_owned()];
    combined_args.extend(job_flags());
    combined_args.extend(opts.iter().cloned());
    let run = rtfprof(&combined_args).run();
    let (combined, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    let combined = body(combined);
    for job in ["worker0", "worker1"] {
        let dir = jobs_dir().join(job);
        let mut args = vec!["scope".to_owned(), format!("--graph_path={}", dir.join("graph.pb").display())];
        args.push(format!("--run_meta_path={}", (0..3).map(|i| dir.join(format!("run_meta_{i}")).display().to_string()).collect::<Vec<_>>().join(",")));
        args.extend(opts.iter().cloned());
        let run = rtfprof(&args).run();
        let (alone, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(ok, "{err}");
        let alone = body(alone);
        // The job's own nodes, renamed job/<node> and indented under the job scope.
        let expected: Vec<String> = alone[1..]
            .iter()
            .map(|l| {
                let name_at = l.len() - l.trim_start().len();
                format!("  {}{job}/{}", &l[..name_at], &l[name_at..])
            })
            .collect();
        let start = combined.iter().position(|l| l.starts_with(&format!("  {job} ("))).expect("job scope line");
        let inside: Vec<String> = combined[start + 1..].iter().take_while(|l| l.starts_with("    ")).cloned().collect();
        assert_eq!(inside, expected, "{job}");
        // The job's scope line totals are its own root's totals.
        let totals = |line: &str| line.split(" (").nth(1).unwrap().split(", ").map(|i| i.rsplit('/').next().unwrap().to_owned()).collect::<Vec<_>>();
        let job_totals = totals(&combined[start]);
        let root_totals = totals(&alone[0]);
        assert_eq!(job_totals[..5], root_totals[..5], "{job} totals");
    }
}

#[test]
fn devices_stay_apart_and_timelines_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let mut args = vec!["graph".to_owned(), "--step=0".into(), "--max_depth=100000".into(), format!("--output=timeline:outfile={}", out.display())];
    args.extend(job_flags());
    rtfprof(&args).run().ok();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("t_0")).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let processes: Vec<&str> = events.iter().filter(|e| e["name"] == "process_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
    for job in ["worker0", "worker1"] {
        assert!(processes.iter().any(|p| p.contains(&format!(": /{job}/job:localhost/"))), "{job}: {processes:?}");
    }
    // The jobs ran at the same time: their slices' time ranges overlap.
    let pid_of = |job: &str| {
        events.iter().find(|e| e["name"] == "process_name" && e["args"]["name"].as_str().unwrap().contains(&format!("/{job}/"))).unwrap()["pid"]
            .as_u64()
            .unwrap()
    };
    let range = |pid: u64| {
        let xs: Vec<(i64, i64)> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid)
            .map(|e| (e["ts"].as_i64().unwrap(), e["ts"].as_i64().unwrap() + e["dur"].as_i64().unwrap()))
            .collect();
        (xs.iter().map(|x| x.0).min().unwrap(), xs.iter().map(|x| x.1).max().unwrap())
    };
    let (a, b) = (range(pid_of("worker0")), range(pid_of("worker1")));
    assert!(a.0 < b.1 && b.0 < a.1, "job time ranges {a:?} and {b:?} do not overlap");
}

#[test]
fn summary_reports_steps_and_busiest_devices() {
    let mut args = vec!["jobs".to_owned()];
    args.extend(job_flags());
    let run = rtfprof(&args).run();
    let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("job worker0: ") && lines[0].contains(" 3 steps"), "{out}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("  step ")).count(), 6, "{out}");
    assert!(lines.iter().filter(|l| l.starts_with("  step ")).all(|l| l.contains("busiest: /job:localhost/replica:0/task:0/device:cpu:0 ")), "{out}");
}

#[test]
fn bad_job_arguments_fail_with_one_line() {
    let dir = jobs_dir().join("worker0").display().to_string();
    for (args, needle) in [
        (vec!["scope".to_owned(), "--job=w".into()], "not NAME=PATH"),
        (vec!["scope".to_owned(), format!("--job=a={dir}"), format!("--job=a={dir}")], "given twice"),
        (vec!["scope".to_owned(), format!("--job=a={dir}"), format!("--graph_path={dir}/graph.pb")], "--job"),
        (vec!["scope".to_owned(), "--job=a=/nonexistent/profile".into()], "/nonexistent/profile"),
        (vec!["jobs".to_owned(), format!("--graph_path={dir}/graph.pb")], "--job NAME=PATH"),
    ] {
        let run = rtfprof(&args).run();
        let (out, err, ok) = (run.stdout_str(), run.stderr_str(), run.success());
        assert!(!ok && out.is_empty(), "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
