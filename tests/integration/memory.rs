//! `rtfprof memory` against an independent replay: the fixtures decoded
//! with the prost-generated types, their allocation records replayed here
//! by the rules the book states (docs/book/src/commands/memory.md), and the binary's JSON compared with the
//! result. The shared TF2 BERT trace is checked against XProf's own
//! `memory_profile` (its peak bytes and peak time per allocator).

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message;
use rtfprof::proto::tensorflow::RunMetadata;
use rtfprof::proto::tensorflow::tfprof::ProfileProto;
use serde_json::{Value, json};

use common::{rtfprof, testdata};

/// One record as the test replays it.
struct Record {
    micros: i64,
    bytes: i64,
    node: String,
}

/// The book's rules (commands/memory.md): records in time order, allocations before frees of
/// the same microsecond; the peak is the last maximum of the running sum;
/// a node's live bytes are its records up to the peak, listed when
/// positive; the curve keeps per microsecond its highest and its last
/// value.
fn replay(mut records: Vec<Record>, start: i64) -> Value {
    records.sort_by_key(|r| (r.micros, r.bytes < 0));
    let mut sum = 0;
    let values: Vec<i64> = records
        .iter()
        .map(|r| {
            sum += r.bytes;
            sum
        })
        .collect();
    let peak = *values.iter().max().unwrap();
    let at = values.iter().rposition(|&v| v == peak).unwrap();
    let mut live: BTreeMap<&str, i64> = BTreeMap::new();
    for r in &records[..=at] {
        *live.entry(&r.node).or_default() += r.bytes;
    }
    live.retain(|_, b| *b > 0);
    let rest = peak - live.values().sum::<i64>();
    let mut live: Vec<(String, i64)> = live.into_iter().map(|(n, b)| (n.to_owned(), b)).collect();
    if rest > 0 {
        live.push(("(untracked)".into(), rest));
    }
    live.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut curve = Vec::new();
    let mut i = 0;
    while i < records.len() {
        let t = records[i].micros;
        let mut j = i;
        while j < records.len() && records[j].micros == t {
            j += 1;
        }
        let high = *values[i..j].iter().max().unwrap();
        if high != values[j - 1] {
            curve.push(json!([t - start, high]));
        }
        curve.push(json!([t - start, values[j - 1]]));
        i = j;
    }
    json!({
        "peak_bytes": peak,
        "peak_micros": records[at].micros - start,
        "live_at_peak": live,
        "curve": curve,
    })
}

/// `live_at_peak` as ordered pairs (JSON objects lose their order once
/// parsed into a map, so the order is checked on the raw text).
fn normalized(mut allocator: Value) -> Value {
    let live: Vec<(String, i64)> = match allocator["live_at_peak"].take() {
        Value::Object(map) => map.into_iter().map(|(k, v)| (k, v.as_i64().unwrap())).collect(),
        Value::Array(pairs) => pairs.into_iter().map(|p| (p[0].as_str().unwrap().to_owned(), p[1].as_i64().unwrap())).collect(),
        other => panic!("live_at_peak is {other}"),
    };
    let mut live = live;
    live.sort();
    allocator["live_at_peak"] = json!(live);
    allocator
}

/// What the test's replay of a model's three RunMetadata files gives.
fn expected_from_run_metas(model: &str) -> Value {
    let run_metas = (0..3).map(|step| {
        let bytes = std::fs::read(testdata().join(model).join(format!("run_meta_{step}"))).unwrap();
        RunMetadata::decode(bytes.as_slice()).unwrap()
    });
    expected_from(run_metas)
}

/// The test's replay of RunMetadata, the i-th being step i.
fn expected_from(run_metas: impl Iterator<Item = RunMetadata>) -> Value {
    let mut steps = Vec::new();
    for (step, run_meta) in run_metas.enumerate() {
        let mut by_allocator: BTreeMap<String, Vec<Record>> = BTreeMap::new();
        // The step starts at its first op (as rtfprof records ops: not the
        // runtime's own _SOURCE, RecvTensor and MEMCPY entries) or record.
        let mut start = i64::MAX;
        for stat in run_meta.step_stats.iter().flat_map(|s| &s.dev_stats).flat_map(|d| &d.node_stats) {
            let node = stat.node_name.split(':').next().unwrap();
            let skipped = node == "_SOURCE" || node == "RecvTensor" || node.contains("MEMCPY");
            if stat.all_start_micros > 0 && !skipped {
                start = start.min(stat.all_start_micros);
            }
            for memory in &stat.memory {
                for r in &memory.allocation_records {
                    start = start.min(r.alloc_micros);
                    by_allocator.entry(memory.allocator_name.clone()).or_default().push(Record {
                        micros: r.alloc_micros,
                        bytes: r.alloc_bytes,
                        node: node.to_owned(),
                    });
                }
            }
        }
        let allocators: serde_json::Map<String, Value> = by_allocator.into_iter().map(|(name, records)| (name, replay(records, start))).collect();
        steps.push(json!({"step": step, "allocators": allocators}));
    }
    json!({"schema_version": 1, "steps": steps})
}

