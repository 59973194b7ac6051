//! Timelines must load in chrome://tracing and Perfetto without import
//! errors. Without Perfetto's trace processor here, the tests check the
//! structure Perfetto's JSON importer relies on, on every fixture:
//! - every event has a known phase; `X` slices have `ts` and `dur` ≥ 0;
//! - every pid has a `process_name` and every (pid, tid) with slices a
//!   `thread_name`;
//! - slices on one thread nest (none partially overlaps another);
//! - each flow `s` has exactly one `f` with the same id, bound with
//!   `"bp":"e"`, and both lie inside a slice on their thread;
//! - counters carry numbers only.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use crate::common;

use common::{fixture_flags as inputs, rtfprof};

/// Checks the structure; returns (slices, flows, counters).
fn validate(path: &Path) -> (usize, usize, usize) {
    let json: Value = serde_json::from_slice(&std::fs::read(path).expect("timeline file")).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents array");
    let mut process_names = HashSet::new();
    let mut thread_names = HashSet::new();
    let mut slices: BTreeMap<(u64, u64), Vec<(i64, i64)>> = BTreeMap::new();
    let mut flows: HashMap<u64, Vec<&Value>> = HashMap::new();
    let mut counters = 0;
    for e in events {
        let pid = e["pid"].as_u64().expect("pid");
        let tid = e["tid"].as_u64().unwrap_or(0);
        match e["ph"].as_str().expect("ph") {
            "M" => match e["name"].as_str() {
                Some("process_name") => assert!(process_names.insert(pid), "pid {pid} named twice"),
                Some("thread_name") => assert!(thread_names.insert((pid, tid))),
                Some("process_sort_index") => {}
                other => panic!("unexpected metadata {other:?}"),
            },
            "X" => {
                // Whole µs, or µs with ns precision (XPlane): compared in ns.
                let ns = |v: &Value| (v.as_f64().expect("a number") * 1000.0).round() as i64;
                let (ts, dur) = (ns(&e["ts"]), ns(&e["dur"]));
                assert!(ts >= 0 && dur >= 0, "negative ts/dur in {e}");
                slices.entry((pid, tid)).or_default().push((ts, ts + dur));
            }
            "s" | "f" => flows.entry(e["id"].as_u64().expect("flow id")).or_default().push(e),
            "C" => {
                counters += 1;
                let args = e["args"].as_object().expect("counter args");
                assert!(!args.is_empty() && args.values().all(Value::is_number), "non-numeric counter {e}");
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    for (&(pid, tid), spans) in &mut slices {
        assert!(process_names.contains(&pid), "pid {pid} has no process_name");
        assert!(thread_names.contains(&(pid, tid)), "({pid},{tid}) has no thread_name");
        spans.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
        let mut open: Vec<i64> = Vec::new();
        for &(start, end) in spans.iter() {
            while open.last().is_some_and(|&e| e <= start) {
                open.pop();
            }
            if let Some(&parent_end) = open.last() {
                assert!(end <= parent_end, "({pid},{tid}): slice {start}..{end} overlaps its parent ending {parent_end}");
            }
            open.push(end);
        }
    }
    let inside = |e: &Value| {
        let key = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap());
        let ts = (e["ts"].as_f64().unwrap() * 1000.0).round() as i64;
        slices.get(&key).is_some_and(|s| s.iter().any(|&(a, b)| a <= ts && ts <= b))
    };
    for (id, pair) in &flows {
        assert_eq!(pair.len(), 2, "flow {id} needs one s and one f");
        let (s, f) = (pair.iter().find(|e| e["ph"] == "s").expect("s"), pair.iter().find(|e| e["ph"] == "f").expect("f"));
        assert_eq!(f["bp"], "e", "flow {id} end must bind to its enclosing slice");
        assert!(inside(s) && inside(f), "flow {id} endpoints must lie inside slices");
    }
    (slices.values().map(Vec::len).sum(), flows.len(), counters)
}

#[test]
fn graph_timelines_are_perfetto_valid() {
    let dir = tempfile::tempdir().unwrap();
    let mut flows = 0;
    for model in ["mlp", "cnn", "while", "gpu_synth"] {
        let out = dir.path().join(format!("{model}.json"));
        let mut args = vec!["graph".to_owned(), "--max_depth=100000".into(), format!("--output=timeline:outfile={}", out.display())];
        args.extend(inputs(model));
        let stdout = rtfprof(&args).stdout();
        // --step -1 in the graph view writes one file per step.
        for step in 0..3 {
            let file = dir.path().join(format!("{model}.json_{step}"));
            assert!(stdout.contains(&format!("Timeline file is written to {}.", file.display())));
            let (slices, f, _) = validate(&file);
            assert!(slices > 20, "{model} step {step}: only {slices} slices");
            flows += f;
        }
    }
    // gpu_synth has ops on the GPU fed by CPU ops, so tensors cross devices.
    assert!(flows > 0, "no cross-device flows in any fixture");
}

#[test]
fn scope_and_code_timelines_nest_by_total_time() {
    let dir = tempfile::tempdir().unwrap();
    for view in ["scope", "code"] {
        let out = dir.path().join(view);
        let mut args = vec![view.to_owned(), "--max_depth=100".into(), "--step=1".into(), format!("--output=timeline:outfile={}", out.display())];
        args.extend(inputs("cnn"));
        rtfprof(&args).stdout();
        let (slices, _, _) = validate(&dir.path().join(format!("{view}_1")));
        assert!(slices > 10, "{view}: {slices} slices");
    }
}

/// XPlane input: the trace's own events, per plane and line, nest on every
/// thread (overlapping events go to lanes), on every fixture and on the
/// shared accelerator traces; a step keeps only events inside its marker.
#[test]
fn xplane_timelines_are_perfetto_valid() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let mut traces: Vec<(std::path::PathBuf, Vec<i64>)> = ["tf_loop", "keras_fit", "while_loop", "jax_jit", "two_hosts", "gpu_synth"]
        .iter()
        .map(|f| (root.join("testdata/xplane").join(f), vec![-1, 0, 1]))
        .collect();
    for shared in ["xla_tpu_inference", "tf2_bert_8gpu"] {
        let path = root.join("../shared/traces").join(shared).join("run");
        if path.exists() {
            traces.push((path, vec![-1]));
        }
    }
    for (trace, steps) in traces {
        let mut slices_by_step = Vec::new();
        for step in steps {
            let out = dir.path().join("tl.json");
            rtfprof([
                "scope".into(),
                format!("--xplane_path={}", trace.display()),
                format!("--step={step}"),
                format!("--output=timeline:outfile={}", out.display()),
            ])
            .stdout();
            let (slices, _, _) = validate(&dir.path().join(format!("tl.json_{step}")));
            assert!(slices > 0, "{}: step {step} has no slices", trace.display());
            slices_by_step.push(slices);
        }
        if slices_by_step.len() > 1 {
            assert!(
                slices_by_step[1..].iter().all(|&s| s < slices_by_step[0]),
                "{}: a step holds fewer events than the trace: {slices_by_step:?}",
                trace.display()
            );
        }
    }
}

/// A timeline named `*.gz` is gzip, named `<stem>_<step>.json.gz`, and holds
/// the same JSON as the plain file; the message names the file written.
#[test]
fn gz_timelines_are_gzip_of_the_same_json() {
    use std::io::Read;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, i64)> = vec![
        (vec!["scope".into(), format!("--xplane_path={}", root.join("testdata/xplane/jax_jit").display())], 1),
        (["graph".to_owned(), "--max_depth=100".into()].into_iter().chain(inputs("cnn")).collect(), 0),
    ];
    for (args, step) in cases {
        let run = |outfile: &str| {
            let mut a = args.clone();
            a.push(format!("--step={step}"));
            a.push(format!("--output=timeline:outfile={}", dir.path().join(outfile).display()));
            rtfprof(&a).stdout()
        };
        run("plain.json");
        let said = run("packed.json.gz");
        let packed = dir.path().join(format!("packed_{step}.json.gz"));
        assert!(said.contains(&packed.display().to_string()), "{said}");
        let mut json = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&packed).unwrap()).read_to_string(&mut json).unwrap();
        assert_eq!(json, std::fs::read_to_string(dir.path().join(format!("plain.json_{step}"))).unwrap(), "{args:?}");
        validate(&dir.path().join(format!("plain.json_{step}")));
    }
}

