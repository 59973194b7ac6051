//! `advise` on every kind of trace: each checker's numbers against a count
//! of its own (the trace's events read with prost here, XProf's overview
//! page, `rtfprof steps`' JSON), its rules and its ranges. tfprof's inputs
//! are checked against tfprof itself in `tests/integration/golden.rs`.
//!
//! The committed fixtures (`testdata/xplane/jax_gpu_*`, `gpu_synth`, the
//! CPU traces; `testdata/pytorch/h200_*`, cut from the shared H200 traces by
//! `tools/torch/cut_trace.py`) are always checked; the shared traces of
//! `../shared/traces` (8 GPUs, TPUs, JAX and PyTorch on an H200) where that
//! directory exists.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use prost::Message;
use rtfprof::proto::tensorflow::profiler::{XSpace, x_event, x_stat};
use serde_json::Value;

/// `rtfprof advise <flag>=<path>`: stdout, which must come with an empty
/// stderr (no "Missing op_log" or other message where nothing is missing).
fn advise(flag: &str, path: &Path) -> String {
    let run = common::rtfprof(["advise".to_owned(), format!("{flag}={}", path.display())]).run();
    assert!(run.success(), "{}: {}", path.display(), run.stderr_lossy());
    assert!(run.stderr.is_empty(), "{}: stderr: {}", path.display(), run.stderr_lossy());
    run.stdout_str().to_owned()
}

/// The report lines of a checker.
fn checker<'a>(out: &'a str, name: &str) -> Vec<&'a str> {
    let section = out.split(&format!("\n{name}:\n")).nth(1).unwrap_or_else(|| panic!("no {name} in {out}"));
    section.split("\n\n").next().unwrap().lines().collect()
}

/// A duration as `micros_f64` prints it (`12.345us`, `1.23ms`, `1.23sec`),
/// in µs, with half its last digit.
fn parse_us(text: &str) -> (f64, f64) {
    for (unit, scale) in [("sec", 1e6), ("ms", 1e3), ("us", 1.0)] {
        if let Some(number) = text.strip_suffix(unit) {
            let decimals = number.split('.').nth(1).map_or(0, str::len);
            return (number.parse::<f64>().unwrap() * scale, 0.5 * scale / 10f64.powi(decimals as i32) + 1e-9);
        }
    }
    panic!("not a duration: {text}")
}

/// The duration printed right after `before` in `line`.
fn duration_after(line: &str, before: &str) -> (f64, f64) {
    let rest = line.split(before).nth(1).unwrap_or_else(|| panic!("no '{before}' in {line}"));
    parse_us(rest.split([' ', ',', ')', ';', ':']).next().unwrap())
}

/// What follows `before` in `line`.
fn after<'a>(line: &'a str, before: &str) -> &'a str {
    line.split_once(before).unwrap_or_else(|| panic!("no '{before}' in {line}")).1
}

/// `busy X of the Y from its first kernel or copy to its last` in a GPU's
/// line: (X, Y).
fn whole_span(rest: &str) -> ((f64, f64), (f64, f64)) {
    let part = rest.split(['(', ';']).find(|p| p.contains("from its first kernel or copy to its last")).unwrap_or_else(|| panic!("{rest}"));
    let part = part.trim().trim_start_matches("busy ");
    (parse_us(part.split(' ').next().unwrap()), duration_after(part, "of the "))
}

fn assert_us(what: &str, printed: (f64, f64), want: f64) {
    assert!((printed.0 - want).abs() <= printed.1, "{what}: printed {} µs, want {want} µs", printed.0);
}

/// The number after `before` (up to a space, `%`, `,` or `)`).
fn number_after(line: &str, before: &str) -> f64 {
    let rest = line.split(before).nth(1).unwrap_or_else(|| panic!("no '{before}' in {line}"));
    rest.split([' ', '%', ',', ')']).next().unwrap().parse().unwrap_or_else(|e| panic!("{line}: {e}"))
}

/// `device: NAME [low ]utilization: U (…)`: (name, utilization, the rest).
fn utilization_line(line: &str) -> (String, f64, String) {
    let rest = line.strip_prefix("device: ").unwrap_or_else(|| panic!("{line}"));
    let (name, rest) = rest.split_once(' ').unwrap();
    let low = rest.starts_with("low ");
    let value = number_after(rest, "utilization: ");
    assert!((0.0..=1.0).contains(&value), "{line}");
    assert_eq!(low, value < rtfprof::advise::LOW_UTILIZATION, "{line}");
    (name.to_owned(), value, rest.to_owned())
}

