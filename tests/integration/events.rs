//! `--events_path` end to end, on the event logs of `tools/gen_events.py`
//! (testdata/events): logs still being written, log directories with
//! several runs, a graph found only in the meta graph, several graphs, and
//! every way in (jobs, diff, CSV/JSON, the prompt). The views themselves are
//! compared with tfprof's in tests/integration/golden.rs (`testdata/events/cases.txt`).

use std::path::{Path, PathBuf};

use crate::common;

use prost::Message;
use rtfprof::proto::tensorflow::{Event, event};

fn events() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/events")
}

const FIRST: &str = "events.out.tfevents.1700000000.tutorial";
const SECOND: &str = "events.out.tfevents.1700000060.tutorial";

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

fn flag(name: &str, path: &Path) -> String {
    format!("--{name}={}", path.display())
}

/// A golden case's arguments (testdata/events/cases.txt) with its
/// `--events_path` replaced.
fn golden_case(name: &str, events_path: &Path) -> (Vec<String>, String) {
    let cases = std::fs::read_to_string(events().join("cases.txt")).unwrap();
    let line = cases.lines().find(|l| l.split(' ').next() == Some(name)).expect("case");
    let mut words: Vec<String> = line.split(' ').skip(1).map(str::to_owned).collect();
    for word in &mut words {
        if word.starts_with("--events_path=") {
            *word = flag("events_path", events_path);
        }
    }
    (words, std::fs::read_to_string(events().join("golden").join(format!("{name}.out"))).unwrap())
}

fn copy_tutorial(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for file in [FIRST, SECOND] {
        std::fs::copy(events().join("tutorial").join(file), to.join(file)).unwrap();
    }
}

/// The TFRecords of an event file, decoded (the framing is TF's:
/// length, masked CRC32C, data, masked CRC32C).
fn read_events(path: &Path) -> Vec<Event> {
    let bytes = std::fs::read(path).unwrap();
    let mut at = 0;
    let mut events = Vec::new();
    while at < bytes.len() {
        let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        events.push(Event::decode(&bytes[at + 12..at + 12 + len]).unwrap());
        at += 16 + len;
    }
    events
}

fn write_events(path: &Path, events: &[Event]) {
    let mask = |crc: u32| crc.rotate_right(15).wrapping_add(0xa282_ead8);
    let mut out = Vec::new();
    for event in events {
        let data = event.encode_to_vec();
        let len = (data.len() as u64).to_le_bytes();
        out.extend_from_slice(&len);
        out.extend(mask(crc32c::crc32c(&len)).to_le_bytes());
        out.extend_from_slice(&data);
        out.extend(mask(crc32c::crc32c(&data)).to_le_bytes());
    }
    std::fs::write(path, out).unwrap();
}

/// A training job still writing its log: its last record is cut short. The
/// complete records are read (every step, here), with one warning naming
/// the file and where the partial record starts.
#[test]
fn a_log_still_being_written_reads_its_complete_records() {
    let dir = tempfile::tempdir().unwrap();
    copy_tutorial(dir.path());
    let second = dir.path().join(SECOND);
    let bytes = std::fs::read(&second).unwrap();
    // The last record is a 56-byte summary (72 bytes framed).
    std::fs::write(&second, &bytes[..bytes.len() - 30]).unwrap();
    let (case, golden) = golden_case("tutorial.op.micros", dir.path());
    let run = common::rtfprof(&case).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, golden);
    let partial_at = bytes.len() - 72;
    assert_eq!(
        err,
        format!(
            "rtfprof: warning: --events_path {}: ends in a partial record at byte {partial_at} (still being written?); read the 4 complete records before it\n",
            second.display()
        )
    );
}