fn normalized_document(mut doc: Value) -> Value {
    for step in doc["steps"].as_array_mut().unwrap() {
        for (_, allocator) in step["allocators"].as_object_mut().unwrap().iter_mut() {
            *allocator = normalized(allocator.take());
        }
    }
    doc
}

#[test]
fn run_metadata_replays_as_the_test_replays_them() {
    for model in ["mlp", "cnn", "cnn_b8", "while", "gpu_synth"] {
        let ours = rtfprof([vec!["memory".to_owned()], common::fixture_flags(model)].concat()).json();
        let expected = expected_from_run_metas(model);
        let allocators = expected["steps"][0]["allocators"].as_object().unwrap().len();
        assert!(allocators > 0, "{model}: the fixture has allocation records");
        assert_eq!(normalized_document(ours), normalized_document(expected), "{model}");
    }
}

/// An event log's run metadata with step stats are its steps, in file
/// order: read here from the TFRecords with the generated `Event` type.
#[test]
fn event_logs_replay_their_run_metadata() {
    use rtfprof::proto::tensorflow::{Event, event};
    let dir = testdata().join("events/tutorial");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut run_metas = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap();
        let mut at = 0;
        while at < bytes.len() {
            let len = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            let event = Event::decode(&bytes[at + 12..at + 12 + len]).unwrap();
            if let Some(event::What::TaggedRunMetadata(tagged)) = event.what {
                let run_meta = RunMetadata::decode(tagged.run_metadata.as_slice()).unwrap();
                if run_meta.step_stats.as_ref().is_some_and(|s| !s.dev_stats.is_empty()) {
                    run_metas.push(run_meta);
                }
            }
            at += 16 + len;
        }
    }
    assert_eq!(run_metas.len(), 3);
    let ours = rtfprof(["memory".to_owned(), format!("--events_path={}", dir.display())]).json();
    assert_eq!(normalized_document(ours), normalized_document(expected_from(run_metas.into_iter())));
}

/// Live nodes come most bytes first in the file itself.
#[test]
fn live_nodes_are_written_most_bytes_first() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.json");
    let mut args = vec!["memory".to_owned(), "--step=0".to_owned(), format!("--output=json:outfile={}", out.display())];
    args.extend(common::fixture_flags("cnn"));
    assert!(rtfprof(&args).run().success());
    let text = std::fs::read_to_string(&out).unwrap();
    let live_at = text.find("\"live_at_peak\":{").unwrap();
    let live = &text[live_at..text[live_at..].find('}').unwrap() + live_at];
    let bytes: Vec<i64> = live.split(',').map(|kv| kv.rsplit(':').next().unwrap().parse().unwrap()).collect();
    assert!(bytes.len() > 3 && bytes.windows(2).all(|w| w[0] >= w[1]), "{live}");
}

/// A profile keeps the records of the GPU allocators, merged per node and
/// step: replayed, they give what the RunMetadata's GPU allocator gives.
#[test]
fn a_profile_replays_its_gpu_allocators_records() {
    let dir = testdata().join("gpu_synth");
    let ours = rtfprof(["memory".to_owned(), format!("--profile_path={}", dir.join("profile").display())]).json();
    let profile = ProfileProto::decode(std::fs::read(dir.join("profile")).unwrap().as_slice()).unwrap();
    let mut steps = Vec::new();
    for &step in &profile.steps {
        let mut by_allocator: BTreeMap<String, Vec<Record>> = BTreeMap::new();
        let mut start = i64::MAX;
        // The first node of a name wins, as everywhere in tfprof.
        let mut seen = std::collections::HashSet::new();
        for node in profile.nodes.values().filter(|n| seen.insert(n.name.clone())) {
            let Some(exec) = node.execs.get(&step) else { continue };
            if exec.all_start_micros > 0 {
                start = start.min(exec.all_start_micros);
            }
            for r in &exec.allocations {
                start = start.min(r.alloc_micros);
                let allocator = format!("GPU allocators on {}", node.canonical_device);
                by_allocator.entry(allocator).or_default().push(Record { micros: r.alloc_micros, bytes: r.alloc_bytes, node: node.name.clone() });
            }
        }
        let allocators: serde_json::Map<String, Value> = by_allocator.into_iter().map(|(n, r)| (n, replay(r, start))).collect();
        steps.push(json!({"step": step, "allocators": allocators}));
    }
    let expected = json!({"schema_version": 1, "steps": steps});
    assert_eq!(normalized_document(ours.clone()), normalized_document(expected));

    // The same numbers as the RunMetadata's GPU allocator, step by step.
    let from_run_metas = rtfprof([vec!["memory".to_owned()], common::fixture_flags("gpu_synth")].concat()).json();
    for step in 0..3 {
        let profile_side = &ours["steps"][step]["allocators"]["GPU allocators on /job:localhost/replica:0/task:0/device:gpu:0"];
        let run_meta_side = &from_run_metas["steps"][step]["allocators"]["GPU_0_bfc"];
        for key in ["peak_bytes", "live_at_peak", "curve"] {
            assert_eq!(profile_side[key], run_meta_side[key], "step {step}: {key}");
        }
    }
}