/// One event of a timeline as the tests compare them: (process name,
/// thread name without its lane's ` (N)`, phase, name, ts ns, dur ns).
type Row = (String, String, String, String, i64, i64);

/// The slices and counter points of a timeline file (plain or gzip), in
/// a fixed order.
fn rows(path: &Path) -> Vec<Row> {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path).expect("timeline file");
    if path.to_string_lossy().ends_with(".gz") {
        flate2::read::GzDecoder::new(file).read_to_string(&mut text).expect("gzip");
    } else {
        std::io::BufReader::new(file).read_to_string(&mut text).expect("text");
    }
    let json: Value = serde_json::from_str(&text).expect("valid JSON");
    let events = json["traceEvents"].as_array().expect("traceEvents array");
    let mut processes = HashMap::new();
    let mut threads = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let (pid, tid, name) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap_or(0), e["args"]["name"].as_str().unwrap_or("").to_owned());
        match e["name"].as_str() {
            Some("process_name") => drop(processes.insert(pid, name)),
            Some("thread_name") => drop(threads.insert((pid, tid), name)),
            _ => {}
        }
    }
    let ns = |v: &Value| (v.as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
    let mut rows: Vec<Row> = events
        .iter()
        .filter(|e| e["ph"] == "X" || e["ph"] == "C")
        .map(|e| {
            let (pid, tid) = (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap_or(0));
            let thread = threads.get(&(pid, tid)).cloned().unwrap_or_default();
            // (Lanes are packed anew in each file: ` (2)` is the line's second lane.)
            let thread = match thread.rsplit_once(" (") {
                Some((line, lane)) if lane.ends_with(')') && lane[..lane.len() - 1].parse::<u32>().is_ok() => line.to_owned(),
                _ => thread,
            };
            let name = e["name"].as_str().unwrap_or("").to_owned();
            (processes[&pid].clone(), thread, e["ph"].as_str().unwrap().to_owned(), name, ns(&e["ts"]), ns(&e["dur"]))
        })
        .collect();
    rows.sort();
    rows
}

