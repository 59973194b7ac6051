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