// ---- the trace's events, read here ----

/// An event: its (begin, end, metadata id).
type Span = (i128, i128, i64);
/// An event's (begin, end).
type Interval = (i128, i128);

/// One device plane as the rules read it: per line (id, name), its events
/// as (begin, end, metadata id); and the plane's stat names.
struct DevicePlane {
    name: String,
    lines: Vec<(i64, String, Vec<Span>)>,
    /// Metadata ids whose `hlo_category` is off duty.
    off_duty: Vec<i64>,
}

fn device_planes(trace: &Path) -> Vec<DevicePlane> {
    let space = XSpace::decode(std::fs::read(trace).unwrap().as_slice()).unwrap();
    let mut out = Vec::new();
    for plane in space.planes.iter().filter(|p| p.name.starts_with("/device:GPU:") || p.name.starts_with("/device:TPU:")) {
        let stat_name = |id: i64| plane.stat_metadata.get(&id).map_or("", |m| m.name.as_str());
        let off = ["infeed", "outfeed", "host send", "host send-done", "host recv", "host recv-done", "async-done", "megacore fusion"];
        let off_duty = plane
            .event_metadata
            .iter()
            .filter(|(_, m)| {
                m.stats.iter().any(|s| {
                    stat_name(s.metadata_id) == "hlo_category"
                        && match &s.value {
                            Some(x_stat::Value::StrValue(v)) => off.contains(&v.as_str()),
                            Some(x_stat::Value::RefValue(r)) => off.contains(&stat_name(*r as i64)),
                            _ => false,
                        }
                })
            })
            .map(|(id, _)| *id)
            .collect();
        let lines = plane
            .lines
            .iter()
            .map(|l| {
                let events = l
                    .events
                    .iter()
                    .map(|e| {
                        let offset = match e.data {
                            Some(x_event::Data::OffsetPs(o)) => o,
                            _ => 0,
                        };
                        let begin = i128::from(l.timestamp_ns) * 1000 + i128::from(offset);
                        (begin, begin + i128::from(e.duration_ps.max(0)), e.metadata_id)
                    })
                    .collect();
                (l.id, l.name.clone(), events)
            })
            .collect();
        out.push(DevicePlane { name: plane.name.clone(), lines, off_duty });
    }
    out
}

/// XProf's derived lines (`kThreadIdDerivedMin` and the 99 after it).
fn derived(id: i64) -> bool {
    let min = 0xdead_beef_u32 as i32 as i64;
    (min..=min + 99).contains(&id)
}

/// Total length of the union of spans.
fn union_len(mut spans: Vec<(i128, i128)>) -> i128 {
    spans.sort();
    let (mut total, mut current): (i128, Option<(i128, i128)>) = (0, None);
    for (b, e) in spans {
        match current {
            Some((cb, ce)) if b <= ce => current = Some((cb, ce.max(e))),
            Some((cb, ce)) => {
                total += ce - cb;
                current = Some((b, e));
            }
            None => current = Some((b, e)),
        }
    }
    total + current.map_or(0, |(b, e)| e - b)
}

/// The union of `spans` inside the union of `windows`.
fn inside(spans: &[(i128, i128)], windows: &[(i128, i128)]) -> i128 {
    let clipped: Vec<(i128, i128)> =
        windows.iter().flat_map(|&(wb, we)| spans.iter().map(move |&(b, e)| (b.max(wb), e.min(we))).filter(|(b, e)| e > b)).collect();
    union_len(clipped)
}

/// A GPU plane's events (its own lines), and the events of its stored
/// `Steps` line.
fn gpu_events(plane: &DevicePlane) -> (Vec<Interval>, Vec<Interval>) {
    let steps_line = 0xdead_beef_u32 as i32 as i64;
    let events = plane.lines.iter().filter(|l| !derived(l.0)).flat_map(|l| l.2.iter().map(|e| (e.0, e.1))).collect();
    let steps = plane.lines.iter().filter(|l| l.0 == steps_line).flat_map(|l| l.2.iter().map(|e| (e.0, e.1))).collect();
    (events, steps)
}

/// `rtfprof steps` JSON of a trace, `{}` for a trace without steps
/// (`rtfprof steps` says so and fails).
fn steps_json_or_none(flag: &str, path: &Path) -> Value {
    common::steps_json(flag, path).unwrap_or_else(|run| {
        assert!(run.stderr_lossy().contains("has no steps"), "{}", run.stderr_lossy());
        serde_json::json!({})
    })
}