/// `1234567` as `1,234,567`, as the summary line writes counts.
fn commas(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes the timeline of `trace` with `flags` to `dir/name` (`--step -1`:
/// `name_-1`); its rows, checked against Perfetto's rules, and stderr.
fn xplane_timeline(trace: &Path, flags: &[&str], dir: &Path, name: &str) -> (Vec<Row>, String) {
    let out = dir.join(name);
    let run =
        rtfprof(["scope".to_owned(), format!("--xplane_path={}", trace.display()), format!("--output=timeline:outfile={}", out.display())]).args(flags).run();
    let (stdout, stderr) = (run.stdout_lossy().into_owned(), run.stderr_lossy().into_owned());
    assert!(run.success(), "{flags:?}: {stdout}{stderr}");
    let file = dir.join(match name.strip_suffix(".json.gz") {
        Some(stem) => format!("{stem}_-1.json.gz"),
        None => format!("{name}_-1"),
    });
    assert!(stdout.contains(&format!("Timeline file is written to {}.", file.display())), "{stdout}");
    if !name.ends_with(".gz") {
        validate(&file);
    }
    (rows(&file), stderr)
}

/// Whether a row overlaps `[from, to)` ns (one of no length: starts in it).
fn overlaps(row: &Row, from: i64, to: i64) -> bool {
    let (start, end) = (row.4, row.4 + row.5);
    start < to && end.max(start + 1) > from
}

/// `--steps A..B` keeps the events that overlap the steps, as `rtfprof
/// steps` numbers them: on TF and JAX CPU traces, whose steps are their
/// markers (`train 1`, numbered by their `step_num`), exactly the events
/// of the whole trace's timeline that overlap those markers' span there,
/// at the same times; the stderr line counts what was left out, and a
/// `.json.gz` holds the same events.
#[test]
fn an_xplane_timeline_keeps_the_steps_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    for fixture in ["tf_loop", "jax_jit", "tf_data_loop"] {
        let trace = common::testdata().join("xplane").join(fixture);
        let (all, stderr) = xplane_timeline(&trace, &[], dir.path(), "all.json");
        assert!(!stderr.contains("timeline:"), "{fixture}: nothing was left out: {stderr}");
        // The markers: the slices with a `step_num` argument, read from
        // the JSON (the rows keep no arguments).
        let json: Value = serde_json::from_str(&std::fs::read_to_string(dir.path().join("all.json_-1")).unwrap()).unwrap();
        let ns = |v: &Value| (v.as_f64().unwrap() * 1000.0).round() as i64;
        let mut markers: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
        for e in json["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X") {
            if let Some(step) = e["args"]["step_num"].as_i64() {
                let (ts, end) = (ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"]));
                let span = markers.entry(step).or_insert((ts, end));
                *span = (span.0.min(ts), span.1.max(end));
            }
        }
        let steps: Vec<i64> = markers.keys().copied().collect();
        assert!(steps.len() >= 3, "{fixture}: markers {steps:?}");
        for (first, last) in [(steps[1], steps[1]), (steps[1], steps[2])] {
            let (from, to) = (markers[&first].0, markers[&last].1);
            let expected: Vec<Row> = all.iter().filter(|r| overlaps(r, from, to)).cloned().collect();
            let flag = format!("--steps={first}..{last}");
            let (got, stderr) = xplane_timeline(&trace, &[&flag], dir.path(), "steps.json");
            assert!(!got.is_empty() && got.len() < all.len(), "{fixture} {flag}: {} of {}", got.len(), all.len());
            assert_eq!(got, expected, "{fixture} {flag}");
            let window = if first == last { format!("step {first}") } else { format!("steps {first}..{last}") };
            let line =
                format!("timeline: kept {} events of {} ({} outside {window} left out)", commas(got.len()), commas(all.len()), commas(all.len() - got.len()));
            assert!(stderr.lines().any(|l| l == line), "{fixture} {flag}: want {line:?} in {stderr:?}");
            let (packed, _) = xplane_timeline(&trace, &[&flag], dir.path(), "steps.json.gz");
            assert_eq!(packed, got, "{fixture} {flag}: the .json.gz holds the same events");
            let mut json = String::new();
            std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(dir.path().join("steps_-1.json.gz")).unwrap()), &mut json)
                .unwrap();
            assert_eq!(json, std::fs::read_to_string(dir.path().join("steps.json_-1")).unwrap(), "{fixture} {flag}: the .json.gz is the same JSON");
        }
    }
}