/// A log directory whose runs are subdirectories: refused, with the runs
/// listed, until `--events_run` picks one; a directory with one run is
/// that run.
#[test]
fn runs_are_refused_until_one_is_picked() {
    let logdir = tempfile::tempdir().unwrap();
    copy_tutorial(&logdir.path().join("train"));
    let eval = logdir.path().join("eval/nested");
    std::fs::create_dir_all(&eval).unwrap();
    let summary = "events.out.tfevents.1700000000.summary.v2";
    std::fs::copy(events().join("summary_run_metadata").join(summary), eval.join(summary)).unwrap();
    // Not a run: no event files.
    std::fs::create_dir_all(logdir.path().join("plugins/profile")).unwrap();

    let (case, golden) = golden_case("tutorial.scope.default", logdir.path());
    let run = common::rtfprof(&case).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!((out, code), ("", 1));
    assert_eq!(err, format!("rtfprof: --events_path {}: holds 2 runs: eval/nested, train; pick one with --events_run NAME\n", logdir.path().display()));
    for run in ["train", "./train/"] {
        let mut picked = case.clone();
        picked.push(format!("--events_run={run}"));
        let result = common::rtfprof(&picked).run();
        let (out, err, code) = (result.stdout_str(), result.stderr_str(), result.exit_code());
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, golden, "--events_run={run}");
    }
    let run = common::rtfprof(&golden_case("tutorial.scope.default", &logdir.path().join("train")).0).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!((out, code), (golden.as_str(), 0), "{err}");

    // Event files beside the runs make the directory itself a run, ".".
    std::fs::copy(eval.join(summary), logdir.path().join(summary)).unwrap();
    let run = common::rtfprof(&case).run();
    let (err, code) = (run.stderr_str(), run.exit_code());
    assert_eq!(code, 1);
    assert!(err.contains("holds 3 runs: ., eval/nested, train;"), "{err}");
    let mut picked = case.clone();
    picked.push("--events_run=.".into());
    let run = common::rtfprof(&picked).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("step 0: \"forward\" (events.out.tfevents.1700000000.summary.v2)\n"), "{out}");
}

/// TensorBoard reads a graph from the meta graph when the log has no
/// `graph_def` event (Estimator logs): so does rtfprof, to the same view.
#[test]
fn a_graph_in_the_meta_graph_only_is_read() {
    let dir = tempfile::tempdir().unwrap();
    copy_tutorial(dir.path());
    let first = dir.path().join(FIRST);
    let all = read_events(&first);
    let without_graph: Vec<Event> = all.iter().filter(|e| !matches!(e.what, Some(event::What::GraphDef(_)))).cloned().collect();
    assert_eq!(without_graph.len() + 1, all.len());
    assert!(without_graph.iter().any(|e| matches!(e.what, Some(event::What::MetaGraphDef(_)))));
    write_events(&first, &without_graph);
    let (case, golden) = golden_case("tutorial.scope.bytes_micros", dir.path());
    let run = common::rtfprof(&case).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!((code, err), (0, ""));
    assert_eq!(out, golden);
}

/// Several different graphs in one run: the newest is used, as TensorBoard
/// does, with a warning.
#[test]
fn the_newest_of_several_graphs_is_used() {
    let dir = tempfile::tempdir().unwrap();
    copy_tutorial(dir.path());
    let summary = "events.out.tfevents.1690000000.summary.v2";
    std::fs::copy(events().join("summary_run_metadata/events.out.tfevents.1700000000.summary.v2"), dir.path().join(summary)).unwrap();
    let run = common::rtfprof([args(&["scope", "--select=params", "--max_depth=1"]), vec![flag("events_path", dir.path())]].concat()).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        err,
        format!("rtfprof: warning: --events_path {}: 2 graphs differ; using the newest, in {FIRST} at byte 78, as TensorBoard does\n", dir.path().display())
    );
    assert!(
        out.contains(&format!("step 0: \"forward\" ({summary})\nstep 1: \"step0\" ({FIRST})\nstep 2: \"step2\" ({FIRST})\nstep 3: \"step4\" ({SECOND})\n")),
        "{out}"
    );
}

/// Run metadata without step stats (TF2's graph-only traces) are listed,
/// and are not steps.
#[test]
fn graph_only_traces_are_listed_not_steps() {
    let dir = tempfile::tempdir().unwrap();
    copy_tutorial(dir.path());
    let trace = "events.out.tfevents.1700000100.trace.v2";
    std::fs::copy(events().join("tf2_trace/events.out.tfevents.1700000000.trace.v2"), dir.path().join(trace)).unwrap();
    let (case, golden) = golden_case("tutorial.scope.bytes_micros", dir.path());
    let run = common::rtfprof(&case).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    let listed = format!("step 2: \"step4\" ({SECOND})\nno step stats: \"dense_trace\" ({trace})\nno step stats: \"dense_profile\" ({trace})\n");
    assert_eq!(out, golden.replace(&format!("step 2: \"step4\" ({SECOND})\n"), &listed));
}