// ---- XPlane GPU ----

fn xplane_gpu_traces() -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = ["jax_gpu_mlp", "jax_gpu_mlp_nocb", "jax_gpu_cnn", "jax_gpu_lstm", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "gpu_synth"]
        .iter()
        .map(|f| common::testdata().join(format!("xplane/{f}/plugins/profile/run0/host0.xplane.pb")))
        .collect();
    traces.extend(common::JAX_GPU_TRACES.iter().filter_map(|name| common::jax_gpu_trace(name)));
    if let Some(dir) = common::shared_trace_dir("tf2_bert_8gpu/run") {
        traces.push(dir.join("host0.xplane.pb"));
    }
    traces
}

/// Each GPU that ran something has one line: busy time within its steps
/// (its own `Steps` line, else its host's steps as `rtfprof steps` gives
/// them), and over the span from its first event to its last, equal to a
/// count of the trace's events here; on a single GPU, its busy time in the
/// steps is the steps' time less `device_idle_us`.
#[test]
fn xplane_gpu_utilization_is_each_devices_busy_time() {
    for trace in xplane_gpu_traces() {
        let what = trace.display().to_string();
        let out = advise("--xplane_path", &trace);
        let lines = checker(&out, "AcceleratorUtilizationChecker");
        let steps = steps_json_or_none("--xplane_path", &trace);
        let rows = steps["steps"].as_array().cloned().unwrap_or_default();
        let step_us: f64 = rows.iter().map(|r| r["step_time_us"].as_f64().unwrap()).sum();
        let idle_us: f64 = rows.iter().map(|r| r["device_idle_us"].as_f64().unwrap_or(0.0)).sum();
        let planes: Vec<DevicePlane> = device_planes(&trace).into_iter().filter(|p| !gpu_events(p).0.is_empty()).collect();
        assert_eq!(lines.len(), planes.len(), "{what}: one line per GPU that ran something: {lines:?}");
        for (line, plane) in lines.iter().zip(&planes) {
            let (name, utilization, rest) = utilization_line(line);
            assert_eq!(name, plane.name.to_lowercase(), "{what}");
            let (events, own_steps) = gpu_events(plane);
            let (begin, end) = (events.iter().map(|e| e.0).min().unwrap(), events.iter().map(|e| e.1).max().unwrap());
            let busy = union_len(events.clone());
            let (whole_busy, whole) = whole_span(&rest);
            assert_us(&format!("{what} {name} busy"), whole_busy, busy as f64 / 1e6);
            assert_us(&format!("{what} {name} span"), whole, (end - begin) as f64 / 1e6);
            // (Busy µs, total µs) of the utilization.
            let (busy_us, total_us) = if !own_steps.is_empty() {
                assert!(rest.contains("its Steps line"), "{what}: {line}");
                let (in_steps, total) = (inside(&events, &own_steps) as f64 / 1e6, union_len(own_steps.clone()) as f64 / 1e6);
                assert_us(&format!("{what} {name} busy in its steps"), duration_after(&rest, "busy "), in_steps);
                assert_us(&format!("{what} {name} its steps"), duration_after(&rest, "of the "), total);
                (in_steps, total)
            } else if !rows.is_empty() {
                assert!(rest.contains("as rtfprof steps finds them"), "{what}: {line}");
                assert_us(&format!("{what} {name} steps"), duration_after(&rest, "of the "), step_us);
                let busy_in_steps = duration_after(&rest, "busy ");
                assert!(busy_in_steps.0 <= (busy as f64 / 1e6).min(step_us) + busy_in_steps.1, "{what}: {line}");
                if planes.len() == 1 {
                    assert_us(&format!("{what} {name} busy in steps"), busy_in_steps, step_us - idle_us);
                }
                (busy_in_steps.0, step_us)
            } else {
                assert!(rest.ends_with("; no steps)"), "{what}: {line}");
                (busy as f64 / 1e6, (end - begin) as f64 / 1e6)
            };
            // (The host's steps' busy time is read back as printed.)
            let want = busy_us / total_us;
            assert!((utilization - want).abs() <= 0.005 + 1e-3, "{what} {name}: utilization {utilization}, want {want}");
        }
    }
}