/// `--time_ms A..B` keeps the events overlapping that span of the whole
/// trace's timeline (ms from its first event), `--min_dur_us` drops the
/// shorter slices (counter points stay), and `--devices` the device planes
/// it does not list (the host's stay); together, each rule applies to what
/// the others kept. With nothing left out there is no line.
#[test]
fn an_xplane_timeline_keeps_a_time_devices_and_long_events() {
    let dir = tempfile::tempdir().unwrap();
    for fixture in ["tf_loop", "jax_gpu_cond", "gpu_synth"] {
        let trace = common::testdata().join("xplane").join(fixture);
        let (all, _) = xplane_timeline(&trace, &[], dir.path(), "all.json");
        let end = all.iter().map(|r| r.4 + r.5).max().unwrap();
        let (from, to) = (end / 3, 2 * end / 3);
        let time = format!("--time_ms={:.6}..{:.6}", from as f64 / 1e6, to as f64 / 1e6);
        let (got, stderr) = xplane_timeline(&trace, &[&time], dir.path(), "time.json");
        let expected: Vec<Row> = all.iter().filter(|r| overlaps(r, from, to)).cloned().collect();
        assert!(!got.is_empty() && got.len() < all.len(), "{fixture} {time}");
        assert_eq!(got, expected, "{fixture} {time}");
        assert!(stderr.contains(&format!("timeline: kept {} events of {} (", commas(got.len()), commas(all.len()))), "{fixture}: {stderr}");

        let long = |r: &Row| r.2 == "C" || r.5 >= 2000;
        let (got, stderr) = xplane_timeline(&trace, &["--min_dur_us=2"], dir.path(), "long.json");
        let expected: Vec<Row> = all.iter().filter(|r| long(r)).cloned().collect();
        assert_eq!(got, expected, "{fixture} --min_dur_us=2");
        let short = all.len() - got.len();
        assert!(short > 0, "{fixture}: no event shorter than 2 us");
        assert!(stderr.contains(&format!("({} shorter than 2 us left out)", commas(short))), "{fixture}: {stderr}");

        let (got, stderr) = xplane_timeline(&trace, &["--min_dur_us=0"], dir.path(), "zero.json");
        assert_eq!(got, all, "{fixture}: --min_dur_us=0 keeps everything");
        assert!(!stderr.contains("timeline:"), "{fixture}: nothing was left out: {stderr}");

        let on_gpu = |r: &Row| r.0.starts_with("/device:GPU:");
        if all.iter().any(on_gpu) {
            let gpus: BTreeMap<&str, usize> = all.iter().filter(|r| on_gpu(r)).fold(BTreeMap::new(), |mut m, r| {
                *m.entry(r.0.as_str()).or_default() += 1;
                m
            });
            // A device the trace does not have: every GPU's events go.
            let (got, stderr) = xplane_timeline(&trace, &["--devices=7"], dir.path(), "host.json");
            let expected: Vec<Row> = all.iter().filter(|r| !on_gpu(r)).cloned().collect();
            assert_eq!(got, expected, "{fixture} --devices=7: the host's events alone ({gpus:?})");
            assert!(stderr.contains(" on devices other than 7 left out)"), "{fixture}: {stderr}");
            let (got, _) = xplane_timeline(&trace, &["--devices=0"], dir.path(), "gpu0.json");
            let expected: Vec<Row> = all.iter().filter(|r| !on_gpu(r) || r.0.starts_with("/device:GPU:0")).cloned().collect();
            assert_eq!(got, expected, "{fixture} --devices=0");
            // Together: each rule on what the others keep.
            let (got, _) = xplane_timeline(&trace, &[&time, "--devices=7", "--min_dur_us=2"], dir.path(), "all3.json");
            let expected: Vec<Row> = all.iter().filter(|r| overlaps(r, from, to) && !on_gpu(r) && long(r)).cloned().collect();
            assert_eq!(got, expected, "{fixture}: the three together");
        }
    }
}