/// The prompt reads the log once and shows what the one-shot commands show.
#[test]
fn the_prompt_reads_an_event_log() {
    let tutorial = events().join("tutorial");
    let run = common::rtfprof([flag("events_path", &tutorial)]).stdin("op -max_depth 4 -step 1 -select micros,occurrence\nquit\n").run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    let one_shot =
        common::rtfprof([args(&["op", "--max_depth=4", "--step=1", "--select=micros,occurrence"]), vec![flag("events_path", &tutorial)]].concat()).stdout();
    assert_eq!(out, one_shot);
    assert!(
        out.starts_with("Reading Files...\nTry to use a single --profile_path instead of graph_path,op_log_path,run_meta_path\nstep 0: \"step0\""),
        "{out}"
    );
    let run = common::rtfprof([flag("events_path", &tutorial)]).stdin("scope -events_tags step0\nquit\n").run().ok();
    let err = run.stderr_str();
    assert!(err.contains("--events_tags: inputs are read once at start-up"), "{err}");
}

/// CSV and JSON carry every step of the log.
#[test]
fn csv_and_json_have_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let tutorial = events().join("tutorial");
    let (csv, json) = (dir.path().join("scope.csv"), dir.path().join("op.json"));
    for (view, output) in [("scope", format!("csv:outfile={}", csv.display())), ("op", format!("json:outfile={}", json.display()))] {
        common::rtfprof([view.to_owned(), flag("events_path", &tutorial), format!("--output={output}")]).run().ok();
    }
    let csv = std::fs::read_to_string(csv).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(header.contains(",steps,steps_ran,requested_bytes_mean,"), "{header}");
    assert!(csv.lines().any(|l| l.starts_with("2,conv1/Conv2D,true,1,") && l.contains(",3,3,")), "conv1/Conv2D ran in all 3 steps");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(json["steps"], serde_json::json!([0, 1, 2]));
}

/// Jobs take event logs (a run directory or an event file); the tag filter
/// applies to each.
#[test]
fn jobs_take_event_logs() {
    let job_flags = vec![
        format!("--job=tutorial={}", events().join("tutorial").display()),
        format!("--job=forward={}", events().join("summary_run_metadata/events.out.tfevents.1700000000.summary.v2").display()),
    ];
    let run = common::rtfprof([vec!["jobs".to_owned()], job_flags.clone()].concat()).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("job tutorial: 189 nodes, 3 steps,") && out.contains("job forward: 48 nodes, 1 steps,"), "{out}");
    let run = common::rtfprof([args(&["scope", "--max_depth=2", "--events_tags=step[02]|forward"]), job_flags.clone()].concat()).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  forward (") && out.contains("  tutorial ("), "{out}");
    let run = common::rtfprof([args(&["jobs", "--events_tags=step[02]|forward"]), job_flags.clone()].concat()).run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("job tutorial: 189 nodes, 2 steps,"), "{out}");
    // A log directory of several runs: the job names its run's directory.
    let run = common::rtfprof([args(&["jobs", "--events_run=tutorial"]), job_flags].concat()).run();
    let (err, code) = (run.stderr_str(), run.exit_code());
    assert_eq!(code, 2);
    assert!(err.starts_with("rtfprof: --events_run: with --job, give each job its run's directory"), "{err}");
}

/// `diff` compares two steps of a log, or two logs.
#[test]
fn diff_compares_event_logs() {
    let tutorial = events().join("tutorial");
    let run = common::rtfprof(
        [args(&["diff", "--left_step=0", "--right_step=2", "--metric=micros", "--max_depth=2"]), vec![flag("events_path", &tutorial)]].concat(),
    )
    .run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("Comparing {} step 0 (left), {} step 2 (right)\n", tutorial.display(), tutorial.display())), "{out}");
    assert!(out.contains("\n  conv1 (left:"), "{out}");
    let other = events().join("summary_run_metadata");
    let run = common::rtfprof(
        [args(&["diff", "--metric=params", "--max_depth=1"]), vec![flag("left_events_path", &tutorial), flag("right_events_path", &other)]].concat(),
    )
    .run();
    let (out, err, code) = (run.stdout_str(), run.stderr_str(), run.exit_code());
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("Comparing {} (left), {} (right)\n", tutorial.display(), other.display())), "{out}");
}