/// The 8-GPU trace: GPUs 4 and 6 ran the same replica step (15 ms of
/// kernels each); each is told within its own step, not within the other's
/// or over the other's span, and the GPUs that ran nothing get no line.
#[test]
fn eight_gpus_are_each_told_within_their_own_steps() {
    let Some(dir) = common::shared_trace_dir("tf2_bert_8gpu/run") else { return };
    let out = advise("--xplane_path", &dir);
    let lines = checker(&out, "AcceleratorUtilizationChecker");
    let devices: Vec<(String, f64, String)> = lines.iter().map(|l| utilization_line(l)).collect();
    let names: Vec<&str> = devices.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(names, ["/device:gpu:1", "/device:gpu:4", "/device:gpu:6"], "{out}");
    for (_, utilization, rest) in &devices[1..] {
        assert!((0.6..0.8).contains(utilization) && rest.contains("its Steps line"), "{out}");
        let busy = duration_after(rest, "busy ").0;
        assert!((14_000.0..16_000.0).contains(&busy), "{out}");
    }
}

// ---- XPlane TPU ----

/// Each TPU core: XProf's duty cycle (busy in its XLA ops but the off-duty
/// ones, over the span of its programs and ops), counted here from the
/// trace; all chips together: XProf's own overview page's number.
#[test]
fn tpu_duty_cycle_is_xprofs() {
    let Some(dir) = common::shared_trace_dir("xla_tpu_inference/run") else { return };
    let trace = dir.join("host0.xplane.pb");
    let out = advise("--xplane_path", &trace);
    let lines = checker(&out, "AcceleratorUtilizationChecker");
    let planes = device_planes(&trace);
    assert_eq!(lines.len(), planes.len() + 1, "{out}");
    for (line, plane) in lines.iter().zip(&planes) {
        let (name, utilization, rest) = utilization_line(line);
        assert_eq!(name, plane.name.to_lowercase());
        let mut span = (i128::MAX, i128::MIN);
        let mut busy = Vec::new();
        for (_, line_name, events) in &plane.lines {
            let ops = line_name == "XLA Ops" || line_name == "Sparse Core Ops";
            if !ops && line_name != "XLA Modules" && line_name != "Sparse Core Modules" {
                continue;
            }
            for &(b, e, meta) in events {
                span = (span.0.min(b), span.1.max(e));
                if ops && !plane.off_duty.contains(&meta) {
                    busy.push((b, e));
                }
            }
        }
        let busy = union_len(busy);
        assert_us(&format!("{name} busy"), duration_after(&rest, "XLA ops busy "), busy as f64 / 1e6);
        assert_us(&format!("{name} span"), duration_after(&rest, "of the "), (span.1 - span.0) as f64 / 1e6);
        assert!((utilization - busy as f64 / (span.1 - span.0) as f64).abs() <= 0.005 + 1e-9, "{line}");
    }
    let xprof = common::xprof_golden("xla_tpu_inference.overview_page");
    let percent = xprof["p"]["device_duty_cycle_percent"].as_str().unwrap();
    let all = lines.last().unwrap();
    assert!(all.starts_with(&format!("all TPU chips: duty cycle {percent} ")), "{all} (XProf: {percent})");
    // No step is measured on TPUs: said so, with where to look instead.
    let step_time = checker(&out, "StepTimeChecker");
    assert_eq!(step_time.len(), 1);
    assert!(step_time[0].contains("not supported") && step_time[0].contains("rtfprof hlo"), "{step_time:?}");
}

// ---- PyTorch ----

/// The GPU traces cut from the shared H200 traces (`tools/torch/cut_trace.py`;
/// `tests/integration/pytorch_steps.rs` checks their rows equal the whole traces').
const GPU_CUTS: [&str; 2] = ["h200_resnet18.steps2-3", "h200_tx.steps2-3"];

fn pytorch_gpu_traces() -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = GPU_CUTS.iter().map(|n| common::testdata().join(format!("pytorch/{n}.pt.trace.json.gz"))).collect();
    for name in ["torch_resnet18", "torch_tx"] {
        traces.extend(common::shared_trace_dir(&format!("torch_h200/{name}")));
    }
    traces
}