/// The shared TF2 BERT trace (8 GPUs): the peak bytes of each allocator are
/// XProf's `peakStats.peakBytesInUse`, at XProf's peak time.
#[test]
fn xplane_peaks_are_xprofs() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/tf2_bert_8gpu/run/host0.xplane.pb");
    if !trace.exists() {
        eprintln!("skipping xplane_peaks_are_xprofs: {} is absent", trace.display());
        return;
    }
    let golden: Value =
        serde_json::from_str(&std::fs::read_to_string(testdata().join("xplane/expected/tf2_bert_8gpu.host0.memory_profile.json")).unwrap()).unwrap();
    let ours = rtfprof(["memory".to_owned(), format!("--xplane_path={}", trace.display())]).json();
    let steps = ours["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "the trace has no step markers: one step");
    let allocators = steps[0]["allocators"].as_object().unwrap();
    let expected_ids: Vec<&str> = golden["memoryIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(allocators.keys().map(String::as_str).collect::<Vec<_>>(), expected_ids);

    // Peak times: XProf gives the event's offset in its line (ps); the
    // step starts at the library's `start_micros`.
    let mut paths = rtfprof::inputs::InputPaths { xplane_path: Some(trace.clone()), allocations: true, ..Default::default() };
    paths.skip_code_traces = true;
    let loaded = rtfprof::load::load_paths(&paths).unwrap();
    let profile = rtfprof::memory::analyze(&loaded, -1).unwrap();
    let start = profile.steps[0].start_micros;
    let line_ns = host_line_timestamp_ns(&trace);

    for (name, ours) in allocators {
        let summary = &golden["memoryProfilePerAllocator"][name]["profileSummary"];
        let peak: i64 = summary["peakStats"]["peakBytesInUse"].as_str().unwrap().parse().unwrap();
        assert_eq!(ours["peak_bytes"].as_i64().unwrap(), peak, "{name}");
        let time_ps: i128 = summary["peakStatsTimePs"].as_str().unwrap().parse().unwrap();
        let at_micros = ((i128::from(line_ns) * 1000 + time_ps) / 1_000_000) as i64;
        assert_eq!(start + ours["peak_micros"].as_i64().unwrap(), at_micros, "{name}: peak time");
        let live: i64 = ours["live_at_peak"].as_object().unwrap().values().map(|v| v.as_i64().unwrap()).sum();
        assert_eq!(live, peak, "{name}: the live bytes add up to the peak");
    }
}

/// The timestamp of the host plane's lines that hold allocator events
/// (one value in this trace), read with the generated XSpace types.
fn host_line_timestamp_ns(trace: &Path) -> i64 {
    use rtfprof::proto::tensorflow::profiler::XSpace;
    let space = XSpace::decode(std::fs::read(trace).unwrap().as_slice()).unwrap();
    let host = space.planes.iter().find(|p| p.name == "/host:CPU").unwrap();
    let memory_ids: Vec<i64> = host.event_metadata.iter().filter(|(_, m)| m.name.starts_with("Memory")).map(|(id, _)| *id).collect();
    let stamps: std::collections::BTreeSet<i64> =
        host.lines.iter().filter(|l| l.events.iter().any(|e| memory_ids.contains(&e.metadata_id))).map(|l| l.timestamp_ns).collect();
    assert_eq!(stamps.len(), 1, "{stamps:?}");
    *stamps.first().unwrap()
}

/// The text, in tfprof's style, for the CNN's first step (written by
/// rtfprof itself: rerun with `RTFPROF_BLESS=1` and review the diff).
#[test]
fn text_snapshot() {
    let mut args = vec!["memory".to_owned(), "--step=0".to_owned(), "--max_depth=4".to_owned()];
    args.extend(common::fixture_flags("gpu_synth"));
    let actual = rtfprof(&args).stdout();
    let path = testdata().join("expected/gpu_synth.memory.txt");
    if std::env::var_os("RTFPROF_BLESS").is_some() {
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing: run with RTFPROF_BLESS=1", path.display()));
    assert!(expected == actual, "memory text changed; if intended, rerun with RTFPROF_BLESS=1 and review the diff\n{actual}");
}

/// Inputs without records say so; a step not recorded is an error.
#[test]
fn no_records_and_missing_steps() {
    let profile = testdata().join("cnn/profile");
    let text = rtfprof(["memory", &format!("--profile_path={}", profile.display())]).stdout();
    assert!(text.contains("step 0: no allocation records\n") && text.contains("keeps only those of GPU allocators"), "{text}");
    let output = rtfprof(["memory", &format!("--profile_path={}", profile.display()), "--step=5"]).run();
    assert_eq!(output.code(), Some(1));
    assert!(output.stderr_lossy().contains("--step=5: step not found"));
}

/// With several jobs, each keeps its own allocators (`job/name`), nodes
/// (`job/node`) and clock: the numbers are each job's own.
#[test]
fn jobs_keep_their_own_allocators_and_clocks() {
    let both =
        rtfprof(["memory".to_owned(), format!("--job=a={}", testdata().join("cnn").display()), format!("--job=b={}", testdata().join("mlp").display())]).json();
    for (job, model) in [("a", "cnn"), ("b", "mlp")] {
        let alone = rtfprof([vec!["memory".to_owned()], common::fixture_flags(model)].concat()).json();
        for step in 0..3 {
            for (name, allocator) in alone["steps"][step]["allocators"].as_object().unwrap() {
                let merged = &both["steps"][step]["allocators"][format!("{job}/{name}")];
                for key in ["peak_bytes", "peak_micros", "curve"] {
                    assert_eq!(merged[key], allocator[key], "{job} step {step} {name}: {key}");
                }
                let live: Vec<(String, &Value)> = allocator["live_at_peak"].as_object().unwrap().iter().map(|(n, b)| (format!("{job}/{n}"), b)).collect();
                let merged_live: Vec<(String, &Value)> = merged["live_at_peak"].as_object().unwrap().iter().map(|(n, b)| (n.clone(), b)).collect();
                assert_eq!(merged_live, live, "{job} step {step} {name}");
            }
        }
    }
}

/// Every XPlane trace with XProf's `memory_profile`: each allocator XProf
/// lists (its memory ids: `allocator_name`, or a core's `index_on_host`)
/// is rtfprof's, with XProf's peak as the highest of its steps' peaks; and
/// in every step the bytes listed live at an allocator's peak add up to
/// no more than that peak.
#[test]
fn xplane_allocators_and_peaks_are_xprofs_on_every_trace() {
    let mut traces: Vec<(String, std::path::PathBuf)> =
        ["jax_gpu_mlp", "jax_gpu_cnn", "jax_gpu_lstm", "jax_gpu_xfer", "jax_gpu_cond", "jax_gpu_cond_nocb", "tf_loop", "jax_jit"]
            .iter()
            .map(|f| (format!("{f}.host0"), testdata().join("xplane").join(f)))
            .collect();
    traces.extend(common::shared_xplane_goldens());
    traces.extend(common::heldout_jax_gpu().into_iter().map(|(name, trace)| (format!("{name}.vm"), trace)));
    for (golden, trace) in traces {
        let xprof = common::xprof_golden(&format!("{golden}.memory_profile"));
        let ours = rtfprof(["memory".to_owned(), format!("--xplane_path={}", trace.display())]).json();
        let mut peaks: BTreeMap<String, i64> = BTreeMap::new();
        for step in ours["steps"].as_array().unwrap() {
            for (name, allocator) in step["allocators"].as_object().unwrap() {
                let peak = allocator["peak_bytes"].as_i64().unwrap();
                let live: i64 = allocator["live_at_peak"].as_object().unwrap().values().map(|v| v.as_i64().unwrap()).sum();
                assert!(live <= peak, "{golden} step {} {name}: {live} bytes live at a peak of {peak}", step["step"]);
                let best = peaks.entry(name.clone()).or_insert(i64::MIN);
                *best = (*best).max(peak);
            }
        }
        let expected: BTreeMap<String, i64> = xprof["memoryProfilePerAllocator"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v["profileSummary"]["peakStats"]["peakBytesInUse"].as_str().unwrap().parse().unwrap())).collect())
            .unwrap_or_default();
        assert_eq!(peaks, expected, "{golden}");
    }
}