/// On a JAX GPU trace, whose steps are numbered by their groups and begin
/// at their roots on the host, `--steps` keeps some of the whole trace's
/// events, at their times there, with the device's events of those steps;
/// the line's counts are the files'.
#[test]
fn a_jax_gpu_timeline_keeps_its_steps_events() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::testdata().join("xplane/jax_gpu_cond");
    let (all, _) = xplane_timeline(&trace, &[], dir.path(), "all.json");
    let (got, stderr) = xplane_timeline(&trace, &["--steps=2..3"], dir.path(), "steps.json");
    let (one, _) = xplane_timeline(&trace, &["--steps=2"], dir.path(), "one.json");
    assert!(one.len() < got.len() && got.len() < all.len(), "{} < {} < {}", one.len(), got.len(), all.len());
    for (kept, what) in [(&got, "2..3"), (&one, "2")] {
        let missing: Vec<&Row> = kept.iter().filter(|r| all.binary_search(r).is_err()).collect();
        assert!(missing.is_empty(), "steps {what}: events not in the whole trace's timeline: {missing:?}");
        assert!(kept.iter().any(|r| r.0.starts_with("/device:GPU:")), "steps {what}: no GPU event");
    }
    let line = format!("timeline: kept {} events of {} ({} outside steps 2..3 left out)", commas(got.len()), commas(all.len()), commas(all.len() - got.len()));
    assert!(stderr.lines().any(|l| l == line), "want {line:?} in {stderr:?}");
}