/// Utilization and every conclusion of a PyTorch trace, against the
/// numbers of `rtfprof steps --output json` for the same trace: GPU busy
/// and idle time in the steps, HTA's idle categories, the launch
/// statistics and the kernel kinds; each verdict as its rule says.
#[test]
fn pytorch_conclusions_are_the_steps_numbers() {
    use rtfprof::advise::{HOST_BOUND_IDLE_PCT, LAUNCH_BOUND_PCT, SMALL_KERNELS_PCT, TOP_KINDS};
    for trace in pytorch_gpu_traces() {
        let what = trace.display().to_string();
        let out = advise("--pytorch_path", &trace);
        let steps = common::steps_json("--pytorch_path", &trace).unwrap();
        let rows = steps["steps"].as_array().unwrap();
        let sum = |key: &str| rows.iter().map(|r| r[key].as_f64().unwrap()).sum::<f64>();
        let (step_us, idle_us) = (sum("step_time_us"), sum("gpu_idle_us"));
        let busy_us = sum("gpu_compute_us") + sum("gpu_non_compute_us");
        assert!((busy_us + idle_us - step_us).abs() < 1e-3 * rows.len() as f64, "{what}: compute + non-compute + idle = step");

        let lines = checker(&out, "AcceleratorUtilizationChecker");
        assert_eq!(lines.len(), 1, "{what}: one GPU: {lines:?}");
        let (name, utilization, rest) = utilization_line(lines[0]);
        assert_eq!(name, "/device:gpu:0");
        assert_us(&format!("{what} busy"), duration_after(&rest, "ran "), busy_us);
        assert_us(&format!("{what} steps"), duration_after(&rest, " steps' "), step_us);
        assert!((utilization - busy_us / step_us).abs() <= 0.005 + 1e-9, "{what}: {utilization}");

        let lines = checker(&out, "StepTimeChecker");
        assert_eq!(lines.len(), 4, "{what}: host-bound, kinds, launches, small kernels: {lines:?}");
        // 1. Host-bound.
        let share = 100.0 * idle_us / step_us;
        assert!((number_after(lines[0], "idle for ") - share).abs() <= 0.05 + 1e-9, "{what}: {}", lines[0]);
        assert_us(&format!("{what} idle"), duration_after(lines[0], "time ("), idle_us);
        assert_us(&format!("{what} step"), duration_after(after(lines[0], "time ("), " of "), step_us);
        assert_eq!(lines[0].contains("the steps are host-bound"), share >= HOST_BOUND_IDLE_PCT, "{what}: {}", lines[0]);
        assert!(lines[0].contains(&format!("rule: host-bound when GPU idle is {HOST_BOUND_IDLE_PCT}%")), "{}", lines[0]);
        let hta = &steps["gpu_time"][0];
        for (label, key) in [("host wait ", "idle_host_wait_us"), ("kernel wait ", "idle_kernel_wait_us"), ("other ", "idle_other_us")] {
            assert_us(&format!("{what} HTA {key}"), duration_after(lines[0], label), hta[key].as_f64().unwrap());
        }
        let host_wait = hta["idle_host_wait_us"].as_f64().unwrap() >= hta["idle_kernel_wait_us"].as_f64().unwrap();
        assert_eq!(lines[0].contains("mostly host wait"), host_wait, "{}", lines[0]);
        // 2. Kernel kinds: the top three of the kind columns' sums.
        let kinds = [
            "gemm_kernels",
            "convolution_kernels",
            "attention_kernels",
            "elementwise_kernels",
            "reduction_kernels",
            "communication_kernels",
            "memory_kernels",
            "other_kernels",
        ];
        let labels = ["GEMM", "Convolution", "Attention", "Elementwise", "Reduction", "Communication", "Memory", "Other kernels"];
        let mut by_kind: Vec<(f64, &str)> = kinds.iter().zip(labels).map(|(k, l)| (sum(&format!("{k}_us")), l)).filter(|(us, _)| *us > 0.0).collect();
        let total: f64 = by_kind.iter().map(|k| k.0).sum();
        by_kind.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
        let named = after(lines[1], "by kind: ");
        for (us, label) in by_kind.iter().take(TOP_KINDS) {
            let kind = after(named, &format!("{label} "));
            assert_us(&format!("{what} {label}"), parse_us(kind.split(' ').next().unwrap()), *us);
            assert!((number_after(kind, "(") - 100.0 * us / total).abs() <= 0.05 + 1e-9, "{what}: {}", lines[1]);
        }
        assert_eq!(named.matches('%').count(), TOP_KINDS.min(by_kind.len()), "{what}: {}", lines[1]);
        assert_us(&format!("{what} kinds"), duration_after(named, ") of "), total);
        // 3. Launches.
        let l = &steps["launches"][0];
        let kernels = l["kernels"].as_f64().unwrap();
        let shorter = l["shorter_than_launch"].as_f64().unwrap();
        assert_eq!(number_after(lines[2], "launched before the last step ("), kernels, "{}", lines[2]);
        assert_eq!(number_after(lines[2], "statistics), "), shorter, "{}", lines[2]);
        assert_us(&format!("{what} median launch"), duration_after(lines[2], "median launch call "), l["median_launch_us"].as_f64().unwrap());
        assert_us(&format!("{what} median kernel"), duration_after(lines[2], "median kernel "), l["median_kernel_us"].as_f64().unwrap());
        assert_eq!(lines[2].contains(": launch-bound: the CPU"), 100.0 * shorter / kernels >= LAUNCH_BOUND_PCT, "{}", lines[2]);
        assert_eq!(lines[2].contains(": not launch-bound"), 100.0 * shorter / kernels < LAUNCH_BOUND_PCT, "{}", lines[2]);
        // 4. Small kernels.
        let small = l["small_kernels"].as_f64().unwrap();
        assert_eq!(number_after(lines[3], "kernels, "), small, "{}", lines[3]);
        let time_share = 100.0 * l["small_kernel_us"].as_f64().unwrap() / l["kernel_us"].as_f64().unwrap();
        assert!((number_after(lines[3], "took ") - time_share).abs() <= 0.05 + 1e-9, "{}", lines[3]);
        assert_us(&format!("{what} kernel time"), duration_after(lines[3], "% of their "), l["kernel_us"].as_f64().unwrap());
        assert_eq!(lines[3].contains("mostly small kernels,"), 100.0 * small / kernels >= SMALL_KERNELS_PCT, "{}", lines[3]);
    }
}

// ---- every trace kind ----

/// Every trace the tests know, with its flag.
fn all_traces() -> Vec<(&'static str, PathBuf)> {
    let mut traces: Vec<(&str, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(common::testdata().join("xplane")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("plugins").is_dir() {
            traces.push(("--xplane_path", dir));
        }
    }
    for dir in ["xla_tpu_inference/run", "tf2_bert_8gpu/run"] {
        traces.extend(common::shared_trace_dir(dir).map(|d| ("--xplane_path", d)));
    }
    traces.extend(xplane_gpu_traces().into_iter().map(|t| ("--xplane_path", t)));
    for name in ["schedule.pt.trace.json.gz", "threads_memory.pt.trace.json", "shapes_merges.pt.trace.json"] {
        traces.push(("--pytorch_path", common::testdata().join("pytorch").join(name)));
    }
    traces.extend(pytorch_gpu_traces().into_iter().map(|t| ("--pytorch_path", t)));
    traces.sort();
    traces.dedup();
    traces
}

/// What no trace's advice may say: TF's advice to other frameworks,
/// XProf's pages, a percentage over 100, a top node of no time, an empty
/// report; every checker is there, each with something to say.
#[test]
fn no_trace_gets_false_advice() {
    let jax_or_torch = |out: &str| out.contains("No rule for JAX") || out.contains("No rule for PyTorch") || out.contains("No rule for XLA");
    for (flag, path) in all_traces() {
        let what = path.display().to_string();
        let out = advise(flag, &path);
        let body = out.split_once("\nAcceleratorUtilizationChecker:\n").map(|(_, b)| b).unwrap_or_else(|| panic!("{what}: {out}"));
        for name in ["OperationChecker", "ExpensiveOperationChecker", "StepTimeChecker"] {
            assert!(body.contains(&format!("\n{name}:\n")), "{what}: no {name}");
        }
        for name in ["AcceleratorUtilizationChecker", "StepTimeChecker"] {
            let lines = checker(&out, name);
            assert!(!lines.is_empty() && lines.iter().all(|l| !l.trim().is_empty()), "{what}: {name}: {lines:?}");
        }
        for line in body.lines() {
            if line.starts_with("device: ") {
                utilization_line(line);
            }
            assert!(!line.contains("Section") && !line.contains("this page") && !line.contains("Look at Section"), "{what}: {line}");
            if jax_or_torch(&out) {
                assert!(!line.contains("tf.data") && !line.contains("FusedBatchNorm instead") && !line.contains("NCHW is faster"), "{what}: {line}");
            }
            if line.starts_with("top ") {
                assert!(!line.ends_with("total: 0us") && !line.contains("total: 0us ("), "{what}: a top node of no time: {line}");
            }
            for piece in line.split('(').skip(1) {
                if let Some(p) = piece.split_once("%)").map(|(p, _)| p).and_then(|p| p.parse::<f64>().ok()) {
                    assert!((0.0..=100.0).contains(&p), "{what}: {line}");
                }
            }
        }
        // Whatever the framework, the advice names the framework's tools.
        if flag == "--pytorch_path" {
            assert!(
                checker(&out, "OperationChecker")
                    == ["No rule for PyTorch programs: the rules here are TensorFlow's (BatchNorm ops without FusedBatchNorm, NHWC convolutions on GPU)."],
                "{what}"
            );
        }
    }
}

/// JAX traces: XProf's tf.data advice becomes where a JAX program's host
/// time shows; TF traces keep XProf's words (checked word for word in
/// `tests/integration/steps.rs`).
#[test]
fn jax_steps_are_told_in_jaxs_terms() {
    let mut seen = BTreeMap::new();
    for fixture in ["jax_gpu_cnn", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_jit", "tf_loop"] {
        let out = advise("--xplane_path", &common::testdata().join(format!("xplane/{fixture}")));
        let next = checker(&out, "StepTimeChecker").into_iter().find_map(|l| l.strip_prefix(rtfprof::advise::NEXT_STEP_PREFIX)).unwrap().to_owned();
        seen.insert(fixture, next);
    }
    for fixture in ["jax_gpu_cnn", "jax_gpu_lstm_nocb", "jax_gpu_xfer", "jax_jit"] {
        assert!(
            seen[fixture].starts_with("Look at what the host does between the steps") && seen[fixture].contains("rtfprof steps"),
            "{fixture}: {}",
            seen[fixture]
        );
    }
    assert!(seen["tf_loop"].starts_with("Consider using the tf.data API"), "{}", seen["tf_loop"]);
}

/// Traces without steps say so, and point at nothing they cannot show.
#[test]
fn traces_without_steps_say_so() {
    for fixture in ["keras_fit", "while_loop", "gpu_synth"] {
        let out = advise("--xplane_path", &common::testdata().join(format!("xplane/{fixture}")));
        let lines = checker(&out, "StepTimeChecker");
        assert!(lines[0].starts_with("No step time measured"), "{fixture}: {lines:?}");
        assert!(lines[1].starts_with("Next step: rtfprof steps has no step to measure here: the trace has no steps"), "{fixture}: {lines:?}");
    }
    // A host-only trace: no accelerator, said once.
    let out = advise("--xplane_path", &common::testdata().join("xplane/tf_loop"));
    assert_eq!(checker(&out, "AcceleratorUtilizationChecker"), ["No GPU or TPU ran anything in this trace (no device plane has events): nothing to measure."]);
    let out = advise("--pytorch_path", &common::testdata().join("pytorch/schedule.pt.trace.json.gz"));
    assert_eq!(checker(&out, "AcceleratorUtilizationChecker"), ["No GPU work in this trace (no kernels, copies or sets): nothing to measure."]);
    assert!(checker(&out, "StepTimeChecker")[0].starts_with("No GPU work in the trace"), "{out}");
}

/// A directory of traces is one rank a trace: each rank's lines are its
/// trace's own, named after it.
#[test]
fn pytorch_ranks_are_each_their_traces() {
    let dir = tempfile::tempdir().unwrap();
    for cut in GPU_CUTS {
        std::fs::copy(common::testdata().join(format!("pytorch/{cut}.pt.trace.json.gz")), dir.path().join(format!("{cut}.pt.trace.json.gz"))).unwrap();
    }
    let all = advise("--pytorch_path", dir.path());
    for rank in GPU_CUTS {
        let one = advise("--pytorch_path", &dir.path().join(format!("{rank}.pt.trace.json.gz")));
        for name in ["AcceleratorUtilizationChecker", "StepTimeChecker"] {
            let ours: Vec<String> = checker(&all, name)
                .into_iter()
                .filter_map(|l| {
                    l.strip_prefix(&format!("Rank {rank}: "))
                        .map(str::to_owned)
                        .or_else(|| l.starts_with(&format!("device: {rank}/")).then(|| l.replacen(&format!("{rank}/"), "/", 1)))
                })
                .collect();
            assert_eq!(ours, checker(&one, name), "{rank} {name}");
        }
    }
}
